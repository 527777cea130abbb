// ukern/fusion.cuh — device helpers for kernels generated from fusion
// programs (uk_fusion_create): NumPy's meaning of floor division, modulo,
// integer powers, NaN-propagating maximum, sign, ..., overloaded for the C
// types the generator computes in (bool, the integer types, float, double,
// ukern::complex). float16/bfloat16 values are computed in float by the
// generator and rounded per operation, as NumPy does.
#pragma once

#include <ukern/complex.cuh>
#include <ukern/half.cuh>

#define _UK_FD static __device__ __forceinline__

template <class T> struct _uk_lim;
#define _UK_LIM(T, LO, HI) \
  template <> struct _uk_lim<T> { _UK_FD T lowest() { return LO; } _UK_FD T highest() { return HI; } };
_UK_LIM(bool, false, true)
_UK_LIM(signed char, -128, 127)
_UK_LIM(short, -32768, 32767)
_UK_LIM(int, (-2147483647 - 1), 2147483647)
_UK_LIM(long long, (-9223372036854775807LL - 1), 9223372036854775807LL)
_UK_LIM(unsigned char, 0, 255)
_UK_LIM(unsigned short, 0, 65535)
_UK_LIM(unsigned int, 0u, 4294967295u)
_UK_LIM(unsigned long long, 0ull, 18446744073709551615ull)
_UK_LIM(float, -__int_as_float(0x7f800000), __int_as_float(0x7f800000))
_UK_LIM(double, -__longlong_as_double(0x7ff0000000000000LL), __longlong_as_double(0x7ff0000000000000LL))
#undef _UK_LIM
// complex max/min start from (lowest, lowest) / (highest, highest): the ends of
// NumPy 2's lexicographic order
template <class T> struct _uk_lim<ukern::complex<T> > {
  _UK_FD ukern::complex<T> lowest() { return ukern::complex<T>(_uk_lim<T>::lowest(), _uk_lim<T>::lowest()); }
  _UK_FD ukern::complex<T> highest() { return ukern::complex<T>(_uk_lim<T>::highest(), _uk_lim<T>::highest()); }
};

// --- float functions: float and double overloads, complex where NumPy has them
#define _UK_F1(NAME, F, D)                                         \
  _UK_FD float NAME(float x) { return ::F(x); }                    \
  _UK_FD double NAME(double x) { return ::D(x); }
_UK_F1(_uk_exp, expf, exp)
_UK_F1(_uk_exp2, exp2f, exp2)
_UK_F1(_uk_expm1, expm1f, expm1)
_UK_F1(_uk_log, logf, log)
_UK_F1(_uk_log2, log2f, log2)
_UK_F1(_uk_log10, log10f, log10)
_UK_F1(_uk_log1p, log1pf, log1p)
_UK_F1(_uk_sqrt, sqrtf, sqrt)
_UK_F1(_uk_cbrt, cbrtf, cbrt)
_UK_F1(_uk_sin, sinf, sin)
_UK_F1(_uk_cos, cosf, cos)
_UK_F1(_uk_tan, tanf, tan)
_UK_F1(_uk_arcsin, asinf, asin)
_UK_F1(_uk_arccos, acosf, acos)
_UK_F1(_uk_arctan, atanf, atan)
_UK_F1(_uk_sinh, sinhf, sinh)
_UK_F1(_uk_cosh, coshf, cosh)
_UK_F1(_uk_tanh, tanhf, tanh)
_UK_F1(_uk_arcsinh, asinhf, asinh)
_UK_F1(_uk_arccosh, acoshf, acosh)
_UK_F1(_uk_arctanh, atanhf, atanh)
_UK_F1(_uk_floor, floorf, floor)
_UK_F1(_uk_ceil, ceilf, ceil)
_UK_F1(_uk_trunc, truncf, trunc)
_UK_F1(_uk_rint, rintf, rint)
#undef _UK_F1
#define _UK_C1(NAME, FN) \
  template <class T> _UK_FD ukern::complex<T> NAME(const ukern::complex<T> &z) { return ukern::FN(z); }
