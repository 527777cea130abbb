/* Disk cache: round trips, every kind of bad entry as a counted soft miss,
 * unusable directories, concurrent writers in several processes, LRU
 * eviction (never of the entry a put just stored, while it fits), usage/clear
 * and the default directory. Each case works in its own fresh directory. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/context.h"
#include "runtime/dcache.h"
#include "testutil.h"

static const char *const names[] = {"f<float>", "g<2>"};
static const char *const lowered[] = {"_Z1fIfEvv", "_Z1gILi2EEvv"};

static uk__binary *make_bin(size_t image_size) {
  unsigned char *image = malloc(image_size);
  for (size_t i = 0; i < image_size; i++) image[i] = (unsigned char)(ut_rand() | 1);
  uk__binary *b = NULL;
  CHECK_OK(uk__binary_create(image, image_size, 0, 90, 2, names, lowered, "log text", &b));
  free(image);
  return b;
}

static int same_bin(const uk__binary *a, const uk__binary *b) {
  return a && b && a->image_size == b->image_size &&
         memcmp(a->image, b->image, a->image_size) == 0 && a->arch == b->arch &&
         a->num_names == b->num_names && strcmp(a->lowered[1], b->lowered[1]) == 0 &&
         strcmp(a->log, b->log) == 0;
}

static uk_hash128 hash_of(const char *key) { return uk__hash128(key, strlen(key)); }

static char *path_of(const char *dir, uk_hash128 h) {
  char hex[33], *p = NULL;
  uk__hash128_hex(h, hex);
  if (asprintf(&p, "%s/%s.ukc", dir, hex) < 0) return NULL;
  return p;
}

static uint64_t stat_of(uk__dcache *c, int which) {
  atomic_ullong *v[] = {&c->stats.hits,       &c->stats.misses,    &c->stats.store_failures,
                        &c->stats.corrupt_entries, &c->stats.evictions, &c->stats.untrusted};
  return atomic_load(v[which]);
}
enum { HITS, MISSES, STORE_FAILURES, CORRUPT, EVICTIONS, UNTRUSTED };

static long file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static int count_files(const char *dir, const char *containing) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL)
    if (strstr(de->d_name, containing)) n++;
  closedir(d);
  return n;
}

static void set_mtime(const char *path, time_t when) {
  struct timespec ts[2] = {{when, 0}, {when, 0}};
  CHECK(utimensat(AT_FDCWD, path, ts, 0) == 0);
}

static void write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (!f) return;
  CHECK(fwrite(data, 1, n, f) == n);
  fclose(f);
}

/* Reads a whole file; *n gets its size. */
static unsigned char *read_file(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = malloc((size_t)size + 1);
  *n = fread(buf, 1, (size_t)size, f);
  fclose(f);
  return buf;
}

static void test_round_trip(void) {
  char *dir = ut_temp_dir("dc-rt");
  uk__dcache *c = NULL;
  CHECK_OK(uk__dcache_open(dir, 0, &c));
  CHECK(c->max_bytes == (1ull << 30));
  uk__binary *b = make_bin(5000), *got = NULL;
  const char *key = "ukern 0.2.0|nvrtc 13000|sm_90|-std=c++17|source...";
  uk_hash128 h = hash_of(key);
  CHECK(uk__dcache_get(c, h, key, strlen(key), &got) == 0);
  CHECK(got == NULL);
  CHECK(stat_of(c, MISSES) == 1 && stat_of(c, CORRUPT) == 0);
  uk__dcache_put(c, h, key, strlen(key), b);
  CHECK(stat_of(c, STORE_FAILURES) == 0);
  char *path = path_of(dir, h);
  CHECK(file_size(path) > 5000);
  CHECK(uk__dcache_get(c, h, key, strlen(key), &got) == 1);
  CHECK(same_bin(b, got));
  CHECK(got && atomic_load(&got->refs) == 1);
  CHECK(stat_of(c, HITS) == 1);
  uk__binary_release(got);
  got = NULL;

  /* A hit refreshes the mtime (LRU). */
  time_t old = time(NULL) - 5000;
  set_mtime(path, old);
  CHECK(uk__dcache_get(c, h, key, strlen(key), &got) == 1);
  uk__binary_release(got);
  got = NULL;
  struct stat st;
  CHECK(stat(path, &st) == 0 && st.st_mtime >= time(NULL) - 60);

  /* Persisted: a second cache on the same directory (trailing slash) sees it. */
  char *slashed = NULL;
  CHECK(asprintf(&slashed, "%s//", dir) > 0);
  uk__dcache *c2 = NULL;
  CHECK_OK(uk__dcache_open(slashed, 0, &c2));
  CHECK_STREQ(c2->dir, dir);
  CHECK(uk__dcache_get(c2, h, key, strlen(key), &got) == 1 && same_bin(b, got));
  uk__binary_release(got);
  uk__dcache_close(c2);
  free(slashed);

  /* An empty key works too. */
  uk__dcache_put(c, hash_of(""), "", 0, b);
  got = NULL;
  CHECK(uk__dcache_get(c, hash_of(""), "", 0, &got) == 1 && same_bin(b, got));
  uk__binary_release(got);
  CHECK(count_files(dir, ".tmp.") == 0);
  uk_status s = uk__dcache_open("", 0, &c2);
  CHECK_STATUS(s, UK_ERR_INVALID);
  uk__binary_release(b);
  uk__dcache_close(c);
  uk__dcache_close(NULL);
  free(path);
  free(dir);
}

