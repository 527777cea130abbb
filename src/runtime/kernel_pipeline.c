/* The stages every generated-kernel kind shares (kernel_pipeline.h): key to specialisation, compile, offline calls. */
#include "runtime/kernel_pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "runtime/device.h"
#include "runtime/kernel_args.h"
#include "runtime/kernel_common.h"

/* The context, lock and table of a kernel object, and its options' check. */
static uk_status init_start(uk__kernel *kd, const uk__kind *kind, uk_context *ctx, const char *what,
                            const char *const *options, int num_options) {
  kd->kind = kind;
  kd->ctx = ctx;
  uk__context_retain(ctx);
  pthread_mutex_init(&kd->lock, NULL);
  atomic_init(&kd->specs, NULL);
  if (num_options < 0 || (num_options > 0 && !options))
    return uk__errorf(UK_ERR_INVALID, "%s: num_options is %d but options is %s", what, num_options,
                      options ? "set" : "NULL");
  return UK_OK;
}

/* Copies of the name and the options. */
static uk_status init_copy(uk__kernel *kd, const char *what, const char *name, const char *const *options,
                           int num_options) {
  int failed = 0;
  kd->name = uk__strdup_opt(name, &failed);
  if (num_options > 0 && !failed) {
    kd->options = calloc((size_t)num_options, sizeof *kd->options);
    if (!kd->options) failed = 1;
    for (int j = 0; j < num_options && !failed; j++) {
      if (!options[j]) return uk__errorf(UK_ERR_INVALID, "%s: options[%d] is NULL", what, j);
      kd->options[j] = uk__strdup_opt(options[j], &failed);
      kd->num_options = j + 1;
    }
  }
  if (failed) return uk__errorf(UK_ERR_NOMEM, "out of memory creating %s", kd->kind->noun);
  return UK_OK;
}

uk_status uk__kernel_init(uk__kernel *kd, const uk__kind *kind, uk_context *ctx, const char *what,
                          const char *in_params, const char *out_params, const char *name,
                          const char *const *options, int num_options) {
  uk_status st = init_start(kd, kind, ctx, what, options, num_options);
  if (st != UK_OK) return st;
  if ((st = uk__params_parse(in_params, "in_params", &kd->in)) != UK_OK ||
      (st = uk__params_parse(out_params, "out_params", &kd->out)) != UK_OK ||
      (st = uk__params_check_kernel(in_params, &kd->in, out_params, &kd->out, name)) != UK_OK)
    return st;
  if (kd->in.count + kd->out.count > UK_MAX_PARAMETERS)
    return uk__errorf(UK_ERR_INVALID, "%s: too many parameters (%d; UK_MAX_PARAMETERS is %d)", name,
                      kd->in.count + kd->out.count, UK_MAX_PARAMETERS);
  if (kd->out.count == 0) return uk__errorf(UK_ERR_INVALID, "%s: %s needs at least one output", name, kind->noun);
  return init_copy(kd, what, name, options, num_options);
}

uk_status uk__kernel_init_fixed(uk__kernel *kd, const uk__kind *kind, uk_context *ctx, const char *what,
                                const char *name, const char *const *options, int num_options) {
  uk_status st = init_start(kd, kind, ctx, what, options, num_options);
  return st != UK_OK ? st : init_copy(kd, what, name, options, num_options);
}

static void spec_free(uk__spec *e) {
  if (e->module) {
    int pushed = 0;
    if (uk__device_enter(e->device, &pushed) == UK_OK) {
      uk__cu.cuModuleUnload(e->module);
      uk__device_leave(pushed);
    }
  }
  uk__plan_free(&e->plan);
  free(e);
}

void uk__kernel_free(uk__kernel *kd) {
  uk__spec *e = atomic_load(&kd->specs);
  while (e) {
    uk__spec *next = e->next;
    spec_free(e);
    e = next;
  }
  uk__params_free(&kd->in);
  uk__params_free(&kd->out);
  for (int j = 0; j < kd->num_options; j++) free(kd->options[j]);
  free(kd->options);
  free(kd->name);
  pthread_mutex_destroy(&kd->lock);
  uk__context_release(kd->ctx);
}


uk_status uk__kernel_param_counts(const char *fn, const uk__kernel *kd, int *nin, int *nout) {
  uk__error_clear();
  if (!kd || !nin || !nout) return uk__errorf(UK_ERR_INVALID, "%s: NULL argument", fn);
  *nin = kd->in.count;
  *nout = kd->out.count;
  return UK_OK;
}

size_t uk__kernel_describe(const uk__kernel *kd, const char *noun, const uk_key_params *kp, char *buf, size_t size) {
  int n = snprintf(buf, size, "compiling %s'%s' (", noun, kd->name);
  int np = kd->in.count + kd->out.count;
  for (int p = 0; p < np && n > 0 && (size_t)n < size; p++)
    n += snprintf(buf + n, size - (size_t)n, "%s%s", p ? ", " : "", uk_dtype_name((uk_dtype)kp->dtype[p]));
  return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
}

