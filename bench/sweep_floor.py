"""The bare-kernel floors beside the sweep's reduction and argmax points (issue 25 item 5).

A reduction point that misses its target is either ukern's cost or the GPU's: these
floors tell which, measured in the same run. Each reads a size's bytes of float32 once
with one hand-written kernel (no parameters beyond the pointers and counts, 16-byte loads,
8 in flight a thread a trip, a warp-shuffle block sum):

- `read`: each block stores its sum and ends. The floor of any kernel that reads the
  bytes once: no combine, no count.
- `split`: ukern's split ending (red_group's): thread 0 stores the block's sum under a
  "written" tag in one 64-bit word and counts the block in with a relaxed atomic; the last
  block waits on each partial's tag, sums them in a fixed order, clears them and resets the
  count (CUB's two kernels pay a second launch instead). An acquire-release count over plain
  partials, this floor before session 31, took 0.3-0.5 us longer at 256 KiB - 64 MiB (H200:
  bench/results/red-ending-2026-11-29-h200-s31.txt).
- `cluster`: one thread-block cluster of 2, 4 or 8 blocks of 1024 threads; the other blocks
  push their sums into rank 0's shared memory (st.async onto rank 0's mbarrier) and end, rank
  0 adds them in rank order. No count and no global partials, but only 8 SMs: tried up to
  4 MiB (sm_90 and later).

The deterministic floor is the faster of `split` and `cluster`. A point slower than its
target whose deterministic floor misses the target too is missed by each of these bare
reductions of its bytes, whatever its axes; `read` bounds every kernel that reads them.

`read` and `split` are the best over grids of 1 .. 2048 blocks of 256 threads (every thread
at least one load), each timed by the caller's timer (the sweep's: events, L2 flushed).
Needs CuPy.
"""
import cupy as cp
import numpy as np

THREADS = 256
TRIP = 8                      # 16-byte loads a thread issues before using any
GRIDS = tuple(1 << k for k in range(12))   # 1 .. 2048 blocks
CLUSTERS = (2, 4, 8)
CLUSTER_THREADS = 1024
CLUSTER_MAX_BYTES = 4 << 20

_SOURCE = r"""
__device__ __forceinline__ float block_sum(float v) {
  __shared__ float warp_sums[32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();                       // warp_sums free from an earlier call
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = lane < (int)(blockDim.x >> 5) ? warp_sums[lane] : 0.0f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;                              // every warp holds the block's sum
}

// Block b sums float4s [b * chunk, min(n, (b + 1) * chunk)), TRIP loads in flight a trip.
__device__ __forceinline__ float chunk_sum(const float4 *__restrict__ x, long long n, long long chunk) {
  const long long beg = (long long)blockIdx.x * chunk, end = beg + chunk < n ? beg + chunk : n;
  const long long by = blockDim.x;
  float a = 0.0f;
  long long i = beg + threadIdx.x;
  for (; i + (TRIP - 1) * by < end; i += TRIP * by) {
    float4 v[TRIP];
#pragma unroll
    for (int k = 0; k < TRIP; k++) v[k] = x[i + k * by];
#pragma unroll
    for (int k = 0; k < TRIP; k++) a += (v[k].x + v[k].y) + (v[k].z + v[k].w);
  }
  for (; i < end; i += by) {
    float4 v = x[i];
    a += (v.x + v.y) + (v.z + v.w);
  }
  return block_sum(a);
}

extern "C" __global__ void uk_floor_read(const float4 *__restrict__ x, long long n, long long chunk, float *part) {
  const float s = chunk_sum(x, n, chunk);
  if (threadIdx.x == 0) part[blockIdx.x] = s;
}

// Partial j: 1 << 32 | the sum's bits, once written (relaxed stores and loads at GPU scope: one 64-bit
// word, so the value comes with its tag); 0 before, and again once the last block took it.
extern "C" __global__ void uk_floor_split(const float4 *__restrict__ x, long long n, long long chunk,
                                          unsigned long long *part, unsigned int *count, float *out) {
  const float s = chunk_sum(x, n, chunk);
  __shared__ bool last;
  if (threadIdx.x == 0) {
    const unsigned long long w = (1ull << 32) | __float_as_uint(s);
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(part + blockIdx.x), "l"(w) : "memory");
    unsigned int old;
    asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(count) : "memory");
    last = old == gridDim.x - 1;
    if (last) *count = 0;                // ready for the next launch
  }
  __syncthreads();
  if (!last) return;
  float c = 0.0f;
  for (unsigned int j = threadIdx.x; j < gridDim.x; j += blockDim.x) {
    unsigned long long w;
    do asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(w) : "l"(part + j) : "memory");
    while ((w >> 32) == 0);              // its writer's store still on its way
    c += __uint_as_float((unsigned int)w);
    part[j] = 0ull;                      // for the next launch
  }
  c = block_sum(c);
  if (threadIdx.x == 0) *out = c;
}

#if __CUDA_ARCH__ >= 900 || !defined(__CUDA_ARCH__)
// Ranks 1.. push their sums into rank 0's shared memory (st.async, each completing bytes of
// rank 0's mbarrier) and end; rank 0 waits for the bytes and adds the sums in rank order. The
// cluster barrier's arrival (after rank 0's mbarrier set-up) comes before the loads, its wait
// after them: no whole cluster barrier in the way.
template <int C> __device__ __forceinline__ void cluster_sum(const float4 *__restrict__ x, long long n, long long chunk,
                                                             float *out) {
  __shared__ float sums[C];
  __shared__ unsigned long long bar;
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  const unsigned sbar = (unsigned)__cvta_generic_to_shared(&bar);
  if (rank == 0 && threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sbar) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
  const float s = chunk_sum(x, n, chunk);
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
  if (threadIdx.x != 0) return;
  const unsigned ssum = (unsigned)__cvta_generic_to_shared(&sums[rank]);
  if (rank != 0) {
    unsigned rd, rb;
    asm volatile("mapa.shared::cluster.u32 %0, %1, 0;" : "=r"(rd) : "r"(ssum));
    asm volatile("mapa.shared::cluster.u32 %0, %1, 0;" : "=r"(rb) : "r"(sbar));
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(rd),
                 "r"(__float_as_uint(s)), "r"(rb) : "memory");
    return;
  }
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sbar), "r"((C - 1) * 4) : "memory");
  unsigned done;
  do
    asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], 0;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}" : "=r"(done) : "r"(sbar) : "memory");
  while (!done);
  float c = s;
#pragma unroll
  for (int k = 1; k < C; k++) c += sums[k];
  *out = c;
}
#define CLUSTER_KERNEL(C)                                                                                    \
  extern "C" __global__ void __cluster_dims__(C, 1, 1)                                                       \
      uk_floor_cluster##C(const float4 *__restrict__ x, long long n, long long chunk, float *out) {          \
    cluster_sum<C>(x, n, chunk, out);                                                                        \
  }
CLUSTER_KERNEL(2)
CLUSTER_KERNEL(4)
CLUSTER_KERNEL(8)
#endif
"""