/* Puts an entry, damages its file with `damage`, and expects a counted miss
 * followed by a repairing put. */
static void check_damage(const char *tag, void (*damage)(const char *path)) {
  char *dir = ut_temp_dir(tag);
  uk__dcache *c = NULL;
  CHECK_OK(uk__dcache_open(dir, 0, &c));
  uk__binary *b = make_bin(3000), *got = NULL;
  const char *key = "key for damage";
  uk_hash128 h = hash_of(key);
  uk__dcache_put(c, h, key, strlen(key), b);
  char *path = path_of(dir, h);
  damage(path);
  CHECK(uk__dcache_get(c, h, key, strlen(key), &got) == 0);
  CHECK(got == NULL);
  CHECK(stat_of(c, CORRUPT) == 1 && stat_of(c, MISSES) == 1 && stat_of(c, HITS) == 0);
  if (stat_of(c, CORRUPT) != 1) fprintf(stderr, "  damage case %s\n", tag);
  uk__dcache_put(c, h, key, strlen(key), b);
  CHECK(uk__dcache_get(c, h, key, strlen(key), &got) == 1 && same_bin(b, got));
  uk__binary_release(got);
  uk__binary_release(b);
  uk__dcache_close(c);
  free(path);
  free(dir);
}

static void edit_byte(const char *path, long at_from_end, long at_from_start) {
  size_t n = 0;
  unsigned char *buf = read_file(path, &n);
  CHECK(buf && n > 100);
  if (!buf) return;
  size_t at = at_from_end ? n - (size_t)at_from_end : (size_t)at_from_start;
  buf[at] ^= 0x20;
  write_file(path, buf, n);
  free(buf);
}

static void flip_payload(const char *path) { edit_byte(path, 40, 0); }
static void flip_magic(const char *path) { edit_byte(path, 0, 1); }
static void flip_version(const char *path) { edit_byte(path, 0, 4); }
static void flip_key(const char *path) { edit_byte(path, 0, 33); }
static void flip_checksum(const char *path) { edit_byte(path, 0, 27); }
static void truncate_half(const char *path) { CHECK(truncate(path, file_size(path) / 2) == 0); }
static void truncate_header(const char *path) { CHECK(truncate(path, 20) == 0); }
static void truncate_empty(const char *path) { CHECK(truncate(path, 0) == 0); }
static void append_byte(const char *path) {
  FILE *f = fopen(path, "ab");
  fputc('x', f);
  fclose(f);
}
static void make_dir_instead(const char *path) {
  CHECK(unlink(path) == 0 && mkdir(path, 0700) == 0);
}
static void undo_dir(const char *path) { rmdir(path); }

