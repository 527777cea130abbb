/* Scanning an elementwise operation for the names it uses (opscan.h). */
#include "codegen/opscan.h"

#include <string.h>

#include "codegen/lexer.h"

static int is_member_access(const uk_lexer *lx, const uk_token *prev) {
  return prev->kind == UK_TOK_PUNCT &&
         (uk__lex_is(lx, prev, ".") || uk__lex_is(lx, prev, "->") || uk__lex_is(lx, prev, "::"));
}

/* Words that can move control past a later statement (or leave the thread). */
static int is_control(const uk_lexer *lx, const uk_token *t) {
  static const char *const kw[] = {"if",   "else",  "for",    "while",     "do",        "switch",
                                   "case", "goto",  "return", "break",     "continue",  "default",
                                   "throw", "co_return", "co_await", "co_yield", "asm", "__asm__"};
  if (t->kind != UK_TOK_IDENT) return 0;
  for (size_t k = 0; k < sizeof kw / sizeof kw[0]; k++)
    if (uk__lex_is(lx, t, kw[k])) return 1;
  return 0;
}

typedef struct scan_result {
  int uses;      /* occurrences of the name as an identifier of its own */
  int plain;     /* ... that are statement-level plain assignments */
  int control;   /* control flow somewhere in the text */
  int uncertain; /* the text is not read as the compiler reads it (splice, unclosed literal) */
} scan_result;

static void scan(const char *text, const char *name, scan_result *r) {
  memset(r, 0, sizeof *r);
  if (!text || !name) return;
  uk_lexer lx;
  uk__lex_init_c(&lx, text);
  uk_token prev = {UK_TOK_EOF, 0, 0, 0, 1};
  int depth = 0; /* (), [] and {} nesting */
  for (;;) {
    uk_token t = uk__lex_next(&lx);
    if (t.kind == UK_TOK_ERROR) r->uncertain = 1;
    if (t.kind == UK_TOK_EOF || t.kind == UK_TOK_ERROR) break;
    if (is_control(&lx, &t)) r->control = 1;
    char b = uk__lex_bracket(&lx, &t);
    if (b == '(' || b == '[' || b == '{') depth++;
    else if ((b == ')' || b == ']' || b == '}') && depth > 0) depth--;
    else if (b == '#') r->uncertain = 1; /* a directive in code: not ours to read */
    if (t.kind == UK_TOK_IDENT && uk__lex_is(&lx, &t, name) && !is_member_access(&lx, &prev)) {
      r->uses++;
      uk_token n = uk__lex_peek(&lx);
      int stmt_start = prev.kind == UK_TOK_EOF || uk__lex_is(&lx, &prev, ";");
      if (depth == 0 && stmt_start && uk__lex_is(&lx, &n, "=")) r->plain++;
    }
    prev = t;
  }
  if (lx.spliced) r->uncertain = 1;
}

static int may_contain(const char *text, const char *word);

int uk__opscan_uses(const char *text, const char *name) {
  /* A use is a token whose text is `name` (uk__lex_is compares the text as
   * written): none without the substring, and no lexing then. */
  if (!text || !name || !may_contain(text, name)) return 0;
  scan_result r;
  scan(text, name, &r);
  return r.uses > 0;
}

int uk__opscan_write_only(const char *text, const char *name) {
  return uk__opscan_write_only_with(text, NULL, name);
}

/* 1 when the preamble may define macros that the text uses: it #includes
 * something (macros unseen), or it #defines a name that the text uses. */
static int uses_preamble_macro(const char *text, const char *preamble) {
  if (!preamble) return 0;
  uk_lexer lx;
  uk__lex_init_c(&lx, preamble);
  for (uk_token t = uk__lex_next(&lx); t.kind != UK_TOK_EOF; t = uk__lex_next(&lx)) {
    if (t.kind == UK_TOK_ERROR) return 1;
    if (uk__lex_bracket(&lx, &t) != '#') continue;
    uk_token d = uk__lex_next(&lx);
    if (uk__lex_is(&lx, &d, "include") || uk__lex_is(&lx, &d, "include_next") ||
        uk__lex_is(&lx, &d, "import"))
      return 1;
    if (!uk__lex_is(&lx, &d, "define")) continue;
    uk_token m = uk__lex_next(&lx);
    if (m.kind != UK_TOK_IDENT) return 1;
    char name[256];
    if (m.len >= sizeof name) return 1;
    memcpy(name, preamble + m.pos, m.len);
    name[m.len] = '\0';
    if (uk__opscan_uses_exact(text, name)) return 1;
  }
  return 0;
}

int uk__opscan_write_only_with(const char *text, const char *preamble, const char *name) {
  scan_result r;
  scan(text, name, &r);
  if (r.uses == 0 || r.plain != r.uses || r.control || r.uncertain) return 0;
  return !uses_preamble_macro(text, preamble);
}

/* Whether an identifier starting with `word` may be in text: a token is a
 * run of the text's bytes, so not without those bytes. Lexing a long
 * preamble once per name was most of a fusion's first call in a process. */
static int may_contain(const char *text, const char *word) { return strstr(text, word) != NULL; }

/* Any identifier token equal to `name`, members included (a macro is
 * expanded wherever its name appears as a token). */
int uk__opscan_uses_exact(const char *text, const char *name) {
  if (!text || !name || !may_contain(text, name)) return 0;
  uk_lexer lx;
  uk__lex_init_c(&lx, text);
  for (uk_token t = uk__lex_next(&lx); t.kind != UK_TOK_EOF && t.kind != UK_TOK_ERROR;
       t = uk__lex_next(&lx))
    if (t.kind == UK_TOK_IDENT && uk__lex_is(&lx, &t, name)) return 1;
  return 0;
}

int uk__opscan_mentions(const char *text, const char *prefix) {
  if (!text || !prefix) return 0;
  if (!may_contain(text, prefix)) return 0;
  size_t n = strlen(prefix);
  uk_lexer lx;
  uk__lex_init_c(&lx, text);
  for (uk_token t = uk__lex_next(&lx); t.kind != UK_TOK_EOF && t.kind != UK_TOK_ERROR;
       t = uk__lex_next(&lx))
    if (t.kind == UK_TOK_IDENT && t.len >= n && memcmp(text + t.pos, prefix, n) == 0) return 1;
  return 0;
}

int uk__opscan_uses_beyond(const char *text, const char *name, const char *member) {
  if (!text || !name || !member) return 0;
  uk_lexer lx;
  uk__lex_init_c(&lx, text);
  uk_token prev = {UK_TOK_EOF, 0, 0, 0, 1};
  for (;;) {
    uk_token t = uk__lex_next(&lx);
    if (t.kind == UK_TOK_EOF || t.kind == UK_TOK_ERROR) return 0;
    if (t.kind == UK_TOK_IDENT && uk__lex_is(&lx, &t, name) && !is_member_access(&lx, &prev)) {
      uk_lexer ahead = lx;
      uk_token dot = uk__lex_next(&ahead), m = uk__lex_next(&ahead);
      if (!uk__lex_is(&ahead, &dot, ".") || !uk__lex_is(&ahead, &m, member)) return 1;
    }
    prev = t;
  }
}
