/* Fuzz entry for the parameter-list parser (libFuzzer, or replay_params.c).
 *
 * The whole input is parsed as in_params and as out_params; it is also split
 * at '|' into in_params | out_params | kernel name for
 * uk__params_check_kernel. Any status is fine; a crash, a leak or a broken
 * invariant (checked below, abort()) is a finding:
 *   - success: every item is consistent with the text (name at name_pos, a
 *     placeholder is a letter, a fixed dtype is valid), and the canonical
 *     re-spelling of the list parses to the same list;
 *   - failure: a message is set and the result is untouched.
 * When both lists parse, placeholder binding runs on arguments derived from
 * the input bytes (arrays of any dtype, untyped and typed scalars, texture
 * objects; outputs given or allocated): on success every parameter has a
 * valid dtype that matches its array exactly, and every scalar converts or
 * fails with a message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "codegen/bind.h"
#include "codegen/dtype.h"
#include "codegen/scalar.h"
#include "codegen/lexer.h"
#include "codegen/params.h"
#include "fuzz_util.h"

static int same_lists(const uk_paramlist *a, const uk_paramlist *b) {
  if (a->count != b->count) return 0;
  for (int j = 0; j < a->count; j++) {
    const uk_param *x = &a->items[j], *y = &b->items[j];
    if (strcmp(x->name, y->name) || x->is_raw != y->is_raw || x->is_placeholder != y->is_placeholder ||
        x->placeholder != y->placeholder || x->dtype != y->dtype)
      return 0;
  }
  return 1;
}

static void check_list(const char *text, const uk_paramlist *l, const char *what) {
  size_t len = strlen(text);
  require(l->count >= 0 && (l->count == 0) == (l->items == NULL));
  uk_strbuf sb;
  uk__sb_init(&sb);
  for (int j = 0; j < l->count; j++) {
    const uk_param *p = &l->items[j];
    size_t n = strlen(p->name);
    require(uk__lex_is_ident(p->name, n));
    require(p->pos <= p->type_pos && p->type_pos < p->name_pos && p->name_pos + n <= len);
    require(memcmp(text + p->name_pos, p->name, n) == 0);
    if (p->is_placeholder)
      require(p->dtype == UK_DTYPE_COUNT_ && text[p->type_pos] == p->placeholder);
    else
      require(uk__dtype_info(p->dtype) != NULL && p->placeholder == 0);
    char type[2] = {p->placeholder, 0};
    uk__sb_addf(&sb, "%s%s%s %s", j ? ", " : "", p->is_raw ? "raw " : "",
                p->is_placeholder ? type : uk_dtype_name(p->dtype), p->name);
  }
  char *canon = uk__sb_detach(&sb);
  if (!canon) return; /* out of memory: nothing to compare */
  uk_paramlist again = {0, NULL};
  require(uk__params_parse(canon, what, &again) == UK_OK && same_lists(l, &again));
  uk__params_free(&again);
  free(canon);
}

/* Parses `text`; the list on success (caller frees), checked either way. */
static uk_status parse(const char *text, const char *what, uk_paramlist *l) {
  uk_paramlist poison = {-3, (uk_param *)&poison};
  *l = poison;
  uk_status st = uk__params_parse(text, what, l);
  if (st == UK_OK) {
    require(uk_last_error()[0] == '\0');
    check_list(text, l, what);
  } else {
    require(uk_last_error()[0] != '\0' && l->count == -3 && l->items == (uk_param *)&poison);
    l->count = 0;
    l->items = NULL;
  }
  return st;
}

/* Arguments from the bytes of the input, cycling through them. */
typedef struct {
  const uint8_t *data;
  size_t size, at;
} byte_source;

static unsigned next(byte_source *b) {
  if (!b->size) return 0;
  unsigned v = b->data[b->at % b->size] ^ (unsigned)(b->at * 131u);
  b->at++;
  return v & 0xff;
}

