/* The row plan of a fusion program: one kernel in which T threads (a
 * sub-warp, a warp or a block) own a row of the map shape
 * (templates/ukern/fusion_row.cuh).
 *
 * It applies when every reduction reduces the last axis of one map shape
 * and everything computed from the reductions is either one value per row
 * (keepdims results and what is computed from them and scalars) or used
 * per element of the row: softmax, x - mean(x, axis=-1, keepdims=True),
 * layer norms. Nodes are scalars, per-row or per-element; the reductions
 * run level by level (a reduction of an expression of earlier reductions
 * comes one level later), each a reduction over the row's T threads whose
 * result every one of them gets, then the per-element outputs are written
 * and the per-row ones by the row's first thread. Each row is read from
 * memory once where it fits: one read and one write of the array for
 * softmax, against two reads and a write for the split plan.
 *
 * The source holds three variants of the kernel body, which a call picks
 * (uk__row_size in fuse_row_plan.c; the prefix uk__row_variant defines;
 * the first two take the threads a row, _UK_RT, as a compile-time
 * constant, the cluster one from the launch's geometry):
 * - _UK_RK > 0, registers: each thread loads its _UK_RK vectors of _UK_RV
 *   elements of every array input into registers (fully unrolled loops
 *   over compile-time counts: the only way arrays stay in registers), the
 *   passes run over them, the outputs are gathered in registers and
 *   stored as vectors. Rows of a block run in lockstep (a dead row slot
 *   takes part in the shuffles and barriers and stores nothing). With
 *   _UK_RW (the T x _UK_RK x _UK_RV slots are exactly the row) nothing
 *   per element is tested; else slots past the row hold zeros, compute
 *   and are left out of the combines and stores.
 * - _UK_RK == 0, shared memory: a block a row; the row's elements of every
 *   array input are kept in shared memory (cp.async, _UK_RV elements an
 *   access), as many as fit; the part that does not fit is re-read in
 *   each pass (from L2, mostly). Every pass takes each thread's own kept
 *   vectors (one shared-memory access of _UK_RV elements, no barrier
 *   between the copies and the passes) and the outputs of a vector are
 *   stored as one (rows of 32768-65536 float32 ran 3-30% faster than one
 *   element a step, H200).
 * - _UK_RC (sm_90+; the key's cluster flag), clusters: the shared-memory
 *   body over one block's slice of a row split over the C blocks of a
 *   thread-block cluster (fuse_row_cluster.c sizes it), its reductions
 *   combined over the cluster (templates/ukern/fusion_row_cluster.cuh).
 *   With _UK_RK as well, the registers body over the slice instead (a
 *   block of _UK_RT threads a slice; few rows: fuse_row_plan.c
 *   cluster_regs).
 *
 * The last level's pass keeps, in place of an input's kept elements, an
 * elementwise value it computes that the outputs use again (softmax's
 * exp(x - m), a layer norm's x - mean) when the outputs no longer need
 * that input: the output pass reads it instead of computing it again (for
 * softmax, one exp per element instead of two; same value, same
 * numerics). Elements past the kept part compute it again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "codegen/dtype.h"
#include "codegen/fuse_emit.h"
#include "codegen/fuse_row.h"
#include "codegen/fuse_row_plan.h"

enum { C_SCALAR = 0, C_ROW, C_ELEM };

/* Classifies the needed nodes (cls) and levels the reductions; the map
 * ndim, or 0 when the program has no row plan. */
static int classify(const uk_fuse_prog *g, const uk_fuse_plan *p, int *cls, int *level, int *map_node) {
  int nd = 0;
  for (int id = 0; id < g->nnodes; id++) {
    const uk_fuse_node *n = &g->nodes[id];
    cls[id] = C_SCALAR;
    level[id] = 0;
    if (!p->needed[id] || p->scalar[id]) continue;
    for (int k = 0; k < n->nargs; k++)
      if (level[n->arg[k]] > level[id]) level[id] = level[n->arg[k]];
    if (n->kind == UK_FN_INPUT) {
      cls[id] = C_ELEM;
    } else if (n->kind == UK_FN_RED) {
      int a = n->arg[0], and_ = p->ndim[a];
      if (cls[a] != C_ELEM || and_ < 1 || p->axes[id] != 1u << (and_ - 1) || (nd && and_ != nd)) return 0;
      if (!nd) *map_node = a;
      nd = and_;
      cls[id] = C_ROW;
      level[id]++;
    } else {
      int elem = 0;
      for (int k = 0; k < n->nargs; k++) elem |= cls[n->arg[k]] == C_ELEM;
      cls[id] = elem ? C_ELEM : C_ROW;
      /* a per-row value meets only per-row values of its own ndim, and
       * reaches elements only with keepdims (its ndim is the map's) */
      for (int k = 0; k < n->nargs; k++) {
        int a = n->arg[k];
        if (cls[a] == C_ROW && p->ndim[a] != (elem ? nd : p->ndim[id])) return 0;
      }
    }
  }
  if (!nd) return 0;
  for (int id = 0; id < g->nnodes; id++)
    if (cls[id] == C_ELEM && p->ndim[id] > nd) return 0;
  for (int o = 0; o < g->nout; o++)
    if (cls[g->out_node[o]] == C_SCALAR) return 0;
  return nd;
}

int uk__fuse_row_fits(const uk_fuse_prog *g, const uk_fuse_plan *p, const int64_t *shapes, int sm_count,
                      int cluster_max) {
  const uk_fuse_row *r = &p->row;
  if (!r->ndim) return 0;
  int nd = r->ndim;
  const int64_t *ms = shapes + (size_t)r->map_node * UK_MAX_NDIM;
  int64_t rows = 1;
  for (int d = 0; d < nd - 1; d++) /* a broadcast shape past int64: the split plan reports it */
    if (__builtin_mul_overflow(rows, ms[d], &rows)) return 0;
  /* empty rows or no rows: the split plan has the zero-size rules; a few
   * long rows: the split plan spreads each over many blocks */
  if (rows < 1 || ms[nd - 1] < 1) return 0;
  int64_t bytes = 0; /* of an element: array inputs read, per-element outputs written */
  for (int id = 0; id < g->nin; id++)
    if (p->needed[id] && !p->scalar[id]) bytes += (int64_t)uk_dtype_size(p->type[id].dtype);
  for (int o = 0; o < g->nout; o++)
    if (!r->out_per_row[o]) bytes += (int64_t)uk_dtype_size(p->out_dtype[o]);
  if (!uk__row_prefer(rows, ms[nd - 1], bytes, sm_count) &&
      !uk__row_prefer_cluster(ms[nd - 1], bytes, cluster_max, r->single))
    return 0;
  /* a lone reduction (its split plan one kernel, as fast over many rows):
   * the row plan for fewer rows than SMs of at least UK_ROW_LONE_MIN_N
   * over clusters, where each row's blocks combine through distributed
   * shared memory rather than the split's count and last block (float32
   * row sums of 1-8 rows of 32768-65536, H200: docs/PERF.md "Session 20"),
   * or a block a row (uk__row_lone_block); the runtime narrows it to light
   * register slices (fusion.c row_usable, uk__row_lone_light) */
  if (r->single && !(rows < sm_count && uk__row_prefer_cluster(ms[nd - 1], bytes, cluster_max, 1)) &&
      !uk__row_lone_block(rows, ms[nd - 1], sm_count))
    return 0;
  for (int id = 0; id < g->nnodes; id++) {
    const uk_fuse_node *n = &g->nodes[id];
    if (!p->needed[id] || n->kind != UK_FN_RED) continue;
    if (memcmp(shapes + (size_t)n->arg[0] * UK_MAX_NDIM, ms, (size_t)nd * sizeof *ms)) return 0;
  }
  for (int o = 0; o < g->nout; o++) {
    int id = g->out_node[o];
    if (!r->out_per_row[o] && (p->ndim[id] != nd || memcmp(shapes + (size_t)id * UK_MAX_NDIM, ms, (size_t)nd * sizeof *ms)))
      return 0;
  }
  /* array inputs broadcast into the map shape */
  for (int id = 0; id < g->nin; id++) {
    if (!p->needed[id] || p->scalar[id]) continue;
    const int64_t *s = shapes + (size_t)id * UK_MAX_NDIM;
    int and_ = p->ndim[id];
    if (and_ > nd) return 0;
    for (int d = 0; d < and_; d++)
      if (s[d] != 1 && s[d] != ms[nd - and_ + d]) return 0;
  }
  return 1;
}

