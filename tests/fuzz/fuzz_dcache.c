/* Fuzz entry for the disk-cache entry decoder (libFuzzer, or the replay
 * driver): the input is the bytes of an entry file, decoded as a hit does
 * (uk__dcache_entry_decode on a private mapping). The checksum would stop
 * almost every input at the door, so each input also runs with its checksum
 * field recomputed. Each runs twice: against the key the entry itself holds
 * (so decoding goes on past the key) and against another key (must miss).
 * Any result is fine; a crash, a leak or a broken invariant (abort()) is a
 * finding. On a hit:
 *   - the image lies inside the buffer (used in place, 16-byte aligned) or
 *     is a copy, and every name has a lowered name and a log exists;
 *   - the encoding is canonical: re-encoding the binary gives back exactly
 *     the payload bytes of the entry. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/hash.h"
#include "runtime/dcache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HEADER 32u

static void require(int cond) {
  if (!cond) abort();
}

static uint64_t le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static void check_hit(const uk__binary *b, const uint8_t *buf, size_t size, uint64_t klen) {
  const uint8_t *img = b->image;
  int inside = img >= buf && img <= buf + size;
  require(!inside || (((uintptr_t)img & 15u) == 0 && b->image_size <= (size_t)(buf + size - img)));
  require(b->log != NULL && b->num_names >= 0);
  for (int i = 0; i < b->num_names; i++) require(b->names[i] && b->lowered[i]);
  void *enc = NULL;
  size_t elen = 0;
  if (uk__binary_encode(b, &enc, &elen) != UK_OK) return; /* out of memory */
  require(elen <= size - HEADER - klen);
  require(memcmp(enc, buf + size - elen, elen) == 0);
  free(enc);
}

/* One decode of `data` as an entry for `key`. */
static void decode_once(const uint8_t *data, size_t size, int fix_sum, const char *key, size_t key_len) {
  if (size == 0) return;
  uint8_t *buf = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (buf == MAP_FAILED) return;
  memcpy(buf, data, size);
  if (fix_sum && size >= HEADER) {
    uint64_t sum = uk__hash64(buf + HEADER, size - HEADER);
    for (int i = 0; i < 8; i++) buf[24 + i] = (uint8_t)(sum >> (8 * i));
  }
  mprotect(buf, size, PROT_READ);
  uk__binary *b = NULL;
  int took = 0;
  int hit = uk__dcache_entry_decode(buf, size, key, key_len, &b, &took);
  require(hit ? b != NULL : (b == NULL && !took));
  if (hit) {
    require(size >= HEADER && le64(buf + 8) == key_len && memcmp(buf + HEADER, key, key_len) == 0);
    check_hit(b, buf, size, key_len);
    uk__binary_release(b); /* unmaps buf when it took it */
  }
  if (!took) munmap(buf, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* The entry's own key, when its length fits. */
  const char *own = "";
  size_t own_len = 0;
  if (size >= HEADER && le64(data + 8) <= size - HEADER) {
    own = (const char *)data + HEADER;
    own_len = (size_t)le64(data + 8);
  }
  char *key = malloc(own_len + 1);
  if (!key) return 0;
  memcpy(key, own, own_len);
  for (int fix = 0; fix < 2; fix++) {
    decode_once(data, size, fix, key, own_len);
    decode_once(data, size, fix, "another key", 11);
  }
  free(key);
  return 0;
}
