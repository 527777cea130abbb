/* The parameter-list parser: data-driven cases from data/params.test, plus
 * uk__params_check_kernel, positions and the lexer.
 *
 * params.test: blocks separated by blank lines; '#' lines are comments.
 *   line 1: the `what` (in_params or out_params)
 *   line 2: the text; \n \t \r \\ escapes; wrap in "..." to keep edge white space
 *           ("" is the empty text)
 *   then:   one line per parsed parameter ("raw T y", "float32 alpha",
 *           "raw _non_const T w"), or
 *           "(none)" for an empty list, or
 *           "error UK_ERR_X" followed by the exact uk_last_error() lines
 *           (the same escapes apply). */
#include "codegen/dtype.h"
#include "codegen/lexer.h"
#include "codegen/params.h"
#include "testutil.h"

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  size_t len = 0, cap = 0, n;
  char chunk[4096];
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (len + n + 1 > cap) {
      cap = 2 * (len + n + 1);
      char *grown = realloc(buf, cap);
      if (!grown) break;
      buf = grown;
    }
    memcpy(buf + len, chunk, n);
    len += n;
  }
  fclose(f);
  if (buf) buf[len] = '\0';
  return buf;
}

/* Undoes the file's escapes in place. */
static char *unescape(char *s) {
  size_t n = strlen(s);
  if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
    memmove(s, s + 1, n - 2);
    s[n - 2] = '\0';
  }
  char *r = s, *w = s;
  while (*r) {
    if (r[0] == '\\' && r[1]) {
      char c = r[1];
      *w++ = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
      r += 2;
    } else {
      *w++ = *r++;
    }
  }
  *w = '\0';
  return s;
}

static void describe(const uk_paramlist *l, char *buf, size_t n) {
  size_t used = 0;
  buf[0] = '\0';
  if (l->count == 0) snprintf(buf, n, "(none)\n");
  for (int j = 0; j < l->count && used < n; j++) {
    const uk_param *p = &l->items[j];
    char type[32];
    if (p->is_placeholder) snprintf(type, sizeof type, "%c", p->placeholder);
    else snprintf(type, sizeof type, "%s", uk_dtype_name(p->dtype));
    used += (size_t)snprintf(buf + used, n - used, "%s%s%s %s\n", p->is_raw ? "raw " : "",
                             p->is_non_const ? "_non_const " : "", type, p->name);
  }
}

static int run_case(int line_no, char **lines, int nlines) {
  if (nlines < 3) {
    fprintf(stderr, "params.test:%d: a case needs a what, a text and an expectation\n", line_no);
    return 0;
  }
  const char *what = lines[0];
  const char *text = unescape(lines[1]);
  char expected[8192] = "", got[8192];
  size_t used = 0;
  int want_error = strncmp(lines[2], "error ", 6) == 0;
  for (int k = want_error ? 3 : 2; k < nlines; k++)
    used += (size_t)snprintf(expected + used, sizeof expected - used, "%s%s%s",
                             want_error && k > 3 ? "\n" : "", unescape(lines[k]),
                             want_error ? "" : "\n");
  uk_paramlist l = {-7, (uk_param *)&l}; /* poisoned: must stay untouched on failure */
  uk_status st = uk__params_parse(text, what, &l);
  int ok = 1;
  if (want_error) {
    ok = strcmp(uk_status_name(st), lines[2] + 6) == 0 && strcmp(uk_last_error(), expected) == 0 &&
         l.count == -7 && l.items == (uk_param *)&l;
    if (!ok)
      fprintf(stderr, "params.test:%d: %s\n  got:      %s %s\n  expected: %s %s\n", line_no, text,
              uk_status_name(st), uk_last_error(), lines[2] + 6, expected);
    if (st == UK_OK) uk__params_free(&l);
  } else {
    got[0] = '\0';
    if (st == UK_OK) describe(&l, got, sizeof got);
    ok = st == UK_OK && strcmp(got, expected) == 0 && strcmp(uk_last_error(), "") == 0;
    if (!ok)
      fprintf(stderr, "params.test:%d: %s\n  got:      %s %s%s\n  expected: %s\n", line_no, text,
              uk_status_name(st), got, uk_last_error(), expected);
    if (st == UK_OK) uk__params_free(&l);
  }
  return ok;
}

