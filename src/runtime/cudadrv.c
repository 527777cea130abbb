#include "runtime/cudadrv.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"

uk__cu_api uk__cu;

typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static uk_status load_status = UK_ERR_NO_DEVICE;
static char load_reason[512];

/* cuda.h declares some entry points with their first signature and a newer
 * one separately as *_v2 with more parameters (no macro maps one to the
 * other). Asked for at CUDA_VERSION, the driver returns the newer one, so the
 * prototypes we call through would not match: pin those to the version that
 * still has the signature in cuda.h. */
static int version_for(const char *name) {
  static const char *const pinned[] = {"cuCtxGetDevice", "cuCtxSynchronize", "cuStreamGetCtx"};
  for (size_t k = 0; k < sizeof pinned / sizeof pinned[0]; k++)
    if (strcmp(name, pinned[k]) == 0) return 12000;
  return CUDA_VERSION;
}

static void load(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    snprintf(load_reason, sizeof load_reason,
             "no CUDA driver: dlopen(\"libcuda.so.1\") failed: %s", why ? why : "unknown reason");
    return;
  }
  get_proc_fn get_proc = (get_proc_fn)dlsym(lib, "cuGetProcAddress_v2");
  if (!get_proc) {
    snprintf(load_reason, sizeof load_reason,
             "the CUDA driver is too old: libcuda.so.1 has no cuGetProcAddress_v2 (need a CUDA 12+ driver)");
    return;
  }
#define UK__CU_RESOLVE_(fn)                                                                  \
  {                                                                                          \
    void *p = NULL;                                                                          \
    CUdriverProcAddressQueryResult q;                                                        \
    if (get_proc(#fn, &p, version_for(#fn), CU_GET_PROC_ADDRESS_DEFAULT, &q) != CUDA_SUCCESS || \
        !p) {                                                                                \
      snprintf(load_reason, sizeof load_reason,                                              \
               "the CUDA driver lacks %s for CUDA %d (update the driver)", #fn, CUDA_VERSION); \
      return;                                                                                \
    }                                                                                        \
    *(void **)&uk__cu.fn = p;                                                                \
  }
  UK__CU_FUNCS(UK__CU_RESOLVE_)
#undef UK__CU_RESOLVE_
  CUresult r = uk__cu.cuInit(0);
  if (r != CUDA_SUCCESS) {
    const char *name = NULL;
    uk__cu.cuGetErrorName(r, &name);
    snprintf(load_reason, sizeof load_reason, "cuInit failed: %s%s", name ? name : "error",
             r == CUDA_ERROR_NO_DEVICE ? " (no CUDA-capable device is present)" : "");
    return;
  }
  int count = 0;
  if (uk__cu.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    snprintf(load_reason, sizeof load_reason, "the CUDA driver reports no device");
    return;
  }
  load_status = UK_OK;
}

uk_status uk__cu_load(void) {
  pthread_once(&load_once, load);
  if (load_status != UK_OK) return uk__errorf(load_status, "%s", load_reason);
  return UK_OK;
}

uk_status uk__cu_error(CUresult r, const char *what) {
  const char *name = NULL, *text = NULL;
  if (uk__cu.cuGetErrorName) uk__cu.cuGetErrorName(r, &name);
  if (uk__cu.cuGetErrorString) uk__cu.cuGetErrorString(r, &text);
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    return uk__errorf(UK_ERR_NOMEM, "%s: CUDA_ERROR_OUT_OF_MEMORY: %s", what, text ? text : "");
  return uk__errorf(UK_ERR_CUDA, "%s: %s: %s", what, name ? name : "CUDA error", text ? text : "");
}
