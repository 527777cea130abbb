/* plan_describe: the reduction planner's plan for a C-contiguous input, offline (no driver,
 * no GPU), as bench/tools/plan_regret.py asks for it. One query a line on stdin:
 *
 *   SHAPE MASK ITEMSIZE PARTIAL_BYTES PER_SM TUNE
 *
 * SHAPE: the extents joined by 'x' (e.g. 256x1024); MASK: the reduced axes, bit i for axis i;
 * ITEMSIZE: bytes an element (its vector: 16 bytes); PARTIAL_BYTES: the program's partial (4 a
 * float32 sum, 16 an argmax pair); PER_SM: resident blocks an SM (the loaded program's
 * occupancy); TUNE: '-' for the planner's own plan, else UKERN_RED_TUNE's by, sp and cv
 * ("by=16,sp=4,cv=0"). Prints per query: the query's SHAPE, MASK and TUNE, the plan's
 * description (uk__red_describe) and the model's cost in us, tab-separated. 132 SMs (an H200),
 * as the tables the planner is judged against were timed; no thread-block clusters (the tables
 * time no wide plan over one: uk__red_wide_cluster). Malformed lines are reported on
 * stderr and skipped (exit status 1 at the end). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/red_cost.h"
#include "codegen/red_emit.h"
#include "codegen/red_plan.h"
#include "codegen/shape.h"

#define SMS 132

static int parse_shape(const char *text, int *ndim, int64_t *shape) {
  *ndim = 0;
  while (*text) {
    char *end;
    long long v = strtoll(text, &end, 10);
    if (end == text || v < 1 || *ndim >= UK_MAX_NDIM) return 0;
    shape[(*ndim)++] = v;
    if (*end == 'x') end++;
    else if (*end) return 0;
    text = end;
  }
  return *ndim > 0;
}

static int describe(const char *shape_text, unsigned mask, int itemsize, int partial, int per_sm, const char *tune) {
  int nd;
  int64_t shape[UK_MAX_NDIM];
  if (!parse_shape(shape_text, &nd, shape) || itemsize < 1 || itemsize > 16 || (mask >> nd) || !mask) return 0;
  int64_t strides[UK_MAX_NDIM], stride = itemsize;
  for (int d = nd - 1; d >= 0; d--) {
    if (stride > INT64_MAX / shape[d]) return 0;
    strides[d] = stride;
    stride *= shape[d];
  }
  /* the loop as a call builds it (the runtime's broadcast of its one input) */
  uk_operand_view view = {"x", nd, shape, strides, itemsize};
  uk_loop L;
  if (uk__shape_broadcast(1, &view, &L) != UK_OK) return 0;
  uint8_t reduced[UK_MAX_NDIM] = {0};
  for (int d = 0; d < nd; d++) reduced[d] = (uint8_t)((mask >> d) & 1);
  int on;
  int64_t oshape[UK_MAX_NDIM], ostride[UK_MAX_NDIM], os = itemsize;
  uk__red_result_shape(nd, L.shape, reduced, 0, &on, oshape);
  for (int d = on - 1; d >= 0; d--) {
    ostride[d] = os;
    os *= oshape[d];
  }
  const int64_t *ostrides[1] = {ostride};
  uk_red_loops R;
  uk__red_split(&L, reduced, 0, 1, ostrides, &R);
  int64_t item = itemsize;
  uk_red_plan_in in;
  uk__red_plan_in(&R, &item, 1, 16 / itemsize > 1 ? 16 / itemsize : 1, SMS, &in);
  if (per_sm > 0) in.per_sm = per_sm;
  in.partial_bytes = partial;
  uk_red_strategy s;
  uk__red_choose_in(&in, &s);
  if (strcmp(tune, "-") != 0)
    uk__red_force(&in, uk__red_tune_value(tune, "by", 0), uk__red_tune_value(tune, "cv", -1),
                  uk__red_tune_value(tune, "sp", 0), uk__red_tune_value(tune, "swz", -1),
                  uk__red_tune_value(tune, "g", 0), &s);
  uk_red_facts f = {in.nout, in.nred, in.elem_bytes, in.vec, in.itemsize, in.per_sm, in.deep, in.partial_bytes};
  char buf[256];
  printf("%s\t%u\t%s\t%s\t%.3f\n", shape_text, mask, tune, uk__red_describe(&s, buf, sizeof buf),
         uk__red_cost_us(&s, &f, SMS));
  return 1;
}

int main(void) {
  char line[512], shape[256], tune[128];
  unsigned mask;
  int itemsize, partial, per_sm, status = 0, n = 0;
  while (fgets(line, sizeof line, stdin)) {
    n++;
    if (line[0] == '\n' || line[0] == '#') continue;
    if (sscanf(line, "%255s %u %d %d %d %127s", shape, &mask, &itemsize, &partial, &per_sm, tune) != 6 ||
        !describe(shape, mask, itemsize, partial, per_sm, tune)) {
      fprintf(stderr, "plan_describe: line %d: expected SHAPE MASK ITEMSIZE PARTIAL_BYTES PER_SM TUNE\n", n);
      status = 1;
    }
  }
  return status;
}
