// ukern/fusion_row.cuh — device helpers for the row plan of fusion programs
// (codegen/fuse_row.c): one block, or one warp for short rows, owns a row of
// the map shape; the reductions over the row are block reductions whose
// result every thread of the row gets. The warp combine is the one of
// generated reductions (ukern/reduction.cuh).
#pragma once

#include <ukern/fusion.cuh>
#include <ukern/reduction.cuh>

// Byte strides of an operand over the map shape (0 on broadcast axes).
template <int N> struct _uk_st {
  long long s[N];
};

// The map shape: lead[0 .. N-2] are the row axes, n the row length; T
// threads own a row (T >= 64: the whole block; T == 32: a warp,
// blockDim.x / 32 rows a block). The first nc elements of a row are kept
// in the row's rowbytes of dynamic shared memory.
template <int N> struct _uk_geo {
  long long lead[N];
  long long nrows, n, nc, rowbytes;
  int T;
};

// A row's index over the row axes, then any operand's byte offset of it.
template <int N> struct _uk_rowix {
  long long i[N];
  __device__ __forceinline__ _uk_rowix(const _uk_geo<N> &g, long long row) {
#pragma unroll
    for (int d = N - 2; d >= 0; d--) {
      i[d] = row % g.lead[d];
      row /= g.lead[d];
    }
  }
  __device__ __forceinline__ long long off(const _uk_st<N> &st) const {
    long long o = 0;
#pragma unroll
    for (int d = 0; d < N - 1; d++) o += i[d] * st.s[d];
    return o;
  }
};

template <class T> static __device__ __forceinline__ T _uk_ld(const char *base, long long j, long long stride) {
  return *(const T *)(base + j * stride);
}

// Keeps element j in shared memory (kept[j]). 4- and 8-byte elements go by
// cp.async on sm_80 and later: no register holds them on the way, so all of
// a thread's copies are in flight at once; _uk_keep_wait() completes them
// (each thread reads back only its own elements: no barrier).
template <int S> struct _uk_keep_by {
  template <class T> static __device__ __forceinline__ void keep(T *kept, const char *src) { *kept = *(const T *)src; }
};
#if __CUDA_ARCH__ >= 800
template <int S> struct _uk_keep_async {
  template <class T> static __device__ __forceinline__ void keep(T *kept, const char *src) {
    unsigned long long d;
    asm("cvta.to.shared.u64 %0, %1;" : "=l"(d) : "l"(kept));
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"((unsigned)d), "l"(src), "n"(S) : "memory");
  }
};
template <> struct _uk_keep_by<4> : _uk_keep_async<4> {};
template <> struct _uk_keep_by<8> : _uk_keep_async<8> {};
#endif
template <class T>
static __device__ __forceinline__ void _uk_keep(T *kept, const char *base, long long j, long long stride) {
  _uk_keep_by<(int)sizeof(T)>::keep(kept + j, base + j * stride);
}
static __device__ __forceinline__ void _uk_keep_wait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

// Lane 0's value to every lane of the warp.
template <class A> static __device__ __forceinline__ A _uk_bcast(const A &v) {
  ukern::detail::words<A> w;
  w.put(v);
#pragma unroll
  for (int k = 0; k < ukern::detail::words<A>::N; k++) w.w[k] = __shfl_sync(0xffffffffu, w.w[k], 0);
  A r;
  w.get(r);
  return r;
}

// Shared storage of one block reduction: a slot per warp (raw: A may have
// constructors).
template <class A> struct _uk_part {
  alignas(A) unsigned char b[sizeof(A) * 32];
};

// Combines v over the T threads of the row and returns the result to all
// of them. Every thread of the row calls it (T >= 64: the whole block).
template <class A, class Op>
static __device__ __forceinline__ A _uk_row_reduce(A v, Op op, const A &ident, _uk_part<A> &sm, int T) {
  typedef ukern::detail::warp_reduce<A, 32> W;
  v = W::reduce(v, op);
  if (T > 32) {
    A *part = (A *)sm.b;
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    if (lane == 0) part[w] = v;
    __syncthreads();
    v = W::reduce(lane < (T >> 5) ? part[lane] : ident, op);
    __syncthreads(); // the slots are reused by the next reduction
  }
  return _uk_bcast(v);
}
