/* The fusion language's operators and NumPy functions, their type rules, and
 * NumPy 2 dtype promotion (np.result_type with NEP 50 weak Python scalars). */
#ifndef UK_CODEGEN_FUSE_OPS_H
#define UK_CODEGEN_FUSE_OPS_H

#include "codegen/fuse_ir.h"

/* How an operation's result dtype follows from its operands'. */
typedef enum uk_fuse_rule {
  UK_RULE_ARITH,  /* promote(a, b) (bool: see uk__fuse_op_result) */
  UK_RULE_DIV,    /* promote, ints -> float64 */
  UK_RULE_FLOAT,  /* promote, ints -> smallest float holding them (int8 -> float16) */
  UK_RULE_CMP,    /* bool */
  UK_RULE_BIT,    /* promote, bool/int only */
  UK_RULE_LOGIC,  /* bool, any operands */
  UK_RULE_SAME,   /* the operand's dtype */
  UK_RULE_ABS,    /* the operand's, complex -> its real part's */
  UK_RULE_PRED,   /* bool (isnan, ...) */
  UK_RULE_WHERE,  /* promote(arg1, arg2); arg0 is a condition */
  UK_RULE_CLIP,   /* promote(arg0, arg1, arg2) */
  UK_RULE_STRONG, /* the operand's dtype, never weak (np.asarray of a Python scalar) */
  UK_RULE_COUNT   /* uint8, bool/int operands (bitwise_count) */
} uk_fuse_rule;

