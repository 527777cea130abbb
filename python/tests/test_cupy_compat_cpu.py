"""cpu tier: ElementwiseKernel / ReductionKernel code written for CuPy runs unchanged
(issue 23): CuPy's exception classes and messages (every pytest.raises of CuPy v14.2.0's
test_userkernel.py and test_reduction.py that concerns these classes), texture objects,
raw arrays and _ind with CuPy's CArray / CIndexer members, loop_prep, directives,
scalars for raw parameters, size=, _non_const, names starting with '_', identities that
name parameters. Host arrays describe the calls (source()/precompile(): nothing runs)."""
import re

import numpy as np
import pytest

import ukern

F32 = np.array([1, 2], np.float32)
F32B = np.array([3, 4], np.float32)


def kernel_of(input_raw, output_raw):
    # CuPy's TestElementwiseKernelSize.create_kernel: a no-op kernel with the given raws
    ins = ", ".join("%sfloat32 x%d" % ("raw " if r else "", i) for i, r in enumerate(input_raw))
    outs = ", ".join("%sfloat32 y%d" % ("raw " if r else "", i) for i, r in enumerate(output_raw))
    return ukern.ElementwiseKernel(ins, outs, "", "kernel")


def size_not_allowed():
    return pytest.raises(ValueError, match=r"^Specified \'size\' can")


def size_required():
    return pytest.raises(ValueError, match=r"^Loop size is undecided\.")


# ---- size= and the loop size (CuPy's TestElementwiseKernelSize, case by case) ----------

def test_size_all_raw(arch90):
    for outs in ((False,), (True,)):
        k = kernel_of((True, True), outs)
        k.precompile(F32, F32B, size=2)
        with size_required():
            k.source(F32, F32B)


@pytest.mark.parametrize("ins, outs, args", [
    ((False, False), (False,), (F32, F32B)),
    ((False, False), (True,), (F32, F32B)),
    ((True, False), (False,), (F32, F32B)),
    ((False, True), (False,), (F32, F32B)),
    ((True, False), (True,), (F32, F32B)),
    ((False, True), (True,), (F32, F32B)),
    ((False, False), (False,), (F32, 7)),
    ((False, False), (False,), (7, F32)),
    ((False, False), (True,), (F32, 7)),
    ((False, False), (True,), (7, F32)),
    ((False, False, True), (False,), (F32, 7, F32B)),
    ((False, False, True), (True,), (F32, 7, F32B)),
    ((True,), (False,), (F32, F32B)),       # size decided by the given output
    ((False,), (False,), (7, F32B)),
    ((), (False,), (F32,)),
])
def test_size_not_allowed(ins, outs, args):
    k = kernel_of(ins, outs)
    with size_not_allowed() as e:
        k.source(*args, size=2)
    # ukern's own detail follows CuPy's words
    assert "kernel: size is given (2)" in str(e.value)


def test_size_with_scalars_and_raws(arch90):
    for ins, args in (((True, False), (F32, 7)), ((False, True), (7, F32))):
        for outs in ((False,), (True,)):
            k = kernel_of(ins, outs)
            assert "ndim 1" in k.source(*args, size=2)   # the output is allocated with shape (2,)
            k.precompile(*args, size=2)
            with size_required():
                k.source(*args)


def test_size_decided_by_outputs(arch90):
    kernel_of((True,), (False,)).precompile(F32, F32B)
    kernel_of((False,), (False,)).precompile(7, F32B)
    kernel_of((), (False,)).precompile(F32)
    k = kernel_of((), (True,))
    k.precompile(F32, size=2)
    with size_required():
        k.source(F32)


def test_block_size_and_kernel_name_errors():
    k = ukern.ElementwiseKernel("T x, T y", "T z", "z = x + y")
    with pytest.raises(ValueError):
        k.source(F32, 1, block_size=0)
    with pytest.raises(ValueError, match="Invalid kernel name"):
        ukern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", name="1")
    with pytest.raises(ValueError, match="Invalid kernel name") as e:
        ukern.ElementwiseKernel("T x", "T y", "y = x", name="my-kernel")
    assert str(e.value).startswith("name:1:3: Invalid kernel name 'my-kernel'")


# ---- texture objects --------------------------------------------------------------------

class TextureObject:
    """Stands for cupy.cuda.texture.TextureObject: CuPy passes .ptr (a
    cudaTextureObject_t) by value."""

    def __init__(self, ptr):
        self.ptr = ptr


