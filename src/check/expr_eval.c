/* The CPU reference of a map expression: see expr_eval.h. */
#include "expr_eval.h"

#include "ops_rows.h"
#include "progress_counter.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *clr_eval_undefined_name(int code) {
  switch (code) {
  case CLR_EVAL_DIV_ZERO:
    return "an integer division by zero";
  case CLR_EVAL_DIV_OVER:
    return "the smallest signed integer divided by -1";
  case CLR_EVAL_CONVERT:
    return "a floating value converted to an integer type that cannot hold "
           "it";
  case CLR_EVAL_CLAMP:
    return "clamp with its low bound above its high one";
  default:
    return "defined";
  }
}

/* ------------------------------------------------------------ helpers */

static int is_fp(clr_expr_type t) { return clr_expr_type_is_fp(t); }

/* The bits of an integer type from 64: sign-extended or zero-extended. */
static uint64_t norm(clr_expr_type t, uint64_t u) {
  unsigned b = clr_expr_type_bits(t);
  if (b == 64)
    return u;
  uint64_t mask = (UINT64_C(1) << b) - 1;
  u &= mask;
  if (clr_expr_type_is_signed(t) && (u >> (b - 1)))
    u |= ~mask;
  return u;
}

static long double as_ld(const clr_eval_value *v) {
  if (is_fp(v->type))
    return (long double)v->d;
  return clr_expr_type_is_signed(v->type) ? (long double)(int64_t)v->u
                                          : (long double)v->u;
}

static double as_d(const clr_eval_value *v) { return (double)as_ld(v); }

static int truth(const clr_eval_value *v) {
  return is_fp(v->type) ? v->d != 0 : v->u != 0;
}

/* The truth of v may differ on the device. */
static int truth_uncertain(const clr_eval_value *v) {
  return v->err > 0 && fabs(as_d(v)) <= v->err;
}

static clr_eval_value fp_value(clr_expr_type t, long double x, double err) {
  clr_eval_value v;
  memset(&v, 0, sizeof v);
  v.type = t;
  v.d = t == CLR_ET_FLOAT ? (double)(float)x : (double)x;
  v.err = err;
  return v;
}

static clr_eval_value int_value(clr_expr_type t, uint64_t u, double err) {
  clr_eval_value v;
  memset(&v, 0, sizeof v);
  v.type = t;
  v.u = norm(t, u);
  v.err = err;
  return v;
}

/* One unit in the last place of x in t (the spacing of t's values at
 * |x|, at least the smallest denormal's). */
static double ulp(clr_expr_type t, double x) {
  double tiny = t == CLR_ET_FLOAT ? 0x1p-149 : 0x1p-1074;
  if (!isfinite(x) || x == 0)
    return tiny;
  int ex;
  frexp(fabs(x), &ex);
  double u = ldexp(1.0, ex - (t == CLR_ET_FLOAT ? 24 : 53));
  return u < tiny ? tiny : u;
}

/* The allowance of a rounded step of type t with result r: err from the
 * operands, ulps for the device's own error (0: both round alike when the
 * operands agree), one more ulp when the operands may differ (the
 * rounding of a perturbed value), and a result below the smallest normal
 * may be flushed to zero. */
static double step_err(clr_expr_type t, double r, double err, double ulps) {
  double e = err;
  if (err > 0 || ulps > 0)
    e += (ulps + 1.0) * ulp(t, r);
  double mn = t == CLR_ET_FLOAT ? FLT_MIN : DBL_MIN;
  if (r != 0 && fabs(r) < mn)
    e += mn;
  return isnan(e) ? INFINITY : e;
}

clr_eval_value clr_eval_convert(clr_eval_value v, clr_expr_type t) {
  clr_eval_value r;
  if (v.type == t)
    return v;
  if (is_fp(t)) {
    long double x = as_ld(&v);
    if (!is_fp(v.type)) /* one rounding, to nearest, as OpenCL converts */
      x = clr_expr_type_is_signed(v.type)
              ? (t == CLR_ET_FLOAT ? (long double)(float)(int64_t)v.u
                                   : (long double)(double)(int64_t)v.u)
              : (t == CLR_ET_FLOAT ? (long double)(float)v.u
                                   : (long double)(double)v.u);
    r = fp_value(t, x, 0);
    r.err = v.err > 0 ? v.err + ulp(t, r.d) : 0;
    r.undefined = v.undefined;
    return r;
  }
  if (!is_fp(v.type)) {
    r = int_value(t, v.u, v.err);
    r.undefined = v.undefined;
    return r;
  }
  /* floating to integer: truncated; undefined outside the type's range */
  unsigned b = clr_expr_type_bits(t);
  int sgn = clr_expr_type_is_signed(t);
  long double lo = sgn ? -ldexpl(1.0L, (int)b - 1) - 1.0L : -1.0L;
  long double hi = sgn ? ldexpl(1.0L, (int)b - 1) : ldexpl(1.0L, (int)b);
  long double x = v.d;
  if (isnan(x) || x <= lo || x >= hi) {
    r = int_value(t, 0, 0);
    r.undefined = CLR_EVAL_CONVERT;
    return r;
  }
  long double tx = truncl(x);
  r = int_value(t, sgn ? (uint64_t)(int64_t)tx : (uint64_t)tx, 0);
  r.undefined = v.undefined;
  if (v.err > 0) { /* the integers the interval's ends truncate to */
    long double a = truncl(x - v.err), c = truncl(x + v.err);
    r.err = (double)fmaxl(fabsl(a - tx), fabsl(c - tx));
    if (x - v.err <= lo || x + v.err >= hi)
      r.err = INFINITY;
  }
  return r;
}

/* ------------------------------------------------------------- operators */

/* How far a * b may move when a and b move by ea and eb (0 * inf: 0). */
static double mul_err(double a, double ea, double b, double eb) {
  return (eb > 0 ? fabs(a) * eb : 0) + (ea > 0 ? fabs(b) * ea : 0) +
         (ea > 0 && eb > 0 ? ea * eb : 0);
}

