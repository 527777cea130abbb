/* The reduction emitter (red_emit.h): a uk_red_key to program source and its argument plan. */
#include "codegen/red_emit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/embedded.h"
#include "base/error.h"
#include "codegen/dtype.h"
#include "codegen/opscan.h"
#include "codegen/red_plan.h"
#include "codegen/srcmap.h"
#include "codegen/tpl.h"

void uk__red_scan(uk_red_kernel *k) {
  k->raw_view_mask = uk__emit_scan_raw_views(k->in, k->out, 1, &k->map_expr, 1);
  k->uses_J = uk__opscan_uses(k->map_expr, "_J");
  k->uses_j = uk__opscan_uses(k->map_expr, "_j");
  k->uses_in_ind = uk__opscan_uses(k->post_map_expr, "_in_ind");
  k->uses_out_ind = uk__opscan_uses(k->post_map_expr, "_out_ind");
  const char *const texts[] = {k->map_expr, k->reduce_expr, k->post_map_expr, k->identity, k->reduce_type, k->preamble};
  k->needs_runtime = uk__emit_needs_runtime(texts, 6);
  k->argpair = (k->reduce_type && uk__opscan_uses(k->reduce_type, "_uk_argpair")) ||
               (k->preamble && uk__opscan_uses(k->preamble, "_uk_argpair"));
}

/* The last well-formed item `key`=N of a comma-separated text, N of 1 to
 * `digits` decimal digits: *n's first digit and count (NULL, 0 for none). */
static const char *last_item(const char *text, const char *key, size_t digits, size_t *n) {
  size_t kl = strlen(key);
  const char *got = NULL;
  *n = 0;
  for (const char *p = text; p && *p;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p), dl = len > kl + 1 ? len - kl - 1 : 0;
    if (dl >= 1 && dl <= digits && !strncmp(p, key, kl) && p[kl] == '=' &&
        strspn(p + kl + 1, "0123456789") >= dl) {
      got = p + kl + 1;
      *n = dl;
    }
    p = e ? e + 1 : p + len;
  }
  return got;
}

/* One define a key, in the table's order, with the key's last well-formed
 * value: a repeated key overrides the earlier one (two defines of one macro
 * would not compile), and one setting written in any order is one source. */
void uk__red_tune_parse(const char *text, char *out, int size) {
  static const char *const keys[][2] = {{"ld", "LD"}, {"cw", "CW"}, {"trip", "TRIP"},
                                        {"rp", "RP"}, {"mb", "MB"}};
  int n = 0;
  if (size <= 0) return;
  out[0] = 0;
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
    size_t vl;
    const char *v = last_item(text, keys[k][0], 2, &vl); /* one or two digits */
    if (!v) continue;
    int w = snprintf(out + n, (size_t)(size - n), "#define _UK_RED_%s %.*s\n", keys[k][1], (int)vl, v);
    if (w > 0 && w < size - n) n += w;
    else out[n] = 0;
  }
}

int uk__red_tune_value(const char *text, const char *key, int dflt) {
  size_t vl;
  const char *v = last_item(text, key, 5, &vl); /* the last well-formed value, as uk__red_tune_parse */
  if (!v) return dflt;
  int got = 0;
  for (size_t i = 0; i < vl; i++) got = got * 10 + (v[i] - '0');
  return got;
}

/* The optional headers the texts and dtypes need (ukern/reduction.cuh has
 * only the core: complex.cuh and half.cuh cost NVRTC's front end ~10% of a
 * float program). half.cuh whole: a fusion's ukern/fusion.cuh includes it
 * again and uses both 16-bit types. */
static void emit_type_includes(const uk_red_kernel *k, const uk_red_key *key, uk_strbuf *sb) {
  const char *const texts[] = {k->map_expr, k->reduce_expr, k->post_map_expr, k->identity, k->reduce_type, k->preamble};
  int f16, bf16, cx, np = k->in->count + k->out->count;
  uk__emit_scan_type_names(texts, 6, &f16, &bf16, &cx);
  int half = f16 || bf16;
  for (int p = 0; p < np; p++) {
    uk_dtype t = (uk_dtype)key->p.dtype[p];
    half |= t == UK_FLOAT16 || t == UK_BFLOAT16;
    cx |= t == UK_COMPLEX64 || t == UK_COMPLEX128;
  }
  if (cx) uk__emit_line(sb, "#include <ukern/complex.cuh>");
  if (half) uk__emit_line(sb, "#include <ukern/half.cuh>");
}

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

