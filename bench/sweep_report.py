#!/usr/bin/env python3
"""Markdown table and plots from bench/sweep.py's JSON (issue 25).

Usage: python3 bench/sweep_report.py sweep.json [more.json ...] [--md OUT.md] [--plots DIR]
                                     [--perf docs/PERF.md] [--out-json MERGED.json]
Several JSONs (the shards of one run, --shard I/N, or runs over other --sizes or
--kinds) are merged into one sweep first (bench/sweep_plan.py merge: a point in two of
them, or a --quick with a full one, is an error); --out-json writes the merged JSON.
--md: the "Sweep" section (summary per kind with its worst point, how many small points
sit within the launch reference's run-to-run spread of their bound, the points that miss
their target with the reason, then every point) to a file; stdout without it.
--perf: replace (or append) the section "## Sweep" of that file with it.
--plots: one PNG per kind (needs matplotlib; skipped with a note without it):
size on x (log), share of the copy rate on y, one panel per shape/axes/width,
lines for ukern, CuPy, torch.compile and ukern's CUB block-reduce variant.
Works on a partial JSON (a sweep cut by its budget or a timeout).
"""
import argparse
import json
import math
import os
import sys
from collections import OrderedDict, defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sweep_plan  # noqa: E402  (bench/, beside this file)

KIND_ORDER = ["elementwise", "reduction", "argmax", "fusion"]
SECTION = "## Sweep"


def fmt(v, nd=4):
    return "" if v is None else (f"{v:.{nd}f}" if isinstance(v, float) else str(v))


def size_str(b):
    for unit, sh in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if b >= 1 << sh:
            return f"{b / (1 << sh):g} {unit}"
    return f"{b} B"


def label(p):
    parts = [p["variant"], "x".join(map(str, p["shape"]))]
    if p.get("axes") is not None:
        parts.append("axes " + ",".join(map(str, p["axes"])))
    return " ".join(parts)


def share(p, col):
    t = p.get(col)
    return p["copy_ms"] / t if t and p.get("copy_ms") else None


def summary(points):
    """Per kind: met, timed, total, errors, worst point (lowest share of copy among timed)."""
    by = OrderedDict((k, []) for k in KIND_ORDER)
    for p in points:
        by.setdefault(p["kind"], []).append(p)
    rows = []
    for kind, ps in by.items():
        if not ps:
            continue
        timed = [p for p in ps if p.get("ukern_ms") is not None]
        met = sum(1 for p in timed if p.get("met"))
        worst = None
        if timed:
            worst = min(timed, key=lambda p: (bool(p.get("met")), p["copy_ms"] / p["ukern_ms"]))
        rows.append((kind, met, len(timed), len(ps), sum(1 for p in ps if "error" in p), worst))
    return rows


def flush_text(m):
    """How the sweep flushed the L2 (JSONs before session 15 have no l2_flush: they wrote)."""
    if m.get("l2_flush", "write") == "write":
        return "a 256 MiB buffer written: the timed call also writes back the L2's dirty lines"
    return "a 256 MiB buffer read: no dirty lines left"


def empty_text(m):
    """How the empty kernel was timed (JSONs before session 15 have no empty_kernel_timing)."""
    if m.get("empty_kernel_timing") == "flushed":
        host = m.get("empty_kernel_host_ms")
        return ("timed as the points are, the host's launch before the start event"
                + (f"; with it inside: {host:.4f} ms" if host else ""))
    return "the host's launch inside the timed interval, unlike the points'"


def reps_text(m):
    s = f"median of {m['reps']} after {m['warm']} warm-ups"
    if m.get("reps_big"):
        s += (f" ({size_str(m['few_reps_bytes'])} and above: {m['reps_big']} after {m['warm_big']}, "
              f"{m['reps']} more where those spread by more than {100 * m['spread']:g}%)")
    return s


def parts_text(m):
    """The inputs of a merged sweep: shards (one GPU each) or runs."""
    parts = m.get("parts")
    if not parts:
        return ""
    each = "; ".join(f"{'shard ' + '/'.join(map(str, p['shard'])) if p.get('shard') else p['name']}: "
                     f"{p['device']}, {p['points']} points, {p['elapsed_s']} s" for p in parts)
    return f" (wall of the longest of {len(parts)} merged: {each})"


def missing_text(m):
    return f"; missing {', '.join(m['missing'])}" if m.get("missing") else ""


AT_FLOOR = ("read", "combine")   # sweep.py's floor_verdict of a miss no bare kernel of its kind meets


