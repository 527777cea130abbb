/* What the nvrtc link tests read from a cubin's ELF: its type (ET_EXEC
 * once linked), the kernels it defines and the symbols left undefined
 * (besides the driver's syscalls and reserved shared memory). */
#ifndef UK_TESTS_CUBIN_FACTS_H
#define UK_TESTS_CUBIN_FACTS_H

#include <elf.h>
#include <stdio.h>
#include <string.h>

typedef struct elf_facts {
  int ok, type, undefined, syscalls, has_parent, has_child, has_use_twice, has_combo, has_combo_lib,
      has_combo_lto;
} elf_facts;

/* Reads the symbol table of a cubin (64-bit little-endian ELF). */
static inline elf_facts inspect(const void *image, size_t bytes) {
  elf_facts f;
  memset(&f, 0, sizeof f);
  const unsigned char *p = image;
  if (bytes < sizeof(Elf64_Ehdr) || memcmp(p, ELFMAG, SELFMAG) != 0 || p[EI_CLASS] != ELFCLASS64) return f;
  const Elf64_Ehdr *eh = image;
  f.type = eh->e_type;
  if (eh->e_shoff == 0 || eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > bytes) return f;
  const Elf64_Shdr *sh = (const Elf64_Shdr *)(p + eh->e_shoff);
  for (int k = 0; k < eh->e_shnum; k++) {
    if (sh[k].sh_type != SHT_SYMTAB || sh[k].sh_link >= eh->e_shnum) continue;
    const Elf64_Shdr *strs = &sh[sh[k].sh_link];
    if (sh[k].sh_offset + sh[k].sh_size > bytes || strs->sh_offset + strs->sh_size > bytes) return f;
    const Elf64_Sym *sym = (const Elf64_Sym *)(p + sh[k].sh_offset);
    size_t n = sh[k].sh_size / sizeof *sym;
    for (size_t j = 1; j < n; j++) {
      if (sym[j].st_name >= strs->sh_size) return f;
      const char *name = (const char *)p + strs->sh_offset + sym[j].st_name;
      /* The driver resolves its syscalls and reserved shared memory at load. */
      int driver = !strncmp(name, "__cuda_syscall", 14) || !strncmp(name, ".nv.reservedSmem", 16);
      f.syscalls += !strncmp(name, "__cuda_syscall_cnpv2LaunchDevice", 32);
      if (sym[j].st_shndx == SHN_UNDEF && name[0] && !driver) {
        f.undefined++;
        fprintf(stderr, "undefined symbol: %s\n", name);
      }
      if (ELF64_ST_TYPE(sym[j].st_info) == STT_FUNC && sym[j].st_shndx != SHN_UNDEF) {
        f.has_parent |= !strcmp(name, "parent");
        f.has_child |= !strcmp(name, "child");
        f.has_use_twice |= !strcmp(name, "use_twice");
        f.has_combo |= !strcmp(name, "combo");
        f.has_combo_lib |= !strcmp(name, "combo_lib");
        f.has_combo_lto |= !strcmp(name, "combo_lto");
      }
    }
    f.ok = 1;
  }
  return f;
}

#endif
