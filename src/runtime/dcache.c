/* Disk cache: one file per entry, written to a temporary file and renamed.
 *
 * File layout (integers little-endian):
 *   0  "UKC1"
 *   4  u32 format version
 *   8  u64 key length
 *  16  u64 payload length
 *  24  u64 XXH3-64 of the bytes from offset 32 to the end
 *  32  key text, zero padding (entry_pad), then the payload (uk__binary_encode)
 *
 * The padding puts the payload's image at a 16-byte aligned offset, so the
 * binary uses the image in place in the private buffer a hit reads into
 * (malloc's 16-byte alignment, or an mmap's page alignment).
 *
 * Trust: nothing on disk is used unless this user wrote it. The directory
 * must be the user's and not group/world writable (checked at open; else
 * every lookup is an "untrusted" miss and nothing is written there). An entry
 * is opened with O_NOFOLLOW | O_NONBLOCK (a symlink or FIFO never redirects or
 * blocks) and used only if fstat says it is a regular file of this user,
 * not writable by others. A hit copies the file into private memory and
 * checks the checksum on that copy: what is checked is what is used, and no
 * later write or truncation by anyone can change or fault it.
 *
 * Nothing here is an error the caller sees: problems are misses or store
 * failures, counted in the statistics. Every put lists the directory after
 * its rename and evicts past the cap: each writer's last listing comes after
 * its own write, so when concurrent writers in several processes finish, the
 * last listing saw every entry and the cap holds. Opening lists nothing: a
 * smaller cap than the directory holds takes effect at the next store. */
#include "runtime/dcache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "base/join.h"

#define ENTRY_MAGIC "UKC1"
#define ENTRY_VERSION 2u
#define HEADER_SIZE 32u
#define DEFAULT_MAX_BYTES (1ull << 30)
#define HEX_LEN 32
#define ENTRY_SUFFIX ".ukc"
#define TEMP_INFIX ".ukc.tmp."
#define NOTE_SUFFIX ".ukn"
/* Entries up to this size are read into the heap, larger ones into an mmap. */
#define HEAP_ENTRY_MAX (64u << 10)

/* Zero bytes between the key and the payload: the image lands 16-byte aligned. */
static size_t entry_pad(uint64_t key_len) {
  return (size_t)((16u - (HEADER_SIZE + key_len + UK__BINARY_IMAGE_OFFSET) % 16u) % 16u);
}

typedef struct dcache_impl {
  uk__dcache pub; /* first member: the two pointer types convert */
  atomic_flag scanning;
  atomic_int rescan; /* a scan was asked for while one ran: run again */
  atomic_uint seq;
} dcache_impl;

static dcache_impl *impl(uk__dcache *c) { return (dcache_impl *)c; }

static void count(atomic_ullong *stat) { atomic_fetch_add_explicit(stat, 1, memory_order_relaxed); }

static int is_hex_prefix(const char *name) {
  for (int i = 0; i < HEX_LEN; i++)
    if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f'))) return 0;
  return 1;
}

int uk__dcache_is_entry_name(const char *name) {
  return strlen(name) == HEX_LEN + strlen(ENTRY_SUFFIX) && is_hex_prefix(name) &&
         strcmp(name + HEX_LEN, ENTRY_SUFFIX) == 0;
}

int uk__dcache_is_temp_name(const char *name) {
  return strlen(name) > HEX_LEN + strlen(TEMP_INFIX) && is_hex_prefix(name) &&
         strncmp(name + HEX_LEN, TEMP_INFIX, strlen(TEMP_INFIX)) == 0;
}

int uk__dcache_mkdirs(const char *path) {
  struct stat st;
  /* Usually the directory is there: one mkdir, not one per component (each
   * is a syscall in every context creation). */
  if (mkdir(path, 0700) == 0 || errno == EEXIST) return stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
  char *p = strdup(path);
  if (!p) return -1;
  int rc = 0;
  for (char *s = p + 1;; s++) {
    if (*s != '/' && *s != '\0') continue;
    char saved = *s;
    *s = '\0';
    if (mkdir(p, 0700) != 0 && errno != EEXIST) rc = -1;
    *s = saved;
    if (rc != 0 || saved == '\0') break;
  }
  free(p);
  if (rc == 0 && (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))) rc = -1;
  return rc;
}

