/* ELF structure checks (image_check.h). Field offsets are those of
 * Elf64_Ehdr, Elf64_Phdr, Elf64_Shdr, Elf64_Sym and Elf64_Rel(a); read
 * byte by byte, so the image need not be aligned. */
#include <string.h>

#include "runtime/image_check.h"

#define EHDR 64u
#define PHDR 56u
#define SHDR 64u
#define SYM 24u
#define EM_CUDA_ 190u
#define SHT_SYMTAB_ 2u
#define SHT_STRTAB_ 3u
#define SHT_RELA_ 4u
#define SHT_NOBITS_ 8u
#define SHT_REL_ 9u
#define SHT_DYNSYM_ 11u
#define SHT_LOPROC_ 0x70000000u
#define SHT_CUDA_INFO_ 0x70000000u /* .nv.info, .nv.info.<kernel> */
#define SHF_INFO_LINK_ 0x40u
#define SHN_LORESERVE_ 0xff00u

static uint32_t rd16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const unsigned char *p) { return rd16(p) | rd16(p + 2) << 16; }
static uint64_t rd64(const unsigned char *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

typedef struct img {
  const unsigned char *p;
  size_t n;
  uint64_t base;
  const char *what, *kind;
  uint64_t shoff;
  unsigned shnum;
} img;

/* [off, off + size) lies inside the image (no overflow). */
static int inside(const img *e, uint64_t off, uint64_t size) { return off <= e->n && size <= e->n - off; }

#define BAD(at, ...) uk__image_bad(e->what, e->kind, e->base + (at), __VA_ARGS__)

typedef struct shdr {
  uint64_t at; /* where the header is */
  uint32_t name, type, link, info;
  uint64_t flags, off, size, entsize;
} shdr;

static shdr section(const img *e, unsigned k) {
  const unsigned char *h = e->p + e->shoff + (uint64_t)k * SHDR;
  shdr s;
  s.at = e->shoff + (uint64_t)k * SHDR;
  s.name = rd32(h);
  s.type = rd32(h + 4);
  s.flags = rd64(h + 8);
  s.off = rd64(h + 24);
  s.size = s.type == SHT_NOBITS_ ? 0 : rd64(h + 32);
  s.link = rd32(h + 40);
  s.info = rd32(h + 44);
  s.entsize = rd64(h + 56);
  return s;
}

/* A string table: in bounds (checked before), non-empty, NUL-terminated. */
static uk_status check_strtab(const img *e, unsigned k, const char *role) {
  shdr s = section(e, k);
  if (s.type != SHT_STRTAB_) return BAD(s.at, "section %u, the %s, is not a string table (type %u)", k, role, s.type);
  if (s.size == 0 || e->p[s.off + s.size - 1] != '\0')
    return BAD(s.off, "section %u, the %s, is empty or not NUL-terminated", k, role);
  return UK_OK;
}

static uk_status check_header(img *e, int flags) {
  const unsigned char *p = e->p;
  if (e->n < EHDR || memcmp(p, "\x7f" "ELF", 4) != 0)
    return BAD(0, "%s", e->n < EHDR ? "shorter than an ELF header (64 bytes)" : "no ELF magic");
  if (p[4] != 2 || p[5] != 1) return BAD(4, "not a 64-bit little-endian ELF image");
  if (p[6] != 1 || rd32(p + 20) != 1) return BAD(6, "unknown ELF version");
  if ((flags & UK__ELF_CUDA) && rd16(p + 18) != EM_CUDA_)
    return BAD(18, "e_machine is %u, not EM_CUDA (190): not a cubin", rd16(p + 18));
  if ((flags & UK__ELF_CUDA) && rd16(p + 16) != 1 && rd16(p + 16) != 2)
    return BAD(16, "e_type is %u: a cubin is relocatable (1) or executable (2)", rd16(p + 16));
  if (rd16(p + 52) != EHDR) return BAD(52, "e_ehsize is %u, not 64", rd16(p + 52));
  uint64_t phoff = rd64(p + 32);
  unsigned phentsize = rd16(p + 54), phnum = rd16(p + 56);
  if (phnum) {
    if (phentsize != PHDR) return BAD(54, "e_phentsize is %u, not 56", phentsize);
    if (!inside(e, phoff, (uint64_t)phnum * PHDR))
      return BAD(32, "the program header table (%u entries at %llu) runs past the end (%zu bytes)", phnum,
                 (unsigned long long)phoff, e->n);
    for (unsigned k = 0; k < phnum; k++) {
      const unsigned char *h = p + phoff + (uint64_t)k * PHDR;
      uint64_t off = rd64(h + 8), filesz = rd64(h + 32);
      if (!inside(e, off, filesz))
        return BAD(phoff + (uint64_t)k * PHDR + 8, "program header %u (offset %llu, %llu bytes) runs past the end",
                   k, (unsigned long long)off, (unsigned long long)filesz);
    }
  }
  e->shoff = rd64(p + 40);
  unsigned shentsize = rd16(p + 58), shstrndx = rd16(p + 62);
  e->shnum = rd16(p + 60);
  if (e->shnum == 0)
    return e->shoff ? BAD(60, "extended section numbering (e_shnum 0) is not supported")
           : (flags & UK__ELF_CUDA) ? BAD(60, "no sections")
                                    : UK_OK;
  if (shentsize != SHDR) return BAD(58, "e_shentsize is %u, not 64", shentsize);
  if (!inside(e, e->shoff, (uint64_t)e->shnum * SHDR))
    return BAD(40, "the section header table (%u entries at %llu) runs past the end (%zu bytes)", e->shnum,
               (unsigned long long)e->shoff, e->n);
  if (shstrndx == 0 || shstrndx >= e->shnum)
    return BAD(62, "e_shstrndx %u is not a section (of %u)", shstrndx, e->shnum);
  return UK_OK;
}

/* A symbol table's entries: names inside its string table, section indices
 * real or reserved. */
static uk_status check_symbols(const img *e, unsigned k, const shdr *s) {
  if (s->entsize != SYM || s->size % SYM) return BAD(s->at + 56, "symbol table %u: entry size or table size is not a multiple of 24", k);
  uk_status st = check_strtab(e, s->link, "symbol names");
  if (st != UK_OK) return st;
  shdr str = section(e, s->link);
  for (uint64_t at = 0; at < s->size; at += SYM) {
    const unsigned char *y = e->p + s->off + at;
    uint32_t shndx = rd16(y + 6);
    if (rd32(y) >= str.size)
      return BAD(s->off + at, "symbol %llu's name lies outside its string table", (unsigned long long)(at / SYM));
    if (shndx >= e->shnum && shndx < SHN_LORESERVE_)
      return BAD(s->off + at + 6, "symbol %llu's section %u does not exist", (unsigned long long)(at / SYM), shndx);
  }
  return UK_OK;
}

/* Relocations: each names a symbol of the linked symbol table. */
static uk_status check_relocs(const img *e, unsigned k, const shdr *s) {
  uint64_t ent = s->type == SHT_RELA_ ? 24 : 16;
  if (s->entsize != ent || s->size % ent)
    return BAD(s->at + 56, "relocation section %u: entry size or table size is not a multiple of %llu", k,
               (unsigned long long)ent);
  shdr sym = section(e, s->link);
  if (s->link == 0 || (sym.type != SHT_SYMTAB_ && sym.type != SHT_DYNSYM_))
    return BAD(s->at + 40, "relocation section %u does not link a symbol table", k);
  if ((s->flags & SHF_INFO_LINK_) && s->info >= e->shnum)
    return BAD(s->at + 44, "relocation section %u applies to section %u, which does not exist", k, s->info);
  uint64_t nsym = sym.size / SYM;
  for (uint64_t at = 0; at < s->size; at += ent) {
    uint64_t index = rd64(e->p + s->off + at + 8) >> 32;
    if (index >= nsym)
      return BAD(s->off + at + 8, "relocation %llu of section %u names symbol %llu (the table has %llu)",
                 (unsigned long long)(at / ent), k, (unsigned long long)index, (unsigned long long)nsym);
  }
  return UK_OK;
}

/* Symbol index `v` at byte `at` of the image: a symbol of table `symtab`,
 * or one of the negative markers CUDA's tables use (>= 0xfffffff0). */
static uk_status check_sym(const img *e, unsigned symtab, uint64_t at, const char *in) {
  shdr t = section(e, symtab);
  uint32_t v = rd32(e->p + at);
  if (t.type != SHT_SYMTAB_ || (v >= t.size / SYM && v < 0xfffffff0u))
    return BAD(at, "%s names symbol %u, which does not exist", in, v);
  return UK_OK;
}

/* An .nv.info section: a sequence of attributes, each a format byte
 * (1 none, 2 byte, 3 half, 4 sized), an attribute byte and a u16 that is
 * the value or, for format 4, the length of the value that follows
 * (cubin_params.c reads them). nvJitLink walks them and follows the
 * symbol indices and parameter offsets in them unchecked: those of the
 * attributes below are checked too. */
static uk_status check_info(const img *e, unsigned k, const shdr *s) {
  const unsigned char *p = e->p + s->off;
  uint32_t declared = 0, end = 0;
  for (uint64_t at = 0; at < s->size;) {
    unsigned fmt = p[at], attr = p[at + (s->size - at >= 2)];
    uint32_t len = fmt == 4 && s->size - at >= 4 ? rd16(p + at + 2) : 0;
    if (s->size - at < 4 || fmt < 1 || fmt > 4 || len > s->size - at - 4)
      return BAD(s->off + at, "attribute at %llu of section %u has format %u or runs past the section", (unsigned long long)at,
                 k, fmt);
    const unsigned char *v = p + at + 4;
    uint64_t vat = s->off + at + 4;
    uk_status st = UK_OK;
    if (fmt == 3 && attr == 0x19) declared = rd16(p + at + 2); /* EIATTR_CBANK_PARAM_SIZE */
    if (fmt == 4 && len == 8 && attr == 0x0a) {                 /* EIATTR_PARAM_CBANK: symbol, offset, size */
      st = check_sym(e, s->link, vat, "an EIATTR_PARAM_CBANK");
      declared = rd16(v + 6);
    }
    /* EIATTR_FRAME_SIZE, _MIN_STACK_SIZE, _MAX_STACK_SIZE, _REGCOUNT: symbol, value */
    if (fmt == 4 && len == 8 && (attr == 0x11 || attr == 0x12 || attr == 0x23 || attr == 0x2f))
      st = check_sym(e, s->link, vat, "an attribute");
    if (fmt == 4 && len == 12 && (attr == 0x17 || attr == 0x45)) { /* EIATTR_KPARAM_INFO(_V2) */
      uint32_t size = attr == 0x45 ? rd16(v + 8) : rd32(v + 8) >> 18, e1 = rd16(v + 6) + size;
      if (e1 > end) end = e1;
    }
    if (st != UK_OK) return st;
    at += 4 + len;
  }
  if (declared && end > declared)
    return BAD(s->off, "section %u: a parameter ends at byte %u, past the %u bytes of parameters declared", k, end,
               declared);
  return UK_OK;
}

/* .nv.callgraph (caller, callee) and .nv.prototype (function, prototype)
 * pairs: the first words are symbol indices (callgraph: both). */
static uk_status check_pairs(const img *e, unsigned k, const shdr *s, int both) {
  if (s->size % 8) return BAD(s->at + 32, "section %u's size is not a multiple of 8", k);
  for (uint64_t at = 0; at < s->size; at += 8) {
    uk_status st = check_sym(e, s->link, s->off + at, both ? "the call graph" : "a prototype");
    if (st == UK_OK && both) st = check_sym(e, s->link, s->off + at + 4, "the call graph");
    if (st != UK_OK) return st;
  }
  return UK_OK;
}

/* Where nvcc puts device code in a host object (-dc: relocatable). */
static int is_fatbin_section(const char *name) { return !strcmp(name, ".nv_fatbin") || !strcmp(name, "__nv_relfatbin"); }

static uk_status check_elf(const void *data, size_t bytes, uint64_t base, int flags, uk__nested_check fatbins,
                           const char *what) {
  img e = {data, bytes, base, what, (flags & UK__ELF_CUDA) ? "cubin" : "ELF object", 0, 0};
  if (!data) return uk__image_bad(what, e.kind, base, "no data");
  uk_status st = check_header(&e, flags);
  if (st != UK_OK || e.shnum == 0) return st;
  /* Every section's contents and links first: the checks below follow them. */
  for (unsigned k = 0; k < e.shnum; k++) {
    shdr s = section(&e, k);
    if (!inside(&e, s.off, s.size))
      return uk__image_bad(what, e.kind, base + s.at + 24,
                           "section %u's contents (offset %llu, %llu bytes) run past the end (%zu bytes)", k,
                           (unsigned long long)s.off, (unsigned long long)s.size, bytes);
    if (s.link >= e.shnum)
      return uk__image_bad(what, e.kind, base + s.at + 40, "section %u links section %u, which does not exist", k,
                           s.link);
    /* nvJitLink follows sh_info of these as a section index, unchecked. */
    if (((s.flags & SHF_INFO_LINK_) || ((flags & UK__ELF_CUDA) && s.type == SHT_CUDA_INFO_)) && s.info >= e.shnum)
      return uk__image_bad(what, e.kind, base + s.at + 44, "section %u's sh_info %u is not a section", k, s.info);
    /* Cubins hold the standard types and CUDA's own (SHT_LOPROC and above). */
    if ((flags & UK__ELF_CUDA) && s.type > 18 && s.type < SHT_LOPROC_)
      return uk__image_bad(what, e.kind, base + s.at + 4, "section %u has unknown type %#x", k, s.type);
  }
  unsigned shstrndx = rd16(e.p + 62);
  if ((st = check_strtab(&e, shstrndx, "section-name table")) != UK_OK) return st;
  shdr names = section(&e, shstrndx);
  for (unsigned k = 0; k < e.shnum && st == UK_OK; k++) {
    shdr s = section(&e, k);
    if (s.name >= names.size)
      return uk__image_bad(what, e.kind, base + s.at, "section %u's name lies outside the section-name table", k);
    if (s.type == SHT_SYMTAB_ || s.type == SHT_DYNSYM_) st = check_symbols(&e, k, &s);
    else if (s.type == SHT_REL_ || s.type == SHT_RELA_) st = check_relocs(&e, k, &s);
    else if ((flags & UK__ELF_CUDA) && s.type == SHT_CUDA_INFO_) st = check_info(&e, k, &s);
    else if ((flags & UK__ELF_CUDA) && (s.type == SHT_LOPROC_ + 1 || s.type == SHT_LOPROC_ + 2))
      st = check_pairs(&e, k, &s, s.type == SHT_LOPROC_ + 1); /* .nv.callgraph, .nv.prototype */
    else if (fatbins && s.size && is_fatbin_section((const char *)e.p + names.off + s.name))
      st = fatbins(e.p + s.off, (size_t)s.size, base + s.off, what);
  }
  return st;
}

uk_status uk__elf_check(const void *data, size_t bytes, uint64_t base, int flags, const char *what) {
  return check_elf(data, bytes, base, flags & ~UK__ELF_FATBINS, NULL, what);
}

uk_status uk__elf_check_object(const void *data, size_t bytes, uint64_t base, uk__nested_check fatbins,
                               const char *what) {
  return check_elf(data, bytes, base, UK__ELF_FATBINS, fatbins, what);
}
