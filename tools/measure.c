/* Device measurements for `ukern run` and `ukern bench`: seeded random
 * inputs, a check that every output element is written, event timing, and
 * the memcpy ceiling measured in the same run. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

uint16_t cli_float_to_half(float f);
uint16_t cli_float_to_bf16(float f);

static uint64_t next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* Uniform in (-1, 1), never 0: a kernel that ignores an input shows. */
static double uniform(uint64_t *s) {
  double u = (double)(next(s) >> 11) / 9007199254740992.0 * 2.0 - 1.0;
  return u == 0.0 ? 0.5 : u;
}

static void fill(void *host, uk_dtype t, int64_t n, uint64_t *seed) {
  unsigned char *p = host;
  size_t item = uk_dtype_size(t);
  for (int64_t j = 0; j < n; j++, p += item) {
    double u = uniform(seed);
    int64_t i = (int64_t)(next(seed) % 201) - 100;
    switch (t) {
    case UK_BOOL: p[0] = (unsigned char)(i & 1); break;
    case UK_INT8: case UK_UINT8: { int8_t v = (int8_t)(t == UK_UINT8 ? i + 100 : i); memcpy(p, &v, 1); break; }
    case UK_INT16: case UK_UINT16: { int16_t v = (int16_t)(t == UK_UINT16 ? i + 100 : i); memcpy(p, &v, 2); break; }
    case UK_INT32: case UK_UINT32: { int32_t v = (int32_t)(t == UK_UINT32 ? i + 100 : i); memcpy(p, &v, 4); break; }
    case UK_INT64: case UK_UINT64: { int64_t v = t == UK_UINT64 ? i + 100 : i; memcpy(p, &v, 8); break; }
    case UK_FLOAT16: { uint16_t v = cli_float_to_half((float)u); memcpy(p, &v, 2); break; }
    case UK_BFLOAT16: { uint16_t v = cli_float_to_bf16((float)u); memcpy(p, &v, 2); break; }
    case UK_FLOAT32: { float v = (float)u; memcpy(p, &v, 4); break; }
    case UK_FLOAT64: memcpy(p, &u, 8); break;
    case UK_COMPLEX64: { float v[2] = {(float)u, (float)uniform(seed)}; memcpy(p, v, 8); break; }
    default: { double v[2] = {u, uniform(seed)}; memcpy(p, v, 16); break; }
    }
  }
}

static size_t nbytes(const uk_array *a) { return (size_t)uk_array_size(a) * uk_dtype_size(a->dtype); }

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n ? v[n / 2] : 0;
}

#define TRY(expr)                 \
  do {                            \
    if ((st = (expr)) != UK_OK) { \
      goto out;                   \
    }                             \
  } while (0)

