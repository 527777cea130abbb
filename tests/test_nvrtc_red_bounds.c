/* red_group's __launch_bounds__ (codegen/red_emit.h uk__red_min_blocks) as
 * ptxas takes it, with NVRTC for sm_90 and no GPU: a fused row reduction
 * of two or three float32 inputs gets the registers that keep every vector
 * load of a trip in flight (without the bounds ptxas held two inputs at 36
 * registers and three at 44 by sinking the loads to their uses), within the
 * limit the bounds set and without spills; a one-input program, and two
 * inputs over rows of 8 vectors, keep the block size alone and ptxas's own
 * choice of registers (32-36). */
#include <stdio.h>

#include "testutil.h"

static uk_context *ctx;

/* The registers ptxas gave the plan's one kernel, from its -v log (-1:
 * none), and whether it spilled. */
static int registers(const char *ins, const char *prog, int nin, int64_t row, int *spills) {
  static const char *const opts[] = {"-Xptxas=-v"};
  uk_fusion_spec fs = {.inputs = ins, .outputs = "s", .program = prog, .name = "bounds", .options = opts,
                       .num_options = 1};
  uk_fusion *f = NULL;
  CHECK_OK(uk_fusion_create(ctx, &fs, &f));
  if (!f) return -1;
  int64_t shape[2] = {4096, row};
  uk_array x[3], s;
  uk_arg in[3];
  memset(&s, 0, sizeof s);
  for (int k = 0; k < nin; k++) {
    CHECK_OK(uk_array_init(&x[k], 0x1000000 * (uint64_t)(k + 1), UK_FLOAT32, 2, shape));
    in[k] = uk_arg_array(&x[k]);
  }
  char *src = NULL;
  CHECK_OK(uk_fusion_source(f, in, nin, &s, 1, NULL, &src));
  CHECK_CONTAINS(src, "(reduction 'bounds_r0')"); /* one group reduction kernel */
  uk_free(src);
  uk_compile_info info;
  memset(&info, 0, sizeof info);
  CHECK_OK(uk_fusion_compile_info(f, in, nin, &s, 1, NULL, &info));
  int regs = -1;
  const char *u = info.log ? strstr(info.log, "Used ") : NULL;
  if (!u || sscanf(u, "Used %d registers", &regs) != 1) fprintf(stderr, "no register count in: %s\n", info.log);
  *spills = info.log && !strstr(info.log, "0 bytes spill stores, 0 bytes spill loads");
  uk_free(info.log);
  uk_fusion_destroy(f);
  return regs;
}

int main(void) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = 90;
  CHECK_OK(uk_context_create(&o, &ctx));
  int spills = 0;
  /* two inputs: __launch_bounds__(256, 4), at most 64 registers; the 8
   * loads of a trip and their addresses need more than main's 36 */
  int r2 = registers("x, y", "s = sum((x - y) * (x - y), axis=-1)", 2, 512, &spills);
  CHECK(r2 > 40 && r2 <= 64 && !spills);
  /* three: (256, 3), at most 85 (80 allocated) */
  int r3 = registers("x, y, z", "s = sum(x * y + z, axis=-1)", 3, 512, &spills);
  CHECK(r3 > 48 && r3 <= 80 && !spills);
  /* one: (256) alone, ptxas's own choice (32-34 registers) */
  int r1 = registers("x", "s = sum(x * x, axis=-1)", 1, 512, &spills);
  CHECK(r1 > 0 && r1 <= 40 && !spills);
  /* two inputs over rows of 32 (8 vectors): no bounds, main's 36 and 6 blocks */
  int r32 = registers("x, y", "s = sum((x - y) * (x - y), axis=-1)", 2, 32, &spills);
  CHECK(r32 > 0 && r32 <= 40 && !spills);
  printf("registers: two inputs %d (rows of 32: %d), three %d, one %d\n", r2, r32, r3, r1);
  uk_context_destroy(ctx);
  return ut_finish("test_nvrtc_red_bounds");
}
