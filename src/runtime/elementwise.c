/* ElementwiseKernel: what differs from the other generated kinds.
 *
 * A call binds its arguments (kernel_args.h), broadcasts and merges the
 * loop, and plans the variant (codegen/ew_plan.h) into a uk_ew_key; the
 * shared stages (kernel_pipeline.h) map the key to a compiled specialisation
 * and the launch frame (launch_frame.h) runs it. The hit path allocates
 * nothing but the outputs the caller asked for and builds no text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "codegen/defcheck.h"
#include "codegen/dtype.h"
#include "codegen/ew_plan.h"
#include "codegen/shape.h"
#include "runtime/kernel_common.h"
#include "runtime/launch_frame.h"

struct uk_elementwise {
  uk__kernel base; /* first: the shared stages see the object through it */
  char *operation, *preamble, *loop_prep, *after_loop;
  int no_reduce_dims;
  uk_ew_kernel k;
};

/* Everything a call decides before touching the device. */
typedef struct prep {
  uk__call c;
  uk_ew_key key;
  uk_loop loop; /* merged */
} prep;

/* A call's frame (prep, argument buffer, launch frame, locals; 4 KiB for
 * the rest) stays within the documented bound. */
_Static_assert(sizeof(prep) + UK__PARAM_BYTES_MAX + sizeof(uk__frame) + 8 * UK_MAX_PARAMS + 4096 <= UK_CALL_STACK_BYTES,
               "UK_CALL_STACK_BYTES");

static const uk_elementwise *self(const uk__kernel *kd) { return (const uk_elementwise *)kd; }

/* ------------------------------------------------------------------------ */
/* The kind                                                                  */
/* ------------------------------------------------------------------------ */

static uk_status kind_emit(const uk__kernel *kd, const void *key, uk_strbuf *src, uk_plan *plan) {
  return uk__ew_emit(&self(kd)->k, key, src, plan);
}

static void kind_describe(const uk__kernel *kd, const void *kv, char *buf, size_t size) {
  const uk_ew_key *key = kv;
  char v[96];
  size_t n = uk__kernel_describe(kd, "", &key->p, buf, size);
  snprintf(buf + n, size - n, "; %s)", uk__ew_describe(key, v, sizeof v));
}

static void kind_compile(const uk__kernel *kd, const void *key, uk__kind_compile *out) {
  out->extra = uk__ew_nvrtc_options(&self(kd)->k, key);
}

/* One function per module, looked up once at load. */
static uk_status kind_loaded(const uk__kernel *kd, uk__spec *e, const struct uk__binary *bin) {
  (void)bin;
  CUfunction f;
  return uk__spec_function(kd, e, 0, "", &f);
}

static uk_status prepare(const uk__kernel *kd, const uk_arg *in, int nin, const uk_array *out, int nout,
                         const void *launch_v, void *prep_v);

static const uk__kind ew_kind = {"an elementwise kernel", sizeof(uk_ew_key), kind_emit, kind_describe, kind_compile,
                                 kind_loaded,    prepare,       sizeof(prep), NULL};

/* ------------------------------------------------------------------------ */
/* Creating                                                                  */
/* ------------------------------------------------------------------------ */