/* The accumulator of one level: type _uk_acc<L>, identity _uk_ident<L>(),
 * combine functor _uk_op<L>. */
static void level_acc(const uk_fuse_member *ms, int nm, int L, uk_strbuf *pre) {
  char x[24], y[24];
  if (nm == 1) uk__sb_addf(pre, "typedef %s _uk_acc%d;\n", ms[0].type, L);
  else {
    uk__sb_addf(pre, "struct _uk_acc%d {\n", L);
    for (int m = 0; m < nm; m++) uk__sb_addf(pre, "  %s m%d;\n", ms[m].type, m);
    uk__sb_add(pre, "};\n");
  }
  uk__sb_addf(pre, "static __device__ __forceinline__ _uk_acc%d _uk_ident%d() {\n  _uk_acc%d r;\n", L, L, L);
  for (int m = 0; m < nm; m++) {
    if (nm == 1) uk__sb_add(pre, "  r = ");
    else uk__sb_addf(pre, "  r.m%d = ", m);
    uk__fuse_member_ident(&ms[m], pre);
    uk__sb_add(pre, ";\n");
  }
  uk__sb_addf(pre, "  return r;\n}\nstruct _uk_op%d {\n  __device__ __forceinline__ _uk_acc%d operator()(const _uk_acc%d &a, "
              "const _uk_acc%d &b) const {\n    _uk_acc%d r;\n", L, L, L, L, L);
  for (int m = 0; m < nm; m++) {
    snprintf(x, sizeof x, "a.m%d", m);
    snprintf(y, sizeof y, "b.m%d", m);
    if (nm == 1) uk__sb_add(pre, "    r = ");
    else uk__sb_addf(pre, "    r.m%d = ", m);
    uk__fuse_member_comb(&ms[m], nm == 1 ? "a" : x, nm == 1 ? "b" : y, pre);
    uk__sb_add(pre, ";\n");
  }
  uk__sb_add(pre, "    return r;\n  }\n};\n");
}

typedef struct row_em {
  uk_fuse_ectx c;
  const int *cls, *level;
  char *final_;      /* per node: a per-row value that exists (a reduction's, or one hoisted) */
  char *rdiv;        /* per node: a per-row divisor with its _uk_d<id> */
  int ndiv;          /* how many of them (hoist_rows): the output pass may divide without a branch */
  uk_strbuf lparams; /* the lambdas' element parameters: ", const float in0, ..." */
  uk_strbuf keptv;   /* their arguments from shared memory: the vectors _uk_vin<k> (element _i) */
  uk_strbuf loaded;  /* and loaded from memory */
  uk_strbuf regd;    /* and from registers */
  uk_strbuf kvload;  /* those vectors' loads at _J0 */
  int reg;           /* emitting the registers variant */
  int cluster;       /* emitting the cluster variant (fuse_row_cluster.c sizes it) */
  int reuse;         /* the node the last level keeps for the outputs, or -1 */
  int reuse_in;      /* the input whose kept elements it replaces */
  int reuse_level;   /* the level whose pass stores it */
} row_em;

static void fn_start(row_em *e, uk_fuse_fn *f, uk_strbuf *body, const char *indent) {
  uk__fuse_fn_begin(&e->c, f, body, indent);
  f->rdiv = e->rdiv;
  for (int id = 0; id < e->c.g->nnodes; id++)
    if (e->final_[id]) e->c.done[id] = 1;
}

/* The per-row values of level L (what the elements' code computes from the
 * row's reductions and scalars: a layer norm's sqrt(var + eps)), once a
 * row after the level's reduction rather than once an element; and for
 * each float32 one that divides float32 elements, its reciprocal
 * (_uk_rd_make: the division's own result, ukern/fusion_row.cuh). */
static void hoist_rows(row_em *e, int L, uk_strbuf *b, uk_strbuf *tmp) {
  const uk_fuse_prog *g = e->c.g;
  const uk_fuse_plan *p = e->c.p;
  uk_fuse_fn f;
  fn_start(e, &f, b, "    ");
  for (int id = 0; id < g->nnodes; id++)
    if (p->needed[id] && !p->scalar[id] && e->cls[id] == C_ROW && g->nodes[id].kind != UK_FN_RED && e->level[id] == L) {
      uk__sb_reset(tmp);
      uk__fuse_value(&f, id, p->type[id].dtype, tmp);
    }
  for (int id = 0; id < g->nnodes; id++)
    if (e->c.done[id]) e->final_[id] = 1; /* scalars it defined too: the lambdas capture them */
  for (int id = 0; id < g->nnodes; id++) {
    const uk_fuse_node *n = &g->nodes[id];
    int d = n->nargs == 2 ? n->arg[1] : -1;
    if (!p->needed[id] || n->kind != UK_FN_OP || n->op != UK_OP_DIV || e->cls[id] != C_ELEM || d < 0 || e->rdiv[d] ||
        !e->final_[d] || e->cls[d] != C_ROW || p->type[id].dtype != UK_FLOAT32 || p->type[d].dtype != UK_FLOAT32)
      continue;
    e->rdiv[d] = 1;
    e->ndiv++;
    uk__sb_addf(b, "    const _uk_rd _uk_d%d = _uk_rd_make(_uk_v%d);\n", d, d);
  }
}

/* A pass of the shared-memory variants over a row: each thread's _UK_RV
 * consecutive kept elements at a time, the ones it kept itself (emit_keep's
 * mapping: no barrier between the copies and the passes), read as one
 * vector each (loads, at _J0), stepped in order by body (with _J and _i),
 * then after; then the elements past the kept part loaded one a step
 * (rest). The loop over a thread's vectors is not unrolled: unrolled, a
 * layer norm with a weight spilled at the 64 registers of 1024-thread
 * blocks (test_nvrtc_row_args). */
static void vec_loops(uk_strbuf *b, const char *loads, const char *body, const char *after, const char *rest) {
  uk__sb_addf(b, "#pragma unroll 1\n      for (long long _J0 = (long long)_uk_t * _UK_RV; _J0 < _uk_nc; _J0 += (long long)_uk_T * _UK_RV) {\n"
                 "%s#pragma unroll\n        for (int _i = 0; _i < _UK_RV; _i++) {\n          const long long _J = _J0 + _i;\n"
                 "          %s\n        }\n%s      }\n#pragma unroll 4\n"
                 "      for (long long _J = _uk_nc + _uk_t; _J < _uk_n; _J += _uk_T) %s\n",
              loads, body, after, rest);
}

/* 1 where the shared-memory variant's passes store the value kept for the
 * outputs as vectors (it is as wide as the input whose slots it takes),
 * like the registers variant (a reference argument of the pass's
 * function); else each element's own slot takes it. Not the cluster
 * variant: its layer norms ran 2-7% slower so (H200). */
static int keep_vec(const row_em *e) {
  const uk_fuse_plan *p = e->c.p;
  return !e->reg && !e->cluster && e->reuse >= 0 &&
         uk_dtype_size(p->type[e->reuse].dtype) == uk_dtype_size(p->type[e->reuse_in].dtype);
}

/* In the registers variant's loops: slot _I of vector _k, lane _i, and
 * its element _J of the row. */
static void reg_slot(uk_strbuf *b, const char *indent) {
  uk__sb_addf(b, "%sconst int _I = _k * _UK_RV + _i;\n%sconst int _J = (_k * _uk_T + _uk_t) * _UK_RV + _i;\n", indent,
              indent);
}

