/* Raw kernels the way CuPy's RawKernel is used: one call from source to a
 * uk_kernel that owns its module and lends out its function. */
#include <stdlib.h>

#include "base/error.h"
#include "runtime/module.h"

struct uk_kernel {
  uk_module *m; /* owned */
  uk_function *f; /* m's */
};

uk_status uk_kernel_from_source(uk_context *ctx, const char *code, const char *name, const uk_module_options *opts,
                                uk_kernel **out) {
  uk__error_clear();
  if (!ctx || !code || !name || !out)
    return uk__errorf(UK_ERR_INVALID, "uk_kernel_from_source: %s is NULL",
                      !ctx ? "ctx" : !code ? "code" : !name ? "name" : "out");
  uk_kernel *k = calloc(1, sizeof *k);
  if (!k) return uk__errorf(UK_ERR_NOMEM, "uk_kernel_from_source: out of memory");
  uk_status st = uk_module_from_source(ctx, code, opts, &k->m);
  if (st == UK_OK) st = uk_module_function(k->m, name, &k->f);
  if (st != UK_OK) {
    uk_kernel_destroy(k); /* keeps the thread's error message */
    return st;
  }
  *out = k;
  return UK_OK;
}

uk_function *uk_kernel_function(const uk_kernel *k) { return k ? k->f : NULL; }

void uk_kernel_destroy(uk_kernel *k) {
  if (!k) return;
  uk_module_destroy(k->m);
  free(k);
}

const char *uk_function_name(const uk_function *f) { return f ? f->name : NULL; }

uk_module *uk_function_module(const uk_function *f) { return f ? f->m : NULL; }
