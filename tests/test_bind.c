/* Placeholder binding and scalar conversion (SEMANTICS.md "Binding types"). */
#include <math.h>

#include "codegen/bind.h"
#include "codegen/scalar.h"
#include "testutil.h"

static uk_array arr(uk_dtype t, uint64_t data) {
  uk_array a;
  int64_t shape[1] = {3};
  uk_array_init(&a, data, t, 1, shape);
  return a;
}

typedef struct {
  uk_paramlist in, out;
} sig;

static sig parse(const char *in, const char *out) {
  sig s;
  memset(&s, 0, sizeof s);
  CHECK_OK(uk__params_parse(in, "in_params", &s.in));
  CHECK_OK(uk__params_parse(out, "out_params", &s.out));
  return s;
}

static void drop(sig *s) {
  uk__params_free(&s->in);
  uk__params_free(&s->out);
}

static void test_binding(void) {
  uk_binding b;
  sig s = parse("T x, T y", "T z");
  uk_array x = arr(UK_FLOAT32, 0x1000), y = arr(UK_FLOAT32, 0x2000), z = {0};
  uk_arg in[2] = {uk_arg_array(&x), uk_arg_array(&y)};
  CHECK_OK(uk__bind("squared_diff", &s.in, &s.out, in, 2, &z, 1, &b));
  CHECK(b.dtype[0] == UK_FLOAT32 && b.dtype[1] == UK_FLOAT32 && b.dtype[2] == UK_FLOAT32);
  CHECK(!b.outputs_given && b.is_array[0] && b.is_array[1]);

  /* a scalar never binds: T comes from x */
  in[1] = uk_arg_int(3);
  CHECK_OK(uk__bind("squared_diff", &s.in, &s.out, in, 2, &z, 1, &b));
  CHECK(b.dtype[1] == UK_FLOAT32 && !b.is_array[1]);

  /* mismatch names the parameter, both dtypes and the binder */
  uk_array yd = arr(UK_FLOAT64, 0x3000);
  in[1] = uk_arg_array(&yd);
  CHECK_STATUS(uk__bind("squared_diff", &s.in, &s.out, in, 2, &z, 1, &b), UK_ERR_TYPE);
  CHECK_STREQ(uk_last_error(),
              "Type is mismatched. squared_diff: input 'y' is float64 but T is float32 (bound by input 'x'); arrays are never cast");

  /* a given output binds first */
  uk_array zd = arr(UK_FLOAT64, 0x4000);
  in[1] = uk_arg_array(&y);
  CHECK_STATUS(uk__bind("squared_diff", &s.in, &s.out, in, 2, &zd, 1, &b), UK_ERR_TYPE);
  CHECK_STREQ(uk_last_error(),
              "Type is mismatched. squared_diff: input 'x' is float32 but T is float64 (bound by output 'z'); arrays are never cast");

  /* only scalars: T unbound */
  in[0] = uk_arg_float(1.5);
  in[1] = uk_arg_int(2);
  CHECK_STATUS(uk__bind("squared_diff", &s.in, &s.out, in, 2, &z, 1, &b), UK_ERR_TYPE);
  CHECK_STREQ(uk_last_error(),
              "squared_diff: placeholder 'T' is not bound: no array argument has type T (pass an output array "
              "or an array input of type T)");
  /* ... a given output binds it */
  CHECK_OK(uk__bind("squared_diff", &s.in, &s.out, in, 2, &zd, 1, &b));
  CHECK(b.dtype[0] == UK_FLOAT64 && b.outputs_given);

  /* counts */
  CHECK_STATUS(uk__bind("k", &s.in, &s.out, in, 1, &z, 1, &b), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "k: takes 2 inputs but 1 was given");
  CHECK_STATUS(uk__bind("k", &s.in, &s.out, in, 2, &z, 0, &b), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "k: has 1 output but 0 were given");
  drop(&s);

  /* fixed types must match exactly */
  s = parse("float32 x, raw T y", "T z, U w");
  uk_array xi = arr(UK_INT32, 0x1000), yi = arr(UK_INT64, 0x1000), z2[2] = {{0}, {0}};
  uk_arg in2[2] = {uk_arg_array(&xi), uk_arg_array(&yi)};
  CHECK_STATUS(uk__bind("k", &s.in, &s.out, in2, 2, z2, 2, &b), UK_ERR_TYPE);
  CHECK_STREQ(uk_last_error(), "Type is mismatched. k: input 'x' is declared float32 but the array is int32 (arrays are never cast)");
  uk_array xf = arr(UK_FLOAT32, 0x1000);
  in2[0] = uk_arg_array(&xf);
  CHECK_STATUS(uk__bind("k", &s.in, &s.out, in2, 2, z2, 2, &b), UK_ERR_TYPE);
  CHECK_CONTAINS(uk_last_error(), "placeholder 'U' is not bound");
  /* mixed given/allocated outputs */
  z2[0] = arr(UK_INT64, 0x5000);
  CHECK_STATUS(uk__bind("k", &s.in, &s.out, in2, 2, z2, 2, &b), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "k: outputs must be all given or all allocated: 'z' is given but 'w' is not (data == 0)");
  z2[1] = arr(UK_BOOL, 0x6000);
  CHECK_OK(uk__bind("k", &s.in, &s.out, in2, 2, z2, 2, &b));
  CHECK(b.dtype[1] == UK_INT64 && b.dtype[2] == UK_INT64 && b.dtype[3] == UK_BOOL);
  /* a scalar for a raw parameter is a scalar there (CuPy: `raw int32 n` takes an int) */
  in2[1] = uk_arg_int(1);
  CHECK_OK(uk__bind("k", &s.in, &s.out, in2, 2, z2, 2, &b));
  CHECK(!b.is_array[1] && b.dtype[1] == UK_INT64);
  drop(&s);
}

