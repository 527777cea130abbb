/* Elementwise planning (codegen/ew_plan.h) from a table: the variant,
 * vector width, index width, broadcast and tile masks chosen for a merged
 * loop, and the launch geometry of the result. Pure arithmetic, no GPU. */
#include "codegen/ew_plan.h"
#include "testutil.h"

#define A16 0x10000ull /* a 16-byte aligned base */

typedef struct ew_case {
  const char *label;
  const char *in, *out, *op; /* definition */
  uk_dtype dtype;            /* of every parameter */
  int ndim;
  int64_t shape[3];
  int64_t strides[8][3];     /* per loop operand (parameters in order) */
  uint64_t data[8];          /* per parameter */
  int block, sm;
  /* expected */
  int variant, vec, index64;
  uint64_t bcast, tile;      /* ROWS: tile is the grid's y */
  int tile_fast;             /* ROWS: the grid's lanes (log2) */
  int64_t blocks;
  int threads;
  const char *loop_prep; /* NULL: none */
} ew_case;

static const ew_case cases[] = {
    {"f32 contiguous, aligned: x4 vectors", "T x, T y", "T z", "z = x + y", UK_FLOAT32, 1, {1000},
     {{4}, {4}, {4}}, {A16, A16, A16}, 0, 132, UK_EW_VEC, 4, 0, 0, 0, 0, 1, 256, NULL},
    {"f32 contiguous, x misaligned: scalar loop", "T x, T y", "T z", "z = x + y", UK_FLOAT32, 1, {1000},
     {{4}, {4}, {4}}, {A16 + 4, A16, A16}, 0, 132, UK_EW_CONTIG, 1, 0, 0, 0, 0, 4, 256, NULL},
    {"f64 contiguous: x2 vectors, block 128", "T x, T y", "T z", "z = x + y", UK_FLOAT64, 1, {1001},
     {{8}, {8}, {8}}, {A16, A16, 0}, 128, 132, UK_EW_VEC, 2, 0, 0, 0, 0, 4, 128, NULL},
    {"broadcast y: hoisted, still vectorised", "T x, T y", "T z", "z = x + y", UK_FLOAT32, 1, {4096},
     {{4}, {0}, {4}}, {A16, A16 + 4, A16}, 0, 132, UK_EW_VEC, 4, 0, 2, 0, 0, 4, 256, NULL},
    {"a tail shorter than a vector", "T x, T y", "T z", "z = x + y", UK_FLOAT32, 1, {5},
     {{4}, {4}, {4}}, {A16, A16, A16}, 0, 132, UK_EW_VEC, 4, 0, 0, 0, 0, 1, 256, NULL},
    {"0-d", "T x, T y", "T z", "z = x + y", UK_FLOAT32, 0, {0},
     {{0}, {0}, {0}}, {A16, A16, A16}, 0, 132, UK_EW_CONTIG, 1, 0, 0, 0, 0, 1, 256, NULL},
    {"2-d, narrow rows (x's rows 40 bytes apart): rows of 4 lanes, no vectors", "T x, T y", "T z", "z = x + y",
     UK_FLOAT32, 2, {100, 3}, {{40, 4}, {12, 4}, {12, 4}}, {A16, A16, A16}, 0, 132, UK_EW_ROWS, 1, 0, 0, 2, 2, 1, 256,
     NULL},
    {"1-d strided: grid capped at 8 waves", "T x, T y", "T z", "z = x + y", UK_FLOAT32, 1, {100000000},
     {{8}, {4}, {4}}, {A16, A16, A16}, 0, 132, UK_EW_STRIDED, 1, 0, 0, 0, 0, 132 * 8 * 8, 256, NULL},
    {"transposed x: tiled, x staged", "T x, T y", "T z", "z = x + y", UK_FLOAT32, 2, {64, 64},
     {{4, 256}, {256, 4}, {256, 4}}, {A16, A16, A16}, 0, 132, UK_EW_TILED, 1, 0, 0, 1, 1, 4, 256, NULL},
    {"transposed x, block 128: rows (no tiles), x by its stride", "T x, T y", "T z", "z = x + y", UK_FLOAT32, 2,
     {64, 64}, {{4, 256}, {256, 4}, {256, 4}}, {A16, A16, A16}, 128, 132, UK_EW_ROWS, 1, 0, 0, 32, 6, 1, 128, NULL},
    {"transposed x, operation returns: strided", "T x, T y", "T z", "if (x > 0) return; z = y", UK_FLOAT32, 2,
     {64, 64}, {{4, 256}, {256, 4}, {256, 4}}, {A16, A16, A16}, 0, 132, UK_EW_STRIDED, 1, 0, 0, 0, 0, 16, 256, NULL},
    {"3e9 elements: 64-bit index", "T x, T y", "T z", "z = x + y", UK_FLOAT32, 1, {3000000000ll},
     {{4}, {4}, {4}}, {A16, A16, A16}, 0, 132, UK_EW_VEC, 4, 1, 0, 0, 0, 2929688, 256, NULL},
    /* The tiles of staged operands share 48 KiB of static shared memory: a
     * complex128 tile is 16 * 32 * 33 = 16896 bytes. Lanes run along the
     * output's fast axis (axis 1) when the votes tie. */
    {"two complex128 transposed against the rest: 33 KiB of tiles, tiled", "T x, T y, T a", "T z",
     "z = x + y + a", UK_COMPLEX128, 2, {64, 64}, {{16, 1024}, {16, 1024}, {1024, 16}, {1024, 16}},
     {A16, A16, A16, A16}, 0, 132, UK_EW_TILED, 1, 0, 0, 3, 1, 4, 256, NULL},
    {"three complex128 transposed against the rest: 49.5 KiB of tiles, rows", "T x, T y, T w, T a, T b", "T z",
     "z = x + y + w + a + b", UK_COMPLEX128, 2, {64, 64},
     {{16, 1024}, {16, 1024}, {16, 1024}, {1024, 16}, {1024, 16}, {1024, 16}}, {A16, A16, A16, A16, A16, A16}, 0,
     132, UK_EW_ROWS, 1, 0, 0, 16, 6, 1, 256, NULL},
    {"three float64 transposed against the rest: 24.75 KiB of tiles, tiled", "T x, T y, T w, T a, T b", "T z",
     "z = x + y + w + a + b", UK_FLOAT64, 2, {64, 64},
     {{8, 512}, {8, 512}, {8, 512}, {512, 8}, {512, 8}, {512, 8}}, {A16, A16, A16, A16, A16, A16}, 0, 132,
     UK_EW_TILED, 1, 0, 0, 7, 1, 4, 256, NULL},
    {"offsets past 2^31: 64-bit rows, x4 vectors", "T x, T y", "T z", "z = x + y", UK_FLOAT32, 2, {2, 1000},
     {{4000000000ll, 4}, {4000, 4}, {4000, 4}}, {A16, A16, A16}, 0, 132, UK_EW_ROWS, 4, 1, 0, 2, 8, 1, 256, NULL},
    /* ROWS (issue 25): broadcast and padded 2-d loops as rows of the inner axis. */
    {"broadcast row 262144x1024: rows, x4 vectors, grid y capped", "T x, T y", "T z", "z = x + y", UK_FLOAT32, 2,
     {262144, 1024}, {{4096, 4}, {0, 4}, {4096, 4}}, {A16, A16, 0}, 0, 132, UK_EW_ROWS, 4, 0, 0, 65535, 8, 1, 256,
     NULL},
    {"broadcast column 262144x1024: y once per row", "T x, T y", "T z", "z = x + y", UK_FLOAT32, 2, {262144, 1024},
     {{4096, 4}, {4, 0}, {4096, 4}}, {A16, A16 + 4, 0}, 0, 132, UK_EW_ROWS, 4, 0, 2, 65535, 8, 1, 256, NULL},
    {"1023x1025 broadcast row: rows 4100 bytes apart, no vectors, 5 chunks a row", "T x, T y", "T z", "z = x + y",
     UK_FLOAT32, 2, {1023, 1025}, {{4100, 4}, {0, 4}, {4100, 4}}, {A16, A16, 0}, 0, 132, UK_EW_ROWS, 1, 0, 0, 1023, 8,
     5, 256, NULL},
    {"x reversed along rows: no vectors", "T x, T y", "T z", "z = x + y", UK_FLOAT32, 2, {64, 1024},
     {{4096, -4}, {0, 4}, {4096, 4}}, {A16 + 4092, A16, A16}, 0, 132, UK_EW_ROWS, 1, 0, 0, 64, 8, 4, 256, NULL},
    {"block 100: 64 lanes, one row a block", "T x, T y", "T z", "z = x + y", UK_FLOAT32, 2, {64, 1000},
     {{4096, 4}, {0, 4}, {4000, 4}}, {A16, A16, A16}, 100, 132, UK_EW_ROWS, 4, 0, 0, 64, 6, 4, 100, NULL},
    {"int8 rows of 2: vectors halved to the row", "T x, T y", "T z", "z = x + y", UK_INT8, 2, {100, 2},
     {{16, 1}, {0, 1}, {16, 1}}, {A16, A16, A16}, 0, 132, UK_EW_ROWS, 2, 0, 0, 1, 0, 1, 256, NULL},
    {"3-d, middle axis broadcast: two outer axes per row", "T x, T y", "T z", "z = x + y", UK_FLOAT32, 3, {8, 5, 64},
     {{1280, 256, 4}, {256, 0, 4}, {1280, 256, 4}}, {A16, A16, A16}, 0, 132, UK_EW_ROWS, 4, 0, 0, 3, 4, 1, 256, NULL},
    {"an output with inner stride 0: strided", "T x, T y", "T z", "z = x + y", UK_FLOAT32, 2, {64, 64},
     {{256, 4}, {256, 4}, {4, 0}}, {A16, A16, A16}, 0, 132, UK_EW_STRIDED, 1, 0, 0, 0, 0, 16, 256, NULL},
    /* CuPy's loop (one element per thread, in order) where per-thread state or _ind.get() is seen */
    {"loop_prep: contiguous, no vectors", "T x, T y", "T z", "z = x + c; c += 1", UK_FLOAT32, 1, {1000},
     {{4}, {4}, {4}}, {A16, A16, A16}, 0, 132, UK_EW_CONTIG, 1, 0, 0, 0, 0, 4, 256, "T c = 0"},
    {"loop_prep: 1-d strided, one thread per element (no wave cap)", "T x, T y", "T z", "z = x + y", UK_FLOAT32, 1,
     {100000000}, {{8}, {4}, {4}}, {A16, A16, A16}, 0, 132, UK_EW_STRIDED, 1, 0, 0, 0, 0, 390625, 256, "int n = 0"},
    {"loop_prep, transposed x: strided, not tiled", "T x, T y", "T z", "z = x + y", UK_FLOAT32, 2, {64, 64},
     {{4, 256}, {256, 4}, {256, 4}}, {A16, A16, A16}, 0, 132, UK_EW_STRIDED, 1, 0, 0, 0, 0, 16, 256, "int n = 0"},
    {"_ind.get() on a contiguous 2-d loop: strided (per-axis index)", "T x, T y", "T z", "z = x + _ind.get()[1]",
     UK_FLOAT32, 2, {64, 64}, {{256, 4}, {256, 4}, {256, 4}}, {A16, A16, A16}, 0, 132, UK_EW_STRIDED, 1, 0, 0, 0, 0,
     16, 256, NULL},
    {"_ind.size() only: vectorised as ever", "T x, T y", "T z", "z = x + _ind.size()", UK_FLOAT32, 1, {1000},
     {{4}, {4}, {4}}, {A16, A16, A16}, 0, 132, UK_EW_VEC, 4, 0, 0, 0, 0, 1, 256, NULL},
    {"_non_const x, broadcast y: contiguous, y hoisted", "_non_const T x, T y", "T z", "x = y; z = x", UK_FLOAT32, 1,
     {4096}, {{4}, {0}, {4}}, {A16, A16, A16}, 0, 132, UK_EW_CONTIG, 1, 0, 2, 0, 0, 16, 256, NULL},
    {"_non_const broadcast y: strided (written through its stride)", "T x, _non_const T y", "T z", "y = x; z = x",
     UK_FLOAT32, 1, {4096}, {{4}, {0}, {4}}, {A16, A16, A16}, 0, 132, UK_EW_STRIDED, 1, 0, 0, 0, 0, 16, 256, NULL},
};

