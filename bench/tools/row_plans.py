#!/usr/bin/env python3
"""row_plans.py OUT_PREFIX: float32 reductions along the last (contiguous) axis, the planner's
group kernels (a thread, 8 threads, a warp or a block an output), timed under the planner's plan
and forced ones (UKERN_RED_TUNE's g: threads an output 8, 32 or 256, with sp: pieces an output,
0 for none), as the sweep times (L2 flushed by a 256 MiB read, event-timed, best of 2 medians
of 11). Two programs: a fused argmax (ukern.fuse of np.argmax over the last axis, or of the
whole of a 1-D array: a value-index pair, 16 bytes a partial) to OUT_PREFIX-argmax.jsonl, and a
ReductionKernel sum to OUT_PREFIX-sum.jsonl. JSON lines {"program", "tune", "shape", "axes", "us",
"ok"}, the format of argmax_plans.py with the program and the reduced axes; each result is checked
against NumPy first (ok false: not timed). Each plan runs in a process of its own (a fusion's kernels are cached by
expression, and the knobs are read when a kernel is made). The data bench/tools/plan_regret.py
judges the group planner against offline. GPU, CuPy."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plan_procs  # noqa: E402

# the sweep's argmax shapes over rows and whole arrays, and rows of other widths
SHAPES = [(16, 1024), (64, 1024), (256, 1024), (1024, 1024), (4096, 1024), (16384, 1024), (1024, 64), (8192, 64),
          (1024, 256), (4096, 256), (16384, 256), (256, 4096), (1024, 4096), (64, 16384), (256, 16384), (16, 65536),
          (16384,), (65536,), (262144,), (1048576,), (4194304,), (16777216,)]
TUNES = [""] + [f"g={g}" for g in (8, 32, 256)] + [f"g={g},sp={s}" for g in (8, 32, 256) for s in (4, 16, 64)]


def one_plan(prefix):
    """Every shape under the UKERN_RED_TUNE of this process, appended to prefix's two files."""
    import cupy as cp
    import numpy as np

    import ukern
    from col_plans import timed_us  # this folder is on sys.path (above)

    tune = os.environ.get("UKERN_RED_TUNE", "")
    argmax = {1: ukern.fuse(lambda a: np.argmax(a)), 2: ukern.fuse(lambda a: np.argmax(a, axis=-1))}
    total = ukern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "row_plans_sum")
    with open(prefix + "-argmax.jsonl", "a") as fa, open(prefix + "-sum.jsonl", "a") as fs:
        for shape in SHAPES:
            x = cp.random.rand(*shape, dtype=cp.float32)
            h = x.get()
            axes = [len(shape) - 1]
            f = argmax[len(shape)]
            ok = bool(np.array_equal(cp.asnumpy(f(x)), np.argmax(h, axis=-1) if len(shape) == 2 else np.argmax(h)))
            us = min(timed_us(lambda: f(x), 11) for _ in range(2)) if ok else None
            fa.write(json.dumps({"program": "argmax", "tune": tune, "shape": shape, "axes": axes, "us": us,
                                 "ok": ok}) + "\n")
            want = h.astype(np.float64).sum(axis=-1)
            ok = bool(np.allclose(cp.asnumpy(total(x, axis=-1)).astype(np.float64), want, rtol=1e-4, atol=1e-3))
            us = min(timed_us(lambda: total(x, axis=-1), 11) for _ in range(2)) if ok else None
            fs.write(json.dumps({"program": "sum", "tune": tune, "shape": shape, "axes": axes, "us": us,
                                 "ok": ok}) + "\n")


def main():
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "--one":
        one_plan(args[1])
        return 0
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    return plan_procs.each_plan(__file__, TUNES, args[0])


if __name__ == "__main__":
    sys.exit(main())
