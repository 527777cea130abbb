/* The dtype table (dtype.h): NumPy names and aliases, sizes, C spellings, kinds. */
#include "codegen/dtype.h"

#include <string.h>

#include "base/error.h"

const uk_dtype_info uk__dtype_table[UK_DTYPE_COUNT_] = {
    {UK_BOOL, "bool", "bool", 1, 1, UK_KIND_BOOL},
    {UK_INT8, "int8", "signed char", 1, 1, UK_KIND_INT},
    {UK_INT16, "int16", "short", 2, 2, UK_KIND_INT},
    {UK_INT32, "int32", "int", 4, 4, UK_KIND_INT},
    {UK_INT64, "int64", "long long", 8, 8, UK_KIND_INT},
    {UK_UINT8, "uint8", "unsigned char", 1, 1, UK_KIND_UINT},
    {UK_UINT16, "uint16", "unsigned short", 2, 2, UK_KIND_UINT},
    {UK_UINT32, "uint32", "unsigned int", 4, 4, UK_KIND_UINT},
    {UK_UINT64, "uint64", "unsigned long long", 8, 8, UK_KIND_UINT},
    {UK_FLOAT16, "float16", "ukern::half", 2, 2, UK_KIND_FLOAT},
    {UK_BFLOAT16, "bfloat16", "ukern::bfloat16", 2, 2, UK_KIND_FLOAT},
    {UK_FLOAT32, "float32", "float", 4, 4, UK_KIND_FLOAT},
    {UK_FLOAT64, "float64", "double", 8, 8, UK_KIND_FLOAT},
    {UK_COMPLEX64, "complex64", "ukern::complex<float>", 8, 8, UK_KIND_COMPLEX},
    {UK_COMPLEX128, "complex128", "ukern::complex<double>", 16, 16, UK_KIND_COMPLEX},
};

/* NumPy aliases (np.dtype(name) on a 64-bit Linux build). */
static const struct {
  const char *alias;
  uk_dtype dtype;
} aliases[] = {
    {"b1", UK_BOOL},         {"bool_", UK_BOOL},       {"?", UK_BOOL},
    {"i1", UK_INT8},         {"byte", UK_INT8},        {"i2", UK_INT16},
    {"short", UK_INT16},     {"i4", UK_INT32},         {"intc", UK_INT32},
    {"i8", UK_INT64},        {"int", UK_INT64},        {"int_", UK_INT64},
    {"long", UK_INT64},      {"longlong", UK_INT64},   {"intp", UK_INT64},
    {"u1", UK_UINT8},        {"ubyte", UK_UINT8},      {"u2", UK_UINT16},
    {"ushort", UK_UINT16},   {"u4", UK_UINT32},        {"uintc", UK_UINT32},
    {"u8", UK_UINT64},       {"uint", UK_UINT64},      {"ulong", UK_UINT64},
    {"ulonglong", UK_UINT64}, {"uintp", UK_UINT64},    {"f2", UK_FLOAT16},
    {"half", UK_FLOAT16},    {"e", UK_FLOAT16},        {"bf16", UK_BFLOAT16},
    {"f4", UK_FLOAT32},      {"single", UK_FLOAT32},   {"float", UK_FLOAT64},
    {"f8", UK_FLOAT64},      {"double", UK_FLOAT64},   {"float_", UK_FLOAT64},
    {"c8", UK_COMPLEX64},    {"csingle", UK_COMPLEX64}, {"c16", UK_COMPLEX128},
    {"cdouble", UK_COMPLEX128}, {"complex", UK_COMPLEX128}, {"complex_", UK_COMPLEX128},
};

const uk_dtype_info *uk__dtype_info(uk_dtype t) {
  return (unsigned)t < UK_DTYPE_COUNT_ ? &uk__dtype_table[t] : NULL;
}

static int equals(const char *a, size_t alen, const char *b) {
  return strlen(b) == alen && memcmp(a, b, alen) == 0;
}

int uk__dtype_lookup(const char *name, size_t len, uk_dtype *out) {
  for (int k = 0; k < UK_DTYPE_COUNT_; k++)
    if (equals(name, len, uk__dtype_table[k].name)) {
      *out = uk__dtype_table[k].dtype;
      return 1;
    }
  for (size_t k = 0; k < sizeof aliases / sizeof aliases[0]; k++)
    if (equals(name, len, aliases[k].alias)) {
      *out = aliases[k].dtype;
      return 1;
    }
  return 0;
}

const char *uk__dtype_ctype_for(const char *text) {
  if (!text) return NULL;
  while (*text == ' ' || *text == '\t' || *text == '\n') text++;
  size_t len = strlen(text);
  while (len > 0 && (text[len - 1] == ' ' || text[len - 1] == '\t' || text[len - 1] == '\n')) len--;
  uk_dtype t;
  /* every NumPy name and code ends in its width; no C type name does */
  if (len < 2 || text[len - 1] < '0' || text[len - 1] > '9' || !uk__dtype_lookup(text, len, &t)) return NULL;
  return uk__dtype_table[t].ctype;
}

/* Edit distance with adjacent transpositions (optimal string alignment),
 * so "unit8" is one edit from "uint8"; names are short. */
static size_t distance(const char *a, size_t n, const char *b) {
  size_t m = strlen(b);
  if (n > 30 || m > 30) return 99;
  size_t d[32][32];
  for (size_t i = 0; i <= n; i++) d[i][0] = i;
  for (size_t j = 0; j <= m; j++) d[0][j] = j;
  for (size_t i = 1; i <= n; i++)
    for (size_t j = 1; j <= m; j++) {
      size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
        best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  return d[n][m];
}

const char *uk__dtype_suggest(const char *name, size_t len) {
  const char *best = uk__dtype_table[UK_FLOAT32].name;
  size_t best_d = (size_t)-1;
  for (int k = 0; k < UK_DTYPE_COUNT_; k++) {
    size_t d = distance(name, len, uk__dtype_table[k].name);
    if (d < best_d) {
      best_d = d;
      best = uk__dtype_table[k].name;
    }
  }
  return best;
}

uk_status uk_dtype_from_name(const char *name, uk_dtype *out) {
  if (!name || !out) return uk__errorf(UK_ERR_INVALID, "uk_dtype_from_name: name and out must not be NULL");
  uk_dtype t;
  if (!uk__dtype_lookup(name, strlen(name), &t))
    return uk__errorf(UK_ERR_TYPE, "unknown dtype '%s' (did you mean '%s'?)", name,
                      uk__dtype_suggest(name, strlen(name)));
  *out = t;
  uk__error_clear();
  return UK_OK;
}

const char *uk_dtype_name(uk_dtype t) {
  const uk_dtype_info *i = uk__dtype_info(t);
  return i ? i->name : NULL;
}

size_t uk_dtype_size(uk_dtype t) {
  const uk_dtype_info *i = uk__dtype_info(t);
  return i ? i->size : 0;
}
