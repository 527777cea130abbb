/* Fat binaries (fatbin.h). All fields little-endian. */
#include "runtime/fatbin.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

#define FATBIN_MAGIC 0xBA55ED50u
#define KIND_PTX 1
#define KIND_ELF 2
#define ELF_HEADER 64
#define PTX_HEADER 80
#define FLAG_64BIT_LINUX 0x11u  /* 64-bit code, Linux host */
#define FLAG_ARCH_SPECIFIC 0x100000u /* sm_XYa / compute_XYa */

static void put16(unsigned char *p, uint16_t v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
}
static void put32(unsigned char *p, uint32_t v) {
  for (int k = 0; k < 4; k++) p[k] = (unsigned char)(v >> (8 * k));
}
static void put64(unsigned char *p, uint64_t v) {
  for (int k = 0; k < 8; k++) p[k] = (unsigned char)(v >> (8 * k));
}
static uint32_t get32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get64(const unsigned char *p) { return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32; }

static int is_ptx(const uk__fatbin_image *im) { return (im->arch.flags & UK__ARCH_VIRTUAL) != 0; }

static size_t padded(const uk__fatbin_image *im) {
  size_t n = is_ptx(im) ? im->size + 1 : im->size; /* PTX keeps a NUL */
  return (n + 7) & ~(size_t)7;
}

/* ".version 9.0" -> 9 << 16 | 0 (the PTX entry's version field). */
static uint32_t ptx_version(const char *text, size_t n) {
  const char *v = NULL;
  for (size_t k = 0; k + 9 < n && !v; k++)
    if (!memcmp(text + k, ".version ", 9)) v = text + k + 9;
  if (!v) return 0;
  unsigned major = 0, minor = 0;
  while (*v >= '0' && *v <= '9') major = major * 10 + (unsigned)(*v++ - '0');
  if (*v == '.') v++;
  while (*v >= '0' && *v <= '9') minor = minor * 10 + (unsigned)(*v++ - '0');
  return major << 16 | (minor & 0xffff);
}

uk_status uk__fatbin_build(const uk__fatbin_image *images, int n, void **out, size_t *size) {
  size_t total = 0;
  for (int k = 0; k < n; k++) {
    const uk__fatbin_image *im = &images[k];
    const unsigned char *p = im->data;
    if (im->arch.flags & UK__ARCH_F)
      return uk__errorf(UK_ERR_INVALID, "fatbin: family targets (sm_%df) are not supported; use %d or %da",
                        im->arch.num, im->arch.num, im->arch.num);
    if (!is_ptx(im) && (im->size < 64 || memcmp(p, "\x7f" "ELF", 4) != 0))
      return uk__errorf(UK_ERR_INVALID, "fatbin: image %d (sm_%d) is not a cubin", k, im->arch.num);
    total += (is_ptx(im) ? PTX_HEADER : ELF_HEADER) + padded(im);
  }
  unsigned char *buf = calloc(1, 16 + total);
  if (!buf) return uk__errorf(UK_ERR_NOMEM, "out of memory building a fatbin");
  put32(buf, FATBIN_MAGIC);
  put16(buf + 4, 1);
  put16(buf + 6, 16);
  put64(buf + 8, total);
  unsigned char *e = buf + 16;
  for (int k = 0; k < n; k++) {
    const uk__fatbin_image *im = &images[k];
    int ptx = is_ptx(im);
    uint32_t hs = ptx ? PTX_HEADER : ELF_HEADER;
    put16(e, ptx ? KIND_PTX : KIND_ELF);
    put16(e + 2, 0x0101);
    put32(e + 4, hs);
    put64(e + 8, padded(im));
    /* e+16: compressed size (0: stored as is). */
    if (ptx) put32(e + 20, 64); /* offset of the (empty) options block */
    /* e+24: PTX ISA version, or for ELF 1.<the cubin's ABI version>. */
    put32(e + 24, ptx ? ptx_version(im->data, im->size) : 1u << 16 | ((const unsigned char *)im->data)[8]);
    put32(e + 28, (uint32_t)im->arch.num);
    /* e+32, e+36: object name offset and length (none). */
    put64(e + 40, FLAG_64BIT_LINUX | ((im->arch.flags & UK__ARCH_A) ? FLAG_ARCH_SPECIFIC : 0));
    if (ptx) put32(e + 64, 72); /* options: an empty string at 72 */
    memcpy(e + hs, im->data, im->size);
    e += hs + padded(im);
  }
  *out = buf;
  *size = 16 + total;
  return UK_OK;
}

int uk__fatbin_list(const void *fatbin, size_t size, uk__fatbin_image *images, int max) {
  const unsigned char *p = fatbin;
  if (size < 16 || get32(p) != FATBIN_MAGIC || get32(p + 4) >> 16 != 16) return -1;
  uint64_t total = get64(p + 8);
  if (total > size - 16) return -1;
  const unsigned char *e = p + 16, *end = p + 16 + total;
  int n = 0;
  while (e < end) {
    if ((size_t)(end - e) < 48) return -1;
    uint32_t kind = get32(e) & 0xffff, hs = get32(e + 4);
    uint64_t len = get64(e + 8);
    if (hs < 48 || hs > (size_t)(end - e) || len > (uint64_t)(end - e) - hs) return -1;
    if (n < max) {
      uint64_t flags = get64(e + 40);
      images[n].arch.num = (int)get32(e + 28);
      images[n].arch.flags = (kind == KIND_PTX ? UK__ARCH_VIRTUAL : 0) | ((flags & FLAG_ARCH_SPECIFIC) ? UK__ARCH_A : 0);
      images[n].data = e + hs;
      images[n].size = (size_t)len;
    }
    n++;
    e += hs + len;
  }
  return n < max ? n : max;
}
