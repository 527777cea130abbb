/* Lean cubins for generated reductions. NVRTC's cubin of a real reduction
 * program, with and without lean_keep: the lean one keeps every byte of
 * code and data, loses CUB's unused variables as loader objects (counted by
 * an ELF reader of this test's own), and malformed images are never
 * touched. With a GPU both cubins load, only the lean one lacks the CCCL
 * constant, and a reduction call through the lean path sums right. */
#include <elf.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/compile.h"
#include "runtime/cubin_lean.h"
#include "runtime/cudadrv.h"
#include "runtime/device.h"
#include "testutil.h"

/* A libcu++ constant every CUB program instantiates. */
static const char cccl_constant[] = "_ZN4cuda3std3__417integral_constantIbLb1EE5valueE";

static char *reduction_source(int arch) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = arch;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&o, &ctx));
  uk_reduction_spec spec = {"T x", "T y", "x", "a + b", "y = a", "0", "lean_sum", NULL, NULL, NULL, 0};
  uk_reduction *k = NULL;
  CHECK_OK(uk_reduction_create(ctx, &spec, &k));
  int64_t shape[1] = {1001};
  uk_array x, y;
  CHECK_OK(uk_array_init(&x, 0x10000, UK_FLOAT32, 1, shape));
  CHECK_OK(uk_array_init(&y, 0x20000, UK_FLOAT32, 0, NULL));
  uk_arg in = uk_arg_array(&x);
  char *src = NULL;
  if (k) CHECK_OK(uk_reduction_source(k, &in, 1, &y, 1, NULL, &src));
  uk_reduction_destroy(k);
  uk_context_destroy(ctx);
  return src;
}

static uk__binary *compile(const char *src, int arch, const char *lean_keep) {
  uk__compile_req req;
  memset(&req, 0, sizeof req);
  req.source = src;
  req.name = "lean_sum";
  req.arch = arch;
  req.lean_keep = lean_keep;
  uk__binary *b = NULL;
  CHECK_OK(uk__nvrtc_compile(&req, &b));
  return b;
}

/* What the loader sees, read independently of cubin_lean.c: object symbols
 * in .nv.global* sections, entries of .rela.nv.constant4, and the byte
 * ranges of the symbol table and that relocation section. */
typedef struct elf_view {
  int objects, relocs;
  size_t sym_off, sym_size, rel_off, rel_size;
  size_t rel_size_field; /* where the relocation section's sh_size is */
} elf_view;

static int view(const unsigned char *img, size_t size, elf_view *v) {
  memset(v, 0, sizeof *v);
  Elf64_Ehdr eh;
  if (size < sizeof eh) return 0;
  memcpy(&eh, img, sizeof eh);
  if (eh.e_shoff + (size_t)eh.e_shnum * sizeof(Elf64_Shdr) > size || eh.e_shstrndx >= eh.e_shnum) return 0;
  Elf64_Shdr sh[128];
  if (eh.e_shnum > 128) return 0;
  memcpy(sh, img + eh.e_shoff, eh.e_shnum * sizeof sh[0]);
  const char *shstr = (const char *)img + sh[eh.e_shstrndx].sh_offset;
  for (int k = 0; k < eh.e_shnum; k++) {
    if (sh[k].sh_type == SHT_SYMTAB) {
      v->sym_off = sh[k].sh_offset;
      v->sym_size = sh[k].sh_size;
      const char *str = (const char *)img + sh[sh[k].sh_link].sh_offset;
      for (size_t i = 0; i < sh[k].sh_size / sizeof(Elf64_Sym); i++) {
        Elf64_Sym s;
        memcpy(&s, img + sh[k].sh_offset + i * sizeof s, sizeof s);
        if (ELF64_ST_TYPE(s.st_info) == STT_OBJECT && s.st_shndx < eh.e_shnum &&
            strncmp(shstr + sh[s.st_shndx].sh_name, ".nv.global", 10) == 0) {
          v->objects++;
          if (strcmp(str + s.st_name, cccl_constant) == 0) v->objects += 1000000; /* flag it */
        }
      }
    }
    if (sh[k].sh_type == SHT_RELA && strcmp(shstr + sh[k].sh_name, ".rela.nv.constant4") == 0) {
      v->rel_off = sh[k].sh_offset;
      v->rel_size_field = eh.e_shoff + (size_t)k * sizeof(Elf64_Shdr) + offsetof(Elf64_Shdr, sh_size);
      v->rel_size = sh[k].sh_size;
      v->relocs = (int)(sh[k].sh_size / sizeof(Elf64_Rela));
    }
  }
  return 1;
}

