/* CPU prefix scan, compared element by element as it runs. */
#include "scan_reference.h"

#include "ops_rows.h"
#include "progress_counter.h"
#include "reference.h"

#include <float.h>
#include <math.h>
#include <string.h>

static int is_fp(clr_type t);

/* Element i of in (type t) as a value of the output type ot: integers
 * widened (sign-extended for int), floating point converted exactly. */
static clr_value value_in(clr_type t, clr_type ot, const void *in, size_t i) {
  if (t == ot)
    return clr_value_at(t, in, i);
  if (is_fp(ot))
    return clr_fp_value(ot, clr_fp_at(t, in, i));
  return clr_int_value(ot, clr_bits_at(t, in, i));
}

static long double fp_of(const clr_value *v) {
  return v->type == CLR_FLOAT ? (long double)v->v.f : (long double)v->v.d;
}

static int is_fp(clr_type t) { return t == CLR_FLOAT || t == CLR_DOUBLE; }

static int same_value(const clr_value *a, const clr_value *b) {
  if (is_fp(a->type) && isnan(fp_of(a)) && isnan(fp_of(b)))
    return 1;
  return memcmp(&a->v, &b->v, clr_type_size(a->type)) == 0;
}

/* Integers, and the exact combines of floats (min, max): clr_identity and
 * clr_combine, which read the row, in the output type ot. */
static void verify_exact(clr_op op, clr_type type, clr_type ot, int exclusive,
                         const void *in, const void *out, size_t n,
                         clr_scan_check *res) {
  clr_value acc = clr_identity(op, ot);
  res->exact = 1;
  CLR_PROGRESS_FOR(i, n) {
    clr_value want;
    clr_value x = value_in(type, ot, in, i);
    if (exclusive) {
      want = acc;
      acc = clr_combine(op, acc, x);
    } else {
      acc = clr_combine(op, acc, x);
      want = acc;
    }
    clr_value got = clr_value_at(ot, out, i);
    if (!same_value(&got, &want)) {
      if (res->n_bad++ == 0) {
        res->worst_index = i;
        res->got_worst = got;
        res->ref_worst = want;
        res->worst_error =
            fabs(clr_value_as_double(&got) - clr_value_as_double(&want));
        if (res->worst_error == 0 || isnan(res->worst_error))
          res->worst_error = INFINITY; /* e.g. -0 against +0, NaN */
        res->worst_ratio = INFINITY;
      }
    }
    if (i == n - 1) {
      res->got_last = got;
      res->ref_last = want;
    }
  }
  if (res->n_bad == 0) {
    res->got_worst = res->got_last;
    res->ref_worst = res->ref_last;
    res->worst_index = n - 1;
  }
}

/* clr_ref_check's rules for one rounded element. */
static void compare_rounded(clr_type t, long double g, long double w,
                            double bound, int may_overflow, int *ok,
                            double *err, int *overflowed) {
  *overflowed = 0;
  if (isnan(w) || isinf(w) || isnan(g) || isinf(g)) {
    long double r =
        t == CLR_FLOAT ? (long double)(float)w : (long double)(double)w;
    if (isnan(w))
      *ok = isnan(g);
    else if (isinf(r))
      *ok = g == r;
    else
      *ok = 0;
    if (!*ok && may_overflow && (isnan(g) || isinf(g)))
      *ok = *overflowed = 1;
    *err = *ok ? 0.0 : INFINITY; /* (an overflow: counted apart) */
    return;
  }
  *err = (double)fabsl(g - w);
  *ok = *err <= bound;
}

/* Running state of the rounded reference. */
typedef struct rounded_ref {
  int rounds; /* the combine's: CLR_REF_ADDS or CLR_REF_MULTIPLIES     */
  int skip;   /* NaN elements are left out (clr_ref_skips_nan)         */
  /* sum: Neumaier sum s + c of the finite elements, sum |x|, and counts of
   * the non-finite ones */
  double s, c, abs_sum;
  size_t nans, pos_inf, neg_inf;
  /* prod, and prod max(1, |x|) (see clr_underflow_term) */
  long double p, max_partial, amp;
  size_t count; /* elements covered */
} rounded_ref;

