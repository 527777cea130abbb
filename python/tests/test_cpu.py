"""cpu tier: definitions, errors, generated source and precompile for a named arch.

Runs everywhere (no GPU); NumPy arrays describe dtypes, shapes and strides for
source() and precompile(), which never touch their data.
"""
import ctypes
import io

import numpy as np
import pytest

import ukern

SQ = ("T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff")


def test_import_and_version():
    assert ukern.__version__ == "0.2.0"
    assert ukern.device_count() >= 0
    for name in ukern.__all__:
        assert hasattr(ukern, name)


def test_elementwise_definition_attributes():
    k = ukern.ElementwiseKernel(*SQ, preamble="// p", no_return=False, return_tuple=True,
                                options=("-DX=1",))
    assert (k.nin, k.nout, k.nargs) == (2, 1, 3)
    assert k.name == "squared_diff" and k.in_params == "T x, T y" and k.out_params == "T z"
    assert k.preamble == "// p" and k.options == ("-DX=1",)
    assert k.return_tuple is True and k.no_return is False and k.reduce_dims is True
    d = ukern.ElementwiseKernel("float32 x", "float32 z, int8 w", "z = x")
    assert d.name == "kernel" and (d.nin, d.nout) == (1, 2)


@pytest.mark.parametrize("in_params,out_params,exc,text", [
    ("T x, raw T", "T z", ValueError, "expected a parameter name after type 'T'"),
    ("T x,, T y", "T z", ValueError, "in_params:1:"),
    ("floot32 x", "T z", TypeError, "floot32"),
    ("T x", "T x", ValueError, "x"),
    ("T i", "T z", ValueError, "i"),
    ("T _uk_x", "T z", ValueError, "_uk_x"),
])
def test_elementwise_definition_errors(in_params, out_params, exc, text):
    with pytest.raises(exc) as ei:
        ukern.ElementwiseKernel(in_params, out_params, "z = x", "k")
    assert text in str(ei.value)
    assert ei.value.status.startswith("UK_ERR_")


def test_definition_error_has_caret():
    with pytest.raises(ValueError) as ei:
        ukern.ElementwiseKernel("T x, raw T", "T z", "z = x", "k")
    lines = str(ei.value).splitlines()
    assert lines[0].startswith("in_params:1:11:")
    assert lines[1].strip() == "T x, raw T" and lines[2].strip() == "^"
    assert ei.value.status == "UK_ERR_SYNTAX"


def test_bad_kernel_name():
    with pytest.raises(ValueError):
        ukern.ElementwiseKernel("T x", "T z", "z = x", "1bad")
    with pytest.raises(ValueError):
        ukern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "not a name")


def test_constructor_argument_types():
    with pytest.raises(TypeError):
        ukern.ElementwiseKernel("T x", "T z")
    with pytest.raises(TypeError):
        ukern.ElementwiseKernel("T x", "T z", "z = x", options="-O3")
    with pytest.raises(TypeError):
        ukern.ElementwiseKernel(1, "T z", "z = x")


def test_call_argument_checks():
    k = ukern.ElementwiseKernel(*SQ)
    x = np.ones(5, np.float32)
    with pytest.raises(TypeError, match="Wrong number of arguments"):
        k.source(x)
    with pytest.raises(TypeError, match="unexpected keyword"):
        k.source(x, x, bogus=1)
    with pytest.raises(ValueError, match="block_size"):
        k.source(x, x, block_size=2048)
    with pytest.raises(ValueError, match="cannot specify 'out' as both"):  # CuPy's class and words
        k.source(x, x, x, out=x)
    with pytest.raises(TypeError, match="unsupported argument type"):
        k.source(x, "text")
    # A real call refuses host memory before any device work.
    with pytest.raises(TypeError, match="CUDA"):
        k(x, x)


def test_reduction_definition_attributes():
    r = ukern.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", 0, "l2norm")
    assert r.identity == "0" and r.name == "l2norm" and r.reduce_type is None
    assert (r.nin, r.nout) == (1, 1)
    r2 = ukern.ReductionKernel("T x", "T y", "x", "max(a, b)", "y = a", None)
    assert r2.identity is None and r2.name == "reduce_kernel"
    with pytest.raises(TypeError):
        ukern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", reduce_type=3)


