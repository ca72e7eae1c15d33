/* NumPy .npy files: the header read (dtype, order, shape) and written.
 * Format: numpy.lib.format (versions 1.0, 2.0 and 3.0): the magic
 * "\x93NUMPY", a version, the header's length, and a Python dict literal
 * {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } padded with
 * spaces to a multiple of 64 bytes and ended by a newline; the data
 * follows, C order. */
#ifndef CLR_CLI_NPY_H
#define CLR_CLI_NPY_H

#include "clreduce.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define CLI_NPY_MAX_DIMS 8

typedef struct cli_npy {
  clr_type type; /* from 'descr' */
  int ndim;      /* 0 for a scalar */
  uint64_t shape[CLI_NPY_MAX_DIMS];
  uint64_t count;     /* the product of shape (1 for a scalar) */
  size_t data_offset; /* where the data starts: the header's size */
} cli_npy;

/* 1 when buf (len bytes, the file's start) begins with the .npy magic. */
int cli_npy_is(const unsigned char *buf, size_t len);

/* Parse the header at the start of buf (len bytes: the whole file or at
 * least its header).  NULL on success, with *out filled; else a reason
 * (a static string naming what is wrong: a big-endian or unsupported
 * dtype, Fortran order, a bad shape, a damaged header).  The data's size
 * (count elements) is not compared with len here. */
const char *cli_npy_parse(const unsigned char *buf, size_t len, cli_npy *out);

/* Write the header of an array of type with ndim dimensions of shape
 * into buf (cap bytes, at least 128 for a shape of up to 8 dimensions):
 * version 1.0, padded to a multiple of 64.  Returns its size, or 0 for a
 * type with no dtype or a buffer too small. */
size_t cli_npy_header(unsigned char *buf, size_t cap, clr_type type, int ndim,
                      const uint64_t *shape);

/* 1 when path names a .npy file (its name ends in ".npy"): --output and
 * --save-input write one there. */
static inline int cli_npy_name(const char *path) {
  size_t len = path ? strlen(path) : 0;
  return len >= 4 && strcmp(path + len - 4, ".npy") == 0;
}

#endif
