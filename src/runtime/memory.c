/* Array descriptors, the context's allocator and the argument
 * constructors (copies: copy.c). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "runtime/device.h"
#include "runtime/pool.h"

uk_status uk_array_init(uk_array *a, uint64_t data, uk_dtype dtype, int ndim, const int64_t *shape) {
  uk__error_clear();
  if (!a) return uk__errorf(UK_ERR_INVALID, "uk_array_init: a is NULL");
  size_t item = uk_dtype_size(dtype);
  if (!item) return uk__errorf(UK_ERR_INVALID, "uk_array_init: invalid dtype %d", (int)dtype);
  if (ndim < 0 || ndim > UK_MAX_NDIM)
    return uk__errorf(UK_ERR_INVALID, "uk_array_init: ndim %d is outside 0..%d", ndim, UK_MAX_NDIM);
  if (ndim > 0 && !shape) return uk__errorf(UK_ERR_INVALID, "uk_array_init: shape is NULL");
  uk_array r;
  memset(&r, 0, sizeof r);
  r.data = data;
  r.dtype = dtype;
  r.ndim = ndim;
  int64_t stride = (int64_t)item;
  int overflow = 0;
  for (int d = ndim - 1; d >= 0; d--) {
    if (shape[d] < 0)
      return uk__errorf(UK_ERR_INVALID, "uk_array_init: shape[%d] is negative (%lld)", d,
                        (long long)shape[d]);
    r.shape[d] = shape[d];
    r.strides[d] = stride;
    if (shape[d] > 0 && !overflow) {
      if (stride > INT64_MAX / shape[d]) overflow = 1;
      else stride *= shape[d];
    }
  }
  if (overflow) {
    /* Strides of a zero-size array never matter; otherwise this is real. */
    int empty = 0;
    for (int d = 0; d < ndim; d++) empty |= shape[d] == 0;
    if (!empty) return uk__errorf(UK_ERR_INVALID, "uk_array_init: the array is too large");
  }
  *a = r;
  return UK_OK;
}

int64_t uk_array_size(const uk_array *a) {
  if (!a) return 0;
  if (a->ndim < 0 || a->ndim > UK_MAX_NDIM) return -1;
  int64_t n = 1;
  int overflow = 0;
  for (int d = 0; d < a->ndim; d++) {
    if (a->shape[d] < 0) return -1;
    if (a->shape[d] == 0) return 0; /* empty, whatever the other extents multiply to */
    overflow |= __builtin_mul_overflow(n, a->shape[d], &n);
  }
  return overflow ? -1 : n;
}

uk_status uk__context_alloc(uk_context *ctx, size_t bytes, void *stream, uint64_t *dptr) {
  const uk_allocator *al = &ctx->opts.allocator;
  if (al->alloc) {
    uint64_t p = 0;
    if (al->alloc(al->user, bytes, stream, &p) != 0 || (!p && bytes))
      return uk__errorf(UK_ERR_NOMEM, "the context's allocator failed to allocate %zu bytes", bytes);
    *dptr = p;
    return UK_OK;
  }
  uk_status st = uk__cu_load();
  return st == UK_OK ? uk__pool_alloc(bytes, stream, dptr) : st;
}

void uk__context_free(uk_context *ctx, uint64_t dptr, void *stream) {
  if (!dptr) return;
  const uk_allocator *al = &ctx->opts.allocator;
  if (al->alloc) {
    if (al->free) al->free(al->user, dptr, stream);
    return;
  }
  if (uk__cu_load() == UK_OK) uk__pool_free(dptr, stream);
}

uk_status uk_array_alloc(uk_context *ctx, uk_dtype dtype, int ndim, const int64_t *shape,
                         int device, void *stream, uk_array *out) {
  uk__error_clear();
  if (!ctx || !out) return uk__errorf(UK_ERR_INVALID, "uk_array_alloc: NULL argument");
  uk_array a;
  uk_status st = uk_array_init(&a, 0, dtype, ndim, shape);
  if (st != UK_OK) return st;
  a.device = device;
  int64_t n = uk_array_size(&a);
  size_t item = uk_dtype_size(dtype);
  if (n < 0 || (n > 0 && (uint64_t)n > SIZE_MAX / item))
    return uk__errorf(UK_ERR_NOMEM, "uk_array_alloc: %lld elements do not fit in memory", (long long)n);
  size_t bytes = (size_t)n * item;
  if (bytes > 0) {
    int pushed = 0;
    if ((st = uk__device_enter(device, &pushed)) != UK_OK) return st;
    st = uk__context_alloc(ctx, bytes, stream, &a.data);
    uk__device_leave(pushed);
    if (st != UK_OK) return st;
  }
  *out = a;
  return UK_OK;
}

void uk_array_free(uk_context *ctx, uk_array *a, void *stream) {
  if (!ctx || !a || !a->data) return;
  int pushed = 0;
  if (uk__device_enter(a->device, &pushed) != UK_OK) return;
  uk__context_free(ctx, a->data, stream);
  uk__device_leave(pushed);
  a->data = 0;
}

/* ------------------------------------------------------------------------ */
/* Argument constructors                                                     */
/* ------------------------------------------------------------------------ */

uk_arg uk_arg_array(const uk_array *a) {
  uk_arg r;
  memset(&r, 0, sizeof r);
  r.kind = UK_ARG_ARRAY;
  r.v.array = a;
  return r;
}

uk_arg uk_arg_int(int64_t v) {
  uk_arg r;
  memset(&r, 0, sizeof r);
  r.kind = UK_ARG_INT;
  r.v.i = v;
  return r;
}

uk_arg uk_arg_float(double v) {
  uk_arg r;
  memset(&r, 0, sizeof r);
  r.kind = UK_ARG_FLOAT;
  r.v.f = v;
  return r;
}

uk_arg uk_arg_complex(double re, double im) {
  uk_arg r;
  memset(&r, 0, sizeof r);
  r.kind = UK_ARG_COMPLEX;
  r.v.c[0] = re;
  r.v.c[1] = im;
  return r;
}

uk_arg uk_arg_bool(int v) {
  uk_arg r;
  memset(&r, 0, sizeof r);
  r.kind = UK_ARG_BOOL;
  r.v.b = v != 0;
  return r;
}

uk_arg uk_arg_typed(uk_dtype t, const void *value) {
  uk_arg r;
  memset(&r, 0, sizeof r);
  r.kind = UK_ARG_TYPED;
  r.dtype = t;
  size_t n = uk_dtype_size(t);
  if (value && n <= sizeof r.v.bytes) memcpy(r.v.bytes, value, n);
  return r;
}

uk_arg uk_arg_texture(uint64_t texture_object) {
  uk_arg r;
  memset(&r, 0, sizeof r);
  r.kind = UK_ARG_TEXTURE;
  r.v.texture = texture_object;
  return r;
}
