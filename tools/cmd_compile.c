/* ukern compile: compiles a spec's kernel or a .cu file with NVRTC and shows
 * what ptxas reports per kernel. Works without a GPU (--arch, default sm_90). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "runtime/arch.h"

static const char help[] =
    "usage: ukern compile SPEC|FILE.cu [--arch ARCH] [--case N] [--log] [--json] [--FIELD VALUE]...\n"
    "Compiles with NVRTC for the local GPU's architecture, or for --arch ARCH (90,\n"
    "90a, sm_90a, 100f, compute_90; the default without a GPU is 90; an -arch in\n"
    "--option is the same). Prints the compile time, the cubin size and for each\n"
    "kernel its registers, spill stores/loads, stack frame, static shared memory and\n"
    "barriers (from ptxas -v). Nothing is cached: the time is a real NVRTC run.\n"
    "A .cu file is compiled as a raw module; give templates to instantiate with\n"
    "--name-expr 'scale<float>' and NVRTC options with --option -std=c++17.\n"
    "--log prints the whole NVRTC log. On a compile error the log and the numbered\n"
    "source are printed to stderr and the exit code is 1. --json prints one JSON object\n"
    "(on a compile error: {\"ok\": false, \"error\": {...}} with the log).\n"
    "`ukern gen --help` describes specs.\n";

typedef struct compile_args {
  const char *path;
  long long which;
  uk__arch arch; /* num 0: not given */
  int log, json;
} compile_args;

static int own(void *user, int argc, char **argv, int *k) {
  compile_args *a = user;
  if (!strcmp(argv[*k], "--arch")) {
    const char *v = cli_value(argc, argv, k, "compile");
    if (!v) return -1;
    if (uk__arch_parse(v, "--arch", &a->arch) != UK_OK || uk__arch_check(a->arch, "--arch") != UK_OK) {
      fprintf(stderr, "ukern compile: %s\n", uk_last_error());
      return -1;
    }
    return 1;
  }
  if (!strcmp(argv[*k], "--case")) {
    const char *v = cli_value(argc, argv, k, "compile");
    if (!v) return -1;
    if (cli_parse_int(v, 0, 1 << 20, &a->which) != 0) {
      fprintf(stderr, "ukern compile: --case '%s' is not a non-negative integer\n", argv[*k]);
      return -1;
    }
    return 1;
  }
  if (!strcmp(argv[*k], "--log")) return a->log = 1;
  if (!strcmp(argv[*k], "--json")) return a->json = cli_json_errors = 1;
  if (argv[*k][0] != '-' && !a->path) {
    a->path = argv[*k];
    return 1;
  }
  return 0;
}

typedef struct kinfo {
  char name[256];
  long regs, spill_st, spill_ld, stack, smem, barriers;
} kinfo;

static long number_before(const char *line, const char *unit) {
  const char *u = strstr(line, unit);
  if (!u) return -1;
  const char *p = u;
  while (p > line && p[-1] == ' ') p--;
  while (p > line && p[-1] >= '0' && p[-1] <= '9') p--;
  return strtol(p, NULL, 10);
}

/* Reads ptxas's -v lines from the NVRTC log. */
static int parse_ptxas(const char *log, kinfo *ks, int max) {
  int n = 0;
  char props[256] = "";
  for (const char *p = log; p && *p;) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    char line[1024];
    snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), p);
    const char *q;
    if ((q = strstr(line, "Compiling entry function '")) && n < max) {
      q += strlen("Compiling entry function '");
      const char *end = strchr(q, '\'');
      kinfo *k = &ks[n++];
      memset(k, 0, sizeof *k);
      snprintf(k->name, sizeof k->name, "%.*s", (int)(end ? end - q : (long)strlen(q)), q);
    } else if ((q = strstr(line, "Function properties for "))) {
      snprintf(props, sizeof props, "%s", q + strlen("Function properties for "));
    } else if (strstr(line, "bytes stack frame")) {
      for (int j = 0; j < n; j++)
        if (!strcmp(ks[j].name, props)) {
          ks[j].stack = number_before(line, "bytes stack frame");
          ks[j].spill_st = number_before(line, "bytes spill stores");
          ks[j].spill_ld = number_before(line, "bytes spill loads");
        }
    } else if (strstr(line, "Used ") && strstr(line, "registers") && n > 0) {
      ks[n - 1].regs = number_before(line, "registers");
      long b = number_before(line, "barriers");
      ks[n - 1].barriers = b < 0 ? 0 : b;
      long sm = number_before(line, "bytes smem");
      ks[n - 1].smem = sm < 0 ? 0 : sm;
    }
    p = e ? e + 1 : NULL;
  }
  return n;
}

static void print_json(const char *name, const char *arch, int no_gpu, double ms, int is_ptx, size_t bytes,
                       const kinfo *ks, int n, const char *log) {
  printf("{\"ok\": true, \"name\": ");
  cli_json_str(stdout, name);
  printf(", \"arch\": ");
  cli_json_str(stdout, arch);
  printf(", \"no_gpu\": %s, \"compile_ms\": %.3f, \"image\": \"%s\", \"image_bytes\": %zu, \"kernels\": [",
         no_gpu ? "true" : "false", ms, is_ptx ? "ptx" : "cubin", bytes);
  for (int j = 0; j < n; j++) {
    printf("%s\n  {\"kernel\": ", j ? "," : "");
    cli_json_str(stdout, ks[j].name);
    printf(", \"registers\": %ld, \"spill_stores\": %ld, \"spill_loads\": %ld, \"stack\": %ld, \"shared\": %ld, "
           "\"barriers\": %ld}",
           ks[j].regs, ks[j].spill_st, ks[j].spill_ld, ks[j].stack, ks[j].smem, ks[j].barriers);
  }
  printf("%s]", n ? "\n" : "");
  if (log) {
    printf(", \"log\": ");
    cli_json_str(stdout, log);
  }
  printf("}\n");
}

