/* The cache key described once (runtime/compile_key.c) and checked on every
 * memory-cache hit: the hash, the key text and the comparison agree; a
 * request that differs in any part has another key; a hash collision in the
 * memory cache is never a hit, neither in the cache alone nor through the
 * compile path with a forced collision (uk__compile_hash_hook). The last
 * part compiles with NVRTC for sm_90 (no GPU), as does the check of
 * uk_elementwise_compile_info / uk_reduction_compile_info (the compile
 * statistics the ukern tool reports). */
#include "base/error.h"
#include "base/strbuf.h"
#include "runtime/context.h"
#include "testutil.h"

static uk_status build_image(void *arg, uk__binary **out) {
  const char *image = arg;
  return uk__binary_create(image, strlen(image), 0, 90, 0, NULL, NULL, "", out);
}

static int match_text(void *arg, const char *key, size_t len) { return strlen(arg) == len && !memcmp(arg, key, len); }

/* The memory cache alone: two keys under one hash. */
static void mcache_collision(void) {
  uk__mcache *c = NULL;
  CHECK_OK(uk__mcache_create(&c));
  if (!c) return;
  uk_hash128 h = {42, 7};
  uk__binary *a = NULL, *b = NULL, *p = NULL;
  int hit = -1;
  CHECK_OK(uk__mcache_get(c, h, "key A", 5, build_image, "image A", &a, &hit));
  CHECK(hit == 0);
  CHECK(uk__mcache_peek(c, h, match_text, "key A", &p) == 1 && p == a);
  uk__binary_release(p);
  p = NULL;
  CHECK(uk__mcache_peek(c, h, match_text, "key B", &p) == 0 && p == NULL);
  CHECK_OK(uk__mcache_get(c, h, "key B", 5, build_image, "image B", &b, &hit));
  CHECK(hit == 0 && b != a && b && b->image_size == 7 && memcmp(b->image, "image B", 7) == 0);
  CHECK(uk__mcache_peek(c, h, match_text, "key B", &p) == 1 && p == b);
  uk__binary_release(p);
  uk__binary_release(a);
  uk__binary_release(b);
  uk__mcache_destroy(c);
}

static uk_strbuf key_text(const uk__compile_req *req, uk_hash128 *hash) {
  uk__compile_keyed k;
  uk__compile_keyed_init(&k, req);
  uk_strbuf sb;
  uk__sb_init(&sb);
  CHECK_OK(uk__compile_key(&k, &sb));
  CHECK(uk__compile_key_equals(&k, sb.buf, sb.len));
  *hash = uk__compile_hash(&k);
  return sb;
}

/* Hash, text and comparison come from one description. */
static void one_description(void) {
  const char *opts[] = {"-O3", "-DX=1"}, *names[] = {"f<int>"};
  uk__compile_req base;
  memset(&base, 0, sizeof base);
  base.source = "extern \"C\" __global__ void f() {}";
  base.arch = 90;
  base.options = opts;
  base.num_options = 2;
  base.name_expressions = names;
  base.num_name_expressions = 1;
  uk_hash128 h0, h1;
  uk_strbuf t0 = key_text(&base, &h0);
  uk_strbuf again = key_text(&base, &h1);
  CHECK(h0.lo == h1.lo && h0.hi == h1.hi && t0.len == again.len && memcmp(t0.buf, again.buf, t0.len) == 0);
  uk__sb_release(&again);
  CHECK_CONTAINS(t0.buf, "option 3 -O3\n");
  CHECK_CONTAINS(t0.buf, "source 33 extern");
  /* Every part changes the key: text, hash and comparison alike. */
  const char *opts2[] = {"-O3", "-DX=2"}, *opts3[] = {"-O3-DX=1"}, *names2[] = {"f<long>"};
  uk__compile_req v[5];
  for (int j = 0; j < 5; j++) v[j] = base;
  v[0].source = "extern \"C\" __global__ void g() {}";
  v[1].options = opts2;
  v[2].options = opts3; /* the same bytes run together: the length prefixes tell them apart */
  v[2].num_options = 1;
  v[3].name_expressions = names2;
  v[4].arch = 89;
  for (int j = 0; j < 5; j++) {
    uk_hash128 hv;
    uk_strbuf tv = key_text(&v[j], &hv);
    CHECK(!(hv.lo == h0.lo && hv.hi == h0.hi));
    CHECK(tv.len != t0.len || memcmp(tv.buf, t0.buf, t0.len) != 0);
    uk__compile_keyed kv;
    uk__compile_keyed_init(&kv, &v[j]);
    CHECK(!uk__compile_key_equals(&kv, t0.buf, t0.len));
    uk__sb_release(&tv);
  }
  /* A stored key cut short or extended never equals. */
  uk__compile_keyed k0;
  uk__compile_keyed_init(&k0, &base);
  CHECK(!uk__compile_key_equals(&k0, t0.buf, t0.len - 1));
  uk_strbuf longer;
  uk__sb_init(&longer);
  uk__sb_addn(&longer, t0.buf, t0.len);
  uk__sb_addc(&longer, 'x');
  CHECK(!uk__compile_key_equals(&k0, longer.buf, longer.len));
  uk__sb_release(&longer);
  uk__sb_release(&t0);
}

static uk_hash128 same_hash(const uk__compile_req *req) {
  (void)req;
  return (uk_hash128){1, 2};
}

