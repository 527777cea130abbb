/* ukern/half.cuh compiles with NVRTC (sm_90 and the fallback paths of older
 * archs), alone and with ukern/complex.cuh, in every C++ dialect we support,
 * with an empty log; every operator and conversion is exercised; the PTX uses
 * the single-rounding conversions; and NVRTC time of a small elementwise
 * half kernel is measured. Runs without a GPU. */
#include <nvrtc.h>
#include <time.h>

#include "base/embedded.h"
#include "testutil.h"

static const char *hdr_names[2] = {"ukern/half.cuh", "ukern/complex.cuh"};
static const char *hdr_text[2];

/* Compiles `src`; returns the NVRTC result and (if wanted) the PTX and the
 * compile time. Prints the log on failure; counts a non-empty log as a
 * failure too (warnings included). */
static nvrtcResult compile(const char *what, const char *src, const char *arch, const char *std,
                           char **ptx, double *ms) {
  nvrtcProgram p = NULL;
  const char *opts[3];
  int n = 0;
  char *log = NULL;
  opts[n++] = arch;
  if (std) opts[n++] = std;
  nvrtcResult r = nvrtcCreateProgram(&p, src, what, 2, hdr_text, hdr_names);
  if (r != NVRTC_SUCCESS) goto out;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  r = nvrtcCompileProgram(p, n, opts);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (ms) *ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
  size_t log_size = 0;
  nvrtcGetProgramLogSize(p, &log_size);
  log = calloc(1, log_size + 1);
  if (log) nvrtcGetProgramLog(p, log);
  int quiet = log && strspn(log, " \n\r\t") == strlen(log);
  if (r != NVRTC_SUCCESS || !quiet)
    fprintf(stderr, "%s (%s %s): %s\n%s\n", what, arch, std ? std : "", nvrtcGetErrorString(r),
            log ? log : "");
  if (!quiet && r == NVRTC_SUCCESS) r = NVRTC_ERROR_COMPILATION;
  if (r == NVRTC_SUCCESS && ptx) {
    size_t size = 0;
    nvrtcGetPTXSize(p, &size);
    *ptx = calloc(1, size + 1);
    if (*ptx) nvrtcGetPTX(p, *ptx);
  }
out:
  free(log);
  nvrtcDestroyProgram(&p);
  return r;
}

/* Every operator, conversion and helper, for H = half and bfloat16, in the
 * forms user kernels write them (mixed with literals of every type). */
