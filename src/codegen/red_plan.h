/* Reduction planning: axes normalisation, the result shape, the kept and
 * reduced loops (each merged on its own), and the choice of strategy and
 * launch geometry. Pure arithmetic; no CUDA. */
#ifndef UK_CODEGEN_RED_PLAN_H
#define UK_CODEGEN_RED_PLAN_H

#include <stdint.h>

#include "codegen/shape.h"

/* Threads per block of every reduction kernel. */
#define UK_RED_BLOCK 256

/* Partials each thread of red_cols' last block loads at once (_UK_RED_CW's
 * default in ukern/reduction.cuh): the planner splits a column into at most
 * one round of them. */
#define UK_RED_COLS_CW 8
/* Inputs (all loop inputs' bytes) up to which that bound holds: as far as it
 * was measured. */
#define UK_RED_COLS_CAP_BYTES ((int64_t)256 << 20)
/* The most threads a column plan gives an output (red_cols' rows a block):
 * 128 only for a whole tile of two outputs or short dense rows
 * (UK_RED_COLS_DENSE_ROW; red_plan.c). */
#define UK_RED_COLS_BY_MAX 128
/* Inputs from which a split whose one round leaves SMs without a block
 * (tiles x pieces < SMs: a few columns) may take two (red_plan.c). */
#define UK_RED_COLS_TWO_ROUNDS_BYTES ((int64_t)16 << 20)
/* Inputs up to which a column reduction over slabs (a middle axis) takes
 * its widest one-round tile (red_plan.c): as far as it was measured. */
#define UK_RED_COLS_SLAB_BYTES ((int64_t)64 << 20)
/* The shortest row of a column tile, in bytes, where the planner weighs it
 * (red_plan.c's narrow_ok: shorter than a 128-byte line only unsplit). */
#define UK_RED_COLS_NARROW_ROW 64
/* ... and of inputs up to UK_RED_COLS_SMALL_BYTES, where a call waits on
 * latency more than on bytes (H200: 64 KiB-1 MiB, 0.1-0.9 us faster; 4
 * MiB, 0.1-0.2 us slower; docs/PERF.md "Session 24"). */
#define UK_RED_COLS_SMALL_ROW 16

/* Dense rows (uk_red_plan_in.dense) of at most this many bytes, without
 * vectors, from UK_RED_COLS_TWO_ROUNDS_BYTES: any column tile, of any
 * threads an output up to UK_RED_COLS_BY_MAX, is the model's to weigh
 * (red_plan.c choose_cols). */
#define UK_RED_COLS_DENSE_ROW 32
#define UK_RED_COLS_SMALL_BYTES ((int64_t)1 << 20)
/* Inputs up to which a column reduction with a partial of 16 bytes or
 * more (uk_red_plan_in.partial_bytes: argmax's value-index pair) weighs
 * scalar tiles only: a thread's steps of 4 adjacent outputs' partials cost
 * more than the vector loads save. Fused float32 argmax over axis 0 (H200,
 * session 24): 1024 x 1024, 4096 x 256 and 64 x 16384 0.5-0.7 us faster,
 * 21 other shapes of 64 KiB-64 MiB within 0.12 us; to 16 MiB, 1024 x 4096
 * 0.7 us slower; to 64 MiB, 65536 x 256 and 1024 x 16384 4 us slower
 * (docs/PERF.md "Session 24"). */
#define UK_RED_COLS_PAIR_SCALAR_BYTES ((int64_t)4 << 20)

/* Column reductions of one 4-byte input up to UK_RED_COLS_SHORT_BYTES whose
 * columns are at most UK_RED_COLS_SHORT_ROWS long take a scalar tile,
 * unsplit, with 8-32 rows a thread (red_plan.c cols_short_plan): as far as
 * it was measured (docs/PERF.md "Session 26"). */
#define UK_RED_COLS_SHORT_BYTES ((int64_t)16 << 20)
#define UK_RED_COLS_SHORT_ROWS 1024

/* A reduction of at most this many input elements in all (one block, 16
 * a thread) runs in one pass with no split: no scratch, no second step. */
#define UK_RED_TINY (UK_RED_BLOCK * 16)

/* Rows (reduced elements an output) from which a one-input red_group
 * program loads 8 vectors a trip (uk_red_key.trip8): 8 threads a row of 256
 * float32 hold 8 vectors each. */