_UK_C1(_uk_exp, exp)
_UK_C1(_uk_log, log)
_UK_C1(_uk_log10, log10)
_UK_C1(_uk_sqrt, sqrt)
_UK_C1(_uk_sin, sin)
_UK_C1(_uk_cos, cos)
_UK_C1(_uk_tan, tan)
_UK_C1(_uk_sinh, sinh)
_UK_C1(_uk_cosh, cosh)
_UK_C1(_uk_tanh, tanh)
_UK_C1(_uk_arcsin, asin)
_UK_C1(_uk_arccos, acos)
_UK_C1(_uk_arctan, atan)
_UK_C1(_uk_arcsinh, asinh)
_UK_C1(_uk_arccosh, acosh)
_UK_C1(_uk_arctanh, atanh)
#undef _UK_C1
// floor/ceil/trunc keep integer dtypes (NumPy 2)
template <class T> _UK_FD T _uk_floor(T x) { return x; }
template <class T> _UK_FD T _uk_ceil(T x) { return x; }
template <class T> _UK_FD T _uk_trunc(T x) { return x; }

#define _UK_F2(NAME, F, D)                                                \
  _UK_FD float NAME(float x, float y) { return ::F(x, y); }              \
  _UK_FD double NAME(double x, double y) { return ::D(x, y); }
_UK_F2(_uk_arctan2, atan2f, atan2)
_UK_F2(_uk_hypot, hypotf, hypot)
_UK_F2(_uk_copysign, copysignf, copysign)
#undef _UK_F2
// nextafter as C99 (and NumPy's float32/float64 loops): y when x == y (0.0 toward -0.0
// is -0.0), NaN for NaN, else x's bits stepped toward y
_UK_FD float _uk_nextafter(float x, float y) {
  if (x != x || y != y) return x + y;
  if (x == y) return y;
  unsigned b = __float_as_uint(x);
  if ((b & 0x7fffffffu) == 0u) b = (y < 0.0f ? 0x80000000u : 0u) | 1u;
  else if ((x < y) == (x > 0.0f)) b++;
  else b--;
  return __uint_as_float(b);
}
_UK_FD double _uk_nextafter(double x, double y) {
  if (x != x || y != y) return x + y;
  if (x == y) return y;
  unsigned long long b = (unsigned long long)__double_as_longlong(x);
  if ((b & 0x7fffffffffffffffull) == 0ull) b = (y < 0.0 ? 0x8000000000000000ull : 0ull) | 1ull;
  else if ((x < y) == (x > 0.0)) b++;
  else b--;
  return __longlong_as_double((long long)b);
}
// nextafter of float16/bfloat16 values (held in float, exactly): one step of
// the 16-bit format itself, as NumPy's (the generator calls it for those dtypes)
template <class H> _UK_FD float _uk_nextafter16(float x, float y) {
  if (x != x || y != y) return x + y; // NaN
  if (x == y) return y; // as C99 and NumPy 2.5's float16 loop (2.4's kept x: 0.0 toward -0.0 was 0.0)
  unsigned short b = H(x).bits;
  if ((b & 0x7fffu) == 0) b = (unsigned short)((y < 0.0f ? 0x8000u : 0u) | 1u); // the smallest subnormal toward y
  else if ((x < y) == (x > 0.0f)) b++;                                        // away from zero
  else b--;
  return (float)H::from_bits(b);
}
// i0: the modified Bessel function of the first kind, order 0 (numpy.i0)
_UK_FD float _uk_i0(float x) { return ::cyl_bessel_i0f(x); }
_UK_FD double _uk_i0(double x) { return ::cyl_bessel_i0(x); }

// exp2, log2, expm1 and log1p of complex values as NumPy computes them
// (nc_exp2, nc_log2, nc_expm1, nc_log1p in its umath funcs.inc.src)
template <class T> _UK_FD ukern::complex<T> _uk_exp2(const ukern::complex<T> &z) {
  ukern::complex<T> a = z;
  a *= T(0.693147180559945309417232121458176568); // ln 2
  return ukern::exp(a);
}
template <class T> _UK_FD ukern::complex<T> _uk_log2(const ukern::complex<T> &z) {
  ukern::complex<T> r = ukern::log(z);
  r *= T(1.442695040888963407359924681001892137); // log2(e)
  return r;
}
template <class T> _UK_FD ukern::complex<T> _uk_expm1(const ukern::complex<T> &z) {
  const T a = _uk_sin(z.imag() / T(2));
  return ukern::complex<T>(_uk_expm1(z.real()) * _uk_cos(z.imag()) - T(2) * a * a, _uk_exp(z.real()) * _uk_sin(z.imag()));
}
template <class T> _UK_FD ukern::complex<T> _uk_log1p(const ukern::complex<T> &z) {
  const T re = z.real() + T(1);
  return ukern::complex<T>(_uk_log(_uk_hypot(re, z.imag())), _uk_arctan2(z.imag(), re));
}

