/* ukern gen: the CUDA source of a kernel for given dtypes and shapes. No GPU
 * needed: arrays get fake addresses that are never dereferenced. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char help[] =
    "usage: ukern gen [SPEC] [--FIELD VALUE]... [--case N] [-o FILE]\n"
    "Prints the CUDA source that a call of the kernel with the spec's inputs (the\n"
    "first line of `inputs`, or line N with --case N, counting from 0) would compile;\n"
    "for a fusion, every kernel of its plan in order, each after a banner line.\n"
    "Without SPEC every field comes from flags, e.g.\n"
    "  ukern gen --in 'T x, T y' --out 'T z' --op 'z = (x - y) * (x - y)' \\\n"
    "            --name squared_diff --inputs 'float32[1024], float32[1024]'\n"
    "\n";

typedef struct gen_args {
  const char *path, *outfile;
  long long which;
} gen_args;

static int own(void *user, int argc, char **argv, int *k) {
  gen_args *a = user;
  if (!strcmp(argv[*k], "--case") && *k + 1 < argc) {
    if (cli_parse_int(argv[++*k], 0, 1 << 20, &a->which) != 0) {
      fprintf(stderr, "ukern gen: --case '%s' is not a non-negative integer\n", argv[*k]);
      return -1;
    }
    return 1;
  }
  if (!strcmp(argv[*k], "-o") && *k + 1 < argc) {
    a->outfile = argv[++*k];
    return 1;
  }
  if (argv[*k][0] != '-' && !a->path) {
    a->path = argv[*k];
    return 1;
  }
  return 0;
}

int cli_prepare_case(cli_spec *s, const char *path, long long which, uk_context *ctx, const char *extra,
                     cli_kernel *k, cli_case *c) {
  int rc = CLI_OK;
  int any = path != NULL;
  for (int f = 0; f < F_COUNT_ && !any; f++) any = s->f[f] != NULL;
  if (!any) { /* else the first missing field would be blamed */
    fputs("ukern: no kernel given: name a spec file (e.g. examples/specs/squared_diff.uk) or give\n"
          "  the fields as flags (--in, --out, --op, --inputs, ...); `ukern gen --help` describes both\n",
          stderr);
    return CLI_USAGE;
  }
  if (path && (rc = cli_spec_load(s, path)) != CLI_OK) return rc;
  if ((rc = cli_spec_finish(s)) != CLI_OK) return rc;
  if ((rc = cli_kernel_create(ctx, s, extra, k)) != CLI_OK) return rc;
  memset(c, 0, sizeof *c);
  if (s->kind != CLI_MODULE) {
    int ncases = cli_spec_cases(s);
    char line[4096];
    if (ncases == 0 && k->nin > 0) {
      fprintf(stderr, "ukern: %s: no `inputs`: give the argument dtypes and shapes, e.g. inputs: float32[1024]\n",
              s->origin[0] ? s->origin : "command line");
      return CLI_USAGE;
    }
    if (which >= ncases && ncases > 0) {
      fprintf(stderr, "ukern: --case %lld: the spec has %d input line%s\n", which, ncases, ncases == 1 ? "" : "s");
      return CLI_USAGE;
    }
    const char *l = ncases ? cli_spec_case(s, (int)which, line, sizeof line) : "";
    if ((rc = cli_case_parse(k, l, c)) != CLI_OK) return rc;
    cli_case_fake_pointers(c);
  }
  return CLI_OK;
}

int cli_gen(int argc, char **argv) {
  if (cli_wants_help(argc, argv)) {
    fputs(help, stdout);
    fputs(cli_spec_help, stdout);
    return CLI_OK;
  }
  gen_args a = {NULL, NULL, 0};
  cli_spec s;
  memset(&s, 0, sizeof s);
  cli_kernel k;
  memset(&k, 0, sizeof k);
  cli_case *c = calloc(1, sizeof *c);
  uk_context *ctx = NULL;
  char *src = NULL;
  int rc = c ? cli_spec_args(argc, argv, &s, own, &a) : CLI_FAIL;
  if (rc != CLI_OK) goto out;
  uk_options o;
  memset(&o, 0, sizeof o);
  o.disable_disk_cache = 1;
  o.arch = 90; /* generation does not depend on it; never ask the driver */
  uk_status st = uk_context_create(&o, &ctx);
  if (st != UK_OK) {
    rc = cli_fail("context", st);
    goto out;
  }
  if ((rc = cli_prepare_case(&s, a.path, a.which, ctx, NULL, &k, c)) != CLI_OK ||
      (rc = cli_kernel_source(&k, c, &src)) != CLI_OK)
    goto out;
  FILE *f = a.outfile ? fopen(a.outfile, "w") : stdout;
  if (!f) {
    fprintf(stderr, "ukern gen: cannot write '%s': ", a.outfile);
    perror(NULL);
    rc = CLI_FAIL;
    goto out;
  }
  fputs(src, f);
  if (a.outfile && fclose(f) != 0) {
    fprintf(stderr, "ukern gen: error writing '%s'\n", a.outfile);
    rc = CLI_FAIL;
  }
out:
  uk_free(src);
  cli_kernel_destroy(&k);
  uk_context_destroy(ctx);
  cli_spec_free(&s);
  free(c);
  return rc;
}
