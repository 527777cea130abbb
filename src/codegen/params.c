/* CuPy-style parameter lists parsed (params.h). */
#include "codegen/params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "codegen/dtype.h"
#include "codegen/lexer.h"

/* A white-space separated word: tokens glued together without white space
 * ("x-y" is one word of three tokens, so it is reported as one bad name). */
typedef struct word {
  size_t pos, len;
  int ident;  /* the word is exactly one identifier token */
  size_t bad; /* when !ident: offset of its first token that is not an identifier */
} word;

typedef struct parser {
  const char *text, *what;
  uk_lexer lx;
  uk_token tok; /* current token, not yet consumed */
  word *words;  /* the words of the current piece (between commas) */
  size_t nwords, cap;
} parser;

#define SPAN(p, w) (int)(w)->len, (p)->text + (w)->pos

static const char *const HINT_TYPE =
    "hint: a type is a one-letter placeholder (T) or a dtype name (float32, int64, complex64, ...)";
static const char *const HINT_NAME =
    "hint: a name is a C identifier: letters, digits and '_', not starting with a digit";
static const char *const HINT_POINTER =
    "hint: for an array the kernel indexes itself, write 'raw T name' and use name[i]";

/* ---- names ------------------------------------------------------------------ */

/* NVRTC compiles C++: every C++ keyword (C's included) is unusable as a name. */
static const char *const cxx_keywords[] = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
    "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "co_await", "co_return",
    "co_yield", "compl", "concept", "const", "const_cast", "consteval", "constexpr", "constinit",
    "continue", "decltype", "default", "delete", "do", "double", "dynamic_cast", "else", "enum",
    "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if", "inline",
    "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr",
    "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
    "requires", "restrict", "return", "short", "signed", "sizeof", "static", "static_assert",
    "static_cast", "struct", "switch", "template", "this", "thread_local", "throw", "true", "try",
    "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
    "wchar_t", "while", "xor", "xor_eq",
};

/* Names that would shadow something the generated kernel needs. */
static const struct {
  const char *name, *why;
} shadowing[] = {
    {"threadIdx", "a CUDA built-in variable"}, {"blockIdx", "a CUDA built-in variable"},
    {"blockDim", "a CUDA built-in variable"},  {"gridDim", "a CUDA built-in variable"},
    {"warpSize", "a CUDA built-in variable"},  {"ukern", "the namespace of ukern's device code"},
};

static int span_is(const char *s, size_t len, const char *lit) {
  return strlen(lit) == len && memcmp(s, lit, len) == 0;
}

/* Why an identifier can't name a parameter or a kernel; NULL when it can. */
static const char *reserved_why(const char *s, size_t len) {
  for (size_t k = 0; k < sizeof cxx_keywords / sizeof cxx_keywords[0]; k++)
    if (span_is(s, len, cxx_keywords[k])) return "a C++ keyword";
  for (size_t k = 0; k < sizeof shadowing / sizeof shadowing[0]; k++)
    if (span_is(s, len, shadowing[k].name)) return shadowing[k].why;
  return NULL;
}

/* Offset of the first byte that keeps s[0..len) from being an identifier. */
static size_t first_bad(const char *s, size_t len) {
  if (len == 0 || !uk__lex_is_ident(s, 1)) return 0;
  size_t k = 1;
  while (k < len && ((s[k] >= '0' && s[k] <= '9') || uk__lex_is_ident(s + k, 1))) k++;
  return k;
}

/* "in_params:1:3", for pointing at a first occurrence from another error. */
static void where(char *buf, size_t n, const char *what, const char *text, size_t pos) {
  size_t line = 1, start = 0;
  for (size_t k = 0; k < pos && text[k]; k++)
    if (text[k] == '\n') {
      line++;
      start = k + 1;
    }
  snprintf(buf, n, "%s:%zu:%zu", what, line, pos - start + 1);
}

/* ---- C type spellings ------------------------------------------------------------ */

static const char *const c_words[] = {"signed", "unsigned", "char", "short",
                                      "int",    "long",     "float", "double"};

