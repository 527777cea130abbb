/* The host float16/bfloat16 reference (half_ref.h) that the GPU tests compare
 * against: known bit patterns, ties to even, subnormals, overflow, NaN, and
 * (where the compiler has _Float16) agreement with the compiler's conversion. */
#include <math.h>

#include "half_ref.h"
#include "testutil.h"

static float f32_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static uint32_t bits_f32(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static void test_f16_known(void) {
  static const struct {
    double v;
    uint16_t bits;
  } cases[] = {
      {1.0, 0x3C00},
      {-2.0, 0xC000},
      {0.5, 0x3800},
      {65504.0, 0x7BFF},                    /* max finite */
      {65519.99, 0x7BFF},                   /* just below the overflow tie */
      {65520.0, 0x7C00},                    /* tie between max and 2^16: even is inf */
      {-65520.0, 0xFC00},
      {1e10, 0x7C00},
      {5.96e-8, 0x0001},                    /* min subnormal, 2^-24 */
      {5.9604644775390625e-8, 0x0001},
      {2.98023223876953125e-8, 0x0000},     /* 2^-25: tie, even is 0 */
      {2.98023223876953126e-8 * 1.0000001, 0x0001},
      {8.94069671630859375e-8, 0x0002},     /* 3 * 2^-25: tie, even is 2 */
      {6.0975551605224609375e-5, 0x03FF},   /* max subnormal */
      {6.1005353927612305e-5, 0x0400},      /* 1023.5 * 2^-24: tie, rounds to min normal */
      {6.103515625e-5, 0x0400},             /* min normal 2^-14 */
      {1.00048828125, 0x3C00},              /* 1 + 2^-11: tie, even is 1.0 */
      {1.00146484375, 0x3C02},              /* 1 + 3*2^-11: tie, even is 1 + 2^-9 */
      {1.0004882812500002, 0x3C01},         /* just above the tie */
      {2049.0, 0x6800},                     /* 2048 + 1: tie, even is 2048 */
      {2051.0, 0x6802},
      {0.0, 0x0000},
      {-0.0, 0x8000},
      {INFINITY, 0x7C00},
      {-INFINITY, 0xFC00},
      {0.1, 0x2E66},
      {3.14159265358979, 0x4248},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    uint16_t got = hr_f64_to_f16(cases[k].v);
    if (got != cases[k].bits)
      fprintf(stderr, "f16(%.17g) = 0x%04X, expected 0x%04X\n", cases[k].v, got, cases[k].bits);
    CHECK(got == cases[k].bits);
    /* Every case is exact in float too except the one just-above-a-tie value. */
    if ((double)(float)cases[k].v == cases[k].v) CHECK(hr_f32_to_f16((float)cases[k].v) == cases[k].bits);
  }
  CHECK(hr_f16_isnan(hr_f64_to_f16(NAN)));
  CHECK(hr_f16_isnan(hr_f32_to_f16(-NAN)));
  CHECK((hr_f32_to_f16(-NAN) & 0x8000) != 0);
  CHECK(hr_f32_to_f16(f32_bits(0x7F800001u)) == 0x7E00); /* signalling NaN comes out quiet */
  /* Double rounding trap: 1 + 2^-11 + 2^-40 rounds up in one step, but to the
   * tie 1 + 2^-11 first through float (then to even, down). */
  CHECK(hr_f64_to_f16(1.0 + ldexp(1.0, -11) + ldexp(1.0, -40)) == 0x3C01);
  CHECK(hr_f32_to_f16((float)(1.0 + ldexp(1.0, -11) + ldexp(1.0, -40))) == 0x3C00);
}

static void test_bf16_known(void) {
  static const struct {
    double v;
    uint16_t bits;
  } cases[] = {
      {1.0, 0x3F80},
      {-1.0, 0xBF80},
      {1.00390625, 0x3F80},           /* 1 + 2^-8: tie, even is 1.0 */
      {1.01171875, 0x3F82},           /* 1 + 3*2^-8: tie, even is 1 + 2^-6 */
      {1.0039062500001, 0x3F81},
      {3.3895313892515355e38, 0x7F7F}, /* max finite */
      {3.3961775292304610e38, 0x7F80}, /* tie to 2^128: inf */
      {1e39, 0x7F80},
      {9.183549615799121e-41, 0x0001}, /* min subnormal, 2^-133 */
      {4.5917748078995606e-41, 0x0000}, /* 2^-134: tie, even is 0 */
      {1.1754943508222875e-38, 0x0080}, /* min normal 2^-126 */
      {3.140625, 0x4049},
      {0.0, 0x0000},
      {-0.0, 0x8000},
      {INFINITY, 0x7F80},
      {-INFINITY, 0xFF80},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    uint16_t got = hr_f64_to_bf16(cases[k].v);
    if (got != cases[k].bits)
      fprintf(stderr, "bf16(%.17g) = 0x%04X, expected 0x%04X\n", cases[k].v, got, cases[k].bits);
    CHECK(got == cases[k].bits);
  }
  CHECK(hr_bf16_isnan(hr_f32_to_bf16(NAN)));
  CHECK(hr_f32_to_bf16(f32_bits(0x7F800001u)) == 0x7FC0); /* quiet, not rounded to inf */
  CHECK(hr_f32_to_bf16(f32_bits(0xFF800001u)) == 0xFFC0);
  CHECK(hr_f32_to_bf16(f32_bits(0x7F7FFFFFu)) == 0x7F80); /* FLT_MAX rounds up to inf */
  CHECK(hr_f32_to_bf16(f32_bits(0x00008000u)) == 0x0000); /* subnormal tie to even 0 */
  CHECK(hr_f32_to_bf16(f32_bits(0x00018000u)) == 0x0002); /* subnormal tie to even 2 */
  CHECK(hr_bf16_to_f32(0x3F80) == 1.0f);
  CHECK(hr_bf16_to_f32(0xC049) == -3.140625f);
}

/* Every finite bit pattern decodes to a float that encodes back to itself;
 * the decoded values are strictly increasing over the positive patterns. */
static void test_round_trips(void) {
  int bad16 = 0, badb = 0, order = 0;
  for (uint32_t h = 0; h < 0x10000u; h++) {
    uint16_t b = (uint16_t)h;
    float f = hr_f16_to_f32(b);
    if (hr_f16_isnan(b) ? !isnan(f) : hr_f32_to_f16(f) != b) bad16++;
    float g = hr_bf16_to_f32(b);
    if (hr_bf16_isnan(b) ? !isnan(g) : hr_f32_to_bf16(g) != b) badb++;
    if (h > 0 && h < 0x7C00u && !(hr_f16_to_f32((uint16_t)(h - 1)) < f)) order++;
  }
  CHECK(bad16 == 0);
  CHECK(badb == 0);
  CHECK(order == 0);
  CHECK(hr_f16_to_f32(0x0001) == ldexpf(1.0f, -24));
  CHECK(hr_f16_to_f32(0x03FF) == ldexpf(1023.0f, -24));
  CHECK(hr_f16_to_f32(0x7BFF) == 65504.0f);
  CHECK(hr_f16_to_f32(0xFC00) == -INFINITY);
  CHECK(bits_f32(hr_f16_to_f32(0x8000)) == 0x80000000u);
}

/* Midpoints between neighbouring halves (exact in float): ties go to the even
 * neighbour, and one float ulp either side goes to the nearer one. */
static void test_midpoints(void) {
  int bad = 0;
  for (uint16_t h = 0; h < 0x7BFF; h++) {
    float lo = hr_f16_to_f32(h), hi = hr_f16_to_f32((uint16_t)(h + 1));
    float mid = (float)(((double)lo + (double)hi) / 2);
    uint16_t even = (h & 1) ? (uint16_t)(h + 1) : h;
    if (hr_f32_to_f16(mid) != even) bad++;
    if (hr_f32_to_f16(nextafterf(mid, 0.0f)) != h) bad++;
    if (hr_f32_to_f16(nextafterf(mid, INFINITY)) != h + 1) bad++;
    if (hr_f32_to_f16(-mid) != (even | 0x8000)) bad++;
  }
  CHECK(bad == 0);
}

#ifdef __FLT16_MAX__
/* Independent check against the compiler's own float/double -> _Float16. */
static void test_against_compiler(void) {
  int bad = 0;
  ut_seed(7);
  for (int k = 0; k < 2000000; k++) {
    float f = f32_bits((uint32_t)ut_rand());
    if (isnan(f)) continue;
    _Float16 h = (_Float16)f;
    uint16_t hb;
    memcpy(&hb, &h, 2);
    if (hb != hr_f32_to_f16(f)) bad++;
    double d = ldexp(ut_uniform(-1.0, 1.0), (int)(ut_rand() % 60) - 30);
    h = (_Float16)d;
    memcpy(&hb, &h, 2);
    if (hb != hr_f64_to_f16(d)) bad++;
  }
  CHECK(bad == 0);
}
#endif

int main(void) {
  test_f16_known();
  test_bf16_known();
  test_round_trips();
  test_midpoints();
#ifdef __FLT16_MAX__
  test_against_compiler();
#else
  printf("note: no _Float16 in this compiler; skipped the cross-check\n");
#endif
  return ut_finish("test_half_ref");
}
