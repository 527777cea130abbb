/*
 * ukern.h — the whole public API of ukern.
 *
 * ukern generates, compiles (NVRTC), caches and launches CUDA kernels from
 * CuPy-style definitions, and runs user CUDA source (raw modules).
 *
 * Conventions that hold for every function below:
 *  - Fallible functions return a uk_status. On failure the calling thread's
 *    error detail is set (uk_last_error / uk_last_error_log) and no
 *    out-parameter is written.
 *  - Input strings and descriptors are copied or borrowed for the call only;
 *    nothing keeps a pointer to caller memory after returning.
 *  - `*_create` / `*_from_*` give an object that the caller frees with the
 *    matching `*_destroy`; destroy(NULL) is a no-op.
 *  - A `char *` handed to the caller is the caller's, freed with uk_free().
 *    A `const char *` is borrowed; its lifetime is stated at the function.
 *  - The library never writes to stdout or stderr.
 *  - Thread safety: a uk_context and every object made from it may be used
 *    from several threads at once, unless a function says otherwise.
 *
 * This header compiles without cuda.h: streams are `void *` (a CUstream) and
 * device pointers are uint64_t (a CUdeviceptr).
 */
#ifndef UKERN_UKERN_H
#define UKERN_UKERN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define UK_API
#else
#define UK_API __attribute__((visibility("default")))
#endif

#define UK_VERSION_MAJOR 0
#define UK_VERSION_MINOR 2
#define UK_VERSION_PATCH 0
#define UK_VERSION_STRING "0.2.0"

/* Library version string ("0.2.0"); static storage. */
UK_API const char *uk_version(void);

/* ------------------------------------------------------------------------ */
/* Status codes                                                              */
/* ------------------------------------------------------------------------ */

/* One table generates the enum, the names and the messages. */
#define UK_STATUS_TABLE(X)                                                        \
  X(UK_OK, "success")                                                             \
  X(UK_ERR_NOMEM, "out of memory")                                                \
  X(UK_ERR_INVALID, "invalid argument")                                           \
  X(UK_ERR_SYNTAX, "syntax error in a kernel definition")                         \
  X(UK_ERR_TYPE, "type error")                                                    \
  X(UK_ERR_SHAPE, "shape error")                                                  \
  X(UK_ERR_COMPILE, "CUDA compilation failed")                                    \
  X(UK_ERR_CUDA, "CUDA driver error")                                             \
  X(UK_ERR_NO_DEVICE, "no CUDA driver or device")                                 \
  X(UK_ERR_NOT_FOUND, "not found")                                                \
  X(UK_ERR_IO, "input/output error")                                              \
  X(UK_ERR_INTERNAL, "internal error")

typedef enum uk_status {
#define UK_STATUS_ENUM_(name, msg) name,
  UK_STATUS_TABLE(UK_STATUS_ENUM_)
#undef UK_STATUS_ENUM_
  UK_STATUS_COUNT_
} uk_status;

/* "UK_ERR_TYPE"; "UK_UNKNOWN_STATUS" for a value outside the table. Static. */
UK_API const char *uk_status_name(uk_status s);
/* A one-line description ("type error"). Static storage. */
UK_API const char *uk_status_message(uk_status s);

/* Detail of the calling thread's last failure: one message, with position
 * and caret for errors in definition text. "" when the last call succeeded
 * or nothing failed yet. Borrowed: valid until the thread's next ukern call.
 * User bytes are quoted safely: control bytes (but newline and tab) and DEL
 * appear as \xNN, lines are cut at 1024 bytes and the message at 8 KiB,
 * saying how many bytes were left out. */
UK_API const char *uk_last_error(void);
/* For UK_ERR_COMPILE: the NVRTC log followed by the line-numbered source.
 * "" otherwise. Borrowed, same lifetime as uk_last_error(). An error in
 * user text is reported at the field that holds it, "operation:1:9: error:
 * ..." (also map_expr, reduce_expr, post_map_expr, identity, preamble,
 * loop_prep, after_loop), and an internal name in a message is followed by
 * what it stands for ("[_uk_v_z: ukern's name for 'z']"). Escaped like
 * uk_last_error(), not cut. */
UK_API const char *uk_last_error_log(void);

/* Frees memory ukern handed to the caller (char ** results). NULL is a no-op. */
UK_API void uk_free(void *p);

/* ------------------------------------------------------------------------ */
/* dtypes                                                                    */
/* ------------------------------------------------------------------------ */

typedef enum uk_dtype {
  UK_BOOL = 0,
  UK_INT8, UK_INT16, UK_INT32, UK_INT64,
  UK_UINT8, UK_UINT16, UK_UINT32, UK_UINT64,
  UK_FLOAT16, UK_BFLOAT16, UK_FLOAT32, UK_FLOAT64,
  UK_COMPLEX64, UK_COMPLEX128,
  UK_DTYPE_COUNT_
} uk_dtype;

/* NumPy names and aliases, as np.dtype() reads them: "float32", "f4",
 * "float" (float64, as in NumPy), "double", "int" (int64),
 * "i8", "complex64", "c8", "bool", "b1", ... Returns UK_ERR_TYPE for an
 * unknown name (the message suggests the closest known one), UK_ERR_INVALID
 * for NULL name or out. */
UK_API uk_status uk_dtype_from_name(const char *name, uk_dtype *out);
/* Canonical NumPy name ("float32"); NULL for an invalid value. Static. */
UK_API const char *uk_dtype_name(uk_dtype t);
/* Element size in bytes; 0 for an invalid value. */
UK_API size_t uk_dtype_size(uk_dtype t);
/* Stores v as a value of floating dtype t at out (uk_dtype_size(t) bytes;
 * complex: real part v, imaginary 0), converted as C converts a double:
 * rounded once, to nearest even (float16 and bfloat16 included; out of
 * range gives infinity). UK_ERR_INVALID for a non-floating dtype or NULL
 * out. Thread-safe. */
UK_API uk_status uk_dtype_encode(uk_dtype t, double v, void *out);

/* ------------------------------------------------------------------------ */
/* Context                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct uk_context uk_context;

/* Allocator hooks. alloc writes a device pointer for `bytes` bytes on the
 * current device, ordered on `stream`, aligned to at least 16 bytes (as
 * cuMemAlloc's, 256, and CuPy's and PyTorch's pools'); free releases it,
 * ordered on `stream`. */
typedef struct uk_allocator {
  int (*alloc)(void *user, size_t bytes, void *stream, uint64_t *dptr); /* 0 = ok */
  void (*free)(void *user, uint64_t dptr, void *stream);
  void *user;
} uk_allocator;

/* A zero-initialised uk_options means "all defaults". */
typedef struct uk_options {
  /* Disk cache directory. NULL: $UKERN_CACHE_DIR, else $XDG_CACHE_HOME/ukern,
   * else ~/.cache/ukern. */
  const char *cache_dir;
  /* Non-zero: no disk cache (memory cache only). $UKERN_DISABLE_DISK_CACHE=1
   * has the same effect. */
  int disable_disk_cache;
  /* Disk cache size cap in bytes; least recently used entries are evicted
   * past it, checked after each entry this context stores (creating a
   * context lists nothing). 0: 1 GiB. */
  uint64_t disk_cache_max_bytes;
  /* NVRTC options added to every compile of this context (copied). */
  const char *const *nvrtc_options;
  int num_nvrtc_options;
  /* Allocator for outputs that ukern allocates. alloc == NULL: stream-ordered
   * allocation (cuMemAllocFromPoolAsync / cuMemFreeAsync) from a memory pool
   * of ukern's own per device that keeps freed memory for reuse, as CuPy's
   * and PyTorch's pools do (the device's default pool is left as it is).
   * The driver's first stream-ordered allocation in a process takes 7-12 ms,
   * so the first allocation on a device starts a thread that makes the pool
   * and that allocation, 5 ms later (off the first call's module load, which
   * it would slow); until it is done (those milliseconds), allocations
   * outside a stream capture come from cuMemAlloc. Such a block freed while
   * the pool warms is freed by that thread once the stream's work before the
   * free is done; freed later, the free waits for the stream, then
   * cuMemFree. Process exit (or unloading ukern) waits for a warm-up still
   * running, at most 5 s. */
  uk_allocator allocator;
  /* Default device ordinal, for calls whose stream names no device. */
  int device;
  /* Compile for this SM architecture (e.g. 90 for sm_90) instead of the
   * device's own. 0: the device's. Needed to compile on a machine without a
   * GPU; modules made so can be compiled and inspected but not launched
   * unless a device of that architecture is present. Checked at create time
   * against the architectures NVRTC supports: UK_ERR_INVALID otherwise. */
  int arch;
  /* The same as text, for variants: "90", "90a" / "sm_90a" (arch-specific
   * features such as wgmma and TMA), "100f" (family), "compute_90" (PTX only,
   * JIT-compiled by the driver at load). Overrides arch. NULL: use arch.
   * Copied. An "-arch=..." in nvrtc_options or a module's options overrides
   * both for those compiles. */
  const char *arch_name;
  /* Non-zero: no C++ standard header map in this context's compiles (see
   * uk_module_options.no_std_headers). */
  int no_std_headers;
  /* Kernel bundles to open (uk_context_load_bundle), in this order, before
   * those of $UKERN_BUNDLE (a colon-separated list of paths). Copied. A
   * bundle that cannot be used fails uk_context_create with its reason. */
  const char *const *bundles;
  int num_bundles;
} uk_options;

/* Creates a context. Succeeds without a driver or GPU (compiling for
 * opts->arch still works); device work then fails with UK_ERR_NO_DEVICE.
 * opts may be NULL (defaults); it is copied. A bundle of opts->bundles or
 * $UKERN_BUNDLE that cannot be used fails it with uk_context_load_bundle's
 * status (UK_ERR_IO, UK_ERR_INVALID), the message naming the file.
 * UK_ERR_INVALID also for NULL out or an arch NVRTC does not support;
 * UK_ERR_NOMEM. */
