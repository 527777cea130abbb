/* Device memory bandwidth of two GPUs through one ukern context: an
 * elementwise copy (z = x, float32, 256 MiB each way) on each device alone,
 * then on both at once from one host thread per device, each device timed
 * by its own events. Target: each device's bandwidth with both busy within
 * 5% of its bandwidth alone (the devices share nothing but the host). With
 * fewer than 2 GPUs it prints SKIP and exits 77. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchutil.h"

enum { REPS = 20, ROUNDS = 5 };
static const int64_t N = 64ll << 20; /* floats: 256 MiB */

static uk_elementwise *copy;

typedef struct dev {
  int device;
  void *stream, *start, *end;
  uk_array x, z;
  double gbs; /* result of the last timed run */
} dev;

/* REPS copies on the device's stream between its events; bytes read and
 * written over the device time. */
static void *timed_run(void *p) {
  dev *d = p;
  uk_arg in = uk_arg_array(&d->x);
  uk_launch l;
  memset(&l, 0, sizeof l);
  l.stream = d->stream;
  bu_check(uk_event_record(d->start, d->stream), "record");
  for (int r = 0; r < REPS; r++) bu_check(uk_elementwise_call(copy, &in, 1, &d->z, 1, &l), "copy");
  bu_check(uk_event_record(d->end, d->stream), "record");
  bu_check(uk_event_synchronize(d->end), "sync");
  float ms = 0;
  bu_check(uk_event_elapsed(d->start, d->end, &ms), "elapsed");
  d->gbs = 2.0 * (double)N * sizeof(float) * REPS / (ms * 1e-3) / 1e9;
  return NULL;
}

int main(int argc, char **argv) {
  const char *json = argc > 1 ? argv[1] : NULL;
  int ndev = 0;
  if (uk_device_count(&ndev) != UK_OK || ndev < 2) {
    printf("SKIP: needs 2 GPUs, found %d\n", ndev);
    return 77;
  }
  uk_context *ctx;
  bu_check(uk_context_create(NULL, &ctx), "context");
  bu_check(uk_elementwise_create(
               ctx,
               &(uk_elementwise_spec){
                   .in_params = "float32 x", .out_params = "float32 z", .operation = "z = x", .name = "copy_bw"},
               &copy),
           "kernel");
  dev d[2];
  for (int k = 0; k < 2; k++) {
    memset(&d[k], 0, sizeof d[k]);
    d[k].device = k;
    bu_check(uk_stream_create(k, UK_STREAM_NON_BLOCKING, 0, &d[k].stream), "stream");
    bu_check(uk_event_create(k, 0, &d[k].start), "event");
    bu_check(uk_event_create(k, 0, &d[k].end), "event");
    bu_check(uk_array_alloc(ctx, UK_FLOAT32, 1, &N, k, d[k].stream, &d[k].x), "alloc");
    bu_check(uk_array_alloc(ctx, UK_FLOAT32, 1, &N, k, d[k].stream, &d[k].z), "alloc");
    bu_check(uk_memset_d32_async(d[k].x.data, 0x3f800000u, (size_t)N, d[k].stream), "fill");
    timed_run(&d[k]); /* warm-up: compile, load, first touch */
  }
  double alone[2][ROUNDS], both[2][ROUNDS];
  for (int r = 0; r < ROUNDS; r++) {
    for (int k = 0; k < 2; k++) {
      timed_run(&d[k]);
      alone[k][r] = d[k].gbs;
    }
    pthread_t t[2];
    for (int k = 0; k < 2; k++)
      if (pthread_create(&t[k], NULL, timed_run, &d[k]) != 0) {
        fprintf(stderr, "pthread_create failed\n");
        return 1;
      }
    for (int k = 0; k < 2; k++) pthread_join(t[k], NULL);
    for (int k = 0; k < 2; k++) both[k][r] = d[k].gbs;
  }
  for (int k = 0; k < 2; k++) {
    double a = bu_median(alone[k], ROUNDS), b = bu_median(both[k], ROUNDS);
    char name[96];
    snprintf(name, sizeof name, "device %d copy bandwidth, both busy (GB/s)", k);
    bu_row(name, b, a, "GB/s", "the device alone", ">= 0.95 x alone", b >= 0.95 * a);
    printf("device %d: alone %.1f GB/s, both at once %.1f GB/s (%.1f%%)\n", k, a, b, 100.0 * b / a);
  }
  bu_finish("Two GPUs, one context: elementwise copy bandwidth alone and both at once (median of 5 rounds)", json);
  for (int k = 0; k < 2; k++) {
    uk_array_free(ctx, &d[k].x, d[k].stream);
    uk_array_free(ctx, &d[k].z, d[k].stream);
    uk_stream_synchronize(d[k].stream);
    uk_event_destroy(d[k].start);
    uk_event_destroy(d[k].end);
    uk_stream_destroy(d[k].stream);
  }
  uk_elementwise_destroy(copy);
  uk_context_destroy(ctx);
  return 0;
}
