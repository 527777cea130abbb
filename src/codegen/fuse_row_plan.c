/* The row kernel's launch geometry and argument buffer (fuse_row_plan.h). */
#include "codegen/fuse_row_plan.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/error.h"
#include "codegen/dtype.h"

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Registers mode: the fewest threads a row (a power of two) whose
 * registers hold it, each with up to UK_ROW_REG_ELEMS elements (fewer
 * threads: fewer shuffle steps and barriers a row, the row's fixed work
 * over more elements); rows that 512 threads so do not hold, 32 elements a
 * thread where they are vectors of at most 12 register bytes an element; 0
 * when 512 threads do not hold the row then. wide 1: the wide budget from
 * the start (fewer threads, more elements each). */
static int size_regs_from(const uk_row_shape *s, int v, uk_row_grid *g, int wide) {
  int emax, e, kmax, t = 1, k = 1;
  int64_t nv;
  for (;; wide++) {
    int vv = v;
    emax = s->reg_bytes > 0 ? (UK_ROW_REG_BYTES << wide) / s->reg_bytes : 0;
    if (emax > UK_ROW_REG_ELEMS << wide) emax = UK_ROW_REG_ELEMS << wide;
    /* the wide budget only where 32 fit (12 bytes an element at most: one
     * float32 array in and out): a wider element's 16 (a layer norm with a
     * weight and a float64 output, 20 bytes) spill at 64 registers */
    if (emax < 1 || (wide && emax < UK_ROW_REG_ELEMS << 1)) return 0;
    for (e = 1; e * 2 <= emax;) e *= 2;
    if (e < vv) vv = 1; /* too many arrays for a vector each */
    kmax = e / vv;
    nv = (s->n + vv - 1) / vv;
    if (nv <= (int64_t)UK_ROW_REG_THREADS * kmax && !(wide && vv == 1)) {
      v = vv;
      break;
    }
    /* scalars (odd widths, strided rows): 32 a thread take 64 registers
     * and spill (NVRTC 13, centering); shared memory instead */
    if (wide || v == 1) return 0;
  }
  while ((int64_t)t * kmax < nv) t *= 2;
  while ((int64_t)t * k < nv) k *= 2;
  g->mode = UK_ROW_REGS;
  g->threads = t;
  g->vec = v;
  g->regs = k;
  g->kept = g->rowbytes = 0;
  return 1;
}
static int size_regs(const uk_row_shape *s, int v, uk_row_grid *g) { return size_regs_from(s, v, g, 0); }

/* Shared/global mode: a block a row, about 32 elements a thread, as much of
 * the row kept as smem holds (a whole number of vectors). Not 16: a block
 * of 1024 threads at the kernel's ~55 registers fills an SM's register file
 * alone, one row in flight per SM (rows of 16384 float32 ran 17% slower than
 * with the earlier kernel's two blocks of 512, H200); 512 threads keep two. */
static void size_shared(const uk_row_shape *s, int v, uk_row_grid *g) {
  int t = 64;
  int64_t esize = 0, nc, rowbytes = 0;
  while (t < UK_ROW_MAX_THREADS && (int64_t)t * 32 < s->n) t *= 2;
  for (int j = 0; j < s->nkept; j++) esize += s->kept_size[j];
  nc = esize ? (s->smem - 16 * (int64_t)s->nkept) / esize : 0;
  if (nc > s->n) nc = s->n;
  if (nc < 0) nc = 0;
  nc -= nc % v;
  for (int j = 0; j < s->nkept; j++) rowbytes += (nc * s->kept_size[j] + 15) & ~15LL;
  g->mode = nc == s->n ? UK_ROW_SHARED : UK_ROW_GLOBAL;
  g->threads = t;
  g->vec = v;
  g->regs = 0;
  g->kept = nc;
  g->rowbytes = rowbytes;
}

