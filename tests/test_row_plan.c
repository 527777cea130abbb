/* The row kernel's sizing (codegen/fuse_row_plan.h uk__row_size) from a
 * table: the mode (registers, shared memory, re-read), threads per row,
 * vector width, registers a thread, rows per block, blocks, the elements
 * of a row kept in shared memory and their bytes, for the sweep's widths
 * at 1 GiB and 4 MiB (132 SMs), odd widths, several inputs, the 227 KiB
 * opt-in, the 40 KiB fallback and no budget; when few long rows go to the
 * split plan (uk__row_prefer); which rows move through a warp's shared slot
 * (uk__row_staged). The cluster variant (sm_90+): when a row
 * splits over a cluster and over how many blocks (uk__row_cluster), and
 * when few long rows take it rather than the split plan; every plan of a
 * grid of 1.47M shapes against what the kernels rely on. Then the argument
 * buffer's layout
 * (each parameter on its alignment) of hand-made and planned programs, and
 * planned programs' reduction levels and which rows a lone last-axis
 * reduction's row plan fits (uk__fuse_row_fits). Pure arithmetic, no GPU. */
#include "codegen/dtype.h"
#include "codegen/fuse_row.h"
#include "codegen/fuse_row_plan.h"
#include "testutil.h"

#define K227 (227 * 1024) /* an H100/H200 block's opt-in */
#define K40 (40 * 1024)

typedef struct row_case {
  const char *label;
  int64_t rows, n;
  int nkept;
  int size[4];
  int reg_bytes, vec, sm;
  int64_t smem;
  /* expected */
  int mode, threads, vec_out, regs, block, rpb;
  int64_t blocks, kept, rowbytes;
} row_case;

enum { R = UK_ROW_REGS, S = UK_ROW_SHARED, G = UK_ROW_GLOBAL };

/* softmax / layer norm float32: 12 register bytes an element (x, the kept
 * value, z): 16 elements a thread, 32 past 512 threads x 16 (vectors);
 * float64: 24 bytes, 8 elements, then shared memory */
static const row_case cases[] = {
    /* the sweep's 1 GiB float32 points (132 SMs) */
    {"1 GiB rows of 32: 2 lanes x 4 float4, a block for each 128 rows", 8388608, 32, 1, {4}, 12, 4, 132, K227, R, 2, 4, 4,
     256, 128, 65536, 0, 0},
    {"1 GiB rows of 128: 8 lanes, blocks of 64", 2097152, 128, 1, {4}, 12, 4, 132, K227, R, 8, 4, 4, 64, 8, 262144, 0,
     0},
    {"1 GiB rows of 512: a warp, 2 rows a block", 524288, 512, 1, {4}, 12, 4, 132, K227, R, 32, 4, 4, 64, 2, 262144,
     0, 0},
    {"1 GiB rows of 2048: 4 warps, 2 rows a block", 131072, 2048, 1, {4}, 12, 4, 132, K227, R, 128, 4, 4, 256, 2, 65536,
     0, 0},
    {"1 GiB rows of 8192: 16 warps", 32768, 8192, 1, {4}, 12, 4, 132, K227, R, 512, 4, 4, 512, 1, 32768, 0, 0},
    {"1 GiB rows of 16384: 16 warps x 8 float4", 16384, 16384, 1, {4}, 12, 4, 132, K227, R, 512, 4, 8, 512, 1, 16384,
     0, 0},
    {"1 GiB rows of 65536: 58108 kept, the rest re-read", 4096, 65536, 1, {4}, 12, 4, 132, K227, G, 1024, 4, 0, 1024,
     1, 2112, 58108, 232432},
    /* 4 MiB */
    {"4 MiB rows of 32", 32768, 32, 1, {4}, 12, 4, 132, K227, R, 2, 4, 4, 128, 64, 512, 0, 0},
    {"4 MiB rows of 2048: blocks of one row", 512, 2048, 1, {4}, 12, 4, 132, K227, R, 128, 4, 4, 128, 1, 512, 0, 0},
    {"4 MiB 16 rows of 65536", 16, 65536, 1, {4}, 12, 4, 132, K227, G, 1024, 4, 0, 1024, 1, 16, 58108, 232432},
    /* odd widths: scalar accesses */
    {"n = 1: a thread a row, warp blocks for 1000 rows", 1000, 1, 1, {4}, 12, 1, 132, K227, R, 1, 1, 1, 32, 32, 32, 0,
     0},
    {"n = 3, 7 rows", 7, 3, 1, {4}, 12, 1, 132, K227, R, 1, 1, 4, 32, 32, 1, 0, 0},
    {"n = 31: 2 lanes x 16", 1000, 31, 1, {4}, 12, 1, 132, K227, R, 2, 1, 16, 32, 16, 63, 0, 0},
    {"n = 33: 4 lanes x 16", 1000, 33, 1, {4}, 12, 1, 132, K227, R, 4, 1, 16, 32, 8, 125, 0, 0},
    {"n = 1000 float64: 128 threads x 4 vectors of 2", 37, 1000, 1, {8}, 24, 2, 132, K227, R, 128, 2, 4, 128, 1, 37, 0,
     0},
    {"n = 8193: past 512 threads x 16 scalars", 10, 8193, 1, {4}, 12, 1, 132, K227, S, 512, 1, 0, 512, 1, 10, 8193,
     32784},
    {"n = 12292: 512 threads x 8 float4", 10, 12292, 1, {4}, 12, 4, 132, K227, R, 512, 4, 8, 512, 1, 10, 0, 0},
    {"n = 16385: the whole row in shared memory", 1000, 16385, 1, {4}, 12, 1, 132, K227, S, 1024, 1, 0, 1024, 1, 1000,
     16385, 65552},
    {"n = 16385 before the budget is known (the key)", 1000, 16385, 1, {4}, 12, 1, 132, 0, G, 1024, 1, 0, 1024, 1,
     1000, 0, 0},
    {"n = 16385, 40 KiB fallback", 1000, 16385, 1, {4}, 12, 1, 132, K40, G, 1024, 1, 0, 1024, 1, 1000, 10236, 40944},
    {"n = 12289 float64: past 512 threads x 16", 1000, 12289, 1, {8}, 24, 1, 132, K227, S, 512, 1, 0, 512, 1, 1000,
     12289, 98320},
    {"two inputs (f32, f64), n = 5000: 20 bytes an element, past 512 x 8, no wide budget", 3, 5000, 2, {4, 8}, 20, 2,
     132, K227, S, 256, 2, 0, 256, 1, 3, 5000, 60000},
    {"two inputs (f32, f64), n = 4096: 512 threads x 4 vectors of 2", 3, 4096, 2, {4, 8}, 20, 2, 132, K227, R, 512, 2,
     4, 512, 1, 3, 0, 0},
    {"two inputs (f32, f64), n = 9000: shared, 2 a vector", 3, 9000, 2, {4, 8}, 20, 2, 132, K227, S, 512, 2, 0, 512, 1,
     3, 9000, 108000},
    {"four complex128 inputs, 160 bytes an element: one a thread", 100, 64, 4, {16, 16, 16, 16}, 160, 1, 132, K227, R,
     64, 1, 1, 64, 1, 100, 0, 0},
    {"too many arrays for registers", 100, 64, 4, {16, 16, 16, 16}, 400, 1, 132, K227, S, 64, 1, 0, 64, 1, 100, 64,
     4096},
    {"vectors too wide for the registers: scalar", 100, 64, 3, {4, 4, 4}, 60, 4, 132, K227, R, 32, 1, 2, 32, 1, 100, 0,
     0},
    {"n = 16384: 512 threads x 8 float4, two blocks an SM", 16384, 16384, 1, {4}, 12, 4, 132, K227, R, 512, 4, 8, 512,
     1, 16384, 0, 0},
    {"n = 8192, one row", 1, 8192, 1, {4}, 8, 4, 132, K227, R, 512, 4, 4, 512, 1, 1, 0, 0},
    {"2^30 rows of 16: a thread a row", (int64_t)1 << 30, 16, 1, {4}, 12, 4, 132, K227, R, 1, 4, 4, 64, 64, 16777216,
     0, 0},
    {"2^40 rows of 16: 2^31 - 1 blocks, the kernel strides", (int64_t)1 << 40, 16, 1, {4}, 12, 4, 132, K227, R, 1, 4, 4,
     64, 64, 0x7fffffff, 0, 0},
    {"no SM count: one", 10, 32, 1, {4}, 12, 4, 0, K227, R, 2, 4, 4, 32, 16, 1, 0, 0},
    {"vec given but n not a multiple: scalar", 50, 30, 1, {4}, 12, 4, 132, K227, R, 2, 1, 16, 32, 16, 4, 0, 0},
};

