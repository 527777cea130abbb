/* The row kernel's cluster variant (_UK_RC; codegen/fuse_row.c, templates/
 * ukern/fusion_row_cluster.cuh) compiles with NVRTC for sm_90 (the
 * device's arch on a GPU machine): softmax, a layer norm (a scalar and a
 * broadcast weight), centering and row sums with a per-row output, over
 * float32, float16 and float64, by scalars and by 16-byte vectors, with
 * slices in shared memory and in registers; its source has the cluster
 * reduction once a level in each, no cluster barrier at the exit, and the
 * per-row outputs written by the cluster's first block only;
 * test_gpu_cluster_reduce's kernel (the cluster reduction alone) compiles
 * too. Needs NVRTC, no GPU. */
#include "cluster_reduce_kernel.h"
#include "codegen/fuse_row.h"
#include "codegen/fuse_row_plan.h"
#include "testutil.h"

static uk_context *ctx;
static int arch = 90, compiled;

static int count(const char *s, const char *what) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, what)); p += strlen(what)) n++;
  return n;
}

/* prog over ins (x first, an array of dtype t and ndim nd; then the
 * layer norm's eps scalar and weight) planned, its cluster variant
 * compiled by scalars and by vectors; levels: its reduction levels. */
static void check(const char *ins, const char *outs, const char *prog, uk_dtype t, int nd, int levels, int per_row,
                  int means, int args) {
  uk_fuse_prog *g = NULL;
  CHECK_OK(uk__fuse_parse(ins, outs, prog, &g));
  if (!g) return;
  uk_fuse_sig sig;
  memset(&sig, 0, sizeof sig);
  sig.nin = strchr(ins, ',') ? 3 : 1;
  sig.nout = g->nout;
  sig.in[0].dtype = t;
  sig.is_array[0] = 1;
  sig.ndim[0] = (unsigned char)nd;
  if (sig.nin == 3) {
    sig.in[1].dtype = UK_FLOAT64; /* eps: a typed scalar */
    sig.in[2].dtype = t;          /* w: a row's weights */
    sig.is_array[2] = 1;
    sig.ndim[2] = 1;
  }
  uk_fuse_plan *p = NULL;
  CHECK_OK(uk__fuse_plan(g, &sig, "cl", "", &p));
  if (p) CHECK_OK(uk__fuse_row_emit(g, p, "cl", "")); /* a call's first run of the row plan emits it */
  const char *src = p ? p->row.source : NULL;
  CHECK(src != NULL);
  if (src) {
    CHECK(count(src, "#elif _UK_RC\n") == 1);
    CHECK(count(src, "#include <ukern/fusion_row_cluster.cuh>") == 1);
    /* once a level in each cluster variant: shared-memory slices, and
     * register slices (the registers variant under _UK_RC) */
    if (count(src, "= _uk_cluster_reduce(") != 2 * levels)
      fprintf(stderr, "'%s': %d cluster reductions, want %d\n", prog, count(src, "= _uk_cluster_reduce("), 2 * levels);
    CHECK(count(src, "= _uk_cluster_reduce(") == 2 * levels);
    CHECK(count(src, "_uk_par, true);") == 2 && count(src, "_uk_par, false);") == 2 * (levels - 1));
    CHECK(count(src, "if (_uk_t == 0 && _uk_cr == 0) {") == per_row);
    CHECK(count(src, "if (_uk_t == 0 && _uk_live && _uk_cr == 0) {") == per_row);
    /* no cluster barrier at the exit (fusion_row_cluster.cuh) */
    CHECK(count(src, "barrier.cluster") == 0 && count(src, "_uk_cl_sync") == 0);
    /* each level's mbarriers set up once, before the row loop */
    CHECK(count(src, "  _uk_cl_init(_uk_cs") == 2 * levels && count(src, "_uk_cl_init_done();") == 2);
    const char *rg = strstr(src, "#if _UK_RK\n"), *rg_end = rg ? strstr(rg, "#elif _UK_RC\n") : NULL;
    CHECK(rg_end != NULL);
    if (rg_end) { /* the register slices' argmax index moved to the row's */
      char *part = strndup(rg, (size_t)(rg_end - rg));
      CHECK(count(part, ", _J + _uk_lo)") == args);
      free(part);
    }
    /* the slice's index and length moved to the row's */
    const char *cl = strstr(src, "#elif _UK_RC\n"), *cl_end = cl ? strstr(cl, "#else\n") : NULL;
    CHECK(cl_end != NULL);
    if (cl_end) {
      char *part = strndup(cl, (size_t)(cl_end - cl));
      CHECK(count(part, "(_uk_N))") == means && count(part, "(_uk_n))") == 0);
      CHECK(count(part, ", _J + _uk_lo)") == args);
      free(part);
    }
    int size = (int)uk_dtype_size(t), vecs[3] = {1, 16 / size, 16 / size};
    for (int vi = 0; vi < 3; vi++) {
      char pre[160];
      uk_row_grid gv; /* as row_kernel.c keys it: shared slices threads 0 (the cluster's T is the launch's) */
      memset(&gv, 0, sizeof gv);
      gv.mode = UK_ROW_SHARED;
      gv.vec = vecs[vi];
      if (vi == 2) /* slices in registers: 256 threads of 4 vectors */
        gv.mode = UK_ROW_REGS, gv.regs = 4, gv.threads = 256;
      uk__row_variant(&gv, 0, pre, 96);
      strcat(pre, "#define _UK_RC 1\n");
      size_t len = strlen(pre) + strlen(src) + 1;
      char *code = malloc(len);
      snprintf(code, len, "%s%s", pre, src);
      uk_module_options mo;
      memset(&mo, 0, sizeof mo);
      mo.arch = arch;
      mo.name = p->row.name;
      uk_module *m = NULL;
      uk_function *fn = NULL;
      uk_status st = uk_module_from_source(ctx, code, &mo, &m);
      if (st) fprintf(stderr, "'%s' %s V %d: %s\n", prog, uk_dtype_name(t), vecs[vi], uk_last_error());
      CHECK(st == UK_OK);
      if (m) CHECK_OK(uk_module_function(m, p->row.name, &fn));
      compiled += fn != NULL;
      uk_module_destroy(m);
      free(code);
    }
  }
  uk__fuse_plan_free(p);
  uk__fuse_prog_free(g);
}