/* a * b (a node) that a sum may contract with into an fma: a product of
 * the sum's floating type, or its negation. */
static int contractible(const clr_expr *e, int k, clr_expr_type t) {
  const clr_expr_node *n = &e->nodes[k];
  if (n->kind == CLR_EN_UNARY && n->op == '-')
    n = &e->nodes[n->kid[0]];
  return n->kind == CLR_EN_BINARY && n->op == CLR_EB_MUL && n->type == t;
}

static double contract_err(const clr_map_eval *m, int k, clr_expr_type t) {
  const clr_expr_node *n = &m->expr.nodes[k];
  int p = n->kind == CLR_EN_UNARY ? n->kid[0] : k;
  return 0.5 * ulp(t, m->vals[p].d);
}

static clr_eval_value fp_binary(const clr_map_eval *m, const clr_expr_node *n,
                                clr_eval_value a, clr_eval_value b) {
  clr_expr_type t = a.type;
  int f = t == CLR_ET_FLOAT;
  long double r;
  double e = 0, ulps = 0;
  switch (n->op) {
  case CLR_EB_ADD:
  case CLR_EB_SUB:
    if (f)
      r = n->op == CLR_EB_ADD ? (float)a.d + (float)b.d
                              : (float)a.d - (float)b.d;
    else
      r = n->op == CLR_EB_ADD ? a.d + b.d : a.d - b.d;
    e = a.err + b.err;
    /* an operand a * b may be fused: its rounding skipped (and the
     * result's rounding then differs: step_err's ulp for err > 0) */
    for (int j = 0; j < 2; j++)
      if (contractible(&m->expr, n->kid[j], t))
        e += contract_err(m, n->kid[j], t);
    break;
  case CLR_EB_MUL:
    r = f ? (long double)((float)a.d * (float)b.d) : (long double)(a.d * b.d);
    e = mul_err(a.d, a.err, b.d, b.err);
    break;
  default: /* CLR_EB_DIV */
    r = f ? (long double)((float)a.d / (float)b.d) : (long double)(a.d / b.d);
    if (a.err > 0 || b.err > 0)
      e = fabs(b.d) > b.err
              ? (a.err + fabs((double)r) * b.err) / (fabs(b.d) - b.err)
              : INFINITY;
    ulps = f ? 2.5 : 0; /* OpenCL C 1.2: float division within 2.5 ulp */
    break;
  }
  clr_eval_value v = fp_value(t, r, 0);
  v.err = step_err(t, v.d, e, ulps);
  return v;
}

/* Integer operators (the operands in the operator's type t). */
static clr_eval_value int_binary(unsigned op, clr_expr_type t, clr_eval_value a,
                                 clr_eval_value b) {
  int sgn = clr_expr_type_is_signed(t);
  unsigned bits = clr_expr_type_bits(t);
  uint64_t x = a.u, y = b.u, r = 0;
  double ea = a.err, eb = b.err, e = 0;
  double da = as_d(&a), db = as_d(&b);
  int undefined = 0;
  switch (op) {
  case CLR_EB_ADD:
    r = x + y;
    e = ea + eb;
    break;
  case CLR_EB_SUB:
    r = x - y;
    e = ea + eb;
    break;
  case CLR_EB_MUL:
    r = x * y;
    e = mul_err(da, ea, db, eb);
    break;
  case CLR_EB_DIV:
  case CLR_EB_MOD: {
    uint64_t smallest = UINT64_C(1) << (bits - 1);
    if (y == 0) {
      undefined = CLR_EVAL_DIV_ZERO;
    } else if (sgn && y == UINT64_MAX && norm(t, x) == norm(t, smallest)) {
      undefined = CLR_EVAL_DIV_OVER;
    } else if (sgn) {
      int64_t sx = (int64_t)x, sy = (int64_t)y;
      r = (uint64_t)(op == CLR_EB_DIV ? sx / sy : sx % sy);
    } else {
      r = op == CLR_EB_DIV ? x / y : x % y;
    }
    if (ea > 0 || eb > 0) {
      if (op == CLR_EB_MOD)
        e = fabs(db) + eb;
      else
        e = fabs(db) > eb ? (ea + fabs(da / db) * eb) / (fabs(db) - eb) + 1
                          : INFINITY;
    }
    break;
  }
  case CLR_EB_SHL:
  case CLR_EB_SHR: {
    unsigned c = (unsigned)(y & (bits - 1)); /* OpenCL: modulo the width */
    if (op == CLR_EB_SHL)
      r = x << c;
    else
      r = sgn ? (uint64_t)((int64_t)x >> c) : x >> c;
    if (eb > 0)
      e = INFINITY;
    else if (ea > 0)
      e = op == CLR_EB_SHL ? ldexp(ea, (int)c) : ldexp(ea, -(int)c) + 1;
    break;
  }
  case CLR_EB_AND:
    r = x & y;
    e = ea > 0 || eb > 0 ? INFINITY : 0;
    break;
  case CLR_EB_XOR:
    r = x ^ y;
    e = ea > 0 || eb > 0 ? INFINITY : 0;
    break;
  default: /* CLR_EB_OR */
    r = x | y;
    e = ea > 0 || eb > 0 ? INFINITY : 0;
    break;
  }
  clr_eval_value v = int_value(t, r, e);
  v.undefined = undefined;
  return v;
}

