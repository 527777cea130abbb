/* The fusion row kernel's cluster variant on a GPU (issue 25; sm_90+: a row
 * split over the blocks of a thread-block cluster, codegen/
 * fuse_row_cluster.c sizes it): softmax, centering, a layer norm and a
 * program with per-row outputs (a sum and an argmax: the slices' partial
 * indices and the row's first block writing them) and a lone row sum
 * (clusters only for few rows in light register slices, else the split
 * plan's one reduction kernel; also rows of 8192) at widths 65536, 65537,
 * 40000 and 200000 (a row wider than one block's shared memory) over 1, 3,
 * 16 and 300 rows, against host references in double from the same
 * values; given outputs poisoned (NaN) in buffers with poisoned margins.
 * On sm_90+ each such call is one row kernel whose plan says clusters
 * (but 300 rows of 40000 of one reduction level: a block a row fills the
 * SMs). Rows past a block an SM: slices in registers where every block is
 * resident at once, and 256-thread blocks for 462-528 two-level rows of
 * 8192 (their plans checked on 132 SMs). Then views (a row
 * pitch, a reversed and a transposed last axis), float64, calls captured
 * into CUDA graphs (register and shared-memory slices), and a cluster
 * launch the device refuses (forced clusters of 32 blocks): the call falls
 * back to the plain variant, succeeds with the same values and no error
 * message, and the device is asked for clusters of 8, then none. */
#include <math.h>

#include "graph_api.h"
#include "runtime/cluster_launch.h"
#include "testutil.h"

static uk_context *ctx;
static int arch, sms;

/* In a CUDA graph (graphed()): each call captured on `stream`, the graph
 * instantiated and launched once; the capture must end cleanly. */
static int in_graph;
static CUstream stream;
static ut_graph_api gr;

/* The fusion's call, directly or through a graph (in_graph). */
static uk_status fusion_call(uk_fusion *f, const uk_arg *in, uk_array *out, int nout, const char *label) {
  if (!in_graph) return uk_fusion_call(f, in, 1, out, nout, NULL);
  uk_launch l = {.stream = stream};
  CUgraph graph = NULL;
  CUgraphExec exec = NULL;
  CHECK(gr.begin_capture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL) == CUDA_SUCCESS);
  uk_status st = uk_fusion_call(f, in, 1, out, nout, &l);
  CUresult r = gr.end_capture(stream, &graph);
  if (r != CUDA_SUCCESS) fprintf(stderr, "%s: cuStreamEndCapture returned %d\n", label, (int)r);
  CHECK(r == CUDA_SUCCESS && graph);
  if (graph) CHECK(gr.instantiate(&exec, graph, 0) == CUDA_SUCCESS && exec);
  if (exec) {
    CHECK(gr.launch(exec, stream) == CUDA_SUCCESS);
    CHECK(uk__cu.cuStreamSynchronize(stream) == CUDA_SUCCESS);
    gr.exec_destroy(exec);
  }
  if (graph) gr.destroy(graph);
  return st;
}

enum { P_SOFTMAX, P_CENTER, P_NORM, P_STATS, P_SUMSQ, NPROGS };

static const char *const progs[NPROGS] = {
    "e = exp(x - max(x, axis=-1, keepdims=True)); z = e / sum(e, axis=-1, keepdims=True)",
    "z = x - mean(x, axis=-1, keepdims=True)",
    "d = x - mean(x, axis=-1, keepdims=True); z = d / sqrt(mean(d * d, axis=-1, keepdims=True) + 1e-5)",
    "z = x / sum(abs(x), axis=-1, keepdims=True); t = sum(x * x, axis=-1); i = argmax(x, axis=-1)",
    "t = sum(x * x, axis=-1)"};
static const char *const names[NPROGS] = {"softmax", "center", "layernorm", "stats", "sumsq"};

/* Host reference of program p over rows x n: z per element; t, i per row;
 * amp: per row, what the layer norm multiplies x - mean(x) by. */
