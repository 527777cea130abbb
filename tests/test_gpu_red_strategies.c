/* The strategies the cost-model planner picks (red_plan.c, red_cost.c) on a
 * real GPU, against a double-precision host reference: a thread, 8 threads,
 * a warp or a block per output, split or not, one output over a thread-block
 * cluster (sm_90+; one in a CUDA graph too), vector loads over
 * non-adjacent reduced axes, column tiles from 4 to 256 threads wide, split
 * columns combined by the whole last block. Odd and aligned 3-D shapes with
 * every axis subset and keepdims, negative strides, zero-size inputs;
 * float32/float64/float16 (float reduce type)/int32/complex64; no identity
 * (empty pieces drop out of every combine), custom identities and
 * post-maps (l2norm's sqrt, a mean through _in_ind/_out_ind), a struct
 * argmax with _J. Outputs are allocated by the calls (poison is
 * test_gpu_reduction's). Which strategies ran is computed with the
 * planner for this device and every one must have run. */
#include <math.h>

#include "codegen/red_plan.h"
#include "codegen/scalar.h"
#include "codegen/shape.h"
#include "graph_api.h"
#include "red_gpu_util.h"
#include "runtime/cluster_launch.h"

static int sms; /* the device's multiprocessors: the planner's input */

/* What the planner may pick: each must run at least once. */
enum {
  C_T1, C_G8, C_G32, C_B, C_ROWS, C_GSPLIT, C_NDVEC, C_COLS1, C_COLS8, C_NARROW, C_CSPLIT, C_CVEC, C_CLUSTER, C_N
};
static const char *const class_names[C_N] = {"a thread",     "8 threads",    "a warp",         "a block",
                                             "a block of 512", "group split", "nd vectors",     "columns by 1",
                                             "columns by 2-8", "narrow tiles", "column split",  "column vectors",
                                             "a cluster"};
static int seen[C_N];
static int cluster_max; /* the device's clusters (uk__cluster_max): the planner's input */

/* The plan a call of a program of loop input itemsize `item` on view a
 * with these reduced axes gets (as prepare and uk_reduction_call do, with
 * an allocated C-contiguous output; 8 resident blocks per SM, the float
 * programs' occupancy: struct reduce types fit fewer, and their calls may
 * split differently): counted into seen[]. */
static uk_red_strategy note_plan(const char *label, const uk_array *a, const uint8_t *red, int keepdims) {
  int64_t item = (int64_t)uk_dtype_size(a->dtype);
  uk_operand_view v = {"x", a->ndim, a->shape, a->strides, item};
  uk_loop L;
  uk_red_strategy s;
  memset(&s, 0, sizeof s);
  s.kernel = -1;
  if (uk__shape_broadcast(1, &v, &L) != UK_OK) return s;
  int on;
  int64_t oshape[UK_MAX_NDIM], os[1][UK_MAX_NDIM], st = 8;
  uk__red_result_shape(L.ndim, L.shape, red, keepdims, &on, oshape);
  for (int d = on - 1; d >= 0; d--) {
    os[0][d] = st;
    st *= oshape[d] > 0 ? oshape[d] : 1;
  }
  uk_red_loops R;
  uk__red_split(&L, red, keepdims, 1, (const int64_t *const[]){os[0]}, &R);
  if (R.nout == 0) return s;
  uk_red_plan_in in;
  uk__red_plan_in(&R, &item, a->data % 16 == 0, uk__red_vec(item), sms, &in);
  in.cluster_max = cluster_max;
  uk__red_choose_in(&in, &s);
  char buf[160];
  printf("%-44s %s\n", label, uk__red_describe(&s, buf, sizeof buf));
  switch (s.kernel) {
  case UK_RED_T1: seen[C_T1]++; break;
  case UK_RED_G8: seen[C_G8]++; break;
  case UK_RED_G32: seen[C_G32]++; break;
  case UK_RED_B: seen[s.cluster ? C_CLUSTER : s.block == UK_RED_ROWS_BLOCK ? C_ROWS : C_B]++; break;
  case UK_RED_COLS:
    seen[s.by == 1 ? C_COLS1 : s.by <= 8 ? C_COLS8 : C_NARROW]++;
    if (s.nsplit > 1) seen[C_CSPLIT]++;
    if (s.vec) seen[C_CVEC]++;
    break;
  default: break;
  }
  if (s.kernel != UK_RED_COLS && s.kernel != UK_RED_PACK) {
    if (s.nsplit > 1 && !s.cluster) seen[C_GSPLIT]++;
    if (s.vec && R.red.ndim > 1) seen[C_NDVEC]++;
  }
  return s;
}

static void mask_axes(int ndim, unsigned mask, int *ax, int *na, uint8_t *red) {
  *na = 0;
  memset(red, 0, UK_MAX_NDIM);
  for (int d = 0; d < ndim; d++)
    if (mask >> d & 1) {
      ax[(*na)++] = d;
      red[d] = 1;
    }
}

