/* Every launching call inside a CUDA graph: uk_elementwise_call,
 * uk_reduction_call (a split full reduction, which uses scratch, and an axis
 * reduction) and uk_function_launch, with given and with allocated outputs,
 * captured on a non-blocking stream in each of the three capture modes,
 * instantiated and replayed twice with new input data between the replays,
 * against a host reference in double precision. Warm kernels (compiled and
 * loaded before the capture) and cold ones (first called inside the
 * capture). The capture must end cleanly: no ukern call may invalidate it. */
#include <math.h>

#include "runtime/cudadrv.h"
#include "testutil.h"

#define ROWS 1009
#define COLS 991
#define N ((int64_t)ROWS * COLS) /* odd, and large enough for a split reduction */

static uk_context *ctx;
static CUstream stream;

static __typeof__(&cuStreamBeginCapture) begin_capture;
static __typeof__(&cuStreamEndCapture) end_capture;
static __typeof__(&cuGraphInstantiateWithFlags) instantiate;
static __typeof__(&cuGraphLaunch) graph_launch;
static __typeof__(&cuGraphExecDestroy) exec_destroy;
static __typeof__(&cuGraphDestroy) graph_destroy;

typedef struct kernels {
  uk_elementwise *ew;
  uk_reduction *sum_sq; /* full and per-row */
  uk_module *mod;
  uk_function *fn;
} kernels;

static const char *raw_src =
    "extern \"C\" __global__ void axmy(double a, const double *x, const double *y, double *w,\n"
    "                                  long long n) {\n"
    "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) w[i] = a * x[i] - y[i];\n"
    "}\n";

static void make_kernels(kernels *k) {
  memset(k, 0, sizeof *k);
  CHECK_OK(uk_elementwise_create(
      ctx,
      &(uk_elementwise_spec){
          .in_params = "T x, T y", .out_params = "T z", .operation = "z = x * y + 2 * x", .name = "graph_ew"},
      &k->ew));
  uk_reduction_spec s;
  memset(&s, 0, sizeof s);
  s.in_params = "T x";
  s.out_params = "T y";
  s.map_expr = "x * x";
  s.reduce_expr = "a + b";
  s.post_map_expr = "y = a";
  s.identity = "0";
  s.name = "graph_sum_sq";
  CHECK_OK(uk_reduction_create(ctx, &s, &k->sum_sq));
  CHECK_OK(uk_module_from_source(ctx, raw_src, NULL, &k->mod));
  if (k->mod) {
    CHECK_OK(uk_module_function(k->mod, "axmy", &k->fn));
    if (k->fn)
      CHECK_OK(uk_function_set_signature(k->fn, "double a, const double *x, const double *y, double *w, long long n"));
  }
}

static void free_kernels(kernels *k) {
  uk_elementwise_destroy(k->ew);
  uk_reduction_destroy(k->sum_sq);
  uk_module_destroy(k->mod);
}

/* Outputs of one round: z (N), full (0-d), rows (ROWS), w (N). */
typedef struct outs {
  uk_array z, full, rows, w;
} outs;

static void alloc_outputs(outs *o) {
  int64_t n = N, r = ROWS;
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 1, &n, 0, NULL, &o->z));
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 0, NULL, 0, NULL, &o->full));
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 1, &r, 0, NULL, &o->rows));
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 1, &n, 0, NULL, &o->w));
}

static void free_outputs(outs *o, void *s) {
  uk_array_free(ctx, &o->z, s);
  uk_array_free(ctx, &o->full, s);
  uk_array_free(ctx, &o->rows, s);
  uk_array_free(ctx, &o->w, s);
}

static int capturing(void) {
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  return uk__cu.cuStreamIsCapturing(stream, &st) == CUDA_SUCCESS && st == CU_STREAM_CAPTURE_STATUS_ACTIVE;
}