#define UK_RED_TRIP8_ROWS 256

/* Rows a trip of a red_group program whose threads each load one vector a
 * row (uk_red_key.rows, reduction.c key_rows: _UK_RED_ROWS). */
#define UK_RED_ROWS_TRIP 2

/* Whether nout outputs of nred elements each are at most UK_RED_TINY
 * elements in all, a plan the planner never splits: its group or column
 * program is compiled without the split pass (uk_red_key.unsplit). */
static inline int uk__red_tiny(int64_t nout, int64_t nred) {
  /* both at most UK_RED_TINY: the product cannot overflow (no division on every call) */
  return nout <= 0 || nred <= 0 || (nout <= UK_RED_TINY && nred <= UK_RED_TINY && nout * nred <= UK_RED_TINY);
}

/* Short vector rows (at most 8 vectors of `vec` elements, more than one)
 * of more than 64 and fewer than 256 bytes over the loop inputs
 * (elem_bytes a reduced element): the threads a row whose loads are about
 * 32 bytes each, 2 (rows under 128 bytes) or 4; else 0. Rows of 64 bytes
 * or fewer keep a thread each, rows of 256 bytes 8 threads. Measured on an
 * H200 (docs/PERF.md "Short rows"): two float32 inputs in rows of 16, a
 * thread each: 2.3x the time of 4 threads at 64 MiB; one float32 input in
 * rows of 32, 8 threads: 9-10% slower than 4. */
static inline int uk__red_narrow_lanes(int64_t nred, int64_t elem_bytes, int vec) {
  if (vec < 2 || nred <= vec || nred > 8 * (int64_t)vec || elem_bytes <= 0) return 0;
  const int64_t row = nred * elem_bytes;
  return row <= 64 || row >= 256 ? 0 : row < 128 ? 2 : 4;
}

/* The strategies of one reduction program (all compiled together). T1, G8,
 * G32 and B are one kernel whose group size is a run-time argument. */
typedef enum uk_red_kernel_id {
  UK_RED_T1 = 0, /* a thread per output */
  UK_RED_G8,     /* 8 threads of a warp per output */
  UK_RED_G32,    /* a warp per output */
  UK_RED_B,      /* a block per output */
  UK_RED_COLS,   /* threads across a contiguous output axis, `by` per output */
  UK_RED_PACK,   /* rows of 2 back to back: vec / 2 outputs per vector load */
  UK_RED_NKERNELS
} uk_red_kernel_id;

/* The kernel's suffix, appended to the kernel name: "_g" (T1, G8, G32, B), "_cols" or "_p". */
const char *uk__red_kernel_suffix(int id);

/* A reduction program holds one kernel: the group of strategies that one
 * __global__ function serves (T1, G8, G32 and B share UK_RED_GROUP_G). One kernel
 * instead of all three costs NVVM and ptxas less than half the time, and a
 * program is only ~0.1 s of NVRTC since it includes no CUB (docs/PERF.md). */
typedef enum uk_red_group { UK_RED_GROUP_G = 0, UK_RED_GROUP_COLS, UK_RED_GROUP_PACK } uk_red_group;

/* Threads of the one block of a wide plan (uk__red_wide). */
#define UK_RED_WIDE_BLOCK 1024
/* Elements a wide plan takes at most: 16 a thread, loaded in one trip. */
#define UK_RED_WIDE_MAX ((int64_t)UK_RED_WIDE_BLOCK * 16)

/* Whether one output of more than UK_RED_TINY and at most UK_RED_WIDE_MAX
 * elements in a group program with vector loads (vec_ok, uk_red_plan_in's:
 * a scalar loop would wait on its loads) runs one block of
 * UK_RED_WIDE_BLOCK threads, never split (the key's `block` and `unsplit`):
 * every load in flight at once and no combine through L2. Bare float32
 * sums on an H200 (session 16): 64 KiB in 4.03 us in one block of 1024
 * threads, 4.9-5.3 us split over 4-16 blocks of 256 (the last block's
 * count and loads are L2 round trips), 4.9 us in one block of 256 (16
 * vectors a thread); at 256 KiB one block of 1024 and a split tie (5.1
 * us). In ukern's sweep, 64 KiB full sums 5.2 -> 4.5 us. */
