/* The parts of the cache key that a new process's first lookup makes
 * (issue 11's new-process rows): the embedded headers by their build-time
 * digest, the standard header map by its format and names, and the hex
 * names of entries. Each is checked against an independent derivation. */
#include <stdio.h>
#include <unistd.h>

#include "base/embedded.h"
#include "base/hash.h"
#include "base/join.h"
#include "base/strbuf.h"
#include "runtime/compile.h"
#include "runtime/include_scan.h"
#include "runtime/std_headers.h"
#include "testutil.h"

/* The hand-written hex equals printf's, on random and edge values. */
static void test_hex(void) {
  uk_hash128 cases[64] = {
      {0, 0}, {~0ull, ~0ull}, {1, 0}, {0, 1}, {0x0123456789abcdefull, 0xfedcba9876543210ull}};
  for (int k = 5; k < 64; k++) cases[k] = (uk_hash128){ut_rand(), ut_rand() >> (k % 64)};
  for (int k = 0; k < 64; k++) {
    char got[40], want[40];
    memset(got, 'x', sizeof got);
    uk__hash128_hex(cases[k], got);
    snprintf(want, sizeof want, "%016llx%016llx", (unsigned long long)cases[k].hi,
             (unsigned long long)cases[k].lo);
    CHECK(strcmp(got, want) == 0);
    CHECK(got[33] == 'x'); /* writes exactly 33 bytes */
  }
}

/* Every mapped text is the format with its name, and the digest is the
 * length-prefixed hash of the format and every candidate name: so a change
 * of either changes the key. */
static void test_std_digest(void) {
  const char *const *names = NULL, *const *texts = NULL;
  int count = -1;
  uk__toolkit tk;
  uk__nvrtc_toolkit(&tk);
  uk__std_headers(&tk, &names, &texts, &count);
  CHECK(count >= 0);
  for (int k = 0; k < count; k++) {
    char want[512];
    snprintf(want, sizeof want, uk__std_header_format, names[k], names[k], names[k]);
    CHECK(strcmp(texts[k], want) == 0);
  }
  CHECK(strstr(uk__std_header_format, "#include <cuda/std/%s>") != NULL);
  uk_hasher h;
  uk__hasher_init(&h);
  uint64_t n = strlen(uk__std_header_format);
  uk__hasher_update(&h, &n, sizeof n);
  uk__hasher_update(&h, uk__std_header_format, n);
  int names_seen = 0;
  for (int k = 0; uk__std_header_names[k]; k++, names_seen++) {
    n = strlen(uk__std_header_names[k]);
    uk__hasher_update(&h, &n, sizeof n);
    uk__hasher_update(&h, uk__std_header_names[k], n);
  }
  CHECK(names_seen > 30);
  char want[33];
  uk__hash128_hex(uk__hasher_digest(&h), want);
  CHECK(strcmp(uk__std_headers_digest(), want) == 0);
}

/* uk__join and uk__udec against snprintf, at and past the buffer's size. */
static void test_join(void) {
  char out[16];
  CHECK(uk__join(out, sizeof out, "ab", "", "/cde", (char *)NULL) == 6 && strcmp(out, "ab/cde") == 0);
  CHECK(uk__join(out, sizeof out, (char *)NULL) == 0 && out[0] == '\0');
  CHECK(uk__join(out, sizeof out, "0123456789", "abcde", (char *)NULL) == 15);
  CHECK(strcmp(out, "0123456789abcde") == 0);
  memset(out, 'x', sizeof out);
  CHECK(uk__join(out, sizeof out, "0123456789", "abcdef", (char *)NULL) == -1 && out[0] == '\0');
  CHECK(uk__join(out, 0, "a", (char *)NULL) == -1 && out[0] == '\0'); /* cap 0: nothing written */
  char *a = uk__join_alloc("dir", "/", "0123456789abcdef0123456789abcdef", ".ukc", (char *)NULL);
  CHECK(a && strcmp(a, "dir/0123456789abcdef0123456789abcdef.ukc") == 0);
  free(a);
  a = uk__join_alloc("", (char *)NULL);
  CHECK(a && a[0] == '\0');
  free(a);
  unsigned long long vals[] = {0, 1, 9, 10, 99, 100, 13000, 4294967296ull, ~0ull};
  for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++) {
    char got[24], want[24];
    int n = uk__udec(got, vals[k]);
    snprintf(want, sizeof want, "%llu", vals[k]);
    CHECK(strcmp(got, want) == 0 && n == (int)strlen(want));
  }
}

/* The key's shared prefix, byte for byte: versions, the headers' digest and
 * every toolkit include directory with its length. */
static void test_prefix_text(void) {
  int ver = 0;
  if (uk__nvrtc_version(&ver) != UK_OK) uk__error_clear();
  const char *const *dirs = NULL;
  int ndirs = 0;
  if (uk__nvrtc_include_dirs(&dirs, &ndirs) != UK_OK) uk__error_clear();
  uk_strbuf want;
  uk__sb_init(&want);
  uk__sb_addf(&want, "ukern %s\nnvrtc %d\nheaders %s\n", UK_VERSION_STRING, ver, uk__embedded_headers_digest);
  for (int k = 0; k < ndirs; k++) uk__sb_addf(&want, "include %zu %s\n", strlen(dirs[k]), dirs[k]);
  uk__sb_addf(&want, "arch 90 0\n");
  uk__compile_req req = {0};
  req.source = "extern \"C\" __global__ void k() {}\n";
  req.arch = 90;
  uk__compile_keyed keyed;
  uk__compile_keyed_init(&keyed, &req);
  uk_strbuf key;
  uk__sb_init(&key);
  CHECK_OK(uk__compile_key(&keyed, &key));
  CHECK(key.len > want.len && memcmp(key.buf, want.buf, want.len) == 0);
  if (key.len <= want.len || memcmp(key.buf, want.buf, want.len) != 0)
    fprintf(stderr, "key:\n%s\nwanted it to start with:\n%s\n", uk__sb_str(&key), uk__sb_str(&want));
  uk__sb_release(&key);
  uk__sb_release(&want);
}

