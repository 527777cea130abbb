/* ElementwiseKernel: definition, per-call specialisation, launch.
 *
 * A call binds placeholders, broadcasts and merges the loop, and forms a
 * uk_ew_key; a per-kernel list of compiled specialisations (lock-free to
 * read, appended under the kernel's mutex) maps the key to a loaded
 * function and the plan of its parameter buffer. The hit path allocates
 * nothing but the outputs the caller asked for and builds no text. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "codegen/bind.h"
#include "codegen/dtype.h"
#include "codegen/defcheck.h"
#include "codegen/ew_emit.h"
#include "codegen/params.h"
#include "codegen/scalar.h"
#include "codegen/shape.h"
#include "runtime/context.h"
#include "runtime/device.h"
#include "runtime/kernel_common.h"

#define DEFAULT_BLOCK 256

typedef struct ew_entry {
  struct ew_entry *next;
  uk_ew_key key;
  uk_ew_plan plan;
  CUmodule module;
  CUfunction fn;
} ew_entry;

struct uk_elementwise {
  uk_context *ctx;
  char *name, *operation, *preamble, *loop_prep, *after_loop;
  char **options;
  int num_options;
  int no_reduce_dims;
  uk_paramlist in, out;
  uk_ew_kernel k;
  pthread_mutex_t lock;          /* serialises compiles and inserts */
  _Atomic(ew_entry *) entries;   /* published with release, read with acquire */
};

/* Everything a call decides before touching the device. */
typedef struct prep {
  uk_binding b;
  uk_ew_key key;
  uk_loop loop;                          /* merged */
  int ndim;                              /* allocated outputs' shape: the loop's before merging */
  int64_t shape[UK_MAX_NDIM];
  const uk_array *arr[UK_MAX_PARAMS];    /* per parameter; NULL for scalars; outputs point at outs */
  uk_array outs[UK_MAX_PARAMS];          /* outputs: given ones copied, allocated ones described */
  unsigned char scalar[UK_MAX_PARAMS][16];
  int device;                            /* the arrays' device; -1 when no array is given */
} prep;

uk_status uk_elementwise_create(uk_context *ctx, const char *in_params, const char *out_params,
                                const char *operation, const char *name, const uk_elementwise_options *opts,
                                uk_elementwise **out) {
  uk__error_clear();
  if (!ctx || !in_params || !out_params || !operation || !name || !out)
    return uk__errorf(UK_ERR_INVALID, "uk_elementwise_create: NULL argument");
  if (opts && (opts->num_options < 0 || (opts->num_options > 0 && !opts->options)))
    return uk__errorf(UK_ERR_INVALID, "uk_elementwise_options: num_options is %d but options is %s",
                      opts->num_options, opts->options ? "set" : "NULL");
  uk_status st;
  uk_elementwise *k = calloc(1, sizeof *k);
  if (!k) return uk__errorf(UK_ERR_NOMEM, "out of memory creating an elementwise kernel");
  k->ctx = ctx;
  uk__context_retain(ctx);
  pthread_mutex_init(&k->lock, NULL);
  atomic_init(&k->entries, NULL);
  if ((st = uk__params_parse(in_params, "in_params", &k->in)) != UK_OK ||
      (st = uk__params_parse(out_params, "out_params", &k->out)) != UK_OK ||
      (st = uk__params_check_kernel(in_params, &k->in, out_params, &k->out, name)) != UK_OK ||
      (st = uk__defcheck_fields("operation", operation, "loop_prep", opts ? opts->loop_prep : NULL,
                                "after_loop", opts ? opts->after_loop : NULL, (const char *)NULL)) != UK_OK)
    goto out;
  if (k->in.count + k->out.count > UK_MAX_PARAMS) {
    st = uk__errorf(UK_ERR_INVALID, "%s: too many parameters (%d, at most %d)", name, k->in.count + k->out.count,
                    UK_MAX_PARAMS);
    goto out;
  }
  if (k->out.count == 0) {
    st = uk__errorf(UK_ERR_INVALID, "%s: an elementwise kernel needs at least one output", name);
    goto out;
  }
  int failed = 0;
  k->name = uk__strdup_opt(name, &failed);
  k->operation = uk__strdup_opt(operation, &failed);
  if (opts) {
    k->preamble = uk__strdup_opt(opts->preamble, &failed);
    k->loop_prep = uk__strdup_opt(opts->loop_prep, &failed);
    k->after_loop = uk__strdup_opt(opts->after_loop, &failed);
    k->no_reduce_dims = opts->no_reduce_dims != 0;
    if (opts->num_options > 0 && !failed) {
      k->options = calloc((size_t)opts->num_options, sizeof *k->options);
      if (!k->options) failed = 1;
      for (int j = 0; j < opts->num_options && !failed; j++) {
        if (!opts->options[j]) {
          st = uk__errorf(UK_ERR_INVALID, "uk_elementwise_options: options[%d] is NULL", j);
          goto out;
        }
        k->options[j] = uk__strdup_opt(opts->options[j], &failed);
        k->num_options = j + 1;
      }
    }
  }
  if (failed) {
    st = uk__errorf(UK_ERR_NOMEM, "out of memory creating an elementwise kernel");
    goto out;
  }
  k->k.name = k->name;
  k->k.operation = k->operation;
  k->k.preamble = k->preamble;
  k->k.loop_prep = k->loop_prep;
  k->k.after_loop = k->after_loop;
  k->k.in = &k->in;
  k->k.out = &k->out;
  uk__ew_scan(&k->k);
  *out = k;
  return UK_OK;
out:
  uk_elementwise_destroy(k);
  return st;
}