static inline int uk__red_wide(int group, int64_t nout, int64_t nred, int vec_ok) {
  return group == UK_RED_GROUP_G && vec_ok && nout == 1 && nred > UK_RED_TINY && nred <= UK_RED_WIDE_MAX;
}

/* The most blocks of a plan over a thread-block cluster: the portable
 * cluster size (a non-portable one needs a kernel attribute). */
#define UK_RED_CLUSTER_MAX 8
/* The fewest threads of such a plan's blocks. */
#define UK_RED_CLUSTER_MIN_BLOCK 256

/* The thread-block cluster (sm_90+) that one output of more than
 * UK_RED_WIDE_MAX and at most UK_RED_CLUSTER_MAX x UK_RED_WIDE_MAX elements
 * runs over: its blocks (returned; 0 where no cluster takes it) and their
 * threads (*block), at most 16 elements a thread, loaded in one trip, the
 * blocks' values combined in rank order through distributed shared memory
 * (the key's `cluster`). The most blocks first, of UK_RED_CLUSTER_MIN_BLOCK
 * threads, up to UK_RED_CLUSTER_MAX and cluster_max (the device's most
 * blocks a cluster: 0 without clusters), then wider blocks: a block's
 * bytes come at its SM's rate. A split pays the last block's count and
 * its loads of the partials, L2 round trips (float32 sums of 256 KiB on an
 * H200: 5.7 us split, 5.3 over 4 blocks of 1024 threads, fused row sums
 * over 16 blocks of 256 4.8; docs/PERF.md "Session 27"). */
static inline int uk__red_wide_cluster(int group, int64_t nout, int64_t nred, int vec_ok, int cluster_max,
                                       int *block) {
  int most = cluster_max < UK_RED_CLUSTER_MAX ? cluster_max : UK_RED_CLUSTER_MAX, c = 2, t = UK_RED_CLUSTER_MIN_BLOCK;
  if (block) *block = 0;
  if (group != UK_RED_GROUP_G || !vec_ok || nout != 1 || nred <= UK_RED_WIDE_MAX || most < 2 ||
      nred > most * UK_RED_WIDE_MAX)
    return 0;
  while ((int64_t)c * t * 16 < nred) {
    if (c < most) c *= 2;
    else t *= 2;
  }
  if (block) *block = t;
  return c;
}
int uk__red_kernel_group(int id);

/* Threads of the block of a block-rows plan (uk__red_block_rows). */
#define UK_RED_ROWS_BLOCK 512

/* Whether nout outputs of nred elements with vector loads (vec_ok) run a
 * block an output, never split, before the cost model weighs the rest:
 * from a quarter to twice as many outputs as the sms SMs (one wave) and
 * rows of 4097-16384 elements (each thread's 8-64 elements in one or two
 * trips of loads). The model's split (a warp per output, 12-32 pieces)
 * pays the last block's count and L2 round trips. One loop input: a block
 * of UK_RED_ROWS_BLOCK threads, compiled without the split pass (the key's
 * `block` and `unsplit`; uk__red_unsplit_block). A deep program (several
 * inputs: `deep`) keeps UK_RED_BLOCK threads and its resident blocks' launch
 * bounds, and below half the SMs rows of at most 32768 x nout / sms.
 * H200, docs/PERF.md "Session 22" and "Session 23": float32 sums of 40-264
 * outputs of 6144-16384 (2-D rows, axes (1, 2) or (0, 2) of 3-D arrays)
 * 0.2-1.0 us faster as a block of 256 an output than split, and 0.1-0.9 us
 * faster again in a block of 512 (maxima up to 1.2 us), 33-64 outputs of
 * 16384 included (a block of 256 was 0.0-0.35 us slower than the split
 * there); a block of 1024 was 0.1-0.3 us slower than 512. Dot products of
 * two float32 inputs took 0.1-1.1 us longer in blocks of 512 than of 256. */
static inline int uk__red_block_rows(int64_t nout, int64_t nred, int vec_ok, int sms, int deep) {
  int64_t sm = sms > 0 ? sms : 1;
  return vec_ok && 4 * nout >= sm && nout <= 2 * sm && nred > UK_RED_TINY && nred <= UK_RED_TINY * 4 &&
         (!deep || nred * sm <= UK_RED_TINY * 8 * nout);
}