static clr_eval_value compare(unsigned op, clr_eval_value a, clr_eval_value b) {
  clr_expr_type t = clr_expr_usual(a.type, b.type);
  a = clr_eval_convert(a, t);
  b = clr_eval_convert(b, t);
  int r;
  if (is_fp(t)) {
    double x = a.d, y = b.d;
    r = op == CLR_EB_LT   ? x < y
        : op == CLR_EB_GT ? x > y
        : op == CLR_EB_LE ? x <= y
        : op == CLR_EB_GE ? x >= y
        : op == CLR_EB_EQ ? x == y
                          : x != y;
  } else if (clr_expr_type_is_signed(t)) {
    int64_t x = (int64_t)a.u, y = (int64_t)b.u;
    r = op == CLR_EB_LT   ? x < y
        : op == CLR_EB_GT ? x > y
        : op == CLR_EB_LE ? x <= y
        : op == CLR_EB_GE ? x >= y
        : op == CLR_EB_EQ ? x == y
                          : x != y;
  } else {
    uint64_t x = a.u, y = b.u;
    r = op == CLR_EB_LT   ? x < y
        : op == CLR_EB_GT ? x > y
        : op == CLR_EB_LE ? x <= y
        : op == CLR_EB_GE ? x >= y
        : op == CLR_EB_EQ ? x == y
                          : x != y;
  }
  double e = 0;
  if ((a.err > 0 || b.err > 0) && !(fabs(as_d(&a) - as_d(&b)) > a.err + b.err))
    e = 1;
  clr_eval_value v = int_value(CLR_ET_INT, (uint64_t)r, e);
  v.undefined = a.undefined ? a.undefined : b.undefined;
  return v;
}

/* ------------------------------------------------------------- functions */

/* OpenCL C 1.2's largest error of a built-in, in ulps (float, double);
 * 0 for the exact ones. */
static double fn_ulps(clr_expr_fn f, int is_float) {
  switch (f) {
  case CLR_EF_SQRT:
    return is_float ? 3 : 0;
  case CLR_EF_RSQRT:
  case CLR_EF_CBRT:
  case CLR_EF_LOG1P:
    return 2;
  case CLR_EF_EXP:
  case CLR_EF_EXP2:
  case CLR_EF_EXP10:
  case CLR_EF_EXPM1:
  case CLR_EF_LOG:
  case CLR_EF_LOG2:
  case CLR_EF_LOG10:
    return 3;
  case CLR_EF_SIN:
  case CLR_EF_COS:
  case CLR_EF_TAN:
  case CLR_EF_ASIN:
  case CLR_EF_ACOS:
  case CLR_EF_SINH:
  case CLR_EF_COSH:
  case CLR_EF_HYPOT:
    return 4;
  case CLR_EF_ATAN:
  case CLR_EF_TANH:
    return 5;
  case CLR_EF_ATAN2:
    return 6;
  case CLR_EF_POW:
  case CLR_EF_POWN:
  case CLR_EF_POWR:
    return 16;
  default:
    return 0;
  }
}

static long double powr_ld(long double x, long double y) {
  if (isnan(x) || isnan(y) || x < 0)
    return NAN;
  if ((x == 0 && y == 0) || (isinf(x) && y == 0) || (x == 1 && isinf(y)))
    return NAN;
  return powl(x, y);
}

/* The floating built-ins of one or two arguments, in long double. */
static long double fn1(clr_expr_fn f, long double a, long double b) {
  switch (f) {
  case CLR_EF_FABS:
    return fabsl(a);
  case CLR_EF_SQRT:
    return sqrtl(a);
  case CLR_EF_CBRT:
    return cbrtl(a);
  case CLR_EF_RSQRT:
    return 1.0L / sqrtl(a);
  case CLR_EF_EXP:
    return expl(a);
  case CLR_EF_EXP2:
    return exp2l(a);
  case CLR_EF_EXP10:
    return powl(10.0L, a);
  case CLR_EF_EXPM1:
    return expm1l(a);
  case CLR_EF_LOG:
    return logl(a);
  case CLR_EF_LOG2:
    return log2l(a);
  case CLR_EF_LOG10:
    return log10l(a);
  case CLR_EF_LOG1P:
    return log1pl(a);
  case CLR_EF_SIN:
    return sinl(a);
  case CLR_EF_COS:
    return cosl(a);
  case CLR_EF_TAN:
    return tanl(a);
  case CLR_EF_ASIN:
    return asinl(a);
  case CLR_EF_ACOS:
    return acosl(a);
  case CLR_EF_ATAN:
    return atanl(a);
  case CLR_EF_SINH:
    return sinhl(a);
  case CLR_EF_COSH:
    return coshl(a);
  case CLR_EF_TANH:
    return tanhl(a);
  case CLR_EF_FLOOR:
    return floorl(a);
  case CLR_EF_CEIL:
    return ceill(a);
  case CLR_EF_ROUND:
    return roundl(a);
  case CLR_EF_TRUNC:
    return truncl(a);
  case CLR_EF_RINT:
    return rintl(a);
  case CLR_EF_SIGN:
    return isnan(a) ? 0.0L : a > 0 ? 1.0L : a < 0 ? -1.0L : a;
  case CLR_EF_POW:
    return powl(a, b);
  case CLR_EF_POWR:
    return powr_ld(a, b);
  case CLR_EF_POWN:
    return powl(a, b);
  case CLR_EF_ATAN2:
    return atan2l(a, b);
  case CLR_EF_FMIN:
    return fminl(a, b);
  case CLR_EF_FMAX:
    return fmaxl(a, b);
  case CLR_EF_FMOD:
    return fmodl(a, b);
  case CLR_EF_FDIM:
    return isnan(a) || isnan(b) ? (long double)NAN : a > b ? a - b : 0.0L;
  case CLR_EF_COPYSIGN:
    return copysignl(a, b);
  default: /* CLR_EF_HYPOT */
    return hypotl(a, b);
  }
}

/* How far f may move when its arguments move by ea and eb: 0 when they
 * are exact; Lipschitz bounds where they are simple, else the largest
 * change over the corners of the arguments' intervals (first order for
 * the monotone functions it serves). */
