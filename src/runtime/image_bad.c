/* The one message of every image check (image_check.h): what, which
 * kind of image, the byte offset and why. Below the ELF, fatbin and
 * link-input checks, which all report through it. */
#include <stdarg.h>
#include <stdio.h>

#include "base/error.h"
#include "runtime/image_check.h"

uk_status uk__image_bad(const char *what, const char *kind, uint64_t at, const char *fmt, ...) {
  char detail[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  return uk__errorf(UK_ERR_INVALID, "%s: malformed %s at byte %llu: %s", what ? what : "image", kind,
                    (unsigned long long)at, detail);
}
