/* Loop shapes (shape.h): descriptor checks, broadcasting, merging, index width. */
#include "codegen/shape.h"

#include <stdio.h>
#include <string.h>

#include "base/error.h"

const char *uk__shape_str(int ndim, const int64_t *shape, char *buf, int size) {
  int n = snprintf(buf, (size_t)size, "(");
  for (int d = 0; d < ndim && n < size; d++)
    n += snprintf(buf + n, (size_t)(size - n), d ? ", %lld" : "%lld", (long long)shape[d]);
  if (n < size) snprintf(buf + n, (size_t)(size - n), ndim == 1 ? ",)" : ")");
  return buf;
}

uk_status uk__shape_check(const char *name, int ndim, const int64_t *shape, const int64_t *strides, int64_t itemsize,
                          int64_t *count) {
  /* Fast path (it runs per array per call): at most 2 axes with extents
   * below 2^29 and strides within +-2^31, items of at most 16 bytes, make
   * products and sums far below 2^63, so only the signs need a look. */
  if (ndim >= 0 && ndim <= 2 && itemsize > 0 && itemsize <= 16) {
    uint64_t big = 0, n = 1;
    for (int d = 0; d < ndim; d++) {
      big |= (uint64_t)shape[d] >> 29 | ((uint64_t)strides[d] + ((uint64_t)1 << 31)) >> 32;
      n *= (uint64_t)shape[d];
    }
    if (!big) {
      if (count) *count = (int64_t)n;
      return UK_OK;
    }
  }
  if (ndim < 0 || ndim > UK_MAX_NDIM)
    return uk__errorf(UK_ERR_SHAPE, "'%s' has ndim %d (must be 0..%d)", name, ndim, UK_MAX_NDIM);
  int64_t n = 1;
  int overflow = 0, empty = 0;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] < 0)
      return uk__errorf(UK_ERR_SHAPE, "'%s' has a negative extent %lld on axis %d", name, (long long)shape[d], d);
    empty |= shape[d] == 0;
    overflow |= __builtin_mul_overflow(n, shape[d], &n);
  }
  /* An empty array addresses nothing (a wrapped product of 0 is not empty). */
  if (empty) {
    if (count) *count = 0;
    return UK_OK;
  }
  if (count) *count = n;
  int64_t bytes;
  if (overflow || __builtin_mul_overflow(n, itemsize, &bytes)) {
    char b[200];
    return uk__errorf(UK_ERR_SHAPE, "'%s' has shape %s: its element count or byte size overflows a 64-bit integer",
                      name, uk__shape_str(ndim, shape, b, sizeof b));
  }
  /* The farthest byte reached in each direction from the base. */
  int64_t reach[2] = {itemsize, 0};
  for (int d = 0; d < ndim; d++) {
    int64_t s = strides[d], ext;
    int neg = s < 0;
    if (s == INT64_MIN || __builtin_mul_overflow(neg ? -s : s, shape[d] - 1, &ext) ||
        __builtin_add_overflow(reach[neg], ext, &reach[neg]))
      return uk__errorf(UK_ERR_SHAPE, "'%s': stride %lld times extent %lld on axis %d overflows a 64-bit byte offset",
                        name, (long long)s, (long long)shape[d], d);
  }
  return UK_OK;
}

/* The loop of operands that broadcast to `shape` (ndim axes, extents
 * already checked non-negative). */
static uk_status fill_loop(int nops, const uk_operand_view *ops, const int64_t *shape, int ndim, uk_loop *loop) {
  loop->ndim = ndim;
  loop->nops = nops;
  loop->size = 1;
  int overflow = 0, empty = 0;
  for (int d = 0; d < ndim; d++) {
    loop->shape[d] = shape[d];
    empty |= shape[d] == 0;
    overflow |= __builtin_mul_overflow(loop->size, shape[d], &loop->size);
  }
  /* Each operand was range-checked, but broadcasting multiplies their extents. */
  int64_t bytes;
  if (empty) loop->size = 0;
  else if (overflow || __builtin_mul_overflow(loop->size, (int64_t)16, &bytes)) {
    char b[200];
    return uk__errorf(UK_ERR_SHAPE, "the broadcast shape %s has too many elements for 64-bit byte offsets",
                      uk__shape_str(ndim, shape, b, sizeof b));
  }
  for (int k = 0; k < nops; k++) {
    int off = ndim - ops[k].ndim;
    for (int d = 0; d < ndim; d++) {
      int od = d - off;
      loop->strides[k][d] = od < 0 || ops[k].shape[od] == 1 ? 0 : ops[k].strides[od];
    }
  }
  return UK_OK;
}