#define UK_FUSE_OPS(X)                                                   \
  /* name, nargs, rule, complex ok, C helper or operator */              \
  X(ADD, "add", 2, UK_RULE_ARITH, 1, "+")                                \
  X(SUB, "subtract", 2, UK_RULE_ARITH, 1, "-")                           \
  X(MUL, "multiply", 2, UK_RULE_ARITH, 1, "*")                           \
  X(DIV, "true_divide", 2, UK_RULE_DIV, 1, "/")                          \
  X(FLOORDIV, "floor_divide", 2, UK_RULE_ARITH, 0, "_uk_floordiv")       \
  X(MOD, "remainder", 2, UK_RULE_ARITH, 0, "_uk_mod")                    \
  X(POW, "power", 2, UK_RULE_ARITH, 1, "_uk_pow")                        \
  X(LT, "less", 2, UK_RULE_CMP, 1, "<")                                  \
  X(LE, "less_equal", 2, UK_RULE_CMP, 1, "<=")                           \
  X(GT, "greater", 2, UK_RULE_CMP, 1, ">")                               \
  X(GE, "greater_equal", 2, UK_RULE_CMP, 1, ">=")                        \
  X(EQ, "equal", 2, UK_RULE_CMP, 1, "==")                                \
  X(NE, "not_equal", 2, UK_RULE_CMP, 1, "!=")                            \
  X(AND, "bitwise_and", 2, UK_RULE_BIT, 0, "&")                          \
  X(OR, "bitwise_or", 2, UK_RULE_BIT, 0, "|")                            \
  X(XOR, "bitwise_xor", 2, UK_RULE_BIT, 0, "^")                          \
  X(LSHIFT, "left_shift", 2, UK_RULE_BIT, 0, "_uk_lshift")               \
  X(RSHIFT, "right_shift", 2, UK_RULE_BIT, 0, "_uk_rshift")              \
  X(INVERT, "invert", 1, UK_RULE_BIT, 0, "~")                            \
  X(NEG, "negative", 1, UK_RULE_SAME, 1, "-")                            \
  X(POS, "positive", 1, UK_RULE_SAME, 1, "+")                            \
  X(ABS, "abs", 1, UK_RULE_ABS, 1, "_uk_abs")                            \
  X(ABSOLUTE, "absolute", 1, UK_RULE_ABS, 1, "_uk_abs")                  \
  X(EXP, "exp", 1, UK_RULE_FLOAT, 1, "_uk_exp")                          \
  X(EXP2, "exp2", 1, UK_RULE_FLOAT, 1, "_uk_exp2")                       \
  X(EXPM1, "expm1", 1, UK_RULE_FLOAT, 1, "_uk_expm1")                    \
  X(LOG, "log", 1, UK_RULE_FLOAT, 1, "_uk_log")                          \
  X(LOG2, "log2", 1, UK_RULE_FLOAT, 1, "_uk_log2")                       \
  X(LOG10, "log10", 1, UK_RULE_FLOAT, 1, "_uk_log10")                    \
  X(LOG1P, "log1p", 1, UK_RULE_FLOAT, 1, "_uk_log1p")                    \
  X(SQRT, "sqrt", 1, UK_RULE_FLOAT, 1, "_uk_sqrt")                       \
  X(CBRT, "cbrt", 1, UK_RULE_FLOAT, 0, "_uk_cbrt")                       \
  X(SQUARE, "square", 1, UK_RULE_SAME, 1, "_uk_square")                  \
  X(RECIPROCAL, "reciprocal", 1, UK_RULE_SAME, 1, "_uk_reciprocal")      \
  X(SIN, "sin", 1, UK_RULE_FLOAT, 1, "_uk_sin")                          \
  X(COS, "cos", 1, UK_RULE_FLOAT, 1, "_uk_cos")                          \
  X(TAN, "tan", 1, UK_RULE_FLOAT, 1, "_uk_tan")                          \
  X(ARCSIN, "arcsin", 1, UK_RULE_FLOAT, 1, "_uk_arcsin")                 \
  X(ARCCOS, "arccos", 1, UK_RULE_FLOAT, 1, "_uk_arccos")                 \
  X(ARCTAN, "arctan", 1, UK_RULE_FLOAT, 1, "_uk_arctan")                 \
  X(ARCTAN2, "arctan2", 2, UK_RULE_FLOAT, 0, "_uk_arctan2")              \
  X(SINH, "sinh", 1, UK_RULE_FLOAT, 1, "_uk_sinh")                       \
  X(COSH, "cosh", 1, UK_RULE_FLOAT, 1, "_uk_cosh")                       \
  X(TANH, "tanh", 1, UK_RULE_FLOAT, 1, "_uk_tanh")                       \
  X(ARCSINH, "arcsinh", 1, UK_RULE_FLOAT, 1, "_uk_arcsinh")              \
  X(ARCCOSH, "arccosh", 1, UK_RULE_FLOAT, 1, "_uk_arccosh")              \
  X(ARCTANH, "arctanh", 1, UK_RULE_FLOAT, 1, "_uk_arctanh")              \
  X(HYPOT, "hypot", 2, UK_RULE_FLOAT, 0, "_uk_hypot")                    \
  X(FLOOR, "floor", 1, UK_RULE_SAME, 0, "_uk_floor")                     \
  X(CEIL, "ceil", 1, UK_RULE_SAME, 0, "_uk_ceil")                        \
  X(TRUNC, "trunc", 1, UK_RULE_SAME, 0, "_uk_trunc")                     \
  X(RINT, "rint", 1, UK_RULE_FLOAT, 0, "_uk_rint")                       \
  X(SIGN, "sign", 1, UK_RULE_SAME, 0, "_uk_sign")                        \
  X(MAXIMUM, "maximum", 2, UK_RULE_ARITH, 1, "_uk_maximum")              \
  X(MINIMUM, "minimum", 2, UK_RULE_ARITH, 1, "_uk_minimum")              \
  X(FMAX, "fmax", 2, UK_RULE_ARITH, 1, "_uk_fmax")                       \
  X(FMIN, "fmin", 2, UK_RULE_ARITH, 1, "_uk_fmin")                       \
  X(CLIP, "clip", 3, UK_RULE_CLIP, 1, "_uk_clip")                        \
  X(FMOD, "fmod", 2, UK_RULE_ARITH, 0, "_uk_fmod")                       \
  X(COPYSIGN, "copysign", 2, UK_RULE_FLOAT, 0, "_uk_copysign")           \
  X(NEXTAFTER, "nextafter", 2, UK_RULE_FLOAT, 0, "_uk_nextafter")        \
  X(I0, "i0", 1, UK_RULE_FLOAT, 0, "_uk_i0")                             \
  X(GCD, "gcd", 2, UK_RULE_BIT, 0, "_uk_gcd")                            \
  X(LCM, "lcm", 2, UK_RULE_BIT, 0, "_uk_lcm")                            \
  X(BITCOUNT, "bitwise_count", 1, UK_RULE_COUNT, 0, "_uk_bitwise_count")  \
  X(ISNAN, "isnan", 1, UK_RULE_PRED, 1, "_uk_isnan")                     \
  X(ISINF, "isinf", 1, UK_RULE_PRED, 1, "_uk_isinf")                     \
  X(ISFINITE, "isfinite", 1, UK_RULE_PRED, 1, "_uk_isfinite")            \
  X(LAND, "logical_and", 2, UK_RULE_LOGIC, 1, "&&")                      \
  X(LOR, "logical_or", 2, UK_RULE_LOGIC, 1, "||")                        \
  X(LXOR, "logical_xor", 2, UK_RULE_LOGIC, 1, "!=")                      \
  X(LNOT, "logical_not", 1, UK_RULE_LOGIC, 1, "!")                       \
  X(REAL, "real", 1, UK_RULE_ABS, 1, "_uk_real")                         \
  X(IMAG, "imag", 1, UK_RULE_ABS, 1, "_uk_imag")                         \
  X(ANGLE, "angle", 1, UK_RULE_FLOAT, 1, "_uk_angle")                    \
  X(CONJ, "conj", 1, UK_RULE_SAME, 1, "_uk_conj")                        \
  X(CONJUGATE, "conjugate", 1, UK_RULE_SAME, 1, "_uk_conj")              \
  X(WHERE, "where", 3, UK_RULE_WHERE, 1, "?")                            \
  X(ASARRAY, "asarray", 1, UK_RULE_STRONG, 1, "_uk_copy")

