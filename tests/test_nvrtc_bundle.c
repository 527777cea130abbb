/* Kernel bundles through the real call paths, no GPU (issue 26 item 1).
 * A first process compiles an elementwise kernel, a reduction, a fusion and
 * a templated raw module for sm_80 and sm_90 into a cache directory, which
 * becomes a bundle. Later processes (forked: NVRTC's loaded state is per
 * process) ask for the same kernels with the bundle open:
 *   - served by it: bundle hits, no compile, no disk hit, NVRTC never
 *     loaded, the raw module's functions and parameters read from the
 *     bundle's cubin; a second ask is a memory hit; also a module with
 *     options and a user header (-I, -D) and one linked (-rdc: a kernel
 *     launching a kernel), whose keys hold more parts;
 *   - $UKERN_BUNDLE opens it; the bundle comes before a disk cache that
 *     holds the same kernels;
 *   - a context compiling for sm_86 skips it, and says why;
 *   - a kernel the bundle lacks is compiled as before;
 *   - 4 threads, and 4 processes at once, are served from one file;
 *   - a bundle truncated after it was opened is an error, never SIGBUS. */
#include <dirent.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/nvrtc_lib.h"
#include "testutil.h"

static const char raw_src[] =
    "template <typename T> __global__ void scale(T *x, T a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] *= a;\n"
    "}\n";
static const char *const raw_names[] = {"scale<float>", "scale<double>"};
/* A module reading a user header through -I, with a -D option: the key's
 * option and files parts. Another that launches a kernel (-rdc, linked). */
static const char user_src[] = "#include \"bundle_user.cuh\"\n"
                               "extern \"C\" __global__ void with_header(float *p) { p[0] = USER_SCALE * FACTOR; }\n";
static const char rdc_src[] = "extern \"C\" __global__ void child(int *p) { p[threadIdx.x] = 1; }\n"
                              "extern \"C\" __global__ void parent(int *p) { child<<<1, 32>>>(p); }\n";
static char include_opt[4300];

static uk_array arr(uk_dtype t, uint64_t data, int ndim, const int64_t *shape) {
  uk_array a;
  memset(&a, 0, sizeof a);
  a.data = data;
  a.dtype = t;
  a.ndim = ndim;
  int64_t stride = t == UK_FLOAT64 ? 8 : 4;
  for (int d = ndim; d-- > 0;) {
    a.shape[d] = shape[d];
    a.strides[d] = stride;
    stride *= shape[d];
  }
  return a;
}

/* The four kernels a test asks for (each call one specialisation);
 * which: bit mask of the kernels to ask for. UK_OK when all compiled or
 * were found. */
/* With a GPU present, a module compiled for another arch than the device's
 * (fill's sm_80 pass on an sm_90 machine) is in the cache but cannot be
 * loaded here: that refusal counts as done for filling the cache. */
static uk_status not_here(uk_status st) {
  if (st == UK_ERR_CUDA && strstr(uk_last_error(), "but the device is sm_")) return UK_OK;
  return st;
}