static void test_data_file(void) {
  const char *dir = getenv("UKERN_TEST_DATA");
  char path[1024];
  snprintf(path, sizeof path, "%s/data/params.test", dir ? dir : ".");
  char *data = read_file(path);
  CHECK(data != NULL);
  if (!data) {
    fprintf(stderr, "cannot read %s\n", path);
    return;
  }
  char *lines[64];
  int nlines = 0, cases = 0, errors = 0, block_line = 0, line_no = 0;
  char *cursor = data;
  for (;;) {
    char *line = cursor;
    char *nl = line ? strchr(line, '\n') : NULL;
    if (nl) *nl = '\0';
    cursor = nl ? nl + 1 : NULL;
    if (line) line_no++;
    int blank = !line || line[0] == '\0';
    if (line && line[0] == '#') {
      if (!cursor) break;
      continue;
    }
    if (blank) {
      if (nlines > 0) {
        cases++;
        errors += strncmp(nlines > 2 ? lines[2] : "", "error ", 6) == 0;
        ut_checks++;
        if (!run_case(block_line, lines, nlines)) ut_failures++;
        nlines = 0;
      }
      if (!line || !cursor) break;
      continue;
    }
    if (nlines == 0) block_line = line_no;
    if (nlines < 64) lines[nlines++] = line;
  }
  printf("params.test: %d cases (%d errors)\n", cases, errors);
  CHECK(cases >= 60); /* guards against a reader that silently skips blocks */
  CHECK(errors >= 30);
  free(data);
}

/* Parses both lists (which must be valid) and runs the kernel check. */
static uk_status check_kernel(const char *in_text, const char *out_text, const char *name) {
  uk_paramlist in = {0, NULL}, out = {0, NULL};
  CHECK_OK(uk__params_parse(in_text, "in_params", &in));
  CHECK_OK(uk__params_parse(out_text, "out_params", &out));
  uk_status st = uk__params_check_kernel(in_text, &in, out_text, &out, name);
  uk__params_free(&in);
  uk__params_free(&out);
  return st;
}

