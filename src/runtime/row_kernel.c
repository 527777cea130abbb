/* The fusion row kernel: what differs from the other generated kinds
 * (row_kernel.h). The hit path builds no text and allocates nothing. */
#include "runtime/row_kernel.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "codegen/fuse_row_plan.h"
#include "runtime/kernel_args.h"
#include "runtime/kernel_common.h"
#include "runtime/device.h"
#include "runtime/launch_frame.h"
#include "runtime/cluster_launch.h"

struct uk__row_kernel {
  uk__kernel base; /* first: the shared stages see the object through it */
  const uk_fuse_plan *p;
  int nkept;
  int kept_size[UK_FUSE_MAX_INPUTS]; /* element bytes of each kept input */
};

/* The plan fixes the source but for its variant (uk__row_variant): a key
 * is where it is loaded and which variant. */
typedef struct row_key {
  int device;
  uk_row_grid g; /* mode, regs, vec and threads matter (uk__row_variant); the rest is zero */
  int64_t n;     /* the row's length where the variant depends on it (whole rows), else 0 */
  int cluster;   /* 1: a row over a cluster's blocks (shared-memory slices: threads 0, their
                    T is the launch's, sized with the budget only the launch knows; slices in
                    registers: T compiled in) */
} row_key;

typedef struct prep {
  uk__call c;
  row_key key;
} prep;

static const uk__row_kernel *self(const uk__kernel *kd) { return (const uk__row_kernel *)kd; }

/* ------------------------------------------------------------------------ */
/* The kind                                                                  */
/* ------------------------------------------------------------------------ */

static uk_status kind_emit(const uk__kernel *kd, const void *key, uk_strbuf *src, uk_plan *plan) {
  const row_key *rk = key;
  char v[128];
  uk__row_variant(&rk->g, rk->n, v, sizeof v);
  uk__sb_add(src, v);
  if (rk->cluster) uk__sb_add(src, "#define _UK_RC 1\n");
  uk__sb_add(src, self(kd)->p->row.source);
  return uk__row_args(self(kd)->p, plan);
}

static void kind_describe(const uk__kernel *kd, const void *key, char *buf, size_t size) {
  const row_key *rk = key;
  if (rk->g.regs)
    snprintf(buf, size, "compiling the fusion row kernel '%s' (rows %sin registers, %d threads a %s, %d x %d elements "
             "a thread)", kd->name, rk->cluster ? "over thread-block clusters, " : "", rk->g.threads,
             rk->cluster ? "block" : "row", rk->g.regs, rk->g.vec);
  else if (rk->cluster)
    snprintf(buf, size, "compiling the fusion row kernel '%s' (rows over thread-block clusters, %d elements an access)",
             kd->name, rk->g.vec);
  else
    snprintf(buf, size, "compiling the fusion row kernel '%s' (rows in shared memory, %d threads a row, %d elements an "
             "access)", kd->name, rk->g.threads, rk->g.vec);
}

static void kind_compile(const uk__kernel *kd, const void *key, uk__kind_compile *out) {
  (void)kd, (void)key;
  out->extra = NULL;
}

static _Atomic int smem_optin[UK__MAX_DEVICES];

/* The dynamic shared memory a block of the device may opt in to (0:
 * unknown). */
static int device_optin(int device) {
  int in_range = device >= 0 && device < UK__MAX_DEVICES, n = 0;
  if (in_range && (n = atomic_load_explicit(&smem_optin[device], memory_order_relaxed)) > 0) return n;
  if (uk__cu.cuDeviceGetAttribute(&n, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, (CUdevice)device) !=
          CUDA_SUCCESS ||
      n <= 0)
    return 0;
  if (in_range) atomic_store_explicit(&smem_optin[device], n, memory_order_relaxed);
  return n;
}

/* The function, and the dynamic shared memory its blocks may take (aux):
 * the shared-memory variant, the device's opt-in less the kernel's static
 * slots where the device grants it, else the default; registers: none. */
