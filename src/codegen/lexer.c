/* The one tokenizer for definition text (lexer.h), with positions. */
#include "codegen/lexer.h"

#include <string.h>

int uk__lex_is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* ASCII only, independent of the locale (isalpha would accept more). */
static int is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }

int uk__lex_is_ident(const char *s, size_t len) {
  if (len == 0 || !is_alpha(s[0])) return 0;
  for (size_t k = 1; k < len; k++)
    if (!is_alpha(s[k]) && !is_digit(s[k])) return 0;
  return 1;
}

void uk__lex_where(const char *text, size_t pos, size_t *line, size_t *col) {
  size_t l = 1, start = 0;
  for (size_t k = 0; text && k < pos && text[k]; k++)
    if (text[k] == '\n') {
      l++;
      start = k + 1;
    }
  *line = l;
  *col = pos - start + 1;
}

void uk__lex_init(uk_lexer *lx, const char *text) {
  lx->text = text ? text : "";
  lx->pos = 0;
  lx->flags = 0;
  lx->error = NULL;
  lx->spliced = 0;
}

void uk__lex_init_c(uk_lexer *lx, const char *text) {
  uk__lex_init(lx, text);
  lx->flags = UK_LEX_C;
}

/* A backslash-newline (CR-LF too) at s[p]: its length, else 0. */
static size_t splice_at(const char *s, size_t p) {
  if (s[p] != '\\') return 0;
  if (s[p + 1] == '\n') return 2;
  if (s[p + 1] == '\r' && s[p + 2] == '\n') return 3;
  return 0;
}

/* C mode: skips white space, splices and comments from s[*p]. Returns 0, or
 * 1 at an unclosed block comment (left at *p). */
static int skip_c(uk_lexer *lx, size_t *p, uk_token *t) {
  const char *s = lx->text;
  for (;;) {
    size_t q = *p, n;
    if (uk__lex_is_space(s[q])) {
      if (s[q] == '\n') t->line_start = 1;
      q++;
    } else if ((n = splice_at(s, q)) != 0) {
      lx->spliced = 1;
      q += n;
    } else if (s[q] == '/' && s[q + 1] == '/') {
      /* to the newline that no backslash splices away */
      while (s[q] && !(s[q] == '\n' && !(q > 0 && s[q - 1] == '\\') &&
                       !(q > 1 && s[q - 1] == '\r' && s[q - 2] == '\\')))
        q++;
    } else if (s[q] == '/' && s[q + 1] == '*') {
      const char *e = strstr(s + q + 2, "*/");
      if (!e) return 1;
      for (const char *c = s + q; c < e; c++)
        if (*c == '\n') t->line_start = 1;
      q = (size_t)(e - s) + 2;
    } else {
      return 0;
    }
    t->space_before = 1;
    *p = q;
  }
}

static int is_prefix(const char *s, size_t len) {
  static const char *const prefixes[] = {"u8", "u", "U", "L", "R", "u8R", "uR", "UR", "LR"};
  for (size_t k = 0; k < sizeof prefixes / sizeof prefixes[0]; k++)
    if (strlen(prefixes[k]) == len && memcmp(prefixes[k], s, len) == 0) return 1;
  return 0;
}

/* A literal whose quote is at s[q] (the token starts at t->pos); sets kind
 * and returns the end, or sets UK_TOK_ERROR. A raw string's delimiter is at
 * most 16 bytes, as in C++. */
static size_t literal(uk_lexer *lx, size_t q, int raw, uk_token *t) {
  const char *s = lx->text;
  char quote = s[q];
  t->kind = quote == '"' ? UK_TOK_STRING : UK_TOK_CHAR;
  if (raw && quote == '"') {
    size_t d = q + 1, dl = 0;
    while (dl <= 16 && s[d + dl] && s[d + dl] != '(') dl++;
    if (s[d + dl] == '(' && dl <= 16) {
      for (size_t e = d + dl + 1; s[e]; e++)
        if (s[e] == ')' && strncmp(s + e + 1, s + d, dl) == 0 && s[e + 1 + dl] == '"')
          return e + dl + 2;
    }
    t->kind = UK_TOK_ERROR;
    lx->error = "unterminated raw string literal";
    return q;
  }
  size_t e = q + 1;
  while (s[e] && s[e] != quote && s[e] != '\n') {
    if (s[e] == '\\' && s[e + 1]) e++;
    e++;
  }
  if (s[e] == quote) return e + 1;
  t->kind = UK_TOK_ERROR;
  lx->error = quote == '"' ? "unterminated string literal" : "unterminated character literal";
  return q;
}

/* Three- and two-byte punctuators of C++, longest first ("%:%:" too). */
static const char *const ops4[] = {"%:%:"};
static const char *const ops3[] = {"<<=", ">>=", "...", "->*", "<=>"};
static const char *const ops2[] = {"==", "!=", "<=", ">=", "+=", "-=", "*=", "/=", "%=", "&=", "|=",
                                   "^=", "++", "--", "->", "::", "&&", "||", "<<", ">>", ".*",
                                   "##", "<:", ":>", "<%", "%>", "%:"};

