"""gpu tier for RawKernel / RawModule as CuPy code uses them: CuPy's device
headers' values against NumPy (complex<T>, float16, math constants,
translate_cucomplex), the nvcc backend, declared signatures, In/Out/InOut,
kernel[grid, block], .ptr objects and texture objects. Host arrays travel
through ukern.In/Out, so most tests need no CuPy; those that compare with
CuPy or use its objects skip without it. Skips without a GPU."""
import os
import shutil

import numpy as np
import pytest

import ukern

if ukern.device_count() == 0:
    pytest.skip("no CUDA device (ukern.device_count() == 0)", allow_module_level=True)

RNG = np.random.default_rng(20261127)
HAS_NVCC = shutil.which("nvcc") is not None or os.path.exists("/usr/local/cuda/bin/nvcc")


def crand(n, dtype):
    """Random complex values, both signs, |re|, |im| in [0.3, 1.7] (off the branch cuts)."""
    re = RNG.uniform(0.3, 1.7, n) * RNG.choice([-1.0, 1.0], n)
    im = RNG.uniform(0.3, 1.7, n) * RNG.choice([-1.0, 1.0], n)
    return (re + 1j * im).astype(dtype)


def launch(k, n, *args):
    k(((n + 127) // 128,), (128,), args)


# ---- cupy/complex.cuh -------------------------------------------------------------

CX = r'''
#include <cupy/complex.cuh>
template <typename T>
__device__ complex<T> apply(int f, complex<T> z, complex<T> w, T s) {
  switch (f) {
  case 0: return exp(z);
  case 1: return log(z);
  case 2: return log10(z);
  case 3: return sqrt(z);
  case 4: return sin(z);
  case 5: return cos(z);
  case 6: return tan(z);
  case 7: return sinh(z);
  case 8: return cosh(z);
  case 9: return tanh(z);
  case 10: return asin(z);
  case 11: return acos(z);
  case 12: return atan(z);
  case 13: return asinh(z);
  case 14: return acosh(z);
  case 15: return atanh(z);
  case 16: return conj(z);
  case 17: return thrust::proj(z);
  case 18: return pow(z, w);
  case 19: return pow(z, s);
  case 20: return pow(s, z);
  case 21: return complex<T>(abs(z), arg(z));
  case 22: return complex<T>(norm(z), real(z) * imag(w));
  case 23: return thrust::polar(abs(z), arg(w));
  case 24: return z * w + s;
  case 25: return z / w - s;
  case 26: return s / z + z * s - s * w;
  case 27: return log1p(z);
  case 28: return log2(z);
  case 29: return expm1(z);
  case 30: { complex<T> a = z; a += w; a *= s; a /= w; a -= T(1); return -a; }
  case 31: return complex<T>(T(z == w) + T(z != w) * 2 + T(z == z) * 4, T(isnan(z)) + T(isfinite(z)) * 2);
  }
  return complex<T>(T(-7));
}
template <typename T>
__device__ void run(const complex<T>* z, const complex<T>* w, T s, complex<T>* out, int n, int nf) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (int f = 0; f < nf; f++) out[f * n + i] = apply(f, z[i], w[i], s);
}
extern "C" __global__ void cx128(const complex<double>* z, const complex<double>* w, double s,
                                 complex<double>* out, int n, int nf) { run(z, w, s, out, n, nf); }
extern "C" __global__ void cx64(const complex<float>* z, const complex<float>* w, float s,
                                complex<float>* out, int n, int nf) { run(z, w, s, out, n, nf); }
'''

CX_REF = [
    np.exp, np.log, np.log10, np.sqrt, np.sin, np.cos, np.tan, np.sinh, np.cosh, np.tanh,
    np.arcsin, np.arccos, np.arctan, np.arcsinh, np.arccosh, np.arctanh,
    np.conj, lambda z: z,
    None, None, None,  # pow: below, they need w and s
    lambda z: np.abs(z) + 1j * np.angle(z),
]


def cx_reference(z, w, s):
    """Every function of CX in complex128 (z, w, s widened first)."""
    z, w, s = z.astype(np.complex128), w.astype(np.complex128), float(s)
    out = [f(z) if f else None for f in CX_REF]
    out[18] = z ** w
    out[19] = z ** s
    out[20] = s ** z
    out += [
        np.abs(z) ** 2 + 1j * (z.real * w.imag),
        np.abs(z) * np.exp(1j * np.angle(w)),
        z * w + s,
        z / w - s,
        s / z + z * s - s * w,
        np.log1p(z),
        np.log2(z),
        np.expm1(z),
        -(((z + w) * s) / w - 1),
        (z == w) + (z != w) * 2.0 + 4.0 + 1j * (np.isnan(z) + np.isfinite(z) * 2.0),
    ]
    return np.stack(out)


@pytest.mark.parametrize("dtype, kernel, rtol", [(np.complex128, "cx128", 1e-12), (np.complex64, "cx64", 2e-5)])
def test_cupy_complex_functions_match_numpy(dtype, kernel, rtol):
    n, nf = 1001, 32
    z, w = crand(n, dtype), crand(n, dtype)
    s = dtype(0).real.dtype.type(1.375)
    out = np.full((nf, n), np.nan + 1j * np.nan, dtype)  # poisoned
    k = ukern.RawModule(code=CX).get_function(kernel)
    launch(k, n, ukern.In(z), ukern.In(w), s, ukern.Out(out), n, nf)
    ref = cx_reference(z, w, s)
    for f in range(nf):
        np.testing.assert_allclose(out[f], ref[f], rtol=rtol, atol=rtol, err_msg=f"function {f}")


def test_cupy_complex_branch_cuts_and_infinities_match_numpy():
    """On the cuts (signed zeros) and at infinities, as NumPy."""
    vals = np.array([2 + 0j, 2 - 0j, -2 + 0j, -2 - 0j, 0 + 2j, 0 - 2j, -0.0 + 2j, 0.5 + 0j, -0.5 - 0j,
                     complex(np.inf, 1), complex(1, -np.inf)], np.complex128)
    n, nf = len(vals), 18
    out = np.full((32, n), np.nan, np.complex128)
    k = ukern.RawModule(code=CX).get_function("cx128")
    launch(k, n, ukern.In(vals), ukern.In(vals), 1.0, ukern.Out(out), n, nf)
    finite = np.isfinite(vals)
    for f, name in ((10, "arcsin"), (11, "arccos"), (13, "arcsinh"), (14, "arccosh"), (15, "arctanh"), (3, "sqrt")):
        with np.errstate(all="ignore"):
            ref = getattr(np, name)(vals[finite])
        np.testing.assert_allclose(out[f][finite], ref, rtol=1e-12, atol=1e-15, err_msg=name)
        assert np.array_equal(np.signbit(out[f][finite].imag), np.signbit(ref.imag)), name
    inf_rows = out[17][~finite]  # proj: (inf, +-0)
    assert np.all(np.isposinf(inf_rows.real)) and np.all(inf_rows.imag == 0)
    assert np.array_equal(np.signbit(inf_rows.imag), np.signbit(vals[~finite].imag))


def test_cupy_complex_matches_cupy():
    cp = pytest.importorskip("cupy")
    n, nf = 513, 32
    z, w = crand(n, np.complex128), crand(n, np.complex128)
    cz, cw = cp.asarray(z), cp.asarray(w)
    ours, theirs = cp.full((nf, n), cp.nan, cp.complex128), cp.full((nf, n), cp.nan, cp.complex128)
    ukern.RawModule(code=CX).get_function("cx128")(((n + 127) // 128,), (128,), (cz, cw, 1.375, ours, n, nf))
    cp.RawModule(code=CX).get_function("cx128")(((n + 127) // 128,), (128,), (cz, cw, 1.375, theirs, n, nf))
    cp.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def test_cupy_complex_shared_array():
    code = ("#include <cupy/complex.cuh>\n"
            "extern \"C\" __global__ void rev(const complex<float>* x, complex<float>* y) {\n"
            "  __shared__ complex<float> s[128];\n"
            "  s[threadIdx.x] = x[threadIdx.x];\n  __syncthreads();\n"
            "  y[threadIdx.x] = s[127 - threadIdx.x] * 2.0f;\n}\n")
    x, y = crand(128, np.complex64), np.full(128, np.nan, np.complex64)
    ukern.RawKernel(code, "rev")((1,), (128,), (ukern.In(x), ukern.Out(y)))
    np.testing.assert_array_equal(y, x[::-1] * 2)


# ---- translate_cucomplex (CuPy's test_cuFloatComplex / test_cuDoubleComplex kinds) ----

CUCOMPLEX = r'''
#include <cuComplex.h>
extern "C" __global__ void test_f(const cuFloatComplex* x, const cuFloatComplex* y, cuFloatComplex* z, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = cuCaddf(cuCmulf(x[i], y[i]), make_cuFloatComplex(cuCabsf(x[i]), cuCimagf(y[i])));
}
extern "C" __global__ void test_d(const cuDoubleComplex* x, cuDoubleComplex* z, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = cuCfma(x[i], cuConj(x[i]), cuCdiv(cuCsub(x[i], make_cuDoubleComplex(2.0, 0.0)),
                                                      make_cuDoubleComplex(2.0, cuCreal(x[i]))));
}
'''


def test_translate_cucomplex_values():
    n = 300
    m = ukern.RawModule(code=CUCOMPLEX, translate_cucomplex=True)
    x, y = crand(n, np.complex64), crand(n, np.complex64)
    z = np.full(n, np.nan, np.complex64)
    launch(m.get_function("test_f"), n, ukern.In(x), ukern.In(y), ukern.Out(z), n)
    xd, yd = x.astype(np.complex128), y.astype(np.complex128)
    # complex64 products cancel in their real parts: a bound relative to the operands' scale
    np.testing.assert_allclose(z, xd * yd + (np.abs(xd) + 1j * yd.imag), rtol=1e-5, atol=1e-5)
    xd = crand(n, np.complex128)
    zd = np.full(n, np.nan, np.complex128)
    launch(m.get_function("test_d"), n, ukern.In(xd), ukern.Out(zd), n)
    np.testing.assert_allclose(zd, xd * np.conj(xd) + (xd - 2) / (2 + 1j * xd.real), rtol=1e-13)


# ---- cupy/float16.cuh and the constants ----------------------------------------------

F16 = r'''
#include <cupy/float16.cuh>
extern "C" __global__ void f16(const float16* a, const float16* b, float16* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float16 x = a[i], y = b[i];
  out[0 * n + i] = float16(x + y);
  out[1 * n + i] = float16(x * y);
  out[2 * n + i] = float16(x / y);
  float16 c = x; c -= y; out[3 * n + i] = c;
  out[4 * n + i] = nextafter(x, y);
  out[5 * n + i] = copysign(x, y);
  out[6 * n + i] = min(x, y);
  out[7 * n + i] = fmax(x, y);
  out[8 * n + i] = float16::from_bits((unsigned short)(x.to_bits() ^ 0x8000u));
  out[9 * n + i] = float16(double(isnan(x)) + 2.0 * x.signbit() + 4.0 * isfinite(y));
}
'''


def test_float16_matches_numpy():
    n = 777
    a = (RNG.uniform(0.01, 100.0, n) * RNG.choice([-1, 1], n)).astype(np.float16)
    b = (RNG.uniform(0.01, 100.0, n) * RNG.choice([-1, 1], n)).astype(np.float16)
    a[:3] = [np.nan, np.inf, 0.0]
    out = np.full((10, n), np.float16(1234.0))
    launch(ukern.RawKernel(F16, "f16"), n, ukern.In(a), ukern.In(b), ukern.Out(out), n)
    with np.errstate(all="ignore"):
        ref = [a + b, a * b, a / b, a - b, np.nextafter(a, b), np.copysign(a, b), np.minimum(a, b),
               np.fmax(a, b), -a, (np.isnan(a) + 2.0 * np.signbit(a) + 4.0 * np.isfinite(b)).astype(np.float16)]
    for f, r in enumerate(ref):
        np.testing.assert_array_equal(out[f], r.astype(np.float16), err_msg=f"row {f}")


CONSTS = r'''
#include <cupy/math_constants.h>
#include <cupy/carray.cuh>
extern "C" __global__ void consts(double* d, float* f) {
  const double dv[] = {CUDART_PI, CUDART_PIO2, CUDART_PIO4, CUDART_2_OVER_PI, CUDART_SQRT_2, CUDART_SQRT_HALF,
                       CUDART_L2E, CUDART_L2T, CUDART_LG2, CUDART_LNT, CUDART_LN2, M_PI, M_E, M_LOG2E, M_LOG10E,
                       M_LN2, M_LN10, M_PI_2, M_PI_4, M_1_PI, M_2_PI, M_2_SQRTPI, M_SQRT2, M_SQRT1_2,
                       CUDART_INF, CUDART_NAN, CUDART_NEG_ZERO, CUDART_ZERO, CUDART_ONE, CUDART_MIN_DENORM};
  const float fv[] = {CUDART_PI_F, CUDART_PIO2_F, CUDART_PIO4_F, CUDART_2_OVER_PI_F, CUDART_SQRT_HALF_F,
                      CUDART_L2E_F, CUDART_L2T_F, CUDART_LG2_F, CUDART_LNT_F, CUDART_LN2_F, CUDART_INF_F,
                      CUDART_NAN_F, CUDART_NEG_ZERO_F, CUDART_ZERO_F, CUDART_ONE_F, CUDART_MIN_DENORM_F,
                      CUDART_MAX_NORMAL_F};
  CUPY_FOR(i, 30) d[i] = dv[i];
  CUPY_FOR(i, 17) f[i] = fv[i];
}
'''


def test_math_constants_values():
    d, f = np.full(30, 7.0), np.full(17, np.float32(7))
    ukern.RawKernel(CONSTS, "consts")((1,), (32,), (ukern.Out(d), ukern.Out(f)))
    pi, e = np.pi, np.e
    want = [pi, pi / 2, pi / 4, 2 / pi, np.sqrt(2), np.sqrt(0.5), np.log2(e), np.log2(10), np.log10(2),
            np.log(10), np.log(2), pi, e, np.log2(e), np.log10(e), np.log(2), np.log(10), pi / 2, pi / 4,
            1 / pi, 2 / pi, 2 / np.sqrt(pi), np.sqrt(2), np.sqrt(0.5)]
    np.testing.assert_allclose(d[:24], want, rtol=4e-16, atol=0)
    assert np.isposinf(d[24]) and np.isnan(d[25]) and d[26] == 0 and np.signbit(d[26])
    assert d[27] == 0 and not np.signbit(d[27]) and d[28] == 1 and d[29] == 5e-324
    wf = np.array(want[:4] + want[5:11], np.float64).astype(np.float32)
    np.testing.assert_array_equal(f[:10], wf)
    assert np.isposinf(f[10]) and np.isnan(f[11]) and f[12] == 0 and np.signbit(f[12])
    assert f[13] == 0 and f[14] == 1 and f[15] == np.float32(1e-45) and f[16] == np.finfo(np.float32).max


# ---- the nvcc backend, signatures, arguments ------------------------------------------------

SUM = r'''
extern "C" __global__ void test_sum(const float* x1, const float* x2, float* y, unsigned int N) {
  unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
  if (tid < N) y[tid] = x1[tid] + x2[tid];
}
'''


@pytest.mark.parametrize("backend", ["nvrtc", pytest.param("nvcc", marks=pytest.mark.skipif(
    not HAS_NVCC, reason="no nvcc"))])
def test_in_out_values_both_backends(backend):
    n = 1025
    x1 = RNG.uniform(-2, 2, n).astype(np.float32)
    x2 = RNG.uniform(-2, 2, n).astype(np.float32)
    y = np.full(n, np.nan, np.float32)
    k = ukern.RawKernel(SUM, "test_sum", backend=backend)
    launch(k, n, ukern.In(x1), ukern.In(x2), ukern.Out(y), n)
    np.testing.assert_array_equal(y, x1 + x2)
    assert k.num_regs > 0 and k.max_threads_per_block > 0 and k.shared_size_bytes == 0


def test_inout_and_zero_size():
    code = ("extern \"C\" __global__ void inc(double* x, int n) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) x[i] = 2.0 * x[i] + 1.0;\n}\n")
    k = ukern.RawKernel(code, "inc", signature="double* x, int n")
    x = RNG.uniform(-3, 3, (7, 9))
    want = 2.0 * x + 1.0
    k[(1,), (64,)](ukern.InOut(x), x.size)
    np.testing.assert_array_equal(x, want)
    empty = np.empty(0)
    k[1, 1](ukern.InOut(empty), 0)  # no memory, a NULL pointer, nothing launched to touch it
    xf = np.asfortranarray(RNG.uniform(-3, 3, (5, 3)))
    wf = 2.0 * xf + 1.0
    k[1, 32](ukern.InOut(xf), xf.size)
    np.testing.assert_array_equal(xf, wf)


def test_signature_converts_scalars_at_launch():
    code = ("extern \"C\" __global__ void axpb(const float* x, float* y, float a, unsigned char b, long long n) {\n"
            "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
            "  if (i < n) y[i] = a * x[i] + b;\n}\n")
    k = ukern.RawKernel(code, "axpb", signature="const float* x, float* y, float a, unsigned char b, long long n")
    n = 333
    x = RNG.uniform(-2, 2, n).astype(np.float32)
    y = np.full(n, np.nan, np.float32)
    launch(k, n, ukern.In(x), ukern.Out(y), 2.5, 200, n)  # Python float and int, converted
    # NVRTC contracts a * x + b into one FMA (one rounding): within an ulp of NumPy's two
    np.testing.assert_allclose(y, np.float32(2.5) * x + np.float32(200), rtol=2e-7, atol=0)


def test_python_float_for_a_float_parameter_without_signature():
    """CuPy passes a Python float as 8 bytes (garbage in a float parameter);
    ukern reads the parameter's size from the cubin and passes a float32."""
    code = ("extern \"C\" __global__ void scale(const float* x, float* y, float a, int n) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = a * x[i];\n}\n")
    n = 100
    x = RNG.uniform(-2, 2, n).astype(np.float32)
    y = np.full(n, np.nan, np.float32)
    launch(ukern.RawKernel(code, "scale"), n, ukern.In(x), ukern.Out(y), -1.75, n)
    np.testing.assert_array_equal(y, np.float32(-1.75) * x)


def test_handle_and_kernel_property():
    k = ukern.RawKernel(SUM, "test_sum")
    assert isinstance(k.handle, int) and k.handle != 0
    assert k.kernel.ptr == k.handle and k.kernel.attributes["num_regs"] == k.num_regs


def test_memory_pointer_and_cupy_arrays():
    cp = pytest.importorskip("cupy")
    n = 257
    x1, x2 = cp.asarray(RNG.uniform(-2, 2, n).astype(np.float32)), cp.asarray(RNG.uniform(-2, 2, n).astype(np.float32))
    y, yc = cp.full(n, cp.nan, cp.float32), cp.full(n, cp.nan, cp.float32)
    ukern.RawKernel(SUM, "test_sum")(((n + 127) // 128,), (128,), (x1.data, x2, y.data, n))  # MemoryPointer
    cp.RawKernel(SUM, "test_sum")(((n + 127) // 128,), (128,), (x1.data, x2, yc.data, n))
    cp.testing.assert_array_equal(y, yc)
    cp.testing.assert_array_equal(y, x1 + x2)


def test_texture_object_argument():
    cp = pytest.importorskip("cupy")
    from cupy.cuda import runtime, texture
    n = 64
    host = RNG.uniform(-2, 2, n).astype(np.float32)
    ch = texture.ChannelFormatDescriptor(32, 0, 0, 0, runtime.cudaChannelFormatKindFloat)
    arr = texture.CUDAarray(ch, n)
    arr.copy_from(host)
    res = texture.ResourceDescriptor(runtime.cudaResourceTypeArray, cuArr=arr)
    desc = texture.TextureDescriptor((runtime.cudaAddressModeClamp,), runtime.cudaFilterModePoint,
                                     runtime.cudaReadModeElementType)
    tex = texture.TextureObject(res, desc)
    code = ("extern \"C\" __global__ void fetch(cudaTextureObject_t t, float* out, int n) {\n"
            "  int i = threadIdx.x;\n  if (i < n) out[i] = tex1D<float>(t, i + 0.5f);\n}\n")
    out = cp.full(n, cp.nan, cp.float32)
    ukern.RawKernel(code, "fetch")((1,), (n,), (tex, out, n))
    cp.testing.assert_array_equal(out, cp.asarray(host))


ATTRS = r'''
__constant__ float cbuf[37];
extern "C" __global__ void __launch_bounds__(256) bounded(float* x, int n) {
  __shared__ float s[300];
  s[threadIdx.x] = x[threadIdx.x] + cbuf[n % 37];
  __syncthreads();
  x[threadIdx.x] = s[(threadIdx.x + 1) % 256];
}
extern "C" __global__ void plain(double* x) { x[threadIdx.x] = sin(x[threadIdx.x]) * cos(x[threadIdx.x + 1]); }
extern "C" __global__ void heavy(double* x, int n) {
  double acc[24];
  for (int j = 0; j < 24; j++) acc[j] = x[(threadIdx.x * 7 + j * 13) % n];
  double s = 0;
  for (int j = 0; j < 24; j++) for (int k = j; k < 24; k++) s += acc[j] * acc[k] / (1.0 + acc[(j + k) % 24]);
  x[threadIdx.x] = s;
}
'''


@pytest.mark.parametrize("name", ["bounded", "plain", "heavy"])
def test_image_attributes_equal_the_drivers(name):
    """What the cubin states (used without a GPU) is what the driver reports."""
    k = ukern.RawModule(code=ATTRS).get_function(name)
    image = k.image_attributes()
    assert set(image) == {"num_regs", "shared_size_bytes", "const_size_bytes", "local_size_bytes",
                          "binary_version", "max_threads_per_block"}
    driver = {a: getattr(k, a) for a in image}
    assert image == driver


# ---- CuPy's exception classes (issue 23: CuPy's test_raw catches CuPy's classes) ------------

def test_errors_are_caught_by_cupys_classes(tmp_path):
    cp = pytest.importorskip("cupy")
    import warnings
    with pytest.raises(cp.cuda.compiler.CompileException) as ei:
        ukern.RawModule(code=SUM + "#error precision not supported\n").get_function("test_sum")
    assert isinstance(ei.value, ukern.CompileException) and "precision not supported" in str(ei.value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        broken = ukern.RawModule(code="__global__ void i_am_broken() {", jitify=True)
        with pytest.raises(cp.cuda.compiler.JitifyException):
            broken.get_function("i_am_broken")
    with pytest.raises(cp.cuda.driver.CUDADriverError, match="named symbol not found"):
        ukern.RawModule(code=SUM).get_function("no_such_kernel")
    with pytest.raises(cp.cuda.driver.CUDADriverError, match="CUDA_ERROR_FILE_NOT_FOUND"):
        ukern.RawModule(path=str(tmp_path / "this_does_not_exist.cubin")).get_function("k")
    k = ukern.RawKernel(SUM, "test_sum")            # and a working kernel next to them
    x = cp.arange(100, dtype=cp.float32)
    y = cp.zeros(100, dtype=cp.float32)
    k((1,), (100,), (x, x, y, cp.uint32(100)))
    cp.testing.assert_array_equal(y, 2 * x)
