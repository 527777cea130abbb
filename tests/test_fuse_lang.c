/* The fusion language, its errors (exact position and caret), argument
 * checking, plans (kernel counts) and generated source; no GPU and no
 * NVRTC: sources come from uk_fusion_source on a context with an arch. */
#include "testutil.h"

static uk_context *ctx;

static void create_fails(const char *ins, const char *outs, const char *prog, uk_status want, const char *msg) {
  uk_fusion *f = (uk_fusion *)0x1;
  uk_status s =
      uk_fusion_create(ctx, &(uk_fusion_spec){.inputs = ins, .outputs = outs, .program = prog, .name = "t"}, &f);
  CHECK_STATUS(s, want);
  CHECK(f == (uk_fusion *)0x1); /* out untouched on failure */
  CHECK_CONTAINS(uk_last_error(), msg);
}

static uk_array arr(uk_dtype t, int ndim, const int64_t *shape, uint64_t data) {
  uk_array a;
  memset(&a, 0, sizeof a);
  uk_array_init(&a, data, t, ndim, shape);
  return a;
}

/* Source of f for inputs (arrays of the given dtypes/shapes), all outputs allocated. */
static char *source(uk_fusion *f, const uk_arg *in, int nin, int nout, uk_status want) {
  uk_array out[4];
  memset(out, 0, sizeof out);
  char *src = NULL;
  CHECK_STATUS(uk_fusion_source(f, in, nin, out, nout, NULL, &src), want);
  if (want == UK_OK) CHECK_STREQ(uk_last_error(), ""); /* a success leaves no error, with a driver or without */
  return src;
}

static uk_fusion *make(const char *ins, const char *outs, const char *prog) {
  uk_fusion *f = NULL;
  CHECK_OK(uk_fusion_create(ctx, &(uk_fusion_spec){.inputs = ins, .outputs = outs, .program = prog, .name = "t"}, &f));
  return f;
}

static void syntax_errors(void) {
  create_fails("x", "z", "z = x +", UK_ERR_SYNTAX, "program:1:8: expected an expression\n    z = x +\n           ^");
  create_fails("x", "z", "z = x + w", UK_ERR_SYNTAX, "program:1:9: unknown name");
  create_fails("x", "z", "t = x\nz = foo(t)", UK_ERR_SYNTAX, "program:2:5: unknown function\n    z = foo(t)\n        ^");
  create_fails("x", "z", "z = exp(x, x)", UK_ERR_SYNTAX, "too many arguments");
  create_fails("x", "z", "z = arctan2(x)", UK_ERR_SYNTAX, "arctan2 takes 2 arguments, got 1");
  create_fails("x", "z, w", "z = x", UK_ERR_SYNTAX, "output 'w' is never assigned");
  create_fails("x", "z", "x = 1; z = x", UK_ERR_SYNTAX, "cannot assign to an input");
  create_fails("x, x", "z", "z = x", UK_ERR_SYNTAX, "duplicate name 'x'");
  create_fails("x, 1y", "z", "z = x", UK_ERR_SYNTAX, "inputs:1:4: expected a name");
  create_fails("x", "z", "z = x < 1 < 2", UK_ERR_SYNTAX, "chained comparisons are not supported");
  create_fails("x", "z", "z = x z", UK_ERR_SYNTAX, "unexpected token after the expression");
  create_fails("x", "z", "z = sum(x, axis=(0, 1), foo=1)", UK_ERR_SYNTAX, "unknown keyword");
  create_fails("x", "z", "z = argmax(x, axis=(0, 1))", UK_ERR_SYNTAX, "argmax/argmin take one axis or None");
  create_fails("x", "z", "z = astype(x, 'f3')", UK_ERR_SYNTAX, "unknown dtype");
  create_fails("x", "x", "x = 1", UK_ERR_SYNTAX, "'x' is also an input");
  create_fails("x", "z", "z = 99999999999999999999", UK_ERR_SYNTAX, "integer literal out of range");
  uk_fusion *f = (uk_fusion *)0x1;
  CHECK_STATUS(
      uk_fusion_create(NULL, &(uk_fusion_spec){.inputs = "x", .outputs = "z", .program = "z = x", .name = "t"}, &f),
      UK_ERR_INVALID);
  CHECK_STATUS(
      uk_fusion_create(ctx, &(uk_fusion_spec){.inputs = "x", .outputs = "z", .program = NULL, .name = "t"}, &f),
      UK_ERR_INVALID);
  CHECK_STATUS(uk_fusion_create(
                   ctx, &(uk_fusion_spec){.inputs = "x", .outputs = "z", .program = "z = x", .name = "not-ident"}, &f),
               UK_ERR_INVALID);
  CHECK_STATUS(
      uk_fusion_create(ctx, &(uk_fusion_spec){.inputs = "x", .outputs = "z", .program = "z = x", .name = "_x"}, &f),
      UK_ERR_INVALID);
  CHECK_STATUS(
      uk_fusion_create(
          ctx, &(uk_fusion_spec){.inputs = "x", .outputs = "z", .program = "z = x", .name = "t", .num_options = 2}, &f),
      UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "uk_fusion_spec: options is NULL");
  CHECK(f == (uk_fusion *)0x1);
  uk_fusion_destroy(NULL);
  /* accepted forms: comments, newlines in parentheses, continuation, keywords */
  f = make("x, y", "z, w",
           "# comment\nt = (x +\n     y) ** 2  # trailing\nz = where(t > 1e-3, t, -t) ; w = sum(t, axis=(0, -1), "
           "keepdims=True)\n");
  uk_fusion_destroy(f);
}

