/* ukern run: runs a spec's kernel on the GPU with seeded random inputs,
 * checks that it wrote every output element, and times it against a device
 * copy of the same bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char help[] =
    "usage: ukern run SPEC [--case N] [--seed N] [--repeat N] [--json] [--FIELD VALUE]...\n"
    "Needs a GPU (exit code 3 without one). Allocates the inputs of the spec's first\n"
    "`inputs` line (or line N) on device 0, fills them with random values (seed 1 by\n"
    "default), runs the kernel once (compiling it, or loading it from the caches),\n"
    "checks with two different poisons that every output element was written, then\n"
    "times --repeat calls (default 20, median) with CUDA events. It prints the time,\n"
    "the bytes moved (each array read or written once), GB/s, and the share of the\n"
    "ceiling: a cuMemcpyDtoD moving the same bytes, measured in the same run.\n"
    "It shows the outputs' dtypes and shapes (allocated by ukern from the dtype and\n"
    "shape rules, or given by `outputs`, whose shapes the call checks). Values are not\n"
    "compared with a host reference: the tool has no host evaluator of kernels or\n"
    "fusion programs (the gpu tests compare values).\n"
    "--json prints one JSON object instead. Exit code 1 when an output element was\n"
    "not written. `ukern gen --help` describes specs.\n";

typedef struct run_args {
  const char *path;
  long long which, seed, repeat;
  int json;
} run_args;

static int own(void *user, int argc, char **argv, int *k) {
  run_args *a = user;
  const char *f = argv[*k];
  long long *dst = !strcmp(f, "--case") ? &a->which : !strcmp(f, "--seed") ? &a->seed : !strcmp(f, "--repeat") ? &a->repeat : NULL;
  if (dst) {
    const char *v = cli_value(argc, argv, k, "run");
    if (!v) return -1;
    if (cli_parse_int(v, dst == &a->repeat ? 1 : 0, 1LL << 40, dst) != 0) {
      fprintf(stderr, "ukern run: %s '%s' is not a valid count\n", f, argv[*k]);
      return -1;
    }
    return 1;
  }
  if (!strcmp(f, "--json")) return a->json = cli_json_errors = 1;
  if (f[0] != '-' && !a->path) {
    a->path = f;
    return 1;
  }
  return 0;
}

int cli_run(int argc, char **argv) {
  if (cli_wants_help(argc, argv)) {
    fputs(help, stdout);
    return CLI_OK;
  }
  run_args a = {NULL, 0, 1, 20, 0};
  cli_spec s;
  memset(&s, 0, sizeof s);
  cli_kernel k;
  memset(&k, 0, sizeof k);
  cli_case *c = calloc(1, sizeof *c);
  uk_context *ctx = NULL;
  int rc = c ? cli_spec_args(argc, argv, &s, own, &a) : CLI_FAIL;
  if (rc != CLI_OK) goto out;
  if (a.path && (rc = cli_spec_load(&s, a.path)) != CLI_OK) goto out;
  if ((rc = cli_spec_finish(&s)) != CLI_OK) goto out;
  if (s.kind == CLI_MODULE) {
    fprintf(stderr, "ukern run: %s is a module: run takes an elementwise, reduction or fusion spec\n%s",
            a.path ? a.path : "the spec", cli_module_run_hint);
    rc = CLI_USAGE;
    goto out;
  }
  int count = 0;
  uk_status st = uk_device_count(&count);
  if (st != UK_OK) {
    rc = cli_fail("run needs a GPU", st);
    goto out;
  }
  if ((st = uk_context_create(NULL, &ctx)) != UK_OK) {
    rc = cli_fail("context", st);
    goto out;
  }
  if ((rc = cli_kernel_create(ctx, &s, NULL, &k)) != CLI_OK) goto out;
  char line[4096];
  int ncases = cli_spec_cases(&s);
  if (a.which >= ncases && (ncases > 0 || k.nin > 0)) {
    fprintf(stderr, "ukern run: no `inputs` line %lld in the spec (it has %d)\n", a.which, ncases);
    rc = CLI_USAGE;
    goto out;
  }
  const char *l = ncases ? cli_spec_case(&s, (int)a.which, line, sizeof line) : "";
  if ((rc = cli_case_parse(&k, l, c)) != CLI_OK) goto out;
  char desc[1024];
  cli_case_describe(c, desc, sizeof desc);
  cli_measure m;
  st = cli_measure_case(&k, c, (uint64_t)a.seed, (int)a.repeat, &m);
  if (st != UK_OK) {
    rc = cli_fail("run", st);
    goto out;
  }
  uk_device_info dev;
  if (uk_device_info_get(0, &dev) != UK_OK) snprintf(dev.name, sizeof dev.name, "device 0"), dev.arch = 0;
  const char *name = s.f[F_name] ? s.f[F_name] : "kernel";
  double share = m.copy_gbps > 0 ? m.gbps / m.copy_gbps : 0;
  if (a.json) {
    cli_json_printed = 1;
    printf("{\"kernel\": ");
    cli_json_str(stdout, name);
    printf(", \"kind\": \"%s\", \"inputs\": ",
           s.kind == CLI_REDUCTION ? "reduction" : s.kind == CLI_FUSION ? "fusion" : "elementwise");
    cli_json_str(stdout, desc);
    printf(", \"outputs\": ");
    cli_json_str(stdout, m.outputs);
    printf(", \"device\": ");
    cli_json_str(stdout, dev.name);
    printf(", \"arch\": %d, \"seed\": %lld, \"repeat\": %lld, \"first_call_ms\": %.4f, \"ms\": %.6f, "
           "\"bytes\": %.0f, \"gbps\": %.3f, \"memcpy_ms\": %.6f, \"memcpy_gbps\": %.3f, \"share\": %.4f, "
           "\"unwritten\": %lld, \"ok\": %s, \"cache\": {\"compiles\": %llu, \"memory_hits\": %llu, "
           "\"disk_hits\": %llu, \"disk_misses\": %llu}}\n",
           dev.arch, a.seed, a.repeat, m.first_ms, m.ms, m.bytes, m.gbps, m.copy_ms, m.copy_gbps, share,
           (long long)m.unwritten, m.unwritten ? "false" : "true", (unsigned long long)m.cache.compiles,
           (unsigned long long)m.cache.memory_hits, (unsigned long long)m.cache.disk_hits,
           (unsigned long long)m.cache.disk_misses);
  } else {
    char b[32];
    printf("%s(%s) on %s (sm_%d)\n", name, desc, dev.name, dev.arch);
    printf("outputs     %s\n", m.outputs);
    printf("first call  %.2f ms (%s)\n", m.first_ms,
           m.cache.compiles ? "NVRTC compile included" : m.cache.disk_hits ? "loaded from the disk cache" : "cached");
    printf("time        %.4f ms (median of %lld)\n", m.ms, a.repeat);
    printf("traffic     %s, %.1f GB/s\n", cli_bytes((uint64_t)m.bytes, b, sizeof b), m.gbps);
    printf("memcpy      %.4f ms, %.1f GB/s (cuMemcpyDtoD of the same bytes)\n", m.copy_ms, m.copy_gbps);
    printf("share       %.1f%% of the memcpy ceiling\n", 100.0 * share);
    if (m.unwritten) printf("written     WRONG: %lld elements were not written\n", (long long)m.unwritten);
    else printf("written     every element written\n");
    printf("cache       compiles %llu, disk hits %llu, dir %s\n", (unsigned long long)m.cache.compiles,
           (unsigned long long)m.cache.disk_hits, *uk_context_cache_dir(ctx) ? uk_context_cache_dir(ctx) : "(disabled)");
  }
  if (m.unwritten) {
    fprintf(stderr, "ukern run: %lld output elements were not written by %s\n", (long long)m.unwritten, name);
    rc = CLI_FAIL;
  }
out:
  cli_kernel_destroy(&k);
  uk_context_destroy(ctx);
  cli_spec_free(&s);
  free(c);
  return rc;
}