static void test_check_kernel(void) {
  CHECK_OK(check_kernel("T x, raw T y, float32 alpha", "T z", "axpy"));
  CHECK_STREQ(uk_last_error(), "");
  CHECK_OK(check_kernel("", "float64 z", "k2_"));
  CHECK_OK(check_kernel("T x", "T y", "i")); /* 'i' is only reserved for parameters */

  CHECK_STATUS(check_kernel("T x, T y", "T y", "k"), UK_ERR_SYNTAX);
  CHECK_STREQ(uk_last_error(), "out_params:1:3: duplicate parameter name 'y' (first at in_params:1:8)\n"
                               "    T y\n"
                               "      ^");
  CHECK_STATUS(check_kernel("T a,\n  float32 y", "T z,\tT y", "k"), UK_ERR_SYNTAX);
  CHECK_STREQ(uk_last_error(), "out_params:1:8: duplicate parameter name 'y' (first at in_params:2:11)\n"
                               "    T z,\tT y\n"
                               "        \t  ^");
  CHECK_STATUS(check_kernel("T x", "U z, U x", "k"), UK_ERR_SYNTAX);
  CHECK_CONTAINS(uk_last_error(), "out_params:1:8: duplicate parameter name 'x' (first at in_params:1:3)");

  /* a placeholder of one list used as a name in the other */
  CHECK_STATUS(check_kernel("T x, U y", "float32 U", "k"), UK_ERR_SYNTAX);
  CHECK_STREQ(uk_last_error(), "out_params:1:9: parameter name 'U' is also a placeholder type (at in_params:1:6)\n"
                               "    float32 U\n"
                               "            ^");
  CHECK_STATUS(check_kernel("float32 T", "T y", "k"), UK_ERR_SYNTAX);
  CHECK_STREQ(uk_last_error(), "in_params:1:9: parameter name 'T' is also a placeholder type (at out_params:1:1)\n"
                               "    float32 T\n"
                               "            ^");

  /* kernel names */
  CHECK_STATUS(check_kernel("T x", "T y", ""), UK_ERR_SYNTAX);
  CHECK_STREQ(uk_last_error(), "kernel name is empty: use a C identifier such as 'my_kernel'");
  CHECK_STATUS(check_kernel("T x", "T y", "2x"), UK_ERR_SYNTAX);
  CHECK_STREQ(uk_last_error(), "name:1:1: Invalid kernel name '2x'\n"
                               "    2x\n"
                               "    ^\n"
                               "hint: a name is a C identifier: letters, digits and '_', not starting with a digit");
  CHECK_STATUS(check_kernel("T x", "T y", "my-kernel"), UK_ERR_SYNTAX);
  CHECK_STREQ(uk_last_error(), "name:1:3: Invalid kernel name 'my-kernel'\n"
                               "    my-kernel\n"
                               "      ^\n"
                               "hint: a name is a C identifier: letters, digits and '_', not starting with a digit");
  CHECK_STATUS(check_kernel("T x", "T y", "float"), UK_ERR_SYNTAX);
  CHECK_STREQ(uk_last_error(), "name:1:1: kernel name 'float' is a C++ keyword\n"
                               "    float\n"
                               "    ^");
  CHECK_STATUS(check_kernel("T x", "T y", "blockIdx"), UK_ERR_SYNTAX);
  CHECK_CONTAINS(uk_last_error(), "kernel name 'blockIdx' is a CUDA built-in variable");
  CHECK_STATUS(check_kernel("T x", "T y", "_uk_kernel"), UK_ERR_SYNTAX);
  CHECK_CONTAINS(uk_last_error(), "kernel name '_uk_kernel' is reserved: names starting with '_uk' belong to ukern");
  CHECK_STATUS(check_kernel("T x", "T y", "T"), UK_ERR_SYNTAX);
  CHECK_STREQ(uk_last_error(), "name:1:1: kernel name 'T' is also a placeholder type (at in_params:1:1)\n"
                               "    T\n"
                               "    ^");
  CHECK_STATUS(check_kernel("float32 x", "U y", "U"), UK_ERR_SYNTAX);
  CHECK_CONTAINS(uk_last_error(), "kernel name 'U' is also a placeholder type (at out_params:1:1)");
  CHECK_OK(check_kernel("T x", "T y", "_my_kernel"));

  uk_paramlist empty = {0, NULL};
  CHECK_STATUS(uk__params_check_kernel("", &empty, "", &empty, NULL), UK_ERR_INVALID);
  CHECK_STATUS(uk__params_check_kernel(NULL, &empty, "", &empty, "k"), UK_ERR_INVALID);
}

