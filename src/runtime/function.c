/* Kernel functions of raw modules: attributes, declared signatures and the
 * launch path.
 *
 * The launch path is lean: one atomic load finds the launch-ready handle of
 * the target device; arguments declared by a signature are packed into a
 * stack buffer; no locking or allocation once a device is resolved. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "runtime/cubin_params.h"
#include "runtime/module.h"

/* Arguments up to this size are packed on the stack (CUDA allows 32764
 * bytes of parameters; beyond this the buffer is allocated). */
#define STACK_ARG_BYTES 4096
#define STACK_ARG_PTRS 256

typedef struct attr_row {
  CUfunction_attribute cu;
  const char *name;
  int settable; /* index into attr_set/attr_value + 1; 0: read-only */
} attr_row;

static const attr_row attrs[UK_ATTR_COUNT_] = {
    [UK_ATTR_MAX_THREADS_PER_BLOCK] = {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                       "max_threads_per_block", 0},
    [UK_ATTR_SHARED_SIZE_BYTES] = {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "shared_size_bytes", 0},
    [UK_ATTR_CONST_SIZE_BYTES] = {CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, "const_size_bytes", 0},
    [UK_ATTR_LOCAL_SIZE_BYTES] = {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "local_size_bytes", 0},
    [UK_ATTR_NUM_REGS] = {CU_FUNC_ATTRIBUTE_NUM_REGS, "num_regs", 0},
    [UK_ATTR_PTX_VERSION] = {CU_FUNC_ATTRIBUTE_PTX_VERSION, "ptx_version", 0},
    [UK_ATTR_BINARY_VERSION] = {CU_FUNC_ATTRIBUTE_BINARY_VERSION, "binary_version", 0},
    [UK_ATTR_CACHE_MODE_CA] = {CU_FUNC_ATTRIBUTE_CACHE_MODE_CA, "cache_mode_ca", 0},
    [UK_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES] = {CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                               "max_dynamic_shared_size_bytes", 1},
    [UK_ATTR_PREFERRED_SHARED_MEMORY_CARVEOUT] = {
        CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, "preferred_shared_memory_carveout", 2},
};

/* The settable attribute stored in slot `slot` (attr_set index). */
static uk_function_attr settable_attr(int slot) {
  for (int a = 0; a < UK_ATTR_COUNT_; a++)
    if (attrs[a].settable == slot + 1) return (uk_function_attr)a;
  return UK_ATTR_COUNT_;
}

const char *uk_function_attr_name(uk_function_attr a) {
  return (unsigned)a < UK_ATTR_COUNT_ ? attrs[a].name : NULL;
}

uk_status uk__function_new(uk_module *m, const char *name, const char *symbol, int device,
                           CUfunction fn, uk_function **out) {
  uk_function *f = calloc(1, sizeof *f);
  if (!f) return uk__errorf(UK_ERR_NOMEM, "out of memory creating a function");
  f->m = m;
  f->name = strdup(name);
  f->symbol = strdup(symbol);
  if (!f->name || !f->symbol) {
    uk__function_free(f);
    return uk__errorf(UK_ERR_NOMEM, "out of memory creating a function");
  }
  for (int d = 0; d < UK__MAX_DEVICES; d++) atomic_init(&f->ready[d], NULL);
  if (device >= 0) {
    f->raw[device] = fn;
    atomic_store_explicit(&f->ready[device], fn, memory_order_release);
  }
  *out = f;
  return UK_OK;
}

void uk__function_free(uk_function *f) {
  if (!f) return;
  if (f->has_signature) uk__arglayout_free(&f->layout);
  free(f->sig_dtypes);
  free(f->params);
  free(f->name);
  free(f->symbol);
  free(f);
}

/* Applies one attribute to a resolved handle, in its device's context. */
static uk_status apply_attr(uk_function *f, int device, uk_function_attr a, int value) {
  int pushed = 0;
  uk_status st = uk__device_enter(device, &pushed);
  if (st != UK_OK) return st;
  CUresult r = uk__cu.cuFuncSetAttribute(f->raw[device], attrs[a].cu, value);
  uk__device_leave(pushed);
  if (r != CUDA_SUCCESS) {
    char what[160];
    snprintf(what, sizeof what, "setting %s = %d on kernel '%s' (device %d)", attrs[a].name, value,
             f->name, device);
    return uk__cu_error(r, what);
  }
  return UK_OK;
}

