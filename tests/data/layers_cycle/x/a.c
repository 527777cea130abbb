/* Fixture for test_layers_detects: a.c calls b.c, b.c calls a.c. */
#include "x/a.h"
#include "x/b.h"

int uk__a_twice(int v) { return 2 * uk__b_next(v); }
