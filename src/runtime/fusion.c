/* uk_fusion: a fusion program (codegen/fuse_*.c) run through internal
 * ElementwiseKernel / ReductionKernel objects, one per planned kernel.
 *
 * A call's signature (per input: array or scalar kind, dtype, ndim; the
 * given outputs' dtypes) selects a cached entry: the typed plan and its
 * kernel objects, which own their compiled specialisations and caches. The
 * call computes every node's shape, allocates the outputs it must and the
 * intermediates (stream-ordered), runs the kernels in order on the stream
 * and frees the intermediates ordered after them. No launch or cache code
 * lives here. */
#include <pthread.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "codegen/dtype.h"
#include "codegen/fuse_row.h"
#include "runtime/context.h"
#include "runtime/device.h"
#include "runtime/kernel_common.h"
#include "runtime/row_kernel.h"

typedef struct fz_entry {
  struct fz_entry *next;
  uk_fuse_sig sig;
  uk_fuse_plan *plan;
  void **kernels; /* uk_elementwise * or uk_reduction * per plan kernel */
  uk__row_kernel *row; /* the plan's row kernel, or NULL */
} fz_entry;

struct uk_fusion {
  uk_context *ctx;
  uk_fuse_prog *prog;
  char *name, *preamble;
  char **options;
  int num_options;
  pthread_mutex_t lock;          /* serialises planning and inserts */
  _Atomic(fz_entry *) entries;   /* published with release, read with acquire */
};

typedef enum mode { M_CALL, M_SOURCE, M_PRECOMPILE, M_INFO, M_COUNT } mode;

static void entry_free(fz_entry *e) {
  if (!e) return;
  for (int k = 0; e->plan && k < e->plan->nkernels; k++) {
    if (!e->kernels || !e->kernels[k]) continue;
    if (e->plan->kernels[k].is_reduction) uk_reduction_destroy(e->kernels[k]);
    else uk_elementwise_destroy(e->kernels[k]);
  }
  free(e->kernels);
  uk__row_destroy(e->row);
  uk__fuse_plan_free(e->plan);
  free(e);
}

void uk_fusion_destroy(uk_fusion *f) {
  if (!f) return;
  for (fz_entry *e = atomic_load(&f->entries), *n; e; e = n) {
    n = e->next;
    entry_free(e);
  }
  for (int k = 0; k < f->num_options; k++) free(f->options[k]);
  free(f->options);
  free(f->name);
  free(f->preamble);
  uk__fuse_prog_free(f->prog);
  pthread_mutex_destroy(&f->lock);
  uk__context_release(f->ctx);
  free(f);
}

static int is_ident(const char *s) {
  if (!s || !*s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')) return 0;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_')) return 0;
  return 1;
}

/* The object around a parsed or built program (taken over, also on failure). */
static uk_status create(uk_context *ctx, uk_fuse_prog *prog, const char *name, const uk_fusion_options *opts,
                        uk_fusion **out) {
  uk_status s;
  if (!name) name = "fusion";
  if (!is_ident(name) || name[0] == '_') {
    uk__fuse_prog_free(prog);
    return uk__errorf(UK_ERR_INVALID, "uk_fusion_create: name '%s' is not a C identifier (not starting with '_')",
                      name);
  }
  if (opts && (opts->num_options < 0 || (opts->num_options > 0 && !opts->options))) {
    uk__fuse_prog_free(prog);
    return uk__errorf(UK_ERR_INVALID, "uk_fusion_create: options is NULL or num_options < 0");
  }
  if (prog->nin > UK_FUSE_MAX_INPUTS || prog->nout > UK_FUSE_MAX_INPUTS) {
    uk__fuse_prog_free(prog);
    return uk__errorf(UK_ERR_INVALID, "uk_fusion_create: at most %d inputs and %d outputs", UK_FUSE_MAX_INPUTS,
                      UK_FUSE_MAX_INPUTS);
  }
  uk_fusion *f = calloc(1, sizeof *f);
  if (!f) {
    uk__fuse_prog_free(prog);
    return uk__errorf(UK_ERR_NOMEM, "uk_fusion_create: out of memory");
  }
  pthread_mutex_init(&f->lock, NULL);
  uk__context_retain(ctx);
  f->ctx = ctx;
  f->prog = prog;
  f->name = strdup(name);
  f->preamble = strdup(opts && opts->preamble ? opts->preamble : "");
  if (!f->name || !f->preamble) goto nomem;
  if (opts && opts->num_options > 0) {
    if (!(f->options = calloc((size_t)opts->num_options, sizeof *f->options))) goto nomem;
    for (; f->num_options < opts->num_options; f->num_options++)
      if (!opts->options[f->num_options] || !(f->options[f->num_options] = strdup(opts->options[f->num_options])))
        goto nomem;
  }
  uk__error_clear();
  *out = f;
  return UK_OK;
nomem:
  s = uk__errorf(UK_ERR_NOMEM, "uk_fusion_create: out of memory (or a NULL option)");
  uk_fusion_destroy(f);
  return s;
}

