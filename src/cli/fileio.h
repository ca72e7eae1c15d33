/* Raw native-endian arrays in files: --input and --output. */
#ifndef CLR_CLI_FILEIO_H
#define CLR_CLI_FILEIO_H

#include <stddef.h>
#include <stdint.h>

/* Without --n, an input with no size to trust (a pipe, a device, a file
 * of size 0 such as those in /proc) is read up to this many bytes; one
 * that goes on beyond them (/dev/zero) is refused. */
#define CLI_STREAM_MAX_BYTES ((size_t)1 << 30)

/* Read path as elements of elem_size bytes (type_name for messages), to
 * its end: a regular file's size is only a hint (/proc and /sys files
 * misreport it).  max_n: the element count --n asks for, 0 without --n.
 * With it, a pipe or device is read no further than max_n elements, and a
 * regular file holding more is refused; without it, a pipe or device is
 * refused beyond CLI_STREAM_MAX_BYTES.  (An input holding fewer than max_n
 * elements is returned as it is: the caller compares the counts.)
 * On success returns 0 with *data (free() it) and *n >= 1.  Otherwise
 * prints the one-line reason and returns the exit status: CLI_EXIT_USAGE
 * for a missing, unreadable, empty, wrongly sized or endless file,
 * CLI_EXIT_RUNTIME when memory runs out. */
int cli_read_input_n(const char *path, size_t elem_size, const char *type_name,
                     uint64_t max_n, void **data, size_t *n);

/* cli_read_input_n without --n (max_n 0). */
int cli_read_input(const char *path, size_t elem_size, const char *type_name,
                   void **data, size_t *n);

/* Write bytes to the file path names, for --output and the benchmark's
 * files; every write is checked.
 *  - /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: written to that
 *    descriptor of this process.
 *  - Anything that is not a regular file (a character device, a FIFO),
 *    also through a symbolic link: written in place, never replaced.
 *  - A regular file or none: bytes go to a new, unique temporary file in
 *    the same directory (created O_EXCL, never through a link), fsync'ed,
 *    then renamed over path.  A symbolic link at path is followed: its
 *    target is replaced (or created) and the link stays.  An existing
 *    file keeps its permission bits (and its owner where permitted); a
 *    new one gets 0666 & ~umask.
 * On any failure the temporary file is removed, an existing path is left
 * as it was, the one-line reason naming path (and a link's target) is
 * printed and CLI_EXIT_RUNTIME returned.  0 on success. */
int cli_write_output(const char *path, const void *data, size_t bytes);

#endif
