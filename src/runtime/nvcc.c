/* The nvcc backend (uk_module_options.backend = UK_BACKEND_NVCC): the
 * toolkit's nvcc compiles a request to a cubin (PTX for compute_XY), as
 * CuPy's backend='nvcc' does.
 *
 * nvcc is found once per process: $UKERN_NVCC, else bin/nvcc beside each
 * toolkit include directory NVRTC uses (uk__nvrtc_include_dirs), else the
 * PATH. Its version line ("V13.0.88") and path enter the cache key.
 *
 * Each compile runs in a private directory made by mkdtemp (mode 0700) under
 * $TMPDIR or /tmp: the source as kern.cu, ukern's embedded headers under
 * include/ (so <ukern/complex.cuh> and <cupy/complex.cuh> work as with
 * NVRTC), nvcc's output and its log. nvcc is started with posix_spawn (no
 * shell; arguments passed as they are); everything is removed afterwards. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/embedded.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "runtime/arch.h"
#include "runtime/compile.h"
#include "runtime/link.h"

extern char **environ;

#define MAX_LOG_BYTES (4u << 20)
#define MAX_IMAGE_BYTES (1u << 30)

static pthread_once_t find_once = PTHREAD_ONCE_INIT;
static char nvcc_path[PATH_MAX];
static char nvcc_key[PATH_MAX + 64]; /* "PATH VERSION", or "none" */

static int executable(const char *p) {
  struct stat s;
  return stat(p, &s) == 0 && S_ISREG(s.st_mode) && access(p, X_OK) == 0;
}

/* bin/nvcc of the toolkit whose include directory is `inc` (".../include"
 * or ".../include/cccl"). */
static int beside_include(const char *inc, char *out, size_t cap) {
  char dir[PATH_MAX];
  if (snprintf(dir, sizeof dir, "%s", inc) >= (int)sizeof dir) return 0;
  for (int up = 0; up < 2; up++) {
    char *slash = strrchr(dir, '/');
    if (!slash) return 0;
    int was_include = strcmp(slash, "/include") == 0;
    *slash = 0;
    if (was_include) return snprintf(out, cap, "%s/bin/nvcc", dir) < (int)cap && executable(out);
  }
  return 0;
}

static int on_path(char *out, size_t cap) {
  const char *path = getenv("PATH");
  while (path && *path) {
    const char *e = strchr(path, ':');
    size_t n = e ? (size_t)(e - path) : strlen(path);
    if (n > 0 && snprintf(out, cap, "%.*s/nvcc", (int)n, path) < (int)cap && executable(out)) return 1;
    path = e ? e + 1 : NULL;
  }
  return 0;
}

static uk_status run(const char *const *argv, const char *log_path, int *exit_code);
static char *read_file(const char *path, size_t max, size_t *size);

/* "V13.0.88" from `nvcc --version` (its last "release X.Y, VX.Y.Z" token). */
static void read_version(const char *dir, char *out, size_t cap) {
  char log[PATH_MAX];
  int code = -1;
  snprintf(out, cap, "unknown");
  if (snprintf(log, sizeof log, "%s/version.txt", dir) >= (int)sizeof log) return;
  const char *argv[] = {nvcc_path, "--version", NULL};
  int ran = run(argv, log, &code) == UK_OK && code == 0;
  uk__error_clear();
  size_t n = 0;
  char *text = ran ? read_file(log, 1 << 16, &n) : NULL;
  unlink(log);
  if (!text) return;
  const char *v = strstr(text, ", V");
  if (v) {
    v += 2;
    size_t len = strcspn(v, " \r\n");
    snprintf(out, cap, "%.*s", (int)len, v);
  }
  free(text);
}

static int make_private_dir(char *out, size_t cap) {
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !*tmp) tmp = "/tmp";
  if (snprintf(out, cap, "%s/ukern-nvcc-XXXXXX", tmp) >= (int)cap) return 0;
  return mkdtemp(out) != NULL;
}

static void find(void) {
  const char *env = getenv("UKERN_NVCC");
  const char *const *dirs = NULL;
  int n = 0, found = 0;
  if (env && *env) {
    found = executable(env) && snprintf(nvcc_path, sizeof nvcc_path, "%s", env) < (int)sizeof nvcc_path;
  } else {
    if (uk__nvrtc_include_dirs(&dirs, &n) != UK_OK) uk__error_clear();
    for (int k = 0; k < n && !found; k++) found = beside_include(dirs[k], nvcc_path, sizeof nvcc_path);
    if (!found) found = on_path(nvcc_path, sizeof nvcc_path);
  }
  if (!found) {
    nvcc_path[0] = 0;
    snprintf(nvcc_key, sizeof nvcc_key, "none");
    return;
  }
  char dir[PATH_MAX], ver[64];
  snprintf(ver, sizeof ver, "unknown");
  if (make_private_dir(dir, sizeof dir)) {
    read_version(dir, ver, sizeof ver);
    rmdir(dir);
  }
  snprintf(nvcc_key, sizeof nvcc_key, "%s %s", nvcc_path, ver);
}

