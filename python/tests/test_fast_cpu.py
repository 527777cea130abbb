"""cpu tier: the per-call fast paths read arguments exactly as the protocols do.

A cupy.ndarray is read from its attributes instead of its
__cuda_array_interface__, and NumPy scalars of a type seen before through the
number protocol instead of dtype.str and tobytes(). Here a stand-in `cupy`
module (host memory, fake device ids) is compared with the same arrays read
through the CUDA array interface, and scalars with their own bytes.
"""
import sys
import types

import numpy as np
import pytest

import ukern
from ukern import _ukern

SQ = ("T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff")


class MemoryPointer:
    def __init__(self, ptr, device_id):
        self.ptr, self.device_id = ptr, device_id


def make_fake_cupy():
    """A module named cupy with an ndarray type of the attributes ukern reads."""
    mod = types.ModuleType("cupy")
    mod.cuda = types.SimpleNamespace(calls=0)

    class Stream:
        ptr = 0

    def get_current_stream():
        mod.cuda.calls += 1
        return Stream()
    mod.cuda.get_current_stream = get_current_stream

    class ndarray:
        def __init__(self, host, device_id=0):
            self._host = host
            self.data = MemoryPointer(host.__array_interface__["data"][0], device_id)
            self.shape, self.strides, self.dtype = host.shape, host.strides, host.dtype
            self._c_contiguous = host.flags.c_contiguous   # CuPy's flag, read instead of strides when set

        @property
        def __cuda_array_interface__(self):   # as CuPy writes it (version 3, stream)
            contiguous = self._host.flags.c_contiguous
            return {"shape": self.shape, "typestr": self.dtype.str, "descr": self.dtype.descr,
                    "data": (self.data.ptr, False), "version": 3, "stream": 1,
                    "strides": None if contiguous else self.strides}

        def __dlpack_device__(self):
            return (2, self.data.device_id)
    ndarray.__module__ = "cupy"
    mod.ndarray = ndarray
    return mod


class Foreign:
    """The same array, offered only through the protocols (a type ukern has no fast path for)."""

    def __init__(self, a):
        self.__cuda_array_interface__ = a.__cuda_array_interface__
        self._dev = a.__dlpack_device__()[1]

    def __dlpack_device__(self):
        return (2, self._dev)


@pytest.fixture
def fake_cupy(monkeypatch):
    mod = make_fake_cupy()
    monkeypatch.setitem(sys.modules, "cupy", mod)
    return mod


def host_arrays():
    rng = np.random.default_rng(7)
    base = rng.uniform(-2, 2, (5, 7)).astype(np.float32)
    return [
        ("contiguous", base),
        ("strided", base[:, ::2]),
        ("negative strides", base[::-1, ::-3]),
        ("transposed", base.T),
        ("0-d", np.array(3.5, np.float64)),
        ("zero-size", np.zeros((0, 3), np.int16)),
        ("float16", rng.uniform(-1, 1, 9).astype(np.float16)),
        ("bool", rng.uniform(-1, 1, 9) > 0),
        ("complex128", (rng.uniform(-1, 1, 6) + 1j).astype(np.complex128)),
        ("uint8 3-d", np.arange(60, dtype=np.uint8).reshape(3, 4, 5)[:, 1:, ::2]),
        # extent-1 dimensions with strides of their own: contiguous all the same
        ("extent-1 odd strides", np.lib.stride_tricks.as_strided(base, (1, 7, 1), (999 * 4, 4, 77 * 4))),
        ("extent-1 column", base[:, 2:3]),
    ]


@pytest.mark.parametrize("case", [c for c, _ in host_arrays()])
@pytest.mark.parametrize("device", [0, 1])
def test_cupy_attributes_read_as_the_interface(fake_cupy, case, device):
    host = dict(host_arrays())[case]
    x = fake_cupy.ndarray(host, device)
    fast, slow = _ukern._arg(x), _ukern._arg(Foreign(x))
    assert fast == slow
    assert fast[1] == host.dtype.name and fast[3] == host.shape and fast[5] == device
    assert fast[2] == host.__array_interface__["data"][0]
    if host.size:   # extent-1 dimensions may carry any stride
        assert [s for s, n in zip(fast[4], host.shape) if n != 1] == \
            [s for s, n in zip(host.strides, host.shape) if n != 1]
    assert _ukern._arg(x) == fast   # again, with every cache warm
    del x._c_contiguous             # a CuPy without the flag: strides read instead
    assert _ukern._arg(x) == fast


def test_cupy_subclass_and_odd_dtypes_take_the_protocol(fake_cupy):
    class Sub(fake_cupy.ndarray):
        pass
    host = np.arange(4, dtype=np.int32)
    assert _ukern._arg(Sub(host)) == _ukern._arg(fake_cupy.ndarray(host))
    with pytest.raises(TypeError, match="big-endian"):
        _ukern._arg(fake_cupy.ndarray(np.arange(4, dtype=">i4")))
    with pytest.raises(TypeError, match="unsupported array typestr"):
        _ukern._arg(fake_cupy.ndarray(np.array(["a", "b"], dtype="U1")))


