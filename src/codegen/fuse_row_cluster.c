/* The row kernel's cluster variant: how many blocks of a thread-block
 * cluster (sm_90+) a row is split over (fuse_row_plan.h uk__row_cluster).
 * Pure arithmetic; table-tested in tests/test_row_plan.c.
 *
 * Why: a block a row leaves SMs idle when there are fewer rows than SMs
 * (16 rows of 65536 float32 ran on 16 of 132 SMs, DRAM 3% busy, H200), and
 * a row wider than one block's shared memory re-reads what does not fit
 * (23% at 65536 float32). Split over C blocks, each block keeps its slice
 * in its own shared memory and the row's reductions combine the blocks'
 * partials through distributed shared memory: one read and one write of
 * global memory, on rows * C SMs. */
#include "codegen/fuse_row_plan.h"

int64_t uk__row_slice(int64_t n, int v, int c) {
  int64_t nv = (n + v - 1) / v;
  return (nv + c - 1) / c * v;
}

/* Shared bytes of a slice of e elements: each kept input's part rounded up
 * to 16 bytes (the kernel's regions). */
static int64_t slice_bytes(const uk_row_shape *s, int64_t e) {
  int64_t b = 0;
  for (int j = 0; j < s->nkept; j++) b += (e * s->kept_size[j] + 15) & ~15LL;
  return b;
}

int uk__row_cluster(const uk_row_shape *s, uk_row_grid *g) {
  int cmax = s->cluster_max > 16 ? 16 : s->cluster_max, v = g->vec > 0 ? g->vec : 1, c = 1, t = 64;
  int64_t sm = s->sm_count > 0 ? s->sm_count : 1;
  if (cmax < 2 || s->smem <= 0 || s->nkept < 1 || s->rows < 1 || s->n < 2) return 0;
  while (c <= cmax && slice_bytes(s, uk__row_slice(s->n, v, c)) > s->smem) c *= 2;
  if (c > cmax) return 0; /* not even cmax blocks hold a row: re-read as today */
  int few = s->rows < sm && s->n >= uk__row_few_min_n(s->single);
  const int64_t min_slice = s->single && s->n < UK_ROW_CLUSTER_MIN_N ? UK_ROW_LONE_MIN_SLICE : UK_ROW_CLUSTER_MIN_SLICE;
  /* many rows of two or more reductions that a block holds only alone on
   * its SM (1024 threads, or over half the budget): the row over C blocks
   * all the same, several an SM, so that one block's loads overlap another's
   * reductions (layer norm and softmax of 512-2048 rows of 32768 float32
   * 3-8% faster; x - mean's one reduction up to 5% slower, H200:
   * docs/PERF.md "Session 20") */
  if (c == 1 && !few && s->levels >= 2 && s->n >= UK_ROW_CLUSTER_MIN_N &&
      (g->threads >= UK_ROW_MAX_THREADS || 2 * slice_bytes(s, s->n) > s->smem))
    c = 2;
  if (c == 1 && !few) return 0; /* a block a row holds it and the rows fill the SMs */
  /* several blocks an SM, so that one block's loads overlap another's
   * reductions and stores: a slice in at most a quarter of the budget where
   * a row does not fit one block (65536 float32: C 8 of 32 KiB ran up to 10%
   * faster than C 4 of 64 KiB, H200), half where it does (32768 float32 over
   * clusters of 2-8 rather than a block a row: up to 17% slower) */
  int share = c > 1 ? 4 : 2;
  while (c < cmax && share * slice_bytes(s, uk__row_slice(s->n, v, c)) > s->smem &&
         uk__row_slice(s->n, v, 2 * c) >= min_slice)
    c *= 2;
  /* few rows: at least 7/8 of the SMs busy */
  while (few && c < cmax && s->rows * c * 8 < sm * 7 && uk__row_slice(s->n, v, 2 * c) >= min_slice) c *= 2;
  if (c < 2) return 0;
  int64_t e = uk__row_slice(s->n, v, c), clusters;
  while (t < UK_ROW_MAX_THREADS && (int64_t)t * 32 < e) t *= 2;
  clusters = (int64_t)sm * (2048 / t) * 8 / c; /* the kernel strides over the rest */
  if (clusters > s->rows) clusters = s->rows;
  if (clusters > 0x7fffffff / c) clusters = 0x7fffffff / c;
  if (clusters < 1) clusters = 1;
  g->mode = UK_ROW_SHARED;
  g->threads = t;
  g->vec = v;
  g->regs = 0;
  g->block = t;
  g->rows_per_block = 1;
  g->blocks = clusters * c;
  g->kept = e;
  g->rowbytes = slice_bytes(s, e);
  g->shared = g->rowbytes;
  g->cluster = c;
  return 1;
}

int uk__row_prefer_cluster(int64_t n, int64_t bytes, int cluster_max, int single) {
  if (cluster_max < 2 || n < uk__row_few_min_n(single)) return 0; /* uk__row_cluster's few rows */
  if (cluster_max > 16) cluster_max = 16;
  return n <= (int64_t)cluster_max * (128 * 1024) / (bytes > 0 ? bytes : 1);
}
