/* The cache key of a compile request, described once (compile.h). `walk`
 * is the description: it emits the key's bytes to a sink, and the hash, the
 * key text and the comparison are sinks of the same stream. A memory-cache
 * hit walks once, into the request's gathered pieces (uk__compile_keyed),
 * which the hash and the comparison then read; only a request too large to
 * gather is walked per use. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/embedded.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "runtime/compile.h"
#include "runtime/include_scan.h"
#include "runtime/link.h"
#include "runtime/std_headers.h"

uk_hash128 (*uk__compile_hash_hook)(const uk__compile_req *req);

/* keep: data outlives the walk (the request's strings, static text), so a
 * gathered piece may point at it instead of copying it. */
typedef void (*sink_fn)(void *arg, const void *data, size_t len, int keep);

/* What every request shares (versions, the embedded headers, the toolkit
 * include directories), as key text built once per process, and the hash
 * state after it: hashing ~25 KB of embedded headers per lookup would
 * dominate a memory-cache hit, so they enter through their digest. */
static pthread_once_t prefix_once = PTHREAD_ONCE_INIT;
static char prefix[4096];
static size_t prefix_len;
static uk_hasher prefix_hash;

static void make_prefix(void) {
  uk_hasher h;
  uk__hasher_init(&h);
  for (int k = 0; k < uk__embedded_header_count; k++) {
    const uk__embedded_file *f = &uk__embedded_headers[k];
    char head[256];
    int n = snprintf(head, sizeof head, "header %s %zu\n", f->name, f->size);
    uk__hasher_update(&h, head, n > 0 && (size_t)n < sizeof head ? (size_t)n : 0);
    uk__hasher_update(&h, f->data, f->size);
  }
  char digest[33];
  uk__hash128_hex(uk__hasher_digest(&h), digest);
  int ver = 0;
  if (uk__nvrtc_version(&ver) != UK_OK) uk__error_clear();
  uk_strbuf sb;
  uk__sb_init(&sb);
  uk__sb_addf(&sb, "ukern %s\nnvrtc %d\nheaders %s\n", UK_VERSION_STRING, ver, digest);
  /* The toolkit headers a program may include come from these directories. */
  const char *const *dirs = NULL;
  int ndirs = 0;
  if (uk__nvrtc_include_dirs(&dirs, &ndirs) != UK_OK) uk__error_clear();
  for (int k = 0; k < ndirs; k++) uk__sb_addf(&sb, "include %zu %s\n", strlen(dirs[k]), dirs[k]);
  /* A prefix that does not fit (absurd include paths) keeps its digest. */
  const char *text = uk__sb_str(&sb);
  if (sb.failed || sb.len >= sizeof prefix) {
    uk__hasher_init(&h);
    uk__hasher_update(&h, text, sb.len);
    char all[33];
    uk__hash128_hex(uk__hasher_digest(&h), all);
    prefix_len = (size_t)snprintf(prefix, sizeof prefix, "prefix %s\n", all);
  } else {
    memcpy(prefix, text, sb.len);
    prefix_len = sb.len;
  }
  uk__sb_release(&sb);
  uk__hasher_init(&prefix_hash);
  uk__hasher_update(&prefix_hash, prefix, prefix_len);
}

/* Decimal digits of v at p (no NUL); returns their count. The key is walked
 * on every memory-cache hit, where snprintf was most of the cost. */
/* Inlined into each sink's caller, so that the sink calls are direct (the
 * gather runs on every memory-cache hit). */
#define HOT_WALK static inline __attribute__((always_inline))

HOT_WALK size_t put_dec(char *p, long long v) {
  char tmp[24], *end = tmp + sizeof tmp, *d = end;
  unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
  if (u < 1000 && v >= 0) { /* arch numbers and most lengths */
    size_t n = u < 10 ? 1 : u < 100 ? 2 : 3;
    for (size_t j = n; j-- > 0; u /= 10) p[j] = (char)('0' + u % 10);
    return n;
  }
  do *--d = (char)('0' + u % 10);
  while ((u /= 10) != 0);
  if (v < 0) *--d = '-';
  memcpy(p, d, (size_t)(end - d));
  return (size_t)(end - d);
}

/* A length-prefixed string part: "<tag> <len> <bytes>\n". */
HOT_WALK void part(sink_fn sink, void *arg, const char *tag, const char *s) {
  size_t n = strlen(s), t = strlen(tag);
  char buf[64];
  if (t > sizeof buf - 24) t = sizeof buf - 24; /* tags are short literals */
  memcpy(buf, tag, t);
  buf[t++] = ' ';
  t += put_dec(buf + t, (long long)n);
  buf[t++] = ' ';
  sink(arg, buf, t, 0);
  sink(arg, s, n, 1);
  sink(arg, "\n", 1, 1);
}

