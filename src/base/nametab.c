/* The name table (nametab.h). */
#include "base/nametab.h"

#include <stdlib.h>
#include <string.h>

/* FNV-1a: names are short, so a simple byte hash is as fast as any. */
static uint64_t hash_of(const char *s, size_t len) {
  uint64_t h = 1469598103934665603ull;
  for (size_t k = 0; k < len; k++) h = (h ^ (unsigned char)s[k]) * 1099511628211ull;
  return h;
}

static uk_nametab_slot *probe(const uk_nametab *t, const char *s, size_t len, uint64_t h) {
  size_t mask = t->cap - 1;
  for (size_t k = (size_t)h & mask;; k = (k + 1) & mask) {
    uk_nametab_slot *e = &t->slots[k];
    if (!e->s || (e->hash == h && e->len == len && memcmp(e->s, s, len) == 0)) return e;
  }
}

int *uk__nametab_find(const uk_nametab *t, const char *s, size_t len) {
  if (!t->cap) return NULL;
  uk_nametab_slot *e = probe(t, s, len, hash_of(s, len));
  return e->s ? &e->value : NULL;
}

static int grow(uk_nametab *t) {
  size_t cap = t->cap ? 2 * t->cap : 16;
  uk_nametab_slot *slots = calloc(cap, sizeof *slots);
  if (!slots) return -1;
  uk_nametab old = *t;
  t->slots = slots;
  t->cap = cap;
  for (size_t k = 0; k < old.cap; k++)
    if (old.slots[k].s) *probe(t, old.slots[k].s, old.slots[k].len, old.slots[k].hash) = old.slots[k];
  free(old.slots);
  return 0;
}

int *uk__nametab_put(uk_nametab *t, const char *s, size_t len, int value, int *added) {
  uint64_t h = hash_of(s, len);
  if (added) *added = 0;
  if (t->cap) {
    uk_nametab_slot *e = probe(t, s, len, h);
    if (e->s) return &e->value;
  }
  if (2 * (t->count + 1) > t->cap && grow(t) != 0) return NULL;
  uk_nametab_slot *e = probe(t, s, len, h);
  *e = (uk_nametab_slot){s, len, h, value};
  t->count++;
  if (added) *added = 1;
  return &e->value;
}

void uk__nametab_free(uk_nametab *t) {
  free(t->slots);
  t->slots = NULL;
  t->cap = t->count = 0;
}
