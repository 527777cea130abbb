/* Unreferenced .global variables of PTX (see ptx_globals.h).
 *
 * Three passes over the text: find the module-scope .global definitions,
 * count every identifier token that names one of them, then collect the
 * ones named only once (by their own definition). */
#include "runtime/ptx_globals.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hash.h"

typedef struct def {
  size_t end;           /* just past the definition's line */
  size_t name, namelen; /* the variable's name */
  int refs;             /* identifier tokens naming it, its own included */
  int unused;
} def;

static int ident_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == '$' || c == '%'; }
static int ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }

/* Skips a comment or string starting at p (returns p when there is none). */
static size_t skip_comment_or_string(const char *s, size_t n, size_t p) {
  if (s[p] == '/' && p + 1 < n && s[p + 1] == '/') {
    while (p < n && s[p] != '\n') p++;
  } else if (s[p] == '/' && p + 1 < n && s[p + 1] == '*') {
    p += 2;
    while (p + 1 < n && !(s[p] == '*' && s[p + 1] == '/')) p++;
    p = p + 2 <= n ? p + 2 : n;
  } else if (s[p] == '"') {
    p++;
    while (p < n && s[p] != '"' && s[p] != '\n') p += s[p] == '\\' && p + 1 < n ? 2 : 1;
    if (p < n && s[p] == '"') p++;
  }
  return p;
}

/* Does the line at p open a .global definition ([.visible|.weak|.common]
 * .global ...)? .extern declarations are not definitions. */
static int opens_global(const char *s, size_t n, size_t p) {
  while (p < n && (s[p] == ' ' || s[p] == '\t')) p++;
  static const char *const linkage[] = {".visible", ".weak", ".common"};
  for (size_t k = 0; k < sizeof linkage / sizeof linkage[0]; k++) {
    size_t l = strlen(linkage[k]);
    if (p + l < n && memcmp(s + p, linkage[k], l) == 0 && (s[p + l] == ' ' || s[p + l] == '\t')) {
      p += l;
      while (p < n && (s[p] == ' ' || s[p] == '\t')) p++;
      break;
    }
  }
  return p + 7 < n && memcmp(s + p, ".global", 7) == 0 && (s[p + 7] == ' ' || s[p + 7] == '\t');
}

/* Parses the definition whose line starts at p: its name (the last
 * identifier before an initialiser or the closing ';', outside [...]) and
 * where it ends (after the ';' and the rest of its line). 0 when the text
 * does not look like one. */
static int parse_def(const char *s, size_t n, size_t p, def *d) {
  size_t name = 0, namelen = 0;
  int bracket = 0, brace = 0, in_init = 0;
  while (p < n) {
    size_t q = skip_comment_or_string(s, n, p);
    if (q != p) {
      p = q;
      continue;
    }
    char c = s[p];
    if (c == ';' && brace == 0) break;
    if (c == '[') bracket++;
    else if (c == ']') bracket--;
    else if (c == '{') brace++;
    else if (c == '}') brace--;
    else if (c == '=') in_init = 1;
    if (c == '.') { /* a directive or type: .global, .align, .u8 */
      p++;
      while (p < n && ident_char(s[p])) p++;
      continue;
    }
    if (ident_start(c)) {
      size_t e = p;
      while (e < n && ident_char(s[e])) e++;
      if (!in_init && bracket == 0) {
        name = p;
        namelen = e - p;
      }
      p = e;
      continue;
    }
    if (c >= '0' && c <= '9') { /* numbers such as 0f3F800000 are not names */
      while (p < n && ident_char(s[p])) p++;
      continue;
    }
    p++;
  }
  if (p >= n || namelen == 0 || brace != 0 || bracket != 0) return 0;
  p++; /* the ';' */
  while (p < n && (s[p] == ' ' || s[p] == '\t' || s[p] == '\r')) p++;
  if (p < n && s[p] != '\n') return 0; /* something else shares the line: leave it */
  d->end = p < n ? p + 1 : p;
  d->name = name;
  d->namelen = namelen;
  d->refs = 0;
  return 1;
}

/* Open-addressing table from name to definition index. */
typedef struct table {
  int32_t *slot; /* -1: empty */
  size_t mask;
} table;

