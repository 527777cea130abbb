"""gpu tier: the per-call fast paths (python/src/fast.c) on real CuPy arrays.

cupy.ndarray arguments are read from their attributes (not from a fresh
__cuda_array_interface__), NumPy scalars of a known type by the number
protocol, and allocated outputs become cupy.ndarray over ukern's memory
directly ("direct") instead of through cupy.from_dlpack ("dlpack"), or, once
a kernel has seen the inputs' signature, are allocated in CuPy's pool before
the call ("pool", the default). Every output route must give the same
arrays, keep the memory alive, and order CuPy's current stream after the
launch stream. Skips without a GPU or CuPy.
"""
import gc

import numpy as np
import pytest

import ukern
from ukern import _ukern

if ukern.device_count() == 0:
    pytest.skip("no CUDA device (ukern.device_count() == 0)", allow_module_level=True)

cp = pytest.importorskip("cupy", reason="CuPy is needed to compare with")

RNG = np.random.default_rng(20261124)
SQ = ("T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff")


def rand(shape, dtype):
    v = RNG.uniform(0.5, 2.0, shape) * RNG.choice([-1.0, 1.0], shape)
    return cp.asarray(np.asarray(v).astype(dtype))


class CAIOnly:
    """The same array through the CUDA array interface alone (no fast path)."""

    def __init__(self, a):
        self.__cuda_array_interface__ = a.__cuda_array_interface__
        self._a = a

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


@pytest.fixture(params=["pool", "direct", "dlpack"])
def route(request):
    _ukern._set_output_route(request.param)
    yield request.param
    _ukern._set_output_route("pool")


@pytest.mark.parametrize("make", [
    lambda: rand((257,), "float32"),
    lambda: rand((6, 33), "float64")[:, ::-2],
    lambda: rand((5, 7), "float16").T,
    lambda: rand((0, 3), "float32"),
    lambda: cp.asarray(np.float32(1.25)),
])
def test_cupy_arrays_read_as_their_interface(make):
    x = make()
    fast, slow = _ukern._arg(x), _ukern._arg(CAIOnly(x))
    assert fast == slow
    assert fast[2] == x.data.ptr and fast[3] == x.shape and fast[5] == x.device.id


@pytest.mark.parametrize("shape", [(1,), (1000, 3), (0,), ()])
def test_allocated_outputs_both_routes(route, shape):
    k, ck = ukern.ElementwiseKernel(*SQ), cp.ElementwiseKernel(*SQ)
    x, y = rand(shape, "float32"), rand(shape, "float32")
    z = k(x, y)
    assert isinstance(z, cp.ndarray) and z.dtype == np.float32 and z.shape == shape
    assert z.flags.c_contiguous and z.device.id == x.device.id
    cp.testing.assert_array_equal(z, ck(x, y))
    w = k(x, np.float32(0.5))                      # a typed scalar, twice: learned, then by number
    w = k(x, np.float32(0.5))
    cp.testing.assert_array_equal(w, ck(x, np.float32(0.5)))


def test_outputs_outlive_the_kernel_and_tuples(route):
    k = ukern.ElementwiseKernel("T x", "T a, T b", "a = x + 1; b = x * 2", "two")
    x = rand((4097,), "float64")
    a, b = k(x)
    del k
    gc.collect()
    junk = [cp.full(4097, 7.0) for _ in range(8)]   # reuse of freed memory would show here
    cp.testing.assert_array_equal(a, x + 1)
    cp.testing.assert_array_equal(b, x * 2)
    del junk