/* Normalises the axes of a call on an input of `ndim` dims into reduced[d]
 * (1 = reduced). NULL launch or num_axes 0: every axis (none with
 * reduce_none). Errors: UK_ERR_SHAPE for an axis out of range or repeated;
 * UK_ERR_INVALID for a negative count, a NULL list, or reduce_none with
 * axes. `kernel` names the kernel in messages. */
uk_status uk__red_axes(const char *kernel, int ndim, const uk_launch *l, uint8_t reduced[UK_MAX_NDIM]);

/* The result shape: kept axes, with 1s for reduced ones under keepdims. */
void uk__red_result_shape(int ndim, const int64_t *shape, const uint8_t *reduced, int keepdims, int *out_ndim,
                          int64_t *out_shape);

typedef struct uk_red_loops {
  uk_loop kept;  /* operands: loop inputs then outputs; merged */
  uk_loop red;   /* operands: loop inputs; merged */
  int nin;       /* loop inputs (non-raw array inputs) */
  int64_t nout;  /* number of outputs elements (kept size) */
  int64_t nred;  /* elements reduced into each (reduced size) */
  int index64;   /* 64-bit index arithmetic needed */
} uk_red_loops;

/* Splits the broadcast input loop L (its operands are the loop inputs) into
 * kept and reduced loops and merges each. ostrides[j] points at output j's
 * byte strides over the result dims (keepdims or not, as `keepdims` says):
 * a call passes its outputs' own, uncopied. */
void uk__red_split(const uk_loop *L, const uint8_t *reduced, int keepdims, int nouts, const int64_t *const *ostrides,
                   uk_red_loops *out);

/* Elements per vector load for a largest loop-input itemsize (16 bytes). */
int uk__red_vec(int64_t max_itemsize);

/* PACK: vectors per thread per trip (as red_pack in ukern/reduction.cuh). */
int uk__red_pack_unroll(int vec);

typedef struct uk_red_strategy {
  int kernel;      /* uk_red_kernel_id */
  int64_t grid_x;  /* blocks along x */
  int64_t nsplit;  /* pieces of each output's reduced range (grid y); 1 = no split */
  int64_t chunk;   /* reduced elements per piece */
  int vec;         /* 1 = vector loads: T1/G8/G32/B along the innermost
                      reduced axis, COLS across `vec` adjacent outputs per
                      thread; PACK: always */
  int by;          /* COLS: threads per output (a power of two, 1 to UK_RED_COLS_BY_MAX); G8: 2 or 4
                      in a narrow program (uk__red_narrow_lanes), else 0 (8) */
  int64_t slots;   /* outputs per block (partials per block when split) */
  int swz;         /* COLS, split: a 1-D grid of grid_x * nsplit blocks, each column
                      tile's pieces consecutive (else a grid of grid_x by nsplit) */
  int block;       /* B, never split: the threads of its block (uk__red_unsplit_block); 0: UK_RED_BLOCK */
  int cluster;     /* B over a cluster (uk__red_wide_cluster): its blocks, the output's nsplit pieces,
                      combined in distributed shared memory (no partials or counter); 0: none */
} uk_red_strategy;

/* Threads per block of the plan's launch. */
static inline int uk__red_block_threads(const uk_red_strategy *s) { return s->block ? s->block : UK_RED_BLOCK; }

/* Threads that share an output: 1, 8 (G8: by when set), 32 or UK_RED_BLOCK by strategy; COLS: by.
 * The kernels read it from their _uk_by argument, or have it compiled in (uk_red_key.width). */
int uk__red_threads_per_output(const uk_red_strategy *s);

/* Bytes of partials a split launch needs (0 when not split, or over a cluster): grid_x *
 * nsplit * slots partials of `partial_size` bytes. It also needs grid_x
 * counters (one per block column). */
int64_t uk__red_scratch_bytes(const uk_red_strategy *s, int64_t partial_size);

/* Chooses the kernel and geometry. itemsize[k]: loop input k's; aligned: every
 * loop input's base address is 16-byte aligned; vec: uk__red_vec of the
 * program; sms: multiprocessors of the device. The candidates the loops
 * allow (threads per output, tile width, split count) are weighed with the
 * measured cost model of red_cost.h; the cheapest wins (a candidate listed
 * earlier keeps its place unless another is 0.5% cheaper). Some shapes
 * take a measured plan before the model (uk__red_unsplit_block,
 * thread-per-output and narrow rows). A split launch
 * has one output group per block column (the last block of each column
 * combines that column's partials); a tiny one (UK_RED_TINY) is never
 * split. Pure: the same inputs, the same plan. */
