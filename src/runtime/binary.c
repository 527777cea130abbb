/* Compiled binaries: refcounting and the serialised form kept on disk.
 *
 * Encoding (all integers little-endian, strings without their NUL):
 *   "UKB1"  u32 version  u32 flags (bit 0: PTX)  i32 arch  u32 num_names
 *   u64 image_size  image bytes
 *   num_names x { u64 len  name bytes  u64 len  lowered bytes }
 *   u64 log_len  log bytes
 * The buffer must end exactly after the log; anything else is malformed. */
#include "runtime/binary.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/error.h"

#define BIN_MAGIC "UKB1"
#define BIN_VERSION 1u
#define BIN_FLAG_PTX 1u

/* Copies n bytes and appends a NUL, so PTX images and strings are C strings. */
static char *dup_bytes(const void *p, size_t n) {
  if (n == SIZE_MAX) return NULL;
  char *d = malloc(n + 1);
  if (!d) return NULL;
  if (n) memcpy(d, p, n);
  d[n] = '\0';
  return d;
}

static void binary_free(uk__binary *b) {
  if (!b) return;
  for (int i = 0; i < b->num_names; i++) {
    if (b->names) free(b->names[i]);
    if (b->lowered) free(b->lowered[i]);
  }
  free(b->names);
  free(b->lowered);
  if (b->mapping && !b->mapping_heap) munmap(b->mapping, b->mapping_size);
  else free(b->mapping ? b->mapping : b->image);
  free(b->log);
  free(b);
}

/* An empty binary with room for n names; the caller fills in the rest. */
static uk__binary *binary_alloc(int n) {
  uk__binary *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  atomic_init(&b->refs, 1);
  if (n > 0) {
    b->names = calloc((size_t)n, sizeof *b->names);
    b->lowered = calloc((size_t)n, sizeof *b->lowered);
    if (!b->names || !b->lowered) {
      binary_free(b);
      return NULL;
    }
  }
  b->num_names = n;
  return b;
}

uk_status uk__binary_create(const void *image, size_t size, int is_ptx, int arch, int num_names,
                            const char *const *names, const char *const *lowered, const char *log,
                            uk__binary **out) {
  if ((!image && size) || num_names < 0 || (num_names > 0 && (!names || !lowered)))
    return uk__errorf(UK_ERR_INVALID, "uk__binary_create: invalid arguments");
  uk__binary *b = binary_alloc(num_names);
  if (!b) goto nomem;
  b->image = dup_bytes(image, size);
  b->log = log ? strdup(log) : strdup("");
  if (!b->image || !b->log) goto nomem;
  b->image_size = size;
  b->is_ptx = is_ptx ? 1 : 0;
  b->arch = arch;
  for (int i = 0; i < num_names; i++) {
    if (!names[i] || !lowered[i]) {
      binary_free(b);
      return uk__errorf(UK_ERR_INVALID, "uk__binary_create: name %d is NULL", i);
    }
    b->names[i] = strdup(names[i]);
    b->lowered[i] = strdup(lowered[i]);
    if (!b->names[i] || !b->lowered[i]) goto nomem;
  }
  *out = b;
  return UK_OK;
nomem:
  binary_free(b);
  return uk__errorf(UK_ERR_NOMEM, "out of memory creating a compiled binary");
}

void uk__binary_retain(uk__binary *b) {
  if (b) atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
}

void uk__binary_release(uk__binary *b) {
  if (!b) return;
  /* acq_rel: the last releaser must see every other owner's writes. */
  if (atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1) binary_free(b);
}

const char *uk__binary_lowered(const uk__binary *b, const char *name_expression) {
  if (!b || !name_expression) return NULL;
  for (int i = 0; i < b->num_names; i++)
    if (strcmp(b->names[i], name_expression) == 0) return b->lowered[i];
  return NULL;
}

/* ---- encoding ---------------------------------------------------------- */

typedef struct writer {
  unsigned char *p;
} writer;

static void put_u32(writer *w, uint32_t v) {
  for (int i = 0; i < 4; i++) *w->p++ = (unsigned char)(v >> (8 * i));
}

static void put_u64(writer *w, uint64_t v) {
  for (int i = 0; i < 8; i++) *w->p++ = (unsigned char)(v >> (8 * i));
}

static void put_bytes(writer *w, const void *s, size_t n) {
  if (n) memcpy(w->p, s, n);
  w->p += n;
}

uk_status uk__binary_encode(const uk__binary *b, void **out, size_t *out_size) {
  size_t total = 4 + 4 + 4 + 4 + 4 + 8 + b->image_size + 8 + strlen(b->log);
  for (int i = 0; i < b->num_names; i++) total += 16 + strlen(b->names[i]) + strlen(b->lowered[i]);
  unsigned char *buf = malloc(total ? total : 1);
  if (!buf) return uk__errorf(UK_ERR_NOMEM, "out of memory encoding a compiled binary");
  writer w = {buf};
  put_bytes(&w, BIN_MAGIC, 4);
  put_u32(&w, BIN_VERSION);
  put_u32(&w, b->is_ptx ? BIN_FLAG_PTX : 0u);
  put_u32(&w, (uint32_t)b->arch);
  put_u32(&w, (uint32_t)b->num_names);
  put_u64(&w, b->image_size);
  /* binary.h promises this offset (the disk cache aligns the image on it) */
  _Static_assert(4 + 4 + 4 + 4 + 4 + 8 == UK__BINARY_IMAGE_OFFSET, "image offset");
  put_bytes(&w, b->image, b->image_size);
  for (int i = 0; i < b->num_names; i++) {
    size_t n = strlen(b->names[i]), l = strlen(b->lowered[i]);
    put_u64(&w, n);
    put_bytes(&w, b->names[i], n);
    put_u64(&w, l);
    put_bytes(&w, b->lowered[i], l);
  }
  size_t ll = strlen(b->log);
  put_u64(&w, ll);
  put_bytes(&w, b->log, ll);
  *out = buf;
  *out_size = total;
  return UK_OK;
}