/* run_case with the plan noted first; mask 0 reduces nothing (reduce_none). */
static void run_mask(const char *what, uk_reduction *k, int op, const darr *x, const double *v, unsigned mask,
                     int keepdims, double tol, int post_sqrt) {
  int ax[UK_MAX_NDIM] = {0}, na;
  uint8_t red[UK_MAX_NDIM];
  mask_axes(x->a.ndim, mask, ax, &na, red);
  uk_launch l = axes_of(ax, na, keepdims);
  if (na == 0) l.reduce_none = 1;
  char label[160];
  snprintf(label, sizeof label, "%s (%lld, %lld, %lld) axes 0x%x%s", what, (long long)x->a.shape[0],
           (long long)(x->a.ndim > 1 ? x->a.shape[1] : 0), (long long)(x->a.ndim > 2 ? x->a.shape[2] : 0), mask,
           keepdims ? " keepdims" : "");
  note_plan(label, &x->a, red, keepdims);
  run_case(label, k, op, x, v, &l, tol, post_sqrt);
}

/* Values of a, reversed along axis d (logical order): the view gets a
 * negative stride on d, its data at the last element. */
static double *flip(darr *x, const double *v, int d) {
  uk_array *a = &x->a;
  int64_t n = size_of(a->ndim, a->shape), inner = 1;
  for (int j = d + 1; j < a->ndim; j++) inner *= a->shape[j];
  double *w = malloc(sizeof(double) * (size_t)(n ? n : 1));
  for (int64_t k = 0; k < n; k++) {
    int64_t c = k / inner % a->shape[d], rest = k - c * inner;
    w[k] = v[rest + (a->shape[d] - 1 - c) * inner];
  }
  a->data += (uint64_t)((a->shape[d] - 1) * a->strides[d]);
  a->strides[d] = -a->strides[d];
  return w;
}

static double *values(uk_dtype t, int64_t n) {
  double *v = randv(n, -1, 1);
  for (int64_t k = 0; k < n; k++) {
    if (t == UK_INT32) v[k] = floor(v[k] * 1000);
    if (t == UK_FLOAT16) v[k] = uk__f16_bits_to_f64(uk__f64_to_f16_bits(v[k]));
    if (t == UK_FLOAT32 || t == UK_COMPLEX64) v[k] = (float)v[k];
  }
  return v;
}

static double tol_of(uk_dtype t) {
  return t == UK_INT32 ? 0 : t == UK_FLOAT16 ? 2e-3 : t == UK_FLOAT64 ? 1e-12 : 2e-5;
}

/* ------------------------------------------------------------------------ */

/* Every axis subset (and none) of an odd 3-D shape (scalar loads: no row
 * holds whole aligned vectors) and of an aligned one (vectors), keepdims
 * on every other subset; max without an identity and l2norm on the
 * subsets whose plans split or walk non-adjacent axes. */
static void subsets(void) {
  static const int64_t shapes[2][3] = {{123, 1025, 257}, {123, 1024, 256}};
  uk_reduction *sum = mk("T x", "T y", "x", "a + b", "y = a", "0", "ssum", NULL, NULL);
  uk_reduction *mx = mk("T x", "T y", "x", "max(a, b)", "y = a", NULL, "smax", NULL, NULL);
  uk_reduction *l2 = mk("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "sl2", NULL, NULL);
  for (int j = 0; j < 2; j++) {
    int64_t n = size_of(3, shapes[j]);
    double *v = values(UK_FLOAT32, n);
    darr x = make(UK_FLOAT32, 3, shapes[j], NULL, 0, 0, v);
    for (unsigned mask = 0; mask < 8; mask++) {
      run_mask("sum", sum, R_SUM, &x, v, mask, mask & 1, 2e-5, 0);
      if (mask == 5 || mask == 3 || mask == 6) {
        run_mask("max, no identity", mx, R_MAX, &x, v, mask, 0, 0, 0);
        run_mask("l2norm", l2, R_SQ, &x, v, mask, 1, 2e-5, 1);
      }
    }
    drop(&x);
    free(v);
  }
  uk_reduction_destroy(sum);
  uk_reduction_destroy(mx);
  uk_reduction_destroy(l2);
}

/* Shapes that pick each strategy at 114-132 SMs, over several dtypes. */
static void strategies(void) {
  static const struct {
    int ndim;
    int64_t shape[3];
    unsigned mask;
    const char *what;
  } cases[] = {
      {2, {4099, 1024}, 0x2, "a warp per 1024-row"},
      {2, {4097, 260}, 0x2, "a warp per 260-row"},
      {2, {4099, 1023}, 0x2, "8 threads, unaligned rows, split"},
      {2, {65537, 3}, 0x2, "a thread per 3-row"},
      {2, {257, 16}, 0x2, "a thread per 16-row, vectors"},
      {3, {7, 9, 1024}, 0x5, "a warp, non-adjacent, split"},
      {3, {3, 5, 65536}, 0x5, "a block, non-adjacent, split"},
      {2, {100003, 36}, 0x1, "narrow column tiles, split"},
      {2, {100003, 37}, 0x1, "columns, odd width, split"},
      {2, {20001, 256}, 0x1, "columns of 256, split"},
      {2, {257, 4100}, 0x1, "columns, many outputs"},
      {2, {131, 8192}, 0x2, "a block per 8192-row, unsplit"},
      {2, {40, 8192}, 0x2, "a block per 8192-row, 40 outputs, unsplit"},
      {3, {128, 67, 64}, 0x5, "a block, non-adjacent, unsplit"},
      {2, {64, 16384}, 0x2, "a block per 16384-row, 64 outputs, unsplit"},
      {3, {37, 96, 160}, 0x6, "a block per 15360-row, 37 outputs, unsplit"},
      {2, {33, 65540}, 0x1, "short columns"},
      {2, {16, 1048580}, 0x1, "columns of 16, a thread per output"},
      {3, {31, 1001, 64}, 0x3, "columns, two reduced axes"},
  };
  static const uk_dtype types[] = {UK_FLOAT32, UK_FLOAT64, UK_INT32, UK_COMPLEX64, UK_FLOAT16};
  uk_reduction *sum = mk("T x", "T y", "x", "a + b", "y = a", "0", "tsum", NULL, NULL);
  uk_reduction *hsum = mk("T x", "T y", "x", "a + b", "y = a", "0", "thsum", "float", NULL);
  uk_reduction *mx = mk("T x", "T y", "x", "max(a, b)", "y = a", NULL, "tmax", NULL, NULL);
  for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++) {
    int64_t n = size_of(cases[j].ndim, cases[j].shape);
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
      uk_dtype d = types[t];
      if (d != UK_FLOAT32 && j % 3 != t % 3) continue; /* every dtype on a third of the shapes */
      double *v = values(d, n);
      darr x = make(d, cases[j].ndim, cases[j].shape, NULL, 0, 0, v);
      char what[96];
      snprintf(what, sizeof what, "%s %s", cases[j].what, uk_dtype_name(d));
      run_mask(what, d == UK_FLOAT16 ? hsum : sum, R_SUM, &x, v, cases[j].mask, (int)(j & 1), tol_of(d), 0);
      if (d == UK_FLOAT32) run_mask(what, mx, R_MAX, &x, v, cases[j].mask, 0, 0, 0);
      drop(&x);
      free(v);
    }
  }
  uk_reduction_destroy(sum);
  uk_reduction_destroy(hsum);
  uk_reduction_destroy(mx);
}

