/* ReductionKernel: definition, per-call specialisation, launch.
 *
 * A call binds placeholders, broadcasts the inputs, normalises the axes,
 * splits the loop into kept and reduced parts (each merged) and forms a
 * uk_red_key. One program per key holds every strategy (red_emit.h); the
 * strategy and geometry are chosen per call from the merged shapes
 * (red_plan.h). Compiled programs sit in a per-kernel list, lock-free to
 * read, appended under the kernel's mutex, as in elementwise.c.
 *
 * The device code combines with warp shuffles of its own
 * (templates/ukern/reduction.cuh) and includes no CUB or libcu++ header, so
 * a program costs NVRTC about what an elementwise one does (docs/PERF.md).
 *
 * Split launches combine their partials in the last block of each column
 * (red_plan.h): the partials and counters live in a scratch buffer per
 * stream, kept by the kernel object and grown on demand, so a call
 * allocates nothing and launches once. Counters are zeroed when allocated
 * and reset by the kernels. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "codegen/bind.h"
#include "codegen/defcheck.h"
#include "codegen/dtype.h"
#include "codegen/params.h"
#include "codegen/red_emit.h"
#include "codegen/red_plan.h"
#include "codegen/scalar.h"
#include "codegen/shape.h"
#include "runtime/context.h"
#include "runtime/device.h"
#include "runtime/kernel_common.h"

typedef struct red_entry {
  struct red_entry *next;
  uk_red_key key;
  uk_red_plan plan;
  CUmodule module;
  _Atomic(CUfunction) fn[UK_RED_NKERNELS]; /* looked up on first use */
  size_t partial_size;                     /* bytes of one split partial */
} red_entry;

/* Split scratch of one stream: counters (zero between launches) and partials. */
#define RED_SCRATCH_STREAMS 8
typedef struct red_scratch {
  int used, device;
  void *stream;
  uint64_t count, partial;
  int64_t ncount, partial_bytes;
} red_scratch;

struct uk_reduction {
  uk_context *ctx;
  char *name, *map_expr, *reduce_expr, *post_map_expr, *identity, *reduce_type, *preamble;
  char **options;
  int num_options;
  uk_paramlist in, out;
  uk_red_kernel k;
  pthread_mutex_t lock;
  _Atomic(red_entry *) entries;
  pthread_mutex_t scratch_lock;
  red_scratch scratch[RED_SCRATCH_STREAMS];
};

/* Everything a call decides before touching the device. */
typedef struct prep {
  uk_binding b;
  uk_red_key key;
  uk_red_loops loops;
  int out_ndim;
  int64_t out_shape[UK_MAX_NDIM];
  const uk_array *arr[UK_MAX_PARAMS];
  uk_array outs[UK_MAX_PARAMS];
  unsigned char scalar[UK_MAX_PARAMS][16];
  int64_t itemsize[UK_MAX_NDIM]; /* per loop input */
  int aligned;                   /* every loop input's base is 16-byte aligned */
  int device;
} prep;

void uk_reduction_destroy(uk_reduction *k) {
  if (!k) return;
  for (int j = 0; j < RED_SCRATCH_STREAMS; j++) {
    red_scratch *sc = &k->scratch[j];
    int pushed = 0;
    if (!sc->used || uk__device_enter(sc->device, &pushed) != UK_OK) continue;
    /* The stream may be gone: free in the default stream's order. */
    uk__context_free(k->ctx, sc->count, NULL);
    uk__context_free(k->ctx, sc->partial, NULL);
    uk__device_leave(pushed);
  }
  red_entry *e = atomic_load(&k->entries);
  while (e) {
    red_entry *next = e->next;
    if (e->module) {
      int pushed = 0;
      if (uk__device_enter(e->key.device, &pushed) == UK_OK) {
        uk__cu.cuModuleUnload(e->module);
        uk__device_leave(pushed);
      }
    }
    uk__red_plan_free(&e->plan);
    free(e);
    e = next;
  }
  uk__params_free(&k->in);
  uk__params_free(&k->out);
  for (int j = 0; j < k->num_options; j++) free(k->options[j]);
  free(k->options);
  free(k->name);
  free(k->map_expr);
  free(k->reduce_expr);
  free(k->post_map_expr);
  free(k->identity);
  free(k->reduce_type);
  free(k->preamble);
  pthread_mutex_destroy(&k->lock);
  pthread_mutex_destroy(&k->scratch_lock);
  uk__context_release(k->ctx);
  free(k);
}

