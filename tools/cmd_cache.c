/* ukern cache stats|clear: the disk cache. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char help[] =
    "usage: ukern cache stats [--dir DIR]\n"
    "       ukern cache clear [--dir DIR]\n"
    "stats: the cache directory, its entry count and size.\n"
    "clear: removes every ukern entry (other files in the directory stay).\n"
    "DIR defaults to $UKERN_CACHE_DIR, else $XDG_CACHE_HOME/ukern, else ~/.cache/ukern.\n";

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
  if (!verb || (strcmp(verb, "stats") && strcmp(verb, "clear"))) {
    fprintf(stderr, "ukern cache: expected 'stats' or 'clear'\n%s", help);
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
  } else if (!strcmp(verb, "stats")) {
    char b[32];
    printf("directory  %s\nentries    %llu\nsize       %s\n", dir, (unsigned long long)entries,
           cli_bytes(bytes, b, sizeof b));
  } else {
    s = uk_cache_clear(dir);
    if (s != UK_OK) rc = cli_fail(dir, s);
    else printf("removed %llu entries from %s\n", (unsigned long long)entries, dir);
  }
  uk_free(owned);
  return rc;
}