static void call_errors(void) {
  int64_t s3[1] = {3}, s4[1] = {4}, s34[2] = {3, 4};
  uk_array x = arr(UK_FLOAT32, 1, s3, 256), y = arr(UK_FLOAT32, 1, s4, 512), m = arr(UK_FLOAT32, 2, s34, 1024);
  uk_arg in[2] = {uk_arg_array(&x), uk_arg_array(&y)};
  uk_fusion *f = make("x, y", "z", "z = x & y");
  free(source(f, in, 2, 1, UK_ERR_TYPE));
  CHECK_CONTAINS(uk_last_error(), "program:1:7: bitwise_and needs boolean or integer operands\n    z = x & y\n          ^");
  uk_fusion_destroy(f);
  f = make("x, y", "z", "z = x * 2 +\\\n y");
  free(source(f, in, 2, 1, UK_ERR_SHAPE));
  CHECK_CONTAINS(uk_last_error(), "program:1:11: operands could not be broadcast together with shapes (3,) (4,)");
  /* argument checks */
  uk_array out[2];
  memset(out, 0, sizeof out);
  char *src = NULL;
  CHECK_STATUS(uk_fusion_source(f, in, 1, out, 1, NULL, &src), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "1 inputs given, the program takes 2");
  CHECK_STATUS(uk_fusion_source(f, in, 2, out, 2, NULL, &src), UK_ERR_INVALID);
  CHECK_STATUS(uk_fusion_source(f, in, 2, out, 1, NULL, NULL), UK_ERR_INVALID);
  CHECK_STATUS(uk_fusion_call(NULL, in, 2, out, 1, NULL), UK_ERR_INVALID);
  uk_arg tex[2] = {uk_arg_array(&x), uk_arg_texture(5)};
  CHECK_STATUS(uk_fusion_source(f, tex, 2, out, 1, NULL, &src), UK_ERR_INVALID);
  CHECK(src == NULL);
  uk_fusion_destroy(f);
  /* outputs: all given or all allocated; a given one must have the result's shape */
  f = make("x, y", "a, b", "a = x + y; b = x - y");
  uk_arg in2[2] = {uk_arg_array(&m), uk_arg_array(&y)};
  out[0] = arr(UK_FLOAT32, 2, s34, 4096);
  CHECK_STATUS(uk_fusion_source(f, in2, 2, out, 2, NULL, &src), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "all given or all allocated (1 of 2 given)");
  out[1] = arr(UK_FLOAT64, 1, s4, 8192);
  CHECK_STATUS(uk_fusion_source(f, in2, 2, out, 2, NULL, &src), UK_ERR_SHAPE);
  CHECK_CONTAINS(uk_last_error(), "output 'b'");
  out[1] = arr(UK_FLOAT64, 2, s34, 8192); /* converted to float64 */
  CHECK_OK(uk_fusion_source(f, in2, 2, out, 2, NULL, &src));
  CHECK_CONTAINS(src, "-> float32 out0 (float32), float64 out1 (float64)");
  uk_free(src);
  uk_fusion_destroy(f);
  /* elementwise outputs of different shapes cannot share a loop */
  f = make("x, y", "a, b", "a = x + 1; b = y * 2");
  free(source(f, in, 2, 2, UK_ERR_SHAPE));
  CHECK_CONTAINS(uk_last_error(), "outputs 'a' and 'b' are computed elementwise but have different shapes");
  uk_fusion_destroy(f);
  /* float16 with Python numbers: rounded to float16 once, at generation */
  uk_array h = arr(UK_FLOAT16, 1, s3, 256);
  uk_arg ih[1] = {uk_arg_array(&h)};
  f = make("h", "z", "z = h * 0.1 + 1");
  char *hs = source(f, ih, 1, 1, UK_OK);
  CHECK_CONTAINS(hs, "((float)0.0999755859375)");
  CHECK_CONTAINS(hs, "((float)1.0)");
  uk_free(hs);
  uk_fusion_destroy(f);
  /* axes */
  f = make("x", "z", "z = sum(x, axis=2)");
  free(source(f, in2, 1, 1, UK_ERR_SHAPE));
  CHECK_CONTAINS(uk_last_error(), "axis 2 is out of bounds for an operand of ndim 2");
  uk_fusion_destroy(f);
  f = make("x", "z", "z = sum(x, axis=(1, -1))");
  free(source(f, in2, 1, 1, UK_ERR_SHAPE));
  CHECK_CONTAINS(uk_last_error(), "axis -1 is repeated");
  uk_fusion_destroy(f);
  f = make("x", "z", "z = var(x * 1j)");
  free(source(f, in2, 1, 1, UK_ERR_TYPE));
  CHECK_CONTAINS(uk_last_error(), "var is not supported for complex operands");
  uk_fusion_destroy(f);
}

