/* A small tokenizer for definition text (parameter lists, type spellings).
 *
 * Tokens are identifiers, numbers and single punctuation bytes ("::" is one
 * token), each with its byte offset so that errors can point at it with
 * uk__error_at. White space (space, tab, newline, CR, VT, FF) separates
 * tokens and is remembered in `space_before`, so that a parser can tell
 * "x-y" (three glued tokens) from "x - y". The lexer never fails and never
 * allocates: any byte that is neither white space nor part of an identifier
 * or number is a one-byte punctuation token (non-ASCII bytes included).
 * The text is borrowed and must outlive the lexer and its tokens. */
#ifndef UK_CODEGEN_LEXER_H
#define UK_CODEGEN_LEXER_H

#include <stddef.h>

typedef enum uk_tok {
  UK_TOK_EOF = 0,
  UK_TOK_IDENT,  /* [A-Za-z_][A-Za-z0-9_]* */
  UK_TOK_NUMBER, /* a digit, then letters, digits, '_' and '.' ("2x", "1.5f") */
  UK_TOK_PUNCT   /* any other byte; "::" is one token */
} uk_tok;

typedef struct uk_token {
  uk_tok kind;
  size_t pos;       /* byte offset of the token in the text */
  size_t len;       /* 0 for EOF */
  int space_before; /* white space precedes the token (not set at the start of the text) */
} uk_token;

typedef struct uk_lexer {
  const char *text;
  size_t pos; /* where the next token's scan starts */
} uk_lexer;

void uk__lex_init(uk_lexer *lx, const char *text);
/* The next token; EOF (at the text's end) again and again once reached. */
uk_token uk__lex_next(uk_lexer *lx);
/* The token that uk__lex_next would return, without consuming it. */
uk_token uk__lex_peek(const uk_lexer *lx);
/* 1 when the token's text is exactly `s`. */
int uk__lex_is(const uk_lexer *lx, const uk_token *t, const char *s);

int uk__lex_is_space(char c);
/* 1 when s[0..len) is a C identifier ([A-Za-z_][A-Za-z0-9_]*, len > 0). */
int uk__lex_is_ident(const char *s, size_t len);

#endif
