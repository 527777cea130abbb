/* The one tokenizer for definition text: parameter lists, C signatures,
 * type spellings (plain mode) and C/CUDA code (C mode: operation, map_expr,
 * preamble, ...). Every token carries its byte offset so that errors can
 * point at it with uk__error_at; uk__lex_where turns an offset into
 * line:column.
 *
 * Plain mode (uk__lex_init): tokens are identifiers, numbers and single
 * punctuation bytes ("::" is one token). White space (space, tab, newline,
 * CR, VT, FF) separates tokens and is remembered in `space_before`, so that
 * a parser can tell "x-y" (three glued tokens) from "x - y". Any byte that
 * is neither white space nor part of an identifier or number is a one-byte
 * punctuation token (non-ASCII bytes included). Plain mode never fails.
 *
 * C mode (uk__lex_init_c) reads C/C++ as the compiler's tokenizer does:
 * comments count as white space (a `//` comment ending in a backslash goes
 * on to the next line), string and character literals (encoding prefixes
 * and raw strings included) are one token, numbers are pp-numbers
 * ("1e+5f", "0x1p-3", "1'000"), and multi-byte operators ("==", "+=",
 * "->", "<<=", digraphs "<%" ...) are one token. A comment or literal that
 * is not closed gives one UK_TOK_ERROR token (lx->error says why), then EOF.
 * A backslash-newline outside comments and literals sets lx->spliced: the
 * compiler joins the two lines, which this lexer does not model.
 *
 * The lexer never allocates; the text is borrowed and must outlive the
 * lexer and its tokens. Thread-safe (no shared state). */
#ifndef UK_CODEGEN_LEXER_H
#define UK_CODEGEN_LEXER_H

#include <stddef.h>

typedef enum uk_tok {
  UK_TOK_EOF = 0,
  UK_TOK_IDENT,  /* [A-Za-z_][A-Za-z0-9_]* */
  UK_TOK_NUMBER, /* plain: a digit, then letters, digits, '_' and '.' ("2x", "1.5f");
                    C mode: a pp-number */
  UK_TOK_PUNCT,  /* any other byte; "::" is one token (C mode: every C++ operator) */
  UK_TOK_STRING, /* C mode: "..." or R"d(...)d", encoding prefix included */
  UK_TOK_CHAR,   /* C mode: '...', encoding prefix included */
  UK_TOK_ERROR   /* C mode: an unclosed comment or literal, from pos to the end */
} uk_tok;

typedef struct uk_token {
  uk_tok kind;
  size_t pos;       /* byte offset of the token in the text */
  size_t len;       /* 0 for EOF */
  int space_before; /* white space (C mode: or a comment) precedes the token
                       (not set at the start of the text) */
  int line_start;   /* a newline (or the text's start) precedes the token on its line:
                       where a preprocessor directive may start */
} uk_token;

#define UK_LEX_C 1u /* flags: C mode */

typedef struct uk_lexer {
  const char *text;
  size_t pos;        /* where the next token's scan starts */
  unsigned flags;    /* UK_LEX_C */
  const char *error; /* after a UK_TOK_ERROR: "unterminated comment", ... (static) */
  int spliced;       /* C mode: a backslash-newline was met outside comments and literals */
} uk_lexer;

/* Plain mode; NULL text is "". */
void uk__lex_init(uk_lexer *lx, const char *text);
/* C mode; NULL text is "". */
void uk__lex_init_c(uk_lexer *lx, const char *text);
/* The next token; EOF (at the text's end) again and again once reached. */
uk_token uk__lex_next(uk_lexer *lx);
/* The token that uk__lex_next would return, without consuming it. */
uk_token uk__lex_peek(const uk_lexer *lx);
/* 1 when the token's text is exactly `s`. */
int uk__lex_is(const uk_lexer *lx, const uk_token *t, const char *s);
/* For a bracket token: the bracket it stands for ('(', ')', '[', ']', '{',
 * '}'; digraphs "<:" ":>" "<%" "%>" mapped), or '#' for "#" and "%:";
 * else 0. */
char uk__lex_bracket(const uk_lexer *lx, const uk_token *t);

int uk__lex_is_space(char c);
/* 1 when s[0..len) is a C identifier ([A-Za-z_][A-Za-z0-9_]*, len > 0). */
int uk__lex_is_ident(const char *s, size_t len);
/* The 1-based line and column (in bytes) of offset `pos` of `text`. */
void uk__lex_where(const char *text, size_t pos, size_t *line, size_t *col);

#endif
