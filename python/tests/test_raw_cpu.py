"""cpu tier for RawModule / RawKernel as CuPy code uses them (no GPU needed):
CuPy's keyword arguments, warnings and error classes, CuPy's device headers
compiled for sm_90, the nvcc backend, declared signatures checked against
the cubin, argument packing (checked through _bind, which does everything a
call does but the launch), In/Out/InOut checks and kernel[grid, block]."""
import io
import os
import shutil
import warnings

import numpy as np
import pytest

import ukern

SUM = r'''
extern "C" __global__ void test_sum(const float* x1, const float* x2, float* y, unsigned int N) {
  unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
  if (tid < N) y[tid] = x1[tid] + x2[tid];
}
'''

PRECISION = r'''
#if PRECISION == 3
#error precision not supported
#endif
extern "C" __global__ void test_sum(float* y) { y[0] = PRECISION; }
'''

HAS_NVCC = shutil.which("nvcc") is not None or os.path.exists("/usr/local/cuda/bin/nvcc")


# ---- keyword arguments, as CuPy's -----------------------------------------------

def test_jitify_accepted_with_cupys_deprecation_warnings(arch90):
    with pytest.warns(DeprecationWarning, match="jitify=True is deprecated"):
        k = ukern.RawKernel(SUM, "test_sum", jitify=True)
    with pytest.warns(DeprecationWarning, match="Avoid passing `jitify=False`"):
        m = ukern.RawModule(code=SUM, jitify=False)
    assert k.jitify is True and m.jitify is False
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no jitify= given: no warning
        ukern.RawKernel(SUM, "test_sum").compile()
    k.compile()  # jitify=True compiles as NVRTC does: the std header map is Jitify's job
    assert k.num_params == 4


def test_jitify_std_headers_compile(arch90):
    code = ("#include <type_traits>\n#include <cupy/cuda_workaround.h>\n"
            "template <typename T> __global__ void k(T* x) {\n"
            "  static_assert(std::is_floating_point<T>::value, \"float\");\n"
            "  x[0] = std::numeric_limits<T>::max();\n}\n")
    with pytest.warns(DeprecationWarning):
        m = ukern.RawModule(code=code, jitify=True, name_expressions=["k<float>"])
    m.compile()
    assert m.get_lowered_name("k<float>").startswith("_Z")


def test_jitify_errors_as_cupy():
    with pytest.raises(ValueError, match="Jitify does not support precompiled objects"):
        ukern.RawModule(path="x.cubin", jitify=True)
    with pytest.raises(ValueError, match="Jitify only supports NVRTC"):
        ukern.RawModule(code=SUM, backend="nvcc", jitify=True)


def test_name_expressions_errors_as_cupy():
    with pytest.raises(ValueError, match="need CUDA C\\+\\+ code for the requested kernels"):
        ukern.RawModule(path="x.cubin", name_expressions=["k"])
    with pytest.raises(ValueError, match="only nvrtc supports retrieving the mangled names"):
        ukern.RawModule(code=SUM, backend="nvcc", name_expressions=["k"])


def test_backend_names():
    with pytest.raises(ValueError, match="Invalid backend 'hiprtc'.*'nvrtc' \\(default\\) or 'nvcc'"):
        ukern.RawKernel(SUM, "test_sum", backend="hiprtc")
    assert ukern.RawKernel(SUM, "test_sum").backend == "nvrtc"
    assert ukern.RawModule(code=SUM, backend="nvcc").backend == "nvcc"
    m = ukern.RawModule(path="x.cubin", options=("-O3",))
    assert m.backend == "nvcc" and m.options == ()  # CuPy's attributes for a file module


def test_attributes_as_given():
    k = ukern.RawKernel(SUM, "test_sum", ("-DX=1",), "nvrtc", translate_cucomplex=True,
                        enable_cooperative_groups=True)
    assert k.options == ("-DX=1",) and k.translate_cucomplex and k.enable_cooperative_groups
    assert k.code == SUM and k.file_path is None and k.signature is None


