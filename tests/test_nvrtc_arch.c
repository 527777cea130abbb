/* Compile targets without a GPU: arch numbers and variants (90a, sm_90a,
 * compute_90, 100f, -arch=... in the options) checked at create time
 * against NVRTC's supported list (issue 9 item 11, issue 13 item 4), the
 * variant reaching the cubin, and the options line that starts a failed
 * compile's log (issue 13 item 5). */
#include "testutil.h"

static const char *kern = "extern \"C\" __global__ void k(float* y) { y[threadIdx.x] *= 2.0f; }\n";

static uk_status ctx_with(int arch, const char *name, uk_context **ctx) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = arch;
  o.arch_name = name;
  o.disable_disk_cache = 1;
  *ctx = NULL;
  return uk_context_create(&o, ctx);
}

static void test_context_arch(void) {
  static const int bad[] = {-5, -1, 5, 91, 1000, 35};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    uk_context *ctx = NULL;
    CHECK_STATUS(ctx_with(bad[k], NULL, &ctx), UK_ERR_INVALID);
    CHECK(ctx == NULL);
    CHECK_CONTAINS(uk_last_error(), "uk_options.arch");
  }
  CHECK_CONTAINS(uk_last_error(), "not an architecture this NVRTC supports (");
  static const char *const bad_names[] = {"", "sm_", "9", "sm_80a", "86f", "90b", "sm_90aa", "x90", "compute_", "-90"};
  for (size_t k = 0; k < sizeof bad_names / sizeof bad_names[0]; k++) {
    uk_context *ctx = NULL;
    CHECK_STATUS(ctx_with(0, bad_names[k], &ctx), UK_ERR_INVALID);
    CHECK_CONTAINS(uk_last_error(), "uk_options.arch_name");
  }
  static const char *const good_names[] = {"90", "90a", "sm_90a", "sm_90", "compute_90", "100a", "100f", "sm_80"};
  for (size_t k = 0; k < sizeof good_names / sizeof good_names[0]; k++) {
    uk_context *ctx = NULL;
    CHECK_OK(ctx_with(0, good_names[k], &ctx));
    uk_context_destroy(ctx);
  }
  uk_context *ctx = NULL;
  CHECK_OK(ctx_with(0, NULL, &ctx)); /* 0: the device's, decided later */
  uk_context_destroy(ctx);
  CHECK_OK(ctx_with(90, NULL, &ctx));
  uk_context_destroy(ctx);
}

static int image_has(uk_module *m, const char *needle) {
  const void *image = NULL;
  size_t bytes = 0;
  if (uk_module_image(m, &image, &bytes) != UK_OK) return 0;
  return memmem(image, bytes, needle, strlen(needle)) != NULL;
}

