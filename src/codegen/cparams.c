/* C kernel parameter lists (see cparams.h for the grammar).
 *
 * One pass, piece by piece: next_token() reads one token from the shared
 * lexer (codegen/lexer.h, plain mode; words carry their `a::b`
 * qualification and `<...>` template arguments, normalised), and
 * parse_param() runs a small state machine over the tokens of one
 * parameter up to a top-level ','. Errors come out in text order, with a caret. */
#include "codegen/cparams.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "codegen/lexer.h"

/* A syntax error at text[pos] (`text` must be in scope). */
#define SYNTAX_ERROR(pos, hint, ...) \
  uk__error_at(UK_ERR_SYNTAX, "signature", text, pos, hint, __VA_ARGS__)

static const struct {
  size_t size, align;
  const char *name;
} kinds[UK_CT_COUNT_] = {
    [UK_CT_BOOL] = {1, 1, "bool"},
    [UK_CT_I8] = {1, 1, "signed char"},
    [UK_CT_U8] = {1, 1, "unsigned char"},
    [UK_CT_I16] = {2, 2, "short"},
    [UK_CT_U16] = {2, 2, "unsigned short"},
    [UK_CT_I32] = {4, 4, "int"},
    [UK_CT_U32] = {4, 4, "unsigned int"},
    [UK_CT_I64] = {8, 8, "long long"},
    [UK_CT_U64] = {8, 8, "unsigned long long"},
    [UK_CT_F16] = {2, 2, "half"},
    [UK_CT_BF16] = {2, 2, "bfloat16"},
    [UK_CT_F32] = {4, 4, "float"},
    [UK_CT_F64] = {8, 8, "double"},
    [UK_CT_C64] = {8, 8, "complex<float>"},     /* alignas(8), like float2 */
    [UK_CT_C128] = {16, 16, "complex<double>"}, /* alignas(16), like double2 */
    [UK_CT_PTR] = {8, 8, "pointer"},
};

size_t uk__ctype_size(uk_ctype t) { return (unsigned)t < UK_CT_COUNT_ ? kinds[t].size : 0; }
size_t uk__ctype_align(uk_ctype t) { return (unsigned)t < UK_CT_COUNT_ ? kinds[t].align : 0; }
const char *uk__ctype_name(uk_ctype t) {
  return (unsigned)t < UK_CT_COUNT_ ? kinds[t].name : "invalid";
}

static const char supported_hint[] =
    "supported value types: bool, char, [un]signed char/short/int/long/long long, "
    "int8_t..int64_t, uint8_t..uint64_t, size_t, ptrdiff_t, float, double, __half/half, "
    "__nv_bfloat16/nv_bfloat16, uk_complex64/complex<float>/cuComplex, "
    "uk_complex128/complex<double>/cuDoubleComplex, CUtexObject, cudaTextureObject_t, "
    "cudaSurfaceObject_t; and any pointer (T*)";

/* Type names that are single words (after normalisation); a leading "::" is
 * ignored when looking up. */
static const struct {
  const char *name;
  uk_ctype type;
} named_types[] = {
    {"int8_t", UK_CT_I8},
    {"int16_t", UK_CT_I16},
    {"int32_t", UK_CT_I32},
    {"int64_t", UK_CT_I64},
    {"uint8_t", UK_CT_U8},
    {"uint16_t", UK_CT_U16},
    {"uint32_t", UK_CT_U32},
    {"uint64_t", UK_CT_U64},
    {"size_t", UK_CT_U64},
    {"ptrdiff_t", UK_CT_I64},
    {"__half", UK_CT_F16},
    {"half", UK_CT_F16},
    {"ukern::half", UK_CT_F16},
    {"__nv_bfloat16", UK_CT_BF16},
    {"nv_bfloat16", UK_CT_BF16},
    {"ukern::bfloat16", UK_CT_BF16},
    {"uk_complex64", UK_CT_C64},
    {"complex<float>", UK_CT_C64},
    {"ukern::complex<float>", UK_CT_C64},
    {"thrust::complex<float>", UK_CT_C64},
    {"cuComplex", UK_CT_C64},
    {"cuFloatComplex", UK_CT_C64},
    {"uk_complex128", UK_CT_C128},
    {"complex<double>", UK_CT_C128},
    {"ukern::complex<double>", UK_CT_C128},
    {"thrust::complex<double>", UK_CT_C128},
    {"cuDoubleComplex", UK_CT_C128},
    {"CUtexObject", UK_CT_U64},
    {"CUsurfObject", UK_CT_U64},
    {"cudaTextureObject_t", UK_CT_U64},
    {"cudaSurfaceObject_t", UK_CT_U64},
};

