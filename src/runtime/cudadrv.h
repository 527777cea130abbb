/* The CUDA driver API, loaded with dlopen("libcuda.so.1") at first use.
 *
 * Every entry point is fetched through cuGetProcAddress for the CUDA version
 * we were built against, so the versioned symbol (cuMemAlloc_v2, ...) always
 * matches the prototype in cuda.h. Call through the table: uk__cu.cuInit(0).
 */
#ifndef UK_RUNTIME_CUDADRV_H
#define UK_RUNTIME_CUDADRV_H

#include <cuda.h>

#include "ukern/ukern.h"

#define UK__CU_FUNCS(X)                                                          \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString)           \
  X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute)   \
  X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease)    \
  X(cuCtxGetCurrent) X(cuCtxSetCurrent) X(cuCtxPushCurrent) X(cuCtxPopCurrent)    \
  X(cuCtxGetDevice) X(cuCtxSynchronize)                                           \
  X(cuStreamGetCtx) X(cuStreamGetDevice) X(cuStreamSynchronize) X(cuStreamCreate) \
  X(cuStreamDestroy)                                                              \
  X(cuModuleLoadData) X(cuModuleLoadDataEx) X(cuModuleUnload)                     \
  X(cuModuleGetFunction) X(cuModuleGetGlobal)                                     \
  X(cuModuleGetFunctionCount) X(cuModuleEnumerateFunctions) X(cuFuncGetName)      \
  X(cuFuncGetAttribute) X(cuFuncSetAttribute) X(cuFuncGetParamInfo)              \
  X(cuLaunchKernel) X(cuLaunchKernelEx) X(cuLaunchCooperativeKernel)              \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor)                                  \
  X(cuEventCreate) X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime)   \
  X(cuEventDestroy)                                                               \
  X(cuMemAlloc) X(cuMemFree) X(cuMemAllocAsync) X(cuMemFreeAsync)                 \
  X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuMemcpyDtoDAsync)            \
  X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync)                                       \
  X(cuMemsetD8) X(cuMemsetD8Async) X(cuMemsetD32Async)                            \
  X(cuPointerGetAttribute)                                                        \
  X(cuTexObjectCreate) X(cuTexObjectDestroy)

typedef struct uk__cu_api {
#define UK__CU_MEMBER_(fn) __typeof__(&fn) fn;
  UK__CU_FUNCS(UK__CU_MEMBER_)
#undef UK__CU_MEMBER_
} uk__cu_api;

/* Valid after a successful uk__cu_load(). */
extern uk__cu_api uk__cu;

/* Loads libcuda, resolves the table and calls cuInit(0), once per process
 * (thread-safe). UK_ERR_NO_DEVICE with the reason when there is no driver,
 * cuInit fails, or no device exists. Cheap after the first call. */
uk_status uk__cu_load(void);

/* Turns a failed CUresult into UK_ERR_CUDA with "<what>: CUDA_ERROR_X: text". */
uk_status uk__cu_error(CUresult r, const char *what);

/* Checks a CUresult: UK_OK or the error from uk__cu_error. */
static inline uk_status uk__cu_check(CUresult r, const char *what) {
  return r == CUDA_SUCCESS ? UK_OK : uk__cu_error(r, what);
}

#endif
