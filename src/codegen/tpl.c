/* Template expansion (tpl.h): ${name} holes of the embedded kernel templates filled. */
#include "codegen/tpl.h"

#include <string.h>

#include "base/embedded.h"

uk_status uk__tpl_expand(const char *tpl_name, const char *tpl, const uk_tpl_var *vars, int nvars,
                         uk_strbuf *out) {
  const char *p = tpl;
  for (;;) {
    const char *hole = strstr(p, "${");
    if (!hole) break;
    uk__sb_addn(out, p, (size_t)(hole - p));
    const char *end = strchr(hole + 2, '}');
    if (!end)
      return uk__errorf(UK_ERR_INTERNAL, "template %s: unterminated '${' at byte %zu", tpl_name,
                        (size_t)(hole - tpl));
    size_t len = (size_t)(end - hole - 2);
    int found = -1;
    for (int k = 0; k < nvars && found < 0; k++)
      if (strlen(vars[k].name) == len && memcmp(vars[k].name, hole + 2, len) == 0) found = k;
    if (found < 0)
      return uk__errorf(UK_ERR_INTERNAL, "template %s: no value for hole '${%.*s}'", tpl_name, (int)len,
                        hole + 2);
    uk__sb_add(out, vars[found].value ? vars[found].value : "");
    p = end + 1;
  }
  uk__sb_add(out, p);
  if (out->failed) return uk__errorf(UK_ERR_NOMEM, "template %s: out of memory", tpl_name);
  return UK_OK;
}

uk_status uk__tpl_expand_embedded(const char *name, const uk_tpl_var *vars, int nvars, uk_strbuf *out) {
  const uk__embedded_file *f = uk__embedded_find(name);
  if (!f) return uk__errorf(UK_ERR_INTERNAL, "no embedded template '%s'", name);
  uk_strbuf t;
  uk__sb_init(&t);
  for (const char *p = f->data; *p;) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
    int drop = 0;
    if (p[0] == '$' && p[1] == '{' && len >= 4 && p[len - 1] == '\n' && p[len - 2] == '}') {
      for (int k = 0; k < nvars; k++)
        if (strlen(vars[k].name) == len - 4 && memcmp(vars[k].name, p + 2, len - 4) == 0)
          drop = !vars[k].value || !*vars[k].value;
    }
    if (!drop) uk__sb_addn(&t, p, len);
    p += len;
  }
  uk_status st = t.failed ? uk__errorf(UK_ERR_NOMEM, "out of memory generating a kernel")
                          : uk__tpl_expand(name, uk__sb_str(&t), vars, nvars, out);
  uk__sb_release(&t);
  return st;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

void uk__tpl_add_code(uk_strbuf *sb, const char *text, const char *indent, int terminate) {
  if (!text) return;
  const char *b = text, *e = text + strlen(text);
  while (b < e && is_space(*b)) b++;
  while (e > b && is_space(e[-1])) e--;
  if (b == e) return;
  while (b > text && b[-1] != '\n') b--; /* keep the first line's own indentation */
  if (sb->len) uk__sb_addc(sb, '\n');
  const char *last = b;
  for (const char *p = b; p < e;) {
    const char *nl = memchr(p, '\n', (size_t)(e - p));
    const char *end = nl ? nl : e;
    last = p;
    if (end > p && !(end - p == 1 && *p == '\r')) uk__sb_add(sb, indent);
    uk__sb_addn(sb, p, (size_t)(end - p));
    if (!nl) break;
    uk__sb_addc(sb, '\n');
    p = nl + 1;
  }
  /* As CuPy's `${loop_prep};`: after a '}' too (`const double n { 1.0 }`). */
  if (terminate && e[-1] != ';') {
    /* A last line that is a // comment or a directive (#endif) takes no ';'. */
    int own_line = 0;
    const char *q = last;
    while (q < e && (*q == ' ' || *q == '\t')) q++;
    if (q < e && *q == '#') own_line = 1;
    for (const char *p = last; p + 1 < e; p++)
      if (p[0] == '/' && p[1] == '/') own_line = 1;
    if (own_line) uk__sb_addf(sb, "\n%s", indent);
    uk__sb_addc(sb, ';');
  }
}
