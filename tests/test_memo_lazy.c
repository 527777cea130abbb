/* The NVRTC version memo (nvrtc_lib.h) is read when the version is first
 * needed, not when a context is created: uk_context_create does no I/O for
 * it. Each case runs in a fresh forked process (the version is per process):
 * a context is created, the memo is then rewritten with another version,
 * and the first key must see the rewritten one (a memo read at creation
 * would have seen the old). Also: the memo of the context that compiles is
 * the one read, a second context's directory is consulted when the first
 * has no memo, and a memo that is not the user's private file is still
 * refused at the later read (NVRTC is loaded to ask). */
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/compile.h"
#include "runtime/nvrtc_lib.h"
#include "testutil.h"

static const char code[] = "extern \"C\" __global__ void memo_lazy(int *p) { *p = 77; }\n";

/* The path of the one .ukn note in dir ("" when none). */
static void note_path(const char *dir, char *out, size_t n) {
  out[0] = '\0';
  DIR *d = opendir(dir);
  struct dirent *de;
  while (d && (de = readdir(d)) != NULL)
    if (strstr(de->d_name, ".ukn")) snprintf(out, n, "%s/%s", dir, de->d_name);
  if (d) closedir(d);
}

static void write_text(const char *path, const char *text) {
  char tmp[4300];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) return;
  fputs(text, f);
  fclose(f);
  chmod(tmp, 0600);
  rename(tmp, path);
}

static int wait_ok(pid_t pid) {
  int status = 0;
  return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Child: contexts on dirs[0..n), then `after` written to note, then the
 * version NVRTC is keyed on; exits 0 when it is `want` and NVRTC's loaded
 * state is `want_loaded`. */
static int version_case(const char *const *dirs, int n, const char *note, const char *after, int want,
                        int want_loaded, int mode) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    uk_context *ctx[2] = {NULL, NULL};
    for (int k = 0; k < n; k++) {
      uk_options o;
      memset(&o, 0, sizeof o);
      o.cache_dir = dirs[k];
      if (uk_context_create(&o, &ctx[k]) != UK_OK) _exit(3);
    }
    if (after) write_text(note, after);
    if (mode == 1) chmod(note, 0666);
    int v = 0;
    if (uk__nvrtc_version(&v) != UK_OK) _exit(4);
    if (v != want || uk__nvrtc_loaded() != want_loaded) {
      fprintf(stderr, "  version %d (want %d), NVRTC loaded %d (want %d)\n", v, want, uk__nvrtc_loaded(),
              want_loaded);
      _exit(1);
    }
    for (int k = 0; k < n; k++) uk_context_destroy(ctx[k]);
    _exit(0);
  }
  return wait_ok(pid);
}

int main(void) {
  ut_seed((uint64_t)getpid());
  char *dir = ut_temp_dir("memo");
  char *empty = ut_temp_dir("memo-none");
  /* The memo comes from a compile: without NVRTC this cannot run. */
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    if (uk__nvrtc_load() != UK_OK) _exit(77);
    uk_options o = {.arch = 90, .cache_dir = dir}; /* the compile writes the memo */
    uk_context *ctx = NULL;
    uk_module *m = NULL;
    _exit(uk_context_create(&o, &ctx) == UK_OK && uk_module_from_source(ctx, code, NULL, &m) == UK_OK ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
    printf("SKIP: NVRTC cannot be loaded here\n");
    return 77;
  }
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  char note[4200], real[512], other[600];
  note_path(dir, note, sizeof note);
  CHECK(note[0] != '\0');
  FILE *f = fopen(note, "r");
  size_t got = f ? fread(real, 1, sizeof real - 1, f) : 0;
  real[got] = '\0';
  if (f) fclose(f);
  int real_version = atoi(real);
  CHECK(real_version >= 11000 && strchr(real, '\n'));
  if (!strchr(real, '\n')) return ut_finish("test_memo_lazy");
  snprintf(other, sizeof other, "88880\n%s", strchr(real, '\n') + 1);

  const char *one[] = {dir}, *two[] = {empty, dir};
  /* Rewritten after the context was created: the first key sees it. */
  CHECK(version_case(one, 1, note, other, 88880, 0, 0));
  /* As it is: the real version, NVRTC not loaded. */
  write_text(note, real);
  CHECK(version_case(one, 1, note, NULL, real_version, 0, 0));
  /* The first context's directory has no memo: the second's answers. */
  CHECK(version_case(two, 2, note, other, 88880, 0, 0));
  /* Made writable by others after creation: refused at the read. */
  CHECK(version_case(one, 1, note, NULL, real_version, 1, 1));
  chmod(note, 0600);
  write_text(note, real);
  free(dir);
  free(empty);
  return ut_finish("test_memo_lazy");
}
