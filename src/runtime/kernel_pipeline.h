/* The stages every generated-kernel kind shares (elementwise.c,
 * reduction.c, and any later kind such as fusion): the definition part of a
 * kernel object (context, name, parameters, user NVRTC options), its table
 * of compiled specialisations, and the single-flight compile of a key.
 *
 * A kind describes itself once in a uk__kind (its key size, emitter,
 * description, compile options and load-time look-ups) and embeds a
 * uk__kernel as the FIRST member of its object; the stages here call back
 * through the uk__kind. The specialisation table is a list, lock-free to
 * read (entries are published with release and never removed before the
 * kernel is destroyed), appended under the kernel's mutex: a hit costs a
 * memcmp per entry and takes no lock. */
#ifndef UK_RUNTIME_KERNEL_PIPELINE_H
#define UK_RUNTIME_KERNEL_PIPELINE_H

#include <pthread.h>
#include <stdatomic.h>

#include "base/strbuf.h"
#include "codegen/emit_common.h"
#include "runtime/context.h"

/* Functions per module that a kind may look up (uk__spec_function ids). */
#define UK__SPEC_FUNCTIONS 8

/* One compiled specialisation. */
typedef struct uk__spec {
  struct uk__spec *next;
  uk_plan plan;                                /* the argument buffer's layout */
  CUmodule module;
  int device;                                  /* where the module is loaded */
  size_t aux;                                  /* the kind's load-time value (reduction: partial bytes) */
  int occupancy;                               /* the kind's: resident blocks per SM (reduction), 0 unknown */
  _Atomic(CUfunction) fn[UK__SPEC_FUNCTIONS];  /* looked up on first use */
  _Alignas(16) unsigned char key[];            /* the kind's key, kind->key_size bytes */
} uk__spec;

typedef struct uk__kernel uk__kernel;
struct uk__binary;

/* What the compile stage needs from a kind for one key. */
typedef struct uk__kind_compile {
  const char *const *extra;    /* NULL-terminated options after the user's; may be NULL */
} uk__kind_compile;

typedef struct uk__kind {
  const char *noun;    /* "an elementwise kernel", "a reduction": messages */
  size_t key_size;     /* bytes compared (the key's device field included) */
  /* Appends the source of `key` to src and fills *plan. */
  uk_status (*emit)(const uk__kernel *kd, const void *key, uk_strbuf *src, uk_plan *plan);
  /* "compiling 'name' (float32, float32; strided ...)" into buf. */
  void (*describe)(const uk__kernel *kd, const void *key, char *buf, size_t size);
  /* The compile options of a key. */
  void (*compile)(const uk__kernel *kd, const void *key, uk__kind_compile *out);
  /* After the module is loaded (device context current): the kind's look-ups; bin is
   * the image loaded (for what its cubin states: occupancy.h). May be NULL. */
  uk_status (*loaded)(const uk__kernel *kd, uk__spec *e, const struct uk__binary *bin);
  /* Prepares a call without device work into prep (prep_size bytes, which
   * starts with a uk__call: kernel_args.h); `launch` is the kind's launch
   * struct. */
  uk_status (*prepare)(const uk__kernel *kd, const uk_arg *in, int nin, const uk_array *out, int nout,
                       const void *launch, void *prep);
  size_t prep_size;
  /* Optional (NULL: none): after an offline compile of prep's key (bin: its image), whether a call would
   * compile another key after it (the reduction's width, settled on the loaded program): 1 with prep's key
   * made that one. `step` counts the keys compiled before. */
  int (*offline_next)(const uk__kernel *kd, void *prep, const struct uk__binary *bin, int step);
} uk__kind;

/* The definition part of a kernel object. Immutable after init except the
 * specialisation table. */
struct uk__kernel {
  const uk__kind *kind;
  uk_context *ctx;        /* retained */
  char *name;
  char **options;         /* the user's NVRTC options */
  int num_options;
  uk_paramlist in, out;
  pthread_mutex_t lock;   /* serialises compiles and inserts */
  _Atomic(uk__spec *) specs;
};

/* Initialises kd (zeroed by the caller): retains ctx, parses and checks the
 * parameter lists (at most UK_MAX_PARAMETERS, at least one output), copies
 * name and options. `what` names the options' struct in messages
 * ("uk_elementwise_spec"). On failure the caller still calls
 * uk__kernel_free. */
uk_status uk__kernel_init(uk__kernel *kd, const uk__kind *kind, uk_context *ctx, const char *what,
                          const char *in_params, const char *out_params, const char *name,
                          const char *const *options, int num_options);
/* As uk__kernel_init for a kind whose emitter fixes the parameters (the
 * fusion row kernel): no parameter lists (in and out stay empty). */
uk_status uk__kernel_init_fixed(uk__kernel *kd, const uk__kind *kind, uk_context *ctx, const char *what,
                                const char *name, const char *const *options, int num_options);
/* Unloads every specialisation's module (on its device), frees them, the
 * definition, and releases the context. */
void uk__kernel_free(uk__kernel *kd);

/* "compiling <noun>'name' (float32, float32" into buf: the start of a
 * kind's description; returns the length written (< size). */
size_t uk__kernel_describe(const uk__kernel *kd, const char *noun, const uk_key_params *kp, char *buf, size_t size);

/* Parameter p (inputs first, then outputs) and its role ("input"/"output").
 * The first is inline: a call asks it per parameter. */
static inline const uk_param *uk__kernel_param(const uk__kernel *kd, int p) {
  return uk__emit_param(&kd->in, &kd->out, p);
}
const char *uk__kernel_role(const uk__kernel *kd, int p);

/* The specialisation of `key` (whose device field is `device`, the current
 * context's): a lock-free hit, else compiled (memory cache, disk cache,
 * NVRTC), loaded and published once however many threads ask. */
uk_status uk__kernel_specialise(uk__kernel *kd, const void *key, int device, uk__spec **out);

/* What uk__kernel_offline produces. */
typedef enum uk__offline {
  UK__OFFLINE_PRECOMPILE, /* compiles into the caches for the arrays' device (the
                             context's default device when no array is given): each
                             key a call would compile (uk__kind.offline_next) */
  UK__OFFLINE_SOURCE,     /* result: char **, the source (caller's, uk_free) */
  UK__OFFLINE_OPTIONS     /* result: char ***, the NVRTC options, NULL-terminated,
                             one allocation (caller's, uk_free) */,
  UK__OFFLINE_INFO        /* as PRECOMPILE; result: uk_compile_info *, the last key's */
} uk__offline;

/* A call without running it (the public _precompile, _source and
 * _nvrtc_options forms; `fn` names the function in errors; kd may be
 * NULL): prepares it, then produces `what` into *result. */
uk_status uk__kernel_offline(const char *fn, uk__kernel *kd, const uk_arg *in, int nin, uk_array *out, int nout,
                             const void *launch, uk__offline what, void *result);

/* The parameter counts of a kernel (kd may be NULL: UK_ERR_INVALID). */
uk_status uk__kernel_param_counts(const char *fn, const uk__kernel *kd, int *nin, int *nout);

/* Function `id` of a specialisation, looked up as name + suffix on first use. */
uk_status uk__spec_function(const uk__kernel *kd, uk__spec *e, int id, const char *suffix, CUfunction *out);

#endif
