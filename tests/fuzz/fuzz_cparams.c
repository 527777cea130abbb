/* Fuzz entry for the C-signature parser (libFuzzer, or replay.c).
 *
 * The input (up to its first NUL) is parsed as a signature. Any status is
 * fine; a crash, a leak or a broken invariant (abort()) is a finding:
 *   - failure: a message is set and the result is untouched;
 *   - success: every parameter has a known kind, a name, a spelling and a
 *     position inside the text; named parameters have distinct names; the
 *     canonical re-spelling ("<spelling> <name>, ...") parses to the same
 *     kinds and names; size and alignment are sane (power-of-two alignment
 *     dividing the size). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "codegen/cparams.h"
#include "fuzz_util.h"

static int unnamed(const uk_cparam *p, int j) {
  char want[32];
  snprintf(want, sizeof want, "parameter %d", j + 1);
  return strcmp(p->name, want) == 0;
}

static void check(const char *text, const uk_cparams *l) {
  size_t len = strlen(text);
  require(l->count >= 0 && (l->count == 0) == (l->params == NULL));
  uk_strbuf sb;
  uk__sb_init(&sb);
  for (int j = 0; j < l->count; j++) {
    const uk_cparam *p = &l->params[j];
    require(p->type >= 0 && p->type < UK_CT_COUNT_ && uk__ctype_name(p->type) != NULL);
    require(p->name && p->name[0] && p->spelling && p->spelling[0] && p->pos <= len);
    size_t sz = uk__ctype_size(p->type), al = uk__ctype_align(p->type);
    require(sz >= 1 && sz <= 16 && al >= 1 && (al & (al - 1)) == 0 && sz % al == 0);
    for (int k = 0; k < j; k++)
      require(unnamed(&l->params[k], k) || strcmp(l->params[k].name, p->name) != 0);
    uk__sb_addf(&sb, "%s%s%s%s", j ? ", " : "", p->spelling, unnamed(p, j) ? "" : " ",
                unnamed(p, j) ? "" : p->name);
  }
  char *canon = uk__sb_detach(&sb);
  if (!canon) return; /* out of memory: nothing to compare */
  uk_cparams again = {0, NULL};
  require(uk__cparams_parse(canon, &again) == UK_OK && again.count == l->count);
  for (int j = 0; j < l->count; j++)
    require(again.params[j].type == l->params[j].type &&
            strcmp(again.params[j].name, l->params[j].name) == 0 &&
            strcmp(again.params[j].spelling, l->params[j].spelling) == 0);
  uk__cparams_free(&again);
  free(canon);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0'; /* an embedded NUL just ends the text early */
  uk_cparam sentinel;
  uk_cparams l = {-3, &sentinel};
  if (uk__cparams_parse(text, &l) == UK_OK) {
    check(text, &l);
    uk__cparams_free(&l);
    require(l.count == 0 && l.params == NULL);
  } else {
    require(uk_last_error()[0] != '\0' && l.count == -3 && l.params == &sentinel);
  }
  free(text);
  return 0;
}
