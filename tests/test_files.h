/* Copies of the kernel directory, for the tests that corrupt a kernel file
 * or key the program cache on the kernels' source (test_api,
 * test_cache_tuning), and scratch trees removed (test_cache_tuning,
 * test_cache_clear).  Include after test_util.h. */
#ifndef CLR_TEST_FILES_H
#define CLR_TEST_FILES_H

#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Copy the file from to to, then write append (when not NULL) after the
 * copied bytes.  0, or -1 when a file cannot be opened or written. */
static TU_UNUSED int tf_copy_file(const char *from, const char *to,
                                  const char *append) {
  FILE *in = fopen(from, "rb");
  if (!in)
    return -1;
  FILE *out = fopen(to, "wb");
  if (!out) {
    fclose(in);
    return -1;
  }
  char buf[8192];
  size_t got;
  int ok = 1;
  while (ok && (got = fread(buf, 1, sizeof buf, in)) > 0)
    ok = fwrite(buf, 1, got, out) == got;
  if (ok && append)
    ok = fputs(append, out) >= 0;
  ok = !ferror(in) && ok;
  fclose(in);
  return fclose(out) == 0 && ok ? 0 : -1;
}

/* Copy every file of the directory src (but dot files) into the existing
 * directory dir; the file named corrupt (when not NULL) gets append at its
 * end.  Dies when src cannot be read, holds no file, or a copy fails. */
static TU_UNUSED void tf_copy_dir(const char *src, const char *dir,
                                  const char *corrupt, const char *append) {
  DIR *d = opendir(src);
  if (!d)
    tu_die("cannot open kernel dir %s: %s", src, strerror(errno));
  struct dirent *e;
  size_t copied = 0;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    char from[4096], to[4096];
    snprintf(from, sizeof from, "%s/%s", src, e->d_name);
    snprintf(to, sizeof to, "%s/%s", dir, e->d_name);
    int bad = corrupt && strcmp(e->d_name, corrupt) == 0;
    if (tf_copy_file(from, to, bad ? append : NULL) != 0)
      tu_die("cannot copy %s to %s", from, to);
    copied++;
  }
  closedir(d);
  if (copied == 0)
    tu_die("no kernel files in %s", src);
}

/* rm -rf dir: every entry, subdirectories made writable and searchable
 * first (a case may leave one read-only), then dir itself. */
static TU_UNUSED void tf_remove_tree(const char *dir) {
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
      chmod(p, 0755);
      tf_remove_tree(p);
    } else {
      unlink(p);
    }
  }
  closedir(d);
  rmdir(dir);
}

#endif
