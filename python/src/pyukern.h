/*
 * pyukern.h — shared declarations of the ukern extension module (_ukern).
 *
 * The extension is a client of the public API only (ukern/ukern.h) and is
 * built on the CPython stable ABI (Py_LIMITED_API 3.9): one abi3 build
 * imports on every CPython >= 3.9.
 */
#ifndef PYUKERN_H
#define PYUKERN_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "ukern/ukern.h"

/* Most arguments a kernel call takes (inputs + outputs). */
#define PYK_MAX_ARGS 64

/* Array producers the package knows how to answer in kind. */
typedef enum pyk_kind { PYK_OTHER = 0, PYK_UKERN, PYK_CUPY, PYK_TORCH, PYK_HOST } pyk_kind;

/* The files stand in layers, each above what it uses (no cycle:
 * scripts/include-graph.py --src python/src; ctest test_layers_python),
 * bottom up: errtext, strings, type_objects, outcache; errors; context,
 * streams; interface; array, fast; args; call; the kernel types (raw_call,
 * raw_options, elementwise, reduction, raw, fusion, bundle); module.c. */

/* --- errtext.c: the library's messages in Python's words ---------------- */
/* A library message with its C names (uk_options.arch, uk_last_error_log())
 * replaced by Python's (ukern.configure(arch=...), the exception's .log);
 * new ref, NULL on error. */
PyObject *pyk_python_message(const char *c_message);
/* The same for a str (new ref; NULL on error). */
PyObject *pyk_python_text(PyObject *text);

/* --- errors.c: exception classes, status -> exception ------------------- */
/* Makes the exception classes and adds them to the module (at init). */
int pyk_errors_init(PyObject *m);
/* ukern._errors' hook: f(cls) gives the class to raise (pyk_error_type);
 * -1 with TypeError when not callable. */
int pyk_set_error_type_hook(PyObject *hook);
/* Sets a Python exception for a failed ukern call; returns NULL. */
PyObject *pyk_raise(uk_status st);
/* The same, raised as `as` (a subclass of the status's class) unless NULL. */
PyObject *pyk_raise_as(uk_status st, PyObject *as);
/* The class to raise for one of ukern's exception classes (new ref): with
 * CuPy imported, also a subclass of CuPy's class of that name
 * (ukern/_errors.py); else `base`. Keeps a pending exception as it is. */
PyObject *pyk_error_type(PyObject *base);
/* PyErr_Format with pyk_error_type(base); returns NULL. */
PyObject *pyk_err_format(PyObject *base, const char *format, ...);
extern PyObject *pyk_CompileException;
extern PyObject *pyk_JitifyException; /* a CompileException, for modules made with jitify=True */
extern PyObject *pyk_CUDADriverError;

/* --- context.c: the context kernels bind to ----------------------------- */
int pyk_context_init(void); /* at module init: the _Context type */
/* The context kernels made now bind to (created on first use); new ref. */
PyObject *pyk_context_get(void);
uk_context *pyk_context_ptr(PyObject *ctx);
/* A new context made with o becomes the current one (ukern.configure);
 * -1 with an exception, the current one kept. */
int pyk_context_replace(const uk_options *o);
/* pyk_raise, then the exception's message in Python's words; for a kernel
 * bound to kernel_ctx (may be NULL) that cannot choose an arch after a later
 * ukern.configure(), the message also says the kernel kept its context and
 * how to move on. Returns NULL. */
PyObject *pyk_raise_kernel(uk_status st, PyObject *kernel_ctx);

/* --- strings.c: Python str and C strings -------------------------------- */
/* Counts comma-separated parameters of a definition that create accepted. */
int pyk_count_params(const char *params);
/* A tuple/list of str as a C array (PyMem_Free it) of UTF-8 pointers that
 * live while *keep (a new reference, Py_XDECREF it) lives. */
int pyk_str_list(PyObject *seq, const char ***out, int *n, PyObject **keep);
/* UTF-8 of a str, valid while it lives; NULL with an exception. */
const char *pyk_utf8_or_null(PyObject *o);

/* --- type_objects.c ------------------------------------------------------ */
/* Adds a type made from spec to the module under its short name. */
PyTypeObject *pyk_add_type(PyObject *m, PyType_Spec *spec);

