/* zstd decompression for the fatbin check (image_check.h): nvcc compresses
 * fatbin entries with zstd (flag 0x8000), frames without a checksum, and
 * nvJitLink links whatever they inflate to, crashing on a damaged cubin.
 * libzstd.so.1 is dlopen'ed at first use (no build dependency); without
 * it compressed entries are checked for bounds only. */
#include <dlfcn.h>
#include <pthread.h>

#include "runtime/image_check.h"

static struct {
  size_t (*decompress)(void *dst, size_t cap, const void *src, size_t n);
  unsigned (*is_error)(size_t code);
} z;
static pthread_once_t z_once = PTHREAD_ONCE_INIT;

static void load(void) {
  void *lib = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return;
  *(void **)&z.is_error = dlsym(lib, "ZSTD_isError");
  *(void **)&z.decompress = z.is_error ? dlsym(lib, "ZSTD_decompress") : NULL;
}

int uk__zstd_inflate(const void *src, size_t n, void *dst, size_t cap, size_t *out) {
  pthread_once(&z_once, load);
  if (!z.decompress) return -1;
  size_t r = z.decompress(dst, cap, src, n);
  if (z.is_error(r)) return 0;
  *out = r;
  return 1;
}
