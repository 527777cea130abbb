/*
 * ukern/dlpack.h — DLPack interop, for array libraries that exchange arrays
 * as DLTensor / DLManagedTensor (Debian: libdlpack-dev). Include it after or
 * instead of ukern.h; it needs <dlpack/dlpack.h> on the include path.
 *
 * dtype mapping (lanes must be 1):
 *   bool        kDLBool 8 (DLPack >= 0.8); also read: kDLUInt 1
 *   int8..64    kDLInt 8..64          uint8..64   kDLUInt 8..64
 *   float16/32/64  kDLFloat 16/32/64  bfloat16    kDLBfloat 16
 *   complex64   kDLComplex 64         complex128  kDLComplex 128
 */
#ifndef UKERN_DLPACK_H
#define UKERN_DLPACK_H

#include <dlpack/dlpack.h>

#include "ukern/ukern.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The DLPack type of a dtype. UK_ERR_TYPE for an invalid dtype. */
UK_API uk_status uk_dtype_to_dlpack(uk_dtype t, DLDataType *out);
/* The dtype of a DLPack type. UK_ERR_TYPE (naming code, bits and lanes) for
 * one ukern has no dtype for, vectors (lanes != 1) included. */
UK_API uk_status uk_dtype_from_dlpack(DLDataType t, uk_dtype *out);

/* Fills a descriptor that views t's memory (nothing is copied or owned):
 * data = t->data + t->byte_offset, strides converted from elements to bytes
 * (NULL strides: C-contiguous), device = t->device.device_id.
 * Managed memory (kDLCUDAManaged, e.g. from uk_managed_alloc) is taken
 * like device memory, with device = t->device.device_id.
 * Errors: UK_ERR_INVALID for a NULL argument, a device other than kDLCUDA
 * or kDLCUDAManaged (host and pinned-host memory are refused, naming the
 * device type), ndim outside 0..UK_MAX_NDIM, a negative dimension, or a NULL data
 * pointer with elements; UK_ERR_TYPE for an unsupported dtype. */
UK_API uk_status uk_array_from_dlpack(const DLTensor *t, uk_array *out);

/* Hands out an array that ukern allocated with ctx's allocator (uk_array_alloc,
 * or an output a call allocated) as a DLManagedTensor that owns it: its
 * deleter frees the memory through ctx's allocator (on the NULL stream) and
 * then the tensor itself. On success *a is cleared (data = 0): the tensor is
 * now the only owner. ctx must outlive the tensor. Strides are exported in
 * elements (UK_ERR_INVALID when a byte stride is not a multiple of the item
 * size). */
UK_API uk_status uk_array_to_dlpack(uk_context *ctx, uk_array *a, DLManagedTensor **out);

#ifdef __cplusplus
}
#endif

#endif /* UKERN_DLPACK_H */