static uk_status ask(uk_context *ctx, int which) {
  uk_status st = UK_OK;
  int64_t s2[2] = {33, 17}, s1[1] = {33};
  if (which & 1) {
    uk_elementwise *k = NULL;
    if ((st = uk_elementwise_create(
             ctx,
             &(uk_elementwise_spec){
                 .in_params = "T x, T y", .out_params = "T z", .operation = "z = (x - y) * (x - y)", .name = "bsq"},
             &k)) == UK_OK) {
      uk_array x = arr(UK_FLOAT32, 0x10000, 2, s2), y = arr(UK_FLOAT32, 0x20000, 2, s2),
               z = arr(UK_FLOAT32, 0x30000, 2, s2);
      uk_arg in[2] = {uk_arg_array(&x), uk_arg_array(&y)};
      st = uk_elementwise_precompile(k, in, 2, &z, 1, NULL);
    }
    uk_elementwise_destroy(k);
  }
  if (st == UK_OK && (which & 2)) {
    uk_reduction_spec spec = {.in_params = "T x", .out_params = "T y", .map_expr = "x * x",
                              .reduce_expr = "a + b", .post_map_expr = "y = sqrt(a)", .identity = "0",
                              .name = "bl2"};
    uk_reduction *r = NULL;
    if ((st = uk_reduction_create(ctx, &spec, &r)) == UK_OK) {
      uk_array x = arr(UK_FLOAT32, 0x10000, 2, s2), y = arr(UK_FLOAT32, 0x30000, 1, s1);
      uk_arg in = uk_arg_array(&x);
      int axis = 1;
      uk_launch l = {.axes = &axis, .num_axes = 1};
      st = uk_reduction_precompile(r, &in, 1, &y, 1, &l);
    }
    uk_reduction_destroy(r);
  }
  if (st == UK_OK && (which & 4)) {
    uk_fusion *f = NULL;
    if ((st = uk_fusion_create(ctx,
                               &(uk_fusion_spec){.inputs = "x, y",
                                                 .outputs = "d",
                                                 .program = "d = sqrt(sum((x - y) * (x - y), axis=-1))",
                                                 .name = "bdist"},
                               &f)) == UK_OK) {
      uk_array x = arr(UK_FLOAT32, 0x10000, 2, s2), y = arr(UK_FLOAT32, 0x20000, 2, s2),
               d = arr(UK_FLOAT32, 0x30000, 1, s1);
      uk_arg in[2] = {uk_arg_array(&x), uk_arg_array(&y)};
      st = uk_fusion_precompile(f, in, 2, &d, 1, NULL);
    }
    uk_fusion_destroy(f);
  }
  if (st == UK_OK && (which & 8)) {
    uk_module_options mo;
    memset(&mo, 0, sizeof mo);
    mo.name_expressions = raw_names;
    mo.num_name_expressions = 2;
    uk_module *m = NULL;
    uk_function *fn = NULL;
    int count = 0;
    const uk_param_info *p = NULL;
    if ((st = uk_module_from_source(ctx, raw_src, &mo, &m)) == UK_OK &&
        (st = not_here(uk_module_function(m, "scale<double>", &fn))) == UK_OK && fn &&
        (st = uk_function_params(fn, &count, &p)) == UK_OK &&
        (count != 3 || p[0].size != 8 || p[1].size != 8 || p[1].offset != 8 || p[2].size != 4 || p[2].offset != 16))
      st = UK_ERR_INTERNAL; /* (double*, double, int): read from the cubin */
    uk_module_destroy(m);
  }
  if (st == UK_OK && (which & 16)) {
    const char *opts[] = {include_opt, "-DFACTOR=3"};
    uk_module_options mo;
    memset(&mo, 0, sizeof mo);
    mo.options = opts;
    mo.num_options = 2;
    uk_module *m = NULL;
    st = uk_module_from_source(ctx, user_src, &mo, &m);
    uk_module_destroy(m);
  }
  if (st == UK_OK && (which & 32)) {
    uk_module *m = NULL;
    uk_function *fn = NULL;
    if ((st = uk_module_from_source(ctx, rdc_src, NULL, &m)) == UK_OK) st = not_here(uk_module_function(m, "parent", &fn));
    uk_module_destroy(m);
  }
  return st;
}

/* Each kernel is one compile (one entry) per arch. */
#define ALL 63
#define KERNELS 6

static char *fill_dir, *memo_dir, *bundle;

