/* What every generated-kernel emitter shares (emit_common.h): parameters, slots, preamble. */
#include "codegen/emit_common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "codegen/dtype.h"
#include "codegen/opscan.h"
#include "codegen/srcmap.h"
#include "codegen/tpl.h"

void uk__plan_free(uk_plan *plan) {
  if (!plan) return;
  free(plan->slots);
  plan->slots = NULL;
  plan->nslots = 0;
  plan->bytes = 0;
}

const char *uk__emit_type(const uk_param *prm, char *buf) {
  if (prm->is_placeholder) {
    buf[0] = prm->placeholder;
    buf[1] = 0;
    return buf;
  }
  return uk__dtype_info(prm->dtype)->ctype;
}


int uk__key_has_raw_object(const uk_param *prm, const uk_key_params *kp, uint64_t raw_view_mask, int p) {
  if (prm->is_raw) return 1;
  return ((raw_view_mask >> p) & 1) && !uk__key_is_scalar(kp, p);
}

uint64_t uk__emit_scan_raw_views(const uk_paramlist *in, const uk_paramlist *out, int inputs_only,
                                 const char *const *texts, int ntexts) {
  uint64_t mask = 0;
  int np = in->count + (inputs_only ? 0 : out->count);
  for (int p = 0; p < np; p++) {
    const uk_param *prm = uk__emit_param(in, out, p);
    if (prm->is_raw) continue;
    char view[300];
    snprintf(view, sizeof view, "_raw_%s", prm->name);
    for (int t = 0; t < ntexts; t++)
      if (uk__opscan_uses(texts[t], view)) mask |= 1ull << p;
  }
  return mask;
}

void uk__emit_line(uk_strbuf *sb, const char *fmt, ...) {
  if (sb->len) uk__sb_addc(sb, '\n');
  va_list ap;
  va_start(ap, fmt);
  uk__sb_vaddf(sb, fmt, ap);
  va_end(ap);
}

/* ------------------------------------------------------------------------ */
/* The argument list                                                         */
/* ------------------------------------------------------------------------ */

uk_status uk__fields_init(uk_fields *fl, int cap) {
  fl->n = fl->nslots = 0;
  fl->cap = cap;
  fl->f = calloc((size_t)cap, sizeof *fl->f);
  return fl->f ? UK_OK : uk__errorf(UK_ERR_NOMEM, "out of memory generating a kernel");
}

void uk__fields_free(uk_fields *fl) {
  free(fl->f);
  fl->f = NULL;
}

void uk__fields_add(uk_fields *fl, int kind, int param, int op, int dim, int size, int align, int slots) {
  if (fl->n == fl->cap) return; /* the emitter's bound is exact; never reached */
  fl->f[fl->n] = (uk_field){kind, param, op, dim, size, align, fl->n, slots};
  fl->n++;
  fl->nslots += slots;
}

void uk__fields_add_params(uk_fields *fl, const uk_paramlist *in, const uk_paramlist *out, const uk_key_params *kp,
                           uint64_t raw_view_mask) {
  int np = in->count + out->count;
  for (int p = 0; p < np; p++) {
    const uk_param *prm = uk__emit_param(in, out, p);
    if (uk__key_is_scalar(kp, p)) {
      const uk_dtype_info *di = uk__dtype_info((uk_dtype)kp->dtype[p]);
      uk__fields_add(fl, UK_SLOT_SCALAR, p, 0, 0, (int)di->size, (int)di->align, 1);
      continue;
    }
    if (!prm->is_raw) uk__fields_add(fl, UK_SLOT_PTR, p, 0, 0, 8, 8, 1);
    if (uk__key_has_raw_object(prm, kp, raw_view_mask, p))
      uk__fields_add(fl, UK_SLOT_RAW_SHAPE, p, 0, 0, 8 + 16 * kp->raw_ndim[p], 8, 1 + 2 * kp->raw_ndim[p]);
  }
}

static int field_cmp(const void *a, const void *b) {
  const uk_field *x = a, *y = b;
  if (x->align != y->align) return y->align - x->align;
  return x->order - y->order;
}

