/* Where the installed data files are: the kernel sources (cl/) and the
 * shipped tuning files, under <prefix>/<datadir>/clreduce.  In order:
 * 1. a library still in its build tree reads the source tree, through a
 *    link beside it (no source path is compiled in), never an installed
 *    copy, which may be older;
 * 2. the prefix the library was loaded from: its directory is
 *    <prefix>/<libdir>, or <prefix>/<bindir> for a program it is
 *    statically linked into; so a moved prefix (or a DESTDIR install)
 *    reads its own files even where another install sits at the prefix
 *    compiled in (scripts/setup.sh installs into /usr/local);
 * 3. the prefix compiled into the library. */
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

/* The directory of the file this code was loaded from (the library, or
 * the program it is statically linked into). */
static int loaded_dir(char *dir, size_t size) {
  Dl_info info;
  if (!dladdr(&anchor, &info) || !info.dli_fname ||
      !strchr(info.dli_fname, '/') ||
      (size_t)snprintf(dir, size, "%s", info.dli_fname) >= size)
    return 0;
  *strrchr(dir, '/') = '\0';
  return 1;
}

/* found, if it holds probe, canonical (no "lib/../..") into out. */
static int take(const char *found, const char *probe, char *out, size_t size) {
  char canon[PATH_MAX];
  if (!holds(found, probe))
    return 0;
  const char *name = realpath(found, canon) ? canon : found;
  return (size_t)snprintf(out, size, "%s", name) < size;
}

/* <loaded dir>/(.. x depth of installed_in)/<datadir>/clreduce/<leaf>. */
static int beside_library(const char *installed_in, const char *leaf,
                          const char *probe, char *out, size_t size) {
  char dir[4096], found[4096];
  int depth = depth_of(installed_in);
  if (depth < 0 || !loaded_dir(dir, sizeof dir))
    return 0;
  size_t len = strlen(dir);
  for (int i = 0; i < depth && len < sizeof dir; i++)
    len += (size_t)snprintf(dir + len, sizeof dir - len, "/..");
  if (len >= sizeof dir ||
      (size_t)snprintf(found, sizeof found, "%s/%s/clreduce/%s", dir,
                       CLR_DATADIR, leaf) >= sizeof found)
    return 0;
  return take(found, probe, out, size);
}

/* An uninstalled build: <build>/src/lib/clreduce-source, a link to the
 * source tree that src/lib/meson.build makes and never installs. */
static int in_source_tree(const char *leaf, const char *probe, char *out,
                          size_t size) {
  char dir[4096], found[4096];
  if (!loaded_dir(dir, sizeof dir) ||
      (size_t)snprintf(found, sizeof found, "%s/clreduce-source/%s", dir,
                       strcmp(leaf, "cl") == 0 ? "cl" : "data/tuning") >=
          sizeof found)
    return 0;
  return take(found, probe, out, size);
}

int clr_installed_dir(const char *leaf, const char *probe, char *out,
                      size_t size) {
  const char *compiled = strcmp(leaf, "cl") == 0 ? CLR_INSTALLED_KERNEL_DIR
                                                 : CLR_INSTALLED_TUNING_DIR;
  if (in_source_tree(leaf, probe, out, size) ||
      beside_library(CLR_LIBDIR, leaf, probe, out, size) ||
      beside_library(CLR_BINDIR, leaf, probe, out, size))
    return 1;
  if (holds(compiled, probe) &&
      (size_t)snprintf(out, size, "%s", compiled) < size)
    return 1;
  snprintf(out, size, "%s", compiled);
  return 0;
}

/* dir without its last depth components, in place (textually: the
 * directories need not exist). */
static void strip_components(char *dir, int depth) {
  for (int i = 0; i < depth; i++) {
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) {
      snprintf(dir, 2, "/");
      return;
    }
    *slash = '\0';
  }
}

/* Appends ", dir" (or "dir" first) to out unless out already holds it. */
static void add_tried(char *out, size_t size, const char *dir) {
  size_t len = strlen(out), n = strlen(dir);
  for (const char *p = out; (p = strstr(p, dir)) != NULL; p++)
    if ((p == out || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0'))
      return;
  if (len >= size)
    return;
  snprintf(out + len, size - len, "%s%s", len ? ", " : "", dir);
}

/* The loaded directory, canonical (dladdr may name it through an rpath's
 * "bin/../lib"). */
static int loaded_dir_canonical(char *dir, size_t size) {
  char canon[PATH_MAX];
  if (!loaded_dir(dir, size))
    return 0;
  if (realpath(dir, canon))
    snprintf(dir, size, "%s", canon);
  return 1;
}

void clr_installed_dirs_tried(const char *leaf, char *out, size_t size) {
  const char *compiled = strcmp(leaf, "cl") == 0 ? CLR_INSTALLED_KERNEL_DIR
                                                 : CLR_INSTALLED_TUNING_DIR;
  const char *installed_in[2] = {CLR_LIBDIR, CLR_BINDIR};
  char dir[PATH_MAX], found[PATH_MAX + 100];
  if (!size)
    return;
  out[0] = '\0';
  if (loaded_dir_canonical(dir, sizeof dir)) {
    snprintf(found, sizeof found, "%s/clreduce-source/%s", dir,
             strcmp(leaf, "cl") == 0 ? "cl" : "data/tuning");
    add_tried(out, size, found);
  }
  for (int i = 0; i < 2; i++) {
    int depth = depth_of(installed_in[i]);
    if (depth < 0 || !loaded_dir_canonical(dir, sizeof dir))
      continue;
    strip_components(dir, depth);
    snprintf(found, sizeof found, "%s/%s/clreduce/%s",
             strcmp(dir, "/") == 0 ? "" : dir, CLR_DATADIR, leaf);
    add_tried(out, size, found);
  }
  add_tried(out, size, compiled);
}
