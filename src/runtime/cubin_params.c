/* Kernels and their parameter layouts read from a cubin's ELF.
 *
 * The facts used (observed in ptxas/NVRTC output for sm_50..sm_120, as
 * cuobjdump -elf decodes them):
 * - a kernel is an STT_FUNC symbol, defined, with st_other bit 0x10 (an
 *   entry point; device functions of relocatable code lack it); a
 *   __device__ variable an STT_OBJECT symbol whose st_size is its bytes;
 * - .nv.info.<kernel> is a sequence of 4-byte-aligned attributes: a format
 *   byte and an attribute byte, then for format 4 (EIFMT_SVAL) a u16 length
 *   and that many bytes, for formats 1-3 (no value, byte, half) a u16
 *   value and nothing more;
 * - EIATTR_KPARAM_INFO (0x17), 12 bytes: u32 index, u16 ordinal, u16
 *   offset, u32 flags whose bits 18..31 are the size;
 *   EIATTR_KPARAM_INFO_V2 (0x45, used when parameters exceed 4 KiB): the
 *   same but the size is the low u16 of the last word;
 * - EIATTR_CBANK_PARAM_SIZE (0x19, a half) and EIATTR_PARAM_CBANK (0x0a,
 *   8 bytes: u32 symbol, u16 bank offset, u16 size) give the parameter
 *   block's size.
 * Offsets are relative to the start of the parameters, as the driver's
 * cuFuncGetParamInfo reports them. */
#include "runtime/cubin_params.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/strbuf.h"

#define EHDR_BYTES 64
#define SHDR_BYTES 64
#define SYM_BYTES 24
#define SHT_SYMTAB_ 2
#define SHT_NOBITS_ 8
#define STT_OBJECT_ 1
#define STT_FUNC_ 2
#define STO_CUDA_ENTRY 0x10

#define EIFMT_SVAL 4
#define EIATTR_PARAM_CBANK 0x0a
#define EIATTR_KPARAM_INFO 0x17
#define EIATTR_CBANK_PARAM_SIZE 0x19
#define EIATTR_KPARAM_INFO_V2 0x45
#define EIATTR_MAX_THREADS 0x05
#define EIATTR_FRAME_SIZE 0x11
#define EIATTR_REGCOUNT 0x2f
#define KPARAM_BYTES 12
/* CUDA's limit on a kernel's parameter bytes (since 12.1). */
#define MAX_PARAM_BYTES 32764u

