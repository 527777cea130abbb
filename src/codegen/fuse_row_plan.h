/* The row kernel's launch (codegen/fuse_row.h emits it): pure arithmetic
 * from a call's row shape to the launch geometry, and the layout of the
 * kernel's argument buffer. No CUDA; unit-tested from a table
 * (tests/test_row_plan.c). */
#ifndef UK_CODEGEN_FUSE_ROW_PLAN_H
#define UK_CODEGEN_FUSE_ROW_PLAN_H

#include <stdint.h>

#include "codegen/emit_common.h"
#include "codegen/fuse_plan.h"

/* Dynamic shared memory a row block asks for (96 KiB: a 16384-element
 * float32 row, two blocks an SM on sm_80/90), and what it falls back to
 * where that opt-in fails (40 KiB, under the default 48 KiB that the
 * static reduction slots share). */
#define UK_ROW_SMEM_OPT_IN (96 * 1024)
#define UK_ROW_SMEM_DEFAULT (40 * 1024)

/* How a call's rows run. */
typedef struct uk_row_grid {
  int threads;        /* per row (T): a power of two, 32 .. max_threads */
  int block;          /* threads per block: T, or 256 (a warp per row) when T < 64 */
  int rows_per_block; /* block / T */
  int64_t blocks;     /* grid x: the rows' blocks, at most 2^24 (the kernel strides over rows) */
  int64_t kept;       /* nc: elements of each row kept in shared memory (0 .. n) */
  int64_t rowbytes;   /* shared bytes of one row: each input's part rounded up to 16 bytes */
  int64_t shared;     /* dynamic shared bytes of a block: rowbytes * rows_per_block */
} uk_row_grid;

/* The geometry of `rows` rows of n elements: threads per row for about 8
 * elements each; as many elements of each row kept as `smem` bytes a block
 * hold, each input's part (kept_size[j] bytes an element, nkept inputs)
 * starting on 16 bytes. */
void uk__row_grid(int64_t rows, int64_t n, int max_threads, const int *kept_size, int nkept, int64_t smem,
                  uk_row_grid *g);

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
