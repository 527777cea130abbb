/* A put never evicts the entry it just stored while the cap holds without
 * it: a store followed by a lookup in the same thread hits. File times come
 * from a coarse clock, so a new entry often ties with older ones (a tie
 * goes by name) or, with the clock stepped back, is the oldest; here the
 * older entries are dated an hour ahead, so the new one sorts first every
 * time. The cap still holds: an entry alone over it is removed too. */
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

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

static uk_hash128 hash_of(const char *key) { return uk__hash128(key, strlen(key)); }

static char *path_of(const char *dir, const char *key) {
  char hex[33], *p = NULL;
  uk__hash128_hex(hash_of(key), hex);
  if (asprintf(&p, "%s/%s.ukc", dir, hex) < 0) return NULL;
  return p;
}

static long file_size(const char *dir, const char *key) {
  char *p = path_of(dir, key);
  struct stat st;
  long n = p && stat(p, &st) == 0 ? (long)st.st_size : -1;
  free(p);
  return n;
}

static int hits(uk__dcache *c, const char *key) {
  uk__binary *got = NULL;
  int hit = uk__dcache_get(c, hash_of(key), key, strlen(key), &got);
  uk__binary_release(got);
  return hit;
}

enum { OLD = 3 };
static const char *const old_keys[OLD] = {"older-entry-0", "older-entry-1", "older-entry-2"};

/* A fresh directory holding the OLD entries, each dated an hour ahead (all
 * the same second: their order is by name); *entry: one entry's size. */
static char *fill(const char *tag, uk__binary *b, long *entry) {
  char *dir = ut_temp_dir(tag);
  uk__dcache *c = NULL;
  CHECK_OK(uk__dcache_open(dir, 0, &c));
  time_t ahead = time(NULL) + 3600;
  for (int k = 0; k < OLD; k++) {
    uk__dcache_put(c, hash_of(old_keys[k]), old_keys[k], strlen(old_keys[k]), b);
    char *p = path_of(dir, old_keys[k]);
    struct timespec ts[2] = {{ahead, 0}, {ahead, 0}};
    CHECK(p && utimensat(AT_FDCWD, p, ts, 0) == 0);
    free(p);
  }
  *entry = file_size(dir, old_keys[0]);
  CHECK(*entry > 0 && file_size(dir, old_keys[2]) == *entry);
  uk__dcache_close(c);
  return dir;
}

/* The older entry that goes first: the smallest name (all share one time). */
static int first_in_order(const char *dir) {
  int first = 0;
  for (int k = 1; k < OLD; k++) {
    char *a = path_of(dir, old_keys[k]), *b = path_of(dir, old_keys[first]);
    if (strcmp(a, b) < 0) first = k;
    free(a);
    free(b);
  }
  return first;
}

/* cap 3.5 entries, 4 stored: one goes, and it is an older one. */
static void test_one_evicted(uk__binary *b) {
  long entry = 0;
  char *dir = fill("dc-keep-one", b, &entry);
  uk__dcache *c = NULL;
  CHECK_OK(uk__dcache_open(dir, (uint64_t)(OLD * entry + entry / 2), &c));
  uk__dcache_put(c, hash_of("new-entry-000"), "new-entry-000", 13, b);
  CHECK(hits(c, "new-entry-000"));
  CHECK(atomic_load(&c->stats.evictions) == 1);
  int gone = first_in_order(dir);
  for (int k = 0; k < OLD; k++) CHECK((file_size(dir, old_keys[k]) == -1) == (k == gone));
  uint64_t n = 0, bytes = 0;
  CHECK_OK(uk_cache_usage(dir, &n, &bytes));
  CHECK(n == OLD && bytes <= c->max_bytes);
  uk__dcache_close(c);
  free(dir);
}

/* cap 1.5 entries: every older entry goes, the new one stays. */
static void test_all_others_evicted(uk__binary *b) {
  long entry = 0;
  char *dir = fill("dc-keep-all", b, &entry);
  uk__dcache *c = NULL;
  CHECK_OK(uk__dcache_open(dir, (uint64_t)(entry + entry / 2), &c));
  uk__dcache_put(c, hash_of("new-entry-001"), "new-entry-001", 13, b);
  CHECK(hits(c, "new-entry-001"));
  CHECK(atomic_load(&c->stats.evictions) == OLD);
  for (int k = 0; k < OLD; k++) CHECK(file_size(dir, old_keys[k]) == -1);
  uk__dcache_close(c);
  free(dir);
}

/* cap half an entry: the new entry alone is over it, so it goes too. */
static void test_alone_over_cap(uk__binary *b) {
  long entry = 0;
  char *dir = fill("dc-keep-over", b, &entry);
  uk__dcache *c = NULL;
  CHECK_OK(uk__dcache_open(dir, (uint64_t)(entry / 2), &c));
  uk__dcache_put(c, hash_of("new-entry-002"), "new-entry-002", 13, b);
  CHECK(!hits(c, "new-entry-002"));
  CHECK(atomic_load(&c->stats.evictions) == OLD + 1);
  uint64_t n = 1, bytes = 1;
  CHECK_OK(uk_cache_usage(dir, &n, &bytes));
  CHECK(n == 0 && bytes == 0);
  uk__dcache_close(c);
  free(dir);
}

int main(void) {
  uk__binary *b = make_bin(3000);
  test_one_evicted(b);
  test_all_others_evicted(b);
  test_alone_over_cap(b);
  uk__binary_release(b);
  return ut_finish("test_dcache_keep");
}
