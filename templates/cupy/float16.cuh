// cupy/float16.cuh: CuPy's float16 class for device code, on ukern::half
// (ukern/half.cuh; no cuda_fp16.h, which costs NVRTC time).
//
//   float16(float) implicit; from bool, double, integers, half explicit
//   operator float() implicit, so a + b, a * 2.0f, sqrt(a) compute in float
//   (as CuPy's float16, whose arithmetic goes through float too) and
//   assigning the result back rounds once to nearest even
//   x op= y, x = any value convertible to float16
//   to_bits(), float16::from_bits(u16), iszero() isnan() isinf() isfinite()
//   signbit() as members and as functions; copysign, nextafter, min, max,
//   fmin, fmax (min/max propagate NaN, fmin/fmax ignore it, as NumPy's)
#pragma once
#include <cupy/carray.cuh>
#include <ukern/half.cuh>

class float16 {
  ukern::half h_;

 public:
  float16() = default;
  __device__ float16(float v) : h_(v) {}
  explicit __device__ float16(bool v) : h_(v ? 1.0f : 0.0f) {}
  explicit __device__ float16(double v) : h_(v) {}
  explicit __device__ float16(int v) : h_(v) {}
  explicit __device__ float16(unsigned int v) : h_(v) {}
  explicit __device__ float16(long long v) : h_(v) {}
  explicit __device__ float16(unsigned long long v) : h_(v) {}
  explicit __device__ float16(long v) : h_(v) {}
  explicit __device__ float16(unsigned long v) : h_(v) {}
  explicit __device__ float16(ukern::half v) : h_(v) {}
  __device__ operator float() const { return float(h_); }
  explicit __device__ operator ukern::half() const { return h_; }

  float16& operator=(const float16&) = default;
  template <typename T> __device__ float16& operator=(const T& v) { return *this = static_cast<float16>(v); }

  static const unsigned short nan = 0x7e00u;
  __device__ unsigned short to_bits() const { return h_.bits; }
  static __device__ float16 from_bits(unsigned short b) { return float16(ukern::half::from_bits(b)); }
  __device__ int iszero() const { return (h_.bits & 0x7fffu) == 0; }
  __device__ int isnan() const { return (h_.bits & 0x7fffu) > 0x7c00u; }
  __device__ int isinf() const { return (h_.bits & 0x7fffu) == 0x7c00u; }
  __device__ int isfinite() const { return (h_.bits & 0x7c00u) != 0x7c00u; }
  __device__ int signbit() const { return (h_.bits & 0x8000u) != 0; }

  template <typename T> __device__ float16& operator+=(const T& v) { return *this = float16(float(*this) + v); }
  template <typename T> __device__ float16& operator-=(const T& v) { return *this = float16(float(*this) - v); }
  template <typename T> __device__ float16& operator*=(const T& v) { return *this = float16(float(*this) * v); }
  template <typename T> __device__ float16& operator/=(const T& v) { return *this = float16(float(*this) / v); }

  friend __device__ float16 copysign(float16 x, float16 y) {
    return from_bits((unsigned short)((x.h_.bits & 0x7fffu) | (y.h_.bits & 0x8000u)));
  }
  // The next representable value after x towards y (y itself when equal).
  friend __device__ float16 nextafter(float16 x, float16 y) {
    if (x.isnan() || y.isnan()) return from_bits(nan);
    if (float(x) == float(y)) return y;
    if (x.iszero()) return from_bits((unsigned short)((y.h_.bits & 0x8000u) | 1u));
    bool away = (float(y) > float(x)) == !x.signbit();  // |x| grows
    return from_bits((unsigned short)(away ? x.h_.bits + 1u : x.h_.bits - 1u));
  }
};

__device__ inline int iszero(float16 x) { return x.iszero(); }
__device__ inline int isnan(float16 x) { return x.isnan(); }
__device__ inline int isinf(float16 x) { return x.isinf(); }
__device__ inline int isfinite(float16 x) { return x.isfinite(); }
__device__ inline int signbit(float16 x) { return x.signbit(); }
__device__ inline float16 min(float16 x, float16 y) {
  return x.isnan() ? x : y.isnan() ? y : (float(y) < float(x) ? y : x);
}
__device__ inline float16 max(float16 x, float16 y) {
  return x.isnan() ? x : y.isnan() ? y : (float(y) > float(x) ? y : x);
}
__device__ inline float16 fmin(float16 x, float16 y) {
  return x.isnan() ? y : y.isnan() ? x : (float(y) < float(x) ? y : x);
}
__device__ inline float16 fmax(float16 x, float16 y) {
  return x.isnan() ? y : y.isnan() ? x : (float(y) > float(x) ? y : x);
}
