#!/usr/bin/env python3
"""col_plans.py SWEEP_JSON [MAX_MIB] [--all FILE]: every column-style reduction point of a sweep
(ReductionKernel `sum` over float32, the planner's "threads across the outputs" kernel)
up to MAX_MIB (default 64), timed under the planner's own plan and under forced plans
(UKERN_RED_TUNE's by 2-64, sp and cv: threads an output, pieces, vector tiles), as the sweep
times (the L2 flushed by a 256 MiB read before each call, event-timed, medians). Prints
per point the three fastest plans and the planner's, from three alternating rounds:
the data the column cost model is fitted against (docs/PERF.md "Session 23"). --all
also writes every plan's first timing (median of 11) a point, as JSON lines. Every
result is checked against NumPy's float64 sum first. GPU, CuPy."""
import itertools
import json
import os
import sys

import cupy as cp
import numpy as np

import ukern

FLUSH_BYTES = 256 << 20
flush_buf = cp.ones(FLUSH_BYTES, cp.uint8)
flush = cp.RawKernel(r"""
extern "C" __global__ void flush(const uint4 *p, long long n, unsigned int *sink) {
  unsigned int a = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    uint4 v = p[i]; a ^= v.x ^ v.y ^ v.z ^ v.w; }
  if (n < 0) sink[0] = a;
}""", "flush")


def timed_us(fn, reps):
    for _ in range(3):
        fn()
    start, stop, t = cp.cuda.Event(), cp.cuda.Event(), []
    for _ in range(reps):
        flush((1024,), (256,), (flush_buf, np.int64(FLUSH_BYTES // 16), flush_buf))
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        t.append(cp.cuda.get_elapsed_time(start, stop) * 1000)
    return float(np.median(t))


def main():
    args = sys.argv[1:]
    everything = None
    if "--all" in args:
        i = args.index("--all")
        everything = open(args[i + 1], "w")
        del args[i:i + 2]
    sweep = json.load(open(args[0]))
    most = int(args[1]) << 20 if len(args) > 1 else 64 << 20
    points = [(tuple(p["shape"]), tuple(p["axes"])) for p in sweep["points"]
              if p["kind"] == "reduction" and "threads across the outputs" in (p.get("plan") or "")
              and p["size_bytes"] <= most]
    tunes = [""] + [f"by={b},sp={s},cv={c}" for b, s, c in itertools.product((2, 4, 8, 16, 32, 64), (1, 0), (0, 1))]
    tunes += [f"by={b},sp={s}" for b, s in itertools.product((16, 32, 64), (8, 32, 128))]
    kernels = {}
    for i, t in enumerate(tunes):  # the knobs are read when a kernel is made
        os.environ["UKERN_RED_TUNE"] = t
        kernels[t] = ukern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", f"colplan{i}")
    os.environ.pop("UKERN_RED_TUNE", None)
    for shape, axes in points:
        x = cp.random.rand(*shape, dtype=cp.float32) + 0.5
        want = x.get().astype(np.float64).sum(axis=axes)
        first, wrong = {}, []
        for t, k in kernels.items():
            if not np.allclose(k(x, axis=axes).get(), want, rtol=1e-5):
                wrong.append(t)
                continue
            first[t] = timed_us(lambda: k(x, axis=axes), 11)
        if everything:
            everything.write(json.dumps({"shape": shape, "axes": axes, "us": first, "wrong": wrong}) + "\n")
            everything.flush()
        top = sorted(first, key=first.get)[:3]
        if "" in first and "" not in top:
            top.append("")
        best = {t: [] for t in top}
        for rnd in range(3):
            for t in (top if rnd % 2 == 0 else top[::-1]):
                best[t].append(timed_us(lambda: kernels[t](x, axis=axes), 31))
        row = " | ".join(f"'{t}': {min(best[t]):.2f}" for t in sorted(best, key=lambda t: min(best[t])))
        print(shape, axes, row, ("WRONG " + ",".join(wrong)) if wrong else "", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
