/* CPU references: plain loops, independent of the library's kernels. */
#include "reference.h"
#include "half.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double clr_unit_roundoff(clr_type t) {
  switch (t) {
  case CLR_FLOAT:
    return ldexp(1.0, -24);
  case CLR_DOUBLE:
    return ldexp(1.0, -53);
  default:
    return 0.0;
  }
}

double clr_gamma(double k, double u) {
  double ku = k * u;
  if (ku >= 1.0)
    return INFINITY;
  return ku / (1.0 - ku);
}

int clr_ref_device_flushes(cl_device_id dev, clr_type t) {
  cl_device_fp_config cfg = 0;
  cl_device_info what =
      t == CLR_DOUBLE ? CL_DEVICE_DOUBLE_FP_CONFIG : CL_DEVICE_SINGLE_FP_CONFIG;
  if (clGetDeviceInfo(dev, what, sizeof cfg, &cfg, NULL) != CL_SUCCESS)
    return 1; /* unknown: assume the weaker arithmetic */
  return (cfg & CL_FP_DENORM) == 0;
}

/* The absolute (underflow) term of the a-priori bound.
 *
 * Model (Higham, Accuracy and Stability of Numerical Algorithms, 2.1 and
 * 2.7): one operation gives fl(a op b) = (a op b)(1 + d) + e with |d| <= u
 * and |e| <= eta.  Under IEEE gradual underflow eta is half the smallest
 * denormal (2^-150 float, 2^-1075 double); e is non-zero only when the
 * result falls below the smallest normal, and for additions it is then in
 * fact 0 (such sums are exact), so using eta for them too is a safe
 * overestimate.  A device that flushes denormals to zero replaces any
 * result below the smallest normal with 0, so eta becomes the smallest
 * normal (2^-126, 2^-1022), and it may flush each input the same way:
 * n more such errors.
 *
 * Sum: e enters the value of its node, and every later addition carries
 * it with a factor (1 + d): at most (1 + u)^depth <= 1 + gamma_depth.  So
 * the ops = n - 1 additions (2n - 1 events with flushed inputs) add at
 * most ops * eta * (1 + gamma_depth) to gamma_depth * sum|x|.
 *
 * Product: write a subtree's computed value as v * theta + eps, theta a
 * product of its m multiplications' (1 + d).  Multiplying two subtrees A
 * and B gives eps = (1 + d)(eps_A v_B theta_B + eps_B v_A theta_A +
 * eps_A eps_B) + e, so by induction |eps| <= k eta (1 + u)^m P, k the
 * operations (and flushed inputs) of the subtree and P = prod max(1,
 * |x_i|) over its elements (|v| <= P), as long as k^2 eta <= u, which
 * absorbs the second-order eps_A eps_B term.  An underflow is multiplied
 * by the factors combined after it, so P (amp), not |product|, is the
 * right scale: 1e-30 * 1e-30 underflows in float and * 1e30 * 1e30 then
 * gives 0, not 1.  Whole result: |got - prod| <= gamma_{n-1} |prod| +
 * ops * eta * (1 + gamma_{n-1}) * amp. */
double clr_underflow_term(clr_type t, size_t n, size_t depth, long double amp,
                          int flush_to_zero) {
  double u = clr_unit_roundoff(t);
  double eta;
  if (t == CLR_FLOAT)
    eta = flush_to_zero ? ldexp(1.0, -126) : ldexp(1.0, -150);
  else
    eta = flush_to_zero ? ldexp(1.0, -1022) : ldexp(1.0, -1075);
  if (n == 0)
    return 0.0;
  double ops = (double)(n - 1) + (flush_to_zero ? (double)n : 0.0);
  if (ops == 0)
    return 0.0;
  if (ops * ops * eta > u)
    return INFINITY;
  long double term = (long double)ops * (long double)eta *
                     (1.0L + (long double)clr_gamma((double)depth, u)) * amp;
  return term > (long double)DBL_MAX ? INFINITY : (double)term;
}

