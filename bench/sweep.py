#!/usr/bin/env python3
"""The copy-rate sweep (issue 25): every kernel kind over sizes and shapes, each
point beside a device-to-device copy of the same bytes, CuPy and (for fusion)
torch.compile, all in one run on one GPU.

Kinds: elementwise (contiguous, row/column broadcast, one operand transposed),
reduction (sum over every axis subset of 2-D and 3-D arrays with short and long
axes on each side, the 3-D templates scaled to each size in log space), argmax
(full, last axis, first axis), fusion (axpy; and at row widths 32 .. 65536:
squared-distance row sums, softmax, layer norm, x - mean(x, -1, keepdims)).

Timing: CUDA events around the call alone, median of REPS after WARM warm-ups;
before each timed call a 256 MiB buffer is written (L2 flushed), so every size
is measured from HBM like the copy beside it. Compiles (ukern, CuPy, the
torch.compile warm-up) happen before the timed runs and are never timed.

A point's `bytes` is the traffic of an ideal kernel (inputs read once, outputs
written once); `copy_ms` is a cudaMemcpy device-to-device of bytes/2 (it reads
and writes bytes/2, so it moves the same bytes). share_of_copy = copy_ms/ukern_ms.
Targets (issue 25 item 2) are evaluated per point; `met` and `reason` say which
part failed. A failing point records its error and the sweep goes on.

Output: JSON (argv: --out FILE, rewritten after every point so a timeout leaves
the points done), progress on stderr. bench/sweep_report.py makes the markdown
table and the plots from the JSON.

Usage: python3 bench/sweep.py --out sweep.json [--quick] [--budget SECONDS]
       [--kinds elementwise,reduction,argmax,fusion] [--torch-max N] [--sizes 30,26]
       [--no-torch]
--quick: 4 sizes (64 KiB, 4 MiB, 64 MiB, 1 GiB), fewer widths and reps,
torch.compile at 9 points (axpy at 1 GiB; each row program at 64 MiB, rows of
128 and 2048; --torch-max caps the compiles), budget 270 s.
Points run largest-size-first, kinds interleaved, so a budget or timeout
cuts the least telling points. Needs CuPy; torch and the CUB variant optional.
"""
import argparse
import itertools
import json
import math
import os
import sys
import time
import traceback

import cupy as cp
import numpy as np

import ukern

try:
    import torch
except Exception:  # torch is optional: the torch column stays empty
    torch = None

ap = argparse.ArgumentParser()
ap.add_argument("--out", default="sweep.json")
ap.add_argument("--quick", action="store_true")
ap.add_argument("--budget", type=float, default=None, help="seconds; points after it are recorded as skipped")
ap.add_argument("--kinds", default="elementwise,reduction,argmax,fusion")
ap.add_argument("--torch-max", type=int, default=None, help="most torch.compile compiles")
ap.add_argument("--no-torch", action="store_true")
ap.add_argument("--sizes", default=None, help="log2 sizes in bytes, e.g. 30,26 (default: the profile's)")
ARGS = ap.parse_args()
QUICK = ARGS.quick
BUDGET = ARGS.budget if ARGS.budget is not None else (270.0 if QUICK else 1e9)
TORCH_MAX = ARGS.torch_max if ARGS.torch_max is not None else (9 if QUICK else 10 ** 6)
QUICK_TORCH_WIDTHS = (128, 2048)
KINDS = ARGS.kinds.split(",")
REPS, WARM = (7, 2) if QUICK else (21, 3)
# Size order: the most telling first (1 GiB, 64 MiB, then small), so a cut keeps them.
SIZES = [30, 26, 22, 16] if QUICK else [30, 26, 22, 16, 28, 24, 20, 18]
if ARGS.sizes:
    SIZES = [int(v) for v in ARGS.sizes.split(",")]
WIDTHS = [32, 128, 512, 2048, 8192, 65536] if QUICK else [32, 128, 512, 2048, 8192, 32768, 65536]
BIG = 32 << 20            # bytes from which the copy-rate target applies
NOISE = 1.03              # "slower than" means by more than 3% (run-to-run noise)
NOISE_MS = 0.001
SMEM_ROW_BYTES = 48 << 10  # a row of float32 up to this fits in shared memory (target rule)
T0 = time.perf_counter()

x_f32 = cp.float32
FLUSH = cp.empty(256 << 20, cp.uint8)
STREAM_PTR = cp.cuda.get_current_stream().ptr


def log(msg):
    print(f"[{time.perf_counter() - T0:7.1f}s] {msg}", file=sys.stderr, flush=True)


def gpu_ms(fn, flush=True, reps=None):
    """Median ms of fn between two events, after warm-ups; L2 flushed before each."""
    for _ in range(WARM):
        fn()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(reps or REPS):
        if flush:
            FLUSH.fill(1)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end))
    return float(np.median(times))