static const char *exercise_src =
    "#include <ukern/half.cuh>\n"
    "HEADER2\n"
    "using ukern::half;\n"
    "using ukern::bfloat16;\n"
    "static_assert(sizeof(half) == 2 && alignof(half) == 2, \"size\");\n"
    "static_assert(sizeof(bfloat16) == 2 && alignof(bfloat16) == 2, \"size\");\n"
    "static_assert(__is_trivially_copyable(half) && __is_trivially_copyable(bfloat16), \"pod\");\n"
    "static_assert(__has_trivial_constructor(half) && __has_trivial_constructor(bfloat16), \"pod\");\n"
    "template <typename T> __device__ T sqdiff(T a, T b) { return (a - b) * (a - b); }\n"
    "template <class A, class B> struct same { static const bool value = false; };\n"
    "template <class A> struct same<A, A> { static const bool value = true; };\n"
    "#define TYPE_IS(e, T) static_assert(same<decltype(e), T>::value, #e)\n"
    "template <class H, class O>\n"
    "__device__ void exercise(const H *x, H *y, float *f, double *d, long long *k, O *o) {\n"
    "  H a = x[0], b = x[1];\n"
    "  /* construction from every built-in type, and defaults */\n"
    "  H c0; c0 = 1.5f; H c1 = 2.5; H c2 = 3; H c3 = 4u; H c4 = 5LL; H c5 = 6ull;\n"
    "  H c6 = (short)7; H c7 = (unsigned char)8; H c8 = true; H c9 = 9L; H c10{0.25f};\n"
    "  H c11 = H(2) ; H c12(1ul); H c13 = (signed char)-1; H c14 = 'a';\n"
    "  y[0] = c0 + c1 + c2 + c3 + c4 + c5 + c6 + c7 + c8 + c9 + c10 + c11 + c12 + c13 + c14;\n"
    "  /* H op H stays H; mixed promote like a float type below float */\n"
    "  TYPE_IS(a + b, H); TYPE_IS(a - b, H); TYPE_IS(a * b, H); TYPE_IS(a / b, H);\n"
    "  TYPE_IS(a * 2, H); TYPE_IS(2 * a, H); TYPE_IS(a + 1u, H); TYPE_IS(a - 3LL, H);\n"
    "  TYPE_IS(a / (char)2, H); TYPE_IS(true + a, H);\n"
    "  TYPE_IS(a + 1.5f, float); TYPE_IS(1.5f - a, float); TYPE_IS(a * 2.0, double);\n"
    "  TYPE_IS(2.0 / a, double); TYPE_IS(a + o[0], float); TYPE_IS(o[0] * a, float);\n"
    "  TYPE_IS(a < b, bool); TYPE_IS(a < 0, bool); TYPE_IS(0.5 >= a, bool); TYPE_IS(-a, H);\n"
    "  TYPE_IS(sqdiff(a, b), H); TYPE_IS(abs(a), H); TYPE_IS(ukern::fabs(a), H);\n"
    "  TYPE_IS(ukern::to_float(a), float);\n"
    "  y[1] = a + b; y[2] = a - b; y[3] = a * b; y[4] = a / b; y[5] = -a; y[6] = +a;\n"
    "  y[7] = sqdiff(a, b); y[8] = a * 2; y[9] = 2 * a; y[10] = a + 1.5f; y[11] = a - 1.5;\n"
    "  y[12] = 1 - a; y[13] = 0.5f / a; y[14] = a / 3u; y[15] = H(o[0]) + a;\n"
    "  H c = a; c += b; c -= 1; c *= 2.0f; c /= 3.0; c += o[0]; c -= 7LL; c *= (short)2;\n"
    "  ++c; c++; --c; c--; y[16] = c;\n"
    "  /* comparisons, with NaN semantics from float */\n"
    "  k[0] = (a == b) + 2 * (a != b) + 4 * (a < b) + 8 * (a <= b) + 16 * (a > b) + 32 * (a >= b);\n"
    "  k[1] = (a == 0) + (0 != a) + (a < 1.5f) + (2.5 <= a) + (a > 1u) + (-1LL >= a) + (a < o[0]);\n"
    "  k[2] = (o[0] == a) + (o[0] != a) + (o[0] < a) + (o[0] <= a) + (o[0] > a) + (o[0] >= a);\n"
    "  /* conversions out */\n"
    "  float fa = a; double da = a; f[0] = fa; d[0] = da; d[1] = (double)a; d[2] = static_cast<double>(b);\n"
    "  k[3] = (int)a + (long long)b + (unsigned)a + static_cast<short>(b) + (unsigned char)a;\n"
    "  k[4] = (bool)a + (a ? 1 : 0) + (!b ? 2 : 0) + (a && b) + (a || b);\n"
    "  f[1] = sqrtf(a) + exp(b) + sqrt(a) + fabsf(a) + powf(a, 2) + max(a, b) + fminf(a, b);\n"
    "  f[2] = float(a) + ukern::to_float(b);\n"
    "  /* helpers, qualified and through ADL */\n"
    "  k[5] = ukern::isnan(a) + 2 * isinf(b) + 4 * isfinite(a) + 8 * signbit(b);\n"
    "  y[17] = abs(a); y[18] = fabs(b); y[19] = H::from_bits((unsigned short)0x3c00);\n"
    "  /* conditionals with both arms of one type */\n"
    "  y[20] = a > b ? a : b; y[21] = a > 0 ? a : H(0); y[22] = a.bits ? H(1) : b;\n"
    "  /* cross type: explicit conversion, mixed arithmetic in float */\n"
    "  O oa = O(a); o[1] = oa; TYPE_IS(oa + a, float); f[3] = a * oa - oa / a;\n"
    "  H acc = 0; for (int j = 0; j < 4; j++) acc += x[j]; y[23] = acc;\n"
    "  volatile float vf = a; y[24] = vf;\n"
    "}\n"
    "extern \"C\" __global__ void ex_half(const half *x, half *y, float *f, double *d, long long *k, bfloat16 *o) {\n"
    "  exercise(x, y, f, d, k, o);\n"
    "}\n"
    "extern \"C\" __global__ void ex_bf16(const bfloat16 *x, bfloat16 *y, float *f, double *d, long long *k, half *o) {\n"
    "  exercise(x, y, f, d, k, o);\n"
    "}\n"
    "extern \"C\" __global__ void ex_typedefs(uk_float16 *a, uk_bfloat16 *b) { a[0] = b[0] * a[0]; }\n";

