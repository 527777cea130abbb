/* C kernel parameter lists (uk_function_set_signature): a table of inputs with
 * their parsed form or the exact error text, and the kind sizes. */
#include "base/error.h"
#include "base/strbuf.h"
#include "codegen/cparams.h"
#include "testutil.h"

/* Independent of uk__ctype_name, so a wrong kind can't hide behind a wrong name. */
static const char *const kind_tag[UK_CT_COUNT_] = {
    "BOOL", "I8", "U8", "I16", "U16", "I32", "U32", "I64",
    "U64",  "F16", "BF16", "F32", "F64", "C64", "C128", "PTR"};

/* "KIND|spelling|name, ..." */
static char *render(const uk_cparams *p) {
  uk_strbuf sb;
  uk__sb_init(&sb);
  for (int k = 0; k < p->count; k++)
    uk__sb_addf(&sb, "%s%s|%s|%s", k ? ", " : "", kind_tag[p->params[k].type],
                p->params[k].spelling, p->params[k].name);
  return uk__sb_detach(&sb);
}

static const struct {
  const char *text;
  int count;
  const char *want;
} ok_cases[] = {
    {"", 0, ""},
    {"   \n\t", 0, ""},
    {"void", 0, ""},
    {"  void\n", 0, ""},
    {"bool b", 1, "BOOL|bool|b"},
    {"char a, signed char b, char signed c, unsigned char d, char unsigned e", 5,
     "I8|char|a, I8|signed char|b, I8|char signed|c, U8|unsigned char|d, U8|char unsigned|e"},
    {"short a, short int b, signed short c, int short signed d, unsigned short e, "
     "short unsigned int f",
     6,
     "I16|short|a, I16|short int|b, I16|signed short|c, I16|int short signed|d, "
     "U16|unsigned short|e, U16|short unsigned int|f"},
    {"int a, signed b, signed int c, unsigned d, unsigned int e, int unsigned f", 6,
     "I32|int|a, I32|signed|b, I32|signed int|c, U32|unsigned|d, U32|unsigned int|e, "
     "U32|int unsigned|f"},
    {"long a, long int b, signed long c, unsigned long d, long unsigned int e", 5,
     "I64|long|a, I64|long int|b, I64|signed long|c, U64|unsigned long|d, "
     "U64|long unsigned int|e"},
    {"long long a, long long int b, long int long c, signed long long d, "
     "unsigned long long e, long long unsigned int f, int long unsigned long g",
     7,
     "I64|long long|a, I64|long long int|b, I64|long int long|c, I64|signed long long|d, "
     "U64|unsigned long long|e, U64|long long unsigned int|f, U64|int long unsigned long|g"},
    {"int8_t a, int16_t b, int32_t c, int64_t d, uint8_t e, uint16_t f, uint32_t g, "
     "uint64_t h, size_t i, ptrdiff_t j",
     10,
     "I8|int8_t|a, I16|int16_t|b, I32|int32_t|c, I64|int64_t|d, U8|uint8_t|e, "
     "U16|uint16_t|f, U32|uint32_t|g, U64|uint64_t|h, U64|size_t|i, I64|ptrdiff_t|j"},
    {"float a, double b, __half c, half d, __nv_bfloat16 e, nv_bfloat16 f, ukern::half g, "
     "ukern::bfloat16 h",
     8,
     "F32|float|a, F64|double|b, F16|__half|c, F16|half|d, BF16|__nv_bfloat16|e, "
     "BF16|nv_bfloat16|f, F16|ukern::half|g, BF16|ukern::bfloat16|h"},
    {"uk_complex64 a, uk_complex128 b, complex<float> c, complex<double> d, "
     "ukern::complex<float> e, ukern::complex<double> f, thrust::complex<float> g, "
     "thrust::complex<double> h, cuComplex i, cuDoubleComplex j, cuFloatComplex k",
     11,
     "C64|uk_complex64|a, C128|uk_complex128|b, C64|complex<float>|c, "
     "C128|complex<double>|d, C64|ukern::complex<float>|e, C128|ukern::complex<double>|f, "
     "C64|thrust::complex<float>|g, C128|thrust::complex<double>|h, C64|cuComplex|i, "
     "C128|cuDoubleComplex|j, C64|cuFloatComplex|k"},
    {"CUtexObject t, cudaTextureObject_t u, cudaSurfaceObject_t v, CUsurfObject w", 4,
     "U64|CUtexObject|t, U64|cudaTextureObject_t|u, U64|cudaSurfaceObject_t|v, "
     "U64|CUsurfObject|w"},
    /* spacing is normalised; a leading :: is kept in the spelling and ignored for lookup */
    {"  ukern :: complex < float >   z  , ::ukern::complex<double> w", 2,
     "C64|ukern::complex<float>|z, C128|::ukern::complex<double>|w"},
    {"float\ta,\n  double\n b", 2, "F32|float|a, F64|double|b"},
    /* pointers, qualifiers everywhere */
    {"const float* x, float* __restrict__ y, long long n", 3,
     "PTR|const float*|x, PTR|float* __restrict__|y, I64|long long|n"},
    {"float const * const __restrict__ p", 1, "PTR|float const* const __restrict__|p"},
    {"int**q, void *v, const void* const* vv, char***c", 4,
     "PTR|int**|q, PTR|void*|v, PTR|const void* const*|vv, PTR|char***|c"},
    {"const volatile unsigned const int v, volatile restrict __restrict int* __restrict r", 2,
     "U32|const volatile unsigned const int|v, "
     "PTR|volatile restrict __restrict int* __restrict|r"},
    {"const half h, const __half* hp, const uk_complex128 c", 3,
     "F16|const half|h, PTR|const __half*|hp, C128|const uk_complex128|c"},
    /* pointers to anything */
    {"struct S* s, Foo* f, ns::Bar<int,3>* b, class C *c, union U* u, enum E* e", 6,
     "PTR|struct S*|s, PTR|Foo*|f, PTR|ns::Bar<int, 3>*|b, PTR|class C*|c, PTR|union U*|u, "
     "PTR|enum E*|e"},
    {"Foo< Bar< unsigned  int >, 2 > *p, long double* ld, signed char* sc", 3,
     "PTR|Foo<Bar<unsigned int>, 2>*|p, PTR|long double*|ld, PTR|signed char*|sc"},
    {"complex<int>* ci, const struct S* const* ss", 2,
     "PTR|complex<int>*|ci, PTR|const struct S* const*|ss"},
    /* unnamed */
    {"float, int*, double, const char*", 4,
     "F32|float|parameter 1, PTR|int*|parameter 2, F64|double|parameter 3, "
     "PTR|const char*|parameter 4"},
    {"void*", 1, "PTR|void*|parameter 1"},
    {"unsigned long long", 1, "U64|unsigned long long|parameter 1"},
    {"_x9 *_y0, int x_", 2, "PTR|_x9*|_y0, I32|int|x_"},
};