static void run_case(const ew_case *c) {
  uk_paramlist in = {0, NULL}, out = {0, NULL};
  CHECK_OK(uk__params_parse(c->in, "in_params", &in));
  CHECK_OK(uk__params_parse(c->out, "out_params", &out));
  uk_ew_kernel k;
  memset(&k, 0, sizeof k);
  k.name = "k";
  k.operation = c->op;
  k.loop_prep = c->loop_prep;
  k.in = &in;
  k.out = &out;
  uk__ew_scan(&k);
  int np = in.count + out.count;
  uk_loop L;
  memset(&L, 0, sizeof L);
  L.ndim = c->ndim;
  L.nops = np;
  L.size = 1;
  for (int d = 0; d < c->ndim; d++) {
    L.shape[d] = c->shape[d];
    L.size *= c->shape[d];
    for (int p = 0; p < np; p++) L.strides[p][d] = c->strides[p][d];
  }
  uk_ew_key key;
  memset(&key, 0xAB, sizeof key); /* poisoned: every field the plan owns must be set */
  memset(&key.p, 0, sizeof key.p);
  for (int p = 0; p < np; p++) key.p.dtype[p] = (uint8_t)c->dtype;
  key.tile_mask = 0;
  key.tile_fast = 0;
  key.variant = 0xAB;
  uk__ew_choose(&k, &L, c->data, c->block, &key);
  uk_ew_geom g;
  memset(&g, 0xAB, sizeof g);
  uk__ew_grid(&key, &L, c->block, c->sm, &g);
  int64_t blocks = g.blocks;
  int threads = g.threads;
  /* ROWS cases give lanes in tile_fast and grid y in tile (unused by ROWS). */
  int rows_ok = c->variant == UK_EW_ROWS ? g.lanes == c->tile_fast && g.blocks_y == (int64_t)c->tile
                                          : g.lanes == 0 && g.blocks_y == 1;
  int ok = key.variant == c->variant && key.vec == c->vec && key.index64 == c->index64 && key.bcast_mask == c->bcast &&
           key.ndim == c->ndim && blocks == c->blocks && threads == c->threads && rows_ok &&
           (c->variant != UK_EW_TILED || (key.tile_mask == c->tile && key.tile_fast == c->tile_fast));
  CHECK(ok);
  if (!ok)
    fprintf(stderr,
            "%s: got variant %d vec %d index64 %d bcast %llx tile %llx/%d ndim %d blocks %lld threads %d"
            " (lanes %d, grid y %lld)\n"
            "  want variant %d vec %d index64 %d bcast %llx tile %llx/%d ndim %d blocks %lld threads %d\n",
            c->label, key.variant, key.vec, key.index64, (unsigned long long)key.bcast_mask,
            (unsigned long long)key.tile_mask, key.tile_fast, key.ndim, (long long)blocks, threads, g.lanes,
            (long long)g.blocks_y, c->variant, c->vec,
            c->index64, (unsigned long long)c->bcast, (unsigned long long)c->tile, c->tile_fast, c->ndim,
            (long long)c->blocks, c->threads);
  uk__params_free(&in);
  uk__params_free(&out);
}

int main(void) {
  for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++) run_case(&cases[j]);
  return ut_finish("test_ew_plan");
}
