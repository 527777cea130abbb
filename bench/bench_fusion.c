/* uk_fusion benchmarks (issue 12's rows): each fused program against the
 * ceiling measured in the same run (device-to-device copy rate; CUB rows
 * come from bench_ceilings in the same device call) and against the unfused
 * chain of ukern kernels for the same program (one ElementwiseKernel or
 * ReductionKernel per operation, intermediates in memory), plus host cost
 * per call against raw cuLaunchKernel. CuPy's cupy.fuse figures come from
 * bench/cupy_fuse_bench.py. Usage: bench_fusion [json]. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchutil.h"
#include "runtime/cudadrv.h"

static uk_context *ctx;
static CUstream stream;

static const char fill_src[] =
    "#include <ukern/half.cuh>\n"
    "__device__ float _uk_r(unsigned long long i, unsigned seed) {\n"
    "  unsigned h = (unsigned)(i * 2654435761ull) ^ seed;\n"
    "  h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;\n"
    "  return (float)(h & 0xffff) / 65536.0f;\n"
    "}\n"
    "template <typename T> __global__ void fill(T* p, unsigned long long n, unsigned seed, float lo) {\n"
    "  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;\n"
    "       i += (unsigned long long)gridDim.x * blockDim.x) p[i] = T(lo + _uk_r(i, seed));\n"
    "}\n"
    "extern \"C\" __global__ void tiny(const float* x, const float* y, float* z, long long n) {\n"
    "  if (n > 0 && threadIdx.x == 0) z[0] = 2.0f * x[0] + y[0];\n"
    "}\n";
static const char *fill_names[] = {"fill<float>", "fill<ukern::half>", "fill<int>"};
static uk_module *fills;

static uk_array alloc(uk_dtype t, int ndim, const int64_t *shape) {
  uk_array a;
  bu_check(uk_array_alloc(ctx, t, ndim, shape, 0, stream, &a), "alloc");
  return a;
}

static void fill(uk_array *a, unsigned seed, float lo) {
  int which = a->dtype == UK_FLOAT32 ? 0 : a->dtype == UK_FLOAT16 ? 1 : 2;
  uk_function *f;
  bu_check(uk_module_function(fills, fill_names[which], &f), "fill function");
  unsigned long long n = (unsigned long long)uk_array_size(a);
  void *args[] = {&a->data, &n, &seed, &lo};
  uk_grid_launch g = {{4096, 1, 1}, {256, 1, 1}, 0, stream, 0, {0, 0, 0}};
  bu_check(uk_function_launch(f, &g, args), "fill");
}

/* A program run: one fusion, or an unfused chain of one-operation fusions
 * (each is exactly one ElementwiseKernel or ReductionKernel), with named
 * device buffers: inputs first, then each step's output, allocated by the
 * first run and given afterwards. */
typedef struct step {
  uk_fusion *f;
  int in[4], nin, out;
} step;

typedef struct prog {
  step steps[8];
  int nsteps;
  uk_array buf[16];
  int nbuf;
} prog;

static int buf_index(prog *p, const char *names, char (*known)[16], const char *name) {
  (void)names;
  for (int k = 0; k < p->nbuf; k++)
    if (!strcmp(known[k], name)) return k;
  snprintf(known[p->nbuf], 16, "%s", name);
  memset(&p->buf[p->nbuf], 0, sizeof p->buf[0]);
  return p->nbuf++;
}

/* spec: "ins|out|program;ins|out|program;..." over the buffers named in `inputs`. */
static void prog_init(prog *p, const char *inputs, const uk_array *in, const char *spec) {
  static char known[16][16];
  memset(p, 0, sizeof *p);
  char tmp[1024];
  snprintf(tmp, sizeof tmp, "%s", inputs);
  int k = 0;
  for (char *s = strtok(tmp, ", "); s; s = strtok(NULL, ", ")) {
    buf_index(p, inputs, known, s);
    p->buf[k] = in[k];
    k++;
  }
  char sp[2048];
  snprintf(sp, sizeof sp, "%s", spec);
  char *save = NULL;
  for (char *st = strtok_r(sp, ";", &save); st; st = strtok_r(NULL, ";", &save)) {
    char *ins = st, *bar = strchr(st, '|'), *out = bar + 1, *bar2 = strchr(out, '|'), *text = bar2 + 1;
    *bar = *bar2 = 0;
    step *q = &p->steps[p->nsteps++];
    bu_check(uk_fusion_create(ctx, &(uk_fusion_spec){.inputs = ins, .outputs = out, .program = text, .name = "bench"},
                              &q->f),
             text);
    char ic[256];
    snprintf(ic, sizeof ic, "%s", ins);
    char *s2 = NULL;
    for (char *s = strtok_r(ic, ", ", &s2); s; s = strtok_r(NULL, ", ", &s2)) q->in[q->nin++] = buf_index(p, NULL, known, s);
    q->out = buf_index(p, NULL, known, out);
  }
}

