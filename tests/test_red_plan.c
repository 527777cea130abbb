/* Reduction planning: axes normalisation and its errors, result shapes,
 * kept/reduced loop splitting and merging, and the strategy chosen for the
 * benchmark shapes. Pure arithmetic, no GPU. */
#include "codegen/red_cost.h"
#include "codegen/red_plan.h"
#include "red_sweep_cols_table.h"
#include "red_sweep_table.h"
#include "testutil.h"

static uk_launch axes(const int *ax, int n) {
  uk_launch l;
  memset(&l, 0, sizeof l);
  l.axes = ax;
  l.num_axes = n;
  return l;
}

/* The planner's input for one float32 loop input (vectors of 4) on 132 SMs. */
static uk_red_plan_in f32_in(int group, int64_t nout, int64_t nred, int per_sm, int partial) {
  uk_red_plan_in in = {nout, nred, 4, group, 1, 4, 4, 132, per_sm, 0, 0, 0, partial, 0, 0};
  return in;
}

static void test_axes(void) {
  uint8_t r[UK_MAX_NDIM];
  CHECK_OK(uk__red_axes("k", 3, NULL, r));
  CHECK(r[0] && r[1] && r[2] && !r[3]);
  uk_launch none;
  memset(&none, 0, sizeof none);
  none.reduce_none = 1;
  CHECK_OK(uk__red_axes("k", 3, &none, r));
  CHECK(!r[0] && !r[1] && !r[2]);
  int a1[] = {-1, 0};
  uk_launch l = axes(a1, 2);
  CHECK_OK(uk__red_axes("k", 3, &l, r));
  CHECK(r[0] && !r[1] && r[2]);
  int dup[] = {2, -1};
  l = axes(dup, 2);
  CHECK_STATUS(uk__red_axes("k", 3, &l, r), UK_ERR_SHAPE);
  CHECK_STREQ(uk_last_error(), "k: axis -1 is repeated in axes (axis 2): duplicate value in 'axis'");
  int oob[] = {-4};
  l = axes(oob, 1);
  CHECK_STATUS(uk__red_axes("k", 3, &l, r), UK_ERR_SHAPE);
  CHECK_STREQ(uk_last_error(), "k: axis -4 is out of bounds for an input of ndim 3");
  l = axes(NULL, 1);
  CHECK_STATUS(uk__red_axes("k", 3, &l, r), UK_ERR_INVALID);
  l = axes(a1, 2);
  l.reduce_none = 1;
  CHECK_STATUS(uk__red_axes("k", 3, &l, r), UK_ERR_INVALID);
  int64_t shape[] = {3, 4, 5}, out[UK_MAX_NDIM];
  uint8_t red[UK_MAX_NDIM] = {0, 1, 0};
  int nd = -1;
  uk__red_result_shape(3, shape, red, 0, &nd, out);
  CHECK(nd == 2 && out[0] == 3 && out[1] == 5);
  uk__red_result_shape(3, shape, red, 1, &nd, out);
  CHECK(nd == 3 && out[0] == 3 && out[1] == 1 && out[2] == 5);
}

/* A C-contiguous (or transposed 2-D) input loop of one operand. */
static uk_loop loop_of(int ndim, const int64_t *shape, int64_t item, int transposed) {
  uk_loop L;
  memset(&L, 0, sizeof L);
  L.ndim = ndim;
  L.nops = 1;
  L.size = 1;
  int64_t s = item;
  for (int d = ndim - 1; d >= 0; d--) {
    L.shape[d] = shape[d];
    L.strides[0][d] = s;
    s *= shape[d];
    L.size *= shape[d];
  }
  if (transposed && ndim == 2) {
    L.strides[0][0] = item;
    L.strides[0][1] = item * shape[0];
  }
  return L;
}

static void plan(int ndim, const int64_t *shape, const uint8_t *red, int transposed, uk_red_strategy *s,
                 uk_red_loops *R) {
  uk_loop L = loop_of(ndim, shape, 4, transposed);
  int64_t os[1][UK_MAX_NDIM];
  int on = 0;
  int64_t oshape[UK_MAX_NDIM];
  uk__red_result_shape(ndim, shape, red, 0, &on, oshape);
  int64_t st = 4;
  for (int d = on - 1; d >= 0; d--) {
    os[0][d] = st;
    st *= oshape[d];
  }
  uk__red_split(&L, red, 0, 1, (const int64_t *const[]){os[0]}, R);
  int64_t item = 4;
  uk__red_choose(R, &item, 1, uk__red_vec(4), 132, s);
  /* the program's one kernel is known before the device: every SM count
   * picks a strategy of the same group */
  CHECK(uk__red_group(R, &item, 1, uk__red_vec(4)) == uk__red_kernel_group(s->kernel));
  /* uk__red_group (the key's, before the device) agrees with every
   * strategy uk__red_choose picks, for any SM count, alignment and vector */
  static const int sms[] = {1, 2, 78, 132, 1000}, vecs[] = {1, 2, 4, 8, 16};
  for (int a = 0; a < 2; a++)
    for (int v = 0; v < 5; v++) {
      int group = uk__red_group(R, &item, a, vecs[v]);
      for (int m = 0; m < 5; m++) {
        uk_red_strategy t;
        uk__red_choose(R, &item, a, vecs[v], sms[m], &t);
        CHECK(uk__red_kernel_group(t.kernel) == group);
      }
    }
}

