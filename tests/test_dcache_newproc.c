/* Disk cache paths a new process takes (issue 11's new-process rows): an
 * open that lists nothing, the scan of a store over a directory longer
 * than one listing batch, the trust check at open, and hits read into the
 * heap (small entries) or an mmap (large ones), each released with its
 * binary. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "runtime/dcache.h"
#include "testutil.h"

static uk__binary *make_bin(size_t image_size) {
  static const char *const names[] = {"k<int>"};
  static const char *const lowered[] = {"_Z1kIiEvv"};
  unsigned char *image = malloc(image_size);
  for (size_t i = 0; i < image_size; i++) image[i] = (unsigned char)(ut_rand() | 1);
  uk__binary *b = NULL;
  CHECK_OK(uk__binary_create(image, image_size, 0, 90, 1, names, lowered, "log", &b));
  free(image);
  return b;
}

static int same_bin(const uk__binary *a, const uk__binary *b) {
  return a && b && a->image_size == b->image_size && memcmp(a->image, b->image, a->image_size) == 0 &&
         a->arch == b->arch && a->num_names == b->num_names && strcmp(a->lowered[0], b->lowered[0]) == 0 &&
         strcmp(a->log, b->log) == 0;
}

static char *path_of(const char *dir, const char *key) {
  char hex[33], *p = NULL;
  uk__hash128_hex(uk__hash128(key, strlen(key)), hex);
  if (asprintf(&p, "%s/%s.ukc", dir, hex) < 0) return NULL;
  return p;
}

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static void set_mtime(const char *path, time_t when) {
  struct timespec ts[2] = {{when, 0}, {when, 0}};
  CHECK(utimensat(AT_FDCWD, path, ts, 0) == 0);
}

/* 300 entries (names of ~40 bytes: several getdents batches) and a stale
 * temporary file. Opening with a cap of 100 entries lists nothing (a
 * reader's context never pays for the directory's size); the next store
 * evicts the 211 oldest (down to 90% of the cap, the new entry kept) and
 * removes the temporary file. A scan that read one batch would count too
 * few bytes and evict too few. */
static void test_store_scan_many(void) {
  enum { N = 300 };
  char *dir = ut_temp_dir("dcnp-scan");
  uk__dcache *c = NULL;
  CHECK_OK(uk__dcache_open(dir, 1ull << 40, &c));
  uk__binary *b = make_bin(200);
  char key[32];
  time_t base = time(NULL) - 100000;
  long entry = 0;
  for (int i = 0; i < N; i++) {
    snprintf(key, sizeof key, "scan-key-%05d", i);
    uk__dcache_put(c, uk__hash128(key, strlen(key)), key, strlen(key), b);
    char *p = path_of(dir, key);
    struct stat st;
    CHECK(p && stat(p, &st) == 0);
    entry = (long)st.st_size;
    set_mtime(p, base + i); /* entry i used before entry i+1 */
    free(p);
  }
  CHECK(atomic_load(&c->stats.evictions) == 0 && atomic_load(&c->stats.store_failures) == 0);
  uk__dcache_close(c);
  char *stale = NULL;
  CHECK(asprintf(&stale, "%s/ffffffffffffffffffffffffffffffff.ukc.tmp.1.ab", dir) > 0);
  int fd = open(stale, O_WRONLY | O_CREAT | O_EXCL, 0600);
  CHECK(fd >= 0);
  if (fd >= 0) close(fd);
  set_mtime(stale, time(NULL) - 7200);

  CHECK_OK(uk__dcache_open(dir, (uint64_t)entry * 100, &c));
  uint64_t n = 0, bytes = 0;
  CHECK_OK(uk_cache_usage(dir, &n, &bytes));
  CHECK(n == N && atomic_load(&c->stats.evictions) == 0 && exists(stale));
  snprintf(key, sizeof key, "scan-key-%05d", N);
  uk__dcache_put(c, uk__hash128(key, strlen(key)), key, strlen(key), b);
  CHECK_OK(uk_cache_usage(dir, &n, &bytes));
  CHECK(n == 90 && bytes == 90 * (uint64_t)entry);
  CHECK(atomic_load(&c->stats.evictions) == N + 1 - 90);
  CHECK(!exists(stale));
  int oldest_gone = 1, newest_kept = 1;
  for (int i = 0; i <= N; i++) {
    snprintf(key, sizeof key, "scan-key-%05d", i);
    char *p = path_of(dir, key);
    if (i <= N - 90 && exists(p)) oldest_gone = 0;
    if (i > N - 90 && !exists(p)) newest_kept = 0;
    free(p);
  }
  CHECK(oldest_gone && newest_kept);
  uk__binary *got = NULL;
  snprintf(key, sizeof key, "scan-key-%05d", N - 1);
  CHECK(uk__dcache_get(c, uk__hash128(key, strlen(key)), key, strlen(key), &got) == 1 && same_bin(b, got));
  uk__binary_release(got);
  uk__dcache_close(c);
  uk__binary_release(b);
  free(stale);
  free(dir);
}

/* The trust check at open: a group-writable directory is refused there
 * (nothing read, written, listed or evicted afterwards, even by a store
 * past the cap), and a private one reached through a symlink is used. */
