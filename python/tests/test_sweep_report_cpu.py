"""bench/sweep_report.py on a made-up sweep JSON: the summary per kind, the misses
with their reasons, a partial sweep, and the PERF.md section replaced in place."""
import importlib.util
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("sweep_report", os.path.join(HERE, "..", "..", "bench", "sweep_report.py"))
sr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sr)


def doc(done=True):
    pts = []
    for kind, var, shape, axes in (("reduction", "3-D 256x1024x1024", [256, 1024, 1024], [0, 2]),
                                   ("fusion", "softmax", [4096, 4096], None)):
        for s, u, met in ((26, 0.5, False), (30, 0.25, True)):
            pts.append({"kind": kind, "variant": var, "shape": shape, "axes": axes, "width": None,
                        "size_bytes": 1 << s, "log2_size": s, "bytes": 2 << s, "ukern_ms": u, "copy_ms": 0.2,
                        "cupy_ms": 0.3, "torch_ms": None, "cub_ms": None, "share_of_copy": 0.2 / u, "met": met,
                        "reason": None if met else f"{kind} slow {s}"})
    pts.append({"kind": "argmax", "variant": "full", "shape": [16], "axes": None, "width": None,
                "size_bytes": 1 << 16, "log2_size": 16, "error": "skipped: time budget spent", "met": None})
    meta = {"device": {"name": "GPU-X", "sms": 132}, "cupy": "14.2", "torch": "2.9", "ukern": "0.1", "quick": True,
            "reps": 7, "warm": 2, "empty_kernel_ms": 0.0021, "elapsed_s": 12.0, "noise_rule": "n"}
    if done:
        meta["done"] = True
    return {"meta": meta, "points": pts}


def test_summary_and_misses():
    text = sr.markdown(doc())
    assert text.startswith("## Sweep\n")
    assert "| reduction | 1 / 2 | 2 (0) | - | 64 MiB 3-D 256x1024x1024 256x1024x1024 axes 0,2 | 0.40 | " \
        "reduction slow 26 |" in text
    assert "| fusion | 1 / 2 | 2 (0) | - | 64 MiB softmax 4096x4096 | 0.40 | fusion slow 26 |" in text
    assert "| argmax | 0 / 0 | 1 (1) | - |" in text
    assert "against bare kernels" not in text   # no floors in this JSON (before session 25)
    assert "### Points missing the target (2)" in text
    assert "- argmax 64 KiB full 16: skipped: time budget spent" in text
    assert "cut short" not in text
    assert "cut short: partial JSON" in sr.markdown(doc(done=False))
    # the flush: a JSON without l2_flush was made by a sweep that wrote the buffer
    assert "(a 256 MiB buffer written: the timed call also writes back" in text
    read = doc()
    read["meta"]["l2_flush"] = "read"
    assert "(a 256 MiB buffer read: no dirty lines left)" in sr.markdown(read)
    # the empty kernel: timed unlike the points before session 15, as they are after
    assert "(the host's launch inside the timed interval, unlike the points')" in text
    read["meta"].update(empty_kernel_timing="flushed", empty_kernel_host_ms=0.0061)
    assert "(timed as the points are, the host's launch before the start event; with it inside: 0.0061 ms)" \
        in sr.markdown(read)


def test_perf_section_replaced(tmp_path):
    perf = tmp_path / "PERF.md"
    perf.write_text("# P\n\n## A\na\n\n## Sweep\nold table\n\n## B\nb\n")
    sr.update_perf(str(perf), sr.markdown(doc()))
    new = perf.read_text()
    assert "old table" not in new and new.count("## Sweep") == 1
    assert new.index("## A") < new.index("## Sweep") < new.index("## B") and new.endswith("b\n")
    perf2 = tmp_path / "P2.md"
    perf2.write_text("# P\n")
    sr.update_perf(str(perf2), "## Sweep\nx\n")
    assert perf2.read_text() == "# P\n\n## Sweep\nx\n"


