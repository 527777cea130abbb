"""cpu tier of ukern.fuse's tracer: numpy.* and cupy.* calls trace alike, full call
signatures, attributes, in-place updates, plain Python without device arrays, NEP 50
corners; result dtypes of the built programs (read from .source() for sm_90) against
NumPy 2 on host arrays."""
import re
import threading

import numpy as np
import pytest

import fuse_examples
import ukern

pytestmark = pytest.mark.skipif(not hasattr(ukern, "fuse"), reason="the library has no fusion API")
RNG = np.random.default_rng(3)


def host(shape, dtype):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return RNG.integers(0, 2, shape).astype(bool)
    if dt.kind in "iu":
        return RNG.integers(1, 9, shape).astype(dt)
    v = RNG.uniform(0.5, 2.0, shape)
    return (v + 1j * RNG.uniform(-1, 1, shape)).astype(dt) if dt.kind == "c" else v.astype(dt)


def out_dtypes(src):
    """Output dtypes of a fusion's kernels, from their '// parameters:' lines."""
    found = {}
    for line in src.splitlines():
        if line.startswith("// parameters:") and "->" in line:
            for t, k in re.findall(r"(\w+) out(\d+) \(", line.split("->", 1)[1]):
                found[int(k)] = t
    return [found[k] for k in sorted(found)]


def numpy_dtypes(f, args):
    r = f(*args)
    return [np.asarray(v).dtype.name for v in (r if isinstance(r, tuple) else (r,))]


