#!/usr/bin/env python3
"""Host time per call, base against now, process against process (issue 11).

On a GPU machine: runs bench_host_instructions --time (bench/tools/host_instructions.c:
the calls of bench_elementwise's, bench_reduction's and bench_launch's host-cost
rows, and nothing else in the process) for two builds, alternately, in N new
processes each, and prints each row's median over the processes and the ratio.
Build the base program without a GPU with bench/tools/host_instructions.py --base CHECKOUT --keep DIR
(it is left at DIR/base/bench_host_instructions_base).

  bench/tools/host_time.py NOW_EXE BASE_EXE [--rounds N] [--cpus 2-5] [--json OUT]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run(exe, cache, cpus):
    cmd = ([("taskset"), "-c", cpus] if cpus else []) + [exe, cache, "--time"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows = {}
    for line in out.splitlines():
        if "\t" in line:
            name, value = line.rsplit("\t", 1)
            rows[name] = float(value)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("now")
    ap.add_argument("base")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--cpus", default="2-5")
    ap.add_argument("--json")
    a = ap.parse_args()
    cache = {side: tempfile.mkdtemp(prefix="uk_ht_%s_" % side) for side in ("now", "base")}
    exe = {"now": a.now, "base": a.base}
    for side in exe:  # fills each side's disk cache: the timed processes only load
        run(exe[side], cache[side], a.cpus)
    got = {"now": [], "base": []}
    for r in range(a.rounds):
        order = ("base", "now") if r % 2 == 0 else ("now", "base")
        for side in order:
            got[side].append(run(exe[side], cache[side], a.cpus))
    names = list(got["now"][0])
    print("| row (host us per call, median of %d processes each) | 55dd3c5 | now | now/base | pairs where now < base |" % a.rounds)
    print("|---|---:|---:|---:|---:|")
    table = []
    for n in names:
        b = [p[n] for p in got["base"]]
        w = [p[n] for p in got["now"]]
        mb, mw = statistics.median(b), statistics.median(w)
        wins = sum(1 for x, y in zip(w, b) if x < y)
        print("| %s | %.3f | %.3f | %.3f | %d/%d |" % (n, mb, mw, mw / mb, wins, a.rounds))
        table.append({"row": n, "base": b, "now": w, "base_median": mb, "now_median": mw})
    raw = "uk_function_launch, no signature"
    if raw in names:
        # cuLaunchKernel's cost moves by +-5% between processes: each row less
        # the raw launch of the same process is ukern's part, with less noise.
        print()
        print("| row, less the raw launch of the same process (us) | 55dd3c5 | now | now - base | pairs where now < base |")
        print("|---|---:|---:|---:|---:|")
        for n in names:
            if n == raw or "time" in n or "in-memory" in n:  # no launch in it
                continue
            b = [p[n] - p[raw] for p in got["base"]]
            w = [p[n] - p[raw] for p in got["now"]]
            mb, mw = statistics.median(b), statistics.median(w)
            wins = sum(1 for x, y in zip(w, b) if x < y)
            print("| %s | %.3f | %.3f | %+.3f | %d/%d |" % (n, mb, mw, mw - mb, wins, a.rounds))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(table, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