static void test_damaged_entries(void) {
  check_damage("dc-payload", flip_payload);
  check_damage("dc-magic", flip_magic);
  check_damage("dc-version", flip_version);
  check_damage("dc-key", flip_key);
  check_damage("dc-sum", flip_checksum);
  check_damage("dc-trunc", truncate_half);
  check_damage("dc-trunc-hdr", truncate_header);
  check_damage("dc-empty", truncate_empty);
  check_damage("dc-append", append_byte);

  /* A directory where the entry should be: a counted miss, and the put
   * that cannot replace it is a store failure. */
  char *dir = ut_temp_dir("dc-isdir");
  uk__dcache *c = NULL;
  CHECK_OK(uk__dcache_open(dir, 0, &c));
  uk__binary *b = make_bin(100), *got = NULL;
  uk__dcache_put(c, hash_of("k"), "k", 1, b);
  char *path = path_of(dir, hash_of("k"));
  make_dir_instead(path);
  CHECK(uk__dcache_get(c, hash_of("k"), "k", 1, &got) == 0 && stat_of(c, UNTRUSTED) == 1);
  uk__dcache_put(c, hash_of("k"), "k", 1, b);
  CHECK(stat_of(c, STORE_FAILURES) == 1);
  CHECK(count_files(dir, ".tmp.") == 0);
  undo_dir(path);
  uk__binary_release(b);
  uk__dcache_close(c);
  free(path);
  free(dir);
}

/* Writes an entry file by hand in the documented format (version 2: zero
 * padding after the key puts the image, 28 bytes into the payload, at a
 * multiple of 16). */
static void write_entry(const char *path, const char *key, const void *payload, size_t plen) {
  size_t klen = strlen(key), pad = (16 - (32 + klen + 28) % 16) % 16, n = 32 + klen + pad + plen;
  unsigned char *buf = calloc(1, n);
  memcpy(buf, "UKC1", 4);
  buf[4] = 2;
  for (int i = 0; i < 8; i++) {
    buf[8 + i] = (unsigned char)((uint64_t)klen >> (8 * i));
    buf[16 + i] = (unsigned char)((uint64_t)plen >> (8 * i));
  }
  memcpy(buf + 32, key, klen);
  memcpy(buf + 32 + klen + pad, payload, plen);
  uint64_t sum = uk__hash64(buf + 32, klen + pad + plen);
  for (int i = 0; i < 8; i++) buf[24 + i] = (unsigned char)(sum >> (8 * i));
  write_file(path, buf, n);
  free(buf);
}

static void test_wrong_key_and_format(void) {
  char *dir = ut_temp_dir("dc-wrongkey");
  uk__dcache *c = NULL;
  CHECK_OK(uk__dcache_open(dir, 0, &c));
  uk__binary *b = make_bin(700), *got = NULL;
  /* Entry under hash H with key A; asking for H with key B (a collision,
   * or a file copied under the wrong name) must not return A's binary. */
  uk_hash128 h = hash_of("key A");
  uk__dcache_put(c, h, "key A", 5, b);
  CHECK(uk__dcache_get(c, h, "key B", 5, &got) == 0 && got == NULL);
  CHECK(stat_of(c, CORRUPT) == 1 && stat_of(c, MISSES) == 1);
  CHECK(uk__dcache_get(c, h, "key A-longer", 12, &got) == 0 && stat_of(c, CORRUPT) == 2);
  CHECK(uk__dcache_get(c, h, "key A", 5, &got) == 1 && same_bin(b, got));
  uk__binary_release(got);
  got = NULL;

  /* The documented format, written by hand, is read back. */
  void *enc = NULL;
  size_t elen = 0;
  CHECK_OK(uk__binary_encode(b, &enc, &elen));
  uk_hash128 h2 = hash_of("hand made");
  char *p2 = path_of(dir, h2);
  write_entry(p2, "hand made", enc, elen);
  CHECK(uk__dcache_get(c, h2, "hand made", 9, &got) == 1 && same_bin(b, got));
  uk__binary_release(got);
  got = NULL;
  /* A valid checksum over a payload that does not decode: corrupt. */
  write_entry(p2, "hand made", "not a binary", 12);
  CHECK(uk__dcache_get(c, h2, "hand made", 9, &got) == 0 && stat_of(c, CORRUPT) == 3);
  free(enc);
  free(p2);
  uk__binary_release(b);
  uk__dcache_close(c);
  free(dir);
}

/* A hit reads the entry into private memory and uses the image in place
 * there, 16-byte aligned whatever the key's length; the binary outlives its
 * file. */
