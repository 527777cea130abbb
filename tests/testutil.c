#include "testutil.h"

#include <sys/stat.h>
#include <unistd.h>

int ut_failures = 0;
int ut_checks = 0;

int ut_finish(const char *name) {
  printf("%s: %d checks, %d passed, %d failed\n", name, ut_checks, ut_checks - ut_failures,
         ut_failures);
  if (ut_checks == 0) { /* a test that checked nothing cannot fail: a defect */
    printf("%s: FAIL: no checks were made\n", name);
    return 1;
  }
  return ut_failures ? 1 : 0;
}

void ut_require_gpu(void) {
  int n = 0;
  if (uk_device_count(&n) != UK_OK || n == 0) {
    printf("SKIP: no CUDA device: %s\n", uk_last_error());
    exit(77);
  }
}

void ut_require_stand_in(void) {
  int n = 0;
  uk_device_info info;
  if (uk_device_count(&n) != UK_OK || n != 1 || uk_device_info_get(0, &info) != UK_OK ||
      !strstr(info.name, "stand-in")) {
    printf("SKIP: the stand-in driver was not loaded (%s)\n", uk_last_error());
    exit(77);
  }
}

uk_reduction *ut_sum_with_allocator(uk_allocator a, const char *name, uk_context **ctx) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.allocator = a;
  *ctx = NULL;
  CHECK_OK(uk_context_create(&o, ctx));
  const uk_reduction_spec spec = {.in_params = "T x", .out_params = "T y", .map_expr = "x", .reduce_expr = "a + b",
                                  .post_map_expr = "y = a", .identity = "0", .name = name};
  uk_reduction *k = NULL;
  if (*ctx) CHECK_OK(uk_reduction_create(*ctx, &spec, &k));
  return k;
}

void ut_require_cluster_launch(const char *test) {
  ut_require_gpu();
  uk_device_info info;
  int can = 0;
  CHECK_OK(uk_device_info_get(0, &info));
  CHECK_OK(uk_device_attribute(0, "cluster_launch", &can));
  if (ut_failures) exit(ut_finish(test));
  if (info.arch < 90 || !can) {
    printf("SKIP: cluster launch needs sm_90+ (device 0 is sm_%d, cluster_launch %d)\n", info.arch, can);
    exit(77);
  }
}

uk_function *ut_kernel_from_source(const char *src, const char *name, const char *sig, uk_context **ctx,
                                   uk_module **m) {
  uk_function *f = NULL;
  *ctx = NULL;
  *m = NULL;
  CHECK_OK(uk_context_create(NULL, ctx));
  CHECK_OK(uk_module_from_source(*ctx, src, NULL, m));
  if (*m) CHECK_OK(uk_module_function(*m, name, &f));
  if (f) CHECK_OK(uk_function_set_signature(f, sig));
  return f;
}

static uint64_t state = 0x9E3779B97F4A7C15ull;

void ut_seed(uint64_t seed) { state = seed ? seed : 1; }

uint64_t ut_rand(void) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

double ut_uniform(double lo, double hi) {
  for (;;) {
    double u = (double)(ut_rand() >> 11) / 9007199254740992.0;
    double v = lo + (hi - lo) * u;
    if (v != 0.0) return v;
  }
}

/* The directories ut_temp_dir made, removed when the process that made
 * them exits (not a forked child: it may exit while the parent still uses
 * them); UKERN_TEST_KEEP_TMP keeps them for a look after a failure. */
static char *temp_made[64];
static int temp_count;
static pid_t temp_owner;

static void remove_temp_dirs(void) {
  if (getpid() != temp_owner || getenv("UKERN_TEST_KEEP_TMP")) return;
  for (int i = 0; i < temp_count; i++) {
    char cmd[8300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", temp_made[i]);
    if (system(cmd) != 0) fprintf(stderr, "testutil: could not remove %s\n", temp_made[i]);
    free(temp_made[i]);
  }
  temp_count = 0;
}

char *ut_temp_dir(const char *tag) {
  const char *base = getenv("UKERN_CACHE_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/../tmp-%s-%d-%llu", base ? base : "/tmp/ukern-test", tag,
           (int)getpid(), (unsigned long long)(ut_rand() % 1000000));
  char cmd[8300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", path, path);
  if (system(cmd) != 0) return NULL;
  if (temp_count < (int)(sizeof temp_made / sizeof temp_made[0])) {
    if (temp_count == 0 && temp_owner != getpid()) {
      temp_owner = getpid();
      atexit(remove_temp_dirs);
    }
    char *kept = strdup(path);
    if (kept) temp_made[temp_count++] = kept;
  }
  return strdup(path);
}