static void sum_add(rounded_ref *r, double x) {
  if (r->skip && isnan(x))
    return;
  r->count++;
  if (isnan(x)) {
    r->nans++;
    return;
  }
  if (isinf(x)) {
    if (x > 0)
      r->pos_inf++;
    else
      r->neg_inf++;
    return;
  }
  double t = r->s + x;
  if (fabs(r->s) >= fabs(x))
    r->c += (r->s - t) + x;
  else
    r->c += (x - t) + r->s;
  r->s = t;
  r->abs_sum += fabs(x);
}

static void prod_add(rounded_ref *r, long double x) {
  if (r->skip && isnan(x))
    return;
  r->count++;
  r->p *= x;
  if (fabsl(x) > 1.0L)
    r->amp *= fabsl(x);
  if (fabsl(r->p) > r->max_partial && !isinf(r->p))
    r->max_partial = fabsl(r->p);
}

static void ref_add(rounded_ref *r, const void *data, clr_type t, size_t i) {
  if (r->rounds == CLR_REF_MULTIPLIES)
    prod_add(r, clr_fp_at(t, data, i));
  else
    sum_add(r, (double)clr_fp_at(t, data, i));
}

/* What the bounds need, computed once per scan. */
typedef struct bound_consts {
  clr_type type;
  double u;           /* unit roundoff of the type                  */
  double type_max;    /* largest finite value of the type           */
  double gamma_depth; /* gamma_k(u), k the scan's error depth (sum) */
  int flush_to_zero;  /* the device flushes denormals                */
  double uf_per_op;   /* sum: underflow term per operation           */
} bound_consts;

/* Operations (and flushed inputs) behind an element covering count
 * elements: the ops of clr_underflow_term. */
static double uf_ops(const bound_consts *bc, size_t count) {
  if (count == 0)
    return 0.0;
  return (double)(count - 1) + (bc->flush_to_zero ? (double)count : 0.0);
}

/* The reference value, its bound and whether overflow is acceptable. */
static long double ref_value(const bound_consts *bc, const rounded_ref *r,
                             double *bound, int *may_overflow) {
  const double ud = 0x1p-53; /* the reference's own unit roundoff */
  if (r->rounds == CLR_REF_MULTIPLIES) {
    long double p = r->p;
    double ap = (double)fabsl(p);
    size_t mults = r->count > 0 ? r->count - 1 : 0;
    double own = clr_gamma((double)r->count, (double)LDBL_EPSILON / 2.0) * ap;
    long double own_uf = (long double)r->count * (LDBL_TRUE_MIN / 2.0L) * 2.0L *
                         r->amp; /* the reference's own underflow */
    own += own_uf > (long double)DBL_MAX ? INFINITY : (double)own_uf;
    *bound = clr_gamma((double)mults, bc->u) * ap + bc->u * ap + own +
             clr_underflow_term(bc->type, r->count, mults, r->amp,
                                bc->flush_to_zero);
    *may_overflow = r->max_partial > bc->type_max || ap > bc->type_max;
    return p;
  }
  long double w = (long double)r->s + (long double)r->c;
  if (r->nans || (r->pos_inf && r->neg_inf))
    w = NAN;
  else if (r->pos_inf)
    w = INFINITY;
  else if (r->neg_inf)
    w = -INFINITY;
  double own = 2.0 * ud * fabs(r->s) +
               4.0 * (double)r->count * ud * ud * r->abs_sum + DBL_MIN;
  double aw = isfinite(w) ? (double)fabsl(w) : 0.0;
  *bound = bc->gamma_depth * r->abs_sum + bc->u * aw + own +
           uf_ops(bc, r->count) * bc->uf_per_op;
  *may_overflow = r->abs_sum > bc->type_max;
  return w;
}

/* type: of the input elements; ot: the output's, in which the bounds are
 * computed. */
