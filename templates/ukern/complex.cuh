// ukern/complex.cuh: complex numbers for device code (NVRTC or nvcc), with
// no includes.
//
//   ukern::complex<float>  (typedef uk_complex64)   8 bytes, aligned to 8
//   ukern::complex<double> (typedef uk_complex128) 16 bytes, aligned to 16
//
// The layout is {real, imag}, like cuComplex / std::complex, so arrays of
// NumPy complex64/complex128 can be read directly. A default-constructed
// value is 0 (as std::complex), so a complex cannot be declared __shared__
// directly: use raw storage for shared arrays, or define
// UKERN_COMPLEX_TRIVIAL_DEFAULT before the first include (cupy/complex.cuh
// does) for thrust's trivial default constructor.
//
// Operators: + - * / with complex and real operands on either side (the real
// operand converts to T), unary + and -, == and !=, compound assignment.
// Functions (found by argument-dependent lookup): real, imag, abs, arg, norm,
// conj, polar, exp, log, log10, sqrt, sin, cos, tan, sinh, cosh, tanh, pow,
// asin, acos, atan, asinh, acosh, atanh (branch cuts as NumPy's; sqrt and these
// give NumPy's C99 Annex G values for infinite and NaN parts).
#pragma once

#define _UK_CX_FN __host__ __device__ __forceinline__

namespace ukern {

namespace detail {

template <typename T> struct cmath;

template <> struct cmath<float> {
  static _UK_CX_FN float sqrt(float x) { return ::sqrtf(x); }
  static _UK_CX_FN float hypot(float x, float y) { return ::hypotf(x, y); }
  static _UK_CX_FN float atan2(float y, float x) { return ::atan2f(y, x); }
  static _UK_CX_FN float exp(float x) { return ::expf(x); }
  static _UK_CX_FN float log(float x) { return ::logf(x); }
  static _UK_CX_FN float sin(float x) { return ::sinf(x); }
  static _UK_CX_FN float cos(float x) { return ::cosf(x); }
  static _UK_CX_FN float sinh(float x) { return ::sinhf(x); }
  static _UK_CX_FN float cosh(float x) { return ::coshf(x); }
  static _UK_CX_FN float fabs(float x) { return ::fabsf(x); }
  static _UK_CX_FN float pow(float x, float y) { return ::powf(x, y); }
  static _UK_CX_FN float copysign(float x, float y) { return ::copysignf(x, y); }
  static _UK_CX_FN float ln10() { return 2.302585092994045684f; }
  static _UK_CX_FN float asinh(float x) { return ::asinhf(x); }
  static _UK_CX_FN float log1p(float x) { return ::log1pf(x); }
  static _UK_CX_FN bool isinf(float x) { return ::isinf(x); }
  static _UK_CX_FN float inf() {
    union { unsigned u; float f; } v = {0x7f800000u};  // host and device alike
    return v.f;
  }
};

template <> struct cmath<double> {
  static _UK_CX_FN double sqrt(double x) { return ::sqrt(x); }
  static _UK_CX_FN double hypot(double x, double y) { return ::hypot(x, y); }
  static _UK_CX_FN double atan2(double y, double x) { return ::atan2(y, x); }
  static _UK_CX_FN double exp(double x) { return ::exp(x); }
  static _UK_CX_FN double log(double x) { return ::log(x); }
  static _UK_CX_FN double sin(double x) { return ::sin(x); }
  static _UK_CX_FN double cos(double x) { return ::cos(x); }
  static _UK_CX_FN double sinh(double x) { return ::sinh(x); }
  static _UK_CX_FN double cosh(double x) { return ::cosh(x); }
  static _UK_CX_FN double fabs(double x) { return ::fabs(x); }
  static _UK_CX_FN double pow(double x, double y) { return ::pow(x, y); }
  static _UK_CX_FN double copysign(double x, double y) { return ::copysign(x, y); }
  static _UK_CX_FN double ln10() { return 2.302585092994045684; }
  static _UK_CX_FN double asinh(double x) { return ::asinh(x); }
  static _UK_CX_FN double log1p(double x) { return ::log1p(x); }
  static _UK_CX_FN bool isinf(double x) { return ::isinf(x); }
  static _UK_CX_FN double inf() {
    union { unsigned long long u; double d; } v = {0x7ff0000000000000ull};
    return v.d;
  }
};

// Keeps a real operand out of template deduction, so `z * 2` converts 2 to T.
template <typename T> struct ident { typedef T type; };

}  // namespace detail

template <typename T>
struct alignas(2 * sizeof(T)) complex {
  typedef T value_type;
  T _uk_re;
  T _uk_im;

#ifdef UKERN_COMPLEX_TRIVIAL_DEFAULT
  // As thrust::complex: `complex<T> z;` is uninitialised (so __shared__
  // arrays of it are allowed) and `complex<T>()` is still 0.
  complex() = default;
  _UK_CX_FN constexpr complex(const T& re, const T& im = T()) : _uk_re(re), _uk_im(im) {}
#else
  _UK_CX_FN constexpr complex(const T& re = T(), const T& im = T()) : _uk_re(re), _uk_im(im) {}
#endif
  template <typename U>
  _UK_CX_FN constexpr complex(const complex<U>& z) : _uk_re(T(z.real())), _uk_im(T(z.imag())) {}

