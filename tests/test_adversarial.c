/* Adversarial data, each case on every reduction kernel (and the coarse
 * kernel with 16-wide strided vectors), checked against the CPU
 * reference and against the answer written here:
 *   floats: NaN anywhere, +inf / -inf, all infinite, signed zeros (by
 *   signbit), magnitudes near the top of the range (+-2^100 / +-1e30
 *   floats, +-2^996 / +-1e300 doubles) whose partials must not overflow,
 *   all-equal data;
 *   integers: INT_MIN / INT_MAX, 0 / UINT64_MAX, wrapping sums and
 *   products, 1e6 x INT32_MAX summed in 64 bits, logical (not bitwise)
 *   and / or, values that are non-zero only in their high 32 bits;
 *   underflow: float / double products that underflow to 0 or into the
 *   denormals (also after large factors), sums of denormals, reduced and
 *   scanned, checked with the bounds' absolute (underflow) term. */
#include "scan_reference.h"
#include "test_util.h"

#include <float.h>

static clr_context *ctx;

/* Run op over data with every kernel, and the coarse kernel also with
 * 16-wide vectors (strided: the lanes hold interleaved elements); compare
 * with the reference and, when want is given, with want bit for bit. */
static void adv(const char *label, clr_op op, clr_type t, const void *data,
                size_t n, const clr_value *want, int exact_ref) {
  size_t failed_before = tu_failed;
  for (size_t ki = 0; ki < TU_N_REDUCE_KERNELS; ki++) {
    int coarse = tu_reduce_kernels[ki] == CLR_REDUCE_COARSE;
    for (int shape = 0; shape < (coarse ? 2 : 1); shape++) {
      tu_case c;
      memset(&c, 0, sizeof c);
      clr_options_init(&c.opt);
      c.opt.kernel = tu_reduce_kernels[ki];
      if (shape) {
        c.opt.vector_width = 16;
        c.opt.layout = CLR_LAYOUT_STRIDED;
      }
      c.op = op;
      c.type = t;
      c.data = data;
      c.n = n;
      c.label = label;
      c.exact = want;
      c.exact_ref = exact_ref;
      tu_run_host(ctx, &c);
    }
  }
  char wb[64] = "(reference)";
  if (want)
    clr_value_format(want, wb, sizeof wb);
  printf("%-44s %-4s %-6s n=%-8zu want %-24s %s\n", label, clr_op_name(op),
         clr_type_name(t), n, wb, tu_failed > failed_before ? "FAILED" : "ok");
  fflush(stdout);
}

static void *buf;

static void fill_random_fp(clr_type t, size_t n, double scale, uint64_t seed) {
  tu_rng r = {seed};
  for (size_t i = 0; i < n; i++)
    tu_store_f(t, buf, i, (2.0 * tu_unit(&r) - 1.0) * scale);
}