static void test_loops_and_strategy(void) {
  char buf[128];
  uk_red_strategy s;
  uk_red_loops R;
  /* (3, 4, 5, 6) reduce axes 1 and 2: kept (3, 6) stay apart, reduced merge */
  int64_t s4[] = {3, 4, 5, 6};
  uint8_t r12[UK_MAX_NDIM] = {0, 1, 1, 0};
  plan(4, s4, r12, 0, &s, &R);
  CHECK(R.kept.ndim == 2 && R.red.ndim == 1 && R.nout == 18 && R.nred == 20 && R.red.strides[0][0] == 24);
  CHECK(R.kept.strides[1][0] == 24 && R.kept.strides[1][1] == 4); /* the output's strides */
  CHECK(!R.index64);
  /* reduce the last two: kept merges too */
  uint8_t r23[UK_MAX_NDIM] = {0, 0, 1, 1};
  plan(4, s4, r23, 0, &s, &R);
  CHECK(R.kept.ndim == 1 && R.kept.shape[0] == 12 && R.red.ndim == 1 && R.red.shape[0] == 30);
  CHECK(s.kernel == UK_RED_G32 && s.vec == 0); /* 30-element rows of 120 bytes: not 16-byte aligned rows */
  CHECK(uk__red_threads_per_output(&s) == 32);

  int64_t sq[] = {16384, 16384};
  uint8_t rows[UK_MAX_NDIM] = {0, 1}, cols[UK_MAX_NDIM] = {1, 0}, all[UK_MAX_NDIM] = {1, 1};
  plan(2, sq, rows, 0, &s, &R);
  CHECK(s.kernel == UK_RED_B && s.vec && s.nsplit == 1);
  plan(2, sq, cols, 0, &s, &R);
  /* 8 threads per output column, 4 adjacent outputs per thread (float4) */
  CHECK(s.kernel == UK_RED_COLS && s.by == 8 && s.vec && s.slots == 128 && s.grid_x == 128 && s.nsplit > 1);
  CHECK(uk__red_threads_per_output(&s) == 8);
  CHECK(s.nsplit * s.chunk >= 16384 && (s.nsplit - 1) * s.chunk < 16384 && s.chunk % 8 == 0);
  /* one whole wave: 1024 of the 1056 resident blocks (2.06 waves would leave a tail) */
  CHECK(s.nsplit == 8 && s.chunk == 2048);
  CHECK(s.grid_x < 2 * 132 * 8); /* split launches: few block columns (one counter each) */
  CHECK(uk__red_scratch_bytes(&s, 8) == s.grid_x * s.nsplit * 128 * 8);
  /* columns of the transpose are rows of memory */
  plan(2, sq, cols, 1, &s, &R);
  CHECK(s.kernel == UK_RED_B && s.vec);
  plan(2, sq, all, 0, &s, &R);
  CHECK(s.kernel == UK_RED_B && s.vec && s.grid_x == 1 && s.nsplit >= 1000 && s.nsplit <= 1056);
  CHECK(s.chunk % 1024 == 0 && s.nsplit * s.chunk >= (int64_t)1 << 28);
  CHECK(R.index64 == 0); /* 2^28 floats: every byte offset fits int32 */
  CHECK_CONTAINS(uk__red_describe(&s, buf, sizeof buf), "a block per output, vector loads, 1 blocks, split");
  /* short rows (N/k, k) and few outer rows (k, N/k) */
  int64_t k16[] = {(int64_t)1 << 24, 16}, k4096[] = {1 << 16, 4096}, k2[] = {(int64_t)1 << 27, 2};
  plan(2, k16, rows, 0, &s, &R);
  CHECK(s.kernel == UK_RED_T1 && s.vec);
  /* k = 2: two rows of 2 per float4, a one-shot grid of 512 vectors per block */
  plan(2, k2, rows, 0, &s, &R);
  CHECK(s.kernel == UK_RED_PACK && s.vec && s.nsplit == 1 && s.grid_x == ((int64_t)1 << 26) / 512);
  CHECK(uk__red_threads_per_output(&s) == 1 && uk__red_scratch_bytes(&s, 8) == 0);
  CHECK_STREQ(uk__red_describe(&s, buf, sizeof buf), "rows of 2 packed in vectors, vector loads, 131072 blocks");
  /* rows of 2 that do not fill whole vectors, or are not back to back */
  int64_t k2odd[] = {1001, 2};
  plan(2, k2odd, rows, 0, &s, &R);
  CHECK(s.kernel == UK_RED_T1 && !s.vec);
  {
    /* x[:, :2] of an (8, 4) array: rows of 2, 16 bytes apart */
    uk_loop L = loop_of(2, (int64_t[]){8, 2}, 4, 0);
    L.strides[0][0] = 16;
    int64_t os[1][UK_MAX_NDIM] = {{4}}, item = 4;
    uk__red_split(&L, rows, 0, 1, (const int64_t *const[]){os[0]}, &R);
    uk__red_choose(&R, &item, 1, 4, 132, &s);
    CHECK(R.nred == 2 && s.kernel == UK_RED_T1);
    L.strides[0][0] = 8; /* back to back again */
    uk__red_split(&L, rows, 0, 1, (const int64_t *const[]){os[0]}, &R);
    uk__red_choose(&R, &item, 1, 4, 132, &s);
    CHECK(s.kernel == UK_RED_PACK);
    uk__red_choose(&R, &item, 0, 4, 132, &s); /* a base not 16-byte aligned */
    CHECK(s.kernel == UK_RED_T1);
  }
  {
    /* non-adjacent axes (0, 2): vectors along the innermost reduced axis
     * only where it holds whole vectors (none may span two of its rows) */
    int64_t a64[] = {6, 5, 64}, a62[] = {6, 5, 62}, a1024[] = {256, 1024, 1024};
    uint8_t r02[UK_MAX_NDIM] = {1, 0, 1};
    plan(3, a64, r02, 0, &s, &R);
    CHECK(R.red.ndim == 2 && R.nout == 5 && R.nred == 6 * 64 && s.vec && s.kernel != UK_RED_COLS);
    plan(3, a62, r02, 0, &s, &R);
    CHECK(R.red.ndim == 2 && !s.vec);
    plan(3, a1024, r02, 0, &s, &R);
    CHECK(s.kernel == UK_RED_B && s.vec && s.chunk % (256 * 4) == 0);
    /* one contiguous reduced axis: a row of 1001 in rows 1024 apart keeps
     * its vectors (a scalar loop takes the tail) */
    uk_loop L = loop_of(2, (int64_t[]){64, 1001}, 4, 0);
    L.strides[0][0] = 4096;
    int64_t os[1][UK_MAX_NDIM] = {{4}}, item = 4;
    uk__red_split(&L, rows, 0, 1, (const int64_t *const[]){os[0]}, &R);
    uk__red_choose(&R, &item, 1, 4, 132, &s);
    CHECK(s.vec && s.kernel != UK_RED_T1 && s.kernel != UK_RED_COLS);
  }
  {
    /* a warp per 1024-element row where a block per row waited on its
     * combine (the sweep's 1 GiB 262144 x 1024: 78% of the copy rate) */
    int64_t r1024[] = {262144, 1024};
    plan(2, r1024, rows, 0, &s, &R);
    CHECK(s.kernel == UK_RED_G32 && s.vec && uk__red_threads_per_output(&s) == 32 && s.slots == 8);
    CHECK_STREQ(uk__red_describe(&s, buf, sizeof buf), "a warp per output, vector loads, 4224 blocks");
    /* few long columns: narrow tiles (32 outputs a block), one wave of
     * blocks, the split's combine spread over the last block */
    int64_t c256[] = {1 << 20, 256};
    plan(2, c256, cols, 0, &s, &R);
    CHECK(s.kernel == UK_RED_COLS && s.vec && s.by == 32 && s.slots == 32 && s.grid_x == 8 && s.nsplit == 132);
    CHECK(uk__red_scratch_bytes(&s, 4) == 8 * 132 * 32 * 4);
  }
  int64_t k2b[] = {4, 3, 2};
  uint8_t last[UK_MAX_NDIM] = {0, 0, 1};
  int64_t k2big[] = {(int64_t)1 << 35, 2}; /* past 2^24 blocks: a grid-stride loop */
  plan(2, k2big, rows, 0, &s, &R);
  CHECK(s.kernel == UK_RED_PACK && R.index64 && s.grid_x == (int64_t)1 << 24);
  plan(3, k2b, last, 0, &s, &R); /* kept (4, 3) merges to 12: 6 vectors */
  CHECK(s.kernel == UK_RED_PACK && R.kept.ndim == 1 && s.grid_x == 1);
  CHECK(uk__red_threads_per_output(&s) == 1);
  plan(2, k4096, rows, 0, &s, &R);
  CHECK(s.kernel == UK_RED_B && s.vec && uk__red_threads_per_output(&s) == UK_RED_BLOCK);
  int64_t f16[] = {16, (int64_t)1 << 24}, f128[] = {128, (int64_t)1 << 21};
  plan(2, f16, cols, 0, &s, &R);
  CHECK(s.kernel == UK_RED_COLS && s.by == 1 && s.vec && s.nsplit == 1 && s.grid_x == ((int64_t)1 << 24) / 1024);
  CHECK(uk__red_scratch_bytes(&s, 8) == 0);
  plan(2, f128, cols, 0, &s, &R);
  CHECK(s.kernel == UK_RED_COLS && s.by == 8 && s.vec);
  /* an odd row length cannot take vectors of 4 adjacent outputs; columns of 100 rows take a short-column
     tile (cols_short_plan) of 8 threads an output, 12-13 rows each, unsplit */
  int64_t odd[] = {100, 1001};
  plan(2, odd, cols, 0, &s, &R);
  CHECK(s.kernel == UK_RED_COLS && !s.vec && s.slots == 32 && s.by == 8 && s.nsplit == 1);
  /* short columns of float32 up to UK_RED_COLS_SHORT_BYTES (cols_short_plan, session 26): scalar tiles,
   * unsplit, 8-32 rows a thread, the fewest threads an output whose grid gives 1.5 blocks an SM (4096 x 256:
   * 16, 256 blocks; 16384 x 64: 4, 256 blocks), else the most within 8 rows a thread (1024 x 64: 8); rows
   * of a tile never under 64 bytes but of inputs up to UK_RED_COLS_SMALL_BYTES (there down to 16) */
  static const struct {
    int64_t nout, nred;
    int by, vec;
  } narrow[] = {{4096, 256, 16, 0}, {1024, 64, 8, 0},  {256, 64, 8, 0},   {16384, 64, 4, 0},
                {64, 256, 32, 0},   {256, 256, 32, 0}, {1024, 256, 32, 0}, {131072, 32, 2, 0}};
  for (size_t j = 0; j < sizeof narrow / sizeof narrow[0]; j++) {
    uk_red_plan_in in = f32_in(UK_RED_GROUP_COLS, narrow[j].nout, narrow[j].nred, 8, 0);
    uk__red_choose_in(&in, &s);
    CHECK(s.kernel == UK_RED_COLS && s.by == narrow[j].by && s.vec == narrow[j].vec && s.nsplit == 1);
  }
  /* ... of 4-byte elements only: float64 columns keep the model's vector tiles (scalar ones not measured) */
  uk_red_plan_in d64 = {16384, 64, 8, UK_RED_GROUP_COLS, 1, 2, 8, 132, 8, 0, 0, 0, 0, 0, 0};
  uk__red_choose_in(&d64, &s);
  CHECK(s.kernel == UK_RED_COLS && s.vec);
  for (int64_t nout = 16; nout <= ((int64_t)1 << 20); nout *= 4)
    for (int64_t nred = 8; nred <= ((int64_t)1 << 16); nred *= 2)
      for (int vec_ok = 0; vec_ok <= 1; vec_ok++) {
        uk_red_plan_in in = {nout, nred, 4, UK_RED_GROUP_COLS, vec_ok, 4, 4, 132, 8, 0, 0, 0, 0, 0, 0};
        uk__red_choose_in(&in, &s);
        const int64_t row = (UK_RED_BLOCK / s.by) * (s.vec ? 4 : 1) * 4;
        const int64_t shortest =
            nout * nred * 4 <= UK_RED_COLS_SMALL_BYTES ? UK_RED_COLS_SMALL_ROW : UK_RED_COLS_NARROW_ROW;
        CHECK(s.by == 1 || row >= 128 || (row >= shortest && s.nsplit == 1 && nred >= 4 * (int64_t)s.by));
        /* tiles of 2-4 threads an output only unsplit, one-word partials or pairs (session 25: split, the
         * pair's were 0.4-0.5 us slower than 8 threads an output) */
        CHECK(s.by == 1 || s.by >= 8 || s.nsplit == 1);
        in.partial_bytes = 16;
        uk__red_choose_in(&in, &s);
        CHECK(s.by == 1 || s.by >= 8 || s.nsplit == 1);
      }
  /* partials of 16 bytes (argmax's pair): scalar tiles up to UK_RED_COLS_PAIR_SCALAR_BYTES of input, vectors
   * weighed past it but for short columns (cols_short_plan: 16384 outputs of 256, 16 MiB); one-word partials keep
   * their vector plans past the short columns (256 x 16384, 4096 x 4096) */
  static const struct {
    int64_t nout, nred;
    int partial, vec;
  } pairs[] = {{1024, 1024, 16, 0}, {256, 4096, 16, 0}, {16384, 64, 16, 0},   {256, 16384, 4, 1},
               {256, 65536, 16, 1}, {16384, 1024, 16, 1}, {4096, 4096, 4, 1}, {16384, 256, 16, 0}};
  for (size_t j = 0; j < sizeof pairs / sizeof pairs[0]; j++) {
    uk_red_plan_in in = f32_in(UK_RED_GROUP_COLS, pairs[j].nout, pairs[j].nred, 5, pairs[j].partial);
    uk__red_choose_in(&in, &s);
    CHECK(s.kernel == UK_RED_COLS && s.vec == pairs[j].vec);
  }
  /* large offsets need 64-bit arithmetic */
  int64_t big[] = {(int64_t)1 << 20, 1024};
  plan(2, big, rows, 0, &s, &R);
  CHECK(R.index64 == 1);
  /* empty reduced range */
  int64_t e[] = {5, 0};
  plan(2, e, rows, 0, &s, &R);
  CHECK(R.nout == 5 && R.nred == 0 && R.red.ndim == 0 && s.nsplit == 1);
  CHECK_STREQ(uk__red_kernel_suffix(UK_RED_G8), "_g");
  CHECK_STREQ(uk__red_kernel_suffix(UK_RED_T1), "_g");
  CHECK_STREQ(uk__red_kernel_suffix(UK_RED_COLS), "_cols");
  CHECK_STREQ(uk__red_kernel_suffix(UK_RED_NKERNELS), "");
}

