#include "x/a.h"
#include "x/b.h"

int uk__b_next(int v) { return v > 100 ? v : uk__a_twice(v + 1); }