void uk_elementwise_destroy(uk_elementwise *k) {
  if (!k) return;
  ew_entry *e = atomic_load(&k->entries);
  while (e) {
    ew_entry *next = e->next;
    if (e->module) {
      int pushed = 0;
      if (uk__device_enter(e->key.device, &pushed) == UK_OK) {
        uk__cu.cuModuleUnload(e->module);
        uk__device_leave(pushed);
      }
    }
    uk__ew_plan_free(&e->plan);
    free(e);
    e = next;
  }
  uk__params_free(&k->in);
  uk__params_free(&k->out);
  for (int j = 0; j < k->num_options; j++) free(k->options[j]);
  free(k->options);
  free(k->name);
  free(k->operation);
  free(k->preamble);
  free(k->loop_prep);
  free(k->after_loop);
  pthread_mutex_destroy(&k->lock);
  uk__context_release(k->ctx);
  free(k);
}

/* ------------------------------------------------------------------------ */
/* Preparing a call (no device work)                                         */
/* ------------------------------------------------------------------------ */

static const uk_param *param_at(const uk_elementwise *k, int p) {
  return p < k->in.count ? &k->in.items[p] : &k->out.items[p - k->in.count];
}

static const char *role(const uk_elementwise *k, int p) { return p < k->in.count ? "input" : "output"; }

/* A 2-d loop where some operands walk memory fastest along axis 0 and
 * others along axis 1 (a transposed view): the tiled variant, with lanes
 * along the axis most bytes are fastest on, stages the other operands
 * through shared memory. A loop whose operands all run fastest along axis 0
 * takes it too, with nothing staged (the strided loop would not coalesce).
 * Operands with a zero stride follow whatever order the lanes take. */
static void choose_tiles(const uk_elementwise *k, uk_ew_key *key, const uk_loop *L, const int64_t *items) {
  if (L->ndim != 2 || L->shape[0] < 16 || L->shape[1] < 16) return;
  int64_t votes[2] = {0, 0};
  int fast[UK_MAX_PARAMS], np = k->in.count + k->out.count, out_fast = -1;
  for (int p = 0, op = 0; p < np; p++) {
    fast[p] = -1;
    if (!uk__ew_loop_operand(&k->k, key, p, &op)) continue;
    int64_t s0 = L->strides[op][0], s1 = L->strides[op][1];
    if (s0 == 0 || s1 == 0) continue;
    s0 = s0 < 0 ? -s0 : s0;
    s1 = s1 < 0 ? -s1 : s1;
    /* Staging only helps an operand whose fast stride is near its item. */
    int f = s0 < s1 ? 0 : 1;
    if ((f ? s1 : s0) > 4 * items[op]) continue;
    fast[p] = f;
    votes[f] += items[op];
    if (p >= k->in.count && out_fast < 0) out_fast = f;
  }
  int lanes = votes[0] > votes[1] ? 0 : votes[1] > votes[0] ? 1 : out_fast == 0 ? 0 : 1;
  uint64_t mask = 0;
  size_t shared = 0;
  for (int p = 0, op = 0; p < np; p++) {
    if (fast[p] < 0 || fast[p] == lanes) continue;
    uk__ew_loop_operand(&k->k, key, p, &op);
    mask |= 1ull << p;
    shared += (size_t)items[op] * 32 * 33;
  }
  /* Static shared memory is capped at 48 KiB per block. */
  if ((!mask && lanes == 1) || shared > 48 * 1024) return;
  key->variant = UK_EW_TILED;
  key->tile_mask = mask;
  key->tile_fast = (uint8_t)lanes;
}