/* --- the state of one call (args.c fills it; streams.c, fast.c use it) --- */
typedef struct pyk_call {
  uk_array arr[PYK_MAX_ARGS];
  uk_arg arg[PYK_MAX_ARGS];
  int narr;
  unsigned char readonly[PYK_MAX_ARGS]; /* arr[k]'s CAI says read-only (data[1] true) */
  PyObject *keep[PYK_MAX_ARGS]; /* DLPack capsules held for the call */
  int nkeep;
  pyk_kind kind;                /* producer of the first array */
  PyObject *first;              /* the first array (borrowed) */
  void *stream;                 /* launch stream (CUstream) */
  int have_stream;              /* stream chosen: by stream= or by a producer */
  void *produced_on[8];         /* CAI v3 streams of the arrays, distinct */
  int nproduced;
  int allow_host;               /* host arrays describe shapes (source/precompile) */
  void *cupy_stream;            /* CuPy's current stream, read once a call (fast.c) */
  int have_cupy_stream;
} pyk_call;

/* --- streams.c: streams as the protocols give them, and their order ------ */
/* Parses a stream object (None, int, object with .ptr or .cuda_stream). */
int pyk_stream_from_object(PyObject *o, void **out);
/* A protocol stream integer as a CUstream (0 and 1: legacy default, NULL). */
void *pyk_stream_from_int(unsigned long long v);
/* Makes `consumer` wait for the work queued so far on `producer` (an event
 * on device); nothing when they are the same stream. -1 on error. */
int pyk_stream_order(void *producer, void *consumer, int device);
/* Records that an argument was produced on stream s (CAI v3): the first
 * such stream is the launch stream unless one was chosen; the launch waits
 * for the others (pyk_call_finish_stream). */
void pyk_call_produced_on(pyk_call *c, void *s);

/* --- interface.c: __cuda_array_interface__ / __array_interface__ dicts --- */
int pyk_interface_init(void); /* at module init (pyk_args_init) */
/* "<f4", "|b1", "<c16" -> dtype; -1 with TypeError otherwise. */
int pyk_typestr_dtype(PyObject *ts, uk_dtype *out);
/* Fills *a from an interface dict. *stream_out gets the CAI v3 stream (or
 * stays untouched); returns 1 when one was given, 0 when not, -1 on error.
 * *readonly: the data tuple's second element is true. */
int pyk_interface_array(PyObject *d, uk_array *a, void **stream_out, unsigned char *readonly);

/* --- args.c: arrays, scalars and the launch stream of one call ----------- */
int pyk_args_init(void); /* at module init */
void pyk_call_init(pyk_call *c, int allow_host);
void pyk_call_clear(pyk_call *c);
/* stream= argument: None leaves the choice to the producer. -1 on error. */
int pyk_call_set_stream(pyk_call *c, PyObject *stream);
/* Converts one argument (array or scalar) into c->arg[i]. -1 on error. */
int pyk_call_arg(pyk_call *c, PyObject *o, int i);
/* Converts an output array into *out (a descriptor of c). -1 on error. */
int pyk_call_array(pyk_call *c, PyObject *o, uk_array **out);
/* After every argument: picks the producer's current stream if none yet;
 * for a run (not allow_host), orders the launch stream after the streams
 * the arrays were produced on (CAI v3), by events. */
int pyk_call_finish_stream(pyk_call *c);
/* Wraps arrays ukern allocated as the first input's array type (new ref). */
PyObject *pyk_call_wrap_output(pyk_call *c, PyObject *ctx, uk_array *a);

/* --- raw_options.c: CuPy's RawModule/RawKernel options ------------------ */
/* 'nvrtc' -> UK_BACKEND_NVRTC, 'nvcc' -> UK_BACKEND_NVCC; -1 with ValueError. */
int pyk_raw_backend_id(PyObject *backend);
/* CuPy's checks of code/path/name_expressions/backend/jitify, in CuPy's
 * order, and its DeprecationWarning for any jitify given. 0 or -1. */
int pyk_raw_check_options(PyObject *code, PyObject *path, PyObject *names, PyObject *backend, PyObject *jitify);
/* The source as translate_cucomplex=True compiles it (new ref). */
PyObject *pyk_raw_translate_cucomplex(PyObject *code);
/* 1 when a source module compiles with "-rdc=false" added: CuPy compiles
 * without relocatable code unless told (-dc, -rdc=true), so a kernel that
 * launches kernels without it fails to compile as in CuPy, where the C
 * library would add -rdc=true. 0 when the options choose. */
int pyk_raw_wants_no_rdc(const char *code, const char *const *opts, int nopts);
/* The hint added to such a failure's message. */
extern const char pyk_raw_rdc_hint[];

