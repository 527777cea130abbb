/* In-memory cache of compiled binaries, per context: thread-safe and
 * single-flight (N threads asking for the same new key build it once; the
 * others wait for that result). Entries are found by a 128-bit hash that
 * the caller derives from the key text (any function of it: equal keys,
 * equal hashes); the text itself is kept and compared on every hit
 * (uk__mcache_get compares it, uk__mcache_peek asks the caller to). */
#ifndef UK_RUNTIME_MCACHE_H
#define UK_RUNTIME_MCACHE_H

#include <stddef.h>

#include "base/hash.h"
#include "runtime/binary.h"

typedef struct uk__mcache uk__mcache;

/* Builds the binary for a missing key (compile, or load from disk). On
 * failure it sets the thread's error and returns the status. */
typedef uk_status (*uk__mcache_build_fn)(void *arg, uk__binary **out);

uk_status uk__mcache_create(uk__mcache **out);
void uk__mcache_destroy(uk__mcache *c); /* releases every binary */

/* Gets the binary for (hash, key), building it with build(arg) on a miss.
 * *out gets a new reference (release with uk__binary_release). *hit is set
 * to 1 when no build ran in this call (may be NULL). A failed build is not
 * cached: waiters of that flight get the same status and message, later
 * calls try again. */
uk_status uk__mcache_get(uk__mcache *c, uk_hash128 hash, const char *key, size_t key_len,
                         uk__mcache_build_fn build, void *arg, uk__binary **out, int *hit);

/* Whether a stored key (len bytes) is the one the caller looks for. */
typedef int (*uk__mcache_match_fn)(void *arg, const char *key, size_t len);

/* The fast path of a hit: a READY entry with this hash whose key `match`
 * accepts (the caller compares without building its key text; a hash
 * collision is never a hit). 1 and a new reference in *out, else 0. */
int uk__mcache_peek(uk__mcache *c, uk_hash128 hash, uk__mcache_match_fn match, void *arg, uk__binary **out);

#endif
