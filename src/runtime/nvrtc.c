/* NVRTC: compiling one program and finding the toolkit headers (the cache
 * key is compile_key.c's). NVRTC itself is loaded at the first compile
 * (nvrtc_lib.c), never by a process its disk cache serves. */
#include <limits.h>
#include <nvrtc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/embedded.h"
#include "base/error.h"
#include "base/hash.h"
#include "base/join.h"
#include "base/strbuf.h"
#include "runtime/arch.h"
#include "runtime/compile.h"
#include "runtime/first_use.h"
#include "runtime/link.h"
#include "runtime/include_scan.h"
#include "runtime/nvrtc_log.h"
#include "runtime/std_headers.h"
#include "runtime/nvrtc_lib.h" /* NVRTC through a table loaded at first use */

#ifndef UK_BUILD_CUDA_INCLUDE
#define UK_BUILD_CUDA_INCLUDE ""
#endif

#define MAX_INCLUDE_DIRS 16

/* ------------------------------------------------------------------------ */
/* Toolkit include directories, found once per process                       */
/* ------------------------------------------------------------------------ */

UK__FIRST_USE static pthread_once_t inc_once = PTHREAD_ONCE_INIT;
UK__FIRST_USE static char *inc_dirs[MAX_INCLUDE_DIRS];
UK__FIRST_USE static struct {
  dev_t dev;
  ino_t ino;
} inc_id[MAX_INCLUDE_DIRS]; /* to drop duplicates */
UK__FIRST_USE static int inc_count;
/* Whether the toolkit's headers are in them: asked only when a compile
 * fails or there is no directory at all (a disk hit does not pay its
 * stats); NULL when they are, else what is missing and where we looked. */
static pthread_once_t check_once = PTHREAD_ONCE_INIT;
static char *inc_error;

/* A walk over the candidates. Each path is built on the heap at its size:
 * PATH_MAX arrays nested on the stack were the deepest frames of a new
 * process's first disk hit (each new stack page a fault), and a PATH_MAX
 * heap buffer moved the heap's top as far. */
typedef struct search {
  void (*visit)(struct search *s, const char *cand);
  uk_strbuf looked; /* check_headers: the candidates, for its message */
  int nomem;
} search;

/* Duplicates (a symlinked toolkit named twice) are the same device and
 * inode: one stat, where realpath() would read every path component (this
 * runs in the first cache lookup of every process). */
static int add_dir(const char *dir) { /* 1 when dir is a directory */
  struct stat s;
  if (stat(dir, &s) != 0 || !S_ISDIR(s.st_mode)) return 0;
  for (int k = 0; k < inc_count; k++)
    if (inc_id[k].dev == s.st_dev && inc_id[k].ino == s.st_ino) return 1;
  char *copy = inc_count < MAX_INCLUDE_DIRS ? strdup(dir) : NULL;
  if (!copy) return 1;
  inc_dirs[inc_count] = copy;
  inc_id[inc_count].dev = s.st_dev;
  inc_id[inc_count++].ino = s.st_ino;
  return 1;
}

/* dir and its cccl/ subdirectory (CUB and libcu++ live there since CUDA
 * 13), when directories. */
static void add_candidate(search *s, const char *dir) {
  /* The same path named again (CUDA_HOME, the build's toolkit and the
   * default are often one directory) costs no stat: each is a syscall in the
   * first cache lookup of every process. */
  for (int k = 0; k < inc_count; k++)
    if (strcmp(inc_dirs[k], dir) == 0) return;
  if (!add_dir(dir)) return;
  char *sub = uk__join_alloc(dir, "/cccl", (char *)NULL);
  if (sub) add_dir(sub);
  else s->nomem = 1;
  free(sub);
}

static void visit_joined(search *s, const char *a, size_t alen, const char *b) {
  char *p = malloc(alen + strlen(b) + 1);
  if (!p) {
    s->nomem = 1;
    return;
  }
  memcpy(p, a, alen);
  memcpy(p + alen, b, strlen(b) + 1);
  s->visit(s, p);
  free(p);
}

/* Each candidate in order: $UKERN_CUDA_INCLUDE, $CUDA_HOME/include,
 * $CUDA_PATH/include, the toolkit found at build time (possibly a
 * ;-separated list), /usr/local/cuda/include. 0 when out of memory. */
