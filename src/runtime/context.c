/* The uk_context object: options, caches, and the cached compile path
 * (memory cache -> disk cache -> NVRTC). */
#include "runtime/context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/join.h"
#include "base/strbuf.h"
#include "runtime/arch.h"
#include "runtime/first_use.h"
#include "runtime/nvrtc_lib.h"

#define DEFAULT_DISK_CACHE_BYTES (1ull << 30)

static int env_disables_disk_cache(void) {
  const char *v = getenv("UKERN_DISABLE_DISK_CACHE");
  return v && strcmp(v, "1") == 0;
}

uk_status uk__context_check_arch(int arch, const char *arch_name, const char *what, uk__arch *out) {
  char field[64];
  if (!arch_name && arch == 0) { /* the common case, on every call: no formatting */
    *out = (uk__arch){0, 0};
    return UK_OK;
  }
  if (arch_name) {
    uk__join(field, sizeof field, what, ".arch_name", (char *)NULL);
    uk_status st = uk__arch_parse(arch_name, field, out);
    return st == UK_OK ? uk__arch_check(*out, field) : st;
  }
  uk__join(field, sizeof field, what, ".arch", (char *)NULL);
  if (arch < 0) return uk__errorf(UK_ERR_INVALID, "%s %d is negative (0: the device's)", field, arch);
  *out = (uk__arch){arch, 0};
  return uk__arch_check(*out, field);
}

uk_status uk_context_create(const uk_options *opts, uk_context **out) {
  uk__error_clear();
  if (!out) return uk__errorf(UK_ERR_INVALID, "uk_context_create: out is NULL");
  uk_options o;
  if (opts) o = *opts;
  else memset(&o, 0, sizeof o);
  if (o.num_nvrtc_options < 0 || (o.num_nvrtc_options > 0 && !o.nvrtc_options))
    return uk__errorf(UK_ERR_INVALID, "uk_options: num_nvrtc_options is %d but nvrtc_options is %s",
                      o.num_nvrtc_options, o.nvrtc_options ? "set" : "NULL");
  if (o.device < 0) return uk__errorf(UK_ERR_INVALID, "uk_options: device %d is negative", o.device);
  /* NVRTC's version and architectures from the disk cache's memo, read when
   * first needed (the arch check, the first key): a process served from disk
   * never loads NVRTC, and creating a context reads no file for it. */
  if (!o.disable_disk_cache && !env_disables_disk_cache()) uk__nvrtc_recall_later(o.cache_dir);
  uk__arch target = {o.arch, 0};
  uk_status ast = uk__context_check_arch(o.arch, o.arch_name, "uk_options", &target);
  if (ast != UK_OK) return ast;

  uk_status st = UK_OK;
  uk_context *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return uk__errorf(UK_ERR_NOMEM, "out of memory creating a context");
  ctx->opts = o;
  ctx->opts.arch = target.num;
  ctx->opts.arch_name = NULL;
  ctx->arch_flags = target.flags;
  atomic_init(&ctx->refs, 1);
  ctx->opts.cache_dir = NULL;
  ctx->opts.nvrtc_options = NULL;
  ctx->opts.num_nvrtc_options = 0;
  if (o.num_nvrtc_options > 0) {
    ctx->nvrtc_options = calloc((size_t)o.num_nvrtc_options, sizeof *ctx->nvrtc_options);
    if (!ctx->nvrtc_options) goto nomem;
    for (int k = 0; k < o.num_nvrtc_options; k++) {
      if (!o.nvrtc_options[k]) {
        st = uk__errorf(UK_ERR_INVALID, "uk_options: nvrtc_options[%d] is NULL", k);
        goto out;
      }
      ctx->nvrtc_options[k] = strdup(o.nvrtc_options[k]);
      if (!ctx->nvrtc_options[k]) goto nomem;
      ctx->num_nvrtc_options = k + 1;
    }
    ctx->opts.nvrtc_options = (const char *const *)ctx->nvrtc_options;
    ctx->opts.num_nvrtc_options = ctx->num_nvrtc_options;
  }
  if (o.cache_dir && !(ctx->opts.cache_dir = strdup(o.cache_dir))) goto nomem;
  if (!ctx->opts.disk_cache_max_bytes) ctx->opts.disk_cache_max_bytes = DEFAULT_DISK_CACHE_BYTES;
  if (env_disables_disk_cache()) ctx->opts.disable_disk_cache = 1;
  atomic_init(&ctx->compiles, 0);
  atomic_init(&ctx->memory_hits, 0);
  atomic_init(&ctx->memory_misses, 0);

  if ((st = uk__mcache_create(&ctx->mcache)) != UK_OK) goto out;
  if (!ctx->opts.disable_disk_cache) {
    char *dir = NULL; /* the default directory when none is given */
    st = ctx->opts.cache_dir ? UK_OK : uk_cache_default_dir(&dir);
    if (st == UK_OK)
      st = uk__dcache_open(dir ? dir : ctx->opts.cache_dir, ctx->opts.disk_cache_max_bytes, &ctx->dcache);
    uk_free(dir);
    if (st == UK_ERR_NOMEM) goto out;
    /* Any other failure (no usable default directory) only costs the disk
     * cache: compiling still works. */
    if (st != UK_OK) {
      ctx->dcache = NULL;
      uk__error_clear();
      st = UK_OK;
    }
  }
  *out = ctx;
  return UK_OK;
nomem:
  st = uk__errorf(UK_ERR_NOMEM, "out of memory creating a context");
out:
  uk_context_destroy(ctx);
  return st;
}