static uk_status kind_loaded(const uk__kernel *kd, uk__spec *e, const struct uk__binary *bin) {
  (void)bin;
  CUfunction f;
  uk_status st = uk__spec_function(kd, e, 0, "", &f);
  if (st != UK_OK) return st;
  const row_key *rk = (const row_key *)e->key;
  e->aux = 0;
  if (rk->g.regs) {
    if (rk->cluster) uk__cluster_loaded(f, e->device);
    return UK_OK;
  }
  int optin = device_optin(e->device), fixed = 0;
  if (uk__cu.cuFuncGetAttribute(&fixed, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f) != CUDA_SUCCESS) fixed = 0;
  int want = optin - fixed;
  e->aux = want > UK_ROW_SMEM_DEFAULT &&
                   uk__cu.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, want) == CUDA_SUCCESS
               ? (size_t)want
               : UK_ROW_SMEM_DEFAULT;
  if (rk->cluster) uk__cluster_loaded(f, e->device);
  return UK_OK;
}

/* An offline call's key: `launch` points at it. */
static uk_status prepare(const uk__kernel *kd, const uk_arg *in, int nin, const uk_array *out, int nout,
                         const void *launch, void *prep_v) {
  (void)kd, (void)in, (void)nin, (void)out, (void)nout;
  prep *pr = prep_v;
  pr->key = *(const row_key *)launch;
  pr->c.device = pr->key.device;
  pr->c.empty = 0;
  pr->c.key = &pr->key;
  return UK_OK;
}

static const uk__kind row_kind = {"a fusion row kernel", sizeof(row_key), kind_emit, kind_describe, kind_compile,
                                  kind_loaded,           prepare,         sizeof(prep),  NULL};

/* ------------------------------------------------------------------------ */
/* The object                                                                */
/* ------------------------------------------------------------------------ */

uk_status uk__row_create(uk_context *ctx, const uk_fuse_plan *p, const char *const *options, int num_options,
                         uk__row_kernel **out) {
  uk_plan args = {0, NULL, 0};
  uk_status st = uk__row_args(p, &args); /* fits CUDA's limit */
  uk__plan_free(&args);
  if (st != UK_OK) return st;
  uk__row_kernel *k = calloc(1, sizeof *k);
  if (!k) return uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
  k->p = p;
  k->nkept = uk__row_kept_sizes(p, k->kept_size);
  if ((st = uk__kernel_init_fixed(&k->base, &row_kind, ctx, "uk_fusion_spec", p->row.name, options, num_options)) !=
      UK_OK) {
    uk__row_destroy(k);
    return st;
  }
  *out = k;
  return UK_OK;
}

void uk__row_destroy(uk__row_kernel *k) {
  if (!k) return;
  uk__kernel_free(&k->base);
  free(k);
}


/* ------------------------------------------------------------------------ */
/* Launching                                                                 */
/* ------------------------------------------------------------------------ */

/* Byte strides of a over the last nd axes of the map shape (right-aligned;
 * 0 where a broadcasts). per_row: a's row axes, then 0. */
static void row_strides(const uk_array *a, int nd, int per_row, int64_t *st) {
  for (int d = 0; d < nd; d++) st[d] = 0;
  if (per_row) {
    for (int d = 0; d < nd - 1 && d < a->ndim; d++) st[d] = a->shape[d] == 1 ? 0 : a->strides[d];
    return;
  }
  for (int d = 0; d < a->ndim; d++) st[nd - a->ndim + d] = a->shape[d] == 1 ? 0 : a->strides[d];
}

/* A scalar input's bytes (a Python scalar in its 8 or 16 bytes, a typed one
 * in its dtype's); the kernel's parameter takes the first of them. */
static void scalar_bytes(const uk_arg *a, unsigned char *v) {
  memset(v, 0, 16);
  switch (a->kind) {
  case UK_ARG_INT: memcpy(v, &a->v.i, 8); break;
  case UK_ARG_FLOAT: memcpy(v, &a->v.f, 8); break;
  case UK_ARG_COMPLEX: memcpy(v, a->v.c, 16); break;
  case UK_ARG_BOOL: v[0] = a->v.b != 0; break;
  default: memcpy(v, a->v.bytes, uk_dtype_size(a->dtype)); break;
  }
}

