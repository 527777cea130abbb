/* Compiled binaries: refcounts, encode/decode round trips, and decoding of
 * truncated and damaged encodings (run under ASan: no out-of-bounds read). */
#include "runtime/binary.h"
#include "testutil.h"

static const char *const names[] = {"f<float>", "g", "ns::h<int, 3>"};
static const char *const lowered[] = {"_Z1fIfEvv", "_Z1gv", "_ZN2ns1hIiLi3EEEvv"};

static uk__binary *make(size_t image_size, int is_ptx, int num_names, const char *log) {
  unsigned char *image = malloc(image_size + 1);
  for (size_t i = 0; i < image_size; i++) image[i] = (unsigned char)(ut_rand() | 1);
  uk__binary *b = NULL;
  CHECK_OK(uk__binary_create(image, image_size, is_ptx, 90, num_names, names, lowered, log, &b));
  free(image);
  return b;
}

static int same(const uk__binary *a, const uk__binary *b) {
  if (a->image_size != b->image_size || a->is_ptx != b->is_ptx || a->arch != b->arch ||
      a->num_names != b->num_names || strcmp(a->log, b->log) != 0)
    return 0;
  if (a->image_size && memcmp(a->image, b->image, a->image_size) != 0) return 0;
  for (int i = 0; i < a->num_names; i++)
    if (strcmp(a->names[i], b->names[i]) != 0 || strcmp(a->lowered[i], b->lowered[i]) != 0)
      return 0;
  return 1;
}

/* Decodes exactly `size` bytes from a buffer of exactly that size, so ASan
 * reports any read past the end. */
static uk_status decode_exact(const void *data, size_t size, uk__binary **out) {
  void *copy = malloc(size ? size : 1);
  if (size) memcpy(copy, data, size);
  uk_status s = uk__binary_decode(copy, size, out);
  free(copy);
  return s;
}

static void test_create_and_lookup(void) {
  uk__binary *b = make(100, 0, 3, "warning: unused variable");
  CHECK(atomic_load(&b->refs) == 1);
  CHECK(b->arch == 90 && b->is_ptx == 0 && b->image_size == 100 && b->num_names == 3);
  CHECK(((char *)b->image)[100] == '\0'); /* always NUL-terminated */
  CHECK_STREQ(uk__binary_lowered(b, "f<float>"), "_Z1fIfEvv");
  CHECK_STREQ(uk__binary_lowered(b, "ns::h<int, 3>"), "_ZN2ns1hIiLi3EEEvv");
  CHECK(uk__binary_lowered(b, "f<double>") == NULL);
  CHECK(uk__binary_lowered(b, "f") == NULL);
  CHECK_STREQ(b->log, "warning: unused variable");
  uk__binary_retain(b);
  CHECK(atomic_load(&b->refs) == 2);
  uk__binary_release(b);
  CHECK(atomic_load(&b->refs) == 1);
  uk__binary_release(b);
  uk__binary_release(NULL);

  uk__binary *nolog = NULL;
  CHECK_OK(uk__binary_create("x", 1, 0, 80, 0, NULL, NULL, NULL, &nolog));
  CHECK(nolog && nolog->log && strcmp(nolog->log, "") == 0);
  uk__binary_release(nolog);

  uk__binary *untouched = (uk__binary *)&untouched;
  CHECK_STATUS(uk__binary_create(NULL, 10, 0, 90, 0, NULL, NULL, "", &untouched), UK_ERR_INVALID);
  CHECK_STATUS(uk__binary_create("x", 1, 0, 90, 1, NULL, NULL, "", &untouched), UK_ERR_INVALID);
  const char *null_name[] = {NULL};
  CHECK_STATUS(uk__binary_create("x", 1, 0, 90, 1, null_name, lowered, "", &untouched),
               UK_ERR_INVALID);
  CHECK(untouched == (uk__binary *)&untouched);
}

static void test_round_trip(void) {
  struct {
    size_t image_size;
    int is_ptx, num_names;
    const char *log;
  } cases[] = {{4096, 0, 3, "ptxas info: 12 registers"}, {1, 1, 1, ""}, {0, 0, 0, ""},
               {33, 1, 2, "line1\nline2\n"}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    uk__binary *b = make(cases[k].image_size, cases[k].is_ptx, cases[k].num_names, cases[k].log);
    void *enc = NULL;
    size_t size = 0;
    CHECK_OK(uk__binary_encode(b, &enc, &size));
    CHECK(size >= cases[k].image_size + 36);
    uk__binary *d = NULL;
    CHECK_OK(decode_exact(enc, size, &d));
    CHECK(d && same(b, d));
    if (d) {
      CHECK(atomic_load(&d->refs) == 1);
      CHECK(((char *)d->image)[d->image_size] == '\0');
      if (d->num_names > 0) CHECK_STREQ(uk__binary_lowered(d, "f<float>"), "_Z1fIfEvv");
      /* Encoding is deterministic: re-encoding gives the same bytes. */
      void *enc2 = NULL;
      size_t size2 = 0;
      CHECK_OK(uk__binary_encode(d, &enc2, &size2));
      CHECK(size2 == size && memcmp(enc, enc2, size) == 0);
      free(enc2);
    }
    uk__binary_release(d);
    uk__binary_release(b);
    free(enc);
  }
}

