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
  int *sig_dtypes; /* per declared parameter: a uk_dtype, or -1 for a pointer */
  int attr_set[UK__SETTABLE_ATTRS];
  int attr_value[UK__SETTABLE_ATTRS];
  int cache_config_set, cache_config; /* uk_function_set_cache_config */
  /* uk_function_params: read once under m->lock, then immutable. */
  int params_read, nparams;
  uk_param_info *params;
};

struct uk_module {
  uk_context *ctx;
  uk__binary *bin; /* the image; also for modules loaded from files */
  /* What the user compiled it from (uk_module_source, uk_module_nvrtc_
   * options): one allocation holding the options array (NULL-terminated)
   * and the strings; NULL when neither was given. */
  void *given;
  const char *source;          /* into given; NULL: no source */
  const char *const *options;  /* into given; NULL when num_options is 0 */
  int num_options;
  /* The compile's target and whether ukern added -rdc=true, for the
   * effective options (made at first request, under lock). */
  int arch, arch_flags, added_rdc, compiled;
  char **effective; /* NULL-terminated, one allocation */
  /* A destroyed module's `given` block and binary (a reference) while the
   * object waits as its context's spare: reused by uk__module_keep_given
   * for the same text (the same binary is the same key, so the same
   * source). */
  void *kept;
  uk__binary *kept_bin;
  int num_effective;
  pthread_mutex_t lock;
  CUmodule loaded[UK__MAX_DEVICES]; /* under lock */
  int loaded_end;                   /* devices >= this have none loaded; under lock */
  uk_function **funcs;              /* under lock */
  int nfuncs, cap_funcs;
};

/* A new module of ctx around bin (the module takes the reference). */
uk_status uk__module_new(uk_context *ctx, uk__binary *bin, uk_module **out);

/* Keeps copies of the source (may be NULL) and the options given, for
 * uk_module_source and uk_module_nvrtc_options. */
uk_status uk__module_keep_given(uk_module *m, const char *source, const char *const *options, int num_options);

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