static void test_nan_inf(clr_type t) {
  static const size_t sizes[] = {1, 2, 7, 1000, 65537};
  clr_value nan_v = tu_fp_value(t, NAN);
  clr_value pinf = tu_fp_value(t, INFINITY), ninf = tu_fp_value(t, -INFINITY);
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
    size_t n = sizes[si];
    size_t where[3] = {0, n / 2, n - 1};
    for (int w = 0; w < 3; w++) {
      if (w && where[w] == where[w - 1])
        continue;
      char label[64];
      snprintf(label, sizeof label, "NaN at %zu", where[w]);
      clr_op ops[4] = {CLR_SUM, CLR_PROD, CLR_MIN, CLR_MAX};
      for (int oi = 0; oi < 4; oi++) {
        if (ops[oi] == CLR_PROD)
          for (size_t i = 0; i < n; i++)
            tu_store_f(t, buf, i, 1.0 + (double)(i % 3) / 1024.0);
        else
          fill_random_fp(t, n, 100.0, n * 3 + (size_t)w);
        tu_store_f(t, buf, where[w], NAN);
        adv(label, ops[oi], t, buf, n, &nan_v, 1);
      }
    }
    if (n < 2)
      continue;
    /* +inf and -inf: sum NaN, max +inf, min -inf, prod -inf. */
    fill_random_fp(t, n, 100.0, n);
    tu_store_f(t, buf, n - 1, INFINITY);
    tu_store_f(t, buf, n / 3, -INFINITY);
    adv("+inf and -inf", CLR_SUM, t, buf, n, &nan_v, 1);
    adv("+inf and -inf", CLR_MAX, t, buf, n, &pinf, 1);
    adv("+inf and -inf", CLR_MIN, t, buf, n, &ninf, 1);
    for (size_t i = 0; i < n; i++)
      tu_store_f(t, buf, i, (i % 2) ? 1.0 : -1.0);
    tu_store_f(t, buf, n - 1, INFINITY);
    tu_store_f(t, buf, n / 3, -INFINITY);
    adv("+inf and -inf among +-1 (an infinite product)", CLR_PROD, t, buf, n,
        NULL, 1);
    /* Only +inf: sum +inf, max +inf, min finite. */
    fill_random_fp(t, n, 100.0, n + 1);
    tu_store_f(t, buf, n / 2, INFINITY);
    adv("one +inf", CLR_SUM, t, buf, n, &pinf, 1);
    adv("one +inf", CLR_MAX, t, buf, n, &pinf, 1);
    tu_store_f(t, buf, 0, -1000.0);
    clr_value m = tu_fp_value(t, -1000.0);
    adv("one +inf, min -1000 first", CLR_MIN, t, buf, n, &m, 1);
    /* All infinite. */
    for (size_t i = 0; i < n; i++)
      tu_store_f(t, buf, i, INFINITY);
    adv("all +inf", CLR_MIN, t, buf, n, &pinf, 1);
    adv("all +inf", CLR_SUM, t, buf, n, &pinf, 1);
    for (size_t i = 0; i < n; i++)
      tu_store_f(t, buf, i, -INFINITY);
    adv("all -inf", CLR_MAX, t, buf, n, &ninf, 1);
    adv("all -inf", CLR_SUM, t, buf, n, &ninf, 1);
  }
}

static void test_signed_zeros(clr_type t) {
  static const size_t sizes[] = {2, 3, 64, 1001, 65537};
  clr_value pz = tu_fp_value(t, 0.0), nz = tu_fp_value(t, -0.0);
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
    size_t n = sizes[si];
    /* Mostly +0 with one -0 (at the end, then in the middle), and mostly
     * -0 with one +0: min is -0, max is +0 whatever the order. */
    for (int pos = 0; pos < 2; pos++) {
      size_t at = pos ? n / 2 : n - 1;
      for (size_t i = 0; i < n; i++)
        tu_store_f(t, buf, i, 0.0);
      tu_store_f(t, buf, at, -0.0);
      adv("+0 with one -0", CLR_MIN, t, buf, n, &nz, 1);
      adv("+0 with one -0", CLR_MAX, t, buf, n, &pz, 1);
      for (size_t i = 0; i < n; i++)
        tu_store_f(t, buf, i, -0.0);
      tu_store_f(t, buf, at, 0.0);
      adv("-0 with one +0", CLR_MIN, t, buf, n, &nz, 1);
      adv("-0 with one +0", CLR_MAX, t, buf, n, &pz, 1);
    }
    for (size_t i = 0; i < n; i++)
      tu_store_f(t, buf, i, -0.0);
    adv("all -0", CLR_MAX, t, buf, n, &nz, 1);
    adv("all -0", CLR_MIN, t, buf, n, &nz, 1);
    for (size_t i = 0; i < n; i++)
      tu_store_f(t, buf, i, 0.0);
    adv("all +0", CLR_MIN, t, buf, n, &pz, 1);
  }
}

