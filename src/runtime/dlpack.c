/* DLPack interop: DLTensor -> uk_array views, and ukern-allocated arrays
 * handed out as DLManagedTensor whose deleter frees through the context. */
#include "ukern/dlpack.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "runtime/context.h"

/* DLPack 0.8 added kDLBool; older headers spell bool as a 1-bit uint. */
#if defined(DLPACK_MAJOR_VERSION) || (defined(DLPACK_VERSION) && DLPACK_VERSION >= 80)
#define UK_DL_HAS_BOOL 1
#endif

static const struct {
  uk_dtype t;
  uint8_t code, bits;
} table[] = {
#ifdef UK_DL_HAS_BOOL
    {UK_BOOL, kDLBool, 8},
#endif
    {UK_BOOL, kDLUInt, 1},
    {UK_INT8, kDLInt, 8},         {UK_INT16, kDLInt, 16},      {UK_INT32, kDLInt, 32},
    {UK_INT64, kDLInt, 64},       {UK_UINT8, kDLUInt, 8},      {UK_UINT16, kDLUInt, 16},
    {UK_UINT32, kDLUInt, 32},     {UK_UINT64, kDLUInt, 64},    {UK_FLOAT16, kDLFloat, 16},
    {UK_BFLOAT16, kDLBfloat, 16}, {UK_FLOAT32, kDLFloat, 32},  {UK_FLOAT64, kDLFloat, 64},
    {UK_COMPLEX64, kDLComplex, 64}, {UK_COMPLEX128, kDLComplex, 128},
};

uk_status uk_dtype_to_dlpack(uk_dtype t, DLDataType *out) {
  uk__error_clear();
  if (!out) return uk__errorf(UK_ERR_INVALID, "uk_dtype_to_dlpack: out is NULL");
  for (size_t j = 0; j < sizeof table / sizeof *table; j++)
    if (table[j].t == t) { /* the first row of a dtype is the one exported */
      out->code = table[j].code;
      out->bits = table[j].bits;
      out->lanes = 1;
      return UK_OK;
    }
  return uk__errorf(UK_ERR_TYPE, "uk_dtype_to_dlpack: invalid dtype %d", (int)t);
}

uk_status uk_dtype_from_dlpack(DLDataType t, uk_dtype *out) {
  uk__error_clear();
  if (!out) return uk__errorf(UK_ERR_INVALID, "uk_dtype_from_dlpack: out is NULL");
  if (t.lanes != 1)
    return uk__errorf(UK_ERR_TYPE, "DLPack dtype (code %u, bits %u, lanes %u): vector types (lanes != 1) are not supported",
                      t.code, t.bits, t.lanes);
  for (size_t j = 0; j < sizeof table / sizeof *table; j++)
    if (table[j].code == t.code && table[j].bits == t.bits) {
      *out = table[j].t;
      return UK_OK;
    }
  return uk__errorf(UK_ERR_TYPE, "DLPack dtype (code %u, bits %u, lanes 1) has no ukern dtype", t.code, t.bits);
}

