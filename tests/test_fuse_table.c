/* Result dtypes of the fusion language against NumPy 2's, from the table that
 * tests/data/gen_fusion_table.py writes (every binary operator x every pair
 * of the 15 dtypes and each with a weak Python int, float and complex;
 * unary functions; reductions; bfloat16 from ml_dtypes, but for a weak
 * Python float, which ml_dtypes promotes to float32 unlike NEP 50). Typing runs through the real
 * parser and planner. Complex operands of functions ukern does not provide
 * for complex (arcsin, ...) must be UK_ERR_TYPE, and are counted. */
#include "codegen/dtype.h"
#include "codegen/fuse_ir.h"
#include "codegen/fuse_plan.h"
#include "testutil.h"

static int rows, unsupported_complex;

static uk_fuse_type parse_type(const char *s, int *is_array) {
  uk_fuse_type t = {UK_BOOL, 0};
  *is_array = s[0] != '@';
  if (!strcmp(s, "@int")) t.dtype = UK_INT64, t.weak = 1;
  else if (!strcmp(s, "@float")) t.dtype = UK_FLOAT64, t.weak = 1;
  else if (!strcmp(s, "@complex")) t.dtype = UK_COMPLEX128, t.weak = 1;
  else if (uk_dtype_from_name(s, &t.dtype) != UK_OK) {
    fprintf(stderr, "bad dtype '%s' in the table\n", s);
    exit(1);
  }
  return t;
}

static void check_row(const char *kind, const char *fn, const char *a, const char *b, const char *want) {
  char text[128];
  int binop = !strcmp(kind, "binop"), is_op = binop && !(fn[0] >= 'a' && fn[0] <= 'z');
  if (is_op) snprintf(text, sizeof text, "c = a %s b", fn);
  else if (binop) snprintf(text, sizeof text, "c = %s(a, b)", fn);
  else snprintf(text, sizeof text, "c = %s(a)", fn);
  uk_fuse_prog *g = NULL;
  uk_status s = uk__fuse_parse(binop ? "a, b" : "a", "c", text, &g);
  if (s) {
    ut_checks++;
    ut_failures++;
    fprintf(stderr, "parse '%s': %s\n", text, uk_last_error());
    return;
  }
  uk_fuse_sig sig;
  memset(&sig, 0, sizeof sig);
  sig.nin = binop ? 2 : 1;
  int arr;
  sig.in[0] = parse_type(a, &arr);
  sig.is_array[0] = 1;
  sig.ndim[0] = strcmp(kind, "red") ? 1 : 2;
  if (binop) {
    sig.in[1] = parse_type(b, &arr);
    sig.is_array[1] = (unsigned char)arr;
    sig.ndim[1] = (unsigned char)arr;
  }
  sig.nout = 1;
  uk_fuse_plan *p = NULL;
  s = uk__fuse_plan(g, &sig, "t", NULL, &p);
  const char *got = s == UK_OK ? uk_dtype_name(p->out_dtype[0]) : "error";
  rows++;
  ut_checks++;
  int cx = uk__dtype_info(sig.in[0].dtype)->kind == UK_KIND_COMPLEX ||
           (binop && uk__dtype_info(sig.in[1].dtype)->kind == UK_KIND_COMPLEX);
  if (s == UK_ERR_TYPE && cx && strcmp(want, "error") != 0 && strstr(uk_last_error(), "complex")) {
    unsupported_complex++;
  } else if (strcmp(got, want) != 0) {
    ut_failures++;
    fprintf(stderr, "%s %s %s %s: got %s, NumPy gives %s%s%s\n", kind, fn, a, binop ? b : "", got, want,
            s ? ": " : "", s ? uk_last_error() : "");
  }
  uk__fuse_plan_free(p);
  uk__fuse_prog_free(g);
}

int main(void) {
  const char *dir = getenv("UKERN_TEST_DATA");
  char path[4096];
  snprintf(path, sizeof path, "%s/data/fusion_table.txt", dir ? dir : "tests");
  FILE *fp = fopen(path, "r");
  if (!fp) {
    fprintf(stderr, "cannot open %s\n", path);
    return 1;
  }
  char line[8192];
  while (fgets(line, sizeof line, fp)) {
    char kind[16], fn[32], a[32], b[32], want[32];
    if (line[0] == '#') continue;
    if (sscanf(line, "binop %31s %31s %31s %31s", fn, a, b, want) == 4) check_row("binop", fn, a, b, want);
    else if (sscanf(line, "unary %31s %31s %31s", fn, a, want) == 3) check_row("unary", fn, a, "", want);
    else if (sscanf(line, "red %31s %31s %31s", fn, a, want) == 3) check_row("red", fn, a, "", want);
    (void)kind;
  }
  fclose(fp);
  printf("%d table rows checked; %d complex cases ukern does not provide (UK_ERR_TYPE)\n", rows,
         unsupported_complex);
  CHECK(rows > 5000);
  return ut_finish("test_fuse_table");
}
