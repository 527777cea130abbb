/* The elementwise emitter (ew_emit.h): a uk_ew_key to kernel source and its argument plan. */
#include "codegen/ew_emit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/embedded.h"
#include "base/error.h"
#include "codegen/dtype.h"
#include "codegen/opscan.h"
#include "codegen/srcmap.h"
#include "codegen/tpl.h"

/* ------------------------------------------------------------------------ */
/* What the operation uses                                                   */
/* ------------------------------------------------------------------------ */

/* Whether a #define of the preamble expands to return or continue (CuPy's
 * searchsorted hides its early exit in a macro). */
static int macro_exits(const char *pre) {
  for (const char *p = pre; p && *p;) {
    const char *s = p;
    while (*s == ' ' || *s == '\t') s++;
    const char *e = p;
    while (*e && !(*e == '\n' && e[-1] != '\\')) e++; /* the logical line */
    if (*s == '#') {
      for (const char *q = s; q + 6 <= e; q++)
        if (memcmp(q, "return", 6) == 0 || (q + 8 <= e && memcmp(q, "continue", 8) == 0)) return 1;
    }
    p = *e ? e + 1 : e;
  }
  return 0;
}

void uk__ew_scan(uk_ew_kernel *k) {
  int nin = k->in->count, nout = k->out->count;
  k->write_only_mask = 0;
  for (int p = nin; p < nin + nout; p++) {
    const uk_param *prm = &k->out->items[p - nin];
    if (!prm->is_raw && uk__opscan_write_only_with(k->operation, k->preamble, prm->name))
      k->write_only_mask |= 1ull << p;
  }
  const char *const views[] = {k->operation, k->loop_prep, k->after_loop};
  k->raw_view_mask = uk__emit_scan_raw_views(k->in, k->out, 0, views, 3);
  k->uses_i = uk__opscan_uses(k->operation, "i");
  k->uses_ind = uk__opscan_uses(k->operation, "_ind") || uk__opscan_uses(k->loop_prep, "_ind") ||
                uk__opscan_uses(k->after_loop, "_ind");
  k->uses_ind_index = uk__opscan_uses_beyond(k->operation, "_ind", "size") ||
                      uk__opscan_uses_beyond(k->loop_prep, "_ind", "size") ||
                      uk__opscan_uses_beyond(k->after_loop, "_ind", "size");
  /* State that loop_prep declares may change per element (a running value):
   * only CuPy's order of elements per thread gives CuPy's results. */
  /* CuPy runs one element per thread with outputs bound by reference, so
   * `return` ends an element with what it assigned so far: so does ukern. */
  k->early_exit = uk__opscan_uses(k->operation, "return") || uk__opscan_uses(k->operation, "continue") ||
                  uk__opscan_uses(k->operation, "goto") || macro_exits(k->preamble);
  k->one_per_thread = k->uses_ind_index || k->early_exit || (k->loop_prep && *k->loop_prep) ||
                      (k->after_loop && *k->after_loop);
  for (int p = 0; p < nin; p++) k->one_per_thread |= !k->in->items[p].is_raw && k->in->items[p].is_non_const;
  /* A tile's threads meet at barriers: an operation that leaves the loop
   * early (or syncs itself) keeps the plain strided loop. */
  k->tile_safe = !uk__opscan_uses(k->operation, "return") && !uk__opscan_uses(k->operation, "break") &&
                 !uk__opscan_uses(k->operation, "goto") && !uk__opscan_mentions(k->operation, "__sync");
  const char *texts[4] = {k->operation, k->preamble, k->loop_prep, k->after_loop};
  uk__emit_scan_type_names(texts, 4, &k->needs_f16, &k->needs_bf16, &k->needs_complex);
  k->needs_runtime = uk__emit_needs_runtime(texts, 4);
}

const char *const *uk__ew_nvrtc_options(const uk_ew_kernel *k, const uk_ew_key *key) {
  /* -minimal drops texture/surface, device-runtime and driver-API types from
   * NVRTC's implicit headers: ~1 ms of every compile. */
  static const char *const minimal[] = {"-minimal", NULL};
  static const char *const none[] = {NULL};
  return k->needs_runtime || key->p.texture_mask ? none : minimal;
}


/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

