/* CPU references and the rules that compare a device result against them.
 *
 * Shared by the CLI and the tests, never by the library itself: the
 * reference is an independent plain loop (the course notes' reduce_cpu).
 * What it computes comes from the operation's row (clreduce_ops.def, read
 * by src/check/ops_rows.h): the fold runs the row's combine from the row's
 * identity; CLR_OPF_INDEXED rows give records, a CLR_OPF_MEAN row is the
 * reference of its runs divided by the count, CLR_OPF_LOGICAL rows test
 * for non-zero.
 *
 * Rules:
 * - integers, min, max, and, or: the device result must match exactly.
 *   Integer sum and prod wrap modulo 2^bits of the result type, which is
 *   associative, so wrapping results match exactly too.
 * - float / double sum: the reference accumulates in double with Neumaier
 *   compensation (floats in double), and the device result passes when
 *   |got - ref| <= gamma_k(u) * sum|x| + (the reference's own error bound),
 *   where k is the reduction's error depth (longest chain of roundings,
 *   reported by the library) and u the unit roundoff of the type.
 * - float / double prod: every one of the n-1 multiplications rounds once
 *   whatever the shape, so |got - ref| <= gamma_{n-1}(u) * |ref| (+ the
 *   reference's own error: it multiplies in double / long double).
 * - underflow (sum and prod): the model of one operation is
 *   fl(a op b) = (a op b)(1 + d) + e, |d| <= u, |e| <= eta, with eta half
 *   the smallest denormal (2^-150, 2^-1075) under IEEE gradual underflow,
 *   or the smallest normal (2^-126, 2^-1022) on a device that flushes
 *   denormals to zero (which may flush every input too).  Each of the
 *   operations' (and flushed inputs') e adds at most eta to a sum; in a
 *   product it is multiplied by the factors combined after it, at most
 *   prod max(1, |x_i|).  See clr_underflow_term in reference.c.
 * - NaN must match NaN, infinities must match exactly.  When sum|x| (or a
 *   product) exceeds the type's range an intermediate may overflow in an
 *   order-dependent way; then +-inf or NaN is accepted too.
 * - float min / max: NaN propagates; -0.0 orders below +0.0.
 * - a row with CLR_OPF_SKIPS_NAN (NumPy's nansum ... nanmean) leaves the
 *   NaN elements (of floating data, after a map) out of the fold, the
 *   float sum's sum|x| and error bound, and the count: of no number a sum
 *   is 0, a min / max / mean NaN, an argmin / argmax NaN at index
 *   UINT64_MAX (minmax: both halves).  On integers it changes nothing.
 * - var and std (CLR_OPF_MOMENTS rows): the two-pass long double
 *   reference and the a-priori bound of moments_reference.h, on the value
 *   and the mean (clr_value.max) both; the divisor's ddof is the
 *   reference's (clr_ref_set_ddof, or the options of clr_ref_reduce_opt).
 */
#ifndef CLR_CHECK_REFERENCE_H
#define CLR_CHECK_REFERENCE_H

#include "clreduce.h"
#include "moments_reference.h"

#include <stddef.h>
#include <stdint.h>

typedef struct clr_reference {
  clr_value value;  /* the reference, in the result type                 */
  long double wide; /* float/double sum and prod: the wide reference     */
  double abs_sum;   /* float/double sum: sum |x|; prod: |product|        */
  double ref_error; /* bound on the wide reference's own error           */
  size_t n;         /* elements folded (less the NaNs a NaN-skipping row
                       leaves out): the sum's and product's count         */
  clr_op op;
  clr_type type;     /* input type                                        */
  int may_overflow;  /* range exceeded somewhere: inf/NaN accepted        */
  long double amp;   /* float/double prod: prod max(1, |x_i|), the most an
                        underflow's absolute error can be multiplied by     */
  int flush_to_zero; /* 0 after clr_ref_reduce (IEEE gradual underflow);
                        set it when the device flushes denormals of the
                        type (clr_ref_device_flushes)                      */
  /* var, std: the elements' moments, and the divisor n - ddof (ddof 0
   * after the clr_ref_reduce* calls; clr_ref_set_ddof changes it) */
  clr_ref_moments moments;
  uint64_t ddof;
} clr_reference;

typedef struct clr_check {
  int ok;
  int exact;    /* 1: an exact match was required                          */
  double error; /* |got - ref| (0 for exact matches that pass)             */
  double bound; /* the allowed error (0 when exact)                        */
  /* 1: the result is inf or NaN where the reference is finite, accepted
   * because the reference's magnitudes exceed the type's range
   * (may_overflow: whether a partial result overflows depends on the
   * order of the operations); error and bound are then infinite and
   * exact 0, for this is no match */
  int overflowed;
} clr_check;

