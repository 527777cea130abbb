/* The group kernels after issue 25's changes (a thread, 8 threads, a warp
 * or a block per output; a split's last block combining its partials four
 * loads at a time; a fusion's argmax/argmin stepping each thread's running
 * pair in order, _uk_argmax_step, and combining pairs with predicated
 * selects, _uk_argmax_comb) on a real GPU, into poisoned given outputs:
 *  - a full float32 sum of 2^24 + 3 elements (a block, about a thousand
 *    splits: the last block's threads combine 4 partials each, the last
 *    trip partly) against a double reference, twice, bitwise the same;
 *  - (511, 1, 1023) and (511, 3, 1023) over axes (0, 2): float32, and int64
 *    summed exactly past 2^53;
 *  - the shapes whose plans changed (a warp per output, split):
 *    (512, 256, 128) axes (0, 2), (256, 65536) axis 1, (16, 16, 4096) axes
 *    (1, 2);
 *  - 1-element and 0-size inputs;
 *  - two inputs, (x - y)^2 over rows of 32 to 65541 (launch bounds or not,
 *    one output group a block or a grid-stride loop, vectors or not);
 *  - fused argmax/argmin over all elements and over the last axis (odd and
 *    vector-aligned rows): ties (the first index), NaN (the first NaN,
 *    after a larger value too), rows of -inf only for argmax and +inf only
 *    for argmin (a tie with the identity's value: index 0), constant rows,
 *    one element, and the zero-size error;
 *  - argmax/argmin combines: ties and NaN in every position between
 *    threads, blocks and pieces, over rows and columns (argmax_combine_ties);
 *  - each UKERN_RED_TUNE variant: the default's bits (tune_bits);
 *  - one kernel's split scratch reused by plans of other layouts, float32
 *    and float64 partials (scratch_reuse);
 *  - one output of 4097-16384 elements in one block of 1024 threads
 *    (wide_plans);
 *  - a program compiled for its plan's threads an output whose first guess
 *    was another width: the call settles on the plan's program (width_settles). */
#include <math.h>

#include "codegen/red_emit.h"
#include "codegen/red_plan.h"
#include "runtime/kernel_pipeline.h"
#include "red_gpu_util.h"

/* Runs k over x into a poisoned given output of oshape; the values, as doubles. */
static double *run_given(const char *label, uk_reduction *k, const darr *x, const int *ax, int na, uk_dtype ot,
                         int ond, const int64_t *oshape) {
  darr y = make(ot, ond, oshape, NULL, 0, 0, NULL);
  uk_launch l = axes_of(ax, na, 0);
  uk_arg in = uk_arg_array(&x->a);
  uk_status st = uk_reduction_call(k, &in, 1, &y.a, 1, &l);
  ut_checks++;
  if (st != UK_OK) {
    ut_failures++;
    fprintf(stderr, "%s: %s: %s\n", label, uk_status_name(st), uk_last_error());
  }
  double *got = fetch(&y.a, y.buf.data, y.bytes);
  drop(&y);
  return got;
}

static void full_sum(void) {
  int64_t n = ((int64_t)1 << 24) + 3, one = 1;
  double *v = randv(n, -1, 1);
  for (int64_t k = 0; k < n; k++) v[k] = (float)v[k];
  darr x = make(UK_FLOAT32, 1, &n, NULL, 0, 0, v);
  uk_reduction *sum = mk("T x", "T y", "x", "a + b", "y = a", "0", "gsum", NULL, NULL);
  int ax0[] = {0};
  double want = 0, absum = 0;
  for (int64_t k = 0; k < n; k++) want += v[k], absum += fabs(v[k]);
  double *a = run_given("sum of 2^24 + 3", sum, &x, ax0, 1, UK_FLOAT32, 0, &one);
  double *b = run_given("sum of 2^24 + 3, again", sum, &x, ax0, 1, UK_FLOAT32, 0, &one);
  close_all("sum of 2^24 + 3", a, &want, &absum, 1, 1e-5);
  CHECK(a[0] == b[0]); /* a fixed combine order: the same bits every run */
  free(a);
  free(b);
  drop(&x);
  /* one element, and none (the identity through the post-map) */
  double v1 = 0.375;
  darr x1 = make(UK_FLOAT32, 1, &one, NULL, 0, 0, &v1);
  a = run_given("one element", sum, &x1, ax0, 1, UK_FLOAT32, 0, &one);
  CHECK(a[0] == 0.375);
  free(a);
  drop(&x1);
  int64_t zero = 0;
  darr x0 = make(UK_FLOAT32, 1, &zero, NULL, 0, 0, NULL);
  a = run_given("no element", sum, &x0, ax0, 1, UK_FLOAT32, 0, &one);
  CHECK(a[0] == 0.0);
  free(a);
  drop(&x0);
  uk_reduction_destroy(sum);
  free(v);
}

