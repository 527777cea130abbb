#include "codegen/red_emit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/embedded.h"
#include "base/error.h"
#include "codegen/dtype.h"
#include "codegen/opscan.h"
#include "codegen/red_plan.h"
#include "codegen/tpl.h"

/* CUDA's kernel parameter limit that holds on every architecture. */
#define PARAM_LIMIT 4096

void uk__red_scan(uk_red_kernel *k) {
  k->raw_view_mask = 0;
  for (int p = 0; p < k->in->count; p++) {
    const uk_param *prm = &k->in->items[p];
    if (prm->is_raw) continue;
    char view[300];
    snprintf(view, sizeof view, "_raw_%s", prm->name);
    if (uk__opscan_uses(k->map_expr, view)) k->raw_view_mask |= 1ull << p;
  }
  k->uses_J = uk__opscan_uses(k->map_expr, "_J");
  k->uses_in_ind = uk__opscan_uses(k->post_map_expr, "_in_ind");
  k->uses_out_ind = uk__opscan_uses(k->post_map_expr, "_out_ind");
}

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

static const uk_param *param_at(const uk_red_kernel *k, int p) {
  return p < k->in->count ? &k->in->items[p] : &k->out->items[p - k->in->count];
}

static int is_scalar(const uk_red_key *key, int p) { return p < 64 && ((key->scalar_mask >> p) & 1); }

static int is_loop_input(const uk_red_kernel *k, const uk_red_key *key, int p) {
  return p < k->in->count && !param_at(k, p)->is_raw && !is_scalar(key, p);
}

int uk__red_loop_input(const uk_red_kernel *k, const uk_red_key *key, int param, int *op) {
  if (!is_loop_input(k, key, param)) return 0;
  int n = 0;
  for (int p = 0; p < param; p++) n += is_loop_input(k, key, p);
  *op = n;
  return 1;
}

static int nloop_inputs(const uk_red_kernel *k, const uk_red_key *key) {
  int n = 0;
  for (int p = 0; p < k->in->count; p++) n += is_loop_input(k, key, p);
  return n;
}

static int has_raw_object(const uk_red_kernel *k, const uk_red_key *key, int p) {
  if (p >= k->in->count || is_scalar(key, p)) return 0;
  return param_at(k, p)->is_raw || ((k->raw_view_mask >> p) & 1);
}

int uk__red_key_vec(const uk_red_kernel *k, const uk_red_key *key) {
  int64_t most = 0;
  for (int p = 0; p < k->in->count; p++) {
    if (!is_loop_input(k, key, p)) continue;
    int64_t s = (int64_t)uk__dtype_info((uk_dtype)key->dtype[p])->size;
    if (s > most) most = s;
  }
  return uk__red_vec(most);
}

static const char *type_name(const uk_red_kernel *k, int p, char *buf) {
  const uk_param *prm = param_at(k, p);
  if (prm->is_placeholder) {
    buf[0] = prm->placeholder;
    buf[1] = 0;
    return buf;
  }
  return uk__dtype_info(prm->dtype)->ctype;
}

static const char *dname(const uk_red_key *key, int p) { return uk_dtype_name((uk_dtype)key->dtype[p]); }

static void line(uk_strbuf *sb, const char *fmt, ...) UK__PRINTF(2, 3);
static void line(uk_strbuf *sb, const char *fmt, ...) {
  if (sb->len) uk__sb_addc(sb, '\n');
  va_list ap;
  va_start(ap, fmt);
  uk__sb_vaddf(sb, fmt, ap);
  va_end(ap);
}

/* The bounds of `text` without surrounding white space. */
static void trim(const char *text, const char **b, const char **e) {
  *b = text;
  *e = text + strlen(text);
  while (*b < *e && strchr(" \t\r\n", **b)) (*b)++;
  while (*e > *b && strchr(" \t\r\n", (*e)[-1])) (*e)--;
}