/* Specifier keywords, counted in any order (see combine). */
enum { K_SIGNED, K_UNSIGNED, K_CHAR, K_SHORT, K_INT, K_LONG, K_BOOL, K_FLOAT, K_DOUBLE, K_VOID,
       K_COUNT };
static const char *const keywords[K_COUNT] = {"signed", "unsigned", "char",  "short",  "int",
                                              "long",   "bool",     "float", "double", "void"};
static const char *const qualifiers[] = {"const", "volatile", "__restrict__", "restrict",
                                         "__restrict"};
static const char *const tags[] = {"struct", "class", "union", "enum"};

static int find_word(const char *w, const char *const *list, int n) {
  for (int k = 0; k < n; k++)
    if (strcmp(w, list[k]) == 0) return k;
  return -1;
}
#define FIND(w, list) find_word(w, list, (int)(sizeof list / sizeof list[0]))

/* ---- tokens (on the shared plain-mode lexer, codegen/lexer.h) ------------- */

typedef enum { TK_END, TK_COMMA, TK_WORD, TK_STAR, TK_AMP, TK_ARRAY } tk_kind;

typedef struct token {
  tk_kind kind;
  size_t pos; /* where it starts */
  int simple; /* TK_WORD: a plain identifier (no '::', no '<...>') */
} token;

static int is_id_char(char c) { return uk__lex_is_ident(&c, 1) || (c >= '0' && c <= '9'); }

static uk_status unexpected_char(const char *text, size_t p) {
  unsigned char c = (unsigned char)text[p];
  if (c >= 0x20 && c < 0x7f) return SYNTAX_ERROR(p, NULL, "unexpected character '%c'", c);
  return SYNTAX_ERROR(p, NULL, "unexpected byte 0x%02x", c);
}

/* Template arguments after the '<' at text[lt] up to its matching '>':
 * white space between tokens becomes one space between two identifier
 * characters and vanishes elsewhere; a ',' is followed by one space. */
static uk_status lex_template(const char *text, uk_lexer *lx, size_t lt, uk_strbuf *word) {
  int depth = 1;
  uk__sb_addc(word, '<');
  while (depth > 0) {
    uk_token k = uk__lex_next(lx);
    if (k.kind == UK_TOK_EOF) return SYNTAX_ERROR(lt, NULL, "unterminated '<' (missing '>')");
    char last = word->len ? word->buf[word->len - 1] : '\0';
    if (last == ',' || (k.space_before && is_id_char(last) && is_id_char(text[k.pos])))
      uk__sb_addc(word, ' ');
    if (uk__lex_is(lx, &k, "<")) depth++;
    if (uk__lex_is(lx, &k, ">")) depth--;
    uk__sb_addn(word, text + k.pos, k.len);
  }
  return UK_OK;
}

/* The next token. A word ([::]a::b<...>, spacing normalised) goes to `word`;
 * a ',' or the end is consumed too. */