static void prog_run(prog *p) {
  uk_launch l = {.stream = stream};
  for (int k = 0; k < p->nsteps; k++) {
    step *q = &p->steps[k];
    uk_arg a[4];
    for (int j = 0; j < q->nin; j++) a[j] = uk_arg_array(&p->buf[q->in[j]]);
    bu_check(uk_fusion_call(q->f, a, q->nin, &p->buf[q->out], 1, &l), "fusion call");
  }
}

static void prog_free(prog *p, int ninputs) {
  for (int k = 0; k < p->nsteps; k++) uk_fusion_destroy(p->steps[k].f);
  for (int k = ninputs; k < p->nbuf; k++) uk_array_free(ctx, &p->buf[k], stream);
}

static double time_ms(prog *p) {
  CUevent a, b;
  uk__cu.cuEventCreate(&a, CU_EVENT_DEFAULT);
  uk__cu.cuEventCreate(&b, CU_EVENT_DEFAULT);
  for (int k = 0; k < 3; k++) prog_run(p);
  double t[20];
  for (int r = 0; r < 20; r++) {
    uk__cu.cuEventRecord(a, stream);
    prog_run(p);
    uk__cu.cuEventRecord(b, stream);
    uk__cu.cuEventSynchronize(b);
    float ms;
    uk__cu.cuEventElapsedTime(&ms, a, b);
    t[r] = ms;
  }
  uk__cu.cuEventDestroy(a);
  uk__cu.cuEventDestroy(b);
  return bu_median(t, 20);
}

static double copy_gbs; /* device-to-device copy rate (read + write), GB/s */

static void measure_copy(void) {
  int64_t n = (int64_t)1 << 28;
  uk_array a = alloc(UK_FLOAT32, 1, &n), b = alloc(UK_FLOAT32, 1, &n);
  CUevent e0, e1;
  uk__cu.cuEventCreate(&e0, CU_EVENT_DEFAULT);
  uk__cu.cuEventCreate(&e1, CU_EVENT_DEFAULT);
  double t[20];
  for (int r = -3; r < 20; r++) {
    uk__cu.cuEventRecord(e0, stream);
    uk__cu.cuMemcpyDtoDAsync((CUdeviceptr)b.data, (CUdeviceptr)a.data, (size_t)n * 4, stream);
    uk__cu.cuEventRecord(e1, stream);
    uk__cu.cuEventSynchronize(e1);
    float ms;
    uk__cu.cuEventElapsedTime(&ms, e0, e1);
    if (r >= 0) t[r] = ms;
  }
  double ms = bu_median(t, 20);
  copy_gbs = 2.0 * (double)n * 4 / ms / 1e6;
  bu_row("copy rate cuMemcpyDtoD 1 GiB (GB/s)", copy_gbs, 0, "GB/s", NULL, NULL, -1);
  uk__cu.cuEventDestroy(e0);
  uk__cu.cuEventDestroy(e1);
  uk_array_free(ctx, &a, stream);
  uk_array_free(ctx, &b, stream);
}

/* One issue row: the fused program and the unfused chain; bytes = what must
 * move; target = share of the copy rate (or, with ceiling_ms > 0, a time
 * ratio: fused <= target x ceiling). */
static void row(const char *name, const char *inputs, uk_array *in, int nin, const char *fused, const char *chain,
                double bytes, double target) {
  prog p, q;
  prog_init(&p, inputs, in, fused);
  double ms = time_ms(&p);
  double gbs = bytes / ms / 1e6, share = gbs / copy_gbs;
  char label[256], tgt[64];
  snprintf(label, sizeof label, "%s: fused (ms)", name);
  snprintf(tgt, sizeof tgt, ">= %.0f%% of copy rate", target * 100);
  bu_row(label, ms, gbs, "ms", "GB/s", tgt, share >= target);
  printf("  %s: %.4f ms, %.0f GB/s = %.1f%% of copy rate\n", name, ms, gbs, 100 * share);
  int kernels = 0;
  uk_arg a[4];
  for (int k = 0; k < nin; k++) a[k] = uk_arg_array(&in[k]);
  uk_fusion_kernel_count(p.steps[0].f, a, nin, &p.buf[p.steps[0].out], 1, NULL, &kernels);
  printf("  %s: %d kernel(s)\n", name, kernels);
  prog_free(&p, nin);
  if (chain) {
    prog_init(&q, inputs, in, chain);
    double cms = time_ms(&q);
    snprintf(label, sizeof label, "%s: unfused chain of %d ukern kernels (ms)", name, q.nsteps);
    bu_row(label, cms, ms, "ms", "fused ms", NULL, -1);
    prog_free(&q, nin);
  }
}

