/* The elementwise emitter: from a kernel definition and one specialisation
 * key, the CUDA source (templates/elementwise*.cu) and the plan of the
 * kernel's parameter buffer that the runtime fills at each launch.
 *
 * Every decision lives here, in C; the templates only hold text. The key is
 * also the runtime's specialisation key: two calls with equal keys run the
 * same code. No CUDA headers. */
#ifndef UK_CODEGEN_EW_EMIT_H
#define UK_CODEGEN_EW_EMIT_H

#include <stdint.h>

#include "base/strbuf.h"
#include "codegen/emit_common.h"

typedef enum uk_ew_variant {
  UK_EW_CONTIG = 0, /* merged ndim 0/1, unit or zero strides, one element per step */
  UK_EW_VEC,        /* the same with whole aligned vectors of `vec` elements */
  UK_EW_STRIDED,    /* shape and byte strides per merged axis, div/mod per axis */
  UK_EW_TILED,      /* ndim 2, 32 x 32 tiles: operands in tile_mask go through shared
                       memory so that every operand is read and written coalesced */
  UK_EW_ROWS        /* ndim >= 2 as rows of the innermost axis: threads of a block along a
                       row (2^lanes of them, `vec` elements each), rows across blocks; the
                       outer axes' offsets once per row, no division per element; operands
                       in bcast_mask (inner stride 0) loaded once per row */
} uk_ew_variant;

/* TILED launches exactly this many threads per block (32 x 8). */
#define UK_EW_TILE_THREADS 256

/* A specialisation. Compared with memcmp: fill with memset(0) first. */
typedef struct uk_ew_key {
  uk_key_params p;                 /* dtypes, scalars, textures, raw views */
  uint64_t bcast_mask;             /* CONTIG/VEC: bit k: parameter k has loop stride 0;
                                      ROWS: parameter k has inner-axis stride 0 */
  uint64_t tile_mask;              /* TILED: bit k: parameter k walks memory fastest along
                                      the other axis than tile_fast: staged in shared memory */
  uint8_t variant;                 /* uk_ew_variant */
  uint8_t index64;                 /* 64-bit index arithmetic */
  uint8_t ndim;                    /* merged loop ndim (STRIDED: 1..UK_MAX_NDIM; TILED: 2; ROWS: >= 2) */
  uint8_t vec;                     /* VEC, ROWS: elements per vector (2..16, ROWS: every
                                      operand not in bcast_mask has unit inner stride
                                      and 16-byte aligned rows); else 1 */
  uint8_t tile_fast;               /* TILED: the loop axis (0 or 1) that a warp's 32 lanes walk */
  uint8_t per_thread;              /* the kernel's one_per_thread (uk__ew_grid reads it here) */
  int32_t device;                  /* runtime only; the emitter ignores it */
} uk_ew_key;

/* The fixed parts of a kernel, with what the operation uses (opscan). */
typedef struct uk_ew_kernel {
  const char *name;
  const char *operation, *preamble, *loop_prep, *after_loop; /* NULL = none */
  const uk_paramlist *in, *out;
  uint64_t write_only_mask; /* bit nin+k: output k is only assigned (not loaded) */
  uint64_t raw_view_mask;   /* bit k: `_raw_<name of k>` is used (non-raw params) */
  int uses_i, uses_ind;
  int uses_ind_index; /* _ind beyond _ind.size() (get(), set(), ndim): CuPy's CIndexer, per axis */
  int early_exit;     /* the operation may leave an element early (return, continue, goto; or a
                         macro of the preamble with return/continue, as CuPy's searchsorted):
                         outputs are references into the arrays, written where assigned */
  int one_per_thread; /* loop_prep, after_loop, _ind.get() or a _non_const input: CuPy's loop of
                         one element per thread (no vectors, no tiles, one thread per element) */
  int tile_safe;     /* the operation has no return/break/goto (TILED synchronises the block) */
  int needs_f16;     /* the texts name float16 types: include ukern/half.cuh (with half) */
  int needs_bf16;    /* the texts name bfloat16 types: include ukern/half.cuh (with bfloat16) */
  int needs_complex; /* the texts name complex types: include ukern/complex.cuh */
  int needs_runtime; /* the texts may use CUDA runtime/texture names: compile without -minimal */
} uk_ew_kernel;

/* Fills the masks, uses_*, tile_safe and needs_* from the texts. */
void uk__ew_scan(uk_ew_kernel *k);

/* The plan's slots: uk_slot_kind, then these. */
typedef enum uk_ew_slot_kind {
  UK_EW_SLOT_STRIDE = UK_SLOT_KIND_BASE, /* loop byte stride of `param` on merged axis `dim` (loop operand `op`) */
  UK_EW_SLOT_SHAPE,                      /* loop extent on merged axis `dim` */
  UK_EW_SLOT_SIZE,                       /* loop size */
  UK_EW_SLOT_ROWS,                       /* ROWS: rows (the loop size over the inner extent) */
  UK_EW_SLOT_LANES                       /* ROWS: log2 of the threads along a row (the grid's) */
} uk_ew_slot_kind;

/* Whether parameter p is a loop operand: a non-raw array (not a scalar).
 * Inline: a call tests every parameter. */
static inline int uk__ew_in_loop(const uk_ew_kernel *k, const uk_ew_key *key, int p) {
  return !uk__emit_param(k->in, k->out, p)->is_raw && !uk__key_is_scalar(&key->p, p);
}

/* Loop operands are the non-raw array parameters, inputs then outputs, in
 * parameter order; *op gets parameter k's index among them. 0 when k is not
 * a loop operand. (A walk over every parameter counts them instead.) */
int uk__ew_loop_operand(const uk_ew_kernel *k, const uk_ew_key *key, int param, int *op);

/* The template a key uses ("elementwise.cu", ...), and a short description
 * of the variant ("vectorised x4, 32-bit index, ndim 1") into buf. */
const char *uk__ew_template(const uk_ew_key *key);
const char *uk__ew_describe(const uk_ew_key *key, char *buf, int size);

/* NVRTC options the generated code adds to the user's (NULL-terminated,
 * static): -minimal unless needs_runtime or a texture object is passed. */
const char *const *uk__ew_nvrtc_options(const uk_ew_kernel *k, const uk_ew_key *key);

/* Appends the source to `src` and fills *plan (the caller frees it with
 * uk__plan_free). UK_ERR_INVALID when the parameters exceed the 4 KiB
 * kernel parameter limit; UK_ERR_NOMEM; UK_ERR_INTERNAL for template
 * problems. */
uk_status uk__ew_emit(const uk_ew_kernel *k, const uk_ew_key *key, uk_strbuf *src, uk_plan *plan);

#endif
