/* Results folded on the host (src/lib/group.c, the MPI layer, callers
 * combining partial results of their own): clr_value_combine with the
 * kernels' semantics, and a mean from its sum as a mean call divides it. */
#include "internal.h"

#include <math.h>
#include <string.h>

static int fp_nan(clr_type t, const clr_scalar *a) {
  return t == CLR_FLOAT ? a->f != a->f : a->d != a->d;
}

static double fp_of(clr_type t, const clr_scalar *a) {
  return t == CLR_FLOAT ? (double)a->f : a->d;
}

/* -1, 0, 1 for a < b, equal, a > b: floats with -0 below +0 (NaN
 * handled by the caller), integers by their type's order. */
static int order(clr_type t, const clr_scalar *a, const clr_scalar *b) {
  switch (t) {
  case CLR_FLOAT:
  case CLR_DOUBLE: {
    double x = fp_of(t, a), y = fp_of(t, b);
    if (x != y)
      return x < y ? -1 : 1;
    if (x == 0 && signbit(x) != signbit(y))
      return signbit(x) ? -1 : 1;
    return 0;
  }
  case CLR_INT:
    return (a->i > b->i) - (a->i < b->i);
  case CLR_UINT:
    return (a->u > b->u) - (a->u < b->u);
  case CLR_LONG:
    return (a->l > b->l) - (a->l < b->l);
  default:
    return (a->ul > b->ul) - (a->ul < b->ul);
  }
}

/* One extreme of a record: (a, ai) and (b, bi) with ai < bi; want_max.
 * A NaN wins (the first) or, skipping NaNs, loses to every number; then
 * the smaller (larger) value, then the first index. */
static void pick(clr_type t, int want_max, int skip_nan, clr_scalar *a,
                 uint64_t *ai, const clr_scalar *b, uint64_t bi) {
  int fp = t == CLR_FLOAT || t == CLR_DOUBLE;
  int na = fp && fp_nan(t, a), nb = fp && fp_nan(t, b);
  if (na || nb) {
    if (skip_nan ? na && !nb : nb && !na) {
      *a = *b;
      *ai = bi;
    }
    return;
  }
  int c = order(t, b, a);
  if (want_max ? c > 0 : c < 0) {
    *a = *b;
    *ai = bi;
  }
}

CLR_API clr_status clr_value_combine(clr_op op, clr_value *a,
                                     const clr_value *b) {
  const clr_op_row *row = clr_op_info(op);
  if (!a || !b || !row || a->type != b->type ||
      (unsigned)a->type >= CLR_TYPE_COUNT || a->type == CLR_HALF)
    return CLR_ERR_INVALID_ARGUMENT;
  /* partial results fold by the row's partial operation (a mean's: its
   * sum's) */
  const clr_op_row *fold = clr_op_info(row->partial);
  int skip = (fold->flags & CLR_OPF_SKIPS_NAN) != 0;
  clr_type t = a->type;
  clr_scalar *x = &a->v;
  const clr_scalar *y = &b->v;
  int fp = t == CLR_FLOAT || t == CLR_DOUBLE;
  switch (fold->combine) {
  case CLR_SUM:
    if (t == CLR_FLOAT)
      x->f = x->f + y->f;
    else if (t == CLR_DOUBLE)
      x->d = x->d + y->d;
    else if (t == CLR_INT || t == CLR_UINT)
      x->u = x->u + y->u; /* wraps, as the kernels' */
    else
      x->ul = x->ul + y->ul;
    break;
  case CLR_PROD:
    if (t == CLR_FLOAT)
      x->f = x->f * y->f;
    else if (t == CLR_DOUBLE)
      x->d = x->d * y->d;
    else if (t == CLR_INT || t == CLR_UINT)
      x->u = x->u * y->u;
    else
      x->ul = x->ul * y->ul;
    break;
  case CLR_MIN:
  case CLR_MAX: {
    int want_min = fold->combine == CLR_MIN;
    if (fp && (fp_nan(t, x) || fp_nan(t, y))) {
      /* a NaN wins, or skipping NaNs loses to a number */
      if (skip ? fp_nan(t, x) : fp_nan(t, y))
        *x = *y;
      break;
    }
    int c = order(t, y, x);
    if (want_min ? c < 0 : c > 0)
      *x = *y;
    else if (fp && c == 0) /* two zeros: -0 wins a min, +0 a max */
      *x = want_min ? (signbit(fp_of(t, x)) ? *x : *y)
                    : (signbit(fp_of(t, x)) ? *y : *x);
    break;
  }
  case CLR_XOR:
    if (clr_type_size(t) == 8)
      x->ul = x->ul ^ y->ul;
    else
      x->u = x->u ^ y->u;
    break;
  case CLR_AND:
    x->i = x->i && y->i;
    break;
  case CLR_OR:
    x->i = x->i || y->i;
    break;
  case CLR_ARGMIN:
    pick(t, 0, skip, x, &a->index, y, b->index);
    break;
  case CLR_ARGMAX:
    pick(t, 1, skip, x, &a->index, y, b->index);
    break;
  default: /* CLR_MINMAX */
    pick(t, 0, skip, x, &a->index, y, b->index);
    pick(t, 1, skip, &a->max, &a->max_index, &b->max, b->max_index);
    break;
  }
  return CLR_OK;
}

CLR_API clr_status clr_value_sum_to_mean(const clr_options *opt, clr_type type,
                                         uint64_t n, clr_value *v) {
  if (!v || (unsigned)v->type >= CLR_TYPE_COUNT || v->type == CLR_HALF)
    return CLR_ERR_INVALID_ARGUMENT;
  clr_type t = v->type;
  long double s = t == CLR_FLOAT    ? (long double)v->v.f
                  : t == CLR_DOUBLE ? (long double)v->v.d
                  : t == CLR_INT    ? (long double)v->v.i
                  : t == CLR_UINT   ? (long double)v->v.u
                  : t == CLR_LONG   ? (long double)v->v.l
                                    : (long double)v->v.ul;
  memset(v, 0, sizeof *v);
  v->type = clr_options_result_type(opt, CLR_MEAN, type);
  /* the mean of no number (n = 0: a NaN-skipping mean of NaNs) is NaN */
  long double m = n ? s / (long double)n : (long double)NAN;
  if (v->type == CLR_FLOAT)
    v->v.f = (float)m;
  else
    v->v.d = (double)m;
  return CLR_OK;
}
