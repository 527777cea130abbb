/* uk_cache_entry_describe: what a disk cache entry holds, read from the key
 * text stored in it (compile_key.c writes it, dcache.c frames it): the
 * target, the name expressions of the compile or else the kernels its
 * source defines, and for generated kernels their kind, name, dtypes and
 * variant from the banner the emitters write (ew_emit.c, red_emit.c,
 * emit_common.c: "// ukern KIND kernel 'NAME' ...", "// parameters: ...",
 * "// variant: ..." or "// loops: ..."). For tools that list a cache
 * (`ukern cache list`). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "codegen/dtype.h"
#include "runtime/arch.h"

#define HEADER_SIZE 32u       /* dcache.c: magic, version, key length at 8 (u64 LE), ... */
#define MAX_KEY (1u << 26)
#define MAX_NAMES 32
#define MAX_NAME 127

typedef struct names {
  int count;
  char name[MAX_NAMES][MAX_NAME + 1];
} names;

static void add_name(names *e, const char *s, size_t n) {
  if (e->count == MAX_NAMES || n == 0) return;
  if (n > MAX_NAME) n = MAX_NAME;
  memcpy(e->name[e->count], s, n);
  e->name[e->count++][n] = 0;
}

static int ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static int space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

/* The kernel name after `__global__`: skips `void` and attributes such as
 * `__launch_bounds__(256)` wherever they stand (reductions put them after
 * `void`); the name is the identifier that an '(' follows. */
static void global_name(names *e, const char *q, const char *end) {
  for (int words = 0; q < end && words < 8; words++) {
    while (q < end && space(*q)) q++;
    const char *w = q;
    while (q < end && ident_char(*q)) q++;
    if (q == w) return;
    const char *after = q;
    while (after < end && space(*after)) after++;
    if (after < end && *after == '(') {
      if (!(q - w > 4 && !strncmp(w, "__", 2) && !strncmp(q - 2, "__", 2))) { /* not __attr__(...) */
        add_name(e, w, (size_t)(q - w));
        return;
      }
      for (int depth = 0; after < end; after++) { /* skip the attribute's (...) */
        if (*after == '(') depth++;
        if (*after == ')' && --depth == 0) break;
      }
      q = after + 1;
    }
  }
}

/* A length-prefixed part at p ("<tag> <len> <bytes>\n"): its bytes in
 * *data, *n; returns where the next part starts, or NULL. */
static const char *length_part(const char *p, const char *end, const char **data, size_t *n) {
  const char *sp = memchr(p, ' ', (size_t)(end - p));
  if (!sp) return NULL;
  char *num_end = NULL;
  unsigned long long v = strtoull(sp + 1, &num_end, 10);
  if (num_end == sp + 1 || num_end >= end || *num_end != ' ' || v > (size_t)(end - num_end - 1)) return NULL;
  *data = num_end + 1;
  *n = (size_t)v;
  return *data + v + 1;
}

/* Copies [p, end) to dst (cap bytes), cut to fit. */
static void copy_text(char *dst, size_t cap, const char *p, const char *end) {
  size_t n = (size_t)(end - p);
  if (n >= cap) n = cap - 1;
  memcpy(dst, p, n);
  dst[n] = 0;
}

/* The line of the banner that starts with `tag`, within [src, end): its
 * text after the tag in *p, *q; 0 when absent. */
static int banner_line(const char *src, const char *end, const char *tag, const char **p, const char **q) {
  size_t t = strlen(tag);
  for (const char *l = src; l < end;) {
    const char *nl = memchr(l, '\n', (size_t)(end - l));
    const char *le = nl ? nl : end;
    if ((size_t)(le - l) >= t && !memcmp(l, tag, t)) {
      *p = l + t;
      *q = le;
      return 1;
    }
    l = le + 1;
  }
  return 0;
}

/* "T x (float32), raw T y (float32, ndim 1) -> T z (float32)": the first
 * word in each parenthesis, with the separators kept. */
static void banner_dtypes(char *dst, size_t cap, const char *p, const char *end) {
  size_t n = 0;
  int depth = 0, any = 0;
  dst[0] = 0;
  for (; p < end && n + 8 < cap; p++) {
    if (*p == '(' && depth++ == 0) {
      const char *w = p + 1, *we = w;
      while (we < end && *we != ',' && *we != ')') we++;
      size_t wn = (size_t)(we - w);
      if (n + wn + 8 >= cap) break;
      if (any) dst[n++] = ',', dst[n++] = ' ';
      memcpy(dst + n, w, wn);
      n += wn;
      any = 1;
    } else if (*p == ')') {
      depth--;
    } else if (depth == 0 && *p == '-' && p + 1 < end && p[1] == '>') {
      memcpy(dst + n, " ->", 3);
      n += 3;
      any = 0;
      if (n + 1 < cap) dst[n++] = ' ';
    }
  }
  while (n > 0 && dst[n - 1] == ' ') n--;
  dst[n] = 0;
}