/* ---- decoding: a cursor that fails (sticky) instead of overrunning ------ */

typedef struct reader {
  const unsigned char *p;
  size_t left;
  int bad;
} reader;

static int take(reader *r, size_t n, const unsigned char **at) {
  if (r->bad || n > r->left) {
    r->bad = 1;
    return 0;
  }
  *at = r->p;
  r->p += n;
  r->left -= n;
  return 1;
}

static uint32_t get_u32(reader *r) {
  const unsigned char *s;
  if (!take(r, 4, &s)) return 0;
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= (uint32_t)s[i] << (8 * i);
  return v;
}

static uint64_t get_u64(reader *r) {
  const unsigned char *s;
  if (!take(r, 8, &s)) return 0;
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)s[i] << (8 * i);
  return v;
}

/* A length-prefixed string as a C string; NULL with r->bad set when it
 * overruns or holds a NUL, NULL with *nomem set when out of memory. */
static char *get_string(reader *r, int *nomem) {
  uint64_t n = get_u64(r);
  const unsigned char *s;
  if (r->bad || n > r->left || !take(r, (size_t)n, &s)) {
    r->bad = 1;
    return NULL;
  }
  if (memchr(s, '\0', (size_t)n)) {
    r->bad = 1;
    return NULL;
  }
  char *d = dup_bytes(s, (size_t)n);
  if (!d) *nomem = 1;
  return d;
}

static uk_status decode(const void *data, size_t size, void *mapping, size_t mapping_size, int heap,
                        uk__binary **out) {
  reader r = {data, size, 0};
  uk__binary *b = NULL;
  int nomem = 0;
  const unsigned char *magic, *image;
  if (!data || !take(&r, 4, &magic) || memcmp(magic, BIN_MAGIC, 4) != 0) goto bad;
  uint32_t version = get_u32(&r);
  uint32_t flags = get_u32(&r);
  uint32_t arch = get_u32(&r);
  uint32_t num = get_u32(&r);
  if (r.bad || version != BIN_VERSION || (flags & ~BIN_FLAG_PTX) != 0) goto bad;
  /* Each name needs 16 length bytes: bounds num before allocating for it. */
  if (num > INT32_MAX || num > r.left / 16) goto bad;
  uint64_t image_size = get_u64(&r);
  if (r.bad || image_size > r.left || !take(&r, (size_t)image_size, &image)) goto bad;
  b = binary_alloc((int)num);
  if (!b) goto nomem;
  if (mapping && ((uintptr_t)image & 15u) == 0) {
    b->image = (void *)(uintptr_t)image; /* read-only like the mapping: nothing writes an image */
    b->mapping = mapping;
    b->mapping_size = mapping_size;
    b->mapping_heap = heap;
  } else if (!(b->image = dup_bytes(image, (size_t)image_size))) {
    goto nomem;
  }
  b->image_size = (size_t)image_size;
  b->is_ptx = (flags & BIN_FLAG_PTX) ? 1 : 0;
  b->arch = (int)arch;
  for (uint32_t i = 0; i < num; i++) {
    b->names[i] = get_string(&r, &nomem);
    if (b->names[i]) b->lowered[i] = get_string(&r, &nomem);
    if (nomem) goto nomem;
    if (r.bad) goto bad;
  }
  b->log = get_string(&r, &nomem);
  if (nomem) goto nomem;
  if (r.bad || r.left != 0) goto bad;
  *out = b;
  return UK_OK;
bad:
  if (b && b->mapping) b->mapping = NULL, b->image = NULL; /* the caller keeps its mapping */
  binary_free(b);
  return uk__errorf(UK_ERR_IO, "malformed compiled binary (%zu bytes)", size);
nomem:
  if (b && b->mapping) b->mapping = NULL, b->image = NULL;
  binary_free(b);
  return uk__errorf(UK_ERR_NOMEM, "out of memory decoding a compiled binary");
}

uk_status uk__binary_decode(const void *data, size_t size, uk__binary **out) {
  return decode(data, size, NULL, 0, 0, out);
}

uk_status uk__binary_decode_mapped(void *mapping, size_t mapping_size, int heap, size_t offset, size_t size,
                                   uk__binary **out, int *took) {
  *took = 0;
  if (offset > mapping_size || size > mapping_size - offset)
    return uk__errorf(UK_ERR_IO, "malformed compiled binary (%zu bytes)", size);
  uk_status st = decode((const unsigned char *)mapping + offset, size, mapping, mapping_size, heap, out);
  if (st == UK_OK) *took = (*out)->mapping != NULL;
  return st;
}