/* (511, m, 1023) over axes (0, 2): float32 against the reference, and
 * int64 exactly (terms near 2^40: sums past 2^53, where doubles round). */
static void non_adjacent(void) {
  uk_reduction *sum = mk("T x", "T y", "x", "a + b", "y = a", "0", "gsum2", NULL, NULL);
  int ax02[] = {0, 2};
  for (int64_t m = 1; m <= 3; m += 2) {
    int64_t shape[3] = {511, m, 1023}, n = 511 * m * 1023;
    uint8_t red[UK_MAX_NDIM] = {1, 0, 1};
    double *v = randv(n, -1, 1), want[3], absum[3];
    int64_t no;
    for (int64_t k = 0; k < n; k++) v[k] = (float)v[k];
    darr x = make(UK_FLOAT32, 3, shape, NULL, 0, 0, v);
    ref(R_SUM, 3, shape, red, v, want, absum, &no);
    double *got = run_given("(511, m, 1023) axes (0, 2) float32", sum, &x, ax02, 2, UK_FLOAT32, 1, &m);
    close_all(m == 1 ? "(511, 1, 1023) axes (0, 2)" : "(511, 3, 1023) axes (0, 2)", got, want, absum, m, 1e-5);
    free(got);
    drop(&x);
    /* int64: 2^40 + small, every term exact in a double; sums in int64 */
    int64_t exact[3] = {0, 0, 0};
    for (int64_t k = 0; k < n; k++) {
      int64_t t = ((int64_t)1 << 40) + (int64_t)floor(v[k] * 1e6);
      v[k] = (double)t;
      exact[k / 1023 % m] += t;
    }
    darr xi = make(UK_INT64, 3, shape, NULL, 0, 0, v);
    darr y = make(UK_INT64, 1, &m, NULL, 0, 0, NULL);
    uk_launch l = axes_of(ax02, 2, 0);
    uk_arg in = uk_arg_array(&xi.a);
    CHECK_OK(uk_reduction_call(sum, &in, 1, &y.a, 1, &l));
    int64_t h[3] = {0, 0, 0};
    CHECK_OK(uk_memcpy_dtoh(h, y.a.data, (size_t)m * 8));
    CHECK(exact[0] > ((int64_t)1 << 53));
    for (int64_t o = 0; o < m; o++) {
      if (h[o] != exact[o]) fprintf(stderr, "int64 (511, %lld, 1023): [%lld] %lld != %lld\n", (long long)m,
                                    (long long)o, (long long)h[o], (long long)exact[o]);
      CHECK(h[o] == exact[o]);
    }
    drop(&y);
    drop(&xi);
    free(v);
  }
  uk_reduction_destroy(sum);
}

/* The shapes whose plans moved to a warp per output with a split. */
static void new_plans(void) {
  static const struct {
    int ndim;
    int64_t shape[3];
    unsigned mask;
  } cases[] = {{3, {512, 256, 128}, 0x5}, {2, {256, 65536, 0}, 0x2}, {3, {16, 16, 4096}, 0x6}, {3, {17, 15, 4099}, 0x5}};
  uk_reduction *sum = mk("T x", "T y", "x", "a + b", "y = a", "0", "gsum3", NULL, NULL);
  uk_reduction *mx = mk("T x", "T y", "x", "max(a, b)", "y = a", NULL, "gmax3", NULL, NULL);
  for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++) {
    int nd = cases[j].ndim, ax[3], na = 0;
    uint8_t red[UK_MAX_NDIM] = {0};
    int64_t n = size_of(nd, cases[j].shape), oshape[3], on = 0;
    for (int d = 0; d < nd; d++) {
      if (cases[j].mask >> d & 1) ax[na++] = d, red[d] = 1;
      else oshape[on++] = cases[j].shape[d];
    }
    double *v = randv(n, -1, 1);
    for (int64_t k = 0; k < n; k++) v[k] = (float)v[k];
    darr x = make(UK_FLOAT32, nd, cases[j].shape, NULL, 0, 0, v);
    int64_t no;
    double *want = malloc(sizeof(double) * 4096), *absum = malloc(sizeof(double) * 4096);
    char label[96];
    snprintf(label, sizeof label, "(%lld, %lld, %lld) axes 0x%x", (long long)cases[j].shape[0],
             (long long)cases[j].shape[1], (long long)cases[j].shape[2], cases[j].mask);
    ref(R_SUM, nd, cases[j].shape, red, v, want, absum, &no);
    double *got = run_given(label, sum, &x, ax, na, UK_FLOAT32, (int)on, oshape);
    close_all(label, got, want, absum, no, 1e-5);
    free(got);
    ref(R_MAX, nd, cases[j].shape, red, v, want, absum, &no);
    got = run_given(label, mx, &x, ax, na, UK_FLOAT32, (int)on, oshape);
    close_all(label, got, want, NULL, no, 0);
    free(got);
    free(want);
    free(absum);
    drop(&x);
    free(v);
  }
  uk_reduction_destroy(sum);
  uk_reduction_destroy(mx);
}

