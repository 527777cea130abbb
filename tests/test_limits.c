/* The limits of ukern.h (UK_MAX_FUSE_DEPTH, UK_MAX_FUSE_INPUTS,
 * UK_MAX_PARAMETERS) and inputs far past them: each is a clean error with
 * its position and the limit's name, a program at the limit works, and
 * what has no limit (statement chains, built programs) works at sizes that
 * overflowed the C stack when the stages recursed: those run on a thread
 * with a 256 KiB stack, where a recursion over 12,000 nodes does not fit.
 * Times nothing. No GPU, no NVRTC: sources come from a context with an
 * arch. */
#include <pthread.h>

#include "testutil.h"

enum { CHAIN = 12000 }; /* nodes of the chains */

static uk_context *ctx;

/* A growing string. */
typedef struct text {
  char *s;
  size_t len, cap;
} text;

static void put(text *t, const char *s) {
  size_t n = strlen(s);
  if (t->len + n + 1 > t->cap) {
    t->cap = 2 * (t->len + n + 1);
    t->s = realloc(t->s, t->cap);
    if (!t->s) abort();
  }
  memcpy(t->s + t->len, s, n + 1);
  t->len += n;
}

static void putn(text *t, const char *s, long n) {
  for (long k = 0; k < n; k++) put(t, s);
}

static uk_status create(const char *ins, const char *outs, const char *prog, uk_fusion **f) {
  *f = NULL;
  return uk_fusion_create(ctx, &(uk_fusion_spec){.inputs = ins, .outputs = outs, .program = prog, .name = "t"}, f);
}

/* The source of f for one float32 array x (shape (3, 5)) and scalars. */
static uk_status source_of(uk_fusion *f, int nin, const uk_arg *extra, char **src) {
  static const int64_t shape[2] = {3, 5};
  uk_array x, out;
  memset(&x, 0, sizeof x);
  memset(&out, 0, sizeof out);
  uk_array_init(&x, 256, UK_FLOAT32, 2, shape);
  uk_arg in[4] = {uk_arg_array(&x)};
  for (int k = 1; k < nin; k++) in[k] = extra[k - 1];
  *src = NULL;
  return uk_fusion_source(f, in, nin, &out, 1, NULL, src);
}

/* "z = " + open*n + "x" + close*n: works at n == UK_MAX_FUSE_DEPTH (and
 * its source too), fails one deeper and far deeper with the position of
 * the first token past the limit. */
static void depth_case(const char *open, const char *close, long per_level, long at) {
  for (long n = UK_MAX_FUSE_DEPTH - 1; n <= UK_MAX_FUSE_DEPTH + 1; n++) {
    text t = {0};
    put(&t, "z = ");
    putn(&t, open, n);
    put(&t, "x");
    putn(&t, close, n);
    uk_fusion *f;
    uk_status s = create("x", "z", t.s, &f);
    if (n <= UK_MAX_FUSE_DEPTH) {
      CHECK_OK(s);
      char *src = NULL;
      CHECK_OK(source_of(f, 1, NULL, &src));
      CHECK(src && strstr(src, "out0"));
      uk_free(src);
      uk_fusion_destroy(f);
    } else {
      CHECK_STATUS(s, UK_ERR_SYNTAX);
      char want[128];
      snprintf(want, sizeof want, "program:1:%ld: expression nested deeper than %d levels (UK_MAX_FUSE_DEPTH)",
               5 + per_level * UK_MAX_FUSE_DEPTH + at, UK_MAX_FUSE_DEPTH);
      CHECK_CONTAINS(uk_last_error(), want);
      CHECK_CONTAINS(uk_last_error(), "\nassign inner parts to temporaries (t = ...) first");
    }
    free(t.s);
  }
}

