#!/usr/bin/env python3
"""The copy-rate sweep (issue 25): every kernel kind over sizes and shapes, each
point beside a device-to-device copy of the same bytes, CuPy and (for fusion)
torch.compile, all in one run on one GPU.

Kinds: elementwise (contiguous, row/column broadcast, one operand transposed),
reduction (sum over every axis subset of 2-D and 3-D arrays with short and long
axes on each side, the 3-D templates scaled to each size in log space), argmax
(full, last axis, first axis), fusion (axpy; and at row widths 32 .. 65536:
squared-distance row sums, softmax, layer norm, x - mean(x, -1, keepdims)).

Timing: CUDA events around the call alone, median of REPS after WARM warm-ups
(from 64 MiB: 5 after 1, and REPS more where those 5 spread by more than 5%);
before each timed call a kernel reads a 256 MiB buffer (L2 flushed), so every size
is measured from HBM like the copy beside it, and the L2 holds no dirty lines
(--flush write: the buffer is written instead, as before session 15; the timed
call then also pays for writing back the L2's dirty lines, which cost a read-only
kernel of 64 MiB about 6 us and a copy 2.4 us on an H200: docs/PERF.md "Session
15"). Compiles (ukern, CuPy, the torch.compile warm-up) happen before the timed
runs and are never timed.

A point's `bytes` is the traffic of an ideal kernel (inputs read once, outputs
written once); `copy_ms` is a cudaMemcpy device-to-device of bytes/2 (it reads
and writes bytes/2, so it moves the same bytes), rounded down to whole 4 KiB from
8 KiB (copy_half: the driver's copy of other sizes takes 2.4-2.8 us more).
share_of_copy = copy_ms/ukern_ms.
Targets (issue 25 item 2) are evaluated per point; `met` and `reason` say which
part failed. A failing point records its error and the sweep goes on.

Output: JSON (argv: --out FILE, rewritten after every point so a timeout leaves
the points done), progress on stderr. bench/sweep_report.py makes the markdown
table and the plots from the JSON.

Usage: python3 bench/sweep.py --out sweep.json [--quick] [--budget SECONDS]
       [--kinds elementwise,reduction,argmax,fusion] [--torch-max N] [--sizes 30,26]
       [--no-torch] [--shard I/N] [--only REGEX] [--estimate [--list]]
--quick: 4 sizes (64 KiB, 4 MiB, 64 MiB, 1 GiB), fewer widths and reps,
torch.compile at 9 points (axpy at 1 GiB; each row program at 64 MiB, rows of
128 and 2048; --torch-max caps the compiles), budget 270 s.
--shard I/N: this process runs shard I of N: the points are dealt by estimated
cost (bench/sweep_plan.py) so that the shards take about equal time; one process
per GPU (scripts/gpu-sweep.sh --full), JSONs merged by bench/sweep_report.py.
--only REGEX: the points whose label "kind variant shape [axes a,b]" matches
(re.search), e.g. --only 'fusion softmax 8192x' or --only 'axes 0,2$'.
--estimate: print the points and estimated seconds per shard and exit, without
CuPy or a GPU (--list: every point's label and estimate).
Points run largest-size-first, kinds interleaved, so a budget or timeout
cuts the least telling points. Needs CuPy; torch and the CUB variant optional.
"""
import argparse
import json
import os
import sys
import time
import traceback

import sweep_plan as plan   # bench/ is the script's folder, so on sys.path

ap = argparse.ArgumentParser()
ap.add_argument("--out", default="sweep.json")
ap.add_argument("--quick", action="store_true")
ap.add_argument("--budget", type=float, default=None, help="seconds; points after it are recorded as skipped")
ap.add_argument("--kinds", default=",".join(plan.KINDS))
ap.add_argument("--flush", choices=("read", "write"), default="read",
                help="L2 flush before each timed call: read 256 MiB (default; no dirty lines left) or write them")
ap.add_argument("--torch-max", type=int, default=None, help="most torch.compile compiles")
ap.add_argument("--no-torch", action="store_true")
ap.add_argument("--sizes", default=None, help="log2 sizes in bytes, e.g. 30,26 (default: the profile's)")
ap.add_argument("--shard", default=None, help="I/N: run shard I of N (points dealt by estimated cost)")
ap.add_argument("--only", default=None, help="regex: only points whose 'kind variant shape axes' label matches")
ap.add_argument("--estimate", action="store_true", help="print the points per shard and the estimate; no GPU")
ap.add_argument("--list", action="store_true", help="with --estimate: every point's label, shard and seconds")
ARGS = ap.parse_args()
QUICK = ARGS.quick
PROF = plan.profile(QUICK)
BUDGET = ARGS.budget if ARGS.budget is not None else PROF["budget"]
TORCH_MAX = ARGS.torch_max if ARGS.torch_max is not None else (9 if QUICK else 10 ** 6)
KINDS = ARGS.kinds.split(",")
REPS, WARM = PROF["reps"], PROF["warm"]
SIZES = [int(v) for v in ARGS.sizes.split(",")] if ARGS.sizes else list(PROF["sizes"])
WIDTHS = list(PROF["widths"])
BIG = plan.BIG            # bytes from which the copy-rate target applies
NOISE = 1.03              # "slower than" means by more than 3% (run-to-run noise)
NOISE_MS = 0.001
SMEM_ROW_BYTES = 48 << 10  # a row of float32 up to this fits in shared memory (target rule)
T0 = time.perf_counter()