uk_status uk_elementwise_create(uk_context *ctx, const uk_elementwise_spec *spec, uk_elementwise **out) {
  uk__error_clear();
  if (!ctx || !spec || !out) return uk__errorf(UK_ERR_INVALID, "uk_elementwise_create: NULL argument");
  const char *missing = !spec->in_params    ? "in_params"
                        : !spec->out_params ? "out_params"
                        : !spec->operation  ? "operation"
                                            : NULL;
  if (missing) return uk__errorf(UK_ERR_INVALID, "uk_elementwise_spec: %s is NULL (hint: it is required)", missing);
  const char *name = spec->name ? spec->name : "kernel";
  uk_elementwise *k = calloc(1, sizeof *k);
  if (!k) return uk__errorf(UK_ERR_NOMEM, "out of memory creating an elementwise kernel");
  uk_status st = uk__kernel_init(&k->base, &ew_kind, ctx, "uk_elementwise_spec", spec->in_params, spec->out_params,
                                 name, spec->options, spec->num_options);
  if (st != UK_OK || (st = uk__defcheck_code("operation", spec->operation)) != UK_OK ||
      (st = uk__defcheck_code("loop_prep", spec->loop_prep)) != UK_OK ||
      (st = uk__defcheck_code("after_loop", spec->after_loop)) != UK_OK)
    goto out;
  int failed = 0;
  k->operation = uk__strdup_opt(spec->operation, &failed);
  k->preamble = uk__strdup_opt(spec->preamble, &failed);
  k->loop_prep = uk__strdup_opt(spec->loop_prep, &failed);
  k->after_loop = uk__strdup_opt(spec->after_loop, &failed);
  k->no_reduce_dims = spec->no_reduce_dims != 0;
  if (failed) {
    st = uk__errorf(UK_ERR_NOMEM, "out of memory creating an elementwise kernel");
    goto out;
  }
  k->k.name = k->base.name;
  k->k.operation = k->operation;
  k->k.preamble = k->preamble;
  k->k.loop_prep = k->loop_prep;
  k->k.after_loop = k->after_loop;
  k->k.in = &k->base.in;
  k->k.out = &k->base.out;
  uk__ew_scan(&k->k);
  *out = k;
  return UK_OK;
out:
  uk_elementwise_destroy(k);
  return st;
}

void uk_elementwise_destroy(uk_elementwise *k) {
  if (!k) return;
  uk__kernel_free(&k->base);
  free(k->operation);
  free(k->preamble);
  free(k->loop_prep);
  free(k->after_loop);
  free(k);
}

/* The generated source of a call, without running it. */
uk_status uk_elementwise_source(uk_elementwise *k, const uk_arg *in, int nin, uk_array *out, int nout,
                                const uk_launch *launch, char **source) {
  return uk__kernel_offline("uk_elementwise_source", (uk__kernel *)k, in, nin, out, nout, launch, UK__OFFLINE_SOURCE,
                            source);
}

uk_status uk_elementwise_param_counts(const uk_elementwise *k, int *nin, int *nout) {
  return uk__kernel_param_counts("uk_elementwise_param_counts", (const uk__kernel *)k, nin, nout);
}

/* ------------------------------------------------------------------------ */
/* Preparing a call (no device work)                                         */
/* ------------------------------------------------------------------------ */

/* The loop: the non-raw arrays broadcast, or `size` when every array is raw. */
static uk_status loop_of(const uk_elementwise *k, const prep *pr, int64_t size, uk_loop *L) {
  const uk__kernel *kd = &k->base;
  uk_operand_view views[UK_MAX_ARRAY_OPERANDS];
  int nviews = 0, nonraw = -1, nin = kd->in.count, np = nin + kd->out.count;
  for (int p = 0; p < np; p++) {
    const uk_array *a = pr->c.arr[p];
    const uk_param *prm = uk__kernel_param(kd, p);
    if (!a || prm->is_raw) continue;
    if (nonraw < 0) nonraw = p;
    if (nviews == UK_MAX_ARRAY_OPERANDS)
      return uk__errorf(UK_ERR_INVALID, "%s: more than %d non-raw array arguments (UK_MAX_ARRAY_OPERANDS)", kd->name,
                        UK_MAX_ARRAY_OPERANDS);
    views[nviews++] = (uk_operand_view){prm->name, a->ndim, a->shape, a->strides, (int64_t)uk__dtype_size(a->dtype)};
  }
  if (size >= 0 && nonraw >= 0)
    /* Messages start with CuPy's words: code written for CuPy matches on them. */
    return uk__errorf(UK_ERR_SHAPE,
                      "Specified 'size' can be used only if all of the ndarray are 'raw'. %s: size is given (%lld) "
                      "but %s '%s' is not raw (pass size = -1 or 0)",
                      kd->name, (long long)size, uk__kernel_role(kd, nonraw), uk__kernel_param(kd, nonraw)->name);
  if (size < 0 && nonraw < 0)
    return uk__errorf(UK_ERR_SHAPE, "Loop size is undecided. %s: no non-raw array gives the loop shape: pass size",
                      kd->name);
  if (size >= 0) {
    memset(L, 0, sizeof *L);
    L->ndim = 1;
    L->shape[0] = size;
    L->size = size;
    return UK_OK;
  }
  return uk__call_broadcast(kd, nviews, views, L);
}

