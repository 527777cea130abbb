/* bench_warm_start --trace: one floor child and one ukern child per kind
 * run with the tracing libcuda.so.1 (cuda_trace.c) first on their
 * LD_LIBRARY_PATH; for each, the driver calls between cuInit's return and
 * the result on the host: a table per entry point (count, total, max) and
 * the timeline, with the time spent outside the driver between calls. */
#define _GNU_SOURCE
#include "warm_start_trace.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../warm_start_child.h"

extern char **environ;

static char shim_dir[PATH_MAX], real_path[PATH_MAX];

int ws_trace_setup(const char *exe_dir) {
  char shim[PATH_MAX + 32];
  snprintf(shim_dir, sizeof shim_dir, "%s/cuda-trace", exe_dir);
  snprintf(shim, sizeof shim, "%s/libcuda.so.1", shim_dir);
  if (access(shim, R_OK) != 0) {
    fprintf(stderr, "bench_warm_start --trace: %s not found (build the uk_cuda_trace target)\n", shim);
    return -1;
  }
  /* The driver this process loaded (ukern's dlopen of libcuda.so.1): the
   * one the traced children must forward to. */
  void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (!h) h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  void *f = h ? dlsym(h, "cuInit") : NULL;
  Dl_info info;
  if (!f || !dladdr(f, &info) || !info.dli_fname || !realpath(info.dli_fname, real_path)) {
    fprintf(stderr, "bench_warm_start --trace: cannot find the real libcuda.so.1's path\n");
    return -1;
  }
  printf("\ntrace: driver %s, traced through %s\n", real_path, shim);
  return 0;
}

/* environ with LD_LIBRARY_PATH led by the shim's directory and the trace's
 * variables; strings in `store`, malloc'd array. */
static char **trace_env(const char *trace_file, char store[3][PATH_MAX * 2]) {
  size_t n = 0;
  while (environ[n]) n++;
  char **env = calloc(n + 4, sizeof *env);
  if (!env) return NULL;
  const char *old = getenv("LD_LIBRARY_PATH");
  snprintf(store[0], sizeof store[0], "LD_LIBRARY_PATH=%s%s%s", shim_dir, old && *old ? ":" : "", old ? old : "");
  snprintf(store[1], sizeof store[1], "UK_CUDA_TRACE=%s", trace_file);
  snprintf(store[2], sizeof store[2], "UK_CUDA_TRACE_REAL=%s", real_path);
  size_t k = 0;
  for (size_t j = 0; j < n; j++)
    if (strncmp(environ[j], "LD_LIBRARY_PATH=", 16) && strncmp(environ[j], "UK_CUDA_TRACE", 13)) env[k++] = environ[j];
  for (int j = 0; j < 3; j++) env[k++] = store[j];
  env[k] = NULL;
  return env;
}

typedef struct tcall {
  char name[64];
  double t0, dur; /* us */
} tcall;

/* The "call" lines of a trace file, in order; count in *n. */
static tcall *read_trace(const char *path, int *n) {
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  int cap = 256;
  tcall *v = malloc((size_t)cap * sizeof *v);
  char line[256];
  *n = 0;
  while (v && fgets(line, sizeof line, f)) {
    tcall c;
    int r;
    if (sscanf(line, "call %63s %lf %lf %d", c.name, &c.t0, &c.dur, &r) != 4) continue;
    if (*n == cap) {
      tcall *p = realloc(v, (size_t)(cap *= 2) * sizeof *v);
      if (!p) break;
      v = p;
    }
    v[(*n)++] = c;
  }
  fclose(f);
  return v;
}

typedef struct trow {
  const char *name;
  int count;
  double total, max; /* ms */
} trow;

static int by_total(const void *a, const void *b) {
  const trow *x = a, *y = b;
  return x->total < y->total ? 1 : x->total > y->total ? -1 : 0;
}

/* The table of calls starting in [from, to) (us). */
static void print_table(const tcall *c, int n, double from, double to) {
  trow *rows = calloc((size_t)n + 1, sizeof *rows);
  int nr = 0;
  for (int k = 0; rows && k < n; k++) {
    if (c[k].t0 < from || c[k].t0 >= to) continue;
    int r = 0;
    while (r < nr && strcmp(rows[r].name, c[k].name)) r++;
    if (r == nr) rows[nr++].name = c[k].name;
    rows[r].count++;
    rows[r].total += c[k].dur / 1e3;
    if (c[k].dur / 1e3 > rows[r].max) rows[r].max = c[k].dur / 1e3;
  }
  if (!rows) return;
  qsort(rows, (size_t)nr, sizeof *rows, by_total);
  printf("| driver call | count | total ms | max ms |\n|---|---|---|---|\n");
  for (int r = 0; r < nr; r++)
    printf("| %s | %d | %.4f | %.4f |\n", rows[r].name, rows[r].count, rows[r].total, rows[r].max);
  free(rows);
}