static int each_candidate(search *s, void (*visit)(search *s, const char *cand)) {
  static const char *const env[][2] = {
      {"UKERN_CUDA_INCLUDE", ""}, {"CUDA_HOME", "/include"}, {"CUDA_PATH", "/include"}};
  s->visit = visit;
  s->nomem = 0;
  for (size_t k = 0; k < sizeof env / sizeof env[0]; k++) {
    const char *v = getenv(env[k][0]);
    if (v && *v) visit_joined(s, v, strlen(v), env[k][1]);
  }
  const char *b = UK_BUILD_CUDA_INCLUDE;
  while (*b) {
    const char *e = strchr(b, ';');
    size_t n = e ? (size_t)(e - b) : strlen(b);
    if (n > 0) visit_joined(s, b, n, "");
    if (!e) break;
    b = e + 1;
  }
  visit(s, "/usr/local/cuda/include");
  return !s->nomem;
}

static void find_include_dirs(void) {
  search s;
  (void)each_candidate(&s, add_candidate); /* out of memory: the directories found */
}

static int has_entry(const char *dir, const char *name, int want_dir) {
  char *p = uk__join_alloc(dir, "/", name, (char *)NULL);
  struct stat st;
  int yes = p && stat(p, &st) == 0 && (want_dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
  free(p);
  return yes;
}

/* Each candidate once, in order: "a, b, c". */
static void note_candidate(search *s, const char *cand) {
  size_t n = strlen(cand);
  for (const char *p = uk__sb_str(&s->looked); *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] ? 2 : 0))
    if (strncmp(p, cand, n) == 0 && (p[n] == ',' || p[n] == '\0')) return;
  if (s->looked.len) uk__sb_add(&s->looked, ", ");
  uk__sb_add(&s->looked, cand);
}

static void check_headers(void) {
  pthread_once(&inc_once, find_include_dirs);
  search s;
  uk__sb_init(&s.looked);
  if (!each_candidate(&s, note_candidate) || s.looked.failed) {
    inc_error = strdup("out of memory looking for the CUDA toolkit headers");
    uk__sb_release(&s.looked);
    return;
  }
  int fp16 = 0, cub = 0;
  for (int k = 0; k < inc_count && !(fp16 && cub); k++) {
    fp16 = fp16 || has_entry(inc_dirs[k], "cuda_fp16.h", 0);
    cub = cub || has_entry(inc_dirs[k], "cub", 1);
  }
  if (!fp16 || !cub) {
    uk_strbuf msg;
    uk__sb_init(&msg);
    uk__sb_addf(&msg,
                "CUDA toolkit headers not found: no directory with %s%s%s (looked in: %s); set "
                "UKERN_CUDA_INCLUDE or CUDA_HOME",
                fp16 ? "" : "cuda_fp16.h", !fp16 && !cub ? " or " : "", cub ? "" : "cub/",
                s.looked.len ? uk__sb_str(&s.looked) : "nothing");
    inc_error = uk__sb_detach(&msg);
  }
  uk__sb_release(&s.looked);
}

const char *uk__nvrtc_headers_missing(void) {
  pthread_once(&check_once, check_headers);
  return inc_error;
}

uk_status uk__nvrtc_include_dirs(const char *const **dirs, int *count) {
  pthread_once(&inc_once, find_include_dirs);
  if (inc_count == 0) {
    const char *why = uk__nvrtc_headers_missing();
    return uk__errorf(UK_ERR_NOT_FOUND, "%s", why ? why : "no CUDA toolkit include directory found");
  }
  *dirs = (const char *const *)inc_dirs;
  *count = inc_count;
  return UK_OK;
}

void uk__nvrtc_toolkit(uk__toolkit *out) {
  out->include_dirs = NULL;
  out->num_include_dirs = 0;
  if (uk__nvrtc_include_dirs(&out->include_dirs, &out->num_include_dirs) != UK_OK) {
    out->include_dirs = NULL;
    out->num_include_dirs = 0;
    uk__error_clear();
  }
  if (uk__nvrtc_version(&out->nvrtc_version) != UK_OK) {
    out->nvrtc_version = 0;
    uk__error_clear();
  }
}