static void reference(int p, const double *x, int64_t rows, int64_t n, double *z, double *t, int64_t *ix, double *amp) {
  for (int64_t r = 0; r < rows; r++) {
    const double *a = x + r * n;
    double *o = z + r * n, mx = -INFINITY, m = 0, se = 0, v = 0, sa = 0, sq = 0;
    int64_t at = 0;
    for (int64_t c = 0; c < n; c++) {
      if (a[c] > mx) mx = a[c], at = c;
      m += a[c], sa += fabs(a[c]), sq += a[c] * a[c];
    }
    m /= (double)n;
    for (int64_t c = 0; c < n; c++) se += exp(a[c] - mx), v += (a[c] - m) * (a[c] - m);
    v /= (double)n;
    for (int64_t c = 0; c < n; c++)
      o[c] = p == P_SOFTMAX ? exp(a[c] - mx) / se
             : p == P_CENTER ? a[c] - m
             : p == P_NORM   ? (a[c] - m) / sqrt(v + 1e-5)
                             : a[c] / sa;
    t[r] = sq;
    ix[r] = at;
    amp[r] = p == P_NORM ? fmax(1, 1 / sqrt(v + 1e-5)) : 1;
  }
}

/* Where x's element (r, c) lives, in elements from the buffer's start:
 * start + r * rs + c * cs. */
typedef struct layout {
  uk_dtype t;
  int64_t rs, cs, start; /* rs 0: n (contiguous rows) */
  const char *what;
} layout;

#define MARGIN 64 /* poisoned bytes before and after every buffer's data */

/* A device buffer of `bytes` plus margins, every byte `poison`; *a its data. */
static uk_array poisoned(int64_t bytes, unsigned char poison, uint64_t *data) {
  uk_array buf;
  int64_t total = bytes + 2 * MARGIN;
  memset(&buf, 0, sizeof buf);
  CHECK_OK(uk_array_alloc(ctx, UK_UINT8, 1, &total, 0, NULL, &buf));
  unsigned char *h = malloc((size_t)total);
  memset(h, poison, (size_t)total);
  CHECK_OK(uk_memcpy_htod(buf.data, h, (size_t)total));
  free(h);
  *data = buf.data + MARGIN;
  return buf;
}

/* The buffer's bytes back; *margins: margin bytes that lost their poison. */
static unsigned char *fetch(const uk_array *buf, unsigned char poison, int64_t *margins) {
  int64_t total = buf->shape[0];
  unsigned char *h = malloc((size_t)total);
  CHECK_OK(uk_device_synchronize());
  CHECK_OK(uk_memcpy_dtoh(h, buf->data, (size_t)total));
  *margins = 0;
  for (int64_t b = 0; b < MARGIN; b++) *margins += (h[b] != poison) + (h[total - 1 - b] != poison);
  return h;
}

static double get(const unsigned char *h, uk_dtype t, int64_t k) {
  if (t == UK_FLOAT32) {
    float f;
    memcpy(&f, h + MARGIN + 4 * k, 4);
    return f;
  }
  double d;
  memcpy(&d, h + MARGIN + 8 * k, 8);
  return d;
}

/* |got - want| <= rtol |want| + atol amp[k / n] for every k; NaN fails. */
static void check_rel(const char *what, const unsigned char *h, uk_dtype t, const double *want, int64_t total,
                      int64_t n, double rtol, double atol, const double *amp) {
  int bad = 0;
  for (int64_t k = 0; k < total; k++) {
    double g = get(h, t, k);
    if (!(fabs(g - want[k]) <= rtol * fabs(want[k]) + atol * (amp ? amp[k / n] : 1)))
      if (bad++ < 5) fprintf(stderr, "%s: [%lld] got %.9g, want %.9g\n", what, (long long)k, g, want[k]);
  }
  ut_checks++;
  if (bad) ut_failures++;
}

/* Program p over rows x n with x laid out as l; on sm_90+, cluster: the
 * plan must be the cluster variant (1), a plain one (0) or either (-1). */
/* run_case's plan to check (-1: none): not over clusters, over clusters, a
 * row kernel with rows in registers not over clusters, the split plan. */
