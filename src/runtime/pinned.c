/* Page-locked (pinned) host memory: allocated by the driver, or existing
 * host memory registered with it. Stream-ordered copies from and to it are
 * truly asynchronous, and mapped memory is addressable from the device.
 * Made in the current context (device 0's primary context when the thread
 * has none); UK_HOST_PORTABLE makes it pinned for every context. */
#include <stdint.h>

#include "base/error.h"
#include "runtime/device.h"

#define HOST_FLAGS (UK_HOST_PORTABLE | UK_HOST_MAPPED | UK_HOST_WRITE_COMBINED)

static unsigned cu_flags(unsigned flags, int registering) {
  unsigned r = 0;
  if (flags & UK_HOST_PORTABLE) r |= registering ? CU_MEMHOSTREGISTER_PORTABLE : CU_MEMHOSTALLOC_PORTABLE;
  if (flags & UK_HOST_MAPPED) r |= registering ? CU_MEMHOSTREGISTER_DEVICEMAP : CU_MEMHOSTALLOC_DEVICEMAP;
  if (flags & UK_HOST_WRITE_COMBINED) r |= CU_MEMHOSTALLOC_WRITECOMBINED;
  return r;
}

/* The current context, or device 0's primary context made current. */
static uk_status host_enter(int *pushed) {
  int device;
  *pushed = 0;
  return uk__launch_enter(NULL, NULL, &device, pushed);
}

uk_status uk_host_alloc(size_t bytes, unsigned flags, void **p) {
  uk__error_clear();
  if (!p) return uk__errorf(UK_ERR_INVALID, "uk_host_alloc: p is NULL");
  if (flags & ~(unsigned)HOST_FLAGS)
    return uk__errorf(UK_ERR_INVALID, "uk_host_alloc: unknown flags 0x%x", flags & ~(unsigned)HOST_FLAGS);
  if (!bytes) return uk__errorf(UK_ERR_INVALID, "uk_host_alloc: bytes is 0");
  int pushed;
  uk_status st = host_enter(&pushed);
  if (st != UK_OK) return st;
  void *h = NULL;
  if ((st = uk__cu_need(cuMemHostAlloc)) == UK_OK)
    st = uk__cu_check(uk__cu.cuMemHostAlloc(&h, bytes, cu_flags(flags, 0)), "cuMemHostAlloc");
  uk__device_leave(pushed);
  if (st == UK_OK) *p = h;
  return st;
}

uk_status uk_host_free(void *p) {
  uk__error_clear();
  if (!p) return UK_OK;
  uk_status st = uk__cu_need(cuMemFreeHost);
  if (st != UK_OK) return st;
  return uk__cu_check(uk__cu.cuMemFreeHost(p), "cuMemFreeHost");
}

uk_status uk_host_register(void *p, size_t bytes, unsigned flags) {
  uk__error_clear();
  if (!p || !bytes) return uk__errorf(UK_ERR_INVALID, "uk_host_register: %s", !p ? "p is NULL" : "bytes is 0");
  if (flags & ~(unsigned)(UK_HOST_PORTABLE | UK_HOST_MAPPED))
    return uk__errorf(UK_ERR_INVALID, "uk_host_register: unknown flags 0x%x (known: UK_HOST_PORTABLE, UK_HOST_MAPPED)",
                      flags & ~(unsigned)(UK_HOST_PORTABLE | UK_HOST_MAPPED));
  int pushed;
  uk_status st = host_enter(&pushed);
  if (st != UK_OK) return st;
  if ((st = uk__cu_need(cuMemHostRegister)) == UK_OK)
    st = uk__cu_check(uk__cu.cuMemHostRegister(p, bytes, cu_flags(flags, 1)), "cuMemHostRegister");
  uk__device_leave(pushed);
  return st;
}

uk_status uk_host_unregister(void *p) {
  uk__error_clear();
  if (!p) return uk__errorf(UK_ERR_INVALID, "uk_host_unregister: p is NULL");
  int pushed;
  uk_status st = host_enter(&pushed);
  if (st != UK_OK) return st;
  if ((st = uk__cu_need(cuMemHostUnregister)) == UK_OK)
    st = uk__cu_check(uk__cu.cuMemHostUnregister(p), "cuMemHostUnregister");
  uk__device_leave(pushed);
  return st;
}

uk_status uk_host_device_pointer(void *p, uint64_t *dptr) {
  uk__error_clear();
  if (!p || !dptr) return uk__errorf(UK_ERR_INVALID, "uk_host_device_pointer: %s is NULL", !p ? "p" : "dptr");
  int pushed;
  uk_status st = host_enter(&pushed);
  if (st != UK_OK) return st;
  CUdeviceptr d = 0;
  if ((st = uk__cu_need(cuMemHostGetDevicePointer)) == UK_OK)
    st = uk__cu_check(uk__cu.cuMemHostGetDevicePointer(&d, p, 0),
                      "cuMemHostGetDevicePointer (is the memory pinned with UK_HOST_MAPPED?)");
  uk__device_leave(pushed);
  if (st == UK_OK) *dptr = (uint64_t)d;
  return st;
}
