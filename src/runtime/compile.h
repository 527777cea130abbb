/* Compiling CUDA source with NVRTC, and the cached path in front of it. */
#ifndef UK_RUNTIME_COMPILE_H
#define UK_RUNTIME_COMPILE_H

#include "base/hash.h"
#include "runtime/binary.h"

typedef struct uk__compile_req {
  const char *source;       /* NUL-terminated CUDA source */
  const char *name;         /* program name for logs ("squared_diff"); may be NULL */
  const char *const *options; /* user options (context options come first) */
  int num_options;
  const char *const *name_expressions;
  int num_name_expressions;
  int arch;                 /* sm_XY as XY; required */
  int arch_flags;           /* UK__ARCH_* (arch.h): 90a, 100f, compute_90; 0: sm_XY */
  const char *what;         /* error prefix describing the kernel, e.g.
                               "compiling 'squared_diff' (float32, strided, ndim 2)"; may be NULL */
  /* Called on the thread about to run NVRTC for this request (both caches
   * missed), with a copy of the request whose uncached options it may set.
   * May be NULL. */
  void (*before_nvrtc)(void *arg, struct uk__compile_req *req);
  void *before_nvrtc_arg;
} uk__compile_req;

/* Runs NVRTC: -arch=sm_XY, the toolkit include dirs (uk__nvrtc_include_dirs),
 * ukern's embedded device headers, then the request's options. On failure
 * UK_ERR_COMPILE with the log + line-numbered source in uk_last_error_log(). */
uk_status uk__nvrtc_compile(const uk__compile_req *req, uk__binary **out);

/* The NVRTC version as major*1000 + minor*10. */
uk_status uk__nvrtc_version(int *version);

/* The toolkit include directories NVRTC gets (-I...), found at run time:
 * $UKERN_CUDA_INCLUDE, $CUDA_HOME/include, $CUDA_PATH/include, the toolkit
 * found at build time, /usr/local/cuda/include (each with its cccl/ subdir
 * where present). Borrowed static strings. When none has cuda_fp16.h and
 * cub/, returns UK_ERR_NOT_FOUND listing where it looked. */
uk_status uk__nvrtc_include_dirs(const char *const **dirs, int *count);

/* The 128-bit hash that names a request in both caches: the same parts as
 * the key text below, streamed without building the text (a memory-cache hit
 * needs only this). */
uk_hash128 uk__compile_hash(const uk__compile_req *req);

/* The complete cache key text of a request: library version, NVRTC version,
 * arch, canonical options, name expressions, full source and the embedded
 * headers. The caller releases the strbuf. */
struct uk_strbuf;
uk_status uk__compile_key(const uk__compile_req *req, struct uk_strbuf *key);

#endif