def plan_points():
    """This process's points (after --only and --shard) and every shard's estimate."""
    bad = [k for k in KINDS if k not in plan.KINDS]
    if bad:
        sys.exit(f"sweep.py: --kinds {','.join(bad)}: unknown; hint: choose from {','.join(plan.KINDS)}")
    try:
        index, n = plan.parse_shard(ARGS.shard) if ARGS.shard else (0, 1)
        pts = plan.select(plan.enumerate_points(SIZES, KINDS, WIDTHS), ARGS.only)
    except ValueError as e:
        sys.exit(f"sweep.py: {e}")
    mine, loads = plan.shard_points(pts, PROF, index, n)
    return mine, loads, (index, n), len(pts)


PLAN, LOADS, SHARD, NSELECTED = plan_points()
if ARGS.estimate:   # no CuPy needed: the plan alone
    print(plan.estimate_text(LOADS, NSELECTED))
    if ARGS.list:
        for p, _ in PLAN:
            print(f"{p['size_bytes']:>11} {plan.label(p)}  {plan.point_cost(p, PROF):.2f} s")
    sys.exit(0)

import cupy as cp          # noqa: E402  (after --estimate, which runs without CuPy)
import numpy as np         # noqa: E402

import sweep_floor         # noqa: E402  (bench/: bare kernels, CuPy at import)
import ukern               # noqa: E402

try:
    import torch
except Exception:  # torch is optional: the torch column stays empty
    torch = None

x_f32 = cp.float32
FLUSH_BYTES = 256 << 20
FLUSH = cp.empty(FLUSH_BYTES, cp.uint8)
FLUSH.fill(1)
# Reads FLUSH and stores nothing (n is never negative: the store only keeps the loads), so
# that the L2 ends full of clean lines: the dirty lines of earlier calls are written back
# here, outside the timed call.
_FLUSH_READ = cp.RawKernel(r"""
extern "C" __global__ void uk_sweep_flush(const uint4 *p, long long n, unsigned int *sink) {
  unsigned int a = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    uint4 v = p[i];
    a += v.x ^ v.y ^ v.z ^ v.w;
  }
  if (n < 0) sink[0] = a;
}""", "uk_sweep_flush")


