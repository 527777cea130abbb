/* ukern cache stats|list|clear: the disk cache. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "runtime/arch.h"

static const char help[] =
    "usage: ukern cache stats [--dir DIR]\n"
    "       ukern cache list [--dir DIR]\n"
    "       ukern cache clear [--dir DIR]\n"
    "stats: the cache directory, its entry count and size.\n"
    "list:  one line per entry: its hash, size, age, architecture and the kernels\n"
    "       its source defines (or its name expressions).\n"
    "clear: removes every ukern entry (other files in the directory stay).\n"
    "DIR defaults to $UKERN_CACHE_DIR, else $XDG_CACHE_HOME/ukern, else ~/.cache/ukern.\n";

/* What an entry holds, from its key text (see compile_key.c): the arch
 * line, name expressions, and the names after `__global__ void` in the source. */
static void describe(const char *key, size_t len, char *out, size_t size) {
  size_t n = 0;
  out[0] = 0;
  const char *arch = strstr(key, "\narch ");
  uk__arch a = {0, 0}; /* "arch <num> <flags>" (compile_key.c) */
  if (arch) sscanf(arch + 6, "%d %d", &a.num, &a.flags);
  char an[32];
  uk__arch_name(a, an, sizeof an);
  if (arch) n += (size_t)snprintf(out, size, "%s ", an);
  const char *p = key, *end = key + len;
  int names = 0;
  while (p < end && n + 4 < size) {
    const char *g = strstr(p, "__global__");
    const char *ne = strstr(p, "\nname ");
    if (ne && (!g || ne < g)) {
      const char *sp = strchr(ne + 6, ' ');
      const char *nl = strchr(ne + 1, '\n');
      if (sp && nl && sp < nl) n += (size_t)snprintf(out + n, size - n, "%s%.*s", names++ ? ", " : "", (int)(nl - sp - 1), sp + 1);
      p = ne + 1;
      continue;
    }
    if (!g) break;
    const char *q = g + 10;
    while (*q == ' ' || *q == '\n') q++;
    if (!strncmp(q, "__launch_bounds__", 17)) { /* skip its (...) */
      int depth = 0;
      for (; *q; q++) {
        if (*q == '(') depth++;
        if (*q == ')' && --depth == 0) {
          q++;
          break;
        }
      }
      while (*q == ' ' || *q == '\n') q++;
    }
    if (!strncmp(q, "void", 4)) {
      q += 4;
      while (*q == ' ' || *q == '\n') q++;
      const char *s = q;
      while ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') || *q == '_') q++;
      if (q > s && n + 4 < size) n += (size_t)snprintf(out + n, size - n, "%s%.*s", names++ ? ", " : "", (int)(q - s), s);
    }
    p = q;
  }
  if (n >= size) out[size - 1] = 0;
}

static int list(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "ukern cache list: cannot open '%s': ", dir);
    perror(NULL);
    return CLI_FAIL;
  }
  struct dirent *de;
  time_t now = time(NULL);
  int count = 0;
  while ((de = readdir(d))) {
    size_t nl = strlen(de->d_name);
    if (nl != 36 || strcmp(de->d_name + 32, ".ukc") != 0) continue;
    char path[4096], b[32], what[512] = "(unreadable)";
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    FILE *f = fopen(path, "rb");
    unsigned char hdr[32];
    if (f && fread(hdr, 1, 32, f) == 32 && !memcmp(hdr, "UKC1", 4)) {
      uint64_t klen = 0;
      for (int j = 7; j >= 0; j--) klen = klen << 8 | hdr[8 + j];
      if (klen < (1u << 26)) {
        char *key = malloc(klen + 1);
        if (key && fread(key, 1, klen, f) == klen) {
          key[klen] = 0;
          describe(key, klen, what, sizeof what);
        }
        free(key);
      }
    }
    if (f) fclose(f);
    double age = difftime(now, st.st_mtime);
    char ages[32];
    if (age < 120) snprintf(ages, sizeof ages, "%.0f s", age);
    else if (age < 7200) snprintf(ages, sizeof ages, "%.0f min", age / 60);
    else if (age < 172800) snprintf(ages, sizeof ages, "%.0f h", age / 3600);
    else snprintf(ages, sizeof ages, "%.0f d", age / 86400);
    printf("%.12s  %10s  %7s  %s\n", de->d_name, cli_bytes((uint64_t)st.st_size, b, sizeof b), ages, what);
    count++;
  }
  closedir(d);
  printf("%d entr%s in %s\n", count, count == 1 ? "y" : "ies", dir);
  return CLI_OK;
}

int cli_cache(int argc, char **argv) {
  if (cli_wants_help(argc, argv)) {
    fputs(help, stdout);
    return CLI_OK;
  }
  const char *verb = NULL, *dir_arg = NULL;
  for (int k = 1; k < argc; k++) {
    if (!strcmp(argv[k], "--dir") && k + 1 < argc) dir_arg = argv[++k];
    else if (!verb && argv[k][0] != '-') verb = argv[k];
    else {
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
  int rc = CLI_OK;
  uint64_t entries = 0, bytes = 0;
  uk_status s = uk_cache_usage(dir, &entries, &bytes);
  if (s != UK_OK) {
    rc = cli_fail(dir, s);
  } else if (!strcmp(verb, "list")) {
    rc = list(dir);
  } else if (!strcmp(verb, "stats")) {
    char b[32];
    printf("directory  %s\nentries    %llu\nsize       %s\n", dir, (unsigned long long)entries,
           cli_bytes(bytes, b, sizeof b));
    /* A directory that contexts refuse: say so, or every lookup misses silently. */
    if (uk_cache_check_dir(dir) != UK_OK) printf("refused    %s\n", uk_last_error());
  } else {
    s = uk_cache_clear(dir);
    if (s != UK_OK) rc = cli_fail(dir, s);
    else printf("removed %llu entries from %s\n", (unsigned long long)entries, dir);
  }
  uk_free(owned);
  return rc;
}