def verdict(p):
    """A miss's floor verdict (sweep.py floor_reason), "combine" of JSONs before session 35 judged
    again: "over" where the point's time is more than sweep_plan.FLOOR_NEAR_MS over the bare combine."""
    v = p.get("floor_verdict")
    if v == "combine" and p.get("ukern_ms") is not None and p.get("floor_det_ms") is not None:
        return sweep_plan.combine_verdict(p["ukern_ms"], p["floor_det_ms"])
    return v


def reason(p):
    """A point's reason, with "at the combine floor" of a miss judged "over" (verdict) reworded."""
    r = p.get("reason")
    if r and verdict(p) == "over" and "at the combine floor: " in r:
        gap = (p["ukern_ms"] - p["floor_det_ms"]) * 1e3
        r = r.replace("at the combine floor: ", f"over the combine floor by {gap:.2f} us: ", 1)
    return r


def floor_count(points, kind):
    """'N of M': the kind's misses at a bare floor (bench/sweep_floor.py; sweep.py floor_reason),
    of its misses with floors; '-' where none has them (the kind, or JSONs before session 25)."""
    ms = [p for p in points if p["kind"] == kind and p.get("ukern_ms") is not None and not p.get("met")
          and p.get("floor_verdict")]
    return f"{sum(verdict(p) in AT_FLOOR for p in ms)} of {len(ms)}" if ms else "-"


def floor_bytes(p):
    """The input bytes a point's floors read (sweep.py floor_reason: a fused row sum's two inputs)."""
    return p.get("floor_bytes") or p["size_bytes"]


def floor_table(points):
    """Reduction, argmax and fused row misses by the bytes their floors read: at the bare floor or
    over it, with the floors' ms (issue 25 item 5: what the GPU allows against what ukern's
    kernels cost)."""
    by = OrderedDict()
    for p in sorted(points, key=floor_bytes):
        if p.get("floor_verdict") and p.get("ukern_ms") is not None and not p.get("met"):
            by.setdefault(floor_bytes(p), []).append(p)
    if not by:
        return []
    out = ["", "### Reduction, argmax and fused row misses against bare kernels of the same bytes", "",
           "Each miss's input bytes timed in the same run by bare float32 sums (`bench/sweep_floor.py`): a "
           "read (each block stores its sum and ends: the floor of any kernel reading the bytes) and the "
           "fastest deterministic combine across blocks (a split with a count and the last block's combine, "
           "ukern's ending, or one thread-block cluster up to 4 MiB). At the read floor: the read misses the "
           "point's target. At the combine floor: the read meets it, the combine misses, the point's "
           "outputs are too few to give every SM two blocks without a combine, and the point's time is "
           f"within {sweep_plan.FLOOR_NEAR_MS * 1e3:g} us of the combine's. Over it: the same, further over "
           "the combine (the rest is ukern's kernel). ukern's: a bare kernel of the kind the point needs meets it. A fused row program (below 32 MiB) is judged by the sum of its "
           "inputs: it reads them and combines each row's blocks as the sum does, and writes besides; its "
           "outputs are its rows.", "",
           "| input bytes | misses | at the read floor | at the combine floor | over it | ukern's | bare read ms | "
           "bare combine ms (how) | ukern ms, range |",
           "|---|---|---|---|---|---|---|---|---|"]
    for nb, ps in by.items():
        f = ps[0]
        n = {v: sum(verdict(p) == v for p in ps) for v in ("read", "combine", "over", "ukern")}
        how = f"one cluster of {f['floor_cluster_grid']}" if f.get("floor_cluster_ms") is not None and \
            f["floor_det_ms"] == f["floor_cluster_ms"] else f"split over {f['floor_split_grid']} blocks"
        us = sorted(p["ukern_ms"] for p in ps)
        out.append(f"| {size_str(nb)} | {len(ps)} | {n['read']} | {n['combine']} | {n['over']} | {n['ukern']} | "
                   f"{fmt(f['floor_read_ms'])} | {fmt(f['floor_det_ms'])} ({how}) | {fmt(us[0])} - {fmt(us[-1])} |")
    return out


# How far the empty-launch reference moved between two runs of one build on one H200 (0.26 us:
# docs/PERF.md "Session 28"), rounded up: points nearer their launch bound than this may change
# status from run to run with the kernels' times unchanged.
NEAR_MS = 0.0003


def launch_margins(doc):
    """(kind, ukern ms less the launch bound) of each timed point below BIG: the bound as sweep.py
    target_miss draws it, the empty launch + the point's bytes at the copy rate + 2 us. Empty where
    the JSON lacks the copy rate (before session 15)."""
    m = doc["meta"]
    if not m.get("copy_rate_Bps") or m.get("empty_kernel_ms") is None:
        return []
    return [(p["kind"], p["ukern_ms"] - (m["empty_kernel_ms"] + p["bytes"] / m["copy_rate_Bps"] * 1e3 + 0.002))
            for p in doc["points"]
            if p.get("ukern_ms") is not None and p.get("bytes") and p["size_bytes"] < sweep_plan.BIG]


