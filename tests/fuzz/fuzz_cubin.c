/* Fuzz entry for the cubin readers (libFuzzer, or replay.c): the input is
 * an image as a user's file or bytes would give it (uk_module_from_file,
 * uk_module_from_image). Runs the container check (elf_check.c) and the
 * readers of runtime/cubin_params.c: kernel list, kernel lookup, parameter
 * layouts, a __device__ variable's size. Findings: crashes, sanitizer reports, and broken invariants:
 *   - every listed kernel is found by uk__cubin_find_kernel;
 *   - a parameter layout has count >= 0, params only when count > 0, and
 *     each parameter inside CUDA's 32764-byte limit;
 *   - a failure is UK_ERR_INVALID or UK_ERR_NOT_FOUND, with a message. */
#include <stdint.h>
#include <string.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "fuzz_util.h"
#include "runtime/cubin_params.h"
#include "runtime/image_check.h"

static void params_of(const uint8_t *data, size_t size, const char *name) {
  int n = -1;
  uk_param_info *p = NULL;
  uk_status st = uk__cubin_params(data, size, name, &n, &p);
  if (st != UK_OK) {
    require((st == UK_ERR_INVALID || st == UK_ERR_NOT_FOUND) && uk_last_error()[0]);
    return;
  }
  require(n >= 0 && (n == 0) == (p == NULL));
  for (int k = 0; k < n; k++) require(p[k].size > 0 && p[k].offset + p[k].size <= 32764);
  free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uk_status st = uk__elf_check(data, size, 0, UK__ELF_CUDA, "fuzz");
  require(st == UK_OK || (st == UK_ERR_INVALID && strstr(uk_last_error(), "fuzz: malformed cubin at byte ")));
  uk_strbuf sb;
  uk__sb_init(&sb);
  uk__cubin_list_kernels(data, size, &sb);
  if (sb.failed) {
    uk__sb_release(&sb);
    return 0;
  }
  /* Names are ", "-separated; a name holding ", " is looked up in pieces. */
  const char *s = uk__sb_str(&sb);
  int looked = 0;
  while (*s && strcmp(s, "none") && looked < 16) {
    size_t len = strcspn(s, ",");
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(len < 255 ? len : 255), s);
    st = uk__cubin_find_kernel(data, size, name);
    if (len < 255 && !strchr(name, ',')) require(st == UK_OK || st == UK_ERR_NOT_FOUND);
    if (st == UK_OK) params_of(data, size, name);
    s += len;
    while (*s == ',' || *s == ' ') s++;
    looked++;
  }
  params_of(data, size, "k");
  uint64_t bytes = 0;
  st = uk__cubin_object_size(data, size, "_uk_partial_size", &bytes);
  require(st == UK_OK || st == UK_ERR_NOT_FOUND || (st == UK_ERR_INVALID && uk_last_error()[0]));
  uk__sb_release(&sb);
  uk__error_clear();
  return 0;
}
