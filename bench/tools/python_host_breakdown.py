#!/usr/bin/env python3
"""Where ukern's Python per-call host cost goes, beside CuPy's, in one run.

Times (us per call, 1-element arrays, asynchronous: the device is synchronised
outside the timed loops; median of several batches) variants that isolate the
parts of a call:
  - the pieces a call may use: __cuda_array_interface__, __dlpack__,
    from_dlpack, the producer's current stream, attribute reads, allocating
    an output array through CuPy / PyTorch;
  - ukern ElementwiseKernel with given vs allocated outputs; CuPy arrays vs
    torch tensors vs ukern.Array vs a plain object with a fixed
    __cuda_array_interface__ dict; Python / NumPy scalars; stream=;
  - ukern ReductionKernel, RawKernel (0, 1, 4 arguments) and fuse;
  - CuPy's ElementwiseKernel / ReductionKernel / RawKernel / fuse on the same calls.
Every row runs in its own try/except: a failing row prints its error and the
run goes on. Missing libraries (torch) skip their rows.

Usage: python3 bench/tools/python_host_breakdown.py [out.json] [--quick]
Needs the package on PYTHONPATH (e.g. build/python) and CuPy.
"""
import json
import sys
import time
import traceback

QUICK = "--quick" in sys.argv
CALLS = 1000 if QUICK else 5000   # calls per batch
BATCHES = 5 if QUICK else 15
rows = []


def sync():
    try:
        import cupy
        cupy.cuda.Device().synchronize()
    except Exception:   # noqa: BLE001  (no CuPy: nothing queued by it)
        pass