static int scan_digest(const char *source, const char *inc_opt, char out[33]) {
  uk__compile_req req;
  memset(&req, 0, sizeof req);
  req.source = source;
  req.name = "module";
  req.options = &inc_opt;
  req.num_options = 1;
  req.arch = 90;
  return uk__include_digest(&req, out);
}

/* The include scan visits the lines whose first non-blank character is
 * '#': a '#' elsewhere on a line is no directive, blanks and tabs may come
 * before and after it, the last line needs no newline. */
static void test_include_lines(void) {
  char *dir = ut_temp_dir("keynp-inc");
  char *path = NULL, *opt = NULL;
  CHECK(asprintf(&path, "%s/a.h", dir) > 0 && asprintf(&opt, "-I%s", dir) > 0);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (f) {
    fputs("#define A 1\n", f);
    fclose(f);
  }
  char want[33], got[33];
  CHECK(scan_digest("#include <a.h>\n", opt, want) == 1 && strlen(want) == 32);
  static const char *const same[] = {"#include <a.h>", " \t#\tinclude <a.h>\n", "x # y\n#include <a.h>\n",
                                     "a # b\n\n  # include <a.h>\nz # q\n",
                                     "// #include <b.h>\n#include <a.h>\n"};
  for (size_t k = 0; k < sizeof same / sizeof same[0]; k++) {
    memset(got, 'x', sizeof got);
    CHECK(scan_digest(same[k], opt, got) == 1 && strcmp(got, want) == 0);
  }
  static const char *const none[] = {"int x; // # include <a.h>\n", "a # b # include <a.h>\n", "x = '#';\n",
                                     "#"};
  for (size_t k = 0; k < sizeof none / sizeof none[0]; k++) CHECK(scan_digest(none[k], opt, got) == 0);
  /* A chain of 40 headers (past the seen list's first growth): the last
   * one's text is in the digest. */
  char name[4200], text[64];
  for (int k = 0; k < 40; k++) {
    snprintf(name, sizeof name, "%s/h%d.h", dir, k);
    snprintf(text, sizeof text, k < 39 ? "#include \"h%d.h\"\n" : "#define LAST %d\n", k + 1);
    FILE *h = fopen(name, "w");
    CHECK(h != NULL);
    if (h) {
      fputs(text, h);
      fclose(h);
    }
  }
  char d1[33], d2[33];
  snprintf(name, sizeof name, "%s/h0.h", dir);
  CHECK(access(name, R_OK) == 0);
  CHECK(scan_digest("#include <h0.h>\n", opt, d1) == 1);
  snprintf(name, sizeof name, "%s/h39.h", dir);
  FILE *h = fopen(name, "w");
  CHECK(h != NULL);
  if (h) {
    fputs("#define LAST 41\n", h);
    fclose(h);
  }
  CHECK(scan_digest("#include <h0.h>\n", opt, d2) == 1 && strcmp(d1, d2) != 0);
  for (int k = 0; k < 40; k++) {
    snprintf(name, sizeof name, "%s/h%d.h", dir, k);
    unlink(name);
  }
  unlink(path);
  rmdir(dir);
  free(path);
  free(opt);
  free(dir);
}

static int is_hex32(const char *s) {
  if (strlen(s) != 32) return 0;
  for (int k = 0; k < 32; k++)
    if (!((s[k] >= '0' && s[k] <= '9') || (s[k] >= 'a' && s[k] <= 'f'))) return 0;
  return 1;
}

/* The key text names the embedded headers by the build's digest, and the
 * standard header map by its digest (or "off"). */
static void test_key_text(void) {
  CHECK(is_hex32(uk__embedded_headers_digest));
  CHECK(uk__embedded_header_count > 0);
  const char *opts[] = {"-DX=1"};
  uk__compile_req req = {0};
  req.source = "extern \"C\" __global__ void k(float* y) { y[0] = X; }\n";
  req.name = "k";
  req.options = opts;
  req.num_options = 1;
  req.arch = 90;
  for (int off = 0; off < 2; off++) {
    req.no_std_headers = off;
    uk__compile_keyed keyed;
    uk__compile_keyed_init(&keyed, &req);
    uk_strbuf key;
    uk__sb_init(&key);
    CHECK_OK(uk__compile_key(&keyed, &key));
    char want[64];
    snprintf(want, sizeof want, "\nheaders %s\n", uk__embedded_headers_digest);
    CHECK_CONTAINS(uk__sb_str(&key), want);
    snprintf(want, sizeof want, "std_headers %zu %s\n", off ? (size_t)3 : (size_t)32,
             off ? "off" : uk__std_headers_digest());
    CHECK_CONTAINS(uk__sb_str(&key), want);
    CHECK(uk__compile_key_equals(&keyed, key.buf, key.len));
    uk__sb_release(&key);
  }
}

int main(void) {
  ut_seed(1111);
  test_hex();
  test_join();
  test_include_lines();
  test_prefix_text();
  test_std_digest();
  test_key_text();
  return ut_finish("test_key_newproc");
}