/* Reduce on the CPU with a plain loop. */
void clr_ref_reduce(clr_op op, clr_type type, int narrow_accumulator,
                    const void *data, size_t n, clr_reference *out);
/* The same, the result (and the error bound's unit roundoff) in type rt
 * (clr_options_result_type). */
void clr_ref_reduce_to(clr_op op, clr_type type, clr_type rt, const void *data,
                       size_t n, clr_reference *out);

/* clr_ref_reduce_to over the values a built-in map (CLR_MAP_ABS,
 * CLR_MAP_SQUARE), or with y a dot product (x * y), gives: computed in rt
 * as the kernels do, held exactly in double for float sums and products
 * (squares and products of floats fit), else in rt; the roundings of
 * double-held values are added to out->ref_error.  CLR_MAP_NONE without
 * y is the plain reference.  1, or 0 when out of memory. */
int clr_ref_reduce_mapped(clr_map map, clr_op op, clr_type type, clr_type rt,
                          const void *x, const void *y, size_t n,
                          clr_reference *out);

/* clr_ref_reduce_mapped with what opt says: its map (built-in maps; not
 * CLR_MAP_EXPR, whose reference is expr_eval.h's), the result type
 * clr_options_result_type(opt, op, type) and, for var and std, its ddof.
 * opt may be NULL (the defaults).  1, or 0 when out of memory. */
int clr_ref_reduce_opt(const clr_options *opt, clr_op op, clr_type type,
                       const void *x, const void *y, size_t n,
                       clr_reference *out);

/* var and std (CLR_OPF_MOMENTS rows): the divisor n - ddof from now on,
 * for ref->value and clr_ref_check; nothing for other rows. */
void clr_ref_set_ddof(clr_reference *ref, uint64_t ddof);

/* Compare a device result; error_depth comes from clr_timing. */
void clr_ref_check(const clr_reference *ref, const clr_value *got,
                   size_t error_depth, clr_check *out);

/* 1 when dev flushes denormals of floating type t to zero (its
 * CL_DEVICE_SINGLE_FP_CONFIG / CL_DEVICE_DOUBLE_FP_CONFIG lacks
 * CL_FP_DENORM, or cannot be read); 0 otherwise. */
int clr_ref_device_flushes(cl_device_id dev, clr_type t);

/* The absolute (underflow) part of the error bound of a sum (amp = 1) or a
 * product of n elements of floating type t computed in any order, with
 * depth the longest chain of roundings: ops x eta x (1 + gamma_depth(u))
 * x amp, ops = n - 1 operations (plus the n inputs when flush_to_zero).
 * +inf when the model's second-order terms cannot be neglected. */
double clr_underflow_term(clr_type t, size_t n, size_t depth, long double amp,
                          int flush_to_zero);

/* gamma_k(u) = k u / (1 - k u); +inf when k u >= 1. */
double clr_gamma(double k, double u);
/* Unit roundoff of a floating type (2^-24, 2^-53); 0 for integers. */
double clr_unit_roundoff(clr_type t);

/* (clr_value_format and clr_value_as_double, once here, are the
 * library's: include/clreduce.h.) */
/* x rounded to floating type t, as a value. */
clr_value clr_fp_value(clr_type t, long double x);
/* A wrapped 64-bit pattern as a value of integer type t. */
clr_value clr_int_value(clr_type t, uint64_t bits);
/* Element i of an array of floating type t (half decoded here, not by a
 * device) as a long double. */
long double clr_fp_at(clr_type t, const void *data, size_t i);
/* Element i of an array of integer type t as 64 bits (int sign-extended). */
uint64_t clr_bits_at(clr_type t, const void *data, size_t i);
/* Element i of an array of type t, as a value. */
clr_value clr_value_at(clr_type t, const void *data, size_t i);

/* The operation's identity (its row's identity column) as a value of type
 * t: 0 (sum, or), 1 (prod, and), +inf / the type's largest value (TOP:
 * min), -inf / the smallest (BOTTOM: max), NaN for NAN_TOP / NAN_BOTTOM on
 * floating types (else TOP / BOTTOM). */
clr_value clr_identity(clr_op op, clr_type t);

/* Apply op's row's combine to two values of the same type with the
 * library's semantics (NaN-propagating min/max with -0 < +0, wrapping
 * integers; indexed rows: records, each extreme with its first index).  A
 * NaN-skipping row on floating values leaves a NaN b out, and a NaN a (no
 * number yet) loses a min / max to b. */
clr_value clr_combine(clr_op op, clr_value a, clr_value b);

#endif
