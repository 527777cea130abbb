/* Issue 9 item 8: definition code checked at create time, without NVRTC:
 * balanced brackets, closed comments and literals, directives only at line starts (elementwise) or in the
 * preamble, each error with field, line:column and caret. Through the
 * public create calls (and uk__defcheck for the cases they share). */
#include "codegen/defcheck.h"
#include "testutil.h"

static uk_context *ctx;

/* An elementwise definition with `op` (or loop_prep/after_loop) fails with
 * exactly `msg`. */
static void ew_fails(const char *op, const char *prep, const char *after, const char *msg) {
  uk_elementwise_spec o;
  memset(&o, 0, sizeof o);
  o.loop_prep = prep;
  o.after_loop = after;
  uk_elementwise *k = (uk_elementwise *)&o; /* must be left alone */
  o.in_params = "T x";
  o.out_params = "T z";
  o.operation = op;
  o.name = "bad";
  CHECK_STATUS(uk_elementwise_create(ctx, &o, &k), UK_ERR_SYNTAX);
  CHECK(k == (uk_elementwise *)&o);
  CHECK_STREQ(uk_last_error(), msg);
}

static void ew_ok(const char *op) {
  uk_elementwise *k = NULL;
  CHECK_OK(uk_elementwise_create(
      ctx, &(uk_elementwise_spec){.in_params = "T x", .out_params = "T z", .operation = op, .name = "good"}, &k));
  uk_elementwise_destroy(k);
}

static uk_reduction_spec red_spec(void) {
  uk_reduction_spec s;
  memset(&s, 0, sizeof s);
  s.in_params = "T x";
  s.out_params = "T y";
  s.map_expr = "x";
  s.reduce_expr = "a + b";
  s.post_map_expr = "y = a";
  s.identity = "0";
  s.name = "red";
  return s;
}

static void red_fails(const uk_reduction_spec *s, const char *msg) {
  uk_reduction *r = NULL;
  CHECK_STATUS(uk_reduction_create(ctx, s, &r), UK_ERR_SYNTAX);
  CHECK(r == NULL);
  CHECK_STREQ(uk_last_error(), msg);
}

