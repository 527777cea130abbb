#!/usr/bin/env python3
"""CuPy's cupy.fuse on issue 12's fusion rows (the peer of bench/bench_fusion.c),
same protocol as bench/cupy_bench.py (CUDA events, warm-ups, medians), run in
the same device call. Writes JSON (argv[1]) and prints a table last.
Softmax over rows is not fusable by cupy.fuse (a reduced value used again):
it is timed as CuPy's plain expression for reference."""
import json
import sys

import cupy as cp
import numpy as np

from cupy_bench import gpu_ms, host_us  # same timing helpers

rows = []


def row(case, ms, nbytes):
    rows.append({"case": case, "cupy_ms": ms, "GB/s": nbytes / ms / 1e6})


@cp.fuse()
def axpy(x, y):
    return 2.5 * x + y


@cp.fuse()
def sqdist_rows(x, y):
    return cp.sum((x - y) * (x - y), axis=-1)


@cp.fuse()
def dot_full(x, y):
    return cp.sum(x * y)


@cp.fuse()
def dot_cols(x, y):
    return cp.sum(x * y, axis=0)


@cp.fuse()
def half_expr(h):
    return cp.exp(-h) * h + 1


@cp.fuse()
def where_expr(x, y, i):
    return cp.where(x > 0.5, cp.sqrt(x) * y, cp.log1p(y)) + i


def main():
    n = 1 << 28
    x = cp.random.rand(n, dtype=cp.float32)
    y = cp.random.rand(n, dtype=cp.float32)
    row("z = a * x + y, 2^28 f32", gpu_ms(lambda: axpy(x, y)), 3.0 * n * 4)
    row("sum(x * y) full, 2^28 f32", gpu_ms(lambda: dot_full(x, y)), 2.0 * n * 4)
    i = cp.ones(n, cp.int32)
    row("where(...) + i32 (float64 out), 2^28", gpu_ms(lambda: where_expr(x, y, i)), n * 20.0)
    del x, y, i
    h = cp.random.rand(n, dtype=cp.float32).astype(cp.float16)
    row("exp(-h) * h + 1, float16 2^28", gpu_ms(lambda: half_expr(h)), 2.0 * n * 2)
    del h
    X = cp.random.rand(16384, 16384, dtype=cp.float32)
    Y = cp.random.rand(16384, 16384, dtype=cp.float32)
    b2 = 2.0 * 16384 * 16384 * 4
    row("sum((x - y) * (x - y), axis=-1), 16384^2 f32", gpu_ms(lambda: sqdist_rows(X, Y)), b2)
    row("sum(x * y, axis=0), 16384^2 f32", gpu_ms(lambda: dot_cols(X, Y)), b2)

    def softmax():
        e = cp.exp(X - X.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    row("softmax rows 16384^2 f32 (unfused CuPy)", gpu_ms(softmax), 3.0 * 16384 * 16384 * 4)
    one = cp.ones(1, cp.float32)
    rows.append({"case": "cupy.fuse host cost per call, 1 element (us)", "cupy_us": host_us(lambda: axpy(one, one))})
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump({"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "rows": rows}, f, indent=1)
    print("\n| case | CuPy fuse | GB/s |\n|---|---|---|")
    for r in rows:
        if "cupy_ms" in r:
            print("| %s | %.4f ms | %.0f |" % (r["case"], r["cupy_ms"], r["GB/s"]))
        else:
            print("| %s | %.2f us | |" % (r["case"], r["cupy_us"]))


if __name__ == "__main__":
    np.random.seed(0)
    main()
