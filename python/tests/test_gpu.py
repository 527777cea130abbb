"""gpu tier: the same kernels in CuPy and in ukern, on the same arrays.

Requires equal dtypes, shapes and values (tight tolerances for reductions,
whose summation order differs), outputs as the inputs' array type, and work
ordered on the producer's current stream (CuPy's and PyTorch's). Skips
without a GPU (or without CuPy); the torch cases skip without PyTorch.
"""
import numpy as np
import pytest

import ukern

if ukern.device_count() == 0:
    pytest.skip("no CUDA device (ukern.device_count() == 0)", allow_module_level=True)

cp = pytest.importorskip("cupy", reason="CuPy is needed to compare with")

RNG = np.random.default_rng(20261123)


def rand(shape, dtype):
    """Random non-zero values of either sign (ints: 1..40 with signs where signed)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        v = RNG.uniform(0.5, 2.0, shape) * RNG.choice([-1.0, 1.0], shape)
    elif dtype.kind == "c":
        v = RNG.uniform(0.5, 2.0, shape) + 1j * RNG.uniform(-2.0, -0.5, shape)
    elif dtype.kind == "u":
        v = RNG.integers(1, 40, shape)
    elif dtype.kind == "b":
        v = RNG.integers(0, 2, shape)
    else:
        v = RNG.integers(1, 40, shape) * RNG.choice([-1, 1], shape)
    return cp.asarray(np.asarray(v).astype(dtype))


def poison(shape, dtype):
    a = cp.empty(shape, dtype)
    a.fill(np.nan if np.dtype(dtype).kind in "fc" else 77)
    return a


def same(u, c, rtol=0.0):
    """ukern's result u equals CuPy's c: type, dtype, shape and values."""
    assert isinstance(u, cp.ndarray), type(u)
    assert u.dtype == c.dtype and u.shape == c.shape
    if rtol and u.dtype.kind in "fc":
        cp.testing.assert_allclose(u, c, rtol=rtol, atol=0)
    else:
        cp.testing.assert_array_equal(u, c)


def both(cls, *args, **kw):
    return getattr(cp, cls)(*args, **kw), getattr(ukern, cls)(*args, **kw)


SQ = ("T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff")


# ---- ElementwiseKernel -------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint8", "complex64"])
@pytest.mark.parametrize("shapes", [((1001,), (1001,)), ((7, 13), (13,)), ((5, 1, 9), (1, 3, 1)), ((), ()),
                                    ((0, 5), (5,))])
def test_elementwise_matches_cupy(dtype, shapes):
    ck, uk = both("ElementwiseKernel", *SQ)
    x, y = rand(shapes[0], dtype), rand(shapes[1], dtype)
    same(uk(x, y), ck(x, y), 1e-6 if dtype.startswith("complex") else 0.0)


@pytest.mark.parametrize("view", ["reversed", "transposed", "step", "broadcast0"])
def test_elementwise_strided_views(view):
    ck, uk = both("ElementwiseKernel", *SQ)
    base = rand((33, 65), "float32")
    x = {"reversed": base[::-1, ::-1], "transposed": base.T, "step": base[::3, 1::2],
         "broadcast0": cp.broadcast_to(base[:1], (33, 65))}[view]
    y = rand(x.shape[-1:], "float32")
    same(uk(x, y), ck(x, y))


def test_elementwise_scalars():
    ck, uk = both("ElementwiseKernel", *SQ)
    x = rand((257,), "float32")
    same(uk(x, 1.25), ck(x, 1.25))                        # untyped: takes float32
    same(uk(x, np.float32(0.75)), ck(x, np.float32(0.75)))
    xi = rand((99,), "int16")
    same(uk(xi, 3), ck(xi, 3))
    with pytest.raises(TypeError):
        uk(rand((9,), "uint8"), 300)                      # out of range for uint8


def test_elementwise_given_outputs_poisoned():
    ck, uk = both("ElementwiseKernel", *SQ)
    x, y = rand((31, 17), "float64"), rand((17,), "float64")
    zc, zu, zp = poison((31, 17), "float64"), poison((31, 17), "float64"), poison((31, 17), "float64")
    assert uk(x, y, zu) is zu
    assert uk(x, y, out=zp) is zp
    ck(x, y, zc)
    same(zu, zc)
    same(zp, zc)


def test_elementwise_several_outputs_and_return_modes():
    args = ("T x, T y", "T s, T d", "s = x + y; d = x - y", "sumdiff")
    ck, uk = both("ElementwiseKernel", *args)
    x, y = rand((123,), "float32"), rand((123,), "float32")
    (us, ud), (cs, cd) = uk(x, y), ck(x, y)
    same(us, cs)
    same(ud, cd)
    one = ukern.ElementwiseKernel(*SQ, return_tuple=True)(x, y)
    assert isinstance(one, tuple) and len(one) == 1
    z = poison((123,), "float32")
    assert ukern.ElementwiseKernel(*SQ, no_return=True)(x, y, z) is None
    same(z, cp.ElementwiseKernel(*SQ)(x, y))


def test_elementwise_raw_and_size():
    args = ("raw T x", "T y", "y = x[_ind.size() - i - 1]", "reverse")
    ck, uk = both("ElementwiseKernel", *args)
    x = rand((1001,), "int32")
    yu, yc = poison((1001,), "int32"), poison((1001,), "int32")
    uk(x, yu)
    ck(x, yc)
    same(yu, yc)
    same(yu, x[::-1].copy())
    same(uk(x, size=1001), ck(x, size=1001))


def test_elementwise_preamble_loop_prep_options():
    kw = dict(preamble="__device__ float twice(float v) { return 2 * v; }", options=("-DOFFSET=3",))
    args = ("float32 x", "float32 y", "y = twice(x) + OFFSET", "pre")
    ck, uk = both("ElementwiseKernel", *args, **kw)
    x = rand((77,), "float32")
    same(uk(x), ck(x))


def test_elementwise_overlap_is_numpy_like():
    # ukern copies a partly overlapping input first (CuPy does not): compare with NumPy.
    k = ukern.ElementwiseKernel("T x", "T y", "y = x * 2", "dbl")
    a = rand((100,), "float32")
    ref = a.get()
    k(a[:-1], a[1:])
    ref[1:] = ref[:-1] * 2
    cp.testing.assert_array_equal(a, ref)


def test_elementwise_on_producer_stream():
    # A non-blocking stream: a kernel on any other stream would race with the producer.
    k = ukern.ElementwiseKernel(*SQ)
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        big = cp.full(1 << 25, 1.0, cp.float32)
        for _ in range(4):
            big = big * 2                        # 16.0 once all ran
        z = k(big, 0.0)
        assert isinstance(z, cp.ndarray)
    s.synchronize()
    assert float(z.min()) == 256.0 and float(z.max()) == 256.0
    s2 = cp.cuda.Stream(non_blocking=True)
    big2 = big * 1
    cp.cuda.Device().synchronize()              # s2 does not wait for the null stream
    z2 = k(big2, 1.0, stream=s2)                # stream= wins
    s2.synchronize()
    assert float(z2.min()) == 225.0


def test_ukern_array_when_no_array_argument():
    k = ukern.ElementwiseKernel("float32 x", "float32 y", "y = x + i", "iota")
    r = k(2.5, size=10)
    assert isinstance(r, ukern.Array) and r.shape == (10,) and r.dtype == np.float32
    want = np.arange(10, dtype=np.float32) + np.float32(2.5)
    np.testing.assert_array_equal(r.get(), want)
    np.testing.assert_array_equal(cp.asarray(r).get(), want)          # __cuda_array_interface__
    np.testing.assert_array_equal(cp.from_dlpack(r).get(), want)      # __dlpack__


class DLPackOnly:
    """An array that speaks only DLPack (as JAX's do), over a CuPy array."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None, **kw):
        return self.a.__dlpack__(stream=stream, **kw)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def test_dlpack_only_producer():
    ck, uk = both("ElementwiseKernel", *SQ)
    x, y = rand((3, 301), "float64"), rand((301,), "float64")
    z = uk(DLPackOnly(x), DLPackOnly(y))
    assert isinstance(z, ukern.Array) and z.shape == (3, 301)
    same(cp.asarray(z), ck(x, y))
    zt = uk(DLPackOnly(x[:, ::-2]), 0.5)                 # negative strides through DLPack
    same(cp.from_dlpack(zt), ck(x[:, ::-2], 0.5))


# ---- ReductionKernel ---------------------------------------------------------

L2 = ("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")


@pytest.mark.parametrize("dtype,rtol", [("float32", 1e-4), ("float64", 1e-12)])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1), (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduction_matches_cupy(dtype, rtol, axis, keepdims):
    ck, uk = both("ReductionKernel", *L2)
    x = rand((37, 19, 5), dtype)
    same(uk(x, axis=axis, keepdims=keepdims), ck(x, axis=axis, keepdims=keepdims), rtol)


@pytest.mark.parametrize("shape,axis,keepdims", [
    ((1024, 4097), 1, False), ((1024, 4097), 1, True),   # a block per row: the CUB combine
    ((3, 1 << 21), -1, False),                           # split + finish
    ((37, 19, 5), (0, 2), True), ((37, 19, 5), None, False), ((300, 301), 0, False),
    ((0, 7), 1, False), ((7, 0), 1, True), ((1,), None, False),
])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_reduction_block_reduce_cub_equals_default(shape, axis, keepdims, dtype):
    args = ("T x", "T y", "x", "a + b", "y = a", "0", "bsum")
    kd, kc = ukern.ReductionKernel(*args), ukern.ReductionKernel(*args, block_reduce="cub")
    x = cp.abs(rand(shape, dtype)) if np.prod(shape) else cp.zeros(shape, dtype)  # sums far from 0
    d = kd(x, axis=axis, keepdims=keepdims)
    c = kc(x, axis=axis, keepdims=keepdims)
    same(c, d, 1e-5)
    same(c, cp.sum(x, axis=axis, keepdims=keepdims), 1e-4)


def test_reduction_block_reduce_cub_struct_argmax():
    pre = ("struct amax { double v; long long i; };\n"
           "__device__ amax mk(double v, long long i) { amax r; r.v = v; r.i = i; return r; }\n")
    args = ("T x", "int64 y", "mk(x, _J)", "a.v >= b.v ? a : b", "y = a.i", None, "amx")
    kw = dict(reduce_type="amax", preamble=pre)
    kd, kc = ukern.ReductionKernel(*args, **kw), ukern.ReductionKernel(*args, block_reduce="cub", **kw)
    x = cp.asarray(RNG.permutation(513 * 3001).reshape(513, 3001).astype(np.float64))  # no ties
    same(kc(x, axis=1), kd(x, axis=1))
    same(kc(x, axis=1), cp.argmax(x, axis=1))


BLOCK_ROWS_ARGMAX = ("struct amax { float v; long long i; };\n"
                     "__device__ amax mk(float v, long long i) { amax r; r.v = v; r.i = i; return r; }\n"
                     "__device__ amax first_max(amax a, amax b) {\n"
                     "  return a.v > b.v || (a.v == b.v && a.i < b.i) ? a : b;\n}\n")


@pytest.mark.parametrize("shape,axis", [
    ((128, 8192), 1), ((64, 16384), 1), ((33, 16384), 1), ((264, 4100), 1), ((40, 12288), -1),
    ((128, 64, 128), (1, 2)), ((64, 128, 128), (0, 2)),
    ((32, 8192), 1), ((265, 8192), 1),  # outside the rule: the model's plans
])
@pytest.mark.parametrize("kind", ["sum", "sum_cub", "dot", "argmax"])
def test_reduction_block_rows(shape, axis, kind):
    """Session 23: a quarter to twice as many outputs as 132 SMs of 4097-16384 elements
    each run a block of 512 threads an output with no split pass (a two-input program a
    block of 256). The results must match NumPy's (float64 reference), for a sum, the
    CUB block combine, a two-input dot and a struct argmax whose rows hold their maximum
    twice (the first index must win)."""
    xh = RNG.uniform(-2, 2, shape).astype(np.float32)
    if kind == "argmax":
        if len(shape) != 2:
            pytest.skip("_J numbers one reduced axis here")
        for r in range(shape[0]):
            a, b = RNG.integers(0, shape[1] // 2), RNG.integers(shape[1] // 2, shape[1])
            xh[r, a] = xh[r, b] = 3.0 + r / shape[0]
        k = ukern.ReductionKernel("T x", "int64 y", "mk(x, _J)", "first_max(a, b)", "y = a.i", None, "brargmax",
                                  reduce_type="amax", preamble=BLOCK_ROWS_ARGMAX)
        got = k(cp.asarray(xh), axis=axis)
        np.testing.assert_array_equal(got.get(), xh.argmax(axis=axis))
        return
    yh = RNG.uniform(-2, 2, shape).astype(np.float32)
    x, y = cp.asarray(xh), cp.asarray(yh)
    x64, y64 = xh.astype(np.float64), yh.astype(np.float64)
    if kind == "dot":
        k = ukern.ReductionKernel("T x, T w", "T y", "x * w", "a + b", "y = a", "0", "brdot")
        got, want, mag = k(x, y, axis=axis), (x64 * y64).sum(axis=axis), np.abs(x64 * y64).sum(axis=axis)
    else:
        k = ukern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "brsum",
                                  **({"block_reduce": "cub"} if kind == "sum_cub" else {}))
        got, want, mag = k(x, axis=axis), x64.sum(axis=axis), np.abs(x64).sum(axis=axis)
    assert got.dtype == np.float32 and got.shape == want.shape
    # a float32 sum's rounding: a few ulps of the sum of the terms' magnitudes
    err = np.abs(got.get() - want)
    assert (err <= 2e-6 * mag + 1e-30).all(), float((err / mag).max())


def test_reduction_int_exact_and_views():
    args = ("T x", "T y", "x", "a + b", "y = a", "0", "isum")
    ck, uk = both("ReductionKernel", *args)
    x = rand((129, 65), "int64")
    for v in (x, x.T, x[::-1, ::2]):
        for axis in (None, 0, 1):
            same(uk(v, axis=axis), ck(v, axis=axis))


def test_reduction_given_output_and_max():
    args = ("T x", "T y", "x", "max(a, b)", "y = a", "-1e30", "mx")
    ck, uk = both("ReductionKernel", *args)
    x = rand((50, 41), "float32")
    yu = poison((50,), "float32")
    assert uk(x, axis=1, out=yu) is yu
    same(yu, ck(x, axis=1))


def test_reduction_on_producer_stream():
    uk = ukern.ReductionKernel(*L2)
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        big = cp.full((1 << 12, 1 << 12), 1.0, cp.float32)
        big = big * 3
        r = uk(big, axis=1)
    s.synchronize()
    cp.testing.assert_allclose(r, cp.full(1 << 12, 3.0 * 64, cp.float32), rtol=1e-6)


# ---- RawModule / RawKernel ---------------------------------------------------

RAW = r'''
extern "C" __global__ void scale(const float* x, float* y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}
extern "C" __global__ void count(int* c) { atomicAdd(&counter[threadIdx.x % 4], 1); c[0] = 1; }
template <typename T> __global__ void fill(T* y, T v) { y[threadIdx.x] = v; }
'''
RAW = "__device__ int counter[4];\n" + RAW


def test_raw_kernel_matches_cupy():
    ck, uk = both("RawKernel", RAW, "scale")
    n = 1001
    x = rand((n,), "float32")
    yu, yc = poison((n,), "float32"), poison((n,), "float32")
    args = lambda y: (x, y, np.float32(1.5), np.int32(n))  # noqa: E731
    uk(((n + 127) // 128,), (128,), args(yu))
    ck(((n + 127) // 128,), (128,), args(yc))
    same(yu, yc)
    s = cp.cuda.Stream()                        # blocking: ordered after the null stream's poison
    yu2 = poison((n,), "float32")
    uk((n + 127) // 128, 128, args(yu2), shared_mem=0, stream=s)
    s.synchronize()
    same(yu2, yc)


def test_raw_kernel_attributes():
    ck, uk = both("RawKernel", RAW, "scale")
    ten = {"max_threads_per_block", "shared_size_bytes", "const_size_bytes", "local_size_bytes", "num_regs",
           "ptx_version", "binary_version", "cache_mode_ca", "max_dynamic_shared_size_bytes",
           "preferred_shared_memory_carveout"}
    assert set(uk.attributes) == ten and len(ten & set(ck.attributes)) >= 8
    assert uk.max_threads_per_block == ck.max_threads_per_block
    assert uk.num_regs > 0 and uk.binary_version >= 50
    uk.max_dynamic_shared_size_bytes = 65536
    assert uk.max_dynamic_shared_size_bytes == 65536
    uk.preferred_shared_memory_carveout = 50
    with pytest.raises(AttributeError):
        uk.num_regs = 3


def test_raw_module_globals_and_name_expressions():
    um = ukern.RawModule(code=RAW, name_expressions=("fill<float>", "fill<int>"))
    cm = cp.RawModule(code=RAW, name_expressions=("fill<float>", "fill<int>"))
    for T in ("float32", "int32"):
        expr = "fill<float>" if T == "float32" else "fill<int>"
        yu, yc = poison((64,), T), poison((64,), T)
        um.get_function(expr)((1,), (64,), (yu, np.dtype(T).type(7)))
        cm.get_function(expr)((1,), (64,), (yc, np.dtype(T).type(7)))
        same(yu, yc)
    g = um.get_global("counter")  # CuPy is imported: CuPy's MemoryPointer, as cm.get_global gives
    assert isinstance(g, cp.cuda.MemoryPointer) and g.mem.size == 16 and g.device_id == cp.cuda.Device().id
    counter = cp.ndarray((4,), cp.int32, g)
    counter[:] = 0
    flag = poison((1,), "int32")
    um.get_function("count")((2,), (64,), (flag,))
    cp.cuda.runtime.deviceSynchronize()
    cp.testing.assert_array_equal(counter, cp.full(4, 32, cp.int32))
    with pytest.raises(ukern.CUDADriverError):
        um.get_function("no_such_kernel")


# ---- PyTorch inputs ----------------------------------------------------------

@pytest.fixture
def torch():
    t = pytest.importorskip("torch", reason="PyTorch is needed for the torch cases")
    if not t.cuda.is_available():
        pytest.skip("torch.cuda is not available")
    return t


def test_torch_elementwise_and_reduction(torch):
    x = torch.rand((37, 29), device="cuda", dtype=torch.float32) + 0.5
    y = torch.rand((29,), device="cuda", dtype=torch.float32) - 2.0
    ck, uk = both("ElementwiseKernel", *SQ)
    z = uk(x, y)
    assert isinstance(z, torch.Tensor) and z.dtype == torch.float32 and tuple(z.shape) == (37, 29)
    same(cp.from_dlpack(z), ck(cp.from_dlpack(x), cp.from_dlpack(y)))
    cr, ur = both("ReductionKernel", *L2)
    r = ur(x, axis=0)
    assert isinstance(r, torch.Tensor) and tuple(r.shape) == (29,)
    same(cp.from_dlpack(r), cr(cp.from_dlpack(x), axis=0), 1e-5)
    out = torch.full((37, 29), float("nan"), device="cuda")
    assert uk(x, y, out) is out
    same(cp.from_dlpack(out), ck(cp.from_dlpack(x), cp.from_dlpack(y)))


def test_torch_current_stream(torch):
    k = ukern.ElementwiseKernel(*SQ)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        big = torch.full((1 << 25,), 1.0, device="cuda")
        for _ in range(4):
            big = big * 2
        z = k(big, 0.0)
    s.synchronize()
    assert float(z.min()) == 256.0 and float(z.max()) == 256.0


def test_torch_raw_kernel(torch):
    uk = ukern.RawKernel(RAW, "scale")
    n = 515
    x = torch.rand(n, device="cuda") + 0.5
    y = torch.full((n,), float("nan"), device="cuda")
    uk((n + 127) // 128, 128, (x, y, np.float32(2.0), np.int32(n)))
    torch.cuda.synchronize()
    assert torch.equal(y, x * 2)
