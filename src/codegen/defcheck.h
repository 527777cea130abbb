/* Create-time checks of definition code (issue 9 item 8): what can be told
 * wrong without NVRTC. Each field (operation, map_expr, reduce_expr,
 * post_map_expr, identity, reduce_type, loop_prep, after_loop) must have
 * balanced (), [] and {} (digraphs count), closed comments and string and
 * character literals, and no preprocessor '#' (directives belong in the
 * preamble) except in statement fields checked with uk__defcheck_code. Errors are UK_ERR_SYNTAX with the field's name, line:column
 * and caret (uk__error_at). No CUDA headers; thread-safe. */
#ifndef UK_CODEGEN_DEFCHECK_H
#define UK_CODEGEN_DEFCHECK_H

#include "ukern/ukern.h"

/* Checks one field; NULL text is fine. UK_OK clears nothing. */
uk_status uk__defcheck(const char *field, const char *text);

/* The same for a field of statements (elementwise operation, loop_prep,
 * after_loop), where a directive may start a line as CuPy allows: its
 * line (with backslash continuations) is the preprocessor's and is not
 * checked; a '#' inside a line is still an error. */
uk_status uk__defcheck_code(const char *field, const char *text);

/* Checks (field, text) pairs in order until a NULL field (texts may be
 * NULL); the first error wins. Pass the terminator as (const char *)NULL. */
uk_status uk__defcheck_fields(const char *field, const char *text, ...);

#endif
