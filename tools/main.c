/* ukern — command-line front end: dispatches to one command per file. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: ukern <command> [options]\n"
    "\n"
    "commands:\n"
    "  info                 library, NVRTC and driver versions, devices, cache\n"
    "  cache stats|clear    disk cache usage, or remove every cached entry\n"
    "  demo                 compile a kernel (any machine) and run it (with a GPU)\n"
    "\n"
    "`ukern <command> --help` describes a command.\n"
    "exit codes: 0 success, 1 failure, 2 bad usage, 3 no CUDA device where one is needed\n"
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
  fprintf(stderr, "ukern: unknown command '%s'\n\n%s", argv[1], usage);
  return CLI_USAGE;
}