static double fn_prop(clr_expr_fn f, long double a, long double b, double ea,
                      double eb, long double r) {
  if (ea == 0 && eb == 0)
    return 0;
  switch (f) {
  case CLR_EF_FABS:
  case CLR_EF_FMIN:
  case CLR_EF_FMAX:
    return fmax(ea, eb);
  case CLR_EF_SIN:
  case CLR_EF_COS:
    return fmin(ea, 2.0);
  case CLR_EF_COSH:
    return (double)(sinhl(fabsl(a) + ea) * ea);
  case CLR_EF_SIGN:
    return fabsl(a) <= ea ? 2.0 : 0.0;
  case CLR_EF_FDIM:
  case CLR_EF_HYPOT:
    return ea + eb;
  case CLR_EF_FMOD:
    return (double)fabsl(b) + eb;
  case CLR_EF_COPYSIGN:
    return fabsl(b) <= eb ? 2 * (double)fabsl(a) + ea : ea;
  default:
    break;
  }
  double worst = 0;
  for (int i = -1; i <= 1; i += 2)
    for (int j = -1; j <= 1; j += 2) {
      long double c = fn1(f, a + i * (long double)ea, b + j * (long double)eb);
      double d = (double)fabsl(c - r);
      if (isnan(d))
        return INFINITY;
      worst = fmax(worst, d);
    }
  return worst;
}

/* a < b, of one type (false with a NaN) */
static int less(const clr_eval_value *a, const clr_eval_value *b) {
  if (is_fp(a->type))
    return a->d < b->d;
  if (clr_expr_type_is_signed(a->type))
    return (int64_t)a->u < (int64_t)b->u;
  return a->u < b->u;
}

static clr_eval_value call(const clr_expr_node *n, clr_eval_value *args) {
  clr_expr_fn f = (clr_expr_fn)n->op;
  clr_expr_type t = (clr_expr_type)n->type;
  clr_eval_value a = args[0], b = args[1], c = args[2], v;
  int undefined = a.undefined                   ? a.undefined
                  : n->nargs > 1 && b.undefined ? b.undefined
                  : n->nargs > 2                ? c.undefined
                                                : 0;
  switch (f) {
  case CLR_EF_ISNAN:
  case CLR_EF_ISINF:
  case CLR_EF_ISFINITE:
  case CLR_EF_SIGNBIT: {
    double x = a.d, big = a.type == CLR_ET_FLOAT ? FLT_MAX : DBL_MAX;
    int r = f == CLR_EF_ISNAN      ? isnan(x) != 0
            : f == CLR_EF_ISINF    ? isinf(x) != 0
            : f == CLR_EF_ISFINITE ? isfinite(x) != 0
                                   : signbit(x) != 0;
    double e = 0;
    if (a.err > 0 && f != CLR_EF_ISNAN &&
        (f == CLR_EF_SIGNBIT ? fabs(x) <= a.err : fabs(x) + a.err >= big))
      e = 1;
    v = int_value(CLR_ET_INT, (uint64_t)r, e);
    break;
  }
  case CLR_EF_MIN: /* OpenCL C: y if y < x, else x */
    v = less(&b, &a) ? b : a;
    v.err = fmax(a.err, b.err);
    break;
  case CLR_EF_MAX: /* y if x < y, else x */
    v = less(&a, &b) ? b : a;
    v.err = fmax(a.err, b.err);
    break;
  case CLR_EF_CLAMP: /* min(max(x, lo), hi); undefined for lo > hi */
    if (less(&c, &b))
      undefined = CLR_EVAL_CLAMP;
    v = less(&a, &b) ? b : a;
    v = less(&c, &v) ? c : v;
    v.err = fmax(a.err, fmax(b.err, c.err));
    break;
  case CLR_EF_ABS:
  case CLR_EF_ABS_DIFF: {
    uint64_t r;
    int sgn = clr_expr_type_is_signed(a.type);
    if (f == CLR_EF_ABS)
      r = sgn && (int64_t)a.u < 0 ? (uint64_t)0 - a.u : a.u;
    else if (sgn ? (int64_t)a.u > (int64_t)b.u : a.u > b.u)
      r = a.u - b.u;
    else
      r = b.u - a.u;
    v = int_value(t, r, f == CLR_EF_ABS ? a.err : a.err + b.err);
    break;
  }
  case CLR_EF_POPCOUNT:
  case CLR_EF_CLZ: {
    unsigned bits = clr_expr_type_bits(t);
    uint64_t x = bits == 64 ? a.u : a.u & ((UINT64_C(1) << bits) - 1);
    unsigned r = 0;
    if (f == CLR_EF_POPCOUNT)
      for (; x; x &= x - 1)
        r++;
    else
      for (int k = (int)bits - 1; k >= 0 && !((x >> k) & 1); k--)
        r++;
    v = int_value(t, r, a.err > 0 ? INFINITY : 0);
    break;
  }
  case CLR_EF_FMA:
  case CLR_EF_MAD: {
    int fl = t == CLR_ET_FLOAT;
    long double r;
    double e = mul_err(a.d, a.err, b.d, b.err) + c.err;
    if (f == CLR_EF_FMA) {
      r = fl ? (long double)fmaf((float)a.d, (float)b.d, (float)c.d)
             : (long double)fma(a.d, b.d, c.d);
    } else { /* mad: an fma, or a product and a sum each rounded */
      float pf = (float)a.d * (float)b.d;
      double pd = a.d * b.d;
      r = fl ? (long double)(pf + (float)c.d) : (long double)(pd + c.d);
      e += 0.5 * ulp(t, fl ? pf : pd);
    }
    v = fp_value(t, r, 0);
    v.err = step_err(t, v.d, e, 0);
    break;
  }
  default: { /* floating, one or two arguments (pown: an integer second) */
    long double x = a.d, y = 0;
    double eb = 0;
    if (n->nargs > 1) {
      if (f == CLR_EF_POWN) {
        clr_eval_value k = clr_eval_convert(b, CLR_ET_INT);
        y = (long double)(int64_t)k.u;
        eb = b.err > 0 ? INFINITY : 0;
      } else {
        y = b.d;
        eb = b.err;
      }
    }
    long double r = fn1(f, x, y);
    v = fp_value(t, r, 0);
    double e = fn_prop(f, x, y, a.err, eb, v.d);
    v.err = step_err(t, v.d, e, fn_ulps(f, t == CLR_ET_FLOAT));
    break;
  }
  }
  if (isnan(v.err))
    v.err = INFINITY;
  if (!v.undefined)
    v.undefined = undefined;
  v.type = t;
  return v;
}