/* A float32 sum of 65536 over a cluster captured into a CUDA graph on a
 * non-blocking stream (its first call inside the capture), the graph
 * launched twice into a poisoned given output. */
static void graphed_cluster(uk_reduction *sum) {
  static ut_graph_api gr; /* zeros: ut_graph_api_load resolves each empty slot */
  uk_status ls = ut_graph_api_load(&gr);
  CHECK_OK(ls);
  if (ls != UK_OK) return;
  CUstream st = NULL;
  CHECK(uk__cu.cuStreamCreate(&st, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  int64_t n = 65536;
  double *v = values(UK_FLOAT32, n), want = 0, absum = 0;
  for (int64_t k = 0; k < n; k++) want += v[k], absum += fabs(v[k]);
  darr x = make(UK_FLOAT32, 1, &n, NULL, 0, 0, v);
  uk_array y;
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 0, NULL, 0, NULL, &y));
  uk_arg in = uk_arg_array(&x.a);
  uk_launch l;
  memset(&l, 0, sizeof l);
  l.stream = st;
  CUgraph graph = NULL;
  CUgraphExec exec = NULL;
  CHECK(gr.begin_capture(st, CU_STREAM_CAPTURE_MODE_GLOBAL) == CUDA_SUCCESS);
  CHECK_OK(uk_reduction_call(sum, &in, 1, &y, 1, &l));
  CHECK(gr.end_capture(st, &graph) == CUDA_SUCCESS && graph);
  if (graph) CHECK(gr.instantiate(&exec, graph, 0) == CUDA_SUCCESS && exec);
  for (int rep = 0; rep < 2 && exec; rep++) {
    float poison = NAN, got = 0;
    CHECK_OK(uk_memcpy_htod(y.data, &poison, sizeof poison));
    CHECK(gr.launch(exec, st) == CUDA_SUCCESS && uk__cu.cuStreamSynchronize(st) == CUDA_SUCCESS);
    CHECK_OK(uk_memcpy_dtoh(&got, y.data, sizeof got));
    if (!(fabs(got - want) <= 2e-5 * absum)) fprintf(stderr, "graphed cluster sum: %.9g, want %.9g\n", got, want);
    CHECK(fabs(got - want) <= 2e-5 * absum);
  }
  if (exec) gr.exec_destroy(exec);
  if (graph) gr.destroy(graph);
  uk_array_free(ctx, &y, NULL);
  drop(&x);
  free(v);
  CHECK(uk__cu.cuStreamDestroy(st) == CUDA_SUCCESS);
}

/* One output over a thread-block cluster (uk__red_wide_cluster: 16385 to
 * 131072 elements, 8 blocks of 256-1024 threads, sm_90+): sizes at each
 * cluster's edges, odd ones (a tail past the last whole vector), whole
 * 2-D and 3-D arrays; float32 sums and a max without identity (empty
 * pieces), float64, float16 into float, int32. The program says it runs
 * over a cluster where the device has them. */
