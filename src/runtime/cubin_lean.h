/* Hiding unused global variables of a cubin from the module loader.
 *
 * cuModuleLoadData does work for every variable of a cubin: an object
 * symbol, and a relocation that writes its address into the module's
 * constant bank 4. For ~640 CCCL constants that is ~2.4 ms per load; with
 * their relocations removed and their symbols turned into plain local
 * labels, the same cubin loads in ~0.15 ms (H200). The code is untouched:
 * the variables are the ones no instruction refers to (ptx_globals.h), so
 * their constant-bank slots are never read. */
#ifndef UK_RUNTIME_CUBIN_LEAN_H
#define UK_RUNTIME_CUBIN_LEAN_H

#include <stddef.h>

#include "runtime/ptx_globals.h"

/* Edits `image` (a cubin of `size` bytes, in place): the local object
 * symbols of .nv.global* sections named in `unused` become untyped, and
 * their relocations in .rela.nv.constant4 go. Anything unexpected (not a
 * 64-bit little-endian CUDA ELF, bounds, a relocation elsewhere naming one
 * of them) leaves the image exactly as it was. Returns how many symbols it
 * hid. */
int uk__cubin_hide_globals(void *image, size_t size, const uk__name_set *unused);

#endif