/* Applies a cache preference to a resolved handle, in its device's context. */
static uk_status apply_cache_config(uk_function *f, int device, int config) {
  int pushed = 0;
  uk_status st = uk__device_enter(device, &pushed);
  if (st != UK_OK) return st;
  CUresult r;
  if ((st = uk__cu_need(cuFuncSetCacheConfig)) == UK_OK &&
      (r = uk__cu.cuFuncSetCacheConfig(f->raw[device], (CUfunc_cache)config)))
    st = uk__cu_errorf(r, "cuFuncSetCacheConfig(kernel '%s', device %d)", f->name, device);
  uk__device_leave(pushed);
  return st;
}

/* The function's handle on `device`, resolving it (and applying remembered
 * attributes) on first use there. Caller holds m->lock. */
static uk_status resolve_raw_locked(uk_function *f, int device, CUfunction *out) {
  if (device < 0 || device >= UK__MAX_DEVICES)
    return uk__errorf(UK_ERR_INVALID, "device %d is out of range", device);
  if (f->raw[device]) {
    *out = f->raw[device];
    return UK_OK;
  }
  CUmodule mod;
  CUfunction fn = NULL;
  uk_status st = uk__module_load_locked(f->m, device, &mod);
  if (st != UK_OK) return st;
  if ((st = uk__cu_check(uk__cu_module_function(&fn, mod, f->symbol), "cuModuleGetFunction")) !=
      UK_OK)
    return st;
  f->raw[device] = fn;
  if (f->cache_config_set && (st = apply_cache_config(f, device, f->cache_config)) != UK_OK) {
    f->raw[device] = NULL;
    return st;
  }
  for (int s = 0; s < UK__SETTABLE_ATTRS; s++) {
    if (!f->attr_set[s]) continue;
    if ((st = apply_attr(f, device, settable_attr(s), f->attr_value[s])) != UK_OK) {
      f->raw[device] = NULL; /* try again next time rather than run unconfigured */
      return st;
    }
  }
  *out = fn;
  return UK_OK;
}

static uk_status params_locked(uk_function *f, int device, CUfunction fn);

/* Slow path of a launch: resolve and check the signature on `device`, then
 * publish the launch-ready handle. */
static uk_status resolve_ready(uk_function *f, int device, CUfunction *out) {
  CUfunction fn = NULL;
  /* Loads and attribute calls are refused during a strict capture. */
  CUstreamCaptureMode mode = uk__cu_capture_relax();
  pthread_mutex_lock(&f->m->lock);
  uk_status st = resolve_raw_locked(f, device, &fn);
  if (st == UK_OK && f->has_signature && (st = params_locked(f, device, fn)) == UK_OK)
    st = uk__arglayout_check(&f->layout, f->params, f->nparams, f->name);
  if (st == UK_OK) {
    atomic_store_explicit(&f->ready[device], fn, memory_order_release);
    *out = fn;
  }
  pthread_mutex_unlock(&f->m->lock);
  uk__cu_capture_restore(mode);
  return st;
}

uk_status uk_function_attribute(uk_function *f, uk_function_attr a, int *value) {
  uk__error_clear();
  if (!f || !value) return uk__errorf(UK_ERR_INVALID, "uk_function_attribute: NULL argument");
  if ((unsigned)a >= UK_ATTR_COUNT_)
    return uk__errorf(UK_ERR_INVALID, "unknown function attribute %d", (int)a);
  int device = f->m->ctx->opts.device;
  CUfunction fn = NULL;
  pthread_mutex_lock(&f->m->lock);
  uk_status st = resolve_raw_locked(f, device, &fn);
  pthread_mutex_unlock(&f->m->lock);
  if (st != UK_OK) return st;
  int pushed = 0;
  if ((st = uk__device_enter(device, &pushed)) != UK_OK) return st;
  int v = 0;
  CUresult r = uk__cu.cuFuncGetAttribute(&v, attrs[a].cu, fn);
  uk__device_leave(pushed);
  if (r != CUDA_SUCCESS) {
    char what[128];
    snprintf(what, sizeof what, "reading %s of kernel '%s'", attrs[a].name, f->name);
    return uk__cu_error(r, what);
  }
  *value = v;
  return UK_OK;
}

