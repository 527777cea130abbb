/* What every generated-kernel emitter shares (ew_emit.c, red_emit.c, and
 * any later kind): the per-parameter part of a specialisation key, the plan
 * of the kernel's argument buffer, parameter fields sorted by alignment
 * under CUDA's parameter limit, raw-array fields, the banner, typedefs and
 * the preamble. No CUDA headers. */
#ifndef UK_CODEGEN_EMIT_COMMON_H
#define UK_CODEGEN_EMIT_COMMON_H

#include <stdint.h>

#include "base/strbuf.h"
#include "codegen/bind.h"
#include "codegen/params.h"
#include "codegen/tpl.h"

/* CUDA's kernel parameter limit that holds on every architecture. */
#define UK__PARAM_BYTES_MAX UK_MAX_PARAM_BYTES

/* The per-parameter part of every key (compared with memcmp as part of the
 * kind's key: fill the whole key with memset(0) first). Parameters are
 * numbered inputs first, then outputs. */
typedef struct uk_key_params {
  uint8_t dtype[UK_MAX_PARAMS];    /* resolved dtype per parameter */
  uint8_t raw_ndim[UK_MAX_PARAMS]; /* raw parameter, or a used _raw_<name> view: its own ndim */
  uint64_t scalar_mask;            /* bit k: input k is a scalar */
  uint64_t texture_mask;           /* bit k: input k is a texture object (also in scalar_mask) */
  uint64_t raw_contig_mask;        /* bit k: that raw view is C-contiguous */
} uk_key_params;

/* Slot kinds every kind uses; a kind numbers its own from UK_SLOT_KIND_BASE. */
typedef enum uk_slot_kind {
  UK_SLOT_PTR = 0,    /* data pointer of parameter `param` (8 bytes) */
  UK_SLOT_SCALAR,     /* value of input `param`, converted to its dtype (size bytes) */
  UK_SLOT_RAW_SHAPE,  /* parameter `param`'s own shape[dim] (8 bytes) */
  UK_SLOT_RAW_STRIDE, /* parameter `param`'s own strides[dim] (8 bytes) */
  UK_SLOT_KIND_BASE
} uk_slot_kind;

typedef struct uk_slot {
  uint8_t kind;    /* uk_slot_kind or the kind's own */
  uint8_t size;    /* bytes */
  uint8_t param;
  uint8_t op;      /* index of the operand in its loop */
  uint8_t dim;
  uint16_t offset; /* in the argument buffer */
} uk_slot;

/* The argument buffer of a kernel: slots in offset order, bytes in all. */
typedef struct uk_plan {
  int nslots;
  uk_slot *slots; /* owned */
  size_t bytes;
} uk_plan;

void uk__plan_free(uk_plan *plan);

/* One field of the argument list before layout: `kind` is the slot kind it
 * fills (a raw object: UK_SLOT_RAW_SHAPE), `slots` how many plan slots. */
typedef struct uk_field {
  int kind, param, op, dim;
  int size, align, order, slots;
} uk_field;

/* A growing field list (the emitter knows an upper bound: cap). */
typedef struct uk_fields {
  uk_field *f;
  int n, cap, nslots;
} uk_fields;

uk_status uk__fields_init(uk_fields *fl, int cap);
void uk__fields_free(uk_fields *fl);
void uk__fields_add(uk_fields *fl, int kind, int param, int op, int dim, int size, int align, int slots);
/* The scalar, pointer and raw-object fields of every parameter (kinds
 * UK_SLOT_SCALAR, UK_SLOT_PTR and UK_SLOT_RAW_SHAPE for the raw object). */
void uk__fields_add_params(uk_fields *fl, const uk_paramlist *in, const uk_paramlist *out, const uk_key_params *kp,
                           uint64_t raw_view_mask);
/* Sorts by alignment (largest first, stable), checks the total against
 * UK__PARAM_BYTES_MAX (UK_ERR_INVALID naming the kernel; round_up: the size
 * of a struct, rounded to its largest alignment) and allocates plan->slots. */
uk_status uk__fields_layout(uk_fields *fl, const char *kernel, int round_up, uk_plan *plan);
void uk__plan_add(uk_plan *plan, int kind, int size, int param, int op, int dim, size_t offset);
/* Appends a raw-array declarator ("ukern::raw_array<T, nd, contig> name")
 * to decl and adds its pointer, shape and stride slots at `offset`. */