static void fuzz_binding(const uk_paramlist *in, const uk_paramlist *out, byte_source *bytes) {
  enum { MAXP = 16 };
  if (in->count > MAXP || out->count > MAXP) return;
  uk_array arrays[MAXP], outs[MAXP];
  uk_arg args[MAXP];
  memset(arrays, 0, sizeof arrays);
  memset(outs, 0, sizeof outs);
  memset(args, 0, sizeof args);
  for (int j = 0; j < in->count; j++) {
    unsigned sel = next(bytes) % 7, t = next(bytes) % UK_DTYPE_COUNT_;
    args[j].kind = sel < 3 ? UK_ARG_ARRAY : sel == 3 ? UK_ARG_INT : sel == 4 ? UK_ARG_FLOAT
                                             : sel == 5 ? UK_ARG_TYPED : UK_ARG_TEXTURE;
    if (args[j].kind == UK_ARG_ARRAY) {
      arrays[j].data = 0x1000;
      arrays[j].dtype = (uk_dtype)t;
      arrays[j].ndim = (int)(next(bytes) % 3);
      args[j].v.array = &arrays[j];
    } else if (args[j].kind == UK_ARG_INT) {
      args[j].v.i = (int64_t)(next(bytes) << 24 | next(bytes) << 8) - 30000;
    } else if (args[j].kind == UK_ARG_FLOAT) {
      args[j].v.f = (double)next(bytes) * 1e3 - 9.5e4;
    } else if (args[j].kind == UK_ARG_TYPED) {
      args[j].dtype = (uk_dtype)t;
      for (int b = 0; b < 16; b++) args[j].v.bytes[b] = (unsigned char)next(bytes);
    } else {
      args[j].v.texture = 0x77;
    }
  }
  int given = next(bytes) & 1;
  for (int j = 0; j < out->count; j++) {
    outs[j].data = given ? 0x2000 : 0;
    outs[j].dtype = (uk_dtype)(next(bytes) % UK_DTYPE_COUNT_);
  }
  uk_binding b;
  uk_status st = uk__bind("fuzz", in, out, args, in->count, outs, out->count, &b);
  if (st != UK_OK) {
    require(uk_last_error()[0] != '\0');
    return;
  }
  for (int j = 0; j < in->count + out->count; j++) {
    const uk_param *p = j < in->count ? &in->items[j] : &out->items[j - in->count];
    require(uk__dtype_info((uk_dtype)b.dtype[j]) != NULL);
    if (j < in->count && b.is_texture[j]) continue;
    if (!p->is_placeholder) require(b.dtype[j] == p->dtype);
    const uk_array *a = j < in->count ? (args[j].kind == UK_ARG_ARRAY ? &arrays[j] : NULL) : given ? &outs[j - in->count] : NULL;
    if (a) require(a->dtype == b.dtype[j]);
    if (j < in->count && !a) {
      unsigned char value[16];
      uk_status cs = uk__scalar_convert(&args[j], (uk_dtype)b.dtype[j], p->name, value);
      require(cs == UK_OK || uk_last_error()[0] != '\0');
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0'; /* an embedded NUL just ends the text early */

  uk_paramlist in = {0, NULL}, out = {0, NULL};
  parse(text, "in_params", &in);
  uk__params_free(&in);
  parse(text, "out_params", &out);
  uk__params_free(&out);

  /* in_params | out_params | name */
  char *bar1 = strchr(text, '|');
  char *bar2 = bar1 ? strchr(bar1 + 1, '|') : NULL;
  if (bar1) *bar1 = '\0';
  if (bar2) *bar2 = '\0';
  const char *in_text = text, *out_text = bar1 ? bar1 + 1 : "", *name = bar2 ? bar2 + 1 : "k";
  if (parse(in_text, "in_params", &in) == UK_OK && parse(out_text, "out_params", &out) == UK_OK) {
    uk_status st = uk__params_check_kernel(in_text, &in, out_text, &out, name);
    require((st == UK_OK) == (uk_last_error()[0] == '\0'));
    byte_source bytes = {data, size, 0};
    fuzz_binding(&in, &out, &bytes);
  }
  uk__params_free(&in);
  uk__params_free(&out);
  free(text);
  return 0;
}