static void geometry(void) {
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const row_case *t = &cases[c];
    uk_row_shape s = {t->rows, t->n, t->nkept, t->size, t->reg_bytes, t->vec, t->sm, t->smem, 0, 1, 0, 0};
    uk_row_grid g;
    memset(&g, 0xff, sizeof g);
    uk__row_size(&s, &g);
    CHECK(g.staged == (g.mode == UK_ROW_REGS && uk__row_staged(&g, t->n)));
    CHECK(g.try_div == uk__row_try_div(&g, t->sm));
    CHECK(!g.staged || g.block <= 256); /* the kernel's 8 slots */
    int ok = g.mode == t->mode && g.threads == t->threads && g.vec == t->vec_out && g.regs == t->regs &&
             g.block == t->block && g.rows_per_block == t->rpb && g.blocks == t->blocks && g.kept == t->kept &&
             g.rowbytes == t->rowbytes && g.shared == t->rowbytes * t->rpb;
    if (!ok)
      fprintf(stderr,
              "case '%s': mode %d threads %d vec %d regs %d block %d rpb %d blocks %lld kept %lld rowbytes %lld "
              "shared %lld\n",
              t->label, g.mode, g.threads, g.vec, g.regs, g.block, g.rows_per_block, (long long)g.blocks,
              (long long)g.kept, (long long)g.rowbytes, (long long)g.shared);
    CHECK(ok);
    /* invariants the kernel relies on */
    CHECK(g.shared <= t->smem || g.shared == 0);
    CHECK(g.block % g.threads == 0 && g.block <= UK_ROW_MAX_THREADS && g.threads >= 1);
    CHECK((g.threads & (g.threads - 1)) == 0 && (g.block & (g.block - 1)) == 0);
    CHECK(g.blocks >= 1 && g.blocks <= 0x7fffffff);
    CHECK(t->n % g.vec == 0);
    if (g.mode == UK_ROW_REGS) {
      /* every element has a register slot; a thread's share fits the budget */
      CHECK((int64_t)g.threads * g.regs * g.vec >= t->n);
      /* the wide budget only where 512 threads do not hold the row in the narrow one */
      int wide = g.regs * g.vec > UK_ROW_REG_ELEMS || g.regs * g.vec * t->reg_bytes > UK_ROW_REG_BYTES;
      CHECK(g.regs * g.vec <= UK_ROW_REG_ELEMS << wide && g.regs * g.vec * t->reg_bytes <= UK_ROW_REG_BYTES << wide);
      CHECK(g.threads <= UK_ROW_REG_THREADS && (!wide || (g.threads == UK_ROW_REG_THREADS && g.vec > 1 &&
                                                         t->reg_bytes * 2 * UK_ROW_REG_ELEMS <= 2 * UK_ROW_REG_BYTES)));
      CHECK(g.block >= 32 || g.block == g.threads);
      CHECK(g.kept == 0 && g.shared == 0);
    } else {
      /* a block a row (barriers around the vector copies) */
      CHECK(g.threads >= 64 && g.rows_per_block == 1 && g.regs == 0);
      CHECK(g.kept >= 0 && g.kept <= t->n && g.kept % g.vec == 0);
      CHECK((g.mode == UK_ROW_SHARED) == (g.kept == t->n));
      for (int j = 0; j < t->nkept; j++) CHECK(g.rowbytes >= g.kept * t->size[j]);
    }
  }
}

/* Few long rows go to the split plan when each SM would move over 1 MiB. */
/* Which rows move through a warp's shared slot (uk__row_staged) when
 * their arrays are contiguous, none when not; their blocks (256 threads,
 * others of at most a warp 64); the variant's line for it. */
