/* Status table, error detail, dtype table, string builder. */
#include <limits.h>
#include <stdio.h>

#include "base/error.h"
#include "base/nametab.h"
#include "base/strbuf.h"
#include "codegen/dtype.h"
#include "testutil.h"

static void test_status_table(void) {
  CHECK_STREQ(uk_status_name(UK_OK), "UK_OK");
  CHECK_STREQ(uk_status_name(UK_ERR_COMPILE), "UK_ERR_COMPILE");
  CHECK_STREQ(uk_status_name(UK_ERR_INTERNAL), "UK_ERR_INTERNAL");
  CHECK_STREQ(uk_status_name((uk_status)999), "UK_UNKNOWN_STATUS");
  CHECK_STREQ(uk_status_message(UK_ERR_NO_DEVICE), "no CUDA driver or device");
  CHECK(UK_OK == 0 && UK_ERR_NOMEM == 1 && UK_ERR_INTERNAL == 11);
  for (int s = 0; s < UK_STATUS_COUNT_; s++) {
    CHECK(strncmp(uk_status_name((uk_status)s), "UK_", 3) == 0);
    CHECK(strlen(uk_status_message((uk_status)s)) > 3);
  }
}

static void test_errors(void) {
  CHECK_STREQ(uk_last_error(), "");
  CHECK(uk__errorf(UK_ERR_TYPE, "bad %s %d", "thing", 7) == UK_ERR_TYPE);
  CHECK_STREQ(uk_last_error(), "bad thing 7");
  uk__error_prefix("while %s", "testing");
  CHECK_STREQ(uk_last_error(), "while testing: bad thing 7");
  uk__errorf_log(UK_ERR_COMPILE, "the log", "failed");
  CHECK_STREQ(uk_last_error_log(), "the log");
  uk__error_at(UK_ERR_SYNTAX, "in_params", "T x, raw T", 10, NULL,
               "expected a parameter name after type '%s'", "T");
  CHECK_STREQ(uk_last_error(),
              "in_params:1:11: expected a parameter name after type 'T'\n    T x, raw T\n              ^");
  CHECK_STREQ(uk_last_error_log(), "");
  uk__error_at(UK_ERR_SYNTAX, "op", "a;\nb c", 5, "hint: here", "bad");
  CHECK_STREQ(uk_last_error(), "op:2:3: bad\n    b c\n      ^\nhint: here");
  uk__error_clear();
  CHECK_STREQ(uk_last_error(), "");
}

static void test_dtypes(void) {
  struct {
    const char *name;
    uk_dtype t;
  } names[] = {{"float32", UK_FLOAT32}, {"f4", UK_FLOAT32},   {"float", UK_FLOAT64},
               {"double", UK_FLOAT64},  {"f8", UK_FLOAT64},   {"int", UK_INT64},
               {"i8", UK_INT64},        {"i4", UK_INT32},     {"int8", UK_INT8},
               {"u1", UK_UINT8},        {"uint64", UK_UINT64}, {"bool", UK_BOOL},
               {"b1", UK_BOOL},         {"float16", UK_FLOAT16}, {"f2", UK_FLOAT16},
               {"half", UK_FLOAT16},    {"bfloat16", UK_BFLOAT16}, {"complex64", UK_COMPLEX64},
               {"c8", UK_COMPLEX64},    {"c16", UK_COMPLEX128}, {"complex128", UK_COMPLEX128}};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
    uk_dtype t = UK_DTYPE_COUNT_;
    CHECK_OK(uk_dtype_from_name(names[k].name, &t));
    CHECK(t == names[k].t);
  }
  size_t sizes[UK_DTYPE_COUNT_] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16};
  for (int t = 0; t < UK_DTYPE_COUNT_; t++) {
    CHECK(uk_dtype_size((uk_dtype)t) == sizes[t]);
    uk_dtype back;
    CHECK_OK(uk_dtype_from_name(uk_dtype_name((uk_dtype)t), &back));
    CHECK(back == (uk_dtype)t);
  }
  uk_dtype t = UK_INT8;
  CHECK_STATUS(uk_dtype_from_name("flaot32", &t), UK_ERR_TYPE);
  CHECK(t == UK_INT8); /* out untouched on failure */
  CHECK_STREQ(uk_last_error(), "unknown dtype 'flaot32' (did you mean 'float32'?)");
  CHECK_STATUS(uk_dtype_from_name("unit8", &t), UK_ERR_TYPE);
  CHECK_STREQ(uk_last_error(), "unknown dtype 'unit8' (did you mean 'uint8'?)");
  CHECK(uk_dtype_name(UK_DTYPE_COUNT_) == NULL);
  CHECK(uk_dtype_size((uk_dtype)-1) == 0);
}

static void test_strbuf(void) {
  uk_strbuf sb;
  uk__sb_init(&sb);
  CHECK_STREQ(uk__sb_str(&sb), "");
  for (int k = 0; k < 1000; k++) uk__sb_addf(&sb, "%d,", k % 10);
  CHECK(sb.len == 2000);
  uk__sb_reset(&sb);
  char big[600];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = 0;
  uk__sb_addf(&sb, "<%s>", big);
  CHECK(sb.len == 601 && sb.buf[0] == '<' && sb.buf[600] == '>');
  uk__sb_reset(&sb);
  uk__sb_add_numbered(&sb, "a\nb");
  CHECK_STREQ(uk__sb_str(&sb), "    1 | a\n    2 | b\n");
  char *s = uk__sb_detach(&sb);
  CHECK(s && sb.buf == NULL);
  uk_free(s);
}

