// ukern/fusion_row.cuh — device helpers for the row plan of fusion programs
// (codegen/fuse_row.c): T threads own a row of the map shape (a sub-warp, a
// warp, or a block of warps; codegen/fuse_row_plan.c sizes them); the
// reductions over the row combine within the T threads and every one of
// them gets the result. The warp combine is the one of generated
// reductions (ukern/reduction.cuh).
#pragma once

#include <ukern/fusion.cuh>
#include <ukern/reduction.cuh>

// Byte strides of an operand over the map shape (0 on broadcast axes).
template <int N> struct _uk_st {
  long long s[N];
};

// The map shape: lead[0 .. N-2] are the row axes, n the row length; T
// threads own a row, blockDim.x / T rows a block. In the shared-memory
// variant (T >= 64, a row a block) the first nc elements of a row are kept
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
    if (N == 2) { // one row axis: no division (row < nrows)
      i[0] = row;
    } else if (g.nrows <= 0x7fffffff) { // 32-bit division (every lead[d] <= nrows)
      unsigned r = (unsigned)row;
#pragma unroll
      for (int d = N - 2; d >= 0; d--) {
        const unsigned l = (unsigned)g.lead[d];
        i[d] = r % l;
        r /= l;
      }
    } else {
#pragma unroll
      for (int d = N - 2; d >= 0; d--) {
        i[d] = row % g.lead[d];
        row /= g.lead[d];
      }
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

// Cache policy of the data a row kernel moves once (the emitter defines
// _UK_STREAM per kernel): inputs read exactly once and the per-element
// outputs go as streaming accesses, so that a kernel moving more than L2
// holds does not keep them there in place of what is still to be read:
// 1, ld/st.global.cs (evict first in L1 and L2); 2, an L2 evict-first
// cache policy (createpolicy + .L2::cache_hint, L1 not allocated); 0, the
// default policy. Only the caching changes: never a value.
#ifndef _UK_STREAM
#define _UK_STREAM 0
#endif
#if _UK_STREAM == 2 && (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ < 800) // cache hints: sm_80+
#undef _UK_STREAM
#define _UK_STREAM 1
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
static __device__ __forceinline__ unsigned long long _uk_evict_first() {
  unsigned long long p; // not volatile: one policy register for the kernel
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}
#endif
#if _UK_STREAM == 2
#define _UK_LDQ "ld.global.L1::no_allocate.L2::cache_hint"
#define _UK_STQ "st.global.L1::no_allocate.L2::cache_hint"
#define _UK_POL ", %2"
#define _UK_POL4 ", %5"
#define _UK_POLA , "l"(_uk_evict_first())
#else
#define _UK_LDQ "ld.global.cs"
#define _UK_STQ "st.global.cs"
#define _UK_POL ""
#define _UK_POL4 ""
#define _UK_POLA
#endif
// One streaming access of S bytes (1, 2, 4, 8 or 16) at an S-aligned
// address. Loads are not volatile and stores clobber memory (as __ldcs and
// __stcs): the compiler orders them against other accesses like plain ones.
template <int S> struct _uk_io;
#define _UK_IO(S, PT, C, CT)                                                                          \
  template <> struct _uk_io<S> {                                                                      \
    static __device__ __forceinline__ void ld(void *d, const void *p) {                               \
      CT x;                                                                                           \
      asm(_UK_LDQ "." PT " %0, [%1]" _UK_POL ";" : "=" C(x) : "l"(p)_UK_POLA);                        \
      memcpy(d, &x, S);                                                                     \
    }                                                                                                 \
    static __device__ __forceinline__ void st(void *p, const void *s) {                               \
      CT x;                                                                                           \
      memcpy(&x, s, S);                                                                     \
      asm volatile(_UK_STQ "." PT " [%0], %1" _UK_POL ";" ::"l"(p), C(x)_UK_POLA : "memory");         \
    }                                                                                                 \
  };
_UK_IO(1, "u8", "h", unsigned short) // a 16-bit register: no 8-bit ones (the store takes its low byte)
_UK_IO(2, "u16", "h", unsigned short)
_UK_IO(4, "u32", "r", unsigned)
_UK_IO(8, "u64", "l", unsigned long long)
#undef _UK_IO
template <> struct _uk_io<16> {
  static __device__ __forceinline__ void ld(void *d, const void *p) {
    uint4 x;
    asm(_UK_LDQ ".v4.u32 {%0, %1, %2, %3}, [%4]" _UK_POL4 ";"
        : "=r"(x.x), "=r"(x.y), "=r"(x.z), "=r"(x.w)
        : "l"(p)_UK_POLA);
    memcpy(d, &x, 16);
  }
  static __device__ __forceinline__ void st(void *p, const void *s) {
    uint4 x;
    memcpy(&x, s, 16);
    asm volatile(_UK_STQ ".v4.u32 [%0], {%1, %2, %3, %4}" _UK_POL4 ";" ::"l"(p), "r"(x.x), "r"(x.y), "r"(x.z), "r"(x.w)_UK_POLA
                 : "memory");
  }
};
// *p (S: streaming when _UK_STREAM), by accesses of T's alignment.
template <bool S, class T> static __device__ __forceinline__ T _uk_lds(const T *p) {
  if (!S || !_UK_STREAM) return *p;
  constexpr int A = alignof(T) < 16 ? (int)alignof(T) : 16;
  T r;
#pragma unroll
  for (int i = 0; i < (int)sizeof(T) / A; i++) _uk_io<A>::ld((char *)&r + i * A, (const char *)p + i * A);
  return r;
}
// *p = v (streaming when _UK_STREAM): a per-element output.
template <class T> static __device__ __forceinline__ void _uk_sts(T *p, const T &v) {
  if (!_UK_STREAM) {
    *p = v;
    return;
  }
  constexpr int A = alignof(T) < 16 ? (int)alignof(T) : 16;
#pragma unroll
  for (int i = 0; i < (int)sizeof(T) / A; i++) _uk_io<A>::st((char *)p + i * A, (const char *)&v + i * A);
}

// V elements of a row as one aligned access (the host checked alignment:
// a contiguous row, its start and its length multiples of V elements).
template <class T, int V> struct alignas(sizeof(T) * V) _uk_vec {
  T v[V];
};
// Elements j .. j + V - 1 into r[0 .. V - 1] (V == 1: any stride); S: an
// input read once (streaming).
template <int V, bool S, class T>
static __device__ __forceinline__ void _uk_ldv(T *r, const char *base, long long j, long long stride) {
  if (V == 1) {
    r[0] = _uk_lds<S>((const T *)(base + j * stride));
  } else {
    const _uk_vec<T, V> x = _uk_lds<S>((const _uk_vec<T, V> *)(base + j * (long long)sizeof(T)));
#pragma unroll
    for (int i = 0; i < V; i++) r[i] = x.v[i];
  }
}
// r[0 .. V - 1] to elements j .. j + V - 1 (streaming).
template <int V, class T>
static __device__ __forceinline__ void _uk_stv(char *base, long long j, long long stride, const T *r) {
  if (V == 1) {
    _uk_sts((T *)(base + j * stride), r[0]);
  } else {
    _uk_vec<T, V> x;
#pragma unroll
    for (int i = 0; i < V; i++) x.v[i] = r[i];
    _uk_sts((_uk_vec<T, V> *)(base + j * (long long)sizeof(T)), x);
  }
}

// Keeps element j in shared memory (kept[j]). 4- and 8-byte elements go by
// cp.async on sm_80 and later: no register holds them on the way, so all of
// a thread's copies are in flight at once; _uk_keep_wait() completes them
// (each thread reads back only its own elements: no barrier).
// St: an input read once (streaming: an L2 evict-first policy when
// _UK_STREAM).
template <int S> struct _uk_keep_by {
  template <bool St, class T> static __device__ __forceinline__ void keep(T *kept, const char *src) {
    *kept = _uk_lds<St>((const T *)src);
  }
};
#if __CUDA_ARCH__ >= 800
template <int S> struct _uk_keep_async {
  template <bool St, class T> static __device__ __forceinline__ void keep(T *kept, const char *src) {
    unsigned long long d;
    asm("cvta.to.shared.u64 %0, %1;" : "=l"(d) : "l"(kept));
    if (St && _UK_STREAM && S == 16) // .cg (past L1): 16 bytes only
      asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], %2, %3;" ::"r"((unsigned)d), "l"(src), "n"(S),
                   "l"(_uk_evict_first())
                   : "memory");
    else if (St && _UK_STREAM)
      asm volatile("cp.async.ca.shared.global.L2::cache_hint [%0], [%1], %2, %3;" ::"r"((unsigned)d), "l"(src), "n"(S),
                   "l"(_uk_evict_first())
                   : "memory");
    else
      asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"((unsigned)d), "l"(src), "n"(S) : "memory");
  }
};
template <> struct _uk_keep_by<4> : _uk_keep_async<4> {};
template <> struct _uk_keep_by<8> : _uk_keep_async<8> {};
template <> struct _uk_keep_by<16> : _uk_keep_async<16> {};
#endif
template <bool St, class T>
static __device__ __forceinline__ void _uk_keep(T *kept, const char *base, long long j, long long stride) {
  _uk_keep_by<(int)sizeof(T)>::template keep<St>(kept + j, base + j * stride);
}
// Keeps elements j .. j + V - 1 (V > 1: one access of V elements).
template <int V, bool St, class T>
static __device__ __forceinline__ void _uk_keep_vec(T *kept, const char *base, long long j, long long stride) {
  if (V == 1) _uk_keep<St>(kept, base, j, stride);
  else
    _uk_keep_by<(int)sizeof(_uk_vec<T, V>)>::template keep<St>((_uk_vec<T, V> *)(kept + j),
                                                               base + j * (long long)sizeof(T));
}
static __device__ __forceinline__ void _uk_keep_wait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

