#!/usr/bin/env python3
"""argmax_plans.py OUT [--planner]: fused float32 argmax over axis 0 (the column kernel with a
value-index pair for its partial) of 24 shapes of 64 KiB-64 MiB, timed under the planner's plan
and 48 forced plans (UKERN_RED_TUNE's by 8-64 threads an output, sp 0/1/4/16/64 pieces, cv 0/1
vector tiles; by 2 and 4 with sp 0/1), as the sweep times (L2 flushed by a 256 MiB read,
event-timed, best of 2 medians of 11). Writes JSON lines {"tune", "shape", "us", "ok"} to OUT; each result is checked against
NumPy's argmax first (ok false: not timed). --planner: the planner's plan only. Each plan runs
in a process of its own: a fusion's kernels are cached by expression, and the knobs are read
when a kernel is made. The data the column model's wide-partial rules were judged against
(docs/PERF.md "Session 24"). GPU, CuPy."""
import itertools
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plan_procs  # noqa: E402

SHAPES = [(1024, 16), (1024, 64), (1024, 256), (1024, 1024), (1024, 4096), (1024, 16384), (256, 64), (256, 256),
          (256, 1024), (512, 64), (2048, 64), (128, 128), (128, 512), (4096, 256), (4096, 1024), (2048, 2048),
          (512, 8192), (256, 16384), (64, 4096), (64, 16384), (16384, 256), (65536, 256), (8192, 64), (64, 1024)]


def one_plan(out_path):
    """The shapes under the UKERN_RED_TUNE of this process, appended to out_path."""
    import cupy as cp
    import numpy as np

    import ukern
    from col_plans import timed_us  # this folder is on sys.path (above)

    tune = os.environ.get("UKERN_RED_TUNE", "")
    f = ukern.fuse(lambda a: np.argmax(a, axis=0))
    with open(out_path, "a") as out:
        for shape in SHAPES:
            x = cp.random.rand(*shape, dtype=cp.float32)
            ok = bool(np.array_equal(cp.asnumpy(f(x)), np.argmax(x.get(), axis=0)))
            us = min(timed_us(lambda: f(x), 11) for _ in range(2)) if ok else None
            out.write(json.dumps({"tune": tune, "shape": shape, "us": us, "ok": ok}) + "\n")


def main():
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "--one":
        one_plan(args[1])
        return 0
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    tunes = [""]
    if "--planner" not in args:
        tunes += [f"by={b},sp={s},cv={c}" for b, s, c in itertools.product((8, 16, 32, 64), (0, 1, 4, 16, 64), (0, 1))]
        tunes += [f"by={b},sp={s},cv={c}" for b, s, c in itertools.product((2, 4), (0, 1), (0, 1))]
    return plan_procs.each_plan(__file__, tunes, args[0])


if __name__ == "__main__":
    sys.exit(main())
