/* Kernel handles and parameter layouts without a GPU: compile with NVRTC
 * for an explicit arch, look kernels up in the cubin, read each kernel's
 * parameter offsets and sizes from the image, and compare with the layout
 * C gives the same types. Then truncate and corrupt a real NVRTC cubin:
 * every variant is rejected or read within bounds, never a crash (run under
 * ASan). On a GPU machine the same test compiles for the device's arch, so
 * the lookups go through the driver and the layouts through the image. */
#include <stdalign.h>
#include <stddef.h>

#include "runtime/cubin_params.h"
#include "testutil.h"

static const char *src =
    "struct S12 { int a, b, c; };\n"
    "struct __align__(16) A16 { float x, y, z, w; };\n"
    "struct Big { char b[5000]; };\n"
    "extern \"C\" __global__ void mixed(char c, double d, float *p, S12 s, A16 a, const int *q, short h) {\n"
    "  if (p) p[0] = c + d + s.a + s.c + a.w + q[0] + h;\n"
    "}\n"
    "extern \"C\" __global__ void scalars(bool b, long long x, unsigned short u, float f, int2 v, double2 w,\n"
    "                                     char tail) {\n"
    "  if (b) *(long long *)x = u + f + v.x + w.y + tail;\n"
    "}\n"
    "extern \"C\" __global__ void vecs(char c, float4 v, int3 t, double2 d, double *out) { out[0] = c + v.w + t.z + d.y; }\n"
    "extern \"C\" __global__ void none() {}\n"
    "extern \"C\" __global__ void big(float *p, Big b, char c) { p[0] = b.b[7] + c; }\n"
    "template <typename T> __global__ void tk(T a, int b) { if (b) *(T *)0 = a; }\n";

/* The same types on the host: CUDA lays parameters out as C lays out struct
 * members, so offsetof gives the expected layout. */
typedef struct S12 { int a, b, c; } S12;
typedef struct A16 { alignas(16) float x; float y, z, w; } A16;
typedef struct Big { char b[5000]; } Big;
typedef struct mixed_params { char c; double d; float *p; S12 s; A16 a; const int *q; short h; } mixed_params;
typedef struct int2_ { alignas(8) int x; int y; } int2_;
typedef struct double2_ { alignas(16) double x; double y; } double2_;
typedef struct scalars_params {
  _Bool b; long long x; unsigned short u; float f; int2_ v; double2_ w; char tail;
} scalars_params;
typedef struct big_params { float *p; Big b; char c; } big_params;

#define P(T, m) {offsetof(T, m), sizeof(((T *)0)->m)}

static void check_layout(uk_module *m, const char *name, const uk_param_info *want, int nwant) {
  uk_function *f = NULL;
  CHECK_OK(uk_module_function(m, name, &f));
  if (!f) return;
  CHECK_STREQ(uk_function_name(f), name);
  int n = -1;
  const uk_param_info *ps = (const uk_param_info *)1;
  CHECK_OK(uk_function_params(f, &n, &ps));
  CHECK(n == nwant);
  if (nwant == 0) CHECK(ps == NULL);
  for (int k = 0; k < n && k < nwant; k++) {
    if (ps[k].offset != want[k].offset || ps[k].size != want[k].size)
      fprintf(stderr, "%s parameter %d: offset %zu size %zu, expected %zu %zu\n", name, k, ps[k].offset,
              ps[k].size, want[k].offset, want[k].size);
    CHECK(ps[k].offset == want[k].offset && ps[k].size == want[k].size);
  }
  /* A second call returns the same cached description. */
  int n2 = -1;
  const uk_param_info *ps2 = NULL;
  CHECK_OK(uk_function_params(f, &n2, &ps2));
  CHECK(n2 == n && ps2 == ps);
}

/* The arch to compile for: the device's on a GPU machine, else 90. */
static int target_arch(int *have_gpu) {
  int n = 0;
  uk_device_info info;
  *have_gpu = uk_device_count(&n) == UK_OK && n > 0 && uk_device_info_get(0, &info) == UK_OK;
  return *have_gpu ? info.arch : 90;
}

