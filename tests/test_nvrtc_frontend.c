/* Compile errors point at the user's text (issue 9 item 9), through NVRTC
 * (no GPU needed): the log says `operation:1:N`, the field's own name for
 * reductions, and explains internal names. Also compiles the item-7
 * definitions (output loaded first) to make sure they are valid code. */
#include "runtime/nvrtc_log.h"
#include "testutil.h"

static uk_context *ctx;

static uk_array arr1(uint64_t data, int64_t n) {
  uk_array a;
  memset(&a, 0, sizeof a);
  a.data = data;
  a.dtype = UK_FLOAT32;
  a.ndim = 1;
  a.shape[0] = n;
  a.strides[0] = 4;
  return a;
}

/* Precompiles `op` on 1001 floats (aligned: vectorised and tail loops). */
static uk_status ew_compile(const char *op, const char *preamble, const char *prep) {
  uk_elementwise_spec o;
  memset(&o, 0, sizeof o);
  o.preamble = preamble;
  o.loop_prep = prep;
  uk_elementwise *k = NULL;
  o.in_params = "T x";
  o.out_params = "T z";
  o.operation = op;
  o.name = "user_text";
  CHECK_OK(uk_elementwise_create(ctx, &o, &k));
  if (!k) return UK_ERR_INTERNAL;
  uk_array x = arr1(0x10000, 1001), z = arr1(0x20000, 1001);
  uk_arg in = uk_arg_array(&x);
  uk_status st = uk_elementwise_precompile(k, &in, 1, &z, 1, NULL);
  uk_elementwise_destroy(k);
  return st;
}

/* 1 when an error line of the log blames the generated file (user_text:N). */
static int generated_error(const char *log) {
  for (const char *p = log; p && *p;) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (strncmp(p, "user_text:", 10) == 0) {
      for (size_t k = 0; k + 6 <= n; k++)
        if (memcmp(p + k, "error", 5) == 0) return 1;
    }
    p = e ? e + 1 : NULL;
  }
  return 0;
}

static void ew_errors(void) {
  /* the undefined name at column 9 of line 1 */
  CHECK_STATUS(ew_compile("z = x + qq;", NULL, NULL), UK_ERR_COMPILE);
  CHECK_CONTAINS(uk_last_error_log(), "operation:1:9: error: identifier \"qq\" is undefined");
  CHECK_CONTAINS(uk_last_error(), "operation:1:9: error: identifier \"qq\" is undefined");
  /* line 2, first line indented, a tab before the error */
  CHECK_STATUS(ew_compile("\n  float t = x;\n\tz = t + qq", NULL, NULL), UK_ERR_COMPILE);
  CHECK_CONTAINS(uk_last_error_log(), "operation:3:10: error: identifier \"qq\" is undefined");
  CHECK_STATUS(ew_compile("z = x", "__device__ float f() { return qq; }", NULL), UK_ERR_COMPILE);
  CHECK_CONTAINS(uk_last_error_log(), "preamble:1:31: error: identifier \"qq\" is undefined");
  CHECK_STATUS(ew_compile("z = x", NULL, "int n = qq;"), UK_ERR_COMPILE);
  CHECK_CONTAINS(uk_last_error_log(), "loop_prep:1:9: error: identifier \"qq\" is undefined");
  /* no line of the generated file is blamed for the user's mistake */
  CHECK(!generated_error(uk_last_error_log()));
  /* an internal name says what it stands for (the vector exists only in the vectorised loop) */
  CHECK_STATUS(ew_compile("z = x + _uk_v_x[0]", NULL, NULL), UK_ERR_COMPILE);
  CHECK_CONTAINS(uk_last_error_log(),
                 "operation:1:9: error: identifier \"_uk_v_x\" is undefined [_uk_v_x: ukern's name for 'x']");
  CHECK(!generated_error(uk_last_error_log()));
}

