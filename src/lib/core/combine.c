/* Results on the host: folded (src/lib/group.c, the MPI layer, callers
 * combining partial results of their own) by clr_value_combine with the
 * kernels' semantics, a mean made from its sum as a mean call divides it,
 * and read: the accessors and the formatter of clr_value. */
#include "internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* op took the padding after type (include/clreduce.h): where 8-byte
 * members are 8-aligned, the layout of earlier versions. */
_Static_assert(sizeof(clr_op) <= 4, "clr_op fits the padding after type");
_Static_assert(_Alignof(clr_scalar) < 8 ||
                   (sizeof(clr_value) == 40 && offsetof(clr_value, v) == 8 &&
                    offsetof(clr_value, max_index) == 32),
               "clr_value keeps its size and offsets");

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
  /* a variance's value has lost its M2 where n <= ddof: parts of var and
   * std do not fold (yet) */
  if (row->flags & CLR_OPF_MOMENTS)
    return CLR_ERR_UNSUPPORTED;
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

CLR_API clr_status clr_value_merge_moments(clr_op op, const clr_value *parts,
                                           const uint64_t *counts, size_t k,
                                           uint64_t ddof, clr_value *out) {
  const clr_op_row *row = clr_op_info(op);
  if (!row || !(row->flags & CLR_OPF_MOMENTS) || !parts || !counts || !out ||
      k == 0)
    return CLR_ERR_INVALID_ARGUMENT;
  clr_type t = parts[0].type;
  if (t != CLR_FLOAT && t != CLR_DOUBLE)
    return CLR_ERR_INVALID_ARGUMENT;
  long double n = 0, mean = 0, m2 = 0;
  for (size_t i = 0; i < k; i++) {
    if (parts[i].type != t || !(clr_op_flags(parts[i].op) & CLR_OPF_MOMENTS))
      return CLR_ERR_INVALID_ARGUMENT;
    if (counts[i] == 0)
      continue;
    long double nb = (long double)counts[i], total = n + nb;
    long double vb = t == CLR_FLOAT ? parts[i].v.f : parts[i].v.d;
    long double mb = t == CLR_FLOAT ? parts[i].max.f : parts[i].max.d;
    if (parts[i].op == CLR_STD) /* a deviation: its square */
      vb *= vb;
    long double d = mb - mean;
    mean += d * nb / total;
    m2 += vb * nb + d * d * n * nb / total;
    n = total;
  }
  long double var =
      n > (long double)ddof ? m2 / (n - (long double)ddof) : (long double)NAN;
  if (op == CLR_STD)
    var = sqrtl(var);
  if (n == 0)
    mean = NAN;
  memset(out, 0, sizeof *out);
  out->type = t;
  out->op = op;
  if (t == CLR_FLOAT) {
    out->v.f = (float)var;
    out->max.f = (float)mean;
  } else {
    out->v.d = (double)var;
    out->max.d = (double)mean;
  }
  return CLR_OK;
}

clr_status clr_opt_sum_to_mean(const clr_options *opt, clr_type type,
                               uint64_t n, clr_value *v) {
  if (!v || (unsigned)v->type >= CLR_TYPE_COUNT || v->type == CLR_HALF)
    return CLR_ERR_INVALID_ARGUMENT;
  clr_type t = v->type;
  clr_op mean = v->op == CLR_NANSUM ? CLR_NANMEAN : CLR_MEAN;
  long double s = t == CLR_FLOAT    ? (long double)v->v.f
                  : t == CLR_DOUBLE ? (long double)v->v.d
                  : t == CLR_INT    ? (long double)v->v.i
                  : t == CLR_UINT   ? (long double)v->v.u
                  : t == CLR_LONG   ? (long double)v->v.l
                                    : (long double)v->v.ul;
  memset(v, 0, sizeof *v);
  v->type = clr_opt_result_type(opt, CLR_MEAN, type);
  v->op = mean;
  /* the mean of no number (n = 0: a NaN-skipping mean of NaNs) is NaN */
  long double m = n ? s / (long double)n : (long double)NAN;
  if (v->type == CLR_FLOAT)
    v->v.f = (float)m;
  else
    v->v.d = (double)m;
  return CLR_OK;
}

/* ---- reading a value */

/* A type a result may have: not half (whose results are float). */
static int result_type(clr_type t) {
  return (unsigned)t < CLR_TYPE_COUNT && t != CLR_HALF;
}

CLR_API clr_type clr_value_type(const clr_value *v) {
  return v ? v->type : CLR_TYPE_COUNT;
}

CLR_API clr_op clr_value_op(const clr_value *v) {
  return v ? v->op : CLR_OP_COUNT;
}

CLR_API double clr_value_as_double(const clr_value *v) {
  if (!v || !result_type(v->type))
    return (double)NAN;
  switch (v->type) {
  case CLR_FLOAT:
    return (double)v->v.f;
  case CLR_DOUBLE:
    return v->v.d;
  case CLR_INT:
    return (double)v->v.i;
  case CLR_UINT:
    return (double)v->v.u;
  case CLR_LONG:
    return (double)v->v.l;
  default:
    return (double)v->v.ul;
  }
}

/* The value as an exact integer: its magnitude and sign.  0 when it is
 * none (a fraction, NaN, an infinity, 2^64 or more in magnitude). */
