/* The ukern command-line tool: one file per command, plus the shared parts:
 * kernel specs (spec.c), kernels made from them (kernel.c), progress and
 * timing (progress.c), device measurements (measure.c). */
#ifndef UK_CLI_H
#define UK_CLI_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "runtime/compile.h"
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
  X(size) X(block_size) X(axes) X(keepdims)

typedef enum cli_field {
#define CLI_FIELD_ENUM_(f) F_##f,
  CLI_SPEC_FIELDS(CLI_FIELD_ENUM_)
#undef CLI_FIELD_ENUM_
  F_COUNT_
} cli_field;

typedef enum cli_kind { CLI_ELEMENTWISE = 0, CLI_REDUCTION, CLI_MODULE } cli_kind;

typedef struct cli_spec {
  char origin[512]; /* the spec file, or "command line" */
  char *dir;        /* directory of the spec file ("." otherwise), for `file` */
  cli_kind kind;
  char *f[F_COUNT_];
  unsigned char from_cmd[F_COUNT_]; /* given on the command line (wins over the file) */
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
  int nin, nout;              /* parameters */
  char *opt_store;            /* the `options` field, split in place */
  const char *opts[CLI_MAX_OPTS + 2];
  int nopts;
  char *name_store;           /* `name_expressions`, split in place */
  const char *names[CLI_MAX_OPTS];
  int nnames;
  char **call_opts;           /* the library's NVRTC options for the last source made (uk_free) */
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
  uk_reduce_launch rlaunch;
  int axes[UK_MAX_NDIM];
} cli_case;

/* Creates the kernel object (elementwise, reduction; nothing for modules).
 * Definition errors are printed with their caret. */
int cli_kernel_create(uk_context *ctx, const cli_spec *s, cli_kernel *k);
void cli_kernel_destroy(cli_kernel *k);
/* Parses a case (one `inputs` line, the spec's outputs/size/axes). Array
 * data pointers stay 0. */
int cli_case_parse(const cli_kernel *k, const char *line, cli_case *c);
/* Gives every array distinct, 256-byte aligned addresses that are never
 * dereferenced, for code generation without a GPU. */
void cli_case_fake_pointers(cli_case *c);
/* The source a call would compile; caller frees with uk_free. For modules:
 * the spec's source (a copy). */
int cli_kernel_source(cli_kernel *k, cli_case *c, char **src);
/* Fills the compile request the library's call path makes for `src`, so
 * that precompiled entries are the ones calls look up. opts must hold
 * CLI_MAX_OPTS + 2 pointers; `extra` (may be NULL) is appended after them,
 * outside what the call path uses. */
void cli_kernel_request(const cli_kernel *k, const char *src, int arch, const char *extra,
                        const char **opts, uk__compile_req *req);
/* gen and compile: loads `path` (may be NULL) into s, finishes it, creates
 * the kernel and generates the source of case `which` with fake pointers. */
int cli_prepare_source(cli_spec *s, const char *path, long long which, uk_context *ctx, cli_kernel *k, cli_case *c,
                       char **src);
/* Runs the call on the device (outputs as in c). */
uk_status cli_case_call(cli_kernel *k, cli_case *c);
/* A human description of a case ("float32[1000,1000], float32[1000]"). */
const char *cli_case_describe(const cli_case *c, char *buf, size_t size);

/* ------------------------------------------------------------------------ */
/* Progress and JSON (progress.c)                                             */
/* ------------------------------------------------------------------------ */

double cli_now_ms(void);
/* On a terminal (isatty(2)) shows "what ... 1.2 s" on stderr, refreshed
 * while the work runs; nothing otherwise. End clears the line. */
void cli_progress_begin(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_progress_end(void);
/* Writes a JSON string literal. */
void cli_json_str(FILE *f, const char *s);

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
  uk_cache_stats cache;
} cli_measure;

/* Needs a device (UK_ERR_NO_DEVICE otherwise): allocates the case's inputs
 * with seeded random data, runs once (outputs allocated by ukern), checks
 * with two poisons that every output element is written, times `repeat`
 * calls and a device copy of the same bytes. */
uk_status cli_measure_case(cli_kernel *k, cli_case *c, uint64_t seed, int repeat, cli_measure *m);

#endif
