/* The row kernel's launch (codegen/fuse_row.h emits it): pure arithmetic
 * from a call's row shape to the kernel variant and launch geometry, and
 * the layout of the kernel's argument buffer. No CUDA; unit-tested from a
 * table (tests/test_row_plan.c). */
#ifndef UK_CODEGEN_FUSE_ROW_PLAN_H
#define UK_CODEGEN_FUSE_ROW_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "codegen/emit_common.h"
#include "codegen/fuse_plan.h"

/* Dynamic shared memory a row block takes where the device's opt-in
 * cannot be set (under the default 48 KiB that the static reduction slots
 * share). */
#define UK_ROW_SMEM_DEFAULT (40 * 1024)
/* Threads per block at most (the kernel's launch bound). */
#define UK_ROW_MAX_THREADS 1024
/* Register bytes a thread spends on its elements of a row (inputs, the
 * value kept for the outputs, the outputs): 16 float32 elements of a
 * softmax or a layer norm (12 bytes each: x, the kept value, z; 34-38
 * registers a thread all told, NVRTC 13 for sm_90). Past UK_ROW_REG_THREADS
 * x UK_ROW_REG_ELEMS elements, 32 vector elements of at most 12 bytes
 * (61-64 registers). */
#define UK_ROW_REG_BYTES 192
/* Elements a thread takes at most in registers (the unrolled loops), twice
 * as many for the widest rows in registers. */
#define UK_ROW_REG_ELEMS 16
/* Threads a row at most in registers: blocks of 512 threads, so that two or
 * more share an SM (a block of 1024 alone on an SM idles it at every
 * barrier of the row's reductions). */
#define UK_ROW_REG_THREADS 512

/* 1: the registers variant's grid has a block for each block of rows (no
 * stride over the rest): the last round of a grid capped at 8 rounds of
 * full SMs left some SMs one more stride of rows than others (H200,
 * 1 GiB: 4-7% slower than the copy rate; docs/PERF.md). */
#define UK_ROW_REG_GRID_ALL 1
/* 1: whole narrow rows of contiguous vectors move through a warp's shared
 * slot (uk__row_staged). */
#define UK_ROW_STAGED 1
/* Threads a block of rows in registers of at most 32 threads that are not
 * staged (H200: 1.5-4% faster than 256 at rows of 128 and 512 from 64 MiB
 * to 1 GiB; staged rows of 32 ran 2% slower with 128 than with 256). */
#define UK_ROW_REG_BLOCK_SMALL 64

/* Where a row lives between the kernel's passes. */
enum {
  UK_ROW_REGS = 1, /* in registers: read once, every pass from registers */
  UK_ROW_SHARED,   /* in shared memory: read once (cp.async), passes from shared */
  UK_ROW_GLOBAL    /* too wide: `kept` elements in shared, the rest re-read each pass */
};

/* A call's rows, as the sizing sees them. */
typedef struct uk_row_shape {
  int64_t rows, n;     /* rows of n elements */
  int nkept;           /* array inputs (kept in shared memory in the shared/global modes) */
  const int *kept_size; /* their element bytes */
  int reg_bytes;       /* register bytes of one element (uk_fuse_row.reg_bytes) */
  int vec;             /* elements per vector access where every row array allows it
                          (16 bytes of the widest), 1 where one does not */
  int sm_count;        /* the device's multiprocessors */
  int64_t smem;        /* dynamic shared bytes a block may take */
  int cluster_max;     /* blocks a thread-block cluster may take (sm_90+: 8, or 16
                          where the device allows non-portable sizes); 0 or 1:
                          no clusters */
  int contig;          /* 1: every row array's rows follow one another in memory
                          (a warp's rows are one chunk: uk__row_staged) */
  int levels;          /* reductions a row runs one after another (uk_fuse_row.levels;
                          0: unknown, taken as 1) */
  int single;          /* 1: a lone reduction (uk_fuse_row.single): its few rows go over
                          clusters from UK_ROW_LONE_MIN_N elements */
} uk_row_shape;

