/* Compile targets: parsing what users write and checking it against the
 * architectures NVRTC supports. */
#include "runtime/arch.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "runtime/nvrtc_lib.h"

#define MAX_SUPPORTED 64

static pthread_once_t supported_once = PTHREAD_ONCE_INIT;
static int supported[MAX_SUPPORTED];
static int nsupported; /* 0: NVRTC could not say; nothing is refused then */

/* From the disk cache's memo when NVRTC is not loaded (nvrtc_lib.h). */
static void load_supported(void) { nsupported = uk__nvrtc_supported_archs(supported, MAX_SUPPORTED); }

uk_status uk__arch_parse(const char *text, const char *what, uk__arch *out) {
  const char *p = text ? text : "";
  int flags = 0;
  if (strncmp(p, "sm_", 3) == 0) p += 3;
  else if (strncmp(p, "compute_", 8) == 0) {
    p += 8;
    flags |= UK__ARCH_VIRTUAL;
  }
  long num = 0;
  int digits = 0;
  while (isdigit((unsigned char)*p) && digits < 5) num = num * 10 + (*p++ - '0'), digits++;
  if (*p == 'a') flags |= UK__ARCH_A, p++;
  else if (*p == 'f') flags |= UK__ARCH_F, p++;
  if (digits < 2 || *p != '\0' || num < 10)
    return uk__errorf(UK_ERR_INVALID,
                      "%s: '%.40s' is not an architecture (write 90, 90a, 100f, sm_90a or compute_90)",
                      what, text ? text : "(null)");
  out->num = (int)num;
  out->flags = flags;
  return UK_OK;
}

uk_status uk__arch_check(uk__arch a, const char *what) {
  pthread_once(&supported_once, load_supported);
  int found = nsupported == 0;
  for (int k = 0; k < nsupported && !found; k++) found = supported[k] == a.num;
  if (found && !(a.flags & (UK__ARCH_A | UK__ARCH_F))) return UK_OK; /* no name formatted */
  char name[32];
  uk__arch_name(a, name, sizeof name);
  if (found && (a.flags & UK__ARCH_A) && a.num < 90)
    return uk__errorf(UK_ERR_INVALID, "%s: %s does not exist: 'a' variants start at sm_90a", what, name);
  if (found && (a.flags & UK__ARCH_F) && a.num < 100)
    return uk__errorf(UK_ERR_INVALID, "%s: %s does not exist: 'f' variants start at sm_100f", what, name);
  if (found) return UK_OK;
  uk_strbuf sb;
  uk__sb_init(&sb);
  for (int k = 0; k < nsupported; k++) uk__sb_addf(&sb, "%s%d", k ? ", " : "", supported[k]);
  uk_status st = uk__errorf(UK_ERR_INVALID, "%s: %s is not an architecture this NVRTC supports (%s)",
                            what, name, sb.failed ? "?" : uk__sb_str(&sb));
  uk__sb_release(&sb);
  return st;
}

void uk__arch_name(uk__arch a, char *buf, size_t cap) {
  snprintf(buf, cap, "%s_%d%s", (a.flags & UK__ARCH_VIRTUAL) ? "compute" : "sm", a.num,
           (a.flags & UK__ARCH_A) ? "a" : (a.flags & UK__ARCH_F) ? "f" : "");
}

void uk__arch_option(uk__arch a, char *buf, size_t cap) {
  char name[32];
  uk__arch_name(a, name, sizeof name);
  snprintf(buf, cap, "-arch=%s", name);
}

/* The value of an arch option at options[k]: NULL when it is none;
 * *span 2 when the value is the next entry. */
static const char *arch_value(const char *const *options, int n, int k, int *span) {
  static const char *const flags[] = {"-arch", "--gpu-architecture"};
  for (size_t f = 0; f < sizeof flags / sizeof flags[0]; f++) {
    size_t len = strlen(flags[f]);
    if (strncmp(options[k], flags[f], len) != 0) continue;
    if (options[k][len] == '=') {
      *span = 1;
      return options[k] + len + 1;
    }
    if (options[k][len] == '\0') {
      *span = 2;
      return k + 1 < n ? options[k + 1] : "";
    }
  }
  return NULL;
}

uk_status uk__arch_from_options(const char *const *options, int n, int *index, int *span,
                                uk__arch *out) {
  *index = -1;
  *span = 0;
  for (int k = 0; k < n; k++) {
    int s = 0;
    const char *v = arch_value(options, n, k, &s);
    if (!v) continue;
    if (*index >= 0)
      return uk__errorf(UK_ERR_INVALID, "options: more than one -arch (%s and %s); give one, or "
                                        "use `ukern precompile --arch A,B` for several targets",
                        options[*index], options[k]);
    uk__arch a;
    uk_status st = uk__arch_parse(v, "options: -arch", &a);
    if (st == UK_OK) st = uk__arch_check(a, "options: -arch");
    if (st != UK_OK) return st;
    *index = k;
    *span = s;
    *out = a;
    k += s - 1;
  }
  return UK_OK;
}

uk_status uk__arch_take_option(const char **options, int *n, uk__arch *target) {
  int at = -1, span = 0;
  uk__arch a;
  uk_status st = uk__arch_from_options(options, *n, &at, &span, &a);
  if (st != UK_OK || at < 0) return st;
  memmove(options + at, options + at + span, (size_t)(*n - at - span) * sizeof *options);
  *n -= span;
  *target = a;
  return UK_OK;
}