static int outside(size_t at, size_t off, size_t len) { return at < off || at >= off + len; }

static void check_cubins(const uk__binary *fat, const uk__binary *lean) {
  elf_view f, l;
  CHECK(view(fat->image, fat->image_size, &f) && view(lean->image, lean->image_size, &l));
  printf("loader objects: NVRTC %d, lean %d; constant-bank relocations: %d, %d\n", f.objects % 1000000,
         l.objects % 1000000, f.relocs, l.relocs);
  CHECK(f.objects > 1000000 + 100 && f.relocs > 100); /* CUB's constants, the CCCL one among them */
  CHECK(l.objects == 1 && l.relocs == 1);              /* _uk_partial_size alone */
  /* same size; bytes differ only in the symbol table and the relocations */
  CHECK(fat->image_size == lean->image_size);
  const unsigned char *a = fat->image, *b = lean->image;
  size_t diff_outside = 0;
  for (size_t i = 0; i < fat->image_size && i < lean->image_size; i++)
    if (a[i] != b[i] && outside(i, l.sym_off, l.sym_size) && outside(i, l.rel_off, f.rel_size) &&
        outside(i, l.rel_size_field, sizeof(Elf64_Xword)))
      diff_outside++;
  CHECK(diff_outside == 0);
  /* the relocation section header shrank; everything else in it is f's */
  CHECK(l.rel_size == sizeof(Elf64_Rela) && f.rel_size == (size_t)f.relocs * sizeof(Elf64_Rela));
}

/* Malformed or foreign images come back untouched. */
static void check_untouched(const uk__binary *fat) {
  uk__name_set *set = NULL;
  static const char ptx[] = ".global .align 1 .u8 _ZN4cuda3std3__417integral_constantIbLb1EE5valueE = 1;\n";
  CHECK_OK(uk__ptx_unused_globals(ptx, sizeof ptx - 1, NULL, &set));
  CHECK(set && set->count == 1);
  unsigned char *copy = malloc(fat->image_size), *orig = malloc(fat->image_size);
  if (!copy || !orig || !set) goto out;
  memcpy(orig, fat->image, fat->image_size);
  /* the real thing hides exactly that one */
  memcpy(copy, orig, fat->image_size);
  CHECK(uk__cubin_hide_globals(copy, fat->image_size, set) == 1);
  /* truncated anywhere before the end of the section headers: nothing done */
  Elf64_Ehdr eh;
  memcpy(&eh, orig, sizeof eh);
  size_t headers_end = eh.e_shoff + (size_t)eh.e_shnum * sizeof(Elf64_Shdr);
  CHECK(headers_end <= fat->image_size);
  size_t cuts[] = {0, 3, 63, 64, 1000, headers_end / 2, headers_end - 1};
  for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
    memcpy(copy, orig, fat->image_size);
    CHECK(uk__cubin_hide_globals(copy, cuts[k], set) == 0);
    CHECK(memcmp(copy, orig, fat->image_size) == 0);
  }
  /* wrong class, byte order, machine, section header size */
  size_t fields[] = {EI_CLASS, EI_DATA, offsetof(Elf64_Ehdr, e_machine), offsetof(Elf64_Ehdr, e_shentsize)};
  for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++) {
    memcpy(copy, orig, fat->image_size);
    copy[fields[k]] ^= 0x5a;
    unsigned char *expect = malloc(fat->image_size);
    if (!expect) break;
    memcpy(expect, copy, fat->image_size);
    CHECK(uk__cubin_hide_globals(copy, fat->image_size, set) == 0);
    CHECK(memcmp(copy, expect, fat->image_size) == 0);
    free(expect);
  }
  /* nothing to hide, or no set */
  CHECK(uk__cubin_hide_globals(copy, fat->image_size, NULL) == 0);
out:
  free(set);
  free(copy);
  free(orig);
}

/* Loads an image and reports whether the CCCL constant and our partial
 * size symbol are there. */
