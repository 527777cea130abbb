/* ukern info: what this machine offers ukern. */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

static const char help[] =
    "usage: ukern info\n"
    "Prints the library, NVRTC and driver versions, each CUDA device and its\n"
    "architecture, and the disk cache directory with its usage.\n";

int cli_info(int argc, char **argv) {
  if (cli_wants_help(argc, argv)) {
    fputs(help, stdout);
    return CLI_OK;
  }
  if (argc > 1) {
    fprintf(stderr, "ukern info: unexpected argument '%s'\n%s", argv[1], help);
    return CLI_USAGE;
  }
  printf("ukern %s\n", uk_version());
  int v = 0;
  if (uk_nvrtc_version(&v) == UK_OK) printf("nvrtc    %d.%d\n", v / 1000, (v % 1000) / 10);
  else printf("nvrtc    unavailable: %s\n", uk_last_error());
  int count = 0;
  if (uk_driver_version(&v) == UK_OK) printf("driver   CUDA %d.%d\n", v / 1000, (v % 1000) / 10);
  if (uk_device_count(&count) != UK_OK) {
    printf("devices  none: %s\n", uk_last_error());
  } else {
    printf("devices  %d\n", count);
    for (int d = 0; d < count; d++) {
      uk_device_info info;
      if (uk_device_info_get(d, &info) != UK_OK) {
        printf("  [%d] unavailable: %s\n", d, uk_last_error());
        continue;
      }
      char mem[32];
      printf("  [%d] %s  sm_%d  %d SMs  %s\n", d, info.name, info.arch, info.multiprocessors,
             cli_bytes(info.total_memory, mem, sizeof mem));
    }
  }
  char *dir = NULL;
  if (uk_cache_default_dir(&dir) != UK_OK) {
    printf("cache    unavailable: %s\n", uk_last_error());
    return CLI_OK;
  }
  uint64_t entries = 0, bytes = 0;
  const char *off = getenv("UKERN_DISABLE_DISK_CACHE");
  if (uk_cache_usage(dir, &entries, &bytes) == UK_OK) {
    char b[32];
    printf("cache    %s  %llu entries, %s%s\n", dir, (unsigned long long)entries,
           cli_bytes(bytes, b, sizeof b), off && *off == '1' ? "  (disabled by UKERN_DISABLE_DISK_CACHE)" : "");
  } else {
    printf("cache    %s  (%s)\n", dir, uk_last_error());
  }
  uk_free(dir);
  return CLI_OK;
}
