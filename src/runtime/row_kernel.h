/* The fusion row kernel (codegen/fuse_row.h) as a kind of the shared
 * pipeline (kernel_pipeline.h): one object per planned fusion signature whose
 * plan has a row kernel. Its key is the device (the plan fixes the source),
 * its emitter the plan's row source, its argument buffer
 * codegen/fuse_row_plan.h's, its variant and grid uk__row_size's; a call runs through
 * the launch frame (launch_frame.h) like the other kinds. */
#ifndef UK_RUNTIME_ROW_KERNEL_H
#define UK_RUNTIME_ROW_KERNEL_H

#include "codegen/fuse_plan.h"
#include "runtime/kernel_pipeline.h"

typedef struct uk__row_kernel uk__row_kernel;

/* The row kernel of plan p (p->row.source set; p outlives the object),
 * compiled with the user's options. UK_ERR_INVALID when its parameters do
 * not fit CUDA's limit (the caller runs the split plan instead);
 * UK_ERR_NOMEM. */
uk_status uk__row_create(uk_context *ctx, const uk_fuse_plan *p, const char *const *options, int num_options,
                         uk__row_kernel **out);
void uk__row_destroy(uk__row_kernel *k);

/* Runs the rows of map shape ms (p->row.ndim axes) on the stream: in are
 * the program's inputs, outs its outputs (allocated or given), all on
 * `device`, which must be the launch's. Compiles at the first call per
 * device and variant. A cluster launch (sm_90+, cluster_launch.h) that the
 * driver refuses is no error: the plain shared-memory variant runs. */
uk_status uk__row_call(uk__row_kernel *k, const uk_arg *in, const uk_array *outs, const int64_t *ms, int device,
                       void *stream);

/* "rows in registers, 4 threads a row, 2 x 4 elements a thread, 64 rows a
 * block, 512 blocks" (or in shared memory): how a call with these
 * arguments runs, into buf. */
void uk__row_describe(const uk__row_kernel *k, const uk_arg *in, const uk_array *outs, const int64_t *ms, int device,
                      char *buf, size_t size);

/* 1 when a lone reduction's call with these arguments (as uk__row_call's)
 * runs its rows in light register slices (uk__row_lone_light, as planned
 * before the function's budget is known). */
int uk__row_lone_usable(const uk__row_kernel *k, const uk_arg *in, const uk_array *outs, const int64_t *ms,
                        int device);

/* The kernel variant a call with these arguments (as uk__row_call's) would
 * run, without running it, for `device` (uk__kernel_offline): SOURCE gives
 * the variant's defines and the plan's source. */
uk_status uk__row_offline(uk__row_kernel *k, const uk_arg *in, const uk_array *outs, const int64_t *ms, int device,
                          uk__offline what, void *result);

#endif
