/* 128-bit content hashes over xxHash's XXH3-128 (hash.h). */
#include "base/hash.h"

#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

uk_hash128 uk__hash128(const void *data, size_t len) {
  XXH128_hash_t h = XXH3_128bits(data, len);
  uk_hash128 r = {h.low64, h.high64};
  return r;
}

uint64_t uk__hash64(const void *data, size_t len) { return XXH3_64bits(data, len); }

/* By hand: snprintf's padding code is a new process's only use of two
 * libc pages (a fault each on its first disk-cache lookup). */
void uk__hash128_hex(uk_hash128 h, char out[33]) {
  static const char digits[] = "0123456789abcdef";
  for (int i = 0; i < 16; i++) {
    out[15 - i] = digits[(h.hi >> (4 * i)) & 15u];
    out[31 - i] = digits[(h.lo >> (4 * i)) & 15u];
  }
  out[32] = '\0';
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
