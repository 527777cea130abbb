/* uk_module_fatbin: one module source compiled for several targets through
 * the context's caches (as uk_module_from_source compiles it for each), the
 * images gathered into one fatbin (fatbin.c). */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "runtime/binary.h"
#include "runtime/fatbin.h"
#include "runtime/module.h"

#define MAX_TARGETS 64

uk_status uk_module_fatbin(uk_context *ctx, const char *code, const uk_module_options *opts,
                           const char *const *archs, int num_archs, void **fatbin, size_t *bytes,
                           size_t *image_bytes) {
  uk__error_clear();
  if (!ctx || !code || !archs || !fatbin || !bytes)
    return uk__errorf(UK_ERR_INVALID, "uk_module_fatbin: %s is NULL",
                      !ctx ? "ctx" : !code ? "code" : !archs ? "archs" : !fatbin ? "fatbin" : "bytes");
  if (num_archs < 1 || num_archs > MAX_TARGETS)
    return uk__errorf(UK_ERR_INVALID, "uk_module_fatbin: num_archs is %d; give 1 to %d targets", num_archs,
                      MAX_TARGETS);
  uk_module_options o;
  if (opts) o = *opts;
  else memset(&o, 0, sizeof o);
  if (o.arch || o.arch_name)
    return uk__errorf(UK_ERR_INVALID, "uk_module_fatbin: the targets come from archs; leave "
                      "uk_module_options.arch and arch_name unset");
  int at = -1, span = 0;
  uk__arch any;
  uk_status st = UK_OK;
  if (o.num_options > 0 && o.options &&
      (st = uk__arch_from_options(o.options, o.num_options, &at, &span, &any)) != UK_OK)
    return st;
  if (at >= 0)
    return uk__errorf(UK_ERR_INVALID, "uk_module_fatbin: option '%s' names a target; give the targets in archs",
                      o.options[at]);
  uk__fatbin_image im[MAX_TARGETS];
  uk_module *mods[MAX_TARGETS] = {0};
  for (int k = 0; k < num_archs; k++) {
    if (!archs[k]) return uk__errorf(UK_ERR_INVALID, "uk_module_fatbin: archs[%d] is NULL", k);
    if ((st = uk__arch_parse(archs[k], "uk_module_fatbin: archs", &im[k].arch)) != UK_OK) return st;
    if (im[k].arch.flags & UK__ARCH_F)
      return uk__errorf(UK_ERR_INVALID, "uk_module_fatbin: family targets (sm_%df) are not supported; use %d or %da",
                        im[k].arch.num, im[k].arch.num, im[k].arch.num);
  }
  for (int k = 0; k < num_archs && st == UK_OK; k++) {
    o.arch_name = archs[k];
    if ((st = uk_module_from_source(ctx, code, &o, &mods[k])) != UK_OK) {
      uk__error_prefix("uk_module_fatbin: compiling for %s", archs[k]);
      break;
    }
    im[k].data = mods[k]->bin->image;
    im[k].size = mods[k]->bin->image_size;
    if (im[k].size && mods[k]->bin->is_ptx && !((const char *)im[k].data)[im[k].size - 1])
      im[k].size--; /* PTX text without its NUL */
    if (image_bytes) image_bytes[k] = im[k].size;
  }
  if (st == UK_OK) st = uk__fatbin_build(im, num_archs, fatbin, bytes);
  for (int k = 0; k < num_archs; k++) uk_module_destroy(mods[k]);
  return st;
}