/* ------------------------------------------------------------ the walk */

static clr_expr_type expr_type_of(clr_type t) {
  switch (t) {
  case CLR_DOUBLE:
    return CLR_ET_DOUBLE;
  case CLR_INT:
    return CLR_ET_INT;
  case CLR_UINT:
    return CLR_ET_UINT;
  case CLR_LONG:
    return CLR_ET_LONG;
  case CLR_ULONG:
    return CLR_ET_ULONG;
  default: /* float, and half decoded to float */
    return CLR_ET_FLOAT;
  }
}

int clr_map_eval_init(clr_map_eval *m, const char *text, clr_type type, int dot,
                      char *err, size_t err_size) {
  memset(m, 0, sizeof *m);
  m->type = type;
  int rc =
      clr_expr_parse(&m->expr, text, "the map expression", clr_map_vars,
                     dot ? CLR_MAP_NVARS : CLR_MAP_VAR_Y, 4096, err, err_size);
  if (rc != 0)
    return rc;
  clr_expr_type vt[3] = {expr_type_of(type), CLR_ET_ULONG, expr_type_of(type)};
  if (clr_expr_check_types(&m->expr, vt, "the map expression", err, err_size)) {
    clr_map_eval_free(m);
    return 1;
  }
  m->vals = malloc((m->expr.count ? m->expr.count : 1) * sizeof *m->vals);
  if (!m->vals) {
    clr_map_eval_free(m);
    return -1;
  }
  return 0;
}

void clr_map_eval_free(clr_map_eval *m) {
  clr_expr_free(&m->expr);
  free(m->vals);
  m->vals = NULL;
}

/* Element k of data of type t as a variable's value. */
static clr_eval_value load(clr_type t, const void *data, size_t k) {
  clr_expr_type et = expr_type_of(t);
  if (clr_ref_is_fp(t)) {
    long double x = clr_fp_at(t, data, k);
    double mn = et == CLR_ET_FLOAT ? FLT_MIN : DBL_MIN;
    /* a denormal may be flushed to zero by the device */
    return fp_value(et, x, x != 0 && fabsl(x) < mn ? (double)fabsl(x) : 0);
  }
  return int_value(et, clr_bits_at(t, data, k), 0);
}

clr_eval_value clr_map_eval_at(clr_map_eval *m, const void *x, const void *y,
                               size_t k, uint64_t i) {
  const clr_expr *e = &m->expr;
  clr_eval_value *val = m->vals;
  /* children come before their parents: one pass in order, every node
   * evaluated (no side effects; an undefined value counts only where it
   * is used) */
  for (size_t j = 0; j < e->count; j++) {
    const clr_expr_node *n = &e->nodes[j];
    clr_expr_type t = (clr_expr_type)n->type;
    clr_eval_value a, b, v;
    memset(&v, 0, sizeof v);
    switch ((clr_expr_kind)n->kind) {
    case CLR_EN_VAR:
      v = n->op == 1   ? int_value(CLR_ET_ULONG, i, 0)
          : n->op == 0 ? load(m->type, x, k)
          : y          ? load(m->type, y, k)
                       : int_value(t, 0, 0);
      break;
    case CLR_EN_LIT:
      v = is_fp(t) ? fp_value(t, n->lit.d, 0) : int_value(t, n->lit.u, 0);
      break;
    case CLR_EN_CAST:
      v = clr_eval_convert(val[n->kid[0]], t);
      break;
    case CLR_EN_UNARY:
      a = val[n->kid[0]];
      if (n->op == '!') {
        v = int_value(CLR_ET_INT, !truth(&a), truth_uncertain(&a) ? 1 : 0);
      } else {
        a = clr_eval_convert(a, t);
        v = a;
        if (n->op == '-' && is_fp(t))
          v.d = -a.d;
        else if (n->op == '-')
          v.u = norm(t, (uint64_t)0 - a.u);
        else if (n->op == '~')
          v = int_value(t, ~a.u, a.err > 0 ? INFINITY : 0);
      }
      v.undefined = a.undefined;
      break;
    case CLR_EN_BINARY: {
      a = val[n->kid[0]];
      b = val[n->kid[1]];
      unsigned op = n->op;
      if (op >= CLR_EB_LT && op <= CLR_EB_NE) {
        v = compare(op, a, b);
        break;
      }
      if (op == CLR_EB_LAND || op == CLR_EB_LOR) {
        int ta = truth(&a), tb = truth(&b);
        int r = op == CLR_EB_LAND ? ta && tb : ta || tb;
        /* the right operand counts only when the left does not decide */
        int uses_b = op == CLR_EB_LAND ? ta : !ta;
        int unsure = truth_uncertain(&a) || (uses_b && truth_uncertain(&b));
        v = int_value(CLR_ET_INT, (uint64_t)r, unsure ? 1 : 0);
        v.undefined = a.undefined ? a.undefined : uses_b ? b.undefined : 0;
        break;
      }
      clr_expr_type ot = op == CLR_EB_SHL || op == CLR_EB_SHR
                             ? t
                             : clr_expr_usual(a.type, b.type);
      a = clr_eval_convert(a, ot);
      b = clr_eval_convert(b, op == CLR_EB_SHL || op == CLR_EB_SHR
                                  ? clr_expr_promote(b.type)
                                  : ot);
      v = is_fp(ot) ? fp_binary(m, n, a, b) : int_binary(op, ot, a, b);
      if (!v.undefined)
        v.undefined = a.undefined ? a.undefined : b.undefined;
      break;
    }
    case CLR_EN_COND: {
      clr_eval_value c = val[n->kid[0]];
      a = clr_eval_convert(val[n->kid[1]], t);
      b = clr_eval_convert(val[n->kid[2]], t);
      v = truth(&c) ? a : b;
      if (truth_uncertain(&c)) { /* either branch */
        double d = fabs(as_d(&a) - as_d(&b));
        v.err = fmax(a.err, b.err) + (isnan(d) ? INFINITY : d);
        if (!v.undefined)
          v.undefined = truth(&c) ? b.undefined : a.undefined;
      }
      if (c.undefined)
        v.undefined = c.undefined;
      break;
    }
    case CLR_EN_CALL: {
      clr_eval_value args[3];
      memset(args, 0, sizeof args);
      for (unsigned q = 0; q < n->nargs && q < 3; q++)
        args[q] = val[n->kid[q]];
      v = call(n, args);
      break;
    }
    }
    v.type = t;
    if (isnan(v.err)) /* an allowance is a bound: unknown, none */
      v.err = INFINITY;
    val[j] = v;
  }
  return val[e->root];
}