void uk__context_retain(uk_context *ctx) { atomic_fetch_add_explicit(&ctx->refs, 1, memory_order_relaxed); }

void uk__context_release(uk_context *ctx) {
  if (!ctx || atomic_fetch_sub_explicit(&ctx->refs, 1, memory_order_acq_rel) != 1) return;
  uk__held *held[] = {&ctx->copy_kernel, &ctx->spare_module};
  for (size_t k = 0; k < sizeof held / sizeof held[0]; k++) {
    void *obj = uk__held_take(held[k]);
    if (obj) atomic_load_explicit(&held[k]->destroy, memory_order_relaxed)(obj);
  }
  if (ctx->mcache) uk__mcache_destroy(ctx->mcache);
  if (ctx->dcache) uk__dcache_close(ctx->dcache);
  for (int k = 0; k < ctx->num_nvrtc_options; k++) free(ctx->nvrtc_options[k]);
  free(ctx->nvrtc_options);
  free((char *)ctx->opts.cache_dir);
  free(ctx);
}

void uk_context_destroy(uk_context *ctx) { uk__context_release(ctx); }

uk_status uk_context_cache_stats(uk_context *ctx, uk_cache_stats *out) {
  uk__error_clear();
  if (!ctx || !out) return uk__errorf(UK_ERR_INVALID, "uk_context_cache_stats: NULL argument");
  uk_cache_stats s;
  memset(&s, 0, sizeof s);
  s.memory_hits = atomic_load(&ctx->memory_hits);
  s.memory_misses = atomic_load(&ctx->memory_misses);
  s.compiles = atomic_load(&ctx->compiles);
  if (ctx->dcache) {
    s.disk_hits = atomic_load(&ctx->dcache->stats.hits);
    s.disk_misses = atomic_load(&ctx->dcache->stats.misses);
    s.store_failures = atomic_load(&ctx->dcache->stats.store_failures);
    s.corrupt_entries = atomic_load(&ctx->dcache->stats.corrupt_entries);
    s.evictions = atomic_load(&ctx->dcache->stats.evictions);
    s.untrusted = atomic_load(&ctx->dcache->stats.untrusted);
  }
  *out = s;
  return UK_OK;
}

const char *uk_context_cache_dir(uk_context *ctx) {
  return ctx && ctx->dcache && ctx->dcache->dir ? ctx->dcache->dir : "";
}

uk_status uk__context_arch(uk_context *ctx, int device, int *arch) {
  if (ctx->opts.arch > 0) {
    *arch = ctx->opts.arch;
    return UK_OK;
  }
  /* A device's arch never changes: ask the driver once per device. */
  UK__FIRST_USE static _Atomic int arch_of[64];
  if (device >= 0 && device < 64 && (*arch = atomic_load_explicit(&arch_of[device], memory_order_relaxed)))
    return UK_OK;
  uk_device_info info;
  uk_status st = uk_device_info_get(device, &info);
  if (st != UK_OK) {
    uk__error_prefix("cannot choose an arch to compile for (set uk_options.arch, e.g. 90, to "
                     "compile without a GPU)");
    return st;
  }
  *arch = info.arch;
  if (device >= 0 && device < 64) atomic_store_explicit(&arch_of[device], info.arch, memory_order_relaxed);
  return UK_OK;
}

typedef struct build_arg {
  uk_context *ctx;
  const uk__compile_keyed *keyed;
  const char *key;
  size_t key_len;
} build_arg;

/* Runs on a memory-cache miss, once per key however many threads ask. The
 * disk cache names entries by the full key's hash (only a miss needs it). */
static uk_status build(void *p, uk__binary **out) {
  build_arg *a = p;
  uk__dcache *dc = a->ctx->dcache;
  const uk__compile_req *req = a->keyed->req;
  uk_hash128 hash = {0, 0};
  if (dc) hash = uk__compile_hash_hook ? uk__compile_hash_hook(req) : uk__compile_hash(a->keyed);
  if (dc && uk__dcache_get(dc, hash, a->key, a->key_len, out)) return UK_OK;
  atomic_fetch_add(&a->ctx->compiles, 1);
  uk_status st = req->backend == UK_BACKEND_NVCC ? uk__nvcc_compile(req, out) : uk__nvrtc_compile(req, out);
  if (st == UK_OK && dc) {
    uk__dcache_put(dc, hash, a->key, a->key_len, *out);
    uk__nvrtc_remember(dc);
  }
  return st;
}

/* The target of a request: the context's variant for the context's arch,
 * overridden by an -arch option, which leaves the list (the target enters
 * the key and NVRTC's options as one canonical -arch). */
