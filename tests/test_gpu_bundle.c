/* Kernels launched from a bundle on the GPU (issue 26 item 1): a first
 * process runs an elementwise kernel, a reduction, a fusion and a raw
 * template kernel (compiling them into a cache directory); the parent packs
 * that directory into a bundle; a second process with an empty cache
 * directory and the bundle runs the same four calls. Both check every
 * result against a host reference in double precision (outputs poisoned
 * first, odd sizes, a broadcast operand), and the second must have found
 * all four in the bundle: no compile, no disk hit, NVRTC never loaded.
 * Each process is forked before anything touches CUDA or NVRTC (the parent
 * touches neither). */
#include <math.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/nvrtc_lib.h"
#include "testutil.h"

#define ROWS 1001
#define COLS 37

static const char raw_src[] =
    "template <typename T> __global__ void bscale(T *x, T a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] = x[i] * a + (T)1;\n"
    "}\n";

static int close_to(double got, double want) { return fabs(got - want) <= 1e-5 * (1.0 + fabs(want)); }

/* Exit codes: 0 good; 1 a wrong result; 2 wrong cache counts or NVRTC
 * loaded when served; 9 a call failed. */
static int run_all(const char *dir, const char *bundle) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.cache_dir = dir;
  const char *list[1] = {bundle};
  o.bundles = bundle ? list : NULL;
  o.num_bundles = bundle ? 1 : 0;
  uk_context *ctx = NULL;
  if (uk_context_create(&o, &ctx) != UK_OK) return 9;
  static float hx[ROWS * COLS], hy[COLS], hz[ROWS * COLS], hn[ROWS], hd[ROWS];
  static double hr[ROWS];
  for (int k = 0; k < ROWS * COLS; k++) hx[k] = (float)ut_uniform(-2, 2);
  for (int k = 0; k < COLS; k++) hy[k] = (float)ut_uniform(-2, 2);
  for (int k = 0; k < ROWS; k++) hr[k] = ut_uniform(-3, 3);
  int64_t s2[2] = {ROWS, COLS}, s1[1] = {COLS}, sr[1] = {ROWS};
  uk_array x, y, z, n, d, r;
  int rc = 0;