static void staged(void) {
  static const struct {
    const char *label;
    int64_t rows, n;
    int vec, want, block;
  } cs[] = {
      {"rows of 32 float32: 2 lanes x 4 float4", 8388608, 32, 4, 1, 256},
      {"rows of 64: 4 lanes x 4 float4", 100000, 64, 4, 1, 256},
      {"rows of 16: a thread of 4 float4 (T x K = 4)", 100000, 16, 4, 0, 64},
      {"rows of 128: 8 lanes, an access a line per row already", 100000, 128, 4, 0, 64},
      {"rows of 31: scalars, not whole", 100000, 31, 1, 0, 64},
      {"rows of 32 by scalars (vec 1)", 100000, 32, 1, 0, 64},
      {"rows of 32 float64: 4 lanes x 4 vectors of 2", 100000, 32, 2, 1, 256},
      {"rows of 16 float64: 2 lanes x 4 vectors of 2", 100000, 16, 2, 1, 256},
      {"7 rows of 32: a block of a warp", 7, 32, 4, 1, 32},
  };
  for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++)
    for (int contig = 0; contig < 2; contig++) {
      int f64 = cs[c].vec == 2, want = contig && cs[c].want;
      uk_row_shape sh = {cs[c].rows, cs[c].n, 1, (int[]){f64 ? 8 : 4}, f64 ? 24 : 12, cs[c].vec, 132, K227, 0,
                         contig, 0, 0};
      uk_row_grid g;
      uk__row_size(&sh, &g);
      /* not staged: blocks of 64 for rows of at most a warp (fewer rows: fewer) */
      int block = want || cs[c].block < 64 ? cs[c].block : 64;
      if (g.staged != want || g.block != block || uk__row_staged(&g, cs[c].n) != cs[c].want)
        fprintf(stderr, "staged '%s' contig %d: %d (T %d K %d V %d block %d), want %d block %d\n", cs[c].label, contig,
                g.staged, g.threads, g.regs, g.vec, g.block, want, block);
      CHECK(g.staged == want && g.block == block && uk__row_staged(&g, cs[c].n) == cs[c].want);
    }
  uk_row_grid g;
  memset(&g, 0, sizeof g);
  g.mode = UK_ROW_REGS, g.regs = 4, g.vec = 4, g.threads = 2, g.block = 256;
  CHECK(uk__row_staged(&g, 32) == 1);
  CHECK(uk__row_staged(&g, 36) == 0); /* not whole */
  g.mode = UK_ROW_SHARED;
  CHECK(uk__row_staged(&g, 32) == 0);
  g.mode = UK_ROW_REGS, g.staged = 1;
  char v[128];
  uk__row_variant(&g, 32, v, sizeof v);
  CHECK(strcmp(v, "#define _UK_RK 4\n#define _UK_RV 4\n#define _UK_RT 2\n#define _UK_RW 1\n"
                  "#define _UK_RD 0\n#define _UK_RX 1\n") == 0);
  /* branch-free divisions: registers, at most 16 elements a thread, blocks of at most
   * 256 threads or at most 2 blocks an SM */
  g.try_div = 1, g.staged = 0;
  uk__row_variant(&g, 32, v, sizeof v);
  CHECK(strcmp(v, "#define _UK_RK 4\n#define _UK_RV 4\n#define _UK_RT 2\n#define _UK_RW 1\n#define _UK_RD 1\n") == 0);
  g.block = 512, g.blocks = 264;
  CHECK(uk__row_try_div(&g, 132) == 1);
  g.blocks = 265;
  CHECK(uk__row_try_div(&g, 132) == 0);
  g.block = 256, g.blocks = 1 << 20;
  CHECK(uk__row_try_div(&g, 132) == 1);
  g.blocks = 8, g.regs = 8;
  CHECK(uk__row_try_div(&g, 132) == 0); /* 32 elements a thread */
  g.regs = 4, g.mode = UK_ROW_SHARED;
  CHECK(uk__row_try_div(&g, 132) == 0);
}

static void prefer(void) {
  CHECK(uk__row_prefer(16, 65536, 8, 132) == 1);   /* 512 KiB a row: one kernel */
  CHECK(uk__row_prefer(16, 262144, 8, 132) == 0);  /* 2 MiB a row on 16 SMs */
  CHECK(uk__row_prefer(3, 9001, 8, 132) == 1);
  CHECK(uk__row_prefer(132, 10000000, 8, 132) == 1); /* every SM has a row */
  CHECK(uk__row_prefer(131, 200000, 8, 132) == 0);
  CHECK(uk__row_prefer(1, 1 << 20, 1, 132) == 1);
  CHECK(uk__row_prefer(1, (1 << 20) + 1, 1, 132) == 0);
  CHECK(uk__row_prefer(1, 100, 0, 132) == 1);
  /* the variant: whole rows where T x K x V is the row */
  char v[128];
  uk_row_grid g;
  memset(&g, 0, sizeof g);
  g.mode = UK_ROW_REGS;
  g.regs = 4, g.vec = 4, g.threads = 128;
  uk__row_variant(&g, 2048, v, sizeof v);
  CHECK(strcmp(v, "#define _UK_RK 4\n#define _UK_RV 4\n#define _UK_RT 128\n#define _UK_RW 1\n#define _UK_RD 0\n") == 0);
  uk__row_variant(&g, 2044, v, sizeof v);
  CHECK(strcmp(v, "#define _UK_RK 4\n#define _UK_RV 4\n#define _UK_RT 128\n#define _UK_RW 0\n#define _UK_RD 0\n") == 0);
  g.mode = UK_ROW_SHARED, g.regs = 0, g.vec = 1, g.threads = 1024;
  uk__row_variant(&g, 1024, v, sizeof v); /* shared memory: never whole */
  CHECK(strcmp(v, "#define _UK_RK 0\n#define _UK_RV 1\n#define _UK_RT 1024\n#define _UK_RW 0\n"
                  "#define _UK_RD 0\n") == 0);
}

/* Two-level rows a block of 512 threads takes (4097-8192 float32
 * elements), 132 SMs: 256 threads at the wide budget from 462 to 528 rows
 * (7/8 to all of four blocks an SM), where blocks of 512 would run a second
 * round; one level, a lone reduction and rows outside that stay at 512. */
typedef struct resident_case {
  const char *label;
  int64_t rows, n;
  int levels, single;
  int threads, regs; /* expected (registers mode, float4, a block a row) */
} resident_case;

static const resident_case resident_cases[] = {
    {"461 rows of 8192, two levels: 512 threads", 461, 8192, 2, 0, 512, 4},
    {"462 rows of 8192, two levels: 256 threads x 8 float4", 462, 8192, 2, 0, 256, 8},
    {"512 rows of 8192 (16 MiB), softmax: 256 threads", 512, 8192, 2, 0, 256, 8},
    {"528 rows of 8192, three levels: 256 threads", 528, 8192, 3, 0, 256, 8},
    {"529 rows of 8192: 512 threads (a second round either way)", 529, 8192, 2, 0, 512, 4},
    {"512 rows of 6000: 256 threads x 8 float4 slots (1500 used)", 512, 6000, 2, 0, 256, 8},
    {"512 rows of 8192, one level (x - mean): 512 threads", 512, 8192, 1, 0, 512, 4},
    {"512 rows of 8192, levels unknown: 512 threads", 512, 8192, 0, 0, 512, 4},
    {"512 rows of 8192, a lone reduction: 512 threads", 512, 8192, 2, 1, 512, 4},
    {"512 rows of 4096: 256 threads already", 512, 4096, 2, 0, 256, 4},
};

static void resident_rows(void) {
  static const int size[1] = {4};
  for (size_t c = 0; c < sizeof resident_cases / sizeof resident_cases[0]; c++) {
    const resident_case *t = &resident_cases[c];
    uk_row_shape s = {t->rows, t->n, 1, size, 12, 4, 132, K227, 16, 1, t->levels, t->single};
    uk_row_grid g;
    memset(&g, 0xff, sizeof g);
    uk__row_size(&s, &g);
    int ok = g.mode == R && g.cluster == 0 && g.threads == t->threads && g.regs == t->regs && g.vec == 4 &&
             g.block == t->threads && g.rows_per_block == 1 && g.blocks == t->rows;
    if (!ok)
      fprintf(stderr, "resident case '%s': mode %d C %d threads %d regs %d vec %d block %d blocks %lld\n", t->label,
              g.mode, g.cluster, g.threads, g.regs, g.vec, g.block, (long long)g.blocks);
    CHECK(ok);
    CHECK((int64_t)g.threads * g.regs * g.vec >= t->n && g.regs * g.vec <= 2 * UK_ROW_REG_ELEMS);
    CHECK(g.try_div == uk__row_try_div(&g, 132) && g.staged == 0);
  }
}

/* The cluster variant: the rows, the device's budget and cluster size,
 * what uk__row_size picks (cluster 0: today's plans). */
