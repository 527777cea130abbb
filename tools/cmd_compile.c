/* ukern compile: compiles a spec's kernel or a .cu file with NVRTC and shows
 * what ptxas reports per kernel. Works without a GPU (--arch, default sm_90). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char help[] =
    "usage: ukern compile SPEC|FILE.cu [--arch ARCH] [--case N] [--log] [--json] [--FIELD VALUE]...\n"
    "Compiles with NVRTC for the local GPU's architecture, or for --arch ARCH (90,\n"
    "90a, sm_90a, 100f, compute_90; the default without a GPU is 90; an -arch in\n"
    "--option is the same). Prints the compile time, the cubin size and for each\n"
    "kernel its registers, spill stores/loads, stack frame, static shared memory and\n"
    "barriers (from ptxas -v). Nothing is cached, neither by ukern nor by NVRTC\n"
    "(CUDA_CACHE_DISABLE=1 for this command): the time is a real NVRTC run.\n"
    "A fusion spec compiles every kernel of its plan (the table lists them all).\n"
    "A .cu file is compiled as a raw module; give templates to instantiate with\n"
    "--name-expr 'scale<float>' and NVRTC options with --option -std=c++17.\n"
    "--log prints the whole NVRTC log. On a compile error the log and the numbered\n"
    "source are printed to stderr and the exit code is 1. --json prints one JSON object\n"
    "(on a compile error: {\"ok\": false, \"error\": {...}} with the log).\n"
    "`ukern gen --help` describes specs.\n";

typedef struct compile_args {
  const char *path;
  long long which;
  const char *arch; /* --arch as given (the context checks it); NULL: not given */
  int log, json;
} compile_args;

