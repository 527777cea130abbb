/* ukern bundle create|list|verify: kernel bundles (uk_bundle_* in ukern.h),
 * one read-only file of compiled kernels that a deployment opens instead
 * of compiling. `create --spec` precompiles the specs into a private
 * temporary cache directory (the `precompile` command itself) and packs
 * that; `--from-cache` packs an existing one. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char help[] =
    "usage: ukern bundle create OUT (--spec SPEC... | --from-cache [DIR]) [--arch A[,B...]]...\n"
    "       ukern bundle list FILE\n"
    "       ukern bundle verify FILE\n"
    "create writes one read-only file holding, for every kernel, a fatbin with a cubin\n"
    "per arch (--arch 80,90,90a; repeatable), its name map and the key that finds it.\n"
    "--spec: compiles every specialisation the specs list (what `ukern precompile`\n"
    "takes; no GPU needed with --arch; without it the local GPU's arch). --from-cache:\n"
    "the entries of a disk cache directory (default: the user's), all archs found\n"
    "unless --arch. A context opens bundles through uk_options.bundles,\n"
    "uk_context_load_bundle, $UKERN_BUNDLE (colon-separated) or ukern.load_bundle,\n"
    "and looks them up before its disk cache: calls they serve never compile, and a\n"
    "process they serve entirely never loads NVRTC.\n"
    "list prints each kernel (archs, bytes, names); verify checks every checksum and\n"
    "exits 1 naming the reason for a damaged or foreign file.\n";

#define MAX_ARGS 300

typedef struct bundle_args {
  const char *out;
  const char *specs[MAX_ARGS];
  int nspecs;
  int from_cache;
  const char *dir;
  char arch_text[512]; /* the --arch values joined by commas */
  const char *archs[32];
  char arch_store[32][32];
  int narchs;
} bundle_args;

static int add_archs(bundle_args *a, const char *list) {
  for (const char *p = list;;) {
    size_t n = strcspn(p, ",");
    if (n == 0 || n >= sizeof a->arch_store[0] || a->narchs == 32) {
      fprintf(stderr, "ukern bundle: --arch '%s': give a list such as 80,90,90a\n", list);
      return -1;
    }
    snprintf(a->arch_store[a->narchs], sizeof a->arch_store[0], "%.*s", (int)n, p);
    a->archs[a->narchs] = a->arch_store[a->narchs];
    size_t len = strlen(a->arch_text);
    snprintf(a->arch_text + len, sizeof a->arch_text - len, "%s%.*s", len ? "," : "", (int)n, p);
    a->narchs++;
    if (!p[n]) return 0;
    p += n + 1;
  }
}

static int parse(bundle_args *a, int argc, char **argv) {
  int spec_mode = 0;
  for (int k = 2; k < argc; k++) {
    if (!strcmp(argv[k], "--arch")) {
      const char *v = cli_value(argc, argv, &k, "bundle");
      if (!v || add_archs(a, v) != 0) return CLI_USAGE;
    } else if (!strcmp(argv[k], "--spec")) {
      const char *v = cli_value(argc, argv, &k, "bundle");
      if (!v) return CLI_USAGE;
      spec_mode = 1;
      if (a->nspecs < MAX_ARGS) a->specs[a->nspecs++] = v;
    } else if (!strcmp(argv[k], "--from-cache")) {
      a->from_cache = 1;
      if (k + 1 < argc && argv[k + 1][0] != '-') a->dir = argv[++k];
    } else if (argv[k][0] == '-') {
      fprintf(stderr, "ukern bundle: unknown option '%s'\n%s", argv[k], help);
      return CLI_USAGE;
    } else if (!a->out) {
      a->out = argv[k];
    } else if (spec_mode && a->nspecs < MAX_ARGS) {
      a->specs[a->nspecs++] = argv[k]; /* --spec a.uk b.uk */
    } else {
      fprintf(stderr, "ukern bundle: unexpected argument '%s'\n%s", argv[k], help);
      return CLI_USAGE;
    }
  }
  if (!a->out || a->from_cache == (a->nspecs > 0)) {
    fprintf(stderr, "ukern bundle create: give OUT and either --spec SPEC... or --from-cache [DIR]\n%s", help);
    return CLI_USAGE;
  }
  return CLI_OK;
}

