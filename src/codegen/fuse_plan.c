/* Typing (NumPy 2 rules) and kernel planning of a fusion program.
 *
 * Reductions with the same level (number of reductions below them), the
 * same map ndim and the same axes form one reduction kernel. Nodes computed
 * pointwise from one group's reductions (and scalars) form that group's
 * post-map domain and are computed in its post-map. A post-map node used by
 * anything outside its domain is materialised (an intermediate array, or
 * the output it already is); everything else is elementwise and computed
 * inline where used: in a later reduction's map, or in the one elementwise
 * kernel that writes the remaining outputs. */
#include "codegen/fuse_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "codegen/dtype.h"
#include "codegen/fuse_emit.h"
#include "codegen/fuse_row.h"
#include "codegen/shape.h"

static uk_status type_error(const uk_fuse_prog *g, size_t pos, const char *fmt, const char *a, const char *b) {
  return uk__error_at(UK_ERR_TYPE, "program", g->text, pos, NULL, fmt, a, b);
}

/* The values of constant weak-int expressions (int literals under - + and
 * *), node by node in id order (operands first): no recursion, so a chain
 * of any length is fine. known[id] is 1 where val[id] is such a value. */
typedef struct weak_ints {
  unsigned char *known;
  int64_t *val;
} weak_ints;

static void weak_int_values(const uk_fuse_prog *g, const weak_ints *w) {
  for (int id = 0; id < g->nnodes; id++) {
    const uk_fuse_node *n = &g->nodes[id];
    w->known[id] = 0;
    if (n->kind == UK_FN_CONST) {
      w->known[id] = n->ckind == UK_CK_INT;
      w->val[id] = n->ival;
      continue;
    }
    if (n->kind != UK_FN_OP || !w->known[n->arg[0]]) continue;
    uint64_t a = (uint64_t)w->val[n->arg[0]], b;
    if (n->op == UK_OP_NEG || n->op == UK_OP_POS) {
      w->val[id] = (int64_t)(n->op == UK_OP_NEG ? 0 - a : a);
      w->known[id] = 1;
      continue;
    }
    if ((n->op != UK_OP_ADD && n->op != UK_OP_SUB && n->op != UK_OP_MUL) || !w->known[n->arg[1]]) continue;
    b = (uint64_t)w->val[n->arg[1]];
    w->val[id] = (int64_t)(n->op == UK_OP_ADD ? a + b : n->op == UK_OP_SUB ? a - b : a * b);
    w->known[id] = 1;
  }
}

int uk__fuse_int_fits(int64_t v, uk_dtype t) {
  switch (t) {
  case UK_INT8: return v >= -128 && v <= 127;
  case UK_INT16: return v >= -32768 && v <= 32767;
  case UK_INT32: return v >= INT32_MIN && v <= INT32_MAX;
  case UK_UINT8: return v >= 0 && v <= 255;
  case UK_UINT16: return v >= 0 && v <= 65535;
  case UK_UINT32: return v >= 0 && v <= (int64_t)UINT32_MAX;
  case UK_UINT64: return v >= 0;
  default: return 1;
  }
}

/* NEP 50: a Python int used with an integer array in arithmetic must fit the
 * array's dtype (NumPy raises OverflowError: int8 + 300). Literals are
 * checked here, scalar inputs at each call (plan->weak_checks). */
static uk_status check_weak_ints(const uk_fuse_prog *g, uk_fuse_plan *p, const weak_ints *w, int id) {
  const uk_fuse_node *n = &g->nodes[id];
  uk_fuse_rule r = uk__fuse_op_info(n->op)->rule;
  uk_dtype d = p->type[id].dtype;
  uk_dtype_kind k = uk__dtype_info(d)->kind;
  if ((r != UK_RULE_ARITH && r != UK_RULE_BIT) || p->type[id].weak || (k != UK_KIND_INT && k != UK_KIND_UINT))
    return UK_OK;
  for (int j = 0; j < n->nargs; j++) {
    int a = n->arg[j];
    if (!p->type[a].weak || p->type[a].dtype != UK_INT64) continue;
    if (w->known[a]) {
      int64_t v = w->val[a];
      if (!uk__fuse_int_fits(v, d))
        return uk__error_at(UK_ERR_TYPE, "program", g->text, g->nodes[a].pos, NULL,
                            "Python integer %lld out of bounds for %s", (long long)v, uk__dtype_info(d)->name);
    } else if (g->nodes[a].kind == UK_FN_INPUT && p->nweak_checks < UK_FUSE_MAX_WEAK_CHECKS) {
      p->weak_checks[p->nweak_checks].input = g->nodes[a].input;
      p->weak_checks[p->nweak_checks].dtype = d;
      p->weak_checks[p->nweak_checks++].pos = n->pos;
    }
  }
  return UK_OK;
}