#define HINT                                                                              \
  "supported value types: bool, char, [un]signed char/short/int/long/long long, "           \
  "int8_t..int64_t, uint8_t..uint64_t, size_t, ptrdiff_t, float, double, __half/half, "     \
  "__nv_bfloat16/nv_bfloat16, uk_complex64/complex<float>/cuComplex, "                      \
  "uk_complex128/complex<double>/cuDoubleComplex, CUtexObject, cudaTextureObject_t, "       \
  "cudaSurfaceObject_t; and any pointer (T*)"
#define STRUCT_HINT(t, n)                                                                  \
  "\na struct passed by value has no layout known here: pass a pointer to it instead ('" t \
  "* " n "')"

static const struct {
  const char *text;
  const char *want;
} err_cases[] = {
    /* empty pieces */
    {",float a", "signature:1:1: expected a parameter before ','\n    ,float a\n    ^"},
    {",", "signature:1:1: expected a parameter before ','\n    ,\n    ^"},
    {"float a,,int b",
     "signature:1:9: expected a parameter before ','\n    float a,,int b\n            ^"},
    {"float a, \t, int b", /* the caret line keeps the tab */
     "signature:1:11: expected a parameter before ','\n    float a, \t, int b\n"
     "    " "         \t^"},
    {"float a,", "signature:1:8: expected a parameter after ','\n    float a,\n           ^"},
    {"float a,  ", "signature:1:8: expected a parameter after ','\n    float a,  \n           ^"},
    /* missing type */
    {"const", "signature:1:1: parameter 1 has no type\n    const\n    ^\n" HINT},
    {"int a, const * p",
     "signature:1:14: parameter 2 has no type\n    int a, const * p\n                 ^\n" HINT},
    {"* p", "signature:1:1: parameter 1 has no type\n    * p\n    ^\n" HINT},
    {"int a, volatile", "signature:1:8: parameter 2 has no type\n    int a, volatile\n"
                        "           ^\n" HINT},
    /* unknown types, by-value structs */
    {"Foo f", "signature:1:1: unknown type 'Foo'\n    Foo f\n    ^\n" HINT STRUCT_HINT("Foo", "f")},
    {"int n, struct S s", "signature:1:8: unknown type 'struct S'\n    int n, struct S s\n"
                          "           ^\n" HINT STRUCT_HINT("struct S", "s")},
    {"const Foo<int> x", "signature:1:7: unknown type 'Foo<int>'\n    const Foo<int> x\n"
                         "          ^\n" HINT STRUCT_HINT("Foo<int>", "x")},
    {"Foo", "signature:1:1: unknown type 'Foo'\n    Foo\n    ^\n" HINT STRUCT_HINT("Foo", "name")},
    {"complex<int> c",
     "signature:1:1: unknown type 'complex<int>'\n    complex<int> c\n    ^\n" HINT STRUCT_HINT(
         "complex<int>", "c")},
    {"float2 v", "signature:1:1: unknown type 'float2'\n    float2 v\n    ^\n" HINT
                 STRUCT_HINT("float2", "v")},
    {"long double x",
     "signature:1:1: 'long double' is not supported as a kernel parameter\n    long double x\n"
     "    ^\n" HINT},
    {"void x", "signature:1:1: a parameter cannot have type 'void'\n    void x\n    ^\n"
               "'void' alone means no parameters; 'void*' is an untyped pointer"},
    {"int a, void", "signature:1:8: a parameter cannot have type 'void'\n    int a, void\n"
                    "           ^\n'void' alone means no parameters; 'void*' is an untyped "
                    "pointer"},
    {"void, int", "signature:1:1: a parameter cannot have type 'void'\n    void, int\n    ^\n"
                  "'void' alone means no parameters; 'void*' is an untyped pointer"},
    {"const void", "signature:1:7: a parameter cannot have type 'void'\n    const void\n"
                   "          ^\n'void' alone means no parameters; 'void*' is an untyped pointer"},
    /* invalid specifier combinations (also behind a '*') */
    {"signed unsigned int x",
     "signature:1:1: invalid type 'signed unsigned int'\n    signed unsigned int x\n    ^\n" HINT},
    {"int int x", "signature:1:1: invalid type 'int int'\n    int int x\n    ^\n" HINT},
    {"long long long x",
     "signature:1:1: invalid type 'long long long'\n    long long long x\n    ^\n" HINT},
    {"short long x", "signature:1:1: invalid type 'short long'\n    short long x\n    ^\n" HINT},
    {"unsigned float x",
     "signature:1:1: invalid type 'unsigned float'\n    unsigned float x\n    ^\n" HINT},
    {"const char int c",
     "signature:1:7: invalid type 'char int'\n    const char int c\n          ^\n" HINT},
    {"size_t int n", "signature:1:1: invalid type 'size_t int'\n    size_t int n\n    ^\n" HINT},
    {"unsigned struct S* p",
     "signature:1:1: invalid type 'unsigned struct'\n    unsigned struct S* p\n    ^\n" HINT},
    {"signed unsigned* p",
     "signature:1:1: invalid type 'signed unsigned'\n    signed unsigned* p\n    ^\n" HINT},
    {"bool bool b", "signature:1:1: invalid type 'bool bool'\n    bool bool b\n    ^\n" HINT},
    /* stray characters and tokens */
    {"float a; int b", "signature:1:8: unexpected character ';'\n    float a; int b\n           ^"},
    {"float a = 1", "signature:1:9: unexpected character '='\n    float a = 1\n            ^"},
    {"float (a)", "signature:1:7: unexpected character '('\n    float (a)\n          ^"},
    {"int x: 3", "signature:1:6: unexpected character ':'\n    int x: 3\n         ^"},
    {"float 1a", "signature:1:7: unexpected character '1'\n    float 1a\n          ^"},
    {"float \xc3\xa9", "signature:1:7: unexpected byte 0xc3\n    float \xc3\xa9\n          ^"},
    {"float a b",
     "signature:1:9: unexpected 'b' after parameter name 'a'\n    float a b\n            ^"},
    {"float a*",
     "signature:1:8: unexpected '*' after parameter name 'a'\n    float a*\n           ^"},
    {"float a const",
     "signature:1:9: unexpected 'const' after parameter name 'a'\n    float a const\n"
     "            ^"},
    {"float* int",
     "signature:1:8: expected a parameter name, got 'int'\n    float* int\n           ^"},
    {"float ns::x",
     "signature:1:7: expected a parameter name, got 'ns::x'\n    float ns::x\n          ^"},
    {"float* x<2>",
     "signature:1:8: expected a parameter name, got 'x<2>'\n    float* x<2>\n           ^"},
    {"Foo<int* p", "signature:1:4: unterminated '<' (missing '>')\n    Foo<int* p\n       ^"},
    {"ns:: * p", "signature:1:6: expected a name after '::'\n    ns:: * p\n         ^"},
    {"struct * p", "signature:1:8: expected a name after 'struct'\n    struct * p\n           ^"},
    {"struct", "signature:1:7: expected a name after 'struct'\n    struct\n          ^"},
    {"enum int* p", "signature:1:6: expected a name after 'enum'\n    enum int* p\n         ^"},
    /* duplicate names */
    {"float x, int y, double* x",
     "signature:1:25: duplicate parameter name 'x' (parameters 1 and 3)\n"
     "    float x, int y, double* x\n                            ^"},
    {"int n, int n", "signature:1:12: duplicate parameter name 'n' (parameters 1 and 2)\n"
                     "    int n, int n\n               ^"},
    /* arrays */
    {"float x[4]", "signature:1:8: array parameters are not allowed in a kernel\n    float x[4]\n"
                   "           ^\nC silently turns an array parameter into a pointer: write the "
                   "pointer ('float* x') to pass a device array"},
    {"const int a[]", "signature:1:12: array parameters are not allowed in a kernel\n"
                      "    const int a[]\n               ^\nC silently turns an array parameter "
                      "into a pointer: write the pointer ('int* a') to pass a device array"},
    {"float [3]", "signature:1:7: array parameters are not allowed in a kernel\n    float [3]\n"
                  "          ^\nC silently turns an array parameter into a pointer: write the "
                  "pointer ('float* name') to pass a device array"},
    {"float a,\n int b[2][3]",
     "signature:2:7: array parameters are not allowed in a kernel\n     int b[2][3]\n          ^\n"
     "C silently turns an array parameter into a pointer: write the pointer ('int* b') to pass "
     "a device array"},
    /* references */
    {"float& x", "signature:1:6: reference parameters are not allowed in a kernel\n    float& x\n"
                 "         ^\na kernel receives copies of its arguments: pass the value "
                 "('float x') or a device pointer ('float* x')"},
    {"int n, const double &v",
     "signature:1:21: reference parameters are not allowed in a kernel\n"
     "    int n, const double &v\n                        ^\na kernel receives copies of its "
     "arguments: pass the value ('double v') or a device pointer ('double* v')"},
    {"unsigned long && r",
     "signature:1:15: reference parameters are not allowed in a kernel\n"
     "    unsigned long && r\n                  ^\na kernel receives copies of its "
     "arguments: pass the value ('unsigned long r') or a device pointer ('unsigned long* r')"},
    {"& x", "signature:1:1: reference parameters are not allowed in a kernel\n    & x\n    ^\n"
            "a kernel receives copies of its arguments: pass the value ('T x') or a device "
            "pointer ('T* x')"},
    /* the first error in text order wins */
    {"float x[2], @", "signature:1:8: array parameters are not allowed in a kernel\n"
                      "    float x[2], @\n           ^\nC silently turns an array parameter into "
                      "a pointer: write the pointer ('float* x') to pass a device array"},
};