static void symbols(const uk__binary *b, int *has_cccl, int *has_partial) {
  CUmodule m = NULL;
  CHECK(uk__cu.cuModuleLoadData(&m, b->image) == CUDA_SUCCESS);
  CUdeviceptr p;
  size_t bytes = 0;
  *has_cccl = m && uk__cu.cuModuleGetGlobal(&p, &bytes, m, cccl_constant) == CUDA_SUCCESS;
  *has_partial = m && uk__cu.cuModuleGetGlobal(&p, &bytes, m, "_uk_partial_size") == CUDA_SUCCESS && bytes > 0;
  if (m) uk__cu.cuModuleUnload(m);
}

/* The whole path: a reduction call compiles a lean cubin (the default) and
 * gets the sum of random data right, against a double host sum. */
static void run_reduction(void) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.disable_disk_cache = 1;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&o, &ctx));
  uk_reduction_spec spec = {"T x", "T y", "x", "a + b", "y = a", "0", "lean_call", NULL, NULL, NULL, 0};
  uk_reduction *k = NULL;
  CHECK_OK(uk_reduction_create(ctx, &spec, &k));
  enum { N = 100003 };
  float *h = malloc(N * sizeof *h);
  double want = 0, mag = 0;
  srand(7);
  for (int i = 0; h && i < N; i++) {
    h[i] = (float)(rand() % 2001 - 1000) / 997.0f + 0.001f;
    want += h[i];
    mag += fabs(h[i]);
  }
  int64_t n = N;
  uk_array x, y;
  memset(&x, 0, sizeof x);
  memset(&y, 0, sizeof y);
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 1, &n, 0, NULL, &x));
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 0, NULL, 0, NULL, &y));
  float got = -12345.0f;
  CHECK_OK(uk_memcpy_htod(y.data, &got, sizeof got)); /* poisoned */
  if (h && x.data) CHECK_OK(uk_memcpy_htod(x.data, h, N * sizeof *h));
  uk_arg in = uk_arg_array(&x);
  if (k) CHECK_OK(uk_reduction_call(k, &in, 1, &y, 1, NULL));
  CHECK_OK(uk_device_synchronize());
  CHECK_OK(uk_memcpy_dtoh(&got, y.data, sizeof got));
  printf("lean reduction: sum %.6f, host %.6f\n", got, want);
  CHECK(fabs(got - want) <= 1e-6 * mag + 1e-3); /* one lost element is ~0.5 */
  uk_array_free(ctx, &x, NULL);
  uk_array_free(ctx, &y, NULL);
  uk_reduction_destroy(k);
  uk_context_destroy(ctx);
  free(h);
}

static void check_gpu(void) {
  int n = 0;
  if (uk_device_count(&n) != UK_OK || n == 0) {
    printf("SKIP: the GPU half (no CUDA device: %s)\n", uk_last_error());
    return;
  }
  uk_device_info info;
  CHECK_OK(uk_device_info_get(0, &info));
  char *src = reduction_source(info.arch);
  uk__binary *fat = src ? compile(src, info.arch, NULL) : NULL;
  uk__binary *lean = src ? compile(src, info.arch, "_uk_") : NULL;
  int pushed = 0;
  CHECK_OK(uk__device_enter(0, &pushed));
  if (fat && lean) {
    int cccl = -1, partial = -1;
    symbols(fat, &cccl, &partial);
    CHECK(cccl == 1 && partial == 1);
    symbols(lean, &cccl, &partial);
    CHECK(cccl == 0 && partial == 1);
  }
  uk__device_leave(pushed);
  uk__binary_release(fat);
  uk__binary_release(lean);
  free(src);
  run_reduction();
}

int main(void) {
  unsetenv("UKERN_LEAN_CUBIN");
  char *src = reduction_source(90);
  uk__binary *fat = src ? compile(src, 90, NULL) : NULL;
  uk__binary *lean = src ? compile(src, 90, "_uk_") : NULL;
  if (fat && lean) {
    check_cubins(fat, lean);
    check_untouched(fat);
  }
  /* the opt-out gives NVRTC's cubin byte for byte */
  setenv("UKERN_LEAN_CUBIN", "0", 1);
  uk__binary *off = src ? compile(src, 90, "_uk_") : NULL;
  CHECK(off && fat && off->image_size == fat->image_size && memcmp(off->image, fat->image, fat->image_size) == 0);
  unsetenv("UKERN_LEAN_CUBIN");
  uk__binary_release(off);
  uk__binary_release(fat);
  uk__binary_release(lean);
  free(src);
  check_gpu();
  return ut_finish("test_lean_cubin");
}