static const uk_param *param_at(const uk_red_kernel *k, int p) { return uk__emit_param(k->in, k->out, p); }
static int is_scalar(const uk_red_key *key, int p) { return uk__key_is_scalar(&key->p, p); }

static int is_loop_input(const uk_red_kernel *k, const uk_red_key *key, int p) {
  return p < k->in->count && !param_at(k, p)->is_raw && !is_scalar(key, p);
}

static int nloop_inputs(const uk_red_kernel *k, const uk_red_key *key) {
  int n = 0;
  for (int p = 0; p < k->in->count; p++) n += is_loop_input(k, key, p);
  return n;
}

static int has_raw_object(const uk_red_kernel *k, const uk_red_key *key, int p) {
  return uk__key_has_raw_object(param_at(k, p), &key->p, k->raw_view_mask, p);
}

int uk__red_items_vec(const uk_red_kernel *k, int64_t max_itemsize) {
  if (k->uses_j) return 1; /* every map call then sees one output (use_row, no map_pack) */
  return uk__red_vec(max_itemsize);
}

int uk__red_key_vec(const uk_red_kernel *k, const uk_red_key *key) {
  int64_t most = 0;
  for (int p = 0; p < k->in->count; p++) {
    if (!is_loop_input(k, key, p)) continue;
    int64_t s = (int64_t)uk__dtype_info((uk_dtype)key->p.dtype[p])->size;
    if (s > most) most = s;
  }
  return uk__red_items_vec(k, most);
}

static const char *type_name(const uk_red_kernel *k, int p, char *buf) { return uk__emit_type(param_at(k, p), buf); }

/* Appends a line to a block (emit_common.h). */
#define line(...) uk__emit_line(__VA_ARGS__)

/* ------------------------------------------------------------------------ */
/* The argument struct                                                       */
/* ------------------------------------------------------------------------ */

static const char *const num_names[] = {
    [UK_RED_SLOT_NOUT] = "_uk_nout",     [UK_RED_SLOT_NRED] = "_uk_nred",
    [UK_RED_SLOT_CHUNK] = "_uk_chunk",   [UK_RED_SLOT_NSPLIT] = "_uk_nsplit",
    [UK_RED_SLOT_INSIZE] = "_uk_insize", [UK_RED_SLOT_VEC] = "_uk_vec",
    [UK_RED_SLOT_BY] = "_uk_by",
};

