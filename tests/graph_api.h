/* The driver's stream-capture and graph calls for gpu tests, resolved
 * through ukern's driver table (tests do not link libcuda). */
#ifndef UK_TEST_GRAPH_API_H
#define UK_TEST_GRAPH_API_H

#include "runtime/cudadrv.h"

typedef struct ut_graph_api {
  __typeof__(&cuStreamBeginCapture) begin_capture;
  __typeof__(&cuStreamEndCapture) end_capture;
  __typeof__(&cuGraphInstantiateWithFlags) instantiate;
  __typeof__(&cuGraphLaunch) launch;
  __typeof__(&cuGraphExecDestroy) exec_destroy;
  __typeof__(&cuGraphDestroy) destroy;
} ut_graph_api;

static inline uk_status ut_graph_api_load(ut_graph_api *g) {
  uk_status st;
  if ((st = uk__cu_resolve((void **)&g->begin_capture, "cuStreamBeginCapture")) != UK_OK ||
      (st = uk__cu_resolve((void **)&g->end_capture, "cuStreamEndCapture")) != UK_OK ||
      (st = uk__cu_resolve((void **)&g->instantiate, "cuGraphInstantiateWithFlags")) != UK_OK ||
      (st = uk__cu_resolve((void **)&g->launch, "cuGraphLaunch")) != UK_OK ||
      (st = uk__cu_resolve((void **)&g->exec_destroy, "cuGraphExecDestroy")) != UK_OK)
    return st;
  return uk__cu_resolve((void **)&g->destroy, "cuGraphDestroy");
}

#endif