/* The arch to compile for: --arch, else the local GPU's, else 90. */
static uk__arch pick_arch(uk__arch given, int *no_gpu) {
  *no_gpu = 0;
  if (given.num) return given;
  uk_device_info info;
  int count = 0;
  if (uk_device_count(&count) == UK_OK && count > 0 && uk_device_info_get(0, &info) == UK_OK)
    return (uk__arch){info.arch, 0};
  *no_gpu = 1;
  return (uk__arch){90, 0};
}

int cli_compile(int argc, char **argv) {
  if (cli_wants_help(argc, argv)) {
    fputs(help, stdout);
    return CLI_OK;
  }
  compile_args a;
  memset(&a, 0, sizeof a);
  cli_spec s;
  memset(&s, 0, sizeof s);
  cli_kernel k;
  memset(&k, 0, sizeof k);
  cli_case *c = calloc(1, sizeof *c);
  uk_context *ctx = NULL;
  char *src = NULL;
  uk__binary *bin = NULL;
  int rc = c ? cli_spec_args(argc, argv, &s, own, &a) : CLI_FAIL;
  if (rc != CLI_OK) goto out;
  if (!a.path && !s.f[F_in_params] && !s.f[F_source]) {
    fprintf(stderr, "ukern compile: give a spec or a .cu file\n%s", help);
    rc = CLI_USAGE;
    goto out;
  }
  int no_gpu = 0;
  uk__arch arch = pick_arch(a.arch, &no_gpu);
  uk_options o;
  memset(&o, 0, sizeof o);
  o.disable_disk_cache = 1;
  o.arch = arch.num;
  uk_status st = uk_context_create(&o, &ctx);
  if (st != UK_OK) {
    rc = cli_fail("context", st);
    goto out;
  }
  if ((rc = cli_prepare_source(&s, a.path, a.which, ctx, &k, c, &src)) != CLI_OK) goto out;
  const char *opts[CLI_MAX_OPTS + 3];
  uk__compile_req req;
  cli_kernel_request(&k, src, arch.num, "-Xptxas=-v", opts, &req);
  /* An -arch among the spec's options is the target (what we report). */
  if ((st = uk__arch_take_option(opts, &req.num_options, &arch)) != UK_OK) {
    rc = cli_fail(a.path ? a.path : "compile", st);
    goto out;
  }
  req.arch = arch.num;
  req.arch_flags = arch.flags;
  char an[32], what[600];
  uk__arch_name(arch, an, sizeof an);
  snprintf(what, sizeof what, "compiling '%s' for %s", req.name, an);
  req.what = what;
  cli_progress_begin("compiling %s for %s%s", req.name, an, no_gpu ? " (no GPU)" : "");
  double t0 = cli_now_ms();
  st = uk__nvrtc_compile(&req, &bin);
  double ms = cli_now_ms() - t0;
  cli_progress_end();
  if (st != UK_OK) {
    rc = cli_fail(a.path ? a.path : "compile", st);
    goto out;
  }
  kinfo ks[64];
  int n = parse_ptxas(bin->log, ks, 64);
  for (int j = 0; j < n; j++) /* name expressions by their own spelling */
    for (int q = 0; q < bin->num_names; q++)
      if (!strcmp(bin->lowered[q], ks[j].name)) snprintf(ks[j].name, sizeof ks[j].name, "%s", bin->names[q]);
  if (a.json) {
    print_json(req.name, an, no_gpu, ms, bin->is_ptx, bin->image_size, ks, n, a.log ? bin->log : NULL);
    goto out;
  }
  char b[32];
  printf("compiled '%s' for %s%s in %.1f ms, %s %s\n", req.name, an,
         no_gpu ? " (no GPU found; --arch picks another)" : "", ms, bin->is_ptx ? "PTX" : "cubin",
         cli_bytes(bin->image_size, b, sizeof b));
  printf("%-40s %9s %14s %7s %9s %8s\n", "kernel", "registers", "spills st/ld", "stack", "shared", "barriers");
  for (int j = 0; j < n; j++) {
    char spill[32];
    snprintf(spill, sizeof spill, "%ld/%ld", ks[j].spill_st, ks[j].spill_ld);
    printf("%-40s %9ld %14s %7ld %9ld %8ld\n", ks[j].name, ks[j].regs, spill, ks[j].stack, ks[j].smem, ks[j].barriers);
  }
  if (n == 0) printf("(ptxas reported no kernels)\n");
  if (a.log) printf("\nNVRTC log:\n%s", bin->log);
out:
  uk__binary_release(bin);
  uk_free(src);
  cli_kernel_destroy(&k);
  uk_context_destroy(ctx);
  cli_spec_free(&s);
  free(c);
  return rc;
}
