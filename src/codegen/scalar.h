/* Host-side scalar conversion: uk_arg scalars to a parameter's dtype, with
 * CuPy/NumPy rules (SEMANTICS.md "Binding types", rule 4), and the float16 /
 * bfloat16 bit conversions they need (round to nearest even, from double in
 * one rounding). */
#ifndef UK_CODEGEN_SCALAR_H
#define UK_CODEGEN_SCALAR_H

#include <stdint.h>

#include "ukern/ukern.h"

/* Writes uk_dtype_size(t) bytes of `a` converted to t into out.
 * Untyped ints must fit t (UK_ERR_TYPE otherwise); untyped floats truncate
 * toward zero into integer types and must fit (NaN and Inf are errors);
 * typed scalars convert like a C cast (integers wrap; floats go through
 * int64 and must be finite and in its range); complex to real takes the
 * real part; anything to bool is != 0. `param` names the parameter in
 * messages. */
uk_status uk__scalar_convert(const uk_arg *a, uk_dtype t, const char *param, void *out);

uint16_t uk__f64_to_f16_bits(double x);
uint16_t uk__f64_to_bf16_bits(double x);
double uk__f16_bits_to_f64(uint16_t h);
double uk__bf16_bits_to_f64(uint16_t h);

#endif