/* An expression inside parentheses; a trailing // comment gets its own line. */
static void expr(uk_strbuf *sb, const char *text) {
  const char *b, *e;
  trim(text, &b, &e);
  uk__sb_addc(sb, '(');
  uk__sb_addn(sb, b, (size_t)(e - b));
  int comment = 0;
  for (const char *p = b; p + 1 < e; p++)
    if (p[0] == '/' && p[1] == '/') comment = 1;
  if (comment) uk__sb_add(sb, "\n    ");
  uk__sb_addc(sb, ')');
}

/* ------------------------------------------------------------------------ */
/* The argument struct                                                       */
/* ------------------------------------------------------------------------ */

typedef enum { F_SCALAR, F_PTR, F_RAW, F_KSTRIDE, F_RSTRIDE, F_KSHAPE, F_RSHAPE, F_NUM, F_PARTIAL, F_COUNT } fkind;

typedef struct {
  fkind kind;
  int param, op, dim, slot; /* F_NUM: slot = uk_red_slot_kind */
  int size, align, order;
} field;

static int field_cmp(const void *a, const void *b) {
  const field *x = a, *y = b;
  if (x->align != y->align) return y->align - x->align;
  return x->order - y->order;
}

static void add_slot(uk_red_plan *plan, uk_red_slot_kind kind, int size, int param, int op, int dim, size_t off) {
  uk_red_slot *s = &plan->slots[plan->nslots++];
  s->kind = (uint8_t)kind;
  s->size = (uint8_t)size;
  s->param = (uint8_t)param;
  s->op = (uint8_t)op;
  s->dim = (uint8_t)dim;
  s->offset = (uint16_t)off;
}

static const char *const num_names[] = {
    [UK_RED_SLOT_NOUT] = "_uk_nout",     [UK_RED_SLOT_NRED] = "_uk_nred",
    [UK_RED_SLOT_CHUNK] = "_uk_chunk",   [UK_RED_SLOT_NSPLIT] = "_uk_nsplit",
    [UK_RED_SLOT_INSIZE] = "_uk_insize", [UK_RED_SLOT_VEC] = "_uk_vec",
    [UK_RED_SLOT_BY] = "_uk_by",
};

