/* On-disk cache of compiled binaries.
 *
 * One file per entry, named <32 hex digits of the key hash>.ukc, holding a
 * header (magic, format version, lengths, checksum), the full key text and
 * the encoded binary. Written to a temporary file and renamed into place, so
 * readers never see a partial entry. Every problem (missing dir, read-only
 * dir, short or corrupt file, different key, a directory or entry that is not
 * this user's private file) is a soft miss counted in the statistics, never
 * an error the caller sees. A hit returns a private copy whose checksum was
 * verified. A hit refreshes the entry's mtime; after every store, the
 * directory is listed and entries past the size cap are evicted
 * oldest-first, so the cap holds across processes.
 */
#ifndef UK_RUNTIME_DCACHE_H
#define UK_RUNTIME_DCACHE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/hash.h"
#include "runtime/binary.h"

typedef struct uk__dcache_stats {
  atomic_ullong hits, misses, store_failures, corrupt_entries, evictions;
  atomic_ullong untrusted; /* lookups refused: directory or entry not the user's private file */
} uk__dcache_stats;

typedef struct uk__dcache {
  char *dir;            /* no trailing slash */
  uint64_t max_bytes;
  char *refused;        /* non-NULL: why the directory is not used (never read or written) */
  uid_t owner;          /* the effective uid at open: the directory's and every used file's owner */
  uk__dcache_stats stats;
} uk__dcache;

/* Opens `dir` (creating it if needed, soft: failures show as store
 * failures later); the caller resolves the default directory
 * (uk_cache_default_dir): NULL or "" is UK_ERR_INVALID. max_bytes 0: 1 GiB.
 * Thread-safe after opening; several processes may share a directory. */
uk_status uk__dcache_open(const char *dir, uint64_t max_bytes, uk__dcache **out);
void uk__dcache_close(uk__dcache *c);

/* 1 and a new reference in *out on a hit; 0 on any miss. */
int uk__dcache_get(uk__dcache *c, uk_hash128 hash, const char *key, size_t key_len,
                   uk__binary **out);
/* Stores (soft: failures are counted, not returned). */
void uk__dcache_put(uk__dcache *c, uk_hash128 hash, const char *key, size_t key_len,
                    const uk__binary *b);

/* Small notes beside the entries (<name>.ukn, name of [A-Za-z0-9_-]): the
 * same trust rules as entries, written atomically, never evicted or counted
 * as entries. get: 1 with the text in buf (NUL-terminated, < cap bytes). */
int uk__dcache_note_get(uk__dcache *c, const char *name, char *buf, size_t cap);
void uk__dcache_note_put(uk__dcache *c, const char *name, const char *text);
/* The same read with no cache open: the directory is checked first. */
int uk__dcache_note_read(const char *dir, const char *name, char *buf, size_t cap);

/* Lists the directory now: removes temporary files older than an hour and
 * evicts past the cap (every put does this after its store; opening does
 * not). */
void uk__dcache_trim(uk__dcache *c);

/* Directory helpers shared with the public uk_cache_* functions. Entry
 * files are named <32 lowercase hex>.ukc; temporary ones
 * <32 hex>.ukc.tmp.<pid>.<random>. mkdirs: mkdir -p with mode 0700, 0 when
 * the directory exists afterwards, -1 otherwise. */
#define UK__DCACHE_STALE_TEMP_SECONDS 3600
int uk__dcache_is_entry_name(const char *name);
int uk__dcache_is_temp_name(const char *name);
int uk__dcache_mkdirs(const char *path);
/* Whether a directory may hold this user's cache: 0 when it is the user's
 * and not group/world writable, 1 when it does not exist, -1 otherwise with
 * the reason (no trailing period) in why. */
int uk__dcache_check_dir(const char *path, char *why, size_t cap);

/* The entry decoder a hit runs on the bytes it read (exposed for the fuzz
 * target): 1 and *out when `buf` holds a valid entry for `key`. *took: the
 * binary owns buf (then buf must be an munmap-able mapping of size bytes);
 * pass a malloc'd copy only where *took stays 0 (image not 16-aligned). */
int uk__dcache_entry_decode(void *buf, size_t size, const char *key, size_t key_len, uk__binary **out,
                            int *took);

#endif