/* NEP 50: Python ints must fit the integer dtype they meet (NumPy raises
 * OverflowError), except in comparisons, which compare by value. */
static void weak_ints(void) {
  int64_t s7[1] = {7};
  uk_array i8 = arr(UK_INT8, 1, s7, 256), u8 = arr(UK_UINT8, 1, s7, 512);
  uk_arg in[2] = {uk_arg_array(&i8), uk_arg_int(300)};
  uk_fusion *f = make("x, a", "z", "z = x + 300");
  free(source(f, in, 2, 1, UK_ERR_TYPE));
  CHECK_CONTAINS(uk_last_error(), "program:1:9: Python integer 300 out of bounds for int8\n    z = x + 300\n            ^");
  uk_fusion_destroy(f);
  f = make("x, a", "z", "z = x * a");
  free(source(f, in, 2, 1, UK_ERR_TYPE));
  CHECK_CONTAINS(uk_last_error(), "Python integer 300 (input 'a') out of bounds for int8");
  in[1] = uk_arg_int(-128);
  char *src = source(f, in, 2, 1, UK_OK);
  uk_free(src);
  uk_fusion_destroy(f);
  uk_arg iu[2] = {uk_arg_array(&u8), uk_arg_int(1)};
  f = make("x, a", "z", "z = x * -1");
  free(source(f, iu, 2, 1, UK_ERR_TYPE));
  CHECK_CONTAINS(uk_last_error(), "Python integer -1 out of bounds for uint8");
  uk_fusion_destroy(f);
  f = make("x, a", "z, w", "z = x == 300; w = (x - 1) + a // 2"); /* a // 2 stays a Python int: not checked */
  src = source(f, iu, 2, 2, UK_OK);
  CHECK_CONTAINS(src, "((long long)(in0)) == 300LL");
  uk_free(src);
  uk_fusion_destroy(f);
}

/* Python integers at each integer dtype's bounds (NEP 50), as literals
 * (folded, checked when planned) and as scalar inputs (checked per call):
 * MAX and MIN fit, MAX + 1 and MIN - 1 are out of bounds. */