static void test_positions(void) {
  const char *text = "T x,\n  raw\tfloat32 alpha ,U  y";
  uk_paramlist l = {0, NULL};
  CHECK_OK(uk__params_parse(text, "in_params", &l));
  CHECK(l.count == 3);
  if (l.count == 3) {
    CHECK(l.items[0].pos == 0 && l.items[0].type_pos == 0 && l.items[0].name_pos == 2);
    CHECK(l.items[0].is_placeholder && l.items[0].placeholder == 'T' && !l.items[0].is_raw);
    CHECK(l.items[0].dtype == UK_DTYPE_COUNT_);
    CHECK(l.items[1].pos == 7 && l.items[1].type_pos == 11 && l.items[1].name_pos == 19);
    CHECK(l.items[1].is_raw && !l.items[1].is_placeholder && l.items[1].placeholder == 0);
    CHECK(l.items[1].dtype == UK_FLOAT32);
    CHECK_STREQ(l.items[1].name, "alpha");
    CHECK(l.items[2].pos == 26 && l.items[2].type_pos == 26 && l.items[2].name_pos == 29);
  }
  uk__params_free(&l);
  CHECK(l.count == 0 && l.items == NULL);
  uk__params_free(&l); /* twice is fine */
  uk__params_free(NULL);

  CHECK_STATUS(uk__params_parse(NULL, "in_params", &l), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "in_params: NULL text or result");
  CHECK_STATUS(uk__params_parse("T x", "in_params", NULL), UK_ERR_INVALID);
  /* what = NULL labels positions "params" */
  CHECK_STATUS(uk__params_parse("T", NULL, &l), UK_ERR_SYNTAX);
  CHECK_STREQ(uk_last_error(), "params:1:2: expected a parameter name after type 'T'\n    T\n     ^");

  /* many parameters: the lists grow, up to UK_MAX_PARAMETERS */
  char big[4096];
  size_t used = 0;
  for (int k = 0; k < UK_MAX_PARAMETERS; k++)
    used += (size_t)snprintf(big + used, sizeof big - used, "%sT x%d", k ? ", " : "", k);
  CHECK_OK(uk__params_parse(big, "in_params", &l));
  CHECK(l.count == UK_MAX_PARAMETERS);
  if (l.count == UK_MAX_PARAMETERS) CHECK_STREQ(l.items[63].name, "x63");
  uk__params_free(&l);
  big[used - 1] = '2'; /* "x62" twice */
  CHECK_STATUS(uk__params_parse(big, "in_params", &l), UK_ERR_SYNTAX);
  CHECK_CONTAINS(uk_last_error(), "duplicate parameter name 'x62' (first at in_params:1:");
  /* one more: refused where it starts, whatever follows */
  big[used - 1] = '3';
  snprintf(big + used, sizeof big - used, ", T x64, garbage here");
  CHECK_STATUS(uk__params_parse(big, "in_params", &l), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "in_params:1:439: too many parameters (more than UK_MAX_PARAMETERS, 64)");
  CHECK(l.count == 0 && l.items == NULL);
}

static void test_lexer(void) {
  const char *text = " raw\tT* x-y,2x::z\n";
  uk_lexer lx;
  uk__lex_init(&lx, text);
  struct {
    uk_tok kind;
    size_t pos, len;
    int space;
  } want[] = {{UK_TOK_IDENT, 1, 3, 1}, {UK_TOK_IDENT, 5, 1, 1},  {UK_TOK_PUNCT, 6, 1, 0},
              {UK_TOK_IDENT, 8, 1, 1}, {UK_TOK_PUNCT, 9, 1, 0},  {UK_TOK_IDENT, 10, 1, 0},
              {UK_TOK_PUNCT, 11, 1, 0}, {UK_TOK_NUMBER, 12, 2, 0}, {UK_TOK_PUNCT, 14, 2, 0},
              {UK_TOK_IDENT, 16, 1, 0}, {UK_TOK_EOF, 18, 0, 1},  {UK_TOK_EOF, 18, 0, 0}};
  for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
    uk_token peek = uk__lex_peek(&lx);
    uk_token t = uk__lex_next(&lx);
    CHECK(peek.kind == t.kind && peek.pos == t.pos);
    CHECK(t.kind == want[k].kind && t.pos == want[k].pos && t.len == want[k].len &&
          t.space_before == want[k].space);
    if (k == 0) CHECK(uk__lex_is(&lx, &t, "raw") && !uk__lex_is(&lx, &t, "ra"));
    if (k == 8) CHECK(uk__lex_is(&lx, &t, "::"));
  }
  CHECK(uk__lex_is_ident("_a1", 3) && !uk__lex_is_ident("1a", 2) && !uk__lex_is_ident("", 0));
  CHECK(!uk__lex_is_ident("a-b", 3) && uk__lex_is_ident("a-b", 1));
  uk__lex_init(&lx, NULL);
  CHECK(uk__lex_next(&lx).kind == UK_TOK_EOF);
}

int main(void) {
  test_lexer();
  test_data_file();
  test_check_kernel();
  test_positions();
  return ut_finish("test_params");
}
