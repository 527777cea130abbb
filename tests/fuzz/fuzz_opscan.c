/* Fuzz entry for the operation scanner (libFuzzer, or replay.c).
 *
 * The first byte picks the name asked about, the rest (up to a NUL) is the
 * operation. Findings are crashes, leaks and broken invariants (abort()):
 *   - write_only(name) implies uses(name), and uses(name) implies
 *     mentions(name);
 *   - "if (c) " before any text is control flow that can skip the store, and
 *     "name += 1; " before it reads the output: write_only is 0 for both;
 *   - inside a `//` comment (the text with every line break spliced by a
 *     backslash, as C continues such a comment) nothing is used or written;
 *   - the same question asked twice gets the same answer.
 * UKERN_FUZZ_ALLOW=continuation skips the comment check, so that a long run
 * can look past that known finding (issue 9 item 7); replays never set it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/opscan.h"
#include "fuzz_util.h"

static const char *const names[] = {"z", "x", "y", "i", "_ind", "n", "_raw_z", "out", "if", "a_b1"};

/* `prefix` + text, malloc'ed. */
static char *prepend(const char *prefix, const char *text) {
  size_t a = strlen(prefix), b = strlen(text);
  char *s = malloc(a + b + 1);
  if (!s) return NULL;
  memcpy(s, prefix, a);
  memcpy(s + a, text, b + 1);
  return s;
}

/* "//" + text with "\\\n" for every line break (CR becomes a space). */
static char *as_comment(const char *text) {
  size_t n = strlen(text);
  char *s = malloc(2 * n + 3), *w = s;
  if (!s) return NULL;
  *w++ = '/';
  *w++ = '/';
  for (size_t k = 0; k < n; k++) {
    if (text[k] == '\n') *w++ = '\\';
    *w++ = text[k] == '\r' ? ' ' : text[k];
  }
  *w = '\0';
  return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  const char *name = names[data[0] % (sizeof names / sizeof names[0])];
  char *text = malloc(size);
  if (!text) return 0;
  memcpy(text, data + 1, size - 1);
  text[size - 1] = '\0';

  int uses = uk__opscan_uses(text, name);
  int wo = uk__opscan_write_only(text, name);
  int men = uk__opscan_mentions(text, name);
  require((uses | wo | men) <= 1 && uses >= 0 && wo >= 0 && men >= 0);
  require(!wo || uses);
  require(!uses || men);
  require(uses == uk__opscan_uses(text, name) && wo == uk__opscan_write_only(text, name) &&
          men == uk__opscan_mentions(text, name));

  char *guarded = prepend("if (c) ", text);
  if (guarded) require(uk__opscan_write_only(guarded, name) == 0);
  free(guarded);
  char pre[32];
  snprintf(pre, sizeof pre, "%s += 1; ", name);
  char *reads = prepend(pre, text);
  if (reads) require(uk__opscan_write_only(reads, name) == 0);
  free(reads);
  static int skip_comment = -1;
  if (skip_comment < 0) skip_comment = getenv("UKERN_FUZZ_ALLOW") && strstr(getenv("UKERN_FUZZ_ALLOW"), "continuation");
  char *comment = skip_comment ? NULL : as_comment(text);
  if (comment)
    require(uk__opscan_uses(comment, name) == 0 && uk__opscan_write_only(comment, name) == 0 &&
            uk__opscan_mentions(comment, name) == 0);
  free(comment);

  uk__opscan_mentions(text, "_raw_");
  uk__opscan_mentions(text, "ukern::");
  require(uk__opscan_uses(NULL, name) == 0 && uk__opscan_write_only(NULL, name) == 0);
  free(text);
  return 0;
}