static int own(void *user, int argc, char **argv, int *k) {
  compile_args *a = user;
  if (!strcmp(argv[*k], "--arch")) return (a->arch = cli_value(argc, argv, k, "compile")) ? 1 : -1;
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
static const char *pick_arch(const char *given, char *buf, size_t size, int *no_gpu) {
  *no_gpu = 0;
  if (given) return given;
  uk_device_info info;
  int count = 0;
  if (uk_device_count(&count) == UK_OK && count > 0 && uk_device_info_get(0, &info) == UK_OK) {
    snprintf(buf, size, "%d", info.arch);
    return buf;
  }
  *no_gpu = 1;
  return "90";
}

/* What one compile gave, from the public calls of the spec's kind. */
typedef struct compiled {
  double ms;
  int is_ptx;
  size_t bytes;
  char *log; /* uk_free */
  uk_module *m;
} compiled;

/* A module through uk_module_from_source in a context without a disk cache
 * (a real NVRTC run). A PTX image's size comes from the fatbin call, which
 * finds the module in the memory cache. */
static uk_status compile_module(uk_context *ctx, const cli_kernel *k, const char *arch, compiled *r) {
  uk_module_options mo;
  cli_module_options(k, &mo);
  double t0 = cli_now_ms();
  uk_status st = uk_module_from_source(ctx, k->spec->f[F_source], &mo, &r->m);
  r->ms = cli_now_ms() - t0;
  if (st != UK_OK) return st;
  if (!(r->log = strdup(uk_module_log(r->m)))) return UK_ERR_NOMEM;
  const void *image;
  if (uk_module_image(r->m, &image, &r->bytes) == UK_OK) return UK_OK;
  r->is_ptx = 1;
  void *fat = NULL;
  size_t fat_bytes = 0;
  if (!cli_arch_option(k->opts, k->nopts) &&
      uk_module_fatbin(ctx, k->spec->f[F_source], &mo, &arch, 1, &fat, &fat_bytes, &r->bytes) != UK_OK)
    r->bytes = 0;
  uk_free(fat);
  return UK_OK;
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
  compiled r;
  memset(&r, 0, sizeof r);
  cli_case *c = calloc(1, sizeof *c);
  uk_context *ctx = NULL;
  int rc = c ? cli_spec_args(argc, argv, &s, own, &a) : CLI_FAIL;
  if (rc != CLI_OK) goto out;
  if (!a.path && !s.f[F_in_params] && !s.f[F_source]) {
    fprintf(stderr, "ukern compile: give a spec or a .cu file\n%s", help);
    rc = CLI_USAGE;
    goto out;
  }
  /* NVRTC keeps ptxas results in the user's compute cache (~/.nv/ComputeCache)
   * and skips ptxas, and so its -v report, on a repeated compile: this
   * command promises a real run, so it turns that cache off for itself
   * (before NVRTC is loaded). */
  setenv("CUDA_CACHE_DISABLE", "1", 1);
  int no_gpu = 0;
  char dev_arch[16];
  const char *arch = pick_arch(a.arch, dev_arch, sizeof dev_arch, &no_gpu);
  uk_options o;
  memset(&o, 0, sizeof o);
  o.disable_disk_cache = 1;
  o.arch_name = arch;
  uk_status st = uk_context_create(&o, &ctx);
  if (st == UK_ERR_INVALID) { /* the library's check of --arch */
    rc = cli_arch_error("compile");
    goto out;
  }
  if (st != UK_OK) {
    rc = cli_fail("context", st);
    goto out;
  }
  if ((rc = cli_prepare_case(&s, a.path, a.which, ctx, "-Xptxas=-v", &k, c)) != CLI_OK) goto out;
  /* An -arch among the spec's options is the target (what we report). */
  const char *target = cli_arch_option(k.opts, k.nopts);
  char an[64];
  cli_arch_name(target ? target : arch, an, sizeof an);
  const char *name = s.f[F_name] ? s.f[F_name] : s.kind == CLI_MODULE ? "module" : "kernel";
  cli_progress_begin("compiling %s for %s%s", name, an, no_gpu ? " (no GPU)" : "");
  if (s.kind == CLI_MODULE) {
    st = compile_module(ctx, &k, arch, &r);
  } else {
    uk_compile_info info;
    if ((st = cli_kernel_compile_info(&k, c, &info)) == UK_OK) {
      r.ms = info.ms, r.is_ptx = info.is_ptx, r.bytes = info.image_bytes;
      r.log = info.log ? info.log : strdup("");
    }
  }
  cli_progress_end();
  if (st != UK_OK) {
    rc = cli_fail(a.path ? a.path : "compile", st);
    goto out;
  }
  if (!r.log) {
    rc = cli_fail_msg("compile", "out of memory");
    goto out;
  }
  kinfo ks[64];
  int n = parse_ptxas(r.log, ks, 64);
  for (int j = 0; j < n && r.m; j++) /* name expressions by their own spelling */
    for (int q = 0; q < k.nnames; q++) {
      const char *lowered = NULL;
      if (uk_module_lowered_name(r.m, k.names[q], &lowered) == UK_OK && !strcmp(lowered, ks[j].name))
        snprintf(ks[j].name, sizeof ks[j].name, "%s", k.names[q]);
    }
  if (a.json) {
    print_json(name, an, no_gpu, r.ms, r.is_ptx, r.bytes, ks, n, a.log ? r.log : NULL);
    goto out;
  }
  char b[32];
  printf("compiled '%s' for %s%s in %.1f ms, %s %s\n", name, an,
         no_gpu ? " (no GPU found; --arch picks another)" : "", r.ms, r.is_ptx ? "PTX" : "cubin",
         cli_bytes(r.bytes, b, sizeof b));
  printf("%-40s %9s %14s %7s %9s %8s\n", "kernel", "registers", "spills st/ld", "stack", "shared", "barriers");
  for (int j = 0; j < n; j++) {
    char spill[32];
    snprintf(spill, sizeof spill, "%ld/%ld", ks[j].spill_st, ks[j].spill_ld);
    printf("%-40s %9ld %14s %7ld %9ld %8ld\n", ks[j].name, ks[j].regs, spill, ks[j].stack, ks[j].smem, ks[j].barriers);
  }
  if (n == 0) printf("(ptxas reported no kernels)\n");
  if (a.log) printf("\nNVRTC log:\n%s", r.log);
out:
  uk_free(r.log);
  uk_module_destroy(r.m);
  cli_kernel_destroy(&k);
  uk_context_destroy(ctx);
  cli_spec_free(&s);
  free(c);
  return rc;
}
