/* What NVRTC spends on a new elementwise specialisation, and which part of
 * it ukern's device headers and options cause (issue 14). No GPU needed.
 *
 * One process compiles, round after round, one new text per case (the kernel
 * name and a constant change every compile, so neither NVRTC's own caches
 * nor ours can answer); the cases alternate within each round, in a rotated
 * order, so that load from other processes falls on all of them alike. It
 * reports each case's median, and the median over rounds of its ratio to the
 * bare kernel compiled in the same round.
 *
 * Cases: a bare trivial kernel (NVRTC's floor for any new kernel); ukern's
 * generated source for float32 `z = x * y + c` contiguous (vectorised),
 * strided and float16 / complex64, with ukern's program (its in-memory headers,
 * the toolkit -I directories, its options); and the float32 kernel with
 * parts of the device headers added or inlined, without -minimal, with
 * automatic PCH.
 *
 *   ew_compile_floor [--rounds N] [--arch XY] [--phases] [--only SUBSTRING] [--try OPTION]...
 *
 * --try adds a case: the float32 kernel with one more NVRTC option (kept by
 * --only, which picks the fixed cases whose label contains SUBSTRING).
 *
 * --phases adds NVRTC's --time and reports its front end / NVVM / PTX
 * (ptxas included) medians per case (NVRTC reports whole ms). */
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/embedded.h"
#include "../benchutil.h"
#include "runtime/compile.h"
#include "runtime/std_headers.h"
#include "ukern/ukern.h"

enum { MAX_CASES = 40, MAX_ROUNDS = 400, MAX_OPTS = 48 };

typedef enum { SRC_BARE, SRC_EW } src_kind;
/* How the generated source is changed before compiling. */
typedef enum { TX_NONE, TX_INLINE_CORE, TX_VEC_CORE, TX_ADD_HALF, TX_ADD_COMPLEX, TX_WHOLE_HALF } transform;

typedef struct {
  const char *label;
  src_kind src;
  uk_dtype dtype; /* SRC_EW */
  int strided;    /* SRC_EW: a transposed 3-d operand (the index math) */
  transform tx;
  int ukern_program; /* ukern's in-memory headers and -I directories */
  int ukern_options; /* ukern's options for the call (-minimal where it holds) */
  const char *extra; /* one more option, or NULL */
  double ms[MAX_ROUNDS], cpu[MAX_ROUNDS], ratio[MAX_ROUNDS], phase[3][MAX_ROUNDS];
  double first_ms;
  int n;
} fcase;

static int g_arch = 90;
static int g_phases;
static char g_time_file[64];

/* ------------------------------------------------------------------------ */
/* Sources                                                                   */
/* ------------------------------------------------------------------------ */

static char *bare_source(int seq) {
  char *s = malloc(256);
  if (s)
    snprintf(s, 256, "extern \"C\" __global__ void bare_%d(float *p) { p[threadIdx.x] = p[threadIdx.x] * %d.5f; }\n",
             seq, seq);
  return s;
}

/* ukern's source and options for `z = x * y + c` on the dtype (fake device
 * pointers, 16-byte aligned: nothing is dereferenced). */
