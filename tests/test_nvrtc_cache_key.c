/* The cache key covers every file a compile reads (issue 9, item 5), and a
 * FIFO at an entry's path is an immediate miss through the public API (item
 * 2). Source modules compiled for sm_90 without a GPU; each step opens a
 * new context on the same directory, as a new process would. The first
 * part checks uk__include_digest directly (no NVRTC). */
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/include_scan.h"
#include "testutil.h"

static void write_text(const char *dir, const char *name, const char *text) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (!f) return;
  fputs(text, f);
  fclose(f);
}

static char *sub_dir(const char *base, const char *name) {
  char *p = NULL;
  CHECK(asprintf(&p, "%s/%s", base, name) > 0);
  CHECK(mkdir(p, 0700) == 0);
  return p;
}

static int digest(const char *source, const char *name, int nopt, const char *const *opts, char out[33]) {
  uk__compile_req req;
  memset(&req, 0, sizeof req);
  req.source = source;
  req.name = name;
  req.options = opts;
  req.num_options = nopt;
  req.arch = 90;
  return uk__include_digest(&req, out);
}

static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "test_nvrtc_cache_key: timed out (a FIFO blocked?)\n";
  (void)!write(2, msg, sizeof msg - 1);
  _exit(1);
}

static void test_digest(void) {
  char *base = ut_temp_dir("ck-digest");
  char *inc = sub_dir(base, "inc"), *inc2 = sub_dir(base, "inc2"), *src = sub_dir(base, "src");
  char opt_i[4200], opt_i2[4200], name[4200], d0[33], d1[33];
  snprintf(opt_i, sizeof opt_i, "-I%s", inc);
  snprintf(opt_i2, sizeof opt_i2, "--include-path=%s", inc2);
  snprintf(name, sizeof name, "%s/prog.cu", src);
  const char *opts[] = {"-std=c++17", opt_i, opt_i2};

  /* Generated kernels: embedded and toolkit headers only, no -I: no digest. */
  const char *generated = "#include <ukern/ew_core.cuh>\n#include <cub/warp/warp_reduce.cuh>\n";
  CHECK(digest(generated, "kernel", 0, NULL, d0) == 0 && d0[0] == '\0');
  CHECK(digest("__global__ void k() {}\n", "module", 3, opts, d0) == 0);
  /* With -I, even an embedded name is not looked up on disk... */
  CHECK(digest("#include <ukern/ew_core.cuh>\n", "module", 3, opts, d0) == 0);
  /* ...but a toolkit name is (a user directory could shadow it). */
  CHECK(digest("#include <cuda_fp16.h>\n", "module", 3, opts, d0) == 1 && strlen(d0) == 32);

  /* -I header including a header next to it, which includes one through the
   * second -I directory: editing any of them changes the digest. */
  write_text(inc, "a.h", "#pragma once\n#include \"b.h\"\n");
  write_text(inc, "b.h", "  #  include <c.h> // comment\n#include \"a.h\"\n#define B 1\n");
  write_text(inc2, "c.h", "#define C 1\n");
  const char *source = "#include <a.h>\n__global__ void k(int *p) { *p = B + C; }\n";
  CHECK(digest(source, "module", 3, opts, d0) == 1);
  CHECK(digest(source, "module", 3, opts, d1) == 1 && strcmp(d0, d1) == 0); /* stable */
  write_text(inc2, "c.h", "#define C 2\n");
  CHECK(digest(source, "module", 3, opts, d1) == 1 && strcmp(d0, d1) != 0);
  strcpy(d0, d1);
  write_text(inc, "b.h", "  #  include <c.h> // comment\n#include \"a.h\"\n#define B 2\n");
  CHECK(digest(source, "module", 3, opts, d1) == 1 && strcmp(d0, d1) != 0);
  strcpy(d0, d1);
  /* A file created earlier in the search order shadows the later one. */
  write_text(inc, "c.h", "#define C 3\n");
  CHECK(digest(source, "module", 3, opts, d1) == 1 && strcmp(d0, d1) != 0);
  /* The separate-argument form of -I is read too. */
  const char *split[] = {"-I", inc, opt_i2};
  CHECK(digest(source, "module", 3, split, d0) == 1 && strcmp(d0, d1) == 0);

  /* "x" next to the source named by path; a missing header is keyed as
   * missing, so creating it changes the digest. */
  const char *quoted = "#include \"near.h\"\n#include \"absent.h\"\n";
  write_text(src, "near.h", "#define N 1\n");
  CHECK(digest(quoted, name, 0, NULL, d0) == 1);
  write_text(src, "near.h", "#define N 2\n");
  CHECK(digest(quoted, name, 0, NULL, d1) == 1 && strcmp(d0, d1) != 0);
  write_text(src, "absent.h", "\n");
  CHECK(digest(quoted, name, 0, NULL, d0) == 1 && strcmp(d0, d1) != 0);
  /* -include names a file like a quoted include of the source. */
  const char *pre[] = {"-include", "near.h"};
  CHECK(digest("", name, 2, pre, d0) == 1);
  write_text(src, "near.h", "#define N 3\n");
  CHECK(digest("", name, 2, pre, d1) == 1 && strcmp(d0, d1) != 0);

  /* A FIFO as a header does not block, and cycles end. */
  signal(SIGALRM, on_alarm);
  alarm(20);
  char fifo[4200];
  snprintf(fifo, sizeof fifo, "%s/pipe.h", src);
  CHECK(mkfifo(fifo, 0600) == 0);
  CHECK(digest("#include \"pipe.h\"\n#include \"self.h\"\n", name, 0, NULL, d0) == 1);
  write_text(src, "self.h", "#include \"self.h\"\n#include \"pipe.h\"\n");
  CHECK(digest("#include \"self.h\"\n", name, 0, NULL, d0) == 1);
  alarm(0);
  free(inc);
  free(inc2);
  free(src);
  free(base);
}

