/* The check of exact matrices: see exact_matrix.h. */
#include "exact_matrix.h"

#include "exact_sum.h"
#include "progress_counter.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int clr_ref_exact_matrix_applies(const clr_options *opt, clr_op op,
                                 clr_type type) {
  return opt && opt->exact && (op == CLR_SUM || op == CLR_MEAN) &&
         (type == CLR_FLOAT || type == CLR_DOUBLE);
}

/* The exact op (sum or mean) of the len contiguous elements at line. */
static clr_value exact_of(const clr_options *opt, clr_op op, clr_type type,
                          const void *line, size_t len) {
  clr_value v;
  clr_ref_exact_sum(type, line, len, &v);
  v.op = CLR_SUM;
  if (op == CLR_MEAN)
    clr_value_sum_to_mean(opt, type, (uint64_t)len, &v);
  return v;
}

/* Result k (of count) got against its reference want, into out. */
static void check_one(const clr_value *want, const clr_value *got, size_t k,
                      size_t count, clr_segments_check *out) {
  int ok = clr_ref_exact_equal(want, got);
  if (!ok) {
    if (out->ok) {
      out->worst_index = k;
      out->worst_error =
          fabs(clr_value_as_double(got) - clr_value_as_double(want));
      if (isnan(out->worst_error))
        out->worst_error = INFINITY;
      out->got_worst = *got;
      out->ref_worst = *want;
    }
    out->ok = 0;
    out->n_bad++;
  } else if (out->ok && k == 0) {
    out->got_worst = *got;
    out->ref_worst = *want;
  }
  if (k + 1 == count) {
    out->got_last = *got;
    out->ref_last = *want;
  }
}

int clr_ref_matrix_check_exact(const clr_options *opt, clr_op op, clr_type type,
                               const void *data, size_t rows, size_t cols,
                               size_t pitch, int axis, const void *results,
                               clr_segments_check *out) {
  size_t es = clr_type_size(type);
  clr_type rt = clr_options_result_type(opt, op, type);
  const char *base = data;
  memset(out, 0, sizeof *out);
  out->ok = 1;
  out->exact = 1;
  if (pitch < cols)
    pitch = cols;
  clr_progress_plan((uint64_t)rows * cols);
  if (axis != 0) {
    for (size_t r = 0; r < rows; r++) {
      clr_value want = exact_of(opt, op, type, base + r * pitch * es, cols);
      clr_value got = clr_result_at(op, rt, results, r);
      check_one(&want, &got, r, rows, out);
    }
    return 1;
  }
  /* Axis 0: columns [c0, c0 + w) gathered column-major, row by row (a
   * row's piece of the block read as one run), column k at scratch + k *
   * rows. */
  size_t width = clr_ref_matrix_block(rows, cols, es);
  char *scratch = malloc((width ? width : 1) * (rows ? rows : 1) * es);
  if (!scratch)
    return 0;
  for (size_t c0 = 0; c0 < cols; c0 += width) {
    size_t w = cols - c0 < width ? cols - c0 : width;
    for (size_t r = 0; r < rows; r++) {
      const char *src = base + (r * pitch + c0) * es;
      for (size_t k = 0; k < w; k++)
        memcpy(scratch + (k * rows + r) * es, src + k * es, es);
    }
    for (size_t k = 0; k < w; k++) {
      clr_value want = exact_of(opt, op, type, scratch + k * rows * es, rows);
      clr_value got = clr_result_at(op, rt, results, c0 + k);
      check_one(&want, &got, c0 + k, cols, out);
    }
  }
  free(scratch);
  return 1;
}
