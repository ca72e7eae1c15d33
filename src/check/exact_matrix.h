/* The check of an exact matrix (clr_options.exact with a CLR_REQ_MATRIX
 * request): every column's (axis 0) or row's (axis 1) sum must be the
 * CPU's exact sum of its elements (exact_sum.h) to the bit, and a mean
 * that sum divided by the count as clr_value_sum_to_mean divides it. */
#ifndef CLR_CHECK_EXACT_MATRIX_H
#define CLR_CHECK_EXACT_MATRIX_H

#include "clreduce.h"
#include "segment_reference.h"

#include <stddef.h>

/* 1 when exact mode changes the result of op over type: float or double
 * data, op CLR_SUM or CLR_MEAN, opt->exact set.  (Other ops and types
 * are exact anyway, or refused: their usual checks apply.) */
int clr_ref_exact_matrix_applies(const clr_options *opt, clr_op op,
                                 clr_type type);

/* Check results (as clr_run's CLR_REQ_MATRIX writes them: cols results
 * for axis 0, rows for axis 1, each of clr_options_result_type(opt, op,
 * type)) of the exact op (CLR_SUM or CLR_MEAN) over a row-major matrix of
 * rows x cols elements of type (float or double), row r starting pitch
 * elements after row r - 1 (pitch >= cols).  Columns are gathered a block
 * at a time (clr_ref_matrix_block), rows summed where they lie.  out: ok,
 * exact (always 1), n_bad, worst_index the first column or row that
 * differs (else 0), its result and reference, the last one's.  1, or 0
 * when out of host memory. */
int clr_ref_matrix_check_exact(const clr_options *opt, clr_op op, clr_type type,
                               const void *data, size_t rows, size_t cols,
                               size_t pitch, int axis, const void *results,
                               clr_segments_check *out);

#endif
