/* Fuzz entry for shape and stride planning (libFuzzer, or replay.c):
 * broadcasting, merging, the int32 index decision, contiguity and the
 * reduction split, on operands decoded from the input bytes (extents and
 * strides from small values up to INT64_MAX, negative and zero strides).
 *
 * Findings are crashes, sanitizer reports (signed overflow included) and
 * broken invariants (abort()):
 *   - broadcast failure sets a message; success gives each operand's extent
 *     (or 1, with stride 0) on every loop axis and size = product of shape,
 *     or UK_ERR_SHAPE when that product does not fit int64;
 *   - merging keeps the loop's size, and for small loops the exact sequence
 *     of byte offsets that every operand visits;
 *   - fits_int32 is 1 exactly when the size and every operand's lowest and
 *     highest offset fit int32;
 *   - a contiguous 1-d loop has strides of one item or 0;
 *   - the reduction split: outputs x reduced elements = loop size.
 * UKERN_FUZZ_ALLOW=overflow skips inputs whose extents multiply to 2^31 or
 * more or that have a stride of 2^31 or more, so that a long run can look past the known overflows (issue 9 item
 * 6); replays never set it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "codegen/red_plan.h"
#include "codegen/shape.h"
#include "fuzz_util.h"

typedef struct {
  const uint8_t *data;
  size_t size, at;
} bytes;

static unsigned next(bytes *b) { return b->at < b->size ? b->data[b->at++] : 0; }

static int64_t extent(bytes *b) {
  static const int64_t big[] = {INT64_MAX, INT64_MAX / 2, (int64_t)1 << 31, INT32_MAX,
                                (int64_t)1 << 40, 65536, 1000003, (int64_t)1 << 62};
  unsigned v = next(b);
  if (v < 200) return v % 8;
  if (v < 240) return v - 190;
  if (v < 248) return big[v - 240];
  return -(int64_t)(v - 247);
}

static int64_t stride(bytes *b, int64_t item) {
  static const int64_t big[] = {INT64_MAX, INT64_MIN, (int64_t)1 << 32, INT32_MAX, -((int64_t)1 << 33)};
  unsigned v = next(b);
  if (v < 240) return ((int64_t)(v % 32) - 12) * item;
  if (v < 245) return big[v - 240];
  return (int64_t)(v - 245) * 7; /* odd, unaligned */
}

/* Lowest and highest offset over the loop for operand k (exact, 128-bit). */
static void extremes(const uk_loop *L, int k, __int128 *lo, __int128 *hi) {
  *lo = *hi = 0;
  for (int d = 0; d < L->ndim; d++) {
    if (L->shape[d] <= 1) continue;
    __int128 span = (__int128)L->strides[k][d] * (L->shape[d] - 1), cap = (__int128)1 << 100;
    span = span > cap ? cap : span < -cap ? -cap : span; /* 16 axes cannot overflow */
    if (span > 0) *hi += span;
    else *lo += span;
  }
}

enum { MAXWALK = 512 };

/* Byte offsets operand k visits, in loop order (loop size <= MAXWALK),
 * modulo 2^64 (huge strides must not make the harness itself overflow). */
static void walk(const uk_loop *L, int k, uint64_t *out) {
  int64_t idx[UK_MAX_NDIM] = {0};
  for (int64_t n = 0; n < L->size; n++) {
    uint64_t off = 0;
    for (int d = 0; d < L->ndim; d++) off += (uint64_t)idx[d] * (uint64_t)L->strides[k][d];
    out[n] = off;
    for (int d = L->ndim - 1; d >= 0; d--) {
      if (++idx[d] < L->shape[d]) break;
      idx[d] = 0;
    }
  }
}

