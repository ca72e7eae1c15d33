/* Where the installed data files are: the kernel sources (cl/) and the
 * shipped tuning files, under <prefix>/<datadir>/clreduce.  The prefix
 * compiled into the library is tried first; when it does not hold them (a
 * prefix moved after installing, or installed with DESTDIR), the prefix is
 * found from where the library itself was loaded: its directory is
 * <prefix>/<libdir>, or <prefix>/<bindir> for a program it is statically
 * linked into.  Last, the source tree this library was built from, for
 * uninstalled builds. */
#include "clr_config.h"
#include "internal.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* An object of this library: dladdr names the file it was loaded from. */
static const char anchor = 0;

static int holds(const char *dir, const char *probe) {
  char path[4096];
  struct stat st;
  if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, probe) >= sizeof path)
    return 0;
  return stat(path, &st) == 0;
}

/* The number of components of a relative directory ("lib/x86_64-linux-gnu"
 * has 2); -1 for an absolute one, which cannot be walked back. */
static int depth_of(const char *rel) {
  int d = 0, in_name = 0;
  if (rel[0] == '/')
    return -1;
  for (const char *p = rel; *p; p++) {
    if (*p == '/')
      in_name = 0;
    else if (!in_name) {
      in_name = 1;
      d++;
    }
  }
  return d;
}

/* <where this code was loaded from>/(.. x depth of installed_in)/<datadir>
 * /clreduce/<leaf>, if it holds probe. */
static int beside_library(const char *installed_in, const char *leaf,
                          const char *probe, char *out, size_t size) {
  Dl_info info;
  int depth = depth_of(installed_in);
  if (depth < 0 || !dladdr(&anchor, &info) || !info.dli_fname ||
      !strchr(info.dli_fname, '/'))
    return 0;
  char dir[4096];
  if ((size_t)snprintf(dir, sizeof dir, "%s", info.dli_fname) >= sizeof dir)
    return 0;
  *strrchr(dir, '/') = '\0';
  size_t len = strlen(dir);
  for (int i = 0; i < depth; i++)
    len += (size_t)snprintf(dir + len, len < sizeof dir ? sizeof dir - len : 0,
                            "/..");
  char found[4096];
  if (len >= sizeof dir ||
      (size_t)snprintf(found, sizeof found, "%s/%s/clreduce/%s", dir,
                       CLR_DATADIR, leaf) >= sizeof found ||
      !holds(found, probe))
    return 0;
  /* The canonical name (no "lib/../.."), for messages and reports. */
  char canon[PATH_MAX];
  const char *name = realpath(found, canon) ? canon : found;
  return (size_t)snprintf(out, size, "%s", name) < size;
}

int clr_installed_dir(const char *leaf, const char *probe, char *out,
                      size_t size) {
  const char *compiled = strcmp(leaf, "cl") == 0 ? CLR_INSTALLED_KERNEL_DIR
                                                 : CLR_INSTALLED_TUNING_DIR;
  const char *source =
      strcmp(leaf, "cl") == 0 ? CLR_SOURCE_KERNEL_DIR : CLR_SOURCE_TUNING_DIR;
  if (holds(compiled, probe) &&
      (size_t)snprintf(out, size, "%s", compiled) < size)
    return 1;
  if (beside_library(CLR_LIBDIR, leaf, probe, out, size) ||
      beside_library(CLR_BINDIR, leaf, probe, out, size))
    return 1;
  if (holds(source, probe) && (size_t)snprintf(out, size, "%s", source) < size)
    return 1;
  snprintf(out, size, "%s", compiled);
  return 0;
}