/* exercise_src with HEADER2 replaced by `second` (another include or nothing). */
static char *with_second(const char *second) {
  const char *at = strstr(exercise_src, "HEADER2");
  size_t pre = (size_t)(at - exercise_src), len = strlen(exercise_src) + strlen(second);
  char *s = malloc(len + 1);
  if (!s) return NULL;
  memcpy(s, exercise_src, pre);
  strcpy(s + pre, second);
  strcat(s, at + strlen("HEADER2"));
  return s;
}

static void test_header_embedded(void) {
  const uk__embedded_file *h = uk__embedded_find("ukern/half.cuh");
  const uk__embedded_file *c = uk__embedded_find("ukern/complex.cuh");
  CHECK(h != NULL);
  CHECK(c != NULL);
  hdr_text[0] = h ? h->data : "";
  hdr_text[1] = c ? c->data : "";
  /* Include-free by design: elementwise compile time depends on it. */
  CHECK(h && !strstr(h->data, "#include"));
  CHECK(h && strstr(h->data, "namespace ukern"));
}

static void test_exercise(void) {
  static const char *stds[] = {NULL, "-std=c++17", "-std=c++14", "-std=c++11", "-std=c++20"};
  static const char *seconds[] = {"", "#include <ukern/complex.cuh>",
                                  "#include <ukern/half.cuh>"}; /* included twice */
  char *alone = with_second(seconds[0]);
  for (size_t s = 0; s < sizeof stds / sizeof stds[0]; s++)
    CHECK(compile("exercise", alone, "-arch=sm_90", stds[s], NULL, NULL) == NVRTC_SUCCESS);
  for (size_t k = 1; k < sizeof seconds / sizeof seconds[0]; k++) {
    char *src = with_second(seconds[k]);
    CHECK(compile("exercise+second", src, "-arch=sm_90", NULL, NULL, NULL) == NVRTC_SUCCESS);
    free(src);
  }
  /* complex.cuh first, then half.cuh */
  const char *first = "#include <ukern/complex.cuh>\n";
  char *both = malloc(strlen(first) + strlen(alone) + 1);
  if (both) {
    strcpy(both, first);
    strcat(both, alone);
    CHECK(compile("complex-first", both, "-arch=sm_90", "-std=c++17", NULL, NULL) ==
          NVRTC_SUCCESS);
  }
  free(both);
  /* Mixed with complex numbers: the half converts to the real type. */
  const char *cx =
      "#include <ukern/half.cuh>\n"
      "#include <ukern/complex.cuh>\n"
      "extern \"C\" __global__ void k(const ukern::half *x, uk_complex64 *c, uk_complex128 *z) {\n"
      "  ukern::half a = x[0];\n"
      "  c[0] = c[1] * a; c[1] = a + c[2]; c[2] = uk_complex64(a); z[0] = z[1] * a;\n"
      "}\n";
  CHECK(compile("complex-mix", cx, "-arch=sm_90", NULL, NULL, NULL) == NVRTC_SUCCESS);
  /* Older archs take the fallback conversions (bf16 in integer arithmetic below
   * sm_80, round-to-odd for double and 64-bit integers below sm_90). */
  CHECK(compile("exercise", alone, "-arch=sm_80", NULL, NULL, NULL) == NVRTC_SUCCESS);
  CHECK(compile("exercise", alone, "-arch=sm_75", NULL, NULL, NULL) == NVRTC_SUCCESS);
  free(alone);
}

