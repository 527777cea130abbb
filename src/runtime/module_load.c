/* Loading a module's image on a device (module.h uk__module_load_locked):
 * what module.c and function.c both need, below either. */
#include <stdio.h>

#include "base/error.h"
#include "runtime/module.h"

uk_status uk__module_load_locked(uk_module *m, int device, CUmodule *out) {
  if (device < 0 || device >= UK__MAX_DEVICES)
    return uk__errorf(UK_ERR_INVALID, "device %d is out of range", device);
  if (m->loaded[device]) {
    *out = m->loaded[device];
    return UK_OK;
  }
  int pushed = 0;
  uk_status st = uk__device_enter(device, &pushed);
  if (st != UK_OK) return st;
  CUmodule mod = NULL;
  CUresult r = uk__cu_module_load(&mod, m->bin->image);
  uk__device_leave(pushed);
  if (r != CUDA_SUCCESS) {
    char what[96];
    snprintf(what, sizeof what, "cuModuleLoadData on device %d", device);
    st = uk__cu_error(r, what);
    if (r == CUDA_ERROR_NO_BINARY_FOR_GPU && m->bin->arch > 0) {
      uk_device_info info;
      int arch = uk_device_info_get(device, &info) == UK_OK ? info.arch : 0;
      uk__errorf(st, "cuModuleLoadData on device %d: the module was compiled for sm_%d but the "
                 "device is sm_%d (compile with arch %d)", device, m->bin->arch, arch, arch);
    }
    return st;
  }
  m->loaded[device] = mod;
  if (device >= m->loaded_end) m->loaded_end = device + 1;
  *out = mod;
  return UK_OK;
}
