/* IPC across two processes. The parent allocates device memory
 * (uk_mem_alloc), fills it with random values, makes an interprocess event
 * and starts this same program as a child with both handles in hex. The
 * child opens the memory, checks every value, writes 3 * x + 1 back on a
 * stream from pinned memory, records the shared event after that copy and
 * tells the parent (one byte on a pipe) before waiting for the copy itself.
 * The parent waits on the event alone, then finds the new values; then the
 * child closes the mapping and exits 0. Also: memory from ukern's pool
 * cannot be shared (a clear error), and a process cannot open its own
 * handle. */
#include <errno.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

enum { N = 1 << 20, SEED = 2601 };

static void to_hex(const unsigned char *b, size_t n, char *out) {
  for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", b[i]);
}

static int from_hex(const char *s, unsigned char *b, size_t n) {
  if (strlen(s) != 2 * n) return -1;
  for (size_t i = 0; i < n; i++) {
    unsigned v;
    if (sscanf(s + 2 * i, "%2x", &v) != 1) return -1;
    b[i] = (unsigned char)v;
  }
  return 0;
}

static void fill(int *x) {
  ut_seed(SEED);
  for (int i = 0; i < N; i++) x[i] = (int)(ut_rand() % 2000001) - 1000000;
}

/* The child: argv = {prog, "--child", memhex, eventhex}; fd 3 is the pipe
 * to the parent. Exit status 0 on success, else the number of problems. */
static int child(const char *memhex, const char *evhex) {
  uk_ipc_mem_handle mh;
  uk_ipc_event_handle eh;
  if (from_hex(memhex, mh.bytes, sizeof mh.bytes) || from_hex(evhex, eh.bytes, sizeof eh.bytes)) return 90;
  uint64_t d = 0;
  void *ev = NULL, *s = NULL;
  int *x = malloc(N * sizeof *x), *ref = malloc(N * sizeof *ref), *pin = NULL;
  /* flags 0: ukern passes the flag the driver requires (it refuses 0) */
  uk_status st = uk_ipc_mem_open(0, &mh, 0, &d);
  if (st != UK_OK) fprintf(stderr, "child %d: uk_ipc_mem_open: %s\n", (int)getpid(), uk_last_error());
  CHECK(st == UK_OK);
  CHECK_OK(uk_ipc_event_open(0, &eh, &ev));
  CHECK_OK(uk_stream_create(0, UK_STREAM_NON_BLOCKING, 0, &s));
  CHECK_OK(uk_host_alloc(N * sizeof(int), 0, (void **)&pin));
  if (ut_failures || !pin) return 91;
  fill(ref);
  CHECK_OK(uk_memcpy_dtoh(x, d, N * sizeof *x));
  CHECK(memcmp(x, ref, N * sizeof *x) == 0);
  for (int i = 0; i < N; i++) pin[i] = 3 * ref[i] + 1;
  CHECK_OK(uk_memcpy_htod_async(d, pin, N * sizeof *pin, s));
  CHECK_OK(uk_event_record(ev, s));
  char one = 1;
  CHECK(write(3, &one, 1) == 1);
  close(3);
  CHECK_OK(uk_stream_synchronize(s));
  CHECK_OK(uk_event_destroy(ev));
  CHECK_OK(uk_ipc_mem_close(d));
  uk_stream_destroy(s);
  uk_host_free(pin);
  free(x);
  free(ref);
  return ut_failures ? 92 : 0;
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "--child") == 0) return child(argv[2], argv[3]);
  ut_require_gpu();
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(NULL, &ctx));

  /* Pool memory (ukern's default allocator) is refused with the reason. */
  uk_array pooled;
  int64_t n = 1024;
  CHECK_OK(uk_array_alloc(ctx, UK_INT32, 1, &n, 0, NULL, &pooled));
  CHECK_OK(uk_device_synchronize());
  uk_ipc_mem_handle mh;
  uk_status st = uk_ipc_mem_get_handle(pooled.data, &mh);
  if (st != UK_OK) {
    CHECK(st == UK_ERR_CUDA);
    CHECK_CONTAINS(uk_last_error(), "not from a stream-ordered pool");
  } else {
    printf("note: this driver shares pool memory through cuIpcGetMemHandle\n");
  }
  uk_array_free(ctx, &pooled, NULL);

  int *x = malloc(N * sizeof *x);
  fill(x);
  uint64_t d = 0;
  CHECK_OK(uk_mem_alloc(0, N * sizeof(int), &d));
  CHECK_OK(uk_memcpy_htod(d, x, N * sizeof *x));
  void *ev = NULL;
  CHECK_OK(uk_event_create(0, UK_EVENT_INTERPROCESS | UK_EVENT_DISABLE_TIMING, &ev));
  uk_ipc_event_handle eh;
  CHECK_OK(uk_ipc_mem_get_handle(d, &mh));
  CHECK_OK(uk_ipc_event_get_handle(ev, &eh));
  /* A timing event cannot be shared: the error says how to make one. */
  void *timed = NULL;
  uk_ipc_event_handle bad_eh;
  CHECK_OK(uk_event_create(0, 0, &timed));
  CHECK_STATUS(uk_ipc_event_get_handle(timed, &bad_eh), UK_ERR_CUDA);
  CHECK_CONTAINS(uk_last_error(), "UK_EVENT_INTERPROCESS | UK_EVENT_DISABLE_TIMING");
  uk_event_destroy(timed);
  /* Opening one's own handle is refused by the driver. */
  uint64_t self = 7;
  st = uk_ipc_mem_open(0, &mh, 0, &self);
  if (st == UK_OK) {
    printf("note: this driver opens a process's own IPC handle\n");
    CHECK_OK(uk_ipc_mem_close(self));
  } else {
    CHECK(st == UK_ERR_CUDA && self == 7);
    CHECK_CONTAINS(uk_last_error(), "cuIpcOpenMemHandle (device 0)");
  }
  if (ut_failures) return ut_finish("test_gpu_ipc");

  char memhex[2 * sizeof mh.bytes + 1], evhex[2 * sizeof eh.bytes + 1];
  to_hex(mh.bytes, sizeof mh.bytes, memhex);
  to_hex(eh.bytes, sizeof eh.bytes, evhex);
  int fds[2];
  CHECK(pipe(fds) == 0);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    /* The child's CUDA starts fresh: exec at once. */
    if (fds[0] != 3) close(fds[0]);
    if (fds[1] != 3) dup2(fds[1], 3); /* replaces the read end if that was 3 */
    char *args[] = {argv[0], "--child", memhex, evhex, NULL};
    execv("/proc/self/exe", args);
    _exit(93);
  }
  CHECK(pid > 0);
  close(fds[1]);
  char got = 0;
  ssize_t r;
  while ((r = read(fds[0], &got, 1)) < 0 && errno == EINTR) {
  }
  close(fds[0]);
  CHECK(r == 1 && got == 1);
  /* The child's copy is done once its event is: wait for that alone. */
  CHECK_OK(uk_event_synchronize(ev));
  int *y = malloc(N * sizeof *y);
  CHECK_OK(uk_memcpy_dtoh(y, d, N * sizeof *y));
  int bad = 0;
  for (int i = 0; i < N; i++) bad += y[i] != 3 * x[i] + 1;
  if (bad) fprintf(stderr, "%d values not changed by the child\n", bad);
  CHECK(bad == 0);
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status)) fprintf(stderr, "child status 0x%x\n", status);
  CHECK_OK(uk_event_destroy(ev));
  CHECK_OK(uk_mem_free(d));
  free(x);
  free(y);
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_ipc");
}