/* ------------------------------------------------------- the reference */

/* The progress (progress_counter.h) of an element's value, the fold's of
 * it being 1: evaluating the tree costs some 10 (x * 2.0f) to 50
 * (sin(x) * x + 1.0f) times a plain loop's step. */
#define EVAL_WORK 15

/* Start out: the reference of op over the n elements j = 0 .. n - 1 at
 * x[first + j * stride] (and y's), element j's i being
 * opt->index_base + first + j * stride.  0; 1 when the values cannot be
 * folded (err says why). */
static int expr_begin(clr_map_eval *m, const clr_options *opt, clr_op op,
                      clr_type type, const void *x, const void *y, size_t first,
                      size_t stride, size_t n, clr_expr_reference *out,
                      char *err, size_t err_size) {
  const clr_ref_op_row *row = clr_ref_op_info(op);
  clr_type rt = clr_options_result_type(opt, op, type);
  /* the kernel casts the value to its accumulator: a mean's is its sum's */
  clr_type acc_type = row && (row->flags & CLR_OPF_MEAN)
                          ? clr_options_result_type(opt, row->runs, type)
                          : rt;
  memset(out, 0, sizeof *out);
  out->op = op;
  out->rt = rt;
  out->vt = acc_type;
  out->m = m;
  out->x = x;
  out->y = y;
  out->n = n;
  out->first = first;
  out->stride = stride;
  out->index_base = opt->index_base + first;
  out->ddof = opt->ddof;
  out->lo_bound = INFINITY;
  out->hi_bound = -INFINITY;
  size_t size = clr_type_size(acc_type);
  if (!row || size == 0 || acc_type == CLR_HALF) {
    snprintf(err, err_size,
             "a map expression's reference folds float, double or integer "
             "values, not %s",
             clr_type_name(acc_type));
    return 1;
  }
  return 0;
}

/* Element j of out's elements evaluated, its allowance noted in out, and
 * its value (in out->vt, as the kernel casts it) stored at dst.  0; 1
 * when the value is undefined in OpenCL C (err says where). */
static int expr_value(clr_expr_reference *out, size_t j, void *dst, char *err,
                      size_t err_size) {
  const clr_ref_op_row *row = clr_ref_op_info(out->op);
  int logical = (row->flags & CLR_OPF_LOGICAL) != 0;
  clr_expr_type vt = expr_type_of(out->vt);
  size_t k = out->first + j * out->stride;
  uint64_t i = out->index_base + (uint64_t)j * out->stride;
  clr_eval_value v = clr_map_eval_at(out->m, out->x, out->y, k, i);
  if (logical) { /* the kernel's (ACC_T)(value != 0) */
    int t = truth(&v);
    if (truth_uncertain(&v))
      out->uncertain++;
    else if (t)
      out->sure_true++;
    else
      out->sure_false++;
    v = int_value(CLR_ET_INT, (uint64_t)t, 0);
  }
  clr_eval_value c = clr_eval_convert(v, vt);
  if (c.undefined) {
    snprintf(err, err_size,
             "the map expression has no value in OpenCL C at index %llu "
             "(%s): no reference",
             (unsigned long long)i, clr_eval_undefined_name(c.undefined));
    return 1;
  }
  if (!logical) {
    double e = c.err, d = as_d(&c);
    out->err_sum += e;
    out->err_max = fmax(out->err_max, e);
    if (e > 0)
      out->rel_sum += d != 0 ? e / fabs(d) : INFINITY;
    if (!isnan(d)) {
      out->lo_bound = fmin(out->lo_bound, d + e);
      out->hi_bound = fmax(out->hi_bound, d - e);
    }
  }
  size_t size = clr_type_size(out->vt);
  if (is_fp(vt)) {
    float f = (float)c.d;
    if (vt == CLR_ET_FLOAT)
      memcpy(dst, &f, size);
    else
      memcpy(dst, &c.d, size);
  } else {
    clr_value w = clr_int_value(out->vt, c.u);
    memcpy(dst, &w.v, size);
  }
  return 0;
}

/* The fold of out's n values (vals, of out->vt) into its reference, the
 * indices of records counted from its first element. */
static void expr_fold(clr_expr_reference *out, clr_type type,
                      const void *vals) {
  clr_ref_reduce_to(out->op, out->vt, out->rt, vals, out->n, &out->ref);
  clr_ref_set_ddof(&out->ref, out->ddof); /* var and std */
  out->ref.type = type;
}

