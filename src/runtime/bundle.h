/* Kernel bundles: a read-only file of compiled kernels, a cache tier that
 * contexts look up after their memory cache and before the disk cache.
 *
 * Layout (every integer little-endian):
 *   header, 96 bytes:
 *     0 "UKBUNDLE"   8 u32 format version (1)   12 u32 byte-order mark 0x0A0B0C0D
 *    16 library version, NUL-padded (16 bytes)  32 u32 entry count  36 u32 flags (0)
 *    40 u64 table offset   48 u64 table size (count * 64)   56 u64 total file size
 *    64 u64 XXH3-64 of the table   72, 80 u64 zero   88 u64 XXH3-64 of bytes 0..87
 *   table: one 64-byte record per entry, sorted by key hash (hi, then lo):
 *     0 u64 hash lo  8 u64 hash hi (XXH3-128 of the bundle key text, compile.h)
 *    16 u64 meta offset  24 u64 meta size  32 u64 payload offset  40 u64 payload size
 *    48 u64 XXH3-64 of the meta  56 u64 XXH3-64 of the payload
 *   meta: u32 key length, the key text; u32 arch count, (u32 sm, u32 variant
 *     flags) each; u32 name count, (u32 length, name expression, u32 length,
 *     lowered name) each
 *   payload: a fatbin (fatbin.h) with one cubin per arch of the meta,
 *     16-byte aligned.
 *
 * Reading: the file is opened O_RDONLY | O_NOFOLLOW | O_NONBLOCK (a symlink
 * or FIFO is refused, never waited on), must be a regular file whose size
 * is the header's, and is read with pread, never mapped: a file truncated
 * by another process later gives a short read (an error), never SIGBUS.
 * Everything is checked at open (header, table, bounds, every meta and
 * payload checksum, every fatbin's images against its arch list); a hit
 * reads its payload again into private memory and checks its checksum
 * there, so a file changed since it was opened is refused, not used. The
 * descriptor stays open: many processes and threads read one file at once
 * (pread has no shared offset). */
#ifndef UK_RUNTIME_BUNDLE_H
#define UK_RUNTIME_BUNDLE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hash.h"
#include "runtime/arch.h"
#include "runtime/binary.h"

#define UK__BUNDLE_MAGIC "UKBUNDLE"
#define UK__BUNDLE_VERSION 1u
#define UK__BUNDLE_BOM 0x0A0B0C0Du
#define UK__BUNDLE_HEADER 96u
#define UK__BUNDLE_RECORD 64u
#define UK__BUNDLE_MAX_ARCHS 32

typedef struct uk__bundle_entry {
  uk_hash128 hash;
  const char *key; /* into the bundle's meta copy */
  size_t key_len;
  int num_archs;
  uk__arch archs[UK__BUNDLE_MAX_ARCHS];
  int num_names;
  const char **names, **lowered; /* into the meta copy (NUL-terminated copies) */
  uint64_t payload_offset, payload_size, payload_sum;
} uk__bundle_entry;

typedef struct uk__bundle {
  char *path;
  int fd;                    /* -1 for uk__bundle_parse's */
  const unsigned char *mem;  /* uk__bundle_parse: the bytes (borrowed), else NULL */
  uint64_t size;
  int count;
  uk__bundle_entry *entries; /* sorted by hash */
  uk__arch archs[UK__BUNDLE_MAX_ARCHS]; /* every arch of any entry */
  int num_archs;
  atomic_ullong hits;
  atomic_int skipped;        /* 2: a lookup skipped it for its arch (reason below; 1: being written) */
  char skip_reason[200];
} uk__bundle;

/* Opens and checks a bundle. UK_ERR_IO (cannot open, not a regular file,
 * truncated, damaged: bad magic, checksum, bounds) or UK_ERR_INVALID
 * (another format or library version, another byte order), the message
 * naming the file and the reason. */
uk_status uk__bundle_open(const char *path, uk__bundle **out);
/* The same over bytes in memory (the fuzz target): no file. */
uk_status uk__bundle_parse(const void *data, size_t size, const char *name, uk__bundle **out);
void uk__bundle_close(uk__bundle *b); /* NULL is a no-op */

/* Looks a bundle key up (hash: uk__hash128 of key). *found = 1 and *out a
 * new binary (the cubin for `arch`) on a hit; 0 when the bundle has no
 * entry for it, or none for that arch (the reason kept in skip_reason).
 * UK_ERR_IO when the entry cannot be read back intact (the file changed
 * since it was opened). Thread-safe. */
uk_status uk__bundle_find(uk__bundle *b, uk_hash128 hash, const char *key, size_t key_len, uk__arch arch,
                          uk__binary **out, int *found);

/* Writes a bundle at path from the compile entries of a disk cache
 * directory (bundle_write.c): those for the archs `want` (all when nwant is
 * 0; cubins of sm_XY and sm_XYa only), one entry per kernel holding every
 * arch found. A line per kernel and a summary go to report (may be NULL).
 * UK_ERR_NOT_FOUND when nothing qualifies; UK_ERR_IO for the directory or
 * the file. */
struct uk_strbuf;
uk_status uk__bundle_write_from_cache(const char *dir, const uk__arch *want, int nwant, const char *path,
                                      struct uk_strbuf *report);

/* Whether the bundle holds code for `arch`. */
int uk__bundle_has_arch(const uk__bundle *b, uk__arch arch);
/* "sm_80 sm_90" */
void uk__bundle_arch_list(const uk__arch *archs, int n, char *buf, size_t cap);

#endif