static int is_c_word(const char *s, size_t len) {
  for (size_t k = 0; k < sizeof c_words / sizeof c_words[0]; k++)
    if (span_is(s, len, c_words[k])) return 1;
  return 0;
}

/* One-word C/CUDA spellings that are not NumPy names, with the name to write. */
static const struct {
  const char *c, *numpy;
} c_spellings[] = {
    {"size_t", "uint64"},     {"ssize_t", "int64"},       {"ptrdiff_t", "int64"},
    {"intptr_t", "int64"},    {"uintptr_t", "uint64"},    {"int8_t", "int8"},
    {"int16_t", "int16"},     {"int32_t", "int32"},       {"int64_t", "int64"},
    {"uint8_t", "uint8"},     {"uint16_t", "uint16"},     {"uint32_t", "uint32"},
    {"uint64_t", "uint64"},   {"_Bool", "bool"},          {"__half", "float16"},
    {"__nv_bfloat16", "bfloat16"}, {"nv_bfloat16", "bfloat16"}, {"cuComplex", "complex64"},
    {"cuFloatComplex", "complex64"}, {"cuDoubleComplex", "complex128"},
};

static const char *c_spelling(const char *s, size_t len) {
  for (size_t k = 0; k < sizeof c_spellings / sizeof c_spellings[0]; k++)
    if (span_is(s, len, c_spellings[k].c)) return c_spellings[k].numpy;
  return NULL;
}

static int word_is(const parser *p, const word *w, const char *lit) {
  return w->ident && span_is(p->text + w->pos, w->len, lit);
}

static int is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* Could the word be meant as a type? Decides between "unknown keyword" and
 * "missing comma" readings of a piece with too many words. */
static int type_like(const parser *p, const word *w) {
  const char *s = p->text + w->pos;
  uk_dtype t;
  if (!w->ident) return 0;
  if (w->len == 1) return is_letter(s[0]);
  return uk__dtype_lookup(s, w->len, &t) || is_c_word(s, w->len) || c_spelling(s, w->len);
}

/* A C type of n words ("unsigned int", "long long", "char"): reports the
 * NumPy name to write instead, or why there is none. */
static uk_status c_type_error(const parser *p, const word *w, size_t n) {
  char spelled[96] = "";
  size_t used = 0;
  int sign = 0, signs = 0, chars = 0, shorts = 0, ints = 0, longs = 0, floats = 0, doubles = 0;
  for (size_t k = 0; k < n; k++) {
    const char *s = p->text + w[k].pos;
    size_t len = w[k].len;
    if (used < sizeof spelled)
      used += (size_t)snprintf(spelled + used, sizeof spelled - used, "%s%.*s", k ? " " : "",
                               (int)len, s);
    if (span_is(s, len, "signed")) sign = 1, signs++;
    else if (span_is(s, len, "unsigned")) sign = 2, signs++;
    else if (span_is(s, len, "char")) chars++;
    else if (span_is(s, len, "short")) shorts++;
    else if (span_is(s, len, "int")) ints++;
    else if (span_is(s, len, "long")) longs++;
    else if (span_is(s, len, "float")) floats++;
    else doubles++;
  }
  if (doubles == 1 && longs == 1 && n == 2)
    return uk__error_at(UK_ERR_TYPE, p->what, p->text, w[0].pos, "hint: use float64",
                        "'long double' is not supported");
  int valid = !floats && !doubles && signs <= 1 && chars <= 1 && shorts <= 1 && ints <= 1 &&
              longs <= 2 && chars + shorts + (longs > 0) <= 1 && !(chars && ints);
  if (!valid)
    return uk__error_at(UK_ERR_TYPE, p->what, p->text, w[0].pos, HINT_TYPE,
                        "'%s' is not a valid type", spelled);
  int bits = chars ? 8 : shorts ? 16 : longs ? 64 : 32;
  char hint[32];
  snprintf(hint, sizeof hint, "hint: write '%sint%d'", sign == 2 ? "u" : "", bits);
  return uk__error_at(UK_ERR_TYPE, p->what, p->text, w[0].pos, hint,
                      "'%s' is a C type, not a dtype name", spelled);
}

/* ---- the parser --------------------------------------------------------------- */

