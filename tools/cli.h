/* The ukern command-line tool: one file per command, plus the shared parts:
 * kernel specs (spec.c), kernels made from them (kernel.c), progress and
 * timing (progress.c), device measurements (measure.c). */
#ifndef UK_CLI_H
#define UK_CLI_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "ukern/ukern.h"

/* Exit codes (documented in `ukern --help`). */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2, CLI_NO_DEVICE = 3 };

int cli_info(int argc, char **argv);
int cli_cache(int argc, char **argv);
int cli_demo(int argc, char **argv);
/* demo_kernels.c: the elementwise and reduction part of the demo. */
int cli_demo_kernels(uk_context *ctx, int have_gpu, long long n);
int cli_gen(int argc, char **argv);
int cli_compile(int argc, char **argv);
int cli_run(int argc, char **argv);
int cli_bench(int argc, char **argv);
int cli_precompile(int argc, char **argv);
int cli_bundle(int argc, char **argv);

/* Set by a command given --json: failures reported through cli_fail and
 * cli_fail_msg also print {"ok": false, "error": {what, status, message,
 * log}} on stdout, so that a --json caller always gets one JSON object. */
extern int cli_json_errors;
/* Set once a JSON object has been printed for a failure (cli_fail, or a
 * command's own result object with "ok": false). */
extern int cli_json_printed;
/* Prints "ukern: <what>: STATUS: detail" (+ the compile log) to stderr and
 * returns the exit code for the status. */
