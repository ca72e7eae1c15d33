/* CPU references: plain loops, independent of the library's kernels. */
#include "reference.h"
#include "half.h"
#include "ops_rows.h"
#include "progress_counter.h"

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

static int is_float_type(clr_type t) { return clr_ref_is_fp(t); }

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

static int is_signed_int(clr_type t) { return clr_ref_is_signed(t); }

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

/* ------------------------------------------------ identities, off the rows */

/* The largest (top) or smallest value of integer type t as a 64-bit
 * pattern (signed types sign-extended), from its row's size and kind. */
static uint64_t int_extreme(clr_type t, int top) {
  const clr_ref_type_row *r = clr_ref_type_info(t);
  unsigned bits = r ? 8u * (unsigned)r->size : 64u;
  if (r && r->kind == CLR_KIND_SIGNED) {
    uint64_t max = UINT64_MAX >> (65u - bits);
    return top ? max : ~max;
  }
  return top ? UINT64_MAX >> (64u - bits) : 0;
}

/* Identity kind id (CLR_ID_*) for a floating type: 0, 1, +-inf, NaN. */
static long double fp_identity(int id) {
  switch (id) {
  case CLR_ID_ZERO:
    return 0.0L;
  case CLR_ID_ONE:
    return 1.0L;
  case CLR_ID_TOP:
    return (long double)INFINITY;
  case CLR_ID_BOTTOM:
    return -(long double)INFINITY;
  default: /* CLR_ID_NAN_TOP, CLR_ID_NAN_BOTTOM */
    return (long double)NAN;
  }
}

/* Identity kind id for integer type t (NAN_TOP / NAN_BOTTOM: TOP /
 * BOTTOM), as a 64-bit pattern. */
static uint64_t int_identity(int id, clr_type t) {
  switch (id) {
  case CLR_ID_ZERO:
    return 0;
  case CLR_ID_ONE:
    return 1;
  case CLR_ID_TOP:
  case CLR_ID_NAN_TOP:
    return int_extreme(t, 1);
  default: /* CLR_ID_BOTTOM, CLR_ID_NAN_BOTTOM */
    return int_extreme(t, 0);
  }
}

clr_value clr_identity(clr_op op, clr_type t) {
  const clr_ref_op_row *row = clr_ref_op_info(op);
  int id = row ? row->identity : CLR_ID_ZERO;
  return is_float_type(t) ? clr_fp_value(t, fp_identity(id))
                          : clr_int_value(t, int_identity(id, t));
}

/* ------------------------------------------------------- the fold's steps */

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

/* The extreme of acc and x an ordering combine picks (CLR_REF_HIGHEST:
 * the larger).  Skipping NaNs, a NaN element is left out and a NaN acc
 * (the identity of a fold of no number yet) loses to any number. */
static long double fp_pick(unsigned extremes, int skip, long double acc,
                           long double x) {
  if (skip && isnan(x))
    return acc;
  if (skip && isnan(acc))
    return x;
  return extremes == CLR_REF_HIGHEST ? fp_max(acc, x) : fp_min(acc, x);
}

/* Integer min/max on 64-bit patterns, signed or unsigned. */
static uint64_t int_minmax(int is_max, int sgn, uint64_t a, uint64_t b) {
  int a_less = sgn ? (int64_t)a < (int64_t)b : a < b;
  if (is_max)
    return a_less ? b : a;
  return a_less ? a : b;
}

/* acc combine x on 64-bit integer patterns (sums and products wrap; the
 * caller narrows to the result type), extremes being the combine's
 * (clr_ref_combine_info): the arithmetic of the exact combines, one case
 * each.  A new exact combine adds its case here. */
static uint64_t int_fold(clr_op combine, unsigned extremes, int sgn,
                         uint64_t acc, uint64_t x) {
  if (extremes)
    return int_minmax(extremes == CLR_REF_HIGHEST, sgn, acc, x);
  switch (combine) {
  case CLR_SUM:
    return acc + x;
  case CLR_PROD:
    return acc * x;
  case CLR_AND:
    return acc != 0 && x != 0;
  case CLR_OR:
    return acc != 0 || x != 0;
  case CLR_XOR:
    return acc ^ x;
  default:
    return acc;
  }
}

