/* ukern cache stats|list|clear: the disk cache. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static const char help[] =
    "usage: ukern cache stats [--dir DIR] [--json]\n"
    "       ukern cache list [--dir DIR] [--json]\n"
    "       ukern cache clear [--dir DIR] [--json]\n"
    "stats: the cache directory, its entry count and size.\n"
    "list:  one line per entry: its hash, size, age, architecture and the kernels\n"
    "       its source defines (or its name expressions).\n"
    "clear: removes every ukern entry (other files in the directory stay).\n"
    "DIR defaults to $UKERN_CACHE_DIR, else $XDG_CACHE_HOME/ukern, else ~/.cache/ukern.\n"
    "A DIR given with --dir must exist. --json prints one JSON object instead.\n";

static int list(const char *dir, int json) {
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "ukern cache list: cannot open '%s': %s\n", dir, strerror(errno));
    return CLI_FAIL;
  }
  struct dirent *de;
  time_t now = time(NULL);
  int count = 0;
  if (json) {
    printf("{\"directory\": ");
    cli_json_str(stdout, dir);
    printf(", \"entries\": [");
  }
  while ((de = readdir(d))) {
    size_t nl = strlen(de->d_name);
    if (nl != 36 || strcmp(de->d_name + 32, ".ukc") != 0) continue;
    char path[4096], b[32];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    struct stat st;
    if (lstat(path, &st) != 0) continue;
    uk_cache_entry_info e;
    int readable = uk_cache_entry_describe(path, &e) == UK_OK;
    if (!readable && !S_ISREG(st.st_mode)) continue;
    double age = difftime(now, st.st_mtime);
    if (json) {
      printf("%s\n  {\"file\": ", count ? "," : "");
      cli_json_str(stdout, de->d_name);
      printf(", \"bytes\": %lld, \"age_s\": %.0f, \"readable\": %s, \"arch\": ", (long long)st.st_size, age,
             readable ? "true" : "false");
      cli_json_str(stdout, readable ? e.arch : "");
      printf(", \"kernels\": [");
      for (int j = 0; readable && j < e.num_kernels; j++) {
        if (j) printf(", ");
        cli_json_str(stdout, e.kernels[j]);
      }
      printf("]}");
    } else {
      char ages[32], what[1024] = "(unreadable)";
      if (age < 120) snprintf(ages, sizeof ages, "%.0f s", age);
      else if (age < 7200) snprintf(ages, sizeof ages, "%.0f min", age / 60);
      else if (age < 172800) snprintf(ages, sizeof ages, "%.0f h", age / 3600);
      else snprintf(ages, sizeof ages, "%.0f d", age / 86400);
      if (readable) {
        int n = snprintf(what, sizeof what, "%s", e.arch[0] ? e.arch : "?");
        for (int j = 0; j < e.num_kernels && n > 0 && (size_t)n < sizeof what; j++)
          n += snprintf(what + n, sizeof what - (size_t)n, "%s%s", j ? ", " : " ", e.kernels[j]);
      }
      printf("%.12s  %10s  %7s  %s\n", de->d_name, cli_bytes((uint64_t)st.st_size, b, sizeof b), ages, what);
    }
    if (readable) uk_free(e.kernels);
    count++;
  }
  closedir(d);
  if (json) printf("%s], \"count\": %d}\n", count ? "\n" : "", count);
  else printf("%d entr%s in %s\n", count, count == 1 ? "y" : "ies", dir);
  return CLI_OK;
}

int cli_cache(int argc, char **argv) {
  if (cli_wants_help(argc, argv)) {
    fputs(help, stdout);
    return CLI_OK;
  }
  const char *verb = NULL, *dir_arg = NULL;
  int json = 0;
  for (int k = 1; k < argc; k++) {
    if (!strcmp(argv[k], "--dir")) {
      if (!(dir_arg = cli_value(argc, argv, &k, "cache"))) return CLI_USAGE;
    } else if (!strcmp(argv[k], "--json")) {
      json = cli_json_errors = 1;
    } else if (!verb && argv[k][0] != '-') {
      verb = argv[k];
    } else {
      fprintf(stderr, "ukern cache: unexpected argument '%s'\n%s", argv[k], help);
      return CLI_USAGE;
    }
  }
  if (!verb || (strcmp(verb, "stats") && strcmp(verb, "clear") && strcmp(verb, "list"))) {
    fprintf(stderr, "ukern cache: expected 'stats', 'list' or 'clear'\n%s", help);
    return CLI_USAGE;
  }
  char *owned = NULL;
  const char *dir = dir_arg;
  if (!dir) {
    uk_status s = uk_cache_default_dir(&owned);
    if (s != UK_OK) return cli_fail("cache directory", s);
    dir = owned;
  }
  /* A named directory that is not there is a mistake (a typo would
   * otherwise read as an empty cache); the default one may not exist yet. */
  struct stat st;
  if (dir_arg && stat(dir_arg, &st) != 0) {
    return cli_fail_msg("cache", "--dir '%s': %s", dir_arg, strerror(errno));
  }
  if (dir_arg && !S_ISDIR(st.st_mode)) return cli_fail_msg("cache", "--dir '%s' is not a directory", dir_arg);
  int rc = CLI_OK;
  uint64_t entries = 0, bytes = 0;
  uk_status s = uk_cache_usage(dir, &entries, &bytes);
  if (s != UK_OK) {
    rc = cli_fail(dir, s);
  } else if (!strcmp(verb, "list")) {
    rc = list(dir, json);
  } else if (!strcmp(verb, "stats")) {
    char b[32];
    if (json) {
      printf("{\"directory\": ");
      cli_json_str(stdout, dir);
      printf(", \"entries\": %llu, \"bytes\": %llu, \"refused\": ", (unsigned long long)entries,
             (unsigned long long)bytes);
      if (uk_cache_check_dir(dir) != UK_OK) cli_json_str(stdout, uk_last_error());
      else printf("null");
      printf("}\n");
    } else {
      printf("directory  %s\nentries    %llu\nsize       %s\n", dir, (unsigned long long)entries,
             cli_bytes(bytes, b, sizeof b));
    }
    /* A directory that contexts refuse: say so, or every lookup misses silently. */
    if (uk_cache_check_dir(dir) != UK_OK && !json) printf("refused    %s\n", uk_last_error());
  } else {
    s = uk_cache_clear(dir);
    if (s != UK_OK) {
      rc = cli_fail(dir, s);
    } else if (json) {
      printf("{\"directory\": ");
      cli_json_str(stdout, dir);
      printf(", \"removed\": %llu}\n", (unsigned long long)entries);
    } else {
      printf("removed %llu entries from %s\n", (unsigned long long)entries, dir);
    }
  }
  uk_free(owned);
  return rc;
}