/* uk__sb_addf's own conversions ("%s", "%d", "%.*s", "%c", "%lld", "%zu",
 * "%%", ...) against snprintf, at the edges of each type; other formats go
 * to vsnprintf and must come out the same too. */
#define SAME_AS_SNPRINTF(...)                                                                                       \
  do {                                                                                                             \
    char want[512];                                                                                                \
    int n = snprintf(want, sizeof want, __VA_ARGS__);                                                              \
    uk_strbuf b;                                                                                                   \
    uk__sb_init(&b);                                                                                               \
    uk__sb_add(&b, "pre:");                                                                                        \
    uk__sb_addf(&b, __VA_ARGS__);                                                                                  \
    CHECK(n >= 0 && b.len == 4 + (size_t)n && memcmp(b.buf + 4, want, (size_t)n) == 0);                           \
    if (b.len != 4 + (size_t)n || memcmp(b.buf + 4, want, (size_t)n) != 0)                                          \
      fprintf(stderr, "format %s: got '%s', want '%s'\n", #__VA_ARGS__, b.buf ? b.buf + 4 : "", want);             \
    uk__sb_release(&b);                                                                                            \
  } while (0)

static void test_strbuf_formats(void) {
  static const long long ll[] = {0, 1, -1, 9, 10, -10, 123456789, INT_MAX, INT_MIN, LLONG_MAX, LLONG_MIN};
  for (size_t k = 0; k < sizeof ll / sizeof *ll; k++) {
    SAME_AS_SNPRINTF("%lld", ll[k]);
    SAME_AS_SNPRINTF("a%lldb%llu", ll[k], (unsigned long long)ll[k]);
    SAME_AS_SNPRINTF("%ld|%lu|%li", (long)ll[k], (unsigned long)ll[k], (long)ll[k]);
    SAME_AS_SNPRINTF("%zu", (size_t)ll[k]);
    SAME_AS_SNPRINTF("%d %i %u", (int)ll[k], (int)(ll[k] >> 3), (unsigned)ll[k]);
    SAME_AS_SNPRINTF("%5d|%-4d|%x|%g", (int)ll[k], (int)ll[k], (unsigned)ll[k], (double)ll[k]); /* vsnprintf's */
  }
  SAME_AS_SNPRINTF("no conversion at all");
  SAME_AS_SNPRINTF("100%% %s%c%s", "sure", '!', "");
  SAME_AS_SNPRINTF("typedef %s %c;", "float", 'T');
  SAME_AS_SNPRINTF("%c", 0); /* a NUL byte is written and counted */
  SAME_AS_SNPRINTF("[%.*s]", 3, "abcdef");
  SAME_AS_SNPRINTF("[%.*s]", 0, "abcdef");
  SAME_AS_SNPRINTF("[%.*s]", 10, "abc");
  SAME_AS_SNPRINTF("[%.*s]", -1, "abcdef");
  SAME_AS_SNPRINTF("%s|%.*s|%d%%", "x", 2, "yz!", 7);
  SAME_AS_SNPRINTF("%5s|%.2s|%+d|%02x|%.17g", "ab", "abc", 3, 10u, 0.1); /* vsnprintf's */
  char big[700];
  memset(big, 'q', sizeof big - 1);
  big[sizeof big - 1] = 0;
  uk_strbuf b;
  uk__sb_init(&b);
  uk__sb_addf(&b, "<%s|%d>", big, -42);
  CHECK(b.len == 699 + 6 && b.buf[0] == '<' && b.buf[700] == '|' && strcmp(b.buf + 701, "-42>") == 0);
  uk__sb_release(&b);
}

/* The name table against a plain list: spans (not strings) as keys,
 * first put wins, growth keeps every entry, prefixes are other names. */
static void test_nametab(void) {
  uk_nametab t = {0};
  CHECK(uk__nametab_find(&t, "x", 1) == NULL);
  enum { N = 5000 };
  static char names[N][12];
  for (int k = 0; k < N; k++) {
    snprintf(names[k], sizeof names[k], "n%dz", k);
    int added = -1;
    int *v = uk__nametab_put(&t, names[k], strlen(names[k]) - 1, k, &added); /* "n<k>", without the z */
    CHECK(v && *v == k && added == 1);
  }
  CHECK(t.count == N && t.cap >= 2 * N && (t.cap & (t.cap - 1)) == 0);
  int added = -1;
  int *v = uk__nametab_put(&t, "n17", 3, 99, &added);
  CHECK(v && *v == 17 && added == 0 && t.count == N);
  *v = 42; /* the caller may update a value in place */
  for (int k = 0; k < N; k++) {
    const int *f = uk__nametab_find(&t, names[k], strlen(names[k]) - 1);
    CHECK(f && *f == (k == 17 ? 42 : k));
    if (!f || *f != (k == 17 ? 42 : k)) break;
  }
  CHECK(uk__nametab_find(&t, "n1", 1) == NULL);    /* "n": a prefix is another name */
  CHECK(uk__nametab_find(&t, "n1z", 3) == NULL);
  CHECK(uk__nametab_find(&t, "", 0) == NULL);
  CHECK(uk__nametab_put(&t, "", 0, 7, NULL) && *uk__nametab_find(&t, "", 0) == 7); /* empty names are names */
  uk__nametab_free(&t);
  CHECK(t.slots == NULL && t.count == 0 && uk__nametab_find(&t, "n1", 2) == NULL);
}

int main(void) {
  test_status_table();
  test_nametab();
  test_errors();
  test_dtypes();
  test_strbuf();
  test_strbuf_formats();
  return ut_finish("test_base");
}