static int is_float_type(clr_type t) {
  return t == CLR_FLOAT || t == CLR_DOUBLE || t == CLR_HALF;
}

/* Read element i of an array of type t as the wide types used below. */
long double clr_fp_at(clr_type t, const void *data, size_t i) {
  if (t == CLR_HALF) /* decoded here, not by the device */
    return (long double)clr_half_to_float(((const uint16_t *)data)[i]);
  return t == CLR_FLOAT ? (long double)((const float *)data)[i]
                        : (long double)((const double *)data)[i];
}

uint64_t clr_bits_at(clr_type t, const void *data, size_t i) {
  switch (t) {
  case CLR_INT:
    return (uint64_t)(int64_t)((const int32_t *)data)[i];
  case CLR_UINT:
    return (uint64_t)((const uint32_t *)data)[i];
  case CLR_LONG:
    return (uint64_t)((const int64_t *)data)[i];
  default:
    return ((const uint64_t *)data)[i];
  }
}

static int is_signed_int(clr_type t) { return t == CLR_INT || t == CLR_LONG; }

clr_value clr_value_at(clr_type t, const void *data, size_t i) {
  clr_value v;
  size_t size = clr_type_size(t);
  memset(&v, 0, sizeof v);
  v.type = t;
  memcpy(&v.v, (const unsigned char *)data + i * size, size);
  return v;
}

clr_value clr_int_value(clr_type rt, uint64_t bits) {
  clr_value v;
  memset(&v, 0, sizeof v);
  v.type = rt;
  switch (rt) {
  case CLR_INT:
    v.v.i = (int32_t)(uint32_t)bits;
    break;
  case CLR_UINT:
    v.v.u = (uint32_t)bits;
    break;
  case CLR_LONG:
    v.v.l = (int64_t)bits;
    break;
  default:
    v.v.ul = bits;
    break;
  }
  return v;
}

clr_value clr_fp_value(clr_type t, long double x) {
  clr_value v;
  memset(&v, 0, sizeof v);
  v.type = t;
  if (t == CLR_FLOAT)
    v.v.f = (float)x;
  else
    v.v.d = (double)x;
  return v;
}

clr_value clr_identity(clr_op op, clr_type t) {
  switch (op) {
  case CLR_SUM:
  case CLR_OR:
    return is_float_type(t) ? clr_fp_value(t, 0.0L) : clr_int_value(t, 0);
  case CLR_PROD:
  case CLR_AND:
    return is_float_type(t) ? clr_fp_value(t, 1.0L) : clr_int_value(t, 1);
  case CLR_MIN:
    switch (t) {
    case CLR_FLOAT:
    case CLR_DOUBLE:
      return clr_fp_value(t, INFINITY);
    case CLR_INT:
      return clr_int_value(t, (uint64_t)INT32_MAX);
    case CLR_UINT:
      return clr_int_value(t, UINT32_MAX);
    case CLR_LONG:
      return clr_int_value(t, (uint64_t)INT64_MAX);
    default:
      return clr_int_value(t, UINT64_MAX);
    }
  default: /* CLR_MAX */
    switch (t) {
    case CLR_FLOAT:
    case CLR_DOUBLE:
      return clr_fp_value(t, -INFINITY);
    case CLR_INT:
      return clr_int_value(t, (uint64_t)(int64_t)INT32_MIN);
    case CLR_LONG:
      return clr_int_value(t, (uint64_t)INT64_MIN);
    default:
      return clr_int_value(t, 0);
    }
  }
}

/* Floating min/max with the library's semantics: NaN propagates, and
 * -0.0 orders below +0.0. */
static long double fp_min(long double a, long double b) {
  if (isnan(a))
    return a;
  if (isnan(b))
    return b;
  if (a < b)
    return a;
  if (b < a)
    return b;
  return signbit(a) ? a : b;
}