UK_API uk_status uk_context_create(const uk_options *opts, uk_context **out);
/* Drops the caller's reference to the context; NULL is a no-op. Objects
 * made from it (modules, kernels, DLPack tensors ukern handed out) keep it
 * alive: its caches and allocator go when the last of them is destroyed. */
UK_API void uk_context_destroy(uk_context *ctx);

/* Number of CUDA devices. UK_ERR_NO_DEVICE (with the reason: no libcuda,
 * cuInit failed, no device) when there are none; UK_ERR_INVALID for NULL
 * count. */
UK_API uk_status uk_device_count(int *count);

typedef struct uk_device_info {
  char name[256];
  int ordinal;
  int arch;               /* 90 for sm_90 */
  int multiprocessors;
  uint64_t total_memory;  /* bytes */
} uk_device_info;
/* Describes device `ordinal`. UK_ERR_INVALID: NULL out, a device that does
 * not exist; UK_ERR_NO_DEVICE: no driver or device; UK_ERR_CUDA: the driver
 * refused a query. Thread-safe. */
UK_API uk_status uk_device_info_get(int ordinal, uk_device_info *out);

/* Versions: driver API version (e.g. 13000) and NVRTC's (major*1000+minor*10).
 * UK_ERR_INVALID: NULL version; UK_ERR_NO_DEVICE: no driver (the driver's);
 * UK_ERR_COMPILE: NVRTC cannot be loaded (NVRTC's, as uk_nvrtc_load).
 * Thread-safe. */
UK_API uk_status uk_driver_version(int *version);
UK_API uk_status uk_nvrtc_version(int *version);

/* Loads NVRTC now instead of at the first compile. ukern loads NVRTC only
 * when a kernel must be compiled (a process served by the disk cache never
 * loads it), so the first compile in a process also pays the library's
 * load (5-8 ms on an H200 host). A process that knows it will compile can
 * call this at start-up, for instance on a thread of its own, to take that
 * cost out of its first call. Once per process: later calls, and compiles,
 * find it loaded. UK_ERR_COMPILE naming the library file (and the hint
 * UKERN_NVRTC_LIBRARY) when it cannot be loaded; the outcome is kept for
 * the process. Thread-safe. */
UK_API uk_status uk_nvrtc_load(void);

/* ------------------------------------------------------------------------ */
/* Caches                                                                    */
/* ------------------------------------------------------------------------ */

typedef struct uk_cache_stats {
  uint64_t memory_hits;     /* compiled code found in the context's memory */
  uint64_t memory_misses;
  uint64_t disk_hits;
  uint64_t disk_misses;     /* absent, or unusable (then also counted below) */
  uint64_t compiles;        /* NVRTC runs */
  uint64_t store_failures;  /* entries that could not be written */
  uint64_t corrupt_entries; /* entries rejected on load: checksum, size, key */
  uint64_t evictions;       /* entries removed by the size cap */
  uint64_t untrusted;       /* lookups refused because the directory or the entry
                               is not this user's private file (a symlink, FIFO,
                               another user's, group/world writable): see
                               uk_cache_check_dir; also counted in disk_misses */
  uint64_t bundle_hits;     /* compiled code found in a kernel bundle */
} uk_cache_stats;

/* Statistics of this context's caches since it was created. UK_ERR_INVALID:
 * NULL ctx or out. Thread-safe. */
UK_API uk_status uk_context_cache_stats(uk_context *ctx, uk_cache_stats *out);
/* The disk cache directory this context uses ("" when disabled).
 * Borrowed: valid while ctx lives. */
UK_API const char *uk_context_cache_dir(uk_context *ctx);

/* ---- Kernel bundles ------------------------------------------------------
 * A bundle is one read-only file of compiled kernels (a fatbin per kernel
 * holding a cubin per arch, the name map, the key that finds it), made by
 * `ukern bundle create` or uk_bundle_create_from_cache and shipped with an
 * application, so that its processes never compile: a context looks its
 * bundles up after its memory cache and before the disk cache, and a
 * process whose kernels are all found there never loads NVRTC. A bundle's
 * key leaves out the machine (NVRTC's version, the toolkit's directories):
 * the code is used wherever this library version runs on one of its archs.
 * Files are read with pread, never mapped (a file truncated later gives an
 * error, never SIGBUS); replace a bundle by renaming a new file over it. */

/* Opens a bundle for this context's lookups (after those opened before).
 * Everything is checked now: the header, the table, each kernel's checksum
 * (XXH3) and bounds. UK_ERR_IO: the file cannot be opened, is a symbolic
 * link, a FIFO or not a regular file, is truncated or damaged;
 * UK_ERR_INVALID: NULL argument, another byte order, another bundle format
 * or made by another ukern version. uk_last_error() names the file and the
 * reason; a refused bundle is never used. A bundle without the arch a
 * compile asks for is skipped for it (the reason in uk_context_bundles).
 * UK_ERR_NOMEM past 16 bundles per context. Thread-safe with concurrent
 * compiles of ctx. */
UK_API uk_status uk_context_load_bundle(uk_context *ctx, const char *path);
/* One line per bundle of the context: its path, kernels, archs, hits, and
 * whether it is skipped (built for other archs than the context's: its
 * uk_options.arch, else its device's when a GPU is there) and why. *out is
 * the caller's (uk_free); "" when there are none. UK_ERR_INVALID: NULL ctx
 * or out; UK_ERR_NOMEM. Thread-safe. */
UK_API uk_status uk_context_bundles(uk_context *ctx, char **out);
/* Opens and checks a bundle as uk_context_load_bundle does, without a
 * context. listing (may be NULL): one line per kernel (archs, bytes,
 * kernel names) and a summary, the caller's (uk_free). Same statuses:
 * UK_ERR_IO, UK_ERR_INVALID (also for NULL path), UK_ERR_NOMEM. */
UK_API uk_status uk_bundle_verify(const char *path, char **listing);
/* Writes a bundle at path from the compile entries of a disk cache
 * directory (NULL: the default one; `ukern precompile --arch ...` fills one
 * for exact calls): one kernel per key, holding the cubins of every arch in
 * archs ("80", "90a", "sm_90"; all found when num_archs is 0). The file is
 * written under a temporary name and renamed (mode 0444). report (may be
 * NULL): a line per kernel and what was left out, the caller's (uk_free).
 * UK_ERR_NOT_FOUND: nothing to bundle; UK_ERR_INVALID: a bad arch name or
 * NULL path; UK_ERR_IO: the directory or the file; UK_ERR_NOMEM.
 * Thread-safe. */
UK_API uk_status uk_bundle_create_from_cache(const char *cache_dir, const char *const *archs, int num_archs,
                                             const char *path, char **report);

/* The default disk cache directory from the environment; the caller frees
 * *out with uk_free. UK_ERR_INVALID: NULL out; UK_ERR_NOT_FOUND: neither
 * $UKERN_CACHE_DIR, $XDG_CACHE_HOME nor $HOME is set; UK_ERR_NOMEM. */
UK_API uk_status uk_cache_default_dir(char **out);
/* Entries and total bytes held in a disk cache directory (NULL: the
 * default; a directory that does not exist holds none). entries and bytes
 * may be NULL. UK_ERR_IO: the directory cannot be listed; the statuses of
 * uk_cache_default_dir for NULL dir. */
UK_API uk_status uk_cache_usage(const char *dir, uint64_t *entries, uint64_t *bytes);
/* Removes every ukern entry from a disk cache directory (other files stay).
 * UK_ERR_IO: the directory cannot be listed or an entry not removed; the
 * statuses of uk_cache_default_dir for NULL dir. */
UK_API uk_status uk_cache_clear(const char *dir);
/* Whether ukern will use a disk cache directory (NULL: the default). It
 * must belong to the calling user and not be writable by group or others;
 * ukern creates it 0700. UK_OK when it qualifies or does not exist yet;
 * UK_ERR_IO with the reason in uk_last_error() when contexts would refuse it
 * (every lookup then misses, counted in uk_cache_stats.untrusted, and
 * nothing is written there). UK_ERR_NOT_FOUND: dir NULL and no default.
 * Thread-safe. */
UK_API uk_status uk_cache_check_dir(const char *dir);
/* What a disk cache entry (a <32 hex>.ukc file) holds, read from the key
 * stored in it: the target and the kernels (for `ukern cache list`). */
typedef struct uk_cache_entry_info {
  char arch[32];   /* "sm_90", "sm_90a", "compute_90"; "" when the key names none */
  int num_kernels;
  /* The compile's name expressions, else the kernels its source defines
   * (`__global__` functions), at most 32 of each, NULL-terminated. One
   * allocation with the strings: the caller frees it with uk_free. */
  char **kernels;
  /* What tells specialisations apart, read from the banner that ukern puts
   * at the top of the source it generates (nothing beyond the key is
   * stored): kind "elementwise", "reduction", "fusion elementwise",
   * "fusion reduction" or "fusion row" ("module" for a source ukern did not
   * generate; the other three fields are then ""), the kernel's name, the
   * dtypes of its parameters ("float32, float32 -> float32") and the variant
   * ("vectorised x4, 32-bit index, ndim 1"; "" for a fusion row kernel).
   * Cut to fit, NUL-terminated. */
  char kind[24];
  char name[128];
  char dtypes[256];
  char variant[160];
} uk_cache_entry_info;
/* Describes the entry at path without using it (nothing is loaded or
 * checked beyond the key). The file is opened without following a link and
 * without blocking on a FIFO. UK_ERR_INVALID: NULL path or out; UK_ERR_IO:
 * it cannot be opened, is not a regular file, is not a ukern entry or is
 * damaged (the reason in uk_last_error()); UK_ERR_NOMEM. *out is set only
 * on UK_OK. Thread-safe. */
UK_API uk_status uk_cache_entry_describe(const char *path, uk_cache_entry_info *out);

