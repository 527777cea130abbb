/* ukern precompile: fills the disk cache ahead of time, for deployments that
 * must not compile at run time. Every line of a spec's `inputs` is one
 * specialisation; the entries are keyed exactly as the calls look them up. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

static const char help[] =
    "usage: ukern precompile [--arch A[,B...]]... [--dir DIR] [--fatbin OUT] [-j N] [--json] SPEC|FILE.cu...\n"
    "Compiles every specialisation the specs list (each line of `inputs`; modules\n"
    "once) into the disk cache, so that later calls with those dtypes, shapes and\n"
    "layouts load code instead of compiling it. --arch (repeatable, or a comma\n"
    "list such as 80,90,90a) names the architectures: 90, 90a, sm_90a, 100f,\n"
    "compute_90; no GPU is needed then. Without --arch: the local GPU's.\n"
    "DIR defaults to $UKERN_CACHE_DIR, else $XDG_CACHE_HOME/ukern, else ~/.cache/ukern;\n"
    "the deployment must use the same directory, library version and NVRTC version.\n"
    "--fatbin OUT (one module: a .cu file or a module spec) also writes one fatbin\n"
    "holding the module's image for every --arch (cubins; PTX for compute_XY), which\n"
    "the driver loads on whichever of those GPUs runs it (uk_module_from_file).\n"
    "-j N: N processes compile the specialisations in parallel (default 1; one with --fatbin).\n"
    "--json prints one JSON object: {\"ok\": true, \"results\": [{arch, result, ms, what}]}.\n";

#define MAX_ARCHS 16
#define MAX_SPECS 256

typedef struct pre_args {
  char archs[MAX_ARCHS][32]; /* as given; uk_context_create checks them */
  int narchs;
  const char *dir;
  const char *paths[MAX_SPECS];
  int npaths;
  int json;
  const char *fatbin;
  int jobs, job;  /* -j: this process compiles items job, job + jobs, ... */
  long item;      /* items seen so far (every process walks them all in order) */
} pre_args;

/* Whether the next item (a module, or one `inputs` line for one arch) is
 * this process's. */
static int mine(pre_args *a) { return a->item++ % a->jobs == a->job; }

/* With --json, one result object per line of work, collected here and
 * printed in one document at the end (with -j, the children's pieces are
 * read back through pipes). */
static FILE *json_results;
static int json_count;

/* "80,90,90a" (checked when the contexts are made: check_archs). */
static int parse_archs(pre_args *a, const char *list) {
  for (const char *p = list;;) {
    size_t n = strcspn(p, ",");
    if (a->narchs == MAX_ARCHS) {
      fprintf(stderr, "ukern precompile: more than %d architectures\n", MAX_ARCHS);
      return -1;
    }
    if (n == 0 || n >= sizeof a->archs[0]) {
      fprintf(stderr, "ukern precompile: --arch: an entry is %s\n", n ? "too long" : "empty");
      return -1;
    }
    snprintf(a->archs[a->narchs++], sizeof a->archs[0], "%.*s", (int)n, p);
    if (!p[n]) return 0;
    p += n + 1;
  }
}

/* A context compiling for archs[j] into the cache directory. */
static uk_status arch_context(const pre_args *a, int j, uk_context **ctx) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch_name = a->archs[j];
  o.cache_dir = a->dir;
  return uk_context_create(&o, ctx);
}

/* The library's check of every --arch, before any work (or fork). */
static int check_archs(const pre_args *a) {
  for (int j = 0; j < a->narchs; j++) {
    uk_context *ctx = NULL;
    uk_status st = arch_context(a, j, &ctx);
    uk_context_destroy(ctx);
    if (st == UK_ERR_INVALID) return cli_arch_error("precompile");
    if (st != UK_OK) return cli_fail("context", st);
  }
  return CLI_OK;
}

static int own(void *user, int argc, char **argv, int *k) {
  pre_args *a = user;
  if (!strcmp(argv[*k], "--arch")) {
    const char *v = cli_value(argc, argv, k, "precompile");
    return v && parse_archs(a, v) == 0 ? 1 : -1;
  }
  if (!strcmp(argv[*k], "--fatbin")) return (a->fatbin = cli_value(argc, argv, k, "precompile")) ? 1 : -1;
  if (!strcmp(argv[*k], "--dir")) return (a->dir = cli_value(argc, argv, k, "precompile")) ? 1 : -1;
  if (!strcmp(argv[*k], "--json")) return a->json = cli_json_errors = 1;
  if (!strcmp(argv[*k], "-j") || !strcmp(argv[*k], "--jobs")) {
    const char *v = cli_value(argc, argv, k, "precompile");
    long long n;
    if (!v) return -1;
    if (cli_parse_int(v, 1, 256, &n) != 0) {
      fprintf(stderr, "ukern precompile: -j '%s' is not a number of processes (1 to 256)\n", v);
      return -1;
    }
    a->jobs = (int)n;
    return 1;
  }
  if (argv[*k][0] != '-' && a->npaths < MAX_SPECS) {
    a->paths[a->npaths++] = argv[*k];
    return 1;
  }
  return 0;
}

