"""gpu tier of ukern.fuse: fused functions against cupy.fuse and NumPy on the host.

Dtypes must equal NumPy 2's (ukern follows NEP 50), values NumPy's within
rounding; the output is the inputs' array type; work runs on the producer's stream.
"""
import numpy as np
import pytest

import fuse_examples
import ukern

if ukern.device_count() == 0:
    pytest.skip("no CUDA device (ukern.device_count() == 0)", allow_module_level=True)
if not hasattr(ukern, "fuse"):
    pytest.skip("the library has no fusion API", allow_module_level=True)
cp = pytest.importorskip("cupy", reason="CuPy is needed to compare with")

RNG = np.random.default_rng(7)


def rand(shape, dtype):
    v = RNG.uniform(0.5, 2.0, shape) * RNG.choice([-1.0, 1.0], shape)
    if np.dtype(dtype).kind in "iu":
        v = RNG.integers(1, 40, shape)
    return cp.asarray(np.asarray(v).astype(dtype))


def check(u, ref, rtol, atol=0):
    assert isinstance(u, cp.ndarray), type(u)
    ref = np.asarray(ref)
    assert u.dtype == ref.dtype and u.shape == ref.shape, (u.dtype, ref.dtype, u.shape, ref.shape)
    np.testing.assert_allclose(u.get(), ref, rtol=rtol, atol=atol)


