/* libffi argument layouts against the C compiler's own struct layout (CUDA
 * lays kernel parameters out like the members of a C struct), packing, and
 * the check against a kernel's parameters with a fake cuFuncGetParamInfo. */
#include <stdalign.h>
#include <stddef.h>

#include "codegen/cparams.h"
#include "runtime/cudadrv.h"
#include "runtime/ffi_args.h"
#include "testutil.h"

typedef uint16_t half_t; /* __half, __nv_bfloat16 */
/* _Alignas on "float re, im" would align both members: size 16, not 8. */
typedef struct { _Alignas(8) float re; float im; } c64_t; /* ukern::complex<float> */
typedef struct { _Alignas(16) double v[2]; } c128_t;  /* ukern::complex<double> */

typedef struct field {
  size_t off, size;
} field;
#define F(T, m) {offsetof(T, m), sizeof(((T *)0)->m)}

/* Mirrors, one per signature. */
typedef struct { char a; double b; char c; c128_t d; short e; float *f; } s1;
typedef struct { short a; c64_t b; char c; long long d; } s2;
typedef struct { half_t a; float b; half_t c; double d; char e; } s3;
typedef struct { c128_t a; char b; } s4;
typedef struct { _Bool a; c128_t b; _Bool c; c64_t d; _Bool e; } s5;
typedef struct { int a; const float *b; short c; unsigned char d; int e; double f; } s6;
typedef struct { float a, b, c; c64_t d; } s7;
typedef struct { char a; } s8;
typedef struct { half_t a; unsigned long long b; half_t c; c128_t d; int8_t e; void *f;
                 uint16_t g; } s9;
typedef struct { double a; char b; short c; char d; int e; char f; long long g; char h; } s10;
typedef struct { size_t n; c64_t x; _Bool flag; void *y; float z; } s11;
typedef struct { unsigned char a; c64_t b; c64_t c; short d; c128_t e; char f; } s12;
typedef struct { char a; short b; char c; int d; char e; half_t f; char g; } s13;

/* Builds the layout of `sig`, compares it with the mirror's fields, then packs
 * random non-zero bytes (each argument in its own exact-size allocation) into
 * a poisoned buffer and compares field by field; padding must come out 0. */
static void check_case(const char *sig, const field *f, int n, size_t total) {
  uk_cparams p;
  uk_arglayout l;
  CHECK_OK(uk__cparams_parse(sig, &p));
  CHECK_OK(uk__arglayout_build(&p, &l));
  uk__cparams_free(&p);
  CHECK(l.count == n);
  CHECK(l.total == total);
  if (l.count != n || l.total != total) {
    fprintf(stderr, "  signature: %s (count %d, total %zu)\n", sig, l.count, l.total);
    uk__arglayout_free(&l);
    return;
  }
  for (int k = 0; k < n; k++) {
    CHECK(l.offsets[k] == f[k].off);
    CHECK(l.sizes[k] == f[k].size);
    if (l.offsets[k] != f[k].off || l.sizes[k] != f[k].size)
      fprintf(stderr, "  signature: %s: parameter %d at %zu (%zu bytes), expected %zu (%zu)\n",
              sig, k, l.offsets[k], l.sizes[k], f[k].off, f[k].size);
  }

  unsigned char *mirror = calloc(1, total);
  unsigned char *buffer = malloc(total);
  void **args = calloc((size_t)n, sizeof *args);
  memset(buffer, 0xA5, total);
  for (int k = 0; k < n; k++) {
    args[k] = malloc(f[k].size);
    for (size_t b = 0; b < f[k].size; b++) {
      unsigned char v = (unsigned char)(ut_rand() % 255 + 1);
      mirror[f[k].off + b] = v;
      ((unsigned char *)args[k])[b] = v;
    }
  }
  uk__arglayout_pack(&l, (void *const *)args, buffer);
  for (int k = 0; k < n; k++)
    CHECK(memcmp(buffer + f[k].off, mirror + f[k].off, f[k].size) == 0);
  CHECK(memcmp(buffer, mirror, total) == 0); /* padding zeroed, nothing else written */
  for (int k = 0; k < n; k++) free(args[k]);
  free(args);
  free(buffer);
  free(mirror);
  uk__arglayout_free(&l);
  CHECK(l.count == 0 && l.offsets == NULL);
}

