/* The CPU's exact float / double sum (the reference for clr_options.exact),
 * independent of the library's: see exact_sum.c. */
#ifndef CLR_CHECK_EXACT_SUM_H
#define CLR_CHECK_EXACT_SUM_H

#include "clreduce.h"

#include <stddef.h>

/* The float or double nearest the true sum of n elements of type (ties to
 * even); NaN when an element is NaN or both infinities occur, +-inf when
 * one occurs or the true sum overflows; -0.0 only when every element is
 * -0.0. */
void clr_ref_exact_sum(clr_type type, const void *data, size_t n,
                       clr_value *out);

/* 1 when a and b are the same value to the bit (any NaN equals any NaN). */
int clr_ref_exact_equal(const clr_value *a, const clr_value *b);

#endif
