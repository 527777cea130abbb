/* Elementwise planning (ew_plan.h): variant, tile and grid, pure arithmetic on the loop. */
#include "codegen/ew_plan.h"

#include "codegen/dtype.h"

/* A 2-d loop where some operands walk memory fastest along axis 0 and
 * others along axis 1 (a transposed view): the tiled variant, with lanes
 * along the axis most bytes are fastest on, stages the other operands
 * through shared memory. A loop whose operands all run fastest along axis 0
 * takes it too, with nothing staged (the strided loop would not coalesce).
 * Operands with a zero stride follow whatever order the lanes take. */
static void choose_tiles(const uk_ew_kernel *k, uk_ew_key *key, const uk_loop *L, const int64_t *items) {
  if (L->ndim != 2 || L->shape[0] < 16 || L->shape[1] < 16) return;
  int64_t votes[2] = {0, 0};
  int fast[UK_MAX_PARAMS], np = k->in->count + k->out->count, out_fast = -1;
  for (int p = 0, op = 0; p < np; p++) {
    fast[p] = -1;
    if (!uk__ew_loop_operand(k, key, p, &op)) continue;
    int64_t s0 = L->strides[op][0], s1 = L->strides[op][1];
    if (s0 == 0 || s1 == 0) continue;
    s0 = s0 < 0 ? -s0 : s0;
    s1 = s1 < 0 ? -s1 : s1;
    /* Staging only helps an operand whose fast stride is near its item. */
    int f = s0 < s1 ? 0 : 1;
    if ((f ? s1 : s0) > 4 * items[op]) continue;
    fast[p] = f;
    votes[f] += items[op];
    if (p >= k->in->count && out_fast < 0) out_fast = f;
  }
  int lanes = votes[0] > votes[1] ? 0 : votes[1] > votes[0] ? 1 : out_fast == 0 ? 0 : 1;
  uint64_t mask = 0;
  size_t shared = 0;
  for (int p = 0, op = 0; p < np; p++) {
    if (fast[p] < 0 || fast[p] == lanes) continue;
    uk__ew_loop_operand(k, key, p, &op);
    mask |= 1ull << p;
    shared += (size_t)items[op] * 32 * 33;
  }
  /* Static shared memory is capped at 48 KiB per block. */
  if ((!mask && lanes == 1) || shared > 48 * 1024) return;
  key->variant = UK_EW_TILED;
  key->tile_mask = mask;
  key->tile_fast = (uint8_t)lanes;
}

/* A loop of two or more axes that does not tile: rows of the innermost
 * axis (ROWS), so that no element pays a division. Operands with inner
 * stride 0 are loaded once per row (an output there keeps STRIDED: its
 * elements are written by several threads). Vectors when every other
 * operand runs along the row with unit stride from 16-byte aligned rows
 * (base and every outer stride), at most as wide as a row. */
static void choose_rows(const uk_ew_kernel *k, uk_ew_key *key, const uk_loop *L, const int64_t *items,
                        const uint64_t *data) {
  int nin = k->in->count, np = nin + k->out->count, in = L->ndim - 1;
  uint64_t bcast = 0;
  int unit = 1, aligned = 1;
  int64_t maxitem = 0;
  for (int p = 0, op = 0; p < np; p++) {
    if (!uk__ew_in_loop(k, key, p)) continue;
    int64_t s = L->strides[op][in];
    if (s == 0) {
      if (p >= nin) return;
      bcast |= 1ull << p;
    } else {
      unit &= s == items[op];
      if (items[op] > maxitem) maxitem = items[op];
      if (data[p] % 16) aligned = 0;
      for (int d = 0; d < in; d++) aligned &= L->strides[op][d] % 16 == 0;
    }
    op++;
  }
  key->variant = UK_EW_ROWS;
  key->bcast_mask = bcast;
  if (unit && aligned && maxitem > 0 && maxitem < 16) {
    int64_t v = 16 / maxitem;
    while (v > 1 && v > L->shape[in]) v /= 2;
    key->vec = (uint8_t)v;
  }
}

