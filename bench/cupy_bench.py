#!/usr/bin/env python3
"""CuPy companion to ukern's benchmarks: the same cases, same protocol
(CUDA events, warm-ups, median of >= 30 runs, random non-zero data), run in the
same device call so that ratios compare like with like. Writes JSON (argv[1])
and prints a table last."""
import json
import subprocess
import sys
import time

import cupy as cp
import numpy as np

REPS, WARM = 30, 5
rows = []


def gpu_ms(fn):
    for _ in range(WARM):
        fn()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(REPS):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end))
    return float(np.median(times))


def host_us(fn, n=20000):
    for _ in range(200):
        fn()
    cp.cuda.Device().synchronize()
    batches = []
    for _ in range(20):
        t0 = time.perf_counter()
        for _ in range(n // 20):
            fn()
        batches.append((time.perf_counter() - t0) / (n // 20) * 1e6)
        cp.cuda.Device().synchronize()
    return float(np.median(batches))


def row(case, value, unit, extra=None):
    r = {"case": case, "cupy": value, "unit": unit}
    if extra:
        r.update(extra)
    rows.append(r)


def raw_kernel_cases():
    src = r'''extern "C" __global__ void tiny(const float* x, float* y, long long n, float a) {
      if (n < 0) y[0] = x[0] * a; }'''
    k = cp.RawKernel(src, "tiny")
    x = cp.ones(1, cp.float32)
    y = cp.empty(1, cp.float32)
    n = np.int64(1)
    a = np.float32(2)
    row("RawKernel launch host cost", host_us(lambda: k((1,), (32,), (x, y, n, a))), "us")


def elementwise_cases():
    sq = cp.ElementwiseKernel("T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff_bench")
    n = 1 << 28
    rs = cp.random.RandomState(1)
    for name in ["float32", "float16", "float64", "complex64", "int8"]:
        dt = np.dtype(name)
        if dt.kind == "c":
            x = (rs.random_sample(n) + 1j * rs.random_sample(n) + 0.5).astype(dt)
            y = (rs.random_sample(n) + 1j * rs.random_sample(n) + 0.25).astype(dt)
        elif dt.kind == "i":
            x = rs.randint(1, 100, n).astype(dt)
            y = rs.randint(1, 100, n).astype(dt)
        else:
            x = (rs.random_sample(n) + 0.5).astype(dt)
            y = (rs.random_sample(n) + 0.25).astype(dt)
        z = cp.empty_like(x)
        ms = gpu_ms(lambda: sq(x, y, z))
        gbs = 3 * x.nbytes / ms / 1e6
        row(f"elementwise (x-y)^2 {name} 2^28", ms, "ms", {"GB/s": gbs})
        del x, y, z
    m = 16384
    X = rs.random_sample((m, m), dtype=np.float32) + 0.5
    r = rs.random_sample((m,), dtype=np.float32) + 0.25
    c = rs.random_sample((m, 1), dtype=np.float32) + 0.25
    Z = cp.empty_like(X)
    row("broadcast row 16384^2 f32", gpu_ms(lambda: sq(X, r, Z)), "ms")
    row("broadcast column 16384^2 f32", gpu_ms(lambda: sq(X, c, Z)), "ms")
    Y = rs.random_sample((m, m), dtype=np.float32) + 0.25
    row("transposed operand 16384^2 f32", gpu_ms(lambda: sq(X, Y.T, Z)), "ms")
    Zs = cp.empty((m, m // 2), cp.float32)
    row("strided views X[:, ::2] f32", gpu_ms(lambda: sq(X[:, ::2], Y[:, ::2], Zs)), "ms")
    del X, Y, Z, Zs
    one_x = cp.ones(1, cp.float32)
    one_y = cp.ones(1, cp.float32)
    one_z = cp.empty(1, cp.float32)
    row("elementwise host cost, 1 element", host_us(lambda: sq(one_x, one_y, one_z)), "us")
    # first call, cold: a kernel CuPy has never compiled (unique name + body)
    code = ("import cupy as cp, time\nx = cp.ones(4, cp.float32)\ncp.cuda.Device().synchronize()\n"
            "k = cp.ElementwiseKernel('T x', 'T z', 'z = x * %d.5f', 'cold_%d')\n"
            "t0 = time.perf_counter(); k(x); cp.cuda.Device().synchronize()\n"
            "print((time.perf_counter() - t0) * 1e3)\n")
    tag = int(time.time() * 1000) % 1000000
    out = subprocess.run([sys.executable, "-c", code % (tag, tag)], capture_output=True, text=True)
    try:
        row("elementwise first call, cold", float(out.stdout.strip().splitlines()[-1]), "ms")
    except (ValueError, IndexError):
        row("elementwise first call, cold", -1, "ms", {"error": out.stderr[-300:]})


def reduction_cases():
    rs = cp.random.RandomState(2)
    n = 1 << 28
    s = cp.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "sum_bench")
    l2 = cp.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm_bench")
    x = rs.random_sample(n, dtype=np.float32) + 0.5
    row("reduction full sum f32 2^28", gpu_ms(lambda: s(x)), "ms")
    row("reduction L2 norm f32 2^28", gpu_ms(lambda: l2(x)), "ms")
    X = x.reshape(16384, 16384)
    row("reduction rows (axis=1) 16384^2 f32", gpu_ms(lambda: s(X, axis=1)), "ms")
    row("reduction columns (axis=0) 16384^2 f32", gpu_ms(lambda: s(X, axis=0)), "ms")
    for k in [2, 4, 16, 64, 256, 4096]:
        row(f"reduction short inner axis (N/{k}, {k})", gpu_ms(lambda: s(x.reshape(n // k, k), axis=1)), "ms")
    for k in [2, 16, 128]:
        row(f"reduction few outer rows ({k}, N/{k})", gpu_ms(lambda: s(x.reshape(k, n // k), axis=0)), "ms")
    for k in [2, 3, 4, 16]:  # bench_reduction's "few columns": rows of k, summed over axis 0
        r = n // (4 if k == 3 else k)
        row(f"reduction few columns ({r}, {k}) axis=0", gpu_ms(lambda: s(x[:r * k].reshape(r, k), axis=0)), "ms")
    del x, X
    one = cp.ones(1, cp.float32)
    row("reduction host cost, 1 element", host_us(lambda: s(one), n=10000), "us")
    code = ("import cupy as cp, time\nx = cp.ones(1000, cp.float32)\ncp.cuda.Device().synchronize()\n"
            "k = cp.ReductionKernel('T x', 'T y', 'x * %d', 'a + b', 'y = a', '0', 'cold_red_%d')\n"
            "t0 = time.perf_counter(); k(x); cp.cuda.Device().synchronize()\n"
            "print((time.perf_counter() - t0) * 1e3)\n")
    tag = int(time.time() * 1000) % 1000000
    out = subprocess.run([sys.executable, "-c", code % (tag, tag)], capture_output=True, text=True)
    try:
        row("reduction first call, cold", float(out.stdout.strip().splitlines()[-1]), "ms")
    except (ValueError, IndexError):
        row("reduction first call, cold", -1, "ms", {"error": out.stderr[-300:]})


def main():
    which = sys.argv[2:] or ["raw", "elementwise", "reduction"]
    if "raw" in which:
        raw_kernel_cases()
    if "elementwise" in which:
        elementwise_cases()
    if "reduction" in which:
        reduction_cases()
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump({"cupy": cp.__version__, "rows": rows}, f, indent=1)
    print(f"\nCuPy {cp.__version__} on {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    print("| case | CuPy | unit |\n|---|---|---|")
    for r in rows:
        print(f"| {r['case']} | {r['cupy']:.4g} | {r['unit']} |")


if __name__ == "__main__":
    main()
