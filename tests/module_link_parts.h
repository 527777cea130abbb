/* Parts of the linked module used by test_nvrtc_module_link and
 * test_gpu_link, made at test time with NVRTC: PTX, a relocatable cubin and
 * LTO-IR of small extern "C" device functions; and the static device
 * library built by tests/compiler.cmake when nvcc is there
 * (UK_TEST_DEVLIB). The kernel `combo` computes
 *   y[i] = add_cubin(scale_ptx(x[i])) = x[i] * 3 + 1,
 * `combo_lib` y[i] = mul_lib(x[i]) = x[i] * -0.5, `combo_lto` y[i] = x[i] * 3 + 1. */
#ifndef UK_TESTS_MODULE_LINK_PARTS_H
#define UK_TESTS_MODULE_LINK_PARTS_H

#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Not every test uses every part. */
#define PART_ __attribute__((unused)) static const char *

PART_ combo_src =
    "extern \"C\" __device__ float scale_ptx(float);\n"
    "extern \"C\" __device__ float add_cubin(float);\n"
    "extern \"C\" __global__ void combo(const float* x, float* y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = add_cubin(scale_ptx(x[i]));\n"
    "}\n";
PART_ combo_lib_src =
    "extern \"C\" __device__ float mul_lib(float);\n"
    "extern \"C\" __global__ void combo_lib(const float* x, float* y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = mul_lib(x[i]);\n"
    "}\n";
PART_ combo_lto_src =
    "extern \"C\" __device__ float lto_affine(float);\n"
    "extern \"C\" __global__ void combo_lto(const float* x, float* y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = lto_affine(x[i]);\n"
    "}\n";
PART_ ptx_part_src = "extern \"C\" __device__ float scale_ptx(float v) { return v * 3.0f; }\n";
PART_ cubin_part_src = "extern \"C\" __device__ float add_cubin(float v) { return v + 1.0f; }\n";
PART_ lto_part_src = "extern \"C\" __device__ float lto_affine(float v) { return v * 3.0f + 1.0f; }\n";

/* NVRTC output of `src` for `arch` ("compute_90" gives PTX, "sm_90" a
 * relocatable cubin; lto: LTO-IR). malloc'd; NULL on failure. */
__attribute__((unused)) static char *nvrtc_part(const char *src, const char *arch, int lto, size_t *size) {
  nvrtcProgram p;
  if (nvrtcCreateProgram(&p, src, "part", 0, NULL, NULL) != NVRTC_SUCCESS) return NULL;
  char arch_opt[64];
  snprintf(arch_opt, sizeof arch_opt, "-arch=%s", arch);
  const char *opts[] = {arch_opt, lto ? "-dlto" : "-rdc=true"};
  char *out = NULL;
  size_t n = 0;
  int ptx = strncmp(arch, "compute_", 8) == 0;
  if (nvrtcCompileProgram(p, 2, opts) == NVRTC_SUCCESS &&
      (lto ? nvrtcGetLTOIRSize(p, &n) : ptx ? nvrtcGetPTXSize(p, &n) : nvrtcGetCUBINSize(p, &n)) == NVRTC_SUCCESS &&
      n > 0 && (out = malloc(n))) {
    if ((lto ? nvrtcGetLTOIR(p, out) : ptx ? nvrtcGetPTX(p, out) : nvrtcGetCUBIN(p, out)) != NVRTC_SUCCESS) {
      free(out);
      out = NULL;
    }
  }
  nvrtcDestroyProgram(&p);
  *size = n;
  return out;
}

#ifdef UK_TEST_DEVLIB
PART_ devlib_path = UK_TEST_DEVLIB;
#else
PART_ devlib_path = NULL;
#endif

#endif