/* (a, ia) before (b, ib) as a minimum (is_max 0) or a maximum: the
 * extreme value, its first index; a NaN before every number, or skipping
 * NaNs after every number; -0 < +0. */
static int fp_before(long double a, uint64_t ia, long double b, uint64_t ib,
                     int is_max, int skip) {
  int na = isnan(a), nb = isnan(b);
  if (na || nb)
    return skip ? nb && (!na || ia < ib) : na && (!nb || ia < ib);
  if (a != b)
    return is_max ? a > b : a < b;
  if (a == 0 && signbit(a) != signbit(b))
    return is_max ? signbit(b) != 0 : signbit(a) != 0;
  return ia < ib;
}

static int int_before(int sgn, uint64_t a, uint64_t ia, uint64_t b, uint64_t ib,
                      int is_max) {
  if (a != b) {
    int less = sgn ? (int64_t)a < (int64_t)b : a < b;
    return is_max ? !less : less;
  }
  return ia < ib;
}

/* ---------------------------------------------------------------- folds */

/* Float / double / half sum: Neumaier-compensated in double; infinities
 * and NaN counted apart so the compensation term cannot turn them into
 * NaN.  Skipping NaNs, they are left out of the sum, sum|x| and the
 * count. */
static void ref_fp_sum(int skip, clr_type type, clr_type rt, const void *data,
                       size_t n, clr_reference *out) {
  double type_max = rt == CLR_FLOAT ? FLT_MAX : DBL_MAX;
  double s = 0.0, c = 0.0, abs_sum = 0.0;
  size_t pos_inf = 0, neg_inf = 0, nans = 0, count = 0;
  CLR_PROGRESS_FOR(i, n) {
    double x = (double)clr_fp_at(type, data, i);
    if (isnan(x)) {
      if (!skip) {
        nans++;
        count++;
      }
      continue;
    }
    count++;
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
  out->n = count;
  out->wide = wide;
  out->value = clr_fp_value(rt, wide);
  out->abs_sum = abs_sum;
  /* Neumaier: |err| <= 2 u_d |S| + O(n u_d^2) sum|x|, u_d = 2^-53. */
  double ud = ldexp(1.0, -53);
  out->ref_error =
      2.0 * ud * fabs(s) + 4.0 * (double)count * ud * ud * abs_sum + DBL_MIN;
  out->may_overflow = abs_sum > type_max;
}

/* Element i of floating data in *x; 0 when it is a NaN that a NaN-skipping
 * operation (skip) leaves out, else 1 and one more in *count. */
static int fp_number(int skip, clr_type type, const void *data, size_t i,
                     long double *x, size_t *count) {
  *x = clr_fp_at(type, data, i);
  if (skip && isnan(*x))
    return 0;
  (*count)++;
  return 1;
}

/* Float / double / half product: multiplied in long double (x87 extended
 * on x86-64); skipping NaNs, they are left out. */
static void ref_fp_prod(int skip, clr_type type, clr_type rt, const void *data,
                        size_t n, clr_reference *out) {
  double type_max = rt == CLR_FLOAT ? FLT_MAX : DBL_MAX;
  long double p = 1.0L;
  long double max_partial = 1.0L, amp = 1.0L;
  size_t count = 0;
  CLR_PROGRESS_FOR(i, n) {
    long double x;
    if (!fp_number(skip, type, data, i, &x, &count))
      continue;
    p *= x;
    if (fabsl(p) > max_partial && !isinf(p))
      max_partial = fabsl(p);
    if (fabsl(x) > 1.0L)
      amp *= fabsl(x); /* NaN never compares greater: skipped */
  }
  out->n = count;
  out->wide = p;
  out->value = clr_fp_value(rt, p);
  out->abs_sum = (double)fabsl(p);
  out->amp = amp;
  /* The reference's own rounding, and its own underflow (long double:
   * eta = LDBL_TRUE_MIN / 2 per multiplication, amplified as above). */
  long double own_uf = (long double)count * (LDBL_TRUE_MIN / 2.0L) * 2.0L *
                       amp; /* 2: 1 + gamma */
  out->ref_error =
      clr_gamma((double)count, (double)LDBL_EPSILON / 2.0) * (double)fabsl(p) +
      (own_uf > (long double)DBL_MAX ? INFINITY : (double)own_uf);
  out->may_overflow = max_partial > type_max || fabsl(p) > type_max;
}

/* Float / double / half min / max (an ordering combine without a record):
 * exact, from the row's identity. */
static void ref_fp_order(unsigned extremes, int identity, int skip,
                         clr_type type, clr_type rt, const void *data, size_t n,
                         clr_reference *out) {
  long double acc = fp_identity(identity);
  size_t count = 0;
  CLR_PROGRESS_FOR(i, n) {
    long double x;
    if (fp_number(skip, type, data, i, &x, &count))
      acc = fp_pick(extremes, skip, acc, x);
  }
  out->n = count;
  out->value = clr_fp_value(rt, acc);
  out->wide = acc;
}

/* Integers (and the truth of floating values, for a logical row): the
 * exact fold int_fold from the row's identity in rt (of the input's kind,
 * at least as wide), in 64 bits, narrowed to rt at the end (wrapping sums
 * and products agree with rt's). */
static void ref_int(clr_op combine, unsigned extremes, int identity, int truth,
                    clr_type type, clr_type rt, const void *data, size_t n,
                    clr_reference *out) {
  int sgn = is_signed_int(type), fp = is_float_type(type);
  uint64_t acc = int_identity(identity, rt); /* rt's: an empty fold's */
  CLR_PROGRESS_FOR(i, n) {
    uint64_t x = fp ? (uint64_t)(truth && clr_fp_at(type, data, i) != 0)
                    : clr_bits_at(type, data, i);
    acc = int_fold(combine, extremes, sgn, acc, x);
  }
  out->value = clr_int_value(rt, acc);
  out->wide = (long double)acc;
}

/* An indexed row (a record): each extreme the combine picks, with its
 * first index, from the row's identity in rt at index UINT64_MAX (what a
 * fold of no element, or skipping NaNs of no number, gives); the value and
 * index
 * are the lowest's unless only the highest is picked, and with both the
 * highest is max / max_index. */
static void ref_record(const clr_ref_op_row *row, unsigned extremes, int skip,
                       clr_type type, clr_type rt, const void *data, size_t n,
                       clr_reference *out) {
  int fp = is_float_type(type), sgn = is_signed_int(type);
  int only_hi = extremes == CLR_REF_HIGHEST;
  int lo_id = only_hi ? clr_ref_identity_mirror(row->identity) : row->identity;
  int hi_id = clr_ref_identity_mirror(lo_id);
  long double flo = fp_identity(lo_id), fhi = fp_identity(hi_id);
  uint64_t blo = int_identity(lo_id, rt), bhi = int_identity(hi_id, rt);
  uint64_t lo = UINT64_MAX, hi = UINT64_MAX;
  size_t count = 0;
  CLR_PROGRESS_FOR(i, n) {
    if (fp) {
      long double x = clr_fp_at(type, data, i);
      if (skip && isnan(x))
        continue;
      if ((extremes & CLR_REF_LOWEST) && fp_before(x, i, flo, lo, 0, skip)) {
        flo = x;
        lo = i;
      }
      if ((extremes & CLR_REF_HIGHEST) && fp_before(x, i, fhi, hi, 1, skip)) {
        fhi = x;
        hi = i;
      }
    } else {
      uint64_t x = clr_bits_at(type, data, i);
      if ((extremes & CLR_REF_LOWEST) && int_before(sgn, x, i, blo, lo, 0)) {
        blo = x;
        lo = i;
      }
      if ((extremes & CLR_REF_HIGHEST) && int_before(sgn, x, i, bhi, hi, 1)) {
        bhi = x;
        hi = i;
      }
    }
    count++;
  }
  clr_value v = fp ? clr_fp_value(rt, only_hi ? fhi : flo)
                   : clr_int_value(rt, only_hi ? bhi : blo);
  v.index = only_hi ? hi : lo;
  if (extremes == (CLR_REF_LOWEST | CLR_REF_HIGHEST)) {
    clr_value m = fp ? clr_fp_value(rt, fhi) : clr_int_value(rt, bhi);
    v.max = m.v;
    v.max_index = hi;
  }
  out->n = count;
  out->value = v;
  out->wide = fp ? (only_hi ? fhi : flo) : 0;
}

/* The fold of row over n elements of type into result type rt, skipping
 * NaN elements when skip: the reference of every row but a mean's. */
static void ref_fold(const clr_ref_op_row *row, int skip, clr_type type,
                     clr_type rt, const void *data, size_t n,
                     clr_reference *out) {
  clr_ref_combine c = clr_ref_combine_info(row->combine);
  out->n = n;
  out->type = type;
  if (row->flags & CLR_OPF_INDEXED) {
    ref_record(row, c.extremes, skip, type, rt, data, n, out);
    return;
  }
  int logical = (row->flags & CLR_OPF_LOGICAL) != 0;
  if (is_float_type(type) && !logical) {
    if (c.rounds == CLR_REF_ADDS)
      ref_fp_sum(skip, type, rt, data, n, out);
    else if (c.rounds == CLR_REF_MULTIPLIES)
      ref_fp_prod(skip, type, rt, data, n, out);
    else
      ref_fp_order(c.extremes, row->identity, skip, type, rt, data, n, out);
    return;
  }
  ref_int(row->combine, c.extremes, row->identity, logical, type, rt, data, n,
          out);
}

void clr_ref_reduce(clr_op op, clr_type type, int narrow_accumulator,
                    const void *data, size_t n, clr_reference *out) {
  clr_ref_reduce_to(op, type, clr_result_type(op, type, narrow_accumulator),
                    data, n, out);
}

void clr_ref_reduce_to(clr_op op, clr_type type, clr_type rt, const void *data,
                       size_t n, clr_reference *out) {
  const clr_ref_op_row *row = clr_ref_op_info(op);
  memset(out, 0, sizeof *out);
  out->n = n;
  out->op = op;
  out->type = type;
  if (!row)
    return;
  clr_progress_plan(n); /* one pass */
  if (row->flags & CLR_OPF_MOMENTS) {
    /* Two passes in long double (moments_reference.c), ddof 0 until
     * clr_ref_set_ddof. */
    clr_ref_moments_of(type, data, 0, n, 1, &out->moments);
    out->value = clr_ref_moments_value(op, rt, 0, &out->moments);
    out->wide = (long double)clr_value_as_double(&out->value);
    return;
  }
  if (row->flags & CLR_OPF_MEAN) {
    /* The reference of the row's runs (its sum: exact for int / uint in
     * their wide type, 64 bits; floating data in the result's precision),
     * divided by the count of the elements it folded (skipping NaNs: of
     * the numbers; none gives NaN): the bound scales with it. */
    const clr_ref_op_row *runs = clr_ref_op_info(row->runs);
    if (!runs)
      return;
    clr_type st =
        is_float_type(type) ? rt : clr_result_type(row->runs, type, 0);
    int skip =
        clr_ref_skips_nan(op, type) || clr_ref_skips_nan(row->runs, type);
    ref_fold(runs, skip, type, st, data, n, out);
    long double sum = is_float_type(st)     ? out->wide
                      : is_signed_int(type) ? (long double)out->value.v.l
                                            : (long double)out->value.v.ul;
    out->op = op;
    out->wide = out->n ? sum / (long double)out->n : (long double)NAN;
    out->value = clr_fp_value(rt, out->wide);
    out->abs_sum /= (double)out->n;
    out->ref_error /= (double)out->n;
    return;
  }
  ref_fold(row, clr_ref_skips_nan(op, type), type, rt, data, n, out);
}

static int same_bits_fp(const clr_value *a, const clr_value *b) {
  if (a->type == CLR_FLOAT)
    return memcmp(&a->v.f, &b->v.f, sizeof(float)) == 0;
  return memcmp(&a->v.d, &b->v.d, sizeof(double)) == 0;
}

void clr_ref_set_ddof(clr_reference *ref, uint64_t ddof) {
  const clr_ref_op_row *row = clr_ref_op_info(ref->op);
  if (!row || !(row->flags & CLR_OPF_MOMENTS))
    return;
  ref->ddof = ddof;
  ref->value =
      clr_ref_moments_value(ref->op, ref->value.type, ddof, &ref->moments);
  ref->wide = (long double)clr_value_as_double(&ref->value);
}

void clr_ref_check(const clr_reference *ref, const clr_value *got,
                   size_t error_depth, clr_check *out) {
  memset(out, 0, sizeof *out);
  const clr_value *want = &ref->value;
  const clr_ref_op_row *row = clr_ref_op_info(ref->op);
  unsigned flags = row ? row->flags : 0;
  clr_ref_combine c = clr_ref_combine_info(row ? row->combine : ref->op);
  if (got->type != want->type) {
    out->ok = 0;
    out->exact = 1;
    out->error = INFINITY;
    return;
  }
  if (flags & CLR_OPF_MOMENTS) {
    /* The value and the mean, each against its bound (the exact rules
     * give error and bound 0; an accepted overflow +inf and +inf). */
    out->ok =
        clr_ref_moments_check(ref->op, want->type, ref->ddof, error_depth,
                              &ref->moments, got, &out->error, &out->bound);
    out->overflowed = out->ok && isinf(out->error) && isinf(out->bound);
    out->exact = out->bound == 0;
    return;
  }
  if (flags & CLR_OPF_INDEXED) {
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
    if (c.extremes == (CLR_REF_LOWEST | CLR_REF_HIGHEST))
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
  if (c.rounds == CLR_REF_EXACT) {
    /* Exact (min, max), including the sign of zero; any NaN matches NaN. */
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
    out->error = out->ok ? 0.0 : INFINITY;
    /* Range exceeded: an order-dependent overflow is accepted, and said so
     * (no match: the result is not the reference). */
    if (!out->ok && ref->may_overflow && (isnan(g) || isinf(g))) {
      out->ok = 1;
      out->exact = 0;
      out->overflowed = 1;
      out->bound = INFINITY;
    }
    return;
  }
  double u = clr_unit_roundoff(want->type);
  double bound;
  if (c.rounds == CLR_REF_ADDS) {
    /* A mean's sum was rounded to the sum's type, then divided: the sum's
     * bound over n, and one more rounding. */
    int mean = (flags & CLR_OPF_MEAN) != 0;
    double scale = mean ? 1.0 / (double)ref->n : 1.0;
    bound = clr_gamma((double)error_depth, u) * ref->abs_sum +
            scale * clr_underflow_term(want->type, ref->n, error_depth, 1.0L,
                                       ref->flush_to_zero);
    if (mean)
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

/* One half of a record: (b, bi) replaces (*a, *ai) when it comes first as
 * a minimum (is_max 0) or a maximum. */
static void pick_half(clr_type t, int is_max, int skip, clr_scalar *a,
                      uint64_t *ai, const clr_scalar *b, uint64_t bi) {
  int before;
  if (is_float_type(t)) {
    long double x = t == CLR_FLOAT ? a->f : a->d;
    long double y = t == CLR_FLOAT ? b->f : b->d;
    before = fp_before(y, bi, x, *ai, is_max, skip);
  } else {
    before = int_before(is_signed_int(t), clr_bits_at(t, b, 0), bi,
                        clr_bits_at(t, a, 0), *ai, is_max);
  }
  if (before) {
    *a = *b;
    *ai = bi;
  }
}

clr_value clr_combine(clr_op op, clr_value a, clr_value b) {
  const clr_ref_op_row *row = clr_ref_op_info(op);
  clr_op combine = row ? row->combine : op;
  clr_ref_combine c = clr_ref_combine_info(combine);
  clr_type t = a.type;
  int skip = clr_ref_skips_nan(op, t);
  if (row && (row->flags & CLR_OPF_INDEXED)) {
    /* Records (as clr_result_at decodes them): each extreme picked. */
    int only_hi = c.extremes == CLR_REF_HIGHEST;
    pick_half(t, only_hi, skip, &a.v, &a.index, &b.v, b.index);
    if (c.extremes == (CLR_REF_LOWEST | CLR_REF_HIGHEST))
      pick_half(t, 1, skip, &a.max, &a.max_index, &b.max, b.max_index);
    return a;
  }
  if (is_float_type(t)) {
    long double x = t == CLR_FLOAT ? a.v.f : a.v.d;
    long double y = t == CLR_FLOAT ? b.v.f : b.v.d;
    long double r;
    if (skip && isnan(y)) /* a NaN element is left out */
      return a;
    switch (c.rounds) {
    case CLR_REF_ADDS:
      r = t == CLR_FLOAT ? (long double)(float)(a.v.f + b.v.f)
                         : (long double)(a.v.d + b.v.d);
      break;
    case CLR_REF_MULTIPLIES:
      r = t == CLR_FLOAT ? (long double)(float)(a.v.f * b.v.f)
                         : (long double)(a.v.d * b.v.d);
      break;
    default:
      r = c.extremes ? fp_pick(c.extremes, skip, x, y) : x;
      break;
    }
    return clr_fp_value(t, r);
  }
  uint64_t x = clr_bits_at(t, &a.v, 0), y = clr_bits_at(t, &b.v, 0);
  return clr_int_value(t,
                       int_fold(combine, c.extremes, is_signed_int(t), x, y));
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
   * square, or the product of two floats, fits in 53 bits); a mean's
   * values are held in rt, as they always were. */
  const clr_ref_op_row *row = clr_ref_op_info(op);
  int rounds = row && !(row->flags & CLR_OPF_MEAN) &&
               clr_ref_combine_info(row->combine).rounds != CLR_REF_EXACT;
  clr_type mt = (fp && rounds) ? CLR_DOUBLE : rt;
  size_t size = clr_type_size(mt);
  unsigned char *out = malloc(n ? n * size : 1);
  long double err = 0;
  *ref_error = 0;
  *mtype = mt;
  if (!out)
    return NULL;
  CLR_PROGRESS_FOR(i, n) {
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
        if (rt == CLR_DOUBLE && isfinite(v)) /* (a NaN or inf: no error) */
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

int clr_ref_reduce_opt(const clr_options *opt, clr_op op, clr_type type,
                       const void *x, const void *y, size_t n,
                       clr_reference *out) {
  clr_type rt = clr_options_result_type(opt, op, type);
  if (!clr_ref_reduce_mapped(opt ? opt->map : CLR_MAP_NONE, op, type, rt, x, y,
                             n, out))
    return 0;
  clr_ref_set_ddof(out, opt ? opt->ddof : 0);
  return 1;
}

int clr_ref_reduce_mapped(clr_map map, clr_op op, clr_type type, clr_type rt,
                          const void *x, const void *y, size_t n,
                          clr_reference *out) {
  if (map == CLR_MAP_NONE && !y) {
    clr_ref_reduce_to(op, type, rt, x, n, out);
    return 1;
  }
  clr_progress_plan(2 * (uint64_t)n); /* two passes: the map, the fold */
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
