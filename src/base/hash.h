/* 128-bit content hashes (xxHash XXH3-128, header-only from libxxhash-dev). */
#ifndef UK_BASE_HASH_H
#define UK_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct uk_hash128 {
  uint64_t lo, hi;
} uk_hash128;

uk_hash128 uk__hash128(const void *data, size_t len);
uint64_t uk__hash64(const void *data, size_t len);
/* 32 lowercase hex digits + NUL. */
void uk__hash128_hex(uk_hash128 h, char out[33]);

#endif