static uk_status emit_fields(const uk_red_kernel *k, const uk_red_key *key, uk_strbuf *decl, uk_red_plan *plan) {
  int nin = k->in->count, np = nin + k->out->count, nk = key->nd_k, nr = key->nd_r;
  int cap = 2 * np + np * (nk + nr) + nk + nr + 10, n = 0, nslots = 0;
  field *f = calloc((size_t)cap, sizeof *f);
  if (!f) return uk__errorf(UK_ERR_NOMEM, "out of memory generating a kernel");
  for (int p = 0; p < np; p++) {
    if (is_scalar(key, p)) {
      const uk_dtype_info *di = uk__dtype_info((uk_dtype)key->dtype[p]);
      f[n] = (field){F_SCALAR, p, 0, 0, 0, (int)di->size, (int)di->align, n};
      n++;
      nslots++;
      continue;
    }
    if (!param_at(k, p)->is_raw) {
      f[n] = (field){F_PTR, p, 0, 0, 0, 8, 8, n};
      n++;
      nslots++;
    }
    if (has_raw_object(k, key, p)) {
      f[n] = (field){F_RAW, p, 0, 0, 0, 8 + 16 * key->raw_ndim[p], 8, n};
      n++;
      nslots += 1 + 2 * key->raw_ndim[p];
    }
  }
  for (int p = 0, op = 0; p < np; p++) {
    if (p < nin && !is_loop_input(k, key, p)) continue;
    for (int d = 0; d < nk; d++, n++) f[n] = (field){F_KSTRIDE, p, op, d, 0, 8, 8, n};
    nslots += nk;
    if (p < nin) {
      for (int d = 0; d < nr; d++, n++) f[n] = (field){F_RSTRIDE, p, op, d, 0, 8, 8, n};
      nslots += nr;
    }
    op++;
  }
  for (int d = 0; d < nk; d++, n++, nslots++) f[n] = (field){F_KSHAPE, 0, 0, d, 0, 8, 8, n};
  for (int d = 0; d < nr; d++, n++, nslots++) f[n] = (field){F_RSHAPE, 0, 0, d, 0, 8, 8, n};
  for (int s = UK_RED_SLOT_NOUT; s <= UK_RED_SLOT_BY; s++, n++, nslots++) f[n] = (field){F_NUM, 0, 0, 0, s, 8, 8, n};
  f[n] = (field){F_PARTIAL, 0, 0, 0, 0, 8, 8, n};
  n++;
  f[n] = (field){F_COUNT, 0, 0, 0, 0, 8, 8, n};
  n++;
  nslots += 2;
  qsort(f, (size_t)n, sizeof *f, field_cmp);

  uk_status st = UK_OK;
  size_t off = 0, maxalign = 1;
  for (int j = 0; j < n; j++) {
    off += (size_t)f[j].size;
    if ((size_t)f[j].align > maxalign) maxalign = (size_t)f[j].align;
  }
  off = (off + maxalign - 1) / maxalign * maxalign;
  if (off > PARAM_LIMIT) {
    st = uk__errorf(UK_ERR_INVALID, "%s: the kernel's arguments take %zu bytes, more than CUDA's %d", k->name, off,
                    PARAM_LIMIT);
    goto out;
  }
  plan->bytes = off;
  if (!(plan->slots = calloc((size_t)nslots, sizeof *plan->slots))) {
    st = uk__errorf(UK_ERR_NOMEM, "out of memory generating a kernel");
    goto out;
  }
  plan->nslots = 0;
  off = 0;
  for (int j = 0; j < n; j++) {
    const field *x = &f[j];
    char tb[2];
    const uk_param *prm = param_at(k, x->param);
    const char *t = type_name(k, x->param, tb);
    int is_in = x->param < nin;
    switch (x->kind) {
    case F_SCALAR:
      line(decl, "  %s %s;", t, prm->name);
      add_slot(plan, UK_RED_SLOT_SCALAR, x->size, x->param, 0, 0, off);
      break;
    case F_PTR:
      line(decl, "  %s%s *_uk_p_%s;", is_in ? "const " : "", t, prm->name);
      add_slot(plan, UK_RED_SLOT_PTR, 8, x->param, 0, 0, off);
      break;
    case F_RAW: {
      int rnd = key->raw_ndim[x->param];
      int contig = (int)((key->raw_contig_mask >> x->param) & 1);
      line(decl, "  ukern::raw_array<%s, %d, %s> %s%s;", t, rnd, contig ? "true" : "false", prm->is_raw ? "" : "_raw_",
           prm->name);
      add_slot(plan, UK_RED_SLOT_PTR, 8, x->param, 0, 0, off);
      for (int d = 0; d < rnd; d++) add_slot(plan, UK_RED_SLOT_RAW_SHAPE, 8, x->param, 0, d, off + 8 + 8 * (size_t)d);
      for (int d = 0; d < rnd; d++)
        add_slot(plan, UK_RED_SLOT_RAW_STRIDE, 8, x->param, 0, d, off + 8 + 8 * (size_t)(rnd + d));
      break;
    }
    case F_KSTRIDE:
      line(decl, "  long long _uk_%cs_%s_%d;", is_in ? 'k' : 'o', prm->name, x->dim);
      add_slot(plan, UK_RED_SLOT_KSTRIDE, 8, x->param, x->op, x->dim, off);
      break;
    case F_RSTRIDE:
      line(decl, "  long long _uk_rs_%s_%d;", prm->name, x->dim);
      add_slot(plan, UK_RED_SLOT_RSTRIDE, 8, x->param, x->op, x->dim, off);
      break;
    case F_KSHAPE:
      line(decl, "  long long _uk_kshape_%d;", x->dim);
      add_slot(plan, UK_RED_SLOT_KSHAPE, 8, 0, 0, x->dim, off);
      break;
    case F_RSHAPE:
      line(decl, "  long long _uk_rshape_%d;", x->dim);
      add_slot(plan, UK_RED_SLOT_RSHAPE, 8, 0, 0, x->dim, off);
      break;
    case F_NUM:
      line(decl, "  long long %s;", num_names[x->slot]);
      add_slot(plan, (uk_red_slot_kind)x->slot, 8, 0, 0, 0, off);
      break;
    case F_PARTIAL:
      line(decl, "  void *_uk_partial;");
      add_slot(plan, UK_RED_SLOT_PARTIAL, 8, 0, 0, 0, off);
      break;
    case F_COUNT:
      line(decl, "  unsigned int *_uk_count;");
      add_slot(plan, UK_RED_SLOT_COUNT, 8, 0, 0, 0, off);
      break;
    }
    off += (size_t)x->size;
  }
out:
  free(f);
  return st;
}