/* Rows over clusters past a block an SM (rows x C > SMs): the slices in
 * registers too where every block of the grid is resident at once. Slices
 * of up to 32 elements a thread (the wide budget) in blocks of at most 256
 * threads, C doubled from the shared plan's until they fit; the grid within UK_ROW_RESIDENT_THREADS threads an SM (the
 * kernel's __launch_bounds__(1024) allows 64 registers a thread, which such
 * slices take), three quarters of that for two levels or more. Float32 x -
 * mean, layer norms and softmax of 32-128 rows of 32768-65536 ran 2-19%
 * faster than shared-memory slices; two-level rows at every SM's full
 * 1024 threads (64 x 65536, 128 x 32768) up to 7% slower, one level 11-13%
 * faster (H200, docs/PERF.md "Session 38"). *c and *slice in: the shared
 * plan's C and slice; out, with *r, the registers'. */
static int resident_regs(const uk_row_shape *s, int v, int *c, uk_row_shape *slice, uk_row_grid *r) {
  const int64_t sm = s->sm_count > 0 ? s->sm_count : 1, cmax = s->cluster_max > 16 ? 16 : s->cluster_max;
  const int64_t most = sm * (s->levels >= 2 ? UK_ROW_RESIDENT_THREADS * 3 / 4 : UK_ROW_RESIDENT_THREADS);
  for (int k = *c; k <= cmax; k *= 2) {
    uk_row_grid t = *r;
    slice->n = uk__row_slice(s->n, v, k);
    if (!size_regs_from(slice, v, &t, 1) || t.threads > UK_ROW_RESIDENT_BLOCK) continue;
    if (s->rows * k * t.threads > most) return 0;
    *c = k;
    *r = t;
    return 1;
  }
  return 0;
}

/* Few rows over clusters, at most a block an SM (past that, resident_regs
 * decides): each block's slice in
 * its threads' registers where they hold it (size_regs of the slice), not
 * in shared memory: no copy into shared memory and no pass over it, one
 * thread's elements unrolled. Float32 softmax, layer norms and centering
 * of 1-32 rows of 32768-200000 elements ran 8-35% faster (H200). */
static void cluster_regs(const uk_row_shape *s, uk_row_grid *g) {
  int64_t sm = s->sm_count > 0 ? s->sm_count : 1; /* rows x C <= SMs: fewer rows than SMs */
  int c = g->cluster;
  if (c < 2 || s->n < uk__row_few_min_n(s->single)) return;
  /* a lone reduction: fewer blocks a row where shared-memory slices would
   * put rows x C past the SMs, so that registers hold the slices (its
   * shared-memory slices lose to the split plan, fusion.c row_usable):
   * float32 row sums of 32 x 32768 and 16 x 65536 over C 4 and 8 in
   * registers 6.7-6.8 us, 7.1-7.3 in the split plan (H200, docs/PERF.md
   * "Session 21") */
  while (s->single && c > 2 && s->rows * c > sm) c /= 2;
  uk_row_shape slice = *s;
  uk_row_grid r = *g;
  slice.n = uk__row_slice(s->n, g->vec, c); /* g->kept with g's C */
  if (s->rows * c > sm) {
    if (s->single || !resident_regs(s, g->vec, &c, &slice, &r)) return;
  } else if (!size_regs(&slice, g->vec, &r)) {
    return;
  }
  g->cluster = c;
  g->kept = slice.n;
  g->blocks = s->rows * c; /* a cluster a row */
  g->mode = UK_ROW_REGS;
  g->threads = g->block = r.threads;
  g->vec = r.vec;
  g->regs = r.regs;
  g->rowbytes = g->shared = 0;
  g->staged = 0;
}

/* A lone reduction's few rows (fewer than SMs) that a block's registers
 * hold: over clusters all the same where uk__row_cluster splits them and
 * registers hold the slices (UK_ROW_LONE_MIN_N). */
