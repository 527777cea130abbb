/* uk_fusion_call inside a CUDA graph. Four fusions: an elementwise one with
 * two outputs, a one-kernel row reduction, a reduced value used again over
 * the full shape (x - mean(x, axis=1, keepdims=True): the row plan, one
 * kernel with dynamic shared memory, its function attribute set at the
 * first call, which may be inside the capture), the same over columns
 * (axis=0: the split plan, two kernels and a stream-ordered intermediate)
 * and a full reduction to 0-d (scratch taken from the graph). Each is warmed up by a plain call, then captured on a
 * non-blocking stream in each of the three capture modes, with given and
 * with allocated outputs; the graph is instantiated and replayed twice
 * with new input data between the replays, against a host reference in
 * double precision. Then the same with cold fusions (first called inside
 * the capture). The capture must end cleanly: no ukern call may invalidate
 * it. */
#include <math.h>

#include "runtime/cudadrv.h"
#include "testutil.h"

#define ROWS 1009
#define COLS 991
#define N ((int64_t)ROWS * COLS) /* odd, and large enough for a split full reduction */

enum { Z, W, S, C, K, T, NOUT }; /* outputs: z, w (ROWS x COLS), s (ROWS), c, k (ROWS x COLS), t (0-d) */

static uk_context *ctx;
static int memcheck_order; /* UKERN_TEST_MEMCHECK: see issue() */
static CUstream stream;

static __typeof__(&cuStreamBeginCapture) begin_capture;
static __typeof__(&cuStreamEndCapture) end_capture;
static __typeof__(&cuGraphInstantiateWithFlags) instantiate;
static __typeof__(&cuGraphLaunch) graph_launch;
static __typeof__(&cuGraphExecDestroy) exec_destroy;
static __typeof__(&cuGraphDestroy) graph_destroy;

typedef struct fusions {
  uk_fusion *ew, *rowsum, *center, *colcenter, *total;
} fusions;

static void make_fusions(fusions *f) {
  memset(f, 0, sizeof *f);
  CHECK_OK(uk_fusion_create(
      ctx,
      &(uk_fusion_spec){
          .inputs = "x, y", .outputs = "z, w", .program = "z = x * y + 2 * x\nw = sqrt(abs(x)) - y", .name = "fg_ew"},
      &f->ew));
  CHECK_OK(uk_fusion_create(
      ctx, &(uk_fusion_spec){.inputs = "x", .outputs = "s", .program = "s = sum(x * x, axis=1)", .name = "fg_rowsum"},
      &f->rowsum));
  CHECK_OK(uk_fusion_create(
      ctx,
      &(uk_fusion_spec){
          .inputs = "x", .outputs = "c", .program = "c = x - mean(x, axis=1, keepdims=True)", .name = "fg_center"},
      &f->center));
  CHECK_OK(uk_fusion_create(
      ctx,
      &(uk_fusion_spec){
          .inputs = "x", .outputs = "k", .program = "k = x - mean(x, axis=0, keepdims=True)", .name = "fg_colcenter"},
      &f->colcenter));
  CHECK_OK(uk_fusion_create(
      ctx, &(uk_fusion_spec){.inputs = "x, y", .outputs = "t", .program = "t = sum(x * y)", .name = "fg_total"},
      &f->total));
}

static void free_fusions(fusions *f) {
  uk_fusion_destroy(f->ew);
  uk_fusion_destroy(f->rowsum);
  uk_fusion_destroy(f->center);
  uk_fusion_destroy(f->colcenter);
  uk_fusion_destroy(f->total);
}

static const int64_t shape2[2] = {ROWS, COLS}, rows1[1] = {ROWS};

static int64_t count_of(int k) { return k == S ? ROWS : k == T ? 1 : N; }

static void alloc_outputs(uk_array *o) {
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 2, shape2, 0, NULL, &o[Z]));
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 2, shape2, 0, NULL, &o[W]));
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 1, rows1, 0, NULL, &o[S]));
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 2, shape2, 0, NULL, &o[C]));
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 2, shape2, 0, NULL, &o[K]));
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 0, NULL, 0, NULL, &o[T]));
}

static void free_outputs(uk_array *o, void *s) {
  for (int k = 0; k < NOUT; k++) uk_array_free(ctx, &o[k], s);
}

