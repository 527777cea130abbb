// ukern/fusion_row_cluster.cuh — the row kernel's cluster variant (sm_90+;
// codegen/fuse_row.c emits it under _UK_RC, codegen/fuse_row_cluster.c
// sizes it): a row is split over the C blocks of a thread-block cluster
// (a 1-D cluster along x: rank = position in the cluster), each block
// keeping its slice in its own shared memory. A row reduction combines
// within the block (_uk_row_reduce), then over the cluster: each block's
// thread 0 publishes its partial, a cluster barrier (release/acquire)
// orders that before every block reads all C partials through
// distributed shared memory (mapa + generic loads), in rank order, so
// every block gets the very same value.
//
// The partials of a reduction live in one of two slots (par, which flips
// each row): reduction k writes slot k % 2 only after the barrier of
// reduction k - 1, which every block passed after reading the partials of
// reduction k - 2 (that slot's previous use), so one barrier a reduction
// suffices. The kernel ends with a barrier: no block exits (its shared
// memory gone) while another may still read its partials.
#pragma once

#include <ukern/fusion_row.cuh>

// Two partial slots of one reduction level (raw: A may have constructors).
template <class A> struct _uk_clpart {
  alignas(A) unsigned char b[2][sizeof(A)];
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
// Every thread of every block of the cluster: writes before it are seen
// by reads after it in the other blocks.
static __device__ __forceinline__ void _uk_cl_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
// The generic address of p's counterpart in the shared memory of the
// cluster's block `rank`.
template <class A> static __device__ __forceinline__ const A *_uk_cl_map(const A *p, unsigned rank) {
  unsigned long long q;
  asm volatile("mapa.u64 %0, %1, %2;" : "=l"(q) : "l"(p), "r"(rank));
  return (const A *)q;
}

// v: the block's result of a row reduction (every thread has it); returns
// the cluster's, to every thread of every block. All threads call it.
template <class A, class Op>
static __device__ __forceinline__ A _uk_cluster_reduce(const A &v, Op op, _uk_clpart<A> &sm, int par) {
  A *mine = (A *)sm.b[par];
  if (threadIdx.x == 0) *mine = v;
  _uk_cl_sync();
  const unsigned n = _uk_cl_size();
  A r = *_uk_cl_map((const A *)mine, 0);
  for (unsigned k = 1; k < n; k++) r = op(r, *_uk_cl_map((const A *)mine, k));
  return r;
}
#endif