uk_status uk_fusion_create(uk_context *ctx, const char *inputs, const char *outputs, const char *program,
                           const char *name, const uk_fusion_options *opts, uk_fusion **out) {
  if (!ctx || !out) return uk__errorf(UK_ERR_INVALID, "uk_fusion_create: ctx and out must not be NULL");
  uk_fuse_prog *prog = NULL;
  uk_status s = uk__fuse_parse(inputs, outputs, program, &prog);
  return s ? s : create(ctx, prog, name, opts, out);
}

uk_status uk_fusion_create_built(uk_context *ctx, uk_fusion_builder *b, const char *name,
                                 const uk_fusion_options *opts, uk_fusion **out) {
  if (!ctx || !out) return uk__errorf(UK_ERR_INVALID, "uk_fusion_create_built: ctx and out must not be NULL");
  uk_fuse_prog *prog = NULL;
  uk_status s = uk__fuse_builder_take(b, &prog);
  return s ? s : create(ctx, prog, name, opts, out);
}

/* The call's signature; UK_ERR_INVALID for unusable arguments. */
static uk_status make_sig(const uk_fusion *f, const uk_arg *in, int nin, const uk_array *out, int nout,
                          uk_fuse_sig *sig) {
  const uk_fuse_prog *g = f->prog;
  memset(sig, 0, sizeof *sig);
  if (nin != g->nin || (nin > 0 && !in))
    return uk__errorf(UK_ERR_INVALID, "%s: %d inputs given, the program takes %d (%s...)", f->name, nin, g->nin,
                      g->nin ? g->in_names[0] : "none");
  if (nout != g->nout || !out)
    return uk__errorf(UK_ERR_INVALID, "%s: %d outputs given, the program has %d", f->name, nout, g->nout);
  sig->nin = nin;
  sig->nout = nout;
  for (int k = 0; k < nin; k++) {
    const uk_arg *a = &in[k];
    uk_fuse_type *t = &sig->in[k];
    switch (a->kind) {
    case UK_ARG_ARRAY:
      if (!a->v.array || !uk__dtype_info(a->v.array->dtype) || a->v.array->ndim < 0 || a->v.array->ndim > UK_MAX_NDIM)
        return uk__errorf(UK_ERR_INVALID, "%s: input '%s' is not a valid array", f->name, g->in_names[k]);
      t->dtype = a->v.array->dtype;
      sig->is_array[k] = 1;
      sig->ndim[k] = (unsigned char)a->v.array->ndim;
      break;
    case UK_ARG_INT: t->dtype = UK_INT64, t->weak = 1; break;
    case UK_ARG_FLOAT: t->dtype = UK_FLOAT64, t->weak = 1; break;
    case UK_ARG_COMPLEX: t->dtype = UK_COMPLEX128, t->weak = 1; break;
    case UK_ARG_BOOL: t->dtype = UK_BOOL, t->weak = 1; break;
    case UK_ARG_TYPED:
      if (!uk__dtype_info(a->dtype)) return uk__errorf(UK_ERR_INVALID, "%s: input '%s' has an invalid dtype", f->name, g->in_names[k]);
      t->dtype = a->dtype;
      break;
    default:
      return uk__errorf(UK_ERR_INVALID, "%s: input '%s': fusion inputs are arrays or scalars", f->name, g->in_names[k]);
    }
  }
  int given = 0;
  for (int k = 0; k < nout; k++) given += out[k].data != 0;
  if (given && given != nout)
    return uk__errorf(UK_ERR_INVALID, "%s: outputs are all given or all allocated (%d of %d given)", f->name, given,
                      nout);
  sig->out_given = given > 0;
  for (int k = 0; k < nout && given; k++) {
    if (!uk__dtype_info(out[k].dtype) || out[k].ndim < 0 || out[k].ndim > UK_MAX_NDIM)
      return uk__errorf(UK_ERR_INVALID, "%s: output '%s' is not a valid array", f->name, g->out_names[k]);
    sig->out[k] = out[k].dtype;
  }
  return UK_OK;
}