static int capturing(void) {
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  return uk__cu.cuStreamIsCapturing(stream, &st) == CUDA_SUCCESS && st == CU_STREAM_CAPTURE_STATUS_ACTIVE;
}

/* The calls under test, on `stream`; outputs allocated when o[k].data == 0
 * (all of them then), else given. */
static void issue(const fusions *f, const uk_array *x, const uk_array *y, uk_array *o, int captured) {
  uk_launch l = {.stream = stream};
  uk_arg in[2] = {uk_arg_array(x), uk_arg_array(y)};
  CHECK_OK(uk_fusion_call(f->ew, in, 2, &o[Z], 2, &l)); /* z and w */
  CHECK(capturing() == captured);
  CHECK_OK(uk_fusion_call(f->rowsum, in, 1, &o[S], 1, &l));
  CHECK(capturing() == captured);
  CHECK_OK(uk_fusion_call(f->center, in, 1, &o[C], 1, &l));
  CHECK(capturing() == captured);
  /* Under compute-sanitizer (UKERN_TEST_MEMCHECK set) the split plan goes
   * last. Otherwise the graph gives the 0-d output, allocated after the
   * split plan's intermediate is freed, the intermediate's address, and
   * memcheck then reports the intermediate's writes as out of bounds of
   * that 8-byte allocation. That is the tool's, not ukern's: a driver-only
   * graph (alloc A, write A, read A, free A, alloc 8 bytes B, write B)
   * gets the same report with correct results, from cuMemAllocAsync and
   * from a pool alike (CUDA 13.0, driver 580). */
  if (!memcheck_order) {
    CHECK_OK(uk_fusion_call(f->colcenter, in, 1, &o[K], 1, &l));
    CHECK(capturing() == captured);
  }
  CHECK_OK(uk_fusion_call(f->total, in, 2, &o[T], 1, &l));
  CHECK(capturing() == captured);
  if (memcheck_order) {
    CHECK_OK(uk_fusion_call(f->colcenter, in, 1, &o[K], 1, &l));
    CHECK(capturing() == captured);
  }
}

static double *download(const uk_array *a, int64_t n) {
  double *h = malloc((size_t)n * 8);
  if (h && a->data) CHECK_OK(uk_memcpy_dtoh(h, a->data, (size_t)n * 8));
  if (h && !a->data) {
    CHECK(a->data != 0);
    for (int64_t i = 0; i < n; i++) h[i] = NAN;
  }
  return h;
}

static void poison(const uk_array *a, int64_t n) {
  double *h = malloc((size_t)n * 8);
  for (int64_t i = 0; i < n; i++) h[i] = NAN;
  CHECK_OK(uk_memcpy_htod(a->data, h, (size_t)n * 8));
  free(h);
}

static int close_to(double got, double want, double scale, double rel) {
  return fabs(got - want) <= rel * fmax(1.0, scale); /* NaN fails */
}

/* Compares one round's outputs (their shapes too) with the reference for
 * hx, hy. */
static void verify(const char *label, const uk_array *o, const double *hx, const double *hy) {
  CHECK(o[Z].ndim == 2 && o[Z].shape[0] == ROWS && o[Z].shape[1] == COLS && o[Z].dtype == UK_FLOAT64);
  CHECK(o[W].ndim == 2 && o[C].ndim == 2 && o[C].shape[1] == COLS && o[K].ndim == 2 && o[K].shape[0] == ROWS);
  CHECK(o[S].ndim == 1 && o[S].shape[0] == ROWS && o[T].ndim == 0 && o[T].dtype == UK_FLOAT64);
  double *h[NOUT];
  for (int k = 0; k < NOUT; k++) h[k] = download(&o[k], count_of(k));
  int bad[NOUT] = {0};
  double total = 0, total_abs = 0;
  double *colmean = calloc(COLS, sizeof *colmean);
  for (int64_t i = 0; i < N; i++) colmean[i % COLS] += hx[i] / ROWS;
  for (int64_t r = 0; r < ROWS; r++) {
    double sq = 0, sum = 0;
    for (int64_t c = 0; c < COLS; c++) {
      int64_t i = r * COLS + c;
      sq += hx[i] * hx[i];
      sum += hx[i];
      total += hx[i] * hy[i];
      total_abs += fabs(hx[i] * hy[i]);
      double z = hx[i] * hy[i] + 2 * hx[i], w = sqrt(fabs(hx[i])) - hy[i];
      bad[Z] += !close_to(h[Z][i], z, fabs(z), 1e-14);
      bad[W] += !close_to(h[W][i], w, fabs(w), 1e-14);
    }
    double mean = sum / COLS;
    for (int64_t c = 0; c < COLS; c++) {
      int64_t i = r * COLS + c;
      bad[C] += !close_to(h[C][i], hx[i] - mean, fabs(hx[i]) + fabs(mean), 1e-13);
      bad[K] += !close_to(h[K][i], hx[i] - colmean[c], fabs(hx[i]) + fabs(colmean[c]), 1e-13);
    }
    bad[S] += !close_to(h[S][r], sq, sq, 1e-12);
  }
  bad[T] = !close_to(h[T][0], total, total_abs, 1e-12);
  free(colmean);
  if (bad[Z] || bad[W] || bad[S] || bad[C] || bad[K] || bad[T])
    fprintf(stderr, "%s: wrong results: %d z, %d w, %d s, %d c, %d k, t %.17g vs %.17g\n", label, bad[Z], bad[W],
            bad[S], bad[C], bad[K], h[T][0], total);
  for (int k = 0; k < NOUT; k++) {
    CHECK(bad[k] == 0);
    free(h[k]);
  }
}