def test_saxpy_matches_cupy_fuse_and_numpy():
    uk = ukern.fuse(lambda a, x, y: a * x + y)
    cf = cp.fuse(kernel_name="saxpy")(lambda a, x, y: a * x + y)  # CuPy rejects the name "<lambda>"
    x, y = rand((1001,), "float32"), rand((1001,), "float32")
    z = uk(2.5, x, y)
    # float32: FMA contraction vs two roundings differ by an ulp of the terms (~5e-7)
    check(z, 2.5 * x.get() + y.get(), 1e-5, atol=2e-6)
    cp.testing.assert_allclose(z, cf(cp.float32(2.5), x, y), rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize("dtype,rtol", [("float32", 1e-5), ("float64", 1e-12)])
def test_distance_reduction(dtype, rtol):
    @ukern.fuse(kernel_name="dist")
    def dist(x, y):
        t = x - y
        return np.sqrt(np.sum(t * t, axis=-1))

    x, y = rand((37, 129), dtype), rand((129,), dtype)
    xh, yh = x.get(), y.get()
    check(dist(x, y), np.sqrt(np.sum((xh - yh) ** 2, axis=-1)), rtol)


@pytest.mark.parametrize("width,dtype,rtol", [(8, "float32", 1e-5), (16, "float32", 1e-5), (20, "float32", 1e-5),
                                              (24, "float32", 1e-5), (32, "float32", 1e-5), (16, "float64", 1e-12),
                                              (8, "float64", 1e-12)])
def test_short_row_sums_of_two_inputs(width, dtype, rtol):
    """Rows of 64-255 bytes over two inputs: 2 or 4 threads a row (uk__red_narrow_lanes); an odd row
    count, so that the last block's groups are partly past the end."""
    @ukern.fuse(kernel_name="short_rows")
    def rs(x, y):
        return np.sum((x - y) * (x - y), axis=-1)

    x, y = rand((4099, width), dtype), rand((4099, width), dtype)
    xh, yh = x.get().astype(np.float64), y.get().astype(np.float64)
    ref = np.sum((xh - yh) ** 2, axis=-1).astype(dtype)
    check(rs(x, y), ref, rtol)
    # a narrow program and a misaligned view of the same key (no vectors): still right
    xs, ys = x.ravel()[1:].reshape(-1)[: 4098 * width].reshape(4098, width), y[1:]
    check(rs(xs, ys), np.sum((xs.get().astype(np.float64) - ys.get()) ** 2, axis=-1).astype(dtype), rtol)


@pytest.mark.parametrize("rows", [300007, 1000003])
def test_row_sums_two_rows_a_trip(rows):
    """Rows of 32 float32 over two inputs, enough of them that the grid-stride loop takes two trips
    (two rows' loads a trip: uk_red_key.rows); odd row counts: the last trip's second row is past the
    end. A view one row shorter, 16 bytes in (still vectors), keeps the key."""
    @ukern.fuse(kernel_name="rows_a_trip")
    def rs(x, y):
        return np.sum((x - y) * (x - y), axis=-1)

    x, y = rand((rows, 32), "float32"), rand((rows, 32), "float32")
    xh, yh = x.get().astype(np.float64), y.get().astype(np.float64)
    check(rs(x, y), np.sum((xh - yh) ** 2, axis=-1).astype(np.float32), 1e-5)
    check(rs(x[1:], y[:-1]), np.sum((xh[1:] - yh[:-1]) ** 2, axis=-1).astype(np.float32), 1e-5)


def test_mixed_types_follow_numpy2():
    @ukern.fuse
    def f(x, y, i):
        return np.where(x > 0.5, np.sqrt(np.abs(x)) * y, np.log1p(np.abs(y))) + i

    x, y, i = rand((65, 33), "float32"), rand((33,), "float32"), rand((65, 1), "int32")
    want = np.where(x.get() > 0.5, np.sqrt(np.abs(x.get())) * y.get(), np.log1p(np.abs(y.get()))) + i.get()
    check(f(x, y, i), want, 1e-6)               # float32 with int32 -> float64


@pytest.mark.parametrize("axis", [1, 0])
def test_row_and_split_plans_with_several_outputs(axis):
    @ukern.fuse
    def stats(x):
        c = x - x.mean(axis=axis, keepdims=True)
        return c, (c * c).sum(axis=axis)

    x = rand((40, 257), "float64")
    c, s = stats(x)
    xh = x.get()
    ch = xh - xh.mean(axis=axis, keepdims=True)
    check(c, ch, 1e-12)
    check(s, (ch * ch).sum(axis=axis), 1e-10)
    # over rows: the row plan (one kernel a row); over columns: the split plan
    assert stats.kernel_count(x) >= (1 if axis == 1 else 2)


def test_fuse_on_producer_stream_and_torch():
    f = ukern.fuse(lambda x: x * x + 1)
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        big = cp.full(1 << 24, 1.0, cp.float32) * 3
        z = f(big)
    s.synchronize()
    assert float(z.min()) == 10.0 and float(z.max()) == 10.0
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch.cuda is not available")
    t = torch.rand(1000, device="cuda", dtype=torch.float64)
    r = f(t)
    assert isinstance(r, torch.Tensor) and r.dtype == torch.float64
    assert torch.allclose(r, t * t + 1, rtol=1e-15, atol=0)


# -- functions written for cupy.fuse run unchanged (issue 23) --------------------------------
def both(make, *args, rtol=1e-6, atol=1e-6):
    """make(xp) -> a function calling xp.*: make(cupy) fused by ukern and by cupy.fuse on the
    same arrays (copies: in-place updates), make(numpy) run by NumPy on the host. ukern's
    values and dtypes equal NumPy's, its values cupy.fuse's (where cupy.fuse runs it), and
    in-place updates reach the arguments. Returns ukern's result."""
    uk_args = [a.copy() if isinstance(a, cp.ndarray) else a for a in args]
    cp_args = [a.copy() if isinstance(a, cp.ndarray) else a for a in args]
    np_args = [a.get() if isinstance(a, cp.ndarray) else a for a in args]
    got = ukern.fuse(kernel_name="uk")(make(cp))(*uk_args)
    want = make(np)(*np_args)
    try:
        theirs = cp.fuse(kernel_name="cf")(make(cp))(*cp_args)
    except Exception:          # cupy.fuse lacks some of these (complex ordering, keepdims)
        theirs = None
    got_t = got if isinstance(got, tuple) else (got,)
    want_t = want if isinstance(want, tuple) else (want,)
    assert (got is None) == (want is None)
    for k, (g, w) in enumerate(zip(got_t, want_t) if got is not None else ()):
        w = np.asarray(w)
        assert isinstance(g, cp.ndarray) and g.dtype == w.dtype and g.shape == w.shape, (k, g, w.dtype, w.shape)
        np.testing.assert_allclose(g.get(), w, rtol=rtol, atol=atol)
    if theirs is not None and got is not None:
        # cupy.fuse where it types as NumPy 2 does (elsewhere it follows its own rules:
        # docs/SEMANTICS.md lists where ukern differs on purpose)
        for g, t, w in zip(got_t, theirs if isinstance(theirs, tuple) else (theirs,), want_t):
            # (cupy.fuse broadcasts every output to the program's shape: `y + 0` of a (9,) y beside
            # a (7, 9) x comes back (7, 9) there, (9,) in NumPy and ukern)
            if getattr(t, "dtype", None) == np.asarray(w).dtype and getattr(t, "shape", None) == np.shape(w):
                np.testing.assert_allclose(g.get(), cp.asnumpy(t), rtol=max(rtol, 1e-5), atol=max(atol, 1e-5))
    for u, h in zip(uk_args, np_args):
        if isinstance(u, cp.ndarray):
            np.testing.assert_allclose(u.get(), h, rtol=rtol, atol=atol)
    return got


def test_cupy_calls_in_the_function():
    x, y = rand((33, 65), "float32"), rand((33, 65), "float32")
    both(lambda xp: lambda x, y: xp.where(x > 0, xp.exp(xp.minimum(x, 1.0)), xp.sqrt(xp.abs(y))) * 2 + xp.square(y),
         x, y, rtol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "int16", "float64"])
