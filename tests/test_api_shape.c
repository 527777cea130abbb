/* The public API's one shape (issue 24 item 3), checked without a GPU or
 * NVRTC: one uk_launch for the three kinds, whose members a kind does not
 * take are UK_ERR_INVALID naming them (never silently ignored), while the
 * members it takes work; the same parameter list for every call. */
#include <stdint.h>

#include "testutil.h"

static uk_context *ctx;

static uk_array vec(uint64_t data, int64_t n) {
  uk_array a;
  memset(&a, 0, sizeof a);
  CHECK_OK(uk_array_init(&a, data, UK_FLOAT32, 1, &n));
  return a;
}

static uk_array mat(uint64_t data, int64_t r, int64_t c) {
  uk_array a;
  memset(&a, 0, sizeof a);
  int64_t s[2] = {r, c};
  CHECK_OK(uk_array_init(&a, data, UK_FLOAT32, 2, s));
  return a;
}

/* An elementwise kernel takes stream, size and block_size; the reduction
 * members are refused, each by name. */
static void elementwise_launch(void) {
  uk_elementwise *k = NULL;
  CHECK_OK(uk_elementwise_create(ctx, "T x", "T y", "y = x * 2", "twice", NULL, &k));
  if (!k) return;
  uk_array x = vec(0x10000, 37), y;
  memset(&y, 0, sizeof y);
  uk_arg in[1] = {uk_arg_array(&x)};
  char *src = NULL;
  uk_launch l = {.block_size = 128};
  CHECK_OK(uk_elementwise_source(k, in, 1, &y, 1, &l, &src)); /* the control */
  CHECK(src && strstr(src, "twice"));
  uk_free(src);
  src = NULL;

  int axis = 0;
  uk_launch bad[4] = {{.axes = &axis, .num_axes = 1}, {.num_axes = 1}, {.keepdims = 1}, {.reduce_none = 1}};
  const char *member[4] = {"uk_launch.axes", "uk_launch.num_axes", "uk_launch.keepdims", "uk_launch.reduce_none"};
  for (int j = 0; j < 4; j++) {
    CHECK_STATUS(uk_elementwise_source(k, in, 1, &y, 1, &bad[j], &src), UK_ERR_INVALID);
    CHECK_CONTAINS(uk_last_error(), "twice: ");
    CHECK_CONTAINS(uk_last_error(), member[j]);
    CHECK_CONTAINS(uk_last_error(), "are for reductions");
    CHECK(src == NULL);
    /* Every call of the kind checks the same way. */
    CHECK_STATUS(uk_elementwise_precompile(k, in, 1, &y, 1, &bad[j]), UK_ERR_INVALID);
    CHECK_STATUS(uk_elementwise_call(k, in, 1, &y, 1, &bad[j]), UK_ERR_INVALID);
    CHECK_CONTAINS(uk_last_error(), member[j]);
  }
  char **opts = NULL;
  CHECK_STATUS(uk_elementwise_nvrtc_options(k, in, 1, &y, 1, &bad[2], &opts), UK_ERR_INVALID);
  CHECK(opts == NULL);
  uk_compile_info info = {0};
  CHECK_STATUS(uk_elementwise_compile_info(k, in, 1, &y, 1, &bad[3], &info), UK_ERR_INVALID);
  CHECK(info.log == NULL);
  uk_elementwise_destroy(k);
}

