/* The fusion language's operators and functions and their NumPy 2 type rules (fuse_ops.h). */
#include "codegen/fuse_ops.h"

#include <string.h>

#include "codegen/dtype.h"

static const uk_fuse_opinfo ops[UK_OP_COUNT_] = {
#define UK_FUSE_OP_ROW_(id, name, nargs, rule, cx, c) {name, nargs, rule, cx, c},
    UK_FUSE_OPS(UK_FUSE_OP_ROW_)
#undef UK_FUSE_OP_ROW_
};

static const char *const red_names[UK_RED_COUNT_] = {"sum",  "prod", "max",    "min",    "mean", "any",
                                                     "all",  "argmax", "argmin", "var",  "std"};

const uk_fuse_opinfo *uk__fuse_op_info(int op) { return op >= 0 && op < UK_OP_COUNT_ ? &ops[op] : NULL; }

static int equals(const char *s, size_t len, const char *lit) { return strlen(lit) == len && memcmp(s, lit, len) == 0; }

int uk__fuse_op_lookup(const char *name, size_t len) {
  for (int k = 0; k < UK_OP_COUNT_; k++)
    if (equals(name, len, ops[k].name)) return k;
  /* NumPy aliases */
  if (equals(name, len, "divide")) return UK_OP_DIV;
  if (equals(name, len, "mod")) return UK_OP_MOD;
  if (equals(name, len, "fabs")) return UK_OP_ABS;
  if (equals(name, len, "arccosh")) return UK_OP_ARCCOSH;
  return -1;
}

int uk__fuse_red_lookup(const char *name, size_t len) {
  for (int k = 0; k < UK_RED_COUNT_; k++)
    if (equals(name, len, red_names[k])) return k;
  if (equals(name, len, "amax")) return UK_RED_MAX;
  if (equals(name, len, "amin")) return UK_RED_MIN;
  return -1;
}

const char *uk__fuse_red_name(int red) { return red >= 0 && red < UK_RED_COUNT_ ? red_names[red] : "?"; }

static uk_dtype_kind kind(uk_dtype t) { return uk__dtype_info(t)->kind; }
static size_t size(uk_dtype t) { return uk__dtype_info(t)->size; }

static uk_dtype int_of(int is_unsigned, size_t bytes) {
  switch (bytes) {
  case 1: return is_unsigned ? UK_UINT8 : UK_INT8;
  case 2: return is_unsigned ? UK_UINT16 : UK_INT16;
  case 4: return is_unsigned ? UK_UINT32 : UK_INT32;
  default: return is_unsigned ? UK_UINT64 : UK_INT64;
  }
}

uk_dtype uk__fuse_floatify(uk_dtype t) {
  switch (kind(t)) {
  case UK_KIND_BOOL: return UK_FLOAT16;
  case UK_KIND_INT:
  case UK_KIND_UINT: return size(t) == 1 ? UK_FLOAT16 : size(t) == 2 ? UK_FLOAT32 : UK_FLOAT64;
  default: return t;
  }
}

/* Floats by precision; float16 and bfloat16 meet at float32. */
static uk_dtype float_join(uk_dtype a, uk_dtype b) {
  if (a == b) return a;
  if (a == UK_FLOAT64 || b == UK_FLOAT64) return UK_FLOAT64;
  return UK_FLOAT32; /* f16/bf16 with f32, or f16 with bf16 */
}

static uk_dtype complex_of(uk_dtype f) { return f == UK_FLOAT64 ? UK_COMPLEX128 : UK_COMPLEX64; }
static uk_dtype real_of(uk_dtype c) {
  return c == UK_COMPLEX128 ? UK_FLOAT64 : c == UK_COMPLEX64 ? UK_FLOAT32 : c;
}

