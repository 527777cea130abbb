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

void uk__lex_init(uk_lexer *lx, const char *text) {
  lx->text = text ? text : "";
  lx->pos = 0;
}

uk_token uk__lex_next(uk_lexer *lx) {
  const char *s = lx->text;
  size_t p = lx->pos;
  uk_token t = {UK_TOK_EOF, 0, 0, 0};
  while (uk__lex_is_space(s[p])) {
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
