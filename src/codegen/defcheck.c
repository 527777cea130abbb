/* Create-time checks of definition code (defcheck.h): balanced brackets, closed comments and literals, directives. */
#include "codegen/defcheck.h"

#include <stdarg.h>

#include "base/error.h"
#include "codegen/lexer.h"

/* Deeper nesting than this is refused rather than tracked (no allocation). */
#define NEST_LIMIT 256

static const char HINT_BRACE[] =
    "hint: the code runs inside ukern's generated kernel; an extra '}' would close it";
static const char HINT_DIRECTIVE[] =
    "hint: preprocessor directives (#include, #define, ...) belong in the preamble";
static const char HINT_LINE_START[] = "hint: a preprocessor directive starts a line of its own";

static char closer_of(char open) { return open == '(' ? ')' : open == '[' ? ']' : '}'; }

/* The offset just past the directive line that starts at pos (backslash-newline continues it). */
static size_t directive_end(const char *text, size_t pos) {
  size_t p = pos;
  while (text[p] && text[p] != '\n') p += text[p] == '\\' && text[p + 1] == '\n' ? 2 : 1;
  return p;
}

static uk_status check(const char *field, const char *text, int directives) {
  if (!text) return UK_OK;
  uk_lexer lx;
  uk__lex_init_c(&lx, text);
  size_t open_pos[NEST_LIMIT];
  char open_ch[NEST_LIMIT];
  int depth = 0;
  for (;;) {
    uk_token t = uk__lex_next(&lx);
    if (t.kind == UK_TOK_EOF) break;
    if (t.kind == UK_TOK_ERROR)
      return uk__error_at(UK_ERR_SYNTAX, field, text, t.pos,
                          text[t.pos] == '/' ? "hint: close it with '*/'" : NULL, "%s", lx.error);
    char b = uk__lex_bracket(&lx, &t);
    if (!b && (uk__lex_is(&lx, &t, "##") || uk__lex_is(&lx, &t, "%:%:"))) b = '#';
    if (b == '#' && directives && t.line_start && t.len <= 2 && !uk__lex_is(&lx, &t, "##")) {
      lx.pos = directive_end(text, t.pos); /* its brackets are the preprocessor's */
      continue;
    }
    if (b == '#')
      return uk__error_at(UK_ERR_SYNTAX, field, text, t.pos, directives ? HINT_LINE_START : HINT_DIRECTIVE,
                          directives ? "'%.*s' inside a line" : "'%.*s' outside the preamble", (int)t.len,
                          text + t.pos);
    if (b == '(' || b == '[' || b == '{') {
      if (depth == NEST_LIMIT)
        return uk__error_at(UK_ERR_SYNTAX, field, text, t.pos, NULL,
                            "brackets nested deeper than %d", NEST_LIMIT);
      open_pos[depth] = t.pos;
      open_ch[depth++] = b;
    } else if (b == ')' || b == ']' || b == '}') {
      if (depth == 0)
        return uk__error_at(UK_ERR_SYNTAX, field, text, t.pos, b == '}' ? HINT_BRACE : NULL,
                            "unmatched '%c'", b);
      depth--;
      if (closer_of(open_ch[depth]) != b) {
        size_t line, col;
        uk__lex_where(text, open_pos[depth], &line, &col);
        return uk__error_at(UK_ERR_SYNTAX, field, text, t.pos, NULL,
                            "'%c' does not close '%c' (opened at %s:%zu:%zu); expected '%c'", b,
                            open_ch[depth], field, line, col, closer_of(open_ch[depth]));
      }
    }
  }
  if (depth > 0)
    return uk__error_at(UK_ERR_SYNTAX, field, text, open_pos[depth - 1], NULL,
                        "'%c' is never closed (expected '%c')", open_ch[depth - 1],
                        closer_of(open_ch[depth - 1]));
  return UK_OK;
}

uk_status uk__defcheck(const char *field, const char *text) { return check(field, text, 0); }

uk_status uk__defcheck_code(const char *field, const char *text) { return check(field, text, 1); }

uk_status uk__defcheck_fields(const char *field, const char *text, ...) {
  va_list ap;
  va_start(ap, text);
  uk_status st = UK_OK;
  while (field && (st = uk__defcheck(field, text)) == UK_OK) {
    field = va_arg(ap, const char *);
    if (field) text = va_arg(ap, const char *);
  }
  va_end(ap);
  return st;
}