/* ------------------------------------------------------------------------ */
/* The traits struct                                                         */
/* ------------------------------------------------------------------------ */

/* Flat index `var` -> per-axis coordinates: _uk_q (outermost) and _uk_c<d>. */
static void emit_unravel(uk_strbuf *sb, const char *var, const char *shape, int nd) {
  if (nd == 0) return;
  line(sb, "    idx _uk_q = %s;", var);
  for (int d = nd - 1; d > 0; d--) {
    line(sb, "    const idx _uk_c%d = _uk_q %% (idx)_uk_a.%s_%d;", d, shape, d);
    line(sb, "    _uk_q /= (idx)_uk_a.%s_%d;", shape, d);
  }
}

static void offset_expr(uk_strbuf *sb, const char *prefix, const char *name, int nd) {
  if (nd == 0) {
    uk__sb_add(sb, "0");
    return;
  }
  uk__sb_addf(sb, "(sidx)_uk_q * (sidx)_uk_a.%s_%s_0", prefix, name);
  for (int d = 1; d < nd; d++) uk__sb_addf(sb, " + (sidx)_uk_c%d * (sidx)_uk_a.%s_%s_%d", d, prefix, name, d);
}

static void emit_traits(const uk_red_kernel *k, const uk_red_key *key, uk_strbuf *b_koff, uk_strbuf *b_vparams,
                        uk_strbuf *b_vlocals, uk_strbuf *b_kept, uk_strbuf *b_map, uk_strbuf *b_mapvec,
                        uk_strbuf *b_mapcols, uk_strbuf *b_mappack, uk_strbuf *b_post) {
  int nin = k->in->count, nout = k->out->count, nk = key->nd_k, nr = key->nd_r;
  /* koff, val parameters, kept offsets */
  emit_unravel(b_kept, "_uk_o", "_uk_kshape", nk);
  if (nk == 0) line(b_kept, "    (void)_uk_o;");
  for (int p = 0; p < nin; p++) {
    if (!is_loop_input(k, key, p)) continue;
    char tb[2];
    const char *name = param_at(k, p)->name, *t = type_name(k, p, tb);
    line(b_koff, "    sidx %s;", name);
    uk__sb_addf(b_vparams, ", const %s %s", t, name);
    line(b_kept, "    _uk_ko.%s = ", name);
    offset_expr(b_kept, "_uk_ks", name, nk);
    uk__sb_addc(b_kept, ';');
  }
  /* val locals: scalars, raw objects, _J */
  for (int p = 0; p < nin; p++) {
    const uk_param *prm = param_at(k, p);
    char tb[2];
    if (is_scalar(key, p)) {
      if (uk__opscan_uses(k->map_expr, prm->name))
        line(b_vlocals, "    const %s %s = _uk_a.%s;", type_name(k, p, tb), prm->name, prm->name);
      continue;
    }
    if (!has_raw_object(k, key, p)) continue;
    char obj[300];
    snprintf(obj, sizeof obj, "%s%s", prm->is_raw ? "" : "_raw_", prm->name);
    if (prm->is_raw && !uk__opscan_uses(k->map_expr, prm->name)) continue;
    line(b_vlocals, "    const ukern::raw_array<%s, %d, %s> &%s = _uk_a.%s;", type_name(k, p, tb), key->raw_ndim[p],
         (key->raw_contig_mask >> p) & 1 ? "true" : "false", obj, obj);
  }
  if (k->uses_J) line(b_vlocals, "    const long long _J = (long long)_uk_r;");
  /* map: loads at kept + reduced offsets */
  emit_unravel(b_map, "_uk_r", "_uk_rshape", nr);
  line(b_map, "    return val(_uk_a");
  for (int p = 0; p < nin; p++) {
    if (!is_loop_input(k, key, p)) continue;
    const char *name = param_at(k, p)->name;
    uk__sb_addf(b_map, ",\n               ukern::at(_uk_a._uk_p_%s, _uk_ko.%s", name, name);
    if (nr) {
      uk__sb_add(b_map, " + ");
      offset_expr(b_map, "_uk_rs", name, nr);
    }
    uk__sb_add(b_map, ")");
  }
  uk__sb_add(b_map, ",\n               _uk_r);");
  /* map_vec: N whole vectors along a contiguous reduced axis, all loaded first */
  for (int p = 0; p < nin; p++) {
    if (!is_loop_input(k, key, p)) continue;
    char tb[2];
    const char *name = param_at(k, p)->name, *t = type_name(k, p, tb);
    line(b_mapvec, "    ukern::vec<%s, vec> _uk_v_%s[N];", t, name);
  }
  line(b_mapvec, "#pragma unroll");
  line(b_mapvec, "    for (int _uk_n = 0; _uk_n < N; _uk_n++) {");
  for (int p = 0; p < nin; p++) {
    if (!is_loop_input(k, key, p)) continue;
    char tb[2];
    const char *name = param_at(k, p)->name, *t = type_name(k, p, tb);
    line(b_mapvec,
         "      _uk_v_%s[_uk_n] = ukern::vload_now<vec>((const %s *)((const char *)_uk_a._uk_p_%s + _uk_ko.%s) + _uk_r + "
         "_uk_n * _uk_step);",
         name, t, name, name);
  }
  line(b_mapvec, "    }");
  line(b_mapvec, "#pragma unroll");
  line(b_mapvec, "    for (int _uk_n = 0; _uk_n < N; _uk_n++)");
  line(b_mapvec, "#pragma unroll");
  line(b_mapvec, "      for (int _uk_k = 0; _uk_k < vec; _uk_k++)");
  line(b_mapvec, "        _uk_f(val(_uk_a");
  for (int p = 0; p < nin; p++)
    if (is_loop_input(k, key, p)) uk__sb_addf(b_mapvec, ", _uk_v_%s[_uk_n][_uk_k]", param_at(k, p)->name);
  uk__sb_add(b_mapvec, ", _uk_r + _uk_n * _uk_step + _uk_k));");
  /* map_cols: vectors of adjacent outputs along a contiguous kept axis */
  emit_unravel(b_mapcols, "_uk_r", "_uk_rshape", nr);
  for (int p = 0; p < nin; p++) {
    if (!is_loop_input(k, key, p)) continue;
    char tb[2];
    const char *name = param_at(k, p)->name, *t = type_name(k, p, tb);
    line(b_mapcols,
         "    const ukern::vec<%s, vec> _uk_v_%s = ukern::vload<vec>((const %s *)((const char *)_uk_a._uk_p_%s + "
         "_uk_ko.%s",
         t, name, t, name, name);
    if (nr) {
      uk__sb_add(b_mapcols, " + ");
      offset_expr(b_mapcols, "_uk_rs", name, nr);
    }
    uk__sb_add(b_mapcols, "));");
  }
  line(b_mapcols, "#pragma unroll");
  line(b_mapcols, "    for (int _uk_k = 0; _uk_k < vec; _uk_k++)");
  line(b_mapcols, "      _uk_f[_uk_k](val(_uk_a");
  for (int p = 0; p < nin; p++)
    if (is_loop_input(k, key, p)) uk__sb_addf(b_mapcols, ", _uk_v_%s[_uk_k]", param_at(k, p)->name);
  uk__sb_add(b_mapcols, ", _uk_r));");
  /* map_pack: a vector of whole rows of R elements (the reduced index is
   * the position in the row) */
  for (int p = 0; p < nin; p++) {
    if (!is_loop_input(k, key, p)) continue;
    char tb[2];
    const char *name = param_at(k, p)->name, *t = type_name(k, p, tb);
    line(b_mappack,
         "    const ukern::vec<%s, vec> _uk_v_%s = ukern::vload<vec>((const %s *)((const char *)_uk_a._uk_p_%s + "
         "_uk_ko.%s));",
         t, name, t, name, name);
  }
  line(b_mappack, "#pragma unroll");
  line(b_mappack, "    for (int _uk_k = 0; _uk_k < vec; _uk_k++)");
  line(b_mappack, "      _uk_f[_uk_k / R](val(_uk_a");
  for (int p = 0; p < nin; p++)
    if (is_loop_input(k, key, p)) uk__sb_addf(b_mappack, ", _uk_v_%s[_uk_k]", param_at(k, p)->name);
  uk__sb_add(b_mappack, ", (idx)(_uk_k % R)));");
  /* post: output references, then the user's statements */
  emit_unravel(b_post, "_uk_o", "_uk_kshape", nk);
  if (nk == 0) line(b_post, "    (void)_uk_o;");
  for (int j = 0; j < nout; j++) {
    char tb[2];
    const char *name = param_at(k, nin + j)->name;
    line(b_post, "    %s &%s = ukern::at(_uk_a._uk_p_%s, ", type_name(k, nin + j, tb), name, name);
    offset_expr(b_post, "_uk_os", name, nk);
    uk__sb_add(b_post, ");");
  }
  for (int p = 0; p < nin; p++) {
    const uk_param *prm = param_at(k, p);
    char tb[2];
    if (is_scalar(key, p) && uk__opscan_uses(k->post_map_expr, prm->name))
      line(b_post, "    const %s %s = _uk_a.%s;", type_name(k, p, tb), prm->name, prm->name);
  }
  if (k->uses_in_ind) line(b_post, "    const ukern::ew_index _in_ind(_uk_a._uk_insize);");
  if (k->uses_out_ind) line(b_post, "    const ukern::ew_index _out_ind(_uk_a._uk_nout);");
  uk__tpl_add_code(b_post, k->post_map_expr, "    ", 1);
}