uk_status uk_function_set_attribute(uk_function *f, uk_function_attr a, int value) {
  uk__error_clear();
  if (!f) return uk__errorf(UK_ERR_INVALID, "uk_function_set_attribute: f is NULL");
  if ((unsigned)a >= UK_ATTR_COUNT_)
    return uk__errorf(UK_ERR_INVALID, "unknown function attribute %d", (int)a);
  if (!attrs[a].settable)
    return uk__errorf(UK_ERR_INVALID,
                      "function attribute %s is read-only (settable: max_dynamic_shared_size_bytes, "
                      "preferred_shared_memory_carveout)",
                      attrs[a].name);
  int slot = attrs[a].settable - 1;
  CUfunction fn;
  pthread_mutex_lock(&f->m->lock);
  /* The default device first, so a bad value is reported now. */
  uk_status st = resolve_raw_locked(f, f->m->ctx->opts.device, &fn);
  for (int d = 0; st == UK_OK && d < UK__MAX_DEVICES; d++)
    if (f->raw[d]) st = apply_attr(f, d, a, value);
  if (st == UK_OK) {
    f->attr_set[slot] = 1;
    f->attr_value[slot] = value;
  }
  pthread_mutex_unlock(&f->m->lock);
  return st;
}

uk_status uk_function_handle(uk_function *f, int device, void **out) {
  if (!f || !out) return uk__errorf(UK_ERR_INVALID, "uk_function_handle: NULL argument");
  if (device < 0) device = f->m->ctx->opts.device;
  CUfunction fn = NULL;
  pthread_mutex_lock(&f->m->lock);
  uk_status st = resolve_raw_locked(f, device, &fn);
  pthread_mutex_unlock(&f->m->lock);
  if (st == UK_OK) *out = (void *)fn;
  return st;
}

uk_status uk_function_image_attribute(uk_function *f, uk_function_attr a, int *value) {
  uk__error_clear();
  if (!f || !value) return uk__errorf(UK_ERR_INVALID, "uk_function_image_attribute: NULL argument");
  if ((unsigned)a >= UK_ATTR_COUNT_) return uk__errorf(UK_ERR_INVALID, "unknown function attribute %d", (int)a);
  const uk__binary *b = f->m->bin;
  if (!b || b->is_ptx || !uk__cubin_is_elf(b->image, b->image_size))
    return uk__errorf(UK_ERR_NOT_FOUND, "kernel '%s': the module holds no cubin (PTX or a fatbin), so %s needs a "
                      "device (uk_function_attribute)", f->name, attrs[a].name);
  int v = 0;
  uk_status st = uk__cubin_attribute(b->image, b->image_size, f->symbol, a, &v);
  if (st == UK_ERR_NOT_FOUND)
    return uk__errorf(UK_ERR_NOT_FOUND, "kernel '%s': the cubin does not state %s; it needs a device "
                      "(uk_function_attribute)", f->name, attrs[a].name);
  if (st != UK_OK) return st;
  *value = v;
  return UK_OK;
}

/* The dtype a declared C parameter type holds; -1 for pointers. */
static int ctype_dtype(uk_ctype t) {
  static const int map[UK_CT_COUNT_] = {
      [UK_CT_BOOL] = UK_BOOL,     [UK_CT_I8] = UK_INT8,         [UK_CT_U8] = UK_UINT8,
      [UK_CT_I16] = UK_INT16,     [UK_CT_U16] = UK_UINT16,      [UK_CT_I32] = UK_INT32,
      [UK_CT_U32] = UK_UINT32,    [UK_CT_I64] = UK_INT64,       [UK_CT_U64] = UK_UINT64,
      [UK_CT_F16] = UK_FLOAT16,   [UK_CT_BF16] = UK_BFLOAT16,   [UK_CT_F32] = UK_FLOAT32,
      [UK_CT_F64] = UK_FLOAT64,   [UK_CT_C64] = UK_COMPLEX64,   [UK_CT_C128] = UK_COMPLEX128,
      [UK_CT_PTR] = -1};
  return (unsigned)t < UK_CT_COUNT_ ? map[t] : -1;
}

uk_status uk_function_signature(uk_function *f, int *count, const int **dtypes) {
  if (!f || !count || !dtypes) return uk__errorf(UK_ERR_INVALID, "uk_function_signature: NULL argument");
  if (!f->has_signature)
    return uk__errorf(UK_ERR_NOT_FOUND, "kernel '%s' has no declared signature (uk_function_set_signature)",
                      f->name);
  *count = f->layout.count;
  *dtypes = f->sig_dtypes;
  return UK_OK;
}

