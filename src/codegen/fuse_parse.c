/* Fusion program text -> uk_fuse_prog.
 *
 * The language is a Python expression subset (the definition lexer of
 * lexer.h reads C-like parameter text, so this file has its own tokenizer:
 * Python numbers such as 1e-3 and 2j, strings, '**' and '//').
 *
 *   program    := stmt ((';' | NEWLINE) stmt)*
 *   stmt       := NAME '=' expr | (empty)
 *   expr       := bor [cmpop bor]          (chains such as a < b < c rejected)
 *   bor        := bxor ('|' bxor)*
 *   bxor       := band ('^' band)*
 *   band       := arith ('&' arith)*
 *   arith      := term (('+' | '-') term)*
 *   term       := factor (('*' | '/' | '//' | '%') factor)*
 *   factor     := ('-' | '+' | '~') factor | power
 *   power      := primary ['**' factor]
 *   primary    := NUMBER | NAME | NAME '(' args ')' | '(' expr ')'
 *   args       := arg (',' arg)*,  arg := expr | NAME '=' value
 * Newlines inside parentheses are white space; '#' starts a comment.
 *
 * Bounds (ukern.h): the recursion is one level per parenthesis, call,
 * unary operator and '**' operand, at most UK_MAX_FUSE_DEPTH; nodes at most
 * UK_MAX_FUSE_NODES; names resolve through a hash table, so a program of N
 * statements parses in time linear in its length. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/nametab.h"
#include "codegen/dtype.h"
#include "codegen/fuse_ir.h"
#include "codegen/fuse_ops.h"

enum { T_EOF, T_NAME, T_NUM, T_STR, T_OP, T_SEP };

typedef struct tok {
  int kind;
  size_t pos, len;
} tok;

typedef struct parser {
  const char *text;
  size_t pos;
  int depth; /* parenthesis depth: newlines are separators only at 0 */
  int nest;  /* recursion levels (UK_MAX_FUSE_DEPTH) */
  uk_status status; /* of an error other than a syntax error (the node limit, memory) */
  tok t;     /* current token */
  uk_fuse_prog *prog;
  uk_nametab names; /* bound names (inputs, then temporaries and outputs) -> index in bound */
  int *bound;       /* node id of each name */
  int nnames, cap;
} parser;

static const char *const ops3[] = {"**", "//", "==", "!=", "<=", ">=", NULL};

static int is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }

static uk_status err(parser *p, size_t pos, const char *hint, const char *msg) {
  return uk__error_at(UK_ERR_SYNTAX, "program", p->text, pos, hint, "%s", msg);
}

static void next(parser *p) {
  const char *s = p->text;
  for (;;) {
    char c = s[p->pos];
    if (c == ' ' || c == '\t' || c == '\r' || (c == '\n' && p->depth > 0)) p->pos++;
    else if (c == '\\' && s[p->pos + 1] == '\n') p->pos += 2;
    else if (c == '#')
      while (s[p->pos] && s[p->pos] != '\n') p->pos++;
    else break;
  }
  tok t = {T_EOF, p->pos, 0};
  char c = s[p->pos];
  if (!c) {
    p->t = t;
    return;
  }
  size_t e = p->pos;
  if (c == '\n' || c == ';') {
    t.kind = T_SEP;
    e++;
  } else if (is_alpha(c)) {
    t.kind = T_NAME;
    while (is_alpha(s[e]) || is_digit(s[e])) e++;
  } else if (is_digit(c) || (c == '.' && is_digit(s[e + 1]))) {
    t.kind = T_NUM;
    if (c == '0' && (s[e + 1] == 'x' || s[e + 1] == 'X')) e += 2;
    while (is_digit(s[e]) || is_alpha(s[e]) || s[e] == '.' ||
           ((s[e] == '+' || s[e] == '-') && (s[e - 1] == 'e' || s[e - 1] == 'E') && s[p->pos + 1] != 'x'))
      e++;
  } else if (c == '\'' || c == '"') {
    t.kind = T_STR;
    e++;
    while (s[e] && s[e] != c && s[e] != '\n') e++;
    if (s[e] == c) e++;
  } else {
    t.kind = T_OP;
    e++;
    for (int k = 0; ops3[k]; k++)
      if (s[p->pos] == ops3[k][0] && s[p->pos + 1] == ops3[k][1]) e = p->pos + 2;
  }
  t.len = e - p->pos;
  p->pos = e;
  p->t = t;
}