static char *ew_source(uk_context *ctx, uk_dtype t, int strided, int seq, char ***opts) {
  char op[96], name[32];
  snprintf(op, sizeof op, "z = x * y + (T)(%d.5f)", seq);
  snprintf(name, sizeof name, "ew_%d", seq);
  uk_elementwise *k = NULL;
  char *src = NULL;
  bu_check(uk_elementwise_create(ctx, "T x, T y", "T z", op, name, NULL, &k), "create");
  uk_array x, y, z;
  const int64_t flat[1] = {100003}, cube[3] = {37, 41, 43};
  uk_array_init(&x, 0x100000000000ull, t, strided ? 3 : 1, strided ? cube : flat);
  uk_array_init(&y, 0x200000000000ull, t, strided ? 3 : 1, strided ? cube : flat);
  uk_array_init(&z, 0x300000000000ull, t, strided ? 3 : 1, strided ? cube : flat);
  if (strided) { /* y: a (43, 41, 37) array seen with axes 0 and 2 swapped */
    int64_t e = y.strides[2];
    y.strides[0] = e;
    y.strides[1] = 37 * e;
    y.strides[2] = 41 * 37 * e;
  }
  uk_arg in[2] = {uk_arg_array(&x), uk_arg_array(&y)};
  uk_launch l = {0, -1, 0};
  bu_check(uk_elementwise_source(k, in, 2, &z, 1, &l, &src), "source");
  bu_check(uk_elementwise_nvrtc_options(k, in, 2, &z, 1, &l, opts), "options");
  uk_elementwise_destroy(k);
  return src;
}

/* `text` with the first `what` replaced by `with` (a new string). */
static char *replace(const char *text, const char *what, const char *with) {
  const char *at = strstr(text, what);
  if (!at) return NULL;
  size_t a = (size_t)(at - text), w = strlen(what), n = strlen(with), t = strlen(text);
  char *s = malloc(t - w + n + 1);
  if (!s) return NULL;
  memcpy(s, text, a);
  memcpy(s + a, with, n);
  memcpy(s + a + n, at + w, t - a - w + 1);
  return s;
}

/* The part of ew_core.cuh between two markers, inside namespace ukern. */
static char *core_slice(const char *from, const char *to) {
  const uk__embedded_file *f = uk__embedded_find("ukern/ew_core.cuh");
  const char *a = f ? strstr(f->data, from) : NULL, *b = a ? strstr(a, to) : NULL;
  if (!b) return NULL;
  size_t n = (size_t)(b - a);
  char *s = malloc(n + 64);
  if (s) snprintf(s, n + 64, "namespace ukern {\n%.*s}\n", (int)n, a);
  return s;
}

static char *apply(transform tx, char *src) {
  static const char *inc = "#include <ukern/ew_core.cuh>";
  char *out = NULL, *body = NULL;
  switch (tx) {
  case TX_NONE: return src;
  case TX_INLINE_CORE: {
    const uk__embedded_file *f = uk__embedded_find("ukern/ew_core.cuh");
    out = f ? replace(src, inc, f->data) : NULL;
    if (out) {
      char *once = strstr(out, "#pragma once");
      if (once) memcpy(once, "//     once", 12 - 1);
    }
    break;
  }
  case TX_VEC_CORE:
    if ((body = core_slice("namespace detail {", "// Shared-memory storage"))) out = replace(src, inc, body);
    break;
  case TX_ADD_HALF: out = replace(src, inc, "#include <ukern/ew_core.cuh>\n#include <ukern/half.cuh>"); break;
  case TX_ADD_COMPLEX: out = replace(src, inc, "#include <ukern/complex.cuh>\n#include <ukern/ew_core.cuh>"); break;
  case TX_WHOLE_HALF: /* both 16-bit types, as before UKERN_HALF_ONLY_* */
    out = replace(src, "#define UKERN_HALF_ONLY_F16\n", "");
    if (!out) out = replace(src, "#define UKERN_HALF_ONLY_BF16\n", "");
    break;
  }
  free(body);
  free(src);
  if (!out) {
    fprintf(stderr, "ew_compile_floor: the generated source changed shape (transform %d)\n", (int)tx);
    exit(1);
  }
  return out;
}

/* ------------------------------------------------------------------------ */
/* One compile                                                               */
/* ------------------------------------------------------------------------ */

/* NVRTC's --time file: the sum of each phase over its rows. */
static void read_phases(double ph[3]) {
  FILE *f = fopen(g_time_file, "r");
  ph[0] = ph[1] = ph[2] = 0;
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    char *c1 = strchr(line, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
    if (!c2) continue;
    double v = atof(c2 + 1);
    if (strstr(line, "Frontend")) ph[0] += v;
    else if (strstr(line, "NVVM")) ph[1] += v;
    else if (strstr(line, "PTX")) ph[2] += v;
  }
  fclose(f);
  unlink(g_time_file);
}