static uk_status type_node(const uk_fuse_prog *g, const uk_fuse_sig *sig, uk_fuse_plan *p, const weak_ints *w,
                           int id) {
  const uk_fuse_node *n = &g->nodes[id];
  uk_fuse_type *t = &p->type[id];
  switch (n->kind) {
  case UK_FN_INPUT:
    *t = sig->in[n->input];
    p->ndim[id] = sig->is_array[n->input] ? sig->ndim[n->input] : 0;
    p->scalar[id] = !sig->is_array[n->input];
    return UK_OK;
  case UK_FN_CONST:
    t->weak = 1;
    t->dtype = n->ckind == UK_CK_BOOL ? UK_BOOL
               : n->ckind == UK_CK_INT ? UK_INT64
               : n->ckind == UK_CK_FLOAT ? UK_FLOAT64
                                         : UK_COMPLEX128;
    p->scalar[id] = 1;
    return UK_OK;
  case UK_FN_CAST:
    t->weak = 0;
    t->dtype = n->cast;
    p->ndim[id] = p->ndim[n->arg[0]];
    p->scalar[id] = p->scalar[n->arg[0]];
    return UK_OK;
  case UK_FN_OP: {
    uk_fuse_type args[UK_FUSE_MAX_ARGS];
    p->scalar[id] = 1;
    for (int k = 0; k < n->nargs; k++) {
      args[k] = p->type[n->arg[k]];
      if (p->ndim[n->arg[k]] > p->ndim[id]) p->ndim[id] = p->ndim[n->arg[k]];
      p->scalar[id] &= p->scalar[n->arg[k]];
    }
    const char *why = "";
    if (uk__fuse_op_result(n->op, args, n->nargs, t, &why))
      return type_error(g, n->pos, "%s %s", uk__fuse_op_info(n->op)->name, why);
    return check_weak_ints(g, p, w, id);
  }
  case UK_FN_RED: {
    int a = n->arg[0], nd = p->ndim[a];
    const char *why = "";
    if (p->scalar[a])
      return type_error(g, n->pos, "%s%s of a scalar: reduce an array expression", uk__fuse_red_name(n->op), "");
    if (uk__fuse_red_result(n->op, p->type[a].dtype, &t->dtype, &why))
      return type_error(g, n->pos, "%s %s", uk__fuse_red_name(n->op), why);
    t->weak = 0;
    unsigned mask = 0;
    if (n->axis_all) mask = nd >= 32 ? ~0u : (1u << nd) - 1;
    for (int k = 0; k < n->naxes; k++) {
      int ax = n->axes[k] < 0 ? n->axes[k] + nd : n->axes[k];
      if (ax < 0 || ax >= nd)
        return uk__error_at(UK_ERR_SHAPE, "program", g->text, n->pos, NULL,
                            "axis %d is out of bounds for an operand of ndim %d", n->axes[k], nd);
      if (mask & (1u << ax))
        return uk__error_at(UK_ERR_SHAPE, "program", g->text, n->pos, NULL, "axis %d is repeated", n->axes[k]);
      mask |= 1u << ax;
    }
    p->axes[id] = mask;
    p->ndim[id] = n->keepdims ? nd : nd - __builtin_popcount(mask);
    p->scalar[id] = 0;
    return UK_OK;
  }
  }
  return uk__errorf(UK_ERR_INTERNAL, "fusion: unknown node kind");
}