static void weak_int_bounds(void) {
  static const struct {
    uk_dtype t;
    const char *name;
    int64_t min, max;
    int min_1, max_1; /* MIN - 1 / MAX + 1 exist as int64 */
  } b[] = {
      {UK_INT8, "int8", INT8_MIN, INT8_MAX, 1, 1},        {UK_INT16, "int16", INT16_MIN, INT16_MAX, 1, 1},
      {UK_INT32, "int32", INT32_MIN, INT32_MAX, 1, 1},    {UK_INT64, "int64", INT64_MIN, INT64_MAX, 0, 0},
      {UK_UINT8, "uint8", 0, UINT8_MAX, 1, 1},            {UK_UINT16, "uint16", 0, UINT16_MAX, 1, 1},
      {UK_UINT32, "uint32", 0, UINT32_MAX, 1, 1},         {UK_UINT64, "uint64", 0, INT64_MAX, 1, 0},
  };
  int64_t s7[1] = {7};
  for (size_t j = 0; j < sizeof b / sizeof b[0]; j++) {
    uk_array x = arr(b[j].t, 1, s7, 256);
    int64_t v[4] = {b[j].max, b[j].min, b[j].max + (b[j].max_1 ? 1 : 0), b[j].min - (b[j].min_1 ? 1 : 0)};
    for (int k = 0; k < 4; k++) {
      int fits = k < 2 || (k == 2 && !b[j].max_1) || (k == 3 && !b[j].min_1);
      char prog[96], want[128];
      /* INT64_MIN has no literal: -INT64_MAX - 1 folds to it */
      if (v[k] == INT64_MIN) snprintf(prog, sizeof prog, "z = x + (-%lld - 1)", (long long)INT64_MAX);
      else snprintf(prog, sizeof prog, "z = x + %lld", (long long)v[k]);
      snprintf(want, sizeof want, "Python integer %lld out of bounds for %s", (long long)v[k], b[j].name);
      uk_arg in[2] = {uk_arg_array(&x), uk_arg_int(v[k])};
      uk_fusion *f = make("x, a", "z", prog);
      uk_free(source(f, in, 2, 1, fits ? UK_OK : UK_ERR_TYPE));
      if (!fits) CHECK_CONTAINS(uk_last_error(), want);
      uk_fusion_destroy(f);
      f = make("x, a", "z", "z = a - x");
      uk_free(source(f, in, 2, 1, fits ? UK_OK : UK_ERR_TYPE));
      snprintf(want, sizeof want, "Python integer %lld (input 'a') out of bounds for %s", (long long)v[k], b[j].name);
      if (!fits) CHECK_CONTAINS(uk_last_error(), want);
      uk_fusion_destroy(f);
    }
  }
}

static int kernels(const char *ins, const char *prog, const uk_arg *in, int nin) {
  uk_fusion *f = make(ins, "z", prog);
  int n = -1;
  uk_array out[1];
  memset(out, 0, sizeof out);
  CHECK_OK(uk_fusion_kernel_count(f, in, nin, out, 1, NULL, &n));
  uk_fusion_destroy(f);
  return n;
}

