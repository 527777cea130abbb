/* Shared by the fusion fuzz entries: plans (and so emits) a parsed or built
 * program for a signature and computes its node shapes, checking what must
 * hold whatever the input. */
#ifndef UK_FUZZ_FUSE_H
#define UK_FUZZ_FUSE_H

#include <string.h>

#include "base/error.h"
#include "codegen/fuse_plan.h"
#include "codegen/fuse_row.h"
#include "fuzz_util.h"

/* Plans g for sig; with a plan, shapes from in_shapes (one per input, each
 * of the input's ndim, or NULL for scalars). Invariants: a failure is a
 * ukern status with a message; a plan has kernels with names and text and
 * per-output dtypes; shapes fail only with UK_ERR_SHAPE. */
static inline void fz_plan(const uk_fuse_prog *g, const uk_fuse_sig *sig, const int64_t *const *in_shapes) {
  uk_fuse_plan *p = NULL;
  uk_status st = uk__fuse_plan(g, sig, "fz", NULL, &p);
  if (st != UK_OK) {
    require(p == NULL && uk_last_error()[0] != '\0');
    uk__error_clear();
    return;
  }
  require(p != NULL && p->nkernels >= 1);
  for (int k = 0; k < p->nkernels; k++) {
    const uk_fuse_kernel *q = &p->kernels[k];
    require(q->name && q->in_params && q->out_params && (q->is_reduction ? q->map_expr && q->reduce_expr : q->operation != NULL));
  }
  for (int k = 0; k < g->nout; k++) require(p->out_dtype[k] >= 0 && p->out_dtype[k] < UK_DTYPE_COUNT_);
  int64_t *shapes = calloc((size_t)g->nnodes * UK_MAX_NDIM + 1, sizeof *shapes);
  if (shapes) {
    st = uk__fuse_shapes(g, p, in_shapes, shapes);
    require(st == UK_OK || st == UK_ERR_SHAPE);
    if (st == UK_OK) (void)uk__fuse_row_fits(g, p, shapes, 132, 16);
    free(shapes);
  }
  /* a call that fits emits the row kernel (runtime/fusion.c ensure_row),
   * here every plan that has one: a failure is a status with a message,
   * and the plan's fields stay as they were */
  if (p->row.ndim) {
    const int nd = p->row.ndim, map = p->row.map_node;
    uk_status se = uk__fuse_row_emit(g, p, "fz", NULL);
    require(se == UK_OK ? p->row.source && p->row.name && p->row.nparams > 0
                        : !p->row.source && uk_last_error()[0] != '\0');
    require(p->row.ndim == nd && p->row.map_node == map);
  }
  uk__error_clear();
  uk__fuse_plan_free(p);
}

#endif
