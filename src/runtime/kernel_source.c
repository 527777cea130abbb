/* Raw kernels the way CuPy's RawKernel is used: one call from source to a
 * launchable function that owns its module. */
#include "base/error.h"
#include "runtime/module.h"

uk_status uk_kernel_from_source(uk_context *ctx, const char *code, const char *name, const uk_module_options *opts,
                                uk_function **out) {
  uk__error_clear();
  if (!ctx || !code || !name || !out)
    return uk__errorf(UK_ERR_INVALID, "uk_kernel_from_source: %s is NULL",
                      !ctx ? "ctx" : !code ? "code" : !name ? "name" : "out");
  uk_module *m = NULL;
  uk_function *f = NULL;
  uk_status st = uk_module_from_source(ctx, code, opts, &m);
  if (st != UK_OK) return st;
  if ((st = uk_module_function(m, name, &f)) != UK_OK) {
    uk_module_destroy(m); /* keeps the thread's error message */
    return st;
  }
  f->owns_module = 1;
  *out = f;
  return UK_OK;
}

void uk_kernel_destroy(uk_function *f) {
  if (f && f->owns_module) uk_module_destroy(f->m);
}

const char *uk_function_name(const uk_function *f) { return f ? f->name : NULL; }

uk_module *uk_function_module(const uk_function *f) { return f ? f->m : NULL; }