static void put_le(unsigned char *p, uint64_t v, int n) {
  for (int i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static char *entry_path(const uk__dcache *c, uk_hash128 hash) {
  char hex[33];
  uk__hash128_hex(hash, hex);
  return uk__join_alloc(c->dir, "/", hex, ENTRY_SUFFIX, (char *)NULL);
}

/* ---- scanning and eviction ---------------------------------------------- */

typedef struct file_info {
  char name[HEX_LEN + 5];
  uint64_t size;
  struct timespec mtime;
} file_info;

static int older_first(const void *a, const void *b) {
  const file_info *x = a, *y = b;
  if (x->mtime.tv_sec != y->mtime.tv_sec) return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
  if (x->mtime.tv_nsec != y->mtime.tv_nsec) return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* Lists the directory: removes stale temp files, sums the entries and, past
 * the cap, removes the least recently used ones until under 90% of it.
 * One scan at a time per cache; a concurrent request is dropped (the
 * running scan does the work). keep: an entry's file name ("<hex>.ukc")
 * that is removed last, only if the cap still does not hold without the
 * others: the entry a put just stored, so that the put's own lookup hits
 * (file times come from a coarse clock: it often ties with older entries,
 * and a tie goes by name). A put whose request joins another thread's
 * running scan cannot protect its entry that way; that scan runs again
 * for it, and a lookup then misses only if every other entry is gone. */
static void scan_once(dcache_impl *d, const char *keep);

/* A request while a scan runs makes that scan run once more, so a write
 * that finished after the running scan listed the directory is counted. */
static void scan_and_evict(dcache_impl *d, const char *keep) {
  if (d->pub.refused) return; /* never remove files from a directory we do not trust */
  atomic_store(&d->rescan, 1);
  while (atomic_load(&d->rescan)) {
    if (atomic_flag_test_and_set(&d->scanning)) return; /* the running scan sees rescan */
    while (atomic_exchange(&d->rescan, 0)) scan_once(d, keep);
    atomic_flag_clear(&d->scanning);
  }
}

/* Opens the cache directory for listing or checking. O_DIRECTORY: nothing
 * else; O_NONBLOCK: a FIFO named as the directory does not block the open. */
static int open_dir(const char *path) { return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK); }

/* One listing of the directory open at dfd: the bytes of this user's
 * entries, stale temporary files removed; with files, the entries also
 * collected (*files malloc'd, *n of them). */
static uint64_t list_fd(int dfd, uid_t me, file_info **files, size_t *n) {
  uint64_t total = 0;
  size_t cap = 0;
  time_t now = time(NULL);
  _Alignas(struct dirent64) char buf[4096];
  ssize_t got;
  while ((got = getdents64(dfd, buf, sizeof buf)) > 0) {
    for (ssize_t at = 0; at < got;) {
      struct dirent64 *de = (struct dirent64 *)(buf + at);
      at += de->d_reclen;
      int entry = uk__dcache_is_entry_name(de->d_name);
      if (!entry && !uk__dcache_is_temp_name(de->d_name)) continue;
      struct stat st;
      if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) || st.st_uid != me)
        continue;
      if (!entry) {
        if (now - st.st_mtime > UK__DCACHE_STALE_TEMP_SECONDS) unlinkat(dfd, de->d_name, 0);
        continue;
      }
      total += (uint64_t)st.st_size;
      if (!files) continue;
      if (*n == cap) {
        size_t ncap = cap ? cap * 2 : 64;
        file_info *nf = realloc(*files, ncap * sizeof *nf);
        if (!nf) continue; /* still counted; just not a candidate for eviction */
        *files = nf;
        cap = ncap;
      }
      file_info *f = &(*files)[(*n)++];
      memcpy(f->name, de->d_name, sizeof f->name);
      f->size = (uint64_t)st.st_size;
      f->mtime = st.st_mtim;
    }
  }
  return total;
}

