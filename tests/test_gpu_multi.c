/* Two GPUs, one context. Every kernel kind (elementwise, reduction, fusion,
 * raw) runs on each device from one thread, then from one thread per
 * device at once; device 1 adds no compile (one context, one compile:
 * cache statistics); outputs ukern allocates live on the inputs' device
 * (checked with uk_pointer_info_get); a module's __device__ global exists
 * once per device; device 1's stream works with device 0 current, and a
 * NULL stream then refuses device-1 arrays naming both devices; arrays on
 * two devices are refused naming both; a capture on device 1's stream
 * records a replayable graph; peer copies between the devices, with and
 * without peer access. Results against double-precision host references
 * on random data, outputs poisoned first. With fewer than 2 GPUs: SKIP. */
#include <math.h>
#include <pthread.h>

#include "graph_api.h"
#include "runtime/context.h"
#include "testutil.h"

enum { R = 517, C = 1031, N = R * C };

static const char raw_src[] =
    "__device__ double scale;\n"
    "extern \"C\" __global__ void affine(const double* x, double* y, double a, double b, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + b;\n"
    "}\n"
    "extern \"C\" __global__ void scaled(const double* x, double* y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = x[i] * scale;\n"
    "}\n";

static uk_context *ctx;
static uk_elementwise *ew;
static uk_reduction *red;
static uk_fusion *fus;
static uk_module *mod;
static uk_function *affine, *scaled;
static void *streams[2];

static int near(double got, double want, double tol) { return fabs(got - want) <= tol * (1 + fabs(want)); }

static void fill_random(double *v, int n, uint64_t *state) {
  for (int i = 0; i < n; i++) {
    *state ^= *state << 13, *state ^= *state >> 7, *state ^= *state << 17;
    v[i] = (double)(*state % 2000001) / 1000.0 - 1000.0 + 0.5; /* never 0 */
  }
}

/* The device of a pointer per the driver; -2 on failure. */
static int pointer_device(uint64_t p) {
  uk_pointer_info pi;
  return uk_pointer_info_get(p, &pi) == UK_OK ? pi.device : -2;
}