static int exact_integer(const clr_value *v, uint64_t *mag, int *neg) {
  *neg = 0;
  switch (v->type) {
  case CLR_INT:
    *neg = v->v.i < 0;
    *mag = *neg ? 0u - (uint64_t)(int64_t)v->v.i : (uint64_t)v->v.i;
    return 1;
  case CLR_UINT:
    *mag = v->v.u;
    return 1;
  case CLR_LONG:
    *neg = v->v.l < 0;
    *mag = *neg ? 0u - (uint64_t)v->v.l : (uint64_t)v->v.l;
    return 1;
  case CLR_ULONG:
    *mag = v->v.ul;
    return 1;
  default: {
    double x = clr_value_as_double(v); /* exact for float and double */
    /* 2^64: the first magnitude uint64_t does not hold */
    if (!(fabs(x) < 18446744073709551616.0) || x != trunc(x))
      return 0;
    *neg = x < 0;
    *mag = (uint64_t)fabs(x);
    return 1;
  }
  }
}

CLR_API clr_status clr_value_as_int64(const clr_value *v, int64_t *out) {
  uint64_t mag;
  int neg;
  if (!v || !out || !result_type(v->type))
    return CLR_ERR_INVALID_ARGUMENT;
  if (!exact_integer(v, &mag, &neg))
    return CLR_ERR_RANGE;
  if (neg ? mag > (uint64_t)INT64_MAX + 1u : mag > (uint64_t)INT64_MAX)
    return CLR_ERR_RANGE;
  /* -2^63 has no positive int64_t: negate in unsigned, then convert */
  *out = neg ? (mag == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)mag)
             : (int64_t)mag;
  return CLR_OK;
}

CLR_API clr_status clr_value_as_uint64(const clr_value *v, uint64_t *out) {
  uint64_t mag;
  int neg;
  if (!v || !out || !result_type(v->type))
    return CLR_ERR_INVALID_ARGUMENT;
  if (!exact_integer(v, &mag, &neg))
    return CLR_ERR_RANGE;
  if (neg && mag != 0)
    return CLR_ERR_RANGE;
  *out = mag;
  return CLR_OK;
}

CLR_API uint64_t clr_value_index(const clr_value *v) {
  return v ? v->index : UINT64_MAX;
}

CLR_API clr_status clr_value_minmax_parts(const clr_value *v, clr_value *min,
                                          clr_value *max) {
  if (!v || v->op != CLR_MINMAX)
    return CLR_ERR_INVALID_ARGUMENT;
  clr_value lo, hi;
  memset(&lo, 0, sizeof lo);
  memset(&hi, 0, sizeof hi);
  lo.type = hi.type = v->type;
  lo.op = CLR_ARGMIN;
  hi.op = CLR_ARGMAX;
  lo.v = v->v;
  lo.index = v->index;
  hi.v = v->max;
  hi.index = v->max_index;
  if (min)
    *min = lo;
  if (max)
    *max = hi;
  return CLR_OK;
}

/* NaN and the infinities spelled alike everywhere (as glibc's printf
 * spells them: the command line's output before the formatter); NULL for
 * a finite x. */
static const char *special_text(double x) {
  if (isnan(x))
    return signbit(x) ? "-nan" : "nan";
  if (isinf(x))
    return x > 0 ? "inf" : "-inf";
  return NULL;
}

/* The number of a value of type t (a result type): snprintf's count. */
static int format_number(clr_type t, const clr_scalar *s, char *buf,
                         size_t size) {
  if (t == CLR_FLOAT || t == CLR_DOUBLE) {
    double x = t == CLR_FLOAT ? (double)s->f : s->d;
    const char *special = special_text(x);
    if (special)
      return snprintf(buf, size, "%s", special);
    return snprintf(buf, size, t == CLR_FLOAT ? "%.9g" : "%.17g", x);
  }
  switch (t) {
  case CLR_INT:
    return snprintf(buf, size, "%" PRId32, s->i);
  case CLR_UINT:
    return snprintf(buf, size, "%" PRIu32, s->u);
  case CLR_LONG:
    return snprintf(buf, size, "%" PRId64, s->l);
  default:
    return snprintf(buf, size, "%" PRIu64, s->ul);
  }
}

/* "<number> at index <index>", UINT64_MAX as -1. */
static int format_indexed(clr_type t, const clr_scalar *s, uint64_t index,
                          char *buf, size_t size) {
  char num[40];
  format_number(t, s, num, sizeof num);
  if (index == UINT64_MAX)
    return snprintf(buf, size, "%s at index -1", num);
  return snprintf(buf, size, "%s at index %" PRIu64, num, index);
}

CLR_API clr_status clr_value_format(const clr_value *v, char *buf,
                                    size_t size) {
  if (!buf)
    return CLR_ERR_INVALID_ARGUMENT;
  if (!v || !result_type(v->type)) {
    if (size)
      buf[0] = '\0';
    return CLR_ERR_INVALID_ARGUMENT;
  }
  /* an op out of range (a value made by hand, not zeroed): a number */
  unsigned flags = (unsigned)v->op < CLR_OP_COUNT ? clr_op_flags(v->op) : 0;
  int len;
  if (v->op == CLR_MINMAX) {
    char lo[80], hi[80]; /* a number (at most 39) at index (30) */
    format_indexed(v->type, &v->v, v->index, lo, sizeof lo);
    format_indexed(v->type, &v->max, v->max_index, hi, sizeof hi);
    len = snprintf(buf, size, "min %s, max %s", lo, hi);
  } else if (flags & CLR_OPF_INDEXED) {
    len = format_indexed(v->type, &v->v, v->index, buf, size);
  } else if (flags & CLR_OPF_MOMENTS) {
    char val[48], mean[48];
    format_number(v->type, &v->v, val, sizeof val);
    format_number(v->type, &v->max, mean, sizeof mean);
    len = snprintf(buf, size, "%s %s, mean %s", clr_op_name(v->op), val, mean);
  } else {
    len = format_number(v->type, &v->v, buf, size);
  }
  return len >= 0 && (size_t)len < size ? CLR_OK : CLR_ERR_RANGE;
}