uk_status uk_reduction_create(uk_context *ctx, const uk_reduction_spec *spec, uk_reduction **out) {
  uk__error_clear();
  if (!ctx || !spec || !out) return uk__errorf(UK_ERR_INVALID, "uk_reduction_create: NULL argument");
  const char *missing = !spec->in_params       ? "in_params"
                        : !spec->out_params    ? "out_params"
                        : !spec->map_expr      ? "map_expr"
                        : !spec->reduce_expr   ? "reduce_expr"
                        : !spec->post_map_expr ? "post_map_expr"
                        : !spec->name          ? "name"
                                               : NULL;
  if (missing) return uk__errorf(UK_ERR_INVALID, "uk_reduction_spec: %s is NULL", missing);
  if (spec->num_options < 0 || (spec->num_options > 0 && !spec->options))
    return uk__errorf(UK_ERR_INVALID, "uk_reduction_spec: num_options is %d but options is %s", spec->num_options,
                      spec->options ? "set" : "NULL");
  uk_status st;
  uk_reduction *k = calloc(1, sizeof *k);
  if (!k) return uk__errorf(UK_ERR_NOMEM, "out of memory creating a reduction");
  k->ctx = ctx;
  uk__context_retain(ctx);
  pthread_mutex_init(&k->lock, NULL);
  pthread_mutex_init(&k->scratch_lock, NULL);
  atomic_init(&k->entries, NULL);
  if ((st = uk__params_parse(spec->in_params, "in_params", &k->in)) != UK_OK ||
      (st = uk__params_parse(spec->out_params, "out_params", &k->out)) != UK_OK ||
      (st = uk__params_check_kernel(spec->in_params, &k->in, spec->out_params, &k->out, spec->name)) != UK_OK ||
      (st = uk__defcheck_fields("map_expr", spec->map_expr, "reduce_expr", spec->reduce_expr, "post_map_expr",
                                spec->post_map_expr, "identity", spec->identity, "reduce_type",
                                spec->reduce_type, (const char *)NULL)) != UK_OK)
    goto out;
  if (k->in.count + k->out.count > UK_MAX_PARAMS) {
    st = uk__errorf(UK_ERR_INVALID, "%s: too many parameters (%d, at most %d)", spec->name,
                    k->in.count + k->out.count, UK_MAX_PARAMS);
    goto out;
  }
  if (k->out.count == 0) {
    st = uk__errorf(UK_ERR_INVALID, "%s: a reduction needs at least one output", spec->name);
    goto out;
  }
  for (int j = 0; j < k->out.count; j++)
    if (k->out.items[j].is_raw) {
      st = uk__error_at(UK_ERR_SYNTAX, "out_params", spec->out_params, k->out.items[j].pos, NULL,
                        "reduction outputs cannot be raw");
      goto out;
    }
  int failed = 0;
  k->name = uk__strdup_opt(spec->name, &failed);
  k->map_expr = uk__strdup_opt(spec->map_expr, &failed);
  k->reduce_expr = uk__strdup_opt(spec->reduce_expr, &failed);
  k->post_map_expr = uk__strdup_opt(spec->post_map_expr, &failed);
  k->identity = uk__strdup_opt(spec->identity, &failed);
  k->preamble = uk__strdup_opt(spec->preamble, &failed);
  if (spec->reduce_type && *spec->reduce_type) {
    k->reduce_type = uk__strdup_opt(spec->reduce_type, &failed);
  } else {
    const uk_param *o = &k->out.items[0];
    char letter[2] = {o->placeholder, 0};
    k->reduce_type = uk__strdup_opt(o->is_placeholder ? letter : uk__dtype_info(o->dtype)->ctype, &failed);
  }
  if (spec->num_options > 0 && !failed) {
    k->options = calloc((size_t)spec->num_options, sizeof *k->options);
    if (!k->options) failed = 1;
    for (int j = 0; j < spec->num_options && !failed; j++) {
      if (!spec->options[j]) {
        st = uk__errorf(UK_ERR_INVALID, "uk_reduction_spec: options[%d] is NULL", j);
        goto out;
      }
      k->options[j] = uk__strdup_opt(spec->options[j], &failed);
      k->num_options = j + 1;
    }
  }
  if (failed) {
    st = uk__errorf(UK_ERR_NOMEM, "out of memory creating a reduction");
    goto out;
  }
  k->k = (uk_red_kernel){k->name, k->map_expr, k->reduce_expr, k->post_map_expr, k->identity, k->reduce_type,
                         k->preamble, &k->in, &k->out, 0, 0, 0, 0};
  uk__red_scan(&k->k);
  *out = k;
  return UK_OK;
out:
  uk_reduction_destroy(k);
  return st;
}