static void lone_clusters(const uk_row_shape *s, uk_row_grid *g) {
  uk_row_grid h = *g;
  if (!uk__row_cluster(s, &h)) return;
  cluster_regs(s, &h);
  if (h.mode == UK_ROW_REGS && h.cluster >= 2) *g = h;
}

void uk__row_size(const uk_row_shape *s, uk_row_grid *g) {
  int v = s->vec > 1 && s->n % s->vec == 0 ? s->vec : 1, sm = s->sm_count > 0 ? s->sm_count : 1;
  g->cluster = 0;
  g->staged = 0;
  if (!size_regs(s, v, g)) size_shared(s, v, g);
  /* two or more levels a block a row of 512 threads, 7/8 to all of four
   * blocks of 256 an SM: 256 threads at the wide budget, every row at once
   * (blocks of 512 take over 40 registers here, two or three an SM: a
   * second round). Float32 softmax of 512-528 rows of 8192 ran 11-12%
   * faster, layer norms 8-9%, of 6000 13-15%; 400 rows up to 3% slower, x -
   * mean (one level, 32 registers: four blocks of 512 an SM) up to 12%
   * slower (H200, docs/PERF.md "Session 38"). Not a lone reduction's: its
   * row kernel takes light register slices. */
  const int64_t resident = (int64_t)sm * (UK_ROW_RESIDENT_THREADS / UK_ROW_RESIDENT_BLOCK);
  if (g->mode == UK_ROW_REGS && g->threads == UK_ROW_REG_THREADS && !s->single && s->levels >= 2 &&
      s->rows * 8 >= resident * 7 && s->rows <= resident) {
    uk_row_grid w = *g;
    if (size_regs_from(s, v, &w, 1) && w.threads == UK_ROW_RESIDENT_BLOCK) *g = w;
  }
  g->staged = s->contig && uk__row_staged(g, s->n);
  int t = g->threads, block = t >= 256 || g->mode != UK_ROW_REGS ? t /* shared: a block a row */
                              : t <= 32 && !g->staged        ? UK_ROW_REG_BLOCK_SMALL
                                                              : 256;
  /* few rows: smaller blocks (down to a warp or a row) put them on more SMs */
  while (block > t && block > 32 && (s->rows + block / t - 1) / (block / t) < 2 * (int64_t)sm) block /= 2;
  g->block = block;
  g->rows_per_block = block / t;
  int64_t blocks = (s->rows + g->rows_per_block - 1) / g->rows_per_block;
  /* registers: a block for each block of rows (no stride: the grid's last
   * round is one short block, not up to one more stride of rows on some
   * SMs); others at most 8 rounds of full SMs */
  int64_t cap = g->mode == UK_ROW_REGS && UK_ROW_REG_GRID_ALL ? 0x7fffffff : (int64_t)sm * (2048 / block) * 8;
  g->blocks = min64(min64(blocks, cap), 0x7fffffff);
  if (g->blocks < 1) g->blocks = 1;
  g->shared = g->rowbytes * g->rows_per_block;
  if (g->mode != UK_ROW_REGS) {
    if (uk__row_cluster(s, g)) cluster_regs(s, g);
  } else if (s->single && s->rows < sm) {
    lone_clusters(s, g);
  }
  g->try_div = uk__row_try_div(g, sm);
}

/* Registers mode without the wide budget: at most UK_ROW_REG_ELEMS
 * elements a thread. */
static int light_regs(const uk_row_grid *g) { return g->mode == UK_ROW_REGS && g->regs * g->vec <= UK_ROW_REG_ELEMS; }

int uk__row_try_div(const uk_row_grid *g, int sm_count) {
  int64_t sm = sm_count > 0 ? sm_count : 1;
  return light_regs(g) && (g->block <= UK_ROW_TRY_DIV_BLOCK || g->blocks <= UK_ROW_TRY_DIV_BLOCKS_PER_SM * sm);
}