const char *uk__nvcc_key(void) {
  pthread_once(&find_once, find);
  return nvcc_key;
}

/* Runs argv[0] with stdout and stderr into log_path; *exit_code is its exit
 * status (-1 when killed by a signal). */
static uk_status run(const char *const *argv, const char *log_path, int *exit_code) {
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa) != 0) return uk__errorf(UK_ERR_NOMEM, "nvcc: out of memory");
  int rc = posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (rc == 0) rc = posix_spawn_file_actions_adddup2(&fa, 1, 2);
  if (rc == 0) rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  if (rc == 0) rc = posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return uk__errorf(UK_ERR_IO, "nvcc: cannot start %s: %s", argv[0], strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return uk__errorf(UK_ERR_IO, "nvcc: waiting for %s: %s", argv[0], strerror(errno));
  }
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return UK_OK;
}

static char *read_file(const char *path, size_t max, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  uk_strbuf sb;
  uk__sb_init(&sb);
  char buf[8192];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0 && sb.len < max) uk__sb_addn(&sb, buf, n);
  fclose(f);
  if (sb.failed) {
    uk__sb_release(&sb);
    return NULL;
  }
  *size = sb.len;
  return uk__sb_detach(&sb);
}

static int write_file(const char *path, const char *data, size_t n) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return 0;
  size_t at = 0;
  while (at < n) {
    ssize_t w = write(fd, data + at, n - at);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    at += (size_t)w;
  }
  return close(fd) == 0 && at == n;
}

/* Writes the embedded headers under dir/include/, making subdirectories
 * ("ukern", "cupy") as needed. */
static int write_headers(const char *dir) {
  char p[PATH_MAX];
  if (snprintf(p, sizeof p, "%s/include", dir) >= (int)sizeof p || mkdir(p, 0700) != 0) return 0;
  for (int k = 0; k < uk__embedded_header_count; k++) {
    const uk__embedded_file *h = &uk__embedded_headers[k];
    const char *slash = strchr(h->name, '/');
    if (slash && snprintf(p, sizeof p, "%s/include/%.*s", dir, (int)(slash - h->name), h->name) < (int)sizeof p &&
        mkdir(p, 0700) != 0 && errno != EEXIST)
      return 0;
    if (snprintf(p, sizeof p, "%s/include/%s", dir, h->name) >= (int)sizeof p) return 0;
    if (!write_file(p, h->data, strlen(h->data))) return 0;
  }
  return 1;
}

/* Removes what write_headers and the compile left (only names we made). */
static void remove_dir(const char *dir) {
  char p[PATH_MAX];
  static const char *const files[] = {"kern.cu", "kern.cubin", "kern.ptx", "log.txt", NULL};
  for (int k = 0; files[k]; k++)
    if (snprintf(p, sizeof p, "%s/%s", dir, files[k]) < (int)sizeof p) unlink(p);
  for (int k = 0; k < uk__embedded_header_count; k++)
    if (snprintf(p, sizeof p, "%s/include/%s", dir, uk__embedded_headers[k].name) < (int)sizeof p) unlink(p);
  for (int k = 0; k < uk__embedded_header_count; k++) {
    const char *name = uk__embedded_headers[k].name, *slash = strchr(name, '/');
    if (slash && snprintf(p, sizeof p, "%s/include/%.*s", dir, (int)(slash - name), name) < (int)sizeof p) rmdir(p);
  }
  if (snprintf(p, sizeof p, "%s/include", dir) < (int)sizeof p) rmdir(p);
  rmdir(dir);
}

/* The first line of the log that reports an error, for the message. */
static void first_error(const char *log, char *out, size_t cap) {
  out[0] = 0;
  for (const char *l = log; l && *l;) {
    const char *e = strchr(l, '\n');
    size_t n = e ? (size_t)(e - l) : strlen(l);
    if (memmem(l, n, "error", 5)) {
      snprintf(out, cap, "%.*s", (int)(n < cap - 1 ? n : cap - 1), l);
      return;
    }
    l = e ? e + 1 : NULL;
  }
}

