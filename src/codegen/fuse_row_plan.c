/* The row kernel's launch geometry and argument buffer (fuse_row_plan.h). */
#include "codegen/fuse_row_plan.h"

#include <stdlib.h>

#include "base/error.h"
#include "codegen/dtype.h"

void uk__row_grid(int64_t rows, int64_t n, int max_threads, const int *kept_size, int nkept, int64_t smem,
                  uk_row_grid *g) {
  int t = 32;
  while (t < max_threads && (int64_t)t * 8 < n) t *= 2;
  int block = t >= 64 ? t : 256, rpb = block / t;
  int64_t blocks = (rows + rpb - 1) / rpb, esize = 0, nc, rowbytes = 0;
  for (int j = 0; j < nkept; j++) esize += kept_size[j];
  /* what a row's share of the block's memory holds after each input's
   * part is rounded up to 16 bytes (the kernel lays them out so) */
  nc = esize ? (smem / rpb - 16 * (int64_t)nkept) / esize : 0;
  if (nc > n) nc = n;
  if (nc < 0) nc = 0;
  for (int j = 0; j < nkept; j++) rowbytes += (nc * kept_size[j] + 15) & ~15LL;
  g->threads = t;
  g->block = block;
  g->rows_per_block = rpb;
  g->blocks = blocks < (1 << 24) ? blocks : (1 << 24);
  g->kept = nc;
  g->rowbytes = rowbytes;
  g->shared = rowbytes * rpb;
}

int uk__row_kept_sizes(const uk_fuse_plan *p, int *size) {
  const uk_fuse_row *r = &p->row;
  int n = 0;
  for (int j = 0; j < r->nparams; j++)
    if (r->param[j].kind == UK_ROW_IN) size[n++] = (int)uk_dtype_size(p->type[r->param[j].index].dtype);
  return n;
}

/* Places a field of `size` bytes on `align` at the end of the buffer. */
static size_t place(size_t *bytes, size_t size, size_t align) {
  size_t at = (*bytes + align - 1) / align * align;
  *bytes = at + size;
  return at;
}

uk_status uk__row_args(const uk_fuse_plan *p, uk_plan *plan) {
  const uk_fuse_row *r = &p->row;
  int nd = r->ndim;
  size_t bytes = 0;
  plan->nslots = 0;
  plan->bytes = 0;
  plan->slots = calloc((size_t)(2 * r->nparams + 1), sizeof *plan->slots);
  if (!plan->slots) return uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
  for (int j = 0; j < r->nparams; j++) {
    if (r->param[j].kind == UK_ROW_SCALAR) {
      const uk_dtype_info *di = uk__dtype_info(p->type[r->param[j].index].dtype);
      size_t at = place(&bytes, di->size, di->align);
      uk__plan_add(plan, UK_ROW_SLOT_SCALAR, (int)di->size, j, 0, nd, at);
      continue;
    }
    size_t at = place(&bytes, 8, 8);
    uk__plan_add(plan, UK_ROW_SLOT_PTR, 8, j, 0, nd, at);
    at = place(&bytes, 8 * (size_t)nd, 8);
    uk__plan_add(plan, UK_ROW_SLOT_STRIDES, 0, j, 0, nd, at); /* size: 8 * dim */
  }
  size_t at = place(&bytes, 8 * (size_t)nd + 40, 8);
  uk__plan_add(plan, UK_ROW_SLOT_GEO, 0, 0, 0, nd, at); /* size: 8 * dim + 40 */
  plan->bytes = (bytes + 7) & ~(size_t)7;
  if (plan->bytes > UK__PARAM_BYTES_MAX) {
    size_t b = plan->bytes;
    uk__plan_free(plan);
    return uk__errorf(UK_ERR_INVALID, "%s: the kernel's parameters take %zu bytes, more than CUDA's %d "
                      "(UK_MAX_PARAM_BYTES)", r->name ? r->name : "row kernel", b, UK__PARAM_BYTES_MAX);
  }
  return UK_OK;
}