/* Two inputs, (x - y)^2 summed over rows (the sweep's fused row sum as a
 * ReductionKernel) into a poisoned given output, against a double
 * reference: rows of 8 vectors or fewer keep the unbounded program and
 * the grid-stride loop (300007 rows of 32: more groups than 4 waves);
 * longer rows get the launch bounds (uk_red_key.deep) and one output group
 * a block (131072 rows of 128, 4099 of 2048: more groups than 4 waves);
 * odd rows, and a base 4 bytes off 16, take the scalar loop of the same
 * programs; a split (3 rows of 65541); float64 rows of 16 and 17. */
static void two_inputs(void) {
  static const struct {
    uk_dtype t;
    int64_t rows, w;
    int skew;
  } cases[] = {{UK_FLOAT32, 300007, 32, 0}, {UK_FLOAT32, 4099, 33, 0},   {UK_FLOAT32, 131072, 128, 0},
               {UK_FLOAT32, 4097, 128, 4},  {UK_FLOAT32, 4099, 2048, 0}, {UK_FLOAT32, 67, 8192, 0},
               {UK_FLOAT32, 3, 65541, 0},   {UK_FLOAT64, 2049, 16, 0},   {UK_FLOAT64, 2049, 17, 0},
               {UK_FLOAT64, 1025, 520, 0}};
  uk_reduction *k = mk("T x, T y", "T s", "(x - y) * (x - y)", "a + b", "s = a", "0", "gdist2", NULL, NULL);
  for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++) {
    const int64_t rows = cases[j].rows, w = cases[j].w, n = rows * w, shape[2] = {rows, w};
    const int f32 = cases[j].t == UK_FLOAT32;
    double *vx = randv(n, -1, 1), *vy = randv(n, -1, 1);
    for (int64_t e = 0; f32 && e < n; e++) vx[e] = (float)vx[e], vy[e] = (float)vy[e];
    darr x = make(cases[j].t, 2, shape, NULL, 0, cases[j].skew, vx), y = make(cases[j].t, 2, shape, NULL, 0, 0, vy);
    darr s = make(cases[j].t, 1, &rows, NULL, 0, 0, NULL);
    uk_arg in[2] = {uk_arg_array(&x.a), uk_arg_array(&y.a)};
    int ax[] = {1};
    uk_launch l = axes_of(ax, 1, 0);
    char label[96];
    snprintf(label, sizeof label, "two inputs, %lld rows of %lld (%s, skew %d)", (long long)rows, (long long)w,
             f32 ? "float32" : "float64", cases[j].skew);
    uk_status st = uk_reduction_call(k, in, 2, &s.a, 1, &l);
    ut_checks++;
    if (st != UK_OK) {
      ut_failures++;
      fprintf(stderr, "%s: %s: %s\n", label, uk_status_name(st), uk_last_error());
    }
    double *got = fetch(&s.a, s.buf.data, s.bytes), *want = malloc(sizeof(double) * (size_t)rows);
    for (int64_t r = 0; r < rows; r++) {
      double t = 0;
      for (int64_t c = 0; c < w; c++) {
        double d = vx[r * w + c] - vy[r * w + c];
        t += d * d;
      }
      want[r] = t; /* every term is >= 0: the sum of |terms| is the sum */
    }
    close_all(label, got, want, want, rows, f32 ? 1e-5 : 1e-12);
    free(got);
    free(want);
    drop(&x);
    drop(&y);
    drop(&s);
    free(vx);
    free(vy);
  }
  uk_reduction_destroy(k);
}

/* NumPy's argmax/argmin of n values `stride` apart: the first NaN, else the
 * first extreme. */
static int64_t host_arg(const double *v, int64_t n, int64_t stride, int is_max) {
  int64_t b = 0;
  for (int64_t k = 1; k < n; k++) {
    if (isnan(v[b * stride])) break;
    if (isnan(v[k * stride]) || (is_max ? v[k * stride] > v[b * stride] : v[k * stride] < v[b * stride])) b = k;
  }
  return b;
}

/* What fused_arg reduces a rows x cols x over. */
enum { ARG_ALL, ARG_ROWS /* axis=1 */, ARG_COLS /* axis=0 */ };

/* uk_fusion `i = argmax(x[, axis=1 or 0])` (argmin) of a rows x cols x
 * holding v, into a poisoned given int64 output, against host_arg. */
