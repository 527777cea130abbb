"""bench/sweep_plan.py without CuPy or a GPU: the points of each profile, --only,
the dealing of points to shards (--shard I/N), the estimate, the merge of shard and
split-run JSONs, and bench/sweep.py --estimate (which must not import CuPy)."""
import importlib.util
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, "..", "..", "bench")


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(BENCH, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


plan = load("sweep_plan")
FULL, QUICK = plan.profile(False), plan.profile(True)


def full_points(kinds=plan.KINDS):
    return plan.enumerate_points(FULL["sizes"], kinds, FULL["widths"])


def test_profiles_and_points():
    full = full_points()
    quick = plan.enumerate_points(QUICK["sizes"], plan.KINDS, QUICK["widths"])
    # 4 elementwise + 34 reductions + 3 argmax + axpy + 4 row programs per width that fits;
    # at 256 KiB the 2-D templates (256, n/256) and (n/256, 256) are one shape: 3 fewer
    per_size = {s: 4 + 34 + 3 + 1 + 4 * sum(1 for w in FULL["widths"] if w <= (1 << s) // 4) for s in FULL["sizes"]}
    assert len(full) == sum(per_size.values()) - 3 == 549
    assert len(quick) == 260
    keys = [(p["size_bytes"], plan.label(p)) for p, _ in full]
    assert len(set(keys)) == len(keys)          # a label names one point per size
    assert [p["log2_size"] for p, _ in full[:3]] == [30, 30, 30]
    for p, runner in full:
        n = 1
        for d in p["shape"]:
            n *= d
        assert 4 * n == p["size_bytes"], p    # every point is its size of float32
        assert runner in ("ew_contig", "ew_row", "ew_col", "ew_transposed", "reduction", "argmax", "axpy", "rowop")
    # the points the earlier --quick sweeps ran, in the same order
    with open(os.path.join(BENCH, "results", "sweep-2026-11-27b-h200.json")) as f:
        old = json.load(f)["points"]
    fields = ("kind", "variant", "shape", "axes", "width", "size_bytes")
    assert [tuple(str(p[k]) for k in fields) for p in old] == [tuple(str(p[k]) for k in fields) for p, _ in quick]


def test_labels_and_only():
    pts = full_points()
    red = [p for p, _ in pts if p["kind"] == "reduction" and p["axes"] == [0, 2] and p["log2_size"] == 30]
    assert plan.label(red[0]) == "reduction 3-D 256x1024x1024 256x1024x1024 axes 0,2"
    soft = plan.select(pts, r"^fusion softmax 8192x")
    assert sorted(p["width"] for p, _ in soft) == [32, 128, 512, 2048, 8192, 32768]
    assert all(p["variant"] == "softmax" and p["shape"][0] == 8192 for p, _ in soft)
    assert plan.select(pts, None) == pts
    assert plan.select(pts, "no such point") == []
    assert len(plan.select(pts, "argmax first axis")) == 8
    with pytest.raises(ValueError, match=r"--only '\(': not a regular expression .*hint: quote it"):
        plan.select(pts, "(")


def test_parse_shard():
    assert plan.parse_shard("1/2") == (1, 2)
    assert plan.parse_shard(" 0 / 3 ") == (0, 3)
    for bad in ("2/2", "1", "-1/2", "a/b", "", "0/0"):
        with pytest.raises(ValueError, match=r"expected I/N with 0 <= I < N"):
            plan.parse_shard(bad)


def test_deal_is_a_balanced_partition():
    costs = [5.0, 1.0, 1.0, 3.0, 2.0, 2.0, 0.5]
    owner = plan.deal(costs, 2)
    loads = [sum(c for c, o in zip(costs, owner) if o == j) for j in range(2)]
    assert sorted(loads) == [7.0, 7.5]
    assert plan.deal(costs, 2) == owner          # every process deals alike
    assert plan.deal(costs, 1) == [0] * len(costs)
    assert sorted(set(plan.deal(costs, 3))) == [0, 1, 2]
    assert plan.deal([], 2) == []


@pytest.mark.parametrize("n", [1, 2, 3])
def test_shards_cover_every_point_once_and_take_about_equal_time(n):
    pts = full_points()
    got = []
    for i in range(n):
        mine, loads = plan.shard_points(pts, FULL, i, n)
        got += [(p["size_bytes"], plan.label(p)) for p, _ in mine]
        order = [pts.index(t) for t in mine]
        assert order == sorted(order)              # a shard runs its points in run order
    assert sorted(got) == sorted((p["size_bytes"], plan.label(p)) for p, _ in pts)
    biggest = max(plan.point_cost(p, FULL) for p, _ in pts)
    assert max(loads) - min(loads) <= biggest + 1e-9
    # the torch.compile points (the costliest) are spread over the shards
    if n == 2:
        torch_in = [sum(1 for p, _ in plan.shard_points(pts, FULL, i, 2)[0] if plan.torch_planned(p, False))
                    for i in range(2)]
        assert sum(torch_in) == 3 * 29 and abs(torch_in[0] - torch_in[1]) <= 3


def test_estimate_and_torch_rule():
    pts = full_points()
    one = plan.shard_points(pts, FULL, 0, 1)[1][0]
    two = plan.shard_points(pts, FULL, 0, 2)[1]
    assert max(two) < 0.7 * one                    # two GPUs: about half, plus each process's fixed costs
    q = plan.shard_points(plan.enumerate_points(QUICK["sizes"], plan.KINDS, QUICK["widths"]), QUICK, 0, 1)[1][0]
    assert 60 < q < 200                            # the --quick sweep took 70 s (2026-11-27b)
    text = plan.estimate_text(two, len(pts), 1)
    assert text.startswith(f"estimate: 549 points, {max(two):.0f} s wall on 2 GPUs (shard 0: ")
    assert text.endswith("this is shard 1")
    by = {plan.label(p) + str(p["log2_size"]): p for p, _ in pts}
    assert plan.torch_planned(by["fusion softmax 2048x8192" + "26"], False)
    assert not plan.torch_planned(by["fusion softmax 512x8192" + "24"], False)   # 16 MiB
    assert not plan.torch_planned(by["fusion softmax 8192x8192" + "28"], True)
    assert plan.torch_planned(by["fusion softmax 131072x128" + "26"], True)
    assert not plan.torch_planned(by["reduction 2-D 256x1048576 axes 0" + "30"], False)


def shard_doc(i, n, pts, quick=False, done=True):
    mine, _ = plan.shard_points(pts, FULL, i, n)
    out = []
    for p, _ in mine:
        q = dict(p, ukern_ms=1.0, copy_ms=0.9, cupy_ms=1.0, met=True, bytes=p["size_bytes"], share_of_copy=0.9)
        out.append(q)
    meta = {"device": {"name": f"GPU{i}", "sms": 132}, "cupy": "14", "ukern": "0.1", "quick": quick,
            "reps": 21, "warm": 3, "empty_kernel_ms": 0.009, "noise_rule": "n", "elapsed_s": 100.0 + i,
            "shard": [i, n], "run_key": "k", "planned": len(out)}
    if done:
        meta["done"] = True
    return {"meta": meta, "points": out}


def test_merge_shards():
    pts = full_points(("argmax", "fusion"))
    a, b = shard_doc(0, 2, pts), shard_doc(1, 2, pts)
    m = plan.merge([b, a], names=["b.json", "a.json"])
    assert [plan.label(p) + str(p["size_bytes"]) for p in m["points"]] == \
        [plan.label(p) + str(p["size_bytes"]) for p, _ in pts]          # run order again
    assert m["meta"]["done"] is True and "missing" not in m["meta"] and "shard" not in m["meta"]
    assert m["meta"]["elapsed_s"] == 101.0
    assert [(pt["name"], pt["shard"], pt["device"]) for pt in m["meta"]["parts"]] == \
        [("b.json", [1, 2], "GPU1"), ("a.json", [0, 2], "GPU0")]
    # one shard alone: a partial sweep that says which shard is missing
    alone = plan.merge([a])
    assert alone["meta"]["done"] is False and alone["meta"]["missing"] == ["shard 1/2"]
    cut = plan.merge([a, shard_doc(1, 2, pts, done=False)])
    assert cut["meta"]["done"] is False and "missing" not in cut["meta"]


def test_merge_split_runs_and_errors():
    big = plan.enumerate_points((30, 26), ("argmax",), FULL["widths"])
    small = plan.enumerate_points((16,), ("argmax",), FULL["widths"])
    d1, d2 = shard_doc(0, 1, big), shard_doc(0, 1, small)
    for d in (d1, d2):
        del d["meta"]["shard"]
    m = plan.merge([d2, d1])
    assert [p["log2_size"] for p in m["points"]] == [30] * 3 + [26] * 3 + [16] * 3
    assert m["meta"]["done"] is True
    assert plan.merge([d1]) is d1                   # one whole run: as it is
    with pytest.raises(ValueError, match=r"point 'argmax full 268435456' at 1073741824 bytes is in x.json and "
                                         r"y.json; hint: merge the shards of one run"):
        plan.merge([d1, d1], names=["x.json", "y.json"])
    q = shard_doc(0, 1, small, quick=True)
    with pytest.raises(ValueError, match=r"cannot merge a --quick sweep with a full one: input 1: full, input 2: quick"):
        plan.merge([d1, q])
    with pytest.raises(ValueError, match="no sweep JSON"):
        plan.merge([])


def test_sweep_estimate_runs_without_cupy(tmp_path):
    """--estimate plans and exits before importing CuPy (absent here)."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    script = os.path.join(BENCH, "sweep.py")
    r = subprocess.run([sys.executable, script, "--estimate", "--shard", "1/2"], capture_output=True, text=True,
                       env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("estimate: 549 points, ") and "on 2 GPUs (shard 0: " in r.stdout
    r = subprocess.run([sys.executable, script, "--estimate", "--list", "--only", "softmax 8192x", "--sizes", "26"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert lines[0].startswith("estimate: 1 points,") and "fusion softmax 8192x2048" in lines[1]
    for args, msg in ((["--only", "("], "not a regular expression"), (["--shard", "2/2"], "expected I/N"),
                      (["--kinds", "copy"], "--kinds copy: unknown; hint: choose from elementwise")):
        r = subprocess.run([sys.executable, script, "--estimate"] + args, capture_output=True, text=True, env=env)
        assert r.returncode != 0 and msg in r.stderr, (args, r.stderr)


def test_report_merges_several_jsons(tmp_path):
    pts = full_points(("argmax",))
    paths = []
    for i in range(2):
        p = tmp_path / f"sweep-shard{i}.json"
        p.write_text(json.dumps(shard_doc(i, 2, pts)))
        paths.append(str(p))
    out, md = tmp_path / "sweep.json", tmp_path / "sweep.md"
    report = os.path.join(BENCH, "sweep_report.py")
    r = subprocess.run([sys.executable, report] + paths + ["--out-json", str(out), "--md", str(md)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    merged = json.loads(out.read_text())
    assert len(merged["points"]) == len(pts) and merged["meta"]["done"] is True
    text = md.read_text()
    assert "| argmax | 24 / 24 | 24 (0) |" in text
    assert "(wall of the longest of 2 merged: shard 0/2: GPU0, " in text and "cut short" not in text
    r = subprocess.run([sys.executable, report, paths[0], paths[0], "--md", str(md)], capture_output=True, text=True)
    assert r.returncode != 0 and "is in sweep-shard0.json and sweep-shard0.json" in r.stderr
    r = subprocess.run([sys.executable, report, paths[0], "--md", str(md)], capture_output=True, text=True)
    assert r.returncode == 0 and "cut short: partial JSON; missing shard 1/2" in md.read_text()
