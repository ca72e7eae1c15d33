/* Raw arrays in files. */
#include "fileio.h"

#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ input */

/* First buffer for an input of unknown size; it doubles as it fills. */
#define STREAM_FIRST_CAP ((size_t)4096)

void (*cli_read_progress)(size_t done, size_t expect) = NULL;

/* Read fd until its end, or until want bytes are in (want is the most
 * bytes the caller can use, plus one when a byte beyond them must be
 * noticed), after the len bytes of pre (read from it already) in the
 * buffer.  cap: the first buffer size (a hint); expect: the bytes to come
 * in all, pre's too, for cli_read_progress (0: unknown). */
static int read_fd_after(int fd, const char *path, size_t cap, size_t want,
                         size_t expect, const unsigned char *pre, size_t len,
                         unsigned char **buf, size_t *size) {
  if (cap > want)
    cap = want;
  if (cap < len)
    cap = len;
  if (cap == 0)
    cap = 1;
  unsigned char *p = malloc(cap);
  if (!p) {
    cli_error("out of host memory: input file '%s' needs %zu bytes", path, cap);
    return CLI_EXIT_RUNTIME;
  }
  if (len)
    memcpy(p, pre, len);
  while (len < want) {
    if (len == cap) {
      size_t grow = cap <= want / 2 ? cap * 2 : want;
      unsigned char *q = realloc(p, grow);
      if (!q) {
        free(p);
        cli_error("out of host memory reading input file '%s' (%zu bytes "
                  "read)",
                  path, len);
        return CLI_EXIT_RUNTIME;
      }
      p = q;
      cap = grow;
    }
    size_t chunk = cap - len;
    if (chunk > CLI_READ_CHUNK)
      chunk = CLI_READ_CHUNK;
    ssize_t got = read(fd, p + len, chunk);
    if (got < 0) {
      if (errno == EINTR)
        continue;
      int e = errno;
      free(p);
      cli_error("cannot read input file '%s': %s", path, strerror(e));
      return CLI_EXIT_USAGE;
    }
    if (got == 0)
      break;
    len += (size_t)got;
    if (cli_read_progress)
      cli_read_progress(len, expect);
  }
  *buf = p;
  *size = len;
  return 0;
}

/* Open path for reading: *fd, and *sized (a regular file with a size) and
 * its size.  0, or the exit status after the one-line reason. */
static int open_input(const char *path, int *fd, int *sized, size_t *size) {
  *fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (*fd < 0) {
    cli_error("cannot read input file '%s': %s", path, strerror(errno));
    return CLI_EXIT_USAGE;
  }
  struct stat st;
  if (fstat(*fd, &st) != 0) {
    int e = errno;
    close(*fd);
    cli_error("cannot read input file '%s': %s", path, strerror(e));
    return CLI_EXIT_USAGE;
  }
  if (S_ISDIR(st.st_mode)) {
    close(*fd);
    cli_error("cannot read input file '%s': %s", path, strerror(EISDIR));
    return CLI_EXIT_USAGE;
  }
  /* A regular file with a size ends; its size is only a hint (files in
   * /sys say 4096 and hold less, files in /proc say 0 and hold more), so
   * it is read to its end all the same.  Anything else (a pipe, a device,
   * a file of size 0) may never end: it is read up to what --n can use, or
   * up to CLI_STREAM_MAX_BYTES without --n. */
  *sized = S_ISREG(st.st_mode) && st.st_size > 0;
  if (*sized && (unsigned long long)st.st_size >= SIZE_MAX) {
    close(*fd);
    cli_error("input file '%s' is too large for this machine", path);
    return CLI_EXIT_RUNTIME;
  }
  *size = *sized ? (size_t)st.st_size : 0;
  return 0;
}

/* The raw values of fd (open_input's), the first len bytes of which (pre)
 * were read already. */