static void check_loop(int nops, const uk_operand_view *ops, const uk_loop *L) {
  require(L->nops == nops && L->ndim >= 0 && L->ndim <= UK_MAX_NDIM);
  int64_t size = 1;
  int empty = 0;
  for (int d = 0; d < L->ndim; d++) {
    require(L->shape[d] >= 0);
    empty |= L->shape[d] == 0;
  }
  for (int d = 0; d < L->ndim && !empty; d++)
    require(!__builtin_mul_overflow(size, L->shape[d], &size)); /* else UK_ERR_SHAPE was due */
  require(L->size == (empty ? 0 : size));
  for (int k = 0; k < nops; k++) {
    require(ops[k].ndim <= L->ndim);
    int off = L->ndim - ops[k].ndim;
    for (int d = 0; d < L->ndim; d++) {
      int od = d - off;
      int64_t e = od < 0 ? 1 : ops[k].shape[od];
      require(e == L->shape[d] || (e == 1 && L->strides[k][d] == 0));
    }
  }
}

/* The planner on a reduction split (red_plan.c uk__red_choose), with the
 * program's vector width, alignment and SM count from the bytes: pure (the
 * same plan twice); a launchable geometry (at least a block, pieces within
 * a grid's y extent); pieces covering the reduced range with none empty; a
 * column plan's threads an output a power of two up to 128 and its tiles
 * covering every output. */
