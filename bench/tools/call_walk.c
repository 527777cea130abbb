/* One hot call each of uk_elementwise_call (probe_ew), uk_fusion_call on
 * the row path (probe_row: softmax) and on the split path (probe_split:
 * x - mean(x, axis=0), two kernels), each inside its own function for
 * callgrind --toggle-collect. Public API only, so the same file builds
 * against an older tree to compare; runs on the stand-in driver
 * (bench/tools/fake_driver.c). Usage: call_walk CACHE_DIR (call_walk.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ukern/ukern.h"

static void check(uk_status s, const char *what) {
  if (s != UK_OK) { fprintf(stderr, "%s: %s\n", what, uk_last_error()); exit(1); }
}
typedef uk_status (*fn_t)(void *);
__attribute__((noinline)) uk_status probe_ew(fn_t f, void *a) { return f(a); }
__attribute__((noinline)) uk_status probe_row(fn_t f, void *a) { return f(a); }
__attribute__((noinline)) uk_status probe_split(fn_t f, void *a) { return f(a); }

typedef struct { uk_elementwise *k; uk_fusion *f; uk_arg in[2]; uk_array out[1]; uk_launch l; } args;
static uk_status ew(void *p) { args *a = p; return uk_elementwise_call(a->k, a->in, 2, a->out, 1, &a->l); }
static uk_status fz(void *p) { args *a = p; return uk_fusion_call(a->f, a->in, 1, a->out, 1, &a->l); }

int main(int argc, char **argv) {
  int ndev = 0;
  check(uk_device_count(&ndev), "count");
  check(uk_device_set_current(0), "set");
  uk_options o; memset(&o, 0, sizeof o);
  o.arch = 90; o.cache_dir = argv[1];
  uk_context *ctx; check(uk_context_create(&o, &ctx), "ctx");
  int64_t n = 1000, sh[2] = {64, 1000};
  uk_array a, b, c, x, z, z2;
  check(uk_array_alloc(ctx, UK_FLOAT32, 1, &n, 0, NULL, &a), "alloc");
  check(uk_array_alloc(ctx, UK_FLOAT32, 1, &n, 0, NULL, &b), "alloc");
  check(uk_array_alloc(ctx, UK_FLOAT32, 1, &n, 0, NULL, &c), "alloc");
  check(uk_array_alloc(ctx, UK_FLOAT32, 2, sh, 0, NULL, &x), "alloc");
  check(uk_array_alloc(ctx, UK_FLOAT32, 2, sh, 0, NULL, &z), "alloc");
  check(uk_array_alloc(ctx, UK_FLOAT32, 2, sh, 0, NULL, &z2), "alloc");
  args e; memset(&e, 0, sizeof e);
  check(uk_elementwise_create(ctx, "T x, T y", "T z", "z = (x - y) * (x - y)", "sqd", NULL, &e.k), "ew");
  e.in[0] = uk_arg_array(&a); e.in[1] = uk_arg_array(&b); e.out[0] = c;
  args r; memset(&r, 0, sizeof r);
  check(uk_fusion_create(ctx, "x", "z",
        "m = max(x, axis=-1, keepdims=True); t = exp(x - m); z = t / sum(t, axis=-1, keepdims=True)",
        "softmax", NULL, &r.f), "fusion row");
  r.in[0] = uk_arg_array(&x); r.out[0] = z;
  args s; memset(&s, 0, sizeof s);
  check(uk_fusion_create(ctx, "x", "z", "z = x - mean(x, axis=0, keepdims=True)", "centre", NULL, &s.f), "fusion split");
  s.in[0] = uk_arg_array(&x); s.out[0] = z2;
  int k = 0;
  check(uk_fusion_kernel_count(r.f, r.in, 1, r.out, 1, &k), "count"); fprintf(stderr, "row kernels %d\n", k);
  check(uk_fusion_kernel_count(s.f, s.in, 1, s.out, 1, &k), "count"); fprintf(stderr, "split kernels %d\n", k);
  /* warm: compile (or load) every kernel */
  check(ew(&e), "ew warm"); check(fz(&r), "row warm"); check(fz(&s), "split warm");
  check(probe_ew(ew, &e), "ew"); check(probe_row(fz, &r), "row"); check(probe_split(fz, &s), "split");
  fprintf(stderr, "ok\n");
  return 0;
}
