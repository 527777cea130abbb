/* Memory cache: single-flight builds under contention, distinct keys,
 * failed builds shared by their waiters and retried later, hash collisions,
 * table growth. */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "base/error.h"
#include "runtime/mcache.h"
#include "testutil.h"

#define NTHREADS 16

typedef struct builder {
  atomic_int calls;
  atomic_int entered;   /* threads that are about to call uk__mcache_get */
  int wait_for;         /* the build waits until this many entered */
  int fail_first;       /* the first build fails */
  const char *lowered;  /* lowered name put in the built binary */
} builder;

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static uk_status build(void *arg, uk__binary **out) {
  builder *bd = arg;
  int n = atomic_fetch_add(&bd->calls, 1) + 1;
  /* Hold the flight open until every thread is inside (or about to be),
   * then ~50 ms more so they all reach the wait. */
  for (int i = 0; i < 5000 && atomic_load(&bd->entered) < bd->wait_for; i++) sleep_ms(1);
  sleep_ms(50);
  if (bd->fail_first && n == 1)
    return uk__errorf_log(UK_ERR_COMPILE, "kernel.cu(3): error: expected a ';'",
                          "nvrtc: compiling 'k' failed (build %d): see uk_last_error_log()", n);
  const char *name = "k";
  const char *low = bd->lowered ? bd->lowered : "_Z1kv";
  return uk__binary_create("image", 5, 0, 90, 1, &name, &low, "", out);
}

typedef struct job {
  uk__mcache *cache;
  pthread_barrier_t *barrier;
  builder *bd;
  char key[32];
  uk_hash128 hash;
  uk__binary *result;
  uk_status status;
  int hit;
  char message[256], log[256];
} job;

static void *run_job(void *arg) {
  job *j = arg;
  pthread_barrier_wait(j->barrier);
  atomic_fetch_add(&j->bd->entered, 1);
  j->hit = -1;
  j->status = uk__mcache_get(j->cache, j->hash, j->key, strlen(j->key), build, j->bd, &j->result,
                             &j->hit);
  snprintf(j->message, sizeof j->message, "%s", uk_last_error());
  snprintf(j->log, sizeof j->log, "%s", uk_last_error_log());
  /* error.c keeps the detail in thread-local storage that is not freed at
   * thread exit; clear it so LeakSanitizer stays quiet. */
  uk__error_clear();
  return NULL;
}

/* Runs NTHREADS gets at once: all for the key "shared", or "key-<i>". */
static void run_threads(uk__mcache *c, builder *bd, job *jobs, int distinct) {
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, NTHREADS);
  pthread_t th[NTHREADS];
  for (int i = 0; i < NTHREADS; i++) {
    jobs[i] = (job){.cache = c, .barrier = &barrier, .bd = bd};
    if (distinct)
      snprintf(jobs[i].key, sizeof jobs[i].key, "key-%d", i);
    else
      snprintf(jobs[i].key, sizeof jobs[i].key, "shared");
    jobs[i].hash = uk__hash128(jobs[i].key, strlen(jobs[i].key));
    pthread_create(&th[i], NULL, run_job, &jobs[i]);
  }
  for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&barrier);
}

static void test_single_flight(void) {
  uk__mcache *c = NULL;
  CHECK_OK(uk__mcache_create(&c));
  builder bd = {.wait_for = NTHREADS};
  job jobs[NTHREADS];
  run_threads(c, &bd, jobs, 0);
  CHECK(atomic_load(&bd.calls) == 1);
  int builders = 0, same = 0;
  for (int i = 0; i < NTHREADS; i++) {
    CHECK_OK(jobs[i].status);
    if (jobs[i].result == jobs[0].result && jobs[i].result) same++;
    if (jobs[i].hit == 0) builders++;
    CHECK(jobs[i].hit == 0 || jobs[i].hit == 1);
  }
  CHECK(same == NTHREADS);
  CHECK(builders == 1);
  /* The cache's reference plus one per caller. */
  CHECK(jobs[0].result && atomic_load(&jobs[0].result->refs) == NTHREADS + 1);
  CHECK_STREQ(uk__binary_lowered(jobs[0].result, "k"), "_Z1kv");

  /* A later call is a hit without a build. */
  uk__binary *again = NULL;
  int hit = -1;
  CHECK_OK(uk__mcache_get(c, jobs[0].hash, "shared", 6, build, &bd, &again, &hit));
  CHECK(hit == 1 && again == jobs[0].result && atomic_load(&bd.calls) == 1);
  uk__binary_release(again);
  for (int i = 0; i < NTHREADS; i++) uk__binary_release(jobs[i].result);
  uk__mcache_destroy(c);
}

static void test_distinct_keys(void) {
  uk__mcache *c = NULL;
  CHECK_OK(uk__mcache_create(&c));
  builder bd = {.wait_for = NTHREADS};
  job jobs[NTHREADS];
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  run_threads(c, &bd, jobs, 1);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  CHECK(atomic_load(&bd.calls) == NTHREADS);
  /* Builds run outside the lock, in parallel: not 16 x 50 ms one by one. */
  double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
  CHECK(ms < 600);
  for (int i = 0; i < NTHREADS; i++) {
    CHECK_OK(jobs[i].status);
    CHECK(jobs[i].hit == 0);
    for (int k = 0; k < i; k++) CHECK(jobs[i].result != jobs[k].result);
  }
  for (int i = 0; i < NTHREADS; i++) {
    uk__binary *b = NULL;
    int hit = 0;
    CHECK_OK(uk__mcache_get(c, jobs[i].hash, jobs[i].key, strlen(jobs[i].key), build, &bd, &b,
                            &hit));
    CHECK(hit == 1 && b == jobs[i].result);
    uk__binary_release(b);
    uk__binary_release(jobs[i].result);
  }
  CHECK(atomic_load(&bd.calls) == NTHREADS);
  uk__mcache_destroy(c);
}

