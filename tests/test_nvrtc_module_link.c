/* uk_module_link without a GPU (issue 13 item 2): a module linked from a
 * CUDA source, PTX, a relocatable cubin and a static device library (.a),
 * and one from LTO-IR with -dlto, checked by reading the linked ELF; the
 * link's memory and disk caching; argument checks and errors. */
#include <sys/stat.h>
#include <unistd.h>

#include "cubin_facts.h"
#include "module_link_parts.h"
#include "testutil.h"

static uk_context *new_ctx(const char *dir) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = 90;
  o.cache_dir = dir;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&o, &ctx));
  return ctx;
}

static elf_facts facts(uk_module *m) {
  const void *image = NULL;
  size_t bytes = 0;
  elf_facts f;
  memset(&f, 0, sizeof f);
  if (m && uk_module_image(m, &image, &bytes) == UK_OK) f = inspect(image, bytes);
  return f;
}

static void test_parts(const char *dir) {
  size_t nptx = 0, ncubin = 0;
  char *ptx = nvrtc_part(ptx_part_src, "compute_90", 0, &nptx);
  char *cubin = nvrtc_part(cubin_part_src, "sm_90", 0, &ncubin);
  CHECK(ptx && cubin);
  if (!ptx || !cubin) goto out;
  uk_link_input in[3] = {{UK_LINK_SOURCE, combo_src, 0, NULL, "combo.cu"},
                         {UK_LINK_PTX, ptx, nptx, NULL, "scale.ptx"},
                         {UK_LINK_CUBIN, cubin, ncubin, NULL, "add.cubin"}};
  int n = 3;
  uk_context *ctx = new_ctx(dir);
  uk_module *m = NULL;
  CHECK_OK(uk_module_link(ctx, in, n, NULL, &m));
  elf_facts f = facts(m);
  CHECK(f.ok && f.type == ET_EXEC && f.has_combo && f.undefined == 0);
  uk_module_destroy(m);

  /* The same parts again: a memory hit; a new context: a disk hit. */
  uk_cache_stats s0, s1;
  CHECK_OK(uk_context_cache_stats(ctx, &s0));
  CHECK_OK(uk_module_link(ctx, in, n, NULL, &m));
  CHECK_OK(uk_context_cache_stats(ctx, &s1));
  CHECK(s1.compiles == s0.compiles && s1.memory_hits > s0.memory_hits);
  uk_module_destroy(m);
  uk_context *ctx2 = new_ctx(dir);
  CHECK_OK(uk_module_link(ctx2, in, n, NULL, &m));
  CHECK_OK(uk_context_cache_stats(ctx2, &s1));
  CHECK(s1.compiles == 0 && s1.disk_hits >= 1);
  CHECK(facts(m).has_combo);
  uk_module_destroy(m);
  uk_context_destroy(ctx2);

  /* A changed part is another key: a compile, not the cached image. */
  char *cubin2 = nvrtc_part("extern \"C\" __device__ float add_cubin(float v) { return v + 2.0f; }\n", "sm_90", 0, &ncubin);
  in[2].data = cubin2;
  in[2].bytes = ncubin;
  CHECK_OK(uk_context_cache_stats(ctx, &s0));
  CHECK_OK(uk_module_link(ctx, in, n, NULL, &m));
  CHECK_OK(uk_context_cache_stats(ctx, &s1));
  CHECK(s1.compiles == s0.compiles + 1);
  uk_module_destroy(m);
  free(cubin2);

  /* A static device library from a path, with the source that uses it. */
  if (devlib_path) {
    uk_link_input lib[2] = {{UK_LINK_SOURCE, combo_lib_src, 0, NULL, NULL},
                            {UK_LINK_LIBRARY, NULL, 0, devlib_path, NULL}};
    CHECK_OK(uk_module_link(ctx, lib, 2, NULL, &m));
    f = facts(m);
    CHECK(f.ok && f.type == ET_EXEC && f.has_combo_lib && f.undefined == 0);
    uk_module_destroy(m);
  } else {
    printf("note: no nvcc at build time: the static library part is not tested\n");
  }
  uk_context_destroy(ctx);
out:
  free(ptx);
  free(cubin);
}

