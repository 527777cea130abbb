/* CUDA graphs of the plans with more state than one launch (issue 25):
 * a reduction that takes the split-column strategy (a column kernel split
 * in grid y, whose partials and counters are its workspace) and an
 * elementwise call that takes the rows plan (grid y over row groups), each
 * captured on a non-blocking stream, instantiated and replayed four times
 * with new input contents and outputs poisoned before every replay,
 * against a double-precision host reference.
 *
 * The graph itself is read back (node types, kernel names, grid y) to know
 * that the strategy under test was the one captured, and to check the
 * workspace rule of ukern.h: under capture a reduction's split scratch is
 * the graph's own (allocated, zeroed and freed inside it), never the
 * kernel object's per-stream scratch. So direct calls of the same kernel
 * object run between and beside the replays, on the capture stream (after
 * the graph, growing that stream's scratch: its old buffers are freed in
 * stream order) and on a second stream at the same time as the graph
 * (scratch of its own): every result stays right. */
#include <math.h>

#include "graph_api.h"
#include "red_gpu_util.h"

#define REPLAYS 4

static CUstream stream, stream2;
static ut_graph_api G;
static __typeof__(&cuGraphGetNodes) get_nodes;
static __typeof__(&cuGraphNodeGetType) node_type;
static __typeof__(&cuGraphKernelNodeGetParams) kernel_params;
static __typeof__(&cuFuncGetName) func_name;

/* What a captured graph holds. */
typedef struct census {
  int kernels, allocs, frees, memsets, others;
  char names[4][96];    /* the first kernels' names */
  unsigned grid_y[4];   /* and their grid's y extent */
} census;

static void take_census(CUgraph g, census *c) {
  memset(c, 0, sizeof *c);
  size_t n = 0;
  CHECK(get_nodes(g, NULL, &n) == CUDA_SUCCESS);
  CUgraphNode *nodes = calloc(n ? n : 1, sizeof *nodes);
  CHECK(get_nodes(g, nodes, &n) == CUDA_SUCCESS);
  for (size_t j = 0; j < n; j++) {
    CUgraphNodeType t;
    if (node_type(nodes[j], &t) != CUDA_SUCCESS) {
      c->others++;
      continue;
    }
    if (t == CU_GRAPH_NODE_TYPE_KERNEL) {
      CUDA_KERNEL_NODE_PARAMS p;
      memset(&p, 0, sizeof p);
      const char *name = NULL;
      if (c->kernels < 4 && kernel_params(nodes[j], &p) == CUDA_SUCCESS && p.func &&
          func_name(&name, p.func) == CUDA_SUCCESS && name) {
        snprintf(c->names[c->kernels], sizeof c->names[0], "%s", name);
        c->grid_y[c->kernels] = p.gridDimY;
      }
      c->kernels++;
    } else if (t == CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
      c->allocs++;
    } else if (t == CU_GRAPH_NODE_TYPE_MEM_FREE) {
      c->frees++;
    } else if (t == CU_GRAPH_NODE_TYPE_MEMSET) {
      c->memsets++;
    } else {
      c->others++;
    }
  }
  free(nodes);
}

static int ends_with(const char *s, const char *tail) {
  size_t a = strlen(s), b = strlen(tail);
  return a >= b && strcmp(s + a - b, tail) == 0;
}

/* Writes the logical values v into d's view (the rest of its buffer 0xA5). */
static void upload(darr *d, const double *v) {
  unsigned char *h = malloc(d->bytes);
  memset(h, 0xA5, d->bytes);
  int64_t n = size_of(d->a.ndim, d->a.shape);
  uint64_t skew = d->a.data - d->buf.data;
  for (int64_t k = 0; k < n; k++) put_val(d->a.dtype, h + skew + offset_of(&d->a, k), v ? v[k] : NAN);
  CHECK_OK(uk_memcpy_htod(d->buf.data, h, d->bytes));
  free(h);
}

static void sync_all(void) {
  CHECK(uk__cu.cuStreamSynchronize(stream) == CUDA_SUCCESS);
  CHECK(uk__cu.cuStreamSynchronize(stream2) == CUDA_SUCCESS);
  CHECK_OK(uk_device_synchronize());
}

