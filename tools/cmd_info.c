/* ukern info: what this machine offers ukern. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char help[] =
    "usage: ukern info [--json]\n"
    "Prints the library, NVRTC and driver versions, each CUDA device and its\n"
    "architecture, the disk cache directory with its usage, and the kernel bundles\n"
    "of $UKERN_BUNDLE (kernels, archs; skipped, and why, when built for other archs\n"
    "than the device's; refused, and why, when damaged or foreign). --json prints one\n"
    "JSON object (absent parts are null, with the reason in a \"..._error\" key).\n";

/* "13.0" from 13000. */
static void version_str(int v, char *buf, size_t size) { snprintf(buf, size, "%d.%d", v / 1000, (v % 1000) / 10); }

static void json_key_str(const char *key, const char *value, const char *err) {
  printf(", \"%s\": ", key);
  if (value) {
    cli_json_str(stdout, value);
  } else {
    printf("null, \"%s_error\": ", key);
    cli_json_str(stdout, err);
  }
}

/* The bundles of $UKERN_BUNDLE as a context opens them: *text one line
 * each (kernels, archs, skipped when built for other archs than the
 * device's), or *refused why no context would open them. 0 when
 * $UKERN_BUNDLE names none. *text is the caller's (uk_free). */
static int bundles_text(char **text, const char **refused) {
  const char *env = getenv("UKERN_BUNDLE");
  *text = NULL;
  *refused = NULL;
  if (!env || !*env) return 0;
  uk_options o;
  memset(&o, 0, sizeof o);
  o.disable_disk_cache = 1;
  uk_context *ctx = NULL;
  if (uk_context_create(&o, &ctx) != UK_OK) {
    *refused = uk_last_error();
    return 1;
  }
  if (uk_context_bundles(ctx, text) != UK_OK) *refused = uk_last_error();
  uk_context_destroy(ctx);
  return 1;
}

static void print_bundles(void) {
  char *text = NULL;
  const char *refused = NULL;
  if (!bundles_text(&text, &refused)) return;
  if (refused) printf("bundles  refused: %s\n", refused);
  for (const char *p = text ? text : "", *first = p; *p;) {
    size_t n = strcspn(p, "\n");
    printf("%s%.*s\n", p == first ? "bundles  " : "         ", (int)n, p);
    p += n + (p[n] == '\n');
  }
  uk_free(text);
}

/* , "bundles": {"text": ..., "error": ...} (null without $UKERN_BUNDLE), then the closing brace. */
static void json_bundles_end(void) {
  char *text = NULL;
  const char *refused = NULL;
  printf(", \"bundles\": ");
  if (!bundles_text(&text, &refused)) {
    printf("null}\n");
    return;
  }
  printf("{\"text\": ");
  if (text) cli_json_str(stdout, text);
  else printf("null");
  printf(", \"error\": ");
  if (refused) cli_json_str(stdout, refused);
  else printf("null");
  printf("}}\n");
  uk_free(text);
}

static int info_json(void) {
  char nv[32], drv[32], err[1024];
  int v = 0;
  printf("{\"version\": ");
  cli_json_str(stdout, uk_version());
  int have = uk_nvrtc_version(&v) == UK_OK;
  if (have) version_str(v, nv, sizeof nv);
  else snprintf(err, sizeof err, "%s", uk_last_error());
  json_key_str("nvrtc", have ? nv : NULL, err);
  have = uk_driver_version(&v) == UK_OK;
  if (have) version_str(v, drv, sizeof drv);
  else snprintf(err, sizeof err, "%s", uk_last_error());
  json_key_str("driver", have ? drv : NULL, err);
  int count = 0;
  printf(", \"devices\": [");
  if (uk_device_count(&count) != UK_OK) count = 0, snprintf(err, sizeof err, "%s", uk_last_error());
  else err[0] = 0;
  for (int d = 0; d < count; d++) {
    uk_device_info info;
    printf("%s{\"index\": %d", d ? ", " : "", d);
    if (uk_device_info_get(d, &info) != UK_OK) {
      printf(", \"error\": ");
      cli_json_str(stdout, uk_last_error());
    } else {
      printf(", \"name\": ");
      cli_json_str(stdout, info.name);
      printf(", \"arch\": %d, \"multiprocessors\": %d, \"memory_bytes\": %llu", info.arch, info.multiprocessors,
             (unsigned long long)info.total_memory);
    }
    printf("}");
  }
  printf("]");
  if (err[0]) {
    printf(", \"devices_error\": ");
    cli_json_str(stdout, err);
  }
  char *dir = NULL;
  printf(", \"cache\": ");
  if (uk_cache_default_dir(&dir) != UK_OK) {
    printf("{\"directory\": null, \"error\": ");
    cli_json_str(stdout, uk_last_error());
    printf("}");
    json_bundles_end();
    return CLI_OK;
  }
  uint64_t entries = 0, bytes = 0;
  const char *off = getenv("UKERN_DISABLE_DISK_CACHE");
  printf("{\"directory\": ");
  cli_json_str(stdout, dir);
  printf(", \"disabled\": %s", off && *off == '1' ? "true" : "false");
  if (uk_cache_usage(dir, &entries, &bytes) == UK_OK) {
    printf(", \"entries\": %llu, \"bytes\": %llu}", (unsigned long long)entries, (unsigned long long)bytes);
    json_bundles_end();
  } else {
    printf(", \"entries\": null, \"bytes\": null, \"error\": ");
    cli_json_str(stdout, uk_last_error());
    printf("}");
    json_bundles_end();
  }
  uk_free(dir);
  return CLI_OK;
}

int cli_info(int argc, char **argv) {
  if (cli_wants_help(argc, argv)) {
    fputs(help, stdout);
    return CLI_OK;
  }
  int json = argc == 2 && !strcmp(argv[1], "--json");
  if (argc > 1 && !json) {
    fprintf(stderr, "ukern info: unexpected argument '%s'\n%s", argv[argc > 2 && !strcmp(argv[1], "--json") ? 2 : 1], help);
    return CLI_USAGE;
  }
  if (json) return info_json();
  printf("ukern %s\n", uk_version());
  int v = 0;
  char ver[32];
  if (uk_nvrtc_version(&v) == UK_OK) printf("nvrtc    %s\n", (version_str(v, ver, sizeof ver), ver));
  else printf("nvrtc    unavailable: %s\n", uk_last_error());
  int count = 0;
  if (uk_driver_version(&v) == UK_OK) printf("driver   CUDA %s\n", (version_str(v, ver, sizeof ver), ver));
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
  print_bundles();
  return CLI_OK;
}