CASES = {
    "arith": lambda x, y: (x + y, x - 2, 3 * y, x / y, x // y, x % y, x ** 2),
    "weak_calls": lambda x, s: (np.minimum(2.5, s) * x, np.add(1, 2) + x, np.where(True, 1.5, s) + x),
    "numpy_scalar_const": lambda x, y: (x * np.float64(2), y + np.int8(3), x * np.float32(0.5)),
    "reductions": lambda x, y: (x.sum(0), np.sum(x, 1, np.float64), x.prod(axis=None), np.mean(x, axis=0),
                                np.max(x, 0), x.min(axis=(0, 1)), np.any(x, 0), x.all(), x.argmax(1),
                                np.var(x, 0, ddof=1), x.std()),
    "positional_signatures": lambda x, y: (x.sum(0, None, None, True), np.sum(x, 1, None, None, True),
                                           x.var(0, None, None, 1, True)),
    "routines": lambda x, y: (np.clip(x, 1, 3), np.round(x, 1), np.nansum(x, 0), np.nanprod(x, 1),
                              np.divmod(x, y)[0], np.modf(x)[1], np.square(x), np.copy(x)),
    "compare": lambda x, y: (x < y, x >= 2, np.maximum(x, y), np.fmin(x, y)),
    "attributes": lambda x, y: (x.astype(y.dtype) + x.ndim + x.size + x.shape[1] + len(y),),
}
DTYPES = {
    "arith": ["float32", "int16", "uint8", "float64"],
    "weak_calls": ["float32", "int8"],
    "numpy_scalar_const": ["float32", "int16"],
    "reductions": ["float32", "int8", "bool"],
    "positional_signatures": ["float32", "int32"],
    "routines": ["float32", "float64"],
    "compare": ["int32", "float32", "complex64"],
    "attributes": ["float32", "int8"],
}


@pytest.mark.parametrize("case,dtype", [(c, d) for c in CASES for d in DTYPES[c]])
def test_result_dtypes_match_numpy(arch90, case, dtype):
    f = CASES[case]
    x = host((3, 5), dtype)
    y = 2.0 if case == "weak_calls" else host((3, 5), dtype)
    if case == "arith" and dtype == "uint8":
        y = y.astype("int16")            # mixed kinds
    assert out_dtypes(ukern.fuse(f).source(x, y)) == numpy_dtypes(f, (x, y))


def test_numpy_float64_constant_is_strong(arch90):
    # np.float64 subclasses float, but NumPy 2 treats it as a float64 array would be
    x = host((7,), "float32")
    f = ukern.fuse(lambda x: x * np.float64(2.0))
    assert "astype(t0, 'float64')" in f.program(x)
    assert out_dtypes(f.source(x)) == ["float64"]


def test_all_weak_ufunc_call_is_strong_but_operator_is_not(arch90):
    x = host((7,), "float32")
    call = ukern.fuse(lambda x, s: x + np.multiply(s, 2.0))     # np.float64 * float32 array -> float64
    op = ukern.fuse(lambda x, s: x + s * 2.0)                    # Python floats stay weak -> float32
    assert out_dtypes(call.source(x, 1.5)) == ["float64"] == numpy_dtypes(lambda x, s: x + np.multiply(s, 2.0),
                                                                          (x, 1.5))
    assert out_dtypes(op.source(x, 1.5)) == ["float32"]


def test_axis_none_held_in_a_variable(arch90):
    x = host((4, 3), "float32")
    axis = None
    f = ukern.fuse(lambda x: (np.sum(x, axis), x.max(axis), np.mean(x, axis, None)))
    assert "sum(a0, axis=None)" in f.program(x) and out_dtypes(f.source(x)) == ["float32"] * 3


def test_keyword_and_positional_spellings_trace_alike():
    x = host((4, 3), "float32")
    a = ukern.fuse(lambda x: np.sum(x, axis=1, dtype=np.float64, keepdims=True)).program(x)
    b = ukern.fuse(lambda x: np.sum(x, 1, np.float64, None, True)).program(x)
    c = ukern.fuse(lambda x: x.sum(1, np.float64, None, True)).program(x)
    assert a == b == c and "astype(a0, 'float64')" in a


def test_ufunc_out_and_dtype_keywords():
    x = host((4,), "float32")

    def f(x, y):
        np.add(x, y, out=x)
        return np.multiply(x, 2, dtype=np.float64)
    p = ukern.fuse(f).program(x, x)
    assert "add(a0, a1)" in p and "astype(a0, 'float64')" not in p and p.count("out") == 2  # result + x


# -- in-place updates -------------------------------------------------------------------
def test_inplace_update_is_written_back_and_read_again():
    def f(x, y):
        x += y
        x *= 2
        return x + 1
    x = host((5,), "float32")
    fused = ukern.fuse(f)
    p = fused._program((x, x))
    assert [i for i, _ in p.writes] == [0] and p.nret == 1
    lines = p.text.splitlines()
    assert lines[0] == "t0 = add(a0, a1)" and lines[1].startswith("t1 = 2") and "multiply(t0, t1)" in p.text
    assert lines[-1] == "out1 = t2"     # the argument's final value: x * 2, not x + 1


def test_inplace_casting_follows_numpy():
    def f(x, y):
        x /= y
        return x
    ix = host((5,), "int32")
    with pytest.raises(TypeError, match="Cannot cast"):
        ukern.fuse(f)._program((ix, ix))
    with pytest.raises(TypeError):   # NumPy agrees
        f(ix.copy(), ix)
    fx = host((5,), "float32")
    p = ukern.fuse(f)._program((fx, host((5,), "float64")))   # float64 result cast back into float32 x
    assert "astype(t0, 'float32')" in p.text and p.specialized


def test_inplace_on_a_scalar_argument_only_rebinds():
    def f(s, y):
        s += y
        return s
    assert ukern.fuse(f)._program((2.0, host((3,), "float32"))).writes == []


# -- plain Python, nesting ------------------------------------------------------------------
def test_no_device_array_runs_plain_python():
    calls = []

    def f(x, y):
        calls.append(type(x))
        return x * y + 1
    fused = ukern.fuse(f)
    x = host((3,), "float64")
    np.testing.assert_array_equal(fused(x, x), x * x + 1)
    assert fused(2, 3) == 7 and fused(np.float32(2), 0.5) == np.float32(2) * 0.5 + 1
    assert calls == [np.ndarray, int, np.float32] and not fused._generic


def test_fused_function_called_while_tracing_is_inlined():
    inner = ukern.fuse(lambda a: np.exp(a) * 2)
    outer = ukern.fuse(lambda x, y: inner(x) + inner(y))
    p = outer.program(host((3,), "float32"), host((3,), "float32"))
    assert p.count("exp(") == 2 and not inner._generic


# -- attributes specialise the trace -----------------------------------------------------
def test_attributes_specialise_per_signature():
    f = ukern.fuse(lambda x: x.astype(np.float64) if x.dtype == np.float32 else x * x.shape[0])
    a32, a16 = host((3, 4), "float32"), host((6,), "int16")
    assert "astype" in f.program(a32) and "multiply" in f.program(a16) and "= 6" in f.program(a16)
    assert len(f._special) == 2 and not f._generic
    g = ukern.fuse(lambda x: x + 1)
    g.program(a32), g.program(a16)
    assert len(g._generic) == 1 and not g._special


def test_attribute_values():
    seen = {}

    def f(x, y):
        seen.update(dtype=x.dtype, shape=x.shape, ndim=x.ndim, size=x.size, red=x.sum(axis=1).shape,
                    bc=(x + y).shape, rdt=(x + y).dtype, kd=x.mean(0, keepdims=True).shape)
        return x
    ukern.fuse(f).program(host((2, 3), "int8"), host((3,), "float32"))
    assert seen == dict(dtype=np.dtype("int8"), shape=(2, 3), ndim=2, size=6, red=(2,), bc=(2, 3),
                        rdt=np.dtype("float32"), kd=(1, 3))


# -- cupy.* calls trace as numpy.* calls do ------------------------------------------------
def test_cupy_calls_trace_as_numpy_calls(fake_cupy):
    cp = fake_cupy
    x = host((4, 3), "float32")

    def with_np(x, y):
        return np.where(x > 1, np.exp(x), np.maximum(x, y)), np.sum(x, 1, np.float64), np.amax(x, 0)

    def with_cp(x, y):
        return cp.where(x > 1, cp.exp(x), cp.maximum(x, y)), cp.sum(x, 1, np.float64), cp.amax(x, 0)
    assert ukern.fuse(with_cp).program(x, x) == ukern.fuse(with_np).program(x, x)


def test_cupy_aliases_closures_and_helpers_trace(fake_cupy):
    def make(xp, exp):                # exp as by `from cupy import exp`; xp a closure over the module
        def helper(v):                # a helper the function calls: it calls the module too
            return xp.add(v, 1)
        return lambda x, y: exp(helper(x)) * xp.multiply(y, 2)
    x = host((5,), "float32")
    traced = ukern.fuse(make(fake_cupy, fake_cupy.exp)).program(x, x)
    assert traced == ukern.fuse(make(np, np.exp)).program(x, x) and "exp(t2)" in traced


def test_cupy_out_and_copyto_write_arguments(fake_cupy):
    cp = fake_cupy

    def f(x, y):
        cp.add(x, y, out=x)
        cp.copyto(y, x * 2)
    p = ukern.fuse(f)._program((host((3,), "float32"), host((3,), "float32")))
    assert [i for i, _ in p.writes] == [0, 1] and p.none


def test_cupy_dispatch_is_per_thread_and_restored(fake_cupy):
    cp = fake_cupy
    seen = []

    def other():
        seen.append(cp.exp(1.0))       # another thread while this one traces: CuPy runs eagerly

    def f(x):
        t = threading.Thread(target=other)
        t.start()
        t.join()
        return cp.exp(x)
    ukern.fuse(f).program(host((3,), "float32"))
    assert seen == [("eager", "cupy_exp")]
    assert cp.exp(1.0) == ("eager", "cupy_exp")      # restored after the trace
    with pytest.raises(ZeroDivisionError):
        ukern.fuse(lambda x: 1 / 0).program(host((3,), "float32"))
    assert cp.exp(1.0) == ("eager", "cupy_exp")      # and after a failing one


# -- the builder path ---------------------------------------------------------------------
def test_built_program_errors_name_the_problem():
    from ukern._ukern import _Fusion
    with pytest.raises(ValueError, match="not earlier"):
        _Fusion(1, (1,), "", "f", nodes=[("op", "exp", 5)])
    with pytest.raises(NotImplementedError, match="unknown function 'nosuch'"):
        _Fusion(1, (1,), "", "f", nodes=[("op", "nosuch", 0)])
    with pytest.raises(TypeError, match="unknown dtype"):
        _Fusion(1, (1,), "", "f", nodes=[("cast", 0, "float99")])
    with pytest.raises(OverflowError, match="int64"):
        _Fusion(1, (1,), "", "f", nodes=[("const", 2 ** 70)])
    with pytest.raises(ValueError, match="counts"):
        _Fusion(0, (), "", "f", nodes=[])
    f = _Fusion(2, (2, 3), "shown", "f", nodes=[("op", "add", 0, 1), ("red", "sum", 2, (0,), False, 0)])
    assert f.nin == 2 and f.nout == 2 and f.program == "shown"


def test_complex_ordering_compiles(arch90):
    z = host((4, 3), "complex64")
    f = ukern.fuse(lambda a, b: (a < b, a >= b, np.maximum(a, b), np.fmin(a, b), np.clip(a, b, b)))
    assert out_dtypes(f.source(z, z)) == ["bool", "bool", "complex64", "complex64", "complex64"]
    f.precompile(z, z)


def test_shifts_compile_and_type(arch90):
    i8 = host((5,), "int8")
    f = ukern.fuse(lambda a, b: (a << b, a >> 1, np.left_shift(True, b), np.right_shift(a, 2)))
    assert out_dtypes(f.source(i8, i8)) == numpy_dtypes(lambda a, b: (a << b, a >> 1, np.left_shift(True, b),
                                                                      np.right_shift(a, 2)), (i8, i8))
    f.precompile(i8, i8)


# -- indexing: views of arguments become inputs computed per call ---------------------------
REVERSED = slice(None, None, -1)


@pytest.mark.parametrize("key", [1, -1, (1, 0), (-1, 0, -2), REVERSED, (slice(None), REVERSED), Ellipsis, None,
                                 (None, None), (1, None, REVERSED, None, 2), (Ellipsis, 2)])
def test_basic_indexing_of_arguments(arch90, key):
    x = host((2, 3, 4), "float32")
    f = ukern.fuse(lambda x, y: x[key] * y)
    p = f._program((x, 2.0))
    assert p.views == [(0, (key,))] and not p.specialized
    full = p.inputs((x, 2.0))
    np.testing.assert_array_equal(full[2], x[key])          # the view the call passes
    assert out_dtypes(f.source(x, 2.0)) == ["float32"]
    f.precompile(x, 2.0)


def test_chained_and_repeated_indexing(arch90):
    x, y = host((3, 4), "int32"), host((4,), "float32")
    f = ukern.fuse(lambda x, y: x + x[0, 1] + x[1] + x[1][0] + y[1])
    p = f._program((x, y))
    assert p.views == [(0, ((0, 1),)), (0, (1,)), (0, (1, 0)), (1, (1,))]
    assert "a0[1][0]" in p.text
    assert out_dtypes(f.source(x, y)) == numpy_dtypes(lambda x, y: x + x[0, 1] + x[1] + x[1][0] + y[1], (x, y))


def test_indexing_errors_follow_numpy():
    x = host((2, 3), "float32")
    with pytest.raises(IndexError):
        ukern.fuse(lambda x: x[2]).program(x)
    with pytest.raises(IndexError):
        ukern.fuse(lambda x: x[0, 0, 0]).program(x)
    with pytest.raises(NotImplementedError, match="basic indexing"):
        ukern.fuse(lambda x: x[x > 1]).program(x)
    with pytest.raises(NotImplementedError, match="only arguments"):
        ukern.fuse(lambda x: (x + 1)[0]).program(x)
    with pytest.raises(TypeError, match="cannot be indexed"):
        ukern.fuse(lambda x, s: x + s[0]).program(x, 1.0)


def test_whole_array_assignment_writes_the_argument():
    def f(x, y):
        y[...] = x
        y[:] = y * 2
        return y
    p = ukern.fuse(f)._program((host((3, 4), "int32"), host((3, 4), "int32")))
    assert [i for i, _ in p.writes] == [1] and "multiply" in p.text
    with pytest.raises(NotImplementedError, match="whole-array"):
        def g(x, y):
            y[0] = x
        ukern.fuse(g).program(host((3,), "int32"), host((3,), "int32"))


# -- the traced node lists evaluated by NumPy on the host: the tracer's values -------------
def evaluate(fused, args):
    """Runs a traced program's nodes with NumPy (Python constants stay weak, as in NEP 50)."""
    p = fused._program(args)
    vals = list(p.inputs(args))
    names = {"true_divide": "divide", "max": "amax", "min": "amin"}
    with np.errstate(all="ignore"):
        for n in p.nodes:
            if n[0] == "const":
                vals.append(n[1])
            elif n[0] == "op":
                vals.append(getattr(np, names.get(n[1], n[1]))(*[vals[i] for i in n[2:]]))
            elif n[0] == "cast":
                vals.append(np.asarray(vals[n[1]]).astype(n[2])[()])
            else:
                _, fn, a, axes, keep, ddof = n
                kw = {"ddof": ddof} if fn in ("var", "std") else {}
                if fn in ("argmax", "argmin") and axes is not None:
                    axes, = axes              # NumPy's argmax takes one axis (the tracer's tuple of one)
                vals.append(getattr(np, names.get(fn, fn))(vals[a], axis=axes, keepdims=keep, **kw))
    return [vals[i] for i in p.outs]


@pytest.mark.parametrize("name", ["deg2rad", "radians", "rad2deg", "degrees", "logaddexp", "logaddexp2", "ldexp",
                                  "signbit", "fix", "sinc", "divmod", "modf", "nansum", "nanprod", "round", "clip",
                                  "frexp"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int16"])
def test_composite_routines_match_numpy(name, dtype):
    x = RNG.uniform(-4, 4, (6, 5)).astype(dtype)
    y = RNG.uniform(-4, 4, (6, 5)).astype(dtype)
    if dtype == "float64":
        x[0, :3] = [np.inf, -0.0, np.nan]
        y[0, :3] = [np.inf, 2.0, 1.0]
    n = RNG.integers(-5, 5, (6, 5)).astype(np.int32)
    calls = {"logaddexp": (lambda x, y: np.logaddexp(x, y), (x, y)),
             "logaddexp2": (lambda x, y: np.logaddexp2(x, y), (x, y)),
             "ldexp": (lambda x, n: np.ldexp(x, n), (x, n)), "divmod": (lambda x, y: np.divmod(x, y + 9), (x, y)),
             "modf": (lambda x: np.modf(x), (x,)), "nansum": (lambda x: np.nansum(x, 1), (x,)),
             "nanprod": (lambda x: np.nanprod(x, axis=0), (x,)), "round": (lambda x: np.round(x, 1), (x,)),
             "clip": (lambda x: np.clip(x, -1, 2.5), (x,))}
    f, args = calls.get(name, (lambda x: getattr(np, name)(x), (x,)))
    with np.errstate(all="ignore"):
        want = f(*args)
    want = want if isinstance(want, tuple) else (want,)
    got = evaluate(ukern.fuse(f), args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=2e-3 if dtype != "float64" else 1e-12, atol=1e-12)


def test_nan_and_inf_rows_of_evaluated_programs_match_numpy():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e300, 8.0, -0.5, 1.0, 5e-324, 0.75])
    for f in (lambda x: np.logaddexp(x, x), lambda x: np.signbit(x), lambda x: np.modf(x)[1],
              lambda x: np.maximum(x, 0.5), lambda x: np.sinc(x), lambda x: np.frexp(x)[0],
              lambda x: np.frexp(x)[1]):
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(evaluate(ukern.fuse(f), (x,))[0], f(x))


def _random_program(rng, nargs):
    """A random function of nargs values: ufunc calls, operators, where, a reduction."""
    unary = ["negative", "absolute", "sqrt", "exp", "square", "sign", "floor", "isnan"]
    binary = ["add", "subtract", "multiply", "maximum", "minimum", "true_divide", "hypot", "fmax"]
    consts = [2, -3, 2.5, True, np.float32(1.5), np.int16(3), np.float64(0.5)]
    steps = []
    for _ in range(rng.integers(2, 6)):
        kind = rng.integers(0, 5)
        a, b = rng.integers(0, nargs + len(steps), 2)
        c = consts[rng.integers(0, len(consts))]
        if kind == 0:
            steps.append(("u", unary[rng.integers(0, len(unary))], a))
        elif kind == 1:
            steps.append(("b", binary[rng.integers(0, len(binary))], a, b))
        elif kind == 2:
            steps.append(("c", binary[rng.integers(0, 3)], a, c))
        elif kind == 3:
            steps.append(("w", a, b, c))
        else:
            steps.append(("op", "+*-"[rng.integers(0, 3)], a, c))

    def f(*args):
        vals = list(args)
        for s in steps:
            if s[0] == "u":
                vals.append(getattr(np, s[1])(vals[s[2]]))
            elif s[0] == "b":
                vals.append(getattr(np, s[1])(vals[s[2]], vals[s[3]]))
            elif s[0] == "c":
                vals.append(getattr(np, s[1])(vals[s[2]], s[3]))
            elif s[0] == "w":
                vals.append(np.where(vals[s[1]] > 1, vals[s[2]], s[3]))
            else:
                vals.append({"+": lambda x, y: x + y, "*": lambda x, y: x * y, "-": lambda x, y: x - y}[s[1]](
                    vals[s[2]], s[3]))
        return vals[-1]
    return f


@pytest.mark.parametrize("seed", range(6))
def test_random_programs_type_as_numpy(arch90, seed):
    rng = np.random.default_rng(100 + seed)
    dtypes = ["bool", "int8", "uint8", "int16", "int32", "int64", "uint32", "float16", "float32", "float64",
              "complex64"]
    checked = 0
    for _ in range(40):
        nargs = int(rng.integers(1, 4))
        args = []
        for _ in range(nargs):
            r = rng.integers(0, 6)
            args.append(2.0 if r == 0 else 3 if r == 1 else host((4, 3), dtypes[rng.integers(0, len(dtypes))]))
        if not any(isinstance(a, np.ndarray) for a in args):
            continue
        f = _random_program(rng, nargs)
        with np.errstate(all="ignore"):
            try:
                want = np.asarray(f(*args)).dtype.name
            except (TypeError, ValueError, OverflowError):
                continue       # NumPy refuses it (complex maximum of bool ...): not compared
        try:
            got = out_dtypes(ukern.fuse(f).source(*args))
        except (TypeError, ValueError, NotImplementedError) as e:
            if "not supported for complex" in str(e):
                continue       # complex functions outside the fusion language (hypot, floor, sign)
            raise
        assert got == [want], (seed, [getattr(a, "dtype", a) for a in args])
        checked += 1
    assert checked >= 25, checked


def test_none_arguments_reach_the_function(arch90):
    def f(x, y, z):
        if y is None:
            return x * z
        return x + y + z
    fused = ukern.fuse(f)
    x = host((10,), "float32")
    assert "multiply(a0, a2)" in fused.program(x, None, x) and "add(a0, a1)" in fused.program(x, x, x)
    assert fused._program((x, None, x)).inputs((x, None, x))[1] == 0 and fused._program((x, None, x)).plain is None
    assert fused.kernel_count(x, None, x) == 1 and out_dtypes(fused.source(x, None, x)) == ["float32"]


def test_fill_and_setitem_casting():
    def f(x):
        x[:] = np.nan
        return x
    p = ukern.fuse(f)._program((host((4,), "float32"),))
    # the scalar fills the whole array: the returned value has x's shape and dtype
    assert "where(t2, t1, a0)" in p.text and "astype(t3, 'float32')" in p.text and p.outs[0] == p.outs[1]
    evaluated = evaluate(ukern.fuse(f), (host((4,), "float32"),))
    assert evaluated[0].shape == (4,) and evaluated[0].dtype == np.float32 and np.isnan(evaluated[0]).all()

    def g(x):
        x[...] = 3.7          # setitem casts unsafely, as NumPy
        return x
    assert "astype" in ukern.fuse(g).program(host((4,), "int32"))

    def h(x, y):
        np.copyto(x, y)       # copyto: same_kind
    with pytest.raises(TypeError, match="same_kind"):
        ukern.fuse(h).program(host((4,), "int32"), host((4,), "float32"))


def test_branching_on_a_traced_value_says_so():
    with pytest.raises(TypeError, match="Cannot convert to Python scalar in cupy.fuse"):
        ukern.fuse(lambda x: x if x > 0 else -x).program(host((3,), "float32"))


def test_empty_and_singleton_tuples_and_none():
    x = host((3,), "float32")
    assert ukern.fuse(lambda x: ())._program((x,)).run((x,), None) == ()
    assert ukern.fuse(lambda x: None)._program((x,)).run((x,), None) is None
    p = ukern.fuse(lambda x: (x,))._program((x,))
    assert p.single is False and p.nret == 1 and p.outs == (0,)


def test_batch_norm_restores_reduced_axes_by_indexing():
    batchnorm = fuse_examples.batchnorm(np)
    x = host((2, 3, 4, 5), "float32")
    n = x.size // 3

    def args():
        return (x.copy(), host((3,), "float64"), host((3,), "float64"), host((3,), "float64"),
                host((3,), "float64"), n, n / (n - 1.0))
    a = args()
    fused = ukern.fuse(batchnorm)
    p = fused._program(a)
    assert [i for i, _ in p.writes] == [3, 4] and "keepdims=True" in p.text
    want_args = [v.copy() if isinstance(v, np.ndarray) else v for v in a]
    want = batchnorm(*want_args)
    got = evaluate(fused, a)
    np.testing.assert_allclose(got[0], want, rtol=1e-6)
    np.testing.assert_allclose(got[1], want_args[3], rtol=1e-6)   # float32 sums: keepdims changes the order
    np.testing.assert_allclose(got[2], want_args[4], rtol=1e-6)
    with pytest.raises(NotImplementedError, match="restore"):
        ukern.fuse(lambda x: (x + 1)[None]).program(x)


def test_plan_errors_name_the_operation_not_a_text_position(arch90):
    b = host((3,), "bool")
    with pytest.raises(TypeError) as ei:
        ukern.fuse(lambda x, y: x - y).source(b, b)
    assert str(ei.value) == "ukern.fuse: subtract is not supported for booleans (use logical_xor / logical_not)"
    assert ei.value.status == "UK_ERR_TYPE"
    with pytest.raises(ValueError, match=r"^ukern.fuse: axis 0 is repeated$"):
        ukern.fuse(lambda x: np.sum(x, axis=(0, 0))).kernel_count(b)


def test_restoring_reduced_axes_visits_shared_operands_once():
    def f(x):
        m = x.sum(axis=1)
        for _ in range(60):          # 2**60 paths through the DAG, 60 nodes
            m = m * m
        return x - m[:, None]
    p = ukern.fuse(f).program(host((3, 4), "float32"))
    assert p.count("keepdims=True") == 1 and p.count("multiply(") == 120

    def deep(x):
        m = x.sum(axis=1)
        for _ in range(5000):        # deeper than Python's recursion: refused, not crashed
            m = m + 1
        return x - m[:, None]
    with pytest.raises(NotImplementedError, match="restore"):
        ukern.fuse(deep).program(host((3, 4), "float32"))