static int read_raw(int fd, int sized, size_t file_size, const char *path,
                    size_t elem_size, const char *type_name, uint64_t max_n,
                    const unsigned char *pre, size_t len, void **data,
                    size_t *n) {
  size_t limit = SIZE_MAX; /* the most bytes used                      */
  if (max_n && max_n <= SIZE_MAX / elem_size)
    limit = (size_t)max_n * elem_size;
  else if (!max_n && !sized)
    limit = CLI_STREAM_MAX_BYTES;
  /* One byte past the limit tells a file with more values than --n, and a
   * stream that did not end; a stream bounded by --n is read no further
   * than its n values (a pipe's writer may be waiting). */
  size_t want = limit;
  if (limit < SIZE_MAX && (sized || !max_n))
    want = limit + 1;
  size_t cap = sized ? file_size + 1 : STREAM_FIRST_CAP;
  /* (a regular file's size, or a stream's --n values) */
  size_t expect = sized ? file_size : limit < SIZE_MAX && max_n ? limit : 0;
  unsigned char *buf = NULL;
  size_t size = 0;
  int rc = read_fd_after(fd, path, cap, want, expect, pre, len, &buf, &size);
  if (rc != 0)
    return rc;
  if (size > limit && !max_n) {
    free(buf);
    cli_error("input file '%s' did not end within %zu MiB (a device or "
              "pipe that never ends?): give --n to read that many values "
              "from it",
              path, (size_t)(CLI_STREAM_MAX_BYTES >> 20));
    return CLI_EXIT_USAGE;
  }
  char msg[1024];
  rc = cli_raw_values_check(msg, sizeof msg, path, size, elem_size, type_name,
                            max_n, n);
  if (rc != 0) {
    free(buf);
    cli_error("%s", msg);
    return rc;
  }
  *data = buf;
  return 0;
}

int cli_raw_values_check(char *buf, size_t size, const char *path,
                         uint64_t bytes, size_t elem_size,
                         const char *type_name, uint64_t max_n, size_t *n) {
  if (max_n && max_n <= UINT64_MAX / elem_size && bytes > max_n * elem_size) {
    snprintf(buf, size,
             "--n=%llu does not match input file '%s': it holds more than "
             "%llu %s values",
             (unsigned long long)max_n, path, (unsigned long long)max_n,
             type_name);
    return CLI_EXIT_USAGE;
  }
  if (bytes == 0) {
    snprintf(buf, size, "input file '%s' is empty", path);
    return CLI_EXIT_USAGE;
  }
  if (bytes % elem_size != 0) {
    snprintf(buf, size,
             "input file '%s' has %llu bytes, not a multiple of %zu (the "
             "size of %s)",
             path, (unsigned long long)bytes, elem_size, type_name);
    return CLI_EXIT_USAGE;
  }
  *n = (size_t)(bytes / elem_size);
  return 0;
}

int cli_read_input_n(const char *path, size_t elem_size, const char *type_name,
                     uint64_t max_n, void **data, size_t *n) {
  return cli_read_input_hdr(path, elem_size, type_name, max_n, NULL, NULL, data,
                            n);
}

/* Read into buf[*len .. want) (want: at most the buffer's size) up to
 * the end; *len: the bytes now in.  0 or the exit status. */
static int read_more(int fd, const char *path, unsigned char *buf, size_t *len,
                     size_t want) {
  while (*len < want) {
    ssize_t got = read(fd, buf + *len, want - *len);
    if (got < 0) {
      if (errno == EINTR)
        continue;
      cli_error("cannot read input file '%s': %s", path, strerror(errno));
      return CLI_EXIT_USAGE;
    }
    if (got == 0)
      break;
    *len += (size_t)got;
  }
  return 0;
}

int cli_header_data_message(char *buf, size_t size, const char *path,
                            uint64_t have, int more, size_t header_size,
                            uint64_t count, size_t elem_size) {
  snprintf(buf, size,
           "input file '%s' holds %s%llu bytes of data after its %zu-byte "
           "header, which gives %llu values of %zu bytes (%llu bytes)",
           path, more ? "more than " : "", (unsigned long long)have,
           header_size, (unsigned long long)count, elem_size,
           (unsigned long long)(count * elem_size));
  return CLI_EXIT_USAGE;
}

/* The data after a header h (read already) of fd: exactly h->count
 * values of h->elem_size bytes. */