static void pack(const uk__spec *e, const uk_fuse_row *r, const uk_arg *in, const uk_array *outs, const int64_t *geo,
                 unsigned char *buf) {
  int nd = r->ndim;
  for (int j = 0; j < e->plan.nslots; j++) {
    const uk_slot *s = &e->plan.slots[j];
    int kind = r->param[s->param].kind, k = r->param[s->param].index;
    const uk_array *a = kind == UK_ROW_IN ? in[k].v.array : kind == UK_ROW_OUT ? &outs[k] : NULL;
    switch (s->kind) {
    case UK_ROW_SLOT_PTR: memcpy(buf + s->offset, &a->data, 8); break;
    case UK_ROW_SLOT_STRIDES: {
      int64_t st[UK_MAX_NDIM];
      row_strides(a, nd, kind == UK_ROW_OUT && r->out_per_row[k], st);
      memcpy(buf + s->offset, st, 8 * (size_t)nd);
      break;
    }
    case UK_ROW_SLOT_SCALAR: {
      unsigned char v[16];
      scalar_bytes(&in[k], v);
      memcpy(buf + s->offset, v, s->size);
      break;
    }
    case UK_ROW_SLOT_GEO: memcpy(buf + s->offset, geo, 8 * (size_t)nd + 40); break;
    }
  }
}

/* Elements a vector access of every row array takes: 16 bytes of the
 * widest element where each array's rows are contiguous and start on that
 * many elements (its pointer and every row axis's stride) and n is a
 * multiple; else 1. */
static int row_vec(const uk__row_kernel *k, const uk_arg *in, const uk_array *outs, int64_t n) {
  const uk_fuse_row *r = &k->p->row;
  const uk_array *a[2 * UK_FUSE_MAX_INPUTS];
  int nd = r->ndim, na = 0, v;
  int64_t widest = 0;
  for (int j = 0; j < r->nparams; j++) {
    int kind = r->param[j].kind, x = r->param[j].index;
    if (kind == UK_ROW_IN) a[na++] = in[x].v.array;
    else if (kind == UK_ROW_OUT && !r->out_per_row[x]) a[na++] = &outs[x];
  }
  for (int j = 0; j < na; j++)
    if ((int64_t)uk_dtype_size(a[j]->dtype) > widest) widest = (int64_t)uk_dtype_size(a[j]->dtype);
  if (widest < 1 || widest > 8 || n % (16 / widest)) return 1;
  v = (int)(16 / widest);
  for (int j = 0; j < na; j++) {
    int64_t st[UK_MAX_NDIM], size = (int64_t)uk_dtype_size(a[j]->dtype), al = size * v;
    row_strides(a[j], nd, 0, st);
    if (st[nd - 1] != size || a[j]->data % (uint64_t)al) return 1;
    for (int d = 0; d < nd - 1; d++)
      if (st[d] % al) return 1;
  }
  return v;
}

/* 1 when every row array's rows follow one another in memory (a warp's
 * rows are one chunk: the staged variant, uk__row_staged). */
static int row_contig(const uk__row_kernel *k, const uk_arg *in, const uk_array *outs, const int64_t *ms) {
  const uk_fuse_row *r = &k->p->row;
  int nd = r->ndim;
  for (int j = 0; j < r->nparams; j++) {
    int kind = r->param[j].kind, x = r->param[j].index;
    const uk_array *a;
    if (kind == UK_ROW_IN) a = in[x].v.array;
    else if (kind == UK_ROW_OUT && !r->out_per_row[x]) a = &outs[x];
    else continue;
    int64_t st[UK_MAX_NDIM], size = (int64_t)uk_dtype_size(a->dtype), want;
    row_strides(a, nd, 0, st);
    if (st[nd - 1] != size) return 0;
    want = size * ms[nd - 1];
    for (int d = nd - 2; d >= 0; d--) {
      if (ms[d] > 1 && st[d] != want) return 0;
      want *= ms[d];
    }
  }
  return 1;
}