def test_reduction_block_reduce_cub(arch90):
    """block_reduce='cub': cub::BlockReduce as the block combine, its own program
    (and cache entry); anything but 'ukern' / 'cub' is a ValueError."""
    args = ("T x", "T y", "x", "a + b", "y = a", "0", "bsum")
    a = np.zeros((33, 4097), np.float32)
    plain = ukern.ReductionKernel(*args).source(a, axis=1)
    assert plain.startswith("#include <ukern/reduction.cuh>\n") and "cub" not in plain
    assert ukern.ReductionKernel(*args, block_reduce="ukern").source(a, axis=1) == plain
    r = ukern.ReductionKernel(*args, block_reduce="cub")
    src = r.source(a, axis=1)
    assert src.startswith("#define UKERN_RED_BLOCK_CUB 1\n#include <cub/block/block_reduce.cuh>\n")
    assert "// block combine: cub::BlockReduce (block_reduce = cub)" in src
    before = ukern.cache_stats()["compiles"]
    ukern.ReductionKernel(*args).precompile(a, axis=1)
    r.precompile(a, axis=1)                       # not the default's entry: compiles again
    assert ukern.cache_stats()["compiles"] == before + 2 or ukern.cache_stats()["disk_hits"] > 0
    for bad in ("CUB", "warp", ""):
        with pytest.raises(ValueError, match="block_reduce must be 'ukern' \\(the default\\) or 'cub'"):
            ukern.ReductionKernel(*args, block_reduce=bad)
    with pytest.raises(TypeError):
        ukern.ReductionKernel(*args, block_reduce=1)


def test_elementwise_source_variants(arch90):
    k = ukern.ElementwiseKernel(*SQ)
    a = np.zeros((3, 5), np.float32)
    src = k.source(a, a)
    assert "squared_diff" in src and "float32" in src
    # negative and broadcast strides, 0-d, zero-size and a scalar all generate code
    assert "rows" in k.source(a[::-1, ::2], a[:1, :3]).splitlines()[2]
    assert k.source(np.zeros((), np.float64), 2.5).count("double") >= 1
    assert k.source(np.zeros((0, 7), np.float32), 1.0)
    assert "int32" in k.source(np.zeros(7, np.int32), np.int32(3))


def test_scalar_rules(arch90):
    k = ukern.ElementwiseKernel("uint8 x, uint8 y", "uint8 z", "z = x + y", "add8")
    x = np.zeros(9, np.uint8)
    k.source(x, 200)                      # untyped: fits uint8
    with pytest.raises(TypeError):
        k.source(x, 300)                  # untyped: out of range
    k.source(x, np.int64(300))            # typed: C conversion
    with pytest.raises(TypeError, match="U"):
        ukern.ElementwiseKernel("T x, U y", "T z", "z = x", "k").source(x, 1)


def test_elementwise_precompile_fills_cache(arch90):
    k = ukern.ElementwiseKernel(*SQ)
    a = np.zeros(1001, np.float32)
    before = ukern.cache_stats()
    k.precompile(a, a)
    k.precompile(a, a)
    after = ukern.cache_stats()
    assert after["compiles"] == before["compiles"] + 1
    assert after["memory_hits"] >= before["memory_hits"] + 1


def test_reduction_source_and_precompile(arch90):
    r = ukern.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
    a = np.zeros((33, 17), np.float64)
    src = r.source(a, axis=1, keepdims=True)
    assert "l2norm" in src and "double" in src
    with pytest.raises(ValueError):
        r.source(a, axis=(1, 1))
    with pytest.raises(ValueError):
        r.source(a, axis=5)
    with pytest.raises(TypeError):
        r.source(a, axis="x")
    r.precompile(a, axis=(0,))
    assert ukern.cache_stats()["compiles"] >= 1