/* The scan of the directory open at dfd, with getdents64 on that
 * descriptor (opendir would add a stat and a 32 KB allocation). The
 * entries are collected, in a second listing, only when they are past the
 * cap. */
/* Removes f: its size comes off *total when it is gone. */
static void evict(dcache_impl *d, int dfd, const file_info *f, uint64_t *total) {
  if (unlinkat(dfd, f->name, 0) == 0)
    count(&d->pub.stats.evictions);
  else if (errno != ENOENT)
    return; /* cannot remove (read-only dir): it still counts */
  *total -= f->size;
}

static void scan_fd(dcache_impl *d, int dfd, const char *keep) {
  uint64_t max = d->pub.max_bytes;
  if (list_fd(dfd, d->pub.owner, NULL, NULL) <= max || lseek(dfd, 0, SEEK_SET) != 0) return;
  file_info *files = NULL;
  size_t n = 0, kept = SIZE_MAX;
  uint64_t total = list_fd(dfd, d->pub.owner, &files, &n), target = max / 10 * 9;
  if (total > max) {
    qsort(files, n, sizeof *files, older_first);
    for (size_t i = 0; i < n && total > target; i++) {
      if (keep && strcmp(files[i].name, keep) == 0) kept = i;
      else evict(d, dfd, &files[i], &total);
    }
    if (kept != SIZE_MAX && total > max) evict(d, dfd, &files[kept], &total); /* alone over the cap */
  }
  free(files);
}

static void scan_once(dcache_impl *d, const char *keep) {
  int dfd = open_dir(d->pub.dir);
  if (dfd < 0) return;
  scan_fd(d, dfd, keep);
  close(dfd);
}

void uk__dcache_trim(uk__dcache *c) {
  if (c) scan_and_evict(impl(c), NULL);
}

/* ---- open / close --------------------------------------------------------- */

/* Whether the directory open at fd may hold this user's cache (see
 * uk__dcache_check_dir). */
static int check_fd(int fd, uid_t me, char *why, size_t cap) {
  struct stat st;
  if (fstat(fd, &st) != 0) {
    snprintf(why, cap, "cannot stat it: %s", strerror(errno));
    return -1;
  }
  if (st.st_uid != me) {
    snprintf(why, cap, "it belongs to uid %ld, not to this user (uid %ld)", (long)st.st_uid, (long)me);
    return -1;
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    snprintf(why, cap, "it is writable by %s (mode %04o); make it private (chmod 700) or use another directory",
             st.st_mode & S_IWOTH ? "all users" : "its group", (unsigned)(st.st_mode & 07777));
    return -1;
  }
  return 0;
}

/* The directory itself may be reached through a symlink (~/.cache on
 * another disk); what it resolves to must be private. */
static int check_open_failure(char *why, size_t cap) {
  if (errno == ENOENT) return 1;
  snprintf(why, cap, "cannot open it: %s", strerror(errno));
  return -1;
}

int uk__dcache_check_dir(const char *path, char *why, size_t cap) {
  why[0] = '\0';
  int fd = open_dir(path);
  if (fd < 0) return check_open_failure(why, cap);
  int rc = check_fd(fd, geteuid(), why, cap);
  close(fd);
  return rc;
}