static long double fp_max(long double a, long double b) {
  if (isnan(a))
    return a;
  if (isnan(b))
    return b;
  if (a > b)
    return a;
  if (b > a)
    return b;
  return signbit(a) ? b : a;
}

/* Integer min/max on 64-bit patterns, signed or unsigned. */
static uint64_t int_minmax(int is_max, int sgn, uint64_t a, uint64_t b) {
  int a_less = sgn ? (int64_t)a < (int64_t)b : a < b;
  if (is_max)
    return a_less ? b : a;
  return a_less ? a : b;
}

static void ref_float(clr_op op, clr_type type, clr_type rt, const void *data,
                      size_t n, clr_reference *out) {
  double type_max = rt == CLR_FLOAT ? FLT_MAX : DBL_MAX;
  if (op == CLR_MIN || op == CLR_MAX) {
    long double acc = op == CLR_MIN ? INFINITY : -INFINITY;
    for (size_t i = 0; i < n; i++) {
      long double x = clr_fp_at(type, data, i);
      acc = op == CLR_MIN ? fp_min(acc, x) : fp_max(acc, x);
    }
    out->value = clr_fp_value(rt, acc);
    out->wide = acc;
    return;
  }
  if (op == CLR_SUM) {
    /* Neumaier-compensated sum in double; infinities and NaN counted
     * apart so the compensation term cannot turn them into NaN. */
    double s = 0.0, c = 0.0, abs_sum = 0.0;
    size_t pos_inf = 0, neg_inf = 0, nans = 0;
    for (size_t i = 0; i < n; i++) {
      double x = (double)clr_fp_at(type, data, i);
      if (isnan(x)) {
        nans++;
        continue;
      }
      if (isinf(x)) {
        if (x > 0)
          pos_inf++;
        else
          neg_inf++;
        continue;
      }
      double t = s + x;
      if (fabs(s) >= fabs(x))
        c += (s - t) + x;
      else
        c += (x - t) + s;
      s = t;
      abs_sum += fabs(x);
    }
    long double wide = (long double)s + (long double)c;
    if (nans || (pos_inf && neg_inf))
      wide = NAN;
    else if (pos_inf)
      wide = INFINITY;
    else if (neg_inf)
      wide = -INFINITY;
    out->wide = wide;
    out->value = clr_fp_value(rt, wide);
    out->abs_sum = abs_sum;
    /* Neumaier: |err| <= 2 u_d |S| + O(n u_d^2) sum|x|, u_d = 2^-53. */
    double ud = ldexp(1.0, -53);
    out->ref_error =
        2.0 * ud * fabs(s) + 4.0 * (double)n * ud * ud * abs_sum + DBL_MIN;
    out->may_overflow = abs_sum > type_max;
    return;
  }
  /* CLR_PROD: multiply in long double (x87 extended on x86-64). */
  long double p = 1.0L;
  long double max_partial = 1.0L, amp = 1.0L;
  for (size_t i = 0; i < n; i++) {
    long double x = clr_fp_at(type, data, i);
    p *= x;
    if (fabsl(p) > max_partial && !isinf(p))
      max_partial = fabsl(p);
    if (fabsl(x) > 1.0L)
      amp *= fabsl(x); /* NaN never compares greater: skipped */
  }
  out->wide = p;
  out->value = clr_fp_value(rt, p);
  out->abs_sum = (double)fabsl(p);
  out->amp = amp;
  /* The reference's own rounding, and its own underflow (long double:
   * eta = LDBL_TRUE_MIN / 2 per multiplication, amplified as above). */
  long double own_uf =
      (long double)n * (LDBL_TRUE_MIN / 2.0L) * 2.0L * amp; /* 2: 1 + gamma */
  out->ref_error =
      clr_gamma((double)n, (double)LDBL_EPSILON / 2.0) * (double)fabsl(p) +
      (own_uf > (long double)DBL_MAX ? INFINITY : (double)own_uf);
  out->may_overflow = max_partial > type_max || fabsl(p) > type_max;
}