/* ------------------------------------------------------------------------ */
/* Preparing a call (no device work)                                         */
/* ------------------------------------------------------------------------ */

static const uk_param *param_at(const uk_reduction *k, int p) {
  return p < k->in.count ? &k->in.items[p] : &k->out.items[p - k->in.count];
}

static uk_status prepare(const uk_reduction *k, const uk_arg *in, int nin, const uk_array *out, int nout,
                         const uk_reduce_launch *l, prep *pr) {
  const char *name = k->name;
  uk_status st = uk__bind(name, &k->in, &k->out, in, nin, out, nout, &pr->b);
  if (st != UK_OK) return st;
  int np = nin + nout, given = pr->b.outputs_given;
  int dev_param = -1, nviews = 0, raw_param = -1;
  pr->device = -1;
  uk_operand_view views[UK_MAX_NDIM];
  for (int p = 0; p < np; p++) {
    const uk_array *a = p < nin ? (pr->b.is_array[p] ? in[p].v.array : NULL) : (given ? &out[p - nin] : NULL);
    pr->arr[p] = a;
    if (!a) continue;
    if (dev_param < 0) {
      dev_param = p;
      pr->device = a->device;
    } else if (a->device != pr->device) {
      return uk__errorf(UK_ERR_INVALID, "%s: '%s' is on device %d but '%s' is on device %d", name,
                        param_at(k, dev_param)->name, pr->device, param_at(k, p)->name, a->device);
    }
    if (p >= nin) continue;
    if (param_at(k, p)->is_raw) {
      if (raw_param < 0) raw_param = p;
      continue;
    }
    if (nviews == UK_MAX_NDIM)
      return uk__errorf(UK_ERR_INVALID, "%s: more than %d non-raw array inputs", name, UK_MAX_NDIM);
    int v = nviews++;
    pr->itemsize[v] = (int64_t)uk_dtype_size(a->dtype);
    views[v] = (uk_operand_view){param_at(k, p)->name, a->ndim, a->shape, a->strides, pr->itemsize[v]};
  }
  if (nviews == 0)
    return uk__errorf(UK_ERR_SHAPE, "%s: a reduction needs at least one non-raw array input (its shape is the "
                      "shape reduced)", name);
  uk_loop L;
  if ((st = uk__shape_broadcast(nviews, views, &L)) != UK_OK) {
    uk__error_prefix("%s", name);
    return st;
  }
  uint8_t reduced[UK_MAX_NDIM];
  if ((st = uk__red_axes(name, L.ndim, l, reduced)) != UK_OK) return st;
  if (raw_param >= 0) {
    int lead = 1, seen_kept = 0;
    for (int d = 0; d < L.ndim; d++) {
      if (!reduced[d]) seen_kept = 1;
      else if (seen_kept) lead = 0;
    }
    if (!lead)
      return uk__errorf(UK_ERR_SHAPE,
                        "%s: raw input '%s' needs the reduced axes to be the leading ones (axes 0..m-1 of the "
                        "input), so that _J numbers them",
                        name, param_at(k, raw_param)->name);
  }
  int keepdims = l && l->keepdims;
  uk__red_result_shape(L.ndim, L.shape, reduced, keepdims, &pr->out_ndim, pr->out_shape);

  int64_t ostrides[UK_MAX_PARAMS][UK_MAX_NDIM];
  for (int j = 0; j < nout; j++) {
    uk_array *o = &pr->outs[j];
    if (given) {
      *o = out[j];
      int same = o->ndim == pr->out_ndim;
      for (int d = 0; same && d < o->ndim; d++) same = o->shape[d] == pr->out_shape[d];
      if (!same) {
        char a[200], b[200];
        return uk__errorf(UK_ERR_SHAPE, "%s: output '%s' has shape %s but the result shape is %s", name,
                          param_at(k, nin + j)->name, uk__shape_str(o->ndim, o->shape, a, sizeof a),
                          uk__shape_str(pr->out_ndim, pr->out_shape, b, sizeof b));
      }
    } else {
      memset(o, 0, sizeof *o);
      o->dtype = pr->b.dtype[nin + j];
      o->ndim = pr->out_ndim;
      int64_t s = (int64_t)uk_dtype_size(o->dtype);
      for (int d = o->ndim - 1; d >= 0; d--) {
        o->shape[d] = pr->out_shape[d];
        o->strides[d] = s;
        s *= o->shape[d] > 0 ? o->shape[d] : 1;
      }
      pr->arr[nin + j] = o;
    }
    memcpy(ostrides[j], o->strides, sizeof ostrides[j]);
  }
  uk__red_split(&L, reduced, keepdims, nout, (const int64_t(*)[UK_MAX_NDIM])ostrides, &pr->loops);
  if (pr->loops.nred == 0 && pr->loops.nout > 0 && !k->identity)
    return uk__errorf(UK_ERR_SHAPE, "%s: zero-size reduction with no identity", name);

  uk_red_key *key = &pr->key;
  memset(key, 0, sizeof *key);
  pr->aligned = 1;
  for (int p = 0; p < np; p++) {
    key->dtype[p] = (uint8_t)pr->b.dtype[p];
    const uk_param *prm = param_at(k, p);
    if (!pr->arr[p]) {
      key->scalar_mask |= 1ull << p;
      if ((k->k.raw_view_mask >> p) & 1)
        return uk__errorf(UK_ERR_INVALID, "%s: map_expr uses '_raw_%s' but input '%s' is a scalar, not an array",
                          name, prm->name, prm->name);
      if ((st = uk__scalar_convert(&in[p], pr->b.dtype[p], prm->name, pr->scalar[p])) != UK_OK) return st;
      continue;
    }
    if (p < nin && (prm->is_raw || ((k->k.raw_view_mask >> p) & 1))) {
      key->raw_ndim[p] = (uint8_t)pr->arr[p]->ndim;
      if (uk__array_c_contiguous(pr->arr[p])) key->raw_contig_mask |= 1ull << p;
    }
    if (p < nin && !prm->is_raw && pr->arr[p]->data % 16) pr->aligned = 0;
  }
  key->nd_k = (uint8_t)pr->loops.kept.ndim;
  key->nd_r = (uint8_t)pr->loops.red.ndim;
  key->index64 = (uint8_t)pr->loops.index64;
  return UK_OK;
}