static void clusters(void) {
  static const struct {
    int ndim;
    int64_t shape[3];
  } cases[] = {{1, {16385}}, {1, {20001}}, {1, {32768}}, {1, {65536}}, {1, {65537}},
               {1, {100003}}, {1, {131072}}, {2, {256, 256}}, {3, {16, 64, 64}}, {3, {3, 5, 7001}}};
  static const uk_dtype types[] = {UK_FLOAT32, UK_FLOAT64, UK_FLOAT16, UK_INT32};
  uk_reduction *sum = mk("T x", "T y", "x", "a + b", "y = a", "0", "csum", NULL, NULL);
  uk_reduction *hsum = mk("T x", "T y", "x", "a + b", "y = a", "0", "chsum", "float", NULL);
  uk_reduction *mx = mk("T x", "T y", "x", "max(a, b)", "y = a", NULL, "cmax", NULL, NULL);
  for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++) {
    int64_t n = size_of(cases[j].ndim, cases[j].shape);
    unsigned all = (1u << cases[j].ndim) - 1;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
      uk_dtype d = types[t];
      if (d != UK_FLOAT32 && j % 2 != t % 2) continue; /* every dtype on half of the shapes */
      double *v = values(d, n);
      darr x = make(d, cases[j].ndim, cases[j].shape, NULL, 0, 0, v);
      char what[96];
      snprintf(what, sizeof what, "whole, %s", uk_dtype_name(d));
      run_mask(what, d == UK_FLOAT16 ? hsum : sum, R_SUM, &x, v, all, (int)(j & 1), tol_of(d), 0);
      if (d == UK_FLOAT32) run_mask(what, mx, R_MAX, &x, v, all, 0, 0, 0);
      if (d == UK_FLOAT32 && j == 3) { /* the program's banner names the cluster */
        uk_arg in = uk_arg_array(&x.a);
        uk_array y;
        memset(&y, 0, sizeof y);
        char *src = NULL;
        CHECK_OK(uk_reduction_source(sum, &in, 1, &y, 1, NULL, &src));
        CHECK(src && !strstr(src, "over a thread-block cluster") == !cluster_max);
        free(src);
      }
      drop(&x);
      free(v);
    }
  }
  if (cluster_max) graphed_cluster(sum);
  uk_reduction_destroy(sum);
  uk_reduction_destroy(hsum);
  uk_reduction_destroy(mx);
}

/* Negative strides on the innermost and the outermost axis; the reversed
 * values are the reference's. */
static void negative_strides(void) {
  int64_t shape[] = {61, 96, 256};
  int64_t n = size_of(3, shape);
  uk_reduction *sum = mk("T x", "T y", "x", "a + b", "y = a", "0", "nsum", NULL, NULL);
  uk_reduction *mx = mk("T x", "T y", "x", "max(a, b)", "y = a", NULL, "nmax", NULL, NULL);
  for (int d = 0; d < 3; d += 2) {
    double *v = values(UK_FLOAT32, n);
    darr x = make(UK_FLOAT32, 3, shape, NULL, 0, 0, v);
    double *w = flip(&x, v, d);
    for (unsigned mask = 1; mask < 8; mask++) {
      char what[64];
      snprintf(what, sizeof what, "axis %d reversed", d);
      run_mask(what, sum, R_SUM, &x, w, mask, 0, 2e-5, 0);
      if (mask == 5 || mask == 1) run_mask(what, mx, R_MAX, &x, w, mask, 1, 0, 0);
    }
    drop(&x);
    free(v);
    free(w);
  }
  uk_reduction_destroy(sum);
  uk_reduction_destroy(mx);
}

/* Zero-size inputs: an empty reduced range gives the identity through the
 * post-map, or the no-identity error; no outputs, nothing runs. */
static void zero_size(void) {
  uk_reduction *s1 = mk("T x", "T y", "x", "a + b", "y = a + 1", "0", "zsum", NULL, NULL);
  uk_reduction *mx = mk("T x", "T y", "x", "max(a, b)", "y = a", NULL, "zmax", NULL, NULL);
  int64_t e0[] = {0, 1024, 256}, e1[] = {4, 0, 8};
  darr a = make(UK_FLOAT32, 3, e0, NULL, 0, 0, NULL), b = make(UK_FLOAT32, 3, e1, NULL, 0, 0, NULL);
  int ax02[] = {0, 2}, ax1[] = {1};
  uk_launch l02 = axes_of(ax02, 2, 0), l1 = axes_of(ax1, 1, 1);
  uk_array y;
  memset(&y, 0, sizeof y);
  uk_arg in = uk_arg_array(&a.a);
  CHECK_OK(uk_reduction_call(s1, &in, 1, &y, 1, &l02));
  CHECK(y.ndim == 1 && y.shape[0] == 1024);
  if (y.data) {
    double *got = fetch(&y, y.data, 1024 * 4);
    int bad = 0;
    for (int k = 0; k < 1024; k++) bad += got[k] != 1.0;
    CHECK(bad == 0);
    free(got);
    uk_array_free(ctx, &y, NULL);
  }
  memset(&y, 0, sizeof y);
  CHECK_STATUS(uk_reduction_call(mx, &in, 1, &y, 1, &l02), UK_ERR_SHAPE);
  CHECK_STREQ(uk_last_error(), "zero-size array to reduction operation zmax which has no identity");
  /* (4, 0, 8) reduced over axis 1, keepdims: 32 outputs of nothing */
  in = uk_arg_array(&b.a);
  memset(&y, 0, sizeof y);
  CHECK_OK(uk_reduction_call(s1, &in, 1, &y, 1, &l1));
  CHECK(y.ndim == 3 && y.shape[0] == 4 && y.shape[1] == 1 && y.shape[2] == 8);
  if (y.data) {
    double *got = fetch(&y, y.data, 32 * 4);
    int bad = 0;
    for (int k = 0; k < 32; k++) bad += got[k] != 1.0;
    CHECK(bad == 0);
    free(got);
    uk_array_free(ctx, &y, NULL);
  }
  /* ... over axes 0 and 2: no outputs, nothing to run, even without an identity */
  memset(&y, 0, sizeof y);
  CHECK_OK(uk_reduction_call(mx, &in, 1, &y, 1, &l02));
  CHECK(y.ndim == 1 && y.shape[0] == 0);
  drop(&a);
  drop(&b);
  uk_reduction_destroy(s1);
  uk_reduction_destroy(mx);
}