static void fill(double *h, const uk_array *d) {
  for (int64_t i = 0; i < N; i++) h[i] = ut_uniform(-4, 4);
  CHECK_OK(uk_memcpy_htod(d->data, h, (size_t)N * 8));
}

static const char *mode_name(CUstreamCaptureMode m) {
  return m == CU_STREAM_CAPTURE_MODE_GLOBAL ? "global" : m == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL ? "thread-local"
                                                                                                   : "relaxed";
}

typedef struct inputs {
  uk_array x, y;
  double *hx, *hy;
} inputs;

static void make_inputs(inputs *in) {
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 2, shape2, 0, NULL, &in->x));
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 2, shape2, 0, NULL, &in->y));
  in->hx = malloc((size_t)N * 8);
  in->hy = malloc((size_t)N * 8);
  fill(in->hx, &in->x);
  fill(in->hy, &in->y);
}

static void free_inputs(inputs *in) {
  uk_array_free(ctx, &in->x, NULL);
  uk_array_free(ctx, &in->y, NULL);
  free(in->hx), free(in->hy);
}

/* One capture + instantiate + two replays. */
static void round_trip(const fusions *f, CUstreamCaptureMode mode, int allocated, const char *kind) {
  char label[128];
  snprintf(label, sizeof label, "%s fusions, %s outputs, %s capture", kind, allocated ? "allocated" : "given",
           mode_name(mode));
  inputs in;
  make_inputs(&in);
  uk_array o[NOUT];
  memset(o, 0, sizeof o);
  if (!allocated) alloc_outputs(o);
  CHECK_OK(uk_device_synchronize());

  CUgraph graph = NULL;
  CUgraphExec exec = NULL;
  CHECK(begin_capture(stream, mode) == CUDA_SUCCESS);
  issue(f, &in.x, &in.y, o, 1);
  CUresult r = end_capture(stream, &graph);
  if (r != CUDA_SUCCESS) fprintf(stderr, "%s: cuStreamEndCapture returned %d\n", label, (int)r);
  CHECK(r == CUDA_SUCCESS && graph);
  if (allocated)
    for (int k = 0; k < NOUT; k++) CHECK(o[k].data != 0); /* graph allocations: addresses known at capture */
  if (graph) CHECK(instantiate(&exec, graph, 0) == CUDA_SUCCESS && exec);
  for (int rep = 0; exec && rep < 2; rep++) {
    fill(in.hx, &in.x);
    fill(in.hy, &in.y);
    /* Allocated outputs exist only while the graph's run holds them: the
     * new inputs make stale values fail instead. */
    if (!allocated)
      for (int k = 0; k < NOUT; k++) poison(&o[k], count_of(k));
    CHECK_OK(uk_device_synchronize()); /* the uploads are done before the graph reads them */
    CHECK(graph_launch(exec, stream) == CUDA_SUCCESS);
    CHECK(uk__cu.cuStreamSynchronize(stream) == CUDA_SUCCESS);
    char rl[160];
    snprintf(rl, sizeof rl, "%s, replay %d", label, rep + 1);
    verify(rl, o, in.hx, in.hy);
    if (allocated) {
      /* Graph allocations must be freed before the graph runs again; their
       * addresses stay the same from run to run. */
      uk_array saved[NOUT];
      memcpy(saved, o, sizeof saved);
      free_outputs(o, stream);
      CHECK(uk__cu.cuStreamSynchronize(stream) == CUDA_SUCCESS);
      memcpy(o, saved, sizeof saved);
    }
  }
  if (allocated) memset(o, 0, sizeof o);
  if (exec) exec_destroy(exec);
  if (graph) graph_destroy(graph);
  free_outputs(o, NULL);
  free_inputs(&in);
  CHECK_OK(uk_device_synchronize());
}

