/* Thread-block cluster launches (sm_90+) for the generated kernels that
 * use them: the fusion row kernel's cluster variant (sizing
 * codegen/fuse_row_cluster.c, device code
 * templates/ukern/fusion_row_cluster.cuh) and a reduction's wide plan over
 * a cluster (codegen/red_plan.h uk__red_wide_cluster). Which devices take
 * clusters and of how many blocks, the function attributes a cluster
 * launch needs, the launch itself (cuLaunchKernelEx with a cluster
 * dimension), and the fallback's memory: a device whose cluster launch
 * failed is asked for smaller clusters, then none, for the rest of the
 * process. Thread-safe (per-device atomics). */
#ifndef UK_RUNTIME_CLUSTER_LAUNCH_H
#define UK_RUNTIME_CLUSTER_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/cudadrv.h"
#include "runtime/launch_frame.h"

/* Blocks a cluster of `device` may take: 16 on sm_90+
 * with cluster launch (8 once the device refused non-portable sizes), 0
 * without clusters, without a driver, or after a failed cluster launch. */
int uk__cluster_max(int device);

/* Load time of the cluster variant's function f: allows non-portable
 * cluster sizes (above 8), or lowers the device's maximum to 8 where the
 * driver refuses. */
void uk__cluster_loaded(CUfunction f, int device);

/* Launches fn on the frame's stream over `blocks` blocks (a multiple of
 * c) of `block` threads in clusters of c along x, with `shared` dynamic
 * shared bytes a block and the argument buffer buf of `bytes`. scalable:
 * the kernel takes clusters of another size (the row kernel: a test's
 * uk__cluster_force applies); 0: exactly these (a reduction's one cluster,
 * its pieces planned for c blocks). Returns the driver's result and sets no
 * error: on failure the caller falls back (after uk__cluster_failed). */
CUresult uk__cluster_launch(const uk__frame *f, CUfunction fn, int64_t blocks, int block, int c, int scalable,
                            unsigned shared, void *buf, size_t bytes);

/* A cluster launch of c blocks (scalable: as uk__cluster_launch's, so a
 * test's forced size is the one launched) failed on `device`: later calls
 * use clusters of at most 8 (c > 8) or none (c <= 8). */
void uk__cluster_failed(int device, int c, int scalable);

/* Tests: c > 0 launches every scalable cluster variant (the row kernel's)
 * with clusters of c blocks (the grid scaled to match; the kernel tolerates
 * more blocks than its slices); 0 restores the sizing's C and forgets every
 * device's failures. */
void uk__cluster_force(int c);

#endif
