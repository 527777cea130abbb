// ukern/cluster.cuh — the distributed shared memory steps of the cluster
// combines (sm_90+): a reduction's wide plan over a cluster
// (ukern/red_group.cuh cluster_fold) and the row kernel's cluster variant
// (ukern/fusion_row_cluster.cuh). A block pushes 32-bit words into another
// block's shared memory by st.async, each push completing bytes of the
// receiver's mbarrier; the receiver's waiting threads see the words once
// the mbarrier's phase completes (its arrivals and its expected bytes).
#pragma once

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
namespace ukern {
namespace detail {

// A shared memory address of the calling block (32-bit, as mapa takes it).
__device__ __forceinline__ unsigned smem_addr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

// Sets up the mbarrier at `bar` for one arrival a phase (one thread).
__device__ __forceinline__ void mbar_init(unsigned bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
}

// The arrival half of a cluster barrier, after the mbarriers' set-up: the
// thread that set them up (init) first releases them to the cluster. Its
// wait (cluster_wait_after_init) comes before any push to them.
__device__ __forceinline__ void cluster_arrive_after_init(bool init) {
  if (init) asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}

// The wait half of that barrier: every block of the cluster arrived, so
// their mbarriers are set up (acquire: the set-up is seen) before a push.
__device__ __forceinline__ void cluster_wait_after_init() {
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// Pushes N words into block `rank`'s shared memory at the address `dst`
// has in the caller's (the same variable there), completing 4 N bytes of
// that block's mbarrier at the address `bar` has in the caller's.
template <int N>
__device__ __forceinline__ void cluster_push(unsigned dst, unsigned bar, unsigned rank, const unsigned (&w)[N]) {
  unsigned rd, rb;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rd) : "r"(dst), "r"(rank));
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rb) : "r"(bar), "r"(rank));
#pragma unroll
  for (int i = 0; i < N; i++)
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(rd + 4 * i),
                 "r"(w[i]), "r"(rb)
                 : "memory");
}

// The mbarrier's one arrival (release: the caller's earlier shared memory
// writes) with the bytes still to come from other blocks' pushes.
__device__ __forceinline__ void mbar_arrive_expect(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

// Waits (acquire, cluster scope: the pushes' words) until the phase of
// the given parity completes.
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  unsigned done;
  do
    asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(done)
                 : "r"(bar), "r"(parity)
                 : "memory");
  while (!done);
}

} // namespace detail
} // namespace ukern
#endif