// Lane 0 of each group of W lanes (a power of two, at most 32) to every
// lane of the group.
template <class A> static __device__ __forceinline__ A _uk_bcast(const A &v, int W = 32) {
  ukern::detail::words<A> w;
  w.put(v);
#pragma unroll
  for (int k = 0; k < ukern::detail::words<A>::N; k++) w.w[k] = __shfl_sync(0xffffffffu, w.w[k], 0, W);
  A r;
  w.get(r);
  return r;
}

// Shared storage of one block reduction: a slot per warp (raw: A may have
// constructors).
template <class A> struct _uk_part {
  alignas(A) unsigned char b[sizeof(A) * 32];
};

// Lane 0's combine of the W lanes of its group (W a power of two, at most
// 32): the tree of a warp reduction (ukern/reduction.cuh), without its
// bounds test: the other lanes' partial results are never used.
template <class A, class Op> static __device__ __forceinline__ A _uk_tree(A v, Op op, int W) {
  typedef ukern::detail::words<A> Wd;
#pragma unroll
  for (int off = W >> 1; off > 0; off >>= 1) {
    Wd a, b;
    a.put(v);
#pragma unroll
    for (int k = 0; k < Wd::N; k++) b.w[k] = __shfl_down_sync(0xffffffffu, a.w[k], off, W);
    A o;
    b.get(o);
    v = op(v, o);
  }
  return v;
}