def test_cli_md(tmp_path):
    j = tmp_path / "s.json"
    j.write_text(json.dumps(doc()))
    md = tmp_path / "s.md"
    import subprocess
    import sys
    r = subprocess.run([sys.executable, spec.origin, str(j), "--md", str(md)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert md.read_text() == sr.markdown(doc())
    assert "reduction: 1/2 met (2 points, 0 not measured); worst: 64 MiB" in r.stderr


def floored(p, verdict, det, split, cluster=None, grid=512, cgrid=None):
    p.update(floor_verdict=verdict, floor_det_ms=det, floor_split_ms=split, floor_split_grid=grid,
             floor_cluster_ms=cluster, floor_cluster_grid=cgrid, floor_read_ms=0.0185, floor_read_grid=2048)
    return p


def test_floors():
    """Misses with bare floors (sweep.py's floor_reason): counted per kind (at the read or the
    combine floor), tabled per size with the floor that decided (a split's blocks, or a
    cluster's where it was faster)."""
    d = doc()
    red64 = d["points"][0]
    floored(red64, "combine", 0.0201, 0.0201)
    extra = []
    for k, (verdict, cl) in enumerate((("ukern", 0.00474), ("combine", None), ("read", None))):
        q = dict(red64, size_bytes=1 << 18, log2_size=18, ukern_ms=0.0057 + k * 0.0001, met=False)
        extra.append(floored(q, verdict, cl or 0.00525, 0.00525, cluster=cl, grid=64, cgrid=4 if cl else None))
    # a fused row sum of 256 KiB reads two inputs: tabled under its floors' 512 KiB
    fus = next(p for p in d["points"] if p["kind"] == "fusion")
    extra.append(floored(dict(fus, size_bytes=1 << 18, log2_size=18, ukern_ms=0.0061, met=False, floor_bytes=1 << 19),
                         "combine", 0.0059, 0.0059, grid=128))
    d["points"] += extra
    text = sr.markdown(d)
    assert "| fusion | 1 / 3 | 3 (0) | 1 of 1 |" in text
    assert "### Reduction, argmax and fused row misses against bare kernels of the same bytes" in text
    assert "| 512 KiB | 1 | 0 | 1 | 0 | 0 | 0.0185 | 0.0059 (split over 128 blocks) | 0.0061 - 0.0061 |" in text
    assert text.index("| 256 KiB | 3 |") < text.index("| 512 KiB | 1 |") < text.index("| 64 MiB | 1 |")
    # sizes in order; the first point of a size names its floor (all of a size share it)
    # 0.0058 against a combine of 0.00525: over it by 0.55 us
    assert "| 256 KiB | 3 | 1 | 0 | 1 | 1 | 0.0185 | 0.0047 (one cluster of 4) | 0.0057 - 0.0059 |" in text
    # 0.5 ms against a combine of 0.0201: far over that floor, the rest ukern's kernel
    assert "| 64 MiB | 1 | 0 | 0 | 1 | 0 | 0.0185 | 0.0201 (split over 512 blocks) | 0.5000 - 0.5000 |" in text
    assert "| reduction | 1 / 5 | 5 (0) | 1 of 4 |" in text
    assert text.index("| 256 KiB | 3 |") < text.index("| 64 MiB | 1 |")


def test_over_the_combine_floor():
    """A "combine" verdict further than 0.3 us over the bare combine is "over" it (sweep_plan.combine_verdict),
    in the counts and in the miss's reason; within 0.3 us it stays at the floor."""
    assert sr.sweep_plan.combine_verdict(0.006, 0.0058) == "combine"
    assert sr.sweep_plan.combine_verdict(0.00611, 0.0058) == "over"
    d = doc()
    red64 = d["points"][0]
    floored(red64, "combine", 0.0201, 0.0201)
    red64["reason"] = "90% of the copy rate; at the combine floor: the bare deterministic combine misses too"
    near = floored(dict(red64, ukern_ms=0.0203), "combine", 0.0201, 0.0201)
    d["points"].append(near)
    sr_ = sr.reason(red64)
    assert sr_.startswith("90% of the copy rate; over the combine floor by 479.90 us: the bare") and \
        sr.reason(near) == near["reason"]
    text = sr.markdown(d)
    assert "| 64 MiB | 2 | 0 | 1 | 1 | 0 |" in text and "over the combine floor by 479.90 us" in text


def test_near_launch_bound():
    """Points below 32 MiB within 0.3 us of their launch bound, counted per kind from the JSON's own
    references (the bound as sweep.py draws it); none of that without a copy rate (old JSONs)."""
    d = doc()
    d["meta"]["copy_rate_Bps"] = 4e12
    base = {"variant": "v", "shape": [8], "axes": None, "width": None, "copy_ms": 0.003, "cupy_ms": 0.01,
            "share_of_copy": 0.5, "torch_ms": None, "cub_ms": None, "reason": None}
    bound = 0.0021 + 4096 / 4e12 * 1e3 + 0.002   # empty launch + bytes at the copy rate + 2 us
    for kind, delta in (("reduction", 0.0002), ("reduction", 0.0004), ("reduction", -0.0001),
                        ("fusion", -0.00029), ("fusion", -0.0005), ("elementwise", 0.0001)):
        d["points"].append(dict(base, kind=kind, size_bytes=4096, log2_size=12, bytes=4096, ukern_ms=bound + delta,
                                met=delta <= 0, reason=None if delta <= 0 else "slow"))
    # a big point near 90% of the copy rate is not a launch-bound one
    d["points"].append(dict(base, kind="reduction", size_bytes=64 << 20, log2_size=26, bytes=64 << 20,
                            ukern_ms=bound, met=False, reason="slow"))
    margins = sr.launch_margins(d)
    assert len(margins) == 6 and all(abs(m) < 0.001 for _, m in margins)
    text = sr.markdown(d)
    assert ("Below 32 MiB, 2 points are over their launch bound by at most 0.3 us and 2 under it by at most as "
            "much (missed / met: elementwise 1 / 0, reduction 1 / 1, fusion 0 / 1)") in text
    del d["meta"]["copy_rate_Bps"]
    assert sr.launch_margins(d) == [] and "over their launch bound" not in sr.markdown(d)
