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

/* The launch geometry of a key over L: *threads per block (the call's
 * `block`, 0: the default; TILED: UK_EW_TILE_THREADS) and *blocks, capped
 * for strided loops at a few waves of sm_count multiprocessors; 1 to
 * INT32_MAX. */
void uk__ew_grid(const uk_ew_key *key, const uk_loop *L, int block, int sm_count, int64_t *blocks, int *threads);

#endif