static uk_status make_kernels(uk_fusion *f, fz_entry *e) {
  uk_fuse_plan *p = e->plan;
  if (!(e->kernels = calloc((size_t)p->nkernels + 1, sizeof *e->kernels)))
    return uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
  for (int k = 0; k < p->nkernels; k++) {
    uk_fuse_kernel *q = &p->kernels[k];
    uk_status s;
    if (q->is_reduction) {
      uk_reduction_spec sp = {q->in_params, q->out_params, q->map_expr, q->reduce_expr, q->post_map_expr,
                              q->identity, q->name, q->reduce_type, q->preamble, (const char *const *)f->options,
                              f->num_options};
      s = uk_reduction_create(f->ctx, &sp, (uk_reduction **)&e->kernels[k]);
    } else {
      uk_elementwise_options eo = {0};
      eo.preamble = q->preamble;
      eo.options = (const char *const *)f->options;
      eo.num_options = f->num_options;
      s = uk_elementwise_create(f->ctx, q->in_params, q->out_params, q->operation, q->name, &eo,
                                (uk_elementwise **)&e->kernels[k]);
    }
    if (s) {
      uk__error_prefix("fusion '%s': generated kernel '%s' was rejected (a ukern bug; please report)", f->name,
                       q->name);
      return s;
    }
  }
  if (!p->row.source) return UK_OK;
  uk_status s = uk__row_create(f->ctx, p, (const char *const *)f->options, f->num_options, &e->row);
  if (s == UK_ERR_INVALID) { /* its parameters do not fit CUDA's limit: the split plan runs */
    uk__error_clear();
    s = UK_OK;
  }
  return s;
}

static fz_entry *find(uk_fusion *f, const uk_fuse_sig *sig) {
  fz_entry *e = atomic_load_explicit(&f->entries, memory_order_acquire);
  while (e && memcmp(&e->sig, sig, sizeof *sig) != 0) e = e->next;
  return e;
}

/* The cached entry for sig, planned and created on first use (the hit path
 * takes no lock). */
static uk_status lookup(uk_fusion *f, const uk_fuse_sig *sig, fz_entry **out) {
  fz_entry *e = find(f, sig);
  if (e) {
    *out = e;
    return UK_OK;
  }
  uk_status s = UK_OK;
  pthread_mutex_lock(&f->lock);
  if (!(e = find(f, sig))) {
    if (!(e = calloc(1, sizeof *e))) {
      s = uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
      goto out;
    }
    e->sig = *sig;
    if ((s = uk__fuse_plan(f->prog, sig, f->name, f->preamble, &e->plan)) || (s = make_kernels(f, e))) {
      entry_free(e);
      goto out;
    }
    e->next = atomic_load_explicit(&f->entries, memory_order_relaxed);
    atomic_store_explicit(&f->entries, e, memory_order_release);
  }
  *out = e;
out:
  pthread_mutex_unlock(&f->lock);
  return s;
}