/* Issue 22 item 1's inputs: each a clean UK_ERR_SYNTAX, not a crash. */
static void deep_text(void) {
  depth_case("(", ")", 1, 0);
  depth_case("-", "", 1, 0);
  depth_case("x ** ", "", 5, 2); /* at the '**' */
  depth_case("exp(", ")", 4, 0);
  static const struct {
    const char *open, *close;
    long n;
  } far[] = {{"(", ")", 10000}, {"-", "", 100000}, {"~", "", 100000}, {"x ** ", "", 100000}, {"- +", "", 50000}};
  for (size_t j = 0; j < sizeof far / sizeof far[0]; j++) {
    text t = {0};
    put(&t, "z = ");
    putn(&t, far[j].open, far[j].n);
    put(&t, "x");
    putn(&t, far[j].close, far[j].n);
    uk_fusion *f = (uk_fusion *)0x1;
    CHECK_STATUS(
        uk_fusion_create(ctx, &(uk_fusion_spec){.inputs = "x", .outputs = "z", .program = t.s, .name = "t"}, &f),
        UK_ERR_SYNTAX);
    CHECK(f == (uk_fusion *)0x1);
    CHECK_CONTAINS(uk_last_error(), "nested deeper than 200 levels (UK_MAX_FUSE_DEPTH)");
    free(t.s);
  }
  /* levels end with their expression: many shallow ones in a row are fine */
  text t = {0};
  put(&t, "z = x");
  putn(&t, " + (-(x ** 2))", 5000);
  uk_fusion *f;
  CHECK_OK(create("x", "z", t.s, &f));
  uk_fusion_destroy(f);
  free(t.s);
}

/* N chained statements: linear parse (hashed names), and a source with no
 * recursion over the chain. */
static void statement_chain(void) {
  enum { N = CHAIN };
  text t = {0};
  char line[64];
  put(&t, "t0 = x\n");
  for (int k = 1; k < N; k++) {
    snprintf(line, sizeof line, "t%d = t%d * 0.5 + 1\n", k, k - 1);
    put(&t, line);
  }
  snprintf(line, sizeof line, "z = t%d\nt0 = 1\n", N - 1); /* rebinding after use: z keeps its value */
  put(&t, line);
  uk_fusion *f;
  CHECK_OK(create("x", "z", t.s, &f));
  char *src = NULL;
  CHECK_OK(source_of(f, 1, NULL, &src));
  char want[32];
  snprintf(want, sizeof want, "_uk_v%d = ", 4 * (N - 1)); /* x, then 0.5, *, 1, + per statement */
  CHECK(src && strstr(src, "_uk_v2 = ") && strstr(src, want) && strstr(src, "out0"));
  uk_free(src);
  uk_fusion_destroy(f);
  free(t.s);
  /* assigning to an input is still found (hashed names) */
  uk_fusion *g = (uk_fusion *)0x1;
  CHECK_STATUS(
      uk_fusion_create(
          ctx, &(uk_fusion_spec){.inputs = "a, x", .outputs = "z", .program = "t = a\nz = t\nx = 2", .name = "t"}, &g),
      UK_ERR_SYNTAX);
  CHECK_CONTAINS(uk_last_error(), "program:3:1: cannot assign to an input");
  CHECK(g == (uk_fusion *)0x1);
}

/* A long builder chain: built, planned and emitted without
 * recursion, as a kernel chain, a constant chain (the weak-int value is
 * folded along it) and under a row reduction (the row plan's walks). */
