/* RawModule with a kernel template instantiated for float and double through
 * name expressions, launched with a declared parameter list. */
#include <math.h>

#include "common.h"

static const char source[] =
    "template <typename T>\n"
    "__global__ void axpy(T a, const T* x, T* y, long long n) {\n"
    "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

static int run(uk_module *m, uk_context *ctx, int dbl) {
  enum { N = 100003 };
  static double hx[N], hy[N], out[N];
  unsigned seed = dbl ? 5u : 4u;
  for (int i = 0; i < N; i++) hx[i] = example_rand(&seed), hy[i] = example_rand(&seed);
  uk_function *f;
  TRY(uk_module_function(m, dbl ? "axpy<double>" : "axpy<float>", &f));
  TRY(uk_function_set_signature(f, dbl ? "double a, const double* x, double* y, long long n"
                                       : "float a, const float* x, float* y, long long n"));
  int64_t n = N;
  uk_dtype t = dbl ? UK_FLOAT64 : UK_FLOAT32;
  uk_array x, y;
  TRY(uk_array_alloc(ctx, t, 1, &n, 0, NULL, &x));
  TRY(uk_array_alloc(ctx, t, 1, &n, 0, NULL, &y));
  static float fx[N], fy[N];
  for (int i = 0; i < N; i++) fx[i] = (float)hx[i], fy[i] = (float)hy[i];
  TRY(uk_memcpy_htod(x.data, dbl ? (void *)hx : (void *)fx, (size_t)N * uk_dtype_size(t)));
  TRY(uk_memcpy_htod(y.data, dbl ? (void *)hy : (void *)fy, (size_t)N * uk_dtype_size(t)));
  double ad = 2.5;
  float af = 2.5f;
  long long nn = N;
  void *args[4] = {dbl ? (void *)&ad : (void *)&af, &x.data, &y.data, &nn};
  uk_grid_launch g = {{(N + 255) / 256, 1, 1}, {256, 1, 1}, 0, NULL, 0, {0, 0, 0}};
  TRY(uk_function_launch(f, &g, args));
  TRY(uk_device_synchronize());
  int bad = 0;
  if (dbl) {
    TRY(uk_memcpy_dtoh(out, y.data, sizeof out));
    for (int i = 0; i < N; i++) bad += fabs(out[i] - fma(2.5, hx[i], hy[i])) > 1e-15; /* fused or not */
  } else {
    static float of[N];
    TRY(uk_memcpy_dtoh(of, y.data, sizeof of));
    for (int i = 0; i < N; i++) bad += fabsf(of[i] - fmaf(2.5f, fx[i], fy[i])) > 1e-6f;
  }
  printf("axpy<%s>: %d of %d elements wrong\n", dbl ? "double" : "float", bad, N);
  uk_array_free(ctx, &x, NULL);
  uk_array_free(ctx, &y, NULL);
  return bad;
}

int main(void) {
  need_gpu();
  uk_context *ctx;
  TRY(uk_context_create(NULL, &ctx));
  const char *names[] = {"axpy<float>", "axpy<double>"};
  uk_module_options mo = {0};
  mo.name_expressions = names;
  mo.num_name_expressions = 2;
  mo.name = "axpy_module";
  uk_module *m;
  TRY(uk_module_from_source(ctx, source, &mo, &m));
  int bad = run(m, ctx, 0) + run(m, ctx, 1);
  uk_module_destroy(m);
  uk_context_destroy(ctx);
  return bad ? 1 : 0;
}