typedef struct cl_case {
  const char *label;
  int64_t rows, n;
  int nkept;
  int size[2];
  int vec, cmax;
  int64_t smem;
  /* expected */
  int cluster, mode, threads, vec_out;
  int64_t blocks, kept, rowbytes;
  int levels; /* the row's reductions one after another (0: unknown, as 1) */
} cl_case;

static const cl_case cl_cases[] = {
    /* issue 25's worst points (float32 softmax, 132 SMs, 227 KiB) */
    {"16 x 65536: C 8, 128 SMs busy, slices in registers", 16, 65536, 1, {4}, 4, 16, K227, 8, R, 512, 4, 128, 8192, 0,
     0},
    {"256 x 65536: C 8, no re-read, slices of a quarter budget (several blocks an SM)", 256, 65536, 1, {4}, 4, 16,
     K227, 8, S, 256, 4, 2048, 8192, 32768, 0},
    {"64 x 65536 (16 MiB), one level: C 8 in registers, 1024 threads an SM", 64, 65536, 1, {4}, 4, 16, K227, 8, R,
     256, 4, 512, 8192, 0, 0},
    {"64 x 65536 (16 MiB), two levels: C 8 in shared memory (registers past 768 threads an SM)", 64, 65536, 1, {4}, 4,
     16, K227, 8, S, 256, 4, 512, 8192, 32768, 2},
    {"48 x 65536, two levels: C 8 in registers (768 threads an SM)", 48, 65536, 1, {4}, 4, 16, K227, 8, R, 256, 4, 384,
     8192, 0, 2},
    {"96 x 32768, two levels: C 4 in registers, 256 threads x 8 float4 (not C 2 of 512)", 96, 32768, 1, {4}, 4, 16,
     K227, 4, R, 256, 4, 384, 8192, 0, 2},
    {"100 x 32768, two levels: C 2 in shared memory (C 4 in registers: 800 threads an SM)", 100, 32768, 1, {4}, 4, 16,
     K227, 2, S, 512, 4, 200, 16384, 65536, 2},
    {"128 x 32768, two levels: C 2 in shared memory", 128, 32768, 1, {4}, 4, 16, K227, 2, S, 512, 4, 256, 16384,
     65536, 2},
    {"40 x 65537 (scalars), two levels: C 8 in shared memory (registers take vectors)", 40, 65537, 1, {4}, 1, 16, K227,
     8, S, 512, 1, 320, 8193, 32784, 2},
    {"4096 x 65536 (1 GiB): C 8, 1056 clusters striding", 4096, 65536, 1, {4}, 4, 16, K227, 8, S, 256, 4, 8448, 8192,
     32768, 0},
    {"8192 x 32768: a block a row holds it (clusters of 2-8 ran slower)", 8192, 32768, 1, {4}, 4, 16, K227, 0, S, 1024,
     4, 2112, 32768, 131072, 0},
    {"8192 x 32768, one level: a block a row", 8192, 32768, 1, {4}, 4, 16, K227, 0, S, 1024, 4, 2112, 32768, 131072,
     1},
    {"8192 x 32768, two levels (layer norm): a row alone on an SM goes over C 4 (a quarter budget), 2112 clusters",
     8192, 32768, 1, {4}, 4, 16, K227, 4, S, 256, 4, 8448, 8192, 32768, 2},
    {"512 x 32768, three levels: C 4", 512, 32768, 1, {4}, 4, 16, K227, 4, S, 256, 4, 2048, 8192, 32768, 3},
    {"1024 x 20000, two levels: 1024 threads a row alone: C 2", 1024, 20000, 1, {4}, 4, 16, K227, 2, S, 512, 4, 2048,
     10000, 40000, 2},
    {"4096 x 16384, two levels: registers", 4096, 16384, 1, {4}, 4, 16, K227, 0, R, 512, 4, 4096, 0, 0, 2},
    {"8192 x 20000 float64, two levels: C 4", 8192, 20000, 1, {8}, 2, 16, K227, 4, S, 256, 2, 8448, 5000, 40000, 2},
    {"8192 x 20000 float64, one level: a block a row", 8192, 20000, 1, {8}, 2, 16, K227, 0, S, 1024, 2, 2112, 20000,
     160000, 1},
    {"8192 x 32768, two levels, portable clusters only: C 4", 8192, 32768, 1, {4}, 4, 8, K227, 4, S, 256, 4, 8448,
     8192, 32768, 2},
    {"8192 x 32768, two levels, before sm_90: a block a row", 8192, 32768, 1, {4}, 4, 0, K227, 0, S, 1024, 4, 2112,
     32768, 131072, 2},
    {"128 x 32768, one level: C 4 in registers (1024 threads an SM), not C 2 in shared memory", 128, 32768, 1, {4}, 4,
     16, K227, 4, R, 256, 4, 512, 8192, 0, 0},
    {"132 x 32768, one level: a block a row (the rows fill the SMs)", 132, 32768, 1, {4}, 4, 16, K227, 0, S, 1024, 4,
     132, 32768, 131072, 0},
    {"130 x 32768, two levels: C 2 in shared memory (C 4 in registers: 1040 threads an SM)", 130, 32768, 1, {4}, 4,
     16, K227, 2, S, 512, 4, 260, 16384, 65536, 2},
    {"32 x 32768: C 4 for the SMs", 32, 32768, 1, {4}, 4, 16, K227, 4, R, 512, 4, 128, 8192, 0, 0},
    {"1 x 65536: C 16 (non-portable)", 1, 65536, 1, {4}, 4, 16, K227, 16, R, 256, 4, 16, 4096, 0, 0},
    {"1 x 65536, portable sizes only: C 8", 1, 65536, 1, {4}, 4, 8, K227, 8, R, 512, 4, 8, 8192, 0, 0},
    {"16 x 40000: a row fits a block, the rows fill 16 SMs: C 8", 16, 40000, 1, {4}, 4, 16, K227, 8, R, 512, 4, 128,
     5000, 0, 0},
    {"16 x 40001: scalar slices of 5001", 16, 40001, 1, {4}, 4, 16, K227, 8, R, 512, 1, 128, 5001, 0, 0},
    {"3 x 200000: 4 blocks hold a row, C 16 for the SMs (32 elements a thread)", 3, 200000, 1, {4}, 4, 16, K227, 16, R,
     512, 4, 48, 12500, 0, 0},
    {"9 x 65536: 9 x C 16 > 132 SMs: registers all the same (128 threads x 8 float4)", 9, 65536, 1, {4}, 4, 16, K227,
     16, R, 128, 4, 144, 4096, 0, 0},
    {"300 x 200000: C 16, 264 clusters striding", 300, 200000, 1, {4}, 4, 16, K227, 16, S, 512, 4, 4224, 12500,
     50000, 0},
    {"3 x 200000 float64, portable: C 8 holds it", 3, 200000, 1, {8}, 2, 8, K227, 8, S, 1024, 2, 24, 25000, 200000, 0},
    {"f32 + f64 inputs, 8 x 65536: C 16", 8, 65536, 2, {4, 8}, 2, 16, K227, 16, R, 256, 2, 128, 4096, 0, 0},
    /* today's plans */
    {"4 x 2^20: 16 blocks do not hold a row: re-read", 4, 1 << 20, 1, {4}, 4, 16, K227, 0, G, 1024, 4, 4, 58108,
     232432, 0},
    {"16384 x 16384: registers (512 threads x 8 float4)", 16384, 16384, 1, {4}, 4, 16, K227, 0, R, 512, 4, 16384, 0,
     0, 0},
    {"16384 x 16388: a block a row fills the SMs", 16384, 16388, 1, {4}, 4, 16, K227, 0, S, 1024, 4, 2112, 16388,
     65552, 0},
    {"100 x 12289: few rows, but short", 100, 12289, 1, {4}, 1, 16, K227, 0, S, 512, 1, 100, 12289, 49168, 0},
    {"16 x 65536 before sm_90", 16, 65536, 1, {4}, 4, 0, K227, 0, G, 1024, 4, 16, 58108, 232432, 0},
    {"16 x 65536 without a budget", 16, 65536, 1, {4}, 4, 16, 0, 0, G, 1024, 4, 16, 0, 0, 0},
    {"4 x 4096: registers", 4, 4096, 1, {4}, 4, 16, K227, 0, R, 256, 4, 4, 0, 0, 0},
};

