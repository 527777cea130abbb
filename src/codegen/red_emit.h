/* The reduction emitter: from a kernel definition and one specialisation key,
 * the CUDA source of a program holding every strategy (templates/reduction.cu
 * with templates/ukern/reduction.cuh) and the plan of the argument struct
 * that every kernel of the program takes by value.
 *
 * The key holds what changes the code (dtypes, scalars, raw views, merged
 * ndims, index width); the strategy and launch geometry are chosen per call
 * (red_plan.h) and never change the source. No CUDA headers. */
#ifndef UK_CODEGEN_RED_EMIT_H
#define UK_CODEGEN_RED_EMIT_H

#include <stdint.h>

#include "base/strbuf.h"
#include "codegen/bind.h"
#include "codegen/params.h"

/* A specialisation. Compared with memcmp: fill with memset(0) first.
 * Parameters are numbered inputs first, then outputs. */
typedef struct uk_red_key {
  uint8_t dtype[UK_MAX_PARAMS];    /* resolved dtype per parameter */
  uint8_t raw_ndim[UK_MAX_PARAMS]; /* raw input or used _raw_<name> view: its own ndim */
  uint64_t scalar_mask;            /* bit k: input k is a scalar */
  uint64_t raw_contig_mask;        /* bit k: that raw view is C-contiguous */
  uint8_t nd_k, nd_r;              /* merged kept / reduced ndim */
  uint8_t index64;                 /* 64-bit index arithmetic */
  uint8_t unused;
  int32_t device;                  /* runtime only; the emitter ignores it */
} uk_red_key;

/* The fixed parts of a reduction, with what its expressions use. */
typedef struct uk_red_kernel {
  const char *name;
  const char *map_expr, *reduce_expr, *post_map_expr; /* required */
  const char *identity, *reduce_type, *preamble;      /* NULL = none / default */
  const uk_paramlist *in, *out;
  uint64_t raw_view_mask; /* bit k: map_expr uses `_raw_<name of input k>` */
  int uses_J, uses_in_ind, uses_out_ind;
} uk_red_kernel;

/* Fills raw_view_mask and the uses_* flags from the texts. */
void uk__red_scan(uk_red_kernel *k);

typedef enum uk_red_slot_kind {
  UK_RED_SLOT_PTR = 0,    /* data pointer of parameter `param` */
  UK_RED_SLOT_SCALAR,     /* value of input `param`, converted (size bytes) */
  UK_RED_SLOT_RAW_SHAPE,  /* parameter `param`'s own shape[dim] */
  UK_RED_SLOT_RAW_STRIDE, /* parameter `param`'s own strides[dim] */
  UK_RED_SLOT_KSTRIDE,    /* kept-loop stride of operand `op` on merged axis `dim` */
  UK_RED_SLOT_RSTRIDE,    /* reduced-loop stride of operand `op` on merged axis `dim` */
  UK_RED_SLOT_KSHAPE,     /* kept extent on merged axis `dim` */
  UK_RED_SLOT_RSHAPE,     /* reduced extent on merged axis `dim` */
  UK_RED_SLOT_NOUT,       /* output elements */
  UK_RED_SLOT_NRED,       /* elements reduced into each */
  UK_RED_SLOT_CHUNK,      /* reduced elements per split piece */
  UK_RED_SLOT_NSPLIT,     /* pieces per output */
  UK_RED_SLOT_INSIZE,     /* input size (nout * nred), for _in_ind.size() */
  UK_RED_SLOT_VEC,        /* 1: vector loads (uk_red_strategy.vec) */
  UK_RED_SLOT_BY,         /* threads per output (uk__red_threads_per_output) */
  UK_RED_SLOT_PARTIAL,    /* device address of the split partials */
  UK_RED_SLOT_COUNT       /* device address of the split counters (one per block column, zero between launches) */
} uk_red_slot_kind;

typedef struct uk_red_slot {
  uint8_t kind; /* uk_red_slot_kind */
  uint8_t size; /* bytes */
  uint8_t param;
  uint8_t op;
  uint8_t dim;
  uint16_t offset;
} uk_red_slot;

/* The argument struct: slots in offset order (fields sorted by alignment,
 * so no padding), bytes = sizeof the struct. */
typedef struct uk_red_plan {
  int nslots;
  uk_red_slot *slots; /* owned */
  size_t bytes;
} uk_red_plan;

/* Loop inputs are the non-raw array inputs in order; *op gets input p's
 * index among them. 0 when p is not one. */
int uk__red_loop_input(const uk_red_kernel *k, const uk_red_key *key, int param, int *op);

/* Elements per vector load of the program (16 bytes over the largest loop input). */
int uk__red_key_vec(const uk_red_kernel *k, const uk_red_key *key);

/* Appends the program's source to `src` and fills *plan (free with
 * uk__red_plan_free). UK_ERR_INVALID when the arguments exceed 4 KiB;
 * UK_ERR_NOMEM; UK_ERR_INTERNAL for template problems. */
uk_status uk__red_emit(const uk_red_kernel *k, const uk_red_key *key, uk_strbuf *src, uk_red_plan *plan);
void uk__red_plan_free(uk_red_plan *plan);

#endif