static void test_scalars(void) {
  unsigned char out[16];
  uk_arg a = uk_arg_int(300);
  CHECK_STATUS(uk__scalar_convert(&a, UK_UINT8, "v", out), UK_ERR_TYPE);
  CHECK_STREQ(uk_last_error(), "300 is out of range for uint8 parameter 'v' (pass a typed scalar to wrap like a C cast)");
  int64_t big = 300;
  a = uk_arg_typed(UK_INT64, &big);
  CHECK_OK(uk__scalar_convert(&a, UK_UINT8, "v", out));
  CHECK(out[0] == 44);
  a = uk_arg_int(-1);
  CHECK_STATUS(uk__scalar_convert(&a, UK_UINT32, "v", out), UK_ERR_TYPE);
  CHECK_OK(uk__scalar_convert(&a, UK_INT8, "v", out));
  CHECK((int8_t)out[0] == -1);
  a = uk_arg_float(2.7);
  int32_t i32;
  CHECK_OK(uk__scalar_convert(&a, UK_INT32, "v", &i32));
  CHECK(i32 == 2);
  a = uk_arg_float(-2.7);
  CHECK_OK(uk__scalar_convert(&a, UK_INT32, "v", &i32));
  CHECK(i32 == -2);
  a = uk_arg_float(NAN);
  CHECK_STATUS(uk__scalar_convert(&a, UK_INT32, "v", &i32), UK_ERR_TYPE);
  CHECK_STREQ(uk_last_error(), "cannot convert nan to int32 for 'v': not a finite number");
  a = uk_arg_float(3e9);
  CHECK_STATUS(uk__scalar_convert(&a, UK_INT32, "v", &i32), UK_ERR_TYPE);
  float f;
  a = uk_arg_int(3);
  CHECK_OK(uk__scalar_convert(&a, UK_FLOAT32, "v", &f));
  CHECK(f == 3.0f);
  a = uk_arg_float(0.1);
  CHECK_OK(uk__scalar_convert(&a, UK_FLOAT32, "v", &f));
  CHECK(f == 0.1f);
  /* bool, int and float into complex */
  float c[2];
  a = uk_arg_bool(1);
  CHECK_OK(uk__scalar_convert(&a, UK_COMPLEX64, "v", c));
  CHECK(c[0] == 1.0f && c[1] == 0.0f);
  a = uk_arg_complex(1.5, -2.5);
  double cd[2];
  CHECK_OK(uk__scalar_convert(&a, UK_COMPLEX128, "v", cd));
  CHECK(cd[0] == 1.5 && cd[1] == -2.5);
  /* complex into real: the real part */
  double d;
  CHECK_OK(uk__scalar_convert(&a, UK_FLOAT64, "v", &d));
  CHECK(d == 1.5);
  a = uk_arg_float(0.0);
  CHECK_OK(uk__scalar_convert(&a, UK_BOOL, "v", out));
  CHECK(out[0] == 0);
  a = uk_arg_int(-7);
  CHECK_OK(uk__scalar_convert(&a, UK_BOOL, "v", out));
  CHECK(out[0] == 1);
  /* typed float wraps through int64 like a C cast */
  double typed = 257.9;
  a = uk_arg_typed(UK_FLOAT64, &typed);
  CHECK_OK(uk__scalar_convert(&a, UK_UINT8, "v", out));
  CHECK(out[0] == 1);
  uint64_t umax = UINT64_MAX;
  a = uk_arg_typed(UK_UINT64, &umax);
  uint64_t u64;
  CHECK_OK(uk__scalar_convert(&a, UK_UINT64, "v", &u64));
  CHECK(u64 == UINT64_MAX);
  /* float16 / bfloat16 bits: nearest even, from double in one rounding */
  uint16_t h;
  a = uk_arg_float(1.0);
  CHECK_OK(uk__scalar_convert(&a, UK_FLOAT16, "v", &h));
  CHECK(h == 0x3C00);
  CHECK(uk__f64_to_f16_bits(65504.0) == 0x7BFF);
  CHECK(uk__f64_to_f16_bits(65520.0) == 0x7C00);     /* rounds to inf */
  CHECK(uk__f64_to_f16_bits(65519.99) == 0x7BFF);
  CHECK(uk__f64_to_f16_bits(5.960464477539063e-08) == 0x0001);
  CHECK(uk__f64_to_f16_bits(2.98e-08) == 0x0000);    /* below half the smallest subnormal */
  CHECK(uk__f64_to_f16_bits(2.99e-08) == 0x0001);
  CHECK(uk__f64_to_f16_bits(-2.0) == 0xC000);
  CHECK(uk__f64_to_f16_bits(1.0 + 1.0 / 2048) == 0x3C00);            /* tie to even */
  CHECK(uk__f64_to_f16_bits(1.0 + 3.0 / 2048) == 0x3C02);            /* tie to even (up) */
  CHECK(uk__f64_to_f16_bits(1.0 + 1.0 / 2048 + 1e-12) == 0x3C01);    /* no double rounding */
  CHECK(uk__f64_to_f16_bits(6.103515625e-05) == 0x0400);             /* smallest normal */
  CHECK(uk__f64_to_f16_bits(6.1e-05) == 0x03FF);
  CHECK((uk__f64_to_f16_bits(NAN) & 0x7C00) == 0x7C00 && (uk__f64_to_f16_bits(NAN) & 0x3FF));
  CHECK(uk__f64_to_bf16_bits(1.0) == 0x3F80);
  CHECK(uk__f64_to_bf16_bits(-3.0) == 0xC040);
  CHECK(uk__f64_to_bf16_bits(1.0 + 1.0 / 256) == 0x3F80);            /* tie to even */
  CHECK(uk__f64_to_bf16_bits(3.5e38) == 0x7F80);                     /* overflow to inf */
  for (uint32_t bits = 0; bits < 0x10000; bits++) {                   /* round trips */
    uint16_t hb = (uint16_t)bits;
    double v = uk__f16_bits_to_f64(hb);
    if (!isnan(v) && uk__f64_to_f16_bits(v) != hb) {
      CHECK(!"f16 round trip");
      break;
    }
    v = uk__bf16_bits_to_f64(hb);
    if (!isnan(v) && uk__f64_to_bf16_bits(v) != hb) {
      CHECK(!"bf16 round trip");
      break;
    }
  }
}

