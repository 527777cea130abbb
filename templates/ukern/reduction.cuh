// ukern/reduction.cuh — device algorithms for generated reduction kernels.
//
// A generated program defines one traits struct K (the user's map, reduce,
// post-map and identity, plus index arithmetic for its merged shapes) and
// instantiates the strategies below with it, all in one program:
//   red_group<K, G, BLOCK>  G threads per output (G = 1: a thread; 32: CUB
//                           WarpReduce; G = BLOCK: CUB BlockReduce). With
//                           A._uk_vec set, whole aligned vectors of K::vec
//                           elements along a contiguous reduced axis.
//   red_cols<K, BLOCK>      threads across a contiguous output axis, A._uk_by
//                           threads per output splitting the reduced axis.
//   red_finish<K, BLOCK>    combines per-split partials (one warp per output)
//                           and runs the post-map.
// Few kernels with run-time switches rather than many instantiations: each
// kernel costs NVRTC tens of milliseconds.
// Splitting: gridDim.y > 1 splits each output's reduced range into chunks of
// A._uk_chunk elements; each split writes a red_opt partial to
// A._uk_partial[o * gridDim.y + split] and red_finish completes them.
//
// No identity is ever invented: an accumulator carries a "has a value" flag
// and empty pieces drop out of every combine.
#pragma once

#include <cub/block/block_reduce.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <ukern/elementwise.cuh>

