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

/* What an entry holds, from its key text (see compile_key.c):
 * the arch, and its name expressions or else the kernels its source defines. */
typedef struct entry_info {
  int arch;       /* 0: unknown */
  int arch_flags; /* the key's variant bits: 1 'a', 2 'f', 4 PTX only (compute_XY) */
  int count;
  char names[32][128];
} entry_info;

/* The entry's target as NVRTC spells it: sm_90, sm_90a, sm_100f, compute_90. */
static void entry_arch(const entry_info *e, char *buf, size_t size) {
  snprintf(buf, size, "%s_%d%s", e->arch_flags & 4 ? "compute" : "sm", e->arch,
           e->arch_flags & 1 ? "a" : e->arch_flags & 2 ? "f" : "");
}

static void add_name(entry_info *e, const char *s, size_t n) {
  if (e->count == 32 || n == 0) return;
  if (n >= sizeof e->names[0]) n = sizeof e->names[0] - 1;
  memcpy(e->names[e->count], s, n);
  e->names[e->count++][n] = 0;
}

static int ident_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

/* The kernel name after `__global__`: skips `void` and attributes such as
 * `__launch_bounds__(256)` wherever they stand (reductions put them after
 * `void`); the name is the identifier that an '(' follows. */
static void global_name(entry_info *e, const char *q, const char *end) {
  for (int words = 0; q < end && words < 8; words++) {
    while (q < end && (*q == ' ' || *q == '\n' || *q == '\t')) q++;
    const char *w = q;
    while (q < end && ident_char(*q)) q++;
    if (q == w) return;
    const char *after = q;
    while (after < end && (*after == ' ' || *after == '\n' || *after == '\t')) after++;
    if (after < end && *after == '(') {
      if (!(q - w > 4 && !strncmp(w, "__", 2) && !strncmp(q - 2, "__", 2))) { /* not __attr__(...) */
        add_name(e, w, (size_t)(q - w));
        return;
      }
      for (int depth = 0; after < end; after++) { /* skip the attribute's (...) */
        if (*after == '(') depth++;
        if (*after == ')' && --depth == 0) break;
      }
      q = after + 1;
    }
  }
}

/* A length-prefixed part at p ("<tag> <len> <bytes>\n", see compile_key.c):
 * its bytes in *data, *n; returns where the next part starts, or NULL. */
static const char *length_part(const char *p, const char *end, const char **data, size_t *n) {
  const char *sp = memchr(p, ' ', (size_t)(end - p));
  if (!sp) return NULL;
  char *num_end = NULL;
  unsigned long long v = strtoull(sp + 1, &num_end, 10);
  if (num_end == sp + 1 || num_end >= end || *num_end != ' ' || v > (size_t)(end - num_end - 1)) return NULL;
  *data = num_end + 1;
  *n = (size_t)v;
  return *data + v + 1;
}

static void describe(const char *key, size_t len, entry_info *e) {
  static const char *const parts[] = {"name ", "source ", "option ", "files ", "include "};
  memset(e, 0, sizeof *e);
  const char *p = key, *end = key + len;
  const char *src = NULL;
  size_t src_len = 0;
  int named = 0;
  while (p && p < end) {
    size_t j = 0;
    while (j < sizeof parts / sizeof *parts && strncmp(p, parts[j], strlen(parts[j])) != 0) j++;
    if (j < sizeof parts / sizeof *parts) {
      const char *data;
      size_t n;
      const char *next = length_part(p, end, &data, &n);
      if (!next) break;
      if (j == 0) add_name(e, data, n), named = 1;
      if (j == 1) src = data, src_len = n;
      p = next;
      continue;
    }
    if (!strncmp(p, "arch ", 5)) sscanf(p + 5, "%d %d", &e->arch, &e->arch_flags);
    if (!strncmp(p, "arch_flags ", 11)) e->arch_flags = atoi(p + 11); /* entries of older versions */
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    p = nl ? nl + 1 : NULL;
  }
  if (named || !src) return;
  const char *src_end = src + src_len;
  for (const char *g = src; g < src_end; g++) {
    g = memmem(g, (size_t)(src_end - g), "__global__", 10);
    if (!g) break;
    global_name(e, g + 10, src_end);
  }
}

/* Reads an entry's key (a ukern entry file: "UKC" magic, key length at 8). */
static int read_entry(const char *path, struct stat *st, entry_info *e) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  int ok = -1;
  unsigned char hdr[32];
  if (fstat(fd, st) == 0 && S_ISREG(st->st_mode) && read(fd, hdr, 32) == 32 && !memcmp(hdr, "UKC", 3)) {
    uint64_t klen = 0;
    for (int j = 7; j >= 0; j--) klen = klen << 8 | hdr[8 + j];
    char *key = klen < (1u << 26) ? malloc(klen + 1) : NULL;
    if (key && pread(fd, key, klen, 32) == (ssize_t)klen) {
      key[klen] = 0;
      describe(key, klen, e);
      ok = 0;
    }
    free(key);
  }
  close(fd);
  return ok;
}

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
    entry_info e;
    int readable = read_entry(path, &st, &e) == 0;
    if (!readable && (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))) continue;
    double age = difftime(now, st.st_mtime);
    if (json) {
      printf("%s\n  {\"file\": ", count ? "," : "");
      cli_json_str(stdout, de->d_name);
      char an[32] = "";
      if (readable && e.arch) entry_arch(&e, an, sizeof an);
      printf(", \"bytes\": %lld, \"age_s\": %.0f, \"readable\": %s, \"arch\": ", (long long)st.st_size, age,
             readable ? "true" : "false");
      cli_json_str(stdout, an);
      printf(", \"kernels\": [");
      for (int j = 0; readable && j < e.count; j++) {
        if (j) printf(", ");
        cli_json_str(stdout, e.names[j]);
      }
      printf("]}");
      count++;
      continue;
    }
    char ages[32], what[1024] = "(unreadable)";
    if (age < 120) snprintf(ages, sizeof ages, "%.0f s", age);
    else if (age < 7200) snprintf(ages, sizeof ages, "%.0f min", age / 60);
    else if (age < 172800) snprintf(ages, sizeof ages, "%.0f h", age / 3600);
    else snprintf(ages, sizeof ages, "%.0f d", age / 86400);
    if (readable) {
      char an[32] = "?";
      if (e.arch) entry_arch(&e, an, sizeof an);
      int n = snprintf(what, sizeof what, "%s", an);
      for (int j = 0; j < e.count && n > 0 && (size_t)n < sizeof what; j++)
        n += snprintf(what + n, sizeof what - (size_t)n, "%s%s", j ? ", " : " ", e.names[j]);
    }
    printf("%.12s  %10s  %7s  %s\n", de->d_name, cli_bytes((uint64_t)st.st_size, b, sizeof b), ages, what);
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
