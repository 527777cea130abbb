/* ukern::half and ukern::bfloat16 on a GPU, bit-exact against the host
 * reference (half_ref.h): conversions from float, double and integers (every
 * input class: NaN, inf, zeros, subnormals, overflow, ties, double-rounding
 * traps), to float/double for all 65536 patterns, the four operations and
 * (x - y) * (x - y) on random patterns, mixed operations and comparisons.
 * Outputs are poisoned with a finite pattern; NaN results may be any NaN. */
#include <math.h>

#include "half_ref.h"
#include "testutil.h"

static uk_context *ctx;
static uk_module *mod;

static const char *src =
    "#include <ukern/half.cuh>\n"
    "using ukern::half;\n"
    "using ukern::bfloat16;\n"
    "#define LOOP for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; \\\n"
    "                 i += (long long)blockDim.x * gridDim.x)\n"
    "template <typename T> __device__ T sqdiff(T a, T b) { return (a - b) * (a - b); }\n"
    "extern \"C\" __global__ void from_f32(const float *x, half *h, bfloat16 *b, long long n) {\n"
    "  LOOP { h[i] = x[i]; b[i] = bfloat16(x[i]); }\n"
    "}\n"
    "extern \"C\" __global__ void from_f64(const double *x, half *h, bfloat16 *b, long long n) {\n"
    "  LOOP { h[i] = x[i]; b[i] = bfloat16(x[i]); }\n"
    "}\n"
    "extern \"C\" __global__ void from_int(const long long *s64, const unsigned long long *u64,\n"
    "                                      const int *s32, const unsigned *u32,\n"
    "                                      half *h, bfloat16 *b, long long n) {\n"
    "  LOOP {\n"
    "    h[i] = s64[i]; h[n + i] = u64[i]; h[2 * n + i] = s32[i]; h[3 * n + i] = u32[i];\n"
    "    b[i] = s64[i]; b[n + i] = u64[i]; b[2 * n + i] = s32[i]; b[3 * n + i] = u32[i];\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void widen(float *hf, double *hd, float *bf, double *bd, long long n) {\n"
    "  LOOP {\n"
    "    half h = half::from_bits((unsigned short)i);\n"
    "    bfloat16 b = bfloat16::from_bits((unsigned short)i);\n"
    "    hf[i] = h; hd[i] = h; bf[i] = ukern::to_float(b); bd[i] = (double)b;\n"
    "  }\n"
    "}\n"
    "template <class H> __device__ void ops(const H *x, const H *y, H *o, long long n) {\n"
    "  LOOP {\n"
    "    H a = x[i], b = y[i];\n"
    "    o[i] = a + b; o[n + i] = a - b; o[2 * n + i] = a * b; o[3 * n + i] = a / b;\n"
    "    o[4 * n + i] = sqdiff(a, b); o[5 * n + i] = -a;\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void ops_half(const half *x, const half *y, half *o, long long n) {\n"
    "  ops(x, y, o, n);\n"
    "}\n"
    "extern \"C\" __global__ void ops_bf16(const bfloat16 *x, const bfloat16 *y, bfloat16 *o, long long n) {\n"
    "  ops(x, y, o, n);\n"
    "}\n"
    "extern \"C\" __global__ void mixed(const half *x, const half *y, half *h, float *f, double *d,\n"
    "                                  int *flags, long long n) {\n"
    "  LOOP {\n"
    "    half a = x[i], b = y[i];\n"
    "    h[i] = a * 3; h[n + i] = 1 - a;\n"
    "    half c = a; c += 0.1; h[2 * n + i] = c;\n"
    "    f[i] = a + 1.5f; f[n + i] = 2.5f * a;\n"
    "    d[i] = a * 0.1;\n"
    "    flags[i] = (a < b) | (a == b) << 1 | (a > b) << 2 | (a != b) << 3 | (a <= b) << 4 |\n"
    "               (a >= b) << 5 | (a < 0) << 6 | ukern::isnan(a) << 7 | isinf(a) << 8 |\n"
    "               (bool)a << 9 | (a >= 0.5) << 10 | (2.0f > a) << 11;\n"
    "  }\n"
    "}\n";

/* ---- helpers ---------------------------------------------------------------- */

static uint64_t dev_alloc(size_t bytes) {
  int64_t n = (int64_t)bytes;
  uk_array a;
  memset(&a, 0, sizeof a);
  CHECK_OK(uk_array_alloc(ctx, UK_UINT8, 1, &n, 0, NULL, &a));
  return a.data;
}