/* A lone reduction's rows (uk_row_shape.single; two float32 inputs of
 * row sums, or one), 132 SMs, 227 KiB: its few rows of 8192 and more go
 * over clusters in register slices, with fewer blocks a row where
 * shared-memory slices would put rows x C past the SMs; elsewhere as any
 * program's. */
static const cl_case lone_cases[] = {
    {"2 x 8192: C 4 of 2048 (128 threads x 4 float4)", 2, 8192, 2, {4, 4}, 4, 16, K227, 4, R, 128, 4, 8, 2048, 0, 1},
    {"8 x 8192: C 4", 8, 8192, 2, {4, 4}, 4, 16, K227, 4, R, 128, 4, 32, 2048, 0, 1},
    {"32 x 8192: C 4 (128 SMs)", 32, 8192, 2, {4, 4}, 4, 16, K227, 4, R, 128, 4, 128, 2048, 0, 1},
    {"33 x 8192: C 4, every SM", 33, 8192, 2, {4, 4}, 4, 16, K227, 4, R, 128, 4, 132, 2048, 0, 1},
    {"34 x 8192: C 2 (C 4 would take 136 SMs)", 34, 8192, 2, {4, 4}, 4, 16, K227, 2, R, 256, 4, 68, 4096, 0, 1},
    {"128 x 8192: a block a row fills the SMs", 128, 8192, 2, {4, 4}, 4, 16, K227, 0, R, 512, 4, 128, 0, 0, 1},
    {"8 x 8196: C 4 of 2052 (the last slice shorter)", 8, 8196, 2, {4, 4}, 4, 16, K227, 4, R, 256, 4, 32, 2052, 0, 1},
    {"8 x 8188: too short", 8, 8188, 2, {4, 4}, 4, 16, K227, 0, R, 512, 4, 8, 0, 0, 1},
    {"8 x 4096: too short", 8, 4096, 2, {4, 4}, 4, 16, K227, 0, R, 256, 4, 8, 0, 0, 1},
    {"8 x 8192 before sm_90: a block a row", 8, 8192, 2, {4, 4}, 4, 0, K227, 0, R, 512, 4, 8, 0, 0, 1},
    {"32 x 32768: C 4 in registers, not C 8 in shared memory", 32, 32768, 2, {4, 4}, 4, 16, K227, 4, R, 512, 4, 128,
     8192, 0, 1},
    {"16 x 65536: C 8 in registers, not C 16 in shared memory", 16, 65536, 2, {4, 4}, 4, 16, K227, 8, R, 512, 4, 128,
     8192, 0, 1},
    {"64 x 65536: C 2 slices of 32768 do not fit registers: C 16 in shared memory", 64, 65536, 2, {4, 4}, 4, 16, K227,
     16, S, 128, 4, 1024, 4096, 32768, 1},
    {"1 x 65536, one input: C 16 (as before)", 1, 65536, 1, {4}, 4, 16, K227, 16, R, 256, 4, 16, 4096, 0, 1},
};

/* Case t's plan (s.single: single) against the table, then what the
 * kernel relies on. */
static void check_cluster_case(const cl_case *t, int single) {
  uk_row_shape s = {t->rows, t->n, t->nkept, t->size, 12, t->vec, 132, t->smem, t->cmax, 1, t->levels, single};
  uk_row_grid g;
  memset(&g, 0xff, sizeof g);
  uk__row_size(&s, &g);
  int ok = g.cluster == t->cluster && g.mode == t->mode && g.threads == t->threads && g.vec == t->vec_out &&
           g.blocks == t->blocks && g.kept == t->kept && g.rowbytes == t->rowbytes;
  if (!ok)
    fprintf(stderr, "cluster case '%s'%s: C %d mode %d threads %d vec %d blocks %lld kept %lld rowbytes %lld\n",
            t->label, single ? " (lone)" : "", g.cluster, g.mode, g.threads, g.vec, (long long)g.blocks,
            (long long)g.kept, (long long)g.rowbytes);
  CHECK(ok);
  if (g.cluster == 0) return;
  /* what the kernel relies on: C blocks cover a row, none of them empty,
   * each slice a whole number of vectors in the budget; the grid is
   * whole clusters of one-slice blocks */
  int64_t cmax = t->cmax > 16 ? 16 : t->cmax;
  CHECK(g.cluster >= 2 && g.cluster <= cmax && (g.cluster & (g.cluster - 1)) == 0);
  CHECK(g.kept * g.cluster >= t->n && g.kept * (g.cluster - 1) < t->n && g.kept % g.vec == 0);
  CHECK(g.rowbytes <= t->smem && g.shared == g.rowbytes);
  CHECK(g.blocks % g.cluster == 0 && g.blocks / g.cluster <= t->rows);
  CHECK(g.block == g.threads && g.rows_per_block == 1 && g.threads >= 64 && g.threads <= UK_ROW_MAX_THREADS);
  CHECK(g.staged == 0);
  if (g.mode == R) { /* slices in registers: a cluster a row, at most a block an SM, every slot of a slice */
    CHECK(g.rowbytes == 0 && g.blocks == t->rows * g.cluster);
    /* past a block an SM: blocks of at most 256 threads, all resident */
    CHECK(g.blocks <= 132 || (g.threads <= UK_ROW_RESIDENT_BLOCK &&
                              g.blocks * g.threads <= 132 * (t->levels >= 2 ? 768 : 1024)));
    CHECK((int64_t)g.threads * g.regs * g.vec >= g.kept && g.threads <= UK_ROW_REG_THREADS);
    char v[128]; /* never whole rows: the slots past a block's slice are tested */
    uk__row_variant(&g, t->n, v, sizeof v);
    CHECK(strstr(v, "#define _UK_RW 0\n") != NULL);
    return;
  }
  CHECK(g.regs == 0);
  for (int j = 0; j < t->nkept; j++) CHECK(g.rowbytes >= g.kept * t->size[j]);
}

