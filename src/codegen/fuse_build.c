/* The C builder of fusion programs: the same nodes the parser makes, made by
 * calls. A program built in the order the text would evaluate it (inputs,
 * then each expression's operands before the operation) has the same node
 * ids, hence byte-identical kernels. Errors are sticky: the first one is
 * kept and returned by uk_fusion_create (uk_fusion_spec.builder). */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "codegen/fuse_ir.h"
#include "codegen/fuse_ops.h"

struct uk_fusion_builder {
  uk_fuse_prog *prog;
  uk_status status; /* first error */
  char *message;    /* its uk_last_error() text */
};

static int fail(uk_fusion_builder *b, uk_status s) {
  if (b && b->status == UK_OK) {
    b->status = s;
    b->message = strdup(uk_last_error());
  }
  return -1;
}

uk_status uk_fusion_builder_create(const char *inputs, uk_fusion_builder **out) {
  if (!out) return uk__errorf(UK_ERR_INVALID, "uk_fusion_builder_create: out is NULL");
  uk_fusion_builder *b = calloc(1, sizeof *b);
  uk_fuse_prog *g = b ? calloc(1, sizeof *g) : NULL;
  uk_status s = UK_OK;
  if (!g || !(g->text = strdup(""))) {
    s = uk__errorf(UK_ERR_NOMEM, "uk_fusion_builder_create: out of memory");
    goto fail;
  }
  b->prog = g;
  if ((s = uk__fuse_names("inputs", inputs, &g->in_names, &g->nin))) goto fail;
  for (int k = 0; k < g->nin; k++) {
    uk_fuse_node n = {0};
    n.kind = UK_FN_INPUT;
    n.input = k;
    if (uk__fuse_prog_add(g, &n) < 0) {
      s = uk__errorf(UK_ERR_NOMEM, "uk_fusion_builder_create: out of memory");
      goto fail;
    }
  }
  *out = b;
  return UK_OK;
fail:
  if (b) b->prog = g;
  uk_fusion_builder_destroy(b);
  return s;
}

void uk_fusion_builder_destroy(uk_fusion_builder *b) {
  if (!b) return;
  uk__fuse_prog_free(b->prog);
  free(b->message);
  free(b);
}

static int add(uk_fusion_builder *b, const uk_fuse_node *n) {
  if (!b) return -1;
  if (b->status) return -1;
  for (int k = 0; k < n->nargs; k++)
    if (n->arg[k] < 0 || n->arg[k] >= b->prog->nnodes)
      return fail(b, uk__errorf(UK_ERR_INVALID, "fusion builder: argument %d is not a node of this builder (%d)", k,
                                n->arg[k]));
  if (b->prog->nnodes >= UK_MAX_FUSE_NODES)
    return fail(b, uk__errorf(UK_ERR_INVALID, "fusion builder: more than %d nodes (UK_MAX_FUSE_NODES)",
                              UK_MAX_FUSE_NODES));
  int id = uk__fuse_prog_add(b->prog, n);
  return id < 0 ? fail(b, uk__errorf(UK_ERR_NOMEM, "fusion builder: out of memory")) : id;
}

int uk_fusion_input(uk_fusion_builder *b, const char *name) {
  if (!b || !name) return fail(b, uk__errorf(UK_ERR_INVALID, "uk_fusion_input: NULL argument"));
  for (int k = 0; k < b->prog->nin; k++)
    if (!strcmp(b->prog->in_names[k], name)) return k;
  return fail(b, uk__errorf(UK_ERR_NOT_FOUND, "uk_fusion_input: no input '%s'", name));
}

static int constant(uk_fusion_builder *b, uk_fuse_ckind k, int64_t i, double re, double im) {
  uk_fuse_node n = {0};
  n.kind = UK_FN_CONST;
  n.ckind = k;
  n.ival = i;
  n.re = re;
  n.im = im;
  return add(b, &n);
}

int uk_fusion_const_int(uk_fusion_builder *b, int64_t v) { return constant(b, UK_CK_INT, v, 0, 0); }
int uk_fusion_const_float(uk_fusion_builder *b, double v) { return constant(b, UK_CK_FLOAT, 0, v, 0); }
int uk_fusion_const_complex(uk_fusion_builder *b, double re, double im) {
  return constant(b, UK_CK_COMPLEX, 0, re, im);
}
int uk_fusion_const_bool(uk_fusion_builder *b, int v) { return constant(b, UK_CK_BOOL, v != 0, 0, 0); }

int uk_fusion_op(uk_fusion_builder *b, const char *fn, const int *args, int nargs) {
  if (!b || !fn || (nargs > 0 && !args)) return fail(b, uk__errorf(UK_ERR_INVALID, "uk_fusion_op: NULL argument"));
  int op = uk__fuse_op_lookup(fn, strlen(fn));
  if (op < 0) return fail(b, uk__errorf(UK_ERR_NOT_FOUND, "uk_fusion_op: unknown function '%s'", fn));
  const uk_fuse_opinfo *oi = uk__fuse_op_info(op);
  if (nargs != oi->nargs)
    return fail(b, uk__errorf(UK_ERR_INVALID, "uk_fusion_op: %s takes %d argument%s, got %d", fn, oi->nargs,
                              oi->nargs == 1 ? "" : "s", nargs));
  uk_fuse_node n = {0};
  n.kind = UK_FN_OP;
  n.op = op;
  n.nargs = nargs;
  for (int k = 0; k < nargs; k++) n.arg[k] = args[k];
  return add(b, &n);
}

