/* Scanning an elementwise operation's text for the names it uses, with the
 * C-mode lexer (codegen/lexer.h): comments, string and character literals
 * and member accesses (`a.z`, `p->z`, `ns::z`) are not uses of `z`.
 *
 * The emitter uses the answers to decide what to generate: an output that
 * the operation surely assigns on every path is not loaded before the
 * operation; `_raw_<name>`, `i` and `_ind` are declared only when used.
 * Texts are borrowed; NULL texts use nothing. No CUDA headers. Every entry
 * point takes any NUL-terminated bytes (fuzzer-safe) and is thread-safe. */
#ifndef UK_CODEGEN_OPSCAN_H
#define UK_CODEGEN_OPSCAN_H

/* 1 when `name` occurs in `text` as an identifier of its own (not a member,
 * not inside a comment or literal), else 0. */
int uk__opscan_uses(const char *text, const char *name);

/* 1 only when the scanner is certain that the operation writes `name` on
 * every path without reading it first: `name` occurs, every occurrence is a
 * statement-level plain assignment (`name = expr`, at the start of the text
 * or after ';' outside any braces or parentheses), the text has no control
 * flow (if, else, for, while, do, switch, case, default, goto, return,
 * break, continue, throw, asm, co_*) that could skip one, no directive, no
 * backslash-newline outside comments (the compiler joins those lines) and
 * no unclosed comment or literal; and the preamble (may be NULL) neither
 * #includes anything nor #defines a name that the text uses (a macro may
 * hide control flow or rename `name`). Anything else (`z += x`,
 * `z = z * 2`, `z == 1`, `z++`, `&z`, a conditional assignment, no use at
 * all) gives 0: the output is loaded first. */
int uk__opscan_write_only_with(const char *text, const char *preamble, const char *name);
/* The same without a preamble. */
int uk__opscan_write_only(const char *text, const char *name);

/* 1 when `name` occurs in `text` as an identifier token, members and
 * qualified names included (where a macro of that name would expand). */
int uk__opscan_uses_exact(const char *text, const char *name);

/* 1 when `name` occurs as an identifier of its own other than as
 * `name.member` (`_ind.get()` or a bare `_ind`, beside `_ind.size()`). */
int uk__opscan_uses_beyond(const char *text, const char *name, const char *member);

/* 1 when some identifier in `text` (members and qualified names included:
 * `ukern::complex`) starts with `prefix`, else 0. */
int uk__opscan_mentions(const char *text, const char *prefix);

#endif
