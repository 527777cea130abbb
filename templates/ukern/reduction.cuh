// ukern/reduction.cuh — device algorithms for generated reduction kernels.
//
// A generated program defines one traits struct K (the user's map, post-map
// and identity, the functor _uk_reduce_op made from reduce_expr, plus index
// arithmetic for its merged shapes) and instantiates one of the strategies
// below with it, the one its plan chose, each in its own header
// (ukern/red_group.cuh, red_cols.cuh, red_pack.cuh; this one holds the
// parts they share), so that NVRTC parses only the planned one:
//   red_group<K, BLOCK>  A._uk_by threads per output (1: a thread; 8: a
//                        group of a warp; 32: a warp; BLOCK: the block), a
//                        run-time value so that one kernel serves the four,
//                        or the constant _UK_RED_GW (the key's width).
//                        With A._uk_vec set, whole aligned vectors of K::vec
//                        elements along the contiguous innermost reduced
//                        axis (outer reduced axes too: K::map_vec finds
//                        each vector's row). red_group<K, BLOCK, false>:
//                        a program the plan never splits (a tiny
//                        reduction), with no split pass.
//   red_cols<K, BLOCK>   threads across a contiguous output axis, A._uk_by
//                        (a power of two up to BLOCK / 4; or _UK_RED_GW) threads per output
//                        splitting the reduced axis, combined by halving;
//                        with A._uk_vec set, K::vec adjacent outputs per
//                        thread from one vector load (a run-time choice
//                        inside one instantiation); four rows' loads
//                        (K::load_row) issued before any use (K::use_row);
//                        red_cols<K, BLOCK, false> as red_group's.
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
// Splitting: A._uk_nsplit > 1 splits each output's reduced range into chunks
// of A._uk_chunk elements, piece blockIdx.y (red_cols: or, in a 1-D grid,
// consecutive blocks of one column tile). Each block writes its partials
// to A._uk_partial; the last block of a column to finish (counted in
// A._uk_count[column]) combines the column's partials and runs the
// post-map. Every combine has a fixed order (none depends on which block finishes last), so results do
// not depend on timing. It resets the counter for the next launch. red_cols'
// last block spreads the combine over all its threads, each a run of splits
// with _UK_RED_CW (8) loads in flight: one thread per output walking hundreds of
// partials one dependent L2 load at a time (~0.21 us each on an H200) was
// what held column reductions at 20-70% of the copy rate (docs/PERF.md).
//
// Each thread folds its elements into its running value in increasing
// reduced index, with K::step (reduce_expr, or a program's in-order step:
// a fusion's argmax/argmin skips the index comparison of a tie, since the
// later element never wins one); combines between threads use K::op. The
// last block of a split loads its threads' partials several at a time
// (combine_strided).
//
// No identity is ever invented: an accumulator carries a "has a value" flag
// and empty pieces drop out of every combine.
#pragma once

// The core only: the program includes complex.cuh and half.cuh when its
// types need them.
#include <ukern/ew_core.cuh>

// Identities such as -INFINITY (no math header is included).
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif

namespace ukern {

// The flag of red_opt: an unsigned integer as wide as T's alignment (at
// most 8 bytes), so that red_opt has no padding. A bool left a value-index
// pair 7 padding bytes that every struct copy (shared-memory staging, the
// halving, partials) moved byte by byte: 30% of a struct argmax column
// kernel's PTX, and NVRTC's time with it (docs/PERF.md).
namespace detail {
template <unsigned A> struct flag_of {
  typedef unsigned long long type;
};
template <> struct flag_of<1> {
  typedef unsigned char type;
};
template <> struct flag_of<2> {
  typedef unsigned short type;
};
template <> struct flag_of<4> {
  typedef unsigned int type;
};

// log2 of a power of two, at compile time (a block's threads, the key's
// threads an output). NVRTC wants the host annotation for a constexpr use.
__host__ __device__ constexpr int log2_of(int n) { return n > 1 ? 1 + log2_of(n >> 1) : 0; }
} // namespace detail

// A reduced value and whether it holds anything yet (0 or 1).
template <class T> struct red_opt {
  T v;
  typename detail::flag_of<__alignof__(T)>::type has;
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
//
// Their cache policy (_UK_RED_LD; a reduction reads each input element
// once): 0, the default policy; 1, ld.global.cs (evict first in L1 and
// L2); 2, an L2 evict-first policy (createpolicy, .L2::cache_hint) without
// L1 allocation; 3, no L1 allocation only; 4, the non-coherent (read-only)
// path without L1 allocation; 5, L2 fetches of 256 bytes (.L2::256B); 6, 1
// and 5. Only the caching changes, never a value. 4 unless the emitter
// says otherwise: on an H200, 1, 2 and 4 made 64 MiB reductions 8-11%
// faster (16 MiB: 3%), but the group kernels 1.5-3.5% slower at 256 MiB,
// so inputs past 128 MiB get 0 (UK_RED_STREAM_MAX_BYTES, docs/PERF.md).
#ifndef _UK_RED_LD
#define _UK_RED_LD 4
#endif
#if _UK_RED_LD >= 5 && (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ < 800) // prefetch sizes: sm_80+
#undef _UK_RED_LD
#define _UK_RED_LD 0
#endif
#if _UK_RED_LD == 2 && (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ < 800) // cache hints: sm_80+
#undef _UK_RED_LD
#define _UK_RED_LD 1
#endif
#if _UK_RED_LD == 1
#define _UK_RED_LDQ "ld.global.cs"
#elif _UK_RED_LD == 2
#define _UK_RED_LDQ "ld.global.L1::no_allocate.L2::cache_hint"
#elif _UK_RED_LD == 3
#define _UK_RED_LDQ "ld.global.L1::no_allocate"
#elif _UK_RED_LD == 4
#define _UK_RED_LDQ "ld.global.nc.L1::no_allocate"
#elif _UK_RED_LD == 5
#define _UK_RED_LDQ "ld.global.L2::256B"
#elif _UK_RED_LD == 6
#define _UK_RED_LDQ "ld.global.cs.L2::256B"
#else
#define _UK_RED_LDQ "ld.global"
#endif
namespace detail {
#if _UK_RED_LD == 2
// One policy register per kernel (not volatile: common subexpressions).
__device__ __forceinline__ unsigned long long evict_first_policy() {
  unsigned long long p;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}
#define _UK_RED_POL(n) ", %" #n
#define _UK_RED_POLA , "l"(evict_first_policy())
#else
#define _UK_RED_POL(n) ""
#define _UK_RED_POLA
#endif
__device__ __forceinline__ void load_now(uint4 *d, const uint4 *p) {
  asm volatile(_UK_RED_LDQ ".v4.u32 {%0, %1, %2, %3}, [%4]" _UK_RED_POL(5) ";"
               : "=r"(d->x), "=r"(d->y), "=r"(d->z), "=r"(d->w)
               : "l"(p)_UK_RED_POLA);
}
__device__ __forceinline__ void load_now(uint2 *d, const uint2 *p) {
  asm volatile(_UK_RED_LDQ ".v2.u32 {%0, %1}, [%2]" _UK_RED_POL(3) ";" : "=r"(d->x), "=r"(d->y) : "l"(p)_UK_RED_POLA);
}
__device__ __forceinline__ void load_now(unsigned int *d, const unsigned int *p) {
  asm volatile(_UK_RED_LDQ ".u32 %0, [%1]" _UK_RED_POL(2) ";" : "=r"(*d) : "l"(p)_UK_RED_POLA);
}
__device__ __forceinline__ void load_now(unsigned short *d, const unsigned short *p) {
  asm volatile(_UK_RED_LDQ ".u16 %0, [%1]" _UK_RED_POL(2) ";" : "=h"(*d) : "l"(p)_UK_RED_POLA);
}
__device__ __forceinline__ void load_now(unsigned char *d, const unsigned char *p) {
  unsigned short v;
  asm volatile(_UK_RED_LDQ ".u8 %0, [%1]" _UK_RED_POL(2) ";" : "=h"(v) : "l"(p)_UK_RED_POLA);
  *d = (unsigned char)v;
}
#undef _UK_RED_POL
#undef _UK_RED_POLA
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
  // n < W (a power of two): groups of n lanes side by side inside each
  // logical warp, each combined alone (red_group's short rows).
  template <class Op> static __device__ __forceinline__ T reduce(T v, Op op, int n = W) {
    const int lane = threadIdx.x & (n - 1);
#pragma unroll
    for (int off = W / 2; off > 0; off /= 2) {
      words<T> a, b;
      a.put(v);
#pragma unroll
      for (int k = 0; k < words<T>::N; k++) b.w[k] = __shfl_down_sync(0xffffffffu, a.w[k], off, W);
      T o;
      b.get(o);
      if (lane + off < n) v = op(v, o);
    }
    return v;
  }
};

// A split's partials, two protocols:
// - tagged (red_group's partials of one 32-bit word: float32 and narrower
//   sums). The word sits in the low half of a 64-bit word whose high half
//   is 1 ("written"), stored and loaded whole (single-copy atomic at GPU
//   scope); the count is relaxed and the last block waits on each
//   partial's tag instead, so no block waits for its partial's store to
//   reach L2 before it counts (one L2 round trip off the last block's
//   path: bare sums of 64 KiB-64 MiB 0.2-0.4 us faster, H200, docs/PERF.md
//   "Session 16"). The last block clears its column's partials (tag 0)
//   after combining, so that the next launch (stream order) finds every
//   word unwritten; the host gives tagged partials a zeroed buffer of
//   their own (plain words' bits could read as a tag).
// - plain words behind a count with release and acquire semantics (wider
//   partials: float64, complex, argmax pairs; and red_cols', whose last
//   block keeps 8 loads in flight: 64-bit words took its programs from 32
//   to 45 registers). Tagging each word of a struct made argmax splits up
//   to 2 us slower.
template <class T> struct one_word {
  enum { value = words<T>::N == 1 };
};
// VEC: plain words of 8 or 16 bytes aligned so that they move as one vector
// access (an argmax pair: one 128-bit store, not four 32-bit ones).
template <class T, bool TAG = one_word<T>::value, bool VEC = false>
struct alignas(VEC && words<T>::N == 4 ? 16 : VEC && words<T>::N == 2 ? 8 : 4) padded {
  unsigned int w[words<T>::N];
};
template <class T, bool VEC> struct padded<T, true, VEC> {
  unsigned long long w[1];
};

__device__ __forceinline__ void st_relaxed(unsigned long long *p, unsigned long long v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ unsigned long long ld_relaxed(const unsigned long long *p) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

// Stores one partial (a thread's value). Partials go through L2 only (the
// last block reads other blocks' writes).
template <class T, bool TAG, bool VEC> __device__ __forceinline__ void put_partial(padded<T, TAG, VEC> *p, const T &v) {
  words<T> a;
  a.put(v);
  if constexpr (TAG) {
    st_relaxed(&p->w[0], (1ull << 32) | a.w[0]);
  } else if constexpr (VEC && words<T>::N == 4) {
    __stcg((uint4 *)p->w, make_uint4(a.w[0], a.w[1], a.w[2], a.w[3]));
  } else if constexpr (VEC && words<T>::N == 2) {
    __stcg((uint2 *)p->w, make_uint2(a.w[0], a.w[1]));
  } else {
#pragma unroll
    for (int k = 0; k < words<T>::N; k++) __stcg(&p->w[k], a.w[k]);
  }
}

// A partial as loaded: load_partial issues the loads (tags unchecked), so
// that several partials' loads go out before any is waited on;
// take_partial returns the value, first waiting for a tagged word's tag
// (reloading it while its writer's store is on its way).
template <class T, bool TAG, bool VEC>
__device__ __forceinline__ padded<T, TAG, VEC> load_partial(const padded<T, TAG, VEC> *p) {
  padded<T, TAG, VEC> r;
  if constexpr (TAG) {
    r.w[0] = ld_relaxed(&p->w[0]);
  } else if constexpr (VEC && words<T>::N == 4) {
    const uint4 v = __ldcg((const uint4 *)p->w);
    r.w[0] = v.x, r.w[1] = v.y, r.w[2] = v.z, r.w[3] = v.w;
  } else if constexpr (VEC && words<T>::N == 2) {
    const uint2 v = __ldcg((const uint2 *)p->w);
    r.w[0] = v.x, r.w[1] = v.y;
  } else {
#pragma unroll
    for (int k = 0; k < words<T>::N; k++) r.w[k] = __ldcg(&p->w[k]);
  }
  return r;
}
template <class T, bool TAG, bool VEC>
__device__ __forceinline__ T take_partial(padded<T, TAG, VEC> r, const padded<T, TAG, VEC> *p) {
  words<T> a;
  if constexpr (TAG) {
    while ((r.w[0] >> 32) != 1ull) r.w[0] = ld_relaxed(&p->w[0]);
    a.w[0] = (unsigned int)r.w[0];
  } else {
#pragma unroll
    for (int k = 0; k < words<T>::N; k++) a.w[k] = r.w[k];
  }
  T v;
  a.get(v);
  return v;
}

// Clears tagged partials p[0, n) (the whole block, after a barrier that
// follows its last take_partial: a load past a run's end repeats another
// thread's partial). Here rather than in each taker's loop, which moved
// ptxas's schedule of red_group's main loop (2 of a trip's loads issued
// first instead of 4, SASS; unsplit row sums of 64 KiB 0.5 us slower).
template <class T, bool TAG, bool VEC, class I>
__device__ __forceinline__ void clear_partials(padded<T, TAG, VEC> *p, I n, int block) {
  if constexpr (TAG) {
    __syncthreads();
    for (I i = (I)threadIdx.x; i < n; i += (I)block) p[i].w[0] = 0ull;
  }
}

// Release and acquire at GPU scope (PTX fence.acq_rel.gpu) where atom.acq_rel
// is not available (before sm_70).
__device__ __forceinline__ void fence_acq_rel() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

// Whether this block is the last of its column to finish (col: the
// counter of the block's column; pieces: the blocks counted there), for
// partials of protocol TAG. Every thread of the block calls it after
// storing its partials; thread 0 counts between two barriers. Tagged: a
// relaxed count (the tags tell the last block what has arrived). Plain:
// release and acquire at GPU scope in the count itself (sm_70 and later;
// the barrier before it orders the block's partial stores first, the one
// after it orders every thread's loads after the acquire).
template <bool TAG>
__device__ __forceinline__ bool last_block(unsigned int *count, unsigned int col, unsigned int pieces) {
  __shared__ bool last;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned int *cnt = count + col, old;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
    if constexpr (TAG)
      asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(cnt) : "memory");
    else
      asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(cnt) : "memory");
#else
    fence_acq_rel();
    old = atomicAdd(cnt, 1u);
    fence_acq_rel();
#endif
    last = old == pieces - 1;
    if (last) *cnt = 0; // ready for the next launch (stream order)
  }
  __syncthreads();
  return last;
}
template <bool TAG> __device__ __forceinline__ bool last_block(unsigned int *count) {
  return last_block<TAG>(count, blockIdx.x, gridDim.y);
}