def test_reduction_empty_without_identity(arch90):
    r = ukern.ReductionKernel("T x", "T y", "x", "max(a, b)", "y = a", None, "mx")
    with pytest.raises(ValueError):
        r.source(np.zeros((0, 3), np.float32), axis=0)


RAW = r'''
extern "C" __global__ void scale(const float* x, float* y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}
template <typename T> __global__ void fill(T* y, T v) { y[threadIdx.x] = v; }
__device__ int counter[4];
'''


def test_raw_module_compile_with_arch(arch90):
    m = ukern.RawModule(code=RAW, options=("-std=c++17",), name_expressions=("fill<float>", "fill<int>"))
    log = io.StringIO()
    m.compile(log_stream=log)
    assert m.get_lowered_name("fill<float>").startswith("_Z")
    assert m.name_expressions == ("fill<float>", "fill<int>")
    assert m.options == ("-std=c++17",)


def test_raw_module_compile_error(arch90):
    m = ukern.RawModule(code="__global__ void f( { }")
    with pytest.raises(ukern.CompileException) as ei:
        m.compile()
    assert "error" in ei.value.log and "__global__ void f( { }" in ei.value.log
    assert ei.value.status == "UK_ERR_COMPILE" and ei.value.log in str(ei.value)


def test_raw_module_arguments():
    with pytest.raises(TypeError, match="Exactly one"):
        ukern.RawModule()
    with pytest.raises(TypeError, match="Exactly one"):
        ukern.RawModule(code="x", path="y")
    with pytest.raises(ValueError, match="Invalid backend 'clang'"):
        ukern.RawModule(code="x", backend="clang")


def test_raw_kernel_compile_and_launch_without_gpu(arch90):
    k = ukern.RawKernel(RAW, "scale")
    assert k.name == "scale" and k.code == RAW
    k.compile()
    if ukern.device_count() == 0:
        with pytest.raises(ukern.CUDADriverError) as ei:
            k((1,), (32,), (None, None, np.float32(2), np.int32(0)))
        assert ei.value.status == "UK_ERR_NO_DEVICE"
        assert 0 < k.num_regs <= 255  # read from the cubin without a device
        with pytest.raises(ukern.CUDADriverError, match="the cubin does not state ptx_version"):
            k.ptx_version


def test_raw_kernel_call_argument_checks(arch90):
    k = ukern.RawKernel(RAW, "scale")
    with pytest.raises(ValueError, match="grid"):
        k((1, 1, 1, 1), (32,), ())
    with pytest.raises(TypeError):
        k((1,), (32,))


def test_array_type_is_not_constructible():
    with pytest.raises(TypeError):
        ukern.Array()


def test_configure_checks():
    with pytest.raises(ValueError):
        ukern.configure(arch=-1)
    with pytest.raises(TypeError):
        ukern.configure(90)
    ukern.configure()


def test_extension_is_stable_abi():
    import ukern._ukern as ext
    assert ext.__file__.endswith(".abi3.so")


def test_gil_released_during_compile(arch90):
    import threading
    import uuid
    code = f"// {uuid.uuid4()}\nextern \"C\" __global__ void k(float* y) {{ y[threadIdx.x] = 1.0f; }}\n"
    m = ukern.RawModule(code=code)
    done = threading.Event()
    t = threading.Thread(target=lambda: (m.compile(), done.set()))
    spins = 0
    t.start()
    while not done.is_set():
        spins += 1
    t.join()
    assert done.is_set()
    assert spins > 1000, spins  # the main thread ran while NVRTC compiled


class _HostDLPack:
    """A DLPack-only array on the host (device type 1)."""

    def __dlpack__(self, stream=None, **kw):
        raise AssertionError("a host array must be refused before __dlpack__")

    def __dlpack_device__(self):
        return (1, 0)


def test_dlpack_host_device_is_refused():
    k = ukern.ElementwiseKernel(*SQ)
    with pytest.raises(TypeError, match="DLPack device type 1"):
        k(_HostDLPack(), 1.0)
    with pytest.raises(TypeError, match="unsupported argument type"):
        k(object(), 1.0)


class _Stream:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class _ProtocolStream:
    def __cuda_stream__(self):
        return (0, 0)


