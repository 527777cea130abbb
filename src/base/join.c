/* Strings joined without printf (join.h). */
#include "base/join.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

long uk__join(char *out, size_t cap, ...) {
  va_list ap;
  size_t at = 0;
  int fits = cap > 0;
  va_start(ap, cap);
  for (const char *s; fits && (s = va_arg(ap, const char *)) != NULL;) {
    size_t n = strlen(s);
    if (n >= cap - at) {
      fits = 0;
    } else {
      memcpy(out + at, s, n);
      at += n;
    }
  }
  va_end(ap);
  if (cap > 0) out[fits ? at : 0] = '\0';
  return fits ? (long)at : -1;
}

char *uk__join_alloc(const char *first, ...) {
  va_list ap;
  size_t total = 0;
  va_start(ap, first);
  for (const char *s = first; s; s = va_arg(ap, const char *)) total += strlen(s);
  va_end(ap);
  char *out = malloc(total + 1), *p = out;
  if (!out) return NULL;
  va_start(ap, first);
  for (const char *s = first; s; s = va_arg(ap, const char *)) {
    size_t n = strlen(s);
    memcpy(p, s, n);
    p += n;
  }
  va_end(ap);
  *p = '\0';
  return out;
}

int uk__udec(char *out, unsigned long long v) {
  char tmp[21];
  int n = 0;
  do tmp[n++] = (char)('0' + v % 10);
  while ((v /= 10) != 0);
  for (int k = 0; k < n; k++) out[k] = tmp[n - 1 - k];
  out[n] = '\0';
  return n;
}
