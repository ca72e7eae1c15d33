/* The CPU reference of a map expression: the expression (parsed by the
 * library's expr.c) evaluated on the CPU with OpenCL C's typed semantics,
 * element by element from the input, never on a device; the values folded
 * by reference.c's plain loops, and the device's result checked with an
 * allowance for how far its arithmetic may lawfully differ.
 *
 * Semantics: x (y) is the element in its type (half decoded to float), i
 * the ulong index; the usual arithmetic conversions (1.0 is double, 1.0f
 * float, a float op float in float), integers wrap, int division truncates,
 * shift counts are taken modulo the width, comparisons and !, &&, || give
 * int 0 / 1; the value is cast to the accumulator type as the kernel casts
 * it (and / or: its truth).  An integer division by zero (or the smallest
 * value by -1), a float converted to an integer that cannot hold it, and
 * clamp with lo > hi are undefined in OpenCL C: no reference then.
 *
 * Allowance: every element's value carries a bound on |device - CPU|,
 * propagated through the expression to first order: 0 while every step is
 * one both compute the same (integer arithmetic, comparisons, +, -, * and
 * float conversions of exact operands, fabs, fmin, fmax, min, max, floor,
 * fma, ...), plus per step that may differ its allowance in ulps of its
 * result: OpenCL C 1.2's maximum errors (float division 2.5, sqrt 3, exp,
 * log 3, sin, cos 4, atan 5, atan2 6, pow 16, ...) and one for the CPU's own
 * rounding; a sum of a product (a * b + c) may be contracted to an fma,
 * which skips the product's rounding (half an ulp of it); a value below
 * the smallest normal may be flushed to zero.  Perturbed operands carry
 * their bounds through (|a| eb + |b| ea for a product, the ends of the
 * interval for a monotone function), a comparison within its operands'
 * bounds may go either way, and a conversion to an integer of an
 * uncertain value may differ by the interval's integers.  The result's
 * check adds the bounds: a float sum's bound grows by their sum, a min /
 * max / integer result is accepted within the largest (the sum for
 * integer sums), an argmin / argmax index when its element's CPU value is
 * within its bound of the CPU extreme, and / or either truth when an
 * element's truth is uncertain.  Every bound 0: the usual exact checks. */
#ifndef CLR_CHECK_EXPR_EVAL_H
#define CLR_CHECK_EXPR_EVAL_H

#include "clreduce.h"
#include "expr.h"
#include "reference.h"
#include "segment_reference.h"

#include <stddef.h>
#include <stdint.h>

/* A value of the expression's types with its allowance. */
typedef struct clr_eval_value {
  clr_expr_type type;
  uint64_t u;    /* integers: the bits, sign-extended from signed types */
  double d;      /* float (exactly) and double                         */
  double err;    /* bound on |device - CPU|; 0: the same exactly       */
  int undefined; /* CLR_EVAL_* below: undefined in OpenCL C            */
} clr_eval_value;

#define CLR_EVAL_DEFINED 0
#define CLR_EVAL_DIV_ZERO 1 /* an integer division or remainder by 0  */
#define CLR_EVAL_DIV_OVER 2 /* the smallest signed value / -1          */
#define CLR_EVAL_CONVERT 3  /* a float out of an integer type's range  */
#define CLR_EVAL_CLAMP 4    /* clamp(x, lo, hi) with lo > hi           */
/* What an undefined code means, for a message. */
const char *clr_eval_undefined_name(int code);

/* A parsed, typed expression of x, i (and y) ready to evaluate. */
typedef struct clr_map_eval {
  clr_expr expr;
  clr_type type;        /* the input's type */
  clr_eval_value *vals; /* one per node */
} clr_map_eval;

/* Parse text as a map expression of data of type (dot: with y) and type
 * it.  0; 1 refused (err: why, one line); -1 out of memory. */
int clr_map_eval_init(clr_map_eval *m, const char *text, clr_type type, int dot,
                      char *err, size_t err_size);
void clr_map_eval_free(clr_map_eval *m);

/* The expression at element k of x (and y, or NULL), index i: its value
 * in the expression's type, with its allowance. */
clr_eval_value clr_map_eval_at(clr_map_eval *m, const void *x, const void *y,
                               size_t k, uint64_t i);

