/* Multi-arch fatbins (issue 13 item 4) without a GPU: images for sm_80,
 * sm_90, sm_90a and compute_80 PTX written into one fatbin, listed back,
 * and read by NVIDIA's own reader: nvJitLink takes the fatbin as input and
 * links the image for each target (sm_86 from the PTX). */
#include "cubin_facts.h"
#include "module_link_parts.h"
#include "runtime/fatbin.h"
#include "runtime/link.h"
#include "testutil.h"

static const char *src =
    "extern \"C\" __device__ float add_cubin(float v) { return v + 1.0f; }\n"
    "extern \"C\" __global__ void fat_kernel(float* y) { y[threadIdx.x] = add_cubin(y[threadIdx.x]); }\n";

int main(void) {
  static const char *const archs[] = {"sm_80", "sm_90", "sm_90a", "compute_80"};
  uk__fatbin_image im[4];
  char *parts[4] = {0};
  for (int k = 0; k < 4; k++) {
    size_t n = 0;
    parts[k] = nvrtc_part(src, archs[k], 0, &n);
    CHECK(parts[k] != NULL);
    CHECK_OK(uk__arch_parse(archs[k], "test", &im[k].arch));
    im[k].data = parts[k];
    im[k].size = k == 3 && parts[k] ? strlen(parts[k]) : n;
  }
  void *fat = NULL;
  size_t fat_size = 0;
  if (parts[0] && parts[1] && parts[2] && parts[3]) CHECK_OK(uk__fatbin_build(im, 4, &fat, &fat_size));
  CHECK(fat != NULL);
  if (!fat) return ut_finish("test_nvrtc_fatbin");

  /* Listed back: the same targets, kinds and bytes, in order. */
  uk__fatbin_image got[8];
  CHECK(uk__fatbin_list(fat, fat_size, got, 8) == 4);
  for (int k = 0; k < 4; k++) {
    CHECK(got[k].arch.num == im[k].arch.num && got[k].arch.flags == im[k].arch.flags);
    CHECK(got[k].size >= im[k].size && memcmp(got[k].data, im[k].data, im[k].size) == 0);
  }
  CHECK(uk__fatbin_list(fat, fat_size - 1, got, 8) == -1); /* truncated */
  CHECK(uk__fatbin_list(parts[1], 64, got, 8) == -1);     /* a cubin is no fatbin */

  /* nvJitLink picks each target's image from it (or JIT-compiles the PTX). */
  uk__toolkit tk;
  uk__nvrtc_toolkit(&tk);
  static const char *const targets[] = {"sm_80", "sm_90", "sm_90a", "sm_86"};
  for (int k = 0; k < 4; k++) {
    uk__link_job job;
    memset(&job, 0, sizeof job);
    CHECK_OK(uk__arch_parse(targets[k], "test", &job.arch));
    uk__link_input in = {UK__LINK_FATBIN, fat, fat_size, "multi.fatbin"};
    job.inputs = &in;
    job.num_inputs = 1;
    char *image = NULL, *info = NULL;
    size_t n = 0;
    uk_status st = uk__link_run(&tk, &job, &image, &n, &info);
    CHECK(st == UK_OK);
    if (st != UK_OK) fprintf(stderr, "%s: %s\n%s\n", targets[k], uk_last_error(), uk_last_error_log());
    elf_facts f = image ? inspect(image, n) : (elf_facts){0};
    CHECK(f.ok && f.type == ET_EXEC && f.undefined == 0);
    CHECK(image && memmem(image, n, "fat_kernel", 10) != NULL);
    free(image);
    free(info);
  }
  /* No image and no PTX for sm_75 (compute_80 cannot go down). */
  uk__link_job job;
  memset(&job, 0, sizeof job);
  job.arch = (uk__arch){75, 0};
  uk__link_input in = {UK__LINK_FATBIN, fat, fat_size, "multi.fatbin"};
  job.inputs = &in;
  job.num_inputs = 1;
  char *image = NULL, *info = NULL;
  size_t n = 0;
  CHECK_STATUS(uk__link_run(&tk, &job, &image, &n, &info), UK_ERR_COMPILE);

  /* Refused inputs. */
  uk__fatbin_image bad = {{100, UK__ARCH_F}, parts[1], 64};
  void *o = NULL;
  size_t os = 0;
  CHECK_STATUS(uk__fatbin_build(&bad, 1, &o, &os), UK_ERR_INVALID);
  bad = (uk__fatbin_image){{90, 0}, "not an elf at all, but long enough to be read as one if unchecked...", 64};
  CHECK_STATUS(uk__fatbin_build(&bad, 1, &o, &os), UK_ERR_INVALID);
  free(fat);
  for (int k = 0; k < 4; k++) free(parts[k]);
  return ut_finish("test_nvrtc_fatbin");
}
