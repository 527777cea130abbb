/* Linked modules on a GPU (issue 13): a parent kernel launching child
 * kernels (dynamic parallelism from RawModule source, no option given),
 * relocatable code split across an extern declaration, -dlto, and a kernel
 * written with C++ standard headers, and modules linked from a .cu, PTX, a
 * cubin, a static device library (.a) and LTO-IR (uk_module_link), and a
 * fatbin of sm_80, sm_90a and sm_90 images loaded by the driver. Random
 * non-zero inputs, poisoned outputs, host reference in double precision. */
#include <math.h>

#include "compiler_src.h"
#include "module_link_parts.h"
#include "runtime/fatbin.h"
#include "testutil.h"

static uk_context *ctx;

static uk_array dev_floats(int64_t n) {
  uk_array a;
  memset(&a, 0, sizeof a);
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 1, &n, 0, NULL, &a));
  return a;
}

static void poison(uk_array *a, size_t bytes) {
  unsigned char *p = malloc(bytes);
  memset(p, 0xff, bytes);
  CHECK_OK(uk_memcpy_htod(a->data, p, bytes));
  free(p);
}

static float *random_floats(int64_t n) {
  float *p = malloc((size_t)n * sizeof *p);
  for (int64_t i = 0; i < n; i++) p[i] = (float)ut_uniform(-4, 4);
  return p;
}

/* y[i] = x[i] * s + c(i) computed by the kernels under test; compared with
 * the double reference, exact for these float operations. */
static int count_wrong(const float *y, const float *x, int64_t n, double s, double c, const char *what) {
  int bad = 0;
  for (int64_t i = 0; i < n; i++) {
    double want = (double)(float)((double)x[i] * s) + c;
    if (!(fabs((double)y[i] - want) <= 1e-6 * fabs(want) + 1e-6)) {
      if (bad < 5) fprintf(stderr, "%s: y[%lld] = %g, want %g\n", what, (long long)i, y[i], want);
      bad++;
    }
  }
  return bad;
}

/* Runs `name` (float* x, float* y, int n) over n elements with `grid` x
 * `block` threads and checks y against x * s + c. */
static void run_and_check(uk_module *m, const char *name, int n, unsigned grid, unsigned block, double s, double c) {
  uk_function *f = NULL;
  CHECK_OK(uk_module_function(m, name, &f));
  if (!f) return;
  float *x = random_floats(n), *y = malloc((size_t)n * sizeof *y);
  uk_array dx = dev_floats(n), dy = dev_floats(n);
  CHECK_OK(uk_memcpy_htod(dx.data, x, (size_t)n * sizeof *x));
  poison(&dy, (size_t)n * sizeof *y);
  void *args[] = {&dx.data, &dy.data, &n};
  uk_grid_launch g = {{grid, 1, 1}, {block, 1, 1}, 0, NULL, 0, {0, 0, 0}};
  CHECK_OK(uk_function_launch(f, &g, args));
  CHECK_OK(uk_device_synchronize());
  CHECK_OK(uk_memcpy_dtoh(y, dy.data, (size_t)n * sizeof *y));
  CHECK(count_wrong(y, x, n, s, c, name) == 0);
  uk_array_free(ctx, &dx, NULL);
  uk_array_free(ctx, &dy, NULL);
  free(x);
  free(y);
}

/* ---- dynamic parallelism ------------------------------------------------- */

static const char *dp_src =
    "extern \"C\" __global__ void child(const float* x, float* y, int base, int n) {\n"
    "  int i = base + blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = x[i] * 3.0f + 0.5f;\n"
    "}\n"
    "extern \"C\" __global__ void parent(const float* x, float* y, int n) {\n"
    "  int per = (n + gridDim.x - 1) / gridDim.x;\n"
    "  int base = blockIdx.x * per;\n"
    "  if (threadIdx.x == 0 && base < n) child<<<(per + 127) / 128, 128>>>(x, y, base, min(n, base + per));\n"
    "}\n";

static void test_dynamic_parallelism(void) {
  uk_module *m = NULL;
  CHECK_OK(uk_module_from_source(ctx, dp_src, NULL, &m));
  if (!m) return;
  run_and_check(m, "parent", 100003, 37, 32, 3.0, 0.5);
  run_and_check(m, "parent", 1, 1, 1, 3.0, 0.5);
  uk_module_destroy(m);
}

/* ---- relocatable code and LTO ---------------------------------------------- */

static const char *rdc_src =
    "extern __device__ float affine(float);\n"
    "extern \"C\" __global__ void apply(const float* x, float* y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = affine(x[i]);\n"
    "}\n"
    "__device__ float affine(float v) { return v * -2.0f + 0.25f; }\n";

static void test_rdc_lto(void) {
  static const char *const opts[][1] = {{"-rdc=true"}, {"-dlto"}};
  for (int k = 0; k < 2; k++) {
    uk_module_options mo;
    memset(&mo, 0, sizeof mo);
    mo.options = (const char **)opts[k];
    mo.num_options = 1;
    uk_module *m = NULL;
    CHECK_OK(uk_module_from_source(ctx, rdc_src, &mo, &m));
    if (!m) continue;
    run_and_check(m, "apply", 4099, (4099 + 127) / 128, 128, -2.0, 0.25);
    uk_module_destroy(m);
  }
}

/* ---- uk_module_link: .cu + .ptx + cubin (+ static library), LTO ---------- */

