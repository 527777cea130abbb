/* Floors that compile and start-up rows are measured against, in the same
 * run: bare NVRTC on a CUB program with its automatic precompiled header,
 * and a bare driver program that loads a cubin and launches once. Each runs
 * in a fresh process (this program again, with a --floor-* argument), so no
 * state of ukern's is shared with it. */
#ifndef UK_BENCH_FLOOR_H
#define UK_BENCH_FLOOR_H

/* Handles `--floor-nvrtc NAME` and `--floor-load CUBIN` when argv asks for
 * one (returns the exit code to use), else -1. */
int floor_child_main(int argc, char **argv);

/* Bare NVRTC in a new process: the first and the second compile (new text
 * each, with -pch) of a program that includes <cub/warp/warp_reduce.cuh>, in
 * ms. `name` must be new in every bench run. Returns 0 on success. */
int floor_nvrtc_cub(const char *self, const char *name, double *first_ms, double *second_ms);

/* Writes the cubin of `source` (compiled by ukern's NVRTC path for this
 * machine's GPU, with a trivial kernel `_uk_floor_k` appended) to `path`.
 * Returns 0 on success. */
int floor_write_cubin(const char *source, int arch, const char *path);

/* Wall time (ms) of a new process running argv to its exit (status 0), from
 * before the spawn: what a user's first call in a new process costs, start-up
 * included. Returns a negative value on failure. */
double floor_spawn_ms(char *const argv[]);

#endif
