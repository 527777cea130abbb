/* Generated elementwise source, compared byte for byte with golden files in
 * tests/golden/<name>.cu. UKERN_UPDATE_GOLDEN=1 rewrites them (review the
 * diff). Goes through uk_elementwise_source with fake device pointers, so
 * it runs without a GPU and tests the real call-path decisions. */
#include <stdlib.h>

#include "testutil.h"

static uk_context *ctx;

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
  if (s) s[n] = 0;
  fclose(f);
  return s;
}

static void golden(const char *name, const char *src) {
  const char *dir = getenv("UKERN_TEST_DATA");
  char path[4096];
  snprintf(path, sizeof path, "%s/golden/%s.cu", dir ? dir : "tests", name);
  const char *upd = getenv("UKERN_UPDATE_GOLDEN");
  if (upd && strcmp(upd, "1") == 0) {
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
      fputs(src, f);
      fclose(f);
    }
    return;
  }
  char *want = read_file(path);
  ut_checks++;
  if (!want || strcmp(want, src) != 0) {
    ut_failures++;
    fprintf(stderr, "golden %s differs (UKERN_UPDATE_GOLDEN=1 rewrites it); generated:\n%s\n", path, src);
  }
  free(want);
}

/* A 1-d or n-d descriptor at a fake address. */
static uk_array arr(uint64_t data, uk_dtype t, int ndim, const int64_t *shape, const int64_t *strides) {
  uk_array a;
  memset(&a, 0, sizeof a);
  a.data = data;
  a.dtype = t;
  a.ndim = ndim;
  int64_t s = (int64_t)uk_dtype_size(t);
  for (int d = ndim - 1; d >= 0; d--) {
    a.shape[d] = shape[d];
    a.strides[d] = strides ? strides[d] : s;
    s *= shape[d];
  }
  return a;
}

static char *source(uk_elementwise *k, const uk_arg *in, int nin, uk_array *out, int nout, int64_t size) {
  uk_launch l = {.size = size};
  char *src = NULL;
  CHECK_OK(uk_elementwise_source(k, in, nin, out, nout, &l, &src));
  return src;
}

static void run(const char *golden_name, const char *inp, const char *outp, const char *op,
                const uk_elementwise_spec *o, const uk_arg *in, int nin, uk_array *out, int nout, int64_t size,
                const char *must_contain) {
  uk_elementwise *k = NULL;
  uk_elementwise_spec s = {0};
  if (o) s = *o;
  s.in_params = inp;
  s.out_params = outp;
  s.operation = op;
  s.name = golden_name;
  CHECK_OK(uk_elementwise_create(ctx, &s, &k));
  if (!k) return;
  char *src = source(k, in, nin, out, nout, size);
  if (src) {
    golden(golden_name, src);
    if (must_contain) CHECK_CONTAINS(src, must_contain);
  }
  uk_free(src);
  uk_elementwise_destroy(k);
}