/* The request's own parts, after the shared prefix. */
HOT_WALK void walk(const uk__compile_keyed *k, sink_fn sink, void *arg) {
  const uk__compile_req *req = k->req;
  char buf[64] = "arch ";
  size_t n = 5;
  n += put_dec(buf + n, req->arch);
  buf[n++] = ' ';
  n += put_dec(buf + n, req->arch_flags);
  buf[n++] = '\n';
  sink(arg, buf, n, 0);
  for (int j = 0; j < req->num_options; j++) part(sink, arg, "option", req->options[j]);
  for (int j = 0; j < req->num_name_expressions; j++) part(sink, arg, "name", req->name_expressions[j]);
  part(sink, arg, "source", req->source);
  if (k->files[0]) part(sink, arg, "files", k->files);
  if (k->link[0]) part(sink, arg, "link", k->link);
  /* The C++ standard header map (std_headers.h): its digest, or off. */
  part(sink, arg, "std_headers", req->no_std_headers ? "off" : uk__std_headers_digest());
}

/* Pieces shorter than this are copied (runs of them become one piece). */
#define COPY_BELOW 64
#define NSEG ((int)(sizeof ((uk__compile_keyed *)0)->seg / sizeof ((uk__compile_keyed *)0)->seg[0]))

HOT_WALK void gather_sink(void *arg, const void *data, size_t len, int keep) {
  uk__compile_keyed *k = arg;
  if (k->nseg < 0 || len == 0) return;
  k->len += len;
  if (keep && len >= COPY_BELOW) {
    if (k->nseg == NSEG) goto full;
    k->seg[k->nseg].p = data;
    k->seg[k->nseg++].n = len;
    return;
  }
  if (len > sizeof k->arena - k->used) goto full;
  char *at = k->arena + k->used;
  memcpy(at, data, len);
  k->used += len;
  if (k->nseg > 0 && k->seg[k->nseg - 1].p + k->seg[k->nseg - 1].n == at) {
    k->seg[k->nseg - 1].n += len;
    return;
  }
  if (k->nseg == NSEG) goto full;
  k->seg[k->nseg].p = at;
  k->seg[k->nseg++].n = len;
  return;
full:
  k->nseg = -1;
}

void uk__compile_keyed_init(uk__compile_keyed *k, const uk__compile_req *req) {
  pthread_once(&prefix_once, make_prefix);
  k->req = req;
  if (!uk__include_digest(req, k->files)) k->files[0] = 0;
  if (!uk__link_key(req, k->link)) k->link[0] = 0;
  else if (req->no_link) snprintf(k->link, sizeof k->link, "unlinked");
  k->nseg = 0;
  k->len = k->used = 0;
  walk(k, gather_sink, k);
}

static void hash_sink(void *arg, const void *data, size_t len, int keep) {
  (void)keep;
  uk__hasher_update(arg, data, len);
}

uk_hash128 uk__compile_hash(const uk__compile_keyed *k) {
  uk_hasher h = prefix_hash;
  if (k->nseg < 0) walk(k, hash_sink, &h);
  for (int j = 0; j < k->nseg; j++) uk__hasher_update(&h, k->seg[j].p, k->seg[j].n);
  return uk__hasher_digest(&h);
}

/* The request's pieces hashed one by one (XXH3-64 each, combined): the
 * prefix is the same for every request of the process, so it stays out. */
uk_hash128 uk__compile_lookup(const uk__compile_keyed *k) {
  if (k->nseg < 0) return uk__compile_hash(k);
  /* The copied pieces are contiguous in the arena: one call for them all. */
  uint64_t h = uk__hash64(k->arena, k->used) ^ k->len;
  uintptr_t a0 = (uintptr_t)k->arena, a1 = a0 + sizeof k->arena;
  for (int j = 0; j < k->nseg; j++) {
    uintptr_t p = (uintptr_t)k->seg[j].p;
    if (p >= a0 && p < a1) continue;
    h ^= uk__hash64(k->seg[j].p, k->seg[j].n);
    h = (h << 27 | h >> 37) * 0x9E3779B97F4A7C15ull;
  }
  return (uk_hash128){h, 0};
}

static void text_sink(void *arg, const void *data, size_t len, int keep) {
  (void)keep;
  uk__sb_addn(arg, data, len);
}

uk_status uk__compile_key(const uk__compile_keyed *k, uk_strbuf *key) {
  uk__sb_addn(key, prefix, prefix_len);
  if (k->nseg < 0) walk(k, text_sink, key);
  for (int j = 0; j < k->nseg; j++) uk__sb_addn(key, k->seg[j].p, k->seg[j].n);
  if (key->failed) return uk__errorf(UK_ERR_NOMEM, "out of memory building a cache key");
  return UK_OK;
}

typedef struct cmp_state {
  const char *key;
  size_t len, at;
  int differs;
} cmp_state;

static void cmp_sink(void *arg, const void *data, size_t len, int keep) {
  (void)keep;
  cmp_state *c = arg;
  if (c->differs) return;
  if (len > c->len - c->at || memcmp(c->key + c->at, data, len) != 0) c->differs = 1;
  else c->at += len;
}

int uk__compile_key_equals(const uk__compile_keyed *k, const char *key, size_t len) {
  if (len < prefix_len || memcmp(key, prefix, prefix_len) != 0) return 0;
  cmp_state c = {key, len, prefix_len, 0};
  if (k->nseg < 0) {
    walk(k, cmp_sink, &c);
    return !c.differs && c.at == len;
  }
  if (len - prefix_len != k->len) return 0;
  for (int j = 0; j < k->nseg; j++) {
    if (memcmp(key + c.at, k->seg[j].p, k->seg[j].n) != 0) return 0;
    c.at += k->seg[j].n;
  }
  return 1;
}
