/* libFuzzer harness: the .npy header reader (src/cli/npy.c).
 *
 * Any bytes: the reader either refuses with a reason, or accepts a header
 * that lies within the input, of a type clreduce reads, whose element
 * count is the product of its shape; the writer's header for that type
 * and shape reads back to the same type, shape and count.  The input
 * plan of clreduce and clreduce-mpi refuses with a message or accepts
 * a header of the whole input. */
#include "npy.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The input plan (cli_npy_input_plan) of the bytes, a file's whole
 * start: a refusal with its line, an accepted 1-D or 2-D header of all
 * the bytes, or raw values; never more bytes asked of a file at its end. */
static void plan(const uint8_t *data, size_t size) {
  const cli_npy_ask ask = {.option = "--input"};
  cli_npy_plan p;
  int rc = cli_npy_input_plan("f", data, size, 1, &ask, &p);
  if (rc != 0 ? !p.msg[0] || p.found
              : p.msg[0] || p.need > size ||
                    (p.found &&
                     (p.npy.data_offset != size || p.elem_size == 0 ||
                      p.npy.count == 0 || p.npy.ndim < 1 || p.npy.ndim > 2)))
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  plan(data, size);
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
