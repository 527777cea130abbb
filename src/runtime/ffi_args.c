/* Kernel argument layouts with libffi (see ffi_args.h). */
#include "runtime/ffi_args.h"

#include <ffi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "runtime/cudadrv.h"

/* More parameters than CUDA's 32764 parameter bytes could hold. */
#define MAX_DRIVER_PARAMS 32764

/* ukern::complex<float> is alignas(8) and ukern::complex<double> alignas(16)
 * (like float2/double2), which a plain struct of two floats/doubles is not.
 * libffi recomputes a nested struct's size and alignment only when its size
 * is 0, so presetting both makes it use ours; it never writes to these. */
static ffi_type *c64_elements[] = {&ffi_type_float, &ffi_type_float, NULL};
static ffi_type *c128_elements[] = {&ffi_type_double, &ffi_type_double, NULL};
static ffi_type ffi_type_c64 = {8, 8, FFI_TYPE_STRUCT, c64_elements};
static ffi_type ffi_type_c128 = {16, 16, FFI_TYPE_STRUCT, c128_elements};

static ffi_type *ffi_of(uk_ctype t) {
  switch (t) {
  case UK_CT_BOOL: return &ffi_type_uint8;
  case UK_CT_I8: return &ffi_type_sint8;
  case UK_CT_U8: return &ffi_type_uint8;
  case UK_CT_I16: return &ffi_type_sint16;
  case UK_CT_U16: return &ffi_type_uint16;
  case UK_CT_I32: return &ffi_type_sint32;
  case UK_CT_U32: return &ffi_type_uint32;
  case UK_CT_I64: return &ffi_type_sint64;
  case UK_CT_U64: return &ffi_type_uint64;
  case UK_CT_F16: return &ffi_type_uint16; /* only size and alignment matter */
  case UK_CT_BF16: return &ffi_type_uint16;
  case UK_CT_F32: return &ffi_type_float;
  case UK_CT_F64: return &ffi_type_double;
  case UK_CT_C64: return &ffi_type_c64;
  case UK_CT_C128: return &ffi_type_c128;
  case UK_CT_PTR: return &ffi_type_pointer;
  default: return NULL;
  }
}

uk_status uk__arglayout_build(const uk_cparams *params, uk_arglayout *out) {
  if (!params || !out) return uk__errorf(UK_ERR_INVALID, "uk__arglayout_build: NULL argument");
  uk_arglayout l;
  memset(&l, 0, sizeof l);
  ffi_type **elements = NULL;
  ffi_type st = {0, 0, FFI_TYPE_STRUCT, NULL};
  uk_status s = UK_OK;
  int n = params->count;
  if (n == 0) goto done; /* libffi rejects an empty struct */

  size_t un = (size_t)n;
  elements = calloc(un + 1, sizeof *elements);
  l.offsets = calloc(un, sizeof *l.offsets);
  l.sizes = calloc(un, sizeof *l.sizes);
  l.names = calloc(un, sizeof *l.names);
  l.spellings = calloc(un, sizeof *l.spellings);
  if (!elements || !l.offsets || !l.sizes || !l.names || !l.spellings) goto nomem;
  l.count = n; /* from here on uk__arglayout_free releases what is set */
  for (int k = 0; k < n; k++) {
    const uk_cparam *p = &params->params[k];
    elements[k] = ffi_of(p->type);
    if (!elements[k]) {
      s = uk__errorf(UK_ERR_INTERNAL, "parameter '%s': invalid C type %d", p->name, (int)p->type);
      goto out;
    }
    l.sizes[k] = elements[k]->size;
    l.names[k] = strdup(p->name);
    l.spellings[k] = strdup(p->spelling);
    if (!l.names[k] || !l.spellings[k]) goto nomem;
  }
  st.elements = elements;
  ffi_status fs = ffi_get_struct_offsets(FFI_DEFAULT_ABI, &st, l.offsets);
  if (fs != FFI_OK) {
    s = uk__errorf(UK_ERR_INTERNAL, "ffi_get_struct_offsets failed (%d)", (int)fs);
    goto out;
  }
  l.total = st.size;
  l.param_bytes = n ? l.offsets[n - 1] + l.sizes[n - 1] : 0;
done:
  *out = l;
  memset(&l, 0, sizeof l);
  goto out;
nomem:
  s = uk__errorf(UK_ERR_NOMEM, "out of memory");
out:
  free(elements);
  uk__arglayout_free(&l);
  return s;
}

