#!/usr/bin/env python3
"""Python per-call host cost without a GPU (issue 25): ukern's kernel classes
called with stand-in CuPy arrays against the stand-in driver
(build/bench/fake_cuda/libcuda.so.1: launches do nothing), so that only the
host work of a call is measured: argument reading, cache look-ups, shapes,
output allocation and the driver calls' own overhead.

The stand-in `cupy` module is Python (its ndarray, UnownedMemory and
MemoryPointer cost more than CuPy's Cython ones; its pool hands out one block
in turn): what it says is how many of those a call makes, and ukern's own
part; absolute times are not CuPy's.

Rows: ElementwiseKernel and ReductionKernel with given and allocated outputs,
RawKernel with one array argument, ukern.fuse of a*x+y. Each row: ns per call
(median of batches, in-process), and with --instructions the instructions per
call (callgrind, the difference between runs of N and 2N calls, so start-up
and warm-up cancel; the cyclic collector off in those runs).

  LD_LIBRARY_PATH=build/bench/fake_cuda PYTHONPATH=build/python \\
      bench/tools/python_host_fake.py [--instructions] [--rows a,b] [--json OUT]
"""
import argparse
import gc
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import types

import numpy as np

ROWS = ["ew_out", "ew_alloc", "red_out", "red_alloc", "raw_1arg", "fuse_alloc"]


def make_fake_cupy():
    mod = types.ModuleType("cupy")
    keep = []

    class Stream:
        ptr = 0

    _stream = Stream()

    class MemoryPointer:
        def __init__(self, mem, offset):
            self.mem, self.ptr, self.device_id = mem, mem.ptr + offset, mem.device_id

    class UnownedMemory:
        def __init__(self, ptr, size, owner, device_id):
            self.ptr, self.size, self.owner, self.device_id = ptr, size, owner, device_id

    class _Pool:
        """One block handed out in turn: an allocation as cheap as a pool hit."""
        buf = np.empty(1 << 24, np.uint8)
        base, off = buf.ctypes.data, 0

    class _Pooled:
        __slots__ = ("ptr", "device_id")

        def __init__(self, n):
            o = _Pool.off
            _Pool.off = 0 if o + n + 512 > (1 << 24) else o + ((n + 255) & ~255)
            self.ptr, self.device_id = _Pool.base + o, 0

    def alloc(n):
        return MemoryPointer(_Pooled(n), 0)

    class ndarray:
        def __init__(self, shape, dtype=np.float32, memptr=None, strides=None):
            self.shape, self.dtype = tuple(shape), np.dtype(dtype)
            s, st = self.dtype.itemsize, []
            for e in reversed(self.shape):
                st.append(s)
                s *= e
            self.data = memptr if memptr is not None else alloc(s)
            self.strides = tuple(reversed(st))
            self._c_contiguous = True

        @property
        def __cuda_array_interface__(self):
            return {"shape": self.shape, "typestr": self.dtype.str, "descr": self.dtype.descr,
                    "data": (self.data.ptr, False), "version": 3, "stream": 1, "strides": None}

        def __dlpack_device__(self):
            return (2, 0)

    ndarray.__module__ = "cupy"
    mod.ndarray = ndarray
    mod.cuda = types.SimpleNamespace(get_current_stream=lambda: _stream, UnownedMemory=UnownedMemory,
                                     MemoryPointer=MemoryPointer, alloc=alloc)
    mod._keep = keep
    return mod


def setup(row):
    """The callable of one row, warmed up (compiled, caches filled)."""
    import ukern
    cp = sys.modules["cupy"]
    x, y, z = cp.ndarray((256, 64)), cp.ndarray((256, 64)), cp.ndarray((256, 64))
    r = cp.ndarray((256,))
    if row.startswith("ew"):
        k = ukern.ElementwiseKernel("T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff")
        fn = (lambda: k(x, y, z)) if row == "ew_out" else (lambda: k(x, y))
    elif row.startswith("red"):
        k = ukern.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "sum_k")
        fn = (lambda: k(x, axis=1, out=r)) if row == "red_out" else (lambda: k(x, axis=1))
    elif row == "raw_1arg":
        k = ukern.RawKernel(r'extern "C" __global__ void one(float* x) { if (threadIdx.x > 1024) x[0] = 0; }',
                            "one")
        fn = lambda: k((1,), (32,), (x,))  # noqa: E731
    else:
        f = ukern.fuse(lambda a, x, y: a * x + y)
        a = np.float32(2)
        fn = lambda: f(a, x, y)  # noqa: E731
    for _ in range(50):
        fn()
    return fn


def ns_per_call(fn, calls=2000, batches=9):
    out = []
    for _ in range(batches):
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        out.append((time.perf_counter_ns() - t0) / calls)
    out.sort()
    return out[len(out) // 2]


def child(row, n):
    """Callgrind's subject: set up a row, then n calls. The cyclic collector
    is off: a full collection falls into one run's window and not the
    other's (thousands of instructions a call of noise)."""
    sys.modules["cupy"] = make_fake_cupy()
    fn = setup(row)
    gc.collect()
    gc.disable()
    for _ in range(n):
        fn()


def instructions(row, n=2000):
    got = []
    for calls in (n, 2 * n):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "cg.out")
            cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, sys.executable,
                   os.path.abspath(__file__), "--child", row, str(calls)]
            subprocess.run(cmd, check=True, capture_output=True)
            total = None
            for line in open(out):
                m = re.match(r"(summary|totals): (\d+)", line)
                if m:
                    total = int(m.group(2))
            got.append(total)
    return (got[1] - got[0]) / n


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--instructions", action="store_true")
    ap.add_argument("--rows", default=",".join(ROWS))
    ap.add_argument("--json")
    a = ap.parse_args()
    os.environ.setdefault("UKERN_CACHE_DIR", tempfile.mkdtemp(prefix="uk_pyhost_"))
    sys.modules["cupy"] = make_fake_cupy()
    res = {}
    for row in a.rows.split(","):
        fn = setup(row)
        res[row] = {"ns": round(ns_per_call(fn))}
        if a.instructions:
            res[row]["instructions"] = round(instructions(row))
        print(f"{row:12s} {res[row]['ns']:8d} ns" +
              (f"  {res[row]['instructions']:9d} instructions" if a.instructions else ""), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