static int read_after_header(int fd, int sized, size_t file_size,
                             const char *path, uint64_t max_n,
                             const cli_input_header *h, void **data,
                             size_t *n) {
  size_t bytes = (size_t)h->count * h->elem_size;
  /* One byte more tells a file longer than its header says; a stream
   * bounded by --n is read no further than its values. */
  size_t want = bytes + (sized || !max_n ? 1 : 0);
  size_t cap = sized && file_size >= h->size ? file_size - h->size + 1
                                             : STREAM_FIRST_CAP;
  unsigned char *buf = NULL;
  size_t size = 0;
  int rc = read_fd_after(fd, path, cap, want, bytes, NULL, 0, &buf, &size);
  if (rc != 0)
    return rc;
  if (size != bytes) {
    char msg[1024];
    free(buf);
    rc = cli_header_data_message(msg, sizeof msg, path,
                                 size > bytes ? bytes : size, size > bytes,
                                 h->size, h->count, h->elem_size);
    cli_error("%s", msg);
    return rc;
  }
  *data = buf;
  *n = (size_t)h->count;
  return 0;
}

int cli_read_input_hdr(const char *path, size_t elem_size,
                       const char *type_name, uint64_t max_n,
                       cli_header_reader reader, void *ctx, void **data,
                       size_t *n) {
  int fd = -1, sized = 0;
  size_t file_size = 0;
  int rc = open_input(path, &fd, &sized, &file_size);
  if (rc != 0)
    return rc;
  unsigned char first[64], *head = first;
  size_t len = 0, cap = sizeof first;
  cli_input_header h;
  memset(&h, 0, sizeof h);
  /* The header, as far as the reader asks: no byte beyond it is read
   * (a stream of raw values bounded by --n is read no further). */
  while (reader) {
    int at_end = 0;
    for (;;) {
      memset(&h, 0, sizeof h);
      rc = reader(ctx, path, head, len, at_end, &h);
      if (rc != 0 || h.need <= len || at_end)
        break;
      if (h.need > cap) {
        unsigned char *grown = malloc(h.need);
        if (!grown) {
          rc = CLI_EXIT_RUNTIME;
          cli_error("out of host memory: input file '%s' has a header of "
                    "%zu bytes",
                    path, h.need);
          break;
        }
        memcpy(grown, head, len);
        if (head != first)
          free(head);
        head = grown;
        cap = h.need;
      }
      size_t before = len;
      if ((rc = read_more(fd, path, head, &len, h.need)) != 0)
        break;
      at_end = len == before || len < h.need;
    }
    if (rc == 0 && h.need > len) {
      /* at_end: the reader said what it needed of a file that ended */
      cli_error("input file '%s' ends within its header", path);
      rc = CLI_EXIT_USAGE;
    }
    break;
  }
  if (rc == 0 && h.size > 0)
    rc = read_after_header(fd, sized, file_size, path, max_n, &h, data, n);
  else if (rc == 0)
    rc = read_raw(fd, sized, file_size, path, elem_size, type_name, max_n, head,
                  len, data, n);
  close(fd);
  if (head != first)
    free(head);
  return rc;
}

int cli_read_input(const char *path, size_t elem_size, const char *type_name,
                   void **data, size_t *n) {
  return cli_read_input_n(path, elem_size, type_name, 0, data, n);
}

/* ------------------------------------------------------------ output */

/* write(2) all of data; 0 or an errno value. */
static int write_all(int fd, const void *data, size_t bytes) {
  const unsigned char *p = data;
  while (bytes > 0) {
    size_t chunk = bytes > ((size_t)1 << 30) ? (size_t)1 << 30 : bytes;
    ssize_t w = write(fd, p, chunk);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return errno;
    }
    if (w == 0)
      return EIO;
    p += w;
    bytes -= (size_t)w;
  }
  return 0;
}

/* The descriptor a path names rather than a file: /dev/stdout,
 * /dev/stderr, /dev/fd/N, /proc/self/fd/N.  -1 for any other path. */
static int named_descriptor(const char *path) {
  if (strcmp(path, "/dev/stdout") == 0)
    return 1;
  if (strcmp(path, "/dev/stderr") == 0)
    return 2;
  const char *p = NULL;
  if (strncmp(path, "/dev/fd/", 8) == 0)
    p = path + 8;
  else if (strncmp(path, "/proc/self/fd/", 14) == 0)
    p = path + 14;
  if (!p || !*p || strlen(p) > 6)
    return -1;
  int fd = 0;
  for (; *p; p++) {
    if (*p < '0' || *p > '9')
      return -1;
    fd = fd * 10 + (*p - '0');
  }
  return fd;
}

