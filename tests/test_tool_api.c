/* The public calls the ukern tool needs beyond kernels (issue 11): argument
 * checking of uk_module_fatbin and uk_fusion_compile_info. Nothing here
 * compiles: every case is refused before NVRTC runs. */
#include "testutil.h"

static const char *const code = "extern \"C\" __global__ void k(float *y) { y[0] = 1; }\n";

static void fatbin_args(uk_context *ctx) {
  const char *archs[] = {"90", "compute_90"};
  void *fat = (void *)1;
  size_t bytes = 7, sizes[2] = {0, 0};
  CHECK_STATUS(uk_module_fatbin(NULL, code, NULL, archs, 2, &fat, &bytes, sizes), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "ctx is NULL");
  CHECK_STATUS(uk_module_fatbin(ctx, NULL, NULL, archs, 2, &fat, &bytes, sizes), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "code is NULL");
  CHECK_STATUS(uk_module_fatbin(ctx, code, NULL, NULL, 2, &fat, &bytes, sizes), UK_ERR_INVALID);
  CHECK_STATUS(uk_module_fatbin(ctx, code, NULL, archs, 2, NULL, &bytes, sizes), UK_ERR_INVALID);
  CHECK_STATUS(uk_module_fatbin(ctx, code, NULL, archs, 2, &fat, NULL, sizes), UK_ERR_INVALID);
  CHECK_STATUS(uk_module_fatbin(ctx, code, NULL, archs, 0, &fat, &bytes, sizes), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "num_archs is 0");
  CHECK_STATUS(uk_module_fatbin(ctx, code, NULL, archs, 65, &fat, &bytes, sizes), UK_ERR_INVALID);
  const char *with_null[] = {"90", NULL};
  CHECK_STATUS(uk_module_fatbin(ctx, code, NULL, with_null, 2, &fat, &bytes, sizes), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "archs[1] is NULL");
  const char *bad[] = {"90", "sm90"};
  CHECK_STATUS(uk_module_fatbin(ctx, code, NULL, bad, 2, &fat, &bytes, sizes), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "'sm90' is not an architecture");
  const char *family[] = {"100f"};
  CHECK_STATUS(uk_module_fatbin(ctx, code, NULL, family, 1, &fat, &bytes, sizes), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "family targets");
  uk_module_options mo = {0};
  mo.arch_name = "80";
  CHECK_STATUS(uk_module_fatbin(ctx, code, &mo, archs, 2, &fat, &bytes, sizes), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "leave uk_module_options.arch and arch_name unset");
  memset(&mo, 0, sizeof mo);
  const char *opts[] = {"-lineinfo", "-arch=sm_80"};
  mo.options = opts;
  mo.num_options = 2;
  CHECK_STATUS(uk_module_fatbin(ctx, code, &mo, archs, 2, &fat, &bytes, sizes), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "'-arch=sm_80' names a target");
  /* refused calls leave the outputs alone */
  CHECK(fat == (void *)1 && bytes == 7 && sizes[0] == 0 && sizes[1] == 0);
}

static void fusion_info_args(uk_context *ctx) {
  uk_compile_info info;
  memset(&info, 0x5a, sizeof info);
  int64_t n = 5;
  uk_array x;
  CHECK_OK(uk_array_init(&x, 0x100000, UK_FLOAT32, 1, &n));
  uk_arg in = uk_arg_array(&x);
  uk_array out = {0};
  CHECK_STATUS(uk_fusion_compile_info(NULL, &in, 1, &out, 1, NULL, &info), UK_ERR_INVALID);
  uk_fusion *f = NULL;
  CHECK_OK(uk_fusion_create(ctx, "x", "y", "y = x * 2", "twice", NULL, &f));
  CHECK_STATUS(uk_fusion_compile_info(f, &in, 1, &out, 1, NULL, NULL), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "info is NULL");
  /* a type error of the call comes before any compile; *info untouched */
  uk_fusion *g = NULL;
  CHECK_OK(uk_fusion_create(ctx, "x", "y", "y = x & 1", "band", NULL, &g));
  CHECK_STATUS(uk_fusion_compile_info(g, &in, 1, &out, 1, NULL, &info), UK_ERR_TYPE);
  CHECK(info.arch == 0x5a5a5a5a && info.image_bytes != 0);
  /* wrong argument counts */
  CHECK_STATUS(uk_fusion_compile_info(f, &in, 2, &out, 1, NULL, &info), UK_ERR_INVALID);
  uk_fusion_destroy(f);
  uk_fusion_destroy(g);
}

int main(void) {
  uk_options o = {0};
  o.arch = 90;
  o.disable_disk_cache = 1;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&o, &ctx));
  if (ctx) {
    fatbin_args(ctx);
    fusion_info_args(ctx);
  }
  uk_context_destroy(ctx);
  return ut_finish("test_tool_api");
}