static void fused_arg(const char *label, int is_max, const darr *x, int over, const double *v, int64_t rows,
                      int64_t cols) {
  static const char *const progs[2][3] = {{"i = argmin(x)", "i = argmin(x, axis=1)", "i = argmin(x, axis=0)"},
                                          {"i = argmax(x)", "i = argmax(x, axis=1)", "i = argmax(x, axis=0)"}};
  uk_fusion *f = NULL;
  CHECK_OK(uk_fusion_create(ctx, &(uk_fusion_spec){.inputs = "x", .outputs = "i", .program = progs[is_max][over],
                                                   .name = "garg"},
                            &f));
  if (!f) return;
  int64_t no = over == ARG_ROWS ? rows : over == ARG_COLS ? cols : 1;
  darr y = make(UK_INT64, over == ARG_ALL ? 0 : 1, &no, NULL, 0, 0, NULL);
  uk_arg in = uk_arg_array(&x->a);
  CHECK_OK(uk_fusion_call(f, &in, 1, &y.a, 1, NULL));
  int64_t *h = malloc(sizeof(int64_t) * (size_t)no);
  CHECK_OK(uk_memcpy_dtoh(h, y.a.data, (size_t)no * 8));
  int bad = 0;
  for (int64_t r = 0; r < no; r++) {
    int64_t want = over == ARG_ROWS   ? host_arg(v + r * cols, cols, 1, is_max)
                   : over == ARG_COLS ? host_arg(v + r, rows, cols, is_max)
                                      : host_arg(v, rows * cols, 1, is_max);
    if (h[r] != want && bad++ < 5)
      fprintf(stderr, "%s: output %lld: got %lld, want %lld\n", label, (long long)r, (long long)h[r],
              (long long)want);
  }
  ut_checks++;
  if (bad) ut_failures++;
  free(h);
  drop(&y);
  uk_fusion_destroy(f);
}

static void argmax_fused(void) {
  /* all elements: ties close together and far apart, then a NaN after them */
  int64_t n = ((int64_t)1 << 22) + 7;
  double *v = randv(n, -1, 1);
  for (int64_t k = 0; k < n; k++) v[k] = (float)v[k];
  v[1000003] = v[1000001] = v[3000000] = 5; /* the first, 1000001, wins */
  v[1000002] = -5;
  v[2000001] = v[4000000] = -5;
  darr x = make(UK_FLOAT32, 1, &n, NULL, 0, 0, v);
  fused_arg("argmax, ties", 1, &x, ARG_ALL, v, n, 1);
  fused_arg("argmin, ties", 0, &x, ARG_ALL, v, n, 1);
  drop(&x);
  v[3500001] = NAN; /* after the maxima: NaN wins */
  v[3999999] = NAN;
  x = make(UK_FLOAT32, 1, &n, NULL, 0, 0, v);
  fused_arg("argmax, NaN", 1, &x, ARG_ALL, v, n, 1);
  fused_arg("argmin, NaN", 0, &x, ARG_ALL, v, n, 1);
  drop(&x);
  free(v);
  /* rows: odd (scalar loads) and 1024 wide (vectors), special rows */
  static const int64_t shapes[][2] = {{37, 1029}, {64, 1024}};
  for (int j = 0; j < 2; j++) {
    int64_t rows = shapes[j][0], cols = shapes[j][1];
    v = randv(rows * cols, -1, 1);
    for (int64_t k = 0; k < rows * cols; k++) v[k] = (float)v[k];
    for (int64_t c = 0; c < cols; c++) {
      v[3 * cols + c] = -INFINITY; /* argmax: a tie with the identity's value */
      v[4 * cols + c] = INFINITY;  /* argmin likewise */
      v[5 * cols + c] = c == 700 ? NAN : -INFINITY;
      v[7 * cols + c] = 1.0;       /* constant: index 0 */
    }
    v[6 * cols + 100] = v[6 * cols + 101] = v[6 * cols + 1000] = 9;   /* adjacent ties */
    v[6 * cols + 200] = v[6 * cols + 201] = -9;
    v[8 * cols + 0] = NAN;                                           /* a NaN first */
    v[9 * cols + cols - 1] = NAN;                                    /* a NaN last */
    darr xr = make(UK_FLOAT32, 2, shapes[j], NULL, 0, 0, v);
    fused_arg(j ? "argmax, rows of 1024" : "argmax, rows of 1029", 1, &xr, ARG_ROWS, v, rows, cols);
    fused_arg(j ? "argmin, rows of 1024" : "argmin, rows of 1029", 0, &xr, ARG_ROWS, v, rows, cols);
    drop(&xr);
    free(v);
  }
  /* one element: index 0; none: the error */
  int64_t one = 1, zero = 0;
  double v1 = -2;
  darr x1 = make(UK_FLOAT32, 1, &one, NULL, 0, 0, &v1);
  fused_arg("argmax, one element", 1, &x1, ARG_ALL, &v1, 1, 1);
  drop(&x1);
  darr x0 = make(UK_FLOAT32, 1, &zero, NULL, 0, 0, NULL);
  uk_fusion *f = NULL;
  CHECK_OK(uk_fusion_create(ctx, &(uk_fusion_spec){.inputs = "x", .outputs = "i", .program = "i = argmax(x)", .name = "garg0"},
                            &f));
  uk_array y;
  memset(&y, 0, sizeof y);
  uk_arg in = uk_arg_array(&x0.a);
  CHECK_STATUS(uk_fusion_call(f, &in, 1, &y, 1, NULL), UK_ERR_SHAPE);
  CHECK_CONTAINS(uk_last_error(), "zero-size array to a reduction with no identity (max, min, argmax, argmin)");
  uk_fusion_destroy(f);
  drop(&x0);
}

