/* Kernels and calls made from specs: the kernel objects, argument parsing
 * ("float32[1024,1024], 0.5"), generated source and compile requests. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int split_opts(const char *text, char **store, const char **v, int max, int *n, int commas) {
  *n = 0;
  if (!text) return CLI_OK;
  if (!(*store = strdup(text))) return CLI_FAIL;
  char *p = *store;
  while (*p) {
    while (*p && (isspace((unsigned char)*p) || (commas && *p == ','))) p++;
    if (!*p) break;
    if (*n == max) {
      fprintf(stderr, "ukern: more than %d %s\n", max, commas ? "name expressions" : "options");
      return CLI_USAGE;
    }
    char *start = p;
    if (commas) {
      /* A name expression may hold commas inside <...>. */
      int depth = 0;
      while (*p && (depth > 0 || *p != ',')) {
        depth += *p == '<' || *p == '(';
        depth -= *p == '>' || *p == ')';
        p++;
      }
      char *end = p;
      while (end > start && isspace((unsigned char)end[-1])) end--;
      if (*p) p++;
      *end = 0;
    } else {
      while (*p && !isspace((unsigned char)*p)) p++;
      if (*p) *p++ = 0;
    }
    v[(*n)++] = start;
  }
  return CLI_OK;
}

/* Names in a comma-separated list ("x, y"): a fusion's parameter count. */
static int count_names(const char *list) {
  int n = 0, in_name = 0;
  for (const char *p = list ? list : ""; *p; p++) {
    if (*p == ',') in_name = 0;
    else if (!isspace((unsigned char)*p) && !in_name) in_name = 1, n++;
  }
  return n;
}

static const char fusion_hint[] =
    "  hint: in a fusion spec, in_params and out_params are names (`x, y`), program holds\n"
    "  NumPy statements (`d = sqrt(sum(x * x, axis=-1))`), and dtypes and shapes come from\n"
    "  `inputs` (`ukern gen --help` describes specs)\n";

int cli_kernel_create(uk_context *ctx, const cli_spec *s, const char *extra, cli_kernel *k) {
  memset(k, 0, sizeof *k);
  k->spec = s;
  k->ctx = ctx;
  int rc = split_opts(s->f[F_options], &k->opt_store, k->opts, CLI_MAX_OPTS, &k->nopts, 0);
  if (rc == CLI_OK)
    rc = split_opts(s->f[F_name_expressions], &k->name_store, k->names, CLI_MAX_OPTS, &k->nnames, 1);
  if (rc == CLI_OK && extra) k->opts[k->nopts++] = extra;
  if (rc != CLI_OK || s->kind == CLI_MODULE) return rc;
  const char *name = s->f[F_name] ? s->f[F_name] : "kernel";
  uk_status st;
  if (s->kind == CLI_ELEMENTWISE) {
    uk_elementwise_spec eo;
    memset(&eo, 0, sizeof eo);
    eo.preamble = s->f[F_preamble];
    eo.loop_prep = s->f[F_loop_prep];
    eo.after_loop = s->f[F_after_loop];
    eo.options = k->opts;
    eo.num_options = k->nopts;
    const char *nrd = s->f[F_no_reduce_dims];
    eo.no_reduce_dims = nrd && (!strcmp(nrd, "true") || !strcmp(nrd, "1") || !strcmp(nrd, "yes"));
    eo.in_params = s->f[F_in_params];
    eo.out_params = s->f[F_out_params];
    eo.operation = s->f[F_operation];
    eo.name = name;
    st = uk_elementwise_create(ctx, &eo, &k->ew);
  } else if (s->kind == CLI_FUSION) {
    uk_fusion_spec fo = {.inputs = s->f[F_in_params],
                         .outputs = s->f[F_out_params],
                         .program = s->f[F_program],
                         .name = name,
                         .preamble = s->f[F_preamble],
                         .options = k->opts,
                         .num_options = k->nopts};
    st = uk_fusion_create(ctx, &fo, &k->fu);
    k->nin = count_names(s->f[F_in_params]);
    k->nout = count_names(s->f[F_out_params]);
  } else {
    uk_reduction_spec rs;
    memset(&rs, 0, sizeof rs);
    rs.in_params = s->f[F_in_params];
    rs.out_params = s->f[F_out_params];
    rs.map_expr = s->f[F_map_expr];
    rs.reduce_expr = s->f[F_reduce_expr];
    rs.post_map_expr = s->f[F_post_map_expr];
    rs.identity = s->f[F_identity];
    rs.name = name;
    rs.reduce_type = s->f[F_reduce_type];
    rs.preamble = s->f[F_preamble];
    rs.options = k->opts;
    rs.num_options = k->nopts;
    if (s->f[F_block_reduce] && !strcmp(s->f[F_block_reduce], "cub")) rs.block_reduce = UK_BLOCK_REDUCE_CUB;
    st = uk_reduction_create(ctx, &rs, &k->red);
  }
  if (st == UK_OK && !k->fu)
    st = k->ew ? uk_elementwise_param_counts(k->ew, &k->nin, &k->nout)
               : uk_reduction_param_counts(k->red, &k->nin, &k->nout);
  if (st == UK_OK) return CLI_OK;
  rc = cli_fail("definition", st);
  if (s->kind == CLI_FUSION) {
    cli_spec_where(s, F_program);
    fputs(fusion_hint, stderr);
  }
  return rc;
}