void uk__fuse_plan_free(uk_fuse_plan *p) {
  if (!p) return;
  for (int k = 0; k < p->nkernels; k++) {
    uk_fuse_kernel *q = &p->kernels[k];
    free(q->name);
    free(q->in_params);
    free(q->out_params);
    free(q->operation);
    free(q->map_expr);
    free(q->reduce_expr);
    free(q->post_map_expr);
    free(q->identity);
    free(q->reduce_type);
    free(q->preamble);
    free(q->in_src);
    free(q->out_dst);
  }
  free(p->kernels);
  free(p->type);
  free(p->ndim);
  free(p->scalar);
  free(p->axes);
  free(p->temp_node);
  free(p->out_dtype);
  free(p->needed);
  free(p->partner);
  free(p->row.source);
  free(p->row.name);
  free(p);
}

/* sum(exp(X - M)) with M = max(X, same axes, keepdims=True), float32/64:
 * the sum joins M's kernel as one online (max, sum) accumulator, so softmax
 * reads X twice instead of three times. */
static void find_online_pairs(const uk_fuse_prog *g, uk_fuse_plan *p) {
  for (int id = 0; id < g->nnodes; id++) p->partner[id] = -1;
  for (int id = 0; id < g->nnodes; id++) {
    const uk_fuse_node *s = &g->nodes[id];
    if (!p->needed[id] || s->kind != UK_FN_RED || s->op != UK_RED_SUM) continue;
    const uk_fuse_node *e = &g->nodes[s->arg[0]];
    if (e->kind != UK_FN_OP || e->op != UK_OP_EXP) continue;
    const uk_fuse_node *d = &g->nodes[e->arg[0]];
    if (d->kind != UK_FN_OP || d->op != UK_OP_SUB) continue;
    int x = d->arg[0], m = d->arg[1];
    const uk_fuse_node *mx = &g->nodes[m];
    uk_dtype t = p->type[x].dtype;
    if (mx->kind != UK_FN_RED || mx->op != UK_RED_MAX || mx->arg[0] != x || !mx->keepdims ||
        p->axes[m] != p->axes[id] || p->partner[m] >= 0 || (t != UK_FLOAT32 && t != UK_FLOAT64) ||
        p->type[s->arg[0]].dtype != t || p->type[id].dtype != t || p->ndim[s->arg[0]] != p->ndim[x])
      continue;
    p->partner[id] = m;
    p->partner[m] = id;
  }
}

static int max_arg(const uk_fuse_node *n, const int *v) {
  int m = 0;
  for (int k = 0; k < n->nargs; k++)
    if (v[n->arg[k]] > m) m = v[n->arg[k]];
  return m;
}

