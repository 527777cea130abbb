/* Raw modules: compiled from source (through the caches), or loaded from a
 * cubin/fatbin/PTX file or image. One module runs on every GPU: it is loaded
 * lazily into each device's primary context the first time it is used
 * there, so a module compiled without a GPU can still be inspected. */
#include "runtime/module.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "runtime/cubin_params.h"
#include "runtime/image_check.h"
#include "runtime/link.h"
#include "runtime/nvrtc_lib.h"


uk_status uk__module_new(uk_context *ctx, uk__binary *bin, uk_module **out) {
  /* The context's spare object is as new: nothing loaded, no functions, its
   * lock initialised (uk_module_destroy). */
  uk_module *m = uk__held_take(&ctx->spare_module);
  if (!m) {
    if (!(m = calloc(1, sizeof *m))) return uk__errorf(UK_ERR_NOMEM, "out of memory creating a module");
    if (pthread_mutex_init(&m->lock, NULL) != 0) {
      free(m);
      return uk__errorf(UK_ERR_NOMEM, "cannot create a mutex for a module");
    }
  }
  m->ctx = ctx;
  uk__context_retain(ctx);
  m->bin = bin;
  *out = m;
  return UK_OK;
}

static void free_object(uk_module *m) {
  pthread_mutex_destroy(&m->lock);
  free(m->kept);
  uk__binary_release(m->kept_bin);
  free(m);
}

static void free_spare(void *m) { free_object(m); }

void uk_module_destroy(uk_module *m) {
  if (!m) return;
  for (int k = 0; k < m->nfuncs; k++) uk__function_free(m->funcs[k]);
  free(m->funcs);
  for (int d = 0; d < m->loaded_end; d++) {
    if (!m->loaded[d]) continue;
    int pushed = 0;
    if (uk__device_enter(d, &pushed) == UK_OK) {
      uk__cu.cuModuleUnload(m->loaded[d]);
      uk__device_leave(pushed);
    }
    m->loaded[d] = NULL;
  }
  free(m->effective);
  m->effective = NULL;
  m->num_effective = 0;
  /* The given text stays with the object: the context's next module, made
   * from it, reuses it when the text is the same (uk__module_keep_given). */
  free(m->kept);
  m->kept = m->given;
  m->given = NULL;
  m->source = NULL;
  m->options = NULL;
  m->num_options = m->compiled = m->arch = m->arch_flags = m->added_rdc = 0;
  uk__binary_release(m->kept_bin);
  m->kept_bin = m->bin;
  uk_context *ctx = m->ctx;
  m->funcs = NULL;
  m->nfuncs = m->cap_funcs = m->loaded_end = 0;
  m->bin = NULL;
  m->ctx = NULL;
  /* Kept for the context's next module when its slot is free; the context
   * frees it at its last release, which may be the one below. */
  if (!uk__held_put(&ctx->spare_module, m, free_spare, NULL)) free_object(m);
  uk__context_release(ctx);
}

/* Whether the source has "<<<" (a kernel launch). strchr, not strstr: this
 * runs on every memory-cache hit, and strstr's set-up cost more than the
 * scan for short sources. */
static int has_launch(const char *code) {
  for (const char *p = strchr(code, '<'); p; p = strchr(p + 1, '<'))
    if (p[1] == '<' && p[2] == '<') return 1;
  return 0;
}

/* One allocation holding a NULL-terminated array of copies of a[0..na)
 * then b[0..nb), followed by the strings; NULL when out of memory. */
static char **pack_strings(const char *const *a, int na, const char *const *b, int nb) {
  size_t n = (size_t)na + (size_t)nb, bytes = (n + 1) * sizeof(char *);
  for (int k = 0; k < na; k++) bytes += strlen(a[k]) + 1;
  for (int k = 0; k < nb; k++) bytes += strlen(b[k]) + 1;
  char **out = malloc(bytes);
  if (!out) return NULL;
  char *at = (char *)(out + n + 1);
  for (size_t k = 0; k < n; k++) {
    const char *s = k < (size_t)na ? a[k] : b[k - (size_t)na];
    size_t len = strlen(s) + 1;
    memcpy(at, s, len);
    out[k] = at;
    at += len;
  }
  out[n] = NULL;
  return out;
}

