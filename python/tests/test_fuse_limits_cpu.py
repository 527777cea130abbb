"""cpu tier: fusion programs past ukern's limits (UK_MAX_FUSE_DEPTH, UK_MAX_FUSE_INPUTS)
end in a Python exception carrying the C error, never a crash; a long traced chain
(statements, no depth limit) is created."""
import numpy as np
import pytest

import ukern
from ukern import _ukern

pytestmark = pytest.mark.skipif(not hasattr(_ukern, "_Fusion"), reason="the library has no fusion API")


@pytest.mark.parametrize("program, col", [
    ("z = " + "(" * 10000 + "x" + ")" * 10000, 205),
    ("z = " + "-" * 100000 + "x", 205),
    ("z = " + "x ** " * 100000 + "x", 1007),
])
def test_deep_program_is_a_syntax_error(program, col):
    with pytest.raises(ValueError) as ei:
        _ukern._Fusion("x", "z", program, "deep")
    msg = str(ei.value)
    assert f"program:1:{col}: expression nested deeper than 200 levels (UK_MAX_FUSE_DEPTH)" in msg
    assert ei.value.status == "UK_ERR_SYNTAX"


def test_at_the_depth_limit_works(arch90):
    f = _ukern._Fusion("x", "z", "z = " + "(" * 200 + "x" + ")" * 200, "deep")
    assert f is not None


def test_too_many_inputs_is_refused_at_the_65th_name():
    with pytest.raises(ValueError) as ei:
        _ukern._Fusion(", ".join(f"x{k}" for k in range(20000)), "z", "z = x0", "wide")
    assert "inputs:1:311: more than 64 names (UK_MAX_FUSE_INPUTS)" in str(ei.value)
    assert ei.value.status == "UK_ERR_INVALID"


def test_long_traced_chain(arch90):
    def f(x):
        for _ in range(20000):
            x = x * 0.5 + 1
        return x

    fz = ukern.fuse(f)
    prog = fz.program(np.zeros(3, np.float32))   # built nodes, shown one a line
    assert prog.count("multiply(") == 20000 and prog.count("add(") == 20000
    assert fz.kernel_count(np.zeros(3, np.float32)) == 1