static uk_status emit_fields(const uk_red_kernel *k, const uk_red_key *key, uk_strbuf *decl, uk_plan *plan) {
  int nin = k->in->count, np = nin + k->out->count, nk = key->nd_k, nr = key->nd_r;
  uk_fields fl;
  uk_status st = uk__fields_init(&fl, 2 * np + np * (nk + nr) + nk + nr + 10);
  if (st != UK_OK) return st;
  uk__fields_add_params(&fl, k->in, k->out, &key->p, k->raw_view_mask);
  for (int p = 0, op = 0; p < np; p++) {
    if (p < nin && !is_loop_input(k, key, p)) continue;
    for (int d = 0; d < nk; d++) uk__fields_add(&fl, UK_RED_SLOT_KSTRIDE, p, op, d, 8, 8, 1);
    for (int d = 0; d < nr && p < nin; d++) uk__fields_add(&fl, UK_RED_SLOT_RSTRIDE, p, op, d, 8, 8, 1);
    op++;
  }
  for (int d = 0; d < nk; d++) uk__fields_add(&fl, UK_RED_SLOT_KSHAPE, 0, 0, d, 8, 8, 1);
  for (int d = 0; d < nr; d++) uk__fields_add(&fl, UK_RED_SLOT_RSHAPE, 0, 0, d, 8, 8, 1);
  for (int s = UK_RED_SLOT_NOUT; s <= UK_RED_SLOT_COUNT; s++) uk__fields_add(&fl, s, 0, 0, 0, 8, 8, 1);
  if ((st = uk__fields_layout(&fl, k->name, 1, plan)) != UK_OK) goto out;
  size_t off = 0;
  for (int j = 0; j < fl.n; j++) {
    const uk_field *x = &fl.f[j];
    char tb[2];
    const uk_param *prm = param_at(k, x->param);
    const char *t = type_name(k, x->param, tb);
    int is_in = x->param < nin;
    switch (x->kind) {
    case UK_SLOT_SCALAR: line(decl, "  %s %s;", t, prm->name); break;
    case UK_SLOT_PTR: line(decl, "  %s%s *_uk_p_%s;", is_in ? "const " : "", t, prm->name); break;
    case UK_SLOT_RAW_SHAPE:
      line(decl, "  ");
      uk__emit_raw_field(decl, prm, t, &key->p, x->param, off, plan);
      uk__sb_addc(decl, ';');
      break;
    case UK_RED_SLOT_KSTRIDE: line(decl, "  long long _uk_%cs_%s_%d;", is_in ? 'k' : 'o', prm->name, x->dim); break;
    case UK_RED_SLOT_RSTRIDE: line(decl, "  long long _uk_rs_%s_%d;", prm->name, x->dim); break;
    case UK_RED_SLOT_KSHAPE: line(decl, "  long long _uk_kshape_%d;", x->dim); break;
    case UK_RED_SLOT_RSHAPE: line(decl, "  long long _uk_rshape_%d;", x->dim); break;
    case UK_RED_SLOT_PARTIAL: line(decl, "  void *_uk_partial;"); break;
    case UK_RED_SLOT_COUNT: line(decl, "  unsigned int *_uk_count;"); break;
    default: line(decl, "  long long %s;", num_names[x->kind]); break;
    }
    if (x->kind != UK_SLOT_RAW_SHAPE) uk__plan_add(plan, x->kind, x->size, x->param, x->op, x->dim, off);
    off += (size_t)x->size;
  }
out:
  uk__fields_free(&fl);
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

/* CuPy's _j: the reduced index times the output count plus the output index. */
static const char j_index[] = "(long long)_uk_a._uk_nout";

static void emit_traits(const uk_red_kernel *k, const uk_red_key *key, uk_strbuf *b_koff, uk_strbuf *b_vparams,
                        uk_strbuf *b_vlocals, uk_strbuf *b_kept, uk_strbuf *b_map, uk_strbuf *b_post) {
  int nin = k->in->count, nout = k->out->count, nk = key->nd_k, nr = key->nd_r;
  /* koff, val parameters, kept offsets */
  if (k->uses_j) {
    line(b_koff, "    idx _uk_o;");
    line(b_kept, "    _uk_ko._uk_o = _uk_o;");
  }
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
  if (k->uses_j) uk__sb_add(b_vparams, ", const long long _j");
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
    line(b_vlocals, "    const ukern::raw_array<%s, %d, %s> &%s = _uk_a.%s;", type_name(k, p, tb), key->p.raw_ndim[p],
         (key->p.raw_contig_mask >> p) & 1 ? "true" : "false", obj, obj);
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
  if (k->uses_j) uk__sb_addf(b_map, ",\n               (long long)_uk_r * %s + (long long)_uk_ko._uk_o", j_index);
  uk__sb_add(b_map, ",\n               _uk_r);");
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
  uk__srcmap_add_code(b_post, "post_map_expr", k->post_map_expr, 1);
}

/* K::map_vec, red_group's vector loads. Only the planned strategy's member
 * is emitted: NVRTC would parse the others for nothing. */
/* The vectors of every loop input, `count` of them ("N" or "R"): map_vec's and map_rows' registers. */
static void emit_vec_arrays(const uk_red_kernel *k, const uk_red_key *key, const char *count, uk_strbuf *sb) {
  for (int p = 0; p < k->in->count; p++) {
    if (!is_loop_input(k, key, p)) continue;
    char tb[2];
    line(sb, "    ukern::vec<%s, vec> _uk_v_%s[%s];", type_name(k, p, tb), param_at(k, p)->name, count);
  }
}

/* Their use, once all are loaded: fn(val(...)) for each element, `index` its reduced index and `ko`
 * its row's offsets (CuPy's _j from them). */
static void emit_vec_uses(const uk_red_kernel *k, const uk_red_key *key, const char *count, const char *fn,
                          const char *ko, const char *index, uk_strbuf *sb) {
  line(sb, "#pragma unroll");
  line(sb, "    for (int _uk_n = 0; _uk_n < %s; _uk_n++)", count);
  line(sb, "#pragma unroll");
  line(sb, "      for (int _uk_k = 0; _uk_k < vec; _uk_k++)");
  line(sb, "        %s(val(_uk_a", fn);
  for (int p = 0; p < k->in->count; p++)
    if (is_loop_input(k, key, p)) uk__sb_addf(sb, ", _uk_v_%s[_uk_n][_uk_k]", param_at(k, p)->name);
  if (k->uses_j) uk__sb_addf(sb, ", (long long)(%s) * %s + (long long)%s._uk_o", index, j_index, ko);
  uk__sb_addf(sb, ", %s));", index);
  line(sb, "  }");
}

static void emit_map_vec(const uk_red_kernel *k, const uk_red_key *key, uk_strbuf *sb) {
  int nin = k->in->count, nr = key->nd_r;
  line(sb, "  // N vectors, _uk_step elements apart: every load issued before the first");
  line(sb, "  // use, so that N are in flight (ptxas would otherwise interleave them).");
  line(sb, "  template <int N, class F>");
  line(sb, "  static __device__ __forceinline__ void map_vec(const args &_uk_a, const koff &_uk_ko, idx _uk_r,");
  line(sb, "                                                 idx _uk_step, F &_uk_f) {");
  /* map_vec: N whole vectors along the contiguous innermost reduced axis,
   * all loaded first. Over several reduced axes (a non-adjacent axis set)
   * each vector's coordinates come from its flat position: the planner
   * takes vectors there only when the innermost extent holds whole vectors
   * (red_plan.c), so a vector never spans two rows. */
  emit_vec_arrays(k, key, "N", sb);
  line(sb, "#pragma unroll");
  line(sb, "    for (int _uk_n = 0; _uk_n < N; _uk_n++) {");
  if (nr > 1) {
    emit_unravel(sb, "_uk_r + _uk_n * _uk_step", "_uk_rshape", nr);
  }
  for (int p = 0; p < nin; p++) {
    if (!is_loop_input(k, key, p)) continue;
    char tb[2];
    const char *name = param_at(k, p)->name, *t = type_name(k, p, tb);
    if (nr > 1) {
      line(sb, "      _uk_v_%s[_uk_n] = ukern::vload_now<vec>((const %s *)((const char *)_uk_a._uk_p_%s + _uk_ko.%s + ",
           name, t, name, name);
      offset_expr(sb, "_uk_rs", name, nr);
      uk__sb_add(sb, "));");
      continue;
    }
    line(sb,
         "      _uk_v_%s[_uk_n] = ukern::vload_now<vec>((const %s *)((const char *)_uk_a._uk_p_%s + _uk_ko.%s) + _uk_r + "
         "_uk_n * _uk_step);",
         name, t, name, name);
  }
  line(sb, "    }");
  emit_vec_uses(k, key, "N", "_uk_f", "_uk_ko", "_uk_r + _uk_n * _uk_step + _uk_k", sb);
  if (!key->rows) return;
  /* map_rows (the key's rows only, whose reduced loop is one axis): one vector of each of R rows,
   * every load before the first use, as map_vec's */
  line(sb, "  // One vector of each of R rows (offsets _uk_ko[0..R-1]) at _uk_r: every load first.");
  line(sb, "  template <int R, class F>");
  line(sb, "  static __device__ __forceinline__ void map_rows(const args &_uk_a, const koff *_uk_ko, idx _uk_r, F *_uk_f) {");
  emit_vec_arrays(k, key, "R", sb);
  line(sb, "#pragma unroll");
  line(sb, "    for (int _uk_n = 0; _uk_n < R; _uk_n++) {");
  for (int p = 0; p < nin; p++) {
    if (!is_loop_input(k, key, p)) continue;
    char tb[2];
    const char *name = param_at(k, p)->name, *t = type_name(k, p, tb);
    line(sb, "      _uk_v_%s[_uk_n] = ukern::vload_now<vec>((const %s *)((const char *)_uk_a._uk_p_%s + _uk_ko[_uk_n].%s) + _uk_r);",
         name, t, name, name);
  }
  line(sb, "    }");
  emit_vec_uses(k, key, "R", "_uk_f[_uk_n]", "_uk_ko[_uk_n]", "_uk_r + _uk_k", sb);
}

/* K::row, load_row and use_row, red_cols' loads: one row's W adjacent
 * outputs along a contiguous kept axis (W: vec with vector loads, else 1)
 * of each loop input, loaded in place; red_cols (ukern/red_cols.cuh)
 * issues several rows' loads before the first use, and chooses how many. */
static void emit_map_cols(const uk_red_kernel *k, const uk_red_key *key, uk_strbuf *sb) {
  int nin = k->in->count, nr = key->nd_r;
  line(sb, "  // One row's values of every loop input: W adjacent outputs (W: vec or 1).");
  line(sb, "  template <int W> struct row {");
  for (int p = 0; p < nin; p++) {
    if (!is_loop_input(k, key, p)) continue;
    char tb[2];
    line(sb, "    ukern::vec<%s, W> _uk_v_%s;", type_name(k, p, tb), param_at(k, p)->name);
  }
  line(sb, "  };");
  line(sb, "  // Row _uk_r's loads, issued where they stand (ukern::vload_now).");
  line(sb, "  template <int W>");
  line(sb, "  static __device__ __forceinline__ void load_row(const args &_uk_a, const koff &_uk_ko, idx _uk_r,");
  line(sb, "                                                  row<W> &_uk_v) {");
  emit_unravel(sb, "_uk_r", "_uk_rshape", nr);
  if (!nr) line(sb, "    (void)_uk_r;");
  for (int p = 0; p < nin; p++) {
    if (!is_loop_input(k, key, p)) continue;
    char tb[2];
    const char *name = param_at(k, p)->name, *t = type_name(k, p, tb);
    line(sb, "    _uk_v._uk_v_%s = ukern::vload_now<W>((const %s *)((const char *)_uk_a._uk_p_%s + _uk_ko.%s", name, t,
         name, name);
    if (nr) {
      uk__sb_add(sb, " + ");
      offset_expr(sb, "_uk_rs", name, nr);
    }
    uk__sb_add(sb, "));");
  }
  line(sb, "  }");
  line(sb, "  // Row _uk_r's W values into the W accumulators _uk_f.");
  line(sb, "  template <int W, class F>");
  line(sb, "  static __device__ __forceinline__ void use_row(const args &_uk_a, const koff &_uk_ko, const row<W> &_uk_v,");
  line(sb, "                                                 idx _uk_r, F *_uk_f) {");
  if (!k->uses_j) line(sb, "    (void)_uk_ko;");
  line(sb, "#pragma unroll");
  line(sb, "    for (int _uk_k = 0; _uk_k < W; _uk_k++)");
  line(sb, "      _uk_f[_uk_k](val(_uk_a");
  for (int p = 0; p < nin; p++)
    if (is_loop_input(k, key, p)) uk__sb_addf(sb, ", _uk_v._uk_v_%s[_uk_k]", param_at(k, p)->name);
  if (k->uses_j) uk__sb_addf(sb, ", (long long)_uk_r * %s + (long long)(_uk_ko._uk_o + _uk_k)", j_index);
  uk__sb_add(sb, ", _uk_r));");
  line(sb, "  }");
}

/* K::map_pack, red_pack's loads. */
static void emit_map_pack(const uk_red_kernel *k, const uk_red_key *key, uk_strbuf *sb) {
  int nin = k->in->count;
  (void)key;
  line(sb, "  template <int R, class F>");
  line(sb, "  static __device__ __forceinline__ void map_pack(const args &_uk_a, const koff &_uk_ko, F *_uk_f) {");
  /* map_pack: a vector of whole rows of R elements (the reduced index is
   * the position in the row) */
  for (int p = 0; p < nin; p++) {
    if (!is_loop_input(k, key, p)) continue;
    char tb[2];
    const char *name = param_at(k, p)->name, *t = type_name(k, p, tb);
    line(sb,
         "    const ukern::vec<%s, vec> _uk_v_%s = ukern::vload<vec>((const %s *)((const char *)_uk_a._uk_p_%s + "
         "_uk_ko.%s));",
         t, name, t, name, name);
  }
  line(sb, "#pragma unroll");
  line(sb, "    for (int _uk_k = 0; _uk_k < vec; _uk_k++)");
  line(sb, "      _uk_f[_uk_k / R](val(_uk_a");
  for (int p = 0; p < nin; p++)
    if (is_loop_input(k, key, p)) uk__sb_addf(sb, ", _uk_v_%s[_uk_k]", param_at(k, p)->name);
  if (k->uses_j) uk__sb_addf(sb, ", (long long)(_uk_k %% R) * %s + (long long)(_uk_ko._uk_o + _uk_k / R)", j_index);
  uk__sb_add(sb, ", (idx)(_uk_k % R)));");
  line(sb, "  }");
}

/* red_group's __launch_bounds__: the block size, and for a program of two
 * or more vector-loaded inputs over rows of more than 8 vectors (the key's
 * `deep`) a least number of resident blocks. Without
 * it ptxas holds such a program near 36 registers by sinking map_vec's
 * loads to their uses: two inputs' four vectors then had 2 of 8 loads in
 * flight (SASS: LDG, LDG, use; a one-input sum keeps its 4 in flight at 32
 * registers). A register limit that fits 16 words a loop input plus 32
 * keeps all of them issued first: 4 blocks for two inputs (62 registers),
 * 3 for three. */
int uk__red_min_blocks(int group, int nloop, int vec) {
  if (group != UK_RED_GROUP_G || nloop < 2 || vec < 2) return 0;
  int n = 65536 / (UK_RED_BLOCK * (16 * nloop + 32));
  return n > 0 ? n : 1;
}

int uk__red_deep(int group, int nloop, int vec, int64_t nred) {
  return uk__red_min_blocks(group, nloop, vec) > 0 && nred > 8 * (int64_t)vec;
}

/* A group program of no kept axis: one output, which red_group's every thread takes (_UK_RED_WHOLE). */
static int one_output(const uk_red_key *key) {
  return (key->group > UK_RED_GROUP_PACK || key->group == UK_RED_GROUP_G) && key->nd_k == 0;
}

static void emit_banner(const uk_red_kernel *k, const uk_red_key *key, uk_strbuf *sb) {
  uk__sb_addf(sb, "// ukern reduction kernel '%s' (template reduction.cu)\n", k->name);
  uk__emit_banner_params(sb, k->in, k->out, &key->p, k->raw_view_mask, 1);
  uk__sb_addf(sb, "\n// reduce type: %s; identity: %s\n", k->reduce_type, k->identity ? k->identity : "none");
  static const char *const kernel[] = {"a thread, 8 threads, a warp or a block per output", "threads across the outputs",
                                       "rows of 2, packed"};
  uk__sb_addf(sb, "// loops: kept ndim %d, reduced ndim %d, %s index; kernel: %s", key->nd_k, key->nd_r,
              key->index64 ? "64-bit" : "32-bit",
              one_output(key) ? "a block's threads on the one output"
                              : kernel[key->group <= UK_RED_GROUP_PACK ? key->group : 0]);
  if (key->width) uk__sb_addf(sb, "; threads an output compiled in: %d", key->width);
  /* a tiny reduction (uk__red_tiny): the cache's listing tells the two programs apart */
  if (key->unsplit && key->group != UK_RED_GROUP_PACK) uk__sb_add(sb, "; never split: no split pass");
  if (key->block) uk__sb_addf(sb, "; blocks of %d threads, one an output", key->block);
  if (key->cluster) uk__sb_add(sb, " over a thread-block cluster");
  if (key->narrow) uk__sb_add(sb, "; short rows: 2 or 4 threads an output too");
  if (key->rows) uk__sb_addf(sb, "; rows of one vector a thread, %d a trip", key->rows);
  if (key->block_cub) uk__sb_add(sb, "\n// block combine: cub::BlockReduce (block_reduce = cub)");
}

uk_status uk__red_emit(const uk_red_kernel *k, const uk_red_key *key, uk_strbuf *src, uk_plan *plan) {
  enum { B_BANNER, B_TYPEDEFS, B_PREAMBLE, B_FIELDS, B_KOFF, B_VPARAMS, B_VLOCALS, B_KEPT, B_MAP, B_MAPS, B_POST,
         B_IDENT, B_REDUCE, B_MAPEXPR, B_IDLOCALS, B_INCLUDES, NB };
  uk_strbuf b[NB];
  for (int j = 0; j < NB; j++) uk__sb_init(&b[j]);
  uk_plan pl = {0, NULL, 0};
  uk_status st;
  if (nloop_inputs(k, key) == 0) {
    st = uk__errorf(UK_ERR_INTERNAL, "%s: a reduction program needs a non-raw array input", k->name);
    goto out;
  }
  if ((st = emit_fields(k, key, &b[B_FIELDS], &pl)) != UK_OK) goto out;
  emit_banner(k, key, &b[B_BANNER]);
  emit_type_includes(k, key, &b[B_INCLUDES]);
  const char *const texts[] = {k->map_expr, k->reduce_expr, k->post_map_expr, k->identity, k->reduce_type, k->preamble};
  uk__emit_cupy_includes(&b[B_TYPEDEFS], texts, 6);
  uk__emit_typedefs(&b[B_TYPEDEFS], k->in, k->out, &key->p);
  uk__emit_preamble(&b[B_PREAMBLE], k->preamble);
  emit_traits(k, key, &b[B_KOFF], &b[B_VPARAMS], &b[B_VLOCALS], &b[B_KEPT], &b[B_MAP], &b[B_POST]);
  /* Only the planned strategy's load member: the program parses no other. */
  int g = key->group <= UK_RED_GROUP_PACK ? key->group : UK_RED_GROUP_G;
  static void (*const emit_maps[])(const uk_red_kernel *, const uk_red_key *, uk_strbuf *) = {
      emit_map_vec, emit_map_cols, emit_map_pack};
  emit_maps[g](k, key, &b[B_MAPS]);
  if (k->identity) {
    uk__sb_add(&b[B_IDENT], "(rt)");
    uk__srcmap_add_expr(&b[B_IDENT], "identity", k->identity);
    /* The identity may name scalar inputs (CuPy's first_nonzero: `len`). */
    for (int p = 0; p < k->in->count; p++) {
      char tb[2];
      if (is_scalar(key, p) && uk__opscan_uses(k->identity, param_at(k, p)->name))
        line(&b[B_IDLOCALS], "    const %s %s = _uk_a.%s;", type_name(k, p, tb), param_at(k, p)->name,
             param_at(k, p)->name);
    }
  } else {
    uk__sb_add(&b[B_IDENT], "rt()");
  }
  uk__srcmap_add_expr(&b[B_REDUCE], "reduce_expr", k->reduce_expr);
  uk__srcmap_add_expr(&b[B_MAPEXPR], "map_expr", k->map_expr);
  static const char *const names[NB] = {"banner",   "typedefs",    "preamble", "fields",       "koff",
                                        "val_params", "val_locals", "kept",    "map",          "maps",
                                        "post",     "identity",    "reduce_expr", "map_expr", "ident_locals",
                                        "type_includes"};
  char vec[8], head[320], lb[24], defs[192];
  snprintf(vec, sizeof vec, "%d", uk__red_key_vec(k, key));
  /* resident blocks of UK_RED_BLOCK threads: a larger block (a block an output, never more than
     one wave) keeps its registers */
  int minb = key->deep && !key->block ? uk__red_min_blocks(g, nloop_inputs(k, key), uk__red_key_vec(k, key)) : 0;
  const char *mb = strstr(k->tune, "_UK_RED_MB "); /* a knob's least resident blocks */
  if (mb) minb = atoi(mb + strlen("_UK_RED_MB "));
  const int block = key->block ? key->block : UK_RED_BLOCK;
  char bl[8];
  snprintf(bl, sizeof bl, "%d", block);
  if (minb > 0) snprintf(lb, sizeof lb, "%d, %d", block, minb);
  else snprintf(lb, sizeof lb, "%d", block);
  /* the measurement knobs (none by default), the large inputs' load policy (unless a knob
     sets it), then CUB's header before ukern's, which then uses it (reduction.cuh) */
  snprintf(head, sizeof head, "%s%s%s%s", k->tune,
           key->plain_loads && !strstr(k->tune, "_UK_RED_LD ") ? "#define _UK_RED_LD 0\n" : "",
           key->narrow ? "#define _UK_RED_NARROW 1\n" : "",
           key->block_cub ? "#define UKERN_RED_BLOCK_CUB 1\n#include <cub/block/block_reduce.cuh>" : "");
  size_t hl = strlen(head);
  if (hl && head[hl - 1] == '\n') head[hl - 1] = 0; /* the template's line ends it */
  /* after the precompiled prefix: red_group's 8-vector trips (the key's trip8, a group program's only)
     unless a knob sets the trip; a wide plan's cluster (detail::cluster_fold holds 8 blocks' values) */
  _Static_assert(UK_RED_CLUSTER_MAX == 8, "templates/ukern/red_group.cuh cluster_fold: a slot a block");
  /* and a fusion's argmax pair's 32-bit index where every reduced index fits one (templates/ukern/fusion.cuh);
     and one output (no kept axis) as red_group's constants, or the key's threads an output */
  const int trip8 = key->trip8 && !strstr(k->tune, "_UK_RED_TRIP ");
  char gw[64] = "";
  if (key->width) snprintf(gw, sizeof gw, "\n#define _UK_RED_GW %d", key->width);
  if (key->rows) snprintf(gw + strlen(gw), sizeof gw - strlen(gw), "\n#define _UK_RED_ROWS %d", key->rows);
  snprintf(defs, sizeof defs, "%s%s%s%s%s", trip8 ? "#define _UK_RED_G8TRIP 1" : "",
           key->cluster ? "\n#define _UK_RED_CLUSTER 1" : "",
           k->argpair && !key->index64 ? "\n#define _UK_RED_IDX32 1" : "",
           one_output(key) ? "\n#define _UK_RED_WHOLE 1" : "", gw);
  static const char *const strategy[] = {"red_group", "red_cols", "red_pack"};
  static const int first_kernel[] = {UK_RED_T1, UK_RED_COLS, UK_RED_PACK};
  const uk_tpl_var extra[] = {{"reduce_type", k->reduce_type},
                              {"uindex", key->index64 ? "unsigned long long" : "unsigned int"},
                              {"sindex", key->index64 ? "long long" : "int"},
                              {"has_identity", k->identity ? "true" : "false"},
                              {"vec", vec},
                              {"name", k->name},
                              {"suffix", uk__red_kernel_suffix(first_kernel[g])},
                              {"strategy", strategy[g]},
                              {"block_reduce", head},
                              /* the end of the prefix every CUB program shares: NVRTC's -pch
                                 stores the headers up to here */
                              {"header_stop", key->block_cub ? "#pragma nv_hdrstop" : ""},
                              {"launch_bounds", lb},
                              {"block", bl},
                              {"strategy_defs", defs},
                              /* red_group's and red_cols' SPLIT: false for a plan that never splits */
                              {"unsplit", key->unsplit && g != UK_RED_GROUP_PACK ? ", false" : ""}};
  st = uk__emit_expand("reduction.cu", names, b, NB, extra, (int)(sizeof extra / sizeof extra[0]), src);
out:
  return uk__emit_finish(st, k->name, src, b, NB, &pl, plan);
}