/* np.promote_types for two strong dtypes. */
static uk_dtype promote_strong(uk_dtype a, uk_dtype b) {
  uk_dtype_kind ka = kind(a), kb = kind(b);
  if (a == b) return a;
  if (ka == UK_KIND_BOOL) return b;
  if (kb == UK_KIND_BOOL) return a;
  if (ka > kb || (ka == kb && ka == UK_KIND_UINT && kb == UK_KIND_INT)) {
    uk_dtype t = a; a = b; b = t;
    uk_dtype_kind k = ka; ka = kb; kb = k;
  }
  /* now ka <= kb (INT < UINT in the enum; mixed ints handled here) */
  if ((ka == UK_KIND_INT || ka == UK_KIND_UINT) && (kb == UK_KIND_INT || kb == UK_KIND_UINT)) {
    if (ka == kb) return size(a) >= size(b) ? a : b;
    /* a signed, b unsigned */
    if (size(a) > size(b)) return a;
    if (size(b) >= 8) return UK_FLOAT64;
    return int_of(0, size(b) * 2);
  }
  if (kb == UK_KIND_FLOAT) {
    if (ka == UK_KIND_FLOAT) return float_join(a, b);
    uk_dtype f = uk__fuse_floatify(a);
    return f == UK_FLOAT16 && b == UK_BFLOAT16 ? b : float_join(f, b);
  }
  /* kb complex */
  if (ka == UK_KIND_COMPLEX) return size(a) >= size(b) ? a : b;
  uk_dtype f = ka == UK_KIND_FLOAT ? a : uk__fuse_floatify(a);
  return f == UK_FLOAT64 ? UK_COMPLEX128 : b;
}

static uk_dtype default_of(uk_dtype_kind k) {
  switch (k) {
  case UK_KIND_BOOL: return UK_BOOL;
  case UK_KIND_INT:
  case UK_KIND_UINT: return UK_INT64;
  case UK_KIND_FLOAT: return UK_FLOAT64;
  default: return UK_COMPLEX128;
  }
}

uk_fuse_type uk__fuse_promote(uk_fuse_type a, uk_fuse_type b) {
  uk_fuse_type r = {UK_BOOL, 0};
  if (a.weak && b.weak) {
    uk_dtype_kind k = kind(a.dtype) > kind(b.dtype) ? kind(a.dtype) : kind(b.dtype);
    r.dtype = default_of(k);
    r.weak = 1;
    return r;
  }
  if (!a.weak && !b.weak) {
    r.dtype = promote_strong(a.dtype, b.dtype);
    return r;
  }
  uk_fuse_type s = a.weak ? b : a, w = a.weak ? a : b;
  uk_dtype_kind ks = kind(s.dtype), kw = kind(w.dtype);
  r.dtype = s.dtype;
  if (kw == UK_KIND_BOOL || ks >= kw || (ks == UK_KIND_INT && kw == UK_KIND_UINT)) return r;
  /* the weak scalar is of a higher kind than the array */
  if (kw == UK_KIND_INT || kw == UK_KIND_UINT) r.dtype = UK_INT64; /* bool array + int */
  else if (kw == UK_KIND_FLOAT) r.dtype = UK_FLOAT64;              /* bool/int array + float */
  else r.dtype = ks == UK_KIND_FLOAT ? complex_of(s.dtype) : UK_COMPLEX128;
  return r;
}