/* The registers variant's loop over a thread's elements (reg_slot): pre
 * for every slot, then stmt for each one in the row (its vector's start
 * below _uk_lim: n is a whole number of vectors) or every one with whole
 * rows; post (unless NULL) after each vector. Slots past the row hold
 * zeros (the loads) and compute like the others: tests around a whole
 * element's code cost branches and registers (64 a thread and spills,
 * NVRTC 13), around a combine only a select. */
static void reg_loop(uk_strbuf *b, const char *pre, const char *stmt, const char *post) {
  uk__sb_addf(b, "#pragma unroll\n      for (int _k = 0; _k < _UK_RK; _k++)%s\n#pragma unroll\n"
                 "        for (int _i = 0; _i < _UK_RV; _i++) {\n",
              post ? " {" : "");
  reg_slot(b, "          ");
  uk__sb_addf(b, "          %s\n", pre);
  if (*stmt) uk__sb_addf(b, "          if (_UK_RW || _J - _i < _uk_lim) %s;\n", stmt);
  uk__sb_add(b, "        }\n");
  if (post) uk__sb_addf(b, "%s      }\n", post);
}

/* Marks in r the nodes computed per element from id (reductions are
 * per-row values by then; cut, when >= 0, is a value at hand). stack has
 * room for every node (each is pushed once): no recursion, as chains are
 * as long as programs. */
static void reach(const uk_fuse_prog *g, int id, int cut, char *r, int *stack) {
  int n = 0;
  if (!r[id]) stack[n++] = id, r[id] = 1;
  while (n > 0) {
    int top = stack[--n];
    const uk_fuse_node *nd = &g->nodes[top];
    if (top == cut || nd->kind == UK_FN_RED) continue;
    for (int k = 0; k < nd->nargs; k++)
      if (!r[nd->arg[k]]) stack[n++] = nd->arg[k], r[nd->arg[k]] = 1;
  }
}

/* Candidates pick_reuse tries, latest first: each costs a walk of the
 * program, and the latest ones are the likely ones. */
#define REUSE_TRIES 64

/* Picks e->reuse: the latest per-element node that the pass of level L
 * computes and the per-element outputs use, such that with it at hand the
 * outputs read no element of some array input (whose kept elements are at
 * least as wide): that input's kept elements then hold it. */
static uk_status pick_reuse(row_em *e, int L) {
  const uk_fuse_prog *g = e->c.g;
  const uk_fuse_plan *p = e->c.p;
  int nn = g->nnodes;
  e->reuse = e->reuse_in = -1;
  char *pass = calloc((size_t)nn + 1, 1), *used = calloc((size_t)nn + 1, 1), *cut = calloc((size_t)nn + 1, 1);
  int *stack = malloc(((size_t)nn + 1) * sizeof *stack), tries = 0;
  if (!pass || !used || !cut || !stack) {
    free(pass);
    free(used);
    free(cut);
    free(stack);
    return uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
  }
  for (int id = 0; id < nn; id++)
    if (e->cls[id] == C_ROW && g->nodes[id].kind == UK_FN_RED && e->level[id] == L) reach(g, g->nodes[id].arg[0], -1, pass, stack);
  for (int o = 0; o < g->nout; o++)
    if (!p->row.out_per_row[o]) reach(g, g->out_node[o], -1, used, stack);
  for (int a = nn - 1; a >= 0 && e->reuse < 0 && tries < REUSE_TRIES; a--) {
    uk_fuse_kind kd = g->nodes[a].kind;
    if (!pass[a] || !used[a] || e->cls[a] != C_ELEM || kd == UK_FN_INPUT || kd == UK_FN_CONST) continue;
    tries++;
    memset(cut, 0, (size_t)nn);
    for (int o = 0; o < g->nout; o++)
      if (!p->row.out_per_row[o]) reach(g, g->out_node[o], a, cut, stack);
    for (int k = 0; k < g->nin && e->reuse < 0; k++)
      if (p->needed[k] && !p->scalar[k] && !cut[k] &&
          uk__dtype_info(p->type[a].dtype)->size <= uk__dtype_info(p->type[k].dtype)->size)
        e->reuse = a, e->reuse_in = k;
  }
  free(pass);
  free(used);
  free(cut);
  free(stack);
  return UK_OK;
}

/* The cluster variant's passes index a block's slice (_J from 0, _uk_n its
 * length): a reduction's text that names the element's index (argmax's
 * _J) or the row's length (mean's _uk_n) is moved to the row's by
 * replacing the last `from` in t with `to`. */
static void cluster_fix(uk_strbuf *t, const char *from, const char *to) {
  const char *s = uk__sb_str(t), *at = NULL;
  for (const char *q = s; (q = strstr(q, from)); q++) at = q;
  if (!at) return;
  uk_strbuf o;
  uk__sb_init(&o);
  uk__sb_addn(&o, s, (size_t)(at - s));
  uk__sb_addf(&o, "%s%s", to, at + strlen(from));
  if (o.failed) t->failed = 1;
  uk__sb_reset(t);
  uk__sb_add(t, uk__sb_str(&o));
  uk__sb_release(&o);
}

/* One level's reductions: the per-thread pass, the row reduction and the
 * per-row results _uk_v<id> (the accumulator's type into pre with the
 * registers variant, which is emitted first). */