/* Call errors of SEMANTICS.md (all decided before any device work). */
static void errors(void) {
  uk_elementwise *sq = NULL, *raw = NULL, *view = NULL;
  CHECK_OK(uk_elementwise_create(
      ctx,
      &(uk_elementwise_spec){
          .in_params = "T x, T y", .out_params = "T z", .operation = "z = (x - y) * (x - y)", .name = "squared_diff"},
      &sq));
  CHECK_OK(uk_elementwise_create(
      ctx,
      &(uk_elementwise_spec){.in_params = "raw T x", .out_params = "T z", .operation = "z = x[i]", .name = "raw_only"},
      &raw));
  CHECK_OK(uk_elementwise_create(
      ctx,
      &(uk_elementwise_spec){.in_params = "T x", .out_params = "T z", .operation = "z = _raw_x[0]", .name = "view"},
      &view));
  if (!sq || !raw || !view) return;
  int64_t s34[] = {3, 4}, s4[] = {4}, s3[] = {3};
  uk_array x = arr(0x10000, UK_FLOAT32, 2, s34, NULL), y = arr(0x20000, UK_FLOAT32, 1, s4, NULL);
  uk_array z = arr(0x30000, UK_FLOAT32, 1, s4, NULL), y3 = arr(0x20000, UK_FLOAT32, 1, s3, NULL);
  uk_arg in[2] = {uk_arg_array(&x), uk_arg_array(&y)};
  uk_launch l = {.size = -1};
  char *src = NULL;
  CHECK_STATUS(uk_elementwise_source(sq, in, 2, &z, 1, &l, &src), UK_ERR_SHAPE);
  CHECK_STREQ(uk_last_error(), "squared_diff: output 'z' has shape (4,) but the loop shape is (3, 4)");
  in[1] = uk_arg_array(&y3);
  uk_array za;
  memset(&za, 0, sizeof za);
  CHECK_STATUS(uk_elementwise_source(sq, in, 2, &za, 1, &l, &src), UK_ERR_SHAPE);
  CHECK_STREQ(uk_last_error(),
              "squared_diff: shapes do not broadcast: 'x' has shape (3, 4) and 'y' has shape (3,)");
  /* size only when every array argument is raw */
  in[1] = uk_arg_array(&y);
  l.size = 10;
  CHECK_STATUS(uk_elementwise_source(sq, in, 2, &za, 1, &l, &src), UK_ERR_SHAPE);
  CHECK_STREQ(uk_last_error(),
              "Specified 'size' can be used only if all of the ndarray are 'raw'. squared_diff: size is given (10) "
              "but input 'x' is not raw (pass size = -1 or 0)");
  l.size = -1;
  in[0] = uk_arg_array(&y);
  CHECK_STATUS(uk_elementwise_source(raw, in, 1, &za, 1, &l, &src), UK_ERR_SHAPE);
  CHECK_STREQ(uk_last_error(), "Loop size is undecided. raw_only: no non-raw array gives the loop shape: pass size");
  /* arrays on different devices */
  uk_array y1 = y;
  y1.device = 1;
  in[0] = uk_arg_array(&y);
  in[1] = uk_arg_array(&y1);
  CHECK_STATUS(uk_elementwise_source(sq, in, 2, &za, 1, &l, &src), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "squared_diff: input 'x' is on device 0 but input 'y' is on device 1");
  /* arrays are never cast; placeholders bind from outputs first */
  uk_array yd = arr(0x20000, UK_FLOAT64, 1, s4, NULL);
  in[1] = uk_arg_array(&yd);
  CHECK_STATUS(uk_elementwise_source(sq, in, 2, &za, 1, &l, &src), UK_ERR_TYPE);
  CHECK_STREQ(uk_last_error(),
              "Type is mismatched. squared_diff: input 'y' is float64 but T is float32 (bound by input 'x'); arrays are never cast");
  /* scalars: range-checked into the resolved type */
  uk_array yu = arr(0x20000, UK_UINT8, 1, s4, NULL);
  in[0] = uk_arg_array(&yu);
  in[1] = uk_arg_int(300);
  CHECK_STATUS(uk_elementwise_source(sq, in, 2, &za, 1, &l, &src), UK_ERR_TYPE);
  CHECK_CONTAINS(uk_last_error(), "300");
  /* _raw_<name> needs an array */
  in[0] = uk_arg_float(1.0);
  uk_array zf = arr(0x30000, UK_FLOAT32, 1, s4, NULL);
  CHECK_STATUS(uk_elementwise_source(view, in, 1, &zf, 1, &l, &src), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "view: the operation uses '_raw_x' but input 'x' is a scalar, not an array");
  /* zero-size loops still generate (the call itself compiles nothing) */
  int64_t s0[] = {0};
  uk_array ye = arr(0x20000, UK_FLOAT32, 1, s0, NULL);
  in[0] = uk_arg_array(&ye);
  in[1] = uk_arg_array(&ye);
  CHECK_OK(uk_elementwise_source(sq, in, 2, &za, 1, &l, &src));
  uk_free(src);
  CHECK(za.data == 0); /* source never allocates or writes outputs */
  uk_elementwise_destroy(sq);
  uk_elementwise_destroy(raw);
  uk_elementwise_destroy(view);
}

/* A kernel keeps its context alive: destroying the context first is fine
 * (AddressSanitizer checks nothing is used after it is freed). */
static void context_outlived(const uk_options *opts) {
  uk_context *c = NULL;
  uk_elementwise *k = NULL;
  CHECK_OK(uk_context_create(opts, &c));
  CHECK_OK(uk_elementwise_create(
      c, &(uk_elementwise_spec){.in_params = "T x", .out_params = "T z", .operation = "z = x + 1", .name = "outlive"},
      &k));
  uk_context_destroy(c);
  int64_t n[] = {64};
  uk_array x = arr(0x10000, UK_FLOAT64, 1, n, NULL), z;
  memset(&z, 0, sizeof z);
  uk_arg in[1] = {uk_arg_array(&x)};
  char *src = NULL;
  CHECK_OK(uk_elementwise_source(k, in, 1, &z, 1, NULL, &src));
  CHECK(src && strstr(src, "typedef double T;"));
  uk_free(src);
  uk_elementwise_destroy(k);
}