static const uk_param *param_at(const uk_ew_kernel *k, int p) { return uk__emit_param(k->in, k->out, p); }
static int in_loop(const uk_ew_kernel *k, const uk_ew_key *key, int p) { return uk__ew_in_loop(k, key, p); }

int uk__ew_loop_operand(const uk_ew_kernel *k, const uk_ew_key *key, int param, int *op) {
  if (!in_loop(k, key, param)) return 0;
  int n = 0;
  for (int p = 0; p < param; p++) n += in_loop(k, key, p);
  *op = n;
  return 1;
}

static const char *type_name(const uk_ew_kernel *k, int p, char *buf) { return uk__emit_type(param_at(k, p), buf); }

const char *uk__ew_template(const uk_ew_key *key) {
  switch (key->variant) {
  case UK_EW_VEC: return "elementwise_vec.cu";
  case UK_EW_CONTIG: return "elementwise_contig.cu";
  case UK_EW_TILED: return "elementwise_tile.cu";
  case UK_EW_ROWS: return key->vec > 1 ? "elementwise_rows_vec.cu" : "elementwise_rows.cu";
  default: return "elementwise.cu";
  }
}

const char *uk__ew_describe(const uk_ew_key *key, char *buf, int size) {
  const char *w = key->index64 ? "64-bit index" : "32-bit index";
  if (key->variant == UK_EW_VEC)
    snprintf(buf, (size_t)size, "vectorised x%d, %s, ndim %d", key->vec, w, key->ndim);
  else if (key->variant == UK_EW_ROWS && key->vec > 1)
    snprintf(buf, (size_t)size, "rows, vectorised x%d, %s, ndim %d", key->vec, w, key->ndim);
  else if (key->variant == UK_EW_ROWS)
    snprintf(buf, (size_t)size, "rows, %s, ndim %d", w, key->ndim);
  else if (key->variant == UK_EW_TILED)
    snprintf(buf, (size_t)size, "tiled 32x32, lanes along axis %d, %s, ndim %d", key->tile_fast, w, key->ndim);
  else
    snprintf(buf, (size_t)size, "%s, %s, ndim %d", key->variant == UK_EW_CONTIG ? "contiguous" : "strided", w,
             key->ndim);
  return buf;
}

/* Appends a line to a block (emit_common.h). */
#define line(...) uk__emit_line(__VA_ARGS__)

/* ------------------------------------------------------------------------ */
/* Kernel parameters                                                         */
/* ------------------------------------------------------------------------ */

/* Lists the parameters, sorts them by alignment, writes their declarations
 * and the plan. */
static uk_status emit_params(const uk_ew_kernel *k, const uk_ew_key *key, uk_strbuf *decl, uk_plan *plan) {
  int np = k->in->count + k->out->count;
  int rows = key->variant == UK_EW_ROWS;
  int nd = key->variant == UK_EW_STRIDED || key->variant == UK_EW_TILED || rows ? key->ndim : 0;
  int isz = key->index64 ? 8 : 4;
  uk_fields fl;
  uk_status st = uk__fields_init(&fl, 2 * np + np * nd + nd + 3);
  if (st != UK_OK) return st;
  uk__fields_add_params(&fl, k->in, k->out, &key->p, k->raw_view_mask);
  for (int p = 0, op = 0; p < np && nd; p++) {
    if (!in_loop(k, key, p)) continue;
    for (int d = 0; d < nd; d++) uk__fields_add(&fl, UK_EW_SLOT_STRIDE, p, op, d, isz, isz, 1);
    op++;
  }
  for (int d = 0; d < nd; d++) uk__fields_add(&fl, UK_EW_SLOT_SHAPE, 0, 0, d, isz, isz, 1);
  uk__fields_add(&fl, UK_EW_SLOT_SIZE, 0, 0, 0, isz, isz, 1);
  if (rows) {
    uk__fields_add(&fl, UK_EW_SLOT_ROWS, 0, 0, 0, isz, isz, 1);
    uk__fields_add(&fl, UK_EW_SLOT_LANES, 0, 0, 0, 4, 4, 1);
  }
  if ((st = uk__fields_layout(&fl, k->name, 0, plan)) != UK_OK) goto out;
  const char *ut = key->index64 ? "unsigned long long" : "unsigned int";
  const char *sit = key->index64 ? "long long" : "int";
  size_t off = 0;
  for (int j = 0; j < fl.n; j++) {
    char tb[2];
    const uk_field *x = &fl.f[j];
    const uk_param *prm = param_at(k, x->param);
    const char *t = type_name(k, x->param, tb);
    uk__sb_addf(decl, "\n    ");
    switch (x->kind) {
    case UK_SLOT_SCALAR:
      uk__sb_addf(decl, "const %s %s", uk__key_is_texture(&key->p, x->param) ? "cudaTextureObject_t" : t, prm->name);
      break;
    case UK_SLOT_PTR:
      uk__sb_addf(decl, "%s%s* _uk_p_%s", x->param < k->in->count && !prm->is_non_const ? "const " : "", t, prm->name);
      break;
    case UK_SLOT_RAW_SHAPE: uk__emit_raw_field(decl, prm, t, &key->p, x->param, off, plan); break;
    case UK_EW_SLOT_STRIDE: uk__sb_addf(decl, "%s _uk_s_%s_%d", sit, prm->name, x->dim); break;
    case UK_EW_SLOT_SHAPE: uk__sb_addf(decl, "%s _uk_shape_%d", ut, x->dim); break;
    case UK_EW_SLOT_SIZE: uk__sb_addf(decl, "%s _uk_size", ut); break;
    case UK_EW_SLOT_ROWS: uk__sb_addf(decl, "%s _uk_rows", ut); break;
    case UK_EW_SLOT_LANES: uk__sb_addf(decl, "unsigned int _uk_lanes"); break;
    }
    if (x->kind != UK_SLOT_RAW_SHAPE) uk__plan_add(plan, x->kind, x->size, x->param, x->op, x->dim, off);
    if (j + 1 < fl.n) uk__sb_addc(decl, ',');
    off += (size_t)x->size;
  }
out:
  uk__fields_free(&fl);
  return st;
}