int clr_ref_reduce_expr(clr_map_eval *m, const clr_options *opt, clr_op op,
                        clr_type type, const void *x, const void *y, size_t n,
                        clr_expr_reference *out, char *err, size_t err_size) {
  int rc = expr_begin(m, opt, op, type, x, y, 0, 1, n, out, err, err_size);
  if (rc != 0)
    return rc;
  size_t size = clr_type_size(out->vt);
  unsigned char *vals = malloc(n ? n * size : 1);
  if (!vals)
    return -1;
  clr_progress_plan((EVAL_WORK + 1) * (uint64_t)n); /* the values, the fold */
  CLR_PROGRESS_FOR_WEIGHTED(k, n, EVAL_WORK) {
    if (expr_value(out, k, vals + k * size, err, err_size) != 0) {
      free(vals);
      return 1;
    }
  }
  expr_fold(out, type, vals);
  free(vals);
  return 0;
}

/* Half of a record: its value (the low or the high one) and index. */
static void record_half(const clr_value *v, int high, double *value,
                        uint64_t *index) {
  clr_value h = *v;
  if (high) {
    h.v = v->max;
    h.index = v->max_index;
  }
  *value = clr_value_as_double(&h);
  *index = h.index;
}

/* One half of an argmin / argmax / minmax result against the allowance:
 * the element it names, evaluated again, must be within its allowance of
 * the CPU's extreme, and the value reported within it of the element's. */
static int record_ok(const clr_expr_reference *r, const clr_value *got,
                     const clr_value *want, int high, int second, double *err) {
  double gv, wv;
  uint64_t gi, wi;
  record_half(got, second, &gv, &gi);
  record_half(want, second, &wv, &wi);
  *err = 0;
  if (wi == UINT64_MAX || isnan(wv)) /* no number, or a NaN: exactly */
    return gi == wi && (isnan(wv) ? isnan(gv) : gv == wv);
  if (gi >= r->n || isnan(gv))
    return 0;
  /* element gi of the reference's: x[first + gi * stride] */
  size_t k = r->first + (size_t)gi * r->stride;
  clr_eval_value v =
      clr_map_eval_at(r->m, r->x, r->y, k, r->index_base + gi * r->stride);
  clr_eval_value c = clr_eval_convert(v, expr_type_of(r->vt));
  double cv = as_d(&c);
  *err = fabs(gv - wv);
  if (isnan(cv) || fabs(gv - cv) > c.err)
    return 0;
  return high ? cv + c.err >= r->hi_bound : cv - c.err <= r->lo_bound;
}

void clr_ref_check_expr(const clr_expr_reference *r, const clr_value *got,
                        size_t error_depth, clr_check *out) {
  const clr_ref_op_row *row = clr_ref_op_info(r->op);
  clr_ref_combine c = clr_ref_combine_info(row ? row->combine : r->op);
  const clr_value *want = &r->ref.value;
  memset(out, 0, sizeof *out);
  if (!row || got->type != want->type || (r->err_max == 0 && !r->uncertain)) {
    clr_ref_check(&r->ref, got, error_depth, out);
    return;
  }
  double g = clr_value_as_double(got), w = clr_value_as_double(want);
  if (row->flags & CLR_OPF_LOGICAL) {
    /* an uncertain truth decides only when no sure one does */
    int decided =
        row->combine == CLR_AND ? r->sure_false > 0 : r->sure_true > 0;
    if (decided) {
      clr_ref_check(&r->ref, got, error_depth, out);
      return;
    }
    out->ok = g == 0 || g == 1;
    out->error = fabs(g - w);
    out->bound = 1;
    return;
  }
  if (row->flags & CLR_OPF_INDEXED) {
    double e1 = 0, e2 = 0;
    int both = c.extremes == (CLR_REF_LOWEST | CLR_REF_HIGHEST);
    int only_hi = c.extremes == CLR_REF_HIGHEST;
    out->ok = record_ok(r, got, want, only_hi, 0, &e1);
    if (both)
      out->ok = out->ok && record_ok(r, got, want, 1, 1, &e2);
    out->error = fmax(e1, e2);
    out->bound = r->err_max;
    return;
  }
  int fp = clr_ref_is_fp(want->type);
  if (row->flags & CLR_OPF_MOMENTS) { /* the elements' allowance */
    clr_reference ref = r->ref;
    ref.moments.input_err = r->err_max;
    clr_ref_check(&ref, got, error_depth, out);
    return;
  }
  if (fp && c.rounds != CLR_REF_EXACT) {
    clr_reference ref = r->ref;
    if (c.rounds == CLR_REF_ADDS)
      ref.ref_error += (row->flags & CLR_OPF_MEAN) && ref.n
                           ? r->err_sum / (double)ref.n
                           : r->err_sum;
    else
      ref.ref_error += r->rel_sum * (double)fabsl(ref.wide);
    clr_ref_check(&ref, got, error_depth, out);
    return;
  }
  /* min / max, and integer results: within the allowance (a sum's: the
   * sum of them); what no allowance bounds (bitwise, products of
   * integers) is accepted with an infinite bound */
  double bound = c.rounds == CLR_REF_ADDS ? r->err_sum : r->err_max;
  if (!fp && !c.extremes && row->combine != CLR_SUM)
    bound = INFINITY;
  out->bound = bound;
  out->error = g == w || (isnan(g) && isnan(w)) ? 0.0 : fabs(g - w);
  out->ok = g == w || (isnan(g) && isnan(w)) || out->error <= bound;
}

/* ------------------------------------------------------------ segments */

/* Result s of n_results, got, against r, the reference of its len
 * elements (depth capped at len - 1), noted in out as
 * clr_ref_segments_check notes it: the first failing result, else the one
 * nearest its bound. */