static const uint64_t FAKE_PTR = 0x10000000000ull; /* aligned stand-in for memory a call would allocate */

/* out viewed with the reduction's keepdims shape (map shape, reduced axes 1). */
static void keepdims_view(const uk_array *a, const int64_t *map_shape, int map_ndim, unsigned axes, uk_array *v) {
  *v = *a;
  if (a->ndim == map_ndim) return;
  v->ndim = map_ndim;
  for (int d = 0, j = 0; d < map_ndim; d++) {
    if ((axes >> d) & 1) {
      v->shape[d] = 1;
      v->strides[d] = 0;
    } else {
      v->shape[d] = a->shape[j];
      v->strides[d] = a->strides[j++];
    }
  }
  (void)map_shape;
}

static int64_t prod(const int64_t *s, int n) {
  int64_t p = 1;
  for (int k = 0; k < n; k++) p *= s[k];
  return p;
}

/* M_INFO: adds one kernel's compile statistics to the call's (sizes and
 * times summed, logs joined in kernel order). */
static uk_status add_info(uk_compile_info *all, uk_compile_info *one) {
  if (!one->log) return UK_OK; /* nothing to compute: nothing compiled */
  size_t a = all->log ? strlen(all->log) : 0, b = strlen(one->log);
  char *log = realloc(all->log, a + b + 1);
  if (!log) {
    uk_free(one->log);
    return uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
  }
  memcpy(log + a, one->log, b + 1);
  all->log = log;
  all->arch = one->arch;
  all->is_ptx = one->is_ptx;
  all->image_bytes += one->image_bytes;
  all->ms += one->ms;
  uk_free(one->log);
  return UK_OK;
}

/* The row plan runs this call (codegen/fuse_row.c): the shapes fit, every
 * array is on the call's device, and no given output overlaps an input
 * other than as the very same view (a block reads its row before it
 * writes it; other overlaps go to the split plan, which copies). */
static int row_usable(const uk_fusion *f, const uk_fuse_plan *p, const uk_arg *in, const uk_array *outs, int given,
                      const int64_t *shapes, int device) {
  if (!uk__fuse_row_fits(f->prog, p, shapes)) return 0;
  for (int k = 0; k < f->prog->nin; k++) {
    if (in[k].kind != UK_ARG_ARRAY) continue;
    const uk_array *a = in[k].v.array;
    uint64_t alo, ahi, olo, ohi;
    if (a->device != device) return 0;
    for (int o = 0; given && o < f->prog->nout; o++)
      if (outs[o].device != device ||
          (uk__array_span(a, &alo, &ahi) && uk__array_span(&outs[o], &olo, &ohi) && alo < ohi && olo < ahi &&
           !uk__array_same_view(a, &outs[o])))
        return 0;
  }
  return 1;
}

