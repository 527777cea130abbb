/* ukern bench: the standard suite in one process: elementwise and reduction
 * bandwidth against the memcpy ceiling measured in the same run, the host
 * cost of a launch, and compile/cache times. Table, or JSON with --json. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char help[] =
    "usage: ukern bench [--short] [--json] [--repeat N] [SPEC...]\n"
    "Needs a GPU (exit code 3 without one). Runs the standard suite on device 0:\n"
    "  elementwise (x-y)^2 on float32/float16/float64, contiguous and broadcast;\n"
    "  reductions: sum of everything, of rows, of columns (float32);\n"
    "  fusion: a * x + y, and sum((x - y) * (x - y), axis=-1) (float32, one kernel each);\n"
    "  launch: host microseconds per call of a cached elementwise kernel;\n"
    "  compile: a new kernel's first call (NVRTC), and in a second context (disk cache).\n"
    "Each bandwidth row shows the share of a cuMemcpyDtoD of the same bytes, measured\n"
    "in the same run. --short uses 2^20 elements instead of 2^26 (a quick check).\n"
    "With SPECs (elementwise, reduction or fusion), one bandwidth row per `inputs`\n"
    "line of each instead of the suite's rows, as `ukern run` measures them.\n"
    "For the full benchmark programs with CUB and CuPy comparisons, see bench/.\n";

typedef struct row {
  char name[96];
  double ms, gbps, copy_gbps, us;
} row;

static const struct {
  const char *name, *kind, *in, *out, *body, *inputs, *axes;
} suite[] = {
    {"elementwise (x-y)^2 float32", "elementwise", "T x, T y", "T z", "z = (x - y) * (x - y)", "float32[N], float32[N]", NULL},
    {"elementwise (x-y)^2 float16", "elementwise", "T x, T y", "T z", "z = (x - y) * (x - y)", "float16[N], float16[N]", NULL},
    {"elementwise (x-y)^2 float64", "elementwise", "T x, T y", "T z", "z = (x - y) * (x - y)", "float64[N], float64[N]", NULL},
    {"elementwise broadcast row float32", "elementwise", "T x, T y", "T z", "z = (x - y) * (x - y)", "float32[R,C], float32[C]", NULL},
    {"reduction sum all float32", "reduction", "T x", "T y", "x", "float32[N]", "all"},
    {"reduction sum rows float32", "reduction", "T x", "T y", "x", "float32[R,C]", "1"},
    {"reduction sum columns float32", "reduction", "T x", "T y", "x", "float32[R,C]", "0"},
    {"fusion a*x+y float32", "fusion", "x, y", "z", "z = 2.5 * x + y", "float32[N], float32[N]", NULL},
    {"fusion sum((x-y)^2, axis=-1) float32", "fusion", "x, y", "d", "t = x - y; d = sum(t * t, axis=-1)",
     "float32[R,C], float32[R,C]", NULL},
};

/* Replaces N, R and C in a shape template. */
static void sizes(const char *tpl, long long n, long long r, long long cols, char *out, size_t size) {
  size_t o = 0;
  for (const char *p = tpl; *p && o + 24 < size; p++) {
    if (*p == 'N' || *p == 'R' || *p == 'C')
      o += (size_t)snprintf(out + o, size - o, "%lld", *p == 'N' ? n : *p == 'R' ? r : cols);
    else out[o++] = *p;
  }
  out[o] = 0;
}

static int make_spec(cli_spec *s, int j, const char *inputs) {
  memset(s, 0, sizeof *s);
  int red = !strcmp(suite[j].kind, "reduction"), fus = !strcmp(suite[j].kind, "fusion");
  int rc = cli_spec_set(s, "kind", suite[j].kind);
  if (!rc) rc = cli_spec_set(s, "name", red ? "bench_sum" : fus ? "bench_fused" : "bench_sqdiff");
  if (!rc) rc = cli_spec_set(s, "in_params", suite[j].in);
  if (!rc) rc = cli_spec_set(s, "out_params", suite[j].out);
  if (!rc) rc = cli_spec_set(s, red ? "map_expr" : fus ? "program" : "operation", suite[j].body);
  if (!rc && red) rc = cli_spec_set(s, "reduce_expr", "a + b");
  if (!rc && red) rc = cli_spec_set(s, "post_map_expr", "y = a");
  if (!rc && red) rc = cli_spec_set(s, "identity", "0");
  if (!rc && red) rc = cli_spec_set(s, "axes", suite[j].axes);
  if (!rc) rc = cli_spec_set(s, "inputs", inputs);
  if (!rc) rc = cli_spec_finish(s);
  return rc;
}

/* One row through the same path as `ukern run`: the spec's kernel on one
 * `inputs` line. */
