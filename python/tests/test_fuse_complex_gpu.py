"""gpu tier of complex values in ukern.fuse on special values (issue 23): arcsin ...
arctanh, sqrt, exp ... log1p, sin ... tanh and reciprocal on signed zeros, infinite and
NaN parts, the largest and the subnormal values; maximum/minimum/fmax/fmin and ordering comparisons with infinite and NaN parts;
max/min/argmax/argmin reductions over rows holding them. Against NumPy on the host.
The same device functions compiled for the host: test_device_complex_cpu.py (which also
checks the signs of zero results; here the device's contracted multiply-adds may differ
from the host's there, so zeros compare by value)."""
import itertools

import numpy as np
import pytest

import ukern

if ukern.device_count() == 0:
    pytest.skip("no CUDA device (ukern.device_count() == 0)", allow_module_level=True)
if not hasattr(ukern, "fuse"):
    pytest.skip("the library has no fusion API", allow_module_level=True)
cp = pytest.importorskip("cupy", reason="CuPy is needed for device arrays")

RNG = np.random.default_rng(2311)
SPECIAL = [0.0, -0.0, 0.5, -1.0, 1.0, 2.0, -2.0, 1e-20, 3e-39, 1e-300, 1e30, -3.4e38, 1e155, 1.7e308,
           np.inf, -np.inf, np.nan]


def _complex(re, im, dtype):
    z = np.empty(np.shape(re), dtype=dtype)
    z.real = re
    z.imag = im
    return z


def _grid(dtype):
    with np.errstate(over="ignore"):
        parts = np.array(SPECIAL).astype(np.dtype(dtype).char.lower())
    re, im = zip(*itertools.product(parts, parts))
    rnd = RNG.uniform(-3, 3, (2, 300))
    return np.concatenate([_complex(np.array(re), np.array(im), dtype), _complex(rnd[0], rnd[1], dtype)])


def _assert_close(got, want, rtol, tiny, what):
    """Per part: NaN where NumPy has NaN, NumPy's infinities, else within rtol (relative,
    down to tiny)."""
    assert isinstance(got, cp.ndarray) and got.dtype == want.dtype and got.shape == want.shape, \
        (what, type(got), got.dtype, want.dtype, got.shape, want.shape)
    g = got.get()
    for part in ("real", "imag"):
        gp, wp = getattr(g, part), getattr(want, part)
        nan_ok = np.isnan(gp) == np.isnan(wp)
        inf_ok = np.where(np.isinf(wp) | np.isinf(gp), gp == wp, True)
        with np.errstate(invalid="ignore"):
            near = np.abs(gp - wp) <= rtol * np.maximum(np.abs(wp), tiny)
        ok = nan_ok & inf_ok & (near | np.isnan(wp) | np.isinf(wp))
        bad = np.flatnonzero(~ok)
        assert not bad.size, (what, part, len(bad), [(g[k], want[k]) for k in bad[:5]])


@pytest.mark.parametrize("dtype,rtol,tiny", [("complex64", 1e-4, 1e-30), ("complex128", 1e-10, 1e-290)])
def test_complex_functions_on_special_values_match_numpy(dtype, rtol, tiny):
    names = ["arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "sqrt", "exp", "exp2", "expm1", "log",
             "log2", "log10", "log1p", "sin", "cos", "tan", "sinh", "cosh", "tanh", "reciprocal"]
    z = _grid(dtype)
    for k in range(0, len(names), 7):      # 7 outputs and the input per fusion (at most 16 arrays)
        part = names[k:k + 7]
        got = ukern.fuse(lambda a: tuple(getattr(np, n)(a) for n in part))(cp.asarray(z))
        with np.errstate(all="ignore"):
            for n, g in zip(part, got):
                _assert_close(g, getattr(np, n)(z), rtol, tiny, n)


def _same(got, want, what):
    """Exactly NumPy's values (NaN parts where NumPy's are NaN)."""
    assert isinstance(got, cp.ndarray) and got.dtype == want.dtype and got.shape == want.shape, \
        (what, got.dtype, want.dtype, got.shape, want.shape)
    g = got.get()
    if want.dtype.kind == "c":
        for part in ("real", "imag"):
            np.testing.assert_array_equal(getattr(g, part), getattr(want, part), err_msg=f"{what} {part}")
    else:
        np.testing.assert_array_equal(g, want, err_msg=what)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_elementwise_extrema_and_comparisons_with_special_parts(dtype):
    parts = [0.0, 1.0, -2.0, np.inf, -np.inf, np.nan]
    vals = _complex(*np.array(list(itertools.product(parts, parts))).T, dtype)
    a, b = (g.ravel() for g in np.meshgrid(vals, vals))

    @ukern.fuse
    def f(x, y):
        return (np.maximum(x, y), np.minimum(x, y), np.fmax(x, y), np.fmin(x, y), x < y, x <= y, x > y, x >= y)
    got = f(cp.asarray(a), cp.asarray(b))
    with np.errstate(invalid="ignore"):
        want = (np.maximum(a, b), np.minimum(a, b), np.fmax(a, b), np.fmin(a, b), a < b, a <= b, a > b, a >= b)
    for k, (g, w) in enumerate(zip(got, want)):
        _same(g, w, f"output {k}")


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_reductions_over_rows_with_special_parts(dtype):
    # 37 rows of 129: integer parts (ties in the real part; no -0.0, whose ties NumPy
    # breaks by position), infinite parts in some rows, at most one NaN per row
    re = RNG.integers(-4, 5, (37, 129)).astype(float)
    im = RNG.integers(-4, 5, (37, 129)).astype(float)
    re[1, 5], im[1, 5] = np.inf, 0.0
    re[2, :], im[2, :] = -np.inf, -np.inf
    re[3, 7], im[3, 7] = np.inf, np.inf
    re[3, 9], im[3, 9] = np.inf, -np.inf
    re[4, 100], im[4, 100] = np.nan, np.nan
    re[5, 0] = np.nan
    im[6, 128] = np.nan
    re[7, 64], im[7, 64] = -np.inf, np.nan
    z = _complex(re, im, dtype)

    @ukern.fuse
    def f(a):
        return a.max(axis=1), cp.amin(a, axis=1), a.argmax(axis=1), cp.argmin(a, axis=1), \
            a[8:].max(), a[8:].min(keepdims=True), cp.max(a[8:], axis=0)
    got = f(cp.asarray(z))
    with np.errstate(invalid="ignore"):
        want = (z.max(axis=1), np.amin(z, axis=1), z.argmax(axis=1), np.argmin(z, axis=1),
                z[8:].max(), z[8:].min(keepdims=True), np.max(z[8:], axis=0))
    for k, (g, w) in enumerate(zip(got, want)):
        _same(g, np.asarray(w), f"output {k}")