uk_status uk_function_set_cache_config(uk_function *f, uk_cache_config config) {
  uk__error_clear();
  if (!f) return uk__errorf(UK_ERR_INVALID, "uk_function_set_cache_config: f is NULL");
  if ((unsigned)config > UK_CACHE_PREFER_EQUAL)
    return uk__errorf(UK_ERR_INVALID, "uk_function_set_cache_config: unknown config %d (UK_CACHE_PREFER_*)",
                      (int)config);
  CUfunction fn;
  pthread_mutex_lock(&f->m->lock);
  uk_status st = resolve_raw_locked(f, f->m->ctx->opts.device, &fn);
  for (int d = 0; st == UK_OK && d < UK__MAX_DEVICES; d++)
    if (f->raw[d]) st = apply_cache_config(f, d, (int)config);
  if (st == UK_OK) {
    f->cache_config_set = 1;
    f->cache_config = (int)config;
  }
  pthread_mutex_unlock(&f->m->lock);
  return st;
}

uk_status uk_function_set_signature(uk_function *f, const char *c_params) {
  uk__error_clear();
  if (!f || !c_params) return uk__errorf(UK_ERR_INVALID, "uk_function_set_signature: NULL argument");
  uk_cparams params = {0};
  uk_arglayout layout;
  memset(&layout, 0, sizeof layout);
  uk_status st = uk__cparams_parse(c_params, &params);
  if (st != UK_OK) return st;
  st = uk__arglayout_build(&params, &layout);
  int *dtypes = st == UK_OK ? malloc(((size_t)params.count + 1) * sizeof *dtypes) : NULL;
  if (st == UK_OK && !dtypes) {
    uk__arglayout_free(&layout);
    st = uk__errorf(UK_ERR_NOMEM, "out of memory setting a signature");
  }
  for (int k = 0; dtypes && k < params.count; k++) dtypes[k] = ctype_dtype(params.params[k].type);
  uk__cparams_free(&params);
  if (st != UK_OK) return st;
  pthread_mutex_lock(&f->m->lock);
  if (f->has_signature) uk__arglayout_free(&f->layout);
  free(f->sig_dtypes);
  f->sig_dtypes = dtypes;
  f->layout = layout;
  f->has_signature = 1;
  /* Every device re-checks against the new signature at its next launch. */
  for (int d = 0; d < UK__MAX_DEVICES; d++)
    atomic_store_explicit(&f->ready[d], NULL, memory_order_release);
  pthread_mutex_unlock(&f->m->lock);
  return UK_OK;
}

static uk_status launch_error(uk_function *f, CUresult r, const uk_grid_launch *g,
                              unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                              unsigned bz) {
  char what[320], cluster[64] = "";
  if (g->cluster[0] | g->cluster[1] | g->cluster[2])
    snprintf(cluster, sizeof cluster, ", cluster %ux%ux%u", g->cluster[0] ? g->cluster[0] : 1,
             g->cluster[1] ? g->cluster[1] : 1, g->cluster[2] ? g->cluster[2] : 1);
  snprintf(what, sizeof what, "launching '%s'%s (grid %ux%ux%u, block %ux%ux%u%s, %u shared bytes)",
           f->name, g->cooperative ? " cooperatively" : "", gx, gy, gz, bx, by, bz, cluster, g->shared_bytes);
  return uk__cu_error(r, what);
}