void clr_ref_reduce(clr_op op, clr_type type, int narrow_accumulator,
                    const void *data, size_t n, clr_reference *out) {
  clr_ref_reduce_to(op, type, clr_result_type(op, type, narrow_accumulator),
                    data, n, out);
}

/* (a, ia) before (b, ib) as a minimum (is_max 0) or a maximum: the
 * extreme value, its first index; a NaN before every number; -0 < +0. */
static int fp_before(long double a, size_t ia, long double b, size_t ib,
                     int is_max) {
  int na = isnan(a), nb = isnan(b);
  if (na || nb)
    return na && (!nb || ia < ib);
  if (a != b)
    return is_max ? a > b : a < b;
  if (a == 0 && signbit(a) != signbit(b))
    return is_max ? signbit(b) != 0 : signbit(a) != 0;
  return ia < ib;
}

static int int_before(int sgn, uint64_t a, size_t ia, uint64_t b, size_t ib,
                      int is_max) {
  if (a != b) {
    int less = sgn ? (int64_t)a < (int64_t)b : a < b;
    return is_max ? !less : less;
  }
  return ia < ib;
}

/* argmin / argmax / minmax: one loop, both extremes. */
static void ref_indexed(clr_op op, clr_type type, clr_type rt, const void *data,
                        size_t n, clr_reference *out) {
  size_t lo = 0, hi = 0;
  int fp = is_float_type(type), sgn = is_signed_int(type);
  for (size_t i = 1; i < n; i++) {
    if (fp ? fp_before(clr_fp_at(type, data, i), i, clr_fp_at(type, data, lo),
                       lo, 0)
           : int_before(sgn, clr_bits_at(type, data, i), i,
                        clr_bits_at(type, data, lo), lo, 0))
      lo = i;
    if (fp ? fp_before(clr_fp_at(type, data, i), i, clr_fp_at(type, data, hi),
                       hi, 1)
           : int_before(sgn, clr_bits_at(type, data, i), i,
                        clr_bits_at(type, data, hi), hi, 1))
      hi = i;
  }
  size_t first = op == CLR_ARGMAX ? hi : lo;
  clr_value v = fp ? clr_fp_value(rt, clr_fp_at(type, data, first))
                   : clr_int_value(rt, clr_bits_at(type, data, first));
  v.index = first;
  if (op == CLR_MINMAX) {
    clr_value m = fp ? clr_fp_value(rt, clr_fp_at(type, data, hi))
                     : clr_int_value(rt, clr_bits_at(type, data, hi));
    v.max = m.v;
    v.max_index = hi;
  }
  out->value = v;
  out->wide = fp ? clr_fp_at(type, data, first) : 0;
}

