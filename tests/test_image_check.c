/* Container checks before nvJitLink and the driver (issue 22 item 2),
 * on the real binaries in tests/data/bin: each passes; every truncation
 * is refused with UK_ERR_INVALID naming the byte; seeded byte flips never
 * crash (the sanitizer tier reads out of bounds as a failure) and end in
 * UK_OK or UK_ERR_INVALID with a message; named malformations give their
 * exact message; uk_module_from_image/_from_file and uk_module_link refuse
 * them before any driver or nvJitLink call (no GPU, no NVRTC needed). */
#include <dlfcn.h>
#include <unistd.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "runtime/cubin_params.h"
#include "runtime/fatbin.h"
#include "runtime/image_check.h"
#include "runtime/link.h"
#include "testutil.h"

typedef struct blob {
  unsigned char *p;
  size_t n;
} blob;

static blob load(const char *name) {
  const char *dir = getenv("UKERN_TEST_DATA");
  char path[4096];
  snprintf(path, sizeof path, "%s/data/bin/%s", dir ? dir : "tests", name);
  blob b = {NULL, 0};
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    CHECK(0);
    return b;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  b.p = malloc((size_t)n);
  b.n = b.p && fread(b.p, 1, (size_t)n, f) == (size_t)n ? (size_t)n : 0;
  fclose(f);
  CHECK(b.n > 0);
  return b;
}

static void put32(unsigned char *p, uint32_t v) {
  for (int k = 0; k < 4; k++) p[k] = (unsigned char)(v >> (8 * k));
}
static void put64(unsigned char *p, uint64_t v) {
  for (int k = 0; k < 8; k++) p[k] = (unsigned char)(v >> (8 * k));
}
static uint64_t get64(const unsigned char *p) {
  uint64_t v = 0;
  for (int k = 0; k < 8; k++) v |= (uint64_t)p[k] << (8 * k);
  return v;
}

/* A copy on the heap of exactly n bytes, so ASan sees any read past it. */
static unsigned char *exact(const unsigned char *p, size_t n) {
  unsigned char *c = malloc(n ? n : 1);
  if (n) memcpy(c, p, n);
  return c;
}

static const struct {
  const char *file;
  int kind;
} inputs[] = {{"small.cubin", UK__LINK_CUBIN},   {"small.fatbin", UK__LINK_FATBIN}, {"comp.fatbin", UK__LINK_FATBIN},
              {"small.a", UK__LINK_LIBRARY},     {"small.ltoir", UK__LINK_LTOIR}};

/* Every prefix of every binary: refused (LTO-IR below 16 bytes only: its
 * container has no length to check; an archive may lose its last pad byte). */
static void test_truncation(void) {
  for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
    blob b = load(inputs[i].file);
    if (!b.n) continue;
    uk__error_clear();
    CHECK_OK(uk__image_check(inputs[i].kind, b.p, b.n, inputs[i].file));
    int refused = 0, wrong = 0;
    size_t must = inputs[i].kind == UK__LINK_LTOIR ? 16 : inputs[i].kind == UK__LINK_LIBRARY ? b.n - 1 : b.n;
    for (size_t len = 0; len < b.n; len++) {
      unsigned char *c = exact(b.p, len);
      uk_status st = uk__image_check(inputs[i].kind, c, len, inputs[i].file);
      /* An archive cut exactly before a member header is a shorter archive. */
      int boundary = inputs[i].kind == UK__LINK_LIBRARY && len + 60 <= b.n && !memcmp(b.p + len + 58, "`\n", 2);
      if (st == UK_ERR_INVALID && strstr(uk_last_error(), "malformed") && strstr(uk_last_error(), " at byte ")) refused++;
      else if (boundary && st == UK_OK) must--;
      else if (len < must || st != UK_OK) wrong++;
      free(c);
    }
    CHECK(refused >= (int)must && wrong == 0);
    if (wrong) fprintf(stderr, "%s: %d truncations not refused\n", inputs[i].file, wrong);
    free(b.p);
  }
}

/* Seeded flips of 1-4 bytes: never a crash; UK_OK or UK_ERR_INVALID with a
 * message. The cubin reader (cubin_params.c) gets the flipped cubins too. */