static void test_ok(void) {
  for (size_t k = 0; k < sizeof ok_cases / sizeof ok_cases[0]; k++) {
    uk_cparams p = {-1, NULL};
    uk_status s = uk__cparams_parse(ok_cases[k].text, &p);
    CHECK_STATUS(s, UK_OK);
    if (s != UK_OK) {
      fprintf(stderr, "  input: \"%s\"\n", ok_cases[k].text);
      continue;
    }
    CHECK(p.count == ok_cases[k].count);
    char *got = render(&p);
    CHECK_STREQ(got, ok_cases[k].want);
    free(got);
    uk__cparams_free(&p);
    CHECK(p.count == 0 && p.params == NULL);
  }
}

static void test_errors(void) {
  for (size_t k = 0; k < sizeof err_cases / sizeof err_cases[0]; k++) {
    uk_cparams p = {-7, (uk_cparam *)&p}; /* must stay untouched on failure */
    uk_status s = uk__cparams_parse(err_cases[k].text, &p);
    CHECK_STATUS(s, UK_ERR_SYNTAX);
    CHECK_STREQ(uk_last_error(), err_cases[k].want);
    CHECK(p.count == -7 && p.params == (uk_cparam *)&p);
  }
  uk_cparams p;
  CHECK_STATUS(uk__cparams_parse(NULL, &p), UK_ERR_INVALID);
}

