/* The CPU reference of var and std (src/check/moments_reference.h) and
 * its check, no device: the two-pass moments of hand-computed arrays
 * (every kind of type, strided, a large mean), the a-priori bound (a
 * value within it accepted, beyond it refused, for the variance, the
 * deviation and the mean), the exact rules (NaN, infinities, n <= ddof,
 * equal elements, an empty array), an accepted overflow; and the hooks:
 * clr_ref_reduce_opt / clr_ref_check with a ddof, clr_ref_segments_check_opt
 * and clr_ref_matrix_check_opt on records written here (value, mean,
 * count), a wrong count or empty segment refused. */
#include "half.h"
#include "moments_reference.h"
#include "reference.h"
#include "segment_reference.h"
#include "test_util.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A result of rt: v, mean. */
static clr_value result(clr_op op, clr_type rt, long double v,
                        long double mean) {
  clr_value r = clr_fp_value(rt, v), m = clr_fp_value(rt, mean);
  r.op = op;
  r.max = m.v;
  return r;
}

static int near(long double a, long double b, long double tol) {
  return fabsl(a - b) <= tol;
}

/* The bound of moments_reference.h, worked out here for a variance with
 * n elements, ddof, depth, M2, sumsq (no underflow term: the data are
 * far from it). */
static double var_bound(clr_type rt, size_t n, uint64_t ddof, size_t depth,
                        double m2, double sumsq) {
  double u = clr_unit_roundoff(rt), d = (double)depth + 2;
  double ul = (double)(LDBL_EPSILON / 2);
  double m2b = 4 * d * u * sqrt(m2 * sumsq) + (double)n * ul * sumsq;
  double var = m2 / (double)(n - ddof);
  return m2b / (double)(n - ddof) + 2 * u * var;
}

static void reference_cases(void) {
  tu_section("the two-pass reference");
  float f[] = {1, 2, 3, 4};
  clr_ref_moments m;
  clr_ref_moments_of(CLR_FLOAT, f, 0, 4, 1, &m);
  TU_CHECK(m.n == 4 && m.mean == 2.5L && m.m2 == 5.0L && m.sumsq == 30.0L &&
               m.maxabs == 4.0L && !m.has_nan && !m.has_inf,
           "[1,2,3,4]: n 4, mean 2.5, M2 5, sumsq 30, maxabs 4 (got mean "
           "%Lg, M2 %Lg)",
           m.mean, m.m2);
  clr_value v = clr_ref_moments_value(CLR_VAR, CLR_DOUBLE, 0, &m);
  TU_CHECK(v.v.d == 1.25 && v.max.d == 2.5, "var ddof 0 is 1.25 (got %.17g)",
           v.v.d);
  v = clr_ref_moments_value(CLR_VAR, CLR_DOUBLE, 1, &m);
  TU_CHECK(near(v.v.d, 5.0 / 3.0, 1e-15), "var ddof 1 is 1.6667 (got %.17g)",
           v.v.d);
  v = clr_ref_moments_value(CLR_STD, CLR_FLOAT, 1, &m);
  TU_CHECK(v.type == CLR_FLOAT && v.v.f == (float)sqrt(5.0 / 3.0) &&
               v.max.f == 2.5f,
           "std ddof 1 in float is sqrt(5/3) (got %.9g)", (double)v.v.f);
  v = clr_ref_moments_value(CLR_VAR, CLR_DOUBLE, 4, &m);
  TU_CHECK(isnan(v.v.d) && v.max.d == 2.5, "n <= ddof: var NaN, mean kept");

  /* Strided: elements 0, 2, 4, 6 and 1, 3, 5, 7. */
  double s[] = {1, 100, 2, 100, 3, 100, 4, 100};
  clr_ref_moments_of(CLR_DOUBLE, s, 0, 4, 2, &m);
  TU_CHECK(m.mean == 2.5L && m.m2 == 5.0L, "strided from 0: [1,2,3,4]");
  clr_ref_moments_of(CLR_DOUBLE, s, 1, 4, 2, &m);
  TU_CHECK(m.mean == 100.0L && m.m2 == 0.0L,
           "strided from 1: all 100, M2 exactly 0");

  /* Half, int, uint, long, ulong. */
  uint16_t h[4];
  for (int i = 0; i < 4; i++)
    h[i] = clr_half_from_float(f[i]);
  clr_ref_moments_of(CLR_HALF, h, 0, 4, 1, &m);
  TU_CHECK(m.mean == 2.5L && m.m2 == 5.0L, "half [1,2,3,4]");
  int32_t i32[] = {-7, 1, 3};
  clr_ref_moments_of(CLR_INT, i32, 0, 3, 1, &m);
  TU_CHECK(m.mean == -1.0L && m.m2 == 56.0L,
           "int [-7,1,3]: mean -1, M2 56 (got %Lg, %Lg)", m.mean, m.m2);
  uint32_t u32[] = {4000000000u, 4000000002u};
  clr_ref_moments_of(CLR_UINT, u32, 0, 2, 1, &m);
  TU_CHECK(m.mean == 4000000001.0L && m.m2 == 2.0L, "uint above 2^31");
  int64_t i64[] = {-3, 5};
  clr_ref_moments_of(CLR_LONG, i64, 0, 2, 1, &m);
  TU_CHECK(m.mean == 1.0L && m.m2 == 32.0L, "long [-3,5]");
  if (LDBL_MANT_DIG >= 64) {
    uint64_t u64[] = {(uint64_t)1 << 63, ((uint64_t)1 << 63) + 2};
    clr_ref_moments_of(CLR_ULONG, u64, 0, 2, 1, &m);
    TU_CHECK(m.mean == 9223372036854775809.0L && m.m2 == 2.0L,
             "ulong near 2^63: exact in long double (M2 %Lg)", m.m2);
  }

  /* A large mean: the two-pass reference keeps M2 to the last digit. */
  double big[] = {1e9 + 1, 1e9 + 2, 1e9 + 3, 1e9 + 4};
  clr_ref_moments_of(CLR_DOUBLE, big, 0, 4, 1, &m);
  TU_CHECK(near(m.m2, 5.0L, 1e-6L) && m.mean == 1e9L + 2.5L,
           "1e9 + [1,2,3,4]: M2 5 (got %.12Lg)", m.m2);

  /* Special values. */
  float nan_data[] = {1, NAN, 3};
  clr_ref_moments_of(CLR_FLOAT, nan_data, 0, 3, 1, &m);
  TU_CHECK(m.has_nan && isnan(m.mean) && isnan(m.m2), "a NaN: both NaN");
  float inf_data[] = {1, INFINITY, 3};
  clr_ref_moments_of(CLR_FLOAT, inf_data, 0, 3, 1, &m);
  TU_CHECK(m.has_inf && isnan(m.m2) && isinf(m.mean) && m.mean > 0,
           "+inf: M2 NaN, mean +inf");
  float infs[] = {-INFINITY, 1, INFINITY};
  clr_ref_moments_of(CLR_FLOAT, infs, 0, 3, 1, &m);
  TU_CHECK(m.has_inf && isnan(m.mean), "both infinities: mean NaN");
  clr_ref_moments_of(CLR_FLOAT, f, 0, 0, 1, &m);
  TU_CHECK(m.n == 0 && isnan(m.mean) && isnan(m.m2), "no element: NaN");
}