static void test_magnitudes(clr_type t) {
  int fl = t == CLR_FLOAT;
  double big = fl ? ldexp(1.0, 100) : ldexp(1.0, 996);
  double dec = fl ? 1e30 : 1e300;
  size_t n = 65537;
  /* Random signs of 2^100 (2^996): exact in any order, no overflow. */
  tu_rng r = {42};
  int64_t k = 0;
  for (size_t i = 0; i < n; i++) {
    int s = (tu_next(&r) & 1) ? 1 : -1;
    k += s;
    tu_store_f(t, buf, i, s * big);
  }
  clr_value want = tu_fp_value(t, (double)k * big);
  adv(fl ? "random signs of 2^100" : "random signs of 2^996", CLR_SUM, t, buf,
      n, &want, 1);
  /* All +2^100: n * 2^100 = 2^116.00002 in float range, exact. */
  for (size_t i = 0; i < n; i++)
    tu_store_f(t, buf, i, big);
  want = tu_fp_value(t, (double)n * big);
  adv(fl ? "all 2^100 (partials up to 2^116)" : "all 2^996", CLR_SUM, t, buf, n,
      &want, 1);
  /* Alternating +-1e30 (1e300): the reference bound, and finite. */
  for (size_t i = 0; i < n; i++)
    tu_store_f(t, buf, i, (i % 2 ? -1.0 : 1.0) * dec * (1.0 + (double)(i % 5)));
  adv(fl ? "alternating +-1e30..5e30" : "alternating +-1e300..5e300", CLR_SUM,
      t, buf, n, NULL, 0);
  /* Random in (-1e30, 1e30). */
  fill_random_fp(t, n, dec, 7);
  adv(fl ? "random in +-1e30" : "random in +-1e300", CLR_SUM, t, buf, n, NULL,
      0);
  /* Extremes of the range for min / max. */
  double maxv = fl ? FLT_MAX : DBL_MAX;
  fill_random_fp(t, n, dec, 8);
  tu_store_f(t, buf, n - 1, -maxv);
  tu_store_f(t, buf, 3, maxv);
  clr_value mn = tu_fp_value(t, -maxv), mx = tu_fp_value(t, maxv);
  adv("-MAX last, +MAX at 3", CLR_MIN, t, buf, n, &mn, 1);
  adv("-MAX last, +MAX at 3", CLR_MAX, t, buf, n, &mx, 1);
  /* Products of large and small powers of two that cancel: 2^60 and
   * 2^-60 (2^500 / 2^-500) alternating, 2 or 4 of them: every partial
   * product in any order stays in range, so the product is exactly 1. */
  for (size_t m = 2; m <= 4; m += 2) {
    double e = fl ? 60.0 : 500.0;
    for (size_t i = 0; i < m; i++)
      tu_store_f(t, buf, i, ldexp(1.0, (i % 2) ? -(int)e : (int)e));
    want = tu_fp_value(t, 1.0);
    adv("2^e * 2^-e", CLR_PROD, t, buf, m, &want, 1);
  }
}

static void test_all_equal(void) {
  size_t n = 65537;
  for (size_t i = 0; i < n; i++)
    ((float *)buf)[i] = 0.1f;
  clr_value w = tu_fp_value(CLR_FLOAT, 0.1);
  adv("all 0.1f", CLR_SUM, CLR_FLOAT, buf, n, NULL, 0);
  adv("all 0.1f", CLR_MIN, CLR_FLOAT, buf, n, &w, 1);
  adv("all 0.1f", CLR_MAX, CLR_FLOAT, buf, n, &w, 1);
  for (size_t i = 0; i < n; i++)
    ((double *)buf)[i] = 0.1;
  adv("all 0.1", CLR_SUM, CLR_DOUBLE, buf, n, NULL, 0);
  for (size_t i = 0; i < n; i++)
    ((int32_t *)buf)[i] = 7;
  w = tu_int_value(CLR_LONG, 7 * (int64_t)n);
  adv("all 7", CLR_SUM, CLR_INT, buf, n, &w, 1);
  adv("all 7 (7^n wraps)", CLR_PROD, CLR_INT, buf, n, NULL, 1);
  w = tu_int_value(CLR_INT, 7);
  adv("all 7", CLR_MIN, CLR_INT, buf, n, &w, 1);
  adv("all 7", CLR_MAX, CLR_INT, buf, n, &w, 1);
  w = tu_int_value(CLR_INT, 1);
  adv("all 7", CLR_AND, CLR_INT, buf, n, &w, 1);
}

/* An op and the result it must give on the data at hand. */
typedef struct expect {
  clr_op op;
  clr_value want;
} expect;

/* adv with each expectation in turn over the same n elements of buf. */
static void adv_each(const char *label, clr_type t, size_t n, const expect *e,
                     size_t count) {
  for (size_t i = 0; i < count; i++)
    adv(label, e[i].op, t, buf, n, &e[i].want, 1);
}

#define N_EXPECT(e) (sizeof(e) / sizeof((e)[0]))

