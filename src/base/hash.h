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
/* Streaming XXH3-128 over several pieces (opaque storage for the state). */
typedef struct uk_hasher {
  _Alignas(64) unsigned char state[640];
} uk_hasher;
void uk__hasher_init(uk_hasher *h);
void uk__hasher_update(uk_hasher *h, const void *data, size_t len);
/* Adds a string with its length first, so ("ab","c") and ("a","bc") differ. */
void uk__hasher_add_str(uk_hasher *h, const char *s);
uk_hash128 uk__hasher_digest(const uk_hasher *h);

/* 32 lowercase hex digits + NUL. */
void uk__hash128_hex(uk_hash128 h, char out[33]);

#endif