static void test_mapped_hits(void) {
  char *dir = ut_temp_dir("dc-mapped");
  uk__dcache *c = NULL;
  CHECK_OK(uk__dcache_open(dir, 0, &c));
  uk__binary *b = make_bin(333);
  char key[40];
  for (int len = 1; len <= 33; len++) {
    memset(key, 'a' + len % 26, sizeof key - 1);
    key[len] = '\0';
    uk_hash128 h = hash_of(key);
    h.lo += (uint64_t)len;
    uk__dcache_put(c, h, key, (size_t)len, b);
    uk__binary *got = NULL;
    CHECK(uk__dcache_get(c, h, key, (size_t)len, &got) == 1 && same_bin(b, got));
    CHECK(got && got->mapping != NULL && ((uintptr_t)got->image & 15u) == 0);
    char *p = path_of(dir, h);
    CHECK(unlink(p) == 0); /* evicted while in use: the copy stays valid */
    CHECK(got && same_bin(b, got));
    free(p);
    uk__binary_release(got);
  }
  uk__binary_release(b);
  uk__dcache_close(c);
  free(dir);
}

/* The checks on a directory this process cannot write: reads still hit,
 * stores fail softly, clear reports the entry it could not remove. */
static void read_only_checks(const char *dir, const uk__binary *b) {
  uk__dcache *c = NULL;
  CHECK_OK(uk__dcache_open(dir, 0, &c));
  if (!c) return;
  uk__binary *got = NULL;
  CHECK(uk__dcache_get(c, hash_of("present"), "present", 7, &got) == 1 && same_bin(b, got));
  uk__binary_release(got);
  got = NULL;
  uk__dcache_put(c, hash_of("new"), "new", 3, b);
  uk__dcache_trim(c);
  CHECK(stat_of(c, STORE_FAILURES) == 1);
  CHECK(uk__dcache_get(c, hash_of("new"), "new", 3, &got) == 0 && got == NULL);
  CHECK(stat_of(c, CORRUPT) == 0 && stat_of(c, HITS) == 1);
  CHECK_STATUS(uk_cache_clear(dir), UK_ERR_IO);
  CHECK_CONTAINS(uk_last_error(), "could not remove 1 cache entries from");
  uk__dcache_close(c);
}

/* Whether this process can create a file in dir (root ignores modes). */
static int can_write(const char *dir) {
  char *probe = NULL;
  if (asprintf(&probe, "%s/probe", dir) < 0) return 1;
  int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd >= 0) {
    close(fd);
    unlink(probe);
  }
  free(probe);
  return fd >= 0;
}

static void test_read_only_dir(void) {
  char *dir = ut_temp_dir("dc-ro");
  uk__dcache *c = NULL;
  CHECK_OK(uk__dcache_open(dir, 0, &c));
  uk__binary *b = make_bin(400), *got = NULL;
  uk__dcache_put(c, hash_of("present"), "present", 7, b);
  uk__dcache_close(c);
  CHECK(chmod(dir, 0500) == 0);
  if (!can_write(dir)) {
    read_only_checks(dir, b);
  } else if (geteuid() == 0) {
    /* Root writes anywhere: run the checks as nobody, owning the directory. */
    char *entry = path_of(dir, hash_of("present"));
    const uid_t nobody = 65534;
    CHECK(chown(dir, nobody, nobody) == 0 && chown(entry, nobody, nobody) == 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
      /* nobody must reach the directory: a parent may be closed to others
       * (a checkout under /root), and then this sub-case can't run here. */
      if (setgid(nobody) != 0 || setuid(nobody) != 0 || can_write(dir) || access(dir, R_OK | X_OK) != 0)
        _exit(77);
      read_only_checks(dir, b);
      fflush(NULL);
      _exit(ut_failures ? 1 : 0);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status));
    if (WEXITSTATUS(status) == 77)
      printf("note: read-only sub-case skipped: cannot run it as an unprivileged user here\n");
    else
      CHECK(WEXITSTATUS(status) == 0);
    CHECK(chown(dir, 0, 0) == 0 && chown(entry, 0, 0) == 0);
    free(entry);
  } else {
    printf("note: read-only sub-case skipped: this user can write a 0500 directory\n");
  }
  /* Whatever the user, this process reads and stores without crashing. */
  CHECK_OK(uk__dcache_open(dir, 0, &c));
  CHECK(uk__dcache_get(c, hash_of("present"), "present", 7, &got) == 1 && same_bin(b, got));
  uk__binary_release(got);
  uk__dcache_put(c, hash_of("new"), "new", 3, b);
  CHECK(count_files(dir, ".tmp.") == 0);
  chmod(dir, 0700);
  uk__binary_release(b);
  uk__dcache_close(c);
  free(dir);
}

