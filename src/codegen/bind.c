/* Placeholder binding (bind.h): the resolved dtype of every parameter of a call. */
#include "codegen/bind.h"

#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "codegen/dtype.h"

int uk__bind_slot(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return -1;
}

/* The parameter (inputs first, then outputs) that bound a placeholder: read
 * only for messages, and only for a bound slot, so nothing clears it. */
static const char *role_of(const uk_binding *b, int p) { return p < b->nin ? "input" : "output"; }

static const uk_param *param_of(const uk_paramlist *in, const uk_paramlist *out, int p) {
  return p < in->count ? &in->items[p] : &out->items[p - in->count];
}

/* Binds array parameter `param` (p: its declaration). */
static uk_status bind_array(const char *kernel, const uk_paramlist *in, const uk_paramlist *out, int param,
                            const uk_param *p, const uk_array *a, uk_binding *b, uint8_t *origin) {
  if ((unsigned)a->dtype >= UK_DTYPE_COUNT_) /* uk__dtype_info's test, without the call */
    return uk__errorf(UK_ERR_INVALID, "%s: %s '%s' has an invalid dtype (%d)", kernel, role_of(b, param), p->name,
                      (int)a->dtype);
  if (a->ndim < 0 || a->ndim > UK_MAX_NDIM)
    return uk__errorf(UK_ERR_INVALID, "%s: %s '%s' has ndim %d (must be 0..%d)", kernel, role_of(b, param), p->name,
                      a->ndim, UK_MAX_NDIM);
  b->dtype[param] = a->dtype;
  if (!p->is_placeholder) {
    if (a->dtype != p->dtype)
      return uk__errorf(UK_ERR_TYPE, "Type is mismatched. %s: %s '%s' is declared %s but the array is %s (arrays are never cast)",
                        kernel, role_of(b, param), p->name, uk_dtype_name(p->dtype), uk_dtype_name(a->dtype));
    return UK_OK;
  }
  int slot = uk__bind_slot(p->placeholder);
  if (!((b->bound >> slot) & 1)) {
    b->bound |= 1ull << slot;
    b->placeholder[slot] = a->dtype;
    origin[slot] = (uint8_t)param;
  } else if (b->placeholder[slot] != a->dtype) {
    int o = origin[slot];
    /* CuPy's words first: code written for CuPy matches on them */
    return uk__errorf(UK_ERR_TYPE, "Type is mismatched. %s: %s '%s' is %s but %c is %s (bound by %s '%s'); arrays are never cast", kernel,
                      role_of(b, param), p->name, uk_dtype_name(a->dtype), p->placeholder, uk_dtype_name(b->placeholder[slot]),
                      role_of(b, o), param_of(in, out, o)->name);
  }
  return UK_OK;
}

static uk_status resolve_rest(const char *kernel, const uk_param *p, uk_binding *b, uk_dtype *resolved) {
  if (!p->is_placeholder) {
    *resolved = p->dtype;
    return UK_OK;
  }
  int slot = uk__bind_slot(p->placeholder);
  if (!((b->bound >> slot) & 1))
    return uk__errorf(UK_ERR_TYPE,
                      "%s: placeholder '%c' is not bound: no array argument has type %c (pass an output array "
                      "or an array input of type %c)",
                      kernel, p->placeholder, p->placeholder, p->placeholder);
  *resolved = b->placeholder[slot];
  return UK_OK;
}

/* A texture object binds no type: its parameter must be a non-raw input
 * whose placeholder no other parameter uses, so nothing else depends on it. */
