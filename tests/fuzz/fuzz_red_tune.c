/* Fuzz entry for the reduction knobs' parser (uk__red_tune_parse: the
 * environment variable UKERN_RED_TUNE; libFuzzer, or replay.c).
 *
 * The first byte picks the output buffer's size (0 to 127), the rest (up to
 * a NUL) is the text. Findings are crashes and broken invariants (abort()):
 *   - nothing is written past the buffer, which ends in a NUL (size > 0);
 *   - with room for every key (160 bytes, the tune field's size), the output is lines
 *     "#define _UK_RED_<KEY> N\n" (N one or two digits), each key at most
 *     once, in the table's order;
 *   - a smaller buffer holds some of those lines, whole and in order;
 *   - the same text gives the same output, and the text twice (joined by a
 *     comma) gives it too: the last well-formed value of a key wins;
 *   - uk__red_tune_value gives a value of at most 5 digits for every key
 *     that has a define. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/red_emit.h"
#include "fuzz_util.h"

enum { FULL = 160, CANARY = 16 };

/* Runs the parser into a buffer of `size` bytes guarded by a canary. */
static void parse(const char *text, char *out, int size) {
  memset(out, 0xA5, (size_t)size + CANARY);
  uk__red_tune_parse(text, out, size);
  for (int k = size; k < size + CANARY; k++) require((unsigned char)out[k] == 0xA5);
  if (size > 0) require(memchr(out, 0, (size_t)size) != NULL);
}

/* 1 when every line of small appears, whole and in order, among full's. */
static int sublines(const char *small, const char *full) {
  const char *f = full;
  for (const char *s = small; *s;) {
    const char *e = strchr(s, '\n');
    if (!e) return 0;
    size_t len = (size_t)(e - s) + 1;
    while (*f && strncmp(f, s, len)) f = strchr(f, '\n') ? strchr(f, '\n') + 1 : f + strlen(f);
    if (!*f) return 0;
    f += len;
    s = e + 1;
  }
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  int osize = data[0] % 128;
  char *text = malloc(size), *twice = malloc(2 * size + 1);
  char full[FULL + CANARY], again[FULL + CANARY], small[128 + CANARY];
  if (!text || !twice) goto out;
  memcpy(text, data + 1, size - 1);
  text[size - 1] = '\0';

  parse(text, full, FULL);
  static const char *const order[] = {"#define _UK_RED_LD ", "#define _UK_RED_CW ", "#define _UK_RED_TRIP ",
                                      "#define _UK_RED_RP ", "#define _UK_RED_MB "};
  enum { NKEYS = sizeof order / sizeof order[0] };
  size_t next = 0;
  for (const char *l = full; *l;) {
    const char *e = strchr(l, '\n');
    require(e != NULL);
    size_t k = next;
    while (k < NKEYS && strncmp(l, order[k], strlen(order[k]))) k++;
    require(k < NKEYS); /* a known key, after the ones before it */
    const char *d = l + strlen(order[k]);
    require(e - d == 1 || e - d == 2);
    for (const char *q = d; q < e; q++) require(*q >= '0' && *q <= '9');
    next = k + 1;
    l = e + 1;
  }

  /* uk__red_tune_value reads the last well-formed item of up to 5 digits: a
     value wherever there is a define (whose item has 1 or 2), within 5 digits */
  static const char *const names[NKEYS] = {"ld", "cw", "trip", "rp", "mb"};
  for (int k = 0; k < NKEYS; k++) {
    const char *def = strstr(full, order[k]);
    int v = uk__red_tune_value(text, names[k], -1);
    require(v >= -1 && v <= 99999);
    if (def) require(v >= 0);
  }

  parse(text, again, FULL);
  require(strcmp(full, again) == 0);
  snprintf(twice, 2 * size + 1, "%s,%s", text, text);
  parse(twice, again, FULL);
  require(strcmp(full, again) == 0);

  parse(text, small, osize);
  if (osize > 0) require(sublines(small, full));
  uk__red_tune_parse(NULL, small, osize);
  if (osize > 0) require(small[0] == '\0');
out:
  free(text);
  free(twice);
  return 0;
}