static int at_comma(const parser *p) { return uk__lex_is(&p->lx, &p->tok, ","); }

/* piece := {word}        -- everything up to the next ',' or the end
 * word  := token {token} -- tokens with no white space between them */
static uk_status read_piece(parser *p) {
  p->nwords = 0;
  while (p->tok.kind != UK_TOK_EOF && !at_comma(p)) {
    const uk_token *t = &p->tok;
    if (p->nwords > 0 && !t->space_before) {
      word *w = &p->words[p->nwords - 1];
      if (w->ident) w->bad = t->pos; /* glued: an identifier followed by anything else */
      w->ident = 0;
      w->len = t->pos + t->len - w->pos;
    } else {
      if (p->nwords == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 8;
        word *grown = realloc(p->words, cap * sizeof *grown);
        if (!grown) return uk__errorf(UK_ERR_NOMEM, "%s: out of memory", p->what);
        p->words = grown;
        p->cap = cap;
      }
      word *w = &p->words[p->nwords++];
      w->pos = t->pos;
      w->len = t->len;
      w->ident = t->kind == UK_TOK_IDENT;
      w->bad = t->pos;
    }
    p->tok = uk__lex_next(&p->lx);
  }
  return UK_OK;
}

static const char *bad_word_hint(const parser *p, const word *w, const char *fallback) {
  for (size_t k = 0; k < w->len; k++) {
    char c = p->text[w->pos + k];
    if (c == '*' || c == '&' || c == '[') return HINT_POINTER;
  }
  return fallback;
}

/* TYPE := LETTER   -- a placeholder, bound to an array's dtype at call time
 *       | DTYPE    -- a NumPy dtype name or alias (uk__dtype_lookup) */
static uk_status parse_type(const parser *p, const word *w, uk_param *prm) {
  const char *s = p->text + w->pos;
  prm->type_pos = w->pos;
  if (!w->ident || (w->len == 1 && !is_letter(s[0]))) {
    if (w->len == 1)
      return uk__error_at(UK_ERR_SYNTAX, p->what, p->text, w->pos,
                          "hint: a placeholder type is one letter (T, U, ...)", "invalid type '%c'",
                          s[0]);
    return uk__error_at(UK_ERR_SYNTAX, p->what, p->text, w->bad, bad_word_hint(p, w, HINT_TYPE),
                        "invalid type '%.*s'", SPAN(p, w));
  }
  if (w->len == 1) {
    prm->is_placeholder = 1;
    prm->placeholder = s[0];
    prm->dtype = UK_DTYPE_COUNT_;
    return UK_OK;
  }
  if (uk__dtype_lookup(s, w->len, &prm->dtype)) return UK_OK;
  if (is_c_word(s, w->len)) return c_type_error(p, w, 1);
  const char *numpy = c_spelling(s, w->len);
  char hint[64];
  if (numpy) {
    snprintf(hint, sizeof hint, "hint: write '%s'", numpy);
    return uk__error_at(UK_ERR_TYPE, p->what, p->text, w->pos, hint,
                        "'%.*s' is a C type, not a dtype name", SPAN(p, w));
  }
  snprintf(hint, sizeof hint, "hint: did you mean '%s'?", uk__dtype_suggest(s, w->len));
  return uk__error_at(UK_ERR_TYPE, p->what, p->text, w->pos, hint, "unknown dtype '%.*s'",
                      SPAN(p, w));
}

/* NAME := a C identifier that is not 'i' (the loop index), not one of the
 *         names ukern generates (_uk*, _raw_*, _ind, _in_ind, _out_ind, _J),
 *         not 'raw' and not a C++ keyword or a CUDA built-in */