/* Post-maps that read the index sizes (a mean), on split and narrow
 * column tiles and a warp per row. */
static void means(void) {
  uk_reduction *mean =
      mk("T x", "T y", "x", "a + b", "y = a / (_in_ind.size() / _out_ind.size())", "0", "mmean", NULL, NULL);
  static const int64_t shapes[][2] = {{100003, 36}, {4099, 1024}};
  for (int j = 0; j < 2; j++) {
    int64_t n = shapes[j][0] * shapes[j][1];
    double *v = values(UK_FLOAT64, n);
    darr x = make(UK_FLOAT64, 2, shapes[j], NULL, 0, 0, v);
    int axis = j == 0 ? 0 : 1;
    uk_launch l = axes_of(&axis, 1, 0);
    uint8_t red[UK_MAX_NDIM] = {0};
    red[axis] = 1;
    note_plan("mean", &x.a, red, 0);
    uk_array y;
    memset(&y, 0, sizeof y);
    uk_arg in = uk_arg_array(&x.a);
    CHECK_OK(uk_reduction_call(mean, &in, 1, &y, 1, &l));
    int64_t no = shapes[j][1 - axis], nred = shapes[j][axis];
    double *want = malloc(sizeof(double) * (size_t)no), *absum = malloc(sizeof(double) * (size_t)no);
    ref(R_SUM, 2, shapes[j], red, v, want, absum, &no);
    for (int64_t o = 0; o < no; o++) {
      want[o] /= (double)nred;
      absum[o] /= (double)nred;
    }
    if (y.data) {
      double *got = fetch(&y, y.data, (size_t)no * 8);
      close_all(j ? "mean, a warp per row" : "mean, narrow split columns", got, want, absum, no, 1e-12);
      free(got);
      uk_array_free(ctx, &y, NULL);
    }
    free(want);
    free(absum);
    drop(&x);
    free(v);
  }
  uk_reduction_destroy(mean);
}

/* Two float32 inputs over rows of 32: 8 threads a row, one vector of each
 * input a thread (the key's rows: two rows a trip where the grid-stride
 * loop has two trips or more, reduction.c key_rows). Row counts odd (the
 * last trip loads a row again, stored once), one too few for the key's
 * rows; outputs poisoned, the inputs 16 bytes into their allocations. */
static void row_pairs(void) {
  uk_reduction *sq = mk("T x, T y", "T z", "(x - y) * (x - y)", "a + b", "z = a", "0", "rpairs", NULL, NULL);
  static const int64_t rows[] = {300007, 524291, 1001};
  for (int j = 0; j < 3; j++) {
    const int64_t shape[2] = {rows[j], 32}, n = rows[j] * 32;
    double *vx = values(UK_FLOAT32, n), *vy = values(UK_FLOAT32, n);
    darr x = make(UK_FLOAT32, 2, shape, NULL, 0, 16, vx), y = make(UK_FLOAT32, 2, shape, NULL, 0, 16, vy);
    darr z = make(UK_FLOAT32, 1, rows + j, NULL, 0, 0, NULL);
    int axis = 1;
    uk_launch l = axes_of(&axis, 1, 0);
    uk_arg in[2] = {uk_arg_array(&x.a), uk_arg_array(&y.a)};
    CHECK_OK(uk_reduction_call(sq, in, 2, &z.a, 1, &l));
    double *want = malloc(sizeof(double) * (size_t)rows[j]), *absum = malloc(sizeof(double) * (size_t)rows[j]);
    for (int64_t o = 0; o < rows[j]; o++) {
      double acc = 0;
      for (int64_t r = 0; r < 32; r++) acc += (vx[o * 32 + r] - vy[o * 32 + r]) * (vx[o * 32 + r] - vy[o * 32 + r]);
      want[o] = absum[o] = acc;
    }
    double *got = fetch(&z.a, z.a.data, (size_t)rows[j] * 4);
    char label[64];
    snprintf(label, sizeof label, "sum((x - y)^2) over rows of 32, %lld rows", (long long)rows[j]);
    close_all(label, got, want, absum, rows[j], 1e-5);
    free(got);
    free(want);
    free(absum);
    drop(&x);
    drop(&y);
    drop(&z);
    free(vx);
    free(vy);
  }
  uk_reduction_destroy(sq);
}

/* A struct argmax (no identity, _J the flat index over the reduced axes in
 * C order): the first index of the maximum, per output. */