def host_us(fn):
    for _ in range(200):
        fn()
    sync()
    batches = []
    loop = range(CALLS)
    for _ in range(BATCHES):
        t0 = time.perf_counter()
        for _ in loop:
            fn()
        batches.append((time.perf_counter() - t0) / CALLS * 1e6)
        sync()
    batches.sort()
    return batches[len(batches) // 2]


def row(group, case, make):
    """make() returns the callable to time (setup errors are row errors too)."""
    r = {"group": group, "case": case}
    try:
        fn = make()
        r["us"] = round(host_us(fn), 3)
    except Exception as e:   # noqa: BLE001  (every row stands alone)
        r["error"] = f"{type(e).__name__}: {e}"
        print(f"[{group}] {case}: {r['error']}", file=sys.stderr)
        traceback.print_exc(limit=3, file=sys.stderr)
    rows.append(r)
    sys.stderr.write(f"  {group:10s} {case:60s} {r.get('us', 'ERR')}\n")


class CAIOnly:
    """A foreign CUDA array: a fixed __cuda_array_interface__ dict and nothing
    else (no from_dlpack in this module, so ukern answers with ukern.Array)."""

    def __init__(self, a):
        self.__cuda_array_interface__ = dict(a.__cuda_array_interface__)
        self._keep = a


SQ = ("T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff")
SC = ("T x, T a", "T z", "z = a * x", "scale_s")
SUM = ("T x", "T y", "x", "a + b", "y = a", "0", "sum_k")
NOP = r'''extern "C" __global__ void nop() {}'''
ONE = r'''extern "C" __global__ void one(float* x) { if (threadIdx.x > 1024) x[0] = 0; }'''
RAW = r'''extern "C" __global__ void scale(const float* x, float* y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}'''


def main():
    import numpy as np
    import cupy as cp
    import ukern

    try:
        import torch
        if not torch.cuda.is_available():
            torch = None
    except Exception:   # noqa: BLE001
        torch = None

    x = cp.asarray(np.array([1.5], np.float32))
    y = cp.asarray(np.array([0.5], np.float32))
    z = cp.empty(1, cp.float32)
    f32 = np.dtype(np.float32)
    cur = cp.cuda.get_current_stream()

    ek, cek = ukern.ElementwiseKernel(*SQ), cp.ElementwiseKernel(*SQ)
    sk, csk = ukern.ElementwiseKernel(*SC), cp.ElementwiseKernel(*SC)
    rk, crk = ukern.ReductionKernel(*SUM), cp.ReductionKernel(*SUM)
    # ukern.Array operands: outputs of calls on foreign (CAI-only) arrays
    ux = uy = uz = None
    try:
        ux = ek(CAIOnly(x), CAIOnly(y))
        uy, uz = ek(CAIOnly(y), CAIOnly(x)), ek(CAIOnly(x), CAIOnly(x))
        print(f"ukern.Array operands: {type(ux).__name__}", file=sys.stderr)
    except Exception as e:   # noqa: BLE001
        print(f"no ukern.Array operands: {e}", file=sys.stderr)
    fx, fy, fz = CAIOnly(x), CAIOnly(y), CAIOnly(z)
    tx = ty = tz = None
    if torch is not None:
        tx = torch.full((1,), 1.5, device="cuda", dtype=torch.float32)
        ty = torch.full((1,), 0.5, device="cuda", dtype=torch.float32)
        tz = torch.empty(1, device="cuda", dtype=torch.float32)

    P = "pieces"
    row(P, "empty Python call (lambda: None)", lambda: (lambda: None))
    row(P, "cupy x.__cuda_array_interface__", lambda: (lambda: x.__cuda_array_interface__))
    row(P, "cupy x.__dlpack__()", lambda: (lambda: x.__dlpack__()))
    row(P, "cupy x.__dlpack__(stream=1)", lambda: (lambda: x.__dlpack__(stream=1)))
    row(P, "cupy x.__dlpack_device__()", lambda: (lambda: x.__dlpack_device__()))
    row(P, "cupy.from_dlpack(cupy x)", lambda: (lambda: cp.from_dlpack(x)))
    row(P, "cupy.from_dlpack(ukern.Array)", lambda: (lambda: cp.from_dlpack(ux)))
    row(P, "cupy.asarray(ukern.Array) (CAI)", lambda: (lambda: cp.asarray(ux)))
    row(P, "ukern.Array.__dlpack__(stream=1)", lambda: (lambda: ux.__dlpack__(stream=1)))
    row(P, "ukern.Array.__cuda_array_interface__", lambda: (lambda: ux.__cuda_array_interface__))
    row(P, "cupy.cuda.get_current_stream()", lambda: (lambda: cp.cuda.get_current_stream()))
    row(P, "cupy.cuda.get_current_stream().ptr", lambda: (lambda: cp.cuda.get_current_stream().ptr))
    row(P, "cupy.cuda.stream.get_current_stream_ptr()",
        lambda: (lambda f=cp.cuda.stream.get_current_stream_ptr: f()))
    row(P, "cupy x.data.ptr", lambda: (lambda: x.data.ptr))
    row(P, "cupy x.data.device_id", lambda: (lambda: x.data.device_id))
    row(P, "cupy x.shape", lambda: (lambda: x.shape))
    row(P, "cupy x.strides", lambda: (lambda: x.strides))
    row(P, "cupy x.dtype", lambda: (lambda: x.dtype))
    row(P, "cupy x.dtype.char", lambda: (lambda: x.dtype.char))
    row(P, "cupy x.flags.c_contiguous", lambda: (lambda: x.flags.c_contiguous))
    row(P, "cupy.empty(1, float32)", lambda: (lambda: cp.empty(1, cp.float32)))
    row(P, "cupy.empty((1,), numpy.dtype)", lambda: (lambda: cp.empty((1,), f32)))
    row(P, "cupy.ndarray((1,), dtype)", lambda: (lambda: cp.ndarray((1,), f32)))
    row(P, "cupy.cuda.alloc(4)", lambda: (lambda: cp.cuda.alloc(4)))

    def unowned():
        UM, MP = cp.cuda.UnownedMemory, cp.cuda.MemoryPointer
        ptr = x.data.ptr
        return lambda: cp.ndarray((1,), f32, MP(UM(ptr, 4, x), 0))
    row(P, "cupy.ndarray over UnownedMemory", unowned)

    def direct_parts(part):
        UM, MP = cp.cuda.UnownedMemory, cp.cuda.MemoryPointer
        ptr = x.data.ptr
        um = UM(ptr, 4, x, 0)
        mp = MP(um, 0)
        return {"um": lambda: UM(ptr, 4, x, 0), "mp": lambda: MP(um, 0),
                "nd": lambda: cp.ndarray((1,), f32, mp),
                "all": lambda: cp.ndarray((1,), f32, MP(UM(ptr, 4, x, 0), 0))}[part]
    row(P, "cupy.cuda.UnownedMemory(ptr, 4, owner, 0)", lambda: direct_parts("um"))
    row(P, "cupy.cuda.MemoryPointer(mem, 0)", lambda: direct_parts("mp"))
    row(P, "cupy.ndarray((1,), dtype, memptr)", lambda: direct_parts("nd"))
    row(P, "all three (ukern's direct output route)", lambda: direct_parts("all"))
    if torch is not None:
        row(P, "torch t.__cuda_array_interface__", lambda: (lambda: tx.__cuda_array_interface__))
        row(P, "torch t.__dlpack__()", lambda: (lambda: tx.__dlpack__()))
        row(P, "torch.from_dlpack(ukern.Array)", lambda: (lambda: torch.from_dlpack(ux)))
        row(P, "torch.cuda.current_stream()", lambda: (lambda: torch.cuda.current_stream()))
        row(P, "torch.cuda.current_stream().cuda_stream",
            lambda: (lambda: torch.cuda.current_stream().cuda_stream))
        row(P, "torch t.get_device()", lambda: (lambda: tx.get_device()))
        row(P, "torch t.data_ptr()", lambda: (lambda: tx.data_ptr()))
        row(P, "torch.empty(1, device='cuda')",
            lambda: (lambda: torch.empty(1, device="cuda", dtype=torch.float32)))

    E = "elementwise"
    row(E, "ukern cupy in, allocated out", lambda: (lambda: ek(x, y)))
    row(E, "cupy  cupy in, allocated out", lambda: (lambda: cek(x, y)))
    row(E, "ukern cupy in, out positional", lambda: (lambda: ek(x, y, z)))
    row(E, "cupy  cupy in, out positional", lambda: (lambda: cek(x, y, z)))
    route = getattr(ukern._ukern, "_set_output_route", None)
    if route is not None:   # allocated outputs: CuPy's pool (known outputs), over ukern's memory, from_dlpack
        for name in ("dlpack", "direct", "pool"):
            try:
                route(name)
            except ValueError:
                continue
            row(E, f"ukern cupy in, allocated out, route={name}", lambda: (lambda: ek(x, y)))
            row(E, f"ukern cupy + numpy.float32, allocated, route={name}", lambda: (lambda: sk(x, np.float32(2))))
        route("pool")
    row(E, "ukern cupy in, out=", lambda: (lambda: ek(x, y, out=z)))
    row(E, "ukern cupy in, out positional, stream=current", lambda: (lambda: ek(x, y, z, stream=cur)))
    row(E, "ukern cupy + Python float, allocated", lambda: (lambda: sk(x, 2.0)))
    row(E, "cupy  cupy + Python float, allocated", lambda: (lambda: csk(x, 2.0)))
    row(E, "ukern cupy + numpy.float32, out positional", lambda: (lambda a=np.float32(2): sk(x, a, z)))
    row(E, "cupy  cupy + numpy.float32, out positional", lambda: (lambda a=np.float32(2): csk(x, a, z)))
    row(E, "ukern fixed-CAI objects, out positional", lambda: (lambda: ek(fx, fy, fz)))
    row(E, "ukern fixed-CAI objects, allocated (ukern.Array)", lambda: (lambda: ek(fx, fy)))
    row(E, "ukern ukern.Array in, out positional", lambda: (lambda: ek(ux, uy, uz)))
    row(E, "ukern ukern.Array in, allocated (ukern.Array)", lambda: (lambda: ek(ux, uy)))
    if hasattr(ek, "_bind"):   # binding alone: arguments, stream, no launch
        row(E, "ukern _bind only: cupy in, out positional", lambda: (lambda: ek._bind(x, y, z)))
        row(E, "ukern _bind only: ukern.Array in and out", lambda: (lambda: ek._bind(ux, uy, uz)))
        row(E, "ukern _bind only: fixed-CAI objects", lambda: (lambda: ek._bind(fx, fy, fz)))
    if torch is not None:
        row(E, "ukern torch in, allocated out", lambda: (lambda: ek(tx, ty)))
        row(E, "ukern torch in, out positional", lambda: (lambda: ek(tx, ty, tz)))
        row(E, "torch (x - y) * (x - y) (3 kernels, reference)", lambda: (lambda: (tx - ty) * (tx - ty)))

    R = "reduction"
    row(R, "ukern sum cupy in, allocated", lambda: (lambda: rk(x)))
    row(R, "cupy  sum cupy in, allocated", lambda: (lambda: crk(x)))
    row(R, "ukern sum ukern.Array in, allocated", lambda: (lambda: rk(ux)))

    K = "raw"
    nop, cnop = ukern.RawKernel(NOP, "nop"), cp.RawKernel(NOP, "nop")
    one, cone = ukern.RawKernel(ONE, "one"), cp.RawKernel(ONE, "one")
    raw, craw = ukern.RawKernel(RAW, "scale"), cp.RawKernel(RAW, "scale")
    a2, n1 = np.float32(2), np.int32(1)
    row(K, "ukern 0 args", lambda: (lambda: nop((1,), (32,), ())))
    row(K, "cupy  0 args", lambda: (lambda: cnop((1,), (32,), ())))
    row(K, "ukern 0 args, int grid/block", lambda: (lambda: nop(1, 32, ())))
    row(K, "ukern 1 arg cupy", lambda: (lambda: one((1,), (32,), (x,))))
    row(K, "cupy  1 arg cupy", lambda: (lambda: cone((1,), (32,), (x,))))
    row(K, "ukern 1 arg ukern.Array", lambda: (lambda: one((1,), (32,), (ux,))))
    row(K, "ukern 1 arg fixed-CAI object", lambda: (lambda: one((1,), (32,), (fx,))))
    row(K, "ukern 1 arg None", lambda: (lambda: one((1,), (32,), (None,))))
    row(K, "ukern 4 args (cupy, cupy, f32, i32)", lambda: (lambda: raw((1,), (32,), (x, z, a2, n1))))
    row(K, "cupy  4 args (cupy, cupy, f32, i32)", lambda: (lambda: craw((1,), (32,), (x, z, a2, n1))))
    row(K, "ukern 0 args, stream=current", lambda: (lambda: nop((1,), (32,), (), stream=cur)))
    if hasattr(nop, "_bind"):   # packing and streams alone, no launch
        row(K, "ukern _bind only: 0 args", lambda: (lambda: nop._bind((1,), (32,), ())))
        row(K, "ukern _bind only: 1 arg cupy", lambda: (lambda: one._bind((1,), (32,), (x,))))
        row(K, "ukern _bind only: 4 args", lambda: (lambda: raw._bind((1,), (32,), (x, z, a2, n1))))
    if torch is not None:
        row(K, "ukern 1 arg torch", lambda: (lambda: one((1,), (32,), (tx,))))

    F = "fuse"
    if hasattr(ukern, "fuse"):
        fu = ukern.fuse(lambda a, x, y: a * x + y)
        fc = cp.fuse(kernel_name="saxpy")(lambda a, x, y: a * x + y)
        a = cp.float32(2)
        row(F, "ukern a*x+y (numpy f32, cupy, cupy)", lambda: (lambda: fu(a, x, y)))
        row(F, "cupy  a*x+y (numpy f32, cupy, cupy)", lambda: (lambda: fc(a, x, y)))
        row(F, "ukern a*x+y (Python float, cupy, cupy)", lambda: (lambda: fu(2.0, x, y)))
        row(F, "cupy  a*x+y (Python float, cupy, cupy)", lambda: (lambda: fc(2.0, x, y)))
        prog = fu._program(3)[0] if hasattr(fu, "_program") else None
        if prog is not None:
            row(F, "ukern _Fusion object directly (no Python wrapper)", lambda: (lambda: prog(a, x, y)))
            if hasattr(prog, "_bind"):
                row(F, "ukern _bind only (_Fusion)", lambda: (lambda: prog._bind(a, x, y)))
        row(F, "ukern a*x+y (numpy f32, ukern.Array x2)", lambda: (lambda: fu(a, ux, uy)))

    dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    meta = {"device": dev, "cupy": cp.__version__, "ukern": ukern.__version__, "numpy": np.__version__,
            "torch": getattr(torch, "__version__", None), "python": sys.version.split()[0],
            "calls_per_batch": CALLS, "batches": BATCHES}
    return meta


def table(meta):
    print(f"\n## ukern Python host-cost breakdown on {meta.get('device', '?')} "
          f"(CuPy {meta.get('cupy')}, torch {meta.get('torch')}, Python {meta.get('python')})\n")
    print("| group | case | us per call |\n|---|---|---|")
    for r in rows:
        v = r["us"] if "us" in r else "ERROR: " + r.get("error", "?").replace("|", "/")[:120]
        print(f"| {r['group']} | {r['case']} | {v} |")


if __name__ == "__main__":
    out = next((a for a in sys.argv[1:] if not a.startswith("--")), None)
    meta = {}
    try:
        meta = main()
    except Exception:   # noqa: BLE001  (set-up failed: still write what there is)
        traceback.print_exc()
        meta["error"] = traceback.format_exc(limit=3)
    if out:
        with open(out, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
    table(meta)