/* The plan of a sweep table's point (C-contiguous float32, 132 SMs) and
 * the model's facts for it. */
static void plan_point(int ndim, const int64_t *shape, unsigned reduced, uk_red_strategy *s, uk_red_facts *f) {
  uint8_t red[UK_MAX_NDIM] = {0};
  for (int d = 0; d < ndim; d++) red[d] = (uint8_t)((reduced >> d) & 1);
  uk_red_loops R;
  plan(ndim, shape, red, 0, s, &R);
  uk_red_facts g = {R.nout, R.nred, 4, 4, 4, 0, 0, 0};
  *f = g;
}

/* Every reduction point of the H200 sweep: the plan uk__red_choose picks
 * (red_sweep_table.h), and the cost model against what the sweep measured:
 * within 15% where the plan is the one the sweep ran; where it is a new
 * plan, predicted no slower than the measured one (5% slack); never
 * predicted slower than the fastest alternative the sweep timed (7%: at
 * 1 GiB the model is 2-6% above the copy rate, and two alternatives were
 * timed at the copy rate); and a new plan wherever an alternative measured
 * faster than the plan that ran. */
static void test_sweep_plans(void) {
  char buf[160];
  int same = 0, changed = 0;
  for (size_t j = 0; j < sizeof red_sweep / sizeof red_sweep[0]; j++) {
    const red_sweep_point *p = &red_sweep[j];
    uk_red_strategy s;
    uk_red_facts f;
    plan_point(p->ndim, p->shape, p->reduced, &s, &f);
    double us = uk__red_cost_us(&s, &f, 132), then = p->ms * 1e3, alt = p->alt_ms * 1e3;
    int ok = strcmp(uk__red_describe(&s, buf, sizeof buf), p->plan) == 0, kept = strcmp(p->plan, p->then) == 0;
    if (kept) {
      ok &= us > 0.85 * then && us < 1.15 * then;
      same++;
    } else {
      ok &= us < 1.05 * then;
      changed++;
    }
    if (alt > 0) ok &= us < 1.07 * alt && (alt >= 0.97 * then || !kept);
    ut_checks++;
    if (!ok) {
      ut_failures++;
      fprintf(stderr, "sweep point %zu (%lld, %lld, %lld) reduced 0x%x: %s [table: %s] (%.1f us; measured %.1f, alternative %.1f)\n",
              j, (long long)p->shape[0], (long long)p->shape[1], (long long)p->shape[2], p->reduced, buf, p->plan, us, then,
              alt);
    }
  }
  CHECK(same + changed == 136 && changed > 0);
  printf("sweep points: %d plans as measured, %d new\n", same, changed);
}

/* The column-style points of the second sweep (red_sweep_cols_table.h): the
 * model within 15% of what each plan that ran measured; today's pick never
 * predicted slower than that plan; and where few blocks held the memory
 * system at 63-65% of the copy rate (64 MiB, 256 blocks: 32768 outputs of
 * 512 and 16384 of 1024), a pick of at least twice the blocks, predicted
 * 15% faster. */
static void test_cols_sweep(void) {
  char buf[160], tb[160];
  int n = 0;
  for (size_t j = 0; j < sizeof red_cols_sweep / sizeof red_cols_sweep[0]; j++) {
    const red_cols_point *p = &red_cols_sweep[j];
    uk_red_strategy s;
    uk_red_facts f;
    plan_point(p->ndim, p->shape, p->reduced, &s, &f);
    double then = uk__red_cost_us(&p->then, &f, 132), now = uk__red_cost_us(&s, &f, 132), ms = p->ms * 1e3;
    /* A split of up to 256 MiB keeps at most one round of the last block's
     * loads, which the model prices higher with fewer blocks but the
     * session-11 run measured faster (red_plan.c): the bound, not the model. */
    int64_t most = UK_RED_COLS_CW * (UK_RED_BLOCK / (s.slots < UK_RED_BLOCK ? s.slots : UK_RED_BLOCK));
    int capped = s.nsplit > 1 && p->then.nsplit > most && f.nout * f.nred * 4 <= UK_RED_COLS_CAP_BYTES;
    /* Short columns take cols_short_plan's tile, whatever the model says of it (the model chose vector tiles
     * there that ran 0.2-0.9 us slower, session 26). */
    int rule = f.nout * f.nred * 4 <= UK_RED_COLS_SHORT_BYTES && f.nred <= UK_RED_COLS_SHORT_ROWS;
    int ok = s.kernel == UK_RED_COLS && then > 0.85 * ms && then < 1.15 * ms &&
             (rule ? !s.vec && s.nsplit == 1 && s.by >= 2 && s.by * 32 >= f.nred
                   : capped ? s.nsplit <= most && s.nsplit >= most / 2 : now <= then);
    if (p->ms > 0.02 && p->copy_ms / p->ms < 0.7)
      ok &= s.grid_x * s.nsplit >= 2 * p->then.grid_x * p->then.nsplit && now < then / 1.15;
    n++;
    ut_checks++;
    if (!ok) {
      ut_failures++;
      fprintf(stderr, "cols point %zu (%lld, %lld, %lld) reduced 0x%x: measured %.1f us with %s (model %.1f); now %s (%.1f)\n",
              j, (long long)p->shape[0], (long long)p->shape[1], (long long)p->shape[2], p->reduced, ms,
              uk__red_describe(&p->then, tb, sizeof tb), then, uk__red_describe(&s, buf, sizeof buf), now);
    }
  }
  CHECK(n == 56);
  /* A struct argmax over the first axis of 1024 x 16384 (ncu: 256 blocks, 23.7%
   * occupancy, 48.8 us against CuPy's 36.1): 6 blocks resident per SM, at
   * least twice the blocks, each thread's rows in 8 rounds or fewer. */
  uk_red_plan_in am = {16384, 1024, 4, UK_RED_GROUP_COLS, 1, 4, 4, 132, 6, 0, 0, 0, 0, 0, 0};
  uk_red_strategy s, old = {UK_RED_COLS, 256, 1, 1024, 1, 16, 64, 0, 0, 0};
  uk__red_choose_in(&am, &s);
  uk_red_facts af = {16384, 1024, 4, 4, 4, 6, 0, 0};
  CHECK(s.kernel == UK_RED_COLS && s.grid_x * s.nsplit >= 512 && s.grid_x * s.nsplit <= 2 * 132 * 6);
  CHECK(s.nsplit * s.by >= 32 && uk__red_cost_us(&s, &af, 132) < uk__red_cost_us(&old, &af, 132) / 1.15);
  /* A small problem spreads: 1024 outputs of 16 (64 KiB) over 8 blocks of
   * scalars, 2 threads an output (CuPy's 32 blocks took 3.04 us in the
   * kernel, ukern's vector tiles on 4 took 4.06; the 8 blocks were the
   * fastest forced plan of (16, 32, 32) over axis 0 in session 26, 4.13 us
   * a call against 4.35 on 16 or 32); 32768 outputs of 512 at 64 MiB: 512
   * blocks, not 256. */
  uk_red_plan_in sm = {1024, 16, 4, UK_RED_GROUP_COLS, 1, 4, 4, 132, 8, 0, 0, 0, 0, 0, 0},
                 mid = {32768, 512, 4, UK_RED_GROUP_COLS, 1, 4, 4, 132, 8, 0, 0, 0, 0, 0, 0};
  uk__red_choose_in(&sm, &s);
  CHECK(s.kernel == UK_RED_COLS && s.grid_x * s.nsplit >= 8);
  CHECK_STREQ(uk__red_describe(&s, buf, sizeof buf), "threads across outputs, 2 threads per output, 8 blocks");
  uk__red_choose_in(&mid, &s);
  CHECK(s.vec && s.nsplit == 1 && s.grid_x >= 512);
}

/* A split column's pieces: at most one round of the last block's loads
 * (UK_RED_COLS_CW a thread, 256 / 32 threads a slot: 64) up to 256 MiB of
 * input (H200, session 11: 64 pieces 0.1-3 us faster than a wave of 128-512
 * at 16, 64 and 256 MiB); 1 GiB keeps a wave (132 pieces, not measured).
 * Two rounds where one leaves SMs without a block, from 16 MiB (session 35:
 * 64 columns of 65536 and 262144 rows over 128 pieces 1.0 and 5.1 us faster
 * than over 64; of 16384 rows, 4 MiB, one round still). */