void uk__arglayout_free(uk_arglayout *l) {
  if (!l) return;
  for (int k = 0; k < l->count; k++) {
    if (l->names) free(l->names[k]);
    if (l->spellings) free(l->spellings[k]);
  }
  free(l->offsets);
  free(l->sizes);
  free(l->names);
  free(l->spellings);
  memset(l, 0, sizeof *l);
}

void uk__arglayout_pack(const uk_arglayout *l, void *const *args, void *buffer) {
  char *b = buffer;
  if (l->total) memset(b, 0, l->total); /* padding: deterministic bytes */
  for (int k = 0; k < l->count; k++) memcpy(b + l->offsets[k], args[k], l->sizes[k]);
}

/* "parameter 'n' (float)", or "parameter 3 (float)" when unnamed. */
static const char *describe(const uk_arglayout *l, int k, char *buf, size_t cap) {
  const char *name = l->names[k];
  if (strchr(name, ' ')) /* "parameter N": no identifier has a space */
    snprintf(buf, cap, "%s (%s)", name, l->spellings[k]);
  else
    snprintf(buf, cap, "parameter '%s' (%s)", name, l->spellings[k]);
  return buf;
}

uk_status uk__driver_params(CUfunction f, int *count, uk_param_info **out) {
  *count = 0;
  *out = NULL;
  uk_status st = uk__cu_need(cuFuncGetParamInfo);
  if (st != UK_OK) return st;
  int n = 0, cap = 0;
  uk_param_info *ps = NULL;
  for (; n < MAX_DRIVER_PARAMS; n++) {
    size_t off = 0, size = 0;
    CUresult r = uk__cu.cuFuncGetParamInfo(f, (size_t)n, &off, &size);
    if (r == CUDA_ERROR_INVALID_VALUE) break;
    if (r != CUDA_SUCCESS) {
      free(ps);
      return uk__cu_error(r, "cuFuncGetParamInfo");
    }
    if (n == cap) {
      cap = cap ? 2 * cap : 8;
      uk_param_info *p = realloc(ps, (size_t)cap * sizeof *p);
      if (!p) {
        free(ps);
        return uk__errorf(UK_ERR_NOMEM, "out of memory reading a kernel's parameters");
      }
      ps = p;
    }
    ps[n].offset = off;
    ps[n].size = size;
  }
  *count = n;
  *out = ps;
  return UK_OK;
}

uk_status uk__arglayout_check(const uk_arglayout *l, const uk_param_info *params, int n, const char *kernel) {
  /* the first mismatch is remembered so that a wrong arity is reported first */
  int bad = -1;
  size_t bad_off = 0, bad_size = 0;
  for (int k = 0; k < n && k < l->count && bad < 0; k++)
    if (params[k].offset != l->offsets[k] || params[k].size != l->sizes[k]) {
      bad = k;
      bad_off = params[k].offset;
      bad_size = params[k].size;
    }
  if (n != l->count)
    return uk__errorf(UK_ERR_INVALID,
                      "kernel '%s' takes %d parameter%s but the signature declares %d", kernel, n,
                      n == 1 ? "" : "s", l->count);
  if (bad < 0) return UK_OK;
  char what[512];
  describe(l, bad, what, sizeof what);
  if (bad_size != l->sizes[bad])
    return uk__errorf(UK_ERR_INVALID,
                      "%s is %zu bytes but kernel '%s' expects %zu bytes at offset %zu", what,
                      l->sizes[bad], kernel, bad_size, bad_off);
  return uk__errorf(UK_ERR_INVALID, "%s is at offset %zu but kernel '%s' expects it at offset %zu",
                    what, l->offsets[bad], kernel, bad_off);
}
