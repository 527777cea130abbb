/* Kernel definitions from a planned fusion program: ElementwiseKernel
 * (in_params, out_params, operation) and ReductionKernel (map, reduce,
 * post-map, identity, reduce_type) text with concrete dtypes.
 *
 * Every node becomes one typed local (`_uk_v<id>`) in NumPy's result dtype;
 * float16/bfloat16 are computed in float and rounded per operation as NumPy
 * does. Parameters are named in<k> (program inputs), out<k> (outputs) and
 * tm<t> (intermediates), so user names never reach the generated code and
 * cannot collide with it. Helpers (floor division, ...) live in
 * <ukern/fusion.cuh>. */
#include <inttypes.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "codegen/dtype.h"
#include "codegen/fuse_emit.h"
#include "codegen/scalar.h"

const char *uk__fuse_ctype(uk_dtype t) { return uk__dtype_info(t)->ctype; }
static const char *ct(uk_dtype t) { return uk__fuse_ctype(t); }
static int is_half(uk_dtype t) { return t == UK_FLOAT16 || t == UK_BFLOAT16; }
static uk_dtype_kind kind(uk_dtype t) { return uk__dtype_info(t)->kind; }
/* the type a value of dtype t is computed in */
static uk_dtype compute(uk_dtype t) { return is_half(t) ? UK_FLOAT32 : t; }
static uk_dtype real_of(uk_dtype c) { return c == UK_COMPLEX128 ? UK_FLOAT64 : UK_FLOAT32; }

/* Appends `x` (of dtype from) converted to dtype `to`. */
static void cv(uk_strbuf *sb, const char *x, uk_dtype from, uk_dtype to) {
  if (from == to) {
    uk__sb_add(sb, x);
    return;
  }
  uk_dtype_kind kf = kind(from), kt = kind(to);
  if (kt == UK_KIND_BOOL) {
    if (kf == UK_KIND_COMPLEX) uk__sb_addf(sb, "_uk_nz(%s)", x);
    else if (is_half(from)) uk__sb_addf(sb, "(float(%s) != 0.0f)", x);
    else uk__sb_addf(sb, "((%s) != 0)", x);
  } else if (kt == UK_KIND_COMPLEX) {
    if (kf == UK_KIND_COMPLEX) uk__sb_addf(sb, "%s(%s)", ct(to), x);
    else if (is_half(from)) uk__sb_addf(sb, "%s(float(%s))", ct(to), x);
    else uk__sb_addf(sb, "%s((%s)(%s))", ct(to), ct(real_of(to)), x);
  } else if (is_half(to)) {
    if (kf == UK_KIND_COMPLEX) uk__sb_addf(sb, "%s((%s).real())", ct(to), x);
    else if (kf == UK_KIND_BOOL) uk__sb_addf(sb, "%s((%s) ? 1.0f : 0.0f)", ct(to), x);
    else if (is_half(from)) uk__sb_addf(sb, "%s(float(%s))", ct(to), x);
    else uk__sb_addf(sb, "%s(%s)", ct(to), x);
  } else {
    if (kf == UK_KIND_COMPLEX) uk__sb_addf(sb, "((%s)(%s).real())", ct(to), x);
    else if (is_half(from)) uk__sb_addf(sb, "((%s)float(%s))", ct(to), x);
    else uk__sb_addf(sb, "((%s)(%s))", ct(to), x);
  }
}

/* `x` of dtype from, as dtype loop, computed in compute(loop) */
static void operand(uk_strbuf *sb, const char *x, uk_dtype from, uk_dtype loop) {
  if (!is_half(loop)) {
    cv(sb, x, from, loop);
    return;
  }
  uk_strbuf t;
  uk__sb_init(&t);
  cv(&t, x, from, loop);
  uk__sb_addf(sb, "float(%s)", uk__sb_str(&t));
  if (t.failed) sb->failed = 1;
  uk__sb_release(&t);
}

static void literal(uk_strbuf *sb, double v) {
  if (isnan(v)) uk__sb_add(sb, "__longlong_as_double(0x7ff8000000000000LL)");
  else if (isinf(v)) uk__sb_addf(sb, "%s__longlong_as_double(0x7ff0000000000000LL)", v < 0 ? "-" : "");
  else uk__sb_addf(sb, "%.17g", v);
  if (!isnan(v) && !isinf(v) && v == floor(v) && fabs(v) < 1e16) uk__sb_add(sb, ".0");
}

typedef uk_fuse_fn fn;

static const char *leaf(const fn *f, int id) {
  return f->leaf[id] && !(f->domain && f->domain[id] == f->own_domain) ? f->leaf[id] : NULL;
}

static void node_name(const fn *f, int id, uk_strbuf *out) {
  const uk_fuse_node *n = &f->g->nodes[id];
  if (leaf(f, id)) uk__sb_add(out, leaf(f, id));
  else if (n->kind == UK_FN_CONST) {
    switch (n->ckind) {
    case UK_CK_BOOL: uk__sb_add(out, n->ival ? "true" : "false"); break;
    case UK_CK_INT: uk__sb_addf(out, "%" PRId64 "LL", n->ival); break;
    case UK_CK_FLOAT: literal(out, n->re); break;
    case UK_CK_COMPLEX:
      uk__sb_add(out, "ukern::complex<double>(");
      literal(out, n->re);
      uk__sb_add(out, ", ");
      literal(out, n->im);
      uk__sb_add(out, ")");
      break;
    }
  } else uk__sb_addf(out, "_uk_v%d", id);
}