/* ------------------------------------------------------------------------ */
/* Split columns                                                             */
/* ------------------------------------------------------------------------ */

/* A column sum of a (rows, cols) float32 array over axis 0 into a given
 * output: its device arrays and the reference of its current input. */
typedef struct colsum {
  int64_t shape[2];
  darr x, y;
  double *want, *absum;
} colsum;

static void colsum_make(colsum *c, int64_t rows, int64_t cols) {
  memset(c, 0, sizeof c[0]);
  c->shape[0] = rows, c->shape[1] = cols;
  c->x = make(UK_FLOAT32, 2, c->shape, NULL, 0, 0, NULL);
  c->y = make(UK_FLOAT32, 1, &c->shape[1], NULL, 0, 0, NULL);
  c->want = malloc(sizeof(double) * (size_t)cols);
  c->absum = malloc(sizeof(double) * (size_t)cols);
}

/* New random input (float32 values, so the reference sums what the GPU
 * reads) and a NaN-poisoned output; the device is idle when this runs. */
static void colsum_refill(colsum *c) {
  int64_t n = c->shape[0] * c->shape[1], no;
  double *v = randv(n, -1, 1);
  for (int64_t k = 0; k < n; k++) v[k] = (float)v[k];
  upload(&c->x, v);
  upload(&c->y, NULL);
  const uint8_t red[UK_MAX_NDIM] = {1, 0};
  ref(R_SUM, 2, c->shape, red, v, c->want, c->absum, &no);
  free(v);
}

static void colsum_call(uk_reduction *k, colsum *c, CUstream s) {
  int axis = 0;
  uk_launch l = {.stream = s, .axes = &axis, .num_axes = 1};
  uk_arg in = uk_arg_array(&c->x.a);
  CHECK_OK(uk_reduction_call(k, &in, 1, &c->y.a, 1, &l));
}

static void colsum_check(const char *label, colsum *c) {
  double *got = fetch(&c->y.a, c->y.buf.data, c->y.bytes);
  close_all(label, got, c->want, c->absum, c->shape[1], 2e-5);
  free(got);
}

static void colsum_drop(colsum *c) {
  drop(&c->x);
  drop(&c->y);
  free(c->want);
  free(c->absum);
}

/* Captures one call of k on c; the graph when its kernel is the split
 * column kernel (else NULL, with what it was in `seen`). */
static CUgraph capture_colsum(uk_reduction *k, colsum *c, census *cs, char *seen, size_t seen_size) {
  CUgraph g = NULL;
  CHECK(G.begin_capture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) == CUDA_SUCCESS);
  colsum_call(k, c, stream);
  CUresult r = G.end_capture(stream, &g);
  CHECK(r == CUDA_SUCCESS && g);
  if (!g) return NULL;
  take_census(g, cs);
  size_t used = strlen(seen);
  snprintf(seen + used, seen_size - used, "  (%lld, %lld): %d kernel(s), first %s grid y %u, %d alloc(s)\n",
           (long long)c->shape[0], (long long)c->shape[1], cs->kernels, cs->names[0], cs->grid_y[0], cs->allocs);
  if (cs->kernels == 1 && ends_with(cs->names[0], "_cols") && cs->grid_y[0] > 1) return g;
  G.destroy(g);
  return NULL;
}