static void bound_cases(void) {
  tu_section("the a-priori bound");
  double x[] = {1, 2, 3, 4};
  clr_ref_moments m;
  clr_ref_moments_of(CLR_DOUBLE, x, 0, 4, 1, &m);
  const size_t depth = 1000;
  double err = 0, bound = 0;
  for (uint64_t ddof = 0; ddof <= 1; ddof++) {
    double var = 5.0 / (double)(4 - ddof);
    double b = var_bound(CLR_DOUBLE, 4, ddof, depth, 5.0, 30.0);
    clr_value got = result(CLR_VAR, CLR_DOUBLE, var, 2.5);
    TU_CHECK(clr_ref_moments_check(CLR_VAR, CLR_DOUBLE, ddof, depth, &m, &got,
                                   &err, &bound),
             "ddof %d: the exact variance passes", (int)ddof);
    got = result(CLR_VAR, CLR_DOUBLE, var + 0.9 * b, 2.5);
    int ok = clr_ref_moments_check(CLR_VAR, CLR_DOUBLE, ddof, depth, &m, &got,
                                   &err, &bound);
    TU_CHECK(ok && near(bound, b, 1e-3 * b) && near(err, 0.9 * b, 0.01 * b),
             "ddof %d: 0.9 of the bound passes, the bound reported (%.3g, "
             "expected %.3g)",
             (int)ddof, bound, b);
    got = result(CLR_VAR, CLR_DOUBLE, var - 1.1 * b, 2.5);
    TU_CHECK(!clr_ref_moments_check(CLR_VAR, CLR_DOUBLE, ddof, depth, &m, &got,
                                    &err, &bound) &&
                 err > bound,
             "ddof %d: 1.1 of the bound fails", (int)ddof);
    /* The deviation: the variance's bound through the square root. */
    double sd = sqrt(var);
    double sb = b / (2 * sd) + clr_unit_roundoff(CLR_DOUBLE) * sd;
    got = result(CLR_STD, CLR_DOUBLE, sd + 0.5 * sb, 2.5);
    TU_CHECK(clr_ref_moments_check(CLR_STD, CLR_DOUBLE, ddof, depth, &m, &got,
                                   NULL, NULL),
             "ddof %d: std within half its bound passes", (int)ddof);
    got = result(CLR_STD, CLR_DOUBLE, sd - 2 * sb, 2.5);
    TU_CHECK(!clr_ref_moments_check(CLR_STD, CLR_DOUBLE, ddof, depth, &m, &got,
                                    NULL, NULL),
             "ddof %d: std twice its bound off fails", (int)ddof);
  }
  /* The mean: 4 d u maxabs. */
  double mb = 4.0 * (double)(depth + 2) * clr_unit_roundoff(CLR_DOUBLE) * 4.0;
  clr_value got = result(CLR_VAR, CLR_DOUBLE, 1.25, 2.5 + 0.5 * mb);
  TU_CHECK(clr_ref_moments_check(CLR_VAR, CLR_DOUBLE, 0, depth, &m, &got, &err,
                                 &bound),
           "the mean within half its bound passes");
  got = result(CLR_VAR, CLR_DOUBLE, 1.25, 2.5 - 2 * mb);
  TU_CHECK(!clr_ref_moments_check(CLR_VAR, CLR_DOUBLE, 0, depth, &m, &got, &err,
                                  &bound) &&
               near(bound, mb, 0.01 * mb),
           "the mean twice its bound off fails, its bound reported (%.3g, "
           "expected %.3g)",
           bound, mb);
  /* The bound grows with the depth: float, a large mean (kappa large). */
  float f[] = {1000.5f, 1001.5f, 1002.5f, 1003.5f};
  clr_ref_moments_of(CLR_FLOAT, f, 0, 4, 1, &m);
  double sumsq = 0;
  for (int i = 0; i < 4; i++)
    sumsq += (double)f[i] * f[i];
  double b0 = var_bound(CLR_FLOAT, 4, 0, 3, 5.0, sumsq);
  got = result(CLR_VAR, CLR_FLOAT, 1.25 + 0.8 * b0, 1002);
  TU_CHECK(
      clr_ref_moments_check(CLR_VAR, CLR_FLOAT, 0, 3, &m, &got, &err, &bound),
      "float, large mean: 0.8 of the bound passes (err %.3g, bound %.3g, "
      "expected %.3g)",
      err, bound, b0);
  got = result(CLR_VAR, CLR_FLOAT, 1.25 + 1.3 * b0, 1002);
  TU_CHECK(
      !clr_ref_moments_check(CLR_VAR, CLR_FLOAT, 0, 3, &m, &got, NULL, NULL),
      "float, large mean: 1.3 of the bound fails");
  got = result(CLR_VAR, CLR_DOUBLE, 1.25, 1002);
  TU_CHECK(
      !clr_ref_moments_check(CLR_VAR, CLR_FLOAT, 0, 3, &m, &got, NULL, NULL),
      "a result of another type fails");
}