/* --- raw_call.c: RawKernel arguments ------------------------------------ */
typedef struct pyk_raw_sig {
  int count;                     /* parameters the kernel takes; -1: unknown */
  const int *dtypes;             /* declared signature (uk_function_signature); NULL: none */
  const uk_param_info *params;   /* from the cubin (count of them); NULL: unknown */
  const char *name;              /* the kernel, for messages */
} pyk_raw_sig;
typedef struct pyk_raw_host { /* one ukern.In/Out/InOut argument */
  PyObject *array;            /* the NumPy array (held for the call) */
  void *buf;                  /* its data (__array_interface__) */
  size_t len;                 /* its bytes */
  int dir;                    /* 1 in, 2 out, 3 both */
  uk_array dev;               /* its device copy (data 0: none) */
  unsigned char *slot;        /* where its device pointer goes */
} pyk_raw_host;
#define PYK_RAW_MAX_HOST 8 /* ukern.In/Out/InOut arguments a call takes */
typedef struct pyk_raw_args {
  _Alignas(16) unsigned char slot[PYK_MAX_ARGS][16];
  void *ptr[PYK_MAX_ARGS];
  int n;
  int nhost;
  pyk_raw_host host[PYK_RAW_MAX_HOST];
} pyk_raw_args;
int pyk_raw_set_host_type(PyObject *tp); /* ukern._raw._HostArg */
void pyk_raw_args_init(pyk_raw_args *a);
/* Packs the tuple's arguments into a (host wrappers only noted). -1 on error. */
int pyk_raw_pack(pyk_call *c, const pyk_raw_sig *sig, PyObject *args, pyk_raw_args *a);
/* Allocates the host wrappers' device copies and queues the In copies. */
int pyk_raw_copy_in(pyk_raw_args *a, PyObject *ctx, void *stream, int device);
/* Queues the Out copies and waits for the stream (no GIL needed). */
uk_status pyk_raw_copy_out(pyk_raw_args *a, void *stream);
/* Frees the device copies (ordered on stream) and releases the buffers. */
void pyk_raw_args_clear(pyk_raw_args *a, PyObject *ctx, void *stream);

/* --- fast.c: fast paths that decline (0 / NULL, no exception) when unsure --- */
int pyk_fast_init(void);
/* A cupy.ndarray / torch.Tensor (exact types) described from its
 * attributes, with its stream as its CAI gives it. 1 done, 0 declined. */
int pyk_fast_cupy_array(pyk_call *c, PyObject *o, uk_array *a);
int pyk_fast_torch_array(pyk_call *c, PyObject *o, uk_array *a);
/* An allocated output (owned by the ukern.Array `owner`) as a cupy.ndarray
 * over the same memory. NULL without an exception: declined (use DLPack). */
PyObject *pyk_fast_cupy_output(pyk_call *c, PyObject *owner, const uk_array *a);
/* Outputs a call with the same inputs as before would have (desc),
 * allocated by the first array's library, CuPy's pool or PyTorch's caching
 * allocator (both serve their current stream, which must be the launch
 * stream): arrays (new refs) in objs, their descriptors in out. 1 done,
 * 0 declined. */
int pyk_fast_prealloc(pyk_call *c, const uk_array *desc, int nout, uk_array *out, PyObject **objs);
/* CuPy's current device when cupy is imported (sys.modules; never imports
 * it), with cupy.cuda.UnownedMemory and MemoryPointer found: >= 0. -1: no
 * CuPy (no exception); -2: error (exception set). */
int pyk_fast_cupy_device(void);
/* After pyk_fast_cupy_device() >= 0: cupy.cuda.MemoryPointer(UnownedMemory(
 * ptr, bytes, owner, device), 0), as CuPy's RawModule.get_global returns.
 * New ref; NULL with an exception. */
PyObject *pyk_fast_cupy_memptr(PyObject *owner, unsigned long long ptr, size_t bytes, int device);
/* "pool" (default), "direct" or "dlpack": how outputs for CuPy are made
 * (fast.c says what each is). -1: unknown name. */
int pyk_fast_set_output_route(const char *name);
/* A NumPy scalar of a type pyk_fast_scalar_learn recorded: 1 done, 0 not
 * such a type, -1 error. */
int pyk_fast_scalar(PyObject *o, uk_arg *out);
void pyk_fast_scalar_learn(PyTypeObject *tp, uk_dtype t);

/* --- outcache.c: the outputs a kernel allocated, by input signature ------ */
typedef struct pyk_outcache pyk_outcache;
#define PYK_OUTCACHE_OUTS 4 /* most outputs a kernel's entries hold */
/* 1 and out[0:nout] (copies, without data) when a call with these inputs
 * and extra[0:nextra] (the call's settings that shape outputs: size=, axes)
 * allocated outputs before; 0 otherwise (also for NULL oc). A copy:
 * allocating the outputs runs Python code, which may store. */
int pyk_outcache_find(const pyk_outcache *oc, const uk_arg *in, int nin, const int64_t *extra, int nextra, int nout,
                      uk_array *out);