static double cpu_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Compiles case c's text number seq; returns the wall time of
 * nvrtcCompileProgram (ms) and its CPU time in *cpu (the process's: NVRTC's
 * threads included). */
static double compile_case(uk_context *ctx, const fcase *c, int seq, double ph[3], double *cpu) {
  char **uopts = NULL;
  char *src = c->src == SRC_BARE ? bare_source(seq) : apply(c->tx, ew_source(ctx, c->dtype, c->strided, seq, &uopts));
  const char *opts[MAX_OPTS];
  char arch[32], incs[16][1024], timeopt[96];
  int no = 0, nh = 0;
  snprintf(arch, sizeof arch, "-arch=sm_%d", g_arch);
  opts[no++] = arch;
  const char *hsrc[64], *hname[64];
  if (c->ukern_program) { /* as nvrtc.c builds the program */
    const char *const *dirs = NULL;
    int nd = 0;
    if (uk__nvrtc_include_dirs(&dirs, &nd) == UK_OK)
      for (int k = 0; k < nd && k < 16; k++) {
        snprintf(incs[k], sizeof incs[k], "-I%s", dirs[k]);
        opts[no++] = incs[k];
      }
    for (int k = 0; k < uk__embedded_header_count && nh < 64; k++, nh++) {
      hsrc[nh] = uk__embedded_headers[k].data;
      hname[nh] = uk__embedded_headers[k].name;
    }
    const char *const *sn = NULL, *const *st = NULL;
    int ns = 0;
    uk__toolkit tk;
    uk__nvrtc_toolkit(&tk);
    uk__std_headers(&tk, &sn, &st, &ns);
    for (int k = 0; k < ns && nh < 64; k++, nh++) {
      hsrc[nh] = st[k];
      hname[nh] = sn[k];
    }
  } else if (c->src == SRC_EW) { /* the headers, without the rest */
    for (int k = 0; k < uk__embedded_header_count && nh < 64; k++, nh++) {
      hsrc[nh] = uk__embedded_headers[k].data;
      hname[nh] = uk__embedded_headers[k].name;
    }
  }
  for (int k = 0; c->ukern_options && uopts && uopts[k] && no < MAX_OPTS - 3; k++) opts[no++] = uopts[k];
  if (c->extra) opts[no++] = c->extra;
  if (g_phases) {
    snprintf(timeopt, sizeof timeopt, "--time=%s", g_time_file);
    opts[no++] = timeopt;
  }
  nvrtcProgram p;
  if (nvrtcCreateProgram(&p, src, "ew_floor.cu", nh, hsrc, hname) != NVRTC_SUCCESS) {
    fprintf(stderr, "nvrtcCreateProgram failed\n");
    exit(1);
  }
  double c0 = cpu_ms(), t0 = bu_now_us();
  nvrtcResult r = nvrtcCompileProgram(p, no, opts);
  double ms = (bu_now_us() - t0) / 1000.0;
  *cpu = cpu_ms() - c0;
  size_t n = 0;
  if (r == NVRTC_SUCCESS && nvrtcGetCUBINSize(p, &n) == NVRTC_SUCCESS && n > 0) {
    char *img = malloc(n); /* as ukern takes the cubin */
    if (img) nvrtcGetCUBIN(p, img);
    free(img);
  }
  if (r != NVRTC_SUCCESS) {
    size_t ln = 0;
    nvrtcGetProgramLogSize(p, &ln);
    char *log = calloc(ln + 1, 1);
    if (log) nvrtcGetProgramLog(p, log);
    fprintf(stderr, "case '%s' failed: %s\n%s\n%s\n", c->label, nvrtcGetErrorString(r), log ? log : "", src);
    exit(1);
  }
  nvrtcDestroyProgram(&p);
  if (g_phases) read_phases(ph);
  free(src);
  uk_free(uopts);
  return ms;
}