enum { WANT_NO_CLUSTERS = 0, WANT_CLUSTERS = 1, WANT_REGS = 2, WANT_SPLIT = 3, WANT_OTHER = 4 };

/* Words run_case's plan must hold as well, where not NULL (132 SMs only). */
static const char *want_plan;

static void run_case(int p, int64_t rows, int64_t n, const layout *l, int cluster) {
  int64_t es = (int64_t)uk_dtype_size(l->t), rs = l->rs ? l->rs : n, total = rows * n, margins = 0;
  int64_t hi = l->start + (rows - 1) * rs + (l->cs > 0 ? (n - 1) * l->cs : 0) + 1; /* x's elements */
  double *vx = malloc(sizeof(double) * (size_t)total), *want = malloc(sizeof(double) * (size_t)total),
         *wt = malloc(sizeof(double) * (size_t)rows), *amp = malloc(sizeof(double) * (size_t)rows);
  int64_t *wi = malloc(sizeof(int64_t) * (size_t)rows);
  unsigned char *hx = malloc((size_t)(hi * es));
  memset(hx, 0xA5, (size_t)(hi * es));
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < n; c++) {
      double v = ut_uniform(-4, 4);
      unsigned char *q = hx + (l->start + r * rs + c * l->cs) * es;
      if (l->t == UK_FLOAT32) {
        float f = (float)v;
        v = f;
        memcpy(q, &f, 4);
      } else {
        memcpy(q, &v, 8);
      }
      vx[r * n + c] = v;
    }
  reference(p, vx, rows, n, want, wt, wi, amp);
  uint64_t xd, zd, td, id;
  uk_array xb = poisoned(hi * es, 0xA5, &xd), zb = poisoned(total * es, 0xFF, &zd), tb = poisoned(rows * es, 0xFF, &td),
           ib = poisoned(rows * 8, 0xFF, &id);
  CHECK_OK(uk_memcpy_htod(xd, hx, (size_t)(hi * es)));
  int64_t shape[2] = {rows, n};
  uk_array x, out[3];
  uk_array_init(&x, xd + (uint64_t)(l->start * es), l->t, 2, shape);
  x.strides[0] = rs * es;
  x.strides[1] = l->cs * es;
  uk_array_init(&out[0], zd, l->t, 2, shape);
  uk_array_init(&out[1], td, l->t, 1, shape);
  uk_array_init(&out[2], id, UK_INT64, 1, shape);
  int nout = p == P_STATS ? 3 : 1;
  uk_array *outs = p == P_SUMSQ ? &out[1] : out; /* a lone row sum: t only */
  uk_fusion *f = NULL;
  CHECK_OK(uk_fusion_create(ctx,
                            &(uk_fusion_spec){.inputs = "x", .outputs = p == P_STATS ? "z, t, i" : p == P_SUMSQ ? "t" : "z",
                                              .program = progs[p], .name = "clrows"},
                            &f));
  char label[160];
  snprintf(label, sizeof label, "%s %s %lldx%lld %s", names[p], uk_dtype_name(l->t), (long long)rows, (long long)n,
           l->what);
  uk_arg in[1] = {uk_arg_array(&x)};
  if (arch >= 90 && cluster >= 0) { /* the plan: one kernel, over clusters or not (-1: not checked) */
    int kc = -1;
    char *src = NULL;
    CHECK_OK(uk_fusion_kernel_count(f, in, 1, outs, nout, NULL, &kc));
    CHECK_OK(uk_fusion_source(f, in, 1, outs, nout, NULL, &src));
    int cl = src && strstr(src, "\n// row plan: rows over clusters of") != NULL;
    int how = cl                                                          ? WANT_CLUSTERS
              : src && strstr(src, "\n// row plan: rows in registers") ? WANT_REGS
              : src && !strstr(src, "\n// row plan: ")                 ? WANT_SPLIT
                                                                          : WANT_OTHER;
    int ok = cluster == WANT_NO_CLUSTERS ? !cl : how == cluster;
    if (kc != 1 || !ok) fprintf(stderr, "%s: %d kernels, plan %d (want 1, %d)\n", label, kc, how, cluster);
    CHECK(kc == 1 && ok);
    if (want_plan) { /* the plan's own words (resident()) */
      int said = src && strstr(src, want_plan) != NULL;
      if (!said) fprintf(stderr, "%s: the plan does not say '%s'\n", label, want_plan);
      CHECK(said);
    }
    uk_free(src);
  }
  uk_status st = fusion_call(f, in, outs, nout, label);
  if (st) fprintf(stderr, "%s: %s\n", label, uk_last_error());
  CHECK(st == UK_OK);
  unsigned char *h = NULL;
  int f64 = l->t == UK_FLOAT64;
  if (p != P_SUMSQ) {
    h = fetch(&zb, 0xFF, &margins);
    CHECK(margins == 0);
    check_rel(label, h, l->t, want, total, n, f64 ? 1e-12 : 2e-5, f64 ? 1e-12 : (p == P_SOFTMAX ? 1e-30 : 4e-6), amp);
    free(h);
  }
  if (p == P_STATS || p == P_SUMSQ) {
    h = fetch(&tb, 0xFF, &margins);
    CHECK(margins == 0);
    check_rel(p == P_STATS ? "stats t" : label, h, l->t, wt, rows, rows, f64 ? 1e-12 : 2e-5, 0, NULL);
    free(h);
  }
  if (p == P_STATS) {
    h = fetch(&ib, 0xFF, &margins);
    CHECK(margins == 0);
    int bad = 0;
    for (int64_t r = 0; r < rows; r++) {
      int64_t g;
      memcpy(&g, h + MARGIN + 8 * r, 8);
      if (g != wi[r] && bad++ < 5) fprintf(stderr, "%s: argmax of row %lld: %lld, want %lld\n", label, (long long)r,
                                           (long long)g, (long long)wi[r]);
    }
    CHECK(bad == 0);
    free(h);
  }
  uk_fusion_destroy(f);
  uk_array_free(ctx, &xb, NULL);
  uk_array_free(ctx, &zb, NULL);
  uk_array_free(ctx, &tb, NULL);
  uk_array_free(ctx, &ib, NULL);
  free(hx);
  free(vx);
  free(want);
  free(wt);
  free(wi);
  free(amp);
}

