/* Host reference for float16 and bfloat16 bit patterns, for tests.
 * Every conversion into the 16-bit types rounds once, to nearest even, with
 * IEEE overflow to infinity, gradual underflow and quiet NaNs (0x7E00 /
 * 0x7FC0 with the input's sign). Pure integer arithmetic: no dependence on
 * the host FPU's rounding mode or on compiler support for _Float16. */
#ifndef UK_TESTS_HALF_REF_H
#define UK_TESTS_HALF_REF_H

#include <stdint.h>
#include <string.h>

/* Rounds a double to a binary format with `mbits` stored mantissa bits and
 * `ebits` exponent bits (float16: 10, 5; bfloat16: 7, 8). */
static inline uint16_t hr_round_f64(double d, int mbits, int ebits) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  uint16_t sign = (uint16_t)((u >> 63) << 15);
  int exp = (int)((u >> 52) & 0x7ff);
  uint64_t man = u & ((1ull << 52) - 1);
  uint16_t inf = (uint16_t)(((1u << ebits) - 1) << mbits);
  if (exp == 0x7ff) return (uint16_t)(sign | inf | (man ? 1u << (mbits - 1) : 0));
  /* Zero, and double subnormals: far below half a subnormal of either format. */
  if (exp == 0) return sign;
  int bias = (1 << (ebits - 1)) - 1;
  int te = exp - 1023 + bias; /* target biased exponent */
  uint64_t sig = man | (1ull << 52);
  /* Bits to drop: keep mbits+1 for a normal result, fewer below the normal range. */
  int shift = 52 - mbits + (te >= 1 ? 0 : 1 - te);
  if (shift > 63) return sign;
  uint64_t kept = sig >> shift;
  uint64_t rem = sig & ((1ull << shift) - 1);
  uint64_t halfway = 1ull << (shift - 1);
  if (rem > halfway || (rem == halfway && (kept & 1))) kept++;
  if (te < 1) return (uint16_t)(sign | kept); /* a carry into bit mbits makes the min normal */
  if (kept >> (mbits + 1)) {
    kept >>= 1;
    te++;
  }
  if (te >= (1 << ebits) - 1) return (uint16_t)(sign | inf);
  return (uint16_t)(sign | ((uint32_t)te << mbits) | (kept & ((1u << mbits) - 1)));
}

static inline uint16_t hr_f64_to_f16(double d) { return hr_round_f64(d, 10, 5); }
static inline uint16_t hr_f64_to_bf16(double d) { return hr_round_f64(d, 7, 8); }
/* float -> double is exact, so this is a single rounding. */
static inline uint16_t hr_f32_to_f16(float f) { return hr_round_f64((double)f, 10, 5); }
static inline uint16_t hr_f32_to_bf16(float f) { return hr_round_f64((double)f, 7, 8); }

static inline float hr_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ffu, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13) | (man ? 0x400000u : 0);
  } else if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else { /* subnormal: normalise */
      int e = -1;
      do {
        man <<= 1;
        e++;
      } while (!(man & 0x400u));
      bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
    }
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static inline float hr_bf16_to_f32(uint16_t b) {
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static inline int hr_f16_isnan(uint16_t h) { return (h & 0x7fffu) > 0x7c00u; }
static inline int hr_bf16_isnan(uint16_t b) { return (b & 0x7fffu) > 0x7f80u; }

#endif