static void test_failed_flight(void) {
  uk__mcache *c = NULL;
  CHECK_OK(uk__mcache_create(&c));
  builder bd = {.wait_for = NTHREADS, .fail_first = 1};
  job jobs[NTHREADS];
  run_threads(c, &bd, jobs, 0);
  CHECK(atomic_load(&bd.calls) == 1);
  for (int i = 0; i < NTHREADS; i++) {
    CHECK_STATUS(jobs[i].status, UK_ERR_COMPILE);
    CHECK(jobs[i].result == NULL);
    CHECK(jobs[i].hit == -1); /* out-parameters untouched on failure */
    CHECK_STREQ(jobs[i].message, "nvrtc: compiling 'k' failed (build 1): see uk_last_error_log()");
    CHECK_STREQ(jobs[i].log, "kernel.cu(3): error: expected a ';'");
  }
  /* Not cached: the next call builds again (and this time succeeds). */
  bd.wait_for = 0;
  uk__binary *b = NULL, *b2 = NULL;
  int hit = -1;
  CHECK_OK(uk__mcache_get(c, jobs[0].hash, "shared", 6, build, &bd, &b, &hit));
  CHECK(hit == 0 && b != NULL && atomic_load(&bd.calls) == 2);
  CHECK_OK(uk__mcache_get(c, jobs[0].hash, "shared", 6, build, &bd, &b2, &hit));
  CHECK(hit == 1 && b2 == b && atomic_load(&bd.calls) == 2);
  uk__binary_release(b);
  uk__binary_release(b2);
  uk__mcache_destroy(c);
}

static void test_collision(void) {
  uk__mcache *c = NULL;
  CHECK_OK(uk__mcache_create(&c));
  uk_hash128 h = {0x1234, 0x5678};
  builder ba = {.lowered = "_Z5alphav"}, bb = {.lowered = "_Z4betav"}, bc = {.lowered = "_Z4alphv"};
  uk__binary *a = NULL, *b = NULL, *p = NULL, *x = NULL;
  int hit = -1;
  CHECK_OK(uk__mcache_get(c, h, "alpha", 5, build, &ba, &a, &hit));
  CHECK(hit == 0);
  CHECK_OK(uk__mcache_get(c, h, "beta", 4, build, &bb, &b, &hit));
  CHECK(hit == 0 && b != a);
  /* A prefix of a cached key with the same hash is another key too. */
  CHECK_OK(uk__mcache_get(c, h, "alph", 4, build, &bc, &p, &hit));
  CHECK(hit == 0 && p != a && p != b);
  CHECK_OK(uk__mcache_get(c, h, "alpha", 5, build, &bb, &x, &hit));
  CHECK(hit == 1 && x == a);
  CHECK_STREQ(uk__binary_lowered(x, "k"), "_Z5alphav");
  uk__binary_release(x);
  CHECK_OK(uk__mcache_get(c, h, "beta", 4, build, &ba, &x, &hit));
  CHECK(hit == 1 && x == b);
  CHECK_STREQ(uk__binary_lowered(x, "k"), "_Z4betav");
  uk__binary_release(x);
  CHECK(atomic_load(&ba.calls) == 1 && atomic_load(&bb.calls) == 1 && atomic_load(&bc.calls) == 1);
  uk__binary_release(a);
  uk__binary_release(b);
  uk__binary_release(p);
  uk__mcache_destroy(c);
}

static uk_status quick_build(void *arg, uk__binary **out) {
  const char *name = "k", *low = arg;
  return uk__binary_create("i", 1, 0, 90, 1, &name, &low, "", out);
}

static uk_status null_build(void *arg, uk__binary **out) {
  (void)arg;
  (void)out;
  return UK_OK;
}

static void test_growth(void) {
  uk__mcache *c = NULL;
  CHECK_OK(uk__mcache_create(&c));
  enum { N = 2000 };
  static char keys[N][24];
  int wrong = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < N; i++) {
      snprintf(keys[i], sizeof keys[i], "entry %d", i);
      uk__binary *b = NULL;
      int hit = -1;
      uk_status s = uk__mcache_get(c, uk__hash128(keys[i], strlen(keys[i])), keys[i],
                                   strlen(keys[i]), quick_build, keys[i], &b, &hit);
      if (s != UK_OK || hit != pass || strcmp(uk__binary_lowered(b, "k"), keys[i]) != 0) wrong++;
      uk__binary_release(b);
    }
  CHECK(wrong == 0);
  /* A build that claims success without a binary is an internal error. */
  uk__binary *b = NULL;
  CHECK_STATUS(uk__mcache_get(c, uk__hash128("z", 1), "z", 1, null_build, NULL, &b, NULL),
               UK_ERR_INTERNAL);
  CHECK(b == NULL);
  uk__mcache_destroy(c);
  uk__mcache_destroy(NULL);
}

int main(void) {
  test_single_flight();
  test_distinct_keys();
  test_failed_flight();
  test_collision();
  test_growth();
  return ut_finish("test_mcache");
}