static uk_status prepare(const uk_elementwise *k, const uk_arg *in, int nin, const uk_array *out, int nout,
                         const uk_launch *launch, prep *pr) {
  const char *name = k->name;
  uk_status st = uk__bind(name, &k->in, &k->out, in, nin, out, nout, &pr->b);
  if (st != UK_OK) return st;
  int np = nin + nout;
  /* 0 and -1 both mean "no size", so a zero-initialised uk_launch works. */
  int64_t size = launch && launch->size > 0 ? launch->size : -1;
  if (launch && launch->size < -1)
    return uk__errorf(UK_ERR_INVALID, "%s: size %lld is negative (use -1 or 0 for none)", name,
                      (long long)launch->size);
  int given = pr->b.outputs_given;

  /* Arrays, their device, and the operands the loop walks. */
  int dev_param = -1;
  pr->device = -1;
  uk_operand_view views[UK_MAX_NDIM];
  int nviews = 0, nonraw = -1;
  for (int p = 0; p < np; p++) {
    const uk_array *a = p < nin ? (pr->b.is_array[p] ? in[p].v.array : NULL) : (given ? &out[p - nin] : NULL);
    pr->arr[p] = a;
    if (!a) continue;
    if (dev_param < 0) {
      dev_param = p;
      pr->device = a->device;
    } else if (a->device != pr->device) {
      return uk__errorf(UK_ERR_INVALID, "%s: %s '%s' is on device %d but %s '%s' is on device %d", name,
                        role(k, dev_param), param_at(k, dev_param)->name, pr->device, role(k, p), param_at(k, p)->name,
                        a->device);
    }
    if (param_at(k, p)->is_raw) continue;
    if (nonraw < 0) nonraw = p;
    if (nviews == UK_MAX_NDIM)
      return uk__errorf(UK_ERR_INVALID, "%s: more than %d non-raw array arguments", name, UK_MAX_NDIM);
    views[nviews++] = (uk_operand_view){param_at(k, p)->name, a->ndim, a->shape, a->strides,
                                        (int64_t)uk_dtype_size(a->dtype)};
  }
  if (size >= 0 && nonraw >= 0)
    return uk__errorf(UK_ERR_SHAPE,
                      "%s: size is given (%lld) but %s '%s' is not raw: size is only for kernels whose array "
                      "arguments are all raw (pass size = -1 or 0)",
                      name, (long long)size, role(k, nonraw), param_at(k, nonraw)->name);
  if (size < 0 && nonraw < 0) return uk__errorf(UK_ERR_SHAPE, "%s: loop size is undecided: pass size", name);

  uk_loop *L = &pr->loop;
  if (size >= 0) {
    L->ndim = 1;
    L->shape[0] = size;
    L->size = size;
    L->nops = 0;
  } else if ((st = uk__shape_broadcast(nviews, views, L)) != UK_OK) {
    uk__error_prefix("%s", name);
    return st;
  }
  pr->ndim = L->ndim;
  memcpy(pr->shape, L->shape, sizeof(int64_t) * (size_t)L->ndim);

  /* Outputs: given non-raw ones must have the loop shape; allocated ones
   * are described now (C-contiguous) and join the loop. */
  for (int j = 0; j < nout; j++) {
    int p = nin + j;
    uk_array *o = &pr->outs[j];
    if (given) {
      *o = out[j];
      if (param_at(k, p)->is_raw) continue;
      int same = o->ndim == L->ndim;
      for (int d = 0; same && d < L->ndim; d++) same = o->shape[d] == L->shape[d];
      if (!same) {
        char a[200], b[200];
        return uk__errorf(UK_ERR_SHAPE, "%s: output '%s' has shape %s but the loop shape is %s", name,
                          param_at(k, p)->name, uk__shape_str(o->ndim, o->shape, a, sizeof a),
                          uk__shape_str(L->ndim, L->shape, b, sizeof b));
      }
      continue;
    }
    memset(o, 0, sizeof *o);
    o->dtype = (uk_dtype)pr->b.dtype[p];
    o->ndim = pr->ndim;
    int64_t stride = (int64_t)uk_dtype_size(o->dtype);
    for (int d = pr->ndim - 1; d >= 0; d--) {
      o->shape[d] = pr->shape[d];
      o->strides[d] = stride;
      stride *= pr->shape[d] > 0 ? pr->shape[d] : 1;
    }
    pr->arr[p] = o;
    if (param_at(k, p)->is_raw) continue;
    if (L->nops == UK_MAX_NDIM)
      return uk__errorf(UK_ERR_INVALID, "%s: more than %d non-raw array arguments", name, UK_MAX_NDIM);
    for (int d = 0; d < L->ndim; d++) L->strides[L->nops][d] = L->shape[d] == 1 ? 0 : o->strides[d];
    L->nops++;
  }
  if (!k->no_reduce_dims) uk__shape_merge(L);

  /* The key. */
  uk_ew_key *key = &pr->key;
  memset(key, 0, sizeof *key);
  for (int p = 0; p < np; p++) {
    key->dtype[p] = (uint8_t)pr->b.dtype[p];
    const uk_param *prm = param_at(k, p);
    if (p < nin && pr->b.is_texture[p]) { /* passed by value like a scalar */
      key->scalar_mask |= 1ull << p;
      key->texture_mask |= 1ull << p;
      memcpy(pr->scalar[p], &in[p].v.texture, sizeof in[p].v.texture);
      continue;
    }
    if (!pr->arr[p]) {
      key->scalar_mask |= 1ull << p;
      if ((k->k.raw_view_mask >> p) & 1)
        return uk__errorf(UK_ERR_INVALID, "%s: the operation uses '_raw_%s' but input '%s' is a scalar, not an array",
                          name, prm->name, prm->name);
      if ((st = uk__scalar_convert(&in[p], (uk_dtype)pr->b.dtype[p], prm->name, pr->scalar[p])) != UK_OK) return st;
      continue;
    }
    if (prm->is_raw || ((k->k.raw_view_mask >> p) & 1)) {
      key->raw_ndim[p] = (uint8_t)pr->arr[p]->ndim;
      if (uk__array_c_contiguous(pr->arr[p])) key->raw_contig_mask |= 1ull << p;
    }
  }
  int64_t items[UK_MAX_NDIM];
  int maxitem = 0, aligned = 1, outs_unit = 1;
  for (int p = 0, op = 0; p < np; p++) {
    if (!uk__ew_loop_operand(&k->k, key, p, &op)) continue;
    items[op] = (int64_t)uk_dtype_size((uk_dtype)pr->b.dtype[p]);
    int bcast = L->ndim == 1 && L->strides[op][0] == 0;
    if (L->ndim == 1 && bcast) key->bcast_mask |= 1ull << p;
    if (p >= nin && bcast) outs_unit = 0;
    if (!bcast) {
      if (items[op] > maxitem) maxitem = (int)items[op];
      if (pr->arr[p]->data % 16) aligned = 0; /* allocated outputs (data 0) count as aligned */
    }
  }
  key->ndim = (uint8_t)L->ndim;
  key->vec = 1;
  if (L->ndim == 0 || (outs_unit && uk__shape_is_contiguous(L, items))) {
    key->variant = UK_EW_CONTIG;
    key->index64 = L->size > INT32_MAX;
    if (L->ndim == 1 && aligned && maxitem > 0 && maxitem < 16) {
      key->variant = UK_EW_VEC;
      key->vec = (uint8_t)(16 / maxitem);
    }
  } else {
    key->variant = UK_EW_STRIDED;
    key->index64 = !uk__shape_fits_int32(L);
    key->bcast_mask = 0;
    int block = launch && launch->block_size ? launch->block_size : DEFAULT_BLOCK;
    if (k->k.tile_safe && block == DEFAULT_BLOCK) choose_tiles(k, key, L, items);
  }
  return UK_OK;
}

