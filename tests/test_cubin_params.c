/* The cubin reader (uk__cubin_params, uk__cubin_find_kernel, uk__cubin_attribute, uk__cubin_object_size) on a small
 * cubin built here byte by byte, laid out as ptxas lays one out: exact
 * layouts from both record formats, kernels told from device functions,
 * then every truncation, every single-byte corruption and random multi-byte
 * ones, and hand-made malformations with their messages. A malformed image
 * is UK_ERR_INVALID; nothing reads out of bounds (run under ASan). */
#include "base/strbuf.h"
#include "runtime/cubin_params.h"
#include "testutil.h"

#define CAP 4096

typedef struct image {
  unsigned char b[CAP];
  size_t n;
} image;

static void put16(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
}
static void put32(unsigned char *p, uint32_t v) {
  put16(p, v);
  put16(p + 2, v >> 16);
}
static void put64(unsigned char *p, uint64_t v) {
  put32(p, (uint32_t)v);
  put32(p + 4, (uint32_t)(v >> 32));
}

static size_t add(image *im, const void *data, size_t n) {
  size_t at = (im->n + 7) & ~(size_t)7;
  memset(im->b + im->n, 0, at - im->n);
  memcpy(im->b + at, data, n);
  im->n = at + n;
  return at;
}

/* An attribute: format, id, then a u16 (value or length) and the data. */
static size_t attr(unsigned char *p, unsigned fmt, unsigned id, uint32_t half, const void *data, size_t n) {
  p[0] = (unsigned char)fmt;
  p[1] = (unsigned char)id;
  put16(p + 2, fmt == 4 ? (uint32_t)n : half);
  if (n) memcpy(p + 4, data, n);
  return 4 + n;
}

/* A KPARAM_INFO (v2 = 0: 0x17, size in bits 18..31) or _V2 (0x45) record. */
static size_t kparam(unsigned char *p, int v2, uint32_t ordinal, uint32_t offset, uint32_t size) {
  unsigned char v[12] = {0};
  put16(v + 4, ordinal);
  put16(v + 6, offset);
  put32(v + 8, v2 ? size | 0x05000000u : size << 18 | 0x1f000u);
  return attr(p, 4, v2 ? 0x45 : 0x17, 0, v, 12);
}

/* Offsets of the parts tests corrupt by hand. */
static size_t info_kern_at, info_kern_size, sym_table_at;

/* kern(char, double, S12) with v1 records; big(float*, char[5000], char)
 * with v2 records; helper: a device function; nodata: a kernel without a
 * .nv.info section. */
