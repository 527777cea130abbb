/* ukern's default device allocator: a pool per device, warmed in the
 * background, with cuMemAlloc bridging the warm-up (pool.h). */
#include "runtime/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "runtime/cudadrv.h"

#define MAX_POOL_DEVICES 64
/* Bridged blocks alive at once; past it, allocations wait for the pool. */
#define MAX_BRIDGED 64
/* How long process exit waits for a warm-up still in the driver. */
#define EXIT_WAIT_NS 5000000000LL

enum { COLD = 0, WARMING, WARM };

/* The pool keeps what is freed (release threshold: never) the way CuPy's
 * and PyTorch's pools do: the device's default pool returns freed memory at
 * every synchronisation, and mapping it again cost a 1 GiB output ~0.9 ms
 * of GPU time per call. A pool of its own leaves the process-wide default
 * pool's settings alone. NULL when the driver has no pools (then
 * cuMemAllocAsync). */
static _Atomic(CUmemoryPool) pools[MAX_POOL_DEVICES];
static atomic_int states[MAX_POOL_DEVICES];
static pthread_mutex_t pools_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t warm_pid; /* the process that started warm-ups (a fork child waits for none) */

static pthread_mutex_t bridged_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t bridged[MAX_BRIDGED];
static int nbridged;
static atomic_int have_bridged;

typedef struct warm_job {
  CUcontext ctx;
  CUmemoryPool pool;
  int dev;
} warm_job;

/* The driver's first stream-ordered allocation, off the caller's thread. */
static void *warm_up(void *arg) {
  warm_job job = *(warm_job *)arg;
  free(arg);
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED; /* another thread's capture is not ours */
  uk__cu.cuThreadExchangeStreamCaptureMode(&mode);
  CUstream s;
  if (uk__cu.cuCtxSetCurrent(job.ctx) == CUDA_SUCCESS &&
      uk__cu.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS) {
    CUdeviceptr p;
    if (uk__cu.cuMemAllocFromPoolAsync(&p, 1, job.pool, s) == CUDA_SUCCESS) uk__cu.cuMemFreeAsync(p, s);
    uk__cu.cuStreamSynchronize(s);
    uk__cu.cuStreamDestroy(s);
  }
  atomic_store(&states[job.dev], WARM);
  return NULL;
}

/* A process that exits (or unloads ukern) while a warm-up is inside the
 * driver would tear the driver down under it: wait for it, boundedly.
 * Registered after cuInit, so it runs before the driver's own exit work. */
static void wait_for_warm_ups(void) {
  if (getpid() != warm_pid) return;
  struct timespec nap = {0, 100000};
  for (long long waited = 0; waited < EXIT_WAIT_NS; waited += nap.tv_nsec) {
    int busy = 0;
    for (int d = 0; d < MAX_POOL_DEVICES; d++) busy |= atomic_load(&states[d]) == WARMING;
    if (!busy) return;
    nanosleep(&nap, NULL);
  }
}

/* Starts dev's warm-up; called once, with pools_lock held. */
static void start_warm_up(int dev, CUmemoryPool pool) {
  static int registered;
  warm_job *job = malloc(sizeof *job);
  pthread_attr_t attr;
  pthread_t thread;
  int started = 0;
  if (job && uk__cu.cuCtxGetCurrent(&job->ctx) == CUDA_SUCCESS && pthread_attr_init(&attr) == 0) {
    job->pool = pool;
    job->dev = dev;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (!registered) registered = atexit(wait_for_warm_ups) == 0;
    warm_pid = getpid();
    atomic_store(&states[dev], WARMING);
    started = registered && pthread_create(&thread, &attr, warm_up, job) == 0;
    pthread_attr_destroy(&attr);
  }
  if (!started) {
    free(job);
    atomic_store(&states[dev], WARM); /* the first pool allocation pays, inline */
  }
}

static CUmemoryPool device_pool(CUdevice dev) {
  CUmemoryPool p = atomic_load_explicit(&pools[dev], memory_order_acquire);
  if (p) return p;
  /* Pool creation is no stream work: allowed during a capture in any mode. */
  CUstreamCaptureMode mode = uk__cu_capture_relax();
  pthread_mutex_lock(&pools_lock);
  p = atomic_load_explicit(&pools[dev], memory_order_relaxed);
  if (!p && uk__cu_need(cuMemPoolCreate) == UK_OK && uk__cu_need(cuMemPoolSetAttribute) == UK_OK &&
      uk__cu_need(cuMemAllocFromPoolAsync) == UK_OK) {
    CUmemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = (int)dev;
    cuuint64_t keep = UINT64_MAX;
    if (uk__cu.cuMemPoolCreate(&p, &props) != CUDA_SUCCESS) p = NULL;
    else uk__cu.cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep);
    if (p) {
      start_warm_up((int)dev, p);
      atomic_store_explicit(&pools[dev], p, memory_order_release);
    }
  }
  uk__error_clear(); /* no pool is no error: cuMemAllocAsync serves */
  pthread_mutex_unlock(&pools_lock);
  uk__cu_capture_restore(mode);
  return p;
}

