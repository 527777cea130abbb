/* Raw modules and their functions: the objects behind uk_module and
 * uk_function, shared by module.c (loading, lookup) and function.c
 * (attributes, signatures, launches). */
#ifndef UK_RUNTIME_MODULE_H
#define UK_RUNTIME_MODULE_H

#include <pthread.h>
#include <stdatomic.h>

#include "runtime/device.h"
#include "runtime/ffi_args.h"

/* Settable attributes remembered for devices the function reaches later. */
#define UK__SETTABLE_ATTRS 2

struct uk_function {
  uk_module *m;
  char *name;   /* as first asked for, for messages */
  char *symbol; /* the name in the image (lowered for name expressions) */
  /* Launch-ready handle per device: resolved and, when a signature is set,
   * checked against it. Read without locking on the launch path. */
  _Atomic(CUfunction) ready[UK__MAX_DEVICES];
  CUfunction raw[UK__MAX_DEVICES]; /* resolved handles; under m->lock */
  int has_signature;
  uk_arglayout layout;
  int attr_set[UK__SETTABLE_ATTRS];
  int attr_value[UK__SETTABLE_ATTRS];
  int owns_module; /* from uk_kernel_from_source: uk_kernel_destroy frees m */
  /* uk_function_params: read once under m->lock, then immutable. */
  int params_read, nparams;
  uk_param_info *params;
};

struct uk_module {
  uk_context *ctx;
  uk__binary *bin; /* the image; also for modules loaded from files */
  pthread_mutex_t lock;
  CUmodule loaded[UK__MAX_DEVICES]; /* under lock */
  uk_function **funcs;              /* under lock */
  int nfuncs, cap_funcs;
};

/* A new module of ctx around bin (the module takes the reference). */
uk_status uk__module_new(uk_context *ctx, uk__binary *bin, uk_module **out);

/* The module loaded on `device` (loading it on first use, in that device's
 * primary context). Caller holds m->lock. */
uk_status uk__module_load_locked(uk_module *m, int device, CUmodule *out);

/* function.c: a new function of m for `symbol`, already resolved on device
 * `device` as `fn` (device -1: not resolved anywhere yet, a function found
 * in the image without a GPU); and its release. */
uk_status uk__function_new(uk_module *m, const char *name, const char *symbol, int device,
                           CUfunction fn, uk_function **out);
void uk__function_free(uk_function *f);

#endif
