"""The copy-rate sweep's plan, without CuPy or a GPU: the profiles, the points, their
labels (--only), an estimate of each point's seconds, the dealing of points to shards
(--shard I/N) and the merge of several sweep JSONs (shards, or runs over different
--sizes). bench/sweep.py runs the points; bench/sweep_report.py merges and reports;
python/tests/test_sweep_plan_cpu.py tests this module.
"""
import itertools
import math
import re

KINDS = ("elementwise", "reduction", "argmax", "fusion")
# Size order: the most telling first (1 GiB, 64 MiB, then small), so a cut keeps them.
FULL_SIZES = (30, 26, 22, 16, 28, 24, 20, 18)
QUICK_SIZES = (30, 26, 22, 16)
FULL_WIDTHS = (32, 128, 512, 2048, 8192, 32768, 65536)
QUICK_WIDTHS = (32, 128, 512, 2048, 8192, 65536)
QUICK_TORCH_WIDTHS = (128, 2048)
ROW_OPS = ("rowsum", "softmax", "layernorm", "center")
RED_TEMPLATES_3D = ((256, 1024, 1024), (1024, 256, 1024), (1024, 1024, 256), (64, 64, 65536))
BIG = 32 << 20             # bytes from which the copy-rate target (and torch.compile) applies
FEW_REPS_BYTES = 64 << 20  # from here: few repetitions unless their spread is large
# A miss whose bare deterministic combine misses too is at that floor only within this of it (the
# empty-launch reference's run-to-run move, docs/PERF.md "Session 28"); further over it, the rest
# is ukern's kernel (sweep.py floor_reason, sweep_report.py).
FLOOR_NEAR_MS = 0.0003


def combine_verdict(ukern_ms, det_ms):
    """"combine" where a miss's time is within FLOOR_NEAR_MS of the bare deterministic combine of
    its bytes (which misses too), else "over": over that floor by more."""
    return "combine" if ukern_ms <= det_ms + FLOOR_NEAR_MS else "over"


def profile(quick):
    """Repetitions, warm-ups and default budget of a profile. At >= FEW_REPS_BYTES a
    column is timed REPS_BIG times after WARM_BIG warm-ups, and up to `reps` times when
    those spread by more than SPREAD (max - min over the median): a big kernel's times
    vary by about 1%, so 5 say what 21 say."""
    return {"quick": quick, "sizes": QUICK_SIZES if quick else FULL_SIZES,
            "widths": QUICK_WIDTHS if quick else FULL_WIDTHS,
            "reps": 7 if quick else 21, "warm": 2 if quick else 3,
            "reps_big": 5, "warm_big": 1, "spread": 0.05,
            "budget": 270.0 if quick else 1e9}


def scale_shape(template, nelem):
    """template scaled to nelem elements (a power of two) in log space: each axis keeps
    its share of the total exponent, largest remainders rounded up."""
    logs = [math.log2(d) for d in template]
    total = int(round(math.log2(nelem)))
    want = [l * total / sum(logs) for l in logs]
    e = [int(math.floor(w)) for w in want]
    for i in sorted(range(len(e)), key=lambda i: want[i] - e[i], reverse=True)[:total - sum(e)]:
        e[i] += 1
    return tuple(1 << v for v in e)