static void emit_banner(const uk_red_kernel *k, const uk_red_key *key, uk_strbuf *sb) {
  int nin = k->in->count, np = nin + k->out->count;
  uk__sb_addf(sb, "// ukern reduction kernel '%s' (template reduction.cu)\n", k->name);
  uk__sb_add(sb, "// parameters:");
  for (int p = 0; p < np; p++) {
    const uk_param *prm = param_at(k, p);
    char tb[2];
    uk__sb_addf(sb, "%s%s%s %s (%s", p == nin ? " ->" : p ? "," : "", prm->is_raw ? " raw " : " ",
                prm->is_placeholder ? type_name(k, p, tb) : dname(key, p), prm->name, dname(key, p));
    if (is_scalar(key, p)) uk__sb_add(sb, ", scalar");
    if (has_raw_object(k, key, p))
      uk__sb_addf(sb, ", ndim %d%s", key->raw_ndim[p], (key->raw_contig_mask >> p) & 1 ? ", contiguous" : "");
    uk__sb_add(sb, ")");
  }
  uk__sb_addf(sb, "\n// reduce type: %s; identity: %s\n", k->reduce_type, k->identity ? k->identity : "none");
  uk__sb_addf(sb, "// loops: kept ndim %d, reduced ndim %d, %s index", key->nd_k, key->nd_r,
              key->index64 ? "64-bit" : "32-bit");
}