uk_status uk__dcache_open(const char *dir, uint64_t max_bytes, uk__dcache **out) {
  if (!dir) return uk__errorf(UK_ERR_INVALID, "uk__dcache_open: no directory (the caller resolves the default)");
  if (!*dir) return uk__errorf(UK_ERR_INVALID, "disk cache directory is an empty string");
  char *path = strdup(dir);
  if (!path) return uk__errorf(UK_ERR_NOMEM, "out of memory opening the disk cache");
  for (size_t len = strlen(path); len > 1 && path[len - 1] == '/'; len--) path[len - 1] = '\0';
  dcache_impl *d = calloc(1, sizeof *d);
  if (!d) {
    free(path);
    return uk__errorf(UK_ERR_NOMEM, "out of memory opening the disk cache");
  }
  d->pub.dir = path;
  d->pub.max_bytes = max_bytes ? max_bytes : DEFAULT_MAX_BYTES;
  atomic_init(&d->pub.stats.hits, 0);
  atomic_init(&d->pub.stats.misses, 0);
  atomic_init(&d->pub.stats.store_failures, 0);
  atomic_init(&d->pub.stats.corrupt_entries, 0);
  atomic_init(&d->pub.stats.evictions, 0);
  atomic_init(&d->pub.stats.untrusted, 0);
  atomic_flag_clear(&d->scanning);
  atomic_init(&d->rescan, 0);
  atomic_init(&d->seq, 0);
  /* Asked once: every lookup compares owners with it (a syscall each). */
  d->pub.owner = geteuid();
  /* One open of the directory for the trust check; it is created only
   * when missing (soft: a put retries and counts the failure). Nothing is
   * listed here: the scan (eviction, stale temporary files) runs after each
   * store, so a process that only reads never lists the directory, and a
   * context's creation costs the same with 10 entries or 10000. */
  int dfd = open_dir(path);
  if (dfd < 0 && errno == ENOENT) {
    (void)uk__dcache_mkdirs(path);
    dfd = open_dir(path); /* still absent (mkdir failed): not refused, stores retry */
  }
  char why[256] = "";
  int trust = dfd >= 0 ? check_fd(dfd, d->pub.owner, why, sizeof why) : check_open_failure(why, sizeof why);
  if (trust < 0) {
    /* Fixed for the cache's life: a directory that someone else can write
     * now could have been filled by them before it became private. */
    d->pub.refused = strdup(why);
    if (!d->pub.refused) {
      if (dfd >= 0) close(dfd);
      uk__dcache_close(&d->pub);
      return uk__errorf(UK_ERR_NOMEM, "out of memory opening the disk cache");
    }
  }
  if (dfd >= 0) close(dfd);
  *out = &d->pub;
  return UK_OK;
}

void uk__dcache_close(uk__dcache *c) {
  if (!c) return;
  free(c->dir);
  free(c->refused);
  free(impl(c));
}

/* ---- get ------------------------------------------------------------------ */

/* Checks an entry (read into the private buffer `buf`) against `key` and
 * decodes its payload, in place when it can (*took: the binary owns buf).
 * Sets *nomem on allocation failure (a miss, not a corrupt entry). */
static int parse_entry(unsigned char *buf, size_t size, int heap, const char *key, size_t key_len,
                       uk__binary **out, int *nomem, int *took) {
  if (size < HEADER_SIZE || memcmp(buf, ENTRY_MAGIC, 4) != 0) return 0;
  if (get_le(buf + 4, 4) != ENTRY_VERSION) return 0;
  uint64_t klen = get_le(buf + 8, 8), plen = get_le(buf + 16, 8), sum = get_le(buf + 24, 8);
  uint64_t body = size - HEADER_SIZE;
  if (klen > body || body - klen < entry_pad(klen) || plen != body - klen - entry_pad(klen)) return 0;
  if (uk__hash64(buf + HEADER_SIZE, (size_t)body) != sum) return 0;
  if (klen != key_len || memcmp(buf + HEADER_SIZE, key, key_len) != 0) return 0;
  uk_status s = uk__binary_decode_mapped(buf, size, heap, HEADER_SIZE + (size_t)klen + entry_pad(klen),
                                         (size_t)plen, out, took);
  if (s == UK_ERR_NOMEM) *nomem = 1;
  return s == UK_OK;
}

int uk__dcache_entry_decode(void *buf, size_t size, const char *key, size_t key_len, uk__binary **out,
                            int *took) {
  int nomem = 0;
  *took = 0;
  return parse_entry(buf, size, 0, key, key_len, out, &nomem, took);
}

/* Reads exactly `size` bytes from the start of fd; -1 when the file is now
 * shorter (truncated since fstat) or on a read error. */
static int read_full(int fd, unsigned char *buf, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t r = pread(fd, buf + done, size - done, (off_t)done);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    done += (size_t)r;
  }
  return 0;
}

