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
#include "base/once.h"
#include "runtime/first_use.h"

/* Standard headers that libcu++ provides as <cuda/std/NAME>. */
const char *const uk__std_header_names[] = {
    "array", "atomic", "barrier", "bit", "bitset", "cassert", "cfloat", "chrono", "climits", "cmath",
    "complex", "concepts", "cstddef", "cstdint", "cstdlib", "cstring", "ctime", "expected", "functional",
    "initializer_list", "iterator", "latch", "limits", "mdspan", "memory", "numbers", "numeric",
    "optional", "ranges", "ratio", "semaphore", "source_location", "span", "tuple", "type_traits",
    "utility", "variant", "version", NULL};

#define MAX_STD (sizeof uk__std_header_names / sizeof uk__std_header_names[0])

static uk__once once = UK__ONCE_INIT;
static const char *names[MAX_STD];
static const char *texts[MAX_STD];
static int count;
UK__FIRST_USE static char digest[33];

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

const char uk__std_header_format[] =
    "// ukern: <%s> is libcu++'s <cuda/std/%s> with its names in std\n"
    "#pragma once\n"
    "#include <cuda/std/%s>\n"
    "namespace cuda { namespace std {} }\n" /* libcu++ may include us first */
    "namespace std { using namespace cuda::std; }\n";

/* The generated header for `name`: its text in buf; 0 if it does not fit. */
static int shim_text(const char *name, char *buf, size_t cap) {
  int n = snprintf(buf, cap, uk__std_header_format, name, name, name);
  return n > 0 && (size_t)n < cap;
}

static void build(const void *tk_v) {
  const uk__toolkit *tk = tk_v;
  const char *const *dirs = tk->include_dirs;
  int ndirs = tk->num_include_dirs;
  if (!dirs) return;
  for (size_t k = 0; uk__std_header_names[k]; k++) {
    const char *name = uk__std_header_names[k];
    char text[256];
    if (!libcu_has(dirs, ndirs, name) || !shim_text(name, text, sizeof text)) continue;
    char *copy = strdup(text);
    if (!copy) continue;
    names[count] = name;
    texts[count++] = copy;
  }
}

/* The key names the map by its candidates and their text, not by the set
 * found: that set follows from the toolkit directories already in the key,
 * and finding it costs a stat per header, which a disk hit must not pay. */
UK__FIRST_USE static pthread_once_t digest_once = PTHREAD_ONCE_INIT;

/* The format and the names determine every text: hashing them, not the 38
 * formatted texts, keeps snprintf off a new process's first lookup (it was
 * most of that lookup's instructions). */
/* Appends s length-prefixed (as uk__hasher_add_str hashes it); 0 when it
 * does not fit. */
static int add_str(unsigned char *buf, size_t cap, size_t *at, const char *s) {
  uint64_t n = strlen(s);
  if (n > cap || *at + sizeof n + n > cap) return 0;
  memcpy(buf + *at, &n, sizeof n);
  memcpy(buf + *at + sizeof n, s, (size_t)n);
  *at += sizeof n + (size_t)n;
  return 1;
}

/* One XXH3-128 over the length-prefixed strings: the streamed hasher's
 * result for the same bytes, at a fraction of its instructions. */
static void make_digest(void) {
  unsigned char buf[2048];
  size_t at = 0;
  int fits = add_str(buf, sizeof buf, &at, uk__std_header_format);
  for (size_t k = 0; fits && uk__std_header_names[k]; k++)
    fits = add_str(buf, sizeof buf, &at, uk__std_header_names[k]);
  if (fits) {
    uk__hash128_hex(uk__hash128(buf, at), digest);
    return;
  }
  uk_hasher h;
  uk__hasher_init(&h);
  uk__hasher_add_str(&h, uk__std_header_format);
  for (size_t k = 0; uk__std_header_names[k]; k++) uk__hasher_add_str(&h, uk__std_header_names[k]);
  uk__hash128_hex(uk__hasher_digest(&h), digest);
}

void uk__std_headers(const uk__toolkit *tk, const char *const **n, const char *const **t, int *c) {
  uk__once_run(&once, build, tk);
  *n = names;
  *t = texts;
  *c = count;
}

const char *uk__std_headers_digest(void) {
  pthread_once(&digest_once, make_digest);
  return digest;
}