/* ------------------------------------------------------------------------ */
/* Compiling a specialisation                                                */
/* ------------------------------------------------------------------------ */

static uk_status emit(const uk_reduction *k, const uk_red_key *key, uk_strbuf *src, uk_red_plan *plan) {
  uk_status st = uk__red_emit(&k->k, key, src, plan);
  if (st == UK_OK && src->failed) {
    uk__red_plan_free(plan);
    st = uk__errorf(UK_ERR_NOMEM, "out of memory generating '%s'", k->name);
  }
  return st;
}

static void describe(const uk_reduction *k, const uk_red_key *key, char *buf, size_t size) {
  int n = snprintf(buf, size, "compiling reduction '%s' (", k->name);
  int np = k->in.count + k->out.count;
  for (int p = 0; p < np && n > 0 && (size_t)n < size; p++)
    n += snprintf(buf + n, size - (size_t)n, "%s%s", p ? ", " : "", uk_dtype_name((uk_dtype)key->dtype[p]));
  if (n > 0 && (size_t)n < size)
    snprintf(buf + n, size - (size_t)n, "; kept ndim %d, reduced ndim %d)", key->nd_k, key->nd_r);
}

/* Generates and compiles (through the memory and disk caches) the program of
 * one key: what a call compiles, and what uk_reduction_precompile stores. */
