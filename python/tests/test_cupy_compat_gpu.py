"""gpu tier: code written for CuPy's ElementwiseKernel / ReductionKernel gives CuPy's
results on ukern (issue 23): texture objects, CuPy's take / scatter / nonzero /
searchsorted / first_nonzero kernels (CArray and CIndexer members, directives, early
returns, identities naming parameters, _j), loop_prep state, raw parameters given
scalars, size= with allocated non-raw outputs, _non_const. Each runs in ukern and in
CuPy on the same arrays and is checked against NumPy. Skips without a GPU or CuPy."""
import numpy as np
import pytest

import ukern
from cupy_defs_common import make
from cupy_defs_core import DEFS as CORE
from test_cupy_compat_cpu import NONZERO, SCATTER_UPDATE, TAKE_CORE

if ukern.device_count() == 0:
    pytest.skip("no CUDA device (ukern.device_count() == 0)", allow_module_level=True)

cp = pytest.importorskip("cupy", reason="CuPy is needed to compare with")

RNG = np.random.default_rng(20261127)


def both(cls, *args, **kw):
    return getattr(cp, cls)(*args, **kw), getattr(ukern, cls)(*args, **kw)


def equal(u, c, want=None):
    assert isinstance(u, cp.ndarray), type(u)
    assert u.dtype == c.dtype and u.shape == c.shape
    cp.testing.assert_array_equal(u, c)
    if want is not None:
        np.testing.assert_array_equal(cp.asnumpy(u), want)


@pytest.mark.parametrize("dims", [(64, 0, 0), (64, 32, 0), (64, 32, 19)])
def test_texture_object_input(dims):
    # CuPy's TestElementwiseKernelTexture, the 1-, 2- and 3-d cases
    from cupy.cuda import runtime
    from cupy.cuda.texture import (ChannelFormatDescriptor, CUDAarray, ResourceDescriptor, TextureDescriptor,
                                   TextureObject)
    width, height, depth = dims
    dim = 3 if depth else 2 if height else 1
    shape = (depth, height, width) if dim == 3 else (height, width) if dim == 2 else (width,)
    data = cp.asarray(RNG.random(shape, dtype=np.float32))
    ch = ChannelFormatDescriptor(32, 0, 0, 0, runtime.cudaChannelFormatKindFloat)
    arr = CUDAarray(ch, width, height, depth)
    arr.copy_from(data)
    res = ResourceDescriptor(runtime.cudaResourceTypeArray, cuArr=arr)
    tex = TextureDescriptor((runtime.cudaAddressModeClamp, runtime.cudaAddressModeClamp),
                            runtime.cudaFilterModePoint, runtime.cudaReadModeElementType)
    texobj = TextureObject(res, tex)
    ops = {
        1: ("T x, U texObj", "T temp = tex1D<T>(texObj, float(i)); y = temp + x;"),
        2: ("T x, U texObj, uint64 width",
            "T temp = tex2D<T>(texObj, (float)(i % width), (float)(i / width)); y = temp + x;"),
        3: ("T x, U texObj, uint64 width, uint64 height",
            "T temp = tex3D<T>(texObj, (float)((i % (width * height)) % width), "
            "(float)((i % (width * height)) / width), (float)((i / (width * height)))); y = temp + x;"),
    }
    ins, op = ops[dim]
    x = cp.arange(data.size, dtype=cp.float32).reshape(shape)
    args = [x, texobj] + ([width] if dim > 1 else []) + ([height] if dim > 2 else [])
    c, u = both("ElementwiseKernel", ins, "T y", op, name="test_tex%dD" % dim)
    equal(u(*args), c(*args), cp.asnumpy(x + data))


def test_take_kernel():
    c, u = both("ElementwiseKernel",
                "raw T a, S indices, int64 ldim_, int64 cdim_, int64 rdim_, int64 index_range_", "T out", TAKE_CORE,
                "cupy_take")
    a = cp.asarray(RNG.standard_normal((5, 6)))
    idx = cp.asarray(RNG.integers(-6, 6, 11))
    # np.take(a, idx, axis=1, mode='wrap'): ldim 5, cdim 11, rdim 1, range 6
    want = np.take(cp.asnumpy(a), cp.asnumpy(idx), axis=1, mode="wrap")
    outs = [cp.full((5, 11), np.nan) for _ in range(2)]
    c(a, idx.reshape(1, 11), 5, 11, 1, 6, outs[0])
    u(a, idx.reshape(1, 11), 5, 11, 1, 6, outs[1])
    equal(outs[1], outs[0], want)