uk_status cli_measure_case(cli_kernel *k, cli_case *c, uint64_t seed, int repeat, cli_measure *m) {
  memset(m, 0, sizeof *m);
  int count = 0;
  uk_status st = uk_device_count(&count);
  if (st != UK_OK) return st;
  if (repeat < 1) repeat = 1;
  void *host = NULL;
  unsigned char *poisoned = NULL;
  double *times = calloc((size_t)repeat, sizeof *times);
  uk_array copy_a = {0}, copy_b = {0};
  void *e0 = NULL, *e1 = NULL;
  int allocated_out = 0;
  uint64_t s = seed ? seed : 1;
  if (!times) return UK_ERR_NOMEM;
  TRY(uk_device_set_current(0));
  for (int j = 0; j < c->nin; j++) {
    if (!c->is_array[j]) continue;
    uk_array *a = &c->in_arr[j];
    TRY(uk_array_alloc(k->ctx, a->dtype, a->ndim, a->shape, 0, NULL, a));
    size_t b = nbytes(a);
    if (!b) continue;
    void *h = malloc(b);
    if (!h) {
      st = UK_ERR_NOMEM;
      goto out;
    }
    fill(h, a->dtype, uk_array_size(a), &s);
    st = uk_memcpy_htod(a->data, h, b);
    free(h);
    TRY(st);
    m->bytes += (double)b;
  }
  allocated_out = 1;
  if (c->outputs_given)
    for (int j = 0; j < c->nout; j++)
      TRY(uk_array_alloc(k->ctx, c->out[j].dtype, c->out[j].ndim, c->out[j].shape, 0, NULL, &c->out[j]));
  cli_progress_begin("compiling and running %s", k->spec->f[F_name] ? k->spec->f[F_name] : "kernel");
  double t0 = cli_now_ms();
  st = cli_case_call(k, c);
  if (st == UK_OK) st = uk_device_synchronize();
  m->first_ms = cli_now_ms() - t0;
  cli_progress_end();
  TRY(st);
  cli_case_describe_outputs(c, m->outputs, sizeof m->outputs);
  /* Every output element must be written: poison twice with different bytes;
   * an element still equal to the poison both times was never written. */
  size_t maxb = 0, total_out = 0;
  for (int j = 0; j < c->nout; j++) {
    size_t b = nbytes(&c->out[j]);
    if (b > maxb) maxb = b;
    total_out += (size_t)uk_array_size(&c->out[j]);
    m->bytes += (double)b;
  }
  host = malloc(maxb ? maxb : 1);
  poisoned = calloc(total_out ? total_out : 1, 1);
  if (!host || !poisoned) {
    st = UK_ERR_NOMEM;
    goto out;
  }
  static const unsigned char poison[2] = {0xff, 0xa5};
  for (int pass = 0; pass < 2; pass++) {
    for (int j = 0; j < c->nout; j++)
      if (nbytes(&c->out[j]))
        TRY(uk_memset_d8(c->out[j].data, poison[pass], nbytes(&c->out[j])));
    TRY(cli_case_call(k, c));
    TRY(uk_device_synchronize());
    size_t base = 0;
    for (int j = 0; j < c->nout; j++) {
      size_t item = uk_dtype_size(c->out[j].dtype), n = (size_t)uk_array_size(&c->out[j]);
      TRY(uk_memcpy_dtoh(host, c->out[j].data, n * item));
      for (size_t e = 0; e < n; e++) {
        const unsigned char *q = (const unsigned char *)host + e * item;
        int all = 1;
        for (size_t b = 0; b < item && all; b++) all = q[b] == poison[pass];
        if (pass == 0) poisoned[base + e] = (unsigned char)all;
        else if (all && poisoned[base + e]) m->unwritten++;
      }
      base += n;
    }
  }
  TRY(uk_event_create(0, 0, &e0));
  TRY(uk_event_create(0, 0, &e1));
  for (int r = 0; r < repeat; r++) {
    float ms = 0;
    TRY(uk_event_record(e0, NULL));
    TRY(cli_case_call(k, c));
    TRY(uk_event_record(e1, NULL));
    TRY(uk_event_synchronize(e1));
    TRY(uk_event_elapsed(e0, e1, &ms));
    times[r] = ms;
  }
  m->ms = median(times, repeat);
  m->gbps = m->ms > 0 ? m->bytes / (m->ms * 1e6) : 0;
  /* The ceiling: a device copy that reads and writes the same total bytes. */
  int64_t half = ((int64_t)(m->bytes / 2) + 255) / 256 * 256;
  if (half > 0) {
    TRY(uk_array_alloc(k->ctx, UK_UINT8, 1, &half, 0, NULL, &copy_a));
    TRY(uk_array_alloc(k->ctx, UK_UINT8, 1, &half, 0, NULL, &copy_b));
    TRY(uk_memset_d8(copy_a.data, 1, (size_t)half));
    for (int r = 0; r < repeat + 1; r++) {
      float ms = 0;
      TRY(uk_event_record(e0, NULL));
      TRY(uk_memcpy_dtod_async(copy_b.data, copy_a.data, (size_t)half, NULL));
      TRY(uk_event_record(e1, NULL));
      TRY(uk_event_synchronize(e1));
      TRY(uk_event_elapsed(e0, e1, &ms));
      if (r > 0) times[r - 1] = ms; /* the first copy warms up */
    }
    m->copy_ms = median(times, repeat);
    m->copy_gbps = m->copy_ms > 0 ? 2.0 * (double)half / (m->copy_ms * 1e6) : 0;
  }
  uk_context_cache_stats(k->ctx, &m->cache);
out:
  cli_progress_end();
  if (e0) uk_event_destroy(e0);
  if (e1) uk_event_destroy(e1);
  uk_array_free(k->ctx, &copy_a, NULL);
  uk_array_free(k->ctx, &copy_b, NULL);
  for (int j = 0; j < c->nin; j++)
    if (c->is_array[j]) uk_array_free(k->ctx, &c->in_arr[j], NULL);
  if (allocated_out)
    for (int j = 0; j < c->nout; j++) uk_array_free(k->ctx, &c->out[j], NULL);
  uk_device_synchronize();
  free(host);
  free(poisoned);
  free(times);
  return st;
}