/* Compiles one kernel through the context's caches with the library's own
 * calls (the exact entries a call, or uk_module_from_source, looks up);
 * reports what happened. */
static int one(uk_context *ctx, cli_kernel *k, cli_case *c, const char *arch, const char *label) {
  char an[64], what[700];
  cli_arch_name(arch, an, sizeof an);
  snprintf(what, sizeof what, "compiling %s for %s", label, an);
  uk_cache_stats before, after;
  uk_context_cache_stats(ctx, &before);
  uk_status st;
  cli_progress_begin("%s", what);
  double t0 = cli_now_ms();
  if (c) {
    st = cli_kernel_precompile(k, c);
  } else {
    uk_module_options mo;
    uk_module *m = NULL;
    cli_module_options(k, &mo);
    st = uk_module_from_source(ctx, k->spec->f[F_source], &mo, &m);
    uk_module_destroy(m);
  }
  double ms = cli_now_ms() - t0;
  cli_progress_end();
  if (st != UK_OK) return cli_fail(label, st);
  uk_context_cache_stats(ctx, &after);
  if (after.store_failures > before.store_failures) {
    fprintf(stderr, "ukern precompile: %s: could not write the cache entry to %s\n", label,
            uk_context_cache_dir(ctx));
    return CLI_FAIL;
  }
  const char *how = after.compiles > before.compiles ? "compiled" : "already cached";
  if (json_results) {
    fprintf(json_results, "%s\n  {\"arch\": \"%s\", \"result\": \"%s\", \"ms\": %.3f, \"what\": ",
            json_count++ ? "," : "", an, how, ms);
    cli_json_str(json_results, label);
    fputc('}', json_results);
  } else {
    printf("%s  %-14s %8.1f ms  %s\n", an, how, ms, label);
  }
  return CLI_OK;
}

static int precompile_spec(pre_args *a, const char *path, const char *arch, uk_context *ctx) {
  cli_spec s;
  memset(&s, 0, sizeof s);
  cli_kernel k;
  memset(&k, 0, sizeof k);
  cli_case *c = calloc(1, sizeof *c);
  int rc = c ? cli_spec_load(&s, path) : CLI_FAIL;
  if (rc == CLI_OK) rc = cli_spec_finish(&s);
  if (rc == CLI_OK) rc = cli_kernel_create(ctx, &s, NULL, &k);
  if (rc != CLI_OK) goto out;
  if (s.kind == CLI_MODULE) {
    if (mine(a)) rc = one(ctx, &k, NULL, arch, path);
    goto out;
  }
  int ncases = cli_spec_cases(&s);
  if (ncases == 0) {
    fprintf(stderr, "ukern precompile: %s: no `inputs` lines: nothing to precompile\n", path);
    rc = CLI_USAGE;
    goto out;
  }
  for (int i = 0; i < ncases && rc == CLI_OK; i++) {
    if (!mine(a)) continue;
    char line[4096], label[4600];
    cli_spec_case(&s, i, line, sizeof line);
    if ((rc = cli_case_parse(&k, line, c)) != CLI_OK) break;
    cli_case_fake_pointers(c);
    snprintf(label, sizeof label, "%s: %s(%s)", path, s.f[F_name] ? s.f[F_name] : "kernel", line);
    rc = one(ctx, &k, c, arch, label);
  }
out:
  cli_kernel_destroy(&k);
  cli_spec_free(&s);
  free(c);
  return rc;
}

/* The fatbin of the module for every arch (uk_module_fatbin: the compiles
 * above are cache hits), and what it holds. */