uk_status uk__fuse_plan(const uk_fuse_prog *g, const uk_fuse_sig *sig, const char *name, const char *user_preamble,
                        uk_fuse_plan **out) {
  int nn = g->nnodes;
  uk_status s = UK_OK;
  int *level = calloc((size_t)nn + 1, sizeof *level), *group_of = calloc((size_t)nn + 1, sizeof *group_of);
  int *domain = calloc((size_t)nn + 1, sizeof *domain), *needed = calloc((size_t)nn + 1, sizeof *needed);
  int *mat = calloc((size_t)nn + 1, sizeof *mat);
  uk_fuse_plan *p = calloc(1, sizeof *p);
  if (!level || !group_of || !domain || !needed || !mat || !p) goto nomem;
  p->type = calloc((size_t)nn + 1, sizeof *p->type);
  p->ndim = calloc((size_t)nn + 1, sizeof *p->ndim);
  p->scalar = calloc((size_t)nn + 1, sizeof *p->scalar);
  p->axes = calloc((size_t)nn + 1, sizeof *p->axes);
  p->out_dtype = calloc((size_t)g->nout + 1, sizeof *p->out_dtype);
  p->needed = calloc((size_t)nn + 1, sizeof *p->needed);
  p->partner = malloc(((size_t)nn + 1) * sizeof *p->partner);
  if (!p->partner || !p->needed || !p->type || !p->ndim || !p->scalar || !p->axes || !p->out_dtype) goto nomem;
  if (sig->nin != g->nin) {
    s = uk__errorf(UK_ERR_INVALID, "fusion: %d inputs given, the program has %d", sig->nin, g->nin);
    goto out;
  }
  for (int k = 0; k < g->nout; k++) needed[g->out_node[k]] = 1;
  for (int id = nn - 1; id >= 0; id--)
    if (needed[id])
      for (int k = 0; k < g->nodes[id].nargs; k++) needed[g->nodes[id].arg[k]] = 1;
  weak_ints w = {malloc((size_t)nn + 1), malloc(((size_t)nn + 1) * sizeof(int64_t))};
  if (w.known && w.val) weak_int_values(g, &w);
  for (int id = 0; id < nn && w.known && w.val; id++)
    if (needed[id] && (s = type_node(g, sig, p, &w, id))) break;
  int typed = w.known && w.val;
  free(w.known);
  free(w.val);
  if (!typed) goto nomem;
  if (s) goto out;
  for (int k = 0; k < g->nout; k++) {
    uk_fuse_type t = p->type[g->out_node[k]];
    p->out_dtype[k] = sig->out_given ? sig->out[k] : t.dtype;
  }

  memcpy(p->needed, needed, (size_t)nn * sizeof *needed);
  find_online_pairs(g, p);

  /* levels and groups of reductions */
  int ngroups = 0;
  int *gkey_level = calloc((size_t)nn + 1, sizeof(int)), *gkey_rep = calloc((size_t)nn + 1, sizeof(int));
  if (!gkey_level || !gkey_rep) {
    free(gkey_level);
    free(gkey_rep);
    goto nomem;
  }
  for (int id = 0; id < nn; id++) {
    const uk_fuse_node *n = &g->nodes[id];
    group_of[id] = -1;
    if (!needed[id]) continue;
    level[id] = max_arg(n, level) + (n->kind == UK_FN_RED);
    if (n->kind == UK_FN_RED && p->partner[id] >= 0 && p->partner[id] < id) level[id] = level[p->partner[id]];
    if (n->kind != UK_FN_RED) continue;
    int a = n->arg[0];
    for (int q = 0; q < ngroups && group_of[id] < 0; q++) {
      int r = gkey_rep[q];
      if (!sig->split && gkey_level[q] == level[id] && p->ndim[g->nodes[r].arg[0]] == p->ndim[a] &&
          p->axes[r] == p->axes[id]) {
        group_of[id] = q;
        if (g->nodes[r].arg[0] != a) p->merged_reductions = 1;
      }
    }
    if (group_of[id] < 0 && ngroups == UK_MAX_FUSE_KERNELS - 1) { /* and the elementwise kernel */
      s = uk__error_at(UK_ERR_INVALID, "program", g->text, n->pos, "split the program into several fusions",
                       "the plan needs more than %d kernels (UK_MAX_FUSE_KERNELS)", UK_MAX_FUSE_KERNELS);
      free(gkey_level);
      free(gkey_rep);
      goto out;
    }
    if (group_of[id] < 0) {
      gkey_level[ngroups] = level[id];
      gkey_rep[ngroups] = id;
      group_of[id] = ngroups++;
    }
  }
  free(gkey_level);
  free(gkey_rep);

  /* post-map domains: -1 elementwise (or scalar), else the group */
  for (int id = 0; id < nn; id++) {
    const uk_fuse_node *n = &g->nodes[id];
    domain[id] = -1;
    if (!needed[id]) continue;
    if (n->kind == UK_FN_RED) {
      domain[id] = group_of[id];
      continue;
    }
    if (p->scalar[id] || n->kind == UK_FN_INPUT) continue;
    int d = -2, ok = 1;
    for (int k = 0; k < n->nargs && ok; k++) {
      int a = n->arg[k];
      if (p->scalar[a]) continue;
      if (domain[a] < 0 || (d >= 0 && domain[a] != d) || p->ndim[a] != p->ndim[id]) ok = 0;
      d = domain[a];
    }
    if (ok && d >= 0) domain[id] = d;
  }
  /* materialised: post-map nodes used outside their domain */
  for (int id = 0; id < nn; id++) {
    const uk_fuse_node *n = &g->nodes[id];
    if (!needed[id]) continue;
    for (int k = 0; k < n->nargs; k++) {
      int a = n->arg[k];
      if (domain[a] >= 0 && domain[a] != domain[id]) mat[a] = 1;
    }
  }
  s = uk__fuse_emit(g, p, name, user_preamble, group_of, mat, domain);
  /* one kernel already (a lone reduction): the row plan only for the rows
   * uk__fuse_row_fits lets through */
  if (!s && p->nkernels >= 1) {
    p->row.single = p->nkernels == 1;
    s = uk__fuse_row_plan(g, p);
  }
  goto out;
nomem:
  s = uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
out:
  free(level);
  free(group_of);
  free(domain);
  free(needed);
  free(mat);
  if (s) uk__fuse_plan_free(p);
  else *out = p;
  return s;
}

