/* The user files a compile can read through #include, for the cache key:
 * editing a header that a source includes (next to the source, through -I,
 * through headers it includes in turn) must give a new key. */
#ifndef UK_RUNTIME_INCLUDE_SCAN_H
#define UK_RUNTIME_INCLUDE_SCAN_H

#include "runtime/compile.h"

/* Digest (32 hex digits + NUL in out) of every file NVRTC could open for
 * the request's #include lines, found the way NVRTC searches: "x" in the
 * including file's directory (for the source: the directory of req->name,
 * "." when it has none), then the -I / --include-path directories of the
 * options in order; <x> in those -I directories only (the toolkit's own
 * directories are keyed by path, the embedded headers by their digest).
 * -include / --pre-include files count as "x" includes of the source. Each
 * file's path and contents are hashed and it is scanned in turn; a name
 * found nowhere is hashed as missing (creating it later changes the key).
 * The scan ignores #if: it may key on more files than NVRTC reads, never on
 * fewer, except #include of a macro, which cannot be followed.
 * Returns 0 (out = "") when no user location is searched at all (generated
 * kernels with no -I option): the key is then what it was without this. */
int uk__include_digest(const uk__compile_req *req, char out[33]);

#endif