static int wait_status(pid_t pid) {
  int status = 0;
  if (pid <= 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static uk_context *context(const char *dir, int arch, const char *bundle_path) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.cache_dir = dir;
  o.arch = arch;
  const char *list[1] = {bundle_path};
  o.bundles = bundle_path ? list : NULL;
  o.num_bundles = bundle_path ? 1 : 0;
  uk_context *ctx = NULL;
  if (uk_context_create(&o, &ctx) != UK_OK) {
    fprintf(stderr, "  context: %s\n", uk_last_error());
    return NULL;
  }
  return ctx;
}

/* The first process: compile everything for both archs into fill_dir. */
static int fill(void) {
  if (uk__nvrtc_load() != UK_OK) return 77;
  for (int arch = 80; arch <= 90; arch += 10) {
    uk_context *ctx = context(fill_dir, arch, NULL);
    if (!ctx || ask(ctx, ALL) != UK_OK) {
      fprintf(stderr, "  fill: %s\n%s", uk_last_error(), uk_last_error_log());
      return 9;
    }
    uk_context_destroy(ctx);
  }
  return 0;
}

/* Child: served from the bundle. Exit codes: 0 as wanted; 1 wrong counts;
 * 2 NVRTC loaded; 9 a call failed. */
static int serve(const char *dir, int by_env) {
  if (by_env) setenv("UKERN_BUNDLE", bundle, 1);
  uk_context *ctx = context(dir, 90, by_env ? NULL : bundle);
  if (!ctx) return 9;
  if (ask(ctx, ALL) != UK_OK) {
    fprintf(stderr, "  serve: %s\n", uk_last_error());
    return 9;
  }
  uk_cache_stats s;
  uk_context_cache_stats(ctx, &s);
  if (s.bundle_hits != KERNELS || s.compiles != 0 || s.disk_hits != 0) {
    fprintf(stderr, "  bundle hits %llu, compiles %llu, disk hits %llu\n", (unsigned long long)s.bundle_hits,
            (unsigned long long)s.compiles, (unsigned long long)s.disk_hits);
    return 1;
  }
  if (ask(ctx, 8) != UK_OK) return 9; /* a raw module again: from memory */
  uk_cache_stats t;
  uk_context_cache_stats(ctx, &t);
  if (t.bundle_hits != KERNELS || t.memory_hits <= s.memory_hits) return 1;
  if (uk__nvrtc_loaded()) return 2;
  char *report = NULL;
  if (uk_context_bundles(ctx, &report) != UK_OK || !strstr(report, bundle) || !strstr(report, "6 kernels for sm_80 sm_90") ||
      !strstr(report, "6 hits") || strstr(report, "skipped"))
    return 1;
  uk_free(report);
  uk_context_destroy(ctx);
  return 0;
}

/* Child: the context compiles for sm_86: skipped, with the reason; the
 * elementwise kernel is compiled instead. */
static int other_arch(void) {
  uk_context *ctx = context(memo_dir, 86, bundle);
  if (!ctx || ask(ctx, 1) != UK_OK) return 9;
  uk_cache_stats s;
  uk_context_cache_stats(ctx, &s);
  if (s.bundle_hits != 0 || s.compiles != 1) return 1;
  char *report = NULL;
  if (uk_context_bundles(ctx, &report) != UK_OK) return 9;
  int ok = strstr(report, "skipped: built for sm_80 sm_90, this context compiles for sm_86") != NULL;
  if (!ok) fprintf(stderr, "  report: %s", report);
  uk_free(report);
  uk_context_destroy(ctx);
  return ok ? 0 : 1;
}

/* Child: a kernel not in the bundle compiles as before (NVRTC loaded). */
static int not_in_bundle(void) {
  uk_context *ctx = context(memo_dir, 90, bundle);
  uk_module *m = NULL;
  if (!ctx || uk_module_from_source(ctx, "extern \"C\" __global__ void bundle_absent(int *p) { *p = 5; }\n", NULL,
                                    &m) != UK_OK)
    return 9;
  uk_cache_stats s;
  uk_context_cache_stats(ctx, &s);
  uk_module_destroy(m);
  uk_context_destroy(ctx);
  return s.bundle_hits == 0 && s.compiles == 1 && uk__nvrtc_loaded() ? 0 : 1;
}

typedef struct thread_arg {
  uk_context *ctx;
  int which;
  uk_status st;
} thread_arg;

static void *thread_main(void *p) {
  thread_arg *a = p;
  a->st = ask(a->ctx, a->which);
  return NULL;
}

/* Child: four threads, one kernel each, on one context at once. */
static int threads(void) {
  uk_context *ctx = context(memo_dir, 90, bundle);
  if (!ctx) return 9;
  pthread_t t[4];
  thread_arg a[4];
  for (int k = 0; k < 4; k++) {
    a[k] = (thread_arg){ctx, 1 << k, UK_ERR_INTERNAL};
    pthread_create(&t[k], NULL, thread_main, &a[k]);
  }
  int rc = 0;
  for (int k = 0; k < 4; k++) {
    pthread_join(t[k], NULL);
    if (a[k].st != UK_OK) rc = 9;
  }
  uk_cache_stats s;
  uk_context_cache_stats(ctx, &s);
  if (s.bundle_hits != 4 || s.compiles != 0) rc = 1;
  if (uk__nvrtc_loaded()) rc = 2;
  uk_context_destroy(ctx);
  return rc;
}

static void copy_file(const char *from, const char *to, long len) {
  FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
  char buf[4096];
  size_t n;
  long done = 0;
  while (a && b && (len < 0 || done < len) &&
         (n = fread(buf, 1, len < 0 || len - done > (long)sizeof buf ? sizeof buf : (size_t)(len - done), a)) > 0) {
    fwrite(buf, 1, n, b);
    done += (long)n;
  }
  if (a) fclose(a);
  if (b) fclose(b);
}

/* Child: the file is cut short after the context opened it: the lookup
 * fails with the reason (pread, so no SIGBUS). */
static int truncated_later(const char *copy) {
  uk_context *ctx = context(memo_dir, 90, copy);
  if (!ctx) return 9;
  if (truncate(copy, 200) != 0) return 9;
  uk_status st = ask(ctx, 1);
  int ok = st == UK_ERR_IO && strstr(uk_last_error(), copy) && strstr(uk_last_error(), "cut short");
  if (!ok) fprintf(stderr, "  truncated later: %s: %s\n", uk_status_name(st), uk_last_error());
  uk_context_destroy(ctx);
  return ok ? 0 : 1;
}

typedef int (*child_fn)(void);
static const char *child_dir;
static int child_env;
static int serve_child(void) { return serve(child_dir, child_env); }

static int run(child_fn f) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) _exit(f());
  return wait_status(pid);
}