static uk_status emit_level(row_em *e, int L, uk_strbuf *pre, uk_strbuf *b, uk_strbuf *tmp) {
  const uk_fuse_prog *g = e->c.g;
  uk_fuse_member ms[64];
  int nm = 0;
  for (int id = 0; id < g->nnodes; id++)
    if (e->cls[id] == C_ROW && g->nodes[id].kind == UK_FN_RED && e->level[id] == L) {
      if (nm == 64) return uk__errorf(UK_ERR_INVALID, "fusion: more than 64 reductions in one level");
      uk__fuse_member_init(&e->c, id, &ms[nm++]);
    }
  if (e->reg) level_acc(ms, nm, L, pre);
  uk__sb_addf(b, "    _uk_acc%d _uk_a%d = _uk_ident%d();\n    {\n", L, L, L);
  uk_fuse_fn f;
  uk_strbuf lb;
  uk__sb_init(&lb);
  fn_start(e, &f, &lb, "        ");
  uk__sb_addf(&lb, "        _uk_acc%d _uk_r;\n", L);
  for (int m = 0; m < nm; m++) {
    uk__sb_reset(tmp);
    uk__fuse_member_map(&f, &ms[m], tmp);
    if ((e->cluster || e->reg) && (ms[m].red == UK_RED_ARGMAX || ms[m].red == UK_RED_ARGMIN))
      cluster_fix(tmp, ", _J)", ", _J + _uk_lo)"); /* registers: _uk_lo 0 but with _UK_RC */
    if (nm == 1) uk__sb_addf(&lb, "        _uk_r = %s;\n", uk__sb_str(tmp));
    else uk__sb_addf(&lb, "        _uk_r.m%d = %s;\n", m, uk__sb_str(tmp));
  }
  /* The value the outputs use again. Shared memory: a kept element's slot
   * takes it (the element was read: it is the lambda's argument), in that
   * element's own slot (addressed as the input's type): a narrower value
   * indexed as its own type would land in another thread's element before
   * that one is read (seen on the H200: float32 over float64). Registers:
   * the slot _uk_rv[_I] of its own type. */
  int keep = e->reuse >= 0 && L == e->reuse_level, kvec = keep && keep_vec(e);
  char kparam[96] = "";
  const char *ta = keep ? uk__fuse_ctype(e->c.p->type[e->reuse].dtype) : "";
  if (keep) {
    uk_dtype t = e->c.p->type[e->reuse].dtype;
    uk__sb_reset(tmp);
    uk__fuse_value(&f, e->reuse, t, tmp);
    if (e->reg || kvec) {
      uk__sb_addf(&lb, "        // kept for the outputs: node %d\n        _uk_keepr = %s;\n", e->reuse, uk__sb_str(tmp));
      snprintf(kparam, sizeof kparam, ", %s &_uk_keepr", uk__fuse_ctype(t));
    } else {
      uk__sb_addf(&lb, "        // kept for the outputs: node %d in place of in%d\n"
                       "        if (_uk_keepv) *(%s *)(_uk_k_in%d + _J) = %s;\n",
                  e->reuse, e->reuse_in, uk__fuse_ctype(t), e->reuse_in, uk__sb_str(tmp));
      snprintf(kparam, sizeof kparam, ", const bool _uk_keepv");
    }
  }
  uk__sb_addf(b, "      auto _uk_f = [&](const long long _J%s%s) -> _uk_acc%d {\n%s        return _uk_r;\n      };\n",
              uk__sb_str(&e->lparams), kparam, L, uk__sb_str(&lb));
  char acc[64];
  snprintf(acc, sizeof acc, "_uk_a%d = _uk_op%d()(_uk_a%d, ", L, L, L);
  uk_strbuf ka;
  uk__sb_init(&ka);
  uk__sb_reset(tmp);
  if (e->reg) {
    uk__sb_addf(tmp, "const _uk_acc%d _uk_e = _uk_f(_J%s%s);", L, uk__sb_str(&e->regd), keep ? ", _uk_rv[_I]" : "");
    uk__sb_addf(&ka, "%s_uk_e)", acc);
    reg_loop(b, uk__sb_str(tmp), uk__sb_str(&ka), NULL);
  } else {
    uk_strbuf vl, va;
    uk__sb_init(&vl);
    uk__sb_init(&va);
    uk__sb_add(&vl, uk__sb_str(&e->kvload));
    if (kvec) { /* the kept values of a vector, stored together */
      uk__sb_addf(&vl, "        _uk_vec<%s, _UK_RV> _uk_kr;\n", ta);
      uk__sb_addf(&ka, "%s_uk_f(_J%s, _uk_kr.v[_i]));", acc, uk__sb_str(&e->keptv));
      uk__sb_addf(&va, "        *(_uk_vec<%s, _UK_RV> *)(_uk_k_in%d + _J0) = _uk_kr;\n", ta, e->reuse_in);
      uk__sb_addf(tmp, "{ %s _uk_kd; %s_uk_f(_J%s, _uk_kd)); }", ta, acc, uk__sb_str(&e->loaded));
    } else {
      uk__sb_addf(&ka, "%s_uk_f(_J%s%s));", acc, uk__sb_str(&e->keptv), keep ? ", true" : "");
      uk__sb_addf(tmp, "%s_uk_f(_J%s%s));", acc, uk__sb_str(&e->loaded), keep ? ", false" : "");
    }
    vec_loops(b, uk__sb_str(&vl), uk__sb_str(&ka), uk__sb_str(&va), uk__sb_str(tmp));
    if (vl.failed || va.failed) b->failed = 1;
    uk__sb_release(&vl);
    uk__sb_release(&va);
  }
  if (ka.failed) b->failed = 1;
  uk__sb_release(&ka);
  uk__sb_addf(b, "    }\n    _uk_a%d = _uk_row_reduce(_uk_a%d, _uk_op%d(), _uk_ident%d(), _uk_sm%d, _uk_T);\n", L, L, L, L,
              L);
  if (e->cluster || e->reg) /* the blocks' partials, combined in rank order: the same value in every block */
    uk__sb_addf(b, "%s    _uk_a%d = _uk_cluster_reduce(_uk_a%d, _uk_op%d(), _uk_cs%d, _uk_par, %s);\n%s",
                e->reg ? "#if _UK_RC\n" : "", L, L, L, L, L == 1 ? "true" : "false", e->reg ? "#endif\n" : "");
  for (int m = 0; m < nm; m++) {
    char x[32];
    snprintf(x, sizeof x, "_uk_a%d.m%d", L, m);
    if (nm == 1) snprintf(x, sizeof x, "_uk_a%d", L);
    uk__sb_reset(tmp);
    uk__fuse_member_final(&e->c, &ms[m], x, tmp);
    if (e->cluster && ms[m].red == UK_RED_MEAN) cluster_fix(tmp, "(_uk_n)", "(_uk_N)");
    uk__sb_addf(b, "    const %s _uk_v%d = %s;\n", uk__fuse_ctype(ms[m].r), ms[m].id, uk__sb_str(tmp));
    e->final_[ms[m].id] = 1;
  }
  hoist_rows(e, L, b, tmp);
  if (lb.failed) b->failed = 1;
  uk__sb_release(&lb);
  return UK_OK;
}

/* Writes output o (node id) as "*(T *)(<at>) = value;" into b, or, in the
 * registers variant, "_uk_w_out<o>[_I] = value;". */
static void write_out(row_em *e, uk_fuse_fn *f, int o, const char *at, uk_strbuf *b, uk_strbuf *tmp) {
  const uk_fuse_prog *g = e->c.g;
  uk_dtype t = e->c.p->out_dtype[o];
  uk__sb_reset(tmp);
  uk__fuse_value(f, g->out_node[o], t, tmp);
  if (at) uk__sb_addf(b, "%s*(%s *)(%s) = %s;\n", f->indent, uk__fuse_ctype(t), at, uk__sb_str(tmp));
  else uk__sb_addf(b, "%s_uk_w_out%d[_I] = %s;\n", f->indent, o, uk__sb_str(tmp));
}

/* The function "auto name = [&](_J, params) {...};" that writes the
 * per-element outputs of element _J, or with gather "[&](_J, _I, params)"
 * that puts them at _I of _uk_w_out<o> (stored as vectors after). */
static void out_fn(row_em *e, const char *name, int gather, const char *params, uk_strbuf *b, uk_strbuf *tmp) {
  const uk_fuse_prog *g = e->c.g;
  uk_fuse_fn f;
  uk_strbuf wb;
  uk__sb_init(&wb);
  fn_start(e, &f, &wb, "        ");
  f.rdiv_try = gather && e->ndiv > 0;
  for (int o = 0; o < g->nout; o++) {
    char lv[64];
    if (e->c.p->row.out_per_row[o]) continue;
    snprintf(lv, sizeof lv, "_uk_b_out%d + _J * _uk_c_out%d", o, o);
    write_out(e, &f, o, gather ? NULL : lv, &wb, tmp);
  }
  uk__sb_addf(b, "      auto %s = [&](const long long _J%s%s%s) {\n%s      };\n", name,
              gather ? ", const int _I" : "", params, f.rdiv_try ? ", const bool _uk_exact" : "", uk__sb_str(&wb));
  if (wb.failed) b->failed = 1;
  uk__sb_release(&wb);
}

/* After a vector's outputs computed by fv(_J, _I, args, false) (branch-free
 * divisions, _uk_rdiv_try): where one flagged its element (out of
 * _uk_rdiv's range, or the row's divisor out of it) and cond holds, the
 * vector's outputs again with exact divisions, from the same values
 * (body: one element's). A branch a vector, not an element: one an element
 * kept the compiler from interleaving the elements' steps (float32 softmax
 * of few long rows: 0.3-0.6 us of 5-9, H200), and a redo of the thread's
 * whole pass held its values and outputs together (registers: occupancy
 * at many blocks an SM). */
static void vec_redo(uk_strbuf *b, const char *cond, const char *body) {
  uk__sb_addf(b, "        if (%s_uk_bad) {\n#pragma unroll\n          for (int _i = 0; _i < _UK_RV; _i++) {\n%s"
                 "          }\n          _uk_bad = false;\n        }\n", cond, body);
}

/* The shared-memory variants' output pass: each thread's _UK_RV
 * consecutive kept elements at a time (loads: their vectors), their
 * outputs gathered by fv(_J, _I, args) and stored as one vector each; then
 * the elements past the kept part one a step, rest(_J, loaded). Divisions
 * by a row's float32 value: fv's branch-free (vec_redo), rest's exact. */