/* The cubin's toolkit note records ptxas's "-arch sm_XY" line. */
static void test_variants_reach_cubin(void) {
  uk_context *ctx = NULL;
  CHECK_OK(ctx_with(90, NULL, &ctx));
  uk_module *m = NULL;
  CHECK_OK(uk_module_from_source(ctx, kern, NULL, &m));
  CHECK(m && image_has(m, "-arch sm_90 ") && !image_has(m, "sm_90a"));
  uk_module_destroy(m);

  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.arch_name = "sm_90a";
  m = NULL;
  CHECK_OK(uk_module_from_source(ctx, kern, &mo, &m));
  CHECK(m && image_has(m, "-arch sm_90a "));
  uk_module_destroy(m);

  /* An -arch option is the target, the same as arch_name. */
  const char *opt_a[] = {"-arch=sm_90a"};
  memset(&mo, 0, sizeof mo);
  mo.options = opt_a;
  mo.num_options = 1;
  m = NULL;
  CHECK_OK(uk_module_from_source(ctx, kern, &mo, &m));
  CHECK(m && image_has(m, "-arch sm_90a "));
  uk_module_destroy(m);
  const char *opt_b[] = {"--gpu-architecture", "sm_100a", "-lineinfo"};
  mo.options = opt_b;
  mo.num_options = 3;
  m = NULL;
  CHECK_OK(uk_module_from_source(ctx, kern, &mo, &m));
  CHECK(m && image_has(m, "-arch sm_100a "));
  uk_module_destroy(m);
  const char *opt_bad[] = {"-arch=sm_91"};
  mo.options = opt_bad;
  mo.num_options = 1;
  CHECK_STATUS(uk_module_from_source(ctx, kern, &mo, &m), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "sm_91 is not an architecture");
  const char *opt_two[] = {"-arch=sm_90", "-arch", "sm_80"};
  mo.options = opt_two;
  mo.num_options = 3;
  CHECK_STATUS(uk_module_from_source(ctx, kern, &mo, &m), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "more than one -arch");
  const char *opt_dangling[] = {"-arch"};
  mo.options = opt_dangling;
  mo.num_options = 1;
  CHECK_STATUS(uk_module_from_source(ctx, kern, &mo, &m), UK_ERR_INVALID);

  /* Module options: a bad arch is refused before compiling. */
  memset(&mo, 0, sizeof mo);
  mo.arch = -5;
  CHECK_STATUS(uk_module_from_source(ctx, kern, &mo, &m), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "uk_module_options.arch -5");
  mo.arch = 5;
  CHECK_STATUS(uk_module_from_source(ctx, kern, &mo, &m), UK_ERR_INVALID);
  mo.arch = 0;
  mo.arch_name = "sm_75a";
  CHECK_STATUS(uk_module_from_source(ctx, kern, &mo, &m), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "'a' variants start at sm_90a");

  /* compute_90: PTX only. */
  mo.arch_name = "compute_90";
  m = NULL;
  CHECK_OK(uk_module_from_source(ctx, kern, &mo, &m));
  const void *image = NULL;
  size_t bytes = 0;
  CHECK_STATUS(uk_module_image(m, &image, &bytes), UK_ERR_NOT_FOUND);
  uk_module_destroy(m);
  uk_context_destroy(ctx);

  /* A context made for 90a compiles its modules for sm_90a. */
  CHECK_OK(ctx_with(0, "90a", &ctx));
  m = NULL;
  CHECK_OK(uk_module_from_source(ctx, kern, NULL, &m));
  CHECK(m && image_has(m, "-arch sm_90a "));
  uk_module_destroy(m);
  uk_context_destroy(ctx);
}

static void test_failed_log_starts_with_options(void) {
  const char *copts[] = {"-DFROM_CONTEXT=1"};
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = 90;
  o.disable_disk_cache = 1;
  o.nvrtc_options = copts;
  o.num_nvrtc_options = 1;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&o, &ctx));
  const char *mopts[] = {"-DWITH_SPACE=a b", "--std=c++17"};
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.options = mopts;
  mo.num_options = 2;
  uk_module *m = NULL;
  CHECK_STATUS(uk_module_from_source(ctx, "__global__ void k() { nope; }\n", &mo, &m), UK_ERR_COMPILE);
  const char *log = uk_last_error_log();
  CHECK(strncmp(log, "nvrtc options: -arch=sm_90 -I", 29) == 0);
  const char *nl = strchr(log, '\n');
  CHECK(nl != NULL);
  char line[4096] = "";
  if (nl && (size_t)(nl - log) < sizeof line) memcpy(line, log, (size_t)(nl - log));
  CHECK_CONTAINS(line, " -DFROM_CONTEXT=1 '-DWITH_SPACE=a b' --std=c++17");
  CHECK(strlen(line) > 0 && strcmp(line + strlen(line) - 11, "--std=c++17") == 0);
  CHECK_CONTAINS(log, "identifier \"nope\" is undefined");
  uk_context_destroy(ctx);
}

int main(void) {
  test_context_arch();
  test_variants_reach_cubin();
  test_failed_log_starts_with_options();
  return ut_finish("test_nvrtc_arch");
}