/* Which of a lone reduction's planned grids run the row kernel
 * (uk__row_lone_light): light register slices over clusters, or a block a
 * row of 4097-8192 elements over 66-264 rows (half to twice the 132 SMs,
 * uk__row_lone_block); row sums of two float32 inputs. */
static void lone_light(void) {
  static const struct {
    int64_t rows, n;
    int cmax, light;
  } t[] = {
      {128, 8192, 16, 1}, /* a block a row, 128 SMs */
      {131, 8192, 16, 1}, {67, 8192, 16, 1}, /* 67 x C 2 > 132: a block a row */
      {66, 8192, 16, 1},                     /* C 2 */
      {8, 8192, 16, 1},                      /* C 4 */
      {66, 8192, 0, 1},                      /* before sm_90: a block a row, half the SMs */
      {65, 8192, 0, 0},                      /* fewer: the split */
      {8, 8192, 0, 0},   {128, 16384, 16, 0}, /* 32 elements a thread */
      {64, 65536, 16, 0},                     /* shared-memory slices */
      {132, 8192, 16, 1}, {264, 8192, 16, 1}, /* up to twice the SMs */
      {265, 8192, 16, 0}, {1024, 8192, 16, 0}, {128, 6144, 16, 1}, {67, 4100, 16, 1},
      {65, 6144, 16, 0},                      /* shorter than 8192: no clusters, and too few */
      {128, 4096, 16, 0}, {128, 2048, 16, 0}, /* 256 and 128 threads a row */
      {128, 8193, 16, 0},                     /* scalars past 16 a thread */
  };
  static const int size[2] = {4, 4};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    uk_row_shape s = {t[i].rows, t[i].n, 2, size, 12, 4, 132, K227, t[i].cmax, 1, 1, 1};
    uk_row_grid g;
    memset(&g, 0xff, sizeof g);
    uk__row_size(&s, &g);
    int got = uk__row_lone_light(&s, &g);
    if (got != t[i].light)
      fprintf(stderr, "lone light %lld x %lld (cmax %d): %d, want %d (C %d mode %d regs %d rows a block %d)\n",
              (long long)t[i].rows, (long long)t[i].n, t[i].cmax, got, t[i].light, g.cluster, g.mode, g.regs,
              g.rows_per_block);
    CHECK(got == t[i].light);
  }
  /* a program's grid that is not a lone reduction's shape still follows the rule */
  uk_row_grid g = {0};
  uk_row_shape s = {128, 8192, 2, size, 12, 4, 132, K227, 16, 1, 1, 1};
  g.mode = UK_ROW_REGS, g.regs = 4, g.vec = 4, g.rows_per_block = 2;
  CHECK(uk__row_lone_light(&s, &g) == 0); /* two rows a block */
  g.rows_per_block = 1, g.regs = 8;
  CHECK(uk__row_lone_light(&s, &g) == 0); /* 32 elements a thread */
  g.regs = 4, g.mode = UK_ROW_SHARED;
  CHECK(uk__row_lone_light(&s, &g) == 0);
  g.mode = UK_ROW_REGS;
  CHECK(uk__row_lone_light(&s, &g) == 1);
  s.sm_count = 0; /* unknown: taken as 1, 128 rows past twice as many */
  CHECK(uk__row_lone_light(&s, &g) == 0);
  /* the bounds of uk__row_lone_block */
  CHECK(uk__row_lone_block(66, 4097, 132) == 1 && uk__row_lone_block(264, 8192, 132) == 1);
  CHECK(uk__row_lone_block(65, 8192, 132) == 0 && uk__row_lone_block(265, 8192, 132) == 0);
  CHECK(uk__row_lone_block(128, 4096, 132) == 0 && uk__row_lone_block(128, 8193, 132) == 0);
  CHECK(uk__row_lone_block(1, 8192, 0) == 1 && uk__row_lone_block(3, 8192, 1) == 0);
}

static void cluster(void) {
  for (size_t c = 0; c < sizeof cl_cases / sizeof cl_cases[0]; c++) check_cluster_case(&cl_cases[c], 0);
  for (size_t c = 0; c < sizeof lone_cases / sizeof lone_cases[0]; c++) check_cluster_case(&lone_cases[c], 1);
  /* the same rows as any program's: a block a row (registers) */
  check_cluster_case(&(cl_case){"8 x 8192, softmax", 8, 8192, 1, {4}, 4, 16, K227, 0, R, 512, 4, 8, 0, 0, 2}, 0);
  /* few long rows: the cluster variant rather than the split plan while a
   * block moves at most 128 KiB */
  CHECK(uk__row_prefer_cluster(200000, 8, 16, 0) == 1); /* 1.6 MB over 16 blocks */
  CHECK(uk__row_prefer_cluster(200000, 8, 8, 0) == 0);
  CHECK(uk__row_prefer_cluster(262144, 8, 16, 0) == 1);
  CHECK(uk__row_prefer_cluster(262145, 8, 16, 0) == 0);
  CHECK(uk__row_prefer_cluster(300000, 8, 32, 0) == 0); /* 16 at most */
  CHECK(uk__row_prefer_cluster(1000, 8, 1, 0) == 0 && uk__row_prefer_cluster(1000, 8, 0, 1) == 0);
  CHECK(uk__row_prefer_cluster(16384, 0, 8, 0) == 1);
  CHECK(uk__row_prefer_cluster(16383, 128, 16, 0) == 0); /* 2 MiB, but too short to split */
  CHECK(uk__row_prefer_cluster(16384, 128, 16, 0) == 1);
  CHECK(uk__row_prefer_cluster(8192, 8, 16, 1) == 1); /* a lone reduction's from 8192 */
  CHECK(uk__row_prefer_cluster(8191, 8, 16, 1) == 0);
  CHECK(uk__row_prefer_cluster(8192, 8, 16, 0) == 0);
}

/* Every plan of a grid of shapes (rows 1 .. 2^24, widths 1 .. 2^20 and odd
 * ones, levels 0-3, lone or not, float16/32/64 vectors or scalars, register
 * bytes 4-24, 1/78/132/144 SMs, no/40 KiB/227 KiB budgets, no/portable/
 * non-portable clusters) against what the kernels rely on: every element
 * a slot (registers) or kept/re-read (shared), whole clusters of non-empty
 * slices, register slices over clusters either at most a block an SM or
 * a resident grid of <= UK_ROW_RESIDENT_BLOCK-thread blocks, 256-thread
 * wide rows only for two-level 7/8-to-all-resident rows. */