int uk_fusion_cast(uk_fusion_builder *b, int arg, uk_dtype t) {
  if ((unsigned)t >= UK_DTYPE_COUNT_) return fail(b, uk__errorf(UK_ERR_INVALID, "uk_fusion_cast: invalid dtype"));
  uk_fuse_node n = {0};
  n.kind = UK_FN_CAST;
  n.cast = t;
  n.nargs = 1;
  n.arg[0] = arg;
  return add(b, &n);
}

int uk_fusion_reduce(uk_fusion_builder *b, const char *fn, int arg, const int *axes, int naxes, int keepdims,
                     int ddof) {
  if (!b || !fn || (naxes > 0 && !axes) || naxes > UK_MAX_NDIM)
    return fail(b, uk__errorf(UK_ERR_INVALID, "uk_fusion_reduce: invalid arguments"));
  int red = uk__fuse_red_lookup(fn, strlen(fn));
  if (red < 0) return fail(b, uk__errorf(UK_ERR_NOT_FOUND, "uk_fusion_reduce: unknown reduction '%s'", fn));
  if ((red == UK_RED_ARGMAX || red == UK_RED_ARGMIN) && naxes > 1)
    return fail(b, uk__errorf(UK_ERR_INVALID, "uk_fusion_reduce: argmax/argmin take one axis or None"));
  uk_fuse_node n = {0};
  n.kind = UK_FN_RED;
  n.op = red;
  n.nargs = 1;
  n.arg[0] = arg;
  n.axis_all = naxes < 0;
  n.naxes = naxes < 0 ? 0 : naxes;
  for (int k = 0; k < n.naxes; k++) n.axes[k] = axes[k];
  n.keepdims = keepdims != 0;
  n.ddof = ddof;
  return add(b, &n);
}

uk_status uk_fusion_output(uk_fusion_builder *b, const char *name, int node) {
  if (!b || !name) return uk__errorf(UK_ERR_INVALID, "uk_fusion_output: NULL argument");
  if (b->status) return b->status;
  uk_fuse_prog *g = b->prog;
  if (node < 0 || node >= g->nnodes) {
    fail(b, uk__errorf(UK_ERR_INVALID, "uk_fusion_output: node %d is not a node of this builder", node));
    return b->status;
  }
  for (int k = 0; k < g->nout; k++)
    if (!strcmp(g->out_names[k], name)) {
      g->out_node[k] = node; /* assigned again: the last assignment wins, as in the text */
      return UK_OK;
    }
  for (int k = 0; k < g->nin; k++)
    if (!strcmp(g->in_names[k], name)) {
      fail(b, uk__errorf(UK_ERR_INVALID, "uk_fusion_output: '%s' is an input", name));
      return b->status;
    }
  if (g->nout == UK_MAX_FUSE_INPUTS) {
    fail(b, uk__errorf(UK_ERR_INVALID, "uk_fusion_output: more than %d outputs (UK_MAX_FUSE_INPUTS)",
                       UK_MAX_FUSE_INPUTS));
    return b->status;
  }
  char **names = realloc(g->out_names, (size_t)(g->nout + 1) * sizeof *names);
  if (names) g->out_names = names;
  int *nodes = realloc(g->out_node, (size_t)(g->nout + 1) * sizeof *nodes);
  if (nodes) g->out_node = nodes;
  char *copy = strdup(name);
  if (!names || !nodes || !copy) {
    free(copy);
    fail(b, uk__errorf(UK_ERR_NOMEM, "uk_fusion_output: out of memory"));
    return b->status;
  }
  g->out_names[g->nout] = copy;
  g->out_node[g->nout++] = node;
  return UK_OK;
}

uk_status uk__fuse_builder_take(uk_fusion_builder *b, uk_fuse_prog **out) {
  if (!b) return uk__errorf(UK_ERR_INVALID, "uk_fusion_spec: builder is NULL");
  if (b->status) return uk__errorf(b->status, "%s", b->message ? b->message : "fusion builder failed");
  if (b->prog->nout == 0)
    return uk__errorf(UK_ERR_INVALID, "uk_fusion_create: the builder has no outputs (hint: uk_fusion_output)");
  /* a copy, so the builder stays usable */
  uk_fuse_prog *g = calloc(1, sizeof *g), *s = b->prog;
  if (!g) goto nomem;
  g->nin = s->nin;
  g->nout = s->nout;
  g->nnodes = g->cap = s->nnodes;
  g->text = strdup("");
  g->nodes = malloc((size_t)s->nnodes * sizeof *g->nodes);
  g->in_names = calloc((size_t)s->nin + 1, sizeof *g->in_names);
  g->out_names = calloc((size_t)s->nout + 1, sizeof *g->out_names);
  g->out_node = malloc((size_t)s->nout * sizeof *g->out_node);
  if (!g->text || !g->nodes || !g->in_names || !g->out_names || !g->out_node) goto nomem;
  memcpy(g->nodes, s->nodes, (size_t)s->nnodes * sizeof *g->nodes);
  memcpy(g->out_node, s->out_node, (size_t)s->nout * sizeof *g->out_node);
  for (int k = 0; k < s->nin; k++)
    if (!(g->in_names[k] = strdup(s->in_names[k]))) goto nomem;
  for (int k = 0; k < s->nout; k++)
    if (!(g->out_names[k] = strdup(s->out_names[k]))) goto nomem;
  *out = g;
  return UK_OK;
nomem:
  uk__fuse_prog_free(g);
  return uk__errorf(UK_ERR_NOMEM, "uk_fusion_create: out of memory");
}