_copy_cache = {}


def copy_ms(nbytes):
    """cudaMemcpy device to device of nbytes/2 (moves nbytes), cached per size."""
    half = max(int(nbytes) // 2, 4)
    if half not in _copy_cache:
        src, dst = cp.empty(half, cp.uint8), cp.empty(half, cp.uint8)
        src.fill(3)
        rt = cp.cuda.runtime
        _copy_cache[half] = gpu_ms(lambda: rt.memcpyAsync(dst.data.ptr, src.data.ptr, half,
                                                          rt.memcpyDeviceToDevice, STREAM_PTR))
        del src, dst
    return _copy_cache[half]


def empty_kernel_ms():
    k = cp.RawKernel('extern "C" __global__ void uk_sweep_empty() {}', "uk_sweep_empty")
    return gpu_ms(lambda: k((1,), (32,), ()), flush=False, reps=51)


def rand(shape, seed=1):
    rs = cp.random.RandomState(seed)
    return (rs.random_sample(shape, dtype=cp.float32) + cp.float32(0.5)).astype(cp.float32)


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


# ---------------------------------------------------------------- points
def points():
    """(order key, point dict, runner) for every point of the selected kinds."""
    out = []
    for si, s in enumerate(SIZES):
        nbytes = 1 << s
        n = nbytes // 4
        k = 0

        def add(kind, variant, shape, runner, axes=None, width=None):
            nonlocal k
            p = {"kind": kind, "variant": variant, "shape": list(shape), "axes": axes, "width": width,
                 "size_bytes": nbytes, "log2_size": s}
            out.append(((si, k), p, runner))
            k += 1

        if "elementwise" in KINDS:
            side = 1 << ((s - 2) // 2)
            add("elementwise", "contiguous", (n,), run_ew_contig)
            add("elementwise", "broadcast row", (n // 1024, 1024), run_ew_row)
            add("elementwise", "broadcast column", (n // 1024, 1024), run_ew_col)
            add("elementwise", "transposed", (side, (n // side)), run_ew_transposed)
        if "reduction" in KINDS:
            for tmpl in ((256, n // 256), (n // 256, 256)):
                for ax in ((0,), (1,), (0, 1)):
                    add("reduction", "2-D", tmpl, run_reduction, axes=list(ax))
            for tmpl in ((256, 1024, 1024), (1024, 256, 1024), (1024, 1024, 256), (64, 64, 65536)):
                shape = scale_shape(tmpl, n)
                for r in (1, 2, 3):
                    for ax in itertools.combinations(range(3), r):
                        add("reduction", "3-D " + "x".join(map(str, tmpl)), shape, run_reduction, axes=list(ax))
        if "argmax" in KINDS:
            add("argmax", "full", (n,), run_argmax, axes=None)
            add("argmax", "last axis", (n // 1024, 1024), run_argmax, axes=[1])
            add("argmax", "first axis", (1024, n // 1024), run_argmax, axes=[0])
        if "fusion" in KINDS:
            add("fusion", "axpy", (n,), run_axpy)
            for w in WIDTHS:
                if w > n:
                    continue
                for op in ("rowsum", "softmax", "layernorm", "center"):
                    add("fusion", op, (n // w, w), run_rowop, width=w)
    out.sort(key=lambda t: t[0])
    return [(p, r) for _, p, r in out]


def finish(p, u_ms, c_ms, traffic, torch_ms=None, cub_ms=None, target_ms=None, row_rule=None):
    """Fill timings, copy rate and the target verdict into p."""
    p["bytes"] = int(traffic)
    p["ukern_ms"], p["cupy_ms"], p["torch_ms"], p["cub_ms"] = u_ms, c_ms, torch_ms, cub_ms
    p["copy_ms"] = c = copy_ms(traffic)
    p["share_of_copy"] = round(c / u_ms, 4) if u_ms else None
    reasons = []
    if target_ms is not None and p["size_bytes"] >= BIG:  # fused row programs: a multiple of the copy time
        p["target"] = f"<= {target_ms / c:.3g}x copy ({row_rule})"
        if u_ms > target_ms:
            reasons.append(f"{u_ms / c:.2f}x the copy time > {target_ms / c:.3g}x ({row_rule})")
    elif p["size_bytes"] >= BIG:
        p["target"] = ">= 90% of copy rate"
        if c / u_ms < 0.9:
            reasons.append(f"{100 * c / u_ms:.0f}% of the copy rate < 90%")
    else:
        at_rate = traffic / COPY_RATE[0] * 1e3
        bound = EMPTY_MS + at_rate + 0.002
        p["target"] = f"<= empty launch + bytes at the copy rate + 2 us ({bound:.4f} ms)"
        if u_ms > bound:
            reasons.append(f"{u_ms:.4f} ms > {bound:.4f} ms (launch {EMPTY_MS:.4f} + bytes at "
                           f"{COPY_RATE[0] / 1e12:.2f} TB/s {at_rate:.4f} + 2 us)")
    for name, other in (("CuPy", c_ms), ("torch.compile", torch_ms)):
        if other is not None and u_ms > other * NOISE + NOISE_MS:
            reasons.append(f"{u_ms / other:.2f}x {name} ({other:.4f} ms)")
    p["met"] = not reasons
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
        # A fresh compile per point: dynamo's per-function recompile limit (8) would
        # otherwise fall back to eager silently after a few shapes.
        torch._dynamo.reset()
        fn = torch.compile(TORCH_OPS[op], dynamic=False)
        t = time.perf_counter()
        TORCH_STATE["compiles"] += 1
        fn(*targs)          # the compile: never timed
        torch.cuda.synchronize()
        p["torch_compile_s"] = round(time.perf_counter() - t, 2)
        TORCH_STATE["seconds"] += p["torch_compile_s"]
        return gpu_ms(lambda: fn(*targs))
    except Exception as e:
        p["torch_note"] = f"{type(e).__name__}: {e}"[:300]
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
    if p["size_bytes"] >= BIG and (not QUICK or p["log2_size"] == 30):
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
    if not QUICK or (p["log2_size"] == 26 and w in QUICK_TORCH_WIDTHS):
        tm = torch_time(p, op, args)
    else:
        p["torch_note"] = "--quick: torch.compile timed at 64 MiB, rows of 128 and 2048 only"
    finish(p, u, c, traffic, torch_ms=tm, target_ms=target, row_rule=rule)


# ---------------------------------------------------------------- main
def device_info():
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    return {"name": props["name"].decode(), "sms": props["multiProcessorCount"],
            "l2_bytes": props.get("l2CacheSize"), "smem_per_block_optin": props.get("sharedMemPerBlockOptin")}


def write(doc):
    tmp = ARGS.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=0)
    os.replace(tmp, ARGS.out)


def main():
    global EMPTY_MS
    doc = {"meta": {"device": device_info(), "cupy": cp.__version__, "ukern": ukern.__version__,
                    "torch": getattr(torch, "__version__", None), "quick": QUICK, "reps": REPS, "warm": WARM,
                    "l2_flushed": True, "dtype": "float32", "budget_s": BUDGET, "torch_max": TORCH_MAX,
                    "noise_rule": f"slower means > {NOISE}x + {NOISE_MS} ms", "big_bytes": BIG},
           "points": []}
    EMPTY_MS = empty_kernel_ms()
    doc["meta"]["empty_kernel_ms"] = EMPTY_MS
    COPY_RATE[0] = (1 << 30) / copy_ms(1 << 30) * 1e3   # bytes/s moved by a 512 MiB copy
    doc["meta"]["copy_rate_Bps"] = COPY_RATE[0]
    plist = points()
    log(f"{len(plist)} points, device {doc['meta']['device']['name']}, empty launch {EMPTY_MS:.4f} ms")
    last_size = None
    for i, (p, runner) in enumerate(plist):
        if time.perf_counter() - T0 > BUDGET:
            p["error"] = "skipped: time budget spent"
            p["met"] = None
            doc["points"].append(p)
            continue
        if last_size != p["size_bytes"]:  # arrays of the previous size go back to the driver
            cp.get_default_memory_pool().free_all_blocks()
            last_size = p["size_bytes"]
        t = time.perf_counter()
        try:
            runner(p)
        except Exception as e:
            p["error"] = f"{type(e).__name__}: {e}"[:500]
            p["met"] = None
            p["trace"] = traceback.format_exc(limit=3)[-800:]
        p["wall_s"] = round(time.perf_counter() - t, 3)
        doc["points"].append(p)
        doc["meta"]["elapsed_s"] = round(time.perf_counter() - T0, 1)
        doc["meta"]["torch_compiles"] = TORCH_STATE["compiles"]
        write(doc)
        verdict = "ERR " + p["error"][:80] if "error" in p else ("met" if p["met"] else "MISS " + (p["reason"] or ""))
        log(f"{i + 1}/{len(plist)} {p['kind']} {p['variant']} {tuple(p['shape'])} axes={p['axes']} "
            f"u={p.get('ukern_ms')} c={p.get('cupy_ms')} t={p.get('torch_ms')} copy={p.get('copy_ms')} "
            f"{verdict[:160]} ({p['wall_s']}s)")
    doc["meta"]["elapsed_s"] = round(time.perf_counter() - T0, 1)
    doc["meta"]["done"] = True
    write(doc)
    log(f"done: {sum(1 for p in doc['points'] if p.get('met'))}/{len(doc['points'])} points met")


EMPTY_MS = 0.0
COPY_RATE = [1.0]
if __name__ == "__main__":
    main()