def near_text(doc):
    """A sentence: the points below BIG within NEAR_MS of their launch bound, missed and met, per kind."""
    ms = launch_margins(doc)
    if not ms:
        return []
    kinds = [k for k in KIND_ORDER if any(kind == k for kind, _ in ms)]
    over = {k: sum(1 for kind, d in ms if kind == k and 0 < d <= NEAR_MS) for k in kinds}
    under = {k: sum(1 for kind, d in ms if kind == k and -NEAR_MS <= d <= 0) for k in kinds}
    each = ", ".join(f"{k} {over[k]} / {under[k]}" for k in kinds)
    return ["", f"Below {size_str(sweep_plan.BIG)}, {sum(over.values())} points are over their launch bound by at "
            f"most {NEAR_MS * 1e3:g} us and {sum(under.values())} under it by at most as much (missed / met: "
            f"{each}): the empty-launch reference, timed once a run, moved 0.26 us between two runs of one "
            f"build with the kernels' times unchanged (docs/PERF.md \"Session 28\"), so these may change "
            f"status from run to run."]


def markdown(doc):
    m, points = doc["meta"], doc["points"]
    dev = m["device"]
    out = [SECTION, "",
           f"Generated by `bench/sweep_report.py` from `bench/sweep.py`'s JSON: {dev['name']} "
           f"({dev['sms']} SMs), CuPy {m['cupy']}, torch {m.get('torch')}, ukern {m['ukern']}, "
           f"{'--quick' if m.get('quick') else 'full'} profile, float32, {reps_text(m)}, "
           f"L2 flushed before each timed call ({flush_text(m)}), empty-kernel launch "
           f"{m['empty_kernel_ms']:.4f} ms ({empty_text(m)}), {m.get('elapsed_s')} s{parts_text(m)}"
           f"{'' if m.get('done') else ' (cut short: partial JSON' + missing_text(m) + ')'}. "
           f"`bytes` is an ideal kernel's traffic; copy = cudaMemcpy D2D moving the same bytes; "
           f"share = copy ms / ukern ms. Targets (issue 25): >= 32 MiB, 90% of the copy rate "
           f"(fused row programs 1.15x one read + one write where a row fits in shared memory, else "
           f"two reads + one write); below, within 2 us of an empty launch + the bytes at the copy rate; "
           f"never slower than CuPy or torch.compile ({m['noise_rule']}). Reductions over several "
           f"(not all) axes also time a two-level reduction and, for non-adjacent axes, a transposing "
           f"pass with today's kernels (issue 25 item 3's candidates).", "",
           "| kind | met / timed | points (errors) | misses at the bare floor | worst point | share of copy | reason |",
           "|---|---|---|---|---|---|---|"]
    for kind, met, timed, total, errs, w in summary(points):
        ws = f"{size_str(w['size_bytes'])} {label(w)}" if w else ""
        out.append(f"| {kind} | {met} / {timed} | {total} ({errs}) | {floor_count(points, kind)} | {ws} | "
                   f"{fmt(share(w, 'ukern_ms'), 2) if w else ''} | {(w and reason(w)) or ''} |")
    out += near_text(doc)
    misses = [p for p in points if p.get("ukern_ms") is not None and not p.get("met")]
    out += floor_table(points)
    out += ["", f"### Points missing the target ({len(misses)})", ""]
    if misses:
        out += ["| kind | size | point | ukern ms | copy ms | CuPy ms | torch ms | reason | ukern's plan |",
                "|---|---|---|---|---|---|---|---|---|"]
        for p in misses:
            out.append(f"| {p['kind']} | {size_str(p['size_bytes'])} | {label(p)} | {fmt(p['ukern_ms'])} | "
                       f"{fmt(p['copy_ms'])} | {fmt(p['cupy_ms'])} | {fmt(p.get('torch_ms'))} | {reason(p)} | "
                       f"{p.get('plan', '')} |")
    errs = [p for p in points if "error" in p]
    if errs:
        out += ["", f"### Points not measured ({len(errs)})", ""]
        for p in errs:
            out.append(f"- {p['kind']} {size_str(p['size_bytes'])} {label(p)}: {p['error']}")
    out += ["", "### Every point", "", "<details><summary>table</summary>", "",
            "| kind | size | point | bytes | ukern ms | copy ms | share | CuPy ms | torch ms | CUB ms | "
            "two-level / transpose ms | met |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for p in points:
        if p.get("ukern_ms") is None:
            continue
        out.append(f"| {p['kind']} | {size_str(p['size_bytes'])} | {label(p)} | {p['bytes']} | {fmt(p['ukern_ms'])} | "
                   f"{fmt(p['copy_ms'])} | {fmt(p['share_of_copy'], 2)} | {fmt(p['cupy_ms'])} | "
                   f"{fmt(p.get('torch_ms'))} | {fmt(p.get('cub_ms'))} | "
                   f"{' / '.join(fmt(p.get(k)) for k in ('alt_two_level_ms', 'alt_transpose_ms') if k in p)} | "
                   f"{'yes' if p['met'] else 'no'} |")
    out += ["", "</details>", ""]
    return "\n".join(out)


def update_perf(path, text):
    """Replace the section "## Sweep" of path (up to the next "## ") with text, or append it."""
    old = open(path).read() if os.path.exists(path) else "# Performance notes\n"
    lines = old.split("\n")
    try:
        i = lines.index(SECTION)
    except ValueError:
        new = old.rstrip("\n") + "\n\n" + text
    else:
        j = next((k for k in range(i + 1, len(lines)) if lines[k].startswith("## ")), len(lines))
        new = "\n".join(lines[:i]) + "\n" + text + ("\n" + "\n".join(lines[j:]) if j < len(lines) else "")
    with open(path, "w") as f:
        f.write(new.rstrip("\n") + "\n")


def panel_key(p):
    if p["kind"] == "fusion":
        return p["variant"] + ("" if p.get("width") is None else f" w={p['width']}")
    if p["kind"] == "reduction":
        return f"{p['variant']} axes {p['axes']}"
    return p["variant"]


def plots(doc, folder):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:
        print(f"plots skipped: matplotlib not available ({e})", file=sys.stderr)
        return []
    os.makedirs(folder, exist_ok=True)
    by = defaultdict(lambda: OrderedDict())
    for p in doc["points"]:
        if p.get("ukern_ms") is not None:
            by[p["kind"]].setdefault(panel_key(p), []).append(p)
    made = []
    series = (("ukern_ms", "ukern", "C0"), ("cupy_ms", "CuPy", "C1"), ("torch_ms", "torch.compile", "C2"),
              ("cub_ms", "ukern CUB block reduce", "C3"))
    for kind, panels in by.items():
        n = len(panels)
        cols = min(n, 7)
        rows = math.ceil(n / cols)
        fig, axs = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.6 * rows), squeeze=False, sharey=True)
        for ax, (key, ps) in zip(axs.flat, panels.items()):
            ps = sorted(ps, key=lambda p: p["size_bytes"])
            for col, name, color in series:
                pts = [(p["size_bytes"], share(p, col)) for p in ps if share(p, col)]
                if pts:
                    ax.plot(*zip(*pts), marker="o", ms=3, label=name, color=color)
            ax.axhline(0.9, color="grey", lw=0.7, ls="--")
            ax.set_xscale("log", base=2)
            ax.set_title(key, fontsize=8)
            ax.tick_params(labelsize=7)
        for ax in list(axs.flat)[n:]:
            ax.axis("off")
        axs.flat[0].set_ylabel("share of copy rate")
        axs.flat[0].legend(fontsize=6)
        fig.suptitle(f"{kind}: share of the copy rate by size (bytes), {doc['meta']['device']['name']}", fontsize=9)
        fig.tight_layout()
        path = os.path.join(folder, f"sweep_{kind}.png")
        fig.savefig(path, dpi=80)
        plt.close(fig)
        made.append(path)
    return made