/* ------------------------------------------------------------------------ */
/* Compiling a specialisation                                                */
/* ------------------------------------------------------------------------ */

static uk_status emit(const uk_elementwise *k, const uk_ew_key *key, uk_strbuf *src, uk_ew_plan *plan) {
  uk_status st = uk__ew_emit(&k->k, key, src, plan);
  if (st == UK_OK && src->failed) {
    uk__ew_plan_free(plan);
    st = uk__errorf(UK_ERR_NOMEM, "out of memory generating '%s'", k->name);
  }
  return st;
}

static void describe(const uk_elementwise *k, const uk_ew_key *key, char *buf, size_t size) {
  char v[96];
  int n = snprintf(buf, size, "compiling '%s' (", k->name);
  int np = k->in.count + k->out.count;
  for (int p = 0; p < np && n > 0 && (size_t)n < size; p++)
    n += snprintf(buf + n, size - (size_t)n, "%s%s", p ? ", " : "", uk_dtype_name((uk_dtype)key->dtype[p]));
  if (n > 0 && (size_t)n < size) snprintf(buf + n, size - (size_t)n, "; %s)", uk__ew_describe(key, v, sizeof v));
}

/* Generates and compiles (through the memory and disk caches) the code of
 * one key: what a call compiles, and what uk_elementwise_precompile stores. */