/* Inline in uk_elementwise_call (its one hot caller; the kind table keeps
 * an out-of-line copy for the offline calls): a call then pays no second
 * frame for the checks at its head. */
static inline __attribute__((always_inline)) uk_status prepare(const uk__kernel *kd, const uk_arg *in, int nin,
                                                               const uk_array *out, int nout, const void *launch_v,
                                                               void *prep_v) {
  prep *pr = prep_v;
  const uk_launch *launch = launch_v; /* may be NULL */
  const uk_elementwise *k = self(kd);
  uk_status st = uk__launch_check(kd->name, launch, UK__TAKES_SIZE | UK__TAKES_BLOCK);
  if (st != UK_OK) return st;
  if (launch && launch->size < -1)
    return uk__errorf(UK_ERR_INVALID, "%s: size %lld is negative (use -1 or 0 for none)", kd->name,
                      (long long)launch->size);
  /* 0 and -1 both mean "no size", so a zero-initialised uk_launch works. */
  int64_t size = launch && launch->size > 0 ? launch->size : -1;
  if ((st = uk__call_bind(kd, in, nin, out, nout, &pr->c)) != UK_OK) return st;
  uk_loop *L = &pr->loop;
  if ((st = loop_of(k, pr, size, L)) != UK_OK) return st;
  if ((st = uk__call_outputs(kd, &pr->c, out, L->ndim, L->shape, "loop", 1)) != UK_OK) return st;
  /* Allocated non-raw outputs join the loop (given ones are in it). */
  for (int j = 0; j < nout && !pr->c.b.outputs_given; j++) {
    const uk_array *o = &pr->c.outs[j];
    if (uk__kernel_param(kd, nin + j)->is_raw) continue;
    if (L->nops == UK_MAX_ARRAY_OPERANDS)
      return uk__errorf(UK_ERR_INVALID, "%s: more than %d non-raw array arguments (UK_MAX_ARRAY_OPERANDS)", kd->name,
                        UK_MAX_ARRAY_OPERANDS);
    for (int d = 0; d < L->ndim; d++) L->strides[L->nops][d] = L->shape[d] == 1 ? 0 : o->strides[d];
    L->nops++;
  }
  if (!k->no_reduce_dims) uk__shape_merge(L);

  uk_ew_key *key = &pr->key;
  memset(key, 0, sizeof *key);
  if ((st = uk__call_key_params(kd, &pr->c, in, k->k.raw_view_mask, "the operation", &key->p)) != UK_OK) return st;
  uint64_t data[UK_MAX_PARAMS];
  for (int p = 0; p < nin + nout; p++) data[p] = pr->c.arr[p] ? pr->c.arr[p]->data : 0;
  uk__ew_choose(&k->k, L, data, launch ? launch->block_size : 0, key);
  pr->c.key = key;
  pr->c.empty = L->size == 0;
  return UK_OK;
}

/* ------------------------------------------------------------------------ */
/* Launching                                                                 */
/* ------------------------------------------------------------------------ */

static void put(unsigned char *buf, const uk_slot *s, int64_t v) {
  if (s->size == 4) {
    int32_t w = (int32_t)v;
    memcpy(buf + s->offset, &w, 4);
  } else {
    memcpy(buf + s->offset, &v, 8);
  }
}

