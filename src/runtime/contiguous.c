/* Copies of strided views (any strides: zero, negative, overlapping) into
 * C-contiguous memory, on the device or on the host.
 *
 * A contiguous view is one copy. Anything else is gathered on the device by
 * an elementwise "y = x" kernel that the context keeps (made at first use,
 * one specialisation per dtype and layout like any elementwise kernel). */
#include <string.h>

#include "base/error.h"
#include "runtime/context.h"

/* The kernel holds no reference to its context, or the context could never
 * go: the last uk__context_release destroys it, and the kernel's own
 * release then finds the count at zero and does nothing. */
static void destroy_kernel(void *k) { uk_elementwise_destroy(k); }

static uk_status copy_kernel(uk_context *ctx, uk_elementwise **out) {
  uk_elementwise *k = uk__held_get(&ctx->copy_kernel);
  if (k) {
    *out = k;
    return UK_OK;
  }
  uk_status st = uk_elementwise_create(
      ctx,
      &(uk_elementwise_spec){
          .in_params = "T x", .out_params = "T y", .operation = "y = x", .name = "uk_copy_contiguous"},
      &k);
  if (st != UK_OK) return st;
  uk__context_release(ctx);
  void *held = NULL;
  if (!uk__held_put(&ctx->copy_kernel, k, destroy_kernel, &held)) {
    uk__context_retain(ctx); /* another thread's kernel won: this one goes the normal way */
    uk_elementwise_destroy(k);
  }
  *out = held;
  return UK_OK;
}

static int c_contiguous(const uk_array *a) {
  int64_t want = (int64_t)uk_dtype_size(a->dtype);
  for (int d = a->ndim - 1; d >= 0; d--) {
    if (a->shape[d] == 0) return 1;
    if (a->shape[d] != 1 && a->strides[d] != want) return 0;
    want *= a->shape[d];
  }
  return 1;
}

static uk_status check_view(const char *api, const uk_array *a) {
  if (!uk_dtype_size(a->dtype)) return uk__errorf(UK_ERR_INVALID, "%s: src has an invalid dtype %d", api, (int)a->dtype);
  if (a->ndim < 0 || a->ndim > UK_MAX_NDIM)
    return uk__errorf(UK_ERR_INVALID, "%s: src.ndim %d is outside 0..%d", api, a->ndim, UK_MAX_NDIM);
  for (int d = 0; d < a->ndim; d++)
    if (a->shape[d] < 0) return uk__errorf(UK_ERR_INVALID, "%s: src.shape[%d] is negative", api, d);
  return UK_OK;
}

uk_status uk_array_copy_contiguous(uk_context *ctx, const uk_array *src, uk_array *dst, void *stream) {
  uk__error_clear();
  static const char api[] = "uk_array_copy_contiguous";
  if (!ctx || !src || !dst)
    return uk__errorf(UK_ERR_INVALID, "%s: %s is NULL", api, !ctx ? "ctx" : !src ? "src" : "dst");
  uk_status st = check_view(api, src);
  if (st != UK_OK) return st;
  if (dst->data) {
    int same = dst->dtype == src->dtype && dst->ndim == src->ndim;
    for (int d = 0; same && d < src->ndim; d++) same = dst->shape[d] == src->shape[d];
    if (!same) return uk__errorf(UK_ERR_INVALID, "%s: dst must have src's dtype and shape", api);
    if (!c_contiguous(dst)) return uk__errorf(UK_ERR_INVALID, "%s: dst is not C-contiguous", api);
    int64_t n = uk_array_size(src);
    if (c_contiguous(src))
      return n ? uk_memcpy_dtod_async(dst->data, src->data, (size_t)n * uk_dtype_size(src->dtype), stream) : UK_OK;
  }
  uk_elementwise *k;
  if ((st = copy_kernel(ctx, &k)) != UK_OK) return st;
  uk_array out;
  if (dst->data) out = *dst;
  else memset(&out, 0, sizeof out);
  uk_arg in = uk_arg_array(src);
  uk_launch l;
  memset(&l, 0, sizeof l);
  l.stream = stream;
  if ((st = uk_elementwise_call(k, &in, 1, &out, 1, &l)) != UK_OK) return st;
  if (!dst->data) *dst = out;
  return UK_OK;
}

uk_status uk_array_to_host(uk_context *ctx, const uk_array *src, void *host, size_t bytes, void *stream) {
  uk__error_clear();
  static const char api[] = "uk_array_to_host";
  if (!ctx || !src || !host)
    return uk__errorf(UK_ERR_INVALID, "%s: %s is NULL", api, !ctx ? "ctx" : !src ? "src" : "host");
  uk_status st = check_view(api, src);
  if (st != UK_OK) return st;
  int64_t n = uk_array_size(src);
  size_t need = (size_t)n * uk_dtype_size(src->dtype);
  if (need > bytes)
    return uk__errorf(UK_ERR_INVALID, "%s: the array has %zu bytes but host holds %zu", api, need, bytes);
  if (!n) return UK_OK;
  uk_array tmp;
  memset(&tmp, 0, sizeof tmp);
  const uk_array *from = src;
  if (!c_contiguous(src)) {
    if ((st = uk_array_copy_contiguous(ctx, src, &tmp, stream)) != UK_OK) return st;
    from = &tmp;
  }
  if ((st = uk_memcpy_dtoh_async(host, from->data, need, stream)) == UK_OK) st = uk_stream_synchronize(stream);
  if (tmp.data) uk_array_free(ctx, &tmp, stream);
  return st;
}
