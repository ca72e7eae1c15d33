/* CPU reference of the variance and the standard deviation (CLR_VAR,
 * CLR_STD: the rows with CLR_OPF_MOMENTS) and the a-priori bound a
 * device's result is checked against.
 *
 * The reference is the corrected two-pass algorithm in long double,
 * independent of the library's one-pass Welford / Chan kernels: the mean
 * m = sum x / n, then M2 = sum (x - m)^2 - (sum (x - m))^2 / n (the
 * correction removes the first pass's rounding of m to first order), and
 * m += sum (x - m) / n.  When every element is equal, m is that element
 * and M2 is 0 exactly.  sumsq = sum x^2 and maxabs = max |x| scale the
 * bounds below.
 *
 * The bound (u the unit roundoff of the result type rt, 2^-24 for float,
 * 2^-53 for double; d = depth + 2, depth the call's error depth: the
 * longest chain of Welford updates and Chan merges, clr_timing's
 * error_depth; eta the smallest normal number of rt, which covers devices
 * that flush denormals to zero as well as gradual underflow):
 *
 *   M2:   |M2' - M2| <= 4 d u sqrt(M2 sumsq)               (rounding)
 *                     + 8 (n + d) eta + 4 eta sqrt(n M2)  (underflow)
 *                     + n u_ld sumsq                      (the reference)
 *         Chan, Golub & LeVeque (1983): the updating and pairwise
 *         algorithms' relative error is bounded by (chain length) kappa u,
 *         kappa = sqrt(sumsq / M2) the problem's condition number; 4 d
 *         covers the constant, the rounding of integer data to rt and the
 *         final division.  The underflow term: each operation's absolute
 *         error is at most eta (carried by at most (1 + u)^d), and an input
 *         flushed to zero moves M2 by at most 2 eta sum |x - m| <=
 *         2 eta sqrt(n M2).  u_ld is long double's unit roundoff: the
 *         reference's own error, negligible where long double is the
 *         80-bit x87 format, and still counted where it is only double.
 *   var:  |v' - v| <= bound(M2) / (n - ddof) + 2 u v
 *         (the division rounds once, and n - ddof may round to rt too)
 *   std:  |s' - s| <= bound(var) / ((1 - u) s' + s) + u s'
 *         (|sqrt(v') - sqrt(v)| = |v' - v| / (sqrt(v') + sqrt(v)), then the
 *         square root's own rounding)
 *   mean: |m' - m| <= 4 d u maxabs + 8 d eta + n u_ld maxabs
 *         (every update and merge adds at most 3 u maxabs to the mean's
 *         error, and a merge's weighted mean never enlarges the error it
 *         inherits)
 *
 * Exactly, before any bound:
 *   - a NaN among the elements: variance (deviation) and mean NaN;
 *   - an infinity (and no NaN): variance NaN; the mean NaN or the
 *     reference's infinity (Welford gives NaN once an infinity meets a
 *     finite value, NumPy the infinity); both signs of infinity: NaN;
 *   - n <= ddof: the variance NaN (as NumPy); n == 0: the mean NaN too;
 *   - M2 == 0 (every element equal): the variance exactly 0 (Welford's
 *     updates and Chan's merges keep it 0).
 * Overflow: where (2 maxabs)^2 n exceeds rt's range an intermediate
 * (x - m)^2 may overflow, in an order-dependent way, so an inf or NaN
 * variance (deviation) is accepted there (likewise an inf or NaN mean where
 * 2 maxabs does): err and bound are then +inf. */
#ifndef CLR_CHECK_MOMENTS_REFERENCE_H
#define CLR_CHECK_MOMENTS_REFERENCE_H

#include "clreduce.h"

#include <stddef.h>
#include <stdint.h>

typedef struct clr_ref_moments {
  size_t n;             /* elements                                   */
  long double mean, m2; /* the mean, sum (x - mean)^2                 */
  long double sumsq;    /* sum x^2                                    */
  long double maxabs;   /* max |x| over the finite elements           */
  int has_nan, has_inf; /* a NaN, an infinity among the elements      */
  /* what each element may differ by on the device (a map expression's
   * rounding, clr_ref_check_expr; 0 from clr_ref_moments_of): the mean's
   * bound grows by it, M2's by 2 n (2 maxabs) err + n err^2 */
  double input_err;
} clr_ref_moments;

/* The moments of the count elements first, first + stride, ... of data of
 * any clr_type (half decoded on the CPU; integers exactly in long double,
 * 64-bit ones included where long double has 64 bits of mantissa).  With
 * a NaN: mean and m2 NaN; with an infinity: m2 NaN, the mean that
 * infinity (NaN when both signs occur). */
void clr_ref_moments_of(clr_type type, const void *data, size_t first,
                        size_t count, size_t stride, clr_ref_moments *out);

/* The reference as a value of result type rt, as the library returns it:
 * v the variance (op CLR_VAR) or the standard deviation (CLR_STD) with
 * divisor n - ddof, NaN when n <= ddof; max the mean. */
clr_value clr_ref_moments_value(clr_op op, clr_type rt, uint64_t ddof,
                                const clr_ref_moments *ref);

/* 1 when got (op CLR_VAR or CLR_STD, result type rt: v = var / std,
 * max = mean) is within the a-priori bound above, else 0.  *err and
 * *bound (either may be NULL): the worse of the value's and the mean's
 * error against its bound (the failing one, if any; 0 and 0 for the exact
 * rules; +inf and +inf for an accepted overflow). */
int clr_ref_moments_check(clr_op op, clr_type rt, uint64_t ddof, size_t depth,
                          const clr_ref_moments *ref, const clr_value *got,
                          double *err, double *bound);

#endif
