#include "codegen/ew_emit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/embedded.h"
#include "base/error.h"
#include "codegen/dtype.h"
#include "codegen/opscan.h"
#include "codegen/tpl.h"

/* CUDA's kernel parameter limit that holds on every architecture. */
#define PARAM_LIMIT 4096

/* ------------------------------------------------------------------------ */
/* What the operation uses                                                   */
/* ------------------------------------------------------------------------ */

void uk__ew_scan(uk_ew_kernel *k) {
  int nin = k->in->count, nout = k->out->count;
  k->write_only_mask = 0;
  k->raw_view_mask = 0;
  for (int p = 0; p < nin + nout; p++) {
    const uk_param *prm = p < nin ? &k->in->items[p] : &k->out->items[p - nin];
    if (p >= nin && !prm->is_raw && uk__opscan_write_only_with(k->operation, k->preamble, prm->name))
      k->write_only_mask |= 1ull << p;
    if (prm->is_raw) continue;
    char view[300];
    snprintf(view, sizeof view, "_raw_%s", prm->name);
    if (uk__opscan_uses(k->operation, view) || uk__opscan_uses(k->loop_prep, view) ||
        uk__opscan_uses(k->after_loop, view))
      k->raw_view_mask |= 1ull << p;
  }
  k->uses_i = uk__opscan_uses(k->operation, "i");
  k->uses_ind = uk__opscan_uses(k->operation, "_ind") || uk__opscan_uses(k->loop_prep, "_ind") ||
                uk__opscan_uses(k->after_loop, "_ind");
  /* A tile's threads meet at barriers: an operation that leaves the loop
   * early (or syncs itself) keeps the plain strided loop. */
  k->tile_safe = !uk__opscan_uses(k->operation, "return") && !uk__opscan_uses(k->operation, "break") &&
                 !uk__opscan_uses(k->operation, "goto") && !uk__opscan_mentions(k->operation, "__sync");
  const char *texts[4] = {k->operation, k->preamble, k->loop_prep, k->after_loop};
  static const char *const half_names[] = {"half", "bfloat", "__half", "__nv_bfloat"};
  static const char *const complex_names[] = {"complex", "uk_complex"};
  static const char *const runtime_names[] = {"cuda", "tex", "surf", "CU", "__nv", "include"};
  k->needs_half = k->needs_complex = k->needs_runtime = 0;
  for (int t = 0; t < 4; t++) {
    for (size_t j = 0; j < sizeof half_names / sizeof *half_names; j++)
      k->needs_half |= uk__opscan_mentions(texts[t], half_names[j]);
    for (size_t j = 0; j < sizeof complex_names / sizeof *complex_names; j++)
      k->needs_complex |= uk__opscan_mentions(texts[t], complex_names[j]);
    for (size_t j = 0; j < sizeof runtime_names / sizeof *runtime_names; j++)
      k->needs_runtime |= uk__opscan_mentions(texts[t], runtime_names[j]);
  }
}

const char *const *uk__ew_nvrtc_options(const uk_ew_kernel *k, const uk_ew_key *key) {
  /* -minimal drops texture/surface, device-runtime and driver-API types from
   * NVRTC's implicit headers: ~1 ms of every compile. */
  static const char *const minimal[] = {"-minimal", NULL};
  static const char *const none[] = {NULL};
  return k->needs_runtime || key->texture_mask ? none : minimal;
}


/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

static const uk_param *param_at(const uk_ew_kernel *k, int p) {
  return p < k->in->count ? &k->in->items[p] : &k->out->items[p - k->in->count];
}

static int is_scalar(const uk_ew_key *key, int p) { return p < 64 && ((key->scalar_mask >> p) & 1); }
static int is_texture(const uk_ew_key *key, int p) { return p < 64 && ((key->texture_mask >> p) & 1); }

/* An array walked by the loop: not raw, not a scalar. */
static int in_loop(const uk_ew_kernel *k, const uk_ew_key *key, int p) {
  return !param_at(k, p)->is_raw && !is_scalar(key, p);
}

int uk__ew_loop_operand(const uk_ew_kernel *k, const uk_ew_key *key, int param, int *op) {
  if (!in_loop(k, key, param)) return 0;
  int n = 0;
  for (int p = 0; p < param; p++) n += in_loop(k, key, p);
  *op = n;
  return 1;
}