void clr_ref_reduce_to(clr_op op, clr_type type, clr_type rt, const void *data,
                       size_t n, clr_reference *out) {
  if (op == CLR_MEAN) {
    /* The sum (exact for int / uint in 64 bits; float data in the
     * result's precision), divided by n: the bound scales with it. */
    clr_type st = rt == CLR_FLOAT    ? CLR_FLOAT
                  : type == CLR_INT  ? CLR_LONG
                  : type == CLR_UINT ? CLR_ULONG
                                     : CLR_DOUBLE;
    clr_ref_reduce_to(CLR_SUM, type, st, data, n, out);
    long double sum = is_float_type(st)     ? out->wide
                      : is_signed_int(type) ? (long double)out->value.v.l
                                            : (long double)out->value.v.ul;
    out->op = CLR_MEAN;
    out->wide = sum / (long double)n;
    out->value = clr_fp_value(rt, out->wide);
    out->abs_sum /= (double)n;
    out->ref_error /= (double)n;
    return;
  }
  memset(out, 0, sizeof *out);
  out->n = n;
  out->op = op;
  out->type = type;
  if (op == CLR_ARGMIN || op == CLR_ARGMAX || op == CLR_MINMAX) {
    ref_indexed(op, type, rt, data, n, out);
    return;
  }
  if (is_float_type(type)) {
    ref_float(op, type, rt, data, n, out);
    return;
  }
  int sgn = is_signed_int(type);
  uint64_t acc;
  switch (op) {
  case CLR_SUM:
    acc = 0;
    for (size_t i = 0; i < n; i++)
      acc += clr_bits_at(type, data, i);
    break;
  case CLR_PROD:
    acc = 1;
    for (size_t i = 0; i < n; i++)
      acc *= clr_bits_at(type, data, i);
    break;
  case CLR_MIN:
  case CLR_MAX:
    acc = clr_bits_at(type, data, 0);
    for (size_t i = 1; i < n; i++)
      acc = int_minmax(op == CLR_MAX, sgn, acc, clr_bits_at(type, data, i));
    break;
  case CLR_AND:
    acc = 1;
    for (size_t i = 0; i < n; i++)
      acc = acc && clr_bits_at(type, data, i) != 0;
    break;
  default: /* CLR_OR */
    acc = 0;
    for (size_t i = 0; i < n; i++)
      acc = acc || clr_bits_at(type, data, i) != 0;
    break;
  }
  out->value = clr_int_value(rt, acc);
  out->wide = (long double)acc;
}

static int same_bits_fp(const clr_value *a, const clr_value *b) {
  if (a->type == CLR_FLOAT)
    return memcmp(&a->v.f, &b->v.f, sizeof(float)) == 0;
  return memcmp(&a->v.d, &b->v.d, sizeof(double)) == 0;
}

void clr_ref_check(const clr_reference *ref, const clr_value *got,
                   size_t error_depth, clr_check *out) {
  memset(out, 0, sizeof *out);
  const clr_value *want = &ref->value;
  if (got->type != want->type) {
    out->ok = 0;
    out->exact = 1;
    out->error = INFINITY;
    return;
  }
  if (ref->op == CLR_ARGMIN || ref->op == CLR_ARGMAX || ref->op == CLR_MINMAX) {
    /* The values bit for bit (any NaN matches NaN), the indices exactly. */
    size_t size = clr_type_size(want->type);
    int fp = is_float_type(want->type);
    clr_value gmax = *got, wmax = *want;
    gmax.v = got->max;
    wmax.v = want->max;
    out->exact = 1;
    out->ok =
        got->index == want->index && ((fp && isnan(clr_value_as_double(got)) &&
                                       isnan(clr_value_as_double(want))) ||
                                      memcmp(&got->v, &want->v, size) == 0);
    if (ref->op == CLR_MINMAX)
      out->ok = out->ok && got->max_index == want->max_index &&
                ((fp && isnan(clr_value_as_double(&gmax)) &&
                  isnan(clr_value_as_double(&wmax))) ||
                 memcmp(&got->max, &want->max, size) == 0);
    out->error = out->ok ? 0.0 : INFINITY;
    return;
  }
  if (!is_float_type(want->type)) {
    out->exact = 1;
    out->ok = memcmp(&got->v, &want->v, clr_type_size(want->type)) == 0;
    out->error =
        out->ok ? 0.0
                : fabs(clr_value_as_double(got) - clr_value_as_double(want));
    return;
  }
  long double g = want->type == CLR_FLOAT ? got->v.f : got->v.d;
  if (ref->op == CLR_MIN || ref->op == CLR_MAX) {
    /* Exact, including the sign of zero; any NaN matches NaN. */
    out->exact = 1;
    out->ok = (isnan(g) && isnan(ref->wide)) || same_bits_fp(got, want);
    out->error = out->ok ? 0.0 : fabsl(g - ref->wide);
    return;
  }
  long double w = ref->wide;
  if (isnan(w) || isinf(w) || isnan(g) || isinf(g)) {
    /* The reference rounded to the result type may overflow to inf. */
    long double r = want->type == CLR_FLOAT ? want->v.f : want->v.d;
    out->exact = 1;
    if (isnan(w))
      out->ok = isnan(g);
    else if (isinf(r))
      out->ok = g == r;
    else
      out->ok = 0;
    /* Range exceeded: an order-dependent overflow is accepted. */
    if (!out->ok && ref->may_overflow && (isnan(g) || isinf(g)))
      out->ok = 1;
    out->error = out->ok ? 0.0 : INFINITY;
    return;
  }
  double u = clr_unit_roundoff(want->type);
  double bound;
  if (ref->op == CLR_SUM || ref->op == CLR_MEAN) {
    /* A mean's sum was rounded to the sum's type, then divided: the sum's
     * bound over n, and one more rounding. */
    double scale = ref->op == CLR_MEAN ? 1.0 / (double)ref->n : 1.0;
    bound = clr_gamma((double)error_depth, u) * ref->abs_sum +
            scale * clr_underflow_term(want->type, ref->n, error_depth, 1.0L,
                                       ref->flush_to_zero);
    if (ref->op == CLR_MEAN)
      bound += u * (double)fabsl(ref->wide);
  } else {
    size_t mults = ref->n > 0 ? ref->n - 1 : 0;
    bound = clr_gamma((double)mults, u) * (double)fabsl(w) +
            clr_underflow_term(want->type, ref->n, mults, ref->amp,
                               ref->flush_to_zero);
  }
  /* Rounding the result to the type, and the reference's own error. */
  bound += u * (double)fabsl(w) + ref->ref_error;
  out->bound = bound;
  out->error = (double)fabsl(g - w);
  out->ok = out->error <= bound;
}