static void test_int_extremes(void) {
  size_t n = 1001; /* odd: 501 of the first value, 500 of the second */
  /* int: INT32_MIN, INT32_MAX alternating. */
  for (size_t i = 0; i < n; i++)
    ((int32_t *)buf)[i] = i % 2 ? INT32_MAX : INT32_MIN;
  const expect ints[] = {
      {CLR_SUM, tu_int_value(CLR_LONG, 501 * (int64_t)INT32_MIN +
                                           500 * (int64_t)INT32_MAX)},
      {CLR_MIN, tu_int_value(CLR_INT, INT32_MIN)},
      {CLR_MAX, tu_int_value(CLR_INT, INT32_MAX)},
      /* product: (-2^31)^501 * (2^31-1)^500 wraps to 0 in 64 bits. */
      {CLR_PROD, tu_int_value(CLR_LONG, 0)},
      {CLR_AND, tu_int_value(CLR_INT, 1)}};
  adv_each("INT_MIN, INT_MAX alternating", CLR_INT, n, ints, N_EXPECT(ints));
  /* uint: 0, UINT32_MAX. */
  for (size_t i = 0; i < n; i++)
    ((uint32_t *)buf)[i] = i % 2 ? UINT32_MAX : 0;
  const expect uints[] = {
      {CLR_SUM, tu_int_value(CLR_ULONG, (int64_t)(500 * (uint64_t)UINT32_MAX))},
      {CLR_MIN, tu_int_value(CLR_UINT, 0)},
      {CLR_MAX, tu_int_value(CLR_UINT, (int64_t)UINT32_MAX)},
      {CLR_AND, tu_int_value(CLR_INT, 0)},
      {CLR_OR, tu_int_value(CLR_INT, 1)}};
  adv_each("0, UINT_MAX alternating", CLR_UINT, n, uints, N_EXPECT(uints));
  /* long: INT64_MIN, INT64_MAX: the sum wraps. */
  for (size_t i = 0; i < n; i++)
    ((int64_t *)buf)[i] = i % 2 ? INT64_MAX : INT64_MIN;
  uint64_t s = 501 * (uint64_t)INT64_MIN + 500 * (uint64_t)INT64_MAX;
  const expect longs[] = {
      {CLR_SUM, tu_int_value(CLR_LONG, (int64_t)s)}, /* INT64_MIN - 500 */
      {CLR_MIN, tu_int_value(CLR_LONG, INT64_MIN)},
      {CLR_MAX, tu_int_value(CLR_LONG, INT64_MAX)}};
  adv_each("INT64_MIN, INT64_MAX alternating", CLR_LONG, n, longs,
           N_EXPECT(longs));
  /* ulong: 0, UINT64_MAX: sum = 500 * (2^64 - 1) mod 2^64 = 2^64 - 500. */
  for (size_t i = 0; i < n; i++)
    ((uint64_t *)buf)[i] = i % 2 ? UINT64_MAX : 0;
  const expect ulongs[] = {{CLR_SUM, tu_int_value(CLR_ULONG, -500)},
                           {CLR_MIN, tu_int_value(CLR_ULONG, 0)},
                           {CLR_PROD, tu_int_value(CLR_ULONG, 0)},
                           {CLR_MAX, tu_int_value(CLR_ULONG, -1)}};
  adv_each("0, UINT64_MAX alternating", CLR_ULONG, n, ulongs, N_EXPECT(ulongs));
  clr_value w = tu_int_value(CLR_ULONG, -1);
  /* UINT64_MAX^1001 = (-1)^1001 = UINT64_MAX. */
  for (size_t i = 0; i < n; i++)
    ((uint64_t *)buf)[i] = UINT64_MAX;
  adv("all UINT64_MAX (product (-1)^1001)", CLR_PROD, CLR_ULONG, buf, n, &w, 1);
  /* 2^40 from 40 twos in int, accumulated in 64 bits; 64 twos wrap to 0. */
  for (size_t i = 0; i < 64; i++)
    ((int32_t *)buf)[i] = 2;
  w = tu_int_value(CLR_LONG, (int64_t)1 << 40);
  adv("40 twos", CLR_PROD, CLR_INT, buf, 40, &w, 1);
  w = tu_int_value(CLR_LONG, 0);
  adv("64 twos (wraps to 0)", CLR_PROD, CLR_INT, buf, 64, &w, 1);
  for (size_t i = 0; i < n; i++)
    ((int64_t *)buf)[i] = -1;
  w = tu_int_value(CLR_LONG, -1);
  adv("all -1 (product of 1001)", CLR_PROD, CLR_LONG, buf, n, &w, 1);
}