/* The call's rows as the sizing sees them (smem: the budget). */
static void row_shape(const uk__row_kernel *k, const uk_arg *in, const uk_array *outs, const int64_t *ms, int device,
                      int64_t smem, uk_row_shape *s) {
  int nd = k->p->row.ndim;
  s->rows = 1;
  for (int d = 0; d < nd - 1; d++) s->rows *= ms[d];
  s->n = ms[nd - 1];
  s->nkept = k->nkept;
  s->kept_size = k->kept_size;
  s->reg_bytes = k->p->row.reg_bytes;
  s->vec = row_vec(k, in, outs, s->n);
  s->sm_count = uk__device_sm_count(device);
  s->smem = smem;
  s->cluster_max = uk__cluster_max(device);
  s->contig = row_contig(k, in, outs, ms);
  s->levels = k->p->row.levels;
  s->single = k->p->row.single;
}

/* Before the function is loaded, the cluster variant's choice assumes the
 * device's opt-in less a few KiB of static slots (the call sizes again
 * with the function's real budget). */
static int64_t budget_guess(int device, int cluster_max) {
  int optin = cluster_max > 1 ? device_optin(device) : 0;
  return optin > UK_ROW_SMEM_DEFAULT + 4096 ? optin - 4096 : 0;
}

/* The key of the variant that g runs (rows of s). */
static void key_of(row_key *key, int device, const uk_row_shape *s, const uk_row_grid *g) {
  memset(key, 0, sizeof *key); /* padding too: the key is compared as bytes */
  key->device = device;
  key->cluster = g->cluster > 1;
  key->g.mode = g->mode == UK_ROW_REGS ? UK_ROW_REGS : UK_ROW_SHARED; /* one variant for shared and re-read */
  key->g.regs = g->regs;
  key->g.vec = g->vec;
  key->g.threads = key->cluster && !g->regs ? 0 : g->threads; /* shared clusters: the launch's */
  key->g.staged = g->staged;
  key->g.try_div = g->try_div;
  if (g->mode == UK_ROW_REGS && g->cluster < 2 && (int64_t)g->threads * g->regs * g->vec == s->n) key->n = s->n;
}

/* The variant of a call (its key) and its geometry before the budget. */
static void row_key_of(const uk__row_kernel *k, const uk_arg *in, const uk_array *outs, const int64_t *ms, int device,
                       row_key *key, uk_row_shape *s, uk_row_grid *g) {
  row_shape(k, in, outs, ms, device, 0, s);
  s->smem = budget_guess(device, s->cluster_max); /* the key's fields do not depend on it otherwise */
  uk__row_size(s, g);
  key_of(key, device, s, g);
}

void uk__row_describe(const uk__row_kernel *k, const uk_arg *in, const uk_array *outs, const int64_t *ms, int device,
                      char *buf, size_t size) {
  row_key key;
  uk_row_shape s;
  uk_row_grid g;
  row_key_of(k, in, outs, ms, device, &key, &s, &g);
  if (g.regs && g.cluster > 1)
    snprintf(buf, size, "rows over clusters of %d blocks (each holds its slice of %lld elements in registers), "
             "%d threads a block, %d x %d element%s a thread, %lld blocks",
             g.cluster, (long long)g.kept, g.threads, g.regs, g.vec, g.regs * g.vec > 1 ? "s" : "", (long long)g.blocks);
  else if (g.regs)
    snprintf(buf, size, "rows in registers, %d thread%s a row, %d x %d element%s a thread, %d row%s a block, %lld blocks%s",
             g.threads, g.threads > 1 ? "s" : "", g.regs, g.vec, g.regs * g.vec > 1 ? "s" : "", g.rows_per_block,
             g.rows_per_block > 1 ? "s" : "", (long long)g.blocks, g.staged ? ", staged through shared memory" : "");
  else if (g.cluster > 1)
    snprintf(buf, size, "rows over clusters of %d blocks (each keeps its slice of %lld elements in shared memory), "
             "%d threads a block, %d element%s an access, %lld blocks",
             g.cluster, (long long)g.kept, g.threads, g.vec, g.vec > 1 ? "s" : "", (long long)g.blocks);
  else /* read once where the budget (known on sm_90+: the opt-in less 4 KiB) holds a row */
    snprintf(buf, size, "rows in shared memory%s, %d threads a row, %d element%s an access, %lld blocks",
             s.smem > 0 && g.kept >= s.n ? " (read once)" : " (the rest re-read)", g.threads, g.vec,
             g.vec > 1 ? "s" : "", (long long)g.blocks);
}

