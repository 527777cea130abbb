/* Link-input checks by kind, static libraries and LTO-IR (image_check.h);
 * ELF and fatbin structure are elf_check.c and fatbin_check.c. */
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "runtime/image_check.h"
#include "runtime/link.h"

#define AR_MAGIC "!<arch>\n"
#define AR_HEADER 60u

static uint32_t rd32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uk_status uk__ltoir_check(const void *data, size_t bytes, uint64_t base, const char *what) {
  const unsigned char *p = data;
  if (!p || bytes < 16) return uk__image_bad(what, "LTO-IR", base, "shorter than an LTO-IR header (16 bytes)");
  uint32_t m = rd32(p);
  if (m != UK__LTOIR_MAGIC && m != 0xdec04342u /* "BC\xc0\xde" */ && m != 0x0b17c0deu /* bitcode wrapper */)
    return uk__image_bad(what, "LTO-IR", base, "no NVVM IR or LLVM bitcode magic");
  return UK_OK;
}

/* A member's contents, by what they start with. */
static uk_status check_member(const unsigned char *p, size_t n, uint64_t base, const char *what) {
  if (n >= 4 && !memcmp(p, "\x7f" "ELF", 4)) return uk__elf_check_object(p, n, base, uk__fatbin_check, what);
  if (n >= 4 && rd32(p) == UK__FATBIN_MAGIC) return uk__fatbin_check(p, n, base, what);
  if (n >= 4 && rd32(p) == UK__LTOIR_MAGIC) return uk__ltoir_check(p, n, base, what);
  return UK_OK; /* anything else nvJitLink reads as bytes of known length */
}

uk_status uk__archive_check(const void *data, size_t bytes, const char *what) {
  const unsigned char *p = data;
  if (!p || bytes < 8 || memcmp(p, AR_MAGIC, 8) != 0)
    return uk__image_bad(what, "static library", 0, "%s",
                         p && bytes >= 8 && !memcmp(p, "!<thin>\n", 8) ? "thin archives are not supported"
                                                                         : "no \"!<arch>\\n\" magic");
  if (bytes == 8) return uk__image_bad(what, "static library", 8, "no members");
  uint64_t at = 8;
  for (int k = 0; at < bytes; k++) {
    const unsigned char *h = p + at;
    if (bytes - at < AR_HEADER)
      return uk__image_bad(what, "static library", at, "member %d's header is cut short", k);
    if (h[58] != '`' || h[59] != '\n')
      return uk__image_bad(what, "static library", at + 58, "member %d's header does not end in \"`\\n\"", k);
    uint64_t size = 0;
    int digits = 0, j = 48;
    for (; j < 58 && h[j] >= '0' && h[j] <= '9' && digits < 10; j++, digits++) size = size * 10 + (uint64_t)(h[j] - '0');
    for (; j < 58 && h[j] == ' '; j++) {}
    if (!digits || j != 58)
      return uk__image_bad(what, "static library", at + 48, "member %d's size is not a decimal number", k);
    uint64_t start = at + AR_HEADER;
    if (size > bytes - start)
      return uk__image_bad(what, "static library", at + 48, "member %d claims %llu bytes; %llu are left", k,
                           (unsigned long long)size, (unsigned long long)(bytes - start));
    /* "/" and "/SYM64/" (symbol index) and "//" (long names) are the archive's own tables. */
    if (h[0] != '/' || (h[1] != ' ' && h[1] != '/' && memcmp(h, "/SYM64/", 7) != 0)) {
      char sub[512];
      snprintf(sub, sizeof sub, "%s: member %d", what ? what : "library", k);
      uk_status st = check_member(p + start, (size_t)size, start, sub);
      if (st != UK_OK) return st;
    }
    at = start + size;
    if (at < bytes && (at & 1)) at++; /* members start at even offsets */
  }
  return UK_OK;
}

uk_status uk__image_check(int kind, const void *data, size_t bytes, const char *what) {
  const unsigned char *p = data;
  switch (kind) {
  case UK__LINK_CUBIN: return uk__elf_check(data, bytes, 0, UK__ELF_CUDA, what);
  case UK__LINK_FATBIN: return uk__fatbin_check(data, bytes, 0, what);
  case UK__LINK_OBJECT: return uk__elf_check_object(data, bytes, 0, uk__fatbin_check, what);
  case UK__LINK_LIBRARY: return uk__archive_check(data, bytes, what);
  case UK__LINK_LTOIR: return uk__ltoir_check(data, bytes, 0, what);
  case UK__LINK_PTX:
    if (!p || bytes < 2 || p[bytes - 1] != '\0' || memchr(p, '\0', bytes - 1))
      return uk__image_bad(what, "PTX", 0, "not non-empty text ending in one NUL");
    return UK_OK;
  default: return uk__errorf(UK_ERR_INVALID, "%s: unknown input kind %d", what ? what : "image", kind);
  }
}