#define CASE(sig, T, ...)                                                                  \
  do {                                                                                     \
    const field f_[] = {__VA_ARGS__};                                                      \
    check_case(sig, f_, (int)(sizeof f_ / sizeof f_[0]), sizeof(T));                        \
  } while (0)

static void test_layouts(void) {
  /* The mirrors themselves: complex types as ukern lays them out. */
  CHECK(sizeof(c64_t) == 8 && alignof(c64_t) == 8);
  CHECK(sizeof(c128_t) == 16 && alignof(c128_t) == 16);
  CHECK(offsetof(s1, d) == 32 && offsetof(s1, f) == 56 && sizeof(s1) == 64);

  CASE("char a, double b, char c, uk_complex128 d, short e, float* f", s1, F(s1, a), F(s1, b),
       F(s1, c), F(s1, d), F(s1, e), F(s1, f));
  CASE("short a, uk_complex64 b, char c, long long d", s2, F(s2, a), F(s2, b), F(s2, c),
       F(s2, d));
  CASE("half a, float b, __half c, double d, char e", s3, F(s3, a), F(s3, b), F(s3, c),
       F(s3, d), F(s3, e));
  CASE("ukern::complex<double> a, char b", s4, F(s4, a), F(s4, b));
  CASE("bool a, uk_complex128 b, bool c, complex<float> d, bool e", s5, F(s5, a), F(s5, b),
       F(s5, c), F(s5, d), F(s5, e));
  CASE("int a, const float* b, short c, unsigned char d, int e, double f", s6, F(s6, a),
       F(s6, b), F(s6, c), F(s6, d), F(s6, e), F(s6, f));
  CASE("float a, float b, float c, cuComplex d", s7, F(s7, a), F(s7, b), F(s7, c), F(s7, d));
  CASE("char a", s8, F(s8, a));
  CASE("__nv_bfloat16 a, unsigned long long b, __half c, cuDoubleComplex d, int8_t e, "
       "void* f, uint16_t g",
       s9, F(s9, a), F(s9, b), F(s9, c), F(s9, d), F(s9, e), F(s9, f), F(s9, g));
  CASE("double a, char b, short c, char d, int e, char f, long long g, char h", s10, F(s10, a),
       F(s10, b), F(s10, c), F(s10, d), F(s10, e), F(s10, f), F(s10, g), F(s10, h));
  CASE("size_t n, ukern::complex<float> x, bool flag, thrust::complex<double>* y, float z", s11,
       F(s11, n), F(s11, x), F(s11, flag), F(s11, y), F(s11, z));
  CASE("unsigned char a, uk_complex64 b, uk_complex64 c, short d, uk_complex128 e, signed char f",
       s12, F(s12, a), F(s12, b), F(s12, c), F(s12, d), F(s12, e), F(s12, f));
  CASE("char a, short b, char c, int d, char e, nv_bfloat16 f, char g", s13, F(s13, a),
       F(s13, b), F(s13, c), F(s13, d), F(s13, e), F(s13, f), F(s13, g));
}

/* Typed values through the packer, read back as the types. */
static void test_pack_values(void) {
  uk_cparams p;
  uk_arglayout l;
  CHECK_OK(uk__cparams_parse("char a, double b, char c, uk_complex128 d, short e, float* f", &p));
  CHECK_OK(uk__arglayout_build(&p, &l));
  uk__cparams_free(&p);
  if (l.count != 6) return;
  CHECK_STREQ(l.names[3], "d");
  CHECK_STREQ(l.spellings[3], "uk_complex128");
  char a = 'q', c = -5;
  double b = -1234.5625;
  c128_t d = {{3.25, -7.5}};
  short e = -12345;
  float x = 1.0f, *fp = &x;
  void *args[] = {&a, &b, &c, &d, &e, &fp};
  s1 out;
  memset(&out, 0x5A, sizeof out);
  CHECK(l.total == sizeof out);
  uk__arglayout_pack(&l, args, &out);
  CHECK(out.a == 'q' && out.b == -1234.5625 && out.c == -5);
  CHECK(out.d.v[0] == 3.25 && out.d.v[1] == -7.5);
  CHECK(out.e == -12345 && out.f == &x);
  uk__arglayout_free(&l);
  uk__arglayout_free(NULL);

  /* The empty list packs nothing. */
  CHECK_OK(uk__cparams_parse("void", &p));
  CHECK_OK(uk__arglayout_build(&p, &l));
  CHECK(l.count == 0 && l.total == 0);
  uk__arglayout_pack(&l, NULL, NULL);
  uk__arglayout_free(&l);
  uk__cparams_free(&p);
}