int cli_fail(const char *what, uk_status s);
/* A failure that is not a library status: "ukern <what>: <message>"; CLI_FAIL. */
int cli_fail_msg(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The value of the flag argv[*k] (advancing *k), or NULL after printing
 * "ukern <cmd>: --flag needs a value". */
const char *cli_value(int argc, char **argv, int *k, const char *cmd);
/* True when argv holds -h or --help. */
int cli_wants_help(int argc, char **argv);
/* Human-readable byte count ("1.5 MiB") into buf. */
const char *cli_bytes(uint64_t bytes, char *buf, size_t size);
/* Parses a whole decimal integer in [lo, hi]; 0 on success. */
int cli_parse_int(const char *text, long long lo, long long hi, long long *out);

/* ------------------------------------------------------------------------ */
/* Kernel specs (spec.c)                                                      */
/* ------------------------------------------------------------------------ */

/* Every field a spec may hold; the format is described in cli_spec_help. */
#define CLI_SPEC_FIELDS(X)                                                               \
  X(kind) X(name) X(in_params) X(out_params) X(operation) X(preamble) X(loop_prep)       \
  X(after_loop) X(no_reduce_dims) X(map_expr) X(reduce_expr) X(post_map_expr) X(identity) \
  X(reduce_type) X(source) X(file) X(name_expressions) X(options) X(inputs) X(outputs)    \
  X(size) X(block_size) X(axes) X(keepdims) X(program) X(block_reduce)

typedef enum cli_field {
#define CLI_FIELD_ENUM_(f) F_##f,
  CLI_SPEC_FIELDS(CLI_FIELD_ENUM_)
#undef CLI_FIELD_ENUM_
  F_COUNT_
} cli_field;

typedef enum cli_kind { CLI_ELEMENTWISE = 0, CLI_REDUCTION, CLI_MODULE, CLI_FUSION, CLI_KINDS_ } cli_kind;

typedef struct cli_spec {
  char origin[512]; /* the spec file, or "command line" */
  char *dir;        /* directory of the spec file ("." otherwise), for `file` */
  cli_kind kind;
  char *f[F_COUNT_];
  unsigned char from_cmd[F_COUNT_]; /* given on the command line (wins over the file) */
  int line[F_COUNT_];               /* line of the spec file where a field's value starts (0: none) */
} cli_spec;

extern const char cli_spec_help[];
/* How to run a module's kernels (the tool does not run modules). */
extern const char cli_module_run_hint[];

/* All return CLI_OK, or print the problem to stderr and return CLI_USAGE. */
int cli_spec_load(cli_spec *s, const char *path);
/* Sets (or, for options and name_expressions, appends to) a field. */
int cli_spec_set(cli_spec *s, const char *key, const char *value);
/* If argv[*k] is a spec flag (--in-params TEXT, --op TEXT, ...), consumes
 * it and its value: 1; not a spec flag: 0; a spec flag without its value or
 * a bad field: -1 (printed). */
int cli_spec_flag(cli_spec *s, int argc, char **argv, int *k);
/* Parses a command's arguments (argv[0] is the command's name): spec flags
 * into s, everything else through `own`, which returns 1 when it consumed
 * argv[*k] (advancing *k past a value), 0 for an unexpected argument, -1
 * after printing an error. CLI_OK or CLI_USAGE (printed). */
typedef int (*cli_own_arg)(void *user, int argc, char **argv, int *k);
int cli_spec_args(int argc, char **argv, cli_spec *s, cli_own_arg own, void *user);
/* Checks the kind and that the fields present suit it; reads `file`. */
int cli_spec_finish(cli_spec *s);
void cli_spec_free(cli_spec *s);
/* After an error at "FIELD:LINE:COL" of a field's text: prints where its
 * line 1 is in the spec file (nothing for a field from the command line). */
void cli_spec_where(const cli_spec *s, cli_field f);
/* The i-th non-empty line of the `inputs` field (cases); count with i = -1. */
int cli_spec_cases(const cli_spec *s);
const char *cli_spec_case(const cli_spec *s, int i, char *buf, size_t size);

/* ------------------------------------------------------------------------ */
/* Kernels and calls made from specs (kernel.c)                               */
/* ------------------------------------------------------------------------ */

#define CLI_MAX_ARGS 32
#define CLI_MAX_OPTS 64

typedef struct cli_kernel {
  const cli_spec *spec;
  uk_context *ctx;
  uk_elementwise *ew;
  uk_reduction *red;
  uk_fusion *fu;
  int nin, nout;              /* parameters (fusion: input and output names) */
  char *opt_store;            /* the `options` field, split in place */
  const char *opts[CLI_MAX_OPTS + 2]; /* + the extra option of cli_kernel_create */
  int nopts;
  char *name_store;           /* `name_expressions`, split in place */
  const char *names[CLI_MAX_OPTS];
  int nnames;
} cli_kernel;

/* One call: arguments parsed from a line of `inputs` (and `outputs`). */
typedef struct cli_case {
  int nin, nout;
  uk_arg in[CLI_MAX_ARGS];
  uk_array in_arr[CLI_MAX_ARGS]; /* storage for array inputs */
  int is_array[CLI_MAX_ARGS];
  uk_array out[CLI_MAX_ARGS];
  int outputs_given;
  uk_launch launch;
  uk_launch rlaunch;
  int axes[UK_MAX_NDIM];
} cli_case;

/* Creates the kernel object (elementwise, reduction, fusion; nothing for
 * modules), with `extra` (may be NULL) appended to the spec's NVRTC options.
 * Definition errors are printed with their caret. */
int cli_kernel_create(uk_context *ctx, const cli_spec *s, const char *extra, cli_kernel *k);
void cli_kernel_destroy(cli_kernel *k);
/* Parses a case (one `inputs` line, the spec's outputs/size/axes). Array
 * data pointers stay 0. */
int cli_case_parse(const cli_kernel *k, const char *line, cli_case *c);
/* Gives every array distinct, 256-byte aligned addresses that are never
 * dereferenced, for code generation without a GPU. */
void cli_case_fake_pointers(cli_case *c);
/* The source a call would compile (a fusion: every kernel of its plan);
 * caller frees with uk_free. For modules: the spec's source (a copy). */
int cli_kernel_source(cli_kernel *k, cli_case *c, char **src);
/* What the library's precompile / compile_info call of the kernel's kind
 * returns for the case (not for modules). */
uk_status cli_kernel_precompile(cli_kernel *k, cli_case *c);
uk_status cli_kernel_compile_info(cli_kernel *k, cli_case *c, uk_compile_info *info);
/* A module spec's options for uk_module_from_source (arrays borrowed from k). */
void cli_module_options(const cli_kernel *k, uk_module_options *mo);
/* gen and compile: loads `path` (may be NULL) into s, finishes it, creates
 * the kernel (with the extra NVRTC option, may be NULL) and makes case
 * `which` with fake pointers (nothing for modules). */
int cli_prepare_case(cli_spec *s, const char *path, long long which, uk_context *ctx, const char *extra,
                     cli_kernel *k, cli_case *c);
/* Runs the call on the device (outputs as in c). */
uk_status cli_case_call(cli_kernel *k, cli_case *c);
/* A human description of a case ("float32[1000,1000], float32[1000]"). */
const char *cli_case_describe(const cli_case *c, char *buf, size_t size);
/* The same for its outputs ("float32[1000]"). */
const char *cli_case_describe_outputs(const cli_case *c, char *buf, size_t size);

/* The display name of an architecture as users write it ("90", "90a",
 * "sm_90a", "compute_90", "-arch=sm_80"): "sm_90", "sm_90a", "compute_90".
 * Only spelling: the library checks the target (uk_options.arch_name). */
const char *cli_arch_name(const char *text, char *buf, size_t size);
/* The value of an -arch / --gpu-architecture option among opts; NULL if none. */
const char *cli_arch_option(const char *const *opts, int n);
/* After uk_context_create refused uk_options.arch_name = --arch: prints
 * the library's reason as "ukern CMD: --arch: ..."; returns CLI_USAGE. */
int cli_arch_error(const char *cmd);

/* ------------------------------------------------------------------------ */
/* Progress and JSON (progress.c)                                             */
/* ------------------------------------------------------------------------ */

double cli_now_ms(void);
/* On a terminal (isatty(2)) shows "what ... 1.2 s" on stderr, refreshed
 * while the work runs; nothing otherwise. End clears the line. */
void cli_progress_begin(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_progress_end(void);
/* Writes a JSON string literal. Valid UTF-8 is kept; each byte of an
 * invalid sequence (a non-UTF-8 file name) becomes \udcXX, U+DC00 + the
 * byte: the lone surrogates of PEP 383 ("surrogateescape"), so that the JSON
 * parses anywhere and os.fsencode() in Python gives the original bytes. */
void cli_json_str(FILE *f, const char *s);

/* ------------------------------------------------------------------------ */
/* The filtered stderr (errout.c)                                             */
/* ------------------------------------------------------------------------ */

/* The length of the valid UTF-8 sequence at p (1-4), 0 when invalid. */
size_t cli_utf8_len(const unsigned char *p, size_t avail);
/* Makes `stderr` a filter of the original stream: control bytes (but
 * newline and tab) and invalid UTF-8 are written as \xNN, and the text is
 * kept (its first 8 KiB) for cli_stderr_text. Called first in main. */
void cli_stderr_filter_install(void);
/* The original stderr (terminal progress lines draw there). */
extern FILE *cli_raw_stderr;
/* What the command wrote to stderr, without a trailing usage text. */
const char *cli_stderr_text(char *buf, size_t size);

/* ------------------------------------------------------------------------ */
/* Device measurements (measure.c)                                            */
/* ------------------------------------------------------------------------ */

typedef struct cli_measure {
  double ms;          /* median device time of one call */
  double first_ms;    /* host time of the first call (compile or cache load included) */
  double bytes;       /* bytes the call reads and writes (each array once) */
  double gbps;
  double copy_ms;     /* cuMemcpyDtoD moving the same bytes (read + write) */
  double copy_gbps;
  int64_t unwritten;  /* output elements the call did not write (must be 0) */
  char outputs[512];  /* the outputs' dtypes and shapes after the first call */
  uk_cache_stats cache;
} cli_measure;

/* Needs a device (UK_ERR_NO_DEVICE otherwise): allocates the case's inputs
 * with seeded random data, runs once (outputs allocated by ukern), checks
 * with two poisons that every output element is written, times `repeat`
 * calls and a device copy of the same bytes. */
uk_status cli_measure_case(cli_kernel *k, cli_case *c, uint64_t seed, int repeat, cli_measure *m);

#endif