/* A fused argmax/argmin's combine of two pairs (threads', blocks',
 * pieces': _uk_argmax_comb, predicated selects) against NumPy's rule, the
 * first NaN else the first extreme: small integers (ties within a vector,
 * across threads, blocks and pieces) and a NaN in about one element in
 * 600 (none in every other row), over rows of 4096 and 65541 (a group of
 * threads per row, scalar tails), one output of 16384 (one block of 1024
 * threads) and of 2^20 + 3 (split), and over the first axis of 4096 x 64
 * and 1001 x 999 (columns: halving in shared memory, split). */
static void argmax_combine_ties(void) {
  static const int64_t shapes[][2] = {{50, 4096}, {3, 65541}, {1, 16384}, {1, 1048579}, {4096, 64}, {1001, 999}};
  uint64_t seed = 12345;
  for (int j = 0; j < 6; j++) {
    const int64_t rows = shapes[j][0], cols = shapes[j][1], n = rows * cols;
    double *v = malloc(sizeof(double) * (size_t)n);
    for (int64_t k = 0; k < n; k++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      const unsigned r = (unsigned)(seed >> 33);
      v[k] = r % 600 == 0 ? NAN : (double)(r % 8) - 3;
    }
    /* every other output with no NaN: the first extreme wins among many ties */
    for (int64_t r = 0; r < rows; r++)
      for (int64_t c = 0; c < cols; c++)
        if ((j >= 4 ? c : r) % 2 == 0 && isnan(v[r * cols + c])) v[r * cols + c] = 1;
    /* over the first axis from 4 on: columns (red_cols) */
    const int over = j >= 4 ? ARG_COLS : rows > 1 ? ARG_ROWS : ARG_ALL;
    darr x = make(UK_FLOAT32, 2, shapes[j], NULL, 0, 0, v);
    char label[64];
    snprintf(label, sizeof label, "argmax ties %lldx%lld over %d", (long long)rows, (long long)cols, over);
    fused_arg(label, 1, &x, over, v, rows, cols);
    snprintf(label, sizeof label, "argmin ties %lldx%lld over %d", (long long)rows, (long long)cols, over);
    fused_arg(label, 0, &x, over, v, rows, cols);
    drop(&x);
    free(v);
  }
}

/* The device code's measurement knobs (UKERN_RED_TUNE, read when a
 * reduction is created) change how loads are cached, how many partials
 * the last block loads at once and loads per trip, never a
 * combine order; on a split full sum (2^24 + 3), a split column sum
 * ((65536, 256) axis 0), a column sum without a split ((512, 256, 128) axis
 * 1), rows ((4099, 1000) axis 1) and a split full sum past 128 MiB (2^25 +
 * 5: plain loads unless a knob sets them) every variant is right, and each
 * variant gives the default's bits except trip=8, the split column sum,
 * rp=1 and the plan knobs: more registers (trip=8; ld=2 and cw=16 on the
 * column kernel), fewer blocks per SM, can move the planner's split, and
 * with it the order of the partials; rp=1 gives each thread other rows, a
 * plan knob another plan (swz=1 alone keeps the order: the same bits). */
