// ukern/red_pack.cuh — red_pack (ukern/reduction.cuh): rows of 2 contiguous
// elements, packed. Its own header so that a program planned for another
// strategy does not parse it.
#pragma once

#include <ukern/reduction.cuh>

namespace ukern {

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