/* How a call's rows run. */
typedef struct uk_row_grid {
  int mode;           /* UK_ROW_REGS, _SHARED, _GLOBAL */
  int threads;        /* per row (T): a power of two, 1 .. 1024 (>= 64 outside registers) */
  int vec;            /* V: elements per vector access (1: scalar) */
  int regs;           /* K: vectors a thread holds per array (registers mode), else 0 */
  int block;          /* threads per block: rows_per_block * T */
  int rows_per_block; /* block / T */
  int64_t blocks;     /* grid x (the kernel strides over the rest) */
  int64_t kept;       /* nc: elements of each row in shared memory (0 in registers mode) */
  int64_t rowbytes;   /* shared bytes of one row: each input's part rounded up to 16 bytes */
  int64_t shared;     /* dynamic shared bytes of a block: rowbytes * rows_per_block */
  int cluster;        /* C >= 2: a row split over the C blocks of a cluster
                         (uk__row_cluster; kept is a block's slice), else 0 */
  int staged;         /* 1: whole narrow rows of contiguous arrays move through a warp's
                         shared slot (uk__row_staged; _UK_RX), else 0 */
  int try_div;        /* 1: the registers variant's output pass divides without a branch
                         an element (_UK_RD; uk__row_try_div), else 0 */
} uk_row_grid;

/* The registers variant takes the branch-free divisions (fuse_row.c
 * reg_outputs, _uk_rdiv_try, a vector's redo; the shared-memory variants
 * always do) where a thread holds at most UK_ROW_REG_ELEMS elements and
 * its grid has blocks of at most UK_ROW_TRY_DIV_BLOCK threads or at most
 * UK_ROW_TRY_DIV_BLOCKS_PER_SM blocks an SM: the redo holds a vector's
 * values a while longer (8-10 more registers, NVRTC 13), which took blocks
 * of 512 threads from 3 to 2 an SM and rows of 8192 from 16 MiB 4-11%
 * slower, while blocks of 256 lost less and gained (rows of 32-256 up to
 * 5% faster; H200: docs/PERF.md "Session 30"). */
#define UK_ROW_TRY_DIV_BLOCK 256
#define UK_ROW_TRY_DIV_BLOCKS_PER_SM 2

/* 1 where g (sized for sm_count SMs) takes the branch-free divisions. */
int uk__row_try_div(const uk_row_grid *g, int sm_count);

/* Sizes the rows of s: in registers when a thread's share (at most
 * UK_ROW_REG_ELEMS elements and UK_ROW_REG_BYTES bytes, or twice both for
 * rows past that) times UK_ROW_REG_THREADS threads holds a row, with the
 * fewest threads a row (down to one) that hold it, so that narrow rows
 * take sub-warps and many rows run per block; else a
 * block of >= 64 threads a row (about 16 elements each) with as much of
 * the row in shared memory as s->smem holds. Rows in registers of at
 * most a warp: blocks of UK_ROW_REG_BLOCK_SMALL threads, staged ones
 * (s->contig and uk__row_staged) and wider rows of 256 (or a row). Blocks:
 * enough for every SM twice over where rows allow (smaller blocks for few
 * rows); in registers a block for each block of rows
 * (UK_ROW_REG_GRID_ALL), else at most sm_count * (2048 / block) * 8 (the
 * kernel strides over the rest); at most 2^31 - 1. Rows of two or more
 * levels that take 512 threads go to UK_ROW_RESIDENT_BLOCK threads at the
 * wide budget where 7/8 to all of the SMs' UK_ROW_RESIDENT_THREADS then
 * hold every row at once (not a lone reduction's). */
void uk__row_size(const uk_row_shape *s, uk_row_grid *g);
/* 1 where g's rows of n elements may move through a warp's shared slot
 * (_UK_RX, templates/ukern/fusion_row.cuh _uk_ld_stg) when every row
 * array's rows follow one another in memory (uk__row_size asks it when
 * s->contig): registers mode, vectors, whole rows (T x K x V = n) of
 * fewer than 8 threads (a warp's access would touch 32 / T rows, a sector
 * of each) and T x K >= 8 (the slot's swizzle). Such blocks take at most
 * 256 threads (the kernel's 8 slots). Pure. */
