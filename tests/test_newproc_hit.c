/* A new process's first disk hit with an explicit module arch (issue 11's
 * new-process rows): the arch is checked against NVRTC's list from the
 * memo, read through the context's already-checked cache, and the hit
 * never loads NVRTC. Each case runs in a fresh forked process (the memo
 * is read once per process). */
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/nvrtc_lib.h"
#include "testutil.h"

static const char code[] = "extern \"C\" __global__ void newproc_hit(int *p) { *p = 4242; }\n";

/* The memo of the NVRTC library this process would load: <dir>/<id>.ukn. */
static void note_path(const char *dir, char *out, size_t n) {
  char lib[4096], id[64];
  uk__nvrtc_choose_library(lib, sizeof lib, id, sizeof id);
  snprintf(out, n, "%s/%s.ukn", dir, id);
}

/* Child: a context on dir (arch 0, as with a GPU), then the module with
 * uk_module_options.arch 90 (or arch_name "sm_90"). fill: the first run,
 * which compiles (writing the entry and the memo). Exit codes: 0 as
 * wanted; 1 wrong cache counts; 2 NVRTC loaded state not `want_loaded`;
 * 3 untrusted count not `want_untrusted`; 9 a call failed; 77 no NVRTC. */
static int run_case(const char *dir, int fill, int by_name, int want_loaded, int want_untrusted) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    if (fill && uk__nvrtc_load() != UK_OK) _exit(77);
    uk_options o;
    memset(&o, 0, sizeof o);
    o.cache_dir = dir;
    uk_context *ctx = NULL;
    uk_module *m = NULL;
    uk_module_options mo;
    memset(&mo, 0, sizeof mo);
    if (by_name) mo.arch_name = "sm_90";
    else mo.arch = 90;
    if (uk_context_create(&o, &ctx) != UK_OK || uk_module_from_source(ctx, code, &mo, &m) != UK_OK) _exit(9);
    uk_cache_stats st;
    if (uk_context_cache_stats(ctx, &st) != UK_OK) _exit(9);
    if (st.disk_hits != (fill ? 0u : 1u) || st.compiles != (fill ? 1u : 0u)) _exit(1);
    if (uk__nvrtc_loaded() != want_loaded) _exit(2);
    if ((st.untrusted > 0) != want_untrusted) _exit(3);
    const void *image = NULL;
    size_t bytes = 0;
    if (uk_module_image(m, &image, &bytes) != UK_OK || !memmem(image, bytes, "newproc_hit", 11)) _exit(9);
    uk_module_destroy(m);
    uk_context_destroy(ctx);
    _exit(0);
  }
  int status = 0;
  if (pid <= 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

int main(void) {
  char *dir = ut_temp_dir("newproc-hit");
  /* The entry and the memo come from a compile: without NVRTC this cannot run. */
  int filled = run_case(dir, 1, 0, 1, 0);
  if (filled == 77) {
    printf("SKIP: NVRTC cannot be loaded here\n");
    free(dir);
    return 77;
  }
  CHECK(filled == 0);
  char note[4200];
  struct stat nst;
  note_path(dir, note, sizeof note);
  CHECK(stat(note, &nst) == 0 && S_ISREG(nst.st_mode));

  /* A disk hit with an explicit arch: NVRTC stays unloaded. */
  CHECK(run_case(dir, 0, 0, 0, 0) == 0);
  CHECK(run_case(dir, 0, 1, 0, 0) == 0);
  /* A memo others can write is refused by the context's cache (counted as
   * untrusted there: the read went through it), and NVRTC answers. */
  CHECK(chmod(note, 0666) == 0);
  CHECK(run_case(dir, 0, 0, 1, 1) == 0);
  CHECK(chmod(note, 0600) == 0);
  CHECK(run_case(dir, 0, 0, 0, 0) == 0);
  free(dir);
  return ut_finish("test_newproc_hit");
}