/* Little-endian reads at any alignment; the caller has bounds-checked. */
static uint32_t rd16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const unsigned char *p) { return rd16(p) | rd16(p + 2) << 16; }
static uint64_t rd64(const unsigned char *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

typedef struct section {
  uint64_t off, size;
  uint32_t name, type, link;
} section;

typedef struct elf {
  const unsigned char *p;
  size_t n;
  uint64_t shoff;
  unsigned shnum;
  section names; /* the section-name string table */
} elf;

/* [off, off+size) lies inside the image (no overflow). */
static int inside(const elf *e, uint64_t off, uint64_t size) {
  return off <= e->n && size <= e->n - off;
}

static uk_status malformed(const char *what) {
  return uk__errorf(UK_ERR_INVALID, "malformed cubin: %s", what);
}

/* Section k's header; its contents must lie inside the image unless it has
 * none (SHT_NOBITS). */
static uk_status get_section(const elf *e, unsigned k, section *s) {
  const unsigned char *h = e->p + e->shoff + (uint64_t)k * SHDR_BYTES;
  s->name = rd32(h);
  s->type = rd32(h + 4);
  s->off = rd64(h + 24);
  s->size = rd64(h + 32);
  s->link = rd32(h + 40);
  if (s->type == SHT_NOBITS_) s->size = 0;
  if (!inside(e, s->off, s->size)) return malformed("a section lies outside the image");
  return UK_OK;
}

/* The NUL-terminated string at `at` in string table `t`; NULL when it runs
 * past the table. */
static const char *string_at(const elf *e, const section *t, uint64_t at) {
  if (at >= t->size) return NULL;
  const char *s = (const char *)e->p + t->off + at;
  return memchr(s, '\0', (size_t)(t->size - at)) ? s : NULL;
}

static uk_status elf_open(elf *e, const void *image, size_t bytes) {
  memset(e, 0, sizeof *e);
  e->p = image;
  e->n = bytes;
  if (!image || !uk__cubin_is_elf(image, bytes) || bytes < EHDR_BYTES)
    return malformed("not an ELF image");
  if (e->p[4] != 2 || e->p[5] != 1) return malformed("not a 64-bit little-endian ELF image");
  e->shoff = rd64(e->p + 40);
  uint32_t shentsize = rd16(e->p + 58), shstrndx = rd16(e->p + 62);
  e->shnum = rd16(e->p + 60);
  if (shentsize != SHDR_BYTES || e->shnum == 0 || !inside(e, e->shoff, (uint64_t)e->shnum * SHDR_BYTES))
    return malformed("the section header table lies outside the image");
  if (shstrndx >= e->shnum) return malformed("no section-name table");
  return get_section(e, shstrndx, &e->names);
}

/* The section named prefix + name; UK_ERR_NOT_FOUND (no message) when
 * absent. */
static uk_status find_section(const elf *e, const char *prefix, const char *name, section *out) {
  size_t plen = strlen(prefix);
  for (unsigned k = 0; k < e->shnum; k++) {
    section s;
    uk_status st = get_section(e, k, &s);
    if (st != UK_OK) return st;
    const char *n = string_at(e, &e->names, s.name);
    if (!n) return malformed("a section name lies outside the section-name table");
    if (strncmp(n, prefix, plen) == 0 && strcmp(n + plen, name) == 0) {
      *out = s;
      return UK_OK;
    }
  }
  return UK_ERR_NOT_FOUND;
}

/* A defined symbol: its name, index in the symbol table, section, type
 * (STT_*) and size. */
typedef struct ksym {
  const char *name;
  uint32_t index;
  unsigned shndx, type;
  uint64_t size;
} ksym;

/* Calls visit(symbol, arg) for every defined symbol (kernels only: every
 * kernel symbol) until it returns non-zero (then *stopped = 1). */
static uk_status each_symbol(const elf *e, int kernels, int (*visit)(const ksym *k, void *arg), void *arg,
                             int *stopped) {
  *stopped = 0;
  for (unsigned k = 0; k < e->shnum; k++) {
    section sym, str;
    uk_status st = get_section(e, k, &sym);
    if (st != UK_OK) return st;
    if (sym.type != SHT_SYMTAB_) continue;
    if (sym.link >= e->shnum) return malformed("the symbol table has no string table");
    if ((st = get_section(e, sym.link, &str)) != UK_OK) return st;
    for (uint64_t at = 0; at + SYM_BYTES <= sym.size; at += SYM_BYTES) {
      const unsigned char *s = e->p + sym.off + at;
      unsigned info = s[4], other = s[5], shndx = rd16(s + 6);
      if (shndx == 0 || (kernels && ((info & 0xf) != STT_FUNC_ || !(other & STO_CUDA_ENTRY)))) continue;
      const char *name = string_at(e, &str, rd32(s));
      if (!name) return malformed("a symbol name lies outside its string table");
      ksym ks = {name, (uint32_t)(at / SYM_BYTES), shndx, info & 0xf, rd64(s + 16)};
      if (visit(&ks, arg)) {
        *stopped = 1;
        return UK_OK;
      }
    }
  }
  return UK_OK;
}

static uk_status each_kernel(const elf *e, int (*visit)(const ksym *k, void *arg), void *arg, int *stopped) {
  return each_symbol(e, 1, visit, arg, stopped);
}

static int is_named(const ksym *k, void *arg) { return strcmp(k->name, (const char *)arg) == 0; }

/* A list being appended to sb after the caller's text (at `start`). */
typedef struct name_list {
  uk_strbuf *sb;
  size_t start;
} name_list;

static int list_name(const ksym *k, void *arg) {
  const char *name = k->name;
  name_list *l = arg;
  uk__sb_addf(l->sb, "%s%s", l->sb->len > l->start ? ", " : "", name);
  return 0;
}

int uk__cubin_is_elf(const void *image, size_t bytes) {
  const unsigned char *p = image;
  return p && bytes >= 4 && p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F';
}

uk_status uk__cubin_find_kernel(const void *image, size_t bytes, const char *symbol) {
  elf e;
  int found = 0;
  uk_status st = elf_open(&e, image, bytes);
  if (st == UK_OK) st = each_kernel(&e, is_named, (void *)symbol, &found);
  return st != UK_OK || found ? st : UK_ERR_NOT_FOUND;
}

void uk__cubin_list_kernels(const void *image, size_t bytes, uk_strbuf *sb) {
  elf e;
  int unused;
  name_list l = {sb, sb->len};
  if (elf_open(&e, image, bytes) != UK_OK || each_kernel(&e, list_name, &l, &unused) != UK_OK) {
    uk__error_clear();
    sb->len = l.start; /* a malformed image lists nothing */
    if (sb->buf) sb->buf[l.start] = '\0';
  }
  if (sb->len == l.start) uk__sb_add(sb, "none");
}

/* One KPARAM record (12 bytes at p) into params[ordinal]. */
static uk_status take_param(const unsigned char *p, int v2, uk_param_info *params, unsigned char *seen,
                            int max, size_t *end) {
  uint32_t ordinal = rd16(p + 4), offset = rd16(p + 6);
  uint32_t size = v2 ? rd16(p + 8) : rd32(p + 8) >> 18;
  if ((int)ordinal >= max || seen[ordinal]) return malformed("a parameter ordinal is repeated or out of range");
  if (size == 0 || offset + size > MAX_PARAM_BYTES)
    return malformed("a parameter's size or offset is out of range");
  seen[ordinal] = 1;
  params[ordinal].offset = offset;
  params[ordinal].size = size;
  if (offset + size > *end) *end = offset + size;
  return UK_OK;
}

uk_status uk__cubin_params(const void *image, size_t bytes, const char *symbol, int *count,
                           uk_param_info **params) {
  elf e;
  section info = {0};
  uk_status st = elf_open(&e, image, bytes);
  if (st != UK_OK) return st;
  st = find_section(&e, ".nv.info.", symbol, &info);
  if (st == UK_ERR_NOT_FOUND)
    return uk__errorf(UK_ERR_NOT_FOUND, "the cubin has no parameter information (.nv.info.%s) for kernel '%s'",
                      symbol, symbol);
  if (st != UK_OK) return st;

  /* Every record takes 16 bytes and every parameter at least one byte:
   * that bounds the count. */
  uint64_t records = info.size / 16;
  int max = (int)(records < MAX_PARAM_BYTES ? records : MAX_PARAM_BYTES);
  uk_param_info *out = max ? calloc((size_t)max, sizeof *out) : NULL;
  unsigned char *seen = max ? calloc((size_t)max, 1) : NULL;
  if (max && (!out || !seen)) {
    st = uk__errorf(UK_ERR_NOMEM, "out of memory reading a cubin");
    goto out;
  }
  int n = 0;
  size_t end = 0, declared = 0;
  const unsigned char *p = e.p + info.off;
  for (uint64_t at = 0; at < info.size;) {
    if (info.size - at < 4) {
      st = malformed("an attribute is cut short");
      goto out;
    }
    unsigned fmt = p[at], attr = p[at + 1];
    uint32_t len = fmt == EIFMT_SVAL ? rd16(p + at + 2) : 0;
    if (fmt < 1 || fmt > EIFMT_SVAL || len > info.size - at - 4) {
      st = malformed("an attribute has an unknown format or runs past its section");
      goto out;
    }
    const unsigned char *v = p + at + 4;
    if (fmt != EIFMT_SVAL && attr == EIATTR_CBANK_PARAM_SIZE) declared = rd16(p + at + 2);
    if (fmt == EIFMT_SVAL && attr == EIATTR_PARAM_CBANK && len == 8) declared = rd16(v + 6);
    if (fmt == EIFMT_SVAL && (attr == EIATTR_KPARAM_INFO || attr == EIATTR_KPARAM_INFO_V2)) {
      if (len != KPARAM_BYTES) {
        st = malformed("a parameter record is not 12 bytes");
        goto out;
      }
      if ((st = take_param(v, attr == EIATTR_KPARAM_INFO_V2, out, seen, max, &end)) != UK_OK)
        goto out;
      n++;
    }
    at += 4 + len;
  }
  for (int k = 0; k < n; k++)
    if (!seen[k]) {
      st = malformed("the parameter ordinals are not 0..count-1");
      goto out;
    }
  if (declared && end > declared) {
    st = malformed("a parameter ends past the declared parameter size");
    goto out;
  }
  *count = n;
  if (n == 0) {
    free(out);
    out = NULL;
  }
  *params = out;
  out = NULL;
out:
  free(out);
  free(seen);
  return st;
}

/* ---- attributes ------------------------------------------------------------ */

/* Kernel `symbol` (when ks.name matches, the visit copies it). */
typedef struct find_ksym {
  const char *name;
  ksym found;
} find_ksym;

static int take_ksym(const ksym *k, void *arg) {
  find_ksym *f = arg;
  if (strcmp(k->name, f->name) != 0) return 0;
  f->found = *k;
  return 1;
}

uk_status uk__cubin_object_size(const void *image, size_t bytes, const char *symbol, uint64_t *size) {
  elf e;
  find_ksym f = {symbol, {NULL, 0, 0, 0, 0}};
  int found = 0;
  uk_status st = elf_open(&e, image, bytes);
  if (st == UK_OK) st = each_symbol(&e, 0, take_ksym, &f, &found);
  if (st != UK_OK) return st;
  if (!found || f.found.type != STT_OBJECT_) return UK_ERR_NOT_FOUND;
  *size = f.found.size;
  return UK_OK;
}

/* The symbol-table index of kernel `symbol` and its section's index;
 * UK_ERR_NOT_FOUND when absent. */
static uk_status kernel_symbol(const elf *e, const char *symbol, uint32_t *index, unsigned *shndx) {
  find_ksym f = {symbol, {NULL, 0, 0, 0, 0}};
  int found = 0;
  uk_status st = each_kernel(e, take_ksym, &f, &found);
  if (st != UK_OK) return st;
  if (!found) return UK_ERR_NOT_FOUND;
  *index = f.found.index;
  *shndx = f.found.shndx;
  return UK_OK;
}

/* Calls visit(attr, value, len, arg) for each attribute of an .nv.info
 * section; stops when it returns non-zero. */
static uk_status each_info(const elf *e, const section *info,
                           int (*visit)(unsigned attr, const unsigned char *v, uint32_t len, void *arg), void *arg) {
  const unsigned char *p = e->p + info->off;
  for (uint64_t at = 0; at < info->size;) {
    if (info->size - at < 4) return malformed("an attribute is cut short");
    unsigned fmt = p[at], attr = p[at + 1];
    uint32_t len = fmt == EIFMT_SVAL ? rd16(p + at + 2) : 0;
    if (fmt < 1 || fmt > EIFMT_SVAL || len > info->size - at - 4)
      return malformed("an attribute has an unknown format or runs past its section");
    if (fmt == EIFMT_SVAL && visit(attr, p + at + 4, len, arg)) return UK_OK;
    at += 4 + len;
  }
  return UK_OK;
}

typedef struct per_symbol {
  unsigned attr;
  uint32_t index;
  int found;
  uint32_t value;
} per_symbol;

/* A (u32 symbol, u32 value) attribute of the global .nv.info for our symbol. */
static int take_per_symbol(unsigned attr, const unsigned char *v, uint32_t len, void *arg) {
  per_symbol *q = arg;
  if (attr != q->attr || len != 8 || rd32(v) != q->index) return 0;
  q->found = 1;
  q->value = rd32(v + 4);
  return 1;
}

static int take_max_threads(unsigned attr, const unsigned char *v, uint32_t len, void *arg) {
  if (attr != EIATTR_MAX_THREADS || len != 12) return 0;
  uint64_t n = (uint64_t)rd32(v) * rd32(v + 4) * rd32(v + 8);
  *(uint64_t *)arg = n;
  return 1;
}

/* Shared memory the system reserves per block on sm_80 and later. */
#define RESERVED_SMEM 1024u

/* A section's size as its header says, NOBITS included (static shared memory). */
static uk_status section_bytes(const elf *e, const char *prefix, const char *name, uint64_t *size) {
  for (unsigned k = 0; k < e->shnum; k++) {
    const unsigned char *h = e->p + e->shoff + (uint64_t)k * SHDR_BYTES;
    const char *n = string_at(e, &e->names, rd32(h));
    if (!n) return malformed("a section name lies outside the section-name table");
    size_t plen = strlen(prefix);
    if (strncmp(n, prefix, plen) == 0 && strcmp(n + plen, name) == 0) {
      *size = rd64(h + 32);
      return UK_OK;
    }
  }
  *size = 0;
  return UK_ERR_NOT_FOUND;
}

static uk_status regcount(const elf *e, uint32_t index, unsigned shndx, uint32_t *regs) {
  section info;
  per_symbol q = {EIATTR_REGCOUNT, index, 0, 0};
  uk_status st = find_section(e, "", ".nv.info", &info);
  if (st == UK_OK) st = each_info(e, &info, take_per_symbol, &q);
  if (st != UK_OK && st != UK_ERR_NOT_FOUND) return st;
  if (q.found) {
    *regs = q.value;
    return UK_OK;
  }
  if (shndx >= e->shnum) return malformed("a kernel symbol names no section");
  *regs = rd32(e->p + e->shoff + (uint64_t)shndx * SHDR_BYTES + 44) >> 24; /* sh_info of .text.<kernel> */
  return UK_OK;
}

/* One attribute of the kernel at symbol-table `index` (section `shndx`). */
static uk_status attribute_of(const elf *ep, const char *symbol, uint32_t index, unsigned shndx, uk_function_attr a,
                              int *value) {
  const elf e = *ep;
  uint32_t regs = 0;
  uint64_t size = 0;
  uk_status st;
  switch (a) {
  case UK_ATTR_NUM_REGS:
    if ((st = regcount(&e, index, shndx, &regs)) != UK_OK) return st;
    *value = (int)regs;
    return UK_OK;
  case UK_ATTR_BINARY_VERSION:
    *value = (int)((rd32(e.p + 48) >> 8) & 0xff);
    return UK_OK;
  case UK_ATTR_SHARED_SIZE_BYTES:
  case UK_ATTR_CONST_SIZE_BYTES:
    st = a == UK_ATTR_SHARED_SIZE_BYTES ? section_bytes(&e, ".nv.shared.", symbol, &size)
                                        : section_bytes(&e, "", ".nv.constant3", &size);
    if (st != UK_OK && st != UK_ERR_NOT_FOUND) return st;
    if (a == UK_ATTR_SHARED_SIZE_BYTES && size >= RESERVED_SMEM) {
      /* sm_80+ cubins with a reserved-shared-memory section count the 1 KiB
       * the system reserves per block inside each kernel's shared section;
       * the driver's attribute leaves it out (seen on an H200, CUDA 13). */
      uint64_t reserved = 0;
      uk_status rs = section_bytes(&e, ".nv.shared.", "reserved.0", &reserved);
      if (rs != UK_OK && rs != UK_ERR_NOT_FOUND) return rs;
      if (rs == UK_OK) size -= RESERVED_SMEM;
    }
    *value = size > 0x7fffffff ? 0x7fffffff : (int)size;
    return UK_OK;
  case UK_ATTR_LOCAL_SIZE_BYTES: {
    section info;
    per_symbol q = {EIATTR_FRAME_SIZE, index, 0, 0};
    st = find_section(&e, "", ".nv.info", &info);
    if (st == UK_OK) st = each_info(&e, &info, take_per_symbol, &q);
    if (st != UK_OK && st != UK_ERR_NOT_FOUND) return st;
    *value = (int)q.value;
    return UK_OK;
  }
  case UK_ATTR_MAX_THREADS_PER_BLOCK: {
    uint64_t limit = 1024;
    section info;
    st = find_section(&e, ".nv.info.", symbol, &info);
    if (st == UK_OK) st = each_info(&e, &info, take_max_threads, &limit);
    if (st != UK_OK && st != UK_ERR_NOT_FOUND) return st;
    if ((st = regcount(&e, index, shndx, &regs)) != UK_OK) return st;
    if (regs > 0) { /* 64K registers per block, given out 256 per warp */
      uint64_t per_warp = ((uint64_t)regs * 32 + 255) / 256 * 256;
      uint64_t threads = 65536 / per_warp * 32;
      if (threads < limit) limit = threads;
    }
    *value = (int)(limit > 1024 ? 1024 : limit);
    return UK_OK;
  }
  default:
    return UK_ERR_NOT_FOUND;
  }
}

uk_status uk__cubin_attributes(const void *image, size_t bytes, const char *symbol, const uk_function_attr *a, int n,
                               int *values) {
  elf e;
  uint32_t index = 0;
  unsigned shndx = 0;
  uk_status st = elf_open(&e, image, bytes);
  if (st == UK_OK) st = kernel_symbol(&e, symbol, &index, &shndx);
  for (int j = 0; j < n && st == UK_OK; j++) st = attribute_of(&e, symbol, index, shndx, a[j], &values[j]);
  return st;
}

uk_status uk__cubin_attribute(const void *image, size_t bytes, const char *symbol, uk_function_attr a, int *value) {
  return uk__cubin_attributes(image, bytes, symbol, &a, 1, value);
}