def test_pool_route_after_the_first_call_of_a_signature():
    k, ck = ukern.ElementwiseKernel(*SQ), cp.ElementwiseKernel(*SQ)
    x, y = rand((1000, 3), "float32"), rand((3,), "float32")
    first, second = k(x, y), k(x, y)
    assert isinstance(first.data.mem, cp.cuda.UnownedMemory)          # ukern allocated it
    assert not isinstance(second.data.mem, cp.cuda.UnownedMemory)     # CuPy's pool did
    for z in (first, second):
        assert z.shape == (1000, 3) and z.dtype == np.float32 and z.flags.c_contiguous
        cp.testing.assert_array_equal(z, ck(x, y))
    other = k(x[:7], y)                                                # another signature: learned anew
    assert isinstance(other.data.mem, cp.cuda.UnownedMemory)
    cp.testing.assert_array_equal(k(x[:7], y), ck(x[:7], y))
    s = cp.cuda.Stream(non_blocking=True)
    z = k(x, y, stream=s)                                              # not CuPy's current stream
    assert isinstance(z.data.mem, cp.cuda.UnownedMemory)
    cp.testing.assert_array_equal(z, ck(x, y))
    with s:                                                            # CuPy's current stream: its pool
        z = k(x, y)
        assert not isinstance(z.data.mem, cp.cuda.UnownedMemory)
        cp.testing.assert_array_equal(z, ck(x, y))
    s.synchronize()
    two = ukern.ElementwiseKernel("T x", "T a, int32 b", "a = x * 2; b = 7", "two_out")
    for _ in range(3):
        a, b = two(x)
        cp.testing.assert_array_equal(a, x * 2)
        assert b.dtype == np.int32 and int(b.min()) == 7 and int(b.max()) == 7
    for v in (3, 300, 3.5):                                            # scalar classes: each learned
        for _ in range(2):
            cp.testing.assert_array_equal(k(x, v), ck(x, v))
    f = ukern.fuse(lambda a, x, y: a * x + y)
    for _ in range(3):
        r = f(np.float32(2), x, y)
        assert r.dtype == np.float32 and r.shape == (1000, 3)
        cp.testing.assert_array_equal(r, x * np.float32(2) + y)


def test_reduction_output_both_routes(route):
    rk = ukern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "sum_k")
    x = rand((300, 7), "float64")
    s = rk(x)
    assert isinstance(s, cp.ndarray) and s.shape == () and s.dtype == np.float64
    cp.testing.assert_allclose(s, x.sum(), rtol=1e-12)
    r = rk(x, axis=1)
    cp.testing.assert_allclose(r, x.sum(axis=1), rtol=1e-12)


def test_reduction_pool_route_by_axes():
    """ReductionKernel as ElementwiseKernel: the second call of a signature (inputs, axes as
    given, keepdims) gets its output from CuPy's pool; another signature learns anew."""
    rk = ukern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "sum_k")
    x = rand((300, 7), "float64")
    cases = [({}, x.sum()), ({"axis": 1}, x.sum(axis=1)), ({"axis": 0}, x.sum(axis=0)),
             ({"axis": (0,), "keepdims": True}, x.sum(axis=0, keepdims=True)), ({"axis": -1}, x.sum(axis=-1)),
             ({"axis": (0, 1)}, x.sum()), ({"axis": ()}, x)]
    for kw, ref in cases:
        first, second = rk(x, **kw), rk(x, **kw)
        assert isinstance(first.data.mem, cp.cuda.UnownedMemory), kw            # ukern allocated it
        assert not isinstance(second.data.mem, cp.cuda.UnownedMemory), kw       # CuPy's pool did
        for r in (first, second):
            assert r.shape == ref.shape and r.dtype == np.float64 and r.flags.c_contiguous, kw
            cp.testing.assert_allclose(r, ref, rtol=1e-12)
    e = cp.zeros((7, 0), cp.float64)                                            # zero-size output: no pool route
    for _ in range(2):
        r = rk(e, axis=0)
        assert r.shape == (0,) and r.dtype == np.float64
    two = ukern.ReductionKernel("T x", "T s, int64 n", "x", "a + b", "s = a; n = _in_ind.size()", "0", "sum_n")
    for _ in range(3):
        s, n = two(x, axis=0)
        cp.testing.assert_allclose(s, x.sum(axis=0), rtol=1e-12)
        assert n.dtype == np.int64 and n.shape == (7,) and int(n.min()) == int(n.max()) == x.size