class _IntStream:
    def __int__(self):
        return 0


@pytest.mark.parametrize("stream", [0, 1, _Stream(ptr=0), _Stream(cuda_stream=0), _ProtocolStream(), _IntStream()])
def test_stream_objects_are_read(stream, arch90):
    k = ukern.ElementwiseKernel(*SQ)
    # Without a GPU the call fails after the stream was read, on the host array or the device.
    with pytest.raises((TypeError, ukern.CUDADriverError)) as ei:
        k(np.ones(3, np.float32), 1.0, stream=stream)
    assert "stream must be" not in str(ei.value)


def test_bad_stream_object():
    k = ukern.ElementwiseKernel(*SQ)
    with pytest.raises(TypeError, match="stream must be"):
        k(np.ones(3, np.float32), 1.0, stream="s")


# ---- negative strides through the array protocols --------------------------

class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class _FakeCudaDLPack:
    """A CUDA DLPack producer over a fake pointer (source() never reads data).
    strides are in elements as the producer writes them, wrapped to int64."""

    def __init__(self, shape, strides):
        n = len(shape)
        self.shape = (ctypes.c_int64 * n)(*shape)
        self.strides = (ctypes.c_int64 * n)(*[ctypes.c_int64(s).value for s in strides])
        self.t = _DLManagedTensor()
        self.t.dl_tensor.data = 0x10000
        self.t.dl_tensor.device = _DLDevice(2, 0)
        self.t.dl_tensor.ndim = n
        self.t.dl_tensor.dtype = _DLDataType(2, 64, 1)  # float64
        self.t.dl_tensor.shape = self.shape
        self.t.dl_tensor.strides = self.strides

    def __dlpack__(self, stream=None, **kw):
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self.t), b"dltensor", None)

    def __dlpack_device__(self):
        return (2, 0)


class _FakeCAI:
    def __init__(self, shape, strides):
        self.__cuda_array_interface__ = {"shape": shape, "strides": strides, "typestr": "<f8",
                                         "data": (0x10000, False), "version": 3}


class _FakeReadOnlyCAI:
    def __init__(self, readonly, shape=(5, 3)):
        self.__cuda_array_interface__ = {"shape": shape, "strides": None, "typestr": "<f4",
                                         "data": (0x20000, readonly), "version": 3}


def test_read_only_output_is_refused(arch90):
    k = ukern.ElementwiseKernel(*SQ)
    ro, rw = _FakeReadOnlyCAI(True), _FakeReadOnlyCAI(False)
    src = k.source(ro, ro, rw)   # read-only inputs are fine
    assert "squared_diff" in src
    with pytest.raises(ValueError, match=r"^squared_diff: output 0 \(argument 2\) is read-only"):
        k.source(rw, rw, ro)
    with pytest.raises(ValueError, match=r"^squared_diff: output 0 \(out=\) is read-only"):
        k.source(rw, rw, out=ro)
    r = ukern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "rsum")
    with pytest.raises(ValueError, match=r"^rsum: output 0 \(out=\) is read-only"):
        r.source(rw, axis=1, out=_FakeReadOnlyCAI(True, (5,)))
    assert "rsum" in r.source(rw, axis=1, out=_FakeReadOnlyCAI(False, (5,)))


def test_negative_strides_through_protocols(arch90):
    k = ukern.ElementwiseKernel(*SQ)
    ref = k.source(np.zeros((3, 8))[:, ::-2], 0.5)
    assert "rows" in ref.splitlines()[2]
    assert k.source(_FakeCAI((3, 4), (64, -16)), 0.5) == ref
    assert k.source(_FakeCudaDLPack((3, 4), (8, -2)), 0.5) == ref
    # CuPy <= 14 divides the byte stride -16 by an unsigned item size: 2**61 - 2
    assert k.source(_FakeCudaDLPack((3, 4), (8, (2**64 - 16) // 8)), 0.5) == ref
    with pytest.raises(ValueError, match="overflows in bytes"):
        k.source(_FakeCudaDLPack((3, 4), (8, 2**61 + 3)), 0.5)   # not a wrapped multiple
