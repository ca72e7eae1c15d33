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

/* What a command asks of a .npy input (cli_npy_input_plan). */
typedef struct cli_npy_ask {
  const char *option;  /* "--input", "--input2": the messages' name      */
  clr_type type;       /* the type it must hold, where type_by is set    */
  const char *type_by; /* what fixed the type ("--type", "--input"); NULL */
  uint64_t n;          /* the count it must hold, where n_by is set      */
  const char *n_by;    /* what gave n ("--n", "--input"); NULL           */
} cli_npy_ask;

/* What cli_npy_input_plan made of a file's first bytes. */
typedef struct cli_npy_plan {
  int found;        /* a .npy header, accepted: npy and elem_size set  */
  size_t need;      /* > len: call again with this many bytes in all   */
  cli_npy npy;      /* its type, shape, count (n) and data_offset      */
  size_t elem_size; /* the dtype's size                                */
  char shape[64];   /* the shape as the messages write it: "(3, 4)"   */
  char msg[768];    /* a refusal: its one line, without the program's  */
} cli_npy_plan;

/* The rules of clreduce and clreduce-mpi for a .npy --input (or
 * --input2), one set of messages for both: buf holds the file's first len
 * bytes, no more than the plan asked for (at_end: the file holds no
 * more; start with len 0).  A file known by the magic
 * (never by its name) must hold a header cli_npy_parse reads of one 1-D
 * or 2-D C-ordered array (a 2-D array is its rows one after another),
 * no longer than 1 MiB, of ask's type where ask->type_by is set, not
 * empty, of ask's count where ask->n_by is set.  Returns 0 with
 * plan->need > len (read that many bytes, then call again), plan->found
 * (a .npy header of plan->npy.data_offset == len bytes: the data follow),
 * or neither (no magic: raw values).  Otherwise the exit status
 * (CLI_EXIT_USAGE, or CLI_EXIT_RUNTIME for an array too large for this
 * machine) with plan->msg, e.g. "--input 'x.npy' holds float values (its
 * .npy dtype), not the int of --type".  The data's size is the caller's
 * to check (cli_input_size_message). */
int cli_npy_input_plan(const char *path, const unsigned char *buf, size_t len,
                       int at_end, const cli_npy_ask *ask, cli_npy_plan *plan);

/* How a report names an input: "file 'x'" (raw values: plan NULL or
 * nothing found), ".npy file 'x.npy'", and a 2-D array's shape after it:
 * ".npy file 'x.npy' (shape (3, 4))". */
void cli_npy_describe(char *buf, size_t size, const char *path,
                      const cli_npy_plan *plan);

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
