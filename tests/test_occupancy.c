/* Resident blocks per multiprocessor without the driver (occupancy.h):
 * a table of devices (their attributes as the driver reports them) and
 * kernels (registers, static shared memory, launch bounds), each answer
 * worked out by hand from the rules occupancy.c lists; every limit binds
 * in some row (warps, blocks, registers per SM, registers per block,
 * shared memory per SM and per block, threads per block, launch bounds),
 * and architectures whose rules are not held answer -1. Pure: no GPU. */
#include "runtime/occupancy.h"
#include "testutil.h"

/* cc, warp, threads/block, threads/SM, blocks/SM, regs/SM, regs/block, smem/SM, smem/block, reserved */
static const uk_occ_device H100 = {9, 0, 32, 1024, 2048, 32, 65536, 65536, 233472, 49152, 1024};
static const uk_occ_device A100 = {8, 0, 32, 1024, 2048, 32, 65536, 65536, 167936, 49152, 1024};
static const uk_occ_device RTX3090 = {8, 6, 32, 1024, 1536, 16, 65536, 65536, 102400, 49152, 1024};
static const uk_occ_device V100 = {7, 0, 32, 1024, 2048, 32, 65536, 65536, 98304, 49152, 0};
static const uk_occ_device T4 = {7, 5, 32, 1024, 1024, 16, 65536, 65536, 65536, 49152, 0};

static const struct {
  const char *what;
  const uk_occ_device *d;
  uk_occ_kernel k; /* regs, shared bytes, max threads */
  int block, want;
} cases[] = {
    /* ukern's float32 sum (32 registers, 36 bytes): the warps bind, 8 */
    {"H100 float32 sum", &H100, {32, 36, 1024}, 256, 8},
    /* a struct argmax's column kernel (77 registers: 2560 a warp, 6 warps a
     * sub-partition, 24 an SM): 3 */
    {"H100 argmax columns", &H100, {77, 72, 1024}, 256, 3},
    {"H100 40 registers", &H100, {40, 0, 1024}, 256, 6},
    {"H100 64 registers, 1024 threads", &H100, {64, 0, 1024}, 1024, 1},
    /* 72 registers x 1024 threads: 73728 > 65536 a block */
    {"H100 72 registers, 1024 threads", &H100, {72, 0, 1024}, 1024, 0},
    /* 3 warps count as 4 in the per-block check: 255 registers (8192 a
     * warp) x 4 = 32768 fits; 2 warps a sub-partition, 8 an SM: 2 blocks */
    {"H100 255 registers, 96 threads", &H100, {255, 0, 1024}, 96, 2},
    {"H100 256 registers", &H100, {256, 0, 1024}, 32, 0},
    /* 40000 + 1024 reserved = 41024, 41088 in units of 128: 5 in 233472 */
    {"H100 40000 bytes shared", &H100, {32, 40000, 1024}, 128, 5},
    /* 49152 + 1024 = 50176, exactly the per-block limit: 4 */
    {"H100 48 KiB shared", &H100, {32, 49152, 1024}, 128, 4},
    {"H100 48 KiB + 1 shared", &H100, {32, 49153, 1024}, 128, 0},
    /* no registers, no shared bytes but the reserve: the 32 blocks bind */
    {"H100 empty kernel", &H100, {0, 0, 1024}, 32, 32},
    {"H100 1025 threads", &H100, {16, 0, 1024}, 1025, 0},
    {"H100 no threads", &H100, {16, 0, 1024}, 0, 0},
    {"H100 launch bounds 128", &H100, {16, 0, 128}, 256, 0},
    {"H100 launch bounds 128, 128 threads", &H100, {16, 0, 128}, 128, 16},
    {"A100 float32 sum", &A100, {32, 36, 1024}, 256, 8},
    /* 167936 / 41088 = 4.08 */
    {"A100 40000 bytes shared", &A100, {32, 40000, 1024}, 128, 4},
    /* 1536 threads an SM: 48 warps, 6 blocks of 8 */
    {"RTX 3090 float32 sum", &RTX3090, {32, 36, 1024}, 256, 6},
    {"RTX 3090 empty kernel", &RTX3090, {0, 0, 1024}, 32, 16},
    /* 102400 / 41088 = 2.49 */
    {"RTX 3090 40000 bytes shared", &RTX3090, {32, 40000, 1024}, 128, 2},
    {"V100 float32 sum", &V100, {32, 36, 1024}, 256, 8},
    /* no reserve before sm_80, units of 256: 49152 fits, 49153 (49408) not */
    {"V100 48 KiB shared", &V100, {32, 49152, 1024}, 128, 2},
    {"V100 48 KiB + 1 shared", &V100, {32, 49153, 1024}, 128, 0},
    {"V100 empty kernel", &V100, {0, 0, 1024}, 32, 32},
    /* 1024 threads an SM */
    {"T4 float32 sum", &T4, {32, 36, 1024}, 256, 4},
};

static void table(void) {
  for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++) {
    int got = uk__occupancy_blocks(cases[j].d, &cases[j].k, cases[j].block);
    ut_checks++;
    if (got != cases[j].want) {
      ut_failures++;
      fprintf(stderr, "%s: %d blocks, expected %d\n", cases[j].what, got, cases[j].want);
    }
  }
}

/* Rules not held here, and limits the driver did not give: -1 (the caller
 * asks the driver). */
static void unknown(void) {
  uk_occ_kernel k = {32, 36, 1024};
  uk_occ_device d = H100;
  d.cc_major = 10;
  CHECK(uk__occupancy_blocks(&d, &k, 256) == -1);
  d.cc_major = 6;
  d.cc_minor = 1;
  CHECK(uk__occupancy_blocks(&d, &k, 256) == -1);
  d = H100;
  d.smem_per_sm = 0;
  CHECK(uk__occupancy_blocks(&d, &k, 256) == -1);
  d = H100;
  d.max_blocks_per_sm = -1;
  CHECK(uk__occupancy_blocks(&d, &k, 256) == -1);
  uk_occ_kernel bad = {-1, 0, 1024};
  CHECK(uk__occupancy_blocks(&H100, &bad, 256) == -1);
  /* a shared size near INT_MAX: no overflow, no fit */
  uk_occ_kernel huge = {32, 0x7fffffff, 1024};
  CHECK(uk__occupancy_blocks(&H100, &huge, 256) == 0);
  /* bytes that are no cubin: the driver's turn, and no error left */
  static const unsigned char junk[64] = {'n', 'o', 't', ' ', 'E', 'L', 'F'};
  CHECK(uk__occupancy_of_cubin(0, junk, sizeof junk, "k", 256) == -1);
  CHECK(uk__occupancy_of_cubin(0, NULL, 0, "k", 256) == -1);
  CHECK_STREQ(uk_last_error(), "");
}

int main(void) {
  table();
  unknown();
  return ut_finish("test_occupancy");
}
