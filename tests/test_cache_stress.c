/* Disk cache stress (issue 9, item 15): several processes x threads store and
 * look up overlapping entries in one capped directory while another process
 * corrupts, truncates, replaces (garbage, other entries, FIFOs, symlinks,
 * world-writable copies) and removes entries. Afterwards: every hit was the
 * right binary, the cap holds, no process crashed or hung (an alarm in
 * every process turns a hang into a failure). Synthetic binaries through
 * the internal API, so it runs in seconds without NVRTC. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/dcache.h"
#include "testutil.h"

enum { KEYS = 24, WORKERS = 4, THREADS = 3, RUN_MS = 2500, CORRUPT_MS = 2000, ALARM_S = 50 };
static const uint64_t cap = 40 * 1024;
static const char *const names[] = {"stress<int>"};
static const char *const lowered[] = {"_Z6stressIiEvv"};

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void key_of(int i, char *key, size_t n) { snprintf(key, n, "stress entry %02d", i); }

/* Binary i: deterministic bytes and size, so every process knows what a hit
 * on key i must return. */
static uk__binary *bin_of(int i) {
  size_t size = 700 + (size_t)i * 173;
  unsigned char *image = malloc(size);
  for (size_t j = 0; j < size; j++) image[j] = (unsigned char)((j * 131u + (unsigned)i * 7919u) >> 2 ^ (unsigned)i);
  uk__binary *b = NULL;
  if (uk__binary_create(image, size, 0, 90, 1, names, lowered, "", &b) != UK_OK) b = NULL;
  free(image);
  return b;
}

static int same_bin(const uk__binary *a, const uk__binary *b) {
  return a && b && a->image_size == b->image_size && memcmp(a->image, b->image, a->image_size) == 0 &&
         strcmp(a->lowered[0], b->lowered[0]) == 0 && a->arch == b->arch;
}

typedef struct worker {
  uk__dcache *c;
  uk__binary **bins;
  uint64_t seed;
  int bad, hits, gets, puts;
} worker;

static uint64_t next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static void *work(void *p) {
  worker *w = p;
  double end = now_ms() + RUN_MS;
  char key[32];
  while (now_ms() < end) {
    int i = (int)(next(&w->seed) % KEYS);
    key_of(i, key, sizeof key);
    uk_hash128 h = uk__hash128(key, strlen(key));
    uk__binary *got = NULL;
    w->gets++;
    if (uk__dcache_get(w->c, h, key, strlen(key), &got)) {
      w->hits++;
      if (!same_bin(got, w->bins[i])) w->bad++;
      uk__binary_release(got);
    } else {
      uk__dcache_put(w->c, h, key, strlen(key), w->bins[i]);
      w->puts++;
    }
  }
  return NULL;
}

static int run_worker(const char *dir, int id, uk__binary **bins) {
  alarm(ALARM_S);
  uk__dcache *c = NULL;
  if (uk__dcache_open(dir, cap, &c) != UK_OK) return 2;
  worker w[THREADS];
  pthread_t t[THREADS];
  for (int k = 0; k < THREADS; k++) {
    memset(&w[k], 0, sizeof w[k]);
    w[k].c = c;
    w[k].bins = bins;
    w[k].seed = 0x9e3779b97f4a7c15ull * (uint64_t)(id * THREADS + k + 1);
    if (pthread_create(&t[k], NULL, work, &w[k]) != 0) return 3;
  }
  int bad = 0, hits = 0, gets = 0, puts = 0;
  for (int k = 0; k < THREADS; k++) {
    pthread_join(t[k], NULL);
    bad += w[k].bad;
    hits += w[k].hits;
    gets += w[k].gets;
    puts += w[k].puts;
  }
  printf("worker %d: %d lookups, %d hits, %d stores, %d wrong, %llu corrupt, %llu untrusted\n", id, gets, hits,
         puts, bad, (unsigned long long)atomic_load(&c->stats.corrupt_entries),
         (unsigned long long)atomic_load(&c->stats.untrusted));
  fflush(stdout);
  uk__dcache_close(c);
  return bad ? 1 : 0;
}

/* One random entry file of the directory into `out`; 0 when there is none. */
static int pick_entry(const char *dir, uint64_t *seed, char *out, size_t n) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  char names_seen[64][40];
  int count = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL && count < 64)
    if (uk__dcache_is_entry_name(de->d_name)) memcpy(names_seen[count++], de->d_name, 37); /* 36 chars + NUL */
  closedir(d);
  if (!count) return 0;
  snprintf(out, n, "%s/%s", dir, names_seen[next(seed) % (uint64_t)count]);
  return 1;
}

static void replace_with(const char *path, const char *tmp_suffix, const void *data, size_t n, mode_t mode) {
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.%s", path, tmp_suffix);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, mode);
  if (fd < 0) return;
  (void)!write(fd, data, n);
  fchmod(fd, mode);
  close(fd);
  if (rename(tmp, path) != 0) unlink(tmp);
}

