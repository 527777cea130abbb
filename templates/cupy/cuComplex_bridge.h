// cupy/cuComplex_bridge.h: cuComplex.h's names on cupy/complex.cuh's
// complex<T>, for translate_cucomplex=True (which replaces
// `#include <cuComplex.h>` by this header). The types are complex<float> and
// complex<double>; the functions are their operators and math functions.
#pragma once
#include <cupy/complex.cuh>

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
#define cuCdivf(a, b) ((a) / (b))
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
#define cuCdiv(a, b) ((a) / (b))
#define cuCabs abs
#define cuComplexFloatToDouble complex<double>
#define cuCfma(a, b, c) ((a) * (b) + (c))
