/* Shared by the fuzz entries (tests/fuzz/fuzz_*.c). */
#ifndef UK_FUZZ_UTIL_H
#define UK_FUZZ_UTIL_H

#include <stdio.h>
#include <stdlib.h>

/* A broken invariant: says which (fuzzer logs, replay output), then aborts. */
#define require(cond)                                                                    \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond);       \
      abort();                                                                           \
    }                                                                                    \
  } while (0)

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

#endif