static void plan_ok(const uk_red_loops *R, const int64_t *items, bytes *b) {
  const unsigned v = next(b);
  const int vec = 1 << (v % 5), aligned = (int)(v >> 3 & 1), sms = 1 + (int)(next(b) % 200);
  uk_red_strategy s, t;
  uk__red_choose(R, items, aligned, vec, sms, &s);
  uk__red_choose(R, items, aligned, vec, sms, &t);
  require(s.kernel == t.kernel && s.grid_x == t.grid_x && s.nsplit == t.nsplit && s.chunk == t.chunk &&
          s.vec == t.vec && s.by == t.by && s.slots == t.slots && s.swz == t.swz && s.block == t.block &&
          s.cluster == t.cluster);
  require(uk__red_kernel_group(s.kernel) == uk__red_group(R, items, aligned, vec));
  require(s.grid_x >= 1 && s.nsplit >= 1 && s.nsplit <= 65535 && s.chunk >= 1);
  require((__int128)s.nsplit * s.chunk >= R->nred && (s.nsplit == 1 || (__int128)(s.nsplit - 1) * s.chunk < R->nred));
  if (uk__red_kernel_group(s.kernel) == UK_RED_GROUP_COLS) {
    require(s.by >= 1 && s.by <= UK_RED_COLS_BY_MAX && (s.by & (s.by - 1)) == 0 && s.slots >= 1);
    require((__int128)s.grid_x * s.slots >= R->nout);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bytes b = {data, size, 0};
  unsigned first = next(&b);
  int nops = first < 250 ? 1 + (int)(first % 4) : 15 + (int)(first - 250); /* 15..20 */
  uk_operand_view ops[24];
  int64_t shapes[24][UK_MAX_NDIM + 2], strides[24][UK_MAX_NDIM + 2], items[24];
  static const char *const names[] = {"a", "b", "c", "d"};
  for (int k = 0; k < nops; k++) {
    unsigned v = next(&b);
    int ndim = v < 240 ? (int)(v % 5) : v < 252 ? (int)(v - 235) : -1; /* 0..4, 5..16, 17, -1 */
    if (ndim > UK_MAX_NDIM + 1) ndim = UK_MAX_NDIM + 1;
    items[k] = (int64_t)1 << (next(&b) % 5);
    for (int d = 0; d < ndim; d++) {
      shapes[k][d] = extent(&b);
      strides[k][d] = stride(&b, items[k]);
    }
    ops[k] = (uk_operand_view){names[k % 4], ndim, shapes[k], strides[k], items[k]};
  }
  static int small_only = -1;
  if (small_only < 0) small_only = getenv("UKERN_FUZZ_ALLOW") && strstr(getenv("UKERN_FUZZ_ALLOW"), "overflow");
  __int128 volume = 1; /* bounds every loop size: each extent comes from some operand */
  for (int k = 0; k < nops && small_only; k++)
    for (int d = 0; d < ops[k].ndim; d++) {
      if (shapes[k][d] > 0) volume *= shapes[k][d];
      if (volume > INT32_MAX || strides[k][d] > INT32_MAX || strides[k][d] < -INT32_MAX) return 0;
    }
  uk_loop L;
  memset(&L, 0xA5, sizeof L);
  uk_status st = uk__shape_broadcast(nops, ops, &L);
  if (st != UK_OK) {
    require(uk_last_error()[0] != '\0');
    return 0;
  }
  check_loop(nops, ops, &L);

  int small = L.size <= MAXWALK;
  static uint64_t before[UK_MAX_NDIM][MAXWALK], after[MAXWALK];
  __int128 lo[UK_MAX_NDIM], hi[UK_MAX_NDIM];
  for (int k = 0; k < nops; k++) {
    extremes(&L, k, &lo[k], &hi[k]);
    if (small) walk(&L, k, before[k]);
  }
  uk_loop M = L;
  uk__shape_merge(&M);
  require(M.size == L.size && M.nops == nops && M.ndim <= L.ndim + 1);
  int64_t msize = 1;
  for (int d = 0; d < M.ndim; d++) msize *= M.shape[d];
  require(msize == M.size && (M.size == 0 || M.ndim == 0 || M.shape[M.ndim - 1] > 1));
  for (int k = 0; k < nops && small; k++) {
    walk(&M, k, after);
    require(memcmp(before[k], after, (size_t)L.size * sizeof after[0]) == 0);
  }

  int fits = L.size <= INT32_MAX;
  for (int k = 0; k < nops && L.size > 0; k++)
    fits = fits && hi[k] <= INT32_MAX && -lo[k] <= INT32_MAX;
  int got = uk__shape_fits_int32(&L);
  require(got == fits || (L.size == 0 && !got)); /* an empty loop may take 64-bit indices */
  if (uk__shape_is_contiguous(&M, items)) {
    require(M.ndim <= 1);
    for (int k = 0; k < nops && M.ndim == 1; k++)
      require(M.strides[k][0] == items[k] || M.strides[k][0] == 0);
  }

  /* reduction: axes from the bytes; one output, contiguous over the result */
  if (nops + 1 > UK_MAX_NDIM) return 0;
  int naxes = (int)(next(&b) % 4), axes[4];
  for (int j = 0; j < naxes; j++) axes[j] = (int)(next(&b) % 9) - 4;
  uk_launch launch = {.axes = naxes ? axes : NULL, .num_axes = naxes, .keepdims = (int)(next(&b) & 1)};
  uint8_t reduced[UK_MAX_NDIM];
  if (uk__red_axes("fuzz", L.ndim, &launch, reduced) != UK_OK) {
    require(uk_last_error()[0] != '\0');
    return 0;
  }
  int rnd;
  int64_t rshape[UK_MAX_NDIM], ostr[UK_MAX_NDIM][UK_MAX_NDIM];
  uk__red_result_shape(L.ndim, L.shape, reduced, launch.keepdims, &rnd, rshape);
  require(rnd >= 0 && rnd <= L.ndim);
  int64_t s = 8;
  for (int d = rnd - 1; d >= 0; d--) {
    ostr[0][d] = s;
    if (__builtin_mul_overflow(s, rshape[d] ? rshape[d] : 1, &s)) return 0;
  }
  uk_red_loops R;
  uk__red_split(&L, reduced, launch.keepdims, 1, (const int64_t *const[]){ostr[0]}, &R);
  require(R.nin == nops && R.kept.size == R.nout && R.red.size == R.nred);
  int64_t prod;
  require(!__builtin_mul_overflow(R.nout, R.nred, &prod) && prod == L.size);
  if (R.nout > 0 && R.nred > 0) plan_ok(&R, items, &b);
  return 0;
}
