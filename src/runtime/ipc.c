/* Interprocess sharing of device memory and events (cuIpc*): handles are
 * plain bytes the caller carries to another process on the same host. */
#include <string.h>

#include "base/error.h"
#include "runtime/device.h"

_Static_assert(sizeof(uk_ipc_mem_handle) == sizeof(CUipcMemHandle), "uk_ipc_mem_handle is a CUipcMemHandle");
_Static_assert(sizeof(uk_ipc_event_handle) == sizeof(CUipcEventHandle), "uk_ipc_event_handle is a CUipcEventHandle");

uk_status uk_ipc_mem_get_handle(uint64_t dptr, uk_ipc_mem_handle *handle) {
  uk__error_clear();
  if (!dptr || !handle)
    return uk__errorf(UK_ERR_INVALID, "uk_ipc_mem_get_handle: %s is NULL", !dptr ? "dptr" : "handle");
  int pushed = 0;
  uk_status st = uk__pointer_enter(dptr, &pushed);
  if (st != UK_OK) return st;
  CUipcMemHandle h;
  CUresult r = CUDA_SUCCESS;
  if ((st = uk__cu_need(cuIpcGetMemHandle)) == UK_OK) r = uk__cu.cuIpcGetMemHandle(&h, (CUdeviceptr)dptr);
  uk__device_leave(pushed);
  if (st != UK_OK) return st;
  if (r == CUDA_ERROR_INVALID_VALUE || r == CUDA_ERROR_NOT_SUPPORTED)
    return uk__errorf(UK_ERR_CUDA,
                      "uk_ipc_mem_get_handle: the driver cannot share 0x%llx (%s): share memory from "
                      "uk_mem_alloc or uk_mem_alloc_pitch, not from a stream-ordered pool such as ukern's "
                      "default allocator's",
                      (unsigned long long)dptr, r == CUDA_ERROR_INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE"
                                                                            : "CUDA_ERROR_NOT_SUPPORTED");
  if (r != CUDA_SUCCESS) return uk__cu_error(r, "cuIpcGetMemHandle");
  memcpy(handle->bytes, &h, sizeof h);
  return UK_OK;
}

uk_status uk_ipc_mem_open(int device, const uk_ipc_mem_handle *handle, unsigned flags, uint64_t *dptr) {
  uk__error_clear();
  if (!handle || !dptr) return uk__errorf(UK_ERR_INVALID, "uk_ipc_mem_open: %s is NULL", !handle ? "handle" : "dptr");
  if (flags & ~(unsigned)UK_IPC_LAZY_ENABLE_PEER_ACCESS)
    return uk__errorf(UK_ERR_INVALID, "uk_ipc_mem_open: unknown flags 0x%x (known: UK_IPC_LAZY_ENABLE_PEER_ACCESS)",
                      flags & ~(unsigned)UK_IPC_LAZY_ENABLE_PEER_ACCESS);
  int pushed = 0;
  uk_status st = uk__device_enter(device, &pushed);
  if (st != UK_OK) return st;
  CUipcMemHandle h;
  memcpy(&h, handle->bytes, sizeof h);
  CUdeviceptr p = 0;
  CUresult r;
  if ((st = uk__cu_need(cuIpcOpenMemHandle)) == UK_OK &&
      /* The driver takes no other value (its documentation: "must be specified as
       * CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS"; 0 is CUDA_ERROR_INVALID_VALUE on driver 580),
       * and for memory of this device it changes nothing: always pass it, as PyCUDA does. */
      (r = uk__cu.cuIpcOpenMemHandle(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)))
    st = uk__cu_errorf(r, "cuIpcOpenMemHandle (device %d)", device);
  uk__device_leave(pushed);
  if (st == UK_OK) *dptr = (uint64_t)p;
  return st;
}

uk_status uk_ipc_mem_close(uint64_t dptr) {
  uk__error_clear();
  if (!dptr) return UK_OK;
  int pushed = 0;
  uk_status st = uk__pointer_enter(dptr, &pushed);
  if (st != UK_OK) return st;
  if ((st = uk__cu_need(cuIpcCloseMemHandle)) == UK_OK)
    st = uk__cu_check(uk__cu.cuIpcCloseMemHandle((CUdeviceptr)dptr), "cuIpcCloseMemHandle");
  uk__device_leave(pushed);
  return st;
}

uk_status uk_ipc_event_get_handle(void *event, uk_ipc_event_handle *handle) {
  uk__error_clear();
  if (!event || !handle)
    return uk__errorf(UK_ERR_INVALID, "uk_ipc_event_get_handle: %s is NULL", !event ? "event" : "handle");
  uk_status st = uk__cu_load();
  if (st != UK_OK || (st = uk__cu_need(cuIpcGetEventHandle)) != UK_OK) return st;
  CUipcEventHandle h;
  CUresult r = uk__cu.cuIpcGetEventHandle(&h, (CUevent)event);
  /* The driver answers INVALID_VALUE or (580) INVALID_HANDLE for an event made without the flag. */
  if (r == CUDA_ERROR_INVALID_VALUE || r == CUDA_ERROR_INVALID_HANDLE)
    return uk__errorf(UK_ERR_CUDA, "uk_ipc_event_get_handle: %s: the event was not made "
                                   "with UK_EVENT_INTERPROCESS | UK_EVENT_DISABLE_TIMING",
                      r == CUDA_ERROR_INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE" : "CUDA_ERROR_INVALID_HANDLE");
  if (r != CUDA_SUCCESS) return uk__cu_error(r, "cuIpcGetEventHandle");
  memcpy(handle->bytes, &h, sizeof h);
  return UK_OK;
}

uk_status uk_ipc_event_open(int device, const uk_ipc_event_handle *handle, void **event) {
  uk__error_clear();
  if (!handle || !event)
    return uk__errorf(UK_ERR_INVALID, "uk_ipc_event_open: %s is NULL", !handle ? "handle" : "event");
  int pushed = 0;
  uk_status st = uk__device_enter(device, &pushed);
  if (st != UK_OK) return st;
  CUipcEventHandle h;
  memcpy(&h, handle->bytes, sizeof h);
  CUevent e = NULL;
  if ((st = uk__cu_need(cuIpcOpenEventHandle)) == UK_OK)
    st = uk__cu_check(uk__cu.cuIpcOpenEventHandle(&e, h), "cuIpcOpenEventHandle");
  uk__device_leave(pushed);
  if (st == UK_OK) *event = e;
  return st;
}