// Vectors (rows) a thread loads per trip in red_group's vector loop and
// red_cols' loop before using any (_UK_RED_TRIP: 4, or 8 then 4; red_group also
// takes 8 then 4 where the emitter defines _UK_RED_G8TRIP and no knob sets a trip).
#ifndef _UK_RED_TRIP
#define _UK_RED_TRIP 4
#endif
// How red_cols' `by` thread rows share a column's rows (_UK_RED_RP): 0,
// interleaved (row ty, ty + by, ...); 1, a run of consecutive rows each.
#ifndef _UK_RED_RP
#define _UK_RED_RP 0
#endif
// Loads in flight per trip of red_cols' last block (combine_strided; a
// thread there walks nsplit / Q partials, red_group's a few): 8 took the
// split column sums of 64 MiB 0.3-0.7 us less than 4 on an H200; 16 made
// the unsplit ones 0.5-1.3 us slower (docs/PERF.md).
#if !defined(_UK_RED_CW) || _UK_RED_CW < 1
#undef _UK_RED_CW
#define _UK_RED_CW 8
#endif
// Combines partials p(k) for k = k0, k0 + G, ... below n into v in that
// order, W loads in flight per trip (past the end a load repeats the last
// partial, not waited on, not combined); p(k) is the partial's address, and
// each partial is taken by one thread only. The order is
// the one a loop of one load at a time would take, so results do not
// change, only the time: the last block of a split column waited one
// dependent L2 load per partial.
template <int W, class T, class I, class Op, class P>
__device__ __forceinline__ T combine_strided(T v, I k0, I n, I G, Op op, P p) {
#pragma unroll 1
  for (I k = k0; k < n; k += W * G) {
    const I l = n - 1;
    decltype(load_partial(p(k))) x[W];
#pragma unroll
    for (int i = 0; i < W; i++) x[i] = load_partial(p(k + i * G < l ? k + i * G : l));
    v = op(v, take_partial(x[0], p(k)));
#pragma unroll
    for (int i = 1; i < W; i++)
      if (k + i * G < n) v = op(v, take_partial(x[i], p(k + i * G)));
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

} // namespace ukern