/* ------------------------------------------------------------------------ */
/* Arrays and arguments                                                      */
/* ------------------------------------------------------------------------ */

/* Limits of descriptors and generated kernels. Each is checked where it
 * applies, and the error names the constant.
 * - UK_MAX_NDIM: dimensions of an array (uk_array.ndim 0..UK_MAX_NDIM).
 * - UK_MAX_PARAMETERS: parameters (inputs + outputs) of an elementwise
 *   kernel or reduction (UK_ERR_INVALID at create; a list longer than
 *   this is refused at its first parameter past the limit, before the
 *   rest is read).
 * - UK_MAX_ARRAY_OPERANDS: non-raw array arguments of one call, the
 *   operands its loop walks (UK_ERR_INVALID at the call); raw arrays and
 *   scalars do not count.
 * - UK_MAX_PARAM_BYTES: bytes of a generated kernel's parameters, CUDA's
 *   limit on every architecture (UK_ERR_INVALID when a specialisation's
 *   pointers, strides, scalars and raw-array shapes take more).
 * - UK_CALL_STACK_BYTES: the most stack a uk_elementwise_call or
 *   uk_reduction_call (and their _source/_precompile forms) uses on the
 *   calling thread, besides the driver's and NVRTC's own on a compile.
 * - UK_MAX_FUSE_DEPTH: nesting of one expression in a fusion program's
 *   text: each parenthesis, function call, unary operator (- + ~) and '**'
 *   operand is one level (UK_ERR_SYNTAX at create, at the token that goes
 *   deeper). The parser recurses per level; everything after it walks the
 *   program without recursion, so statement chains and built programs
 *   have no depth limit.
 * - UK_MAX_FUSE_NODES: nodes (inputs, literals, operations) of a fusion
 *   program, parsed or built (UK_ERR_INVALID at create, or from the
 *   builder call that adds one more).
 * - UK_MAX_FUSE_INPUTS: inputs of a fusion program, and outputs
 *   (UK_ERR_INVALID at the first name past the limit).
 * - UK_MAX_FUSE_KERNELS: kernels of one fusion plan, one per group of
 *   reductions plus the final elementwise one (UK_ERR_INVALID at the call
 *   that plans it, at the reduction that would need one more). */
#define UK_MAX_NDIM 16
#define UK_MAX_PARAMETERS 64
#define UK_MAX_ARRAY_OPERANDS 16
#define UK_MAX_PARAM_BYTES 4096
#define UK_MAX_FUSE_DEPTH 200
#define UK_MAX_FUSE_NODES 1048576
#define UK_MAX_FUSE_INPUTS 64
#define UK_MAX_FUSE_KERNELS 1024
#define UK_CALL_STACK_BYTES 65536

/* An array descriptor. Strides are in bytes and may be 0 or negative; data
 * is the address of element (0, ..., 0). device is the ordinal of the GPU
 * whose memory data addresses, and is trusted: calls run there without
 * asking the driver where the memory lives (that would cost every call).
 * A descriptor whose device differs from its memory's is undefined
 * behaviour: the kernel typically faults (CUDA_ERROR_ILLEGAL_ADDRESS,
 * which spoils the CUDA context for the process). uk_array_alloc,
 * uk_array_from_dlpack (the tensor's device_id) and the Python package
 * (the producer's device) fill it right; set it yourself for memory you
 * describe by hand. */
typedef struct uk_array {
  uint64_t data;
  uk_dtype dtype;
  int ndim;
  int64_t shape[UK_MAX_NDIM];
  int64_t strides[UK_MAX_NDIM];
  int device;
} uk_array;

/* Fills a C-contiguous descriptor (data, device left as given by the caller:
 * data is set to `data`, device to 0). UK_ERR_INVALID: NULL a, an invalid
 * dtype, ndim outside 0..UK_MAX_NDIM, NULL shape with ndim > 0, a negative
 * extent or a size that overflows. */
UK_API uk_status uk_array_init(uk_array *a, uint64_t data, uk_dtype dtype, int ndim,
                               const int64_t *shape);
/* Number of elements (product of the shape; 1 for 0-d; 0 when an extent
 * is 0 or a is NULL). -1 when ndim is outside 0..UK_MAX_NDIM, an extent is
 * negative, or the product of the extents overflows int64. Thread-safe. */
UK_API int64_t uk_array_size(const uk_array *a);
/* Allocates a C-contiguous array through the context's allocator on `device`,
 * ordered on `stream`. UK_ERR_INVALID: a bad descriptor (as uk_array_init)
 * or NULL ctx / out; UK_ERR_NO_DEVICE; UK_ERR_CUDA; UK_ERR_NOMEM: the
 * allocator failed. Thread-safe. */
UK_API uk_status uk_array_alloc(uk_context *ctx, uk_dtype dtype, int ndim, const int64_t *shape,
                                int device, void *stream, uk_array *out);
/* Frees an array allocated by ukern (uk_array_alloc or an allocated output)
 * through the context's allocator, ordered on `stream`; sets a->data = 0. */
UK_API void uk_array_free(uk_context *ctx, uk_array *a, void *stream);

typedef enum uk_arg_kind {
  UK_ARG_ARRAY = 0,
  UK_ARG_INT,     /* untyped integer: takes the parameter's type, range-checked */
  UK_ARG_FLOAT,   /* untyped float: takes the parameter's type */
  UK_ARG_COMPLEX, /* untyped complex */
  UK_ARG_BOOL,    /* untyped bool */
  UK_ARG_TYPED,   /* a scalar of a given dtype: converted like a C cast */
  UK_ARG_TEXTURE  /* a CUtexObject / cudaTextureObject_t handle, passed by value */
} uk_arg_kind;

typedef struct uk_arg {
  uk_arg_kind kind;
  uk_dtype dtype; /* UK_ARG_TYPED only */
  union {
    const uk_array *array; /* borrowed for the call */
    int64_t i;
    double f;
    double c[2];
    int b;
    unsigned char bytes[16]; /* UK_ARG_TYPED: the value, uk_dtype_size bytes */
    uint64_t texture;        /* UK_ARG_TEXTURE */
  } v;
} uk_arg;

UK_API uk_arg uk_arg_array(const uk_array *a);
UK_API uk_arg uk_arg_int(int64_t v);
UK_API uk_arg uk_arg_float(double v);
UK_API uk_arg uk_arg_complex(double re, double im);
UK_API uk_arg uk_arg_bool(int v);
/* value points to uk_dtype_size(t) bytes (float16/bfloat16: their bits). */
UK_API uk_arg uk_arg_typed(uk_dtype t, const void *value);
/* A texture object (CUtexObject) for an elementwise input declared with a
 * placeholder that no other parameter uses ("U t"): inside the operation
 * `t` is a cudaTextureObject_t, e.g. `z = tex1Dfetch<float>(t, i)`. */
UK_API uk_arg uk_arg_texture(uint64_t texture_object);

/* ------------------------------------------------------------------------ */
/* Raw modules (RawModule / RawKernel)                                       */
/* ------------------------------------------------------------------------ */

typedef struct uk_module uk_module;
typedef struct uk_function uk_function;

/* Device-side support available to every program as an include:
 *   #include <ukern/complex.cuh>   ukern::complex<float>, complex<double>,
 *                                  typedefs uk_complex64 / uk_complex128.
 *   #include <ukern/half.cuh>      ukern::half (float16), ukern::bfloat16,
 *                                  typedefs uk_float16 / uk_bfloat16; no CUDA
 *                                  headers needed (cuda_fp16.h not included).
 */

typedef struct uk_module_options {
  const char *const *options; /* NVRTC options (copied), e.g. "-std=c++17" */
  int num_options;
  /* Name expressions to instantiate and look up, e.g. "my_kernel<float>". */
  const char *const *name_expressions;
  int num_name_expressions;
  const char *name; /* program name used in logs; NULL: "module" */
  int arch;         /* 0: the context's arch or device's; else checked as uk_options.arch */
  const char *arch_name; /* "90a", "sm_90a", "compute_90", ...: overrides arch (see uk_options) */
  /* C++ standard headers: by default `#include <type_traits>` and the other
   * headers below resolve to libcu++'s <cuda/std/...> equivalents, with the
   * names usable as std:: (std::is_same_v, std::numeric_limits, std::tuple,
   * std::complex, ...): array, atomic, barrier, bit, bitset, cassert, cfloat,
   * chrono, climits, cmath, complex, concepts, cstddef, cstdint, cstdlib,
   * cstring, ctime, expected, functional, initializer_list, iterator, latch,
   * limits, mdspan, memory, numbers, numeric, optional, ranges, ratio,
   * semaphore, source_location, span, tuple, type_traits, utility, variant,
   * version (those this toolkit's libcu++ has). Not covered: headers with no
   * libcu++ counterpart (<algorithm>, <vector>, <string>, <iostream>, ...)
   * and specialising std templates (std::hash<T>). Non-zero: no map (for
   * programs that bring their own standard library through -I). */
  int no_std_headers;
  /* The compiler: UK_BACKEND_NVRTC (0, default) or UK_BACKEND_NVCC, the
   * toolkit's nvcc ($UKERN_NVCC, else bin/nvcc beside the CUDA include
   * directories NVRTC uses, else the PATH) run in a private temporary
   * directory, with ukern's device headers on its include path and the
   * options passed as they are. Its path and version enter the cache key.
   * With nvcc: no name expressions (UK_ERR_INVALID), no standard header
   * map (nvcc has the host's), UK_ERR_NOT_FOUND when there is no nvcc. */
  int backend;
  /* Non-zero: an #include that NVRTC cannot find compiles as an empty
   * header, as Jitify does (CuPy's jitify=True): a program that includes a
   * header it does not use compiles; one that uses it fails on what is
   * missing. Each such header is named in the module's log (and in a
   * failure's). Part of the cache key. NVRTC only (nvcc: UK_ERR_INVALID). */
  int missing_headers_empty;
} uk_module_options;