static int write_fatbin(const pre_args *a) {
  cli_spec s;
  memset(&s, 0, sizeof s);
  cli_kernel k;
  memset(&k, 0, sizeof k);
  uk_context *ctx = NULL;
  void *fat = NULL;
  size_t size = 0, sizes[MAX_ARCHS];
  const char *archs[MAX_ARCHS];
  for (int j = 0; j < a->narchs; j++) archs[j] = a->archs[j];
  int rc = cli_spec_load(&s, a->paths[0]);
  if (rc == CLI_OK) rc = cli_spec_finish(&s);
  if (rc == CLI_OK && s.kind != CLI_MODULE) {
    fprintf(stderr, "ukern precompile: --fatbin: %s is not a module (give a .cu file or a module spec)\n",
            a->paths[0]);
    rc = CLI_USAGE;
  }
  uk_status st = UK_OK;
  if (rc == CLI_OK && (st = arch_context(a, 0, &ctx)) != UK_OK) rc = cli_fail("context", st);
  if (rc == CLI_OK) rc = cli_kernel_create(ctx, &s, NULL, &k);
  if (rc == CLI_OK) {
    uk_module_options mo;
    cli_module_options(&k, &mo);
    if ((st = uk_module_fatbin(ctx, s.f[F_source], &mo, archs, a->narchs, &fat, &size, sizes)) != UK_OK)
      rc = cli_fail("--fatbin", st);
  }
  if (rc == CLI_OK) {
    FILE *f = fopen(a->fatbin, "wb");
    int ok = f && fwrite(fat, 1, size, f) == size;
    if (f && fclose(f) != 0) ok = 0;
    if (!ok) rc = cli_fail_msg("precompile", "cannot write the fatbin");
  }
  if (rc == CLI_OK) {
    char b[32];
    if (json_results) {
      fprintf(json_results, "%s\n  {\"fatbin\": ", json_count++ ? "," : "");
      cli_json_str(json_results, a->fatbin);
      fprintf(json_results, ", \"bytes\": %zu, \"images\": [", size);
    } else {
      printf("fatbin %s (%s):", a->fatbin, cli_bytes(size, b, sizeof b));
    }
    for (int j = 0; j < a->narchs; j++) {
      char an[64];
      cli_arch_name(a->archs[j], an, sizeof an);
      const char *kind = strncmp(an, "compute_", 8) ? "cubin" : "ptx";
      if (json_results)
        fprintf(json_results, "%s{\"arch\": \"%s\", \"kind\": \"%s\", \"bytes\": %zu}", j ? ", " : "", an, kind,
                sizes[j]);
      else
        printf("%s %s %s %s", j ? "," : "", an, kind, cli_bytes(sizes[j], b, sizeof b));
    }
    if (json_results) fputs("]}", json_results);
    else putchar('\n');
  }
  uk_free(fat);
  cli_kernel_destroy(&k);
  uk_context_destroy(ctx);
  cli_spec_free(&s);
  return rc;
}

/* Every arch x spec x item this process owns, one context per arch. */
static int precompile_all(pre_args *a) {
  int rc = CLI_OK;
  for (int j = 0; j < a->narchs && rc == CLI_OK; j++) {
    uk_context *ctx = NULL;
    uk_status st = arch_context(a, j, &ctx);
    if (st != UK_OK) {
      rc = cli_fail("context", st);
      break;
    }
    if (!*uk_context_cache_dir(ctx)) {
      fprintf(stderr, "ukern precompile: the disk cache is disabled (UKERN_DISABLE_DISK_CACHE): nothing to fill\n");
      rc = CLI_USAGE;
    } else if (uk_cache_check_dir(uk_context_cache_dir(ctx)) != UK_OK) {
      fprintf(stderr, "ukern precompile: %s\n", uk_last_error());
      rc = CLI_FAIL;
    }
    for (int p = 0; p < a->npaths && rc == CLI_OK; p++) rc = precompile_spec(a, a->paths[p], a->archs[j], ctx);
    uk_context_destroy(ctx);
  }
  return rc;
}

/* NVRTC's first compile in a process costs ~0.2 s (loading the library and
 * its builtins) against ~10-30 ms for a later one (H200 host, 2026-11-24).
 * With -j N, pay it once here before the fork so that the children inherit a
 * warm NVRTC instead of each paying it. Nothing of it reaches the cache: the
 * context has no disk cache. A failure only means no warm-up. */
static void warm_nvrtc(const pre_args *a) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch_name = a->archs[0];
  o.disable_disk_cache = 1;
  uk_context *ctx = NULL;
  if (uk_context_create(&o, &ctx) != UK_OK) return;
  uk_module *m = NULL;
  if (uk_module_from_source(ctx, "extern \"C\" __global__ void ukern_precompile_warm_up() {}\n", NULL, &m) == UK_OK)
    uk_module_destroy(m);
  uk_context_destroy(ctx);
}

/* -j N: N processes walk the same items in the same order and each compiles
 * every N-th (NVRTC compiles one program per thread at a time, and separate
 * processes share nothing but the cache directory). With --json each child
 * sends its result objects back through a pipe. */
