/* In-memory cache: a chained hash table under one mutex.
 *
 * An entry is created in the BUILDING state by the first caller, who builds
 * outside the lock; later callers for the same key wait on the entry's
 * condition variable. On success the entry turns READY and stays. On
 * failure it turns FAILED, leaves the table (so the next call retries) and
 * carries the builder's status and message to its waiters; the last of the
 * builder and its waiters to leave frees it. */
#include "runtime/mcache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

enum { BUILDING, READY, FAILED };

typedef struct entry {
  struct entry *next;
  uk_hash128 hash;
  char *key;
  size_t key_len;
  int state;
  uk__binary *binary; /* READY: the cache's reference */
  pthread_cond_t cond;
  int holders;        /* FAILED: threads that still read status/message */
  uk_status status;   /* FAILED */
  char *message, *log;
} entry;

struct uk__mcache {
  pthread_mutex_t lock;
  entry **buckets;
  size_t nbuckets; /* power of two */
  size_t count;
};

static void entry_free(entry *e) {
  pthread_cond_destroy(&e->cond);
  uk__binary_release(e->binary);
  free(e->key);
  free(e->message);
  free(e->log);
  free(e);
}

static size_t bucket_of(const uk__mcache *c, uk_hash128 h) {
  return (size_t)(h.lo ^ (h.hi >> 7)) & (c->nbuckets - 1);
}

uk_status uk__mcache_create(uk__mcache **out) {
  uk__mcache *c = calloc(1, sizeof *c);
  if (!c) return uk__errorf(UK_ERR_NOMEM, "out of memory creating the memory cache");
  c->nbuckets = 64;
  c->buckets = calloc(c->nbuckets, sizeof *c->buckets);
  if (!c->buckets || pthread_mutex_init(&c->lock, NULL) != 0) {
    free(c->buckets);
    free(c);
    return uk__errorf(UK_ERR_NOMEM, "out of memory creating the memory cache");
  }
  *out = c;
  return UK_OK;
}

void uk__mcache_destroy(uk__mcache *c) {
  if (!c) return;
  for (size_t i = 0; i < c->nbuckets; i++) {
    entry *e = c->buckets[i];
    while (e) {
      entry *next = e->next;
      entry_free(e);
      e = next;
    }
  }
  free(c->buckets);
  pthread_mutex_destroy(&c->lock);
  free(c);
}

/* Doubles the table at load 1; on allocation failure keeps the old one
 * (longer chains, still correct). Called with the lock held. */
static void maybe_grow(uk__mcache *c) {
  if (c->count < c->nbuckets) return;
  size_t n = c->nbuckets * 2;
  entry **nb = calloc(n, sizeof *nb);
  if (!nb) return;
  entry **old = c->buckets;
  size_t oldn = c->nbuckets;
  c->buckets = nb;
  c->nbuckets = n;
  for (size_t i = 0; i < oldn; i++) {
    entry *e = old[i];
    while (e) {
      entry *next = e->next;
      size_t b = bucket_of(c, e->hash);
      e->next = nb[b];
      nb[b] = e;
      e = next;
    }
  }
  free(old);
}

static entry *find(uk__mcache *c, uk_hash128 h, const char *key, size_t key_len) {
  for (entry *e = c->buckets[bucket_of(c, h)]; e; e = e->next)
    if (e->hash.lo == h.lo && e->hash.hi == h.hi && e->key_len == key_len &&
        memcmp(e->key, key, key_len) == 0)
      return e;
  return NULL;
}

static void unlink_entry(uk__mcache *c, entry *e) {
  for (entry **p = &c->buckets[bucket_of(c, e->hash)]; *p; p = &(*p)->next)
    if (*p == e) {
      *p = e->next;
      c->count--;
      return;
    }
}

/* Drops one hold on a FAILED entry; frees it when it was the last. */
static void leave_failed(entry *e) {
  if (--e->holders == 0) entry_free(e);
}