static void test_split_cap(void) {
  static const struct {
    int64_t nout, nred, nsplit;
  } cases[] = {{256, 65536, 64},  {128, 131072, 64}, {64, 65536, 128},  {256, 16384, 64}, {256, 262144, 64},
               {512, 131072, 64}, {256, (int64_t)1 << 20, 132}, {512, 2048, 64}, {64, 262144, 128}, {64, 16384, 64},
               {32, 131072, 128}};
  for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++) {
    uk_red_plan_in in = {cases[j].nout, cases[j].nred, 4, UK_RED_GROUP_COLS, 1, 4, 4, 132, 8, 0, 0, 0, 0, 0, 0};
    uk_red_strategy s;
    uk__red_choose_in(&in, &s);
    int64_t most = UK_RED_COLS_CW * (UK_RED_BLOCK / (s.slots < UK_RED_BLOCK ? s.slots : UK_RED_BLOCK));
    const int64_t bytes = cases[j].nred * cases[j].nout * 4;
    if (s.grid_x * most < 132 && bytes >= UK_RED_COLS_TWO_ROUNDS_BYTES) most *= 2;
    CHECK(s.kernel == UK_RED_COLS && s.nsplit == cases[j].nsplit && !s.swz);
    CHECK(bytes > UK_RED_COLS_CAP_BYTES || s.nsplit <= most);
  }
}

/* Dense rows of 2-16 float32 outputs (the kept loop one axis, rows one
 * after another: uk_red_plan_in.dense) at 64 MiB: a tile however short its
 * row (64 float32 columns' tiles were the narrowest the line rule allowed:
 * 4194304 x 4 ran 119 us with 1 thread of 4 with an output; session 35),
 * at least half the tiles' outputs real: one tile over every output (two
 * outputs: 128 threads each), or for rows of 3, 5, 6 and 7 (no vectors)
 * narrower tiles of 64-128 threads an output (session 36). Without dense
 * (rows apart) the line rule holds. */
static void test_dense_narrow(void) {
  for (int64_t nout = 2; nout <= 16; nout++) {
    const int64_t nred = ((int64_t)64 << 20) / 4 / nout;
    for (int dense = 0; dense < 2; dense++) {
      uk_red_plan_in in = {nout, nred, 4, UK_RED_GROUP_COLS, nout % 4 == 0, 4, 4, 132, 8, 0, 0, 0, 0, 0, dense};
      uk_red_strategy s;
      uk__red_choose_in(&in, &s);
      const int64_t nv = s.vec ? 4 : 1, bx = UK_RED_BLOCK / s.by, has = nout < s.slots ? nout : s.slots;
      CHECK(s.kernel == UK_RED_COLS && s.nsplit > 1);
      (void)has;
      if (dense) /* any tile (rows of at most 64 bytes), at least half of the tiles' outputs real */
        CHECK(s.grid_x * s.slots >= nout && s.grid_x * s.slots < 2 * nout && s.by <= UK_RED_COLS_BY_MAX);
      else
        CHECK(bx * nv * 4 >= UK_RED_COLS_NARROW_ROW && s.by <= 64); /* a tile row of at least 64 bytes */
      /* two outputs: 128 threads each, none idle */
      if (dense && nout == 2) CHECK(s.by == UK_RED_COLS_BY_MAX && !s.vec);
      /* rows of 3, 5, 6 or 7 (at most 32 bytes, no vectors): narrower tiles of more threads an output than a
         whole tile's; the others one tile over every output */
      const int short_row = nout == 3 || (nout >= 5 && nout <= 7);
      if (dense && short_row) CHECK(s.grid_x > 1 && s.by >= 64);
      if (dense && !short_row) CHECK(s.grid_x == 1);
    }
  }
}

/* uk_red_plan_in.dense of a kept axis whose row bytes do not fit int64
 * (2^60 outputs of 16 bytes): not dense, and no overflow on the way (the
 * sanitizer tier runs this); a row's bytes that fit and match: dense. */
static void test_dense_overflow(void) {
  static uk_red_loops R; /* large: uk_loop holds every operand's strides */
  memset(&R, 0, sizeof R);
  R.nin = 1;
  R.kept.ndim = R.red.ndim = 1;
  R.kept.nops = 2;
  R.red.nops = 1;
  R.kept.shape[0] = R.nout = (int64_t)1 << 60;
  R.red.shape[0] = R.nred = 2;
  R.kept.size = R.nout;
  R.red.size = R.nred;
  R.kept.strides[0][0] = 16;
  R.kept.strides[1][0] = 16;
  R.red.strides[0][0] = INT64_MAX;
  R.index64 = 1;
  const int64_t item16 = 16, item4 = 4;
  uk_red_plan_in in;
  uk__red_plan_in(&R, &item16, 1, 1, 132, &in);
  CHECK(in.group == UK_RED_GROUP_COLS && in.dense == 0);
  R.kept.shape[0] = R.nout = R.kept.size = 1000;
  R.kept.strides[0][0] = R.kept.strides[1][0] = 4;
  R.red.strides[0][0] = 4000;
  uk__red_plan_in(&R, &item4, 1, 4, 132, &in);
  CHECK(in.group == UK_RED_GROUP_COLS && in.dense == 1);
  R.red.strides[0][0] = 4004; /* rows apart (a padded pitch) */
  uk__red_plan_in(&R, &item4, 1, 4, 132, &in);
  CHECK(in.group == UK_RED_GROUP_COLS && in.dense == 0);
}

/* Column reductions over slabs (a middle axis reduced: the kept loop has
 * two axes) of 16 to 64 MiB: the widest one-round tile that fills the SMs
 * and leaves a thread at most 8 rows (H200, session 11); not with 16 rows a
 * thread (32768 outputs of 512), nor at 256 MiB, nor without slabs (the
 * model's plan: the default's); short columns of up to 16 MiB take
 * cols_short_plan's scalar tile first (session 26: 65536 outputs of 64, 2
 * threads an output, 8.5 us against the slab tile's 9.3). */
static void test_slab_tiles(void) {
  static const struct {
    int64_t nout, nred;
    int slabs, by;
    int64_t blocks;
    int vec;
  } cases[] = {{65536, 256, 1, 32, 2048, 1},  {131072, 128, 1, 32, 4096, 1}, {524288, 32, 1, 8, 4096, 1},
               {65536, 64, 1, 2, 512, 0},     {16384, 256, 1, 8, 512, 0},    {131072, 32, 1, 2, 1024, 0},
               {32768, 512, 1, 16, 512, 1},   {262144, 256, 1, 8, 2048, 1},  {16384, 64, 1, 4, 256, 0},
               {65536, 256, 0, 8, 512, 1},    {524288, 32, 0, 1, 512, 1}};
  for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++) {
    uk_red_plan_in in = {cases[j].nout, cases[j].nred, 4, UK_RED_GROUP_COLS, 1, 4, 4, 132, 8, 0, cases[j].slabs,
                         0, 0, 0, 0};
    uk_red_strategy s;
    uk__red_choose_in(&in, &s);
    CHECK(s.kernel == UK_RED_COLS && s.vec == cases[j].vec && s.nsplit == 1 && s.by == cases[j].by &&
          s.grid_x == cases[j].blocks);
    if (s.by != cases[j].by || s.grid_x != cases[j].blocks)
      fprintf(stderr, "slab case %zu: %d threads per output, %lld blocks\n", j, s.by, (long long)s.grid_x);
  }
  /* the loops say where the slabs are: (512, 256, 128) axis 1 has them, axis 0 not */
  int64_t sh[] = {512, 256, 128};
  uint8_t r1[UK_MAX_NDIM] = {0, 1, 0}, r0[UK_MAX_NDIM] = {1, 0, 0};
  uk_red_loops R;
  uk_red_strategy s;
  plan(3, sh, r1, 0, &s, &R);
  CHECK(s.by == 32 && s.grid_x == 2048);
  plan(3, sh, r0, 0, &s, &R);
  CHECK(s.by == 16 && s.grid_x == 512);
}

/* UKERN_RED_TUNE's plan knobs (uk__red_force, measurement only): a
 * column plan remade with the given threads per output, vectors and split;
 * anything else, or nothing asked, left alone. */