/* A fake driver entry point: the kernel's parameters as (offset, size). */
static const field *fake_params;
static size_t fake_count;
static CUresult fake_result = CUDA_SUCCESS;

static CUresult fake_param_info(CUfunction f, size_t i, size_t *off, size_t *size) {
  (void)f;
  if (fake_result != CUDA_SUCCESS) return fake_result;
  if (i >= fake_count) return CUDA_ERROR_INVALID_VALUE;
  *off = fake_params[i].off;
  if (size) *size = fake_params[i].size;
  return CUDA_SUCCESS;
}

static uk_status check_against(const char *sig, const field *kernel, size_t n) {
  uk_cparams p;
  uk_arglayout l;
  uk_status s = uk__cparams_parse(sig, &p);
  if (s != UK_OK) return s;
  s = uk__arglayout_build(&p, &l);
  uk__cparams_free(&p);
  if (s != UK_OK) return s;
  fake_params = kernel;
  fake_count = n;
  int count = -1;
  uk_param_info *got = NULL;
  s = uk__driver_params((CUfunction)(uintptr_t)0x1234, &count, &got);
  if (s == UK_OK) {
    CHECK(count == (int)n);
    for (int k = 0; k < count; k++) CHECK(got[k].offset == kernel[k].off && got[k].size == kernel[k].size);
    s = uk__arglayout_check(&l, got, count, "k");
  }
  free(got);
  uk__arglayout_free(&l);
  return s;
}

static void test_check(void) {
  uk__cu.cuFuncGetParamInfo = fake_param_info;
  const char *sig = "char a, double b, float* p";
  static const field exact[] = {{0, 1}, {8, 8}, {16, 8}};
  static const field four[] = {{0, 1}, {8, 8}, {16, 8}, {24, 4}};
  static const field b_float[] = {{0, 1}, {8, 4}, {16, 8}};
  static const field p_moved[] = {{0, 1}, {8, 8}, {24, 8}};
  CHECK_OK(check_against(sig, exact, 3));
  CHECK_STATUS(check_against(sig, four, 4), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "kernel 'k' takes 4 parameters but the signature declares 3");
  CHECK_STATUS(check_against(sig, exact, 1), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "kernel 'k' takes 1 parameter but the signature declares 3");
  CHECK_STATUS(check_against(sig, exact, 0), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "kernel 'k' takes 0 parameters but the signature declares 3");
  /* arity wins over an earlier size mismatch */
  CHECK_STATUS(check_against("char a, float b", b_float, 3), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "kernel 'k' takes 3 parameters but the signature declares 2");
  CHECK_STATUS(check_against(sig, b_float, 3), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(),
              "parameter 'b' (double) is 8 bytes but kernel 'k' expects 4 bytes at offset 8");
  CHECK_STATUS(check_against(sig, p_moved, 3), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(),
              "parameter 'p' (float*) is at offset 16 but kernel 'k' expects it at offset 24");
  CHECK_STATUS(check_against("char, const double, float* __restrict__", b_float, 3),
               UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(),
              "parameter 2 (const double) is 8 bytes but kernel 'k' expects 4 bytes at offset 8");
  CHECK_OK(check_against("", exact, 0));
  CHECK_STATUS(check_against("void", exact, 2), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "kernel 'k' takes 2 parameters but the signature declares 0");
  fake_result = CUDA_ERROR_INVALID_HANDLE;
  CHECK_STATUS(check_against(sig, exact, 3), UK_ERR_CUDA);
  CHECK_CONTAINS(uk_last_error(), "cuFuncGetParamInfo: ");
  fake_result = CUDA_SUCCESS;
  uk__cu.cuFuncGetParamInfo = NULL;
}

int main(void) {
  ut_seed(0x51C0FFEEull);
  test_layouts();
  test_pack_values();
  test_check();
  return ut_finish("test_ffi_layout");
}
