/* Fuzz entry for the fatbin readers (libFuzzer, or replay.c): the input is
 * a fatbin as a user's file, uk_module_from_image or a link input gives it.
 * Runs the container check (fatbin_check.c, with the cubin check of each
 * entry) and the lister of runtime/fatbin.c. Findings: crashes, sanitizer
 * reports, and broken invariants:
 *   - a failure is UK_ERR_INVALID with a message naming the byte;
 *   - every listed image lies inside the input;
 *   - a fatbin the check accepts lists at least one image. */
#include <stdint.h>
#include <string.h>

#include "base/error.h"
#include "fuzz_util.h"
#include "runtime/fatbin.h"
#include "runtime/image_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uk_status st = uk__fatbin_check(data, size, 0, "fuzz");
  require(st == UK_OK || (st == UK_ERR_INVALID && strstr(uk_last_error(), " at byte ")));
  uk__fatbin_image im[16];
  int n = uk__fatbin_list(data, size, im, 16);
  require(n >= -1 && n <= 16);
  if (st == UK_OK) require(n >= 1);
  for (int k = 0; k < n; k++) {
    const uint8_t *p = im[k].data;
    require(p >= data && p <= data + size && im[k].size <= (size_t)(data + size - p));
  }
  uk__error_clear();
  return 0;
}