uk_status uk__nvcc_compile(const uk__compile_req *req, uk__binary **out) {
  const char *pname = req->name && *req->name ? req->name : "module";
  if (req->num_name_expressions > 0)
    return uk__errorf(UK_ERR_INVALID,
                      "compiling '%s': name expressions need the nvrtc backend (nvcc gives no lowered names)",
                      pname);
  if (req->missing_headers_empty)
    return uk__errorf(UK_ERR_INVALID,
                      "compiling '%s': missing_headers_empty needs the nvrtc backend (nvcc reads its includes "
                      "itself)",
                      pname);
  uk__nvcc_key();
  if (!nvcc_path[0])
    return uk__errorf(UK_ERR_NOT_FOUND,
                      "compiling '%s' with nvcc: nvcc not found (looked at $UKERN_NVCC, bin/nvcc beside the "
                      "CUDA include directories and the PATH); install the CUDA toolkit or set UKERN_NVCC",
                      pname);
  char dir[PATH_MAX - 64], src[PATH_MAX], outp[PATH_MAX], logp[PATH_MAX], inc[PATH_MAX], arch[40];
  int lto = 0, link = uk__link_wanted(req->options, req->num_options, &lto);
  if (lto)
    return uk__errorf(UK_ERR_INVALID, "compiling '%s' with nvcc: -dlto needs the nvrtc backend (or uk_module_link)",
                      pname);
  if (!make_private_dir(dir, sizeof dir))
    return uk__errorf(UK_ERR_IO, "compiling '%s' with nvcc: cannot make a temporary directory: %s", pname,
                      strerror(errno));
  uk__arch_option((uk__arch){req->arch, req->arch_flags}, arch, sizeof arch);
  int ptx = strstr(arch, "compute_") != NULL;
  snprintf(src, sizeof src, "%s/kern.cu", dir);
  snprintf(outp, sizeof outp, "%s/kern.%s", dir, ptx ? "ptx" : "cubin");
  snprintf(logp, sizeof logp, "%s/log.txt", dir);
  snprintf(inc, sizeof inc, "-I%s/include", dir);
  uk_status st = UK_OK;
  const char **argv = calloc((size_t)req->num_options + 12, sizeof *argv);
  char *log = NULL, *image = NULL;
  size_t log_n = 0, image_n = 0;
  int code = -1;
  if (!argv) {
    st = uk__errorf(UK_ERR_NOMEM, "out of memory compiling '%s'", pname);
    goto out;
  }
  if (!write_file(src, req->source, strlen(req->source)) || !write_headers(dir)) {
    st = uk__errorf(UK_ERR_IO, "compiling '%s' with nvcc: cannot write to %s: %s", pname, dir, strerror(errno));
    goto out;
  }
  int a = 0;
  argv[a++] = nvcc_path;
  argv[a++] = ptx ? "-ptx" : "-cubin";
  argv[a++] = arch;
  argv[a++] = inc;
  /* "x" includes of the source: NVRTC looks beside the program's name
   * (the working directory for a bare name); the source here is elsewhere. */
  char cwd[PATH_MAX], here[PATH_MAX + 3];
  if (getcwd(cwd, sizeof cwd) && snprintf(here, sizeof here, "-I%s", cwd) < (int)sizeof here) argv[a++] = here;
  for (int k = 0; k < req->num_options; k++) argv[a++] = req->options[k];
  argv[a++] = "-o";
  argv[a++] = outp;
  argv[a++] = src;
  argv[a] = NULL;
  if ((st = run(argv, logp, &code)) != UK_OK) goto out;
  log = read_file(logp, MAX_LOG_BYTES, &log_n);
  if (code != 0) {
    char line[320];
    first_error(log, line, sizeof line);
    if (!line[0]) snprintf(line, sizeof line, "nvcc exited with status %d", code);
    uk_strbuf full;
    uk__sb_init(&full);
    uk__sb_add(&full, "nvcc:");
    for (int k = 1; k < a; k++) {
      uk__sb_addc(&full, ' ');
      uk__sb_add(&full, argv[k]);
    }
    uk__sb_addc(&full, '\n');
    uk__sb_add(&full, log ? log : "");
    uk__sb_addc(&full, '\n');
    uk__sb_add_numbered(&full, req->source);
    st = uk__errorf_log(UK_ERR_COMPILE, uk__sb_str(&full), "nvcc: %s failed: %s; see uk_last_error_log()",
                        req->what ? req->what : pname, line);
    uk__sb_release(&full);
    goto out;
  }
  if (!(image = read_file(outp, MAX_IMAGE_BYTES, &image_n)) || image_n == 0) {
    st = uk__errorf(UK_ERR_IO, "compiling '%s' with nvcc: no output in %s", pname, outp);
    goto out;
  }
  /* Relocatable code (-rdc=true, -dc; added for kernels that launch
   * kernels) is linked with the device runtime, as NVRTC's is. */
  if (!ptx && link && !req->no_link) {
    if (!log && !(log = strdup(""))) {
      st = uk__errorf(UK_ERR_NOMEM, "out of memory compiling '%s'", pname);
      goto out;
    }
    if ((st = uk__link_compiled(req, pname, 0, &image, &image_n, &log)) != UK_OK) goto out;
  }
  st = uk__binary_create(image, image_n, ptx, req->arch, 0, NULL, NULL, log ? log : "", out);
out:
  remove_dir(dir);
  free(argv);
  free(log);
  free(image);
  return st;
}