/* Opens a file of the directory for reading if it is a private regular
 * file of `me` (the cache's owner); -1 otherwise (*untrusted set when it is
 * there but is not). O_NOFOLLOW: a symlink fails (ELOOP); O_NONBLOCK: a
 * FIFO does not wait for a writer. */
static int open_trusted(const char *path, uid_t me, struct stat *st, int *untrusted) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    *untrusted = errno == ELOOP; /* absent or unreadable: a plain miss */
    return -1;
  }
  if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode) || st->st_uid != me ||
      (st->st_mode & (S_IWGRP | S_IWOTH))) {
    *untrusted = 1;
    close(fd);
    return -1;
  }
  return fd;
}

int uk__dcache_get(uk__dcache *c, uk_hash128 hash, const char *key, size_t key_len,
                   uk__binary **out) {
  int found = 0, corrupt = 0, untrusted = 0, nomem = 0, fd = -1, took = 0, heap = 0;
  void *buf = MAP_FAILED;
  size_t size = 0;
  char *path = NULL;
  if (c->refused) {
    untrusted = 1;
    goto out;
  }
  if (!(path = entry_path(c, hash))) goto out;
  struct stat st;
  if ((fd = open_trusted(path, c->owner, &st, &untrusted)) < 0) goto out;
  if (st.st_size < (off_t)HEADER_SIZE || (uint64_t)st.st_size > (uint64_t)SIZE_MAX / 2) {
    corrupt = 1;
    goto out;
  }
  size = (size_t)st.st_size;
  /* Private memory: a small entry on the heap (an mmap, mprotect and
   * munmap cost more than its read), a large one in anonymous memory
   * populated at once (cheaper than faulting page by page during the read)
   * and read-only once filled. */
  heap = size <= HEAP_ENTRY_MAX;
  if (!heap)
    buf = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  else if (!(buf = malloc(size)))
    buf = MAP_FAILED;
  if (buf == MAP_FAILED) goto out;
  if (read_full(fd, buf, size) != 0) {
    corrupt = 1;
    goto out;
  }
  if (!heap) (void)mprotect(buf, size, PROT_READ);
  uk__binary *b = NULL;
  if (!parse_entry(buf, size, heap, key, key_len, &b, &nomem, &took)) {
    corrupt = !nomem;
    goto out;
  }
  /* Recently used: eviction goes by mtime, to the minute. The coarse clock
   * (time() would be one more libc binding in a new process's first hit). */
  struct timespec now;
  if (clock_gettime(CLOCK_REALTIME_COARSE, &now) == 0 && st.st_mtime < now.tv_sec - 60)
    (void)futimens(fd, NULL);
  *out = b;
  found = 1;
out:
  if (fd >= 0) close(fd);
  if (buf != MAP_FAILED && !took) {
    if (heap) free(buf);
    else munmap(buf, size);
  }
  free(path);
  if (corrupt) count(&c->stats.corrupt_entries);
  if (untrusted) count(&c->stats.untrusted);
  count(found ? &c->stats.hits : &c->stats.misses);
  return found;
}

/* ---- put ------------------------------------------------------------------ */

static int write_full(int fd, const unsigned char *buf, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t w = write(fd, buf + done, size - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    done += (size_t)w;
  }
  return 0;
}

/* "<entry path>.tmp.<pid>.<16 hex>": unique per process by pid and counter,
 * across hosts sharing a directory by the time-and-address mix. */
static char *temp_path(dcache_impl *d, const char *path) {
  struct {
    struct timespec ts;
    unsigned seq;
    pid_t pid;
    const void *where;
  } mix;
  memset(&mix, 0, sizeof mix);
  clock_gettime(CLOCK_REALTIME, &mix.ts);
  mix.seq = atomic_fetch_add(&d->seq, 1);
  mix.pid = getpid();
  mix.where = &mix;
  char *tmp = NULL;
  if (asprintf(&tmp, "%s.tmp.%ld.%016llx", path, (long)mix.pid,
               (unsigned long long)uk__hash64(&mix, sizeof mix)) < 0)
    return NULL;
  return tmp;
}

/* Writes a new file under `path`: a private temporary file (O_EXCL, 0600)
 * renamed into place. 1 on success. */
