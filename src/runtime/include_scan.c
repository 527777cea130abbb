/* The user files a compile can read through #include (include_scan.h).
 *
 * Files are opened O_NONBLOCK and used only when regular (a FIFO named as a
 * header must not hang a cache lookup; NVRTC would fail on it anyway), read
 * up to MAX_FILE_BYTES, and each path is scanned once (include guards and
 * #pragma once make cycles normal). */
#include "runtime/include_scan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/embedded.h"
#include "base/hash.h"

#define MAX_DIRS 64
#define MAX_FILES 512
#define MAX_DEPTH 64
#define MAX_FILE_BYTES (64u << 20)

typedef struct scan {
  uk_hasher h;
  const char *dirs[MAX_DIRS]; /* -I directories, in order */
  int ndirs;
  char **seen;                /* paths already hashed (grown; at most MAX_FILES) */
  int nseen, seen_cap;
  int searched;               /* some user location was searched */
} scan;

static void add(scan *s, const char *tag, const char *a, const char *b) {
  uk__hasher_add_str(&s->h, tag);
  uk__hasher_add_str(&s->h, a);
  uk__hasher_add_str(&s->h, b ? b : "");
}

/* The value of an include-path option at options[*k] (advancing *k past a
 * separate value), else NULL. */
static const char *option_value(const char *const *options, int n, int *k, const char *const *forms) {
  const char *o = options[*k];
  for (; *forms; forms++) {
    size_t len = strlen(*forms);
    if (strncmp(o, *forms, len) != 0) continue;
    if (o[len] == '=') return o + len + 1;
    if (o[len]) return (*forms)[1] != '-' ? o + len : NULL; /* -Idir, not --include-pathdir */
    if (*k + 1 < n) return options[++*k];
    return NULL;
  }
  return NULL;
}

static const char *const include_dir_forms[] = {"--include-path", "-I", NULL};
static const char *const pre_include_forms[] = {"--pre-include", "-include", NULL};

static char *read_regular(const char *path, size_t *size, int *missing) {
  *missing = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    *missing = errno == ENOENT || errno == ENOTDIR;
    return NULL;
  }
  struct stat st;
  char *buf = NULL;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size <= MAX_FILE_BYTES &&
      (buf = malloc((size_t)st.st_size + 1)) != NULL) {
    size_t done = 0;
    ssize_t r;
    while (done < (size_t)st.st_size && (r = read(fd, buf + done, (size_t)st.st_size - done)) != 0) {
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) break;
      done += (size_t)r;
    }
    buf[done] = '\0';
    *size = done;
  }
  close(fd);
  return buf;
}

static void scan_text(scan *s, const char *text, size_t len, const char *dir, int depth);

/* Hashes and scans dir/name when it is there: 1 when found (present in any
 * form: a file that cannot be read is keyed as such). */
static int try_file(scan *s, const char *dir, const char *name, int depth) {
  char *path = NULL;
  if (asprintf(&path, "%s/%s", dir, name) < 0) return 0;
  for (int k = 0; k < s->nseen; k++)
    if (strcmp(s->seen[k], path) == 0) {
      free(path);
      return 1; /* hashed already; its place in the order is in the hash */
    }
  size_t size = 0;
  int missing = 0;
  char *text = read_regular(path, &size, &missing);
  if (!text && missing) {
    free(path);
    return 0;
  }
  if (!text) {
    add(s, "unreadable", path, NULL);
    free(path);
    return 1;
  }
  char head[64];
  snprintf(head, sizeof head, "%zu", size);
  add(s, "file", path, head);
  uk__hasher_update(&s->h, text, size);
  if (s->nseen == s->seen_cap && s->nseen < MAX_FILES) {
    int cap = s->seen_cap ? 2 * s->seen_cap : 16;
    char **grown = realloc(s->seen, (size_t)cap * sizeof *grown);
    if (grown) {
      s->seen = grown;
      s->seen_cap = cap;
    }
  }
  char *own_dir = s->nseen < s->seen_cap ? strdup(path) : NULL;
  if (own_dir) {
    s->seen[s->nseen++] = path;
    *strrchr(own_dir, '/') = '\0'; /* for the file's own "x" includes */
    if (depth < MAX_DEPTH) scan_text(s, text, size, own_dir, depth + 1);
    free(own_dir);
  } else {
    add(s, "too many files", path, NULL);
    free(path);
  }
  free(text);
  return 1;
}