/* Whether a packed block holds exactly a[0..na) then b[0..nb). */
static int same_strings(char *const *p, const char *const *a, int na, const char *const *b, int nb) {
  for (int k = 0; k < na + nb; k++)
    if (!p[k] || strcmp(p[k], k < na ? a[k] : b[k - na]) != 0) return 0;
  return p[na + nb] == NULL;
}

uk_status uk__module_keep_given(uk_module *m, const char *source, const char *const *options, int num_options) {
  char **p = m->kept;
  /* The same binary again (a memory-cache hit): the same key, whose source
   * is the kept one (only sources of uk_module_from_source are kept with a
   * compile's binary; a link's has none), so only the options compare. */
  int same_source = p && source && m->kept_bin == m->bin;
  uk__binary_release(m->kept_bin);
  m->kept_bin = NULL;
  m->kept = NULL;
  if (!source && num_options == 0) {
    free(p);
    return UK_OK;
  }
  /* A memory-cache hit made again after a destroy: the same text, no copy. */
  if (p && !(same_source ? same_strings(p + 1, NULL, 0, options, num_options)
                         : same_strings(p, &source, source ? 1 : 0, options, num_options))) {
    free(p);
    p = NULL;
  }
  if (!p) p = pack_strings(&source, source ? 1 : 0, options, num_options);
  if (!p) return uk__errorf(UK_ERR_NOMEM, "out of memory keeping a module's source");
  m->given = p;
  m->source = source ? p[0] : NULL;
  m->options = num_options ? (const char *const *)p + (source ? 1 : 0) : NULL;
  m->num_options = num_options;
  return UK_OK;
}

/* An explicit -rdc=false (or other spelling) is the user's choice. */
static int mentions_rdc(const char *const *opts, int n) {
  for (int k = 0; k < n; k++)
    if (opts[k] && (strstr(opts[k], "-rdc") || strstr(opts[k], "relocatable-device-code"))) return 1;
  return 0;
}

uk_status uk_module_from_source(uk_context *ctx, const char *code, const uk_module_options *opts,
                                uk_module **out) {
  uk__error_clear();
  if (!ctx || !code || !out)
    return uk__errorf(UK_ERR_INVALID, "uk_module_from_source: %s is NULL",
                      !ctx ? "ctx" : !code ? "code" : "out");
  uk_module_options o;
  if (opts) o = *opts;
  else memset(&o, 0, sizeof o);
  if (o.num_options < 0 || (o.num_options > 0 && !o.options) || o.num_name_expressions < 0 ||
      (o.num_name_expressions > 0 && !o.name_expressions))
    return uk__errorf(UK_ERR_INVALID,
                      "uk_module_options: num_options/num_name_expressions do not match their arrays");
  /* An arch to check against NVRTC's list: the memo through the context's
   * checked cache first (no second directory check, NVRTC not loaded). */
  if (o.arch || o.arch_name) uk__nvrtc_recall_from(ctx->dcache);
  uk__arch target;
  uk_status st = uk__context_check_arch(o.arch, o.arch_name, "uk_module_options", &target);
  if (st != UK_OK) return st;
  int arch = target.num;
  if (arch <= 0 && (st = uk__context_arch(ctx, ctx->opts.device, &arch)) != UK_OK) return st;

  /* A kernel that launches kernels needs relocatable code linked with the
   * device runtime: ask for it when the source has a launch (link.h). */
  const char *stack_opts[16];
  const char **copts = o.num_options < 16 ? stack_opts : malloc(((size_t)o.num_options + 1) * sizeof *copts);
  if (!copts) return uk__errorf(UK_ERR_NOMEM, "out of memory compiling a module");
  int ncopts = o.num_options, lto = 0;
  for (int k = 0; k < ncopts; k++) copts[k] = o.options[k];
  if (has_launch(code) && !uk__link_wanted(copts, ncopts, &lto) && !mentions_rdc(copts, ncopts))
    copts[ncopts++] = "-rdc=true";
  uk__compile_req req = {0};
  req.source = code;
  req.name = o.name ? o.name : "module";
  req.options = copts;
  req.num_options = ncopts;
  req.name_expressions = o.name_expressions;
  req.num_name_expressions = o.num_name_expressions;
  req.arch = arch;
  req.arch_flags = target.flags;
  req.no_std_headers = o.no_std_headers != 0;
  req.backend = o.backend;
  req.missing_headers_empty = o.missing_headers_empty != 0;
  uk__binary *bin = NULL;
  st = uk__context_compile(ctx, &req, &bin);
  if (copts != stack_opts) free(copts);
  if (st != UK_OK) return st;
  uk_module *m = NULL;
  if ((st = uk__module_new(ctx, bin, &m)) != UK_OK) {
    uk__binary_release(bin);
    return st;
  }
  if ((st = uk__module_keep_given(m, code, o.options, o.num_options)) != UK_OK) {
    uk_module_destroy(m);
    return st;
  }
  m->compiled = 1;
  m->arch = arch;
  m->arch_flags = target.flags;
  m->added_rdc = ncopts > o.num_options;
  *out = m;
  return UK_OK;
}