#define PROBLEM(...) (fprintf(stderr, "device %d: ", d), fprintf(stderr, __VA_ARGS__), fputc('\n', stderr), 1)
#define TRY(expr) \
  ((st = (expr)) != UK_OK ? PROBLEM("%s: %s: %s", #expr, uk_status_name(st), uk_last_error()) : 0)

/* Every kernel kind on device d, on its stream, with allocated outputs;
 * returns the number of problems (thread-safe: no CHECK counters). */
static int run_device(int d, uint64_t seed) {
  int bad = 0;
  uk_status st;
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + (uint64_t)d + 1;
  double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *h = malloc(N * sizeof *h);
  fill_random(x, N, &state);
  fill_random(y, N, &state);
  void *s = streams[d];
  int64_t shape[2] = {R, C};
  uk_array dx, dy, z, sum, dist, raw;
  memset(&dx, 0, sizeof dx), memset(&dy, 0, sizeof dy), memset(&raw, 0, sizeof raw);
  memset(&z, 0, sizeof z), memset(&sum, 0, sizeof sum), memset(&dist, 0, sizeof dist);
  bad += TRY(uk_array_alloc(ctx, UK_FLOAT64, 2, shape, d, s, &dx));
  bad += TRY(uk_array_alloc(ctx, UK_FLOAT64, 2, shape, d, s, &dy));
  bad += TRY(uk_array_alloc(ctx, UK_FLOAT64, 2, shape, d, s, &raw));
  if (bad) goto out;
  bad += TRY(uk_memcpy_htod_async(dx.data, x, N * sizeof *x, s));
  bad += TRY(uk_memcpy_htod_async(dy.data, y, N * sizeof *y, s));
  bad += TRY(uk_memset_d8_async(raw.data, 0xFF, N * sizeof(double), s)); /* NaN poison */

  uk_arg in[2] = {uk_arg_array(&dx), uk_arg_array(&dy)};
  uk_launch l;
  memset(&l, 0, sizeof l);
  l.stream = s;
  bad += TRY(uk_elementwise_call(ew, in, 2, &z, 1, &l));
  int axis = 1;
  uk_launch rl;
  memset(&rl, 0, sizeof rl);
  rl.stream = s, rl.axes = &axis, rl.num_axes = 1;
  bad += TRY(uk_reduction_call(red, in, 1, &sum, 1, &rl));
  bad += TRY(uk_fusion_call(fus, in, 2, &dist, 1, &l));
  double a = 1.5 + d, b = -0.25 * (d + 1);
  int n = N;
  void *args[] = {&dx.data, &raw.data, &a, &b, &n};
  uk_grid_launch g;
  memset(&g, 0, sizeof g);
  g.grid[0] = (N + 255) / 256, g.block[0] = 256, g.stream = s;
  bad += TRY(uk_function_launch(affine, &g, args));
  if (bad) goto out;

  int wrong = 0;
  bad += TRY(uk_memcpy_dtoh_async(h, z.data, N * sizeof *h, s));
  bad += TRY(uk_stream_synchronize(s));
  /* Allocated outputs: on the inputs' device, as the driver sees them. */
  const uk_array *outs[3] = {&z, &sum, &dist};
  for (int k = 0; k < 3; k++)
    if (outs[k]->device != d || pointer_device(outs[k]->data) != d)
      bad += PROBLEM("output %d is on device %d (driver: %d)", k, outs[k]->device, pointer_device(outs[k]->data));
  for (int i = 0; i < N; i++) wrong += !near(h[i], x[i] * y[i] + 1.0, 1e-15);
  bad += TRY(uk_memcpy_dtoh_async(h, raw.data, N * sizeof *h, s));
  bad += TRY(uk_stream_synchronize(s));
  for (int i = 0; i < N; i++) wrong += !near(h[i], a * x[i] + b, 1e-15);
  bad += TRY(uk_memcpy_dtoh_async(h, sum.data, R * sizeof *h, s));
  bad += TRY(uk_stream_synchronize(s));
  for (int r = 0; r < R; r++) {
    double ref = 0;
    for (int c = 0; c < C; c++) ref += x[r * C + c] * x[r * C + c];
    wrong += !near(h[r], ref, 1e-12);
  }
  bad += TRY(uk_memcpy_dtoh_async(h, dist.data, R * sizeof *h, s));
  bad += TRY(uk_stream_synchronize(s));
  for (int r = 0; r < R; r++) {
    double ref = 0;
    for (int c = 0; c < C; c++) ref += (x[r * C + c] - y[r * C + c]) * (x[r * C + c] - y[r * C + c]);
    wrong += !near(h[r], sqrt(ref), 1e-12);
  }
  if (wrong) bad += PROBLEM("%d wrong values", wrong);
out:
  uk_array_free(ctx, &dx, s), uk_array_free(ctx, &dy, s), uk_array_free(ctx, &raw, s);
  uk_array_free(ctx, &z, s), uk_array_free(ctx, &sum, s), uk_array_free(ctx, &dist, s);
  uk_stream_synchronize(s);
  free(x), free(y), free(h);
  return bad;
}

typedef struct job {
  int device, problems;
  uint64_t seed;
} job;

static void *run_job(void *p) {
  job *j = p;
  j->problems = run_device(j->device, j->seed);
  return NULL;
}

static void globals_per_device(void) {
  uint64_t g[2] = {0, 0};
  size_t bytes[2] = {0, 0};
  double scale[2] = {2.5, -3.25};
  for (int d = 0; d < 2; d++) {
    CHECK_OK(uk_module_global_on(mod, d, "scale", &g[d], &bytes[d]));
    CHECK(bytes[d] == sizeof(double));
    CHECK(pointer_device(g[d]) == d);
    CHECK_OK(uk_memcpy_htod(g[d], &scale[d], sizeof(double)));
  }
  CHECK(g[0] != g[1]);
  enum { M = 4099 };
  double *x = malloc(M * sizeof *x), *y = malloc(M * sizeof *y);
  for (int i = 0; i < M; i++) x[i] = ut_uniform(-10, 10);
  for (int d = 0; d < 2; d++) {
    uint64_t dx = 0, dy = 0;
    CHECK_OK(uk_mem_alloc(d, M * sizeof(double), &dx));
    CHECK_OK(uk_mem_alloc(d, M * sizeof(double), &dy));
    CHECK_OK(uk_memcpy_htod(dx, x, M * sizeof(double)));
    CHECK_OK(uk_memset_d8(dy, 0xFF, M * sizeof(double)));
    int n = M;
    void *args[] = {&dx, &dy, &n};
    uk_grid_launch gl;
    memset(&gl, 0, sizeof gl);
    gl.grid[0] = (M + 127) / 128, gl.block[0] = 128, gl.stream = streams[d];
    CHECK_OK(uk_function_launch(scaled, &gl, args));
    CHECK_OK(uk_stream_synchronize(streams[d]));
    CHECK_OK(uk_memcpy_dtoh(y, dy, M * sizeof(double)));
    int bad = 0;
    for (int i = 0; i < M; i++) bad += y[i] != x[i] * scale[d];
    CHECK(bad == 0);
    uk_mem_free(dx), uk_mem_free(dy);
  }
  free(x), free(y);
}

/* Device 0 current: device 1's stream runs device-1 arrays; a NULL stream
 * (device 0's) refuses them; arrays on two devices are refused. */
static void device_rules(void) {
  CHECK_OK(uk_device_set_current(0));
  int64_t shape[2] = {R, C};
  uk_array a0, a1, z;
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 2, shape, 0, streams[0], &a0));
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 2, shape, 1, streams[1], &a1));
  CHECK_OK(uk_memset_d8_async(a0.data, 0x3F, N * sizeof(double), streams[0]));
  CHECK_OK(uk_memset_d8_async(a1.data, 0x40, N * sizeof(double), streams[1])); /* 0x4040... = 32.5 */
  uk_launch l;
  memset(&l, 0, sizeof l);
  uk_arg in[2] = {uk_arg_array(&a1), uk_arg_array(&a1)};
  memset(&z, 0, sizeof z);
  l.stream = streams[1];
  CHECK_OK(uk_elementwise_call(ew, in, 2, &z, 1, &l));
  double v = 0, w = 0;
  CHECK_OK(uk_stream_synchronize(streams[1]));
  CHECK(z.device == 1 && pointer_device(z.data) == 1);
  CHECK_OK(uk_memcpy_dtoh(&v, z.data + 8 * 1234, sizeof v));
  CHECK_OK(uk_memcpy_dtoh(&w, a1.data, sizeof w));
  CHECK(near(v, w * w + 1.0, 1e-15)); /* the device fuses it into one fma */
  uk_array_free(ctx, &z, streams[1]);
  CUcontext cur = NULL, prim0 = NULL;
  uk__cu.cuCtxGetCurrent(&cur);
  CHECK_OK(uk__device_context(0, &prim0));
  CHECK(cur == prim0); /* ukern left the caller's context as it was */

  memset(&z, 0, sizeof z);
  l.stream = NULL;
  CHECK_STATUS(uk_elementwise_call(ew, in, 2, &z, 1, &l), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "fma_multi: the arrays are on device 1 but the launch runs on device 0");
  CHECK(z.data == 0);

  uk_arg mixed[2] = {uk_arg_array(&a0), uk_arg_array(&a1)};
  l.stream = streams[0];
  CHECK_STATUS(uk_elementwise_call(ew, mixed, 2, &z, 1, &l), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "fma_multi: input 'x' is on device 0 but input 'y' is on device 1");
  uk_launch rl;
  memset(&rl, 0, sizeof rl);
  rl.stream = streams[1];
  CHECK_STATUS(uk_reduction_call(red, &in[0], 1, &z, 1, &rl), UK_OK);
  uk_array_free(ctx, &z, streams[1]);
  memset(&z, 0, sizeof z);
  rl.stream = streams[0];
  CHECK_STATUS(uk_reduction_call(red, &in[0], 1, &z, 1, &rl), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "sumsq_multi: the arrays are on device 1 but the launch runs on device 0");
  CHECK_STATUS(uk_fusion_call(fus, mixed, 2, &z, 1, &l), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "device 0");
  CHECK_CONTAINS(uk_last_error(), "device 1");
  CHECK(z.data == 0);
  uk_array_free(ctx, &a0, streams[0]);
  uk_array_free(ctx, &a1, streams[1]);
  CHECK_OK(uk_stream_synchronize(streams[0]));
  CHECK_OK(uk_stream_synchronize(streams[1]));
}