static void argmax(void) {
  const char *pre = "struct amax { float v; long long i; };\n"
                    "__device__ amax mk(float v, long long i) { amax r; r.v = v; r.i = i; return r; }\n"
                    "__device__ amax pick(const amax &a, const amax &b) {\n"
                    "  return (a.v > b.v || (a.v == b.v && a.i < b.i)) ? a : b;\n}\n";
  uk_reduction *am = mk("T x", "int64 y", "mk(x, _J)", "pick(a, b)", "y = a.i", NULL, "targmax", "amax", pre);
  static const struct {
    int ndim;
    int64_t shape[3];
    unsigned mask;
  } cases[] = {{2, {4099, 1024}, 0x2}, {2, {100003, 36}, 0x1}, {3, {123, 1024, 256}, 0x5},
               {2, {1024, 16384}, 0x3}, {3, {7, 9, 1024}, 0x5},  {2, {1024, 1024}, 0x1}};
  for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++) {
    const int nd = cases[j].ndim;
    const int64_t *shape = cases[j].shape;
    int64_t n = size_of(nd, shape);
    double *v = values(UK_FLOAT32, n);
    darr x = make(UK_FLOAT32, nd, shape, NULL, 0, 0, v);
    int ax[3] = {0}, na;
    uint8_t red[UK_MAX_NDIM];
    mask_axes(nd, cases[j].mask, ax, &na, red);
    uk_launch l = axes_of(ax, na, 0);
    char label[96];
    snprintf(label, sizeof label, "argmax (%lld, %lld, %lld) axes 0x%x", (long long)shape[0], (long long)shape[1],
             (long long)(nd > 2 ? shape[2] : 0), cases[j].mask);
    note_plan(label, &x.a, red, 0);
    uk_array y;
    memset(&y, 0, sizeof y);
    uk_arg in = uk_arg_array(&x.a);
    CHECK_OK(uk_reduction_call(am, &in, 1, &y, 1, &l));
    /* host: outputs in C order over the kept axes; _J in C order over the reduced ones */
    int64_t no = 1;
    for (int d = 0; d < nd; d++)
      if (!red[d]) no *= shape[d];
    int64_t *best = malloc(sizeof(int64_t) * (size_t)no);
    double *bv = malloc(sizeof(double) * (size_t)no);
    for (int64_t o = 0; o < no; o++) best[o] = -1;
    for (int64_t k = 0; k < n; k++) {
      int64_t rem = k, o = 0, om = 1, r = 0, rm = 1;
      for (int d = nd - 1; d >= 0; d--) {
        int64_t c = rem % shape[d];
        rem /= shape[d];
        if (red[d]) {
          r += c * rm;
          rm *= shape[d];
        } else {
          o += c * om;
          om *= shape[d];
        }
      }
      if (best[o] < 0 || v[k] > bv[o] || (v[k] == bv[o] && r < best[o])) {
        best[o] = r;
        bv[o] = v[k];
      }
    }
    if (y.data) {
      double *got = fetch(&y, y.data, (size_t)no * 8);
      int bad = 0;
      for (int64_t o = 0; o < no; o++)
        if (got[o] != (double)best[o]) {
          if (bad < 5) fprintf(stderr, "%s: [%lld] got %.0f want %lld\n", label, (long long)o, got[o], (long long)best[o]);
          bad++;
        }
      ut_checks++;
      if (bad) ut_failures++;
      free(got);
      uk_array_free(ctx, &y, NULL);
    }
    free(best);
    free(bv);
    drop(&x);
    free(v);
  }
  uk_reduction_destroy(am);
}

/* ------------------------------------------------------------------------ */
/* Column plans of the COLS cost model (issue 25): scalar tiles spread over
 * many blocks, vector tiles of 16-32 rows per output, split columns, each
 * thread's rows in rounds of four loads with a 1-3 row tail. Outputs are
 * given, poisoned first (0xA5 bytes): a missed output keeps the poison.
 * int64 sums are compared exactly (sums past 2^53: no float path). */

/* C-order output index and reduced index of logical element k. */
static void split_index(int nd, const int64_t *shape, const uint8_t *red, int64_t k, int64_t *o, int64_t *r) {
  int64_t om = 1, rm = 1;
  *o = *r = 0;
  for (int d = nd - 1; d >= 0; d--) {
    int64_t c = k % shape[d];
    k /= shape[d];
    if (red[d]) {
      *r += c * rm;
      rm *= shape[d];
    } else {
      *o += c * om;
      om *= shape[d];
    }
  }
}

/* Compares `no` int64 outputs at device address `dptr` with want exactly. */
static void check_i64(const char *label, uint64_t dptr, const int64_t *want, int64_t no) {
  int64_t *got = malloc(sizeof(int64_t) * (size_t)(no ? no : 1));
  CHECK_OK(uk_device_synchronize());
  CHECK_OK(uk_memcpy_dtoh(got, dptr, sizeof(int64_t) * (size_t)no));
  int bad = 0;
  for (int64_t o = 0; o < no; o++)
    if (got[o] != want[o] && bad++ < 5)
      fprintf(stderr, "%s: [%lld] got %lld want %lld\n", label, (long long)o, (long long)got[o], (long long)want[o]);
  ut_checks++;
  if (bad) ut_failures++;
  free(got);
}

/* Runs sum k over the axes of `mask` into a poisoned given output and
 * compares (int64: exactly); returns the plan. */
