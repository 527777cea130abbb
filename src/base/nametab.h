/* A name -> int table (open addressing, linear probing) for parsers that
 * resolve names as they read them: a lookup costs the same for the 10th
 * name as for the 100,000th, so parsing stays linear.
 *
 * Invariants: keys are borrowed (s, len) spans, not copied, and must stay
 * valid and unchanged while the table is used; cap is 0 or a power of two
 * and count < cap / 2 after every put. A zeroed struct is an empty table.
 * Not thread-safe (one parser owns one table). */
#ifndef UK_BASE_NAMETAB_H
#define UK_BASE_NAMETAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct uk_nametab_slot {
  const char *s; /* NULL: empty */
  size_t len;
  uint64_t hash;
  int value;
} uk_nametab_slot;

typedef struct uk_nametab {
  uk_nametab_slot *slots;
  size_t cap, count;
} uk_nametab;

/* The value stored for the name, or NULL when it is not in the table. The
 * pointer is valid until the next put. */
int *uk__nametab_find(const uk_nametab *t, const char *s, size_t len);
/* Stores (name, value) unless the name is there already; returns the
 * stored value's slot either way (*added tells which, when added is not
 * NULL), or NULL when out of memory (the table is unchanged). */
int *uk__nametab_put(uk_nametab *t, const char *s, size_t len, int value, int *added);
/* Frees the slots (not the keys); the table is empty again. */
void uk__nametab_free(uk_nametab *t);

#endif