/* cuMemAlloc while the pool warms; 0 when the block must come from the
 * pool (a capture needs a graph allocation; the bridge is full). */
static int bridge_alloc(size_t bytes, void *stream, uint64_t *dptr) {
  if (uk__cu_stream_capturing(stream)) return 0;
  pthread_mutex_lock(&bridged_lock);
  int room = nbridged < MAX_BRIDGED;
  CUdeviceptr p = 0;
  if (room) {
    /* Relaxed: a capture in global mode on another stream must not see
     * this as an unsafe call (nothing here is stream work). */
    CUstreamCaptureMode mode = uk__cu_capture_relax();
    room = uk__cu.cuMemAlloc(&p, bytes) == CUDA_SUCCESS;
    uk__cu_capture_restore(mode);
  }
  if (room) {
    bridged[nbridged++] = (uint64_t)p;
    atomic_store(&have_bridged, 1);
  }
  pthread_mutex_unlock(&bridged_lock);
  *dptr = (uint64_t)p;
  return room;
}

/* Frees dptr when it is bridged (1), in the stream's order: the stream's
 * work so far may still use it. */
static int bridge_free(uint64_t dptr, void *stream) {
  if (!atomic_load(&have_bridged)) return 0;
  pthread_mutex_lock(&bridged_lock);
  int k = 0;
  while (k < nbridged && bridged[k] != dptr) k++;
  int found = k < nbridged;
  if (found) {
    bridged[k] = bridged[--nbridged];
    if (!nbridged) atomic_store(&have_bridged, 0);
  }
  pthread_mutex_unlock(&bridged_lock);
  if (!found) return 0;
  /* A free inside a capture needs a graph allocation (as cuMemFreeAsync
   * does for a pool block made outside it): the block is left allocated. */
  if (uk__cu_stream_capturing(stream)) return 1;
  CUstreamCaptureMode mode = uk__cu_capture_relax();
  uk__cu.cuStreamSynchronize((CUstream)stream);
  uk__cu.cuMemFree((CUdeviceptr)dptr);
  uk__cu_capture_restore(mode);
  return 1;
}

uk_status uk__pool_alloc(size_t bytes, void *stream, uint64_t *dptr) {
  CUdevice dev;
  CUmemoryPool pool = NULL;
  if (uk__cu.cuCtxGetDevice(&dev) == CUDA_SUCCESS && dev >= 0 && dev < MAX_POOL_DEVICES) {
    pool = device_pool(dev);
    if (pool && atomic_load_explicit(&states[dev], memory_order_acquire) == WARMING &&
        bridge_alloc(bytes, stream, dptr))
      return UK_OK;
  }
  CUdeviceptr p = 0;
  CUresult r = pool ? uk__cu.cuMemAllocFromPoolAsync(&p, bytes, pool, (CUstream)stream)
                    : uk__cu.cuMemAllocAsync(&p, bytes, (CUstream)stream);
  if (r != CUDA_SUCCESS) {
    char what[64];
    snprintf(what, sizeof what, "cuMemAllocAsync(%zu bytes)", bytes);
    return uk__cu_error(r, what);
  }
  *dptr = (uint64_t)p;
  return UK_OK;
}

void uk__pool_free(uint64_t dptr, void *stream) {
  if (!bridge_free(dptr, stream)) uk__cu.cuMemFreeAsync((CUdeviceptr)dptr, (CUstream)stream);
}

int uk__pool_warm(int device) {
  return device >= 0 && device < MAX_POOL_DEVICES && atomic_load(&states[device]) == WARM;
}

int uk__pool_is_bridged(uint64_t dptr) {
  pthread_mutex_lock(&bridged_lock);
  int k = 0;
  while (k < nbridged && bridged[k] != dptr) k++;
  int found = k < nbridged;
  pthread_mutex_unlock(&bridged_lock);
  return found;
}