/* ------------------------------------------------------------------------ */
/* Rounds                                                                    */
/* ------------------------------------------------------------------------ */

static double loadavg(void) {
  double l = -1;
  FILE *f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fscanf(f, "%lf", &l) != 1) l = -1;
    fclose(f);
  }
  return l;
}

int main(int argc, char **argv) {
  int rounds = 15;
  const char *only = NULL;
  static fcase all[MAX_CASES] = {
      {"bare kernel, -arch only", SRC_BARE, 0, 0, TX_NONE, 0, 0, NULL},
      {"bare kernel, -minimal", SRC_BARE, 0, 0, TX_NONE, 0, 0, "-minimal"},
      {"f32 contiguous, ukern as is", SRC_EW, UK_FLOAT32, 0, TX_NONE, 1, 1, NULL},
      {"f32 contiguous, no -minimal", SRC_EW, UK_FLOAT32, 0, TX_NONE, 1, 0, NULL},
      {"f32 contiguous, bare program (no -I, no std headers)", SRC_EW, UK_FLOAT32, 0, TX_NONE, 0, 1, NULL},
      {"f32 contiguous, ew_core inlined", SRC_EW, UK_FLOAT32, 0, TX_INLINE_CORE, 1, 1, NULL},
      {"f32 contiguous, only vec/vload/vstore inlined", SRC_EW, UK_FLOAT32, 0, TX_VEC_CORE, 1, 1, NULL},
      {"f32 contiguous, + half.cuh (both types)", SRC_EW, UK_FLOAT32, 0, TX_ADD_HALF, 1, 1, NULL},
      {"f32 contiguous, + complex.cuh", SRC_EW, UK_FLOAT32, 0, TX_ADD_COMPLEX, 1, 1, NULL},
      {"f32 contiguous, -pch", SRC_EW, UK_FLOAT32, 0, TX_NONE, 1, 1, "-pch"},
      {"f32 strided 3-d, ukern as is", SRC_EW, UK_FLOAT32, 1, TX_NONE, 1, 1, NULL},
      {"f16 contiguous, ukern as is", SRC_EW, UK_FLOAT16, 0, TX_NONE, 1, 1, NULL},
      {"f16 contiguous, whole half.cuh (both types)", SRC_EW, UK_FLOAT16, 0, TX_WHOLE_HALF, 1, 1, NULL},
      {"f16 contiguous, -pch", SRC_EW, UK_FLOAT16, 0, TX_NONE, 1, 1, "-pch"},
      {"bf16 contiguous, ukern as is", SRC_EW, UK_BFLOAT16, 0, TX_NONE, 1, 1, NULL},
      {"bf16 contiguous, whole half.cuh (both types)", SRC_EW, UK_BFLOAT16, 0, TX_WHOLE_HALF, 1, 1, NULL},
      {"c64 contiguous, ukern as is", SRC_EW, UK_COMPLEX64, 0, TX_NONE, 1, 1, NULL},
      {"c64 contiguous, -pch", SRC_EW, UK_COMPLEX64, 0, TX_NONE, 1, 1, "-pch"},
  };
  int ncase = 0;
  while (ncase < MAX_CASES && all[ncase].label) ncase++;
  const int nfixed = ncase;
  static char try_labels[MAX_CASES][96];
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--rounds") && a + 1 < argc) rounds = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--arch") && a + 1 < argc) g_arch = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--phases")) g_phases = 1;
    else if (!strcmp(argv[a], "--only") && a + 1 < argc) only = argv[++a];
    else if (!strcmp(argv[a], "--try") && a + 1 < argc && ncase < MAX_CASES) {
      snprintf(try_labels[ncase], sizeof try_labels[ncase], "f32 contiguous, + %s", argv[++a]);
      all[ncase] = (fcase){try_labels[ncase], SRC_EW, UK_FLOAT32, 0, TX_NONE, 1, 1, argv[a]};
      ncase++;
    } else {
      fprintf(stderr, "usage: %s [--rounds N] [--arch XY] [--phases] [--only SUBSTRING] [--try OPTION]...\n",
              argv[0]);
      return 2;
    }
  }
  if (rounds < 1 || rounds > MAX_ROUNDS) rounds = 15;
  snprintf(g_time_file, sizeof g_time_file, "/tmp/ew_compile_floor_%d.csv", (int)getpid());
  fcase *cs[MAX_CASES];
  int nc = 0;
  for (int k = 0; k < ncase; k++)
    if (!only || k == 0 || k >= nfixed || strstr(all[k].label, only)) cs[nc++] = &all[k];

  uk_options o = {0};
  o.arch = g_arch;
  o.disable_disk_cache = 1;
  uk_context *ctx;
  bu_check(uk_context_create(&o, &ctx), "context");
  double load0 = loadavg();
  /* Seeds new to every run: NVRTC keeps caches across processes. */
  int seq = (int)((getpid() * 7919L) % 100000) * 1000;
  double ph[3], cpu, wcpu;
  double warm = compile_case(ctx, cs[0], seq++, ph, &wcpu); /* NVRTC's first compile of the process */
  for (int k = 0; k < nc; k++) cs[k]->first_ms = -1;
  for (int r = 0; r < rounds; r++) {
    double bare = 0;
    for (int j = 0; j < nc; j++) {
      /* case 0 first in every round (the ratios' base); the rest rotated */
      int k = j == 0 ? 0 : 1 + (j - 1 + r) % (nc - 1);
      fcase *c = cs[k];
      double ms = compile_case(ctx, c, seq++, ph, &cpu);
      if (c->first_ms < 0) { /* a case's first compile (-pch: creates the header) */
        c->first_ms = cpu;
        if (c->extra && !strcmp(c->extra, "-pch")) continue;
      }
      if (k == 0) bare = cpu;
      c->ms[c->n] = ms;
      c->cpu[c->n] = cpu;
      c->ratio[c->n] = cpu / bare;
      for (int q = 0; q < 3; q++) c->phase[q][c->n] = ph[q];
      c->n++;
    }
  }
  double load1 = loadavg();
  printf("ew_compile_floor: sm_%d, %d rounds, load average %.2f -> %.2f (%ld cores); NVRTC's first compile of "
         "the process %.1f ms (%.1f ms CPU)\n",
         g_arch, rounds, load0, load1, sysconf(_SC_NPROCESSORS_ONLN), warm, wcpu);
  printf("medians; CPU = the process's CPU time in nvrtcCompileProgram (robust to load), x bare = median of the\n"
         "per-round CPU ratio to the bare kernel; first = the case's first compile (CPU)\n");
  printf("%-52s %8s %8s %8s %8s %7s", "case (new text each compile)", "CPU ms", "min CPU", "wall ms", "first", "x bare");
  if (g_phases) printf("  %5s %5s %5s", "front", "nvvm", "ptx");
  printf("\n");
  for (int k = 0; k < nc; k++) {
    fcase *c = cs[k];
    if (!c->n) continue;
    double mn = c->cpu[0];
    for (int j = 1; j < c->n; j++)
      if (c->cpu[j] < mn) mn = c->cpu[j];
    printf("%-52s %8.2f %8.2f %8.2f %8.2f %7.3f", c->label, bu_median(c->cpu, c->n), mn, bu_median(c->ms, c->n),
           c->first_ms, bu_median(c->ratio, c->n));
    if (g_phases)
      printf("  %5.1f %5.1f %5.1f", bu_median(c->phase[0], c->n), bu_median(c->phase[1], c->n),
             bu_median(c->phase[2], c->n));
    printf("\n");
  }
  uk_context_destroy(ctx);
  return 0;
}
