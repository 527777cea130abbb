/* uk_module_fatbin and uk_fusion_compile_info on a GPU: a fatbin's cubin
 * and its PTX (JIT-compiled by the driver) both run; after a fusion's
 * compile_info a call compiles nothing and computes the right values. */
#include <stdio.h>

#include "testutil.h"

static const char *const code =
    "extern \"C\" __global__ void affine(float *y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = y[i] * 2.0f + 1.0f;\n"
    "}\n";

static float *random_floats(int n) {
  float *v = malloc((size_t)n * sizeof *v);
  for (int i = 0; v && i < n; i++) {
    double u = ut_uniform(-1.0, 1.0);
    v[i] = (float)(u == 0.0 ? 0.25 : u);
  }
  return v;
}

/* Loads a fatbin of `archs` and runs affine on n elements: every one right. */
static void run_fatbin(uk_context *ctx, const char *const *archs, int narchs, const char *what) {
  void *fat = NULL;
  size_t bytes = 0;
  CHECK_OK(uk_module_fatbin(ctx, code, NULL, archs, narchs, &fat, &bytes, NULL));
  uk_module *m = NULL;
  if (fat) CHECK_OK(uk_module_from_image(ctx, fat, bytes, &m));
  uk_free(fat);
  uk_function *f = NULL;
  if (m) CHECK_OK(uk_module_function(m, "affine", &f));
  int n = 1001;
  int64_t shape = n;
  float *h = random_floats(n), *back = malloc((size_t)n * sizeof *back);
  uk_array y = {0};
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 1, &shape, 0, NULL, &y));
  if (f && h && back && y.data) {
    CHECK_OK(uk_memcpy_htod(y.data, h, (size_t)n * sizeof *h));
    void *args[] = {&y.data, &n};
    uk_grid_launch g = {{(unsigned)(n + 127) / 128, 1, 1}, {128, 1, 1}, 0, NULL, 0, {0, 0, 0}};
    CHECK_OK(uk_function_launch(f, &g, args));
    CHECK_OK(uk_device_synchronize());
    CHECK_OK(uk_memcpy_dtoh(back, y.data, (size_t)n * sizeof *back));
    int bad = 0;
    for (int i = 0; i < n; i++) bad += back[i] != (float)((double)h[i] * 2.0 + 1.0);
    if (bad) fprintf(stderr, "fatbin (%s): %d wrong elements\n", what, bad);
    CHECK(bad == 0);
  }
  uk_array_free(ctx, &y, NULL);
  uk_module_destroy(m);
  free(h);
  free(back);
}

static void fusion_info_then_call(uk_context *ctx) {
  uk_fusion *f = NULL;
  CHECK_OK(uk_fusion_create(
      ctx, &(uk_fusion_spec){.inputs = "x, y", .outputs = "z", .program = "z = x * 2 + y", .name = "twice_plus"}, &f));
  if (!f) return;
  int n = 1001;
  int64_t shape = n;
  float *hx = random_floats(n), *hy = random_floats(n), *hz = malloc((size_t)n * sizeof *hz);
  uk_array x = {0}, y = {0}, z = {0};
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 1, &shape, 0, NULL, &x));
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 1, &shape, 0, NULL, &y));
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 1, &shape, 0, NULL, &z));
  if (hx && hy && hz && x.data && y.data && z.data) {
    CHECK_OK(uk_memcpy_htod(x.data, hx, (size_t)n * 4));
    CHECK_OK(uk_memcpy_htod(y.data, hy, (size_t)n * 4));
    CHECK_OK(uk_memset_d8(z.data, 0xff, (size_t)n * 4)); /* poison: NaN */
    uk_arg in[2] = {uk_arg_array(&x), uk_arg_array(&y)};
    uk_compile_info info = {0};
    CHECK_OK(uk_fusion_compile_info(f, in, 2, &z, 1, NULL, &info));
    uk_device_info dev;
    CHECK_OK(uk_device_info_get(0, &dev));
    CHECK(info.arch == dev.arch && info.image_bytes > 0 && info.log != NULL);
    uk_free(info.log);
    uk_cache_stats before, after;
    CHECK_OK(uk_context_cache_stats(ctx, &before));
    CHECK_OK(uk_fusion_call(f, in, 2, &z, 1, NULL));
    CHECK_OK(uk_device_synchronize());
    CHECK_OK(uk_context_cache_stats(ctx, &after));
    CHECK(after.compiles == before.compiles); /* compile_info compiled what the call runs */
    CHECK_OK(uk_memcpy_dtoh(hz, z.data, (size_t)n * 4));
    int bad = 0;
    for (int i = 0; i < n; i++) bad += hz[i] != (float)((double)hx[i] * 2.0 + (double)hy[i]);
    if (bad) fprintf(stderr, "fusion after compile_info: %d wrong elements\n", bad);
    CHECK(bad == 0);
  }
  uk_array_free(ctx, &x, NULL);
  uk_array_free(ctx, &y, NULL);
  uk_array_free(ctx, &z, NULL);
  uk_fusion_destroy(f);
  free(hx);
  free(hy);
  free(hz);
}

int main(void) {
  ut_require_gpu();
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(NULL, &ctx));
  uk_device_info dev;
  CHECK_OK(uk_device_info_get(0, &dev));
  if (ctx) {
    char own[16], ptx[24];
    snprintf(own, sizeof own, "%d", dev.arch);
    snprintf(ptx, sizeof ptx, "compute_%d", dev.arch >= 80 ? 80 : dev.arch);
    const char *cubin_only[] = {own};
    run_fatbin(ctx, cubin_only, 1, "the device's cubin");
    /* sm_80 cubins do not run on sm_90 and later: the driver JIT-compiles the PTX */
    const char *needs_ptx[] = {dev.arch == 80 ? "86" : "80", ptx};
    run_fatbin(ctx, needs_ptx, 2, "PTX");
    fusion_info_then_call(ctx);
  }
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_tool_api");
}