def test_scatter_update_kernel():
    c, u = both("ElementwiseKernel", "T v, S indices, int64 cdim_, int64 rdim_, int64 adim_", "raw T a",
                SCATTER_UPDATE, "cupy_scatter_update")
    v = cp.asarray(RNG.standard_normal(4))
    idx = cp.asarray(np.array([0, -1, 2, 5], np.int64))   # wrapped into 6 rows
    want = np.zeros(6)
    want[np.array([0, 5, 2, 5]) % 6] = cp.asnumpy(v)      # the last write of row 5 is v[3] ...
    a = [cp.zeros(6) for _ in range(2)]
    c(v, idx, 4, 1, 6, a[0])
    u(v, idx, 4, 1, 6, a[1])
    # two writes to row 5 race in CuPy too: compare only the rows written once
    for j in (0, 2):
        assert float(a[0][j]) == float(a[1][j]) == want[j]
    assert float(a[1][5]) in (float(v[1]), float(v[3]))


def test_nonzero_kernel():
    c, u = both("ElementwiseKernel", "T src, S index", "raw U dst", NONZERO, "cupy_nonzero_kernel",
                reduce_dims=False)
    src = cp.asarray((RNG.random((7, 9)) < 0.4).astype(np.float32))
    index = cp.cumsum((src != 0).ravel()).reshape(src.shape).astype(cp.int64)
    n = int(index[-1, -1])
    dst = [cp.full((n, 2), -1, cp.int64) for _ in range(2)]
    c(src, index, dst[0])
    u(src, index, dst[1])
    equal(dst[1], dst[0], np.argwhere(cp.asnumpy(src) != 0))


def test_searchsorted_kernel():
    d = next(d for d in CORE if d["kw"].get("name") == "cupy_searchsorted_kernel")
    bins = cp.asarray(np.sort(RNG.standard_normal(50)))
    x = cp.asarray(np.concatenate([RNG.standard_normal(997), [np.nan, -np.inf, np.inf]]))
    for side_is_right in (False, True):
        c, u = make(cp, d), make(ukern, d)
        yc, yu = c(x, bins, 50, side_is_right, True), u(x, bins, 50, side_is_right, True)
        want = np.searchsorted(cp.asnumpy(bins), cp.asnumpy(x), side="right" if side_is_right else "left")
        equal(yu, yc, want)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_first_nonzero_reduction(axis):
    # cupy/_manipulation/add_remove.py _first_nonzero_krnl: identity `len`, map `_j`
    c, u = both("ReductionKernel", "T data, int64 len", "int64 y", "data == T(0) ? len : _j", "min(a, b)", "y = a",
                "len", "first_nonzero")
    x = cp.asarray((RNG.random((37, 53)) < 0.05).astype(np.float32))
    x[3] = 0
    equal(u(x, x.size, axis=axis), c(x, x.size, axis=axis))


def test_loop_prep_state_per_element():
    # a running value in loop_prep: CuPy's one element per thread gives run == 0 at every element
    c, u = both("ElementwiseKernel", "T x", "T y", "y = x + run; run += 1", "running", loop_prep="T run = 0",
                after_loop="(void)run")
    for shape in [(4099,), (64, 64)]:
        x = cp.asarray(RNG.standard_normal(shape))
        if len(shape) == 2:
            x = x.T
        equal(u(x), c(x), cp.asnumpy(x))


def test_raw_scalars_size_and_non_const():
    # raw int32 given a Python int (CuPy's packbits)
    c, u = both("ElementwiseKernel", "raw T a, raw int32 a_size", "uint8 packed",
                "for (int j = 0; j < 8; ++j) { int k = i * 8 + j; int bit = k < a_size && a[k] != 0; "
                "packed |= bit << (7 - j); }", "cupy_packbits_big")
    a = cp.asarray(RNG.random(21) < 0.5)
    outs = [cp.zeros(3, cp.uint8) for _ in range(2)]
    c(a, 21, outs[0])
    u(a, 21, outs[1])
    equal(outs[1], outs[0], np.packbits(cp.asnumpy(a)))
    # size= with a non-raw output ukern allocates
    c, u = both("ElementwiseKernel", "raw T x", "T y", "y = x[i % x.size()] * 2", "twice")
    x = cp.arange(5, dtype=cp.float32)
    equal(u(x, size=12), c(x, size=12), np.tile(np.arange(5, dtype=np.float32) * 2, 3)[:12])
    # _non_const: the input written back
    c, u = both("ElementwiseKernel", "_non_const T x", "T y", "y = x; x = x * 2", "nonconst")
    xs = [cp.arange(7, dtype=cp.float64) for _ in range(2)]
    equal(u(xs[1]), c(xs[0]), np.arange(7.0))
    equal(xs[1], xs[0], np.arange(7.0) * 2)