static uk_status compile_key(uk_elementwise *k, const uk_ew_key *key, uk_ew_plan *plan, uk__binary **bin) {
  uk_strbuf src;
  uk__sb_init(&src);
  const char *opts[64];
  int arch = 0;
  char what[512];
  describe(k, key, what, sizeof what);
  const char *const *extra = uk__ew_nvrtc_options(&k->k, key);
  int nopt = 0;
  uk_status st;
  for (int j = 0; j < k->num_options && nopt < 60; j++) opts[nopt++] = k->options[j];
  for (int j = 0; extra[j] && nopt < 64; j++) opts[nopt++] = extra[j];
  if (k->num_options > 60) {
    st = uk__errorf(UK_ERR_INVALID, "'%s': too many NVRTC options (%d, at most 60)", k->name, k->num_options);
    goto out;
  }
  if ((st = emit(k, key, &src, plan)) != UK_OK || (st = uk__context_arch(k->ctx, key->device, &arch)) != UK_OK)
    goto out;
  uk__compile_req req;
  memset(&req, 0, sizeof req);
  req.source = uk__sb_str(&src);
  req.name = k->name;
  req.options = opts;
  req.num_options = nopt;
  req.arch = arch;
  req.what = what;
  st = uk__context_compile(k->ctx, &req, bin);
out:
  uk__sb_release(&src);
  return st;
}

/* Looks the key up; on a miss compiles, loads and publishes it. Runs with
 * the launch device's primary context current. */
static uk_status specialise(uk_elementwise *k, const uk_ew_key *key, ew_entry **out) {
  for (ew_entry *e = atomic_load_explicit(&k->entries, memory_order_acquire); e; e = e->next)
    if (memcmp(&e->key, key, sizeof *key) == 0) {
      *out = e;
      return UK_OK;
    }
  pthread_mutex_lock(&k->lock);
  uk_status st = UK_OK;
  uk__binary *bin = NULL;
  ew_entry *e;
  for (e = atomic_load_explicit(&k->entries, memory_order_acquire); e; e = e->next)
    if (memcmp(&e->key, key, sizeof *key) == 0) goto out;
  if (!(e = calloc(1, sizeof *e))) {
    st = uk__errorf(UK_ERR_NOMEM, "out of memory compiling '%s'", k->name);
    goto out;
  }
  e->key = *key;
  if ((st = compile_key(k, key, &e->plan, &bin)) != UK_OK) goto fail;
  if ((st = uk__cu_check(uk__cu_module_load(&e->module, bin->image), "cuModuleLoadData")) != UK_OK) goto fail;
  if ((st = uk__cu_check(uk__cu_module_function(&e->fn, e->module, k->name), "cuModuleGetFunction")) != UK_OK)
    goto fail;
  e->next = atomic_load_explicit(&k->entries, memory_order_relaxed);
  atomic_store_explicit(&k->entries, e, memory_order_release);
  goto out;
fail:
  if (e->module) uk__cu.cuModuleUnload(e->module);
  uk__ew_plan_free(&e->plan);
  free(e);
  e = NULL;
out:
  pthread_mutex_unlock(&k->lock);
  uk__binary_release(bin);
  if (st == UK_OK) *out = e;
  return st;
}

