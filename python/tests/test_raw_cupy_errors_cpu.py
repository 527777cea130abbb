"""cpu tier: RawModule / RawKernel errors come when and as CuPy raises them
(CuPy's test_raw.py: test_invalid_compiler_flag, test_get_function_failure,
test_module_load_failure, test_template_failure,
test_dynamical_parallelism_compile_failure, test_jitify3/4/5).

CuPy code catches cupy.cuda.compiler.CompileException / JitifyException and
cupy.cuda.driver.CUDADriverError. Here stand-ins of those classes, with
CuPy's constructors (which ukern must not call), sit in sys.modules where
CuPy's live, as they do once CuPy is imported; ukern never imports CuPy."""
import io
import os
import pickle
import shutil
import sys
import types
import warnings

import pytest

import ukern

HAS_NVCC = shutil.which("nvcc") is not None or os.path.exists("/usr/local/cuda/bin/nvcc")

SOURCE3 = r'''
#ifndef PRECISION
    #define PRECISION 2
#endif
#if PRECISION == 2
    #define TYPE double
#elif PRECISION == 1
    #define TYPE float
#else
    #error precision not supported
#endif
extern "C" __global__ void test_sum(const TYPE* x1, const TYPE* x2, TYPE* y, unsigned int N) {
  unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
  if (tid < N) y[tid] = x1[tid] + x2[tid];
}
'''

TEMPLATE = r'''
#include <cupy/complex.cuh>
template<typename T>
__global__ void my_sqrt(T* input, int N) {
  unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x < N) input[x] *= input[x];
}
__global__ void my_func(double* input, int N) {
  unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x < N) input[x] *= input[x];
}
'''

# a kernel that launches a kernel (CuPy's _test_source4)
NESTED = r'''
extern "C" {
__global__ void test_kernel_inner(float *arr, int N) {
  unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
  if (tid < N) arr[tid] = 1.0;
}
__global__ void test_kernel(float *arr, int N, int inner_blk) {
  unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
  if (tid < N/inner_blk) test_kernel_inner<<<1, inner_blk>>>(arr+tid*inner_blk, inner_blk);
}
}
'''


def _cupy_stand_ins():
    """CuPy's exception classes as CuPy defines their interfaces."""
    compiler = types.ModuleType("cupy.cuda.compiler")

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

    compiler.CompileException, compiler.JitifyException = CompileException, JitifyException
    driver = types.ModuleType("cupy_backends.cuda.api.driver")

    class CUDADriverError(RuntimeError):
        def __init__(self, status):
            self.status = status
            super().__init__("CUDA_ERROR_%d" % status)

        def __reduce__(self):
            return (type(self), (self.status,))

    driver.CUDADriverError = CUDADriverError
    return compiler, driver


@pytest.fixture
def cupy_errors(monkeypatch):
    compiler, driver = _cupy_stand_ins()
    monkeypatch.setitem(sys.modules, "cupy.cuda.compiler", compiler)
    monkeypatch.setitem(sys.modules, "cupy_backends.cuda.api.driver", driver)
    return types.SimpleNamespace(CompileException=compiler.CompileException,
                                 JitifyException=compiler.JitifyException,
                                 CUDADriverError=driver.CUDADriverError)


@pytest.fixture
def no_cupy(monkeypatch):
    for name in ("cupy.cuda.compiler", "cupy_backends.cuda.api.driver"):
        monkeypatch.delitem(sys.modules, name, raising=False)


