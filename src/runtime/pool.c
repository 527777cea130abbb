/* ukern's default device allocator: a pool per device, made and warmed in
 * the background, with cuMemAlloc bridging the warm-up (pool.h). */
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
/* How long a warm-up waits before its driver work (unless the pool is
 * needed sooner): started at once, it slowed the first call of a reduction
 * in a new process by ~0.5 ms (its module load and first launch compete
 * with the allocator's start-up in the driver); 3 ms later it did not. */
#define WARM_DELAY_NS 5000000L

enum { COLD = 0, WARMING, WARM };

/* The pool keeps what is freed (release threshold: never) the way CuPy's
 * and PyTorch's pools do: the device's default pool returns freed memory at
 * every synchronisation, and mapping it again cost a 1 GiB output ~0.9 ms
 * of GPU time per call. A pool of its own leaves the process-wide default
 * pool's settings alone. NULL when the driver has no pools (then
 * cuMemAllocAsync). Published before its device's state turns WARM. */
static CUmemoryPool pools[MAX_POOL_DEVICES];
static atomic_int states[MAX_POOL_DEVICES];
static pthread_mutex_t warm_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t warm_done = PTHREAD_COND_INITIALIZER;
static pthread_cond_t warm_go = PTHREAD_COND_INITIALIZER; /* go_now or exiting changed */
static int go_now;  /* someone waits for a pool: no more delay */
static int exiting; /* the process exits: a warm-up not yet begun does nothing */
static pid_t warm_pid; /* the process that started warm-ups (a fork child waits for none) */
static atomic_int warm_threads; /* warm-up threads not yet returned */

/* Bridged blocks, and those freed while their device still warms: the
 * warm-up thread frees them when their stream's work is done, so that the
 * caller's thread never waits on the driver's busy allocator. */
typedef struct deferred {
  uint64_t dptr;
  CUevent done;
  int dev;
} deferred;
static pthread_mutex_t bridged_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t bridged[MAX_BRIDGED];
static int nbridged;
static atomic_int have_bridged;
static deferred later[MAX_BRIDGED];
static int nlater;

static int current_device(void) {
  CUdevice dev;
  if (uk__cu.cuCtxGetDevice(&dev) != CUDA_SUCCESS || dev < 0 || dev >= MAX_POOL_DEVICES) return -1;
  return (int)dev;
}

/* The index of dptr among the bridged blocks, or -1 (bridged_lock held). */
static int find_bridged(uint64_t dptr) {
  for (int k = 0; k < nbridged; k++)
    if (bridged[k] == dptr) return k;
  return -1;
}

static CUmemoryPool make_pool(int dev) {
  if (uk__cu_need(cuMemPoolCreate) != UK_OK || uk__cu_need(cuMemPoolSetAttribute) != UK_OK ||
      uk__cu_need(cuMemAllocFromPoolAsync) != UK_OK) {
    uk__error_clear(); /* no pool is no error: cuMemAllocAsync serves */
    return NULL;
  }
  CUmemPoolProps props;
  memset(&props, 0, sizeof props);
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = dev;
  CUmemoryPool p = NULL;
  cuuint64_t keep = UINT64_MAX;
  if (uk__cu.cuMemPoolCreate(&p, &props) != CUDA_SUCCESS) return NULL;
  uk__cu.cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep);
  return p;
}

/* Publishes dev's pool as warm and frees its deferred blocks (the current
 * context is dev's). */
static void finish_warm_up(int dev, CUmemoryPool pool) {
  deferred mine[MAX_BRIDGED];
  int n = 0;
  pthread_mutex_lock(&warm_lock);
  pools[dev] = pool;
  pthread_mutex_lock(&bridged_lock);
  atomic_store(&states[dev], WARM);
  for (int k = 0; k < nlater;) {
    if (later[k].dev == dev) {
      mine[n++] = later[k];
      later[k] = later[--nlater];
    } else {
      k++;
    }
  }
  pthread_mutex_unlock(&bridged_lock);
  pthread_cond_broadcast(&warm_done);
  pthread_mutex_unlock(&warm_lock);
  for (int k = 0; k < n; k++) {
    uk__cu.cuEventSynchronize(mine[k].done);
    uk__cu.cuEventDestroy(mine[k].done);
    uk__cu.cuMemFree((CUdeviceptr)mine[k].dptr);
  }
}

typedef struct warm_job {
  CUcontext ctx;
  int dev;
} warm_job;

/* Makes the pool and the driver's first stream-ordered allocation, off the
 * caller's thread. */
static void *warm_up(void *arg) {
  warm_job job = *(warm_job *)arg;
  free(arg);
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED; /* another thread's capture is not ours */
  uk__cu.cuThreadExchangeStreamCaptureMode(&mode);
  CUmemoryPool pool = NULL;
  CUstream s;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until); /* pthread_cond_timedwait's clock */
  until.tv_nsec += WARM_DELAY_NS;
  if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
  pthread_mutex_lock(&warm_lock);
  for (int rc = 0; !go_now && !exiting && rc == 0;) rc = pthread_cond_timedwait(&warm_go, &warm_lock, &until);
  int skip = exiting;
  pthread_mutex_unlock(&warm_lock);
  if (!skip && uk__cu.cuCtxSetCurrent(job.ctx) == CUDA_SUCCESS) {
    pool = make_pool(job.dev);
    if (pool && uk__cu.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS) {
      CUdeviceptr p;
      if (uk__cu.cuMemAllocFromPoolAsync(&p, 1, pool, s) == CUDA_SUCCESS) uk__cu.cuMemFreeAsync(p, s);
      uk__cu.cuStreamSynchronize(s);
      uk__cu.cuStreamDestroy(s);
    }
  }
  finish_warm_up(job.dev, pool);
  atomic_fetch_sub(&warm_threads, 1);
  return NULL;
}