const char *uk__kernel_role(const uk__kernel *kd, int p) { return p < kd->in.count ? "input" : "output"; }

/* ------------------------------------------------------------------------ */
/* Compiling a key                                                           */
/* ------------------------------------------------------------------------ */

static uk_status emit(const uk__kernel *kd, const void *key, uk_strbuf *src, uk_plan *plan) {
  uk_status st = kd->kind->emit(kd, key, src, plan);
  if (st == UK_OK && src->failed) {
    uk__plan_free(plan);
    st = uk__errorf(UK_ERR_NOMEM, "out of memory generating '%s'", kd->name);
  }
  return st;
}

/* Generates and compiles (through the memory and disk caches) the code of
 * one key: what a call compiles, and what precompile stores. On failure
 * *plan is freed. */
/* The options a key compiles with: the user's, then the kind's (malloc'd,
 * NULL-terminated; the strings are borrowed). */
static uk_status key_options(const uk__kernel *kd, const void *key, const char ***out, int *n) {
  uk__kind_compile kc = {NULL};
  kd->kind->compile(kd, key, &kc);
  int nextra = 0;
  while (kc.extra && kc.extra[nextra]) nextra++;
  const char **opts = malloc((size_t)(kd->num_options + nextra + 1) * sizeof *opts);
  if (!opts) return uk__errorf(UK_ERR_NOMEM, "out of memory compiling '%s'", kd->name);
  for (int j = 0; j < kd->num_options; j++) opts[j] = kd->options[j];
  for (int j = 0; j < nextra; j++) opts[kd->num_options + j] = kc.extra[j];
  *n = kd->num_options + nextra;
  opts[*n] = NULL;
  *out = opts;
  return UK_OK;
}

/* Generates and compiles (through the memory and disk caches) the code of
 * one key: what a call compiles, and what precompile stores. On failure
 * *plan is freed. */
static uk_status compile_key(uk__kernel *kd, const void *key, int device, uk_plan *plan, uk__binary **bin) {
  uk_strbuf src;
  uk__sb_init(&src);
  char what[512];
  kd->kind->describe(kd, key, what, sizeof what);
  const char **opts = NULL;
  int nopt = 0, arch = 0;
  uk_status st = key_options(kd, key, &opts, &nopt);
  if (st != UK_OK) goto out;
  if ((st = emit(kd, key, &src, plan)) != UK_OK) goto out;
  if ((st = uk__context_arch(kd->ctx, device, &arch)) != UK_OK) goto fail;
  uk__compile_req req;
  memset(&req, 0, sizeof req);
  req.source = uk__sb_str(&src);
  req.name = kd->name;
  req.options = opts;
  req.num_options = nopt;
  req.arch = arch;
  req.what = what;
  st = uk__context_compile(kd->ctx, &req, bin);
  if (st == UK_OK) goto out;
fail:
  uk__plan_free(plan);
out:
  free(opts);
  uk__sb_release(&src);
  return st;
}

static uk__spec *find(const uk__kernel *kd, const void *key) {
  size_t n = kd->kind->key_size;
  for (uk__spec *e = atomic_load_explicit(&((uk__kernel *)kd)->specs, memory_order_acquire); e; e = e->next)
    if (memcmp(e->key, key, n) == 0) return e;
  return NULL;
}

uk_status uk__kernel_specialise(uk__kernel *kd, const void *key, int device, uk__spec **out) {
  uk__spec *e = find(kd, key);
  if (e) {
    *out = e;
    return UK_OK;
  }
  pthread_mutex_lock(&kd->lock);
  uk_status st = UK_OK;
  uk__binary *bin = NULL;
  if ((e = find(kd, key))) goto out; /* another thread compiled it meanwhile */
  if (!(e = calloc(1, sizeof *e + kd->kind->key_size))) {
    st = uk__errorf(UK_ERR_NOMEM, "out of memory compiling '%s'", kd->name);
    goto out;
  }
  memcpy(e->key, key, kd->kind->key_size);
  e->device = device;
  if ((st = compile_key(kd, key, device, &e->plan, &bin)) != UK_OK) goto fail;
  if ((st = uk__cu_check(uk__cu_module_load(&e->module, bin->image), "cuModuleLoadData")) != UK_OK) goto fail;
  if (kd->kind->loaded && (st = kd->kind->loaded(kd, e, bin)) != UK_OK) goto fail;
  e->next = atomic_load_explicit(&kd->specs, memory_order_relaxed);
  atomic_store_explicit(&kd->specs, e, memory_order_release);
  goto out;
fail:
  if (e->module) uk__cu.cuModuleUnload(e->module);
  uk__plan_free(&e->plan);
  free(e);
  e = NULL;
out:
  pthread_mutex_unlock(&kd->lock);
  uk__binary_release(bin);
  if (st == UK_OK) *out = e;
  return st;
}

