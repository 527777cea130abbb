"""gpu tier of ukern.fuse: fused functions against cupy.fuse and NumPy on the host.

Dtypes must equal NumPy 2's (ukern follows NEP 50), values NumPy's within
rounding; the output is the inputs' array type; work runs on the producer's stream.
"""
import numpy as np
import pytest

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
