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

SETUP = r'''
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
'''

DRIVER = SETUP + r'''

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


FLOORS = SETUP + r'''
sw.EMPTY_MS, sw.COPY_RATE[0], sw.DEVICE_SMS[0] = 0.003, 4e12, 132
# 4 MiB: bound 0.003 + 2^22 / 4e12 s + 0.002 = 0.006049 ms; 64 MiB: 90% of the copy's rate
sw._floor_cache[1 << 22] = dict(read_ms=0.0050, read_grid=128, split_ms=0.0063, split_grid=128,
                                cluster_ms=0.0070, cluster_grid=8, det_ms=0.0063)
sw._floor_cache[1 << 26] = dict(read_ms=0.0188, read_grid=2048, split_ms=0.0199, split_grid=512,
                                cluster_ms=None, cluster_grid=None, det_ms=0.0199)
sw._floor_cache[1 << 18] = dict(read_ms=0.0049, read_grid=64, split_ms=0.0052, split_grid=64,
                                cluster_ms=0.0047, cluster_grid=4, det_ms=0.0047)
sw._floor_cache[1 << 20] = dict(read_ms=0.0060, read_grid=64, split_ms=0.0070, split_grid=64,
                                cluster_ms=None, cluster_grid=None, det_ms=0.0070)
sweep_floor = sys.modules["sweep_floor"]
def broken(nb):
    raise AssertionError("floor split of 64 bytes: wrong")
sweep_floor.check = broken
q = dict(kind="argmax", shape=[16], axes=None, size_bytes=64)
failed = [sw.floor_reason(q, 0.004, 64), q.get("floor_error"), q.get("floor_verdict")]
out = []
# ukern_ms: within 0.3 us of the bare combine (at its floor), or (the last) 1 us over it
for size, shape, axes, c, u in ((22, [1024, 1024], [0, 1], None, 0.0066), (22, [1024, 1024], [1], None, 0.0066),
                                (22, [16, 256, 256], [0], None, 0.0066), (22, [1024, 1024], [0], None, 0.0066),
                                (26, [4096, 4096], [0, 1], 0.0176, 0.0201), (18, [256, 256], [0, 1], None, 0.0050),
                                (20, [512, 512], [1], None, 0.0072), (22, [1024, 1024], [0, 1], None, 0.0073)):
    p = dict(kind="reduction", shape=shape, axes=axes, size_bytes=1 << size, ukern_ms=u)
    r = sw.floor_reason(p, c or 0.004, 1 << size)
    out.append([p["floor_verdict"], r, sw.combine_free(p), p["floor_det_ms"]])
# fused row programs through finish(): judged by the floors of their inputs' bytes, below BIG only
sw._floor_cache[1 << 21] = dict(read_ms=0.0050, read_grid=128, split_ms=0.0058, split_grid=128,
                                cluster_ms=0.0061, cluster_grid=8, det_ms=0.0058)
sw.copy_ms = lambda nb: nb / 4e12 * 1e3
fus = []
for shape, size, ins, traffic in (([4, 65536], 20, 1 << 21, (1 << 21) + 16),  # two inputs of 1 MiB, 4 rows
                                  ([16, 65536], 22, 1 << 22, 1 << 23),         # one in, one out: the combine meets
                                  ([1024, 1024], 22, 1 << 22, 1 << 22)):       # 1024 rows need no combine
    p = dict(kind="fusion", variant="softmax", shape=shape, axes=None, width=shape[-1], size_bytes=1 << size)
    sw.finish(p, 0.02, 0.05, traffic, floor_bytes=ins)
    fus.append([p.get("floor_verdict"), p.get("floor_bytes"), p["reason"], sw.combine_free(p)])
p = dict(kind="fusion", variant="softmax", shape=[64, 1 << 20], axes=None, width=1 << 20, size_bytes=1 << 28)
sw.finish(p, 1.0, 2.0, 1 << 29, target_ms=0.2, row_rule="two reads + one write", floor_bytes=1 << 28)
fus.append([p.get("floor_verdict"), p["met"]])
print(json.dumps(out + [failed, fus]))
'''


def test_floor_reason(tmp_path):
    """sweep.py's verdict on a miss from the bare floors (stand-in floors, no GPU): at the
    combine floor where the point needs a combine across blocks and the bare combine misses
    (over it where the point is more than 0.3 us slower than that combine),
    ukern's where its outputs fill the SMs without one (the bare read meets), at the read
    floor where even the read misses, ukern's where the bare combine meets; floors that
    fail are recorded and the point goes on. A fused row program below 32 MiB is judged the
    same by the floors of its inputs' bytes, its rows its outputs."""
    drv = tmp_path / "floors.py"
    drv.write_text(FLOORS)
    r = subprocess.run([sys.executable, str(drv)], cwd=ROOT, capture_output=True, text=True,
                       env=dict(os.environ, GRAPHS_PER_COMPILE="1", PYTHONDONTWRITEBYTECODE="1"))
    assert r.returncode == 0, r.stderr[-3000:]
    full, rows, cols16k, cols1k, big, small, slow, over, failed, fus = json.loads(r.stdout.strip().splitlines()[-1])
    # floors that fail leave the point its timings and say why (no verdict)
    assert failed == ["no bare floors: AssertionError: floor split of 64 bytes: wrong",
                      "AssertionError: floor split of 64 bytes: wrong", None]
    assert full[0] == "combine" and not full[2]
    assert full[1] == ("at the combine floor: the bare deterministic combine 0.0063 ms, split over 128 blocks "
                       "misses too (bare read 0.0050 ms: met only without a combine)")
    assert rows[0] == "ukern" and rows[2]             # 1024 outputs, innermost reduced: >= 264
    assert "outputs enough to need no combine" in rows[1]
    assert cols16k[0] == "ukern" and cols16k[2]       # 65536 columns kept: >= 32 x 264
    assert cols1k[0] == "combine" and not cols1k[2]   # 1024 columns: too few for 264 blocks of 32
    assert big[0] == "combine" and "0.0199 ms, split over 512 blocks" in big[1]
    assert small[0] == "ukern" and small[3] == 0.0047 and "one cluster of 4" in small[1]
    assert slow[0] == "read" and slow[1] == ("at the read floor: a kernel that only reads these bytes misses too "
                                             "(bare read 0.0060 ms)")
    # 1 us over the bare combine (which misses too): over that floor, the rest ukern's kernel
    assert over[0] == "over" and over[1] == ("over the combine floor by 1.00 us: the bare deterministic combine "
                                             "0.0063 ms, split over 128 blocks misses too (bare read 0.0050 ms: "
                                             "met only without a combine)")
    # fused row programs: the floors of their inputs (a row sum's two), their rows as outputs
    assert fus[0][:2] == ["over", 1 << 21] and "over the combine floor by 14.20 us" in fus[0][2] and not fus[0][3]
    assert fus[1][:2] == ["ukern", 1 << 22] and "bare kernels of these bytes meet it" in fus[1][2]
    assert fus[2][0] == "ukern" and "outputs enough to need no combine" in fus[2][2] and fus[2][3]
    assert fus[3] == [None, False]                    # 256 MiB: the row rule's target, no floors
