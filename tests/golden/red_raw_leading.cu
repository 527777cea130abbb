#include <ukern/reduction.cuh>
// The planned strategy's header only (the others are never parsed).

#define _UK_RED_GW 8
#include <ukern/red_cols.cuh>
// ukern reduction kernel 'wdot' (template reduction.cu)
// parameters: T x (float32), raw T w (float32, ndim 1, contiguous) -> T y (float32)
// reduce type: T; identity: 0
// loops: kept ndim 1, reduced ndim 1, 32-bit index; kernel: threads across the outputs; threads an output compiled in: 8

typedef float T;
typedef T _uk_rt;

// reduce_expr as the functor of every combine.
struct _uk_reduce_op {
  __device__ __forceinline__ _uk_rt operator()(const _uk_rt &a, const _uk_rt &b) const {
    return (
#line 1 "reduce_expr"
a + b
#line 21 "wdot"
);
  }
};

// One thread's in-order step (element b after a in the reduced order):
// reduce_expr unless the program defines _UK_RED_STEP (a fusion's argmax).
#ifdef _UK_RED_STEP
struct _uk_step_op {
  __device__ __forceinline__ _uk_rt operator()(const _uk_rt &a, const _uk_rt &b) const { return _UK_RED_STEP(a, b); }
};
#else
typedef _uk_reduce_op _uk_step_op;
#endif

// Every kernel below takes this struct by value; the host fills it at the
// offsets the emitter planned (fields sorted by alignment: no padding).
struct _uk_args {
  const T *_uk_p_x;
  ukern::raw_array<T, 1, true> w;
  T *_uk_p_y;
  long long _uk_ks_x_0;
  long long _uk_rs_x_0;
  long long _uk_os_y_0;
  long long _uk_kshape_0;
  long long _uk_rshape_0;
  long long _uk_nout;
  long long _uk_nred;
  long long _uk_chunk;
  long long _uk_nsplit;
  long long _uk_insize;
  long long _uk_vec;
  long long _uk_by;
  void *_uk_partial;
  unsigned int *_uk_count;
};

// The user's expressions and the index arithmetic of this specialisation,
// for the strategies in ukern/reduction.cuh.
struct _uk_k {
  typedef _uk_rt rt;
  typedef _uk_args args;
  typedef _uk_reduce_op op;
  typedef _uk_step_op step;
  typedef unsigned int idx;
  typedef int sidx;
  static const bool has_identity = true;
  static const int vec = 4;
  struct koff {
    sidx x;
  };
  static __device__ __forceinline__ rt identity(const args &_uk_a) {
    (void)_uk_a;
    return (rt)(
#line 1 "identity"
0
#line 77 "wdot"
);
  }
  static __device__ __forceinline__ rt val(const args &_uk_a, const T x, idx _uk_r) {
    const ukern::raw_array<T, 1, true> &w = _uk_a.w;
    const long long _J = (long long)_uk_r;
    return (rt)(
#line 1 "map_expr"
x * w[_J]
#line 86 "wdot"
);
  }
  static __device__ __forceinline__ void kept(const args &_uk_a, idx _uk_o, koff &_uk_ko) {
    idx _uk_q = _uk_o;
    _uk_ko.x = (sidx)_uk_q * (sidx)_uk_a._uk_ks_x_0;
  }
  static __device__ __forceinline__ rt map(const args &_uk_a, const koff &_uk_ko, idx _uk_r) {
    idx _uk_q = _uk_r;
    return val(_uk_a,
               ukern::at(_uk_a._uk_p_x, _uk_ko.x + (sidx)_uk_q * (sidx)_uk_a._uk_rs_x_0),
               _uk_r);
  }
  // The planned strategy's loads: map_vec (red_group), row, load_row and
  // use_row (red_cols) or map_pack (red_pack).
  // One row's values of every loop input: W adjacent outputs (W: vec or 1).
  template <int W> struct row {
    ukern::vec<T, W> _uk_v_x;
  };
  // Row _uk_r's loads, issued where they stand (ukern::vload_now).
  template <int W>
  static __device__ __forceinline__ void load_row(const args &_uk_a, const koff &_uk_ko, idx _uk_r,
                                                  row<W> &_uk_v) {
    idx _uk_q = _uk_r;
    _uk_v._uk_v_x = ukern::vload_now<W>((const T *)((const char *)_uk_a._uk_p_x + _uk_ko.x + (sidx)_uk_q * (sidx)_uk_a._uk_rs_x_0));
  }
  // Row _uk_r's W values into the W accumulators _uk_f.
  template <int W, class F>
  static __device__ __forceinline__ void use_row(const args &_uk_a, const koff &_uk_ko, const row<W> &_uk_v,
                                                 idx _uk_r, F *_uk_f) {
    (void)_uk_ko;
#pragma unroll
    for (int _uk_k = 0; _uk_k < W; _uk_k++)
      _uk_f[_uk_k](val(_uk_a, _uk_v._uk_v_x[_uk_k], _uk_r));
  }
  static __device__ __forceinline__ void post(const args &_uk_a, rt a, idx _uk_o) {
    idx _uk_q = _uk_o;
    T &y = ukern::at(_uk_a._uk_p_y, (sidx)_uk_q * (sidx)_uk_a._uk_os_y_0);
#line 1 "post_map_expr"
y = a;
#line 126 "wdot"
  }
};

// Bytes of a split partial's plain words: the host reads the size of this symbol
// (4 in a group program: tagged 64-bit words, in a buffer of their own).
extern "C" {
__device__ ukern::detail::padded<ukern::comb<_uk_k>::type, false> _uk_partial_size[1];
}

extern "C" __global__ void __launch_bounds__(256) wdot_cols(const _uk_args _uk_a) { ukern::red_cols<_uk_k, 256>(_uk_a); }
