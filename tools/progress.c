/* Progress on a terminal, clocks and JSON strings for the commands. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

double cli_now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* One line at a time; a ticker thread redraws it with the elapsed time. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static pthread_t ticker;
static int active, stop;
static char line[256];
static double started;

static void draw(void) {
  fprintf(cli_raw_stderr, "\r\033[K%s ... %.1f s", line, (cli_now_ms() - started) / 1e3);
  fflush(cli_raw_stderr);
}

static void *tick(void *unused) {
  (void)unused;
  pthread_mutex_lock(&lock);
  while (!stop) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 200000000L;
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&wake, &lock, &until);
    if (!stop) draw();
  }
  pthread_mutex_unlock(&lock);
  return NULL;
}

void cli_progress_begin(const char *fmt, ...) {
  if (!isatty(2)) return;
  cli_progress_end();
  fflush(stderr); /* messages before the line */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  started = cli_now_ms();
  stop = 0;
  draw();
  if (pthread_create(&ticker, NULL, tick, NULL) == 0) active = 1;
}

void cli_progress_end(void) {
  if (!active) return;
  pthread_mutex_lock(&lock);
  stop = 1;
  pthread_cond_signal(&wake);
  pthread_mutex_unlock(&lock);
  pthread_join(ticker, NULL);
  active = 0;
  fputs("\r\033[K", cli_raw_stderr);
  fflush(cli_raw_stderr);
}

void cli_json_str(FILE *f, const char *s) {
  fputc('"', f);
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  size_t left = strlen((const char *)p);
  while (left > 0) {
    size_t n = cli_utf8_len(p, left);
    if (n == 0) fprintf(f, "\\udc%02x", *p), n = 1; /* not UTF-8: PEP 383's escape */
    else if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
    else if (*p == '\n') fputs("\\n", f);
    else if (*p < 0x20 || *p == 0x7f) fprintf(f, "\\u%04x", *p);
    else fwrite(p, 1, n, f);
    p += n;
    left -= n;
  }
  fputc('"', f);
}
