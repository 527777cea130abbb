/* The cache key of a compile request, described once (compile.h). `walk`
 * is the description: it emits the key's bytes to a sink, and the hash, the
 * key text and the comparison are three sinks of the same stream. A
 * memory-cache hit runs only the comparison, after finding its entry by
 * uk__compile_lookup (an index over the same fields, no key bytes). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/embedded.h"
#include "base/error.h"
#include "base/join.h"
#include "base/strbuf.h"
#include "runtime/compile.h"
#include "runtime/first_use.h"
#include "runtime/include_scan.h"
#include "runtime/link.h"
#include "runtime/std_headers.h"

UK__FIRST_USE uk_hash128 (*uk__compile_hash_hook)(const uk__compile_req *req);

typedef void (*sink_fn)(void *arg, const void *data, size_t len);

/* What every request shares (versions, the embedded headers, the toolkit
 * include directories), as key text built once per process, and the hash
 * state after it: hashing ~25 KB of embedded headers per lookup would
 * dominate a memory-cache hit, so they enter through their digest. */
UK__FIRST_USE static pthread_once_t prefix_once = PTHREAD_ONCE_INIT;
#define PREFIX_MAX 4096
/* On the heap, not a 4 KB static: statics that a new process's first
 * lookup touches then share fewer pages (each first touch is a fault). */
static const char *prefix = "";
static char digest_prefix[48]; /* "prefix <digest>\n" when the text does not fit */
UK__FIRST_USE static size_t prefix_len;
UK__FIRST_USE static uk_hasher prefix_hash;
UK__FIRST_USE static atomic_int prefix_ready;

static void make_prefix(void) {
  uk_hasher h;
  /* The embedded headers by their build-time digest: hashing their ~70 KB
   * here was part of every new process's first lookup. */
  const char *digest = uk__embedded_headers_digest;
  int ver = 0;
  if (uk__nvrtc_version(&ver) != UK_OK) uk__error_clear();
  uk_strbuf sb;
  uk__sb_init(&sb);
  char num[24];
  if (ver < 0) ver = 0; /* a version is positive; 0 when unknown */
  uk__udec(num, (unsigned long long)ver);
  /* "ukern V\nnvrtc N\nheaders D\n" and "include LEN DIR\n" per directory,
   * appended piece by piece: vfprintf's code was a cost of the first key. */
  const char *head[] = {"ukern ", UK_VERSION_STRING, "\nnvrtc ", num, "\nheaders ", digest, "\n"};
  for (size_t k = 0; k < sizeof head / sizeof head[0]; k++) uk__sb_add(&sb, head[k]);
  /* The toolkit headers a program may include come from these directories. */
  const char *const *dirs = NULL;
  int ndirs = 0;
  if (uk__nvrtc_include_dirs(&dirs, &ndirs) != UK_OK) uk__error_clear();
  for (int k = 0; k < ndirs; k++) {
    uk__udec(num, strlen(dirs[k]));
    const char *line[] = {"include ", num, " ", dirs[k], "\n"};
    for (size_t j = 0; j < sizeof line / sizeof line[0]; j++) uk__sb_add(&sb, line[j]);
  }
  /* A prefix that does not fit (absurd include paths) keeps its digest. */
  const char *text = uk__sb_str(&sb);
  if (sb.failed || sb.len >= PREFIX_MAX) {
    uk__hasher_init(&h);
    uk__hasher_update(&h, text, sb.len);
    char all[33];
    uk__hash128_hex(uk__hasher_digest(&h), all);
    prefix_len = (size_t)snprintf(digest_prefix, sizeof digest_prefix, "prefix %s\n", all);
    prefix = digest_prefix;
    uk__sb_release(&sb);
  } else {
    size_t len = sb.len;
    char *kept = uk__sb_detach(&sb); /* for the process's life */
    prefix = kept ? kept : "";
    prefix_len = kept ? len : 0;
  }
  uk__hasher_init(&prefix_hash);
  uk__hasher_update(&prefix_hash, prefix, prefix_len);
  atomic_store_explicit(&prefix_ready, 1, memory_order_release);
}

