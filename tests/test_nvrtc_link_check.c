/* The container checks in front of nvJitLink (issue 22 item 2), with the
 * real nvJitLink and no GPU: the binaries of tests/data/bin link as they
 * are (the checks refuse nothing good); every truncation of the cubin from
 * 64 bytes on, and a fatbin whose header claims more bytes than given (it
 * hung nvJitLink), are refused with UK_ERR_INVALID before nvJitLink sees
 * them, and nothing is cached. */
#include "testutil.h"

static unsigned char *load(const char *name, size_t *n) {
  const char *dir = getenv("UKERN_TEST_DATA");
  char path[4096];
  snprintf(path, sizeof path, "%s/data/bin/%s", dir ? dir : "tests", name);
  FILE *f = fopen(path, "rb");
  unsigned char *p = NULL;
  *n = 0;
  if (f) {
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    p = malloc((size_t)len);
    *n = p && fread(p, 1, (size_t)len, f) == (size_t)len ? (size_t)len : 0;
    fclose(f);
  }
  CHECK(*n > 0);
  return p;
}

static uk_status link1(uk_context *ctx, uk_link_kind kind, const void *data, size_t n, const char *name) {
  uk_link_input in = {kind, data, n, NULL, name};
  uk_module *m = NULL;
  uk_status st = uk_module_link(ctx, &in, 1, NULL, &m);
  CHECK((st == UK_OK) == (m != NULL));
  uk_module_destroy(m);
  return st;
}

int main(void) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = 90;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&o, &ctx));
  size_t ncubin, nfat, ncomp, nlib, nobj;
  unsigned char *cubin = load("small.cubin", &ncubin), *fat = load("small.fatbin", &nfat),
                *comp = load("comp.fatbin", &ncomp), *lib = load("small.a", &nlib), *obj = load("small.o", &nobj);
  if (!ctx || !ncubin || !nfat || !ncomp || !nlib || !nobj) return ut_finish("test_nvrtc_link_check");

  /* Good inputs link (each holds a kernel and the device function it calls). */
  CHECK_OK(link1(ctx, UK_LINK_CUBIN, cubin, ncubin, "small.cubin"));
  CHECK_OK(link1(ctx, UK_LINK_FATBIN, fat, nfat, "small.fatbin"));
  CHECK_OK(link1(ctx, UK_LINK_FATBIN, comp, ncomp, "comp.fatbin"));
  CHECK_OK(link1(ctx, UK_LINK_OBJECT, obj, nobj, "small.o"));
  CHECK_OK(link1(ctx, UK_LINK_LIBRARY, lib, nlib, "small.a"));
  uk_cache_stats s0, s1;
  CHECK_OK(uk_context_cache_stats(ctx, &s0));

  /* Every truncation from 64 bytes on: refused, naming the byte. */
  int refused = 0;
  for (size_t len = 64; len < ncubin; len++) {
    unsigned char *c = malloc(len);
    memcpy(c, cubin, len);
    if (link1(ctx, UK_LINK_CUBIN, c, len, "cut.cubin") == UK_ERR_INVALID &&
        strstr(uk_last_error(), "uk_module_link: inputs[0] ('cut.cubin'): malformed cubin at byte "))
      refused++;
    free(c);
  }
  CHECK(refused == (int)(ncubin - 64));
  for (size_t len = 16; len < nfat; len += 7) {
    CHECK_STATUS(link1(ctx, UK_LINK_FATBIN, fat, len, "cut.fatbin"), UK_ERR_INVALID);
  }
  /* The header claims 64 bytes more than given: refused, not a hang. */
  unsigned char *more = malloc(nfat);
  memcpy(more, fat, nfat);
  uint64_t claimed = 0;
  for (int k = 0; k < 8; k++) claimed |= (uint64_t)more[8 + k] << (8 * k);
  claimed += 64;
  for (int k = 0; k < 8; k++) more[8 + k] = (unsigned char)(claimed >> (8 * k));
  CHECK_STATUS(link1(ctx, UK_LINK_FATBIN, more, nfat, "more.fatbin"), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "uk_module_link: inputs[0] ('more.fatbin'): malformed fatbin at byte 8: the header claims");
  free(more);
  /* A library member cut short, and the object given as a cubin. */
  CHECK_STATUS(link1(ctx, UK_LINK_LIBRARY, lib, nlib - 100, "cut.a"), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "malformed static library at byte");
  CHECK_STATUS(link1(ctx, UK_LINK_CUBIN, obj, nobj, "small.o"), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "e_machine is 62, not EM_CUDA (190): not a cubin");
  /* Nothing compiled or cached by the refused inputs. */
  CHECK_OK(uk_context_cache_stats(ctx, &s1));
  CHECK(s1.compiles == s0.compiles && s1.memory_hits == s0.memory_hits && s1.disk_hits == s0.disk_hits);
  free(cubin), free(fat), free(comp), free(lib), free(obj);
  uk_context_destroy(ctx);
  return ut_finish("test_nvrtc_link_check");
}
