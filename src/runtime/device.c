/* Devices and their primary contexts.
 *
 * ukern works in each device's primary context (the one the CUDA runtime
 * uses too), retained once per process and never released, so handles made
 * in it (modules, functions) stay valid for the life of the process. */
#include "runtime/device.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"

static _Atomic(CUcontext) primary[UK__MAX_DEVICES];
static atomic_int primary_hi; /* 1 + the highest ordinal in primary[] */
static pthread_mutex_t primary_lock = PTHREAD_MUTEX_INITIALIZER;
/* A device's compute capability never changes: major * 100 + minor, 0
 * until first read (by uk_device_info_get or uk__device_cc). */
static atomic_int cc_of[UK__MAX_DEVICES];

uk_status uk_device_count(int *count) {
  uk__error_clear();
  if (!count) return uk__errorf(UK_ERR_INVALID, "uk_device_count: count is NULL");
  uk_status st = uk__cu_load();
  if (st != UK_OK) return st;
  int n = 0;
  st = uk__cu_check(uk__cu.cuDeviceGetCount(&n), "cuDeviceGetCount");
  if (st != UK_OK) return st;
  if (n == 0) return uk__errorf(UK_ERR_NO_DEVICE, "the CUDA driver reports no device");
  *count = n;
  return UK_OK;
}

/* The driver's handle of ordinal `device`, with a message naming the
 * device count when it is out of range. */
static uk_status get_device(int device, CUdevice *out) {
  uk_status st = uk__cu_load();
  if (st != UK_OK) return st;
  int n = 0;
  st = uk__cu_check(uk__cu.cuDeviceGetCount(&n), "cuDeviceGetCount");
  if (st != UK_OK) return st;
  if (device < 0 || device >= n)
    return uk__errorf(UK_ERR_INVALID, "device %d does not exist (%d device%s present)", device, n,
                      n == 1 ? "" : "s");
  if (device >= UK__MAX_DEVICES)
    return uk__errorf(UK_ERR_INVALID, "device %d: ukern handles devices 0..%d only", device,
                      UK__MAX_DEVICES - 1);
  return uk__cu_check(uk__cu.cuDeviceGet(out, device), "cuDeviceGet");
}

uk_status uk_device_info_get(int ordinal, uk_device_info *out) {
  uk__error_clear();
  if (!out) return uk__errorf(UK_ERR_INVALID, "uk_device_info_get: out is NULL");
  CUdevice d;
  uk_status st = get_device(ordinal, &d);
  if (st != UK_OK) return st;
  uk_device_info info;
  memset(&info, 0, sizeof info);
  info.ordinal = ordinal;
  int major = 0, minor = 0;
  size_t total = 0;
  if ((st = uk__cu_check(uk__cu.cuDeviceGetName(info.name, (int)sizeof info.name, d),
                         "cuDeviceGetName")) != UK_OK ||
      (st = uk__cu_check(uk__cu.cuDeviceGetAttribute(
                             &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d),
                         "cuDeviceGetAttribute")) != UK_OK ||
      (st = uk__cu_check(uk__cu.cuDeviceGetAttribute(
                             &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d),
                         "cuDeviceGetAttribute")) != UK_OK ||
      (st = uk__cu_check(uk__cu.cuDeviceGetAttribute(
                             &info.multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d),
                         "cuDeviceGetAttribute")) != UK_OK ||
      (st = uk__cu_check(uk__cu.cuDeviceTotalMem(&total, d), "cuDeviceTotalMem")) != UK_OK)
    return st;
  info.arch = major * 10 + minor;
  info.total_memory = total;
  atomic_store_explicit(&cc_of[ordinal], major * 100 + minor, memory_order_relaxed);
  *out = info;
  return UK_OK;
}

uk_status uk__device_cc(int device, int *major, int *minor) {
  if (device < 0 || device >= UK__MAX_DEVICES)
    return uk__errorf(UK_ERR_INVALID, "device %d is out of range (0..%d)", device, UK__MAX_DEVICES - 1);
  int cc = atomic_load_explicit(&cc_of[device], memory_order_relaxed);
  if (cc <= 0) {
    int ma = 0, mi = 0;
    uk_status st = uk__cu_check(uk__cu.cuDeviceGetAttribute(&ma, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                                            (CUdevice)device), "cuDeviceGetAttribute");
    if (st == UK_OK)
      st = uk__cu_check(uk__cu.cuDeviceGetAttribute(&mi, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                                    (CUdevice)device), "cuDeviceGetAttribute");
    if (st != UK_OK) return st;
    cc = ma * 100 + mi;
    atomic_store_explicit(&cc_of[device], cc, memory_order_relaxed);
  }
  *major = cc / 100;
  *minor = cc % 100;
  return UK_OK;
}

uk_status uk_driver_version(int *version) {
  uk__error_clear();
  if (!version) return uk__errorf(UK_ERR_INVALID, "uk_driver_version: version is NULL");
  uk_status st = uk__cu_load();
  if (st != UK_OK) return st;
  return uk__cu_check(uk__cu.cuDriverGetVersion(version), "cuDriverGetVersion");
}