void clr_value_format(const clr_value *v, char *buf, size_t size) {
  switch (v->type) {
  case CLR_FLOAT:
    snprintf(buf, size, "%.9g", (double)v->v.f);
    break;
  case CLR_DOUBLE:
    snprintf(buf, size, "%.17g", v->v.d);
    break;
  case CLR_INT:
    snprintf(buf, size, "%" PRId32, v->v.i);
    break;
  case CLR_UINT:
    snprintf(buf, size, "%" PRIu32, v->v.u);
    break;
  case CLR_LONG:
    snprintf(buf, size, "%" PRId64, v->v.l);
    break;
  default:
    snprintf(buf, size, "%" PRIu64, v->v.ul);
    break;
  }
}

double clr_value_as_double(const clr_value *v) {
  switch (v->type) {
  case CLR_FLOAT:
    return v->v.f;
  case CLR_DOUBLE:
    return v->v.d;
  case CLR_INT:
    return v->v.i;
  case CLR_UINT:
    return v->v.u;
  case CLR_LONG:
    return (double)v->v.l;
  default:
    return (double)v->v.ul;
  }
}

clr_value clr_combine(clr_op op, clr_value a, clr_value b) {
  clr_type t = a.type;
  if (is_float_type(t)) {
    long double x = t == CLR_FLOAT ? a.v.f : a.v.d;
    long double y = t == CLR_FLOAT ? b.v.f : b.v.d;
    long double r;
    switch (op) {
    case CLR_SUM:
      r = t == CLR_FLOAT ? (long double)(float)(a.v.f + b.v.f)
                         : (long double)(a.v.d + b.v.d);
      break;
    case CLR_PROD:
      r = t == CLR_FLOAT ? (long double)(float)(a.v.f * b.v.f)
                         : (long double)(a.v.d * b.v.d);
      break;
    case CLR_MIN:
      r = fp_min(x, y);
      break;
    default:
      r = fp_max(x, y);
      break;
    }
    return clr_fp_value(t, r);
  }
  uint64_t x = clr_bits_at(t, &a.v, 0), y = clr_bits_at(t, &b.v, 0);
  int sgn = is_signed_int(t);
  switch (op) {
  case CLR_SUM:
    return clr_int_value(t, x + y);
  case CLR_PROD:
    return clr_int_value(t, x * y);
  case CLR_MIN:
    return clr_int_value(t, int_minmax(0, sgn, x, y));
  case CLR_MAX:
    return clr_int_value(t, int_minmax(1, sgn, x, y));
  case CLR_AND:
    return clr_int_value(t, x != 0 && y != 0);
  default:
    return clr_int_value(t, x != 0 || y != 0);
  }
}