static void build(image *im) {
  memset(im, 0, sizeof *im);
  im->n = 64;
  static const char shstr[] = "\0.shstrtab\0.strtab\0.symtab\0.nv.info.kern\0.nv.info.big\0.text.kern";
  static const char str[] = "\0kern\0big\0helper\0nodata";
  size_t shstr_at = add(im, shstr, sizeof shstr), str_at = add(im, str, sizeof str);
  unsigned char sym[5][24];
  memset(sym, 0, sizeof sym);
  const uint32_t names[5] = {0, 1, 6, 10, 17};
  const unsigned other[5] = {0, 0x10, 0x10, 0, 0x10};
  for (int k = 1; k < 5; k++) {
    put32(sym[k], names[k]);
    sym[k][4] = 0x12; /* global function */
    sym[k][5] = (unsigned char)other[k];
    put16(sym[k] + 6, 6);
    put64(sym[k] + 16, 256);
  }
  size_t sym_at = add(im, sym, sizeof sym);
  sym_table_at = sym_at;

  unsigned char info[256];
  size_t n = 0;
  const unsigned char api[4] = {0x82, 0, 0, 0};
  n += attr(info + n, 4, 0x37, 0, api, 4);
  n += kparam(info + n, 0, 2, 16, 12); /* ptxas writes the last parameter first */
  n += kparam(info + n, 0, 1, 8, 8);
  n += kparam(info + n, 0, 0, 0, 1);
  n += attr(info + n, 1, 0x3e, 0, NULL, 0);    /* no value */
  n += attr(info + n, 2, 0x4a, 0, NULL, 0);    /* a byte */
  n += attr(info + n, 3, 0x19, 28, NULL, 0);   /* parameter bytes */
  unsigned char cbank[8] = {9, 0, 0, 0};
  put16(cbank + 4, 0x210);
  put16(cbank + 6, 28);
  n += attr(info + n, 4, 0x0a, 0, cbank, 8);
  info_kern_size = n;
  info_kern_at = add(im, info, n);

  n = 0;
  n += kparam(info + n, 1, 2, 5008, 1);
  n += kparam(info + n, 1, 1, 8, 5000);
  n += kparam(info + n, 1, 0, 0, 8);
  n += attr(info + n, 3, 0x19, 5009, NULL, 0);
  size_t big_at = add(im, info, n), big_size = n;
  const unsigned char text[16] = {0};
  size_t text_at = add(im, text, sizeof text);

  /* Section headers: null, .shstrtab, .strtab, .symtab, .nv.info.kern,
   * .nv.info.big, .text.kern. */
  const struct { uint32_t name, type; size_t at, size; uint32_t link; } sh[7] = {
      {0, 0, 0, 0, 0},
      {1, 3, shstr_at, sizeof shstr, 0},
      {11, 3, str_at, sizeof str, 0},
      {19, 2, sym_at, sizeof sym, 2},
      {27, 0x70000000, info_kern_at, info_kern_size, 3},
      {41, 0x70000000, big_at, big_size, 3},
      {54, 1, text_at, sizeof text, 0},
  };
  unsigned char hdrs[7][64];
  memset(hdrs, 0, sizeof hdrs);
  for (int k = 0; k < 7; k++) {
    put32(hdrs[k], sh[k].name);
    put32(hdrs[k] + 4, sh[k].type);
    put64(hdrs[k] + 24, sh[k].at);
    put64(hdrs[k] + 32, sh[k].size);
    put32(hdrs[k] + 40, sh[k].link);
  }
  size_t sh_at = add(im, hdrs, sizeof hdrs);

  static const unsigned char ident[16] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0x33, 7};
  memcpy(im->b, ident, 16);
  put16(im->b + 16, 2);   /* ET_EXEC */
  put16(im->b + 18, 190); /* EM_CUDA */
  put32(im->b + 20, 1);
  put64(im->b + 40, sh_at);
  put16(im->b + 52, 64);
  put16(im->b + 58, 64);
  put16(im->b + 60, 7);
  put16(im->b + 62, 1);
}

/* Reads `kernel` from the first n bytes of im, copied into an allocation
 * of exactly n bytes so that ASan catches any over-read. */
static uk_status read_params(const image *im, size_t n, const char *kernel, int *count, uk_param_info **ps) {
  unsigned char *t = malloc(n ? n : 1);
  if (!t) return UK_ERR_NOMEM;
  memcpy(t, im->b, n);
  uk_status fk = uk__cubin_find_kernel(t, n, kernel);
  CHECK(fk == UK_OK || fk == UK_ERR_NOT_FOUND || fk == UK_ERR_INVALID);
  uk_strbuf sb;
  uk__sb_init(&sb);
  uk__cubin_list_kernels(t, n, &sb);
  CHECK(sb.len > 0);
  uk__sb_release(&sb);
  for (int a = 0; a < UK_ATTR_COUNT_; a++) { /* the attribute reader on the same bytes */
    int v = -1;
    uk_status sa = uk__cubin_attribute(t, n, kernel, (uk_function_attr)a, &v);
    CHECK(sa == UK_OK || sa == UK_ERR_NOT_FOUND || sa == UK_ERR_INVALID);
    CHECK(sa != UK_OK || v >= 0);
  }
  uk_status st = uk__cubin_params(t, n, kernel, count, ps); /* last: its message is the one kept */
  free(t);
  return st;
}