static void split_columns(void) {
  uk_reduction *k = mk("T x", "T y", "x", "a + b", "y = a", "0", "graph_colsum", NULL, NULL);
  if (!k) return;
  /* Tall, narrow columns: the planner splits them over grid y to fill the
   * device (which shape splits depends on the SM count and the cost model:
   * the first that does is the one tested; none is a failure). */
  static const int64_t shapes[][2] = {{100003, 36}, {100003, 37}, {20001, 256}, {400009, 64}, {1000003, 16}};
  char seen[1024] = "";
  colsum c;
  census cs;
  CUgraph g = NULL;
  for (size_t j = 0; j < sizeof shapes / sizeof shapes[0] && !g; j++) {
    colsum_make(&c, shapes[j][0], shapes[j][1]);
    colsum_refill(&c);
    /* Warm (compiled, loaded) and the capture stream's own scratch made,
     * so the capture meets a kept scratch it must not use. */
    colsum_call(k, &c, stream);
    sync_all();
    colsum_check("direct call before the capture", &c);
    g = capture_colsum(k, &c, &cs, seen, sizeof seen);
    if (!g) colsum_drop(&c);
  }
  if (!g) {
    fprintf(stderr, "no shape took the split-column strategy under capture:\n%s", seen);
    CHECK(g != NULL);
    uk_reduction_destroy(k);
    return;
  }
  printf("split columns captured:\n%s", seen);
  /* The workspace is the graph's: counters and partials allocated, the
   * counters zeroed, both freed, all inside the graph. */
  CHECK(cs.allocs >= 1);
  CHECK(cs.frees == cs.allocs);
  CHECK(cs.memsets >= 1);
  if (cs.allocs < 1 || cs.frees != cs.allocs || cs.memsets < 1)
    fprintf(stderr, "split columns graph: %d allocs, %d frees, %d memsets, %d other nodes\n", cs.allocs, cs.frees,
            cs.memsets, cs.others);
  CUgraphExec exec = NULL;
  CHECK(G.instantiate(&exec, g, 0) == CUDA_SUCCESS && exec);
  /* Direct calls beside the replays: on stream2 at the same time as the
   * graph, and on the capture stream after it, each rep wider (the
   * stream's kept scratch grows, its old buffers freed in stream order). */
  colsum beside, after;
  colsum_make(&beside, c.shape[0], c.shape[1] + 3);
  for (int rep = 0; exec && rep < REPLAYS; rep++) {
    colsum_make(&after, c.shape[0] + 2 * rep + 1, c.shape[1] * (rep + 2));
    colsum_refill(&c);
    colsum_refill(&beside);
    colsum_refill(&after);
    sync_all(); /* uploads and poison done before the streams read them */
    CHECK(G.launch(exec, stream) == CUDA_SUCCESS);
    if (rep == REPLAYS - 1) CHECK(G.launch(exec, stream) == CUDA_SUCCESS); /* twice in a row: same results */
    colsum_call(k, &beside, stream2);
    colsum_call(k, &after, stream);
    sync_all();
    char label[96];
    snprintf(label, sizeof label, "replay %d: the graph's output", rep + 1);
    colsum_check(label, &c);
    snprintf(label, sizeof label, "replay %d: a direct call on another stream meanwhile", rep + 1);
    colsum_check(label, &beside);
    snprintf(label, sizeof label, "replay %d: a direct call after the graph, wider", rep + 1);
    colsum_check(label, &after);
    colsum_drop(&after);
  }
  if (exec) G.exec_destroy(exec);
  G.destroy(g);
  colsum_drop(&beside);
  colsum_drop(&c);
  uk_reduction_destroy(k);
}

/* ------------------------------------------------------------------------ */
/* Elementwise rows                                                          */
/* ------------------------------------------------------------------------ */

/* z = x * y + x over (rows, cols) float32 with y a broadcast row (cols,) or
 * column (rows, 1); z given, C-contiguous. */