static void test_flips(void) {
  ut_seed(22);
  for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
    blob b = load(inputs[i].file);
    if (!b.n) continue;
    int ok = 0, refused = 0, other = 0;
    for (int round = 0; round < 3000; round++) {
      unsigned char *c = exact(b.p, b.n);
      int flips = 1 + (int)(ut_rand() % 4);
      /* Half the rounds aim at the headers, where flips matter most. */
      size_t span = round & 1 ? b.n : (b.n < 256 ? b.n : 256);
      for (int f = 0; f < flips; f++) c[ut_rand() % span] ^= (unsigned char)(1u << (ut_rand() % 8));
      if (round % 3 == 0) put64(c + (ut_rand() % (b.n - 8)), ut_rand()); /* a wild 8-byte field */
      uk_status st = uk__image_check(inputs[i].kind, c, b.n, inputs[i].file);
      if (st == UK_OK) ok++;
      else if (st == UK_ERR_INVALID && strstr(uk_last_error(), "malformed")) refused++;
      else other++;
      if (inputs[i].kind == UK__LINK_CUBIN) {
        int n = 0;
        uk_param_info *params = NULL;
        if (uk__cubin_params(c, b.n, "k", &n, &params) == UK_OK) free(params);
        (void)uk__cubin_find_kernel(c, b.n, "k");
        uk_strbuf sb;
        uk__sb_init(&sb);
        uk__cubin_list_kernels(c, b.n, &sb);
        uk__sb_release(&sb);
      }
      free(c);
    }
    printf("%s: 3000 flipped copies: %d pass, %d refused\n", inputs[i].file, ok, refused);
    CHECK(other == 0 && refused > 0);
    free(b.p);
  }
}

/* uk__image_check(kind) on a modified copy; returns the status, the message in `msg`. */
static uk_status check_mod(int kind, const blob *b, void (*mod)(unsigned char *, size_t), size_t n) {
  unsigned char *c = malloc(b->n);
  memcpy(c, b->p, b->n);
  mod(c, n);
  uk_status st = uk__image_check(kind, c, n, "t");
  free(c);
  return st;
}

static void claim_more(unsigned char *p, size_t n) { put64(p + 8, get64(p + 8) + 64); (void)n; }
static void machine_x86(unsigned char *p, size_t n) { p[18] = 62; (void)n; }
static void section5_far(unsigned char *p, size_t n) { put64(p + get64(p + 40) + 5 * 64 + 24, 1ull << 40); (void)n; }
static void bad_shstrndx(unsigned char *p, size_t n) { p[62] = 17; (void)n; }
static void symbol_section(unsigned char *p, size_t n) {
  /* .symtab is section 3 of small.cubin; its symbol 2's st_shndx */
  uint64_t off = get64(p + get64(p + 40) + 3 * 64 + 24);
  p[off + 2 * 24 + 6] = 99;
  (void)n;
}
static void reloc_symbol(unsigned char *p, size_t n) {
  /* .rela.debug_frame is section 13: its first relocation's symbol index */
  uint64_t off = get64(p + get64(p + 40) + 13 * 64 + 24);
  put32(p + off + 12, 5000);
  (void)n;
}
static void entry_bigger(unsigned char *p, size_t n) { put64(p + 16 + 8, 1ull << 33); (void)n; }
static void compressed_size(unsigned char *p, size_t n) { put32(p + 16 + 16, 0xffffff); (void)n; }
static void member_size(unsigned char *p, size_t n) { memcpy(p + 8 + 48, "999999999 ", 10); (void)n; }
static void member_fmag(unsigned char *p, size_t n) { p[8 + 58] = 'x'; (void)n; }
static void thin(unsigned char *p, size_t n) { memcpy(p, "!<thin>\n", 8); (void)n; }
static void lto_magic(unsigned char *p, size_t n) { p[0] ^= 1; (void)n; }
static void nothing(unsigned char *p, size_t n) { (void)p, (void)n; }