def test_texture_object_argument(arch90):
    k = ukern.ElementwiseKernel(
        "T x, U texObj, uint64 width", "T y",
        "T temp = tex2D<T>(texObj, (float)(i % width), (float)(i / width)); y = temp + x;", name="test_tex2D")
    x = np.zeros((32, 64), np.float32)
    src = k.source(x, TextureObject(0x1234), 64)
    assert "const cudaTextureObject_t texObj" in src
    k.precompile(x, TextureObject(0x1234), 64)
    with pytest.raises(ValueError, match="take no textures|texture"):
        ukern.ReductionKernel("T x, U t", "T y", "x", "a + b", "y = a", "0").source(x, TextureObject(1))


# ---- raw arrays and _ind: CuPy's CArray / CIndexer members --------------------------------
# CuPy's own take, scatter and nonzero kernels (cupy/_core/_routines_indexing.pyx v14.2.0)

TAKE_CORE = """
using idx_t = decltype(a)::index_t;
idx_t index_range = static_cast<idx_t>(index_range_);
idx_t ldim = static_cast<idx_t>(ldim_);
idx_t cdim = static_cast<idx_t>(cdim_);
idx_t rdim = static_cast<idx_t>(rdim_);

ptrdiff_t out_i = indices % index_range;
if (out_i < 0) out_i += index_range;
if (ldim != 1) out_i += (i / (cdim * rdim)) * index_range;
if (rdim != 1) out_i = out_i * rdim + i % rdim;
out = a[out_i];
"""

SCATTER_UPDATE = """
    using i_idx_t = decltype(i);
    using a_idx_t = decltype(a)::index_t;
    i_idx_t cdim = static_cast<i_idx_t>(cdim_);
    a_idx_t rdim = static_cast<a_idx_t>(rdim_);
    a_idx_t adim = static_cast<a_idx_t>(adim_);

    a_idx_t wrap_indices = indices % adim;
    if (wrap_indices < 0) wrap_indices += adim;
    a_idx_t li = i / (rdim * cdim);
    a_idx_t ri = i % rdim;
    T &out0 = a[(li * adim + wrap_indices) * rdim + ri];
    const T &in1 = v;
    out0 = in1;
"""

NONZERO = """
    if (src != 0){
        for(int j = 0; j < _ind.ndim; j++){
            ptrdiff_t ind[] = {index - 1, j};
            dst[ind] = _ind.get()[j];
        }
    }"""


def take_kernel():
    return ukern.ElementwiseKernel(
        "raw T a, S indices, int64 ldim_, int64 cdim_, int64 rdim_, int64 index_range_", "T out", TAKE_CORE,
        "cupy_take")


def scatter_kernel():
    return ukern.ElementwiseKernel("T v, S indices, int64 cdim_, int64 rdim_, int64 adim_", "raw T a",
                                   SCATTER_UPDATE, "cupy_scatter_update")


def nonzero_kernel():
    return ukern.ElementwiseKernel("T src, S index", "raw U dst", NONZERO, "cupy_nonzero_kernel", reduce_dims=False)


def test_cupy_take_scatter_nonzero_compile(arch90):
    a = np.zeros((5, 6), np.float32)
    idx = np.zeros((4,), np.int64)
    out = np.zeros((4,), np.float32)
    take_kernel().precompile(a, idx, 1, 1, 1, 5, out)
    scatter_kernel().precompile(np.zeros((4,), np.float32), idx, 1, 1, 5, a)
    src = nonzero_kernel().source(np.zeros((3, 4), np.float32), np.zeros((3, 4), np.int64),
                                  np.zeros((5, 2), np.int64))
    # the loop keeps its two axes (reduce_dims=False) and _ind is CuPy's CIndexer over them
    assert "ukern::ew_indexer<2> _ind(_uk_size);" in src
    assert "_ind.set((ptrdiff_t)_uk_j);" in src
    nonzero_kernel().precompile(np.zeros((3, 4), np.float32), np.zeros((3, 4), np.int64), np.zeros((5, 2), np.int64))


def test_carray_members_compile(arch90):
    k = ukern.ElementwiseKernel(
        "raw T x, T y", "T z",
        "const ptrdiff_t *sh = x.shape(), *st = x.strides(); "
        "decltype(x)::index_t n = x.size(); "
        "ptrdiff_t idx[2] = {i % sh[0], 0}; "
        "z = y + x[idx] + x[{idx[0], idx[1]}] + x.data()[0] + decltype(x)::ndim + st[1] + n "
        "+ (decltype(x)::c_contiguous ? 1 : 0)", "carray_members")
    x = np.zeros((6, 8), np.float64)[:, ::2]
    src = k.source(x, np.zeros(7))
    assert "ukern::raw_array<T, 2, false> x" in src
    k.precompile(x, np.zeros(7))


# ---- loop_prep / after_loop: CuPy's ';' and its one element per thread ----------------------