static uk_status compile_key(uk_reduction *k, const uk_red_key *key, uk_red_plan *plan, uk__binary **bin) {
  uk_strbuf src;
  uk__sb_init(&src);
  int arch = 0;
  char what[512];
  describe(k, key, what, sizeof what);
  uk_status st;
  if ((st = emit(k, key, &src, plan)) != UK_OK || (st = uk__context_arch(k->ctx, key->device, &arch)) != UK_OK)
    goto out;
  uk__compile_req req;
  memset(&req, 0, sizeof req);
  req.source = uk__sb_str(&src);
  req.name = k->name;
  req.options = (const char *const *)k->options;
  req.num_options = k->num_options;
  req.arch = arch;
  req.what = what;
  st = uk__context_compile(k->ctx, &req, bin);
  if (st != UK_OK) uk__red_plan_free(plan);
out:
  uk__sb_release(&src);
  return st;
}

static uk_status specialise(uk_reduction *k, const uk_red_key *key, red_entry **out) {
  for (red_entry *e = atomic_load_explicit(&k->entries, memory_order_acquire); e; e = e->next)
    if (memcmp(&e->key, key, sizeof *key) == 0) {
      *out = e;
      return UK_OK;
    }
  pthread_mutex_lock(&k->lock);
  uk_status st = UK_OK;
  uk__binary *bin = NULL;
  red_entry *e;
  for (e = atomic_load_explicit(&k->entries, memory_order_acquire); e; e = e->next)
    if (memcmp(&e->key, key, sizeof *key) == 0) goto out;
  if (!(e = calloc(1, sizeof *e))) {
    st = uk__errorf(UK_ERR_NOMEM, "out of memory compiling '%s'", k->name);
    goto out;
  }
  e->key = *key;
  if ((st = compile_key(k, key, &e->plan, &bin)) != UK_OK) goto fail;
  if ((st = uk__cu_check(uk__cu_module_load(&e->module, bin->image), "cuModuleLoadData")) != UK_OK) goto fail;
  /* The symbol's size is the partial's: no copy, no synchronisation. */
  CUdeviceptr g = 0;
  size_t gbytes = 0;
  if ((st = uk__cu_check(uk__cu_module_global(&g, &gbytes, e->module, "_uk_partial_size"),
                         "cuModuleGetGlobal")) != UK_OK)
    goto fail;
  e->partial_size = gbytes;
  e->next = atomic_load_explicit(&k->entries, memory_order_relaxed);
  atomic_store_explicit(&k->entries, e, memory_order_release);
  goto out;
fail:
  if (e->module) uk__cu.cuModuleUnload(e->module);
  uk__red_plan_free(&e->plan);
  free(e);
  e = NULL;
out:
  pthread_mutex_unlock(&k->lock);
  uk__binary_release(bin);
  if (st == UK_OK) *out = e;
  return st;
}