/* uk_module_options.backend. */
typedef enum uk_backend { UK_BACKEND_NVRTC = 0, UK_BACKEND_NVCC = 1 } uk_backend;

/* Compiles CUDA source with NVRTC (through the memory and disk caches).
 * The exact arch is used (-arch=sm_XY, or the variant of arch_name / an
 * -arch option). UK_ERR_INVALID: an arch NVRTC does not support, NULL
 * ctx, code or out, bad options (nvcc with name expressions).
 * UK_ERR_NOT_FOUND: no nvcc for UK_BACKEND_NVCC. UK_ERR_NOMEM.
 * UK_ERR_NO_DEVICE: no arch given and no GPU.
 * UK_ERR_COMPILE: uk_last_error_log() holds a line "nvrtc options: ..."
 * with the exact options NVRTC received, its log and the line-numbered
 * source. Without a GPU this
 * succeeds when an arch is given (context or options); the module can then
 * be inspected (uk_module_image, uk_module_lowered_name, uk_module_function,
 * uk_function_params) but not launched. */
UK_API uk_status uk_module_from_source(uk_context *ctx, const char *code,
                                       const uk_module_options *opts, uk_module **out);
/* Loads a .cubin, .ptx or .fatbin file. Needs a device. UK_ERR_INVALID:
 * NULL arguments, an image that is none of the three or fails its checks;
 * UK_ERR_IO: the file cannot be read; UK_ERR_NOMEM; UK_ERR_NO_DEVICE;
 * UK_ERR_CUDA: the driver refused the image. */
UK_API uk_status uk_module_from_file(uk_context *ctx, const char *path, uk_module **out);
/* Loads an in-memory cubin/fatbin/PTX image (copied). PTX must be
 * NUL-terminated within `bytes`. Needs a device. Statuses as
 * uk_module_from_file but UK_ERR_IO: UK_ERR_INVALID, UK_ERR_NOMEM,
 * UK_ERR_NO_DEVICE, UK_ERR_CUDA. */
UK_API uk_status uk_module_from_image(uk_context *ctx, const void *image, size_t bytes,
                                      uk_module **out);
/* Frees the module with its functions (those of uk_module_function are
 * borrowed from it); NULL is a no-op. Calls on it must have returned, and
 * launches it queued must be stream-ordered before the memory they use is
 * reused. */
UK_API void uk_module_destroy(uk_module *m);

/* The compiled image (cubin) of a source module; borrowed, valid while m
 * lives. UK_ERR_NOT_FOUND for modules loaded from PTX; UK_ERR_INVALID for a
 * NULL argument. */
UK_API uk_status uk_module_image(uk_module *m, const void **image, size_t *bytes);
/* The lowered (mangled) name of a name expression given at compile time.
 * Borrowed, valid while m lives. UK_ERR_INVALID: a NULL argument;
 * UK_ERR_NOT_FOUND: not one of the module's name expressions. */
UK_API uk_status uk_module_lowered_name(uk_module *m, const char *name_expression,
                                        const char **lowered);
/* The NVRTC log of a source module ("" if none). Borrowed. */
UK_API const char *uk_module_log(uk_module *m);
/* Compiles `code` for every target in archs ("80", "90a", "sm_90a",
 * "compute_90", as uk_options.arch_name) and returns one fat binary
 * holding the images in that order: a cubin per sm_XY[a] target, PTX for
 * compute_XY. The driver loads the image for the GPU it runs on
 * (uk_module_from_file, uk_module_from_image). Each compile is the one
 * uk_module_from_source(ctx, code, opts with arch_name = archs[k]) makes,
 * through ctx's memory and disk caches, so the entries are those calls'.
 * Needs no GPU. opts may be NULL; its arch and arch_name must be unset and
 * its options must not name a target (-arch). *fatbin is the caller's
 * (uk_free), *bytes its size; image_bytes: NULL, or num_archs sizes, each
 * image's as stored. UK_ERR_INVALID: a NULL ctx, code, archs, archs[k],
 * fatbin or bytes, num_archs outside 1..64, a target that is not one or
 * that this NVRTC lacks, a family target (sm_XYf: fatbins cannot hold
 * them). UK_ERR_COMPILE as uk_module_from_source (uk_last_error() names the
 * target). Thread-safe, as uk_module_from_source. */
UK_API uk_status uk_module_fatbin(uk_context *ctx, const char *code, const uk_module_options *opts,
                                  const char *const *archs, int num_archs, void **fatbin, size_t *bytes,
                                  size_t *image_bytes);
/* The CUDA source the module was compiled from (CuPy RawModule/RawKernel
 * `code`): a copy made by uk_module_from_source, borrowed, valid while m
 * lives. NULL for NULL and for modules with no single source: loaded from
 * an image or file, or linked (uk_module_link). Thread-safe. */
UK_API const char *uk_module_source(const uk_module *m);
/* The module's NVRTC options (CuPy RawModule/RawKernel `options`).
 * effective == 0: uk_module_options.options exactly as given to
 * uk_module_from_source or uk_module_link (copies). effective != 0: what
 * NVRTC received for a uk_module_from_source compile besides the toolkit
 * include directories, in order: "-arch=<target>" (the options' arch, an
 * -arch option, the context's or the device's), the context's
 * uk_options.nvrtc_options, the given options (any -arch among them taken
 * out: it became the first entry), then "-rdc=true" when ukern added it
 * for a kernel that launches kernels; empty for other modules. *options
 * points to *count strings followed by NULL (never NULL itself; an empty
 * list for a module loaded from an image or file), borrowed, valid while m
 * lives. UK_ERR_INVALID: a NULL argument. Thread-safe. */
UK_API uk_status uk_module_nvrtc_options(uk_module *m, int effective, const char *const **options, int *count);

/* One part of a linked module (uk_module_link). */
typedef enum uk_link_kind {
  UK_LINK_SOURCE = 0, /* CUDA source (NUL-terminated), compiled as relocatable code */
  UK_LINK_PTX,        /* PTX text */
  UK_LINK_CUBIN,      /* a relocatable (-rdc) or whole cubin */
  UK_LINK_FATBIN,     /* a fatbin: the image for the target arch is taken */
  UK_LINK_LTOIR,      /* LTO-IR (NVRTC -dlto output); links with -lto */
  UK_LINK_OBJECT,     /* a host object with embedded device code (nvcc -dc x.o) */
  UK_LINK_LIBRARY     /* a static library of such objects (nvcc -lib: libx.a) */
} uk_link_kind;

typedef struct uk_link_input {
  uk_link_kind kind;
  const void *data;  /* the bytes (borrowed for the call); NULL: read `path` */
  size_t bytes;      /* size of data; 0 for SOURCE/PTX: up to the NUL */
  const char *path;  /* a regular file to read when data is NULL */
  const char *name;  /* for logs; NULL: path, else "input N" */
} uk_link_input;

/* Links several parts into one module with nvJitLink (cudadevrt included,
 * so device-side launches work). SOURCE parts are compiled with NVRTC as
 * relocatable device code with opts->options (-dlto among them: as LTO-IR,
 * and the link uses -lto, as it does when any part is LTO-IR); name
 * expressions are looked up in the first SOURCE part. opts->arch /
 * arch_name / the context choose the target, as for uk_module_from_source.
 * Cached in memory and on disk under a key of every part's bytes, the
 * options, the target, nvJitLink's version and libcudadevrt.a.
 * UK_ERR_INVALID: bad arguments or arch. UK_ERR_IO: a path cannot be read.
 * UK_ERR_COMPILE: a part does not compile or the link fails (the options
 * line and nvJitLink's log in uk_last_error_log()). UK_ERR_NO_DEVICE:
 * nvJitLink (libnvJitLink.so.13, from the CUDA toolkit; $UKERN_NVJITLINK
 * names another path) cannot be loaded. UK_ERR_NOMEM. Thread-safe. */
UK_API uk_status uk_module_link(uk_context *ctx, const uk_link_input *inputs, int num_inputs,
                                const uk_module_options *opts, uk_module **out);

/* Looks up a kernel by name or by one of the module's name expressions.
 * The function is owned by the module (no destroy). UK_ERR_NOT_FOUND when
 * absent. Without a GPU, in a module holding a cubin (compiled with an arch
 * given), the kernel is looked up in the image: the function can then be
 * inspected (uk_function_name, uk_function_params, uk_function_set_signature)
 * and is resolved on a device at first use; launching it and reading its
 * attributes need the device (UK_ERR_NO_DEVICE). UK_ERR_INVALID: a NULL
 * argument; UK_ERR_NOMEM; UK_ERR_CUDA: the driver refused the lookup. */
UK_API uk_status uk_module_function(uk_module *m, const char *name, uk_function **out);
/* Device address and size of a __device__ / __constant__ variable, on the
 * context's default device (bytes may be NULL). UK_ERR_INVALID: a NULL
 * argument; UK_ERR_NOT_FOUND: no such variable; UK_ERR_NO_DEVICE;
 * UK_ERR_CUDA: loading the module on the device failed. */
UK_API uk_status uk_module_global(uk_module *m, const char *name, uint64_t *dptr, size_t *bytes);
/* The same on a given device; the same statuses: UK_ERR_INVALID (also for
 * a device that does not exist), UK_ERR_NOT_FOUND, UK_ERR_NO_DEVICE,
 * UK_ERR_CUDA. */
UK_API uk_status uk_module_global_on(uk_module *m, int device, const char *name, uint64_t *dptr,
                                     size_t *bytes);

typedef enum uk_function_attr {
  UK_ATTR_MAX_THREADS_PER_BLOCK = 0,
  UK_ATTR_SHARED_SIZE_BYTES,
  UK_ATTR_CONST_SIZE_BYTES,
  UK_ATTR_LOCAL_SIZE_BYTES,
  UK_ATTR_NUM_REGS,
  UK_ATTR_PTX_VERSION,
  UK_ATTR_BINARY_VERSION,
  UK_ATTR_CACHE_MODE_CA,
  UK_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES,      /* settable */
  UK_ATTR_PREFERRED_SHARED_MEMORY_CARVEOUT,   /* settable */
  UK_ATTR_COUNT_
} uk_function_attr;

