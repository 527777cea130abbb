/* One module, compiled once, launched on two GPUs: each device loads it
 * into its own primary context on first use. Streams are created in each
 * device's primary context; results are checked on both. */
#include <math.h>

#include "runtime/context.h"
#include "testutil.h"

static const char *src =
    "extern \"C\" __global__ void affine(const double* x, double* y, double a, double b, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + b;\n"
    "}\n";

int main(void) {
  ut_require_gpu();
  int ndev = 0;
  CHECK_OK(uk_device_count(&ndev));
  if (ndev < 2) {
    printf("SKIP: needs 2 GPUs, found %d\n", ndev);
    return 77;
  }
  ut_seed(7);
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(NULL, &ctx));
  uk_module *m = NULL;
  CHECK_OK(uk_module_from_source(ctx, src, NULL, &m));
  uk_function *f = NULL;
  CHECK_OK(uk_module_function(m, "affine", &f));
  if (!f) return ut_finish("test_gpu_multi");
  CHECK_OK(uk_function_set_signature(f, "const double* x, double* y, double a, double b, int n"));

  enum { N = 300007 };
  double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  for (int i = 0; i < N; i++) x[i] = ut_uniform(-100, 100);
  CUstream streams[2] = {NULL, NULL};
  uk_array dx[2], dy[2];
  double a[2] = {1.5, -0.25}, b[2] = {3.0, 7.5};
  int n = N;
  int64_t shape = N;
  for (int d = 0; d < 2; d++) {
    CHECK_OK(uk_device_set_current(d));
    CHECK_OK(uk__cu_check(uk__cu.cuStreamCreate(&streams[d], CU_STREAM_NON_BLOCKING),
                          "cuStreamCreate"));
    CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 1, &shape, d, streams[d], &dx[d]));
    CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 1, &shape, d, streams[d], &dy[d]));
    CHECK(dx[d].device == d);
    CHECK_OK(uk__cu_check(uk__cu.cuStreamSynchronize(streams[d]), "sync"));
    CHECK_OK(uk_memcpy_htod(dx[d].data, x, N * sizeof(double)));
    for (int i = 0; i < N; i++) y[i] = NAN;
    CHECK_OK(uk_memcpy_htod(dy[d].data, y, N * sizeof(double)));
    CHECK_OK(uk_device_synchronize());
  }
  /* Device 0 current while launching on device 1's stream: ukern enters the
   * stream's device for the launch and leaves the caller's context as is. */
  CHECK_OK(uk_device_set_current(0));
  for (int d = 0; d < 2; d++) {
    void *args[] = {&dx[d].data, &dy[d].data, &a[d], &b[d], &n};
    uk_grid_launch g = {{(N + 255) / 256, 1, 1}, {256, 1, 1}, 0, streams[d], 0, {0, 0, 0}};
    CHECK_OK(uk_function_launch(f, &g, args));
  }
  CUcontext cur = NULL, prim0 = NULL;
  uk__cu.cuCtxGetCurrent(&cur);
  CHECK_OK(uk__device_context(0, &prim0));
  CHECK(cur == prim0);
  for (int d = 0; d < 2; d++) {
    CHECK_OK(uk__cu_check(uk__cu.cuStreamSynchronize(streams[d]), "sync"));
    CHECK_OK(uk_memcpy_dtoh(y, dy[d].data, N * sizeof(double)));
    int bad = 0;
    /* NVRTC contracts a * x + b into one fma: allow that rounding difference */
    for (int i = 0; i < N; i++) bad += !(fabs(y[i] - (a[d] * x[i] + b[d])) <= 1e-14 * (fabs(a[d] * x[i]) + fabs(b[d])));
    if (bad) fprintf(stderr, "device %d: %d wrong elements\n", d, bad);
    CHECK(bad == 0);
    uk_array_free(ctx, &dx[d], streams[d]);
    uk_array_free(ctx, &dy[d], streams[d]);
    uk__cu.cuStreamSynchronize(streams[d]);
    uk__cu.cuStreamDestroy(streams[d]);
  }
  free(x);
  free(y);
  uk_module_destroy(m);
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_multi");
}
