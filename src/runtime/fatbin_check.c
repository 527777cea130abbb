/* Fatbin structure checks (image_check.h). The layout (fatbin.h): a
 * 16-byte header (u32 magic, u16 version, u16 header size, u64 size of the
 * entries), then entries, each a header (u16 kind, u16, u32 header size,
 * u64 payload size, u32 compressed size, ..., u32 name offset and length
 * at 32, u64 flags at 40, u64 uncompressed size at 56) and its payload.
 * All little-endian. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "runtime/image_check.h"

#define HEADER 16u
#define ENTRY_MIN 64u
#define KIND_PTX 1u
#define KIND_ELF 2u
#define FLAG_ZSTD 0x8000u
#define MAX_CHECKED_INFLATE (64u << 20)
#define FLAG_COMPRESSED 0xa000u /* 0x2000 LZ4 (older), 0x8000 zstd (CUDA 12.8+, PTX by default) */
/* Sane bound on what a compressed entry inflates to (the driver allocates it). */
#define MAX_INFLATED (1ull << 32)

static uint32_t rd16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const unsigned char *p) { return rd16(p) | rd16(p + 2) << 16; }
static uint64_t rd64(const unsigned char *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

#define BAD(at, ...) uk__image_bad(what, "fatbin", base + (at), __VA_ARGS__)

/* A zstd-compressed cubin entry: what nvJitLink will link is what it
 * inflates to, checked as a cubin (offsets in messages count within it). */
static uk_status check_inflated(const unsigned char *z, uint32_t csize, uint64_t inflated, uint64_t at, int k,
                                uint64_t base, const char *what, uint64_t *used, uint64_t len) {
  unsigned char *buf = malloc((size_t)inflated);
  if (!buf) return uk__errorf(UK_ERR_NOMEM, "out of memory checking a fatbin");
  size_t got = 0;
  int r = uk__zstd_inflate(z, csize, buf, (size_t)inflated, &got);
  uk_status st = UK_OK;
  if (r == 0 || (r == 1 && got != inflated)) {
    st = BAD(at + 16, "compressed entry %d does not inflate to its %llu bytes", k, (unsigned long long)inflated);
  } else if (r == 1) {
    char sub[512];
    snprintf(sub, sizeof sub, "%s: fatbin entry %d, inflated", what ? what : "image", k);
    st = uk__elf_check(buf, got, 0, UK__ELF_CUDA, sub);
  }
  free(buf);
  if (st == UK_OK) *used = len;
  return st;
}

/* Entry `k` at offset `at` of p, `left` bytes of the fatbin remaining. */
static uk_status check_entry(const unsigned char *p, uint64_t at, uint64_t left, int k, uint64_t base,
                             const char *what, uint64_t *used) {
  const unsigned char *e = p + at;
  if (left < ENTRY_MIN) return BAD(at, "entry %d's header is cut short (%llu bytes left)", k, (unsigned long long)left);
  uint32_t kind = rd16(e), hs = rd32(e + 4), csize = rd32(e + 16), name_off = rd32(e + 32), name_len = rd32(e + 36);
  uint64_t size = rd64(e + 8), flags = rd64(e + 40), inflated = rd64(e + 56);
  if (hs < ENTRY_MIN || hs > left)
    return BAD(at + 4, "entry %d's header size %u is not in %u..%llu", k, hs, ENTRY_MIN, (unsigned long long)left);
  if (size > left - hs)
    return BAD(at + 8, "entry %d claims %llu bytes; %llu are left", k, (unsigned long long)size,
               (unsigned long long)(left - hs));
  if (size == 0) return BAD(at + 8, "entry %d is empty", k);
  if (name_len && (name_off > hs + size || name_len > hs + size - name_off))
    return BAD(at + 32, "entry %d's name (offset %u, %u bytes) lies outside the entry", k, name_off, name_len);
  const unsigned char *payload = e + hs;
  if (flags & FLAG_COMPRESSED) {
    if (csize == 0 || csize > size)
      return BAD(at + 16, "compressed entry %d's compressed size %u is not in 1..%llu", k, csize,
                 (unsigned long long)size);
    if (inflated == 0 || inflated > MAX_INFLATED)
      return BAD(at + 56, "compressed entry %d's uncompressed size %llu is not in 1..2^32", k,
                 (unsigned long long)inflated);
    if (kind == KIND_ELF && (flags & FLAG_ZSTD) && inflated <= MAX_CHECKED_INFLATE)
      return check_inflated(payload, csize, inflated, at, k, base, what, used, hs + size);
  } else if (kind == KIND_ELF) {
    char sub[512];
    snprintf(sub, sizeof sub, "%s: fatbin entry %d", what ? what : "image", k);
    uk_status st = uk__elf_check(payload, (size_t)size, base + at + hs, UK__ELF_CUDA, sub);
    if (st != UK_OK) return st;
  } else if (kind == KIND_PTX && !memchr(payload, '\0', (size_t)size)) {
    return BAD(at + hs, "PTX entry %d is not NUL-terminated within its %llu bytes", k, (unsigned long long)size);
  }
  *used = hs + size;
  return UK_OK;
}

/* One fatbin at p (n bytes from there); *used: its length. */
static uk_status check_one(const unsigned char *p, size_t n, uint64_t base, const char *what, uint64_t *used) {
  if (n < HEADER) return BAD(0, "shorter than a fatbin header (16 bytes)");
  if (rd32(p) != UK__FATBIN_MAGIC) return BAD(0, "no fatbin magic");
  uint32_t version = rd16(p + 4), hs = rd16(p + 6);
  uint64_t size = rd64(p + 8);
  if (version != 1) return BAD(4, "unknown fatbin version %u", version);
  if (hs != HEADER) return BAD(6, "header size %u is not 16", hs); /* what nvcc writes and fatbin.c reads */
  if (size > n - hs)
    return BAD(8, "the header claims %llu bytes of entries; %zu are given", (unsigned long long)size, n - hs);
  if (size == 0) return BAD(8, "no entries");
  uint64_t at = hs, end = hs + size;
  for (int k = 0; at < end; k++) {
    uint64_t len = 0;
    uk_status st = check_entry(p, at, end - at, k, base, what, &len);
    if (st != UK_OK) return st;
    at += len;
  }
  *used = end;
  return UK_OK;
}

uk_status uk__fatbin_check(const void *data, size_t bytes, uint64_t base, const char *what) {
  const unsigned char *p = data;
  if (!p) return BAD(0, "no data");
  uint64_t at = 0;
  do {
    uint64_t used = 0;
    uk_status st = check_one(p + at, (size_t)(bytes - at), base + at, what, &used);
    if (st != UK_OK) return st;
    at += used;
  } while (bytes - at >= HEADER && rd32(p + at) == UK__FATBIN_MAGIC);
  return UK_OK;
}
