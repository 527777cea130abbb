/* Fuzz entry for the fusion language (libFuzzer, or replay.c): the input
 * is text, its first line the inputs ("x, y"), its second the outputs, the
 * rest the program, parsed (fuse_parse.c) and, when it parses, typed,
 * planned and emitted (fuse_plan.c, fuse_emit.c, fuse_row.c) for one
 * signature: inputs float32 arrays of ndim 2, except every fourth a Python
 * int, shapes (3, 4). Findings: crashes (deep nesting overflowing the
 * stack among them), sanitizer reports, timeouts (quadratic parses) and
 * broken invariants (fuzz_fuse.h; a parse failure has a message). */
#include <stdint.h>

#include "fuzz_fuse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  char *outs = strchr(text, '\n');
  char *prog = outs ? strchr(outs + 1, '\n') : NULL;
  if (!prog) {
    free(text);
    return 0;
  }
  *outs++ = '\0';
  *prog++ = '\0';
  uk_fuse_prog *g = NULL;
  uk_status st = uk__fuse_parse(text, outs, prog, &g);
  if (st != UK_OK) {
    require(g == NULL && uk_last_error()[0] != '\0');
  } else if (g->nin <= UK_FUSE_MAX_INPUTS && g->nout <= 64) {
    uk_fuse_sig sig;
    memset(&sig, 0, sizeof sig);
    static const int64_t shape[2] = {3, 4};
    const int64_t *in_shapes[UK_FUSE_MAX_INPUTS];
    sig.nin = g->nin;
    sig.nout = g->nout;
    for (int k = 0; k < g->nin; k++) {
      int scalar = k % 4 == 3;
      sig.in[k] = (uk_fuse_type){scalar ? UK_INT64 : UK_FLOAT32, scalar};
      sig.is_array[k] = (unsigned char)!scalar;
      sig.ndim[k] = scalar ? 0 : 2;
      in_shapes[k] = scalar ? NULL : shape;
    }
    fz_plan(g, &sig, in_shapes);
  }
  uk__fuse_prog_free(g);
  uk__error_clear();
  free(text);
  return 0;
}