static void invariants(void) {
  static const int64_t rows[] = {1, 3, 9, 16, 33, 48, 64, 100, 128, 131, 132, 133, 300, 461, 462, 500, 528, 529, 4096,
                                 1 << 24};
  static const int64_t ns[] = {1, 7, 32, 1000, 4096, 6000, 8192, 8193, 12289, 16384, 32768, 40000, 65536, 65537,
                               200000, 1 << 20};
  static const int sms[] = {1, 78, 132, 144}, cmaxes[] = {0, 8, 16}, regb[] = {4, 8, 12, 24};
  static const int64_t smems[] = {0, K40, K227};
  static const int vecs[][2] = {{1, 4}, {4, 4}, {8, 2}, {2, 8}}; /* vector elements, element bytes */
  long plans = 0, resident = 0, wide256 = 0, bad = 0;
  for (size_t a = 0; a < sizeof rows / sizeof rows[0]; a++)
    for (size_t b = 0; b < sizeof ns / sizeof ns[0]; b++)
      for (int lv = 0; lv <= 3; lv++)
        for (int single = 0; single <= 1; single++)
          for (size_t v = 0; v < sizeof vecs / sizeof vecs[0]; v++)
            for (size_t rb = 0; rb < sizeof regb / sizeof regb[0]; rb++)
              for (size_t m = 0; m < sizeof sms / sizeof sms[0]; m++)
                for (size_t sb = 0; sb < sizeof smems / sizeof smems[0]; sb++)
                  for (size_t cm = 0; cm < sizeof cmaxes / sizeof cmaxes[0]; cm++) {
                    const int size[1] = {vecs[v][1]};
                    const int64_t R = rows[a], n = ns[b], sm = sms[m];
                    uk_row_shape s = {R, n, 1, size, regb[rb], vecs[v][0], sms[m], smems[sb], cmaxes[cm], 1, lv,
                                      single};
                    uk_row_grid g;
                    memset(&g, 0xff, sizeof g);
                    uk__row_size(&s, &g);
                    plans++;
                    int ok = g.threads >= 1 && g.threads <= UK_ROW_MAX_THREADS && (g.threads & (g.threads - 1)) == 0;
                    ok = ok && g.block % g.threads == 0 && g.block <= UK_ROW_MAX_THREADS && g.blocks >= 1 &&
                         g.blocks <= 0x7fffffff && n % g.vec == 0 && g.try_div == uk__row_try_div(&g, sms[m]);
                    const int64_t span = g.cluster >= 2 ? g.kept : n; /* a block's elements of a row */
                    if (g.cluster >= 2) {
                      ok = ok && g.cluster <= 16 && g.cluster <= cmaxes[cm] && (g.cluster & (g.cluster - 1)) == 0 &&
                           g.kept % g.vec == 0 && g.kept * g.cluster >= n && g.kept * (g.cluster - 1) < n &&
                           g.blocks % g.cluster == 0 && g.block == g.threads && g.rows_per_block == 1;
                    }
                    if (g.mode == UK_ROW_REGS) {
                      const int e = g.regs * g.vec;
                      ok = ok && (int64_t)g.threads * e >= span && e <= 2 * UK_ROW_REG_ELEMS && g.shared == 0 &&
                           (g.cluster >= 2 || g.kept == 0);
                      if (g.cluster >= 2 && g.blocks > sm) { /* past a block an SM: a resident grid */
                        resident++;
                        ok = ok && !single && g.threads <= UK_ROW_RESIDENT_BLOCK && g.blocks == R * g.cluster &&
                             g.blocks * g.threads <= sm * (lv >= 2 ? 768 : 1024);
                      }
                      if (g.cluster < 2 && g.threads == UK_ROW_RESIDENT_BLOCK && e > UK_ROW_REG_ELEMS) {
                        wide256++; /* the wide budget at 256 threads: two levels, 7/8 to all resident */
                        ok = ok && !single && lv >= 2 && R * 8 >= sm * 4 * 7 && R <= sm * 4;
                      }
                    } else {
                      ok = ok && g.regs == 0 && g.kept >= 0 && g.kept <= span && g.shared <= smems[sb] &&
                           g.threads >= 64;
                    }
                    if (!ok && bad++ < 5)
                      fprintf(stderr,
                              "invariant: rows %lld n %lld levels %d single %d vec %d x %d B reg %d sm %d smem %lld "
                              "cmax %d: mode %d C %d threads %d regs %d vec %d block %d blocks %lld kept %lld\n",
                              (long long)R, (long long)n, lv, single, vecs[v][0], vecs[v][1], regb[rb], sms[m],
                              (long long)smems[sb], cmaxes[cm], g.mode, g.cluster, g.threads, g.regs, g.vec, g.block,
                              (long long)g.blocks, (long long)g.kept);
                  }
  CHECK(bad == 0);
  /* the grid reaches both rules (not a vacuous sweep) */
  CHECK(plans > 100000 && resident > 0 && wide256 > 0);
  if (resident == 0 || wide256 == 0) fprintf(stderr, "invariants: %ld resident, %ld wide 256\n", resident, wide256);
}

/* A hand-made row plan: parameters (kind, input/output index) over ndim nd. */
static void hand_plan(uk_fuse_plan *p, uk_fuse_type *types, int nd, const int (*prm)[2], int n) {
  memset(p, 0, sizeof *p);
  p->type = types;
  p->row.ndim = nd;
  p->row.nparams = n;
  for (int j = 0; j < n; j++) {
    p->row.param[j].kind = prm[j][0];
    p->row.param[j].index = prm[j][1];
  }
}

static void check_slot(const uk_plan *pl, int j, int kind, int param, int offset) {
  CHECK(j < pl->nslots);
  if (j >= pl->nslots) return;
  if (pl->slots[j].kind != kind || pl->slots[j].param != param || pl->slots[j].offset != offset)
    fprintf(stderr, "slot %d: kind %d param %d offset %d (want %d %d %d)\n", j, pl->slots[j].kind,
            pl->slots[j].param, pl->slots[j].offset, kind, param, offset);
  CHECK(pl->slots[j].kind == kind && pl->slots[j].param == param && pl->slots[j].offset == offset);
}

static void args_layout(void) {
  /* in0 array f32, in1 bool scalar, in2 complex128 scalar, in3 f16 scalar, out0; ndim 2 */
  uk_fuse_type types[4] = {{UK_FLOAT32, 0}, {UK_BOOL, 1}, {UK_COMPLEX128, 0}, {UK_FLOAT16, 0}};
  const int prm[][2] = {{UK_ROW_IN, 0}, {UK_ROW_SCALAR, 1}, {UK_ROW_SCALAR, 2}, {UK_ROW_SCALAR, 3}, {UK_ROW_OUT, 0}};
  uk_fuse_plan p;
  hand_plan(&p, types, 2, prm, 5);
  uk_plan pl = {0, NULL, 0};
  CHECK_OK(uk__row_args(&p, &pl));
  /* ptr 0, st 8..24, bool 24, complex 32..48 (16-aligned), half 48, out ptr 56, st 64..80, geo 80..136 */
  CHECK(pl.nslots == 8);
  check_slot(&pl, 0, UK_ROW_SLOT_PTR, 0, 0);
  check_slot(&pl, 1, UK_ROW_SLOT_STRIDES, 0, 8);
  check_slot(&pl, 2, UK_ROW_SLOT_SCALAR, 1, 24);
  check_slot(&pl, 3, UK_ROW_SLOT_SCALAR, 2, 32);
  check_slot(&pl, 4, UK_ROW_SLOT_SCALAR, 3, 48);
  check_slot(&pl, 5, UK_ROW_SLOT_PTR, 4, 56);
  check_slot(&pl, 6, UK_ROW_SLOT_STRIDES, 4, 64);
  check_slot(&pl, 7, UK_ROW_SLOT_GEO, 0, 80);
  CHECK(pl.slots[2].size == 1 && pl.slots[3].size == 16 && pl.slots[4].size == 2 && pl.slots[7].dim == 2);
  CHECK(pl.bytes == 136);
  uk__plan_free(&pl);

  /* past CUDA's 4096 bytes: 31 arrays of ndim 16 (136 bytes each) */
  uk_fuse_type many[31];
  int mp[31][2];
  for (int j = 0; j < 31; j++) {
    many[j] = (uk_fuse_type){UK_FLOAT32, 0};
    mp[j][0] = j < 30 ? UK_ROW_IN : UK_ROW_OUT;
    mp[j][1] = j < 30 ? j : 0;
  }
  hand_plan(&p, many, 16, (const int (*)[2])mp, 31);
  p.row.name = "big_row";
  pl.slots = NULL;
  CHECK_STATUS(uk__row_args(&p, &pl), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "big_row: the kernel's parameters take 4384 bytes");
  CHECK(pl.slots == NULL);
}