/* Appends the dtype whose CUDA spelling is [t, te) ("float", "__half"), or
 * the spelling itself. */
static size_t add_ctype(char *dst, size_t n, size_t cap, const char *t, const char *te) {
  const char *name = NULL;
  for (int d = 0; d < UK_DTYPE_COUNT_ && !name; d++) {
    const char *c = uk__dtype_info((uk_dtype)d)->ctype;
    if (strlen(c) == (size_t)(te - t) && !memcmp(c, t, (size_t)(te - t))) name = uk_dtype_name((uk_dtype)d);
  }
  size_t len = name ? strlen(name) : (size_t)(te - t);
  if (n + len + 8 >= cap) return n;
  memcpy(dst + n, name ? name : t, len);
  return n + len;
}

/* A fusion row kernel (fuse_row.c) has no banner: its dtypes are the types
 * of its `inN` and `outN` parameters, in the signature after `name(`. */
static void row_dtypes(char *dst, size_t cap, const char *src, const char *end, const char *name) {
  const char *p = name[0] ? memmem(src, (size_t)(end - src), name, strlen(name)) : NULL;
  dst[0] = 0;
  if (!p || !(p = memchr(p, '(', (size_t)(end - p)))) return;
  const char *close = memchr(p, ')', (size_t)(end - p));
  if (!close) return;
  size_t n = 0;
  int outputs = 0, any = 0;
  for (const char *a = p + 1; a < close;) {
    const char *comma = memchr(a, ',', (size_t)(close - a));
    const char *ae = comma ? comma : close;
    const char *in = memmem(a, (size_t)(ae - a), " in", 3), *o = memmem(a, (size_t)(ae - a), "_uk_p_out", 9);
    const char *pi = memmem(a, (size_t)(ae - a), "_uk_p_in", 8);
    if (pi || in || o) {
      if (o && !outputs) {
        if (n + 8 < cap) memcpy(dst + n, " ->", 3), n += 3;
        outputs = 1, any = 0;
      }
      const char *t = a;
      while (t < ae && space(*t)) t++;
      if ((size_t)(ae - t) > 6 && !strncmp(t, "const ", 6)) t += 6;
      const char *te = t;
      while (te < ae && !space(*te) && *te != '*') te++;
      if (n + 8 < cap) {
        if (any) dst[n++] = ',';
        if (any || outputs) dst[n++] = ' ';
      }
      n = add_ctype(dst, n, cap, t, te);
      any = 1;
    }
    a = ae + 1;
  }
  dst[n] = 0;
}

/* The banner of a source ukern generated (within its first lines). */
static void banner(const char *src, size_t len, const char *first_kernel, uk_cache_entry_info *out) {
  const char *end = src + (len < 4096 ? len : 4096), *p, *q;
  int fusion = banner_line(src, end, "// fusion parameters:", &p, &q);
  snprintf(out->kind, sizeof out->kind, "module");
  if (fusion && banner_line(src, end, "#include <ukern/fusion_row.cuh>", &p, &q)) {
    snprintf(out->kind, sizeof out->kind, "fusion row");
    snprintf(out->name, sizeof out->name, "%s", first_kernel);
    row_dtypes(out->dtypes, sizeof out->dtypes, src, src + len, first_kernel);
    return;
  }
  if (!banner_line(src, end, "// ukern ", &p, &q)) return;
  const char *k = p;
  while (p < q && *p != ' ') p++;
  const char *name = memchr(p, '\'', (size_t)(q - p));
  const char *name_end = name ? memchr(name + 1, '\'', (size_t)(q - name - 1)) : NULL;
  if (p == k || !name_end || (size_t)(q - p) < 8 || strncmp(p, " kernel ", 8) != 0) return;
  if (fusion) snprintf(out->kind, sizeof out->kind, "fusion %.*s", (int)(p - k), k);
  else copy_text(out->kind, sizeof out->kind, k, p);
  copy_text(out->name, sizeof out->name, name + 1, name_end);
  if (banner_line(src, end, "// parameters:", &p, &q)) banner_dtypes(out->dtypes, sizeof out->dtypes, p, q);
  if (banner_line(src, end, "// variant: ", &p, &q) || banner_line(src, end, "// loops: ", &p, &q))
    copy_text(out->variant, sizeof out->variant, p, q);
}

