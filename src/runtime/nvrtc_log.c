/* A failed compile's NVRTC log pointed at the user's text (nvrtc_log.h). */
#include "runtime/nvrtc_log.h"

#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"

static int is_id(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The length of the header's "name(123): " prefix, with *name_len and the
 * line number's span; 0 when the line is not such a header. */
static size_t header(const char *p, size_t len, size_t *name_len, size_t *num_at, size_t *num_len) {
  const char *open = memchr(p, '(', len);
  if (!open || open == p) return 0;
  size_t k = (size_t)(open - p) + 1, d = k;
  while (d < len && p[d] >= '0' && p[d] <= '9') d++;
  if (d == k || d + 2 >= len || p[d] != ')' || p[d + 1] != ':' || p[d + 2] != ' ') return 0;
  *name_len = (size_t)(open - p);
  *num_at = k;
  *num_len = d - k;
  return d + 3;
}

/* The caret's byte column in a caret line ("  " + blanks + '^'), else 0. */
static size_t caret_column(const char *p, size_t len) {
  size_t k = 0;
  while (k < len && (p[k] == ' ' || p[k] == '\t')) k++;
  if (k < 2 || k >= len || p[k] != '^') return 0;
  for (size_t j = k + 1; j < len; j++)
    if (p[j] != ' ' && p[j] != '\r') return 0;
  return k - 2 + 1; /* NVRTC echoes the source line after two spaces */
}

/* What an internal name stands for: _uk_<p|v|b|d|o|t>_<name> and
 * _uk_<s|ks|rs|os>_<name>_<dim> are the parameter <name>'s. */
static void explain(uk_strbuf *sb, const char *id, size_t len) {
  static const char *const roles[] = {"p_", "v_", "b_", "d_", "o_", "t_", "s_", "ks_", "rs_", "os_"};
  uk__sb_addf(sb, " [%.*s: ", (int)len, id);
  for (size_t r = 0; r < sizeof roles / sizeof roles[0]; r++) {
    size_t rl = strlen(roles[r]);
    if (len <= 4 + rl || memcmp(id + 4, roles[r], rl) != 0) continue;
    const char *name = id + 4 + rl;
    size_t n = len - 4 - rl;
    if (r >= 6) { /* strides: drop the "_<dim>" */
      size_t u = n;
      while (u > 0 && name[u - 1] >= '0' && name[u - 1] <= '9') u--;
      if (u > 1 && u < n && name[u - 1] == '_') n = u - 1;
    }
    uk__sb_addf(sb, "ukern's name for '%.*s']", (int)n, name);
    return;
  }
  uk__sb_add(sb, "a name in ukern's generated code, not in your text]");
}

/* The message with every distinct _uk_ identifier explained after it. */
static void add_explained(uk_strbuf *sb, const char *p, size_t len) {
  uk__sb_addn(sb, p, len);
  for (size_t k = 0; k + 4 < len; k++) {
    if (memcmp(p + k, "_uk_", 4) != 0 || (k > 0 && is_id(p[k - 1]))) continue;
    size_t e = k;
    while (e < len && is_id(p[e])) e++;
    int seen = 0;
    for (size_t j = 0; j < k && !seen; j++)
      seen = memcmp(p + j, p + k, e - k) == 0 && (j == 0 || !is_id(p[j - 1])) && !is_id(p[j + e - k]);
    if (!seen) explain(sb, p + k, e - k);
    k = e;
  }
}

void uk__nvrtc_log_readable(char **log) {
  if (!log || !*log) return;
  const char *s = *log;
  uk_strbuf sb;
  uk__sb_init(&sb);
  while (*s) {
    const char *nl = strchr(s, '\n');
    size_t len = nl ? (size_t)(nl - s) : strlen(s);
    size_t name_len, num_at, num_len, h = header(s, len, &name_len, &num_at, &num_len);
    if (h) {
      size_t col = 0;
      const char *echo = nl ? nl + 1 : NULL, *caret = echo ? strchr(echo, '\n') : NULL;
      if (caret) {
        caret++;
        col = caret_column(caret, strcspn(caret, "\n"));
      }
      uk__sb_addf(&sb, "%.*s:%.*s:", (int)name_len, s, (int)num_len, s + num_at);
      if (col) uk__sb_addf(&sb, "%zu:", col);
      uk__sb_addc(&sb, ' ');
      add_explained(&sb, s + h, len - h);
    } else {
      uk__sb_addn(&sb, s, len);
    }
    if (!nl) break;
    uk__sb_addc(&sb, '\n');
    s = nl + 1;
  }
  char *out = uk__sb_detach(&sb);
  if (!out) return;
  free(*log);
  *log = out;
}
