/* CPU prefix scan and its per-element comparison with a device scan.
 *
 * The reference is a plain loop.  Inclusive: out[i] = x[0] op ... op x[i];
 * exclusive: out[0] is the op's identity and out[i] = x[0] op ... op
 * x[i-1].  The operation's row decides: exact combines (every combine of
 * integers, and float/double min and max) are built with clr_identity /
 * clr_combine and must match exactly (NaN matches NaN).  The rounding ones
 * of floats (clr_ref_combine_info): float/double sum: a Neumaier-compensated
 * running sum in double, and element i passes when |got - ref| <= gamma_k(u) *
 * sum|x| (over the elements it covers) + u|ref| + the reference's own
 * error, k the scan's error depth from clr_timing.  Float/double prod: a
 * running product in long double, with the bound gamma_{m}(u) |ref| for m
 * multiplications.  Both bounds add the underflow term of reference.h
 * (clr_underflow_term) for the elements covered.  Non-finite results
 * follow clr_ref_check's rules.  A NaN-skipping row leaves NaN elements
 * out (reference.h). */
#ifndef CLR_CHECK_SCAN_REFERENCE_H
#define CLR_CHECK_SCAN_REFERENCE_H

#include "clreduce.h"

#include <stddef.h>

typedef struct clr_scan_check {
  int ok;
  int exact;          /* an exact match was required                     */
  size_t n_bad;       /* elements that failed                            */
  size_t worst_index; /* largest error / bound (exact: first mismatch)   */
  double worst_error; /* |got - ref| there (0 for exact passes)          */
  double worst_bound; /* the bound there (0 when exact)                  */
  double worst_ratio; /* worst_error / worst_bound (0 for exact passes)  */
  /* elements (segments) whose result is inf or NaN where the reference is
   * finite, accepted as its magnitudes exceed the type's range (an
   * order-dependent overflow: clr_check's overflowed); not in worst_* */
  size_t n_overflowed;
  clr_value got_worst, ref_worst; /* the values at worst_index           */
  clr_value got_last, ref_last;   /* the last element: the total         */
} clr_scan_check;

/* Compare out (the device scan of in, n >= 1 elements of type) with the
 * CPU scan. */
void clr_ref_scan_check(clr_op op, clr_type type, int exclusive, const void *in,
                        const void *out, size_t n, size_t error_depth,
                        clr_scan_check *res);
/* The same for a scan of type written as out_type (clr_scan_output_type:
 * int into long, float into double, half into float), on a device that
 * flushes denormals to zero when flush_to_zero is set. */
void clr_ref_scan_check_to(clr_op op, clr_type type, clr_type out_type,
                           int exclusive, const void *in, const void *out,
                           size_t n, size_t error_depth, int flush_to_zero,
                           clr_scan_check *res);
/* The same for a device that flushes denormals of type to zero when
 * flush_to_zero is set (clr_ref_device_flushes): the underflow term of
 * the bounds then uses the smallest normal (see reference.h). */
void clr_ref_scan_check_flush(clr_op op, clr_type type, int exclusive,
                              const void *in, const void *out, size_t n,
                              size_t error_depth, int flush_to_zero,
                              clr_scan_check *res);

#endif