int main(void) {
  uk_options opts;
  memset(&opts, 0, sizeof opts);
  opts.arch = 90;
  opts.disable_disk_cache = 1;
  CHECK_OK(uk_context_create(&opts, &ctx));
  if (!ctx) return ut_finish("test_ew_emit");
  context_outlived(&opts);
  const char *sq = "z = (x - y) * (x - y)";
  int64_t n1[] = {1000};
  uk_array x = arr(0x10000, UK_FLOAT32, 1, n1, NULL), y = arr(0x20000, UK_FLOAT32, 1, n1, NULL), z;
  memset(&z, 0, sizeof z);

  /* contiguous, aligned: vectorised x4 */
  uk_arg in[2] = {uk_arg_array(&x), uk_arg_array(&y)};
  run("squared_diff_f32_vec", "T x, T y", "T z", sq, NULL, in, 2, &z, 1, -1, "vectorised x4, 32-bit index, ndim 1");

  /* misaligned: contiguous, one element per step */
  uk_array xm = arr(0x10004, UK_FLOAT32, 1, n1, NULL);
  in[0] = uk_arg_array(&xm);
  run("squared_diff_f32_contig", "T x, T y", "T z", sq, NULL, in, 2, &z, 1, -1, "contiguous, 32-bit index, ndim 1");

  /* transposed operand, too small to tile: rows of the inner axis, x by its stride */
  int64_t s2[] = {4, 3}, xt_st[] = {4, 16};
  uk_array xt = arr(0x10000, UK_FLOAT32, 2, s2, xt_st), y2 = arr(0x20000, UK_FLOAT32, 2, s2, NULL);
  in[0] = uk_arg_array(&xt);
  in[1] = uk_arg_array(&y2);
  run("squared_diff_f32_rows32_nd2", "T x, T y", "T z", sq, NULL, in, 2, &z, 1, -1, "rows, 32-bit index, ndim 2");

  /* every other element of a 1-d array: strided, no division */
  int64_t n7[] = {7}, two[] = {8};
  uk_array xs1 = arr(0x10000, UK_FLOAT32, 1, n7, two), ys1 = arr(0x20000, UK_FLOAT32, 1, n7, NULL);
  in[0] = uk_arg_array(&xs1);
  in[1] = uk_arg_array(&ys1);
  run("squared_diff_f32_strided32_nd1", "T x, T y", "T z", sq, NULL, in, 2, &z, 1, -1,
      "strided, 32-bit index, ndim 1");

  /* rows of 1024 with a broadcast column (loaded once per row), x4 vectors, i */
  int64_t s2k[] = {3, 1024}, col_st[] = {4, 0};
  uk_array xr2 = arr(0x10000, UK_FLOAT32, 2, s2k, NULL), yc2b = arr(0x20000, UK_FLOAT32, 2, s2k, col_st);
  in[0] = uk_arg_array(&xr2);
  in[1] = uk_arg_array(&yc2b);
  run("add_i_rows_bcast_col", "T x, T y", "T z", "z = x + y + (T)i", NULL, in, 2, &z, 1, -1,
      "const T _uk_b_y = ukern::at(_uk_p_y, _uk_o_y);");

  /* a transposed operand in a 2-d loop: tiled, y staged in shared memory */
  int64_t s64[] = {64, 48}, yt_st[] = {4, 256};
  uk_array x64 = arr(0x10000, UK_FLOAT32, 2, s64, NULL), yt = arr(0x20000, UK_FLOAT32, 2, s64, yt_st);
  in[0] = uk_arg_array(&x64);
  in[1] = uk_arg_array(&yt);
  run("squared_diff_f32_tiled", "T x, T y", "T z", sq, NULL, in, 2, &z, 1, -1,
      "tiled 32x32, lanes along axis 1, 32-bit index, ndim 2");
  /* a transposed complex128 output: staged on the way out */
  uk_array xc2 = arr(0x10000, UK_COMPLEX128, 2, s64, NULL), yc2 = arr(0x20000, UK_COMPLEX128, 2, s64, NULL);
  int64_t zt_st[] = {16, 64 * 16};
  uk_array zt = arr(0x30000, UK_COMPLEX128, 2, s64, zt_st);
  in[0] = uk_arg_array(&xc2);
  in[1] = uk_arg_array(&yc2);
  run("mul_c128_tiled_out", "T x, T y", "T z", "z = x * y", NULL, in, 2, &zt, 1, -1,
      "ukern::at(_uk_p_z, (_uk_sidx)_uk_r * _uk_s_z_0 + (_uk_sidx)_uk_c * _uk_s_z_1) = _uk_t_z(_uk_ty + 8 * _uk_q, _uk_tx);");
  /* every operand transposed: lanes along axis 0, nothing staged */
  int64_t t8_st[] = {1, 64};
  uk_array x8 = arr(0x10000, UK_INT8, 2, s64, t8_st), z8 = arr(0x30000, UK_INT8, 2, s64, t8_st);
  in[0] = uk_arg_array(&x8);
  run("add_i_int8_tiled_cols", "T x", "T z", "z = x + (T)i", NULL, in, 1, &z8, 1, -1,
      "tiled 32x32, lanes along axis 0");
  memset(&z, 0, sizeof z);

  /* > 2^31 elements, non-mergeable axes: rows, 64-bit, ndim 3 */
  int64_t N = 1ll << 28, s3[] = {4, 3, N};
  int64_t st3[] = {3 * (N * 8 + 8) + 8, N * 8 + 8, 8};
  uk_array x3 = arr(0x10000, UK_FLOAT32, 3, s3, st3), y3 = arr(0x20000, UK_FLOAT32, 3, s3, NULL);
  in[0] = uk_arg_array(&x3);
  in[1] = uk_arg_array(&y3);
  run("squared_diff_f32_rows64_nd3", "T x, T y", "T z", sq, NULL, in, 2, &z, 1, -1, "rows, 64-bit index, ndim 3");

  /* a scalar input */
  in[0] = uk_arg_array(&x);
  in[1] = uk_arg_float(2.5);
  run("squared_diff_scalar", "T x, T y", "T z", sq, NULL, in, 2, &z, 1, -1, "const T y,");

  /* a 0-d array input broadcast against a 1-d one: loaded once */
  uk_array y0 = arr(0x20000, UK_FLOAT32, 0, NULL, NULL);
  in[1] = uk_arg_array(&y0);
  run("squared_diff_bcast", "T x, T y", "T z", sq, NULL, in, 2, &z, 1, -1, "const T _uk_b_y = *_uk_p_y;");

  /* add_reverse: a raw argument and _ind.size() */
  in[0] = uk_arg_array(&x);
  in[1] = uk_arg_array(&y);
  run("add_reverse", "T x, raw T y", "T z", "z = x + y[_ind.size() - i - 1]", NULL, in, 2, &z, 1, -1,
      "ukern::raw_array<T, 1, true> y");

  /* complex64 */
  uk_array xc = arr(0x10000, UK_COMPLEX64, 1, n1, NULL), yc = arr(0x20000, UK_COMPLEX64, 1, n1, NULL);
  in[0] = uk_arg_array(&xc);
  in[1] = uk_arg_array(&yc);
  run("mul_complex64", "T x, T y", "T z", "z = x * y", NULL, in, 2, &z, 1, -1, "typedef ukern::complex<float> T;");

  /* float16 with a fixed float32 output */
  uk_array xh = arr(0x10000, UK_FLOAT16, 1, n1, NULL), yh = arr(0x20000, UK_FLOAT16, 1, n1, NULL);
  in[0] = uk_arg_array(&xh);
  in[1] = uk_arg_array(&yh);
  run("half_to_float", "T x, T y", "float32 z", "z = (float)(x * y)", NULL, in, 2, &z, 1, -1,
      "vectorised x4");

  /* the user's text names complex: its header comes in with float32 dtypes */
  in[0] = uk_arg_array(&x);
  in[1] = uk_arg_array(&y);
  run("complex_by_text", "T x, T y", "T z", "z = ukern::abs(ukern::complex<T>(x, y))", NULL, in, 2, &z, 1, -1,
      "#include <ukern/complex.cuh>\n#include <ukern/ew_core.cuh>\n\ntypedef float T;");

  /* preamble, loop_prep, after_loop, and a raw view of a non-raw input */
  uk_elementwise_spec o;
  memset(&o, 0, sizeof o);
  o.preamble = "__device__ float twice(float v) { return 2 * v; }";
  o.loop_prep = "float acc = 0";
  o.after_loop = "if (acc < 0) _raw_x[0] = acc;";
  in[0] = uk_arg_array(&x);
  run("prep_after", "float32 x", "float32 z", "acc += x; z = twice(x) + _raw_x.size()", &o, in, 1, &z, 1, -1,
      "ukern::raw_array<float, 1, true> _raw_x");

  /* an output that is read (+=): loaded before the operation */
  uk_array zg = arr(0x30000, UK_FLOAT64, 1, n1, NULL), xd = arr(0x10000, UK_FLOAT64, 1, n1, NULL);
  in[0] = uk_arg_array(&xd);
  run("accumulate", "T x", "T z", "z += x", NULL, in, 1, &zg, 1, -1, "ukern::vload<2>(_uk_p_z");

  /* 0-d loop and size= with raw arguments only */
  uk_array x0 = arr(0x10000, UK_INT32, 0, NULL, NULL);
  in[0] = uk_arg_array(&x0);
  memset(&z, 0, sizeof z);
  run("zero_d", "T x", "T z", "z = x + 1", NULL, in, 1, &z, 1, -1, "contiguous, 32-bit index, ndim 0");
  uk_array xr = arr(0x10000, UK_INT64, 1, n1, NULL);
  in[0] = uk_arg_array(&xr);
  run("raw_size", "raw T x", "T z", "z = x[i % x.size()]", NULL, in, 1, &z, 1, 500, "const long long i");

  errors();
  uk_context_destroy(ctx);
  return ut_finish("test_ew_emit");
}
