"""cpu tier of ukern.fuse for functions written for cupy.fuse (issue 23, CuPy's own
fusion tests): dtypes of scalar arguments, cupy.get_array_module of traced values,
CuPy's own fusion calling a ukern fused function, arguments sharing memory with one
updated in place, and the ufuncs added for them (nextafter, i0, complex inverse
trigonometry, complex max/min/argmax/argmin): typed as NumPy 2 types them and compiled
for sm_90 with NVRTC. Values on the device: test_fuse_compat_gpu.py."""
import sys
import threading

import numpy as np
import pytest

import ukern
from test_fuse_trace_cpu import evaluate, host, out_dtypes

pytestmark = pytest.mark.skipif(not hasattr(ukern, "fuse"), reason="the library has no fusion API")
RNG = np.random.default_rng(23)


# -- scalar arguments -----------------------------------------------------------------------
@pytest.mark.parametrize("s1,s2", [(np.uint16(3), np.complex128(1 - 2j)), (np.float64(2.5), np.int8(3)),
                                   (np.float32(1.5), np.float64(-0.5)), (np.int8(-4), np.uint64(7))])
def test_numpy_scalar_arguments_keep_their_dtype(s1, s2):
    # numpy.float64 and complex128 subclass float and complex: they are typed, not weak
    def f(a, b, x):
        return x.astype((a + b).dtype) + a * b
    x = host((3, 4), "int64")
    got, = evaluate(ukern.fuse(f), (s1, s2, x))
    want = f(s1, s2, x)
    assert np.asarray(got).dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("s,dtype", [(3, "int64"), (2.5, "float64"), (1 - 1j, "complex128"), (True, "bool")])
def test_python_scalar_argument_answers_numpys_dtype_and_stays_weak(s, dtype):
    # as cupy.fuse: s.dtype is the dtype NumPy gives the Python value; in arithmetic it stays weak
    def f(x, s):
        return x.astype(s.dtype), x * s
    x = host((5,), "float32")
    F = ukern.fuse(f)
    got = evaluate(F, (x, s))
    assert np.asarray(got[0]).dtype == np.dtype(dtype)
    assert np.asarray(got[1]).dtype == (x * s).dtype       # float32 (complex64 for a complex s)
    np.testing.assert_array_equal(got[1], x * s)
    assert F._program((x, s)).specialized


# -- cupy.get_array_module and CuPy's own fusion -----------------------------------------
def test_get_array_module_of_a_traced_value_is_cupy(fake_cupy):
    cp, seen, other = fake_cupy, [], []
    original = cp.get_array_module

    def f(x, y):
        t = threading.Thread(target=lambda: other.append(cp.get_array_module(x, 1.0)))
        t.start()
        t.join()
        xp = cp.get_array_module(x)
        seen.extend([xp, cp.get_array_module(2.0, None), cp.get_array_module(1.0, y)])
        return xp.exp(x) + y
    x = host((4,), "float32")
    assert "exp(a0)" in ukern.fuse(f).program(x, x)
    assert seen == [cp, np, cp] and other == [cp]   # a traced value answers cupy on any thread
    assert cp.get_array_module is original           # put back after the trace
    with pytest.raises(ZeroDivisionError):
        ukern.fuse(lambda x: cp.get_array_module(x) and 1 / 0).program(x)
    assert cp.get_array_module is original           # and after a failing one


def test_called_inside_cupys_own_fusion_runs_as_python(fake_cupy):
    class FusionVarArray:            # stands for CuPy's old-fusion placeholder
        pass
    FusionVarArray.__module__ = "cupy._core.fusion"
    tl = sys.modules["cupy._core._fusion_thread_local"].thread_local
    calls = []
    F = ukern.fuse(lambda x, y: calls.append((x, y)) or "python")
    v = FusionVarArray()
    for flags in ({"is_old_fusing": True}, {"is_new_fusing": True, "history": object()}):
        for k, val in flags.items():
            setattr(tl, k, val)
        try:
            assert F(v, 1) == "python"
        finally:
            tl.is_old_fusing, tl.is_new_fusing, tl.history = False, False, None
    assert calls == [(v, 1), (v, 1)]
    with pytest.raises(TypeError, match="cannot use a str"):   # not inside CuPy's fusion: traced
        F(v, 1)


# -- arguments that share memory with one updated in place --------------------------------
def test_updates_of_arguments_sharing_memory_are_detected():
    def f(x, y, z):
        x += y
        x += z
    x, y = host((4, 4), "float64"), host((4, 4), "float64")
    p = ukern.fuse(f)._program((x, y, y))
    assert p.aliased((x, x, x.T)) and p.aliased((x, y, x[::-1, ::-1])) and p.aliased((x, y, x))
    assert not p.aliased((x, y, y.T))                # only arguments that are read share memory
    q = ukern.fuse(lambda a, b: a.__iadd__(b))._program((x[:2], x[2:]))
    assert not q.aliased((x[:2], x[2:])) and q.aliased((x[:3], x[1:]))   # disjoint / overlapping rows
    assert not q.aliased((x[:0], x[:0]))             # empty arrays share nothing
    assert not ukern.fuse(lambda a, b: a + b)._program((x, x)).aliased((x, x))   # nothing updated


@pytest.mark.parametrize("case", ["same", "transposed", "reversed"])
def test_aliased_updates_run_as_python_with_numpys_result(case):
    def f(x, y, z):
        x += y
        x += z
        return x * 2
    base = host((5, 5), "float64")
    ref = base.copy()
    views = {"same": lambda a: (a, a, a), "transposed": lambda a: (a, a, a.T),
             "reversed": lambda a: (a, a[::-1], a[:, ::-1])}[case]
    want = f(*views(ref))
    args = views(base)
    got = ukern.fuse(f)._program(args).run(args, None, f)   # the call's path once arguments are checked
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(base, ref)