static void builder_chains(void) {
  enum { N = CHAIN };
  uk_fusion_builder *b;
  CHECK_OK(uk_fusion_builder_create("x", &b));
  int v = uk_fusion_input(b, "x");
  for (int k = 0; k < N; k++) v = uk_fusion_op(b, k % 2 ? "negative" : "sin", &v, 1);
  CHECK(v == N);
  CHECK_OK(uk_fusion_output(b, "z", v));
  uk_fusion *f = NULL;
  CHECK_OK(uk_fusion_create(ctx, &(uk_fusion_spec){.builder = b, .name = "chain"}, &f));
  char *src = NULL;
  CHECK_OK(source_of(f, 1, NULL, &src));
  char want[32];
  snprintf(want, sizeof want, "_uk_v%d = ", N);
  CHECK(src && strstr(src, want));
  uk_free(src);
  uk_fusion_destroy(f);
  uk_fusion_builder_destroy(b);

  /* c = ((0 + 1) + 1) ... N times: a Python int of N, too big for int8 */
  CHECK_OK(uk_fusion_builder_create("x", &b));
  int one = uk_fusion_const_int(b, 1), c = uk_fusion_const_int(b, 0);
  for (int k = 0; k < N; k++) c = uk_fusion_op(b, "add", (int[]){c, one}, 2);
  int x = uk_fusion_input(b, "x");
  CHECK_OK(uk_fusion_output(b, "z", uk_fusion_op(b, "add", (int[]){uk_fusion_cast(b, x, UK_INT8), c}, 2)));
  CHECK_OK(uk_fusion_create(ctx, &(uk_fusion_spec){.builder = b, .name = "folded"}, &f));
  CHECK_STATUS(source_of(f, 1, NULL, &src), UK_ERR_TYPE);
  CHECK_CONTAINS(uk_last_error(), "Python integer 12000 out of bounds for int8");
  uk_fusion_destroy(f);
  uk_fusion_builder_destroy(b);

  /* t = x + 1 + 1 ...; z = t - max(t, axis=-1, keepdims=True): a row plan */
  CHECK_OK(uk_fusion_builder_create("x", &b));
  int t = uk_fusion_input(b, "x");
  one = uk_fusion_const_float(b, 1.0);
  for (int k = 0; k < N; k++) t = uk_fusion_op(b, "add", (int[]){t, one}, 2);
  int m = uk_fusion_reduce(b, "max", t, (int[]){-1}, 1, 1, 0);
  CHECK_OK(uk_fusion_output(b, "z", uk_fusion_op(b, "subtract", (int[]){t, m}, 2)));
  CHECK_OK(uk_fusion_create(ctx, &(uk_fusion_spec){.builder = b, .name = "rows"}, &f));
  CHECK_OK(source_of(f, 1, NULL, &src));
  CHECK(src && strstr(src, "_uk_v"));
  uk_free(src);
  uk_fusion_destroy(f);
  uk_fusion_builder_destroy(b);
}

/* "x0, x1, ..." of n names */
static char *names(const char *prefix, int n) {
  text t = {0};
  char one[32];
  for (int k = 0; k < n; k++) {
    snprintf(one, sizeof one, "%s%s%d", k ? ", " : "", prefix, k);
    put(&t, one);
  }
  return t.s;
}

static void fusion_counts(void) {
  char *ok = names("x", UK_MAX_FUSE_INPUTS), *over = names("x", UK_MAX_FUSE_INPUTS + 1), *far = names("x", 20000);
  uk_fusion *f;
  CHECK_OK(create(ok, "z", "z = x0 + x63", &f));
  uk_fusion_destroy(f);
  /* refused at the 65th name: "x0, ..., x63, " is 10 * 2 + 54 * 3 + 64 * 2 = 310 bytes */
  const char *lists[] = {over, far};
  for (int j = 0; j < 2; j++) {
    f = (uk_fusion *)0x1;
    CHECK_STATUS(uk_fusion_create(
                     ctx, &(uk_fusion_spec){.inputs = lists[j], .outputs = "z", .program = "z = x0", .name = "t"}, &f),
                 UK_ERR_INVALID);
    CHECK_CONTAINS(uk_last_error(), "inputs:1:311: more than 64 names (UK_MAX_FUSE_INPUTS)");
    CHECK(f == (uk_fusion *)0x1);
    CHECK_STATUS(uk_fusion_create(
                     ctx, &(uk_fusion_spec){.inputs = "x", .outputs = lists[j], .program = "z = x0", .name = "t"}, &f),
                 UK_ERR_INVALID);
    CHECK_CONTAINS(uk_last_error(), "outputs:1:311: more than 64 names (UK_MAX_FUSE_INPUTS)");
    uk_fusion_builder *b = (uk_fusion_builder *)0x1;
    CHECK_STATUS(uk_fusion_builder_create(lists[j], &b), UK_ERR_INVALID);
    CHECK(b == (uk_fusion_builder *)0x1);
  }
  /* builder outputs: the 65th is refused, and the error sticks */
  uk_fusion_builder *b;
  CHECK_OK(uk_fusion_builder_create("x", &b));
  int x = uk_fusion_input(b, "x");
  char name[16];
  for (int k = 0; k < UK_MAX_FUSE_INPUTS; k++) {
    snprintf(name, sizeof name, "o%d", k);
    CHECK_OK(uk_fusion_output(b, name, x));
  }
  CHECK_STATUS(uk_fusion_output(b, "one_more", x), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "uk_fusion_output: more than 64 outputs (UK_MAX_FUSE_INPUTS)");
  CHECK_STATUS(uk_fusion_create(ctx, &(uk_fusion_spec){.builder = b, .name = "t"}, &f), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "more than 64 outputs");
  uk_fusion_builder_destroy(b);
  free(ok);
  free(over);
  free(far);
}