/* Name of an attribute ("max_dynamic_shared_size_bytes"); NULL if invalid. */
UK_API const char *uk_function_attr_name(uk_function_attr a);
/* Reads an attribute on the context's default device. UK_ERR_INVALID: NULL
 * f or value, an unknown attribute; UK_ERR_NO_DEVICE; UK_ERR_CUDA. */
UK_API uk_status uk_function_attribute(uk_function *f, uk_function_attr a, int *value);
/* The same read from the module's cubin, with no device: num_regs,
 * shared_size_bytes (static shared memory as the cubin's section states
 * it), const_size_bytes (the module's __constant__ bytes), local_size_bytes
 * (the stack frame), binary_version and max_threads_per_block (the
 * __launch_bounds__ limit, else 1024, lowered by the registers for a
 * 64K-register SM). UK_ERR_NOT_FOUND for the others (ptx_version,
 * cache_mode_ca, the settable ones) and for modules holding PTX or a
 * fatbin; UK_ERR_INVALID for NULL f or value or an unknown attribute.
 * Thread-safe. */
UK_API uk_status uk_function_image_attribute(uk_function *f, uk_function_attr a, int *value);
/* Sets a settable attribute (on every device the function is used on).
 * UK_ERR_INVALID for a read-only one or NULL f; UK_ERR_NO_DEVICE;
 * UK_ERR_CUDA: the driver refused the value. */
UK_API uk_status uk_function_set_attribute(uk_function *f, uk_function_attr a, int value);

/* Declares the kernel's parameters as a C parameter list, e.g.
 * "const float* x, float* y, long long n". Launches then pack arguments by
 * this layout and are checked against the kernel's real parameters
 * (UK_ERR_INVALID naming the parameter on mismatch). Supported types:
 * bool, char, [un]signed char/short/int/long/long long, int8_t..uint64_t,
 * size_t, ptrdiff_t, float, double, __half/half, __nv_bfloat16,
 * uk_complex64/complex<float>, uk_complex128/complex<double>, CUtexObject,
 * cudaTextureObject_t and any pointer (T*). UK_ERR_SYNTAX: a list that
 * does not parse or names another type (with a caret); UK_ERR_INVALID:
 * NULL arguments; UK_ERR_NOMEM. Not thread-safe against concurrent
 * launches of the same function. */
UK_API uk_status uk_function_set_signature(uk_function *f, const char *c_params);
/* The driver's CUfunction of f on `device` (-1: the context's default
 * device), loading the module there at first use: for code that calls the
 * driver itself (occupancy, launch attributes ukern does not wrap).
 * Borrowed: valid while f's module lives. UK_ERR_NO_DEVICE without a GPU;
 * UK_ERR_INVALID: NULL f or cufunction, a device that does not exist;
 * UK_ERR_CUDA: loading the module there failed. Thread-safe. */
UK_API uk_status uk_function_handle(uk_function *f, int device, void **cufunction);
/* The parameters declared by uk_function_set_signature: *count of them and,
 * per parameter, the uk_dtype its value has, or -1 for a pointer
 * (*dtypes borrowed: valid until the next set_signature or f's end; NULL
 * allowed when *count is 0). Lets a binding convert its arguments to the
 * declared types. UK_ERR_NOT_FOUND when no signature was set;
 * UK_ERR_INVALID for a NULL argument. Not thread-safe against a concurrent
 * uk_function_set_signature. */
UK_API uk_status uk_function_signature(uk_function *f, int *count, const int **dtypes);

typedef struct uk_grid_launch {
  unsigned grid[3];    /* 0 counts as 1 */
  unsigned block[3];   /* 0 counts as 1 */
  unsigned shared_bytes;
  void *stream;        /* CUstream; NULL = the current context's default stream */
  int cooperative;     /* non-zero: cooperative launch (grid sync allowed) */
  /* Thread-block cluster dimensions (sm_90+): all 0 = no cluster (the
   * plain launch); else 0 counts as 1 and each grid dimension must be a
   * multiple of the cluster's (UK_ERR_INVALID otherwise). Blocks of a
   * cluster run together and share their shared memory (cooperative_groups::
   * this_cluster(), map_shared_rank). Launched with cuLaunchKernelEx. */
  unsigned cluster[3];
} uk_grid_launch;

/* Launches f. args[i] points to the value of parameter i (as cuLaunchKernel's
 * kernelParams). The launch runs on the device the stream belongs to (for a
 * NULL stream: the current context's device, else the context's default
 * device). Asynchronous. UK_ERR_INVALID: NULL f or g, NULL args with a
 * declared signature, cluster dimensions that do not tile the grid,
 * arguments that do not match a declared signature (naming the parameter);
 * UK_ERR_NOMEM; UK_ERR_NO_DEVICE; UK_ERR_CUDA: the driver refused the
 * launch (a grid or block the device cannot take among its reasons).
 * Thread-safe. */
UK_API uk_status uk_function_launch(uk_function *f, const uk_grid_launch *g, void *const *args);
/* Launches once between two events and waits; *ms is the device time.
 * Statuses as uk_function_launch (UK_ERR_INVALID also for NULL ms). */
UK_API uk_status uk_function_launch_timed(uk_function *f, const uk_grid_launch *g,
                                          void *const *args, float *ms);

/* ------------------------------------------------------------------------ */
/* Generated kernels: what the three kinds share                             */
/* ------------------------------------------------------------------------ */

/* The three kinds of generated kernel (uk_elementwise, uk_reduction,
 * uk_fusion) have the same shape: uk_X_create(ctx, &spec, &k) defines one,
 * uk_X_destroy(k) frees it, and every call on it takes
 *   (k, const uk_arg *in, int nin, uk_array *out, int nout,
 *    const uk_launch *launch, ...)
 * (uk_X_call, uk_X_precompile, uk_X_source, uk_X_compile_info,
 * uk_X_nvrtc_options; uk_fusion_kernel_count).
 *
 * Their statuses, each named again at the function:
 *  - UK_ERR_INVALID: a NULL object or result pointer, argument counts that
 *    do not match the definition, an unusable descriptor, a uk_launch member
 *    the kind does not take, a limit (UK_MAX_*) passed;
 *  - UK_ERR_TYPE: arguments whose dtypes do not fit the definition;
 *  - UK_ERR_SHAPE: shapes that do not broadcast, a given output of the
 *    wrong shape, bad axes;
 *  - UK_ERR_COMPILE (compiling calls): NVRTC refused the generated source,
 *    its log in uk_last_error_log();
 *  - UK_ERR_NO_DEVICE (compiling calls without uk_options.arch and without
 *    a GPU; launching calls without a GPU), UK_ERR_CUDA (the driver refused
 *    a load or launch), UK_ERR_NOMEM (host or device memory). */

/* Per-call settings of every generated-kernel call. launch may be NULL;
 * NULL and a zeroed struct give the default of every member. A member that
 * the kind called does not take must stay zero (UK_ERR_INVALID naming it
 * otherwise), so a setting is never silently ignored. */
typedef struct uk_launch {
  /* All kinds: the CUstream the work is ordered on; NULL: the current
   * context's default stream. */
  void *stream;
  /* Elementwise only: the loop size when every array argument is raw
   * (> 0); 0 or -1: none. */
  int64_t size;
  /* Elementwise and fusion: threads per block (1..1024); 0: ukern chooses.
   * Reductions choose their own (0 only). */
  int block_size;
  /* Reductions only: the axes to reduce (negative ones count from the
   * end); axes NULL with num_axes 0: every axis. A fusion program writes
   * its axes in its text (axis=). */
  const int *axes;
  int num_axes;
  /* Reductions only: non-zero keeps each reduced axis as an extent of 1. */
  int keepdims;
  /* Reductions only: non-zero with num_axes 0 reduces no axis (map and
   * post-map run per element, CuPy's axis=()). */
  int reduce_none;
} uk_launch;

/* What compiling a call gave (uk_elementwise_compile_info,
 * uk_reduction_compile_info, uk_fusion_compile_info): the compile
 * statistics tools report. */
typedef struct uk_compile_info {
  int arch;           /* the architecture compiled for (sm_XY as XY) */
  int is_ptx;         /* 1: PTX (the driver JIT-compiles it at load); 0: cubin */
  size_t image_bytes; /* size of the cubin or PTX */
  double ms;          /* wall time of this call's lookup or compile */
  char *log;          /* NVRTC's log of the compile ("" when empty), with ptxas
                         statistics when the kernel's options ask for them
                         (-Xptxas=-v); the caller frees it with uk_free */
} uk_compile_info;

/* ------------------------------------------------------------------------ */
/* ElementwiseKernel                                                         */
/* ------------------------------------------------------------------------ */

typedef struct uk_elementwise uk_elementwise;

/* An elementwise kernel in CuPy's terms. Every string is copied at create
 * time; a zeroed member is its default. */
typedef struct uk_elementwise_spec {
  const char *in_params;  /* required: "T x, raw T y, float32 s" */
  const char *out_params; /* required: "T z" */
  const char *operation;  /* required: the loop body, "z = (x - y) * (x - y)" */
  const char *name;       /* the kernel's name, a C identifier; NULL: "kernel" (CuPy's default) */
  const char *preamble;   /* code at file scope before the kernel; NULL: none */
  const char *loop_prep;  /* statements before the loop (each thread); NULL: none */
  const char *after_loop; /* statements after the loop (each thread); NULL: none */
  const char *const *options; /* extra NVRTC options, num_options of them; NULL: none */
  int num_options;
  int no_reduce_dims;     /* non-zero: do not merge contiguous dimensions; 0: merge */
} uk_elementwise_spec;