static uk_status apply_arch(uk_context *ctx, uk__compile_req *req, const char **opts, int *nopt) {
  if (ctx->arch_flags && !req->arch_flags && req->arch == ctx->opts.arch) req->arch_flags = ctx->arch_flags;
  if (*nopt == 0) return UK_OK; /* no -arch to take (and arch.c's code left untouched) */
  uk__arch a = {req->arch, req->arch_flags};
  uk_status st = uk__arch_take_option(opts, nopt, &a);
  req->arch = a.num;
  req->arch_flags = a.flags;
  return st;
}

/* Not found by the fast path: the key text, then the memory cache's
 * single flight (another thread may be building it), then disk or NVRTC. */
static uk_status compile_missed(uk_context *ctx, const uk__compile_keyed *keyed, uk_hash128 look,
                                uk__binary **out) {
  uk_strbuf key;
  uk__sb_init(&key);
  uk_status st = uk__compile_key(keyed, &key);
  if (st == UK_OK) {
    build_arg a = {ctx, keyed, key.buf, key.len};
    int hit = 0;
    st = uk__mcache_get(ctx->mcache, look, key.buf, key.len, build, &a, out, &hit);
    atomic_fetch_add(st == UK_OK && hit ? &ctx->memory_hits : &ctx->memory_misses, 1);
  }
  uk__sb_release(&key);
  return st;
}

static int key_matches(void *keyed, const char *key, size_t len) { return uk__compile_key_equals(keyed, key, len); }

uk_status uk__context_compile(uk_context *ctx, const uk__compile_req *req, uk__binary **out) {
  if (req->num_options < 0 || req->num_name_expressions < 0 ||
      (req->num_options > 0 && !req->options) ||
      (req->num_name_expressions > 0 && !req->name_expressions))
    return uk__errorf(UK_ERR_INVALID, "compile request: option or name expression counts do not "
                                      "match their arrays");
  for (int k = 0; k < req->num_options; k++)
    if (!req->options[k]) return uk__errorf(UK_ERR_INVALID, "compile request: option %d is NULL", k);
  for (int k = 0; k < req->num_name_expressions; k++)
    if (!req->name_expressions[k])
      return uk__errorf(UK_ERR_INVALID, "compile request: name expression %d is NULL", k);

  /* NVRTC's version for the key (and its architectures for an -arch
   * option) from the memo of this context's cache, if not known yet. */
  uk__nvrtc_recall_from(ctx->dcache);
  uk_status st = UK_OK;
  int nopt = ctx->num_nvrtc_options + req->num_options;
  const char *stack_opts[16];
  const char **opts = nopt <= 16 ? stack_opts : NULL;
  if (nopt > 16) {
    opts = malloc((size_t)nopt * sizeof *opts);
    if (!opts) {
      st = uk__errorf(UK_ERR_NOMEM, "out of memory compiling");
      goto out;
    }
  }
  for (int k = 0; k < ctx->num_nvrtc_options; k++) opts[k] = ctx->nvrtc_options[k];
  for (int k = 0; k < req->num_options; k++) opts[ctx->num_nvrtc_options + k] = req->options[k];
  uk__compile_req full = *req;
  full.options = opts;
  full.num_options = nopt;
  if ((st = apply_arch(ctx, &full, opts, &nopt)) != UK_OK) goto out;
  if (ctx->opts.no_std_headers) full.no_std_headers = 1;
  full.num_options = nopt;
  uk__compile_keyed keyed;
  uk__compile_keyed_init(&keyed, &full);
  uk_hash128 look = uk__compile_hash_hook ? uk__compile_hash_hook(&full) : uk__compile_lookup(&keyed);
  if (uk__mcache_peek(ctx->mcache, look, key_matches, &keyed, out)) atomic_fetch_add(&ctx->memory_hits, 1);
  else st = compile_missed(ctx, &keyed, look, out);
out:
  if (opts != stack_opts) free(opts);
  return st;
}

typedef struct made_arg {
  uk_context *ctx;
  uk_hash128 hash;
  const char *key;
  size_t key_len;
  uk_status (*make)(void *arg, uk__binary **out);
  void *arg;
} made_arg;

static uk_status build_made(void *p, uk__binary **out) {
  made_arg *a = p;
  uk__dcache *dc = a->ctx->dcache;
  if (dc && uk__dcache_get(dc, a->hash, a->key, a->key_len, out)) return UK_OK;
  atomic_fetch_add(&a->ctx->compiles, 1);
  uk_status st = a->make(a->arg, out);
  if (st == UK_OK && dc) uk__dcache_put(dc, a->hash, a->key, a->key_len, *out);
  return st;
}

uk_status uk__context_cached(uk_context *ctx, const char *key, size_t key_len,
                             uk_status (*make)(void *arg, uk__binary **out), void *arg, uk__binary **out) {
  made_arg a = {ctx, uk__hash128(key, key_len), key, key_len, make, arg};
  int hit = 0;
  uk_status st = uk__mcache_get(ctx->mcache, a.hash, key, key_len, build_made, &a, out, &hit);
  atomic_fetch_add(st == UK_OK && hit ? &ctx->memory_hits : &ctx->memory_misses, 1);
  return st;
}