static void test_messages(void) {
  blob cubin = load("small.cubin"), fat = load("small.fatbin"), comp = load("comp.fatbin"), lib = load("small.a"),
       lto = load("small.ltoir");
  if (!cubin.n || !fat.n || !comp.n || !lib.n || !lto.n) return;
  uint64_t shoff = get64(cubin.p + 40);
  char want[256];

  CHECK_STATUS(check_mod(UK__LINK_FATBIN, &fat, claim_more, fat.n), UK_ERR_INVALID);
  snprintf(want, sizeof want, "t: malformed fatbin at byte 8: the header claims %llu bytes of entries; %zu are given",
           (unsigned long long)get64(fat.p + 8) + 64, fat.n - 16);
  CHECK_STREQ(uk_last_error(), want);
  CHECK_STATUS(check_mod(UK__LINK_CUBIN, &cubin, machine_x86, cubin.n), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "t: malformed cubin at byte 18: e_machine is 62, not EM_CUDA (190): not a cubin");
  /* ... yet as a host object (UK_LINK_OBJECT) any machine will do. */
  CHECK_OK(check_mod(UK__LINK_OBJECT, &cubin, machine_x86, cubin.n));
  CHECK_STATUS(check_mod(UK__LINK_CUBIN, &cubin, section5_far, cubin.n), UK_ERR_INVALID);
  snprintf(want, sizeof want,
           "t: malformed cubin at byte %llu: section 5's contents (offset 1099511627776, 168 bytes) run past the end "
           "(%zu bytes)", (unsigned long long)shoff + 5 * 64 + 24, cubin.n);
  CHECK_STREQ(uk_last_error(), want);
  CHECK_STATUS(check_mod(UK__LINK_CUBIN, &cubin, bad_shstrndx, cubin.n), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "t: malformed cubin at byte 62: e_shstrndx 17 is not a section (of 17)");
  CHECK_STATUS(check_mod(UK__LINK_CUBIN, &cubin, symbol_section, cubin.n), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "symbol 2's section 99 does not exist");
  CHECK_STATUS(check_mod(UK__LINK_CUBIN, &cubin, reloc_symbol, cubin.n), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "relocation 0 of section 13 names symbol 5000 (the table has 20)");
  CHECK_STATUS(check_mod(UK__LINK_FATBIN, &fat, entry_bigger, fat.n), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "t: malformed fatbin at byte 24: entry 0 claims 8589934592 bytes;");
  CHECK_STATUS(check_mod(UK__LINK_FATBIN, &comp, compressed_size, comp.n), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "at byte 32: compressed entry 0's compressed size 16777215 is not in 1..");
  CHECK_STATUS(check_mod(UK__LINK_LIBRARY, &lib, member_size, lib.n), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "t: malformed static library at byte 56: member 0 claims 999999999 bytes;");
  CHECK_STATUS(check_mod(UK__LINK_LIBRARY, &lib, member_fmag, lib.n), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "t: malformed static library at byte 66: member 0's header does not end in \"`\\n\"");
  CHECK_STATUS(check_mod(UK__LINK_LIBRARY, &lib, thin, lib.n), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "thin archives are not supported");
  CHECK_STATUS(check_mod(UK__LINK_LTOIR, &lto, lto_magic, lto.n), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "t: malformed LTO-IR at byte 0: no NVVM IR or LLVM bitcode magic");
  /* A cubin given as a fatbin, and the other way round. */
  CHECK_STATUS(check_mod(UK__LINK_FATBIN, &cubin, nothing, cubin.n), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "t: malformed fatbin at byte 0: no fatbin magic");
  CHECK_STATUS(check_mod(UK__LINK_CUBIN, &fat, nothing, fat.n), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "t: malformed cubin at byte 0: no ELF magic");

  /* The archive's member 1 (0 is the symbol index) is a host object whose fatbin is checked: a
   * damaged fatbin inside is found, its offset counted from the archive. */
  unsigned char *c = exact(lib.p, lib.n);
  unsigned char *magic = NULL;
  for (size_t k = 0; k + 4 <= lib.n && !magic; k++)
    if (k > 8 && c[k] == 0x50 && c[k + 1] == 0xed && c[k + 2] == 0x55 && c[k + 3] == 0xba) magic = c + k;
  CHECK(magic != NULL);
  if (magic) {
    put64(magic + 8, 1ull << 40);
    CHECK_STATUS(uk__image_check(UK__LINK_LIBRARY, c, lib.n, "t"), UK_ERR_INVALID);
    snprintf(want, sizeof want, "t: member 1: malformed fatbin at byte %zu: the header claims 1099511627776",
             (size_t)(magic - c) + 8);
    CHECK_CONTAINS(uk_last_error(), want);
  }
  free(c);

  /* A fatbin of our own making with uncompressed PTX: the PTX must hold its NUL. */
  uk__fatbin_image im[2] = {{{90, 0}, cubin.p, cubin.n}, {{90, UK__ARCH_VIRTUAL}, ".version 9.0\n.target sm_90\n", 27}};
  void *own = NULL;
  size_t own_n = 0;
  CHECK_OK(uk__fatbin_build(im, 2, &own, &own_n));
  if (own) {
    CHECK_OK(uk__fatbin_check(own, own_n, 0, "own"));
    unsigned char *ptx = (unsigned char *)own + own_n - 32; /* the PTX payload, NUL-padded to 32 */
    memset(ptx, 'x', 32);
    CHECK_STATUS(uk__fatbin_check(own, own_n, 0, "own"), UK_ERR_INVALID);
    CHECK_CONTAINS(uk_last_error(), "PTX entry 1 is not NUL-terminated within its 32 bytes");
    free(own);
  }
  /* A zstd-compressed cubin is checked as what it inflates to (its frames
   * carry no checksum: a flipped byte inflates to a damaged cubin, which
   * crashed nvJitLink). Needs libzstd at run time. */
  void *zlib = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
  if (zlib) {
    int inflated = 0;
    unsigned char *z = exact(comp.p, comp.n);
    for (size_t k = 80; k < comp.n; k++) {
      z[k] ^= 0x10;
      if (uk__fatbin_check(z, comp.n, 0, "z") == UK_ERR_INVALID &&
          (strstr(uk_last_error(), "z: fatbin entry 0, inflated: malformed cubin at byte ") ||
           strstr(uk_last_error(), "z: malformed fatbin at byte 32: compressed entry 0 does not inflate")))
        inflated++;
      z[k] ^= 0x10;
    }
    CHECK_OK(uk__fatbin_check(z, comp.n, 0, "z"));
    printf("comp.fatbin: %d of %zu payload flips refused once inflated\n", inflated, comp.n - 80);
    CHECK(inflated > 100);
    free(z);
    dlclose(zlib);
  } else {
    printf("note: no libzstd: compressed entries are checked for bounds only\n");
  }
  /* Two fatbins back to back are both checked; trailing padding is not. */
  unsigned char *two = malloc(2 * fat.n + 8);
  memcpy(two, fat.p, fat.n);
  memcpy(two + fat.n, fat.p, fat.n);
  memset(two + 2 * fat.n, 0, 8);
  CHECK_OK(uk__fatbin_check(two, 2 * fat.n + 8, 0, "two"));
  put64(two + fat.n + 8, get64(fat.p + 8) + 64);
  CHECK_STATUS(uk__fatbin_check(two, 2 * fat.n + 8, 0, "two"), UK_ERR_INVALID);
  snprintf(want, sizeof want, "two: malformed fatbin at byte %zu: the header claims", fat.n + 8);
  CHECK_CONTAINS(uk_last_error(), want);
  free(two);
  free(cubin.p), free(fat.p), free(comp.p), free(lib.p), free(lto.p);
}