static void test_cols_force(void) {
  uk_red_plan_in in = {65536, 256, 4, UK_RED_GROUP_COLS, 1, 4, 4, 132, 8, 0, 0, 0, 0, 0, 0};
  uk_red_strategy s, chosen;
  uk__red_choose_in(&in, &chosen);
  s = chosen;
  uk__red_force(&in, 0, -1, 0, -1, 0, &s);
  CHECK(memcmp(&s, &chosen, sizeof s) == 0);
  uk__red_force(&in, 16, -1, 0, -1, 0, &s); /* 16 x 4 outputs a block, the chosen split (none) */
  CHECK(s.kernel == UK_RED_COLS && s.by == 16 && s.vec == 1 && s.slots == 64 && s.grid_x == 1024 && s.nsplit == 1 &&
        s.chunk == 256);
  uk__red_force(&in, 0, 0, 4, 1, 0, &s); /* scalars: 16 outputs a block; 4 pieces of 64 */
  CHECK(s.by == 16 && s.vec == 0 && s.slots == 16 && s.grid_x == 4096 && s.nsplit == 4 && s.chunk == 64 && s.swz);
  uk__red_force(&in, 8, 1, 1000, -1, 0, &s); /* swz kept */ /* pieces of at least 4 rows a thread: 8 of 32 */
  CHECK(s.by == 8 && s.vec == 1 && s.slots == 128 && s.grid_x == 512 && s.nsplit == 8 && s.chunk == 32 && s.swz);
  uk__red_force(&in, 1, 1, 1, -1, 0, &s); /* no split: no swizzle */
  CHECK(s.by == 1 && s.slots == 1024 && s.grid_x == 64 && s.nsplit == 1 && s.chunk == 256 && !s.swz);
  s = chosen;
  uk__red_force(&in, 3, -1, 0, -1, 0, &s); /* not a power of two, or past UK_RED_COLS_BY_MAX: ignored */
  uk__red_force(&in, 2 * UK_RED_COLS_BY_MAX, -1, 0, -1, 0, &s);
  CHECK(memcmp(&s, &chosen, sizeof s) == 0);
  uk_red_plan_in nv = in;
  nv.vec_ok = 0;
  uk__red_force(&nv, 8, 1, 0, -1, 0, &s); /* no vectors where the loops forbid them */
  CHECK(s.vec == 0 && s.slots == 32 && s.grid_x == 2048);
  uk_red_plan_in g = {65536, 256, 4, UK_RED_GROUP_G, 1, 4, 4, 132, 8, 0, 0, 0, 0, 0, 0};
  uk__red_choose_in(&g, &chosen);
  s = chosen;
  uk__red_force(&g, 16, 1, 0, 1, 0, &s); /* a group plan: by, cv and swz ignored */
  CHECK(memcmp(&s, &chosen, sizeof s) == 0);
  /* its split: one block column per output group, pieces of at least a round of loads */
  uk_red_plan_in full = {1, 1 << 20, 4, UK_RED_GROUP_G, 1, 4, 4, 132, 8, 0, 0, 0, 0, 0, 0};
  uk__red_choose_in(&full, &chosen);
  CHECK(chosen.kernel == UK_RED_B && chosen.nsplit > 1);
  s = chosen;
  uk__red_force(&full, 0, -1, 64, -1, 0, &s);
  CHECK(s.kernel == UK_RED_B && s.grid_x == 1 && s.nsplit == 64 && s.chunk == 16384);
  uk__red_force(&full, 0, -1, 1, -1, 0, &s);
  CHECK(s.nsplit == 1 && s.chunk == 1 << 20);
  uk__red_force(&full, 0, -1, 1 << 20, -1, 0, &s); /* at least 4 vectors a thread: 256 pieces */
  CHECK(s.nsplit == 256 && s.chunk == 4096);
  uk__red_choose_in(&g, &s);
  uk__red_force(&g, 0, -1, 2, -1, 0, &s); /* 65536 rows of 256 split in 2: a block column each group */
  CHECK(s.nsplit == 2 && s.chunk == 128 && s.grid_x * s.slots >= 65536);
  /* g: another group of threads an output, unsplit unless sp says, on the model's grid (at most 4 waves) */
  uk__red_choose_in(&g, &s);
  uk__red_force(&g, 0, -1, 0, -1, 32, &s);
  CHECK(s.kernel == UK_RED_G32 && s.slots == 8 && s.nsplit == 1 && s.chunk == 256 && s.grid_x == 132 * 8 * 4);
  uk__red_force(&g, 0, -1, 4, -1, UK_RED_BLOCK, &s); /* a block's pieces need 4096 elements: rows of 256 unsplit */
  CHECK(s.kernel == UK_RED_B && s.slots == 1 && s.nsplit == 1 && s.chunk == 256 && s.grid_x == 65536);
  uk__red_force(&g, 0, -1, 0, -1, 1, &s);
  CHECK(s.kernel == UK_RED_T1 && s.slots == UK_RED_BLOCK && s.nsplit == 1 && s.grid_x == 256);
  uk__red_force(&g, 0, -1, 0, -1, 16, &s); /* not a group's width: ignored */
  CHECK(s.kernel == UK_RED_T1 && s.nsplit == 1);
  uk__red_choose_in(&in, &chosen); /* g leaves a column plan alone */
  s = chosen;
  uk__red_force(&in, 0, -1, 0, -1, 32, &s);
  CHECK(s.kernel == UK_RED_COLS && memcmp(&s, &chosen, sizeof s) == 0);
}

/* Group plans with a partial of 16 bytes (argmax's pair, red_plan.c
 * choose_group): the fewest threads an output first, unsplit where the
 * outputs give every SM a block, a block an output only for rows longer
 * than 1024 or few outputs (H200, session 26, fused argmax over the last
 * axis); one-word partials keep theirs. */
static void test_wide_rows(void) {
  static const struct {
    int64_t nout, nred;
    int partial, kernel, nsplit;
  } cases[] = {{1024, 1024, 16, UK_RED_G32, 1},  {16384, 1024, 16, UK_RED_G8, 1}, {4096, 1024, 16, UK_RED_G32, 1},
               {1024, 4096, 16, UK_RED_B, 1},    {16, 65536, 16, UK_RED_G32, 128}, {1024, 1024, 4, UK_RED_B, 1},
               {256, 1024, 16, UK_RED_B, 1},
               {16384, 1024, 4, UK_RED_G32, 1}};
  for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++)
    for (int per_sm = cases[j].partial == 16 ? 5 : 8; per_sm <= 8; per_sm += 3) { /* column, row argmax kernels */
      uk_red_plan_in in = f32_in(UK_RED_GROUP_G, cases[j].nout, cases[j].nred, per_sm, cases[j].partial);
      uk_red_strategy s;
      uk__red_choose_in(&in, &s);
      CHECK(s.kernel == cases[j].kernel && s.nsplit == cases[j].nsplit);
      if (s.kernel != cases[j].kernel || s.nsplit != cases[j].nsplit)
        fprintf(stderr, "wide rows case %zu (%d an SM): kernel %d, %lld pieces\n", j, per_sm, s.kernel,
                (long long)s.nsplit);
    }
}

/* Short vector rows (uk__red_narrow_lanes): threads a row whose loads are
 * about 32 bytes each, in a narrow program only; the measured H200 cases. */
static void test_narrow_lanes(void) {
  CHECK(uk__red_narrow_lanes(16, 8, 4) == 4);  /* two float32 inputs, rows of 16 (a thread each before) */
  CHECK(uk__red_narrow_lanes(32, 4, 4) == 4);  /* one float32 input, rows of 32 (8 threads before) */
  CHECK(uk__red_narrow_lanes(24, 4, 4) == 2 && uk__red_narrow_lanes(17, 4, 4) == 2);
  CHECK(uk__red_narrow_lanes(16, 4, 4) == 0);  /* 64 bytes: a thread */
  CHECK(uk__red_narrow_lanes(32, 8, 4) == 0);  /* 256 bytes: 8 threads */
  CHECK(uk__red_narrow_lanes(33, 4, 4) == 0);  /* more than 8 vectors */
  CHECK(uk__red_narrow_lanes(4, 32, 4) == 0);  /* one vector */
  CHECK(uk__red_narrow_lanes(32, 4, 1) == 0 && uk__red_narrow_lanes(32, 0, 4) == 0);
  CHECK(uk__red_narrow_lanes(16, 8, 2) == 4);  /* rows of 16 float64 */
  CHECK(uk__red_narrow_lanes(INT64_MAX, 4, 4) == 0);
  /* the plan: G8 of that many threads where the program is narrow and vectors go; else as before */
  static const struct {
    int64_t nout, nred, elem;
    int vec_ok, narrow, kernel, threads;
  } cases[] = {
      {1 << 20, 16, 8, 1, 1, UK_RED_G8, 4}, {1 << 20, 16, 8, 1, 0, UK_RED_T1, 1},
      {1 << 20, 16, 8, 0, 1, UK_RED_T1, 1}, {1 << 19, 32, 4, 1, 1, UK_RED_G8, 4},
      {1 << 19, 32, 4, 1, 0, UK_RED_G8, 8}, {1 << 19, 32, 4, 0, 1, UK_RED_G8, 8},
      {1 << 19, 24, 4, 1, 1, UK_RED_G8, 2}, {1 << 20, 16, 4, 1, 1, UK_RED_T1, 1},
      {100, 32, 4, 1, 1, UK_RED_G8, 4},
  };
  for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++) {
    uk_red_plan_in in = {cases[j].nout, cases[j].nred, cases[j].elem, UK_RED_GROUP_G, cases[j].vec_ok, 4, 4, 132, 8,
                         0, 0, cases[j].narrow, 0, 0, 0};
    uk_red_strategy s;
    uk__red_choose_in(&in, &s);
    CHECK(s.kernel == cases[j].kernel && uk__red_threads_per_output(&s) == cases[j].threads && s.nsplit == 1);
    CHECK(s.vec == cases[j].vec_ok && s.slots * uk__red_threads_per_output(&s) == UK_RED_BLOCK);
    if (s.kernel != cases[j].kernel || uk__red_threads_per_output(&s) != cases[j].threads)
      fprintf(stderr, "  narrow plan %zu: kernel %d, %d threads\n", j, s.kernel, uk__red_threads_per_output(&s));
  }
  uk_red_strategy s = {UK_RED_G8, 4096, 1, 16, 1, 4, 64, 0, 0, 0};
  char buf[96];
  CHECK_STREQ(uk__red_describe(&s, buf, sizeof buf), "4 threads per output, vector loads, 4096 blocks");
}