/* One #include: quoted from `dir` first, then the -I directories. */
static void resolve(scan *s, const char *name, int quoted, const char *dir, int depth) {
  if (!quoted && s->ndirs == 0) return; /* only the toolkit's directories: keyed by path */
  if (uk__embedded_find(name)) return;  /* NVRTC's in-memory headers come first */
  s->searched = 1;
  if (quoted && try_file(s, dir, name, depth)) return;
  for (int k = 0; k < s->ndirs; k++)
    if (try_file(s, s->dirs[k], name, depth)) return;
  add(s, "missing", name, quoted ? dir : "<>");
}

/* Visits only the lines whose first non-blank character is '#', found by
 * memchr for '#' (generated sources are hundreds of lines with a few
 * directives; a line-by-line walk was most of a generated kernel's key). */
static void scan_text(scan *s, const char *text, size_t len, const char *dir, int depth) {
  const char *p = text, *end = text + len;
  while (p < end) {
    const char *hash = memchr(p, '#', (size_t)(end - p));
    if (!hash) break;
    const char *nl = memchr(hash, '\n', (size_t)(end - hash));
    const char *eol = nl ? nl : end;
    const char *q = hash;
    while (q > p && (q[-1] == ' ' || q[-1] == '\t')) q--;
    if (q == text || q[-1] == '\n') { /* the '#' begins its line (after blanks) */
      q = hash + 1;
      while (q < eol && (*q == ' ' || *q == '\t')) q++;
      if (eol - q > 7 && strncmp(q, "include", 7) == 0) {
        q += 7;
        if (eol - q > 5 && strncmp(q, "_next", 5) == 0) q += 5;
        while (q < eol && (*q == ' ' || *q == '\t')) q++;
        char close = q < eol && *q == '"' ? '"' : q < eol && *q == '<' ? '>' : 0;
        const char *e = close ? memchr(q + 1, close, (size_t)(eol - q - 1)) : NULL;
        if (e && e > q + 1 && e - q < 4096) {
          char name[4096];
          memcpy(name, q + 1, (size_t)(e - q - 1));
          name[e - q - 1] = '\0';
          resolve(s, name, close == '"', dir, depth);
        } else if (q < eol) {
          s->searched = 1;
          uk__hasher_add_str(&s->h, "unfollowed include"); /* a macro: cannot follow */
        }
      }
    }
    p = nl ? nl + 1 : end;
  }
}

/* Whether the request could name a file at all: every #include line has a
 * '#' and every -include option spells "include". Most requests do not, and
 * this runs on every memory-cache hit. */
static int mentions_include(const uk__compile_req *req) {
  for (int k = 0; k < req->num_options; k++)
    if (strstr(req->options[k], "include")) return 1;
  return req->source && strchr(req->source, '#') && strstr(req->source, "include");
}

int uk__include_digest(const uk__compile_req *req, char out[33]) {
  out[0] = '\0';
  if (!mentions_include(req)) return 0;
  /* On the stack, the seen list grown only when a file is read: a
   * generated kernel names only embedded headers and reads none (a 4.7 KB
   * calloc here was half of its scan). */
  scan st, *s = &st;
  memset(s, 0, sizeof *s);
  uk__hasher_init(&s->h);
  for (int k = 0; k < req->num_options; k++) {
    const char *d = option_value(req->options, req->num_options, &k, include_dir_forms);
    if (d && s->ndirs < MAX_DIRS) s->dirs[s->ndirs++] = d;
  }
  /* NVRTC looks for the source's "x" includes next to its name. */
  char *dir = strdup(req->name && strchr(req->name, '/') ? req->name : "./module");
  if (dir) {
    char *slash = strrchr(dir, '/');
    slash[slash == dir] = '\0';
    for (int k = 0; k < req->num_options; k++) {
      const char *f = option_value(req->options, req->num_options, &k, pre_include_forms);
      if (f) resolve(s, f, 1, dir, 0);
    }
    if (req->source) scan_text(s, req->source, strlen(req->source), dir, 0);
  }
  int searched = s->searched;
  if (searched) uk__hash128_hex(uk__hasher_digest(&s->h), out);
  for (int k = 0; k < s->nseen; k++) free(s->seen[k]);
  free(s->seen);
  free(dir);
  return searched;
}