int main(void) {
  int n = 0;
  uk_device_info info;
  if (uk_device_count(&n) == UK_OK && n > 0 && uk_device_info_get(0, &info) == UK_OK && info.arch >= 90)
    arch = info.arch;
  uk__error_clear();
  uk_options o;
  memset(&o, 0, sizeof o);
  o.disable_disk_cache = 1;
  CHECK_OK(uk_context_create(&o, &ctx));
  if (!ctx) return ut_finish("test_nvrtc_row_cluster");
  static const uk_dtype types[] = {UK_FLOAT32, UK_FLOAT16, UK_FLOAT64};
  for (int k = 0; k < 3; k++) {
    uk_dtype t = types[k];
    check("x", "z", "m = max(x, axis=-1, keepdims=True); e = exp(x - m); z = e / sum(e, axis=-1, keepdims=True)", t,
          2, 2, 0, 0, 0);
    check("x, eps, w", "z",
          "c = x - mean(x, axis=-1, keepdims=True); z = c / sqrt(mean(c * c, axis=-1, keepdims=True) + eps) * w", t, 3,
          2, 0, 2, 0);
    check("x", "z", "z = x - mean(x, axis=-1, keepdims=True)", t, 2, 1, 0, 1, 0);
    check("x", "z, s", "z = x / sum(abs(x), axis=-1, keepdims=True); s = sum(x * x, axis=-1)", t, 2, 1, 1, 0, 0);
    /* per-row index and count results: argmax's index and var's count over the whole row */
    check("x", "z, i", "z = x - var(x, axis=-1, keepdims=True); i = argmax(x, axis=-1)", t, 2, 1, 1, 0, 1);
  }
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.arch = arch;
  mo.name = "cluster_reduce";
  uk_module *m = NULL;
  uk_function *fn = NULL;
  CHECK_OK(uk_module_from_source(ctx, cluster_reduce_src, &mo, &m));
  if (m) CHECK_OK(uk_module_function(m, "cluster_reduce", &fn));
  CHECK(fn != NULL);
  uk_module_destroy(m);
  uk_context_destroy(ctx);
  CHECK(compiled == 3 * 5 * 3);
  return ut_finish("test_nvrtc_row_cluster");
}