# ---- errors of CuPy's classes --------------------------------------------------------

def test_compile_error_is_compile_exception_with_cupys_attributes(arch90):
    m = ukern.RawModule(code=PRECISION, options=("-DPRECISION=3",))
    with pytest.raises(ukern.CompileException) as ei:
        m.get_function("test_sum")
    e = ei.value
    assert "precision not supported" in str(e) and e.get_message() == str(e)
    assert e.source == PRECISION and e.options == ("-DPRECISION=3",) and e.backend == "nvrtc"
    assert e.name == "RawModule"
    f = io.StringIO()
    e.dump(f)
    text = f.getvalue()
    assert text.startswith("NVRTC compilation error: ")
    assert "Options: -DPRECISION=3\n" in text and "3 #error precision not supported\n" in text
    ukern.RawModule(code=PRECISION, options=("-DPRECISION=2",)).get_function("test_sum")


def test_missing_kernel_is_driver_error_at_get_function(arch90):
    m = ukern.RawModule(code=SUM)
    with pytest.raises(ukern.CUDADriverError) as ei:
        m.get_function("no_such_kernel")
    assert "CUDA_ERROR_NOT_FOUND" in str(ei.value) and "no kernel 'no_such_kernel'" in str(ei.value)
    assert "test_sum" in str(ei.value)  # the kernels it has


def test_missing_file_is_driver_error_when_loaded(tmp_path):
    path = str(tmp_path / "this_does_not_exist.cubin")
    m = ukern.RawModule(path=path)  # lazy, as CuPy
    with pytest.raises(ukern.CUDADriverError) as ei:
        m.get_function("nonexisting_kernel")
    assert "CUDA_ERROR_FILE_NOT_FOUND" in str(ei.value) and path in str(ei.value)


@pytest.fixture
def fake_cupy_errors(monkeypatch):
    """CuPy's exception classes as CuPy defines them (their __init__ and __str__ take CuPy's
    arguments), in the modules CuPy keeps them in; ukern looks for them there."""
    import sys
    import types

    class CompileException(Exception):
        def __init__(self, msg, source, name, options, backend="nvrtc"):
            self._msg, self.source, self.name, self.options, self.backend = msg, source, name, options, backend
            super().__init__()

        def __str__(self):
            return self.get_message()

        def get_message(self):
            return self._msg

    class JitifyException(Exception):
        pass

    class CUDADriverError(RuntimeError):
        def __init__(self, status):
            self.status = status
            super().__init__(f"CUDA_ERROR {status}")

    comp = types.ModuleType("cupy.cuda.compiler")
    comp.CompileException, comp.JitifyException = CompileException, JitifyException
    drv = types.ModuleType("cupy_backends.cuda.api.driver")
    drv.CUDADriverError = CUDADriverError
    for name, mod in (("cupy", types.ModuleType("cupy")), ("cupy.cuda.compiler", comp),
                      ("cupy_backends.cuda.api.driver", drv)):
        monkeypatch.setitem(sys.modules, name, mod)
    return comp, drv


@pytest.mark.parametrize("jitify", [None, True])
def test_compile_errors_are_cupys_class_when_cupy_is_imported(arch90, fake_cupy_errors, jitify):
    import pickle
    comp, _ = fake_cupy_errors
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)   # jitify=True: CuPy's deprecation warning
        m = ukern.RawModule(code=PRECISION, options=("-DPRECISION=3",), jitify=jitify)
        with pytest.raises(comp.CompileException) as ei:     # code written for CuPy catches it
            m.get_function("test_sum")
    e = ei.value
    assert isinstance(e, ukern.CompileException) and type(e).__name__ == "CompileException"
    assert isinstance(e, comp.JitifyException) == bool(jitify)   # CuPy raises JitifyException for jitify
    assert "precision not supported" in str(e) and e.get_message() == str(e) == e._msg
    assert e.source == PRECISION and e.options == ("-DPRECISION=3",) and e.name == "RawModule"
    assert e.status == "UK_ERR_COMPILE" and "precision not supported" in e.log
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is ukern.CompileException and str(back) == str(e) and back.source == PRECISION