/* Whether a lone float32 row sum of rows x n runs over clusters: where its
 * rows go over clusters with register slices of at most 16 elements a
 * thread (1 if so, 0 if not), worked out from the planner's rules for 132
 * SMs and clusters of up to 16 (H100/H200 SXM): 200000 takes 32 elements a
 * thread, 16 x 65537 and 300 rows shared-memory slices. Elsewhere -1:
 * values only. */
static int lone_clusters(int64_t rows, int64_t n) {
  if (sms != 132 || arch < 90) return -1;
  if (n == 200000 || rows >= 300) return 0;
  return !(rows == 16 && n == 65537);
}

/* A lone row sum's rows of 8192 and a little more (UK_ROW_LONE_MIN_N):
 * over clusters in register slices for fewer rows than SMs on 132 SMs
 * (34 and 66 rows: C 2); a block a row in registers for 67-264 rows of
 * 4097-8192 (uk__row_lone_block); the split plan for 265 rows, for 65 rows
 * of 6144 and 8 of 8188 (too few, too short for clusters), for rows of
 * 4096, 8193 (scalars past 16 a thread) and 16384 (32 elements a thread);
 * softmax's rows of 8192 stay a block a row (plain registers). */
static void lone_short(void) {
  static const int64_t rs[] = {2, 8, 34, 66};
  layout l = {UK_FLOAT32, 0, 1, 0, "contiguous"};
  int on132 = sms == 132 && arch >= 90;
  for (size_t r = 0; r < sizeof rs / sizeof rs[0]; r++) {
    run_case(P_SUMSQ, rs[r], 8192, &l, on132 ? WANT_CLUSTERS : -1);
    run_case(P_SUMSQ, rs[r], 8196, &l, on132 ? WANT_CLUSTERS : -1);
  }
  static const int64_t blocks[][2] = {{67, 8192}, {128, 8192}, {131, 8192}, {132, 8192},
                                       {264, 8192}, {128, 6144}, {100, 4100}};
  for (size_t r = 0; r < sizeof blocks / sizeof blocks[0]; r++)
    run_case(P_SUMSQ, blocks[r][0], blocks[r][1], &l, on132 ? WANT_REGS : -1);
  static const int64_t split[][2] = {{265, 8192}, {65, 6144}, {8, 8188}, {128, 4096}, {128, 8193}, {128, 16384}};
  for (size_t r = 0; r < sizeof split / sizeof split[0]; r++)
    run_case(P_SUMSQ, split[r][0], split[r][1], &l, on132 ? WANT_SPLIT : -1);
  run_case(P_SOFTMAX, 8, 8192, &l, WANT_NO_CLUSTERS);
}

