/* Issue 9 item 10: error messages quote user bytes safely (control bytes
 * and ESC sequences shown escaped, carets still under the right column) and
 * stay short whatever the input (a 400 kB type name gave a 1.2 MB message). */
#include "base/error.h"
#include "codegen/cparams.h"
#include "codegen/params.h"
#include "testutil.h"

/* No byte that a terminal acts on, except newline and tab. */
static int clean(const char *s) {
  for (; *s; s++)
    if (((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t') || *s == 0x7f) return 0;
  return 1;
}

static char *big_name(size_t n, char c) {
  char *s = malloc(n + 1);
  memset(s, c, n);
  s[n] = '\0';
  return s;
}

int main(void) {
  uk_options opts;
  memset(&opts, 0, sizeof opts);
  opts.arch = 90;
  opts.disable_disk_cache = 1;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&opts, &ctx));
  if (!ctx) return ut_finish("test_error_quote");
  uk_elementwise *k = NULL;

  /* an ESC sequence in a parameter name: escaped, caret under the word */
  CHECK_STATUS(uk_elementwise_create(
                   ctx,
                   &(uk_elementwise_spec){
                       .in_params = "T x\033[2J\033[31m", .out_params = "T z", .operation = "z = x", .name = "k"},
                   &k),
               UK_ERR_SYNTAX);
  CHECK(clean(uk_last_error()));
  CHECK_STREQ(uk_last_error(),
              "in_params:1:4: invalid parameter name 'x\\x1b[2J\\x1b[31m'\n"
              "    T x\\x1b[2J\\x1b[31m\n"
              "       ^\n"
              "hint: for an array the kernel indexes itself, write 'raw T name' and use name[i]");
  /* a control byte before the error column: the caret moves by its escape's width */
  CHECK_STATUS(
      uk_elementwise_create(
          ctx,
          &(uk_elementwise_spec){.in_params = "T\007 x, T x", .out_params = "T z", .operation = "z = x", .name = "k"},
          &k),
      UK_ERR_SYNTAX);
  CHECK(clean(uk_last_error()));
  CHECK_CONTAINS(uk_last_error(), "\n    T\\x07 x, T x\n");
  /* a BEL and a CR in the kernel name, a DEL in an operation */
  CHECK_STATUS(
      uk_elementwise_create(
          ctx,
          &(uk_elementwise_spec){.in_params = "T x", .out_params = "T z", .operation = "z = x", .name = "ke\a\rrn"},
          &k),
      UK_ERR_SYNTAX);
  CHECK(clean(uk_last_error()));
  CHECK_CONTAINS(uk_last_error(), "'ke\\x07\\x0drn'");
  CHECK_STATUS(
      uk_elementwise_create(
          ctx,
          &(uk_elementwise_spec){.in_params = "T x", .out_params = "T z", .operation = "z = x\177; }", .name = "k"},
          &k),
      UK_ERR_SYNTAX);
  CHECK(clean(uk_last_error()));
  CHECK_CONTAINS(uk_last_error(), "operation:1:9: unmatched '}'\n    z = x\\x7f; }\n               ^");

  /* a 400 kB type name (params and C signatures) and a 400 kB kernel name */
  size_t n = 400 * 1024;
  char *name = big_name(n, 'q'), *text = malloc(n + 16);
  snprintf(text, n + 16, "%s x", name);
  CHECK_STATUS(
      uk_elementwise_create(
          ctx, &(uk_elementwise_spec){.in_params = text, .out_params = "T z", .operation = "z = x", .name = "k"}, &k),
      UK_ERR_TYPE);
  size_t len = strlen(uk_last_error());
  CHECK(len < 4096);
  CHECK_CONTAINS(uk_last_error(), "in_params:1:1: unknown dtype 'qqqq");
  CHECK_CONTAINS(uk_last_error(), "more bytes)");
  printf("400 kB dtype name: %zu-byte message\n", len);
  uk_cparams cp;
  snprintf(text, n + 16, "%s* p, %s y", "float", name);
  CHECK_STATUS(uk__cparams_parse(text, &cp), UK_ERR_SYNTAX);
  len = strlen(uk_last_error());
  CHECK(len < 4096);
  CHECK_CONTAINS(uk_last_error(), "signature:1:11: unknown type 'qqqq");
  printf("400 kB C type name: %zu-byte message\n", len);
  name[n / 2] = '\033';
  CHECK_STATUS(
      uk_elementwise_create(
          ctx, &(uk_elementwise_spec){.in_params = "T x", .out_params = "T z", .operation = "z = x", .name = name}, &k),
      UK_ERR_SYNTAX);
  len = strlen(uk_last_error());
  CHECK(len < 4096 && clean(uk_last_error()));
  printf("400 kB kernel name: %zu-byte message\n", len);
  /* an error far into a long line: a window around the caret */
  memset(text, 'a', n);
  memcpy(text + 300000, " + )", 4);
  text[n] = '\0';
  CHECK_STATUS(
      uk_elementwise_create(
          ctx, &(uk_elementwise_spec){.in_params = "T x", .out_params = "T z", .operation = text, .name = "k"}, &k),
      UK_ERR_SYNTAX);
  CHECK(strlen(uk_last_error()) < 1024);
  CHECK_CONTAINS(uk_last_error(), "operation:1:300004: unmatched ')'\n    ...aaaa");
  const char *caret = strrchr(uk_last_error(), '^'), *src = strstr(uk_last_error(), "\n    ...");
  /* the caret sits under the ')' */
  if (caret && src) {
    const char *caret_line = strchr(src + 1, '\n');
    if (caret_line) CHECK(src[1 + (caret - caret_line - 1)] == ')');
  }
  free(text);
  free(name);

  /* the log is escaped too, and a plain message is left as it is */
  uk__errorf_log(UK_ERR_COMPILE, "line\033]0;title\007 1\n\tline 2", "plain 'message'\n  second line");
  CHECK_STREQ(uk_last_error_log(), "line\\x1b]0;title\\x07 1\n\tline 2");
  CHECK_STREQ(uk_last_error(), "plain 'message'\n  second line");
  uk__errorf(UK_ERR_INVALID, "%s", "x");
  uk__error_prefix("ctx \033");
  CHECK_STREQ(uk_last_error(), "ctx \\x1b: x");
  uk_context_destroy(ctx);
  return ut_finish("test_error_quote");
}
