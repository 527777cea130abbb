/* A disk hit never loads NVRTC (issue 14): the first compile records NVRTC's
 * version for its library file in the cache directory (a .ukn note); a new
 * process then builds the key from that note and loads from disk without
 * dlopen'ing NVRTC. A changed note only changes the key (a miss that
 * compiles and rewrites it); a note that is not the user's private file is
 * ignored (NVRTC is loaded to ask). Every case runs in a fresh forked
 * process: the version and the library table are per process. */
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/nvrtc_lib.h"
#include "testutil.h"

static const char code[] = "extern \"C\" __global__ void lazy(int *p) { *p = 4242; }\n";

enum { EXPECT_COMPILE = 1, EXPECT_HIT = 2 };

/* In a child: compile in a new context; exit 0 when the stats and whether
 * NVRTC got loaded are as expected. */
static void run_case(const char *dir, int expect, int expect_loaded, const char *what) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    uk_options o;
    memset(&o, 0, sizeof o);
    o.arch = 90;
    o.cache_dir = dir;
    uk_context *ctx = NULL;
    uk_module *m = NULL;
    uk_cache_stats st;
    if (uk_context_create(&o, &ctx) != UK_OK || uk_module_from_source(ctx, code, NULL, &m) != UK_OK ||
        uk_context_cache_stats(ctx, &st) != UK_OK) {
      fprintf(stderr, "  %s: %s\n", what, uk_last_error());
      _exit(3);
    }
    int ok = expect == EXPECT_COMPILE ? st.compiles == 1 && st.disk_hits == 0 : st.compiles == 0 && st.disk_hits == 1;
    if (!ok || uk__nvrtc_loaded() != expect_loaded)
      fprintf(stderr, "  %s: compiles %llu, disk hits %llu, NVRTC loaded %d\n", what,
              (unsigned long long)st.compiles, (unsigned long long)st.disk_hits, uk__nvrtc_loaded());
    uk_module_destroy(m);
    uk_context_destroy(ctx);
    _exit(ok && uk__nvrtc_loaded() == expect_loaded ? 0 : 1);
  }
  int status = 0;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The path of the one .ukn note in dir ("" when none). */
static void note_path(const char *dir, char *out, size_t n) {
  out[0] = '\0';
  DIR *d = opendir(dir);
  struct dirent *de;
  int count = 0;
  while (d && (de = readdir(d)) != NULL)
    if (strstr(de->d_name, ".ukn")) {
      snprintf(out, n, "%s/%s", dir, de->d_name);
      count++;
    }
  if (d) closedir(d);
  CHECK(count == 1);
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (!f) return;
  fputs(text, f);
  fclose(f);
}

static void read_text(const char *path, char *buf, size_t n) {
  buf[0] = '\0';
  FILE *f = fopen(path, "r");
  if (!f) return;
  size_t got = fread(buf, 1, n - 1, f);
  buf[got] = '\0';
  fclose(f);
}

int main(void) {
  ut_seed((uint64_t)getpid());
  char *dir = ut_temp_dir("lazy");
  /* Without NVRTC at all the first case cannot run: skip. */
  fflush(NULL);
  pid_t probe = fork();
  if (probe == 0) _exit(uk__nvrtc_load() == UK_OK ? 0 : 77);
  int status = 0;
  waitpid(probe, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    printf("SKIP: NVRTC cannot be loaded here\n");
    return 77;
  }
  run_case(dir, EXPECT_COMPILE, 1, "first compile");
  char note[4200], text[512], real[512];
  note_path(dir, note, sizeof note);
  read_text(note, real, sizeof real);
  CHECK(atoi(real) >= 11000 && strchr(real, '\n') && strstr(real, " 90 ") && real[strlen(real) - 1] == '\n');
  run_case(dir, EXPECT_HIT, 0, "disk hit in a new process");
  run_case(dir, EXPECT_HIT, 0, "again");

  /* Another version in the note: another key, so a miss; the compile puts
   * the real version back. */
  char other[600];
  snprintf(other, sizeof other, "99990\n%s", strchr(real, '\n') + 1); /* same architectures */
  write_text(note, other);
  run_case(dir, EXPECT_COMPILE, 1, "note with another version");
  read_text(note, text, sizeof text);
  CHECK_STREQ(text, real);
  run_case(dir, EXPECT_HIT, 0, "note restored");

  /* A note others can write is not read: NVRTC is loaded for the version
   * (the key is the same, so still a hit). Garbage likewise. */
  CHECK(chmod(note, 0666) == 0);
  run_case(dir, EXPECT_HIT, 1, "world-writable note");
  CHECK(chmod(note, 0600) == 0);
  write_text(note, "not a number\n");
  run_case(dir, EXPECT_HIT, 1, "garbage note");
  free(dir);
  return ut_finish("test_nvrtc_lazy");
}