/* The calls under test, on `stream`; o's outputs allocated when data == 0. */
static void issue(kernels *k, const uk_array *x, const uk_array *y, outs *o, int captured) {
  uk_launch l = {.stream = stream};
  uk_arg in[2] = {uk_arg_array(x), uk_arg_array(y)};
  CHECK_OK(uk_elementwise_call(k->ew, in, 2, &o->z, 1, &l));
  CHECK(capturing() == captured);
  uk_launch all = {.stream = stream};
  CHECK_OK(uk_reduction_call(k->sum_sq, in, 1, &o->full, 1, &all));
  CHECK(capturing() == captured);
  uk_array x2 = *x;
  x2.ndim = 2;
  x2.shape[0] = ROWS, x2.shape[1] = COLS;
  x2.strides[0] = COLS * 8, x2.strides[1] = 8;
  uk_arg in2 = uk_arg_array(&x2);
  int axis = -1;
  uk_launch by_row = {.stream = stream, .axes = &axis, .num_axes = 1};
  CHECK_OK(uk_reduction_call(k->sum_sq, &in2, 1, &o->rows, 1, &by_row));
  CHECK(capturing() == captured);
  if (!o->w.data) {
    /* The raw kernel writes a given array: allocate it in the graph too. */
    int64_t n = N;
    CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 1, &n, 0, stream, &o->w));
  }
  double a = 1.5;
  long long n = N;
  uint64_t px = x->data, py = y->data, pw = o->w.data;
  void *args[] = {&a, &px, &py, &pw, &n};
  uk_grid_launch g = {{(unsigned)((N + 255) / 256), 1, 1}, {256, 1, 1}, 0, stream, 0, {0, 0, 0}};
  CHECK_OK(uk_function_launch(k->fn, &g, args));
  CHECK(capturing() == captured);
}

static double *download(const uk_array *a, int64_t n) {
  double *h = malloc((size_t)n * 8);
  CHECK_OK(uk_memcpy_dtoh(h, a->data, (size_t)n * 8));
  return h;
}

static void poison(const uk_array *a, int64_t n) {
  double *h = malloc((size_t)n * 8);
  for (int64_t i = 0; i < n; i++) h[i] = NAN;
  CHECK_OK(uk_memcpy_htod(a->data, h, (size_t)n * 8));
  free(h);
}

static int close_to(double got, double want, double rel) {
  return fabs(got - want) <= rel * fmax(1.0, fabs(want));
}

/* Compares one round's outputs with the reference for hx, hy. */
static void verify(const char *label, const outs *o, const double *hx, const double *hy) {
  double *z = download(&o->z, N), *full = download(&o->full, 1), *rows = download(&o->rows, ROWS),
         *w = download(&o->w, N);
  int bad_z = 0, bad_w = 0, bad_rows = 0;
  double total = 0;
  for (int64_t r = 0; r < ROWS; r++) {
    double s = 0;
    for (int64_t c = 0; c < COLS; c++) {
      int64_t i = r * COLS + c;
      s += hx[i] * hx[i];
      bad_z += !close_to(z[i], hx[i] * hy[i] + 2 * hx[i], 1e-14);
      bad_w += !close_to(w[i], 1.5 * hx[i] - hy[i], 1e-14);
    }
    bad_rows += !close_to(rows[r], s, 1e-12);
    total += s;
  }
  int bad_full = !close_to(full[0], total, 1e-10);
  if (bad_z || bad_w || bad_rows || bad_full)
    fprintf(stderr, "%s: wrong results: %d z, %d w, %d rows, full %.17g vs %.17g\n", label, bad_z, bad_w,
            bad_rows, full[0], total);
  CHECK(bad_z == 0);
  CHECK(bad_w == 0);
  CHECK(bad_rows == 0);
  CHECK(!bad_full);
  free(z), free(full), free(rows), free(w);
}

static void fill(double *h, const uk_array *d) {
  for (int64_t i = 0; i < N; i++) h[i] = ut_uniform(-4, 4);
  CHECK_OK(uk_memcpy_htod(d->data, h, (size_t)N * 8));
}

static const char *mode_name(CUstreamCaptureMode m) {
  return m == CU_STREAM_CAPTURE_MODE_GLOBAL ? "global" : m == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL ? "thread-local"
                                                                                                   : "relaxed";
}