/* A raw array object is passed for raw parameters and used _raw_ views. */
static int has_raw_object(const uk_ew_kernel *k, const uk_ew_key *key, int p) {
  if (param_at(k, p)->is_raw) return 1;
  return ((k->raw_view_mask >> p) & 1) && !is_scalar(key, p);
}

/* The parameter's type as written in generated code: its placeholder
 * letter (a typedef) or the fixed type's C spelling. */
static const char *type_name(const uk_ew_kernel *k, int p, char *buf) {
  const uk_param *prm = param_at(k, p);
  if (prm->is_placeholder) {
    buf[0] = prm->placeholder;
    buf[1] = 0;
    return buf;
  }
  return uk__dtype_info(prm->dtype)->ctype;
}

static const char *dname(const uk_ew_key *key, int p) { return uk_dtype_name((uk_dtype)key->dtype[p]); }

const char *uk__ew_template(const uk_ew_key *key) {
  switch (key->variant) {
  case UK_EW_VEC: return "elementwise_vec.cu";
  case UK_EW_CONTIG: return "elementwise_contig.cu";
  case UK_EW_TILED: return "elementwise_tile.cu";
  default: return "elementwise.cu";
  }
}

const char *uk__ew_describe(const uk_ew_key *key, char *buf, int size) {
  const char *w = key->index64 ? "64-bit index" : "32-bit index";
  if (key->variant == UK_EW_VEC)
    snprintf(buf, (size_t)size, "vectorised x%d, %s, ndim %d", key->vec, w, key->ndim);
  else if (key->variant == UK_EW_TILED)
    snprintf(buf, (size_t)size, "tiled 32x32, lanes along axis %d, %s, ndim %d", key->tile_fast, w, key->ndim);
  else
    snprintf(buf, (size_t)size, "%s, %s, ndim %d", key->variant == UK_EW_CONTIG ? "contiguous" : "strided", w,
             key->ndim);
  return buf;
}

/* Appends a line to a block (blocks hold no trailing newline). */
static void line(uk_strbuf *sb, const char *fmt, ...) UK__PRINTF(2, 3);
static void line(uk_strbuf *sb, const char *fmt, ...) {
  if (sb->len) uk__sb_addc(sb, '\n');
  va_list ap;
  va_start(ap, fmt);
  uk__sb_vaddf(sb, fmt, ap);
  va_end(ap);
}

/* ------------------------------------------------------------------------ */
/* Kernel parameters                                                         */
/* ------------------------------------------------------------------------ */

typedef enum { E_SCALAR, E_PTR, E_RAW, E_STRIDE, E_SHAPE, E_SIZE } ekind;

typedef struct {
  ekind kind;
  int param, op, dim;
  int size, align;
  int order; /* emission order before sorting, for a stable sort */
} entry;

static int entry_cmp(const void *a, const void *b) {
  const entry *x = a, *y = b;
  if (x->align != y->align) return y->align - x->align;
  return x->order - y->order;
}

static void add_slot(uk_ew_plan *plan, uk_ew_slot_kind kind, int size, int param, int op, int dim,
                     size_t offset) {
  uk_ew_slot *s = &plan->slots[plan->nslots++];
  s->kind = (uint8_t)kind;
  s->size = (uint8_t)size;
  s->param = (uint8_t)param;
  s->op = (uint8_t)op;
  s->dim = (uint8_t)dim;
  s->offset = (uint16_t)offset;
}

/* Lists the parameters, sorts them by alignment, writes their declarations
 * and the plan. */
