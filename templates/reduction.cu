${block_reduce}
#include <ukern/reduction.cuh>
${header_stop}
${type_includes}
// The planned strategy's header only (the others are never parsed).
${strategy_defs}
#include <ukern/${strategy}.cuh>
${banner}

${typedefs}
${preamble}
typedef ${reduce_type} _uk_rt;

// reduce_expr as the functor of every combine.
struct _uk_reduce_op {
  __device__ __forceinline__ _uk_rt operator()(const _uk_rt &a, const _uk_rt &b) const {
    return ${reduce_expr};
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
${fields}
};

// The user's expressions and the index arithmetic of this specialisation,
// for the strategies in ukern/reduction.cuh.
struct _uk_k {
  typedef _uk_rt rt;
  typedef _uk_args args;
  typedef _uk_reduce_op op;
  typedef _uk_step_op step;
  typedef ${uindex} idx;
  typedef ${sindex} sidx;
  static const bool has_identity = ${has_identity};
  static const int vec = ${vec};
  struct koff {
${koff}
  };
  static __device__ __forceinline__ rt identity(const args &_uk_a) {
${ident_locals}
    (void)_uk_a;
    return ${identity};
  }
  static __device__ __forceinline__ rt val(const args &_uk_a${val_params}, idx _uk_r) {
${val_locals}
    return (rt)${map_expr};
  }
  static __device__ __forceinline__ void kept(const args &_uk_a, idx _uk_o, koff &_uk_ko) {
${kept}
  }
  static __device__ __forceinline__ rt map(const args &_uk_a, const koff &_uk_ko, idx _uk_r) {
${map}
  }
  // The planned strategy's loads: map_vec (red_group), row, load_row and
  // use_row (red_cols) or map_pack (red_pack).
${maps}
  static __device__ __forceinline__ void post(const args &_uk_a, rt a, idx _uk_o) {
${post}
  }
};

// Bytes of a split partial's plain words: the host reads the size of this symbol
// (4 in a group program: tagged 64-bit words, in a buffer of their own).
extern "C" {
__device__ ukern::detail::padded<ukern::comb<_uk_k>::type, false> _uk_partial_size[1];
}

extern "C" __global__ void __launch_bounds__(${launch_bounds}) ${name}${suffix}(const _uk_args _uk_a) { ukern::${strategy}<_uk_k, ${block}${unsplit}>(_uk_a); }
