/* libFuzzer harness: the --input file loader (src/cli/fileio.c).
 *
 * The first byte picks the element type and how the bytes reach the
 * loader: as a regular file (memfd) or as a pipe (the stream path, for
 * inputs that fit in the pipe's buffer).  The harness asserts that the
 * loader either refuses with a usage status, or returns exactly the
 * file's bytes as size / elem_size elements. */
#include "cli.h"
#include "fileio.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const size_t sizes[] = {4, 8, 4, 4, 8, 8};
static const char *const names[] = {"float", "double", "int",
                                    "uint",  "long",   "ulong"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  unsigned mode = data[0];
  size_t es = sizes[mode % 6];
  int use_pipe = (mode & 0x80) != 0;
  data++;
  size--;
  int fds[2];
  if (use_pipe) {
    if (size > 60000 || pipe(fds) != 0)
      return 0;
    if (size && write(fds[1], data, size) != (ssize_t)size)
      abort();
    close(fds[1]);
  } else {
    fds[0] = memfd_create("fuzz-input", 0);
    if (fds[0] < 0)
      return 0;
    if (size && write(fds[0], data, size) != (ssize_t)size)
      abort();
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fds[0]);
  void *got = NULL;
  size_t n = 0;
  int rc = cli_read_input(path, es, names[mode % 6], &got, &n);
  close(fds[0]);
  if (rc == 0) {
    if (size == 0 || size % es != 0 || n != size / es ||
        memcmp(got, data, size) != 0)
      abort();
    free(got);
  } else if (rc != CLI_EXIT_USAGE || (size != 0 && size % es == 0)) {
    abort(); /* only empty or wrongly sized input may be refused */
  }
  return 0;
}