/* A reduction takes stream and the axes members; size and block_size are refused. */
static void reduction_launch(void) {
  uk_reduction_spec sp = {.in_params = "T x", .out_params = "T y", .map_expr = "x", .reduce_expr = "a + b",
                          .post_map_expr = "y = a", .identity = "0", .name = "rsum"};
  uk_reduction *r = NULL;
  CHECK_OK(uk_reduction_create(ctx, &sp, &r));
  if (!r) return;
  uk_array x = mat(0x10000, 5, 7), y;
  uk_arg in[1] = {uk_arg_array(&x)};
  char *src = NULL;
  int axis = -1;
  uk_launch l = {.axes = &axis, .num_axes = 1, .keepdims = 1};
  memset(&y, 0, sizeof y);
  CHECK_OK(uk_reduction_source(r, in, 1, &y, 1, &l, &src)); /* the control: axes and keepdims are taken */
  CHECK(src && strstr(src, "rsum"));
  uk_free(src);
  src = NULL;
  /* The result shape follows the axes and keepdims: (5, 1) given is right, (5,) is not. */
  uk_array given = mat(0x20000, 5, 1);
  CHECK_OK(uk_reduction_source(r, in, 1, &given, 1, &l, &src));
  uk_free(src);
  src = NULL;
  uk_array flat = vec(0x20000, 5);
  CHECK_STATUS(uk_reduction_source(r, in, 1, &flat, 1, &l, &src), UK_ERR_SHAPE);

  uk_launch sized = {.size = 12};
  memset(&y, 0, sizeof y);
  CHECK_STATUS(uk_reduction_source(r, in, 1, &y, 1, &sized, &src), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "rsum: uk_launch.size is 12");
  CHECK_CONTAINS(uk_last_error(), "leave it 0 or -1");
  uk_launch unsized = {.size = -1}; /* -1 is "no size", as for elementwise kernels */
  CHECK_OK(uk_reduction_source(r, in, 1, &y, 1, &unsized, &src));
  uk_free(src);
  src = NULL;
  uk_launch blocked = {.block_size = 64};
  CHECK_STATUS(uk_reduction_precompile(r, in, 1, &y, 1, &blocked), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "rsum: uk_launch.block_size is 64");
  CHECK_STATUS(uk_reduction_call(r, in, 1, &y, 1, &blocked), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "block_size");
  uk_reduction_destroy(r);
}

/* A fusion takes stream and block_size; its axes are in its text. */
static void fusion_launch(void) {
  uk_fusion *f = NULL;
  CHECK_OK(uk_fusion_create(ctx, "x", "y", "y = sum(x * x, axis=1)", "sq", NULL, &f));
  if (!f) return;
  uk_array x = mat(0x10000, 3, 9), y;
  memset(&y, 0, sizeof y);
  uk_arg in[1] = {uk_arg_array(&x)};
  int count = -1;
  uk_launch l = {.block_size = 256};
  CHECK_OK(uk_fusion_kernel_count(f, in, 1, &y, 1, &l, &count));
  CHECK(count == 1);
  CHECK(y.data == 0); /* counting allocates nothing */
  int axis = 0;
  uk_launch axes = {.axes = &axis, .num_axes = 1};
  count = -1;
  CHECK_STATUS(uk_fusion_kernel_count(f, in, 1, &y, 1, &axes, &count), UK_ERR_INVALID);
  CHECK(count == -1);
  CHECK_CONTAINS(uk_last_error(), "sq: uk_launch.axes is set");
  CHECK_CONTAINS(uk_last_error(), "names its axes in its text");
  char *src = NULL;
  uk_launch keep = {.keepdims = 1};
  CHECK_STATUS(uk_fusion_source(f, in, 1, &y, 1, &keep, &src), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "uk_launch.keepdims");
  CHECK(src == NULL);
  uk_launch sized = {.size = 27};
  CHECK_STATUS(uk_fusion_precompile(f, in, 1, &y, 1, &sized), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "sq: uk_launch.size is 27");
  uk_compile_info info = {0};
  CHECK_STATUS(uk_fusion_compile_info(f, in, 1, &y, 1, &keep, &info), UK_ERR_INVALID);
  CHECK(info.log == NULL);
  CHECK_STATUS(uk_fusion_call(f, in, 1, &y, 1, &sized), UK_ERR_INVALID);
  CHECK(y.data == 0); /* nothing allocated by the refused call */
  uk_fusion_destroy(f);
}

int main(void) {
  uk_options opts;
  memset(&opts, 0, sizeof opts);
  opts.arch = 90;
  opts.disable_disk_cache = 1;
  CHECK_OK(uk_context_create(&opts, &ctx));
  if (!ctx) return ut_finish("test_api_shape");
  elementwise_launch();
  reduction_launch();
  fusion_launch();
  uk_context_destroy(ctx);
  return ut_finish("test_api_shape");
}
