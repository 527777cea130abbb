/* A growable string with a sticky error (strbuf.h). */
#include "base/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void uk__sb_init(uk_strbuf *sb) {
  sb->buf = NULL;
  sb->len = sb->cap = 0;
  sb->failed = 0;
}

void uk__sb_release(uk_strbuf *sb) {
  free(sb->buf);
  uk__sb_init(sb);
}

void uk__sb_reset(uk_strbuf *sb) {
  sb->len = 0;
  sb->failed = 0;
  if (sb->buf) sb->buf[0] = '\0';
}

static int grow(uk_strbuf *sb, size_t extra) {
  if (sb->failed) return 0;
  size_t need = sb->len + extra + 1;
  if (need <= sb->cap) return 1;
  size_t cap = sb->cap ? sb->cap : 64;
  while (cap < need) cap *= 2;
  char *p = realloc(sb->buf, cap);
  if (!p) {
    sb->failed = 1;
    return 0;
  }
  sb->buf = p;
  sb->cap = cap;
  return 1;
}

void uk__sb_addn(uk_strbuf *sb, const char *s, size_t n) {
  if (!grow(sb, n)) return;
  memcpy(sb->buf + sb->len, s, n);
  sb->len += n;
  sb->buf[sb->len] = '\0';
}

void uk__sb_add(uk_strbuf *sb, const char *s) { uk__sb_addn(sb, s, strlen(s)); }

void uk__sb_addc(uk_strbuf *sb, char c) { uk__sb_addn(sb, &c, 1); }

void uk__sb_vaddf(uk_strbuf *sb, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  char small[256];
  int n = vsnprintf(small, sizeof small, fmt, ap);
  if (n < 0) {
    sb->failed = 1;
  } else if ((size_t)n < sizeof small) {
    uk__sb_addn(sb, small, (size_t)n);
  } else if (grow(sb, (size_t)n)) {
    vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap2);
    sb->len += (size_t)n;
  }
  va_end(ap2);
}

void uk__sb_addf(uk_strbuf *sb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  uk__sb_vaddf(sb, fmt, ap);
  va_end(ap);
}

const char *uk__sb_str(const uk_strbuf *sb) { return sb->buf && !sb->failed ? sb->buf : ""; }

char *uk__sb_detach(uk_strbuf *sb) {
  char *p = NULL;
  if (!sb->failed) p = sb->buf ? sb->buf : strdup("");
  else free(sb->buf);
  uk__sb_init(sb);
  return p;
}

void uk__sb_add_numbered(uk_strbuf *sb, const char *source) {
  int line = 1;
  const char *p = source;
  while (*p) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    uk__sb_addf(sb, "%5d | %.*s\n", line++, (int)n, p);
    if (!e) break;
    p = e + 1;
  }
}