/* "T x0, T x1, ..." of n parameters */
static char *params(int n) {
  text t = {0};
  char one[32];
  for (int k = 0; k < n; k++) {
    snprintf(one, sizeof one, "%sT x%d", k ? ", " : "", k);
    put(&t, one);
  }
  return t.s;
}

static void parameter_counts(void) {
  char *at = params(UK_MAX_PARAMETERS - 1), *full = params(UK_MAX_PARAMETERS),
       *over = params(UK_MAX_PARAMETERS + 1), *far = params(20000);
  uk_elementwise *e = NULL;
  CHECK_OK(uk_elementwise_create(
      ctx, &(uk_elementwise_spec){.in_params = at, .out_params = "T y", .operation = "y = x0", .name = "k"}, &e));
  uk_elementwise_destroy(e);
  /* 64 inputs and an output: the total is over */
  e = (uk_elementwise *)0x1;
  CHECK_STATUS(
      uk_elementwise_create(
          ctx, &(uk_elementwise_spec){.in_params = full, .out_params = "T y", .operation = "y = x0", .name = "k"}, &e),
      UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "too many parameters (65; UK_MAX_PARAMETERS is 64)");
  /* one list past the limit: refused at its 65th parameter, before the rest is read
   * ("T x0, ..., T x63, " is 10 * 4 + 54 * 5 + 64 * 2 = 438 bytes) */
  const char *lists[] = {over, far};
  for (int j = 0; j < 2; j++) {
    CHECK_STATUS(
        uk_elementwise_create(
            ctx, &(uk_elementwise_spec){.in_params = lists[j], .out_params = "T y", .operation = "y = x0", .name = "k"},
            &e),
        UK_ERR_INVALID);
    CHECK_CONTAINS(uk_last_error(), "in_params:1:439: too many parameters (more than UK_MAX_PARAMETERS, 64)");
    CHECK_STATUS(
        uk_elementwise_create(
            ctx, &(uk_elementwise_spec){.in_params = "T y", .out_params = lists[j], .operation = "x0 = y", .name = "k"},
            &e),
        UK_ERR_INVALID);
    CHECK_CONTAINS(uk_last_error(), "out_params:1:439: too many parameters");
    CHECK(e == (uk_elementwise *)0x1);
  }
  free(at);
  free(full);
  free(over);
  free(far);
}

/* Inputs that broadcast past int64: UK_ERR_SHAPE at the operation, before
 * any plan multiplies the extents (the row plan's rows included). */
static void broadcast_overflow(void) {
  int64_t a[2] = {(int64_t)1 << 40, 1}, b[2] = {1, (int64_t)1 << 40}, e[3] = {0, 1, (int64_t)1 << 40};
  uk_array x, y, z, out;
  memset(&out, 0, sizeof out);
  CHECK_OK(uk_array_init(&x, 256, UK_FLOAT32, 2, a));
  CHECK_OK(uk_array_init(&y, 512, UK_FLOAT32, 2, b));
  CHECK_OK(uk_array_init(&z, 768, UK_FLOAT32, 3, e));
  static const char *const progs[] = {"z = x + y", "t = x + y\nz = t - max(t, axis=-1, keepdims=True)"};
  for (int j = 0; j < 2; j++) {
    uk_fusion *f;
    CHECK_OK(create("x, y", "z", progs[j], &f));
    uk_arg in[2] = {uk_arg_array(&x), uk_arg_array(&y)};
    char *src = NULL;
    CHECK_STATUS(uk_fusion_source(f, in, 2, &out, 1, NULL, &src), UK_ERR_SHAPE);
    CHECK_CONTAINS(uk_last_error(), "the shape (1099511627776, 1099511627776) has too many elements for 64-bit");
    CHECK(src == NULL);
    /* an empty broadcast is fine however large its other extents */
    in[1] = uk_arg_array(&z);
    CHECK_OK(uk_fusion_source(f, in, 2, &out, 1, NULL, &src));
    uk_free(src);
    uk_fusion_destroy(f);
  }
}