static void dev_free(uint64_t p) {
  uk_array a;
  memset(&a, 0, sizeof a);
  a.data = p;
  a.dtype = UK_UINT8;
  a.ndim = 1;
  a.shape[0] = 1;
  a.strides[0] = 1;
  uk_array_free(ctx, &a, NULL);
}

static uint64_t upload(const void *p, size_t bytes) {
  uint64_t d = dev_alloc(bytes);
  if (d) CHECK_OK(uk_memcpy_htod(d, p, bytes));
  return d;
}

/* A device buffer filled with 0x5A bytes: a finite value in every format, so
 * an unwritten element never passes for an expected NaN. */
static uint64_t poisoned(size_t bytes) {
  uint64_t d = dev_alloc(bytes);
  unsigned char *p = malloc(bytes);
  if (p && d) {
    memset(p, 0x5A, bytes);
    CHECK_OK(uk_memcpy_htod(d, p, bytes));
  }
  free(p);
  return d;
}

static void *download(uint64_t d, size_t bytes) {
  void *p = malloc(bytes);
  if (p) CHECK_OK(uk_memcpy_dtoh(p, d, bytes));
  return p;
}

static void launch(const char *name, void **args) {
  uk_function *f = NULL;
  CHECK_OK(uk_module_function(mod, name, &f));
  if (!f) return;
  uk_grid_launch g = {{1024, 1, 1}, {256, 1, 1}, 0, NULL, 0, {0, 0, 0}};
  /* NULL stream: the synchronous copies that read the results wait for it. */
  CHECK_OK(uk_function_launch(f, &g, (void *const *)args));
}

/* Bit-exact, except that an expected NaN accepts any NaN. */
static int same16(uint16_t got, uint16_t want, int (*isnan16)(uint16_t)) {
  return isnan16(want) ? isnan16(got) : got == want;
}

static int report(const char *what, long long bad, long long n) {
  if (bad) fprintf(stderr, "%s: %lld of %lld wrong\n", what, bad, n);
  return bad == 0;
}

static float f32_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* Correct rounding of a 64-bit integer: round to odd at 53 bits (exact in a
 * double), then once to nearest even at 11 or 8 bits. */
static double u64_to_odd_double(uint64_t m) {
  if (m < (1ull << 53)) return (double)m;
  int sh = 64 - __builtin_clzll(m) - 53;
  uint64_t top = m >> sh;
  if (m & ((1ull << sh) - 1)) top |= 1;
  return ldexp((double)top, sh);
}

static double s64_to_odd_double(int64_t v) {
  return v < 0 ? -u64_to_odd_double(0 - (uint64_t)v) : u64_to_odd_double((uint64_t)v);
}

/* ---- conversions in ---------------------------------------------------------- */

/* Floats of every class: random bit patterns (all exponents), values in the
 * half range, exact midpoints between neighbouring halves / bfloat16s (ties)
 * and one float ulp either side, subnormal halves, the overflow edge,
 * specials. */
static float interesting_float(long long i) {
  static const uint32_t specials[] = {
      0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u,
      0x7F800001u, 0x477FE000u /* 65504 */, 0x477FEFFFu, 0x477FF000u /* 65520 */,
      0xC77FF000u, 0x33800000u /* 2^-24 */, 0x33000000u /* 2^-25 tie */, 0x33000001u,
      0x387FC000u /* max subnormal half */, 0x7F7FFFFFu, 0x00000001u, 0x3F808000u /* bf16 tie */,
      0x3F818000u, 0x3F800001u};
  size_t ns = sizeof specials / sizeof specials[0];
  if (i < (long long)ns) return f32_bits(specials[i]);
  uint64_t r = ut_rand();
  switch (r % 6) {
  case 0: return f32_bits((uint32_t)(r >> 32));
  case 1: return (float)ut_uniform(-70000.0, 70000.0);
  case 2: { /* a half midpoint, maybe nudged by one float ulp */
    uint16_t h = (uint16_t)((r >> 8) % 0x7BFF);
    float lo = hr_f16_to_f32(h), hi = hr_f16_to_f32((uint16_t)(h + 1));
    float mid = (float)(((double)lo + (double)hi) / 2);
    int nudge = (int)((r >> 40) % 3);
    if (nudge == 1) mid = nextafterf(mid, 0.0f);
    if (nudge == 2) mid = nextafterf(mid, INFINITY);
    return (r >> 63) ? -mid : mid;
  }
  case 3: { /* a bfloat16 midpoint: low 16 bits 0x8000, maybe nudged */
    uint32_t u = ((uint32_t)(r >> 32) & 0xFFFF0000u) | 0x8000u;
    if ((u & 0x7F800000u) == 0x7F800000u) u &= 0xBFFFFFFFu; /* keep it finite */
    u += (uint32_t)((r >> 8) % 3) - 1u;
    return f32_bits(u);
  }
  case 4: return (float)ldexp(ut_uniform(-1.0, 1.0), -14 - (int)((r >> 8) % 12)); /* subnormal halves */
  default: return (float)ut_uniform(65000.0, 66000.0) * ((r >> 63) ? -1.0f : 1.0f);
  }
}