static size_t slot_of(const table *t, const def *defs, const char *s, const char *name, size_t len) {
  size_t h = (size_t)uk__hash64(name, len) & t->mask;
  while (t->slot[h] >= 0) {
    const def *d = &defs[t->slot[h]];
    if (d->namelen == len && memcmp(s + d->name, name, len) == 0) break;
    h = (h + 1) & t->mask;
  }
  return h;
}

static int by_name(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

int uk__name_set_has(const uk__name_set *set, const char *name) {
  return set && bsearch(&name, set->names, (size_t)set->count, sizeof set->names[0], by_name) != NULL;
}

uk_status uk__ptx_unused_globals(const char *s, size_t n, const char *keep_prefix, uk__name_set **out) {
  def *defs = NULL;
  size_t ndefs = 0, cap = 0;
  table t = {NULL, 0};
  uk_status st = UK_OK;
  *out = NULL;

  /* 1: module-scope definitions, each starting a line at brace depth 0. */
  int depth = 0;
  int line_start = 1;
  for (size_t p = 0; p < n;) {
    if (line_start && depth == 0 && opens_global(s, n, p)) {
      def d;
      if (parse_def(s, n, p, &d)) {
        if (ndefs == cap) {
          size_t nc = cap ? 2 * cap : 256;
          def *nd = realloc(defs, nc * sizeof *nd);
          if (!nd) goto nomem;
          defs = nd;
          cap = nc;
        }
        defs[ndefs++] = d;
        p = d.end;
        line_start = 1;
        continue;
      }
    }
    size_t q = skip_comment_or_string(s, n, p);
    if (q != p) {
      line_start = 0;
      p = q;
      continue;
    }
    if (s[p] == '{') depth++;
    else if (s[p] == '}' && depth > 0) depth--;
    line_start = s[p] == '\n';
    p++;
  }

  if (ndefs > 0) {
    /* 2: count the identifier tokens naming a definition, everywhere. */
    size_t size = 16;
    while (size < 2 * ndefs) size *= 2;
    if (!(t.slot = malloc(size * sizeof *t.slot))) goto nomem;
    memset(t.slot, 0xff, size * sizeof *t.slot);
    t.mask = size - 1;
    for (size_t k = 0; k < ndefs; k++) {
      size_t h = slot_of(&t, defs, s, s + defs[k].name, defs[k].namelen);
      if (t.slot[h] < 0) t.slot[h] = (int32_t)k;
      else defs[k].refs = defs[t.slot[h]].refs = INT32_MAX / 2; /* defined twice: keep both */
    }
    for (size_t p = 0; p < n;) {
      if (s[p] == '.') {
        p++;
        while (p < n && ident_char(s[p])) p++;
      } else if (ident_start(s[p])) {
        size_t e = p;
        while (e < n && ident_char(s[e])) e++;
        size_t h = slot_of(&t, defs, s, s + p, e - p);
        if (t.slot[h] >= 0) defs[t.slot[h]].refs++;
        p = e;
      } else if (s[p] >= '0' && s[p] <= '9') {
        while (p < n && ident_char(s[p])) p++;
      } else {
        p++;
      }
    }
  }

  /* 3: the unused ones, as one sorted block. */
  size_t klen = keep_prefix ? strlen(keep_prefix) : 0, count = 0, text = 0;
  for (size_t k = 0; k < ndefs; k++) {
    def *d = &defs[k];
    d->unused = d->refs == 1 && !(klen && d->namelen >= klen && memcmp(s + d->name, keep_prefix, klen) == 0);
    if (d->unused) {
      count++;
      text += d->namelen + 1;
    }
  }
  uk__name_set *set = malloc(sizeof *set + count * sizeof set->names[0] + text);
  if (!set) goto nomem;
  set->count = (int)count;
  char *at = (char *)&set->names[count];
  size_t j = 0;
  for (size_t k = 0; k < ndefs; k++) {
    if (!defs[k].unused) continue;
    memcpy(at, s + defs[k].name, defs[k].namelen);
    at[defs[k].namelen] = '\0';
    set->names[j++] = at;
    at += defs[k].namelen + 1;
  }
  qsort(set->names, count, sizeof set->names[0], by_name);
  *out = set;
  goto done;

nomem:
  st = uk__errorf(UK_ERR_NOMEM, "out of memory reading PTX");
done:
  free(defs);
  free(t.slot);
  return st;
}
