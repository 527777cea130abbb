#!/usr/bin/env python3
"""Joins one device run's JSON files (ukern benches, CUB ceilings, CuPy) into
the benchmark table: each row with ukern's time, the ceiling measured in the
same run, CuPy's time, both ratios and the target. Usage: report.py OUTDIR"""
import json
import os
import sys

out = sys.argv[1]


def load(name):
    try:
        with open(os.path.join(out, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def by_case(doc, key):
    return {r["case"]: r[key] for r in doc["rows"]} if doc else {}


ew = by_case(load("bench_elementwise.json"), "ukern")
ceil = by_case(load("bench_ceilings.json"), "ms")
cupy = by_case(load("cupy.json"), "cupy")

# (ukern case, ceiling case or None, cupy case, target text, check(ukern, ceiling, cupy, contiguous f32))
DT = ["float32", "float16", "bfloat16", "float64", "complex64", "int8"]
rows = []
for dt in DT:
    c = f"elementwise (x-y)^2 {dt} 2^28"
    rows.append((c, f"CUB DeviceTransform (x-y)^2 {dt}", c, ">= 95% of CUB",
                 lambda u, ce, cp, base: ce is not None and ce / u >= 0.95))
contig = ew.get("elementwise (x-y)^2 float32 2^28")
for c in ["broadcast row 16384^2 f32", "broadcast column 16384^2 f32"]:
    # same bytes moved per element as contiguous 2^28 f32 (16384^2 = 2^28): compare times
    rows.append((c, None, c, ">= 90% of contiguous", lambda u, ce, cp, base: base and base / u >= 0.90))
rows.append(("strided views X[:, ::2] f32", None, "strided views X[:, ::2] f32", "no worse than CuPy",
             lambda u, ce, cp, base: cp is not None and u <= cp * 1.02))
rows.append(("transposed operand 16384^2 f32", None, "transposed operand 16384^2 f32", ">= 2x CuPy",
             lambda u, ce, cp, base: cp is not None and cp / u >= 2.0))

def f(v, fmt=".4f"):
    return "-" if v is None else format(v, fmt)


print("\n## ElementwiseKernel, one device run (times in ms, median of 30)\n")
print("| case | ukern | CUB ceiling | ukern speed / ceiling | CuPy | speed-up vs CuPy | target | met |")
print("|---|---|---|---|---|---|---|---|")
for case, ccase, pcase, target, ok in rows:
    u = ew.get(case)
    if u is None:
        continue
    ce = ceil.get(ccase) if ccase else None
    cp = cupy.get(pcase)
    share = f"{ce / u:.1%}" if ce else "-"
    speed = f"{cp / u:.2f}x" if cp else "-"
    print(f"| {case} | {f(u)} | {f(ce)} | {share} | {f(cp)} | {speed} | {target} | {'yes' if ok(u, ce, cp, contig) else 'NO'} |")

doc = load("bench_elementwise.json")
for r in doc["rows"] if doc else []:
    if "host cost" in r["case"]:
        cp = cupy.get("elementwise host cost, 1 element")
        print(f"| {r['case']} | {r['ukern']:.3f} us | raw launch {r['reference']:.3f} us | "
              f"+{r['ukern'] - r['reference']:.3f} us | {f(cp, '.3f')} us | "
              f"{f(cp / r['ukern'] if cp else None, '.2f')}x | {r['target']} | {'yes' if r['pass'] == 1 else 'NO'} |")
    elif "first call" in r["case"]:
        cp = cupy.get("elementwise first call, cold")
        print(f"| {r['case']} | {r['ukern']:.2f} | - | - | {f(cp, '.2f')} | "
              f"{f(cp / r['ukern'] if cp else None, '.2f')}x | {r['target']} | {'yes' if r['pass'] == 1 else 'NO'} |")

for name, title in [("bench_reduction.json", "ReductionKernel"), ("bench_launch.json", "Host cost per launch (RawKernel)"),
                    ("bench_compile.json", "Compile path")]:
    d = load(name)
    if not d:
        continue
    print(f"\n## {title}\n\n| case | ukern | reference | target | met |\n|---|---|---|---|---|")
    for r in d["rows"]:
        ref = f"{r['reference']:.4g} {r['unit']} ({r['reference_name']})" if r["reference"] > 0 else "-"
        met = "-" if r["pass"] < 0 else ("yes" if r["pass"] else "NO")
        print(f"| {r['case']} | {r['ukern']:.4g} {r['unit']} | {ref} | {r['target']} | {met} |")
if cupy.get("RawKernel launch host cost"):
    print(f"\nCuPy RawKernel launch host cost in the same run: {cupy['RawKernel launch host cost']:.3f} us")