uk_status uk__shape_broadcast(int nops, const uk_operand_view *ops, uk_loop *loop) {
  if (nops > UK_MAX_ARRAY_OPERANDS)
    return uk__errorf(UK_ERR_INVALID, "too many non-raw array operands (%d; UK_MAX_ARRAY_OPERANDS is %d)", nops,
                      UK_MAX_ARRAY_OPERANDS);
  int ndim = 0, same = nops > 0; /* same: every operand has the first one's shape */
  for (int k = 0; k < nops; k++) {
    if (ops[k].ndim < 0 || ops[k].ndim > UK_MAX_NDIM)
      return uk__errorf(UK_ERR_SHAPE, "'%s' has ndim %d (must be 0..%d)", ops[k].name, ops[k].ndim, UK_MAX_NDIM);
    if (ops[k].ndim > ndim) ndim = ops[k].ndim;
    same &= ops[k].ndim == ops[0].ndim;
    for (int d = 0; same && d < ops[k].ndim; d++) same = ops[k].shape[d] == ops[0].shape[d];
  }
  /* Nothing broadcasts (the common call): the loop is the first operand's
   * shape, with no owner to track for messages. */
  for (int d = 0; same && d < ndim; d++)
    if (ops[0].shape[d] < 0)
      return uk__errorf(UK_ERR_SHAPE, "'%s' has a negative extent %lld on axis %d", ops[0].name,
                        (long long)ops[0].shape[d], d);
  if (same) return fill_loop(nops, ops, ops[0].shape, ndim, loop);
  int64_t shape[UK_MAX_NDIM];
  int owner[UK_MAX_NDIM]; /* which operand fixed each axis's extent (for messages) */
  for (int d = 0; d < ndim; d++) {
    shape[d] = 1;
    owner[d] = -1;
  }
  for (int k = 0; k < nops; k++) {
    int off = ndim - ops[k].ndim;
    for (int d = 0; d < ops[k].ndim; d++) {
      int64_t e = ops[k].shape[d];
      if (e < 0) return uk__errorf(UK_ERR_SHAPE, "'%s' has a negative extent %lld on axis %d", ops[k].name, (long long)e, d);
      int64_t *s = &shape[off + d];
      if (e == *s) {
        if (owner[off + d] < 0) owner[off + d] = k;
      } else if (*s == 1) {
        *s = e;
        owner[off + d] = k;
      } else if (e != 1) {
        char a[160], b[160];
        const uk_operand_view *o = &ops[owner[off + d]];
        return uk__errorf(UK_ERR_SHAPE,
                          "shapes do not broadcast: '%s' has shape %s and '%s' has shape %s",
                          o->name, uk__shape_str(o->ndim, o->shape, a, sizeof a), ops[k].name,
                          uk__shape_str(ops[k].ndim, ops[k].shape, b, sizeof b));
      }
    }
  }
  return fill_loop(nops, ops, shape, ndim, loop);
}

void uk__shape_merge(uk_loop *loop) {
  if (loop->size == 0) { /* nothing runs: one empty axis */
    loop->ndim = 1;
    loop->shape[0] = 0;
    for (int k = 0; k < loop->nops; k++) loop->strides[k][0] = 0;
    return;
  }
  int n = 0;
  for (int d = 0; d < loop->ndim; d++) {
    if (loop->shape[d] == 1) continue; /* size-1 axes never move an index */
    if (n > 0) {
      /* The merged extent fits: the product of all extents is the size,
       * except in a part split from an empty loop (uk__red_split), whose
       * size saturates. */
      int64_t merged;
      int mergeable = !__builtin_mul_overflow(loop->shape[n - 1], loop->shape[d], &merged);
      for (int k = 0; k < loop->nops && mergeable; k++) {
        int64_t outer;
        mergeable = !__builtin_mul_overflow(loop->strides[k][d], loop->shape[d], &outer) &&
                    loop->strides[k][n - 1] == outer;
      }
      if (mergeable) {
        loop->shape[n - 1] = merged;
        for (int k = 0; k < loop->nops; k++) loop->strides[k][n - 1] = loop->strides[k][d];
        continue;
      }
    }
    loop->shape[n] = loop->shape[d];
    for (int k = 0; k < loop->nops; k++) loop->strides[k][n] = loop->strides[k][d];
    n++;
  }
  loop->ndim = n;
}

int uk__shape_fits_int32(const uk_loop *loop) {
  const int64_t lim = INT32_MAX;
  if (loop->size > lim) return 0;
  for (int k = 0; k < loop->nops; k++) {
    int64_t pos = 0, neg = 0;
    for (int d = 0; d < loop->ndim; d++) {
      int64_t s = loop->strides[k][d], e = loop->shape[d] - 1;
      if (e <= 0) continue;
      /* |s| as unsigned: -INT64_MIN does not exist in int64 */
      uint64_t m = s < 0 ? 0 - (uint64_t)s : (uint64_t)s;
      uint64_t me; /* m * e > lim, multiplied (a division costs tens of cycles, and this runs per call) */
      if (__builtin_mul_overflow(m, (uint64_t)e, &me) || me > (uint64_t)lim) return 0;
      if (s > 0) pos += (int64_t)me;
      else neg += (int64_t)me;
      if (pos > lim || neg > lim) return 0;
    }
  }
  return 1;
}

int uk__shape_is_contiguous(const uk_loop *loop, const int64_t *itemsizes) {
  if (loop->ndim > 1) return 0;
  if (loop->ndim == 0) return 1;
  for (int k = 0; k < loop->nops; k++)
    if (loop->strides[k][0] != itemsizes[k] && loop->strides[k][0] != 0) return 0;
  return 1;
}
