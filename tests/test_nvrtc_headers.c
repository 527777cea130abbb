/* Headers available to every program: ukern's embedded <ukern/complex.cuh>
 * and the toolkit's (CUB, cooperative groups) through the include dirs
 * found at run time. Compile-time checks stand in for a GPU here. */
#include "runtime/compile.h"
#include "testutil.h"

/* Exercises every operator and function of ukern::complex for both types;
 * static_asserts pin the layout. */
static const char *complex_src =
    "#include <ukern/complex.cuh>\n"
    "static_assert(sizeof(uk_complex64) == 8 && alignof(uk_complex64) == 8, \"c64 layout\");\n"
    "static_assert(sizeof(uk_complex128) == 16 && alignof(uk_complex128) == 16, \"c128 layout\");\n"
    "template <typename T>\n"
    "__device__ ukern::complex<T> all_ops(ukern::complex<T> a, ukern::complex<T> b, T s) {\n"
    "  using namespace ukern;\n"
    "  complex<T> z = a + b - a * b / (b + T(1));\n"
    "  z = z + s; z = s + z; z = z - s; z = s - z; z = z * s; z = s * z; z = z / s; z = s / z;\n"
    "  z = z * 2; z = 2 / z;\n"
    "  z += a; z -= b; z *= a; z /= b; z += s; z -= s; z *= s; z /= s;\n"
    "  z = -z + (+z);\n"
    "  bool eq = (z == a) || (z != b) || (z == s) || (s != z);\n"
    "  T r = abs(z) + arg(z) + norm(z) + real(z) + imag(z) + z.real() + z.imag();\n"
    "  complex<T> w = conj(z) + exp(z) + log(z) + log10(z) + sqrt(z) + sin(z) + cos(z) + tan(z)\n"
    "      + sinh(z) + cosh(z) + tanh(z) + pow(z, a) + pow(z, s) + pow(s, z) + pow(z, 2)\n"
    "      + polar(r) + polar(r, s);\n"
    "  complex<T> d;\n"
    "  d.real(r); d.imag(eq ? T(1) : T(0));\n"
    "  complex<T> c = T(3);\n"
    "  c = T(4);\n"
    "  return w + d + c;\n"
    "}\n"
    "extern \"C\" __global__ void cx(const uk_complex64* a, uk_complex128* b, float s, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  uk_complex64 f = all_ops(a[i], a[n - 1 - i], s);\n"
    "  uk_complex128 dd = all_ops(b[i], uk_complex128(f), (double)s);\n"
    "  b[i] = dd;\n"
    "}\n";

static const char *cub_src =
    "#include <cub/block/block_reduce.cuh>\n"
    "extern \"C\" __global__ void block_sum(const float* x, float* out) {\n"
    "  typedef cub::BlockReduce<float, 128> R;\n"
    "  __shared__ typename R::TempStorage tmp;\n"
    "  float v = R(tmp).Sum(x[blockIdx.x * 128 + threadIdx.x]);\n"
    "  if (threadIdx.x == 0) out[blockIdx.x] = v;\n"
    "}\n";

static const char *coop_src =
    "#include <cooperative_groups.h>\n"
    "#include <cuda_fp16.h>\n"
    "extern \"C\" __global__ void k(float* x) {\n"
    "  cooperative_groups::this_grid().sync();\n"
    "  x[0] = __half2float(__float2half(1.5f));\n"
    "}\n";

static void compile_ok(uk_context *ctx, const char *what, const char *src) {
  uk_module *m = NULL;
  uk_status s = uk_module_from_source(ctx, src, NULL, &m);
  if (s != UK_OK) fprintf(stderr, "compiling %s:\n", what);
  CHECK_OK(s);
  const void *image = NULL;
  size_t bytes = 0;
  CHECK_OK(uk_module_image(m, &image, &bytes));
  CHECK(bytes > 64 && image && memcmp(image, "\x7f" "ELF", 4) == 0);
  uk_module_destroy(m);
}

int main(void) {
  const char *const *dirs = NULL;
  int n = 0;
  CHECK_OK(uk__nvrtc_include_dirs(&dirs, &n));
  CHECK(n >= 1);
  int cccl = 0;
  for (int k = 0; k < n; k++) cccl |= strstr(dirs[k], "cccl") != NULL;
  CHECK(cccl); /* CUDA 13 keeps CUB under include/cccl */

  int ver = 0;
  CHECK_OK(uk_nvrtc_version(&ver));
  CHECK(ver >= 12000);

  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = 90;
  o.disable_disk_cache = 1;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&o, &ctx));
  compile_ok(ctx, "complex", complex_src);
  compile_ok(ctx, "cub", cub_src);
  compile_ok(ctx, "cooperative groups", coop_src);

  /* Misuse of the complex type is a compile error, not a silent conversion
   * to something else: complex<float> + complex<double> has no operator. */
  uk_module *m = NULL;
  CHECK_STATUS(uk_module_from_source(ctx,
                                     "#include <ukern/complex.cuh>\n"
                                     "extern \"C\" __global__ void k(uk_complex64* a, uk_complex128* b) {\n"
                                     "  *a = *a + *b;\n"
                                     "}\n",
                                     NULL, &m),
               UK_ERR_COMPILE);
  CHECK_CONTAINS(uk_last_error_log(), "    3 |   *a = *a + *b;");
  uk_context_destroy(ctx);
  return ut_finish("test_nvrtc_headers");
}