def test_driver_errors_are_cupys_class_when_cupy_is_imported(arch90, fake_cupy_errors, tmp_path):
    _, drv = fake_cupy_errors
    with pytest.raises(drv.CUDADriverError) as ei:
        ukern.RawModule(code=SUM).get_function("no_such_kernel")
    assert isinstance(ei.value, ukern.CUDADriverError) and isinstance(ei.value, RuntimeError)
    assert "CUDA_ERROR_NOT_FOUND" in str(ei.value) and "no_such_kernel" in str(ei.value)
    with pytest.raises(drv.CUDADriverError, match="CUDA_ERROR_FILE_NOT_FOUND"):
        ukern.RawModule(path=str(tmp_path / "none.cubin")).get_function("k")


def test_errors_are_ukerns_alone_without_cupy(arch90, monkeypatch):
    import sys
    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    with pytest.raises(ukern.CompileException) as ei:
        ukern.RawModule(code=PRECISION, options=("-DPRECISION=3",)).get_function("test_sum")
    assert type(ei.value) is ukern.CompileException
    with pytest.raises(ukern.CUDADriverError) as ei:
        ukern.RawModule(code=SUM).get_function("no_such_kernel")
    assert type(ei.value) is ukern.CUDADriverError


# ---- CuPy's device headers ------------------------------------------------------------

CUCOMPLEX = r'''
#include <cuComplex.h>
extern "C" __global__ void test_add(const cuFloatComplex* x, const cuFloatComplex* y, cuFloatComplex* z, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = cuCaddf(cuCmulf(x[i], y[i]), make_cuFloatComplex(cuCabsf(x[i]), cuCimagf(y[i])));
}
extern "C" __global__ void test_d(const cuDoubleComplex* x, cuDoubleComplex* z, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = cuCfma(x[i], cuConj(x[i]), cuCdiv(x[i], make_cuDoubleComplex(2.0, cuCreal(x[i]))));
}
'''


def test_translate_cucomplex_compiles(arch90):
    m = ukern.RawModule(code=CUCOMPLEX, translate_cucomplex=True)
    assert m.get_function("test_add").num_params == 4
    assert m.get_function("test_d").num_params == 3
    assert m.code == CUCOMPLEX  # .code is the user's text


@pytest.mark.parametrize("header, body", [
    ("cupy/complex.cuh", "complex<float> z(x[0], 1.f); x[0] = abs(thrust::polar(1.f, 2.f) * asin(z));"),
    ("cupy/math_constants.h", "x[0] = CUDART_PI_F + CUDART_INF_F + CUDART_NAN_F;"),
    ("cupy/float16.cuh", "float16 h = x[0]; h += 1; x[0] = h * 2.0f;"),
    ("cupy/carray.cuh", "CUPY_FOR(i, 4) x[i] = M_PI * M_E;"),
    ("cupy/cuda_workaround.h", "x[0] = std::numeric_limits<float>::max();"),
])
def test_cupy_headers_compile(arch90, header, body):
    code = f"#include <{header}>\nextern \"C\" __global__ void k(float* x) {{ {body} }}\n"
    ukern.RawKernel(code, "k").compile()


def test_cupy_complex_shared_array_compiles(arch90):
    code = ("#include <cupy/complex.cuh>\n"
            "extern \"C\" __global__ void k(complex<double>* x) {\n"
            "  __shared__ complex<double> s[128];\n"
            "  s[threadIdx.x] = x[threadIdx.x];\n  __syncthreads();\n"
            "  x[threadIdx.x] = s[127 - threadIdx.x] * 2.0;\n}\n")
    ukern.RawKernel(code, "k").compile()


