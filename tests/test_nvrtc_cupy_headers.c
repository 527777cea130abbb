/* CuPy's device headers (templates/cupy/): each one's API compiles with
 * NVRTC for sm_90 as code written for CuPy uses it; values are checked on a
 * GPU by python/tests/test_gpu_raw.py against NumPy. */
#include "testutil.h"

/* Every operator and function of complex<T> as CuPy spells them: ::complex,
 * thrust::complex, thrust::polar, global math names, mixed scalar ops and
 * a __shared__ array (thrust's trivial default constructor). */
static const char *complex_src =
    "#include <cupy/complex.cuh>\n"
    "static_assert(sizeof(complex<float>) == 8 && alignof(complex<float>) == 8, \"c64\");\n"
    "static_assert(sizeof(thrust::complex<double>) == 16 && alignof(complex<double>) == 16, \"c128\");\n"
    "template <typename T> __device__ complex<T> all(complex<T> a, complex<T> b, T s) {\n"
    "  complex<T> z = a + b - a * b / (b + s);\n"
    "  z = z + s; z = s + z; z = z - s; z = s - z; z = z * s; z = s * z; z = z / s; z = s / z;\n"
    "  z += a; z -= b; z *= a; z /= b; z += s; z *= s; z = -z + (+z);\n"
    "  bool c = (z == a) || (z != b) || (z == s) || (s != z);\n"
    "  T r = abs(z) + arg(z) + norm(z) + real(z) + imag(z) + z.real() + z.imag() + thrust::abs(z);\n"
    "  complex<T> w = conj(z) + exp(z) + log(z) + log10(z) + sqrt(z) + sin(z) + cos(z) + tan(z)\n"
    "      + sinh(z) + cosh(z) + tanh(z) + asin(z) + acos(z) + atan(z) + asinh(z) + acosh(z)\n"
    "      + atanh(z) + thrust::pow(z, a) + pow(z, s) + pow(s, z) + thrust::proj(z)\n"
    "      + thrust::polar(r, s) + thrust::polar(r) + thrust::sqrt(z) + thrust::exp(z)\n"
    "      + log1p(z) + log2(z) + expm1(z) + min(a, b) + max(a, b) + rint(z);\n"
    "  if (isnan(z) || isinf(z) || !isfinite(z)) w += T(1);\n"
    "  complex<T> d; d.real(r); d.imag(c ? T(1) : T(0));\n"
    "  complex<T> e = T(3); e = T(4);\n"
    "  return w + d + e + complex<T>();\n"
    "}\n"
    "extern \"C\" __global__ void cx(const complex<float>* a, complex<double>* b, float s, int n) {\n"
    "  __shared__ complex<float> tile[64];\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  tile[threadIdx.x % 64] = a[i];\n"
    "  complex<float> f = all(tile[threadIdx.x % 64], a[n - 1 - i], s);\n"
    "  complex<double> m = thrust::pow(f, b[i]);\n"
    "  b[i] = all(b[i], complex<double>(f), (double)s) + m;\n"
    "}\n";

/* cuComplex.h's API through the bridge (what translate_cucomplex maps to). */
static const char *bridge_src =
    "#include <cupy/cuComplex_bridge.h>\n"
    "extern \"C\" __global__ void k(cuFloatComplex* x, cuDoubleComplex* y) {\n"
    "  cuFloatComplex a = make_cuFloatComplex(1.f, 2.f), b = make_cuComplex(cuCrealf(x[0]), cuCimagf(x[0]));\n"
    "  x[0] = cuCfmaf(cuCaddf(a, b), cuCsubf(a, b), cuCdivf(cuCmulf(a, b), cuConjf(b)));\n"
    "  x[1] = make_cuFloatComplex(cuCabsf(a), 0.f) + cuComplexDoubleToFloat(y[0]);\n"
    "  cuDoubleComplex c = make_cuDoubleComplex(cuCreal(y[0]), cuCimag(y[0]));\n"
    "  y[0] = cuCfma(cuCadd(c, c), cuCsub(c, c), cuCdiv(cuCmul(c, c), cuConj(c)));\n"
    "  y[1] = make_cuDoubleComplex(cuCabs(c), 0.0) + cuComplexFloatToDouble(x[0]);\n"
    "}\n";

