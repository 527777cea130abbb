/* Compile targets: an SM number (90 for sm_90) with its variant, parsed from
 * what users write ("90", "90a", "sm_90a", "compute_90", "100f",
 * "-arch=sm_90a" in an option list) and checked against the architectures
 * this NVRTC supports (nvrtcGetSupportedArchs). */
#ifndef UK_RUNTIME_ARCH_H
#define UK_RUNTIME_ARCH_H

#include "ukern/ukern.h"

/* Variant bits beside the number (uk__compile_req.arch_flags). */
#define UK__ARCH_A 1       /* sm_XYa: arch-specific features (wgmma, TMA) */
#define UK__ARCH_F 2       /* sm_XYf: family-specific features */
#define UK__ARCH_VIRTUAL 4 /* compute_XY: PTX only, JIT-compiled by the driver */

typedef struct uk__arch {
  int num;   /* 90 */
  int flags; /* UK__ARCH_* */
} uk__arch;

/* Parses "90", "90a", "100f", "sm_90a", "compute_90" (also "compute_90a").
 * UK_ERR_INVALID naming `what` (e.g. "uk_options.arch_name") with the
 * accepted forms. Does not check NVRTC support (uk__arch_check does). */
uk_status uk__arch_parse(const char *text, const char *what, uk__arch *out);

/* UK_OK when NVRTC supports the arch (and the variant exists for it: 'a'
 * from 90, 'f' from 100); else UK_ERR_INVALID listing the supported ones. */
uk_status uk__arch_check(uk__arch a, const char *what);

/* The NVRTC option for a target: "-arch=sm_90a", "-arch=compute_90". */
void uk__arch_option(uk__arch a, char *buf, size_t cap);
/* Just the name: "sm_90a", "compute_90". */
void uk__arch_name(uk__arch a, char *buf, size_t cap);

/* Finds an arch option in `options` ("-arch=X", "-arch X", "--gpu-architecture=X",
 * "--gpu-architecture X"): *index is its position (-1: none), *span how
 * many entries it takes (1 or 2), *out the parsed target. UK_ERR_INVALID
 * for an unparsable or unsupported value, or more than one such option. */
uk_status uk__arch_from_options(const char *const *options, int n, int *index, int *span,
                                uk__arch *out);

/* uk__arch_from_options, then the option leaves the list (*n shrinks) and
 * sets *target; the list is left alone when it has none. */
uk_status uk__arch_take_option(const char **options, int *n, uk__arch *target);

#endif