static void test_from_f32(void) {
  long long n = 1 << 20;
  float *x = malloc((size_t)n * sizeof *x);
  for (long long i = 0; i < n; i++) x[i] = interesting_float(i);
  uint64_t dx = upload(x, (size_t)n * 4), dh = poisoned((size_t)n * 2), db = poisoned((size_t)n * 2);
  void *args[] = {&dx, &dh, &db, &n};
  launch("from_f32", args);
  uint16_t *h = download(dh, (size_t)n * 2), *b = download(db, (size_t)n * 2);
  long long bad_h = 0, bad_b = 0;
  for (long long i = 0; h && b && i < n; i++) {
    if (!same16(h[i], hr_f32_to_f16(x[i]), hr_f16_isnan)) {
      if (bad_h++ < 5) fprintf(stderr, "half(%a) = 0x%04X, want 0x%04X\n", x[i], h[i], hr_f32_to_f16(x[i]));
    }
    if (!same16(b[i], hr_f32_to_bf16(x[i]), hr_bf16_isnan)) {
      if (bad_b++ < 5) fprintf(stderr, "bfloat16(%a) = 0x%04X, want 0x%04X\n", x[i], b[i], hr_f32_to_bf16(x[i]));
    }
  }
  CHECK(h && b && report("float -> half", bad_h, n));
  CHECK(h && b && report("float -> bfloat16", bad_b, n));
  free(x);
  free(h);
  free(b);
  dev_free(dx);
  dev_free(dh);
  dev_free(db);
}

/* Doubles, with the double-rounding traps: just above a tie of the 16-bit
 * format, where rounding to float first would land on the tie. */
static void test_from_f64(void) {
  long long n = 1 << 18;
  double *x = malloc((size_t)n * sizeof *x);
  for (long long i = 0; i < n; i++) {
    uint64_t r = ut_rand();
    switch (r % 4) {
    case 0: x[i] = (double)interesting_float(i); break;
    case 1: { /* half tie +- 2^-40 relative */
      float lo = hr_f16_to_f32((uint16_t)((r >> 8) % 0x7BFF));
      double mid = (double)lo + ldexp(1.0, ilogb(lo == 0 ? 1e-7f : lo) - 11);
      x[i] = mid * (1.0 + ((r >> 62) & 1 ? 1 : -1) * ldexp(1.0, -40));
      break;
    }
    case 2: { /* bfloat16 tie +- a tiny amount */
      double mid = (double)f32_bits(((uint32_t)(r >> 32) & 0x7F7F0000u) | 0x8000u);
      x[i] = mid * (1.0 + ((r >> 62) & 1 ? 1 : -1) * ldexp(1.0, -45));
      break;
    }
    default: { uint64_t u = r; memcpy(&x[i], &u, 8); } /* any double: huge, tiny, NaN */
    }
  }
  x[0] = 1.0 + ldexp(1.0, -11) + ldexp(1.0, -40); /* half 0x3C01; via float 0x3C00 */
  x[1] = 1.0 + ldexp(1.0, -8) + ldexp(1.0, -40);  /* bf16 0x3F81; via float 0x3F80 */
  x[2] = 1e300;
  x[3] = -1e-300;
  uint64_t dx = upload(x, (size_t)n * 8), dh = poisoned((size_t)n * 2), db = poisoned((size_t)n * 2);
  void *args[] = {&dx, &dh, &db, &n};
  launch("from_f64", args);
  uint16_t *h = download(dh, (size_t)n * 2), *b = download(db, (size_t)n * 2);
  long long bad_h = 0, bad_b = 0;
  for (long long i = 0; h && b && i < n; i++) {
    if (!same16(h[i], hr_f64_to_f16(x[i]), hr_f16_isnan) && bad_h++ < 5)
      fprintf(stderr, "half(%a) = 0x%04X, want 0x%04X\n", x[i], h[i], hr_f64_to_f16(x[i]));
    if (!same16(b[i], hr_f64_to_bf16(x[i]), hr_bf16_isnan) && bad_b++ < 5)
      fprintf(stderr, "bfloat16(%a) = 0x%04X, want 0x%04X\n", x[i], b[i], hr_f64_to_bf16(x[i]));
  }
  CHECK(h && h[0] == 0x3C01 && b && b[1] == 0x3F81);
  CHECK(h && b && report("double -> half", bad_h, n));
  CHECK(h && b && report("double -> bfloat16", bad_b, n));
  free(x);
  free(h);
  free(b);
  dev_free(dx);
  dev_free(dh);
  dev_free(db);
}

