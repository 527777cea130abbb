/* The dtype table: NumPy names and aliases, sizes, C spellings, kinds. */
#ifndef UK_CODEGEN_DTYPE_H
#define UK_CODEGEN_DTYPE_H

#include "ukern/ukern.h"

typedef enum uk_dtype_kind { UK_KIND_BOOL, UK_KIND_INT, UK_KIND_UINT, UK_KIND_FLOAT, UK_KIND_COMPLEX } uk_dtype_kind;

typedef struct uk_dtype_info {
  uk_dtype dtype;
  const char *name;   /* canonical NumPy name */
  const char *ctype;  /* spelling in generated CUDA */
  size_t size;
  size_t align;
  uk_dtype_kind kind;
} uk_dtype_info;

/* Row of a valid dtype; NULL otherwise. */
const uk_dtype_info *uk__dtype_info(uk_dtype t);
/* uk_dtype_size, inline: a call asks it per operand, and the public
 * function is a call across files. */
extern const uk_dtype_info uk__dtype_table[UK_DTYPE_COUNT_];
static inline size_t uk__dtype_size(uk_dtype t) {
  return (unsigned)t < UK_DTYPE_COUNT_ ? uk__dtype_table[t].size : 0;
}
/* Looks a name or alias up without setting an error: 1 found, 0 not. */
int uk__dtype_lookup(const char *name, size_t len, uk_dtype *out);
/* The C type of a type written as a NumPy name or code that no C type
 * spells (float32, int64, f4, i8, c16, bf16, ...; white space around it
 * ignored); NULL for anything else, which is C text: float, double, int,
 * long, half and bool keep their C meaning, as in CuPy's reduce_type. */
const char *uk__dtype_ctype_for(const char *text);
/* Closest known name to an unknown one (for hints); static storage. */
const char *uk__dtype_suggest(const char *name, size_t len);

#endif