/* readlink(2) into a new string; NULL with errno set on failure. */
static char *read_link(const char *path) {
  size_t cap = 256;
  for (;;) {
    char *buf = malloc(cap);
    if (!buf)
      return NULL;
    ssize_t len = readlink(path, buf, cap);
    if (len < 0) {
      int e = errno;
      free(buf);
      errno = e;
      return NULL;
    }
    if ((size_t)len < cap) {
      buf[len] = '\0';
      return buf;
    }
    free(buf);
    if (cap > 65536) {
      errno = ENAMETOOLONG;
      return NULL;
    }
    cap *= 2;
  }
}

/* The file that writing to path replaces: path with every symbolic link
 * at its end followed (a link to a missing file names the file to
 * create).  NULL with *err set on failure. */
static char *resolve_links(const char *path, int *err) {
  char *cur = strdup(path);
  if (!cur) {
    *err = ENOMEM;
    return NULL;
  }
  for (int hops = 0;; hops++) {
    struct stat st;
    if (lstat(cur, &st) != 0) {
      if (errno == ENOENT)
        return cur; /* a new file (or a missing directory: open says) */
      *err = errno;
      free(cur);
      return NULL;
    }
    if (!S_ISLNK(st.st_mode))
      return cur;
    char *link = hops < 40 ? read_link(cur) : NULL;
    if (!link) {
      *err = hops < 40 ? errno : ELOOP;
      free(cur);
      return NULL;
    }
    if (link[0] == '/') {
      free(cur);
      cur = link;
      continue;
    }
    /* Relative to the link's directory. */
    const char *slash = strrchr(cur, '/');
    size_t dirlen = slash ? (size_t)(slash - cur) + 1 : 0;
    size_t linklen = strlen(link);
    char *next = malloc(dirlen + linklen + 1);
    if (!next) {
      free(link);
      free(cur);
      *err = ENOMEM;
      return NULL;
    }
    memcpy(next, cur, dirlen);
    memcpy(next + dirlen, link, linklen + 1);
    free(link);
    free(cur);
    cur = next;
  }
}

static uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15u;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  return x ^ (x >> 31);
}

/* Create a new, unique file next to target (O_EXCL: never an existing
 * file, never through a link) with mode 0666 & ~umask, as open() gives a
 * new file.  Returns its descriptor and *tmp (free() it), or -1 with errno
 * set. */
static int create_temp(const char *target, char **tmp) {
  static const char digits[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  static uint64_t counter;
  size_t len = strlen(target), size = len + sizeof ".clreduce.XXXXXX";
  const char *slash = strrchr(target, '/');
  int dirlen = slash ? (int)(slash - target) + 1 : 0;
  int short_name = 0;
  char *name = malloc(size);
  if (!name) {
    errno = ENOMEM;
    return -1;
  }
  for (int attempt = 0; attempt < 1000; attempt++) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = mix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^
                       ((uint64_t)getpid() << 12) ^ mix64(++counter));
    char suffix[7];
    for (int i = 0; i < 6; i++, x /= 62)
      suffix[i] = digits[x % 62];
    suffix[6] = '\0';
    /* "<target>.tmp.XXXXXX", or ".clreduce.XXXXXX" in target's directory
     * when the longer name is too long for it. */
    if (short_name)
      snprintf(name, size, "%.*s.clreduce.%s", dirlen, target, suffix);
    else
      snprintf(name, size, "%s.tmp.%s", target, suffix);
    int fd = open(
        name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
        0666);
    if (fd >= 0) {
      *tmp = name;
      return fd;
    }
    if (errno == EEXIST)
      continue;
    if (errno == ENAMETOOLONG && !short_name) {
      short_name = 1;
      continue;
    }
    break;
  }
  int e = errno;
  free(name);
  errno = e;
  return -1;
}

/* "'path'" or "'path' (a link to 'target')", for messages. */
static void describe(char *buf, size_t size, const char *path,
                     const char *target) {
  if (target && strcmp(path, target) != 0)
    snprintf(buf, size, "'%s' (a link to '%s')", path, target);
  else
    snprintf(buf, size, "'%s'", path);
}

/* Write to something that is not a regular file (a character device, a
 * FIFO, a descriptor): directly, in place.  fd is closed unless keep. */
static int write_in_place(int fd, int keep, const char *what, const void *head,
                          size_t head_bytes, const void *data, size_t bytes) {
  int e = write_all(fd, head, head_bytes);
  if (!e)
    e = write_all(fd, data, bytes);
  if (!keep && close(fd) != 0 && !e && errno != EINTR)
    e = errno;
  if (e) {
    cli_error("cannot write output file %s: %s", what, strerror(e));
    return CLI_EXIT_RUNTIME;
  }
  return 0;
}