static void plans(void) {
  int64_t s35[2] = {3, 5}, s5[1] = {5};
  uk_array x = arr(UK_FLOAT32, 2, s35, 256), y = arr(UK_FLOAT32, 1, s5, 512);
  uk_arg in[2] = {uk_arg_array(&x), uk_arg_array(&y)};
  CHECK(kernels("x, y", "z = 2 * x + y", in, 2) == 1);
  CHECK(kernels("x, y", "t = x - y; z = sqrt(sum(t * t, axis=-1))", in, 2) == 1);
  CHECK(kernels("x, y", "m = mean(x, axis=1); v = var(x, axis=1); z = m + sqrt(v)", in, 2) == 1);
  /* the row plan: reductions over the last axis used again per row */
  CHECK(kernels("x, y", "z = x - mean(x, axis=1, keepdims=True)", in, 2) == 1);
  CHECK(kernels("x, y", "m = max(x, axis=1, keepdims=True); e = exp(x - m); z = e / sum(e, axis=1, keepdims=True)",
                in, 2) == 1);
  CHECK(kernels("x, y", "c = x - mean(x, axis=-1, keepdims=True); z = c / sqrt(mean(c * c, axis=-1, keepdims=True) "
                "+ 1e-5) * y + y", in, 2) == 1); /* a layer norm: two levels, y broadcast per element */
  CHECK(kernels("x, y", "z = sum(x - mean(x, axis=-1, keepdims=True), axis=-1)", in, 2) == 1); /* per-row output */
  /* the split plan keeps what the row plan cannot do */
  CHECK(kernels("x, y", "z = x - mean(x, axis=0, keepdims=True)", in, 2) == 2); /* not the last axis */
  CHECK(kernels("x, y", "z = x - max(x, axis=(0, 1), keepdims=True)", in, 2) == 2);
  CHECK(kernels("x, y", "z = sum(x, axis=1) + sum(x, axis=1)", in, 2) == 1);   /* one reduction kernel already */
  {
    int64_t s55[2] = {5, 5}, s0[2] = {0, 5}, s50[2] = {5, 0}, sl[2] = {3, 300000}, sm[2] = {300, 9000};
    uk_array q = arr(UK_FLOAT32, 2, s55, 256), z0 = arr(UK_FLOAT32, 2, s0, 256), e0 = arr(UK_FLOAT32, 2, s50, 256);
    uk_array l = arr(UK_FLOAT32, 2, sl, 256), m = arr(UK_FLOAT32, 2, sm, 256);
    uk_arg iq[1] = {uk_arg_array(&q)}, iz[1] = {uk_arg_array(&z0)}, ie[1] = {uk_arg_array(&e0)};
    uk_arg il[1] = {uk_arg_array(&l)}, im[1] = {uk_arg_array(&m)};
    CHECK(kernels("x", "z = x - mean(x, axis=1)", iq, 1) == 2); /* no keepdims: broadcast along the row */
    CHECK(kernels("x", "z = x - mean(x, axis=1, keepdims=True)", iq, 1) == 1);
    CHECK(kernels("x", "z = x - mean(x, axis=1, keepdims=True)", iz, 1) == 2); /* no rows */
    CHECK(kernels("x", "z = x - max(x, axis=1, keepdims=True)", ie, 1) == 2);  /* empty rows: NumPy's error */
    CHECK(kernels("x", "z = x - mean(x, axis=1, keepdims=True)", il, 1) == 2); /* a few long rows (2.4 MB each) */
    CHECK(kernels("x", "z = x - mean(x, axis=1, keepdims=True)", im, 1) == 1); /* many long rows */
    int64_t s16[2] = {16, 65536}; /* 16 rows of 512 KiB read and written: one kernel (issue 25) */
    uk_array x16 = arr(UK_FLOAT32, 2, s16, 256);
    uk_arg i16[1] = {uk_arg_array(&x16)};
    CHECK(kernels("x", "z = x - mean(x, axis=1, keepdims=True)", i16, 1) == 1);
    CHECK(kernels("x", "e = exp(x - max(x, axis=1, keepdims=True)); z = e / sum(e, axis=1, keepdims=True)", i16, 1) == 1);
    /* a given output: the same view as the input runs in place; another overlap goes to the split plan */
    uk_fusion *f = make("x", "z", "z = x - mean(x, axis=1, keepdims=True)");
    uk_array o = q;
    int n = -1;
    CHECK_OK(uk_fusion_kernel_count(f, iq, 1, &o, 1, NULL, &n));
    CHECK(n == 1);
    o.data += 4;
    CHECK_OK(uk_fusion_kernel_count(f, iq, 1, &o, 1, NULL, &n));
    CHECK(n == 2);
    o.data += 100 * 4;
    CHECK_OK(uk_fusion_kernel_count(f, iq, 1, &o, 1, NULL, &n));
    CHECK(n == 1);
    uk_fusion_destroy(f);
  }
  CHECK(kernels("x, y", "z = sum(x, axis=0) + y", in, 2) == 2);   /* y is an array over the reduced shape */
  CHECK(kernels("x, y", "z = sum(x, axis=0) * 2.5", in, 2) == 1); /* scalars fit the post-map */
  CHECK(kernels("x, y", "z = sum(x) / sum(y)", in, 2) == 3);      /* two operand shapes: two reductions, one elementwise */
  CHECK(kernels("x, y", "z = sum(sum(x, axis=1))", in, 2) == 2);  /* a reduction of a reduction */
  CHECK(kernels("x, y", "z = y", in, 2) == 1);
  {
    /* same axes, operands of different shapes (NumPy accepts): one kernel per reduction at
     * such a call, the merged kernel again when the shapes agree */
    int64_t s31[2] = {3, 1};
    uk_array w = arr(UK_FLOAT32, 2, s31, 768);
    uk_arg iw[2] = {uk_arg_array(&x), uk_arg_array(&w)}, ix[2] = {uk_arg_array(&x), uk_arg_array(&x)};
    uk_fusion *f = make("x, y", "z", "z = sum(x, axis=0) + sum(y, axis=0)");
    uk_array o[1];
    int n = -1;
    memset(o, 0, sizeof o);
    CHECK_OK(uk_fusion_kernel_count(f, ix, 2, o, 1, NULL, &n));
    CHECK(n == 1);
    CHECK_OK(uk_fusion_kernel_count(f, iw, 2, o, 1, NULL, &n));
    CHECK(n == 3);
    CHECK_OK(uk_fusion_kernel_count(f, ix, 2, o, 1, NULL, &n));
    CHECK(n == 1);
    char *src = source(f, iw, 2, 1, UK_OK);
    CHECK_CONTAINS(src, "kernel 3 of 3");
    uk_free(src);
    uk_fusion_destroy(f);
  }
}

