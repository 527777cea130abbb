/* Public disk cache directory functions: the default location, usage and
 * clearing. Only files named like ukern entries (and stale temporary files)
 * are counted or removed; anything else in the directory is left alone. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "runtime/dcache.h"

static const char *env_nonempty(const char *name) {
  const char *v = getenv(name);
  return v && *v ? v : NULL;
}

uk_status uk_cache_default_dir(char **out) {
  if (!out) return uk__errorf(UK_ERR_INVALID, "uk_cache_default_dir: out is NULL");
  char *dir = NULL;
  int rc;
  const char *v;
  if ((v = env_nonempty("UKERN_CACHE_DIR")) != NULL) {
    rc = asprintf(&dir, "%s", v);
  } else if ((v = env_nonempty("XDG_CACHE_HOME")) != NULL && v[0] == '/') {
    /* XDG: a relative XDG_CACHE_HOME is invalid and must be ignored. */
    rc = asprintf(&dir, "%s/ukern", v);
  } else if ((v = env_nonempty("HOME")) != NULL) {
    rc = asprintf(&dir, "%s/.cache/ukern", v);
  } else {
    return uk__errorf(UK_ERR_NOT_FOUND,
                      "no disk cache directory: UKERN_CACHE_DIR, XDG_CACHE_HOME and HOME are "
                      "all unset (set UKERN_CACHE_DIR or uk_options.cache_dir)");
  }
  if (rc < 0) return uk__errorf(UK_ERR_NOMEM, "out of memory");
  *out = dir;
  return UK_OK;
}

/* Opens `dir` (NULL: the default) for listing. *d NULL with UK_OK when the
 * directory does not exist (nothing cached there). */
static uk_status open_dir(const char *dir, DIR **d, char **owned) {
  *d = NULL;
  *owned = NULL;
  if (!dir) {
    uk_status s = uk_cache_default_dir(owned);
    if (s != UK_OK) return s;
    dir = *owned;
  }
  *d = opendir(dir);
  if (!*d && errno != ENOENT)
    return uk__errorf(UK_ERR_IO, "cannot list cache directory '%s': %s", dir, strerror(errno));
  return UK_OK;
}

uk_status uk_cache_usage(const char *dir, uint64_t *entries, uint64_t *bytes) {
  DIR *d;
  char *owned;
  uint64_t n = 0, total = 0;
  uk_status s = open_dir(dir, &d, &owned);
  if (s != UK_OK || !d) goto out;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    struct stat st;
    if (!uk__dcache_is_entry_name(de->d_name)) continue;
    if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
      continue;
    n++;
    total += (uint64_t)st.st_size;
  }
out:
  if (d) closedir(d);
  free(owned);
  if (s == UK_OK) {
    if (entries) *entries = n;
    if (bytes) *bytes = total;
  }
  return s;
}

uk_status uk_cache_clear(const char *dir) {
  DIR *d;
  char *owned;
  uk_status s = open_dir(dir, &d, &owned);
  if (s != UK_OK || !d) goto out;
  time_t now = time(NULL);
  int failed = 0, first_errno = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    int entry = uk__dcache_is_entry_name(de->d_name);
    if (!entry && !uk__dcache_is_temp_name(de->d_name)) continue;
    struct stat st;
    if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
      continue;
    /* A fresh temporary file belongs to a writer that is about to rename it. */
    if (!entry && now - st.st_mtime <= UK__DCACHE_STALE_TEMP_SECONDS) continue;
    if (unlinkat(dirfd(d), de->d_name, 0) != 0 && errno != ENOENT && !failed++)
      first_errno = errno;
  }
  if (failed)
    s = uk__errorf(UK_ERR_IO, "could not remove %d cache entries from '%s': %s", failed,
                   dir ? dir : owned, strerror(first_errno));
out:
  if (d) closedir(d);
  free(owned);
  return s;
}

uk_status uk_cache_check_dir(const char *dir) {
  uk__error_clear();
  char *owned = NULL;
  if (!dir) {
    uk_status s = uk_cache_default_dir(&owned);
    if (s != UK_OK) return s;
    dir = owned;
  }
  char why[256];
  uk_status s = UK_OK;
  if (uk__dcache_check_dir(dir, why, sizeof why) < 0)
    s = uk__errorf(UK_ERR_IO, "ukern does not use the cache directory '%s': %s", dir, why);
  free(owned);
  return s;
}
