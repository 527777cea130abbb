/* uk_kernel_from_source on a GPU: compile, look up, launch (with a
 * declared signature), check against a host reference, read the name and
 * the module back; a missing name is UK_ERR_NOT_FOUND and leaks nothing;
 * the kernel's function is borrowed (valid until uk_kernel_destroy). */
#include <math.h>

#include "testutil.h"

int main(void) {
  ut_require_gpu();
  ut_seed(5);
  uk_context *ctx;
  CHECK_OK(uk_context_create(NULL, &ctx));
  CHECK_OK(uk_device_set_current(0));
  const char *code =
      "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) y[i] = a * x[i] + y[i];\n"
      "}\n";
  uk_kernel *kern = NULL;
  CHECK_OK(uk_kernel_from_source(ctx, code, "saxpy", NULL, &kern));
  uk_function *f = uk_kernel_function(kern);
  if (!f) return ut_finish("test_gpu_kernel");
  CHECK_STREQ(uk_function_name(f), "saxpy");
  const void *img = NULL;
  size_t bytes = 0;
  CHECK_OK(uk_module_image(uk_function_module(f), &img, &bytes));
  CHECK(img && bytes > 0);
  CHECK_OK(uk_function_set_signature(f, "float a, const float *x, float *y, int n"));
  enum { N = 1001 };
  float hx[N], hy[N], out[N];
  for (int i = 0; i < N; i++) hx[i] = (float)ut_uniform(-3, 3), hy[i] = (float)ut_uniform(-3, 3);
  int64_t n = N;
  uk_array x, y;
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 1, &n, 0, NULL, &x));
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 1, &n, 0, NULL, &y));
  CHECK_OK(uk_memcpy_htod(x.data, hx, sizeof hx));
  CHECK_OK(uk_memcpy_htod(y.data, hy, sizeof hy));
  float a = 1.75f;
  int nn = N;
  void *args[] = {&a, &x.data, &y.data, &nn};
  uk_grid_launch g = {{(N + 127) / 128, 1, 1}, {128, 1, 1}, 0, NULL, 0, {0, 0, 0}};
  CHECK_OK(uk_function_launch(f, &g, args));
  CHECK_OK(uk_memcpy_dtoh(out, y.data, sizeof out));
  int bad = 0;
  for (int i = 0; i < N; i++) bad += !(fabs(out[i] - ((double)a * hx[i] + hy[i])) <= 1e-5 * (1 + fabs(out[i])));
  CHECK(bad == 0);
  uk_kernel *none = (uk_kernel *)1;
  CHECK_STATUS(uk_kernel_from_source(ctx, code, "saxpz", NULL, &none), UK_ERR_NOT_FOUND);
  CHECK_CONTAINS(uk_last_error(), "saxpz");
  CHECK(none == (uk_kernel *)1);
  /* Two kernels from one source are independent: destroying one leaves the other launchable. */
  uk_kernel *other = NULL;
  CHECK_OK(uk_kernel_from_source(ctx, code, "saxpy", NULL, &other));
  CHECK(uk_kernel_function(other) != f);
  uk_kernel_destroy(other);
  CHECK_STREQ(uk_function_name(f), "saxpy");
  CHECK_OK(uk_function_launch(f, &g, args));
  CHECK_OK(uk_device_synchronize());
  uk_kernel_destroy(kern);
  uk_array_free(ctx, &x, NULL);
  uk_array_free(ctx, &y, NULL);
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_kernel");
}