static void exact(void) {
  image im;
  build(&im);
  int n = -1;
  uk_param_info *ps = NULL;
  CHECK_OK(read_params(&im, im.n, "kern", &n, &ps));
  CHECK(n == 3 && ps);
  if (ps && n == 3)
    CHECK(ps[0].offset == 0 && ps[0].size == 1 && ps[1].offset == 8 && ps[1].size == 8 && ps[2].offset == 16 &&
          ps[2].size == 12);
  free(ps);
  ps = NULL;
  CHECK_OK(read_params(&im, im.n, "big", &n, &ps));
  CHECK(n == 3 && ps);
  if (ps && n == 3)
    CHECK(ps[0].offset == 0 && ps[0].size == 8 && ps[1].offset == 8 && ps[1].size == 5000 &&
          ps[2].offset == 5008 && ps[2].size == 1);
  free(ps);

  CHECK_OK(uk__cubin_find_kernel(im.b, im.n, "kern"));
  CHECK_OK(uk__cubin_find_kernel(im.b, im.n, "nodata"));
  CHECK_STATUS(uk__cubin_find_kernel(im.b, im.n, "helper"), UK_ERR_NOT_FOUND); /* a device function */
  CHECK_STATUS(uk__cubin_find_kernel(im.b, im.n, "ker"), UK_ERR_NOT_FOUND);
  uk_strbuf sb;
  uk__sb_init(&sb);
  uk__sb_add(&sb, "(kernels: ");
  uk__cubin_list_kernels(im.b, im.n, &sb);
  CHECK_STREQ(uk__sb_str(&sb), "(kernels: kern, big, nodata");
  uk__sb_reset(&sb);
  uk__cubin_list_kernels("hello", 6, &sb);
  CHECK_STREQ(uk__sb_str(&sb), "none");
  uk__sb_release(&sb);
  n = 7;
  ps = (uk_param_info *)1;
  CHECK_STATUS(uk__cubin_params(im.b, im.n, "nodata", &n, &ps), UK_ERR_NOT_FOUND);
  CHECK_CONTAINS(uk_last_error(), ".nv.info.nodata");
  CHECK(n == 7 && ps == (uk_param_info *)1);
  CHECK_STATUS(uk__cubin_params(im.b, im.n, "kern2", &n, &ps), UK_ERR_NOT_FOUND);
  CHECK(uk__cubin_is_elf(im.b, im.n) && !uk__cubin_is_elf(im.b, 3) && !uk__cubin_is_elf(NULL, 64));
  CHECK_STATUS(uk__cubin_params("hello", 6, "kern", &n, &ps), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "not an ELF image");
  CHECK_STATUS(uk__cubin_params(NULL, 64, "kern", &n, &ps), UK_ERR_INVALID);
  CHECK(n == 7 && ps == (uk_param_info *)1);
  /* __device__ variables: "nodata" made a global object of 40 bytes; functions are no objects */
  image ob = im;
  ob.b[sym_table_at + 4 * 24 + 4] = 0x11;
  put64(ob.b + sym_table_at + 4 * 24 + 16, 40);
  uint64_t size = 7;
  CHECK_OK(uk__cubin_object_size(ob.b, ob.n, "nodata", &size));
  CHECK(size == 40);
  size = 7;
  CHECK_STATUS(uk__cubin_object_size(ob.b, ob.n, "kern", &size), UK_ERR_NOT_FOUND);
  CHECK_STATUS(uk__cubin_object_size(ob.b, ob.n, "nodat", &size), UK_ERR_NOT_FOUND);
  CHECK_STATUS(uk__cubin_object_size(im.b, im.n, "nodata", &size), UK_ERR_NOT_FOUND);
  CHECK(size == 7);
  CHECK_STATUS(uk__cubin_object_size("hello", 6, "nodata", &size), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "not an ELF image");
  CHECK_STATUS(uk__cubin_object_size(ob.b, 100, "nodata", &size), UK_ERR_INVALID); /* cut */
  CHECK(size == 7);
}

/* One hand-made malformation: `edit` changes a fresh image, which must then
 * be rejected with `msg`. */
static void expect_bad(void (*edit)(image *), const char *msg) {
  image im;
  build(&im);
  edit(&im);
  int n = 7;
  uk_param_info *ps = (uk_param_info *)1;
  CHECK_STATUS(read_params(&im, im.n, "kern", &n, &ps), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), msg);
  CHECK(n == 7 && ps == (uk_param_info *)1);
}

static size_t shdr(const image *im, int k) {
  size_t at = (size_t)im->b[40] | (size_t)im->b[41] << 8;
  return at + (size_t)k * 64;
}
static void class32(image *im) { im->b[4] = 1; }
static void big_endian(image *im) { im->b[5] = 2; }
static void shoff_huge(image *im) { put64(im->b + 40, UINT64_MAX - 10); }
static void shentsize(image *im) { put16(im->b + 58, 40); }
static void shstrndx(image *im) { put16(im->b + 62, 7); }
static void sec_wrap(image *im) { put64(im->b + shdr(im, 4) + 32, UINT64_MAX); }
static void sec_past(image *im) { put64(im->b + shdr(im, 4) + 24, im->n - 8); }
static void name_past(image *im) { put32(im->b + shdr(im, 4), 5000); }
static void name_unterminated(image *im) { put64(im->b + shdr(im, 1) + 32, 40); }
static void dup_ordinal(image *im) { put16(im->b + info_kern_at + 8 + 8, 1); }
static void ordinal_gap(image *im) { put16(im->b + info_kern_at + 8 + 8, 4); }
static void size_zero(image *im) { put32(im->b + info_kern_at + 8 + 12, 0x1f000u); }
static void past_declared(image *im) { put32(im->b + info_kern_at + 8 + 12, 20u << 18); }
static void record_len(image *im) { put16(im->b + info_kern_at + 8 + 2, 8); }
static void attr_past(image *im) { put16(im->b + info_kern_at + 2, 0xffff); }
static void attr_format(image *im) { im->b[info_kern_at + 8] = 9; }
static void cut_attr(image *im) { put64(im->b + shdr(im, 4) + 32, info_kern_size - 10); }
static void symtab_link(image *im) { put32(im->b + shdr(im, 3) + 40, 99); }