/* The model's terms one at a time (132 SMs, float32 rows, vectors of 4). */
static void test_cost_terms(void) {
  uk_red_facts f = {262144, 1024, 4, 4, 4, 0, 0, 0};
  uk_red_strategy b = {UK_RED_B, 4224, 1, 1024, 1, 0, 1, 0, 0, 0}, w = b;
  w.kernel = UK_RED_G32;
  w.slots = 8;
  /* a block per 1024-element row waits on a block-wide combine per output;
   * a warp per row streams */
  CHECK(uk__red_cost_us(&b, &f, 132) > 1.2 * uk__red_cost_us(&w, &f, 132));
  /* no outputs: nothing runs */
  uk_red_facts none = {0, 1024, 4, 4, 4, 0, 0, 0};
  CHECK(uk__red_cost_us(&b, &none, 132) == 0);
  /* the same plan on fewer SMs is never faster */
  CHECK(uk__red_cost_us(&w, &f, 66) >= uk__red_cost_us(&w, &f, 132));
  /* a column split's combine: many partials per slot cost more than few */
  uk_red_facts c = {256, 1048576, 4, 4, 4, 0, 0, 0};
  uk_red_strategy wide = {UK_RED_COLS, 2, 528, 1992, 1, 8, 128, 0, 0, 0},
                  narrow = {UK_RED_COLS, 8, 132, 7968, 1, 32, 32, 0, 0, 0};
  CHECK(uk__red_cost_us(&wide, &c, 132) > uk__red_cost_us(&narrow, &c, 132));
  /* fewer resident blocks (a struct argmax's 3 per SM): the same grid runs
   * in more waves, and the planner fills the waves that fit */
  uk_red_facts c3 = c;
  c3.per_sm = 3;
  CHECK(uk__red_cost_us(&narrow, &c3, 132) >= uk__red_cost_us(&narrow, &c, 132));
  int64_t shape[2] = {1 << 20, 256}, item = 4;
  uk_loop L = loop_of(2, shape, 4, 0);
  uint8_t cols[UK_MAX_NDIM] = {1, 0};
  int64_t os[1][UK_MAX_NDIM] = {{4}};
  uk_red_loops R;
  uk__red_split(&L, cols, 0, 1, (const int64_t *const[]){os[0]}, &R);
  uk_red_plan_in in;
  uk_red_strategy s8, s3, s0;
  uk__red_plan_in(&R, &item, 1, 4, 132, &in);
  CHECK(in.per_sm == 8 && in.group == UK_RED_GROUP_COLS && in.vec_ok && in.elem_bytes == 4);
  uk__red_choose_in(&in, &s8);
  in.per_sm = 3;
  uk__red_choose_in(&in, &s3);
  CHECK(s3.kernel == UK_RED_COLS && s3.grid_x * s3.nsplit <= 132 * 3 * 2 && s3.grid_x * s3.nsplit < s8.grid_x * s8.nsplit);
  in.per_sm = 0; /* out of range: a full SM */
  uk__red_choose_in(&in, &s0);
  CHECK(memcmp(&s0, &s8, sizeof s0) == 0);
}

/* Zero-size loops whose other extents multiply past int64: split with no
 * overflow (UBSan checks), the empty part 0 and the other saturated. */
/* Deep programs (two float32 inputs, launch bounds for 4 blocks an SM):
 * one output group a block once a thread loads 64 bytes or more an output
 * (H200: rows of 128 to 8192 1-3% faster than the 4-wave grid-stride
 * loop), the loop below that (rows of 32: the loop 4-7% faster); a program
 * that is not deep keeps the loop. From 128 MiB read, the largest group
 * whose threads load 64 bytes an output. */
/* The first-round term of the cost model is a deep program's only: a one-
 * input full sum of 2^18 float32 keeps a block per output over 64 splits
 * of 4096 (512 splits of 512 took it 6.7 -> 8.1 us and argmax 9.1 -> 14.4 us
 * on an H200). Two inputs of the same bytes took a warp per output over 512
 * splits until session 15; the per-piece arrival at the split's counter
 * (ARRIVE_US: 0.8 us at 512 pieces) gives them the 64 splits too; the term
 * still tells the 64 KiB row sums of two inputs apart from one input's. */
static void test_first_round_deep_only(void) {
  char buf[160];
  for (int deep = 0; deep <= 1; deep++) {
    uk_red_plan_in in;
    memset(&in, 0, sizeof in);
    in.nout = 1;
    in.nred = 262144;
    in.elem_bytes = deep ? 8 : 4;
    in.group = UK_RED_GROUP_G;
    in.vec_ok = 1;
    in.vec = 4;
    in.itemsize = 4;
    in.sms = 132;
    in.per_sm = 8;
    in.deep = deep;
    uk_red_strategy s;
    uk__red_choose_in(&in, &s);
    ut_checks++;
    int ok = s.kernel == UK_RED_B && s.nsplit == 64;
    if (!ok) {
      ut_failures++;
      fprintf(stderr, "first round, deep %d: %s\n", deep, uk__red_describe(&s, buf, sizeof buf));
    }
    /* the 64 KiB row sums of two inputs (rows of 128): 4 blocks whose first
     * round is 32 KiB each without the term, 16 blocks with it */
    in.nout = 128;
    in.nred = 128;
    in.elem_bytes = 8;
    uk__red_choose_in(&in, &s);
    CHECK(s.nsplit == 1 && s.grid_x == (deep ? 16 : 4));
  }
}

static void test_deep_grid(void) {
  static const struct {
    int64_t nout, nred;
    int per_sm, deep;
    int kernel;
    int64_t grid;
  } cases[] = {
      {131072, 128, 4, 1, UK_RED_G8, 131072 / 32},    /* 16 elements x 8 bytes a thread */
      {131072, 128, 4, 0, UK_RED_G8, 132 * 4 * 4},    /* not deep: 4 waves */
      {32768, 2048, 4, 1, UK_RED_B, 32768},           /* 8 x 8 bytes a thread: one output a block */
      {32768, 2048, 8, 0, UK_RED_B, 132 * 8 * 4},
      {2097152, 32, 6, 1, UK_RED_G8, 132 * 6 * 4},    /* 4 x 8 = 32 bytes: the loop, deep or not */
      /* 128 MiB and more: the largest group of 64 bytes a thread (the model ties) */
      {131072, 512, 4, 1, UK_RED_G32, 131072 / 8},    /* a warp: 16 x 8 bytes; 8 threads below */
      {131072, 512, 4, 0, UK_RED_G8, 132 * 4 * 4},    /* not deep: the model's first, 8 threads */
      {32768, 512, 4, 1, UK_RED_G32, 32768 / 8},      /* 128 MiB */
      {16384, 512, 4, 1, UK_RED_G8, 16384 / 32},      /* 64 MiB: the model's pick */
      {1024, 65536, 4, 1, UK_RED_B, 1024},
  };
  char buf[160];
  for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++) {
    uk_red_plan_in in;
    memset(&in, 0, sizeof in);
    in.nout = cases[j].nout;
    in.nred = cases[j].nred;
    in.elem_bytes = 8;
    in.group = UK_RED_GROUP_G;
    in.vec_ok = 1;
    in.vec = 4;
    in.itemsize = 4;
    in.sms = 132;
    in.per_sm = cases[j].per_sm;
    in.deep = cases[j].deep;
    uk_red_strategy s;
    uk__red_choose_in(&in, &s);
    ut_checks++;
    if (s.kernel != cases[j].kernel || s.grid_x != cases[j].grid || s.nsplit != 1) {
      ut_failures++;
      fprintf(stderr, "deep grid case %zu (%lld x %lld): %s\n", j, (long long)cases[j].nout, (long long)cases[j].nred,
              uk__red_describe(&s, buf, sizeof buf));
    }
  }
}

static void test_empty_huge(void) {
  int64_t shape[3] = {INT64_MAX / 2, 5, 0}, strides[3] = {0, 0, 8};
  uk_operand_view v = {"x", 3, shape, strides, 8};
  uk_loop L;
  CHECK_OK(uk__shape_broadcast(1, &v, &L));
  CHECK(L.size == 0);
  int64_t os[1][UK_MAX_NDIM] = {{8, 8, 8}};
  uk_red_loops R;
  uint8_t r01[UK_MAX_NDIM] = {1, 1, 0}, r2[UK_MAX_NDIM] = {0, 0, 1};
  uk__red_split(&L, r01, 0, 1, (const int64_t *const[]){os[0]}, &R);
  CHECK(R.nout == 0 && R.nred == INT64_MAX && R.kept.size == 0);
  uk_red_strategy s;
  int64_t item = 8;
  uk__red_choose(&R, &item, 1, uk__red_vec(8), 132, &s);
  CHECK(s.grid_x == 0);
  uk__red_split(&L, r2, 0, 1, (const int64_t *const[]){os[0]}, &R);
  CHECK(R.nout == INT64_MAX && R.nred == 0 && R.red.ndim == 0);
  uk__red_choose(&R, &item, 1, uk__red_vec(8), 132, &s); /* sizes a grid only: nothing divides by 0 or overflows */
  CHECK(s.grid_x > 0 && s.nsplit == 1);
}

/* Tiny reductions (UK_RED_TINY elements or fewer: issue 24's bench rows
 * n=1 and n=1024) run in one pass: never split, on any device, whatever
 * the kernel's occupancy, element size and alignment; the bench's two
 * plans are 080bbb4's (a thread per output for n=1; a block per output
 * with vector loads for 1024 aligned floats, one block). Past the limit a
 * lone output may split again (the model's choice). */