/* Softmax and the layer norm run two reductions one after another: many
 * rows that a block holds alone on its SM (300 x 40000: 1024 threads) go
 * over clusters too (uk__row_cluster). */
static int two_levels(int p) { return p == P_SOFTMAX || p == P_NORM; }

/* Every width and row count, float32, contiguous rows. */
static void widths(void) {
  static const int64_t ns[] = {65536, 65537, 40000, 200000};
  static const int64_t rs[] = {1, 3, 16, 300};
  layout l = {UK_FLOAT32, 0, 1, 0, "contiguous"};
  for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
    for (size_t r = 0; r < sizeof rs / sizeof rs[0]; r++)
      for (int p = 0; p < NPROGS; p++)
        run_case(p, rs[r], ns[k], &l,
                 p == P_SUMSQ ? lone_clusters(rs[r], ns[k]) : !(rs[r] == 300 && ns[k] == 40000) || two_levels(p));
}

/* Rows over clusters past a block an SM (rows x C > 132 SMs): slices in
 * registers where every block of the grid is resident at once (two levels
 * within 768 threads an SM, one level 1024; fuse_row_plan.c
 * resident_regs), else in shared memory; two-level rows of 8192 from 462
 * to 528 rows in blocks of 256 threads (every row at once), x - mean's in
 * blocks of 512. Plans checked on 132 SMs; values everywhere. */
static void resident(void) {
  layout l = {UK_FLOAT32, 0, 1, 0, "contiguous"};
  static const struct {
    int p;
    int64_t rows, n;
    int want;
    const char *plan;
  } cases[] = {
      {P_CENTER, 64, 65536, WANT_CLUSTERS, "clusters of 8 blocks (each holds its slice of 8192 elements in registers), 256"},
      {P_NORM, 48, 65536, WANT_CLUSTERS, "clusters of 8 blocks (each holds its slice of 8192 elements in registers), 256"},
      {P_SOFTMAX, 96, 32768, WANT_CLUSTERS, "clusters of 4 blocks (each holds its slice of 8192 elements in registers)"},
      {P_STATS, 40, 65536, WANT_CLUSTERS, "clusters of 8 blocks (each holds its slice of 8192 elements in registers)"},
      {P_SOFTMAX, 9, 65536, WANT_CLUSTERS, "clusters of 16 blocks (each holds its slice of 4096 elements in registers), 128"},
      {P_NORM, 64, 65536, WANT_CLUSTERS, "clusters of 8 blocks (each keeps its slice of 8192 elements in shared memory)"},
      {P_SOFTMAX, 128, 32768, WANT_CLUSTERS, "clusters of 2 blocks (each keeps its slice of 16384 elements in shared"},
      {P_SOFTMAX, 512, 8192, WANT_REGS, "rows in registers, 256 threads a row, 8 x 4 elements a thread"},
      {P_NORM, 528, 8192, WANT_REGS, "rows in registers, 256 threads a row, 8 x 4 elements a thread"},
      {P_SOFTMAX, 461, 8192, WANT_REGS, "rows in registers, 512 threads a row, 4 x 4 elements a thread"},
      {P_CENTER, 512, 8192, WANT_REGS, "rows in registers, 512 threads a row, 4 x 4 elements a thread"},
  };
  int on132 = sms == 132 && arch >= 90;
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    want_plan = on132 ? cases[k].plan : NULL;
    run_case(cases[k].p, cases[k].rows, cases[k].n, &l, on132 ? cases[k].want : -1);
  }
  want_plan = NULL;
}