static void tune_bits(void) {
  static const char *const tunes[] = {"",      "ld=1",   "ld=2",        "ld=3",        "ld=4",
                                      "ld=5",  "ld=6",   "cw=4",        "cw=1",        "cw=8",
                                      "cw=16", "rp=1",   "swz=1",       "trip=8,mb=4", "trip=8,ld=1,cw=16",
                                      "swz=1,by=16,sp=4", "by=64,cv=0", "rp=1,swz=1,by=4,sp=8"};
  static const struct {
    int ndim;
    int64_t shape[3];
    int ax;
  } cases[] = {{1, {((int64_t)1 << 24) + 3}, 0}, {2, {65536, 256}, 0}, {3, {512, 256, 128}, 1}, {2, {4099, 1000}, 1},
               {1, {((int64_t)1 << 25) + 5}, 0}}; /* the last past 128 MiB: the default load policy */
  enum { NT = sizeof tunes / sizeof tunes[0] };
  uk_reduction *k[NT];
  for (int t = 0; t < NT; t++) {
    setenv("UKERN_RED_TUNE", tunes[t], 1);
    k[t] = mk("T x", "T y", "x", "a + b", "y = a", "0", "gsum_tune", NULL, NULL);
  }
  unsetenv("UKERN_RED_TUNE");
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    int nd = cases[c].ndim, ax[1] = {cases[c].ax};
    int64_t n = size_of(nd, cases[c].shape), oshape[3], on = 0, no = 1;
    uint8_t red[UK_MAX_NDIM] = {0};
    red[cases[c].ax] = 1;
    for (int d = 0; d < nd; d++)
      if (d != cases[c].ax) oshape[on++] = cases[c].shape[d], no *= cases[c].shape[d];
    double *v = randv(n, -1, 1);
    for (int64_t j = 0; j < n; j++) v[j] = (float)v[j];
    darr x = make(UK_FLOAT32, nd, cases[c].shape, NULL, 0, 0, v);
    double *want = malloc(sizeof(double) * (size_t)no), *absum = malloc(sizeof(double) * (size_t)no), *base = NULL;
    int64_t got_n;
    ref(R_SUM, nd, cases[c].shape, red, v, want, absum, &got_n);
    for (int t = 0; t < NT; t++) {
      if (!k[t]) continue;
      char label[96];
      snprintf(label, sizeof label, "case %zu, tune '%s'", c, tunes[t]);
      double *got = run_given(label, k[t], &x, ax, 1, UK_FLOAT32, (int)on, oshape);
      close_all(label, got, want, absum, no, 1e-5);
      if (!base) {
        base = got;
        continue;
      }
      /* Bits are compared where the plan cannot move: a column sum's split
       * (case 1) follows blocks per SM, which follow the variant's
       * registers, and another split combines in another order. */
      if (strstr(tunes[t], "trip") || strstr(tunes[t], "rp=") || strstr(tunes[t], "by=") || c == 1) {
        free(got);
        continue;
      }
      int64_t diff = 0;
      for (int64_t j = 0; j < no; j++) diff += memcmp(&got[j], &base[j], sizeof(double)) != 0;
      ut_checks++;
      if (diff) {
        ut_failures++;
        fprintf(stderr, "%s: %lld outputs differ in their bits from the default's\n", label, (long long)diff);
      }
      free(got);
    }
    free(base);
    free(want);
    free(absum);
    drop(&x);
    free(v);
  }
  for (int t = 0; t < NT; t++) uk_reduction_destroy(k[t]);
}

/* One output of 4097 to 16384 aligned elements: one block of 1024 threads,
 * unsplit (the key's wide): float32 sums of odd and whole-vector lengths (a
 * vector loop and a scalar tail), float64 (two trips of vectors), float16
 * in float32 (vectors of 8), a post-map (the mean), the CUB block combine
 * (cub::BlockReduce<T, 1024>), and a fused argmax (a struct pair). Each into
 * a poisoned output against the double reference; past 16384 the split
 * plan again. */
