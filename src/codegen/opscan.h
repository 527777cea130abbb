/* Scanning an elementwise operation's text for the names it uses, with a
 * tiny C lexer that skips comments, string and character literals and
 * member accesses (`a.z`, `p->z`, `ns::z` are not uses of `z`).
 *
 * The emitter uses the answers to decide what to generate: an output that
 * the operation only assigns with a plain '=' is not loaded before the
 * operation; `_raw_<name>`, `i` and `_ind` are declared only when used.
 * Texts are borrowed; NULL texts use nothing. No CUDA headers. */
#ifndef UK_CODEGEN_OPSCAN_H
#define UK_CODEGEN_OPSCAN_H

/* 1 when `name` occurs in `text` as an identifier of its own (not a member,
 * not inside a comment or literal), else 0. */
int uk__opscan_uses(const char *text, const char *name);

/* 1 when the operation writes `name` without reading it first: `name`
 * occurs, every occurrence is a statement-level plain assignment
 * (`name = expr`, at the start of the text or after ';' outside any braces
 * or parentheses), and the text has no control flow (if, else, for, while,
 * do, switch, case, goto, return, break, continue) that could skip one.
 * Anything else (`z += x`, `z = z * 2`, `z == 1`, `z++`, `&z`, a conditional
 * assignment, no use at all) gives 0: the output is loaded first. */
int uk__opscan_write_only(const char *text, const char *name);

/* 1 when some identifier in `text` (members and qualified names included:
 * `ukern::complex`) starts with `prefix`, else 0. */
int uk__opscan_mentions(const char *text, const char *prefix);

#endif