static void sources(void) {
  int64_t s35[2] = {3, 5};
  uk_array x = arr(UK_FLOAT16, 2, s35, 256), i = arr(UK_INT32, 2, s35, 512), u = arr(UK_UINT8, 2, s35, 1024);
  uk_arg in[3] = {uk_arg_array(&x), uk_arg_array(&i), uk_arg_array(&u)};
  uk_fusion *f = make("h, i, u", "z", "z = exp(-h) * h + 1");
  char *src = source(f, in, 3, 1, UK_OK);
  CHECK_CONTAINS(src, "-> float16 out0");
  CHECK_CONTAINS(src, "ukern::half(_uk_exp(float(");
  CHECK_CONTAINS(src, "// fusion parameters: in0 = h in1 = i in2 = u out0 = z");
  uk_free(src);
  uk_fusion_destroy(f);
  f = make("h, i, u", "z, w, q", "z = i / u; w = i // u; q = sum(u)");
  src = source(f, in, 3, 3, UK_OK);
  CHECK_CONTAINS(src, "float64 out0");
  CHECK_CONTAINS(src, "_uk_floordiv(in1, ((int)(in2)))"); /* int32 // uint8 in int32 */
  CHECK_CONTAINS(src, "uint64 out2");
  CHECK_CONTAINS(src, "kernel 1 of 2 (reduction 't_r0')");
  CHECK_CONTAINS(src, "kernel 2 of 2 (elementwise 't_e1')");
  uk_free(src);
  uk_fusion_destroy(f);
  /* shifts (bool: int8, as NumPy), asarray (a weak Python scalar made strong), complex ordering */
  uk_arg sh[3] = {uk_arg_array(&x), uk_arg_array(&i), uk_arg_array(&u)};
  f = make("h, i, u", "z, w", "z = left_shift(u, 3) + right_shift(i, u); w = left_shift(u > 1, True)");
  src = source(f, sh, 3, 2, UK_OK);
  CHECK_CONTAINS(src, "_uk_lshift(in2, ((unsigned char)(3LL)))");
  CHECK_CONTAINS(src, "_uk_rshift(in1, ((int)(in2)))");
  CHECK_CONTAINS(src, "-> int32 out0 (int32), int8 out1 (int8)");
  uk_free(src);
  uk_fusion_destroy(f);
  uk_arg wk[2] = {uk_arg_array(&x), uk_arg_float(0.5)};
  f = make("h, a", "z, w", "z = h * asarray(a); w = h * a");
  src = source(f, wk, 2, 2, UK_OK);
  CHECK_CONTAINS(src, "-> float64 out0 (float64), float16 out1 (float16)"); /* np.float64 strong, 0.5 weak */
  CHECK_CONTAINS(src, "_uk_copy(in1)");
  uk_free(src);
  uk_fusion_destroy(f);
  {
    uk_array c = arr(UK_COMPLEX64, 2, s35, 2048);
    uk_arg ic[2] = {uk_arg_array(&c), uk_arg_array(&c)};
    f = make("a, b", "z, w", "z = a < b; w = maximum(a, b)");
    src = source(f, ic, 2, 2, UK_OK);
    CHECK_CONTAINS(src, "-> bool out0 (bool), complex64 out1 (complex64)");
    CHECK_CONTAINS(src, "(in0 < in1)");
    uk_free(src);
    uk_fusion_destroy(f);
  }
  /* weak scalars: a Python float keeps float16; a Python int keeps uint8 */
  uk_arg sc[3] = {uk_arg_array(&x), uk_arg_float(0.5), uk_arg_int(3)};
  f = make("h, a, b", "z, w", "z = h * a; w = h > b");
  src = source(f, sc, 3, 2, UK_OK);
  CHECK_CONTAINS(src, "float64 in1 (float64, scalar)");
  CHECK_CONTAINS(src, "-> float16 out0 (float16), bool out1 (bool)");
  uk_free(src);
  uk_fusion_destroy(f);
  /* a typed scalar is strong (NumPy 2): float64 scalar * float16 -> float64 */
  double two = 2.0;
  uk_arg ty[2] = {uk_arg_array(&x), uk_arg_typed(UK_FLOAT64, &two)};
  f = make("h, a", "z", "z = h * a");
  src = source(f, ty, 2, 1, UK_OK);
  CHECK_CONTAINS(src, "-> float64 out0");
  uk_free(src);
  uk_fusion_destroy(f);
  /* angle: of the complex value (real result), of ints as float64, of float16 in float */
  {
    int64_t s7[1] = {7};
    uk_array c64 = arr(UK_COMPLEX64, 1, s7, 256), c128 = arr(UK_COMPLEX128, 1, s7, 512), i32 = arr(UK_INT32, 1, s7, 1024);
    uk_array f16 = arr(UK_FLOAT16, 1, s7, 2048);
    uk_arg ia[4] = {uk_arg_array(&c64), uk_arg_array(&c128), uk_arg_array(&i32), uk_arg_array(&f16)};
    f = make("a, b, i, h", "w, x, y, z", "w = angle(a); x = angle(b); y = angle(i); z = angle(h)");
    src = source(f, ia, 4, 4, UK_OK);
    CHECK_CONTAINS(src, "-> float32 out0 (float32), float64 out1 (float64), float64 out2 (float64), float16 out3 (float16)");
    CHECK_CONTAINS(src, "_uk_angle(in0)");
    CHECK_CONTAINS(src, "_uk_angle(in1)");
    CHECK_CONTAINS(src, "_uk_angle(((double)(in2)))");
    CHECK_CONTAINS(src, "ukern::half(_uk_angle(float(in3)))");
    uk_free(src);
    uk_fusion_destroy(f);
    uk_arg w[1] = {uk_arg_complex(1, 1)};
    f = make("a", "z", "z = angle(a)"); /* a Python complex: float64 */
    src = source(f, w, 1, 1, UK_OK);
    CHECK_CONTAINS(src, "-> float64 out0");
    uk_free(src);
    uk_fusion_destroy(f);
  }
  /* argmax and std: struct accumulators, first index wins */
  uk_arg fin[1] = {uk_arg_array(&x)};
  f = make("h", "a, s", "a = argmax(h, axis=1); s = std(h, axis=1, ddof=1)");
  src = source(f, fin, 1, 2, UK_OK);
  CHECK_CONTAINS(src, "_uk_argpair<float> m0;");
  CHECK_CONTAINS(src, "_uk_welford<float> m1;");
  CHECK_CONTAINS(src, "int64 out0 (int64), float16 out1 (float16)");
  CHECK_CONTAINS(src, "a.m1.n - 1");
  /* the pair's index is 32-bit where the plan's is (every reduced index below INT32_MAX) */
  CHECK_CONTAINS(src, "#define _UK_RED_IDX32 1");
  CHECK_CONTAINS(src, "_uk_argpair_make<float>(_uk_lim<float>::lowest(), _UK_ARG_NONE)");
  uk_free(src);
  uk_fusion_destroy(f);
  int64_t s2g[1] = {((int64_t)1 << 31) + 5}; /* an index past INT32_MAX: a 64-bit plan and pair */
  uk_array big = arr(UK_FLOAT32, 1, s2g, 256);
  uk_arg bin[1] = {uk_arg_array(&big)};
  f = make("h", "a", "a = argmin(h)");
  src = source(f, bin, 1, 1, UK_OK);
  CHECK_CONTAINS(src, "64-bit index");
  CHECK(!strstr(src, "_UK_RED_IDX32"));
  CHECK_CONTAINS(src, "_uk_argpair_make<float>(_uk_lim<float>::highest(), _UK_ARG_NONE)");
  uk_free(src);
  uk_fusion_destroy(f);
}

