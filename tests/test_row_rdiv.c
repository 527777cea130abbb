/* The row kernel's float32 division by a row's value (_uk_rdiv,
 * templates/ukern/fusion_row.cuh), replayed on the host in the same
 * IEEE operations (C's fmaf is one rounding, like FFMA): r = RN(1 / b)
 * once, then q = RN(a r), RN(q + RN(a - b q) r) must be RN(a / b) for a
 * and b within the range the kernel sends that way (2^-62 .. 2^63 in
 * magnitude). Every float32 mantissa of b against random a on each side
 * of it, then the range's corners. RN(a / b) and RN(1 / b) come from
 * double division (53 >= 2 x 24 + 2 bits: rounding twice is harmless).
 * test_gpu_fusion_rows checks the device's own code bit for bit. */
#include <math.h>

#include "testutil.h"

static float bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static int rdiv_ok(float a, float b) {
  float r = (float)(1.0 / (double)b), q = a * r, got = fmaf(fmaf(-b, q, a), r, q);
  float want = (float)((double)a / (double)b);
  if (got == want) return 1;
  fprintf(stderr, "%a / %a: %a, the division %a\n", a, b, got, want);
  return 0;
}

int main(void) {
  ut_seed(25);
  int bad = 0;
  /* b in [1, 2): every mantissa; a in [0.5, 4) at random, and 1 and the
   * largest mantissa (the scale does not matter inside the range) */
  for (uint32_t m = 0; m < (1u << 23) && bad < 5; m++) {
    float b = bits(0x3f800000u | m);
    for (int k = 0; k < 4; k++) {
      uint64_t u = ut_rand();
      float a = k == 0 ? 1.0f : k == 1 ? bits(0x3fffffffu) : bits(((uint32_t)(126 + u % 3) << 23) | (uint32_t)(u >> 8 & 0x7fffff));
      bad += !rdiv_ok(a, b);
    }
  }
  /* the corners: a and b at 2^-62 and just below 2^63, both signs */
  static const int ex[] = {-62, -61, -1, 0, 61, 62};
  for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++)
    for (size_t j = 0; j < sizeof ex / sizeof ex[0]; j++)
      for (int k = 0; k < 20000; k++) {
        uint64_t u = ut_rand();
        float a = ldexpf(bits(0x3f800000u | (uint32_t)(u & 0x7fffff)), ex[i]);
        float b = ldexpf(bits(0x3f800000u | (uint32_t)(u >> 23 & 0x7fffff)), ex[j]);
        bad += !rdiv_ok(u >> 60 & 1 ? -a : a, u >> 61 & 1 ? -b : b);
      }
  ut_checks++;
  if (bad) ut_failures++;
  return ut_finish("test_row_rdiv");
}
