/* The row kernel's argument buffer (codegen/fuse_row_plan.h uk__row_args)
 * against the layout NVRTC gives the same kernel: each planned row kernel
 * is compiled for sm_90 (the device's arch on a GPU machine) and its
 * parameters' offsets and sizes, read from the cubin without a GPU, must be
 * the plan's slots, with scalars of every alignment (bool, half, double,
 * complex<double>) between the arrays. Then every variant of its source
 * that a call may pick compiles (uk__row_variant). */
#include "codegen/fuse_row.h"
#include "codegen/fuse_row_plan.h"
#include "testutil.h"

static uk_context *ctx;
static int arch = 90;
static int variants; /* compiled */
static int staged;   /* of them, staged (_UK_RX) */

typedef struct arg_desc {
  uk_dtype dtype;
  int ndim; /* -1: a typed scalar */
} arg_desc;

/* src compiled for arch as a module with p's kernel: its function (in
 * *m, the caller's), or NULL with the log printed. */
static uk_function *compile(const uk_fuse_plan *p, const char *src, const char *what, uk_module **m) {
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.arch = arch;
  mo.name = p->row.name;
  uk_function *fn = NULL;
  *m = NULL;
  uk_status st = uk_module_from_source(ctx, src, &mo, m);
  if (st) fprintf(stderr, "%s: %s\n", what, uk_last_error());
  CHECK(st == UK_OK);
  if (*m) CHECK_OK(uk_module_function(*m, p->row.name, &fn));
  return fn;
}

/* Compiles p's source with the prefix that selects g's variant for rows of
 * n elements; it must not spill (no stack frame: registers past the 64
 * that 1024-thread blocks allow spill). */
static void compile_one(const uk_fuse_plan *p, const char *prog, const uk_row_grid *g, int64_t n) {
  char pre[128];
  uk__row_variant(g, n, pre, sizeof pre);
  size_t len = strlen(pre) + strlen(p->row.source) + 1;
  char *src = malloc(len);
  if (!src) return;
  snprintf(src, len, "%s%s", pre, p->row.source);
  char what[160];
  snprintf(what, sizeof what, "'%s' variant K %d V %d T %d%s", prog, g->regs, g->vec, g->threads,
           g->staged ? " staged" : "");
  uk_module *m = NULL;
  uk_function *fn = compile(p, src, what, &m);
  int local = -1, regs = -1;
  if (fn) {
    CHECK_OK(uk_function_image_attribute(fn, UK_ATTR_LOCAL_SIZE_BYTES, &local));
    CHECK_OK(uk_function_image_attribute(fn, UK_ATTR_NUM_REGS, &regs));
    if (local != 0) fprintf(stderr, "%s: %d registers, %d bytes of stack\n", what, regs, local);
    CHECK(local == 0 && regs > 0 && regs <= 64);
  }
  uk_module_destroy(m);
  free(src);
  variants++;
  staged += g->staged;
}

/* Every variant a call may pick (uk__row_size): registers with 1 .. 16
 * scalars or 1 .. 32 elements in vectors of the widest array's 16 bytes a
 * thread (as many as the program's register bytes an element allow), and
 * shared memory by scalars and by vectors; each compiles with its kernel,
 * with threads a row from 1 to 512 (registers) or 64 to 1024 (shared), and
 * whole rows and not in turn; then the widest vectors' whole narrow rows
 * through a warp's shared slot (uk__row_staged: T < 8 <= T x K). */
static void compile_variants(const uk_fuse_plan *p, const char *prog) {
  int widest = 0, size[UK_FUSE_MAX_INPUTS], i = 0;
  int nk = uk__row_kept_sizes(p, size);
  for (int j = 0; j < nk; j++) widest = size[j] > widest ? size[j] : widest;
  for (int o = 0; o < UK_FUSE_MAX_INPUTS && o < p->row.nparams; o++)
    if (p->row.param[o].kind == UK_ROW_OUT && !p->row.out_per_row[p->row.param[o].index]) {
      int s = (int)uk_dtype_size(p->out_dtype[p->row.param[o].index]);
      widest = s > widest ? s : widest;
    }
  int rb = p->row.reg_bytes > 0 ? p->row.reg_bytes : 1, vecs[2] = {1, widest <= 8 ? 16 / widest : 1};
  uk_row_grid g, st;
  memset(&st, 0, sizeof st);
  for (int vi = 0; vi < 2; vi++)
    for (int k = 0; k <= 2 * UK_ROW_REG_ELEMS; k = k ? 2 * k : 1) {
      /* the wide budget: vectors of at most 12 bytes an element (32 fit) */
      int v = vecs[vi], wide = vi && 2 * UK_ROW_REG_BYTES / rb >= 2 * UK_ROW_REG_ELEMS;
      if ((vi && v == 1) || k * v > (UK_ROW_REG_ELEMS << wide) || k * v * rb > (UK_ROW_REG_BYTES << wide)) continue;
      memset(&g, 0, sizeof g);
      g.mode = k ? UK_ROW_REGS : UK_ROW_SHARED;
      g.regs = k;
      g.vec = v;
      g.threads = k ? 1 << (i % 10) : 64 << (i % 5);
      i++;
      /* whole rows (n = T x K x V) every other variant */
      compile_one(p, prog, &g, (int64_t)g.threads * k * v + (i % 2));
      if (k && vi && k * v <= UK_ROW_REG_ELEMS && k > 1) st = g; /* the most vectors of the plain budget */
    }
  if (st.regs) {
    st.threads = st.regs >= 8 ? 1 : 8 / st.regs;
    st.block = 256;
    st.staged = 1;
    compile_one(p, prog, &st, (int64_t)st.threads * st.regs * st.vec);
  }
}