/* Decimal digits of v at p (no NUL); returns their count. The key is walked
 * on every memory-cache hit, where snprintf was most of the cost. */
/* Inlined into each sink's caller, so that the sink calls are direct (the
 * comparison runs on every memory-cache hit). */
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
HOT_WALK void part_n(sink_fn sink, void *arg, const char *tag, const char *s, size_t n) {
  size_t t = strlen(tag);
  char buf[64];
  if (t > sizeof buf - 24) t = sizeof buf - 24; /* tags are short literals */
  memcpy(buf, tag, t);
  buf[t++] = ' ';
  t += put_dec(buf + t, (long long)n);
  buf[t++] = ' ';
  sink(arg, buf, t);
  sink(arg, s, n);
  sink(arg, "\n", 1);
}

HOT_WALK void part(sink_fn sink, void *arg, const char *tag, const char *s) { part_n(sink, arg, tag, s, strlen(s)); }

/* The request's own parts, after the shared prefix. A bundle's key
 * (portable: compiled on one machine, used on another) leaves out the arch
 * (an entry holds every arch it was built for) and names only whether the
 * code was linked, not the linker's version, nor nvcc's. */
HOT_WALK void walk_parts(const uk__compile_keyed *k, sink_fn sink, void *arg, int bundle) {
  const uk__compile_req *req = k->req;
  if (!bundle) {
    char buf[64] = "arch ";
    size_t n = 5;
    n += put_dec(buf + n, req->arch);
    buf[n++] = ' ';
    n += put_dec(buf + n, req->arch_flags);
    buf[n++] = '\n';
    sink(arg, buf, n);
  }
  for (int j = 0; j < req->num_options; j++) part(sink, arg, "option", req->options[j]);
  for (int j = 0; j < req->num_name_expressions; j++) part(sink, arg, "name", req->name_expressions[j]);
  part_n(sink, arg, "source", req->source, k->source_len);
  if (k->files[0]) part(sink, arg, "files", k->files);
  if (k->link[0]) part(sink, arg, "link", !bundle ? k->link : strcmp(k->link, "unlinked") ? "linked" : "unlinked");
  /* The C++ standard header map (std_headers.h): its digest, or off. */
  part(sink, arg, "std_headers", req->no_std_headers ? "off" : uk__std_headers_digest());
  /* Jitify's way with headers NVRTC cannot find (absent: an error, as before). */
  if (req->missing_headers_empty) part(sink, arg, "missing_headers", "empty");
  /* nvcc's path and version; NVRTC's is in the prefix. A bundle's key says
   * only that nvcc made it (its path is the build machine's). */
  if (req->backend == UK_BACKEND_NVCC) part(sink, arg, "nvcc", bundle ? "nvcc" : uk__nvcc_key());
}

HOT_WALK void walk(const uk__compile_keyed *k, sink_fn sink, void *arg) { walk_parts(k, sink, arg, 0); }

/* The prefix holds NVRTC's version: made at the first need of the full key
 * (a disk lookup or a compile), never for a bundle's key, so that a process
 * served by bundles never asks for it (nor loads NVRTC to learn it). */
static inline void need_prefix(void) {
  if (!atomic_load_explicit(&prefix_ready, memory_order_acquire)) pthread_once(&prefix_once, make_prefix);
}

void uk__compile_keyed_init(uk__compile_keyed *k, const uk__compile_req *req) {
  k->req = req;
  k->source_len = strlen(req->source);
  k->files[0] = k->link[0] = 0;
  /* No option and no '#': nothing to include or link (both would say so),
   * and no call into their code, pages that a new process's first lookup
   * then need not fault in. */
  if (req->num_options == 0 && !memchr(req->source, '#', k->source_len)) return;
  if (!uk__include_digest(req, k->files)) k->files[0] = 0;
  int lto = 0;
  if (!uk__link_wanted(req->options, req->num_options, &lto)) return;
  uk__toolkit tk;
  uk__nvrtc_toolkit(&tk);
  if (!uk__link_key(&tk, req, k->link)) k->link[0] = 0;
  else if (req->no_link) snprintf(k->link, sizeof k->link, "unlinked");
}

