/* Minimal test helpers shared by every test program. */
#ifndef UK_TESTUTIL_H
#define UK_TESTUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ukern/ukern.h"

extern int ut_failures;
extern int ut_checks;

#define CHECK(cond)                                                                      \
  do {                                                                                   \
    ut_checks++;                                                                         \
    if (!(cond)) {                                                                       \
      ut_failures++;                                                                     \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);           \
    }                                                                                    \
  } while (0)

/* Checks a uk_status is UK_OK, printing the error detail otherwise. */
#define CHECK_OK(expr)                                                                   \
  do {                                                                                   \
    uk_status s_ = (expr);                                                               \
    ut_checks++;                                                                         \
    if (s_ != UK_OK) {                                                                   \
      ut_failures++;                                                                     \
      fprintf(stderr, "%s:%d: %s returned %s: %s\n%s", __FILE__, __LINE__, #expr,        \
              uk_status_name(s_), uk_last_error(), uk_last_error_log());                 \
    }                                                                                    \
  } while (0)

/* Checks a status equals an expected one. */
#define CHECK_STATUS(expr, want)                                                         \
  do {                                                                                   \
    uk_status s_ = (expr);                                                               \
    ut_checks++;                                                                         \
    if (s_ != (want)) {                                                                  \
      ut_failures++;                                                                     \
      fprintf(stderr, "%s:%d: %s returned %s, expected %s (%s)\n", __FILE__, __LINE__,   \
              #expr, uk_status_name(s_), uk_status_name(want), uk_last_error());         \
    }                                                                                    \
  } while (0)

#define CHECK_STREQ(a, b)                                                                \
  do {                                                                                   \
    const char *a_ = (a), *b_ = (b);                                                     \
    ut_checks++;                                                                         \
    if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                             \
      ut_failures++;                                                                     \
      fprintf(stderr, "%s:%d: strings differ:\n  got:      \"%s\"\n  expected: \"%s\"\n", \
              __FILE__, __LINE__, a_ ? a_ : "(null)", b_ ? b_ : "(null)");               \
    }                                                                                    \
  } while (0)

/* Checks that `haystack` contains `needle`. */
#define CHECK_CONTAINS(haystack, needle)                                                 \
  do {                                                                                   \
    const char *h_ = (haystack), *n_ = (needle);                                         \
    ut_checks++;                                                                         \
    if (!h_ || !strstr(h_, n_)) {                                                        \
      ut_failures++;                                                                     \
      fprintf(stderr, "%s:%d: \"%s\" not found in:\n%s\n", __FILE__, __LINE__, n_,       \
              h_ ? h_ : "(null)");                                                       \
    }                                                                                    \
  } while (0)

/* Prints "N passed, N failed" and returns the exit code: 1 on a failed check
 * and when no check was made at all (a test that cannot fail is a defect). */
int ut_finish(const char *name);

/* For gpu tests: prints "SKIP: <reason>" and exits 77 when the public API
 * (uk_device_count) finds no device. */
void ut_require_gpu(void);

/* For tests against the stand-in driver (bench/tools/fake_driver.c, put
 * first in LD_LIBRARY_PATH by the test's cmake): prints "SKIP: <reason>"
 * and exits 77 unless it is the driver loaded (one device, "stand-in"). */
void ut_require_stand_in(void);

/* For gpu tests of cluster launches: ut_require_gpu, then "SKIP: <reason>"
 * and exit 77 unless device 0 is sm_90+ with cluster launch; a failed
 * device query is a failed check (exits through ut_finish). */
void ut_require_cluster_launch(const char *test);

/* For tests of a reduction's scratch: a new context (*ctx) whose device
 * memory comes from `a`, and on it a sum reduction (`T x -> T y`, a + b,
 * identity 0) named `name`, each step a check. Returns the reduction, or
 * NULL; *ctx is the caller's to destroy either way. */
uk_reduction *ut_sum_with_allocator(uk_allocator a, const char *name, uk_context **ctx);

/* For gpu tests of one hand-written kernel: a new context (*ctx), src
 * compiled into *m and its kernel `name` given the signature sig, each step
 * a check. Returns the function, or NULL when there is none; *ctx and *m
 * are the caller's to destroy either way. */
uk_function *ut_kernel_from_source(const char *src, const char *name, const char *sig, uk_context **ctx,
                                   uk_module **m);

/* Deterministic xorshift random numbers. */
uint64_t ut_rand(void);
void ut_seed(uint64_t seed);
/* Uniform in [lo, hi), never exactly 0 when lo < 0 < hi. */
double ut_uniform(double lo, double hi);

/* A fresh empty directory under the test's cache dir (or /tmp); caller frees the name. The
 * directory goes when the process that made it exits (UKERN_TEST_KEEP_TMP keeps it). */
char *ut_temp_dir(const char *tag);

#endif