static uk_status next_token(const char *text, uk_lexer *lx, token *t, uk_strbuf *word) {
  uk_token k = uk__lex_next(lx);
  t->pos = k.pos;
  t->simple = 0;
  if (k.kind == UK_TOK_EOF) {
    t->kind = TK_END;
    return UK_OK;
  }
  static const struct {
    const char *p;
    tk_kind kind;
  } puncts[] = {{",", TK_COMMA}, {"*", TK_STAR}, {"&", TK_AMP}, {"[", TK_ARRAY}};
  for (size_t j = 0; j < sizeof puncts / sizeof puncts[0]; j++)
    if (uk__lex_is(lx, &k, puncts[j].p)) {
      t->kind = puncts[j].kind;
      return UK_OK;
    }
  int rooted = uk__lex_is(lx, &k, "::");
  if (k.kind != UK_TOK_IDENT && !rooted) return unexpected_char(text, k.pos);

  uk__sb_reset(word);
  t->kind = TK_WORD;
  t->simple = !rooted;
  if (rooted) {
    uk__sb_add(word, "::");
    k = uk__lex_next(lx);
  }
  for (;;) {
    if (k.kind != UK_TOK_IDENT) return SYNTAX_ERROR(k.pos, NULL, "expected a name after '::'");
    uk__sb_addn(word, text + k.pos, k.len);
    uk_token n = uk__lex_peek(lx);
    if (!uk__lex_is(lx, &n, "::")) break;
    uk__lex_next(lx);
    uk__sb_add(word, "::");
    t->simple = 0;
    k = uk__lex_next(lx);
  }
  uk_token n = uk__lex_peek(lx);
  if (uk__lex_is(lx, &n, "<")) {
    uk__lex_next(lx);
    t->simple = 0;
    uk_status s = lex_template(text, lx, n.pos, word);
    if (s != UK_OK) return s;
  }
  return word->failed ? uk__errorf(UK_ERR_NOMEM, "out of memory") : UK_OK;
}

/* ---- parser ------------------------------------------------------------------ */

enum { TY_INVALID = -1, TY_VOID = -2, TY_LONG_DOUBLE = -3, TY_UNKNOWN = -4 };

/* The kind named by a multiset of specifier keywords, in any order. */
static int combine(const int c[K_COUNT]) {
  int sign = c[K_SIGNED] + c[K_UNSIGNED], uns = c[K_UNSIGNED];
  int other = 0;
  for (int k = K_CHAR; k < K_COUNT; k++) other += c[k];
  if (sign > 1) return TY_INVALID;
  if (other == 1 && !sign) {
    if (c[K_BOOL]) return UK_CT_BOOL;
    if (c[K_FLOAT]) return UK_CT_F32;
    if (c[K_DOUBLE]) return UK_CT_F64;
    if (c[K_VOID]) return TY_VOID;
  }
  if (c[K_DOUBLE] == 1 && c[K_LONG] == 1 && other == 2 && !sign) return TY_LONG_DOUBLE;
  if (c[K_CHAR] == 1 && other == 1) return uns ? UK_CT_U8 : UK_CT_I8; /* char is signed on x86-64 */
  if (c[K_INT] > 1) return TY_INVALID;
  if (c[K_SHORT] == 1 && other == 1 + c[K_INT]) return uns ? UK_CT_U16 : UK_CT_I16;
  if (c[K_LONG] >= 1 && c[K_LONG] <= 2 && other == c[K_LONG] + c[K_INT])
    return uns ? UK_CT_U64 : UK_CT_I64; /* long is 64-bit (LP64) */
  if (other == c[K_INT] && (c[K_INT] || sign)) return uns ? UK_CT_U32 : UK_CT_I32;
  return TY_INVALID;
}

static int lookup_named(const char *w) {
  if (w[0] == ':') w += 2;
  for (size_t k = 0; k < sizeof named_types / sizeof named_types[0]; k++)
    if (strcmp(w, named_types[k].name) == 0) return (int)named_types[k].type;
  return TY_UNKNOWN;
}

