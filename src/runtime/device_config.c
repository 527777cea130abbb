/* Settings of a device's primary context: limits (stack, printf FIFO,
 * malloc heap, device runtime) and the L1/shared cache preference; and the
 * profiler's start/stop. */
#include <stdio.h>

#include "base/error.h"
#include "runtime/device.h"

static const char *const limit_names[] = {"UK_LIMIT_STACK_SIZE", "UK_LIMIT_PRINTF_FIFO_SIZE",
                                          "UK_LIMIT_MALLOC_HEAP_SIZE", "UK_LIMIT_DEV_RUNTIME_SYNC_DEPTH",
                                          "UK_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT"};
_Static_assert(UK_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT == (int)CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT &&
                   UK_LIMIT_STACK_SIZE == (int)CU_LIMIT_STACK_SIZE,
               "uk_limit's values are CUlimit's");
_Static_assert(UK_CACHE_PREFER_EQUAL == (int)CU_FUNC_CACHE_PREFER_EQUAL, "uk_cache_config's values are CUfunc_cache's");

static uk_status check_limit(const char *api, uk_limit limit) {
  if ((unsigned)limit >= sizeof limit_names / sizeof limit_names[0])
    return uk__errorf(UK_ERR_INVALID, "%s: unknown limit %d (UK_LIMIT_*)", api, (int)limit);
  return UK_OK;
}

static uk_status limit_error(CUresult r, const char *api, uk_limit limit, int device) {
  return uk__cu_errorf(r, "%s(%s, device %d)%s", api, limit_names[limit], device,
                       r == CUDA_ERROR_UNSUPPORTED_LIMIT ? " (this driver or device does not support the limit)" : "");
}

uk_status uk_device_get_limit(int device, uk_limit limit, size_t *value) {
  uk__error_clear();
  if (!value) return uk__errorf(UK_ERR_INVALID, "uk_device_get_limit: value is NULL");
  uk_status st = check_limit("uk_device_get_limit", limit);
  int pushed = 0;
  if (st != UK_OK || (st = uk__device_enter(device, &pushed)) != UK_OK) return st;
  size_t v = 0;
  CUresult r = CUDA_SUCCESS;
  if ((st = uk__cu_need(cuCtxGetLimit)) == UK_OK) r = uk__cu.cuCtxGetLimit(&v, (CUlimit)limit);
  uk__device_leave(pushed);
  if (st != UK_OK) return st;
  if (r != CUDA_SUCCESS) return limit_error(r, "cuCtxGetLimit", limit, device);
  *value = v;
  return UK_OK;
}

uk_status uk_device_set_limit(int device, uk_limit limit, size_t value) {
  uk__error_clear();
  uk_status st = check_limit("uk_device_set_limit", limit);
  int pushed = 0;
  if (st != UK_OK || (st = uk__device_enter(device, &pushed)) != UK_OK) return st;
  CUresult r = CUDA_SUCCESS;
  if ((st = uk__cu_need(cuCtxSetLimit)) == UK_OK) r = uk__cu.cuCtxSetLimit((CUlimit)limit, value);
  uk__device_leave(pushed);
  if (st != UK_OK) return st;
  return r == CUDA_SUCCESS ? UK_OK : limit_error(r, "cuCtxSetLimit", limit, device);
}

uk_status uk_device_set_cache_config(int device, uk_cache_config config) {
  uk__error_clear();
  if ((unsigned)config > UK_CACHE_PREFER_EQUAL)
    return uk__errorf(UK_ERR_INVALID, "uk_device_set_cache_config: unknown config %d (UK_CACHE_PREFER_*)", (int)config);
  int pushed = 0;
  uk_status st = uk__device_enter(device, &pushed);
  if (st != UK_OK) return st;
  if ((st = uk__cu_need(cuCtxSetCacheConfig)) == UK_OK)
    st = uk__cu_check(uk__cu.cuCtxSetCacheConfig((CUfunc_cache)config), "cuCtxSetCacheConfig");
  uk__device_leave(pushed);
  return st;
}

uk_status uk_device_get_cache_config(int device, uk_cache_config *config) {
  uk__error_clear();
  if (!config) return uk__errorf(UK_ERR_INVALID, "uk_device_get_cache_config: config is NULL");
  int pushed = 0;
  uk_status st = uk__device_enter(device, &pushed);
  if (st != UK_OK) return st;
  CUfunc_cache c = CU_FUNC_CACHE_PREFER_NONE;
  if ((st = uk__cu_need(cuCtxGetCacheConfig)) == UK_OK)
    st = uk__cu_check(uk__cu.cuCtxGetCacheConfig(&c), "cuCtxGetCacheConfig");
  uk__device_leave(pushed);
  if (st == UK_OK) *config = (uk_cache_config)c;
  return st;
}

/* The profiler acts on the current context (device 0's when none). */
static uk_status profiler(int start) {
  uk__error_clear();
  int pushed = 0, d;
  uk_status st = uk__launch_enter(NULL, NULL, &d, &pushed);
  if (st != UK_OK) return st;
  if ((st = start ? uk__cu_need(cuProfilerStart) : uk__cu_need(cuProfilerStop)) == UK_OK)
    st = start ? uk__cu_check(uk__cu.cuProfilerStart(), "cuProfilerStart")
               : uk__cu_check(uk__cu.cuProfilerStop(), "cuProfilerStop");
  uk__device_leave(pushed);
  return st;
}

uk_status uk_profiler_start(void) { return profiler(1); }
uk_status uk_profiler_stop(void) { return profiler(0); }
