/* Parser for CuPy-style parameter lists (ElementwiseKernel / ReductionKernel
 * in_params and out_params):  "T x, raw T y, float32 alpha".
 *
 * The grammar is written above the parsing functions in params.c. Every
 * malformed list is reported at create time with position and caret
 * (uk__error_at, what = "in_params" / "out_params") and, where it helps, a
 * hint line. No CUDA headers. */
#ifndef UK_CODEGEN_PARAMS_H
#define UK_CODEGEN_PARAMS_H

#include <stddef.h>

#include "ukern/ukern.h"

typedef struct uk_param {
  char *name;         /* owned, a valid C identifier */
  int is_raw;         /* declared "raw": indexed by the kernel itself, not broadcast */
  int is_non_const;   /* declared "_non_const" (CuPy): an input the operation may write back */
  int is_placeholder; /* the type is a one-letter placeholder bound at call time */
  char placeholder;   /* the letter ('T') when is_placeholder, else 0 */
  uk_dtype dtype;     /* the fixed type; UK_DTYPE_COUNT_ when is_placeholder */
  size_t pos;         /* byte offset of the parameter ("raw" included) in its text */
  size_t type_pos, name_pos;
} uk_param;

typedef struct uk_paramlist {
  int count;
  uk_param *items; /* owned; NULL when count == 0 */
} uk_paramlist;

/* Parses `text` (copied into the result). `what` ("in_params" or
 * "out_params") labels error positions. White space only = no parameters.
 * Also rejects duplicate names and a placeholder letter used as a name within
 * the list. On success *out is the caller's (uk__params_free) and the error is
 * cleared; on failure *out is untouched.
 * Returns UK_OK, UK_ERR_SYNTAX, UK_ERR_TYPE (unknown dtype, C type spelling),
 * UK_ERR_INVALID (NULL text or out) or UK_ERR_NOMEM. Thread-safe. */
uk_status uk__params_parse(const char *text, const char *what, uk_paramlist *out);
/* NULL-safe; leaves *p empty. */
void uk__params_free(uk_paramlist *p);

/* Checks a kernel's inputs and outputs together: duplicate names across both
 * lists (the error points at the second occurrence in its own text and says
 * where the first one is), a placeholder letter of either list used as a
 * name, and the kernel name (a C identifier, not a keyword, not a placeholder,
 * not starting with "_uk"). `in_text`/`out_text` are the texts the lists were
 * parsed from. Returns UK_OK (error cleared), UK_ERR_SYNTAX or UK_ERR_INVALID
 * (NULL argument). */
uk_status uk__params_check_kernel(const char *in_text, const uk_paramlist *in, const char *out_text,
                                  const uk_paramlist *out, const char *name);

#endif