static void test_positions(void) {
  uk_cparams p;
  CHECK_OK(uk__cparams_parse("  float a,  const int* b,\n  double", &p));
  CHECK(p.count == 3);
  if (p.count == 3) {
    CHECK(p.params[0].pos == 2);
    CHECK(p.params[1].pos == 12);
    CHECK(p.params[2].pos == 28);
  }
  uk__cparams_free(&p);
  uk__cparams_free(NULL);
}

static void test_kinds(void) {
  static const struct {
    uk_ctype t;
    size_t size, align;
    const char *name;
  } want[] = {
      {UK_CT_BOOL, 1, 1, "bool"},
      {UK_CT_I8, 1, 1, "signed char"},
      {UK_CT_U8, 1, 1, "unsigned char"},
      {UK_CT_I16, 2, 2, "short"},
      {UK_CT_U16, 2, 2, "unsigned short"},
      {UK_CT_I32, 4, 4, "int"},
      {UK_CT_U32, 4, 4, "unsigned int"},
      {UK_CT_I64, 8, 8, "long long"},
      {UK_CT_U64, 8, 8, "unsigned long long"},
      {UK_CT_F16, 2, 2, "half"},
      {UK_CT_BF16, 2, 2, "bfloat16"},
      {UK_CT_F32, 4, 4, "float"},
      {UK_CT_F64, 8, 8, "double"},
      {UK_CT_C64, 8, 8, "complex<float>"},
      {UK_CT_C128, 16, 16, "complex<double>"},
      {UK_CT_PTR, 8, 8, "pointer"},
  };
  CHECK(sizeof want / sizeof want[0] == UK_CT_COUNT_);
  for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
    CHECK(want[k].t == (uk_ctype)k);
    CHECK(uk__ctype_size(want[k].t) == want[k].size);
    CHECK(uk__ctype_align(want[k].t) == want[k].align);
    CHECK_STREQ(uk__ctype_name(want[k].t), want[k].name);
  }
  CHECK(uk__ctype_size(UK_CT_COUNT_) == 0);
  CHECK(uk__ctype_align((uk_ctype)-1) == 0);
  CHECK_STREQ(uk__ctype_name(UK_CT_COUNT_), "invalid");
  CHECK(uk__ctype_size(UK_CT_PTR) == sizeof(void *));
}

int main(void) {
  test_ok();
  test_errors();
  test_positions();
  test_kinds();
  return ut_finish("test_cparams");
}
