/* Reduction planning (red_plan.h): axes, kept and reduced loops, the strategy and its grid. */
#include "codegen/red_plan.h"

#include <stdio.h>
#include <string.h>

#include "base/error.h"

static const char *const suffixes[UK_RED_NKERNELS] = {"_g", "_g", "_g", "_cols", "_p"};

const char *uk__red_kernel_suffix(int id) { return id >= 0 && id < UK_RED_NKERNELS ? suffixes[id] : ""; }

int uk__red_kernel_group(int id) {
  return id == UK_RED_COLS ? UK_RED_GROUP_COLS : id == UK_RED_PACK ? UK_RED_GROUP_PACK : UK_RED_GROUP_G;
}

uk_status uk__red_axes(const char *kernel, int ndim, const uk_launch *l, uint8_t reduced[UK_MAX_NDIM]) {
  memset(reduced, 0, UK_MAX_NDIM);
  int n = l ? l->num_axes : 0;
  if (n < 0) return uk__errorf(UK_ERR_INVALID, "%s: num_axes %d is negative", kernel, n);
  if (n > 0 && !l->axes) return uk__errorf(UK_ERR_INVALID, "%s: num_axes is %d but axes is NULL", kernel, n);
  if (n > 0 && l->reduce_none)
    return uk__errorf(UK_ERR_INVALID, "%s: reduce_none is set but %d axes are given (use one or the other)",
                      kernel, n);
  if (n == 0) {
    int all = !(l && l->reduce_none);
    for (int d = 0; d < ndim; d++) reduced[d] = (uint8_t)all;
    return UK_OK;
  }
  for (int j = 0; j < n; j++) {
    int a = l->axes[j], d = a < 0 ? a + ndim : a;
    if (d < 0 || d >= ndim)
      return uk__errorf(UK_ERR_SHAPE, "%s: axis %d is out of bounds for an input of ndim %d", kernel, a, ndim);
    if (reduced[d])
      return uk__errorf(UK_ERR_SHAPE, "%s: axis %d is repeated in axes (axis %d): duplicate value in 'axis'", kernel, a, d);
    reduced[d] = 1;
  }
  return UK_OK;
}

void uk__red_result_shape(int ndim, const int64_t *shape, const uint8_t *reduced, int keepdims, int *out_ndim,
                          int64_t *out_shape) {
  int n = 0;
  for (int d = 0; d < ndim; d++) {
    if (!reduced[d]) out_shape[n++] = shape[d];
    else if (keepdims) out_shape[n++] = 1;
  }
  *out_ndim = n;
}

/* *size times e, saturating at INT64_MAX: in an empty loop (an extent of 0
 * in the other part) one part's extents may multiply past int64, and then
 * nothing runs anyway. */
static void times(int64_t *size, int64_t e) {
  if (__builtin_mul_overflow(*size, e, size)) *size = INT64_MAX;
}

void uk__red_split(const uk_loop *L, const uint8_t *reduced, int keepdims, int nouts,
                   const int64_t (*ostrides)[UK_MAX_NDIM], uk_red_loops *out) {
  /* No clearing (it ran per call): every entry below each loop's ndim and
   * nops is written, and nothing reads past them. */
  uk_loop *K = &out->kept, *R = &out->red;
  out->nin = L->nops;
  K->nops = L->nops + nouts;
  R->nops = L->nops;
  K->ndim = R->ndim = 0;
  K->size = R->size = 1;
  for (int d = 0, od = 0; d < L->ndim; d++) {
    if (reduced[d]) {
      int r = R->ndim++;
      R->shape[r] = L->shape[d];
      times(&R->size, L->shape[d]);
      for (int k = 0; k < L->nops; k++) R->strides[k][r] = L->strides[k][d];
      if (keepdims) od++;
      continue;
    }
    int c = K->ndim++;
    K->shape[c] = L->shape[d];
    times(&K->size, L->shape[d]);
    for (int k = 0; k < L->nops; k++) K->strides[k][c] = L->strides[k][d];
    for (int j = 0; j < nouts; j++) K->strides[L->nops + j][c] = L->shape[d] == 1 ? 0 : ostrides[j][od];
    od++;
  }
  out->nout = K->size;
  out->nred = R->size;
  /* Offsets are kept + reduced parts: both must fit, and so must their sum
   * (checked on the unsplit loop). */
  out->index64 = !(uk__shape_fits_int32(L) && uk__shape_fits_int32(K) && K->size <= INT32_MAX &&
                   R->size <= INT32_MAX && K->size * (R->size ? R->size : 1) <= INT32_MAX);
  uk__shape_merge(K);
  uk__shape_merge(R);
  if (out->nout == 0) K->ndim = 1;
  if (out->nred == 0) { /* an empty reduced range: no reduced axis to walk */
    R->ndim = 0;
  }
}