static void test_truncations(void) {
  uk__binary *b = make(300, 0, 3, "a log");
  void *enc = NULL;
  size_t size = 0;
  CHECK_OK(uk__binary_encode(b, &enc, &size));
  int failures = 0;
  for (size_t len = 0; len < size; len++) {
    uk__binary *d = (uk__binary *)&d;
    uk_status s = decode_exact(enc, len, &d);
    if (s != UK_ERR_IO || d != (uk__binary *)&d) failures++;
  }
  CHECK(failures == 0);
  CHECK_STATUS(decode_exact(enc, 10, &b), UK_ERR_IO);
  CHECK_STREQ(uk_last_error(), "malformed compiled binary (10 bytes)");

  /* One trailing byte too many is malformed too. */
  unsigned char *longer = malloc(size + 1);
  memcpy(longer, enc, size);
  longer[size] = 0;
  uk__binary *d = NULL;
  CHECK_STATUS(decode_exact(longer, size + 1, &d), UK_ERR_IO);
  free(longer);
  CHECK_STATUS(uk__binary_decode(NULL, 0, &d), UK_ERR_IO);
  uk__binary_release(b);
  free(enc);
}

/* Sets a little-endian field of an encoding. */
static void set_le(unsigned char *p, uint64_t v, int n) {
  for (int i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void test_bad_fields(void) {
  uk__binary *b = make(16, 0, 1, "");
  unsigned char *enc = NULL;
  size_t size = 0;
  CHECK_OK(uk__binary_encode(b, (void **)&enc, &size));
  /* Layout: magic 0, version 4, flags 8, arch 12, num_names 16, image_size 20,
   * image 28, then name length at 44. */
  struct {
    size_t at;
    int width;
    uint64_t value;
  } edits[] = {{0, 1, 'X'},           {4, 4, 2},         {8, 4, 2},
               {16, 4, 0xFFFFFFFFu},  {16, 4, 2},        {16, 4, 0},
               {20, 8, UINT64_MAX},   {20, 8, 1u << 20}, {20, 8, 15},
               {44, 8, UINT64_MAX},   {44, 8, 1000},     {29, 1, 0}};
  for (size_t k = 0; k < sizeof edits / sizeof edits[0]; k++) {
    unsigned char *copy = malloc(size);
    memcpy(copy, enc, size);
    set_le(copy + edits[k].at, edits[k].value, edits[k].width);
    uk__binary *d = NULL;
    uk_status s = decode_exact(copy, size, &d);
    if (edits[k].at == 29) {
      /* A byte inside the image: still well formed, decodes to that image. */
      CHECK_OK(s);
      CHECK(d && ((unsigned char *)d->image)[1] == 0);
      uk__binary_release(d);
    } else {
      CHECK_STATUS(s, UK_ERR_IO);
      if (s != UK_ERR_IO) fprintf(stderr, "  edit %zu\n", k);
    }
    free(copy);
  }
  /* A NUL inside a name is malformed (names are C strings). */
  unsigned char *copy = malloc(size);
  memcpy(copy, enc, size);
  copy[52] = 0; /* first byte of "f<float>" */
  uk__binary *d = NULL;
  CHECK_STATUS(decode_exact(copy, size, &d), UK_ERR_IO);
  free(copy);
  free(enc);
  uk__binary_release(b);
}

static void test_random_flips(void) {
  uk__binary *b = make(200, 1, 3, "some log text");
  unsigned char *enc = NULL;
  size_t size = 0;
  CHECK_OK(uk__binary_encode(b, (void **)&enc, &size));
  int ok = 0, bad = 0, other = 0;
  unsigned char *copy = malloc(size);
  for (int iter = 0; iter < 20000; iter++) {
    memcpy(copy, enc, size);
    int flips = 1 + (int)(ut_rand() % 4);
    for (int f = 0; f < flips; f++) {
      size_t at = ut_rand() % size;
      /* Bias towards the header and length fields, where damage matters. */
      if (iter % 2) at = ut_rand() % 60;
      copy[at] ^= (unsigned char)(1u << (ut_rand() % 8));
    }
    uk__binary *d = NULL;
    uk_status s = decode_exact(copy, size, &d);
    if (s == UK_OK) {
      ok++;
      if (d->num_names > 0) (void)uk__binary_lowered(d, d->names[d->num_names - 1]);
      uk__binary_release(d);
    } else if (s == UK_ERR_IO) {
      bad++;
    } else {
      other++;
    }
  }
  free(copy);
  CHECK(other == 0);
  CHECK(bad > 1000); /* damage is mostly detected */
  CHECK(ok > 0);     /* and flips inside the image still decode */
  free(enc);
  uk__binary_release(b);
}

int main(void) {
  ut_seed(12345);
  test_create_and_lookup();
  test_round_trip();
  test_truncations();
  test_bad_fields();
  test_random_flips();
  return ut_finish("test_binary");
}
