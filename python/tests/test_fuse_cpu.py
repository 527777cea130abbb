"""cpu tier of ukern.fuse: tracing into program text, errors, plans and compiles for sm_90."""
import numpy as np
import pytest

import ukern

pytestmark = pytest.mark.skipif(not hasattr(ukern, "fuse"), reason="the library has no fusion API")


def test_decorator_forms_and_program_text():
    @ukern.fuse
    def saxpy(a, x, y):
        return a * x + y

    assert isinstance(saxpy, ukern.Fusion) and saxpy.kernel_name == "saxpy" and saxpy.__name__ == "saxpy"
    assert saxpy.program(1, 2, 3) == "t0 = a0 * a1\nt1 = t0 + a2\nout0 = t1"

    @ukern.fuse(kernel_name="dist")
    def d(x, y):
        t = x - y
        return np.sqrt(np.sum(t * t, axis=-1, keepdims=True))

    assert d.kernel_name == "dist"
    assert d.program(1, 2).splitlines()[2] == "t2 = sum(t1, axis=-1, keepdims=True)"
    assert ukern.fuse()(lambda x: x).kernel_name == "fusion"
    with pytest.raises(TypeError):
        ukern.fuse(1, 2)


def test_trace_covers_operators_functions_and_methods(arch90):
    def f(x, y):
        return (-x + 2 - y * 3 / x // 2 % 5 ** y, x < y, ~(x > 1) & (y != 2) | (x == 0) ^ (y >= 1),
                np.where(x > 0.5, np.log1p(x), np.maximum(y, -1.5)), abs(x).astype(np.float16),
                x.sum(axis=(0, 1)), np.max(x, axis=0), x.mean(), y.var(ddof=1), x.real, x.conj(),
                np.float32(2) * x, 1j * x, True & (x > 0))

    prog = ukern.fuse(f).program(1, 2)
    for piece in ("-a0", "+ 2", "/ ", "// ", "% ", "5 ** ", "< ", "~", "& ", "| ", "^ ", "where(", "log1p(",
                  "maximum(a1, (-1.5))", "abs(", "astype(", "'float16')", "sum(a0, axis=(0, 1))",
                  "max(a0, axis=0)", "mean(a0, axis=None)", "var(a1, ddof=1, axis=None)", "real(a0)",
                  "conj(a0)", "float32(2.0)", "(0.0 + 1.0j)", "True & "):
        assert piece in prog, piece
    assert prog.count("out") == 14
    a = np.ones((4, 6), np.float32)
    assert ukern.fuse(f).kernel_count(a, a) >= 1       # ukern accepts the traced program


def test_trace_errors():
    with pytest.raises(TypeError, match="truth value"):
        ukern.fuse(lambda x: x if x > 0 else -x).program(1)
    with pytest.raises(TypeError, match="in-place"):
        def inplace(x):
            x += 1
            return x
        ukern.fuse(inplace).program(1)
    with pytest.raises(NotImplementedError):
        ukern.fuse(lambda x: np.add.reduce(x)).program(1)
    with pytest.raises(TypeError, match="cannot use"):
        ukern.fuse(lambda x: x + [1]).program(1)
    with pytest.raises(ValueError, match="returns nothing"):
        ukern.fuse(lambda x: ()).program(1)


def test_unknown_function_is_a_syntax_error_with_caret():
    f = ukern.fuse(lambda x: np.sinc(x))
    with pytest.raises(ValueError) as ei:
        f.program(1) and f.kernel_count(np.zeros(3, np.float32))
    assert "sinc" in str(ei.value) and "^" in str(ei.value) and ei.value.status == "UK_ERR_SYNTAX"


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