// --- integer and float arithmetic with NumPy's meaning
template <class T> struct _uk_is_signed { enum { v = T(-1) < T(0) }; };

template <class T> _UK_FD T _uk_floordiv(T a, T b) {
  if (b == 0) return 0;
  if (_uk_is_signed<T>::v && b == T(-1)) return T(0) - a; // no INT_MIN / -1 trap; wraps like NumPy
  T q = a / b;
  if (_uk_is_signed<T>::v && (a % b != 0) && ((a < 0) != (b < 0))) q = q - 1;
  return q;
}
template <class T> _UK_FD T _uk_fmod(T a, T b) {
  if (b == 0) return 0;
  if (_uk_is_signed<T>::v && b == T(-1)) return 0;
  return a % b;
}
template <class T> _UK_FD T _uk_mod(T a, T b) {
  T r = _uk_fmod(a, b);
  if (_uk_is_signed<T>::v && r != 0 && ((r < 0) != (b < 0))) r = r + b;
  return r;
}
// floats: npy_divmod
#define _UK_FDIVMOD(T, FMOD, FLOOR, CPS)                                      \
  _UK_FD T _uk_mod(T a, T b) {                                                \
    if (b == 0) return FMOD(a, b);                                            \
    T m = FMOD(a, b);                                                         \
    if (m != 0) {                                                             \
      if ((b < 0) != (m < 0)) m += b;                                         \
    } else                                                                    \
      m = CPS(T(0), b);                                                       \
    return m;                                                                 \
  }                                                                           \
  _UK_FD T _uk_floordiv(T a, T b) {                                           \
    if (b == 0) return a / b;                                                 \
    T m = FMOD(a, b);                                                         \
    T d = (a - m) / b;                                                        \
    if (m != 0 && ((b < 0) != (m < 0))) d -= T(1);                            \
    T f;                                                                      \
    if (d != 0) {                                                             \
      f = FLOOR(d);                                                           \
      if (d - f > T(0.5)) f += T(1);                                          \
    } else                                                                    \
      f = CPS(T(0), a / b);                                                   \
    return f;                                                                 \
  }                                                                           \
  _UK_FD T _uk_fmod(T a, T b) { return FMOD(a, b); }
_UK_FDIVMOD(float, ::fmodf, ::floorf, ::copysignf)
_UK_FDIVMOD(double, ::fmod, ::floor, ::copysign)
#undef _UK_FDIVMOD

template <class T> _UK_FD T _uk_pow(T a, T b) {
  if (_uk_is_signed<T>::v && b < 0) return (a == 1) ? 1 : (a == T(-1) ? ((b & 1) ? T(-1) : T(1)) : 0);
  T r = 1;
  while (b != 0) {
    if (b & 1) r = r * a;
    a = a * a;
    b = b >> 1;
  }
  return r;
}
_UK_FD bool _uk_pow(bool a, bool b) { return a || !b; }
_UK_FD float _uk_pow(float a, float b) { return ::powf(a, b); }
_UK_FD double _uk_pow(double a, double b) { return ::pow(a, b); }
template <class T> _UK_FD ukern::complex<T> _uk_pow(const ukern::complex<T> &a, const ukern::complex<T> &b) {
  return ukern::pow(a, b);
}

template <class T> _UK_FD bool _uk_isnan(T) { return false; }
template <class T> _UK_FD bool _uk_isinf(T) { return false; }
template <class T> _UK_FD bool _uk_isfinite(T) { return true; }
_UK_FD bool _uk_isnan(float x) { return ::isnan(x); }
_UK_FD bool _uk_isnan(double x) { return ::isnan(x); }
_UK_FD bool _uk_isinf(float x) { return ::isinf(x); }
_UK_FD bool _uk_isinf(double x) { return ::isinf(x); }
_UK_FD bool _uk_isfinite(float x) { return ::isfinite(x); }
_UK_FD bool _uk_isfinite(double x) { return ::isfinite(x); }
template <class T> _UK_FD bool _uk_isnan(const ukern::complex<T> &z) {
  return _uk_isnan(z.real()) || _uk_isnan(z.imag());
}
template <class T> _UK_FD bool _uk_isinf(const ukern::complex<T> &z) {
  return _uk_isinf(z.real()) || _uk_isinf(z.imag());
}
template <class T> _UK_FD bool _uk_isfinite(const ukern::complex<T> &z) {
  return _uk_isfinite(z.real()) && _uk_isfinite(z.imag());
}

