/* Source mapping for user code in generated kernels (srcmap.h). */
#include "codegen/srcmap.h"

#include <string.h>

#include "codegen/tpl.h"

/* Never written by ukern otherwise; a user line equal to it only gets a
 * correct #line of its own. */
static const char MARKER[] = "#line __uk_generated__";

static int blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* The 1-based line of the first non-blank byte of text; 0 if none. */
static size_t first_line(const char *text) {
  size_t line = 1;
  for (const char *p = text; *p; p++) {
    if (!blank(*p)) return line;
    if (*p == '\n') line++;
  }
  return 0;
}

/* The field name as a string literal's content: a field is one of ukern's
 * names, but keep the directive valid whatever it is. */
static void directive(uk_strbuf *sb, const char *field, size_t line) {
  uk__sb_addf(sb, "#line %zu \"", line);
  for (const char *p = field; *p; p++)
    if (*p != '"' && *p != '\\' && (unsigned char)*p >= 0x20) uk__sb_addc(sb, *p);
  uk__sb_add(sb, "\"\n");
}

void uk__srcmap_add_code(uk_strbuf *sb, const char *field, const char *text, int terminate) {
  size_t line = text ? first_line(text) : 0;
  if (line == 0) return;
  if (sb->len && sb->buf[sb->len - 1] != '\n') uk__sb_addc(sb, '\n');
  directive(sb, field, line);
  uk_strbuf code;
  uk__sb_init(&code);
  uk__tpl_add_code(&code, text, "", terminate);
  uk__sb_add(sb, uk__sb_str(&code));
  if (code.failed) sb->failed = 1;
  uk__sb_release(&code);
  uk__sb_addf(sb, "\n%s", MARKER);
}

void uk__srcmap_add_expr(uk_strbuf *sb, const char *field, const char *text) {
  uk__sb_addc(sb, '(');
  size_t line = text ? first_line(text) : 0;
  if (line) {
    uk__sb_addc(sb, '\n');
    uk__srcmap_add_code(sb, field, text, 0);
    uk__sb_addc(sb, '\n');
  }
  uk__sb_addc(sb, ')');
}

uk_status uk__srcmap_finish(uk_strbuf *src, const char *name) {
  if (!src->buf || !strstr(src->buf, MARKER)) return UK_OK;
  uk_strbuf out;
  uk__sb_init(&out);
  size_t line = 1, n = strlen(MARKER);
  for (const char *p = src->buf; *p;) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    if (len == n && memcmp(p, MARKER, n) == 0) directive(&out, name, line + 1);
    else {
      uk__sb_addn(&out, p, len);
      if (nl) uk__sb_addc(&out, '\n');
    }
    if (!nl) break;
    p = nl + 1;
    line++;
  }
  if (out.failed) {
    uk__sb_release(&out);
    return uk__errorf(UK_ERR_NOMEM, "out of memory generating a kernel");
  }
  uk__sb_release(src);
  *src = out;
  return UK_OK;
}