  _UK_CX_FN constexpr T real() const { return _uk_re; }
  _UK_CX_FN constexpr T imag() const { return _uk_im; }
  _UK_CX_FN void real(T re) { _uk_re = re; }
  _UK_CX_FN void imag(T im) { _uk_im = im; }

  _UK_CX_FN complex& operator=(const T& re) {
    _uk_re = re;
    _uk_im = T();
    return *this;
  }
  _UK_CX_FN complex& operator+=(const complex& z) {
    _uk_re += z._uk_re;
    _uk_im += z._uk_im;
    return *this;
  }
  _UK_CX_FN complex& operator-=(const complex& z) {
    _uk_re -= z._uk_re;
    _uk_im -= z._uk_im;
    return *this;
  }
  _UK_CX_FN complex& operator*=(const complex& z) {
    T re = _uk_re * z._uk_re - _uk_im * z._uk_im;
    _uk_im = _uk_re * z._uk_im + _uk_im * z._uk_re;
    _uk_re = re;
    return *this;
  }
  _UK_CX_FN complex& operator/=(const complex& z);
  _UK_CX_FN complex& operator+=(const T& s) {
    _uk_re += s;
    return *this;
  }
  _UK_CX_FN complex& operator-=(const T& s) {
    _uk_re -= s;
    return *this;
  }
  _UK_CX_FN complex& operator*=(const T& s) {
    _uk_re *= s;
    _uk_im *= s;
    return *this;
  }
  _UK_CX_FN complex& operator/=(const T& s) {
    _uk_re /= s;
    _uk_im /= s;
    return *this;
  }
};

// Smith's algorithm: scales by the larger part of the divisor, so the
// intermediate products do not overflow where the result is finite.
template <typename T>
_UK_CX_FN complex<T>& complex<T>::operator/=(const complex<T>& z) {
  typedef detail::cmath<T> M;
  T c = z._uk_re, d = z._uk_im, re, im;
  if (c == T(0) && d == T(0)) {  // NumPy's: divides by +0
    re = _uk_re / M::fabs(c);
    im = _uk_im / M::fabs(c);
  } else if (M::fabs(c) >= M::fabs(d)) {
    T r = d / c, den = c + d * r;
    re = (_uk_re + _uk_im * r) / den;
    im = (_uk_im - _uk_re * r) / den;
  } else {
    T r = c / d, den = c * r + d;
    re = (_uk_re * r + _uk_im) / den;
    im = (_uk_im * r - _uk_re) / den;
  }
  _uk_re = re;
  _uk_im = im;
  return *this;
}

#define _UK_CX_BINARY(op)                                                                    \
  template <typename T>                                                                      \
  _UK_CX_FN complex<T> operator op(const complex<T>& a, const complex<T>& b) {               \
    complex<T> r = a;                                                                        \
    r op## = b;                                                                              \
    return r;                                                                                \
  }                                                                                          \
  template <typename T>                                                                      \
  _UK_CX_FN complex<T> operator op(const complex<T>& a, const typename detail::ident<T>::type& b) { \
    complex<T> r = a;                                                                        \
    r op## = b;                                                                              \
    return r;                                                                                \
  }                                                                                          \
  template <typename T>                                                                      \
  _UK_CX_FN complex<T> operator op(const typename detail::ident<T>::type& a, const complex<T>& b) { \
    complex<T> r(a);                                                                         \
    r op## = b;                                                                              \
    return r;                                                                                \
  }
_UK_CX_BINARY(+)
_UK_CX_BINARY(-)
_UK_CX_BINARY(*)
_UK_CX_BINARY(/)
#undef _UK_CX_BINARY

template <typename T> _UK_CX_FN complex<T> operator+(const complex<T>& a) { return a; }
template <typename T> _UK_CX_FN complex<T> operator-(const complex<T>& a) {
  return complex<T>(-a.real(), -a.imag());
}

template <typename T> _UK_CX_FN bool operator==(const complex<T>& a, const complex<T>& b) {
  return a.real() == b.real() && a.imag() == b.imag();
}
template <typename T>
_UK_CX_FN bool operator==(const complex<T>& a, const typename detail::ident<T>::type& b) {
  return a.real() == b && a.imag() == T(0);
}
template <typename T>
_UK_CX_FN bool operator==(const typename detail::ident<T>::type& a, const complex<T>& b) {
  return b == a;
}
template <typename T> _UK_CX_FN bool operator!=(const complex<T>& a, const complex<T>& b) {
  return !(a == b);
}
template <typename T>
_UK_CX_FN bool operator!=(const complex<T>& a, const typename detail::ident<T>::type& b) {
  return !(a == b);
}
template <typename T>
_UK_CX_FN bool operator!=(const typename detail::ident<T>::type& a, const complex<T>& b) {
  return !(b == a);
}

template <typename T> _UK_CX_FN T real(const complex<T>& z) { return z.real(); }
template <typename T> _UK_CX_FN T imag(const complex<T>& z) { return z.imag(); }
template <typename T> _UK_CX_FN T abs(const complex<T>& z) {
  return detail::cmath<T>::hypot(z.real(), z.imag());
}
template <typename T> _UK_CX_FN T arg(const complex<T>& z) {
  return detail::cmath<T>::atan2(z.imag(), z.real());
}
template <typename T> _UK_CX_FN T norm(const complex<T>& z) {
  return z.real() * z.real() + z.imag() * z.imag();
}
template <typename T> _UK_CX_FN complex<T> conj(const complex<T>& z) {
  return complex<T>(z.real(), -z.imag());
}
template <typename T>
_UK_CX_FN complex<T> polar(const T& r, const typename detail::ident<T>::type& theta = T()) {
  typedef detail::cmath<T> M;
  return complex<T>(r * M::cos(theta), r * M::sin(theta));
}

namespace detail {
template <typename T> _UK_CX_FN bool finite(T x) { return x - x == T(0); }  // not infinite, not NaN
// Past this |x|, e^|x| overflows where e^|x| cos(y) / 2 may not: sinh and cosh form
// those products as (e^(|x|/2) c) (e^(|x|/2) / 2).
template <typename T> _UK_CX_FN T exp_overflows() { return T(sizeof(T) == 4 ? 88 : 709); }
template <typename T> _UK_CX_FN T half_exp_times(T ax, T c) {
  T h = cmath<T>::exp(ax / T(2));
  return (h * c) * (h * T(0.5));
}
}  // namespace detail

template <typename T> _UK_CX_FN complex<T> exp(const complex<T>& z) {
  typedef detail::cmath<T> M;
  T x = z.real(), y = z.imag();
  if (y == T(0)) return complex<T>(M::exp(x), y);  // C99 Annex G values, as NumPy's
  if (M::isinf(x) && !detail::finite(y))
    return x > T(0) ? complex<T>(x, y - y) : complex<T>(T(0), M::copysign(T(0), y));
  T c = M::cos(y), s = M::sin(y);
  if (x > detail::exp_overflows<T>()) {  // e^x overflows where e^x cos(y) may not
    T h = M::exp(x / T(2));
    return complex<T>((h * c) * h, (h * s) * h);
  }
  T e = M::exp(x);
  return complex<T>(e * c, e * s);
}
// log|z| from log1p near the unit circle, where log(|z|) would lose the digits
template <typename T> _UK_CX_FN complex<T> log(const complex<T>& z) {
  typedef detail::cmath<T> M;
  T h = abs(z), re;
  if (h > T(0.7) && h < T(1.4)) {
    T a = M::fabs(z.real()), b = M::fabs(z.imag());
    if (a < b) {
      T t = a;
      a = b;
      b = t;
    }
    re = T(0.5) * M::log1p((a - T(1)) * (a + T(1)) + b * b);
  } else if (M::isinf(h) && detail::finite(z.real()) && detail::finite(z.imag())) {  // |z| overflows
    re = M::log(M::hypot(z.real() / T(4), z.imag() / T(4))) + T(1.38629436111989061883446424291635314);
  } else if (h < T(sizeof(T) == 4 ? 1e-30 : 1e-300)) {  // subnormal parts lose digits in |z|: 2^64 z
    re = M::log(M::hypot(z.real() * T(18446744073709551616.0), z.imag() * T(18446744073709551616.0))) -
         T(44.3614195558364998027028558732484999);
  } else {
    re = M::log(h);
  }
  return complex<T>(re, arg(z));
}
template <typename T> _UK_CX_FN complex<T> log10(const complex<T>& z) {
  return log(z) / detail::cmath<T>::ln10();
}
// Principal root (real part >= 0; the imaginary part has the sign of z's).
// Infinite and NaN parts give C99's values (Annex G), as NumPy's csqrt.
template <typename T> _UK_CX_FN complex<T> sqrt(const complex<T>& z) {
  typedef detail::cmath<T> M;
  T x = z.real(), y = z.imag();
  if (M::isinf(y)) return complex<T>(M::inf(), y);
  if (x != x) return complex<T>(x, x);
  if (M::isinf(x)) {
    if (y != y) return x > T(0) ? complex<T>(x, y) : complex<T>(y, M::inf());
    return x > T(0) ? complex<T>(x, M::copysign(T(0), y)) : complex<T>(T(0), M::copysign(M::inf(), y));
  }
  if (y != y) return complex<T>(y, y);
  if (x == T(0) && y == T(0)) return complex<T>(T(0), y);
  // sqrt(z) = 2 sqrt(z / 4) where |x| + |z| would overflow, and 2^-32 sqrt(2^64 z)
  // where (|x| + |z|) / 2 would lose a subnormal
  T scale = T(1), ax = M::fabs(x), ay = M::fabs(y);
  if (ax > T(sizeof(T) == 4 ? 1e37 : 1e307) || ay > T(sizeof(T) == 4 ? 1e37 : 1e307)) {
    x *= T(0.25);
    y *= T(0.25);
    scale = T(2);
  } else if (ax < T(sizeof(T) == 4 ? 1e-30 : 1e-300) && ay < T(sizeof(T) == 4 ? 1e-30 : 1e-300)) {
    x *= T(18446744073709551616.0);
    y *= T(18446744073709551616.0);
    scale = T(2.3283064365386962890625e-10);
  }
  T t = M::sqrt((M::fabs(x) + M::hypot(x, y)) / T(2));
  if (x >= T(0)) return complex<T>(scale * t, scale * (y / (T(2) * t)));
  return complex<T>(scale * (M::fabs(y) / (T(2) * t)), scale * M::copysign(t, y));
}

// exp, sinh, cosh, tanh (and sin, cos, tan through them): infinite and NaN parts give
// C99's values (Annex G) as NumPy's; a zero imaginary part stays exact.
template <typename T> _UK_CX_FN complex<T> sinh(const complex<T>& z) {
  typedef detail::cmath<T> M;
  T x = z.real(), y = z.imag();
  if (y == T(0)) return complex<T>(M::sinh(x), y);
  if (!detail::finite(y) && x == T(0)) return complex<T>(x, y - y);
  if (!detail::finite(y) && M::isinf(x)) return complex<T>(M::inf(), y - y);
  T c = M::cos(y), s = M::sin(y);
  if (M::fabs(x) > detail::exp_overflows<T>())
    return complex<T>(M::copysign(T(1), x) * detail::half_exp_times(M::fabs(x), c),
                      detail::half_exp_times(M::fabs(x), s));
  return complex<T>(M::sinh(x) * c, M::cosh(x) * s);
}
template <typename T> _UK_CX_FN complex<T> cosh(const complex<T>& z) {
  typedef detail::cmath<T> M;
  T x = z.real(), y = z.imag();
  if (y == T(0)) return complex<T>(M::cosh(x), x != x ? y : M::copysign(T(0), x) * y);
  if (!detail::finite(y) && x == T(0)) return complex<T>(y - y, T(0));
  if (!detail::finite(y) && M::isinf(x)) return complex<T>(M::inf(), y - y);
  T c = M::cos(y), s = M::sin(y);
  if (M::fabs(x) > detail::exp_overflows<T>())
    return complex<T>(detail::half_exp_times(M::fabs(x), c),
                      M::copysign(T(1), x) * detail::half_exp_times(M::fabs(x), s));
  return complex<T>(M::cosh(x) * c, M::sinh(x) * s);
}
template <typename T> _UK_CX_FN complex<T> sin(const complex<T>& z) {  // -i sinh(i z)
  if (detail::cmath<T>::isinf(z.imag()) && !detail::finite(z.real()))  // NumPy's sign
    return complex<T>(z.real() - z.real(), detail::cmath<T>::inf());
  complex<T> t = sinh(complex<T>(-z.imag(), z.real()));
  return complex<T>(t.imag(), -t.real());
}
template <typename T> _UK_CX_FN complex<T> cos(const complex<T>& z) {  // cosh(i z)
  return cosh(complex<T>(-z.imag(), z.real()));
}
// (sinh x cosh x + i sin y cos y) / (sinh^2 x + cos^2 y): the denominator is
// cosh(2x) + cos(2y) halved, without its cancellation; the signs of zeros stay. Past
// |x| = 22 (9 for float) tanh(x) rounds to +-1 and sinh^2 would overflow further on:
// the limit, with the imaginary part 2 sin(2y) e^-2|x|.
template <typename T> _UK_CX_FN complex<T> tanh(const complex<T>& z) {
  typedef detail::cmath<T> M;
  T x = z.real(), y = z.imag();
  if (M::isinf(x))
    return complex<T>(M::copysign(T(1), x), M::copysign(T(0), detail::finite(y) ? M::sin(y) * M::cos(y) : y));
  if (x != x) return complex<T>(x, y == T(0) ? y : x);
  if (!detail::finite(y)) return complex<T>(x == T(0) ? x : y - y, y - y);
  if (M::fabs(x) > T(sizeof(T) == 4 ? 9 : 22))
    return complex<T>(M::copysign(T(1), x), T(4) * M::sin(y) * M::cos(y) * M::exp(T(-2) * M::fabs(x)));
  T sx = M::sinh(x), c = M::cos(y), d = sx * sx + c * c;
  return complex<T>(sx * M::cosh(x) / d, M::sin(y) * c / d);
}
// tan(z) = -i tanh(iz), so a large imaginary part gives +-i, not inf/inf.
template <typename T> _UK_CX_FN complex<T> tan(const complex<T>& z) {
  complex<T> t = tanh(complex<T>(-z.imag(), z.real()));
  return complex<T>(t.imag(), -t.real());
}

namespace detail {
// 1 - z and 1 + z with the sign of the imaginary part kept exact (-0 for
// 1 - (x + 0i)): Kahan's formulas below put the branch cuts where NumPy
// has them only with signed zeros intact.
template <typename T> _UK_CX_FN complex<T> one_minus(const complex<T>& z) {
  return complex<T>(T(1) - z.real(), -z.imag());
}
template <typename T> _UK_CX_FN complex<T> one_plus(const complex<T>& z) {
  return complex<T>(T(1) + z.real(), z.imag());
}
template <typename T> _UK_CX_FN complex<T> times_i(const complex<T>& z) {  // i z
  return complex<T>(-z.imag(), z.real());
}
template <typename T> _UK_CX_FN complex<T> times_minus_i(const complex<T>& z) {  // -i z
  return complex<T>(z.imag(), -z.real());
}

// k pi/4 (k = 0..4), rounded to T
template <typename T> _UK_CX_FN T quarter_pi(int k) {
  return k == 1   ? T(0.785398163397448309615660845819875721)
         : k == 2 ? T(1.57079632679489661923132169163975144)
         : k == 3 ? T(2.35619449019234492884698253745962716)
         : k == 4 ? T(3.14159265358979323846264338327950288)
                  : T(0);
}

template <typename T> _UK_CX_FN T ln2() { return T(0.693147180559945309417232121458176568); }
// |x| or |y| so large that Kahan's products (or atanh's squares) could overflow
template <typename T> _UK_CX_FN bool huge(T x, T y) {
  const T big = T(sizeof(T) == 4 ? 1e18 : 1e150);
  return x > big || x < -big || y > big || y < -big;
}

// Kahan, "Branch cuts for complex elementary functions" (1987): no z*z, so
// no overflow for large |z|, and the cuts follow the signs of zeros. Finite z.
template <typename T> _UK_CX_FN complex<T> asin_finite(const complex<T>& z) {
  typedef cmath<T> M;
  complex<T> a = sqrt(one_minus(z)), b = sqrt(one_plus(z));
  T re = M::atan2(z.real(), a.real() * b.real() - a.imag() * b.imag());
  T im = M::asinh(a.real() * b.imag() - a.imag() * b.real());  // Im(conj(a) b)
  return complex<T>(re, im);
}
}  // namespace detail

// Infinite and NaN parts give C99's values (Annex G) as NumPy's (the C
// library's) casinh, cacos, catanh; asin, acosh and atan follow from them.
template <typename T> _UK_CX_FN complex<T> asinh(const complex<T>& z) {
  typedef detail::cmath<T> M;
  T x = z.real(), y = z.imag();
  if (x != x) return complex<T>(M::isinf(y) ? M::inf() : x, y == T(0) ? y : x);
  if (M::isinf(x))
    return complex<T>(x, y != y ? y : M::isinf(y) ? M::copysign(detail::quarter_pi<T>(1), y) : M::copysign(T(0), y));
  if (M::isinf(y)) return complex<T>(M::copysign(M::inf(), x), M::copysign(detail::quarter_pi<T>(2), y));
  if (y != y) return complex<T>(y, y);
  if (detail::huge(x, y)) {  // log(2z) (odd), within 1/|z|^2; halved first, as |z| may overflow
    T ax = M::fabs(x);
    T re = M::log(M::hypot(ax / T(2), y / T(2))) + T(2) * detail::ln2<T>();
    return complex<T>(M::copysign(re, x), M::atan2(y, ax));
  }
  return detail::times_minus_i(detail::asin_finite(detail::times_i(z)));  // -i asin(i z)
}
template <typename T> _UK_CX_FN complex<T> asin(const complex<T>& z) {  // -i asinh(i z)
  typedef detail::cmath<T> M;
  if (M::isinf(z.real()) && z.imag() != z.imag()) return complex<T>(z.imag(), M::inf());  // NumPy's sign
  return detail::times_minus_i(asinh(detail::times_i(z)));
}
template <typename T> _UK_CX_FN complex<T> acos(const complex<T>& z) {
  typedef detail::cmath<T> M;
  T x = z.real(), y = z.imag();
  if (x != x) return complex<T>(x, M::isinf(y) ? -y : x);
  if (M::isinf(x)) {
    if (y != y) return complex<T>(y, -M::inf());
    return complex<T>(detail::quarter_pi<T>(M::isinf(y) ? (x > T(0) ? 1 : 3) : (x > T(0) ? 0 : 4)),
                      -M::copysign(M::inf(), y));
  }
  if (M::isinf(y)) return complex<T>(detail::quarter_pi<T>(2), -y);
  if (y != y) return complex<T>(x == T(0) ? detail::quarter_pi<T>(2) : y, y);
  if (detail::huge(x, y)) {  // arg(z) -+ i log(2|z|), within 1/|z|^2 (conj(acos(conj z)) below the cut)
    T im = M::log(M::hypot(x / T(2), y / T(2))) + T(2) * detail::ln2<T>();
    return complex<T>(M::atan2(M::fabs(y), x), -M::copysign(im, y));
  }
  complex<T> a = sqrt(detail::one_minus(z)), b = sqrt(detail::one_plus(z));
  T re = T(2) * M::atan2(a.real(), b.real());
  T im = M::asinh(b.real() * a.imag() - b.imag() * a.real());  // Im(conj(b) a)
  return complex<T>(re, im);
}
template <typename T> _UK_CX_FN complex<T> acosh(const complex<T>& z) {
  typedef detail::cmath<T> M;
  T x = z.real(), y = z.imag();
  if (x != x || y != y || M::isinf(x) || M::isinf(y) || detail::huge(x, y)) {  // +-i acos(z), real part >= 0
    complex<T> a = acos(z);
    return a.imag() > T(0) ? detail::times_minus_i(a) : detail::times_i(a);
  }
  complex<T> a = sqrt(complex<T>(x - T(1), y)), b = sqrt(complex<T>(x + T(1), y));
  T re = M::asinh(a.real() * b.real() + a.imag() * b.imag());  // Re(conj(a) b)
  T im = T(2) * M::atan2(a.imag(), b.real());
  return complex<T>(re, im);
}
template <typename T> _UK_CX_FN complex<T> atanh(const complex<T>& z) {
  typedef detail::cmath<T> M;
  T x = z.real(), y = z.imag();
  if (x != x) return M::isinf(y) ? complex<T>(T(0), M::copysign(detail::quarter_pi<T>(2), y)) : complex<T>(x, x);
  if (y != y) return M::isinf(x) || x == T(0) ? complex<T>(M::copysign(T(0), x), y) : complex<T>(y, y);
  T ax = M::fabs(x), ay = M::fabs(y);
  if (M::isinf(x) || M::isinf(y) || detail::huge(x, y)) {  // 1/z's real part, and +-pi/2
    T h = M::hypot(x / T(2), y / T(2));  // |z| / 2, which cannot overflow
    T re = M::isinf(x) || M::isinf(y) ? T(0) : ax / T(2) / h / h / T(2);
    return complex<T>(M::copysign(re, x), M::copysign(detail::quarter_pi<T>(2), y));
  }
  T e = T(1) - ax, m = M::fabs(e) > ay ? M::fabs(e) : ay;
  T re;
  if (m > T(0) && m < T(sizeof(T) == 4 ? 1e-18 : 1e-150)) {  // e^2 + y^2 would underflow: scaled by 1/m
    T es = e / m, ys = y / m;
    re = T(0.25) * (M::log(T(4) * ax / (es * es + ys * ys)) - T(2) * M::log(m));
  } else {
    re = T(0.25) * M::log1p(T(4) * ax / (e * e + y * y));
  }
  T im = T(0.5) * M::atan2(T(2) * y, e * (T(1) + ax) - y * y);
  return complex<T>(M::copysign(re, x), im);
}
template <typename T> _UK_CX_FN complex<T> atan(const complex<T>& z) {  // -i atanh(i z)
  typedef detail::cmath<T> M;
  if (M::isinf(z.real()) && z.imag() != z.imag())  // NumPy's sign of the zero
    return complex<T>(M::copysign(detail::quarter_pi<T>(2), z.real()), T(0));
  return detail::times_minus_i(atanh(detail::times_i(z)));
}

template <typename T> _UK_CX_FN complex<T> pow(const complex<T>& a, const complex<T>& b) {
  if (a.real() == T(0) && a.imag() == T(0))
    return complex<T>(b.real() == T(0) && b.imag() == T(0) ? T(1) : T(0));
  return exp(b * log(a));
}
template <typename T>
_UK_CX_FN complex<T> pow(const complex<T>& a, const typename detail::ident<T>::type& p) {
  if (a.real() == T(0) && a.imag() == T(0)) return complex<T>(p == T(0) ? T(1) : T(0));
  return polar(detail::cmath<T>::pow(abs(a), p), arg(a) * p);
}
template <typename T>
_UK_CX_FN complex<T> pow(const typename detail::ident<T>::type& x, const complex<T>& b) {
  return pow(complex<T>(x), b);
}

}  // namespace ukern

#undef _UK_CX_FN

typedef ukern::complex<float> uk_complex64;
typedef ukern::complex<double> uk_complex128;