/* Removes the temporary cache directory and what precompile left in it. */
static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *de;
  char path[4200];
  while (d && (de = readdir(d)) != NULL) {
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    unlink(path);
  }
  if (d) closedir(d);
  rmdir(dir);
}

/* The specs' specialisations for every arch, into a fresh private cache
 * directory, by the precompile command (the same keys the calls use). */
static int precompile_into(const bundle_args *a, const char *dir) {
  char *argv[MAX_ARGS + 8];
  int n = 0;
  argv[n++] = (char *)"precompile";
  argv[n++] = (char *)"--dir";
  argv[n++] = (char *)dir;
  if (a->narchs) {
    argv[n++] = (char *)"--arch";
    argv[n++] = (char *)a->arch_text;
  }
  for (int k = 0; k < a->nspecs; k++) argv[n++] = (char *)a->specs[k];
  argv[n] = NULL;
  return cli_precompile(n, argv);
}

static int create(int argc, char **argv) {
  bundle_args *a = calloc(1, sizeof *a);
  if (!a) return cli_fail_msg("bundle", "out of memory");
  int rc = parse(a, argc, argv);
  char tmp[4096] = "";
  int made = 0;
  if (rc == CLI_OK && !a->from_cache) {
    const char *base = getenv("TMPDIR");
    snprintf(tmp, sizeof tmp, "%s/ukern-bundle-XXXXXX", base && *base ? base : "/tmp");
    if (!(made = mkdtemp(tmp) != NULL)) rc = cli_fail_msg("bundle", "cannot make a temporary directory in %s", base ? base : "/tmp");
    else rc = precompile_into(a, tmp);
  }
  char *report = NULL;
  if (rc == CLI_OK) {
    uk_status st = uk_bundle_create_from_cache(a->from_cache ? a->dir : tmp, a->archs, a->narchs, a->out, &report);
    if (st != UK_OK) rc = cli_fail("bundle create", st);
    else printf("%sbundle %s written\n", report, a->out);
  }
  uk_free(report);
  if (made) remove_dir(tmp);
  free(a);
  return rc;
}

static int check(int argc, char **argv, int list) {
  if (argc != 3) {
    fprintf(stderr, "ukern bundle %s: give one FILE\n%s", argv[1], help);
    return CLI_USAGE;
  }
  char *text = NULL;
  uk_status st = uk_bundle_verify(argv[2], &text);
  if (st != UK_OK) return cli_fail(list ? "bundle list" : "bundle verify", st);
  if (list) {
    fputs(text, stdout);
  } else { /* the summary: the last line */
    size_t len = strlen(text);
    if (len && text[len - 1] == '\n') text[--len] = 0;
    char *nl = strrchr(text, '\n');
    printf("%s: good: %s\n", argv[2], nl ? nl + 1 : text);
  }
  uk_free(text);
  return CLI_OK;
}

int cli_bundle(int argc, char **argv) {
  if (cli_wants_help(argc, argv) || argc < 2) {
    fputs(help, argc < 2 ? stderr : stdout);
    return argc < 2 ? CLI_USAGE : CLI_OK;
  }
  if (!strcmp(argv[1], "create")) return create(argc, argv);
  if (!strcmp(argv[1], "list")) return check(argc, argv, 1);
  if (!strcmp(argv[1], "verify")) return check(argc, argv, 0);
  fprintf(stderr, "ukern bundle: unknown subcommand '%s'\n%s", argv[1], help);
  return CLI_USAGE;
}
