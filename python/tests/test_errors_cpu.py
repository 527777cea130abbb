"""cpu tier: errors speak Python (issue 27). The library's pointers to C names
(uk_options.arch, uk_last_error_log()) become ukern.configure(arch=...) and the
exception's .log; a kernel made before ukern.configure() says why it kept its
context. No GPU needed (the no-GPU cases skip on a machine with one)."""
import numpy as np
import pytest

import ukern
from conftest import has_gpu

no_gpu = pytest.mark.skipif(has_gpu(), reason="needs a machine without a GPU (no arch to choose)")


def _c_names(text):
    return [n for n in ("uk_options", "uk_last_error_log") if n in text]


@no_gpu
def test_no_arch_names_configure_not_the_c_field():
    ukern.configure()
    k = ukern.ElementwiseKernel("T x", "T y", "y = x * 2", "dbl_noarch")
    with pytest.raises(ukern.CUDADriverError) as e:
        k.precompile(np.ones(7, np.float32))
    text = str(e.value)
    assert "ukern.configure(arch=90)" in text and not _c_names(text), text
    assert "cannot choose an arch" in text
    assert "created before the last ukern.configure()" not in text  # its context is the current one
    assert e.value.status == "UK_ERR_NO_DEVICE"


@no_gpu
@pytest.mark.parametrize("kind", ["elementwise", "reduction"])
def test_kernel_made_before_configure_says_so(kind, tmp_path):
    ukern.configure()
    if kind == "elementwise":
        k = ukern.ElementwiseKernel("T x", "T y", "y = x + 1", "early_ew")
        call = lambda: k.precompile(np.ones((3, 5), np.float64))  # noqa: E731
    else:
        k = ukern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "early_red")
        call = lambda: k.precompile(np.ones((3, 5), np.float64), axis=1)  # noqa: E731
    ukern.configure(arch=90, cache_dir=str(tmp_path / "c90"))
    try:
        with pytest.raises(ukern.CUDADriverError) as e:
            call()
        text = str(e.value)
        assert "created before the last ukern.configure()" in text, text
        assert "create it again after ukern.configure(arch=...)" in text
        assert not _c_names(text), text
        # made again after configure(): it compiles for sm_90
        if kind == "elementwise":
            again = ukern.ElementwiseKernel("T x", "T y", "y = x + 1", "early_ew")
            again.precompile(np.ones((3, 5), np.float64))
        else:
            again = ukern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "early_red")
            again.precompile(np.ones((3, 5), np.float64), axis=1)
        assert ukern.cache_stats()["compiles"] == 1
    finally:
        ukern.configure()


@pytest.mark.parametrize("kind", ["elementwise", "reduction"])
def test_compile_error_names_the_log_attribute(kind, arch90):
    if kind == "elementwise":
        k = ukern.ElementwiseKernel("T x", "T y", "y = x * not_declared_q", "bad_ew")
        call = lambda: k.precompile(np.ones(9, np.float32))  # noqa: E731
    else:
        k = ukern.ReductionKernel("T x", "T y", "x * not_declared_q", "a + b", "y = a", "0", "bad_red")
        call = lambda: k.precompile(np.ones((4, 9), np.float32), axis=1)  # noqa: E731
    with pytest.raises(ukern.CompileException) as e:
        call()
    text = str(e.value)
    first = text.splitlines()[0]
    assert "not_declared_q" in first and first.endswith("; the log follows (the exception's .log)"), first
    assert not _c_names(text), text
    assert e.value.log.startswith("nvrtc options: -arch=sm_90") and "not_declared_q" in e.value.log
    assert e.value.status == "UK_ERR_COMPILE"


def test_raw_module_errors_speak_python(arch90):
    """RawModule / RawKernel errors go through the same translation (pyk_raise)."""
    m = ukern.RawModule(code='extern "C" __global__ void f(float* x) { x[0] = not_declared_r; }')
    with pytest.raises(ukern.CompileException) as e:
        m.compile()
    text = str(e.value)
    assert "not_declared_r" in text and "the exception's .log" in text, text
    assert not _c_names(text), text


@no_gpu
def test_raw_module_without_arch_names_configure():
    ukern.configure()
    m = ukern.RawModule(code='extern "C" __global__ void g(float* x) { x[0] = 1.0f; }')
    with pytest.raises(Exception) as e:
        m.compile()
    text = str(e.value)
    assert "ukern.configure(arch" in text and not _c_names(text), text