static uk_status emit_params(const uk_ew_kernel *k, const uk_ew_key *key, uk_strbuf *decl, uk_ew_plan *plan) {
  int np = k->in->count + k->out->count;
  int nd = key->variant == UK_EW_STRIDED || key->variant == UK_EW_TILED ? key->ndim : 0;
  int isz = key->index64 ? 8 : 4;
  int cap = 2 * np + np * nd + nd + 1, n = 0, nslots = 0;
  entry *e = calloc((size_t)cap, sizeof *e);
  if (!e) return uk__errorf(UK_ERR_NOMEM, "out of memory generating a kernel");
  for (int p = 0; p < np; p++) {
    const uk_param *prm = param_at(k, p);
    if (is_scalar(key, p)) {
      const uk_dtype_info *di = uk__dtype_info((uk_dtype)key->dtype[p]);
      e[n] = (entry){E_SCALAR, p, 0, 0, (int)di->size, (int)di->align, n};
      n++;
      nslots++;
      continue;
    }
    if (!prm->is_raw) {
      e[n] = (entry){E_PTR, p, 0, 0, 8, 8, n};
      n++;
      nslots++;
    }
    if (has_raw_object(k, key, p)) {
      e[n] = (entry){E_RAW, p, 0, 0, 8 + 16 * key->raw_ndim[p], 8, n};
      n++;
      nslots += 1 + 2 * key->raw_ndim[p];
    }
  }
  for (int p = 0, op = 0; p < np && nd; p++) {
    if (!in_loop(k, key, p)) continue;
    for (int d = 0; d < nd; d++, n++) e[n] = (entry){E_STRIDE, p, op, d, isz, isz, n};
    nslots += nd;
    op++;
  }
  for (int d = 0; d < nd; d++, n++, nslots++) e[n] = (entry){E_SHAPE, 0, 0, d, isz, isz, n};
  e[n] = (entry){E_SIZE, 0, 0, 0, isz, isz, n};
  n++;
  nslots++;
  qsort(e, (size_t)n, sizeof *e, entry_cmp);

  uk_status st = UK_OK;
  size_t off = 0;
  for (int j = 0; j < n; j++) off += (size_t)e[j].size;
  if (off > PARAM_LIMIT) {
    st = uk__errorf(UK_ERR_INVALID, "%s: the kernel's parameters take %zu bytes, more than CUDA's %d", k->name,
                    off, PARAM_LIMIT);
    goto out;
  }
  plan->slots = calloc((size_t)nslots, sizeof *plan->slots);
  if (!plan->slots) {
    st = uk__errorf(UK_ERR_NOMEM, "out of memory generating a kernel");
    goto out;
  }
  plan->nslots = 0;
  const char *ut = key->index64 ? "unsigned long long" : "unsigned int";
  const char *st_ = key->index64 ? "long long" : "int";
  off = 0;
  for (int j = 0; j < n; j++) {
    char tb[2];
    const entry *x = &e[j];
    const uk_param *prm = param_at(k, x->param);
    const char *t = type_name(k, x->param, tb);
    int is_in = x->param < k->in->count;
    uk__sb_addf(decl, "\n    ");
    switch (x->kind) {
    case E_SCALAR:
      uk__sb_addf(decl, "const %s %s", is_texture(key, x->param) ? "cudaTextureObject_t" : t, prm->name);
      add_slot(plan, UK_EW_SLOT_SCALAR, x->size, x->param, 0, 0, off);
      break;
    case E_PTR:
      uk__sb_addf(decl, "%s%s* _uk_p_%s", is_in ? "const " : "", t, prm->name);
      add_slot(plan, UK_EW_SLOT_PTR, 8, x->param, 0, 0, off);
      break;
    case E_RAW: {
      int rnd = key->raw_ndim[x->param];
      int contig = (int)((key->raw_contig_mask >> x->param) & 1);
      /* Not const even for inputs: CuPy's raw views are writable arrays. */
      uk__sb_addf(decl, "ukern::raw_array<%s, %d, %s> %s%s", t, rnd, contig ? "true" : "false",
                  prm->is_raw ? "" : "_raw_", prm->name);
      add_slot(plan, UK_EW_SLOT_PTR, 8, x->param, 0, 0, off);
      for (int d = 0; d < rnd; d++) add_slot(plan, UK_EW_SLOT_RAW_SHAPE, 8, x->param, 0, d, off + 8 + 8 * (size_t)d);
      for (int d = 0; d < rnd; d++)
        add_slot(plan, UK_EW_SLOT_RAW_STRIDE, 8, x->param, 0, d, off + 8 + 8 * (size_t)(rnd + d));
      break;
    }
    case E_STRIDE:
      uk__sb_addf(decl, "%s _uk_s_%s_%d", st_, prm->name, x->dim);
      add_slot(plan, UK_EW_SLOT_STRIDE, x->size, x->param, x->op, x->dim, off);
      break;
    case E_SHAPE:
      uk__sb_addf(decl, "%s _uk_shape_%d", ut, x->dim);
      add_slot(plan, UK_EW_SLOT_SHAPE, x->size, 0, 0, x->dim, off);
      break;
    case E_SIZE:
      uk__sb_addf(decl, "%s _uk_size", ut);
      add_slot(plan, UK_EW_SLOT_SIZE, x->size, 0, 0, 0, off);
      break;
    }
    if (j + 1 < n) uk__sb_addc(decl, ',');
    off += (size_t)x->size;
  }
  plan->bytes = off;
out:
  free(e);
  return st;
}