/* A process that exits (or unloads ukern) while a warm-up is inside the
 * driver would tear the driver down under it: wait for it, boundedly.
 * Registered after cuInit, so it runs before the driver's own exit work. */
static void wait_for_warm_ups(void) {
  if (getpid() != warm_pid) return;
  pthread_mutex_lock(&warm_lock);
  exiting = 1;
  pthread_cond_broadcast(&warm_go);
  pthread_mutex_unlock(&warm_lock);
  struct timespec nap = {0, 100000};
  for (long long waited = 0; waited < EXIT_WAIT_NS && atomic_load(&warm_threads) > 0; waited += nap.tv_nsec)
    nanosleep(&nap, NULL);
}

/* Starts dev's warm-up once; without a thread the pool is made here (the
 * first pool allocation then pays, inline). */
static void start_warm_up(int dev) {
  static int registered;
  pthread_mutex_lock(&warm_lock);
  if (atomic_load(&states[dev]) != COLD) {
    pthread_mutex_unlock(&warm_lock);
    return;
  }
  warm_job *job = malloc(sizeof *job);
  pthread_attr_t attr;
  pthread_t thread;
  int started = 0;
  if (job && uk__cu.cuCtxGetCurrent(&job->ctx) == CUDA_SUCCESS && pthread_attr_init(&attr) == 0) {
    job->dev = dev;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (!registered) registered = atexit(wait_for_warm_ups) == 0;
    warm_pid = getpid();
    atomic_store(&states[dev], WARMING);
    atomic_fetch_add(&warm_threads, 1);
    started = registered && pthread_create(&thread, &attr, warm_up, job) == 0;
    if (!started) atomic_fetch_sub(&warm_threads, 1);
    pthread_attr_destroy(&attr);
  }
  if (!started) {
    free(job);
    /* Pool creation is no stream work: allowed during a capture in any mode. */
    CUstreamCaptureMode mode = uk__cu_capture_relax();
    pools[dev] = make_pool(dev);
    uk__cu_capture_restore(mode);
    atomic_store(&states[dev], WARM);
  }
  pthread_mutex_unlock(&warm_lock);
}

static void wait_warm(int dev) {
  pthread_mutex_lock(&warm_lock);
  go_now = 1;
  pthread_cond_broadcast(&warm_go);
  while (atomic_load(&states[dev]) != WARM) pthread_cond_wait(&warm_done, &warm_lock);
  pthread_mutex_unlock(&warm_lock);
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
 * work so far may still use it. While the device warms, the warm-up thread
 * frees it after an event recorded here; after, this thread waits for the
 * stream and frees it. */
static int bridge_free(uint64_t dptr, void *stream) {
  pthread_mutex_lock(&bridged_lock);
  int k = find_bridged(dptr);
  if (k >= 0) {
    bridged[k] = bridged[--nbridged];
    if (!nbridged) atomic_store(&have_bridged, 0);
  }
  pthread_mutex_unlock(&bridged_lock);
  if (k < 0) return 0;
  /* A free inside a capture needs a graph allocation (as cuMemFreeAsync
   * does for a pool block made outside it): the block is left allocated. */
  if (uk__cu_stream_capturing(stream)) return 1;
  int dev = current_device();
  CUstreamCaptureMode mode = uk__cu_capture_relax();
  CUevent done = NULL;
  int handed = 0;
  if (uk__cu.cuEventCreate(&done, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
    done = NULL;
  } else if (uk__cu.cuEventRecord(done, (CUstream)stream) != CUDA_SUCCESS) {
    uk__cu.cuEventDestroy(done); /* never recorded, it would read as passed: wait for the stream instead */
    done = NULL;
  } else {
    pthread_mutex_lock(&bridged_lock);
    if (dev >= 0 && atomic_load(&states[dev]) == WARMING && nlater < MAX_BRIDGED) {
      later[nlater++] = (deferred){dptr, done, dev};
      handed = 1;
    }
    pthread_mutex_unlock(&bridged_lock);
  }
  if (!handed) {
    if (done) {
      uk__cu.cuEventSynchronize(done);
      uk__cu.cuEventDestroy(done);
    } else {
      uk__cu.cuStreamSynchronize((CUstream)stream);
    }
    uk__cu.cuMemFree((CUdeviceptr)dptr);
  }
  uk__cu_capture_restore(mode);
  return 1;
}

uk_status uk__pool_alloc(size_t bytes, void *stream, uint64_t *dptr) {
  int dev = current_device();
  CUmemoryPool pool = NULL;
  if (dev >= 0) {
    int state = atomic_load_explicit(&states[dev], memory_order_acquire);
    if (state != WARM) {
      if (state == COLD) start_warm_up(dev);
      if (atomic_load(&states[dev]) != WARM) {
        if (bridge_alloc(bytes, stream, dptr)) return UK_OK;
        wait_warm(dev); /* a capture, or the bridge is full: the pool's first allocation */
      }
    }
    pool = pools[dev];
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
  if (!atomic_load(&have_bridged) || !bridge_free(dptr, stream))
    uk__cu.cuMemFreeAsync((CUdeviceptr)dptr, (CUstream)stream);
}

int uk__pool_warm(int device) {
  return device >= 0 && device < MAX_POOL_DEVICES && atomic_load(&states[device]) == WARM;
}

int uk__pool_is_bridged(uint64_t dptr) {
  pthread_mutex_lock(&bridged_lock);
  int found = find_bridged(dptr) >= 0;
  pthread_mutex_unlock(&bridged_lock);
  return found;
}