uk_status uk_reduction_precompile(uk_reduction *k, const uk_arg *in, int nin, uk_array *out, int nout,
                                  const uk_reduce_launch *launch) {
  uk__error_clear();
  if (!k) return uk__errorf(UK_ERR_INVALID, "uk_reduction_precompile: k is NULL");
  prep *pr = malloc(sizeof *pr);
  if (!pr) return uk__errorf(UK_ERR_NOMEM, "out of memory");
  uk_red_plan plan = {0, NULL, 0};
  uk__binary *bin = NULL;
  uk_status st = prepare(k, in, nin, out, nout, launch, pr);
  if (st == UK_OK && pr->loops.nout > 0) {
    pr->key.device = pr->device >= 0 ? pr->device : k->ctx->opts.device; /* where a call would run */
    st = compile_key(k, &pr->key, &plan, &bin);
  }
  uk__binary_release(bin);
  uk__red_plan_free(&plan);
  free(pr);
  return st;
}

uk_status uk_reduction_source(uk_reduction *k, const uk_arg *in, int nin, uk_array *out, int nout,
                              const uk_reduce_launch *launch, char **source) {
  uk__error_clear();
  if (!k || !source) return uk__errorf(UK_ERR_INVALID, "uk_reduction_source: NULL argument");
  prep *pr = malloc(sizeof *pr);
  if (!pr) return uk__errorf(UK_ERR_NOMEM, "out of memory");
  uk_strbuf src;
  uk__sb_init(&src);
  uk_red_plan plan = {0, NULL, 0};
  uk_status st = prepare(k, in, nin, out, nout, launch, pr);
  if (st == UK_OK && (st = emit(k, &pr->key, &src, &plan)) == UK_OK) *source = uk__sb_detach(&src);
  uk__red_plan_free(&plan);
  uk__sb_release(&src);
  free(pr);
  return st;
}

/* ------------------------------------------------------------------------ */
/* Launching                                                                 */
/* ------------------------------------------------------------------------ */

static void pack(const red_entry *e, const prep *pr, const uk_red_strategy *s, const uint64_t *ptr,
                 uint64_t partial, uint64_t count, unsigned char *buf) {
  const uk_red_loops *R = &pr->loops;
  for (int j = 0; j < e->plan.nslots; j++) {
    const uk_red_slot *sl = &e->plan.slots[j];
    int64_t v = 0;
    switch ((uk_red_slot_kind)sl->kind) {
    case UK_RED_SLOT_PTR: memcpy(buf + sl->offset, &ptr[sl->param], 8); continue;
    case UK_RED_SLOT_SCALAR: memcpy(buf + sl->offset, pr->scalar[sl->param], sl->size); continue;
    case UK_RED_SLOT_RAW_SHAPE: v = pr->arr[sl->param]->shape[sl->dim]; break;
    case UK_RED_SLOT_RAW_STRIDE: v = pr->arr[sl->param]->strides[sl->dim]; break;
    case UK_RED_SLOT_KSTRIDE: v = R->kept.strides[sl->op][sl->dim]; break;
    case UK_RED_SLOT_RSTRIDE: v = R->red.strides[sl->op][sl->dim]; break;
    case UK_RED_SLOT_KSHAPE: v = R->kept.shape[sl->dim]; break;
    case UK_RED_SLOT_RSHAPE: v = R->red.shape[sl->dim]; break;
    case UK_RED_SLOT_NOUT: v = R->nout; break;
    case UK_RED_SLOT_NRED: v = R->nred; break;
    case UK_RED_SLOT_CHUNK: v = s->chunk; break;
    case UK_RED_SLOT_NSPLIT: v = s->nsplit; break;
    case UK_RED_SLOT_INSIZE: v = R->nout * R->nred; break;
    case UK_RED_SLOT_VEC: v = s->vec; break;
    case UK_RED_SLOT_BY: v = uk__red_threads_per_output(s); break;
    case UK_RED_SLOT_PARTIAL: memcpy(buf + sl->offset, &partial, 8); continue;
    case UK_RED_SLOT_COUNT: memcpy(buf + sl->offset, &count, 8); continue;
    }
    memcpy(buf + sl->offset, &v, 8);
  }
}