static void test_unusable_dir(void) {
  char *dir = ut_temp_dir("dc-nodir");
  char *file = NULL, *under = NULL, *nested = NULL;
  CHECK(asprintf(&file, "%s/plain-file", dir) > 0);
  CHECK(asprintf(&under, "%s/plain-file/sub/cache", dir) > 0);
  write_file(file, "x", 1);
  uk__dcache *c = NULL;
  CHECK_OK(uk__dcache_open(under, 0, &c)); /* soft: no error now */
  uk__binary *b = make_bin(100), *got = NULL;
  CHECK(uk__dcache_get(c, hash_of("k"), "k", 1, &got) == 0 && got == NULL);
  CHECK(stat_of(c, MISSES) == 1 && stat_of(c, CORRUPT) == 0);
  uk__dcache_put(c, hash_of("k"), "k", 1, b);
  uk__dcache_put(c, hash_of("k"), "k", 1, b);
  CHECK(stat_of(c, STORE_FAILURES) == 2);
  uk__dcache_trim(c);
  uint64_t n = 7, bytes = 7;
  CHECK_STATUS(uk_cache_usage(under, &n, &bytes), UK_ERR_IO);
  CHECK(n == 7 && bytes == 7);
  uk__dcache_close(c);

  /* A missing nested directory is created (0700) at open, and again by a
   * put when it was removed in between. */
  CHECK(asprintf(&nested, "%s/a/b/c", dir) > 0);
  CHECK_OK(uk__dcache_open(nested, 0, &c));
  struct stat st;
  CHECK(stat(nested, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700);
  CHECK(rmdir(nested) == 0);
  uk__dcache_put(c, hash_of("k"), "k", 1, b);
  CHECK(stat_of(c, STORE_FAILURES) == 0);
  CHECK(uk__dcache_get(c, hash_of("k"), "k", 1, &got) == 1 && same_bin(b, got));
  uk__binary_release(got);
  uk__dcache_close(c);
  uk__binary_release(b);
  free(file);
  free(under);
  free(nested);
  free(dir);
}

static void test_concurrent_writers(void) {
  enum { CHILDREN = 8, PUTS = 20 };
  char *dir = ut_temp_dir("dc-fork");
  uk__dcache *c = NULL;
  CHECK_OK(uk__dcache_open(dir, 0, &c));
  uk__binary *b = make_bin(1 << 20);
  const char *key = "the big shared entry";
  uk_hash128 h = hash_of(key);
  fflush(NULL);
  pid_t pids[CHILDREN];
  for (int i = 0; i < CHILDREN; i++) {
    pids[i] = fork();
    if (pids[i] == 0) {
      uk__dcache *cc = NULL;
      if (uk__dcache_open(dir, 0, &cc) != UK_OK) _exit(2);
      for (int k = 0; k < PUTS; k++) uk__dcache_put(cc, h, key, strlen(key), b);
      _exit(atomic_load(&cc->stats.store_failures) == 0 ? 0 : 1);
    }
    CHECK(pids[i] > 0);
  }
  int running = CHILDREN, bad_hits = 0, hits = 0, reads = 0, exit_ok = 0;
  while (running > 0) {
    uk__binary *got = NULL;
    if (uk__dcache_get(c, h, key, strlen(key), &got)) {
      hits++;
      if (!same_bin(b, got)) bad_hits++;
      uk__binary_release(got);
    }
    reads++;
    int status;
    pid_t p;
    while ((p = waitpid(-1, &status, WNOHANG)) > 0) {
      running--;
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) exit_ok++;
    }
    if (p < 0 && errno == ECHILD) break;
  }
  CHECK(exit_ok == CHILDREN);
  CHECK(bad_hits == 0);
  CHECK(stat_of(c, CORRUPT) == 0); /* readers never see a partial entry */
  uk__binary *got = NULL;
  CHECK(uk__dcache_get(c, h, key, strlen(key), &got) == 1 && same_bin(b, got));
  uk__binary_release(got);
  CHECK(count_files(dir, ".tmp.") == 0);
  CHECK(count_files(dir, ".ukc") == 1);
  printf("concurrent writers: %d reads, %d hits\n", reads, hits);
  uk__binary_release(b);
  uk__dcache_close(c);
  free(dir);
}

