/* Managed (unified) memory: allocation, attaching to a stream, prefetch and
 * advice. Thin calls over the driver; the allocation is freed with
 * uk_mem_free (cuMemFree frees managed memory too). */

#include "base/error.h"
#include "runtime/device.h"

/* The driver's location for a device ordinal or UK_DEVICE_CPU. */
static CUmemLocation location_of(int device) {
  CUmemLocation loc;
  loc.type = device == UK_DEVICE_CPU ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE;
  loc.id = device == UK_DEVICE_CPU ? 0 : device;
  return loc;
}

/* A target device: UK_DEVICE_CPU, or one that exists (its context is
 * retained as a side effect, which also loads the driver). */
static uk_status check_target(const char *api, int device) {
  if (device == UK_DEVICE_CPU) return uk__cu_load();
  if (device < 0) return uk__errorf(UK_ERR_INVALID, "%s: device %d is neither an ordinal nor UK_DEVICE_CPU", api, device);
  CUcontext c;
  return uk__device_context(device, &c);
}

uk_status uk_managed_alloc(int device, size_t bytes, unsigned flags, uint64_t *dptr) {
  uk__error_clear();
  if (!dptr) return uk__errorf(UK_ERR_INVALID, "uk_managed_alloc: dptr is NULL");
  if (!bytes) return uk__errorf(UK_ERR_INVALID, "uk_managed_alloc: bytes is 0 (allocate at least one byte)");
  if (flags != UK_MANAGED_GLOBAL && flags != UK_MANAGED_HOST)
    return uk__errorf(UK_ERR_INVALID, "uk_managed_alloc: flags 0x%x (one of UK_MANAGED_GLOBAL, UK_MANAGED_HOST)", flags);
  int pushed = 0;
  uk_status st = uk__device_enter(device, &pushed);
  if (st != UK_OK) return st;
  CUdeviceptr p = 0;
  CUresult r;
  unsigned cu = flags == UK_MANAGED_GLOBAL ? CU_MEM_ATTACH_GLOBAL : CU_MEM_ATTACH_HOST;
  if ((st = uk__cu_need(cuMemAllocManaged)) == UK_OK && (r = uk__cu.cuMemAllocManaged(&p, bytes, cu)))
    st = uk__cu_errorf(r, "cuMemAllocManaged(%zu bytes, device %d)", bytes, device);
  uk__device_leave(pushed);
  if (st == UK_OK) *dptr = (uint64_t)p;
  return st;
}

uk_status uk_stream_attach_memory(void *stream, uint64_t dptr, size_t bytes, unsigned flags) {
  uk__error_clear();
  if (!stream || !dptr)
    return uk__errorf(UK_ERR_INVALID, "uk_stream_attach_memory: %s is NULL%s", !stream ? "stream" : "dptr",
                      !stream ? " (attach to a stream of your own)" : "");
  if (flags != UK_MANAGED_GLOBAL && flags != UK_MANAGED_HOST && flags != UK_MANAGED_SINGLE)
    return uk__errorf(UK_ERR_INVALID,
                      "uk_stream_attach_memory: flags 0x%x (one of UK_MANAGED_GLOBAL, UK_MANAGED_HOST, "
                      "UK_MANAGED_SINGLE)",
                      flags);
  uk_status st = uk__cu_load();
  if (st != UK_OK || (st = uk__cu_need(cuStreamAttachMemAsync)) != UK_OK) return st;
  unsigned cu = flags == UK_MANAGED_GLOBAL ? CU_MEM_ATTACH_GLOBAL
                : flags == UK_MANAGED_HOST ? CU_MEM_ATTACH_HOST
                                           : CU_MEM_ATTACH_SINGLE;
  return uk__cu_check(uk__cu.cuStreamAttachMemAsync((CUstream)stream, (CUdeviceptr)dptr, bytes, cu),
                      "cuStreamAttachMemAsync");
}

uk_status uk_managed_prefetch_async(uint64_t dptr, size_t bytes, int device, void *stream) {
  uk__error_clear();
  if (!bytes) return UK_OK;
  if (!dptr) return uk__errorf(UK_ERR_INVALID, "uk_managed_prefetch_async: dptr is NULL");
  uk_status st = check_target("uk_managed_prefetch_async", device);
  if (st != UK_OK) return st;
  int pushed = 0, d;
  if ((st = uk__launch_enter(NULL, stream, &d, &pushed)) != UK_OK) return st;
  CUresult r;
  if ((st = uk__cu_need(cuMemPrefetchAsync)) == UK_OK &&
      (r = uk__cu.cuMemPrefetchAsync((CUdeviceptr)dptr, bytes, location_of(device), 0, (CUstream)stream)))
    st = uk__cu_errorf(r, "cuMemPrefetchAsync(%zu bytes to %s)", bytes, device == UK_DEVICE_CPU ? "the host" : "device");
  uk__device_leave(pushed);
  return st;
}

uk_status uk_managed_advise(uint64_t dptr, size_t bytes, uk_mem_advice advice, int device) {
  uk__error_clear();
  if ((int)advice < UK_ADVISE_SET_READ_MOSTLY || (int)advice > UK_ADVISE_UNSET_ACCESSED_BY)
    return uk__errorf(UK_ERR_INVALID, "uk_managed_advise: unknown advice %d (UK_ADVISE_*)", (int)advice);
  if (!bytes) return UK_OK;
  if (!dptr) return uk__errorf(UK_ERR_INVALID, "uk_managed_advise: dptr is NULL");
  uk_status st = check_target("uk_managed_advise", device);
  if (st != UK_OK || (st = uk__cu_need(cuMemAdvise)) != UK_OK) return st;
  /* uk_mem_advice's values are CUmem_advise's. */
  return uk__cu_check(uk__cu.cuMemAdvise((CUdeviceptr)dptr, bytes, (CUmem_advise)advice, location_of(device)),
                      "cuMemAdvise");
}