/* The description of 65536 float32 elements' plan over a cluster. */
static void in_cluster_describe(char *buf, int size) {
  uk_red_plan_in in = {1, 65536, 4, UK_RED_GROUP_G, 1, 4, 4, 132, 8, 0, 0, 0, 0, 16, 0};
  uk_red_strategy s;
  uk__red_choose_in(&in, &s);
  uk__red_describe(&s, buf, size);
}
static void test_tiny(void) {
  static const struct {
    int64_t r, c;
    int axis; /* -1: all */
  } shapes[] = {{1, 1, -1},  {1, 16, -1},  {1, 1024, -1}, {1, 4096, -1}, {16, 16, 1}, {64, 2, 0},
                {64, 64, 0}, {128, 2, 0}, {128, 32, 0},  {2, 2048, 1},  {4096, 1, 0}, {63, 65, 0}};
  static const int sms[] = {1, 2, 78, 114, 132, 1000};
  int splits = 0;
  for (size_t j = 0; j < sizeof shapes / sizeof shapes[0]; j++)
    for (int item = 1; item <= 16; item *= 2)
      for (int aligned = 0; aligned < 2; aligned++)
        for (size_t m = 0; m < sizeof sms / sizeof sms[0]; m++)
          for (int per_sm = 1; per_sm <= 8; per_sm++) {
            uk_loop L = loop_of(2, (int64_t[]){shapes[j].r, shapes[j].c}, item, 0);
            uint8_t red[UK_MAX_NDIM] = {0};
            if (shapes[j].axis < 0) red[0] = red[1] = 1;
            else red[shapes[j].axis] = 1;
            int64_t os[1][UK_MAX_NDIM] = {{item}}, it = item;
            uk_red_loops R;
            uk__red_split(&L, red, 0, 1, (const int64_t *const[]){os[0]}, &R);
            uk_red_plan_in in;
            uk_red_strategy s;
            uk__red_plan_in(&R, &it, aligned, uk__red_vec(item), sms[m], &in);
            in.per_sm = per_sm;
            uk__red_choose_in(&in, &s);
            splits += s.nsplit != 1 || uk__red_scratch_bytes(&s, 16) != 0;
            /* the key's test (its group program then has no split pass) agrees */
            splits += !uk__red_tiny(in.nout, in.nred);
          }
  CHECK(splits == 0);
  int64_t n1[] = {1}, n1024[] = {1024}, n8192[] = {8192}, item = 4;
  uint8_t all[UK_MAX_NDIM] = {1};
  uk_red_loops R;
  uk_red_strategy s;
  char buf[128];
  uk_loop L = loop_of(1, n1, 4, 0);
  int64_t os[1][UK_MAX_NDIM] = {{4}};
  uk__red_split(&L, all, 0, 1, (const int64_t *const[]){os[0]}, &R);
  uk__red_choose(&R, &item, 1, 4, 132, &s);
  CHECK_STREQ(uk__red_describe(&s, buf, sizeof buf), "a thread per output, 1 blocks");
  L = loop_of(1, n1024, 4, 0);
  uk__red_split(&L, all, 0, 1, (const int64_t *const[]){os[0]}, &R);
  uk__red_choose(&R, &item, 1, 4, 132, &s);
  CHECK_STREQ(uk__red_describe(&s, buf, sizeof buf), "a block per output, vector loads, 1 blocks");
  L = loop_of(1, n8192, 4, 0);
  uk__red_split(&L, all, 0, 1, (const int64_t *const[]){os[0]}, &R);
  uk__red_choose(&R, &item, 0, 4, 132, &s); /* not aligned: scalar loads */
  CHECK(s.nsplit > 1 && s.grid_x == 1 && !uk__red_tiny(R.nout, R.nred) && !s.block);
  /* aligned, one output of UK_RED_TINY + 1 to UK_RED_WIDE_MAX elements: one block of 1024
     threads, unsplit (uk__red_wide), its threads per output the block's */
  const int64_t wides[] = {UK_RED_TINY + 4, 8192, UK_RED_WIDE_MAX};
  for (int j = 0; j < 3; j++) {
    L = loop_of(1, &wides[j], 4, 0);
    uk__red_split(&L, all, 0, 1, (const int64_t *const[]){os[0]}, &R);
    uk__red_choose(&R, &item, 1, 4, 132, &s);
    CHECK_STREQ(uk__red_describe(&s, buf, sizeof buf), "a block of 1024 threads per output, vector loads, 1 blocks");
    CHECK(s.block == UK_RED_WIDE_BLOCK && s.nsplit == 1 && s.chunk == wides[j] &&
          uk__red_threads_per_output(&s) == UK_RED_WIDE_BLOCK &&
          uk__red_block_threads(&s) == UK_RED_WIDE_BLOCK && uk__red_scratch_bytes(&s, 4) == 0);
  }
  /* past it, two outputs, or another group: not wide */
  CHECK(uk__red_wide(UK_RED_GROUP_G, 1, UK_RED_WIDE_MAX, 1) && !uk__red_wide(UK_RED_GROUP_G, 1, UK_RED_WIDE_MAX + 1, 1));
  CHECK(!uk__red_wide(UK_RED_GROUP_G, 1, UK_RED_TINY, 1) && !uk__red_wide(UK_RED_GROUP_G, 2, 8192, 1));
  CHECK(!uk__red_wide(UK_RED_GROUP_COLS, 1, 8192, 1) && !uk__red_wide(UK_RED_GROUP_G, 1, 8192, 0));
  int64_t past = UK_RED_WIDE_MAX + 4;
  L = loop_of(1, &past, 4, 0);
  uk__red_split(&L, all, 0, 1, (const int64_t *const[]){os[0]}, &R);
  uk__red_choose(&R, &item, 1, 4, 132, &s);
  CHECK(!s.block && s.nsplit > 1 && uk__red_block_threads(&s) == UK_RED_BLOCK && !s.cluster);
  /* with the device's clusters (cluster_max): one output of UK_RED_WIDE_MAX + 1 to 8 x
     UK_RED_WIDE_MAX elements over a cluster of up to 8 blocks (the most first, of 256 threads,
     then wider blocks), in pieces of whole vectors, no scratch; none past 8 blocks of 1024, past
     the device's clusters, or without them */
  static const struct {
    int64_t nred;
    int cmax, c, block;
    int64_t chunk;
  } cl[] = {{UK_RED_WIDE_MAX + 1, 16, 8, 256, 2052}, {32768, 16, 8, 256, 4096}, {32769, 16, 8, 512, 4100},
            {65536, 16, 8, 512, 8192},              {65537, 16, 8, 1024, 8196}, {100003, 8, 8, 1024, 12504},
            {131072, 16, 8, 1024, 16384},           {131073, 16, 0, 0, 0},      {65537, 4, 0, 0, 0},
            {65536, 4, 4, 1024, 16384},             {20000, 2, 2, 1024, 10000}, {20000, 1, 0, 0, 0},
            {20000, 0, 0, 0, 0}};
  for (size_t j = 0; j < sizeof cl / sizeof cl[0]; j++) {
    L = loop_of(1, &cl[j].nred, 4, 0);
    uk__red_split(&L, all, 0, 1, (const int64_t *const[]){os[0]}, &R);
    uk_red_plan_in in;
    uk__red_plan_in(&R, &item, 1, 4, 132, &in);
    in.cluster_max = cl[j].cmax;
    uk__red_choose_in(&in, &s);
    int block = -1;
    CHECK(uk__red_wide_cluster(in.group, in.nout, in.nred, in.vec_ok, in.cluster_max, &block) == cl[j].c &&
          block == cl[j].block);
    CHECK(s.cluster == cl[j].c && (!s.cluster || (s.kernel == UK_RED_B && s.block == cl[j].block && s.grid_x == 1 &&
                                                   s.nsplit == s.cluster && s.chunk == cl[j].chunk &&
                                                   uk__red_threads_per_output(&s) == cl[j].block &&
                                                   uk__red_scratch_bytes(&s, 8) == 0)));
    CHECK(uk__red_unsplit_block(&in) == cl[j].block);
    if (s.cluster != cl[j].c || s.block != cl[j].block)
      fprintf(stderr, "  cluster plan %zu: %d blocks of %d\n", j, s.cluster, s.block);
  }
  in_cluster_describe(buf, sizeof buf);
  CHECK_STREQ(buf, "a cluster of 8 blocks of 512 threads per output, vector loads, pieces of 8192");
  /* two outputs, scalar loads or columns: no cluster */
  CHECK(!uk__red_wide_cluster(UK_RED_GROUP_G, 2, 65536, 1, 16, NULL) &&
        !uk__red_wide_cluster(UK_RED_GROUP_G, 1, 65536, 0, 16, NULL));
  CHECK(!uk__red_wide_cluster(UK_RED_GROUP_COLS, 1, 65536, 1, 16, NULL) &&
        !uk__red_wide_cluster(UK_RED_GROUP_G, 1, 16384, 1, 16, NULL));
}

/* Partials wider than a word cost each block (red_cost.c's WIDE_BLOCK_US):
 * a column argmax (16-byte pairs, 4 blocks per SM) over the first axis of
 * 1024 x 4096 took 16.5 us with the 1024 blocks a float32's plan has, 12.4
 * with 512 of 32 threads an output (H200, session 18); the float32 plan
 * (4-byte partials, or 0: not known) does not move. */