int uk__row_staged(const uk_row_grid *g, int64_t n);


/* Threads an SM that blocks of register slices at 64 registers a thread
 * (the row kernel's __launch_bounds__(1024)) hold at once, and the block
 * size of such grids past a block an SM (fuse_row_plan.c resident_regs and
 * the 256-thread rows of 4097-8192 elements). */
#define UK_ROW_RESIDENT_THREADS 1024
#define UK_ROW_RESIDENT_BLOCK 256

/* Rows of at least this many elements are few enough to split over a
 * cluster when there are fewer rows than SMs (fuse_row_cluster.c). */
#define UK_ROW_CLUSTER_MIN_N 16384
/* Elements of a row a cluster's block takes at least. */
#define UK_ROW_CLUSTER_MIN_SLICE 4096
/* A lone reduction's (uk_row_shape.single) few rows go over clusters from
 * this many elements, in slices of at least UK_ROW_LONE_MIN_SLICE below
 * UK_ROW_CLUSTER_MIN_N: each row's blocks combine through distributed
 * shared memory instead of the split plan's count and last block, and
 * rows a block's registers hold spread over more SMs (float32 row sums of
 * 2-32 rows of 8192: 5.3-6.0 us in the split plan, 4.3-4.8 over clusters
 * of 4 blocks of 128 threads; slices of 1024 no faster. Two-level rows of
 * 8192, softmax and layer norms, and x - mean's stay a block a row: up to
 * 0.6 us slower over clusters. H200, docs/PERF.md "Session 21"). */
#define UK_ROW_LONE_MIN_N 8192
#define UK_ROW_LONE_MIN_SLICE 2048

/* The shortest rows that go over clusters when there are fewer rows than
 * SMs: UK_ROW_LONE_MIN_N for a lone reduction, else UK_ROW_CLUSTER_MIN_N. */
static inline int64_t uk__row_few_min_n(int single) { return single ? UK_ROW_LONE_MIN_N : UK_ROW_CLUSTER_MIN_N; }

/* Elements of a block's slice of a row of n over c blocks: a whole number
 * of v-element vectors. */
int64_t uk__row_slice(int64_t n, int v, int c);

/* The cluster variant (uk__row_size calls it last, outside registers
 * mode, and for a lone reduction's few rows in registers mode too): when
 * s->cluster_max >= 2 and either a row does not fit one block's s->smem
 * but fits C blocks' (no re-read), or there are fewer rows than SMs of
 * >= uk__row_few_min_n(s->single) elements, or rows of UK_ROW_CLUSTER_MIN_N
 * elements and s->levels >= 2 take a block alone on its SM (g->threads
 * UK_ROW_MAX_THREADS, or over half of s->smem), each row is split over
 * the C blocks of a cluster (C a power of two <= cluster_max), each
 * keeping its slice of kept elements (a multiple of the vector) in shared
 * memory. C: the fewest blocks that hold a row (2 for rows alone on an
 * SM), doubled while a block's slice takes more than a quarter of the
 * budget where C > 1 (four blocks an SM), more than half where not, and while
 * rows * C leave over 1/8 of the SMs idle, as long as a slice keeps
 * UK_ROW_CLUSTER_MIN_SLICE elements (UK_ROW_LONE_MIN_SLICE for a lone
 * reduction's rows shorter than UK_ROW_CLUSTER_MIN_N). Fills g (mode
 * UK_ROW_SHARED, a block per slice, blocks = clusters * C) and returns 1,
 * else leaves g and returns 0. uk__row_size then puts the slices of few
 * rows (rows x C at most the SMs; a lone reduction's C halved, down to 2,
 * until they are) in registers where a block's threads hold one (mode
 * UK_ROW_REGS with cluster C, kept the slice, no shared memory), and past
 * that, except a lone reduction's, where blocks of at most
 * UK_ROW_RESIDENT_BLOCK threads hold a slice (C doubled until they do) and
 * the grid is resident at once (UK_ROW_RESIDENT_THREADS threads an SM for
 * one level, three quarters of that for two or more). */