namespace ukern {

// A reduced value and whether it holds anything yet.
template <class T> struct red_opt {
  T v;
  bool has;
};

// Combines two red_opt, skipping empty ones (CUB's reduction operator).
template <class K> struct red_opt_op {
  typedef red_opt<typename K::rt> opt;
  __device__ __forceinline__ opt operator()(const opt &a, const opt &b) const {
    if (!a.has) return b;
    if (!b.has) return a;
    opt r;
    r.v = K::reduce(a.v, b.v);
    r.has = true;
    return r;
  }
};

// A thread's running value: seeded with the identity when there is one,
// else with the first mapped element.
template <class K> struct red_acc {
  typename K::rt v;
  bool has;
  __device__ __forceinline__ red_acc() : has(K::has_identity) {
    if (K::has_identity) v = K::identity();
  }
  __device__ __forceinline__ void operator()(const typename K::rt &x) {
    if (K::has_identity) {
      v = K::reduce(v, x);
    } else {
      v = has ? K::reduce(v, x) : x;
      has = true;
    }
  }
  __device__ __forceinline__ red_opt<typename K::rt> opt() const {
    red_opt<typename K::rt> r;
    r.v = v;
    r.has = has;
    return r;
  }
};

namespace detail {

// Reduction within a group of G threads of a BLOCK-thread block.
template <class T, int G, int BLOCK, bool WHOLE = (G == BLOCK)> struct group_reduce {
  typedef cub::WarpReduce<T, G> WR;
  struct storage {
    typename WR::TempStorage t[BLOCK / G];
  };
  template <class Op> __device__ __forceinline__ T reduce(storage &s, const T &v, Op op) {
    return WR(s.t[threadIdx.x / G]).Reduce(v, op);
  }
};

template <class T, int G, int BLOCK> struct group_reduce<T, G, BLOCK, true> {
  typedef cub::BlockReduce<T, BLOCK> BR;
  typedef typename BR::TempStorage storage;
  template <class Op> __device__ __forceinline__ T reduce(storage &s, const T &v, Op op) {
    T r = BR(s).Reduce(v, op);
    __syncthreads(); // the storage is reused by the next output
    return r;
  }
};

// One thread per output: nothing to combine.
template <class T, int BLOCK> struct group_reduce<T, 1, BLOCK, false> {
  struct storage {
    int unused;
  };
  template <class Op> __device__ __forceinline__ T reduce(storage &, const T &v, Op) { return v; }
};

} // namespace detail

// The result of output o (post-map), or its partial when the range is split.
template <class K>
__device__ __forceinline__ void red_store(const typename K::args &A, const red_opt<typename K::rt> &r,
                                          typename K::idx o, typename K::idx split) {
  if (gridDim.y == 1)
    K::post(A, r.has ? r.v : K::identity(), o);
  else
    ((red_opt<typename K::rt> *)A._uk_partial)[o * gridDim.y + split] = r;
}

template <class K, int G, int BLOCK> __device__ __forceinline__ void red_group(const typename K::args &A) {
  typedef typename K::idx idx;
  typedef red_opt<typename K::rt> opt;
  typedef detail::group_reduce<opt, G, BLOCK> GR;
  const int RPB = BLOCK / G; // outputs per block
  const int V = K::vec;
  const bool VEC = A._uk_vec != 0;
  __shared__ typename GR::storage smem;
  const idx lane = threadIdx.x % G, grp = threadIdx.x / G;
  const idx nout = (idx)A._uk_nout, nred = (idx)A._uk_nred, chunk = (idx)A._uk_chunk;
  const idx split = blockIdx.y;
  const idx rbeg = split * chunk;
  const idx rend = nred - rbeg < chunk ? nred : rbeg + chunk;
  // The loop bound is the same for the whole block, so every thread takes
  // part in every group reduction.
  for (idx ob = (idx)blockIdx.x * RPB; ob < nout; ob += (idx)gridDim.x * RPB) {
    const idx o = ob + grp;
    red_acc<K> acc;
    if (o < nout) {
      typename K::koff ko;
      K::kept(A, o, ko);
      idx r = rbeg + lane;
      if (VEC) {
        const idx vend = rbeg + (rend - rbeg) / V * V;
#pragma unroll 4
        for (idx rv = rbeg + lane * V; rv < vend; rv += (idx)G * V) K::map_vec(A, ko, rv, acc);
        r = vend + lane;
      }
#pragma unroll 4
      for (; r < rend; r += G) acc(K::map(A, ko, r));
    }
    GR gr;
    const opt res = gr.reduce(smem, acc.opt(), red_opt_op<K>());
    if (lane == 0 && o < nout) red_store<K>(A, res, o, split);
  }
}

template <class K, int BLOCK> __device__ __forceinline__ void red_cols(const typename K::args &A) {
  typedef typename K::idx idx;
  typedef red_opt<typename K::rt> opt;
  // Raw storage: reduce types may have constructors (complex).
  __shared__ __align__(16) unsigned char buf[sizeof(opt) * BLOCK];
  opt *sm = (opt *)buf;
  const idx by = (idx)A._uk_by, bx = BLOCK / by;
  const idx tx = threadIdx.x % bx, ty = threadIdx.x / bx;
  const idx nout = (idx)A._uk_nout, nred = (idx)A._uk_nred, chunk = (idx)A._uk_chunk;
  const idx split = blockIdx.y;
  const idx rbeg = split * chunk;
  const idx rend = nred - rbeg < chunk ? nred : rbeg + chunk;
  const idx o = (idx)blockIdx.x * bx + tx;
  red_acc<K> acc;
  if (o < nout) {
    typename K::koff ko;
    K::kept(A, o, ko);
#pragma unroll 8
    for (idx r = rbeg + ty; r < rend; r += by) acc(K::map(A, ko, r));
  }
  if (by == 1) {
    if (o < nout) red_store<K>(A, acc.opt(), o, split);
    return;
  }
  sm[ty * bx + tx] = acc.opt();
  __syncthreads();
  if (ty == 0 && o < nout) {
    opt res = sm[tx];
    red_opt_op<K> op;
    for (idx k = 1; k < by; k++) res = op(res, sm[k * bx + tx]);
    red_store<K>(A, res, o, split);
  }
}

template <class K, int BLOCK> __device__ __forceinline__ void red_finish(const typename K::args &A) {
  typedef typename K::idx idx;
  typedef red_opt<typename K::rt> opt;
  typedef detail::group_reduce<opt, 32, BLOCK> GR;
  const int RPB = BLOCK / 32;
  __shared__ typename GR::storage smem;
  const idx lane = threadIdx.x % 32, grp = threadIdx.x / 32;
  const idx nout = (idx)A._uk_nout, nsplit = (idx)A._uk_nsplit;
  const opt *part = (const opt *)A._uk_partial;
  red_opt_op<K> op;
  for (idx ob = (idx)blockIdx.x * RPB; ob < nout; ob += (idx)gridDim.x * RPB) {
    const idx o = ob + grp;
    opt acc;
    acc.has = false;
    if (o < nout)
      for (idx k = lane; k < nsplit; k += 32) acc = op(acc, part[o * nsplit + k]);
    GR gr;
    const opt res = gr.reduce(smem, acc, op);
    if (lane == 0 && o < nout) K::post(A, res.has ? res.v : K::identity(), o);
  }
}

} // namespace ukern
