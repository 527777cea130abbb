/* The CUDA driver API, loaded with dlopen at first use (cudadrv.h). */
#include "runtime/cudadrv.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"

uk__cu_api uk__cu;

typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static get_proc_fn get_proc; /* set by load() before load_status is UK_OK */
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
  get_proc = (get_proc_fn)dlsym(lib, "cuGetProcAddress_v2");
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

int uk__cu_usable(void) {
  pthread_once(&load_once, load);
  return load_status == UK_OK;
}

uk_status uk__cu_resolve(void **slot, const char *name) {
  if (__atomic_load_n(slot, __ATOMIC_ACQUIRE)) return UK_OK;
  uk_status st = uk__cu_load();
  if (st != UK_OK) return st;
  void *p = NULL;
  CUdriverProcAddressQueryResult q;
  if (get_proc(name, &p, version_for(name), CU_GET_PROC_ADDRESS_DEFAULT, &q) != CUDA_SUCCESS || !p) {
    int v = 0;
    uk__cu.cuDriverGetVersion(&v);
    return uk__errorf(UK_ERR_CUDA,
                      "the CUDA driver (version %d) lacks %s, which this call needs (built for CUDA "
                      "%d: update the driver)",
                      v, name, CUDA_VERSION);
  }
  /* Racing threads store the same value. */
  __atomic_store_n(slot, p, __ATOMIC_RELEASE);
  return UK_OK;
}

CUstreamCaptureMode uk__cu_capture_relax(void) {
  CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
  if (uk__cu.cuThreadExchangeStreamCaptureMode(&m) != CUDA_SUCCESS) return CU_STREAM_CAPTURE_MODE_RELAXED;
  return m;
}

void uk__cu_capture_restore(CUstreamCaptureMode previous) {
  if (previous != CU_STREAM_CAPTURE_MODE_RELAXED) uk__cu.cuThreadExchangeStreamCaptureMode(&previous);
}

CUresult uk__cu_module_load(CUmodule *mod, const void *image) {
  CUstreamCaptureMode m = uk__cu_capture_relax();
  CUresult r = uk__cu.cuModuleLoadData(mod, image);
  uk__cu_capture_restore(m);
  return r;
}

CUresult uk__cu_module_function(CUfunction *fn, CUmodule mod, const char *name) {
  CUstreamCaptureMode m = uk__cu_capture_relax();
  CUresult r = uk__cu.cuModuleGetFunction(fn, mod, name);
  uk__cu_capture_restore(m);
  return r;
}

CUresult uk__cu_module_global(CUdeviceptr *ptr, size_t *bytes, CUmodule mod, const char *name) {
  CUstreamCaptureMode m = uk__cu_capture_relax();
  CUresult r = uk__cu.cuModuleGetGlobal(ptr, bytes, mod, name);
  uk__cu_capture_restore(m);
  return r;
}

int uk__cu_stream_capturing(void *stream) {
  if (!stream || stream == (void *)CU_STREAM_LEGACY) return 0;
  CUstreamCaptureStatus s = CU_STREAM_CAPTURE_STATUS_NONE;
  return uk__cu.cuStreamIsCapturing((CUstream)stream, &s) == CUDA_SUCCESS &&
         s != CU_STREAM_CAPTURE_STATUS_NONE;
}

uk_status uk__cu_error(CUresult r, const char *what) {
  const char *name = NULL, *text = NULL;
  if (uk__cu.cuGetErrorName) uk__cu.cuGetErrorName(r, &name);
  if (uk__cu.cuGetErrorString) uk__cu.cuGetErrorString(r, &text);
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    return uk__errorf(UK_ERR_NOMEM, "%s: CUDA_ERROR_OUT_OF_MEMORY: %s", what, text ? text : "");
  return uk__errorf(UK_ERR_CUDA, "%s: %s: %s", what, name ? name : "CUDA error", text ? text : "");
}

uk_status uk__cu_errorf(CUresult r, const char *fmt, ...) {
  char what[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return uk__cu_error(r, what);
}
