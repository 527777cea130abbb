// ukern/fusion_row_cluster.cuh — the row kernel's cluster variant (sm_90+;
// codegen/fuse_row.c emits it under _UK_RC, codegen/fuse_row_cluster.c
// sizes it): a row is split over the C blocks of a thread-block cluster
// (a 1-D cluster along x: rank = position in the cluster), each block
// keeping its slice in its own shared memory or, with _UK_RK, in its
// threads' registers. A row reduction combines within the block
// (_uk_row_reduce), then over the cluster: each block pushes its partial
// into every other block's shared memory (st.async from threads 1 .. C-1,
// one receiver each, each push completing bytes of the receiver's
// mbarrier) and its own (thread 0); every thread waits for its block's
// mbarrier and combines the C partials in rank order, so every block gets
// the very same value. No cluster barrier a reduction: a barrier.cluster
// release is a GPU-scope fence (MEMBAR.ALL.GPU: every warp waited for its
// row's global stores to drain) and a stop of the whole cluster; the
// mbarrier wait is local.
//
// A reduction's partials live in one of two slots (it & 1: it counts the
// rows a block ran), each with its mbarrier (phase (it >> 1) & 1 a use).
// Reduction k pushes into slot k % 2 only after its block passed the
// barrier of reduction k - 1 (the pushes of every block, each made after
// its whole block had read slot k % 2 for reduction k - 2: the
// __syncthreads of _uk_row_reduce sits between), so the slot and its
// mbarrier are free. The mbarriers are initialised before a cluster
// barrier (its arrival at the start, its wait before the first push).
// The kernel ends with none: a block's pushes are its only accesses to
// other blocks' shared memory, and every push to a block completes bytes
// of its mbarrier, which it waits for at each reduction, the last one
// included: by then no push to it is in flight, and it may exit (a
// closing cluster barrier cost 0.4-0.5 us a call, H200).
#pragma once

#include <ukern/cluster.cuh>
#include <ukern/fusion_row.cuh>

// The partials of one reduction level: two slots of C (at most 16)
// partials, each slot with its mbarrier (raw words: A may have
// constructors).
template <class A> struct _uk_clpart {
  unsigned long long bar[2];
  unsigned w[2][16][ukern::detail::words<A>::N];
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// The block's rank in its cluster and the cluster's size; the cluster's
// index in the grid (x) and the clusters of the grid.
#define _UK_CL_SREG(fn, reg)                                                   \
  static __device__ __forceinline__ unsigned fn() {                            \
    unsigned r;                                                                \
    asm volatile("mov.u32 %0, %%" reg ";" : "=r"(r));                          \
    return r;                                                                  \
  }
_UK_CL_SREG(_uk_cl_rank, "cluster_ctarank")
_UK_CL_SREG(_uk_cl_size, "cluster_nctarank")
_UK_CL_SREG(_uk_cl_id, "clusterid.x")
_UK_CL_SREG(_uk_cl_count, "nclusterid.x")
#undef _UK_CL_SREG

// Thread 0: the level's two mbarriers, one arrival a phase (thread 0's,
// with the bytes the other blocks push). Before _uk_cl_init_done().
template <class A> static __device__ __forceinline__ void _uk_cl_init(_uk_clpart<A> &sm) {
  if (threadIdx.x == 0)
    for (int k = 0; k < 2; k++) ukern::detail::mbar_init(ukern::detail::smem_addr(&sm.bar[k]));
}
// After every level's _uk_cl_init: the arrival half of a cluster barrier
// (the fence releases the mbarriers' initialisation to the cluster); its
// wait comes before the first push (_uk_cluster_reduce's first call), so
// that the row's first loads and pass run meanwhile (a whole cluster
// barrier here took 0.25-0.3 us of a 5-9 us kernel, H200).
static __device__ __forceinline__ void _uk_cl_init_done() { ukern::detail::cluster_arrive_after_init(threadIdx.x == 0); }

// v: the block's result of a row reduction (every thread has it); returns
// the cluster's, to every thread of every block. All threads call it, once
// a row (it: the rows the block ran before this one); first: the row's
// first level (the first call of all, it 0, waits for every block's
// mbarriers: _uk_cl_init_done).
template <class A, class Op>
static __device__ __forceinline__ A _uk_cluster_reduce(const A &v, Op op, _uk_clpart<A> &sm, unsigned it, bool first) {
  typedef ukern::detail::words<A> Wd;
  if (first && it == 0) ukern::detail::cluster_wait_after_init();
  const unsigned s = it & 1, n = _uk_cl_size(), bar = ukern::detail::smem_addr(&sm.bar[s]);
  // thread 0: the own slot and the arrival (release: the slot's words) with
  // the bytes to come; threads 1 .. n - 1 (of warp 0): a push each, to rank
  // (me + thread) % n, all at once (one thread's 15 pushes in turn took
  // 0.1-0.4 us longer over 16 blocks, H200: docs/PERF.md "Session 28")
  if (threadIdx.x < n) {
    const unsigned me = _uk_cl_rank(), dst = ukern::detail::smem_addr(&sm.w[s][me][0]);
    Wd x;
    x.put(v);
    if (threadIdx.x == 0) {
#pragma unroll
      for (int i = 0; i < Wd::N; i++) sm.w[s][me][i] = x.w[i];
      ukern::detail::mbar_arrive_expect(bar, (n - 1) * Wd::N * 4);
    } else {
      const unsigned k = me + threadIdx.x;
      ukern::detail::cluster_push(dst, bar, k < n ? k : k - n, x.w);
    }
  }
  ukern::detail::mbar_wait(bar, (it >> 1) & 1);
  Wd x;
  A r, o;
#pragma unroll
  for (int i = 0; i < Wd::N; i++) x.w[i] = sm.w[s][0][i];
  x.get(r);
  for (unsigned k = 1; k < n; k++) {
#pragma unroll
    for (int i = 0; i < Wd::N; i++) x.w[i] = sm.w[s][k][i];
    x.get(o);
    r = op(r, o);
  }
  return r;
}
#endif
