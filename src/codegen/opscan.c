#include "codegen/opscan.h"

#include <string.h>

/* Token kinds of the scanner; punctuation keeps the multi-byte operators
 * that matter here ("==", "+=", "->", "::", "++", ...) as one token. */
typedef enum { T_END, T_IDENT, T_OTHER, T_PUNCT } tkind;

typedef struct {
  tkind kind;
  const char *p;
  size_t len;
} token;

static int is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static int is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

/* Skips white space, comments and preprocessor-free noise. */
static const char *skip_space(const char *s) {
  for (;;) {
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\v' || *s == '\f' ||
           (*s == '\\' && (s[1] == '\n' || s[1] == '\r')))
      s++;
    if (s[0] == '/' && s[1] == '/') {
      while (*s && *s != '\n') s++;
    } else if (s[0] == '/' && s[1] == '*') {
      const char *e = strstr(s + 2, "*/");
      s = e ? e + 2 : s + strlen(s);
    } else {
      return s;
    }
  }
}

/* Three- and two-byte operators, longest first. */
static const char *const ops3[] = {"<<=", ">>=", "...", "->*"};
static const char *const ops2[] = {"==", "!=", "<=", ">=", "+=", "-=", "*=", "/=", "%=", "&=", "|=",
                                   "^=", "++", "--", "->", "::", "&&", "||", "<<", ">>", ".*"};

/* A string or character literal starting at s (maybe after a prefix). */
static token literal(const char **sp, const char *s) {
  const char *e = s;
  while (*e != '"' && *e != '\'') e++;
  char q = *e++;
  while (*e && *e != q) {
    if (*e == '\\' && e[1]) e++;
    e++;
  }
  if (*e) e++;
  token t = {T_OTHER, s, (size_t)(e - s)};
  *sp = e;
  return t;
}

static token next(const char **sp) {
  const char *s = skip_space(*sp);
  token t = {T_END, s, 0};
  if (!*s) {
    *sp = s;
    return t;
  }
  if (is_ident_start(*s)) {
    const char *e = s;
    while (is_ident_char(*e)) e++;
    /* An encoding prefix glued to a literal (u8"..", L'x') is part of it. */
    if (*e == '"' || *e == '\'') return literal(sp, s);
    t.kind = T_IDENT;
    t.len = (size_t)(e - s);
    *sp = e;
    return t;
  }
  if ((*s >= '0' && *s <= '9') || (*s == '.' && s[1] >= '0' && s[1] <= '9')) {
    /* pp-number: digits, letters, '.', '_' and signs after an exponent. */
    const char *e = s + 1;
    for (;;) {
      if ((*e == '+' || *e == '-') && (e[-1] == 'e' || e[-1] == 'E' || e[-1] == 'p' || e[-1] == 'P')) e++;
      else if (is_ident_char(*e) || *e == '.' || *e == '\'') e++;
      else break;
    }
    t.kind = T_OTHER;
    t.len = (size_t)(e - s);
    *sp = e;
    return t;
  }
  if (*s == '"' || *s == '\'') return literal(sp, s);
  t.kind = T_PUNCT;
  t.len = 1;
  for (size_t k = 0; k < sizeof ops3 / sizeof ops3[0]; k++)
    if (strncmp(s, ops3[k], 3) == 0) t.len = 3;
  if (t.len == 1)
    for (size_t k = 0; k < sizeof ops2 / sizeof ops2[0]; k++)
      if (strncmp(s, ops2[k], 2) == 0) t.len = 2;
  *sp = s + t.len;
  return t;
}

static int tok_is(const token *t, const char *s) {
  return t->len == strlen(s) && memcmp(t->p, s, t->len) == 0;
}

static int is_member_access(const token *prev) {
  return prev->kind == T_PUNCT && (tok_is(prev, ".") || tok_is(prev, "->") || tok_is(prev, "::"));
}

static int is_control(const token *t) {
  static const char *const kw[] = {"if",   "else",  "for",  "while",    "do",      "switch",
                                   "case", "goto",  "return", "break", "continue"};
  if (t->kind != T_IDENT) return 0;
  for (size_t k = 0; k < sizeof kw / sizeof kw[0]; k++)
    if (tok_is(t, kw[k])) return 1;
  return 0;
}

/* Walks the text once; counts uses of `name` and how many of them are
 * statement-level plain assignments. */
static void scan(const char *text, const char *name, int *uses, int *plain, int *control) {
  *uses = *plain = *control = 0;
  if (!text || !name) return;
  const char *s = text;
  token prev = {T_END, text, 0};
  int depth = 0; /* (), [] and {} nesting */
  for (;;) {
    token t = next(&s);
    if (t.kind == T_END) break;
    if (is_control(&t)) *control = 1;
    if (t.kind == T_PUNCT && t.len == 1) {
      if (*t.p == '(' || *t.p == '[' || *t.p == '{') depth++;
      else if ((*t.p == ')' || *t.p == ']' || *t.p == '}') && depth > 0) depth--;
    }
    if (t.kind == T_IDENT && tok_is(&t, name) && !is_member_access(&prev)) {
      (*uses)++;
      const char *after = s;
      token n = next(&after);
      int stmt_start = prev.kind == T_END || (prev.kind == T_PUNCT && tok_is(&prev, ";"));
      if (depth == 0 && stmt_start && n.kind == T_PUNCT && tok_is(&n, "=")) (*plain)++;
    }
    prev = t;
  }
}

int uk__opscan_uses(const char *text, const char *name) {
  int uses, plain, control;
  scan(text, name, &uses, &plain, &control);
  return uses > 0;
}

int uk__opscan_write_only(const char *text, const char *name) {
  int uses, plain, control;
  scan(text, name, &uses, &plain, &control);
  return uses > 0 && plain == uses && !control;
}

int uk__opscan_mentions(const char *text, const char *prefix) {
  if (!text || !prefix) return 0;
  size_t n = strlen(prefix);
  const char *s = text;
  for (;;) {
    token t = next(&s);
    if (t.kind == T_END) return 0;
    if (t.kind == T_IDENT && t.len >= n && memcmp(t.p, prefix, n) == 0) return 1;
  }
}
