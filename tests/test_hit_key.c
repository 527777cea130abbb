/* The memory-cache hit path of the compile key (runtime/compile_key.c): a
 * request is walked once into gathered pieces, which give the lookup hash
 * and the comparison with a stored key. Checked here, for requests that fit
 * the gathered storage and requests that do not (many options, a long
 * option): the key text, the disk hash (XXH3-128 of that text) and the
 * comparison agree; equal requests in other buffers find each other; a
 * stored key that differs in any single byte, or is cut short or extended,
 * never compares equal. Also: the user-header digest is skipped only when
 * nothing can name a file. No GPU and no compile needed. */
#include <unistd.h>

#include "base/error.h"
#include "base/hash.h"
#include "base/strbuf.h"
#include "runtime/compile.h"
#include "testutil.h"

enum { MANY = 40 };

static char *dup_str(const char *s) {
  char *d = malloc(strlen(s) + 1);
  if (d) strcpy(d, s);
  return d;
}

/* A deep copy of req's strings, so that pointers differ but bytes agree. */
typedef struct copy {
  uk__compile_req req;
  char *source;
  char *opts[MANY + 2];
  char *names[4];
} copy;

static void deep_copy(const uk__compile_req *r, copy *c) {
  c->req = *r;
  c->source = dup_str(r->source);
  c->req.source = c->source;
  for (int k = 0; k < r->num_options; k++) c->opts[k] = dup_str(r->options[k]);
  for (int k = 0; k < r->num_name_expressions; k++) c->names[k] = dup_str(r->name_expressions[k]);
  c->req.options = (const char *const *)c->opts;
  c->req.name_expressions = (const char *const *)c->names;
}

static void free_copy(copy *c) {
  free(c->source);
  for (int k = 0; k < c->req.num_options; k++) free(c->opts[k]);
  for (int k = 0; k < c->req.num_name_expressions; k++) free(c->names[k]);
}

/* One request: text, hashes, comparison, and every one-byte change. */
static void check_request(const uk__compile_req *req) {
  uk__compile_keyed k;
  uk__compile_keyed_init(&k, req);
  uk_strbuf t;
  uk__sb_init(&t);
  CHECK_OK(uk__compile_key(&k, &t));
  if (t.failed || t.len < 20) {
    uk__sb_release(&t);
    return;
  }
  CHECK(uk__compile_key_equals(&k, t.buf, t.len));
  CHECK(strstr(t.buf, req->source) != NULL);
  /* The disk hash is the key text's XXH3-128, however it was streamed. */
  uk_hash128 h = uk__compile_hash(&k), ht = uk__hash128(t.buf, t.len);
  CHECK(h.lo == ht.lo && h.hi == ht.hi);

  /* The same request in other buffers: same lookup, same text, equal. */
  copy c;
  deep_copy(req, &c);
  uk__compile_keyed k2;
  uk__compile_keyed_init(&k2, &c.req);
  uk_hash128 l1 = uk__compile_lookup(&k), l2 = uk__compile_lookup(&k2);
  CHECK(l1.lo == l2.lo && l1.hi == l2.hi);
  CHECK(uk__compile_key_equals(&k2, t.buf, t.len));
  uk_hash128 h2 = uk__compile_hash(&k2);
  CHECK(h2.lo == h.lo && h2.hi == h.hi);

  /* Any one byte changed, anywhere in the stored key: never equal. */
  int equal_after_flip = 0;
  for (size_t j = 0; j < t.len; j++) {
    t.buf[j] ^= 0x20;
    equal_after_flip += uk__compile_key_equals(&k, t.buf, t.len);
    equal_after_flip += uk__compile_key_equals(&k2, t.buf, t.len);
    t.buf[j] ^= 0x20;
  }
  CHECK(equal_after_flip == 0);
  CHECK(!uk__compile_key_equals(&k, t.buf, t.len - 1));
  CHECK(!uk__compile_key_equals(&k, t.buf, 0));
  uk__sb_addc(&t, '\n');
  CHECK(!t.failed && !uk__compile_key_equals(&k, t.buf, t.len));
  /* The request changed after its key was taken is another key. */
  c.source[0] ^= 0x20;
  uk__compile_keyed k3;
  uk__compile_keyed_init(&k3, &c.req);
  CHECK(!uk__compile_key_equals(&k3, t.buf, t.len - 1));
  free_copy(&c);
  uk__sb_release(&t);
}

