/* Source modules compiled for sm_90 without a GPU: images, name
 * expressions, compile errors with their logs, options reaching NVRTC, and
 * the memory and disk caches as seen through uk_context_cache_stats. */
#include "testutil.h"

static const char *vec_add =
    "extern \"C\" __global__ void vec_add(const float* a, const float* b, float* c, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) c[i] = a[i] + b[i];\n"
    "}\n";

static const char *templated =
    "template <typename T>\n"
    "__global__ void my_kernel(const T* x, T* y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = x[i] * T(2);\n"
    "}\n";

/* Line 3 uses an undeclared identifier. */
static const char *broken =
    "extern \"C\" __global__ void broken_kernel(float* y) {\n"
    "  int i = threadIdx.x;\n"
    "  y[i] = undefined_thing * 2.0f;\n"
    "}\n";

static uk_context *new_context(const char *dir, int ncopts, const char *const *copts) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = 90;
  o.cache_dir = dir;
  o.nvrtc_options = copts;
  o.num_nvrtc_options = ncopts;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&o, &ctx));
  return ctx;
}

static uk_cache_stats stats_of(uk_context *ctx) {
  uk_cache_stats s;
  memset(&s, 0xff, sizeof s);
  CHECK_OK(uk_context_cache_stats(ctx, &s));
  return s;
}

static int is_elf(uk_module *m, size_t *bytes_out) {
  const void *image = NULL;
  size_t bytes = 0;
  if (uk_module_image(m, &image, &bytes) != UK_OK || bytes < 64) return 0;
  const unsigned char *p = image;
  if (bytes_out) *bytes_out = bytes;
  return p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F';
}

static void test_caches(const char *dir) {
  uk_context *ctx = new_context(dir, 0, NULL);
  CHECK_CONTAINS(uk_context_cache_dir(ctx), "tmp-cache");

  uk_module *m = NULL, *m2 = NULL, *m3 = NULL;
  CHECK_OK(uk_module_from_source(ctx, vec_add, NULL, &m));
  size_t bytes = 0;
  CHECK(m && is_elf(m, &bytes));
  uk_cache_stats s = stats_of(ctx);
  CHECK(s.memory_misses == 1 && s.memory_hits == 0);
  CHECK(s.disk_misses == 1 && s.disk_hits == 0);
  CHECK(s.compiles == 1);
  CHECK(s.store_failures == 0);

  /* Same source, same context: a memory hit sharing the image. */
  CHECK_OK(uk_module_from_source(ctx, vec_add, NULL, &m2));
  s = stats_of(ctx);
  CHECK(s.memory_hits == 1 && s.compiles == 1 && s.disk_hits == 0);
  const void *i1 = NULL, *i2 = NULL;
  size_t b1 = 0, b2 = 0;
  CHECK_OK(uk_module_image(m, &i1, &b1));
  CHECK_OK(uk_module_image(m2, &i2, &b2));
  CHECK(i1 == i2 && b1 == b2);

  /* A new context on the same directory: a disk hit, no compile, same bytes. */
  uk_context *ctx2 = new_context(dir, 0, NULL);
  CHECK_OK(uk_module_from_source(ctx2, vec_add, NULL, &m3));
  s = stats_of(ctx2);
  CHECK(s.disk_hits == 1);
  CHECK(s.compiles == 0);
  CHECK(s.memory_misses == 1);
  const void *i3 = NULL;
  size_t b3 = 0;
  CHECK_OK(uk_module_image(m3, &i3, &b3));
  CHECK(b3 == b1 && i3 && i1 && memcmp(i3, i1, b1) == 0);

  /* One more character of source is a different program. */
  uk_module *m4 = NULL;
  char *other = malloc(strlen(vec_add) + 8);
  sprintf(other, "%s// x\n", vec_add);
  CHECK_OK(uk_module_from_source(ctx2, other, NULL, &m4));
  s = stats_of(ctx2);
  CHECK(s.compiles == 1 && s.disk_hits == 1 && s.disk_misses == 1);
  free(other);

  /* Another arch is another key. */
  uk_module *m5 = NULL;
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.arch = 80;
  CHECK_OK(uk_module_from_source(ctx2, vec_add, &mo, &m5));
  s = stats_of(ctx2);
  CHECK(s.compiles == 2);
  CHECK(m5 && is_elf(m5, NULL));

  uk_module_destroy(m5);
  uk_module_destroy(m4);
  uk_module_destroy(m3);
  uk_module_destroy(m2);
  uk_module_destroy(m);
  uk_context_destroy(ctx2);
  uk_context_destroy(ctx);
}

static void test_name_expressions(const char *dir) {
  uk_context *ctx = new_context(dir, 0, NULL);
  const char *names[] = {"my_kernel<float>", "my_kernel<double>"};
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.name_expressions = names;
  mo.num_name_expressions = 2;
  uk_module *m = NULL;
  CHECK_OK(uk_module_from_source(ctx, templated, &mo, &m));
  const char *lf = NULL, *ld = NULL;
  CHECK_OK(uk_module_lowered_name(m, "my_kernel<float>", &lf));
  CHECK_OK(uk_module_lowered_name(m, "my_kernel<double>", &ld));
  CHECK(lf && strncmp(lf, "_Z", 2) == 0);
  CHECK(ld && strncmp(ld, "_Z", 2) == 0);
  CHECK(lf && ld && strcmp(lf, ld) != 0);
  CHECK_CONTAINS(lf, "my_kernel");
  const char *none = NULL;
  CHECK_STATUS(uk_module_lowered_name(m, "my_kernel<int>", &none), UK_ERR_NOT_FOUND);
  CHECK(none == NULL);
  CHECK_CONTAINS(uk_last_error(), "my_kernel<int>");

  /* From the disk cache, the lowered names come back too. */
  uk_context *ctx2 = new_context(dir, 0, NULL);
  uk_module *m2 = NULL;
  CHECK_OK(uk_module_from_source(ctx2, templated, &mo, &m2));
  uk_cache_stats s = stats_of(ctx2);
  CHECK(s.disk_hits == 1 && s.compiles == 0);
  const char *lf2 = NULL;
  CHECK_OK(uk_module_lowered_name(m2, "my_kernel<float>", &lf2));
  CHECK_STREQ(lf2, lf);

  uk_module_destroy(m2);
  uk_module_destroy(m);
  uk_context_destroy(ctx2);
  uk_context_destroy(ctx);
}

