/* Typing and planning of a fusion program for one call signature.
 *
 * A signature is what decides types and kernels: per input, array or scalar,
 * its dtype (weak for Python scalars) and ndim. The plan is a list of
 * ElementwiseKernel / ReductionKernel definitions (text) run in order, with
 * where each kernel's inputs come from (program inputs or intermediates) and
 * where its outputs go (program outputs or intermediates). Shapes are
 * checked and computed per call by uk__fuse_shapes (plans depend on ndims,
 * never on sizes). */
#ifndef UK_CODEGEN_FUSE_PLAN_H
#define UK_CODEGEN_FUSE_PLAN_H

#include "codegen/fuse_ir.h"
#include "codegen/fuse_ops.h"

typedef struct uk_fuse_sig {
  int nin;
  uk_fuse_type in[64];
  unsigned char is_array[64];
  unsigned char ndim[64];
  int nout;
  int out_given;      /* outputs given: results are converted to out[] */
  uk_dtype out[64];
  int split;          /* one kernel per reduction: same-axes reductions of operands whose
                       * shapes differ at this call (uk_fuse_plan.merged_reductions) */
} uk_fuse_sig;

#define UK_FUSE_MAX_INPUTS UK_MAX_FUSE_INPUTS

/* Where a kernel argument lives: program input/output k (k >= 0) or
 * intermediate t (encoded -1 - t). */
typedef struct uk_fuse_kernel {
  int is_reduction;
  char *name;
  char *in_params, *out_params;
  char *operation;                  /* elementwise */
  char *map_expr, *reduce_expr, *post_map_expr, *identity, *reduce_type; /* reduction */
  char *preamble;
  int nin, nout;
  int *in_src;
  int *out_dst;
  int map_node;           /* reduction: a node whose shape is the map shape */
  int red_node;           /* reduction: the first reduction (axes) */
  int check_empty;        /* reduction without identity in NumPy (max, argmax...) */
} uk_fuse_kernel;

#define UK_FUSE_MAX_WEAK_CHECKS 32

/* Parameters of the row kernel, in order. UK_ROW_IN: pointer to input
 * `index` and its byte strides over the map shape (_uk_st<ndim>, 0 on
 * broadcast axes); UK_ROW_SCALAR: input `index`'s value in its dtype;
 * UK_ROW_OUT: pointer to output `index` and its strides (a per-row output:
 * its row axes' strides, then 0). Then the geometry (_uk_geo<ndim>). */
typedef enum uk_fuse_row_param { UK_ROW_IN = 0, UK_ROW_SCALAR, UK_ROW_OUT } uk_fuse_row_param;

/* The row plan (fuse_row.c): a program whose reductions all reduce the
 * last axis of one map shape, their results used again per row (softmax,
 * x - mean(x, axis=-1, keepdims=True), layer norms), runs as one kernel:
 * T threads (a sub-warp, a warp or a block) own a row, keep it in
 * registers or shared memory (re-reading what does not fit), run the
 * reductions level by level over the T threads, then write the row. The
 * source has two variants (_UK_RK > 0: registers; 0: shared memory) that
 * a call selects (uk__row_size, fuse_row_plan.h). Chosen per call when
 * the shapes fit (uk__fuse_row_fits); ndim == 0 when the program has no
 * row plan, source == NULL until a call first runs it (fuse_row.h). */
typedef struct uk_fuse_row {
  char *source, *name; /* its kernel, once emitted (uk__fuse_row_emit) */
  int ndim;     /* of the map shape; 0: no row plan (uk__fuse_row_plan) */
  int map_node; /* a reduction's operand: its shape is the map shape */
  int max_threads; /* threads per row at most (the kernel's launch bound) */
  int reg_bytes;   /* register bytes one element takes in the registers variant
                      (array inputs, the kept value, per-element outputs) */
  int nparams;
  struct {
    int kind, index;
  } param[2 * UK_FUSE_MAX_INPUTS];
  unsigned char out_per_row[UK_FUSE_MAX_INPUTS]; /* output k is one value per row */
  int levels; /* reductions a row runs one after another (softmax, layer norm: 2) */
  int single; /* the split plan is one kernel (a lone reduction): the row plan runs only
                 rows in light register slices over clusters, or a block a row
                 (uk__fuse_row_fits, uk__row_lone_light, runtime/fusion.c row_usable) */
} uk_fuse_row;

typedef struct uk_fuse_plan {
  uk_fuse_type *type; /* per node */
  int *ndim;          /* per node */
  int *scalar;        /* per node: depends on no array */
  int *needed;        /* per node: an output depends on it */
  int *partner;       /* per RED node: the max (for a sum) or sum (for a max) of an
                       * online-softmax pair sum(exp(x - max(x, keepdims))), else -1 */
  unsigned *axes;     /* per RED node: reduced axes (bit mask over its arg's ndim) */
  int nkernels;
  uk_fuse_kernel *kernels;
  int ntemps;
  int *temp_node;     /* node of each intermediate */
  uk_dtype *out_dtype; /* result dtype of each program output */
  int nweak_checks;    /* Python-int scalar inputs that must fit an integer dtype (NEP 50) */
  struct {
    int input;
    uk_dtype dtype;
    size_t pos;
  } weak_checks[UK_FUSE_MAX_WEAK_CHECKS];
  uk_fuse_row row;
  int merged_reductions; /* a kernel reduces two different operands: a call must check
                          * that their shapes agree, else plan again with sig.split */
} uk_fuse_plan;

/* Types the program for sig and plans its kernels; errors (type, axis) name
 * the expression with a caret. */
uk_status uk__fuse_plan(const uk_fuse_prog *g, const uk_fuse_sig *sig, const char *name, const char *user_preamble,
                        uk_fuse_plan **out);
void uk__fuse_plan_free(uk_fuse_plan *p);

/* 1 if a Python int fits dtype t (non-integer dtypes: always). */
int uk__fuse_int_fits(int64_t v, uk_dtype t);

/* Shapes of every node for one call (shapes[n * UK_MAX_NDIM ...], ndims in
 * plan->ndim), with NumPy broadcasting; UK_ERR_SHAPE with a caret otherwise. */
uk_status uk__fuse_shapes(const uk_fuse_prog *g, const uk_fuse_plan *p, const int64_t *const *in_shapes,
                          int64_t *shapes);

#endif