/* Image kinds by content: cubin (ELF), fatbin, else PTX text. */
static int is_fatbin(const unsigned char *p, size_t n) {
  if (n < 4) return 0;
  uint32_t magic = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
  return magic == UK__FATBIN_MAGIC;
}

/* The driver reads a cubin or fatbin by its headers alone (no size): the
 * structure must be in bounds first. */
static uk_status check_binary(const unsigned char *p, size_t n, const char *what) {
  return uk__cubin_is_elf(p, n) ? uk__elf_check(p, n, 0, UK__ELF_CUDA, what) : uk__fatbin_check(p, n, 0, what);
}

/* Wraps an image in a module and loads it on the default device now, so a
 * bad image or a missing device is reported here. */
static uk_status module_from_bytes(uk_context *ctx, const void *image, size_t bytes, int is_ptx,
                                   uk_module **out) {
  uk__binary *bin = NULL;
  uk_module *m = NULL;
  CUmodule mod;
  uk_status st = uk__binary_create(image, bytes, is_ptx, 0, 0, NULL, NULL, "", &bin);
  if (st != UK_OK) return st;
  if ((st = uk__module_new(ctx, bin, &m)) != UK_OK) {
    uk__binary_release(bin);
    return st;
  }
  pthread_mutex_lock(&m->lock);
  st = uk__module_load_locked(m, ctx->opts.device, &mod);
  pthread_mutex_unlock(&m->lock);
  if (st != UK_OK) {
    uk_module_destroy(m);
    return st;
  }
  *out = m;
  return UK_OK;
}

uk_status uk_module_from_image(uk_context *ctx, const void *image, size_t bytes, uk_module **out) {
  uk__error_clear();
  if (!ctx || !image || !out)
    return uk__errorf(UK_ERR_INVALID, "uk_module_from_image: %s is NULL",
                      !ctx ? "ctx" : !image ? "image" : "out");
  const unsigned char *p = image;
  if (uk__cubin_is_elf(p, bytes) || is_fatbin(p, bytes)) {
    uk_status st = check_binary(p, bytes, "uk_module_from_image");
    return st != UK_OK ? st : module_from_bytes(ctx, image, bytes, 0, out);
  }
  const unsigned char *nul = memchr(p, 0, bytes);
  if (!nul)
    return uk__errorf(UK_ERR_INVALID, "uk_module_from_image: the image is neither a cubin (ELF) "
                                      "nor a fatbin, and as PTX it is not NUL-terminated");
  return module_from_bytes(ctx, image, (size_t)(nul - p), 1, out);
}

