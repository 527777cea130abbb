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
    "list:  one line per entry: its hash, architecture, size, last use, and what it\n"
    "       holds: the kind, name, dtypes and variant of a generated kernel, or the\n"
    "       kernels a module's source defines (or its name expressions).\n"
    "clear: removes every ukern entry (other files in the directory stay).\n"
    "DIR defaults to $UKERN_CACHE_DIR, else $XDG_CACHE_HOME/ukern, else ~/.cache/ukern.\n"
    "A DIR given with --dir must exist; the default one that does not exist yet is\n"
    "an empty cache (stats and list agree: 0 entries). --json prints one JSON object\n"
    "instead; bytes of names that are not UTF-8 appear as \\udcXX (PEP 383).\n";

/* An entry's file name, as the library names them: <32 lowercase hex>.ukc. */
static int entry_name(const char *n) {
  if (strlen(n) != 36 || strcmp(n + 32, ".ukc") != 0) return 0;
  for (int i = 0; i < 32; i++)
    if (!((n[i] >= '0' && n[i] <= '9') || (n[i] >= 'a' && n[i] <= 'f'))) return 0;
  return 1;
}

static const char *ago(double s, char *buf, size_t size) {
  if (s < 120) snprintf(buf, size, "%.0f s ago", s);
  else if (s < 7200) snprintf(buf, size, "%.0f min ago", s / 60);
  else if (s < 172800) snprintf(buf, size, "%.0f h ago", s / 3600);
  else snprintf(buf, size, "%.0f d ago", s / 86400);
  return buf;
}

static void json_field(const char *key, const char *value) {
  printf(", \"%s\": ", key);
  cli_json_str(stdout, value);
}

/* One entry: what tells it from the others (kind, name, dtypes, variant,
 * arch), its size and its last use (the cache marks a hit by the file's
 * mtime, to the minute). */
static void list_entry(const char *file, const struct stat *st, const uk_cache_entry_info *e, int readable,
                       time_t now, int json, int first) {
  double age = difftime(now, st->st_mtime);
  if (json) {
    char when[32];
    struct tm tm;
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&st->st_mtime, &tm));
    printf("%s\n  {\"file\": ", first ? "" : ",");
    cli_json_str(stdout, file);
    printf(", \"bytes\": %lld, \"last_used\": \"%s\", \"last_used_s_ago\": %.0f, \"readable\": %s",
           (long long)st->st_size, when, age, readable ? "true" : "false");
    json_field("arch", readable ? e->arch : "");
    json_field("kind", readable ? e->kind : "");
    json_field("name", readable ? e->name : "");
    json_field("dtypes", readable ? e->dtypes : "");
    json_field("variant", readable ? e->variant : "");
    printf(", \"kernels\": [");
    for (int j = 0; readable && j < e->num_kernels; j++) {
      if (j) printf(", ");
      cli_json_str(stdout, e->kernels[j]);
    }
    printf("]}");
    return;
  }
  char b[32], a[32], what[1024] = "(unreadable)";
  if (readable && e->name[0]) {
    snprintf(what, sizeof what, "%s %s (%s)%s%s", e->kind, e->name, e->dtypes, e->variant[0] ? ": " : "",
             e->variant);
  } else if (readable) { /* a module: its kernels */
    int n = snprintf(what, sizeof what, "%s", e->kind);
    for (int j = 0; j < e->num_kernels && n > 0 && (size_t)n < sizeof what; j++)
      n += snprintf(what + n, sizeof what - (size_t)n, "%s%s", j ? ", " : " ", e->kernels[j]);
  }
  printf("%.12s  %-8s %10s  %11s  %s\n", file, readable && e->arch[0] ? e->arch : "?",
         cli_bytes((uint64_t)st->st_size, b, sizeof b), ago(age, a, sizeof a), what);
}

/* Lists what `uk_cache_usage` counts (regular files named as entries): a
 * directory that does not exist yet is an empty cache, as for stats. */
static int list(const char *dir, int json) {
  DIR *d = opendir(dir);
  if (!d && errno != ENOENT) {
    return cli_fail_msg("cache list", "cannot open '%s': %s", dir, strerror(errno));
  }
  time_t now = time(NULL);
  int count = 0;
  if (json) {
    printf("{\"directory\": ");
    cli_json_str(stdout, dir);
    printf(", \"exists\": %s, \"entries\": [", d ? "true" : "false");
  } else if (d) {
    printf("%-12s  %-8s %10s  %11s  %s\n", "entry", "arch", "size", "last used", "kind name (dtypes): variant");
  }
  struct dirent *de;
  while (d && (de = readdir(d))) {
    if (!entry_name(de->d_name)) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    uk_cache_entry_info e;
    int readable = uk_cache_entry_describe(path, &e) == UK_OK;
    list_entry(de->d_name, &st, &e, readable, now, json, count == 0);
    if (readable) uk_free(e.kernels);
    count++;
  }
  if (d) closedir(d);
  if (json) printf("%s], \"count\": %d}\n", count ? "\n" : "", count);
  else printf("%d entr%s in %s%s\n", count, count == 1 ? "y" : "ies", dir, d ? "" : " (not created yet)");
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
    int exists = stat(dir, &st) == 0;
    if (json) {
      printf("{\"directory\": ");
      cli_json_str(stdout, dir);
      printf(", \"exists\": %s, \"entries\": %llu, \"bytes\": %llu, \"refused\": ", exists ? "true" : "false",
             (unsigned long long)entries, (unsigned long long)bytes);
      if (uk_cache_check_dir(dir) != UK_OK) cli_json_str(stdout, uk_last_error());
      else printf("null");
      printf("}\n");
    } else {
      printf("directory  %s%s\nentries    %llu\nsize       %s\n", dir, exists ? "" : " (not created yet)",
             (unsigned long long)entries,
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