static uk_context *new_context(const char *dir) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = 90;
  o.cache_dir = dir;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&o, &ctx));
  return ctx;
}

/* Compiles in a new context; returns its stats, the image in *image. */
static uk_cache_stats compile_new(const char *cache, const char *code, const char *name, int nopt,
                                  const char *const *opts, void **image, size_t *bytes) {
  uk_cache_stats st;
  memset(&st, 0, sizeof st);
  uk_context *ctx = new_context(cache);
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.options = opts;
  mo.num_options = nopt;
  mo.name = name;
  uk_module *m = NULL;
  CHECK_OK(uk_module_from_source(ctx, code, &mo, &m));
  const void *img = NULL;
  *image = NULL;
  if (m && uk_module_image(m, &img, bytes) == UK_OK) *image = memcpy(malloc(*bytes), img, *bytes);
  CHECK_OK(uk_context_cache_stats(ctx, &st));
  uk_module_destroy(m);
  uk_context_destroy(ctx);
  return st;
}

static void test_header_edit_misses(void) {
  char *base = ut_temp_dir("ck-e2e");
  char *cache = sub_dir(base, "cache"), *inc = sub_dir(base, "inc"), *src = sub_dir(base, "src");
  char opt_i[4200], name[4200];
  snprintf(opt_i, sizeof opt_i, "-I%s", inc);
  snprintf(name, sizeof name, "%s/prog.cu", src);
  const char *opts[] = {opt_i};
  const char *code = "#include \"outer.h\"\n"
                     "extern \"C\" __global__ void k(int *p) { *p = VALUE * 7 + NEAR; }\n";
  write_text(inc, "outer.h", "#include \"inner.h\"\n");
  write_text(inc, "inner.h", "#define VALUE 1234\n");
  write_text(src, "near.h", "#define NEAR 5\n");
  write_text(src, "outer.h", "#include \"inner.h\"\n#include \"near.h\"\n"); /* next to the source: first */
  write_text(src, "inner.h", "#define VALUE 1111\n");

  void *img0 = NULL, *img1 = NULL, *img2 = NULL, *img3 = NULL;
  size_t n0 = 0, n1 = 0, n2 = 0, n3 = 0;
  uk_cache_stats s = compile_new(cache, code, name, 1, opts, &img0, &n0);
  CHECK(s.compiles == 1);
  s = compile_new(cache, code, name, 1, opts, &img1, &n1); /* a new process: the disk hit */
  CHECK(s.compiles == 0 && s.disk_hits == 1);
  CHECK(img0 && img1 && n0 == n1 && memcmp(img0, img1, n0) == 0);

  /* Edit the header that the header next to the source includes. */
  write_text(src, "inner.h", "#define VALUE 2222\n");
  s = compile_new(cache, code, name, 1, opts, &img2, &n2);
  CHECK(s.compiles == 1 && s.disk_hits == 0);
  CHECK(img2 && (n2 != n0 || memcmp(img0, img2, n0) != 0)); /* the new value is compiled in */
  /* Remove it there: the -I directory's inner.h is read instead. */
  char gone[4200];
  snprintf(gone, sizeof gone, "%s/inner.h", src);
  CHECK(unlink(gone) == 0);
  s = compile_new(cache, code, name, 1, opts, &img3, &n3);
  CHECK(s.compiles == 1);
  CHECK(img3 && (n3 != n2 || memcmp(img2, img3, n2) != 0));
  /* Unchanged files: hits again. */
  free(img3);
  s = compile_new(cache, code, name, 1, opts, &img3, &n3);
  CHECK(s.compiles == 0 && s.disk_hits == 1);

  /* Within one context: a header edit is a new key for the memory cache too. */
  uk_context *ctx = new_context(cache);
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.options = opts;
  mo.num_options = 1;
  mo.name = name;
  uk_module *m = NULL;
  CHECK_OK(uk_module_from_source(ctx, code, &mo, &m));
  uk_module_destroy(m);
  write_text(inc, "inner.h", "#define VALUE 3333\n");
  CHECK_OK(uk_module_from_source(ctx, code, &mo, &m));
  uk_module_destroy(m);
  uk_cache_stats st;
  CHECK_OK(uk_context_cache_stats(ctx, &st));
  CHECK(st.compiles == 1 && st.disk_hits == 1);
  uk_context_destroy(ctx);
  free(img0);
  free(img1);
  free(img2);
  free(img3);
  free(cache);
  free(inc);
  free(src);
  free(base);
}