static void layouts(uk_context *ctx, uk_module *m, int have_gpu) {
  const uk_param_info mixed[] = {P(mixed_params, c), P(mixed_params, d), P(mixed_params, p), P(mixed_params, s),
                                 P(mixed_params, a), P(mixed_params, q), P(mixed_params, h)};
  /* Spelled out too, so that a host ABI surprise cannot hide a wrong read. */
  CHECK(mixed[3].offset == 24 && mixed[3].size == 12 && mixed[4].offset == 48 && mixed[4].size == 16 &&
        mixed[6].offset == 72 && mixed[6].size == 2);
  check_layout(m, "mixed", mixed, 7);
  const uk_param_info scalars[] = {P(scalars_params, b), P(scalars_params, x), P(scalars_params, u),
                                   P(scalars_params, f), P(scalars_params, v), P(scalars_params, w),
                                   P(scalars_params, tail)};
  CHECK(scalars[5].offset == 32 && scalars[6].offset == 48);
  check_layout(m, "scalars", scalars, 7);
  check_layout(m, "none", NULL, 0);
  const uk_param_info vecs[] = {{0, 1}, {16, 16}, {32, 12}, {48, 16}, {64, 8}};
  check_layout(m, "vecs", vecs, 5);
  /* Over 4 KiB of parameters: the cubin uses the second record format. */
  const uk_param_info big[] = {P(big_params, p), P(big_params, b), P(big_params, c)};
  CHECK(big[2].offset == 5008);
  check_layout(m, "big", big, 3);
  /* A template instance through its name expression. */
  const uk_param_info tk[] = {{0, 8}, {8, 4}};
  check_layout(m, "tk<double>", tk, 2);

  uk_function *f = NULL;
  CHECK_STATUS(uk_module_function(m, "nope", &f), UK_ERR_NOT_FOUND);
  CHECK_CONTAINS(uk_last_error(), "no kernel 'nope'");
  /* The cubin's list of kernels (a driver lists them only from 12.4). */
  if (!have_gpu) {
    CHECK_CONTAINS(uk_last_error(), "kernels: ");
    CHECK_CONTAINS(uk_last_error(), ", mixed");
    CHECK_CONTAINS(uk_last_error(), "; name expressions: tk<double>");
  }
  CHECK(f == NULL);
  (void)ctx;
}

static void arguments(uk_module *m) {
  uk_function *f = NULL;
  int n = 5;
  const uk_param_info *ps = (const uk_param_info *)1;
  CHECK_STATUS(uk_function_params(NULL, &n, &ps), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "f is NULL");
  CHECK_OK(uk_module_function(m, "mixed", &f));
  CHECK_STATUS(uk_function_params(f, NULL, &ps), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "count is NULL");
  CHECK_STATUS(uk_function_params(f, &n, NULL), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "params is NULL");
  CHECK(n == 5 && ps == (const uk_param_info *)1);
}

/* Without a GPU: the function exists, takes a signature, and says clearly
 * that launching needs a device. */
static void no_device(uk_module *m) {
  uk_function *f = NULL;
  CHECK_OK(uk_module_function(m, "mixed", &f));
  if (!f) return;
  CHECK_OK(uk_function_set_signature(f, "char c, double d, float *p, long long s0, long long s1, "
                                        "long long a0, long long a1, const int *q, short h"));
  int v = 0;
  CHECK_STATUS(uk_function_attribute(f, UK_ATTR_NUM_REGS, &v), UK_ERR_NO_DEVICE);
  uk_grid_launch g;
  memset(&g, 0, sizeof g);
  CHECK_STATUS(uk_function_launch(f, &g, NULL), UK_ERR_NO_DEVICE);
  /* Lookups stay idempotent: the same handle again. */
  uk_function *f2 = NULL;
  CHECK_OK(uk_module_function(m, "mixed", &f2));
  CHECK(f2 == f);
}

/* A device function of relocatable code is not a kernel. */
static void device_function(uk_context *ctx, int arch) {
  const char *code = "extern \"C\" __device__ __noinline__ float helper(float x) { return x * 2; }\n"
                     "extern \"C\" __global__ void kern(float *p) { p[0] = helper(p[1]); }\n";
  const char *opts[] = {"-rdc=true"};
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.arch = arch;
  mo.options = opts;
  mo.num_options = 1;
  uk_module *m = NULL;
  CHECK_OK(uk_module_from_source(ctx, code, &mo, &m));
  if (!m) return;
  uk_function *f = NULL;
  CHECK_STATUS(uk_module_function(m, "helper", &f), UK_ERR_NOT_FOUND);
  const uk_param_info kern[] = {{0, 8}};
  check_layout(m, "kern", kern, 1);
  uk_module_destroy(m);
}