/* ------------------------------------------------------------------------ */
/* The source                                                                */
/* ------------------------------------------------------------------------ */

static void emit_banner(const uk_ew_kernel *k, const uk_ew_key *key, uk_strbuf *sb) {
  char desc[96];
  uk__sb_addf(sb, "// ukern elementwise kernel '%s' (template %s)\n", k->name, uk__ew_template(key));
  uk__emit_banner_params(sb, k->in, k->out, &key->p, k->raw_view_mask, 0);
  uk__sb_addf(sb, "\n// variant: %s", uk__ew_describe(key, desc, sizeof desc));
}

/* The includes the dtypes and the user's text need: the core always; of
 * half.cuh only the 16-bit types used (each costs NVRTC ~2 ms). */
static void emit_includes(const uk_ew_kernel *k, const uk_ew_key *key, uk_strbuf *sb) {
  int f16 = k->needs_f16, bf16 = k->needs_bf16, cx = k->needs_complex, np = k->in->count + k->out->count;
  for (int p = 0; p < np; p++) {
    uk_dtype t = (uk_dtype)key->p.dtype[p];
    f16 |= t == UK_FLOAT16;
    bf16 |= t == UK_BFLOAT16;
    cx |= t == UK_COMPLEX64 || t == UK_COMPLEX128;
  }
  if (cx) line(sb, "#include <ukern/complex.cuh>");
  line(sb, "#include <ukern/ew_core.cuh>");
  const char *const texts[] = {k->operation, k->preamble, k->loop_prep, k->after_loop};
  uk__emit_cupy_includes(sb, texts, 4);
  if (f16 != bf16) line(sb, "#define UKERN_HALF_ONLY_%s", f16 ? "F16" : "BF16");
  if (f16 || bf16) line(sb, "#include <ukern/half.cuh>");
}

/* The per-element declarations and stores of the scalar loops. `element`
 * formats parameter p's element access into buf. */
typedef enum { ACC_CONTIG, ACC_STRIDED, ACC_VEC, ACC_TILED, ACC_ROWS } access;

static int tiled(const uk_ew_key *key, int p) { return p < 64 && ((key->tile_mask >> p) & 1); }

/* TILED: inputs read directly are loaded before the tile barrier. */
static int prefetched(const uk_ew_kernel *k, const uk_ew_key *key, int p) {
  return key->variant == UK_EW_TILED && p < k->in->count && !tiled(key, p);
}

