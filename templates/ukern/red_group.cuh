// ukern/red_group.cuh — red_group (ukern/reduction.cuh): A._uk_by threads per
// output. Its own header so that a program planned for another strategy
// does not parse it (reduction.cu includes the planned strategy's only).
#pragma once

#include <ukern/reduction.cuh>
#ifdef _UK_RED_CLUSTER
#include <ukern/cluster.cuh>
#endif

namespace ukern {
namespace detail {

// Combines within groups of `g` threads (1, 8, 32 or BLOCK, or 2 and 4 in a
// narrow program; the same for the whole block); thread 0 of each group
// gets the result. Every thread of the block takes part.
template <class T, int BLOCK> struct group_reduce {
  enum { NW = BLOCK / 32 };
#ifdef UKERN_RED_BLOCK_CUB
  typedef cub::BlockReduce<T, BLOCK> block;
  struct storage {
    typename block::TempStorage cub; // CUB's own uninitialised storage
  };
#else
  struct storage {
    alignas(T) unsigned char part[sizeof(T) * NW]; // raw: T may have constructors
  };
#endif
  template <class Op> static __device__ __forceinline__ T reduce(storage &s, const T &v, int g, Op op) {
    if (g == 1) return v;
#ifdef _UK_RED_NARROW
    // Short rows (the key's narrow): 2, 4 or 8 threads an output. Only such
    // programs have the width as a variable: it costs a deep program at 32
    // registers a spill.
    if (g < 32) return warp_reduce<T, 8>::reduce(v, op, g);
#else
    if (g == 8) return warp_reduce<T, 8>::reduce(v, op);
#endif
#ifdef UKERN_RED_BLOCK_CUB
    if (g == 32) return warp_reduce<T, 32>::reduce(v, op);
    T x = block(s.cub).Reduce(v, op); // valid in thread 0
    __syncthreads();                  // the storage is reused by the next output
    return x;
#else
    // A warp per output and the block's first step share one copy of the
    // warp combine (each copy of a struct type's is ~15% of the compile).
    T x = warp_reduce<T, 32>::reduce(v, op);
    if (g == 32) return x;
    T *part = (T *)s.part;
    const int lane = threadIdx.x % 32, w = threadIdx.x / 32;
    if (lane == 0) part[w] = x;
    __syncthreads();
    if (w == 0) x = warp_reduce<T, NW>::reduce(part[lane < NW ? lane : 0], op);
    __syncthreads(); // the storage is reused by the next output
    return x;
#endif
  }
};

#ifdef _UK_RED_CLUSTER
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "a reduction over a thread-block cluster needs sm_90 or later"
#endif
// One output over the blocks of one thread-block cluster (the key's
// cluster: a 1-D grid of one cluster, piece blockIdx.x; rank order). Once
// every block has started (the start's arrive, waited for here), thread 0
// of each other block pushes its block's value into its slot of rank 0's
// shared memory (st.async, completing bytes of rank 0's mbarrier, set up
// before that arrive: cluster_start) and leaves; rank 0's thread 0 waits
// for the bytes and folds the values in rank order, so the result never
// depends on timing. No cluster barrier after the loads: its release is a
// GPU-scope fence and a stop of every block (H200, float32 sums of 32768-
// 98304 elements 0.1-0.3 us faster without; docs/PERF.md "Session 28").
// Only rank 0's shared memory is touched from outside, and rank 0 leaves
// after every push to it landed. v: the block's value (thread 0's);
// returns the output's in rank 0's thread 0.
struct cluster_bar {
  unsigned long long bar; // rank 0's: one arrival (its thread 0's) and the others' bytes
};
// At the kernel's start: rank 0 sets up the mbarrier, then every block
// arrives (the fence releases the set-up to the cluster before any push).
__device__ __forceinline__ void cluster_start(cluster_bar &b) {
  const bool init = blockIdx.x == 0 && threadIdx.x == 0;
  if (init) mbar_init(smem_addr(&b.bar));
  cluster_arrive_after_init(init);
}
template <class T, class Op>
__device__ __forceinline__ T cluster_fold(const T &v, Op op, unsigned rank, unsigned n, cluster_bar &b) {
  typedef words<T> Wd;
  __shared__ unsigned slot[8][Wd::N]; // 8: UK_RED_CLUSTER_MAX
  cluster_wait_after_init(); // the start's arrive: every block is running
  T r = v;
  if (threadIdx.x != 0) return r;
  const unsigned bar = smem_addr(&b.bar);
  if (rank != 0) {
    Wd x;
    x.put(v);
    cluster_push(smem_addr(&slot[rank][0]), bar, 0, x.w);
    return r;
  }
  mbar_arrive_expect(bar, (n - 1) * Wd::N * 4);
  mbar_wait(bar, 0);
#pragma unroll 1
  for (unsigned k = 1; k < n; k++) {
    Wd x;
    T o;
#pragma unroll
    for (int i = 0; i < Wd::N; i++) x.w[i] = slot[k][i];
    x.get(o);
    r = op(r, o);
  }
  return r;
}
#endif

} // namespace detail

// A._uk_by threads per output (1, 2, 4, 8, 32 or BLOCK: a power of two; 2
// and 4 only where the key is narrow; a constant where the emitter defines
// _UK_RED_GW). A split launch has one group of
// outputs per blockIdx.x (no grid-stride loop), so
// that a column of blocks can combine. SPLIT false: the plan never splits
// (a tiny reduction: the key's `unsplit`), and the program holds no second
// pass (partials, counter, combine), which was a third of its NVRTC time.
template <class K, int BLOCK, bool SPLIT = true> __device__ __forceinline__ void red_group(const typename K::args &A) {
  typedef typename K::idx idx;
  typedef comb<K> C;
  typedef typename C::type opt;
  typedef detail::group_reduce<opt, BLOCK> GR;
  typedef detail::padded<opt> P;
  const int V = K::vec;
  const bool VEC = V > 1 && A._uk_vec != 0; // K::vec == 1 (never set then): no vector code
  __shared__ typename GR::storage smem;
#ifdef _UK_RED_WHOLE
  // One output (no kept axis: the emitter's define): every thread of a
  // block on it, whatever A._uk_by the plan chose (the block's range and the
  // split's partial at index `split` stay right), as constants the compiler
  // folds into the index arithmetic and the block combine. H200 whole-array
  // float32 sums of 64 KiB - 4 MiB 0.1-0.4 us faster (docs/PERF.md
  // "Session 33").
  constexpr int g = BLOCK, lg = detail::log2_of(BLOCK);
  const idx nout = 1;
#elif defined(_UK_RED_GW)
  // The plan's threads an output, compiled in (the key's width, which the
  // runtime launches only with a plan of that width): the group reduce's
  // branches, lane and group fold away. H200 kept-axis float32 sums of
  // 64 KiB - 16 MiB 0.1-0.7 us faster (docs/PERF.md "Session 34").
  static_assert(_UK_RED_GW >= 1 && _UK_RED_GW <= BLOCK && (_UK_RED_GW & (_UK_RED_GW - 1)) == 0, "_UK_RED_GW");
  constexpr int g = _UK_RED_GW, lg = detail::log2_of(_UK_RED_GW);
  const idx nout = (idx)A._uk_nout;
#else
  const int g = (int)A._uk_by, lg = __ffs(g) - 1;
  const idx nout = (idx)A._uk_nout;
#endif
  const idx G = (idx)g, RPB = (idx)(BLOCK >> lg); // outputs per block
  const idx lane = threadIdx.x & (g - 1), grp = threadIdx.x >> lg;
  const idx nred = (idx)A._uk_nred, chunk = (idx)A._uk_chunk;
#ifdef _UK_RED_CLUSTER
  // One output over the cluster (an unsplit program: no partials): piece
  // blockIdx.x of gridDim.x; rank 0's mbarrier and the start's arrive,
  // waited for before the pieces combine (detail::cluster_fold).
  __shared__ detail::cluster_bar cbar;
  detail::cluster_start(cbar);
  const idx split = (idx)blockIdx.x, nsplit = (idx)gridDim.x, ob0 = 0, obs = nout;
  const idx rbeg = split * chunk, rend = nred - rbeg < chunk ? nred : rbeg + chunk;
#else
  const idx split = SPLIT ? (idx)blockIdx.y : 0, nsplit = SPLIT ? (idx)gridDim.y : 1;
  const idx ob0 = (idx)blockIdx.x * RPB, obs = (idx)gridDim.x * RPB;
  const idx rbeg = split * chunk;
  const idx rend = !SPLIT ? nred : nred - rbeg < chunk ? nred : rbeg + chunk;
#endif
  typename C::op op;
#ifdef _UK_RED_ROWS
  // Rows of one vector a thread (the key's rows) where the grid-stride loop
  // takes R trips or more: one trip loads a vector of each of R rows before
  // any is used, where a trip of one row leaves a thread one vector in
  // flight between its group combines (H200, fused row sums of two inputs
  // of 32: 1 GiB 528.7 -> 523.7 us, 256 MiB 134.9 -> 131.5; a grid of one
  // trip loads its last row again: 16 MiB 11.5 -> 13.6, docs/PERF.md
  // "Session 36"). Past the last output a row is loaded again (in bounds)
  // and not stored.
  constexpr int R = _UK_RED_ROWS;
  if (VEC && nsplit == 1 && nred == G * V && (idx)R * obs <= nout) {
    for (idx ob = ob0; ob < nout; ob += R * obs) {
      red_acc<K> acc[R];
      typename K::koff ko[R];
#pragma unroll
      for (int j = 0; j < R; j++) {
        const idx o = ob + j * obs + grp;
        acc[j].seed(A);
        K::kept(A, o < nout ? o : nout - 1, ko[j]);
      }
      K::template map_rows<R>(A, ko, lane * V, acc);
#pragma unroll
      for (int j = 0; j < R; j++) {
        const opt res = GR::reduce(smem, C::of(acc[j]), g, op);
        const idx o = ob + j * obs + grp;
        if (lane == 0 && o < nout) red_post<K>(A, res, o);
      }
    }
    return;
  }
#endif
  // The loop bound is the same for the whole block, so every thread takes
  // part in every group reduction.
  for (idx ob = ob0; ob < nout; ob += obs) {
    const idx o = ob + grp;
    red_acc<K> acc;
    acc.seed(A);
    if (o < nout) {
      typename K::koff ko;
      K::kept(A, o, ko);
      idx r = rbeg + lane;
      if (VEC) {
        const idx vend = rbeg + (rend - rbeg) / V * V, step = G * V;
        idx rv = rbeg + lane * V;
        // Four vectors per trip (eight first where the emitter defines
        // _UK_RED_G8TRIP: one input along one reduced axis, rows of 256 or
        // more), loaded before any is used.
#if _UK_RED_TRIP >= 8 || defined(_UK_RED_G8TRIP)
        for (; rv + 7 * step < vend; rv += 8 * step) K::template map_vec<8>(A, ko, rv, step, acc);
#endif
        for (; rv + 3 * step < vend; rv += 4 * step) K::template map_vec<4>(A, ko, rv, step, acc);
        // The last 1-3 vectors, likewise.
        if (rv + 2 * step < vend)
          K::template map_vec<3>(A, ko, rv, step, acc);
        else if (rv + step < vend)
          K::template map_vec<2>(A, ko, rv, step, acc);
        else if (rv < vend)
          K::template map_vec<1>(A, ko, rv, step, acc);
        r = vend + lane;
      }
      for (; r < rend; r += G) acc(K::map(A, ko, r));
    }
    // Two passes when split: this block's partial, then (last block of the
    // column only) the column's partials in split order. One copy of the
    // group reduction and of the post-map keeps the program small.
    opt v = C::of(acc), res;
#pragma unroll 1
    for (int pass = 0;; pass++) {
      res = GR::reduce(smem, v, g, op);
      if (nsplit == 1 || pass == 1 || !SPLIT) break;
      if constexpr (SPLIT) {
        if (lane == 0)
          detail::put_partial(&((P *)A._uk_partial)[((idx)blockIdx.x * nsplit + split) * RPB + grp], res);
        if (!detail::last_block<detail::one_word<opt>::value>(A._uk_count)) return;
        P *col = (P *)A._uk_partial + (idx)blockIdx.x * nsplit * RPB;
        const auto at = [=](idx k) { return (const P *)&col[k * RPB + grp]; };
#ifdef _UK_RED_G8TRIP
        // one input (registers to spare): as many loads a trip as a thread has
        // partials, up to 4, not 3 repeated past a run of 1 (256 splits of a
        // block): H200 whole-array sums and argmax of 1-64 MiB 0.03-0.26 us
        // faster (docs/PERF.md "Session 32"); elsewhere 4, whose registers
        // two-input programs have no room for
        if (nsplit <= G) v = detail::combine_strided<1>(C::empty(A), lane, nsplit, G, op, at);
        else if (nsplit <= 2 * G) v = detail::combine_strided<2>(C::empty(A), lane, nsplit, G, op, at);
        else
#endif
          v = detail::combine_strided<4>(C::empty(A), lane, nsplit, G, op, at);
        detail::clear_partials(col, nsplit * RPB, BLOCK);
      }
    }
#ifdef _UK_RED_CLUSTER
    res = detail::cluster_fold(res, op, (unsigned)split, (unsigned)nsplit, cbar);
    if (split != 0) return;
#endif
    if (lane == 0 && o < nout) red_post<K>(A, res, o);
    if (nsplit > 1) return;
  }
}

} // namespace ukern