static int is_op(const parser *p, const char *op) {
  return p->t.kind == T_OP && p->t.len == strlen(op) && memcmp(p->text + p->t.pos, op, p->t.len) == 0;
}
static int is_name(const parser *p, const char *name) {
  return p->t.kind == T_NAME && p->t.len == strlen(name) && memcmp(p->text + p->t.pos, name, p->t.len) == 0;
}

static int add(parser *p, uk_fuse_node *n) {
  if (p->prog->nnodes >= UK_MAX_FUSE_NODES) {
    p->status = uk__error_at(UK_ERR_INVALID, "program", p->text, n->pos, "split the program into several fusions",
                             "more than %d nodes (UK_MAX_FUSE_NODES)", UK_MAX_FUSE_NODES);
    return -1;
  }
  int id = uk__fuse_prog_add(p->prog, n);
  if (id < 0) p->status = uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
  return id;
}

/* Out of line, as the node it builds would take stack in every level of
 * the recursion that calls it. */
static __attribute__((noinline)) int op_node(parser *p, int op, size_t pos, int a, int b, int c) {
  uk_fuse_node n = {0};
  n.kind = UK_FN_OP;
  n.op = op;
  n.pos = pos;
  n.nargs = uk__fuse_op_info(op)->nargs;
  n.arg[0] = a;
  n.arg[1] = b;
  n.arg[2] = c;
  return add(p, &n);
}

static int lookup(const parser *p, const char *s, size_t len) {
  const int *k = uk__nametab_find(&p->names, s, len);
  return k ? *k : -1;
}

/* One recursion level more (a group, call, unary operator or '**'
 * operand at pos): 0, or -1 with the error set past UK_MAX_FUSE_DEPTH. */
static int deeper(parser *p, size_t pos) {
  if (++p->nest <= UK_MAX_FUSE_DEPTH) return 0;
  uk__error_at(UK_ERR_SYNTAX, "program", p->text, pos, "assign inner parts to temporaries (t = ...) first",
               "expression nested deeper than %d levels (UK_MAX_FUSE_DEPTH)", UK_MAX_FUSE_DEPTH);
  return -1;
}

static int parse_expr(parser *p);