static void test_eviction(void) {
  enum { N = 16 };
  char *dir = ut_temp_dir("dc-evict");
  uk__binary *b = make_bin(2000), *got = NULL;
  char keys[N][32];
  /* Size of one entry (all keys have the same length). */
  uk__dcache *c = NULL;
  CHECK_OK(uk__dcache_open(dir, 0, &c));
  uk__dcache_put(c, hash_of("probe-entry-00"), "probe-entry-00", 14, b);
  char *probe = path_of(dir, hash_of("probe-entry-00"));
  uint64_t entry = (uint64_t)file_size(probe);
  CHECK(uk_cache_clear(dir) == UK_OK && file_size(probe) == -1);
  uk__dcache_close(c);

  uint64_t cap = entry * 10 + entry / 2;
  CHECK_OK(uk__dcache_open(dir, cap, &c));
  time_t base = time(NULL) - 10000;
  for (int i = 0; i < N; i++) {
    snprintf(keys[i], sizeof keys[i], "entry-key-%04d", i);
    uk__dcache_put(c, hash_of(keys[i]), keys[i], strlen(keys[i]), b);
    char *p = path_of(dir, hash_of(keys[i]));
    set_mtime(p, base + i * 10); /* entry i used before entry i+1 */
    free(p);
  }
  int present[N], kept = 0, first_kept = -1, suffix = 1;
  for (int i = 0; i < N; i++) {
    char *p = path_of(dir, hash_of(keys[i]));
    present[i] = file_size(p) > 0;
    free(p);
    if (present[i]) {
      kept++;
      if (first_kept < 0) first_kept = i;
    } else if (first_kept >= 0) {
      suffix = 0; /* an evicted entry newer than a kept one */
    }
  }
  CHECK(suffix);
  CHECK(!present[0] && present[N - 1]);
  CHECK(stat_of(c, EVICTIONS) == (uint64_t)(N - kept));
  uint64_t n = 0, bytes = 0;
  CHECK_OK(uk_cache_usage(dir, &n, &bytes));
  CHECK(n == (uint64_t)kept && bytes == n * entry && bytes <= cap);
  CHECK(kept >= 8 && kept <= 10);
  CHECK(uk__dcache_get(c, hash_of(keys[0]), keys[0], strlen(keys[0]), &got) == 0);
  CHECK(uk__dcache_get(c, hash_of(keys[N - 1]), keys[N - 1], strlen(keys[N - 1]), &got) == 1);
  uk__binary_release(got);
  uk__dcache_close(c);

  /* Opening with a smaller cap lists nothing (a reader never pays for the
   * directory's size); its next store evicts, oldest first (the hit just
   * before made keys[N - 1] recent). */
  CHECK_OK(uk__dcache_open(dir, entry * 3, &c));
  CHECK_OK(uk_cache_usage(dir, &n, &bytes));
  CHECK(n == (uint64_t)kept && stat_of(c, EVICTIONS) == 0);
  CHECK(uk__dcache_get(c, hash_of(keys[N - 1]), keys[N - 1], strlen(keys[N - 1]), &got) == 1);
  uk__binary_release(got);
  uk__dcache_put(c, hash_of("entry-key-last"), "entry-key-last", 14, b);
  CHECK_OK(uk_cache_usage(dir, &n, &bytes));
  CHECK(n == 2 && stat_of(c, EVICTIONS) == (uint64_t)kept - 1);
  CHECK(uk__dcache_get(c, hash_of(keys[N - 1]), keys[N - 1], strlen(keys[N - 1]), &got) == 1);
  uk__binary_release(got);
  CHECK(uk__dcache_get(c, hash_of("entry-key-last"), "entry-key-last", 14, &got) == 1);
  uk__binary_release(got);
  CHECK(uk__dcache_get(c, hash_of(keys[N - 3]), keys[N - 3], strlen(keys[N - 3]), &got) == 0);
  uk__dcache_close(c);
  uk__binary_release(b);
  free(probe);
  free(dir);
}

/* A put never evicts the entry it just stored while the cap holds without
 * it (a store then a lookup hits): file times come from a coarse clock, so
 * a new entry often ties with older ones, a tie going by name. Here the
 * older entries are dated an hour ahead (all the same second: their order
 * is by name), so the new one sorts first every time. cap_halves: the cap
 * in half entries; evicted: how many entries go, the new one last. */