void uk__red_choose(const uk_red_loops *R, const int64_t *itemsize, int aligned, int vec, int sms,
                    uk_red_strategy *s);

/* uk__red_choose in two halves: what the choice depends on, from the loops
 * (cheap: contiguity and alignment tests), and the choice from that alone
 * (the model's candidates). A caller may keep choices by their uk_red_plan_in
 * (compare with memcmp: every byte is written). */
typedef struct uk_red_plan_in {
  int64_t nout, nred;
  int64_t elem_bytes; /* bytes one reduced element reads, over the loop inputs */
  int32_t group;      /* uk_red_group */
  int32_t vec_ok;     /* G: vectors along the reduced loop; COLS: of adjacent outputs */
  int32_t vec, itemsize, sms;
  int32_t per_sm;     /* resident blocks per SM: 2048 / UK_RED_BLOCK from uk__red_plan_in; a
                         caller that knows the loaded kernel's occupancy sets it */
  int32_t deep;       /* the program keeps a trip of loads of several inputs in flight
                         (uk_red_key.deep): 0 from uk__red_plan_in; the caller sets it */
  int32_t slabs;      /* COLS: 1 when the kept loop has two or more axes (the output axis
                         is cut into slabs apart in memory: a middle axis reduced); else 0
                         (every byte written: memcmp compares them all) */
  int32_t narrow;     /* G: the program also combines groups of 2 or 4 threads
                         (uk_red_key.narrow): 0 from uk__red_plan_in; the caller sets it */
  int32_t partial_bytes; /* bytes of the program's partial (its reduce type's words: an
                            argmax pair 16): 0 from uk__red_plan_in (taken as 4); a caller
                            that knows the loaded program sets it, as per_sm */
  int32_t cluster_max;   /* the device's most blocks a thread-block cluster (uk__red_wide_cluster):
                            0 from uk__red_plan_in (no clusters); the caller sets it */
  int32_t dense;         /* COLS: 1 when the kept loop is one axis and each input's reduced rows
                            follow one another in memory (its reduced step is the row's bytes):
                            a tile over all the outputs reads one run of bytes (red_plan.c); also
                            no padding bytes (memcmp) */
} uk_red_plan_in;
void uk__red_plan_in(const uk_red_loops *R, const int64_t *itemsize, int aligned, int vec, int sms,
                     uk_red_plan_in *in);
void uk__red_choose_in(const uk_red_plan_in *in, uk_red_strategy *s);

/* The threads of the block of a plan that runs a block an output, never
 * split, whatever the model would say: UK_RED_WIDE_BLOCK (uk__red_wide),
 * a cluster's blocks' (uk__red_wide_cluster, with in->cluster_max),
 * UK_RED_ROWS_BLOCK (uk__red_block_rows, on in->sms SMs); else 0 (the plans
 * of UK_RED_BLOCK threads). uk__red_choose_in takes such a plan first, and
 * the program is compiled for that block (the key's `block`). */
int uk__red_unsplit_block(const uk_red_plan_in *in);

/* Measurement only (UKERN_RED_TUNE's by, cv, sp, swz and g): a COLS plan s
 * made into one of `by` threads per output (0: as chosen; a power of two up
 * to UK_RED_COLS_BY_MAX), vector tiles `vec` (-1: as chosen; 1 only where in allows them),
 * about `nsplit` pieces per output (0: as many as chosen; 1: none), the
 * pieces' block order `swz` (-1: as chosen; 1 only when split). A group
 * plan (T1, G8, G32, B; not an unsplit block's) takes `group` threads an
 * output (1, 8, 32 or UK_RED_BLOCK; 0: as chosen; another group runs
 * unsplit unless `nsplit` says) and `nsplit`; packed rows are left alone. */
void uk__red_force(const uk_red_plan_in *in, int by, int vec, int64_t nsplit, int swz, int group,
                   uk_red_strategy *s);

/* The group of the kernel uk__red_choose picks for these loops (it does not
 * depend on the device), so a call knows which program it needs before it
 * looks at the device. */
int uk__red_group(const uk_red_loops *R, const int64_t *itemsize, int aligned, int vec);

/* Short description ("block per output, vector loads, split 4") into buf. */
const char *uk__red_describe(const uk_red_strategy *s, char *buf, int size);

#endif
