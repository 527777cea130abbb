/* Replays a fuzz corpus through the same entry point as the libFuzzer target,
 * without libFuzzer: every file of the directory (argv[1], default
 * $UKERN_TEST_DATA/fuzz/corpus/<UK_FUZZ_CORPUS>) must run without a crash;
 * sanitizer builds catch memory errors and leaks. Built once per target
 * (tests/fuzz.cmake defines UK_FUZZ_CORPUS). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  uint8_t *buf = NULL;
  size_t len = 0, cap = 0, n;
  uint8_t chunk[4096];
  int ok = 1;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (len + n > cap) {
      cap = 2 * (len + n);
      uint8_t *grown = realloc(buf, cap);
      if (!grown) {
        ok = 0;
        break;
      }
      buf = grown;
    }
    memcpy(buf + len, chunk, n);
    len += n;
  }
  fclose(f);
  if (ok) LLVMFuzzerTestOneInput(buf ? buf : (const uint8_t *)"", len);
  free(buf);
  return ok;
}

int main(int argc, char **argv) {
  char dir[1024];
  if (argc > 1) {
    snprintf(dir, sizeof dir, "%s", argv[1]);
  } else {
    const char *data = getenv("UKERN_TEST_DATA");
    snprintf(dir, sizeof dir, "%s/fuzz/corpus/%s", data ? data : ".", UK_FUZZ_CORPUS);
  }
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "replay_%s: cannot open %s\n", UK_FUZZ_CORPUS, dir);
    return 1;
  }
  int files = 0, failed = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    files++;
    if (!replay_file(path)) {
      fprintf(stderr, "replay_%s: cannot read %s\n", UK_FUZZ_CORPUS, path);
      failed++;
    }
  }
  closedir(d);
  printf("replay_%s: %d inputs from %s\n", UK_FUZZ_CORPUS, files, dir);
  /* an empty or missing corpus would make this test pass vacuously */
  return files > 0 && failed == 0 ? 0 : 1;
}