int uk__row_cluster(const uk_row_shape *s, uk_row_grid *g);

/* 1 when a few long rows (fewer than SMs) run the cluster variant rather
 * than the split plan: clusters of cluster_max blocks, rows of at least
 * uk__row_few_min_n(single) elements (uk__row_cluster splits them) and
 * each block moving at most 128 KiB of the row's `bytes` an element (its
 * slice then fits a block's shared memory). */
int uk__row_prefer_cluster(int64_t n, int64_t bytes, int cluster_max, int single);

/* 1 where a lone reduction's rows of n can run a block a row in registers
 * rather than in the split plan: rows that take a whole block of
 * UK_ROW_REG_THREADS threads at UK_ROW_REG_ELEMS elements a thread (4097-8192),
 * from half the SMs to twice as many rows. A block's own combine costs less
 * than the split's count and last block: float32 sums, maxima, argmax and
 * row sums of (x - y)^2 over 67-264 rows of 6144-8192 ran 0.1-1.9 us faster
 * (H200, docs/PERF.md "Session 22"). Fewer rows spread better over every SM
 * in the split; more, or rows of 2048-4096, gain little or lose. */
static inline int uk__row_lone_block(int64_t rows, int64_t n, int sm_count) {
  int64_t sm = sm_count > 0 ? sm_count : 1, most = (int64_t)UK_ROW_REG_THREADS * UK_ROW_REG_ELEMS;
  return n > most / 2 && n <= most && 2 * rows >= sm && rows <= 2 * sm;
}

/* 1 when a lone reduction's rows (s->single), sized into g by
 * uk__row_size, run the row kernel rather than the split plan: each
 * thread holds at most UK_ROW_REG_ELEMS elements in registers, and the
 * rows go over clusters, or a block a row (uk__row_lone_block). */
int uk__row_lone_light(const uk_row_shape *s, const uk_row_grid *g);

/* 1 when rows of n elements moving `bytes` bytes each (reads and writes of
 * a row's arrays) run the row kernel rather than the split plan: unless
 * there are fewer rows than SMs and each SM would move more than 1 MiB
 * (a few long rows spread better over every SM in the split plan). */
int uk__row_prefer(int64_t rows, int64_t n, int64_t bytes, int sm_count);

/* The lines that select the variant of a row kernel's source that g runs
 * for rows of n elements (prefixed to it): "#define _UK_RK <regs>\n
 * #define _UK_RV <vec>\n#define _UK_RT <threads>\n#define _UK_RW <whole>\n
 * #define _UK_RD <try_div>\n";
 * whole: 1 where the registers variant's T x K x V slots are exactly the
 * row (no element needs a bounds test). At most 112 bytes. */
void uk__row_variant(const uk_row_grid *g, int64_t n, char *buf, size_t size);

/* The slots of the row kernel's argument buffer (UK_ROW_SLOT_*: `param` is
 * the row parameter's position, `dim` the map ndim). */
enum {
  UK_ROW_SLOT_PTR = UK_SLOT_KIND_BASE, /* an array's data pointer (8 bytes) */
  UK_ROW_SLOT_STRIDES,                 /* its _uk_st<ndim>: byte strides (8 * ndim) */
  UK_ROW_SLOT_SCALAR,                  /* a scalar input in its dtype (`size` bytes) */
  UK_ROW_SLOT_GEO                      /* _uk_geo<ndim>: lead[ndim], nrows, n, nc, rowbytes, T (8 * ndim + 40) */
};

/* The argument buffer of p's row kernel: its parameters in declaration
 * order, each on its alignment. UK_ERR_INVALID naming the kernel past
 * UK__PARAM_BYTES_MAX; UK_ERR_NOMEM. */
uk_status uk__row_args(const uk_fuse_plan *p, uk_plan *plan);

/* The element sizes of the arrays a row keeps (the UK_ROW_IN parameters,
 * in order) into size[]; their count. */
int uk__row_kept_sizes(const uk_fuse_plan *p, int *size);

#endif
