/* Source mapping for user code in generated kernels (issue 9 item 9): each
 * piece of user text (operation, map_expr, preamble, ...) is emitted after a
 * `#line L "field"` directive, unindented, so that NVRTC reports an error in
 * it as `operation(1)` with the caret under the user's own column; a marker
 * line after it becomes `#line N "<program name>"` in uk__srcmap_finish,
 * so that errors in generated code keep their real line numbers.
 * No CUDA headers. */
#ifndef UK_CODEGEN_SRCMAP_H
#define UK_CODEGEN_SRCMAP_H

#include "base/strbuf.h"

/* Appends user statements like uk__tpl_add_code (blank lines at both ends
 * dropped, the first line's own indentation kept, with `terminate` a ';'
 * unless it ends with ';' or '}'), but unindented, between a #line
 * directive naming `field` and a restore marker. NULL or blank text: nothing. */
void uk__srcmap_add_code(uk_strbuf *sb, const char *field, const char *text, int terminate);

/* Appends "(" text ")" for an expression, the text on lines of its own
 * between the directive and the marker. NULL text: "()". */
void uk__srcmap_add_expr(uk_strbuf *sb, const char *field, const char *text);

/* Turns every restore marker of the finished source into
 * `#line <its next line's number> "<name>"` (name: the NVRTC program
 * name, the kernel's name). UK_ERR_NOMEM on allocation failure. */
uk_status uk__srcmap_finish(uk_strbuf *src, const char *name);

#endif
