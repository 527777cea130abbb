/* ukern — command-line front end: dispatches to one command per file. */
#include <errno.h>
#include <stdarg.h>
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
    "  bench [SPEC...]      the standard suite (or the SPECs' kernels), ceilings from the same run\n"
    "  precompile SPEC...   fill the disk cache ahead of time (any machine, with --arch)\n"
    "  cache stats|list|clear  the disk cache\n"
    "  info                 library, NVRTC and driver versions, devices, cache\n"
    "  demo                 compile a kernel (any machine) and run it (with a GPU)\n"
    "\n"
    "Specs are elementwise, reduction, fusion or module kernels; `ukern gen --help`\n"
    "describes the format, `ukern <command> --help` a command.\n"
    "exit codes: 0 success, 1 failure (compile error, wrong results, I/O), 2 bad usage\n"
    "            or a bad spec, 3 no CUDA device where one is needed\n"
    "Errors go to stderr; progress is shown on stderr only when it is a terminal.\n"
    "environment: UKERN_CACHE_DIR (cache directory), UKERN_DISABLE_DISK_CACHE=1,\n"
    "             UKERN_CUDA_INCLUDE (toolkit headers for NVRTC), CUDA_HOME\n";

int cli_json_errors = 0;
int cli_json_printed = 0;

/* The library's message speaks to a C caller ("...; see uk_last_error_log()");
 * here the log itself follows, so that pointer to a function is dropped. */
static void library_message(char *buf, size_t size) {
  static const char *const pointers[] = {"; see uk_last_error_log()", " (see uk_last_error_log())",
                                         "uk_last_error_log()"};
  snprintf(buf, size, "%s", uk_last_error());
  for (size_t j = 0; j < sizeof pointers / sizeof *pointers; j++) {
    char *at;
    size_t n = strlen(pointers[j]);
    while ((at = strstr(buf, pointers[j])) != NULL) memmove(at, at + n, strlen(at + n) + 1);
  }
}

static void json_error(const char *what, const char *status, const char *message, const char *log) {
  printf("{\"ok\": false, \"error\": {\"what\": ");
  cli_json_str(stdout, what);
  printf(", \"status\": ");
  cli_json_str(stdout, status);
  printf(", \"message\": ");
  cli_json_str(stdout, message);
  printf(", \"log\": ");
  cli_json_str(stdout, log);
  printf("}}\n");
  fflush(stdout);
  cli_json_printed = 1;
}

int cli_fail(const char *what, uk_status s) {
  char msg[4096];
  library_message(msg, sizeof msg);
  const char *log = uk_last_error_log();
  fprintf(stderr, "ukern: %s: %s: %s%s\n", what, uk_status_name(s), msg, *log ? " (the log follows)" : "");
  if (*log) fprintf(stderr, "%s\n", log);
  if (cli_json_errors) json_error(what, uk_status_name(s), msg, log);
  return s == UK_ERR_NO_DEVICE ? CLI_NO_DEVICE : CLI_FAIL;
}

int cli_fail_msg(const char *what, const char *fmt, ...) {
  char msg[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "ukern %s: %s\n", what, msg);
  if (cli_json_errors) json_error(what, "error", msg, "");
  return CLI_FAIL;
}

const char *cli_value(int argc, char **argv, int *k, const char *cmd) {
  if (*k + 1 < argc) return argv[++*k];
  fprintf(stderr, "ukern %s: %s needs a value (see `ukern %s --help`)\n", cmd, argv[*k], cmd);
  return NULL;
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
  cli_stderr_filter_install();
  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
    fputs(usage, argc < 2 ? stderr : stdout);
    return argc < 2 ? CLI_USAGE : CLI_OK;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("ukern %s\n", uk_version());
    return CLI_OK;
  }
  static const struct {
    const char *name;
    int (*run)(int, char **);
    int json; /* takes --json */
  } commands[] = {
      {"info", cli_info, 1},       {"cache", cli_cache, 1}, {"demo", cli_demo, 0},
      {"gen", cli_gen, 0},         {"compile", cli_compile, 1}, {"run", cli_run, 1},
      {"bench", cli_bench, 1},     {"precompile", cli_precompile, 1},
  };
  for (size_t j = 0; j < sizeof commands / sizeof *commands; j++) {
    if (strcmp(argv[1], commands[j].name) != 0) continue;
    for (int k = 2; k < argc && commands[j].json; k++) cli_json_errors |= !strcmp(argv[k], "--json");
    int rc = commands[j].run(argc - 1, argv + 1);
    /* --json promises one JSON object on stdout, failures included: a
     * failure reported only on stderr (a bad flag or spec) gets one here. */
    if (rc != CLI_OK && cli_json_errors && !cli_json_printed) {
      char msg[8192];
      json_error(argv[1], rc == CLI_USAGE ? "usage" : rc == CLI_NO_DEVICE ? "no device" : "error",
                 cli_stderr_text(msg, sizeof msg), "");
    }
    return rc;
  }
  fprintf(stderr, "ukern: unknown command '%s'\n\n%s", argv[1], usage);
  return CLI_USAGE;
}
