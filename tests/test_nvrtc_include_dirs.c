/* The toolkit include directories (uk__nvrtc_include_dirs): the candidates
 * that are directories, in order, each with its cccl/ subdirectory, a path
 * or a directory named twice (the same string, or a symlink to it) once;
 * whether the toolkit's headers are in them is a separate, lazy question
 * (uk__nvrtc_headers_missing) that a disk hit never asks. No NVRTC needed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/compile.h"
#include "testutil.h"

int main(void) {
  char *tmp = ut_temp_dir("incdirs");
  char x[4096], inc[4096], cccl[4096], y[4096], file[4096];
  snprintf(x, sizeof x, "%s/x", tmp);
  snprintf(inc, sizeof inc, "%s/x/include", tmp);
  snprintf(cccl, sizeof cccl, "%s/x/include/cccl", tmp);
  snprintf(y, sizeof y, "%s/y", tmp);
  snprintf(file, sizeof file, "%s/plain-file", tmp);
  CHECK(mkdir(x, 0700) == 0 && mkdir(inc, 0700) == 0 && mkdir(cccl, 0700) == 0);
  CHECK(symlink(x, y) == 0);
  FILE *f = fopen(file, "w");
  CHECK(f != NULL);
  if (f) fclose(f);
  setenv("UKERN_CUDA_INCLUDE", inc, 1); /* first, with its cccl/ */
  setenv("CUDA_HOME", y, 1);            /* y/include: the same directory through a link */
  setenv("CUDA_PATH", file, 1);         /* plain-file/include: not a directory */

  const char *const *dirs = NULL;
  int n = 0;
  CHECK_OK(uk__nvrtc_include_dirs(&dirs, &n));
  CHECK(n >= 2);
  if (n >= 2) {
    CHECK_STREQ(dirs[0], inc);
    CHECK_STREQ(dirs[1], cccl);
  }
  for (int k = 0; k < n; k++) {
    struct stat st;
    CHECK(stat(dirs[k], &st) == 0 && S_ISDIR(st.st_mode));
    CHECK(strncmp(dirs[k], y, strlen(y)) != 0 && strncmp(dirs[k], file, strlen(file)) != 0);
    for (int j = 0; j < k; j++) CHECK(strcmp(dirs[j], dirs[k]) != 0);
  }
  /* The same answer again (found once per process). */
  const char *const *again = NULL;
  int m = 0;
  CHECK_OK(uk__nvrtc_include_dirs(&again, &m));
  CHECK(again == dirs && m == n);

  /* The first directory has neither header: the answer depends on the
   * others (the toolkit's, when installed), and when missing names what and
   * where it looked, each candidate once. */
  const char *missing = uk__nvrtc_headers_missing();
  int fp16 = 0, cub = 0;
  for (int k = 0; k < n; k++) {
    char p[4200];
    struct stat st;
    snprintf(p, sizeof p, "%s/cuda_fp16.h", dirs[k]);
    fp16 = fp16 || (stat(p, &st) == 0 && S_ISREG(st.st_mode));
    snprintf(p, sizeof p, "%s/cub", dirs[k]);
    cub = cub || (stat(p, &st) == 0 && S_ISDIR(st.st_mode));
  }
  CHECK((missing == NULL) == (fp16 && cub));
  if (missing) {
    CHECK_CONTAINS(missing, "looked in: ");
    CHECK_CONTAINS(missing, inc);
    const char *at = strstr(missing, inc);
    CHECK(at && !strstr(at + strlen(inc), inc)); /* once */
  }
  CHECK(uk__nvrtc_headers_missing() == missing);

  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
  CHECK(system(cmd) == 0);
  free(tmp);
  return ut_finish("test_nvrtc_include_dirs");
}