static void note_result(clr_segments_check *out, size_t s, size_t n_results,
                        size_t len, size_t depth, const clr_expr_reference *r,
                        const clr_value *got) {
  clr_check chk;
  memset(&chk, 0, sizeof chk);
  if (len == 0) { /* the fold of nothing: the row's identity, exactly */
    chk.exact = 1;
    chk.ok = clr_ref_same_result(got, &r->ref.value);
    chk.error = chk.ok ? 0.0 : INFINITY;
  } else {
    clr_ref_check_expr(r, got, depth < len - 1 ? depth : len - 1, &chk);
  }
  double ratio = chk.bound > 0 && !chk.overflowed ? chk.error / chk.bound : 0.0;
  int first_bad = !chk.ok && out->ok;
  if (!chk.ok)
    out->n_bad++;
  out->n_overflowed += (size_t)chk.overflowed;
  if (first_bad || (out->ok && s == 0) ||
      (out->ok && !chk.overflowed && ratio > out->worst_ratio)) {
    out->worst_index = s;
    out->exact = chk.exact;
    out->worst_error = chk.error;
    out->worst_bound = chk.bound;
    out->worst_ratio = ratio;
    out->got_worst = *got;
    out->ref_worst = r->ref.value;
  }
  if (!chk.ok)
    out->ok = 0;
  if (s + 1 == n_results) {
    out->got_last = *got;
    out->ref_last = r->ref.value;
  }
}

int clr_ref_segments_check_expr(clr_map_eval *m, const clr_options *opt,
                                clr_op op, clr_type type, const void *data,
                                const uint64_t *offsets, const uint64_t *ranges,
                                size_t n_segments, const void *results,
                                size_t depth, clr_segments_check *out,
                                char *err, size_t err_size) {
  size_t esize = clr_type_size(type);
  clr_type rt = clr_options_result_type(opt, op, type);
  clr_options o = *opt;
  uint64_t elements = 0;
  memset(out, 0, sizeof *out);
  out->ok = 1;
  for (size_t s = 0; s < n_segments; s++)
    elements += ranges ? ranges[2 * s + 1] : offsets[s + 1] - offsets[s];
  clr_progress_plan((EVAL_WORK + 1) * elements); /* clr_ref_reduce_expr's */
  for (size_t s = 0; s < n_segments; s++) {
    size_t a = ranges ? (size_t)ranges[2 * s] : (size_t)offsets[s];
    size_t len = ranges ? (size_t)ranges[2 * s + 1]
                        : (size_t)offsets[s + 1] - (size_t)offsets[s];
    clr_value got = clr_result_at(op, rt, results, s);
    clr_expr_reference r;
    o.index_base = opt->index_base + a;
    int rc = clr_ref_reduce_expr(m, &o, op, type,
                                 (const unsigned char *)data + a * esize, NULL,
                                 len, &r, err, err_size);
    if (rc != 0)
      return rc;
    note_result(out, s, n_segments, len, depth, &r, &got);
  }
  return 0;
}

/* ------------------------------------------------------------ matrices */

int clr_ref_matrix_check_expr(clr_map_eval *m, const clr_options *opt,
                              clr_op op, clr_type type, const void *data,
                              size_t rows, size_t cols, size_t pitch, int axis,
                              const void *results, size_t depth,
                              clr_segments_check *out, char *err,
                              size_t err_size) {
  clr_type rt = clr_options_result_type(opt, op, type);
  clr_expr_reference probe;
  memset(out, 0, sizeof *out);
  out->ok = 1;
  if (pitch < cols)
    pitch = cols;
  /* the accumulator's type (and whether the op has a reference) first,
   * for the size of the values held */
  int rc =
      expr_begin(m, opt, op, type, data, NULL, 0, 1, 0, &probe, err, err_size);
  if (rc != 0)
    return rc;
  size_t vsize = clr_type_size(probe.vt);
  clr_progress_plan((EVAL_WORK + 1) * (uint64_t)rows * cols);
  if (axis != 0) { /* a row: its cols elements where they lie */
    unsigned char *vals = malloc(cols ? cols * vsize : 1);
    if (!vals)
      return -1;
    for (size_t r = 0; r < rows; r++) {
      clr_value got = clr_result_at(op, rt, results, r);
      clr_expr_reference ref;
      expr_begin(m, opt, op, type, data, NULL, r * pitch, 1, cols, &ref, err,
                 err_size);
      CLR_PROGRESS_FOR_WEIGHTED(c, cols, EVAL_WORK) {
        if (expr_value(&ref, c, vals + c * vsize, err, err_size) != 0) {
          free(vals);
          return 1;
        }
      }
      expr_fold(&ref, type, vals);
      note_result(out, r, rows, cols, depth, &ref, &got);
    }
    free(vals);
    return 0;
  }
  /* Axis 0: the columns [c0, c0 + w) a block, each column's values at
   * vals + k * rows (column-major, as its fold reads them), evaluated row
   * by row: the matrix is read in memory order, a row's piece of the
   * block at a time, and never copied. */
  size_t width = clr_ref_matrix_block(rows, cols, vsize);
  unsigned char *vals = malloc((width ? width : 1) * (rows ? rows : 1) * vsize);
  clr_expr_reference *refs = malloc((width ? width : 1) * sizeof *refs);
  if (!vals || !refs) {
    free(vals);
    free(refs);
    return -1;
  }
  for (size_t c0 = 0; c0 < cols && rc == 0; c0 += width) {
    size_t w = cols - c0 < width ? cols - c0 : width;
    /* column c0 + k: element j (its row) at data[c0 + k + j * pitch], its
     * i index_base + j * pitch + c0 + k */
    for (size_t k = 0; k < w; k++)
      expr_begin(m, opt, op, type, data, NULL, c0 + k, pitch, rows, &refs[k],
                 err, err_size);
    CLR_PROGRESS_FOR_WEIGHTED(j, rows, EVAL_WORK * w) {
      for (size_t k = 0; k < w && rc == 0; k++)
        rc = expr_value(&refs[k], j, vals + (k * rows + j) * vsize, err,
                        err_size);
      if (rc != 0)
        break;
    }
    for (size_t k = 0; k < w && rc == 0; k++) {
      clr_value got = clr_result_at(op, rt, results, c0 + k);
      expr_fold(&refs[k], type, vals + k * rows * vsize);
      note_result(out, c0 + k, cols, rows, depth, &refs[k], &got);
    }
  }
  free(vals);
  free(refs);
  return rc;
}
