/* Fuzz entry for the fusion planner (libFuzzer, or replay.c): the input
 * bytes drive the C builder (fuse_build.c) to make a program the text
 * form may not reach, then pick a signature (per input: dtype, array or
 * Python scalar, ndim 0-4, extents 0-3; outputs given with dtypes or
 * allocated), which is planned, emitted and shaped (fuzz_fuse.h).
 *
 * Bytes: [nin-1 (0-3)] per input [dtype][ndim|scalar][extents...],
 * [nout flag], then operations until the bytes end (at most 200), each an
 * opcode byte and its operands: input, int/float/complex/bool constant,
 * function (by index into the builder's names) on 1-3 earlier nodes, cast,
 * reduction with axes, keepdims and ddof, output. The last node becomes
 * output 'z' when none was declared. */
#include <stdint.h>

#include "fuzz_fuse.h"

static const char *const fns[] = {
    "add", "subtract", "multiply", "true_divide", "floor_divide", "remainder", "power", "less", "less_equal",
    "greater", "equal", "not_equal", "bitwise_and", "bitwise_or", "bitwise_xor", "invert", "negative", "positive",
    "abs", "exp", "exp2", "expm1", "log", "log2", "log1p", "sqrt", "cbrt", "square", "reciprocal", "sin", "cos",
    "tanh", "arctan2", "hypot", "floor", "ceil", "rint", "sign", "maximum", "minimum", "fmax", "fmin", "clip", "fmod",
    "copysign", "isnan", "isinf", "isfinite", "logical_and", "logical_or", "logical_not", "real", "imag", "angle",
    "conj", "where", "nonexistent"};
static const char *const reds[] = {"sum", "prod", "max", "min", "mean", "any", "all", "argmax", "argmin", "var", "std", "amax"};
static const char *const in_names[] = {"a", "b", "c", "d"};

typedef struct {
  const uint8_t *p;
  size_t n, at;
} bytes;

static unsigned next(bytes *b) { return b->at < b->n ? b->p[b->at++] : 0; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bytes b = {data, size, 0};
  int nin = 1 + (int)(next(&b) % 4);
  uk_fuse_sig sig;
  memset(&sig, 0, sizeof sig);
  int64_t shapes[4][4];
  const int64_t *in_shapes[4];
  sig.nin = nin;
  for (int k = 0; k < nin; k++) {
    unsigned dt = next(&b) % UK_DTYPE_COUNT_, nd = next(&b);
    int scalar = nd >= 200;
    sig.in[k] = (uk_fuse_type){(uk_dtype)dt, scalar};
    sig.is_array[k] = (unsigned char)!scalar;
    sig.ndim[k] = (unsigned char)(scalar ? 0 : nd % 5);
    for (int d = 0; d < sig.ndim[k]; d++) shapes[k][d] = next(&b) % 4;
    in_shapes[k] = scalar ? NULL : shapes[k];
  }
  unsigned outflag = next(&b);
  uk_fusion_builder *fb = NULL;
  if (uk_fusion_builder_create(nin == 1 ? "a" : nin == 2 ? "a, b" : nin == 3 ? "a, b, c" : "a, b, c, d", &fb) != UK_OK)
    return 0;
  int nodes = 0, last = -1, outs = 0;
  for (int op = 0; op < 200 && b.at < b.n; op++) {
    unsigned code = next(&b) % 8;
    int args[3], id = -1;
    for (int k = 0; k < 3; k++) args[k] = nodes ? (int)(next(&b) % (unsigned)nodes) : 0;
    switch (code) {
    case 0: id = uk_fusion_input(fb, in_names[next(&b) % (unsigned)nin]); break;
    case 1: {
      uint64_t hi = next(&b), lo = next(&b); /* sequenced: gcc and clang replay alike */
      id = uk_fusion_const_int(fb, (int64_t)((hi << 56 | lo) - 128u)); /* wraps, no overflow */
      break;
    }
    case 2: id = uk_fusion_const_float(fb, (double)(int)next(&b) / 7.0); break;
    case 3: id = next(&b) & 1 ? uk_fusion_const_complex(fb, 1.5, -2.0) : uk_fusion_const_bool(fb, 1); break;
    case 4: id = uk_fusion_op(fb, fns[next(&b) % (sizeof fns / sizeof fns[0])], args, 1 + (int)(next(&b) % 3)); break;
    case 5: id = uk_fusion_cast(fb, args[0], (uk_dtype)(next(&b) % UK_DTYPE_COUNT_)); break;
    case 6: {
      int axes[4], naxes = (int)(next(&b) % 6) - 1; /* -1: axis=None */
      for (int k = 0; k < naxes && k < 4; k++) axes[k] = (int)(next(&b) % 9) - 4;
      id = uk_fusion_reduce(fb, reds[next(&b) % (sizeof reds / sizeof reds[0])], args[0], axes, naxes > 4 ? 4 : naxes,
                            (int)(next(&b) & 1), (int)(next(&b) % 3));
      break;
    }
    default:
      if (outs < 3) (void)uk_fusion_output(fb, outs == 0 ? "z" : outs == 1 ? "w" : "v", args[0]), outs++;
      break;
    }
    if (id >= 0) nodes = id + 1 > nodes ? id + 1 : nodes, last = id;
  }
  if (!outs && last >= 0) (void)uk_fusion_output(fb, "z", last);
  uk_fuse_prog *g = NULL;
  uk_status st = uk__fuse_builder_take(fb, &g);
  if (st != UK_OK) {
    require(g == NULL && uk_last_error()[0] != '\0');
  } else {
    sig.nout = g->nout;
    sig.out_given = outflag & 1;
    for (int k = 0; k < g->nout && sig.out_given; k++) sig.out[k] = (uk_dtype)((outflag >> 1) % UK_DTYPE_COUNT_);
    fz_plan(g, &sig, in_shapes);
  }
  uk__fuse_prog_free(g);
  uk_fusion_builder_destroy(fb);
  uk__error_clear();
  return 0;
}
