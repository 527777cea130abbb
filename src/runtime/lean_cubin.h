/* Lean cubins: NVRTC to PTX, unreferenced globals dropped, cubin built by
 * the driver's PTX compiler (see uk__compile_req.lean_keep). */
#ifndef UK_RUNTIME_LEAN_CUBIN_H
#define UK_RUNTIME_LEAN_CUBIN_H

#include "runtime/compile.h"

/* Whether a lean cubin for `arch` can be built on `device` with options
 * `opts` (n of them): the driver loads, the device has that arch, and no
 * option asks ptxas for something the driver's compiler would not be told
 * (debug info, line info, register limits, ptxas options, relocatable or
 * LTO output, another arch), and $UKERN_LEAN_CUBIN is "1" (opt-in: see
 * lean_cubin.c). Never sets an error. */
int uk__lean_possible(int device, int arch, const char *const *opts, int n);

/* Compiles req (req->lean_keep set) into a lean cubin. Errors as
 * uk__nvrtc_compile; a failing driver link gives UK_ERR_COMPILE with the
 * driver's log. */
uk_status uk__lean_compile(const uk__compile_req *req, uk__binary **out);

#endif
