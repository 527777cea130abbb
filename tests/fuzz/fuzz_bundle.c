/* Fuzz entry for the bundle reader (libFuzzer, or the replay driver): the
 * input is the bytes of a bundle file, parsed as uk__bundle_open parses one
 * (uk__bundle_parse over memory). The checksums would stop almost every
 * input at the door, so each input also runs with every checksum and key
 * hash recomputed where the offsets allow. Any refusal is fine; a crash, a
 * leak or a broken invariant is a finding. When a bundle opens:
 *   - every entry is found by its own key for each arch it lists, as a
 *     binary with its name map, whose image lies in the input's payload;
 *   - another key is not found, and an arch the bundle lacks is skipped. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "fuzz_util.h"
#include "runtime/bundle.h"

static uint64_t le(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = n; i-- > 0;) v = v << 8 | p[i];
  return v;
}

static void put64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* In place: each record's key hash and checksums, the table's and the
 * header's, where they lie inside the buffer. */
static void fix_sums(unsigned char *b, size_t size) {
  if (size < UK__BUNDLE_HEADER) return;
  uint64_t count = le(b + 32, 4), toff = le(b + 40, 8);
  for (uint64_t k = 0; k < count && k < 4096; k++) {
    uint64_t r = toff + k * UK__BUNDLE_RECORD;
    if (toff > size || r > size - UK__BUNDLE_RECORD) break;
    unsigned char *rec = b + r;
    uint64_t moff = le(rec + 16, 8), msize = le(rec + 24, 8), poff = le(rec + 32, 8), psize = le(rec + 40, 8);
    if (moff <= size && msize <= size - moff) {
      put64(rec + 48, uk__hash64(b + moff, (size_t)msize));
      if (msize >= 4 && le(b + moff, 4) <= msize - 4) {
        uk_hash128 h = uk__hash128(b + moff + 4, (size_t)le(b + moff, 4));
        put64(rec, h.lo);
        put64(rec + 8, h.hi);
      }
    }
    if (poff <= size && psize <= size - poff) put64(rec + 56, uk__hash64(b + poff, (size_t)psize));
  }
  uint64_t tsize = le(b + 48, 8);
  if (toff <= size && tsize <= size - toff) put64(b + 64, uk__hash64(b + toff, (size_t)tsize));
  put64(b + 88, uk__hash64(b, 88));
}

static void check_open(uk__bundle *bn, const unsigned char *buf, size_t size) {
  require(bn->count >= 0 && bn->num_archs >= 0);
  for (int k = 0; k < bn->count; k++) {
    const uk__bundle_entry *e = &bn->entries[k];
    require(e->payload_offset <= size && e->payload_size <= size - e->payload_offset);
    for (int a = 0; a < e->num_archs; a++) {
      uk__binary *b = NULL;
      int found = 0;
      if (uk__bundle_find(bn, e->hash, e->key, e->key_len, e->archs[a], &b, &found) != UK_OK) continue; /* memory */
      require(found && b && b->num_names == e->num_names && b->arch == e->archs[a].num);
      require(b->image_size <= e->payload_size);
      for (int n = 0; n < b->num_names; n++) require(!strcmp(b->lowered[n], e->lowered[n]));
      uk__binary_release(b);
    }
    uk__binary *b = NULL;
    int found = 1;
    uk_hash128 other = uk__hash128("another key", 11);
    require(uk__bundle_find(bn, other, "another key", 11, e->archs[0], &b, &found) == UK_OK && !found && !b);
    found = 1;
    require(uk__bundle_find(bn, e->hash, e->key, e->key_len, (uk__arch){9999, 0}, &b, &found) == UK_OK && !found);
  }
  (void)buf;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  unsigned char *buf = malloc(size ? size : 1);
  if (!buf) return 0;
  for (int fix = 0; fix < 2; fix++) {
    memcpy(buf, data, size);
    if (fix) fix_sums(buf, size);
    uk__bundle *bn = NULL;
    if (uk__bundle_parse(buf, size, "fuzz", &bn) == UK_OK) {
      check_open(bn, buf, size);
      uk__bundle_close(bn);
    } else {
      require(bn == NULL);
    }
  }
  free(buf);
  return 0;
}