int main(void) {
  uk_options opts;
  memset(&opts, 0, sizeof opts);
  opts.arch = 90;
  opts.disable_disk_cache = 1;
  CHECK_OK(uk_context_create(&opts, &ctx));
  if (!ctx) return ut_finish("test_defcheck");

  /* the example: passed create, failed to compile with "_uk_k is undefined" */
  ew_fails("z = x; }", NULL, NULL,
           "operation:1:8: unmatched '}'\n    z = x; }\n           ^\n"
           "hint: the code runs inside ukern's generated kernel; an extra '}' would close it");
  ew_fails("z = (x", NULL, NULL, "operation:1:5: '(' is never closed (expected ')')\n    z = (x\n        ^");
  ew_fails("z = x;\nw = f(a[1)]", NULL, NULL,
           "operation:2:10: ')' does not close '[' (opened at operation:2:8); expected ']'\n"
           "    w = f(a[1)]\n             ^");
  ew_fails("z = x; /* note", NULL, NULL, "operation:1:8: unterminated comment\n    z = x; /* note\n           ^\n"
           "hint: close it with '*/'");
  ew_fails("z = x;\n  printf(\"z = %f\n\", z)", NULL, NULL,
           "operation:2:10: unterminated string literal\n      printf(\"z = %f\n             ^");
  ew_fails("z = 'x", NULL, NULL, "operation:1:5: unterminated character literal\n    z = 'x\n        ^");
  ew_fails("z = R\"d(x)\"", NULL, NULL, "operation:1:5: unterminated raw string literal\n    z = R\"d(x)\"\n        ^");
  /* directives start a line of their own (CuPy's searchsorted kernels use them) */
  ew_ok("#include <cuda_fp16.h>\nz = x");
  ew_ok("  #if defined(X) && (Y\n z = x;\n#else\n  z = -x;\n  %:endif");
  ew_ok("#define Q(a) ((a) \\\n  + 1\nz = Q(x)");
  {
    uk_elementwise_spec o;
    memset(&o, 0, sizeof o);
    o.loop_prep = "#pragma unroll 1\nint n = 0";
    o.after_loop = "#ifdef Z\nn++;\n#endif";
    uk_elementwise *k = NULL;
    o.in_params = "T x";
    o.out_params = "T z";
    o.operation = "z = x";
    o.name = "good";
    CHECK_OK(uk_elementwise_create(ctx, &o, &k));
    uk_elementwise_destroy(k);
  }
  ew_fails("z = x; %:define Q", NULL, NULL,
           "operation:1:8: '%:' inside a line\n    z = x; %:define Q\n           ^\n"
           "hint: a preprocessor directive starts a line of its own");
  ew_fails("z = x # 1", NULL, NULL,
           "operation:1:7: '#' inside a line\n    z = x # 1\n          ^\n"
           "hint: a preprocessor directive starts a line of its own");
  ew_fails("##x\nz = x", NULL, NULL,
           "operation:1:1: '##' inside a line\n    ##x\n    ^\n"
           "hint: a preprocessor directive starts a line of its own");
  ew_fails("#if 1\nz = (x\n#endif", NULL, NULL,
           "operation:2:5: '(' is never closed (expected ')')\n    z = (x\n        ^");
  ew_fails("z = x <% w = 1; )", NULL, NULL,
           "operation:1:17: ')' does not close '{' (opened at operation:1:7); expected '}'\n"
           "    z = x <% w = 1; )\n                    ^");
  ew_ok("if (x > 0) <% z = x; } else { z = -x; %>");
  ew_fails("z = x", "int n = (3;", NULL, "loop_prep:1:9: '(' is never closed (expected ')')\n    int n = (3;\n            ^");
  ew_fails("z = x", NULL, "}", "after_loop:1:1: unmatched '}'\n    }\n    ^\n"
           "hint: the code runs inside ukern's generated kernel; an extra '}' would close it");
  /* tabs keep the caret under the byte */
  ew_fails("\tz = x)", NULL, NULL, "operation:1:7: unmatched ')'\n    \tz = x)\n    \t     ^");

  /* fine: brackets inside literals and comments, digraphs, '#' in a string, raw strings, 1'000 */
  ew_ok("z = x; // }\n/* ( */ const char *s = \"#)\"; char c = '}'; (void)s; (void)c");
  ew_ok("z = x + 1'000; <% %> int a<:2:> = {0, 1}; (void)a");
  ew_ok("if (x > 0) { z = x; } else { z = -x; }");
  ew_ok("const char *r = R\"d()\")d\"; (void)r; z = x");
  ew_ok("z = x; // a backslash at the end \\\n still the comment (");

  /* reductions: every field, with its name */
  uk_reduction_spec s = red_spec();
  s.map_expr = "x)";
  red_fails(&s, "map_expr:1:2: unmatched ')'\n    x)\n     ^");
  s = red_spec();
  s.reduce_expr = "(a + b";
  red_fails(&s, "reduce_expr:1:1: '(' is never closed (expected ')')\n    (a + b\n    ^");
  s = red_spec();
  s.post_map_expr = "y = a; }";
  red_fails(&s, "post_map_expr:1:8: unmatched '}'\n    y = a; }\n           ^\n"
                "hint: the code runs inside ukern's generated kernel; an extra '}' would close it");
  s = red_spec();
  s.identity = "'0";
  red_fails(&s, "identity:1:1: unterminated character literal\n    '0\n    ^");
  s = red_spec();
  s.reduce_type = "float /*";
  red_fails(&s, "reduce_type:1:7: unterminated comment\n    float /*\n          ^\nhint: close it with '*/'");
  s = red_spec();
  s.map_expr = "x ## y";
  red_fails(&s, "map_expr:1:3: '##' outside the preamble\n    x ## y\n      ^\n"
                "hint: preprocessor directives (#include, #define, ...) belong in the preamble");
  s = red_spec();
  uk_reduction *r = NULL;
  CHECK_OK(uk_reduction_create(ctx, &s, &r));
  uk_reduction_destroy(r);

  /* the checker itself: NULL texts, the terminator, deep nesting */
  CHECK_OK(uk__defcheck("operation", NULL));
  CHECK_OK(uk__defcheck_fields("a", "(x)", "b", NULL, "c", "[y]", (const char *)NULL));
  CHECK_STATUS(uk__defcheck_fields("a", "(x)", "b", "y]", (const char *)NULL), UK_ERR_SYNTAX);
  CHECK_CONTAINS(uk_last_error(), "b:1:2: unmatched ']'");
  char deep[1200];
  memset(deep, '(', 600);
  memset(deep + 600, ')', 600);
  deep[1199] = '\0';
  deep[599] = 'x';
  deep[600] = ')';
  CHECK_STATUS(uk__defcheck("operation", deep), UK_ERR_SYNTAX);
  CHECK_CONTAINS(uk_last_error(), "operation:1:257: brackets nested deeper than 256");
  uk_context_destroy(ctx);
  return ut_finish("test_defcheck");
}