static uk_status bind_texture(const char *kernel, const uk_paramlist *in, const uk_paramlist *out, int k) {
  const uk_param *p = &in->items[k];
  const char *fix = "declare it with a placeholder of its own, e.g. 'U";
  if (p->is_raw || !p->is_placeholder)
    return uk__errorf(UK_ERR_TYPE, "%s: input '%s' gets a texture object, but it is declared '%s%s': %s %s'",
                      kernel, p->name, p->is_raw ? "raw " : "",
                      p->is_placeholder ? (char[]){p->placeholder, 0} : uk_dtype_name(p->dtype), fix, p->name);
  for (int j = 0; j < in->count + out->count; j++) {
    const uk_param *q = j < in->count ? &in->items[j] : &out->items[j - in->count];
    if (j != k && q->is_placeholder && q->placeholder == p->placeholder)
      return uk__errorf(UK_ERR_TYPE,
                        "%s: input '%s' gets a texture object, but its placeholder %c is also the type of %s '%s': "
                        "a texture binds no type (%s %s')",
                        kernel, p->name, p->placeholder, j < in->count ? "input" : "output", q->name, fix, p->name);
  }
  return UK_OK;
}

uk_status uk__bind(const char *kernel, const uk_paramlist *in, const uk_paramlist *out, const uk_arg *args,
                   int nin, const uk_array *outs, int nout, uk_binding *b) {
  if (nin != in->count)
    return uk__errorf(UK_ERR_INVALID, "%s: takes %d input%s but %d %s given", kernel, in->count,
                      in->count == 1 ? "" : "s", nin, nin == 1 ? "was" : "were");
  if (nout != out->count)
    return uk__errorf(UK_ERR_INVALID, "%s: has %d output%s but %d %s given", kernel, out->count,
                      out->count == 1 ? "" : "s", nout, nout == 1 ? "was" : "were");
  if (nin + nout > UK_MAX_PARAMS)
    return uk__errorf(UK_ERR_INVALID, "%s: too many parameters (%d, at most %d)", kernel, nin + nout, UK_MAX_PARAMS);
  if (nin && !args) return uk__errorf(UK_ERR_INVALID, "%s: inputs are NULL", kernel);
  if (nout && !outs) return uk__errorf(UK_ERR_INVALID, "%s: outputs are NULL", kernel);
  int given = 0;
  for (int k = 0; k < nout; k++) given += outs[k].data != 0;
  if (given && given != nout) {
    int g = 0, m = 0;
    for (int k = 0; k < nout; k++) {
      if (outs[k].data) g = k;
      else m = k;
    }
    return uk__errorf(UK_ERR_INVALID,
                      "%s: outputs must be all given or all allocated: '%s' is given but '%s' is not (data == 0)",
                      kernel, out->items[g].name, out->items[m].name);
  }
  /* Only what a call reads is set: the binding is rebuilt on every call. */
  b->nin = nin;
  b->nout = nout;
  b->outputs_given = nout > 0 && given == nout;
  b->bound = 0;
  uint8_t origin[52];
  uk_status s;
  if (b->outputs_given)
    for (int k = 0; k < nout; k++)
      if ((s = bind_array(kernel, in, out, nin + k, &out->items[k], &outs[k], b, origin)) != UK_OK) return s;
  for (int k = 0; k < nin; k++) {
    const uk_param *p = &in->items[k];
    b->is_array[k] = b->is_texture[k] = 0;
    if (args[k].kind == UK_ARG_ARRAY) {
      if (!args[k].v.array) return uk__errorf(UK_ERR_INVALID, "%s: input '%s' is a NULL array", kernel, p->name);
      b->is_array[k] = 1;
      if ((s = bind_array(kernel, in, out, k, p, args[k].v.array, b, origin)) != UK_OK) return s;
    } else if (args[k].kind == UK_ARG_TEXTURE) {
      if ((s = bind_texture(kernel, in, out, k)) != UK_OK) return s;
      b->is_texture[k] = 1;
      b->dtype[k] = UK_UINT64; /* the handle's storage */
    } /* a scalar for a raw input is a plain scalar there, as CuPy passes it */
  }
  for (int k = 0; k < nin; k++)
    if (!b->is_array[k] && !b->is_texture[k] && (s = resolve_rest(kernel, &in->items[k], b, &b->dtype[k])) != UK_OK) return s;
  if (!b->outputs_given)
    for (int k = 0; k < nout; k++)
      if ((s = resolve_rest(kernel, &out->items[k], b, &b->dtype[nin + k])) != UK_OK) return s;
  return UK_OK;
}
