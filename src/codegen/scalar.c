/* Host-side scalar conversion to a parameter's dtype, with CuPy/NumPy rules (scalar.h). */
#include "codegen/scalar.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "codegen/dtype.h"

/* Rounds |x| (finite, or not) to a binary format with `ebits` exponent and
 * `mbits` stored mantissa bits, to nearest even, straight from double. */
static uint16_t round_small(double x, int ebits, int mbits) {
  uint16_t sign = (uint16_t)(signbit(x) ? 1u << (ebits + mbits) : 0u);
  uint16_t inf = (uint16_t)(((1u << ebits) - 1) << mbits);
  if (isnan(x)) return (uint16_t)(sign | inf | (1u << (mbits - 1)));
  double a = fabs(x);
  if (a == 0) return sign;
  if (isinf(a)) return (uint16_t)(sign | inf);
  int bias = (1 << (ebits - 1)) - 1, e;
  frexp(a, &e);
  int exp = e - 1; /* a = 1.f * 2^exp */
  if (exp < 1 - bias) { /* subnormal: count quanta of 2^(1-bias-mbits) */
    double q = nearbyint(ldexp(a, bias - 1 + mbits));
    return (uint16_t)(sign | (uint16_t)q); /* q == 2^mbits encodes the smallest normal */
  }
  double q = nearbyint(ldexp(a, mbits - exp));
  if (q >= ldexp(1.0, mbits + 1)) {
    q /= 2;
    exp++;
  }
  if (exp > bias) return (uint16_t)(sign | inf);
  return (uint16_t)(sign | (uint16_t)((exp + bias) << mbits) | (uint16_t)((uint32_t)q - (1u << mbits)));
}

static double widen_small(uint16_t h, int ebits, int mbits) {
  int bias = (1 << (ebits - 1)) - 1;
  uint32_t m = h & ((1u << mbits) - 1), ex = (h >> mbits) & ((1u << ebits) - 1);
  double sign = (h >> (ebits + mbits)) & 1 ? -1.0 : 1.0;
  if (ex == (1u << ebits) - 1) return m ? NAN : sign * INFINITY;
  if (ex == 0) return sign * ldexp((double)m, 1 - bias - mbits);
  return sign * ldexp((double)(m | (1u << mbits)), (int)ex - bias - mbits);
}

uint16_t uk__f64_to_f16_bits(double x) { return round_small(x, 5, 10); }
uint16_t uk__f64_to_bf16_bits(double x) { return round_small(x, 8, 7); }
double uk__f16_bits_to_f64(uint16_t h) { return widen_small(h, 5, 10); }
double uk__bf16_bits_to_f64(uint16_t h) { return widen_small(h, 8, 7); }

/* The scalar as (kind, integer, real, imaginary). */
typedef struct {
  int is_int; /* exact integer in i (else a real/complex in re/im) */
  int is_unsigned_big; /* a uint64 above INT64_MAX, held in u */
  int64_t i;
  uint64_t u;
  double re, im;
} value;

static void read_typed(uk_dtype t, const unsigned char *p, value *v) {
  memset(v, 0, sizeof *v);
  v->is_int = 1;
  switch (t) {
    case UK_BOOL: v->i = p[0] != 0; break;
    case UK_INT8: { int8_t x; memcpy(&x, p, 1); v->i = x; break; }
    case UK_INT16: { int16_t x; memcpy(&x, p, 2); v->i = x; break; }
    case UK_INT32: { int32_t x; memcpy(&x, p, 4); v->i = x; break; }
    case UK_INT64: { int64_t x; memcpy(&x, p, 8); v->i = x; break; }
    case UK_UINT8: v->i = p[0]; break;
    case UK_UINT16: { uint16_t x; memcpy(&x, p, 2); v->i = x; break; }
    case UK_UINT32: { uint32_t x; memcpy(&x, p, 4); v->i = x; break; }
    case UK_UINT64: {
      uint64_t x;
      memcpy(&x, p, 8);
      v->u = x;
      if (x > INT64_MAX) v->is_unsigned_big = 1;
      else v->i = (int64_t)x;
      break;
    }
    default: {
      v->is_int = 0;
      uint16_t h;
      float f;
      double d;
      switch (t) {
        case UK_FLOAT16: memcpy(&h, p, 2); v->re = uk__f16_bits_to_f64(h); break;
        case UK_BFLOAT16: memcpy(&h, p, 2); v->re = uk__bf16_bits_to_f64(h); break;
        case UK_FLOAT32: memcpy(&f, p, 4); v->re = f; break;
        case UK_FLOAT64: memcpy(&d, p, 8); v->re = d; break;
        case UK_COMPLEX64: memcpy(&f, p, 4); v->re = f; memcpy(&f, p + 4, 4); v->im = f; break;
        default: memcpy(&d, p, 8); v->re = d; memcpy(&d, p + 8, 8); v->im = d; break;
      }
    }
  }
}

static void store_int(uk_dtype t, uint64_t bits, void *out) {
  size_t n = uk_dtype_size(t);
  unsigned char b[8];
  for (size_t k = 0; k < 8; k++) b[k] = (unsigned char)(bits >> (8 * k)); /* little-endian */
  memcpy(out, b, n);
}