int uk__red_vec(int64_t max_itemsize) {
  return max_itemsize > 0 && max_itemsize < 16 ? (int)(16 / max_itemsize) : 1;
}

int uk__red_pack_unroll(int vec) { return vec >= 8 ? 1 : 2; }

/* Rounded-up a / b (a >= 0, b > 0) without the a + b - 1 that could overflow. */
static int64_t cdiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/* Splits each output's range so that about `target` blocks run, each piece
 * holding at least `min_piece` elements, pieces a multiple of `align`. */
static void split(uk_red_strategy *s, int64_t nred, int64_t target, int64_t min_piece, int64_t align) {
  s->nsplit = 1;
  s->chunk = nred > 0 ? nred : 1;
  if (s->grid_x >= target || s->grid_x == 0 || nred < 2 * min_piece) return; /* 0: no outputs, nothing runs */
  int64_t n = cdiv(target, s->grid_x), most = nred / min_piece;
  if (n > most) n = most;
  if (n > 65535) n = 65535;
  if (n < 2) return;
  int64_t chunk = cdiv(cdiv(nred, n), align) * align;
  s->chunk = chunk;
  s->nsplit = cdiv(nred, chunk);
}

/* COLS: splits so that the blocks fill whole waves of `resident` blocks
 * (a last, partial wave runs alone at a fraction of the bandwidth): the
 * most pieces that fit in one wave, else in 2, 3 or 4, using at least 85%
 * of the waves they occupy. */
static void split_waves(uk_red_strategy *s, int64_t nred, int64_t resident, int64_t min_piece, int64_t align) {
  s->nsplit = 1;
  s->chunk = nred > 0 ? nred : 1;
  int64_t gx = s->grid_x, most = nred / min_piece, n = 0;
  if (gx >= 2 * resident || gx == 0 || most < 2) return;
  for (int64_t w = 1; w <= 4 && !n; w++) {
    int64_t c = w * resident / gx;
    if (c >= 1 && c * gx * 100 >= 85 * w * resident) n = c;
  }
  if (!n) n = cdiv(2 * resident, gx); /* nothing fits well: about two waves */
  if (n > most) n = most;
  if (n > 65535) n = 65535;
  if (n < 2) return;
  int64_t chunk = cdiv(cdiv(nred, n), align) * align;
  s->chunk = chunk;
  s->nsplit = cdiv(nred, chunk);
}

/* PACK: rows of exactly 2 contiguous elements, back to back along the last
 * kept axis in whole vectors, every kept stride otherwise 16-byte aligned. */
static int pack_ok(const uk_red_loops *R, const int64_t *itemsize, int aligned, int vec, int red_contig) {
  const uk_loop *K = &R->kept;
  if (!red_contig || R->nred != 2 || vec < 2 || !aligned || K->ndim < 1 || K->shape[K->ndim - 1] % (vec / 2))
    return 0;
  for (int k = 0; k < R->nin; k++) {
    if (K->strides[k][K->ndim - 1] != 2 * itemsize[k]) return 0;
    for (int d = 0; d < K->ndim - 1; d++)
      if (K->strides[k][d] % 16) return 0;
  }
  return 1;
}

/* Which axes the loop inputs walk contiguously: the reduced range (one
 * axis of itemsize strides) and the last kept axis (COLS walks it). */
static void contiguity(const uk_red_loops *R, const int64_t *itemsize, int *red_contig, int *cols) {
  const uk_loop *K = &R->kept, *L = &R->red;
  int rc = L->ndim == 1, c = K->ndim >= 1 && R->nred > 0;
  for (int k = 0; k < R->nin; k++) {
    rc &= L->ndim == 1 && L->strides[k][0] == itemsize[k];
    c &= K->ndim >= 1 && K->strides[k][K->ndim - 1] == itemsize[k];
  }
  *red_contig = rc;
  *cols = c;
}

