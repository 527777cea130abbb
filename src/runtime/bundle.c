/* Reading kernel bundles (bundle.h): open and check everything once, then
 * look entries up by their key, reading each payload back with pread. */
#include "runtime/bundle.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "runtime/fatbin.h"
#include "runtime/image_check.h"

/* Where the bytes come from: a descriptor (pread) or memory. */
typedef struct src {
  int fd;
  const unsigned char *mem;
  uint64_t size;
} src;

static uint64_t le(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = n; i-- > 0;) v = v << 8 | p[i];
  return v;
}

/* Exactly len bytes at off; 0 when the source is shorter (truncated). */
static int read_at(const src *s, uint64_t off, void *buf, size_t len) {
  if (off > s->size || len > s->size - off) return 0;
  if (s->mem) {
    memcpy(buf, s->mem + off, len);
    return 1;
  }
  for (size_t got = 0; got < len;) {
    ssize_t r = pread(s->fd, (char *)buf + got, len - got, (off_t)(off + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return 0;
    got += (size_t)r;
  }
  return 1;
}

__attribute__((format(printf, 3, 4))) static uk_status refuse(uk_status st, const char *path, const char *fmt, ...) {
  char why[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  return uk__errorf(st, "bundle %s: %s; not used (rebuild it with `ukern bundle create`)", path, why);
}

static void free_entry(uk__bundle_entry *e) {
  free((char *)e->key);
  for (int k = 0; k < e->num_names; k++) free((char *)e->names[k]), free((char *)e->lowered[k]);
  free(e->names);
  free(e->lowered);
}

void uk__bundle_close(uk__bundle *b) {
  if (!b) return;
  for (int k = 0; k < b->count; k++) free_entry(&b->entries[k]);
  free(b->entries);
  if (b->fd >= 0) close(b->fd);
  free(b->path);
  free(b);
}

/* A length-prefixed string of the meta at *at: a NUL-terminated copy. */
static char *take_str(const unsigned char *m, size_t size, size_t *at, size_t *len) {
  if (size - *at < 4) return NULL;
  uint64_t n = le(m + *at, 4);
  *at += 4;
  if (n > size - *at) return NULL;
  char *s = malloc((size_t)n + 1);
  if (!s) return NULL;
  memcpy(s, m + *at, (size_t)n);
  s[n] = 0;
  *at += (size_t)n;
  if (len) *len = (size_t)n;
  return s;
}

/* Parses one entry's meta into e; a static reason on failure. */
static const char *parse_meta(const unsigned char *m, size_t size, uk__bundle_entry *e) {
  size_t at = 0;
  if (!(e->key = take_str(m, size, &at, &e->key_len))) return "a kernel's key is cut short";
  if (size - at < 4) return "a kernel's arch list is cut short";
  uint64_t na = le(m + at, 4);
  at += 4;
  if (na == 0 || na > UK__BUNDLE_MAX_ARCHS || size - at < na * 8) return "a kernel's arch list is malformed";
  for (uint64_t k = 0; k < na; k++, at += 8) {
    e->archs[k].num = (int)le(m + at, 4);
    e->archs[k].flags = (int)le(m + at + 4, 4);
    if (e->archs[k].num < 10 || e->archs[k].num > 10000 || (e->archs[k].flags & ~UK__ARCH_A))
      return "a kernel's arch list names an arch that is not a cubin's";
  }
  e->num_archs = (int)na;
  if (size - at < 4) return "a kernel's name map is cut short";
  uint64_t nn = le(m + at, 4);
  at += 4;
  if (nn > (size - at) / 8) return "a kernel's name map is malformed";
  e->names = calloc((size_t)nn + 1, sizeof *e->names);
  e->lowered = calloc((size_t)nn + 1, sizeof *e->lowered);
  if (!e->names || !e->lowered) return "out of memory";
  for (uint64_t k = 0; k < nn; k++) {
    e->num_names = (int)k + 1;
    if (!(e->names[k] = take_str(m, size, &at, NULL)) || !(e->lowered[k] = take_str(m, size, &at, NULL)))
      return "a kernel's name map is malformed";
  }
  if (at != size) return "a kernel's description has trailing bytes";
  return NULL;
}

/* The payload's fatbin must hold a cubin for every arch of its entry. */
static const char *check_payload(const unsigned char *p, size_t size, const uk__bundle_entry *e) {
  uk__fatbin_image im[UK__BUNDLE_MAX_ARCHS];
  int n = uk__fatbin_list(p, size, im, UK__BUNDLE_MAX_ARCHS);
  if (n < 0) return "a kernel's code is not a well-formed fatbin";
  for (int a = 0; a < e->num_archs; a++) {
    int have = 0;
    for (int k = 0; k < n && !have; k++)
      have = im[k].arch.num == e->archs[a].num && im[k].arch.flags == e->archs[a].flags;
    if (!have) return "a kernel's fatbin lacks an arch its entry lists";
  }
  return NULL;
}

static void add_arch(uk__bundle *b, uk__arch a) {
  for (int k = 0; k < b->num_archs; k++)
    if (b->archs[k].num == a.num && b->archs[k].flags == a.flags) return;
  if (b->num_archs < UK__BUNDLE_MAX_ARCHS) b->archs[b->num_archs++] = a;
}

static int hash_less(uk_hash128 a, uk_hash128 b) { return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo); }

static uk_status parse(const src *s, const char *path, uk__bundle *b) {
  unsigned char h[UK__BUNDLE_HEADER];
  if (!read_at(s, 0, h, sizeof h)) return refuse(UK_ERR_IO, path, "%llu bytes: too short for a bundle header", (unsigned long long)s->size);
  if (memcmp(h, UK__BUNDLE_MAGIC, 8) != 0) return refuse(UK_ERR_IO, path, "not a ukern bundle (bad magic)");
  if (le(h + 12, 4) != UK__BUNDLE_BOM) return refuse(UK_ERR_INVALID, path, "written in another byte order");
  if (le(h + 88, 8) != uk__hash64(h, 88)) return refuse(UK_ERR_IO, path, "header checksum mismatch (damaged)");
  if (le(h + 8, 4) != UK__BUNDLE_VERSION)
    return refuse(UK_ERR_INVALID, path, "bundle format %llu (this library reads format 1)", (unsigned long long)le(h + 8, 4));
  char ver[17];
  memcpy(ver, h + 16, 16);
  ver[16] = 0;
  if (strcmp(ver, UK_VERSION_STRING) != 0)
    return refuse(UK_ERR_INVALID, path, "made by ukern %s (this is " UK_VERSION_STRING ")", ver);
  uint64_t count = le(h + 32, 4), toff = le(h + 40, 8), tsize = le(h + 48, 8), total = le(h + 56, 8);
  if (total != s->size)
    return refuse(UK_ERR_IO, path, "the file is %llu bytes, its header says %llu (truncated or extended)",
                  (unsigned long long)s->size, (unsigned long long)total);
  if (le(h + 36, 4) != 0 || le(h + 72, 8) != 0 || le(h + 80, 8) != 0)
    return refuse(UK_ERR_INVALID, path, "uses features this library does not know");
  if (toff < UK__BUNDLE_HEADER || tsize != count * UK__BUNDLE_RECORD || tsize > total || toff > total - tsize ||
      count > (1u << 20))
    return refuse(UK_ERR_IO, path, "the entry table lies outside the file (%llu entries)", (unsigned long long)count);
  unsigned char *t = malloc(tsize ? (size_t)tsize : 1);
  if (!t) return uk__errorf(UK_ERR_NOMEM, "out of memory reading bundle %s", path);
  uk_status st = UK_OK;
  unsigned char *buf = NULL;
  if (!read_at(s, toff, t, (size_t)tsize)) {
    st = refuse(UK_ERR_IO, path, "the file changed while it was read");
    goto out;
  }
  if (le(h + 64, 8) != uk__hash64(t, (size_t)tsize)) {
    st = refuse(UK_ERR_IO, path, "entry table checksum mismatch (damaged)");
    goto out;
  }
  if (!(b->entries = calloc(count ? (size_t)count : 1, sizeof *b->entries))) {
    st = uk__errorf(UK_ERR_NOMEM, "out of memory reading bundle %s", path);
    goto out;
  }
  for (uint64_t k = 0; k < count; k++) {
    const unsigned char *r = t + k * UK__BUNDLE_RECORD;
    uk__bundle_entry *e = &b->entries[k];
    b->count = (int)k + 1;
    e->hash = (uk_hash128){le(r, 8), le(r + 8, 8)};
    uint64_t moff = le(r + 16, 8), msize = le(r + 24, 8);
    e->payload_offset = le(r + 32, 8);
    e->payload_size = le(r + 40, 8);
    e->payload_sum = le(r + 56, 8);
    const char *why = NULL;
    if (k > 0 && !hash_less(b->entries[k - 1].hash, e->hash)) why = "entries out of order or repeated";
    else if (msize > total || moff > total - msize || moff < toff + tsize || msize > (64u << 20))
      why = "a kernel's description lies outside the file";
    else if (e->payload_size > total || e->payload_offset > total - e->payload_size ||
             e->payload_offset < toff + tsize || e->payload_size == 0 || e->payload_size > (1ull << 31))
      why = "a kernel's code lies outside the file";
    if (why) {
      st = refuse(UK_ERR_IO, path, "entry %llu: %s: damaged", (unsigned long long)k, why);
      goto out;
    }
    size_t big = (size_t)(msize > e->payload_size ? msize : e->payload_size);
    free(buf);
    if (!(buf = malloc(big ? big : 1))) {
      st = uk__errorf(UK_ERR_NOMEM, "out of memory reading bundle %s", path);
      goto out;
    }
    if (!read_at(s, moff, buf, (size_t)msize)) why = "the file changed while it was read";
    else if (uk__hash64(buf, (size_t)msize) != le(r + 48, 8)) why = "a kernel's description fails its checksum";
    else if ((why = parse_meta(buf, (size_t)msize, e)) != NULL) {
    } else if (!read_at(s, e->payload_offset, buf, (size_t)e->payload_size)) why = "the file changed while it was read";
    else if (uk__hash64(buf, (size_t)e->payload_size) != e->payload_sum) why = "a kernel's code fails its checksum";
    else {
      uk_hash128 kh = uk__hash128(e->key, e->key_len);
      why = kh.lo != e->hash.lo || kh.hi != e->hash.hi ? "a kernel's key does not match its hash"
                                                       : check_payload(buf, (size_t)e->payload_size, e);
    }
    if (why) {
      st = refuse(UK_ERR_IO, path, "entry %llu: %s: damaged", (unsigned long long)k, why);
      goto out;
    }
    for (int a = 0; a < e->num_archs; a++) add_arch(b, e->archs[a]);
  }
out:
  free(buf);
  free(t);
  return st;
}

static uk__bundle *bundle_new(const char *name) {
  uk__bundle *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  b->fd = -1;
  atomic_init(&b->hits, 0);
  atomic_init(&b->skipped, 0);
  if (!(b->path = strdup(name ? name : "(memory)"))) {
    free(b);
    return NULL;
  }
  return b;
}

uk_status uk__bundle_parse(const void *data, size_t size, const char *name, uk__bundle **out) {
  uk__bundle *b = bundle_new(name);
  if (!b) return uk__errorf(UK_ERR_NOMEM, "out of memory reading a bundle");
  src s = {-1, data ? data : (const unsigned char *)"", size};
  b->size = size;
  b->mem = s.mem;
  uk_status st = parse(&s, b->path, b);
  if (st != UK_OK) {
    uk__bundle_close(b);
    return st;
  }
  *out = b;
  return UK_OK;
}

uk_status uk__bundle_open(const char *path, uk__bundle **out) {
  if (!path || !*path) return uk__errorf(UK_ERR_INVALID, "bundle: empty path");
  uk__bundle *b = bundle_new(path);
  if (!b) return uk__errorf(UK_ERR_NOMEM, "out of memory opening bundle %s", path);
  uk_status st = UK_OK;
  struct stat sb;
  b->fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (b->fd < 0) {
    int e = errno;
    st = uk__errorf(UK_ERR_IO, "bundle %s: %s", path,
                    e == ELOOP ? "is a symbolic link; give the file itself (links are not followed)" : strerror(e));
  } else if (fstat(b->fd, &sb) != 0) {
    st = uk__errorf(UK_ERR_IO, "bundle %s: %s", path, strerror(errno));
  } else if (!S_ISREG(sb.st_mode)) {
    st = uk__errorf(UK_ERR_IO, "bundle %s: not a regular file (a FIFO, device or directory); not used", path);
  } else {
    b->size = (uint64_t)sb.st_size;
    src s = {b->fd, NULL, b->size};
    st = parse(&s, path, b);
  }
  if (st != UK_OK) {
    uk__bundle_close(b);
    return st;
  }
  *out = b;
  return UK_OK;
}

int uk__bundle_has_arch(const uk__bundle *b, uk__arch arch) {
  for (int k = 0; k < b->num_archs; k++)
    if (b->archs[k].num == arch.num && b->archs[k].flags == arch.flags) return 1;
  return 0;
}

void uk__bundle_arch_list(const uk__arch *archs, int n, char *buf, size_t cap) {
  size_t at = 0;
  buf[0] = 0;
  for (int k = 0; k < n && at + 1 < cap; k++) {
    char one[32];
    uk__arch_name(archs[k], one, sizeof one);
    int w = snprintf(buf + at, cap - at, "%s%s", k ? " " : "", one);
    if (w < 0) break;
    at += (size_t)w;
  }
}

/* Keeps the first reason: skipped goes 0 -> 1 (writing) -> 2 (readable). */
static void skip(uk__bundle *b, const char *what, const uk__arch *archs, int n, uk__arch want) {
  int none = 0;
  if (!atomic_compare_exchange_strong(&b->skipped, &none, 1)) return;
  char have[96], w[24];
  uk__bundle_arch_list(archs, n, have, sizeof have);
  uk__arch_name(want, w, sizeof w);
  snprintf(b->skip_reason, sizeof b->skip_reason, "%s built for %s, this process compiles for %s", what, have, w);
  atomic_store_explicit(&b->skipped, 2, memory_order_release);
}

uk_status uk__bundle_find(uk__bundle *b, uk_hash128 hash, const char *key, size_t key_len, uk__arch arch,
                          uk__binary **out, int *found) {
  *found = 0;
  if (!uk__bundle_has_arch(b, arch)) {
    skip(b, "the bundle is", b->archs, b->num_archs, arch);
    return UK_OK;
  }
  int lo = 0, hi = b->count;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (hash_less(b->entries[mid].hash, hash)) lo = mid + 1;
    else hi = mid;
  }
  if (lo == b->count) return UK_OK;
  const uk__bundle_entry *e = &b->entries[lo];
  if (e->hash.lo != hash.lo || e->hash.hi != hash.hi || e->key_len != key_len || memcmp(e->key, key, key_len) != 0)
    return UK_OK;
  int have = 0;
  for (int a = 0; a < e->num_archs && !have; a++) have = e->archs[a].num == arch.num && e->archs[a].flags == arch.flags;
  if (!have) {
    skip(b, "a kernel of the bundle is", e->archs, e->num_archs, arch);
    return UK_OK;
  }
  unsigned char *buf = malloc((size_t)e->payload_size);
  if (!buf) return uk__errorf(UK_ERR_NOMEM, "out of memory reading bundle %s", b->path);
  src s = {b->fd, b->mem, b->size};
  uk_status st = UK_OK;
  uk__fatbin_image im[UK__BUNDLE_MAX_ARCHS];
  int n = 0;
  /* Read again and checked again: the file may have changed since it was
   * opened (truncated: a short read; rewritten: the checksum). */
  if (!read_at(&s, e->payload_offset, buf, (size_t)e->payload_size) ||
      uk__hash64(buf, (size_t)e->payload_size) != e->payload_sum ||
      (n = uk__fatbin_list(buf, (size_t)e->payload_size, im, UK__BUNDLE_MAX_ARCHS)) < 0) {
    st = uk__errorf(UK_ERR_IO, "bundle %s: a kernel's code changed or was cut short since the bundle was opened; "
                               "not used (replace a bundle by a new file, never in place)", b->path);
    goto out;
  }
  for (int k = 0; k < n; k++) {
    if (im[k].arch.num != arch.num || im[k].arch.flags != arch.flags) continue;
    /* A checksum proves no intent: the cubin's structure is checked before
     * the driver sees it, as every image from outside is (image_check.h). */
    if ((st = uk__elf_check(im[k].data, im[k].size, 0, UK__ELF_CUDA, b->path)) != UK_OK) break;
    st = uk__binary_create(im[k].data, im[k].size, 0, arch.num, e->num_names, e->names, e->lowered, "", out);
    if (st == UK_OK) {
      *found = 1;
      atomic_fetch_add(&b->hits, 1);
    }
    break;
  }
out:
  free(buf);
  return st;
}
