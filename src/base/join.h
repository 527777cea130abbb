/* Strings joined without printf: the names a new process's first cache
 * lookup builds (library and toolkit paths, entry and note paths, the key
 * prefix) went through vfprintf, a fifth of that lookup's instructions. */
#ifndef UK_BASE_JOIN_H
#define UK_BASE_JOIN_H

#include <stddef.h>

/* The NULL-terminated list of strings, concatenated into out (NUL
 * terminated): their length, or -1 (out then "") when cap is too small. */
long uk__join(char *out, size_t cap, ...) __attribute__((sentinel));
/* The same into a malloc'd string; NULL when out of memory. */
char *uk__join_alloc(const char *first, ...) __attribute__((sentinel));
/* The decimal digits of v into out (cap >= 21); returns their count. */
int uk__udec(char *out, unsigned long long v);

#endif