static uk_status parse_name(const parser *p, const word *w, uk_param *prm) {
  const char *s = p->text + w->pos;
  prm->name_pos = w->pos;
  if (!w->ident)
    return uk__error_at(UK_ERR_SYNTAX, p->what, p->text, w->bad, bad_word_hint(p, w, HINT_NAME),
                        "invalid parameter name '%.*s'", SPAN(p, w));
  if (span_is(s, w->len, "i"))
    return uk__error_at(UK_ERR_SYNTAX, p->what, p->text, w->pos, NULL,
                        "parameter name 'i' is reserved: it is the loop index");
  if ((w->len >= 3 && memcmp(s, "_uk", 3) == 0) || (w->len >= 5 && memcmp(s, "_raw_", 5) == 0) ||
      span_is(s, w->len, "_ind") || span_is(s, w->len, "_in_ind") || span_is(s, w->len, "_out_ind") ||
      span_is(s, w->len, "_J") || span_is(s, w->len, "_non_const"))
    return uk__error_at(UK_ERR_SYNTAX, p->what, p->text, w->pos, NULL,
                        "parameter name '%.*s' is reserved: ukern's generated code uses it", SPAN(p, w));
  if (span_is(s, w->len, "raw"))
    return uk__error_at(UK_ERR_SYNTAX, p->what, p->text, w->pos, NULL,
                        "parameter name 'raw' is reserved: it is a keyword");
  const char *why = reserved_why(s, w->len);
  if (why)
    return uk__error_at(UK_ERR_SYNTAX, p->what, p->text, w->pos, NULL,
                        "parameter name '%.*s' is %s", SPAN(p, w), why);
  return UK_OK;
}

/* Qualifiers people write out of C habit; with two more words after them
 * they read as keywords, not as a type followed by a missing comma. */
static int is_qualifier(const parser *p, const word *w) {
  static const char *const q[] = {"const", "volatile", "restrict", "__restrict__", "__restrict",
                                  "static", "register", "extern", "in", "out", "inout",
                                  "_non_const", "mutable", "constexpr"};
  for (size_t k = 0; k < sizeof q / sizeof q[0]; k++)
    if (word_is(p, w, q[k])) return 1;
  return 0;
}

/* param := ["raw"] TYPE NAME
 * over the words of one piece. Too many words are read as an unknown keyword
 * ("const T x") or as a missing comma ("float32 m float32 v"), too few as a
 * missing type or name; C types of several words get their NumPy name. */
static uk_status parse_param(const parser *p, uk_param *prm) {
  const word *w = p->words;
  size_t n = p->nwords, k = 0;
  uk_status st;
  prm->pos = w[0].pos;
  /* CuPy's keywords, in any order: raw, _non_const */
  for (; k < n && (word_is(p, &w[k], "raw") || word_is(p, &w[k], "_non_const")); k++) {
    int *flag = word_is(p, &w[k], "raw") ? &prm->is_raw : &prm->is_non_const;
    if (*flag)
      return uk__error_at(UK_ERR_SYNTAX, p->what, p->text, w[k].pos, NULL, "'%.*s' given twice", SPAN(p, &w[k]));
    *flag = 1;
  }
  size_t m = n - k;
  if (m == 0)
    return uk__error_at(UK_ERR_SYNTAX, p->what, p->text, w[k - 1].pos + w[k - 1].len,
                        "hint: write 'raw T name'", "expected a type after '%.*s'", SPAN(p, &w[k - 1]));
  size_t ctype_words = 0;
  while (k + ctype_words < n && w[k + ctype_words].ident &&
         is_c_word(p->text + w[k + ctype_words].pos, w[k + ctype_words].len))
    ctype_words++;
  if (ctype_words >= 2) return c_type_error(p, &w[k], ctype_words);
  if (m == 1) {
    if (type_like(p, &w[k]))
      return uk__error_at(UK_ERR_SYNTAX, p->what, p->text, w[k].pos + w[k].len, NULL,
                          "expected a parameter name after type '%.*s'", SPAN(p, &w[k]));
    return uk__error_at(UK_ERR_SYNTAX, p->what, p->text, w[k].pos,
                        "hint: write 'TYPE name', e.g. 'T x' or 'float32 x'",
                        "expected a type and a name, found only '%.*s'", SPAN(p, &w[k]));
  }
  if (m >= 3 && !type_like(p, &w[k]) && (m == 3 || is_qualifier(p, &w[k])))
    return uk__error_at(UK_ERR_SYNTAX, p->what, p->text, w[k].pos,
                        word_is(p, &w[k], "const") ? "hint: inputs are read-only already; drop 'const'"
                                                   : NULL,
                        "unknown keyword '%.*s' (only 'raw' and '_non_const' are allowed)", SPAN(p, &w[k]));
  if ((st = parse_type(p, &w[k], prm)) != UK_OK) return st;
  if (m >= 3 && word_is(p, &w[k + 1], "raw"))
    return uk__error_at(UK_ERR_SYNTAX, p->what, p->text, w[k + 1].pos, "hint: write 'raw T name'",
                        "'raw' must come before the type");
  if ((st = parse_name(p, &w[k + 1], prm)) != UK_OK) return st;
  if (m >= 3)
    return uk__error_at(UK_ERR_SYNTAX, p->what, p->text, w[k + 2].pos, NULL,
                        "expected ',' before '%.*s'", SPAN(p, &w[k + 2]));
  prm->name = strndup(p->text + w[k + 1].pos, w[k + 1].len);
  if (!prm->name) return uk__errorf(UK_ERR_NOMEM, "%s: out of memory", p->what);
  return UK_OK;
}

