/* A growable string with a sticky error (strbuf.h). */
#include "base/strbuf.h"

#include <stddef.h>
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

/* The conversions the emitters use most ("%s", "%d", "%.*s", "%c", "%lld",
 * "%zu", "%%"), written without vsnprintf (about a tenth of its cost: code
 * generation formats hundreds of lines per kernel, a new process's first
 * call included). 1 if every conversion of fmt is one of those, else 0
 * (any flag, width, other precision or conversion: vsnprintf does it all). */
static int simple_format(const char *fmt) {
  for (const char *p = strchr(fmt, '%'); p; p = strchr(p, '%')) {
    p++;
    if (*p == '.' && p[1] == '*' && p[2] == 's') p += 3;
    else if (*p == 's' || *p == 'd' || *p == 'i' || *p == 'u' || *p == 'c' || *p == '%') p += 1;
    else if ((*p == 'l' || *p == 'z') && (p[1] == 'd' || p[1] == 'i' || p[1] == 'u')) p += 2;
    else if (*p == 'l' && p[1] == 'l' && (p[2] == 'd' || p[2] == 'i' || p[2] == 'u')) p += 3;
    else return 0;
  }
  return 1;
}

static void add_unsigned(uk_strbuf *sb, unsigned long long v, int negative) {
  char d[24];
  int n = sizeof d;
  do d[--n] = (char)('0' + v % 10); while ((v /= 10) != 0);
  if (negative) d[--n] = '-';
  uk__sb_addn(sb, d + n, sizeof d - (size_t)n);
}

static void add_signed(uk_strbuf *sb, long long v) {
  add_unsigned(sb, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v, v < 0);
}

/* fmt passed simple_format. */
static void simple_vaddf(uk_strbuf *sb, const char *fmt, va_list ap) {
  for (const char *p = fmt;;) {
    const char *q = strchr(p, '%');
    if (!q) {
      uk__sb_add(sb, p);
      return;
    }
    if (q > p) uk__sb_addn(sb, p, (size_t)(q - p));
    q++;
    if (*q == '.') { /* "%.*s": at most prec bytes; a negative precision is none */
      int prec = va_arg(ap, int);
      const char *str = va_arg(ap, const char *);
      if (!str) str = prec < 0 || prec >= 6 ? "(null)" : ""; /* as glibc */
      const char *end = prec < 0 ? NULL : memchr(str, '\0', (size_t)prec);
      uk__sb_addn(sb, str, prec < 0 ? strlen(str) : end ? (size_t)(end - str) : (size_t)prec);
      p = q + 3;
      continue;
    }
    int longs = 0;
    while (*q == 'l') longs++, q++;
    if (*q == 'z') longs = -1, q++;
    switch (*q) {
    case 's': {
      const char *str = va_arg(ap, const char *);
      uk__sb_add(sb, str ? str : "(null)");
      break;
    }
    case 'c': uk__sb_addc(sb, (char)va_arg(ap, int)); break;
    case '%': uk__sb_addc(sb, '%'); break;
    case 'u':
      add_unsigned(sb,
                   longs < 0    ? (unsigned long long)va_arg(ap, size_t)
                   : longs == 2 ? va_arg(ap, unsigned long long)
                   : longs == 1 ? (unsigned long long)va_arg(ap, unsigned long)
                                : (unsigned long long)va_arg(ap, unsigned),
                   0);
      break;
    default: /* d, i */
      add_signed(sb, longs < 0    ? (long long)va_arg(ap, ptrdiff_t) /* %zd: size_t's signed type */
                     : longs == 2 ? va_arg(ap, long long)
                     : longs == 1 ? (long long)va_arg(ap, long)
                                  : (long long)va_arg(ap, int));
      break;
    }
    p = q + 1;
  }
}

void uk__sb_vaddf(uk_strbuf *sb, const char *fmt, va_list ap) {
  if (simple_format(fmt)) {
    simple_vaddf(sb, fmt, ap);
    return;
  }
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