static int bandwidth(uk_context *ctx, const cli_spec *s, const char *inputs, const char *name, int repeat, row *r) {
  cli_kernel k;
  memset(&k, 0, sizeof k);
  cli_case *c = calloc(1, sizeof *c);
  int rc = c ? cli_kernel_create(ctx, s, NULL, &k) : CLI_FAIL;
  if (rc == CLI_OK) rc = cli_case_parse(&k, inputs, c);
  if (rc == CLI_OK) {
    cli_measure m;
    uk_status st = cli_measure_case(&k, c, 1, repeat, &m);
    if (st != UK_OK) rc = cli_fail(name, st);
    else if (m.unwritten) {
      rc = cli_fail_msg("bench", "%s: %lld output elements not written", name, (long long)m.unwritten);
    }
    snprintf(r->name, sizeof r->name, "%s", name);
    r->ms = m.ms, r->gbps = m.gbps, r->copy_gbps = m.copy_gbps, r->us = 0;
  }
  cli_kernel_destroy(&k);
  free(c);
  return rc;
}

/* The rows of the suite, or of the SPECs given: *rows (malloc'd), *n. */
static int bandwidth_rows(uk_context *ctx, char **paths, int npaths, int shrt, int repeat, row **rows, int *n) {
  enum { NS = sizeof suite / sizeof *suite };
  long long elems = shrt ? 1LL << 20 : 1LL << 26, r = shrt ? 1024 : 8192, cols = elems / r;
  int cap = NS, rc = CLI_OK;
  *n = 0;
  if (!(*rows = calloc((size_t)cap + 3, sizeof **rows))) return cli_fail_msg("bench", "out of memory");
  for (int j = 0; j < NS && npaths == 0 && rc == CLI_OK; j++) {
    char inputs[256];
    cli_spec s;
    sizes(suite[j].inputs, elems, r, cols, inputs, sizeof inputs);
    if ((rc = make_spec(&s, j, inputs)) == CLI_OK) rc = bandwidth(ctx, &s, inputs, suite[j].name, repeat, &(*rows)[(*n)++]);
    cli_spec_free(&s);
  }
  for (int p = 0; p < npaths && rc == CLI_OK; p++) {
    cli_spec s;
    memset(&s, 0, sizeof s);
    if ((rc = cli_spec_load(&s, paths[p])) == CLI_OK) rc = cli_spec_finish(&s);
    if (rc == CLI_OK && s.kind == CLI_MODULE) {
      fprintf(stderr, "ukern bench: %s is a module: bench takes elementwise, reduction or fusion specs\n%s",
              paths[p], cli_module_run_hint);
      rc = CLI_USAGE;
    }
    int ncases = cli_spec_cases(&s);
    for (int i = 0; i < ncases && rc == CLI_OK; i++) {
      char line[4096], name[96];
      cli_spec_case(&s, i, line, sizeof line);
      if (*n == cap) {
        row *more = realloc(*rows, ((size_t)(cap *= 2) + 3) * sizeof **rows);
        if (!more) {
          rc = cli_fail_msg("bench", "out of memory");
          break;
        }
        *rows = more;
      }
      snprintf(name, sizeof name, "%.60s(%.30s)", s.f[F_name] ? s.f[F_name] : "kernel", line);
      rc = bandwidth(ctx, &s, line, name, repeat, &(*rows)[(*n)++]);
    }
    cli_spec_free(&s);
  }
  memset(*rows + *n, 0, 3 * sizeof **rows);
  return rc;
}

/* Host cost of a cached call, and first-call times cold and from disk. */
static int host_costs(long long salt, row *launch, row *cold, row *disk) {
  char op[128], dir[256];
  snprintf(op, sizeof op, "z = x * %lld.0f + 1.0f", salt);
  snprintf(dir, sizeof dir, "/tmp/ukern-bench-%lld", salt);
  uk_options o;
  memset(&o, 0, sizeof o);
  o.cache_dir = dir;
  uk_context *ctx[2] = {NULL, NULL};
  uk_elementwise *k[2] = {NULL, NULL};
  uk_array x = {0}, z[2];
  memset(z, 0, sizeof z);
  int64_t n = 1024;
  uk_status st = UK_OK;
  for (int i = 0; i < 2 && st == UK_OK; i++) {
    if ((st = uk_context_create(&o, &ctx[i])) == UK_OK)
      st = uk_elementwise_create(
          ctx[i],
          &(uk_elementwise_spec){
              .in_params = "float32 x", .out_params = "float32 z", .operation = op, .name = "bench_launch"},
          &k[i]);
  }
  if (st == UK_OK) st = uk_array_alloc(ctx[0], UK_FLOAT32, 1, &n, 0, NULL, &x);
  uk_arg in = uk_arg_array(&x);
  for (int i = 0; i < 2 && st == UK_OK; i++) {
    double t0 = cli_now_ms();
    st = uk_elementwise_call(k[i], &in, 1, &z[i], 1, NULL);
    if (st == UK_OK) st = uk_device_synchronize();
    row *r = i == 0 ? cold : disk;
    snprintf(r->name, sizeof r->name, "%s", i == 0 ? "compile: first call (NVRTC)" : "compile: first call (disk cache)");
    r->ms = cli_now_ms() - t0;
  }
  const int calls = 2000;
  if (st == UK_OK) {
    double t0 = cli_now_ms();
    for (int j = 0; j < calls && st == UK_OK; j++) st = uk_elementwise_call(k[0], &in, 1, &z[0], 1, NULL);
    double us = (cli_now_ms() - t0) * 1e3 / calls;
    if (st == UK_OK) st = uk_device_synchronize();
    snprintf(launch->name, sizeof launch->name, "launch: host cost of a cached call");
    launch->us = us;
  }
  for (int i = 0; i < 2; i++) {
    if (ctx[i]) uk_array_free(ctx[i], &z[i], NULL);
    uk_elementwise_destroy(k[i]);
  }
  if (ctx[0]) uk_array_free(ctx[0], &x, NULL);
  if (ctx[0]) uk_cache_clear(dir);
  rmdir(dir);
  for (int i = 0; i < 2; i++) uk_context_destroy(ctx[i]);
  return st == UK_OK ? CLI_OK : cli_fail("bench (launch/compile)", st);
}