static void vec_outputs(row_em *e, const char *fv, const char *loads, const char *args, const char *rest,
                        uk_strbuf *b) {
  const uk_fuse_prog *g = e->c.g;
  const uk_fuse_plan *p = e->c.p;
  uk__sb_addf(b, "#pragma unroll 1\n      for (long long _J0 = (long long)_uk_t * _UK_RV; _J0 < _uk_nc; _J0 += (long long)_uk_T * _UK_RV) {\n%s",
              loads);
  int d = e->ndiv > 0;
  uk__sb_addf(b, "#pragma unroll\n        for (int _i = 0; _i < _UK_RV; _i++) {\n          const long long _J = _J0 + _i;\n"
                 "          %s(_J, _i%s%s);\n        }\n", fv, args, d ? ", false" : "");
  if (d) {
    uk_strbuf t;
    uk__sb_init(&t);
    uk__sb_addf(&t, "            const long long _J = _J0 + _i;\n            %s(_J, _i%s, true);\n", fv, args);
    vec_redo(b, "", uk__sb_str(&t));
    if (t.failed) b->failed = 1;
    uk__sb_release(&t);
  }
  for (int o = 0; o < g->nout; o++)
    if (!p->row.out_per_row[o])
      uk__sb_addf(b, "        _uk_stv<_UK_RV>(_uk_b_out%d, _J0, _uk_c_out%d, _uk_w_out%d);\n", o, o, o);
  uk__sb_addf(b, "      }\n#pragma unroll 4\n      for (long long _J = _uk_nc + _uk_t; _J < _uk_n; _J += _uk_T) %s(_J%s);\n",
              rest, uk__sb_str(&e->loaded));
}

/* The registers variant's output pass: _uk_f(_J, _I, args) over every
 * slot; where divisions by a row's float32 value go through its _uk_d<id>
 * (e->ndiv), branch-free and a vector's again where one flagged (vec_redo)
 * where the variant says (_UK_RD, uk__row_try_div), else exact at once. */
static void reg_outputs(row_em *e, const char *args, uk_strbuf *b, uk_strbuf *tmp) {
  uk__sb_reset(tmp);
  uk__sb_addf(tmp, "_uk_f(_J, _I%s%s);", args, e->ndiv > 0 ? ", !_UK_RD" : "");
  if (e->ndiv == 0) {
    reg_loop(b, uk__sb_str(tmp), "", NULL);
    return;
  }
  uk_strbuf body, redo;
  uk__sb_init(&body);
  uk__sb_init(&redo);
  reg_slot(&body, "            ");
  uk__sb_addf(&body, "            _uk_f(_J, _I%s, true);\n", args);
  vec_redo(&redo, "_UK_RD && ", uk__sb_str(&body));
  reg_loop(b, uk__sb_str(tmp), "", uk__sb_str(&redo));
  if (body.failed || redo.failed) b->failed = 1;
  uk__sb_release(&body);
  uk__sb_release(&redo);
}

/* The per-element outputs. Registers: one function, gathering a thread's
 * outputs, then each output's vectors stored. Shared memory: one function
 * for the kept elements, gathering a vector's outputs (with a kept value:
 * it reads the value), and one for the rest (with a kept value: it
 * computes it), storing each element. */
static void emit_outputs(row_em *e, uk_strbuf *b, uk_strbuf *tmp) {
  const uk_fuse_prog *g = e->c.g;
  const uk_fuse_plan *p = e->c.p;
  const uk_fuse_row *r = &p->row;
  uk__sb_add(b, "    {\n");
  if (e->ndiv > 0) uk__sb_add(b, "      bool _uk_bad = false; /* a division flagged (_uk_rdiv_try) */\n");
  for (int o = 0; o < g->nout; o++)
    if (!r->out_per_row[o])
      uk__sb_addf(b, "      %s _uk_w_out%d[%s];\n", uk__fuse_ctype(p->out_dtype[o]), o, e->reg ? "_UK_RK * _UK_RV" : "_UK_RV");
  if (e->reuse >= 0) {
    uk_strbuf lp, ka, vl;
    uk__sb_init(&lp);
    uk__sb_init(&ka);
    uk__sb_init(&vl);
    for (int j = 0; j < r->nparams; j++) {
      int k = r->param[j].index;
      const char *t = uk__fuse_ctype(p->type[k].dtype), *ta = uk__fuse_ctype(p->type[e->reuse].dtype);
      if (r->param[j].kind != UK_ROW_IN) continue;
      if (k != e->reuse_in) {
        uk__sb_addf(&lp, ", const %s in%d", t, k);
        if (e->reg) uk__sb_addf(&ka, ", _uk_r_in%d[_I]", k);
        else {
          uk__sb_addf(&ka, ", _uk_vin%d.v[_i]", k);
          uk__sb_addf(&vl, "        const _uk_vec<%s, _UK_RV> _uk_vin%d = *(const _uk_vec<%s, _UK_RV> *)(_uk_k_in%d + _J0);\n",
                      t, k, t, k);
        }
      } else {
        uk__sb_addf(&lp, ", const %s _uk_kv", ta);
        if (e->reg) uk__sb_add(&ka, ", _uk_rv[_I]");
        else if (keep_vec(e)) {
          uk__sb_add(&ka, ", _uk_vkv.v[_i]");
          uk__sb_addf(&vl, "        const _uk_vec<%s, _UK_RV> _uk_vkv = *(const _uk_vec<%s, _UK_RV> *)(_uk_k_in%d + _J0);\n",
                      ta, ta, k);
        } else
          uk__sb_addf(&ka, ", *(const %s *)(_uk_k_in%d + _J)", ta, k);
      }
    }
    char kv[] = "_uk_kv";
    e->c.leaf[e->reuse] = kv;
    out_fn(e, "_uk_f", 1, uk__sb_str(&lp), b, tmp);
    e->c.leaf[e->reuse] = NULL;
    if (e->reg) {
      reg_outputs(e, uk__sb_str(&ka), b, tmp);
    } else {
      out_fn(e, "_uk_g", 0, uk__sb_str(&e->lparams), b, tmp);
      vec_outputs(e, "_uk_f", uk__sb_str(&vl), uk__sb_str(&ka), "_uk_g", b);
    }
    if (lp.failed || ka.failed || vl.failed) b->failed = 1;
    uk__sb_release(&lp);
    uk__sb_release(&ka);
    uk__sb_release(&vl);
  } else {
    out_fn(e, "_uk_f", 1, uk__sb_str(&e->lparams), b, tmp);
    if (e->reg) {
      reg_outputs(e, uk__sb_str(&e->regd), b, tmp);
    } else {
      out_fn(e, "_uk_g", 0, uk__sb_str(&e->lparams), b, tmp);
      vec_outputs(e, "_uk_f", uk__sb_str(&e->kvload), uk__sb_str(&e->keptv), "_uk_g", b);
    }
  }
  if (e->reg) {
    uk__sb_add(b, "#if _UK_RX\n");
    for (int o = 0; o < g->nout; o++)
      if (!r->out_per_row[o])
        uk__sb_addf(b, "      _uk_st_stg<_uk_T, _UK_RK, _UK_RV>(_uk_p_out%d, _uk_xe, _uk_xl, _uk_xs, _uk_w_out%d);\n", o, o);
    uk__sb_add(b, "#endif\n#if !_UK_RX\n#pragma unroll\n      for (int _k = 0; _k < _UK_RK; _k++) {\n"
                  "        const int _J = (_k * _uk_T + _uk_t) * _UK_RV;\n        if (_UK_RW ? _uk_live : _J < _uk_lim) {\n");
    for (int o = 0; o < g->nout; o++)
      if (!r->out_per_row[o])
        uk__sb_addf(b, "          _uk_stv<_UK_RV>(_uk_b_out%d, _J, _uk_c_out%d, _uk_w_out%d + _k * _UK_RV);\n", o, o, o);
    uk__sb_add(b, "        }\n      }\n#endif\n");
  }
  uk__sb_add(b, "    }\n");
}