/* Damages entries until CORRUPT_MS has passed; returns the number of acts. */
static int run_corrupter(const char *dir) {
  alarm(ALARM_S);
  uint64_t seed = 0x1234567887654321ull ^ (uint64_t)getpid();
  double end = now_ms() + CORRUPT_MS;
  int acts = 0;
  char path[4200], other[4200];
  unsigned char junk[6000];
  while (now_ms() < end) {
    if (!pick_entry(dir, &seed, path, sizeof path)) {
      usleep(1000);
      continue;
    }
    int fd;
    struct stat st;
    switch (next(&seed) % 8) {
    case 0: /* flip a byte in place */
      if ((fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK)) >= 0) {
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
          off_t at = (off_t)(next(&seed) % (uint64_t)st.st_size);
          unsigned char byte = 0;
          if (pread(fd, &byte, 1, at) == 1) {
            byte ^= (unsigned char)(1u << (next(&seed) % 8));
            (void)!pwrite(fd, &byte, 1, at);
          }
        }
        close(fd);
      }
      break;
    case 1: /* truncate in place */
      if ((fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK)) >= 0) {
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
          (void)!ftruncate(fd, (off_t)(next(&seed) % (uint64_t)(st.st_size + 1)));
        close(fd);
      }
      break;
    case 2: /* garbage under the name, with a valid magic */
      for (size_t j = 0; j < sizeof junk; j++) junk[j] = (unsigned char)next(&seed);
      memcpy(junk, "UKC1\2\0\0\0", 8);
      replace_with(path, "g", junk, 32 + next(&seed) % (sizeof junk - 32), 0600);
      break;
    case 3: /* another entry's file under this name: its key differs */
      if (pick_entry(dir, &seed, other, sizeof other) && strcmp(other, path) != 0) {
        fd = open(other, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
        if (fd >= 0) {
          ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, junk, sizeof junk) : -1;
          close(fd);
          if (n > 0) replace_with(path, "c", junk, (size_t)n, 0600);
        }
      }
      break;
    case 4: /* a FIFO */
      unlink(path);
      mkfifo(path, 0600);
      break;
    case 5: /* a symlink to another entry */
      if (pick_entry(dir, &seed, other, sizeof other)) {
        unlink(path);
        (void)!symlink(other, path);
      }
      break;
    case 6: /* a world-writable copy of itself */
      if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)) >= 0) {
        ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, junk, sizeof junk) : -1;
        close(fd);
        if (n > 0) replace_with(path, "w", junk, (size_t)n, 0666);
      }
      break;
    default:
      unlink(path);
    }
    acts++;
  }
  return acts;
}

/* Removes what the corrupter left that no store replaced (FIFOs, links). */
static void remove_non_regular(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    struct stat st;
    if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
      unlinkat(dirfd(d), de->d_name, 0);
  }
  closedir(d);
}

int main(void) {
  ut_seed((uint64_t)getpid());
  alarm(ALARM_S + 5);
  char *dir = ut_temp_dir("stress");
  uk__binary *bins[KEYS];
  for (int i = 0; i < KEYS; i++) CHECK((bins[i] = bin_of(i)) != NULL);
  double t0 = now_ms();
  fflush(NULL);
  pid_t pids[WORKERS + 1];
  for (int p = 0; p <= WORKERS; p++) {
    pids[p] = fork();
    if (pids[p] == 0) {
      if (p == WORKERS) {
        int acts = run_corrupter(dir);
        printf("corrupter: %d acts\n", acts);
        fflush(stdout);
        _exit(acts > 0 ? 0 : 4);
      }
      _exit(run_worker(dir, p, bins));
    }
    CHECK(pids[p] > 0);
  }
  for (int p = 0; p <= WORKERS; p++) {
    int status = 0;
    CHECK(pids[p] > 0 && waitpid(pids[p], &status, 0) == pids[p]);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      fprintf(stderr, "  process %d: %s %d\n", p, WIFSIGNALED(status) ? "signal" : "exit",
              WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
  }
  /* The workers' last stores came after the corrupter stopped: the cap holds. */
  uint64_t n = 0, bytes = 0;
  CHECK_OK(uk_cache_usage(dir, &n, &bytes));
  CHECK(n > 0 && bytes <= cap);
  printf("after: %llu entries, %llu bytes (cap %llu), %.0f ms\n", (unsigned long long)n,
         (unsigned long long)bytes, (unsigned long long)cap, now_ms() - t0);

  /* Every lookup now gives the right binary or a miss; a store repairs. */
  remove_non_regular(dir);
  uk__dcache *c = NULL;
  CHECK_OK(uk__dcache_open(dir, cap, &c));
  int right = 0, repaired = 0;
  for (int i = 0; c && i < KEYS; i++) {
    char key[32];
    key_of(i, key, sizeof key);
    uk_hash128 h = uk__hash128(key, strlen(key));
    uk__binary *got = NULL;
    if (uk__dcache_get(c, h, key, strlen(key), &got)) {
      CHECK(same_bin(got, bins[i]));
      right++;
      uk__binary_release(got);
      continue;
    }
    uk__dcache_put(c, h, key, strlen(key), bins[i]);
    CHECK(uk__dcache_get(c, h, key, strlen(key), &got) == 1 && same_bin(got, bins[i]));
    uk__binary_release(got);
    repaired++;
  }
  printf("final lookups: %d right, %d missed and stored again\n", right, repaired);
  CHECK_OK(uk_cache_usage(dir, &n, &bytes));
  CHECK(bytes <= cap);
  uk__dcache_close(c);
  for (int i = 0; i < KEYS; i++) uk__binary_release(bins[i]);
  free(dir);
  return ut_finish("test_cache_stress");
}
