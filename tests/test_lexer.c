/* The one lexer (issue 11): C mode token by token (comments, splices,
 * literals with prefixes and raw strings, pp-numbers, punctuators,
 * digraphs), its errors and positions. Plain mode is covered by
 * test_params (test_lexer there) and by every parser built on it. */
#include "codegen/lexer.h"
#include "testutil.h"

typedef struct {
  uk_tok kind;
  const char *text;
  int line_start;
} want_tok;

static void expect(const char *src, const want_tok *want, size_t n) {
  uk_lexer lx;
  uk__lex_init_c(&lx, src);
  for (size_t k = 0; k < n; k++) {
    uk_token p = uk__lex_peek(&lx), t = uk__lex_next(&lx);
    CHECK(p.kind == t.kind && p.pos == t.pos && p.len == t.len);
    int ok = t.kind == want[k].kind && t.len == strlen(want[k].text) &&
             memcmp(src + t.pos, want[k].text, t.len) == 0 &&
             (want[k].line_start < 0 || t.line_start == want[k].line_start);
    CHECK(ok);
    if (!ok)
      fprintf(stderr, "  \"%s\" token %zu: kind %d '%.*s' (line_start %d), want kind %d '%s'\n", src, k, t.kind,
              (int)t.len, src + t.pos, t.line_start, want[k].kind, want[k].text);
  }
  CHECK(uk__lex_next(&lx).kind == UK_TOK_EOF);
  CHECK(uk__lex_next(&lx).kind == UK_TOK_EOF);
}

#define EXPECT(src, ...)                                        \
  do {                                                          \
    const want_tok w_[] = {__VA_ARGS__};                        \
    expect(src, w_, sizeof w_ / sizeof w_[0]);                  \
  } while (0)

int main(void) {
  EXPECT("z = x /* c */ + y; // d\nw <<= 1e+5f",
         {UK_TOK_IDENT, "z", 1}, {UK_TOK_PUNCT, "=", 0}, {UK_TOK_IDENT, "x", 0}, {UK_TOK_PUNCT, "+", 0},
         {UK_TOK_IDENT, "y", 0}, {UK_TOK_PUNCT, ";", 0}, {UK_TOK_IDENT, "w", 1}, {UK_TOK_PUNCT, "<<=", 0},
         {UK_TOK_NUMBER, "1e+5f", 0});
  /* a // comment ending in a backslash goes on (LF and CRLF); backslash-space does not */
  EXPECT("a // b \\\nc\nd", {UK_TOK_IDENT, "a", -1}, {UK_TOK_IDENT, "d", 1});
  EXPECT("a // b \\\r\nc\nd", {UK_TOK_IDENT, "a", -1}, {UK_TOK_IDENT, "d", 1});
  EXPECT("a // b \\ \nc", {UK_TOK_IDENT, "a", -1}, {UK_TOK_IDENT, "c", 1});
  /* literals: prefixes, escapes, raw strings; a quote in a number */
  EXPECT("u8\"a\\\"b\" L'x' R\"d()\")d\" 1'000 0x1p-3 .5",
         {UK_TOK_STRING, "u8\"a\\\"b\"", -1}, {UK_TOK_CHAR, "L'x'", -1}, {UK_TOK_STRING, "R\"d()\")d\"", -1},
         {UK_TOK_NUMBER, "1'000", -1}, {UK_TOK_NUMBER, "0x1p-3", -1}, {UK_TOK_NUMBER, ".5", -1});
  EXPECT("p->*q ... a<=>b %:%: <% %> <: :> ::x",
         {UK_TOK_IDENT, "p", -1}, {UK_TOK_PUNCT, "->*", -1}, {UK_TOK_IDENT, "q", -1}, {UK_TOK_PUNCT, "...", -1},
         {UK_TOK_IDENT, "a", -1}, {UK_TOK_PUNCT, "<=>", -1}, {UK_TOK_IDENT, "b", -1}, {UK_TOK_PUNCT, "%:%:", -1},
         {UK_TOK_PUNCT, "<%", -1}, {UK_TOK_PUNCT, "%>", -1}, {UK_TOK_PUNCT, "<:", -1}, {UK_TOK_PUNCT, ":>", -1},
         {UK_TOK_PUNCT, "::", -1}, {UK_TOK_IDENT, "x", -1});
  /* errors: one ERROR token from the opening to the end, then EOF */
  const char *errs[][2] = {{"a /* b", "unterminated comment"},
                           {"a \"b\nc\"", "unterminated string literal"},
                           {"a 'b", "unterminated character literal"},
                           {"a R\"x(b)y\"", "unterminated raw string literal"}};
  for (int e = 0; e < 4; e++) {
    uk_lexer lx;
    uk__lex_init_c(&lx, errs[e][0]);
    CHECK(uk__lex_next(&lx).kind == UK_TOK_IDENT);
    uk_token t = uk__lex_next(&lx);
    CHECK(t.kind == UK_TOK_ERROR && t.pos == 2 && t.pos + t.len == strlen(errs[e][0]));
    CHECK(lx.error && strcmp(lx.error, errs[e][1]) == 0);
    CHECK(uk__lex_next(&lx).kind == UK_TOK_EOF);
  }
  /* splices outside comments are flagged; inside a comment or literal they are not */
  uk_lexer lx;
  uk__lex_init_c(&lx, "a \\\n b");
  while (uk__lex_next(&lx).kind != UK_TOK_EOF) {
  }
  CHECK(lx.spliced == 1);
  uk__lex_init_c(&lx, "a /* \\\n */ \"\\\n\"");
  while (uk__lex_next(&lx).kind != UK_TOK_EOF) {
  }
  CHECK(lx.spliced == 0);
  /* brackets and the directive sign */
  uk__lex_init_c(&lx, "( <% :> # %: ## x");
  const char want_b[] = {'(', '{', ']', '#', '#', 0, 0};
  for (int k = 0; k < 7; k++) {
    uk_token t = uk__lex_next(&lx);
    CHECK(uk__lex_bracket(&lx, &t) == want_b[k]);
  }
  /* positions */
  size_t line, col;
  uk__lex_where("ab\ncd\n\tef", 8, &line, &col);
  CHECK(line == 3 && col == 3);
  uk__lex_where("ab", 0, &line, &col);
  CHECK(line == 1 && col == 1);
  uk__lex_where(NULL, 0, &line, &col);
  CHECK(line == 1 && col == 1);
  uk__lex_init_c(&lx, NULL);
  CHECK(uk__lex_next(&lx).kind == UK_TOK_EOF);
  return ut_finish("test_lexer");
}