/* Copies the NVRTC memo (.ukn) of `from` into `to`: a cache directory with
 * no entries, from which a process learns NVRTC's version without loading
 * it (as a deployment's would after any earlier compile). */
static void copy_memo(const char *from, const char *to) {
  DIR *d = opendir(from);
  struct dirent *de;
  while (d && (de = readdir(d)) != NULL) {
    if (!strstr(de->d_name, ".ukn")) continue;
    char a[4200], b[4200];
    snprintf(a, sizeof a, "%s/%s", from, de->d_name);
    snprintf(b, sizeof b, "%s/%s", to, de->d_name);
    copy_file(a, b, -1);
    chmod(b, 0600);
  }
  if (d) closedir(d);
}

int main(void) {
  fill_dir = ut_temp_dir("bundle-fill");
  memo_dir = ut_temp_dir("bundle-memo");
  char *out_dir = ut_temp_dir("bundle-out");
  char path[4200];
  snprintf(path, sizeof path, "%s/kernels.ukb", out_dir);
  bundle = path;
  /* the user header, next to nothing the key could guess: found through -I */
  char header[4300];
  snprintf(include_opt, sizeof include_opt, "-I%s", out_dir);
  snprintf(header, sizeof header, "%s/bundle_user.cuh", out_dir);
  FILE *h = fopen(header, "w");
  if (h) {
    fputs("#define USER_SCALE 2.5f\n", h);
    fclose(h);
  }

  int rc = run(fill);
  if (rc == 77) {
    printf("SKIP: NVRTC cannot be loaded\n");
    return 77;
  }
  CHECK(rc == 0);
  const char *archs[] = {"80", "sm_90"};
  char *report = NULL;
  CHECK_OK(uk_bundle_create_from_cache(fill_dir, archs, 2, bundle, &report));
  CHECK_CONTAINS(report, "6 kernels");
  CHECK_CONTAINS(report, "sm_80 sm_90");
  CHECK_CONTAINS(report, "scale<float>");
  uk_free(report);
  struct stat sb;
  CHECK(stat(bundle, &sb) == 0 && (sb.st_mode & 0777) == 0444);
  char *listing = NULL;
  CHECK_OK(uk_bundle_verify(bundle, &listing));
  CHECK_CONTAINS(listing, "bsq");
  CHECK_CONTAINS(listing, "all checksums good");
  uk_free(listing);
  /* only sm_90 asked for: the entries for sm_80 are left out */
  char only90[4300];
  snprintf(only90, sizeof only90, "%s/only90.ukb", out_dir);
  const char *a90[] = {"90"};
  CHECK_OK(uk_bundle_create_from_cache(fill_dir, a90, 1, only90, &report));
  CHECK_CONTAINS(report, "6 entries for other archs left out");
  uk_free(report);
  CHECK_STATUS(uk_bundle_create_from_cache(memo_dir, a90, 1, only90, NULL), UK_ERR_NOT_FOUND);
  CHECK_CONTAINS(uk_last_error(), "nothing to bundle");
  CHECK_STATUS(uk_bundle_create_from_cache(fill_dir, (const char *[]){"100f"}, 1, only90, NULL), UK_ERR_INVALID);

  copy_memo(fill_dir, memo_dir);
  child_dir = memo_dir;
  child_env = 0;
  rc = run(serve_child);
  CHECK(rc == 0);
  if (rc) fprintf(stderr, "serve from the bundle: exit %d\n", rc);
  child_env = 1;
  rc = run(serve_child);
  CHECK(rc == 0);
  if (rc) fprintf(stderr, "serve through $UKERN_BUNDLE: exit %d\n", rc);
  child_dir = fill_dir; /* the disk cache holds every kernel too: the bundle comes first */
  child_env = 0;
  rc = run(serve_child);
  CHECK(rc == 0);
  if (rc) fprintf(stderr, "bundle before disk: exit %d\n", rc);
  CHECK(run(other_arch) == 0);
  CHECK(run(not_in_bundle) == 0);
  CHECK(run(threads) == 0);

  /* four processes read the file at once */
  child_dir = memo_dir;
  pid_t pids[4];
  fflush(NULL);
  for (int k = 0; k < 4; k++)
    if ((pids[k] = fork()) == 0) _exit(serve_child());
  for (int k = 0; k < 4; k++) CHECK(wait_status(pids[k]) == 0);

  char copy[4300];
  snprintf(copy, sizeof copy, "%s/copy.ukb", out_dir);
  copy_file(bundle, copy, -1);
  child_dir = copy;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) _exit(truncated_later(copy));
  CHECK(wait_status(pid) == 0);
  free(out_dir);
  free(fill_dir);
  free(memo_dir);
  return ut_finish("test_nvrtc_bundle");
}
