"""gpu tier of ukern.fuse for functions written for cupy.fuse (issue 23): the ufuncs
added for CuPy's fusion tests (nextafter, i0, complex inverse trigonometry, complex
max/min/argmax/argmin) against NumPy on the host; cupy.get_array_module inside a fused
function; CuPy's own fusion calling a ukern fused function; in-place updates of
arguments that share memory. The cpu tier: test_fuse_compat_cpu.py."""
import numpy as np
import pytest

import ukern

if ukern.device_count() == 0:
    pytest.skip("no CUDA device (ukern.device_count() == 0)", allow_module_level=True)
if not hasattr(ukern, "fuse"):
    pytest.skip("the library has no fusion API", allow_module_level=True)
cp = pytest.importorskip("cupy", reason="CuPy is needed for device arrays")

RNG = np.random.default_rng(23)


def check(u, want, **tol):
    assert isinstance(u, cp.ndarray), type(u)
    want = np.asarray(want)
    assert u.dtype == want.dtype and u.shape == want.shape, (u.dtype, want.dtype, u.shape, want.shape)
    if tol:
        np.testing.assert_allclose(u.get(), want, **tol)
    else:
        np.testing.assert_array_equal(u.get(), want)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_nextafter_matches_numpy_bit_for_bit(dtype):
    special = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 65504.0, 6e-8, -6e-8]
    # the last blocks: y == x (and NaN, NaN), then zeros of opposite signs (y, as C99; NumPy's
    # float16 loop answered x there before 2.5)
    x = np.concatenate([RNG.uniform(-100, 100, 53), special, special, [0.0, -0.0]]).astype(dtype)
    y = np.concatenate([RNG.uniform(-100, 100, 53), [1.0, -1.0, 1.0, 0.0, 0.0, np.inf, 1.0, np.inf, 0.0, 0.0],
                        special, [-0.0, 0.0]]).astype(dtype)
    f = ukern.fuse(lambda a, b: np.nextafter(a, b))
    got = f(cp.asarray(x), cp.asarray(y))
    with np.errstate(all="ignore"):               # 65504 toward inf overflows in float16
        want = np.nextafter(x, y)
    want = np.where(x == y, y, want)              # NumPy < 2.5's float16 loop gave x
    check(got, want)
    num = ~np.isnan(want)                         # -0.0 and the smallest subnormals' signs
    assert (np.signbit(got.get())[num] == np.signbit(want)[num]).all()


@pytest.mark.parametrize("dtype,rtol", [("float16", 2e-3), ("float32", 2e-6), ("float64", 1e-13), ("int16", 1e-13)])
def test_i0_matches_numpy(dtype, rtol):
    x = RNG.uniform(-9, 9, (7, 33))
    x[0, :3] = [0.0, -0.0, 1e-3]
    x = x.astype(dtype)
    f = ukern.fuse(lambda a: cp.i0(a) * 2)
    # NumPy's dtype; the values from float64 (NumPy's float16 i0 runs its series in
    # float16 and is off by up to 3e-3; ukern's is the correctly rounded value within 1 ulp)
    want = (np.i0(x.astype("float64")) * 2).astype(np.i0(x).dtype)
    check(f(cp.asarray(x)), want, rtol=rtol, atol=0)


