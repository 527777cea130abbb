/* Parser for C kernel parameter lists, as given to uk_function_set_signature:
 *   "const float* x, float* __restrict__ y, long long n, ukern::complex<float> a"
 *
 * Grammar (white space separates tokens):
 *   params := "" | "void" | param ("," param)*
 *   param  := (qualifier | specifier)+ ("*" qualifier*)* [name]
 *   qualifier: const, volatile, __restrict__, restrict, __restrict
 *   specifier: signed unsigned char short int long bool float double void,
 *              in any order ("long unsigned int long"), or one type name:
 *              [::]a::b<...> (template arguments kept, spacing normalised)
 *              or struct/class/union/enum X
 * Any number of '*' makes the parameter a pointer (8 bytes), whatever the
 * base type (a pointer to a struct is fine). By value, only the types listed
 * for uk_function_set_signature are known (char is signed, long is 64-bit).
 * Names are optional; a missing name is reported as "parameter N".
 * Arrays, references, by-value structs, duplicate names and empty pieces are
 * errors.
 * No CUDA headers: the runtime maps the kinds to libffi types. */
#ifndef UK_CODEGEN_CPARAMS_H
#define UK_CODEGEN_CPARAMS_H

#include <stddef.h>

#include "ukern/ukern.h"

typedef enum uk_ctype {
  UK_CT_BOOL, UK_CT_I8, UK_CT_U8, UK_CT_I16, UK_CT_U16, UK_CT_I32, UK_CT_U32,
  UK_CT_I64, UK_CT_U64, UK_CT_F16, UK_CT_BF16, UK_CT_F32, UK_CT_F64,
  UK_CT_C64, UK_CT_C128, UK_CT_PTR,
  UK_CT_COUNT_
} uk_ctype;

typedef struct uk_cparam {
  uk_ctype type;
  char *name;      /* the parameter's name, or "parameter N" (1-based) when unnamed */
  char *spelling;  /* the type as written, normalised spacing ("const float*") */
  size_t pos;      /* byte offset of the parameter in the text (for errors) */
} uk_cparam;

typedef struct uk_cparams {
  int count;
  uk_cparam *params;
} uk_cparams;

/* Parses `text` ("" and "void": no parameters). UK_ERR_SYNTAX with position
 * and caret (uk__error_at, what = "signature") for malformed lists and
 * unknown types, with a hint listing the supported types; *out is written
 * only on success (free with uk__cparams_free). */
uk_status uk__cparams_parse(const char *text, uk_cparams *out);
void uk__cparams_free(uk_cparams *p); /* NULL-safe; leaves *p empty */

/* Size and alignment of a kind on the device (x86-64/CUDA ABI). */
size_t uk__ctype_size(uk_ctype t);
size_t uk__ctype_align(uk_ctype t);
const char *uk__ctype_name(uk_ctype t); /* "float", "pointer", ... */

#endif