static void verify_rounded(clr_op op, clr_type in_type, clr_type type,
                           int exclusive, const void *in, const void *out,
                           size_t n, size_t depth, int flush_to_zero,
                           clr_scan_check *res) {
  rounded_ref r;
  memset(&r, 0, sizeof r);
  r.rounds = clr_ref_combine_info(clr_ref_op_info(op)->combine).rounds;
  r.skip = clr_ref_skips_nan(op, in_type);
  r.p = 1.0L;
  r.max_partial = 1.0L;
  r.amp = 1.0L;
  bound_consts bc;
  bc.type = type;
  bc.u = clr_unit_roundoff(type);
  bc.type_max = type == CLR_FLOAT ? FLT_MAX : DBL_MAX;
  bc.gamma_depth = clr_gamma((double)depth, bc.u);
  bc.flush_to_zero = flush_to_zero;
  /* clr_underflow_term of 2 elements (one operation, or with flushed
   * inputs 3 events): its value per event. */
  bc.uf_per_op = clr_underflow_term(type, 2, depth, 1.0L, flush_to_zero) /
                 (flush_to_zero ? 3.0 : 1.0);
  int have_worst = 0;
  CLR_PROGRESS_FOR(i, n) {
    if (!exclusive)
      ref_add(&r, in, in_type, i);
    double bound, err;
    int ok, may_overflow, overflowed = 0;
    long double w;
    double g = type == CLR_FLOAT ? (double)((const float *)out)[i]
                                 : ((const double *)out)[i];
    if (r.rounds == CLR_REF_ADDS && isfinite(g) &&
        (r.nans | r.pos_inf | r.neg_inf) == 0) {
      /* Fast path, all in double: the reference is s + c. */
      double wd = r.s + r.c;
      bound = bc.gamma_depth * r.abs_sum + bc.u * fabs(wd) +
              2.0 * 0x1p-53 * fabs(r.s) +
              4.0 * (double)r.count * 0x1p-106 * r.abs_sum + DBL_MIN +
              uf_ops(&bc, r.count) * bc.uf_per_op;
      err = fabs((g - r.s) - r.c);
      ok = err <= bound;
      w = (long double)r.s + (long double)r.c;
    } else {
      w = ref_value(&bc, &r, &bound, &may_overflow);
      compare_rounded(type, (long double)g, w, bound, may_overflow, &ok, &err,
                      &overflowed);
    }
    if (!ok)
      res->n_bad++;
    res->n_overflowed += (size_t)overflowed;
    /* Worst: the largest error relative to its bound, then the largest
     * error (when every bound is infinite).  Most elements are not
     * candidates, which saves the division. */
    if (!have_worst || err > res->worst_ratio * bound ||
        err > res->worst_error) {
      double ratio;
      if (err == 0)
        ratio = 0;
      else if (isinf(bound))
        ratio = isinf(err) ? INFINITY : 0;
      else
        ratio = err / bound;
      if (!have_worst || ratio > res->worst_ratio ||
          (ratio == res->worst_ratio && err > res->worst_error)) {
        have_worst = 1;
        res->worst_index = i;
        res->worst_ratio = ratio;
        res->worst_error = err;
        res->worst_bound = bound;
        res->got_worst = clr_value_at(type, out, i);
        res->ref_worst = clr_fp_value(type, w);
      }
    }
    if (i == n - 1) {
      res->got_last = clr_value_at(type, out, i);
      res->ref_last = clr_fp_value(type, w);
    }
    if (exclusive)
      ref_add(&r, in, in_type, i);
  }
}

void clr_ref_scan_check(clr_op op, clr_type type, int exclusive, const void *in,
                        const void *out, size_t n, size_t error_depth,
                        clr_scan_check *res) {
  clr_ref_scan_check_to(op, type, clr_scan_output_type(NULL, type), exclusive,
                        in, out, n, error_depth, 0, res);
}

void clr_ref_scan_check_flush(clr_op op, clr_type type, int exclusive,
                              const void *in, const void *out, size_t n,
                              size_t error_depth, int flush_to_zero,
                              clr_scan_check *res) {
  clr_ref_scan_check_to(op, type, clr_scan_output_type(NULL, type), exclusive,
                        in, out, n, error_depth, flush_to_zero, res);
}

void clr_ref_scan_check_to(clr_op op, clr_type type, clr_type out_type,
                           int exclusive, const void *in, const void *out,
                           size_t n, size_t error_depth, int flush_to_zero,
                           clr_scan_check *res) {
  memset(res, 0, sizeof *res);
  clr_progress_plan(n);
  /* The rows' rounding combines (sums, products) of floats against their
   * bounds; every other combine exactly. */
  const clr_ref_op_row *row = clr_ref_op_info(op);
  if (row && is_fp(out_type) &&
      clr_ref_combine_info(row->combine).rounds != CLR_REF_EXACT)
    verify_rounded(op, type, out_type, exclusive, in, out, n, error_depth,
                   flush_to_zero, res);
  else
    verify_exact(op, type, out_type, exclusive, in, out, n, res);
  res->ok = res->n_bad == 0;
}
