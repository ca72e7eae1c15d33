/* Raw native-endian arrays in files: --input and --output. */
#ifndef CLR_CLI_FILEIO_H
#define CLR_CLI_FILEIO_H

#include <stddef.h>

/* Read the whole of path as elements of elem_size bytes (type_name for
 * messages).  On success returns 0 with *data (free() it) and *n >= 1.
 * Otherwise prints the one-line reason and returns the exit status:
 * CLI_EXIT_USAGE for a missing, unreadable, empty or wrongly sized file,
 * CLI_EXIT_RUNTIME when memory runs out. */
int cli_read_input(const char *path, size_t elem_size, const char *type_name,
                   void **data, size_t *n);

/* Write bytes to path.tmp, then rename it to path; on any failure the
 * temporary file is removed, path is left as it was, the one-line reason
 * is printed and CLI_EXIT_RUNTIME returned.  0 on success. */
int cli_write_output(const char *path, const void *data, size_t bytes);

#endif