/* An earlier parameter of `list` (or of `first`, the inputs, when given)
 * with the same name as `prm`; error at prm's name. */
static uk_status check_duplicate(const char *what, const char *text, const uk_param *prm,
                                 const char *first_what, const char *first_text,
                                 const uk_param *earlier, int n) {
  for (int j = 0; j < n; j++)
    if (strcmp(earlier[j].name, prm->name) == 0) {
      char at[64];
      where(at, sizeof at, first_what, first_text, earlier[j].name_pos);
      return uk__error_at(UK_ERR_SYNTAX, what, text, prm->name_pos, NULL,
                          "duplicate parameter name '%s' (first at %s)", prm->name, at);
    }
  return UK_OK;
}

/* A one-letter name that is also a placeholder in `list` would be both a
 * typedef and a variable in the generated kernel. */
static uk_status check_placeholder_name(const char *what, const char *text, size_t name_pos,
                                        const char *name, const char *kind,
                                        const char *list_what, const char *list_text,
                                        const uk_paramlist *list) {
  if (name[0] == '\0' || name[1] != '\0') return UK_OK;
  for (int j = 0; j < list->count; j++)
    if (list->items[j].is_placeholder && list->items[j].placeholder == name[0]) {
      char at[64];
      where(at, sizeof at, list_what, list_text, list->items[j].type_pos);
      return uk__error_at(UK_ERR_SYNTAX, what, text, name_pos, NULL,
                          "%s '%s' is also a placeholder type (at %s)", kind, name, at);
    }
  return UK_OK;
}

/* params := "" | param {"," param}
 * White space only is the empty list; an empty piece is a stray comma. */
uk_status uk__params_parse(const char *text, const char *what, uk_paramlist *out) {
  if (!what) what = "params";
  if (!text || !out) return uk__errorf(UK_ERR_INVALID, "%s: NULL text or result", what);
  parser p = {text, what, {0}, {UK_TOK_EOF, 0, 0, 0, 0}, NULL, 0, 0};
  uk_paramlist list = {0, NULL};
  int cap = 0;
  size_t comma = 0; /* offset of the comma before the current piece */
  uk_status st = UK_OK;
  uk__lex_init(&p.lx, text);
  p.tok = uk__lex_next(&p.lx);
  while (p.tok.kind != UK_TOK_EOF) {
    if (list.count == UK_MAX_PARAMETERS) { /* refused before reading on: the checks below stay cheap */
      st = uk__error_at(UK_ERR_INVALID, what, text, p.tok.pos, NULL,
                        "too many parameters (more than UK_MAX_PARAMETERS, %d)", UK_MAX_PARAMETERS);
      goto out;
    }
    if ((st = read_piece(&p)) != UK_OK) goto out;
    if (p.nwords == 0) {
      st = uk__error_at(UK_ERR_SYNTAX, what, text, at_comma(&p) ? p.tok.pos : comma, NULL,
                        "empty parameter (stray ',')");
      goto out;
    }
    if (list.count == cap) {
      int grown_cap = cap ? 2 * cap : 4;
      uk_param *grown = realloc(list.items, (size_t)grown_cap * sizeof *grown);
      if (!grown) {
        st = uk__errorf(UK_ERR_NOMEM, "%s: out of memory", what);
        goto out;
      }
      list.items = grown;
      cap = grown_cap;
    }
    uk_param *prm = &list.items[list.count];
    memset(prm, 0, sizeof *prm);
    if ((st = parse_param(&p, prm)) != UK_OK) goto out;
    list.count++;
    st = check_duplicate(what, text, prm, what, text, list.items, list.count - 1);
    if (st != UK_OK) goto out;
    if (p.tok.kind == UK_TOK_EOF) break;
    comma = p.tok.pos;
    p.tok = uk__lex_next(&p.lx);
    if (p.tok.kind == UK_TOK_EOF) {
      st = uk__error_at(UK_ERR_SYNTAX, what, text, comma, NULL, "empty parameter (stray ',')");
      goto out;
    }
  }
  for (int j = 0; j < list.count; j++) {
    const uk_param *prm = &list.items[j];
    st = check_placeholder_name(what, text, prm->name_pos, prm->name, "parameter name", what, text,
                                &list);
    if (st != UK_OK) goto out;
  }
  *out = list;
  list.count = 0;
  list.items = NULL;
  uk__error_clear();
out:
  free(p.words);
  uk__params_free(&list);
  return st;
}

