/* bench_warm_start --trace (warm_start_trace.c): children run with the
 * tracing libcuda.so.1 (cuda_trace.c), each printing its driver calls. */
#ifndef UK_BENCH_WARM_START_TRACE_H
#define UK_BENCH_WARM_START_TRACE_H

/* Finds the shim (EXE_DIR/cuda-trace/libcuda.so.1) and the real driver this
 * process loaded. 0 on success, else -1 with a message on stderr. */
int ws_trace_setup(const char *exe_dir);

/* Runs argv once traced (trace file in tmpdir) and prints, under `label`,
 * its driver calls from cuInit's return to the result on the host: a table
 * per entry point and the timeline. 0 on success, -1 on failure. */
int ws_trace_child(char *const argv[], const char *label, const char *tmpdir);

#endif