static void pack(const uk__spec *e, const prep *pr, const uk_ew_geom *g, const uint64_t *ptr, unsigned char *buf) {
  const uk_loop *L = &pr->loop;
  for (int j = 0; j < e->plan.nslots; j++) {
    const uk_slot *s = &e->plan.slots[j];
    if (uk__call_pack(s, &pr->c, ptr, buf)) continue;
    switch (s->kind) {
    case UK_EW_SLOT_STRIDE: put(buf, s, L->strides[s->op][s->dim]); break;
    case UK_EW_SLOT_SHAPE: put(buf, s, L->shape[s->dim]); break;
    case UK_EW_SLOT_SIZE: put(buf, s, L->size); break;
    case UK_EW_SLOT_ROWS: put(buf, s, L->size / L->shape[L->ndim - 1]); break;
    case UK_EW_SLOT_LANES: put(buf, s, g->lanes); break;
    }
  }
}

/* The NVRTC options of a call's compile, without compiling. */
uk_status uk_elementwise_nvrtc_options(uk_elementwise *k, const uk_arg *in, int nin, uk_array *out, int nout,
                                       const uk_launch *launch, char ***options) {
  return uk__kernel_offline("uk_elementwise_nvrtc_options", (uk__kernel *)k, in, nin, out, nout, launch,
                            UK__OFFLINE_OPTIONS, options);
}

uk_status uk_elementwise_call(uk_elementwise *k, const uk_arg *in, int nin, uk_array *out, int nout,
                              const uk_launch *launch) {
  uk__error_clear();
  if (!k) return uk__errorf(UK_ERR_INVALID, "uk_elementwise_call: kernel is NULL");
  int block = launch ? launch->block_size : 0;
  if (block < 0 || block > 1024)
    return uk__errorf(UK_ERR_INVALID, "%s: block_size %d is out of range (1..1024, or 0 for the default)",
                      k->base.name, block);
  prep pr;
  uk_status st = prepare(&k->base, in, nin, out, nout, launch, &pr);
  if (st != UK_OK) return st;
  uk__frame f;
  uk__spec *e = NULL;
  if ((st = uk__frame_enter(&f, &k->base, pr.c.device, launch ? launch->stream : NULL)) != UK_OK) goto out;
  if (pr.loop.size > 0) {
    pr.key.device = f.device;
    if ((st = uk__kernel_specialise(&k->base, &pr.key, f.device, &e)) != UK_OK) goto out;
  }
  if ((st = uk__frame_outputs(&f, &pr.c, nout, pr.loop.size)) != UK_OK) goto out;
  if (!e) goto out; /* zero-size loop: nothing to compile or launch */
  if ((st = uk__frame_operands(&f, &k->base, &pr.c)) != UK_OK) goto out;
  _Alignas(16) unsigned char buf[UK__PARAM_BYTES_MAX];
  uk_ew_geom g;
  uk__ew_grid(&pr.key, &pr.loop, block, uk__device_sm_count(f.device), &g);
  pack(e, &pr, &g, f.ptr, buf);
  st = uk__frame_launch(&f, atomic_load_explicit(&e->fn[0], memory_order_relaxed), g.blocks, g.blocks_y, g.threads, 0,
                        buf, e->plan.bytes);
out:
  return uk__frame_leave(&f, &pr.c, st, out, nout);
}

/* Precompile, with what the compile gave. */
uk_status uk_elementwise_compile_info(uk_elementwise *k, const uk_arg *in, int nin, uk_array *out, int nout,
                                      const uk_launch *launch, uk_compile_info *info) {
  return uk__kernel_offline("uk_elementwise_compile_info", (uk__kernel *)k, in, nin, out, nout, launch,
                            UK__OFFLINE_INFO, info);
}

/* The compile a call would make, into the caches, without running it. */
uk_status uk_elementwise_precompile(uk_elementwise *k, const uk_arg *in, int nin, uk_array *out, int nout,
                                    const uk_launch *launch) {
  return uk__kernel_offline("uk_elementwise_precompile", (uk__kernel *)k, in, nin, out, nout, launch,
                            UK__OFFLINE_PRECOMPILE, NULL);
}
