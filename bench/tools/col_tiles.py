#!/usr/bin/env python3
"""Bare column sums against tile width and row pieces (issue 25: the many-output column misses).

The sweep's column reductions with many outputs (16384-131072 columns) run about 1 us over a
bare read of the same bytes (bench/sweep_floor.py), with every plan ukern's planner weighs.
Those plans read a tile 128-512 bytes wide (8-32 threads across, 16 bytes each) down every
row. This tool times bare float32 sums over axis 0 of (R, C) arrays (C contiguous) with tiles
of W bytes and the rows cut into S pieces, ending three ways:

- `part`: each block stores its tile's partial sums and ends (S = 1: the sums themselves): how
  fast the tile's access pattern reads, with no combine;
- `cluster`: the S pieces of a tile are the blocks of one thread-block cluster; ranks 1.. write
  their partials into rank 0's shared memory, a cluster barrier, rank 0 adds them in rank order
  (sm_90 and later);
- `split`: the S pieces count in at the tile's counter (an acquire-release atomic between two
  barriers) and the last adds the partials in piece order (ukern's split ending).

Each result is checked against NumPy once. Blocks of 256 threads: W / 16 across, 4096 / W
thread rows, 8 loads in flight a thread. Timing as the sweep's (col_plans.py's timed_us: events,
a 256 MiB read flush before each call, median of 21 after 3 warm-ups; col_plans.py imports
ukern, so ukern's Python package must be on the path).

Usage: python3 bench/tools/col_tiles.py OUT.jsonl [RxC ...]   (default: the sweep's shapes)
"""
import json
import os
import sys

import cupy as cp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from col_plans import timed_us  # noqa: E402  (beside this file: the sweep's timing)

THREADS = 256
WIDTHS = (128, 256, 512, 1024, 2048)
PIECES = (1, 2, 4, 8)
SHAPES = ((64, 16384), (256, 16384), (1024, 4096), (16, 262144), (128, 131072), (1024, 16384))

SOURCE = r"""
#include <cooperative_groups.h>
__device__ __forceinline__ float4 add4(float4 a, float4 b) {
  return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}

// The block's partial of its tile's columns over rows [r0, r1), in sm[tx] of thread row 0.
template <int W> __device__ __forceinline__ void tile_sum(const float4 *__restrict__ x, int R, int C4, int r0,
                                                          int r1, float4 *sm) {
  constexpr int BX = W / 16, BY = 256 / BX;
  const int tx = threadIdx.x % BX, ty = threadIdx.x / BX;
  const long long c = (long long)blockIdx.x * BX + tx;
  float4 a = make_float4(0.f, 0.f, 0.f, 0.f);
  int r = r0 + ty;
  for (; r + 7 * BY < r1; r += 8 * BY) {
    float4 v[8];
#pragma unroll
    for (int k = 0; k < 8; k++) v[k] = x[(long long)(r + k * BY) * C4 + c];
#pragma unroll
    for (int k = 0; k < 8; k++) a = add4(a, v[k]);
  }
  for (; r < r1; r += BY) a = add4(a, x[(long long)r * C4 + c]);
  sm[threadIdx.x] = a;
  __syncthreads();
#pragma unroll 1
  for (int h = BY / 2; h > 0; h /= 2) {
    if (ty < h) sm[threadIdx.x] = add4(sm[threadIdx.x], sm[threadIdx.x + h * BX]);
    __syncthreads();
  }
}

// part: piece blockIdx.y of S stores its partials (S = 1: the sums).
template <int W> __device__ void cols_part(const float4 *x, int R, int C4, int S, float4 *part) {
  __shared__ float4 sm[256];
  const int per = (R + S - 1) / S, r0 = blockIdx.y * per, r1 = min(R, r0 + per);
  tile_sum<W>(x, R, C4, r0, r1, sm);
  const long long c = (long long)blockIdx.x * (W / 16) + threadIdx.x;
  if (threadIdx.x < W / 16) part[(long long)blockIdx.y * C4 + c] = sm[threadIdx.x];
}

// split: the pieces count in at the tile's counter; the last adds the partials in piece order.
template <int W> __device__ void cols_split(const float4 *x, int R, int C4, int S, float4 *part, unsigned *count,
                                            float4 *out) {
  constexpr int BX = W / 16;
  __shared__ float4 sm[256];
  __shared__ bool last;
  const int per = (R + S - 1) / S, r0 = blockIdx.y * per, r1 = min(R, r0 + per);
  tile_sum<W>(x, R, C4, r0, r1, sm);
  const long long c = (long long)blockIdx.x * BX + threadIdx.x;
  if (threadIdx.x < BX) part[(long long)blockIdx.y * C4 + c] = sm[threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned old;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(count + blockIdx.x) : "memory");
    last = old == (unsigned)S - 1;
    if (last) count[blockIdx.x] = 0;
  }
  __syncthreads();
  if (!last || threadIdx.x >= BX) return;
  float4 s = __ldcg(part + c);
  for (int k = 1; k < S; k++) s = add4(s, __ldcg(part + (long long)k * C4 + c));
  out[c] = s;
}

// cluster: the S pieces of a tile are one cluster's ranks (grid y = S); rank 0 adds.
template <int W, int S> __device__ void cols_cluster(const float4 *x, int R, int C4, float4 *out) {
  namespace cg = cooperative_groups;
  constexpr int BX = W / 16;
  __shared__ float4 sm[256];
  __shared__ float4 recv[S][BX];
  cg::cluster_group cl = cg::this_cluster();
  const int rank = (int)cl.block_rank();
  const int per = (R + S - 1) / S, r0 = rank * per, r1 = min(R, r0 + per);
  tile_sum<W>(x, R, C4, r0, r1, sm);
  if (threadIdx.x < BX) *cl.map_shared_rank(&recv[rank][threadIdx.x], 0) = sm[threadIdx.x];
  cl.sync();
  if (rank != 0 || threadIdx.x >= BX) return;
  float4 s = recv[0][threadIdx.x];
#pragma unroll
  for (int k = 1; k < S; k++) s = add4(s, recv[k][threadIdx.x]);
  out[(long long)blockIdx.x * BX + threadIdx.x] = s;
}

#define PART_SPLIT(W)                                                                                     \
  extern "C" __global__ void __launch_bounds__(256) part_##W(const float4 *x, int R, int C4, int S,      \
                                                             float4 *part) { cols_part<W>(x, R, C4, S, part); } \
  extern "C" __global__ void __launch_bounds__(256) split_##W(const float4 *x, int R, int C4, int S,     \
                                                              float4 *part, unsigned *count, float4 *out) { \
    cols_split<W>(x, R, C4, S, part, count, out);                                                         \
  }
#define CLUSTER(W, S)                                                                                     \
  extern "C" __global__ void __launch_bounds__(256) __cluster_dims__(1, S, 1)                            \
      cluster_##W##_##S(const float4 *x, int R, int C4, float4 *out) { cols_cluster<W, S>(x, R, C4, out); }
#define ALL(W) PART_SPLIT(W) CLUSTER(W, 2) CLUSTER(W, 4) CLUSTER(W, 8)
ALL(128)
ALL(256)
ALL(512)
ALL(1024)
ALL(2048)
"""