/* operand k of node n as dtype loop (computed type) */
static void arg(fn *f, const uk_fuse_node *n, int k, uk_dtype loop, uk_strbuf *out) {
  const uk_fuse_node *c = &f->g->nodes[n->arg[k]];
  if (is_half(loop) && c->kind == UK_FN_CONST && (c->ckind == UK_CK_INT || c->ckind == UK_CK_FLOAT)) {
    /* a Python number rounded to float16/bfloat16 here, as NumPy converts it
     * first: a float literal, not a conversion per element */
    double v = c->ckind == UK_CK_INT ? (double)c->ival : c->re;
    double r = loop == UK_FLOAT16 ? uk__f16_bits_to_f64(uk__f64_to_f16_bits(v))
                                  : uk__bf16_bits_to_f64(uk__f64_to_bf16_bits(v));
    uk__sb_add(out, "((float)");
    literal(out, r);
    uk__sb_add(out, ")");
    return;
  }
  uk_strbuf a;
  uk__sb_init(&a);
  node_name(f, n->arg[k], &a);
  operand(out, uk__sb_str(&a), f->p->type[n->arg[k]].dtype, loop);
  if (a.failed) out->failed = 1;
  uk__sb_release(&a);
}

static void emit_op(fn *f, int id, uk_strbuf *e) {
  const uk_fuse_node *n = &f->g->nodes[id];
  const uk_fuse_opinfo *oi = uk__fuse_op_info(n->op);
  uk_dtype d = f->p->type[id].dtype, loop = d;
  if (oi->rule == UK_RULE_CMP) {
    uk_fuse_type a = f->p->type[n->arg[0]], b = f->p->type[n->arg[1]];
    loop = uk__fuse_promote(a, b).dtype;
    /* a Python int compares by value (int8 == 300 is False, not a wrapped 44) */
    uk_dtype_kind kl = kind(loop);
    if ((a.weak != b.weak) && (kl == UK_KIND_INT || kl == UK_KIND_UINT) && (a.weak ? a : b).dtype == UK_INT64)
      loop = loop == UK_UINT64 ? UK_UINT64 : UK_INT64;
  } else if (oi->rule == UK_RULE_ABS || oi->rule == UK_RULE_PRED || oi->rule == UK_RULE_COUNT ||
             (n->op == UK_OP_ANGLE && kind(f->p->type[n->arg[0]].dtype) == UK_KIND_COMPLEX))
    loop = f->p->type[n->arg[0]].dtype; /* angle: of the complex value itself; the result is real */
  else if (oi->rule == UK_RULE_LOGIC)
    loop = UK_BOOL;
  uk_strbuf a[3];
  for (int k = 0; k < 3; k++) uk__sb_init(&a[k]);
  for (int k = 0; k < n->nargs; k++)
    arg(f, n, k, oi->rule == UK_RULE_WHERE && k == 0 ? UK_BOOL : loop, &a[k]);
  const char *x = uk__sb_str(&a[0]), *y = uk__sb_str(&a[1]), *z = uk__sb_str(&a[2]);
  const char *c = oi->c;
  if (loop == UK_BOOL && n->op == UK_OP_ADD) c = "||";
  if (loop == UK_BOOL && n->op == UK_OP_MUL) c = "&&";
  if (n->op == UK_OP_INVERT && loop == UK_BOOL) c = "!";
  if (n->op == UK_OP_NEXTAFTER && is_half(loop))
    c = loop == UK_FLOAT16 ? "_uk_nextafter16<ukern::half>" : "_uk_nextafter16<ukern::bfloat16>";
  if (n->op == UK_OP_WHERE) uk__sb_addf(e, "(%s ? %s : %s)", x, y, z);
  else if (n->op == UK_OP_DIV && loop == UK_FLOAT32 && f->rdiv && f->rdiv[n->arg[1]] &&
           f->p->type[n->arg[1]].dtype == UK_FLOAT32)
    uk__sb_addf(e, f->rdiv_try ? "_uk_rdiv_try(%s, _uk_d%d, _uk_exact, _uk_bad)" : "_uk_rdiv(%s, _uk_d%d)", x,
                n->arg[1]); /* the same value as x / y */
  else if (c[0] != '_' && n->nargs == 2) uk__sb_addf(e, "(%s %s %s)", x, c, y);
  else if (c[0] != '_') uk__sb_addf(e, "(%s%s)", c, x);
  else if (n->nargs == 1) uk__sb_addf(e, "%s(%s)", c, x);
  else if (n->nargs == 2) uk__sb_addf(e, "%s(%s, %s)", c, x, y);
  else uk__sb_addf(e, "%s(%s, %s, %s)", c, x, y, z);
  for (int k = 0; k < 3; k++) {
    if (a[k].failed) e->failed = 1;
    uk__sb_release(&a[k]);
  }
}

