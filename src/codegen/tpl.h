/* Template expansion: real CUDA text with ${name} holes and no logic.
 * Every hole must have a value; a missing one is UK_ERR_INTERNAL naming it,
 * a value given but used by no hole is fine (variants share value sets). */
#ifndef UK_CODEGEN_TPL_H
#define UK_CODEGEN_TPL_H

#include "base/strbuf.h"

typedef struct uk_tpl_var {
  const char *name;
  const char *value;
} uk_tpl_var;

/* Appends `tpl` to out with each ${name} replaced by its value. `tpl_name`
 * names the template in messages. */
uk_status uk__tpl_expand(const char *tpl_name, const char *tpl, const uk_tpl_var *vars, int nvars,
                         uk_strbuf *out);

/* The same for an embedded template by name ("elementwise.cu"), first
 * dropping every line that is only an empty-valued hole, so that optional
 * blocks leave no blank lines. */
uk_status uk__tpl_expand_embedded(const char *name, const uk_tpl_var *vars, int nvars, uk_strbuf *out);

/* Appends user code: each line indented, blank lines at both ends dropped,
 * the first line's own indentation kept. With `terminate`, a ';' closes it
 * unless it ends with ';' (CuPy writes `${operation};`, so a brace
 * initialiser `T n { 1 }` needs none), on a line of
 * its own after a trailing // comment or directive line. Starts a new line if
 * sb is not empty. */
void uk__tpl_add_code(uk_strbuf *sb, const char *text, const char *indent, int terminate);

#endif
