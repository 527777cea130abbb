/* Bundles that must not be used are refused with the file and the reason
 * (issue 26 item 1), by uk_bundle_verify, uk_context_load_bundle,
 * uk_options.bundles and $UKERN_BUNDLE alike: damaged (a byte of the code,
 * of the table, of the header; truncated), foreign (bad magic, another
 * library version, another format, another byte order), and files that
 * are not regular (a symlink to a good bundle, a FIFO: refused at once,
 * never waited on, a directory). A good bundle is made first from one
 * module compiled for sm_90 (NVRTC, no GPU). */
#include <sys/stat.h>
#include <unistd.h>

#include "base/hash.h"
#include "testutil.h"

static char good[4200];
static unsigned char *bytes;
static size_t size;

static int make_good(const char *dir, const char *out) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.cache_dir = dir;
  o.arch = 90;
  uk_context *ctx = NULL;
  uk_module *m = NULL;
  if (uk_context_create(&o, &ctx) != UK_OK) return -1;
  uk_status st = uk_module_from_source(ctx, "extern \"C\" __global__ void refuse_k(float *p) { p[threadIdx.x] += 1.0f; }\n",
                                       NULL, &m);
  uk_module_destroy(m);
  uk_context_destroy(ctx);
  if (st != UK_OK) return -1;
  return uk_bundle_create_from_cache(dir, NULL, 0, out, NULL) == UK_OK ? 0 : -1;
}

static void put64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* Writes the good bytes with `edit` applied (and the header checksum
 * recomputed when fix_header), cut to len bytes. */
static void write_variant(const char *path, void (*edit)(unsigned char *), int fix_header, size_t len) {
  unsigned char *b = malloc(size);
  memcpy(b, bytes, size);
  if (edit) edit(b);
  if (fix_header) put64(b + 88, uk__hash64(b, 88));
  unlink(path);
  FILE *f = fopen(path, "wb");
  if (f) {
    fwrite(b, 1, len, f);
    fclose(f);
  }
  free(b);
}

static void edit_code(unsigned char *b) { b[size - 40] ^= 0x20; }    /* inside the last payload */
static void edit_table(unsigned char *b) { b[96 + 20] ^= 1; }        /* the first record's meta offset */
static void edit_header(unsigned char *b) { b[33] ^= 1; }             /* the entry count */
static void edit_magic(unsigned char *b) { memcpy(b, "UKBUNDLX", 8); }
static void edit_version(unsigned char *b) { memcpy(b + 16, "9.9.9\0\0\0", 8); }
static void edit_format(unsigned char *b) { b[8] = 7; }
static void edit_order(unsigned char *b) { b[12] = 0x0A, b[13] = 0x0B, b[14] = 0x0C, b[15] = 0x0D; }

/* Every way in refuses `path` with status want and a message naming the
 * file and containing `why`. */
static void refused(const char *path, uk_status want, const char *why) {
  CHECK_STATUS(uk_bundle_verify(path, NULL), want);
  CHECK_CONTAINS(uk_last_error(), path);
  CHECK_CONTAINS(uk_last_error(), why);
  uk_options o;
  memset(&o, 0, sizeof o);
  o.disable_disk_cache = 1;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&o, &ctx));
  if (ctx) {
    CHECK_STATUS(uk_context_load_bundle(ctx, path), want);
    CHECK_CONTAINS(uk_last_error(), why);
    char *report = NULL;
    CHECK_OK(uk_context_bundles(ctx, &report));
    CHECK(report && report[0] == 0); /* never loaded */
    uk_free(report);
    uk_context_destroy(ctx);
  }
  const char *list[] = {path};
  o.bundles = list;
  o.num_bundles = 1;
  ctx = NULL;
  CHECK_STATUS(uk_context_create(&o, &ctx), want);
  CHECK(ctx == NULL);
  CHECK_CONTAINS(uk_last_error(), why);
  o.bundles = NULL;
  o.num_bundles = 0;
  char env[4300];
  snprintf(env, sizeof env, "%s::%s", good, path); /* an empty entry is skipped */
  setenv("UKERN_BUNDLE", env, 1);
  CHECK_STATUS(uk_context_create(&o, &ctx), want);
  CHECK_CONTAINS(uk_last_error(), "$UKERN_BUNDLE");
  CHECK_CONTAINS(uk_last_error(), path);
  unsetenv("UKERN_BUNDLE");
}