void uk__params_free(uk_paramlist *p) {
  if (!p) return;
  for (int j = 0; j < p->count; j++) free(p->items[j].name);
  free(p->items);
  p->count = 0;
  p->items = NULL;
}

static uk_status check_kernel_name(const char *name, const char *in_text, const uk_paramlist *in,
                                   const char *out_text, const uk_paramlist *out) {
  size_t len = strlen(name);
  if (len == 0)
    return uk__errorf(UK_ERR_SYNTAX, "kernel name is empty: use a C identifier such as 'my_kernel'");
  size_t bad = first_bad(name, len);
  if (bad < len)
    return uk__error_at(UK_ERR_SYNTAX, "name", name, bad, HINT_NAME,
                        "Invalid kernel name '%s'", name);
  const char *why = reserved_why(name, len);
  if (why) return uk__error_at(UK_ERR_SYNTAX, "name", name, 0, NULL, "kernel name '%s' is %s", name, why);
  if (strncmp(name, "_uk", 3) == 0)
    return uk__error_at(UK_ERR_SYNTAX, "name", name, 0, NULL,
                        "kernel name '%s' is reserved: names starting with '_uk' belong to ukern",
                        name);
  uk_status st = check_placeholder_name("name", name, 0, name, "kernel name", "in_params", in_text, in);
  if (st == UK_OK)
    st = check_placeholder_name("name", name, 0, name, "kernel name", "out_params", out_text, out);
  return st;
}

uk_status uk__params_check_kernel(const char *in_text, const uk_paramlist *in, const char *out_text,
                                  const uk_paramlist *out, const char *name) {
  if (!in_text || !in || !out_text || !out || !name)
    return uk__errorf(UK_ERR_INVALID, "uk__params_check_kernel: NULL argument");
  const uk_paramlist *lists[2] = {in, out};
  const char *texts[2] = {in_text, out_text};
  const char *whats[2] = {"in_params", "out_params"};
  uk_status st;
  for (int l = 0; l < 2; l++)
    for (int j = 0; j < lists[l]->count; j++) {
      const uk_param *prm = &lists[l]->items[j];
      /* inputs before outputs, each list in order: the later one is the duplicate */
      if (l == 1 && (st = check_duplicate(whats[l], texts[l], prm, whats[0], texts[0], in->items,
                                          in->count)) != UK_OK)
        return st;
      if ((st = check_duplicate(whats[l], texts[l], prm, whats[l], texts[l], lists[l]->items, j)) !=
          UK_OK)
        return st;
      for (int o = 0; o < 2; o++)
        if ((st = check_placeholder_name(whats[l], texts[l], prm->name_pos, prm->name,
                                         "parameter name", whats[o], texts[o], lists[o])) != UK_OK)
          return st;
    }
  if ((st = check_kernel_name(name, in_text, in, out_text, out)) != UK_OK) return st;
  uk__error_clear();
  return UK_OK;
}