def test_loop_prep_without_semicolon_and_brace_initialisers(arch90):
    k = ukern.ElementwiseKernel("float64 alpha", "float64 w", "w = alpha * N * i + run; run += 1.0",
                                "prep_kernel",
                                loop_prep="const double N { 1.0 / ( _ind.size() - 1 ) }; double run { 0 }",
                                after_loop="(void)run")
    w = np.zeros(1001)
    src = k.source(0.5, w)
    assert "double run { 0 };" in src
    assert "variant: contiguous" in src and "ukern::vec<" not in src
    k.precompile(0.5, w)
    # a strided loop: still one element per thread (no tiles)
    t = np.zeros((64, 64))
    src = ukern.ElementwiseKernel("T x", "T y", "y = x + c++", loop_prep="int c = 0").source(t.T, t)
    assert "variant: strided" in src and "__shared__" not in src


# ---- '#' directives inside the operation ---------------------------------------------------

def test_directives_in_the_operation(arch90):
    k = ukern.ElementwiseKernel("T x", "T y",
                                "#ifdef __HIP_DEVICE_COMPILE__\n  y = -x;\n#else\n  y = x;\n#endif", "dirs")
    src = k.source(F32)
    assert re.search(r"^#ifdef __HIP_DEVICE_COMPILE__$", src, re.M)
    k.precompile(F32)
    with pytest.raises(ValueError, match=r"'#' inside a line"):
        ukern.ElementwiseKernel("T x", "T y", "y = x # 2")


# ---- scalars for raw parameters, _non_const, '_' names --------------------------------------

def test_raw_parameter_takes_a_python_scalar(arch90):
    k = ukern.ElementwiseKernel("raw T a, raw int32 a_size", "uint8 packed",
                                "for (int j = 0; j < 8; ++j) { int k = i * 8 + j; "
                                "int bit = k < a_size && a[k] != 0; packed |= bit << (7 - j); }",
                                "cupy_packbits_big")
    a = np.zeros(20, np.float32)
    src = k.source(a, 20, np.zeros(3, np.uint8))
    assert "raw int32 a_size (int32, scalar) ->" in src
    k.precompile(a, 20, np.zeros(3, np.uint8))
    with pytest.raises(TypeError, match="out of range"):
        k.source(a, 2 ** 40, np.zeros(3, np.uint8))


def test_non_const_and_underscore_names(arch90):
    k = ukern.ElementwiseKernel("_non_const T _x, raw _non_const T w", "T y", "y = _x; _x = 2 * _x; w[0] = 1")
    src = k.source(np.zeros(9), np.zeros(3))
    assert "_uk_p__x[_uk_j] = _x;" in src
    k.precompile(np.zeros(9), np.zeros(3))
    for bad in ("T _ind", "T _uk_x", "T _raw_y", "T i"):
        with pytest.raises(ValueError, match="reserved"):
            ukern.ElementwiseKernel(bad, "T y", "y = 1")


# ---- reductions: identities that name parameters, _j ----------------------------------------

def test_identity_names_a_parameter(arch90):
    # CuPy's cupy/_manipulation/add_remove.py _first_nonzero_krnl (v14.2.0)
    k = ukern.ReductionKernel("T data, int64 len", "int64 y", "data == T(0) ? len : _j", "min(a, b)", "y = a",
                              "len", "first_nonzero")
    x = np.zeros((5, 6), np.float32)
    for axis in (0, 1, None):
        src = k.source(x, 30, axis=axis)
        assert "const long long len = _uk_a.len;" in src
        k.precompile(x, 30, axis=axis)


# ---- CuPy's exception classes and words for the other call errors ---------------------------

def test_call_errors_have_cupy_classes_and_words():
    k = ukern.ElementwiseKernel("T x, T y", "T z", "z = x + y", "kk")
    with pytest.raises(TypeError, match="Wrong number of arguments for kk"):
        k.source(F32)
    with pytest.raises(TypeError, match=r"^Type is mismatched\. kk: input 'y' is float64"):
        k.source(F32, np.zeros(2))
    with pytest.raises(TypeError, match=r"^Type is mismatched\. "):
        ukern.ElementwiseKernel("float32 x", "T z", "z = x").source(np.zeros(2))
    r = ukern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", None, "rr")
    with pytest.raises(ValueError, match="zero-size array to reduction operation rr which has no identity"):
        r.source(np.zeros(0, np.float32))
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        r.source(np.zeros((2, 2), np.float32), axis=(1, -1))
    axis_error = getattr(getattr(np, "exceptions", np), "AxisError")
    for axis in (2, (-3,), (0, 7)):
        with pytest.raises(axis_error, match="out of bounds"):
            r.source(np.ones((2, 2), np.float32), axis=axis)
    with pytest.raises(ValueError, match="cannot specify 'out' as both a positional and keyword argument"):
        r.source(np.ones(3, np.float32), np.zeros((), np.float32), out=np.zeros((), np.float32))
