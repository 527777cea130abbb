/* Checks a call makes before any compile or launch (no GPU, no NVRTC):
 * descriptors whose element count, byte size or stride products overflow
 * are UK_ERR_SHAPE naming the argument (issue 9 item 6), broadcasts that
 * overflow likewise, and a texture object passed to a reduction says that
 * reductions do not take textures (issue 9 item 12). Also the public
 * queries the ukern tool uses instead of internals: a call's NVRTC options,
 * the parameter counts, and uk_dtype_encode's single rounding. */
#include <math.h>
#include <stdint.h>

#include "testutil.h"

static uk_context *ctx;

static uk_array arr(uint64_t data, uk_dtype t, int ndim, const int64_t *shape) {
  uk_array a;
  memset(&a, 0, sizeof a);
  a.data = data;
  a.dtype = t;
  a.ndim = ndim;
  int64_t s = (int64_t)uk_dtype_size(t);
  for (int d = ndim - 1; d >= 0; d--) {
    a.shape[d] = shape[d];
    a.strides[d] = s;
    if (shape[d] > 0 && s <= INT64_MAX / shape[d]) s *= shape[d];
  }
  return a;
}

/* Source generation runs every check a call makes before the device. */
static uk_status ew_source(uk_elementwise *k, const uk_array *x, const uk_array *y, uk_array *z) {
  uk_arg in[2] = {uk_arg_array(x), uk_arg_array(y)};
  char *src = NULL;
  uk_status st = uk_elementwise_source(k, in, 2, z, 1, NULL, &src);
  uk_free(src);
  return st;
}

static void elementwise_shapes(void) {
  uk_elementwise *k = NULL;
  CHECK_OK(uk_elementwise_create(
      ctx,
      &(uk_elementwise_spec){.in_params = "T x, T y", .out_params = "T z", .operation = "z = x + y", .name = "add"},
      &k));
  if (!k) return;
  int64_t ok[] = {1000}, huge[] = {INT64_MAX / 2, 4};
  uk_array x = arr(0x10000, UK_FLOAT32, 1, ok), y = x, z;
  memset(&z, 0, sizeof z);
  CHECK_OK(ew_source(k, &x, &y, &z)); /* the control: the same call with a sane shape */

  x = arr(0x10000, UK_FLOAT32, 2, huge);
  y = x;
  memset(&z, 0, sizeof z);
  CHECK_STATUS(ew_source(k, &x, &y, &z), UK_ERR_SHAPE);
  CHECK_CONTAINS(uk_last_error(), "add: input 'x'");
  CHECK_CONTAINS(uk_last_error(), "overflows");

  /* Element count fine, byte size not (int64 elements of 2^61). */
  int64_t big[] = {(int64_t)1 << 61};
  x = arr(0x10000, UK_INT64, 1, big);
  y = arr(0x10000, UK_INT64, 1, ok);
  CHECK_STATUS(ew_source(k, &x, &y, &z), UK_ERR_SHAPE);
  CHECK_CONTAINS(uk_last_error(), "'x'");

  /* A stride product that overflows: stride 2^40 over 2^30 elements. */
  int64_t n[] = {(int64_t)1 << 30};
  x = arr(0x10000, UK_FLOAT32, 1, n);
  x.strides[0] = (int64_t)1 << 40;
  y = arr(0x10000, UK_FLOAT32, 1, n);
  CHECK_STATUS(ew_source(k, &x, &y, &z), UK_ERR_SHAPE);
  CHECK_CONTAINS(uk_last_error(), "stride");
  x.strides[0] = -((int64_t)1 << 40); /* the same backwards */
  CHECK_STATUS(ew_source(k, &x, &y, &z), UK_ERR_SHAPE);
  x.strides[0] = INT64_MIN;
  CHECK_STATUS(ew_source(k, &x, &y, &z), UK_ERR_SHAPE);

  /* Each operand fine, their broadcast not: (2^40, 1) with (1, 2^40). */
  int64_t a1[] = {(int64_t)1 << 40, 1}, a2[] = {1, (int64_t)1 << 40};
  x = arr(0x10000, UK_UINT8, 2, a1);
  y = arr(0x10000, UK_UINT8, 2, a2);
  CHECK_STATUS(ew_source(k, &x, &y, &z), UK_ERR_SHAPE);
  CHECK_CONTAINS(uk_last_error(), "broadcast shape");

  /* A given output is checked the same way. */
  x = arr(0x10000, UK_FLOAT32, 2, huge);
  y = arr(0x10000, UK_FLOAT32, 1, ok);
  uk_array zo = arr(0x20000, UK_FLOAT32, 2, huge), xs = arr(0x10000, UK_FLOAT32, 1, ok);
  CHECK_STATUS(ew_source(k, &xs, &y, &zo), UK_ERR_SHAPE);
  CHECK_CONTAINS(uk_last_error(), "output 'z'");

  /* An empty array with wild strides addresses nothing: accepted. */
  int64_t empty[] = {0, INT64_MAX / 2};
  x = arr(0x10000, UK_FLOAT32, 2, empty);
  x.strides[1] = INT64_MAX / 4;
  y = x;
  memset(&z, 0, sizeof z);
  CHECK_OK(ew_source(k, &x, &y, &z));
  uk_elementwise_destroy(k);
}