uk_status uk__fields_layout(uk_fields *fl, const char *kernel, int round_up, uk_plan *plan) {
  qsort(fl->f, (size_t)fl->n, sizeof *fl->f, field_cmp);
  size_t bytes = 0, maxalign = 1;
  for (int j = 0; j < fl->n; j++) {
    bytes += (size_t)fl->f[j].size;
    if ((size_t)fl->f[j].align > maxalign) maxalign = (size_t)fl->f[j].align;
  }
  if (round_up) bytes = (bytes + maxalign - 1) / maxalign * maxalign;
  if (bytes > UK__PARAM_BYTES_MAX)
    return uk__errorf(UK_ERR_INVALID, "%s: the kernel's parameters take %zu bytes, more than CUDA's %d "
                      "(UK_MAX_PARAM_BYTES)", kernel, bytes, UK__PARAM_BYTES_MAX);
  plan->slots = calloc((size_t)(fl->nslots > 0 ? fl->nslots : 1), sizeof *plan->slots);
  if (!plan->slots) return uk__errorf(UK_ERR_NOMEM, "out of memory generating a kernel");
  plan->nslots = 0;
  plan->bytes = bytes;
  return UK_OK;
}

void uk__plan_add(uk_plan *plan, int kind, int size, int param, int op, int dim, size_t offset) {
  uk_slot *s = &plan->slots[plan->nslots++];
  s->kind = (uint8_t)kind;
  s->size = (uint8_t)size;
  s->param = (uint8_t)param;
  s->op = (uint8_t)op;
  s->dim = (uint8_t)dim;
  s->offset = (uint16_t)offset;
}

void uk__emit_raw_field(uk_strbuf *decl, const uk_param *prm, const char *type, const uk_key_params *kp, int param,
                        size_t offset, uk_plan *plan) {
  int rnd = kp->raw_ndim[param];
  int contig = (int)((kp->raw_contig_mask >> param) & 1);
  /* Not const even for inputs: CuPy's raw views are writable arrays. */
  uk__sb_addf(decl, "ukern::raw_array<%s, %d, %s> %s%s", type, rnd, contig ? "true" : "false",
              prm->is_raw ? "" : "_raw_", prm->name);
  uk__plan_add(plan, UK_SLOT_PTR, 8, param, 0, 0, offset);
  for (int d = 0; d < rnd; d++) uk__plan_add(plan, UK_SLOT_RAW_SHAPE, 8, param, 0, d, offset + 8 + 8 * (size_t)d);
  for (int d = 0; d < rnd; d++)
    uk__plan_add(plan, UK_SLOT_RAW_STRIDE, 8, param, 0, d, offset + 8 + 8 * (size_t)(rnd + d));
}

/* ------------------------------------------------------------------------ */
/* Banner, typedefs, preamble                                                */
/* ------------------------------------------------------------------------ */

void uk__emit_banner_params(uk_strbuf *sb, const uk_paramlist *in, const uk_paramlist *out, const uk_key_params *kp,
                            uint64_t raw_view_mask, int raw_ndim_of_views) {
  int nin = in->count, np = nin + out->count;
  uk__sb_add(sb, "// parameters:");
  for (int p = 0; p < np; p++) {
    const uk_param *prm = uk__emit_param(in, out, p);
    const char *dn = uk_dtype_name((uk_dtype)kp->dtype[p]);
    char tb[2];
    uk__sb_addf(sb, "%s%s%s %s (%s", p == nin ? " ->" : p ? "," : "", prm->is_raw ? " raw " : " ",
                prm->is_placeholder ? uk__emit_type(prm, tb) : dn, prm->name, dn);
    if (uk__key_is_texture(kp, p)) uk__sb_add(sb, ", texture object");
    else if (uk__key_is_scalar(kp, p)) uk__sb_add(sb, ", scalar");
    if (!uk__key_is_scalar(kp, p) &&
        (raw_ndim_of_views ? uk__key_has_raw_object(prm, kp, raw_view_mask, p) : prm->is_raw))
      uk__sb_addf(sb, ", ndim %d%s", kp->raw_ndim[p], (kp->raw_contig_mask >> p) & 1 ? ", contiguous" : "");
    uk__sb_add(sb, ")");
  }
  if (nin == np) uk__sb_add(sb, " ->");
}

