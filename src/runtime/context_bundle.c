/* A context's kernel bundles (bundle.h): opening them, the bundle tier of
 * the compile path, and the public bundle functions. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "runtime/bundle.h"
#include "runtime/context.h"

uk_status uk_context_load_bundle(uk_context *ctx, const char *path) {
  uk__error_clear();
  if (!ctx || !path) return uk__errorf(UK_ERR_INVALID, "uk_context_load_bundle: %s is NULL", !ctx ? "ctx" : "path");
  uk__bundle *b = NULL;
  uk_status st = uk__bundle_open(path, &b);
  if (st != UK_OK) return st;
  pthread_mutex_lock(&ctx->bundle_lock);
  int n = atomic_load(&ctx->num_bundles);
  if (n < UK__MAX_BUNDLES) {
    ctx->bundles[n] = b;
    atomic_store_explicit(&ctx->num_bundles, n + 1, memory_order_release);
  }
  pthread_mutex_unlock(&ctx->bundle_lock);
  if (n >= UK__MAX_BUNDLES) {
    uk__bundle_close(b);
    return uk__errorf(UK_ERR_NOMEM, "bundle %s: a context opens at most %d bundles (merge them into one)", path,
                      UK__MAX_BUNDLES);
  }
  return UK_OK;
}

uk_status uk__context_open_bundles(uk_context *ctx, const char *const *paths, int n) {
  if (n < 0 || (n > 0 && !paths))
    return uk__errorf(UK_ERR_INVALID, "uk_options: num_bundles is %d but bundles is %s", n, paths ? "set" : "NULL");
  for (int k = 0; k < n; k++) {
    if (!paths[k]) return uk__errorf(UK_ERR_INVALID, "uk_options: bundles[%d] is NULL", k);
    uk_status st = uk_context_load_bundle(ctx, paths[k]);
    if (st != UK_OK) return st;
  }
  const char *env = getenv("UKERN_BUNDLE");
  for (const char *p = env; p && *p;) {
    size_t len = strcspn(p, ":");
    if (len > 0) {
      char *one = strndup(p, len);
      if (!one) return uk__errorf(UK_ERR_NOMEM, "out of memory opening $UKERN_BUNDLE");
      uk_status st = uk_context_load_bundle(ctx, one);
      free(one);
      if (st != UK_OK) {
        uk__error_prefix("$UKERN_BUNDLE");
        return st;
      }
    }
    p += len + (p[len] == ':');
  }
  return UK_OK;
}

void uk__context_close_bundles(uk_context *ctx) {
  int n = atomic_load(&ctx->num_bundles);
  for (int k = 0; k < n; k++) uk__bundle_close(ctx->bundles[k]);
  atomic_store(&ctx->num_bundles, 0);
  pthread_mutex_destroy(&ctx->bundle_lock);
}

typedef struct find_arg {
  uk_context *ctx;
  const char *key; /* the bundle key (without the memory cache's arch line) */
  size_t key_len;
  uk__arch arch;
} find_arg;

/* The memory cache's build step of the bundle tier: the first bundle that
 * has the kernel for the arch. UK_ERR_NOT_FOUND (never cached, no message)
 * when none has. */
static uk_status find(void *p, uk__binary **out) {
  find_arg *a = p;
  uk_hash128 h = uk__hash128(a->key, a->key_len);
  int n = atomic_load_explicit(&a->ctx->num_bundles, memory_order_acquire);
  for (int k = 0; k < n; k++) {
    int found = 0;
    uk_status st = uk__bundle_find(a->ctx->bundles[k], h, a->key, a->key_len, a->arch, out, &found);
    if (st != UK_OK) return st;
    if (found) {
      atomic_fetch_add(&a->ctx->bundle_hits, 1);
      return UK_OK;
    }
  }
  return UK_ERR_NOT_FOUND;
}

uk_status uk__context_bundle_lookup(uk_context *ctx, const uk__compile_keyed *keyed, uk_hash128 look,
                                    uk__binary **out, int *found) {
  *found = 0;
  uk_strbuf key;
  uk__sb_init(&key);
  uk_status st = uk__compile_bundle_key(keyed, &key);
  size_t bundle_len = key.len;
  /* In the memory cache under the bundle key and the arch: never equal to a
   * compile's key, which starts "ukern ". */
  uk__sb_addf(&key, "bundle arch %d %d\n", keyed->req->arch, keyed->req->arch_flags);
  if (st == UK_OK && key.failed) st = uk__errorf(UK_ERR_NOMEM, "out of memory building a bundle key");
  if (st == UK_OK) {
    find_arg a = {ctx, key.buf, bundle_len, {keyed->req->arch, keyed->req->arch_flags}};
    int hit = 0;
    st = uk__mcache_get(ctx->mcache, look, key.buf, key.len, find, &a, out, &hit);
    if (st == UK_OK) {
      *found = 1;
      if (hit) atomic_fetch_add(&ctx->memory_hits, 1);
    } else if (st == UK_ERR_NOT_FOUND) {
      uk__error_clear();
      st = UK_OK;
    }
  }
  uk__sb_release(&key);
  return st;
}