static void check_put_keeps(int cap_halves, int evicted) {
  enum { OLD = 3 };
  char *dir = ut_temp_dir("dc-keep"), keys[OLD + 1][24], *paths[OLD + 1];
  uk__binary *b = make_bin(3000), *got = NULL;
  uk__dcache *c = NULL;
  CHECK_OK(uk__dcache_open(dir, 0, &c));
  for (int k = 0; k <= OLD; k++) {
    snprintf(keys[k], sizeof keys[k], "keep-entry-%d", k);
    paths[k] = path_of(dir, hash_of(keys[k]));
    if (k < OLD) uk__dcache_put(c, hash_of(keys[k]), keys[k], strlen(keys[k]), b);
    if (k < OLD) set_mtime(paths[k], time(NULL) + 3600);
  }
  long entry = file_size(paths[0]);
  uk__dcache_close(c);
  CHECK_OK(uk__dcache_open(dir, (uint64_t)(entry * cap_halves / 2), &c));
  uk__dcache_put(c, hash_of(keys[OLD]), keys[OLD], strlen(keys[OLD]), b);
  CHECK(uk__dcache_get(c, hash_of(keys[OLD]), keys[OLD], strlen(keys[OLD]), &got) == (evicted <= OLD));
  uk__binary_release(got);
  CHECK(stat_of(c, EVICTIONS) == (uint64_t)evicted);
  for (int k = 0; k < OLD; k++) { /* the older ones go in name order */
    int rank = 0;
    for (int j = 0; j < OLD; j++) rank += strcmp(paths[j], paths[k]) < 0;
    CHECK((file_size(paths[k]) == -1) == (rank < evicted));
  }
  uint64_t n = 0, bytes = 0;
  CHECK_OK(uk_cache_usage(dir, &n, &bytes));
  CHECK(n == (uint64_t)(OLD + 1 - evicted) && bytes <= c->max_bytes);
  uk__dcache_close(c);
  uk__binary_release(b);
  for (int k = 0; k <= OLD; k++) free(paths[k]);
  free(dir);
}

static void test_put_keeps_its_entry(void) {
  check_put_keeps(7, 1); /* cap 3.5 entries, 4 stored: one older entry goes */
  check_put_keeps(3, 3); /* cap 1.5: every older one goes, the new one stays */
  check_put_keeps(1, 4); /* cap 0.5: the new entry alone is over it, so it goes too */
}

static void test_usage_clear_and_temps(void) {
  char *dir = ut_temp_dir("dc-usage");
  uk__dcache *c = NULL;
  CHECK_OK(uk__dcache_open(dir, 0, &c));
  uk__binary *b = make_bin(999);
  uint64_t expect_bytes = 0;
  for (int i = 0; i < 3; i++) {
    char key[32];
    snprintf(key, sizeof key, "usage %d", i);
    uk__dcache_put(c, hash_of(key), key, strlen(key), b);
    char *p = path_of(dir, hash_of(key));
    expect_bytes += (uint64_t)file_size(p);
    free(p);
  }
  char *other = NULL, *lookalike = NULL, *stale = NULL, *fresh = NULL, *sub = NULL;
  CHECK(asprintf(&other, "%s/notes.txt", dir) > 0);
  CHECK(asprintf(&lookalike, "%s/README.ukc", dir) > 0);
  CHECK(asprintf(&stale, "%s/0123456789abcdef0123456789abcdef.ukc.tmp.1.ab", dir) > 0);
  CHECK(asprintf(&fresh, "%s/0123456789abcdef0123456789abcdef.ukc.tmp.2.cd", dir) > 0);
  CHECK(asprintf(&sub, "%s/fedcba9876543210fedcba9876543210.ukc", dir) > 0);
  write_file(other, "keep me", 7);
  write_file(lookalike, "keep me too", 11);
  write_file(stale, "partial", 7);
  write_file(fresh, "partial", 7);
  set_mtime(stale, time(NULL) - 7200);
  CHECK(mkdir(sub, 0700) == 0); /* a directory named like an entry: not ours */

  uint64_t n = 0, bytes = 0;
  CHECK_OK(uk_cache_usage(dir, &n, &bytes));
  CHECK(n == 3 && bytes == expect_bytes);
  CHECK_OK(uk_cache_usage(dir, NULL, NULL));

  /* A scan removes the stale temporary file and keeps the fresh one. */
  uk__dcache_trim(c);
  CHECK(file_size(stale) == -1 && file_size(fresh) == 7);
  write_file(stale, "partial", 7);
  set_mtime(stale, time(NULL) - 7200);

  CHECK_OK(uk_cache_clear(dir));
  CHECK_OK(uk_cache_usage(dir, &n, &bytes));
  CHECK(n == 0 && bytes == 0);
  CHECK(file_size(other) == 7 && file_size(lookalike) == 11 && file_size(fresh) == 7);
  CHECK(file_size(stale) == -1);
  struct stat st;
  CHECK(stat(sub, &st) == 0 && S_ISDIR(st.st_mode));

  /* A missing directory holds nothing and clears fine. */
  char *missing = NULL;
  CHECK(asprintf(&missing, "%s/does/not/exist", dir) > 0);
  n = bytes = 9;
  CHECK_OK(uk_cache_usage(missing, &n, &bytes));
  CHECK(n == 0 && bytes == 0);
  CHECK_OK(uk_cache_clear(missing));
  CHECK(file_size(missing) == -1);

  rmdir(sub);
  uk__binary_release(b);
  uk__dcache_close(c);
  free(other);
  free(lookalike);
  free(stale);
  free(fresh);
  free(sub);
  free(missing);
  free(dir);
}

