#!/usr/bin/env python3
"""Do the lines a 1 GiB kernel leaves in L2 cost a later L2-resident workload, and for how long?
(ukern's fused row kernels load with an L2 evict-last policy; docs/PERF.md "Session 14".)
One kernel before, a process each (argv[2]: ukern, its fused layer norm | torch, torch.compile's
| copy, cupy.copyto of the same bytes); needs CuPy, and torch for `torch`. Workload: y = x * 2
over 16 MiB, 20 times; a 24 MiB sum, 20 times. Phases, 9 repetitions each, medians: baseline;
with the kernel before each repetition; then nothing before, three times (recovery).
argv: out.json ukern|torch|copy"""
import json, sys
import cupy as cp
import numpy as np

out, pre_kind = sys.argv[1], sys.argv[2]
big = cp.random.random((131072, 2048), dtype=cp.float32)
big2 = cp.empty_like(big)
if pre_kind == "ukern":
    import ukern
    def layernorm(x):
        d = x - np.mean(x, axis=-1, keepdims=True)
        return d / np.sqrt(np.mean(d * d, axis=-1, keepdims=True) + 1e-5)
    fu = ukern.fuse(layernorm)
    pre = lambda: fu(big)
elif pre_kind == "torch":
    import torch
    tb = torch.as_tensor(big, device="cuda")
    def tln(a):
        m = torch.mean(a, dim=-1, keepdim=True); d = a - m
        return d / torch.sqrt(torch.mean(d * d, dim=-1, keepdim=True) + 1e-5)
    tf = torch.compile(tln, dynamic=False)
    pre = lambda: tf(tb)
else:
    pre = lambda: cp.copyto(big2, big)
pre(); cp.cuda.Device().synchronize()
big3 = cp.random.random((131072, 2048), dtype=cp.float32)  # 1 GiB written since pre's warm-up
x = cp.random.random(4 << 20, dtype=cp.float32)
y = cp.empty_like(x)
r = cp.random.random(6 << 20, dtype=cp.float32)
s, e = cp.cuda.Event(), cp.cuda.Event()

def resident():
    s.record()
    for _ in range(20):
        cp.multiply(x, 2, out=y)
    e.record(); e.synchronize()
    t1 = cp.cuda.get_elapsed_time(s, e)
    s.record()
    for _ in range(20):
        r.sum()
    e.record(); e.synchronize()
    return t1, cp.cuda.get_elapsed_time(s, e)

resident(); resident()
res = {}
for name, fn in [("baseline", None), ("pre before each", pre), ("recovery 1", None), ("recovery 2", None),
                 ("recovery 3", None)]:
    a, b = [], []
    for _ in range(9):
        if fn is not None:
            fn()
        cp.cuda.Device().synchronize()
        t1, t2 = resident()
        a.append(t1); b.append(t2)
    res[name] = [float(np.median(a)), float(np.median(b))]
    print(f"{pre_kind:6s} {name:16s} mul {res[name][0]:.4f} sum {res[name][1]:.4f}", flush=True)
json.dump(res, open(out, "w"))