/* check got (value, mean) of op on float data against its rule. */
static int check_f(clr_op op, const float *data, size_t n, uint64_t ddof,
                   long double v, long double mean) {
  clr_ref_moments m;
  clr_ref_moments_of(CLR_FLOAT, data, 0, n, 1, &m);
  clr_value got = result(op, CLR_FLOAT, v, mean);
  double err = -1, bound = -1;
  int ok =
      clr_ref_moments_check(op, CLR_FLOAT, ddof, 10, &m, &got, &err, &bound);
  return ok;
}

static void exact_cases(void) {
  tu_section("the exact rules");
  const long double nan = NAN, inf = INFINITY;
  float with_nan[] = {1, NAN, 3};
  TU_CHECK(check_f(CLR_VAR, with_nan, 3, 0, nan, nan), "NaN: (NaN, NaN)");
  TU_CHECK(!check_f(CLR_VAR, with_nan, 3, 0, 1, nan), "NaN: var 1 fails");
  TU_CHECK(!check_f(CLR_STD, with_nan, 3, 0, nan, 2), "NaN: mean 2 fails");
  float with_inf[] = {1, INFINITY, 3};
  TU_CHECK(check_f(CLR_VAR, with_inf, 3, 0, nan, nan),
           "inf: var NaN, mean NaN (Welford's)");
  TU_CHECK(check_f(CLR_VAR, with_inf, 3, 0, nan, inf),
           "inf: var NaN, mean inf (NumPy's)");
  TU_CHECK(!check_f(CLR_VAR, with_inf, 3, 0, nan, -inf),
           "inf: mean -inf fails");
  TU_CHECK(!check_f(CLR_VAR, with_inf, 3, 0, inf, inf), "inf: var inf fails");
  TU_CHECK(!check_f(CLR_VAR, with_inf, 3, 0, nan, 2), "inf: mean 2 fails");
  float both[] = {INFINITY, -INFINITY};
  TU_CHECK(check_f(CLR_VAR, both, 2, 0, nan, nan), "+-inf: (NaN, NaN)");
  TU_CHECK(!check_f(CLR_VAR, both, 2, 0, nan, inf), "+-inf: mean inf fails");
  float one[] = {5};
  TU_CHECK(check_f(CLR_VAR, one, 1, 1, nan, 5), "n == ddof: var NaN");
  TU_CHECK(!check_f(CLR_VAR, one, 1, 1, 0, 5), "n == ddof: var 0 fails");
  TU_CHECK(check_f(CLR_STD, one, 1, 0, 0, 5), "one element, ddof 0: std 0");
  TU_CHECK(check_f(CLR_VAR, one, 0, 0, nan, nan), "no element: (NaN, NaN)");
  TU_CHECK(!check_f(CLR_VAR, one, 0, 0, 0, nan), "no element: var 0 fails");
  TU_CHECK(!check_f(CLR_VAR, one, 0, 0, nan, 0), "no element: mean 0 fails");
  float equal[] = {3, 3, 3};
  TU_CHECK(check_f(CLR_VAR, equal, 3, 1, 0, 3), "equal elements: var 0");
  TU_CHECK(!check_f(CLR_VAR, equal, 3, 1, 1e-30L, 3),
           "equal elements: var 1e-30 fails (must be exactly 0)");
  TU_CHECK(!check_f(CLR_STD, equal, 3, 0, nan, 3),
           "equal elements: std NaN fails");
  float huge[] = {1e20f, -1e20f};
  clr_ref_moments m;
  clr_ref_moments_of(CLR_FLOAT, huge, 0, 2, 1, &m);
  clr_value got = result(CLR_VAR, CLR_FLOAT, inf, 0);
  double err = 0, bound = 0;
  TU_CHECK(
      clr_ref_moments_check(CLR_VAR, CLR_FLOAT, 0, 1, &m, &got, &err, &bound) &&
          isinf(err) && isinf(bound),
      "1e20, -1e20 in float: an overflowed var accepted (inf, inf)");
  got = result(CLR_VAR, CLR_FLOAT, 1e38L, 0);
  TU_CHECK(
      !clr_ref_moments_check(CLR_VAR, CLR_FLOAT, 0, 1, &m, &got, NULL, NULL),
      "1e20, -1e20 in float: a finite wrong var fails");
}

