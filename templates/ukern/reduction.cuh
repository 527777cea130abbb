// ukern/reduction.cuh — device algorithms for generated reduction kernels.
//
// A generated program defines one traits struct K (the user's map, post-map
// and identity, the functor _uk_reduce_op made from reduce_expr, plus index
// arithmetic for its merged shapes) and instantiates the two strategies
// below with it, in one program:
//   red_group<K, BLOCK>  A._uk_by threads per output (1: a thread; 8: a
//                        group of a warp; 32: a warp; BLOCK: the block), a
//                        run-time value so that one kernel serves the four.
//                        With A._uk_vec set, whole aligned vectors of K::vec
//                        elements along the contiguous innermost reduced
//                        axis (outer reduced axes too: K::map_vec finds
//                        each vector's row).
//   red_cols<K, BLOCK>   threads across a contiguous output axis, A._uk_by
//                        (a power of two up to BLOCK / 4) threads per output
//                        splitting the reduced axis, combined by halving;
//                        with A._uk_vec set, K::vec adjacent outputs per
//                        thread from one vector load (a run-time choice
//                        inside one instantiation); K::map_cols<N, W>
//                        issues four rows' loads before any use.
//   red_pack<K, BLOCK>   rows of 2 contiguous elements, back to back: each
//                        vector load holds K::vec / 2 whole rows, so a
//                        thread reduces several outputs from 16 bytes.
// Outputs are posted with lane-consecutive indices (post_warp), so that the
// post-map's stores coalesce when a thread holds adjacent outputs.
// Warp and sub-warp combines shuffle the value's 32-bit words (logical
// warps of 8 and 32); the block combine is one warp combine per warp plus
// one shared-memory step. No CUB or libcu++ header is included: CUB's
// WarpReduce does the same shuffles, and its headers cost ~1 s of NVRTC
// front end in the first program of a process and ~0.15 s in each later one
// even with a precompiled header.
//
// A reduction created with block_reduce = UK_BLOCK_REDUCE_CUB defines
// UKERN_RED_BLOCK_CUB and includes <cub/block/block_reduce.cuh> first: the
// block-wide combine (red_group with a block per output) is then
// cub::BlockReduce<T, BLOCK> with the same functor (struct reduce types
// too); every other combine is the same in both variants.
//
// Splitting: gridDim.y > 1 splits each output's reduced range into chunks of
// A._uk_chunk elements. Each block writes its partials to A._uk_partial; the
// last block of a column to finish (counted in A._uk_count[blockIdx.x])
// combines the column's partials and runs the post-map. Every combine has a
// fixed order (none depends on which block finishes last), so results do
// not depend on timing. It resets the counter for the next launch. red_cols'
// last block spreads the combine over all its threads, each a run of splits
// with four loads in flight: one thread per output walking hundreds of
// partials one dependent L2 load at a time (~0.21 us each on an H200) was
// what held column reductions at 20-70% of the copy rate (docs/PERF.md).
//
// Each thread folds its elements into its running value in increasing
// reduced index, with K::step (reduce_expr, or a program's in-order step:
// a fusion's argmax/argmin skips the index comparison of a tie, since the
// later element never wins one); combines between threads use K::op. The
// last block of a split column loads its threads' partials four at a time.
//
// No identity is ever invented: an accumulator carries a "has a value" flag
// and empty pieces drop out of every combine.
#pragma once

#include <ukern/elementwise.cuh>

// Identities such as -INFINITY (no math header is included).
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif

namespace ukern {

// A reduced value and whether it holds anything yet.
template <class T> struct red_opt {
  T v;
  bool has;
};

// Combines two red_opt with the program's functor, skipping empty ones.
template <class K> struct red_opt_op {
  typedef red_opt<typename K::rt> opt;
  __device__ __forceinline__ opt operator()(const opt &a, const opt &b) const {
    if (!a.has) return b;
    if (!b.has) return a;
    opt r;
    r.v = typename K::op()(a.v, b.v);
    r.has = true;
    return r;
  }
};

// A thread's running value: seeded with the identity when there is one,
// else with the first mapped element. The identity may name the kernel's
// parameters (CuPy's `len`), so it is computed from the arguments: seed(A)
// before the first element.
template <class K> struct red_acc {
  typename K::rt v;
  bool has;
  __device__ __forceinline__ void seed(const typename K::args &A) {
    has = K::has_identity;
    if (K::has_identity) v = K::identity(A);
  }
  // x comes after every element folded in so far (each strategy walks a
  // thread's elements in increasing reduced index): K::step may rely on it.
  __device__ __forceinline__ void operator()(const typename K::rt &x) {
    if (K::has_identity) {
      v = typename K::step()(v, x);
    } else {
      v = has ? typename K::step()(v, x) : x;
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

// The value every combine works on: the reduce type itself when the
// program has an identity (every accumulator is seeded with it, so no piece
// is ever empty and the warp shuffles move bare values), else red_opt.
template <class K, bool ID = K::has_identity> struct comb {
  typedef red_opt<typename K::rt> type;
  typedef red_opt_op<K> op;
  static __device__ __forceinline__ type of(const red_acc<K> &a) { return a.opt(); }
  static __device__ __forceinline__ type empty(const typename K::args &) {
    type r;
    r.has = false;
    return r;
  }
  static __device__ __forceinline__ typename K::rt value(const typename K::args &A, const type &r) {
    return r.has ? r.v : K::identity(A);
  }
};

template <class K> struct comb<K, true> {
  typedef typename K::rt type;
  typedef typename K::op op;
  static __device__ __forceinline__ type of(const red_acc<K> &a) { return a.v; }
  static __device__ __forceinline__ type empty(const typename K::args &A) { return K::identity(A); }
  static __device__ __forceinline__ type value(const typename K::args &, const type &r) { return r; }
};

// Loads issued where they stand. LLVM sinks ordinary loads next to their
// first use, and ptxas then keeps one or two in flight per thread; volatile
// asm keeps map_vec's loads ahead of the arithmetic, all in flight at once.
namespace detail {
__device__ __forceinline__ void load_now(uint4 *d, const uint4 *p) {
  asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(d->x), "=r"(d->y), "=r"(d->z), "=r"(d->w)
               : "l"(p));
}
__device__ __forceinline__ void load_now(uint2 *d, const uint2 *p) {
  asm volatile("ld.global.v2.u32 {%0, %1}, [%2];" : "=r"(d->x), "=r"(d->y) : "l"(p));
}
__device__ __forceinline__ void load_now(unsigned int *d, const unsigned int *p) {
  asm volatile("ld.global.u32 %0, [%1];" : "=r"(*d) : "l"(p));
}
__device__ __forceinline__ void load_now(unsigned short *d, const unsigned short *p) {
  asm volatile("ld.global.u16 %0, [%1];" : "=h"(*d) : "l"(p));
}
__device__ __forceinline__ void load_now(unsigned char *d, const unsigned char *p) {
  unsigned short v;
  asm volatile("ld.global.u8 %0, [%1];" : "=h"(v) : "l"(p));
  *d = (unsigned char)v;
}
} // namespace detail

// vload (ukern/ew_core.cuh) issued in place; p is aligned likewise.
template <int N, class T> __device__ __forceinline__ vec<T, N> vload_now(const T *p) {
  typedef typename detail::bits<sizeof(T) * N>::type B;
  vec<T, N> r;
  detail::load_now((B *)&r, (const B *)p);
  return r;
}

namespace detail {

// Any value as 32-bit words (types may have constructors: byte copies).
template <class T> struct words {
  enum { N = (sizeof(T) + 3) / 4 };
  unsigned int w[N];
  __device__ __forceinline__ void put(const T &x) {
    w[N - 1] = 0;
    memcpy(w, &x, sizeof(T));
  }
  __device__ __forceinline__ void get(T &x) const { memcpy(&x, w, sizeof(T)); }
};

// Combines within logical warps of W lanes (W a power of two, at most 32)
// by shuffling T's 32-bit words down the warp; lane 0 of each logical warp
// gets the result. A lane combines only values from inside its logical
// warp. Every lane of the warp must call it (full mask).
template <class T, int W> struct warp_reduce {
  template <class Op> static __device__ __forceinline__ T reduce(T v, Op op) {
    const int lane = threadIdx.x % W;
#pragma unroll
    for (int off = W / 2; off > 0; off /= 2) {
      words<T> a, b;
      a.put(v);
#pragma unroll
      for (int k = 0; k < words<T>::N; k++) b.w[k] = __shfl_down_sync(0xffffffffu, a.w[k], off, W);
      T o;
      b.get(o);
      if (lane + off < W) v = op(v, o);
    }
    return v;
  }
};

// Combines within groups of `g` threads (1, 8, 32 or BLOCK, the same for
// the whole block); thread 0 of each group gets the result. Every thread of
// the block takes part.
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
    if (g == 8) return warp_reduce<T, 8>::reduce(v, op);
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

// Stores this block's `n` partials (p[s] from thread s's value) and tells
// whether this block is the last of its column; then the caller combines.
// Partials go through L2 only (the last block reads other blocks' writes).
template <class T> __device__ __forceinline__ void put_partial(T *p, const T &v) {
  words<T> a;
  a.put(v);
  unsigned int *q = (unsigned int *)p;
#pragma unroll
  for (int k = 0; k < words<T>::N; k++) __stcg(q + k, a.w[k]);
}

template <class T> __device__ __forceinline__ T get_partial(const T *p) {
  words<T> a;
  const unsigned int *q = (const unsigned int *)p;
#pragma unroll
  for (int k = 0; k < words<T>::N; k++) a.w[k] = __ldcg(q + k);
  T r;
  a.get(r);
  return r;
}

// Partials are stored as whole words.
template <class T> struct padded {
  unsigned int w[words<T>::N];
};

// Release and acquire at GPU scope (PTX fence.acq_rel.gpu): the partials
// stored before it are visible to a block that reads the counter after its
// own fence. __threadfence() is fence.sc.gpu (MEMBAR.SC: a sequentially
// consistent fence, slower, and more than this pattern needs); one of those
// sat on the critical path of every split launch's last block.
__device__ __forceinline__ void fence_acq_rel() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

__device__ __forceinline__ bool last_block(unsigned int *count) {
  __shared__ bool last;
  fence_acq_rel();
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned int *cnt = count + blockIdx.x;
    last = atomicAdd(cnt, 1u) == gridDim.y - 1;
    if (last) *cnt = 0; // ready for the next launch (stream order)
  }
  __syncthreads();
  if (last) fence_acq_rel();
  return last;
}

// Combines partials p(k) for k = k0, k0 + G, ... below n into v in that
// order, four loads in flight per trip (past the end a load repeats the
// last partial and is not combined). The order is the one a loop of one
// load at a time would take, so results do not change, only the time: the
// last block of a split column waited one dependent L2 load per partial.
template <class T, class I, class Op, class P>
__device__ __forceinline__ T combine_strided(T v, I k0, I n, I G, Op op, P p) {
#pragma unroll 1
  for (I k = k0; k < n; k += 4 * G) {
    const I l = n - 1;
    const T x0 = p(k);
    const T x1 = p(k + G < l ? k + G : l);
    const T x2 = p(k + 2 * G < l ? k + 2 * G : l);
    const T x3 = p(k + 3 * G < l ? k + 3 * G : l);
    v = op(v, x0);
    if (k + G < n) v = op(v, x1);
    if (k + 2 * G < n) v = op(v, x2);
    if (k + 3 * G < n) v = op(v, x3);
  }
  return v;
}

} // namespace detail

template <class K>
__device__ __forceinline__ void red_post(const typename K::args &A, const typename comb<K>::type &r,
                                         typename K::idx o) {
  K::post(A, comb<K>::value(A, r), o);
}

// Posts a warp's outputs ow .. ow + 32 * n - 1 (those below nout), lane l
// holding outputs ow + l * n + j in r[j] (n <= N, a power of two): n
// rounds through 32 staging slots of shared memory `st`, each posting 32
// lane-consecutive outputs, so that the post-map's stores coalesce. One
// copy of the post-map serves every n. Every lane of the warp calls it.
template <class K, int N>
__device__ __forceinline__ void post_warp(const typename K::args &A, const typename comb<K>::type *r,
                                          typename K::idx ow, typename K::idx nout, typename comb<K>::type *st,
                                          int n) {
  typedef typename K::idx idx;
  const int lane = threadIdx.x & 31;
#pragma unroll 1
  for (int q = 0; q < n; q++) {
    if (lane * n / 32 == q)
#pragma unroll
      for (int j = 0; j < N; j++)
        if (j < n) st[lane * n + j - q * 32] = r[j];
    __syncwarp();
    const idx o = ow + (idx)(q * 32 + lane);
    if (o < nout) red_post<K>(A, st[lane], o);
    __syncwarp();
  }
}

// A._uk_by threads per output (1, 8, 32 or BLOCK: a power of two). A split
// launch has one group of outputs per blockIdx.x (no grid-stride loop), so
// that a column of blocks can combine.
template <class K, int BLOCK> __device__ __forceinline__ void red_group(const typename K::args &A) {
  typedef typename K::idx idx;
  typedef comb<K> C;
  typedef typename C::type opt;
  typedef detail::group_reduce<opt, BLOCK> GR;
  typedef detail::padded<opt> P;
  const int V = K::vec;
  const bool VEC = V > 1 && A._uk_vec != 0; // K::vec == 1 (never set then): no vector code
  __shared__ typename GR::storage smem;
  const int g = (int)A._uk_by, lg = __ffs(g) - 1;
  const idx G = (idx)g, RPB = (idx)(BLOCK >> lg); // outputs per block
  const idx lane = threadIdx.x & (g - 1), grp = threadIdx.x >> lg;
  const idx nout = (idx)A._uk_nout, nred = (idx)A._uk_nred, chunk = (idx)A._uk_chunk;
  const idx split = blockIdx.y, nsplit = gridDim.y;
  const idx rbeg = split * chunk;
  const idx rend = nred - rbeg < chunk ? nred : rbeg + chunk;
  typename C::op op;
  // The loop bound is the same for the whole block, so every thread takes
  // part in every group reduction.
  for (idx ob = (idx)blockIdx.x * RPB; ob < nout; ob += (idx)gridDim.x * RPB) {
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
        // Four vectors per trip, loaded before any is used.
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
      if (nsplit == 1 || pass == 1) break;
      if (lane == 0) detail::put_partial((opt *)&((P *)A._uk_partial)[((idx)blockIdx.x * nsplit + split) * RPB + grp], res);
      if (!detail::last_block(A._uk_count)) return;
      const P *col = (const P *)A._uk_partial + (idx)blockIdx.x * nsplit * RPB + grp;
      v = detail::combine_strided(C::empty(A), lane, nsplit, G, op,
                                  [=](idx k) { return detail::get_partial((const opt *)&col[k * RPB]); });
    }
    if (lane == 0 && o < nout) red_post<K>(A, res, o);
    if (nsplit > 1) return;
  }
}

// One thread's part of a column range: W outputs per row (K::vec from
// vector loads, or 1), four rows' loads issued per trip before any is used
// (K::map_cols), then the last 1-3 rows likewise.
template <class K, int W> struct cols_loop {
  typedef typename K::idx idx;
  static __device__ __forceinline__ void run(const typename K::args &A, const typename K::koff &ko, idx r, idx rend,
                                             idx by, red_acc<K> *acc) {
    for (; r + 3 * by < rend; r += 4 * by) K::template map_cols<4, W>(A, ko, r, by, acc);
    if (r + 2 * by < rend)
      K::template map_cols<3, W>(A, ko, r, by, acc);
    else if (r + by < rend)
      K::template map_cols<2, W>(A, ko, r, by, acc);
    else if (r < rend)
      K::template map_cols<1, W>(A, ko, r, by, acc);
  }
};

// Halves `rows` rows of `width` values (row i at sm[i * width + c], this
// thread's c and row) into row 0, in each of `ns` slices `stride` values
// apart: log2(rows) barriers for all slices together, each step a fixed
// pairing, so the order never depends on timing. rows: a power of two;
// every thread of the block calls it. One copy of the combine (a struct
// argmax's is long).
namespace detail {
template <class T, class Op, class I>
__device__ __forceinline__ void halve_rows(T *sm, I row, I width, I rows, Op op, int ns = 1, int stride = 0) {
#pragma unroll 1
  for (I h = rows / 2; h > 0; h /= 2) {
    if (row < h)
#pragma unroll 1
      for (int s = 0; s < ns; s++) {
        T *p = sm + s * stride + threadIdx.x;
        *p = op(*p, p[h * width]);
      }
    __syncthreads();
  }
}

// The largest power of two up to N whose N slices of BLOCK values of S
// bytes fit in 16 KiB (at least 1): red_cols combines that many outputs
// per thread in one halving.
template <unsigned S, int N, int BLOCK, bool OK = (S * N * BLOCK <= 16384u || N <= 1)> struct fit_slices {
  enum { value = fit_slices<S, N / 2, BLOCK>::value };
};
template <unsigned S, int N, int BLOCK> struct fit_slices<S, N, BLOCK, true> {
  enum { value = N };
};
} // namespace detail

// Threads across the contiguous output axis: bx = BLOCK / by threads per
// block row, each with nv outputs (K::vec with vector loads, else 1: one
// instantiation serves both, which halves this kernel's compile time);
// `by` threads share each output's reduced range, combined in shared memory
// by halving. Narrow tiles (bx of 4..16) let few outputs fill the GPU: a
// warp then reads several rows, each a whole 128-byte line or more.
template <class K, int BLOCK> __device__ __forceinline__ void red_cols(const typename K::args &A) {
  typedef typename K::idx idx;
  typedef comb<K> C;
  typedef typename C::type opt;
  typedef detail::padded<opt> P;
  enum { NV = K::vec, NS = detail::fit_slices<sizeof(opt), NV, BLOCK>::value };
  // Raw storage: reduce types may have constructors (complex). NS slices
  // of BLOCK values: the combine of NS outputs per thread at once.
  __shared__ __align__(16) unsigned char buf[sizeof(opt) * BLOCK * NS];
  opt *sm = (opt *)buf;
  const bool VEC = NV > 1 && A._uk_vec != 0;
  const int nv = VEC ? NV : 1;
  // Powers of two: shifts and masks, not divisions (each a dozen
  // instructions, and work for NVRTC in every program).
  const int lbx = __ffs(BLOCK) - __ffs((int)A._uk_by);
  const idx by = (idx)A._uk_by, bx = (idx)BLOCK >> (__ffs((int)A._uk_by) - 1);
  const idx tx = threadIdx.x & (bx - 1), ty = threadIdx.x >> lbx;
  const idx nout = (idx)A._uk_nout, nred = (idx)A._uk_nred, chunk = (idx)A._uk_chunk;
  const idx split = blockIdx.y, nsplit = gridDim.y;
  const idx rbeg = split * chunk;
  const idx rend = nred - rbeg < chunk ? nred : rbeg + chunk;
  const idx slots = bx * (idx)nv; // outputs per block
  const idx o0 = ((idx)blockIdx.x * bx + tx) * (idx)nv;
  red_acc<K> acc[NV];
#pragma unroll
  for (int j = 0; j < NV; j++) acc[j].seed(A);
  if (o0 < nout) {
    typename K::koff ko;
    K::kept(A, o0, ko);
    if (VEC)
      cols_loop<K, NV>::run(A, ko, rbeg + ty, rend, by, acc);
    else
      cols_loop<K, 1>::run(A, ko, rbeg + ty, rend, by, acc);
  }
  typename C::op op;
  opt res[NV];
#pragma unroll
  for (int j = 0; j < NV; j++) res[j] = C::of(acc[j]);
  if (by > 1) {
    // NS outputs per pass (all nv of them unless they do not fit), each in
    // its slice of sm: log2(by) barriers per pass, not per output. res[i]
    // is selected by unrolled compares (no dynamic register indexing).
#pragma unroll 1
    for (int j0 = 0; j0 < nv; j0 += NS) {
#pragma unroll
      for (int i = 0; i < NV; i++)
        if (i >= j0 && i < j0 + NS && i < nv) sm[(i - j0) * BLOCK + threadIdx.x] = res[i]; // threadIdx.x == ty * bx + tx
      __syncthreads();
      detail::halve_rows(sm, ty, bx, by, op, nv - j0 < NS ? nv - j0 : (int)NS, BLOCK);
#pragma unroll
      for (int i = 0; i < NV; i++)
        if (i >= j0 && i < j0 + NS && i < nv) res[i] = sm[(i - j0) * BLOCK + tx];
      __syncthreads(); // sm is reused by the next pass and the posts
    }
  }
  if (nsplit == 1) {
    if (bx >= 32) {
      // Row 0's whole warps post their nv outputs each, lane-consecutively
      // (through this warp's part of sm, free after the combine).
      if (ty == 0)
        post_warp<K, NV>(A, res, ((idx)blockIdx.x * bx + (tx & ~(idx)31)) * (idx)nv, nout, sm + (threadIdx.x & ~31u),
                         nv);
      return;
    }
    // A narrow tile (by >= 16 >= NV: slots <= BLOCK): row 0 stages its
    // outputs in order, then the block posts them, one per thread (below,
    // with the split's post: one copy of the post-map serves both).
    if (ty == 0)
#pragma unroll
      for (int j = 0; j < NV; j++)
        if (j < nv) sm[tx * (idx)nv + j] = res[j];
    __syncthreads();
  } else {
    // Split: this block's partials; only the last block of the column goes on.
    P *part = (P *)A._uk_partial + ((idx)blockIdx.x * nsplit + split) * slots;
    if (ty == 0)
#pragma unroll
      for (int j = 0; j < NV; j++)
        if (j < nv) detail::put_partial((opt *)&part[tx * (idx)nv + j], res[j]);
    if (!detail::last_block(A._uk_count)) return;
  }
  // The last block of a split column combines the column's nsplit x slots
  // partials with every thread: S slots at a time (S = slots, at most
  // BLOCK), Q = BLOCK / S threads per slot, thread q taking splits
  // [q * per, (q + 1) * per) with four loads in flight, then the Q runs
  // halved in shared memory. Unsplit (a narrow tile: one trip, S = slots),
  // thread s < slots posts the staged sm[s].
  const P *col = (const P *)A._uk_partial + (idx)blockIdx.x * nsplit * slots;
  const idx S = slots < (idx)BLOCK ? slots : (idx)BLOCK;
  const int ls = __ffs((int)S) - 1, lq = __ffs(BLOCK) - 1 - ls;
  const idx Q = (idx)BLOCK >> ls, sq = threadIdx.x & (S - 1), q = threadIdx.x >> ls;
  const idx per = (nsplit + Q - 1) >> lq, kb = q * per < nsplit ? q * per : nsplit;
  const idx ke = nsplit - kb < per ? nsplit : kb + per;
#pragma unroll 1
  for (idx base = 0; base < slots; base += S) { // the same trip count for the whole block
    const idx s = base + sq, o = (idx)blockIdx.x * slots + s;
    opt c;
    if (nsplit == 1) {
      c = sm[s];
    } else {
      c = C::empty(A);
      if (o < nout) {
        // Four loads per trip, all issued before any is used; past the
        // run's end a load repeats its last partial and is not combined.
#pragma unroll 1
        for (idx k = kb; k < ke; k += 4) {
          const idx l = ke - 1;
          const opt x0 = detail::get_partial((const opt *)&col[k * slots + s]);
          const opt x1 = detail::get_partial((const opt *)&col[(k + 1 < l ? k + 1 : l) * slots + s]);
          const opt x2 = detail::get_partial((const opt *)&col[(k + 2 < l ? k + 2 : l) * slots + s]);
          const opt x3 = detail::get_partial((const opt *)&col[(k + 3 < l ? k + 3 : l) * slots + s]);
          c = op(c, x0);
          if (k + 1 < ke) c = op(c, x1);
          if (k + 2 < ke) c = op(c, x2);
          if (k + 3 < ke) c = op(c, x3);
        }
      }
      if (Q > 1) { // then S == slots: one trip
        sm[threadIdx.x] = c;
        __syncthreads();
        detail::halve_rows(sm, q, S, Q, op);
        c = sm[sq];
      }
    }
    if (q == 0 && o < nout) red_post<K>(A, c, o);
  }
}

// Rows of 2 contiguous elements, back to back (the kept stride is 2
// elements, shape a multiple of K::vec / 2): item i is the vector of K::vec
// elements holding outputs i * NPO .. i * NPO + NPO - 1. Each warp takes
// 32 * U adjacent items per trip with every load issued before any use,
// then posts them lane-consecutively. Launched only with K::vec >= 2.
template <class K, int BLOCK> __device__ __forceinline__ void red_pack(const typename K::args &A) {
  typedef typename K::idx idx;
  typedef comb<K> C;
  typedef typename C::type opt;
  enum { R = 2, V = K::vec, NPO = V >= R ? V / R : 1, U = V >= 8 ? 1 : 2, NW = BLOCK / 32 };
  if (V < R) return;
  __shared__ __align__(16) unsigned char buf[sizeof(opt) * BLOCK];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  opt *st = (opt *)buf + warp * 32;
  const idx nout = (idx)A._uk_nout, nitem = nout / NPO;
  for (idx wb = ((idx)blockIdx.x * NW + warp) * (32 * U); wb < nitem; wb += (idx)gridDim.x * NW * 32 * U) {
    red_acc<K> acc[U][NPO];
#pragma unroll
    for (int u = 0; u < U; u++)
#pragma unroll
      for (int j = 0; j < NPO; j++) acc[u][j].seed(A);
    if (wb + 32 * U <= nitem) {
#pragma unroll
      for (int u = 0; u < U; u++) {
        typename K::koff ko;
        K::kept(A, (wb + (idx)(u * 32 + lane)) * NPO, ko);
        K::template map_pack<R>(A, ko, acc[u]);
      }
    } else {
#pragma unroll
      for (int u = 0; u < U; u++) {
        const idx i = wb + (idx)(u * 32 + lane);
        if (i < nitem) {
          typename K::koff ko;
          K::kept(A, i * NPO, ko);
          K::template map_pack<R>(A, ko, acc[u]);
        }
      }
    }
    // One copy of the post-map: U (1 or 2) rounds, selecting the round's
    // accumulators without indexing registers dynamically.
#pragma unroll 1
    for (int u = 0; u < U; u++) {
      opt r[NPO];
#pragma unroll
      for (int j = 0; j < NPO; j++) {
        r[j] = C::of(acc[0][j]);
        if (u != 0) r[j] = C::of(acc[U - 1][j]);
      }
      post_warp<K, NPO>(A, r, (wb + (idx)(u * 32)) * NPO, nout, st, NPO);
    }
  }
}

} // namespace ukern