static const char *consts_src =
    "#include <cupy/math_constants.h>\n"
    "#include <cupy/carray.cuh>\n"
    "extern \"C\" __global__ void k(float* f, double* d, int n) {\n"
    "  CUPY_FOR(i, n) {\n"
    "    f[i] = CUDART_INF_F + CUDART_NAN_F + CUDART_PI_F + CUDART_PIO2_F + CUDART_LN2_F + CUDART_NEG_ZERO_F;\n"
    "    d[i] = CUDART_INF + CUDART_NAN + CUDART_PI + CUDART_PIO2 + CUDART_SQRT_2 + CUDART_LN2 + M_PI + M_E\n"
    "         + M_LOG2E + M_LOG10E + M_LN2 + M_LN10 + M_PI_2 + M_PI_4 + M_1_PI + M_2_PI + M_2_SQRTPI\n"
    "         + M_SQRT2 + M_SQRT1_2;\n"
    "  }\n"
    "}\n"
    "static_assert(cupy::type_traits::is_same<cupy::type_traits::conditional<true, int, float>::type, int>::value, \"\");\n"
    "static_assert(cupy::type_traits::is_same<cupy::type_traits::enable_if<true, float>::type, float>::value, \"\");\n";

/* The toolkit's math_constants.h first: ours must not redefine its names. */
static const char *consts_both_src =
    "#include <math_constants.h>\n"
    "#include <cupy/math_constants.h>\n"
    "extern \"C\" __global__ void k(double* d) { d[0] = CUDART_PI + CUDART_INF_F; }\n";

static const char *float16_src =
    "#include <cupy/float16.cuh>\n"
    "static_assert(sizeof(float16) == 2, \"float16 is 2 bytes\");\n"
    "extern \"C\" __global__ void k(float16* x, const float16* y, float* out, int n) {\n"
    "  __shared__ float16 s[32];\n"
    "  int i = threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  s[i % 32] = y[i];\n"
    "  float16 a = x[i], b = s[i % 32];\n"
    "  float16 c = a + b;\n"
    "  c = a * 2.0f; c += b; c -= 1; c *= 0.5; c /= b;\n"
    "  c = float16(3.0) + float16(2) + float16(true) + float16(7u) + float16(5ll);\n"
    "  float f = a + b + sqrtf(a) + c;\n"
    "  int flags = a.iszero() + a.isnan() + a.isinf() + a.isfinite() + a.signbit()\n"
    "      + iszero(a) + isnan(b) + isinf(b) + isfinite(b) + signbit(b);\n"
    "  float16 m = min(a, b) + max(a, b) + fmin(a, b) + fmax(a, b) + copysign(a, b) + nextafter(a, b);\n"
    "  x[i] = float16::from_bits(m.to_bits());\n"
    "  out[i] = f + flags + float16::nan;\n"
    "}\n";

static const char *workaround_src =
    "#include <cupy/cuda_workaround.h>\n"
    "static_assert(std::is_same<std::make_unsigned<int>::type, unsigned>::value, \"std via libcu++\");\n"
    "static_assert(std::numeric_limits<float>::max() > 1e38f, \"limits\");\n"
    "extern \"C\" __global__ void k(int* x) {\n"
    "  std::pair<int, int> p = std::make_pair(1, 2);\n"
    "  std::tuple<int, float> t = std::make_tuple(3, 4.f);\n"
    "  x[0] = p.first + p.second + std::get<0>(t);\n"
    "}\n";

static void compile_ok(uk_context *ctx, const char *what, const char *src) {
  uk_module *m = NULL;
  uk_status s = uk_module_from_source(ctx, src, NULL, &m);
  if (s != UK_OK) fprintf(stderr, "compiling %s:\n", what);
  CHECK_OK(s);
  if (s != UK_OK) return;
  uk_function *f = NULL;
  CHECK_OK(uk_module_function(m, strcmp(what, "complex") == 0 ? "cx" : "k", &f));
  uk_module_destroy(m);
}

int main(void) {
  uk_options o = {0};
  o.arch = 90;
  o.disable_disk_cache = 1;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&o, &ctx));
  compile_ok(ctx, "complex", complex_src);
  compile_ok(ctx, "bridge", bridge_src);
  compile_ok(ctx, "constants", consts_src);
  compile_ok(ctx, "constants after the toolkit's", consts_both_src);
  compile_ok(ctx, "float16", float16_src);
  compile_ok(ctx, "cuda_workaround", workaround_src);

  /* <ukern/complex.cuh> first keeps ukern's zero-initialising constructor:
   * the same code still compiles, only __shared__ complex needs raw storage. */
  compile_ok(ctx, "ukern first",
             "#include <ukern/complex.cuh>\n#include <cupy/complex.cuh>\n"
             "extern \"C\" __global__ void k(complex<float>* x) { x[0] = asin(x[0]) + thrust::polar(1.f, 2.f); }\n");
  uk_context_destroy(ctx);
  return ut_finish("test_nvrtc_cupy_headers");
}