/* Softmax rows: the time against two reads + one write at the copy rate. */
static void softmax_row(uk_array *x) {
  prog p, q;
  const char *fused = "x|y|m = max(x, axis=1, keepdims=True)\ne = exp(x - m)\ny = e / sum(e, axis=1, keepdims=True)";
  prog_init(&p, "x", x, fused);
  double ms = time_ms(&p);
  double ideal = 3.0 * (double)uk_array_size(x) * 4 / (copy_gbs * 1e6);
  bu_row("softmax rows 16384^2 f32: fused (ms)", ms, ideal, "ms", "2 reads + 1 write at copy rate (ms)",
         "<= 1.15x", ms <= 1.15 * ideal);
  int kernels = 0;
  uk_arg a = uk_arg_array(x);
  uk_fusion_kernel_count(p.steps[0].f, &a, 1, &p.buf[p.steps[0].out], 1, NULL, &kernels);
  /* the row plan moves one read and one write: 2/3 of the ideal above at the copy rate */
  printf("  softmax rows: %d kernel(s), %.2fx of 2 reads + 1 write, %.0f%% of the copy rate for 1 read + 1 write\n",
         kernels, ms / ideal, 100 * (2.0 / 3.0) * ideal / ms);
  prog_free(&p, 1);
  prog_init(&q, "x", x,
            "x|m|m = max(x, axis=1, keepdims=True);x, m|d|d = x - m;d|e|e = exp(d);e|s|s = sum(e, axis=1, "
            "keepdims=True);e, s|y|y = e / s");
  double cms = time_ms(&q);
  bu_row("softmax rows: unfused chain of 5 ukern kernels (ms)", cms, ms, "ms", "fused ms", NULL, -1);
  prog_free(&q, 1);
}

typedef struct fusion_call_args {
  uk_fusion *f;
  uk_arg *in;
  uk_array *out;
  uk_launch *l;
} fusion_call_args;

static void fusion_call(void *p) {
  fusion_call_args *a = p;
  uk_fusion_call(a->f, a->in, 2, a->out, 1, a->l);
}

static void host_cost(void) {
  const int64_t one = 1;
  uk_array a = alloc(UK_FLOAT32, 1, &one), b = alloc(UK_FLOAT32, 1, &one), c = alloc(UK_FLOAT32, 1, &one);
  fill(&a, 7, 0.5f);
  fill(&b, 8, 0.5f);
  uk_fusion *f;
  bu_check(uk_fusion_create(
               ctx,
               &(uk_fusion_spec){.inputs = "x, y", .outputs = "z", .program = "z = 2 * x + y", .name = "tiny_fused"},
               &f),
           "create");
  uk_arg i1[2] = {uk_arg_array(&a), uk_arg_array(&b)};
  uk_launch l = {.stream = stream};
  bu_check(uk_fusion_call(f, i1, 2, &c, 1, &l), "warm-up");
  uk_function *tiny;
  bu_check(uk_module_function(fills, "tiny", &tiny), "tiny");
  const void *img;
  size_t img_bytes;
  bu_check(uk_module_image(fills, &img, &img_bytes), "image");
  CUmodule raw_mod;
  CUfunction raw_fn;
  uk__cu.cuModuleLoadData(&raw_mod, img);
  uk__cu.cuModuleGetFunction(&raw_fn, raw_mod, "tiny");
  long long nn = 1;
  void *raw_args[] = {&a.data, &b.data, &c.data, &nn};
  fusion_call_args fa = {f, i1, &c, &l};
  double r, u;
  bu_host_cost(fusion_call, &fa, raw_fn, raw_args, stream, &u, &r);
  bu_row("fusion host cost per call, 1 element, given output (us)", u, r, "us", "raw cuLaunchKernel",
         "<= raw + 1 us", u <= r + 1.0);
  uk__cu.cuModuleUnload(raw_mod);
  uk_fusion_destroy(f);
  uk_array_free(ctx, &a, stream);
  uk_array_free(ctx, &b, stream);
  uk_array_free(ctx, &c, stream);
}

