// ukern/half.cuh — device-side float16 (ukern::half) and bfloat16 (ukern::bfloat16).
//
// Include-free on purpose: cuda_fp16.h / cuda_bf16.h cost NVRTC time, and
// elementwise kernels must compile in ~10 ms. Both types are 2-byte PODs
// holding the IEEE bits, so arrays of them are arrays of numpy.float16 /
// ml_dtypes.bfloat16.
//
// Semantics (NumPy's): arithmetic is done in float and rounded once to the
// nearest even value, which for a single + - * / equals the exactly rounded
// result. Every conversion into half/bfloat16 rounds to nearest even once
// (no double rounding from double or 64-bit integers).
//
// Mixed operations promote as C++ does with a floating type ranked below float:
//   half op half -> half        half op int-type -> half (the integer is
//   half op float -> float      converted to half first, like float op int)
//   half op double -> double    half op bfloat16 -> float
// Comparisons follow the same promotion and IEEE NaN rules.
//
// Conversions: implicit from float, double and every integer type; implicit
// only to float (so sqrt(x), exp(x) pick the float overloads), explicit to
// double, integers (truncating) and bool. half <-> bfloat16 is explicit.
// Helpers in namespace ukern (also found by ADL): to_float, isnan, isinf,
// isfinite, signbit, abs, fabs; T::from_bits(u16) builds a value from bits.
//
// Known limit (shared with CuPy's float16 and CUDA's __half): in `c ? x : 0`
// with x a half, both operands convert to each other's type, so the
// conditional is ambiguous; write `c ? x : T(0)`.
//
// One type only: a program that defines UKERN_HALF_ONLY_F16 (or
// UKERN_HALF_ONLY_BF16) before including gets ukern::half (or
// ukern::bfloat16) alone; generated kernels do so when their dtypes and text
// use one of the two, because NVRTC spends ~1 ms per 50 declarations and the
// other type's are half of this header's.
#pragma once

#if defined(UKERN_HALF_ONLY_F16) && defined(UKERN_HALF_ONLY_BF16)
#error "define at most one of UKERN_HALF_ONLY_F16 and UKERN_HALF_ONLY_BF16"
#endif
// UKERN_HALF_F16_(x) / UKERN_HALF_BF16_(x): x when that type is declared.
#ifdef UKERN_HALF_ONLY_BF16
#define UKERN_HALF_F16_(...)
#else
#define UKERN_HALF_F16_(...) __VA_ARGS__
#endif
#ifdef UKERN_HALF_ONLY_F16
#define UKERN_HALF_BF16_(...)
#else
#define UKERN_HALF_BF16_(...) __VA_ARGS__
#endif

