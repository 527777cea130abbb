/* Parameter layouts read from the cubin, against the driver on a GPU:
 * - for kernels with mixed parameter types (char, double, pointers, a
 *   12-byte struct, a 16-byte aligned struct, short, float4, int3, double2,
 *   more than 4 KiB of parameters), uk_function_params equals cuFuncGetParamInfo parameter by
 *   parameter, and the count matches (the driver refuses one index more);
 * - arguments packed by that layout into one buffer and launched with
 *   CU_LAUNCH_PARAM_BUFFER_POINTER reach the kernel intact (each value is
 *   written back and compared);
 * - a function found without a device handle (as uk_module_function makes
 *   one on a machine without a GPU) resolves at its first launch;
 * - a PTX module's layout comes from the driver and equals the cubin's;
 * - module source and options on a GPU (the device's arch is the target),
 *   and none for a module loaded from an image. */
#include <math.h>

#include "runtime/module.h"
#include "testutil.h"

static const char *src =
    "struct S12 { int a, b, c; };\n"
    "struct __align__(16) A16 { float x, y, z, w; };\n"
    "struct Big { char b[5000]; };\n"
    "extern \"C\" __global__ void mixed(char c, double d, double *out, S12 s, A16 a, const int *q, short h) {\n"
    "  out[0] = c; out[1] = d; out[2] = s.a; out[3] = s.b; out[4] = s.c; out[5] = a.x;\n"
    "  out[6] = a.y; out[7] = a.z; out[8] = a.w; out[9] = q[0]; out[10] = h;\n"
    "}\n"
    "extern \"C\" __global__ void big(double *out, Big b, char c) {\n"
    "  out[0] = b.b[0]; out[1] = b.b[4999]; out[2] = c;\n"
    "}\n"
    "extern \"C\" __global__ void vecs(char c, float4 v, int3 t, double2 d, double *out) {\n"
    "  out[0] = c; out[1] = v.x; out[2] = v.w; out[3] = t.x; out[4] = t.z; out[5] = d.x; out[6] = d.y;\n"
    "}\n"
    "extern \"C\" __global__ void none() {}\n";

typedef struct S12 { int a, b, c; } S12;
typedef struct A16 { float x, y, z, w; } A16;

/* The cubin's layout equals the driver's for f. */
static void cross_check(uk_function *f, const char *name) {
  int n = -1;
  const uk_param_info *ps = NULL;
  CHECK_OK(uk_function_params(f, &n, &ps));
  int dev = 0;
  CUfunction fn = f->raw[dev];
  CHECK(fn != NULL);
  if (!fn || uk__cu_need(cuFuncGetParamInfo) != UK_OK) return;
  for (int k = 0; k < n; k++) {
    size_t off = 0, size = 0;
    CHECK(uk__cu.cuFuncGetParamInfo(fn, (size_t)k, &off, &size) == CUDA_SUCCESS);
    if (off != ps[k].offset || size != ps[k].size)
      fprintf(stderr, "%s parameter %d: cubin %zu+%zu, driver %zu+%zu\n", name, k, ps[k].offset, ps[k].size, off,
              size);
    CHECK(off == ps[k].offset && size == ps[k].size);
  }
  size_t off = 0, size = 0;
  CHECK(uk__cu.cuFuncGetParamInfo(fn, (size_t)n, &off, &size) == CUDA_ERROR_INVALID_VALUE);
}

/* Packs args[k] (sizes from the layout) at the layout's offsets and
 * launches one thread through the raw driver. */
static void launch_packed(uk_function *f, void *const *args) {
  int n = 0;
  const uk_param_info *ps = NULL;
  CHECK_OK(uk_function_params(f, &n, &ps));
  size_t total = n ? ps[n - 1].offset + ps[n - 1].size : 0;
  unsigned char *buf = calloc(1, total + 1);
  CHECK(buf != NULL);
  if (!buf) return;
  memset(buf, 0xa5, total); /* padding poisoned: only the parameters may matter */
  for (int k = 0; k < n; k++) memcpy(buf + ps[k].offset, args[k], ps[k].size);
  void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &total, CU_LAUNCH_PARAM_END};
  CHECK(uk__cu.cuLaunchKernel(f->raw[0], 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra) == CUDA_SUCCESS);
  CHECK_OK(uk_device_synchronize());
  free(buf);
}

static uint64_t alloc_bytes(uk_context *ctx, size_t bytes, uk_array *a) {
  int64_t n = (int64_t)bytes;
  CHECK_OK(uk_array_alloc(ctx, UK_INT8, 1, &n, 0, NULL, a));
  return a->data;
}