@pytest.mark.parametrize("dtype,tol", [("complex64", 2e-5), ("complex128", 1e-12)])
def test_complex_inverse_trigonometry_matches_numpy(dtype, tol):
    z = (RNG.uniform(-3, 3, 257) + 1j * RNG.uniform(-3, 3, 257)).astype(dtype)
    z[:4] = [0.5 + 0j, -0.25 + 0j, 2j, 1e-4 - 1e-4j]     # on the real and imaginary axes, small
    names = ["arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh"]
    f = ukern.fuse(lambda a: tuple(getattr(np, n)(a) for n in names))
    got = f(cp.asarray(z))
    for n, g in zip(names, got):
        check(g, getattr(np, n)(z), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_extrema_order_lexicographically(dtype):
    # ties in the real part decide by the imaginary part; a NaN propagates (max/min) and
    # is the extreme (argmax/argmin), as NumPy 2
    z = (RNG.integers(0, 3, (6, 41)) + 1j * RNG.integers(-4, 5, (6, 41))).astype(dtype)
    z[4, 7] = complex(np.nan, 0.0)

    @ukern.fuse
    def f(a):
        return a.max(axis=1), cp.amin(a, axis=1), a.argmax(axis=1), cp.argmin(a, axis=1), a[:4].max(), a[:4].argmin()
    got = f(cp.asarray(z))
    want = (z.max(axis=1), np.amin(z, axis=1), z.argmax(axis=1), np.argmin(z, axis=1), z[:4].max(), z[:4].argmin())
    for g, w in zip(got, want):
        check(g, w)


@pytest.mark.parametrize("dtype", ["int8", "int32", "uint16", "int64"])
def test_gcd_lcm_match_numpy(dtype):
    hi = 11 if dtype == "int8" else 60          # lcm inside the dtype's range (no wrap-around)
    lo = 0 if dtype.startswith("u") else -hi
    x = RNG.integers(lo, hi, 301).astype(dtype)
    y = RNG.integers(lo, hi, 301).astype(dtype)
    x[:3], y[:3] = [0, 0, 12], [0, 9, 0]
    f = ukern.fuse(lambda a, b: (cp.gcd(a, b), np.lcm(a, b), np.gcd(a, 18)))
    got = f(cp.asarray(x), cp.asarray(y))
    for g, w in zip(got, (np.gcd(x, y), np.lcm(x, y), np.gcd(x, 18))):
        check(g, w)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "int32", "int64", "uint64"])
def test_bitwise_count_matches_numpy(dtype):
    info = np.iinfo(dtype) if dtype != "bool" else None
    x = RNG.integers(0, 2, 200).astype(dtype) if info is None else \
        RNG.integers(info.min, info.max, 200, dtype=dtype, endpoint=True)
    if info is not None:
        x[:3] = [info.min, info.max, 0]                  # int8 -128 has one bit set, as NumPy counts
    f = ukern.fuse(lambda a: cp.bitwise_count(a))
    check(f(cp.asarray(x)), np.bitwise_count(x))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32"])
def test_heaviside_and_float_power_match_numpy(dtype):
    x = RNG.uniform(-3, 3, 257)
    x[:4] = [0.0, -0.0, np.nan, -np.inf] if dtype.startswith("f") else [0, 0, 1, -1]
    x = x.astype(dtype)
    y = RNG.uniform(0.5, 2, 257).astype(dtype)
    f = ukern.fuse(lambda a, b: (cp.heaviside(a, b), np.heaviside(a, 0.5), cp.float_power(cp.abs(a), b)))
    got = f(cp.asarray(x), cp.asarray(y))
    with np.errstate(all="ignore"):
        want = (np.heaviside(x, y), np.heaviside(x, 0.5), np.float_power(np.abs(x), y))
    check(got[0], want[0])
    check(got[1], want[1])
    check(got[2], want[2], rtol=1e-13, atol=0)     # float_power computes in float64 for every input


def test_get_array_module_answers_cupy_and_python_scalars_have_dtypes():
    @ukern.fuse
    def f(x, s):
        xp = cp.get_array_module(x)
        assert xp is cp
        return xp.exp(x) * s, x.astype(s.dtype)
    x = cp.asarray(RNG.uniform(-1, 1, 100).astype("float32"))
    e, c = f(x, 3)
    check(e, np.exp(x.get()) * 3, rtol=1e-6)      # the Python int stays weak: float32
    check(c, x.get().astype("int64"))              # its dtype is NumPy's for an int
    assert cp.get_array_module(np.zeros(1)) is np


def test_cupy_fusion_of_a_ukern_fused_function_traces_it_once():
    count = 0

    @ukern.fuse()
    def f(x, y):
        nonlocal count
        count += 1
        return cp.equal(x, 1)
    x = cp.arange(10)
    got = cp._core.fusion.Fusion(f, "compat_weak_int")(x, 1)   # CuPy's own fusion, as its test_weak_int
    assert count == 1
    check(got, np.arange(10) == 1)


@pytest.mark.parametrize("case", ["same", "transposed", "reversed"])
def test_inplace_updates_of_arguments_sharing_memory_match_numpy(case):
    def f(x, y, z):
        x += y
        x += z
        return x * 2
    views = {"same": lambda a: (a, a, a), "transposed": lambda a: (a, a, a.T),
             "reversed": lambda a: (a, a[::-1], a[:, ::-1])}[case]
    host = RNG.integers(-9, 9, (33, 33)).astype("int64")
    dev = cp.asarray(host)
    want = f(*views(host))
    got = ukern.fuse(f)(*views(dev))
    check(got, want)
    check(dev, host)                    # the argument holds NumPy's final value
