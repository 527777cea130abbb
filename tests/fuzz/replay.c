/* Replays a fuzz corpus through the same entry point as the libFuzzer
 * target, without libFuzzer: every record must run without a crash;
 * sanitizer builds catch memory errors and leaks. Built once per target
 * (tests/fuzz.cmake defines UK_FUZZ_CORPUS).
 *
 * Arguments: corpus files (the one-file format of tests/fuzz/corpus.py:
 * "ukern-corpus 1", then records "<name> <length>\n<bytes>\n"), or plain
 * input files (a crash artifact). Default:
 * $UKERN_TEST_DATA/fuzz/corpus/<UK_FUZZ_CORPUS>.corpus. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAGIC "ukern-corpus 1\n"

static uint8_t *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  uint8_t *buf = NULL;
  size_t cap = 0, n;
  *len = 0;
  uint8_t chunk[65536];
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (*len + n > cap) {
      cap = 2 * (*len + n);
      uint8_t *grown = realloc(buf, cap);
      if (!grown) {
        free(buf);
        fclose(f);
        return NULL;
      }
      buf = grown;
    }
    memcpy(buf + *len, chunk, n);
    *len += n;
  }
  fclose(f);
  return buf ? buf : calloc(1, 1);
}

/* Runs each record of a corpus file; returns how many, or -1 if malformed.
 * Each input is copied to a buffer of exactly its size, so a read past its
 * end is caught by the sanitizers. */
static int replay_corpus(const uint8_t *p, size_t n, const char *path) {
  size_t at = strlen(MAGIC);
  int count = 0;
  while (at < n) {
    const uint8_t *nl = memchr(p + at, '\n', n - at);
    const uint8_t *sp = nl ? memchr(p + at, ' ', (size_t)(nl - (p + at))) : NULL;
    while (sp && memchr(sp + 1, ' ', (size_t)(nl - sp - 1))) sp = memchr(sp + 1, ' ', (size_t)(nl - sp - 1));
    char *end = NULL;
    unsigned long long len = sp ? strtoull((const char *)sp + 1, &end, 10) : 0;
    size_t body = nl ? (size_t)(nl - p) + 1 : n;
    if (!sp || end != (const char *)nl || len > n - body || n - body - len < 1 || p[body + len] != '\n') {
      fprintf(stderr, "replay_%s: %s: malformed record at byte %zu\n", UK_FUZZ_CORPUS, path, at);
      return -1;
    }
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy) return -1;
    memcpy(copy, p + body, len);
    LLVMFuzzerTestOneInput(copy, len);
    free(copy);
    count++;
    at = body + len + 1;
  }
  return count;
}

int main(int argc, char **argv) {
  char def[1024];
  const char *data = getenv("UKERN_TEST_DATA");
  snprintf(def, sizeof def, "%s/fuzz/corpus/%s.corpus", data ? data : ".", UK_FUZZ_CORPUS);
  char *deflt[] = {def};
  char **paths = argc > 1 ? argv + 1 : deflt;
  int npaths = argc > 1 ? argc - 1 : 1, inputs = 0, failed = 0;
  for (int k = 0; k < npaths; k++) {
    size_t n = 0;
    uint8_t *p = slurp(paths[k], &n);
    if (!p) {
      fprintf(stderr, "replay_%s: cannot read %s\n", UK_FUZZ_CORPUS, paths[k]);
      failed++;
      continue;
    }
    if (n >= strlen(MAGIC) && !memcmp(p, MAGIC, strlen(MAGIC))) {
      int c = replay_corpus(p, n, paths[k]);
      if (c < 0) failed++;
      else inputs += c;
    } else {
      LLVMFuzzerTestOneInput(p, n);
      inputs++;
    }
    free(p);
  }
  printf("replay_%s: %d inputs from %d file(s)\n", UK_FUZZ_CORPUS, inputs, npaths);
  /* an empty or missing corpus would make this test pass vacuously */
  return inputs > 0 && failed == 0 ? 0 : 1;
}
