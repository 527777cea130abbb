/* Which NVRTC file ukern would load, found without loading it
 * (uk__nvrtc_choose_library): when the build's library directory has no
 * libnvrtc on this machine, the file the loader would find (LD_LIBRARY_PATH
 * first) by its absolute path, with an identity for the version memo, so a
 * warm process never loads NVRTC only to learn its version. No NVRTC needed:
 * the candidates here are fake files. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/nvrtc_lib.h"
#include "testutil.h"

static char soname[32];

/* dir/soname as a regular file of `bytes` bytes. */
static void make_lib(const char *dir, size_t bytes) {
  char p[4200];
  snprintf(p, sizeof p, "%s/%s", dir, soname);
  FILE *f = fopen(p, "wb");
  CHECK(f != NULL);
  for (size_t k = 0; f && k < bytes; k++) fputc('x', f);
  if (f) fclose(f);
}

static void choose(char *path, char *id) { uk__nvrtc_choose_library(path, 4096, id, 64); }

int main(void) {
  snprintf(soname, sizeof soname, "libnvrtc.so.%d", CUDA_VERSION / 1000);
  char *a = ut_temp_dir("nvrtc-find-a"), *b = ut_temp_dir("nvrtc-find-b"), *c = ut_temp_dir("nvrtc-find-c");
  char path[4096], id[64], id2[64], want[4400], lp[13000], built[4200], dirlib[4200];
  unsetenv("UKERN_NVRTC_LIBRARY");
  make_lib(a, 10);
  make_lib(b, 20);
  /* c holds a directory with the soname's name: not a library. */
  snprintf(dirlib, sizeof dirlib, "%s/%s", c, soname);
  CHECK(mkdir(dirlib, 0700) == 0);

  /* The build's directory is not on this machine: LD_LIBRARY_PATH's first
   * directory holding a regular file, skipping relative, missing and
   * non-file entries. */
  uk__nvrtc_build_library = "/nonexistent-ukern-build/lib64/libnvrtc.so";
  snprintf(lp, sizeof lp, "relative/dir::/nonexistent-ukern-dir;%s:%s:%s", c, a, b);
  setenv("LD_LIBRARY_PATH", lp, 1);
  choose(path, id);
  snprintf(want, sizeof want, "%s/%s", a, soname);
  CHECK_STREQ(path, want);
  CHECK(strncmp(id, "nvrtc-", 6) == 0 && strlen(id) == 6 + 32);

  /* Another file at the path (a new size): another identity. */
  make_lib(a, 11);
  choose(path, id2);
  CHECK_STREQ(path, want);
  CHECK(strlen(id2) == 6 + 32 && strcmp(id, id2) != 0);

  /* The next directory when the first has none. */
  snprintf(lp, sizeof lp, "%s:%s", c, b);
  setenv("LD_LIBRARY_PATH", lp, 1);
  choose(path, id);
  snprintf(want, sizeof want, "%s/%s", b, soname);
  CHECK_STREQ(path, want);
  CHECK(id[0] != '\0');

  /* The build's directory, when it has the file, comes first. */
  snprintf(built, sizeof built, "%s/libnvrtc.so", a);
  uk__nvrtc_build_library = built;
  choose(path, id);
  snprintf(want, sizeof want, "%s/%s", a, soname);
  CHECK_STREQ(path, want);

  /* UKERN_NVRTC_LIBRARY overrides both. */
  snprintf(want, sizeof want, "%s/%s", b, soname);
  setenv("UKERN_NVRTC_LIBRARY", want, 1);
  choose(path, id);
  CHECK_STREQ(path, want);
  CHECK(id[0] != '\0');
  unsetenv("UKERN_NVRTC_LIBRARY");

  /* Nothing in the build's directory or LD_LIBRARY_PATH: the toolkit's or
   * the system's file by its path when this machine has one, else the bare
   * soname with no identity (no memo). */
  uk__nvrtc_build_library = "/nonexistent-ukern-build/libnvrtc.so";
  setenv("LD_LIBRARY_PATH", "/nonexistent-ukern-dir", 1);
  unsetenv("CUDA_HOME");
  unsetenv("CUDA_PATH");
  choose(path, id);
  if (path[0] == '/') {
    struct stat st;
    CHECK(stat(path, &st) == 0 && S_ISREG(st.st_mode));
    CHECK(strstr(path, soname) != NULL && id[0] != '\0');
  } else {
    CHECK_STREQ(path, soname);
    CHECK_STREQ(id, "");
  }
  /* CUDA_HOME's lib64 before the system's directories. */
  char home[4200], lib64[4300];
  snprintf(home, sizeof home, "%s/home", c);
  snprintf(lib64, sizeof lib64, "%s/lib64", home);
  CHECK(mkdir(home, 0700) == 0 && mkdir(lib64, 0700) == 0);
  make_lib(lib64, 5);
  setenv("CUDA_HOME", home, 1);
  choose(path, id);
  snprintf(want, sizeof want, "%s/%s", lib64, soname);
  CHECK_STREQ(path, want);
  CHECK(id[0] != '\0');
  free(a);
  free(b);
  free(c);
  return ut_finish("test_nvrtc_find");
}
