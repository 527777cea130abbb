/* NVRTC loaded at first use, and its version known without loading it
 * (nvrtc_lib.h). */
#define UK__NVRTC_LIB_IMPL
#include "runtime/nvrtc_lib.h"

#include <cuda.h> /* CUDA_VERSION: the NVRTC major version we were built for */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/hash.h"
#include "base/join.h"
#include "runtime/first_use.h"

#ifndef UK_BUILD_NVRTC_LIBRARY
#define UK_BUILD_NVRTC_LIBRARY ""
#endif

uk__nvrtc_api uk__nv;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
UK__FIRST_USE static atomic_int loaded;
static char load_error[600];

const char *uk__nvrtc_build_library = UK_BUILD_NVRTC_LIBRARY;

/* dir/name into path when that is a regular file (st set); 0 otherwise. */
static int file_in(const char *dir, size_t len, const char *name, char *path, size_t cap, struct stat *st) {
  if (len == 0 || dir[0] != '/' || len >= cap) return 0; /* relative: the loader's cwd, not ours to guess */
  memcpy(path, dir, len);
  return uk__join(path + len, cap - len, "/", name, (char *)NULL) >= 0 && stat(path, st) == 0 &&
         S_ISREG(st->st_mode);
}

/* Where the loader would find `name` (the soname) without loading it:
 * LD_LIBRARY_PATH's directories in order, the toolkit's (CUDA_HOME,
 * CUDA_PATH, /usr/local/cuda) and the system's. Loading the file found by
 * its path makes the memo's identity that of the file loaded. 0 when none. */
static int find_library(const char *name, char *path, size_t cap, struct stat *st) {
  const char *lp = secure_getenv("LD_LIBRARY_PATH");
  for (const char *p = lp; p && *p;) {
    size_t len = strcspn(p, ":;");
    if (file_in(p, len, name, path, cap, st)) return 1;
    p += len + (p[len] != '\0');
  }
  static const char *const homes[] = {"CUDA_HOME", "CUDA_PATH"};
  for (size_t k = 0; k < sizeof homes / sizeof homes[0]; k++) {
    const char *h = secure_getenv(homes[k]);
    char dir[4096];
    for (int lib = 0; h && *h && lib < 2; lib++) {
      long n = uk__join(dir, sizeof dir, h, lib ? "/lib" : "/lib64", (char *)NULL);
      if (n > 0 && file_in(dir, (size_t)n, name, path, cap, st)) return 1;
    }
  }
  static const char *const dirs[] = {
      "/usr/local/cuda/lib64", "/usr/local/cuda/lib", "/usr/local/cuda/targets/x86_64-linux/lib",
      "/usr/local/cuda/targets/sbsa-linux/lib", "/usr/local/cuda/targets/aarch64-linux/lib",
      "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/lib64", "/usr/lib", "/lib"};
  for (size_t k = 0; k < sizeof dirs / sizeof dirs[0]; k++)
    if (file_in(dirs[k], strlen(dirs[k]), name, path, cap, st)) return 1;
  return 0;
}

void uk__nvrtc_choose_library(char *path, size_t cap, char *id, size_t id_cap) {
  const char *env = getenv("UKERN_NVRTC_LIBRARY");
  struct stat st;
  id[0] = '\0';
  /* The build's library directory with the soname's file name: a toolkit
   * upgraded in place keeps that name (libnvrtc.so.13.0.88 would not).
   * Without it on this machine (built elsewhere), the file the loader would
   * load, found by its path: never the bare soname while a file can be
   * found, or every process would load NVRTC to learn its version. */
  const char *built = uk__nvrtc_build_library ? uk__nvrtc_build_library : "", *slash = strrchr(built, '/');
  char soname[48], major[24];
  uk__udec(major, CUDA_VERSION / 1000);
  uk__join(soname, sizeof soname, "libnvrtc.so.", major, (char *)NULL);
  int have = 0;
  if (env && *env) {
    if (uk__join(path, cap, env, (char *)NULL) < 0) snprintf(path, cap, "%s", env); /* too long: cut */
  } else if ((slash && file_in(built, (size_t)(slash - built), soname, path, cap, &st)) ||
             find_library(soname, path, cap, &st)) {
    have = 1;
  } else {
    uk__join(path, cap, soname, (char *)NULL);
  }
  if (!strchr(path, '/') || (!have && stat(path, &st) != 0) || !S_ISREG(st.st_mode)) return;
  /* Any change of the file (an upgrade in place, another file at the path)
   * changes this, and so the memo consulted. */
  struct {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
  } who;
  memset(&who, 0, sizeof who);
  who.dev = st.st_dev;
  who.ino = st.st_ino;
  who.size = st.st_size;
  who.mtime = st.st_mtim;
  uk_hasher h;
  uk__hasher_init(&h);
  uk__hasher_update(&h, &who, sizeof who);
  uk__hasher_add_str(&h, path);
  char hex[33];
  uk__hash128_hex(uk__hasher_digest(&h), hex);
  uk__join(id, id_cap, "nvrtc-", hex, (char *)NULL);
}