// Combines v over the T threads of the row (a power of two) and returns the
// result to all of them. Every thread of the block calls it (T > 32: a
// barrier). The registers and shared-memory variants pass a compile-time
// T (_UK_RT): inlined, the loops unroll, the lane and warp arithmetic folds
// to masks and shifts and only the branch for that T remains.
// T <= 32: a tree within each group of T lanes; T > 32: each warp's, then
// the row's T / 32 warp results through shared memory.
template <class A, class Op>
static __device__ __forceinline__ A _uk_row_reduce(A v, Op op, const A &ident, _uk_part<A> &sm, int T) {
  (void)ident; // lane 0's trees never take a lane past the group
  if (T <= 32) return _uk_bcast(_uk_tree(v, op, T), T);
  const int nw = T >> 5;
  v = _uk_tree(v, op, 32);
  A *part = (A *)sm.b;
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, first = w & ~(nw - 1);
  if (lane == 0) part[w] = v;
  __syncthreads();
  v = _uk_tree(part[first + (lane & (nw - 1))], op, nw < 32 ? nw : 32);
  __syncthreads(); // the slots are reused by the next reduction
  return _uk_bcast(v);
}

// a / b for the elements a of a row and the row's value b, with the
// division's own result (IEEE, rounded to nearest): b's reciprocal r =
// RN(1 / b) once a row, then per element q = RN(a r) and one correction
// RN(q + RN(a - b q) r), which is RN(a / b) (Markstein's theorem; a - b q
// is exact) while no step leaves the normal range: here a and b within
// 2^-62 .. 2^63 in magnitude (so a / b within 2^-125 .. 2^125), else, and
// for zeros, infinities and NaNs, the division itself. Saves the
// division's reciprocal and check per element. With -use_fast_math the
// division is approximate and taken as it is.
struct _uk_rd {
  float b, r;
  bool ok; // b in range
};
static __device__ __forceinline__ bool _uk_rd_range(float x) {
  return fabsf(x) >= 0x1p-62f && fabsf(x) < 0x1p63f; // false for NaN
}
static __device__ __forceinline__ _uk_rd _uk_rd_make(float b) {
  _uk_rd d;
  d.b = b;
  // rcp.rn itself: NVVM folds __frcp_rn and the correction below back into
  // the division it computes
  asm("rcp.rn.f32 %0, %1;" : "=f"(d.r) : "f"(b));
  d.ok = _uk_rd_range(b);
  return d;
}
// The rare case out of line: a call, not a division's code, per element.
static __device__ __noinline__ float _uk_rdiv_slow(float a, float b) { return a / b; }
static __device__ __forceinline__ float _uk_rdiv(float a, const _uk_rd &d) {
#if defined(__USE_FAST_MATH__) && __USE_FAST_MATH__ // NVRTC defines it as 0 without the option
  return a / d.b;
#else
  if (d.ok && _uk_rd_range(a)) {
    const float q = __fmul_rn(a, d.r);
    return __fmaf_rn(__fmaf_rn(-d.b, q, a), d.r, q);
  }
  return _uk_rdiv_slow(a, d.b);
#endif
}
