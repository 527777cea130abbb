/* Loop shapes: NumPy broadcasting, dimension merging, index width.
 * Pure arithmetic on shapes and byte strides; no CUDA. */
#ifndef UK_CODEGEN_SHAPE_H
#define UK_CODEGEN_SHAPE_H

#include <stdint.h>

#include "ukern/ukern.h"

/* One operand of a loop: its view, as the caller gave it. */
typedef struct uk_operand_view {
  const char *name; /* parameter name, for messages */
  int ndim;
  const int64_t *shape;
  const int64_t *strides; /* bytes */
  int64_t itemsize;
} uk_operand_view;

/* A loop over `ndim` axes with each operand's byte strides (0 on broadcast
 * axes), C order (axis ndim-1 is the fastest). */
typedef struct uk_loop {
  int ndim;
  int64_t shape[UK_MAX_NDIM];
  int nops;
  int64_t strides[UK_MAX_ARRAY_OPERANDS][UK_MAX_NDIM]; /* [operand][axis] */
  int64_t size;                              /* product of shape (1 for 0-d) */
} uk_loop;

/* Broadcasts the operands' shapes (NumPy rules) into *loop, with every
 * operand's strides aligned to the loop's axes. UK_ERR_SHAPE naming the two
 * operands and their shapes when they don't broadcast, or when the loop's
 * element count (times 16 bytes, the largest item) overflows int64.
 * nops <= UK_MAX_ARRAY_OPERANDS. */
uk_status uk__shape_broadcast(int nops, const uk_operand_view *ops, uk_loop *loop);

/* Range-checks one array descriptor: ndim in 0..UK_MAX_NDIM, no negative
 * extent, and (unless it holds no element) an element count, byte size and
 * every stride product |stride| * (extent - 1), and their sums in each
 * direction, that fit in int64. UK_ERR_SHAPE naming `name` and the axis.
 * *count (may be NULL) gets the element count. */
uk_status uk__shape_check(const char *name, int ndim, const int64_t *shape, const int64_t *strides, int64_t itemsize,
                          int64_t *count);

/* "(3, 4)" / "()" / "(5,)" into buf. */
const char *uk__shape_str(int ndim, const int64_t *shape, char *buf, int size);

/* Merges the loop in place: drops size-1 axes and merges adjacent axes that
 * every operand walks contiguously (stride[d] == stride[d+1] * shape[d+1]).
 * A zero-size loop keeps one axis of size 0. All-size-1 loops become 0-d. */
void uk__shape_merge(uk_loop *loop);

/* 1 if the loop size and every operand's extreme byte offset fit in int32
 * (so 32-bit index arithmetic is exact), else 0. */
int uk__shape_fits_int32(const uk_loop *loop);

/* 1 if the merged loop is 0-d or 1-d and each operand's stride is its
 * itemsize or 0 (a broadcast scalar). itemsizes per operand. */
int uk__shape_is_contiguous(const uk_loop *loop, const int64_t *itemsizes);

#endif