static void test_wide_partials(void) {
  uk_red_plan_in f32 = {4096, 1024, 4, UK_RED_GROUP_COLS, 1, 4, 4, 132, 4, 0, 0, 0, 0, 0, 0}, f32b = f32, pair = f32;
  f32b.partial_bytes = 4;
  pair.partial_bytes = 16;
  uk_red_strategy a, b, p;
  uk__red_choose_in(&f32, &a);
  uk__red_choose_in(&f32b, &b);
  uk__red_choose_in(&pair, &p);
  CHECK(memcmp(&a, &b, sizeof a) == 0);
  CHECK(a.kernel == UK_RED_COLS && a.grid_x * a.nsplit == 1024);
  CHECK(p.kernel == UK_RED_COLS && p.grid_x * p.nsplit <= 512 && p.grid_x * p.nsplit >= 132);
  uk_red_facts wf = {4096, 1024, 4, 4, 4, 4, 0, 0}, wp = wf;
  wp.partial_bytes = 16;
  CHECK(uk__red_cost_us(&a, &wf, 132) == uk__red_cost_us(&a, &(uk_red_facts){4096, 1024, 4, 4, 4, 4, 0, 4}, 132));
  /* each block past the first per SM: 3 words past the first, WIDE_BLOCK_US each */
  const double extra = uk__red_cost_us(&a, &wp, 132) - uk__red_cost_us(&a, &wf, 132);
  CHECK(extra > 3 * 0.4 * 7.5 && extra < 3 * 0.4 * 8.5);
  /* below 4 MiB in proportion to the bytes: 256 outputs of 1024 (1 MiB), a quarter */
  uk_red_facts sf = {256, 1024, 4, 4, 4, 4, 0, 0}, sp = sf;
  sp.partial_bytes = 16;
  uk_red_strategy t = a;
  t.grid_x = 8;
  t.nsplit = 32;
  t.chunk = 32;
  const double small = uk__red_cost_us(&t, &sp, 132) - uk__red_cost_us(&t, &sf, 132);
  CHECK(small > 3 * 0.4 * 2 / 4 * 0.99 && small < 3 * 0.4 * 2 / 4 * 1.01); /* 256 blocks: 2 per SM */
}

/* A quarter to twice as many outputs as SMs of 4097-16384 elements with
 * vector loads: a block of UK_RED_ROWS_BLOCK threads an output, never split
 * (uk__red_block_rows, before the model); a deep program's a block of
 * UK_RED_BLOCK, below half the SMs rows of at most 32768 x outputs / SMs;
 * elsewhere the model's plan. */
static void test_block_rows(void) {
  static const struct {
    int64_t shape[3];
    int ndim;
    unsigned reduced;
    int block; /* 1: a block an output, unsplit */
  } t[] = {
      {{128, 8192}, 2, 0x2, 1},       {{66, 8192}, 2, 0x2, 1},       {{264, 16384}, 2, 0x2, 1},
      {{128, 4100}, 2, 0x2, 1},       {{128, 64, 128}, 3, 0x6, 1},   {{64, 128, 128}, 3, 0x5, 1},
      {{65, 8192}, 2, 0x2, 1},        {{64, 12288}, 2, 0x2, 1},      {{33, 8192}, 2, 0x2, 1},
      {{64, 16384}, 2, 0x2, 1},       {{32, 8192}, 2, 0x2, 0},       {{40, 12288}, 2, 0x2, 1},
      {{33, 16384}, 2, 0x2, 1},       {{16, 16384}, 2, 0x2, 0},      {{128, 64, 128}, 3, 0x5, 1},
      {{265, 8192}, 2, 0x2, 0}, /* the model's */
      {{128, 16388}, 2, 0x2, 0},      {{8192, 128}, 2, 0x1, 0}, /* columns: COLS */
  };
  for (size_t j = 0; j < sizeof t / sizeof t[0]; j++) {
    uint8_t red[UK_MAX_NDIM] = {0};
    for (int d = 0; d < t[j].ndim; d++) red[d] = (uint8_t)((t[j].reduced >> d) & 1);
    uk_red_strategy s;
    uk_red_loops R;
    plan(t[j].ndim, t[j].shape, red, 0, &s, &R);
    int block = s.kernel == UK_RED_B && s.block == UK_RED_ROWS_BLOCK && s.nsplit == 1 && s.grid_x == R.nout &&
                s.slots == 1 && s.vec && uk__red_block_threads(&s) == UK_RED_ROWS_BLOCK &&
                uk__red_threads_per_output(&s) == UK_RED_ROWS_BLOCK && uk__red_scratch_bytes(&s, 4) == 0;
    CHECK(block || s.block == 0);
    if (block != t[j].block) {
      char buf[160];
      fprintf(stderr, "block rows (%lld, %lld, %lld) reduced 0x%x: %s\n", (long long)t[j].shape[0],
              (long long)t[j].shape[1], (long long)t[j].shape[2], t[j].reduced, uk__red_describe(&s, buf, sizeof buf));
    }
    CHECK(block == t[j].block);
  }
  CHECK(uk__red_block_rows(128, 8192, 1, 132, 0) == 1 && uk__red_block_rows(128, 8192, 0, 132, 0) == 0);
  CHECK(uk__red_block_rows(66, 4097, 1, 132, 0) == 1 && uk__red_block_rows(66, 4096, 1, 132, 0) == 0);
  CHECK(uk__red_block_rows(33, 16384, 1, 132, 0) == 1 && uk__red_block_rows(33, 16385, 1, 132, 0) == 0);
  CHECK(uk__red_block_rows(32, 4100, 1, 132, 0) == 0); /* fewer than a quarter of the SMs */
  CHECK(uk__red_block_rows(16, 8192, 1, 64, 0) == 1 && uk__red_block_rows(15, 8192, 1, 64, 0) == 0);
  CHECK(uk__red_block_rows(264, 16384, 1, 132, 0) == 1 && uk__red_block_rows(264, 16385, 1, 132, 0) == 0);
  CHECK(uk__red_block_rows(1, 8192, 1, 0, 0) == 1 && uk__red_block_rows(3, 8192, 1, 1, 0) == 0);
  /* deep: below half the SMs, rows of at most 32768 x outputs / SMs */
  CHECK(uk__red_block_rows(66, 16384, 1, 132, 1) == 1 && uk__red_block_rows(65, 16384, 1, 132, 1) == 0);
  CHECK(uk__red_block_rows(33, 8192, 1, 132, 1) == 1 && uk__red_block_rows(33, 8193, 1, 132, 1) == 0);
  CHECK(uk__red_block_rows(128, 8192, 1, 132, 1) == 1 && uk__red_block_rows(32, 4100, 1, 132, 1) == 0);
  /* the program's block: a wide plan's, a block-rows plan's on these SMs, else 0 */
  uk_red_plan_in in = {128, 8192, 4, UK_RED_GROUP_G, 1, 4, 4, 132, 8, 0, 0, 0, 0, 0, 0};
  CHECK(uk__red_unsplit_block(&in) == UK_RED_ROWS_BLOCK);
  in.sms = 600; /* fewer outputs than a quarter of the SMs */
  CHECK(uk__red_unsplit_block(&in) == 0);
  in.sms = 132, in.group = UK_RED_GROUP_COLS;
  CHECK(uk__red_unsplit_block(&in) == 0);
  in.group = UK_RED_GROUP_G, in.vec_ok = 0;
  CHECK(uk__red_unsplit_block(&in) == 0);
  in.vec_ok = 1, in.nout = 1;
  CHECK(uk__red_unsplit_block(&in) == UK_RED_WIDE_BLOCK);
  in.nred = 4096; /* tiny: one block of UK_RED_BLOCK, the model's */
  CHECK(uk__red_unsplit_block(&in) == 0);
  /* deep (two float32 inputs): a block of UK_RED_BLOCK an output, unsplit, in the split program */
  uk_red_plan_in dp = {128, 8192, 8, UK_RED_GROUP_G, 1, 4, 4, 132, 4, 1, 0, 0, 0, 0, 0};
  uk_red_strategy ds;
  CHECK(uk__red_unsplit_block(&dp) == 0);
  uk__red_choose_in(&dp, &ds);
  CHECK(ds.kernel == UK_RED_B && !ds.block && ds.nsplit == 1 && ds.grid_x == 128 && ds.vec);
  dp.nout = 64, dp.nred = 16384; /* past 32768 x 64 / 132: the model's split */
  uk__red_choose_in(&dp, &ds);
  CHECK(ds.nsplit > 1 && !ds.block);
  /* unaligned (no vector loads): the model's plan */
  uk_loop L = loop_of(2, (int64_t[]){128, 8192}, 4, 0);
  uint8_t red[UK_MAX_NDIM] = {0, 1};
  int64_t os[1][UK_MAX_NDIM] = {{4}}, item = 4;
  uk_red_loops R;
  uk__red_split(&L, red, 0, 1, (const int64_t *const[]){os[0]}, &R);
  uk_red_strategy s;
  uk__red_choose(&R, &item, 0, uk__red_vec(4), 132, &s);
  CHECK(!s.vec && s.nsplit > 1);
}

int main(void) {
  test_axes();
  test_block_rows();
  test_wide_partials();
  test_tiny();
  test_loops_and_strategy();
  test_sweep_plans();
  test_cols_sweep();
  test_cols_force();
  test_wide_rows();
  test_split_cap();
  test_dense_narrow();
  test_dense_overflow();
  test_slab_tiles();
  test_cost_terms();
  test_narrow_lanes();
  test_deep_grid();
  test_first_round_deep_only();
  test_empty_huge();
  return ut_finish("test_red_plan");
}