static void red_errors(void) {
  uk_reduction_spec s;
  memset(&s, 0, sizeof s);
  s.in_params = "T x";
  s.out_params = "T y";
  s.map_expr = "x * qq";
  s.reduce_expr = "a + b";
  s.post_map_expr = "y = a";
  s.identity = "0";
  s.name = "red_text";
  const char *fields[] = {"map_expr", "reduce_expr", "post_map_expr", "identity"};
  const char *wants[] = {"map_expr:1:5: error: identifier \"qq\" is undefined",
                         "reduce_expr:1:7: error: identifier \"qq\" is undefined",
                         "post_map_expr:1:9: error: identifier \"qq\" is undefined",
                         "identity:1:1: error: identifier \"qq\" is undefined"};
  for (int f = 0; f < 4; f++) {
    s.map_expr = f == 0 ? "x * qq" : "x";
    s.reduce_expr = f == 1 ? "a + b*qq" : "a + b";
    s.post_map_expr = f == 2 ? "y = a + qq" : "y = a";
    s.identity = f == 3 ? "qq" : "0";
    uk_reduction *r = NULL;
    CHECK_OK(uk_reduction_create(ctx, &s, &r));
    if (!r) continue;
    uk_array x = arr1(0x10000, 1001), y;
    memset(&y, 0, sizeof y);
    y.data = 0x20000;
    y.dtype = UK_FLOAT32;
    uk_arg in = uk_arg_array(&x);
    CHECK_STATUS(uk_reduction_precompile(r, &in, 1, &y, 1, NULL), UK_ERR_COMPILE);
    CHECK_CONTAINS(uk_last_error_log(), wants[f]);
    if (!strstr(uk_last_error_log(), wants[f])) fprintf(stderr, "  (field %s)\n", fields[f]);
    uk_reduction_destroy(r);
  }
}

/* The rewriting itself on a fixed log. */
static void log_rewrite(void) {
  char *log = strdup("operation(2): error: identifier \"_uk_v_z\" is undefined\n"
                     "      z = _uk_v_z + _uk_k + _uk_v_z;\n"
                     "          ^\n\n"
                     "k(40): warning: _uk_ks_xy_12 and _uk_s_x_0 unused\n"
                     "no(header: here\n"
                     "2 errors detected in the compilation of \"k\".\n");
  uk__nvrtc_log_readable(&log);
  CHECK_STREQ(log, "operation:2:9: error: identifier \"_uk_v_z\" is undefined [_uk_v_z: ukern's name for 'z']\n"
                   "      z = _uk_v_z + _uk_k + _uk_v_z;\n"
                   "          ^\n\n"
                   "k:40: warning: _uk_ks_xy_12 and _uk_s_x_0 unused [_uk_ks_xy_12: ukern's name for 'xy'] "
                   "[_uk_s_x_0: ukern's name for 'x']\n"
                   "no(header: here\n"
                   "2 errors detected in the compilation of \"k\".\n");
  free(log);
  log = strdup("");
  uk__nvrtc_log_readable(&log);
  CHECK_STREQ(log, "");
  free(log);
  uk__nvrtc_log_readable(NULL);
}

/* Item 7's definitions compile (and load the output). */
static void loaded_outputs_compile(void) {
  CHECK_OK(ew_compile("BEGIN_POS; z = 2 * x; END", "#define BEGIN_POS if (x > 0) {\n#define END }", NULL));
  CHECK_OK(ew_compile("// twice \\\nz = 2 * x", NULL, NULL));
  CHECK_OK(ew_compile("z = 2 * x; // a comment\n", NULL, NULL));
}

int main(void) {
  uk_options opts;
  memset(&opts, 0, sizeof opts);
  opts.arch = 90;
  opts.disable_disk_cache = 1;
  log_rewrite();
  CHECK_OK(uk_context_create(&opts, &ctx));
  if (!ctx) return ut_finish("test_nvrtc_frontend");
  ew_errors();
  red_errors();
  loaded_outputs_compile();
  uk_context_destroy(ctx);
  return ut_finish("test_nvrtc_frontend");
}