void cli_kernel_destroy(cli_kernel *k) {
  uk_elementwise_destroy(k->ew);
  uk_reduction_destroy(k->red);
  uk_fusion_destroy(k->fu);
  free(k->opt_store);
  free(k->name_store);
  memset(k, 0, sizeof *k);
}

/* ------------------------------------------------------------------------ */
/* Arguments                                                                 */
/* ------------------------------------------------------------------------ */

/* float -> IEEE half / bfloat16 bits (the library's conversion: one
 * rounding, to nearest even). */
uint16_t cli_float_to_half(float f);
uint16_t cli_float_to_bf16(float f);

uint16_t cli_float_to_half(float f) {
  uint16_t h = 0;
  uk_dtype_encode(UK_FLOAT16, f, &h);
  return h;
}

uint16_t cli_float_to_bf16(float f) {
  uint16_t h = 0;
  uk_dtype_encode(UK_BFLOAT16, f, &h);
  return h;
}

/* Splits at commas outside [] and (). Returns the number of pieces. */
static int split_top(char *text, char **pieces, int max) {
  int n = 0, depth = 0;
  char *start = text;
  for (char *p = text;; p++) {
    if (*p == '[' || *p == '(') depth++;
    if (*p == ']' || *p == ')') depth--;
    if (*p == 0 || (*p == ',' && depth == 0)) {
      if (n == max) return -1;
      int end = *p == 0;
      *p = 0;
      while (isspace((unsigned char)*start)) start++;
      char *e = start + strlen(start);
      while (e > start && isspace((unsigned char)e[-1])) *--e = 0;
      pieces[n++] = start;
      if (end) break;
      start = p + 1;
    }
  }
  return n;
}

static int parse_dtype(const char *what, const char *name, uk_dtype *t) {
  uk_status st = uk_dtype_from_name(name, t);
  if (st != UK_OK) {
    fprintf(stderr, "ukern: %s: %s\n", what, uk_last_error());
    return CLI_USAGE;
  }
  return CLI_OK;
}

/* DTYPE[d0,d1,...] into a C-contiguous descriptor with data 0. */
static int parse_array(const char *what, char *text, uk_array *a) {
  char *open = strchr(text, '['), *close = strrchr(text, ']');
  if (!open || !close || close < open || close[1]) {
    fprintf(stderr, "ukern: %s: '%s' is not DTYPE[SHAPE] (e.g. float32[1024,1024])\n", what, text);
    return CLI_USAGE;
  }
  *open = 0;
  *close = 0;
  uk_dtype t;
  int rc = parse_dtype(what, text, &t);
  if (rc != CLI_OK) return rc;
  int64_t shape[UK_MAX_NDIM];
  int nd = 0;
  char *dims[UK_MAX_NDIM + 1];
  char *p = open + 1;
  while (isspace((unsigned char)*p)) p++;
  if (*p) {
    int nd_text = split_top(p, dims, UK_MAX_NDIM + 1);
    if (nd_text < 0 || nd_text > UK_MAX_NDIM) {
      fprintf(stderr, "ukern: %s: more than %d dimensions\n", what, UK_MAX_NDIM);
      return CLI_USAGE;
    }
    for (; nd < nd_text; nd++) {
      long long v;
      if (cli_parse_int(dims[nd], 0, INT64_MAX / 2, &v) != 0) {
        fprintf(stderr, "ukern: %s: dimension '%s' of %s[...] is not a non-negative integer\n", what, dims[nd],
                text);
        return CLI_USAGE;
      }
      shape[nd] = v;
    }
  }
  if (uk_array_init(a, 0, t, nd, shape) != UK_OK) {
    fprintf(stderr, "ukern: %s: %s\n", what, uk_last_error());
    return CLI_USAGE;
  }
  return CLI_OK;
}