static int int_fits(uk_dtype t, const value *v) {
  if (v->is_unsigned_big) return t == UK_UINT64;
  int64_t x = v->i;
  switch (t) {
    case UK_INT8: return x >= INT8_MIN && x <= INT8_MAX;
    case UK_INT16: return x >= INT16_MIN && x <= INT16_MAX;
    case UK_INT32: return x >= INT32_MIN && x <= INT32_MAX;
    case UK_INT64: return 1;
    case UK_UINT8: return x >= 0 && x <= UINT8_MAX;
    case UK_UINT16: return x >= 0 && x <= UINT16_MAX;
    case UK_UINT32: return x >= 0 && x <= (int64_t)UINT32_MAX;
    case UK_UINT64: return x >= 0;
    default: return 1;
  }
}

static const char *describe(const uk_arg *a, char *buf, size_t n) {
  switch (a->kind) {
    case UK_ARG_INT: snprintf(buf, n, "%lld", (long long)a->v.i); break;
    case UK_ARG_FLOAT: snprintf(buf, n, "%g", a->v.f); break;
    case UK_ARG_COMPLEX: snprintf(buf, n, "(%g%+gj)", a->v.c[0], a->v.c[1]); break;
    case UK_ARG_BOOL: snprintf(buf, n, "%s", a->v.b ? "true" : "false"); break;
    default: snprintf(buf, n, "a %s scalar", uk_dtype_name(a->dtype) ? uk_dtype_name(a->dtype) : "?"); break;
  }
  return buf;
}

/* A floating dtype's bytes for re + im i (im dropped for real dtypes). */
static void store_float(uk_dtype t, double re, double im, void *out) {
  switch (t) {
    case UK_FLOAT16: { uint16_t h = uk__f64_to_f16_bits(re); memcpy(out, &h, 2); break; }
    case UK_BFLOAT16: { uint16_t h = uk__f64_to_bf16_bits(re); memcpy(out, &h, 2); break; }
    case UK_FLOAT32: { float f = (float)re; memcpy(out, &f, 4); break; }
    case UK_FLOAT64: memcpy(out, &re, 8); break;
    case UK_COMPLEX64: {
      float c[2] = {(float)re, (float)im};
      memcpy(out, c, 8);
      break;
    }
    default: {
      double c[2] = {re, im};
      memcpy(out, c, 16);
      break;
    }
  }
}

uk_status uk_dtype_encode(uk_dtype t, double v, void *out) {
  uk__error_clear();
  const uk_dtype_info *ti = (unsigned)t < UK_DTYPE_COUNT_ ? uk__dtype_info(t) : NULL;
  if (!out || !ti || (ti->kind != UK_KIND_FLOAT && ti->kind != UK_KIND_COMPLEX))
    return uk__errorf(UK_ERR_INVALID, "uk_dtype_encode: %s", !out ? "out is NULL" : "t is not a floating dtype");
  store_float(t, v, 0.0, out);
  return UK_OK;
}

uk_status uk__scalar_convert(const uk_arg *a, uk_dtype t, const char *param, void *out) {
  const uk_dtype_info *ti = uk__dtype_info(t);
  if (!ti) return uk__errorf(UK_ERR_INVALID, "parameter '%s' has an invalid dtype", param);
  value v;
  memset(&v, 0, sizeof v);
  int typed = a->kind == UK_ARG_TYPED;
  switch (a->kind) {
    case UK_ARG_INT: v.is_int = 1; v.i = a->v.i; break;
    case UK_ARG_BOOL: v.is_int = 1; v.i = a->v.b != 0; break;
    case UK_ARG_FLOAT: v.re = a->v.f; break;
    case UK_ARG_COMPLEX: v.re = a->v.c[0]; v.im = a->v.c[1]; break;
    case UK_ARG_TYPED:
      if (!uk__dtype_info(a->dtype)) return uk__errorf(UK_ERR_INVALID, "scalar for '%s' has an invalid dtype", param);
      read_typed(a->dtype, a->v.bytes, &v);
      break;
    default: return uk__errorf(UK_ERR_INVALID, "argument for '%s' is not a scalar", param);
  }
  char what[64];
  if (ti->kind == UK_KIND_BOOL) {
    unsigned char b = v.is_int ? (v.is_unsigned_big || v.i != 0) : (v.re != 0 || v.im != 0);
    memcpy(out, &b, 1);
    return UK_OK;
  }
  if (ti->kind == UK_KIND_INT || ti->kind == UK_KIND_UINT) {
    if (!v.is_int) {
      double r = v.re; /* complex → real part, as NumPy does */
      if (!isfinite(r))
        return uk__errorf(UK_ERR_TYPE, "cannot convert %s to %s for '%s': not a finite number",
                          describe(a, what, sizeof what), ti->name, param);
      r = trunc(r);
      if (r < -9223372036854775808.0 || r >= 9223372036854775808.0)
        return uk__errorf(UK_ERR_TYPE, "cannot convert %s to %s for '%s': out of range",
                          describe(a, what, sizeof what), ti->name, param);
      v.is_int = 1;
      v.i = (int64_t)r;
    }
    if (!typed && !int_fits(t, &v))
      return uk__errorf(UK_ERR_TYPE, "%s is out of range for %s parameter '%s' (pass a typed scalar to wrap like a C cast)",
                        describe(a, what, sizeof what), ti->name, param);
    store_int(t, v.is_unsigned_big ? v.u : (uint64_t)v.i, out);
    return UK_OK;
  }
  double re = v.is_int ? (v.is_unsigned_big ? (double)v.u : (double)v.i) : v.re;
  double im = v.is_int ? 0.0 : v.im;
  store_float(t, re, im, out);
  return UK_OK;
}
