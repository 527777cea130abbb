#!/usr/bin/env python3
"""Compares benchmark JSON files of two builds run on one machine in one session
(issue 24's rule: every row within 2% of before).

  scripts/bench-compare.py BEFORE_DIR AFTER_DIR [--limit 0.02]

Each directory holds bench_*.json files written by the bench binaries, possibly one per
round (bench_x.json, bench_x.2.json, ...): per case and numeric field the best (lowest)
value over the rounds is kept, since noise only adds time (the highest for rates: a row
whose unit is a rate ("GB/s ..."), where more is better and after/before is inverted to compare). Prints one table row per case
and field with before, after and after/before, marking rows slower by more than the
limit; exits 1 when there is one.

--stat paired (for runs of several rounds, each round running the two builds one after
the other): per case, the median over rounds of the round's after/before ratio, so that
drift between rounds cancels; where the row has a reference timed in the same process,
the column "normalised" divides each round's ratio by the reference's ratio of that
round (the machine's noise shared by both). The verdict uses the paired median; best of
rounds is still printed beside it.
"""
import argparse
import glob
import json
import os
import re
import sys


RATE = {}


def load(directory, rounds=None):
    """{(bench, case, field): best value}; with rounds (a dict), also
    rounds[(bench, case, field)][round] = value."""
    best = {}
    for path in sorted(glob.glob(os.path.join(directory, "bench_*.json"))):
        bench = re.sub(r"(\.\d+)?\.json$", "", os.path.basename(path))
        m = re.search(r"\.(\d+)\.json$", os.path.basename(path))
        rnd = int(m.group(1)) if m else 1
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError):
            continue
        for row in doc.get("rows", []):
            # bench_reduction names a case with its own measurement: "... (0.247 ms, 4345 GB/s read)"
            case = re.sub(r"\s*\([\d.]+ ms[^)]*\)$", "", str(row.get("case")))
            rate = "/s" in str(row.get("unit", "")) or case.endswith("(GB/s)")
            for field in ("ukern", "reference"):  # the row's unit; the reference (a ceiling
                v = row.get(field)                  # timed beside) shows the run's noise
                if not isinstance(v, (int, float)) or isinstance(v, bool) or v <= 0:
                    continue
                k = (bench, case, field)
                if rate:  # stored as time-like (1 / rate) so that lower is better throughout
                    v = 1.0 / v
                best[k] = min(best.get(k, v), v)
                if rounds is not None:
                    rounds.setdefault(k, {})[rnd] = v
                RATE[k] = rate
    return best


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("before")
    p.add_argument("after")
    p.add_argument("--limit", type=float, default=0.02)
    p.add_argument("--stat", choices=("best", "paired"), default="best")
    a = p.parse_args(argv)
    if a.stat == "paired":
        return paired(a)
    b, n = load(a.before), load(a.after)
    common = sorted((k for k in set(b) & set(n) if k[2] == "ukern"), key=lambda k: (k[0], str(k[1])))
    worse = 0
    print("| bench | case | before | after | slowdown (after/before in time) | reference, same | within %g%% |"
          % (a.limit * 100))
    print("|---|---|---|---|---|---|---|")
    for k in common:
        r = n[k] / b[k]
        ref = (k[0], k[1], "reference")
        rr = f"{n[ref] / b[ref]:.3f}" if ref in n and ref in b else "-"
        ok = r <= 1 + a.limit
        worse += not ok
        show = (lambda v: 1.0 / v) if RATE.get(k) else (lambda v: v)
        print(f"| {k[0]} | {k[1]} | {show(b[k]):.4g} | {show(n[k]):.4g} | {r:.3f} | {rr} | {'yes' if ok else 'NO'} |")
    only_b = len(set(b) - set(n))
    only_n = len(set(n) - set(b))
    print(f"\n{len(common)} rows compared, {worse} slower by more than {a.limit:.0%}; "
          f"{only_b} only before, {only_n} only after")
    return 1 if worse else 0


def median(xs):
    xs = sorted(xs)
    h = len(xs) // 2
    return xs[h] if len(xs) % 2 else (xs[h - 1] + xs[h]) / 2


def paired(a):
    rb, rn = {}, {}
    b, n = load(a.before, rb), load(a.after, rn)
    common = sorted((k for k in set(b) & set(n) if k[2] == "ukern"), key=lambda k: (k[0], str(k[1])))
    worse = 0
    print("| bench | case | before (median) | after (median) | paired median after/before | normalised by the reference | best of rounds | rounds | within %g%% |"
          % (a.limit * 100))
    print("|---|---|---|---|---|---|---|---|---|")
    for k in common:
        both = sorted(set(rb[k]) & set(rn[k]))
        if not both:
            continue
        ratios = [rn[k][i] / rb[k][i] for i in both]
        ref = (k[0], k[1], "reference")
        norm = [rn[k][i] / rb[k][i] / (rn[ref][i] / rb[ref][i]) for i in both
                if i in rb.get(ref, {}) and i in rn.get(ref, {})]
        r = median(ratios)
        ok = r <= 1 + a.limit
        worse += not ok
        show = (lambda v: 1.0 / v) if RATE.get(k) else (lambda v: v)
        nb, nn = median([rb[k][i] for i in both]), median([rn[k][i] for i in both])
        print(f"| {k[0]} | {k[1]} | {show(nb):.4g} | {show(nn):.4g} | {r:.3f} | "
              f"{median(norm):.3f} | {n[k] / b[k]:.3f} | {len(both)} | {'yes' if ok else 'NO'} |"
              if norm else
              f"| {k[0]} | {k[1]} | {show(nb):.4g} | {show(nn):.4g} | {r:.3f} | - | {n[k] / b[k]:.3f} | {len(both)} | {'yes' if ok else 'NO'} |")
    print(f"\n{len(common)} rows compared (paired medians), {worse} slower by more than {a.limit:.0%}")
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