int cli_bench(int argc, char **argv) {
  if (cli_wants_help(argc, argv)) {
    fputs(help, stdout);
    return CLI_OK;
  }
  int shrt = 0, json = 0, npaths = 0, rc = CLI_OK, nb = 0;
  long long repeat = 20;
  row *rows = NULL;
  uk_context *ctx = NULL;
  char **paths = calloc((size_t)argc, sizeof *paths);
  if (!paths) return cli_fail_msg("bench", "out of memory");
  for (int k = 1; k < argc && rc == CLI_OK; k++) {
    if (argv[k][0] != '-') paths[npaths++] = argv[k];
    else if (!strcmp(argv[k], "--short")) shrt = 1;
    else if (!strcmp(argv[k], "--json")) json = cli_json_errors = 1;
    else if (!strcmp(argv[k], "--repeat")) {
      const char *v = cli_value(argc, argv, &k, "bench");
      if (!v) rc = CLI_USAGE;
      else if (cli_parse_int(v, 1, 10000, &repeat) != 0) {
        fprintf(stderr, "ukern bench: --repeat '%s' is not a count from 1 to 10000\n", v);
        rc = CLI_USAGE;
      }
    } else {
      fprintf(stderr, "ukern bench: unexpected argument '%s'\n%s", argv[k], help);
      rc = CLI_USAGE;
    }
  }
  int count = 0;
  uk_status st = UK_OK;
  if (rc == CLI_OK && (st = uk_device_count(&count)) != UK_OK) rc = cli_fail("bench needs a GPU", st);
  if (rc == CLI_OK && (st = uk_context_create(NULL, &ctx)) != UK_OK) rc = cli_fail("context", st);
  if (rc == CLI_OK) rc = bandwidth_rows(ctx, paths, npaths, shrt, (int)repeat, &rows, &nb);
  if (rc == CLI_OK)
    rc = host_costs((long long)getpid() * 1000 + (long long)(cli_now_ms()) % 1000, &rows[nb], &rows[nb + 1],
                    &rows[nb + 2]);
  long long n = shrt ? 1LL << 20 : 1LL << 26;
  uk_device_info dev;
  if (rc == CLI_OK && uk_device_info_get(0, &dev) != UK_OK) snprintf(dev.name, sizeof dev.name, "device 0"), dev.arch = 0;
  if (rc == CLI_OK && json) {
    printf("{\"ok\": true, \"device\": ");
    cli_json_str(stdout, dev.name);
    printf(", \"arch\": %d, \"elements\": %lld, \"rows\": [\n", dev.arch, n);
    for (int j = 0; j < nb + 3; j++) {
      printf("  {\"case\": ");
      cli_json_str(stdout, rows[j].name);
      if (j < nb)
        printf(", \"ms\": %.6f, \"gbps\": %.3f, \"memcpy_gbps\": %.3f, \"share\": %.4f}", rows[j].ms, rows[j].gbps,
               rows[j].copy_gbps, rows[j].copy_gbps > 0 ? rows[j].gbps / rows[j].copy_gbps : 0);
      else if (j == nb) printf(", \"us\": %.3f}", rows[j].us);
      else printf(", \"ms\": %.3f}", rows[j].ms);
      printf("%s\n", j + 1 < nb + 3 ? "," : "");
    }
    printf("]}\n");
  } else if (rc == CLI_OK) {
    printf("ukern bench on %s (sm_%d), %lld elements, median of %lld\n\n", dev.name, dev.arch, n, repeat);
    printf("%-40s %10s %10s %12s %8s\n", "case", "ms", "GB/s", "memcpy GB/s", "share");
    for (int j = 0; j < nb; j++)
      printf("%-40s %10.4f %10.1f %12.1f %7.1f%%\n", rows[j].name, rows[j].ms, rows[j].gbps, rows[j].copy_gbps,
             rows[j].copy_gbps > 0 ? 100.0 * rows[j].gbps / rows[j].copy_gbps : 0.0);
    printf("%-40s %10.2f us\n", rows[nb].name, rows[nb].us);
    printf("%-40s %10.1f ms\n", rows[nb + 1].name, rows[nb + 1].ms);
    printf("%-40s %10.1f ms\n", rows[nb + 2].name, rows[nb + 2].ms);
  }
  free(rows);
  free(paths);
  uk_context_destroy(ctx);
  return rc;
}
