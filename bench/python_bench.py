#!/usr/bin/env python3
"""ukern's Python package against CuPy, in one run on one GPU.

1. Host cost per call (1-element arrays, asynchronous; batches of ukern's and
   CuPy's calls alternate, so that a busy host weighs on both alike; median of 20):
   ElementwiseKernel (allocated output), ReductionKernel (full sum),
   RawKernel and fuse, ukern's classes beside CuPy's on the same arrays.
   Target: no more than CuPy's in the same run. bench/tools/python_host_breakdown.py
   splits ukern's cost into its parts.
2. Kernel time (CUDA events, 5 warm-ups, median of 30): the C bench's
   elementwise and reduction cases, run from Python through ukern and CuPy.

Usage: python3 bench/python_bench.py [out.json] [--quick]
Needs the package on PYTHONPATH (e.g. build/python) and CuPy.
"""
import json
import os
import sys
import time

import cupy as cp
import numpy as np

import ukern

QUICK = "--quick" in sys.argv
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cupy_bench  # noqa: E402  (the CuPy companion's timing protocol, shared)

if QUICK:
    cupy_bench.REPS, cupy_bench.WARM = 10, 3
gpu_ms = cupy_bench.gpu_ms
rows = []


def host_pair_us(fu, fc):
    """Per-call host cost of fu and fc (us), their batches alternating."""
    n, batches = (100, 10) if QUICK else (1000, 20)
    for _ in range(200):
        fu()
        fc()
    times = ([], [])
    for _ in range(batches):
        for fn, t in ((fu, times[0]), (fc, times[1])):
            cp.cuda.Device().synchronize()
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            t.append((time.perf_counter() - t0) / n * 1e6)
    cp.cuda.Device().synchronize()
    return float(np.median(times[0])), float(np.median(times[1]))


