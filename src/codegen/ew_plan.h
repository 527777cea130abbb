/* Elementwise planning: pure arithmetic from the merged loop to the
 * variant part of a key (contiguous, vectorised, strided or tiled; index
 * width; broadcast and tile masks) and from a key to the launch geometry.
 * No CUDA; unit-tested from a table (tests/test_ew_plan.c). */
#ifndef UK_CODEGEN_EW_PLAN_H
#define UK_CODEGEN_EW_PLAN_H

#include "codegen/ew_emit.h"
#include "codegen/shape.h"

/* Threads per block when the call does not choose. */
#define UK_EW_DEFAULT_BLOCK 256

/* Fills key's variant, vec, index64, ndim, bcast_mask and tile fields from
 * the merged loop L (whose operands are uk__ew_loop_operand's) and key->p.
 * data[p]: parameter p's base address (0 for an output ukern allocates,
 * which counts as 16-byte aligned). block: the call's threads per block (0:
 * the default); only the default block size may take the tiled variant. */
void uk__ew_choose(const uk_ew_kernel *k, const uk_loop *L, const uint64_t *data, int block, uk_ew_key *key);

/* A launch's geometry. */
typedef struct uk_ew_geom {
  int64_t blocks;   /* grid x: 1 to INT32_MAX */
  int64_t blocks_y; /* grid y: 1 to 65535 (ROWS: row groups; else 1) */
  int threads;      /* per block */
  int lanes;        /* ROWS: log2 of the threads along a row (UK_EW_SLOT_LANES); else 0 */
} uk_ew_geom;

/* The launch geometry of a key over L (L->size > 0): threads per block (the
 * call's `block`, 0: the default; TILED: UK_EW_TILE_THREADS) and blocks,
 * capped for strided loops at a few waves of sm_count multiprocessors.
 * ROWS: 2^lanes threads along a row (the fewest powers of two covering the
 * row's vectors, at most the block), block >> lanes rows per block; grid x
 * over a row's column chunks, grid y over row groups (the kernel strides
 * past both caps). */
void uk__ew_grid(const uk_ew_key *key, const uk_loop *L, int block, int sm_count, uk_ew_geom *g);

#endif