/* Appends a word to a spelling: one space before it unless it is the first. */
static void add_word(uk_strbuf *sb, const char *w) {
  if (sb->len) uk__sb_addc(sb, ' ');
  uk__sb_add(sb, w);
}

typedef struct param_state {
  int counts[K_COUNT];
  int nspec;    /* specifier keywords seen */
  int named;    /* a type name (Foo, size_t, struct S) seen */
  int tagged;   /* ... introduced by struct/class/union/enum */
  int want_tag; /* the last word was struct/class/union/enum */
  int stars;
  int quals; /* qualifiers seen */
  size_t first_pos, type_pos;
  char *name;
  uk_strbuf base;     /* the type words only: "unsigned long", "struct S" */
  uk_strbuf spelling; /* the whole type, normalised */
  uk_strbuf word;     /* the current token's text */
  uk_strbuf hint;
} param_state;

/* One word of the parameter being parsed (number done->count + 1); may set
 * ps->name, checked against the names in `done`. */
static uk_status take_word(const char *text, const token *t, param_state *ps,
                           const uk_cparams *done) {
  const char *w = uk__sb_str(&ps->word);
  int kw = t->simple ? FIND(w, keywords) : -1;
  int tag = t->simple ? FIND(w, tags) : -1;
  if (ps->want_tag) {
    if (!t->simple || kw >= 0 || tag >= 0 || FIND(w, qualifiers) >= 0)
      return SYNTAX_ERROR(t->pos, NULL, "expected a name after '%s'", uk__sb_str(&ps->base));
    add_word(&ps->base, w);
    add_word(&ps->spelling, w);
    ps->want_tag = 0;
    return UK_OK;
  }
  if (t->simple && FIND(w, qualifiers) >= 0) {
    if (ps->name)
      return SYNTAX_ERROR(t->pos, NULL, "unexpected '%s' after parameter name '%s'", w, ps->name);
    ps->quals++;
    add_word(&ps->spelling, w);
    return UK_OK;
  }
  if (ps->name)
    return SYNTAX_ERROR(t->pos, NULL, "unexpected '%s' after parameter name '%s'", w, ps->name);
  int have_type = ps->nspec || ps->named;
  if (ps->stars || (have_type && kw < 0 && tag < 0)) { /* the parameter's name */
    if (!t->simple || kw >= 0 || tag >= 0)
      return SYNTAX_ERROR(t->pos, NULL, "expected a parameter name, got '%s'", w);
    for (int k = 0; k < done->count; k++)
      if (strcmp(done->params[k].name, w) == 0)
        return SYNTAX_ERROR(t->pos, NULL, "duplicate parameter name '%s' (parameters %d and %d)", w,
                            k + 1, done->count + 1);
    ps->name = strdup(w);
    return ps->name ? UK_OK : uk__errorf(UK_ERR_NOMEM, "out of memory");
  }
  if (ps->named || (tag >= 0 && ps->nspec)) { /* "size_t int", "unsigned struct S" */
    add_word(&ps->base, w);
    return SYNTAX_ERROR(ps->type_pos, supported_hint, "invalid type '%s'", uk__sb_str(&ps->base));
  }
  if (!have_type) ps->type_pos = t->pos;
  if (kw >= 0) {
    ps->counts[kw]++;
    ps->nspec++;
  } else {
    ps->named = 1;
    ps->tagged = ps->want_tag = tag >= 0;
  }
  add_word(&ps->base, w);
  add_word(&ps->spelling, w);
  return UK_OK;
}