static const char *element(const uk_ew_kernel *k, const uk_ew_key *key, int p, access a, char *buf, size_t n) {
  const char *name = param_at(k, p)->name;
  if ((key->bcast_mask >> p) & 1) snprintf(buf, n, "_uk_b_%s", name);
  else if (a == ACC_CONTIG) snprintf(buf, n, "_uk_p_%s[_uk_j]", name);
  else if (a == ACC_TILED && tiled(key, p)) snprintf(buf, n, "_uk_t_%s(_uk_tx, _uk_ty + 8 * _uk_q)", name);
  else if (a == ACC_TILED && prefetched(k, key, p)) snprintf(buf, n, "_uk_d_%s[_uk_q]", name);
  else if (a == ACC_STRIDED || a == ACC_TILED) snprintf(buf, n, "ukern::at(_uk_p_%s, _uk_o_%s)", name, name);
  else if (a == ACC_ROWS)
    snprintf(buf, n, "ukern::at(_uk_p_%s, _uk_o_%s + (_uk_sidx)_uk_j * _uk_s_%s_%d)", name, name, name, key->ndim - 1);
  else snprintf(buf, n, "_uk_v_%s[_uk_k]", name);
  return buf;
}

static void emit_elements(const uk_ew_kernel *k, const uk_ew_key *key, access a, const char *ind, uk_strbuf *elems,
                          uk_strbuf *stores) {
  int nin = k->in->count, np = nin + k->out->count;
  for (int p = 0; p < np; p++) {
    if (!in_loop(k, key, p)) continue;
    char tb[2], acc[300];
    const char *t = type_name(k, p, tb), *name = param_at(k, p)->name;
    element(k, key, p, a, acc, sizeof acc);
    if (p < nin && param_at(k, p)->is_non_const) {
      /* CuPy binds a _non_const input by reference: what the operation
       * writes there goes back to the array. */
      line(elems, "%s%s %s = %s;", ind, t, name, acc);
      line(stores, "%s%s = %s;", ind, acc, name);
    } else if (p < nin) {
      line(elems, "%sconst %s %s = %s;", ind, t, name, acc);
    } else if (k->early_exit && a != ACC_VEC) {
      line(elems, "%s%s &%s = %s;", ind, t, name, acc);
    } else {
      if ((k->write_only_mask >> p) & 1) line(elems, "%s%s %s;", ind, t, name);
      else line(elems, "%s%s %s = %s;", ind, t, name, acc);
      line(stores, "%s%s = %s;", ind, acc, name);
    }
  }
}

/* Broadcast (stride 0) inputs of the contiguous variants, loaded once; of
 * ROWS (inner stride 0), once per row. */
static void emit_hoisted(const uk_ew_kernel *k, const uk_ew_key *key, uk_strbuf *sb) {
  for (int p = 0; p < k->in->count; p++) {
    if (!in_loop(k, key, p) || !((key->bcast_mask >> p) & 1)) continue;
    char tb[2];
    const char *name = param_at(k, p)->name;
    if (key->variant == UK_EW_ROWS)
      line(sb, "    const %s _uk_b_%s = ukern::at(_uk_p_%s, _uk_o_%s);", type_name(k, p, tb), name, name, name);
    else
      line(sb, "  const %s _uk_b_%s = *_uk_p_%s;", type_name(k, p, tb), name, name);
  }
}

/* Flat index `idx` over the first nd merged axes -> per-operand byte
 * offsets, one div/mod per axis but the outermost (STRIDED: every axis, per
 * element; ROWS: the outer axes, per row). */
static void emit_offsets(const uk_ew_kernel *k, const uk_ew_key *key, const char *idx, int nd, uk_strbuf *sb) {
  int np = k->in->count + k->out->count;
  if (nd > 1) line(sb, "    _uk_uidx _uk_r = %s;", idx);
  for (int d = nd - 1; d > 0; d--) {
    line(sb, "    const _uk_uidx _uk_c%d = _uk_r %% _uk_shape_%d;", d, d);
    line(sb, "    _uk_r /= _uk_shape_%d;", d);
  }
  for (int p = 0; p < np; p++) {
    if (!in_loop(k, key, p)) continue;
    const char *name = param_at(k, p)->name;
    line(sb, "    const _uk_sidx _uk_o_%s = (_uk_sidx)%s * _uk_s_%s_0", name, nd > 1 ? "_uk_r" : idx, name);
    for (int d = 1; d < nd; d++) uk__sb_addf(sb, " + (_uk_sidx)_uk_c%d * _uk_s_%s_%d", d, name, d);
    uk__sb_addc(sb, ';');
  }
}