#define TRY(call)                                                                          \
  do {                                                                                     \
    if ((call) != UK_OK) {                                                                 \
      fprintf(stderr, "  %s: %s\n", #call, uk_last_error());                             \
      return 9;                                                                            \
    }                                                                                      \
  } while (0)
  TRY(uk_array_alloc(ctx, UK_FLOAT32, 2, s2, 0, NULL, &x));
  TRY(uk_array_alloc(ctx, UK_FLOAT32, 1, s1, 0, NULL, &y));
  TRY(uk_array_alloc(ctx, UK_FLOAT32, 2, s2, 0, NULL, &z));
  TRY(uk_array_alloc(ctx, UK_FLOAT32, 1, sr, 0, NULL, &n));
  TRY(uk_array_alloc(ctx, UK_FLOAT32, 1, sr, 0, NULL, &d));
  TRY(uk_array_alloc(ctx, UK_FLOAT64, 1, sr, 0, NULL, &r));
  TRY(uk_memcpy_htod(x.data, hx, sizeof hx));
  TRY(uk_memcpy_htod(y.data, hy, sizeof hy));
  TRY(uk_memcpy_htod(r.data, hr, sizeof hr));
  float poison[ROWS * COLS];
  for (int k = 0; k < ROWS * COLS; k++) poison[k] = NAN;
  TRY(uk_memcpy_htod(z.data, poison, sizeof hz));
  TRY(uk_memcpy_htod(n.data, poison, sizeof hn));
  TRY(uk_memcpy_htod(d.data, poison, sizeof hd));

  uk_elementwise *sq = NULL;
  TRY(uk_elementwise_create(
      ctx,
      &(uk_elementwise_spec){
          .in_params = "T x, T y", .out_params = "T z", .operation = "z = (x - y) * (x - y)", .name = "gbsq"},
      &sq));
  uk_arg in2[2] = {uk_arg_array(&x), uk_arg_array(&y)};
  TRY(uk_elementwise_call(sq, in2, 2, &z, 1, NULL));
  uk_reduction_spec spec = {.in_params = "T x", .out_params = "T y", .map_expr = "x * x", .reduce_expr = "a + b",
                            .post_map_expr = "y = sqrt(a)", .identity = "0", .name = "gbl2"};
  uk_reduction *l2 = NULL;
  TRY(uk_reduction_create(ctx, &spec, &l2));
  int axis = 1;
  uk_launch rl = {.axes = &axis, .num_axes = 1};
  uk_arg in1 = uk_arg_array(&x);
  TRY(uk_reduction_call(l2, &in1, 1, &n, 1, &rl));
  uk_fusion *dist = NULL;
  TRY(uk_fusion_create(
      ctx,
      &(uk_fusion_spec){
          .inputs = "x, y", .outputs = "d", .program = "t = x - y\nd = sqrt(sum(t * t, axis=-1))", .name = "gbdist"},
      &dist));
  TRY(uk_fusion_call(dist, in2, 2, &d, 1, NULL));
  const char *names[] = {"bscale<double>"};
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.name_expressions = names;
  mo.num_name_expressions = 1;
  uk_module *m = NULL;
  uk_function *f = NULL;
  TRY(uk_module_from_source(ctx, raw_src, &mo, &m));
  TRY(uk_module_function(m, "bscale<double>", &f));
  TRY(uk_function_set_signature(f, "double *x, double a, int n"));
  double a = 0.75;
  int count = ROWS;
  void *args[] = {&r.data, &a, &count};
  uk_grid_launch g = {.grid = {(ROWS + 127) / 128}, .block = {128}};
  TRY(uk_function_launch(f, &g, args));
  TRY(uk_device_synchronize());
  TRY(uk_memcpy_dtoh(hz, z.data, sizeof hz));
  TRY(uk_memcpy_dtoh(hn, n.data, sizeof hn));
  TRY(uk_memcpy_dtoh(hd, d.data, sizeof hd));
  double out_r[ROWS];
  TRY(uk_memcpy_dtoh(out_r, r.data, sizeof out_r));
  for (int i = 0; i < ROWS && !rc; i++) {
    double norm = 0, dd = 0;
    for (int j = 0; j < COLS; j++) {
      double v = hx[i * COLS + j], t = v - hy[j];
      norm += v * v;
      dd += t * t;
      if (!close_to(hz[i * COLS + j], t * t)) rc = 1;
    }
    if (!close_to(hn[i], sqrt(norm)) || !close_to(hd[i], sqrt(dd)) || !close_to(out_r[i], hr[i] * 0.75 + 1)) rc = 1;
    if (rc) fprintf(stderr, "  row %d: z %g n %g (%g) d %g (%g) r %g (%g)\n", i, hz[i * COLS], hn[i], sqrt(norm), hd[i],
                    sqrt(dd), out_r[i], hr[i] * 0.75 + 1);
  }
  uk_cache_stats s;
  uk_context_cache_stats(ctx, &s);
  if (bundle && (s.bundle_hits != 4 || s.compiles != 0 || s.disk_hits != 0 || uk__nvrtc_loaded())) {
    fprintf(stderr, "  served: bundle hits %llu, compiles %llu, disk hits %llu, NVRTC loaded %d\n",
            (unsigned long long)s.bundle_hits, (unsigned long long)s.compiles, (unsigned long long)s.disk_hits,
            uk__nvrtc_loaded());
    if (!rc) rc = 2;
  }
  if (!bundle && s.compiles != 4) rc = rc ? rc : 2;
  uk_module_destroy(m);
  uk_fusion_destroy(dist);
  uk_reduction_destroy(l2);
  uk_elementwise_destroy(sq);
  uk_array *all[] = {&x, &y, &z, &n, &d, &r};
  for (int k = 0; k < 6; k++) uk_array_free(ctx, all[k], NULL);
  uk_context_destroy(ctx);
  return rc;
}

static int in_child(const char *dir, const char *bundle) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) _exit(run_all(dir, bundle));
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

int main(void) {
  /* in a child: the parent never initialises CUDA (a forked child could
   * not use it then) */
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    int count = 0;
    _exit(uk_device_count(&count) == UK_OK && count > 0 ? 0 : 77);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) == 77) {
    printf("SKIP: no CUDA device\n");
    return 77;
  }
  ut_seed(26);
  char *fill = ut_temp_dir("gpu-bundle-fill"), *empty = ut_temp_dir("gpu-bundle-empty"),
       *out = ut_temp_dir("gpu-bundle-out");
  char bundle[4300];
  snprintf(bundle, sizeof bundle, "%s/gpu.ukb", out);
  int rc = in_child(fill, NULL);
  CHECK(rc == 0);
  if (rc) fprintf(stderr, "compiling run: exit %d\n", rc);
  char *report = NULL;
  CHECK_OK(uk_bundle_create_from_cache(fill, NULL, 0, bundle, &report));
  CHECK_CONTAINS(report, "4 kernels");
  uk_free(report);
  rc = in_child(empty, bundle);
  CHECK(rc == 0);
  if (rc) fprintf(stderr, "run from the bundle: exit %d\n", rc);
  free(fill);
  free(empty);
  free(out);
  return ut_finish("test_gpu_bundle");
}