/* Records the allocated outputs of a successful call (creates *ocp). */
void pyk_outcache_store(pyk_outcache **ocp, const uk_arg *in, int nin, const int64_t *extra, int nextra,
                        const uk_array *out, int nout);
void pyk_outcache_free(pyk_outcache *oc);

/* --- array.c: ukern.Array ---------------------------------------------- */
extern PyTypeObject *pyk_ArrayType;
int pyk_array_type_init(PyObject *m);
/* An Array owning `a` (allocated through ctx's allocator); new ref. */
PyObject *pyk_array_new_owner(PyObject *ctx, const uk_array *a, void *stream);
/* An Array viewing memory that `base` keeps alive; new ref. */
PyObject *pyk_array_new_view(PyObject *base, const uk_array *a);
const uk_array *pyk_array_desc(PyObject *o);

/* --- kernel types ------------------------------------------------------- */
int pyk_elementwise_init(PyObject *m);
int pyk_reduction_init(PyObject *m);
int pyk_raw_init(PyObject *m);
int pyk_fusion_init(PyObject *m); /* 0 and nothing added when the library has no fusion */
int pyk_bundle_init(PyObject *m); /* bundle.c: ukern.load_bundle and friends */

/* --- call.c: binding a kernel call's positional args, out= and kwargs --- */
typedef struct pyk_frame {
  pyk_call c;
  uk_array out[PYK_MAX_ARGS];
  PyObject *out_obj[PYK_MAX_ARGS]; /* given outputs (borrowed); unused when allocated */
  int nin, nout, given;
} pyk_frame;

/* Reads keyword arguments into vals (borrowed, NULL when absent) by names
 * (NULL-terminated); an unknown keyword is a TypeError naming `fn`. */
int pyk_kwargs(PyObject *kw, const char *fn, const char *const *names, PyObject **vals);
/* Binds inputs (args[0:nin]) and outputs (args[nin:], or out=: an array or
 * a tuple of arrays, or none: allocated). -1 with an exception on error. */
int pyk_frame_bind(pyk_frame *f, const char *kname, int nin, int nout, PyObject *args, PyObject *out,
                   PyObject *stream);
/* After a successful call: the outputs as the caller sees them: the given
 * objects, or the allocated arrays wrapped (pyk_call_wrap_output). Returns
 * a tuple (new ref); on failure frees what was not wrapped. */
PyObject *pyk_frame_outputs(pyk_frame *f, PyObject *ctx);
/* Before a run with no given outputs and CuPy or PyTorch inputs: outputs an
 * earlier call with this signature allocated (oc, extra as in
 * pyk_outcache_find), allocated now in the library's pool and bound as
 * given (f->out; the arrays, new refs, in made). Returns how many (nout or
 * 0: declined, nothing bound). *record: the call should record its
 * allocated outputs afterwards (pyk_frame_result). */
int pyk_frame_prealloc(pyk_frame *f, const pyk_outcache *oc, const int64_t *extra, int nextra, PyObject **made,
                       int *record);
/* After a successful run: the outputs tuple (new ref): made's arrays (the
 * references move into it; nmade becomes 0), else pyk_frame_outputs, first
 * recording the allocated outputs in *oc when `record`. */
PyObject *pyk_frame_result(pyk_frame *f, PyObject *ctx, pyk_outcache **oc, const int64_t *extra, int nextra,
                           PyObject **made, int *nmade, int record);
/* What a launch-style kernel call does (run, show source, compile, count
 * kernels), and the kernel-specific function that does it. */
typedef enum pyk_mode { PYK_RUN, PYK_SOURCE, PYK_PRECOMPILE, PYK_COUNT, PYK_BIND } pyk_mode;
typedef uk_status (*pyk_run_fn)(void *k, pyk_mode mode, const uk_arg *in, int nin, uk_array *out, int nout,
                                const uk_launch *l, char **src, int *count);
/* k(*args, out=None, size=None, block_size=None, stream=None) for kernels
 * that take a uk_launch: a tuple of outputs (PYK_RUN), str (PYK_SOURCE),
 * None (PYK_PRECOMPILE) or int (PYK_COUNT). Host arrays describe shapes for
 * every mode but PYK_RUN. PYK_BIND binds as PYK_RUN does (streams and
 * events included) and stops before the launch: None (the _bind method,
 * which times the Python side of a call alone). */
PyObject *pyk_launch_do(void *k, pyk_run_fn fn, PyObject *ctx, const char *kname, int nin, int nout,
                        PyObject *args, PyObject *kw, pyk_mode mode, pyk_outcache **oc);
/* Frees arrays a failed wrap left behind; used by pyk_frame_outputs. */
void pyk_frame_release(pyk_frame *f, PyObject *ctx, int from);

#endif
