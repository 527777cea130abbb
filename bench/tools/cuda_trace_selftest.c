/* cuda_trace.c without a GPU: the shim in front of a fake driver
 * (cuda_trace_fake.c) passes every argument and result through, both by
 * dlsym and through cuGetProcAddress_v2, and writes the trace at exit.
 *   cuda_trace_selftest SHIM FAKE     (a child of itself does the calls) */
#include <dlfcn.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
                         void **, void **);
typedef int (*gpa_fn)(const char *, void **, int, unsigned long long, void *);

static int failures;
#define CHECK(c)                                                              \
  do {                                                                        \
    if (!(c)) {                                                               \
      fprintf(stderr, "cuda_trace_selftest:%d: %s\n", __LINE__, #c);          \
      failures++;                                                             \
    }                                                                         \
  } while (0)

static int calls(const char *shim) {
  void *h = dlopen(shim, RTLD_NOW | RTLD_LOCAL);
  CHECK(h != NULL);
  if (!h) return 1;
  int (*init)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
  launch_fn launch = (launch_fn)dlsym(h, "cuLaunchKernel");
  gpa_fn gpa = (gpa_fn)dlsym(h, "cuGetProcAddress_v2");
  int (*htod)(unsigned long long, const void *, size_t) =
      (int (*)(unsigned long long, const void *, size_t))dlsym(h, "cuMemcpyHtoD_v2");
  CHECK(init && launch && gpa && htod);
  if (failures) return 1;
  CHECK(init(0) == 0);
  CHECK(init(1) == 1); /* results come back */
  CHECK(launch((void *)0x1111, 2, 3, 4, 5, 6, 7, 0xFFFFFFFFu, (void *)0x2222, (void **)0x3333, (void **)0x4444) == 0);
  CHECK(launch((void *)0x1111, 2, 3, 4, 5, 6, 7, 0, (void *)0x2222, (void **)0x3333, (void **)0x4444) == 700);
  CHECK(htod(0xFFFFFFFF00000010ull, (const void *)0x20, (size_t)1 << 40) == 0);
  void *p = NULL, *p2 = NULL, *mod = NULL;
  int status = -1;
  CHECK(gpa("cuLaunchKernel", &p, 12000, 0, &status) == 0 && p && p != (void *)launch);
  CHECK(gpa("cuLaunchKernel", &p2, 12000, 0, &status) == 0 && p2 == p); /* one slot per pointer */
  if (p)
    CHECK(((launch_fn)p)((void *)0x1111, 2, 3, 4, 5, 6, 7, 0xFFFFFFFFu, (void *)0x2222, (void **)0x3333,
                         (void **)0x4444) == 0);
  CHECK(gpa("cuModuleLoadData", &p, 12000, 0, &status) == 0 && p);
  if (p) CHECK(((int (*)(void **, const void *))p)(&mod, (const void *)0x77) == 0 && mod == (void *)0x77);
  CHECK(gpa("cuNoSuchThing", &p, 12000, 0, &status) == 500);
  return failures ? 1 : 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "--calls")) return calls(argv[2]);
  if (argc != 3) return 2;
  char trace[] = "/tmp/uk-cuda-trace-XXXXXX", env_trace[64], env_real[4200];
  int fd = mkstemp(trace);
  if (fd < 0) return 1;
  close(fd);
  unlink(trace); /* the shim creates it (O_NOFOLLOW) */
  snprintf(env_trace, sizeof env_trace, "UK_CUDA_TRACE=%s", trace);
  snprintf(env_real, sizeof env_real, "UK_CUDA_TRACE_REAL=%s", argv[2]);
  char *env[] = {env_trace, env_real, NULL};
  char *child[] = {argv[0], "--calls", argv[1], NULL};
  pid_t pid;
  int st = 0;
  CHECK(posix_spawn(&pid, argv[0], NULL, NULL, child, env) == 0 && waitpid(pid, &st, 0) == pid);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  FILE *f = fopen(trace, "r");
  CHECK(f != NULL);
  int n_launch = 0, n_init = 0, n_gpa = 0, slow = 0, sums = 0;
  char line[512], name[128];
  while (f && fgets(line, sizeof line, f)) {
    double a, b;
    int r;
    if (sscanf(line, "call %127s %lf %lf %d", name, &a, &b, &r) == 4) {
      n_launch += !strcmp(name, "cuLaunchKernel");
      n_init += !strcmp(name, "cuInit");
      n_gpa += !strcmp(name, "cuGetProcAddress_v2");
      if (!strcmp(name, "cuModuleLoadData")) slow = b >= 2000 && r == 0;
    } else if (sscanf(line, "sum %127s %lf %lf %lf", name, &a, &b, &b) == 4) {
      sums++;
    }
  }
  if (f) fclose(f);
  unlink(trace);
  CHECK(n_launch == 3); /* two by name, one through cuGetProcAddress_v2 */
  CHECK(n_init == 2);
  CHECK(n_gpa == 4);
  CHECK(slow == 1);
  CHECK(sums == 5); /* cuInit, cuLaunchKernel, cuMemcpyHtoD_v2, cuGetProcAddress_v2, cuModuleLoadData */
  if (failures) return 1;
  printf("cuda_trace_selftest: ok\n");
  return 0;
}