namespace ukern {

struct half;
struct bfloat16;

namespace half_detail {

template <bool B, class T = void> struct enable_if {};
template <class T> struct enable_if<true, T> { typedef T type; };

// Integer-like operand types (bool included, as in C++ arithmetic). `cvt`
// says how they convert: as s32, u32, s64 or u64. Enumerators, not static
// data members: NVRTC would emit each member it saw as a global of the
// cubin (a symbol for the driver to load). Read as static_cast<bool>(...):
// written `value != 0`, the same header cost NVRTC ~5 ms more.
enum { CVT_S32, CVT_U32, CVT_S64, CVT_U64 };
template <class T> struct is_int { enum { value = 0 }; };
#define UKERN_HALF_INT_(T, C) \
  template <> struct is_int<T> { enum { value = 1, cvt = C }; };
UKERN_HALF_INT_(bool, CVT_S32)
UKERN_HALF_INT_(char, CVT_S32)
UKERN_HALF_INT_(signed char, CVT_S32)
UKERN_HALF_INT_(unsigned char, CVT_S32)
UKERN_HALF_INT_(short, CVT_S32)
UKERN_HALF_INT_(unsigned short, CVT_S32)
UKERN_HALF_INT_(int, CVT_S32)
UKERN_HALF_INT_(unsigned int, CVT_U32)
UKERN_HALF_INT_(long, sizeof(long) == 8 ? CVT_S64 : CVT_S32)
UKERN_HALF_INT_(unsigned long, sizeof(long) == 8 ? CVT_U64 : CVT_U32)
UKERN_HALF_INT_(long long, CVT_S64)
UKERN_HALF_INT_(unsigned long long, CVT_U64)
#undef UKERN_HALF_INT_

// Result type of (H op T) for a 16-bit float type H and a built-in T; no
// `type` member for anything else, which removes the operator template.
template <class H, class T, bool I = static_cast<bool>(is_int<T>::value)> struct mix {};
template <class H, class T> struct mix<H, T, true> { typedef H type; };
template <class H> struct mix<H, float, false> { typedef float type; };
template <class H> struct mix<H, double, false> { typedef double type; };

__device__ __forceinline__ float bits_to_f32(unsigned u) {
  float f;
  asm("mov.b32 %0, %1;" : "=f"(f) : "r"(u));
  return f;
}
__device__ __forceinline__ unsigned f32_to_bits(float f) {
  unsigned u;
  asm("mov.b32 %0, %1;" : "=r"(u) : "f"(f));
  return u;
}

#ifndef UKERN_HALF_ONLY_BF16
__device__ __forceinline__ unsigned short f32_to_f16(float f) {
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
__device__ __forceinline__ unsigned short f64_to_f16(double d) {
  unsigned short h;
  asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h) : "d"(d));
  return h;
}
__device__ __forceinline__ float f16_to_f32(unsigned short h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
#endif

#ifndef UKERN_HALF_ONLY_F16
// Round-to-odd narrowing: truncate, then set the last bit if anything was
// lost. Rounding that float to nearest-even at 11 or 8 bits (<= 24 - 2) gives
// the correctly rounded result of the original value.
__device__ __forceinline__ float f64_to_f32_odd(double d) {
  float f;
  asm("cvt.rz.f32.f64 %0, %1;" : "=f"(f) : "d"(d));
  if ((double)f != d) f = bits_to_f32(f32_to_bits(f) | 1u);
  return f;
}
__device__ __forceinline__ float s64_to_f32_odd(long long v) {
  float f;
  asm("cvt.rz.f32.s64 %0, %1;" : "=f"(f) : "l"(v));
  if ((long long)f != v) f = bits_to_f32(f32_to_bits(f) | 1u);
  return f;
}
__device__ __forceinline__ float u64_to_f32_odd(unsigned long long v) {
  float f;
  asm("cvt.rz.f32.u64 %0, %1;" : "=f"(f) : "l"(v));
  if ((unsigned long long)f != v) f = bits_to_f32(f32_to_bits(f) | 1u);
  return f;
}

__device__ __forceinline__ unsigned short f32_to_bf16(float f) {
#if __CUDA_ARCH__ >= 800
  unsigned short b;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b) : "f"(f));
  return b;
#else
  unsigned u = f32_to_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u); // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return (unsigned short)(u >> 16);
#endif
}
__device__ __forceinline__ unsigned short f64_to_bf16(double d) {
#if __CUDA_ARCH__ >= 900
  unsigned short b;
  asm("cvt.rn.bf16.f64 %0, %1;" : "=h"(b) : "d"(d));
  return b;
#else
  return f32_to_bf16(f64_to_f32_odd(d));
#endif
}
__device__ __forceinline__ float bf16_to_f32(unsigned short b) {
  return bits_to_f32((unsigned)b << 16);
}
#endif

// Integers round once, directly where PTX has the instruction (f16 always,
// bf16 on sm_90); otherwise 32-bit ones go through double (exact) and 64-bit
// ones through a round-to-odd float.
template <int C> struct int_cvt;
#if __CUDA_ARCH__ >= 900
#define UKERN_HALF_BF16_INT_(PTX, R, T, VIA)                                          \
  unsigned short b;                                                                    \
  asm("cvt.rn.bf16." PTX " %0, %1;" : "=h"(b) : R(v));                                 \
  return b;
#else
#define UKERN_HALF_BF16_INT_(PTX, R, T, VIA) return VIA;
#endif
#define UKERN_HALF_INT_CVT_(C, PTX, R, T, VIA)                                         \
  template <> struct int_cvt<C> {                                                      \
    UKERN_HALF_F16_(static __device__ __forceinline__ unsigned short f16(T v) {        \
      unsigned short h;                                                                \
      asm("cvt.rn.f16." PTX " %0, %1;" : "=h"(h) : R(v));                              \
      return h;                                                                        \
    })                                                                                 \
    UKERN_HALF_BF16_(static __device__ __forceinline__ unsigned short bf16(T v) {      \
      UKERN_HALF_BF16_INT_(PTX, R, T, VIA)                                             \
    })                                                                                 \
  };
UKERN_HALF_INT_CVT_(CVT_S32, "s32", "r", int, f64_to_bf16((double)v))
UKERN_HALF_INT_CVT_(CVT_U32, "u32", "r", unsigned, f64_to_bf16((double)v))
UKERN_HALF_INT_CVT_(CVT_S64, "s64", "l", long long, f32_to_bf16(s64_to_f32_odd(v)))
UKERN_HALF_INT_CVT_(CVT_U64, "u64", "l", unsigned long long, f32_to_bf16(u64_to_f32_odd(v)))
#undef UKERN_HALF_INT_CVT_
#undef UKERN_HALF_BF16_INT_

} // namespace half_detail