/* The public entry points refuse a malformed image before the driver or
 * nvJitLink sees it (no GPU, NVRTC or nvJitLink is needed to get here). */
static void test_entry_points(void) {
  blob cubin = load("small.cubin"), fat = load("small.fatbin");
  if (!cubin.n || !fat.n) return;
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = 90;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&o, &ctx));
  if (!ctx) return;
  uk_module *m = NULL;
  unsigned char *c = exact(cubin.p, 1000);
  CHECK_STATUS(uk_module_from_image(ctx, c, 1000, &m), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_module_from_image: malformed cubin at byte 40: the section header table (17 "
                               "entries at 3224) runs past the end (1000 bytes)");
  CHECK(m == NULL);
  free(c);
  c = exact(fat.p, fat.n);
  put64(c + 8, get64(c + 8) + 4096);
  CHECK_STATUS(uk_module_from_image(ctx, c, fat.n, &m), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "uk_module_from_image: malformed fatbin at byte 8: the header claims");

  char *dir = ut_temp_dir("image-check");
  char path[4096];
  snprintf(path, sizeof path, "%s/bad.fatbin", dir);
  FILE *f = fopen(path, "wb");
  CHECK(f && fwrite(c, 1, fat.n, f) == fat.n);
  if (f) fclose(f);
  CHECK_STATUS(uk_module_from_file(ctx, path, &m), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "bad.fatbin");
  CHECK_CONTAINS(uk_last_error(), "uk_module_from_file: malformed fatbin at byte 8: the header claims");
  unlink(path);
  free(dir);
  free(c);

  c = exact(cubin.p, 64);
  uk_link_input in[2] = {{UK_LINK_PTX, ".version 9.0\n", 0, NULL, "a.ptx"}, {UK_LINK_CUBIN, c, 64, NULL, "cut.cubin"}};
  CHECK_STATUS(uk_module_link(ctx, in, 2, NULL, &m), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_module_link: inputs[1] ('cut.cubin'): malformed cubin at byte 40: the section "
                               "header table (17 entries at 3224) runs past the end (64 bytes)");
  CHECK(m == NULL);
  free(c);
  uk_cache_stats s;
  CHECK_OK(uk_context_cache_stats(ctx, &s));
  CHECK(s.compiles == 0 && s.memory_hits == 0);
  uk_context_destroy(ctx);
  free(cubin.p), free(fat.p);
}

int main(void) {
  test_truncation();
  test_flips();
  test_messages();
  test_entry_points();
  return ut_finish("test_image_check");
}