/* Untyped (Python) integers at each integer dtype's bounds: MAX and MIN
 * fit, MAX + 1 and MIN - 1 do not (UK_ERR_TYPE naming the value); untyped
 * floats truncate toward zero first, so MAX + 0.9 fits and MAX + 1.0 does
 * not. bool takes any integer (nonzero is true). */
static const struct int_bound {
  uk_dtype t;
  int64_t min, max;   /* representable as an untyped int (int64) */
  int min_1, max_1;   /* MIN - 1 / MAX + 1 exist as int64 (then they must fail) */
} int_bounds[] = {
    {UK_INT8, INT8_MIN, INT8_MAX, 1, 1},        {UK_INT16, INT16_MIN, INT16_MAX, 1, 1},
    {UK_INT32, INT32_MIN, INT32_MAX, 1, 1},     {UK_INT64, INT64_MIN, INT64_MAX, 0, 0},
    {UK_UINT8, 0, UINT8_MAX, 1, 1},             {UK_UINT16, 0, UINT16_MAX, 1, 1},
    {UK_UINT32, 0, UINT32_MAX, 1, 1},           {UK_UINT64, 0, INT64_MAX, 1, 0},
};

/* v as dtype t read back as int64 (t's bytes, sign- or zero-extended). */
static int64_t stored(uk_dtype t, const unsigned char *b) {
  int64_t v = 0;
  size_t n = uk_dtype_size(t);
  int is_signed = t == UK_INT8 || t == UK_INT16 || t == UK_INT32 || t == UK_INT64;
  for (size_t k = 0; k < n; k++) v |= (int64_t)((uint64_t)b[k] << (8 * k));
  if (is_signed && n < 8 && (b[n - 1] & 0x80)) v |= (int64_t)(~(uint64_t)0 << (8 * n));
  return v;
}