static void hash_sink(void *arg, const void *data, size_t len) { uk__hasher_update(arg, data, len); }

uk_hash128 uk__compile_hash(const uk__compile_keyed *k) {
  need_prefix();
  uk_hasher h = prefix_hash;
  walk(k, hash_sink, &h);
  return uk__hasher_digest(&h);
}

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v;
  return (h << 27 | h >> 37) * 0x9E3779B97F4A7C15ull;
}

static uint64_t str64(const char *s) { return uk__hash64(s, strlen(s)); }

/* Every field that walk emits, hashed as values (no key bytes are made):
 * equal requests, equal keys, equal lookups. A field left out would only
 * make chains longer, never a wrong hit (the comparison reads the key). The
 * prefix is the same for every request of the process. */
uk_hash128 uk__compile_lookup(const uk__compile_keyed *k) {
  const uk__compile_req *r = k->req;
  uint64_t h = uk__hash64(r->source, k->source_len);
  h = mix(h, (uint64_t)(unsigned)r->arch << 32 | (unsigned)r->arch_flags);
  h = mix(h, (uint64_t)(unsigned)r->num_options << 32 | (unsigned)r->num_name_expressions << 1 |
                 (r->no_std_headers != 0));
  for (int j = 0; j < r->num_options; j++) h = mix(h, str64(r->options[j]));
  for (int j = 0; j < r->num_name_expressions; j++) h = mix(h, str64(r->name_expressions[j]));
  if (k->files[0]) h = mix(h, str64(k->files));
  if (k->link[0]) h = mix(h, str64(k->link));
  h = mix(h, (uint64_t)(unsigned)r->backend << 1 | (r->missing_headers_empty != 0));
  return (uk_hash128){h, 0};
}

static void text_sink(void *arg, const void *data, size_t len) { uk__sb_addn(arg, data, len); }

uk_status uk__compile_key(const uk__compile_keyed *k, uk_strbuf *key) {
  need_prefix();
  uk__sb_addn(key, prefix, prefix_len);
  walk(k, text_sink, key);
  if (key->failed) return uk__errorf(UK_ERR_NOMEM, "out of memory building a cache key");
  return UK_OK;
}

typedef struct cmp_state {
  const char *key;
  size_t len, at;
  int differs;
} cmp_state;

HOT_WALK void cmp_sink(void *arg, const void *data, size_t len) {
  cmp_state *c = arg;
  if (c->differs) return;
  if (len > c->len - c->at || memcmp(c->key + c->at, data, len) != 0) c->differs = 1;
  else c->at += len;
}

int uk__compile_key_equals(const uk__compile_keyed *k, const char *key, size_t len) {
  need_prefix();
  if (len < prefix_len || memcmp(key, prefix, prefix_len) != 0) return 0;
  cmp_state c = {key, len, prefix_len, 0};
  walk(k, cmp_sink, &c);
  return !c.differs && c.at == len;
}

/* ---- a bundle's key ----------------------------------------------------------
 * "ukern-bundle 1\nukern V\nheaders D\n" and the request's parts without
 * the arch; nothing of the machine (NVRTC's version, the toolkit's
 * directories, the linker's version), so that a bundle made on a build
 * machine is found on any machine running this library. */

static void bundle_head(sink_fn sink, void *arg) {
  const char *head[] = {"ukern-bundle 1\nukern ", UK_VERSION_STRING, "\nheaders ", uk__embedded_headers_digest, "\n"};
  for (size_t j = 0; j < sizeof head / sizeof head[0]; j++) sink(arg, head[j], strlen(head[j]));
}

uk_status uk__compile_bundle_key(const uk__compile_keyed *k, uk_strbuf *key) {
  bundle_head(text_sink, key);
  walk_parts(k, text_sink, key, 1);
  if (key->failed) return uk__errorf(UK_ERR_NOMEM, "out of memory building a bundle key");
  return UK_OK;
}