static void test_from_int(void) {
  long long n = 1 << 16;
  int64_t *s64 = malloc((size_t)n * 8);
  uint64_t *u64 = malloc((size_t)n * 8);
  int32_t *s32 = malloc((size_t)n * 4);
  uint32_t *u32 = malloc((size_t)n * 4);
  for (long long i = 0; i < n; i++) {
    uint64_t r = ut_rand();
    /* every magnitude, both signs (negated in unsigned arithmetic: no overflow) */
    uint64_t m64 = ut_rand() >> (r % 64);
    s64[i] = (int64_t)((r >> 40) & 1 ? 0 - m64 : m64);
    u64[i] = ut_rand() >> ((r >> 8) % 64);
    uint32_t m32 = (uint32_t)(ut_rand() >> (32 + (r >> 16) % 32));
    s32[i] = (int32_t)((r >> 30) & 1 ? 0u - m32 : m32);
    u32[i] = (uint32_t)(ut_rand() >> (32 + (r >> 24) % 32));
  }
  /* Ties and near-ties that a float or double intermediate would break wrongly. */
  s64[0] = (int64_t)((1ull << 62) + (1ull << 54) + 1); /* bf16: just above a tie */
  s64[1] = INT64_MIN;
  s64[2] = 65520;  /* half: tie to inf */
  s64[3] = -65519; /* half: rounds to -65504 */
  u64[0] = UINT64_MAX;
  u64[1] = (1ull << 63) + (1ull << 55) + 1;
  s32[0] = 2049;   /* half tie: 2048 */
  s32[1] = 0x01010001;     /* bf16: just above a tie; through float it rounds down */
  s32[2] = INT32_MIN;
  u32[0] = UINT32_MAX;
  uint64_t ds64 = upload(s64, (size_t)n * 8), du64 = upload(u64, (size_t)n * 8);
  uint64_t ds32 = upload(s32, (size_t)n * 4), du32 = upload(u32, (size_t)n * 4);
  uint64_t dh = poisoned((size_t)n * 8), db = poisoned((size_t)n * 8);
  void *args[] = {&ds64, &du64, &ds32, &du32, &dh, &db, &n};
  launch("from_int", args);
  uint16_t *h = download(dh, (size_t)n * 8), *b = download(db, (size_t)n * 8);
  long long bad = 0;
  for (long long i = 0; h && b && i < n; i++) {
    double v[4] = {s64_to_odd_double(s64[i]), u64_to_odd_double(u64[i]), (double)s32[i],
                   (double)u32[i]};
    for (int k = 0; k < 4; k++) {
      uint16_t wh = hr_f64_to_f16(v[k]), wb = hr_f64_to_bf16(v[k]);
      uint16_t gh = h[k * n + i], gb = b[k * n + i];
      if ((gh != wh || gb != wb) && bad++ < 5)
        fprintf(stderr, "int kind %d #%lld (%.17g): half 0x%04X want 0x%04X, bf16 0x%04X want 0x%04X\n",
                k, i, v[k], gh, wh, gb, wb);
    }
  }
  CHECK(h && b && report("integers -> half/bfloat16", bad, 4 * n));
  CHECK(h && h[2 * n] == 0x6800 && h[2] == 0x7C00);
  free(s64);
  free(u64);
  free(s32);
  free(u32);
  free(h);
  free(b);
  dev_free(ds64);
  dev_free(du64);
  dev_free(ds32);
  dev_free(du32);
  dev_free(dh);
  dev_free(db);
}