static int write_atomic(dcache_impl *d, const char *path, const void *data, size_t size) {
  char *tmp = NULL;
  int fd = -1, made_dir = 0, ok = 0;
  for (int attempt = 0; attempt < 4 && fd < 0; attempt++) {
    free(tmp);
    tmp = temp_path(d, path);
    if (!tmp) return 0;
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0) break;
    if (errno == ENOENT && !made_dir) { /* removed since open: create again */
      made_dir = 1;
      if (uk__dcache_mkdirs(d->pub.dir) != 0) break;
    } else if (errno != EEXIST) {
      break;
    }
  }
  if (fd >= 0) {
    int wrote = write_full(fd, data, size);
    int closed = close(fd);
    ok = wrote == 0 && closed == 0 && rename(tmp, path) == 0;
    if (!ok) unlink(tmp); /* ours: created with O_EXCL */
  }
  free(tmp);
  return ok;
}

void uk__dcache_put(uk__dcache *c, uk_hash128 hash, const char *key, size_t key_len,
                    const uk__binary *b) {
  dcache_impl *d = impl(c);
  void *payload = NULL;
  size_t plen = 0, size = 0;
  unsigned char *file = NULL;
  char *path = NULL;
  int ok = 0;
  if (c->refused) goto out; /* never write where others can read or replace it */
  if (uk__binary_encode(b, &payload, &plen) != UK_OK) goto out;
  size_t pad = entry_pad(key_len);
  size = HEADER_SIZE + key_len + pad + plen;
  file = calloc(size, 1);
  path = entry_path(c, hash);
  if (!file || !path) goto out;
  memcpy(file, ENTRY_MAGIC, 4);
  put_le(file + 4, ENTRY_VERSION, 4);
  put_le(file + 8, key_len, 8);
  put_le(file + 16, plen, 8);
  if (key_len) memcpy(file + HEADER_SIZE, key, key_len);
  memcpy(file + HEADER_SIZE + key_len + pad, payload, plen);
  put_le(file + 24, uk__hash64(file + HEADER_SIZE, key_len + pad + plen), 8);
  ok = write_atomic(d, path, file, size);
out:
  if (!ok) count(&c->stats.store_failures);
  free(payload);
  free(file);
  /* After the rename (see the top of the file), sparing the new entry. */
  if (ok) scan_and_evict(d, strrchr(path, '/') + 1);
  free(path);
}

/* ---- notes ---------------------------------------------------------------- */

static char *note_path(const char *dir, const char *name) {
  return uk__join_alloc(dir, "/", name, NOTE_SUFFIX, (char *)NULL);
}

static int note_read(const char *dir, uid_t me, const char *name, char *buf, size_t cap, int *untrusted) {
  char *path = NULL;
  int got = 0, fd = -1;
  struct stat st;
  if (cap == 0 || !(path = note_path(dir, name))) return 0;
  if ((fd = open_trusted(path, me, &st, untrusted)) >= 0 && (uint64_t)st.st_size < cap &&
      read_full(fd, (unsigned char *)buf, (size_t)st.st_size) == 0) {
    buf[st.st_size] = '\0';
    got = 1;
  }
  if (fd >= 0) close(fd);
  free(path);
  return got;
}

int uk__dcache_note_get(uk__dcache *c, const char *name, char *buf, size_t cap) {
  int untrusted = 0;
  int got = !c->refused && note_read(c->dir, c->owner, name, buf, cap, &untrusted);
  if (untrusted) count(&c->stats.untrusted);
  return got;
}

int uk__dcache_note_read(const char *dir, const char *name, char *buf, size_t cap) {
  char why[256];
  int untrusted = 0;
  return uk__dcache_check_dir(dir, why, sizeof why) == 0 &&
         note_read(dir, geteuid(), name, buf, cap, &untrusted);
}

void uk__dcache_note_put(uk__dcache *c, const char *name, const char *text) {
  char *path = c->refused ? NULL : note_path(c->dir, name);
  if (path) (void)write_atomic(impl(c), path, text, strlen(text));
  free(path);
}
