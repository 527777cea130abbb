/* C++ standard headers for NVRTC programs: `#include <type_traits>` (and the
 * other names in uk__std_header_names) resolves to a small generated header
 * that includes libcu++'s <cuda/std/type_traits> and makes its names
 * visible as std:: (namespace std { using namespace cuda::std; }), so
 * ordinary std:: code compiles as written. Only headers that this toolkit's
 * libcu++ has are mapped (looked up once in the NVRTC include dirs). */
#ifndef UK_RUNTIME_STD_HEADERS_H
#define UK_RUNTIME_STD_HEADERS_H

#include "runtime/toolkit.h"

/* The mapped headers: parallel arrays of names ("type_traits") and header
 * texts, *count entries; borrowed static strings. Looked up once, in the
 * first caller's tk->include_dirs (none: no header is mapped). */
void uk__std_headers(const uk__toolkit *tk, const char *const **names, const char *const **texts, int *count);

/* Every standard name ukern knows how to map (documented in ukern.h), NULL-terminated. */
extern const char *const uk__std_header_names[];

/* A mapped header's text: this format with the name in its three %s. */
extern const char uk__std_header_format[];

/* A digest of the map's candidates and header text (the format and every
 * name, each length-prefixed), for cache keys (no file system access). */
const char *uk__std_headers_digest(void);

#endif
