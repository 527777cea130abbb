/* Pointer attributes: what memory an address is in, on which device, and
 * the allocation holding it, in one cuPointerGetAttributes query (which,
 * unlike cuPointerGetAttribute, answers for memory CUDA does not know). */
#include <string.h>

#include "base/error.h"
#include "runtime/device.h"

uk_status uk_pointer_info_get(uint64_t ptr, uk_pointer_info *out) {
  uk__error_clear();
  if (!out) return uk__errorf(UK_ERR_INVALID, "uk_pointer_info_get: out is NULL");
  uk_status st = uk__cu_load();
  if (st != UK_OK || (st = uk__cu_need(cuPointerGetAttributes)) != UK_OK) return st;
  CUpointer_attribute which[] = {CU_POINTER_ATTRIBUTE_CONTEXT,          CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                 CU_POINTER_ATTRIBUTE_DEVICE_POINTER,   CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                 CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,   CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                 CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  CUcontext context = NULL;
  unsigned type = 0; /* CUmemorytype; 0 for unregistered memory */
  CUdeviceptr devptr = 0, start = 0;
  unsigned managed = 0;
  int ordinal = -1;
  size_t size = 0;
  void *data[] = {&context, &type, &devptr, &managed, &ordinal, &start, &size};
  st = uk__cu_check(uk__cu.cuPointerGetAttributes((unsigned)(sizeof which / sizeof which[0]), which, data,
                                                  (CUdeviceptr)ptr),
                    "cuPointerGetAttributes");
  if (st != UK_OK) return st;
  uk_pointer_info info;
  memset(&info, 0, sizeof info);
  info.type = managed                          ? UK_MEMORY_MANAGED
              : type == CU_MEMORYTYPE_HOST     ? UK_MEMORY_HOST
              : type == CU_MEMORYTYPE_DEVICE   ? UK_MEMORY_DEVICE
              : type == CU_MEMORYTYPE_UNIFIED  ? UK_MEMORY_MANAGED
                                               : UK_MEMORY_UNREGISTERED;
  info.device = info.type == UK_MEMORY_UNREGISTERED || ordinal < 0 ? -1 : ordinal;
  if (info.type != UK_MEMORY_UNREGISTERED) {
    info.context = context;
    info.device_pointer = (uint64_t)devptr;
    info.range_start = (uint64_t)start;
    info.range_bytes = size;
  }
  *out = info;
  return UK_OK;
}