_module = None
_scratch = {}


def _module_():
    global _module
    if _module is None:
        _module = cp.RawModule(code=_SOURCE, options=(f"-DTRIP={TRIP}", "-std=c++17"))
    return _module


def _kernels():
    m = _module_()
    return m.get_function("uk_floor_read"), m.get_function("uk_floor_split")


def _clusters(nbytes):
    """(blocks, kernel) of the cluster floors tried for nbytes: none above CLUSTER_MAX_BYTES or
    before sm_90."""
    if nbytes > CLUSTER_MAX_BYTES or int(cp.cuda.Device().compute_capability) < 90:
        return []
    return [(c, _module_().get_function(f"uk_floor_cluster{c}")) for c in CLUSTERS
            if c * CLUSTER_THREADS * 4 <= nbytes // 4]


def grids(nbytes):
    """The grids tried for nbytes: every thread at least one 16-byte load."""
    vecs = nbytes // 16
    return [g for g in GRIDS if g * THREADS <= vecs] or [1]


def _buffers(nbytes):
    if nbytes not in _scratch:
        x = cp.random.default_rng(5).random(nbytes // 4, dtype=cp.float32)
        part = cp.zeros(max(GRIDS), cp.float32)
        tagged = cp.zeros(max(GRIDS), cp.uint64)   # split's partials: zero (no tag) between launches
        count = cp.zeros(1, cp.uint32)
        out = cp.zeros(1, cp.float32)
        _scratch.clear()          # one size at a time: the sweep runs a size's points together
        _scratch[nbytes] = (x, part, tagged, count, out)
    return _scratch[nbytes]


def check(nbytes):
    """The split and cluster floors' sums against NumPy's (float64) on the same data, at every grid
    they are timed with; raises on a mismatch."""
    read, split = _kernels()
    x, part, tagged, count, out = _buffers(nbytes)
    n = nbytes // 16
    want = float(cp.asnumpy(x).astype(np.float64).sum())
    for g in grids(nbytes):
        chunk = -(-n // g)
        out.fill(np.nan)
        split((g,), (THREADS,), (x, np.int64(n), np.int64(chunk), tagged, count, out))
        got = float(out.get()[0])
        if not abs(got - want) <= 1e-4 * abs(want) + 1e-3:
            raise AssertionError(f"floor split of {nbytes} bytes, {g} blocks: {got} != {want}")
    for c, kern in _clusters(nbytes):
        out.fill(np.nan)
        kern((c,), (CLUSTER_THREADS,), (x, np.int64(n), np.int64(-(-n // c)), out))
        got = float(out.get()[0])
        if not abs(got - want) <= 1e-4 * abs(want) + 1e-3:
            raise AssertionError(f"floor cluster of {nbytes} bytes, {c} blocks: {got} != {want}")


def floors(nbytes, timer):
    """{'read_ms', 'split_ms', 'cluster_ms' (None where not tried), their '_grid's (blocks) and
    'det_ms' (the deterministic floor: the faster of split and cluster)}: the best of each
    over its grids, each timed by timer(fn) (ms)."""
    read, split = _kernels()
    x, part, tagged, count, out = _buffers(nbytes)
    n = nbytes // 16
    res = {}
    for name, kern, extra in (("read", read, (part,)), ("split", split, (tagged, count, out))):
        best = None
        for g in grids(nbytes):
            args = (x, np.int64(n), np.int64(-(-n // g))) + extra
            ms = timer(lambda: kern((g,), (THREADS,), args))
            if best is None or ms < best[0]:
                best = (ms, g)
        res[f"{name}_ms"], res[f"{name}_grid"] = best
    res["cluster_ms"] = res["cluster_grid"] = None
    for c, kern in _clusters(nbytes):
        args = (x, np.int64(n), np.int64(-(-n // c)), out)
        ms = timer(lambda: kern((c,), (CLUSTER_THREADS,), args))
        if res["cluster_ms"] is None or ms < res["cluster_ms"]:
            res["cluster_ms"], res["cluster_grid"] = ms, c
    res["det_ms"] = min(v for v in (res["split_ms"], res["cluster_ms"]) if v is not None)
    return res