uk_status uk_elementwise_precompile(uk_elementwise *k, const uk_arg *in, int nin, uk_array *out, int nout,
                                    const uk_launch *launch) {
  uk__error_clear();
  if (!k) return uk__errorf(UK_ERR_INVALID, "uk_elementwise_precompile: k is NULL");
  prep *pr = malloc(sizeof *pr);
  if (!pr) return uk__errorf(UK_ERR_NOMEM, "out of memory");
  uk_ew_plan plan = {0, NULL, 0};
  uk__binary *bin = NULL;
  uk_status st = prepare(k, in, nin, out, nout, launch, pr);
  if (st == UK_OK && pr->loop.size > 0) {
    pr->key.device = pr->device >= 0 ? pr->device : k->ctx->opts.device; /* where a call would run */
    st = compile_key(k, &pr->key, &plan, &bin);
  }
  uk__binary_release(bin);
  uk__ew_plan_free(&plan);
  free(pr);
  return st;
}

uk_status uk_elementwise_source(uk_elementwise *k, const uk_arg *in, int nin, uk_array *out, int nout,
                                const uk_launch *launch, char **source) {
  uk__error_clear();
  if (!k || !source) return uk__errorf(UK_ERR_INVALID, "uk_elementwise_source: NULL argument");
  prep *pr = malloc(sizeof *pr);
  if (!pr) return uk__errorf(UK_ERR_NOMEM, "out of memory");
  uk_strbuf src;
  uk__sb_init(&src);
  uk_ew_plan plan = {0, NULL, 0};
  uk_status st = prepare(k, in, nin, out, nout, launch, pr);
  if (st == UK_OK && (st = emit(k, &pr->key, &src, &plan)) == UK_OK) *source = uk__sb_detach(&src);
  uk__ew_plan_free(&plan);
  uk__sb_release(&src);
  free(pr);
  return st;
}

/* ------------------------------------------------------------------------ */
/* Launching                                                                 */
/* ------------------------------------------------------------------------ */

static void put(unsigned char *buf, const uk_ew_slot *s, int64_t v) {
  if (s->size == 4) {
    int32_t w = (int32_t)v;
    memcpy(buf + s->offset, &w, 4);
  } else {
    memcpy(buf + s->offset, &v, 8);
  }
}

static void pack(const ew_entry *e, const prep *pr, const uint64_t *ptr, unsigned char *buf) {
  const uk_loop *L = &pr->loop;
  for (int j = 0; j < e->plan.nslots; j++) {
    const uk_ew_slot *s = &e->plan.slots[j];
    switch ((uk_ew_slot_kind)s->kind) {
    case UK_EW_SLOT_PTR: memcpy(buf + s->offset, &ptr[s->param], 8); break;
    case UK_EW_SLOT_STRIDE: put(buf, s, L->strides[s->op][s->dim]); break;
    case UK_EW_SLOT_SHAPE: put(buf, s, L->shape[s->dim]); break;
    case UK_EW_SLOT_SIZE: put(buf, s, L->size); break;
    case UK_EW_SLOT_SCALAR: memcpy(buf + s->offset, pr->scalar[s->param], s->size); break;
    case UK_EW_SLOT_RAW_SHAPE: memcpy(buf + s->offset, &pr->arr[s->param]->shape[s->dim], 8); break;
    case UK_EW_SLOT_RAW_STRIDE: memcpy(buf + s->offset, &pr->arr[s->param]->strides[s->dim], 8); break;
    }
  }
}