static void emit_typedefs(const uk_red_kernel *k, const uk_red_key *key, uk_strbuf *sb) {
  int np = k->in->count + k->out->count;
  char seen[64] = {0};
  for (int p = 0; p < np; p++) {
    const uk_param *prm = param_at(k, p);
    int slot = uk__bind_slot(prm->placeholder);
    if (!prm->is_placeholder || slot < 0 || seen[slot]) continue;
    seen[slot] = 1;
    line(sb, "typedef %s %c;", uk__dtype_info((uk_dtype)key->dtype[p])->ctype, prm->placeholder);
  }
}

uk_status uk__red_emit(const uk_red_kernel *k, const uk_red_key *key, uk_strbuf *src, uk_red_plan *plan) {
  enum { B_BANNER, B_TYPEDEFS, B_PREAMBLE, B_FIELDS, B_KOFF, B_VPARAMS, B_VLOCALS, B_KEPT, B_MAP, B_MAPVEC, B_MAPCOLS,
         B_MAPPACK, B_POST, B_IDENT, B_REDUCE, B_MAPEXPR, NB };
  uk_strbuf b[NB];
  for (int j = 0; j < NB; j++) uk__sb_init(&b[j]);
  uk_red_plan pl = {0, NULL, 0};
  uk_status st;
  if (nloop_inputs(k, key) == 0) {
    st = uk__errorf(UK_ERR_INTERNAL, "%s: a reduction program needs a non-raw array input", k->name);
    goto out;
  }
  if ((st = emit_fields(k, key, &b[B_FIELDS], &pl)) != UK_OK) goto out;
  emit_banner(k, key, &b[B_BANNER]);
  emit_typedefs(k, key, &b[B_TYPEDEFS]);
  if (k->preamble) {
    const char *pb, *pe;
    trim(k->preamble, &pb, &pe);
    if (pe > pb) {
      uk__sb_addn(&b[B_PREAMBLE], pb, (size_t)(pe - pb));
      uk__sb_add(&b[B_PREAMBLE], "\n");
    }
  }
  emit_traits(k, key, &b[B_KOFF], &b[B_VPARAMS], &b[B_VLOCALS], &b[B_KEPT], &b[B_MAP], &b[B_MAPVEC], &b[B_MAPCOLS],
              &b[B_MAPPACK], &b[B_POST]);
  if (k->identity) {
    uk__sb_add(&b[B_IDENT], "(rt)");
    expr(&b[B_IDENT], k->identity);
  } else {
    uk__sb_add(&b[B_IDENT], "rt()");
  }
  expr(&b[B_REDUCE], k->reduce_expr);
  expr(&b[B_MAPEXPR], k->map_expr);
  for (int j = 0; j < NB; j++)
    if (b[j].failed) {
      st = uk__errorf(UK_ERR_NOMEM, "out of memory generating a kernel");
      goto out;
    }
  char vec[8];
  snprintf(vec, sizeof vec, "%d", uk__red_key_vec(k, key));
  const uk_tpl_var vars[] = {
      {"banner", uk__sb_str(&b[B_BANNER])},
      {"typedefs", uk__sb_str(&b[B_TYPEDEFS])},
      {"preamble", uk__sb_str(&b[B_PREAMBLE])},
      {"reduce_type", k->reduce_type},
      {"fields", uk__sb_str(&b[B_FIELDS])},
      {"uindex", key->index64 ? "unsigned long long" : "unsigned int"},
      {"sindex", key->index64 ? "long long" : "int"},
      {"has_identity", k->identity ? "true" : "false"},
      {"vec", vec},
      {"koff", uk__sb_str(&b[B_KOFF])},
      {"identity", uk__sb_str(&b[B_IDENT])},
      {"reduce_expr", uk__sb_str(&b[B_REDUCE])},
      {"val_params", uk__sb_str(&b[B_VPARAMS])},
      {"val_locals", uk__sb_str(&b[B_VLOCALS])},
      {"map_expr", uk__sb_str(&b[B_MAPEXPR])},
      {"kept", uk__sb_str(&b[B_KEPT])},
      {"map", uk__sb_str(&b[B_MAP])},
      {"map_vec", uk__sb_str(&b[B_MAPVEC])},
      {"map_cols", uk__sb_str(&b[B_MAPCOLS])},
      {"map_pack", uk__sb_str(&b[B_MAPPACK])},
      {"post", uk__sb_str(&b[B_POST])},
      {"name", k->name},
  };
  st = uk__tpl_expand_embedded("reduction.cu", vars, (int)(sizeof vars / sizeof vars[0]), src);
out:
  for (int j = 0; j < NB; j++) uk__sb_release(&b[j]);
  if (st == UK_OK) *plan = pl;
  else uk__red_plan_free(&pl);
  return st;
}

void uk__red_plan_free(uk_red_plan *plan) {
  if (!plan) return;
  free(plan->slots);
  plan->slots = NULL;
  plan->nslots = 0;
  plan->bytes = 0;
}
