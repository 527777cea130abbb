"""bench/sweep.py's harness on stand-ins for CuPy, ukern and torch (none of them a GPU):
main() runs a shard's points with runners that time nothing but go through gpu_ms,
torch_time and finish, writes the JSON with the shard's meta, records a failing point
and goes on; the shards' JSONs merge into every point once; torch.compile keeps one
function per program with dynamo's recompile limits raised, and falls back to a dynamo
reset when a new shape adds no graph. Each run is a subprocess (the stand-ins replace
modules)."""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

DRIVER = r'''
import collections, json, os, random, sys, types
import numpy as np

random.seed(1)
cp = types.ModuleType("cupy")
cp.__version__ = "stand-in"
cp.float32, cp.float64, cp.uint8 = np.float32, np.float64, np.uint8
for f in ("max", "mean", "sum", "exp", "sqrt"):
    setattr(cp, f, getattr(np, f))


class Arr:
    def __init__(self, n, dtype=None):
        self.data = types.SimpleNamespace(ptr=0)

    def fill(self, v):
        pass


class Event:
    def record(self):
        pass

    def synchronize(self):
        pass


cp.empty, cp.ndarray = Arr, Arr
cp.RawKernel = lambda src, name: (lambda *a: None)
cp.get_default_memory_pool = lambda: types.SimpleNamespace(free_all_blocks=lambda: None)
# times that spread by 30% now and then: some columns are timed again
cp.cuda = types.SimpleNamespace(
    Event=Event, get_elapsed_time=lambda a, b: random.choice([1.0, 1.0, 1.01, 1.3]),
    get_current_stream=lambda: types.SimpleNamespace(ptr=0), Device=lambda *a: types.SimpleNamespace(id=0),
    runtime=types.SimpleNamespace(getDeviceProperties=lambda i: {"name": b"GPU-X", "multiProcessorCount": 132},
                                  memcpyAsync=lambda *a: None, memcpyDeviceToDevice=3))
sys.modules["cupy"] = cp
uk = types.ModuleType("ukern")
uk.__version__ = "stand-in"
sys.modules["ukern"] = uk

torch = types.ModuleType("torch")
torch.__version__ = "stand-in"
for f in ("amax", "mean", "sum", "exp", "sqrt"):
    setattr(torch, f, lambda *a, **k: None)
counters = collections.defaultdict(collections.Counter)
state = {"graphs": int(os.environ["GRAPHS_PER_COMPILE"]), "resets": 0, "compiles": 0}
cfg = types.SimpleNamespace(recompile_limit=8, accumulated_recompile_limit=256)


def reset():
    state["resets"] += 1


def compile(fn, dynamic=None):
    assert dynamic is False
    state["compiles"] += 1

    def run(*a):
        counters["stats"]["unique_graphs"] += state["graphs"]
    return run


torch._dynamo = types.SimpleNamespace(config=cfg, reset=reset, utils=types.SimpleNamespace(counters=counters))
torch.compile = compile
torch.as_tensor = lambda a, device=None: a
torch.cuda = types.SimpleNamespace(synchronize=lambda: None)
sys.modules["torch"] = torch

sys.argv = ["sweep.py"] + sys.argv[1:]
sys.path.insert(0, "bench")
import importlib.util
spec = importlib.util.spec_from_file_location("sweep", "bench/sweep.py")
sw = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sw)


def runner(p):
    if p["kind"] == "argmax" and p["log2_size"] == 16 and p["variant"] == "full":
        raise RuntimeError("a failing point")
    t = sw.gpu_ms(lambda: None)
    tm = sw.torch_time(p, p["variant"], (Arr(1),)) if sw.plan.torch_planned(p, sw.QUICK) else None
    sw.finish(p, t, 2 * t, p["size_bytes"], torch_ms=tm)


for name in ("run_ew_contig", "run_ew_row", "run_ew_col", "run_ew_transposed", "run_reduction", "run_argmax",
             "run_axpy", "run_rowop"):
    setattr(sw, name, runner)
sw.main()
halves = [sw.copy_half(n) for n in (8, 16383, 16384, (1 << 26) + 4, (1 << 26) + 131072, (1 << 26) + 131074)]
print(json.dumps({"cfg": vars(cfg), "state": state, "halves": halves, "flush": sw.ARGS.flush}))
'''