/* ------------------------------------------------------------------------ */
/* Versions and the cache key                                                */
/* ------------------------------------------------------------------------ */

uk_status uk__nvrtc_version(int *version) {
  UK__FIRST_USE static _Atomic int cached; /* the library's version never changes in a process */
  int v = atomic_load_explicit(&cached, memory_order_relaxed);
  /* Not loaded: the disk cache's memo for this library file, so that a disk
   * hit never loads NVRTC (nvrtc_lib.h). */
  if (!v && !uk__nvrtc_loaded() && (v = uk__nvrtc_version_known()) != 0) {
    *version = v;
    return UK_OK;
  }
  if (!v) {
    uk_status ls = uk__nvrtc_load();
    if (ls != UK_OK) return ls;
    int major = 0, minor = 0;
    nvrtcResult r = nvrtcVersion(&major, &minor);
    if (r != NVRTC_SUCCESS)
      return uk__errorf(UK_ERR_COMPILE, "nvrtcVersion: %s", nvrtcGetErrorString(r));
    v = major * 1000 + minor * 10;
    atomic_store_explicit(&cached, v, memory_order_relaxed);
  }
  *version = v;
  return UK_OK;
}

uk_status uk_nvrtc_version(int *version) {
  uk__error_clear();
  if (!version) return uk__errorf(UK_ERR_INVALID, "uk_nvrtc_version: version is NULL");
  return uk__nvrtc_version(version);
}

uk_status uk_nvrtc_load(void) {
  uk__error_clear();
  return uk__nvrtc_load();
}

/* ------------------------------------------------------------------------ */
/* Compiling                                                                 */
/* ------------------------------------------------------------------------ */

/* The first line of the log that reports an error ("error:"; else the first line),
 * cut to a readable length. */
static void first_error_line(const char *log, char *out, size_t cap) {
  const char *pick = NULL, *p = log;
  while (p && *p) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (n > 0 && !pick) pick = p;
    const char *m = strstr(p, "error:");
    if (m && (!e || m < e)) {
      pick = p;
      break;
    }
    p = e ? e + 1 : NULL;
  }
  out[0] = '\0';
  if (!pick) return;
  size_t n = strcspn(pick, "\n");
  if (n >= cap) n = cap - 1;
  memcpy(out, pick, n);
  out[n] = '\0';
}

/* "nvrtc options: -arch=sm_90 -I... ...": the exact options of the compile,
 * first in a failed compile's log (what PyCUDA's CompileError carries). An
 * option with a space or quote is shown in single quotes. */
static void add_options_line(uk_strbuf *sb, const char *const *opts, size_t n) {
  uk__sb_add(sb, "nvrtc options:");
  for (size_t k = 0; k < n; k++) {
    if (!strpbrk(opts[k], " \t'\"")) {
      uk__sb_addf(sb, " %s", opts[k]);
      continue;
    }
    uk__sb_add(sb, " '");
    for (const char *c = opts[k]; *c; c++) {
      if (*c == '\'') uk__sb_add(sb, "'\\''");
      else uk__sb_addc(sb, *c);
    }
    uk__sb_addc(sb, '\'');
  }
  uk__sb_addc(sb, '\n');
}

static uk_status nvrtc_fail(nvrtcResult r, const char *call) {
  if (r == NVRTC_ERROR_OUT_OF_MEMORY)
    return uk__errorf(UK_ERR_NOMEM, "%s: NVRTC ran out of memory", call);
  return uk__errorf(UK_ERR_COMPILE, "%s: %s", call, nvrtcGetErrorString(r));
}

/* Relocatable code (or LTO-IR) from NVRTC linked with nvJitLink into the
 * cubin, with libcudadevrt.a when the toolkit has it (link.h). *image is
 * replaced; the link's info log is appended to *log. */