def flush_l2():
    if ARGS.flush == "write":
        FLUSH.fill(1)
    else:
        _FLUSH_READ((1024,), (256,), (FLUSH, np.int64(FLUSH_BYTES // 16), FLUSH))


STREAM_PTR = cp.cuda.get_current_stream().ptr


def log(msg):
    print(f"[{time.perf_counter() - T0:7.1f}s] {msg}", file=sys.stderr, flush=True)


CUR = {"bytes": 0, "extended": 0}   # the running point's size; columns timed again (spread)


def gpu_ms(fn, flush=True, reps=None, nbytes=None):
    """Median ms of fn between two events, after warm-ups; L2 flushed before each.
    From FEW_REPS_BYTES (the point's size unless nbytes): REPS_BIG after WARM_BIG, and
    REPS more when those spread by more than SPREAD of their median."""
    nbytes = CUR["bytes"] if nbytes is None else nbytes
    few = reps is None and nbytes >= plan.FEW_REPS_BYTES
    warm, first = (PROF["warm_big"], PROF["reps_big"]) if few else (WARM, reps or REPS)
    for _ in range(warm):
        fn()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []

    def timed(count):
        for _ in range(count):
            if flush:
                flush_l2()
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, end))
    timed(first)
    med = float(np.median(times))
    if few and (max(times) - min(times)) > PROF["spread"] * med:
        CUR["extended"] += 1
        timed(REPS)
        med = float(np.median(times))
    return med


_copy_cache = {}


def copy_half(nbytes):
    """The bytes the reference copies for a point of nbytes: half of them, rounded down to
    whole 4 KiB from 8 KiB up. A device-to-device cudaMemcpy of any other size takes a
    fixed 2.4-2.8 us more (H200: 32 MiB + 2 B, 512 B, 2 KiB or 64 KiB + 2 B: 20.2-20.8 us;
    32 MiB + 4, 16, 32 or 64 KiB: 17.7-18.1 us; the same at 8 and 128 MiB, in one
    allocation or two: docs/PERF.md "Session 15"), which is the driver's, not the copy
    rate's. Rounding down moves at most 4 KiB less: never a slower reference."""
    half = max(int(nbytes) // 2, 4)
    return half - half % 4096 if half >= 8192 else half


def copy_ms(nbytes):
    """cudaMemcpy device to device of copy_half(nbytes) (moves about nbytes), cached per size."""
    half = copy_half(nbytes)
    if half not in _copy_cache:
        src, dst = cp.empty(half, cp.uint8), cp.empty(half, cp.uint8)
        src.fill(3)
        rt = cp.cuda.runtime
        _copy_cache[half] = gpu_ms(lambda: rt.memcpyAsync(dst.data.ptr, src.data.ptr, half,
                                                          rt.memcpyDeviceToDevice, STREAM_PTR), nbytes=nbytes)
        del src, dst
    return _copy_cache[half]


def empty_kernel_ms(flush=True):
    """An empty kernel's launch, timed as every point is (flush=True): the flush runs
    long enough that the host has queued the call before the start event, so neither
    this nor a point holds the host's launch overhead (H200: 2.75 us). flush=False puts
    that overhead inside (CuPy's Python launch: 5-8 us), the reference before session 15."""
    k = cp.RawKernel('extern "C" __global__ void uk_sweep_empty() {}', "uk_sweep_empty")
    return gpu_ms(lambda: k((1,), (32,), ()), flush=flush, reps=51, nbytes=0)


def rand(shape, seed=1):
    rs = cp.random.RandomState(seed)
    return (rs.random_sample(shape, dtype=cp.float32) + cp.float32(0.5)).astype(cp.float32)


# ---------------------------------------------------------------- definitions
EW_ADD = ("T x, T y", "T z", "z = x + y", "sweep_add")
RED_SUM = ("T x", "T y", "x", "a + b", "y = a", "0", "sweep_sum")
_ew = {}
_red = {}


def ew_kernels():
    if not _ew:
        _ew["u"], _ew["c"] = ukern.ElementwiseKernel(*EW_ADD), cp.ElementwiseKernel(*EW_ADD)
    return _ew["u"], _ew["c"]


def red_kernels():
    if not _red:
        _red["u"], _red["c"] = ukern.ReductionKernel(*RED_SUM), cp.ReductionKernel(*RED_SUM)
        try:
            _red["cub"] = ukern.ReductionKernel(*RED_SUM, block_reduce="cub")
        except TypeError as e:  # a build without the option
            _red["cub"] = None
            _red["cub_error"] = str(e)
    return _red


def target_miss(size_bytes, t_ms, c, traffic, target_ms=None, row_rule=None):
    """(the target of a point of size_bytes, why t_ms misses it or None): issue 25 item 2,
    CuPy and torch.compile aside. c: the copy's ms for traffic."""
    if target_ms is not None and size_bytes >= BIG:  # fused row programs: a multiple of the copy time
        return (f"<= {target_ms / c:.3g}x copy ({row_rule})",
                f"{t_ms / c:.2f}x the copy time > {target_ms / c:.3g}x ({row_rule})" if t_ms > target_ms else None)
    if size_bytes >= BIG:
        return ">= 90% of copy rate", (f"{100 * c / t_ms:.0f}% of the copy rate < 90%" if c / t_ms < 0.9 else None)
    at_rate = traffic / COPY_RATE[0] * 1e3
    bound = EMPTY_MS + at_rate + 0.002
    target = f"<= empty launch + bytes at the copy rate + 2 us ({bound:.4f} ms)"
    if t_ms <= bound:
        return target, None
    return target, (f"{t_ms:.4f} ms > {bound:.4f} ms (launch {EMPTY_MS:.4f} + bytes at "
                    f"{COPY_RATE[0] / 1e12:.2f} TB/s {at_rate:.4f} + 2 us)")


_floor_cache = {}


def combine_free(p):
    """Whether p's outputs alone give every SM two blocks, so that a kernel needs no combine
    across blocks: a block an output where the innermost axis is reduced (a fused row program's
    rows), a warp's 32 columns a block where it is kept (a full reduction never)."""
    if p["kind"] == "fusion":
        return int(np.prod(p["shape"][:-1])) >= 2 * DEVICE_SMS[0]
    shape, axes = p["shape"], p["axes"] if p["axes"] is not None else list(range(len(p["shape"])))
    nout = int(np.prod([n for i, n in enumerate(shape) if i not in axes])) if len(axes) < len(shape) else 1
    sms = 2 * DEVICE_SMS[0]
    return nout >= (sms if axes[-1] == len(shape) - 1 else 32 * sms)


def floor_reason(p, c, traffic, nbytes=None):
    """The bare floors of a point's input bytes (nbytes, default its size: bench/sweep_floor.py,
    cached per size) into p, and what they say about its miss (p["floor_verdict"]): "read",
    even a bare read of the bytes misses; "combine", the read meets, the fastest bare
    deterministic combine across blocks misses, and the point needs one (combine_free), with the
    point's time within sweep_plan.FLOOR_NEAR_MS of that combine ("over": further over it); else
    "ukern": a bare kernel of the kind the point needs meets the target. A fused row program
    (softmax, layer norm, ...) reads its inputs and combines each row's blocks at least as a
    sum does, and writes besides: the sum's floors bound it from below too."""
    nb = nbytes or p["size_bytes"]
    p["floor_bytes"] = nb
    if nb not in _floor_cache:
        try:
            sweep_floor.check(nb)
            _floor_cache[nb] = sweep_floor.floors(nb, lambda fn: gpu_ms(fn, nbytes=nb))
        except Exception as e:  # the floors fail alone: the point keeps its timings
            _floor_cache[nb] = f"{type(e).__name__}: {e}"[:300]
    f = _floor_cache[nb]
    if isinstance(f, str):
        p["floor_error"] = f
        return "no bare floors: " + f
    for k, v in f.items():
        p[f"floor_{k}"] = v
    how = (f"one cluster of {f['cluster_grid']}" if f["cluster_ms"] is not None and f["det_ms"] == f["cluster_ms"]
           else f"split over {f['split_grid']} blocks")
    read, det = f"bare read {f['read_ms']:.4f} ms", f"bare deterministic combine {f['det_ms']:.4f} ms, {how}"
    if target_miss(p["size_bytes"], f["read_ms"], c, traffic)[1]:
        p["floor_verdict"] = "read"
        return f"at the read floor: a kernel that only reads these bytes misses too ({read})"
    if not target_miss(p["size_bytes"], f["det_ms"], c, traffic)[1]:
        p["floor_verdict"] = "ukern"
        return f"ukern's: bare kernels of these bytes meet it ({det}; {read})"
    if combine_free(p):
        p["floor_verdict"] = "ukern"
        return (f"ukern's: outputs enough to need no combine across blocks, and a {read} meets it "
                f"(the {det} misses)")
    p["floor_verdict"] = plan.combine_verdict(p["ukern_ms"], f["det_ms"])
    if p["floor_verdict"] == "over":
        return (f"over the combine floor by {(p['ukern_ms'] - f['det_ms']) * 1e3:.2f} us: the {det} misses too "
                f"({read}: met only without a combine)")
    return f"at the combine floor: the {det} misses too ({read}: met only without a combine)"


def finish(p, u_ms, c_ms, traffic, torch_ms=None, cub_ms=None, target_ms=None, row_rule=None, floor_bytes=None):
    """Fill timings, copy rate and the target verdict into p; a miss of a reduction, an argmax or
    (floor_bytes: its input bytes) a fused row program below BIG gets the bare floors' verdict."""
    p["bytes"] = int(traffic)
    p["ukern_ms"], p["cupy_ms"], p["torch_ms"], p["cub_ms"] = u_ms, c_ms, torch_ms, cub_ms
    p["copy_ms"] = c = copy_ms(traffic)
    p["share_of_copy"] = round(c / u_ms, 4) if u_ms else None
    p["target"], miss = target_miss(p["size_bytes"], u_ms, c, traffic, target_ms, row_rule)
    reasons = [miss] if miss else []
    for name, other in (("CuPy", c_ms), ("torch.compile", torch_ms)):
        if other is not None and u_ms > other * NOISE + NOISE_MS:
            reasons.append(f"{u_ms / other:.2f}x {name} ({other:.4f} ms)")
    p["met"] = not reasons
    if miss and (p["kind"] in ("reduction", "argmax") or (floor_bytes and p["size_bytes"] < BIG)):
        reasons.append(floor_reason(p, c, traffic, floor_bytes))
    hint = shape_hint(p) if reasons else ""
    alts = [f"{n} {p[f'alt_{n}_ms']:.4f} ms" for n in ("two_level", "transpose")
            if p.get(f"alt_{n}_ms") is not None and p[f"alt_{n}_ms"] < u_ms]
    if reasons and alts:
        hint += "; faster with today's kernels: " + ", ".join(alts)
    p["reason"] = "; ".join(reasons + ([hint] if hint else [])) or None


def shape_hint(p):
    """Why a point of this shape is hard: the layout facts the planner sees."""
    shape, axes = p["shape"], p["axes"]
    if p["size_bytes"] < (1 << 20):
        return "launch-bound size"
    if p["kind"] == "reduction" and axes:
        kept = [i for i in range(len(shape)) if i not in axes]
        adjacent = axes == list(range(axes[0], axes[-1] + 1))
        inner = axes[-1] == len(shape) - 1
        out_elems = int(np.prod([shape[i] for i in kept])) if kept else 1
        red_len = int(np.prod([shape[i] for i in axes]))
        bits = ["non-adjacent reduced axes" if not adjacent else "adjacent reduced axes",
                "innermost axis reduced" if inner else "innermost axis kept (column-style)",
                f"{out_elems} outputs of {red_len} elements"]
        return ", ".join(bits)
    if p["kind"] == "fusion" and p["width"]:
        return f"{p['shape'][0]} rows of {p['width']}"
    return ""


def time_pair(fu, fc, check=None):
    ru, rc = fu(), fc()
    if check:
        check(ru, rc)
    return gpu_ms(fu), gpu_ms(fc)


def close(u, c, rtol=1e-4):
    u = u[0] if isinstance(u, tuple) else u
    u, c = cp.asarray(u), cp.asarray(c)
    assert u.shape == c.shape, (u.shape, c.shape)
    if not bool(cp.allclose(u.astype(cp.float64), c.astype(cp.float64), rtol=rtol, atol=1e-5)):
        raise AssertionError(f"ukern and CuPy differ: max |d| {float(cp.abs(u - c).max())}")


# ---------------------------------------------------------------- runners
def run_ew(p, x, y, traffic):
    ku, kc = ew_kernels()
    u, c = time_pair(lambda: ku(x, y), lambda: kc(x, y), close)
    finish(p, u, c, traffic)


def run_ew_contig(p):
    x, y = rand(p["shape"]), rand(p["shape"], 2)
    run_ew(p, x, y, 3 * x.nbytes)


def run_ew_row(p):
    x, v = rand(p["shape"]), rand(p["shape"][1:], 3)
    run_ew(p, x, v, 2 * x.nbytes + v.nbytes)


def run_ew_col(p):
    x, v = rand(p["shape"]), rand((p["shape"][0], 1), 3)
    run_ew(p, x, v, 2 * x.nbytes + v.nbytes)


def run_ew_transposed(p):
    a, b = p["shape"]
    x, y = rand((a, b)), rand((b, a), 2).T
    run_ew(p, x, y, 3 * x.nbytes)


def run_reduction(p):
    ks = red_kernels()
    x = rand(p["shape"])
    ax = tuple(p["axes"])
    u, c = time_pair(lambda: ks["u"](x, axis=ax), lambda: ks["c"](x, axis=ax), lambda a, b: close(a, b, 1e-3))
    out_bytes = x.nbytes // int(np.prod([x.shape[i] for i in ax]))
    cub = None
    if ks["cub"] is not None and p["size_bytes"] >= (1 << 22 if QUICK else 0):
        try:
            close(ks["cub"](x, axis=ax), ks["u"](x, axis=ax), 1e-3)
            cub = gpu_ms(lambda: ks["cub"](x, axis=ax))
        except Exception as e:  # the CUB column fails alone
            p["cub_error"] = f"{type(e).__name__}: {e}"[:300]
    elif ks["cub"] is None:
        p["cub_error"] = "no block_reduce option in this build: " + ks.get("cub_error", "")[:200]
    try:  # the plan ukern chose (merged ndims, kernel): the banner of the program it ran
        p["plan"] = next(ln[3:] for ln in ks["u"].source(x, axis=ax).splitlines() if ln.startswith("// loops:"))
    except Exception as e:
        p["plan"] = f"source() failed: {type(e).__name__}"
    alternatives(p, ks["u"], x, ax)
    finish(p, u, c, x.nbytes + out_bytes, cub_ms=cub)


def alternatives(p, k, x, ax):
    """Item 3's groundwork: the strategies a cost-based planner would weigh, timed on
    this point's data with today's kernels (no plan changes): a two-level reduction
    (the innermost reduced axis first, then the rest) and, for non-adjacent axes, a
    transposing pass (the reduced axes moved last, made contiguous, then reduced)."""
    if len(ax) < 2 or len(ax) == x.ndim:
        return
    want = k(x, axis=ax)
    last, rest = ax[-1], ax[:-1]       # rest's axes are before last: their indices stay

    def two_level():
        return k(k(x, axis=(last,)), axis=rest)
    kept = [i for i in range(x.ndim) if i not in ax]

    def transposed():
        t = cp.ascontiguousarray(x.transpose(kept + list(ax)))
        return k(t, axis=tuple(range(len(kept), x.ndim)))
    alts = [("two_level", two_level)]
    if list(ax) != list(range(ax[0], ax[-1] + 1)):
        alts.append(("transpose", transposed))
    for name, fn in alts:
        try:
            close(fn(), want, 1e-3)
            p[f"alt_{name}_ms"] = gpu_ms(fn)
        except Exception as e:
            p[f"alt_{name}_error"] = f"{type(e).__name__}: {e}"[:200]


def run_argmax(p):
    x = rand(p["shape"])
    ax = None if p["axes"] is None else p["axes"][0]
    key = ("argmax", ax, x.ndim)
    if key not in _fused:
        _fused[key] = ukern.fuse(lambda a: np.argmax(a, axis=ax))
    fu = _fused[key]
    u, c = time_pair(lambda: fu(x), lambda: cp.argmax(x, axis=ax), lambda a, b: close(a, b, 0))
    out_elems = 1 if ax is None else x.size // x.shape[ax]
    finish(p, u, c, x.nbytes + 8 * out_elems)


_fused = {}


def xp_ops(xp):
    """The row programs written once for numpy-like namespaces (ukern.fuse traces numpy,
    cupy.fuse traces cupy, torch.compile traces torch)."""
    is_torch = torch is not None and xp is torch
    f_max, f_mean, f_sum = (torch.amax, torch.mean, torch.sum) if is_torch else (xp.max, xp.mean, xp.sum)
    exp, sqrt = xp.exp, xp.sqrt

    def last(keep):  # the last axis, kept or not, in the namespace's words
        return {"dim": -1, "keepdim": keep} if is_torch else {"axis": -1, "keepdims": keep}

    def amax(a):
        return f_max(a, **last(True))

    def mean(a):
        return f_mean(a, **last(True))

    def rsum(a, keep=True):
        return f_sum(a, **last(keep))

    def rowsum(x, y):
        return rsum((x - y) * (x - y), keep=False)

    def softmax(x):
        e = exp(x - amax(x))
        return e / rsum(e)

    def layernorm(x):
        d = x - mean(x)
        return d / sqrt(mean(d * d) + 1e-5)

    def center(x):
        return x - mean(x)

    def axpy(a, x, y):
        return a * x + y
    return {"rowsum": rowsum, "softmax": softmax, "layernorm": layernorm, "center": center, "axpy": axpy}


UK_OPS, CP_OPS = xp_ops(np), xp_ops(cp)
TORCH_OPS = xp_ops(torch) if torch is not None else None
TORCH_STATE = {"compiles": 0, "seconds": 0.0, "error": None}


def fused(lib, op):
    key = (lib, op)
    if key not in _fused:
        if lib == "ukern":
            _fused[key] = ukern.fuse(UK_OPS[op])
        elif lib == "cupy.fuse":
            _fused[key] = cp.fuse(kernel_name="sweep_" + op)(CP_OPS[op])
    return _fused.get(key)


def torch_time(p, op, args):
    """torch.compile's time on the same data (zero-copy views), or None with p['torch_note']."""
    if torch is None or ARGS.no_torch:
        p["torch_note"] = "torch not available" if torch is None else "--no-torch"
        return None
    if TORCH_STATE["compiles"] >= TORCH_MAX:
        p["torch_note"] = f"compile cap ({TORCH_MAX}) reached"
        return None
    if time.perf_counter() - T0 > 0.75 * BUDGET:
        p["torch_note"] = "skipped: past 75% of the time budget"
        return None
    try:
        targs = [torch.as_tensor(a, device="cuda") if isinstance(a, cp.ndarray) else a for a in args]
        t = time.perf_counter()
        TORCH_STATE["compiles"] += 1
        fn = torch_fn(op)
        graphs = torch_graphs()
        fn(*targs)          # the compile: never timed
        torch.cuda.synchronize()
        if graphs is not None and torch_graphs() == graphs:
            # No new graph for a new shape: dynamo fell back to eager (a recompile
            # limit). A fresh start then, as before the limits were raised.
            p["torch_recompile"] = "no new graph: dynamo reset and compiled afresh"
            torch._dynamo.reset()
            TORCH_FNS.clear()
            fn = torch_fn(op)
            fn(*targs)
            torch.cuda.synchronize()
        p["torch_compile_s"] = round(time.perf_counter() - t, 2)
        TORCH_STATE["seconds"] += p["torch_compile_s"]
        return gpu_ms(lambda: fn(*targs))
    except Exception as e:
        p["torch_note"] = f"{type(e).__name__}: {e}"[:300]
        return None


TORCH_FNS = {}


def torch_fn(op):
    """One torch.compile(dynamic=False) function per row program for every shape: each
    new shape compiles a graph of its own (static shapes: what a user of fixed shapes
    gets), without a dynamo reset per point. dynamo's recompile limits (8 graphs per
    function by default, then eager, silently) are raised past the sweep's shapes."""
    if op not in TORCH_FNS:
        cfg = torch._dynamo.config
        for name, value in (("recompile_limit", 4096), ("cache_size_limit", 4096),
                            ("accumulated_recompile_limit", 65536), ("accumulated_cache_size_limit", 65536)):
            if hasattr(cfg, name):
                setattr(cfg, name, max(getattr(cfg, name), value))
        TORCH_FNS[op] = torch.compile(TORCH_OPS[op], dynamic=False)
    return TORCH_FNS[op]


def torch_graphs():
    """Graphs dynamo has compiled in this process (its own counter)."""
    try:
        return torch._dynamo.utils.counters["stats"]["unique_graphs"]
    except Exception:
        return None


def fused_plan(p, fu, args):
    """The kernels ukern.fuse planned for these arguments (their banners: row kernel
    or not), for item 3's row-kernel sizing work."""
    try:
        kinds = []
        for ln in fu.source(*args).splitlines():
            if ln.startswith("// ==== ukern fusion"):
                kinds.append(ln.split("(", 1)[-1].rstrip(" =)"))
            elif ln.startswith("// row plan: ") and kinds:  # the row kernel's sizing (issue 25 item 3)
                kinds[-1] += ": " + ln[len("// row plan: "):]
        p["plan"] = f"{len(kinds)} kernel(s): " + "; ".join(kinds)
    except Exception as e:
        p["plan"] = f"source() failed: {type(e).__name__}"


def run_axpy(p):
    x, y = rand(p["shape"]), rand(p["shape"], 2)
    a = cp.float32(2)
    fu, fc = fused("ukern", "axpy"), fused("cupy.fuse", "axpy")
    u, c = time_pair(lambda: fu(a, x, y), lambda: fc(a, x, y), close)
    tm = None
    if plan.torch_planned(p, QUICK):
        tm = torch_time(p, "axpy", (2.0, x, y))
    else:
        p["torch_note"] = "torch.compile timed at >= 32 MiB only (--quick: 1 GiB)"
    finish(p, u, c, 3 * x.nbytes, torch_ms=tm)


def run_rowop(p):
    op, (rows, w) = p["variant"], p["shape"]
    x = rand(p["shape"])
    args = (x, rand(p["shape"], 2)) if op == "rowsum" else (x,)
    fu, fc = fused("ukern", op), fused("cupy.fuse", op)
    cupy_src = "cupy.fuse"
    try:
        fc(*args)
    except Exception as e:  # cupy.fuse lacks some keepdims programs: unfused CuPy then
        p["cupy_note"] = f"cupy.fuse failed ({type(e).__name__}); unfused CuPy timed"
        fc, cupy_src = (lambda *a: CP_OPS[op](*a)), "unfused CuPy"
    p["cupy_impl"] = cupy_src
    u, c = time_pair(lambda: fu(*args), lambda: fc(*args), lambda a, b: close(a, b, 1e-3))
    fused_plan(p, fu, args)
    ins = sum(a.nbytes for a in args)
    outb = rows * 4 if op == "rowsum" else x.nbytes
    traffic = ins + outb
    fits = w * 4 <= SMEM_ROW_BYTES
    rule = "one read + one write, row fits in shared memory" if fits else "two reads + one write"
    one_rw = copy_ms(traffic)
    target = 1.15 * (one_rw if fits else copy_ms(traffic + ins))
    # torch: in --quick only at 64 MiB, rows of 128 and 2048 (where issue 25 saw it win)
    tm = None
    if plan.torch_planned(p, QUICK):
        tm = torch_time(p, op, args)
    else:
        p["torch_note"] = ("--quick: torch.compile timed at 64 MiB, rows of 128 and 2048 only" if QUICK
                           else "torch.compile timed at >= 32 MiB only")
    finish(p, u, c, traffic, torch_ms=tm, target_ms=target, row_rule=rule, floor_bytes=ins)


# ---------------------------------------------------------------- main
def device_info():
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    DEVICE_SMS[0] = props["multiProcessorCount"]
    return {"name": props["name"].decode(), "sms": props["multiProcessorCount"],
            "l2_bytes": props.get("l2CacheSize"), "smem_per_block_optin": props.get("sharedMemPerBlockOptin")}


def write(doc):
    tmp = ARGS.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=0)
    os.replace(tmp, ARGS.out)


def main():
    global EMPTY_MS
    index, nshards = SHARD
    prof = {k: PROF[k] for k in ("reps_big", "warm_big", "spread")}
    doc = {"meta": {"device": device_info(), "cupy": cp.__version__, "ukern": ukern.__version__,
                    "torch": getattr(torch, "__version__", None), "quick": QUICK, "reps": REPS, "warm": WARM,
                    **prof, "few_reps_bytes": plan.FEW_REPS_BYTES,
                    "l2_flushed": True, "l2_flush": ARGS.flush, "dtype": "float32", "budget_s": BUDGET,
                    "torch_max": TORCH_MAX,
                    "noise_rule": f"slower means > {NOISE}x + {NOISE_MS} ms", "big_bytes": BIG,
                    "sizes": SIZES, "kinds": KINDS, "widths": WIDTHS, "only": ARGS.only,
                    "planned": len(PLAN), "estimate_s": round(LOADS[index], 1)},
           "points": []}
    if ARGS.shard:
        doc["meta"]["shard"] = [index, nshards]
        doc["meta"]["run_key"] = f"{QUICK}|{SIZES}|{KINDS}|{WIDTHS}|{ARGS.only}|{nshards}"
    log(plan.estimate_text(LOADS, NSELECTED, index if ARGS.shard else None))
    EMPTY_MS = empty_kernel_ms()
    doc["meta"]["empty_kernel_ms"] = EMPTY_MS
    doc["meta"]["empty_kernel_timing"] = "flushed"   # as the points; JSONs without it: host launch inside
    doc["meta"]["empty_kernel_host_ms"] = empty_kernel_ms(flush=False)
    COPY_RATE[0] = (1 << 30) / copy_ms(1 << 30) * 1e3   # bytes/s moved by a 512 MiB copy
    doc["meta"]["copy_rate_Bps"] = COPY_RATE[0]
    runners = {"ew_contig": run_ew_contig, "ew_row": run_ew_row, "ew_col": run_ew_col,
               "ew_transposed": run_ew_transposed, "reduction": run_reduction, "argmax": run_argmax,
               "axpy": run_axpy, "rowop": run_rowop}
    log(f"{len(PLAN)} points{f' (shard {index}/{nshards})' if ARGS.shard else ''}, device "
        f"{doc['meta']['device']['name']}, empty launch {EMPTY_MS:.4f} ms")
    last_size = None
    for i, (p, runner) in enumerate(PLAN):
        if time.perf_counter() - T0 > BUDGET:
            p["error"] = "skipped: time budget spent"
            p["met"] = None
            doc["points"].append(p)
            continue
        if last_size != p["size_bytes"]:  # arrays of the previous size go back to the driver
            cp.get_default_memory_pool().free_all_blocks()
            last_size = p["size_bytes"]
        CUR["bytes"], CUR["extended"] = p["size_bytes"], 0
        t = time.perf_counter()
        try:
            runners[runner](p)
        except Exception as e:
            p["error"] = f"{type(e).__name__}: {e}"[:500]
            p["met"] = None
            p["trace"] = traceback.format_exc(limit=3)[-800:]
        p["wall_s"] = round(time.perf_counter() - t, 3)
        if CUR["extended"]:
            p["reps_extended"] = CUR["extended"]   # columns that spread: timed REPS more
        doc["points"].append(p)
        doc["meta"]["elapsed_s"] = round(time.perf_counter() - T0, 1)
        doc["meta"]["torch_compiles"] = TORCH_STATE["compiles"]
        write(doc)
        verdict = "ERR " + p["error"][:80] if "error" in p else ("met" if p["met"] else "MISS " + (p["reason"] or ""))
        log(f"{i + 1}/{len(PLAN)} {p['kind']} {p['variant']} {tuple(p['shape'])} axes={p['axes']} "
            f"u={p.get('ukern_ms')} c={p.get('cupy_ms')} t={p.get('torch_ms')} copy={p.get('copy_ms')} "
            f"{verdict[:160]} ({p['wall_s']}s)")
    doc["meta"]["elapsed_s"] = round(time.perf_counter() - T0, 1)
    doc["meta"]["done"] = True
    write(doc)
    log(f"done: {sum(1 for p in doc['points'] if p.get('met'))}/{len(doc['points'])} points met in "
        f"{doc['meta']['elapsed_s']} s (estimate {LOADS[index]:.0f} s); torch.compile "
        f"{TORCH_STATE['compiles']} compiles, {TORCH_STATE['seconds']:.1f} s")


EMPTY_MS = 0.0
COPY_RATE = [1.0]
DEVICE_SMS = [132]
if __name__ == "__main__":
    main()
