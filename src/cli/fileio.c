/* Raw arrays in files. */
#include "fileio.h"

#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Read a stream of unknown length (a pipe, a device) to its end. */
static int read_stream(FILE *f, const char *path, unsigned char **buf,
                       size_t *size) {
  size_t cap = 1 << 20, len = 0;
  unsigned char *p = malloc(cap);
  if (!p) {
    cli_error("out of host memory reading '%s'", path);
    return CLI_EXIT_RUNTIME;
  }
  for (;;) {
    if (len == cap) {
      unsigned char *q = cap > SIZE_MAX / 2 ? NULL : realloc(p, cap * 2);
      if (!q) {
        free(p);
        cli_error("out of host memory reading '%s'", path);
        return CLI_EXIT_RUNTIME;
      }
      p = q;
      cap *= 2;
    }
    size_t got = fread(p + len, 1, cap - len, f);
    len += got;
    if (got == 0) {
      if (ferror(f)) {
        int e = errno;
        free(p);
        cli_error("cannot read input file '%s': %s", path, strerror(e));
        return CLI_EXIT_USAGE;
      }
      break;
    }
  }
  *buf = p;
  *size = len;
  return 0;
}

/* Read a regular file of known size. */
static int read_regular(FILE *f, const char *path, size_t expect,
                        unsigned char **buf, size_t *size) {
  unsigned char *p = malloc(expect);
  if (!p) {
    cli_error("out of host memory: input file '%s' has %zu bytes", path,
              expect);
    return CLI_EXIT_RUNTIME;
  }
  size_t len = 0;
  while (len < expect) {
    size_t got = fread(p + len, 1, expect - len, f);
    if (got == 0) {
      int e = errno;
      int err = ferror(f);
      free(p);
      if (err)
        cli_error("cannot read input file '%s': %s", path, strerror(e));
      else
        cli_error("cannot read input file '%s': it shrank while being read",
                  path);
      return CLI_EXIT_USAGE;
    }
    len += got;
  }
  *buf = p;
  *size = len;
  return 0;
}

int cli_read_input(const char *path, size_t elem_size, const char *type_name,
                   void **data, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    cli_error("cannot read input file '%s': %s", path, strerror(errno));
    return CLI_EXIT_USAGE;
  }
  struct stat st;
  if (fstat(fileno(f), &st) != 0) {
    int e = errno;
    fclose(f);
    cli_error("cannot read input file '%s': %s", path, strerror(e));
    return CLI_EXIT_USAGE;
  }
  if (S_ISDIR(st.st_mode)) {
    fclose(f);
    cli_error("cannot read input file '%s': %s", path, strerror(EISDIR));
    return CLI_EXIT_USAGE;
  }
  unsigned char *buf = NULL;
  size_t size = 0;
  int rc;
  if (S_ISREG(st.st_mode)) {
    if (st.st_size == 0) {
      fclose(f);
      cli_error("input file '%s' is empty", path);
      return CLI_EXIT_USAGE;
    }
    if ((unsigned long long)st.st_size > SIZE_MAX) {
      fclose(f);
      cli_error("input file '%s' is too large for this machine", path);
      return CLI_EXIT_RUNTIME;
    }
    rc = read_regular(f, path, (size_t)st.st_size, &buf, &size);
  } else {
    rc = read_stream(f, path, &buf, &size);
  }
  fclose(f);
  if (rc != 0)
    return rc;
  if (size == 0) {
    free(buf);
    cli_error("input file '%s' is empty", path);
    return CLI_EXIT_USAGE;
  }
  if (size % elem_size != 0) {
    free(buf);
    cli_error("input file '%s' has %zu bytes, not a multiple of %zu (the "
              "size of %s)",
              path, size, elem_size, type_name);
    return CLI_EXIT_USAGE;
  }
  *data = buf;
  *n = size / elem_size;
  return 0;
}

int cli_write_output(const char *path, const void *data, size_t bytes) {
  size_t len = strlen(path);
  char *tmp = malloc(len + sizeof ".tmp");
  if (!tmp) {
    cli_error("out of host memory writing '%s'", path);
    return CLI_EXIT_RUNTIME;
  }
  memcpy(tmp, path, len);
  memcpy(tmp + len, ".tmp", sizeof ".tmp");

  FILE *f = fopen(tmp, "wb");
  if (!f) {
    /* The user named path; the temporary file is an implementation detail
     * and its directory is path's. */
    cli_error("cannot write output file '%s': %s", path, strerror(errno));
    free(tmp);
    return CLI_EXIT_RUNTIME;
  }
  const unsigned char *p = data;
  size_t done = 0;
  int e = 0;
  while (done < bytes) {
    errno = 0;
    size_t w = fwrite(p + done, 1, bytes - done, f);
    if (w == 0) {
      e = errno ? errno : EIO;
      break;
    }
    done += w;
  }
  if (!e && fflush(f) != 0)
    e = errno;
  if (!e && fsync(fileno(f)) != 0 && errno != EINVAL && errno != EROFS)
    e = errno; /* EINVAL: not syncable (a special file); still written */
  if (fclose(f) != 0 && !e)
    e = errno;
  if (!e && rename(tmp, path) != 0)
    e = errno;
  if (e) {
    unlink(tmp);
    cli_error("cannot write output file '%s': %s", path, strerror(e));
    free(tmp);
    return CLI_EXIT_RUNTIME;
  }
  free(tmp);
  return 0;
}