/* The line at *p (up to and without '\n'), *p moved past it; NULL at the end. */
static const char *take_line(const char **p, const char *end, size_t *n) {
  const char *nl = memchr(*p, '\n', (size_t)(end - *p));
  if (!nl) return NULL;
  const char *line = *p;
  *n = (size_t)(nl - line);
  *p = nl + 1;
  return line;
}

static int starts(const char *line, size_t n, const char *word) {
  size_t w = strlen(word);
  return n >= w && memcmp(line, word, w) == 0;
}

/* A part "<tag> <len> <bytes>\n" at *p: the tag and the bytes; *p past it. */
static int take_part(const char **p, const char *end, const char **tag, size_t *tag_len, const char **val,
                     size_t *val_len) {
  const char *s = *p, *sp = memchr(s, ' ', (size_t)(end - s));
  if (!sp || sp == s) return 0;
  unsigned long long len = 0;
  const char *d = sp + 1;
  for (; d < end && *d >= '0' && *d <= '9' && d - sp <= 19; d++) len = len * 10 + (unsigned)(*d - '0');
  if (d == sp + 1 || d >= end || *d != ' ' || len > (unsigned long long)(end - d - 1) ||
      d[1 + len] != '\n')
    return 0;
  *tag = s;
  *tag_len = (size_t)(sp - s);
  *val = d + 1;
  *val_len = (size_t)len;
  *p = d + 2 + len;
  return 1;
}

int uk__compile_bundle_key_from(const char *key, size_t len, uk_strbuf *out, int *arch, int *arch_flags,
                                const char **why) {
  const char *p = key, *end = key + len, *line;
  size_t n;
  *why = "not the key of one compile (a linked module, or damaged)";
  if (!(line = take_line(&p, end, &n)) || !starts(line, n, "ukern ")) return 0;
  if (n - 6 != strlen(UK_VERSION_STRING) || memcmp(line + 6, UK_VERSION_STRING, n - 6) != 0) {
    *why = "made by another version of ukern";
    return 0;
  }
  if (!(line = take_line(&p, end, &n)) || !starts(line, n, "nvrtc ")) return 0;
  if (!(line = take_line(&p, end, &n)) || !starts(line, n, "headers ")) return 0;
  if (n - 8 != strlen(uk__embedded_headers_digest) || memcmp(line + 8, uk__embedded_headers_digest, n - 8) != 0) {
    *why = "made with other device headers";
    return 0;
  }
  const char *tag, *val;
  size_t tl, vl;
  while (p < end && starts(p, (size_t)(end - p), "include "))
    if (!take_part(&p, end, &tag, &tl, &val, &vl)) return 0;
  if (!(line = take_line(&p, end, &n)) || !starts(line, n, "arch ")) return 0;
  char num[48];
  if (n - 5 >= sizeof num) return 0;
  memcpy(num, line + 5, n - 5);
  num[n - 5] = 0;
  char *e1, *e2;
  long a = strtol(num, &e1, 10), f = *e1 == ' ' ? strtol(e1 + 1, &e2, 10) : -1;
  if (*e1 != ' ' || *e2 || a <= 0 || a > 100000 || f < 0 || f > 255) return 0;
  bundle_head(text_sink, out);
  while (p < end) {
    if (!take_part(&p, end, &tag, &tl, &val, &vl)) return 0;
    if (tl == 4 && !memcmp(tag, "link", 4)) {
      const char *v = vl == 8 && !memcmp(val, "unlinked", 8) ? "unlinked" : "linked";
      part(text_sink, out, "link", v);
    } else if (tl == 4 && !memcmp(tag, "nvcc", 4)) {
      part(text_sink, out, "nvcc", "nvcc");
    } else {
      uk__sb_addn(out, tag, (size_t)(val - tag));
      uk__sb_addn(out, val, vl);
      uk__sb_addn(out, "\n", 1);
    }
  }
  *arch = (int)a;
  *arch_flags = (int)f;
  return !out->failed;
}
