/* uk_module_link: a module linked with nvJitLink from several parts
 * (sources, PTX, cubins, fatbins, LTO-IR, objects, static libraries).
 * Sources go through the compile caches as unlinked relocatable code; the
 * link goes through both caches under a key of every part's bytes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/hash.h"
#include "base/strbuf.h"
#include "runtime/context.h"
#include "runtime/image_check.h"
#include "runtime/link.h"
#include "runtime/module.h"

#define MAX_PART_BYTES (1ull << 30)
#define MAX_PARTS 4096

typedef struct part {
  int kind;            /* UK__LINK_* */
  const void *data;    /* into `owned`, the caller's data, or bin's image */
  size_t size;
  char *owned;         /* file contents */
  uk__binary *bin;     /* a compiled SOURCE part */
  char name[64];
} part;

typedef struct link_state {
  uk__arch target;
  int lto;
  part *parts;
  int nparts;
  uk__binary *names_from; /* the first SOURCE part: its name expressions */
} link_state;

/* A regular file, read whole (a FIFO or device cannot hang the call). */
static uk_status read_file(const char *path, char **data, size_t *size) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return uk__errorf(UK_ERR_IO, "uk_module_link: cannot open '%s': %s", path, strerror(errno));
  struct stat s;
  uk_status st = UK_OK;
  char *buf = NULL;
  if (fstat(fd, &s) != 0 || !S_ISREG(s.st_mode) || s.st_size <= 0 || (uint64_t)s.st_size > MAX_PART_BYTES) {
    st = uk__errorf(UK_ERR_IO, "uk_module_link: '%s' is not a non-empty regular file (of at most 1 GiB)", path);
    goto out;
  }
  size_t n = (size_t)s.st_size, got = 0;
  if (!(buf = malloc(n + 1))) {
    st = uk__errorf(UK_ERR_NOMEM, "out of memory reading '%s'", path);
    goto out;
  }
  while (got < n) {
    ssize_t r = read(fd, buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  if (got != n) {
    st = uk__errorf(UK_ERR_IO, "uk_module_link: cannot read '%s'", path);
    goto out;
  }
  buf[n] = '\0';
  *data = buf;
  *size = n;
  buf = NULL;
out:
  free(buf);
  close(fd);
  return st;
}

static int has_option(const char *const *opts, int n, const char *a, const char *b) {
  for (int k = 0; k < n; k++)
    if (!strcmp(opts[k], a) || (b && !strcmp(opts[k], b))) return 1;
  return 0;
}

/* A SOURCE part compiled as relocatable code (or LTO-IR with -dlto),
 * unlinked, through the compile caches. */
static uk_status compile_source(uk_context *ctx, const uk_module_options *o, const char *const *opts, int nopts,
                                int first, link_state *ls, part *p, const char *code) {
  const char *stack[32];
  const char **all = nopts + 1 <= 32 ? stack : malloc(((size_t)nopts + 1) * sizeof *all);
  if (!all) return uk__errorf(UK_ERR_NOMEM, "out of memory linking");
  int n = 0;
  for (int k = 0; k < nopts; k++) all[n++] = opts[k];
  if (!has_option(opts, nopts, "-dlto", "--dlink-time-opt") && !has_option(opts, nopts, "-rdc=true", "-dc"))
    all[n++] = "-rdc=true";
  uk__compile_req req = {0};
  req.source = code;
  req.name = p->name;
  req.options = all;
  req.num_options = n;
  if (first) {
    req.name_expressions = o->name_expressions;
    req.num_name_expressions = o->num_name_expressions;
  }
  req.arch = ls->target.num;
  req.arch_flags = ls->target.flags;
  req.no_std_headers = o->no_std_headers != 0;
  req.no_link = 1;
  uk_status st = uk__context_compile(ctx, &req, &p->bin);
  p->kind = has_option(all, n, "-dlto", "--dlink-time-opt") ? UK__LINK_LTOIR : UK__LINK_CUBIN;
  if (all != stack) free(all);
  if (st != UK_OK) return st;
  p->data = p->bin->image;
  p->size = p->bin->image_size;
  if (first) ls->names_from = p->bin;
  return UK_OK;
}

/* Everything the link reads, as text: the cache key. */
static uk_status link_key(const link_state *ls, const char *const *opts, int nopts, uk_strbuf *key) {
  uk__toolkit tk;
  uk__nvrtc_toolkit(&tk);
  int ver = tk.nvrtc_version;
  char id[96];
  uk__link_identity(&tk, id);
  uk__sb_addf(key, "ukern %s\nnvrtc %d\nmodule_link\narch %d %d\nlto %d\n%s\n", UK_VERSION_STRING, ver,
              ls->target.num, ls->target.flags, ls->lto, id);
  for (int k = 0; k < nopts; k++) uk__sb_addf(key, "option %zu %s\n", strlen(opts[k]), opts[k]);
  for (int k = 0; k < ls->nparts; k++) {
    char hex[33];
    uk__hash128_hex(uk__hash128(ls->parts[k].data, ls->parts[k].size), hex);
    uk__sb_addf(key, "part %d %zu %s\n", ls->parts[k].kind, ls->parts[k].size, hex);
  }
  if (ls->names_from)
    for (int k = 0; k < ls->names_from->num_names; k++)
      uk__sb_addf(key, "name %zu %s\n", strlen(ls->names_from->names[k]), ls->names_from->names[k]);
  return key->failed ? uk__errorf(UK_ERR_NOMEM, "out of memory building a cache key") : UK_OK;
}

static uk_status make(void *arg, uk__binary **out) {
  link_state *ls = arg;
  uk__link_input *in = calloc((size_t)ls->nparts, sizeof *in);
  if (!in) return uk__errorf(UK_ERR_NOMEM, "out of memory linking");
  uk_strbuf log;
  uk__sb_init(&log);
  for (int k = 0; k < ls->nparts; k++) {
    in[k] = (uk__link_input){ls->parts[k].kind, ls->parts[k].data, ls->parts[k].size, ls->parts[k].name};
    if (ls->parts[k].bin && ls->parts[k].bin->log[0])
      uk__sb_addf(&log, "%s: %s", ls->parts[k].name, ls->parts[k].bin->log);
  }
  const void *d;
  size_t dn;
  uk__toolkit tk;
  uk__nvrtc_toolkit(&tk);
  uk__link_job job = {ls->target, ls->lto, uk__link_devrt(&tk, &d, &dn, NULL) == UK_OK, in, ls->nparts, NULL, 0,
                      "linking a module"};
  uk__error_clear();
  char *image = NULL, *info = NULL;
  size_t size = 0;
  uk_status st = uk__link_run(&tk, &job, &image, &size, &info);
  if (st == UK_OK) {
    uk__sb_add(&log, info);
    const uk__binary *nb = ls->names_from;
    st = log.failed ? uk__errorf(UK_ERR_NOMEM, "out of memory linking")
                    : uk__binary_create(image, size, 0, ls->target.num, nb ? nb->num_names : 0,
                                        nb ? (const char *const *)nb->names : NULL,
                                        nb ? (const char *const *)nb->lowered : NULL, uk__sb_str(&log), out);
  }
  free(image);
  free(info);
  free(in);
  uk__sb_release(&log);
  return st;
}

static const int kinds[] = {0 /* SOURCE: compiled */, UK__LINK_PTX, UK__LINK_CUBIN, UK__LINK_FATBIN,
                            UK__LINK_LTOIR, UK__LINK_OBJECT, UK__LINK_LIBRARY};

/* The bytes of one input, and its kind for nvJitLink (sources compiled). */
static uk_status load_part(uk_context *ctx, const uk_module_options *o, const char *const *opts, int nopts,
                           const uk_link_input *in, int index, link_state *ls, part *p) {
  if (in->name) snprintf(p->name, sizeof p->name, "%s", in->name);
  else if (in->path) snprintf(p->name, sizeof p->name, "%s", in->path);
  else snprintf(p->name, sizeof p->name, "input %d", index);
  if ((int)in->kind < 0 || (size_t)in->kind >= sizeof kinds / sizeof kinds[0])
    return uk__errorf(UK_ERR_INVALID, "uk_module_link: inputs[%d].kind %d is not a uk_link_kind", index, (int)in->kind);
  if (!in->data && !in->path)
    return uk__errorf(UK_ERR_INVALID, "uk_module_link: inputs[%d] has neither data nor path", index);
  const char *data = in->data;
  size_t size = in->bytes;
  uk_status st;
  if (!data) {
    if ((st = read_file(in->path, &p->owned, &size)) != UK_OK) return st;
    data = p->owned;
  }
  int text = in->kind == UK_LINK_SOURCE || in->kind == UK_LINK_PTX;
  if (text && in->data && size == 0) size = strlen(data);
  if (size == 0) return uk__errorf(UK_ERR_INVALID, "uk_module_link: inputs[%d] (%s) is empty", index, p->name);
  int terminated = p->owned != NULL; /* files get a NUL after their bytes */
  if (text && memchr(data, 0, size)) {
    size = strlen(data);
    terminated = 1;
  }
  /* Text parts need their NUL: copy caller bytes that lack one. */
  if (text && !terminated) {
    if (!(p->owned = malloc(size + 1))) return uk__errorf(UK_ERR_NOMEM, "out of memory linking");
    memcpy(p->owned, data, size);
    p->owned[size] = '\0';
    data = p->owned;
  }
  if (in->kind == UK_LINK_SOURCE) return compile_source(ctx, o, opts, nopts, !ls->names_from, ls, p, data);
  p->kind = kinds[in->kind];
  p->data = data;
  p->size = in->kind == UK_LINK_PTX ? size + 1 : size; /* nvJitLink takes PTX with its NUL */
  char what[128];
  snprintf(what, sizeof what, "uk_module_link: inputs[%d] ('%s')", index, p->name);
  return uk__image_check(p->kind, p->data, p->size, what);
}

uk_status uk_module_link(uk_context *ctx, const uk_link_input *inputs, int num_inputs,
                         const uk_module_options *opts, uk_module **out) {
  uk__error_clear();
  if (!ctx || !inputs || !out)
    return uk__errorf(UK_ERR_INVALID, "uk_module_link: %s is NULL", !ctx ? "ctx" : !inputs ? "inputs" : "out");
  if (num_inputs <= 0 || num_inputs > MAX_PARTS)
    return uk__errorf(UK_ERR_INVALID, "uk_module_link: num_inputs %d is not in 1..%d", num_inputs, MAX_PARTS);
  uk_module_options o;
  if (opts) o = *opts;
  else memset(&o, 0, sizeof o);
  if (o.num_options < 0 || (o.num_options > 0 && !o.options) || o.num_name_expressions < 0 ||
      (o.num_name_expressions > 0 && !o.name_expressions))
    return uk__errorf(UK_ERR_INVALID, "uk_module_options: num_options/num_name_expressions do not match their arrays");
  for (int k = 0; k < o.num_options; k++)
    if (!o.options[k]) return uk__errorf(UK_ERR_INVALID, "uk_module_options: options[%d] is NULL", k);

  link_state ls;
  memset(&ls, 0, sizeof ls);
  uk_strbuf key;
  uk__sb_init(&key);
  uk__binary *bin = NULL;
  uk_module *m = NULL;
  const char **copts = calloc((size_t)o.num_options + 1, sizeof *copts);
  ls.parts = calloc((size_t)num_inputs, sizeof *ls.parts);
  uk_status st = UK_OK;
  if (!copts || !ls.parts) {
    st = uk__errorf(UK_ERR_NOMEM, "out of memory linking");
    goto out;
  }
  int nopts = o.num_options;
  for (int k = 0; k < nopts; k++) copts[k] = o.options[k];
  if ((st = uk__context_check_arch(o.arch, o.arch_name, "uk_module_options", &ls.target)) != UK_OK) goto out;
  if (ls.target.num <= 0) {
    if ((st = uk__context_arch(ctx, ctx->opts.device, &ls.target.num)) != UK_OK) goto out;
    if (ls.target.num == ctx->opts.arch) ls.target.flags = ctx->arch_flags;
  }
  if ((st = uk__arch_take_option(copts, &nopts, &ls.target)) != UK_OK) goto out;
  ls.lto = has_option(copts, nopts, "-dlto", "--dlink-time-opt") || has_option(copts, nopts, "-lto", NULL);
  for (int k = 0; k < num_inputs; k++) ls.lto |= inputs[k].kind == UK_LINK_LTOIR;
  /* -lto is a link option; NVRTC's spelling is -dlto. */
  for (int k = 0; k < nopts; k++)
    if (!strcmp(copts[k], "-lto")) copts[k] = "-dlto";
  for (int k = 0; k < num_inputs; k++)
    if ((st = load_part(ctx, &o, copts, nopts, &inputs[k], k, &ls, &ls.parts[k])) != UK_OK) goto out;
  ls.nparts = num_inputs;
  if ((st = link_key(&ls, copts, nopts, &key)) != UK_OK) goto out;
  if ((st = uk__context_cached(ctx, key.buf, key.len, make, &ls, &bin)) != UK_OK) goto out;
  if ((st = uk__module_new(ctx, bin, &m)) != UK_OK) uk__binary_release(bin);
  else if ((st = uk__module_keep_given(m, NULL, o.options, o.num_options)) != UK_OK) uk_module_destroy(m);
  else *out = m;
out:
  for (int k = 0; ls.parts && k < num_inputs; k++) {
    free(ls.parts[k].owned);
    uk__binary_release(ls.parts[k].bin);
  }
  free(ls.parts);
  free(copts);
  uk__sb_release(&key);
  return st;
}
