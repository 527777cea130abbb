/* The row kernels' cache policy (templates/ukern/fusion_row.cuh): on sm_80
 * and later their 8- and 16-byte vector loads and their cp.async copies
 * carry an L2 evict-last policy; other widths, stores and older archs keep
 * plain accesses. Checked in the PTX NVRTC makes of a kernel that uses each
 * helper, with every embedded header. Runs without a GPU. */
#include <nvrtc.h>

#include "base/embedded.h"
#include "testutil.h"

/* The PTX of src for arch ("-arch=..."), or NULL (the log printed). */
static char *ptx_of(const char *src, const char *arch) {
  const int n = uk__embedded_header_count;
  const char **text = calloc((size_t)n, sizeof *text), **names = calloc((size_t)n, sizeof *names);
  nvrtcProgram p = NULL;
  char *ptx = NULL;
  if (!text || !names) goto out;
  for (int k = 0; k < n; k++) {
    text[k] = uk__embedded_headers[k].data;
    names[k] = uk__embedded_headers[k].name;
  }
  if (nvrtcCreateProgram(&p, src, "row_policy.cu", n, text, names) != NVRTC_SUCCESS) goto out;
  const char *opts[] = {arch, "-std=c++17"};
  nvrtcResult r = nvrtcCompileProgram(p, 2, opts);
  size_t size = 0;
  if (r != NVRTC_SUCCESS) {
    nvrtcGetProgramLogSize(p, &size);
    char *log = calloc(1, size + 1);
    if (log) nvrtcGetProgramLog(p, log);
    fprintf(stderr, "%s: %s\n%s\n", arch, nvrtcGetErrorString(r), log ? log : "");
    free(log);
    goto out;
  }
  nvrtcGetPTXSize(p, &size);
  ptx = calloc(1, size + 1);
  if (ptx) nvrtcGetPTX(p, ptx);
out:
  nvrtcDestroyProgram(&p);
  free(text);
  free(names);
  return ptx;
}

static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *q = hay; (q = strstr(q, needle)) != NULL; q += strlen(needle)) n++;
  return n;
}

/* One kernel a helper and width: T elements, V an access. */
static const char src_of_kernels[] =
    "#include <ukern/fusion_row.cuh>\n"
    "template <int V, class T> __device__ void row_io(const char *in, char *out, long long j) {\n"
    "  T r[V];\n"
    "  _uk_ldv<V>(r, in, j, (long long)sizeof(T));\n"
    "  _uk_stv<V>(out, j, (long long)sizeof(T), r);\n"
    "}\n"
    "extern \"C\" __global__ void ld16(const char *in, char *out, long long j) { row_io<4, float>(in, out, j); }\n"
    "extern \"C\" __global__ void ld8(const char *in, char *out, long long j) { row_io<2, float>(in, out, j); }\n"
    "extern \"C\" __global__ void ld4(const char *in, char *out, long long j) { row_io<4, signed char>(in, out, j); }\n"
    "extern \"C\" __global__ void ld1(const char *in, char *out, long long j) { row_io<1, double>(in, out, j); }\n"
    "extern \"C\" __global__ void keep(const char *in, float *out, long long j) {\n"
    "  extern __shared__ float kept[];\n"
    "  _uk_keep_vec<4>(kept, in, j, 4);\n"
    "  _uk_keep_vec<1>(kept, in, j + 64, 4);\n"
    "  _uk_keep_wait();\n"
    "  out[j] = kept[j] + kept[j + 64];\n"
    "}\n";

/* The PTX text of one entry (from ".entry NAME" to the next ".entry"). */
static char *entry(const char *ptx, const char *name) {
  char head[64];
  snprintf(head, sizeof head, ".entry %s(", name);
  const char *a = strstr(ptx, head);
  if (!a) return NULL;
  const char *b = strstr(a + 1, ".entry ");
  size_t len = b ? (size_t)(b - a) : strlen(a);
  char *e = malloc(len + 1);
  if (e) {
    memcpy(e, a, len);
    e[len] = 0;
  }
  return e;
}

int main(void) {
  char *p90 = ptx_of(src_of_kernels, "-arch=compute_90");
  CHECK(p90 != NULL);
  if (p90) {
    char *e16 = entry(p90, "ld16"), *e8 = entry(p90, "ld8"), *e4 = entry(p90, "ld4"), *e1 = entry(p90, "ld1"),
         *ek = entry(p90, "keep");
    CHECK(e16 && e8 && e4 && e1 && ek);
    if (e16 && e8 && e4 && e1 && ek) {
      CHECK(count(e16, "createpolicy.fractional.L2::evict_last.b64") == 1);
      CHECK(count(e16, "ld.global.L2::cache_hint.v4.u32") == 1);
      CHECK(count(e8, "ld.global.L2::cache_hint.v2.u32") == 1);
      /* 4-byte vectors and scalars: a plain load, no policy */
      CHECK(count(e4, "cache_hint") == 0 && count(e4, "createpolicy") == 0 && count(e4, "ld.global") == 1);
      CHECK(count(e1, "cache_hint") == 0 && count(e1, "ld.global") == 1);
      /* stores stay plain */
      CHECK(count(e16, "st.global.v4") == 1 && count(e16, "st.global.L2") == 0);
      /* both copies of keep: a 16-byte .cg and a 4-byte .ca, each with the policy */
      CHECK(count(ek, "cp.async.cg.shared.global.L2::cache_hint") == 1);
      CHECK(count(ek, "cp.async.ca.shared.global.L2::cache_hint") == 1);
      CHECK(count(ek, "cp.async") == 3); /* the two copies and cp.async.wait_all */
    }
    free(e16);
    free(e8);
    free(e4);
    free(e1);
    free(ek);
  }
  free(p90);
  /* sm_75: no createpolicy or cp.async there; plain accesses */
  char *p75 = ptx_of(src_of_kernels, "-arch=compute_75");
  CHECK(p75 != NULL);
  if (p75) {
    CHECK(count(p75, "createpolicy") == 0);
    CHECK(count(p75, "cache_hint") == 0);
    CHECK(count(p75, "cp.async") == 0);
    CHECK(count(p75, "ld.global.v4") >= 1);
  }
  free(p75);
  return ut_finish("test_nvrtc_row_policy");
}