static void describe(const char *key, size_t len, uk__arch *arch, names *e, uk_cache_entry_info *out) {
  static const char *const parts[] = {"name ", "source ", "option ", "files ", "include ", "link "};
  const char *p = key, *end = key + len, *src = NULL;
  size_t src_len = 0;
  int named = 0;
  while (p && p < end) {
    size_t j = 0;
    while (j < sizeof parts / sizeof *parts && strncmp(p, parts[j], strlen(parts[j])) != 0) j++;
    if (j < sizeof parts / sizeof *parts) {
      const char *data;
      size_t n;
      const char *next = length_part(p, end, &data, &n);
      if (!next) break;
      if (j == 0) add_name(e, data, n), named = 1;
      if (j == 1) src = data, src_len = n;
      p = next;
      continue;
    }
    if (!strncmp(p, "arch ", 5)) sscanf(p + 5, "%d %d", &arch->num, &arch->flags);
    if (!strncmp(p, "arch_flags ", 11)) arch->flags = atoi(p + 11); /* entries of older versions */
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    p = nl ? nl + 1 : NULL;
  }
  if (!named && src) {
    const char *src_end = src + src_len;
    for (const char *g = src; g < src_end; g++) {
      if (!(g = memmem(g, (size_t)(src_end - g), "__global__", 10))) break;
      global_name(e, g + 10, src_end);
    }
  }
  if (src) banner(src, src_len, !named && e->count ? e->name[0] : "", out);
}

/* The key text of the entry at path (malloc'd, NUL-terminated). The file is
 * opened so that a link or FIFO cannot redirect or block the read. */
static uk_status read_key(const char *path, char **key, size_t *len) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return uk__errorf(UK_ERR_IO, "uk_cache_entry_describe: cannot open '%s': %s", path, strerror(errno));
  uk_status st = UK_OK;
  unsigned char hdr[HEADER_SIZE];
  struct stat sb;
  uint64_t klen = 0;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    st = uk__errorf(UK_ERR_IO, "uk_cache_entry_describe: '%s' is not a regular file", path);
  } else if (pread(fd, hdr, HEADER_SIZE, 0) != (ssize_t)HEADER_SIZE || memcmp(hdr, "UKC", 3) != 0) {
    st = uk__errorf(UK_ERR_IO, "uk_cache_entry_describe: '%s' is not a ukern cache entry", path);
  } else {
    for (int j = 7; j >= 0; j--) klen = klen << 8 | hdr[8 + j];
    if (klen > MAX_KEY || klen > (uint64_t)sb.st_size - HEADER_SIZE)
      st = uk__errorf(UK_ERR_IO, "uk_cache_entry_describe: '%s' is damaged (key length %llu)", path,
                      (unsigned long long)klen);
    else if (!(*key = malloc((size_t)klen + 1)))
      st = uk__errorf(UK_ERR_NOMEM, "out of memory");
    else if (pread(fd, *key, (size_t)klen, HEADER_SIZE) != (ssize_t)klen) {
      free(*key);
      *key = NULL;
      st = uk__errorf(UK_ERR_IO, "uk_cache_entry_describe: '%s' is damaged (short key)", path);
    }
  }
  close(fd);
  if (st == UK_OK) {
    (*key)[klen] = 0;
    *len = (size_t)klen;
  }
  return st;
}

uk_status uk_cache_entry_describe(const char *path, uk_cache_entry_info *out) {
  uk__error_clear();
  if (!path || !out)
    return uk__errorf(UK_ERR_INVALID, "uk_cache_entry_describe: %s is NULL", !path ? "path" : "out");
  char *key = NULL;
  size_t len = 0;
  uk_status st = read_key(path, &key, &len);
  if (st != UK_OK) return st;
  names *e = calloc(1, sizeof *e);
  uk__arch arch = {0, 0};
  if (!e) {
    free(key);
    return uk__errorf(UK_ERR_NOMEM, "out of memory");
  }
  uk_cache_entry_info info;
  memset(&info, 0, sizeof info);
  describe(key, len, &arch, e, &info);
  free(key);
  /* the names: one allocation, the pointer array then the strings */
  size_t bytes = (size_t)(e->count + 1) * sizeof(char *);
  for (int j = 0; j < e->count; j++) bytes += strlen(e->name[j]) + 1;
  char **v = malloc(bytes);
  if (!v) {
    free(e);
    return uk__errorf(UK_ERR_NOMEM, "out of memory");
  }
  char *at = (char *)(v + e->count + 1);
  for (int j = 0; j < e->count; j++) {
    size_t n = strlen(e->name[j]) + 1;
    v[j] = memcpy(at, e->name[j], n);
    at += n;
  }
  v[e->count] = NULL;
  if (arch.num > 0) uk__arch_name(arch, info.arch, sizeof info.arch);
  info.num_kernels = e->count;
  info.kernels = v;
  *out = info;
  free(e);
  return UK_OK;
}
