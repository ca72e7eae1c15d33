/* libFuzzer harness: the .npy header reader (src/cli/npy.c).
 *
 * Any bytes: the reader either refuses with a reason, or accepts a header
 * that lies within the input, of a type clreduce reads, whose element
 * count is the product of its shape; the writer's header for that type
 * and shape reads back to the same type, shape and count. */
#include "npy.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cli_npy h;
  const char *why = cli_npy_parse(data, size, &h);
  if (why) {
    if (!why[0])
      abort();
    return 0;
  }
  if (h.data_offset > size || h.ndim < 0 || h.ndim > CLI_NPY_MAX_DIMS ||
      (unsigned)h.type >= CLR_TYPE_COUNT)
    abort();
  uint64_t count = 1;
  for (int k = 0; k < h.ndim; k++)
    count *= h.shape[k];
  if (count != h.count)
    abort();
  unsigned char b[256];
  size_t n = cli_npy_header(b, sizeof b, h.type, h.ndim, h.shape);
  cli_npy g;
  if (n == 0 || n % 64 != 0 || cli_npy_parse(b, n, &g) != NULL ||
      g.type != h.type || g.ndim != h.ndim || g.count != h.count ||
      g.data_offset != n || memcmp(g.shape, h.shape, sizeof g.shape) != 0)
    abort();
  return 0;
}