static void reduction_texture(void) {
  uk_reduction_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.in_params = "T x, float32 t";
  spec.out_params = "T y";
  spec.map_expr = "x";
  spec.reduce_expr = "a + b";
  spec.post_map_expr = "y = a";
  spec.identity = "0";
  spec.name = "sum";
  uk_reduction *r = NULL;
  CHECK_OK(uk_reduction_create(ctx, &spec, &r));
  if (!r) return;
  int64_t n[] = {100};
  uk_array x = arr(0x10000, UK_FLOAT32, 1, n), y;
  memset(&y, 0, sizeof y);
  uk_arg in[2] = {uk_arg_array(&x), uk_arg_float(2.5)};
  char *src = NULL;
  CHECK_OK(uk_reduction_source(r, in, 2, &y, 1, NULL, &src)); /* the control */
  uk_free(src);
  src = NULL;
  in[1] = uk_arg_texture(0x1234);
  CHECK_STATUS(uk_reduction_source(r, in, 2, &y, 1, NULL, &src), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "reductions do not take textures");
  CHECK_CONTAINS(uk_last_error(), "'t'");
  /* Also where the texture's placeholder is the output's (bind would object otherwise). */
  in[0] = uk_arg_texture(0x1234);
  in[1] = uk_arg_float(2.5);
  CHECK_STATUS(uk_reduction_source(r, in, 2, &y, 1, NULL, &src), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "reductions do not take textures");
  CHECK(src == NULL);
  uk_reduction_destroy(r);
}

static int count(char **v) {
  int n = 0;
  while (v && v[n]) n++;
  return n;
}