void uk__red_choose(const uk_red_loops *R, const int64_t *itemsize, int aligned, int vec, int sms,
                    uk_red_strategy *s) {
  memset(s, 0, sizeof *s);
  int64_t nout = R->nout, nred = R->nred;
  const uk_loop *K = &R->kept, *L = &R->red;
  int red_contig, cols;
  contiguity(R, itemsize, &red_contig, &cols);
  /* Vector loads: whole aligned rows along a contiguous reduced axis. */
  int vec_ok = red_contig && vec > 1 && aligned && nred >= vec;
  for (int k = 0; vec_ok && k < R->nin; k++)
    for (int d = 0; d < K->ndim; d++)
      if (K->strides[k][d] % 16) vec_ok = 0;
  int64_t resident = (int64_t)sms * (2048 / UK_RED_BLOCK);
  if (!red_contig && cols) {
    /* Reducing a strided outer axis: threads run along the contiguous output
     * axis, with vector loads of `vec` adjacent outputs where every row
     * holds whole aligned vectors; short ranges take one thread per output. */
    int vc = vec > 1 && aligned && K->shape[K->ndim - 1] % vec == 0;
    for (int k = 0; vc && k < R->nin; k++) {
      for (int d = 0; d < K->ndim - 1; d++)
        if (K->strides[k][d] % 16) vc = 0;
      for (int d = 0; d < L->ndim; d++)
        if (L->strides[k][d] % 16) vc = 0;
    }
    s->kernel = UK_RED_COLS;
    s->vec = vc;
    s->by = nred <= 64 ? 1 : 8;
    s->slots = (int64_t)(UK_RED_BLOCK / s->by) * (vc ? vec : 1);
    s->grid_x = cdiv(nout, s->slots);
    split_waves(s, nred, resident, s->by == 1 ? 32 : 8 * 32, s->by);
    return;
  }
  if (pack_ok(R, itemsize, aligned, vec, red_contig)) {
    /* One-shot grid, as an elementwise kernel: no split (a grid-stride
     * loop only past 2^24 blocks). */
    int64_t per_block = (int64_t)UK_RED_BLOCK * uk__red_pack_unroll(vec), items = nout / (vec / 2);
    s->kernel = UK_RED_PACK;
    s->vec = 1;
    s->by = 1;
    s->slots = per_block * (vec / 2);
    s->grid_x = cdiv(items, per_block);
    if (s->grid_x > ((int64_t)1 << 24)) s->grid_x = (int64_t)1 << 24;
    s->nsplit = 1;
    s->chunk = nred;
    return;
  }
  int g;
  if (nred >= 1024 || (nred >= 256 && nout < resident)) {
    g = UK_RED_BLOCK;
    s->kernel = UK_RED_B;
    s->vec = vec_ok;
  } else if (nred > 16) {
    g = 8;
    s->kernel = UK_RED_G8;
    s->vec = vec_ok;
  } else {
    /* Short rows: a thread reduces a whole row, so no cycles go to
     * shuffles; neighbouring threads read neighbouring rows. */
    g = 1;
    s->kernel = UK_RED_T1;
    s->vec = vec_ok;
  }
  int64_t v = s->vec ? vec : 1;
  int64_t per_block = UK_RED_BLOCK / g, blocks = cdiv(nout, per_block), cap = resident * 4;
  s->slots = per_block;
  s->grid_x = blocks < cap ? blocks : cap;
  split(s, nred, resident, (int64_t)g * v * 16, (int64_t)g * v);
}

int uk__red_threads_per_output(const uk_red_strategy *s) {
  switch (s->kernel) {
  case UK_RED_T1: return 1;
  case UK_RED_G8: return 8;
  case UK_RED_B: return UK_RED_BLOCK;
  default: return s->by > 0 ? s->by : 1;
  }
}

int64_t uk__red_scratch_bytes(const uk_red_strategy *s, int64_t partial_size) {
  if (s->nsplit <= 1) return 0;
  return s->grid_x * s->nsplit * s->slots * partial_size;
}

const char *uk__red_describe(const uk_red_strategy *s, char *buf, int size) {
  static const char *const what[UK_RED_NKERNELS] = {"a thread per output", "8 threads per output",
                                                    "a block per output", "threads across outputs",
                                                    "rows of 2 packed in vectors"};
  const char *w = s->kernel >= 0 && s->kernel < UK_RED_NKERNELS ? what[s->kernel] : "?";
  int n = snprintf(buf, (size_t)size, "%s%s", w, s->vec ? ", vector loads" : "");
  if (s->kernel == UK_RED_COLS && n >= 0 && n < size)
    n += snprintf(buf + n, (size_t)(size - n), ", %d threads per output", s->by);
  if (n >= 0 && n < size) n += snprintf(buf + n, (size_t)(size - n), ", %lld blocks", (long long)s->grid_x);
  if (s->nsplit > 1 && n >= 0 && n < size)
    snprintf(buf + n, (size_t)(size - n), ", split %lld x %lld", (long long)s->nsplit, (long long)s->chunk);
  return buf;
}

/* The first two branches of uk__red_choose: the rest only size the grid
 * and pick among the kernels of group G. */
int uk__red_group(const uk_red_loops *R, const int64_t *itemsize, int aligned, int vec) {
  int red_contig, cols;
  contiguity(R, itemsize, &red_contig, &cols);
  if (!red_contig && cols) return UK_RED_GROUP_COLS;
  return pack_ok(R, itemsize, aligned, vec, red_contig) ? UK_RED_GROUP_PACK : UK_RED_GROUP_G;
}
