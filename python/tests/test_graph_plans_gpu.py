"""gpu tier: ukern's kernels captured into CUDA graphs through CuPy's graph API (ukern's
Python API has no graph calls of its own: a call on a capturing stream becomes graph
nodes): a column sum that takes the split-column strategy (its partials and counters are
allocated, zeroed and freed inside the graph) and elementwise calls that take the rows
plan, replayed several times with new input contents and poisoned outputs, against a
float64 NumPy reference; direct calls of the same kernel object on another stream run at
the same time as the replays and stay right (the graph's workspace is its own).
tests/test_gpu_graph_plans.c reads the captured graphs' nodes to know the strategies.
Skips without a GPU or CuPy.
"""
import numpy as np
import pytest

import ukern

if ukern.device_count() == 0:
    pytest.skip("no CUDA device (ukern.device_count() == 0)", allow_module_level=True)

cp = pytest.importorskip("cupy", reason="CuPy's graph API captures the calls")

RNG = np.random.default_rng(20261127)
REPLAYS = 4


def capture(stream, fn):
    stream.begin_capture()
    try:
        fn()
    finally:
        graph = stream.end_capture()
    return graph


def new_values(a):
    """New float32 contents for a (in place, done before return); their float64 values."""
    v = RNG.uniform(-1.0, 1.0, a.shape).astype(np.float32)
    a.set(v)
    return v.astype(np.float64)


@pytest.mark.parametrize("shape", [(100003, 36), (20001, 256)])
def test_split_column_sum_replayed(shape):
    k = ukern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "pygraph_colsum")
    s = cp.cuda.Stream(non_blocking=True)
    s2 = cp.cuda.Stream(non_blocking=True)
    x = cp.empty(shape, cp.float32)
    y = cp.empty(shape[1], cp.float32)
    xb = cp.empty((shape[0], shape[1] + 3), cp.float32)    # a direct call beside the graph
    yb = cp.empty(shape[1] + 3, cp.float32)
    hx = new_values(x)
    with s:                                                 # warm, and s's own scratch made
        assert k(x, axis=0, out=y) is y
    s.synchronize()
    np.testing.assert_allclose(cp.asnumpy(y), hx.sum(axis=0), rtol=2e-5, atol=2e-5 * np.abs(hx).sum(axis=0).max())
    with s:
        g = capture(s, lambda: k(x, axis=0, out=y))         # CuPy's current stream: the capturing one
    for rep in range(REPLAYS):
        hx, hb = new_values(x), new_values(xb)
        y.fill(np.nan)
        yb.fill(np.nan)
        cp.cuda.Device().synchronize()
        g.launch(stream=s)
        k(xb, axis=0, out=yb, stream=s2)                    # at the same time, on another stream
        s.synchronize()
        s2.synchronize()
        for got, h, what in ((y, hx, "graph"), (yb, hb, "beside")):
            want = h.sum(axis=0)
            tol = 2e-5 * (np.abs(h).sum(axis=0) + np.abs(want))
            err = np.abs(cp.asnumpy(got).astype(np.float64) - want)
            assert np.all(err <= tol), f"replay {rep + 1}, {what}: {int((~(err <= tol)).sum())} columns off"


@pytest.mark.parametrize("rows,cols,column", [(1023, 1025, False), (1024, 1024, True), (1024, 1024, False)])
def test_rows_plan_replayed(rows, cols, column):
    k = ukern.ElementwiseKernel("T x, T y", "T z", "z = x * y + x", "pygraph_rows")
    s = cp.cuda.Stream(non_blocking=True)
    x = cp.empty((rows, cols), cp.float32)
    y = cp.empty((rows, 1) if column else (cols,), cp.float32)
    z = cp.empty((rows, cols), cp.float32)
    assert "template elementwise_rows" in k.source(x, y, z)
    g = capture(s, lambda: k(x, y, z, stream=s))            # cold: compiled inside the capture
    for rep in range(REPLAYS):
        hx, hy = new_values(x), new_values(y)
        z.fill(np.nan)
        cp.cuda.Device().synchronize()
        g.launch(stream=s)
        s.synchronize()
        want = hx * hy + hx
        err = np.abs(cp.asnumpy(z).astype(np.float64) - want)
        tol = 1e-6 * (np.abs(hx * hy) + np.abs(hx))
        assert np.all(err <= tol), f"replay {rep + 1}: {int((~(err <= tol)).sum())} elements off"