static void ew_rows(uk_elementwise *k, int64_t rows, int64_t cols, int column) {
  int64_t xs[2] = {rows, cols}, ys[2] = {column ? rows : cols, 1};
  int yn = column ? 2 : 1;
  darr x = make(UK_FLOAT32, 2, xs, NULL, 0, 0, NULL), y = make(UK_FLOAT32, yn, ys, NULL, 0, 0, NULL),
       z = make(UK_FLOAT32, 2, xs, NULL, 0, 0, NULL);
  char label[96];
  snprintf(label, sizeof label, "rows plan, %lldx%lld + %s", (long long)rows, (long long)cols,
           column ? "column" : "row");
  uk_arg in[2] = {uk_arg_array(&x.a), uk_arg_array(&y.a)};
  uk_launch l = {.stream = stream};
  char *src = NULL;
  CHECK_OK(uk_elementwise_source(k, in, 2, &z.a, 1, &l, &src));
  CHECK_CONTAINS(src, "template elementwise_rows"); /* the rows plan (or its vector form) */
  uk_free(src);

  int64_t n = rows * cols, ny = column ? rows : cols;
  double *hx = malloc(sizeof(double) * (size_t)n), *hy = malloc(sizeof(double) * (size_t)ny);
  CUgraph g = NULL;
  CUgraphExec exec = NULL;
  CHECK(G.begin_capture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL) == CUDA_SUCCESS);
  CHECK_OK(uk_elementwise_call(k, in, 2, &z.a, 1, &l)); /* cold: the compile happens inside the capture */
  CHECK(G.end_capture(stream, &g) == CUDA_SUCCESS && g);
  if (g) {
    census cs;
    take_census(g, &cs);
    printf("%s: %d kernel(s), %s, grid y %u\n", label, cs.kernels, cs.names[0], cs.grid_y[0]);
    CHECK(cs.kernels == 1 && cs.allocs == 0 && cs.frees == 0);
    CHECK(cs.grid_y[0] > 1); /* row groups over grid y: the rows plan */
    CHECK(G.instantiate(&exec, g, 0) == CUDA_SUCCESS && exec);
  }
  for (int rep = 0; exec && rep < REPLAYS; rep++) {
    for (int64_t j = 0; j < n; j++) hx[j] = (float)ut_uniform(-4, 4);
    for (int64_t j = 0; j < ny; j++) hy[j] = (float)ut_uniform(-4, 4);
    upload(&x, hx);
    upload(&y, hy);
    upload(&z, NULL);
    CHECK_OK(uk_device_synchronize());
    CHECK(G.launch(exec, stream) == CUDA_SUCCESS);
    CHECK(uk__cu.cuStreamSynchronize(stream) == CUDA_SUCCESS);
    double *got = fetch(&z.a, z.buf.data, z.bytes);
    int64_t bad = 0, first = -1;
    for (int64_t r = 0; r < rows; r++)
      for (int64_t col = 0; col < cols; col++) {
        int64_t j = r * cols + col;
        double a = hx[j], b = hy[column ? r : col], want = a * b + a;
        if (!(fabs(got[j] - want) <= 1e-6 * (fabs(a * b) + fabs(a)) + 1e-30)) {
          if (first < 0) first = j;
          bad++;
        }
      }
    if (bad)
      fprintf(stderr, "%s, replay %d: %lld of %lld wrong (first: %lld, got %.9g)\n", label, rep + 1, (long long)bad,
              (long long)n, (long long)first, got[first]);
    CHECK(bad == 0);
    free(got);
  }
  if (exec) G.exec_destroy(exec);
  if (g) G.destroy(g);
  free(hx), free(hy);
  drop(&x), drop(&y), drop(&z);
}

int main(void) {
  ut_require_gpu();
  ut_seed(25);
  CHECK_OK(uk_context_create(NULL, &ctx));
  CHECK_OK(uk_device_set_current(0));
  CHECK_OK(ut_graph_api_load(&G));
  CHECK_OK(uk__cu_resolve((void **)&get_nodes, "cuGraphGetNodes"));
  CHECK_OK(uk__cu_resolve((void **)&node_type, "cuGraphNodeGetType"));
  CHECK_OK(uk__cu_resolve((void **)&kernel_params, "cuGraphKernelNodeGetParams"));
  CHECK_OK(uk__cu_resolve((void **)&func_name, "cuFuncGetName"));
  CHECK(uk__cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  CHECK(uk__cu.cuStreamCreate(&stream2, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  if (ut_failures) return ut_finish("test_gpu_graph_plans");

  split_columns();

  uk_elementwise *ew = NULL;
  CHECK_OK(uk_elementwise_create(
      ctx, &(uk_elementwise_spec){.in_params = "T x, T y", .out_params = "T z", .operation = "z = x * y + x",
                                  .name = "graph_rows"},
      &ew));
  if (ew) {
    ew_rows(ew, 1023, 1025, 0); /* scalar rows (odd width) */
    ew_rows(ew, 1024, 1024, 1); /* a broadcast column */
    ew_rows(ew, 1024, 1024, 0); /* vectorised rows */
    uk_elementwise_destroy(ew);
  }

  uk__cu.cuStreamDestroy(stream);
  uk__cu.cuStreamDestroy(stream2);
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_graph_plans");
}