@pytest.mark.skipif(not HAS_NVCC, reason="no nvcc in this toolkit")
def test_nvcc_backend_compiles_and_reports(arch90):
    k = ukern.RawKernel(SUM, "test_sum", backend="nvcc")
    k.compile()
    assert k.num_params == 4
    m = ukern.RawModule(code=PRECISION, options=("-DPRECISION=3",), backend="nvcc")
    with pytest.raises(ukern.CompileException) as ei:
        m.compile()
    assert "nvcc" in str(ei.value) and "precision not supported" in str(ei.value)
    assert ei.value.backend == "nvcc"
    inc = ukern.RawKernel("#include <cupy/complex.cuh>\n"
                          "extern \"C\" __global__ void k(complex<float>* z) { z[0] = atanh(z[0]); }\n",
                          "k", backend="nvcc")
    inc.compile()


# ---- signatures, checked as the C library's uk_function_set_signature ----------------

def test_signature_checked_against_cubin(arch90):
    ok = ukern.RawKernel(SUM, "test_sum", signature="const float* x1, const float* x2, float* y, unsigned int N")
    ok.compile()
    assert ok.num_params == 4 and ok.signature.startswith("const float*")
    few = ukern.RawKernel(SUM, "test_sum", signature="const float* x1, float* y, unsigned int N")
    with pytest.raises(TypeError, match="declares 3 parameters but kernel 'test_sum' has 4 \\(read from its cubin\\)"):
        few.compile()
    wide = ukern.RawKernel(SUM, "test_sum", signature="const float* x1, const float* x2, float* y, double N")
    with pytest.raises(TypeError, match="parameter 4 is declared as 8 bytes \\(float64\\) but kernel 'test_sum' "
                                        "takes 4 bytes"):
        wide.compile()


def test_signature_syntax_error_has_caret(arch90):
    k = ukern.RawKernel(SUM, "test_sum", signature="const float* x1, const float x2 y, float* y, int n")
    with pytest.raises(ValueError) as ei:
        k.compile()
    msg = str(ei.value)
    assert msg.startswith("signature:1:33: ") and msg.splitlines()[-1] == " " * 36 + "^"
    with pytest.raises(TypeError, match="signature must be a str"):
        ukern.RawKernel(SUM, "test_sum", signature=4)


ARGS = r'''
extern "C" __global__ void f(const float* x, float a, unsigned char b, long long n, double d, short s) {}
'''
ARGS_SIG = "const float* x, float a, unsigned char b, long long n, double d, short s"


def test_signature_converts_and_range_checks(arch90):
    k = ukern.RawKernel(ARGS, "f", signature=ARGS_SIG)
    k._bind(1, 1, (None, 1.5, 255, -(2 ** 63), 2, -32768))
    k._bind(1, 1, (0x1000, np.float32(1.5), np.uint8(3), np.int64(7), np.float64(1), np.int16(2)))
    k._bind(1, 1, (ukern.In(np.ones(3, np.float32)), 1.0, True, 1, 1.0, 1))
    cases = [
        ((None, 1.5, 256, 1, 2.0, 1), OverflowError, "argument 3 \\(declared uint8\\): 256 does not fit uint8"),
        ((None, 1.5, -1, 1, 2.0, 1), OverflowError, "argument 3 .*-1 does not fit uint8"),
        ((None, 1.5, 1, 2 ** 63, 2.0, 1), OverflowError, "argument 4 .*does not fit int64"),
        ((None, 1.5, 1, 1, 2.0, 32768), OverflowError, "argument 6 .*32768 does not fit int16"),
        ((None, 1.5, 1, 1.5, 2.0, 1), TypeError, "argument 4 \\(declared int64\\): a float cannot be passed as int64"),
        ((None, 1j, 1, 1, 2.0, 1), TypeError, "argument 2 .*a complex cannot be passed as float32"),
        ((None, np.float64(1), 1, 1, 2.0, 1), TypeError, "got a NumPy float64 scalar; pass numpy.float32"),
        ((None, 1.0, 1, 1, np.float32(2), 1), TypeError, "argument 5 .*got a NumPy float32 scalar"),
        ((1.5, 1.0, 1, 1, 1.0, 1), TypeError, "argument 1 is declared a pointer: got a float scalar"),
        ((None, None, 1, 1, 1.0, 1), TypeError, "argument 2 \\(declared float32\\): got NoneType"),
        ((np.ones(3), 1.0, 1, 1, 1.0, 1), TypeError, "argument 1 is a pointer: a host numpy.ndarray"),
        ((None, 1.0, 1, 1, 1.0), TypeError, "kernel 'f' takes 6 arguments \\(its signature\\), got 5"),
    ]
    for args, exc, match in cases:
        with pytest.raises(exc, match=match):
            k._bind(1, 1, args)