uk_status uk__link_compiled(const uk__compile_req *req, const char *pname, int lto, char **image,
                             size_t *size, char **log) {
  uk__link_input in = {lto ? UK__LINK_LTOIR : UK__LINK_CUBIN, *image, *size, pname};
  uk__link_job job = {{req->arch, req->arch_flags}, lto, 1, &in, 1, NULL, 0, NULL};
  const void *d;
  size_t dn;
  uk__toolkit tk;
  uk__nvrtc_toolkit(&tk);
  if (uk__link_devrt(&tk, &d, &dn, NULL) != UK_OK) {
    uk__error_clear(); /* code that needs it fails to link, naming the missing symbols */
    job.devrt = 0;
  }
  char what[300];
  snprintf(what, sizeof what, "linking '%.200s' (relocatable device code)", pname);
  job.what = what;
  char *linked = NULL, *info = NULL;
  size_t n = 0;
  uk_status st = uk__link_run(&tk, &job, &linked, &n, &info);
  if (st != UK_OK) return st;
  uk_strbuf sb;
  uk__sb_init(&sb);
  uk__sb_add(&sb, *log);
  uk__sb_add(&sb, info);
  free(info);
  if (sb.failed) {
    uk__sb_release(&sb);
    free(linked);
    return uk__errorf(UK_ERR_NOMEM, "out of memory linking '%s'", pname);
  }
  free(*log);
  *log = uk__sb_detach(&sb);
  free(*image);
  *image = linked;
  *size = n;
  return UK_OK;
}

/* NVRTC's output: a cubin for a real sm arch; PTX for compute_XY (the
 * driver JIT-compiles it at load); linked first when the options ask for
 * relocatable device code or LTO. */
static uk_status program_output(nvrtcProgram prog, const uk__compile_req *req, const char *pname,
                                const char *const *opts, size_t nopts, char **image, size_t *size,
                                int *is_ptx, char **log) {
  int lto = 0, link = uk__link_wanted(opts, (int)nopts, &lto);
  nvrtcResult r;
  size_t n = 0;
  const char *call = lto ? "nvrtcGetLTOIRSize" : "nvrtcGetCUBINSize";
  *is_ptx = 0;
  if (lto) {
    r = nvrtcGetLTOIRSize(prog, &n);
  } else if ((r = nvrtcGetCUBINSize(prog, &n)) != NVRTC_SUCCESS || n == 0) {
    *is_ptx = 1;
    call = "nvrtcGetPTXSize";
    r = nvrtcGetPTXSize(prog, &n);
  }
  if (r != NVRTC_SUCCESS) return nvrtc_fail(r, call);
  if (!(*image = malloc(n ? n : 1))) return uk__errorf(UK_ERR_NOMEM, "out of memory compiling '%s'", pname);
  r = lto ? nvrtcGetLTOIR(prog, *image) : *is_ptx ? nvrtcGetPTX(prog, *image) : nvrtcGetCUBIN(prog, *image);
  if (r != NVRTC_SUCCESS) return nvrtc_fail(r, lto ? "nvrtcGetLTOIR" : *is_ptx ? "nvrtcGetPTX" : "nvrtcGetCUBIN");
  *size = n;
  if (link && !*is_ptx && !req->no_link) return uk__link_compiled(req, pname, lto, image, size, log);
  /* nvrtc's PTX size counts the NUL; the binary keeps the text length. */
  if (*is_ptx && n > 0 && (*image)[n - 1] == '\0') (*size)--;
  return UK_OK;
}

/* missing_headers_empty (Jitify's way): the headers NVRTC could not open,
 * given to it as empty ones on the next try. */
#define MAX_EMPTY_HEADERS 32
typedef struct empty_headers {
  char *name[MAX_EMPTY_HEADERS];
  int count;
} empty_headers;

/* The first `cannot open source file "NAME"` of a log that is not yet
 * empty: 1 and NAME added to e, else 0 (-1 out of memory). */
static int add_missing_header(empty_headers *e, const char *log) {
  static const char what[] = "cannot open source file \"";
  for (const char *p = strstr(log, what); p; p = strstr(p + 1, what)) {
    const char *name = p + sizeof what - 1, *end = strchr(name, '"');
    if (!end || end == name || memchr(name, '\n', (size_t)(end - name))) continue;
    int seen = 0;
    for (int k = 0; k < e->count && !seen; k++)
      seen = strlen(e->name[k]) == (size_t)(end - name) && !memcmp(e->name[k], name, (size_t)(end - name));
    if (seen) continue; /* given empty and still not opened: NVRTC's error stands */
    if (e->count == MAX_EMPTY_HEADERS) return 0;
    if (!(e->name[e->count] = strndup(name, (size_t)(end - name)))) return -1;
    e->count++;
    return 1;
  }
  return 0;
}