// maximum/minimum propagate NaN; fmax/fmin ignore it
/* NumPy 2 orders complex values lexicographically (real part, then
 * imaginary); a NaN anywhere compares false, as NumPy's CLT/CLE. */
namespace ukern {
template <class T> _UK_FD bool operator<(const complex<T> &a, const complex<T> &b) {
  return (a.real() < b.real() && !_uk_isnan(a.imag()) && !_uk_isnan(b.imag())) ||
         (a.real() == b.real() && a.imag() < b.imag());
}
template <class T> _UK_FD bool operator<=(const complex<T> &a, const complex<T> &b) {
  return (a.real() < b.real() && !_uk_isnan(a.imag()) && !_uk_isnan(b.imag())) ||
         (a.real() == b.real() && a.imag() <= b.imag());
}
template <class T> _UK_FD bool operator>(const complex<T> &a, const complex<T> &b) { return b < a; }
template <class T> _UK_FD bool operator>=(const complex<T> &a, const complex<T> &b) { return b <= a; }
}  // namespace ukern
template <class T> _UK_FD T _uk_maximum(T a, T b) { return (_uk_isnan(a) || a >= b) ? a : b; }
template <class T> _UK_FD T _uk_minimum(T a, T b) { return (_uk_isnan(a) || a <= b) ? a : b; }
template <class T> _UK_FD T _uk_fmax(T a, T b) { return (_uk_isnan(b) || a >= b) ? a : b; }
template <class T> _UK_FD T _uk_fmin(T a, T b) { return (_uk_isnan(b) || a <= b) ? a : b; }
// A max/min reduction's combine: any operand order is the plan's, so a NaN
// payload and which of -0/+0 comes out are free; float32 takes one
// instruction (sm_80's max.NaN) in place of a compare, a NaN test and a select.
template <class T> _UK_FD T _uk_max_comb(T a, T b) { return _uk_maximum(a, b); }
template <class T> _UK_FD T _uk_min_comb(T a, T b) { return _uk_minimum(a, b); }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
_UK_FD float _uk_max_comb(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
_UK_FD float _uk_min_comb(float a, float b) {
  float r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
#endif
template <class T> _UK_FD T _uk_clip(T x, T lo, T hi) { return _uk_minimum(_uk_maximum(x, lo), hi); }

template <class T> _UK_FD T _uk_abs(T x) { return _uk_is_signed<T>::v && x < 0 ? T(0) - x : x; }
_UK_FD float _uk_abs(float x) { return ::fabsf(x); }
_UK_FD double _uk_abs(double x) { return ::fabs(x); }
template <class T> _UK_FD T _uk_abs(const ukern::complex<T> &z) { return ukern::abs(z); }
template <class T> _UK_FD T _uk_sign(T x) {
  if (_uk_isnan(x)) return x;
  return x > 0 ? T(1) : (x < 0 ? T(-1) : T(0));
}
template <class T> _UK_FD T _uk_square(T x) { return x * x; }
// bitwise_count: the set bits of |x| in x's own width (NumPy: int8 -128 has one)
template <class T> _UK_FD unsigned char _uk_bitwise_count(T x) {
  unsigned long long u = (unsigned long long)x;
  if (_uk_is_signed<T>::v && x < T(0)) u = 0ull - u;
  if (sizeof(T) < 8) u &= (1ull << (8 * sizeof(T))) - 1ull;
  return (unsigned char)__popcll(u);
}
// gcd and lcm of the magnitudes (NumPy's npy_gcd/npy_lcm: lcm(0, 0) is 0)
template <class T> _UK_FD T _uk_gcd(T a, T b) {
  a = _uk_abs(a);
  b = _uk_abs(b);
  while (b != T(0)) {
    T t = (T)(a % b);
    a = b;
    b = t;
  }
  return a;
}
template <class T> _UK_FD T _uk_lcm(T a, T b) {
  const T g = _uk_gcd(a, b);
  return g == T(0) ? T(0) : (T)(_uk_abs(a) / g * _uk_abs(b));
}
template <class T> _UK_FD T _uk_copy(T x) { return x; }
/* NumPy's shifts: a count at or past the width gives 0 (or -1 shifting a
 * negative right), where C leaves it undefined. */
template <class T, class U> _UK_FD T _uk_lshift(T x, U n) {
  return (n < 0 || (unsigned long long)n >= 8 * sizeof(T)) ? T(0) : T(x << n);
}
template <class T, class U> _UK_FD T _uk_rshift(T x, U n) {
  return (n < 0 || (unsigned long long)n >= 8 * sizeof(T)) ? T(x < 0 ? -1 : 0) : T(x >> n);
}
template <class T> _UK_FD T _uk_reciprocal(T x) { return T(1) / x; }
_UK_FD bool _uk_reciprocal(bool x) { return x; }
// NumPy's 1/z for complex: Smith's formula without the numerator's zero imaginary part
// (so 1/(-0.5i) is +0 + 2i)
template <class T> _UK_FD ukern::complex<T> _uk_reciprocal(const ukern::complex<T> &z) {
  T a = z.real(), b = z.imag();
  if (_uk_abs(b) <= _uk_abs(a)) {
    T r = b / a, d = a + b * r;
    return ukern::complex<T>(T(1) / d, -r / d);
  }
  T r = a / b, d = a * r + b;
  return ukern::complex<T>(r / d, T(-1) / d);
}
template <class T> _UK_FD T _uk_real(T x) { return x; }
template <class T> _UK_FD T _uk_imag(T) { return T(0); }
template <class T> _UK_FD T _uk_conj(T x) { return x; }
template <class T> _UK_FD T _uk_real(const ukern::complex<T> &z) { return z.real(); }
template <class T> _UK_FD T _uk_imag(const ukern::complex<T> &z) { return z.imag(); }
template <class T> _UK_FD ukern::complex<T> _uk_conj(const ukern::complex<T> &z) { return ukern::conj(z); }
// np.angle: arctan2(imag, real); a real x is arctan2(0, x) (pi for x < 0 and -0.0)
_UK_FD float _uk_angle(float x) { return ::atan2f(0.0f, x); }
_UK_FD double _uk_angle(double x) { return ::atan2(0.0, x); }
template <class T> _UK_FD T _uk_angle(const ukern::complex<T> &z) { return ukern::arg(z); }
template <class T> _UK_FD bool _uk_nz(T x) { return x != T(0); }
template <class T> _UK_FD bool _uk_nz(const ukern::complex<T> &z) { return z.real() != T(0) || z.imag() != T(0); }

// --- reduction accumulators
// argmax/argmin: the first index of the extreme value; NaN counts as the extreme.
// The index is 32-bit where the reduction's plan indexes in 32 bits (the
// emitter defines _UK_RED_IDX32: every reduced index is below INT32_MAX). A
// float32 pair is then 8 bytes, not 16: fewer selects an element, shuffles
// and partial words (H200 fused argmax of 1-64 MiB float32 0.1-0.7 us
// faster, docs/PERF.md "Session 32"). _UK_ARG_NONE, the identity's index,
// is above every index.
#ifdef _UK_RED_IDX32
typedef int _uk_argidx;
#define _UK_ARG_NONE 2147483647
#else
typedef long long _uk_argidx;
#define _UK_ARG_NONE 9223372036854775807LL
#endif
template <class T> struct _uk_argpair {
  T v;
  _uk_argidx i;
};
template <class T> _UK_FD _uk_argpair<T> _uk_argpair_make(T v, long long i) {
  _uk_argpair<T> r;
  r.v = v;
  r.i = (_uk_argidx)i;
  return r;
}
// The combine of any two pairs (threads', blocks'): b wins if it is the
// extreme (a NaN, or not NaN against a value it passes), or ties a (both
// NaN, or equal) with a lower index. Bitwise, not short-circuit: predicates
// and selects. The branchy form diverged at every shuffle step: most of a
// one-block argmax's time (16384 float32: 6.2 us against 4.5 for a sum),
// and 3-7 registers more (35 for a full argmax, 55 for a column one).
template <class T> _UK_FD _uk_argpair<T> _uk_argmax_comb(const _uk_argpair<T> &a, const _uk_argpair<T> &b) {
  const bool na = _uk_isnan(a.v), nb = _uk_isnan(b.v);
  const bool wins = (!na) & (nb | (b.v > a.v)), tie = na ? nb : ((!nb) & (a.v == b.v));
  return (wins | (tie & (b.i < a.i))) ? b : a;
}
template <class T> _UK_FD _uk_argpair<T> _uk_argmin_comb(const _uk_argpair<T> &a, const _uk_argpair<T> &b) {
  const bool na = _uk_isnan(a.v), nb = _uk_isnan(b.v);
  const bool wins = (!na) & (nb | (b.v < a.v)), tie = na ? nb : ((!nb) & (a.v == b.v));
  return (wins | (tie & (b.i < a.i))) ? b : a;
}

// The in-order steps of one thread's running pair (reduction.cuh's red_acc:
// b's index is above a's, so a tie keeps a with no index comparison). The
// identity (index _UK_ARG_NONE) gives way to any element, a tie included. The
// first NaN stays; a NaN b replaces any other a. ~8 instructions an element
// against ~36 for the full combine (float32, sm_90).
template <class T> _UK_FD _uk_argpair<T> _uk_argmax_step(const _uk_argpair<T> &a, const _uk_argpair<T> &b) {
  // bitwise, not short-circuit: predicates and selects, no branches
  const bool take = ((!_uk_isnan(a.v)) & ((b.v > a.v) | _uk_isnan(b.v))) | (a.i == _UK_ARG_NONE);
  return take ? b : a;
}
template <class T> _UK_FD _uk_argpair<T> _uk_argmin_step(const _uk_argpair<T> &a, const _uk_argpair<T> &b) {
  // bitwise, not short-circuit: predicates and selects, no branches
  const bool take = ((!_uk_isnan(a.v)) & ((b.v < a.v) | _uk_isnan(b.v))) | (a.i == _UK_ARG_NONE);
  return take ? b : a;
}

// var/std: Welford's running (count, mean, sum of squared deviations),
// merged pairwise with Chan's formula, in one pass.
template <class T> struct _uk_welford {
  long long n;
  T mean, m2;
};
template <class T> _UK_FD _uk_welford<T> _uk_welford_make(long long n, T mean, T m2) {
  _uk_welford<T> r;
  r.n = n;
  r.mean = mean;
  r.m2 = m2;
  return r;
}
template <class T> _UK_FD _uk_welford<T> _uk_welford_comb(const _uk_welford<T> &a, const _uk_welford<T> &b) {
  if (b.n == 0) return a;
  if (a.n == 0) return b;
  long long n = a.n + b.n;
  T delta = b.mean - a.mean;
  T fb = T(b.n) / T(n);
  _uk_welford<T> r;
  r.n = n;
  r.mean = a.mean + delta * fb;
  r.m2 = a.m2 + b.m2 + delta * delta * T(a.n) * fb;
  return r;
}

// max and sum(exp(x - max)) in one pass (online softmax): a part's maximum
// m and its sum s of exp(x - c), c = m (0 where m is -inf: the part is empty
// or all -inf, and s is 0), rescaled on merge. An element's part is
// _uk_lse_of(x): a +inf or NaN makes s NaN, as exp(x - max) would (the
// split plan's softmax, fuse_plan.c find_online_pairs).
template <class T> struct _uk_lse {
  T m, s;
};
template <class T> _UK_FD _uk_lse<T> _uk_lse_make(T m, T s) {
  _uk_lse<T> r;
  r.m = m;
  r.s = s;
  return r;
}
template <class T> _UK_FD _uk_lse<T> _uk_lse_of(T x) {
  return _uk_lse_make(x, x == _uk_lim<T>::lowest() ? T(0) : (x - x) + T(1));
}
template <class T> _UK_FD _uk_lse<T> _uk_lse_comb(const _uk_lse<T> &a, const _uk_lse<T> &b) {
  const T m = _uk_maximum(a.m, b.m);
  if (b.s == T(0)) return _uk_lse_make(m, a.s); // empty or all -inf: adds nothing
  if (a.s == T(0)) return _uk_lse_make(m, b.s);
  if (a.m >= b.m) return _uk_lse_make(m, a.s + b.s * _uk_exp(b.m - a.m));
  return _uk_lse_make(m, b.s + a.s * _uk_exp(a.m - b.m)); // or a NaN m: s NaN
}
// The sum of a whole reduced part: every element -inf gives NaN, as
// exp(-inf - -inf) does.
template <class T> _UK_FD T _uk_lse_total(const _uk_lse<T> &a) {
  return a.m == _uk_lim<T>::lowest() ? a.m - a.m : a.s;
}

#undef _UK_FD