/* Whether s starts with the n bytes of op (s may end before: its NUL
 * differs). Inline: a libc strncmp per table entry was most of a fusion's
 * first-call lexing. */
static int starts_with(const char *s, const char *op, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] != op[i]) return 0;
  return 1;
}

static size_t punct_len(const char *s) {
  for (size_t k = 0; k < sizeof ops4 / sizeof ops4[0]; k++)
    if (starts_with(s, ops4[k], 4)) return 4;
  for (size_t k = 0; k < sizeof ops3 / sizeof ops3[0]; k++)
    if (starts_with(s, ops3[k], 3)) return 3;
  for (size_t k = 0; k < sizeof ops2 / sizeof ops2[0]; k++)
    if (starts_with(s, ops2[k], 2)) return 2;
  return 1;
}

/* One C-mode token from s[p] (after white space and comments). */
static size_t next_c(uk_lexer *lx, size_t p, uk_token *t) {
  const char *s = lx->text;
  if (is_alpha(s[p])) {
    size_t e = p;
    while (is_alpha(s[e]) || is_digit(s[e])) e++;
    if ((s[e] == '"' || s[e] == '\'') && is_prefix(s + p, e - p))
      return literal(lx, e, s[e - 1] == 'R', t);
    t->kind = UK_TOK_IDENT;
    return e;
  }
  if (is_digit(s[p]) || (s[p] == '.' && is_digit(s[p + 1]))) {
    size_t e = p + 1;
    for (;;) {
      char c = s[e], b = s[e - 1];
      if ((c == '+' || c == '-') && (b == 'e' || b == 'E' || b == 'p' || b == 'P')) e++;
      else if (is_alpha(c) || is_digit(c) || c == '.') e++;
      else if (c == '\'' && (is_alpha(s[e + 1]) || is_digit(s[e + 1]))) e++; /* 1'000 */
      else break;
    }
    t->kind = UK_TOK_NUMBER;
    return e;
  }
  if (s[p] == '"' || s[p] == '\'') return literal(lx, p, 0, t);
  t->kind = UK_TOK_PUNCT;
  return p + punct_len(s + p);
}

uk_token uk__lex_next(uk_lexer *lx) {
  const char *s = lx->text;
  size_t p = lx->pos;
  uk_token t = {UK_TOK_EOF, 0, 0, 0, p == 0};
  if (p > 0 && s[p - 1] == '\n') t.line_start = 1;
  if (lx->error) { /* after an error: EOF at the end */
    p += strlen(s + p);
    t.pos = lx->pos = p;
    t.line_start = 0;
    return t;
  }
  if (lx->flags & UK_LEX_C) {
    if (skip_c(lx, &p, &t)) {
      t.kind = UK_TOK_ERROR;
      t.pos = p;
      t.len = strlen(s + p);
      lx->error = "unterminated comment";
      lx->pos = p;
      return t;
    }
    t.pos = p;
    if (s[p] == '\0') {
      lx->pos = p;
      return t;
    }
    size_t e = next_c(lx, p, &t);
    if (t.kind == UK_TOK_ERROR) e = p + strlen(s + p);
    t.len = e - p;
    lx->pos = t.kind == UK_TOK_ERROR ? p : e;
    return t;
  }
  while (uk__lex_is_space(s[p])) {
    if (s[p] == '\n') t.line_start = 1;
    p++;
    t.space_before = 1;
  }
  t.pos = p;
  if (s[p] == '\0') {
    t.kind = UK_TOK_EOF;
  } else if (is_alpha(s[p])) {
    t.kind = UK_TOK_IDENT;
    while (is_alpha(s[p]) || is_digit(s[p])) p++;
  } else if (is_digit(s[p])) {
    t.kind = UK_TOK_NUMBER;
    while (is_alpha(s[p]) || is_digit(s[p]) || s[p] == '.') p++;
  } else {
    t.kind = UK_TOK_PUNCT;
    p += (s[p] == ':' && s[p + 1] == ':') ? 2 : 1;
  }
  t.len = p - t.pos;
  lx->pos = p;
  return t;
}

uk_token uk__lex_peek(const uk_lexer *lx) {
  uk_lexer copy = *lx;
  return uk__lex_next(&copy);
}

int uk__lex_is(const uk_lexer *lx, const uk_token *t, const char *s) {
  return t->kind != UK_TOK_EOF && strlen(s) == t->len && memcmp(lx->text + t->pos, s, t->len) == 0;
}

char uk__lex_bracket(const uk_lexer *lx, const uk_token *t) {
  static const struct {
    const char *spelling;
    char bracket;
  } map[] = {{"(", '('}, {")", ')'}, {"[", '['}, {"]", ']'}, {"{", '{'}, {"}", '}'},
             {"<:", '['}, {":>", ']'}, {"<%", '{'}, {"%>", '}'}, {"#", '#'}, {"%:", '#'}};
  if (t->kind != UK_TOK_PUNCT) return 0;
  for (size_t k = 0; k < sizeof map / sizeof map[0]; k++)
    if (uk__lex_is(lx, t, map[k].spelling)) return map[k].bracket;
  return 0;
}
