"""Where a fused row program's time goes over few long rows: softmax, layer norm and
x - mean beside variants that leave one stage out (no exp, a product for the division, one
reduction level, two cheap levels), each fused by ukern and timed as bench/sweep.py times
its points (L2 flushed by a 256 MiB read, CUDA events, median of 41, two rounds in
alternating order, the faster kept). Prints one line a shape, us. Needs CuPy and a GPU.
docs/PERF.md "Session 21" has a run on an H200.

Usage: PYTHONPATH=build/python python3 bench/tools/row_variants.py
"""
import cupy as cp
import numpy as np

import ukern

FB = 256 << 20
FL = cp.empty(FB, cp.uint8); FL.fill(1)
FR = cp.RawKernel(r"""
extern "C" __global__ void fl(const uint4 *p, long long n, unsigned int *sink) {
  unsigned int a = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    uint4 v = p[i]; a += v.x ^ v.y ^ v.z ^ v.w; }
  if (n < 0) sink[0] = a;
}""", "fl")
def gpu_us(fn, reps=41):
    for _ in range(3): fn()
    s, e = cp.cuda.Event(), cp.cuda.Event(); t = []
    for _ in range(reps):
        FR((1024,), (256,), (FL, np.int64(FB // 16), FL))
        s.record(); fn(); e.record(); e.synchronize()
        t.append(cp.cuda.get_elapsed_time(s, e) * 1000)
    return float(np.median(t))
K = dict(axis=-1, keepdims=True)
P = {
 'center':   lambda x: x - np.mean(x, **K),
 'softmax':  lambda x: (lambda e: e / np.sum(e, **K))(np.exp(x - np.max(x, **K))),
 'sm_noexp': lambda x: (lambda e: e / np.sum(e, **K))(x - np.max(x, **K)),
 'sm_nodiv': lambda x: (lambda e: e * np.sum(e, **K))(np.exp(x - np.max(x, **K))),
 'sm_1lvl':  lambda x: (lambda e: e / np.sum(e, **K))(np.exp(x)),
 'cc2':      lambda x: (lambda d: d - np.mean(d, **K))(x - np.mean(x, **K)),
 'exp_c':    lambda x: np.exp(x - np.mean(x, **K)),
 'layernorm':lambda x: (lambda d: d / np.sqrt(np.mean(d * d, **K) + 1e-5))(x - np.mean(x, **K)),
 'ln_1lvl':  lambda x: (lambda m, q: (x - m) / np.sqrt(q - m * m + 1e-5))(np.mean(x, **K), np.mean(x * x, **K)),
}
F = {k: ukern.fuse(v) for k, v in P.items()}
shapes = [(8, 8192), (32, 8192), (1, 65536), (4, 65536), (16, 65536), (32, 32768)]
res = {}
for rnd in range(2):
    for sh in shapes:
        x = cp.random.rand(*sh, dtype=cp.float32)
        names = list(P) if rnd == 0 else list(P)[::-1]
        for k in names:
            res.setdefault((sh, k), []).append(gpu_us(lambda: F[k](x)))
for sh in shapes:
    print(sh, '  '.join(f"{k} {min(res[(sh, k)]):.2f}" for k in P))
