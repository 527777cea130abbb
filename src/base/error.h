/* Thread-local error detail: the message and log behind uk_last_error(). */
#ifndef UK_BASE_ERROR_H
#define UK_BASE_ERROR_H

#include "ukern/ukern.h"

#if defined(__GNUC__)
#define UK__PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define UK__PRINTF(f, a)
#endif

/* Every message is stored escaped (control bytes but newline and tab, and
 * DEL, as \xNN) and bounded: lines of at most UK__ERROR_LINE_MAX bytes, at
 * most UK__ERROR_MAX bytes in all, the cut said with the bytes left out.
 * uk__error_at quotes at most UK__ERROR_CONTEXT bytes of the source line on
 * each side of the caret. A log is stored escaped, not cut. */
#define UK__ERROR_LINE_MAX 1024
#define UK__ERROR_MAX 8192
#define UK__ERROR_CONTEXT 72

/* Sets the calling thread's message (printf format), clears the log and
 * returns `s`, so that failing is one line: return uk__errorf(...). */
uk_status uk__errorf(uk_status s, const char *fmt, ...) UK__PRINTF(2, 3);
/* Like uk__errorf, and sets the log (copied). */
uk_status uk__errorf_log(uk_status s, const char *log, const char *fmt, ...) UK__PRINTF(3, 4);
/* Prefixes the current message with "<prefix>: " (for context on the way up). */
void uk__error_prefix(const char *fmt, ...) UK__PRINTF(1, 2);
/* Clears the calling thread's message and log (a call that succeeds). */
void uk__error_clear(void);
/* Message with position and caret under the offending column:
 *   "<what>:<line>:<col>: <message>\n    <source line>\n    <spaces>^"
 * `pos` is a byte offset into `text`; hint (may be NULL) is appended on a new line. */
uk_status uk__error_at(uk_status s, const char *what, const char *text, size_t pos,
                       const char *hint, const char *fmt, ...) UK__PRINTF(6, 7);

#endif