uk_status uk_elementwise_call(uk_elementwise *k, const uk_arg *in, int nin, uk_array *out, int nout,
                              const uk_launch *launch) {
  uk__error_clear();
  if (!k) return uk__errorf(UK_ERR_INVALID, "uk_elementwise_call: kernel is NULL");
  int block = launch && launch->block_size ? launch->block_size : DEFAULT_BLOCK;
  if (block < 1 || block > 1024)
    return uk__errorf(UK_ERR_INVALID, "%s: block_size %d is out of range (1..1024, or 0 for the default)", k->name,
                      block);
  void *stream = launch ? launch->stream : NULL;
  prep pr;
  uk_status st = prepare(k, in, nin, out, nout, launch, &pr);
  if (st != UK_OK) return st;

  int device = 0, pushed = 0, nalloc = 0, ntemps = 0;
  uint64_t ptr[UK_MAX_PARAMS], temps[UK_MAX_PARAMS];
  if ((st = uk__launch_enter(k->ctx, stream, &device, &pushed)) != UK_OK) return st;
  if (pr.device >= 0 && pr.device != device) {
    st = uk__errorf(UK_ERR_INVALID, "%s: the arrays are on device %d but the launch runs on device %d", k->name,
                    pr.device, device);
    goto out;
  }
  int np = nin + nout;
  ew_entry *e = NULL;
  if (pr.loop.size > 0) {
    pr.key.device = device;
    if ((st = specialise(k, &pr.key, &e)) != UK_OK) goto out;
  }
  if (!pr.b.outputs_given) {
    for (int j = 0; j < nout; j++, nalloc++) {
      uk_array *o = &pr.outs[j];
      o->device = device;
      size_t bytes = (size_t)pr.loop.size * uk_dtype_size(o->dtype);
      /* A zero-element output keeps data == 0: there is nothing to point at. */
      if (bytes && (st = uk__context_alloc(k->ctx, bytes, stream, &o->data)) != UK_OK) goto out;
    }
  }
  if (!e) goto out; /* zero-size loop: nothing to compile or launch */
  for (int p = 0; p < np; p++) ptr[p] = pr.arr[p] ? pr.arr[p]->data : 0;
  if (pr.b.outputs_given &&
      (st = uk__copy_overlapping_inputs(k->ctx, pr.arr, k->in.count, pr.outs, k->out.count, stream, ptr, temps,
                                        &ntemps)) != UK_OK)
    goto out;

  _Alignas(16) unsigned char buf[4096];
  size_t bytes = e->plan.bytes;
  pack(e, &pr, ptr, buf);
  int64_t items = pr.loop.size, blocks;
  if (pr.key.variant == UK_EW_TILED) {
    /* One 32 x 32 tile per block (the kernel loops past 2^31 - 1 tiles). */
    block = UK_EW_TILE_THREADS;
    blocks = ((pr.loop.shape[0] + 31) / 32) * ((pr.loop.shape[1] + 31) / 32);
  } else if (pr.key.variant == UK_EW_STRIDED) {
    /* Grid-stride over a few waves: measured faster than one thread per
     * element for broadcast and strided loops. */
    blocks = (items + block - 1) / block;
    int64_t cap = (int64_t)uk__device_sm_count(device) * (2048 / block > 0 ? 2048 / block : 1) * 8;
    if (blocks > cap) blocks = cap;
  } else {
    /* Contiguous: one thread per element or vector (within 1% of CUB's
     * DeviceTransform; the grid-stride cap cost ~4%). */
    if (pr.key.variant == UK_EW_VEC) {
      int64_t nvec = items / pr.key.vec, tail = items % pr.key.vec;
      items = nvec > tail ? nvec : tail;
    }
    blocks = (items + block - 1) / block;
  }
  if (blocks > INT32_MAX) blocks = INT32_MAX;
  if (blocks < 1) blocks = 1;
  void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &bytes, CU_LAUNCH_PARAM_END};
  st = uk__cu_check(uk__cu.cuLaunchKernel(e->fn, (unsigned)blocks, 1, 1, (unsigned)block, 1, 1, 0, (CUstream)stream,
                                          NULL, extra),
                    "cuLaunchKernel");
out:
  for (int j = 0; j < ntemps; j++) uk__context_free(k->ctx, temps[j], stream);
  if (st != UK_OK) {
    for (int j = 0; j < nalloc; j++) uk__context_free(k->ctx, pr.outs[j].data, stream);
  } else if (!pr.b.outputs_given) {
    for (int j = 0; j < nout; j++) out[j] = pr.outs[j];
  }
  uk__device_leave(pushed);
  return st;
}
