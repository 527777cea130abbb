/* The public API's one shape (issue 24 item 3), checked without a GPU or
 * NVRTC: one uk_launch for the three kinds, whose members a kind does not
 * take are UK_ERR_INVALID naming them (never silently ignored), while the
 * members it takes work; the same parameter list for every call; one
 * constructor form, uk_X_create(ctx, &spec, &k), whose zeroed members are
 * the defaults and whose required ones are named when missing. */
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
  CHECK_OK(uk_elementwise_create(
      ctx, &(uk_elementwise_spec){.in_params = "T x", .out_params = "T y", .operation = "y = x * 2", .name = "twice"},
      &k));
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
  CHECK_OK(uk_fusion_create(
      ctx, &(uk_fusion_spec){.inputs = "x", .outputs = "y", .program = "y = sum(x * x, axis=1)", .name = "sq"}, &f));
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

/* A zeroed name is CuPy's default; a missing required member is named. */
static void elementwise_spec(void) {
  uk_elementwise *k = (uk_elementwise *)0x1;
  uk_elementwise_spec sp = {.in_params = "T x", .out_params = "T y"};
  CHECK_STATUS(uk_elementwise_create(ctx, &sp, &k), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_elementwise_spec: operation is NULL (hint: it is required)");
  CHECK(k == (uk_elementwise *)0x1); /* out is written only on success */
  CHECK_STATUS(uk_elementwise_create(ctx, NULL, &k), UK_ERR_INVALID);
  CHECK_STATUS(uk_elementwise_create(ctx, &sp, NULL), UK_ERR_INVALID);
  sp.operation = "y = x + 1";
  k = NULL;
  CHECK_OK(uk_elementwise_create(ctx, &sp, &k));
  if (!k) return;
  uk_array x = vec(0x10000, 11), y;
  memset(&y, 0, sizeof y);
  uk_arg in[1] = {uk_arg_array(&x)};
  char *src = NULL;
  CHECK_OK(uk_elementwise_source(k, in, 1, &y, 1, NULL, &src));
  CHECK_CONTAINS(src, "__global__ void kernel(");
  uk_free(src);
  uk_elementwise_destroy(k);
  /* The spec is borrowed for the call: the kernel keeps copies. */
  char op[32] = "y = x * 3";
  sp.operation = op;
  sp.name = "thrice";
  CHECK_OK(uk_elementwise_create(ctx, &sp, &k));
  memset(op, 'q', sizeof op - 1);
  src = NULL;
  CHECK_OK(uk_elementwise_source(k, in, 1, &y, 1, NULL, &src));
  CHECK_CONTAINS(src, "y = x * 3");
  uk_free(src);
  uk_elementwise_destroy(k);
}

static void reduction_spec(void) {
  uk_reduction_spec sp = {
      .in_params = "T x", .out_params = "T y", .map_expr = "x", .reduce_expr = "a + b", .identity = "0"};
  uk_reduction *r = (uk_reduction *)0x1;
  CHECK_STATUS(uk_reduction_create(ctx, &sp, &r), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_reduction_spec: post_map_expr is NULL (hint: it is required)");
  CHECK(r == (uk_reduction *)0x1);
  sp.post_map_expr = "y = a";
  r = NULL;
  CHECK_OK(uk_reduction_create(ctx, &sp, &r));
  if (!r) return;
  uk_array x = vec(0x10000, 19), y;
  memset(&y, 0, sizeof y);
  uk_arg in[1] = {uk_arg_array(&x)};
  char *src = NULL;
  CHECK_OK(uk_reduction_source(r, in, 1, &y, 1, NULL, &src));
  CHECK_CONTAINS(src, "reduce_kernel_");
  uk_free(src);
  uk_reduction_destroy(r);
}

/* Text or builder, exactly one; the two give the same kernels. */
static void fusion_spec(void) {
  uk_fusion *f = (uk_fusion *)0x1;
  uk_fusion_spec text = {.inputs = "x, y", .outputs = "z", .program = "z = x * y + 1"};
  uk_fusion_builder *b = NULL;
  CHECK_OK(uk_fusion_builder_create("x, y", &b));
  if (!b) return;
  int x = uk_fusion_input(b, "x"), y = uk_fusion_input(b, "y");
  int m = uk_fusion_op(b, "multiply", (int[]){x, y}, 2);
  CHECK_OK(uk_fusion_output(b, "z", uk_fusion_op(b, "add", (int[]){m, uk_fusion_const_int(b, 1)}, 2)));

  uk_fusion_spec both = text;
  both.builder = b;
  CHECK_STATUS(uk_fusion_create(ctx, &both, &f), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "uk_fusion_spec: both a builder and program text are given");
  uk_fusion_spec some = {.inputs = "x", .program = "z = x"};
  CHECK_STATUS(uk_fusion_create(ctx, &some, &f), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "uk_fusion_spec: outputs is NULL");
  uk_fusion_spec none = {.name = "f"};
  CHECK_STATUS(uk_fusion_create(ctx, &none, &f), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "uk_fusion_spec: inputs is NULL");
  CHECK(f == (uk_fusion *)0x1);

  uk_fusion *ft = NULL, *fb = NULL;
  uk_fusion_spec built = {.builder = b};
  CHECK_OK(uk_fusion_create(ctx, &text, &ft));
  CHECK_OK(uk_fusion_create(ctx, &built, &fb));
  uk_fusion_builder_destroy(b); /* the fusion holds a copy */
  if (!ft || !fb) return;
  uk_array xa = vec(0x10000, 23), ya = vec(0x20000, 23), z;
  memset(&z, 0, sizeof z);
  uk_arg in[2] = {uk_arg_array(&xa), uk_arg_array(&ya)};
  char *st = NULL, *sb = NULL;
  CHECK_OK(uk_fusion_source(ft, in, 2, &z, 1, NULL, &st));
  CHECK_OK(uk_fusion_source(fb, in, 2, &z, 1, NULL, &sb));
  CHECK(st && sb && strcmp(st, sb) == 0);
  CHECK_CONTAINS(st, "fusion"); /* the default name */
  uk_free(st);
  uk_free(sb);
  uk_fusion_destroy(ft);
  uk_fusion_destroy(fb);

  /* A builder's error comes back from uk_fusion_create. */
  CHECK_OK(uk_fusion_builder_create("x", &b));
  if (!b) return;
  CHECK(uk_fusion_op(b, "no_such_function", (int[]){0}, 1) == -1);
  built.builder = b;
  f = (uk_fusion *)0x1;
  CHECK(uk_fusion_create(ctx, &built, &f) != UK_OK);
  CHECK_CONTAINS(uk_last_error(), "no_such_function");
  CHECK(f == (uk_fusion *)0x1);
  uk_fusion_builder_destroy(b);
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
  elementwise_spec();
  reduction_spec();
  fusion_spec();
  uk_context_destroy(ctx);
  return ut_finish("test_api_shape");
}
