"""The per-chunk work of the Dask example: ukern kernels on CuPy chunks.

This module is imported by every worker (functions that dask ships refer to it by name,
so the kernels are made once per worker process, in that worker's ukern context, and
found in the bundle the worker loaded). Every function takes and returns cupy arrays.
"""
import os
import cupy as cp
import numpy as np

import ukern

# (x - y)^2 with y broadcast along rows: an ElementwiseKernel.
sqdiff = ukern.ElementwiseKernel("T x, T y", "T z", "z = (x - y) * (x - y)", "dask_sqdiff")
# Row norms and plain sums: ReductionKernels.
l2norm = ukern.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "dask_l2norm")
total = ukern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "dask_sum")


# A fused elementwise program (ukern.fuse, NumPy 2 typing: 0.5 stays float32).
@ukern.fuse
def damp(z, x):
    return np.exp(-z * z) * 0.5 + x


def make_block(shape, seed, block_id=None):
    """A chunk of uniform random float32 in [-1, 1), generated on the GPU from the seed
    and the block's position (the same data every time the block is made)."""
    s = seed + 7919 * (block_id[0] if block_id else 0)
    rng = cp.random.default_rng(s)
    return rng.random(shape, dtype=cp.float32) * 2 - 1


def chunk_pipeline(x, y, repeat=1):
    """z = (x - y)^2 (elementwise), f = exp(-z^2) / 2 + x (fused); repeat > 1 feeds f back
    as x that many times (the benchmark's knob for GPU work per task)."""
    f = x
    for _ in range(repeat):
        f = damp(sqdiff(f, y), x)
    return f


def chunk_pipeline_cupy(x, y, repeat=1):
    """chunk_pipeline in plain CuPy (the benchmark's control: how Dask scales without ukern)."""
    f = x
    for _ in range(repeat):
        z = (f - y) ** 2
        f = cp.exp(-z * z) * 0.5 + x
    return f


def row_norms(f):
    return l2norm(f, axis=1)


def sum_chunk(x, axis, keepdims):
    """dask.array.reduction's chunk and aggregate step: the ukern ReductionKernel."""
    return total(x, axis=axis, keepdims=keepdims)


def to_host(x):
    return cp.asnumpy(x)


def reference(x, y, repeat=1):
    """NumPy, in double precision: the row norms and the total of the pipeline."""
    x = x.astype(np.float64)
    f = x
    for _ in range(repeat):
        z = (f - y.astype(np.float64)) ** 2
        f = np.exp(-z * z) * 0.5 + x
    return np.sqrt((f * f).sum(axis=1)), f.sum()


def first_calls(rows=1000, cols=129):
    """The four kernels once each on fresh small arrays, outputs given (no allocation by
    ukern); returns the seconds the ukern calls took (CuPy's start-up is done before).
    What a fresh worker's first task pays for ukern."""
    import time

    x = cp.random.default_rng(1).random((rows, cols), dtype=cp.float32)
    y = cp.random.default_rng(2).random((cols,), dtype=cp.float32)
    z = cp.empty_like(x)
    f = cp.empty_like(x)
    n = cp.empty((rows,), cp.float32)
    t = cp.empty((), cp.float32)
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    sqdiff(x, y, z)
    f = damp(z, x)
    l2norm(f, axis=1, out=n)
    total(f, out=t)
    cp.cuda.Device().synchronize()
    return time.perf_counter() - t0


def worker_stats():
    """This worker's ukern counters and bundles, and the GPU it computes on (PCI bus id,
    CUDA_VISIBLE_DEVICES): for client.run."""
    return {"stats": ukern.cache_stats(), "bundles": ukern.bundles(),
            "gpu": cp.cuda.Device().pci_bus_id, "visible": os.environ.get("CUDA_VISIBLE_DEVICES")}
