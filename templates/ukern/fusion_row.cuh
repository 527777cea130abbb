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

// V elements of a row as one aligned access (the host checked alignment:
// a contiguous row, its start and its length multiples of V elements).
template <class T, int V> struct alignas(sizeof(T) * V) _uk_vec {
  T v[V];
};
// A row's vector loads and its kept copies (_uk_keep_by) carry an L2
// evict-last policy on sm_80 and later: layer norms, centering and softmax
// ran 3.5-4.5% faster from 32 MiB to 1 GiB (rows in registers, in shared
// memory and over clusters; H200), as fast with the inputs rotating between
// calls, so not lines an earlier call left in L2. Reductions, which write
// almost nothing, ran 3-13% slower with it: it stays here.
#if __CUDA_ARCH__ >= 800
static __device__ __forceinline__ unsigned long long _uk_evict_last() {
  unsigned long long p;
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  return p;
}
#endif
// One access of S bytes at p into *d: evict-last where S is 8 or 16 bytes.
template <int S> struct _uk_ld_row {
  template <class X> static __device__ __forceinline__ void load(X *d, const char *p) { *d = *(const X *)p; }
};
#if __CUDA_ARCH__ >= 800
template <> struct _uk_ld_row<16> {
  template <class X> static __device__ __forceinline__ void load(X *d, const char *p) {
    unsigned r[4];
    asm volatile("ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "l"(p), "l"(_uk_evict_last()));
    memcpy(d, r, sizeof r); /* the words as X's bytes, not X through another type */
  }
};
template <> struct _uk_ld_row<8> {
  template <class X> static __device__ __forceinline__ void load(X *d, const char *p) {
    unsigned r[2];
    asm volatile("ld.global.L2::cache_hint.v2.u32 {%0, %1}, [%2], %3;"
                 : "=r"(r[0]), "=r"(r[1])
                 : "l"(p), "l"(_uk_evict_last()));
    memcpy(d, r, sizeof r);
  }
};
#endif
// Elements j .. j + V - 1 into r[0 .. V - 1] (V == 1: any stride).
template <int V, class T>
static __device__ __forceinline__ void _uk_ldv(T *r, const char *base, long long j, long long stride) {
  if (V == 1) {
    r[0] = *(const T *)(base + j * stride);
  } else {
    _uk_vec<T, V> x;
    _uk_ld_row<(int)sizeof(x)>::load(&x, base + j * (long long)sizeof(T));
#pragma unroll
    for (int i = 0; i < V; i++) r[i] = x.v[i];
  }
}
// r[0 .. V - 1] to elements j .. j + V - 1.
template <int V, class T>
static __device__ __forceinline__ void _uk_stv(char *base, long long j, long long stride, const T *r) {
  if (V == 1) {
    *(T *)(base + j * stride) = r[0];
  } else {
    _uk_vec<T, V> x;
#pragma unroll
    for (int i = 0; i < V; i++) x.v[i] = r[i];
    *(_uk_vec<T, V> *)(base + j * (long long)sizeof(T)) = x;
  }
}

// Keeps element j in shared memory (kept[j]). 4- and 8-byte elements go by
// cp.async on sm_80 and later: no register holds them on the way, so all of
// a thread's copies are in flight at once; _uk_keep_wait() completes them
// (each thread reads back only its own elements: no barrier). 16-byte
// copies skip L1 (.cg: the row is read once; rows of 32768 and 65536
// float32 ran 5-13% faster, H200); all carry the evict-last policy above.
template <int S> struct _uk_keep_by {
  template <class T> static __device__ __forceinline__ void keep(T *kept, const char *src) { *kept = *(const T *)src; }
};
#if __CUDA_ARCH__ >= 800
template <int S> struct _uk_keep_async {
  template <class T> static __device__ __forceinline__ void keep(T *kept, const char *src) {
    unsigned long long d;
    asm("cvta.to.shared.u64 %0, %1;" : "=l"(d) : "l"(kept));
    if (S == 16)
      asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;" ::"r"((unsigned)d), "l"(src),
                   "l"(_uk_evict_last())
                   : "memory");
    else
      asm volatile("cp.async.ca.shared.global.L2::cache_hint [%0], [%1], %2, %3;" ::"r"((unsigned)d), "l"(src), "n"(S),
                   "l"(_uk_evict_last())
                   : "memory");
  }
};
template <> struct _uk_keep_by<4> : _uk_keep_async<4> {};
template <> struct _uk_keep_by<8> : _uk_keep_async<8> {};
template <> struct _uk_keep_by<16> : _uk_keep_async<16> {};
#endif
template <class T>
static __device__ __forceinline__ void _uk_keep(T *kept, const char *base, long long j, long long stride) {
  _uk_keep_by<(int)sizeof(T)>::keep(kept + j, base + j * stride);
}
// Keeps elements j .. j + V - 1 (V > 1: one access of V elements).
template <int V, class T>
static __device__ __forceinline__ void _uk_keep_vec(T *kept, const char *base, long long j, long long stride) {
  if (V == 1) _uk_keep(kept, base, j, stride);
  else _uk_keep_by<(int)sizeof(_uk_vec<T, V>)>::keep((_uk_vec<T, V> *)(kept + j), base + j * (long long)sizeof(T));
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

// _uk_rdiv without a branch an element (exact: _uk_rdiv itself): zeros and
// NaNs take the same steps (the sign of a zero from q's); an a out of
// range, or a row's b out of it, sets bad, and the caller computes its
// outputs again with exact set. A branch an element kept the compiler from
// interleaving the elements' steps (float32 softmax of few long rows: 0.3-
// 0.6 us of 5-9, H200).
static __device__ __forceinline__ float _uk_rdiv_try(float a, const _uk_rd &d, bool exact, bool &bad) {
#if defined(__USE_FAST_MATH__) && __USE_FAST_MATH__
  (void)exact, (void)bad;
  return a / d.b;
#else
  if (exact) return _uk_rdiv(a, d);
  const float m = fabsf(a);
  bad |= !d.ok | ((m != 0.0f) & ((m < 0x1p-62f) | (m >= 0x1p63f)));
  const float q = __fmul_rn(a, d.r);
  return copysignf(__fmaf_rn(__fmaf_rn(-d.b, q, a), d.r, q), q);
#endif
}

// Whole rows of fewer than 8 threads (_UK_RX: contiguous rows, vectors):
// a warp's rows are one contiguous chunk of 32 x K vectors, moved between
// memory and registers through the warp's slot of shared memory so that
// each access of the warp covers 512 contiguous bytes (the owner threads'
// own vectors would touch 32/T rows of 128 bytes, a sector each, per
// access). The slot's vectors are XOR-swizzled by row so that neither the
// coalesced side nor the owner side conflicts on banks (T x K >= 8).
template <int T, int K> static __device__ __forceinline__ int _uk_xpos(int row, int p) {
  return row * (T * K) + (p ^ ((row * T) & 7));
}
// The slot position of the warp's vector k * 32 + lane (the coalesced
// side): with K <= 4 (32 / K a multiple of 8) its row's swizzle is the
// lane's alone, k * 32 + (lane ^ swizzle): a register and k's offset.
template <int T, int K> static __device__ __forceinline__ int _uk_xcoal(int k, int lane) {
  if (K <= 4) return k * 32 + (lane ^ (((lane / (T * K)) * T) & 7));
  const int j = k * 32 + lane;
  return _uk_xpos<T, K>(j / (T * K), j % (T * K));
}
// The slot position of the lane's own vector k (element (k * T + t) * V
// of its row).
template <int T, int K> static __device__ __forceinline__ int _uk_xown(int k, int lane) {
  return _uk_xpos<T, K>(lane / T, k * T + lane % T);
}
// p: the array (contiguous rows), e: the warp's first element, live: the
// vectors of its rows that exist.
template <int T, int K, int V, class E>
static __device__ __forceinline__ void _uk_ld_stg(E *r, const E *p, long long e, int live, unsigned char *slot) {
  typedef _uk_vec<E, V> Vt;
  const int lane = (int)threadIdx.x & 31;
  const Vt *src = (const Vt *)(p + e) + lane;
  Vt *sm = (Vt *)slot;
#pragma unroll
  for (int k = 0; k < K; k++) {
    const int j = k * 32 + lane;
    if (j < live) sm[_uk_xcoal<T, K>(k, lane)] = src[k * 32];
  }
  __syncwarp();
#pragma unroll
  for (int k = 0; k < K; k++) {
    const Vt x = sm[_uk_xown<T, K>(k, lane)];
#pragma unroll
    for (int i = 0; i < V; i++) r[k * V + i] = x.v[i];
  }
  __syncwarp();
}
template <int T, int K, int V, class E>
static __device__ __forceinline__ void _uk_st_stg(E *p, long long e, int live, unsigned char *slot, const E *r) {
  typedef _uk_vec<E, V> Vt;
  const int lane = (int)threadIdx.x & 31;
  Vt *dst = (Vt *)(p + e) + lane;
  Vt *sm = (Vt *)slot;
#pragma unroll
  for (int k = 0; k < K; k++) {
    Vt x;
#pragma unroll
    for (int i = 0; i < V; i++) x.v[i] = r[k * V + i];
    sm[_uk_xown<T, K>(k, lane)] = x;
  }
  __syncwarp();
#pragma unroll
  for (int k = 0; k < K; k++) {
    const int j = k * 32 + lane;
    if (j < live) dst[k * 32] = sm[_uk_xcoal<T, K>(k, lane)];
  }
  __syncwarp();
}