/* Through the compile path: every request hashes alike, yet each gets its own binary. */
static void forced_collision(void) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = 90;
  o.disable_disk_cache = 1;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&o, &ctx));
  if (!ctx) return;
  uk__compile_hash_hook = same_hash;
  uk__compile_req a, b;
  memset(&a, 0, sizeof a);
  a.source = "extern \"C\" __global__ void fa(float *p) { p[0] = 1.0f; }";
  a.name = "fa";
  a.arch = 90;
  b = a;
  b.source = "extern \"C\" __global__ void fb(float *p) { p[0] = 2.0f; p[1] = 3.0f; }";
  b.name = "fb";
  uk__binary *ba = NULL, *bb = NULL, *ba2 = NULL;
  CHECK_OK(uk__context_compile(ctx, &a, &ba));
  CHECK_OK(uk__context_compile(ctx, &b, &bb));
  CHECK_OK(uk__context_compile(ctx, &a, &ba2));
  CHECK(ba && bb && ba != bb);
  CHECK(ba2 == ba); /* a real hit still hits */
  uk_cache_stats s;
  CHECK_OK(uk_context_cache_stats(ctx, &s));
  CHECK(s.compiles == 2 && s.memory_hits == 1);
  uk__compile_hash_hook = NULL;
  uk__binary_release(ba);
  uk__binary_release(bb);
  uk__binary_release(ba2);
  uk_context_destroy(ctx);
}

static void compile_info(void) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = 90;
  o.disable_disk_cache = 1;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&o, &ctx));
  if (!ctx) return;
  static const char *const verbose[] = {"-Xptxas=-v"};
  uk_elementwise_spec eo = {.in_params = "T x, T y",
                            .out_params = "T z",
                            .operation = "z = x * y + 1",
                            .name = "fma1",
                            .options = verbose,
                            .num_options = 1};
  uk_elementwise *k = NULL;
  CHECK_OK(uk_elementwise_create(ctx, &eo, &k));
  if (!k) return;
  int64_t n = 1000;
  uk_array x;
  memset(&x, 0, sizeof x);
  x.data = 0x10000;
  x.dtype = UK_FLOAT32;
  x.ndim = 1;
  x.shape[0] = n;
  x.strides[0] = 4;
  uk_array y = x, z;
  y.data = 0x20000;
  memset(&z, 0, sizeof z);
  uk_arg in[2] = {uk_arg_array(&x), uk_arg_array(&y)};
  uk_compile_info info;
  memset(&info, 0xAB, sizeof info);
  CHECK_OK(uk_elementwise_compile_info(k, in, 2, &z, 1, NULL, &info));
  CHECK(info.arch == 90 && info.is_ptx == 0 && info.image_bytes > 100 && info.image_bytes < (1u << 24));
  CHECK(info.ms >= 0 && info.ms < 600000);
  CHECK(info.log != NULL);
  if (info.log) CHECK_CONTAINS(info.log, "registers"); /* ptxas -v through the kernel's options */
  uk_free(info.log);
  uk_compile_info again;
  CHECK_OK(uk_elementwise_compile_info(k, in, 2, &z, 1, NULL, &again)); /* the memory cache answers */
  CHECK(again.image_bytes == info.image_bytes && again.log && strstr(again.log, "registers"));
  uk_free(again.log);
  uk_cache_stats s;
  CHECK_OK(uk_context_cache_stats(ctx, &s));
  CHECK(s.compiles == 1);
  x.shape[0] = 0; /* nothing to compute: nothing compiled, info zeroed */
  y.shape[0] = 0;
  memset(&info, 0xAB, sizeof info);
  CHECK_OK(uk_elementwise_compile_info(k, in, 2, &z, 1, NULL, &info));
  CHECK(info.log == NULL && info.image_bytes == 0 && info.arch == 0);
  CHECK_STATUS(uk_elementwise_compile_info(k, in, 2, &z, 1, NULL, NULL), UK_ERR_INVALID);
  CHECK_STATUS(uk_elementwise_compile_info(NULL, in, 2, &z, 1, NULL, &info), UK_ERR_INVALID);
  uk_elementwise_destroy(k);

  uk_reduction_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.in_params = "T x";
  spec.out_params = "T y";
  spec.map_expr = "x";
  spec.reduce_expr = "a + b";
  spec.post_map_expr = "y = a";
  spec.identity = "0";
  spec.name = "sum1";
  uk_reduction *r = NULL;
  CHECK_OK(uk_reduction_create(ctx, &spec, &r));
  if (r) {
    x.shape[0] = n;
    uk_arg rin[1] = {uk_arg_array(&x)};
    uk_array yy;
    memset(&yy, 0, sizeof yy);
    CHECK_OK(uk_reduction_compile_info(r, rin, 1, &yy, 1, NULL, &info));
    CHECK(info.arch == 90 && info.image_bytes > 100 && info.log != NULL);
    uk_free(info.log);
    CHECK_STATUS(uk_reduction_compile_info(r, rin, 1, &yy, 1, NULL, NULL), UK_ERR_INVALID);
    uk_reduction_destroy(r);
  }
  uk_context_destroy(ctx);
}

int main(void) {
  mcache_collision();
  one_description();
  forced_collision();
  compile_info();
  return ut_finish("test_key_check");
}
