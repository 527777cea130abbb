/* The CUDA driver API, loaded with dlopen("libcuda.so.1") at first use.
 *
 * Every entry point is fetched through cuGetProcAddress for the CUDA version
 * we were built against, so the versioned symbol (cuMemAlloc_v2, ...) always
 * matches the prototype in cuda.h. Call through the table: uk__cu.cuInit(0).
 *
 * Two sets: the core entry points (UK__CU_FUNCS) are resolved by
 * uk__cu_load, which fails without any of them; the others
 * (UK__CU_LAZY_FUNCS: newer or feature-specific ones) are resolved when
 * first used, through uk__cu_need(fn), so a driver that lacks one still
 * loads ukern and only the call that needs it fails, naming it.
 */
#ifndef UK_RUNTIME_CUDADRV_H
#define UK_RUNTIME_CUDADRV_H

#include <cuda.h>
#include <cudaProfiler.h>

#include "ukern/ukern.h"

#define UK__CU_FUNCS(X)                                                          \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString)           \
  X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute)   \
  X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease)    \
  X(cuCtxGetCurrent) X(cuCtxSetCurrent) X(cuCtxPushCurrent) X(cuCtxPopCurrent)    \
  X(cuCtxGetDevice) X(cuCtxSynchronize)                                           \
  X(cuStreamGetCtx) X(cuStreamSynchronize) X(cuStreamCreate) X(cuStreamDestroy)   \
  X(cuStreamIsCapturing) X(cuThreadExchangeStreamCaptureMode)                     \
  X(cuModuleLoadData) X(cuModuleLoadDataEx) X(cuModuleUnload)                     \
  X(cuModuleGetFunction) X(cuModuleGetGlobal)                                     \
  X(cuFuncGetAttribute) X(cuFuncSetAttribute)                                     \
  X(cuLaunchKernel) X(cuLaunchKernelEx) X(cuLaunchCooperativeKernel)              \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor)                                  \
  X(cuEventCreate) X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime)   \
  X(cuEventDestroy)                                                               \
  X(cuMemAlloc) X(cuMemFree) X(cuMemAllocAsync) X(cuMemFreeAsync)                 \
  X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuMemcpyDtoDAsync)            \
  X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync)                                       \
  X(cuMemsetD8) X(cuMemsetD8Async) X(cuMemsetD32Async)                            \
  X(cuPointerGetAttribute) X(cuTexObjectCreate) X(cuTexObjectDestroy)

/* Resolved on first use (uk__cu_need): newer than CUDA 12.0, or used by one
 * feature only. */
#define UK__CU_LAZY_FUNCS(X)                                                     \
  X(cuFuncGetParamInfo) X(cuModuleGetFunctionCount) X(cuModuleEnumerateFunctions) \
  X(cuFuncGetName)                                                                \
  X(cuStreamCreateWithPriority) X(cuCtxGetStreamPriorityRange) X(cuStreamQuery)    \
  X(cuStreamWaitEvent) X(cuEventQuery)                                            \
  X(cuMemPoolCreate) X(cuMemPoolSetAttribute) X(cuMemAllocFromPoolAsync)                    \
  X(cuMemGetInfo) X(cuDeviceCanAccessPeer) X(cuCtxEnablePeerAccess)                 \
  X(cuMemsetD16) X(cuMemsetD32) X(cuMemsetD16Async) X(cuMemcpy2D) X(cuMemcpy2DAsync) \
  X(cuMemAllocPitch) X(cuMemHostAlloc) X(cuMemFreeHost) X(cuMemHostRegister)         \
  X(cuMemHostUnregister) X(cuMemHostGetDevicePointer) X(cuArray3DCreate)            \
  X(cuArrayDestroy) X(cuMemcpy3D) X(cuSurfObjectCreate) X(cuSurfObjectDestroy)     \
  X(cuMemAllocManaged) X(cuStreamAttachMemAsync) X(cuMemPrefetchAsync) X(cuMemAdvise) \
  X(cuIpcGetMemHandle) X(cuIpcOpenMemHandle) X(cuIpcCloseMemHandle)                  \
  X(cuIpcGetEventHandle) X(cuIpcOpenEventHandle) X(cuPointerGetAttributes)           \
  X(cuProfilerStart) X(cuProfilerStop) X(cuFuncSetCacheConfig)                       \
  X(cuCtxSetCacheConfig) X(cuCtxGetCacheConfig) X(cuCtxSetLimit) X(cuCtxGetLimit)    \
  X(cuMemcpyPeer) X(cuMemcpyPeerAsync) X(cuCtxDisablePeerAccess)                     \
  X(cuMemsetD2D8) X(cuMemsetD2D16) X(cuMemsetD2D32) X(cuMemsetD2D8Async)             \
  X(cuMemsetD2D16Async) X(cuMemsetD2D32Async) X(cuMemcpy3DAsync)                     \
  X(cuDeviceGetByPCIBusId) X(cuDeviceGetPCIBusId)