/* Record i of results (value, mean of rt, count) for op. */
static void put_record(clr_type rt, void *results, size_t i, long double v,
                       long double mean, uint64_t count) {
  size_t s = clr_type_size(rt);
  char *r = (char *)results + i * (2 * s + 8);
  clr_value a = clr_fp_value(rt, v), b = clr_fp_value(rt, mean);
  memcpy(r, &a.v, s);
  memcpy(r + s, &b.v, s);
  memcpy(r + 2 * s, &count, 8);
}

static void hook_cases(void) {
  tu_section("the checkers' hooks");
  float f[] = {1, 2, 3, 4, 10, 20, 60};
  clr_options opt;
  clr_options_init(&opt);
  opt.ddof = 1;
  clr_reference ref;
  TU_CHECK(clr_ref_reduce_opt(&opt, CLR_VAR, CLR_FLOAT, f, NULL, 4, &ref) &&
               ref.value.type == CLR_FLOAT &&
               ref.value.v.f == (float)(5.0 / 3.0) && ref.value.max.f == 2.5f,
           "clr_ref_reduce_opt: var of [1,2,3,4], ddof 1: 5/3, mean 2.5");
  clr_check chk;
  clr_value got = result(CLR_VAR, CLR_FLOAT, 5.0L / 3, 2.5);
  clr_ref_check(&ref, &got, 3, &chk);
  TU_CHECK(chk.ok && !chk.exact && chk.bound > 0, "clr_ref_check: passes");
  got = result(CLR_VAR, CLR_FLOAT, 1.25, 2.5);
  clr_ref_check(&ref, &got, 3, &chk);
  TU_CHECK(!chk.ok, "clr_ref_check: the ddof-0 variance fails with ddof 1");
  clr_ref_set_ddof(&ref, 0);
  clr_ref_check(&ref, &got, 3, &chk);
  TU_CHECK(chk.ok && ref.value.v.f == 1.25f,
           "clr_ref_set_ddof(0): 1.25 passes");

  /* Segments [0,4), [4,4), [4,7) of var with ddof 1; rt float. */
  uint64_t off[] = {0, 4, 4, 7};
  size_t rb = clr_result_bytes(&opt, CLR_VAR, CLR_FLOAT);
  TU_CHECK(rb == 16, "a float var record is 16 bytes (got %zu)", rb);
  char *res = tu_xmalloc(3 * rb);
  /* [10,20,60]: mean 30, M2 = 400 + 100 + 900 = 1400, ddof 1: 700 */
  long double m3 = 30.0L, v3 = 700.0L;
  put_record(CLR_FLOAT, res, 0, 5.0L / 3, 2.5, 4);
  put_record(CLR_FLOAT, res, 1, NAN, NAN, 0);
  put_record(CLR_FLOAT, res, 2, v3, m3, 3);
  clr_segments_check sc;
  TU_CHECK(clr_ref_segments_check_opt(&opt, CLR_VAR, CLR_FLOAT, f, off, 3, res,
                                      3, &sc) &&
               sc.ok && sc.n_bad == 0,
           "segments: three records (one empty) pass");
  put_record(CLR_FLOAT, res, 2, v3, m3, 4);
  TU_CHECK(clr_ref_segments_check_opt(&opt, CLR_VAR, CLR_FLOAT, f, off, 3, res,
                                      3, &sc) &&
               !sc.ok && sc.n_bad == 1 && sc.worst_index == 2,
           "segments: a wrong count fails at its segment");
  put_record(CLR_FLOAT, res, 2, v3, m3, 3);
  put_record(CLR_FLOAT, res, 1, 0, NAN, 0);
  TU_CHECK(clr_ref_segments_check_opt(&opt, CLR_VAR, CLR_FLOAT, f, off, 3, res,
                                      3, &sc) &&
               !sc.ok && sc.worst_index == 1,
           "segments: an empty segment's var 0 fails");
  put_record(CLR_FLOAT, res, 1, NAN, NAN, 0);
  put_record(CLR_FLOAT, res, 0, 1.25, 2.5, 4);
  TU_CHECK(clr_ref_segments_check_opt(&opt, CLR_VAR, CLR_FLOAT, f, off, 3, res,
                                      3, &sc) &&
               !sc.ok && sc.worst_index == 0,
           "segments: the ddof-0 variance fails with ddof 1");
  TU_CHECK(clr_ref_segments_check(CLR_MAP_NONE, CLR_VAR, CLR_FLOAT, CLR_FLOAT,
                                  f, off, 1, res, 3, &sc) &&
               sc.ok,
           "segments without options: ddof 0");
  free(res);

  /* A 3 x 4 double matrix, std with ddof 1, both axes: records made from
   * the reference over the strided columns and the rows. */
  double a[12];
  for (int i = 0; i < 12; i++)
    a[i] = (double)((i * 7) % 5) + 0.25 * i;
  res = tu_xmalloc(4 * clr_result_bytes(&opt, CLR_STD, CLR_DOUBLE));
  for (int axis = 0; axis <= 1; axis++) {
    size_t count = axis == 0 ? 4 : 3, len = axis == 0 ? 3 : 4;
    for (size_t k = 0; k < count; k++) {
      clr_ref_moments m;
      if (axis == 0)
        clr_ref_moments_of(CLR_DOUBLE, a, k, 3, 4, &m);
      else
        clr_ref_moments_of(CLR_DOUBLE, a, 4 * k, 4, 1, &m);
      clr_value v = clr_ref_moments_value(CLR_STD, CLR_DOUBLE, 1, &m);
      put_record(CLR_DOUBLE, res, k, v.v.d, v.max.d, len);
    }
    TU_CHECK(clr_ref_matrix_check_opt(&opt, CLR_STD, CLR_DOUBLE, a, 3, 4, 4,
                                      axis, res, 2, &sc) &&
                 sc.ok,
             "matrix axis %d: std ddof 1 records pass", axis);
    put_record(CLR_DOUBLE, res, 1, 1.0, 1.0, len);
    TU_CHECK(clr_ref_matrix_check_opt(&opt, CLR_STD, CLR_DOUBLE, a, 3, 4, 4,
                                      axis, res, 2, &sc) &&
                 !sc.ok && sc.worst_index == 1,
             "matrix axis %d: a wrong record fails at its index", axis);
  }
  free(res);
}

int main(void) {
  reference_cases();
  bound_cases();
  exact_cases();
  hook_cases();
  return tu_finish("test_moments_ref");
}