def _quiet(**kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # jitify=: CuPy's warning, tested elsewhere
        return kw.pop("make")(**kw)


# ---- compile errors ------------------------------------------------------------------

@pytest.mark.parametrize("backend", ["nvrtc", "nvcc"])
def test_compile_error_is_cupys_compile_exception(arch90, cupy_errors, backend):
    if backend == "nvcc" and not HAS_NVCC:
        pytest.skip("no nvcc")
    m = ukern.RawModule(code=SOURCE3, options=("-DPRECISION=3",), backend=backend)
    with pytest.raises(cupy_errors.CompileException) as ei:
        m.get_function("test_sum")
    e = ei.value
    assert isinstance(e, ukern.CompileException) and not isinstance(e, cupy_errors.JitifyException)
    assert "precision not supported" in str(e)
    # ukern's behaviour where CuPy's class defines its own: message, get_message, _msg, attributes
    assert str(e) == e.get_message() == e._msg == e.args[0]
    assert e.source == SOURCE3 and e.options == ("-DPRECISION=3",) and e.backend == backend
    assert e.status == "UK_ERR_COMPILE" and "precision not supported" in e.log
    assert repr(e).startswith("CompileException(")
    f = io.StringIO()
    e.dump(f)
    assert "#error precision not supported" in f.getvalue()
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is type(e) and str(back) == str(e) and back.source == SOURCE3 and back.log == e.log


def test_compile_error_with_jitify_is_jitify_exception(arch90, cupy_errors):
    """CuPy raises JitifyException with jitify=True (test_invalid_compiler_flag,
    test_jitify4); a CompileException too (test_jitify3 catches that)."""
    m = _quiet(make=ukern.RawModule, code=SOURCE3, options=("-DPRECISION=3",), jitify=True)
    with pytest.raises(cupy_errors.JitifyException) as ei:
        m.get_function("test_sum")
    e = ei.value
    assert isinstance(e, ukern.JitifyException) and isinstance(e, ukern.CompileException)
    assert isinstance(e, cupy_errors.CompileException)
    assert "precision not supported" in str(e)
    broken = _quiet(make=ukern.RawModule, code="__global__ void i_am_broken() {\n", jitify=True)
    with pytest.raises(cupy_errors.JitifyException):
        broken.get_function("i_am_broken")
    # jitify=False is CuPy's plain CompileException
    plain = _quiet(make=ukern.RawModule, code="__global__ void i_am_broken() {\n", jitify=False)
    with pytest.raises(cupy_errors.CompileException) as ei:
        plain.get_function("i_am_broken")
    assert not isinstance(ei.value, cupy_errors.JitifyException) and "expected a \"}\"" in str(ei.value)


def test_name_expression_error_with_jitify(arch90, cupy_errors):
    """CuPy's test_jitify3: shift<float> cannot be instantiated (enable_if)."""
    code = ("#include <type_traits>\n"
            "template<typename T, typename = typename std::enable_if<std::is_integral<T>::value>::type>\n"
            "__global__ void shift(T* a, int N) { unsigned int t = threadIdx.x; if (t < N) a[t] += 100; }\n")
    m = _quiet(make=ukern.RawModule, code=code, jitify=True, name_expressions=("shift<float>",))
    with pytest.raises(cupy_errors.CompileException) as ei:
        m.get_function("shift<float>")
    assert "Error in parsing name expression" in str(ei.value)
    ok = _quiet(make=ukern.RawModule, code=code, jitify=True, name_expressions=("shift<int>",))
    assert ok.get_function("shift<int>").num_params == 2


def test_elementwise_compile_error_is_cupys_too(arch90, cupy_errors):
    import numpy as np
    k = ukern.ElementwiseKernel("T x", "T y", "y = x +* 2", "bad_ew_cupy_class")
    with pytest.raises(cupy_errors.CompileException) as ei:
        k.precompile(np.ones(5, np.float32))
    assert isinstance(ei.value, ukern.CompileException)


# ---- driver errors --------------------------------------------------------------------

def test_missing_kernel_is_cupys_driver_error(arch90, cupy_errors):
    m = ukern.RawModule(code=SOURCE3)
    with pytest.raises(cupy_errors.CUDADriverError) as ei:
        m.get_function("no_such_kernel")
    e = ei.value
    assert isinstance(e, ukern.CUDADriverError) and isinstance(e, RuntimeError)
    assert str(e).startswith("CUDA_ERROR_NOT_FOUND: named symbol not found: no kernel 'no_such_kernel'")
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is type(e) and str(back) == str(e)


def test_template_failure_as_cupy(arch90, cupy_errors):
    """CuPy's test_template_failure: a template without name expressions, and
    an instance that was not asked for, are not found at get_function."""
    with pytest.raises(cupy_errors.CUDADriverError, match="named symbol not found"):
        ukern.RawModule(code=TEMPLATE).get_function("my_sqrt<int>")
    m = ukern.RawModule(code=TEMPLATE, name_expressions=["my_sqrt<int>"])
    assert m.get_function("my_sqrt<int>").num_params == 2
    with pytest.raises(cupy_errors.CUDADriverError, match="named symbol not found"):
        m.get_function("my_sqrt<double>")
    with pytest.raises(ValueError, match="nvrtc"):
        ukern.RawModule(code=TEMPLATE, backend="nvcc", name_expressions=["my_sqrt<int>"])


def test_missing_file_is_cupys_driver_error(cupy_errors, tmp_path):
    path = str(tmp_path / "this_does_not_exist.cubin")
    m = ukern.RawModule(path=path)
    with pytest.raises(cupy_errors.CUDADriverError, match="CUDA_ERROR_FILE_NOT_FOUND"):
        m.get_function("nonexisting_kernel")


# ---- without CuPy, and with another CuPy -----------------------------------------------

def test_without_cupy_the_classes_are_ukerns(arch90, no_cupy):
    m = ukern.RawModule(code=SOURCE3, options=("-DPRECISION=3",))
    with pytest.raises(ukern.CompileException) as ei:
        m.get_function("test_sum")
    assert type(ei.value) is ukern.CompileException
    m = _quiet(make=ukern.RawModule, code=SOURCE3, options=("-DPRECISION=3",), jitify=True)
    with pytest.raises(ukern.JitifyException) as ei:
        m.get_function("test_sum")
    assert type(ei.value) is ukern.JitifyException
    with pytest.raises(ukern.CUDADriverError) as ei:
        ukern.RawModule(code=SOURCE3).get_function("nope")
    assert type(ei.value) is ukern.CUDADriverError


def test_each_cupy_gets_its_own_classes(arch90, monkeypatch):
    caught = []
    for _ in range(2):
        compiler, driver = _cupy_stand_ins()
        monkeypatch.setitem(sys.modules, "cupy.cuda.compiler", compiler)
        monkeypatch.setitem(sys.modules, "cupy_backends.cuda.api.driver", driver)
        with pytest.raises(compiler.CompileException) as ei:
            ukern.RawModule(code=SOURCE3, options=("-DPRECISION=3",)).get_function("test_sum")
        caught.append(type(ei.value))
    assert caught[0] is not caught[1]


def test_a_module_that_is_not_cupys_is_ignored(arch90, monkeypatch):
    fake = types.ModuleType("cupy.cuda.compiler")
    fake.CompileException = "not a class"
    monkeypatch.setitem(sys.modules, "cupy.cuda.compiler", fake)
    with pytest.raises(ukern.CompileException) as ei:
        ukern.RawModule(code=SOURCE3, options=("-DPRECISION=3",)).get_function("test_sum")
    assert type(ei.value) is ukern.CompileException


# ---- kernels that launch kernels: relocatable code only when asked, as CuPy --------------

@pytest.mark.parametrize("backend", ["nvrtc", "nvcc"])
def test_nested_launch_needs_dc_as_in_cupy(arch90, cupy_errors, backend):
    """CuPy's test_dynamical_parallelism_compile_failure: no -dc, a compile
    error at the call (where the kernel is compiled); with -dc it compiles."""
    if backend == "nvcc" and not HAS_NVCC:
        pytest.skip("no nvcc")
    k = ukern.RawKernel(NESTED, "test_kernel", backend=backend)
    with pytest.raises(cupy_errors.CompileException) as ei:
        k.compile()
    text = str(ei.value)
    assert "needs relocatable device code: pass options=('-dc',)" in text
    assert text.index("hint:") < text.index("the log follows")
    for opts in (("-dc",), ("-rdc=true",), ("--relocatable-device-code=true",)):
        k = ukern.RawKernel(NESTED, "test_kernel", options=opts, backend=backend)
        k.compile()
        assert k.num_params == 3 and k.options == opts
    k = _quiet(make=ukern.RawKernel, code=NESTED, name="test_kernel", jitify=True) if backend == "nvrtc" else None
    if k is not None:
        with pytest.raises(cupy_errors.JitifyException):
            k.compile()


# ---- jitify=True: an include that cannot be found is empty, as Jitify makes it -------------

SUM = r'''
extern "C" __global__ void test_sum(const float* x1, const float* x2, float* y, unsigned int N) {
  unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
  if (tid < N) y[tid] = x1[tid] + x2[tid];
}
'''


def test_jitify_compiles_past_an_unused_missing_header(arch90, cupy_errors, tmp_path):
    """CuPy's test_jitify5: a user header including a header that does not exist."""
    (tmp_path / "I_INCLUDE_SOMETHING.h").write_text("#include <cupy/I_DO_NOT_EXIST_WAH_HA_HA.h>\n")
    code = '#include "I_INCLUDE_SOMETHING.h"\n' + SUM
    opts = (f"-I{tmp_path}",)
    m = _quiet(make=ukern.RawModule, code=code, options=opts, jitify=True)
    assert m.get_function("test_sum").num_params == 4
    log = io.StringIO()
    m.compile(log_stream=log)
    assert 'header "cupy/I_DO_NOT_EXIST_WAH_HA_HA.h" not found: compiled as empty' in log.getvalue()
    for jitify in (False, None):  # without Jitify: NVRTC's error, CuPy's CompileException
        m = _quiet(make=ukern.RawModule, code=code, options=opts, jitify=jitify)
        with pytest.raises(cupy_errors.CompileException) as ei:
            m.get_function("test_sum")
        assert "cannot open source file" in str(ei.value)
        assert not isinstance(ei.value, cupy_errors.JitifyException)


def test_jitify_missing_header_that_is_used_fails_naming_it(arch90, cupy_errors):
    code = '#include "not_there.h"\nextern "C" __global__ void k(float* y) { y[0] = FROM_NOT_THERE; }\n'
    m = _quiet(make=ukern.RawModule, code=code, jitify=True)
    with pytest.raises(cupy_errors.JitifyException) as ei:
        m.get_function("k")
    assert "FROM_NOT_THERE" in str(ei.value) and 'header "not_there.h" not found' in ei.value.log