uk_status uk__fuse_op_result(int op, const uk_fuse_type *args, int nargs, uk_fuse_type *out, const char **why) {
  const uk_fuse_opinfo *oi = uk__fuse_op_info(op);
  uk_fuse_type r = args[0];
  if (oi->rule == UK_RULE_WHERE) r = uk__fuse_promote(args[1], args[2]);
  else
    for (int k = 1; k < nargs; k++) r = uk__fuse_promote(r, args[k]);
  uk_dtype_kind k = kind(r.dtype);
  if (k == UK_KIND_COMPLEX && !oi->complex_ok) {
    *why = "is not supported for complex operands";
    return UK_ERR_TYPE;
  }
  int weak = r.weak && oi->rule != UK_RULE_FLOAT;
  switch (oi->rule) {
  case UK_RULE_ARITH:
  case UK_RULE_SAME:
  case UK_RULE_CLIP:
  case UK_RULE_WHERE:
    if (k == UK_KIND_BOOL && oi->rule != UK_RULE_WHERE) {
      if (op == UK_OP_SUB || op == UK_OP_NEG || op == UK_OP_SIGN) {
        *why = "is not supported for booleans (use logical_xor / logical_not)";
        return UK_ERR_TYPE;
      }
      if (op == UK_OP_FLOORDIV || op == UK_OP_MOD || op == UK_OP_POW || op == UK_OP_FMOD || op == UK_OP_SQUARE ||
          op == UK_OP_RECIPROCAL || op == UK_OP_CONJ || op == UK_OP_CONJUGATE)
        r.dtype = r.weak ? UK_INT64 : UK_INT8;
    }
    if ((op == UK_OP_FLOOR || op == UK_OP_CEIL || op == UK_OP_TRUNC) && k == UK_KIND_BOOL) r.dtype = UK_BOOL;
    break;
  case UK_RULE_DIV:
    if (k == UK_KIND_BOOL || k == UK_KIND_INT || k == UK_KIND_UINT) r.dtype = UK_FLOAT64;
    break;
  case UK_RULE_FLOAT:
    r.dtype = r.weak && k != UK_KIND_COMPLEX ? UK_FLOAT64 : uk__fuse_floatify(r.dtype);
    if (op == UK_OP_ANGLE) r.dtype = real_of(r.dtype); /* np.angle: arctan2(imag, real) */
    if (nargs == 2 && !args[0].weak && !args[1].weak && kind(args[0].dtype) < UK_KIND_FLOAT &&
        kind(args[1].dtype) < UK_KIND_FLOAT) { /* two ints: the first float loop both cast to safely */
      uk_fuse_type a = {uk__fuse_floatify(args[0].dtype), 0}, b = {uk__fuse_floatify(args[1].dtype), 0};
      r.dtype = uk__fuse_promote(a, b).dtype;
    }
    break;
  case UK_RULE_BIT:
    if (k == UK_KIND_FLOAT || k == UK_KIND_COMPLEX) {
      *why = "needs boolean or integer operands";
      return UK_ERR_TYPE;
    }
    if (k == UK_KIND_BOOL && (op == UK_OP_GCD || op == UK_OP_LCM)) { /* NumPy has no loop for them */
      *why = "needs integer operands";
      return UK_ERR_TYPE;
    }
    /* shifts have no bool loop: NumPy computes them in int8 */
    if (k == UK_KIND_BOOL && (op == UK_OP_LSHIFT || op == UK_OP_RSHIFT)) r.dtype = r.weak ? UK_INT64 : UK_INT8;
    break;
  case UK_RULE_STRONG:
    weak = 0;
    break;
  case UK_RULE_COUNT: /* the set bits of |x|, as uint8 */
    if (k == UK_KIND_FLOAT) {
      *why = "needs boolean or integer operands";
      return UK_ERR_TYPE;
    }
    r.dtype = UK_UINT8;
    weak = 0;
    break;
  case UK_RULE_ABS:
    if (op == UK_OP_REAL || op == UK_OP_IMAG || k == UK_KIND_COMPLEX) r.dtype = real_of(r.dtype);
    break;
  case UK_RULE_CMP:
  case UK_RULE_LOGIC:
  case UK_RULE_PRED:
    r.dtype = UK_BOOL;
    weak = 0;
    break;
  }
  r.weak = weak;
  *out = r;
  return UK_OK;
}

uk_status uk__fuse_red_result(int red, uk_dtype t, uk_dtype *out, const char **why) {
  uk_dtype_kind k = kind(t);
  switch (red) {
  case UK_RED_SUM:
  case UK_RED_PROD:
    *out = k == UK_KIND_BOOL || k == UK_KIND_INT ? UK_INT64 : k == UK_KIND_UINT ? UK_UINT64 : t;
    return UK_OK;
  case UK_RED_MAX:
  case UK_RED_MIN:
  case UK_RED_ARGMAX:
  case UK_RED_ARGMIN: /* complex values order lexicographically, as NumPy 2's */
    *out = red == UK_RED_MAX || red == UK_RED_MIN ? t : UK_INT64;
    return UK_OK;
  case UK_RED_MEAN:
    *out = k == UK_KIND_FLOAT || k == UK_KIND_COMPLEX ? t : UK_FLOAT64;
    return UK_OK;
  case UK_RED_ANY:
  case UK_RED_ALL:
    *out = UK_BOOL;
    return UK_OK;
  default: /* var, std */
    if (k == UK_KIND_COMPLEX) {
      *why = "is not supported for complex operands";
      return UK_ERR_TYPE;
    }
    *out = k == UK_KIND_FLOAT ? t : UK_FLOAT64;
    return UK_OK;
  }
}