/* The row's bases: each array's start (_uk_b_*) and element stride (_uk_c_*). */
static void emit_bases(const uk_fuse_row *r, int nd, uk_strbuf *b) {
  for (int j = 0; j < r->nparams; j++) {
    int k = r->param[j].index;
    if (r->param[j].kind == UK_ROW_IN)
      uk__sb_addf(b, "    const char *_uk_b_in%d = (const char *)_uk_p_in%d + _uk_ix.off(_uk_s_in%d);\n"
                     "    const long long _uk_c_in%d = _uk_s_in%d.s[%d];\n",
                  k, k, k, k, k, nd - 1);
    else if (r->param[j].kind == UK_ROW_OUT)
      uk__sb_addf(b, "    char *_uk_b_out%d = (char *)_uk_p_out%d + _uk_ix.off(_uk_s_out%d);\n"
                     "    const long long _uk_c_out%d = _uk_s_out%d.s[%d];\n",
                  k, k, k, k, k, nd - 1);
  }
}

/* The cluster variants' bases moved to the block's slice, from element
 * _uk_lo of the row. */
static void emit_slice_bases(const uk_fuse_row *r, uk_strbuf *b) {
  for (int j = 0; j < r->nparams; j++) {
    int k = r->param[j].index;
    if (r->param[j].kind == UK_ROW_IN) uk__sb_addf(b, "    _uk_b_in%d += _uk_lo * _uk_c_in%d;\n", k, k);
    else if (r->param[j].kind == UK_ROW_OUT) /* a per-row output's last stride is 0 */
      uk__sb_addf(b, "    _uk_b_out%d += _uk_lo * _uk_c_out%d;\n", k, k);
  }
}

/* The shared-memory variants' copy of a row's first _uk_nc elements of
 * each array input into shared memory: each thread's _UK_RV consecutive
 * elements at a time, the ones its passes and outputs read (vec_loops,
 * vec_outputs): no barrier before (the last row's slots are its own) or
 * after (it waits for its own copies). */
static void emit_keep(const uk_fuse_row *r, uk_strbuf *b) {
  uk__sb_add(b, "#pragma unroll 4\n"
                "    for (long long _J = (long long)_uk_t * _UK_RV; _J < _uk_nc; _J += (long long)_uk_T * _UK_RV) {\n");
  for (int j = 0; j < r->nparams; j++)
    if (r->param[j].kind == UK_ROW_IN) {
      int k = r->param[j].index;
      uk__sb_addf(b, "      _uk_keep_vec<_UK_RV>(_uk_k_in%d, _uk_b_in%d, _J, _uk_c_in%d);\n", k, k, k);
    }
  uk__sb_add(b, "    }\n    _uk_keep_wait();\n");
}

/* The cluster variant's row loop (templates/ukern/fusion_row_cluster.cuh):
 * a row a cluster, the block of rank R owning elements [R * nc, R * nc +
 * _uk_n) of it (nc: _uk_geo's slice; _uk_n clipped to the row), whose
 * bases are moved to that start so that the passes see the slice as a
 * row; then the slice kept, all of it (the sizing made it fit). */
static void emit_cluster_head(const uk_fuse_row *r, int nd, int nlevels, const char *regions, uk_strbuf *b) {
  uk__sb_addf(b, "  const int _uk_T = _uk_g.T, _uk_t = (int)threadIdx.x;\n"
                 "  const unsigned _uk_cr = _uk_cl_rank();\n"
                 "  const long long _uk_lo0 = (long long)_uk_cr * _uk_g.nc, _uk_lo = _uk_lo0 < _uk_g.n ? _uk_lo0 : _uk_g.n;\n"
                 "  const long long _uk_n = _uk_g.n - _uk_lo < _uk_g.nc ? _uk_g.n - _uk_lo : _uk_g.nc, _uk_nc = _uk_n,\n"
                 "                  _uk_N = _uk_g.n; /* the row's length (means) */\n"
                 "  (void)_uk_N;\n"
                 "  unsigned char *_uk_kp = _uk_dyn;\n"
                 "%s",
              regions);
  for (int L = 1; L <= nlevels; L++) uk__sb_addf(b, "  _uk_cl_init(_uk_cs%d);\n", L);
  uk__sb_addf(b, "  _uk_cl_init_done();\n"
                 "  unsigned _uk_par = 0; /* rows run: which partial slot and mbarrier phase a reduction uses */\n"
                 "  for (long long _uk_row = _uk_cl_id(); _uk_row < _uk_g.nrows; _uk_row += _uk_cl_count(), _uk_par++) {\n"
                 "    const _uk_rowix<%d> _uk_ix(_uk_g, _uk_row);\n",
              nd);
  emit_bases(r, nd, b);
  emit_slice_bases(r, b);
  emit_keep(r, b);
}

/* One variant's body (e->reg, e->cluster): the row loop, the row's
 * elements, each level, the outputs. */
