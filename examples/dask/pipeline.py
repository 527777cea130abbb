"""ukern on Dask: a dask.array pipeline over CuPy chunks, one worker per GPU.

    python pipeline.py make-bundle kernels.ukb          # once, on a machine with a GPU
    python pipeline.py run --bundle kernels.ukb --gpus 2 --check

X (rows x cols, float32, row chunks made on the GPUs) and y (cols,) go through
  z = (x - y)^2                      ukern.ElementwiseKernel  (map_blocks)
  f = exp(-z^2) / 2 + x              ukern.fuse               (map_blocks)
  r = sqrt(sum(f^2, axis=1))         ukern.ReductionKernel    (map_blocks, drop_axis)
  t = sum(f)                         ukern.ReductionKernel    (dask.array.reduction)
and r, t are checked against NumPy in double precision.

make-bundle runs the same graph once on this machine's GPU with the synchronous
scheduler and a private cache directory, then packs every kernel it compiled into one
bundle (ukern.create_bundle). Workers open it through a worker plugin
(ukern.load_bundle): none of them compiles, none loads NVRTC. The workers need this
directory on their PYTHONPATH (dask-cuda's workers inherit the environment).
"""
import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
os.environ["PYTHONPATH"] = HERE + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else "")


try:
    from distributed import WorkerPlugin
except ImportError:  # make-bundle needs no distributed
    WorkerPlugin = object


class LoadBundle(WorkerPlugin):
    """A distributed worker plugin: opens a ukern bundle in each worker, new ones too."""

    name = "ukern-bundle"

    def __init__(self, path):
        self.path = os.path.abspath(path)

    def setup(self, worker):
        import ukern

        ukern.load_bundle(self.path)

    def teardown(self, worker):
        pass


def graph(rows, cols, chunk, seed=26, repeat=1, x=None, y=None, cupy_only=False):
    """The pipeline's dask arrays: x, y, the row norms r and the total t (on the GPUs, as
    CuPy), and the sum of the row norms rs (a second ukern reduction). x, y: given
    (persisted) inputs instead of new ones. cupy_only: the chunk pipeline in plain CuPy
    (the benchmark's control)."""
    import cupy as cp
    import dask.array as da

    import ukern_dask_ops as ops

    f32 = cp.float32
    if x is None:
        x, y = inputs(rows, cols, chunk, seed)
    step = ops.chunk_pipeline_cupy if cupy_only else ops.chunk_pipeline
    f = da.map_blocks(step, x, y[None, :], repeat=repeat, dtype=np.float32,
                      meta=cp.empty((0, 0), f32))
    r = da.map_blocks(ops.row_norms, f, drop_axis=1, dtype=np.float32, meta=cp.empty((0,), f32))
    t = da.reduction(f, ops.sum_chunk, ops.sum_chunk, dtype=np.float32, meta=cp.empty((), f32))
    rs = da.reduction(r, ops.sum_chunk, ops.sum_chunk, dtype=np.float32, meta=cp.empty((), f32))
    return x, y, r, t, rs


def host(a):
    """A dask array of CuPy chunks as one of NumPy chunks."""
    import ukern_dask_ops as ops

    return a.map_blocks(ops.to_host, dtype=a.dtype, meta=np.empty((0,) * a.ndim, a.dtype))


def inputs(rows, cols, chunk, seed=26):
    """x (rows x cols, chunks of `chunk` rows) and y (cols,): float32 made on the GPUs."""
    import cupy as cp
    import dask.array as da

    x = da.map_blocks(_block, seed, chunks=_chunks(rows, cols, chunk), dtype=np.float32,
                      meta=cp.empty((0, 0), cp.float32))
    y = da.map_blocks(_block, seed + 1, chunks=((cols,),), dtype=np.float32, meta=cp.empty((0,), cp.float32))
    return x, y


def spread(client, a):
    """`a` computed with its row chunks placed round-robin over the workers (one GPU each),
    as one dask array again. Dask puts root tasks on whichever worker is free first: on
    fresh GPU workers the first to finish starting CUDA takes most chunks (13 of 16 measured
    on 2 x H200), and the computations follow the data, so an even start needs this."""
    import dask.array as da
    from distributed import wait

    workers = sorted(client.scheduler_info()["workers"])
    blocks = a.to_delayed().ravel()
    futures = [client.compute(b, workers=[workers[i % len(workers)]], allow_other_workers=False)
               for i, b in enumerate(blocks)]
    wait(futures)
    shapes = [(rows,) + a.shape[1:] for rows in a.chunks[0]]
    return da.concatenate([da.from_delayed(f, shape=sh, dtype=a.dtype, meta=a._meta)
                           for f, sh in zip(futures, shapes)])


