/* nvJitLink, loaded at run time, and libcudadevrt.a found in the toolkit.
 * Only types come from nvJitLink.h; every call goes through the table. */
#include "runtime/link.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <nvJitLink.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/hash.h"
#include "base/once.h"
#include "base/strbuf.h"
#include "runtime/image_check.h"

#ifndef UK_BUILD_CUDA_LIBDIR
#define UK_BUILD_CUDA_LIBDIR ""
#endif

#define MAX_DEVRT_BYTES (256u << 20)

/* ------------------------------------------------------------------------ */
/* The library                                                               */
/* ------------------------------------------------------------------------ */

static struct {
  nvJitLinkResult (*create)(nvJitLinkHandle *, uint32_t, const char **);
  nvJitLinkResult (*destroy)(nvJitLinkHandle *);
  nvJitLinkResult (*add_data)(nvJitLinkHandle, nvJitLinkInputType, const void *, size_t, const char *);
  nvJitLinkResult (*complete)(nvJitLinkHandle);
  nvJitLinkResult (*cubin_size)(nvJitLinkHandle, size_t *);
  nvJitLinkResult (*cubin)(nvJitLinkHandle, void *);
  nvJitLinkResult (*error_log_size)(nvJitLinkHandle, size_t *);
  nvJitLinkResult (*error_log)(nvJitLinkHandle, char *);
  nvJitLinkResult (*info_log_size)(nvJitLinkHandle, size_t *);
  nvJitLinkResult (*info_log)(nvJitLinkHandle, char *);
  nvJitLinkResult (*version)(unsigned *, unsigned *);
} jl;

static uk__once lib_once = UK__ONCE_INIT;
static uk_status lib_status = UK_ERR_NO_DEVICE;
static char lib_reason[1024];
static unsigned jl_major, jl_minor;

/* The toolkit's library directories, in search order, into `out` (each
 * NUL-terminated, at most `max`); returns how many. */