static void gathered_and_walked(void) {
  const char *few[] = {"-O3", "-DX=1"}, *names[] = {"f<int>", "g<long>"};
  uk__compile_req r;
  memset(&r, 0, sizeof r);
  r.source = "extern \"C\" __global__ void f(float *p) { p[threadIdx.x] += 1.0f; }";
  r.name = "f";
  r.arch = 90;
  check_request(&r); /* no options */
  r.options = few;
  r.num_options = 2;
  r.name_expressions = names;
  r.num_name_expressions = 2;
  r.arch_flags = 1;
  check_request(&r);
  /* A long option (kept by pointer), a long name expression. */
  char longopt[200], longname[100];
  memset(longopt, 'a', sizeof longopt);
  memcpy(longopt, "-DLONG=", 7);
  longopt[sizeof longopt - 1] = '\0';
  memset(longname, 'b', sizeof longname);
  memcpy(longname, "h<", 2);
  longname[sizeof longname - 2] = '>';
  longname[sizeof longname - 1] = '\0';
  const char *mixed[] = {"-O3", longopt, "-DY=2"}, *lnames[] = {longname};
  r.options = mixed;
  r.num_options = 3;
  r.name_expressions = lnames;
  r.num_name_expressions = 1;
  check_request(&r);
  /* Too many pieces for the gathered storage: each use walks again. */
  char opt[MANY][16];
  const char *many[MANY];
  for (int k = 0; k < MANY; k++) {
    snprintf(opt[k], sizeof opt[k], "-DV%d=%d", k, k * 7);
    many[k] = opt[k];
  }
  r.options = many;
  r.num_options = MANY;
  r.num_name_expressions = 0;
  check_request(&r);
  /* Too many copied bytes: short options that fill the arena. */
  char mid[12][60];
  const char *full[12];
  for (int k = 0; k < 12; k++) {
    memset(mid[k], 'c', sizeof mid[k]);
    memcpy(mid[k], "-DM", 3);
    mid[k][3] = (char)('a' + k);
    mid[k][4] = '=';
    mid[k][sizeof mid[k] - 1] = '\0';
    full[k] = mid[k];
  }
  r.options = full;
  r.num_options = 12;
  check_request(&r);
}

/* Two requests that differ in one field never share a key or compare equal. */
static void fields_differ(void) {
  const char *o1[] = {"-DA=1"}, *o2[] = {"-DA=2"};
  uk__compile_req v[6];
  memset(&v[0], 0, sizeof v[0]);
  v[0].source = "extern \"C\" __global__ void k() {}";
  v[0].arch = 90;
  v[0].options = o1;
  v[0].num_options = 1;
  for (int j = 1; j < 6; j++) v[j] = v[0];
  v[1].source = "extern \"C\" __global__ void q() {}";
  v[2].options = o2;
  v[3].arch = 80;
  v[4].arch_flags = 2;
  v[5].no_std_headers = 1;
  uk_strbuf t[6];
  for (int j = 0; j < 6; j++) {
    uk__compile_keyed k;
    uk__compile_keyed_init(&k, &v[j]);
    uk__sb_init(&t[j]);
    CHECK_OK(uk__compile_key(&k, &t[j]));
  }
  int equal = 0;
  for (int i = 0; i < 6; i++) {
    uk__compile_keyed k;
    uk__compile_keyed_init(&k, &v[i]);
    for (int j = 0; j < 6; j++) {
      int e = uk__compile_key_equals(&k, t[j].buf, t[j].len);
      CHECK(e == (i == j));
      equal += e;
    }
  }
  CHECK(equal == 6);
  for (int j = 0; j < 6; j++) uk__sb_release(&t[j]);
}

/* The header digest: skipped when no '#include' or -include can name a
 * file, taken when one does. */
static void header_digest(void) {
  char dir[] = "/tmp/ukern-hitkey-XXXXXX";
  if (!mkdtemp(dir)) {
    CHECK(!"mkdtemp");
    return;
  }
  char path[128], name[128];
  snprintf(path, sizeof path, "%s/hk.h", dir);
  snprintf(name, sizeof name, "%s/prog.cu", dir);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (f) {
    fputs("#define HK 3\n", f);
    fclose(f);
  }
  uk__compile_req r;
  memset(&r, 0, sizeof r);
  r.arch = 90;
  r.name = name;
  uk__compile_keyed k;
  r.source = "/* include nothing */ extern \"C\" __global__ void k() {}";
  uk__compile_keyed_init(&k, &r);
  CHECK(k.files[0] == '\0');
  r.source = "#define X 1\nextern \"C\" __global__ void k() {}";
  uk__compile_keyed_init(&k, &r);
  CHECK(k.files[0] == '\0');
  r.source = "#include \"hk.h\"\nextern \"C\" __global__ void k() { (void)HK; }";
  uk__compile_keyed_init(&k, &r);
  CHECK(strlen(k.files) == 32);
  char first[33];
  memcpy(first, k.files, sizeof first);
  /* The header's bytes are in the key: edit it, the digest changes. */
  f = fopen(path, "w");
  if (f) {
    fputs("#define HK 4\n", f);
    fclose(f);
  }
  uk__compile_keyed_init(&k, &r);
  CHECK(strlen(k.files) == 32 && strcmp(k.files, first) != 0);
  /* -include names a file even when the source has no '#'. */
  char inc[160];
  snprintf(inc, sizeof inc, "-include=%s", path);
  const char *opts[] = {inc};
  r.source = "extern \"C\" __global__ void k() {}";
  r.options = opts;
  r.num_options = 1;
  uk__compile_keyed_init(&k, &r);
  CHECK(strlen(k.files) == 32);
  unlink(path);
  rmdir(dir);
}

int main(void) {
  gathered_and_walked();
  fields_differ();
  header_digest();
  uk__error_clear();
  return ut_finish("test_hit_key");
}