static uk_status launch_one(CUfunction f, int64_t gx, int64_t gy, void *stream, unsigned char *buf, size_t bytes) {
  void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &bytes, CU_LAUNCH_PARAM_END};
  return uk__cu_check(uk__cu.cuLaunchKernel(f, (unsigned)gx, (unsigned)gy, 1, UK_RED_BLOCK, 1, 1, 0,
                                            (CUstream)stream, NULL, extra),
                      "cuLaunchKernel");
}

/* The function of strategy `id`, looked up on first use (a module holds
 * every strategy; most specialisations launch one or two). */
static uk_status function(const uk_reduction *k, red_entry *e, int id, CUfunction *out) {
  CUfunction f = atomic_load_explicit(&e->fn[id], memory_order_acquire);
  if (!f) {
    char fname[300];
    snprintf(fname, sizeof fname, "%s%s", k->name, uk__red_kernel_suffix(id));
    uk_status st = uk__cu_check(uk__cu_module_function(&f, e->module, fname), "cuModuleGetFunction");
    if (st != UK_OK) return st;
    atomic_store_explicit(&e->fn[id], f, memory_order_release);
  }
  *out = f;
  return UK_OK;
}

/* Counters and partials for a split launch on `stream`: the stream's
 * scratch, grown when short; with every slot taken by other streams, new
 * buffers for this call alone (*temp set: free them after the launch). */
static uk_status scratch(uk_reduction *k, int device, void *stream, int64_t ncount, int64_t pbytes, uint64_t *count,
                         uint64_t *partial, int *temp) {
  uk_status st = UK_OK;
  pthread_mutex_lock(&k->scratch_lock);
  red_scratch *sc = NULL, tmp;
  /* Under capture: this call's own buffers, allocated and freed in the graph
   * (kept scratch would be graph memory used outside it, or freed by it). */
  int keep = !uk__cu_stream_capturing(stream);
  for (int j = 0; j < RED_SCRATCH_STREAMS && !sc && keep; j++)
    if (k->scratch[j].used && k->scratch[j].stream == stream && k->scratch[j].device == device) sc = &k->scratch[j];
  for (int j = 0; j < RED_SCRATCH_STREAMS && !sc && keep; j++)
    if (!k->scratch[j].used) {
      sc = &k->scratch[j];
      memset(sc, 0, sizeof *sc);
      sc->used = 1;
      sc->device = device;
      sc->stream = stream;
    }
  *temp = !sc;
  if (!sc) {
    memset(&tmp, 0, sizeof tmp);
    sc = &tmp;
  }
  if (sc->ncount < ncount) {
    /* Stream order: earlier launches on this stream are done with it. */
    uk__context_free(k->ctx, sc->count, stream);
    sc->count = 0;
    sc->ncount = 0;
    int64_t n = ncount < 1024 ? 1024 : ncount;
    if ((st = uk__context_alloc(k->ctx, (size_t)n * 4, stream, &sc->count)) != UK_OK ||
        (st = uk__cu_check(uk__cu.cuMemsetD32Async(sc->count, 0, (size_t)n, (CUstream)stream),
                           "cuMemsetD32Async")) != UK_OK)
      goto out;
    sc->ncount = n;
  }
  if (sc->partial_bytes < pbytes) {
    uk__context_free(k->ctx, sc->partial, stream);
    sc->partial = 0;
    sc->partial_bytes = 0;
    int64_t n = pbytes < 65536 ? 65536 : pbytes;
    if ((st = uk__context_alloc(k->ctx, (size_t)n, stream, &sc->partial)) != UK_OK) goto out;
    sc->partial_bytes = n;
  }
  *count = sc->count;
  *partial = sc->partial;
out:
  if (st != UK_OK && *temp) {
    uk__context_free(k->ctx, sc->count, stream);
    uk__context_free(k->ctx, sc->partial, stream);
  }
  pthread_mutex_unlock(&k->scratch_lock);
  return st;
}