def test_argument_count_read_from_cubin(arch90):
    k = ukern.RawKernel(ARGS, "f")
    with pytest.raises(TypeError, match="kernel 'f' takes 6 arguments \\(its cubin\\), got 2"):
        k._bind(1, 1, (None, 1.0))
    k._bind(1, 1, (None, 1.0, 1, 1, 1.0, 1))


def test_cupy_packing_of_ptr_objects_and_numpy(arch90):
    k = ukern.RawKernel(ARGS, "f")

    class MemoryPointerLike:  # cupy.cuda.MemoryPointer, TextureObject, SurfaceObject: .ptr
        ptr = 0x7f0000001000

    k._bind(1, 1, (MemoryPointerLike(), np.ones(1, np.float32), np.ones((1, 1), np.uint8), 3, 1.0, 1))
    with pytest.raises(TypeError, match="a numpy.ndarray of shape \\(3,\\) cannot be a kernel argument"):
        k._bind(1, 1, (np.ones(3), 1.0, 1, 1, 1.0, 1))

    class NoPtr:
        pass

    with pytest.raises(TypeError):
        k._bind(1, 1, (NoPtr(), 1.0, 1, 1, 1.0, 1))


# ---- In / Out / InOut and kernel[grid, block] ---------------------------------------------

def test_host_wrappers_check_their_arrays():
    a = np.arange(12, dtype=np.float32)
    assert ukern.In(a).array is a and repr(ukern.Out(a)).startswith("ukern.Out(")
    ukern.InOut(a.reshape(3, 4).T)  # Fortran order is contiguous
    with pytest.raises(ValueError, match="ukern.In: the array must be contiguous"):
        ukern.In(a.reshape(3, 4)[:, ::2])
    with pytest.raises(TypeError, match="ukern.Out takes a host numpy.ndarray, not list"):
        ukern.Out([1.0, 2.0])
    with pytest.raises(TypeError, match="dtype object cannot be copied"):
        ukern.InOut(np.array([1, "a"], dtype=object))
    with pytest.raises(TypeError, match="dtype >f8 cannot be copied"):
        ukern.In(np.ones(3, dtype=">f8"))
    ro = np.ones(3)
    ro.flags.writeable = False
    ukern.In(ro)
    with pytest.raises(ValueError, match="ukern.Out: the array is read-only"):
        ukern.Out(ro)


def test_too_many_host_wrappers(arch90):
    code = "extern \"C\" __global__ void k(" + ", ".join(f"float* p{i}" for i in range(9)) + ") {}\n"
    k = ukern.RawKernel(code, "k")
    with pytest.raises(ValueError, match="at most 8 ukern.In/Out/InOut arguments"):
        k._bind(1, 1, tuple(ukern.In(np.ones(2, np.float32)) for _ in range(9)))


