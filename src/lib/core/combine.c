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

/* One extreme of a record: (a, ai) and (b, bi) with ai < bi; want_max. A
 * NaN wins (the first), then the smaller (larger) value, then the first
 * index. */
static void pick(clr_type t, int want_max, clr_scalar *a, uint64_t *ai,
                 const clr_scalar *b, uint64_t bi) {
  int fp = t == CLR_FLOAT || t == CLR_DOUBLE;
  if (fp && fp_nan(t, a))
    return;
  int c = order(t, b, a);
  if ((fp && fp_nan(t, b)) || (want_max ? c > 0 : c < 0)) {
    *a = *b;
    *ai = bi;
  }
}

CLR_API clr_status clr_value_combine(clr_op op, clr_value *a,
                                     const clr_value *b) {
  if (!a || !b || a->type != b->type || (unsigned)a->type >= CLR_TYPE_COUNT ||
      a->type == CLR_HALF || (unsigned)op >= CLR_OP_COUNT)
    return CLR_ERR_INVALID_ARGUMENT;
  clr_type t = a->type;
  clr_scalar *x = &a->v;
  const clr_scalar *y = &b->v;
  int fp = t == CLR_FLOAT || t == CLR_DOUBLE;
  switch (op) {
  case CLR_SUM:
  case CLR_MEAN: /* its sum */
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
    if (fp && fp_nan(t, x))
      break;
    int c = order(t, y, x);
    if ((fp && fp_nan(t, y)) || (op == CLR_MIN ? c < 0 : c > 0))
      *x = *y;
    else if (fp && c == 0) /* two zeros: -0 wins a min, +0 a max */
      *x = op == CLR_MIN ? (signbit(fp_of(t, x)) ? *x : *y)
                         : (signbit(fp_of(t, x)) ? *y : *x);
    break;
  }
  case CLR_AND:
    x->i = x->i && y->i;
    break;
  case CLR_OR:
    x->i = x->i || y->i;
    break;
  case CLR_ARGMIN:
    pick(t, 0, x, &a->index, y, b->index);
    break;
  case CLR_ARGMAX:
    pick(t, 1, x, &a->index, y, b->index);
    break;
  default: /* CLR_MINMAX */
    pick(t, 0, x, &a->index, y, b->index);
    pick(t, 1, &a->max, &a->max_index, &b->max, b->max_index);
    break;
  }
  return CLR_OK;
}

CLR_API clr_status clr_value_sum_to_mean(const clr_options *opt, clr_type type,
                                         uint64_t n, clr_value *v) {
  if (!v || n == 0 || (unsigned)v->type >= CLR_TYPE_COUNT ||
      v->type == CLR_HALF)
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
  if (v->type == CLR_FLOAT)
    v->v.f = (float)(s / (long double)n);
  else
    v->v.d = (double)(s / (long double)n);
  return CLR_OK;
}