uk_status uk_reduction_call(uk_reduction *k, const uk_arg *in, int nin, uk_array *out, int nout,
                            const uk_reduce_launch *launch) {
  uk__error_clear();
  if (!k) return uk__errorf(UK_ERR_INVALID, "uk_reduction_call: kernel is NULL");
  void *stream = launch ? launch->stream : NULL;
  prep pr;
  uk_status st = prepare(k, in, nin, out, nout, launch, &pr);
  if (st != UK_OK) return st;
  int device = 0, pushed = 0, nalloc = 0, ntemps = 0, temp_scratch = 0;
  uint64_t partial = 0, count = 0, temps[UK_MAX_PARAMS], ptr[UK_MAX_PARAMS];
  if ((st = uk__launch_enter(k->ctx, stream, &device, &pushed)) != UK_OK) return st;
  if (pr.device >= 0 && pr.device != device) {
    st = uk__errorf(UK_ERR_INVALID, "%s: the arrays are on device %d but the launch runs on device %d", k->name,
                    pr.device, device);
    goto out;
  }
  red_entry *e = NULL;
  const uk_red_loops *R = &pr.loops;
  if (R->nout > 0) {
    pr.key.device = device;
    if ((st = specialise(k, &pr.key, &e)) != UK_OK) goto out;
  }
  if (!pr.b.outputs_given) {
    for (int j = 0; j < nout; j++, nalloc++) {
      uk_array *o = &pr.outs[j];
      o->device = device;
      size_t bytes = (size_t)R->nout * uk_dtype_size(o->dtype);
      if (bytes && (st = uk__context_alloc(k->ctx, bytes, stream, &o->data)) != UK_OK) goto out;
    }
  }
  if (!e) goto out; /* no output elements: nothing to run */
  uk_red_strategy s;
  uk__red_choose(R, pr.itemsize, pr.aligned, uk__red_key_vec(&k->k, &pr.key), uk__device_sm_count(device), &s);
  if (s.grid_x > INT32_MAX) {
    st = uk__errorf(UK_ERR_INVALID, "%s: %lld outputs are too many for one launch", k->name, (long long)R->nout);
    goto out;
  }
  CUfunction f;
  if ((st = function(k, e, s.kernel, &f)) != UK_OK) goto out;
  int np = k->in.count + k->out.count;
  for (int p = 0; p < np; p++) ptr[p] = pr.arr[p] ? pr.arr[p]->data : 0;
  if (pr.b.outputs_given &&
      (st = uk__copy_overlapping_inputs(k->ctx, pr.arr, k->in.count, pr.outs, k->out.count, stream, ptr, temps,
                                        &ntemps)) != UK_OK)
    goto out;
  if (s.nsplit > 1 &&
      (st = scratch(k, device, stream, s.grid_x, uk__red_scratch_bytes(&s, (int64_t)e->partial_size), &count,
                    &partial, &temp_scratch)) != UK_OK)
    goto out;
  _Alignas(16) unsigned char buf[4096];
  pack(e, &pr, &s, ptr, partial, count, buf);
  st = launch_one(f, s.grid_x, s.nsplit, stream, buf, e->plan.bytes);
out:
  for (int j = 0; j < ntemps; j++) uk__context_free(k->ctx, temps[j], stream);
  if (temp_scratch) {
    uk__context_free(k->ctx, count, stream);
    uk__context_free(k->ctx, partial, stream);
  }
  if (st != UK_OK) {
    for (int j = 0; j < nalloc; j++)
      if (pr.outs[j].data) uk__context_free(k->ctx, pr.outs[j].data, stream);
  } else if (!pr.b.outputs_given) {
    for (int j = 0; j < nout; j++) out[j] = pr.outs[j];
  }
  uk__device_leave(pushed);
  return st;
}
