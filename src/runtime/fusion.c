/* uk_fusion: a fusion program (codegen/fuse_*.c) run through kernel
 * objects of the shared pipeline: an ElementwiseKernel / ReductionKernel
 * per planned kernel (the split plan) and, when the program has one, the
 * row kernel (row_kernel.h).
 *
 * A call's signature (per input: array or scalar kind, dtype, ndim; the
 * given outputs' dtypes) selects a cached entry: the typed plan and its
 * kernel objects, which own their compiled specialisations and caches. The
 * call computes every node's shape, allocates the outputs it must, then
 * runs the row kernel when the shapes and memory allow, else the split
 * plan's kernels in order on the stream with intermediates allocated
 * stream-ordered and freed ordered after them. Each public call composes
 * those stages. No launch or cache code lives here. */
#include <pthread.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "codegen/dtype.h"
#include "codegen/fuse_row.h"
#include "runtime/context.h"
#include "runtime/kernel_common.h"
#include "runtime/cluster_launch.h"
#include "runtime/row_kernel.h"

typedef struct fz_entry {
  struct fz_entry *next;
  uk_fuse_sig sig;
  uk_fuse_plan *plan;
  void **kernels; /* uk_elementwise * or uk_reduction * per plan kernel */
  uk__row_kernel *row; /* the plan's row kernel, or NULL */
  atomic_int row_made; /* 1 once row is settled (ensure_row; release, read with acquire) */
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
static uk_status create(uk_context *ctx, uk_fuse_prog *prog, const uk_fusion_spec *spec, uk_fusion **out) {
  uk_status s;
  const char *name = spec->name ? spec->name : "fusion";
  if (!is_ident(name) || name[0] == '_') {
    uk__fuse_prog_free(prog);
    return uk__errorf(UK_ERR_INVALID,
                      "uk_fusion_spec: name '%s' is not a C identifier (hint: letters, digits and '_', not starting "
                      "with '_' or a digit)",
                      name);
  }
  if (spec->num_options < 0 || (spec->num_options > 0 && !spec->options)) {
    uk__fuse_prog_free(prog);
    return uk__errorf(UK_ERR_INVALID, "uk_fusion_spec: options is NULL or num_options < 0");
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
  f->preamble = strdup(spec->preamble ? spec->preamble : "");
  if (!f->name || !f->preamble) goto nomem;
  if (spec->num_options > 0) {
    if (!(f->options = calloc((size_t)spec->num_options, sizeof *f->options))) goto nomem;
    for (; f->num_options < spec->num_options; f->num_options++)
      if (!spec->options[f->num_options] || !(f->options[f->num_options] = strdup(spec->options[f->num_options])))
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

uk_status uk_fusion_create(uk_context *ctx, const uk_fusion_spec *spec, uk_fusion **out) {
  uk__error_clear();
  if (!ctx || !spec || !out) return uk__errorf(UK_ERR_INVALID, "uk_fusion_create: NULL argument");
  int text = spec->inputs || spec->outputs || spec->program;
  if (text && spec->builder)
    return uk__errorf(UK_ERR_INVALID,
                      "uk_fusion_spec: both a builder and program text are given (hint: set builder, or inputs, "
                      "outputs and program)");
  if (!spec->builder) {
    const char *missing = !spec->inputs ? "inputs" : !spec->outputs ? "outputs" : !spec->program ? "program" : NULL;
    if (missing)
      return uk__errorf(UK_ERR_INVALID,
                        "uk_fusion_spec: %s is NULL (hint: the text form needs inputs, outputs and program; a "
                        "built program sets builder)",
                        missing);
  }
  uk_fuse_prog *prog = NULL;
  uk_status s = spec->builder ? uk__fuse_builder_take(spec->builder, &prog)
                              : uk__fuse_parse(spec->inputs, spec->outputs, spec->program, &prog);
  return s ? s : create(ctx, prog, spec, out);
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
      uk_reduction_spec sp = {.in_params = q->in_params,
                              .out_params = q->out_params,
                              .map_expr = q->map_expr,
                              .reduce_expr = q->reduce_expr,
                              .post_map_expr = q->post_map_expr,
                              .identity = q->identity,
                              .name = q->name,
                              .reduce_type = q->reduce_type,
                              .preamble = q->preamble,
                              .options = (const char *const *)f->options,
                              .num_options = f->num_options};
      s = uk_reduction_create(f->ctx, &sp, (uk_reduction **)&e->kernels[k]);
    } else {
      uk_elementwise_spec sp = {.in_params = q->in_params,
                                .out_params = q->out_params,
                                .operation = q->operation,
                                .name = q->name,
                                .preamble = q->preamble,
                                .options = (const char *const *)f->options,
                                .num_options = f->num_options};
      s = uk_elementwise_create(f->ctx, &sp, (uk_elementwise **)&e->kernels[k]);
    }
    if (s) {
      uk__error_prefix("fusion '%s': generated kernel '%s' was rejected (a ukern bug; please report)", f->name,
                       q->name);
      return s;
    }
  }
  return UK_OK; /* the row kernel: ensure_row, for the first call that runs it */
}

/* The entry's row kernel, its source emitted and its object created by the
 * first call whose shapes fit the row plan (codegen/fuse_row.h: most
 * calls of such programs over whole arrays run the split plan, and the
 * emission was most of their first call's host time). Under the lock, as
 * planning is; settled calls take no lock. A failure leaves it unsettled:
 * the next call tries again. */
static uk_status ensure_row(uk_fusion *f, fz_entry *e) {
  if (atomic_load_explicit(&e->row_made, memory_order_acquire)) return UK_OK;
  pthread_mutex_lock(&f->lock);
  uk_status s = UK_OK;
  if (!atomic_load_explicit(&e->row_made, memory_order_relaxed)) {
    s = uk__fuse_row_emit(f->prog, e->plan, f->name, f->preamble);
    if (!s) s = uk__row_create(f->ctx, e->plan, (const char *const *)f->options, f->num_options, &e->row);
    if (s == UK_ERR_INVALID) { /* its parameters do not fit CUDA's limit: the split plan runs */
      uk__error_clear();
      s = UK_OK;
    }
    if (!s) atomic_store_explicit(&e->row_made, 1, memory_order_release);
  }
  pthread_mutex_unlock(&f->lock);
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

/* ------------------------------------------------------------------------ */
/* A call's stages: signature -> entry -> shapes -> outputs -> row or split  */
/* ------------------------------------------------------------------------ */

static const uint64_t FAKE_PTR = 0x10000000000ull; /* aligned stand-in for memory a call would allocate */

/* Same-axes reductions planned into one kernel whose operands' shapes differ
 * at this call (x.sum(0) + y.sum(0), x (3, 4), y (3, 1)): NumPy accepts them,
 * so the call takes the plan with one kernel per reduction (sig.split). */
static int mixed_reductions(const uk_fuse_prog *g, const uk_fuse_plan *p, const int64_t *shapes) {
  for (int k = 0; k < p->nkernels; k++) {
    const uk_fuse_kernel *q = &p->kernels[k];
    if (!q->is_reduction) continue;
    int mnd = p->ndim[q->map_node];
    const int64_t *ms = shapes + (size_t)q->map_node * UK_MAX_NDIM;
    for (int id = 0; id < g->nnodes; id++)
      if (p->needed[id] && g->nodes[id].kind == UK_FN_RED && p->axes[id] == p->axes[q->red_node] &&
          p->ndim[g->nodes[id].arg[0]] == mnd &&
          memcmp(shapes + (size_t)g->nodes[id].arg[0] * UK_MAX_NDIM, ms, (size_t)mnd * sizeof *ms) != 0)
        return 1;
  }
  return 0;
}

/* What a call decides before any kernel runs. */
typedef struct fz_call {
  uk_fuse_sig sig;
  fz_entry *e;
  int64_t *shapes; /* per node, UK_MAX_NDIM each: stack_shapes or malloc'd */
  int64_t stack_shapes[64 * UK_MAX_NDIM];
  uk_array outs[UK_FUSE_MAX_INPUTS]; /* the given outputs, or those allocated (or described) */
  int nalloc;                        /* outputs allocated */
  int device;                        /* the arrays', else the given outputs', else the context's */
  int row;                           /* the row kernel runs the call */
  void *stream;
} fz_call;

/* The signature's entry and every node's shape (no device work). Always
 * pair with finish(). */
static uk_status begin(uk_fusion *f, const uk_arg *in, int nin, const uk_array *out, int nout,
                       const uk_launch *launch, fz_call *c) {
  c->shapes = c->stack_shapes;
  c->nalloc = 0;
  c->row = 0;
  c->stream = launch ? launch->stream : NULL;
  uk_status s = uk__launch_check(f->name, launch, UK__TAKES_BLOCK);
  if (!s) s = make_sig(f, in, nin, out, nout, &c->sig);
  if (s || (s = lookup(f, &c->sig, &c->e))) return s;
  const uk_fuse_prog *g = f->prog;
  const uk_fuse_plan *p = c->e->plan;
  if (g->nnodes > 64 && !(c->shapes = malloc((size_t)g->nnodes * UK_MAX_NDIM * sizeof *c->shapes)))
    return uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
  for (int w = 0; w < p->nweak_checks; w++) {
    const uk_arg *a = &in[p->weak_checks[w].input];
    if (a->kind == UK_ARG_INT && !uk__fuse_int_fits(a->v.i, p->weak_checks[w].dtype))
      return uk__error_at(UK_ERR_TYPE, "program", g->text, p->weak_checks[w].pos, NULL,
                          "Python integer %lld (input '%s') out of bounds for %s", (long long)a->v.i,
                          g->in_names[p->weak_checks[w].input], uk_dtype_name(p->weak_checks[w].dtype));
  }
  const int64_t *in_shapes[UK_FUSE_MAX_INPUTS];
  c->device = -1;
  for (int k = 0; k < nin; k++) {
    in_shapes[k] = in[k].kind == UK_ARG_ARRAY ? in[k].v.array->shape : NULL;
    if (in[k].kind == UK_ARG_ARRAY && c->device < 0) c->device = in[k].v.array->device;
  }
  if ((s = uk__fuse_shapes(g, p, in_shapes, c->shapes))) return s;
  if (p->merged_reductions && mixed_reductions(g, p, c->shapes)) {
    c->sig.split = 1;
    if ((s = lookup(f, &c->sig, &c->e))) return s;
    p = c->e->plan;
    if ((s = uk__fuse_shapes(g, p, in_shapes, c->shapes))) return s;
  }
  if (c->device < 0) c->device = c->sig.out_given ? out[0].device : f->ctx->opts.device;
  return UK_OK;
}

/* The row plan runs this call (codegen/fuse_row.c): the shapes fit, every
 * array is on the call's device, and no given output overlaps an input
 * other than as the very same view (a block reads its row before it
 * writes it; other overlaps go to the split plan, which copies). */
static int row_usable(const uk_fusion *f, const fz_call *c, const uk_arg *in) {
  const uk_fuse_plan *p = c->e->plan;
  if (!c->e->row) return 0;
  /* a lone reduction: only where its rows go over clusters, or a block a
   * row (uk__row_lone_block), with light register slices
   * (uk__row_lone_light; docs/PERF.md "Session 20": shared-memory slices
   * and 32 elements a thread were slower than the split); sized here and
   * again by the call, but only for the rows that uk__fuse_row_fits lets
   * through */
  if (p->row.single &&
      !uk__row_lone_usable(c->e->row, in, c->outs, c->shapes + (size_t)p->row.map_node * UK_MAX_NDIM, c->device))
    return 0;
  for (int k = 0; k < f->prog->nin; k++) {
    if (in[k].kind != UK_ARG_ARRAY) continue;
    const uk_array *a = in[k].v.array;
    uint64_t alo, ahi, olo, ohi;
    if (a->device != c->device) return 0;
    for (int o = 0; c->sig.out_given && o < f->prog->nout; o++)
      if (c->outs[o].device != c->device ||
          (uk__array_span(a, &alo, &ahi) && uk__array_span(&c->outs[o], &olo, &ohi) && alo < ohi && olo < ahi &&
           !uk__array_same_view(a, &c->outs[o])))
        return 0;
  }
  return 1;
}

/* The outputs: given ones checked against the result's shape; otherwise
 * allocated on the stream (alloc) or described at stand-in addresses.
 * Then which plan runs the call. */
static uk_status outputs(uk_fusion *f, fz_call *c, const uk_arg *in, const uk_array *out, int alloc) {
  const uk_fuse_prog *g = f->prog;
  const uk_fuse_plan *p = c->e->plan;
  for (int k = 0; k < g->nout; k++) {
    int id = g->out_node[k], nd = p->ndim[id];
    const int64_t *sh = c->shapes + (size_t)id * UK_MAX_NDIM;
    if (c->sig.out_given) {
      int ok = out[k].ndim == nd;
      for (int d = 0; ok && d < nd; d++) ok = out[k].shape[d] == sh[d];
      if (!ok)
        return uk__errorf(UK_ERR_SHAPE,
                          "%s: output '%s' has ndim %d and the wrong shape; the program's result has ndim %d",
                          f->name, g->out_names[k], out[k].ndim, nd);
      c->outs[k] = out[k];
    } else if (alloc) {
      uk_status s = uk_array_alloc(f->ctx, p->out_dtype[k], nd, sh, c->device, c->stream, &c->outs[k]);
      if (s) return s;
      c->nalloc++;
    } else {
      uk_array_init(&c->outs[k], FAKE_PTR * (uint64_t)(k + 1), p->out_dtype[k], nd, sh);
      c->outs[k].device = c->device;
    }
  }
  /* the shapes first (the plan's fields), then the kernel (its source) */
  if (!uk__fuse_row_fits(g, p, c->shapes, uk__device_sm_count(c->device), uk__cluster_max(c->device))) return UK_OK;
  uk_status s = ensure_row(f, c->e);
  if (s) return s;
  c->row = row_usable(f, c, in);
  return UK_OK;
}

/* The end of every call: on failure the outputs it allocated are freed, on
 * success they are the caller's (out: NULL for calls that allocate none). */
static uk_status finish(uk_fusion *f, fz_call *c, uk_status s, uk_array *out) {
  if (s)
    for (int k = 0; k < c->nalloc; k++) uk_array_free(f->ctx, &c->outs[k], c->stream);
  else if (out && c->nalloc)
    for (int k = 0; k < c->nalloc; k++) out[k] = c->outs[k];
  if (c->shapes != c->stack_shapes) free(c->shapes);
  if (s == UK_OK) uk__error_clear();
  return s;
}

/* ------------------------------------------------------------------------ */
/* The row path                                                              */
/* ------------------------------------------------------------------------ */

static uk_status row_error(uk_fusion *f, const fz_call *c, uk_status s) {
  if (s) uk__error_prefix("%s (row kernel '%s')", f->name, c->e->plan->row.name);
  return s;
}

static uk_status row_call(uk_fusion *f, const fz_call *c, const uk_arg *in) {
  const uk_fuse_plan *p = c->e->plan;
  return row_error(f, c,
                   uk__row_call(c->e->row, in, c->outs, c->shapes + (size_t)p->row.map_node * UK_MAX_NDIM, c->device,
                                c->stream));
}

static uk_status row_offline(uk_fusion *f, const fz_call *c, const uk_arg *in, uk__offline what, void *result) {
  const uk_fuse_plan *p = c->e->plan;
  return row_error(f, c,
                   uk__row_offline(c->e->row, in, c->outs, c->shapes + (size_t)p->row.map_node * UK_MAX_NDIM,
                                   c->device, what, result));
}

/* ------------------------------------------------------------------------ */
/* The split path: the plan's elementwise and reduction kernels in order     */
/* ------------------------------------------------------------------------ */

/* The intermediates of a split call. */
typedef struct fz_temps {
  uk_array *a; /* stack or malloc'd */
  uk_array stack[8];
  int n;       /* made (allocated, or described) */
  int alloc;
} fz_temps;

/* One planned kernel's arguments. */
typedef struct fz_kargs {
  uk_arg in[UK_FUSE_MAX_INPUTS + 32];
  uk_array out[32];
  int ax[UK_MAX_NDIM];
  uk_launch rl, el;
} fz_kargs;

/* What a split call does with each kernel (its object, its arguments);
 * `k` numbers it, `arg` is the step's own. */
typedef uk_status (*fz_step)(uk_fusion *f, const fz_call *c, int k, void *kernel, fz_kargs *a, void *arg);

static uk_status temps_make(uk_fusion *f, const fz_call *c, int alloc, fz_temps *t) {
  const uk_fuse_plan *p = c->e->plan;
  t->n = 0;
  t->alloc = alloc;
  t->a = p->ntemps <= 8 ? t->stack : calloc((size_t)p->ntemps, sizeof *t->a);
  if (!t->a) return uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
  for (; t->n < p->ntemps; t->n++) {
    int id = p->temp_node[t->n];
    const int64_t *sh = c->shapes + (size_t)id * UK_MAX_NDIM;
    if (alloc) {
      uk_status s = uk_array_alloc(f->ctx, p->type[id].dtype, p->ndim[id], sh, c->device, c->stream, &t->a[t->n]);
      if (s) return s;
    } else {
      uk_array_init(&t->a[t->n], FAKE_PTR * (uint64_t)(f->prog->nout + t->n + 1), p->type[id].dtype, p->ndim[id],
                    sh);
      t->a[t->n].device = c->device;
    }
  }
  return UK_OK;
}

/* Frees the intermediates stream-ordered after the kernels that use them. */
static void temps_free(uk_fusion *f, const fz_call *c, fz_temps *t) {
  for (int k = 0; t->alloc && k < t->n; k++) uk_array_free(f->ctx, &t->a[k], c->stream);
  if (t->a != t->stack) free(t->a);
}

/* out viewed with the reduction's keepdims shape (map shape, reduced axes 1). */
static void keepdims_view(const uk_array *a, int map_ndim, unsigned axes, uk_array *v) {
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
}

static int64_t prod(const int64_t *s, int n) {
  int64_t p = 1;
  for (int k = 0; k < n; k++) p *= s[k];
  return p;
}

/* A reduction kernel's outputs (keepdims views) and launch: its axes over
 * the map shape, which every reduction it fuses must share. */
static uk_status reduction_args(uk_fusion *f, const fz_call *c, const fz_temps *t, const uk_fuse_kernel *q,
                                fz_kargs *a) {
  const uk_fuse_prog *g = f->prog;
  const uk_fuse_plan *p = c->e->plan;
  const int64_t *ms = c->shapes + (size_t)q->map_node * UK_MAX_NDIM;
  int mnd = p->ndim[q->map_node], nax = 0;
  unsigned axes = p->axes[q->red_node];
  int64_t rsize = 1;
  for (int d = 0; d < mnd; d++)
    if ((axes >> d) & 1) {
      a->ax[nax++] = d;
      rsize *= ms[d];
    }
  for (int id = 0; !c->sig.split && id < g->nnodes; id++)
    if (p->needed[id] && g->nodes[id].kind == UK_FN_RED && id != q->red_node && p->axes[id] == axes &&
        p->ndim[g->nodes[id].arg[0]] == mnd &&
        memcmp(c->shapes + (size_t)g->nodes[id].arg[0] * UK_MAX_NDIM, ms, (size_t)mnd * sizeof *ms) != 0)
      return uk__error_at(UK_ERR_SHAPE, "program", g->text, g->nodes[id].pos, NULL,
                          "reductions over the same axes fused into one kernel must reduce operands of one shape");
  for (int j = 0; j < q->nout; j++)
    keepdims_view(q->out_dst[j] >= 0 ? &c->outs[q->out_dst[j]] : &t->a[-1 - q->out_dst[j]], mnd, axes, &a->out[j]);
  if (q->check_empty && rsize == 0 && q->nout > 0 && prod(a->out[0].shape, a->out[0].ndim) > 0)
    return uk__error_at(UK_ERR_SHAPE, "program", g->text, g->nodes[q->red_node].pos, NULL,
                        "zero-size array to a reduction with no identity (max, min, argmax, argmin)");
  a->rl = (uk_launch){.stream = c->stream, .axes = a->ax, .num_axes = nax, .keepdims = 1, .reduce_none = nax == 0};
  return UK_OK;
}

/* An elementwise kernel's outputs, which must share one shape. */
static uk_status elementwise_args(uk_fusion *f, const fz_call *c, const fz_temps *t, const uk_fuse_kernel *q,
                                  const uk_launch *launch, fz_kargs *a) {
  for (int j = 0; j < q->nout; j++) {
    a->out[j] = q->out_dst[j] >= 0 ? c->outs[q->out_dst[j]] : t->a[-1 - q->out_dst[j]];
    if (j > 0 && (a->out[j].ndim != a->out[0].ndim ||
                  memcmp(a->out[j].shape, a->out[0].shape, (size_t)a->out[0].ndim * sizeof a->out[0].shape[0]) != 0))
      return uk__errorf(UK_ERR_SHAPE,
                        "%s: outputs '%s' and '%s' are computed elementwise but have different shapes; compute "
                        "them in separate fusions",
                        f->name, f->prog->out_names[q->out_dst[0]], f->prog->out_names[q->out_dst[j]]);
  }
  a->el = (uk_launch){.stream = c->stream, .block_size = launch ? launch->block_size : 0};
  return UK_OK;
}

/* Makes the intermediates, then each kernel's arguments and the step on
 * it, in order; errors name the kernel. */
static uk_status split_run(uk_fusion *f, const fz_call *c, const uk_arg *in, const uk_launch *launch, int alloc,
                           fz_step step, void *arg) {
  const uk_fuse_plan *p = c->e->plan;
  fz_temps t;
  uk_status s = temps_make(f, c, alloc, &t);
  for (int k = 0; !s && k < p->nkernels; k++) {
    const uk_fuse_kernel *q = &p->kernels[k];
    fz_kargs a;
    if (q->nin > (int)(sizeof a.in / sizeof a.in[0]) || q->nout > (int)(sizeof a.out / sizeof a.out[0])) {
      s = uk__errorf(UK_ERR_INVALID, "%s: too many intermediates", f->name);
      break;
    }
    for (int j = 0; j < q->nin; j++)
      a.in[j] = q->in_src[j] >= 0 ? in[q->in_src[j]] : uk_arg_array(&t.a[-1 - q->in_src[j]]);
    if ((s = q->is_reduction ? reduction_args(f, c, &t, q, &a) : elementwise_args(f, c, &t, q, launch, &a))) break;
    if ((s = step(f, c, k, c->e->kernels[k], &a, arg)))
      uk__error_prefix("%s (kernel %d of %d, '%s')", f->name, k + 1, p->nkernels, q->name);
  }
  temps_free(f, c, &t);
  return s;
}

static uk_status step_call(uk_fusion *f, const fz_call *c, int k, void *kernel, fz_kargs *a, void *arg) {
  const uk_fuse_kernel *q = &c->e->plan->kernels[k];
  (void)f, (void)arg;
  return q->is_reduction ? uk_reduction_call(kernel, a->in, q->nin, a->out, q->nout, &a->rl)
                         : uk_elementwise_call(kernel, a->in, q->nin, a->out, q->nout, &a->el);
}

static uk_status step_precompile(uk_fusion *f, const fz_call *c, int k, void *kernel, fz_kargs *a, void *arg) {
  const uk_fuse_kernel *q = &c->e->plan->kernels[k];
  (void)f, (void)arg;
  return q->is_reduction ? uk_reduction_precompile(kernel, a->in, q->nin, a->out, q->nout, &a->rl)
                         : uk_elementwise_precompile(kernel, a->in, q->nin, a->out, q->nout, &a->el);
}

/* arg: the uk_strbuf the kernels' sources join, each under a banner. */
static uk_status step_source(uk_fusion *f, const fz_call *c, int k, void *kernel, fz_kargs *a, void *arg) {
  const uk_fuse_plan *p = c->e->plan;
  const uk_fuse_kernel *q = &p->kernels[k];
  char *ks = NULL;
  uk_status s = q->is_reduction ? uk_reduction_source(kernel, a->in, q->nin, a->out, q->nout, &a->rl, &ks)
                                : uk_elementwise_source(kernel, a->in, q->nin, a->out, q->nout, &a->el, &ks);
  if (s) return s;
  uk__sb_addf(arg, "// ==== ukern fusion '%s': kernel %d of %d (%s '%s') ====\n", f->name, k + 1, p->nkernels,
              q->is_reduction ? "reduction" : "elementwise", q->name);
  uk__sb_add(arg, ks);
  uk_free(ks);
  return UK_OK;
}

/* arg: the uk_compile_info the kernels' add to (sizes and times summed,
 * logs joined in kernel order). */
static uk_status step_info(uk_fusion *f, const fz_call *c, int k, void *kernel, fz_kargs *a, void *arg) {
  const uk_fuse_kernel *q = &c->e->plan->kernels[k];
  uk_compile_info *all = arg, one = {0};
  (void)f;
  uk_status s = q->is_reduction ? uk_reduction_compile_info(kernel, a->in, q->nin, a->out, q->nout, &a->rl, &one)
                                : uk_elementwise_compile_info(kernel, a->in, q->nin, a->out, q->nout, &a->el, &one);
  if (s || !one.log) return s; /* nothing to compute: nothing compiled */
  size_t n = all->log ? strlen(all->log) : 0, m = strlen(one.log);
  char *log = realloc(all->log, n + m + 1);
  if (!log) {
    uk_free(one.log);
    return uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
  }
  memcpy(log + n, one.log, m + 1);
  all->log = log;
  all->arch = one.arch;
  all->is_ptx = one.is_ptx;
  all->image_bytes += one.image_bytes;
  all->ms += one.ms;
  uk_free(one.log);
  return UK_OK;
}

/* ------------------------------------------------------------------------ */
/* The public calls, each a composition of the stages                        */
/* ------------------------------------------------------------------------ */

uk_status uk_fusion_call(uk_fusion *f, const uk_arg *in, int nin, uk_array *out, int nout, const uk_launch *launch) {
  if (!f) return uk__errorf(UK_ERR_INVALID, "uk_fusion: object is NULL");
  fz_call c;
  uk_status s = begin(f, in, nin, out, nout, launch, &c);
  if (!s) s = outputs(f, &c, in, out, 1);
  if (!s) s = c.row ? row_call(f, &c, in) : split_run(f, &c, in, launch, 1, step_call, NULL);
  return finish(f, &c, s, out);
}

uk_status uk_fusion_precompile(uk_fusion *f, const uk_arg *in, int nin, uk_array *out, int nout,
                               const uk_launch *launch) {
  if (!f) return uk__errorf(UK_ERR_INVALID, "uk_fusion: object is NULL");
  fz_call c;
  uk_status s = begin(f, in, nin, out, nout, launch, &c);
  if (!s) s = outputs(f, &c, in, out, 0);
  if (!s)
    s = c.row ? row_offline(f, &c, in, UK__OFFLINE_PRECOMPILE, NULL)
              : split_run(f, &c, in, launch, 0, step_precompile, NULL);
  return finish(f, &c, s, NULL);
}

uk_status uk_fusion_source(uk_fusion *f, const uk_arg *in, int nin, uk_array *out, int nout, const uk_launch *launch,
                           char **source) {
  if (!f) return uk__errorf(UK_ERR_INVALID, "uk_fusion: object is NULL");
  if (!source) return uk__errorf(UK_ERR_INVALID, "uk_fusion_source: source is NULL");
  fz_call c;
  uk_strbuf src;
  uk__sb_init(&src);
  uk_status s = begin(f, in, nin, out, nout, launch, &c);
  if (!s) s = outputs(f, &c, in, out, 0);
  if (!s && c.row) {
    char *rs = NULL, how[160];
    uk__row_describe(c.e->row, in, c.outs, c.shapes + (size_t)c.e->plan->row.map_node * UK_MAX_NDIM, c.device, how,
                     sizeof how);
    uk__sb_addf(&src, "// ==== ukern fusion '%s': kernel 1 of 1 (row '%s') ====\n// row plan: %s\n", f->name,
                c.e->plan->row.name, how);
    if (!(s = row_offline(f, &c, in, UK__OFFLINE_SOURCE, &rs))) uk__sb_add(&src, rs);
    uk_free(rs);
  } else if (!s) {
    s = split_run(f, &c, in, launch, 0, step_source, &src);
  }
  if (!s && !(*source = uk__sb_detach(&src))) s = uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
  uk__sb_release(&src);
  return finish(f, &c, s, NULL);
}

uk_status uk_fusion_compile_info(uk_fusion *f, const uk_arg *in, int nin, uk_array *out, int nout,
                                 const uk_launch *launch, uk_compile_info *info) {
  if (!f) return uk__errorf(UK_ERR_INVALID, "uk_fusion: object is NULL");
  if (!info) return uk__errorf(UK_ERR_INVALID, "uk_fusion_compile_info: info is NULL");
  fz_call c;
  uk_compile_info all = {0};
  uk_status s = begin(f, in, nin, out, nout, launch, &c);
  if (!s) s = outputs(f, &c, in, out, 0);
  if (!s) s = c.row ? row_offline(f, &c, in, UK__OFFLINE_INFO, &all) : split_run(f, &c, in, launch, 0, step_info, &all);
  if (s) uk_free(all.log);
  else *info = all;
  return finish(f, &c, s, NULL);
}

uk_status uk_fusion_kernel_count(uk_fusion *f, const uk_arg *in, int nin, uk_array *out, int nout,
                                 const uk_launch *launch, int *count) {
  if (!f || !count) return uk__errorf(UK_ERR_INVALID, "uk_fusion_kernel_count: NULL argument");
  fz_call c;
  uk_status s = begin(f, in, nin, out, nout, launch, &c);
  if (!s) s = outputs(f, &c, in, out, 0);
  if (!s) *count = c.row ? 1 : c.e->plan->nkernels;
  return finish(f, &c, s, NULL);
}