def test_launch_sugar_and_kernel_property(arch90):
    k = ukern.RawKernel(SUM, "test_sum")
    launch = k[(2,), (32,)]
    assert launch.grid == (2,) and launch.block == (32,) and launch.stream is None and launch.shared_mem == 0
    full = k[1, 64, None, 128]
    assert full.shared_mem == 128
    with pytest.raises(TypeError, match="launch configuration is kernel\\[grid, block\\]"):
        k[1]
    with pytest.raises(TypeError, match="launch configuration"):
        k[1, 2, 3, 4, 5]
    assert k.kernel._kernel is k
    if ukern.device_count() == 0:
        with pytest.raises(ukern.CUDADriverError):
            launch(None, None, None, 10)  # checked and packed, then no device
        with pytest.raises(ukern.CUDADriverError):
            k.handle


# ---- pickling and compile logs, as CuPy's -------------------------------------------------

def test_raw_kernel_and_module_pickle(arch90):
    import pickle
    code = SUM + "template <typename T> __global__ void fill(T* y, T v) { y[threadIdx.x] = v; }\n"
    k = ukern.RawKernel(code, "test_sum", ("-DX=1",), signature="const float* a, const float* b, float* y, "
                        "unsigned int n")
    k2 = pickle.loads(pickle.dumps(k))
    assert (k2.name, k2.code, k2.options, k2.signature) == (k.name, code, ("-DX=1",), k.signature)
    assert k2.num_params == 4
    m = ukern.RawModule(code=code, name_expressions=["fill<int>"], translate_cucomplex=True)
    m2 = pickle.loads(pickle.dumps(m))
    assert m2.name_expressions == ("fill<int>",) and m2.translate_cucomplex and m2.code == code
    f = pickle.loads(pickle.dumps(m.get_function("fill<int>")))  # a kernel of a module
    assert f.name == "fill<int>" and f.num_params == 2
    p = pickle.loads(pickle.dumps(ukern.RawModule(path="some.cubin")))
    assert p.path == "some.cubin" and p.backend == "nvcc"


@pytest.mark.parametrize("backend", ["nvrtc", pytest.param("nvcc", marks=pytest.mark.skipif(
    not HAS_NVCC, reason="no nvcc"))])
def test_compile_log_stream_has_warnings(arch90, backend):
    code = ("extern \"C\" __global__ void test_op(const float* a, float* y) {\n"
            "  int j;  // never used: a warning in the log\n  y[threadIdx.x] = a[threadIdx.x] OP 1.0f;\n}\n")
    log = io.StringIO()
    ukern.RawKernel(code, "test_op", options=("-DOP=+",), backend=backend).compile(log_stream=log)
    assert "warning" in log.getvalue() and "\"j\"" in log.getvalue()
    log = io.StringIO()
    ukern.RawModule(code=code, options=("-DOP=-",), backend=backend).compile(log_stream=log)
    assert "warning" in log.getvalue()


def test_attributes_without_gpu_come_from_the_cubin(arch90):
    code = ("extern \"C\" __global__ void __launch_bounds__(128) k(float* x) {\n"
            "  __shared__ float s[64];\n  s[threadIdx.x % 64] = x[threadIdx.x];\n  __syncthreads();\n"
            "  x[threadIdx.x] = s[(threadIdx.x + 1) % 64];\n}\n")
    k = ukern.RawKernel(code, "k")
    image = k.image_attributes()
    assert image["binary_version"] == 90 and image["max_threads_per_block"] == 128
    assert image["shared_size_bytes"] in (256, 256 + 1024) and image["local_size_bytes"] == 0
    assert 0 < image["num_regs"] <= 255 and image["const_size_bytes"] == 0
    if ukern.device_count() == 0:
        assert k.num_regs == image["num_regs"] and k.max_threads_per_block == 128
        with pytest.raises(ukern.CUDADriverError, match="cache_mode_ca"):
            k.cache_mode_ca
