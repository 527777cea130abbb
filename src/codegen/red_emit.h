/* The reduction emitter: from a kernel definition and one specialisation key,
 * the CUDA source of a program holding the key's kernel (templates/reduction.cu
 * with templates/ukern/reduction.cuh) and the plan of the argument struct
 * that every kernel of the program takes by value.
 *
 * The key holds what changes the code (dtypes, scalars, raw views, merged
 * ndims, index width, the block combine's implementation, and the plan's
 * threads an output where the runtime fixes them: uk_red_key.width); the
 * rest of the strategy and launch geometry is chosen per call (red_plan.h)
 * and never changes the source. No CUDA headers. */
#ifndef UK_CODEGEN_RED_EMIT_H
#define UK_CODEGEN_RED_EMIT_H

#include <stdint.h>

#include "base/strbuf.h"
#include "codegen/emit_common.h"

/* Inputs of at most this many bytes (every loop input's, together) load
 * past L1 (templates/ukern/reduction.cuh, _UK_RED_LD 4); larger ones with
 * the default policy. Measured on an H200 (docs/PERF.md, "The 64 MiB
 * reductions: loads past L1"): 8-11% faster at 64 MiB, 3% at 16 MiB, but
 * 1.5-3.5% slower for the group kernels at 256 MiB. */
#define UK_RED_STREAM_MAX_BYTES ((int64_t)128 << 20)

/* A specialisation. Compared with memcmp: fill with memset(0) first. */
typedef struct uk_red_key {
  uk_key_params p;                 /* dtypes, scalars, raw views (no textures) */
  uint8_t nd_k, nd_r;              /* merged kept / reduced ndim */
  uint8_t index64;                 /* 64-bit index arithmetic */
  uint8_t group;                   /* uk_red_group: the one kernel the program holds */
  uint8_t block_cub;               /* 1: the block-wide combine is cub::BlockReduce (UK_BLOCK_REDUCE_CUB) */
  uint8_t deep;                    /* 1: red_group's launch bounds ask for resident blocks (uk__red_deep) */
  uint8_t plain_loads;             /* 1: inputs past UK_RED_STREAM_MAX_BYTES: loads of the default cache policy */
  uint8_t narrow;                  /* 1: group G of short rows (uk__red_narrow_lanes): groups of 2 or 4 threads too */
  uint8_t unsplit;                 /* 1: a tiny reduction (uk__red_tiny), not packed: no split pass (SPLIT false) */
  uint8_t trip8;                   /* 1: red_group loads 8 vectors a trip (UK_RED_TRIP8_ROWS, reduction.c) */
  uint8_t rows;                    /* red_group's rows a trip where each thread's row is one vector of the key's
                                      width (reduction.c key_rows: _UK_RED_ROWS, K::map_rows); 0: none */
  uint8_t cluster;                 /* 1: one output over a cluster's blocks (uk__red_wide_cluster; block and
                                      unsplit set too), its pieces combined in distributed shared memory */
  uint16_t block;                  /* the threads of the program's block if not UK_RED_BLOCK (uk__red_unsplit_block:
                                      a block an output, unsplit too); 0: UK_RED_BLOCK */
  uint16_t width;                  /* the plan's threads an output (uk__red_threads_per_output), compiled in
                                      (_UK_RED_GW); 0: read from the argument _uk_by. The runtime sets it only
                                      where a program takes it (reduction.c key_width: a group or column
                                      program with a kept axis, not narrow) */
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
  int uses_j; /* CuPy's _j in map_expr: _J * output count + output index (one element per load) */
  int needs_runtime; /* the texts may use CUDA runtime/texture names: compile without -minimal */
  int argpair;       /* the reduce type is or holds a fusion's argmax pair (_uk_argpair, ukern/fusion.cuh) */
  int block_cub;     /* uk_reduction_spec.block_reduce == UK_BLOCK_REDUCE_CUB (copied into every key) */
  char tune[160];    /* #define lines put before the headers (uk__red_tune_parse; "" = none) */
} uk_red_kernel;

/* The device code's measurement knobs, from a text such as "ld=1,cw=16"
 * (the environment variable UKERN_RED_TUNE): each key=N (one or two
 * digits) becomes a line "#define _UK_RED_<KEY> N" in out (size bytes), placed before the
 * program's headers (templates/ukern/reduction.cuh says what each does):
 * ld (the loads' cache policy), cw (loads in flight in a split column's
 * last-block combine: 1 to 32), trip (vectors or rows loaded per trip: 4,
 * or 8), rp (red_cols' rows: 1, a run of consecutive rows a thread), mb (also a least number of
 * resident blocks in every kernel's __launch_bounds__, uk__red_emit).
 * Unknown keys and malformed items are ignored; NULL or "" gives "". A key
 * given twice gives one define, of its last well-formed value; the defines
 * stand in the order above, whatever the text's. They change the source
 * text, so the caches keep each variant apart. */
void uk__red_tune_parse(const char *text, char *out, int size);

/* The last value of `key`=N (1 to 5 digits) in such a text, else dflt: the
 * planner's measurement knobs (by, cv, sp, swz, g: uk__red_force), which
 * change the launch, not the source. */
int uk__red_tune_value(const char *text, const char *key, int dflt);

/* Fills raw_view_mask, the uses_* flags, needs_runtime and argpair from the texts. */
void uk__red_scan(uk_red_kernel *k);

/* The plan's slots: uk_slot_kind, then these. */
typedef enum uk_red_slot_kind {
  UK_RED_SLOT_KSTRIDE = UK_SLOT_KIND_BASE, /* kept-loop stride of operand `op` on merged axis `dim` */
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

/* Elements per vector load of the program (16 bytes over the largest loop input). */
int uk__red_key_vec(const uk_red_kernel *k, const uk_red_key *key);
/* The same from the largest loop input's itemsize, which a call already
 * has (its loop's operands): no walk of the key's parameters per call. */
int uk__red_items_vec(const uk_red_kernel *k, int64_t max_itemsize);

/* The least resident blocks red_group's __launch_bounds__ asks of ptxas (0:
 * none) for a program of kernel group `group`, `nloop` loop inputs and
 * `vec` elements per vector load: 0 unless two or more inputs are loaded
 * in vectors by the group kernel, then 65536 / (256 * (16 * nloop + 32)),
 * at least 1 (4 for two inputs), so that map_vec's loads stay in flight. */
int uk__red_min_blocks(int group, int nloop, int vec);

/* uk_red_key.deep for a call: uk__red_min_blocks asks for blocks and the
 * rows are longer than 8 vectors (8 threads per output then load more
 * than one vector each: a trip to keep in flight). Rows of at most 8
 * vectors keep the program without bounds: their single vector per
 * thread gains nothing from the registers, and the fewer resident blocks
 * cost them 10% (H200, float32 rows of 32, 64 MiB to 1 GiB). */
int uk__red_deep(int group, int nloop, int vec, int64_t nred);

/* Appends the program's source to `src` and fills *plan (free with
 * uk__plan_free). UK_ERR_INVALID when the arguments exceed 4 KiB;
 * UK_ERR_NOMEM; UK_ERR_INTERNAL for template problems. */
uk_status uk__red_emit(const uk_red_kernel *k, const uk_red_key *key, uk_strbuf *src, uk_plan *plan);

#endif