/* ------------------------------------------------------------------------ */
/* The source                                                                */
/* ------------------------------------------------------------------------ */

static void emit_banner(const uk_ew_kernel *k, const uk_ew_key *key, uk_strbuf *sb) {
  char desc[96];
  int np = k->in->count + k->out->count;
  uk__sb_addf(sb, "// ukern elementwise kernel '%s' (template %s)\n", k->name, uk__ew_template(key));
  uk__sb_add(sb, "// parameters:");
  for (int p = 0; p < np; p++) {
    const uk_param *prm = param_at(k, p);
    char tb[2];
    uk__sb_addf(sb, "%s%s%s %s (%s", p == k->in->count ? " ->" : p ? "," : "", prm->is_raw ? " raw " : " ",
                prm->is_placeholder ? type_name(k, p, tb) : dname(key, p), prm->name, dname(key, p));
    if (is_texture(key, p)) uk__sb_add(sb, ", texture object");
    else if (is_scalar(key, p)) uk__sb_add(sb, ", scalar");
    if (prm->is_raw)
      uk__sb_addf(sb, ", ndim %d%s", key->raw_ndim[p], (key->raw_contig_mask >> p) & 1 ? ", contiguous" : "");
    uk__sb_add(sb, ")");
  }
  if (k->in->count == np) uk__sb_add(sb, " ->");
  uk__sb_addf(sb, "\n// variant: %s", uk__ew_describe(key, desc, sizeof desc));
}

static void emit_typedefs(const uk_ew_kernel *k, const uk_ew_key *key, uk_strbuf *sb) {
  int np = k->in->count + k->out->count;
  char seen[64] = {0};
  for (int p = 0; p < np; p++) {
    const uk_param *prm = param_at(k, p);
    int slot = uk__bind_slot(prm->placeholder);
    if (!prm->is_placeholder || slot < 0 || seen[slot] || is_texture(key, p)) continue;
    seen[slot] = 1;
    uk__sb_addf(sb, "typedef %s %c;\n", uk__dtype_info((uk_dtype)key->dtype[p])->ctype, prm->placeholder);
  }
}

/* The includes the dtypes and the user's text need: the core always. */
static void emit_includes(const uk_ew_kernel *k, const uk_ew_key *key, uk_strbuf *sb) {
  int half = k->needs_half, cx = k->needs_complex, np = k->in->count + k->out->count;
  for (int p = 0; p < np; p++) {
    uk_dtype t = (uk_dtype)key->dtype[p];
    half |= t == UK_FLOAT16 || t == UK_BFLOAT16;
    cx |= t == UK_COMPLEX64 || t == UK_COMPLEX128;
  }
  if (cx) line(sb, "#include <ukern/complex.cuh>");
  line(sb, "#include <ukern/ew_core.cuh>");
  if (half) line(sb, "#include <ukern/half.cuh>");
}

/* The per-element declarations and stores of the scalar loops. `element`
 * formats parameter p's element access into buf. */
typedef enum { ACC_CONTIG, ACC_STRIDED, ACC_VEC, ACC_TILED } access;

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
    if (p < nin) {
      line(elems, "%sconst %s %s = %s;", ind, t, name, acc);
    } else {
      if ((k->write_only_mask >> p) & 1) line(elems, "%s%s %s;", ind, t, name);
      else line(elems, "%s%s %s = %s;", ind, t, name, acc);
      line(stores, "%s%s = %s;", ind, acc, name);
    }
  }
}

/* Broadcast (stride 0) inputs of the contiguous variants, loaded once. */
static void emit_hoisted(const uk_ew_kernel *k, const uk_ew_key *key, uk_strbuf *sb) {
  for (int p = 0; p < k->in->count; p++) {
    if (!in_loop(k, key, p) || !((key->bcast_mask >> p) & 1)) continue;
    char tb[2];
    const char *name = param_at(k, p)->name;
    line(sb, "  const %s _uk_b_%s = *_uk_p_%s;", type_name(k, p, tb), name, name);
  }
}

