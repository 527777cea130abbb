#include "benchutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/cudadrv.h"

typedef struct {
  char name[96], unit[16], ref_name[48], target[48];
  double ukern, reference;
  int pass;
} row;

static row rows[128];
static int nrows;

double bu_now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double bu_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void bu_row(const char *name, double ukern, double reference, const char *unit,
            const char *reference_name, const char *target, int pass) {
  if (nrows >= 128) return;
  row *r = &rows[nrows++];
  snprintf(r->name, sizeof r->name, "%s", name);
  snprintf(r->unit, sizeof r->unit, "%s", unit);
  snprintf(r->ref_name, sizeof r->ref_name, "%s", reference_name ? reference_name : "");
  snprintf(r->target, sizeof r->target, "%s", target ? target : "");
  r->ukern = ukern;
  r->reference = reference;
  r->pass = pass;
}

void bu_finish(const char *title, const char *json_path) {
  if (json_path) {
    FILE *f = fopen(json_path, "w");
    if (f) {
      fprintf(f, "{\"title\": \"%s\", \"rows\": [\n", title);
      for (int k = 0; k < nrows; k++)
        fprintf(f,
                "  {\"case\": \"%s\", \"ukern\": %.6g, \"reference\": %.6g, \"unit\": \"%s\", "
                "\"reference_name\": \"%s\", \"target\": \"%s\", \"pass\": %d}%s\n",
                rows[k].name, rows[k].ukern, rows[k].reference, rows[k].unit, rows[k].ref_name,
                rows[k].target, rows[k].pass, k + 1 < nrows ? "," : "");
      fprintf(f, "]}\n");
      fclose(f);
    }
  }
  printf("\n%s\n", title);
  printf("| case | ukern | reference | ratio | target | met |\n|---|---|---|---|---|---|\n");
  for (int k = 0; k < nrows; k++) {
    row *r = &rows[k];
    char ref[96] = "-", ratio[32] = "-";
    if (r->reference > 0) {
      snprintf(ref, sizeof ref, "%.4g %s (%s)", r->reference, r->unit, r->ref_name);
      snprintf(ratio, sizeof ratio, "%.2f", r->ukern / r->reference);
    }
    printf("| %s | %.4g %s | %s | %s | %s | %s |\n", r->name, r->ukern, r->unit, ref, ratio,
           r->target[0] ? r->target : "-", r->pass < 0 ? "-" : r->pass ? "yes" : "NO");
  }
}

void bu_check(uk_status s, const char *what) {
  if (s == UK_OK) return;
  fprintf(stderr, "bench: %s: %s: %s\n%s\n", what, uk_status_name(s), uk_last_error(), uk_last_error_log());
  exit(1);
}

void bu_host_cost(void (*uk_call)(void *), void *arg, void *raw_fn, void **raw_args, void *stream,
                  double *uk_us, double *raw_us) {
  enum { BATCH = 200, BATCHES = 40 };
  double raw[BATCHES], uk[BATCHES];
  for (int bt = -3; bt < BATCHES; bt++) {
    double t0 = bu_now_us();
    for (int k = 0; k < BATCH; k++)
      uk__cu.cuLaunchKernel((CUfunction)raw_fn, 1, 1, 1, 32, 1, 1, 0, (CUstream)stream, raw_args, NULL);
    double t1 = bu_now_us();
    uk__cu.cuStreamSynchronize((CUstream)stream);
    double t2 = bu_now_us();
    for (int k = 0; k < BATCH; k++) uk_call(arg);
    double t3 = bu_now_us();
    uk__cu.cuStreamSynchronize((CUstream)stream);
    if (bt >= 0) {
      raw[bt] = (t1 - t0) / BATCH;
      uk[bt] = (t3 - t2) / BATCH;
    }
  }
  *raw_us = bu_median(raw, BATCHES);
  *uk_us = bu_median(uk, BATCHES);
}
