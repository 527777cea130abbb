/* Thread-local error detail (error.h): the status and message of the last failed call. */
#include "base/error.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"

/* Per thread: a context is shared by threads, so detail can't live there.
 * A pthread key's destructor frees a thread's strings when it exits. */
static _Thread_local char *tl_message;
static _Thread_local char *tl_log;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static _Thread_local int exit_hook_set;

static void free_at_exit(void *unused) {
  (void)unused;
  free(tl_message);
  free(tl_log);
  tl_message = tl_log = NULL;
}

static void make_exit_key(void) { pthread_key_create(&exit_key, free_at_exit); }

static void set_owned(char **slot, char *value) {
  free(*slot);
  *slot = value;
  if (value && !exit_hook_set) {
    pthread_once(&exit_key_once, make_exit_key);
    pthread_setspecific(exit_key, (void *)1); /* any non-NULL value arms the destructor */
    exit_hook_set = 1;
  }
}

/* Messages quote user bytes: a byte that a terminal would act on (C0
 * controls but newline and tab, DEL) is shown as \xNN, so that an ESC
 * sequence in a name can't rewrite the user's screen. */
static int needs_escape(unsigned char c) { return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f; }

static void add_escaped(uk_strbuf *sb, unsigned char c) {
  if (needs_escape(c)) uk__sb_addf(sb, "\\x%02x", c);
  else uk__sb_addc(sb, (char)c);
}

/* The stored form of a message: escaped, every line at most
 * UK__ERROR_LINE_MAX bytes and the whole at most UK__ERROR_MAX bytes (a
 * 400 kB name stays a short message), cut at a UTF-8 character boundary
 * with the number of bytes left out. Takes `m` (may be NULL). */
static char *bounded(char *m) {
  if (!m) return NULL;
  uk_strbuf sb;
  uk__sb_init(&sb);
  size_t n = strlen(m);
  for (size_t k = 0; k < n;) {
    size_t e = k;
    while (e < n && m[e] != '\n') e++;
    size_t keep = e - k, shown = 0;
    if (keep > UK__ERROR_LINE_MAX) {
      keep = UK__ERROR_LINE_MAX;
      while (keep > 0 && ((unsigned char)m[k + keep] & 0xC0) == 0x80) keep--;
    }
    for (size_t j = k; j < k + keep && sb.len < UK__ERROR_MAX; j++, shown++) add_escaped(&sb, (unsigned char)m[j]);
    if (shown < e - k) uk__sb_addf(&sb, "... (%zu more bytes)", e - k - shown);
    if (sb.len >= UK__ERROR_MAX && e < n) {
      uk__sb_addf(&sb, "\n... (message cut: %zu more bytes)", n - e);
      break;
    }
    if (e < n) uk__sb_addc(&sb, '\n');
    k = e + 1;
  }
  free(m);
  return uk__sb_detach(&sb);
}

/* The log is the compiler's: escaped, not cut. */
static char *escaped_copy(const char *log) {
  uk_strbuf sb;
  uk__sb_init(&sb);
  for (const char *p = log; *p; p++) add_escaped(&sb, (unsigned char)*p);
  if (!sb.buf) uk__sb_add(&sb, "");
  return uk__sb_detach(&sb);
}

static char *vformat(const char *fmt, va_list ap) {
  uk_strbuf sb;
  uk__sb_init(&sb);
  uk__sb_vaddf(&sb, fmt, ap);
  return bounded(uk__sb_detach(&sb));
}

uk_status uk__errorf(uk_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_owned(&tl_message, vformat(fmt, ap));
  va_end(ap);
  set_owned(&tl_log, NULL);
  return s;
}

uk_status uk__errorf_log(uk_status s, const char *log, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_owned(&tl_message, vformat(fmt, ap));
  va_end(ap);
  set_owned(&tl_log, log ? escaped_copy(log) : NULL);
  return s;
}

void uk__error_prefix(const char *fmt, ...) {
  uk_strbuf sb;
  uk__sb_init(&sb);
  va_list ap;
  va_start(ap, fmt);
  uk__sb_vaddf(&sb, fmt, ap);
  va_end(ap);
  uk__sb_addf(&sb, ": %s", tl_message ? tl_message : "");
  char *m = bounded(uk__sb_detach(&sb));
  if (m) set_owned(&tl_message, m);
}

void uk__error_clear(void) {
  if (tl_message) set_owned(&tl_message, NULL);
  if (tl_log) set_owned(&tl_log, NULL);
}

/* Columns a byte of a quoted source line takes: 0 for UTF-8 continuation
 * bytes (one column per character), 4 for an escaped one. */
static size_t width_of(unsigned char c) { return (c & 0xC0) == 0x80 ? 0 : needs_escape(c) ? 4 : 1; }

uk_status uk__error_at(uk_status s, const char *what, const char *text, size_t pos,
                       const char *hint, const char *fmt, ...) {
  size_t len = text ? strlen(text) : 0;
  if (pos > len) pos = len;
  size_t line = 1, line_start = 0;
  for (size_t k = 0; k < pos; k++)
    if (text[k] == '\n') {
      line++;
      line_start = k + 1;
    }
  size_t line_end = line_start;
  while (line_end < len && text[line_end] != '\n') line_end++;
  /* A window of the line around pos, so that a huge line stays short. */
  size_t from = pos - line_start > UK__ERROR_CONTEXT ? pos - UK__ERROR_CONTEXT : line_start;
  size_t to = line_end - pos > UK__ERROR_CONTEXT ? pos + UK__ERROR_CONTEXT : line_end;
  while (from > line_start && ((unsigned char)text[from] & 0xC0) == 0x80) from--;
  while (to < line_end && ((unsigned char)text[to] & 0xC0) == 0x80) to++;

  uk_strbuf sb;
  uk__sb_init(&sb);
  uk__sb_addf(&sb, "%s:%zu:%zu: ", what, line, pos - line_start + 1);
  va_list ap;
  va_start(ap, fmt);
  uk__sb_vaddf(&sb, fmt, ap);
  va_end(ap);
  uk__sb_add(&sb, "\n    ");
  if (from > line_start) uk__sb_add(&sb, "...");
  for (size_t k = from; k < to; k++) add_escaped(&sb, (unsigned char)text[k]);
  if (to < line_end) uk__sb_add(&sb, "...");
  uk__sb_add(&sb, "\n    ");
  if (from > line_start) uk__sb_add(&sb, "   ");
  for (size_t k = from; k < pos; k++) {
    if (text[k] == '\t') uk__sb_addc(&sb, '\t');
    else
      for (size_t w = width_of((unsigned char)text[k]); w > 0; w--) uk__sb_addc(&sb, ' ');
  }
  uk__sb_addc(&sb, '^');
  if (hint) uk__sb_addf(&sb, "\n%s", hint);
  set_owned(&tl_message, bounded(uk__sb_detach(&sb)));
  set_owned(&tl_log, NULL);
  return s;
}

const char *uk_last_error(void) { return tl_message ? tl_message : ""; }
const char *uk_last_error_log(void) { return tl_log ? tl_log : ""; }