static int precompile_jobs(pre_args *a, char **json_text, size_t *json_len) {
  int rc = CLI_OK;
  fflush(NULL);
  pid_t pids[256];
  int fds[256];
  int started = 0;
  warm_nvrtc(a);
  for (; started < a->jobs; started++) {
    int pfd[2] = {-1, -1};
    if (json_results && pipe(pfd) != 0) break;
    if ((pids[started] = fork()) < 0) {
      if (pfd[0] >= 0) close(pfd[0]), close(pfd[1]);
      break;
    }
    if (pids[started] == 0) {
      a->job = started;
      cli_json_errors = 0; /* errors to stderr: the parent prints the one JSON object */
      int crc = precompile_all(a);
      if (json_results) {
        fflush(json_results);
        close(pfd[0]);
        for (size_t off = 0; off < *json_len;) {
          ssize_t w = write(pfd[1], *json_text + off, *json_len - off);
          if (w <= 0) break;
          off += (size_t)w;
        }
        close(pfd[1]);
      }
      fflush(NULL);
      _exit(crc);
    }
    fds[started] = pfd[0];
    if (pfd[1] >= 0) close(pfd[1]);
  }
  if (started < a->jobs) {
    perror("ukern precompile: fork");
    rc = CLI_FAIL;
  }
  for (int j = 0; j < started; j++) {
    if (json_results && fds[j] >= 0) {
      /* read to the end before waiting, so a child never blocks on a full pipe */
      char buf[4096];
      ssize_t n;
      int first = 1;
      while ((n = read(fds[j], buf, sizeof buf)) > 0) {
        if (first && json_count++) fputc(',', json_results); /* between two children's pieces */
        first = 0;
        fwrite(buf, 1, (size_t)n, json_results);
      }
      close(fds[j]);
    }
    int status = 0;
    if (waitpid(pids[j], &status, 0) != pids[j] || !WIFEXITED(status)) rc = CLI_FAIL;
    else if (WEXITSTATUS(status) != CLI_OK && rc == CLI_OK) rc = WEXITSTATUS(status);
  }
  return rc;
}

int cli_precompile(int argc, char **argv) {
  if (cli_wants_help(argc, argv)) {
    fputs(help, stdout);
    return CLI_OK;
  }
  pre_args *a = calloc(1, sizeof *a);
  cli_spec unused;
  memset(&unused, 0, sizeof unused);
  int rc = a ? cli_spec_args(argc, argv, &unused, own, a) : CLI_FAIL;
  for (int f = 0; f < F_COUNT_ && rc == CLI_OK; f++)
    if (unused.f[f]) {
      fprintf(stderr, "ukern precompile: spec fields come from the spec files only (got a --FIELD flag)\n");
      rc = CLI_USAGE;
    }
  cli_spec_free(&unused);
  char *json_text = NULL;
  size_t json_len = 0;
  if (rc != CLI_OK) goto out;
  if (a->json && !(json_results = open_memstream(&json_text, &json_len))) {
    rc = cli_fail_msg("precompile", "out of memory");
    goto out;
  }
  if (a->npaths == 0) {
    fprintf(stderr, "ukern precompile: give at least one spec\n%s", help);
    rc = CLI_USAGE;
    goto out;
  }
  if (a->fatbin && a->npaths != 1) {
    fprintf(stderr, "ukern precompile: --fatbin takes one module (a .cu file or a module spec)\n");
    rc = CLI_USAGE;
    goto out;
  }
  if (a->narchs == 0) {
    uk_device_info info;
    int count = 0;
    if (uk_device_count(&count) != UK_OK || count == 0 || uk_device_info_get(0, &info) != UK_OK) {
      fprintf(stderr, "ukern precompile: no GPU here (%s): name the target with --arch, e.g. --arch 90\n",
              uk_last_error());
      rc = CLI_NO_DEVICE;
      goto out;
    }
    snprintf(a->archs[a->narchs++], sizeof a->archs[0], "%d", info.arch);
  }
  if ((rc = check_archs(a)) != CLI_OK) goto out;
  if (a->fatbin || a->jobs <= 1) {
    a->jobs = 1; /* --fatbin: the module once per arch, then its fatbin */
    rc = precompile_all(a);
  } else {
    rc = precompile_jobs(a, &json_text, &json_len);
  }
  if (rc == CLI_OK && a->fatbin) rc = write_fatbin(a);
out:
  if (json_results) {
    fclose(json_results);
    if (rc == CLI_OK) printf("{\"ok\": true, \"results\": [%s%s]}\n", json_text ? json_text : "", json_count ? "\n" : "");
    free(json_text);
    json_results = NULL;
  }
  free(a);
  return rc;
}
