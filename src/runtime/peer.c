/* Peer access between devices (enable, disable, query) and copies between
 * the memory of two devices. */
#include <stdio.h>

#include "base/error.h"
#include "runtime/device.h"

uk_status uk_device_can_access_peer(int device, int peer, int *can) {
  uk__error_clear();
  if (!can) return uk__errorf(UK_ERR_INVALID, "uk_device_can_access_peer: can is NULL");
  CUcontext c;
  uk_status st;
  if ((st = uk__device_context(device, &c)) != UK_OK || (st = uk__device_context(peer, &c)) != UK_OK) return st;
  if ((st = uk__cu_need(cuDeviceCanAccessPeer)) != UK_OK) return st;
  int v = 0;
  if (device != peer &&
      (st = uk__cu_check(uk__cu.cuDeviceCanAccessPeer(&v, (CUdevice)device, (CUdevice)peer), "cuDeviceCanAccessPeer")) !=
          UK_OK)
    return st;
  *can = device == peer || v;
  return UK_OK;
}

/* Opens (enable) or closes device's access to peer's memory;
 * enabling twice is no error, disabling what is not enabled is the
 * driver's UK_ERR_CUDA. */
static uk_status peer_access(const char *api, int device, int peer, int enable) {
  uk__error_clear();
  if (device == peer)
    return uk__errorf(UK_ERR_INVALID, "%s: device %d is its own peer%s", api, device, enable ? " already" : "");
  CUcontext peer_ctx;
  uk_status st = uk__device_context(peer, &peer_ctx);
  if (st != UK_OK) return st;
  int pushed = 0;
  if ((st = uk__device_enter(device, &pushed)) != UK_OK) return st;
  if ((st = enable ? uk__cu_need(cuCtxEnablePeerAccess) : uk__cu_need(cuCtxDisablePeerAccess)) == UK_OK) {
    CUresult r = enable ? uk__cu.cuCtxEnablePeerAccess(peer_ctx, 0) : uk__cu.cuCtxDisablePeerAccess(peer_ctx);
    if (r != CUDA_SUCCESS && !(enable && r == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED))
      st = uk__cu_errorf(r, "%s(device %d -> device %d)", enable ? "cuCtxEnablePeerAccess" : "cuCtxDisablePeerAccess",
                         device, peer);
  }
  uk__device_leave(pushed);
  return st;
}

uk_status uk_device_enable_peer_access(int device, int peer) {
  return peer_access("uk_device_enable_peer_access", device, peer, 1);
}

uk_status uk_device_disable_peer_access(int device, int peer) {
  return peer_access("uk_device_disable_peer_access", device, peer, 0);
}

static uk_status copy_peer(const char *api, uint64_t dst, int dst_device, uint64_t src, int src_device, size_t bytes,
                           int async, void *stream) {
  uk__error_clear();
  if (!bytes) return UK_OK;
  if (!dst || !src) return uk__errorf(UK_ERR_INVALID, "%s: %s is NULL", api, !dst ? "dst" : "src");
  CUcontext dc, sc;
  uk_status st;
  if ((st = uk__device_context(dst_device, &dc)) != UK_OK || (st = uk__device_context(src_device, &sc)) != UK_OK)
    return st;
  int pushed = 0, d;
  /* The stream's context (or the source device's, for the synchronous form
   * and the NULL stream) issues the copy. */
  st = async && stream ? uk__launch_enter(NULL, stream, &d, &pushed) : uk__device_enter(src_device, &pushed);
  if (st != UK_OK) return st;
  CUresult r = CUDA_SUCCESS;
  if ((st = async ? uk__cu_need(cuMemcpyPeerAsync) : uk__cu_need(cuMemcpyPeer)) == UK_OK)
    r = async ? uk__cu.cuMemcpyPeerAsync(dst, dc, src, sc, bytes, (CUstream)stream)
              : uk__cu.cuMemcpyPeer(dst, dc, src, sc, bytes);
  /* cuMemcpyPeer returns before the copy ends: the synchronous form waits for it */
  if (st == UK_OK && r == CUDA_SUCCESS && !async) r = uk__cu.cuCtxSynchronize();
  uk__device_leave(pushed);
  if (st != UK_OK) return st;
  return r == CUDA_SUCCESS ? UK_OK
                           : uk__cu_errorf(r, "%s (%zu bytes, device %d -> device %d)", api, bytes, src_device, dst_device);
}

uk_status uk_memcpy_peer(uint64_t dst, int dst_device, uint64_t src, int src_device, size_t bytes) {
  return copy_peer("uk_memcpy_peer", dst, dst_device, src, src_device, bytes, 0, NULL);
}

uk_status uk_memcpy_peer_async(uint64_t dst, int dst_device, uint64_t src, int src_device, size_t bytes,
                               void *stream) {
  return copy_peer("uk_memcpy_peer_async", dst, dst_device, src, src_device, bytes, 1, stream);
}
