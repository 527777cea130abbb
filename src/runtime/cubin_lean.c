/* Hiding unused globals from the module loader (cubin_lean.h).
 *
 * Two passes: the first checks the whole image and finds what to change,
 * the second changes it, so an image we do not fully understand is never
 * half edited. Reads go through memcpy: nothing in a cubin is assumed to be
 * aligned for the host. */
#include "runtime/cubin_lean.h"

#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef EM_CUDA
#define EM_CUDA 190
#endif

static const char reloc_section[] = ".rela.nv.constant4";

/* A NUL-terminated string at `off` of the string table [base, base+size). */
static const char *string_at(const unsigned char *img, const Elf64_Shdr *tab, uint64_t off) {
  if (off >= tab->sh_size) return NULL;
  const char *s = (const char *)img + tab->sh_offset + off;
  return memchr(s, '\0', (size_t)(tab->sh_size - off)) ? s : NULL;
}

static int in_image(const Elf64_Shdr *sh, size_t size) {
  return sh->sh_type == SHT_NOBITS || (sh->sh_offset <= size && sh->sh_size <= size - sh->sh_offset);
}

int uk__cubin_hide_globals(void *image, size_t size, const uk__name_set *unused) {
  unsigned char *img = image;
  Elf64_Ehdr eh;
  if (!unused || unused->count == 0 || !img || size < sizeof eh) return 0;
  memcpy(&eh, img, sizeof eh);
  if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != EM_CUDA || eh.e_shentsize != sizeof(Elf64_Shdr) ||
      eh.e_shnum == 0 || eh.e_shstrndx >= eh.e_shnum || eh.e_shoff > size ||
      (size - eh.e_shoff) / sizeof(Elf64_Shdr) < eh.e_shnum)
    return 0;

  int hidden = 0;
  size_t nsec = eh.e_shnum;
  Elf64_Shdr *sh = malloc(nsec * sizeof *sh);
  unsigned char *mark = NULL;
  if (!sh) return 0;
  memcpy(sh, img + eh.e_shoff, nsec * sizeof *sh);
  for (size_t k = 0; k < nsec; k++)
    if (!in_image(&sh[k], size)) goto out;
  const Elf64_Shdr *names = &sh[eh.e_shstrndx];

  /* The symbol table and its strings. */
  size_t symtab = nsec;
  for (size_t k = 0; k < nsec; k++)
    if (sh[k].sh_type == SHT_SYMTAB) {
      if (symtab != nsec) goto out; /* more than one: not what we know */
      symtab = k;
    }
  if (symtab == nsec || sh[symtab].sh_entsize != sizeof(Elf64_Sym) || sh[symtab].sh_link >= nsec) goto out;
  const Elf64_Shdr *strtab = &sh[sh[symtab].sh_link];
  size_t nsym = (size_t)(sh[symtab].sh_size / sizeof(Elf64_Sym));
  if (!(mark = calloc(nsym ? nsym : 1, 1))) goto out;

  /* Pass 1a: the local variables of .nv.global* named in `unused`. */
  int marked = 0;
  for (size_t i = 0; i < nsym; i++) {
    Elf64_Sym sym;
    memcpy(&sym, img + sh[symtab].sh_offset + i * sizeof sym, sizeof sym);
    if (ELF64_ST_TYPE(sym.st_info) != STT_OBJECT || ELF64_ST_BIND(sym.st_info) != STB_LOCAL ||
        sym.st_shndx == SHN_UNDEF || sym.st_shndx >= nsec)
      continue;
    const char *sec = string_at(img, names, sh[sym.st_shndx].sh_name);
    const char *name = string_at(img, strtab, sym.st_name);
    if (!sec || !name || strncmp(sec, ".nv.global", 10) != 0 || !uk__name_set_has(unused, name)) continue;
    mark[i] = 1;
    marked++;
  }
  if (!marked) goto out;

  /* Pass 1b: their relocations must all be constant-bank slots. */
  size_t relsec = nsec;
  for (size_t k = 0; k < nsec; k++) {
    if ((sh[k].sh_type != SHT_RELA && sh[k].sh_type != SHT_REL) || sh[k].sh_link != symtab) continue;
    size_t ent = sh[k].sh_type == SHT_RELA ? sizeof(Elf64_Rela) : sizeof(Elf64_Rel);
    if (sh[k].sh_entsize != ent) goto out;
    const char *sec = string_at(img, names, sh[k].sh_name);
    int is_bank = sec && sh[k].sh_type == SHT_RELA && strcmp(sec, reloc_section) == 0;
    for (size_t j = 0; j < sh[k].sh_size / ent; j++) {
      Elf64_Rel r; /* r_offset and r_info lead both layouts */
      memcpy(&r, img + sh[k].sh_offset + j * ent, sizeof r);
      size_t s = (size_t)ELF64_R_SYM(r.r_info);
      if (s >= nsym) goto out;
      if (mark[s] && !is_bank) goto out;
    }
    if (is_bank) {
      if (relsec != nsec) goto out;
      relsec = k;
    }
  }

  /* Pass 2: drop their relocations, untype their symbols. */
  if (relsec != nsec) {
    unsigned char *base = img + sh[relsec].sh_offset;
    size_t n = (size_t)(sh[relsec].sh_size / sizeof(Elf64_Rela)), kept = 0;
    for (size_t j = 0; j < n; j++) {
      Elf64_Rela r;
      memcpy(&r, base + j * sizeof r, sizeof r);
      if (mark[ELF64_R_SYM(r.r_info)]) continue;
      memmove(base + kept * sizeof r, &r, sizeof r);
      kept++;
    }
    memset(base + kept * sizeof(Elf64_Rela), 0, (n - kept) * sizeof(Elf64_Rela));
    Elf64_Xword new_size = kept * sizeof(Elf64_Rela);
    memcpy(img + eh.e_shoff + relsec * sizeof(Elf64_Shdr) + offsetof(Elf64_Shdr, sh_size), &new_size,
           sizeof new_size);
  }
  for (size_t i = 0; i < nsym; i++) {
    if (!mark[i]) continue;
    unsigned char info = ELF64_ST_INFO(STB_LOCAL, STT_NOTYPE);
    memcpy(img + sh[symtab].sh_offset + i * sizeof(Elf64_Sym) + offsetof(Elf64_Sym, st_info), &info, 1);
    hidden++;
  }
out:
  free(mark);
  free(sh);
  return hidden;
}