def test_output_ordered_on_current_stream_after_stream_arg(route):
    # Launch on a non-blocking stream; read on CuPy's current (null) stream at once.
    k = ukern.ElementwiseKernel("T x, T y", "T z", "z = x * y", "mul")
    big = cp.full(1 << 25, 3.0, cp.float32)
    cp.cuda.Device().synchronize()
    s2 = cp.cuda.Stream(non_blocking=True)
    for i in range(3):   # a new value each time: memory reused from the last round cannot pass
        z = k(big, float(i + 2), stream=s2)
        want = 3.0 * (i + 2)
        assert float(z.min()) == want and float(z.max()) == want   # no s2.synchronize(): events order it


def test_inputs_on_current_stream():
    k = ukern.ElementwiseKernel(*SQ)
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        x = cp.full(1 << 24, 1.0, cp.float32)
        for _ in range(3):
            x = x * 2                                # 8.0 once all ran on s
        out = cp.empty_like(x)
        k(x, 1.0, out)                               # given output, fast path inputs: on s
        z = k(x, 0.0)
    s.synchronize()
    assert float(out.min()) == 49.0 and float(z.max()) == 64.0


def test_bind_launches_nothing():
    k = ukern.ElementwiseKernel(*SQ)
    x, y, z = rand((64,), "float32"), rand((64,), "float32"), cp.full(64, 5.0, cp.float32)
    assert k._bind(x, y, z) is None and k._bind(x, y) is None
    raw = ukern.RawKernel(r'extern "C" __global__ void f(float* z) { z[threadIdx.x] = 1; }', "f")
    assert raw._bind((1,), (64,), (z,)) is None
    cp.cuda.Device().synchronize()
    assert float(z.min()) == 5.0 and float(z.max()) == 5.0
    raw((1,), (64,), (z,))
    assert float(z.min()) == 1.0


def test_torch_tensors_read_as_their_interface():
    torch = pytest.importorskip("torch", reason="PyTorch is needed for the torch cases")
    if not torch.cuda.is_available():
        pytest.skip("torch.cuda is not available")
    cases = [torch.randn(257, device="cuda"), torch.randn(6, 33, device="cuda", dtype=torch.float64)[:, ::2],
             torch.randn(5, 7, device="cuda").T, torch.empty(0, 3, device="cuda"),
             torch.tensor(1.5, device="cuda"), torch.randn(4, 1, 3, device="cuda")[:, :, 1:2]]
    for t in cases:
        assert _ukern._arg(t) == _ukern._arg(CAIOnly(t)), t.shape
    # Refused as PyTorch's protocols refuse it (its CAI: RuntimeError; its __dlpack__: BufferError).
    with pytest.raises((RuntimeError, BufferError), match="grad"):
        _ukern._arg(torch.ones(3, device="cuda", requires_grad=True))
    b = torch.randn(9, device="cuda").to(torch.bfloat16)      # no CAI typestr: DLPack describes it

    class DLPackOnly:
        def __dlpack__(self, **kw):
            return b.__dlpack__(**kw)

        def __dlpack_device__(self):
            return b.__dlpack_device__()
    assert _ukern._arg(b) == _ukern._arg(DLPackOnly())
    k = ukern.ElementwiseKernel("T x", "T y", "y = x * x", "sq1")
    x = torch.randn(1000, device="cuda")
    for _ in range(3):   # the first from ukern's pool (DLPack), then torch.empty in PyTorch's allocator
        y = k(x)
        assert isinstance(y, torch.Tensor) and y.device == x.device and y.dtype == x.dtype
        assert torch.equal(y, x * x)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        for _ in range(2):
            y = k(x)
            assert torch.equal(y, x * x)
    s.synchronize()