/* The kernel's n doubles at out_d equal want exactly (n <= 11). */
static void check_mixed_out(uint64_t out_d, const double *want, int n, const char *how) {
  double got[11];
  CHECK(n <= 11);
  CHECK_OK(uk_memcpy_dtoh(got, out_d, (size_t)n * sizeof *got));
  for (int k = 0; k < n; k++) {
    if (got[k] != want[k]) fprintf(stderr, "%s: out[%d] = %g, expected %g\n", how, k, got[k], want[k]);
    CHECK(got[k] == want[k]);
  }
}

static void mixed(uk_context *ctx, uk_module *m) {
  uk_function *f = NULL;
  CHECK_OK(uk_module_function(m, "mixed", &f));
  if (!f) return;
  cross_check(f, "mixed");
  uk_array out, q;
  uint64_t out_d = alloc_bytes(ctx, 11 * sizeof(double), &out), q_d = alloc_bytes(ctx, sizeof(int), &q);
  int qv = -123457;
  CHECK_OK(uk_memcpy_htod(q_d, &qv, sizeof qv));
  char c = -77;
  double d = ut_uniform(-1e6, 1e6);
  S12 s = {(int)(ut_rand() % 100000) + 1, -(int)(ut_rand() % 100000) - 1, 424242};
  A16 a = {(float)ut_uniform(-9, 9), (float)ut_uniform(-9, 9), (float)ut_uniform(-9, 9), (float)ut_uniform(-9, 9)};
  short h = -31000;
  void *args[] = {&c, &d, &out_d, &s, &a, &q_d, &h};
  const double want[11] = {c, d, s.a, s.b, s.c, a.x, a.y, a.z, a.w, qv, h};
  CHECK_OK(uk_memset_d8(out_d, 0xff, 11 * sizeof(double))); /* NaN poison */
  launch_packed(f, args);
  check_mixed_out(out_d, want, 11, "packed by the cubin layout");

  /* A function with no device handle yet, as found without a GPU: the
   * first launch resolves it. */
  uk_function *lazy = NULL;
  CHECK_OK(uk__function_new(m, "mixed", "mixed", -1, NULL, &lazy));
  if (lazy) {
    CHECK(lazy->raw[0] == NULL);
    CHECK_OK(uk_memset_d8(out_d, 0xff, 11 * sizeof(double)));
    uk_grid_launch g;
    memset(&g, 0, sizeof g);
    CHECK_OK(uk_function_launch(lazy, &g, args));
    CHECK_OK(uk_device_synchronize());
    check_mixed_out(out_d, want, 11, "lazily resolved launch");
    CHECK(lazy->raw[0] != NULL);
    int nl = 0, nf = 0;
    const uk_param_info *pl = NULL, *pf = NULL;
    CHECK_OK(uk_function_params(lazy, &nl, &pl));
    CHECK_OK(uk_function_params(f, &nf, &pf));
    CHECK(nl == nf && nl == 7 && memcmp(pl, pf, (size_t)nl * sizeof *pl) == 0);
    uk__function_free(lazy);
  }
  uk_array_free(ctx, &out, NULL);
  uk_array_free(ctx, &q, NULL);
}

static void big(uk_context *ctx, uk_module *m) {
  uk_function *f = NULL;
  CHECK_OK(uk_module_function(m, "big", &f));
  if (!f) return;
  cross_check(f, "big");
  int n = 0;
  const uk_param_info *ps = NULL;
  CHECK_OK(uk_function_params(f, &n, &ps));
  CHECK(n == 3 && ps && ps[1].size == 5000 && ps[2].offset == 5008);
  uk_array out;
  uint64_t out_d = alloc_bytes(ctx, 3 * sizeof(double), &out);
  static char b[5000];
  for (int k = 0; k < 5000; k++) b[k] = (char)(ut_rand() % 200 - 100);
  b[0] = 17, b[4999] = -93;
  char c = 55;
  void *args[] = {&out_d, b, &c};
  CHECK_OK(uk_memset_d8(out_d, 0xff, 3 * sizeof(double)));
  launch_packed(f, args);
  double got[3];
  CHECK_OK(uk_memcpy_dtoh(got, out_d, sizeof got));
  CHECK(got[0] == 17 && got[1] == -93 && got[2] == 55);
  uk_array_free(ctx, &out, NULL);

  CHECK_OK(uk_module_function(m, "none", &f));
  if (f) {
    cross_check(f, "none");
    CHECK_OK(uk_function_params(f, &n, &ps));
    CHECK(n == 0 && ps == NULL);
  }
}