/* t_k = t_(k-1) - sum(t_(k-1), axis=0, keepdims=True), n times: kernel k
 * reads x and k - 1 sums. 14 levels run (the last kernel has 16 array
 * operands, UK_MAX_ARRAY_OPERANDS; more is refused per call). Past
 * UK_MAX_PARAMETERS it is refused while planned (not by the kernels made
 * from the plan, "a ukern bug"), before the rest of a long chain is
 * planned: 1,000 levels took seconds of quadratic planning. */
static void reduction_chain(void) {
  static const int n[] = {14, 64, 1000};
  for (int j = 0; j < 3; j++) {
    text t = {0};
    char line[96];
    put(&t, "t0 = x\n");
    for (int k = 1; k <= n[j]; k++) {
      snprintf(line, sizeof line, "t%d = t%d - sum(t%d, axis=0, keepdims=True)\n", k, k - 1, k - 1);
      put(&t, line);
    }
    snprintf(line, sizeof line, "z = t%d\n", n[j]);
    put(&t, line);
    uk_fusion *f;
    CHECK_OK(create("x", "z", t.s, &f));
    char *src = NULL;
    if (n[j] == 14) {
      CHECK_OK(source_of(f, 1, NULL, &src));
    } else {
      CHECK_STATUS(source_of(f, 1, NULL, &src), UK_ERR_INVALID);
      CHECK_STREQ(uk_last_error(), "fusion: a kernel of the plan reads more than 63 inputs and intermediates "
                                   "(UK_MAX_PARAMETERS is 64); split the program into several fusions");
    }
    uk_free(src);
    uk_fusion_destroy(f);
    free(t.s);
  }
}

/* t_k = sum(t_(k-1), axis=0, keepdims=True): a kernel per level, planning
 * grew with the square of the levels; UK_MAX_FUSE_KERNELS bounds it. */
static void kernel_count_limit(void) {
  static const int n[] = {UK_MAX_FUSE_KERNELS - 1, UK_MAX_FUSE_KERNELS, 20000};
  for (int j = 0; j < 3; j++) {
    text t = {0};
    char line[96];
    put(&t, "t0 = x\n");
    for (int k = 1; k <= n[j]; k++) {
      snprintf(line, sizeof line, "t%d = sum(t%d, axis=0, keepdims=True)\n", k, k - 1);
      put(&t, line);
    }
    snprintf(line, sizeof line, "z = t%d\n", n[j]);
    put(&t, line);
    uk_fusion *f;
    CHECK_OK(create("x", "z", t.s, &f));
    int64_t shape[2] = {3, 5};
    uk_array x, out;
    memset(&out, 0, sizeof out);
    CHECK_OK(uk_array_init(&x, 256, UK_FLOAT32, 2, shape));
    uk_arg in = uk_arg_array(&x);
    int count = -1;
    if (j == 0) {
      CHECK_OK(uk_fusion_kernel_count(f, &in, 1, &out, 1, NULL, &count));
      CHECK(count == UK_MAX_FUSE_KERNELS - 1);
    } else {
      CHECK_STATUS(uk_fusion_kernel_count(f, &in, 1, &out, 1, NULL, &count), UK_ERR_INVALID);
      CHECK_CONTAINS(uk_last_error(), "program:1025:9: the plan needs more than 1024 kernels (UK_MAX_FUSE_KERNELS)");
      CHECK(count == -1);
    }
    uk_fusion_destroy(f);
    free(t.s);
  }
}

static void *chains(void *arg) {
  (void)arg;
  statement_chain();
  builder_chains();
  return NULL;
}

int main(void) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = 90;
  o.disable_disk_cache = 1;
  CHECK_OK(uk_context_create(&o, &ctx));
  deep_text();
  broadcast_overflow();
  reduction_chain();
  kernel_count_limit();
  pthread_attr_t attr;
  pthread_t th;
  CHECK(pthread_attr_init(&attr) == 0 && pthread_attr_setstacksize(&attr, 256 * 1024) == 0);
  CHECK(pthread_create(&th, &attr, chains, NULL) == 0 && pthread_join(th, NULL) == 0);
  pthread_attr_destroy(&attr);
  fusion_counts();
  parameter_counts();
  uk_context_destroy(ctx);
  return ut_finish("test_limits");
}