static void wide_plans(void) {
  static const struct {
    int64_t n;
    uk_dtype t;
  } cases[] = {{4097, UK_FLOAT32}, {8192, UK_FLOAT32}, {16383, UK_FLOAT32}, {16384, UK_FLOAT32},
               {16385, UK_FLOAT32}, {16384, UK_FLOAT64}, {9999, UK_FLOAT64}, {16000, UK_FLOAT16}};
  int64_t one = 1;
  int ax0[] = {0};
  for (int cub = 0; cub < 2; cub++) {
    mk_block_reduce = cub ? UK_BLOCK_REDUCE_CUB : UK_BLOCK_REDUCE_UKERN;
    uk_reduction *sum = mk("T x", "float64 y", "(double)x", "a + b", "y = a", "0", cub ? "wsum_cub" : "wsum", NULL,
                           NULL);
    uk_reduction *mean = mk("T x", "float32 y", "(float)x", "a + b", "y = a / _in_ind.size()", "0", "wmean", NULL, NULL);
    mk_block_reduce = UK_BLOCK_REDUCE_UKERN;
    for (size_t c = 0; sum && mean && c < sizeof cases / sizeof cases[0]; c++) {
      int64_t n = cases[c].n;
      double *v = randv(n, -1, 2), want = 0, absum = 0;
      for (int64_t j = 0; j < n; j++) {
        if (cases[c].t == UK_FLOAT32) v[j] = (float)v[j];
        if (cases[c].t == UK_FLOAT16) v[j] = round(v[j] * 256) / 256; /* exact in half */
        want += v[j];
        absum += fabs(v[j]);
      }
      darr x = make(cases[c].t, 1, &n, NULL, 0, 0, v);
      char label[96];
      snprintf(label, sizeof label, "wide sum of %lld (dtype %d, %s)", (long long)n, (int)cases[c].t,
               cub ? "cub" : "ukern");
      double *got = run_given(label, sum, &x, ax0, 1, UK_FLOAT64, 0, &one);
      close_all(label, got, &want, &absum, 1, cases[c].t == UK_FLOAT64 ? 1e-12 : 1e-6);
      free(got);
      double wmean = want / (double)n, amean = absum / (double)n;
      snprintf(label, sizeof label, "wide mean of %lld (dtype %d)", (long long)n, (int)cases[c].t);
      got = run_given(label, mean, &x, ax0, 1, UK_FLOAT32, 0, &one);
      close_all(label, got, &wmean, &amean, 1, 1e-5);
      free(got);
      drop(&x);
      free(v);
    }
    uk_reduction_destroy(sum);
    uk_reduction_destroy(mean);
  }
  /* argmax: a struct partial; the largest value once, near the end, and ties before it */
  int64_t n = 12345, rows = 1;
  double *v = randv(n, -1, 1);
  for (int64_t j = 0; j < n; j++) v[j] = (float)v[j];
  v[100] = v[7000] = 1.5;
  v[12000] = 3.0;
  darr x = make(UK_FLOAT32, 1, &n, NULL, 0, 0, v);
  fused_arg("wide argmax", 1, &x, ARG_ALL, v, n, rows);
  v[12000] = 0;
  drop(&x);
  x = make(UK_FLOAT32, 1, &n, NULL, 0, 0, v);
  fused_arg("wide argmax, a tie", 1, &x, ARG_ALL, v, n, rows);
  drop(&x);
  free(v);
}

/* Split scratch reused across plans: one kernel object (one scratch per
 * stream) runs shapes whose splits lay their partials out differently (a
 * full sum of thousands of pieces, column sums of two tile widths, a warp a
 * row split, rows unsplit), float32 (one tagged word a partial) and float64
 * (two), each shape after every other, three rounds in alternating order:
 * a partial word left tagged "written" by one launch would be taken for
 * another launch's. Each result against the double reference. */
static void scratch_reuse(void) {
  static const struct {
    int ndim;
    int64_t shape[2];
    int ax;
  } cases[] = {{1, {((int64_t)1 << 22) + 7}, 0}, {2, {65536, 257}, 0}, {2, {64, 300001}, 1},
               {2, {20000, 33}, 0},              {2, {3001, 4001}, 1}, {1, {100003}, 0}};
  enum { NC = sizeof cases / sizeof cases[0] };
  static const uk_dtype types[] = {UK_FLOAT32, UK_FLOAT64};
  for (int t = 0; t < 2; t++) {
    uk_reduction *sum = mk("T x", "T y", "x", "a + b", "y = a", "0", t ? "gsum_reuse64" : "gsum_reuse32", NULL, NULL);
    if (!sum) continue;
    darr x[NC];
    double *v[NC], *want[NC], *absum[NC];
    int64_t no[NC], oshape[NC][2];
    int on[NC];
    for (int c = 0; c < NC; c++) {
      int nd = cases[c].ndim;
      int64_t n = size_of(nd, cases[c].shape), got_n;
      uint8_t red[UK_MAX_NDIM] = {0};
      red[cases[c].ax] = 1;
      on[c] = 0;
      no[c] = 1;
      for (int d = 0; d < nd; d++)
        if (d != cases[c].ax) oshape[c][on[c]++] = cases[c].shape[d], no[c] *= cases[c].shape[d];
      v[c] = randv(n, 0.25, 1);
      if (!t)
        for (int64_t j = 0; j < n; j++) v[c][j] = (float)v[c][j];
      x[c] = make(types[t], nd, cases[c].shape, NULL, 0, 0, v[c]);
      want[c] = malloc(sizeof(double) * (size_t)no[c]);
      absum[c] = malloc(sizeof(double) * (size_t)no[c]);
      ref(R_SUM, nd, cases[c].shape, red, v[c], want[c], absum[c], &got_n);
    }
    for (int round = 0; round < 3; round++)
      for (int j = 0; j < NC; j++) {
        int c = round % 2 ? NC - 1 - j : j, ax[1] = {cases[c].ax};
        char label[96];
        snprintf(label, sizeof label, "scratch reuse, %s, round %d, case %d", t ? "float64" : "float32", round, c);
        double *got = run_given(label, sum, &x[c], ax, 1, types[t], on[c], oshape[c]);
        close_all(label, got, want[c], absum[c], no[c], t ? 1e-12 : 1e-5);
        free(got);
      }
    for (int c = 0; c < NC; c++) {
      drop(&x[c]);
      free(v[c]);
      free(want[c]);
      free(absum[c]);
    }
    uk_reduction_destroy(sum);
  }
}