/* VEC: vector _uk_j of the array; ROWS: the vector at column _uk_c of the
 * row (every operand here has unit inner stride). */
static void emit_vec(const uk_ew_kernel *k, const uk_ew_key *key, uk_strbuf *loads, uk_strbuf *puts,
                     uk_strbuf *stores) {
  int nin = k->in->count, np = nin + k->out->count, v = key->vec, rows = key->variant == UK_EW_ROWS;
  const char *ind = rows ? "        " : "    ";
  for (int p = 0; p < np; p++) {
    if (!in_loop(k, key, p) || ((key->bcast_mask >> p) & 1)) continue;
    char tb[2], addr[160];
    const char *t = type_name(k, p, tb), *name = param_at(k, p)->name;
    if (rows) snprintf(addr, sizeof addr, "&ukern::at(_uk_p_%s, _uk_o_%s) + _uk_c", name, name);
    else snprintf(addr, sizeof addr, "_uk_p_%s + _uk_j * %d", name, v);
    if (p >= nin && ((k->write_only_mask >> p) & 1))
      line(loads, "%sukern::vec<%s, %d> _uk_v_%s;", ind, t, v, name);
    else
      line(loads, "%s%sukern::vec<%s, %d> _uk_v_%s = ukern::vload<%d>(%s);", ind, p < nin ? "const " : "", t, v, name,
           v, addr);
    if (p >= nin) {
      line(puts, "%s  _uk_v_%s[_uk_k] = %s;", ind, name, name);
      line(stores, "%sukern::vstore<%d>(%s, _uk_v_%s);", ind, v, addr, name);
    }
  }
}

/* ------------------------------------------------------------------------ */
/* The tiled 2-d variant                                                     */
/* ------------------------------------------------------------------------ */

/* A tile pass: lanes along the compute axis (tile_fast), or across it (the
 * fast axis of the operands in tile_mask). */
static void tile_coords(const uk_ew_key *key, int across, uk_strbuf *sb, const char *indent) {
  int lanes_on_1 = (key->tile_fast == 1) != across;
  line(sb, "%sconst _uk_uidx _uk_r = _uk_r0 + %s, _uk_c = _uk_c0 + %s;", indent,
       lanes_on_1 ? "_uk_ty + 8 * _uk_q" : "_uk_tx", lanes_on_1 ? "_uk_tx" : "_uk_ty + 8 * _uk_q");
}

static void tile_pass_open(const uk_ew_key *key, int across, uk_strbuf *sb) {
  line(sb, "#pragma unroll");
  line(sb, "    for (int _uk_q = 0; _uk_q < 4; _uk_q++) {");
  tile_coords(key, across, sb, "      ");
  line(sb, "      if (_uk_r < _uk_shape_0 && _uk_c < _uk_shape_1) {");
}

static void tile_pass_close(uk_strbuf *sb) {
  line(sb, "      }");
  line(sb, "    }");
}

static const char *tile_offset(const uk_ew_kernel *k, int p, char *buf, size_t n) {
  const char *name = param_at(k, p)->name;
  snprintf(buf, n, "(_uk_sidx)_uk_r * _uk_s_%s_0 + (_uk_sidx)_uk_c * _uk_s_%s_1", name, name);
  return buf;
}

/* Shared tiles, the load phase (tiled operands that are read, and direct
 * inputs into registers), the compute phase's offsets and the store phase.
 * Tiles are indexed (position along tile_fast, position across it), padded
 * to 33 so that both passes are free of bank conflicts. */
