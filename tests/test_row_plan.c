/* The row kernel's launch geometry (codegen/fuse_row_plan.h) from a table:
 * threads per row, rows per block, blocks, the elements of a row kept in
 * shared memory and their bytes, for row widths from 1 to 2^20, one and
 * several kept inputs, the 96 KiB opt-in and the 40 KiB fallback, and
 * budgets too small to keep anything. Then the argument buffer's layout
 * (each parameter on its alignment) of hand-made and planned programs.
 * Pure arithmetic, no GPU. */
#include "codegen/dtype.h"
#include "codegen/fuse_row_plan.h"
#include "testutil.h"

#define K96 (96 * 1024)
#define K40 (40 * 1024)

typedef struct row_case {
  const char *label;
  int64_t rows, n;
  int max_threads;
  int nkept;
  int size[4];
  int64_t smem;
  /* expected */
  int threads, block, rpb;
  int64_t blocks, kept, rowbytes;
} row_case;

static const row_case cases[] = {
    {"n = 1: a warp a row, 8 rows a block", 1000, 1, 512, 1, {4}, K96, 32, 256, 8, 125, 1, 16},
    {"n = 31", 7, 31, 512, 1, {4}, K96, 32, 256, 8, 1, 31, 128},
    {"n = 32", 9, 32, 512, 1, {4}, K96, 32, 256, 8, 2, 32, 128},
    {"n = 63: 252 bytes round to 256", 16, 63, 512, 1, {4}, K96, 32, 256, 8, 2, 63, 256},
    {"n = 64: still a warp (8 elements a thread)", 8, 64, 512, 1, {4}, K96, 32, 256, 8, 1, 64, 256},
    {"n = 256: the last width a warp takes", 8, 256, 512, 1, {4}, K96, 32, 256, 8, 1, 256, 1024},
    {"n = 257: 64 threads, a block a row", 3, 257, 512, 1, {4}, K96, 64, 64, 1, 3, 257, 1040},
    {"n = 1000, float64", 5, 1000, 512, 1, {8}, K96, 128, 128, 1, 5, 1000, 8000},
    {"n = 65535: 512 threads, the row does not fit", 4, 65535, 512, 1, {4}, K96, 512, 512, 1, 4, 24572, 98288},
    {"n = 65536", 4, 65536, 512, 1, {4}, K96, 512, 512, 1, 4, 24572, 98288},
    {"n = 2^20, 40 KiB fallback", 2, 1 << 20, 512, 1, {4}, K40, 512, 512, 1, 2, 10236, 40944},
    {"n = 2^20, bfloat16", 2, 1 << 20, 512, 1, {2}, K96, 512, 512, 1, 2, 49144, 98288},
    {"n = 16384 float32: fits the opt-in", 10, 16384, 512, 1, {4}, K96, 512, 512, 1, 10, 16384, 65536},
    {"three inputs (f32, f16, f64), n = 1000", 3, 1000, 512, 3, {4, 2, 8}, K96, 128, 128, 1, 3, 1000, 14000},
    {"two inputs, warp rows, 40 KiB", 17, 100, 512, 2, {4, 8}, K40, 32, 256, 8, 3, 100, 1200},
    {"bool row: 33 bytes round to 48", 8, 33, 512, 1, {1}, K96, 32, 256, 8, 1, 33, 48},
    {"a tiny budget keeps 4 of 200", 8, 200, 512, 2, {4, 4}, 512, 32, 256, 8, 1, 4, 32},
    {"a budget under the rounding keeps none", 8, 200, 512, 4, {4, 4, 4, 4}, 256, 32, 256, 8, 1, 0, 0},
    {"no budget at all", 1, 5000, 512, 1, {4}, 0, 512, 512, 1, 1, 0, 0},
    {"2^30 rows: blocks capped at 2^24", (int64_t)1 << 30, 4096, 512, 1, {4}, K96, 512, 512, 1, 1 << 24, 4096,
     16384},
    {"2^30 rows of a warp each", (int64_t)1 << 30, 16, 512, 1, {4}, K96, 32, 256, 8, 1 << 24, 16, 64},
    {"max_threads 128 caps a long row", 3, 65536, 128, 1, {4}, K96, 128, 128, 1, 3, 24572, 98288},
    {"max_threads 32: always a warp", 3, 65536, 32, 1, {4}, K96, 32, 256, 8, 1, 3068, 12272},
    {"complex128, n = 100", 3, 100, 512, 1, {16}, K96, 32, 256, 8, 1, 100, 1600},
};

static void geometry(void) {
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const row_case *t = &cases[c];
    uk_row_grid g;
    memset(&g, 0xff, sizeof g);
    uk__row_grid(t->rows, t->n, t->max_threads, t->size, t->nkept, t->smem, &g);
    int ok = g.threads == t->threads && g.block == t->block && g.rows_per_block == t->rpb && g.blocks == t->blocks &&
             g.kept == t->kept && g.rowbytes == t->rowbytes && g.shared == t->rowbytes * t->rpb;
    if (!ok)
      fprintf(stderr, "case '%s': threads %d block %d rpb %d blocks %lld kept %lld rowbytes %lld shared %lld\n",
              t->label, g.threads, g.block, g.rows_per_block, (long long)g.blocks, (long long)g.kept,
              (long long)g.rowbytes, (long long)g.shared);
    CHECK(ok);
    /* invariants the kernel relies on */
    CHECK(g.shared <= t->smem);
    CHECK(g.block % g.threads == 0 && g.block <= 512 && g.threads >= 32);
    CHECK(g.kept >= 0 && g.kept <= t->n);
    CHECK(g.blocks >= 1 && g.blocks <= (1 << 24));
    for (int j = 0; j < t->nkept; j++) CHECK(g.rowbytes >= g.kept * t->size[j]);
  }
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

/* A planned softmax: its kept sizes and its argument buffer. */
static void planned(void) {
  uk_fuse_prog *g = NULL;
  CHECK_OK(uk__fuse_parse("x", "z",
                          "m = max(x, axis=-1, keepdims=True); e = exp(x - m); z = e / sum(e, axis=-1, keepdims=True)",
                          &g));
  if (!g) return;
  uk_fuse_sig sig;
  memset(&sig, 0, sizeof sig);
  sig.nin = 1;
  sig.nout = 1;
  sig.in[0].dtype = UK_FLOAT64;
  sig.is_array[0] = 1;
  sig.ndim[0] = 3;
  uk_fuse_plan *p = NULL;
  CHECK_OK(uk__fuse_plan(g, &sig, "sm", "", &p));
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

int main(void) {
  geometry();
  args_layout();
  planned();
  return ut_finish("test_row_plan");
}