/* Re-raises a failed flight's error in the calling (waiting) thread. */
static uk_status raise_copy(uk_status s, const char *message, const char *log) {
  const char *m = message ? message : "build failed in another thread";
  if (log && *log) return uk__errorf_log(s, log, "%s", m);
  return uk__errorf(s, "%s", m);
}

/* Waits for a BUILDING entry; lock held on entry and exit. */
static uk_status wait_flight(uk__mcache *c, entry *e, uk__binary **out) {
  e->holders++;
  while (e->state == BUILDING) pthread_cond_wait(&e->cond, &c->lock);
  if (e->state == READY) {
    e->holders--;
    uk__binary_retain(e->binary);
    *out = e->binary;
    return UK_OK;
  }
  uk_status s = raise_copy(e->status, e->message, e->log);
  leave_failed(e);
  return s;
}

uk_status uk__mcache_get(uk__mcache *c, uk_hash128 hash, const char *key, size_t key_len,
                         uk__mcache_build_fn build, void *arg, uk__binary **out, int *hit) {
  uk__binary *b = NULL;
  uk_status s;
  pthread_mutex_lock(&c->lock);
  entry *e = find(c, hash, key, key_len);
  if (e) {
    if (e->state == READY) {
      uk__binary_retain(e->binary);
      b = e->binary;
      s = UK_OK;
    } else {
      s = wait_flight(c, e, &b);
    }
    pthread_mutex_unlock(&c->lock);
    if (s != UK_OK) return s;
    if (hit) *hit = 1;
    *out = b;
    return UK_OK;
  }

  e = calloc(1, sizeof *e);
  char *kcopy = malloc(key_len ? key_len : 1);
  if (!e || !kcopy || pthread_cond_init(&e->cond, NULL) != 0) {
    pthread_mutex_unlock(&c->lock);
    free(e);
    free(kcopy);
    return uk__errorf(UK_ERR_NOMEM, "out of memory in the memory cache");
  }
  if (key_len) memcpy(kcopy, key, key_len);
  e->hash = hash;
  e->key = kcopy;
  e->key_len = key_len;
  e->state = BUILDING;
  e->holders = 1;
  size_t bi = bucket_of(c, hash);
  e->next = c->buckets[bi];
  c->buckets[bi] = e;
  c->count++;
  maybe_grow(c);
  pthread_mutex_unlock(&c->lock);

  s = build(arg, &b);
  if (s == UK_OK && !b) s = uk__errorf(UK_ERR_INTERNAL, "memory cache: build gave no binary");
  char *message = NULL, *log = NULL;
  if (s != UK_OK) { /* copied before locking: the waiters' copy of our error */
    message = strdup(uk_last_error());
    log = strdup(uk_last_error_log());
  }

  pthread_mutex_lock(&c->lock);
  if (s == UK_OK) {
    e->binary = b; /* the build's reference becomes the cache's */
    e->state = READY;
    e->holders--;
    uk__binary_retain(b);
  } else {
    e->state = FAILED;
    e->status = s;
    e->message = message;
    e->log = log;
    unlink_entry(c, e);
  }
  pthread_cond_broadcast(&e->cond);
  if (s != UK_OK) leave_failed(e);
  pthread_mutex_unlock(&c->lock);
  if (s != UK_OK) return s;
  if (hit) *hit = 0;
  *out = b;
  return UK_OK;
}

int uk__mcache_peek(uk__mcache *c, uk_hash128 h, uk__mcache_match_fn match, void *arg, uk__binary **out) {
  int hit = 0;
  pthread_mutex_lock(&c->lock);
  for (entry *e = c->buckets[bucket_of(c, h)]; e && !hit; e = e->next)
    if (e->hash.lo == h.lo && e->hash.hi == h.hi && e->state == READY && match(arg, e->key, e->key_len)) {
      uk__binary_retain(e->binary);
      *out = e->binary;
      hit = 1;
    }
  pthread_mutex_unlock(&c->lock);
  return hit;
}