static int parse_scalar(const char *what, char *text, uk_arg *arg) {
  char *open = strchr(text, '(');
  if (open) { /* DTYPE(value): a typed scalar */
    char *close = strrchr(text, ')');
    if (!close || close[1]) {
      fprintf(stderr, "ukern: %s: '%s' is not DTYPE(VALUE)\n", what, text);
      return CLI_USAGE;
    }
    *open = 0;
    *close = 0;
    uk_dtype t;
    int rc = parse_dtype(what, text, &t);
    if (rc != CLI_OK) return rc;
    char *end = NULL;
    const char *v = open + 1;
    errno = 0;
    double d = strtod(v, &end);
    int is_bool = !strcmp(v, "true") || !strcmp(v, "false");
    if (is_bool) d = !strcmp(v, "true");
    else if (end == v || *end || errno) {
      fprintf(stderr, "ukern: %s: '%s' is not a number\n", what, v);
      return CLI_USAGE;
    }
    unsigned char b[16];
    memset(b, 0, sizeof b);
    long long ll = (long long)d;
    switch (t) {
    case UK_BOOL: b[0] = d != 0; break;
    case UK_INT8: case UK_UINT8: { int8_t x = (int8_t)ll; memcpy(b, &x, 1); break; }
    case UK_INT16: case UK_UINT16: { int16_t x = (int16_t)ll; memcpy(b, &x, 2); break; }
    case UK_INT32: case UK_UINT32: { int32_t x = (int32_t)ll; memcpy(b, &x, 4); break; }
    case UK_INT64: case UK_UINT64: {
      /* Integers go through strtoll/strtoull so large values stay exact. */
      if (t == UK_UINT64) { unsigned long long x = strtoull(v, NULL, 0); memcpy(b, &x, 8); }
      else { long long x = strtoll(v, NULL, 0); memcpy(b, &x, 8); }
      break;
    }
    default: uk_dtype_encode(t, d, b); break; /* floating: rounded once from the double */
    }
    *arg = uk_arg_typed(t, b);
    return CLI_OK;
  }
  if (!strcmp(text, "true") || !strcmp(text, "false")) {
    *arg = uk_arg_bool(!strcmp(text, "true"));
    return CLI_OK;
  }
  long long i;
  if (cli_parse_int(text, INT64_MIN, INT64_MAX, &i) == 0) {
    *arg = uk_arg_int(i);
    return CLI_OK;
  }
  char *end = NULL;
  double d = strtod(text, &end);
  if (end == text || *end) {
    fprintf(stderr,
            "ukern: %s: '%s' is neither an array DTYPE[SHAPE], a typed scalar DTYPE(VALUE) nor a number\n",
            what, text);
    return CLI_USAGE;
  }
  *arg = uk_arg_float(d);
  return CLI_OK;
}