static void test_compile_error(const char *dir) {
  uk_context *ctx = new_context(dir, 0, NULL);
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.name = "broken_kernel";
  uk_module *m = NULL;
  CHECK_STATUS(uk_module_from_source(ctx, broken, &mo, &m), UK_ERR_COMPILE);
  CHECK(m == NULL);
  CHECK_CONTAINS(uk_last_error(), "nvrtc: compiling 'broken_kernel' failed: ");
  CHECK_CONTAINS(uk_last_error(), "undefined_thing");
  CHECK_CONTAINS(uk_last_error(), "see uk_last_error_log()");
  CHECK_CONTAINS(uk_last_error_log(), "identifier \"undefined_thing\" is undefined");
  CHECK_CONTAINS(uk_last_error_log(), "    3 |   y[i] = undefined_thing * 2.0f;\n");
  CHECK_CONTAINS(uk_last_error_log(), "    1 | extern \"C\" __global__ void broken_kernel");
  /* Failures are not cached: a retry compiles again. */
  CHECK_STATUS(uk_module_from_source(ctx, broken, &mo, &m), UK_ERR_COMPILE);
  uk_cache_stats s = stats_of(ctx);
  CHECK(s.compiles == 2);
  /* An unknown NVRTC option is a compile error too, named in the message. */
  const char *bad[] = {"--no-such-option-for-nvrtc"};
  mo.name = NULL;
  mo.options = bad;
  mo.num_options = 1;
  CHECK_STATUS(uk_module_from_source(ctx, vec_add, &mo, &m), UK_ERR_COMPILE);
  CHECK_CONTAINS(uk_last_error(), "nvrtc: compiling 'module' failed");
  /* A later success clears the error. */
  CHECK_OK(uk_module_from_source(ctx, vec_add, NULL, &m));
  CHECK_STREQ(uk_last_error(), "");
  CHECK_STREQ(uk_last_error_log(), "");
  uk_module_destroy(m);
  uk_context_destroy(ctx);
}

/* Context options reach NVRTC before the module's own. */
static void test_options(const char *dir) {
  const char *copts[] = {"-DCTX_VALUE=3"};
  uk_context *ctx = new_context(dir, 1, copts);
  const char *src =
      "static_assert(CTX_VALUE == 3, \"context option missing\");\n"
      "static_assert(MOD_VALUE == 4, \"module option missing\");\n"
      "extern \"C\" __global__ void k(int* y) { *y = CTX_VALUE + MOD_VALUE; }\n";
  const char *mopts[] = {"-DMOD_VALUE=4", "-std=c++17"};
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.options = mopts;
  mo.num_options = 2;
  uk_module *m = NULL;
  CHECK_OK(uk_module_from_source(ctx, src, &mo, &m));
  CHECK(m && is_elf(m, NULL));
  uk_module_destroy(m);
  /* Without the module option the static_assert fires. */
  CHECK_STATUS(uk_module_from_source(ctx, src, NULL, &m), UK_ERR_COMPILE);
  CHECK_CONTAINS(uk_last_error_log(), "module option missing");
  uk_context_destroy(ctx);
}

static void test_no_arch(void) {
  int n = 0;
  if (uk_device_count(&n) == UK_OK) return; /* a GPU machine picks its own arch */
  uk_options o;
  memset(&o, 0, sizeof o);
  o.disable_disk_cache = 1;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&o, &ctx));
  CHECK_STREQ(uk_context_cache_dir(ctx), "");
  uk_module *m = NULL;
  CHECK_STATUS(uk_module_from_source(ctx, vec_add, NULL, &m), UK_ERR_NO_DEVICE);
  CHECK_CONTAINS(uk_last_error(), "uk_options.arch");
  /* With an arch in the module options it compiles; a kernel is found in
   * the cubin, and running it (or reading a global) needs the device. */
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.arch = 90;
  CHECK_OK(uk_module_from_source(ctx, vec_add, &mo, &m));
  uk_function *f = NULL;
  CHECK_OK(uk_module_function(m, "vec_add", &f));
  CHECK(f != NULL);
  int v = 0;
  if (f) CHECK_STATUS(uk_function_attribute(f, UK_ATTR_NUM_REGS, &v), UK_ERR_NO_DEVICE);
  uint64_t p = 0;
  CHECK_STATUS(uk_module_global(m, "g", &p, NULL), UK_ERR_NO_DEVICE);
  CHECK_STREQ(uk_module_log(m), "");
  uk_module_destroy(m);
  uk_cache_stats s = stats_of(ctx);
  CHECK(s.compiles == 1 && s.disk_hits == 0 && s.disk_misses == 0);
  uk_context_destroy(ctx);
}

int main(void) {
  char *dir = ut_temp_dir("cache");
  CHECK(dir != NULL);
  if (!dir) return ut_finish("test_nvrtc_module");
  test_caches(dir);
  test_name_expressions(dir);
  test_compile_error(dir);
  test_options(dir);
  test_no_arch();
  free(dir);
  return ut_finish("test_nvrtc_module");
}