static void convert_fits(uk_dtype t, uk_arg a, int64_t want) {
  unsigned char out[16];
  memset(out, 0xA5, sizeof out);
  CHECK_OK(uk__scalar_convert(&a, t, "v", out));
  if (stored(t, out) != want) {
    fprintf(stderr, "%s: stored %lld, want %lld\n", uk_dtype_name(t), (long long)stored(t, out), (long long)want);
    CHECK(!"stored value");
  }
}

static void convert_fails(uk_dtype t, uk_arg a, const char *value) {
  unsigned char out[16];
  CHECK_STATUS(uk__scalar_convert(&a, t, "v", out), UK_ERR_TYPE);
  char want[128];
  snprintf(want, sizeof want, "%s is out of range for %s parameter 'v'", value, uk_dtype_name(t));
  if (!strncmp(value, "cannot", 6)) snprintf(want, sizeof want, "%s to %s for 'v'", value, uk_dtype_name(t));
  CHECK_CONTAINS(uk_last_error(), want);
}

static void test_int_bounds(void) {
  char v[64];
  for (size_t j = 0; j < sizeof int_bounds / sizeof int_bounds[0]; j++) {
    const struct int_bound *c = &int_bounds[j];
    convert_fits(c->t, uk_arg_int(c->max), c->max);
    convert_fits(c->t, uk_arg_int(c->min), c->min);
    if (c->max_1) {
      snprintf(v, sizeof v, "%lld", (long long)c->max + 1);
      convert_fails(c->t, uk_arg_int(c->max + 1), v);
    }
    if (c->min_1) {
      snprintf(v, sizeof v, "%lld", (long long)c->min - 1);
      convert_fails(c->t, uk_arg_int(c->min - 1), v);
    }
    if (c->max < ((int64_t)1 << 52)) { /* exact in a double: floats truncate, then must fit */
      convert_fits(c->t, uk_arg_float((double)c->max + 0.9), c->max);
      convert_fits(c->t, uk_arg_float((double)c->min - 0.9), c->min);
      snprintf(v, sizeof v, "%g", (double)c->max + 1);
      convert_fails(c->t, uk_arg_float((double)c->max + 1), v);
      snprintf(v, sizeof v, "%g", (double)c->min - 1);
      convert_fails(c->t, uk_arg_float((double)c->min - 1), v);
    }
    /* typed scalars wrap like a C cast: MAX + 1 of int64 becomes MIN */
    if (c->max_1 && c->t != UK_UINT64) {
      int64_t big = c->max + 1;
      convert_fits(c->t, uk_arg_typed(UK_INT64, &big), c->min == 0 ? 0 : c->min);
    }
  }
  /* bool takes any integer */
  convert_fits(UK_BOOL, uk_arg_int(INT64_MIN), 1);
  convert_fits(UK_BOOL, uk_arg_int(256), 1);
  convert_fits(UK_BOOL, uk_arg_int(0), 0);
}

static void test_textures(void) {
  uk_binding b;
  sig s = parse("U t, T x", "T z");
  uk_array x = arr(UK_FLOAT32, 0x1000), z = {0};
  uk_arg in[2] = {uk_arg_texture(0xabc), uk_arg_array(&x)};
  CHECK_OK(uk__bind("k", &s.in, &s.out, in, 2, &z, 1, &b));
  CHECK(b.is_texture[0] && !b.is_array[0] && b.dtype[0] == UK_UINT64 && b.dtype[2] == UK_FLOAT32);
  drop(&s);
  /* its placeholder also types another parameter */
  s = parse("T t, T x", "T z");
  CHECK_STATUS(uk__bind("k", &s.in, &s.out, in, 2, &z, 1, &b), UK_ERR_TYPE);
  CHECK_STREQ(uk_last_error(), "k: input 't' gets a texture object, but its placeholder T is also the type of input "
                               "'x': a texture binds no type (declare it with a placeholder of its own, e.g. 'U t')");
  drop(&s);
  /* a fixed dtype or raw parameter */
  s = parse("float32 t, T x", "T z");
  CHECK_STATUS(uk__bind("k", &s.in, &s.out, in, 2, &z, 1, &b), UK_ERR_TYPE);
  CHECK_STREQ(uk_last_error(), "k: input 't' gets a texture object, but it is declared 'float32': declare it with a "
                               "placeholder of its own, e.g. 'U t'");
  drop(&s);
  s = parse("raw U t, T x", "T z");
  CHECK_STATUS(uk__bind("k", &s.in, &s.out, in, 2, &z, 1, &b), UK_ERR_TYPE);
  CHECK_CONTAINS(uk_last_error(), "it is declared 'raw U'");
  drop(&s);
}

int main(void) {
  test_binding();
  test_textures();
  test_scalars();
  test_int_bounds();
  return ut_finish("test_bind");
}