int cli_case_parse(const cli_kernel *k, const char *line, cli_case *c) {
  const cli_spec *s = k->spec;
  memset(c, 0, sizeof *c);
  char *buf = strdup(line ? line : ""), *pieces[CLI_MAX_ARGS + 1];
  char *obuf = NULL;
  int rc = CLI_USAGE;
  if (!buf) return CLI_FAIL;
  int n = 0;
  {
    char *t = buf;
    while (isspace((unsigned char)*t)) t++;
    n = *t ? split_top(buf, pieces, CLI_MAX_ARGS + 1) : 0;
  }
  if (n < 0 || n > CLI_MAX_ARGS) {
    fprintf(stderr, "ukern: inputs: more than %d arguments\n", CLI_MAX_ARGS);
    goto out;
  }
  if (n != k->nin) {
    fprintf(stderr, "ukern: inputs: %d argument%s given, but in_params declares %d (%s)\n", n, n == 1 ? "" : "s",
            k->nin, s->f[F_in_params]);
    goto out;
  }
  c->nin = n;
  c->nout = k->nout;
  for (int j = 0; j < n; j++) {
    if (strchr(pieces[j], '[')) {
      if (parse_array("inputs", pieces[j], &c->in_arr[j]) != CLI_OK) goto out;
      c->is_array[j] = 1;
      c->in[j] = uk_arg_array(&c->in_arr[j]);
    } else if (parse_scalar("inputs", pieces[j], &c->in[j]) != CLI_OK) {
      goto out;
    }
  }
  if (s->f[F_outputs]) {
    if (!(obuf = strdup(s->f[F_outputs]))) goto out;
    char *op[CLI_MAX_ARGS + 1];
    int no = split_top(obuf, op, CLI_MAX_ARGS + 1);
    if (no != k->nout) {
      fprintf(stderr, "ukern: outputs: %d array%s given, but out_params declares %d\n", no, no == 1 ? "" : "s",
              k->nout);
      goto out;
    }
    for (int j = 0; j < no; j++)
      if (parse_array("outputs", op[j], &c->out[j]) != CLI_OK) goto out;
    c->outputs_given = 1;
  }
  long long v;
  if (s->f[F_size]) {
    if (cli_parse_int(s->f[F_size], 1, INT64_MAX, &v) != 0) {
      fprintf(stderr, "ukern: size: '%s' is not a positive integer\n", s->f[F_size]);
      goto out;
    }
    c->launch.size = v;
  }
  if (s->f[F_block_size]) {
    if (cli_parse_int(s->f[F_block_size], 1, 1024, &v) != 0) {
      fprintf(stderr, "ukern: block_size: '%s' is not an integer in 1..1024\n", s->f[F_block_size]);
      goto out;
    }
    c->launch.block_size = (int)v;
  }
  c->rlaunch.axes = c->axes;
  if (s->f[F_axes] && strcmp(s->f[F_axes], "all") != 0) {
    if (!strcmp(s->f[F_axes], "none")) {
      c->rlaunch.reduce_none = 1;
    } else {
      char ab[256], *ap[UK_MAX_NDIM + 1];
      snprintf(ab, sizeof ab, "%s", s->f[F_axes]);
      int na = split_top(ab, ap, UK_MAX_NDIM + 1);
      if (na < 0 || na > UK_MAX_NDIM) {
        fprintf(stderr, "ukern: axes: more than %d axes\n", UK_MAX_NDIM);
        goto out;
      }
      for (int j = 0; j < na; j++) {
        if (cli_parse_int(ap[j], -UK_MAX_NDIM, UK_MAX_NDIM, &v) != 0) {
          fprintf(stderr, "ukern: axes: '%s' is not an axis (an integer, `all` or `none`)\n", ap[j]);
          goto out;
        }
        c->axes[j] = (int)v;
      }
      c->rlaunch.num_axes = na;
    }
  }
  if (s->f[F_keepdims]) {
    const char *kd = s->f[F_keepdims];
    if (!strcmp(kd, "true") || !strcmp(kd, "1")) c->rlaunch.keepdims = 1;
    else if (strcmp(kd, "false") && strcmp(kd, "0")) {
      fprintf(stderr, "ukern: keepdims: '%s' is not true or false\n", kd);
      goto out;
    }
  }
  rc = CLI_OK;
out:
  free(buf);
  free(obuf);
  return rc;
}

void cli_case_fake_pointers(cli_case *c) {
  /* 1 TiB apart: no two arrays overlap, whatever their size. */
  uint64_t base = 0x100000000000ull;
  for (int j = 0; j < c->nin; j++)
    if (c->is_array[j]) c->in_arr[j].data = base * (uint64_t)(j + 1);
  if (c->outputs_given)
    for (int j = 0; j < c->nout; j++) c->out[j].data = base * (uint64_t)(CLI_MAX_ARGS + j + 1);
}