/* The program planned for one array input x of dtype t and ndim dims (the
 * kernels' name "sm"): NULL on failure; *g its parse. */
static uk_fuse_plan *plan_for(const char *outs, const char *program, uk_dtype t, int ndim, uk_fuse_prog **g) {
  *g = NULL;
  CHECK_OK(uk__fuse_parse("x", outs, program, g));
  if (!*g) return NULL;
  uk_fuse_sig sig;
  memset(&sig, 0, sizeof sig);
  sig.nin = 1;
  sig.nout = 1;
  sig.in[0].dtype = t;
  sig.is_array[0] = 1;
  sig.ndim[0] = ndim;
  uk_fuse_plan *p = NULL;
  CHECK_OK(uk__fuse_plan(*g, &sig, "sm", "", &p));
  /* planned, not emitted: the first call the row plan runs emits it
   * (runtime/fusion.c ensure_row); a second emission keeps the first */
  if (p && p->row.ndim) {
    CHECK(p->row.source == NULL && p->row.name == NULL && p->row.nparams == 0 && p->row.ndim == ndim);
    CHECK_OK(uk__fuse_row_emit(*g, p, "sm", ""));
    const char *src = p->row.source;
    CHECK(src != NULL && p->row.nparams > 0);
    CHECK_OK(uk__fuse_row_emit(*g, p, "sm", ""));
    CHECK(p->row.source == src);
  }
  return p;
}

/* A planned softmax: its kept sizes and its argument buffer. */
static void planned(void) {
  uk_fuse_prog *g = NULL;
  uk_fuse_plan *p =
      plan_for("z", "m = max(x, axis=-1, keepdims=True); e = exp(x - m); z = e / sum(e, axis=-1, keepdims=True)",
               UK_FLOAT64, 3, &g);
  if (p) {
    CHECK(p->row.source != NULL && p->row.ndim == 3);
    int size[4];
    CHECK(uk__row_kept_sizes(p, size) == 1 && size[0] == 8);
    uk_plan pl = {0, NULL, 0};
    CHECK_OK(uk__row_args(p, &pl));
    /* x: ptr 0, st 8..32; z: ptr 32, st 40..64; geo 64..128 */
    CHECK(pl.nslots == 5 && pl.bytes == 128);
    check_slot(&pl, 2, UK_ROW_SLOT_PTR, 1, 32);
    check_slot(&pl, 4, UK_ROW_SLOT_GEO, 0, 64);
    uk__plan_free(&pl);
    uk__fuse_plan_free(p);
  }
  uk__fuse_prog_free(g);
}

/* A planned program over rows of n float32 (its one input x), every node's
 * shape (rows, n): which calls the row plan fits (uk__fuse_row_fits) on
 * 132 SMs with clusters of up to cmax blocks. */
static int fits(uk_fuse_prog *g, const uk_fuse_plan *p, int64_t rows, int64_t n, int cmax) {
  int64_t *shapes = calloc((size_t)g->nnodes * UK_MAX_NDIM, sizeof *shapes);
  if (!shapes) return -1;
  for (int id = 0; id < g->nnodes; id++) {
    shapes[(size_t)id * UK_MAX_NDIM] = rows;
    shapes[(size_t)id * UK_MAX_NDIM + 1] = n;
  }
  int r = uk__fuse_row_fits(g, p, shapes, 132, cmax);
  free(shapes);
  return r;
}

/* A lone last-axis reduction (its split plan one kernel) has a row plan
 * for few long rows over clusters only; softmax's two levels and the rows
 * it fits. */
static void lone_and_levels(void) {
  uk_fuse_prog *g = NULL;
  uk_fuse_plan *p = plan_for("t", "t = sum(x * x, axis=-1)", UK_FLOAT32, 2, &g);
  if (p) {
    CHECK(p->nkernels == 1 && p->row.source != NULL && p->row.single == 1 && p->row.levels == 1);
    CHECK(fits(g, p, 2, 32768, 16) == 1);
    CHECK(fits(g, p, 131, 65536, 16) == 1);
    CHECK(fits(g, p, 132, 65536, 16) == 0); /* as many rows as SMs: the split plan */
    CHECK(fits(g, p, 264, 8192, 16) == 1);  /* a block a row (uk__row_lone_block) */
    CHECK(fits(g, p, 265, 8192, 16) == 0);
    CHECK(fits(g, p, 100, 6144, 0) == 1 && fits(g, p, 100, 4096, 16) == 0);
    CHECK(fits(g, p, 2, 32768, 0) == 0);    /* no clusters */
    CHECK(fits(g, p, 2, 8192, 16) == 1);    /* rows of 8192 (UK_ROW_LONE_MIN_N) */
    CHECK(fits(g, p, 2, 8188, 16) == 0);    /* short rows */
    CHECK(fits(g, p, 2, 1 << 22, 16) == 0); /* past 16 blocks' 128 KiB */
    uk__fuse_plan_free(p);
  }
  uk__fuse_prog_free(g);
  p = plan_for("z", "e = exp(x - max(x, axis=-1, keepdims=True)); z = e / sum(e, axis=-1, keepdims=True)",
               UK_FLOAT32, 2, &g);
  if (p) {
    CHECK(p->row.source != NULL && p->row.single == 0 && p->row.levels == 2);
    CHECK(fits(g, p, 512, 32768, 16) == 1 && fits(g, p, 512, 32768, 0) == 1); /* many rows: the row plan */
    uk__fuse_plan_free(p);
  }
  uk__fuse_prog_free(g);
  p = plan_for("z", "z = x - mean(x, axis=-1, keepdims=True)", UK_FLOAT32, 2, &g);
  if (p) {
    CHECK(p->row.single == 0 && p->row.levels == 1);
    uk__fuse_plan_free(p);
  }
  uk__fuse_prog_free(g);
}

int main(void) {
  geometry();
  resident_rows();
  invariants();
  staged();
  prefer();
  cluster();
  lone_light();
  args_layout();
  planned();
  lone_and_levels();
  return ut_finish("test_row_plan");
}