def run_shard(tmp_path, shard, graphs=1, extra=()):
    drv = tmp_path / "drive.py"
    drv.write_text(DRIVER)
    out = tmp_path / f"s{shard}.json"
    r = subprocess.run([sys.executable, str(drv), "--out", str(out), "--shard", f"{shard}/2",
                        "--kinds", "argmax,fusion", *extra], cwd=ROOT, capture_output=True, text=True,
                       env=dict(os.environ, GRAPHS_PER_COMPILE=str(graphs), PYTHONDONTWRITEBYTECODE="1"))
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(out.read_text()), json.loads(r.stdout.strip().splitlines()[-1]), r.stderr


def test_shards_run_and_merge(tmp_path):
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    try:
        import sweep_plan as plan
    finally:
        sys.path.pop(0)
    (d0, s0, log0), (d1, _, _) = run_shard(tmp_path, 0), run_shard(tmp_path, 1)
    # the copy reference: half the bytes, whole 4 KiB from 8 KiB (the driver's other sizes cost 2.5 us)
    assert s0["halves"] == [4, 8191, 8192, 1 << 25, (1 << 25) + 65536, (1 << 25) + 65536]
    assert s0["flush"] == "read"
    assert d0["meta"]["l2_flush"] == "read"
    assert d0["meta"]["empty_kernel_timing"] == "flushed" and "empty_kernel_host_ms" in d0["meta"]
    m0 = d0["meta"]
    assert m0["shard"] == [0, 2] and m0["done"] is True and m0["planned"] == len(d0["points"])
    assert m0["reps_big"] == 5 and m0["warm_big"] == 1 and m0["estimate_s"] > 0
    assert "estimate: 248 points, " in log0 and "on 2 GPUs" in log0
    assert "done: " in log0 and f"(estimate {m0['estimate_s']:.0f} s)" in log0
    failed = [p for p in d0["points"] + d1["points"] if "error" in p]
    assert [(p["variant"], p["log2_size"], p["met"]) for p in failed] == [("full", 16, None)]
    assert "RuntimeError: a failing point" in failed[0]["error"]
    assert any(p.get("reps_extended") for p in d0["points"])       # 30% spread: timed again
    big = [p for p in d0["points"] if p["size_bytes"] >= 64 << 20]
    assert big and all(p.get("reps_extended", 0) <= 2 for p in big)
    # torch.compile: one function per program, the limits raised, no reset
    torch_pts = [p for p in d0["points"] + d1["points"] if p.get("torch_ms") is not None]
    assert len(torch_pts) == 3 * 29
    assert s0["cfg"]["recompile_limit"] >= 4096 and s0["cfg"]["accumulated_recompile_limit"] >= 65536
    assert s0["state"]["resets"] == 0 and s0["state"]["compiles"] <= 5
    merged = plan.merge([d1, d0])
    want = plan.enumerate_points(plan.FULL_SIZES, ("argmax", "fusion"), plan.FULL_WIDTHS)
    assert [(p["size_bytes"], plan.label(p)) for p in merged["points"]] == \
        [(p["size_bytes"], plan.label(p)) for p, _ in want]
    assert merged["meta"]["done"] is True


def test_torch_without_a_new_graph_resets(tmp_path):
    d, s, _ = run_shard(tmp_path, 1, graphs=0, extra=("--sizes", "26"))
    pts = [p for p in d["points"] if p.get("torch_ms") is not None]
    assert pts and all(p["torch_recompile"].startswith("no new graph") for p in pts)
    assert s["state"]["resets"] == len(pts)


@pytest.mark.parametrize("args,msg", [(("--only", "no such point"), "0 points"),
                                      (("--only", "axpy", "--sizes", "30"), "1 points")])
def test_only(tmp_path, args, msg):
    d, _, log = run_shard(tmp_path, 0, extra=args)
    assert f"estimate: {msg}," in log
    assert all(p["variant"] == "axpy" for p in d["points"])
