/* Shared helpers for the benchmark programs: timing, medians, result rows
 * printed as a table (last) and written as JSON. */
#ifndef UK_BENCHUTIL_H
#define UK_BENCHUTIL_H

#include <stddef.h>

#include "ukern/ukern.h"

double bu_now_us(void);                      /* monotonic host clock */
double bu_median(double *v, int n);          /* sorts v */

/* Host cost per call of ukern's launch `uk_call(arg)` against a raw
 * cuLaunchKernel of `raw_fn` (1 block of 32 threads, `raw_args`) on `stream`
 * (a CUstream): batches of 200 calls of each, interleaved, 40 batches after
 * 3 warm-ups, the stream synchronised after each batch. Medians in us. */
void bu_host_cost(void (*uk_call)(void *), void *arg, void *raw_fn, void **raw_args, void *stream,
                  double *uk_us, double *raw_us);

/* A result row: what, ukern's figure, the ceiling/reference figure, unit,
 * the ratio ukern/ceiling (or ceiling/ukern when lower is better), and the
 * target text ("<= raw + 0.5 us"), pass = 1/0/-1 (no target). */
void bu_row(const char *name, double ukern, double reference, const char *unit,
            const char *reference_name, const char *target, int pass);
/* Prints the table to stdout and writes JSON to `json_path` (NULL: skip). */
void bu_finish(const char *title, const char *json_path);

/* Exits with a message when s != UK_OK. */
void bu_check(uk_status s, const char *what);

#endif