static void load(void) {
  char path[4096], id[64];
  uk__nvrtc_choose_library(path, sizeof path, id, sizeof id);
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(load_error, sizeof load_error, "cannot load NVRTC (%.300s): %.200s; set UKERN_NVRTC_LIBRARY to libnvrtc.so's path",
             path, dlerror());
    return;
  }
#define UK__NV_LOAD_(fn)                                                                             \
  if (!(uk__nv.fn = (__typeof__(&fn))dlsym(lib, #fn))) {                                           \
    snprintf(load_error, sizeof load_error, "NVRTC library %.300s has no %s (too old?)", path, #fn); \
    return;                                                                                          \
  }
  UK__NVRTC_FUNCS(UK__NV_LOAD_)
#undef UK__NV_LOAD_
  atomic_store(&loaded, 1);
}

uk_status uk__nvrtc_load(void) {
  pthread_once(&load_once, load);
  if (!atomic_load(&loaded)) return uk__errorf(UK_ERR_COMPILE, "%s", load_error);
  return UK_OK;
}

int uk__nvrtc_loaded(void) { return atomic_load(&loaded); }

/* ---- the memo ---------------------------------------------------------------
 * "<version>\n<arch> <arch> ...\n", e.g. "13000\n75 80 86 ... 121\n". */

#define MAX_ARCHS 64

UK__FIRST_USE static atomic_int known_version;
UK__FIRST_USE static int memo_archs[MAX_ARCHS];
UK__FIRST_USE static atomic_int memo_narchs;
UK__FIRST_USE static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;

static void recall_pending(void);

int uk__nvrtc_version_known(void) {
  recall_pending();
  return atomic_load(&known_version);
}

/* The decimal number at *p (digits only, at most 9: the memo is ours, so
 * no sign, blanks or overflow), *p moved past it; -1 when there is none.
 * By hand, not strtol: its code and binding were a cost of a new process's
 * first disk hit. */
static long take_number(const char **p) {
  long v = 0;
  int n = 0;
  for (; n < 9 && **p >= '0' && **p <= '9'; (*p)++, n++) v = v * 10 + (**p - '0');
  return n ? v : -1;
}

int uk__nvrtc_memo_parse(const char *text, int *version, int *archs, int cap) {
  const char *p = text;
  long v = take_number(&p);
  if (*p != '\n' || v < 1000 || v >= 1000000) return 0;
  int n = 0;
  for (p++;; p++) { /* numbers separated by one space, the last one by a newline */
    long a = take_number(&p);
    if (a < 10 || a > 100000 || n == cap || (*p != ' ' && *p != '\n')) return 0;
    archs[n++] = (int)a;
    if (*p == '\n') break;
  }
  *version = (int)v;
  return n;
}

/* Publishes a memo's text when it is one. */
static void publish(const char *text) {
  int version = 0, archs[MAX_ARCHS], n = uk__nvrtc_memo_parse(text, &version, archs, MAX_ARCHS);
  if (n == 0) return;
  pthread_mutex_lock(&memo_lock);
  if (!atomic_load(&known_version)) {
    memcpy(memo_archs, archs, (size_t)n * sizeof *archs);
    atomic_store(&memo_narchs, n);
    atomic_store(&known_version, version);
  }
  pthread_mutex_unlock(&memo_lock);
}

/* Reads the memo in dir (NULL: the default directory), checking the
 * directory first; or, with dc, in the directory dc opened (and checked). */
static void recall(const char *dir, uk__dcache *dc) {
  if (atomic_load(&known_version) || uk__nvrtc_loaded()) return;
  /* The path on the heap: 4 KB more of stack here was two page faults of
   * a new process's first disk hit (its stack had not been that deep). */
  enum { PATH_CAP = 4096 };
  char id[64], text[512], *path = malloc(PATH_CAP), *owned = NULL;
  if (!path) return;
  uk__nvrtc_choose_library(path, PATH_CAP, id, sizeof id);
  free(path);
  if (!id[0]) return;
  if (dc) {
    if (uk__dcache_note_get(dc, id, text, sizeof text)) publish(text);
    return;
  }
  if (!dir) {
    if (uk_cache_default_dir(&owned) != UK_OK) {
      uk__error_clear();
      return;
    }
    dir = owned;
  }
  if (uk__dcache_note_read(dir, id, text, sizeof text)) publish(text);
  free(owned);
}

/* Directories named by contexts while no version was known, to read at the
 * first need, oldest first; "" is the default directory. A context created
 * after MAX_PENDING others, all unread, is not consulted (NVRTC is then
 * loaded to ask, as without a memo). pending_lock is held while reading,
 * so that a concurrent first need waits for the answer. */
#define MAX_PENDING 4
/* strdup'd: 16 KB of static arrays would spread the statics that a new
 * process touches over more pages (a fault each). */
UK__FIRST_USE static char *pending[MAX_PENDING];
UK__FIRST_USE static int npending;
UK__FIRST_USE static atomic_int have_pending;
UK__FIRST_USE static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;

void uk__nvrtc_recall_later(const char *dir) {
  if (atomic_load(&known_version) || uk__nvrtc_loaded()) return;
  if (!dir) dir = "";
  pthread_mutex_lock(&pending_lock);
  int k = 0;
  while (k < npending && strcmp(pending[k], dir) != 0) k++;
  if (k == npending && npending < MAX_PENDING && (pending[npending] = strdup(dir)) != NULL) {
    npending++;
    atomic_store(&have_pending, 1);
  }
  pthread_mutex_unlock(&pending_lock);
}

static int nothing_pending(void) {
  return !atomic_load(&have_pending) || atomic_load(&known_version) || uk__nvrtc_loaded();
}

void uk__nvrtc_recall_from(uk__dcache *dc) {
  if (nothing_pending() || !dc) return;
  pthread_mutex_lock(&pending_lock);
  recall(NULL, dc);
  pthread_mutex_unlock(&pending_lock);
}

static void recall_pending(void) {
  if (nothing_pending()) return;
  pthread_mutex_lock(&pending_lock);
  for (int k = 0; k < npending && !atomic_load(&known_version) && !uk__nvrtc_loaded(); k++)
    recall(pending[k][0] ? pending[k] : NULL, NULL);
  for (int k = 0; k < npending; k++) {
    free(pending[k]);
    pending[k] = NULL;
  }
  npending = 0;
  atomic_store(&have_pending, 0);
  pthread_mutex_unlock(&pending_lock);
}

static int ask_archs(int *out, int cap) {
  int n = 0;
  if (uk__nvrtc_load() != UK_OK) {
    uk__error_clear();
    return 0;
  }
  int all[MAX_ARCHS];
  if (uk__nv.nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0 || n > MAX_ARCHS ||
      uk__nv.nvrtcGetSupportedArchs(all) != NVRTC_SUCCESS)
    return 0;
  if (n > cap) n = cap;
  memcpy(out, all, (size_t)n * sizeof *out);
  return n;
}

int uk__nvrtc_supported_archs(int *out, int cap) {
  if (!uk__nvrtc_loaded() && uk__nvrtc_version_known()) {
    int n = atomic_load(&memo_narchs);
    if (n > cap) n = cap;
    memcpy(out, memo_archs, (size_t)n * sizeof *out);
    return n;
  }
  return ask_archs(out, cap);
}

void uk__nvrtc_remember(uk__dcache *dc) {
  int major = 0, minor = 0, archs[MAX_ARCHS];
  if (!dc || !uk__nvrtc_loaded() || uk__nv.nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return;
  int n = ask_archs(archs, MAX_ARCHS);
  char path[4096], id[64], text[512], want[512];
  uk__nvrtc_choose_library(path, sizeof path, id, sizeof id);
  if (!id[0] || n == 0) return;
  int len = snprintf(want, sizeof want, "%d\n", major * 1000 + minor * 10);
  for (int k = 0; k < n && len > 0 && (size_t)len < sizeof want; k++)
    len += snprintf(want + len, sizeof want - (size_t)len, "%d%c", archs[k], k + 1 < n ? ' ' : '\n');
  if (len <= 0 || (size_t)len >= sizeof want) return;
  if (uk__dcache_note_get(dc, id, text, sizeof text) && strcmp(text, want) == 0) return;
  uk__dcache_note_put(dc, id, want);
}