static uk_status emit_body(row_em *e, int nd, int nlevels, int nelem, const char *regions, uk_strbuf *pre, uk_strbuf *b,
                           uk_strbuf *tmp) {
  const uk_fuse_prog *g = e->c.g;
  const uk_fuse_plan *p = e->c.p;
  const uk_fuse_row *r = &p->row;
  uk_status s = UK_OK;
  memset(e->final_, 0, (size_t)g->nnodes + 1);
  memset(e->rdiv, 0, (size_t)g->nnodes + 1);
  e->ndiv = 0;
  if (e->reg) {
    /* with _UK_RC, a row over a cluster: the block of rank R (T threads, a
     * row a block) holds elements [R * nc, R * nc + _uk_lim) of it in
     * registers, its bases moved there (the cluster variant's slices) */
    uk__sb_add(b, "  constexpr int _uk_T = _UK_RT;\n"
                  "  const long long _uk_n = _uk_g.n;\n"
                  "#if _UK_RC\n"
                  "  const int _uk_t = (int)threadIdx.x;\n"
                  "  const unsigned _uk_cr = _uk_cl_rank();\n"
                  "  const long long _uk_lo0 = (long long)_uk_cr * _uk_g.nc, _uk_lo = _uk_lo0 < _uk_n ? _uk_lo0 : _uk_n;\n"
                  "  const int _uk_sl = (int)(_uk_n - _uk_lo < _uk_g.nc ? _uk_n - _uk_lo : _uk_g.nc);\n");
    for (int L = 1; L <= nlevels; L++) uk__sb_addf(b, "  _uk_cl_init(_uk_cs%d);\n", L);
    uk__sb_add(b, "  _uk_cl_init_done();\n"
                  "  unsigned _uk_par = 0; /* rows run: which partial slot and mbarrier phase a reduction uses */\n"
                  "  for (long long _uk_r0 = _uk_cl_id(); _uk_r0 < _uk_g.nrows; _uk_r0 += _uk_cl_count(), _uk_par++) {\n"
                  "#endif\n#if !_UK_RC\n"
                  "  const int _uk_t = (int)threadIdx.x & (_uk_T - 1), _uk_rpb = (int)blockDim.x / _uk_T;\n"
                  "  constexpr unsigned _uk_cr = 0;\n"
                  "  constexpr long long _uk_lo = 0;\n"
                  "  (void)_uk_cr, (void)_uk_lo;\n"
                  "  for (long long _uk_r0 = (long long)blockIdx.x * _uk_rpb; _uk_r0 < _uk_g.nrows; "
                  "_uk_r0 += (long long)gridDim.x * _uk_rpb) {\n"
                  "#endif\n");
    uk__sb_addf(b, "    long long _uk_row = _uk_r0 + (long long)(threadIdx.x / _uk_T);\n"
                   "    const bool _uk_live = _uk_row < _uk_g.nrows;\n"
                   "    if (!_uk_live) _uk_row = _uk_g.nrows - 1;\n"
                   "#if _UK_RC\n"
                   "    const int _uk_lim = _uk_sl;\n"
                   "#endif\n#if !_UK_RC\n"
                   "    const int _uk_lim = _uk_live ? (int)_uk_n : 0; /* a row in registers is short */\n"
                   "#endif\n"
                   "    const _uk_rowix<%d> _uk_ix(_uk_g, _uk_row);\n",
                nd);
    emit_bases(r, nd, b);
    uk__sb_add(b, "#if _UK_RC\n");
    emit_slice_bases(r, b);
    uk__sb_add(b, "#endif\n");
    for (int j = 0; j < r->nparams; j++)
      if (r->param[j].kind == UK_ROW_IN) {
        int k = r->param[j].index;
        uk__sb_addf(b, "    %s _uk_r_in%d[_UK_RK * _UK_RV] = {}; /* zeros past the row */\n", uk__fuse_ctype(p->type[k].dtype), k);
      }
    /* whole narrow rows: a warp's accesses through its shared slot (_uk_ld_stg) */
    uk__sb_add(b, "#if _UK_RX\n"
                  "    const long long _uk_xf = _uk_r0 + (long long)((threadIdx.x >> 5) * (32 / _uk_T)), _uk_xe = _uk_xf * _uk_n,\n"
                  "                    _uk_xr = _uk_g.nrows - _uk_xf;\n"
                  "    const int _uk_xl = (_uk_xr < 32 / _uk_T ? (int)(_uk_xr > 0 ? _uk_xr : 0) : 32 / _uk_T) * (_uk_T * _UK_RK);\n"
                  "    unsigned char *const _uk_xs = _uk_stg + (threadIdx.x >> 5) * (32 * _UK_RK * 16);\n");
    for (int j = 0; j < r->nparams; j++)
      if (r->param[j].kind == UK_ROW_IN) {
        int k = r->param[j].index;
        uk__sb_addf(b, "    _uk_ld_stg<_uk_T, _UK_RK, _UK_RV>(_uk_r_in%d, _uk_p_in%d, _uk_xe, _uk_xl, _uk_xs);\n", k, k);
      }
    uk__sb_add(b, "#endif\n#if !_UK_RX\n#pragma unroll\n    for (int _k = 0; _k < _UK_RK; _k++) {\n"
                  "      const int _J = (_k * _uk_T + _uk_t) * _UK_RV;\n      if (_UK_RW || _J < _uk_lim) {\n");
    for (int j = 0; j < r->nparams; j++)
      if (r->param[j].kind == UK_ROW_IN) {
        int k = r->param[j].index;
        uk__sb_addf(b, "        _uk_ldv<_UK_RV>(_uk_r_in%d + _k * _UK_RV, _uk_b_in%d, _J, _uk_c_in%d);\n", k, k, k);
      }
    uk__sb_add(b, "      }\n    }\n#endif\n");
    if (e->reuse >= 0)
      uk__sb_addf(b, "    %s _uk_rv[_UK_RK * _UK_RV];\n", uk__fuse_ctype(p->type[e->reuse].dtype));
  } else if (e->cluster) {
    emit_cluster_head(r, nd, nlevels, regions, b);
  } else {
    uk__sb_addf(b, "  constexpr int _uk_T = _UK_RT;\n"
                   "  const int _uk_t = (int)threadIdx.x %% _uk_T, _uk_rpb = (int)blockDim.x / _uk_T;\n"
                   "  const long long _uk_n = _uk_g.n, _uk_nc = _uk_g.nc;\n"
                   "  unsigned char *_uk_kp = _uk_dyn + (threadIdx.x / _uk_T) * _uk_g.rowbytes;\n"
                   "%s"
                   "  for (long long _uk_row = (long long)blockIdx.x * _uk_rpb + (long long)(threadIdx.x / _uk_T); "
                   "_uk_row < _uk_g.nrows;\n       _uk_row += (long long)gridDim.x * _uk_rpb) {\n"
                   "    const _uk_rowix<%d> _uk_ix(_uk_g, _uk_row);\n",
                regions, nd);
    emit_bases(r, nd, b);
    emit_keep(r, b);
  }
  for (int L = 1; L <= nlevels && !s; L++) s = emit_level(e, L, pre, b, tmp);
  if (s) return s;
  if (nelem) emit_outputs(e, b, tmp);
  if (nelem < g->nout) {
    uk_fuse_fn f;
    uk__sb_add(b, e->reg       ? "    if (_uk_t == 0 && _uk_live && _uk_cr == 0) {\n"
                  : e->cluster ? "    if (_uk_t == 0 && _uk_cr == 0) {\n"
                               : "    if (_uk_t == 0) {\n");
    uk_strbuf wb;
    uk__sb_init(&wb);
    fn_start(e, &f, &wb, "      ");
    for (int o = 0; o < g->nout; o++) {
      char lv[32];
      if (!r->out_per_row[o]) continue;
      snprintf(lv, sizeof lv, "_uk_b_out%d", o);
      write_out(e, &f, o, lv, &wb, tmp);
    }
    uk__sb_add(b, uk__sb_str(&wb));
    if (wb.failed) b->failed = 1;
    uk__sb_release(&wb);
    uk__sb_add(b, "    }\n");
  }
  uk__sb_add(b, "  }\n");
  return UK_OK;
}