def enumerate_points(sizes, kinds, widths):
    """[(point dict, runner name)] in run order: sizes in the given order, kinds
    interleaved within a size, each label once a size. Each point carries `seq` (its place within its size),
    which with log2_size orders points from several JSONs the same way."""
    out = []
    for s in sizes:
        nbytes = 1 << s
        n = nbytes // 4
        seq = 0

        seen = set()

        def add(kind, variant, shape, runner, axes=None, width=None):
            nonlocal seq
            p = {"kind": kind, "variant": variant, "shape": list(shape), "axes": axes, "width": width,
                 "size_bytes": nbytes, "log2_size": s, "seq": seq}
            if label(p) in seen:   # (256, n/256) is (n/256, 256) at 256 KiB: measured once
                return
            seen.add(label(p))
            out.append((p, runner))
            seq += 1

        if "elementwise" in kinds:
            side = 1 << ((s - 2) // 2)
            add("elementwise", "contiguous", (n,), "ew_contig")
            add("elementwise", "broadcast row", (n // 1024, 1024), "ew_row")
            add("elementwise", "broadcast column", (n // 1024, 1024), "ew_col")
            add("elementwise", "transposed", (side, n // side), "ew_transposed")
        if "reduction" in kinds:
            for tmpl in ((256, n // 256), (n // 256, 256)):
                for ax in ((0,), (1,), (0, 1)):
                    add("reduction", "2-D", tmpl, "reduction", axes=list(ax))
            for tmpl in RED_TEMPLATES_3D:
                shape = scale_shape(tmpl, n)
                for r in (1, 2, 3):
                    for ax in itertools.combinations(range(3), r):
                        add("reduction", "3-D " + "x".join(map(str, tmpl)), shape, "reduction", axes=list(ax))
        if "argmax" in kinds:
            add("argmax", "full", (n,), "argmax", axes=None)
            add("argmax", "last axis", (n // 1024, 1024), "argmax", axes=[1])
            add("argmax", "first axis", (1024, n // 1024), "argmax", axes=[0])
        if "fusion" in kinds:
            add("fusion", "axpy", (n,), "axpy")
            for w in widths:
                if w > n:
                    continue
                for op in ROW_OPS:
                    add("fusion", op, (n // w, w), "rowop", width=w)
    return out


def label(p):
    """"kind variant shape [axes a,b]", e.g. "reduction 3-D 256x1024x1024 64x256x256
    axes 0,2" or "fusion softmax 4096x4096": what --only matches."""
    s = f"{p['kind']} {p['variant']} {'x'.join(map(str, p['shape']))}"
    if p.get("axes") is not None:
        s += " axes " + ",".join(map(str, p["axes"]))
    return s


def select(points, only):
    """The points whose label matches the regular expression `only` (re.search)."""
    if not only:
        return list(points)
    try:
        rx = re.compile(only)
    except re.error as e:
        raise ValueError(f"--only {only!r}: not a regular expression ({e}); hint: quote it, "
                         f"e.g. --only 'softmax 8192x'") from None
    return [t for t in points if rx.search(label(t[0]))]


def torch_planned(p, quick):
    """Whether torch.compile is timed at the point: fusion at >= 32 MiB (--quick: axpy at
    1 GiB, the row programs at 64 MiB with rows of 128 and 2048)."""
    if p["kind"] != "fusion" or p["size_bytes"] < BIG:
        return False
    if not quick:
        return True
    if p["variant"] == "axpy":
        return p["log2_size"] == 30
    return p["log2_size"] == 26 and p["width"] in QUICK_TORCH_WIDTHS


# Seconds, fitted to the H200 sweep of 2026-11-27 (bench/results/sweep-2026-11-27b-h200.json,
# wall_s per point; --quick took 70 s there) and rounded up. That sweep was compile-bound:
# a point costs ~0.03 s beyond its data (made, checked: per GiB of its size and column)
# and its timed calls (an L2 flush and the events, and the kernel at 3.5 TB/s), while
# each process pays its kernels' first compiles once per kind (ukern, CuPy, the CUB
# variant: ~45 s in all there, more with the full profile's sizes), and each
# torch.compile compile 0.4-1.4 s (the process's first: 3 s).
BASE_S = 0.03
DATA_S_PER_GIB = 0.1
CALL_S = 1.2e-4
COPY_BPS = 3.5e12
TORCH_S = 1.2
COMPILE_S = {"elementwise": 5.0, "reduction": 30.0, "argmax": 4.0, "fusion": 10.0}
START_S = 8.0    # a process: imports, the empty-kernel and 1 GiB copy baselines, the first torch compile


def columns(p):
    """Columns timed at a point, beside the copy: ukern, CuPy, and per kind the CUB
    variant and the two-level / transposing candidates."""
    if p["kind"] != "reduction":
        return 2
    ax, nd = p["axes"] or [], len(p["shape"])
    alts = 0
    if 2 <= len(ax) < nd:
        alts = 1 + (ax != list(range(ax[0], ax[-1] + 1)))
    return 3 + alts


def point_cost(p, prof):
    """Estimated seconds of one point under profile prof (its kind's first compiles
    are the shard's: shard_points)."""
    big = p["size_bytes"] >= FEW_REPS_BYTES
    calls = (prof["reps_big"] + prof["warm_big"]) if big else (prof["reps"] + prof["warm"])
    traffic = 3 * p["size_bytes"]
    cols = columns(p)
    t = BASE_S + DATA_S_PER_GIB * cols * p["size_bytes"] / (1 << 30)
    t += cols * calls * (CALL_S + traffic / COPY_BPS)
    if torch_planned(p, prof["quick"]):
        t += TORCH_S + 2 * (prof["reps_big"] + prof["warm_big"]) * (CALL_S + traffic / COPY_BPS)
    return t


def parse_shard(text):
    """"I/N" -> (I, N), 0 <= I < N."""
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    if not m or not 0 <= int(m.group(1)) < int(m.group(2)):
        raise ValueError(f"--shard {text!r}: expected I/N with 0 <= I < N, e.g. --shard 0/2")
    return int(m.group(1)), int(m.group(2))


def deal(costs, n):
    """Shard of each point (by position) so that the shards' summed costs are about
    equal: the costliest first, each to the shard with the least so far (ties: the
    lowest shard, so every process deals the same way)."""
    loads = [0.0] * n
    shard = [0] * len(costs)
    for i in sorted(range(len(costs)), key=lambda i: (-costs[i], i)):
        j = min(range(n), key=lambda j: (loads[j], j))
        shard[i] = j
        loads[j] += costs[i]
    return shard


def shard_points(points, prof, index, n):
    """The points of shard index of n (in run order) and every shard's estimated seconds."""
    costs = [point_cost(p, prof) for p, _ in points]
    owner = deal(costs, n)
    loads = [START_S] * n
    kinds = [set() for _ in range(n)]
    for (p, _), c, o in zip(points, costs, owner):
        loads[o] += c
        kinds[o].add(p["kind"])
    for j in range(n):
        loads[j] += sum(COMPILE_S[k] for k in kinds[j])
        if any(torch_planned(p, prof["quick"]) for (p, _), o in zip(points, owner) if o == j):
            loads[j] += 3.0
    return [t for t, o in zip(points, owner) if o == index], loads


def estimate_text(loads, npoints, shard=None):
    per = ", ".join(f"shard {i}: {s:.0f} s" for i, s in enumerate(loads))
    head = f"estimate: {npoints} points, {max(loads):.0f} s wall"
    if len(loads) > 1:
        head += f" on {len(loads)} GPUs ({per})"
    if shard is not None and len(loads) > 1:
        head += f"; this is shard {shard}"
    return head


def order_key(p):
    """A point's place in a merged sweep: sizes in the full profile's order, then its
    place within its size."""
    s = p.get("log2_size")
    return (FULL_SIZES.index(s) if s in FULL_SIZES else len(FULL_SIZES) + (s or 0), p.get("seq", 0))


def merge(docs, names=None):
    """One sweep document from several (shards of one run, or runs over other sizes or
    kinds): points in order_key order, meta of the first with `parts` (each input's
    shard, device, elapsed, done, points), elapsed the longest, done only when every
    input is done and every shard of each sharded run is there. ValueError on a point
    present twice or inputs of different profiles (quick / full)."""
    names = names or [f"input {i + 1}" for i in range(len(docs))]
    if not docs:
        raise ValueError("no sweep JSON to merge")
    if len(docs) == 1 and not docs[0]["meta"].get("shard"):
        return docs[0]
    quick = {bool(d["meta"].get("quick")) for d in docs}
    if len(quick) > 1:
        raise ValueError("cannot merge a --quick sweep with a full one: "
                         + ", ".join(f"{nm}: {'quick' if d['meta'].get('quick') else 'full'}"
                                     for nm, d in zip(names, docs)))
    seen = {}
    points = []
    for nm, d in zip(names, docs):
        for p in d["points"]:
            key = (p["size_bytes"], label(p))
            if key in seen:
                raise ValueError(f"point '{label(p)}' at {p['size_bytes']} bytes is in {seen[key]} and {nm}; "
                                 f"hint: merge the shards of one run, or runs over different --sizes/--kinds")
            seen[key] = nm
            points.append(p)
    points.sort(key=order_key)
    meta = dict(docs[0]["meta"])
    parts, runs = [], {}
    for nm, d in zip(names, docs):
        m = d["meta"]
        parts.append({"name": nm, "shard": m.get("shard"), "device": (m.get("device") or {}).get("name"),
                      "elapsed_s": m.get("elapsed_s"), "done": bool(m.get("done")), "points": len(d["points"]),
                      "planned": m.get("planned"), "empty_kernel_ms": m.get("empty_kernel_ms"),
                      "copy_rate_Bps": m.get("copy_rate_Bps"), "torch_compiles": m.get("torch_compiles")})
        if m.get("shard"):
            runs.setdefault(m.get("run_key"), set()).add(tuple(m["shard"]))
    missing = []
    for key, got in runs.items():
        n = next(iter(got))[1]
        missing += [f"shard {i}/{n}" for i in range(n) if (i, n) not in got]
    meta.pop("shard", None)
    meta.pop("planned", None)
    meta["parts"] = parts
    meta["elapsed_s"] = max((pt["elapsed_s"] or 0) for pt in parts)
    meta["done"] = all(pt["done"] for pt in parts) and not missing
    if missing:
        meta["missing"] = missing
    return {"meta": meta, "points": points}