static void emit_tiled(const uk_ew_kernel *k, const uk_ew_key *key, uk_strbuf *tiles, uk_strbuf *load,
                       uk_strbuf *offsets, uk_strbuf *store) {
  int nin = k->in->count, np = nin + k->out->count, nload = 0, nstore = 0, npre = 0;
  char tb[2], off[300];
  for (int p = 0; p < np; p++) {
    if (!in_loop(k, key, p)) continue;
    const char *name = param_at(k, p)->name;
    if (tiled(key, p)) {
      line(tiles, "  __shared__ ukern::tile<%s, 32, 33> _uk_t_%s;", type_name(k, p, tb), name);
      nload += p < nin || !((k->write_only_mask >> p) & 1);
      nstore += p >= nin;
    } else if (prefetched(k, key, p)) {
      npre++;
    } else {
      line(offsets, "        const _uk_sidx _uk_o_%s = %s;", name, tile_offset(k, p, off, sizeof off));
    }
  }
  if (npre) {
    for (int p = 0; p < nin; p++)
      if (in_loop(k, key, p) && prefetched(k, key, p))
        line(load, "    %s _uk_d_%s[4];", type_name(k, p, tb), param_at(k, p)->name);
    tile_pass_open(key, 0, load);
    for (int p = 0; p < nin; p++)
      if (in_loop(k, key, p) && prefetched(k, key, p))
        line(load, "        _uk_d_%s[_uk_q] = ukern::at(_uk_p_%s, %s);", param_at(k, p)->name, param_at(k, p)->name,
             tile_offset(k, p, off, sizeof off));
    tile_pass_close(load);
  }
  if (nload) {
    tile_pass_open(key, 1, load);
    for (int p = 0; p < np; p++)
      if (in_loop(k, key, p) && tiled(key, p) && (p < nin || !((k->write_only_mask >> p) & 1)))
        line(load, "        _uk_t_%s(_uk_ty + 8 * _uk_q, _uk_tx) = ukern::at(_uk_p_%s, %s);", param_at(k, p)->name,
             param_at(k, p)->name, tile_offset(k, p, off, sizeof off));
    tile_pass_close(load);
    line(load, "    __syncthreads();");
  }
  if (nstore) {
    line(store, "    __syncthreads();");
    tile_pass_open(key, 1, store);
    for (int p = nin; p < np; p++)
      if (in_loop(k, key, p) && tiled(key, p))
        line(store, "        ukern::at(_uk_p_%s, %s) = _uk_t_%s(_uk_ty + 8 * _uk_q, _uk_tx);", param_at(k, p)->name,
             tile_offset(k, p, off, sizeof off), param_at(k, p)->name);
    tile_pass_close(store);
  }
  /* The next tile reuses the shared tiles. */
  if (key->tile_mask) line(store, "    __syncthreads();");
}