/* An elementwise call and a raw launch captured on device 1's stream (with
 * device 0 current), replayed twice on new input. */
static void capture_on_device1(void) {
  ut_graph_api ga;
  memset(&ga, 0, sizeof ga);
  CHECK_OK(ut_graph_api_load(&ga));
  if (ut_failures) return;
  CHECK_OK(uk_device_set_current(0));
  int64_t shape[2] = {R, C};
  uk_array x, y, z, raw;
  void *s = streams[1];
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 2, shape, 1, s, &x));
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 2, shape, 1, s, &y));
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 2, shape, 1, s, &z));
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 2, shape, 1, s, &raw));
  CHECK_OK(uk_stream_synchronize(s));
  CUgraph graph = NULL;
  CUgraphExec exec = NULL;
  CHECK(ga.begin_capture((CUstream)s, CU_STREAM_CAPTURE_MODE_GLOBAL) == CUDA_SUCCESS);
  uk_arg in[2] = {uk_arg_array(&x), uk_arg_array(&y)};
  uk_launch l;
  memset(&l, 0, sizeof l);
  l.stream = s;
  CHECK_OK(uk_elementwise_call(ew, in, 2, &z, 1, &l));
  double a = -2.0, b = 0.125;
  int n = N;
  void *args[] = {&x.data, &raw.data, &a, &b, &n};
  uk_grid_launch g;
  memset(&g, 0, sizeof g);
  g.grid[0] = (N + 255) / 256, g.block[0] = 256, g.stream = s;
  CHECK_OK(uk_function_launch(affine, &g, args));
  CHECK(ga.end_capture((CUstream)s, &graph) == CUDA_SUCCESS);
  CHECK(graph && ga.instantiate(&exec, graph, 0) == CUDA_SUCCESS);
  double *hx = malloc(N * sizeof *hx), *hy = malloc(N * sizeof *hy), *h = malloc(N * sizeof *h);
  for (int rep = 0; exec && rep < 2; rep++) {
    for (int i = 0; i < N; i++) hx[i] = ut_uniform(-5, 5), hy[i] = ut_uniform(-5, 5);
    CHECK_OK(uk_memcpy_htod(x.data, hx, N * sizeof *hx));
    CHECK_OK(uk_memcpy_htod(y.data, hy, N * sizeof *hy));
    CHECK_OK(uk_memset_d8(z.data, 0xFF, N * sizeof(double)));
    CHECK_OK(uk_memset_d8(raw.data, 0xFF, N * sizeof(double)));
    CHECK(ga.launch(exec, (CUstream)s) == CUDA_SUCCESS);
    CHECK_OK(uk_stream_synchronize(s));
    int bad = 0;
    CHECK_OK(uk_memcpy_dtoh(h, z.data, N * sizeof *h));
    for (int i = 0; i < N; i++) bad += !near(h[i], hx[i] * hy[i] + 1.0, 1e-15);
    CHECK_OK(uk_memcpy_dtoh(h, raw.data, N * sizeof *h));
    for (int i = 0; i < N; i++) bad += !near(h[i], a * hx[i] + b, 1e-15);
    if (bad) fprintf(stderr, "graph on device 1, run %d: %d wrong values\n", rep, bad);
    CHECK(bad == 0);
  }
  if (exec) ga.exec_destroy(exec);
  if (graph) ga.destroy(graph);
  uk_array_free(ctx, &x, s), uk_array_free(ctx, &y, s), uk_array_free(ctx, &z, s), uk_array_free(ctx, &raw, s);
  CHECK_OK(uk_stream_synchronize(s));
  free(hx), free(hy), free(h);
}

