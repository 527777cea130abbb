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
  return uk__tpl_expand(name, f->data, vars, nvars, out);
}