/* Defines a kernel from CuPy-style strings, e.g.
 *   uk_elementwise_spec s = {.in_params = "T x, T y", .out_params = "T z",
 *                            .operation = "z = (x - y) * (x - y)",
 *                            .name = "squared_diff"};
 *   uk_elementwise_create(ctx, &s, &k);
 * Every definition error (syntax, unknown dtype, bad names) is reported here
 * with position and caret; nothing is compiled until a call. The operation,
 * loop_prep and after_loop are checked too (UK_ERR_SYNTAX naming the field):
 * balanced (), [] and {}, closed comments and literals, and a '#' only where
 * a preprocessor directive starts a line (as CuPy's searchsorted kernels
 * write them). An output is loaded before the operation unless every path
 * surely assigns it. With loop_prep or after_loop, `_ind.get()`, a
 * `_non_const` input or an early exit (return, continue) the kernel keeps
 * CuPy's loop of one element per thread (docs/SEMANTICS.md). spec is
 * borrowed for the call. UK_ERR_INVALID: NULL ctx, spec or out, a required
 * member NULL (named), too many parameters (UK_MAX_PARAMETERS), no output;
 * UK_ERR_SYNTAX: a definition text (with position and caret); UK_ERR_TYPE:
 * an unknown dtype; UK_ERR_NOMEM. Thread-safe. */
UK_API uk_status uk_elementwise_create(uk_context *ctx, const uk_elementwise_spec *spec, uk_elementwise **out);
/* Frees the kernel with its compiled specialisations; NULL is a no-op.
 * Calls on it must have returned, and launches it queued must be
 * stream-ordered before the memory they use is reused. */
UK_API void uk_elementwise_destroy(uk_elementwise *k);
/* Runs the kernel. in[]: arrays or scalars, one per input parameter.
 * out[]: all given (data != 0; shape must equal the broadcast shape) or all
 * to be allocated (data == 0: ukern fills in the descriptor, C-contiguous,
 * allocated with the context's allocator; free with uk_array_free).
 * Asynchronous on launch->stream. UK_ERR_INVALID, UK_ERR_TYPE,
 * UK_ERR_SHAPE, UK_ERR_COMPILE, UK_ERR_NO_DEVICE, UK_ERR_CUDA, UK_ERR_NOMEM
 * (see "Generated kernels" above); nothing is allocated on failure.
 * Thread-safe. */
UK_API uk_status uk_elementwise_call(uk_elementwise *k, const uk_arg *in, int nin, uk_array *out,
                                     int nout, const uk_launch *launch);
/* Compiles what a call with these arguments would run into the memory and
 * disk caches, launching and allocating nothing (data pointers are not
 * dereferenced: fake aligned values work). With uk_options.arch set this
 * needs no GPU: deployments fill the disk cache ahead of time with it.
 * UK_ERR_INVALID, UK_ERR_TYPE, UK_ERR_SHAPE, UK_ERR_COMPILE,
 * UK_ERR_NO_DEVICE (no arch and no GPU), UK_ERR_NOMEM. Thread-safe. */
UK_API uk_status uk_elementwise_precompile(uk_elementwise *k, const uk_arg *in, int nin, uk_array *out,
                                           int nout, const uk_launch *launch);
/* The exact CUDA source a call with these arguments would compile and run;
 * nothing is launched or allocated. *source is the caller's (uk_free).
 * UK_ERR_INVALID (NULL source too), UK_ERR_TYPE, UK_ERR_SHAPE,
 * UK_ERR_NOMEM; no device or NVRTC needed. Thread-safe. */
UK_API uk_status uk_elementwise_source(uk_elementwise *k, const uk_arg *in, int nin, uk_array *out,
                                       int nout, const uk_launch *launch, char **source);
/* As uk_elementwise_precompile (through the memory and disk caches; no GPU
 * needed with uk_options.arch set), and describes what the compile gave.
 * A call with nothing to compute compiles nothing: *info is then zeroed
 * (log NULL). On failure *info is untouched. Statuses as
 * uk_elementwise_precompile (UK_ERR_INVALID, UK_ERR_TYPE, UK_ERR_SHAPE,
 * UK_ERR_COMPILE, UK_ERR_NO_DEVICE, UK_ERR_NOMEM); UK_ERR_INVALID for NULL
 * k or info. */
UK_API uk_status uk_elementwise_compile_info(uk_elementwise *k, const uk_arg *in, int nin, uk_array *out,
                                             int nout, const uk_launch *launch, uk_compile_info *info);
/* The NVRTC options a call with these arguments compiles its source with:
 * the kernel's own (uk_elementwise_spec.options), then those ukern adds
 * for this specialisation (e.g. -minimal). The context's options and the
 * -arch ukern picks come first and are not listed. *options is a
 * NULL-terminated array held, with its strings, in one allocation that the
 * caller frees with uk_free. Nothing is compiled, launched or allocated on
 * the device. Statuses as uk_elementwise_source (UK_ERR_INVALID also for
 * NULL k or options, UK_ERR_TYPE, UK_ERR_SHAPE, UK_ERR_NOMEM). Thread-safe,
 * as every call on a kernel object. */
UK_API uk_status uk_elementwise_nvrtc_options(uk_elementwise *k, const uk_arg *in, int nin, uk_array *out,
                                              int nout, const uk_launch *launch, char ***options);
/* The kernel's parameter counts (inputs, outputs), as parsed at create
 * time. UK_ERR_INVALID for a NULL argument. */
UK_API uk_status uk_elementwise_param_counts(const uk_elementwise *k, int *nin, int *nout);

/* ------------------------------------------------------------------------ */
/* ReductionKernel                                                           */
/* ------------------------------------------------------------------------ */

typedef struct uk_reduction uk_reduction;

/* How a block combines its threads' values in a reduction (uk_reduction_spec.block_reduce). */
typedef enum uk_block_reduce {
  UK_BLOCK_REDUCE_UKERN = 0, /* the default: ukern's own warp shuffles and one shared-memory step */
  UK_BLOCK_REDUCE_CUB = 1    /* cub::BlockReduce from the toolkit's CCCL headers, with the same functor (any
                                reduce type); its programs compile with NVRTC's precompiled headers (-pch)
                                and cost ~1 s more NVRTC time in a process's first one. Only the block-wide
                                combine changes: warp, column and packed-row combines are ukern's in both. */
} uk_block_reduce;

/* A reduction in CuPy's terms. Every string is copied at create time; a
 * zeroed member is its default. */
typedef struct uk_reduction_spec {
  const char *in_params;     /* required: "T x" */
  const char *out_params;    /* required: "T y" */
  const char *map_expr;      /* required: "x * x" (input names, _J, _j, _raw_<name>) */
  const char *reduce_expr;   /* required: "a + b" */
  const char *post_map_expr; /* required: "y = sqrt(a)": statements or a comma expression */
  const char *identity;      /* "0" or an expression of scalar inputs ("len"); NULL or blank: none
                                (empty reductions are then errors) */
  const char *name;          /* the kernel's name, a C identifier; NULL: "reduce_kernel" (CuPy's default) */
  const char *reduce_type;   /* C type or dtype name of a/b; NULL: the first output's type */
  const char *preamble;      /* code at file scope; NULL: none */
  const char *const *options; /* extra NVRTC options, num_options of them; NULL: none */
  int num_options;
  int block_reduce;           /* uk_block_reduce; 0: UK_BLOCK_REDUCE_UKERN. Part of every
                                 specialisation's cache key (memory and disk). */
} uk_reduction_spec;

/* Defines a reduction. Definition errors come here with position and caret,
 * map_expr, reduce_expr, post_map_expr, identity and reduce_type checked as
 * the operation of uk_elementwise_create is. A block_reduce other than
 * UK_BLOCK_REDUCE_UKERN / UK_BLOCK_REDUCE_CUB is UK_ERR_INVALID. spec is
 * borrowed for the call. UK_ERR_INVALID: NULL ctx, spec or out, a required
 * member NULL (named), too many parameters; UK_ERR_SYNTAX: a definition
 * text, a raw output; UK_ERR_TYPE: an unknown dtype; UK_ERR_NOMEM.
 * Thread-safe. */
UK_API uk_status uk_reduction_create(uk_context *ctx, const uk_reduction_spec *spec, uk_reduction **out);
/* Frees the reduction with its compiled specialisations and split scratch;
 * NULL is a no-op. Calls on it must have returned, and launches it queued
 * must be stream-ordered before the memory they use is reused. */
UK_API void uk_reduction_destroy(uk_reduction *k);
/* Runs the reduction. Inputs broadcast against each other; outputs are all
 * given (exact result shape, keepdims 1s included; any strides) or all
 * allocated (C-contiguous, descriptor filled in; free with uk_array_free).
 * launch: stream and the axes members. Asynchronous on launch->stream.
 * UK_ERR_INVALID, UK_ERR_TYPE, UK_ERR_SHAPE (also an empty reduction with
 * no identity), UK_ERR_COMPILE, UK_ERR_NO_DEVICE, UK_ERR_CUDA,
 * UK_ERR_NOMEM (see "Generated kernels"); UK_ERR_INTERNAL: a ukern bug
 * (the planned strategy does not match its program). Thread-safe. */
UK_API uk_status uk_reduction_call(uk_reduction *k, const uk_arg *in, int nin, uk_array *out, int nout,
                                   const uk_launch *launch);
/* Compiles what a call with these arguments would run (one program per
 * dtype signature and kernel the shapes pick; a reduction with a kept axis
 * also the program of its plan's threads per output where the first one's
 * registers or partial size change the plan, as the call would, read from
 * the cubin with the compile architecture's limits) into the memory and disk caches,
 * launching and allocating nothing (data pointers are not dereferenced:
 * fake 16-byte-aligned values work). With uk_options.arch set this needs no
 * GPU: deployments fill the disk cache ahead of time with it.
 * UK_ERR_INVALID, UK_ERR_TYPE, UK_ERR_SHAPE, UK_ERR_COMPILE,
 * UK_ERR_NO_DEVICE (no arch and no GPU), UK_ERR_NOMEM. */