static int toolkit_lib_dirs(const uk__toolkit *tk, char out[][PATH_MAX], int max) {
  int n = 0;
  const char *homes[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH")};
  for (size_t k = 0; k < 2; k++) {
    if (!homes[k] || !*homes[k]) continue;
    if (n < max) snprintf(out[n++], PATH_MAX, "%s/lib64", homes[k]);
    if (n < max) snprintf(out[n++], PATH_MAX, "%s/lib", homes[k]);
  }
  /* The lib dirs beside the include dirs NVRTC uses (.../include -> .../lib64). */
  const char *const *inc = tk->include_dirs;
  int ninc = inc ? tk->num_include_dirs : 0;
  for (int k = 0; k < ninc; k++) {
    const char *slash = strrchr(inc[k], '/');
    if (!slash || strcmp(slash, "/include") != 0) continue;
    int len = (int)(slash - inc[k]);
    if (n < max) snprintf(out[n++], PATH_MAX, "%.*s/lib64", len, inc[k]);
    if (n < max) snprintf(out[n++], PATH_MAX, "%.*s/lib", len, inc[k]);
  }
  if (*UK_BUILD_CUDA_LIBDIR && n < max) snprintf(out[n++], PATH_MAX, "%s", UK_BUILD_CUDA_LIBDIR);
  if (n < max) snprintf(out[n++], PATH_MAX, "/usr/local/cuda/lib64");
  return n;
}

static int resolve(void *lib) {
#define UK__JL_SYM_(field, name)                  \
  if (!(*(void **)&jl.field = dlsym(lib, name))) \
    return 0;
  UK__JL_SYM_(create, "nvJitLinkCreate")
  UK__JL_SYM_(destroy, "nvJitLinkDestroy")
  UK__JL_SYM_(add_data, "nvJitLinkAddData")
  UK__JL_SYM_(complete, "nvJitLinkComplete")
  UK__JL_SYM_(cubin_size, "nvJitLinkGetLinkedCubinSize")
  UK__JL_SYM_(cubin, "nvJitLinkGetLinkedCubin")
  UK__JL_SYM_(error_log_size, "nvJitLinkGetErrorLogSize")
  UK__JL_SYM_(error_log, "nvJitLinkGetErrorLog")
  UK__JL_SYM_(info_log_size, "nvJitLinkGetInfoLogSize")
  UK__JL_SYM_(info_log, "nvJitLinkGetInfoLog")
  UK__JL_SYM_(version, "nvJitLinkVersion")
#undef UK__JL_SYM_
  return 1;
}

static void load_lib(const void *tk_v) {
  const uk__toolkit *tk = tk_v;
  int ver = tk->nvrtc_version;
  char soname[64];
  snprintf(soname, sizeof soname, "libnvJitLink.so.%d", ver > 0 ? ver / 1000 : 13);
  uk_strbuf looked;
  uk__sb_init(&looked);
  char dirs[12][PATH_MAX];
  int ndirs = toolkit_lib_dirs(tk, dirs, 12);
  void *lib = NULL;
  const char *env = getenv("UKERN_NVJITLINK");
  if (env && *env) {
    uk__sb_addf(&looked, "%s ($UKERN_NVJITLINK)", env);
    lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
  }
  if (env && *env) ndirs = 0; /* an override is the only place looked at */
  for (int k = 0; k < ndirs && !lib; k++) {
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%.4000s/%s", dirs[k], soname);
    uk__sb_addf(&looked, "%s%s", looked.len ? ", " : "", p);
    if (access(p, R_OK) == 0) lib = dlopen(p, RTLD_NOW | RTLD_LOCAL);
  }
  if (!lib && !(env && *env)) {
    uk__sb_addf(&looked, "%sthe loader's path", looked.len ? ", " : "");
    lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  }
  if (!lib) {
    snprintf(lib_reason, sizeof lib_reason,
             "nvJitLink is not available: %s not found (looked in: %s); install the CUDA toolkit's "
             "nvJitLink or set UKERN_NVJITLINK to the library's path",
             env && *env ? env : soname, looked.failed ? "?" : uk__sb_str(&looked));
  } else if (!resolve(lib) || jl.version(&jl_major, &jl_minor) != NVJITLINK_SUCCESS) {
    snprintf(lib_reason, sizeof lib_reason, "nvJitLink: %s lacks the entry points ukern needs", soname);
  } else {
    lib_status = UK_OK;
  }
  uk__sb_release(&looked);
}

uk_status uk__link_load(const uk__toolkit *tk) {
  uk__once_run(&lib_once, load_lib, tk);
  return lib_status == UK_OK ? UK_OK : uk__errorf(lib_status, "%s", lib_reason);
}

/* ------------------------------------------------------------------------ */
/* libcudadevrt.a                                                            */
/* ------------------------------------------------------------------------ */

static uk__once devrt_once = UK__ONCE_INIT;
static void *devrt_data;
static size_t devrt_size;
static char devrt_path[PATH_MAX];
static char devrt_digest[33];
static char devrt_reason[1024];

/* A regular file owned by root or the user and not writable by others
 * (no link, FIFO or planted file can stand in), read whole. */
static int read_trusted(const char *path, void **data, size_t *size) {
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat s;
  int ok = fstat(fd, &s) == 0 && S_ISREG(s.st_mode) && (s.st_uid == 0 || s.st_uid == geteuid()) &&
           !(s.st_mode & S_IWOTH) && s.st_size > 0 && (uint64_t)s.st_size <= MAX_DEVRT_BYTES;
  char *buf = ok ? malloc((size_t)s.st_size) : NULL;
  size_t got = 0;
  while (buf && got < (size_t)s.st_size) {
    ssize_t r = read(fd, buf + got, (size_t)s.st_size - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(fd);
  if (!buf || got != (size_t)s.st_size) {
    free(buf);
    return 0;
  }
  *data = buf;
  *size = got;
  return 1;
}

static void find_devrt(const void *tk) {
  uk_strbuf looked;
  uk__sb_init(&looked);
  char dirs[12][PATH_MAX];
  int ndirs = 0;
  const char *env = getenv("UKERN_CUDADEVRT");
  if (env && *env) snprintf(dirs[ndirs++], PATH_MAX, "%s", env);
  else ndirs = toolkit_lib_dirs(tk, dirs, 12);
  for (int k = 0; k < ndirs && !devrt_data; k++) {
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%.4000s%s", dirs[k], env && *env ? "" : "/libcudadevrt.a");
    uk__sb_addf(&looked, "%s%s", looked.len ? ", " : "", p);
    if (read_trusted(p, &devrt_data, &devrt_size)) snprintf(devrt_path, sizeof devrt_path, "%s", p);
  }
  if (devrt_data && uk__archive_check(devrt_data, devrt_size, devrt_path) != UK_OK) {
    snprintf(devrt_reason, sizeof devrt_reason, "%s; set UKERN_CUDADEVRT to a good libcudadevrt.a", uk_last_error());
    uk__error_clear();
    free(devrt_data);
    devrt_data = NULL;
  } else if (devrt_data) uk__hash128_hex(uk__hash128(devrt_data, devrt_size), devrt_digest);
  else
    snprintf(devrt_reason, sizeof devrt_reason,
             "libcudadevrt.a (the device runtime for kernels that launch kernels) not found or not "
             "trusted (a regular file owned by root or you): looked in %s; set UKERN_CUDADEVRT to its path",
             looked.failed ? "?" : uk__sb_str(&looked));
  uk__sb_release(&looked);
}

uk_status uk__link_devrt(const uk__toolkit *tk, const void **data, size_t *size, const char **path) {
  uk__once_run(&devrt_once, find_devrt, tk);
  if (!devrt_data) return uk__errorf(UK_ERR_NOT_FOUND, "%s", devrt_reason);
  *data = devrt_data;
  *size = devrt_size;
  if (path) *path = devrt_path;
  return UK_OK;
}

/* ------------------------------------------------------------------------ */
/* Options and the key                                                       */
/* ------------------------------------------------------------------------ */

int uk__link_wanted(const char *const *options, int n, int *lto) {
  int rdc = 0;
  *lto = 0;
  for (int k = 0; k < n; k++) {
    const char *o = options[k];
    if (!o) continue;
    if (!strcmp(o, "-rdc=true") || !strcmp(o, "--relocatable-device-code=true") || !strcmp(o, "-dc") ||
        !strcmp(o, "--device-c"))
      rdc = 1;
    else if (!strcmp(o, "-rdc=false") || !strcmp(o, "--relocatable-device-code=false"))
      rdc = 0;
    else if (!strcmp(o, "-dlto") || !strcmp(o, "--dlink-time-opt"))
      *lto = 1;
  }
  return rdc || *lto;
}

void uk__link_identity(const uk__toolkit *tk, char out[96]) {
  const void *d;
  size_t n;
  int have_lib = uk__link_load(tk) == UK_OK;
  int have_devrt = uk__link_devrt(tk, &d, &n, NULL) == UK_OK;
  if (!have_lib || !have_devrt) uk__error_clear();
  snprintf(out, 96, "nvjitlink %u.%u devrt %s", have_lib ? jl_major : 0, have_lib ? jl_minor : 0,
           have_devrt ? devrt_digest : "none");
}

int uk__link_key(const uk__toolkit *tk, const uk__compile_req *req, char out[96]) {
  int lto = 0;
  out[0] = '\0';
  if (!uk__link_wanted(req->options, req->num_options, &lto)) return 0;
  uk__link_identity(tk, out);
  return 1;
}

/* ------------------------------------------------------------------------ */
/* Linking                                                                   */
/* ------------------------------------------------------------------------ */

static char *take_log(nvJitLinkHandle h, int error) {
  size_t n = 0;
  if ((error ? jl.error_log_size(h, &n) : jl.info_log_size(h, &n)) != NVJITLINK_SUCCESS) n = 0;
  char *log = calloc(n + 1, 1);
  if (log && n > 0 && (error ? jl.error_log(h, log) : jl.info_log(h, log)) != NVJITLINK_SUCCESS) log[0] = '\0';
  return log;
}

static const char *result_name(nvJitLinkResult r) {
  switch (r) {
  case NVJITLINK_ERROR_UNRECOGNIZED_OPTION: return "unrecognized option";
  case NVJITLINK_ERROR_MISSING_ARCH: return "missing -arch";
  case NVJITLINK_ERROR_INVALID_INPUT: return "invalid input";
  case NVJITLINK_ERROR_PTX_COMPILE: return "PTX compile error";
  case NVJITLINK_ERROR_NVVM_COMPILE: return "NVVM compile error";
  case NVJITLINK_ERROR_INTERNAL: return "internal error";
  case NVJITLINK_ERROR_UNRECOGNIZED_INPUT: return "unrecognized input";
  case NVJITLINK_ERROR_FINALIZE: return "finalize error";
  case NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS: return "incompatible options";
  case NVJITLINK_ERROR_INCORRECT_INPUT_TYPE: return "incorrect input type";
  case NVJITLINK_ERROR_ARCH_MISMATCH: return "arch mismatch";
  case NVJITLINK_ERROR_OUTDATED_LIBRARY: return "outdated library (an input is newer than nvJitLink)";
  case NVJITLINK_ERROR_LTO_NOT_ENABLED: return "LTO-IR input needs -lto (add -dlto to the options)";
  default: return "error";
  }
}

/* The first line of nvJitLink's error log that says "error", else its first. */
static void first_line(const char *log, char *out, size_t cap) {
  const char *p = strstr(log, "error");
  if (p)
    while (p > log && p[-1] != '\n') p--;
  else p = log;
  size_t n = strcspn(p, "\n");
  snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), p);
}

uk_status uk__link_run(const uk__toolkit *tk, const uk__link_job *job, char **image, size_t *size, char **info) {
  uk_status st = uk__link_load(tk);
  if (st != UK_OK) return st;
  const void *devrt = NULL;
  size_t devrt_n = 0;
  if (job->devrt && (st = uk__link_devrt(tk, &devrt, &devrt_n, NULL)) != UK_OK) return st;
  const char *what = job->what ? job->what : "linking";
  /* nvJitLink trusts containers' headers: a malformed one crashes or hangs it. */
  for (int k = 0; k < job->num_inputs; k++) {
    const uk__link_input *in = &job->inputs[k];
    char label[160];
    snprintf(label, sizeof label, "%s: input %d ('%.64s')", what, k, in->name ? in->name : "input");
    if ((st = uk__image_check(in->kind, in->data, in->size, label)) != UK_OK) return st;
  }
  char arch_opt[40];
  uk__arch_option(job->arch, arch_opt, sizeof arch_opt);
  const char *stack_opts[16];
  int nopt = 2 + job->num_options;
  const char **opts = nopt <= 16 ? stack_opts : malloc((size_t)nopt * sizeof *opts);
  if (!opts) return uk__errorf(UK_ERR_NOMEM, "out of memory %s", what);
  int no = 0;
  opts[no++] = arch_opt;
  if (job->lto) opts[no++] = "-lto";
  for (int k = 0; k < job->num_options; k++) opts[no++] = job->options[k];

  nvJitLinkHandle h = NULL;
  char *buf = NULL, *err = NULL;
  nvJitLinkResult r = jl.create(&h, (uint32_t)no, opts);
  const char *failed_at = "nvJitLinkCreate";
  for (int k = 0; r == NVJITLINK_SUCCESS && k < job->num_inputs; k++) {
    const uk__link_input *in = &job->inputs[k];
    r = jl.add_data(h, (nvJitLinkInputType)in->kind, in->data, in->size, in->name ? in->name : "input");
    failed_at = in->name ? in->name : "an input";
  }
  if (r == NVJITLINK_SUCCESS && devrt) {
    r = jl.add_data(h, NVJITLINK_INPUT_LIBRARY, devrt, devrt_n, "libcudadevrt.a");
    failed_at = devrt_path;
  }
  if (r == NVJITLINK_SUCCESS) {
    r = jl.complete(h);
    failed_at = "nvJitLinkComplete";
  }
  size_t n = 0;
  if (r == NVJITLINK_SUCCESS && (r = jl.cubin_size(h, &n)) == NVJITLINK_SUCCESS && n > 0) {
    if (!(buf = malloc(n))) {
      st = uk__errorf(UK_ERR_NOMEM, "out of memory %s", what);
      goto out;
    }
    r = jl.cubin(h, buf);
  }
  if (r != NVJITLINK_SUCCESS || n == 0) {
    err = h ? take_log(h, 1) : NULL;
    uk_strbuf log;
    uk__sb_init(&log);
    uk__sb_add(&log, "nvjitlink options:");
    for (int k = 0; k < no; k++) uk__sb_addf(&log, " %s", opts[k]);
    uk__sb_addc(&log, '\n');
    if (err) uk__sb_add(&log, err);
    char line[320] = "";
    if (err) first_line(err, line, sizeof line);
    st = uk__errorf_log(UK_ERR_COMPILE, log.failed ? "" : uk__sb_str(&log),
                        "nvJitLink: %s failed at %s: %s%s%s; see uk_last_error_log()", what, failed_at,
                        result_name(r), line[0] ? ": " : "", line);
    uk__sb_release(&log);
    goto out;
  }
  if (!(*info = take_log(h, 0))) {
    st = uk__errorf(UK_ERR_NOMEM, "out of memory %s", what);
    goto out;
  }
  *image = buf;
  *size = n;
  buf = NULL;
out:
  if (h) jl.destroy(&h);
  if (opts != stack_opts) free(opts);
  free(buf);
  free(err);
  return st;
}
