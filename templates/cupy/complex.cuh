// cupy/complex.cuh: the complex API that code written for CuPy includes,
// on ukern's own complex type (ukern/complex.cuh).
//
//   thrust::complex<T>  is ukern::complex<T> (same layout: {re, im}, aligned
//                       to its size), also visible as ::complex<T>
//   members             real(), imag(), real(v), imag(v); constructors from
//                       (re), (re, im) and complex<U>; complex<T> z; is left
//                       uninitialised (thrust's trivial default constructor,
//                       so __shared__ arrays are allowed) unless
//                       <ukern/complex.cuh> was included before this header
//   operators           + - * / with complex or real operands on either side,
//                       unary + -, == != with complex or real, compound ops
//   thrust:: and ::     abs arg norm conj real imag polar proj exp log log10
//                       pow sqrt sin cos tan sinh cosh tanh asin acos atan
//                       asinh acosh atanh (branch cuts as NumPy's)
//   :: only             isnan isinf isfinite log1p log2 expm1 min max rint
//                       (CuPy's extras; min/max order by real then imag, and
//                       prefer the operand that is not NaN)
#pragma once

#ifndef UKERN_COMPLEX_TRIVIAL_DEFAULT
#define UKERN_COMPLEX_TRIVIAL_DEFAULT
#endif
#include <ukern/complex.cuh>

#define _UK_CXC_FN __host__ __device__ __forceinline__

namespace ukern {
namespace cupy_detail {

// A pair of types' wider one, for pow of mixed precisions.
template <typename T, typename U, bool TBig = (sizeof(T) > sizeof(U))> struct wider { typedef T type; };
template <typename T, typename U> struct wider<T, U, false> { typedef U type; };

}  // namespace cupy_detail

// The projection onto the Riemann sphere: every infinity becomes (+inf, +-0).
template <typename T> _UK_CXC_FN complex<T> proj(const complex<T>& z) {
  typedef detail::cmath<T> M;
  if (M::isinf(z.real()) || M::isinf(z.imag())) return complex<T>(M::inf(), z.imag() < T(0) ? -T(0) : T(0));
  return z;
}
// thrust's proj of a real: the complex of that real.
template <typename T> _UK_CXC_FN complex<T> proj(const T& x) { return proj(complex<T>(x)); }

// pow of mixed precisions computes in the wider one.
template <typename T, typename U>
_UK_CXC_FN complex<typename cupy_detail::wider<T, U>::type> pow(const complex<T>& a, const complex<U>& b) {
  typedef typename cupy_detail::wider<T, U>::type W;
  return pow(complex<W>(a), complex<W>(b));
}

}  // namespace ukern

namespace thrust {
using ukern::complex;
using ukern::abs;
using ukern::arg;
using ukern::norm;
using ukern::conj;
using ukern::real;
using ukern::imag;
using ukern::polar;
using ukern::proj;
using ukern::exp;
using ukern::log;
using ukern::log10;
using ukern::pow;
using ukern::sqrt;
using ukern::sin;
using ukern::cos;
using ukern::tan;
using ukern::sinh;
using ukern::cosh;
using ukern::tanh;
using ukern::asin;
using ukern::acos;
using ukern::atan;
using ukern::asinh;
using ukern::acosh;
using ukern::atanh;
}  // namespace thrust

using thrust::complex;
using thrust::conj;
using thrust::real;
using thrust::imag;
using thrust::arg;
using thrust::exp;
using thrust::log;
using thrust::log10;
using thrust::sin;
using thrust::cos;
using thrust::tan;
using thrust::sinh;
using thrust::cosh;
using thrust::tanh;
using thrust::asinh;
using thrust::acosh;
using thrust::atanh;
using thrust::asin;
using thrust::acos;
using thrust::atan;

template <typename T> _UK_CXC_FN bool isnan(complex<T> z) { return isnan(z.real()) || isnan(z.imag()); }
template <typename T> _UK_CXC_FN bool isinf(complex<T> z) { return isinf(z.real()) || isinf(z.imag()); }
template <typename T> _UK_CXC_FN bool isfinite(complex<T> z) {
  return isfinite(z.real()) && isfinite(z.imag());
}
template <typename T> _UK_CXC_FN complex<T> log1p(complex<T> z) { return log(z + T(1)); }
template <typename T> _UK_CXC_FN complex<T> log2(complex<T> z) {
  return log(z) / T(0.693147180559945309417232121458176568);
}
template <typename T> _UK_CXC_FN complex<T> expm1(complex<T> z) { return exp(z) - T(1); }
template <typename T> _UK_CXC_FN complex<T> min(complex<T> a, complex<T> b) {
  if (isnan(a)) return b;
  if (isnan(b)) return a;
  if (a.real() != b.real()) return a.real() < b.real() ? a : b;
  return a.imag() < b.imag() ? a : b;
}
template <typename T> _UK_CXC_FN complex<T> max(complex<T> a, complex<T> b) {
  if (isnan(a)) return b;
  if (isnan(b)) return a;
  if (a.real() != b.real()) return a.real() < b.real() ? b : a;
  return a.imag() < b.imag() ? b : a;
}
template <typename T> _UK_CXC_FN complex<T> rint(complex<T> z) {
  return complex<T>(rint(z.real()), rint(z.imag()));
}

#undef _UK_CXC_FN