def _chunks(rows, cols, chunk):
    row = (chunk,) * (rows // chunk) + ((rows % chunk,) if rows % chunk else ())
    return (row, (cols,))


def _block(seed, block_info=None):
    import ukern_dask_ops as ops

    info = block_info[None]
    shape = info["chunk-shape"]
    return ops.make_block(shape, seed, block_id=info["chunk-location"])


def check(x, y, r, t):
    """r, t against NumPy (double) on x, y fetched from the GPUs; raises on a mismatch."""
    import ukern_dask_ops as ops

    xh, yh = (host(a).compute() for a in (x, y))
    want_r, want_t = ops.reference(xh, yh)
    np.testing.assert_allclose(r, want_r, rtol=2e-5, atol=1e-5)
    assert abs(float(t) - want_t) <= 1e-4 * max(1.0, abs(want_t)), (float(t), want_t)
    return {"rows": int(xh.shape[0]), "cols": int(xh.shape[1]), "total": float(t), "total_ref": float(want_t),
            "max_row_err": float(np.max(np.abs(r - want_r)))}


def cluster(gpus, bundle=None, cache_dir=None):
    """A LocalCUDACluster with one worker per GPU and a client; the bundle opened on each."""
    from dask_cuda import LocalCUDACluster
    from distributed import Client

    if cache_dir:
        os.environ["UKERN_CACHE_DIR"] = cache_dir   # workers inherit it
    c = LocalCUDACluster(CUDA_VISIBLE_DEVICES=",".join(str(g) for g in range(gpus)), n_workers=gpus,
                         threads_per_worker=1, dashboard_address=None, silence_logs=40)
    client = Client(c)
    client.wait_for_workers(gpus)
    if bundle:
        client.register_plugin(LoadBundle(bundle))
    return c, client


def make_bundle(out, rows, cols, chunk):
    """Runs the graph here (synchronous scheduler, this GPU, a private cache directory)
    and bundles every kernel that compiled."""
    import dask

    import ukern

    with tempfile.TemporaryDirectory(prefix="ukern-dask-bundle-") as d:
        ukern.configure(cache_dir=d)
        import ukern_dask_ops as ops

        x, y, r, t, rs = graph(rows, cols, chunk)
        dask.compute(host(r), host(t), host(rs), scheduler="synchronous")
        ops.first_calls()
        report = ukern.create_bundle(out, cache_dir=d)
    print(report, end="")
    print("bundle", out, "written")


def run(args):
    import dask

    import ukern_dask_ops as ops

    c, client = cluster(args.gpus, args.bundle, args.cache_dir)
    try:
        x, y, r, t, _ = graph(args.rows, args.cols, args.chunk)
        t0 = time.perf_counter()
        rv, tv = dask.compute(host(r), host(t))
        seconds = time.perf_counter() - t0
        result = {"gpus": args.gpus, "seconds": seconds, "bundle": args.bundle}
        if args.check:
            result.update(check(x, y, rv, tv))
        stats = client.run(ops.worker_stats)
        result["workers"] = stats
        print(json.dumps(result, indent=1))
        if args.check and args.bundle:
            compiled = {w: s["stats"]["compiles"] for w, s in stats.items()}
            if any(compiled.values()):
                print("FAIL: workers compiled although the bundle holds every kernel:", compiled)
                return 1
            hits = [s["bundles"] for s in stats.values()]
            if not all(" 0 hits" not in h and h for h in hits):
                print("FAIL: a worker found nothing in the bundle:", hits)
                return 1
        return 0
    finally:
        client.close()
        c.close()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("make-bundle", "run"):
        s = sub.add_parser(name)
        s.add_argument("--rows", type=int, default=100003)
        s.add_argument("--cols", type=int, default=257)
        s.add_argument("--chunk", type=int, default=8192)
        if name == "make-bundle":
            s.add_argument("out")
        else:
            s.add_argument("--bundle")
            s.add_argument("--gpus", type=int, default=2)
            s.add_argument("--cache-dir", help="the workers' UKERN_CACHE_DIR")
            s.add_argument("--check", action="store_true", help="compare with NumPy; with --bundle, no worker compiles")
    a = p.parse_args(argv)
    if a.cmd == "make-bundle":
        make_bundle(a.out, a.rows, a.cols, a.chunk)
        return 0
    return run(a)


if __name__ == "__main__":
    sys.exit(main())
