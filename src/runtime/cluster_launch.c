/* Thread-block cluster launches of the generated kernels (cluster_launch.h). */
#include "runtime/cluster_launch.h"

#include <stdatomic.h>
#include <string.h>

#include "runtime/device.h"

/* Per device: 0 unknown, -1 no clusters, else the most blocks a cluster. */
static _Atomic int cap[UK__MAX_DEVICES];
static _Atomic int forced;

int uk__cluster_max(int device) {
  if (device < 0 || device >= UK__MAX_DEVICES) return 0;
  int c = atomic_load_explicit(&cap[device], memory_order_relaxed);
  if (c) return c > 0 ? c : 0;
  if (!uk__cu_usable()) return 0; /* offline: no device to ask */
  int major = 0, launch = 0;
  if (uk__cu.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, (CUdevice)device) !=
          CUDA_SUCCESS ||
      uk__cu.cuDeviceGetAttribute(&launch, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, (CUdevice)device) != CUDA_SUCCESS)
    major = launch = 0;
  c = major >= 9 && launch ? 16 : -1;
  int expected = 0; /* a failure recorded meanwhile wins */
  if (!atomic_compare_exchange_strong(&cap[device], &expected, c)) c = expected;
  return c > 0 ? c : 0;
}

/* Lowers the device's maximum to at most c (-1: none). */
static void lower(int device, int c) {
  if (device < 0 || device >= UK__MAX_DEVICES) return;
  int old = atomic_load(&cap[device]);
  while ((old == 0 || old > c) && !atomic_compare_exchange_weak(&cap[device], &old, c)) {
  }
}

void uk__cluster_loaded(CUfunction f, int device) {
  if (uk__cu.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1) != CUDA_SUCCESS)
    lower(device, 8);
}

CUresult uk__cluster_launch(const uk__frame *f, CUfunction fn, int64_t blocks, int block, int c, int scalable,
                            unsigned shared, void *buf, size_t bytes) {
  int fc = scalable ? atomic_load_explicit(&forced, memory_order_relaxed) : 0;
  if (fc > 0) blocks = blocks / c * fc, c = fc;
  void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &bytes, CU_LAUNCH_PARAM_END};
  CUlaunchAttribute attr;
  memset(&attr, 0, sizeof attr);
  attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr.value.clusterDim.x = (unsigned)c;
  attr.value.clusterDim.y = 1;
  attr.value.clusterDim.z = 1;
  CUlaunchConfig cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.gridDimX = (unsigned)blocks, cfg.gridDimY = 1, cfg.gridDimZ = 1;
  cfg.blockDimX = (unsigned)block, cfg.blockDimY = 1, cfg.blockDimZ = 1;
  cfg.sharedMemBytes = shared;
  cfg.hStream = (CUstream)f->stream;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  return uk__cu.cuLaunchKernelEx(&cfg, fn, NULL, extra);
}

/* A refusal of a non-portable size (above 8) leaves the portable ones; a
 * refusal within those leaves none. c: the size launched (a test's forced
 * size, uk__cluster_launch). */
void uk__cluster_failed(int device, int c, int scalable) {
  int fc = scalable ? atomic_load_explicit(&forced, memory_order_relaxed) : 0;
  if (fc > 0) c = fc;
  lower(device, c > 8 && uk__cluster_max(device) > 8 ? 8 : -1);
}

void uk__cluster_force(int c) {
  atomic_store(&forced, c > 0 ? c : 0);
  if (c <= 0)
    for (int d = 0; d < UK__MAX_DEVICES; d++) atomic_store(&cap[d], 0);
}
