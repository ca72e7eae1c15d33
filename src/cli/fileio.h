/* Raw native-endian arrays in files: --input and --output. */
#ifndef CLR_CLI_FILEIO_H
#define CLR_CLI_FILEIO_H

#include <stddef.h>
#include <stdint.h>

/* Without --n, an input with no size to trust (a pipe, a device, a file
 * of size 0 such as those in /proc) is read up to this many bytes; one
 * that goes on beyond them (/dev/zero) is refused. */
#define CLI_STREAM_MAX_BYTES ((size_t)1 << 30)

/* The most bytes one read(2) of an input asks for: a progress report
 * each (cli_read_progress). */
#define CLI_READ_CHUNK ((size_t)16 << 20)

/* Called (when set: clreduce's progress line, progress.c) as an input's
 * values are read, after each read of up to CLI_READ_CHUNK bytes: done
 * bytes of them read of the expect bytes the input holds (a regular
 * file's size, a header's count, or --n's values of a stream), or of an
 * unknown number (expect 0: a stream read to its end). */
extern void (*cli_read_progress)(size_t done, size_t expect);

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

/* What a header at a file's start says (cli_read_input_hdr). */
typedef struct cli_input_header {
  size_t need;      /* more bytes, in all, needed to decide; else 0      */
  size_t size;      /* the header's bytes before the data; 0: no header  */
  size_t elem_size; /* with a header: the data's element size            */
  uint64_t count;   /* with a header: the element count it gives         */
} cli_input_header;

/* A reader of headers: looks at the file's first len bytes (at_end: the
 * file holds no more) and fills *h (zeroed before each call): h->need >
 * len to be called again with that many bytes (never asked of a stream
 * beyond them, so ask one byte at a time while raw data may be what
 * comes), else h->size 0 for raw data (the bytes read are its start) or
 * the header's size (== len) with its elem_size (>= 1) and count (>= 1,
 * count * elem_size within SIZE_MAX).  Returns 0, or the exit status after
 * printing the one-line reason (a header refused). */
typedef int (*cli_header_reader)(void *ctx, const char *path,
                                 const unsigned char *buf, size_t len,
                                 int at_end, cli_input_header *h);

/* cli_read_input_n, where the file may start with a header that `reader`
 * recognises: then the data after it are read, and must be exactly the
 * header's count * elem_size bytes (a stream bounded by --n: no byte
 * further is read); *n is the header's count.  Raw data (no header):
 * exactly as cli_read_input_n with elem_size and max_n.  The file is read
 * once, the header into a small buffer and the data into *data. */
int cli_read_input_hdr(const char *path, size_t elem_size,
                       const char *type_name, uint64_t max_n,
                       cli_header_reader reader, void *ctx, void **data,
                       size_t *n);

/* The one line (into buf) for data after a header of header_size bytes
 * that are not the count values of elem_size bytes it gives: have bytes
 * of them (more: more than the count's, have then the count's), e.g.
 * "input file 'x.npy' holds 8 bytes of data after its 128-byte header,
 * which gives 3 values of 4 bytes (12 bytes)".  Returns CLI_EXIT_USAGE. */
int cli_header_data_message(char *buf, size_t size, const char *path,
                            uint64_t have, int more, size_t header_size,
                            uint64_t count, size_t elem_size);

/* The checks of raw values (clreduce's and clreduce-mpi's, one message
 * each): bytes of an input (a regular file's size, or what was read of a
 * stream, no more than a byte past max_n values) in elements of
 * elem_size bytes (type_name for messages); max_n: the count --n asks
 * for, 0 without --n.  0 with *n the count; else CLI_EXIT_USAGE with the
 * line in buf: more values than max_n, none, or bytes that are not whole
 * values.  (Fewer than max_n values are the caller's to refuse.) */
int cli_raw_values_check(char *buf, size_t size, const char *path,
                         uint64_t bytes, size_t elem_size,
                         const char *type_name, uint64_t max_n, size_t *n);

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

/* cli_write_output of head (head_bytes, may be 0) then data, as one file:
 * a .npy header before the values without copying them. */
int cli_write_output2(const char *path, const void *head, size_t head_bytes,
                      const void *data, size_t bytes);

#endif