/* Sums of 32-bit extremes that need the 64-bit accumulator. */
static void test_int_accumulation(void) {
  size_t n = 1000000;
  for (size_t i = 0; i < n; i++)
    ((int32_t *)buf)[i] = INT32_MAX;
  clr_value w = tu_int_value(CLR_LONG, INT64_C(2147483647000000));
  adv("1e6 x INT32_MAX", CLR_SUM, CLR_INT, buf, n, &w, 1);
  for (size_t i = 0; i < n; i++)
    ((int32_t *)buf)[i] = INT32_MIN;
  w = tu_int_value(CLR_LONG, INT64_C(-2147483648000000));
  adv("1e6 x INT32_MIN", CLR_SUM, CLR_INT, buf, n, &w, 1);
  for (size_t i = 0; i < n; i++)
    ((uint32_t *)buf)[i] = UINT32_MAX;
  w = tu_int_value(CLR_ULONG, INT64_C(4294967295000000));
  adv("1e6 x UINT32_MAX", CLR_SUM, CLR_UINT, buf, n, &w, 1);
}

/* and / or are logical, over the whole value. */
static void test_logical(void) {
  size_t n = 4097;
  clr_value one = tu_int_value(CLR_INT, 1), zero = tu_int_value(CLR_INT, 0);
  for (size_t i = 0; i < n; i++)
    ((int32_t *)buf)[i] = (i % 2) ? 1 : 2; /* bitwise and would be 0 */
  adv("1, 2 alternating (logical, not bitwise)", CLR_AND, CLR_INT, buf, n, &one,
      1);
  for (size_t i = 0; i < n; i++)
    ((int32_t *)buf)[i] = -(int32_t)(i % 5) - 1;
  adv("negative values", CLR_AND, CLR_INT, buf, n, &one, 1);
  for (size_t i = 0; i < n; i++)
    ((int64_t *)buf)[i] = INT64_C(1) << (32 + i % 31);
  adv("long non-zero only above bit 31", CLR_AND, CLR_LONG, buf, n, &one, 1);
  adv("long non-zero only above bit 31", CLR_OR, CLR_LONG, buf, n, &one, 1);
  for (size_t i = 0; i < n; i++)
    ((uint64_t *)buf)[i] = UINT64_C(1) << 63;
  adv("ulong 2^63 only", CLR_AND, CLR_ULONG, buf, n, &one, 1);
  for (size_t i = 0; i < n; i++)
    ((uint64_t *)buf)[i] = 0;
  adv("all zero", CLR_OR, CLR_ULONG, buf, n, &zero, 1);
  adv("all zero", CLR_AND, CLR_ULONG, buf, n, &zero, 1);
  ((uint64_t *)buf)[n - 1] = UINT64_C(1) << 32;
  adv("zero but 2^32 last", CLR_OR, CLR_ULONG, buf, n, &one, 1);
  for (size_t i = 0; i < n; i++)
    ((uint32_t *)buf)[i] = 0x80000000u;
  adv("uint 2^31 only", CLR_AND, CLR_UINT, buf, n, &one, 1);
  ((uint32_t *)buf)[0] = 0;
  adv("uint 2^31, zero first", CLR_AND, CLR_UINT, buf, n, &zero, 1);
}

/* ------------------------------------------------------------ underflow */

/* Whether the device flushes denormals of t (then the bounds use the
 * smallest normal as the absolute error of an operation). */
static int device_flushes(clr_type t) {
  cl_device_id dev = NULL;
  if (clGetCommandQueueInfo(clr_context_queue(ctx), CL_QUEUE_DEVICE, sizeof dev,
                            &dev, NULL) != CL_SUCCESS)
    tu_die("clGetCommandQueueInfo(CL_QUEUE_DEVICE) failed");
  return clr_ref_device_flushes(dev, t);
}

/* Whether the call on kernel k gave CLR_OK (a check); then its timing in
 * tm.  kind: "" for reductions, " scan" for scans (in the message). */
static int ran_ok(clr_status s, const char *label, const char *kind,
                  clr_kernel k, clr_timing *tm) {
  if (!TU_CHECK(s == CLR_OK, "%s%s %s: %s (%s)", label, kind,
                clr_kernel_name(k), clr_status_name(s), clr_context_error(ctx)))
    return 0;
  memset(tm, 0, sizeof *tm);
  clr_last_timing(ctx, tm);
  return 1;
}