static uk_red_strategy run_given(const char *what, uk_reduction *k, const darr *x, const double *v, unsigned mask) {
  int ax[UK_MAX_NDIM] = {0}, na, on = 0;
  uint8_t red[UK_MAX_NDIM];
  int64_t oshape[UK_MAX_NDIM], no = 1, n = size_of(x->a.ndim, x->a.shape);
  mask_axes(x->a.ndim, mask, ax, &na, red);
  uk__red_result_shape(x->a.ndim, x->a.shape, red, 0, &on, oshape);
  for (int d = 0; d < on; d++) no *= oshape[d];
  char label[160];
  snprintf(label, sizeof label, "%s %s (%lld, %lld, %lld) axes 0x%x, given output", what, uk_dtype_name(x->a.dtype),
           (long long)x->a.shape[0], (long long)x->a.shape[1], (long long)(x->a.ndim > 2 ? x->a.shape[2] : 0), mask);
  uk_red_strategy s = note_plan(label, &x->a, red, 0);
  darr y = make(x->a.dtype, on, oshape, NULL, 0, 0, NULL);
  uk_launch l = axes_of(ax, na, 0);
  uk_arg in = uk_arg_array(&x->a);
  CHECK_OK(uk_reduction_call(k, &in, 1, &y.a, 1, &l));
  if (x->a.dtype == UK_INT64) {
    int64_t *want = calloc((size_t)no, sizeof(int64_t));
    for (int64_t j = 0, o, r; j < n; j++) {
      split_index(x->a.ndim, x->a.shape, red, j, &o, &r);
      want[o] += (int64_t)v[j];
    }
    check_i64(label, y.a.data, want, no);
    free(want);
  } else {
    double *want = malloc(sizeof(double) * (size_t)no), *absum = malloc(sizeof(double) * (size_t)no);
    int64_t no2;
    ref(R_SUM, x->a.ndim, x->a.shape, red, v, want, absum, &no2);
    double *got = fetch(&y.a, y.buf.data, y.bytes);
    close_all(label, got, want, absum, no, tol_of(x->a.dtype));
    free(got);
    free(want);
    free(absum);
  }
  drop(&y);
  return s;
}

static void cols_plans(void) {
  static const struct {
    int ndim;
    int64_t shape[3];
    unsigned mask;
    int i64; /* also int64 */
  } cases[] = {
      {3, {513, 127, 255}, 0x1, 0}, /* odd width: scalar tiles, 513 rows (1-3 row tails) */
      {3, {3, 5, 1031}, 0x3, 1},    /* 1031 outputs of 15: a short-column tile of 2 threads an output */
      {3, {515, 128, 256}, 0x1, 0}, /* 32768 outputs of 515: vector tiles of 16-32 rows */
      {3, {128, 515, 256}, 0x2, 0}, /* the same over a middle axis (kept 2-D) */
      {3, {1031, 16, 1024}, 0x3, 1}, /* 1024 outputs of 16496 */
      {2, {20001, 37}, 0x1, 1},     /* odd width, split */
      {2, {1024, 1024}, 0x1, 1},    /* vectors, split */
      {3, {32, 16, 32}, 0x2, 1},    /* 64 KiB: 1024 outputs of 16 */
      {3, {8, 8, 256}, 0x1, 0},     /* 64 KiB: 2048 outputs of 8 */
      {2, {4099, 256}, 0x1, 0},     /* float64 too (below) */
      {2, {2097155, 3}, 0x1, 1},    /* dense narrow columns (24 MiB): tiles of 2 over 128 threads each, split */
      {2, {1048579, 4}, 0x1, 0},
      {2, {3145731, 2}, 0x1, 0},
      {2, {524291, 16}, 0x1, 1},
  };
  uk_reduction *sum = mk("T x", "T y", "x", "a + b", "y = a", "0", "csum", NULL, NULL);
  int short2 = 0, vec16 = 0, split = 0, scalar_split = 0, whole = 0;
  for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++) {
    int64_t n = size_of(cases[j].ndim, cases[j].shape);
    for (int t = 0; t < 3; t++) {
      uk_dtype d = t == 0 ? UK_FLOAT32 : t == 1 ? UK_INT64 : UK_FLOAT64;
      if ((t == 1 && !cases[j].i64) || (t == 2 && j != 9)) continue;
      double *v = values(d, n);
      if (d == UK_INT64) { /* integers past double precision (for short columns), no sum past INT64_MAX / 2 */
        int64_t nred = 1;
        for (int a = 0; a < cases[j].ndim; a++)
          if (cases[j].mask >> a & 1) nred *= cases[j].shape[a];
        const double scale = (double)(INT64_MAX / 2 / nred);
        for (int64_t k = 0; k < n; k++) v[k] = floor(v[k] * scale);
      }
      darr x = make(d, cases[j].ndim, cases[j].shape, NULL, 0, 0, v);
      uk_red_strategy s = run_given("column sum", sum, &x, v, cases[j].mask);
      CHECK(s.kernel == UK_RED_COLS);
      /* short float32 columns (red_plan.c cols_short_plan): scalar tiles of 2 threads an output, unsplit, the
       * 15-16 rows of an output over 2 threads (7-8 each: one trip of 8 with its tail) */
      short2 += d == UK_FLOAT32 && !s.vec && (j == 1 || j == 7 || j == 8) && s.by == 2 && s.nsplit == 1;
      vec16 += s.vec && s.nsplit == 1 && s.by >= 16;
      split += s.nsplit > 1;
      scalar_split += !s.vec && s.nsplit > 1;
      /* dense rows of 2-16 outputs: split tiles, at least half of their outputs real (red_plan.c) */
      if (j >= 10) whole += s.nsplit > 1 && s.grid_x * s.slots < 2 * cases[j].shape[1];
      drop(&x);
      free(v);
    }
  }
  printf("column plans: %d short tiles of 2 threads, %d vector tiles of 16+ rows, %d split, %d scalar split, "
         "%d dense narrow plans\n", short2, vec16, split, scalar_split, whole);
  CHECK(short2 == 3 && vec16 >= 2 && split >= 2 && scalar_split >= 1 && whole == 6);
  uk_reduction_destroy(sum);
}

