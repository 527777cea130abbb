/* Writing kernel bundles (bundle.h) from the entries of a disk cache
 * directory: each entry's key becomes a bundle key (compile.h, the machine's
 * parts dropped), the cubins of one key for several archs become one
 * fatbin, and the file is written whole to a temporary name and renamed. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/join.h"
#include "base/strbuf.h"
#include "runtime/bundle.h"
#include "runtime/compile.h"
#include "runtime/dcache.h"
#include "runtime/fatbin.h"

#define MAX_ENTRY_BYTES (1ull << 31)

typedef struct group {
  uk_hash128 hash;
  char *key;
  size_t key_len;
  int n;
  uk__arch arch[UK__BUNDLE_MAX_ARCHS];
  uk__binary *bin[UK__BUNDLE_MAX_ARCHS];
  void *fat; /* the fatbin, built before writing */
  size_t fat_size;
  unsigned char *meta;
  size_t meta_size;
} group;

typedef struct writer {
  group *g;
  int n, cap;
  const uk__arch *want;
  int nwant;
  int skipped_ptx, skipped_arch, skipped_other;
  uk_strbuf *report;
} writer;

static void put(unsigned char *p, uint64_t v, int n) {
  for (int i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static int arch_eq(uk__arch a, uk__arch b) { return a.num == b.num && a.flags == b.flags; }

/* Reads a cache entry into an anonymous mapping (what the decoder takes);
 * the file opened as the disk cache opens entries: no links, no FIFOs. */
static unsigned char *read_entry(int dfd, const char *name, size_t *size) {
  int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  struct stat sb;
  unsigned char *buf = NULL;
  if (fd < 0) return NULL;
  if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_uid == geteuid() && sb.st_size > 32 &&
      (uint64_t)sb.st_size < MAX_ENTRY_BYTES) {
    *size = (size_t)sb.st_size;
    buf = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED) buf = NULL;
    size_t got = 0;
    while (buf && got < *size) {
      ssize_t r = pread(fd, buf + got, *size - got, (off_t)got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      got += (size_t)r;
    }
    if (buf && got != *size) {
      munmap(buf, *size);
      buf = NULL;
    }
  }
  close(fd);
  return buf;
}

static uk_status add(writer *w, const char *bkey, size_t blen, uk__arch arch, uk__binary *bin) {
  uk_hash128 h = uk__hash128(bkey, blen);
  group *g = NULL;
  for (int k = 0; k < w->n && !g; k++)
    if (w->g[k].hash.lo == h.lo && w->g[k].hash.hi == h.hi && w->g[k].key_len == blen &&
        !memcmp(w->g[k].key, bkey, blen))
      g = &w->g[k];
  if (!g) {
    if (w->n == w->cap) {
      int cap = w->cap ? 2 * w->cap : 16;
      group *ng = realloc(w->g, (size_t)cap * sizeof *ng);
      if (!ng) return uk__errorf(UK_ERR_NOMEM, "out of memory writing a bundle");
      w->g = ng;
      w->cap = cap;
    }
    g = &w->g[w->n];
    memset(g, 0, sizeof *g);
    if (!(g->key = malloc(blen ? blen : 1))) return uk__errorf(UK_ERR_NOMEM, "out of memory writing a bundle");
    memcpy(g->key, bkey, blen);
    g->key_len = blen;
    g->hash = h;
    w->n++;
  }
  for (int k = 0; k < g->n; k++)
    if (arch_eq(g->arch[k], arch)) return UK_OK; /* the same kernel twice (equal code) */
  if (g->n == UK__BUNDLE_MAX_ARCHS) return UK_OK;
  uk__binary_retain(bin);
  g->arch[g->n] = arch;
  g->bin[g->n++] = bin;
  return UK_OK;
}

/* One cache entry: decoded, its key made a bundle key, filtered by arch. */
static uk_status take(writer *w, int dfd, const char *name) {
  size_t size = 0;
  unsigned char *buf = read_entry(dfd, name, &size);
  if (!buf) {
    w->skipped_other++;
    return UK_OK;
  }
  uint64_t klen = 0;
  for (int j = 7; j >= 0; j--) klen = klen << 8 | buf[8 + j];
  char *key = klen <= size - 32 ? malloc((size_t)klen + 1) : NULL;
  uk__binary *bin = NULL;
  int took = 0;
  if (!key || !uk__dcache_entry_decode(buf, size, memcpy(key, buf + 32, (size_t)klen), (size_t)klen, &bin, &took)) {
    free(key);
    if (!took) munmap(buf, size);
    w->skipped_other++;
    return UK_OK;
  }
  if (!took) munmap(buf, size);
  uk_strbuf bk;
  uk__sb_init(&bk);
  uk__arch arch = {0, 0};
  const char *why = NULL;
  uk_status st = UK_OK;
  if (bin->is_ptx) {
    w->skipped_ptx++;
  } else if (!uk__compile_bundle_key_from(key, (size_t)klen, &bk, &arch.num, &arch.flags, &why)) {
    w->skipped_other++;
  } else if (arch.flags & ~UK__ARCH_A) {
    w->skipped_arch++; /* family and PTX targets do not go into a fatbin of cubins */
  } else {
    int wanted = w->nwant == 0;
    for (int k = 0; k < w->nwant && !wanted; k++) wanted = arch_eq(w->want[k], arch);
    if (wanted) st = add(w, bk.buf, bk.len, arch, bin);
    else w->skipped_arch++;
  }
  uk__sb_release(&bk);
  uk__binary_release(bin);
  free(key);
  return st;
}

static int by_hash(const void *a, const void *b) {
  const group *x = a, *y = b;
  if (x->hash.hi != y->hash.hi) return x->hash.hi < y->hash.hi ? -1 : 1;
  return x->hash.lo < y->hash.lo ? -1 : x->hash.lo > y->hash.lo;
}

/* The group's fatbin (its archs in ascending order) and meta. */
static uk_status finish_group(group *g) {
  for (int i = 1; i < g->n; i++) /* insertion sort: a handful of archs */
    for (int j = i; j > 0 && (g->arch[j - 1].num > g->arch[j].num ||
                              (g->arch[j - 1].num == g->arch[j].num && g->arch[j - 1].flags > g->arch[j].flags));
         j--) {
      uk__arch ta = g->arch[j];
      uk__binary *tb = g->bin[j];
      g->arch[j] = g->arch[j - 1], g->bin[j] = g->bin[j - 1];
      g->arch[j - 1] = ta, g->bin[j - 1] = tb;
    }
  uk__fatbin_image im[UK__BUNDLE_MAX_ARCHS];
  for (int k = 0; k < g->n; k++) im[k] = (uk__fatbin_image){g->arch[k], g->bin[k]->image, g->bin[k]->image_size};
  uk_status st = uk__fatbin_build(im, g->n, &g->fat, &g->fat_size);
  if (st != UK_OK) return st;
  const uk__binary *b = g->bin[0];
  size_t size = 4 + g->key_len + 4 + 8 * (size_t)g->n + 4;
  for (int k = 0; k < b->num_names; k++) size += 8 + strlen(b->names[k]) + strlen(b->lowered[k]);
  unsigned char *m = malloc(size), *p = m;
  if (!m) return uk__errorf(UK_ERR_NOMEM, "out of memory writing a bundle");
  put(p, g->key_len, 4), memcpy(p + 4, g->key, g->key_len), p += 4 + g->key_len;
  put(p, (uint64_t)g->n, 4), p += 4;
  for (int k = 0; k < g->n; k++) put(p, (uint64_t)g->arch[k].num, 4), put(p + 4, (uint64_t)g->arch[k].flags, 4), p += 8;
  put(p, (uint64_t)b->num_names, 4), p += 4;
  for (int k = 0; k < b->num_names; k++) {
    const char *two[2] = {b->names[k], b->lowered[k]};
    for (int j = 0; j < 2; j++) {
      size_t n = strlen(two[j]);
      put(p, n, 4), memcpy(p + 4, two[j], n), p += 4 + n;
    }
  }
  g->meta = m;
  g->meta_size = size;
  return UK_OK;
}

static uk_status write_file(writer *w, const char *path) {
  uint64_t toff = UK__BUNDLE_HEADER, tsize = (uint64_t)w->n * UK__BUNDLE_RECORD, at = toff + tsize;
  uint64_t *moff = calloc((size_t)w->n + 1, sizeof *moff), *poff = calloc((size_t)w->n + 1, sizeof *poff);
  unsigned char *file = NULL;
  uk_status st = UK_OK;
  if (!moff || !poff) goto nomem;
  for (int k = 0; k < w->n; k++) {
    moff[k] = at;
    at += w->g[k].meta_size;
    at = (at + 15) & ~(uint64_t)15;
    poff[k] = at;
    at += w->g[k].fat_size;
  }
  if (!(file = calloc(1, (size_t)at))) goto nomem;
  for (int k = 0; k < w->n; k++) {
    group *g = &w->g[k];
    unsigned char *r = file + toff + (uint64_t)k * UK__BUNDLE_RECORD;
    memcpy(file + moff[k], g->meta, g->meta_size);
    memcpy(file + poff[k], g->fat, g->fat_size);
    put(r, g->hash.lo, 8), put(r + 8, g->hash.hi, 8);
    put(r + 16, moff[k], 8), put(r + 24, g->meta_size, 8);
    put(r + 32, poff[k], 8), put(r + 40, g->fat_size, 8);
    put(r + 48, uk__hash64(g->meta, g->meta_size), 8), put(r + 56, uk__hash64(g->fat, g->fat_size), 8);
  }
  memcpy(file, UK__BUNDLE_MAGIC, 8);
  put(file + 8, UK__BUNDLE_VERSION, 4);
  put(file + 12, UK__BUNDLE_BOM, 4);
  snprintf((char *)file + 16, 16, "%s", UK_VERSION_STRING);
  put(file + 32, (uint64_t)w->n, 4);
  put(file + 40, toff, 8), put(file + 48, tsize, 8), put(file + 56, at, 8);
  put(file + 64, uk__hash64(file + toff, (size_t)tsize), 8);
  put(file + 88, uk__hash64(file, 88), 8);
  /* A new file renamed over the old one: a process reading the old bundle
   * keeps its inode intact (a bundle is never rewritten in place). */
  char tmp[4200];
  if (uk__join(tmp, sizeof tmp, path, ".tmp.", (char *)NULL) < 0 ||
      snprintf(tmp + strlen(tmp), sizeof tmp - strlen(tmp), "%ld", (long)getpid()) < 0) {
    st = uk__errorf(UK_ERR_INVALID, "bundle path too long: %s", path);
    goto out;
  }
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0444);
  size_t done = 0;
  while (fd >= 0 && done < (size_t)at) {
    ssize_t n = write(fd, file + done, (size_t)at - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += (size_t)n;
  }
  int err = fd < 0 ? errno : 0;
  if (fd >= 0 && (done != (size_t)at || fsync(fd) != 0)) err = errno ? errno : EIO;
  if (fd >= 0 && close(fd) != 0 && !err) err = errno;
  if (!err && rename(tmp, path) != 0) err = errno;
  if (err) {
    if (fd >= 0) unlink(tmp);
    st = uk__errorf(UK_ERR_IO, "cannot write bundle %s: %s", path, strerror(err));
  }
  goto out;
nomem:
  st = uk__errorf(UK_ERR_NOMEM, "out of memory writing a bundle");
out:
  free(file);
  free(moff);
  free(poff);
  return st;
}

static void report_group(uk_strbuf *r, const group *g) {
  char archs[256], names[512];
  uk__bundle_arch_list(g->arch, g->n, archs, sizeof archs);
  uk__cache_key_kernels(g->key, g->key_len, names, sizeof names);
  uk__sb_addf(r, "%-24s %8zu bytes  %s\n", archs, g->fat_size, names[0] ? names : "(no kernel named)");
}

uk_status uk__bundle_write_from_cache(const char *dir, const uk__arch *want, int nwant, const char *path,
                                      uk_strbuf *report) {
  char why[256];
  if (uk__dcache_check_dir(dir, why, sizeof why) != 0)
    return uk__errorf(UK_ERR_IO, "cache directory %s: %s", dir,
                      uk__dcache_check_dir(dir, why, sizeof why) > 0 ? "does not exist" : why);
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
  if (!d) {
    int e = errno;
    if (dfd >= 0) close(dfd);
    return uk__errorf(UK_ERR_IO, "cannot list cache directory %s: %s", dir, strerror(e));
  }
  writer w;
  memset(&w, 0, sizeof w);
  w.want = want;
  w.nwant = nwant;
  uk_status st = UK_OK;
  struct dirent *de;
  while (st == UK_OK && (de = readdir(d)) != NULL)
    if (uk__dcache_is_entry_name(de->d_name)) st = take(&w, dirfd(d), de->d_name);
  closedir(d);
  if (st == UK_OK && w.n == 0)
    st = uk__errorf(UK_ERR_NOT_FOUND, "cache directory %s holds no compiled kernel of ukern " UK_VERSION_STRING
                                      "%s: nothing to bundle (fill it with `ukern precompile --arch ...`)",
                    dir, nwant ? " for those archs" : "");
  if (st == UK_OK) qsort(w.g, (size_t)w.n, sizeof *w.g, by_hash);
  for (int k = 0; k < w.n && st == UK_OK; k++) st = finish_group(&w.g[k]);
  if (st == UK_OK) st = write_file(&w, path);
  if (st == UK_OK && report) {
    for (int k = 0; k < w.n; k++) report_group(report, &w.g[k]);
    uk__sb_addf(report, "%d kernels", w.n);
    if (w.skipped_arch) uk__sb_addf(report, "; %d entries for other archs left out", w.skipped_arch);
    if (w.skipped_ptx) uk__sb_addf(report, "; %d PTX entries left out", w.skipped_ptx);
    if (w.skipped_other)
      uk__sb_addf(report, "; %d entries of other versions, linked modules or damaged left out", w.skipped_other);
    uk__sb_add(report, "\n");
  }
  for (int k = 0; k < w.n; k++) {
    for (int j = 0; j < w.g[k].n; j++) uk__binary_release(w.g[k].bin[j]);
    free(w.g[k].key);
    free(w.g[k].fat);
    free(w.g[k].meta);
  }
  free(w.g);
  return st;
}
