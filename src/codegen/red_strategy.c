/* What a reduction strategy is (red_plan.h): kernel names and groups,
 * threads per output, the scratch a split needs, its description. The
 * planner (red_plan.c) and the cost model (red_cost.c) both use them. */
#include <stdio.h>

#include "codegen/red_plan.h"

static const char *const suffixes[UK_RED_NKERNELS] = {"_g", "_g", "_g", "_g", "_cols", "_p"};

const char *uk__red_kernel_suffix(int id) { return id >= 0 && id < UK_RED_NKERNELS ? suffixes[id] : ""; }

int uk__red_kernel_group(int id) {
  return id == UK_RED_COLS ? UK_RED_GROUP_COLS : id == UK_RED_PACK ? UK_RED_GROUP_PACK : UK_RED_GROUP_G;
}

int uk__red_pack_unroll(int vec) { return vec >= 8 ? 1 : 2; }

int uk__red_threads_per_output(const uk_red_strategy *s) {
  switch (s->kernel) {
  case UK_RED_T1: return 1;
  case UK_RED_G8: return s->by > 0 ? s->by : 8; /* 2 or 4 for short rows (uk__red_narrow_lanes) */
  case UK_RED_G32: return 32;
  case UK_RED_B: return uk__red_block_threads(s);
  default: return s->by > 0 ? s->by : 1;
  }
}

int64_t uk__red_scratch_bytes(const uk_red_strategy *s, int64_t partial_size) {
  if (s->nsplit <= 1 || s->cluster) return 0;
  return s->grid_x * s->nsplit * s->slots * partial_size;
}

const char *uk__red_describe(const uk_red_strategy *s, char *buf, int size) {
  static const char *const what[UK_RED_NKERNELS] = {"a thread per output", "8 threads per output",
                                                    "a warp per output",  "a block per output",
                                                    "threads across outputs",
                                                    "rows of 2 packed in vectors"};
  const char *w = s->kernel >= 0 && s->kernel < UK_RED_NKERNELS ? what[s->kernel] : "?";
  const char *v = s->vec ? ", vector loads" : "";
  if (s->cluster) {
    snprintf(buf, (size_t)size, "a cluster of %d blocks of %d threads per output%s, pieces of %lld", s->cluster,
             s->block, v, (long long)s->chunk);
    return buf;
  }
  int n = s->kernel == UK_RED_G8 ? snprintf(buf, (size_t)size, "%d threads per output%s", uk__red_threads_per_output(s), v)
          : s->block ? snprintf(buf, (size_t)size, "a block of %d threads per output%s", s->block, v)
                    : snprintf(buf, (size_t)size, "%s%s", w, v);
  if (s->kernel == UK_RED_COLS && n >= 0 && n < size)
    n += snprintf(buf + n, (size_t)(size - n), ", %d threads per output", s->by);
  if (n >= 0 && n < size) n += snprintf(buf + n, (size_t)(size - n), ", %lld blocks", (long long)s->grid_x);
  if (s->nsplit > 1 && n >= 0 && n < size)
    snprintf(buf + n, (size_t)(size - n), ", split %lld x %lld%s", (long long)s->nsplit, (long long)s->chunk,
             s->swz ? " (a tile's pieces together)" : "");
  return buf;
}