def test_reduction_signatures_positional_and_keyword(dtype):
    x = rand((17, 130), dtype)
    both(lambda xp: lambda x: x.sum(1, None, None, False), x, rtol=1e-5)
    both(lambda xp: lambda x: xp.sum(x, 0, np.float64), x, rtol=1e-9, atol=1e-9)
    axis = None
    both(lambda xp: lambda x: (xp.amax(x, axis), x.min(0), x.prod(axis=1, dtype=np.float64) * 0 + 1), x, rtol=1e-5)


def test_inplace_updates_write_the_arguments():
    def f(xp):
        def g(x, y):
            x += y
            return x * 2
        return g
    both(f, rand((1001,), "float32"), rand((1001,), "float32"))

    def out_kw(xp):
        def g(x, y):
            xp.add(x, y, out=x)
            return y + 0
        return g
    both(out_kw, rand((7, 9), "float64"), rand((9,), "float64"))

    def nothing_returned(xp):
        def g(x, y):
            x *= y
        return g
    both(nothing_returned, rand((300,), "int32"), rand((300,), "int32"))


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_attributes_and_specialisation(dtype):
    def f(xp):
        return lambda x: x.astype(np.float64) * x.ndim + x.size if x.dtype == np.float32 else x * x.shape[-1]
    both(f, rand((5, 7), dtype), rtol=1e-12)


def test_complex_ordering_and_shifts():
    z = rand((9, 11), "complex64") + 1j * rand((9, 11), "float32")
    w = z.copy()
    w[::2] = z[::2] + 0.5j            # equal real parts: the imaginary parts decide
    both(lambda xp: lambda a, b: (a < b, a >= b, xp.maximum(a, b), xp.fmin(a, b)), z, w, rtol=0, atol=0)
    i8 = cp.asarray(np.arange(-20, 20, dtype=np.int8))
    n = cp.asarray(np.arange(40, dtype=np.int8) % 9)
    both(lambda xp: lambda a, b: (a << b, a >> b, a >> 1), i8, n, rtol=0, atol=0)


