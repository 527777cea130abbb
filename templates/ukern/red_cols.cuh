// ukern/red_cols.cuh — red_cols (ukern/reduction.cuh): threads across a
// contiguous output axis. Its own header so that a program planned for
// another strategy does not parse it.
#pragma once

#include <ukern/reduction.cuh>

namespace ukern {

// One thread's part of a column range: W outputs per row (K::vec from
// vector loads, or 1). Four rows' loads are issued per trip before any is
// used (a plain load sinks next to its use, and a branchy combine such as
// argmax's then kept one in flight); the last 1-3 rows likewise, through
// one copy of the three rows' code (rows past the range neither loaded nor
// used), not three copies for 3, 2 and 1 rows: NVRTC's time grows with
// every copy of the step. (Picking the tail's rows in a rolled loop would
// copy the step once, but keeps all three rows live: 64 registers instead
// of 40 for an int8 sum.) Rows of at most 8 bytes (scalar loads of one or
// two narrow inputs) go 8 rows a trip first, as many bytes in flight as a
// trip of 16-byte vectors: scalar float32 column sums of 4-16 MiB were
// 0.2-0.9 us faster so (H200, session 25; docs/PERF.md "Session 25").
template <class K, int W> struct cols_loop {
  typedef typename K::idx idx;
  typedef typename K::template row<W> R;
  enum { TRIP8 = _UK_RED_TRIP >= 8 || sizeof(R) <= 8 };
  // N rows' loads, then their uses; rows from cnt on neither (a constant
  // cnt of N: no test left).
  template <int N>
  static __device__ __forceinline__ void rows(const typename K::args &A, const typename K::koff &ko, idx r, idx by,
                                              int cnt, red_acc<K> *acc) {
    R v[N];
#pragma unroll
    for (int n = 0; n < N; n++)
      if (n < cnt) K::template load_row<W>(A, ko, r + n * by, v[n]);
#pragma unroll
    for (int n = 0; n < N; n++)
      if (n < cnt) K::template use_row<W>(A, ko, v[n], r + n * by, acc);
  }
  static __device__ __forceinline__ void run(const typename K::args &A, const typename K::koff &ko, idx r, idx rend,
                                             idx by, red_acc<K> *acc) {
    if (TRIP8)
      for (; r + 7 * by < rend; r += 8 * by) rows<8>(A, ko, r, by, 8, acc);
    for (; r + 3 * by < rend; r += 4 * by) rows<4>(A, ko, r, by, 4, acc);
    if (r < rend) rows<3>(A, ko, r, by, r + by >= rend ? 1 : r + 2 * by >= rend ? 2 : 3, acc);
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
// SPLIT false: the plan never splits (a tiny reduction, as red_group's), and
// the program holds no partials, counter or last block's combine.
template <class K, int BLOCK, bool SPLIT = true> __device__ __forceinline__ void red_cols(const typename K::args &A) {
  typedef typename K::idx idx;
  typedef comb<K> C;
  typedef typename C::type opt;
  typedef detail::padded<opt, false, true> P; // plain words, one vector access each (ukern/reduction.cuh)
  enum { NV = K::vec, NS = detail::fit_slices<sizeof(opt), NV, BLOCK>::value };
  // Raw storage: reduce types may have constructors (complex). NS slices
  // of BLOCK values: the combine of NS outputs per thread at once.
  __shared__ __align__(16) unsigned char buf[sizeof(opt) * BLOCK * NS];
  opt *sm = (opt *)buf;
  const bool VEC = NV > 1 && A._uk_vec != 0;
  const int nv = VEC ? NV : 1;
  // Powers of two: shifts and masks, not divisions (each a dozen
  // instructions, and work for NVRTC in every program).
#ifdef _UK_RED_GW
  // The plan's rows a block, compiled in (the key's width, as red_group's).
  static_assert(_UK_RED_GW >= 1 && _UK_RED_GW <= BLOCK / 2 && (_UK_RED_GW & (_UK_RED_GW - 1)) == 0, "_UK_RED_GW");
  constexpr int lbx = detail::log2_of(BLOCK) - detail::log2_of(_UK_RED_GW);
  constexpr idx by = _UK_RED_GW, bx = (idx)BLOCK >> detail::log2_of(_UK_RED_GW);
#else
  const int lbx = __ffs(BLOCK) - __ffs((int)A._uk_by);
  const idx by = (idx)A._uk_by, bx = (idx)BLOCK >> (__ffs((int)A._uk_by) - 1);
#endif
  const idx tx = threadIdx.x & (bx - 1), ty = threadIdx.x >> lbx;
  const idx nout = (idx)A._uk_nout, nred = (idx)A._uk_nred, chunk = (idx)A._uk_chunk;
  // A split's pieces: blockIdx.y, or in a 1-D grid (the plan's `swz`) the
  // consecutive blocks of one column tile, so that the blocks resident at
  // a time read fewer tiles, each whole.
  const idx nsplit = SPLIT ? (idx)A._uk_nsplit : 1;
  idx tile = blockIdx.x, split = SPLIT ? (idx)blockIdx.y : 0;
  if (gridDim.y == 1 && nsplit > 1) {
    tile = (idx)blockIdx.x / nsplit;
    split = (idx)blockIdx.x - tile * nsplit;
  }
  const idx rbeg = split * chunk;
  const idx rend = nred - rbeg < chunk ? nred : rbeg + chunk;
  const idx slots = bx * (idx)nv; // outputs per block
  const idx o0 = (tile * bx + tx) * (idx)nv;
  red_acc<K> acc[NV];
#pragma unroll
  for (int j = 0; j < NV; j++) acc[j].seed(A);
  if (o0 < nout) {
    typename K::koff ko;
    K::kept(A, o0, ko);
#if _UK_RED_RP
    // Blocked rows: thread row ty walks its own run of consecutive rows
    // (the block's rows at a time spread over its whole range).
    const idx per = (rend - rbeg + by - 1) / by, r0 = rbeg + ty * per < rend ? rbeg + ty * per : rend;
    const idx r1 = rend - r0 < per ? rend : r0 + per;
    if (VEC)
      cols_loop<K, NV>::run(A, ko, r0, r1, (idx)1, acc);
    else
      cols_loop<K, 1>::run(A, ko, r0, r1, (idx)1, acc);
#else
    if (VEC)
      cols_loop<K, NV>::run(A, ko, rbeg + ty, rend, by, acc);
    else
      cols_loop<K, 1>::run(A, ko, rbeg + ty, rend, by, acc);
#endif
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
        post_warp<K, NV>(A, res, (tile * bx + (tx & ~(idx)31)) * (idx)nv, nout, sm + (threadIdx.x & ~31u),
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
  } else if constexpr (SPLIT) {
    // Split: this block's partials; only the last block of the column goes on.
    P *part = (P *)A._uk_partial + (tile * nsplit + split) * slots;
    if (ty == 0)
#pragma unroll
      for (int j = 0; j < NV; j++)
        if (j < nv && tile * slots + tx * (idx)nv + j < nout) detail::put_partial(&part[tx * (idx)nv + j], res[j]);
    if (!detail::last_block<false>(A._uk_count, (unsigned)tile, (unsigned)nsplit)) return;
  }
  // The last block of a split column combines the column's nsplit x slots
  // partials with every thread: S slots at a time (S = slots, at most
  // BLOCK), Q = BLOCK / S threads per slot, thread q taking splits
  // [q * per, (q + 1) * per) with _UK_RED_CW loads in flight, then the Q runs
  // halved in shared memory. Unsplit (a narrow tile: one trip, S = slots),
  // thread s < slots posts the staged sm[s].
  const P *col = (const P *)A._uk_partial + tile * nsplit * slots;
  const idx S = slots < (idx)BLOCK ? slots : (idx)BLOCK;
  const int ls = __ffs((int)S) - 1, lq = __ffs(BLOCK) - 1 - ls;
  const idx Q = (idx)BLOCK >> ls, sq = threadIdx.x & (S - 1), q = threadIdx.x >> ls;
  const idx per = (nsplit + Q - 1) >> lq, kb = q * per < nsplit ? q * per : nsplit;
  const idx ke = nsplit - kb < per ? nsplit : kb + per;
#pragma unroll 1
  for (idx base = 0; base < slots; base += S) { // the same trip count for the whole block
    const idx s = base + sq, o = tile * slots + s;
    opt c;
    if (nsplit == 1) {
      c = sm[s];
    } else if constexpr (SPLIT) {
      c = C::empty(A);
      if (o < nout) {
        // _UK_RED_CW loads per trip, all issued before any is used (a
        // run of consecutive splits: G = 1).
        c = detail::combine_strided<_UK_RED_CW>(c, kb, ke, (idx)1, op,
                                    [=](idx k) { return &col[k * slots + s]; });
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

} // namespace ukern