/* A FIFO where the entry is: the compile goes on at once (counted untrusted). */
static void test_fifo_entry(void) {
  char *cache = ut_temp_dir("ck-fifo");
  const char *code = "extern \"C\" __global__ void f(int *p) { *p = 42; }\n";
  void *img = NULL;
  size_t n = 0;
  uk_cache_stats s = compile_new(cache, code, "fifo_case", 0, NULL, &img, &n);
  free(img);
  CHECK(s.compiles == 1);
  DIR *d = opendir(cache);
  int replaced = 0;
  struct dirent *de;
  while (d && (de = readdir(d)) != NULL) {
    if (!strstr(de->d_name, ".ukc")) continue;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", cache, de->d_name);
    CHECK(unlink(path) == 0 && mkfifo(path, 0600) == 0);
    replaced++;
  }
  if (d) closedir(d);
  CHECK(replaced == 1);
  signal(SIGALRM, on_alarm);
  alarm(60);
  s = compile_new(cache, code, "fifo_case", 0, NULL, &img, &n);
  alarm(0);
  free(img);
  CHECK(s.compiles == 1 && s.untrusted == 1 && s.disk_misses == 1);
  free(cache);
}

int main(void) {
  ut_seed((uint64_t)getpid());
  test_digest();
  int v = 0;
  if (uk_nvrtc_version(&v) != UK_OK) {
    printf("SKIP: no NVRTC (%s)\n", uk_last_error());
    return ut_finish("test_nvrtc_cache_key") == 0 ? 77 : 1;
  }
  test_header_edit_misses();
  test_fifo_entry();
  return ut_finish("test_nvrtc_cache_key");
}