static uk_status emit(row_em *e, int nd, const char *name, const char *user_preamble) {
  const uk_fuse_prog *g = e->c.g;
  uk_fuse_plan *p = e->c.p;
  uk_fuse_row *r = &p->row;
  /* regions: each kept input's part of the row's shared memory, at offset */
  uk_strbuf pre, sig, b, tmp, regions, offset;
  uk__sb_init(&regions);
  uk__sb_init(&offset);
  uk__sb_init(&pre);
  uk__sb_init(&sig);
  uk__sb_init(&b);
  uk__sb_init(&tmp);
  uk_status s = UK_OK;
  int nlevels = 0;
  for (int id = 0; id < g->nnodes; id++)
    if (e->cls[id] == C_ROW && g->nodes[id].kind == UK_FN_RED && e->level[id] > nlevels) nlevels = e->level[id];
  r->levels = nlevels;
  uk__sb_add(&pre, "#include <ukern/fusion_row.cuh>\n");
  uk__fuse_banner(&e->c, &pre, user_preamble);
  /* parameters: array inputs, scalars, outputs, geometry */
  for (int k = 0; k < g->nin; k++) {
    if (!p->needed[k]) continue;
    const char *t = uk__fuse_ctype(p->type[k].dtype);
    r->param[r->nparams].index = k;
    if (p->scalar[k]) {
      r->param[r->nparams++].kind = UK_ROW_SCALAR;
      uk__sb_addf(&sig, "%s    const %s in%d", sig.len ? ",\n" : "", t, k);
      continue;
    }
    r->param[r->nparams++].kind = UK_ROW_IN;
    uk__sb_addf(&regions, "  %s *const _uk_k_in%d = (%s *)(_uk_kp%s);\n", t, k, t, uk__sb_str(&offset));
    uk__sb_addf(&offset, " + ((_uk_nc * (long long)sizeof(%s) + 15) & ~15LL)", t);
    uk__sb_addf(&sig, "%s    const %s *_uk_p_in%d, const _uk_st<%d> _uk_s_in%d", sig.len ? ",\n" : "", t, k, nd, k);
    uk__sb_addf(&e->lparams, ", const %s in%d", t, k);
    uk__sb_addf(&e->keptv, ", _uk_vin%d.v[_i]", k);
    uk__sb_addf(&e->kvload, "        const _uk_vec<%s, _UK_RV> _uk_vin%d = *(const _uk_vec<%s, _UK_RV> *)(_uk_k_in%d + _J0);\n",
                t, k, t, k);
    uk__sb_addf(&e->regd, ", _uk_r_in%d[_I]", k);
    uk__sb_addf(&e->loaded, ", _uk_ld<%s>(_uk_b_in%d, _J, _uk_c_in%d)", t, k, k);
  }
  for (int o = 0; o < g->nout; o++) {
    r->param[r->nparams].kind = UK_ROW_OUT; /* out_per_row: uk__fuse_row_plan's */
    r->param[r->nparams++].index = o;
    uk__sb_addf(&sig, "%s    %s *_uk_p_out%d, const _uk_st<%d> _uk_s_out%d", sig.len ? ",\n" : "",
                uk__fuse_ctype(p->out_dtype[o]), o, nd, o);
  }
  r->max_threads = UK_ROW_MAX_THREADS;
  if (!(r->name = malloc(strlen(name) + 8))) goto nomem;
  snprintf(r->name, strlen(name) + 8, "%s_row", name);
  int nelem = 0;
  for (int o = 0; o < g->nout; o++) nelem += !r->out_per_row[o];
  e->reuse = -1;
  e->reuse_level = nlevels;
  if (nelem && nlevels && (s = pick_reuse(e, nlevels))) goto out;
  /* register bytes of an element: inputs, the kept value, outputs */
  r->reg_bytes = e->reuse >= 0 ? (int)uk_dtype_size(p->type[e->reuse].dtype) : 0;
  for (int j = 0; j < r->nparams; j++)
    if (r->param[j].kind == UK_ROW_IN) r->reg_bytes += (int)uk_dtype_size(p->type[r->param[j].index].dtype);
  for (int o = 0; o < g->nout; o++)
    if (!r->out_per_row[o]) r->reg_bytes += (int)uk_dtype_size(p->out_dtype[o]);
  /* the kernel: the registers variant, then the shared-memory one */
  uk__sb_add(&pre, "#ifndef _UK_RK\n#define _UK_RK 0\n#endif\n#ifndef _UK_RV\n#define _UK_RV 1\n#endif\n"
                   "#ifndef _UK_RT\n#define _UK_RT 256\n#endif\n#ifndef _UK_RW\n#define _UK_RW 0\n#endif\n"
                   "#ifndef _UK_RX\n#define _UK_RX 0\n#endif\n#ifndef _UK_RD\n#define _UK_RD 0\n#endif\n");
  uk__sb_add(&pre, "#ifndef _UK_RC\n#define _UK_RC 0\n#endif\n#if _UK_RC\n#include <ukern/fusion_row_cluster.cuh>\n#endif\n");
  uk__sb_add(&b, "  extern __shared__ __align__(16) unsigned char _uk_dyn[];\n");
  for (int L = 1; L <= nlevels; L++) uk__sb_addf(&b, "  __shared__ _uk_part<_uk_acc%d> _uk_sm%d;\n", L, L);
  uk__sb_add(&b, "#if _UK_RK\n#if _UK_RX\n  __shared__ __align__(16) unsigned char _uk_stg[8 * 32 * _UK_RK * 16]; /* a slot a warp */\n#endif\n");
  uk__sb_add(&b, "#if _UK_RC\n");
  for (int L = 1; L <= nlevels; L++) uk__sb_addf(&b, "  __shared__ _uk_clpart<_uk_acc%d> _uk_cs%d;\n", L, L);
  uk__sb_add(&b, "#endif\n");
  e->reg = 1;
  if ((s = emit_body(e, nd, nlevels, nelem, uk__sb_str(&regions), &pre, &b, &tmp))) goto out;
  /* the cluster variant: the shared-memory one over a block's slice */
  uk__sb_add(&b, "#elif _UK_RC\n");
  for (int L = 1; L <= nlevels; L++) uk__sb_addf(&b, "  __shared__ _uk_clpart<_uk_acc%d> _uk_cs%d;\n", L, L);
  e->reg = 0;
  e->cluster = 1;
  s = emit_body(e, nd, nlevels, nelem, uk__sb_str(&regions), &pre, &b, &tmp);
  e->cluster = 0;
  if (s) goto out;
  uk__sb_add(&b, "#else\n");
  e->reg = 0;
  if ((s = emit_body(e, nd, nlevels, nelem, uk__sb_str(&regions), &pre, &b, &tmp))) goto out;
  uk__sb_add(&b, "#endif\n}\n");
  uk__sb_addf(&pre, "\nextern \"C\" __global__ void __launch_bounds__(%d) %s(\n%s,\n    const _uk_geo<%d> _uk_g) {\n",
              UK_ROW_MAX_THREADS, r->name, uk__sb_str(&sig), nd);
  uk__sb_add(&pre, uk__sb_str(&b));
  if (pre.failed || sig.failed || b.failed || tmp.failed || regions.failed || offset.failed || e->lparams.failed ||
      e->loaded.failed || e->regd.failed || e->keptv.failed || e->kvload.failed)
    goto nomem;
  r->source = uk__sb_detach(&pre);
  goto out;
nomem:
  s = uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
out:
  uk__sb_release(&pre);
  uk__sb_release(&sig);
  uk__sb_release(&b);
  uk__sb_release(&tmp);
  uk__sb_release(&regions);
  uk__sb_release(&offset);
  return s;
}

/* The row plan's fields that calls read before its source exists
 * (uk__fuse_row_fits): one pass of classify. */
uk_status uk__fuse_row_plan(const uk_fuse_prog *g, uk_fuse_plan *p) {
  int nn = g->nnodes, *cls = calloc((size_t)nn + 1, sizeof *cls), *level = calloc((size_t)nn + 1, sizeof *level);
  uk_status s = UK_OK;
  if (!cls || !level) s = uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
  int nd = s ? 0 : classify(g, p, cls, level, &p->row.map_node);
  if (nd) {
    p->row.ndim = nd;
    for (int o = 0; o < g->nout; o++) p->row.out_per_row[o] = cls[g->out_node[o]] == C_ROW;
  }
  free(cls);
  free(level);
  return s;
}

uk_status uk__fuse_row_emit(const uk_fuse_prog *g, uk_fuse_plan *p, const char *name, const char *user_preamble) {
  int nn = g->nnodes, map_node;
  uk_status s = UK_OK;
  if (!p->row.ndim || p->row.source) return UK_OK;
  int *cls = calloc((size_t)nn + 1, sizeof *cls), *level = calloc((size_t)nn + 1, sizeof *level);
  row_em e;
  memset(&e, 0, sizeof e);
  e.c.g = g;
  e.c.p = p;
  e.c.no_online = 1;
  e.c.leaf = calloc((size_t)nn + 1, sizeof *e.c.leaf);
  e.c.done = calloc((size_t)nn + 1, 1);
  e.final_ = calloc((size_t)nn + 1, 1);
  e.rdiv = calloc((size_t)nn + 1, 1);
  e.cls = cls;
  e.level = level;
  uk__sb_init(&e.lparams);
  uk__sb_init(&e.keptv);
  uk__sb_init(&e.kvload);
  uk__sb_init(&e.loaded);
  uk__sb_init(&e.regd);
  p->row.nparams = 0;
  if (!cls || !level || !e.c.leaf || !e.c.done || !e.final_ || !e.rdiv) {
    s = uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
    goto out;
  }
  int nd = classify(g, p, cls, level, &map_node); /* as uk__fuse_row_plan's */
  for (int k = 0; k < g->nin; k++) {
    char buf[32];
    snprintf(buf, sizeof buf, "in%d", k);
    if (p->needed[k] && !(e.c.leaf[k] = strdup(buf))) {
      s = uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
      goto out;
    }
  }
  s = emit(&e, nd, name, user_preamble);
out:
  if (s) { /* the plan's fields stay; a later call may emit again */
    free(p->row.source);
    free(p->row.name);
    p->row.source = p->row.name = NULL;
    p->row.nparams = 0;
  }
  if (e.c.leaf)
    for (int id = 0; id < nn; id++) free(e.c.leaf[id]);
  free(e.c.leaf);
  free(e.c.done);
  free(e.final_);
  free(e.rdiv);
  free(cls);
  free(level);
  uk__sb_release(&e.lparams);
  uk__sb_release(&e.keptv);
  uk__sb_release(&e.kvload);
  uk__sb_release(&e.loaded);
  uk__sb_release(&e.regd);
  return s;
}