/* A number literal: ints (decimal, 0x), floats, imaginary 'j'. */
static __attribute__((noinline)) int parse_number(parser *p) { /* its buffers: out of the recursion */
  uk_fuse_node n = {0};
  n.kind = UK_FN_CONST;
  n.pos = p->t.pos;
  char buf[128];
  size_t len = 0;
  for (size_t k = 0; k < p->t.len && len < sizeof buf - 1; k++)
    if (p->text[p->t.pos + k] != '_') buf[len++] = p->text[p->t.pos + k];
  buf[len] = 0;
  int imag = len > 0 && (buf[len - 1] == 'j' || buf[len - 1] == 'J');
  if (imag) buf[--len] = 0;
  char *end = NULL;
  int is_float = imag || strpbrk(buf, ".eE") != NULL;
  if (buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X')) is_float = 0;
  if (is_float) {
    double v = strtod(buf, &end);
    n.ckind = imag ? UK_CK_COMPLEX : UK_CK_FLOAT;
    if (imag) n.im = v;
    else n.re = v;
  } else {
    unsigned long long v = strtoull(buf, &end, 0);
    if (v > (unsigned long long)INT64_MAX) {
      err(p, p->t.pos, "fusion integers are int64 (write a float literal instead)", "integer literal out of range");
      return -1;
    }
    n.ckind = UK_CK_INT;
    n.ival = (int64_t)v;
  }
  if (!end || *end || len == 0) {
    err(p, p->t.pos, NULL, "malformed number");
    return -1;
  }
  next(p);
  return add(p, &n);
}

/* The value of an axis= / keepdims= / ddof= keyword: an int, -int, a tuple of them, None, True/False. */
static uk_status parse_int(parser *p, int *v) {
  int neg = 0;
  if (is_op(p, "-")) {
    neg = 1;
    next(p);
  }
  if (p->t.kind != T_NUM) return err(p, p->t.pos, NULL, "expected an integer");
  long long x = strtoll(p->text + p->t.pos, NULL, 10);
  for (size_t k = 0; k < p->t.len; k++)
    if (!is_digit(p->text[p->t.pos + k])) return err(p, p->t.pos, NULL, "expected an integer");
  if (x > 64) return err(p, p->t.pos, NULL, "value out of range");
  *v = (int)(neg ? -x : x);
  next(p);
  return UK_OK;
}

static uk_status parse_axis(parser *p, uk_fuse_node *n) {
  n->axis_all = 0;
  n->naxes = 0;
  if (is_name(p, "None")) {
    n->axis_all = 1;
    next(p);
    return UK_OK;
  }
  int tuple = is_op(p, "(");
  if (tuple) next(p);
  while (!(tuple && is_op(p, ")"))) {
    if (n->naxes == UK_MAX_NDIM) return err(p, p->t.pos, NULL, "too many axes");
    uk_status s = parse_int(p, &n->axes[n->naxes]);
    if (s) return s;
    n->naxes++;
    if (!tuple) break;
    if (!is_op(p, ",")) break;
    next(p);
  }
  if (tuple) {
    if (!is_op(p, ")")) return err(p, p->t.pos, NULL, "expected ')' after the axes");
    next(p);
  }
  return UK_OK;
}

static uk_status parse_bool(parser *p, int *v) {
  if (is_name(p, "True") || is_name(p, "False")) {
    *v = is_name(p, "True");
    next(p);
    return UK_OK;
  }
  return parse_int(p, v);
}

/* sum(x, axis=..., keepdims=..., ddof=...) after the '(' */
static int parse_reduction(parser *p, int red, size_t pos) {
  uk_fuse_node n = {0};
  n.kind = UK_FN_RED;
  n.op = red;
  n.pos = pos;
  n.nargs = 1;
  n.axis_all = 1;
  int a = parse_expr(p);
  if (a < 0) return -1;
  n.arg[0] = a;
  int npos = 1;
  while (is_op(p, ",")) {
    next(p);
    uk_status s;
    if (p->t.kind == T_NAME && p->text[p->pos] == '=' && p->text[p->pos + 1] != '=') {
      tok kw = p->t;
      next(p);
      next(p);
      const char *k = p->text + kw.pos;
      if (kw.len == 4 && !memcmp(k, "axis", 4)) s = parse_axis(p, &n);
      else if (kw.len == 8 && !memcmp(k, "keepdims", 8)) s = parse_bool(p, &n.keepdims);
      else if (kw.len == 4 && !memcmp(k, "ddof", 4) && (red == UK_RED_VAR || red == UK_RED_STD))
        s = parse_int(p, &n.ddof);
      else s = err(p, kw.pos, "reductions take axis=, keepdims= (and ddof= for var/std)", "unknown keyword");
    } else if (npos++ == 1) s = parse_axis(p, &n);
    else s = err(p, p->t.pos, NULL, "too many arguments");
    if (s) return -1;
  }
  if ((red == UK_RED_ARGMAX || red == UK_RED_ARGMIN) && n.naxes > 1) {
    err(p, pos, NULL, "argmax/argmin take one axis or None");
    return -1;
  }
  return add(p, &n);
}

static uk_status parse_dtype_arg(parser *p, uk_dtype *t) {
  size_t off = p->t.kind == T_STR ? 1 : 0;
  if (p->t.kind != T_STR && p->t.kind != T_NAME) return err(p, p->t.pos, NULL, "expected a dtype");
  if (p->t.len < 2 * off || !uk__dtype_lookup(p->text + p->t.pos + off, p->t.len - 2 * off, t))
    return err(p, p->t.pos, "dtypes are NumPy names: float32, 'f4', int64, ...", "unknown dtype");
  next(p);
  return UK_OK;
}

/* The ')' that ends a group or call whose content parsed as node id. */
static int close_paren(parser *p, int id) {
  if (id < 0) return -1;
  if (!is_op(p, ")")) {
    err(p, p->t.pos, NULL, "expected ')'");
    return -1;
  }
  p->depth--;
  next(p);
  return id;
}

/* NAME '(' ... ')' after the name; returns the node id. */
static __attribute__((noinline)) int parse_call(parser *p, tok name) {
  const char *s = p->text + name.pos;
  if (deeper(p, name.pos)) return -1;
  next(p); /* '(' */
  p->depth++;
  int id = -1;
  int red = uk__fuse_red_lookup(s, name.len);
  int op = uk__fuse_op_lookup(s, name.len);
  uk_dtype cast = (uk_dtype)0; /* set by the lookup, or by astype's dtype argument */
  if (red >= 0) {
    id = parse_reduction(p, red, name.pos);
  } else if (op >= 0) {
    int args[UK_FUSE_MAX_ARGS] = {-1, -1, -1}, n = 0, want = uk__fuse_op_info(op)->nargs;
    while (!is_op(p, ")")) {
      if (n == want) {
        err(p, p->t.pos, NULL, "too many arguments");
        return -1;
      }
      if ((args[n++] = parse_expr(p)) < 0) return -1;
      if (!is_op(p, ",")) break;
      next(p);
    }
    if (n != want) {
      uk__error_at(UK_ERR_SYNTAX, "program", p->text, p->t.pos, NULL, "%.*s takes %d argument%s, got %d",
                   (int)name.len, s, want, want == 1 ? "" : "s", n);
      return -1;
    }
    id = op_node(p, op, name.pos, args[0], args[1], args[2]);
  } else if ((name.len == 6 && !memcmp(s, "astype", 6)) || uk__dtype_lookup(s, name.len, &cast)) {
    uk_fuse_node n = {0};
    n.kind = UK_FN_CAST;
    n.pos = name.pos;
    n.nargs = 1;
    n.cast = cast;
    if ((n.arg[0] = parse_expr(p)) < 0) return -1;
    if (name.len == 6 && !memcmp(s, "astype", 6)) {
      if (!is_op(p, ",")) {
        err(p, p->t.pos, "write astype(x, 'float32')", "expected ',' and a dtype");
        return -1;
      }
      next(p);
      if (parse_dtype_arg(p, &n.cast)) return -1;
    }
    id = add(p, &n);
  } else {
    err(p, name.pos, "see the function list in ukern.h (uk_fusion_create)", "unknown function");
    return -1;
  }
  p->nest--;
  return close_paren(p, id);
}

static int name_const(parser *p, tok name);

static int parse_primary(parser *p) {
  if (p->t.kind == T_NUM) return parse_number(p);
  if (is_op(p, "(")) {
    if (deeper(p, p->t.pos)) return -1;
    p->depth++;
    next(p);
    int id = parse_expr(p);
    p->nest--;
    return close_paren(p, id);
  }
  if (p->t.kind != T_NAME) {
    err(p, p->t.pos, NULL, p->t.kind == T_EOF || p->t.kind == T_SEP ? "expected an expression" : "unexpected token");
    return -1;
  }
  tok name = p->t;
  next(p);
  if (is_op(p, "(")) return parse_call(p, name);
  int b = lookup(p, p->text + name.pos, name.len);
  if (b >= 0) return p->bound[b];
  return name_const(p, name);
}

/* A name that is not bound: True, False, inf, nan, pi or e. Out of line:
 * its node would take stack in every level of the recursion. */
static __attribute__((noinline)) int name_const(parser *p, tok name) {
  const char *s = p->text + name.pos;
  uk_fuse_node n = {0};
  n.kind = UK_FN_CONST;
  n.pos = name.pos;
  if ((name.len == 4 && !memcmp(s, "True", 4)) || (name.len == 5 && !memcmp(s, "False", 5))) {
    n.ckind = UK_CK_BOOL;
    n.ival = name.len == 4;
  } else if ((name.len == 3 && !memcmp(s, "inf", 3)) || (name.len == 3 && !memcmp(s, "nan", 3)) ||
             (name.len == 2 && !memcmp(s, "pi", 2)) || (name.len == 1 && s[0] == 'e')) {
    n.ckind = UK_CK_FLOAT;
    n.re = s[0] == 'i' ? INFINITY : s[0] == 'n' ? NAN : s[0] == 'p' ? 3.14159265358979323846 : 2.71828182845904523536;
  } else {
    err(p, name.pos, "names are inputs, outputs assigned earlier, or temporaries assigned earlier",
        "unknown name");
    return -1;
  }
  return add(p, &n);
}

static int parse_factor(parser *p);

static int parse_power(parser *p) {
  int a = parse_primary(p);
  if (a < 0 || !is_op(p, "**")) return a;
  size_t pos = p->t.pos;
  if (deeper(p, pos)) return -1;
  next(p);
  int b = parse_factor(p);
  p->nest--;
  return b < 0 ? -1 : op_node(p, UK_OP_POW, pos, a, b, -1);
}

static int parse_factor(parser *p) {
  int op = is_op(p, "-") ? UK_OP_NEG : is_op(p, "+") ? UK_OP_POS : is_op(p, "~") ? UK_OP_INVERT : -1;
  if (op < 0) return parse_power(p);
  size_t pos = p->t.pos;
  if (deeper(p, pos)) return -1;
  next(p);
  int a = parse_factor(p);
  p->nest--;
  return a < 0 ? -1 : op_node(p, op, pos, a, -1, -1);
}

/* One precedence level of left-associative binary operators. */
typedef struct level {
  const char *tok[5];
  int op[5];
} level;

static const level levels[] = {
    {{"|"}, {UK_OP_OR}},
    {{"^"}, {UK_OP_XOR}},
    {{"&"}, {UK_OP_AND}},
    {{"+", "-"}, {UK_OP_ADD, UK_OP_SUB}},
    {{"*", "/", "//", "%"}, {UK_OP_MUL, UK_OP_DIV, UK_OP_FLOORDIV, UK_OP_MOD}},
};

static int parse_level(parser *p, int lv) {
  if (lv == (int)(sizeof levels / sizeof levels[0])) return parse_factor(p);
  int a = parse_level(p, lv + 1);
  while (a >= 0) {
    int op = -1;
    for (int k = 0; k < 5 && levels[lv].tok[k]; k++)
      if (is_op(p, levels[lv].tok[k])) op = levels[lv].op[k];
    if (op < 0) break;
    size_t pos = p->t.pos;
    next(p);
    int b = parse_level(p, lv + 1);
    a = b < 0 ? -1 : op_node(p, op, pos, a, b, -1);
  }
  return a;
}

static int cmp_op(const parser *p) {
  static const char *const t[] = {"<", "<=", ">", ">=", "==", "!="};
  static const int o[] = {UK_OP_LT, UK_OP_LE, UK_OP_GT, UK_OP_GE, UK_OP_EQ, UK_OP_NE};
  for (int k = 0; k < 6; k++)
    if (is_op(p, t[k])) return o[k];
  return -1;
}

static int parse_expr(parser *p) {
  int a = parse_level(p, 0);
  int op = a < 0 ? -1 : cmp_op(p);
  if (op < 0) return a;
  size_t pos = p->t.pos;
  next(p);
  int b = parse_level(p, 0);
  if (b < 0) return -1;
  if (cmp_op(p) >= 0) {
    err(p, p->t.pos, "write logical_and(a < b, b < c)", "chained comparisons are not supported");
    return -1;
  }
  return op_node(p, op, pos, a, b, -1);
}

/* Binds the name (borrowed: program text or an input name) to node. */
static uk_status bind(parser *p, const char *s, size_t len, int node) {
  if (p->nnames == p->cap) {
    int cap = p->cap ? 2 * p->cap : 16;
    int *bound = realloc(p->bound, (size_t)cap * sizeof *bound);
    if (!bound) return uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
    p->bound = bound;
    p->cap = cap;
  }
  int added;
  int *k = uk__nametab_put(&p->names, s, len, p->nnames, &added);
  if (!k) return uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
  if (added) p->nnames++;
  p->bound[*k] = node;
  return UK_OK;
}

static uk_status parse_program(parser *p) {
  uk_fuse_prog *g = p->prog;
  for (int k = 0; k < g->nin; k++) {
    uk_fuse_node n = {0};
    n.kind = UK_FN_INPUT;
    n.input = k;
    if (add(p, &n) < 0) return UK_ERR_NOMEM;
    uk_status s = bind(p, g->in_names[k], strlen(g->in_names[k]), k);
    if (s) return s;
  }
  next(p);
  while (p->t.kind != T_EOF) {
    if (p->t.kind == T_SEP) {
      next(p);
      continue;
    }
    if (p->t.kind != T_NAME) return err(p, p->t.pos, "statements are `name = expression`", "expected a name");
    tok target = p->t;
    next(p);
    if (!is_op(p, "=")) return err(p, p->t.pos, "statements are `name = expression`", "expected '='");
    int known = lookup(p, p->text + target.pos, target.len);
    if (known >= 0 && known < g->nin) /* the inputs were bound first */
      return err(p, target.pos, "assign to an output or a new temporary name", "cannot assign to an input");
    next(p);
    p->nest = 0;
    int id = parse_expr(p);
    if (id < 0) return p->status ? p->status : UK_ERR_SYNTAX;
    if (p->t.kind != T_SEP && p->t.kind != T_EOF)
      return err(p, p->t.pos, "separate statements with ';' or a newline", "unexpected token after the expression");
    uk_status s = bind(p, p->text + target.pos, target.len, id);
    if (s) return s;
    for (int k = 0; k < g->nout; k++)
      if (strlen(g->out_names[k]) == target.len && !memcmp(g->out_names[k], p->text + target.pos, target.len))
        g->out_node[k] = id;
  }
  for (int k = 0; k < g->nout; k++)
    if (g->out_node[k] < 0)
      return uk__errorf(UK_ERR_SYNTAX, "program: output '%s' is never assigned (add `%s = ...`)", g->out_names[k],
                        g->out_names[k]);
  return UK_OK;
}

uk_status uk__fuse_names(const char *what, const char *list, char ***names, int *count) {
  *names = NULL;
  *count = 0;
  if (!list) return uk__errorf(UK_ERR_INVALID, "%s: NULL name list", what);
  int n = 0, cap = 0;
  char **v = NULL;
  size_t k = 0, len = strlen(list);
  uk_status s = UK_OK;
  while (k <= len) {
    size_t b = k;
    while (k < len && list[k] != ',') k++;
    size_t e = k;
    while (b < e && (list[b] == ' ' || list[b] == '\t' || list[b] == '\n')) b++;
    while (e > b && (list[e - 1] == ' ' || list[e - 1] == '\t' || list[e - 1] == '\n')) e--;
    if (e == b && len == 0) break;
    int ok = e > b && is_alpha(list[b]);
    for (size_t j = b; j < e && ok; j++) ok = is_alpha(list[j]) || is_digit(list[j]);
    if (!ok) {
      s = uk__error_at(UK_ERR_SYNTAX, what, list, b, "names are Python identifiers separated by commas",
                       "expected a name");
      goto out;
    }
    if (n == UK_MAX_FUSE_INPUTS) { /* before reading on: n stays small, the checks below cheap */
      s = uk__error_at(UK_ERR_INVALID, what, list, b, NULL, "more than %d names (UK_MAX_FUSE_INPUTS)",
                       UK_MAX_FUSE_INPUTS);
      goto out;
    }
    for (int j = 0; j < n; j++)
      if (strlen(v[j]) == e - b && !memcmp(v[j], list + b, e - b)) {
        s = uk__error_at(UK_ERR_SYNTAX, what, list, b, NULL, "duplicate name '%.*s'", (int)(e - b), list + b);
        goto out;
      }
    if (n == cap) {
      cap = cap ? 2 * cap : 8;
      char **nv = realloc(v, (size_t)cap * sizeof *nv);
      if (!nv) goto nomem;
      v = nv;
    }
    if (!(v[n] = malloc(e - b + 1))) goto nomem;
    memcpy(v[n], list + b, e - b);
    v[n++][e - b] = 0;
    k++;
  }
  *names = v;
  *count = n;
  return UK_OK;
nomem:
  s = uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
out:
  for (int j = 0; j < n; j++) free(v[j]);
  free(v);
  return s;
}

int uk__fuse_prog_add(uk_fuse_prog *p, const uk_fuse_node *n) {
  if (p->nnodes == p->cap) {
    int cap = p->cap ? 2 * p->cap : 32;
    uk_fuse_node *v = realloc(p->nodes, (size_t)cap * sizeof *v);
    if (!v) return -1;
    p->nodes = v;
    p->cap = cap;
  }
  p->nodes[p->nnodes] = *n;
  return p->nnodes++;
}

void uk__fuse_prog_free(uk_fuse_prog *p) {
  if (!p) return;
  for (int k = 0; k < p->nin; k++) free(p->in_names[k]);
  for (int k = 0; k < p->nout; k++) free(p->out_names[k]);
  free(p->in_names);
  free(p->out_names);
  free(p->out_node);
  free(p->nodes);
  free(p->text);
  free(p);
}

uk_status uk__fuse_parse(const char *inputs, const char *outputs, const char *program, uk_fuse_prog **out) {
  if (!program) return uk__errorf(UK_ERR_INVALID, "fusion: program is NULL");
  parser p = {0};
  uk_status s = UK_ERR_NOMEM;
  uk_fuse_prog *g = calloc(1, sizeof *g);
  if (!g || !(g->text = strdup(program))) goto nomem;
  if ((s = uk__fuse_names("inputs", inputs, &g->in_names, &g->nin))) goto out;
  if ((s = uk__fuse_names("outputs", outputs, &g->out_names, &g->nout))) goto out;
  if (g->nout == 0) {
    s = uk__errorf(UK_ERR_SYNTAX, "outputs: a fusion needs at least one output");
    goto out;
  }
  for (int k = 0; k < g->nout; k++)
    for (int j = 0; j < g->nin; j++)
      if (!strcmp(g->out_names[k], g->in_names[j])) {
        s = uk__errorf(UK_ERR_SYNTAX, "outputs: '%s' is also an input (outputs are new names)", g->out_names[k]);
        goto out;
      }
  if (!(g->out_node = malloc((size_t)(unsigned)g->nout * sizeof *g->out_node))) goto nomem;
  for (int k = 0; k < g->nout; k++) g->out_node[k] = -1;
  p.text = g->text;
  p.prog = g;
  s = parse_program(&p);
  goto out;
nomem:
  s = uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
out:
  uk__nametab_free(&p.names);
  free(p.bound);
  if (s) uk__fuse_prog_free(g);
  else *out = g;
  return s;
}