/* Launches a resolved handle; the device's context is current. */
static uk_status launch_fn(uk_function *f, CUfunction fn, const uk_grid_launch *g,
                           void *const *args) {
  unsigned gx = g->grid[0] ? g->grid[0] : 1, gy = g->grid[1] ? g->grid[1] : 1,
           gz = g->grid[2] ? g->grid[2] : 1;
  unsigned bx = g->block[0] ? g->block[0] : 1, by = g->block[1] ? g->block[1] : 1,
           bz = g->block[2] ? g->block[2] : 1;
  CUstream stream = (CUstream)g->stream;
  _Alignas(16) unsigned char stack_buf[STACK_ARG_BYTES];
  void *stack_ptrs[STACK_ARG_PTRS];
  unsigned char *buf = stack_buf;
  void **ptrs = stack_ptrs;
  uk_status st = UK_OK;
  CUresult r;

  /* Cooperative and cluster launches go through cuLaunchKernelEx; the
   * plain launch stays cuLaunchKernel. */
  int clustered = (g->cluster[0] | g->cluster[1] | g->cluster[2]) != 0;
  int ex = g->cooperative || clustered;
  size_t size = 0;
  void **params = (void **)args;
  if (f->has_signature) {
    const uk_arglayout *l = &f->layout;
    if (l->count > 0 && !args)
      return uk__errorf(UK_ERR_INVALID, "launching '%s': args is NULL but the signature declares %d "
                        "parameters", f->name, l->count);
    size = l->param_bytes; /* the driver wants exactly the kernel's parameter bytes */
    if (l->total > sizeof stack_buf && !(buf = malloc(l->total)))
      return uk__errorf(UK_ERR_NOMEM, "out of memory packing %zu bytes of arguments", l->total);
    uk__arglayout_pack(l, args, buf);
    params = NULL;
    if (ex) {
      /* cuLaunchKernelEx takes kernelParams here: point into the buffer. */
      if (l->count > STACK_ARG_PTRS && !(ptrs = malloc((size_t)l->count * sizeof *ptrs))) {
        st = uk__errorf(UK_ERR_NOMEM, "out of memory launching '%s'", f->name);
        goto out;
      }
      for (int k = 0; k < l->count; k++) ptrs[k] = buf + l->offsets[k];
      params = ptrs;
    }
  }

  if (ex) {
    CUlaunchAttribute attr[2];
    unsigned na = 0;
    memset(attr, 0, sizeof attr);
    if (g->cooperative) {
      attr[na].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
      attr[na++].value.cooperative = 1;
    }
    if (clustered) {
      attr[na].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      attr[na].value.clusterDim.x = g->cluster[0] ? g->cluster[0] : 1;
      attr[na].value.clusterDim.y = g->cluster[1] ? g->cluster[1] : 1;
      attr[na].value.clusterDim.z = g->cluster[2] ? g->cluster[2] : 1;
      na++;
    }
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = gx, cfg.gridDimY = gy, cfg.gridDimZ = gz;
    cfg.blockDimX = bx, cfg.blockDimY = by, cfg.blockDimZ = bz;
    cfg.sharedMemBytes = g->shared_bytes;
    cfg.hStream = stream;
    cfg.attrs = attr;
    cfg.numAttrs = na;
    r = uk__cu.cuLaunchKernelEx(&cfg, fn, params, NULL);
  } else if (f->has_signature) {
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     CU_LAUNCH_PARAM_END};
    r = uk__cu.cuLaunchKernel(fn, gx, gy, gz, bx, by, bz, g->shared_bytes, stream, NULL, extra);
  } else {
    r = uk__cu.cuLaunchKernel(fn, gx, gy, gz, bx, by, bz, g->shared_bytes, stream, params, NULL);
  }
  if (r != CUDA_SUCCESS) st = launch_error(f, r, g, gx, gy, gz, bx, by, bz);
out:
  if (buf != stack_buf) free(buf);
  if (ptrs != stack_ptrs) free(ptrs);
  return st;
}

/* A cluster must tile the grid (checked before any device work). */
static uk_status check_cluster(const uk_function *f, const uk_grid_launch *g) {
  unsigned gd[3], cd[3];
  for (int k = 0; k < 3; k++) {
    gd[k] = g->grid[k] ? g->grid[k] : 1;
    cd[k] = g->cluster[k] ? g->cluster[k] : 1;
  }
  if (gd[0] % cd[0] || gd[1] % cd[1] || gd[2] % cd[2])
    return uk__errorf(UK_ERR_INVALID,
                      "launching '%s': grid %ux%ux%u is not a multiple of cluster %ux%ux%u (each grid dimension "
                      "must divide by the cluster's)",
                      f->name, gd[0], gd[1], gd[2], cd[0], cd[1], cd[2]);
  return UK_OK;
}

/* Launches f on g->stream, recording `start` before and `end` after when
 * they are given. Inlined into each entry point: one call layer less on
 * every launch. */
static inline __attribute__((always_inline)) uk_status launch(uk_function *f, const uk_grid_launch *g,
                                                             void *const *args, CUevent start, CUevent end) {
  int device, pushed = 0;
  uk_status st;
  if ((g->cluster[0] | g->cluster[1] | g->cluster[2]) && (st = check_cluster(f, g)) != UK_OK) return st;
  if ((st = uk__launch_enter(f->m->ctx, g->stream, &device, &pushed)) != UK_OK) return st;
  if (device < 0 || device >= UK__MAX_DEVICES) {
    st = uk__errorf(UK_ERR_INVALID, "device %d is out of range", device);
    goto out;
  }
  CUfunction fn = atomic_load_explicit(&f->ready[device], memory_order_acquire);
  if (!fn && (st = resolve_ready(f, device, &fn)) != UK_OK) goto out;
  CUstream stream = (CUstream)g->stream;
  if (start && (st = uk__cu_check(uk__cu.cuEventRecord(start, stream), "cuEventRecord (start)")) != UK_OK)
    goto out;
  if ((st = launch_fn(f, fn, g, args)) != UK_OK) goto out;
  if (end) st = uk__cu_check(uk__cu.cuEventRecord(end, stream), "cuEventRecord (end)");
out:
  uk__device_leave(pushed);
  return st;
}

