/* The reduction planner's cost model: the predicted time of one strategy
 * (red_plan.h) for given loops on a device of `sms` multiprocessors. Pure
 * arithmetic; the constants were measured on an H200 by the copy-rate sweep
 * (red_cost.c says where each came from). uk__red_choose weighs its
 * candidates with it; tests/test_red_plan.c checks it against the sweep. */
#ifndef UK_CODEGEN_RED_COST_H
#define UK_CODEGEN_RED_COST_H

#include <stdint.h>

#include "codegen/red_plan.h"

/* What the model needs of the loops. */
typedef struct uk_red_facts {
  int64_t nout, nred; /* outputs, elements reduced into each */
  int64_t elem_bytes; /* bytes one reduced element reads (over every loop input) */
  int vec;            /* elements per vector load of the program (uk__red_vec) */
  int itemsize;       /* the largest loop input's bytes per element */
  int per_sm;         /* blocks of UK_RED_BLOCK threads resident per SM (0: 2048 / UK_RED_BLOCK) */
  int deep;           /* uk_red_plan_in.deep: several inputs' loads a trip in flight */
  int partial_bytes;  /* uk_red_plan_in.partial_bytes: a block's value per output (0: 4) */
} uk_red_facts;

/* Predicted microseconds of a call with strategy s (as event-timed from
 * Python, the launch included). Never negative; 0 with no outputs. */
double uk__red_cost_us(const uk_red_strategy *s, const uk_red_facts *f, int sms);

#endif