/* The values a built-in map (or with y a dot product) gives the reduction
 * op in result type rt, as an array (malloc'd) of type *mtype: computed
 * in rt as the kernels do, held in double for float sums and products
 * (exactly: squares and products of floats fit), else in rt.  *ref_error:
 * the sum of the roundings of double-held values (0 when exact).  NULL
 * when out of memory. */
static void *map_values(clr_map map, clr_op op, clr_type type, clr_type rt,
                        const void *x, const void *y, size_t n, clr_type *mtype,
                        double *ref_error) {
  int fp = is_float_type(rt);
  /* Float sums and products see the exact values, in double (a float's
   * square, or the product of two floats, fits in 53 bits). */
  clr_type mt = (fp && (op == CLR_SUM || op == CLR_PROD)) ? CLR_DOUBLE : rt;
  size_t size = clr_type_size(mt);
  unsigned char *out = malloc(n ? n * size : 1);
  long double err = 0;
  *ref_error = 0;
  *mtype = mt;
  if (!out)
    return NULL;
  for (size_t i = 0; i < n; i++) {
    if (fp) {
      long double a = is_float_type(type) ? clr_fp_at(type, x, i)
                      : is_signed_int(type)
                          ? (long double)(int64_t)clr_bits_at(type, x, i)
                          : (long double)clr_bits_at(type, x, i);
      long double b = y ? clr_fp_at(type, y, i) : a;
      /* In the result type first, as the kernel converts. */
      a = rt == CLR_FLOAT ? (long double)(float)a : (long double)(double)a;
      b = rt == CLR_FLOAT ? (long double)(float)b : (long double)(double)b;
      long double v = map == CLR_MAP_ABS ? fabsl(a) : a * b;
      if (mt == CLR_FLOAT) {
        float f = (float)v;
        memcpy(out + i * size, &f, size);
      } else {
        double d = (double)v;
        if (rt == CLR_DOUBLE)
          err += fabsl(v - (long double)d);
        memcpy(out + i * size, &d, size);
      }
    } else {
      uint64_t a = clr_bits_at(type, x, i);
      uint64_t b = y ? clr_bits_at(type, y, i) : a;
      uint64_t v;
      if (map == CLR_MAP_ABS) {
        /* |x| in the result type: a 32-bit int's in 64 bits when rt is
         * long; wraps when it is not. */
        int64_t s = rt == CLR_INT ? (int64_t)(int32_t)(uint32_t)a : (int64_t)a;
        v = (is_signed_int(rt) && s < 0) ? (uint64_t)0 - (uint64_t)s
                                         : (uint64_t)s;
      } else {
        v = a * b;
      }
      clr_value w = clr_int_value(mt, v);
      memcpy(out + i * size, &w.v, size);
    }
  }
  /* Each value rounded to double errs by at most its own rounding; a sum
   * of them by the sum of those (a product: relative errors add up). */
  *ref_error = (double)err;
  return out;
}

int clr_ref_reduce_mapped(clr_map map, clr_op op, clr_type type, clr_type rt,
                          const void *x, const void *y, size_t n,
                          clr_reference *out) {
  if (map == CLR_MAP_NONE && !y) {
    clr_ref_reduce_to(op, type, rt, x, n, out);
    return 1;
  }
  clr_type mt;
  double err;
  void *mapped = map_values(map, op, type, rt, x, y, n, &mt, &err);
  if (!mapped)
    return 0;
  clr_ref_reduce_to(op, mt, rt, mapped, n, out);
  out->type = type;
  out->ref_error += err;
  free(mapped);
  return 1;
}
