/* CPU reference of var and std, and their bound: see moments_reference.h. */
#include "moments_reference.h"

#include "ops_rows.h"
#include "progress_counter.h"
#include "reference.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* Element i of data as a long double: floating values (half decoded),
 * integers exactly (sign-extended where signed). */
static long double element(clr_type type, const void *data, size_t i) {
  if (clr_ref_is_fp(type))
    return clr_fp_at(type, data, i);
  uint64_t bits = clr_bits_at(type, data, i);
  return clr_ref_is_signed(type) ? (long double)(int64_t)bits
                                 : (long double)bits;
}

void clr_ref_moments_of(clr_type type, const void *data, size_t first,
                        size_t count, size_t stride, clr_ref_moments *out) {
  memset(out, 0, sizeof *out);
  out->n = count;
  if (count == 0) {
    out->mean = out->m2 = (long double)NAN;
    return;
  }
  /* Pass 1: the sum, and what the bound and the special cases need. */
  long double sum = 0, lo = INFINITY, hi = -INFINITY;
  int pos_inf = 0, neg_inf = 0;
  CLR_PROGRESS_FOR(k, count) {
    long double x = element(type, data, first + k * stride);
    if (isnan(x)) {
      out->has_nan = 1;
      continue;
    }
    if (isinf(x)) {
      pos_inf |= x > 0;
      neg_inf |= x < 0;
      continue;
    }
    sum += x;
    out->sumsq += x * x;
    if (fabsl(x) > out->maxabs)
      out->maxabs = fabsl(x);
    if (x < lo)
      lo = x;
    if (x > hi)
      hi = x;
  }
  out->has_inf = pos_inf || neg_inf;
  if (out->has_nan || out->has_inf) {
    out->m2 = (long double)NAN;
    out->mean = out->has_nan || (pos_inf && neg_inf) ? (long double)NAN
                : pos_inf                            ? (long double)INFINITY
                                                     : -(long double)INFINITY;
    return;
  }
  if (lo == hi) { /* all equal: exactly, whatever the sum rounded to */
    out->mean = lo;
    out->m2 = 0;
    return;
  }
  /* Pass 2 (not counted in the progress: the plan is one pass an
   * element): the deviations from the first mean, and their sum c, which
   * corrects both the mean and M2 for that mean's rounding. */
  long double mean = sum / (long double)count, c = 0, m2 = 0;
  for (size_t k = 0; k < count; k++) {
    long double dx = element(type, data, first + k * stride) - mean;
    c += dx;
    m2 += dx * dx;
  }
  m2 -= c * c / (long double)count;
  out->mean = mean + c / (long double)count;
  out->m2 = m2 > 0 ? m2 : 0; /* (>= 0 in exact arithmetic) */
}

clr_value clr_ref_moments_value(clr_op op, clr_type rt, uint64_t ddof,
                                const clr_ref_moments *ref) {
  long double var = (uint64_t)ref->n <= ddof
                        ? (long double)NAN
                        : ref->m2 / (long double)((uint64_t)ref->n - ddof);
  clr_value v = clr_fp_value(rt, op == CLR_STD ? sqrtl(var) : var);
  clr_value m = clr_fp_value(rt, ref->mean);
  v.op = op;
  v.max = m.v;
  return v;
}

/* The number of floating type rt held in s, as a long double. */
static long double scalar(clr_type rt, const clr_scalar *s) {
  return rt == CLR_FLOAT ? (long double)s->f : (long double)s->d;
}

/* One quantity's outcome: err against bound, folded into the worst. */
typedef struct outcome {
  int ok;
  double err, bound, ratio;
} outcome;

static void fold(outcome *worst, int ok, double err, double bound) {
  double ratio = ok ? (bound > 0 ? err / bound : 0.0) : INFINITY;
  if (isinf(err) && isinf(bound) && ok)
    ratio = 2.0; /* an accepted overflow: reported before any measured
                    error that passes (ratio <= 1), after any failure */
  if (worst->ok && (!ok || ratio > worst->ratio || worst->ratio < 0)) {
    worst->err = err;
    worst->bound = bound;
    worst->ratio = ratio;
  }
  worst->ok = worst->ok && ok;
}

