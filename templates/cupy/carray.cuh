// cupy/carray.cuh: what CuPy's kernels see from its carray.cuh apart from
// CArray/CIndexer (ukern's generated kernels have their own array and index
// types): M_PI and the other M_* constants (CuPy defines M_PI only; NVRTC
// has none), the CUPY_FOR grid-stride loop, and cupy::type_traits.
#pragma once

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#ifndef M_E
#define M_E 2.7182818284590452354
#endif
#ifndef M_LOG2E
#define M_LOG2E 1.4426950408889634074
#endif
#ifndef M_LOG10E
#define M_LOG10E 0.43429448190325182765
#endif
#ifndef M_LN2
#define M_LN2 0.69314718055994530942
#endif
#ifndef M_LN10
#define M_LN10 2.30258509299404568402
#endif
#ifndef M_PI_2
#define M_PI_2 1.57079632679489661923
#endif
#ifndef M_PI_4
#define M_PI_4 0.78539816339744830962
#endif
#ifndef M_1_PI
#define M_1_PI 0.31830988618379067154
#endif
#ifndef M_2_PI
#define M_2_PI 0.63661977236758134308
#endif
#ifndef M_2_SQRTPI
#define M_2_SQRTPI 1.12837916709551257390
#endif
#ifndef M_SQRT2
#define M_SQRT2 1.41421356237309504880
#endif
#ifndef M_SQRT1_2
#define M_SQRT1_2 0.70710678118654752440
#endif

// i over [0, n) split across the whole grid.
#define CUPY_FOR(i, n)                                                                   \
  for (ptrdiff_t i = static_cast<ptrdiff_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<ptrdiff_t>(blockDim.x) * gridDim.x)

namespace cupy {
namespace type_traits {
template <bool B, class T, class F> struct conditional { typedef T type; };
template <class T, class F> struct conditional<false, T, F> { typedef F type; };
template <bool B, class T = void> struct enable_if {};
template <class T> struct enable_if<true, T> { typedef T type; };
template <typename T, typename U> struct is_same { enum { value = 0 }; };
template <typename T> struct is_same<T, T> { enum { value = 1 }; };
}  // namespace type_traits
}  // namespace cupy
