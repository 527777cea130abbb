/* A growable string with a sticky error.
 *
 * Invariants: buf is NUL-terminated whenever it is non-NULL; len excludes the
 * NUL; after an allocation failure `failed` is set, every later append is a
 * no-op, and detach returns NULL. Emitters append freely and check once at
 * the end. uk__sb_detach is the only way to take ownership of the text.
 */
#ifndef UK_BASE_STRBUF_H
#define UK_BASE_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

#include "base/error.h"

typedef struct uk_strbuf {
  char *buf;
  size_t len;
  size_t cap;
  int failed;
} uk_strbuf;

void uk__sb_init(uk_strbuf *sb);
void uk__sb_release(uk_strbuf *sb);
void uk__sb_reset(uk_strbuf *sb); /* len = 0, keeps the memory */
void uk__sb_addn(uk_strbuf *sb, const char *s, size_t n);
void uk__sb_add(uk_strbuf *sb, const char *s);
void uk__sb_addc(uk_strbuf *sb, char c);
void uk__sb_addf(uk_strbuf *sb, const char *fmt, ...) UK__PRINTF(2, 3);
void uk__sb_vaddf(uk_strbuf *sb, const char *fmt, va_list ap);
/* The text, "" if empty; borrowed until the next append. */
const char *uk__sb_str(const uk_strbuf *sb);
/* Hands the text to the caller (free with free/uk_free) and resets sb;
 * NULL after a failure. */
char *uk__sb_detach(uk_strbuf *sb);
/* Appends `source` with right-aligned line numbers ("  12 | text"). */
void uk__sb_add_numbered(uk_strbuf *sb, const char *source);

#endif