static uk_status run(uk_fusion *f, const uk_arg *in, int nin, uk_array *out, int nout, const uk_launch *launch,
                     mode m, char **source, uk_compile_info *info, int *count) {
  if (!f) return uk__errorf(UK_ERR_INVALID, "uk_fusion: object is NULL");
  if (m == M_SOURCE && !source) return uk__errorf(UK_ERR_INVALID, "uk_fusion_source: source is NULL");
  if (m == M_INFO && !info) return uk__errorf(UK_ERR_INVALID, "uk_fusion_compile_info: info is NULL");
  uk_compile_info all = {0}, one = {0};
  uk_fuse_sig sig;
  fz_entry *e = NULL;
  uk_status s = make_sig(f, in, nin, out, nout, &sig);
  if (s || (s = lookup(f, &sig, &e))) return s;
  const uk_fuse_prog *g = f->prog;
  const uk_fuse_plan *p = e->plan;
  void *stream = launch ? launch->stream : NULL;
  int64_t stack_shapes[64 * UK_MAX_NDIM];
  int64_t *shapes = g->nnodes <= 64 ? stack_shapes : malloc((size_t)g->nnodes * UK_MAX_NDIM * sizeof *shapes);
  uk_array temps_stack[8];
  uk_array *temps = p->ntemps <= 8 ? temps_stack : calloc((size_t)p->ntemps, sizeof *temps);
  uk_array outs[UK_FUSE_MAX_INPUTS];
  int nalloc_out = 0, nalloc_tmp = 0;
  uk_strbuf src;
  uk__sb_init(&src);
  if (!shapes || !temps) {
    s = uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
    goto out;
  }
  const int64_t *in_shapes[UK_FUSE_MAX_INPUTS];
  int device = -1;
  for (int k = 0; k < nin; k++) {
    in_shapes[k] = in[k].kind == UK_ARG_ARRAY ? in[k].v.array->shape : NULL;
    if (in[k].kind == UK_ARG_ARRAY && device < 0) device = in[k].v.array->device;
  }
  for (int c = 0; c < p->nweak_checks; c++) {
    const uk_arg *a = &in[p->weak_checks[c].input];
    if (a->kind == UK_ARG_INT && !uk__fuse_int_fits(a->v.i, p->weak_checks[c].dtype)) {
      s = uk__error_at(UK_ERR_TYPE, "program", g->text, p->weak_checks[c].pos, NULL,
                       "Python integer %lld (input '%s') out of bounds for %s", (long long)a->v.i,
                       g->in_names[p->weak_checks[c].input], uk_dtype_name(p->weak_checks[c].dtype));
      goto out;
    }
  }
  if ((s = uk__fuse_shapes(g, p, in_shapes, shapes))) goto out;
  if (device < 0) device = sig.out_given ? out[0].device : f->ctx->opts.device;
  /* outputs */
  for (int k = 0; k < nout; k++) {
    int id = g->out_node[k], nd = p->ndim[id];
    const int64_t *sh = shapes + (size_t)id * UK_MAX_NDIM;
    if (sig.out_given) {
      int ok = out[k].ndim == nd;
      for (int d = 0; ok && d < nd; d++) ok = out[k].shape[d] == sh[d];
      if (!ok) {
        s = uk__errorf(UK_ERR_SHAPE, "%s: output '%s' has ndim %d and the wrong shape; the program's result has ndim %d",
                       f->name, g->out_names[k], out[k].ndim, nd);
        goto out;
      }
      outs[k] = out[k];
    } else if (m == M_CALL) {
      if ((s = uk_array_alloc(f->ctx, p->out_dtype[k], nd, sh, device, stream, &outs[k]))) goto out;
      nalloc_out++;
    } else {
      uk_array_init(&outs[k], FAKE_PTR * (uint64_t)(k + 1), p->out_dtype[k], nd, sh);
      outs[k].device = device;
    }
  }
  if (e->row && row_usable(f, p, in, outs, sig.out_given, shapes, device)) {
    if (m == M_CALL)
      s = uk__row_call(e->row, in, outs, shapes + (size_t)p->row.map_node * UK_MAX_NDIM, device, stream);
    else if (m == M_PRECOMPILE) s = uk__row_offline(e->row, device, UK__OFFLINE_PRECOMPILE, NULL);
    else if (m == M_INFO) s = uk__row_offline(e->row, device, UK__OFFLINE_INFO, &all);
    else if (m == M_SOURCE) {
      uk__sb_addf(&src, "// ==== ukern fusion '%s': kernel 1 of 1 (row '%s') ====\n", f->name, p->row.name);
      uk__sb_add(&src, p->row.source);
    } else *count = 1;
    if (s) {
      uk__error_prefix("%s (row kernel '%s')", f->name, p->row.name);
      goto out;
    }
    goto done;
  }
  if (m == M_COUNT) {
    *count = p->nkernels;
    goto out;
  }
  for (int t = 0; t < p->ntemps; t++) {
    int id = p->temp_node[t];
    const int64_t *sh = shapes + (size_t)id * UK_MAX_NDIM;
    if (m == M_CALL) {
      if ((s = uk_array_alloc(f->ctx, p->type[id].dtype, p->ndim[id], sh, device, stream, &temps[t]))) goto out;
    } else {
      uk_array_init(&temps[t], FAKE_PTR * (uint64_t)(nout + t + 1), p->type[id].dtype, p->ndim[id], sh);
      temps[t].device = device;
    }
    nalloc_tmp++;
  }
  /* kernels in order */
  for (int k = 0; k < p->nkernels; k++) {
    const uk_fuse_kernel *q = &p->kernels[k];
    uk_arg kin[UK_FUSE_MAX_INPUTS + 32];
    uk_array kout[32];
    if (q->nin > (int)(sizeof kin / sizeof kin[0]) || q->nout > (int)(sizeof kout / sizeof kout[0])) {
      s = uk__errorf(UK_ERR_INVALID, "%s: too many intermediates", f->name);
      goto out;
    }
    for (int j = 0; j < q->nin; j++)
      kin[j] = q->in_src[j] >= 0 ? in[q->in_src[j]] : uk_arg_array(&temps[-1 - q->in_src[j]]);
    char *ks = NULL;
    if (q->is_reduction) {
      const int64_t *ms = shapes + (size_t)q->map_node * UK_MAX_NDIM;
      int mnd = p->ndim[q->map_node];
      unsigned axes = p->axes[q->red_node];
      int ax[UK_MAX_NDIM], nax = 0;
      int64_t rsize = 1;
      for (int d = 0; d < mnd; d++)
        if ((axes >> d) & 1) {
          ax[nax++] = d;
          rsize *= ms[d];
        }
      /* every reduction of the kernel must see the same map shape */
      for (int id = 0; id < g->nnodes; id++)
        if (p->needed[id] && g->nodes[id].kind == UK_FN_RED && id != q->red_node && p->axes[id] == axes &&
            p->ndim[g->nodes[id].arg[0]] == mnd &&
            memcmp(shapes + (size_t)g->nodes[id].arg[0] * UK_MAX_NDIM, ms, (size_t)mnd * sizeof *ms) != 0) {
          s = uk__error_at(UK_ERR_SHAPE, "program", g->text, g->nodes[id].pos, NULL,
                           "reductions over the same axes fused into one kernel must reduce operands of one shape");
          goto out;
        }
      for (int j = 0; j < q->nout; j++)
        keepdims_view(q->out_dst[j] >= 0 ? &outs[q->out_dst[j]] : &temps[-1 - q->out_dst[j]], ms, mnd, axes, &kout[j]);
      if (q->check_empty && rsize == 0 && q->nout > 0 && prod(kout[0].shape, kout[0].ndim) > 0) {
        s = uk__error_at(UK_ERR_SHAPE, "program", g->text, g->nodes[q->red_node].pos, NULL,
                         "zero-size array to a reduction with no identity (max, min, argmax, argmin)");
        goto out;
      }
      uk_reduce_launch rl = {stream, ax, nax, 1, nax == 0};
      uk_reduction *r = e->kernels[k];
      s = m == M_CALL       ? uk_reduction_call(r, kin, q->nin, kout, q->nout, &rl)
          : m == M_SOURCE   ? uk_reduction_source(r, kin, q->nin, kout, q->nout, &rl, &ks)
          : m == M_INFO     ? uk_reduction_compile_info(r, kin, q->nin, kout, q->nout, &rl, &one)
                            : uk_reduction_precompile(r, kin, q->nin, kout, q->nout, &rl);
    } else {
      for (int j = 0; j < q->nout; j++) {
        kout[j] = q->out_dst[j] >= 0 ? outs[q->out_dst[j]] : temps[-1 - q->out_dst[j]];
        if (j > 0 && (kout[j].ndim != kout[0].ndim ||
                      memcmp(kout[j].shape, kout[0].shape, (size_t)kout[0].ndim * sizeof kout[0].shape[0]) != 0)) {
          s = uk__errorf(UK_ERR_SHAPE,
                         "%s: outputs '%s' and '%s' are computed elementwise but have different shapes; compute "
                         "them in separate fusions",
                         f->name, g->out_names[q->out_dst[0]], g->out_names[q->out_dst[j]]);
          goto out;
        }
      }
      uk_launch el = {stream, 0, launch ? launch->block_size : 0};
      uk_elementwise *w = e->kernels[k];
      s = m == M_CALL       ? uk_elementwise_call(w, kin, q->nin, kout, q->nout, &el)
          : m == M_SOURCE   ? uk_elementwise_source(w, kin, q->nin, kout, q->nout, &el, &ks)
          : m == M_INFO     ? uk_elementwise_compile_info(w, kin, q->nin, kout, q->nout, &el, &one)
                            : uk_elementwise_precompile(w, kin, q->nin, kout, q->nout, &el);
    }
    if (s == UK_OK && m == M_INFO) s = add_info(&all, &one);
    if (s) {
      uk__error_prefix("%s (kernel %d of %d, '%s')", f->name, k + 1, p->nkernels, q->name);
      goto out;
    }
    if (ks) {
      uk__sb_addf(&src, "// ==== ukern fusion '%s': kernel %d of %d (%s '%s') ====\n", f->name, k + 1, p->nkernels,
                  q->is_reduction ? "reduction" : "elementwise", q->name);
      uk__sb_add(&src, ks);
      uk_free(ks);
    }
  }
done:
  if (m == M_SOURCE) {
    if (!(*source = uk__sb_detach(&src))) s = uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
  }
  if (m == M_INFO) {
    *info = all;
    all.log = NULL;
  }
out:
  uk_free(all.log);
  if (m == M_CALL) {
    for (int t = 0; t < nalloc_tmp; t++) uk_array_free(f->ctx, &temps[t], stream);
    if (s)
      for (int k = 0; k < nalloc_out; k++) uk_array_free(f->ctx, &outs[k], stream);
    else if (!sig.out_given)
      for (int k = 0; k < nout; k++) out[k] = outs[k];
  }
  if (s == UK_OK) uk__error_clear();
  uk__sb_release(&src);
  if (temps != temps_stack) free(temps);
  if (shapes != stack_shapes) free(shapes);
  return s;
}