def test_nep50_corners_and_routines():
    x = rand((40,), "float32")
    both(lambda xp: lambda x, s: xp.minimum(2.5, s) * x, x, 1.5)            # float64, as NumPy
    both(lambda xp: lambda x: x * np.float64(2.0), x)                        # a strong NumPy scalar
    both(lambda xp: lambda x: (xp.divmod(x, 0.75)[1], xp.modf(x)[0], xp.round(x, 1), xp.clip(x, -0.5, None),
                               xp.nansum(x)), x, rtol=1e-5, atol=1e-5)


def test_plain_python_without_device_arrays():
    f = ukern.fuse(lambda x, y: x * y + 1)
    h = np.arange(5.0)
    np.testing.assert_array_equal(f(h, h), h * h + 1)
    assert f(2, 3) == 7


@pytest.mark.parametrize("key", [1, -1, (1, 0, 2), slice(None, None, -1), (slice(None), 0, slice(None, None, -1)),
                                 Ellipsis, None, (1, None, slice(None, None, -1), None, 2), (1, Ellipsis)])
def test_indexing_arguments(key):
    x = rand((2, 3, 4), "float32")
    both(lambda xp: lambda x: x[key], x, rtol=0, atol=0)
    y, z = rand((4,), "int16"), rand((1,), "float32")
    both(lambda xp: lambda x, y, z: x + x[0, 1] + x[1] + y[1] + z[0] + x[1][0], x, y, z, rtol=1e-6)


def test_whole_array_assignment():
    def f(xp):
        def g(x, y):
            y[...] = x
            return y
        return g
    both(f, rand((3, 4), "int32"), rand((3, 4), "int32"), rtol=0, atol=0)


def test_none_arguments_and_fills():
    def f(xp):
        def g(x, y, z):
            if y is None:
                return x * z
            return x + y + z
        return g
    x = rand((10,), "float32")
    got = ukern.fuse(f(cp))(x, None, x) + ukern.fuse(f(cp))(x, x, x)
    np.testing.assert_allclose(got.get(), x.get() * x.get() + 3 * x.get(), rtol=1e-6)

    def fill(xp):
        def g(x):
            x[:] = xp.nan
            return x
        return g
    both(fill, rand((3, 5), "float32"))