/* Whether `_uk_v<id>` is still to be defined (not a leaf, constant or input). */
static int pending(const fn *f, int id) {
  const uk_fuse_node *n = &f->g->nodes[id];
  return !leaf(f, id) && !f->done[id] && n->kind != UK_FN_CONST && n->kind != UK_FN_INPUT;
}

/* Defines `_uk_v<id>`, its operands defined already. */
static void define(fn *f, int id) {
  const uk_fuse_node *n = &f->g->nodes[id];
  f->done[id] = 1;
  uk_dtype d = f->p->type[id].dtype;
  uk_strbuf e;
  uk__sb_init(&e);
  if (n->kind == UK_FN_CAST) {
    node_name(f, n->arg[0], &e);
    uk__sb_addf(f->body, "%s%s _uk_v%d = ", f->indent, ct(d), id);
    cv(f->body, uk__sb_str(&e), f->p->type[n->arg[0]].dtype, d);
    uk__sb_add(f->body, ";\n");
  } else {
    emit_op(f, id, &e);
    uk_dtype c = compute(d);
    uk__sb_addf(f->body, "%s%s _uk_v%d = ", f->indent, ct(d), id);
    /* the expression is of the compute type (or bool/real for comparisons, abs) */
    uk_fuse_rule r = uk__fuse_op_info(n->op)->rule;
    if (is_half(d)) uk__sb_addf(f->body, "%s(%s);\n", ct(d), uk__sb_str(&e));
    else if (r == UK_RULE_CMP || r == UK_RULE_LOGIC || r == UK_RULE_PRED || kind(c) == UK_KIND_COMPLEX)
      uk__sb_addf(f->body, "%s;\n", uk__sb_str(&e));
    else uk__sb_addf(f->body, "(%s)%s;\n", ct(c), uk__sb_str(&e));
  }
  if (e.failed) f->body->failed = 1;
  uk__sb_release(&e);
}

/* Defines `_uk_v<root>` after its operands, depth first in argument order,
 * with a stack of its own: a program is a chain as long as it has
 * statements (UK_MAX_FUSE_NODES), too deep for the C stack. Operands have
 * lower ids than their node, so the stack holds at most root + 1 entries. */
static void emit_node(fn *f, int root) {
  if (!pending(f, root)) return;
  int small[64], *stack = small;
  size_t n = 0, cap = sizeof small / sizeof small[0];
  stack[n++] = root;
  while (n > 0) {
    int id = stack[n - 1], k = 0;
    const uk_fuse_node *nd = &f->g->nodes[id];
    while (k < nd->nargs && !pending(f, nd->arg[k])) k++;
    if (k == nd->nargs) {
      n--;
      define(f, id);
      continue;
    }
    if (n == cap) {
      size_t ncap = 2 * cap;
      int *grown = stack == small ? malloc(ncap * sizeof *grown) : realloc(stack, ncap * sizeof *grown);
      if (!grown) {
        f->body->failed = 1;
        break;
      }
      if (stack == small) memcpy(grown, small, sizeof small);
      stack = grown;
      cap = ncap;
    }
    stack[n++] = nd->arg[k];
  }
  if (stack != small) free(stack);
}

/* Appends the value of node id converted to dtype `to`. */
void uk__fuse_value(fn *f, int id, uk_dtype to, uk_strbuf *out) {
  emit_node(f, id);
  uk_strbuf t;
  uk__sb_init(&t);
  node_name(f, id, &t);
  cv(out, uk__sb_str(&t), f->p->type[id].dtype, to);
  if (t.failed) out->failed = 1;
  uk__sb_release(&t);
}

/* ------------------------------------------------------------------------ */
/* kernels                                                                   */

typedef uk_fuse_ectx ctx;

/* Resets the per-function state: inputs and intermediates are leaves. */
void uk__fuse_fn_begin(ctx *c, fn *f, uk_strbuf *body, const char *indent) {
  int nn = c->g->nnodes;
  memset(c->done, 0, (size_t)nn);
  f->g = c->g;
  f->p = c->p;
  f->leaf = c->leaf;
  f->done = c->done;
  f->body = body;
  f->indent = indent;
  f->domain = c->domain;
  f->own_domain = -2;
  f->rdiv = NULL;
  f->rdiv_try = 0;
}

static uk_status add_kernel(uk_fuse_plan *p, uk_fuse_kernel **out) {
  uk_fuse_kernel *v = realloc(p->kernels, (size_t)(p->nkernels + 1) * sizeof *v);
  if (!v) return uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
  p->kernels = v;
  *out = memset(&v[p->nkernels++], 0, sizeof *v);
  return UK_OK;
}

/* Parameter list of the leaves a body used (inputs by index, then
 * intermediates), appended to params ("float32 in0, ...") and, when
 * decl/call are given, as C declarations and call arguments. */
