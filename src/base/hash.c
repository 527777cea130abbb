#include "base/hash.h"

#include <stdio.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

uk_hash128 uk__hash128(const void *data, size_t len) {
  XXH128_hash_t h = XXH3_128bits(data, len);
  uk_hash128 r = {h.low64, h.high64};
  return r;
}

uint64_t uk__hash64(const void *data, size_t len) { return XXH3_64bits(data, len); }

void uk__hash128_hex(uk_hash128 h, char out[33]) {
  snprintf(out, 33, "%016llx%016llx", (unsigned long long)h.hi, (unsigned long long)h.lo);
}
