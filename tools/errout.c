/* The tool's stderr: every message passes through a filter that escapes
 * what must not reach a terminal raw (control bytes other than newline and
 * tab, invalid UTF-8: file names and user text are printed in many places)
 * and keeps the start of the text, so that a --json failure object can carry
 * the message itself. Progress lines (progress.c) draw on the original
 * stream, with their own control sequences. */
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "cli.h"

FILE *cli_raw_stderr;

#define KEPT_MAX 8192
static char kept[KEPT_MAX];
static size_t kept_len;
/* The bytes of a UTF-8 sequence cut by a write boundary, held for the next. */
static unsigned char carry[4];
static size_t carry_len;

size_t cli_utf8_len(const unsigned char *p, size_t avail) {
  unsigned c = p[0];
  if (c < 0x80) return 1;
  size_t n;
  unsigned min;
  if (c >= 0xc2 && c <= 0xdf) n = 2, min = 0x80;
  else if (c >= 0xe0 && c <= 0xef) n = 3, min = 0x800;
  else if (c >= 0xf0 && c <= 0xf4) n = 4, min = 0x10000;
  else return 0;
  if (avail < n) return 0;
  unsigned v = c & (0x7fu >> n);
  for (size_t j = 1; j < n; j++) {
    if ((p[j] & 0xc0) != 0x80) return 0;
    v = v << 6 | (p[j] & 0x3fu);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
  return n;
}

static void keep(const char *s, size_t n) {
  if (kept_len + n >= KEPT_MAX) n = KEPT_MAX - 1 - kept_len;
  memcpy(kept + kept_len, s, n);
  kept_len += n;
  kept[kept_len] = 0;
}

/* Writes s[0:n) escaped; returns how many bytes it consumed (a possibly
 * incomplete sequence at the very end is left for the next write). */
static size_t emit(const unsigned char *s, size_t n, int final) {
  size_t i = 0;
  while (i < n) {
    unsigned c = s[i];
    size_t len = cli_utf8_len(s + i, n - i);
    if (len == 0 && !final && c >= 0xc2 && c <= 0xf4 && n - i < 4) {
      /* a lead byte whose sequence may continue in the next write */
      int prefix_ok = 1;
      for (size_t j = i + 1; j < n; j++) prefix_ok &= (s[j] & 0xc0) == 0x80;
      if (prefix_ok) return i;
    }
    char esc[8];
    if (len == 0 || c == 0x7f || (c < 0x20 && c != '\n' && c != '\t')) {
      snprintf(esc, sizeof esc, "\\x%02x", c);
      fputs(esc, cli_raw_stderr);
      keep(esc, strlen(esc));
      i++;
    } else {
      fwrite(s + i, 1, len, cli_raw_stderr);
      keep((const char *)s + i, len);
      i += len;
    }
  }
  return n;
}

static ssize_t filter_write(void *cookie, const char *buf, size_t size) {
  (void)cookie;
  size_t done = 0;
  while (carry_len > 0 && done < size) { /* complete the held sequence first */
    carry[carry_len++] = (unsigned char)buf[done++];
    size_t used = emit(carry, carry_len, carry_len == 4);
    if (used == carry_len) carry_len = 0;
    else if (used > 0) {
      memmove(carry, carry + used, carry_len - used);
      carry_len -= used;
    }
  }
  if (carry_len == 0) {
    size_t used = emit((const unsigned char *)buf + done, size - done, 0);
    carry_len = size - done - used; /* at most 3 bytes */
    memcpy(carry, buf + done + used, carry_len);
  }
  fflush(cli_raw_stderr);
  return (ssize_t)size;
}

static int filter_close(void *cookie) {
  (void)cookie;
  if (carry_len) emit(carry, carry_len, 1);
  carry_len = 0;
  return fflush(cli_raw_stderr);
}

void cli_stderr_filter_install(void) {
  cli_raw_stderr = stderr;
  cookie_io_functions_t io = {NULL, filter_write, NULL, filter_close};
  FILE *f = fopencookie(NULL, "w", io);
  if (!f) return; /* messages then go out unfiltered */
  setvbuf(f, NULL, _IOLBF, 4096);
  stderr = f;
}

const char *cli_stderr_text(char *buf, size_t size) {
  fflush(stderr);
  snprintf(buf, size, "%s", kept);
  /* A usage error prints the command's help after the message: keep the message. */
  char *help = strstr(buf, "usage: ");
  if (help && (help == buf || help[-1] == '\n')) *help = 0;
  size_t n = strlen(buf);
  while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ')) buf[--n] = 0;
  return buf;
}