static void check_program(const char *ins, const char *outs, const char *prog, const arg_desc *a, int nin) {
  uk_fuse_prog *g = NULL;
  CHECK_OK(uk__fuse_parse(ins, outs, prog, &g));
  if (!g) return;
  uk_fuse_sig sig;
  memset(&sig, 0, sizeof sig);
  sig.nin = nin;
  sig.nout = g->nout;
  for (int k = 0; k < nin; k++) {
    sig.in[k].dtype = a[k].dtype;
    sig.is_array[k] = a[k].ndim >= 0;
    sig.ndim[k] = (unsigned char)(a[k].ndim >= 0 ? a[k].ndim : 0);
  }
  uk_fuse_plan *p = NULL;
  CHECK_OK(uk__fuse_plan(g, &sig, "ra", "", &p));
  if (p) CHECK_OK(uk__fuse_row_emit(g, p, "ra", "")); /* a call's first run of the row plan emits it */
  if (!p || !p->row.source) {
    fprintf(stderr, "'%s': no row plan\n", prog);
    CHECK(p && p->row.source);
    uk__fuse_plan_free(p);
    uk__fuse_prog_free(g);
    return;
  }
  uk_plan pl = {0, NULL, 0};
  CHECK_OK(uk__row_args(p, &pl));
  uk_module *m = NULL;
  uk_function *fn = compile(p, p->row.source, prog, &m);
  int n = -1;
  const uk_param_info *ps = NULL;
  if (fn) CHECK_OK(uk_function_params(fn, &n, &ps));
  CHECK(n == pl.nslots);
  int nd = p->row.ndim;
  for (int j = 0; ps && j < n && j < pl.nslots; j++) {
    const uk_slot *s = &pl.slots[j];
    size_t size = s->kind == UK_ROW_SLOT_STRIDES ? 8 * (size_t)nd : s->kind == UK_ROW_SLOT_GEO ? 8 * (size_t)nd + 40
                                                                                                 : s->size;
    if (ps[j].offset != s->offset || ps[j].size != size)
      fprintf(stderr, "'%s' parameter %d: NVRTC offset %zu size %zu, plan %d %zu\n", prog, j, ps[j].offset,
              ps[j].size, s->offset, size);
    CHECK(ps[j].offset == s->offset && ps[j].size == size);
    if (j == n - 1) CHECK(ps[j].offset + ps[j].size == pl.bytes);
  }
  uk_module_destroy(m);
  compile_variants(p, prog);
  uk__plan_free(&pl);
  uk__fuse_plan_free(p);
  uk__fuse_prog_free(g);
}

int main(void) {
  int n = 0;
  uk_device_info info;
  if (uk_device_count(&n) == UK_OK && n > 0 && uk_device_info_get(0, &info) == UK_OK) arch = info.arch;
  uk__error_clear();
  uk_options o;
  memset(&o, 0, sizeof o);
  o.disable_disk_cache = 1;
  CHECK_OK(uk_context_create(&o, &ctx));
  if (!ctx) return ut_finish("test_nvrtc_row_args");
  static const char softmax[] =
      "m = max(x, axis=-1, keepdims=True); e = exp(x - m); z = e / sum(e, axis=-1, keepdims=True)";
  check_program("x", "z", softmax, (arg_desc[]){{UK_FLOAT32, 2}}, 1);
  check_program("x", "z", softmax, (arg_desc[]){{UK_FLOAT16, 4}}, 1);
  /* a layer norm: an array, a broadcast weight, a double scalar between them */
  check_program("x, eps, w", "z",
                "c = x - mean(x, axis=-1, keepdims=True); z = c / sqrt(mean(c * c, axis=-1, keepdims=True) + eps) * w",
                (arg_desc[]){{UK_FLOAT32, 3}, {UK_FLOAT64, -1}, {UK_FLOAT32, 1}}, 3);
  /* bool, half and complex<double> scalars: 1-, 2- and 16-byte alignment */
  check_program("b, x, h, c", "z, s",
                "t = where(b, x * h, x); z = t - sum(t, axis=-1, keepdims=True) * c; s = sum(t, axis=-1)",
                (arg_desc[]){{UK_BOOL, -1}, {UK_COMPLEX128, 2}, {UK_FLOAT16, -1}, {UK_COMPLEX128, -1}}, 4);
  uk_context_destroy(ctx);
  CHECK(variants >= 4 * 6);
  CHECK(staged >= 3); /* complex<double> rows take no vectors of 2 or more */
  return ut_finish("test_nvrtc_row_args");
}