// The two types share one shape; UKERN_HALF_BODY_ expands the members:
// NAME the struct, OTHER the other 16-bit type, FROM32/FROM64/TO32 the
// converters from float/double and to float, INT the int_cvt member.
#define UKERN_HALF_BODY_(NAME, OTHER, FROM32, FROM64, TO32, INT)                      \
  unsigned short bits;                                                                 \
                                                                                       \
  NAME() = default;                                                                    \
  __device__ __forceinline__ NAME(float f) : bits(half_detail::FROM32(f)) {}               \
  __device__ __forceinline__ NAME(double d) : bits(half_detail::FROM64(d)) {}              \
  template <class I, typename half_detail::enable_if<static_cast<bool>(half_detail::is_int<I>::value), int>::type = 0> \
  __device__ __forceinline__ NAME(I v) : bits(half_detail::int_cvt<half_detail::is_int<I>::cvt>::INT(v)) {}          \
  __device__ __forceinline__ explicit NAME(OTHER o);                                  \
                                                                                       \
  static __device__ __forceinline__ NAME from_bits(unsigned short b) {                \
    NAME r;                                                                            \
    r.bits = b;                                                                        \
    return r;                                                                          \
  }                                                                                    \
                                                                                       \
  /* Implicit only to float, so that f(float)/f(double) overloads pick float. */      \
  __device__ __forceinline__ operator float() const { return half_detail::TO32(bits); }    \
  __device__ __forceinline__ explicit operator double() const {                       \
    return (double)half_detail::TO32(bits);                                                 \
  }                                                                                    \
  __device__ __forceinline__ explicit operator bool() const {                         \
    return (bits & 0x7fffu) != 0;                                                      \
  }                                                                                    \
  template <class I, typename half_detail::enable_if<static_cast<bool>(half_detail::is_int<I>::value), int>::type = 0> \
  __device__ __forceinline__ explicit operator I() const {                            \
    return (I)half_detail::TO32(bits);                                                      \
  }                                                                                    \
                                                                                       \
  __device__ __forceinline__ NAME operator+() const { return *this; }                 \
  __device__ __forceinline__ NAME operator-() const {                                 \
    return from_bits((unsigned short)(bits ^ 0x8000u));                                \
  }                                                                                    \
  __device__ __forceinline__ NAME &operator++() { return *this = NAME(float(*this) + 1.0f); } \
  __device__ __forceinline__ NAME &operator--() { return *this = NAME(float(*this) - 1.0f); } \
  __device__ __forceinline__ NAME operator++(int) {                                   \
    NAME old = *this;                                                                  \
    ++*this;                                                                           \
    return old;                                                                        \
  }                                                                                    \
  __device__ __forceinline__ NAME operator--(int) {                                   \
    NAME old = *this;                                                                  \
    --*this;                                                                           \
    return old;                                                                        \
  }                                                                                    \
  /* x op= y is x = NAME(x op y) with the promotion of x op y. */                     \
  template <class T> __device__ __forceinline__ NAME &operator+=(const T &y) {        \
    return *this = NAME(*this + y);                                                    \
  }                                                                                    \
  template <class T> __device__ __forceinline__ NAME &operator-=(const T &y) {        \
    return *this = NAME(*this - y);                                                    \
  }                                                                                    \
  template <class T> __device__ __forceinline__ NAME &operator*=(const T &y) {        \
    return *this = NAME(*this * y);                                                    \
  }                                                                                    \
  template <class T> __device__ __forceinline__ NAME &operator/=(const T &y) {        \
    return *this = NAME(*this / y);                                                    \
  }

#ifndef UKERN_HALF_ONLY_BF16
struct half {
  UKERN_HALF_BODY_(half, bfloat16, f32_to_f16, f64_to_f16, f16_to_f32, f16)
};
static_assert(sizeof(half) == 2 && alignof(half) == 2, "ukern::half must be 2 bytes");
#endif
#ifndef UKERN_HALF_ONLY_F16
struct bfloat16 {
  UKERN_HALF_BODY_(bfloat16, half, f32_to_bf16, f64_to_bf16, bf16_to_f32, bf16)
};
static_assert(sizeof(bfloat16) == 2 && alignof(bfloat16) == 2, "ukern::bfloat16 must be 2 bytes");
#endif
#undef UKERN_HALF_BODY_

// With one type only, the explicit conversion from the other is declared and
// never defined: the other type is incomplete, so nothing can call it.
#if !defined(UKERN_HALF_ONLY_F16) && !defined(UKERN_HALF_ONLY_BF16)
__device__ __forceinline__ half::half(bfloat16 o) : bits(half_detail::f32_to_f16(float(o))) {}
__device__ __forceinline__ bfloat16::bfloat16(half o) : bits(half_detail::f32_to_bf16(float(o))) {}
#endif