static uk_status leaf_params(ctx *c, const char *body, int skip_domain, uk_strbuf *params, uk_fuse_kernel *k,
                             uk_strbuf *decl, uk_strbuf *call) {
  const uk_fuse_prog *g = c->g;
  int cap = g->nnodes;
  if (!(k->in_src = malloc((size_t)(cap + 1) * sizeof *k->in_src))) return uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
  for (int pass = 0; pass < 2; pass++)
    for (int id = 0; id < g->nnodes; id++) {
      if (!c->leaf[id] || (pass == 0) != (g->nodes[id].kind == UK_FN_INPUT)) continue;
      if (pass == 1 && c->domain[id] == skip_domain) continue; /* written here, not read */
      /* whole-word search: in1 must not match in10 */
      size_t len = strlen(c->leaf[id]);
      int found = 0;
      for (const char *s = strstr(body, c->leaf[id]); s && !found; s = strstr(s + 1, c->leaf[id])) {
        char b = s == body ? ' ' : s[-1], a = s[len];
        found = !((b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || b == '_') &&
                !((a >= '0' && a <= '9') || (a >= 'a' && a <= 'z') || (a >= 'A' && a <= 'Z') || a == '_');
      }
      if (!found) continue;
      /* a kernel's limit, with room for an output: refused here, while
       * planning, rather than by the kernel made from the plan (and before
       * the rest of a long program is planned) */
      if (k->nin == UK_MAX_PARAMETERS - 1)
        return uk__errorf(UK_ERR_INVALID,
                          "fusion: a kernel of the plan reads more than %d inputs and intermediates "
                          "(UK_MAX_PARAMETERS is %d); split the program into several fusions",
                          UK_MAX_PARAMETERS - 1, UK_MAX_PARAMETERS);
      uk_dtype t = c->p->type[id].dtype;
      uk__sb_addf(params, "%s%s %s", params->len ? ", " : "", uk__dtype_info(t)->name, c->leaf[id]);
      if (decl) uk__sb_addf(decl, ", %s %s", ct(t), c->leaf[id]);
      if (call) uk__sb_addf(call, ", %s", c->leaf[id]);
      k->in_src[k->nin++] = pass == 0 ? g->nodes[id].input : -1 - c->temp_of[id];
    }
  return UK_OK;
}

/* The node of a kernel input source (program input k, or intermediate). */
static int leaf_of(const ctx *c, int src) {
  for (int q = 0; q < c->g->nnodes; q++)
    if (c->leaf[q] && (src >= 0 ? (c->g->nodes[q].kind == UK_FN_INPUT && c->g->nodes[q].input == src)
                                : (c->g->nodes[q].kind != UK_FN_INPUT && c->temp_of[q] == -1 - src)))
      return q;
  return -1;
}

static char *fmt_name(const char *name, const char *suffix, int n) {
  uk_strbuf sb;
  uk__sb_init(&sb);
  if (n < 0) uk__sb_add(&sb, name);
  else uk__sb_addf(&sb, "%s_%s%d", name, suffix, n);
  return uk__sb_detach(&sb);
}

void uk__fuse_banner(const ctx *c, uk_strbuf *pre, const char *user_preamble) {
  uk__sb_add(pre, "#include <ukern/fusion.cuh>\n// fusion parameters:");
  for (int k = 0; k < c->g->nin; k++) uk__sb_addf(pre, " in%d = %s", k, c->g->in_names[k]);
  for (int k = 0; k < c->g->nout; k++) uk__sb_addf(pre, " out%d = %s", k, c->g->out_names[k]);
  uk__sb_add(pre, "\n");
  if (user_preamble && *user_preamble) uk__sb_addf(pre, "%s\n", user_preamble);
}

/* Appends writes of program outputs and intermediates whose nodes satisfy
 * in_domain, as "out<k> = value;" lines, and their out_params / out_dst. */
/* One kernel output: its out_params entry, post-map declaration and call
 * argument, and the line that writes node id converted to dtype t. */
static void write_one(fn *f, const char *pfx, int num, int id, uk_dtype t, uk_strbuf *body, uk_strbuf *outp,
                      uk_strbuf *decl, uk_strbuf *call) {
  uk__sb_addf(outp, "%s%s %s%d", outp->len ? ", " : "", uk__dtype_info(t)->name, pfx, num);
  if (decl) uk__sb_addf(decl, ", %s &%s%d", ct(t), pfx, num);
  if (call) uk__sb_addf(call, ", %s%d", pfx, num);
  uk_strbuf v;
  uk__sb_init(&v);
  uk__fuse_value(f, id, t, &v);
  uk__sb_addf(body, "%s%s%d = %s;\n", f->indent, pfx, num, uk__sb_str(&v));
  if (v.failed) body->failed = 1;
  uk__sb_release(&v);
}

/* Writes the program outputs computed in `domain` (-1: elementwise) and,
 * for a reduction's post-map, the intermediates it materialises. */
static void write_outputs(ctx *c, fn *f, int domain, uk_strbuf *body, uk_strbuf *outp, uk_fuse_kernel *k,
                          uk_strbuf *decl, uk_strbuf *call) {
  const uk_fuse_prog *g = c->g;
  for (int o = 0; o < g->nout; o++)
    if (c->domain[g->out_node[o]] == domain) {
      write_one(f, "out", o, g->out_node[o], c->p->out_dtype[o], body, outp, decl, call);
      k->out_dst[k->nout++] = o;
    }
  for (int id = 0; domain >= 0 && id < g->nnodes; id++)
    if (c->mat[id] && c->domain[id] == domain) {
      write_one(f, "tm", c->temp_of[id], id, c->p->type[id].dtype, body, outp, decl, call);
      k->out_dst[k->nout++] = -1 - c->temp_of[id];
    }
}

static uk_status finish(uk_strbuf *const *sbs, int n, char **const *dst) {
  int failed = 0;
  for (int k = 0; k < n; k++) failed |= sbs[k]->failed;
  if (failed) return uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
  for (int k = 0; k < n; k++) *dst[k] = uk__sb_detach(sbs[k]);
  return UK_OK;
}

static uk_status emit_elementwise(ctx *c, const char *name, const char *user_preamble, int suffix) {
  uk_fuse_kernel *k = NULL; /* set on success (GCC cannot tell across add_kernel) */
  uk_status s = add_kernel(c->p, &k);
  if (s) return s;
  if (!(k->out_dst = malloc((size_t)(c->g->nout + c->g->nnodes + 1) * sizeof *k->out_dst)))
    return uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
  uk_strbuf body, inp, outp, pre;
  uk__sb_init(&body);
  uk__sb_init(&inp);
  uk__sb_init(&outp);
  uk__sb_init(&pre);
  fn f;
  uk__fuse_fn_begin(c, &f, &body, "");
  write_outputs(c, &f, -1, &body, &outp, k, NULL, NULL);
  s = leaf_params(c, uk__sb_str(&body), -2, &inp, k, NULL, NULL);
  uk__fuse_banner(c, &pre, user_preamble);
  k->name = fmt_name(name, "e", suffix);
  uk_strbuf *sbs[] = {&body, &inp, &outp, &pre};
  char **dst[] = {&k->operation, &k->in_params, &k->out_params, &k->preamble};
  if (!s) s = finish(sbs, 4, dst);
  for (int j = 0; j < 4; j++) uk__sb_release(sbs[j]);
  if (!s && !k->name) s = uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
  return s;
}

/* The online (max, sum of exp) pair's member kind, past the language's reductions. */
enum { RED_LSE = UK_RED_COUNT_ };

typedef uk_fuse_member member;

void uk__fuse_member_init(const ctx *c, int id, member *m) {
  const uk_fuse_node *n = &c->g->nodes[id];
  m->id = id;
  m->red = n->op;
  m->x = c->p->type[n->arg[0]].dtype;
  m->r = c->p->type[id].dtype;
  switch (m->red) {
  case UK_RED_MAX:
  case UK_RED_MIN:
  case UK_RED_ARGMAX:
  case UK_RED_ARGMIN: m->a = compute(m->x); break;
  case UK_RED_ANY:
  case UK_RED_ALL: m->a = UK_BOOL; break;
  default: m->a = compute(m->r); break;
  }
  if (m->red == UK_RED_MAX && c->p->partner[id] >= 0 && !c->no_online) m->red = RED_LSE;
  if (m->red == RED_LSE) snprintf(m->type, sizeof m->type, "_uk_lse<%s>", ct(m->a));
  else if (m->red == UK_RED_ARGMAX || m->red == UK_RED_ARGMIN)
    snprintf(m->type, sizeof m->type, "_uk_argpair<%s>", ct(m->a));
  else if (m->red == UK_RED_VAR || m->red == UK_RED_STD)
    snprintf(m->type, sizeof m->type, "_uk_welford<%s>", ct(m->a));
  else snprintf(m->type, sizeof m->type, "%s", ct(m->a));
}

void uk__fuse_member_map(fn *f, const member *m, uk_strbuf *out) {
  int arg = f->g->nodes[m->id].arg[0];
  uk_strbuf v;
  uk__sb_init(&v);
  uk__fuse_value(f, arg, m->a, &v);
  const char *x = uk__sb_str(&v), *a = ct(m->a);
  switch (m->red) {
  case UK_RED_ARGMAX:
  case UK_RED_ARGMIN: uk__sb_addf(out, "_uk_argpair_make<%s>(%s, _J)", a, x); break;
  case UK_RED_VAR:
  case UK_RED_STD: uk__sb_addf(out, "_uk_welford_make<%s>(1LL, %s, (%s)(0))", a, x, a); break;
  case RED_LSE: uk__sb_addf(out, "_uk_lse_of<%s>(%s)", a, x); break;
  default: uk__sb_add(out, x); break;
  }
  uk__sb_release(&v);
}

void uk__fuse_member_comb(const member *m, const char *x, const char *y, uk_strbuf *out) {
  static const char *const fmt[UK_RED_COUNT_] = {
      "%s + %s", "%s * %s", "_uk_max_comb(%s, %s)", "_uk_min_comb(%s, %s)", "%s + %s", "%s || %s", "%s && %s",
      "_uk_argmax_comb(%s, %s)", "_uk_argmin_comb(%s, %s)", "_uk_welford_comb(%s, %s)", "_uk_welford_comb(%s, %s)"};
  if (m->red == RED_LSE) uk__sb_addf(out, "_uk_lse_comb(%s, %s)", x, y);
  else uk__sb_addf(out, fmt[m->red], x, y);
}

void uk__fuse_member_ident(const member *m, uk_strbuf *out) {
  const char *a = ct(m->a);
  switch (m->red) {
  case UK_RED_SUM:
  case UK_RED_MEAN: uk__sb_addf(out, "(%s)(0)", a); break;
  case UK_RED_PROD: uk__sb_addf(out, "(%s)(1)", a); break;
  case UK_RED_MAX: uk__sb_addf(out, "_uk_lim<%s>::lowest()", a); break;
  case UK_RED_MIN: uk__sb_addf(out, "_uk_lim<%s>::highest()", a); break;
  case UK_RED_ANY: uk__sb_add(out, "false"); break;
  case UK_RED_ALL: uk__sb_add(out, "true"); break;
  case RED_LSE: uk__sb_addf(out, "_uk_lse_make<%s>(_uk_lim<%s>::lowest(), (%s)(0))", a, a, a); break;
  case UK_RED_ARGMAX:
  case UK_RED_ARGMIN:
    uk__sb_addf(out, "_uk_argpair_make<%s>(_uk_lim<%s>::%s(), _UK_ARG_NONE)", a, a,
                m->red == UK_RED_ARGMAX ? "lowest" : "highest");
    break;
  default: uk__sb_addf(out, "_uk_welford_make<%s>(0LL, (%s)(0), (%s)(0))", a, a, a); break;
  }
}

/* The reduced value of member m (acc text x) as the node's dtype. */
void uk__fuse_member_final(const ctx *c, const member *m, const char *x, uk_strbuf *out) {
  uk_strbuf v;
  uk__sb_init(&v);
  const char *a = ct(m->a);
  uk_dtype from = m->a;
  switch (m->red) {
  case UK_RED_MEAN: uk__sb_addf(&v, "(%s / (%s)(_uk_n))", x, a); break;
  case RED_LSE: uk__sb_addf(&v, "%s.m", x); break;
  case UK_RED_ARGMAX:
  case UK_RED_ARGMIN:
    uk__sb_addf(&v, "%s.i", x);
    from = UK_INT64;
    break;
  case UK_RED_VAR:
  case UK_RED_STD:
    uk__sb_addf(&v, "%s(%s.m2 / (%s)(%s.n - %d))", m->red == UK_RED_STD ? "_uk_sqrt" : "", x, a, x,
                c->g->nodes[m->id].ddof);
    break;
  default: uk__sb_add(&v, x); break;
  }
  cv(out, uk__sb_str(&v), from, m->r);
  if (v.failed) out->failed = 1;
  uk__sb_release(&v);
}

/* Member m's combine of x and y; with `step`, its in-order step where it
 * has one (argmax/argmin: y comes after x in the reduced order of one
 * thread, so a tie keeps x without comparing indices; _uk_argmax_step). */
static void member_comb(const member *m, const char *x, const char *y, int step, uk_strbuf *out) {
  if (step && (m->red == UK_RED_ARGMAX || m->red == UK_RED_ARGMIN))
    uk__sb_addf(out, m->red == UK_RED_ARGMAX ? "_uk_argmax_step(%s, %s)" : "_uk_argmin_step(%s, %s)", x, y);
  else uk__fuse_member_comb(m, x, y, out);
}

/* `acc name(const acc &a, const acc &b)`: the members' combines (step: their in-order steps). */
static void emit_comb_fn(uk_strbuf *pre, const char *name, const char *acc, int single, const member *ms, int nm,
                         int step) {
  uk__sb_addf(pre, "static __device__ __forceinline__ %s %s(const %s &a, const %s &b) {\n", acc, name, acc, acc);
  if (single) {
    uk__sb_add(pre, "  return ");
    member_comb(&ms[0], "a", "b", step, pre);
    uk__sb_add(pre, ";\n}\n");
    return;
  }
  uk__sb_add(pre, "  _uk_acc r;\n");
  for (int m = 0; m < nm; m++) {
    char x[16], y[16];
    snprintf(x, sizeof x, "a.m%d", m);
    snprintf(y, sizeof y, "b.m%d", m);
    uk__sb_addf(pre, "  r.m%d = ", m);
    member_comb(&ms[m], x, y, step, pre);
    uk__sb_add(pre, ";\n");
  }
  uk__sb_add(pre, "  return r;\n}\n");
}

static int needs_count(const member *ms, int n) {
  for (int k = 0; k < n; k++)
    if (ms[k].red == UK_RED_MEAN) return 1;
  return 0;
}

static uk_status emit_reduction(ctx *c, int group, const char *name, const char *user_preamble) {
  const uk_fuse_prog *g = c->g;
  uk_fuse_kernel *k = NULL; /* set on success (GCC cannot tell across add_kernel) */
  uk_status s = add_kernel(c->p, &k);
  if (s) return s;
  member *ms = calloc((size_t)g->nnodes + 1, sizeof *ms);
  k->out_dst = malloc((size_t)(g->nout + g->nnodes + 1) * sizeof *k->out_dst);
  if (!ms || !k->out_dst) {
    free(ms);
    return uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
  }
  int nm = 0;
  for (int id = 0; id < g->nnodes; id++)
    if (c->p->needed[id] && g->nodes[id].kind == UK_FN_RED && c->group_of[id] == group &&
        !(g->nodes[id].op == UK_RED_SUM && c->p->partner[id] >= 0)) {
      uk__fuse_member_init(c, id, &ms[nm++]);
      if (nm == 1) k->red_node = id, k->map_node = g->nodes[id].arg[0];
      if (ms[nm - 1].red == UK_RED_MAX || ms[nm - 1].red == RED_LSE || ms[nm - 1].red == UK_RED_MIN || ms[nm - 1].red == UK_RED_ARGMAX ||
          ms[nm - 1].red == UK_RED_ARGMIN)
        k->check_empty = 1;
    }
  int single = nm == 1;
  const char *acc = single ? ms[0].type : "_uk_acc";
  uk_strbuf pre, mapb, mdecl, mcall, postb, pdecl, pcall, inp, outp, tmp;
  uk_strbuf *all[] = {&pre, &mapb, &mdecl, &mcall, &postb, &pdecl, &pcall, &inp, &outp, &tmp};
  for (int j = 0; j < 10; j++) uk__sb_init(all[j]);
  uk__fuse_banner(c, &pre, user_preamble);
  if (!single) {
    uk__sb_add(&pre, "struct _uk_acc {\n");
    for (int m = 0; m < nm; m++) uk__sb_addf(&pre, "  %s m%d;\n", ms[m].type, m);
    uk__sb_add(&pre, "};\n");
  }
  /* identity */
  uk__sb_addf(&pre, "static __device__ __forceinline__ %s _uk_ident() {\n", acc);
  if (single) {
    uk__sb_add(&pre, "  return ");
    uk__fuse_member_ident(&ms[0], &pre);
    uk__sb_add(&pre, ";\n}\n");
  } else {
    uk__sb_add(&pre, "  _uk_acc r;\n");
    for (int m = 0; m < nm; m++) {
      uk__sb_addf(&pre, "  r.m%d = ", m);
      uk__fuse_member_ident(&ms[m], &pre);
      uk__sb_add(&pre, ";\n");
    }
    uk__sb_add(&pre, "  return r;\n}\n");
  }
  /* combine, and the in-order step where an argmax/argmin has one */
  int has_step = 0;
  for (int m = 0; m < nm; m++) has_step |= ms[m].red == UK_RED_ARGMAX || ms[m].red == UK_RED_ARGMIN;
  emit_comb_fn(&pre, "_uk_comb", acc, single, ms, nm, 0);
  if (has_step) {
    emit_comb_fn(&pre, "_uk_step", acc, single, ms, nm, 1);
    uk__sb_add(&pre, "#define _UK_RED_STEP(a, b) _uk_step(a, b)\n");
  }
  /* map: the prologue */
  fn f;
  uk__fuse_fn_begin(c, &f, &mapb, "  ");
  for (int m = 0; m < nm; m++) {
    uk__sb_reset(&tmp);
    uk__fuse_member_map(&f, &ms[m], &tmp);
    if (single) uk__sb_addf(&mapb, "  return %s;\n", uk__sb_str(&tmp));
    else uk__sb_addf(&mapb, "  _uk_r.m%d = %s;\n", m, uk__sb_str(&tmp));
  }
  if ((s = leaf_params(c, uk__sb_str(&mapb), -2, &inp, k, &mdecl, &mcall))) goto out;
  int nmap = k->nin;
  uk__sb_addf(&pre, "static __device__ __forceinline__ %s _uk_map(long long _J%s) {\n", acc, uk__sb_str(&mdecl));
  if (!single) uk__sb_add(&pre, "  _uk_acc _uk_r;\n");
  uk__sb_add(&pre, uk__sb_str(&mapb));
  if (!single) uk__sb_add(&pre, "  return _uk_r;\n");
  uk__sb_add(&pre, "}\n");
  /* post-map: the epilogue */
  uk__fuse_fn_begin(c, &f, &postb, "  ");
  f.own_domain = group;
  for (int m = 0; m < nm; m++) {
    char x[16];
    snprintf(x, sizeof x, single ? "a" : "a.m%d", m);
    uk__sb_reset(&tmp);
    uk__fuse_member_final(c, &ms[m], x, &tmp);
    uk__sb_addf(&postb, "  %s _uk_v%d = %s;\n", ct(ms[m].r), ms[m].id, uk__sb_str(&tmp));
    c->done[ms[m].id] = 1;
    if (ms[m].red == RED_LSE) { /* the sum of the pair */
      int sid = c->p->partner[ms[m].id];
      uk__sb_addf(&postb, "  %s _uk_v%d = _uk_lse_total(%s);\n", ct(c->p->type[sid].dtype), sid, x);
      c->done[sid] = 1;
    }
  }
  write_outputs(c, &f, group, &postb, &outp, k, &pdecl, &pcall);
  /* scalars the post-map reads (only scalars: the reduction passes no arrays
   * to post-map) become parameters too, unless the map read them already */
  {
    uk_fuse_kernel k2 = {0};
    uk_strbuf p2;
    uk__sb_init(&p2);
    s = leaf_params(c, uk__sb_str(&postb), group, &p2, &k2, &pdecl, &pcall);
    for (int j = 0; !s && j < k2.nin; j++) {
      int dup = 0;
      for (int q = 0; q < nmap; q++) dup |= k->in_src[q] == k2.in_src[j];
      if (dup) continue;
      int id = leaf_of(c, k2.in_src[j]);
      k->in_src[k->nin++] = k2.in_src[j];
      uk__sb_addf(&inp, "%s%s %s", inp.len ? ", " : "", uk__dtype_info(c->p->type[id].dtype)->name, c->leaf[id]);
    }
    free(k2.in_src);
    uk__sb_release(&p2);
    if (s) goto out;
  }
  uk__sb_addf(&pre, "static __device__ __forceinline__ void _uk_post(const %s &a, long long _uk_n%s) {\n", acc,
              uk__sb_str(&pdecl));
  uk__sb_add(&pre, uk__sb_str(&postb));
  uk__sb_add(&pre, "}\n");
  /* the ReductionKernel strings */
  uk__sb_reset(&mapb);
  uk__sb_reset(&postb);
  uk__sb_reset(&tmp);
  uk__sb_addf(&mapb, "_uk_map(_J");
  uk__sb_add(&mapb, uk__sb_str(&mcall));
  uk__sb_add(&mapb, ")");
  uk__sb_addf(&postb, "_uk_post(a, %s%s)",
              needs_count(ms, nm) ? "(long long)(_in_ind.size() / (_out_ind.size() ? _out_ind.size() : 1))" : "0LL",
              uk__sb_str(&pcall));
  uk__sb_add(&tmp, "_uk_ident()");
  k->name = fmt_name(name, "r", group);
  k->is_reduction = 1;
  k->reduce_expr = strdup("_uk_comb(a, b)");
  k->reduce_type = strdup(acc);
  {
    uk_strbuf *sbs[] = {&mapb, &postb, &tmp, &inp, &outp, &pre};
    char **dst[] = {&k->map_expr, &k->post_map_expr, &k->identity, &k->in_params, &k->out_params, &k->preamble};
    s = finish(sbs, 6, dst);
  }
  if (!s && (!k->name || !k->reduce_expr || !k->reduce_type)) s = uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
out:
  for (int j = 0; j < 10; j++) uk__sb_release(all[j]);
  free(ms);
  return s;
}

uk_status uk__fuse_emit(const uk_fuse_prog *g, uk_fuse_plan *p, const char *name, const char *user_preamble,
                        const int *group_of, const int *materialised, const int *domain) {
  int nn = g->nnodes;
  uk_status s = UK_OK;
  ctx c = {g, p, group_of, materialised, domain, NULL, NULL, NULL, NULL, 0};
  c.temp_of = malloc((size_t)nn * sizeof *c.temp_of);
  c.leaf = calloc((size_t)nn, sizeof *c.leaf);
  c.done = calloc((size_t)nn, 1);
  c.used = calloc((size_t)nn, 1);
  p->temp_node = malloc((size_t)nn * sizeof *p->temp_node);
  if (!c.temp_of || !c.leaf || !c.done || !c.used || !p->temp_node) goto nomem;
  int ngroups = 0;
  for (int id = 0; id < nn; id++) {
    char buf[32];
    c.temp_of[id] = -1;
    if (!p->needed[id]) continue;
    if (g->nodes[id].kind == UK_FN_INPUT) snprintf(buf, sizeof buf, "in%d", g->nodes[id].input);
    else if (materialised[id]) {
      c.temp_of[id] = p->ntemps;
      p->temp_node[p->ntemps] = id;
      snprintf(buf, sizeof buf, "tm%d", p->ntemps++);
    } else continue;
    if (!(c.leaf[id] = strdup(buf))) goto nomem;
  }
  for (int id = 0; id < nn; id++)
    if (p->needed[id] && group_of[id] >= ngroups) ngroups = group_of[id] + 1;
  int ew = 0;
  for (int o = 0; o < g->nout; o++) ew |= domain[g->out_node[o]] < 0;
  int single = ngroups + ew == 1;
  for (int q = 0; q < ngroups && !s; q++) s = emit_reduction(&c, q, name, user_preamble);
  if (!s && ew) s = emit_elementwise(&c, name, user_preamble, single ? -1 : ngroups);
  (void)single;
  goto out;
nomem:
  s = uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
out:
  if (c.leaf)
    for (int id = 0; id < nn; id++) free(c.leaf[id]);
  free(c.leaf);
  free(c.temp_of);
  free(c.done);
  free(c.used);
  return s;
}