uk_status uk__device_context(int device, CUcontext *out) {
  if (device >= 0 && device < UK__MAX_DEVICES) {
    CUcontext c = atomic_load_explicit(&primary[device], memory_order_acquire);
    if (c) {
      *out = c;
      return UK_OK;
    }
  }
  CUdevice d;
  uk_status st = get_device(device, &d);
  if (st != UK_OK) return st;
  pthread_mutex_lock(&primary_lock);
  CUcontext c = atomic_load_explicit(&primary[device], memory_order_acquire);
  if (!c) {
    char what[64];
    snprintf(what, sizeof what, "cuDevicePrimaryCtxRetain(device %d)", device);
    st = uk__cu_check(uk__cu.cuDevicePrimaryCtxRetain(&c, d), what);
    if (st == UK_OK) {
      atomic_store_explicit(&primary[device], c, memory_order_release);
      if (atomic_load_explicit(&primary_hi, memory_order_relaxed) <= device)
        atomic_store_explicit(&primary_hi, device + 1, memory_order_release);
    }
  }
  pthread_mutex_unlock(&primary_lock);
  if (st == UK_OK) *out = c;
  return st;
}

uk_status uk__device_enter(int device, int *pushed) {
  CUcontext prim, cur = NULL;
  uk_status st = uk__device_context(device, &prim);
  if (st != UK_OK) return st;
  *pushed = 0;
  if ((st = uk__cu_check(uk__cu.cuCtxGetCurrent(&cur), "cuCtxGetCurrent")) != UK_OK) return st;
  if (cur == prim) return UK_OK;
  if ((st = uk__cu_check(uk__cu.cuCtxPushCurrent(prim), "cuCtxPushCurrent")) != UK_OK) return st;
  *pushed = 1;
  return UK_OK;
}

void uk__device_leave(int pushed) {
  if (pushed) {
    CUcontext popped;
    uk__cu.cuCtxPopCurrent(&popped);
  }
}

uk_status uk_device_set_current(int device) {
  uk__error_clear();
  CUcontext c;
  uk_status st = uk__device_context(device, &c);
  if (st != UK_OK) return st;
  return uk__cu_check(uk__cu.cuCtxSetCurrent(c), "cuCtxSetCurrent");
}

uk_status uk_device_synchronize(void) {
  uk__error_clear();
  uk_status st = uk__cu_load();
  if (st != UK_OK) return st;
  CUcontext cur = NULL;
  if ((st = uk__cu_check(uk__cu.cuCtxGetCurrent(&cur), "cuCtxGetCurrent")) != UK_OK) return st;
  /* Like cudaDeviceSynchronize: with nothing current, device 0 is meant. */
  if (!cur && (st = uk_device_set_current(0)) != UK_OK) return st;
  return uk__cu_check(uk__cu.cuCtxSynchronize(), "cuCtxSynchronize");
}

/* The device of context `c`: a primary context ukern retained is found in
 * the table; another (not yet retained, or a user's own) is made current
 * for a moment to ask it. Both ways are legal during stream capture, unlike
 * cuStreamGetDevice, which capture refuses (and which then invalidates the
 * capture). Inline: every launch asks it. */
static inline __attribute__((always_inline)) uk_status context_device(CUcontext c, int *device) {
  int n = atomic_load_explicit(&primary_hi, memory_order_acquire);
  for (int d = 0; d < n; d++)
    if (atomic_load_explicit(&primary[d], memory_order_relaxed) == c) {
      *device = d;
      return UK_OK;
    }
  CUdevice d = 0;
  uk_status st = uk__cu_check(uk__cu.cuCtxPushCurrent(c), "cuCtxPushCurrent (the stream's context)");
  if (st != UK_OK) return st;
  st = uk__cu_check(uk__cu.cuCtxGetDevice(&d), "cuCtxGetDevice (the stream's context)");
  CUcontext popped;
  uk__cu.cuCtxPopCurrent(&popped);
  if (st == UK_OK) *device = (int)d; /* CUdevice handles are the ordinals */
  return st;
}

/* The hot part of every launch: a few cheap driver queries, all legal while
 * `stream` captures, and no locking once the primary context is retained. */
uk_status uk__launch_enter(uk_context *ctx, void *stream, int *device, int *pushed) {
  uk_status st = uk__cu_load();
  if (st != UK_OK) return st;
  CUcontext cur = NULL, prim, sc = NULL;
  int dev;
  *pushed = 0;
  if (uk__cu.cuCtxGetCurrent(&cur) != CUDA_SUCCESS) cur = NULL;
  if (stream) {
    if ((st = uk__cu_check(uk__cu.cuStreamGetCtx((CUstream)stream, &sc), "cuStreamGetCtx")) != UK_OK)
      return st;
    if ((st = context_device(sc, &dev)) != UK_OK) return st;
  } else if (cur) {
    if ((st = context_device(cur, &dev)) != UK_OK) return st;
  } else {
    /* Nothing current: the context's default device becomes current, as the
     * header promises, so later NULL-stream work lands on the same device. */
    dev = ctx ? ctx->opts.device : 0;
    if ((st = uk__device_context(dev, &prim)) != UK_OK) return st;
    if ((st = uk__cu_check(uk__cu.cuCtxSetCurrent(prim), "cuCtxSetCurrent")) != UK_OK) return st;
    *device = dev;
    return UK_OK;
  }
  if ((st = uk__device_context(dev, &prim)) != UK_OK) return st;
  if (cur != prim) {
    if ((st = uk__cu_check(uk__cu.cuCtxPushCurrent(prim), "cuCtxPushCurrent")) != UK_OK) return st;
    *pushed = 1;
  }
  *device = dev;
  return UK_OK;
}
