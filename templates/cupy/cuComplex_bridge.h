// cupy/cuComplex_bridge.h: cuComplex.h's names on cupy/complex.cuh's
// complex<T>, for translate_cucomplex=True (which replaces
// `#include <cuComplex.h>` by this header). The types are complex<float> and
// complex<double>; the functions are their operators and math functions.
#pragma once
#include <cupy/complex.cuh>

// cuComplex.h divides by scaling both operands by 1 / (|Re y| + |Im y|), not
// by Smith's algorithm as complex<T>'s operator/ does; CuPy's complex<T>
// divides that way too. cuCdiv/cuCdivf keep cuComplex.h's arithmetic, in its
// order, so that translated code gives the values cuComplex.h (and CuPy's
// true_divide) give, to the bit.
template <typename T>
__host__ __device__ inline complex<T> _uk_cucomplex_div(const complex<T>& x, const complex<T>& y) {
  T scale = T(1) / (fabs(y.real()) + fabs(y.imag()));
  T xr = x.real() * scale, xi = x.imag() * scale;
  T yr = y.real() * scale, yi = y.imag() * scale;
  T norm = T(1) / ((yr * yr) + (yi * yi));
  return complex<T>(((xr * yr) + (xi * yi)) * norm, ((xi * yr) - (xr * yi)) * norm);
}

// float
#define cuFloatComplex complex<float>
#define cuComplex complex<float>
#define cuCrealf real
#define cuCimagf imag
#define make_cuFloatComplex(re, im) complex<float>(re, im)
#define make_cuComplex(re, im) complex<float>(re, im)
#define cuConjf conj
#define cuCaddf(a, b) ((a) + (b))
#define cuCsubf(a, b) ((a) - (b))
#define cuCmulf(a, b) ((a) * (b))
#define cuCdivf(a, b) _uk_cucomplex_div<float>((a), (b))
#define cuCabsf abs
#define cuComplexDoubleToFloat complex<float>
#define cuCfmaf(a, b, c) ((a) * (b) + (c))

// double
#define cuDoubleComplex complex<double>
#define cuCreal real
#define cuCimag imag
#define make_cuDoubleComplex(re, im) complex<double>(re, im)
#define cuConj conj
#define cuCadd(a, b) ((a) + (b))
#define cuCsub(a, b) ((a) - (b))
#define cuCmul(a, b) ((a) * (b))
#define cuCdiv(a, b) _uk_cucomplex_div<double>((a), (b))
#define cuCabs abs
#define cuComplexFloatToDouble complex<double>
#define cuCfma(a, b, c) ((a) * (b) + (c))