int uk__row_lone_usable(const uk__row_kernel *k, const uk_arg *in, const uk_array *outs, const int64_t *ms,
                        int device) {
  row_key key;
  uk_row_shape s;
  uk_row_grid g;
  row_key_of(k, in, outs, ms, device, &key, &s, &g);
  return uk__row_lone_light(&s, &g);
}

uk_status uk__row_offline(uk__row_kernel *k, const uk_arg *in, const uk_array *outs, const int64_t *ms, int device,
                          uk__offline what, void *result) {
  row_key key;
  uk_row_shape s;
  uk_row_grid g;
  row_key_of(k, in, outs, ms, device, &key, &s, &g);
  return uk__kernel_offline("uk_fusion", &k->base, NULL, 0, NULL, 0, &key, what, result);
}

/* Sizes the call's rows with spec e's budget and launches its variant
 * (key); *retry when a cluster launch failed or the cluster variant's
 * budget did not hold a row after all: the caller runs the plain one. */
static uk_status launch(uk__row_kernel *k, const uk_arg *in, const uk_array *outs, const int64_t *ms,
                        const uk__frame *f, const row_key *key, const uk__spec *e, uk_row_shape *rs, uk_row_grid *g,
                        int *retry) {
  const uk_fuse_row *r = &k->p->row;
  int nd = r->ndim;
  *retry = 0;
  if (!g->regs) { /* the shared variants: as much of the row as its budget holds */
    rs->smem = (int64_t)e->aux;
    if (!key->cluster) rs->cluster_max = 0;
    uk__row_size(rs, g);
    if (key->cluster && g->cluster < 2) return *retry = 1, UK_OK;
  }
  /* _uk_geo<nd>: lead[nd] (the row axes, then 1), nrows, n, nc, rowbytes, T */
  int64_t geo[UK_MAX_NDIM + 5];
  for (int d = 0; d < nd; d++) geo[d] = d < nd - 1 ? ms[d] : 1;
  geo[nd] = rs->rows;
  geo[nd + 1] = rs->n;
  geo[nd + 2] = g->kept;
  geo[nd + 3] = g->rowbytes;
  geo[nd + 4] = 0;
  memcpy(&geo[nd + 4], &g->threads, sizeof g->threads);
  _Alignas(16) unsigned char buf[UK__PARAM_BYTES_MAX];
  pack(e, r, in, outs, geo, buf);
  CUfunction fn = atomic_load_explicit(&e->fn[0], memory_order_relaxed);
  if (key->cluster) {
    if (uk__cluster_launch(f, fn, g->blocks, g->block, g->cluster, 1, (unsigned)g->shared, buf, e->plan.bytes) ==
        CUDA_SUCCESS)
      return UK_OK;
    uk__cluster_failed(f->device, g->cluster, 1);
    return *retry = 1, UK_OK;
  }
  return uk__frame_launch(f, fn, g->blocks, 1, g->block, (unsigned)g->shared, buf, e->plan.bytes);
}

uk_status uk__row_call(uk__row_kernel *k, const uk_arg *in, const uk_array *outs, const int64_t *ms, int device,
                       void *stream) {
  uk__frame f;
  uk__spec *e = NULL;
  row_key key;
  uk_row_shape rs;
  uk_row_grid g;
  int retry = 0;
  uk_status st = uk__frame_enter(&f, &k->base, device, stream);
  if (st == UK_OK) {
    row_key_of(k, in, outs, ms, f.device, &key, &rs, &g);
    st = uk__kernel_specialise(&k->base, &key, f.device, &e);
  }
  if (st == UK_OK) st = launch(k, in, outs, ms, &f, &key, e, &rs, &g, &retry);
  if (st == UK_OK && retry) { /* the cluster variant could not run: the plain one */
    rs.cluster_max = 0;
    rs.smem = 0;
    uk__row_size(&rs, &g);
    key_of(&key, f.device, &rs, &g);
    if ((st = uk__kernel_specialise(&k->base, &key, f.device, &e)) == UK_OK)
      st = launch(k, in, outs, ms, &f, &key, e, &rs, &g, &retry);
  }
  return uk__frame_leave(&f, NULL, st, NULL, 0);
}