static void test_open_trust(void) {
  char *dir = ut_temp_dir("dcnp-trust");
  char *shared = NULL, *link = NULL, *inside = NULL;
  CHECK(asprintf(&shared, "%s/shared", dir) > 0 && asprintf(&link, "%s/link", dir) > 0);
  CHECK(mkdir(shared, 0700) == 0 && chmod(shared, 0770) == 0);
  uk__binary *b = make_bin(100);
  /* An entry someone else could have put there, past a tiny cap. */
  uk__dcache *c = NULL;
  CHECK(chmod(shared, 0700) == 0);
  CHECK_OK(uk__dcache_open(shared, 0, &c));
  uk__dcache_put(c, uk__hash128("k", 1), "k", 1, b);
  uk__dcache_close(c);
  CHECK(chmod(shared, 0770) == 0);
  CHECK_OK(uk__dcache_open(shared, 1, &c));
  CHECK(c->refused != NULL);
  if (c->refused) CHECK_CONTAINS(c->refused, "writable by its group");
  uk__dcache_put(c, uk__hash128("k2", 2), "k2", 2, b);
  CHECK(atomic_load(&c->stats.evictions) == 0 && atomic_load(&c->stats.store_failures) == 1);
  inside = path_of(shared, "k");
  CHECK(exists(inside)); /* not evicted: a refused directory is never listed */
  uk__binary *got = NULL;
  CHECK(uk__dcache_get(c, uk__hash128("k", 1), "k", 1, &got) == 0 && got == NULL);
  CHECK(atomic_load(&c->stats.untrusted) == 1);
  uk__dcache_close(c);

  CHECK(chmod(shared, 0700) == 0 && symlink(shared, link) == 0);
  CHECK_OK(uk__dcache_open(link, 0, &c));
  CHECK(c->refused == NULL);
  CHECK(uk__dcache_get(c, uk__hash128("k", 1), "k", 1, &got) == 1 && same_bin(b, got));
  uk__binary_release(got);
  uk__dcache_close(c);
  uk__binary_release(b);
  free(shared);
  free(link);
  free(inside);
  free(dir);
}

/* A directory that cannot be made (mkdir fails with EPERM under sysfs,
 * even for root) is absent, not refused: lookups are plain misses, stores
 * retry and count failures, as before one open served the trust check. */
static void test_unmakeable_dir(void) {
  struct statfs fs;
  if (statfs("/sys", &fs) != 0 || fs.f_type != 0x62656572) { /* SYSFS_MAGIC */
    CHECK(1);
    return;
  }
  char path[64];
  snprintf(path, sizeof path, "/sys/ukern-test-%ld/cache", (long)getpid());
  uk__dcache *c = NULL;
  CHECK_OK(uk__dcache_open(path, 0, &c));
  CHECK(c && c->refused == NULL);
  if (!c) return;
  uk__binary *b = make_bin(64), *got = NULL;
  CHECK(uk__dcache_get(c, uk__hash128("k", 1), "k", 1, &got) == 0 && got == NULL);
  uk__dcache_put(c, uk__hash128("k", 1), "k", 1, b);
  CHECK(atomic_load(&c->stats.misses) == 1 && atomic_load(&c->stats.untrusted) == 0);
  CHECK(atomic_load(&c->stats.store_failures) == 1);
  uk__binary_release(b);
  uk__dcache_close(c);
}

/* Small entries are read into the heap, large ones into an mmap; either
 * way the image is used in place (16-byte aligned), stays valid after the
 * file is removed, and is released with the binary (ASan checks free vs
 * munmap). */
static void test_hit_buffers(void) {
  char *dir = ut_temp_dir("dcnp-hits");
  uk__dcache *c = NULL;
  CHECK_OK(uk__dcache_open(dir, 0, &c));
  static const size_t sizes[] = {1, 4400, 60000, 70000, 1u << 20};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    uk__binary *b = make_bin(sizes[k]), *got = NULL;
    char key[32];
    snprintf(key, sizeof key, "hit-%zu", sizes[k]);
    uk_hash128 h = uk__hash128(key, strlen(key));
    uk__dcache_put(c, h, key, strlen(key), b);
    char *p = path_of(dir, key);
    struct stat st;
    CHECK(p && stat(p, &st) == 0);
    CHECK(uk__dcache_get(c, h, key, strlen(key), &got) == 1 && same_bin(b, got));
    CHECK(got && got->mapping != NULL && ((uintptr_t)got->image & 15u) == 0);
    CHECK(got && got->mapping_heap == (st.st_size <= (64 << 10)));
    CHECK(unlink(p) == 0);
    CHECK(same_bin(b, got));
    uk__binary *again = NULL;
    CHECK(uk__dcache_get(c, h, key, strlen(key), &again) == 0 && again == NULL);
    uk__binary_release(got);
    uk__binary_release(b);
    free(p);
  }
  CHECK(atomic_load(&c->stats.corrupt_entries) == 0);
  uk__dcache_close(c);
  free(dir);
}

int main(void) {
  ut_seed(11);
  test_store_scan_many();
  test_open_trust();
  test_unmakeable_dir();
  test_hit_buffers();
  return ut_finish("test_dcache_newproc");
}