int clr_ref_moments_check(clr_op op, clr_type rt, uint64_t ddof, size_t depth,
                          const clr_ref_moments *ref, const clr_value *got,
                          double *err, double *bound) {
  outcome w = {1, 0.0, 0.0, -1.0};
  if (got->type != rt || (rt != CLR_FLOAT && rt != CLR_DOUBLE)) {
    fold(&w, 0, INFINITY, 0.0);
    goto done;
  }
  long double v = scalar(rt, &got->v), m = scalar(rt, &got->max);
  uint64_t n = (uint64_t)ref->n;
  if (ref->has_nan) {
    fold(&w, isnan(v) && isnan(m), isnan(v) && isnan(m) ? 0.0 : INFINITY, 0);
    goto done;
  }
  if (ref->has_inf) {
    int ok = isnan(v) && (isnan(m) || m == ref->mean);
    fold(&w, ok, ok ? 0.0 : INFINITY, 0.0);
    goto done;
  }

  double u = clr_unit_roundoff(rt);
  long double type_max = rt == CLR_FLOAT ? FLT_MAX : DBL_MAX;
  long double eta = rt == CLR_FLOAT ? FLT_MIN : DBL_MIN;
  long double ul = LDBL_EPSILON / 2, d = (long double)depth + 2;
  long double nn = (long double)n, maxabs = ref->maxabs;

  /* The mean. */
  if (n == 0) {
    fold(&w, isnan(m), isnan(m) ? 0.0 : INFINITY, 0.0);
  } else if (!isfinite(m) && 2 * maxabs > type_max) {
    fold(&w, 1, INFINITY, INFINITY);
  } else {
    long double mb =
        4 * d * u * maxabs + 8 * d * eta + nn * ul * maxabs + ref->input_err;
    long double me = fabsl(m - ref->mean);
    fold(&w, me <= mb, isnan(me) ? INFINITY : (double)me, (double)mb);
  }

  /* The variance, or the deviation. */
  if (n <= ddof) {
    fold(&w, isnan(v), isnan(v) ? 0.0 : INFINITY, 0.0);
    goto done;
  }
  if (ref->m2 == 0 && ref->input_err == 0) { /* every element equal: 0 */
    fold(&w, v == 0, v == 0 ? 0.0 : INFINITY, 0.0);
    goto done;
  }
  if (!isfinite(v) && 4 * maxabs * maxabs * nn > type_max) {
    fold(&w, 1, INFINITY, INFINITY);
    goto done;
  }
  long double m2 = ref->m2, sumsq = ref->sumsq;
  long double ie = ref->input_err;
  long double m2_bound = 4 * d * u * sqrtl(m2 * sumsq) + 8 * (nn + d) * eta +
                         4 * eta * sqrtl(nn * m2) + nn * ul * sumsq +
                         nn * ie * (4 * maxabs + ie);
  long double var = m2 / (long double)(n - ddof);
  long double var_bound = m2_bound / (long double)(n - ddof) + 2 * u * var;
  if (op != CLR_STD) {
    long double e = fabsl(v - var);
    fold(&w, e <= var_bound, isnan(e) ? INFINITY : (double)e,
         (double)var_bound);
    goto done;
  }
  long double s = sqrtl(var);
  if (!(v >= 0)) { /* a negative or NaN deviation */
    fold(&w, 0, INFINITY, (double)var_bound);
    goto done;
  }
  long double s_bound = var_bound / ((1 - u) * v + s) + u * v;
  long double e = fabsl(v - s);
  fold(&w, e <= s_bound, (double)e, (double)s_bound);
done:
  if (err)
    *err = w.err;
  if (bound)
    *bound = w.bound;
  return w.ok;
}
