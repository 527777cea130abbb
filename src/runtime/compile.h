/* Compiling CUDA source with NVRTC, and the cached path in front of it. */
#ifndef UK_RUNTIME_COMPILE_H
#define UK_RUNTIME_COMPILE_H

#include "base/hash.h"
#include "runtime/binary.h"
#include "runtime/toolkit.h"

typedef struct uk__compile_req {
  const char *source;       /* NUL-terminated CUDA source */
  const char *name;         /* program name for logs ("squared_diff"); may be NULL */
  const char *const *options; /* user options (context options come first) */
  int num_options;
  const char *const *name_expressions;
  int num_name_expressions;
  int arch;                 /* sm_XY as XY; required */
  int arch_flags;           /* UK__ARCH_* (arch.h): 90a, 100f, compute_90; 0: sm_XY */
  int no_std_headers;       /* 1: no C++ standard header map (std_headers.h) */
  int no_link;              /* 1: relocatable output (-rdc/-dlto) as NVRTC gives it, for
                               uk_module_link to link with other parts */
  int backend;              /* uk_backend: UK_BACKEND_NVCC runs nvcc (nvcc.c) */
  int missing_headers_empty; /* 1: includes NVRTC cannot find compile as empty headers (Jitify's way) */
  const char *what;         /* error prefix describing the kernel, e.g.
                               "compiling 'squared_diff' (float32, strided, ndim 2)"; may be NULL */
} uk__compile_req;

/* Runs NVRTC: -arch=sm_XY, the toolkit include dirs (uk__nvrtc_include_dirs),
 * ukern's embedded device headers, then the request's options. On failure
 * UK_ERR_COMPILE with the log + line-numbered source in uk_last_error_log(). */
uk_status uk__nvrtc_compile(const uk__compile_req *req, uk__binary **out);

/* The same with the toolkit's nvcc (nvcc.c): a cubin for sm_XY, PTX for
 * compute_XY; ukern's embedded headers are on its include path. Name
 * expressions are refused (UK_ERR_INVALID); UK_ERR_NOT_FOUND without nvcc;
 * UK_ERR_COMPILE with the command line, nvcc's log and the numbered source
 * in uk_last_error_log(). */
uk_status uk__nvcc_compile(const uk__compile_req *req, uk__binary **out);
/* nvcc's path and version ("/usr/local/cuda/bin/nvcc V13.0.88"), or "none":
 * the nvcc backend's part of the cache key. Found once per process. */
const char *uk__nvcc_key(void);
/* The NVRTC version as major*1000 + minor*10. */
uk_status uk__nvrtc_version(int *version);

/* The toolkit include directories NVRTC gets (-I...) and the key names,
 * found at run time: $UKERN_CUDA_INCLUDE, $CUDA_HOME/include,
 * $CUDA_PATH/include, the toolkit found at build time,
 * /usr/local/cuda/include (each with its cccl/ subdir where present), those
 * that are directories. Borrowed static strings. UK_ERR_NOT_FOUND, saying
 * where it looked, when there is none. Whether they hold the toolkit's
 * headers is not checked here (a stat each, in every new process's first
 * lookup): see uk__nvrtc_headers_missing. */
uk_status uk__nvrtc_include_dirs(const char *const **dirs, int *count);
/* Those directories and the version, for the files that find the
 * toolkit's other parts (toolkit.h); what cannot be found is left 0/NULL,
 * no error. */
void uk__nvrtc_toolkit(uk__toolkit *out);
/* NULL when one of those directories has cuda_fp16.h and one has cub/;
 * else what is missing and where it looked (for a failed compile's
 * message). Checked once per process, at the first call. */
const char *uk__nvrtc_headers_missing(void);

/* The cache key of a request (compile_key.c), described once as a byte
 * stream of length-prefixed parts: library and NVRTC versions, the embedded
 * headers' digest, the toolkit include directories, arch, canonical
 * options, name expressions, the full source and the digest of the user
 * headers it reads (include_scan.h). The same stream gives the 128-bit hash
 * that names the request in the disk cache (streamed, never built), the key
 * text stored with each entry (built on a miss), and the comparison of a
 * request with a stored key (a memory-cache hit: no text is built; it
 * finds the entry by uk__compile_lookup).
 *
 * A request's user-header digest is computed once into a uk__compile_keyed,
 * which the three functions share. */
typedef struct uk__compile_keyed {
  const uk__compile_req *req;
  char files[33]; /* digest of the user headers read; "" when none */
  char link[96];  /* linker and libcudadevrt.a of a linked compile (link.h); "" when none */
  size_t source_len;
} uk__compile_keyed;

void uk__compile_keyed_init(uk__compile_keyed *k, const uk__compile_req *req);
uk_hash128 uk__compile_hash(const uk__compile_keyed *k);
/* The memory cache's index of a request: a hash of the fields the key is
 * made of (not of key bytes), cheaper than uk__compile_hash, so that a hit
 * makes no key at all (it compares); equal keys, equal lookups; never a
 * disk name. */
uk_hash128 uk__compile_lookup(const uk__compile_keyed *k);
struct uk_strbuf;
uk_status uk__compile_key(const uk__compile_keyed *k, struct uk_strbuf *key);
/* 1 if `key` (len bytes) is exactly this request's key text. */
int uk__compile_key_equals(const uk__compile_keyed *k, const char *key, size_t len);

/* A bundle's key of a request (bundle.h): the key's parts without the
 * machine's (NVRTC's version, the toolkit's directories, the linker's and
 * nvcc's versions) and without the arch: equal on every machine for equal
 * requests. Needs no NVRTC. */
uk_status uk__compile_bundle_key(const uk__compile_keyed *k, struct uk_strbuf *key);
/* The same key made from the key text a disk cache entry stores, and that
 * key's arch: 1 on success; 0 with the reason in *why (another library
 * version or device headers, not one compile's key, damaged). */
int uk__compile_bundle_key_from(const char *key, size_t len, struct uk_strbuf *out, int *arch, int *arch_flags,
                                const char **why);

/* Tests only: when set, replaces uk__compile_hash in the compile path (to
 * force collisions). */
extern uk_hash128 (*uk__compile_hash_hook)(const uk__compile_req *req);

#endif