static void kernel_from_source(uk_context *ctx, int arch) {
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.arch = arch;
  uk_kernel *k = NULL;
  CHECK_OK(uk_kernel_from_source(ctx, "extern \"C\" __global__ void k(int a, double b) { if (a) *(double*)0 = b; }",
                                 "k", &mo, &k));
  uk_function *f = uk_kernel_function(k);
  CHECK(k ? f != NULL : 1);
  int n = 0;
  const uk_param_info *ps = NULL;
  if (f) CHECK_OK(uk_function_params(f, &n, &ps));
  CHECK(n == 2 && ps && ps[0].offset == 0 && ps[0].size == 4 && ps[1].offset == 8 && ps[1].size == 8);
  uk_kernel_destroy(k);
}

/* Every truncation and many corruptions of a real cubin: an error or a
 * layout within bounds, never an out-of-bounds read. */
static void damaged(uk_module *m) {
  const void *image = NULL;
  size_t bytes = 0;
  CHECK_OK(uk_module_image(m, &image, &bytes));
  if (!image) return;
  unsigned char *copy = malloc(bytes);
  CHECK(copy != NULL);
  if (!copy) return;
  int n = 0, nfull = 0;
  uk_param_info *ps = NULL, *full = NULL;
  CHECK_OK(uk__cubin_params(image, bytes, "mixed", &nfull, &full));
  CHECK(nfull == 7 && full);
  if (!full) return;
  int rejected = 0;
  for (size_t cut = 0; cut < bytes; cut++) {
    /* A fresh allocation of exactly `cut` bytes, so ASan sees any over-read. */
    unsigned char *t = malloc(cut ? cut : 1);
    if (!t) break;
    memcpy(t, image, cut);
    ps = NULL;
    uk_status st = uk__cubin_params(t, cut, "mixed", &n, &ps);
    rejected += st != UK_OK;
    /* What a cut image still holds whole is read right, or not at all. */
    if (st == UK_OK) CHECK(n == nfull && memcmp(ps, full, (size_t)n * sizeof *ps) == 0);
    if (cut < 64) CHECK(st == UK_ERR_INVALID);
    free(ps);
    (void)uk__cubin_find_kernel(t, cut, "mixed");
    free(t);
  }
  CHECK(rejected > (int)bytes / 2);
  ut_seed(10);
  int ok = 0;
  for (int it = 0; it < 20000; it++) {
    memcpy(copy, image, bytes);
    int flips = 1 + (int)(ut_rand() % 4);
    for (int k = 0; k < flips; k++) copy[ut_rand() % bytes] = (unsigned char)ut_rand();
    ps = NULL;
    n = 0;
    if (uk__cubin_params(copy, bytes, "mixed", &n, &ps) == UK_OK) {
      ok++;
      for (int k = 0; k < n; k++) CHECK(ps[k].size > 0 && ps[k].offset + ps[k].size <= 32764);
    }
    free(ps);
    (void)uk__cubin_find_kernel(copy, bytes, "mixed");
  }
  CHECK(ok > 0); /* most flips land in code or data the reader never looks at */
  free(copy);
  free(full);
}

int main(void) {
  int have_gpu = 0, arch = target_arch(&have_gpu);
  uk_options o;
  memset(&o, 0, sizeof o);
  o.disable_disk_cache = 1;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&o, &ctx));
  const char *names[] = {"tk<double>"};
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.arch = arch;
  mo.name_expressions = names;
  mo.num_name_expressions = 1;
  uk_module *m = NULL;
  CHECK_OK(uk_module_from_source(ctx, src, &mo, &m));
  if (m) {
    layouts(ctx, m, have_gpu);
    arguments(m);
    if (!have_gpu) no_device(m);
    damaged(m);
  }
  uk_module_destroy(m);
  device_function(ctx, arch);
  kernel_from_source(ctx, arch);
  uk_context_destroy(ctx);
  return ut_finish("test_nvrtc_params");
}
