/* Create-time checks of definition code (defcheck.h): balanced brackets, closed comments and literals, no directive. */
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

static char closer_of(char open) { return open == '(' ? ')' : open == '[' ? ']' : '}'; }

uk_status uk__defcheck(const char *field, const char *text) {
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
    if (b == '#')
      return uk__error_at(UK_ERR_SYNTAX, field, text, t.pos, HINT_DIRECTIVE,
                          "'%.*s' outside the preamble", (int)t.len, text + t.pos);
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