/* ---- conversions out: all 65536 patterns ------------------------------------ */

static void test_widen(void) {
  long long n = 65536;
  uint64_t dhf = poisoned((size_t)n * 4), dhd = poisoned((size_t)n * 8);
  uint64_t dbf = poisoned((size_t)n * 4), dbd = poisoned((size_t)n * 8);
  void *args[] = {&dhf, &dhd, &dbf, &dbd, &n};
  launch("widen", args);
  float *hf = download(dhf, (size_t)n * 4), *bf = download(dbf, (size_t)n * 4);
  double *hd = download(dhd, (size_t)n * 8), *bd = download(dbd, (size_t)n * 8);
  long long bad = 0;
  for (long long i = 0; hf && bf && hd && bd && i < n; i++) {
    uint16_t u = (uint16_t)i;
    float wh = hr_f16_to_f32(u), wb = hr_bf16_to_f32(u);
    int ok;
    if (hr_f16_isnan(u)) ok = isnan(hf[i]) && isnan(hd[i]);
    else ok = memcmp(&hf[i], &wh, 4) == 0 && hd[i] == (double)wh && !signbit(hd[i]) == !signbit(wh);
    if (hr_bf16_isnan(u)) ok = ok && isnan(bf[i]) && isnan(bd[i]);
    else ok = ok && memcmp(&bf[i], &wb, 4) == 0 && bd[i] == (double)wb && !signbit(bd[i]) == !signbit(wb);
    if (!ok && bad++ < 5)
      fprintf(stderr, "widen 0x%04llX: half %a / %a want %a; bf16 %a / %a want %a\n", i, hf[i], hd[i],
              wh, bf[i], bd[i], wb);
  }
  CHECK(hf && report("half/bfloat16 -> float/double (all patterns)", bad, n));
  free(hf);
  free(bf);
  free(hd);
  free(bd);
  dev_free(dhf);
  dev_free(dhd);
  dev_free(dbf);
  dev_free(dbd);
}

/* ---- arithmetic ----------------------------------------------------------------- */

typedef struct fmt {
  const char *name, *kernel;
  float (*to_f32)(uint16_t);
  uint16_t (*from_f64)(double);
  int (*isnan16)(uint16_t);
} fmt;

/* x op y on random bit patterns (every class) is the exactly rounded result;
 * (x - y) * (x - y) rounds the difference first, as the device does. */
static void test_ops(const fmt *F) {
  long long n = 1 << 20;
  uint16_t *x = malloc((size_t)n * 2), *y = malloc((size_t)n * 2);
  for (long long i = 0; i < n; i++) {
    uint64_t r = ut_rand();
    x[i] = (uint16_t)r;
    y[i] = (uint16_t)(r >> 16);
    if ((r >> 32) % 4 == 0) y[i] = (uint16_t)((x[i] & 0x8000u) | ((r >> 40) & 0x7FFFu)); /* same sign */
  }
  uint64_t dx = upload(x, (size_t)n * 2), dy = upload(y, (size_t)n * 2), dout = poisoned((size_t)n * 12);
  void *args[] = {&dx, &dy, &dout, &n};
  launch(F->kernel, args);
  uint16_t *o = download(dout, (size_t)n * 12);
  static const char *names[] = {"+", "-", "*", "/", "(x-y)*(x-y)", "unary -"};
  long long bad[6] = {0};
  for (long long i = 0; o && i < n; i++) {
    double a = F->to_f32(x[i]), b = F->to_f32(y[i]);
    uint16_t t = F->from_f64(a - b);
    double td = F->to_f32(t);
    uint16_t want[6] = {F->from_f64(a + b), t, F->from_f64(a * b), F->from_f64(a / b),
                        F->from_f64(td * td), (uint16_t)(x[i] ^ 0x8000u)};
    for (int k = 0; k < 6; k++) {
      uint16_t got = o[k * n + i];
      int ok = k == 5 ? got == want[k] : same16(got, want[k], F->isnan16);
      if (!ok && bad[k]++ < 3)
        fprintf(stderr, "%s: 0x%04X %s 0x%04X = 0x%04X, want 0x%04X\n", F->name, x[i], names[k],
                y[i], got, want[k]);
    }
  }
  for (int k = 0; k < 6; k++) {
    char what[64];
    snprintf(what, sizeof what, "%s %s", F->name, names[k]);
    CHECK(o && report(what, bad[k], n));
  }
  free(x);
  free(y);
  free(o);
  dev_free(dx);
  dev_free(dy);
  dev_free(dout);
}