/* Folded run of fast calls, printed when a slow call, a gap or a mark ends it. */
typedef struct fold {
  int n;
  double ms, at;
} fold;

static void flush(fold *f) {
  if (f->n) printf("  %9.3f  %d fast driver calls, %.3f ms in all\n", f->at, f->n, f->ms);
  f->n = 0;
  f->ms = 0;
}

/* Timeline from t_init: calls >= 0.05 ms, other calls folded, time outside
 * the driver >= 0.05 ms, and the child's marks (us readings). */
static void print_timeline(const tcall *c, int n, const double *marks, const char *const *mark_names, int nmarks) {
  double t_init = marks[0], end = marks[nmarks - 1], prev_end = t_init;
  int m = 1;
  fold f = {0, 0, 0};
  printf("\ntimeline (ms from cuInit's return; calls under 0.05 ms folded):\n");
  for (int k = 0; k <= n; k++) {
    double t0 = k < n ? c[k].t0 : end;
    if (k < n && t0 < t_init) continue;
    while (m < nmarks && marks[m] <= t0) {
      if (marks[m] - prev_end >= 50) {
        flush(&f);
        printf("  %9.3f  (outside the driver %.3f ms)\n", (prev_end - t_init) / 1e3, (marks[m] - prev_end) / 1e3);
      }
      flush(&f);
      printf("  %9.3f  == %s\n", (marks[m] - t_init) / 1e3, mark_names[m]);
      if (marks[m] > prev_end) prev_end = marks[m];
      m++;
    }
    if (k == n || t0 > end) break;
    if (t0 - prev_end >= 50) {
      flush(&f);
      printf("  %9.3f  (outside the driver %.3f ms)\n", (prev_end - t_init) / 1e3, (t0 - prev_end) / 1e3);
    }
    if (c[k].dur >= 50) {
      flush(&f);
      printf("  %9.3f  %s %.3f ms\n", (t0 - t_init) / 1e3, c[k].name, c[k].dur / 1e3);
    } else {
      if (!f.n) f.at = (t0 - t_init) / 1e3;
      f.n++;
      f.ms += c[k].dur / 1e3;
    }
    if (t0 + c[k].dur > prev_end) prev_end = t0 + c[k].dur;
  }
  flush(&f);
}

int ws_trace_child(char *const argv[], const char *label, const char *tmpdir) {
  char file[PATH_MAX], store[3][PATH_MAX * 2];
  static int seq;
  snprintf(file, sizeof file, "%s/trace-%d.txt", tmpdir, seq++);
  char **env = trace_env(file, store);
  double t0, t_exit, rep[8];
  int rc = env ? ws_spawn(argv, env, &t0, &t_exit, rep) : -1;
  free(env);
  if (rc != 0) return -1;
  int n = 0;
  tcall *c = read_trace(file, &n);
  if (!c) {
    fprintf(stderr, "bench_warm_start --trace: %s: no trace written to %s\n", label, file);
    return -1;
  }
  double ti = rep[1], tr = rep[2], driver = 0, before = 0;
  int in = 0;
  for (int k = 0; k < n; k++) {
    if (c[k].t0 < ti) before += c[k].dur;
    else if (c[k].t0 < tr) driver += c[k].dur, in++;
  }
  printf("\n### %s: post-cuInit %.3f ms = %.3f ms in %d driver calls + %.3f ms outside the driver "
         "(before: %.3f ms of driver calls, cuInit included; pre-main %.3f ms)%s\n\n",
         label, (tr - ti) / 1e3, driver / 1e3, in, (tr - ti - driver) / 1e3, before / 1e3, (rep[0] - t0) / 1e3,
         rep[7] < 0 ? "" : rep[7] > 0 ? "; NVRTC LOADED" : "; NVRTC not loaded");
  print_table(c, n, ti, tr);
  /* Marks: after cuInit, context created, kernel defined, result (the
   * floor's context and definition marks equal cuInit's: left out). */
  double marks[4] = {ti, rep[5], rep[6], tr};
  const char *names[4] = {"cuInit returned", "uk_context_create returned", "kernel defined", "result on the host"};
  if (rep[5] > ti) {
    print_timeline(c, n, marks, names, 4);
  } else {
    double m2[2] = {ti, tr};
    const char *n2[2] = {names[0], names[3]};
    print_timeline(c, n, m2, n2, 2);
  }
  free(c);
  return 0;
}
