#!/usr/bin/env python3
"""plan_regret.py TABLE [--describe PATH] [--top N] [--per-sm N] [--max-regret US]: how far this
build's reduction planner is from the fastest timed plan, offline (no GPU). TABLE is the JSON lines of
bench/tools/col_plans.py --all (float32 sums: partials of 4 bytes, 8 blocks an SM), of
bench/tools/argmax_plans.py (fused float32 argmax over axis 0: a 16-byte pair, 5 blocks an SM) or of
bench/tools/row_plans.py (argmax or sums over the last axis, as its lines say). --per-sm: the
resident blocks an SM of the program the table ran, where it is not the default's (the row
argmax's group kernel: 8).
For each point the planner's plan (bench/tools/plan_describe, built with the bench targets:
--describe, default build/bench/plan_describe) is looked up among the forced plans the table
timed by its description; its time is the fastest timing of a plan that matches. Prints the
summed regret (the picked plan's time less the point's fastest), the points whose plan the
table did not time, and the N points of largest regret (default 10); with --max-regret, exits 1
when the summed regret is larger (the cpu tier's guard of the committed tables). Judges a
planner change against a table before any device time: docs/PERF.md "Session 23" and "Session
24"."""
import collections
import json
import os
import subprocess
import sys


def load(path):
    """{(shape, mask): {tune: us}}, the program's (partial bytes, blocks an SM)."""
    points = collections.defaultdict(dict)
    program = (4, 8)
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if "tune" in r:  # argmax_plans.py, row_plans.py: one plan of one shape a line
                program = (4, 8) if r.get("program") == "sum" else (16, 5)
                mask = sum(1 << a for a in r.get("axes", [0]))
                if r.get("ok") and r.get("us") is not None:
                    points[(tuple(r["shape"]), mask)][r["tune"]] = r["us"]
            else:  # col_plans.py --all: every plan of one point a line
                mask = sum(1 << a for a in r["axes"])
                points[(tuple(r["shape"]), mask)].update(r["us"])
    return points, program


def describe(exe, points, program):
    """{(shape, mask, tune or '-'): description} from plan_describe."""
    partial, per_sm = program
    queries = []
    for (shape, mask), timed in points.items():
        for tune in ["-"] + [t for t in timed if t]:
            queries.append(f"{'x'.join(map(str, shape))} {mask} 4 {partial} {per_sm} {tune}")
    out = subprocess.run([exe], input="\n".join(queries) + "\n", capture_output=True, text=True, check=True).stdout
    plans = {}
    for line in out.splitlines():
        shape, mask, tune, desc, _cost = line.split("\t")
        plans[(tuple(int(v) for v in shape.split("x")), int(mask), tune)] = desc
    return plans


def main():
    args = sys.argv[1:]
    exe, top = "build/bench/plan_describe", 10
    if "--describe" in args:
        i = args.index("--describe")
        exe = args[i + 1]
        del args[i:i + 2]
    if "--top" in args:
        i = args.index("--top")
        top = int(args[i + 1])
        del args[i:i + 2]
    per_sm = None
    if "--per-sm" in args:
        i = args.index("--per-sm")
        per_sm = int(args[i + 1])
        del args[i:i + 2]
    most = None
    if "--max-regret" in args:
        i = args.index("--max-regret")
        most = float(args[i + 1])
        del args[i:i + 2]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    if not os.access(exe, os.X_OK):
        print(f"plan_regret: no {exe} (build the bench targets, or pass --describe PATH)", file=sys.stderr)
        return 2
    points, program = load(args[0])
    if per_sm is not None:
        program = (program[0], per_sm)
    plans = describe(exe, points, program)
    total, unknown, rows = 0.0, [], []
    for (shape, mask), timed in sorted(points.items()):
        pick = plans[(shape, mask, "-")]
        # the table's own planner column ("") ran that day's build: it counts for the fastest only
        same = [us for t, us in timed.items() if t and plans.get((shape, mask, t)) == pick]
        best = min(timed.values())
        if not same:
            unknown.append((shape, mask, pick))
            continue
        regret = min(same) - best
        total += regret
        rows.append((regret, shape, mask, min(same), best, pick))
    print(f"{len(points)} points: regret {total:.2f} us over {len(rows)}, {len(unknown)} plans the table did not time")
    for shape, mask, pick in unknown:
        print(f"  not timed: {shape} mask {mask}: {pick}")
    for regret, shape, mask, us, best, pick in sorted(rows, reverse=True)[:top]:
        print(f"  {regret:5.2f} us  {shape} mask {mask}: {us:.2f} against {best:.2f}  ({pick})")
    if most is not None and total > most:
        print(f"plan_regret: regret {total:.2f} us is over {most:.2f}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