/* Flat index -> per-operand byte offsets, one div/mod per merged axis but
 * the outermost. */
static void emit_offsets(const uk_ew_kernel *k, const uk_ew_key *key, uk_strbuf *sb) {
  int nd = key->ndim, np = k->in->count + k->out->count;
  if (nd > 1) line(sb, "    _uk_uidx _uk_r = _uk_j;");
  for (int d = nd - 1; d > 0; d--) {
    line(sb, "    const _uk_uidx _uk_c%d = _uk_r %% _uk_shape_%d;", d, d);
    line(sb, "    _uk_r /= _uk_shape_%d;", d);
  }
  for (int p = 0; p < np; p++) {
    if (!in_loop(k, key, p)) continue;
    const char *name = param_at(k, p)->name;
    line(sb, "    const _uk_sidx _uk_o_%s = (_uk_sidx)%s * _uk_s_%s_0", name, nd > 1 ? "_uk_r" : "_uk_j", name);
    for (int d = 1; d < nd; d++) uk__sb_addf(sb, " + (_uk_sidx)_uk_c%d * _uk_s_%s_%d", d, name, d);
    uk__sb_addc(sb, ';');
  }
}

static void emit_vec(const uk_ew_kernel *k, const uk_ew_key *key, uk_strbuf *loads, uk_strbuf *puts,
                     uk_strbuf *stores) {
  int nin = k->in->count, np = nin + k->out->count, v = key->vec;
  for (int p = 0; p < np; p++) {
    if (!in_loop(k, key, p) || ((key->bcast_mask >> p) & 1)) continue;
    char tb[2];
    const char *t = type_name(k, p, tb), *name = param_at(k, p)->name;
    if (p < nin)
      line(loads, "    const ukern::vec<%s, %d> _uk_v_%s = ukern::vload<%d>(_uk_p_%s + _uk_j * %d);", t, v, name, v,
           name, v);
    else if ((k->write_only_mask >> p) & 1)
      line(loads, "    ukern::vec<%s, %d> _uk_v_%s;", t, v, name);
    else
      line(loads, "    ukern::vec<%s, %d> _uk_v_%s = ukern::vload<%d>(_uk_p_%s + _uk_j * %d);", t, v, name, v, name,
           v);
    if (p >= nin) {
      line(puts, "      _uk_v_%s[_uk_k] = %s;", name, name);
      line(stores, "    ukern::vstore<%d>(_uk_p_%s + _uk_j * %d, _uk_v_%s);", v, name, v, name);
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

uk_status uk__ew_emit(const uk_ew_kernel *k, const uk_ew_key *key, uk_strbuf *src, uk_ew_plan *plan) {
  enum { B_BANNER, B_INCLUDES, B_TYPEDEFS, B_PREAMBLE, B_PARAMS, B_IND, B_HOISTED, B_PREP, B_OFFSETS, B_INDEX,
         B_ELEMS, B_OP, B_STORES, B_AFTER, B_VLOADS, B_VINDEX, B_VELEMS, B_VOP, B_VPUTS, B_VSTORES,
         B_TILES, B_TLOAD, B_COORDS, B_TSTORE, NB };
  uk_strbuf b[NB];
  for (int j = 0; j < NB; j++) uk__sb_init(&b[j]);
  uk_ew_plan pl = {0, NULL, 0};
  uk_status st;
  if ((st = emit_params(k, key, &b[B_PARAMS], &pl)) != UK_OK) goto out;
  emit_banner(k, key, &b[B_BANNER]);
  emit_includes(k, key, &b[B_INCLUDES]);
  emit_typedefs(k, key, &b[B_TYPEDEFS]);
  uk__tpl_add_code(&b[B_PREAMBLE], k->preamble, "", 0);
  if (b[B_PREAMBLE].len) uk__sb_add(&b[B_PREAMBLE], "\n");
  if (k->uses_ind) line(&b[B_IND], "  const ukern::ew_index _ind(_uk_size);");
  uk__tpl_add_code(&b[B_PREP], k->loop_prep, "  ", 1);
  uk__tpl_add_code(&b[B_AFTER], k->after_loop, "  ", 1);
  char vec[8];
  snprintf(vec, sizeof vec, "%d", key->vec);
  if (key->variant == UK_EW_TILED) {
    if (k->uses_i) line(&b[B_INDEX], "        const long long i = (long long)_uk_r * _uk_shape_1 + _uk_c;");
    uk__tpl_add_code(&b[B_OP], k->operation, "        ", 1);
    emit_tiled(k, key, &b[B_TILES], &b[B_TLOAD], &b[B_OFFSETS], &b[B_TSTORE]);
    tile_coords(key, 0, &b[B_COORDS], "");
    emit_elements(k, key, ACC_TILED, "        ", &b[B_ELEMS], &b[B_STORES]);
  } else {
    if (k->uses_i) line(&b[B_INDEX], "    const long long i = (long long)_uk_j;");
    uk__tpl_add_code(&b[B_OP], k->operation, "    ", 1);
  }
  if (key->variant == UK_EW_STRIDED) {
    emit_offsets(k, key, &b[B_OFFSETS]);
    emit_elements(k, key, ACC_STRIDED, "    ", &b[B_ELEMS], &b[B_STORES]);
  } else if (key->variant != UK_EW_TILED) {
    emit_hoisted(k, key, &b[B_HOISTED]);
    emit_elements(k, key, ACC_CONTIG, "    ", &b[B_ELEMS], &b[B_STORES]);
  }
  if (key->variant == UK_EW_VEC) {
    emit_vec(k, key, &b[B_VLOADS], &b[B_VPUTS], &b[B_VSTORES]);
    if (k->uses_i) line(&b[B_VINDEX], "      const long long i = (long long)_uk_j * %d + _uk_k;", key->vec);
    uk_strbuf unused;
    uk__sb_init(&unused);
    emit_elements(k, key, ACC_VEC, "      ", &b[B_VELEMS], &unused);
    uk__sb_release(&unused);
    uk__tpl_add_code(&b[B_VOP], k->operation, "      ", 1);
  }
  for (int j = 0; j < NB; j++)
    if (b[j].failed) {
      st = uk__errorf(UK_ERR_NOMEM, "out of memory generating a kernel");
      goto out;
    }
  const uk_tpl_var vars[] = {
      {"banner", uk__sb_str(&b[B_BANNER])},
      {"includes", uk__sb_str(&b[B_INCLUDES])},
      {"typedefs", uk__sb_str(&b[B_TYPEDEFS])},
      {"preamble", uk__sb_str(&b[B_PREAMBLE])},
      {"name", k->name},
      {"params", uk__sb_str(&b[B_PARAMS])},
      {"uindex", key->index64 ? "unsigned long long" : "unsigned int"},
      {"sindex", key->index64 ? "long long" : "int"},
      {"vec", vec},
      {"ind", uk__sb_str(&b[B_IND])},
      {"hoisted", uk__sb_str(&b[B_HOISTED])},
      {"loop_prep", uk__sb_str(&b[B_PREP])},
      {"offsets", uk__sb_str(&b[B_OFFSETS])},
      {"index", uk__sb_str(&b[B_INDEX])},
      {"elements", uk__sb_str(&b[B_ELEMS])},
      {"operation", uk__sb_str(&b[B_OP])},
      {"stores", uk__sb_str(&b[B_STORES])},
      {"after_loop", uk__sb_str(&b[B_AFTER])},
      {"vloads", uk__sb_str(&b[B_VLOADS])},
      {"vindex", uk__sb_str(&b[B_VINDEX])},
      {"velements", uk__sb_str(&b[B_VELEMS])},
      {"voperation", uk__sb_str(&b[B_VOP])},
      {"vputs", uk__sb_str(&b[B_VPUTS])},
      {"vstores", uk__sb_str(&b[B_VSTORES])},
      {"tiles", uk__sb_str(&b[B_TILES])},
      {"tload", uk__sb_str(&b[B_TLOAD])},
      {"coords", uk__sb_str(&b[B_COORDS])},
      {"tstore", uk__sb_str(&b[B_TSTORE])},
  };
  st = uk__tpl_expand_embedded(uk__ew_template(key), vars, (int)(sizeof vars / sizeof vars[0]), src);
out:
  for (int j = 0; j < NB; j++) uk__sb_release(&b[j]);
  if (st == UK_OK) *plan = pl;
  else uk__ew_plan_free(&pl);
  return st;
}

void uk__ew_plan_free(uk_ew_plan *plan) {
  if (!plan) return;
  free(plan->slots);
  plan->slots = NULL;
  plan->nslots = 0;
  plan->bytes = 0;
}