/* The builder gives byte-identical kernels to the text built in evaluation order. */
static void builder(void) {
  int64_t s35[2] = {37, 129};
  uk_array x = arr(UK_FLOAT32, 2, s35, 256), y = arr(UK_FLOAT32, 2, s35, 4096);
  uk_arg in[2] = {uk_arg_array(&x), uk_arg_array(&y)};
  uk_fusion *ft = make("x, y", "d, m", "t = x - y; d = sqrt(sum(t * t, axis=-1)); m = maximum(x, 0.5) * 2");
  uk_fusion_builder *b = NULL;
  CHECK_OK(uk_fusion_builder_create("x, y", &b));
  int xi = uk_fusion_input(b, "x"), yi = uk_fusion_input(b, "y");
  CHECK(xi == 0 && yi == 1);
  int t = uk_fusion_op(b, "subtract", (int[]){xi, yi}, 2);
  int tt = uk_fusion_op(b, "multiply", (int[]){t, t}, 2);
  int s = uk_fusion_reduce(b, "sum", tt, (int[]){-1}, 1, 0, 0);
  CHECK_OK(uk_fusion_output(b, "d", uk_fusion_op(b, "sqrt", &s, 1)));
  int h = uk_fusion_const_float(b, 0.5);
  int mx = uk_fusion_op(b, "maximum", (int[]){xi, h}, 2);
  CHECK_OK(uk_fusion_output(b, "m", uk_fusion_op(b, "multiply", (int[]){mx, uk_fusion_const_int(b, 2)}, 2)));
  uk_fusion *fb = NULL;
  CHECK_OK(uk_fusion_create(ctx, &(uk_fusion_spec){.builder = b, .name = "t"}, &fb));
  char *st = source(ft, in, 2, 2, UK_OK), *sb = fb ? source(fb, in, 2, 2, UK_OK) : NULL;
  CHECK(st && sb && strcmp(st, sb) == 0);
  CHECK_CONTAINS(sb, "kernel 1 of 1 (row 't_row')"); /* d per row, m per element: one kernel */
  uk_free(st);
  uk_free(sb);
  uk_fusion_destroy(fb);
  uk_fusion_destroy(ft);
  /* errors are sticky and come back from uk_fusion_create */
  CHECK(uk_fusion_input(b, "nope") == -1);
  CHECK(uk_fusion_op(b, "exp", (int[]){0}, 1) == -1); /* after the first error, nothing more */
  fb = (uk_fusion *)0x1;
  CHECK_STATUS(uk_fusion_create(ctx, &(uk_fusion_spec){.builder = b, .name = "t"}, &fb), UK_ERR_NOT_FOUND);
  CHECK_CONTAINS(uk_last_error(), "no input 'nope'");
  CHECK(fb == (uk_fusion *)0x1);
  uk_fusion_builder_destroy(b);
  CHECK_OK(uk_fusion_builder_create("x", &b));
  CHECK(uk_fusion_op(b, "exp", (int[]){7}, 1) == -1);
  CHECK_STATUS(uk_fusion_create(ctx, &(uk_fusion_spec){.builder = b, .name = "t"}, &fb), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "argument 0 is not a node of this builder (7)");
  uk_fusion_builder_destroy(b);
  CHECK_OK(uk_fusion_builder_create("x", &b));
  CHECK(uk_fusion_op(b, "arctan2", (int[]){0}, 1) == -1);
  uk_fusion_builder_destroy(b);
  CHECK_OK(uk_fusion_builder_create("x", &b));
  CHECK_STATUS(uk_fusion_create(ctx, &(uk_fusion_spec){.builder = b, .name = "t"}, &fb),
               UK_ERR_INVALID); /* no outputs */
  CHECK(uk_fusion_reduce(b, "median", 0, NULL, -1, 0, 0) == -1);
  uk_fusion_builder_destroy(b);
  uk_fusion_builder_destroy(NULL);
  CHECK_STATUS(uk_fusion_builder_create("x", NULL), UK_ERR_INVALID);
}

int main(void) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = 90;
  o.disable_disk_cache = 1;
  CHECK_OK(uk_context_create(&o, &ctx));
  syntax_errors();
  call_errors();
  weak_ints();
  weak_int_bounds();
  plans();
  sources();
  builder();
  uk_context_destroy(ctx);
  return ut_finish("test_fuse_lang");
}