static void test_module_link(void) {
  size_t nptx = 0, ncubin = 0, nlto = 0;
  char *ptx = nvrtc_part(ptx_part_src, "compute_90", 0, &nptx);
  char *cubin = nvrtc_part(cubin_part_src, "sm_90", 0, &ncubin);
  char *lto = nvrtc_part(lto_part_src, "sm_90", 1, &nlto);
  CHECK(ptx && cubin && lto);
  /* The parts are sm_90 code: the module is linked for sm_90 (H100/H200). */
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.arch = 90;
  uk_link_input in[3] = {{UK_LINK_SOURCE, combo_src, 0, NULL, "combo.cu"},
                         {UK_LINK_PTX, ptx, nptx, NULL, "scale.ptx"},
                         {UK_LINK_CUBIN, cubin, ncubin, NULL, "add.cubin"}};
  uk_module *m = NULL;
  if (ptx && cubin) CHECK_OK(uk_module_link(ctx, in, 3, &mo, &m));
  if (m) run_and_check(m, "combo", 70001, (70001 + 255) / 256, 256, 3.0, 1.0);
  uk_module_destroy(m);
  if (devlib_path) {
    uk_link_input lib[2] = {{UK_LINK_SOURCE, combo_lib_src, 0, NULL, NULL},
                            {UK_LINK_LIBRARY, NULL, 0, devlib_path, NULL}};
    m = NULL;
    CHECK_OK(uk_module_link(ctx, lib, 2, &mo, &m));
    if (m) run_and_check(m, "combo_lib", 4097, (4097 + 127) / 128, 128, -0.5, 0.0);
    uk_module_destroy(m);
  } else {
    printf("note: built without nvcc: the static device library part is not run\n");
  }
  uk_link_input lin[2] = {{UK_LINK_SOURCE, combo_lto_src, 0, NULL, NULL}, {UK_LINK_LTOIR, lto, nlto, NULL, NULL}};
  const char *dlto[] = {"-dlto"};
  mo.options = dlto;
  mo.num_options = 1;
  m = NULL;
  if (lto) CHECK_OK(uk_module_link(ctx, lin, 2, &mo, &m));
  if (m) run_and_check(m, "combo_lto", 999, 8, 128, 3.0, 1.0);
  uk_module_destroy(m);
  free(ptx);
  free(cubin);
  free(lto);
}

/* ---- a multi-arch fatbin (as `ukern precompile --fatbin` writes) ----------- */

static const char *fat_src =
    "extern \"C\" __global__ void fat_affine(const float* x, float* y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = x[i] * 3.0f + 1.0f;\n"
    "}\n";

static void test_fatbin(void) {
  static const char *const archs[] = {"80", "90a", "90"};
  uk_module *ms[3] = {0};
  uk__fatbin_image im[3];
  int ok = 1;
  for (int k = 0; k < 3; k++) {
    uk_module_options mo;
    memset(&mo, 0, sizeof mo);
    mo.arch_name = archs[k];
    CHECK_OK(uk_module_from_source(ctx, fat_src, &mo, &ms[k]));
    ok &= ms[k] && uk__arch_parse(archs[k], "test", &im[k].arch) == UK_OK &&
          uk_module_image(ms[k], &im[k].data, &im[k].size) == UK_OK;
  }
  void *fat = NULL;
  size_t size = 0;
  if (ok) CHECK_OK(uk__fatbin_build(im, 3, &fat, &size));
  uk_module *m = NULL;
  if (fat) CHECK_OK(uk_module_from_image(ctx, fat, size, &m));
  if (m) run_and_check(m, "fat_affine", 3001, 24, 128, 3.0, 1.0);
  uk_module_destroy(m);
  free(fat);
  for (int k = 0; k < 3; k++) uk_module_destroy(ms[k]);
}

/* ---- C++ standard headers ------------------------------------------------ */

static void test_std_kernel(void) {
  uk_module *m = NULL;
  CHECK_OK(uk_module_from_source(ctx, std_src, NULL, &m));
  uk_function *f = NULL;
  if (m) CHECK_OK(uk_module_function(m, "std_kernel", &f));
  if (!f) {
    uk_module_destroy(m);
    return;
  }
  size_t n = 50001;
  float *x = random_floats((int64_t)n), *y = malloc(n * sizeof *y);
  uk_array dx = dev_floats((int64_t)n), dy = dev_floats((int64_t)n);
  CHECK_OK(uk_memcpy_htod(dx.data, x, n * sizeof *x));
  poison(&dy, n * sizeof *y);
  void *args[] = {&dx.data, &dy.data, &n};
  uk_grid_launch g = {{(unsigned)((n + 255) / 256), 1, 1}, {256, 1, 1}, 0, NULL, 0, {0, 0, 0}};
  CHECK_OK(uk_function_launch(f, &g, args));
  CHECK_OK(uk_device_synchronize());
  CHECK_OK(uk_memcpy_dtoh(y, dy.data, n * sizeof *y));
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    double w = (double)(i % 3 + 1);
    double r = -w + (double)x[i] + sqrt(fabs((double)x[i]));
    r = r < -128 ? -128 : r > 127 ? 127 : r;
    uint32_t bits;
    memcpy(&bits, &x[i], sizeof bits);
    double want = r + (double)(bits & 1u);
    if (!(fabs((double)y[i] - want) <= 1e-5 * fabs(want) + 1e-5)) {
      if (bad < 5) fprintf(stderr, "std_kernel: y[%zu] = %g, want %g\n", i, y[i], want);
      bad++;
    }
  }
  CHECK(bad == 0);
  uk_array_free(ctx, &dx, NULL);
  uk_array_free(ctx, &dy, NULL);
  free(x);
  free(y);
  uk_module_destroy(m);
}

int main(void) {
  ut_require_gpu();
  ut_seed(20261123);
  CHECK_OK(uk_context_create(NULL, &ctx));
  if (!ctx) return ut_finish("test_gpu_link");
  test_dynamic_parallelism();
  test_rdc_lto();
  test_std_kernel();
  test_module_link();
  test_fatbin();
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_link");
}