/* Views and float64. */
static void views(void) {
  layout pitch = {UK_FLOAT32, 65536 + 3, 1, 0, "pitch n + 3"};
  run_case(P_SOFTMAX, 16, 65536, &pitch, 1);
  run_case(P_STATS, 16, 65536, &pitch, 1);
  layout rev = {UK_FLOAT32, 40000, -1, 39999, "reversed"};
  run_case(P_CENTER, 3, 40000, &rev, 1);
  run_case(P_STATS, 3, 40000, &rev, 1);
  run_case(P_SUMSQ, 3, 40000, &rev, lone_clusters(3, 40000));
  layout tr = {UK_FLOAT32, 1, 16, 0, "transposed"}; /* (40000, 16).T */
  run_case(P_NORM, 16, 40000, &tr, 1);
  layout f64 = {UK_FLOAT64, 0, 1, 0, "contiguous"};
  run_case(P_SOFTMAX, 16, 65536, &f64, 1);
  run_case(P_NORM, 3, 65536, &f64, 1);
}

/* Calls captured into CUDA graphs (cold: each fusion's first call is
 * inside the capture): register slices, shared-memory slices and per-row
 * outputs, float32 and float64. */
static void graphed(void) {
  CHECK_OK(ut_graph_api_load(&gr));
  CHECK(uk__cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  if (ut_failures) return;
  in_graph = 1;
  layout l = {UK_FLOAT32, 0, 1, 0, "contiguous, in a graph"};
  run_case(P_SOFTMAX, 2, 32768, &l, 1); /* slices in registers */
  run_case(P_NORM, 64, 65536, &l, 1);   /* slices in shared memory */
  run_case(P_STATS, 3, 65537, &l, 1);
  layout f64 = {UK_FLOAT64, 0, 1, 0, "contiguous, in a graph"};
  run_case(P_CENTER, 3, 65536, &f64, 1);
  in_graph = 0;
  CHECK(uk__cu.cuStreamDestroy(stream) == CUDA_SUCCESS);
}

/* A cluster launch the device refuses: the call still succeeds. */
static void refused(void) {
  layout l = {UK_FLOAT32, 0, 1, 0, "clusters of 32 refused"};
  if (arch < 90) return;
  /* compute-sanitizer reports the driver's deliberate refusal as an API error */
  if (getenv("UKERN_TEST_MEMCHECK")) {
    fprintf(stderr, "refused-launch cases not run under memcheck (UKERN_TEST_MEMCHECK)\n");
    return;
  }
  CHECK(uk__cluster_max(0) == 16);
  uk__cluster_force(32);
  run_case(P_SOFTMAX, 16, 65536, &l, 1); /* refused: the plain variant */
  CHECK(strcmp(uk_last_error(), "") == 0);
  CHECK(uk__cluster_max(0) == 8);
  run_case(P_STATS, 3, 65537, &l, 1); /* clusters of at most 8, refused again */
  CHECK(uk__cluster_max(0) == 0);
  layout none = {UK_FLOAT32, 0, 1, 0, "no clusters left"};
  run_case(P_CENTER, 16, 65536, &none, 0);
  uk__cluster_force(0);
  CHECK(uk__cluster_max(0) == 16);
  layout back = {UK_FLOAT32, 0, 1, 0, "clusters again"};
  run_case(P_NORM, 16, 65536, &back, 1);
}

int main(void) {
  ut_require_gpu();
  ut_seed(2525);
  uk_device_info info;
  CHECK_OK(uk_device_info_get(0, &info));
  arch = info.arch;
  sms = info.multiprocessors;
  if (arch < 90) fprintf(stderr, "sm_%d: no clusters; values only\n", arch);
  CHECK_OK(uk_context_create(NULL, &ctx));
  widths();
  resident();
  lone_short();
  views();
  graphed();
  CHECK(arch < 90 || uk__cluster_max(0) == 16); /* no launch was refused */
  refused();
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_row_cluster");
}
