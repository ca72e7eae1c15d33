/* CPU references of segmented reductions (clr_reduce_segments_*) and
 * segmented scans (clr_scan_segments_*, clr_scan_heads_*): every
 * segment reduced by reference.c's plain loop (through the same built-in
 * map) and compared with the device's result by reference.c's rules; an
 * empty segment must give the reference of no element exactly: the row's
 * identity (records: at index UINT64_MAX; a mean: NaN, any NaN).  var
 * and std (CLR_OPF_MOMENTS) records are checked by moments_reference.h's
 * rules (an empty segment: value and mean NaN) against the call's whole
 * error depth, and each record's count must be its segment's length. */
#ifndef CLR_CHECK_SEGMENT_REFERENCE_H
#define CLR_CHECK_SEGMENT_REFERENCE_H

#include "clreduce.h"
#include "scan_reference.h"

#include <stddef.h>
#include <stdint.h>

/* A scan's per-element check, per segment: worst_index is the first
 * failing segment, else the one nearest its bound; got_last / ref_last the
 * last segment's result and reference. */
typedef clr_scan_check clr_segments_check;

/* An empty segment's result, exactly: a and b the same to the bit, any
 * NaN matching NaN (a mean of nothing, a NaN-skipping min of nothing),
 * indices too. */
int clr_ref_same_result(const clr_value *a, const clr_value *b);

/* Check results (n_segments results of op in type rt, as clr_result_at
 * decodes them: values, or records for argmin, argmax and minmax, their
 * indices counted from the segment's first element; a mean's NaN for an
 * empty segment) of op over the segments
 * [offsets[s], offsets[s + 1]) of data (of type, mapped by map: none, abs
 * or square).  depth is the call's error depth (clr_timing), capped per
 * segment at its length - 1.  1, or 0 when out of host memory. */
int clr_ref_segments_check(clr_map map, clr_op op, clr_type type, clr_type rt,
                           const void *data, const uint64_t *offsets,
                           size_t n_segments, const void *results, size_t depth,
                           clr_segments_check *out);

/* clr_ref_segments_check with what opt says (NULL: the defaults): its
 * built-in map, the result type clr_options_result_type(opt, op, type)
 * and, for var and std, its ddof (clr_ref_segments_check's is 0).  The
 * _opt forms below are the same for ranges and matrices. */
int clr_ref_segments_check_opt(const clr_options *opt, clr_op op, clr_type type,
                               const void *data, const uint64_t *offsets,
                               size_t n_segments, const void *results,
                               size_t depth, clr_segments_check *out);

/* The same for one result a range: range r is the ranges[2r + 1]
 * elements from ranges[2r] (any order, overlapping or not, within data);
 * each is reduced where it lies, no copy, and each distinct (offset,
 * length) once, so the check costs memory in proportion to the number of
 * ranges, never to their total length.  1, or 0 when out of host memory. */
int clr_ref_ranges_check(clr_map map, clr_op op, clr_type type, clr_type rt,
                         const void *data, const uint64_t *ranges,
                         size_t n_ranges, const void *results, size_t depth,
                         clr_segments_check *out);

int clr_ref_ranges_check_opt(const clr_options *opt, clr_op op, clr_type type,
                             const void *data, const uint64_t *ranges,
                             size_t n_ranges, const void *results, size_t depth,
                             clr_segments_check *out);

/* The same for a row-major matrix of rows x cols elements of data, row r
 * starting pitch elements after row r - 1 (pitch >= cols): axis 0 checks
 * cols results, one a column (the fold over its rows; records' indices
 * the row), axis 1 rows results, one a row (records' indices the
 * column), as clr_run's CLR_REQ_MATRIX gives them.  A column is gathered
 * into scratch (a block of adjacent columns at a time, read row by row:
 * never a transposed copy of the whole matrix), a row reduced where it
 * lies; each by clr_ref_segments_check's reference and check (depth
 * capped at the axis' length - 1).  Built-in maps only.  1, or 0 when out
 * of host memory. */
int clr_ref_matrix_check(clr_map map, clr_op op, clr_type type, clr_type rt,
                         const void *data, size_t rows, size_t cols,
                         size_t pitch, int axis, const void *results,
                         size_t depth, clr_segments_check *out);

int clr_ref_matrix_check_opt(const clr_options *opt, clr_op op, clr_type type,
                             const void *data, size_t rows, size_t cols,
                             size_t pitch, int axis, const void *results,
                             size_t depth, clr_segments_check *out);

/* The columns a matrix check holds at once (gathered column-major, a
 * block's row piece read as one run): at most 64 and 16 MiB of elements
 * of esize bytes, at least one, at most cols. */
size_t clr_ref_matrix_block(size_t rows, size_t cols, size_t esize);

/* Check out (n elements of out_type), the segmented scan of in (of type)
 * over the segments [offsets[s], offsets[s + 1]): each segment by
 * clr_ref_scan_check_to over it alone (depth capped at its length), so an
 * exclusive scan's head must be the identity exactly.  worst_index is an
 * element index of the whole array; got_last / ref_last: the last element
 * of the last non-empty segment. */
void clr_ref_segmented_scan_check(clr_op op, clr_type type, clr_type out_type,
                                  int exclusive, const void *in,
                                  const void *out, const uint64_t *offsets,
                                  size_t n_segments, size_t depth,
                                  int flush_to_zero, clr_scan_check *res);

#endif