UK_API uk_status uk_reduction_precompile(uk_reduction *k, const uk_arg *in, int nin, uk_array *out, int nout,
                                         const uk_launch *launch);
/* The CUDA source a call would compile first (nothing launched; see
 * uk_reduction_precompile for a second); *source is the
 * caller's (uk_free). UK_ERR_INVALID, UK_ERR_TYPE, UK_ERR_SHAPE,
 * UK_ERR_NOMEM, as uk_elementwise_source. */
UK_API uk_status uk_reduction_source(uk_reduction *k, const uk_arg *in, int nin, uk_array *out, int nout,
                                     const uk_launch *launch, char **source);
/* As uk_elementwise_compile_info, for a reduction call (the last program
 * uk_reduction_precompile's rule compiles), with its statuses:
 * UK_ERR_INVALID, UK_ERR_TYPE, UK_ERR_SHAPE, UK_ERR_COMPILE,
 * UK_ERR_NO_DEVICE, UK_ERR_NOMEM. */
UK_API uk_status uk_reduction_compile_info(uk_reduction *k, const uk_arg *in, int nin, uk_array *out, int nout,
                                           const uk_launch *launch, uk_compile_info *info);
/* As uk_elementwise_nvrtc_options, for a reduction call (the kernel's own
 * options, then -minimal unless its texts name CUDA runtime, texture or
 * driver-API names or #include). Caller frees *options (uk_free).
 * UK_ERR_INVALID, UK_ERR_TYPE, UK_ERR_SHAPE, UK_ERR_NOMEM. */
UK_API uk_status uk_reduction_nvrtc_options(uk_reduction *k, const uk_arg *in, int nin, uk_array *out, int nout,
                                            const uk_launch *launch, char ***options);
/* The reduction's parameter counts (inputs, outputs). UK_ERR_INVALID for a
 * NULL argument. */
UK_API uk_status uk_reduction_param_counts(const uk_reduction *k, int *nin, int *nout);

/* ------------------------------------------------------------------------ */
/* Kernel fusion (cupy.fuse)                                                 */
/* ------------------------------------------------------------------------ */

typedef struct uk_fusion uk_fusion;

typedef struct uk_fusion_builder uk_fusion_builder;

/* A fused computation: program text (inputs, outputs, program) or a
 * program built in C (builder), exactly one of the two. Every string is
 * copied and the builder's program too (the builder may be reused or
 * destroyed after the call); a zeroed member is its default. */
typedef struct uk_fusion_spec {
  const char *inputs;  /* text form, required: comma-separated input names, "x, y" */
  const char *outputs; /* text form, required: comma-separated output names, "d" */
  const char *program; /* text form, required: the statements (below) */
  uk_fusion_builder *builder; /* built form: the program (inputs, outputs and program NULL) */
  const char *name;    /* a C identifier for the generated kernels; NULL: "fusion" */
  const char *preamble; /* code at file scope before every generated kernel; NULL: none */
  const char *const *options; /* extra NVRTC options, num_options of them; NULL: none */
  int num_options;
} uk_fusion_spec;

/* Defines a fused computation from NumPy-style text, e.g.
 *   uk_fusion_spec s = {.inputs = "x, y", .outputs = "d", .name = "dist",
 *                       .program = "t = x - y; d = sqrt(sum(t * t, axis=-1))"};
 *   uk_fusion_create(ctx, &s, &f);
 * or from a builder's program (spec.builder; see the builder below).
 * inputs / outputs: comma-separated names (Python identifiers).
 * program: statements `name = expr` separated by ';' or newlines, '#'
 * comments. Names are inputs, outputs or temporaries assigned earlier.
 *  - literals: 1, 0x10, 1.5, 1e-3, 2j, True, False, inf, nan, pi, e
 *    (Python scalars: weak in NumPy 2's sense, NEP 50).
 *  - operators with Python/NumPy meaning: + - * / // % ** (true division,
 *    floor division and modulo taking the divisor's sign, ** on ints),
 *    unary - + ~, < <= > >= == !=, & | ^ (and left_shift / right_shift by
 *    name: counts past the width give 0 or -1, as NumPy's).
 *  - NumPy functions: abs absolute negative positive exp exp2 expm1 log
 *    log2 log10 log1p sqrt cbrt square reciprocal sin cos tan arcsin arccos
 *    arctan arctan2 sinh cosh tanh arcsinh arccosh arctanh hypot floor ceil
 *    trunc rint sign maximum minimum fmax fmin clip power fmod copysign
 *    nextafter i0 gcd lcm bitwise_count isnan isinf isfinite logical_and logical_or logical_not logical_xor
 *    real imag conj angle where asarray (+ add subtract multiply true_divide
 *    divide floor_divide remainder less ... bitwise_and ... by name).
 *    asarray(x) is x made strong: np.asarray of a Python scalar.
 *  - casts: float32(x), int8(x), ... (any dtype name), astype(x, 'f2').
 *  - reductions: sum prod max (amax) min (amin) mean any all argmax argmin
 *    var std (one pass, Welford; ddof=), with axis= (int, negative, tuple,
 *    None = all, the default) and keepdims=.
 * Types follow NumPy 2 exactly: arrays and typed scalars (uk_arg_typed,
 * 0-d arrays) promote by np.result_type; uk_arg_int/float/complex/bool are
 * weak Python scalars; int / int is float64; comparisons give bool; sum of
 * int8..int64 gives int64 and of unsigned ints uint64; mean of ints gives
 * float64; float16 math rounds per operation and accumulates in float32.
 * Shapes broadcast as NumPy's. A Python int that does not fit the integer
 * dtype it meets in arithmetic is UK_ERR_TYPE, as NumPy's OverflowError
 * (int8 + 300); comparisons compare by value. Complex operands support
 * arithmetic, comparisons (< <= > >= lexicographic, as NumPy 2), maximum
 * minimum fmax fmin clip, exp exp2 expm1 log log2 log10 log1p sqrt sin cos
 * tan sinh cosh tanh, power, abs, real, imag, conj, angle,
 * isnan/isinf/isfinite, where and sum, prod, mean; other functions of
 * complex values are UK_ERR_TYPE. Outputs that are computed elementwise
 * (not by a reduction's epilogue) share one shape. Reductions over the same
 * axes share a kernel, except at a call where their operands' shapes differ.
 * Syntax errors, unknown names or functions and unassigned outputs are
 * UK_ERR_SYNTAX here, with line:column and a caret; type and shape errors
 * come at the first call with the signature, also with a caret. Nothing is
 * compiled until a call. Both forms or neither (text and builder), a
 * text form missing a part, a name that is not a C identifier (or starts
 * with '_'): UK_ERR_INVALID. A builder holding an error: that error
 * (sticky: the builder's first). spec is borrowed for the call. */
UK_API uk_status uk_fusion_create(uk_context *ctx, const uk_fusion_spec *spec, uk_fusion **out);
/* Frees the fusion with its plans and kernels; NULL is a no-op. Calls on
 * it must have returned, and launches it queued must be stream-ordered
 * before the memory they use is reused. */
UK_API void uk_fusion_destroy(uk_fusion *f);
/* Runs the program. in[]: one array or scalar per input. out[]: all given
 * (data != 0; the exact result shape; the result is converted to the given
 * dtype like a C cast; any strides) or all allocated (data == 0: dtype and
 * shape from NumPy's rules, C-contiguous, filled in on success; free with
 * uk_array_free). launch: stream and block size (the others zero).
 * The plan is one kernel for elementwise programs; one reduction kernel for
 * reductions over one axis set with their prologue (map) and epilogue
 * (post-map); programs whose reductions all reduce the last axis (keepdims
 * where the result meets elements again) and whose reduced values are used
 * again per row (softmax, x - mean(x, axis=-1, keepdims=True), layer
 * norms) run as one kernel, a thread, sub-warp, warp or block per row by
 * row width and SM count, reading each row once when it fits in registers
 * or shared memory; other programs that use a reduced value again over a
 * larger shape, and calls with no rows, empty rows, a few long rows (fewer
 * rows than SMs, over 1 MiB read and written per row) or a given output that
 * overlaps an input other than as the same view, run as the fewest
 * kernels, their intermediates allocated and freed stream-ordered. Plans
 * and their compiled kernels are cached per (input kinds, dtypes, ndims,
 * output dtypes). Asynchronous on launch->stream. UK_ERR_INVALID,
 * UK_ERR_TYPE (with a caret in the program), UK_ERR_SHAPE, UK_ERR_COMPILE,
 * UK_ERR_NO_DEVICE, UK_ERR_CUDA, UK_ERR_NOMEM (see "Generated kernels");
 * outputs it allocated are freed on failure. Thread-safe. */
UK_API uk_status uk_fusion_call(uk_fusion *f, const uk_arg *in, int nin, uk_array *out, int nout,
                                const uk_launch *launch);
/* Compiles every kernel a call with these arguments would run into the
 * memory and disk caches, launching and allocating nothing (data pointers
 * are not dereferenced: fake aligned values work). With uk_options.arch set
 * this needs no GPU. UK_ERR_INVALID, UK_ERR_TYPE, UK_ERR_SHAPE,
 * UK_ERR_COMPILE, UK_ERR_NO_DEVICE (no arch and no GPU), UK_ERR_NOMEM. */
UK_API uk_status uk_fusion_precompile(uk_fusion *f, const uk_arg *in, int nin, uk_array *out, int nout,
                                      const uk_launch *launch);
/* The CUDA source of every kernel a call would run, in order, each after a
 * "// ==== ukern fusion ..." banner; nothing launched or allocated.
 * *source is the caller's (uk_free). UK_ERR_INVALID (NULL source too),
 * UK_ERR_TYPE, UK_ERR_SHAPE, UK_ERR_NOMEM. */
UK_API uk_status uk_fusion_source(uk_fusion *f, const uk_arg *in, int nin, uk_array *out, int nout,
                                  const uk_launch *launch, char **source);