uk_status uk_array_from_dlpack(const DLTensor *t, uk_array *out) {
  uk__error_clear();
  if (!t || !out) return uk__errorf(UK_ERR_INVALID, "uk_array_from_dlpack: NULL argument");
  /* Managed memory is addressable from the device like device memory. */
  if (t->device.device_type != kDLCUDA && t->device.device_type != kDLCUDAManaged)
    return uk__errorf(UK_ERR_INVALID,
                      "uk_array_from_dlpack: the tensor is on DLPack device type %d, not kDLCUDA (%d) or "
                      "kDLCUDAManaged (%d): ukern kernels read device memory only",
                      (int)t->device.device_type, (int)kDLCUDA, (int)kDLCUDAManaged);
  if (t->ndim < 0 || t->ndim > UK_MAX_NDIM)
    return uk__errorf(UK_ERR_INVALID, "uk_array_from_dlpack: ndim %d is outside 0..%d", t->ndim, UK_MAX_NDIM);
  if (t->ndim > 0 && !t->shape) return uk__errorf(UK_ERR_INVALID, "uk_array_from_dlpack: shape is NULL");
  uk_dtype dt;
  uk_status st = uk_dtype_from_dlpack(t->dtype, &dt);
  if (st != UK_OK) return st;
  uk_array a;
  memset(&a, 0, sizeof a);
  /* NULL strides mean C-contiguous: uk_array_init computes them. */
  if ((st = uk_array_init(&a, 0, dt, t->ndim, t->shape)) != UK_OK) return st;
  int64_t item = (int64_t)uk_dtype_size(dt);
  if (t->strides)
    for (int d = 0; d < t->ndim; d++) {
      if (t->strides[d] > INT64_MAX / item || t->strides[d] < INT64_MIN / item)
        return uk__errorf(UK_ERR_INVALID, "uk_array_from_dlpack: strides[%d] (%lld elements) overflows in bytes", d,
                          (long long)t->strides[d]);
      a.strides[d] = t->strides[d] * item;
    }
  if (!t->data && uk_array_size(&a) > 0)
    return uk__errorf(UK_ERR_INVALID, "uk_array_from_dlpack: data is NULL but the tensor has elements");
  a.data = (uint64_t)(uintptr_t)t->data + t->byte_offset;
  a.device = t->device.device_id;
  *out = a;
  return UK_OK;
}

/* The managed tensor and everything it points to, in one allocation. */
typedef struct owned {
  DLManagedTensor mt;
  int64_t shape[UK_MAX_NDIM], strides[UK_MAX_NDIM];
  uk_context *ctx;
  uk_array a;
} owned;

static void deleter(DLManagedTensor *self) {
  if (!self) return;
  owned *o = self->manager_ctx;
  uk_array_free(o->ctx, &o->a, NULL);
  uk__context_release(o->ctx); /* the tensor kept the context (and its allocator) alive */
  free(o);
}

uk_status uk_array_to_dlpack(uk_context *ctx, uk_array *a, DLManagedTensor **out) {
  uk__error_clear();
  if (!ctx || !a || !out) return uk__errorf(UK_ERR_INVALID, "uk_array_to_dlpack: NULL argument");
  if (a->ndim < 0 || a->ndim > UK_MAX_NDIM)
    return uk__errorf(UK_ERR_INVALID, "uk_array_to_dlpack: ndim %d is outside 0..%d", a->ndim, UK_MAX_NDIM);
  DLDataType dt;
  uk_status st = uk_dtype_to_dlpack(a->dtype, &dt);
  if (st != UK_OK) return st;
  if (!a->data && uk_array_size(a) > 0)
    return uk__errorf(UK_ERR_INVALID, "uk_array_to_dlpack: the array has no data (data is 0)");
  int64_t item = (int64_t)uk_dtype_size(a->dtype);
  for (int d = 0; d < a->ndim; d++)
    if (a->strides[d] % item != 0)
      return uk__errorf(UK_ERR_INVALID,
                        "uk_array_to_dlpack: strides[%d] is %lld bytes, not a multiple of the item size %lld", d,
                        (long long)a->strides[d], (long long)item);
  owned *o = calloc(1, sizeof *o);
  if (!o) return uk__errorf(UK_ERR_NOMEM, "out of memory");
  o->ctx = ctx;
  uk__context_retain(ctx);
  o->a = *a;
  for (int d = 0; d < a->ndim; d++) {
    o->shape[d] = a->shape[d];
    o->strides[d] = a->strides[d] / item;
  }
  DLTensor *t = &o->mt.dl_tensor;
  t->data = (void *)(uintptr_t)a->data;
  t->device.device_type = kDLCUDA;
  t->device.device_id = a->device;
  t->ndim = a->ndim;
  t->dtype = dt;
  t->shape = o->shape;
  t->strides = o->strides;
  t->byte_offset = 0;
  o->mt.manager_ctx = o;
  o->mt.deleter = deleter;
  a->data = 0;
  *out = &o->mt;
  return UK_OK;
}