/* A float/double sum or product whose partials underflow, on every
 * reduction kernel: the device's answer must pass the reference check
 * (with its absolute underflow term), and so must `want` when given (an
 * answer IEEE arithmetic gives in some order), while `wrong` must not. */
static void underflow_case(const char *label, clr_op op, clr_type t,
                           const void *data, size_t n, const double *want,
                           double wrong) {
  size_t failed_before = tu_failed;
  clr_reference ref;
  clr_ref_reduce(op, t, 0, data, n, &ref);
  ref.flush_to_zero = device_flushes(t);
  for (size_t ki = 0; ki < TU_N_REDUCE_KERNELS; ki++) {
    for (int shape = 0; shape < 2; shape++) {
      clr_options o;
      clr_options_init(&o);
      o.kernel = tu_reduce_kernels[ki];
      if (shape) {
        if (o.kernel != CLR_REDUCE_COARSE)
          continue;
        o.vector_width = 16;
        o.layout = CLR_LAYOUT_STRIDED;
      }
      clr_value got;
      clr_timing tm = CLR_TIMING_INIT;
      memset(&got, 0, sizeof got);
      clr_status s = clr_reduce_host(ctx, &o, op, t, data, n, &got);
      if (!tu_type_available(t)) {
        TU_CHECK(s == CLR_ERR_NO_FP64, "%s: no fp64: %s", label,
                 clr_status_name(s));
        continue;
      }
      if (!ran_ok(s, label, "", o.kernel, &tm))
        continue;
      clr_check chk;
      clr_ref_check(&ref, &got, tm.error_depth, &chk);
      char gb[64], wb[64];
      TU_CHECK(chk.ok && isfinite(chk.bound),
               "%s %s vw=%u: got %s, reference %s (error %g, bound %g)", label,
               clr_kernel_name(o.kernel), o.vector_width,
               tu_fmt(&got, gb, sizeof gb), tu_fmt(&ref.value, wb, sizeof wb),
               chk.error, chk.bound);
      /* The bound is an absolute term, not a licence: a clearly wrong
       * value still fails, and a value IEEE arithmetic can give passes. */
      clr_value v = tu_fp_value(t, wrong);
      clr_ref_check(&ref, &v, tm.error_depth, &chk);
      TU_CHECK(!chk.ok, "%s: the wrong answer %g passes (bound %g)", label,
               wrong, chk.bound);
      if (want) {
        v = tu_fp_value(t, *want);
        clr_ref_check(&ref, &v, tm.error_depth, &chk);
        TU_CHECK(chk.ok, "%s: the IEEE answer %g fails (error %g, bound %g)",
                 label, *want, chk.error, chk.bound);
      }
    }
  }
  printf("%-44s %-4s %-6s n=%-8zu %s\n", label, clr_op_name(op),
         clr_type_name(t), n, tu_failed > failed_before ? "FAILED" : "ok");
  fflush(stdout);
}

/* The same data scanned (inclusive) by every scan kernel, checked element
 * by element. */
static void underflow_scan(const char *label, clr_op op, clr_type t,
                           const void *data, size_t n) {
  static const clr_kernel scans[] = {CLR_SCAN_KOGGE_STONE,
                                     CLR_SCAN_KOGGE_STONE_DB,
                                     CLR_SCAN_BRENT_KUNG, CLR_SCAN_DECOUPLED};
  if (!tu_type_available(t))
    return;
  void *out = tu_xmalloc(n * clr_type_size(t));
  for (size_t ki = 0; ki < sizeof scans / sizeof scans[0]; ki++) {
    clr_options o;
    clr_options_init(&o);
    o.kernel = scans[ki];
    clr_timing tm = CLR_TIMING_INIT;
    clr_status s = clr_scan_host(ctx, &o, op, t, data, out, n);
    if (!ran_ok(s, label, " scan", o.kernel, &tm))
      continue;
    clr_scan_check chk;
    clr_ref_scan_check_flush(op, t, 0, data, out, n, tm.error_depth,
                             device_flushes(t), &chk);
    char gb[64], wb[64];
    TU_CHECK(chk.ok,
             "%s scan %s: %zu bad, element %zu got %s want %s "
             "(error %g, bound %g)",
             label, clr_kernel_name(o.kernel), chk.n_bad, chk.worst_index,
             tu_fmt(&chk.got_worst, gb, sizeof gb),
             tu_fmt(&chk.ref_worst, wb, sizeof wb), chk.worst_error,
             chk.worst_bound);
  }
  printf("%-44s %-4s %-6s n=%-8zu scans checked\n", label, clr_op_name(op),
         clr_type_name(t), n);
  free(out);
}