/* One capture + instantiate + two replays. */
static void round_trip(kernels *k, CUstreamCaptureMode mode, int allocated, const char *kind) {
  char label[128];
  snprintf(label, sizeof label, "%s kernels, %s outputs, %s capture", kind, allocated ? "allocated" : "given",
           mode_name(mode));
  int64_t n = N;
  uk_array x, y;
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 1, &n, 0, NULL, &x));
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 1, &n, 0, NULL, &y));
  double *hx = malloc((size_t)N * 8), *hy = malloc((size_t)N * 8);
  fill(hx, &x);
  fill(hy, &y);
  outs o;
  memset(&o, 0, sizeof o);
  if (!allocated) alloc_outputs(&o);
  CHECK_OK(uk_device_synchronize());

  CUgraph graph = NULL;
  CUgraphExec exec = NULL;
  CHECK(begin_capture(stream, mode) == CUDA_SUCCESS);
  issue(k, &x, &y, &o, 1);
  CUresult r = end_capture(stream, &graph);
  if (r != CUDA_SUCCESS) fprintf(stderr, "%s: cuStreamEndCapture returned %d\n", label, (int)r);
  CHECK(r == CUDA_SUCCESS && graph);
  if (graph) CHECK(instantiate(&exec, graph, 0) == CUDA_SUCCESS && exec);
  for (int rep = 0; exec && rep < 2; rep++) {
    fill(hx, &x);
    fill(hy, &y);
    /* Allocated outputs exist only while the graph's run holds them: the
     * new inputs make stale values fail instead. */
    if (!allocated) poison(&o.z, N), poison(&o.full, 1), poison(&o.rows, ROWS), poison(&o.w, N);
    CHECK_OK(uk_device_synchronize()); /* the uploads are done before the graph reads them */
    CHECK(graph_launch(exec, stream) == CUDA_SUCCESS);
    CHECK(uk__cu.cuStreamSynchronize(stream) == CUDA_SUCCESS);
    char rl[160];
    snprintf(rl, sizeof rl, "%s, replay %d", label, rep + 1);
    verify(rl, &o, hx, hy);
    if (allocated) {
      /* Graph allocations must be freed before the graph runs again; their
       * addresses stay the same from run to run. */
      uk_array saved[4] = {o.z, o.full, o.rows, o.w};
      free_outputs(&o, stream);
      CHECK(uk__cu.cuStreamSynchronize(stream) == CUDA_SUCCESS);
      o.z = saved[0], o.full = saved[1], o.rows = saved[2], o.w = saved[3];
    }
  }
  if (allocated) memset(&o, 0, sizeof o);
  if (exec) exec_destroy(exec);
  if (graph) graph_destroy(graph);
  free_outputs(&o, NULL);
  uk_array_free(ctx, &x, NULL);
  uk_array_free(ctx, &y, NULL);
  free(hx), free(hy);
  CHECK_OK(uk_device_synchronize());
}

int main(void) {
  ut_require_gpu();
  ut_seed(10);
  CHECK_OK(uk_context_create(NULL, &ctx));
  CHECK_OK(uk_device_set_current(0));
  CHECK_OK(uk__cu_resolve((void **)&begin_capture, "cuStreamBeginCapture"));
  CHECK_OK(uk__cu_resolve((void **)&end_capture, "cuStreamEndCapture"));
  CHECK_OK(uk__cu_resolve((void **)&instantiate, "cuGraphInstantiateWithFlags"));
  CHECK_OK(uk__cu_resolve((void **)&graph_launch, "cuGraphLaunch"));
  CHECK_OK(uk__cu_resolve((void **)&exec_destroy, "cuGraphExecDestroy"));
  CHECK_OK(uk__cu_resolve((void **)&graph_destroy, "cuGraphDestroy"));
  CHECK(uk__cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  if (ut_failures) return ut_finish("test_gpu_graph");

  const CUstreamCaptureMode modes[3] = {CU_STREAM_CAPTURE_MODE_GLOBAL, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
                                        CU_STREAM_CAPTURE_MODE_RELAXED};
  /* Warm: every kernel and specialisation compiled and loaded by a plain
   * call first (the same shapes, so the capture only launches). */
  kernels warm;
  make_kernels(&warm);
  {
    int64_t n = N;
    uk_array x, y;
    CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 1, &n, 0, NULL, &x));
    CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 1, &n, 0, NULL, &y));
    double *hx = malloc((size_t)N * 8), *hy = malloc((size_t)N * 8);
    fill(hx, &x);
    fill(hy, &y);
    outs o;
    memset(&o, 0, sizeof o);
    alloc_outputs(&o);
    CHECK_OK(uk_device_synchronize()); /* uploads and allocations done before the stream uses them */
    issue(&warm, &x, &y, &o, 0);
    CHECK(uk__cu.cuStreamSynchronize(stream) == CUDA_SUCCESS);
    verify("warm-up outside capture", &o, hx, hy);
    free_outputs(&o, NULL);
    uk_array_free(ctx, &x, NULL);
    uk_array_free(ctx, &y, NULL);
    free(hx), free(hy);
  }
  for (int m = 0; m < 3; m++)
    for (int allocated = 0; allocated < 2; allocated++) round_trip(&warm, modes[m], allocated, "warm");
  free_kernels(&warm);

  /* Cold: new kernel objects, so the first call of each (compile or cache
   * hit, module load, function lookup, signature check) runs inside the
   * capture. */
  for (int m = 0; m < 3; m++)
    for (int allocated = 0; allocated < 2; allocated++) {
      kernels cold;
      make_kernels(&cold);
      round_trip(&cold, modes[m], allocated, "cold");
      free_kernels(&cold);
    }

  uk__cu.cuStreamDestroy(stream);
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_graph");
}