void uk__ew_choose(const uk_ew_kernel *k, const uk_loop *L, const uint64_t *data, int block, uk_ew_key *key) {
  int nin = k->in->count, np = nin + k->out->count;
  int64_t items[UK_MAX_ARRAY_OPERANDS];
  int maxitem = 0, aligned = 1, outs_unit = 1;
  key->bcast_mask = 0;
  /* op counts the loop operands met so far (uk__ew_loop_operand's index,
   * without its walk per parameter: this runs on every call). */
  for (int p = 0, op = 0; p < np; p++) {
    if (!uk__ew_in_loop(k, key, p)) continue;
    items[op] = (int64_t)uk__dtype_size((uk_dtype)key->p.dtype[p]);
    int bcast = L->ndim == 1 && L->strides[op][0] == 0;
    if (bcast) key->bcast_mask |= 1ull << p;
    if (p >= nin && bcast) outs_unit = 0;
    if (!bcast) {
      if (items[op] > maxitem) maxitem = (int)items[op];
      if (data[p] % 16) aligned = 0;
    }
    op++;
  }
  key->ndim = (uint8_t)L->ndim;
  key->vec = 1;
  key->per_thread = (uint8_t)(k->one_per_thread != 0);
  if (k->one_per_thread) {
    /* CuPy's loop: one element per thread, in order; _ind.get() needs the
     * loop's axes (STRIDED has them) unless the loop is 0-d or 1-d. */
    int contig = L->ndim == 0 || (outs_unit && uk__shape_is_contiguous(L, items));
    for (int p = 0; p < nin; p++) /* a broadcast _non_const input is written through its stride */
      if (k->in->items[p].is_non_const && ((key->bcast_mask >> p) & 1)) contig = 0;
    if (contig && (L->ndim <= 1 || !k->uses_ind_index)) {
      key->variant = UK_EW_CONTIG;
      key->index64 = L->size > INT32_MAX;
    } else {
      key->variant = UK_EW_STRIDED;
      key->index64 = !uk__shape_fits_int32(L);
      key->bcast_mask = 0;
    }
    return;
  }
  if (L->ndim == 0 || (outs_unit && uk__shape_is_contiguous(L, items))) {
    key->variant = UK_EW_CONTIG;
    key->index64 = L->size > INT32_MAX;
    if (L->ndim == 1 && aligned && maxitem > 0 && maxitem < 16) {
      key->variant = UK_EW_VEC;
      key->vec = (uint8_t)(16 / maxitem);
    }
  } else {
    key->variant = UK_EW_STRIDED;
    key->index64 = !uk__shape_fits_int32(L);
    key->bcast_mask = 0;
    if (k->tile_safe && (block == 0 || block == UK_EW_DEFAULT_BLOCK)) choose_tiles(k, key, L, items);
    if (key->variant == UK_EW_STRIDED && L->ndim >= 2) choose_rows(k, key, L, items, data);
  }
}

static int64_t pow2_ceil(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

void uk__ew_grid(const uk_ew_key *key, const uk_loop *L, int block, int sm_count, uk_ew_geom *g) {
  if (block == 0) block = UK_EW_DEFAULT_BLOCK;
  int64_t items = L->size, n;
  g->blocks_y = 1;
  g->lanes = 0;
  if (key->variant == UK_EW_ROWS) {
    /* Lanes: a power of two (a shift and a mask in the kernel), no more
     * than the block nor than a row's vectors need. */
    int64_t inner = L->shape[L->ndim - 1], vcols = (inner + key->vec - 1) / key->vec;
    int64_t lanes = pow2_ceil(vcols), most = 1;
    while (most * 2 <= block) most *= 2;
    if (lanes > most) lanes = most;
    while ((1ll << g->lanes) < lanes) g->lanes++;
    int64_t rows = inner ? L->size / inner : 0, per = block / lanes;
    n = (vcols + lanes - 1) / lanes;
    g->blocks_y = (rows + per - 1) / per;
    if (g->blocks_y > 65535) g->blocks_y = 65535;
    if (g->blocks_y < 1) g->blocks_y = 1;
  } else if (key->variant == UK_EW_TILED) {
    /* One 32 x 32 tile per block (the kernel loops past 2^31 - 1 tiles). */
    block = UK_EW_TILE_THREADS;
    n = ((L->shape[0] + 31) / 32) * ((L->shape[1] + 31) / 32);
  } else if (key->variant == UK_EW_STRIDED && !key->per_thread) {
    /* Grid-stride over a few waves: measured faster than one thread per
     * element for broadcast and strided loops. */
    n = (items + block - 1) / block;
    int64_t cap = (int64_t)sm_count * (2048 / block > 0 ? 2048 / block : 1) * 8;
    if (n > cap) n = cap;
  } else {
    /* Contiguous (or per_thread): one thread per element or vector (within 1% of CUB's
     * DeviceTransform; the grid-stride cap cost ~4%). */
    if (key->variant == UK_EW_VEC) {
      int64_t nvec = items / key->vec, tail = items % key->vec;
      items = nvec > tail ? nvec : tail;
    }
    n = (items + block - 1) / block;
  }
  if (n > INT32_MAX) n = INT32_MAX;
  if (n < 1) n = 1;
  g->blocks = n;
  g->threads = block;
}
