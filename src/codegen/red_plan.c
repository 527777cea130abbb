/* Reduction planning (red_plan.h): axes, kept and reduced loops, the strategy and its grid. */
#include "codegen/red_plan.h"

#include <string.h>

#include "base/error.h"
#include "codegen/red_cost.h"

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

void uk__red_split(const uk_loop *L, const uint8_t *reduced, int keepdims, int nouts, const int64_t *const *ostrides,
                   uk_red_loops *out) {
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

/* Rounded-up a / b (a >= 0, b > 0) without the a + b - 1 that could overflow. */
static int64_t cdiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/* Splits each output's range into about n pieces of at least `min_piece`
 * elements, each a multiple of `align` (at most 65535: grid y). */
static void split_n(uk_red_strategy *s, int64_t nred, int64_t n, int64_t min_piece, int64_t align) {
  s->nsplit = 1;
  s->chunk = nred > 0 ? nred : 1;
  int64_t most = nred / (min_piece > 0 ? min_piece : 1);
  if (n > most) n = most;
  if (n > 65535) n = 65535;
  if (n < 2) return;
  s->chunk = cdiv(cdiv(nred, n), align) * align;
  s->nsplit = cdiv(nred, s->chunk);
}

/* Keeps *t as the best so far when it is the first or 0.5% cheaper. */
static void consider(const uk_red_strategy *t, const uk_red_facts *f, int sms, uk_red_strategy *best,
                     double *best_cost) {
  double c = uk__red_cost_us(t, f, sms);
  if (*best_cost < 0 || c < 0.995 * *best_cost) {
    *best = *t;
    *best_cost = c;
  }
}

/* Split counts worth weighing for gx block columns: those that fill 1, 2,
 * 3 or 4 whole waves of `resident` blocks (a last, partial wave runs alone
 * at a fraction of the bandwidth), with half_wave also half a wave, then
 * none. Listed first, a split keeps its place against no split unless that
 * is 0.5% cheaper: with fewer blocks than the GPU holds, the model's
 * bandwidth is the least certain. */
static int split_counts(int64_t gx, int64_t resident, int half_wave, int64_t *n) {
  int k = 0;
  for (int64_t w = 1; gx > 0 && gx < resident && w <= 4; w++) {
    int64_t c = w * resident / gx;
    if (c >= 2 && (k == 0 || c != n[k - 1])) n[k++] = c;
  }
  /* Half a wave (group kernels): fewer blocks for the last block of a
   * column to wait for (red_cost.c's ARRIVE_US), where the loads in flight
   * still fill the memory (the model's streaming term decides) */
  int64_t half = gx > 0 ? resident / 2 / gx : 0;
  if (half_wave && gx < resident && half >= 2 && (k == 0 || half != n[k - 1])) n[k++] = half;
  n[k++] = 1;
  return k;
}

/* Split counts for a candidate of gx block columns: none for a tiny
 * reduction (UK_RED_TINY elements or fewer in all: one block's worth,
 * whose time is the launch's), since a split adds the last block's
 * combine and, on a stream's first split, the scratch's allocation and
 * zeroing; else split_counts. */
static int splits(const uk_red_plan_in *in, int64_t gx, int64_t resident, int half_wave, int64_t *n) {
  if (uk__red_tiny(in->nout, in->nred)) {
    n[0] = 1;
    return 1;
  }
  return split_counts(gx, resident, half_wave, n);
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

/* Vector loads along the reduced loop for T1/G8/G32/B: every loop input
 * walks its innermost reduced axis contiguously, every other stride and
 * the bases are 16-byte aligned, and over several reduced axes (a
 * non-adjacent set) the innermost holds whole vectors, so that none spans
 * two of its rows (one axis: a scalar loop takes the tail). */
static int group_vec_ok(const uk_red_loops *R, const int64_t *itemsize, int aligned, int vec) {
  const uk_loop *K = &R->kept, *L = &R->red;
  if (vec < 2 || !aligned || L->ndim < 1 || R->nred < vec || (L->ndim > 1 && L->shape[L->ndim - 1] % vec)) return 0;
  for (int k = 0; k < R->nin; k++) {
    if (L->strides[k][L->ndim - 1] != itemsize[k]) return 0;
    for (int d = 0; d < L->ndim - 1; d++)
      if (L->strides[k][d] % 16) return 0;
    for (int d = 0; d < K->ndim; d++)
      if (K->strides[k][d] % 16) return 0;
  }
  return 1;
}

/* An unsplit column tile of `by` threads an output, with vectors of
 * adjacent outputs or not (the plans taken before the model). */
static void cols_tile(const uk_red_plan_in *in, int by, int vec, uk_red_strategy *s) {
  memset(s, 0, sizeof *s);
  s->kernel = UK_RED_COLS;
  s->vec = vec;
  s->by = by;
  s->slots = (UK_RED_BLOCK / by) * (vec ? in->vec : 1);
  s->grid_x = cdiv(in->nout, s->slots);
  s->nsplit = 1;
  s->chunk = in->nred > 0 ? in->nred : 1;
}

/* Slabs (kept loop of two or more axes) of UK_RED_COLS_SLAB_BYTES / 4 to
 * UK_RED_COLS_SLAB_BYTES: the tile of the most threads per output that
 * leaves each thread a round of loads (4 rows) and each tile row a whole
 * 128-byte line, unsplit, when that fills every SM and leaves each thread
 * at most two rounds (8 rows). The model prices these tiles the same as
 * fewer threads per output over more rows; on an H200 (session 11) they
 * took 0.3-1.9 us less at 16 and 64 MiB (65536 outputs of 256 from (512,
 * 256, 128): 24.8 -> 22.9 us), where the model's plan read 16-32 rows a
 * thread; a tile of 16 rows a thread (32768 outputs of 512) was 0.3 us
 * slower, and at 256 MiB none gained. 0: no such plan (s untouched). */
static int cols_slab_plan(const uk_red_plan_in *in, uk_red_strategy *s) {
  double bytes = (double)in->nout * (double)in->nred * (double)in->elem_bytes;
  if (!in->slabs || bytes > (double)UK_RED_COLS_SLAB_BYTES || bytes < (double)(UK_RED_COLS_SLAB_BYTES / 4)) return 0;
  int64_t nv = in->vec_ok ? in->vec : 1;
  for (int by = 64; by >= 1; by /= 2) {
    int64_t bx = UK_RED_BLOCK / by;
    if (in->nred < 4 * (int64_t)by || bx * nv * in->itemsize < 128) continue;
    uk_red_strategy t;
    cols_tile(in, by, in->vec_ok, &t);
    if (t.grid_x < in->sms || in->nred > 8 * (int64_t)by) return 0; /* every SM; two rounds a thread at most */
    *s = t;
    return 1;
  }
  return 0;
}

/* Whether a column tile of rows shorter than a line (half lines, UK_RED_COLS_NARROW_ROW to 127 bytes, 16-64
 * threads an output; of small inputs, from UK_RED_COLS_SMALL_ROW bytes) may run: unsplit, each thread a whole
 * trip of 4 rows at least. Timed against the planner's whole-line tiles
 * on an H200 (docs/PERF.md "Session 23", bench/results/col-plans-*):
 * 1024-16384 outputs of 64-256 rows, and slabs of 64 rows, 0.2-1.0 us
 * faster at 64 KiB-4 MiB; half-line tiles split, or with 2 rows a thread,
 * were up to 0.5 us slower (64 MiB: 3-5 us), and 32-byte rows 0.2 us at 4 MiB. */
static int narrow_ok(const uk_red_strategy *t, int64_t nred) { return t->nsplit <= 1 && nred >= 4 * (int64_t)t->by; }

/* Short columns of one 4-byte input (UK_RED_COLS_SHORT_*): a scalar tile,
 * unsplit, of the fewest threads an output (2-64) that leave each thread 8
 * to 32 rows (4-7 for columns under 16) and give the SMs 1.5 blocks each,
 * else the most threads within 8 rows a thread (and rows of 64 bytes past
 * UK_RED_COLS_SMALL_BYTES, as narrow_ok's). After the trip of 8 scalar
 * rows (ukern/red_cols.cuh) such tiles were the fastest plans of nearly
 * every such point, where the cost model chose vector tiles or too many
 * blocks: col_plans.py --all over 69 float32 sums of 64 KiB-16 MiB and
 * argmax_plans.py's 24 shapes (H200, session 26): 63 picks moved, 0.1-1.0
 * us faster at 51, 11 within 0.05, one 0.16 slower; the summed regret against the
 * fastest timed plan 22.1 -> 8.9 us (sums) and 8.6 -> 5.2 us (argmax).
 * Longer columns keep the model (its split plans beat one thread walking
 * them). 0: no such plan (s untouched). */
static int cols_short_plan(const uk_red_plan_in *in, double bytes, int small, uk_red_strategy *s) {
  if (in->itemsize != 4 || in->elem_bytes != 4 || bytes > (double)UK_RED_COLS_SHORT_BYTES ||
      in->nred > UK_RED_COLS_SHORT_ROWS)
    return 0;
  int pick = 0;
  for (int by = 2; by <= 64 && (by == 2 ? 4 : 8) * (int64_t)by <= in->nred; by *= 2) {
    if (32 * (int64_t)by < in->nred) continue;
    if (!small && (UK_RED_BLOCK / by) * in->itemsize < UK_RED_COLS_NARROW_ROW) break;
    pick = by;
    if (2 * cdiv(in->nout, UK_RED_BLOCK / by) >= 3 * (int64_t)in->sms) break;
  }
  if (!pick) return 0;
  cols_tile(in, pick, 0, s);
  return 1;
}

/* Threads across the contiguous output axis (COLS): tile widths bx = 256 /
 * by from whole 128-byte lines per row up (shorter rows unsplit: narrow_ok), each with its split counts;
 * with vectors of adjacent outputs where the loops allow them, then
 * without (a tile of scalars is 4x narrower in outputs: 4x the blocks,
 * which spreads a small problem over more SMs). */
static void choose_cols(const uk_red_plan_in *in, const uk_red_facts *f, uk_red_strategy *s) {
  int64_t nout = in->nout, nred = in->nred, resident = (int64_t)in->sms * in->per_sm;
  int sms = in->sms;
  const double bytes = (double)nout * (double)nred * (double)in->elem_bytes;
  const int small = bytes <= (double)UK_RED_COLS_SMALL_BYTES;
  if (cols_short_plan(in, bytes, small, s) || cols_slab_plan(in, s)) return;
  /* tiles of a small input with wide partials (an argmax pair): scalar (UK_RED_COLS_PAIR_SCALAR_BYTES) */
  const int vec_ok = in->vec_ok && !(in->partial_bytes >= 16 && bytes <= (double)UK_RED_COLS_PAIR_SCALAR_BYTES);
  /* First the width the planner used before the model (measured at the
   * copy rate wherever it had enough blocks): 1 thread per output for
   * columns of 64 or fewer, else 8. */
  static const int bys[] = {8, 1, 2, 4, 16, 32, 64, UK_RED_COLS_BY_MAX};
  double best = -1;
  for (int vc = vec_ok; vc >= 0; vc--) {
    int64_t nv = vc ? in->vec : 1;
    for (size_t j = 0; j < sizeof bys / sizeof bys[0]; j++) {
      int by = nred <= 64 ? (j == 0 ? 1 : j == 1 ? 8 : bys[j]) : bys[j];
      int64_t bx = UK_RED_BLOCK / by, tile_row = bx * nv * f->itemsize;
      /* a row of the tile: at least one whole line, or half a line unsplit (narrow_ok); of a small input, down to
       * UK_RED_COLS_SMALL_ROW bytes (a 32-byte sector shared by two blocks is read twice, a cost only the
       * copy rate sees). Not where one tile holds every output of dense rows: its block then reads one run of
       * bytes a trip, however short a row (columns of 2-16 float32 elements: the widest tiles left most of their
       * threads without an output; session 35) */
      const int whole = in->dense && bx * nv >= nout;
      /* Nor, from UK_RED_COLS_TWO_ROUNDS_BYTES, for dense rows of at most UK_RED_COLS_DENSE_ROW bytes that
       * no vector spans (3, 5, 6 or 7 float32 outputs) and a partial of a word or two: each piece's blocks of
       * every tile read the same few lines at about the same time, so a narrower tile of more threads an
       * output (fewer idle) loses no bandwidth (H200, session 36: (N, 5), (N, 6), (N, 7) at 64 MiB 36.0,
       * 32.4, 30.1 -> 24.5, 23.1, 23.4 us; (N, 3) at 48 MiB 19.8 -> 18.8). Not measured faster elsewhere:
       * 3 MiB of (N, 3) 7.5 -> 7.9, vector rows of 12 20.4 -> 29.9 where the model took such tiles. */
      const int short_dense = in->dense && !in->vec_ok && nout * (int64_t)in->itemsize <= UK_RED_COLS_DENSE_ROW &&
                              in->partial_bytes < 16 && bytes >= (double)UK_RED_COLS_TWO_ROUNDS_BYTES;
      if (by > 1 && !whole && !short_dense && tile_row < (small ? UK_RED_COLS_SMALL_ROW : UK_RED_COLS_NARROW_ROW))
        continue;
      /* 128 threads an output only for a whole tile of 2 scalar outputs (64 left half of its threads idle) or
         short dense rows */
      if (by > 64 && !(whole && !vc && nout <= UK_RED_BLOCK / by) && !short_dense) continue;
      uk_red_strategy t;
      memset(&t, 0, sizeof t);
      t.kernel = UK_RED_COLS;
      t.vec = vc;
      t.by = by;
      t.slots = bx * nv;
      t.grid_x = cdiv(nout, t.slots);
      int64_t n[6];
      int nn = splits(in, t.grid_x, resident, 0, n);
      /* At most as many pieces as the last block combines in one round of
       * loads (UK_RED_COLS_CW per thread, BLOCK / slots threads per slot):
       * a second round waits another L2 latency, and the split column
       * points of the session-11 run (16-256 MiB, H200) took 0-3 us less at
       * about 64 pieces (one round of 32-slot tiles) than at a wave of
       * 128-512 (docs/PERF.md); larger inputs, not measured, keep a wave. */
      int64_t most = UK_RED_COLS_CW * (UK_RED_BLOCK / (t.slots < UK_RED_BLOCK ? t.slots : UK_RED_BLOCK));
      if (bytes > (double)UK_RED_COLS_CAP_BYTES) most = INT64_MAX;
      /* ... but two rounds where one leaves SMs without a block, from
       * UK_RED_COLS_TWO_ROUNDS_BYTES: 64 float32 columns, 2 tiles of 32
       * over 64 or 128 pieces, 16 MiB 11.7 -> 10.7 us, 64 MiB 27.0 ->
       * 21.9 (H200, session 35; at 4 MiB 7.7 -> 7.8) */
      else if (t.grid_x * most < sms && bytes >= (double)UK_RED_COLS_TWO_ROUNDS_BYTES)
        most *= 2;
      for (int i = 0; i < nn; i++) {
        /* a piece: at least a round of loads (4 rows) per thread */
        split_n(&t, nred, n[i] < most ? n[i] : most, 4 * (int64_t)by, by);
        if (by > 1 && !whole && !short_dense && tile_row < 128 && !narrow_ok(&t, nred)) continue;
        /* tiles of 2-4 threads an output only unsplit: split, fused argmax of 1024 x 1024 and 4096 x 256 took
         * 0.4-0.5 us more than 8 threads an output (H200, session 25; unsplit, 64 x 16384 0.8 us less) */
        if (by > 1 && by < 8 && t.nsplit > 1) continue;
        consider(&t, f, sms, s, &best);
      }
    }
  }
}

/* B unsplit, a block of `block` threads (0: UK_RED_BLOCK) an output: the
 * plan uk__red_unsplit_block's shapes and a deep program's block rows take
 * before the model. */
static void block_per_output(const uk_red_plan_in *in, int block, uk_red_strategy *s) {
  s->kernel = UK_RED_B;
  s->block = block;
  s->vec = in->vec_ok;
  s->slots = 1;
  s->grid_x = in->nout;
  s->nsplit = 1;
  s->chunk = in->nred;
  int c = uk__red_wide_cluster(in->group, in->nout, in->nred, in->vec_ok, in->cluster_max, NULL);
  if (c) { /* pieces of whole vectors, so that each starts aligned */
    int64_t v = in->vec > 1 ? in->vec : 1;
    s->cluster = c;
    s->nsplit = c;
    s->chunk = cdiv(cdiv(in->nred, c), v) * v;
  }
}

/* T1, G8, G32 or B: threads per output by row length, with split counts. */
static void choose_group(const uk_red_plan_in *in, const uk_red_facts *f, uk_red_strategy *s) {
  int64_t nout = in->nout, nred = in->nred, resident = (int64_t)in->sms * in->per_sm;
  int vec_ok = in->vec_ok, vec = in->vec, sms = in->sms;
  /* Short rows (16 or fewer) take a thread each: no cycles go to shuffles,
   * and neighbouring threads read neighbouring rows. Longer rows never do
   * (a warp would read 32 rows at once: the model has no term for that).
   * The order puts the choice of the planner before the model first. */
  static const int long_first[] = {UK_RED_B, UK_RED_G32, UK_RED_G8}, short_first[] = {UK_RED_G8, UK_RED_G32, UK_RED_B};
  int t1[] = {UK_RED_T1};
  /* Partials of 16 bytes or more (argmax's value-index pair): the fewest
   * threads an output first; no split where the outputs give every SM a
   * block; a block an output only for rows longer than 1024 or fewer
   * outputs than two blocks an SM: each shuffle round, a block's combine
   * and the last block's move the whole pair. Fused float32 argmax over the
   * last axis (H200, session 26, bench/tools/row_plans.py, its group
   * kernel 8 blocks an SM): 1024 x 1024 7.55 -> 5.79 us (a warp an output,
   * not a block nor 8 threads split 8 ways), 16384 x 1024 21.25 -> 19.87
   * (8 threads, not a warp, which the model ties); 20 other shapes kept
   * their plans. */
  const int wide = in->partial_bytes >= 16;
  const int *ids = nred <= 16 ? t1
                   : !wide && (nred >= 1024 || (nred >= 256 && nout < resident)) ? long_first
                   : short_first;
  int nids = nred <= 16 ? 1 : 3;
  /* Short vector rows in a program that combines narrow groups: 2 or 4
   * threads a row (uk__red_narrow_lanes), before the model as T1 is. */
  const int lanes = in->narrow && vec_ok ? uk__red_narrow_lanes(nred, in->elem_bytes, vec) : 0;
  static const int narrow[] = {UK_RED_G8};
  if (lanes) {
    ids = narrow;
    nids = 1;
  }
  /* A deep program reading 128 MiB or more: the largest group whose
   * threads still load 64 bytes an output, where the model, at the copy
   * rate for every group, ties (H200, two float32 inputs of 64 MiB to 1
   * GiB: a warp over rows of 512 1-3% faster than 8 threads; a block over
   * rows of 2048 2-3% faster than a warp; 8 threads over rows of 128, where
   * a warp's threads would load one vector, 15-33% faster than a warp). */
  int pick[1];
  if (in->deep && (double)nout * (double)nred * (double)in->elem_bytes >= (double)(128 << 20)) {
    for (int j = 0; j < 3; j++) {
      uk_red_strategy t = {.kernel = long_first[j]};
      if (cdiv(nred, uk__red_threads_per_output(&t)) * in->elem_bytes >= 64 || j == 2) {
        pick[0] = long_first[j];
        break;
      }
    }
    ids = pick;
    nids = 1;
  }
  if (in->deep && uk__red_block_rows(nout, nred, vec_ok, sms, 1)) { /* no model (rows too long for lanes) */
    block_per_output(in, 0, s);
    return;
  }
  double best = -1;
  for (int j = 0; j < nids; j++) {
    uk_red_strategy t;
    memset(&t, 0, sizeof t);
    t.kernel = ids[j];
    if (wide && t.kernel == UK_RED_B && nred <= 1024 && nout >= 2 * (int64_t)sms && best >= 0) continue;
    t.vec = vec_ok;
    if (t.kernel == UK_RED_G8 && lanes) t.by = lanes;
    int64_t g = uk__red_threads_per_output(&t), v = vec_ok ? vec : 1;
    /* A grid-stride loop over at most 4 waves; a deep program whose threads
     * load 64 bytes or more an output runs one group a block instead (H200,
     * two float32 inputs: 1-3% faster at rows of 128 to 8192, 64 MiB to 1
     * GiB; at rows of 32, one vector a thread, the loop was 4-7% faster). */
    int64_t per_block = UK_RED_BLOCK / g, blocks = cdiv(nout, per_block), cap = resident * 4;
    if (in->deep && cdiv(nred, g) * in->elem_bytes >= 64) cap = INT32_MAX;
    t.slots = per_block;
    t.grid_x = blocks < cap ? blocks : cap;
    int64_t n[6];
    int nn = splits(in, t.grid_x, resident, 1, n);
    for (int i = 0; i < nn; i++) {
      /* a piece: at least a round of loads per thread (4 vectors or 8 elements) */
      split_n(&t, nred, n[i], g * (vec_ok ? 4 * v : 8), g * v);
      if (wide && nout >= sms && t.nsplit > 1) continue;
      consider(&t, f, sms, s, &best);
    }
  }
}

/* Vectors of adjacent outputs for COLS where every row holds whole aligned
 * vectors. */
static int cols_vec_ok(const uk_red_loops *R, int aligned, int vec) {
  const uk_loop *K = &R->kept, *L = &R->red;
  int vc = vec > 1 && aligned && K->shape[K->ndim - 1] % vec == 0;
  for (int k = 0; vc && k < R->nin; k++) {
    for (int d = 0; d < K->ndim - 1; d++)
      if (K->strides[k][d] % 16) vc = 0;
    for (int d = 0; d < L->ndim; d++)
      if (L->strides[k][d] % 16) vc = 0;
  }
  return vc;
}

/* A group plan remade: `group` threads an output (1, 8, 32 or UK_RED_BLOCK;
 * 0: as chosen), unsplit unless nsplit says, on the model's grid (a
 * grid-stride loop over at most 4 waves); its split (the model's pieces: a
 * round of loads per thread at least), one block column per output group,
 * as a split needs. */
static void group_force(const uk_red_plan_in *in, int group, int64_t nsplit, uk_red_strategy *s) {
  if (s->block) return;
  const int kind = group == 1 ? UK_RED_T1 : group == 8 ? UK_RED_G8 : group == 32 ? UK_RED_G32
                   : group == UK_RED_BLOCK ? UK_RED_B : -1;
  if (kind >= 0 && kind != s->kernel) {
    int64_t blocks = cdiv(in->nout, UK_RED_BLOCK / group), cap = (int64_t)in->sms * in->per_sm * 4;
    s->kernel = kind;
    s->by = 0;
    s->slots = UK_RED_BLOCK / group;
    s->grid_x = blocks < cap ? blocks : cap;
    if (nsplit <= 0) nsplit = 1;
  }
  if (nsplit <= 0) return;
  int64_t g = uk__red_threads_per_output(s), v = s->vec ? in->vec : 1;
  if (nsplit > 1) s->grid_x = cdiv(in->nout, s->slots);
  split_n(s, in->nred, nsplit, g * (s->vec ? 4 * v : 8), g * v);
}

void uk__red_force(const uk_red_plan_in *in, int by, int vec, int64_t nsplit, int swz, int group,
                   uk_red_strategy *s) {
  if (s->kernel != UK_RED_COLS && s->kernel != UK_RED_PACK) group_force(in, group, nsplit, s);
  if (s->kernel != UK_RED_COLS || (by <= 0 && vec < 0 && nsplit <= 0 && swz < 0)) return;
  if (by <= 0) by = s->by;
  if (by > UK_RED_COLS_BY_MAX || (by & (by - 1))) return;
  if (vec < 0) vec = s->vec;
  vec = vec && in->vec_ok;
  if (nsplit <= 0) nsplit = s->nsplit;
  int64_t nv = vec ? in->vec : 1;
  s->by = by;
  s->vec = vec;
  s->slots = (UK_RED_BLOCK / by) * nv;
  s->grid_x = cdiv(in->nout, s->slots);
  split_n(s, in->nred, nsplit, 4 * (int64_t)by, by);
  if (swz >= 0) s->swz = swz;
  s->swz = s->swz && s->nsplit > 1;
}

void uk__red_plan_in(const uk_red_loops *R, const int64_t *itemsize, int aligned, int vec, int sms,
                     uk_red_plan_in *in) {
  memset(in, 0, sizeof *in);
  in->nout = R->nout;
  in->nred = R->nred;
  in->vec = vec;
  in->sms = sms < 1 ? 1 : sms;
  in->per_sm = 2048 / UK_RED_BLOCK;
  in->itemsize = 1;
  for (int k = 0; k < R->nin; k++) {
    in->elem_bytes += itemsize[k];
    if (itemsize[k] > in->itemsize) in->itemsize = (int32_t)itemsize[k];
  }
  int red_contig, cols;
  contiguity(R, itemsize, &red_contig, &cols);
  if (!red_contig && cols) {
    in->group = UK_RED_GROUP_COLS;
    in->vec_ok = cols_vec_ok(R, aligned, vec);
    in->slabs = R->kept.ndim >= 2;
    in->dense = R->kept.ndim == 1 && R->red.ndim == 1;
    for (int k = 0; k < R->nin && in->dense; k++) { /* the row's bytes, where they fit int64 */
      int64_t row;
      in->dense = !__builtin_mul_overflow(R->kept.shape[0], itemsize[k], &row) && R->red.strides[k][0] == row;
    }
  } else if (pack_ok(R, itemsize, aligned, vec, red_contig)) {
    in->group = UK_RED_GROUP_PACK;
  } else {
    in->group = UK_RED_GROUP_G;
    in->vec_ok = group_vec_ok(R, itemsize, aligned, vec);
  }
}

int uk__red_unsplit_block(const uk_red_plan_in *in) {
  int cluster_block;
  if (uk__red_wide(in->group, in->nout, in->nred, in->vec_ok)) return UK_RED_WIDE_BLOCK;
  if (uk__red_wide_cluster(in->group, in->nout, in->nred, in->vec_ok, in->cluster_max, &cluster_block))
    return cluster_block;
  /* (rows of more than UK_RED_TINY: never short rows that narrow groups take) */
  if (in->group == UK_RED_GROUP_G && !in->deep && uk__red_block_rows(in->nout, in->nred, in->vec_ok, in->sms, 0))
    return UK_RED_ROWS_BLOCK;
  return 0;
}

void uk__red_choose_in(const uk_red_plan_in *given, uk_red_strategy *s) {
  memset(s, 0, sizeof *s);
  uk_red_plan_in fixed = *given, *in = &fixed;
  int block = uk__red_unsplit_block(in);
  if (block) { /* no model: the program's only plan */
    block_per_output(in, block, s);
    return;
  }
  if (in->sms < 1) in->sms = 1;
  if (in->per_sm < 1 || in->per_sm > 2048 / UK_RED_BLOCK) in->per_sm = 2048 / UK_RED_BLOCK;
  uk_red_facts f = {in->nout, in->nred, in->elem_bytes, in->vec, in->itemsize, in->per_sm, in->deep, in->partial_bytes};
  if (in->group == UK_RED_GROUP_COLS) {
    choose_cols(in, &f, s);
  } else if (in->group == UK_RED_GROUP_PACK) {
    /* One-shot grid, as an elementwise kernel: no split (a grid-stride
     * loop only past 2^24 blocks). */
    int64_t vec = in->vec, per_block = (int64_t)UK_RED_BLOCK * uk__red_pack_unroll(in->vec), items = in->nout / (vec / 2);
    s->kernel = UK_RED_PACK;
    s->vec = 1;
    s->by = 1;
    s->slots = per_block * (vec / 2);
    s->grid_x = cdiv(items, per_block);
    if (s->grid_x > ((int64_t)1 << 24)) s->grid_x = (int64_t)1 << 24;
    s->nsplit = 1;
    s->chunk = in->nred;
  } else {
    choose_group(in, &f, s);
  }
}

void uk__red_choose(const uk_red_loops *R, const int64_t *itemsize, int aligned, int vec, int sms,
                    uk_red_strategy *s) {
  uk_red_plan_in in;
  uk__red_plan_in(R, itemsize, aligned, vec, sms, &in);
  uk__red_choose_in(&in, s);
}

/* The first two branches of uk__red_choose: the rest only size the grid
 * and pick among the kernels of group G. */
int uk__red_group(const uk_red_loops *R, const int64_t *itemsize, int aligned, int vec) {
  int red_contig, cols;
  contiguity(R, itemsize, &red_contig, &cols);
  if (!red_contig && cols) return UK_RED_GROUP_COLS;
  return pack_ok(R, itemsize, aligned, vec, red_contig) ? UK_RED_GROUP_PACK : UK_RED_GROUP_G;
}