# -- the ufuncs added: NumPy's result dtypes, and NVRTC compiles them ------------------------
def _ops_cases():
    cases = []
    for dt in ["float16", "float32", "float64", "int8", "uint16", "bool"]:
        cases.append(("nextafter", lambda x, y: np.nextafter(x, y), dt, dt))
        cases.append(("nextafter_mixed", lambda x, y: np.nextafter(x, y), dt, "float32"))
        cases.append(("i0", lambda x, y: np.i0(x), dt, dt))
    for dt in ["int8", "uint32", "int64"]:
        cases.append(("gcd_lcm", lambda x, y: (np.gcd(x, y), np.lcm(x, y), np.gcd(x, 12), np.lcm(6, y)), dt, dt))
        cases.append(("gcd_mixed", lambda x, y: (np.gcd(x, y), np.lcm(y, x)), dt, "int16"))
    for dt in ["float16", "float32", "int16", "bool"]:
        cases.append(("heaviside", lambda x, y: (np.heaviside(x, y), np.heaviside(x, 0.5)), dt, dt))
        cases.append(("float_power", lambda x, y: (np.float_power(x, y), np.float_power(x, 2)), dt, "float32"))
    cases.append(("float_power_complex", lambda x, y: np.float_power(x, y), "complex64", "float32"))
    for dt in ["int8", "uint16", "int64", "uint64", "bool"]:
        cases.append(("bitwise_count", lambda x, y: (np.bitwise_count(x), np.bitwise_count(x) + y), dt, "int16"))
    for dt in ["complex64", "complex128"]:
        cases.append(("inverse_trig", lambda x, y: (np.arcsin(x), np.arccos(x), np.arctan(x), np.arcsinh(x),
                                                    np.arccosh(x), np.arctanh(x)), dt, dt))
        cases.append(("extrema", lambda x, y: (x.max(), np.min(x, 0), np.argmax(x, 1), x.argmin(), np.amax(x + y, 1)),
                      dt, "float32"))
    return cases


@pytest.mark.parametrize("name,f,dx,dy", _ops_cases(), ids=lambda v: v if isinstance(v, str) else "")
def test_added_ufuncs_type_as_numpy_and_compile(arch90, name, f, dx, dy):
    x, y = host((3, 5), dx), host((3, 5), dy)
    F = ukern.fuse(f)
    with np.errstate(all="ignore"):
        want = f(x, y)
    want = want if isinstance(want, tuple) else (want,)
    assert out_dtypes(F.source(x, y)) == [np.asarray(w).dtype.name for w in want]
    F.precompile(x, y)


@pytest.mark.parametrize("name", ["gcd", "lcm", "heaviside", "float_power"])
def test_composed_and_integer_ufuncs_evaluate_as_numpy(name):
    ints = name in ("gcd", "lcm")
    x = RNG.integers(-30, 30, (4, 6)) if ints else RNG.uniform(-2, 2, (4, 6))
    y = RNG.integers(-30, 30, (4, 6)) if ints else RNG.uniform(-2, 2, (4, 6))
    if ints:
        x[0, :3], y[0, :3] = [0, 0, -12], [0, 7, 0]          # gcd(0, 0) = 0, lcm with 0 = 0
        x, y = x.astype("int32"), y.astype("int16")
    else:
        x[0, :4] = [0.0, -0.0, np.nan, -np.inf]
        x, y = x.astype("float32"), y.astype("float32")
    f = lambda a, b: getattr(np, name)(a, b)    # noqa: E731
    with np.errstate(all="ignore"):
        want = f(x, y)
        got, = evaluate(ukern.fuse(f), (x, y))
    assert np.asarray(got).dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_argmax_takes_cupys_dtype_keyword():
    # cupy.argmax(a, axis, dtype, out, keepdims) calls a.argmax(axis=, dtype=, out=, keepdims=)
    x = host((4, 5), "float32")
    got = evaluate(ukern.fuse(lambda a: (a.argmax(axis=1, dtype="int32"), a.argmin(dtype=np.int16),
                                         a.argmax(1, None, None, True))), (x,))
    assert [np.asarray(g).dtype for g in got] == [np.int32, np.int16, np.int64]
    np.testing.assert_array_equal(got[0], x.argmax(1))
    assert got[1] == x.argmin()
    np.testing.assert_array_equal(got[2], x.argmax(1, keepdims=True))


def test_float16_nextafter_steps_in_its_own_format(arch90):
    x = host((4,), "float16")
    src = ukern.fuse(lambda a, b: np.nextafter(a, b)).source(x, x)
    assert "_uk_nextafter16<ukern::half>" in src
    src = ukern.fuse(lambda a, b: np.nextafter(a, b)).source(x.astype("float32"), x.astype("float32"))
    assert "_uk_nextafter16" not in src and "_uk_nextafter(" in src


def test_refused_complex_operands_name_the_function():
    z = host((3,), "complex64")
    with pytest.raises(TypeError, match="i0 is not supported for complex operands"):
        ukern.fuse(lambda x: np.i0(x)).source(z)
    with pytest.raises(TypeError, match="var is not supported for complex operands"):
        ukern.fuse(lambda x: x.var()).source(z)
    b = host((3,), "bool")
    with pytest.raises(TypeError, match="gcd needs integer operands"):   # NumPy has no bool loop either
        ukern.fuse(lambda x: np.gcd(x, x)).source(b)
    with pytest.raises(TypeError, match="bitwise_count needs boolean or integer operands"):
        ukern.fuse(lambda x: np.bitwise_count(x)).source(host((3,), "float32"))