static void broadcast_error(const uk_fuse_prog *g, const uk_fuse_node *n, const int64_t *a, int na, const int64_t *b,
                            int nb) {
  char sa[256], sb[256];
  size_t la = 0, lb = 0;
  sa[0] = sb[0] = 0;
  for (int k = 0; k < na && la < 200; k++) la += (size_t)snprintf(sa + la, sizeof sa - la, "%s%lld", k ? ", " : "", (long long)a[k]);
  for (int k = 0; k < nb && lb < 200; k++) lb += (size_t)snprintf(sb + lb, sizeof sb - lb, "%s%lld", k ? ", " : "", (long long)b[k]);
  uk__error_at(UK_ERR_SHAPE, "program", g->text, n->pos, NULL,
               "operands could not be broadcast together with shapes (%s%s) (%s%s)", sa, na == 1 ? "," : "", sb,
               nb == 1 ? "," : "");
}

uk_status uk__fuse_shapes(const uk_fuse_prog *g, const uk_fuse_plan *p, const int64_t *const *in_shapes,
                          int64_t *shapes) {
  for (int id = 0; id < g->nnodes; id++) {
    const uk_fuse_node *n = &g->nodes[id];
    int64_t *sh = shapes + (size_t)id * UK_MAX_NDIM;
    int nd = p->ndim[id];
    if (!p->needed[id]) continue;
    /* Only an input or a broadcast that widens its first operand's shape
     * can make a shape the loops' rule (below) has not seen: a reduction
     * keeps a subset of its operand's extents, a unary node its shape. */
    int grew = n->kind == UK_FN_INPUT;
    if (n->kind == UK_FN_INPUT) {
      for (int k = 0; k < nd; k++) sh[k] = in_shapes[n->input] ? in_shapes[n->input][k] : 1;
    } else if (n->kind == UK_FN_RED) {
      const int64_t *as = shapes + (size_t)n->arg[0] * UK_MAX_NDIM;
      int and_ = p->ndim[n->arg[0]], j = 0;
      for (int k = 0; k < and_; k++) {
        int red = (p->axes[id] >> k) & 1;
        if (!red) sh[j++] = as[k];
        else if (n->keepdims) sh[j++] = 1;
      }
    } else {
      for (int k = 0; k < nd; k++) sh[k] = 1;
      for (int a = 0; a < n->nargs; a++) {
        int ai = n->arg[a], an = p->ndim[ai];
        const int64_t *as = shapes + (size_t)ai * UK_MAX_NDIM;
        for (int k = 0; k < an; k++) {
          int64_t *d = &sh[nd - an + k];
          if (*d == as[k] || as[k] == 1) continue;
          if (*d != 1) {
            broadcast_error(g, n, shapes + (size_t)n->arg[0] * UK_MAX_NDIM, p->ndim[n->arg[0]], as, an);
            return UK_ERR_SHAPE;
          }
          *d = as[k];
          grew |= a > 0;
        }
      }
    }
    if (!grew) continue;
    /* The loops' own rule (shape.c): elements x 16 bytes fit int64, so
     * later products over node shapes cannot overflow. */
    int64_t count = 1, bytes;
    int empty = 0, overflow = 0;
    for (int k = 0; k < nd; k++) {
      empty |= sh[k] == 0;
      overflow |= __builtin_mul_overflow(count, sh[k], &count);
    }
    if (!empty && (overflow || __builtin_mul_overflow(count, (int64_t)16, &bytes))) {
      char b[200];
      return uk__error_at(UK_ERR_SHAPE, "program", g->text, n->pos, NULL,
                          "the shape %s has too many elements for 64-bit byte offsets", uk__shape_str(nd, sh, b, sizeof b));
    }
  }
  return UK_OK;
}
