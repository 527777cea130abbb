/* The split plan's emitter (fuse_emit.c: the elementwise and reduction
 * kernel definitions of a planned program), and what it shares with the
 * row plan's (fuse_row.h): typed locals of nodes and the accumulator
 * members of reductions. Internal to codegen. */
#ifndef UK_CODEGEN_FUSE_EMIT_H
#define UK_CODEGEN_FUSE_EMIT_H

#include "base/strbuf.h"
#include "codegen/fuse_plan.h"

/* One generated function body: which nodes are leaves (parameters) and
 * which locals exist already. */
typedef struct uk_fuse_fn {
  const uk_fuse_prog *g;
  const uk_fuse_plan *p;
  char **leaf;   /* per node: parameter/expression text, or NULL */
  char *done;    /* per node: local emitted */
  uk_strbuf *body;
  const char *indent;
  const int *domain; /* per node or NULL; intermediates of own_domain are computed, not read */
  int own_domain;
  /* per node or NULL: 1 where a float32 division by the node's value (a
   * row's value, the row plan) goes through its `_uk_d<id>` (_uk_rdiv,
   * ukern/fusion_row.cuh) */
  const char *rdiv;
  /* 1: those divisions take their branch-free form (_uk_rdiv_try), which
   * flags `_uk_bad` where it does not hold and gives the exact one with
   * `_uk_exact` (the registers variant's output pass, fuse_row.c) */
  int rdiv_try;
} uk_fuse_fn;

/* The state of one program's emission. */
typedef struct uk_fuse_ectx {
  const uk_fuse_prog *g;
  uk_fuse_plan *p;
  const int *group_of, *mat, *domain;
  int *temp_of; /* per node: intermediate index or -1 */
  char **leaf;
  char *done;
  char *used;
  int no_online; /* 1: a max with an online-softmax partner is a plain max */
} uk_fuse_ectx;

/* One reduction's accumulator member. */
typedef struct uk_fuse_member {
  int id, red;
  uk_dtype x, r, a; /* arg dtype, result dtype, accumulation dtype */
  char type[64];    /* C type of the member */
} uk_fuse_member;

/* Emits the kernel definitions of a planned program into p->kernels. */
uk_status uk__fuse_emit(const uk_fuse_prog *g, uk_fuse_plan *p, const char *name, const char *user_preamble,
                        const int *group_of, const int *materialised, const int *domain);

/* The C type of dtype t in generated code. */
const char *uk__fuse_ctype(uk_dtype t);
/* Resets the per-function state: inputs and intermediates are leaves. */
void uk__fuse_fn_begin(uk_fuse_ectx *c, uk_fuse_fn *f, uk_strbuf *body, const char *indent);
/* Emits node id's locals into f->body and appends its value as dtype `to`. */
void uk__fuse_value(uk_fuse_fn *f, int id, uk_dtype to, uk_strbuf *out);
/* The include, the parameter-name comment and the user's preamble. */
void uk__fuse_banner(const uk_fuse_ectx *c, uk_strbuf *pre, const char *user_preamble);
/* A reduction node as an accumulator member: its type, the value one
 * element maps to (`_J`: the element's index along the reduced axes), the
 * combine of x and y, the identity, and the result (as the node's dtype)
 * from the reduced accumulator x (`_uk_n`: elements reduced, for mean). */
void uk__fuse_member_init(const uk_fuse_ectx *c, int id, uk_fuse_member *m);
void uk__fuse_member_map(uk_fuse_fn *f, const uk_fuse_member *m, uk_strbuf *out);
void uk__fuse_member_comb(const uk_fuse_member *m, const char *x, const char *y, uk_strbuf *out);
void uk__fuse_member_ident(const uk_fuse_member *m, uk_strbuf *out);
void uk__fuse_member_final(const uk_fuse_ectx *c, const uk_fuse_member *m, const char *x, uk_strbuf *out);

#endif