uk_status uk_function_launch(uk_function *f, const uk_grid_launch *g, void *const *args) {
  uk__error_clear();
  if (!f || !g) return uk__errorf(UK_ERR_INVALID, "uk_function_launch: %s is NULL", !f ? "f" : "g");
  return launch(f, g, args, NULL, NULL);
}

uk_status uk_function_launch_timed_async(uk_function *f, const uk_grid_launch *g, void *const *args,
                                         void *start, void *end) {
  uk__error_clear();
  if (!f || !g || !start || !end)
    return uk__errorf(UK_ERR_INVALID, "uk_function_launch_timed_async: %s is NULL",
                      !f ? "f" : !g ? "g" : !start ? "start" : "end");
  return launch(f, g, args, (CUevent)start, (CUevent)end);
}

uk_status uk_function_launch_timed(uk_function *f, const uk_grid_launch *g, void *const *args,
                                   float *ms) {
  uk__error_clear();
  if (!f || !g || !ms)
    return uk__errorf(UK_ERR_INVALID, "uk_function_launch_timed: NULL argument");
  int device, pushed = 0;
  CUevent start = NULL, stop = NULL;
  /* The events belong to the launch's device: create them in its context. */
  uk_status st = uk__launch_enter(f->m->ctx, g->stream, &device, &pushed);
  if (st != UK_OK) return st;
  if ((st = uk__cu_check(uk__cu.cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate")) != UK_OK ||
      (st = uk__cu_check(uk__cu.cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate")) != UK_OK ||
      (st = launch(f, g, args, start, stop)) != UK_OK ||
      (st = uk__cu_check(uk__cu.cuEventSynchronize(stop), "cuEventSynchronize")) != UK_OK)
    goto out;
  float t = 0;
  if ((st = uk__cu_check(uk__cu.cuEventElapsedTime(&t, start, stop), "cuEventElapsedTime")) != UK_OK)
    goto out;
  *ms = t;
out:
  if (start) uk__cu.cuEventDestroy(start);
  if (stop) uk__cu.cuEventDestroy(stop);
  uk__device_leave(pushed);
  return st;
}

/* The function's parameters, read once and kept: from the cubin when the
 * image is one (no device needed), else from the driver on `device` (fn:
 * its handle there, or NULL to resolve it). Caller holds f->m->lock. */
static uk_status params_locked(uk_function *f, int device, CUfunction fn) {
  if (f->params_read) return UK_OK;
  const uk__binary *b = f->m->bin;
  int n = 0, pushed = 0;
  uk_param_info *ps = NULL;
  uk_status st;
  if (!b->is_ptx && uk__cubin_is_elf(b->image, b->image_size)) {
    st = uk__cubin_params(b->image, b->image_size, f->symbol, &n, &ps);
  } else {
    st = fn ? UK_OK : resolve_raw_locked(f, device, &fn);
    if (st == UK_OK && (st = uk__device_enter(device, &pushed)) == UK_OK) {
      st = uk__driver_params(fn, &n, &ps);
      uk__device_leave(pushed);
    }
  }
  if (st != UK_OK) return st;
  f->params = ps;
  f->nparams = n;
  f->params_read = 1;
  return UK_OK;
}

uk_status uk_function_params(uk_function *f, int *count, const uk_param_info **params) {
  uk__error_clear();
  if (!f || !count || !params)
    return uk__errorf(UK_ERR_INVALID, "uk_function_params: %s is NULL", !f ? "f" : !count ? "count" : "params");
  pthread_mutex_lock(&f->m->lock);
  uk_status st = params_locked(f, f->m->ctx->opts.device, NULL);
  if (st == UK_OK) {
    *count = f->nparams;
    *params = f->params;
  } else {
    uk__error_prefix("parameters of kernel '%s'", f->name);
  }
  pthread_mutex_unlock(&f->m->lock);
  return st;
}