/* Replace (or create) the regular file target through a new temporary
 * file in its directory. */
static int replace_file(const char *path, const char *target, const void *head,
                        size_t head_bytes, const void *data, size_t bytes) {
  char what[4096 + 64];
  describe(what, sizeof what, path, target);
  struct stat old;
  int exists = lstat(target, &old) == 0;
  if (!exists && errno != ENOENT) {
    cli_error("cannot write output file %s: %s", what, strerror(errno));
    return CLI_EXIT_RUNTIME;
  }
  if (exists && S_ISDIR(old.st_mode)) {
    cli_error("cannot write output file %s: %s", what, strerror(EISDIR));
    return CLI_EXIT_RUNTIME;
  }
  char *tmp = NULL;
  int fd = create_temp(target, &tmp);
  if (fd < 0) {
    cli_error("cannot write output file %s: %s", what, strerror(errno));
    return CLI_EXIT_RUNTIME;
  }
  int e = 0;
  if (exists) {
    /* The file keeps its permissions (without set-user/group-ID) and,
     * where this process may give them, its owner and group. */
    if ((old.st_uid != geteuid() || old.st_gid != getegid()) &&
        fchown(fd, old.st_uid, old.st_gid) != 0) {
      /* not permitted: the new file is this user's, as a new file is */
    }
    if (fchmod(fd, old.st_mode & 0777) != 0 && errno != EPERM &&
        errno != ENOTSUP)
      e = errno;
  }
  if (!e)
    e = write_all(fd, head, head_bytes);
  if (!e)
    e = write_all(fd, data, bytes);
  if (!e && fsync(fd) != 0 && errno != EINVAL)
    e = errno;
  if (close(fd) != 0 && !e && errno != EINTR)
    e = errno;
  if (!e && rename(tmp, target) != 0)
    e = errno;
  if (e) {
    unlink(tmp);
    cli_error("cannot write output file %s: %s", what, strerror(e));
    free(tmp);
    return CLI_EXIT_RUNTIME;
  }
  free(tmp);
  return 0;
}

int cli_write_output(const char *path, const void *data, size_t bytes) {
  return cli_write_output2(path, NULL, 0, data, bytes);
}

int cli_write_output2(const char *path, const void *head, size_t head_bytes,
                      const void *data, size_t bytes) {
  char what[4096 + 64];
  int fd = named_descriptor(path);
  if (fd >= 0) {
    if (fd == 1 && fflush(stdout) != 0) {
      cli_error("cannot write output file '%s': %s", path, strerror(errno));
      return CLI_EXIT_RUNTIME;
    }
    if (fd == 2)
      fflush(stderr);
    describe(what, sizeof what, path, NULL);
    return write_in_place(fd, 1, what, head, head_bytes, data, bytes);
  }
  for (int attempt = 0; attempt < 2; attempt++) {
    struct stat st;
    /* Not a regular file (followed through links): written in place; a
     * device node or a FIFO is never replaced. */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
      describe(what, sizeof what, path, NULL);
      if (S_ISDIR(st.st_mode)) {
        cli_error("cannot write output file %s: %s", what, strerror(EISDIR));
        return CLI_EXIT_RUNTIME;
      }
      fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
      if (fd < 0) {
        cli_error("cannot write output file %s: %s", what, strerror(errno));
        return CLI_EXIT_RUNTIME;
      }
      if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && attempt == 0) {
        close(fd); /* replaced by a regular file meanwhile */
        continue;
      }
      return write_in_place(fd, 0, what, head, head_bytes, data, bytes);
    }
    break;
  }
  /* A regular file, or none: replaced whole through a temporary file, so a
   * failure leaves it as it was.  A symbolic link is followed: its target
   * is replaced (or created), the link stays. */
  int err = 0;
  char *target = resolve_links(path, &err);
  if (!target) {
    describe(what, sizeof what, path, NULL);
    cli_error("cannot write output file %s: %s", what, strerror(err));
    return CLI_EXIT_RUNTIME;
  }
  int rc = replace_file(path, target, head, head_bytes, data, bytes);
  free(target);
  return rc;
}
