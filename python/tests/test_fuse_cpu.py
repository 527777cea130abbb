"""cpu tier of ukern.fuse: tracing into builder nodes (shown as text), errors, plans and compiles for sm_90."""
import numpy as np
import pytest

import ukern

pytestmark = pytest.mark.skipif(not hasattr(ukern, "fuse"), reason="the library has no fusion API")


def test_decorator_forms_and_program_text():
    @ukern.fuse
    def saxpy(a, x, y):
        return a * x + y

    assert isinstance(saxpy, ukern.Fusion) and saxpy.kernel_name == "saxpy" and saxpy.__name__ == "saxpy"
    assert saxpy.program(1, 2, 3) == "t0 = multiply(a0, a1)\nt1 = add(t0, a2)\nout0 = t1"

    @ukern.fuse(kernel_name="dist")
    def d(x, y):
        t = x - y
        return np.sqrt(np.sum(t * t, axis=-1, keepdims=True))

    assert d.kernel_name == "dist"
    x = np.ones((2, 3))
    assert d.program(x, x).splitlines()[2] == "t2 = sum(t1, axis=(-1,), keepdims=True)"
    assert ukern.fuse()(lambda x: x).kernel_name == "fusion"
    with pytest.raises(TypeError):
        ukern.fuse(1, 2)


def test_trace_covers_operators_functions_and_methods(arch90):
    def f(x, y):
        return (-x + 2 - y * 3 / x // 2 % 5 ** y, x < y, ~(x > 1) & (y != 2) | (x == 0) ^ (y >= 1),
                np.where(x > 0.5, np.log1p(x), np.maximum(y, -1.5)), abs(x).astype(np.float16),
                x.sum(axis=(0, 1)), np.max(x, axis=0), x.mean(), y.var(ddof=1), x.real, x.conj(),
                np.float32(2) * x, 1j * x, True & (x > 0))

    a = np.ones((4, 6), np.float32)
    prog = ukern.fuse(f).program(a, a)
    for piece in ("negative(a0)", "= 2\n", "true_divide(", "floor_divide(", "remainder(", "power(t", "less(a0, a1)",
                  "invert(", "bitwise_and(", "bitwise_or(", "bitwise_xor(", "where(", "log1p(a0)",
                  "= -1.5\n", "maximum(a1, t", "absolute(a0)", "'float16')", "sum(a0, axis=(0, 1))",
                  "max(a0, axis=(0,))", "mean(a0, axis=None)", "var(a1, axis=None, ddof=1)", "real(a0)",
                  "conjugate(a0)", "astype(t", "'float32')", "= 1j\n", "= True\n"):
        assert piece in prog, piece
    assert prog.count("out") == 14
    assert ukern.fuse(f).kernel_count(a, a) >= 1       # the builder accepts the traced program


def test_trace_errors():
    with pytest.raises(TypeError, match="truth value"):
        ukern.fuse(lambda x: x if x > 0 else -x).program(1)
    with pytest.raises(NotImplementedError, match="reduce"):
        ukern.fuse(lambda x: np.add.reduce(x)).program(1)
    with pytest.raises(TypeError, match="cannot use"):
        ukern.fuse(lambda x: x + [1]).program(1)
    with pytest.raises(ValueError, match="computes nothing"):
        ukern.fuse(lambda x: None).source(np.ones(3))


def test_unknown_function_names_it():
    f = ukern.fuse(lambda x: np.cumsum(x))
    with pytest.raises(NotImplementedError, match="unknown function 'cumsum'"):
        f.program(np.zeros(3, np.float32))
    g = ukern.fuse(lambda x: np.spacing(x))   # a ufunc the builder does not know
    with pytest.raises(NotImplementedError, match="unknown function .spacing."):
        g.kernel_count(np.zeros(3, np.float32))


def test_plans_and_precompile(arch90):
    a = np.zeros((33, 17), np.float32)

    @ukern.fuse
    def centered(x):
        return x - x.mean(axis=1, keepdims=True)

    assert centered.kernel_count(a) == 1   # the row plan: reduce and use again in one kernel per row
    by_column = ukern.fuse(lambda x: x - x.mean(axis=0, keepdims=True))
    assert by_column.kernel_count(a) == 2  # the split plan: the reduction, then the elementwise kernel
    d = ukern.fuse(lambda x, y: np.sqrt(np.sum((x - y) * (x - y), axis=-1)))
    assert d.kernel_count(a, a) == 1
    src = d.source(a, a)
    assert "ukern fusion" in src and "float" in src
    before = ukern.cache_stats()["compiles"]
    d.precompile(a, a)
    assert ukern.cache_stats()["compiles"] > before
    with pytest.raises(ValueError, match="broadcast"):
        d.source(a, np.zeros((3, 5), np.float32))
