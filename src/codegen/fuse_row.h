/* The row plan's emitter (fuse_row.c): a fusion program whose reductions
 * all reduce the last axis of one map shape, their results used again per
 * row (softmax, layer norms), as one kernel (uk_fuse_row in fuse_plan.h).
 * Its launch geometry and argument buffer: fuse_row_plan.h. */
#ifndef UK_CODEGEN_FUSE_ROW_H
#define UK_CODEGEN_FUSE_ROW_H

#include "codegen/fuse_plan.h"

/* Plans the row kernel when the program has one: its map shape's ndim
 * and node and which outputs are per row (what uk__fuse_row_fits reads);
 * p->row.ndim stays 0 otherwise. Its source comes
 * later, from uk__fuse_row_emit, for the first call that runs it: most
 * calls of a program with a last-axis reduction over a whole array run the
 * split plan, and the row source's emission was most of their first call's
 * host time (docs/PERF.md "Session 37"). */
uk_status uk__fuse_row_plan(const uk_fuse_prog *g, uk_fuse_plan *p);

/* Emits the row kernel of a plan that has one (p->row.source, name,
 * params, levels, register bytes); nothing when it exists or the plan has
 * none. Writes only those fields: calls may read the planned ones
 * meanwhile. On failure they stay NULL, and a later call may emit again. */
uk_status uk__fuse_row_emit(const uk_fuse_prog *g, uk_fuse_plan *p, const char *name, const char *user_preamble);

/* 1 when a call with these node shapes (uk__fuse_shapes) runs the row
 * plan: the reductions' operands have the map shape, elementwise outputs
 * have it too, there are rows and columns, and the rows are not a few long
 * ones better spread over the device's sm_count SMs by the split plan
 * (uk__row_prefer) unless clusters of cluster_max blocks (0: none) spread
 * them (uk__row_prefer_cluster); a program whose split plan is one kernel
 * (p->row.single) only for fewer such rows than SMs (from
 * UK_ROW_LONE_MIN_N elements), or rows a block takes alone
 * (uk__row_lone_block). Memory overlap is the runtime's check. */
int uk__fuse_row_fits(const uk_fuse_prog *g, const uk_fuse_plan *p, const int64_t *shapes, int sm_count,
                      int cluster_max);

#endif