typedef struct uk__cu_api {
#define UK__CU_MEMBER_(fn) __typeof__(&fn) fn;
  UK__CU_FUNCS(UK__CU_MEMBER_)
  UK__CU_LAZY_FUNCS(UK__CU_MEMBER_)
#undef UK__CU_MEMBER_
} uk__cu_api;

/* Core members are valid after a successful uk__cu_load(); a lazy member
 * after a successful uk__cu_need() of it. */
extern uk__cu_api uk__cu;

/* Loads libcuda, resolves the core table and calls cuInit(0), once per
 * process (thread-safe). UK_ERR_NO_DEVICE with the reason when there is no
 * driver, cuInit fails, or no device exists. Cheap after the first call. */
uk_status uk__cu_load(void);

/* Whether uk__cu_load succeeds, recording no error: for callers with an
 * answer of their own when there is no driver (offline plans), whose
 * success must leave uk_last_error() empty. */
int uk__cu_usable(void);

/* Resolves lazy entry point `fn` (loading the driver first): UK_OK, or
 * UK_ERR_CUDA saying the driver lacks it. Thread-safe; one atomic load once
 * resolved. */
#define uk__cu_need(fn) uk__cu_resolve((void **)&uk__cu.fn, #fn)
uk_status uk__cu_resolve(void **slot, const char *name);

/* Turns a failed CUresult into UK_ERR_CUDA with "<what>: CUDA_ERROR_X: text". */
uk_status uk__cu_error(CUresult r, const char *what);

/* uk__cu_error with `what` formatted printf-style (cut at 256 bytes). */
uk_status uk__cu_errorf(CUresult r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Checks a CUresult: UK_OK or the error from uk__cu_error. */
static inline uk_status uk__cu_check(CUresult r, const char *what) {
  return r == CUDA_SUCCESS ? UK_OK : uk__cu_error(r, what);
}

/* Stream capture. A module load (and the lazy load of a kernel) is not
 * stream work and is refused while a capture in global or thread-local
 * mode is in flight, which also invalidates that capture. ukern loads its
 * modules with this thread's capture mode relaxed (restored afterwards), so
 * that the first call of a kernel works inside a capture: the load happens
 * once, outside the graph. */
CUstreamCaptureMode uk__cu_capture_relax(void);
void uk__cu_capture_restore(CUstreamCaptureMode previous);
/* cuModuleLoadData / cuModuleGetFunction / cuModuleGetGlobal under a
 * relaxed capture mode (the current context is the target's). */
CUresult uk__cu_module_load(CUmodule *mod, const void *image);
CUresult uk__cu_module_function(CUfunction *fn, CUmodule mod, const char *name);
CUresult uk__cu_module_global(CUdeviceptr *ptr, size_t *bytes, CUmodule mod, const char *name);

/* Whether `stream` is capturing into a graph (0 on error, and for the
 * legacy NULL stream, which cannot capture). Legal during capture. */
int uk__cu_stream_capturing(void *stream);

#endif