int main(void) {
  char *dir = ut_temp_dir("refuse-cache"), *out = ut_temp_dir("refuse-out");
  snprintf(good, sizeof good, "%s/good.ukb", out);
  if (make_good(dir, good) != 0) {
    free(dir);
    free(out);
    if (strstr(uk_last_error(), "NVRTC") || strstr(uk_last_error(), "nvrtc")) {
      printf("SKIP: %s\n", uk_last_error());
      return 77;
    }
    fprintf(stderr, "making the bundle: %s\n", uk_last_error());
    return 1;
  }
  FILE *f = fopen(good, "rb");
  CHECK(f != NULL);
  if (!f) {
    free(dir);
    free(out);
    return ut_finish("test_nvrtc_bundle_refuse");
  }
  fseek(f, 0, SEEK_END);
  size = (size_t)ftell(f);
  rewind(f);
  bytes = malloc(size);
  CHECK(fread(bytes, 1, size, f) == size);
  fclose(f);
  CHECK_OK(uk_bundle_verify(good, NULL));

  /* the good one through $UKERN_BUNDLE opens */
  setenv("UKERN_BUNDLE", good, 1);
  uk_context *ctx = NULL;
  uk_options o;
  memset(&o, 0, sizeof o);
  o.disable_disk_cache = 1;
  CHECK_OK(uk_context_create(&o, &ctx));
  char *report = NULL;
  CHECK_OK(uk_context_bundles(ctx, &report));
  CHECK_CONTAINS(report, "1 kernels for sm_90, 0 hits");
  uk_free(report);
  uk_context_destroy(ctx);
  unsetenv("UKERN_BUNDLE");

  char bad[4300];
  snprintf(bad, sizeof bad, "%s/bad.ukb", out);
  struct {
    void (*edit)(unsigned char *);
    int fix;
    uk_status want;
    const char *why;
  } cases[] = {
      {edit_code, 0, UK_ERR_IO, "a kernel's code fails its checksum"},
      {edit_table, 0, UK_ERR_IO, "entry table checksum mismatch"},
      {edit_header, 0, UK_ERR_IO, "header checksum mismatch"},
      {edit_header, 1, UK_ERR_IO, "entry table lies outside the file"},
      {edit_magic, 1, UK_ERR_IO, "not a ukern bundle (bad magic)"},
      {edit_version, 1, UK_ERR_INVALID, "made by ukern 9.9.9 (this is " UK_VERSION_STRING ")"},
      {edit_format, 1, UK_ERR_INVALID, "bundle format 7"},
      {edit_order, 1, UK_ERR_INVALID, "another byte order"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    write_variant(bad, cases[k].edit, cases[k].fix, size);
    refused(bad, cases[k].want, cases[k].why);
  }
  write_variant(bad, NULL, 0, size - 16);
  refused(bad, UK_ERR_IO, "truncated or extended");
  write_variant(bad, NULL, 0, 50);
  refused(bad, UK_ERR_IO, "too short for a bundle header");
  write_variant(bad, NULL, 0, 0);
  refused(bad, UK_ERR_IO, "0 bytes");

  char link_path[4300], fifo[4300];
  snprintf(link_path, sizeof link_path, "%s/link.ukb", out);
  CHECK(symlink(good, link_path) == 0);
  refused(link_path, UK_ERR_IO, "is a symbolic link");
  snprintf(fifo, sizeof fifo, "%s/fifo.ukb", out);
  CHECK(mkfifo(fifo, 0600) == 0);
  refused(fifo, UK_ERR_IO, "not a regular file"); /* returns at once: opened O_NONBLOCK */
  refused(out, UK_ERR_IO, "not a regular file");
  char missing[4300];
  snprintf(missing, sizeof missing, "%s/missing.ukb", out);
  refused(missing, UK_ERR_IO, "No such file");
  CHECK_STATUS(uk_context_load_bundle(NULL, good), UK_ERR_INVALID);
  CHECK_STATUS(uk_bundle_verify(NULL, NULL), UK_ERR_INVALID);
  free(bytes);
  free(dir);
  free(out);
  return ut_finish("test_nvrtc_bundle_refuse");
}
