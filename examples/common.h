/* Shared by the examples: fail loudly, skip (exit 77) without a GPU. */
#ifndef UK_EXAMPLES_COMMON_H
#define UK_EXAMPLES_COMMON_H

#include <stdio.h>
#include <stdlib.h>

#include <ukern/ukern.h>

#define TRY(expr)                                                                           \
  do {                                                                                      \
    uk_status s_ = (expr);                                                                  \
    if (s_ != UK_OK) {                                                                      \
      fprintf(stderr, "%s failed: %s: %s\n%s", #expr, uk_status_name(s_), uk_last_error(), \
              uk_last_error_log());                                                         \
      exit(1);                                                                              \
    }                                                                                       \
  } while (0)

/* Exits 77 (CTest's "skipped") when there is no CUDA device. */
static inline void need_gpu(void) {
  int n = 0;
  if (uk_device_count(&n) != UK_OK || n == 0) {
    printf("SKIP: no CUDA device: %s\n", uk_last_error());
    exit(77);
  }
}

/* Deterministic values in [-1, 1), never 0. */
static inline float example_rand(unsigned *state) {
  *state = *state * 1664525u + 1013904223u;
  float u = (float)(*state >> 8) / 8388608.0f - 1.0f;
  return u == 0.0f ? 0.25f : u;
}

#endif