static void test_lto(void) {
  size_t nlto = 0;
  char *lto = nvrtc_part(lto_part_src, "sm_90", 1, &nlto);
  CHECK(lto != NULL);
  if (!lto) return;
  uk_context *ctx = new_ctx(NULL);
  uk_link_input in[2] = {{UK_LINK_SOURCE, combo_lto_src, 0, NULL, NULL}, {UK_LINK_LTOIR, lto, nlto, NULL, "affine.ltoir"}};
  const char *dlto[] = {"-dlto"};
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.options = dlto;
  mo.num_options = 1;
  uk_module *m = NULL;
  CHECK_OK(uk_module_link(ctx, in, 2, &mo, &m));
  elf_facts f = facts(m);
  CHECK(f.ok && f.type == ET_EXEC && f.has_combo_lto && f.undefined == 0);
  uk_module_destroy(m);
  /* Without -dlto the source is a cubin; the LTO-IR part still makes it -lto. */
  m = NULL;
  CHECK_OK(uk_module_link(ctx, in, 2, NULL, &m));
  CHECK(facts(m).has_combo_lto);
  uk_module_destroy(m);
  uk_context_destroy(ctx);
  free(lto);
}

static void test_errors(const char *dir) {
  uk_context *ctx = new_ctx(NULL);
  uk_module *m = NULL;
  uk_link_input one = {UK_LINK_SOURCE, combo_src, 0, NULL, "combo.cu"};
  CHECK_STATUS(uk_module_link(NULL, &one, 1, NULL, &m), UK_ERR_INVALID);
  CHECK_STATUS(uk_module_link(ctx, NULL, 1, NULL, &m), UK_ERR_INVALID);
  CHECK_STATUS(uk_module_link(ctx, &one, 0, NULL, &m), UK_ERR_INVALID);
  CHECK_STATUS(uk_module_link(ctx, &one, 1, NULL, NULL), UK_ERR_INVALID);
  uk_link_input bad = one;
  bad.kind = (uk_link_kind)42;
  CHECK_STATUS(uk_module_link(ctx, &bad, 1, NULL, &m), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "inputs[0].kind 42");
  bad = (uk_link_input){UK_LINK_CUBIN, NULL, 0, NULL, NULL};
  CHECK_STATUS(uk_module_link(ctx, &bad, 1, NULL, &m), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "neither data nor path");
  bad = (uk_link_input){UK_LINK_CUBIN, NULL, 0, "/nonexistent/x.cubin", NULL};
  CHECK_STATUS(uk_module_link(ctx, &bad, 1, NULL, &m), UK_ERR_IO);
  /* A FIFO is refused at once, not waited on. */
  char fifo[4096];
  snprintf(fifo, sizeof fifo, "%s/fifo.a", dir);
  CHECK(mkfifo(fifo, 0600) == 0);
  bad = (uk_link_input){UK_LINK_LIBRARY, NULL, 0, fifo, NULL};
  CHECK_STATUS(uk_module_link(ctx, &bad, 1, NULL, &m), UK_ERR_IO);
  CHECK_CONTAINS(uk_last_error(), "not a non-empty regular file");
  unlink(fifo);
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.arch = 91;
  CHECK_STATUS(uk_module_link(ctx, &one, 1, &mo, &m), UK_ERR_INVALID);
  /* The source alone leaves scale_ptx and add_cubin undefined. */
  CHECK_STATUS(uk_module_link(ctx, &one, 1, NULL, &m), UK_ERR_COMPILE);
  CHECK(strncmp(uk_last_error_log(), "nvjitlink options: -arch=sm_90", 30) == 0);
  CHECK_CONTAINS(uk_last_error_log(), "scale_ptx");
  /* A source that does not compile names the part. */
  uk_link_input broken = {UK_LINK_SOURCE, "__global__ void k() { nope; }", 0, NULL, "broken.cu"};
  CHECK_STATUS(uk_module_link(ctx, &broken, 1, NULL, &m), UK_ERR_COMPILE);
  CHECK_CONTAINS(uk_last_error(), "broken.cu");
  CHECK(m == NULL);
  uk_context_destroy(ctx);
}

int main(void) {
  char *dir = ut_temp_dir("module-link");
  test_parts(dir);
  test_lto();
  test_errors(dir);
  free(dir);
  return ut_finish("test_nvrtc_module_link");
}