static void describe(uk_strbuf *r, const uk__bundle *b) {
  char archs[256];
  uk__bundle_arch_list(b->archs, b->num_archs, archs, sizeof archs);
  uk__sb_addf(r, "%s: %d kernels for %s", b->path, b->count, archs);
}

uk_status uk_context_bundles(uk_context *ctx, char **out) {
  uk__error_clear();
  if (!ctx || !out) return uk__errorf(UK_ERR_INVALID, "uk_context_bundles: %s is NULL", !ctx ? "ctx" : "out");
  /* The arch this context compiles for, when it can be known without
   * failing: its option, else its device's. */
  uk__arch want = {ctx->opts.arch, ctx->arch_flags};
  if (!want.num) { /* the device's (asked directly: context.c calls into this file) */
    uk_device_info info;
    if (uk_device_info_get(ctx->opts.device, &info) == UK_OK) want.num = info.arch;
    uk__error_clear();
  }
  uk_strbuf r;
  uk__sb_init(&r);
  int n = atomic_load_explicit(&ctx->num_bundles, memory_order_acquire);
  for (int k = 0; k < n; k++) {
    uk__bundle *b = ctx->bundles[k];
    describe(&r, b);
    uk__sb_addf(&r, ", %llu hits", (unsigned long long)atomic_load(&b->hits));
    if (want.num && !uk__bundle_has_arch(b, want)) {
      char w[32], have[256];
      uk__arch_name(want, w, sizeof w);
      uk__bundle_arch_list(b->archs, b->num_archs, have, sizeof have);
      uk__sb_addf(&r, "; skipped: built for %s, this context compiles for %s", have, w);
    } else if (atomic_load_explicit(&b->skipped, memory_order_acquire) == 2) {
      uk__sb_addf(&r, "; skipped for some kernels: %s", b->skip_reason);
    }
    uk__sb_add(&r, "\n");
  }
  if (r.failed) {
    uk__sb_release(&r);
    return uk__errorf(UK_ERR_NOMEM, "out of memory describing bundles");
  }
  char *text = uk__sb_detach(&r);
  *out = text ? text : strdup("");
  return *out ? UK_OK : uk__errorf(UK_ERR_NOMEM, "out of memory describing bundles");
}

uk_status uk_bundle_verify(const char *path, char **listing) {
  uk__error_clear();
  if (!path) return uk__errorf(UK_ERR_INVALID, "uk_bundle_verify: path is NULL");
  uk__bundle *b = NULL;
  uk_status st = uk__bundle_open(path, &b);
  if (st != UK_OK || !listing) {
    uk__bundle_close(b);
    return st;
  }
  uk_strbuf r;
  uk__sb_init(&r);
  for (int k = 0; k < b->count; k++) {
    const uk__bundle_entry *e = &b->entries[k];
    char archs[256], names[512];
    uk__bundle_arch_list(e->archs, e->num_archs, archs, sizeof archs);
    uk__cache_key_kernels(e->key, e->key_len, names, sizeof names);
    uk__sb_addf(&r, "%-24s %8llu bytes  %s\n", archs, (unsigned long long)e->payload_size,
                names[0] ? names : "(no kernel named)");
  }
  describe(&r, b);
  uk__sb_addf(&r, ", %llu bytes, ukern " UK_VERSION_STRING ", all checksums good\n", (unsigned long long)b->size);
  uk__bundle_close(b);
  if (r.failed) {
    uk__sb_release(&r);
    return uk__errorf(UK_ERR_NOMEM, "out of memory listing a bundle");
  }
  *listing = uk__sb_detach(&r);
  return UK_OK;
}

uk_status uk_bundle_create_from_cache(const char *cache_dir, const char *const *archs, int num_archs,
                                      const char *path, char **report) {
  uk__error_clear();
  if (!path || num_archs < 0 || (num_archs > 0 && !archs))
    return uk__errorf(UK_ERR_INVALID, "uk_bundle_create_from_cache: %s", !path ? "path is NULL" : "bad arch list");
  if (num_archs > UK__BUNDLE_MAX_ARCHS)
    return uk__errorf(UK_ERR_INVALID, "uk_bundle_create_from_cache: more than %d archs", UK__BUNDLE_MAX_ARCHS);
  uk__arch want[UK__BUNDLE_MAX_ARCHS];
  for (int k = 0; k < num_archs; k++) {
    uk_status st = uk__arch_parse(archs[k] ? archs[k] : "", "bundle arch", &want[k]);
    if (st != UK_OK) return st;
    if (want[k].flags & ~UK__ARCH_A)
      return uk__errorf(UK_ERR_INVALID, "bundle arch '%s': a bundle holds cubins of sm_XY or sm_XYa only", archs[k]);
  }
  char *owned = NULL;
  if (!cache_dir) {
    uk_status st = uk_cache_default_dir(&owned);
    if (st != UK_OK) return st;
    cache_dir = owned;
  }
  uk_strbuf r;
  uk__sb_init(&r);
  uk_status st = uk__bundle_write_from_cache(cache_dir, want, num_archs, path, report ? &r : NULL);
  free(owned);
  if (st == UK_OK && report) {
    if (r.failed || !(*report = uk__sb_detach(&r))) st = uk__errorf(UK_ERR_NOMEM, "out of memory");
  }
  uk__sb_release(&r);
  return st;
}