/* CUDA's vector types: float4 and double2 16-byte aligned, int3 12 bytes. */
static void vectors(uk_context *ctx, uk_module *m) {
  uk_function *f = NULL;
  CHECK_OK(uk_module_function(m, "vecs", &f));
  if (!f) return;
  cross_check(f, "vecs");
  int n = 0;
  const uk_param_info *ps = NULL;
  CHECK_OK(uk_function_params(f, &n, &ps));
  CHECK(n == 5 && ps);
  if (n == 5 && ps)
    CHECK(ps[1].offset == 16 && ps[1].size == 16 && ps[2].offset == 32 && ps[2].size == 12 && ps[3].offset == 48 &&
          ps[3].size == 16 && ps[4].offset == 64 && ps[4].size == 8);
  uk_array out;
  uint64_t out_d = alloc_bytes(ctx, 7 * sizeof(double), &out);
  char c = 99;
  float v[4] = {1.5f, -2.25f, 3.125f, -4.0625f};
  int t[3] = {-7, 8, 1234567};
  double d[2] = {ut_uniform(-1e9, 1e9), ut_uniform(-1e-9, 1e-9)};
  void *args[] = {&c, v, t, d, &out_d};
  CHECK_OK(uk_memset_d8(out_d, 0xff, 7 * sizeof(double)));
  launch_packed(f, args);
  const double want[7] = {c, v[0], v[3], t[0], t[2], d[0], d[1]};
  check_mixed_out(out_d, want, 7, "vector types packed by the cubin layout");
  uk_array_free(ctx, &out, NULL);
}

/* A PTX module: no cubin to read, the driver answers. */
static void from_ptx(uk_context *ctx, int arch, uk_module *cubin_module) {
  char name[32];
  snprintf(name, sizeof name, "compute_%d", arch);
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.arch_name = name;
  uk_module *m = NULL;
  CHECK_OK(uk_module_from_source(ctx, src, &mo, &m));
  if (!m) return;
  const void *img = NULL;
  size_t bytes = 0;
  CHECK_STATUS(uk_module_image(m, &img, &bytes), UK_ERR_NOT_FOUND); /* PTX, not a cubin */
  uk_function *f = NULL, *g = NULL;
  CHECK_OK(uk_module_function(m, "mixed", &f));
  CHECK_OK(uk_module_function(cubin_module, "mixed", &g));
  int nf = 0, ng = 0;
  const uk_param_info *pf = NULL, *pg = NULL;
  if (f && g) {
    CHECK_OK(uk_function_params(f, &nf, &pf));
    CHECK_OK(uk_function_params(g, &ng, &pg));
    CHECK(nf == 7 && nf == ng && pf && pg && memcmp(pf, pg, (size_t)nf * sizeof *pf) == 0);
  }
  uk_module_destroy(m);
}

/* Source and options of modules on a GPU: the device's arch is the
 * target; a module loaded from an image has neither source nor options. */
static void source_and_options(uk_context *ctx, int arch, uk_module *m) {
  CHECK_STREQ(uk_module_source(m), src);
  const char *const *opts = NULL;
  int n = -1;
  char want[32];
  snprintf(want, sizeof want, "-arch=sm_%d", arch);
  CHECK_OK(uk_module_nvrtc_options(m, 1, &opts, &n));
  CHECK(n == 1 && opts && opts[1] == NULL);
  if (n == 1 && opts) CHECK_STREQ(opts[0], want);
  const void *img = NULL;
  size_t bytes = 0;
  CHECK_OK(uk_module_image(m, &img, &bytes));
  uk_module *loaded = NULL;
  if (img) CHECK_OK(uk_module_from_image(ctx, img, bytes, &loaded));
  if (!loaded) return;
  CHECK(uk_module_source(loaded) == NULL);
  for (int effective = 0; effective < 2; effective++) {
    opts = NULL;
    n = -1;
    CHECK_OK(uk_module_nvrtc_options(loaded, effective, &opts, &n));
    CHECK(n == 0 && opts && opts[0] == NULL);
  }
  /* Its kernels' layouts come from the same cubin. */
  uk_function *f = NULL, *g = NULL;
  CHECK_OK(uk_module_function(loaded, "mixed", &f));
  CHECK_OK(uk_module_function(m, "mixed", &g));
  int nf = 0, ng = 0;
  const uk_param_info *pf = NULL, *pg = NULL;
  if (f && g) {
    CHECK_OK(uk_function_params(f, &nf, &pf));
    CHECK_OK(uk_function_params(g, &ng, &pg));
    CHECK(nf == 7 && nf == ng && memcmp(pf, pg, (size_t)nf * sizeof *pf) == 0);
  }
  uk_module_destroy(loaded);
}

int main(void) {
  ut_require_gpu();
  ut_seed(1010);
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(NULL, &ctx));
  CHECK_OK(uk_device_set_current(0));
  uk_device_info info;
  CHECK_OK(uk_device_info_get(0, &info));
  uk_module *m = NULL;
  CHECK_OK(uk_module_from_source(ctx, src, NULL, &m));
  if (m) {
    mixed(ctx, m);
    big(ctx, m);
    vectors(ctx, m);
    from_ptx(ctx, info.arch, m);
    source_and_options(ctx, info.arch, m);
  }
  uk_module_destroy(m);
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_params");
}