/* Mixed operands promote like a float type below float: half op int -> half,
 * half op float -> float, half op double -> double; comparisons with NaN. */
static void test_mixed(void) {
  long long n = 1 << 18;
  uint16_t *x = malloc((size_t)n * 2), *y = malloc((size_t)n * 2);
  for (long long i = 0; i < n; i++) {
    uint64_t r = ut_rand();
    x[i] = (uint16_t)r;
    y[i] = (r >> 32) % 8 == 0 ? x[i] : (uint16_t)(r >> 16); /* some equal pairs */
  }
  x[0] = 0x8000; /* -0 == +0 */
  y[0] = 0x0000;
  uint64_t dx = upload(x, (size_t)n * 2), dy = upload(y, (size_t)n * 2);
  uint64_t dh = poisoned((size_t)n * 6), df = poisoned((size_t)n * 8), dd = poisoned((size_t)n * 8);
  uint64_t dflags = poisoned((size_t)n * 4);
  void *args[] = {&dx, &dy, &dh, &df, &dd, &dflags, &n};
  launch("mixed", args);
  uint16_t *h = download(dh, (size_t)n * 6);
  float *f = download(df, (size_t)n * 8);
  double *d = download(dd, (size_t)n * 8);
  int *flags = download(dflags, (size_t)n * 4);
  long long bad = 0;
  for (long long i = 0; h && f && d && flags && i < n; i++) {
    float a = hr_f16_to_f32(x[i]), b = hr_f16_to_f32(y[i]);
    uint16_t wh[3] = {hr_f64_to_f16((double)a * 3), hr_f64_to_f16(1 - (double)a),
                      hr_f64_to_f16((double)a + 0.1)};
    volatile float f0 = a + 1.5f, f1 = 2.5f * a; /* IEEE single on the host too */
    double d0 = (double)a * 0.1;
    int wflags = (a < b) | (a == b) << 1 | (a > b) << 2 | (a != b) << 3 | (a <= b) << 4 |
                 (a >= b) << 5 | (a < 0) << 6 | (isnan(a) != 0) << 7 | (isinf(a) != 0) << 8 |
                 (a != 0) << 9 | (a >= 0.5) << 10 | (2.0f > a) << 11;
    int ok = flags[i] == wflags;
    for (int k = 0; k < 3; k++) ok = ok && same16(h[k * n + i], wh[k], hr_f16_isnan);
    float wf[2] = {f0, f1};
    for (int k = 0; k < 2; k++)
      ok = ok && (isnan(wf[k]) ? isnan(f[k * n + i]) : memcmp(&f[k * n + i], &wf[k], 4) == 0);
    ok = ok && (isnan(d0) ? isnan(d[i]) : d[i] == d0);
    if (!ok && bad++ < 5)
      fprintf(stderr, "mixed x=0x%04X y=0x%04X: h %04X %04X %04X (want %04X %04X %04X) f %a %a (want %a %a) "
              "d %a (want %a) flags 0x%x (want 0x%x)\n", x[i], y[i], h[i], h[n + i], h[2 * n + i], wh[0],
              wh[1], wh[2], f[i], f[n + i], wf[0], wf[1], d[i], d0, flags[i], wflags);
  }
  CHECK(flags && (flags[0] & 2) && report("mixed operations and comparisons", bad, n));
  free(x);
  free(y);
  free(h);
  free(f);
  free(d);
  free(flags);
  dev_free(dx);
  dev_free(dy);
  dev_free(dh);
  dev_free(df);
  dev_free(dd);
  dev_free(dflags);
}

int main(void) {
  ut_require_gpu();
  ut_seed(20240601);
  CHECK_OK(uk_context_create(NULL, &ctx));
  if (ctx) CHECK_OK(uk_module_from_source(ctx, src, NULL, &mod));
  if (mod) {
    test_from_f32();
    test_from_f64();
    test_from_int();
    test_widen();
    static const fmt f16 = {"half", "ops_half", hr_f16_to_f32, hr_f64_to_f16, hr_f16_isnan};
    static const fmt bf16 = {"bfloat16", "ops_bf16", hr_bf16_to_f32, hr_f64_to_bf16, hr_bf16_isnan};
    test_ops(&f16);
    test_ops(&bf16);
    test_mixed();
  }
  uk_module_destroy(mod);
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_half");
}
