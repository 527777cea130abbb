/* Lean cubins (lean_cubin.h). NVRTC's PTX for the compute arch is the same
 * PTX it would hand its own ptxas for sm_XY; here the unreferenced globals
 * go first and the driver's PTX compiler (cuLink*) makes the cubin, in the
 * context of a device of that arch. */
#include "runtime/lean_cubin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "runtime/cudadrv.h"
#include "runtime/device.h"
#include "runtime/ptx_strip.h"

/* Options whose effect reaches ptxas: NVRTC would pass it on to its own
 * ptxas, the driver's compiler would never hear of it. */
static int affects_ptxas(const char *o) {
  static const char *const prefixes[] = {"-G", "--device-debug", "-lineinfo", "--generate-line-info",
                                         "-Xptxas", "--ptxas-options", "-maxrregcount", "--maxrregcount",
                                         "-dopt", "--dopt", "-Ofast-compile", "--Ofast-compile",
                                         "-rdc", "--relocatable-device-code", "-dc", "--device-c",
                                         "-dlto", "--dlink-time-opt", "-arch", "--gpu-architecture",
                                         "-ewp", "--extensible-whole-program"};
  for (size_t k = 0; k < sizeof prefixes / sizeof prefixes[0]; k++)
    if (strncmp(o, prefixes[k], strlen(prefixes[k])) == 0) return 1;
  return 0;
}

int uk__lean_possible(int device, int arch, const char *const *opts, int n) {
  /* Opt-in: the driver compiles linker input (relocatable code), and some
   * reduction kernels come out up to 20% slower than from NVRTC's own
   * ptxas (docs/PERF.md), a worse trade than ~2 ms per module load. */
  const char *env = getenv("UKERN_LEAN_CUBIN");
  if (!env || strcmp(env, "1") != 0) return 0;
  for (int k = 0; k < n; k++)
    if (opts[k] && affects_ptxas(opts[k])) return 0;
  if (uk__cu_load() != UK_OK) {
    uk__error_clear();
    return 0;
  }
  int major = 0, minor = 0;
  CUdevice d;
  if (uk__cu.cuDeviceGet(&d, device) != CUDA_SUCCESS ||
      uk__cu.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d) != CUDA_SUCCESS ||
      uk__cu.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d) != CUDA_SUCCESS)
    return 0;
  return major * 10 + minor == arch;
}

/* PTX -> cubin with the driver, in `device`'s primary context. */
static uk_status link_ptx(int device, const char *ptx, size_t len, const char *what, void **cubin, size_t *size) {
  int pushed = 0;
  uk_status st = uk__device_enter(device, &pushed);
  if (st != UK_OK) return st;
  char log[4096] = "";
  CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[] = {log, (void *)(size_t)sizeof log};
  CUlinkState state = NULL;
  void *image = NULL;
  size_t image_size = 0;
  CUresult r = uk__cu.cuLinkCreate(2, keys, vals, &state);
  if (r == CUDA_SUCCESS)
    r = uk__cu.cuLinkAddData(state, CU_JIT_INPUT_PTX, (void *)ptx, len + 1, "ukern.ptx", 0, NULL, NULL);
  if (r == CUDA_SUCCESS) r = uk__cu.cuLinkComplete(state, &image, &image_size);
  if (r == CUDA_SUCCESS) {
    /* the image belongs to the link state: copy it before destroying that */
    if (!(*cubin = malloc(image_size ? image_size : 1))) st = uk__errorf(UK_ERR_NOMEM, "out of memory linking PTX");
    else {
      memcpy(*cubin, image, image_size);
      *size = image_size;
    }
  } else {
    const char *name = NULL;
    uk__cu.cuGetErrorName(r, &name);
    st = uk__errorf_log(UK_ERR_COMPILE, log, "%s: the driver's PTX compiler failed: %s%s%s", what,
                        name ? name : "CUDA error", log[0] ? ": " : "", log);
  }
  if (state) uk__cu.cuLinkDestroy(state);
  uk__device_leave(pushed);
  return st;
}

uk_status uk__lean_compile(const uk__compile_req *req, uk__binary **out) {
  uk__compile_req ptx_req = *req;
  ptx_req.ptx_only = 1;
  uk__binary *ptx = NULL;
  uk_status st = uk__nvrtc_compile(&ptx_req, &ptx);
  if (st != UK_OK) return st;
  uk_strbuf lean;
  uk__sb_init(&lean);
  void *cubin = NULL;
  size_t size = 0;
  char what[600];
  snprintf(what, sizeof what, "%s", req->what ? req->what : req->name ? req->name : "compiling");
  if ((st = uk__ptx_drop_unused_globals(ptx->image, ptx->image_size, req->lean_keep, &lean, NULL)) == UK_OK &&
      (st = link_ptx(req->lean_device, uk__sb_str(&lean), lean.len, what, &cubin, &size)) == UK_OK)
    st = uk__binary_create(cubin, size, 0, req->arch, ptx->num_names, (const char *const *)ptx->names,
                           (const char *const *)ptx->lowered, ptx->log, out);
  free(cubin);
  uk__sb_release(&lean);
  uk__binary_release(ptx);
  return st;
}
