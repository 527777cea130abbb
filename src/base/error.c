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

static char *vformat(const char *fmt, va_list ap) {
  uk_strbuf sb;
  uk__sb_init(&sb);
  uk__sb_vaddf(&sb, fmt, ap);
  return uk__sb_detach(&sb);
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
  set_owned(&tl_log, log ? strdup(log) : NULL);
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
  char *m = uk__sb_detach(&sb);
  if (m) set_owned(&tl_message, m);
}

void uk__error_clear(void) {
  if (tl_message) set_owned(&tl_message, NULL);
  if (tl_log) set_owned(&tl_log, NULL);
}

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

  uk_strbuf sb;
  uk__sb_init(&sb);
  uk__sb_addf(&sb, "%s:%zu:%zu: ", what, line, pos - line_start + 1);
  va_list ap;
  va_start(ap, fmt);
  uk__sb_vaddf(&sb, fmt, ap);
  va_end(ap);
  uk__sb_addf(&sb, "\n    %.*s\n    ", (int)(line_end - line_start), text ? text + line_start : "");
  for (size_t k = line_start; k < pos; k++) uk__sb_addc(&sb, text[k] == '\t' ? '\t' : ' ');
  uk__sb_addc(&sb, '^');
  if (hint) uk__sb_addf(&sb, "\n%s", hint);
  set_owned(&tl_message, uk__sb_detach(&sb));
  set_owned(&tl_log, NULL);
  return s;
}

const char *uk_last_error(void) { return tl_message ? tl_message : ""; }
const char *uk_last_error_log(void) { return tl_log ? tl_log : ""; }