/* Copies device 0 -> device 1: staged without peer access, direct with it;
 * disabling it twice says it was not enabled. */
static void peer_copies(void) {
  enum { M = (1 << 20) + 13 };
  unsigned char *h = malloc(M), *r = malloc(M);
  for (int i = 0; i < M; i++) h[i] = (unsigned char)(ut_rand() | 1);
  uint64_t src = 0, dst = 0;
  CHECK_OK(uk_mem_alloc(0, M, &src));
  CHECK_OK(uk_mem_alloc(1, M, &dst));
  CHECK_OK(uk_memcpy_htod(src, h, M));
  int can = 0;
  CHECK_OK(uk_device_can_access_peer(1, 0, &can));
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) {
      if (!can) {
        printf("note: device 1 cannot access device 0 directly; peer access not tested\n");
        break;
      }
      CHECK_OK(uk_device_enable_peer_access(1, 0));
    }
    CHECK_OK(uk_memset_d8(dst, 0, M));
    CHECK_OK(uk_memcpy_peer(dst, 1, src, 0, M / 2));
    CHECK_OK(uk_memcpy_peer_async(dst + M / 2, 1, src + M / 2, 0, M - M / 2, streams[1]));
    CHECK_OK(uk_stream_synchronize(streams[1]));
    memset(r, 0, M);
    CHECK_OK(uk_memcpy_dtoh(r, dst, M));
    CHECK(memcmp(r, h, M) == 0);
  }
  if (can) {
    CHECK_OK(uk_device_disable_peer_access(1, 0));
    CHECK_STATUS(uk_device_disable_peer_access(1, 0), UK_ERR_CUDA);
    CHECK_CONTAINS(uk_last_error(), "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED");
  }
  uk_mem_free(src), uk_mem_free(dst);
  free(h), free(r);
}