typedef enum uk_fuse_op {
#define UK_FUSE_OP_ENUM_(id, name, nargs, rule, cx, c) UK_OP_##id,
  UK_FUSE_OPS(UK_FUSE_OP_ENUM_)
#undef UK_FUSE_OP_ENUM_
  UK_OP_COUNT_
} uk_fuse_op;

typedef struct uk_fuse_opinfo {
  const char *name;
  int nargs;
  uk_fuse_rule rule;
  int complex_ok;
  const char *c; /* C operator or helper from <ukern/fusion.cuh> */
} uk_fuse_opinfo;

const uk_fuse_opinfo *uk__fuse_op_info(int op);
/* Function name -> op (NumPy names); -1 if none. */
int uk__fuse_op_lookup(const char *name, size_t len);
/* Reduction name -> uk_fuse_red ("sum", "amax", ...); -1 if none. */
int uk__fuse_red_lookup(const char *name, size_t len);
const char *uk__fuse_red_name(int red);

/* A dtype with NEP 50 weakness: weak = a Python scalar (or an expression of
 * only Python scalars); its dtype is then int64, float64, complex128 or bool. */
typedef struct uk_fuse_type {
  uk_dtype dtype;
  int weak;
} uk_fuse_type;

/* np.result_type of two operands (either may be weak). */
uk_fuse_type uk__fuse_promote(uk_fuse_type a, uk_fuse_type b);
/* The float type NumPy computes a float function of `t` in (int8 -> float16,
 * int16 -> float32, int32/64 -> float64; floats and complex unchanged). */
uk_dtype uk__fuse_floatify(uk_dtype t);
/* Result type of op on args, or UK_ERR_TYPE with the reason in *why. */
uk_status uk__fuse_op_result(int op, const uk_fuse_type *args, int nargs, uk_fuse_type *out, const char **why);
/* Result dtype of a reduction of `t` (sum of int8 -> int64, mean of int -> float64, ...). */
uk_status uk__fuse_red_result(int red, uk_dtype t, uk_dtype *out, const char **why);

#endif
