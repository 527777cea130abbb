/* Fuzz entry for the link-input checks (libFuzzer, or replay.c): the
 * first byte picks the nvJitLink input kind (UK__LINK_CUBIN .. LIBRARY),
 * the rest is the input's bytes, as uk_module_link would pass them to
 * nvJitLink after uk__image_check (input_check.c: archives with their
 * members, objects with their fatbins, LTO-IR, PTX). Findings: crashes,
 * sanitizer reports, a status other than UK_OK / UK_ERR_INVALID, or a
 * failure without "malformed ... at byte". */
#include <stdint.h>
#include <string.h>

#include "base/error.h"
#include "fuzz_util.h"
#include "runtime/image_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  int kind = 1 + data[0] % 6;
  uk_status st = uk__image_check(kind, data + 1, size - 1, "fuzz");
  require(st == UK_OK || (st == UK_ERR_INVALID && strstr(uk_last_error(), "malformed") &&
                          strstr(uk_last_error(), " at byte ")));
  uk__error_clear();
  return 0;
}