int main(void) {
  ut_require_gpu();
  int ndev = 0;
  CHECK_OK(uk_device_count(&ndev));
  if (ndev < 2) {
    printf("SKIP: needs 2 GPUs, found %d\n", ndev);
    return 77;
  }
  ut_seed(26);
  uk_device_info i0, i1;
  CHECK_OK(uk_device_info_get(0, &i0));
  CHECK_OK(uk_device_info_get(1, &i1));
  uk_options o;
  memset(&o, 0, sizeof o);
  o.disable_disk_cache = 1; /* the memory cache alone serves the second device */
  CHECK_OK(uk_context_create(&o, &ctx));
  CHECK_OK(uk_elementwise_create(ctx,
                                 &(uk_elementwise_spec){.in_params = "float64 x, float64 y",
                                                        .out_params = "float64 z",
                                                        .operation = "z = x * y + 1.0",
                                                        .name = "fma_multi"},
                                 &ew));
  uk_reduction_spec rs;
  memset(&rs, 0, sizeof rs);
  rs.in_params = "float64 x", rs.out_params = "float64 s", rs.map_expr = "x * x", rs.reduce_expr = "a + b";
  rs.post_map_expr = "s = a", rs.identity = "0", rs.name = "sumsq_multi";
  CHECK_OK(uk_reduction_create(ctx, &rs, &red));
  CHECK_OK(uk_fusion_create(ctx,
                            &(uk_fusion_spec){.inputs = "x, y",
                                              .outputs = "d",
                                              .program = "d = sqrt(sum((x - y) * (x - y), axis=-1))",
                                              .name = "dist_multi"},
                            &fus));
  CHECK_OK(uk_module_from_source(ctx, raw_src, NULL, &mod));
  if (mod) CHECK_OK(uk_module_function(mod, "affine", &affine));
  if (mod) CHECK_OK(uk_module_function(mod, "scaled", &scaled));
  if (ut_failures || !affine || !scaled) return ut_finish("test_gpu_multi");
  CHECK_OK(uk_function_set_signature(affine, "const double* x, double* y, double a, double b, int n"));
  CHECK_OK(uk_function_set_signature(scaled, "const double* x, double* y, int n"));
  for (int d = 0; d < 2; d++) CHECK_OK(uk_stream_create(d, UK_STREAM_NON_BLOCKING, 0, &streams[d]));

  /* One thread: device 0, then device 1, which compiles nothing. */
  uk_cache_stats s0, s1;
  CHECK(run_device(0, 1) == 0);
  CHECK_OK(uk_context_cache_stats(ctx, &s0));
  CHECK(run_device(1, 1) == 0);
  CHECK_OK(uk_context_cache_stats(ctx, &s1));
  printf("compiles: %llu after device 0, %llu after device 1 (memory hits %llu -> %llu)\n",
         (unsigned long long)s0.compiles, (unsigned long long)s1.compiles, (unsigned long long)s0.memory_hits,
         (unsigned long long)s1.memory_hits);
  if (i0.arch == i1.arch) {
    CHECK(s0.compiles > 0 && s1.compiles == s0.compiles);
    CHECK(s1.memory_hits > s0.memory_hits);
  } else {
    printf("note: devices of different archs (sm_%d, sm_%d) compile once each\n", i0.arch, i1.arch);
  }

  /* One thread per device, at once, three rounds. */
  for (int round = 0; round < 3; round++) {
    job jobs[2] = {{0, -1, 10 + (uint64_t)round}, {1, -1, 20 + (uint64_t)round}};
    pthread_t t[2];
    for (int d = 0; d < 2; d++) CHECK(pthread_create(&t[d], NULL, run_job, &jobs[d]) == 0);
    for (int d = 0; d < 2; d++) CHECK(pthread_join(t[d], NULL) == 0);
    CHECK(jobs[0].problems == 0 && jobs[1].problems == 0);
  }
  uk_cache_stats s2;
  CHECK_OK(uk_context_cache_stats(ctx, &s2));
  CHECK(s2.compiles == s1.compiles);

  globals_per_device();
  device_rules();
  capture_on_device1();
  peer_copies();

  for (int d = 0; d < 2; d++) CHECK_OK(uk_stream_destroy(streams[d]));
  uk_module_destroy(mod);
  uk_fusion_destroy(fus);
  uk_reduction_destroy(red);
  uk_elementwise_destroy(ew);
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_multi");
}