static void options_and_counts(void) {
  static const char *const user[] = {"-DSCALE=2", "--use_fast_math"};
  uk_elementwise_spec eo = {.in_params = "T x",
                            .out_params = "T z",
                            .operation = "z = x * SCALE",
                            .name = "scale",
                            .options = user,
                            .num_options = 2};
  uk_elementwise *k = NULL, *kt = NULL;
  CHECK_OK(uk_elementwise_create(ctx, &eo, &k));
  CHECK_OK(uk_elementwise_create(
      ctx,
      &(uk_elementwise_spec){
          .in_params = "T x", .out_params = "T z", .operation = "z = x + tex1Dfetch<T>(0, 0)", .name = "tex"},
      &kt));
  if (!k || !kt) return;
  int64_t n[] = {77};
  uk_array x = arr(0x10000, UK_FLOAT32, 1, n), z;
  memset(&z, 0, sizeof z);
  uk_arg in[1] = {uk_arg_array(&x)};
  char **o = (char **)1;
  CHECK_OK(uk_elementwise_nvrtc_options(k, in, 1, &z, 1, NULL, &o));
  CHECK(count(o) == 3 && !strcmp(o[0], "-DSCALE=2") && !strcmp(o[1], "--use_fast_math") && !strcmp(o[2], "-minimal"));
  uk_free(o);
  o = NULL;
  CHECK_OK(uk_elementwise_nvrtc_options(kt, in, 1, &z, 1, NULL, &o)); /* runtime names: the full headers */
  CHECK(o && count(o) == 0);
  uk_free(o);
  o = NULL;
  CHECK_STATUS(uk_elementwise_nvrtc_options(NULL, in, 1, &z, 1, NULL, &o), UK_ERR_INVALID);
  CHECK_STATUS(uk_elementwise_nvrtc_options(k, in, 1, &z, 1, NULL, NULL), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "uk_elementwise_nvrtc_options: options is NULL");
  CHECK_STATUS(uk_elementwise_nvrtc_options(k, in, 2, &z, 1, NULL, &o), UK_ERR_INVALID); /* argument count */
  CHECK(o == NULL);
  int ni = -1, no = -1;
  CHECK_OK(uk_elementwise_param_counts(k, &ni, &no));
  CHECK(ni == 1 && no == 1);
  CHECK_STATUS(uk_elementwise_param_counts(NULL, &ni, &no), UK_ERR_INVALID);
  CHECK_STATUS(uk_elementwise_param_counts(k, NULL, &no), UK_ERR_INVALID);
  uk_elementwise_destroy(k);
  uk_elementwise_destroy(kt);

  uk_reduction_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.in_params = "T x, float32 s";
  spec.out_params = "T y";
  spec.map_expr = "x * s";
  spec.reduce_expr = "a + b";
  spec.post_map_expr = "y = a";
  spec.identity = "0";
  spec.name = "ssum";
  spec.options = user;
  spec.num_options = 1;
  uk_reduction *r = NULL;
  CHECK_OK(uk_reduction_create(ctx, &spec, &r));
  if (!r) return;
  uk_arg rin[2] = {uk_arg_array(&x), uk_arg_float(0.5)};
  uk_array y;
  memset(&y, 0, sizeof y);
  CHECK_OK(uk_reduction_nvrtc_options(r, rin, 2, &y, 1, NULL, &o));
  CHECK(count(o) == 2 && !strcmp(o[0], "-DSCALE=2") && !strcmp(o[1], "-minimal"));
  uk_free(o);
  /* a text that names CUDA's runtime: the full implicit headers */
  spec.map_expr = "x * s + (float)cudaSuccess";
  spec.options = NULL;
  spec.num_options = 0;
  uk_reduction *rt = NULL;
  CHECK_OK(uk_reduction_create(ctx, &spec, &rt));
  o = NULL;
  if (rt) CHECK_OK(uk_reduction_nvrtc_options(rt, rin, 2, &y, 1, NULL, &o));
  CHECK(o && count(o) == 0);
  uk_free(o);
  uk_reduction_destroy(rt);
  CHECK_STATUS(uk_reduction_nvrtc_options(NULL, rin, 2, &y, 1, NULL, &o), UK_ERR_INVALID);
  CHECK_OK(uk_reduction_param_counts(r, &ni, &no));
  CHECK(ni == 2 && no == 1);
  CHECK_STATUS(uk_reduction_param_counts(r, &ni, NULL), UK_ERR_INVALID);
  uk_reduction_destroy(r);
}

static void encode(void) {
  /* 1 + 2^-11 + 2^-30: through float it becomes the tie 1 + 2^-11 and then
   * rounds to even (1.0); rounded once it is above the tie: 1 + 2^-10. */
  double v = 1.0 + ldexp(1.0, -11) + ldexp(1.0, -30);
  uint16_t h = 0;
  CHECK_OK(uk_dtype_encode(UK_FLOAT16, v, &h));
  CHECK(h == 0x3C01);
  CHECK_OK(uk_dtype_encode(UK_FLOAT16, -65520.0, &h)); /* rounds past the largest half */
  CHECK(h == 0xFC00);
  uint16_t bf = 0;
  CHECK_OK(uk_dtype_encode(UK_BFLOAT16, 1.0 + ldexp(1.0, -8) + ldexp(1.0, -30), &bf));
  CHECK(bf == 0x3F81);
  float c[2] = {-1.0f, -1.0f};
  CHECK_OK(uk_dtype_encode(UK_COMPLEX64, 2.5, c));
  CHECK(c[0] == 2.5f && c[1] == 0.0f);
  int32_t i = 0;
  CHECK_STATUS(uk_dtype_encode(UK_INT32, 1.0, &i), UK_ERR_INVALID);
  CHECK_STATUS(uk_dtype_encode(UK_FLOAT32, 1.0, NULL), UK_ERR_INVALID);
  CHECK_STATUS(uk_dtype_encode((uk_dtype)99, 1.0, &i), UK_ERR_INVALID);
}

int main(void) {
  uk_options opts;
  memset(&opts, 0, sizeof opts);
  opts.arch = 90;
  opts.disable_disk_cache = 1;
  CHECK_OK(uk_context_create(&opts, &ctx));
  if (!ctx) return ut_finish("test_call_checks");
  elementwise_shapes();
  reduction_texture();
  options_and_counts();
  encode();
  uk_context_destroy(ctx);
  return ut_finish("test_call_checks");
}