/* "ukern: header "x.h" not found: compiled as empty (missing_headers_empty)",
 * a line for each, before the log (*log replaced). */
static int note_empty_headers(const empty_headers *e, char **log) {
  if (!e->count) return 0;
  uk_strbuf sb;
  uk__sb_init(&sb);
  for (int k = 0; k < e->count; k++)
    uk__sb_addf(&sb, "ukern: header \"%s\" not found: compiled as empty (missing_headers_empty)\n", e->name[k]);
  uk__sb_add(&sb, *log ? *log : "");
  if (sb.failed) {
    uk__sb_release(&sb);
    return -1;
  }
  char *text = strdup(uk__sb_str(&sb));
  uk__sb_release(&sb);
  if (!text) return -1;
  free(*log);
  *log = text;
  return 0;
}

uk_status uk__nvrtc_compile(const uk__compile_req *req, uk__binary **out) {
  const char *pname = req->name && *req->name ? req->name : "module";
  uk_status st = UK_OK;
  nvrtcResult r;
  nvrtcProgram prog = NULL;
  const char **hsrc = NULL, **hname = NULL, **opts = NULL, **lowered = NULL;
  char *log = NULL, *image = NULL;
  char arch_opt[32];
  char **incs = NULL;
  const char *const *std_names = NULL, *const *std_texts = NULL;
  int nstd = 0;
  empty_headers empty = {{NULL}, 0};
  if (!req->no_std_headers) {
    uk__toolkit tk;
    uk__nvrtc_toolkit(&tk);
    uk__std_headers(&tk, &std_names, &std_texts, &nstd);
  }
  int nh = uk__embedded_header_count + nstd;
  int nincs = 0;

  if (req->arch <= 0)
    return uk__errorf(UK_ERR_INVALID, "compiling '%s': no arch given (sm_XY as XY)", pname);
  if ((st = uk__nvrtc_load()) != UK_OK) return st;
  const char *const *dirs = NULL;
  /* Without the toolkit headers a self-contained program still compiles;
   * one that needs them fails with NVRTC's "cannot open source file". */
  if (uk__nvrtc_include_dirs(&dirs, &nincs) != UK_OK) {
    uk__error_clear();
    dirs = NULL;
    nincs = 0;
  }
  size_t nopt = 1 + (size_t)nincs + (size_t)req->num_options;
  size_t hcap = (size_t)nh + 1 + (req->missing_headers_empty ? MAX_EMPTY_HEADERS : 0);
  hsrc = calloc(hcap, sizeof *hsrc);
  hname = calloc(hcap, sizeof *hname);
  opts = calloc(nopt, sizeof *opts);
  incs = calloc((size_t)nincs + 1, sizeof *incs);
  lowered = calloc((size_t)req->num_name_expressions + 1, sizeof *lowered);
  if (!hsrc || !hname || !opts || !incs || !lowered) goto nomem;
  for (int k = 0; k < uk__embedded_header_count; k++) {
    hsrc[k] = uk__embedded_headers[k].data;
    hname[k] = uk__embedded_headers[k].name;
  }
  for (int k = 0; k < nstd; k++) { /* <type_traits> -> libcu++ (std_headers.h) */
    hsrc[uk__embedded_header_count + k] = std_texts[k];
    hname[uk__embedded_header_count + k] = std_names[k];
  }
  size_t no = 0;
  uk__arch_option((uk__arch){req->arch, req->arch_flags}, arch_opt, sizeof arch_opt);
  opts[no++] = arch_opt;
  for (int k = 0; k < nincs; k++) {
    size_t n = strlen(dirs[k]) + 3;
    if (!(incs[k] = malloc(n))) goto nomem;
    snprintf(incs[k], n, "-I%s", dirs[k]);
    opts[no++] = incs[k];
  }
  for (int k = 0; k < req->num_options; k++) opts[no++] = req->options[k];

again:
  r = nvrtcCreateProgram(&prog, req->source, pname, nh + empty.count, hsrc, hname);
  if (r != NVRTC_SUCCESS) {
    prog = NULL;
    st = nvrtc_fail(r, "nvrtcCreateProgram");
    goto out;
  }
  for (int k = 0; k < req->num_name_expressions; k++) {
    if ((r = nvrtcAddNameExpression(prog, req->name_expressions[k])) != NVRTC_SUCCESS) {
      st = nvrtc_fail(r, "nvrtcAddNameExpression");
      goto out;
    }
  }
  nvrtcResult cr = nvrtcCompileProgram(prog, (int)no, opts);

  size_t log_size = 0;
  if ((r = nvrtcGetProgramLogSize(prog, &log_size)) != NVRTC_SUCCESS) {
    st = nvrtc_fail(r, "nvrtcGetProgramLogSize");
    goto out;
  }
  if (!(log = calloc(log_size + 1, 1))) goto nomem;
  if (log_size > 0 && (r = nvrtcGetProgramLog(prog, log)) != NVRTC_SUCCESS) {
    st = nvrtc_fail(r, "nvrtcGetProgramLog");
    goto out;
  }

  if (cr != NVRTC_SUCCESS) {
    if (cr == NVRTC_ERROR_OUT_OF_MEMORY) {
      st = nvrtc_fail(cr, "nvrtcCompileProgram");
      goto out;
    }
    int added = req->missing_headers_empty ? add_missing_header(&empty, log) : 0;
    if (added < 0) goto nomem;
    if (added) { /* once more, with that header empty */
      hsrc[nh + empty.count - 1] = "";
      hname[nh + empty.count - 1] = empty.name[empty.count - 1];
      nvrtcDestroyProgram(&prog);
      prog = NULL;
      free(log);
      log = NULL;
      goto again;
    }
    if (note_empty_headers(&empty, &log) < 0) goto nomem;
    uk__nvrtc_log_readable(&log); /* "operation:1:9: error: ..." */
    char line[320];
    first_error_line(log, line, sizeof line);
    if (!line[0]) snprintf(line, sizeof line, "%s", nvrtcGetErrorString(cr));
    /* A missing include with no toolkit found: say where we looked. */
    char where[700] = "";
    const char *missing = strstr(log, "cannot open source file") ? uk__nvrtc_headers_missing() : NULL;
    if (missing) snprintf(where, sizeof where, " (%s)", missing);
    uk_strbuf full;
    uk__sb_init(&full);
    add_options_line(&full, opts, no);
    uk__sb_add(&full, log);
    uk__sb_addc(&full, '\n');
    uk__sb_add_numbered(&full, req->source);
    if (req->what)
      st = uk__errorf_log(UK_ERR_COMPILE, uk__sb_str(&full),
                          "nvrtc: %s failed: %s%s; see uk_last_error_log()", req->what, line, where);
    else
      st = uk__errorf_log(UK_ERR_COMPILE, uk__sb_str(&full),
                          "nvrtc: compiling '%s' failed: %s%s; see uk_last_error_log()", pname, line, where);
    uk__sb_release(&full);
    goto out;
  }

  for (int k = 0; k < req->num_name_expressions; k++) {
    if ((r = nvrtcGetLoweredName(prog, req->name_expressions[k], &lowered[k])) != NVRTC_SUCCESS) {
      st = uk__errorf(UK_ERR_COMPILE, "nvrtc: compiling '%s': no lowered name for '%s': %s", pname,
                      req->name_expressions[k], nvrtcGetErrorString(r));
      goto out;
    }
  }

  size_t size = 0;
  int is_ptx = 0;
  if ((st = program_output(prog, req, pname, opts, no, &image, &size, &is_ptx, &log)) != UK_OK) goto out;
  if (note_empty_headers(&empty, &log) < 0) goto nomem;
  st = uk__binary_create(image, size, is_ptx, req->arch, req->num_name_expressions,
                         req->name_expressions, lowered, log, out);
  goto out;

nomem:
  st = uk__errorf(UK_ERR_NOMEM, "out of memory compiling '%s'", pname);
out:
  if (prog) nvrtcDestroyProgram(&prog); /* lowered names live in prog: used above */
  for (int k = 0; k < empty.count; k++) free(empty.name[k]);
  for (int k = 0; incs && k < nincs; k++) free(incs[k]);
  free(incs);
  free(hsrc);
  free(hname);
  free(opts);
  free(lowered);
  free(log);
  free(image);
  return st;
}