/* NumPy's argmax through a fusion (the value-index pair kernel): the first
 * index of the maximum, NaN the maximum (its first index), over columns
 * full of ties (values from 16 levels), into a poisoned given output. */
static void numpy_argmax(void) {
  static const struct {
    int ndim;
    int64_t shape[3];
    int axis;
  } cases[] = {{2, {1024, 16384}, 0}, {2, {1027, 4099}, 0}, {2, {1024, 1024}, 0}, {3, {16, 515, 32}, 1},
               {2, {5, 1031}, 0},
               /* dense narrow rows, split over one tile of every output (red_plan.c): vectors, scalars */
               {2, {350003, 12}, 0}, {2, {1000003, 10}, 0}};
  uk_fusion *f[2] = {NULL, NULL};
  CHECK_OK(uk_fusion_create(ctx, &(uk_fusion_spec){.inputs = "x", .outputs = "i", .program = "i = argmax(x, axis=0)",
                                                   .name = "am0"}, &f[0]));
  CHECK_OK(uk_fusion_create(ctx, &(uk_fusion_spec){.inputs = "x", .outputs = "i", .program = "i = argmax(x, axis=1)",
                                                   .name = "am1"}, &f[1]));
  for (size_t j = 0; f[0] && f[1] && j < sizeof cases / sizeof cases[0]; j++) {
    const int nd = cases[j].ndim, axis = cases[j].axis;
    const int64_t *shape = cases[j].shape, R = shape[axis], C = shape[nd - 1], n = size_of(nd, shape);
    double *v = randv(n, 0, 16);
    for (int64_t k = 0; k < n; k++) v[k] = floor(v[k]);
    /* element r of output o (o = outer * C + c over the kept axes) */
#define AT(o, r) (((o) / C * R + (r)) * C + (o) % C)
    v[AT(3, R - 1)] = 99;                      /* the maximum in the last row only */
    v[AT(5, R / 2)] = NAN, v[AT(5, R - 2)] = NAN; /* two NaNs: the first */
    v[AT(6, R - 1)] = NAN;                     /* a NaN in the last row */
    for (int64_t r = 0; r < R; r++) v[AT(7, r)] = 4, v[AT(8, r)] = -INFINITY; /* all equal: index 0 */
    v[AT(9, 1)] = 50, v[AT(9, R - 1)] = 50;    /* a tie split far apart: the first */
#undef AT
    darr x = make(UK_FLOAT32, nd, shape, NULL, 0, 0, v);
    int64_t oshape[2], no = n / R;
    for (int d = 0, k = 0; d < nd; d++)
      if (d != axis) oshape[k++] = shape[d];
    darr y = make(UK_INT64, nd - 1, oshape, NULL, 0, 0, NULL);
    uk_arg in = uk_arg_array(&x.a);
    char label[96];
    snprintf(label, sizeof label, "numpy argmax (%lld, %lld, %lld) axis %d", (long long)shape[0], (long long)shape[1],
             (long long)(nd > 2 ? shape[2] : 0), axis);
    uk_status st = uk_fusion_call(f[axis], &in, 1, &y.a, 1, NULL);
    CHECK_OK(st);
    int64_t *want = malloc(sizeof(int64_t) * (size_t)no);
    double *bv = malloc(sizeof(double) * (size_t)no);
    uint8_t red[UK_MAX_NDIM] = {0};
    red[axis] = 1;
    for (int64_t o = 0; o < no; o++) want[o] = -1;
    for (int64_t k = 0, o, r; k < n; k++) { /* k in C order: r ascends per output */
      split_index(nd, shape, red, k, &o, &r);
      double a = (float)v[k];
      if (want[o] < 0 || (!isnan(bv[o]) && (isnan(a) || a > bv[o]))) want[o] = r, bv[o] = a;
    }
    CHECK(want[5] == R / 2 && want[6] == R - 1 && want[7] == 0 && want[8] == 0 && want[9] == 1 && want[3] == R - 1);
    if (st == UK_OK) check_i64(label, y.a.data, want, no);
    free(want);
    free(bv);
    drop(&x);
    drop(&y);
    free(v);
  }
  uk_fusion_destroy(f[0]);
  uk_fusion_destroy(f[1]);
}

int main(void) {
  ut_require_gpu();
  CHECK_OK(uk_context_create(NULL, &ctx));
  if (!ctx) return ut_finish("test_gpu_red_strategies");
  uk_device_info info;
  CHECK_OK(uk_device_info_get(0, &info));
  sms = info.multiprocessors > 0 ? info.multiprocessors : 1;
  cluster_max = uk__cluster_max(0);
  printf("%s, %d SMs\n", info.name, sms);
  ut_seed(7);
  subsets();
  strategies();
  clusters();
  negative_strides();
  zero_size();
  means();
  row_pairs();
  argmax();
  cols_plans();
  numpy_argmax();
  for (int c = 0; c < C_N; c++) {
    printf("%-16s %d\n", class_names[c], seen[c]);
    if (c == C_CLUSTER && !cluster_max) continue; /* a device without clusters */
    if (!seen[c]) fprintf(stderr, "no case ran %s\n", class_names[c]);
    CHECK(seen[c] > 0);
  }
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_red_strategies");
}