def test_same_axes_reductions_of_different_shapes():
    x, y = rand((3, 4), "float64"), rand((3, 1), "float64")
    both(lambda xp: lambda x, y: x.sum(axis=0) + y.sum(axis=0), x, y, rtol=1e-12)
    both(lambda xp: lambda x, y: x.sum(axis=0) + y.sum(axis=0), x, x.copy(), rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int16"])
def test_composite_ufuncs(dtype):
    x, y = rand((7, 9), dtype), rand((7, 9), dtype)
    n = cp.asarray(np.random.default_rng(2).integers(-4, 4, (7, 9)).astype(np.int32))
    rtol = 1e-3 if dtype == "float32" or dtype == "int16" else 1e-12
    both(lambda xp: lambda x: (xp.deg2rad(x), xp.degrees(x), xp.signbit(x), xp.fix(x), xp.sinc(x)) + xp.frexp(x), x,
         rtol=rtol, atol=1e-6)
    both(lambda xp: lambda x, y: (xp.logaddexp(x, y), xp.logaddexp2(x, y)), x, y, rtol=rtol, atol=1e-6)
    both(lambda xp: lambda x, n: xp.ldexp(x, n), x, n, rtol=rtol, atol=1e-6)


def test_batch_norm_with_running_statistics():
    x = rand((4, 16, 9, 7), "float32")
    n = x.size // 16
    both(fuse_examples.batchnorm, x, cp.ones(16), cp.zeros(16), cp.zeros(16), cp.ones(16), n, n / (n - 1.0),
         rtol=1e-4, atol=1e-5)


def _softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def _layernorm(x):
    d = x - np.mean(x, axis=-1, keepdims=True)
    return d / np.sqrt(np.mean(d * d, axis=-1, keepdims=True) + 1e-5)


def _center(x):
    return x - np.mean(x, axis=-1, keepdims=True)


def _rowsums(x):
    return x / np.sum(np.abs(x), axis=-1, keepdims=True), np.sum(x * x, axis=-1)


ROW_PROGS = {"softmax": _softmax, "layernorm": _layernorm, "center": _center, "rowsums": _rowsums}


@pytest.mark.parametrize("width", [1, 3, 31, 32, 33, 127, 128, 1000, 4096, 12289, 65537])
@pytest.mark.parametrize("name", sorted(ROW_PROGS))
def test_row_kernel_widths(name, width):
    """Issue 25: the row kernel sized by width (a thread, sub-warps, warps, blocks;
    registers, shared memory, re-read), one kernel, against NumPy in float64."""
    fn = ROW_PROGS[name]
    fu = ukern.fuse(fn)
    for rows in (1, 7, 1000 if width <= 8192 else 129):
        xh = RNG.uniform(-4, 4, (rows, width)).astype(np.float32)
        x = cp.asarray(xh)
        assert fu.kernel_count(x) == 1, (name, rows, width)
        got = fu(x)
        want = fn(xh.astype(np.float64))
        got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
        # a float32 mean's rounding, times what the layer norm scales x - mean by
        x64 = xh.astype(np.float64)
        amp = np.maximum(1, 1 / np.sqrt(np.var(x64, axis=-1, keepdims=True) + 1e-5)) if name == "layernorm" else 1
        for g, w in zip(got, want):
            assert g.dtype == np.float32 and g.shape == w.shape
            atol = 0 if name == "softmax" else 4e-6 * (amp if w.ndim == 2 else 1)
            err = np.abs(g.get() - w) - (2e-5 * np.abs(w) + atol)
            assert (err <= 0).all(), (name, rows, width, float(err.max()))


LONE_PROGS = {
    "sum": lambda x, y: np.sum(x, axis=-1),
    "max": lambda x, y: np.max(x * y, axis=-1),
    "argmax": lambda x, y: np.argmax(x, axis=-1),
    "sqdist": lambda x, y: np.sum((x - y) * (x - y), axis=-1),
}


@pytest.mark.parametrize("rows,width,row_plan", [(67, 8192, True), (128, 8192, True), (264, 8192, True),
                                                  (100, 4100, True), (265, 8192, False), (65, 6144, False),
                                                  (128, 4096, False), (128, 16384, False)])
@pytest.mark.parametrize("name", sorted(LONE_PROGS))
def test_lone_reduction_rows(name, rows, width, row_plan):
    """Session 22: one reduction over the last axis of half to twice as many rows as
    132 SMs, of 4097-8192 elements, runs the row kernel a block a row; other shapes
    the split plan. The same values either way: NumPy's in float64, argmax's index
    exactly (each row's maximum planted twice: the first wins)."""
    fn = LONE_PROGS[name]
    fu = ukern.fuse(fn)
    xh = RNG.uniform(-4, 4, (rows, width)).astype(np.float32)
    yh = RNG.uniform(-4, 4, (rows, width)).astype(np.float32)
    for r in range(rows):  # ties: the maximum at two places, the first one random
        a = RNG.integers(0, width // 2)
        b = RNG.integers(width // 2, width)
        xh[r, a] = xh[r, b] = 5.0 + r / rows
    x, y = cp.asarray(xh), cp.asarray(yh)
    assert fu.kernel_count(x, y) == 1
    if cp.cuda.Device().attributes["MultiProcessorCount"] == 132:
        src = fu.source(x, y)
        assert ("// row plan: rows in registers" in src) == row_plan, (name, rows, width)
    x64, y64 = xh.astype(np.float64), yh.astype(np.float64)
    want = fn(x64, y64)
    got = fu(x, y)
    assert got.shape == want.shape
    if name == "argmax":
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got.get(), want)
        return
    assert got.dtype == np.float32
    # a float32 sum's rounding: a few ulps of the sum of the terms' magnitudes
    mag = {"sum": np.abs(x64), "sqdist": (x64 - y64) ** 2, "max": np.zeros_like(x64)}[name].sum(axis=-1)
    tol = 2e-6 * mag + 2e-7 * np.abs(want)
    assert (np.abs(got.get() - want) <= tol).all(), (name, rows, width, float((np.abs(got.get() - want) - tol).max()))


@pytest.mark.parametrize("rows,width", [(5, 64), (3, 1000), (7, 8192), (2, 32768), (300, 24), (20000, 256),
                                        (300, 8192), (140, 40001)])
def test_row_division_is_exact(rows, width):
    """x / (a row's float32 value) in the row kernel is x / d rounded once, as NumPy's,
    for every x: the shared-memory variants and the registers variant of at most 16
    elements a thread divide without a branch and take a vector's exact divisions again
    where an element (zeros' signs, denormals, values past 2^63, infinities, NaN) or the
    row's divisor (2^-84) is out of that path's range; 32 elements a thread (300 rows of
    8192) divide exactly at once; rows of 40001 are kept in shared memory."""
    fu = ukern.fuse(lambda x, y: x / np.sum(y, axis=-1, keepdims=True))
    specials = np.array([0.0, -0.0, 1e-40, -3e-39, 1e-30, -2e-19, 3e38, -9.3e18, np.inf, -np.inf, np.nan, 1.0],
                        dtype=np.float32)
    xh = RNG.uniform(-4, 4, (rows, width)).astype(np.float32)
    for r in range(rows):
        at = RNG.choice(width, size=min(width, len(specials)), replace=False)
        xh[r, at] = specials[:len(at)]
    yh = np.zeros((rows, width), np.float32)
    yh[:, 0] = 3.0  # exact sums in any order: divisors 3 (in range) and 2^-84 (not)
    yh[rows // 2, 0] = np.float32(2.0 ** -84)
    x, y = cp.asarray(xh), cp.asarray(yh)
    assert fu.kernel_count(x, y) == 1
    want = xh / yh.sum(axis=-1, keepdims=True, dtype=np.float32)
    got = fu(x, y).get()
    np.testing.assert_array_equal(got, want)
    assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all()


@pytest.mark.parametrize("view", ["pitch", "offset", "reversed", "float64"])
def test_row_kernel_views(view):
    """Rows that are not contiguous or not on the 16-byte grid: scalar accesses,
    the same values."""
    base = RNG.uniform(-4, 4, (39, 1030)).astype(np.float64 if view == "float64" else np.float32)
    xd = cp.asarray(base)
    sl = {"pitch": np.s_[:, :1000], "offset": np.s_[:, 1:1001], "reversed": np.s_[:, 1000:0:-1],
          "float64": np.s_[:, 2:1002]}[view]
    x, xh = xd[sl], base[sl]
    for fn in (_softmax, _layernorm, _center):
        fu = ukern.fuse(fn)
        assert fu.kernel_count(x) == 1
        got = fu(x)
        tol = 1e-12 if view == "float64" else 2e-5  # 1000 elements a row: no near-constant rows
        np.testing.assert_allclose(got.get(), fn(xh.astype(np.float64)), rtol=tol, atol=tol / 5)


def _log_softmax(x):
    d = x - np.max(x, axis=-1, keepdims=True)
    return d - np.log(np.sum(np.exp(d), axis=-1, keepdims=True))


def _logsumexp(x):
    m = np.max(x, axis=-1, keepdims=True)
    return m + np.log(np.sum(np.exp(x - m), axis=-1, keepdims=True))


def _softmax0(x):
    e = np.exp(x - np.max(x, axis=0, keepdims=True))
    return e / np.sum(e, axis=0, keepdims=True)


def _special_rows(rows, width):
    """Rows that softmax's max and sum must treat as NumPy does: masks (-inf) over
    some elements, over a whole thread's or block's part, over all of a row but one,
    over all of it (NaN out); a +inf or two (NaN out); a NaN; spreads of 160 (terms
    that underflow); the rest random."""
    x = RNG.uniform(-4, 4, (rows, width)).astype(np.float32)
    ninf = np.float32(-np.inf)
    x[1, RNG.random(width) < 0.5] = ninf
    x[2, :] = ninf
    x[3, RNG.integers(width)] = np.inf
    x[4, RNG.integers(width)] = np.nan
    x[5, :] = ninf
    x[5, RNG.integers(width)] = 1.5
    x[6, :2] = np.inf
    x[7, : max(1, width // 3)] = ninf
    x[8, width // 2:] = ninf
    x[9, :] = RNG.uniform(-80, 80, width)
    x[10, :] = ninf
    x[10, -1] = -3.0
    return x


@pytest.mark.parametrize("width", [1, 5, 33, 1000, 4096, 12289, 65537])
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "logsumexp", "softmax0"])
def test_softmax_specials(name, width):
    """Softmax, log-softmax and logsumexp over rows with -inf masks, +inf and NaN:
    NumPy's results (NaN where it has NaN, its zeros and infinities), the rest within
    rounding of NumPy's float64 values, in every row-plan variant (a thread to a
    cluster a row) and along axis 0, where the split plan reduces (max, sum) pairs
    (ukern/fusion.cuh _uk_lse: two -inf elements in one thread's part made the sum
    NaN before session 29)."""
    fn = {"softmax": _softmax, "log_softmax": _log_softmax, "logsumexp": _logsumexp, "softmax0": _softmax0}[name]
    fu = ukern.fuse(fn)
    for rows in (11, 40):
        xh = _special_rows(rows, width)
        if name == "softmax0":
            xh = np.ascontiguousarray(xh.T)
        x = cp.asarray(xh)
        got = fu(x).get()
        with np.errstate(all="ignore"):
            want = fn(xh.astype(np.float64))
        assert got.dtype == np.float32 and got.shape == want.shape
        bad = np.argwhere(np.isnan(got) != np.isnan(want))
        assert bad.size == 0, (name, rows, width, bad[:4])
        fin = ~np.isnan(want)
        assert (np.isinf(got[fin]) == np.isinf(want[fin])).all() and (got[fin][np.isinf(want[fin])] ==
                                                                     want[fin][np.isinf(want[fin])]).all()
        fin &= ~np.isinf(want)
        tol = 2e-5 * np.abs(want[fin]) + (2e-5 if name != "softmax" and name != "softmax0" else 1e-37)
        assert (np.abs(got[fin] - want[fin]) <= tol).all(), (name, rows, width,
                                                             float((np.abs(got[fin] - want[fin]) - tol).max()))


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@pytest.mark.parametrize("shape,axis", [((37, 5), -1), ((37, 1000), -1), ((13, 12289), -1), ((5, 65537), -1),
                                        ((1000, 37), 0), ((3001,), None), ((6, 300, 7), (0, 2))])
def test_max_min_nan_and_signed_zeros(dtype, shape, axis):
    """Fused max/min over NaN, infinities and zeros of both signs, in the row, split and full plans: NaN
    exactly where NumPy has it, every other value NumPy's exactly, and a zero where the slice holds only zeros
    (either sign: which one NumPy gives depends on its order of combines; the float32 combine is max.NaN)."""
    xh = RNG.uniform(-50, 50, shape).astype(dtype)
    flat = xh.reshape(-1)
    idx = RNG.permutation(flat.size)
    flat[idx[: flat.size // 97 + 1]] = np.nan
    flat[idx[flat.size // 97 + 1: flat.size // 50 + 2]] = np.inf
    flat[idx[flat.size // 50 + 2: flat.size // 30 + 3]] = -np.inf
    lead = xh.reshape(shape[0], -1) if axis == -1 else None
    if lead is not None:  # rows of zeros of both signs, and a row whose only NaN is its last element
        lead[1] = RNG.choice([-0.0, 0.0], lead.shape[1])
        lead[2] = -np.inf
        lead[3] = RNG.uniform(-1, 1, lead.shape[1])
        lead[3, -1] = np.nan
    fu = ukern.fuse(lambda x: (np.max(x, axis=axis), np.min(x, axis=axis), x - np.max(x, axis=axis, keepdims=True)))
    got = [g.get() for g in fu(cp.asarray(xh))]
    with np.errstate(invalid="ignore"):
        want = (np.max(xh, axis=axis), np.min(xh, axis=axis), xh - np.max(xh, axis=axis, keepdims=True))
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        nan = np.isnan(w)
        assert (np.isnan(g) == nan).all(), np.argwhere(np.isnan(g) != nan)[:4]
        assert (g[~nan] == w[~nan]).all()
    if lead is not None:
        assert got[0][1] == 0 and got[1][1] == 0 and np.isnan(got[0][3]) and np.isnan(got[1][3])
        assert got[0][2] == -np.inf


@pytest.mark.parametrize("shape,axis", [((1001,), None), ((65539,), None), ((1 << 20,), None), ((1024, 1024), 1),
                                        ((64, 8192), 1), ((300, 24), 1), ((1024, 256), 0), ((37, 4099), 0),
                                        ((3, 262147), 1)])
@pytest.mark.parametrize("fn", ["argmax", "argmin"])
def test_argmax_argmin_first_extreme(fn, shape, axis):
    """Fused argmax/argmin return NumPy's index exactly: the first extreme, in every plan (whole array over a
    cluster or a split, rows, columns). Each slice holds its extreme twice at neighbouring places (inside one
    vector and across two), ties of -0 and +0 at the extreme, and some slices a NaN twice (the first NaN wins),
    only -inf (or +inf for argmin: index 0) or one value throughout; the index is 32-bit here (the pair's
    _UK_RED_IDX32)."""
    xh = RNG.uniform(-4, 4, shape).astype(np.float32)
    sl = xh.reshape(-1, 1) if axis is None else np.moveaxis(xh, axis, -1)
    sl = sl.reshape(1, -1) if axis is None else sl.reshape(-1, sl.shape[-1])
    sl = sl.copy()
    n, w = sl.shape
    big = 9.0 if fn == "argmax" else -9.0
    for r in range(n):
        a = int(RNG.integers(0, w - 5))
        k = (r + len(shape) + w // 7) % 6  # the whole arrays: kinds 0, 3 and 1
        if k == 0:
            sl[r, a] = sl[r, a + 1] = big  # neighbours: one vector or two
        elif k == 1:
            sl[r, a] = np.nan
            sl[r, a + 3] = np.nan
            sl[r, a + 2] = big
        elif k == 2:  # the extreme is zero: -0 first, +0 after it (equal: the first wins)
            sl[r] = -np.abs(sl[r]) - 0.5 if fn == "argmax" else np.abs(sl[r]) + 0.5
            sl[r, a], sl[r, a + 2] = -0.0, 0.0
        elif k == 3:
            sl[r] = -np.inf if fn == "argmax" else np.inf
        elif k == 4:
            sl[r] = 1.5
        else:
            sl[r, a + 4] = big
            sl[r, w - 1] = big
    if axis is None:
        xh = sl.reshape(shape)
    else:
        moved = list(np.moveaxis(np.empty(shape), axis, -1).shape)
        xh = np.moveaxis(sl.reshape(moved), -1, axis).copy()
    f = ukern.fuse(lambda v: getattr(np, fn)(v, axis=axis))
    want = getattr(np, fn)(xh, axis=axis)
    got = f(cp.asarray(xh))
    assert got.dtype == np.int64 and got.shape == np.shape(want)
    np.testing.assert_array_equal(got.get(), want)