static void malformations(void) {
  expect_bad(class32, "not a 64-bit little-endian ELF");
  expect_bad(big_endian, "not a 64-bit little-endian ELF");
  expect_bad(shoff_huge, "section header table");
  expect_bad(shentsize, "section header table");
  expect_bad(shstrndx, "section-name table");
  expect_bad(sec_wrap, "outside the image");
  expect_bad(sec_past, "outside the image");
  expect_bad(name_past, "section name");
  expect_bad(name_unterminated, "section name");
  expect_bad(dup_ordinal, "ordinal");
  expect_bad(ordinal_gap, "ordinal");
  expect_bad(size_zero, "size or offset");
  expect_bad(past_declared, "declared parameter size");
  expect_bad(record_len, "12 bytes");
  expect_bad(attr_past, "runs past its section");
  expect_bad(attr_format, "unknown format");
  expect_bad(cut_attr, "cut short");
  /* The symbol table is only read for lookups. */
  image im;
  build(&im);
  symtab_link(&im);
  CHECK_STATUS(uk__cubin_find_kernel(im.b, im.n, "kern"), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "string table");
}

static void damaged(void) {
  image im;
  build(&im);
  int n;
  uk_param_info *ps;
  /* Every truncation: the section headers sit at the end, so each is cut. */
  for (size_t cut = 0; cut < im.n; cut++) {
    ps = NULL;
    CHECK_STATUS(read_params(&im, cut, "kern", &n, &ps), UK_ERR_INVALID);
    free(ps);
  }
  /* Every byte, several values each. */
  const unsigned char vals[] = {0x00, 0xff, 0x7f, 0x80, 0x01};
  image c;
  for (size_t at = 0; at < im.n; at++)
    for (size_t v = 0; v < sizeof vals; v++) {
      c = im;
      c.b[at] = vals[v];
      ps = NULL;
      if (read_params(&c, c.n, "kern", &n, &ps) == UK_OK)
        for (int k = 0; k < n; k++) CHECK(ps[k].size > 0 && ps[k].offset + ps[k].size <= 32764);
      free(ps);
      uint64_t size;
      uk_status st = uk__cubin_object_size(c.b, c.n, "nodata", &size);
      CHECK(st == UK_OK || st == UK_ERR_NOT_FOUND || st == UK_ERR_INVALID);
    }
  /* Random bursts. */
  ut_seed(1010);
  for (int it = 0; it < 30000; it++) {
    c = im;
    int flips = 1 + (int)(ut_rand() % 8);
    for (int k = 0; k < flips; k++) c.b[ut_rand() % c.n] = (unsigned char)ut_rand();
    ps = NULL;
    if (read_params(&c, c.n, it % 2 ? "kern" : "big", &n, &ps) == UK_OK)
      for (int k = 0; k < n; k++) CHECK(ps[k].size > 0 && ps[k].offset + ps[k].size <= 32764);
    free(ps);
  }
}

/* Argument checks of the public calls that need no module. */
static void public_arguments(void) {
  int n = 3;
  const uk_param_info *ps = (const uk_param_info *)1;
  CHECK_STATUS(uk_function_params(NULL, &n, &ps), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "uk_function_params: f is NULL");
  CHECK(n == 3 && ps == (const uk_param_info *)1);
  CHECK(uk_module_source(NULL) == NULL);
  const char *const *opts = (const char *const *)1;
  CHECK_STATUS(uk_module_nvrtc_options(NULL, 1, &opts, &n), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "uk_module_nvrtc_options: m is NULL");
  CHECK(n == 3 && opts == (const char *const *)1);
}

int main(void) {
  exact();
  malformations();
  damaged();
  public_arguments();
  return ut_finish("test_cubin_params");
}