def load(paths):
    """One sweep document from one or several JSON files (merged)."""
    docs = []
    for path in paths:
        with open(path) as f:
            docs.append(json.load(f))
    return sweep_plan.merge(docs, names=[os.path.basename(p) for p in paths])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json", nargs="+")
    ap.add_argument("--md")
    ap.add_argument("--plots")
    ap.add_argument("--perf")
    ap.add_argument("--out-json", help="the merged sweep JSON")
    a = ap.parse_args()
    try:
        doc = load(a.json)
    except ValueError as e:
        sys.exit(f"sweep_report.py: {e}")
    if a.out_json:
        tmp = a.out_json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=0)
        os.replace(tmp, a.out_json)
    text = markdown(doc)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)
    elif not a.perf:
        print(text)
    if a.perf:
        update_perf(a.perf, text)
    if a.plots:
        for path in plots(doc, a.plots):
            print("wrote", path, file=sys.stderr)
    for kind, met, timed, total, errs, w in summary(doc["points"]):
        print(f"{kind}: {met}/{timed} met ({total} points, {errs} not measured); worst: "
              f"{(size_str(w['size_bytes']) + ' ' + label(w) + ' ' + (reason(w) or 'met')) if w else '-'}",
              file=sys.stderr)


if __name__ == "__main__":
    main()
