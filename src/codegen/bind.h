/* Placeholder binding (SEMANTICS.md "Binding types"): outputs the caller
 * gives bind first, then array inputs left to right; arrays must match
 * exactly (never cast); scalars never bind; every placeholder a parameter
 * uses must end up bound. Produces the resolved dtype of every parameter. */
#ifndef UK_CODEGEN_BIND_H
#define UK_CODEGEN_BIND_H

#include "codegen/params.h"

#define UK_MAX_PARAMS UK_MAX_PARAMETERS

typedef struct uk_binding {
  int nin, nout;
  int outputs_given;               /* 1: every output array was given (data != 0) */
  uk_dtype dtype[UK_MAX_PARAMS];   /* inputs first, then outputs */
  int is_array[UK_MAX_PARAMS];     /* input i is an array (outputs always are) */
  int is_texture[UK_MAX_PARAMS];   /* input i is a texture object (dtype: uint64 storage) */
  uint64_t bound;                  /* bit k: placeholder[k] is bound */
  uk_dtype placeholder[52];        /* by letter: 'A'..'Z' then 'a'..'z'; valid where bound */
} uk_binding;

/* Binds. `outs` may hold all-zero data (allocate) or all given arrays.
 * Errors: UK_ERR_INVALID (counts, mixed given/allocated outputs, a scalar
 * for a raw parameter, bad descriptors), UK_ERR_TYPE (dtype mismatch naming
 * the parameter, both dtypes and where the placeholder was bound; an
 * unbound placeholder). `kernel` names the kernel in messages. */
uk_status uk__bind(const char *kernel, const uk_paramlist *in, const uk_paramlist *out,
                   const uk_arg *args, int nin, const uk_array *outs, int nout, uk_binding *b);

/* Index into uk_binding.placeholder for a letter; -1 if not a letter. */
int uk__bind_slot(char letter);

#endif