void uk__emit_typedefs(uk_strbuf *sb, const uk_paramlist *in, const uk_paramlist *out, const uk_key_params *kp) {
  int np = in->count + out->count;
  char seen[64] = {0};
  for (int p = 0; p < np; p++) {
    const uk_param *prm = uk__emit_param(in, out, p);
    int slot = uk__bind_slot(prm->placeholder);
    if (!prm->is_placeholder || slot < 0 || seen[slot] || uk__key_is_texture(kp, p)) continue;
    seen[slot] = 1;
    uk__emit_line(sb, "typedef %s %c;", uk__dtype_info((uk_dtype)kp->dtype[p])->ctype, prm->placeholder);
  }
}

void uk__emit_preamble(uk_strbuf *sb, const char *preamble) {
  size_t before = sb->len;
  uk__srcmap_add_code(sb, "preamble", preamble, 0); /* mapped: errors say preamble:L:C */
  if (sb->len > before) uk__sb_add(sb, "\n");
}

uk_status uk__emit_expand(const char *tpl, const char *const *names, const uk_strbuf *blocks, int nblocks,
                          const uk_tpl_var *extra, int nextra, uk_strbuf *src) {
  uk_tpl_var vars[48];
  if (nblocks + nextra > 48) return uk__errorf(UK_ERR_INTERNAL, "%s: too many template variables", tpl);
  for (int j = 0; j < nblocks; j++) {
    if (blocks[j].failed) return uk__errorf(UK_ERR_NOMEM, "out of memory generating a kernel");
    vars[j] = (uk_tpl_var){names[j], uk__sb_str(&blocks[j])};
  }
  for (int j = 0; j < nextra; j++) vars[nblocks + j] = extra[j];
  return uk__tpl_expand_embedded(tpl, vars, nblocks + nextra, src);
}

uk_status uk__emit_finish(uk_status st, const char *program, uk_strbuf *src, uk_strbuf *blocks, int nblocks,
                          uk_plan *pl, uk_plan *plan) {
  if (st == UK_OK) st = uk__srcmap_finish(src, program);
  for (int j = 0; j < nblocks; j++) uk__sb_release(&blocks[j]);
  if (st == UK_OK) *plan = *pl;
  else uk__plan_free(pl);
  return st;
}

void uk__emit_cupy_includes(uk_strbuf *sb, const char *const *texts, int ntexts) {
  int carray = 0, thrust = 0, consts = 0;
  for (int t = 0; t < ntexts; t++) {
    carray |= uk__opscan_mentions(texts[t], "M_") || uk__opscan_mentions(texts[t], "CUPY_") ||
              uk__opscan_mentions(texts[t], "cupy");
    thrust |= uk__opscan_mentions(texts[t], "thrust") || uk__opscan_uses(texts[t], "complex");
    consts |= uk__opscan_mentions(texts[t], "CUDART_");
  }
  if (carray) uk__emit_line(sb, "#include <cupy/carray.cuh>");
  if (thrust) uk__emit_line(sb, "#include <cupy/complex.cuh>");
  if (consts) uk__emit_line(sb, "#include <cupy/math_constants.h>");
}

int uk__emit_needs_runtime(const char *const *texts, int ntexts) {
  static const char *const names[] = {"cuda", "tex", "surf", "CU", "__nv", "include"};
  for (int t = 0; t < ntexts; t++)
    for (size_t j = 0; j < sizeof names / sizeof *names; j++)
      if (uk__opscan_mentions(texts[t], names[j])) return 1;
  return 0;
}

void uk__emit_scan_type_names(const char *const *texts, int ntexts, int *f16, int *bf16, int *cx) {
  static const char *const f16_names[] = {"half", "__half", "uk_float16"};
  static const char *const bf16_names[] = {"bfloat", "__nv_bfloat", "uk_bfloat16"};
  static const char *const complex_names[] = {"complex", "uk_complex"};
  *f16 = *bf16 = *cx = 0;
  for (int t = 0; t < ntexts; t++) {
    for (size_t j = 0; j < sizeof f16_names / sizeof *f16_names; j++)
      *f16 |= uk__opscan_mentions(texts[t], f16_names[j]);
    for (size_t j = 0; j < sizeof bf16_names / sizeof *bf16_names; j++)
      *bf16 |= uk__opscan_mentions(texts[t], bf16_names[j]);
    for (size_t j = 0; j < sizeof complex_names / sizeof *complex_names; j++)
      *cx |= uk__opscan_mentions(texts[t], complex_names[j]);
  }
}