uk_status uk_module_from_file(uk_context *ctx, const char *path, uk_module **out) {
  uk__error_clear();
  if (!ctx || !path || !out)
    return uk__errorf(UK_ERR_INVALID, "uk_module_from_file: %s is NULL",
                      !ctx ? "ctx" : !path ? "path" : "out");
  uk_status st = UK_OK;
  unsigned char *data = NULL;
  size_t size = 0, cap = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return uk__errorf(UK_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
  for (;;) {
    if (size == cap) {
      size_t ncap = cap ? cap * 2 : 1 << 16;
      unsigned char *p = realloc(data, ncap + 1);
      if (!p) {
        st = uk__errorf(UK_ERR_NOMEM, "out of memory reading '%s'", path);
        goto out;
      }
      data = p;
      cap = ncap;
    }
    size_t n = fread(data + size, 1, cap - size, f);
    size += n;
    if (n == 0) break;
  }
  if (ferror(f)) {
    st = uk__errorf(UK_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
    goto out;
  }
  if (size == 0) {
    st = uk__errorf(UK_ERR_INVALID, "'%s' is empty", path);
    goto out;
  }
  data[size] = '\0'; /* room was kept: PTX files need not end in a NUL */
  int binary = uk__cubin_is_elf(data, size) || is_fatbin(data, size);
  size_t used = size;
  if (!binary) {
    unsigned char *nul = memchr(data, 0, size);
    if (nul) used = (size_t)(nul - data);
  }
  if (binary) st = check_binary(data, size, "uk_module_from_file");
  if (st == UK_OK) st = module_from_bytes(ctx, data, used, !binary, out);
  if (st != UK_OK) uk__error_prefix("loading '%s'", path);
out:
  fclose(f);
  free(data);
  return st;
}

uk_status uk_module_image(uk_module *m, const void **image, size_t *bytes) {
  uk__error_clear();
  if (!m || !image || !bytes) return uk__errorf(UK_ERR_INVALID, "uk_module_image: NULL argument");
  if (m->bin->is_ptx)
    return uk__errorf(UK_ERR_NOT_FOUND, "the module holds PTX, not a cubin image");
  *image = m->bin->image;
  *bytes = m->bin->image_size;
  return UK_OK;
}

uk_status uk_module_lowered_name(uk_module *m, const char *name_expression, const char **lowered) {
  uk__error_clear();
  if (!m || !name_expression || !lowered)
    return uk__errorf(UK_ERR_INVALID, "uk_module_lowered_name: NULL argument");
  const char *l = uk__binary_lowered(m->bin, name_expression);
  if (!l)
    return uk__errorf(UK_ERR_NOT_FOUND,
                      "'%s' is not a name expression of this module (pass it in "
                      "uk_module_options.name_expressions)",
                      name_expression);
  *lowered = l;
  return UK_OK;
}

const char *uk_module_log(uk_module *m) { return m && m->bin->log ? m->bin->log : ""; }

/* "no kernel 'x' in module (kernels: a, b)", listing what the image has. */
static uk_status not_found(uk_module *m, CUmodule mod, const char *name) {
  uk_strbuf sb;
  uk__sb_init(&sb);
  unsigned count = 0;
  if (!mod) { /* no device: the cubin's own list */
    uk__sb_add(&sb, " (kernels: ");
    uk__cubin_list_kernels(m->bin->image, m->bin->image_size, &sb);
    uk__sb_addc(&sb, ')');
  } else if (uk__cu_need(cuModuleGetFunctionCount) == UK_OK && uk__cu_need(cuModuleEnumerateFunctions) == UK_OK &&
      uk__cu_need(cuFuncGetName) == UK_OK && uk__cu.cuModuleGetFunctionCount(&count, mod) == CUDA_SUCCESS &&
      count > 0) {
    CUfunction *fs = calloc(count, sizeof *fs);
    if (fs && uk__cu.cuModuleEnumerateFunctions(fs, count, mod) == CUDA_SUCCESS) {
      uk__sb_add(&sb, " (kernels: ");
      for (unsigned k = 0; k < count; k++) {
        const char *n = NULL;
        if (uk__cu.cuFuncGetName(&n, fs[k]) != CUDA_SUCCESS || !n) n = "?";
        uk__sb_addf(&sb, "%s%s", k ? ", " : "", n);
      }
      uk__sb_addc(&sb, ')');
    }
    free(fs);
  }
  if (m->bin->num_names > 0) {
    uk__sb_add(&sb, "; name expressions: ");
    for (int k = 0; k < m->bin->num_names; k++)
      uk__sb_addf(&sb, "%s%s", k ? ", " : "", m->bin->names[k]);
  } else {
    uk__sb_add(&sb, "; C++ kernels need extern \"C\" or a name expression");
  }
  uk_status st = uk__errorf(UK_ERR_NOT_FOUND, "no kernel '%s' in module%s", name, uk__sb_str(&sb));
  uk__sb_release(&sb);
  return st;
}

uk_status uk_module_function(uk_module *m, const char *name, uk_function **out) {
  uk__error_clear();
  if (!m || !name || !out) return uk__errorf(UK_ERR_INVALID, "uk_module_function: NULL argument");
  const char *symbol = uk__binary_lowered(m->bin, name);
  if (!symbol) symbol = name;
  uk_status st = UK_OK;
  pthread_mutex_lock(&m->lock);
  for (int k = 0; k < m->nfuncs; k++)
    if (strcmp(m->funcs[k]->symbol, symbol) == 0) {
      *out = m->funcs[k];
      goto out;
    }
  /* Resolve on the default device now, so a wrong name fails here. */
  int dev = m->ctx->opts.device;
  CUmodule mod;
  CUfunction fn = NULL;
  st = uk__module_load_locked(m, dev, &mod);
  if (st == UK_ERR_NO_DEVICE && !m->bin->is_ptx && uk__cubin_is_elf(m->bin->image, m->bin->image_size)) {
    /* No GPU: find the kernel in the cubin; it resolves at first use. */
    uk__error_clear();
    st = uk__cubin_find_kernel(m->bin->image, m->bin->image_size, symbol);
    if (st == UK_ERR_NOT_FOUND) st = not_found(m, NULL, name);
    if (st != UK_OK) goto out;
    dev = -1;
  } else if (st != UK_OK) {
    goto out;
  } else {
    CUresult r = uk__cu_module_function(&fn, mod, symbol);
    /* The driver also hands out __device__ functions of relocatable code;
     * only a kernel is a uk_function, as without a GPU (the cubin says). */
    if (r == CUDA_SUCCESS && !m->bin->is_ptx && uk__cubin_is_elf(m->bin->image, m->bin->image_size) &&
        uk__cubin_find_kernel(m->bin->image, m->bin->image_size, symbol) == UK_ERR_NOT_FOUND) {
      uk__error_clear();
      r = CUDA_ERROR_NOT_FOUND;
    }
    if (r == CUDA_ERROR_NOT_FOUND) {
      st = not_found(m, mod, name);
      goto out;
    }
    if ((st = uk__cu_check(r, "cuModuleGetFunction")) != UK_OK) goto out;
  }
  if (m->nfuncs == m->cap_funcs) {
    int ncap = m->cap_funcs ? m->cap_funcs * 2 : 4;
    uk_function **p = realloc(m->funcs, (size_t)ncap * sizeof *p);
    if (!p) {
      st = uk__errorf(UK_ERR_NOMEM, "out of memory adding a function");
      goto out;
    }
    m->funcs = p;
    m->cap_funcs = ncap;
  }
  uk_function *f = NULL;
  if ((st = uk__function_new(m, name, symbol, dev, fn, &f)) != UK_OK) goto out;
  m->funcs[m->nfuncs++] = f;
  *out = f;
out:
  pthread_mutex_unlock(&m->lock);
  return st;
}

uk_status uk_module_global_on(uk_module *m, int device, const char *name, uint64_t *dptr,
                              size_t *bytes) {
  uk__error_clear();
  if (!m || !name) return uk__errorf(UK_ERR_INVALID, "uk_module_global: NULL argument");
  const char *symbol = uk__binary_lowered(m->bin, name);
  if (!symbol) symbol = name;
  CUdeviceptr p = 0;
  size_t n = 0;
  CUmodule mod;
  pthread_mutex_lock(&m->lock);
  uk_status st = uk__module_load_locked(m, device, &mod);
  pthread_mutex_unlock(&m->lock);
  if (st != UK_OK) return st;
  CUresult r = uk__cu_module_global(&p, &n, mod, symbol);
  if (r == CUDA_ERROR_NOT_FOUND)
    return uk__errorf(UK_ERR_NOT_FOUND, "no __device__ or __constant__ variable '%s' in module", name);
  if ((st = uk__cu_check(r, "cuModuleGetGlobal")) != UK_OK) return st;
  if (dptr) *dptr = (uint64_t)p;
  if (bytes) *bytes = n;
  return UK_OK;
}

uk_status uk_module_global(uk_module *m, const char *name, uint64_t *dptr, size_t *bytes) {
  if (!m) {
    uk__error_clear();
    return uk__errorf(UK_ERR_INVALID, "uk_module_global: m is NULL");
  }
  return uk_module_global_on(m, m->ctx->opts.device, name, dptr, bytes);
}

const char *uk_module_source(const uk_module *m) { return m ? m->source : NULL; }

/* The options NVRTC received besides the include directories, in its
 * order: the target first, then the context's and the given options (an
 * -arch among them sets the target and leaves the list, as in the compile
 * path), then what ukern added. Caller holds m->lock. */
static uk_status make_effective(uk_module *m) {
  const uk_context *ctx = m->ctx;
  int n = 0;
  const char **list = malloc(((size_t)ctx->num_nvrtc_options + (size_t)m->num_options + 1) * sizeof *list);
  if (!list) return uk__errorf(UK_ERR_NOMEM, "out of memory listing a module's options");
  for (int k = 0; k < ctx->num_nvrtc_options; k++) list[n++] = ctx->nvrtc_options[k];
  for (int k = 0; k < m->num_options; k++) list[n++] = m->options[k];
  if (m->added_rdc) list[n++] = "-rdc=true";
  uk__arch a = {m->arch, m->arch_flags};
  if (ctx->arch_flags && !a.flags && a.num == ctx->opts.arch) a.flags = ctx->arch_flags;
  uk_status st = uk__arch_take_option(list, &n, &a);
  char arch_opt[40];
  const char *first = arch_opt;
  uk__arch_option(a, arch_opt, sizeof arch_opt);
  if (st == UK_OK && !(m->effective = pack_strings(&first, 1, list, n)))
    st = uk__errorf(UK_ERR_NOMEM, "out of memory listing a module's options");
  if (st == UK_OK) m->num_effective = n + 1;
  free(list);
  return st;
}

uk_status uk_module_nvrtc_options(uk_module *m, int effective, const char *const **options, int *count) {
  static const char *const none[] = {NULL};
  uk__error_clear();
  if (!m || !options || !count)
    return uk__errorf(UK_ERR_INVALID, "uk_module_nvrtc_options: %s is NULL", !m ? "m" : !options ? "options" : "count");
  if (!effective) {
    *options = m->options ? m->options : none;
    *count = m->num_options;
    return UK_OK;
  }
  uk_status st = UK_OK;
  pthread_mutex_lock(&m->lock);
  if (m->compiled && !m->effective) st = make_effective(m);
  if (st == UK_OK) {
    *options = m->effective ? (const char *const *)m->effective : none;
    *count = m->num_effective;
  }
  pthread_mutex_unlock(&m->lock);
  return st;
}