/* Plain calls outside capture (compiling and loading every kernel of the
 * shapes used), checked; and the plans have the kernels they should. */
static void warm_up(const fusions *f) {
  inputs in;
  make_inputs(&in);
  uk_array o[NOUT];
  memset(o, 0, sizeof o);
  alloc_outputs(o);
  CHECK_OK(uk_device_synchronize()); /* uploads and allocations done before the stream uses them */
  issue(f, &in.x, &in.y, o, 0);
  CHECK(uk__cu.cuStreamSynchronize(stream) == CUDA_SUCCESS);
  verify("warm-up outside capture", o, in.hx, in.hy);
  uk_arg a[2] = {uk_arg_array(&in.x), uk_arg_array(&in.y)};
  int kernels = 0;
  CHECK_OK(uk_fusion_kernel_count(f->center, a, 1, &o[C], 1, NULL, &kernels));
  CHECK(kernels == 1); /* the row plan (codegen/fuse_row.c): one kernel, dynamic shared memory */
  kernels = 0;
  CHECK_OK(uk_fusion_kernel_count(f->colcenter, a, 1, &o[K], 1, NULL, &kernels));
  CHECK(kernels >= 2); /* the split plan: an intermediate allocated stream-ordered (inside the graph) */
  kernels = 0;
  CHECK_OK(uk_fusion_kernel_count(f->ew, a, 2, &o[Z], 2, NULL, &kernels));
  CHECK(kernels == 1);
  kernels = 0;
  CHECK_OK(uk_fusion_kernel_count(f->rowsum, a, 1, &o[S], 1, NULL, &kernels));
  CHECK(kernels == 1);
  free_outputs(o, NULL);
  free_inputs(&in);
}

int main(void) {
  ut_require_gpu();
  ut_seed(1012);
  memcheck_order = getenv("UKERN_TEST_MEMCHECK") != NULL;
  CHECK_OK(uk_context_create(NULL, &ctx));
  CHECK_OK(uk_device_set_current(0));
  CHECK_OK(uk__cu_resolve((void **)&begin_capture, "cuStreamBeginCapture"));
  CHECK_OK(uk__cu_resolve((void **)&end_capture, "cuStreamEndCapture"));
  CHECK_OK(uk__cu_resolve((void **)&instantiate, "cuGraphInstantiateWithFlags"));
  CHECK_OK(uk__cu_resolve((void **)&graph_launch, "cuGraphLaunch"));
  CHECK_OK(uk__cu_resolve((void **)&exec_destroy, "cuGraphExecDestroy"));
  CHECK_OK(uk__cu_resolve((void **)&graph_destroy, "cuGraphDestroy"));
  CHECK(uk__cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  if (ut_failures) return ut_finish("test_gpu_fusion_graph");

  const CUstreamCaptureMode modes[3] = {CU_STREAM_CAPTURE_MODE_GLOBAL, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
                                        CU_STREAM_CAPTURE_MODE_RELAXED};
  fusions warm;
  make_fusions(&warm);
  warm_up(&warm);
  for (int m = 0; m < 3; m++)
    for (int allocated = 0; allocated < 2; allocated++) round_trip(&warm, modes[m], allocated, "warm");
  free_fusions(&warm);

  /* Cold: new fusion objects, so each call's plan, compile (a cache hit)
   * and module load happen inside the capture. */
  for (int m = 0; m < 3; m++)
    for (int allocated = 0; allocated < 2; allocated++) {
      fusions cold;
      make_fusions(&cold);
      round_trip(&cold, modes[m], allocated, "cold");
      free_fusions(&cold);
    }

  uk__cu.cuStreamDestroy(stream);
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_fusion_graph");
}