/* As uk_fusion_precompile (every kernel of the call's plan, through the
 * memory and disk caches; no GPU needed with uk_options.arch set), and
 * describes what the compiles gave, summed over the kernels (image_bytes,
 * ms) with their logs joined in kernel order; arch and is_ptx are the
 * last kernel's. ptxas statistics appear in the log when the fusion's
 * options ask for them (-Xptxas=-v). A call with nothing to compute
 * compiles nothing: *info is then zeroed (log NULL). On failure *info is
 * untouched. *info->log is the caller's (uk_free). Statuses as
 * uk_fusion_precompile; UK_ERR_INVALID for NULL f or info. Thread-safe. */
UK_API uk_status uk_fusion_compile_info(uk_fusion *f, const uk_arg *in, int nin, uk_array *out, int nout,
                                        const uk_launch *launch, uk_compile_info *info);
/* How many kernels a call with these arguments runs (the plan); types and
 * shapes are checked as by a call; nothing is compiled, launched or
 * allocated (out is only read). UK_ERR_INVALID (NULL count too),
 * UK_ERR_TYPE, UK_ERR_SHAPE, UK_ERR_NOMEM. */
UK_API uk_status uk_fusion_kernel_count(uk_fusion *f, const uk_arg *in, int nin, uk_array *out, int nout,
                                        const uk_launch *launch, int *count);

/* The C builder: the same programs as nodes made by calls, for backends
 * that build expressions in code. Node ids are ints (-1 on failure; errors
 * are sticky: the first is kept and returned by uk_fusion_create).
 * A program built in the order its text evaluates (operands before the
 * operation, left to right) gives byte-identical kernels to the text form:
 *   uk_fusion_builder *b;  uk_fusion_builder_create("x, y", &b);
 *   int x = uk_fusion_input(b, "x"), y = uk_fusion_input(b, "y");
 *   int t = uk_fusion_op(b, "subtract", (int[]){x, y}, 2);
 *   int s = uk_fusion_reduce(b, "sum", uk_fusion_op(b, "multiply", (int[]){t, t}, 2),
 *                            (int[]){-1}, 1, 0, 0);
 *   uk_fusion_output(b, "d", uk_fusion_op(b, "sqrt", &s, 1));
 *   uk_fusion_spec spec = {.builder = b, .name = "dist"};
 *   uk_fusion_create(ctx, &spec, &f);  uk_fusion_builder_destroy(b);
 * A builder is not thread-safe; the fusion made from it is independent of it.
 * uk_fusion_builder_create: inputs are comma-separated names, as
 * uk_fusion_spec.inputs. UK_ERR_INVALID: NULL out, more than
 * UK_MAX_FUSE_INPUTS names; UK_ERR_SYNTAX: a bad or repeated name;
 * UK_ERR_NOMEM. */
UK_API uk_status uk_fusion_builder_create(const char *inputs, uk_fusion_builder **out);
/* Frees the builder; NULL is a no-op. Fusions made from it are
 * independent of it. */
UK_API void uk_fusion_builder_destroy(uk_fusion_builder *b);
/* The node of an input (its index); -1 if there is none of that name. */
UK_API int uk_fusion_input(uk_fusion_builder *b, const char *name);
/* Python scalars (weak): int, float, complex, bool literals. */
UK_API int uk_fusion_const_int(uk_fusion_builder *b, int64_t v);
UK_API int uk_fusion_const_float(uk_fusion_builder *b, double v);
UK_API int uk_fusion_const_complex(uk_fusion_builder *b, double re, double im);
UK_API int uk_fusion_const_bool(uk_fusion_builder *b, int v);
/* A NumPy function or operator by its NumPy name ("add", "true_divide",
 * "less", "bitwise_and", "negative", "exp", "where", ...) on nargs nodes. */
UK_API int uk_fusion_op(uk_fusion_builder *b, const char *fn, const int *args, int nargs);
/* float32(x) and friends. */
UK_API int uk_fusion_cast(uk_fusion_builder *b, int arg, uk_dtype t);
/* A reduction ("sum", "mean", "argmax", "var", ...): naxes < 0 is axis=None;
 * axes may be negative; ddof for var/std (else 0). */
UK_API int uk_fusion_reduce(uk_fusion_builder *b, const char *fn, int arg, const int *axes, int naxes,
                            int keepdims, int ddof);
/* Declares (or re-assigns) an output computed by node. Outputs are in the
 * order first declared. UK_ERR_INVALID: NULL b or name, a node not of
 * this builder, an input's name, more than UK_MAX_FUSE_INPUTS outputs;
 * UK_ERR_NOMEM; the builder's earlier error (sticky). */
UK_API uk_status uk_fusion_output(uk_fusion_builder *b, const char *name, int node);

/* ------------------------------------------------------------------------ */
/* Raw kernels (CuPy RawKernel)                                              */
/* ------------------------------------------------------------------------ */

/* A kernel with its own module (CuPy's RawKernel): the caller's, freed with
 * uk_kernel_destroy. Its uk_function is borrowed from it. */
typedef struct uk_kernel uk_kernel;

/* Compiles `code` (as uk_module_from_source, opts may be NULL) and looks up
 * kernel `name` (a name or name expression) in one call, like CuPy's
 * RawKernel(code, name). *out owns the module and the function
 * (uk_kernel_function). Without a device it works when an arch is given
 * (the lookup reads the cubin, as uk_module_function), else
 * UK_ERR_NO_DEVICE. UK_ERR_COMPILE / UK_ERR_NOT_FOUND / UK_ERR_INVALID as
 * the two calls it makes; UK_ERR_NOMEM. Thread-safe. */
UK_API uk_status uk_kernel_from_source(uk_context *ctx, const char *code, const char *name,
                                       const uk_module_options *opts, uk_kernel **out);
/* The kernel's function, for uk_function_launch and the other uk_function
 * calls; borrowed, valid until uk_kernel_destroy(k). NULL for NULL. */
UK_API uk_function *uk_kernel_function(const uk_kernel *k);
/* Frees the kernel with its module and function; NULL is a no-op. Calls on
 * it must have returned, and launches it queued must be stream-ordered
 * before the memory they use is reused. */
UK_API void uk_kernel_destroy(uk_kernel *k);
/* The name the function was asked for by (CuPy RawKernel.name); borrowed,
 * valid while the function lives. NULL for NULL. */
UK_API const char *uk_function_name(const uk_function *f);
/* The module holding the function (its image, log and lowered names);
 * borrowed. NULL for NULL. */
UK_API uk_module *uk_function_module(const uk_function *f);

/* One kernel parameter as laid out in the kernel's parameter buffer (CUDA
 * lays parameters out like the members of a C struct). */
typedef struct uk_param_info {
  size_t offset; /* bytes from the start of the parameters */
  size_t size;   /* bytes */
} uk_param_info;

/* The kernel's declared parameters in order: *count of them, described in
 * *params (borrowed, valid while f lives; NULL when *count is 0). For a
 * module holding a cubin (compiled from source, linked, or loaded from a
 * cubin) they are read from the image itself, so no GPU is needed: compile
 * with an arch (uk_options.arch or uk_module_options.arch), look the kernel
 * up (uk_module_function or uk_kernel_function), read them. For a module
 * loaded from PTX or a fatbin they come from the driver (cuFuncGetParamInfo
 * on the context's default device; a CUDA 12.4+ driver). Read once, then
 * cached. UK_ERR_INVALID: a NULL argument or a malformed image;
 * UK_ERR_NO_DEVICE: a PTX/fatbin module without a device. Out-parameters
 * are written only on success. Thread-safe. */
UK_API uk_status uk_function_params(uk_function *f, int *count, const uk_param_info **params);

/* ------------------------------------------------------------------------ */
/* CUDA graphs (stream capture)                                              */
/* ------------------------------------------------------------------------ */

/* Every launching call (uk_elementwise_call, uk_reduction_call,
 * uk_function_launch, uk_array_alloc / uk_array_free on a stream) may be
 * issued on a stream that is being captured into a CUDA graph, in any of the
 * three capture modes: on its hot path ukern makes only driver calls that
 * capture allows (the stream's device is found through its context), and
 * its work (launches, stream-ordered allocations, copies of inputs that
 * overlap outputs, memsets) becomes nodes of the graph.
 *
 * A call that must first compile or load its kernel (the first call of a
 * kernel object, or of a new dtype/shape specialisation) also works during a
 * capture in every mode: NVRTC runs on the host, and the module is loaded
 * with the calling thread's capture mode switched to relaxed for the load
 * (then restored), so the load happens once, outside the graph, and the
 * capture stays valid. Warming kernels up before the capture only moves that
 * cost out of the capture.
 *
 * Outputs that ukern allocates during a capture (default allocator) are
 * graph allocations: they exist once the graph has run, at the same address
 * on every run; free them (uk_array_free on a stream) before the graph runs
 * again, or instantiate it with CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH.
 * A custom uk_allocator must itself be safe to call during capture.
 * Reductions that need scratch take it from the graph (allocated and freed
 * in it) rather than from the per-stream scratch used outside capture, so
 * replays share no memory with the kernel object: direct calls of it on any
 * stream may run beside or between them. A graph refers to the kernels'
 * loaded modules: destroy a kernel object (which unloads its modules)
 * only after every graph exec that launches it is destroyed.
 *
 * uk_stream_capturing: *capturing = 1 while `stream` is capturing into a
 * graph (also when the capture has been invalidated), else 0; 0 for NULL
 * (the legacy stream cannot capture). Legal during capture; thread-safe.
 * UK_ERR_INVALID: NULL capturing; UK_ERR_NO_DEVICE; UK_ERR_CUDA. */
UK_API uk_status uk_stream_capturing(void *stream, int *capturing);

#ifdef __cplusplus
}
#endif

/* The driver layer: streams, events, copies, memory, textures, IPC, ... */
#include "ukern/runtime.h"

#endif /* UKERN_UKERN_H */