/* The options as one allocation: the pointer array, then the strings. */
static uk_status options_copy(const char **opts, int n, char ***out) {
  size_t bytes = (size_t)(n + 1) * sizeof(char *);
  for (int j = 0; j < n; j++) bytes += strlen(opts[j]) + 1;
  char **v = malloc(bytes);
  if (!v) return uk__errorf(UK_ERR_NOMEM, "out of memory");
  char *at = (char *)(v + n + 1);
  for (int j = 0; j < n; j++) {
    size_t len = strlen(opts[j]) + 1;
    memcpy(at, opts[j], len);
    v[j] = at;
    at += len;
  }
  v[n] = NULL;
  *out = v;
  return UK_OK;
}

static uk_status compile_info(const uk__binary *bin, struct timespec t0, struct timespec t1, uk_compile_info *info) {
  char *log = strdup(bin->log ? bin->log : "");
  if (!log) return uk__errorf(UK_ERR_NOMEM, "out of memory");
  info->arch = bin->arch;
  info->is_ptx = bin->is_ptx;
  info->image_bytes = bin->image_size;
  info->ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
  info->log = log;
  return UK_OK;
}

uk_status uk__kernel_offline(const char *fn, uk__kernel *kd, const uk_arg *in, int nin, uk_array *out, int nout,
                             const void *launch, uk__offline what, void *result) {
  uk__error_clear();
  if (!kd) return uk__errorf(UK_ERR_INVALID, "%s: k is NULL", fn);
  static const char *const result_name[] = {"", "source", "options", "info"};
  if (what != UK__OFFLINE_PRECOMPILE && !result)
    return uk__errorf(UK_ERR_INVALID, "%s: %s is NULL", fn, result_name[what]);
  uk__call *c = malloc(kd->kind->prep_size); /* the kind's prep, which starts with a uk__call */
  if (!c) return uk__errorf(UK_ERR_NOMEM, "out of memory");
  uk_plan plan = {0, NULL, 0};
  uk_status st = kd->kind->prepare(kd, in, nin, out, nout, launch, c);
  if (st != UK_OK) goto out;
  if (what == UK__OFFLINE_SOURCE) {
    uk_strbuf src;
    uk__sb_init(&src);
    if ((st = emit(kd, c->key, &src, &plan)) == UK_OK) *(char **)result = uk__sb_detach(&src);
    uk__sb_release(&src);
  } else if (what == UK__OFFLINE_OPTIONS) {
    const char **opts = NULL;
    int n = 0;
    if ((st = key_options(kd, c->key, &opts, &n)) == UK_OK) st = options_copy(opts, n, result);
    free(opts);
  } else if (c->empty) { /* nothing to compute compiles nothing */
    if (what == UK__OFFLINE_INFO) memset(result, 0, sizeof(uk_compile_info));
  } else {
    for (int step = 0;; step++) {
      uk__binary *bin = NULL;
      struct timespec t0, t1;
      clock_gettime(CLOCK_MONOTONIC, &t0);
      st = compile_key(kd, c->key, c->device >= 0 ? c->device : kd->ctx->opts.device, &plan, &bin);
      clock_gettime(CLOCK_MONOTONIC, &t1);
      const int next = st == UK_OK && kd->kind->offline_next && kd->kind->offline_next(kd, c, bin, step);
      if (st == UK_OK && what == UK__OFFLINE_INFO && !next) st = compile_info(bin, t0, t1, result);
      uk__binary_release(bin);
      if (!next) break;
      uk__plan_free(&plan);
    }
  }
out:
  uk__plan_free(&plan);
  free(c);
  return st;
}

uk_status uk__spec_function(const uk__kernel *kd, uk__spec *e, int id, const char *suffix, CUfunction *out) {
  CUfunction f = atomic_load_explicit(&e->fn[id], memory_order_acquire);
  if (!f) {
    size_t n = strlen(kd->name), m = strlen(suffix);
    char buf[256], *fname = n + m < sizeof buf ? buf : malloc(n + m + 1);
    if (!fname) return uk__errorf(UK_ERR_NOMEM, "out of memory looking up '%s'", kd->name);
    memcpy(fname, kd->name, n);
    memcpy(fname + n, suffix, m + 1);
    uk_status st = uk__cu_check(uk__cu_module_function(&f, e->module, fname), "cuModuleGetFunction");
    if (fname != buf) free(fname);
    if (st != UK_OK) return st;
    atomic_store_explicit(&e->fn[id], f, memory_order_release);
  }
  *out = f;
  return UK_OK;
}