// Operators. (H, H) are plain functions; (H, T) and (T, H) are templates that
// match built-in T exactly, so they beat both (H, H) and the built-in float
// operators and `x * 2`, `1.5f + x`, `x < 0` are never ambiguous. half with
// bfloat16 needs nothing here: neither converts implicitly to the other, so
// both go through operator float to the built-in float operators.
#define UKERN_HALF_ARITH_(H, OP)                                                       \
  __device__ __forceinline__ H operator OP(H a, H b) { return H(float(a) OP float(b)); } \
  template <class T>                                                                   \
  __device__ __forceinline__ typename half_detail::mix<H, T>::type operator OP(H a, T b) {  \
    typedef typename half_detail::mix<H, T>::type R;                                        \
    return static_cast<R>(a) OP static_cast<R>(b);                                    \
  }                                                                                    \
  template <class T>                                                                   \
  __device__ __forceinline__ typename half_detail::mix<H, T>::type operator OP(T a, H b) {  \
    typedef typename half_detail::mix<H, T>::type R;                                        \
    return static_cast<R>(a) OP static_cast<R>(b);                                     \
  }
#define UKERN_HALF_CMP_(H, OP)                                                         \
  __device__ __forceinline__ bool operator OP(H a, H b) { return float(a) OP float(b); } \
  template <class T>                                                                   \
  __device__ __forceinline__ typename half_detail::enable_if<sizeof(typename half_detail::mix<H, T>::type) != 0, bool>::type \
  operator OP(H a, T b) {                                                              \
    typedef typename half_detail::mix<H, T>::type R;                                        \
    return static_cast<R>(a) OP static_cast<R>(b);                                     \
  }                                                                                    \
  template <class T>                                                                   \
  __device__ __forceinline__ typename half_detail::enable_if<sizeof(typename half_detail::mix<H, T>::type) != 0, bool>::type \
  operator OP(T a, H b) {                                                              \
    typedef typename half_detail::mix<H, T>::type R;                                        \
    return static_cast<R>(a) OP static_cast<R>(b);                                     \
  }
#define UKERN_HALF_ALL_(M, ...) \
  UKERN_HALF_F16_(M(half, __VA_ARGS__)) UKERN_HALF_BF16_(M(bfloat16, __VA_ARGS__))

UKERN_HALF_ALL_(UKERN_HALF_ARITH_, +)
UKERN_HALF_ALL_(UKERN_HALF_ARITH_, -)
UKERN_HALF_ALL_(UKERN_HALF_ARITH_, *)
UKERN_HALF_ALL_(UKERN_HALF_ARITH_, /)
UKERN_HALF_ALL_(UKERN_HALF_CMP_, ==)
UKERN_HALF_ALL_(UKERN_HALF_CMP_, !=)
UKERN_HALF_ALL_(UKERN_HALF_CMP_, <)
UKERN_HALF_ALL_(UKERN_HALF_CMP_, <=)
UKERN_HALF_ALL_(UKERN_HALF_CMP_, >)
UKERN_HALF_ALL_(UKERN_HALF_CMP_, >=)
#undef UKERN_HALF_ARITH_
#undef UKERN_HALF_CMP_
#undef UKERN_HALF_ALL_

// Helpers, found by argument-dependent lookup too (isnan(x) on a half picks these).
#define UKERN_HALF_MATH_(H, EXP_MASK)                                                  \
  __device__ __forceinline__ float to_float(H x) { return float(x); }                  \
  __device__ __forceinline__ bool isnan(H x) { return (x.bits & 0x7fffu) > EXP_MASK; } \
  __device__ __forceinline__ bool isinf(H x) { return (x.bits & 0x7fffu) == EXP_MASK; } \
  __device__ __forceinline__ bool isfinite(H x) { return (x.bits & EXP_MASK) != EXP_MASK; } \
  __device__ __forceinline__ bool signbit(H x) { return (x.bits & 0x8000u) != 0; }    \
  __device__ __forceinline__ H abs(H x) { return H::from_bits((unsigned short)(x.bits & 0x7fffu)); } \
  __device__ __forceinline__ H fabs(H x) { return abs(x); }
UKERN_HALF_F16_(UKERN_HALF_MATH_(half, 0x7c00u))
UKERN_HALF_BF16_(UKERN_HALF_MATH_(bfloat16, 0x7f80u))
#undef UKERN_HALF_MATH_

} // namespace ukern

UKERN_HALF_F16_(typedef ukern::half uk_float16;)
UKERN_HALF_BF16_(typedef ukern::bfloat16 uk_bfloat16;)
#undef UKERN_HALF_F16_
#undef UKERN_HALF_BF16_