uk_status uk_fusion_call(uk_fusion *f, const uk_arg *in, int nin, uk_array *out, int nout, const uk_launch *launch) {
  return run(f, in, nin, out, nout, launch, M_CALL, NULL, NULL, NULL);
}

uk_status uk_fusion_precompile(uk_fusion *f, const uk_arg *in, int nin, uk_array *out, int nout,
                               const uk_launch *launch) {
  return run(f, in, nin, out, nout, launch, M_PRECOMPILE, NULL, NULL, NULL);
}

uk_status uk_fusion_source(uk_fusion *f, const uk_arg *in, int nin, uk_array *out, int nout, const uk_launch *launch,
                           char **source) {
  return run(f, in, nin, out, nout, launch, M_SOURCE, source, NULL, NULL);
}

uk_status uk_fusion_compile_info(uk_fusion *f, const uk_arg *in, int nin, uk_array *out, int nout,
                                 const uk_launch *launch, uk_compile_info *info) {
  return run(f, in, nin, out, nout, launch, M_INFO, NULL, info, NULL);
}

uk_status uk_fusion_kernel_count(uk_fusion *f, const uk_arg *in, int nin, const uk_array *out, int nout, int *count) {
  if (!f || !count) return uk__errorf(UK_ERR_INVALID, "uk_fusion_kernel_count: NULL argument");
  /* run writes to out only when it calls */
  return run(f, in, nin, (uk_array *)(uintptr_t)out, nout, NULL, M_COUNT, NULL, NULL, count);
}