int uk__row_lone_light(const uk_row_shape *s, const uk_row_grid *g) {
  return light_regs(g) &&
         (g->cluster >= 2 || (g->rows_per_block == 1 && uk__row_lone_block(s->rows, s->n, s->sm_count)));
}

int uk__row_staged(const uk_row_grid *g, int64_t n) {
  return g->mode == UK_ROW_REGS && g->vec > 1 && (int64_t)g->threads * g->regs * g->vec == n && g->threads < 8 &&
         g->threads * g->regs >= 8 && UK_ROW_STAGED;
}

int uk__row_prefer(int64_t rows, int64_t n, int64_t bytes, int sm_count) {
  if (rows >= sm_count) return 1;
  return n <= ((int64_t)1 << 20) / (bytes > 0 ? bytes : 1);
}

void uk__row_variant(const uk_row_grid *g, int64_t n, char *buf, size_t size) {
  int whole = g->mode == UK_ROW_REGS && g->cluster < 2 && (int64_t)g->threads * g->regs * g->vec == n;
  snprintf(buf, size,
           "#define _UK_RK %d\n#define _UK_RV %d\n#define _UK_RT %d\n#define _UK_RW %d\n"
           "#define _UK_RD %d\n%s",
           g->regs, g->vec, g->threads, whole, g->try_div, g->staged ? "#define _UK_RX 1\n" : "");
}

int uk__row_kept_sizes(const uk_fuse_plan *p, int *size) {
  const uk_fuse_row *r = &p->row;
  int n = 0;
  for (int j = 0; j < r->nparams; j++)
    if (r->param[j].kind == UK_ROW_IN) size[n++] = (int)uk_dtype_size(p->type[r->param[j].index].dtype);
  return n;
}

/* Places a field of `size` bytes on `align` at the end of the buffer. */
static size_t place(size_t *bytes, size_t size, size_t align) {
  size_t at = (*bytes + align - 1) / align * align;
  *bytes = at + size;
  return at;
}

uk_status uk__row_args(const uk_fuse_plan *p, uk_plan *plan) {
  const uk_fuse_row *r = &p->row;
  int nd = r->ndim;
  size_t bytes = 0;
  plan->nslots = 0;
  plan->bytes = 0;
  plan->slots = calloc((size_t)(2 * r->nparams + 1), sizeof *plan->slots);
  if (!plan->slots) return uk__errorf(UK_ERR_NOMEM, "fusion: out of memory");
  for (int j = 0; j < r->nparams; j++) {
    if (r->param[j].kind == UK_ROW_SCALAR) {
      const uk_dtype_info *di = uk__dtype_info(p->type[r->param[j].index].dtype);
      size_t at = place(&bytes, di->size, di->align);
      uk__plan_add(plan, UK_ROW_SLOT_SCALAR, (int)di->size, j, 0, nd, at);
      continue;
    }
    size_t at = place(&bytes, 8, 8);
    uk__plan_add(plan, UK_ROW_SLOT_PTR, 8, j, 0, nd, at);
    at = place(&bytes, 8 * (size_t)nd, 8);
    uk__plan_add(plan, UK_ROW_SLOT_STRIDES, 0, j, 0, nd, at); /* size: 8 * dim */
  }
  size_t at = place(&bytes, 8 * (size_t)nd + 40, 8);
  uk__plan_add(plan, UK_ROW_SLOT_GEO, 0, 0, 0, nd, at); /* size: 8 * dim + 40 */
  plan->bytes = (bytes + 7) & ~(size_t)7;
  if (plan->bytes > UK__PARAM_BYTES_MAX) {
    size_t b = plan->bytes;
    uk__plan_free(plan);
    return uk__errorf(UK_ERR_INVALID, "%s: the kernel's parameters take %zu bytes, more than CUDA's %d "
                      "(UK_MAX_PARAM_BYTES)", r->name ? r->name : "row kernel", b, UK__PARAM_BYTES_MAX);
  }
  return UK_OK;
}