/* One type only (UKERN_HALF_ONLY_F16 / _BF16, as generated kernels include
 * it): the exercise of that type, with float as the other operand type, in
 * every dialect; the left-out type stays incomplete; both defines are an error. */
static void test_one_type(void) {
  static const char *const modes[2][2] = {{"UKERN_HALF_ONLY_F16", "half"}, {"UKERN_HALF_ONLY_BF16", "bfloat16"}};
  static const char *stds[] = {NULL, "-std=c++11", "-std=c++20"};
  char *all = with_second("");
  /* the exercise without the two-type static_asserts and kernels */
  const char *sa = all ? strstr(all, "static_assert(sizeof(half)") : NULL;
  const char *tpl = all ? strstr(all, "template <typename T> __device__ T sqdiff") : NULL;
  const char *cut = all ? strstr(all, "extern \"C\" __global__ void ex_half") : NULL;
  CHECK(sa && tpl && cut);
  if (!sa || !tpl || !cut) {
    free(all);
    return;
  }
  for (int m = 0; m < 2; m++) {
    char *src = malloc(strlen(all) + 512);
    if (!src) break;
    snprintf(src, strlen(all) + 512,
             "#define %s\n%.*s%.*s"
             "extern \"C\" __global__ void ex(const %s *x, %s *y, float *f, double *d, long long *k, float *o) {\n"
             "  exercise(x, y, f, d, k, o);\n}\n",
             modes[m][0], (int)(sa - all), all, (int)(cut - tpl), tpl, modes[m][1], modes[m][1]);
    for (size_t s = 0; s < sizeof stds / sizeof stds[0]; s++)
      CHECK(compile("one type", src, "-arch=sm_90", stds[s], NULL, NULL) == NVRTC_SUCCESS);
    CHECK(compile("one type sm_75", src, "-arch=sm_75", NULL, NULL, NULL) == NVRTC_SUCCESS);
    snprintf(src, strlen(all) + 512,
             "#define %s\n#include <ukern/half.cuh>\n__device__ ukern::%s left_out;\n", modes[m][0],
             modes[1 - m][1]);
    fprintf(stderr, "(an error is expected next: the left-out type)\n");
    CHECK(compile("left out", src, "-arch=sm_90", NULL, NULL, NULL) != NVRTC_SUCCESS);
    free(src);
  }
  fprintf(stderr, "(an error is expected next: both defines)\n");
  CHECK(compile("both", "#define UKERN_HALF_ONLY_F16\n#define UKERN_HALF_ONLY_BF16\n#include <ukern/half.cuh>\n",
                "-arch=sm_90", NULL, NULL, NULL) != NVRTC_SUCCESS);
  free(all);
}

/* The PTX shows single-rounding conversions: cvt.rn.f16.f32/.f64 and
 * cvt.rn.bf16.f32/.f64/.s64 on sm_90; round-to-odd (cvt.rz) before the
 * final rounding where a direct instruction is missing. */
