"""cpu tier: Python scalars passed as ARGUMENTS of a fused function, as CuPy's fusion
test TestFusionArrayBitwiseOperator uses them (issue 23): the function reads .dtype of
the argument (cupy.fuse answers NumPy's dtype of the Python value: int64 for an int) to
decide whether to compute at all, then combines it with an array by &, |, ^, <<, >> or
~. The traced program must return None where NumPy's run of the same function does,
type its result as NumPy 2 does (the scalar stays weak, NEP 50) and compute NumPy's
values; the generated source types its output alike."""
import numpy as np
import pytest

import ukern
from test_fuse_trace_cpu import evaluate, out_dtypes

pytestmark = pytest.mark.skipif(not hasattr(ukern, "fuse"), reason="the library has no fusion API")

RNG = np.random.default_rng(77)
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
OPS = {"lshift": lambda x, y: x << y, "rshift": lambda x, y: x >> y, "and": lambda x, y: x & y,
       "or": lambda x, y: x | y, "xor": lambda x, y: x ^ y, "invert": lambda x, y: ~x}


def _cupy_test_impl(func):
    # the body of CuPy's test: skip the uint64-with-signed pairs NumPy refuses
    def is_uint64(x):
        return not isinstance(x, int) and x.dtype == "uint64"

    def is_signed_int(x):
        return isinstance(x, int) or x.dtype.kind == "i"

    def impl(x, y):
        if (is_uint64(x) and is_signed_int(y)) or (is_uint64(y) and is_signed_int(x)):
            return None
        return func(x, y)
    return impl


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("side", ["array-primitive", "primitive-array"])
def test_bitwise_operators_with_python_int_arguments_match_numpy(op, side):
    checked = skipped = 0
    for dtype in INTS:
        arr = RNG.integers(1, 6, (3, 4)).astype(dtype)
        args = (arr, 3) if side == "array-primitive" else (3, arr)
        impl = _cupy_test_impl(OPS[op])
        want = impl(*args)
        fused = ukern.fuse(impl)
        p = fused._program(args)
        if want is None:
            assert p.none and not p.parts, (dtype, side)   # returns None, computes nothing
            skipped += 1
            continue
        got, = evaluate(fused, args)
        want = np.asarray(want)
        assert np.asarray(got).dtype == want.dtype, (dtype, side, np.asarray(got).dtype, want.dtype)
        np.testing.assert_array_equal(got, want)
        assert out_dtypes(fused.source(*args)) == [want.dtype.name], (dtype, side)
        checked += 1
    # int64 against uint64 is skipped both ways; ~x of the primitive only reads y.dtype
    assert skipped == 1 and checked == len(INTS) - 1


def test_python_int_argument_dtype_is_int64_and_its_value_stays_weak():
    # x.dtype of a Python int answers int64 (cupy.fuse's numpy.dtype(int)); in x & a it is
    # weak, so uint8 & 3 is uint8 (a strong int64 would make it int64)
    seen = []

    def f(s, a):
        seen.append((s.dtype, s.dtype.kind))
        return s & a, s << a, ~s
    a = np.array([1, 2, 7], dtype="uint8")
    got = evaluate(ukern.fuse(f), (3, a))
    assert seen == [(np.dtype("int64"), "i")]
    assert [np.asarray(g).dtype.name for g in got] == ["uint8", "uint8", "int64"]
    np.testing.assert_array_equal(got[0], 3 & a)
    np.testing.assert_array_equal(got[1], 3 << a)
    assert int(got[2]) == ~3
