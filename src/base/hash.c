#include "base/hash.h"

#include <stdio.h>
#include <string.h>

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

_Static_assert(sizeof(XXH3_state_t) <= sizeof(((uk_hasher *)0)->state), "uk_hasher too small");
_Static_assert(_Alignof(XXH3_state_t) <= 64, "uk_hasher alignment");

void uk__hasher_init(uk_hasher *h) { XXH3_128bits_reset((XXH3_state_t *)(void *)h->state); }

void uk__hasher_update(uk_hasher *h, const void *data, size_t len) {
  XXH3_128bits_update((XXH3_state_t *)(void *)h->state, data, len);
}

void uk__hasher_add_str(uk_hasher *h, const char *s) {
  uint64_t n = strlen(s);
  uk__hasher_update(h, &n, sizeof n);
  uk__hasher_update(h, s, (size_t)n);
}

uk_hash128 uk__hasher_digest(const uk_hasher *h) {
  XXH128_hash_t d = XXH3_128bits_digest((const XXH3_state_t *)(const void *)h->state);
  uk_hash128 r = {d.low64, d.high64};
  return r;
}
