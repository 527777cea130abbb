/* The C++ standard header map (std_headers.h). */
#include "runtime/std_headers.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/hash.h"
#include "runtime/compile.h"

/* Standard headers that libcu++ provides as <cuda/std/NAME>. */
const char *const uk__std_header_names[] = {
    "array", "atomic", "barrier", "bit", "bitset", "cassert", "cfloat", "chrono", "climits", "cmath",
    "complex", "concepts", "cstddef", "cstdint", "cstdlib", "cstring", "ctime", "expected", "functional",
    "initializer_list", "iterator", "latch", "limits", "mdspan", "memory", "numbers", "numeric",
    "optional", "ranges", "ratio", "semaphore", "source_location", "span", "tuple", "type_traits",
    "utility", "variant", "version", NULL};

#define MAX_STD (sizeof uk__std_header_names / sizeof uk__std_header_names[0])

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *names[MAX_STD];
static const char *texts[MAX_STD];
static int count;
static char digest[33];

static int libcu_has(const char *const *dirs, int ndirs, const char *name) {
  for (int k = 0; k < ndirs; k++) {
    char p[PATH_MAX];
    struct stat s;
    if (snprintf(p, sizeof p, "%s/cuda/std/%s", dirs[k], name) < (int)sizeof p && stat(p, &s) == 0 &&
        S_ISREG(s.st_mode))
      return 1;
  }
  return 0;
}

static void build(void) {
  const char *const *dirs = NULL;
  int ndirs = 0;
  if (uk__nvrtc_include_dirs(&dirs, &ndirs) != UK_OK) {
    uk__error_clear();
    return;
  }
  uk_hasher h;
  uk__hasher_init(&h);
  for (size_t k = 0; uk__std_header_names[k]; k++) {
    const char *name = uk__std_header_names[k];
    if (!libcu_has(dirs, ndirs, name)) continue;
    char text[256];
    int n = snprintf(text, sizeof text,
                     "// ukern: <%s> is libcu++'s <cuda/std/%s> with its names in std\n"
                     "#pragma once\n"
                     "#include <cuda/std/%s>\n"
                     "namespace cuda { namespace std {} }\n" /* libcu++ may include us first */
                     "namespace std { using namespace cuda::std; }\n",
                     name, name, name);
    char *copy = n > 0 && (size_t)n < sizeof text ? strdup(text) : NULL;
    if (!copy) continue;
    names[count] = name;
    texts[count++] = copy;
    uk__hasher_add_str(&h, copy);
  }
  if (count) uk__hash128_hex(uk__hasher_digest(&h), digest);
}

void uk__std_headers(const char *const **n, const char *const **t, int *c) {
  pthread_once(&once, build);
  *n = names;
  *t = texts;
  *c = count;
}

const char *uk__std_headers_digest(void) {
  pthread_once(&once, build);
  return digest;
}
