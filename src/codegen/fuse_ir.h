/* The fusion program: a NumPy-subset program (Python syntax) parsed once
 * into a DAG of nodes, typed per call signature with NumPy 2 rules (NEP 50)
 * and lowered to ElementwiseKernel / ReductionKernel definitions.
 *
 * Stages, one file each:
 *   fuse_parse.c  text -> uk_fuse_prog (tokenizer, parser, name resolution)
 *   fuse_ops.c    the operator/function table and dtype promotion
 *   fuse_plan.c   per-signature dtypes, weak flags and ndims of every node;
 *                 kernels: reductions grouped by axes, post-map domains,
 *                 materialised intermediates, the final elementwise kernel
 *   fuse_emit.c   kernel definition text for each planned kernel
 *   fuse_build.c  the C builder (nodes made in code, same program)
 * The runtime object (uk_fusion, runtime/fusion.c) binds calls, picks the
 * plan and drives internal ElementwiseKernel / ReductionKernel objects.
 * Nodes are appended in dependency order: a node's args have lower ids. */
#ifndef UK_CODEGEN_FUSE_IR_H
#define UK_CODEGEN_FUSE_IR_H

#include <stddef.h>
#include <stdint.h>

#include "ukern/ukern.h"

typedef enum uk_fuse_kind {
  UK_FN_INPUT = 0, /* input `input` of the program */
  UK_FN_CONST,     /* a Python literal (weak) */
  UK_FN_OP,        /* an operator or NumPy function (uk_fuse_op) */
  UK_FN_CAST,      /* float32(x), astype(x, 'f2') */
  UK_FN_RED        /* a reduction (uk_fuse_red) */
} uk_fuse_kind;

/* Literal kinds, ordered as NumPy's kind order (bool < int < float < complex). */
typedef enum uk_fuse_ckind { UK_CK_BOOL = 0, UK_CK_INT, UK_CK_FLOAT, UK_CK_COMPLEX } uk_fuse_ckind;

typedef enum uk_fuse_red {
  UK_RED_SUM = 0, UK_RED_PROD, UK_RED_MAX, UK_RED_MIN, UK_RED_MEAN, UK_RED_ANY, UK_RED_ALL,
  UK_RED_ARGMAX, UK_RED_ARGMIN, UK_RED_VAR, UK_RED_STD, UK_RED_COUNT_
} uk_fuse_red;

#define UK_FUSE_MAX_ARGS 3

typedef struct uk_fuse_node {
  uk_fuse_kind kind;
  int op;                    /* uk_fuse_op for OP, uk_fuse_red for RED */
  int nargs;
  int arg[UK_FUSE_MAX_ARGS]; /* node ids */
  size_t pos;                /* byte offset in the program text (errors) */
  int input;                 /* INPUT: which */
  uk_fuse_ckind ckind;       /* CONST */
  int64_t ival;
  double re, im;
  uk_dtype cast;             /* CAST */
  int axis_all;              /* RED: axis=None (the default) */
  int naxes;                 /* RED: axes as written (may be negative) */
  int axes[UK_MAX_NDIM];
  int keepdims;
  int ddof;
} uk_fuse_node;

typedef struct uk_fuse_prog {
  uk_fuse_node *nodes;
  int nnodes, cap;
  int nin, nout;
  char **in_names;
  char **out_names;
  int *out_node; /* node computing each output; -1 until assigned */
  char *text;    /* program text (errors point into it); "" for built programs */
} uk_fuse_prog;

/* Parses "x, y" / "d" / program text into *out (caller frees with
 * uk__fuse_prog_free). Syntax, unknown names, unknown functions, wrong
 * arity and unassigned outputs are errors with line:column and caret. */
uk_status uk__fuse_parse(const char *inputs, const char *outputs, const char *program, uk_fuse_prog **out);
void uk__fuse_prog_free(uk_fuse_prog *p);
/* Appends a node (copied); returns its id or -1 on no memory. */
int uk__fuse_prog_add(uk_fuse_prog *p, const uk_fuse_node *n);
/* Splits a comma-separated name list into p's inputs or outputs. */
uk_status uk__fuse_names(const char *what, const char *list, char ***names, int *count);

/* A copy of a builder's program (uk_fusion_builder, fuse_build.c); the
 * builder's first error if it has one. */
uk_status uk__fuse_builder_take(uk_fusion_builder *b, uk_fuse_prog **out);

#endif