/* Appends "DTYPE[d0,d1]" (or "scalar") after a ", " unless first. */
static size_t describe_one(const uk_array *a, int first, char *buf, size_t n, size_t size) {
  if (n >= size) return n;
  int w = a ? snprintf(buf + n, size - n, "%s%s[", first ? "" : ", ", uk_dtype_name(a->dtype))
            : snprintf(buf + n, size - n, "%sscalar", first ? "" : ", ");
  for (int d = 0; a && d < a->ndim && w > 0 && n + (size_t)w < size; d++)
    w += snprintf(buf + n + (size_t)w, size - n - (size_t)w, "%s%lld", d ? "," : "", (long long)a->shape[d]);
  if (a && w > 0 && n + (size_t)w < size) w += snprintf(buf + n + (size_t)w, size - n - (size_t)w, "]");
  return w < 0 ? size : n + (size_t)w;
}

const char *cli_case_describe(const cli_case *c, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = 0;
  for (int j = 0; j < c->nin; j++) n = describe_one(c->is_array[j] ? &c->in_arr[j] : NULL, j == 0, buf, n, size);
  return buf;
}

const char *cli_case_describe_outputs(const cli_case *c, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = 0;
  for (int j = 0; j < c->nout; j++) n = describe_one(&c->out[j], j == 0, buf, n, size);
  return buf;
}

int cli_kernel_source(cli_kernel *k, cli_case *c, char **src) {
  uk_status st;
  if (k->spec->kind == CLI_MODULE) {
    if (!(*src = strdup(k->spec->f[F_source]))) return CLI_FAIL;
    return CLI_OK;
  }
  if (k->ew) st = uk_elementwise_source(k->ew, c->in, c->nin, c->out, c->nout, &c->launch, src);
  else if (k->fu) st = uk_fusion_source(k->fu, c->in, c->nin, c->out, c->nout, &c->launch, src);
  else st = uk_reduction_source(k->red, c->in, c->nin, c->out, c->nout, &c->rlaunch, src);
  if (st == UK_OK) return CLI_OK;
  int rc = cli_fail("generating the source", st);
  if (k->fu) {
    cli_spec_where(k->spec, F_program);
    fputs("  hint: a fusion's types and shapes follow NumPy 2 (NEP 50 promotion, broadcasting);\n"
          "  `inputs` gives the dtypes and shapes (untyped scalars are weak Python scalars)\n", stderr);
  }
  return rc;
}

uk_status cli_kernel_precompile(cli_kernel *k, cli_case *c) {
  if (k->ew) return uk_elementwise_precompile(k->ew, c->in, c->nin, c->out, c->nout, &c->launch);
  if (k->fu) return uk_fusion_precompile(k->fu, c->in, c->nin, c->out, c->nout, &c->launch);
  return uk_reduction_precompile(k->red, c->in, c->nin, c->out, c->nout, &c->rlaunch);
}

uk_status cli_kernel_compile_info(cli_kernel *k, cli_case *c, uk_compile_info *info) {
  if (k->ew) return uk_elementwise_compile_info(k->ew, c->in, c->nin, c->out, c->nout, &c->launch, info);
  if (k->fu) return uk_fusion_compile_info(k->fu, c->in, c->nin, c->out, c->nout, &c->launch, info);
  return uk_reduction_compile_info(k->red, c->in, c->nin, c->out, c->nout, &c->rlaunch, info);
}

void cli_module_options(const cli_kernel *k, uk_module_options *mo) {
  memset(mo, 0, sizeof *mo);
  mo->options = k->opts;
  mo->num_options = k->nopts;
  mo->name_expressions = k->names;
  mo->num_name_expressions = k->nnames;
  mo->name = k->spec->f[F_name] ? k->spec->f[F_name] : "module";
}

uk_status cli_case_call(cli_kernel *k, cli_case *c) {
  if (k->ew) return uk_elementwise_call(k->ew, c->in, c->nin, c->out, c->nout, &c->launch);
  if (k->fu) return uk_fusion_call(k->fu, c->in, c->nin, c->out, c->nout, &c->launch);
  return uk_reduction_call(k->red, c->in, c->nin, c->out, c->nout, &c->rlaunch);
}