/* The parameter's kind, or a syntax error for a type that can't be passed. */
static uk_status resolve(const char *text, param_state *ps, int *kind) {
  const char *base = uk__sb_str(&ps->base);
  int ty = ps->named ? (ps->tagged ? TY_UNKNOWN : lookup_named(base)) : combine(ps->counts);
  if (ty == TY_INVALID)
    return SYNTAX_ERROR(ps->type_pos, supported_hint, "invalid type '%s'", base);
  if (ps->stars) {
    *kind = UK_CT_PTR;
    return UK_OK;
  }
  const char *name = ps->name ? ps->name : "name";
  switch (ty) {
  case TY_VOID:
    return SYNTAX_ERROR(ps->type_pos,
                        "'void' alone means no parameters; 'void*' is an untyped pointer",
                        "a parameter cannot have type '%s'", base);
  case TY_LONG_DOUBLE:
    return SYNTAX_ERROR(ps->type_pos, supported_hint, "'%s' is not supported as a kernel parameter",
                        base);
  case TY_UNKNOWN:
    uk__sb_addf(&ps->hint,
                "%s\na struct passed by value has no layout known here: "
                "pass a pointer to it instead ('%s* %s')",
                supported_hint, base, name);
    return SYNTAX_ERROR(ps->type_pos, uk__sb_str(&ps->hint), "unknown type '%s'", base);
  default: *kind = ty; return UK_OK;
  }
}

/* One parameter, from the lexer's position through the next top-level ','
 * or the end (*end: that token). *empty: no tokens (or the lone "void" of an
 * empty list). */
static uk_status parse_param(const char *text, uk_lexer *lx, const uk_cparams *done, uk_cparam *out,
                             int *empty, token *end) {
  param_state ps;
  memset(&ps, 0, sizeof ps);
  ps.first_pos = SIZE_MAX;
  uk__sb_init(&ps.base);
  uk__sb_init(&ps.spelling);
  uk__sb_init(&ps.word);
  uk__sb_init(&ps.hint);
  uk_status s = UK_OK;
  token t;
  const char *ty = "T", *nm = "name";
  *empty = 0;
  for (;;) {
    s = next_token(text, lx, &t, &ps.word);
    if (s != UK_OK) goto out;
    if (t.kind == TK_END || t.kind == TK_COMMA) break;
    if (ps.first_pos == SIZE_MAX) ps.first_pos = t.pos;
    if (ps.nspec || ps.named) ty = uk__sb_str(&ps.base);
    if (ps.name) nm = ps.name;
    switch (t.kind) {
    case TK_WORD: s = take_word(text, &t, &ps, done); break;
    case TK_STAR:
      if (ps.want_tag)
        s = SYNTAX_ERROR(t.pos, NULL, "expected a name after '%s'", uk__sb_str(&ps.base));
      else if (!ps.nspec && !ps.named)
        s = SYNTAX_ERROR(t.pos, supported_hint, "parameter %d has no type", done->count + 1);
      else if (ps.name)
        s = SYNTAX_ERROR(t.pos, NULL, "unexpected '*' after parameter name '%s'", ps.name);
      else {
        ps.stars++;
        uk__sb_addc(&ps.spelling, '*');
      }
      break;
    case TK_AMP: {
      /* The name follows the '&' (or '&&'): peek at it for the hint. */
      uk_lexer ahead = *lx;
      uk_token amp = uk__lex_peek(&ahead);
      if (uk__lex_is(&ahead, &amp, "&") && !amp.space_before) uk__lex_next(&ahead); /* "&&" */
      token nt;
      if (next_token(text, &ahead, &nt, &ps.word) == UK_OK && nt.kind == TK_WORD && nt.simple &&
          FIND(uk__sb_str(&ps.word), keywords) < 0 && FIND(uk__sb_str(&ps.word), qualifiers) < 0)
        nm = uk__sb_str(&ps.word);
      uk__sb_addf(&ps.hint,
                  "a kernel receives copies of its arguments: pass the value ('%s %s') "
                  "or a device pointer ('%s* %s')",
                  ty, nm, ty, nm);
      s = SYNTAX_ERROR(t.pos, uk__sb_str(&ps.hint),
                       "reference parameters are not allowed in a kernel");
      break;
    }
    case TK_ARRAY:
      uk__sb_addf(&ps.hint,
                  "C silently turns an array parameter into a pointer: write the pointer "
                  "('%s* %s') to pass a device array",
                  ty, nm);
      s = SYNTAX_ERROR(t.pos, uk__sb_str(&ps.hint), "array parameters are not allowed in a kernel");
      break;
    default: break;
    }
    if (s != UK_OK) goto out;
  }
  *end = t;
  if (ps.first_pos == SIZE_MAX) {
    *empty = 1;
    goto out;
  }
  if (ps.want_tag) {
    s = SYNTAX_ERROR(t.pos, NULL, "expected a name after '%s'", uk__sb_str(&ps.base));
    goto out;
  }
  if (!ps.nspec && !ps.named) {
    s = SYNTAX_ERROR(ps.first_pos, supported_hint, "parameter %d has no type", done->count + 1);
    goto out;
  }
  /* "void" alone: an empty list. */
  if (done->count == 0 && t.kind == TK_END && ps.counts[K_VOID] == 1 && ps.nspec == 1 &&
      !ps.quals && !ps.stars && !ps.name) {
    *empty = 1;
    goto out;
  }
  int kind = 0;
  s = resolve(text, &ps, &kind);
  if (s != UK_OK) goto out;
  if (!ps.name) {
    uk__sb_reset(&ps.word);
    uk__sb_addf(&ps.word, "parameter %d", done->count + 1);
    ps.name = uk__sb_detach(&ps.word);
  }
  char *spelling = uk__sb_detach(&ps.spelling);
  if (!ps.name || !spelling) {
    free(spelling);
    s = uk__errorf(UK_ERR_NOMEM, "out of memory");
    goto out;
  }
  out->type = (uk_ctype)kind;
  out->name = ps.name;
  out->spelling = spelling;
  out->pos = ps.first_pos;
  ps.name = NULL;
out:
  free(ps.name);
  uk__sb_release(&ps.base);
  uk__sb_release(&ps.spelling);
  uk__sb_release(&ps.word);
  uk__sb_release(&ps.hint);
  return s;
}

