/* Warm start on a CPU machine (issue 14): from process start to the compiled
 * image in hand, with the disk cache warm, through the public API, against
 * the same process shape that only reads the entry file. No GPU: contexts
 * use uk_options.arch, so this measures what ukern does around a disk hit
 * (loading libraries, the key, the lookup), not cuModuleLoadData.
 *
 *   disk_hit_start [runs]            prints a table of medians
 *   disk_hit_start --child DIR KIND  one measured process (KIND: raw, ew, file)
 *
 * Each child prints the CLOCK_MONOTONIC time at which it holds the image; the
 * parent took its own reading just before posix_spawn, so the difference
 * covers exec, dynamic loading and the library's work. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ukern/ukern.h"

extern char **environ;

static const char raw_src[] =
    "extern \"C\" __global__ void saxpy(float a, const float* x, float* y, long long n) {\n"
    "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i] + 17.0f;\n"
    "}\n";

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int fail(const char *what, uk_status s) {
  fprintf(stderr, "disk_hit_start: %s: %s: %s\n", what, uk_status_name(s), uk_last_error());
  return 1;
}

/* One kernel through the public API in a new context; prints
 * "<time image in hand> <disk hits> <compiles>". */
static int child(const char *dir, const char *kind) {
  if (!strcmp(kind, "file")) { /* the floor: read the entry file that a hit reads */
    char path[4200];
    snprintf(path, sizeof path, "%s/entry", dir);
    FILE *f = fopen(path, "rb");
    char buf[1 << 16];
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    printf("%.3f 1 0 %zu\n", now_us(), n);
    return 0;
  }
  uk_options o;
  memset(&o, 0, sizeof o);
  o.cache_dir = dir;
  o.arch = 90;
  uk_context *ctx = NULL;
  uk_status s = uk_context_create(&o, &ctx);
  if (s != UK_OK) return fail("context", s);
  size_t bytes = 0;
  if (!strcmp(kind, "raw")) {
    uk_module *m = NULL;
    const void *img = NULL;
    if ((s = uk_module_from_source(ctx, raw_src, NULL, &m)) != UK_OK) return fail("module", s);
    if ((s = uk_module_image(m, &img, &bytes)) != UK_OK) return fail("image", s);
    uk_module_destroy(m);
  } else {
    uk_elementwise *k = NULL;
    if ((s = uk_elementwise_create(ctx, "T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff", NULL, &k)) != UK_OK)
      return fail("elementwise", s);
    uk_array x, y, z;
    int64_t shape[1] = {1000003};
    uk_array_init(&x, 0x10000, UK_FLOAT32, 1, shape);
    uk_array_init(&y, 0x20000, UK_FLOAT32, 1, shape);
    uk_array_init(&z, 0x30000, UK_FLOAT32, 1, shape);
    uk_arg in[2] = {uk_arg_array(&x), uk_arg_array(&y)};
    if ((s = uk_elementwise_precompile(k, in, 2, &z, 1, NULL)) != UK_OK) return fail("precompile", s);
    uk_elementwise_destroy(k);
  }
  double t = now_us();
  uk_cache_stats st;
  uk_context_cache_stats(ctx, &st);
  printf("%.3f %llu %llu %zu\n", t, (unsigned long long)st.disk_hits, (unsigned long long)st.compiles, bytes);
  uk_context_destroy(ctx);
  return 0;
}

/* Runs one child; its start-to-image time in ms, -1 on failure. */
static double spawn_child(const char *self, const char *dir, const char *kind, int *hit) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  char *argv[] = {(char *)self, "--child", (char *)dir, (char *)kind, NULL};
  pid_t pid;
  double t0 = now_us();
  int rc = posix_spawn(&pid, self, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  char out[256] = "";
  ssize_t n = rc == 0 ? read(fds[0], out, sizeof out - 1) : -1;
  close(fds[0]);
  int status = 0;
  if (rc == 0) waitpid(pid, &status, 0);
  double t1 = 0;
  unsigned long long hits = 0, compiles = 0;
  if (n <= 0 || sscanf(out, "%lf %llu %llu", &t1, &hits, &compiles) != 3) return -1;
  *hit = hits == 1 && compiles == 0;
  return (t1 - t0) / 1000.0;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc == 4 && !strcmp(argv[1], "--child")) return child(argv[2], argv[3]);
  int runs = argc > 1 ? atoi(argv[1]) : 15;
  if (runs < 1 || runs > 1000) runs = 15;
  char dir[] = "/tmp/ukern-disk-hit-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) return 1;
  self[len] = '\0';
  const char *kinds[] = {"file", "raw", "ew"};
  int hit = 0;
  /* Warm the cache (and the entry the floor reads: a copy of one entry's size). */
  if (spawn_child(self, dir, "raw", &hit) < 0 || spawn_child(self, dir, "ew", &hit) < 0) return 1;
  char cmd[4300];
  snprintf(cmd, sizeof cmd, "cp \"$(ls %s/*.ukc | head -1)\" %s/entry", dir, dir);
  if (system(cmd) != 0) return 1;
  printf("%-6s %10s %10s %10s  (ms, process start to image in hand, %d runs)\n", "kind", "median", "min", "max", runs);
  for (int k = 0; k < 3; k++) {
    double *t = calloc((size_t)runs, sizeof *t);
    int hits = 0;
    for (int r = 0; r < runs; r++) {
      t[r] = spawn_child(self, dir, kinds[k], &hit);
      hits += hit;
      if (t[r] < 0) return 1;
    }
    qsort(t, (size_t)runs, sizeof *t, cmp);
    printf("%-6s %10.2f %10.2f %10.2f  disk hits %d/%d\n", kinds[k], t[runs / 2], t[0], t[runs - 1], hits, runs);
    free(t);
  }
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  return system(cmd) == 0 ? 0 : 1;
}