static void test_ptx(void) {
  const char *src =
      "#include <ukern/half.cuh>\n"
      "extern \"C\" __global__ void cv(const float *f, const double *d, const long long *l,\n"
      "                                ukern::half *h, ukern::bfloat16 *b, float *o) {\n"
      "  h[0] = f[0]; h[1] = d[0]; h[2] = l[0];\n"
      "  b[0] = f[0]; b[1] = d[0]; b[2] = l[0];\n"
      "  o[0] = h[3]; o[1] = b[3];\n"
      "}\n";
  char *ptx = NULL;
  CHECK(compile("ptx90", src, "-arch=compute_90", NULL, &ptx, NULL) == NVRTC_SUCCESS);
  if (ptx) {
    CHECK_CONTAINS(ptx, "cvt.rn.f16.f32");
    CHECK_CONTAINS(ptx, "cvt.rn.f16.f64");
    CHECK_CONTAINS(ptx, "cvt.rn.bf16.f32");
    CHECK_CONTAINS(ptx, "cvt.rn.bf16.f64");
    CHECK_CONTAINS(ptx, "cvt.rn.f16.s64");
    CHECK_CONTAINS(ptx, "cvt.rn.bf16.s64");
    CHECK_CONTAINS(ptx, "cvt.f32.f16");
    CHECK(!strstr(ptx, "cvt.rn.f32.f64")); /* no double rounding through float */
  }
  free(ptx);
  ptx = NULL;
  CHECK(compile("ptx80", src, "-arch=compute_80", NULL, &ptx, NULL) == NVRTC_SUCCESS);
  if (ptx) {
    CHECK_CONTAINS(ptx, "cvt.rn.bf16.f32");
    CHECK(!strstr(ptx, "cvt.rn.bf16.f64")); /* sm_90 only */
    CHECK_CONTAINS(ptx, "cvt.rz.f32.f64");
    CHECK_CONTAINS(ptx, "cvt.rz.f32.s64");
    CHECK_CONTAINS(ptx, "cvt.rn.f16.s64");
  }
  free(ptx);
  ptx = NULL;
  CHECK(compile("ptx75", src, "-arch=compute_75", NULL, &ptx, NULL) == NVRTC_SUCCESS);
  if (ptx) CHECK(!strstr(ptx, "bf16")); /* sm_80 instruction */
  free(ptx);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of `reps` compiles (the first one warms NVRTC up and is dropped). */
static double compile_ms(const char *what, const char *src, int reps) {
  double t[16];
  compile(what, src, "-arch=sm_90", NULL, NULL, NULL);
  for (int k = 0; k < reps; k++) {
    t[k] = 1e9;
    CHECK(compile(what, src, "-arch=sm_90", NULL, NULL, &t[k]) == NVRTC_SUCCESS);
  }
  qsort(t, (size_t)reps, sizeof t[0], cmp_double);
  return t[reps / 2];
}

static void test_compile_time(void) {
  const char *plain =
      "extern \"C\" __global__ void squared_diff(const float *x, const float *y, float *z, long long n) {\n"
      "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) z[i] = (x[i] - y[i]) * (x[i] - y[i]);\n"
      "}\n";
  const char *half =
      "#include <ukern/half.cuh>\n"
      "typedef ukern::half T;\n"
      "extern \"C\" __global__ void squared_diff(const T *x, const T *y, T *z, long long n) {\n"
      "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) z[i] = (x[i] - y[i]) * (x[i] - y[i]);\n"
      "}\n";
  double t_plain = compile_ms("plain", plain, 7);
  double t_half = compile_ms("half", half, 7);
  printf("NVRTC compile time (sm_90, median of 7): float kernel %.1f ms, ukern::half kernel %.1f ms "
         "(header cost %.1f ms)\n",
         t_plain, t_half, t_half - t_plain);
  /* Reported, not asserted: speed is the benchmarks' job, and timed tests
   * flake on shared machines. That the header includes nothing is checked above. */
}

int main(void) {
  test_header_embedded();
  test_exercise();
  test_one_type();
  test_ptx();
  test_compile_time();
  return ut_finish("test_nvrtc_half");
}
