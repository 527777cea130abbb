/* Linking device code with nvJitLink (from the CUDA toolkit, dlopen'ed at
 * first use like the driver): relocatable cubins, PTX, LTO-IR, fatbins and
 * static device libraries (.a) into one cubin, with libcudadevrt.a (the
 * device runtime behind kernels that launch kernels) found in the toolkit. */
#ifndef UK_RUNTIME_LINK_H
#define UK_RUNTIME_LINK_H

#include <stddef.h>

#include "runtime/arch.h"
#include "runtime/compile.h"
#include "runtime/toolkit.h"

/* Input kinds; the values are nvJitLinkInputType's. */
enum {
  UK__LINK_CUBIN = 1,
  UK__LINK_PTX = 2,
  UK__LINK_LTOIR = 3,
  UK__LINK_FATBIN = 4,
  UK__LINK_OBJECT = 5,
  UK__LINK_LIBRARY = 6
};

typedef struct uk__link_input {
  int kind;         /* UK__LINK_* */
  const void *data; /* borrowed for the call */
  size_t size;
  const char *name; /* for logs */
} uk__link_input;

typedef struct uk__link_job {
  uk__arch arch;
  int lto;          /* -lto: needed when an input is LTO-IR */
  int devrt;        /* add libcudadevrt.a (uk__link_devrt) */
  const uk__link_input *inputs;
  int num_inputs;
  const char *const *options; /* more nvJitLink options ("-O3", "-lineinfo"); may be NULL */
  int num_options;
  const char *what; /* "linking 'module'" for messages */
} uk__link_job;

/* Loads libnvJitLink.so.<NVRTC major> (tk->nvrtc_version) once:
 * $UKERN_NVJITLINK (a path; when set, the only one tried), else the
 * toolkit's lib dirs ($CUDA_HOME, $CUDA_PATH, those beside tk's include
 * dirs, the build's toolkit, /usr/local/cuda), then the loader's search
 * path. tk: the first caller's counts (uk__nvrtc_toolkit). UK_ERR_NO_DEVICE naming
 * the library and where it looked when none loads. */
uk_status uk__link_load(const uk__toolkit *tk);

/* libcudadevrt.a, read once: $UKERN_CUDADEVRT (a path; when set, the only
 * one tried), else the lib dirs of uk__link_load. Borrowed.
 * UK_ERR_NOT_FOUND saying where it looked. */
uk_status uk__link_devrt(const uk__toolkit *tk, const void **data, size_t *size, const char **path);

/* Links: *image is the malloc'd cubin, *info the malloc'd info log ("" when
 * none). UK_ERR_COMPILE with the options line and nvJitLink's error log in
 * uk_last_error_log() when linking fails. */
uk_status uk__link_run(const uk__toolkit *tk, const uk__link_job *job, char **image, size_t *size, char **info);

/* A compiler's relocatable cubin (or LTO-IR with lto) for req linked by
 * nvJitLink with libcudadevrt.a when found: *image (malloc'd) is replaced
 * by the linked cubin, whose info log is appended to *log (malloc'd). For
 * the NVRTC and nvcc backends alike (nvrtc.c). */
uk_status uk__link_compiled(const uk__compile_req *req, const char *pname, int lto, char **image, size_t *size,
                            char **log);

/* Whether NVRTC options ask for relocatable device code that must be
 * linked (-rdc=true, --relocatable-device-code=true, -dc, --device-c) or
 * link-time optimisation (-dlto, --dlink-time-opt: *lto = 1). */
int uk__link_wanted(const char *const *options, int n, int *lto);

/* What a linked compile adds to its cache key (compile_key.c): nvJitLink's version and a
 * digest of libcudadevrt.a ("nvjitlink 13.0 devrt <hex>"). 0 (out = "")
 * when the request is not linked. */
int uk__link_key(const uk__toolkit *tk, const uk__compile_req *req, char out[96]);
/* That identity text alone (for keys of uk_module_link). */
void uk__link_identity(const uk__toolkit *tk, char out[96]);

#endif
