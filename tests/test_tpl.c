/* Template expansion: holes, missing values, embedded templates. */
#include "base/embedded.h"
#include "codegen/tpl.h"
#include "testutil.h"

int main(void) {
  uk_strbuf sb;
  uk__sb_init(&sb);
  uk_tpl_var vars[] = {{"name", "squared_diff"}, {"type", "float"}, {"unused", "x"}};
  CHECK_OK(uk__tpl_expand("t", "__global__ void ${name}(${type}* p) { ${type} v; }", vars, 3, &sb));
  CHECK_STREQ(uk__sb_str(&sb), "__global__ void squared_diff(float* p) { float v; }");
  uk__sb_reset(&sb);
  CHECK_OK(uk__tpl_expand("t", "no holes $ { } $x", vars, 3, &sb));
  CHECK_STREQ(uk__sb_str(&sb), "no holes $ { } $x");
  uk__sb_reset(&sb);
  CHECK_STATUS(uk__tpl_expand("k.cu", "a ${missing} b", vars, 3, &sb), UK_ERR_INTERNAL);
  CHECK_STREQ(uk_last_error(), "template k.cu: no value for hole '${missing}'");
  uk__sb_reset(&sb);
  CHECK_STATUS(uk__tpl_expand("k.cu", "a ${name", vars, 3, &sb), UK_ERR_INTERNAL);
  CHECK_STREQ(uk_last_error(), "template k.cu: unterminated '${' at byte 2");
  uk__sb_reset(&sb);
  CHECK_STATUS(uk__tpl_expand_embedded("nope.cu", vars, 3, &sb), UK_ERR_INTERNAL);
  /* the device headers are embedded and NUL-terminated */
  const uk__embedded_file *f = uk__embedded_find("ukern/complex.cuh");
  CHECK(f != NULL && f->size > 0 && f->data[f->size] == '\0');
  /* user code: indented, trimmed, terminated unless it ends with ';' (as CuPy's `${operation};`) */
  uk__sb_reset(&sb);
  uk__tpl_add_code(&sb, "\n  z = x\n  w = y  \n\n", "    ", 1);
  CHECK_STREQ(uk__sb_str(&sb), "      z = x\n      w = y;");
  uk__sb_reset(&sb);
  uk__tpl_add_code(&sb, "if (x) { z = 1; }", "  ", 1);
  CHECK_STREQ(uk__sb_str(&sb), "  if (x) { z = 1; };");
  uk__sb_reset(&sb);
  uk__tpl_add_code(&sb, "const double n { 1.0 / 3 }", "  ", 1);
  CHECK_STREQ(uk__sb_str(&sb), "  const double n { 1.0 / 3 };");
  uk__sb_reset(&sb);
  uk__tpl_add_code(&sb, "#if A\nz = 1;\n  #endif", "  ", 1); /* a directive keeps its line */
  CHECK_STREQ(uk__sb_str(&sb), "  #if A\n  z = 1;\n    #endif\n  ;");
  uk__sb_reset(&sb);
  uk__tpl_add_code(&sb, "z = x // note", "  ", 1);
  CHECK_STREQ(uk__sb_str(&sb), "  z = x // note\n  ;");
  uk__sb_reset(&sb);
  uk__tpl_add_code(&sb, "#define A 1", "", 0);
  uk__tpl_add_code(&sb, "   ", "", 0); /* blank: nothing */
  uk__tpl_add_code(&sb, NULL, "", 0);
  CHECK_STREQ(uk__sb_str(&sb), "#define A 1");
  uk__sb_release(&sb);
  return ut_finish("test_tpl");
}