def test_cupy_source_and_one_stream_read_per_call(fake_cupy):
    k = ukern.ElementwiseKernel(*SQ)
    x = np.random.default_rng(1).uniform(-1, 1, (6, 5)).astype(np.float32)
    y = x[::-1, ::2].copy()[:, :1]
    want = k.source(x, y)
    before = fake_cupy.cuda.calls
    assert k.source(fake_cupy.ndarray(x), fake_cupy.ndarray(y)) == want
    assert fake_cupy.cuda.calls - before == 1   # CuPy's current stream: once a call, not once an array
    z = np.empty((6, 5), np.float32)
    assert k.source(fake_cupy.ndarray(x), fake_cupy.ndarray(y), fake_cupy.ndarray(z)) == k.source(x, y, z)


SCALARS = [
    np.bool_(True), np.bool_(False),
    np.int8(-128), np.int8(127), np.int8(-3), np.int16(-32768), np.int32(-7), np.int64(-(2 ** 63)),
    np.int64(2 ** 63 - 1), np.uint8(255), np.uint16(65535), np.uint32(2 ** 32 - 1), np.uint64(2 ** 64 - 1),
    np.float16(0.1), np.float16(-65504), np.float16(6e-8), np.float16("inf"), np.float16(-0.0),
    np.float32(-0.0), np.float32(3.4e38), np.float32(1e-45), np.float32("-inf"), np.float32(0.1),
    np.float64(0.1), np.complex64(1 - 2j), np.complex128(-3 + 0.5j),
]


@pytest.mark.parametrize("v", SCALARS, ids=lambda v: f"{type(v).__name__}({v})")
def test_numpy_scalars_keep_their_type_and_bits(v):
    for _ in range(3):   # the first of a type learns it, the next ones take the number protocol
        kind, dtype, raw = _ukern._arg(v)
        if isinstance(v, (float, complex)):   # np.float64 / np.complex128 are Python numbers (weak)
            assert dtype == ""
            continue
        assert dtype == v.dtype.name
        assert raw == v.tobytes(), (raw, v.tobytes())


def test_numpy_nan_scalars_stay_nan():
    for t in (np.float16, np.float32):
        for _ in range(2):
            kind, dtype, raw = _ukern._arg(t("nan"))
            assert np.isnan(np.frombuffer(raw, t)[0]) and dtype == np.dtype(t).name


def test_python_scalars_stay_untyped():
    assert _ukern._arg(2)[0:2] == _ukern._arg(-5)[0:2] and _ukern._arg(2)[1] == ""
    assert _ukern._arg(True)[1] == "" and _ukern._arg(2.5)[1] == ""
    assert _ukern._arg(2)[0] != _ukern._arg(2.5)[0]


# ---- PyTorch: the same through a stand-in torch module ------------------------

class TorchDtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return "torch." + self.name


def make_fake_torch():
    mod = types.ModuleType("torch")
    mod.raw_calls = []
    dtypes = {}

    def raw_stream(device):
        mod.raw_calls.append(device)
        return 0
    mod._C = types.SimpleNamespace(_cuda_getCurrentRawStream=raw_stream)

    class Tensor:
        def __init__(self, host, device=0, requires_grad=False):
            self._host, self._dev, self.requires_grad = host, device, requires_grad
            self.shape = tuple(host.shape)
            self.dtype = dtypes.setdefault(host.dtype.name, TorchDtype(host.dtype.name))

        def data_ptr(self):
            return self._host.__array_interface__["data"][0]

        def get_device(self):
            return self._dev

        def stride(self):
            return tuple(s // self._host.itemsize for s in self._host.strides)

        @property
        def __cuda_array_interface__(self):   # as PyTorch writes it (version 2, no stream)
            if self.requires_grad:
                raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad.")
            h = self._host
            return {"typestr": h.dtype.str, "shape": self.shape, "version": 2,
                    "strides": None if h.flags.c_contiguous else h.strides,
                    "data": (self.data_ptr() if h.size else 0, False)}

        def __dlpack_device__(self):
            return (2, self._dev)
    Tensor.__module__ = "torch"
    mod.Tensor = Tensor
    return mod


@pytest.fixture
def fake_torch(monkeypatch):
    mod = make_fake_torch()
    monkeypatch.setitem(sys.modules, "torch", mod)
    return mod


@pytest.mark.parametrize("case", [c for c, _ in host_arrays() if c not in ("negative strides", "uint8 3-d")])
@pytest.mark.parametrize("device", [0, 1])
def test_torch_attributes_read_as_the_interface(fake_torch, case, device):
    host = dict(host_arrays())[case]
    t = fake_torch.Tensor(host, device)
    fast, slow = _ukern._arg(t), _ukern._arg(Foreign(t))
    assert fast == slow
    assert fast[1] == host.dtype.name and fast[3] == host.shape and fast[5] == device
    assert fast[2] == (host.__array_interface__["data"][0] if host.size else 0)
    assert fake_torch.raw_calls[-1] == device   # the tensor's device's current stream


def test_torch_requires_grad_is_refused_as_the_interface_refuses_it(fake_torch):
    t = fake_torch.Tensor(np.ones(3, np.float32), requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad"):
        _ukern._arg(t)


def test_torch_stream_read_once_a_call(fake_torch):
    k = ukern.ElementwiseKernel(*SQ)
    x = np.random.default_rng(2).uniform(-1, 1, (4, 3)).astype(np.float32)
    before = len(fake_torch.raw_calls)
    assert k.source(fake_torch.Tensor(x), fake_torch.Tensor(x.T.copy().T)) == k.source(x, x.T.copy().T)
    assert len(fake_torch.raw_calls) - before == 1