def rand(shape, dtype, seed=1):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    v = cp.asarray(rng.uniform(0.5, 2.0, min(n, 1 << 20)).astype(np.float64))
    return cp.tile(v, -(-n // v.size))[:n].reshape(shape).astype(dtype)


SQ = ("T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff")
SUM = ("T x", "T y", "x", "a + b", "y = a", "0", "sum_k")
RAW = r'''extern "C" __global__ void scale(const float* x, float* y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}'''


def check(u, c, rtol):
    if isinstance(u, tuple):
        u = u[0]
    assert u.dtype == c.dtype and u.shape == c.shape, (u.dtype, c.dtype, u.shape, c.shape)
    cp.testing.assert_allclose(u.astype(cp.float64), c.astype(cp.float64), rtol=rtol)


def host_costs():
    x, y = rand((1,), cp.float32), rand((1,), cp.float32, 2)
    yo = cp.empty(1, cp.float32)
    cases = [
        ("ElementwiseKernel (x-y)^2 f32, 1 element", "ElementwiseKernel", SQ, lambda k: k(x, y)),
        ("ReductionKernel sum f32, 1 element", "ReductionKernel", SUM, lambda k: k(x)),
        ("RawKernel scale, 1 element", "RawKernel", (RAW, "scale"),
         lambda k: k((1,), (32,), (x, yo, np.float32(2), np.int32(1)))),
    ]
    pairs = [(name, getattr(ukern, cls)(*args), getattr(cp, cls)(*args), call) for name, cls, args, call in cases]
    if hasattr(ukern, "fuse"):
        pairs.append(("fuse a*x+y f32, 1 element", ukern.fuse(lambda a, x, y: a * x + y),
                      cp.fuse(kernel_name="saxpy")(lambda a, x, y: a * x + y), lambda k: k(cp.float32(2), x, y)))
    for name, ku, kc, call in pairs:
        u, c = host_pair_us(lambda: call(ku), lambda: call(kc))
        rows.append({"table": "host", "case": name, "ukern_us": round(u, 2), "cupy_us": round(c, 2),
                     "ukern/cupy": round(u / c, 3)})


def kernel_times():
    N = 1 << (24 if QUICK else 28)
    S = 1 << (12 if QUICK else 14)
    ew = ukern.ElementwiseKernel(*SQ), cp.ElementwiseKernel(*SQ)
    red = ukern.ReductionKernel(*SUM), cp.ReductionKernel(*SUM)

    def ew_case(name, x, y, nbytes):
        check(ew[0](x, y), ew[1](x, y), 4e-3 if x.dtype == cp.float16 else 1e-6)
        add(name, lambda: ew[0](x, y), lambda: ew[1](x, y), nbytes)

    def red_case(name, x, axis):
        check(red[0](x, axis=axis), red[1](x, axis=axis), 1e-3)
        add(name, lambda: red[0](x, axis=axis), lambda: red[1](x, axis=axis), x.nbytes)

    def add(name, fu, fc, nbytes):
        u, c = gpu_ms(fu), gpu_ms(fc)
        rows.append({"table": "kernel", "case": name, "ukern_ms": round(u, 4), "cupy_ms": round(c, 4),
                     "speedup": round(c / u, 2), "ukern_TBps": round(nbytes / u / 1e9, 2)})

    for dt, n in (("float32", N), ("float16", N), ("float64", N // 2), ("complex64", N // 2)):
        x, y = rand((n,), dt), rand((n,), dt, 2)
        ew_case(f"elementwise (x-y)^2 {dt} {n}", x, y, 3 * x.nbytes)
        del x, y
    X = rand((S, S), cp.float32)
    row_v, col_v = rand((S,), cp.float32, 3), rand((S, 1), cp.float32, 4)
    ew_case(f"broadcast row {S}^2 f32", X, row_v, 2 * X.nbytes)
    ew_case(f"broadcast column {S}^2 f32", X, col_v, 2 * X.nbytes)
    Y = rand((S, S), cp.float32, 5)
    ew_case(f"strided X[:, ::2] {S}^2 f32", X[:, ::2], Y[:, ::2], 3 * X.nbytes // 2)
    ew_case(f"one operand transposed {S}^2 f32", X, Y.T, 3 * X.nbytes)
    del Y
    if hasattr(ukern, "fuse"):
        x, y = rand((N,), cp.float32), rand((N,), cp.float32, 2)
        fu, fc = ukern.fuse(lambda a, x, y: a * x + y), cp.fuse(kernel_name="saxpy")(lambda a, x, y: a * x + y)
        check(fu(cp.float32(2), x, y), fc(cp.float32(2), x, y), 1e-6)
        add(f"fuse a*x+y f32 {N}", lambda: fu(cp.float32(2), x, y), lambda: fc(cp.float32(2), x, y), 3 * x.nbytes)
        du = ukern.fuse(lambda x, y: np.sum((x - y) * (x - y), axis=-1))
        dc = cp.fuse(kernel_name="dist")(lambda x, y: cp.sum((x - y) * (x - y), axis=-1))
        Xf, Yf = x.reshape(S, -1), y.reshape(S, -1)
        check(du(Xf, Yf), dc(Xf, Yf), 1e-3)
        add(f"fuse sum((x-y)^2, axis=-1) {Xf.shape} f32", lambda: du(Xf, Yf), lambda: dc(Xf, Yf), 2 * Xf.nbytes)
        del x, y, Xf, Yf
    red_case(f"sum full f32 {N}", rand((N,), cp.float32), None)
    red_case(f"sum axis=1 {S}^2 f32", X, 1)
    red_case(f"sum axis=0 {S}^2 f32", X, 0)
    del X
    red_case(f"sum axis=1 ({N // 16}, 16) f32", rand((N // 16, 16), cp.float32), 1)
    red_case(f"sum axis=0 (16, {N // 16}) f32", rand((16, N // 16), cp.float32), 0)


def table():
    dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"\n## ukern Python vs CuPy {cp.__version__} on {dev} (one run)\n")
    print("| host cost per call | ukern us | CuPy us | ukern/CuPy |\n|---|---|---|---|")
    for r in rows:
        if r["table"] == "host":
            print(f"| {r['case']} | {r['ukern_us']} | {r['cupy_us']} | {r['ukern/cupy']} |")
    print("\n| kernel time (median) | ukern ms | CuPy ms | CuPy/ukern | ukern TB/s |\n|---|---|---|---|---|")
    for r in rows:
        if r["table"] == "kernel":
            print(f"| {r['case']} | {r['ukern_ms']} | {r['cupy_ms']} | {r['speedup']}x | {r['ukern_TBps']} |")


def main():
    out = next((a for a in sys.argv[1:] if not a.startswith("--")), None)
    host_costs()
    kernel_times()
    if out:
        with open(out, "w") as f:
            json.dump({"cupy": cp.__version__, "ukern": ukern.__version__, "rows": rows}, f, indent=1)
    table()


if __name__ == "__main__":
    main()