static void test_underflow(void) {
  float f[1000];
  double d[1000];
  const double zero = 0.0;
  /* Twenty 1e-5: the product (1e-100) underflows to 0 in float. */
  for (int i = 0; i < 20; i++)
    f[i] = 1e-5f;
  underflow_case("twenty 1e-5 floats (product 0)", CLR_PROD, CLR_FLOAT, f, 20,
                 &zero, 1e-30);
  underflow_scan("twenty 1e-5 floats", CLR_PROD, CLR_FLOAT, f, 20);
  /* A product that ends in the denormals: 2^-70 * 2^-70 * 3 * 0.5. */
  f[0] = 0x1p-70f, f[1] = 0x1p-70f, f[2] = 3.0f, f[3] = 0.5f;
  double den = 0x1p-140 * 1.5;
  underflow_case("float product into the denormals", CLR_PROD, CLR_FLOAT, f, 4,
                 &den, 0x1p-100);
  /* Underflow first, large factors after: 0 in some orders, 1e-20 in
   * others; both correct float arithmetic. */
  f[0] = 1e-25f, f[1] = 1e-25f, f[2] = 1e15f, f[3] = 1e15f;
  underflow_case("float 1e-25^2 * 1e15^2", CLR_PROD, CLR_FLOAT, f, 4, &zero,
                 1.0);
  underflow_scan("float 1e-25^2 * 1e15^2", CLR_PROD, CLR_FLOAT, f, 4);
  /* Doubles: twenty 1e-20 (1e-400: 0), and 1e-160 * 1e-160 (denormal). */
  for (int i = 0; i < 20; i++)
    d[i] = 1e-20;
  underflow_case("twenty 1e-20 doubles (product 0)", CLR_PROD, CLR_DOUBLE, d,
                 20, &zero, 1e-300);
  underflow_scan("twenty 1e-20 doubles", CLR_PROD, CLR_DOUBLE, d, 20);
  d[0] = 1e-160, d[1] = 1e-160, d[2] = -2.0;
  double dden = 1e-160 * 1e-160 * -2.0;
  underflow_case("double product into the denormals", CLR_PROD, CLR_DOUBLE, d,
                 3, &dden, -1e-300);
  /* Sums of denormals (and their cancellation): exact under gradual
   * underflow, at most one smallest normal per operation when flushed. */
  tu_rng r = {99};
  double fsum = 0, dsum = 0;
  for (int i = 0; i < 1000; i++) {
    int k = (int)tu_below(&r, 2001) - 1000;
    f[i] = (float)k * 0x1p-149f; /* denormal multiples of 2^-149 */
    d[i] = (double)k * 0x1p-1074;
    fsum += (double)f[i];
    dsum += (double)k;
  }
  dsum *= 0x1p-1074;
  underflow_case("1000 float denormals", CLR_SUM, CLR_FLOAT, f, 1000, &fsum,
                 1e-30);
  underflow_scan("1000 float denormals", CLR_SUM, CLR_FLOAT, f, 1000);
  underflow_case("1000 double denormals", CLR_SUM, CLR_DOUBLE, d, 1000, &dsum,
                 1e-300);
  underflow_scan("1000 double denormals", CLR_SUM, CLR_DOUBLE, d, 1000);
}

int main(int argc, char **argv) {
  tu_parse_args(argc, argv, NULL, 0);
  ctx = tu_context();
  buf = tu_xmalloc((size_t)1000000 * 8);
  for (int t = CLR_FLOAT; t <= CLR_DOUBLE; t++) {
    test_nan_inf((clr_type)t);
    test_signed_zeros((clr_type)t);
    test_magnitudes((clr_type)t);
  }
  test_all_equal();
  test_int_extremes();
  test_int_accumulation();
  test_logical();
  test_underflow();
  free(buf);
  clr_context_release(ctx);
  return tu_finish("test_adversarial");
}