static void set_env(const char *name, const char *value) {
  if (value)
    setenv(name, value, 1);
  else
    unsetenv(name);
}

static void check_default(const char *ukern, const char *xdg, const char *home, const char *want) {
  set_env("UKERN_CACHE_DIR", ukern);
  set_env("XDG_CACHE_HOME", xdg);
  set_env("HOME", home);
  char *got = (char *)"untouched";
  uk_status s = uk_cache_default_dir(&got);
  if (want) {
    CHECK_OK(s);
    CHECK_STREQ(got, want);
    if (s == UK_OK) uk_free(got);
  } else {
    CHECK_STATUS(s, UK_ERR_NOT_FOUND);
    CHECK_STREQ(got, "untouched");
    CHECK_CONTAINS(uk_last_error(), "set UKERN_CACHE_DIR");
  }
}

static char *save_env(const char *name) {
  const char *v = getenv(name);
  return v ? strdup(v) : NULL;
}

static void test_default_dir(void) {
  char *dir = ut_temp_dir("dc-default"); /* before UKERN_CACHE_DIR changes */
  char *saved[3] = {save_env("UKERN_CACHE_DIR"), save_env("XDG_CACHE_HOME"), save_env("HOME")};
  check_default("/data/ukc", "/xdg", "/home/u", "/data/ukc");
  check_default(NULL, "/xdg", "/home/u", "/xdg/ukern");
  check_default("", "/xdg", "/home/u", "/xdg/ukern");
  check_default(NULL, "relative/xdg", "/home/u", "/home/u/.cache/ukern");
  check_default(NULL, "", "/home/u", "/home/u/.cache/ukern");
  check_default(NULL, NULL, "/home/u", "/home/u/.cache/ukern");
  check_default(NULL, NULL, NULL, NULL);
  check_default("", NULL, "", NULL);

  /* The disk cache takes its directory from its caller: a context without
   * one opens the default directory. */
  set_env("UKERN_CACHE_DIR", dir);
  uk__dcache *c = NULL;
  CHECK_STATUS(uk__dcache_open(NULL, 0, &c), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "no directory");
  CHECK(c == NULL);
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(NULL, &ctx));
  CHECK(ctx && ctx->dcache && strcmp(ctx->dcache->dir, dir) == 0);
  uk_context_destroy(ctx);
  set_env("UKERN_CACHE_DIR", NULL);
  set_env("HOME", NULL);
  set_env("XDG_CACHE_HOME", NULL);
  /* no default directory: the context compiles without a disk cache */
  ctx = NULL;
  CHECK_OK(uk_context_create(NULL, &ctx));
  CHECK(ctx && ctx->dcache == NULL);
  uk_context_destroy(ctx);
  CHECK_STATUS(uk_cache_usage(NULL, NULL, NULL), UK_ERR_NOT_FOUND);

  set_env("UKERN_CACHE_DIR", saved[0]);
  set_env("XDG_CACHE_HOME", saved[1]);
  set_env("HOME", saved[2]);
  for (int i = 0; i < 3; i++) free(saved[i]);
  free(dir);
}

int main(void) {
  ut_seed((uint64_t)getpid());
  test_round_trip();
  test_damaged_entries();
  test_wrong_key_and_format();
  test_mapped_hits();
  test_read_only_dir();
  test_unusable_dir();
  test_concurrent_writers();
  test_eviction();
  test_put_keeps_its_entry();
  test_usage_clear_and_temps();
  test_default_dir();
  return ut_finish("test_dcache");
}