/* Column programs the kernel holds (each key's, every width). */
static int cols_programs(uk_reduction *k) {
  int n = 0;
  for (uk__spec *e = atomic_load(&((uk__kernel *)k)->specs); e; e = e->next)
    n += ((const uk_red_key *)e->key)->group == UK_RED_GROUP_COLS;
  return n;
}

/* A 16-byte struct reduce type (sum, sum of squares, count), whose partial the key's first guess cannot size
 * (reduction.c partial_guess: 4 bytes), over float32 columns where the planner's width for the loaded program
 * is another at every occupancy (bench/tools/plan_describe.c, 132 SMs: 1000 x 2048 over axis 0, 16 threads an
 * output guessed, 32 or 64 planned; 4096 x 500, 32 guessed, 16 planned): the call compiles the guess's program,
 * then the plan's (settle_width; a third where that one's plan differs again), into poisoned given outputs,
 * against a double reference. */
static void width_settles(void) {
  const char *pre = "struct s16 { float s, q; long long n; };\n"
                    "__device__ s16 one16(float x) { s16 r; r.s = x; r.q = x * x; r.n = 1; return r; }\n"
                    "__device__ s16 zero16() { s16 r; r.s = 0; r.q = 0; r.n = 0; return r; }\n"
                    "__device__ s16 add16(const s16 &a, const s16 &b) {\n"
                    "  s16 r; r.s = a.s + b.s; r.q = a.q + b.q; r.n = a.n + b.n; return r;\n}\n";
  uk_device_info info;
  CHECK_OK(uk_device_info_get(0, &info));
  static const int64_t shapes[][2] = {{1000, 2048}, {4096, 500}};
  int ax0[] = {0};
  for (int j = 0; j < 2; j++) {
    /* a kernel a shape: programs are kept by width, so the first shape's would serve the second's */
    uk_reduction *k = mk("T x", "T y", "one16(x)", "add16(a, b)", "y = a.s + a.q + (T)a.n", "zero16()", "wsum",
                         "s16", pre);
    if (!k) break;
    const int64_t rows = shapes[j][0], cols = shapes[j][1], n = rows * cols;
    double *v = randv(n, -1, 1), *want = calloc((size_t)cols, sizeof(double)),
           *absum = calloc((size_t)cols, sizeof(double));
    for (int64_t i = 0; i < n; i++) {
      v[i] = (float)v[i];
      want[i % cols] += v[i] + v[i] * v[i];
      absum[i % cols] += fabs(v[i]) + v[i] * v[i];
    }
    for (int64_t c = 0; c < cols; c++) want[c] += (double)rows, absum[c] += (double)rows;
    int64_t shape[2] = {rows, cols};
    darr x = make(UK_FLOAT32, 2, shape, NULL, 0, 0, v);
    const int before = cols_programs(k);
    double *got = run_given(j ? "struct sum, 4096 x 500 over axis 0" : "struct sum, 1000 x 2048 over axis 0", k, &x,
                            ax0, 1, UK_FLOAT32, 1, &cols);
    close_all("struct sum over columns", got, want, absum, cols, 1e-5);
    const int made = cols_programs(k) - before;
    if (info.multiprocessors == 132) {
      CHECK(made >= 2); /* the guess's program and the plan's */
      if (made < 2) fprintf(stderr, "width_settles: %lld x %lld compiled %d column programs\n", (long long)rows,
                            (long long)cols, made);
    } else {
      printf("note: %d SMs: the plans of width_settles were read for 132 (%d programs)\n", info.multiprocessors,
             made);
    }
    /* a second call: the same program, nothing compiled */
    free(got);
    got = run_given("struct sum again", k, &x, ax0, 1, UK_FLOAT32, 1, &cols);
    close_all("struct sum over columns, again", got, want, absum, cols, 1e-5);
    CHECK(cols_programs(k) - before == made);
    free(got);
    free(want);
    free(absum);
    free(v);
    drop(&x);
    uk_reduction_destroy(k);
  }
}

int main(void) {
  ut_require_gpu();
  CHECK_OK(uk_context_create(NULL, &ctx));
  if (!ctx) return ut_finish("test_gpu_red_g");
  full_sum();
  non_adjacent();
  new_plans();
  two_inputs();
  argmax_fused();
  argmax_combine_ties();
  tune_bits();
  scratch_reuse();
  wide_plans();
  width_settles();
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_red_g");
}