uk_status uk__ew_emit(const uk_ew_kernel *k, const uk_ew_key *key, uk_strbuf *src, uk_plan *plan) {
  enum { B_BANNER, B_INCLUDES, B_TYPEDEFS, B_PREAMBLE, B_PARAMS, B_IND, B_HOISTED, B_PREP, B_OFFSETS, B_INDEX,
         B_ELEMS, B_OP, B_STORES, B_AFTER, B_VLOADS, B_VINDEX, B_VELEMS, B_VOP, B_VPUTS, B_VSTORES,
         B_TILES, B_TLOAD, B_COORDS, B_TSTORE, NB };
  uk_strbuf b[NB];
  for (int j = 0; j < NB; j++) uk__sb_init(&b[j]);
  uk_plan pl = {0, NULL, 0};
  uk_status st;
  if ((st = emit_params(k, key, &b[B_PARAMS], &pl)) != UK_OK) goto out;
  emit_banner(k, key, &b[B_BANNER]);
  emit_includes(k, key, &b[B_INCLUDES]);
  uk__emit_typedefs(&b[B_TYPEDEFS], k->in, k->out, &key->p);
  if (b[B_TYPEDEFS].len) uk__sb_addc(&b[B_TYPEDEFS], '\n');
  uk__emit_preamble(&b[B_PREAMBLE], k->preamble);
  if (k->uses_ind_index) {
    /* CONTIG has ndim 0 or 1 here (uk__ew_choose): its extent is the size. */
    int nd = key->variant == UK_EW_STRIDED ? key->ndim : key->ndim ? 1 : 0;
    line(&b[B_IND], "  ukern::ew_indexer<%d> _ind(_uk_size);", nd);
    for (int d = 0; d < nd && key->variant == UK_EW_STRIDED; d++) line(&b[B_IND], "  _ind.shape_[%d] = _uk_shape_%d;", d, d);
  } else if (k->uses_ind) {
    line(&b[B_IND], "  const ukern::ew_index _ind(_uk_size);");
  }
  uk__srcmap_add_code(&b[B_PREP], "loop_prep", k->loop_prep, 1);
  uk__srcmap_add_code(&b[B_AFTER], "after_loop", k->after_loop, 1);
  char vec[8], inner[24];
  snprintf(vec, sizeof vec, "%d", key->vec);
  snprintf(inner, sizeof inner, "_uk_shape_%d", key->ndim > 0 ? key->ndim - 1 : 0);
  /* ROWS: the element's statements sit in one loop, or in the vector's tail loop */
  const char *rind = key->vec > 1 ? "          " : "      ";
  if (key->variant == UK_EW_TILED) {
    if (k->uses_i) line(&b[B_INDEX], "        const long long i = (long long)_uk_r * _uk_shape_1 + _uk_c;");
    uk__srcmap_add_code(&b[B_OP], "operation", k->operation, 1);
    emit_tiled(k, key, &b[B_TILES], &b[B_TLOAD], &b[B_OFFSETS], &b[B_TSTORE]);
    tile_coords(key, 0, &b[B_COORDS], "");
    emit_elements(k, key, ACC_TILED, "        ", &b[B_ELEMS], &b[B_STORES]);
  } else if (key->variant == UK_EW_ROWS) {
    if (k->uses_i) line(&b[B_INDEX], "%sconst long long i = (long long)_uk_row * %s + _uk_j;", rind, inner);
    uk__srcmap_add_code(&b[B_OP], "operation", k->operation, 1);
  } else {
    if (k->uses_i) line(&b[B_INDEX], "    const long long i = (long long)_uk_j;");
    if (k->uses_ind_index) line(&b[B_INDEX], "    _ind.set((ptrdiff_t)_uk_j);");
    uk__srcmap_add_code(&b[B_OP], "operation", k->operation, 1);
  }
  if (key->variant == UK_EW_STRIDED) {
    emit_offsets(k, key, "_uk_j", key->ndim, &b[B_OFFSETS]);
    emit_elements(k, key, ACC_STRIDED, "    ", &b[B_ELEMS], &b[B_STORES]);
  } else if (key->variant == UK_EW_ROWS) {
    emit_offsets(k, key, "_uk_row", key->ndim - 1, &b[B_OFFSETS]);
    emit_hoisted(k, key, &b[B_HOISTED]);
    emit_elements(k, key, ACC_ROWS, rind, &b[B_ELEMS], &b[B_STORES]);
  } else if (key->variant != UK_EW_TILED) {
    emit_hoisted(k, key, &b[B_HOISTED]);
    emit_elements(k, key, ACC_CONTIG, "    ", &b[B_ELEMS], &b[B_STORES]);
  }
  if (key->variant == UK_EW_VEC || (key->variant == UK_EW_ROWS && key->vec > 1)) {
    emit_vec(k, key, &b[B_VLOADS], &b[B_VPUTS], &b[B_VSTORES]);
    if (k->uses_i && key->variant == UK_EW_ROWS)
      line(&b[B_VINDEX], "          const long long i = (long long)_uk_row * %s + _uk_c + _uk_k;", inner);
    else if (k->uses_i)
      line(&b[B_VINDEX], "      const long long i = (long long)_uk_j * %d + _uk_k;", key->vec);
    uk_strbuf unused;
    uk__sb_init(&unused);
    emit_elements(k, key, ACC_VEC, key->variant == UK_EW_ROWS ? "          " : "      ", &b[B_VELEMS], &unused);
    uk__sb_release(&unused);
    uk__srcmap_add_code(&b[B_VOP], "operation", k->operation, 1);
  }
  static const char *const names[NB] = {
      "banner", "includes", "typedefs", "preamble", "params", "ind", "hoisted", "loop_prep", "offsets", "index",
      "elements", "operation", "stores", "after_loop", "vloads", "vindex", "velements", "voperation", "vputs",
      "vstores", "tiles", "tload", "coords", "tstore"};
  const uk_tpl_var extra[] = {{"name", k->name},
                              {"uindex", key->index64 ? "unsigned long long" : "unsigned int"},
                              {"sindex", key->index64 ? "long long" : "int"},
                              {"vec", vec},
                              {"inner", inner}};
  st = uk__emit_expand(uk__ew_template(key), names, b, NB, extra, 5, src);
out:
  return uk__emit_finish(st, k->name, src, b, NB, &pl, plan);
}