void uk__emit_raw_field(uk_strbuf *decl, const uk_param *prm, const char *type, const uk_key_params *kp, int param,
                        size_t offset, uk_plan *plan);

/* Parameter p of in ++ out. Inline (like the key tests below): every call
 * asks it per parameter, and a call across files costs more than it. */
static inline const uk_param *uk__emit_param(const uk_paramlist *in, const uk_paramlist *out, int p) {
  return p < in->count ? &in->items[p] : &out->items[p - in->count];
}
/* The parameter's type as written in generated code: its placeholder letter
 * (a typedef; buf holds 2 bytes) or the fixed type's C spelling. */
const char *uk__emit_type(const uk_param *prm, char *buf);
static inline int uk__key_is_scalar(const uk_key_params *kp, int p) {
  return p < 64 && ((kp->scalar_mask >> p) & 1);
}
static inline int uk__key_is_texture(const uk_key_params *kp, int p) {
  return p < 64 && ((kp->texture_mask >> p) & 1);
}
/* A raw array object is passed for raw parameters and used _raw_ views. */
int uk__key_has_raw_object(const uk_param *prm, const uk_key_params *kp, uint64_t raw_view_mask, int p);

/* Bits of the non-raw parameters whose `_raw_<name>` view one of the texts
 * uses (inputs only when inputs_only). */
uint64_t uk__emit_scan_raw_views(const uk_paramlist *in, const uk_paramlist *out, int inputs_only,
                                 const char *const *texts, int ntexts);

/* Appends a line to a block (blocks hold no trailing newline). */
void uk__emit_line(uk_strbuf *sb, const char *fmt, ...) UK__PRINTF(2, 3);
/* "// parameters: T x (float32), ... -> ..." of the banner. raw_ndim_of_views:
 * also describe the raw objects of _raw_ views. */
void uk__emit_banner_params(uk_strbuf *sb, const uk_paramlist *in, const uk_paramlist *out, const uk_key_params *kp,
                            uint64_t raw_view_mask, int raw_ndim_of_views);
/* One "typedef <ctype> <letter>;" line per placeholder (textures skipped). */
void uk__emit_typedefs(uk_strbuf *sb, const uk_paramlist *in, const uk_paramlist *out, const uk_key_params *kp);
/* Expands template `tpl` (embedded) into src with one variable per block
 * (names[j] = the text of blocks[j]) and the extra variables; UK_ERR_NOMEM
 * when a block ran out of memory. At most 48 variables in all. */
uk_status uk__emit_expand(const char *tpl, const char *const *names, const uk_strbuf *blocks, int nblocks,
                          const uk_tpl_var *extra, int nextra, uk_strbuf *src);
/* The end of an emitter: on success (st) the source map is finished
 * (codegen/srcmap.h, `program` names it) and *plan gets pl, else pl is
 * freed; the blocks are released either way. Returns the status. */
uk_status uk__emit_finish(uk_status st, const char *program, uk_strbuf *src, uk_strbuf *blocks, int nblocks,
                          uk_plan *pl, uk_plan *plan);

/* The user's preamble as written (trimmed), newline-terminated, under a
 * #line "preamble" directive (codegen/srcmap.h); nothing when empty. */
void uk__emit_preamble(uk_strbuf *sb, const char *preamble);

/* What kernels written for CuPy see without including anything (CuPy's
 * generated code includes its carray.cuh and complex.cuh): the #include
 * lines of ukern's CuPy headers (templates/cupy/) that the texts need, one
 * per line: <cupy/carray.cuh> for M_* constants, CUPY_FOR and
 * cupy::type_traits, <cupy/complex.cuh> for thrust::complex and friends
 * and a bare complex<T>,
 * <cupy/math_constants.h> for CUDART_*. Nothing when none is named. */
void uk__emit_cupy_includes(uk_strbuf *sb, const char *const *texts, int ntexts);

/* Whether one of the user's texts (NULL entries skipped) may use what NVRTC's
 * -minimal leaves out (texture/surface, device-runtime and driver-API names,
 * or an #include): then the program compiles without -minimal. */
int uk__emit_needs_runtime(const char *const *texts, int ntexts);

/* Which optional device headers the user's texts (NULL entries skipped)
 * name types of: *f16 / *bf16 for ukern/half.cuh, *cx for ukern/complex.cuh.
 * Each is set to 0 or 1. The dtypes add their own (the emitters). */
void uk__emit_scan_type_names(const char *const *texts, int ntexts, int *f16, int *bf16, int *cx);

#endif
