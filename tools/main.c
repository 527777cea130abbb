/* ukern — command-line front end: dispatches to one command per file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: ukern <command> [options]\n"
    "\n"
    "commands:\n"
    "  gen SPEC             print the CUDA source of a kernel for given dtypes and shapes\n"
    "  compile SPEC|FILE.cu compile with NVRTC: registers, spills, shared memory, time\n"
    "  run SPEC             run a kernel on random inputs: time, GB/s, share of memcpy\n"
    "  bench [--short]      the standard benchmark suite, with ceilings from the same run\n"
    "  precompile SPEC...   fill the disk cache ahead of time (any machine, with --arch)\n"
    "  cache stats|list|clear  the disk cache\n"
    "  info                 library, NVRTC and driver versions, devices, cache\n"
    "  demo                 compile a kernel (any machine) and run it (with a GPU)\n"
    "\n"
    "`ukern <command> --help` describes a command; `ukern gen --help` the spec format.\n"
    "exit codes: 0 success, 1 failure (compile error, wrong results, I/O), 2 bad usage\n"
    "            or a bad spec, 3 no CUDA device where one is needed\n"
    "Errors go to stderr; progress is shown on stderr only when it is a terminal.\n"
    "environment: UKERN_CACHE_DIR (cache directory), UKERN_DISABLE_DISK_CACHE=1,\n"
    "             UKERN_CUDA_INCLUDE (toolkit headers for NVRTC), CUDA_HOME\n";

int cli_fail(const char *what, uk_status s) {
  fprintf(stderr, "ukern: %s: %s: %s\n", what, uk_status_name(s), uk_last_error());
  if (*uk_last_error_log()) fprintf(stderr, "%s\n", uk_last_error_log());
  return s == UK_ERR_NO_DEVICE ? CLI_NO_DEVICE : CLI_FAIL;
}

int cli_wants_help(int argc, char **argv) {
  for (int k = 1; k < argc; k++)
    if (!strcmp(argv[k], "-h") || !strcmp(argv[k], "--help")) return 1;
  return 0;
}

int cli_parse_int(const char *text, long long lo, long long hi, long long *out) {
  char *end = NULL;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (end == text || *end || errno || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

const char *cli_bytes(uint64_t bytes, char *buf, size_t size) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)bytes;
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    u++;
  }
  if (u == 0) snprintf(buf, size, "%llu B", (unsigned long long)bytes);
  else snprintf(buf, size, "%.1f %s", v, units[u]);
  return buf;
}

int main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
    fputs(usage, argc < 2 ? stderr : stdout);
    return argc < 2 ? CLI_USAGE : CLI_OK;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("ukern %s\n", uk_version());
    return CLI_OK;
  }
  if (!strcmp(argv[1], "info")) return cli_info(argc - 1, argv + 1);
  if (!strcmp(argv[1], "cache")) return cli_cache(argc - 1, argv + 1);
  if (!strcmp(argv[1], "demo")) return cli_demo(argc - 1, argv + 1);
  if (!strcmp(argv[1], "gen")) return cli_gen(argc - 1, argv + 1);
  if (!strcmp(argv[1], "compile")) return cli_compile(argc - 1, argv + 1);
  if (!strcmp(argv[1], "run")) return cli_run(argc - 1, argv + 1);
  if (!strcmp(argv[1], "bench")) return cli_bench(argc - 1, argv + 1);
  if (!strcmp(argv[1], "precompile")) return cli_precompile(argc - 1, argv + 1);
  fprintf(stderr, "ukern: unknown command '%s'\n\n%s", argv[1], usage);
  return CLI_USAGE;
}