int main(int argc, char **argv) {
  const char *json = argc > 1 ? argv[1] : NULL;
  int ndev;
  if (uk_device_count(&ndev) != UK_OK) {
    printf("SKIP: %s\n", uk_last_error());
    return 77;
  }
  bu_check(uk_device_set_current(0), "device");
  bu_check(uk__cu_check(uk__cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "stream"), "stream");
  bu_check(uk_context_create(NULL, &ctx), "context");
  uk_module_options mo = {0};
  mo.name_expressions = fill_names;
  mo.num_name_expressions = 3;
  bu_check(uk_module_from_source(ctx, fill_src, &mo, &fills), "fill module");
  measure_copy();

  const int64_t n = (int64_t)1 << 28, sq[2] = {16384, 16384};
  {
    uk_array in[2] = {alloc(UK_FLOAT32, 1, &n), alloc(UK_FLOAT32, 1, &n)};
    fill(&in[0], 1, 0.f);
    fill(&in[1], 2, 0.f);
    row("z = a * x + y, 2^28 f32", "x, y", in, 2, "x, y|z|z = 2.5 * x + y", "x|t|t = 2.5 * x;t, y|z|z = t + y",
        3.0 * (double)n * 4, 0.95);
    row("sum(x * y) full, 2^28 f32 (CUB DeviceReduce::Sum f32 2^28 in bench_ceilings)", "x, y", in, 2,
        "x, y|s|s = sum(x * y)", "x, y|t|t = x * y;t|s|s = sum(t)", 2.0 * (double)n * 4, 0.95);
    uk_array_free(ctx, &in[0], stream);
    uk_array_free(ctx, &in[1], stream);
  }
  {
    uk_array in[2] = {alloc(UK_FLOAT32, 2, sq), alloc(UK_FLOAT32, 2, sq)};
    fill(&in[0], 3, 0.f);
    fill(&in[1], 4, 0.f);
    double b2 = 2.0 * 16384.0 * 16384.0 * 4;
    row("sum((x - y) * (x - y), axis=-1), 16384^2 f32", "x, y", in, 2,
        "x, y|s|s = sum((x - y) * (x - y), axis=-1)", "x, y|d|d = x - y;d|e|e = d * d;e|s|s = sum(e, axis=-1)",
        b2, 0.95);
    row("sum(x * y, axis=0), 16384^2 f32", "x, y", in, 2, "x, y|s|s = sum(x * y, axis=0)",
        "x, y|t|t = x * y;t|s|s = sum(t, axis=0)", b2, 0.95);
    softmax_row(&in[0]);
    uk_array_free(ctx, &in[0], stream);
    uk_array_free(ctx, &in[1], stream);
  }
  {
    uk_array h = alloc(UK_FLOAT16, 1, &n);
    fill(&h, 5, -1.f);
    row("exp(-h) * h + 1, float16 2^28", "h", &h, 1, "h|z|z = exp(-h) * h + 1",
        "h|a|a = -h;a|b|b = exp(a);b, h|c|c = b * h;c|z|z = c + 1", 2.0 * (double)n * 2, 0.95);
    uk_array_free(ctx, &h, stream);
  }
  {
    uk_array in[3] = {alloc(UK_FLOAT32, 1, &n), alloc(UK_FLOAT32, 1, &n), alloc(UK_INT32, 1, &n)};
    fill(&in[0], 6, 0.f);
    fill(&in[1], 7, 0.f);
    fill(&in[2], 8, 1.f);
    row("where(x > 0.5, sqrt(x) * y, log1p(y)) + i32 (float64 out), 2^28", "x, y, i", in, 3,
        "x, y, i|z|z = where(x > 0.5, sqrt(x) * y, log1p(y)) + i",
        "x|c|c = x > 0.5;x|r|r = sqrt(x);r, y|p|p = r * y;y|l|l = log1p(y);c, p, l|w|w = where(c, p, l);w, i|z|z = w + i",
        (double)n * (4 + 4 + 4 + 8), 0.95);
    for (int k = 0; k < 3; k++) uk_array_free(ctx, &in[k], stream);
  }
  host_cost();
  uk__cu.cuStreamSynchronize(stream);
  uk_module_destroy(fills);
  uk_context_destroy(ctx);
  bu_finish("uk_fusion (cupy.fuse) benchmarks", json);
  return 0;
}