/* v converted (a C cast) to the expression type t. */
clr_eval_value clr_eval_convert(clr_eval_value v, clr_expr_type t);

/* The reference of a reduction over a map expression, with what its
 * check needs beyond clr_reference. */
typedef struct clr_expr_reference {
  clr_reference ref;
  clr_op op;
  clr_type rt;      /* the result type                                  */
  clr_type vt;      /* the type the values are folded in (the kernel's
                       accumulator; a mean's sum's)                      */
  double err_sum;   /* sum of the elements' allowances (in vt)          */
  double err_max;   /* the largest                                      */
  double rel_sum;   /* a product: sum of allowance / |value|            */
  size_t uncertain; /* elements whose truth may differ (and / or)       */
  size_t sure_true, sure_false;
  double lo_bound; /* min over elements of value + allowance (argmin)  */
  double hi_bound; /* max over elements of value - allowance (argmax)  */
  /* argmin / argmax re-evaluate an element at the reported index: */
  clr_map_eval *m;
  const void *x, *y;
  size_t n;
  size_t first, stride; /* element j: x[first + j * stride] (a column's
                           stride is the matrix's pitch)                 */
  uint64_t index_base;  /* the i of element 0; element j's is
                           index_base + j * stride                        */
  uint64_t ddof;        /* var and std: the options' divisor n - ddof    */
} clr_expr_reference;

/* Evaluate m over the n elements of x (and y; i counts from
 * opt->index_base), each value cast to the type the kernel accumulates it
 * in (clr_options_result_type of op, a mean's of its sum; and / or: its
 * truth), and fold them with clr_ref_reduce_to into out (the indices of
 * records counted from x's first element, as that fold counts them).  0;
 * 1 when an element's value is undefined in OpenCL C (err says which, one
 * line); -1 out of memory. */
int clr_ref_reduce_expr(clr_map_eval *m, const clr_options *opt, clr_op op,
                        clr_type type, const void *x, const void *y, size_t n,
                        clr_expr_reference *out, char *err, size_t err_size);

/* Compare a device result with the reference, the allowance added. */
void clr_ref_check_expr(const clr_expr_reference *r, const clr_value *got,
                        size_t error_depth, clr_check *out);

/* clr_ref_segments_check (segment_reference.h) for a map expression:
 * segment s is [offsets[s], offsets[s + 1]) of data, or with ranges the
 * range (ranges[2s], ranges[2s + 1]) (offset, length); each one's
 * expression is evaluated with i counted from opt->index_base at the
 * array's first element, folded and checked as clr_ref_reduce_expr and
 * clr_ref_check_expr do (indices of records from the segment's first
 * element), an empty one against the identity exactly.  0; 1 with err as
 * clr_ref_reduce_expr's; -1 out of memory. */
int clr_ref_segments_check_expr(clr_map_eval *m, const clr_options *opt,
                                clr_op op, clr_type type, const void *data,
                                const uint64_t *offsets, const uint64_t *ranges,
                                size_t n_segments, const void *results,
                                size_t depth, clr_segments_check *out,
                                char *err, size_t err_size);

/* clr_ref_matrix_check (segment_reference.h) for a map expression: a
 * row-major matrix of rows x cols elements of data, row r starting pitch
 * elements after row r - 1 (pitch >= cols); axis 0 checks cols results,
 * one a column (records' indices the row), axis 1 rows results, one a row
 * (records' indices the column), as clr_run's CLR_REQ_MATRIX gives them.
 * Element (r, c)'s i is opt->index_base + r * pitch + c, its flat index
 * from the matrix's first element, as the kernels count it.  A column's
 * values are evaluated a block of adjacent columns at a time, row by row
 * (the matrix read in memory order, never a transposed copy of it), and
 * each column folded and checked as clr_ref_reduce_expr and
 * clr_ref_check_expr do (depth capped at the axis' length - 1); a row
 * where it lies.  0; 1 with err as clr_ref_reduce_expr's; -1 out of
 * memory. */
int clr_ref_matrix_check_expr(clr_map_eval *m, const clr_options *opt,
                              clr_op op, clr_type type, const void *data,
                              size_t rows, size_t cols, size_t pitch, int axis,
                              const void *results, size_t depth,
                              clr_segments_check *out, char *err,
                              size_t err_size);

#endif