def timed(fn, reps=21):
    """us: median of reps after 3 warm-ups, the L2 flushed before each (col_plans.py's timer)."""
    return timed_us(fn, reps)


def main():
    out_path = sys.argv[1]
    shapes = [tuple(int(v) for v in a.split("x")) for a in sys.argv[2:]] or SHAPES
    mod = cp.RawModule(code=SOURCE, options=("-std=c++17",))
    cluster_ok = int(cp.cuda.Device().compute_capability) >= 90
    with open(out_path, "w") as f:
        for R, C in shapes:
            x = cp.random.default_rng(3).random((R, C), dtype=cp.float32)
            want = cp.asnumpy(x).astype(np.float64).sum(axis=0)
            C4 = C // 4
            part = cp.empty((8, C), cp.float32)
            count = cp.zeros(C4, cp.uint32)
            out = cp.empty(C, cp.float32)
            res = {}
            for W in WIDTHS:
                tiles = C4 // (W // 16)
                if tiles < 1 or C4 % (W // 16):
                    continue
                for S in PIECES:
                    if S > R:
                        continue
                    runs = [("part", mod.get_function(f"part_{W}"), (x, np.int32(R), np.int32(C4), np.int32(S), part))]
                    if S > 1:
                        runs.append(("split", mod.get_function(f"split_{W}"),
                                     (x, np.int32(R), np.int32(C4), np.int32(S), part, count, out)))
                        if cluster_ok:
                            runs.append(("cluster", mod.get_function(f"cluster_{W}_{S}"),
                                         (x, np.int32(R), np.int32(C4), out)))
                    for name, k, args in runs:
                        def call(k=k, args=args):
                            k((tiles, S), (THREADS,), args)
                        call()
                        got = part[:S].sum(axis=0) if name == "part" else out
                        if not np.allclose(cp.asnumpy(got), want, rtol=1e-4, atol=1e-3):
                            raise SystemExit(f"col_tiles: {R}x{C} {name} W={W} S={S}: wrong sums")
                        res[f"{name},W={W},S={S}"] = round(timed(call), 3)
            best = sorted(res.items(), key=lambda kv: kv[1])
            f.write(json.dumps({"shape": [R, C], "us": res}) + "\n")
            print(f"{R}x{C} ({R * C * 4 >> 20} MiB): " + ", ".join(f"{k} {v:.2f}" for k, v in best[:6])
                  + " | unsplit: " + ", ".join(f"W={W} {res[f'part,W={W},S=1']:.2f}" for W in WIDTHS
                                                if f"part,W={W},S=1" in res), flush=True)


if __name__ == "__main__":
    main()