uk_status uk__cparams_parse(const char *text, uk_cparams *out) {
  if (!text || !out) return uk__errorf(UK_ERR_INVALID, "uk__cparams_parse: NULL argument");
  uk_cparams ps = {0, NULL};
  uk_status s = UK_OK;
  int cap = 0;
  size_t last_comma = 0;
  int commas = 0;
  uk_lexer lx;
  uk__lex_init(&lx, text);
  for (;;) {
    uk_cparam p;
    token end = {TK_END, 0, 0};
    int empty = 0;
    s = parse_param(text, &lx, &ps, &p, &empty, &end);
    if (s != UK_OK) goto out;
    if (empty) {
      if (end.kind == TK_COMMA) {
        s = SYNTAX_ERROR(end.pos, NULL, "expected a parameter before ','");
        goto out;
      }
      if (commas) {
        s = SYNTAX_ERROR(last_comma, NULL, "expected a parameter after ','");
        goto out;
      }
      break; /* "", "void" */
    }
    if (ps.count == cap) {
      int ncap = cap ? 2 * cap : 4;
      uk_cparam *np = realloc(ps.params, (size_t)ncap * sizeof *np);
      if (!np) {
        free(p.name);
        free(p.spelling);
        s = uk__errorf(UK_ERR_NOMEM, "out of memory");
        goto out;
      }
      ps.params = np;
      cap = ncap;
    }
    ps.params[ps.count++] = p;
    if (end.kind != TK_COMMA) break;
    last_comma = end.pos;
    commas++;
  }
  *out = ps;
  ps.count = 0;
  ps.params = NULL;
out:
  uk__cparams_free(&ps);
  return s;
}

void uk__cparams_free(uk_cparams *p) {
  if (!p) return;
  for (int k = 0; k < p->count; k++) {
    free(p->params[k].name);
    free(p->params[k].spelling);
  }
  free(p->params);
  p->count = 0;
  p->params = NULL;
}
