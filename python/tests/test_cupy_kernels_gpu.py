"""gpu tier: CuPy's own ElementwiseKernel / ReductionKernel definitions (cupy_defs_*.py,
read from CuPy v14.2.0's source) run in ukern and in CuPy on the same arrays and give the
same dtypes, shapes and values. Only the entries marked gpu=True run here: those with no
raw indexing and no data-dependent loops, safe on arbitrary data. Skips without a GPU or
without CuPy."""
import numpy as np
import pytest

import ukern
from cupy_defs_common import call_args, label, make
from cupy_defs_core import DEFS as CORE
from cupy_defs_signal import DEFS as SIGNAL

if ukern.device_count() == 0:
    pytest.skip("no CUDA device (ukern.device_count() == 0)", allow_module_level=True)

cp = pytest.importorskip("cupy", reason="CuPy is needed to compare with")

# Differences on purpose (docs/SEMANTICS.md): ukern's non-raw inputs are values, not
# references into the array, so `&x` is not the element's address.
DIFFERENT = {"cupy_get_memory_ptrs"}

DEFS = [d for d in SIGNAL + CORE if d["gpu"] and not any(n in label(d) for n in DIFFERENT)]


def tolerance(dtype):
    """Relative tolerance: 0 (exact) for integers and bool; same formulas in CUDA's
    math library, so only reduction order and complex helpers differ a little."""
    if dtype.kind not in "fc":
        return 0
    double = dtype.itemsize == (8 if dtype.kind == "f" else 16)
    return (1e-11 if dtype.kind == "f" else 1e-9) if double else 2e-5


def check_same(u, c, what):
    u, c = cp.asnumpy(u), cp.asnumpy(c)
    assert u.dtype == c.dtype and u.shape == c.shape, what
    rtol = tolerance(u.dtype)
    if rtol:
        np.testing.assert_allclose(u, c, rtol=rtol, atol=1e-300, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(u, c, err_msg=what)


@pytest.mark.parametrize("n", [1, 7, 1000, 4099])
@pytest.mark.parametrize("d", DEFS, ids=label)
def test_cupy_kernel_matches_cupy(d, n):
    rng = np.random.default_rng(20261127 + n)
    ins, outs, size = call_args(d, n, rng)
    kw = {} if size is None else {"size": size}
    to_dev = lambda v: cp.asarray(v) if isinstance(v, np.ndarray) else v  # noqa: E731
    cin, uin = [to_dev(v) for v in ins], [to_dev(v) for v in ins]
    # outputs given to both, poisoned alike: what the kernel leaves alone must agree too
    cout, uout = [], []
    for o in outs:
        p = np.full(o.shape, 7, o.dtype) if o.dtype.kind not in "fc" else np.full(o.shape, np.nan, o.dtype)
        cout.append(cp.asarray(p))
        uout.append(cp.asarray(p))
    c = make(cp, d)(*cin, *cout, **kw)
    u = make(ukern, d)(*uin, *uout, **kw)
    cp.cuda.Device().synchronize()
    if d["kind"] == "red":
        check_same(u, c, label(d))
    for j, (a, b) in enumerate(zip(uout, cout)):
        check_same(a, b, "%s output %d" % (label(d), j))
    # inputs are untouched (or changed alike)
    for j, (a, b) in enumerate(zip(uin, cin)):
        if isinstance(a, cp.ndarray):
            check_same(a, b, "%s input %d" % (label(d), j))
