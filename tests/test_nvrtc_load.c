/* uk_nvrtc_load: NVRTC loaded ahead of the first compile, once per process,
 * and a library that cannot be loaded named in the error. Cases that need a
 * fresh process (nothing loaded yet) run in forked children. */
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/nvrtc_lib.h"
#include "testutil.h"

static const char code[] = "extern \"C\" __global__ void preloaded(int *p) { *p = 77; }\n";

/* Child exit codes: 0 as wanted; 1 loaded before the call; 2 not loaded
 * after it; 3 a second call failed; 4 the compile after it failed or did
 * not compile; 5 a missing library not refused as documented; 77 no NVRTC
 * on this machine. */
static int child(int missing) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    if (missing) {
      setenv("UKERN_NVRTC_LIBRARY", "/nonexistent-ukern-dir/libnvrtc.so.99", 1);
      uk_status st = uk_nvrtc_load();
      const char *msg = uk_last_error();
      int named = msg && strstr(msg, "/nonexistent-ukern-dir/libnvrtc.so.99") && strstr(msg, "UKERN_NVRTC_LIBRARY");
      /* The outcome is kept: a second call says the same. */
      int again = uk_nvrtc_load() == UK_ERR_COMPILE && !uk__nvrtc_loaded();
      _exit(st == UK_ERR_COMPILE && named && again ? 0 : 5);
    }
    if (uk__nvrtc_loaded()) _exit(1);
    uk_status st = uk_nvrtc_load();
    if (st != UK_OK) _exit(77);
    if (!uk__nvrtc_loaded()) _exit(2);
    if (uk_nvrtc_load() != UK_OK) _exit(3);
    uk_options o;
    memset(&o, 0, sizeof o);
    o.disable_disk_cache = 1;
    o.arch = 90;
    uk_context *ctx = NULL;
    uk_module *m = NULL;
    uk_cache_stats cs;
    memset(&cs, 0, sizeof cs);
    int ok = uk_context_create(&o, &ctx) == UK_OK && uk_module_from_source(ctx, code, NULL, &m) == UK_OK &&
             uk_context_cache_stats(ctx, &cs) == UK_OK && cs.compiles == 1;
    uk_module_destroy(m);
    uk_context_destroy(ctx);
    _exit(ok ? 0 : 4);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

int main(void) {
  int r = child(0);
  if (r == 77) {
    printf("SKIP: NVRTC cannot be loaded on this machine\n");
    return 77;
  }
  CHECK(r == 0);
  if (r) fprintf(stderr, "  preload child exited %d\n", r);
  r = child(1);
  CHECK(r == 0);
  if (r) fprintf(stderr, "  missing-library child exited %d\n", r);
  /* In this process too: loaded after the call, and a compile still works. */
  CHECK_OK(uk_nvrtc_load());
  CHECK(uk__nvrtc_loaded());
  return ut_finish("test_nvrtc_load");
}
