/* Variance and standard deviation (CLR_VAR, CLR_STD): every result against
 * the CPU reference of the same elements (src/check/moments_reference.h:
 * the moments in long double, the bound from the call's error depth).
 *
 *   --set=whole     clr_reduce_host and clr_reduce_buffer: both ops, ddof
 *                   0 and 1, every type (float data also accumulated in
 *                   double), sizes 1 to a prime near 1e6
 *   --set=hard      large means (float 1e4 + U(0,1), double 1e8 + U(0,1)),
 *                   all elements equal (variance exactly 0), one huge
 *                   outlier, NaN and +inf in the data; each case's error
 *                   is printed beside its bound
 *   --set=segments  clr_reduce_segments_host / _buffer over mixed lengths,
 *                   empty segments and segments of 1 included: records
 *                   decoded by clr_result_at and read raw (the count)
 *   --set=matrix    clr_run's CLR_REQ_MATRIX, axis 0 and 1, host arrays
 *                   and buffers, pitched; rows also as equal segments
 *   --set=stream    host arrays streamed in small chunks, and (with
 *                   POCL_MEMORY_LIMIT=1) one larger than one allocation
 *   --set=async     clr_reduce_buffer_async (gated by a user event: the
 *                   call must not wait), clr_enqueue and clr_run of
 *                   REDUCE into a buffer, clr_enqueue of SEGMENTS; ranges
 *                   (host, buffers, enqueued), reduce-by-key (host,
 *                   buffers, enqueued: past the run count, empty records)
 *                   and clr_enqueue of MATRIX requests
 *   --set=scratch   a caller's scratch of clr_request_scratch_size's size
 *                   for a reduction into a buffer and for ranges
 *   --set=maps      mapped values (abs, square, an expression of x and
 *                   i): flat, segments, rows and columns, both layouts
 *   --set=errors    what is refused: exact sums, other kernels,
 *                   accumulate_in and scans
 */
#include "clreduce.h"
#include "datagen.h"
#include "moments_reference.h"
#include "test_util.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const clr_type all_types[] = {CLR_FLOAT, CLR_DOUBLE, CLR_HALF, CLR_INT,
                                     CLR_UINT,  CLR_LONG,   CLR_ULONG};
#define N_TYPES (sizeof all_types / sizeof all_types[0])
static const clr_op moment_ops[] = {CLR_VAR, CLR_STD};

/* The result type the contract names: float for float and half data
 * (double when accumulated in double), double for the others. */
static clr_type want_result_type(clr_type t, const clr_options *opt) {
  if (t != CLR_FLOAT && t != CLR_HALF)
    return CLR_DOUBLE;
  return opt && opt->accumulate_in == CLR_DOUBLE ? CLR_DOUBLE : CLR_FLOAT;
}

static int rt_available(clr_type rt) {
  return rt != CLR_DOUBLE || tu_device.has_fp64;
}

static double as_d(clr_type rt, const clr_scalar *s) {
  return rt == CLR_FLOAT ? (double)s->f : s->d;
}

static size_t depth_of(clr_context *ctx) {
  clr_timing tm = CLR_TIMING_INIT;
  if (clr_last_timing(ctx, &tm) != CLR_OK)
    tu_die("clr_last_timing failed: %s", clr_context_error(ctx));
  return tm.error_depth;
}

/* One result (got, of op over count elements of data from first, stride
 * apart) against the reference; besides the reference's verdict the
 * contract's plain facts: the type and op, NaN where n <= ddof or for no
 * element, a variance never below 0.  log: print the error and bound. */
static int check_moments(const char *what, clr_op op, clr_type type,
                         clr_type rt, uint64_t ddof, size_t depth,
                         const void *data, size_t first, size_t count,
                         size_t stride, const clr_value *got, int log) {
  clr_ref_moments ref;
  clr_ref_moments_of(type, data, first, count, stride, &ref);
  double err = 0, bound = 0;
  int ok = clr_ref_moments_check(op, rt, ddof, depth, &ref, got, &err, &bound);
  double v = as_d(rt, &got->v), m = as_d(rt, &got->max);
  int plain = got->type == rt;
  if (count <= ddof || ref.has_nan || ref.has_inf)
    plain &= isnan(v) != 0;
  else
    plain &= v >= 0;
  if (count == 0 || ref.has_nan)
    plain &= isnan(m) != 0;
  if (log) {
    clr_value want = clr_ref_moments_value(op, rt, ddof, &ref);
    printf("  %s: %s %s n=%zu ddof=%llu: %.17g (mean %.17g), want %.17g "
           "(mean %.17g): error %g, bound %g, depth %zu\n",
           what, clr_op_name(op), clr_type_name(type), count,
           (unsigned long long)ddof, v, m, as_d(rt, &want.v),
           as_d(rt, &want.max), err, bound, depth);
  }
  return tu_check(ok && plain,
                  "%s: %s %s -> %s n=%zu ddof=%llu: got %.17g mean %.17g "
                  "(reference says %s, error %g, bound %g, depth %zu)",
                  what, clr_op_name(op), clr_type_name(type),
                  clr_type_name(got->type), count, (unsigned long long)ddof, v,
                  m, ok ? "ok" : "wrong", err, bound, depth);
}

/* Element i of data poisoned: NaN for floating types, the largest value
 * for integers, which a read of it would show in any variance. */
static void poison(clr_type t, void *data, size_t i) {
  if (tu_is_float(t))
    clr_store_fp(t, data, i, NAN);
  else
    clr_store_bits(t, data, i,
                   t == CLR_INT    ? 0x7fffffffu
                   : t == CLR_LONG ? 0x7fffffffffffffffull
                                   : UINT64_MAX);
}

/* A buffer of pre poisoned elements, then data's n, then post poisoned
 * ones. */
static cl_mem poisoned_input(clr_context *ctx, clr_type t, const void *data,
                             size_t n, size_t pre, size_t post) {
  size_t es = clr_type_size(t);
  unsigned char *h = tu_xmalloc((pre + n + post) * es);
  for (size_t i = 0; i < pre + n + post; i++)
    poison(t, h, i);
  memcpy(h + pre * es, data, n * es);
  cl_mem m = tu_new_buffer(ctx, (pre + n + post) * es, h);
  free(h);
  return m;
}

/* op over data (n elements) by clr_reduce_host and by clr_reduce_buffer
 * (at an offset of poisoned elements), both checked. */
static void run_whole(clr_context *ctx, const clr_options *opt, clr_op op,
                      clr_type t, const void *data, size_t n, const char *label,
                      int log) {
  clr_type rt = clr_options_result_type(opt, op, t);
  if (!tu_check(rt == want_result_type(t, opt),
                "%s: %s %s: result type %s, want %s", label, clr_op_name(op),
                clr_type_name(t), clr_type_name(rt),
                clr_type_name(want_result_type(t, opt))) ||
      !rt_available(rt))
    return;
  uint64_t ddof = opt ? opt->ddof : 0;
  char what[160];
  clr_value v;
  memset(&v, 0, sizeof v);
  clr_status s = clr_reduce_host(ctx, opt, op, t, data, n, &v);
  snprintf(what, sizeof what, "%s, host", label);
  if (tu_check(s == CLR_OK, "%s: %s %s n=%zu: %s: %s", what, clr_op_name(op),
               clr_type_name(t), n, clr_status_name(s), clr_context_error(ctx)))
    if (tu_check(v.op == op, "%s: the value's op is %s", what,
                 clr_op_name(v.op)))
      check_moments(what, op, t, rt, ddof, depth_of(ctx), data, 0, n, 1, &v,
                    log);
  const size_t pre = 3;
  cl_mem b = poisoned_input(ctx, t, data, n, pre, 2);
  memset(&v, 0, sizeof v);
  s = clr_reduce_buffer(ctx, opt, op, t, b, pre, n, &v);
  snprintf(what, sizeof what, "%s, buffer", label);
  if (tu_check(s == CLR_OK, "%s: %s %s n=%zu: %s: %s", what, clr_op_name(op),
               clr_type_name(t), n, clr_status_name(s), clr_context_error(ctx)))
    check_moments(what, op, t, rt, ddof, depth_of(ctx), data, 0, n, 1, &v, log);
  clReleaseMemObject(b);
}

/* Both ops with ddof 0 and 1 (base: the other options). */
static void run_all_ops(clr_context *ctx, const clr_options *base, clr_type t,
                        const void *data, size_t n, const char *label,
                        int log) {
  clr_options o = base ? *base : (clr_options)CLR_OPTIONS_INIT;
  for (size_t k = 0; k < 2; k++)
    for (uint64_t ddof = 0; ddof < 2; ddof++) {
      o.ddof = ddof;
      run_whole(ctx, &o, moment_ops[k], t, data, n, label, log);
    }
}

static void set_whole(clr_context *ctx) {
  static const size_t sizes[] = {1, 2, 3, 7, 1000, 65537, 999983};
  for (size_t ti = 0; ti < N_TYPES; ti++) {
    clr_type t = all_types[ti];
    size_t es = clr_type_size(t);
    /* clr_result_bytes: the record of value, mean (the result type) and a
     * uint64 count */
    size_t s = clr_type_size(want_result_type(t, NULL));
    for (size_t k = 0; k < 2; k++)
      tu_check(clr_result_bytes(NULL, moment_ops[k], t) == 2 * s + 8,
               "clr_result_bytes(%s, %s) = %zu, want %zu",
               clr_op_name(moment_ops[k]), clr_type_name(t),
               clr_result_bytes(NULL, moment_ops[k], t), 2 * s + 8);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
      size_t n = sizes[si];
      void *data = tu_xmalloc(n * es);
      /* sums' data (floating: [0, 1); int in [-1000, 1000]); the largest
       * size of the 64-bit integers over the whole type, whose squares
       * only a double holds */
      int wide = (t == CLR_LONG || t == CLR_ULONG) && n == 999983;
      clr_gen_data(wide ? CLR_MAX : CLR_SUM, t, tu_seed(ti, si, 1, 0), data, n,
                   NULL, 0);
      /* floating data of both signs at every other size: U(-1000, 1000) */
      int signs = tu_is_float(t) && si % 2 == 1;
      if (signs) {
        tu_rng r = {tu_seed(ti, si, 2, 0)};
        for (size_t i = 0; i < n; i++)
          clr_store_fp(t, data, i, 2000.0 * tu_unit(&r) - 1000.0);
      }
      char label[64];
      snprintf(label, sizeof label, "n=%zu%s", n,
               wide    ? " whole range"
               : signs ? " in (-1000, 1000)"
                       : "");
      run_all_ops(ctx, NULL, t, data, n, label, 0);
      if (t == CLR_FLOAT || t == CLR_HALF) {
        clr_options o = CLR_OPTIONS_INIT;
        o.accumulate_in = CLR_DOUBLE;
        snprintf(label, sizeof label, "n=%zu accumulated in double", n);
        run_all_ops(ctx, &o, t, data, n, label, 0);
      }
      free(data);
    }
  }
  /* one element: variance 0 (ddof 0) with the element as mean exactly;
   * NaN with ddof 1, as NumPy's var([x], ddof=1) */
  float one = 2.5f;
  clr_options o = CLR_OPTIONS_INIT;
  static const uint64_t ddofs[] = {0, 1, 2, UINT64_MAX};
  for (size_t d = 0; d < 4; d++) {
    uint64_t ddof = ddofs[d];
    o.ddof = ddof;
    clr_value v;
    clr_status s = clr_reduce_host(ctx, &o, CLR_VAR, CLR_FLOAT, &one, 1, &v);
    tu_check(s == CLR_OK && v.type == CLR_FLOAT &&
                 (ddof == 0 ? v.v.f == 0.0f : isnan(v.v.f)) && v.max.f == 2.5f,
             "var of one element, ddof %llu: %s, %g (mean %g)",
             (unsigned long long)ddof, clr_status_name(s), (double)v.v.f,
             (double)v.max.f);
  }
  /* n - ddof never wraps: ddof of n and above give NaN */
  double *d3 = tu_xmalloc(1000 * sizeof *d3);
  for (size_t i = 0; i < 1000; i++)
    d3[i] = (double)i;
  static const uint64_t big_ddofs[] = {999, 1000, 1001, UINT64_MAX};
  for (size_t d = 0; d < 4; d++) {
    o.ddof = big_ddofs[d];
    clr_value v;
    clr_status s = clr_reduce_host(ctx, &o, CLR_STD, CLR_DOUBLE, d3, 1000, &v);
    if (tu_check(s == CLR_OK, "std of 1000 with ddof %llu: %s: %s",
                 (unsigned long long)o.ddof, clr_status_name(s),
                 clr_context_error(ctx)))
      check_moments("a large ddof", CLR_STD, CLR_DOUBLE, CLR_DOUBLE, o.ddof,
                    depth_of(ctx), d3, 0, 1000, 1, &v, 0);
  }
  free(d3);
  tu_section("whole arrays: every type, ddof 0 and 1, host and buffer");
}

/* Fill n elements with base + U(0,1) (rounded to t). */
static void fill_offset(clr_type t, void *data, size_t n, double base,
                        uint64_t seed) {
  tu_rng r = {seed};
  for (size_t i = 0; i < n; i++)
    clr_store_fp(t, data, i, base + tu_unit(&r));
}

static void set_hard(clr_context *ctx) {
  const size_t n = 999983;
  void *data = tu_xmalloc(n * 8);
  printf("hard cases (error beside bound):\n");
  /* a large mean beside a small spread: the sum of squares less the
   * square of the sum would lose every digit here */
  fill_offset(CLR_FLOAT, data, n, 1e4, 11);
  run_all_ops(ctx, NULL, CLR_FLOAT, data, n, "float 1e4 + U(0,1)", 1);
  clr_options acc = CLR_OPTIONS_INIT;
  acc.accumulate_in = CLR_DOUBLE;
  run_all_ops(ctx, &acc, CLR_FLOAT, data, n,
              "float 1e4 + U(0,1) accumulated in double", 1);
  fill_offset(CLR_FLOAT, data, 65537, 1e4, 12);
  run_all_ops(ctx, NULL, CLR_FLOAT, data, 65537, "float 1e4 + U(0,1)", 1);
  fill_offset(CLR_DOUBLE, data, n, 1e8, 13);
  run_all_ops(ctx, NULL, CLR_DOUBLE, data, n, "double 1e8 + U(0,1)", 1);

  /* all equal: every update's delta is 0 and every merge's too, so the
   * variance is exactly 0 and the mean exactly the element */
  static const clr_type eq_types[] = {CLR_FLOAT, CLR_DOUBLE, CLR_HALF, CLR_INT,
                                      CLR_ULONG};
  for (size_t k = 0; k < sizeof eq_types / sizeof eq_types[0]; k++) {
    clr_type t = eq_types[k];
    for (size_t i = 0; i < 65537; i++)
      if (tu_is_float(t))
        clr_store_fp(t, data, i, 3.7);
      else
        tu_store_i(t, data, i, 1234567);
    clr_type rt = want_result_type(t, NULL);
    if (!rt_available(rt))
      continue;
    double want_mean = t == CLR_HALF     ? clr_half_to_float(*(uint16_t *)data)
                       : t == CLR_FLOAT  ? (double)3.7f
                       : t == CLR_DOUBLE ? 3.7
                                         : 1234567.0;
    for (size_t o = 0; o < 2; o++) {
      clr_value v;
      clr_status s =
          clr_reduce_host(ctx, NULL, moment_ops[o], t, data, 65537, &v);
      tu_check(s == CLR_OK && v.type == rt && as_d(rt, &v.v) == 0.0 &&
                   as_d(rt, &v.max) ==
                       (rt == CLR_FLOAT ? (double)(float)want_mean : want_mean),
               "%s of 65537 equal %s: %s, %.17g (mean %.17g), want exactly 0 "
               "(mean %.17g)",
               clr_op_name(moment_ops[o]), clr_type_name(t), clr_status_name(s),
               as_d(rt, &v.v), as_d(rt, &v.max), want_mean);
    }
  }

  /* one huge outlier among values near 1 */
  fill_offset(CLR_DOUBLE, data, n, 1.0, 14);
  ((double *)data)[n / 3] = 1e30;
  run_all_ops(ctx, NULL, CLR_DOUBLE, data, n, "double 1e30 among 1 + U(0,1)",
              1);
  fill_offset(CLR_FLOAT, data, n, 1.0, 15);
  ((float *)data)[n / 3] = 1e15f;
  run_all_ops(ctx, NULL, CLR_FLOAT, data, n, "float 1e15 among 1 + U(0,1)", 1);
  run_all_ops(ctx, &acc, CLR_FLOAT, data, n,
              "float 1e15 among 1 + U(0,1) accumulated in double", 1);

  /* NaN anywhere: variance and mean NaN; an infinity: variance NaN, the
   * mean NaN or that infinity */
  static const clr_type fp_types[] = {CLR_FLOAT, CLR_DOUBLE, CLR_HALF};
  static const size_t lens[] = {1000, 65537};
  for (size_t k = 0; k < 3; k++)
    for (size_t l = 0; l < 2; l++) {
      clr_type t = fp_types[k];
      size_t len = lens[l], at[3] = {0, len / 2, len - 1};
      for (size_t a = 0; a < 3; a++) {
        char label[64];
        clr_gen_data(CLR_SUM, t, tu_seed(k, a, 16, l), data, len, NULL, 0);
        clr_store_fp(t, data, at[a], NAN);
        snprintf(label, sizeof label, "NaN at %zu of %zu", at[a], len);
        run_all_ops(ctx, NULL, t, data, len, label, 0);
        clr_store_fp(t, data, at[a], INFINITY);
        snprintf(label, sizeof label, "+inf at %zu of %zu", at[a], len);
        run_all_ops(ctx, NULL, t, data, len, label, 0);
      }
    }
  free(data);
  tu_section("hard data: large means, equal elements, outliers, NaN, inf");
}

/* ------------------------------------------------------------ segments */

/* Every record of results (one a segment of offsets) decoded by
 * clr_result_at against the reference, and read raw: value and mean where
 * clr_result_at puts them, the count the segment's length. */
static void check_records(const char *what, clr_op op, clr_type t, clr_type rt,
                          uint64_t ddof, size_t depth, const void *data,
                          const uint64_t *first, size_t count_of_each,
                          size_t stride, size_t n_results,
                          size_t result_stride_elems, const void *results) {
  size_t s = clr_type_size(rt), bad_raw = 0, bad = 0;
  for (size_t k = 0; k < n_results; k++) {
    size_t f = first ? (size_t)first[k] : k * result_stride_elems;
    size_t count = first ? (size_t)(first[k + 1] - first[k]) : count_of_each;
    clr_value v = clr_result_at(op, rt, results, k);
    char w[160];
    snprintf(w, sizeof w, "%s, result %zu", what, k);
    if (!check_moments(w, op, t, rt, ddof, depth, data, f, count, stride, &v,
                       0) &&
        ++bad > 3)
      break; /* the first few name the failure */
    const unsigned char *rec = (const unsigned char *)results + k * (2 * s + 8);
    uint64_t cnt;
    memcpy(&cnt, rec + 2 * s, 8);
    bad_raw += cnt != count || memcmp(rec, &v.v, s) != 0 ||
               memcmp(rec + s, &v.max, s) != 0;
  }
  tu_check(bad_raw == 0,
           "%s: %zu records whose raw value, mean or count (the length) "
           "differ",
           what, bad_raw);
}

static void set_segments(clr_context *ctx) {
  /* mixed lengths: empty ones first, last and in a row, ones of 1 (NaN
   * with ddof 1), a long one beside short ones */
  static const size_t lengths[] = {0,    1, 2, 3, 0,  0,    7,  1, 100,
                                   4099, 5, 1, 0, 64, 1000, 33, 2, 0};
  const size_t segs = sizeof lengths / sizeof lengths[0];
  uint64_t off[sizeof lengths / sizeof lengths[0] + 1];
  off[0] = 0;
  for (size_t k = 0; k < segs; k++)
    off[k + 1] = off[k] + lengths[k];
  size_t n = (size_t)off[segs];
  static const clr_type types[] = {CLR_FLOAT, CLR_DOUBLE, CLR_HALF, CLR_INT,
                                   CLR_ULONG};
  for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
    clr_type t = types[ti];
    size_t es = clr_type_size(t);
    void *data = tu_xmalloc(n * es);
    clr_gen_data(CLR_SUM, t, tu_seed(ti, 21, 0, 0), data, n, NULL, 0);
    if (t == CLR_FLOAT) /* a large mean in one segment */
      for (size_t i = off[9]; i < off[10]; i++)
        ((float *)data)[i] += 1e4f;
    if (tu_is_float(t)) {
      /* a NaN in one segment, +inf in another, -inf last in a third:
       * those alone are NaN (their neighbours' results must not be) */
      clr_store_fp(t, data, off[6] + 3, NAN);
      clr_store_fp(t, data, off[13] + 10, INFINITY);
      clr_store_fp(t, data, off[15] - 1, -INFINITY);
    }
    for (size_t o = 0; o < 2; o++)
      for (uint64_t ddof = 0; ddof < 2; ddof++) {
        clr_options opt = CLR_OPTIONS_INIT;
        opt.ddof = ddof;
        clr_op op = moment_ops[o];
        clr_type rt = clr_options_result_type(&opt, op, t);
        if (!rt_available(rt))
          continue;
        size_t rb = clr_result_bytes(&opt, op, t);
        unsigned char *res = tu_xmalloc((segs + 2) * rb);
        char what[96];
        /* host arrays, a poisoned byte past the last record */
        memset(res, 0xa5, (segs + 1) * rb);
        clr_status s =
            clr_reduce_segments_host(ctx, &opt, op, t, data, n, off, segs, res);
        snprintf(what, sizeof what, "segments host %s ddof %llu",
                 clr_type_name(t), (unsigned long long)ddof);
        if (tu_check(s == CLR_OK, "%s %s: %s: %s", what, clr_op_name(op),
                     clr_status_name(s), clr_context_error(ctx))) {
          tu_check(res[segs * rb] == 0xa5, "%s %s: written past the records",
                   what, clr_op_name(op));
          check_records(what, op, t, rt, ddof, depth_of(ctx), data, off, 0, 1,
                        segs, 0, res);
        }
        /* buffers: data, offsets and results each from element 2 of
         * theirs, the results' buffer poisoned around them */
        cl_mem db = poisoned_input(ctx, t, data, n, 2, 1);
        uint64_t off2[sizeof off / sizeof off[0] + 2] = {77, 77};
        memcpy(off2 + 2, off, sizeof off);
        cl_mem ob = tu_new_buffer(ctx, sizeof off2, off2);
        memset(res, 0xa5, (segs + 2) * rb);
        cl_mem rbuf = tu_new_buffer(ctx, (segs + 2) * rb, res);
        s = clr_reduce_segments_buffer(ctx, &opt, op, t, db, 2, n, ob, 2, segs,
                                       rbuf, 1);
        snprintf(what, sizeof what, "segments buffer %s ddof %llu",
                 clr_type_name(t), (unsigned long long)ddof);
        if (tu_check(s == CLR_OK, "%s %s: %s: %s", what, clr_op_name(op),
                     clr_status_name(s), clr_context_error(ctx))) {
          size_t depth = depth_of(ctx);
          tu_read_buffer(ctx, rbuf, (segs + 2) * rb, res);
          int poison = 1;
          for (size_t i = 0; i < rb; i++)
            poison &= res[i] == 0xa5 && res[(segs + 1) * rb + i] == 0xa5;
          tu_check(poison, "%s %s: written outside the records", what,
                   clr_op_name(op));
          check_records(what, op, t, rt, ddof, depth, data, off, 0, 1, segs, 0,
                        res + rb);
        }
        clReleaseMemObject(db);
        clReleaseMemObject(ob);
        clReleaseMemObject(rbuf);
        free(res);
      }
    free(data);
  }
  tu_section("segments: mixed lengths, empty ones, host and buffers");
}

/* ------------------------------------------------------------ matrices */

/* One matrix (its padding poisoned) through clr_run, host arrays
 * (buffers 0) or buffers (1), or clr_enqueue of buffers (2), every result
 * checked; expect_chunks: it must have streamed; plant_nan: a NaN in the
 * middle of floating data. */
static void run_matrix(clr_context *ctx, const clr_options *opt, clr_op op,
                       clr_type t, size_t rows, size_t cols, size_t pitch,
                       int axis, int buffers, uint64_t seed, int expect_chunks,
                       int plant_nan) {
  clr_type rt = clr_options_result_type(opt, op, t);
  if (!rt_available(rt))
    return;
  size_t es = clr_type_size(t), p = pitch ? pitch : cols;
  size_t elems = (rows - 1) * p + cols, count = axis == 0 ? cols : rows;
  size_t rb = clr_result_bytes(opt, op, t);
  unsigned char *m = tu_xmalloc(rows * p * es);
  for (size_t i = 0; i < rows * p; i++)
    poison(t, m, i);
  unsigned char *packed = tu_xmalloc(rows * cols * es);
  clr_gen_data(CLR_SUM, t, seed, packed, rows * cols, NULL, 0);
  for (size_t r = 0; r < rows; r++)
    memcpy(m + r * p * es, packed + r * cols * es, cols * es);
  free(packed);
  /* one NaN: its row's (column's) result alone is NaN */
  if (plant_nan && tu_is_float(t))
    clr_store_fp(t, m, rows / 2 * p + cols / 2, NAN);
  unsigned char *res = tu_xmalloc((count + 2) * rb);
  memset(res, 0xa5, (count + 2) * rb);
  clr_request r = tu_matrix_request(op, t, rows, cols, pitch, axis);
  r.options = opt;
  cl_mem in = NULL, out = NULL;
  if (buffers) {
    in = poisoned_input(ctx, t, m, elems, 3, 0);
    out = tu_new_buffer(ctx, (count + 2) * rb, res);
    r.input.buffer = in;
    r.input.offset = 3;
    r.output.buffer = out;
    r.output.offset = 1;
  } else {
    r.input.host = m;
    r.output.host = res + rb;
  }
  cl_event done = NULL;
  clr_status s = buffers == 2 ? clr_enqueue(ctx, &r, 0, NULL, &done)
                              : clr_run(ctx, &r, NULL);
  char what[128];
  snprintf(what, sizeof what,
           "matrix %s %zux%zu pitch %zu axis %d %s ddof %llu",
           buffers == 2 ? "enqueued"
           : buffers    ? "buffers"
                        : "host",
           rows, cols, p, axis, clr_type_name(t),
           (unsigned long long)(opt ? opt->ddof : 0));
  if (tu_check(s == CLR_OK, "%s %s: %s: %s", what, clr_op_name(op),
               clr_status_name(s), clr_context_error(ctx))) {
    size_t depth = depth_of(ctx);
    if (done) {
      cl_int err = clWaitForEvents(1, &done);
      clReleaseEvent(done);
      tu_check(err == CL_SUCCESS, "%s: clWaitForEvents: %d", what, (int)err);
    }
    if (expect_chunks) {
      clr_timing tm = CLR_TIMING_INIT;
      clr_last_timing(ctx, &tm);
      tu_check(tm.chunks > 1, "%s: streamed in %zu chunks", what, tm.chunks);
    }
    if (buffers)
      tu_read_buffer(ctx, out, (count + 2) * rb, res);
    int poison = 1;
    for (size_t i = 0; i < rb; i++)
      poison &= res[i] == 0xa5 && res[(count + 1) * rb + i] == 0xa5;
    tu_check(poison, "%s %s: written outside the results", what,
             clr_op_name(op));
    /* a column from element c, rows elements pitch apart; a row from
     * element r * pitch, cols elements in a row */
    if (axis == 0)
      check_records(what, op, t, rt, opt ? opt->ddof : 0, depth, m, NULL, rows,
                    p, count, 1, res + rb);
    else
      check_records(what, op, t, rt, opt ? opt->ddof : 0, depth, m, NULL, cols,
                    1, count, p, res + rb);
  }
  if (in)
    clReleaseMemObject(in);
  if (out)
    clReleaseMemObject(out);
  free(res);
  free(m);
}

static void set_matrix(clr_context *ctx) {
  static const size_t shapes[][3] = {{1, 1000, 0}, {1000, 1, 0}, {101, 103, 0},
                                     {37, 13, 0},  {50, 30, 37}, {7, 4099, 0},
                                     {257, 6, 9},  {2, 2, 0}};
  static const clr_type types[] = {CLR_FLOAT, CLR_DOUBLE, CLR_INT, CLR_HALF};
  for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++)
    for (int axis = 0; axis < 2; axis++)
      for (int buffers = 0; buffers < 2; buffers++)
        for (size_t o = 0; o < 2; o++) {
          clr_options opt = CLR_OPTIONS_INIT;
          opt.ddof = (sh + (size_t)axis + o) % 2;
          clr_type t = types[(sh + (size_t)buffers + o) % 4];
          run_matrix(ctx, &opt, moment_ops[o], t, shapes[sh][0], shapes[sh][1],
                     shapes[sh][2], axis, buffers,
                     tu_seed(sh, (uint64_t)axis, (uint64_t)buffers, o), 0,
                     sh % 2 == 1);
        }
  /* rows of a contiguous matrix as equal segments, beside axis 1: both
   * against the reference, and the counts */
  const size_t R = 211, C = 97;
  float *m = tu_xmalloc(R * C * sizeof *m);
  fill_offset(CLR_FLOAT, m, R * C, 100.0, 31);
  uint64_t *off = tu_xmalloc((R + 1) * sizeof *off);
  for (size_t k = 0; k <= R; k++)
    off[k] = k * C;
  clr_options opt = CLR_OPTIONS_INIT;
  opt.ddof = 1;
  size_t rb = clr_result_bytes(&opt, CLR_STD, CLR_FLOAT);
  unsigned char *a = tu_xmalloc(R * rb), *b = tu_xmalloc(R * rb);
  clr_request r = tu_matrix_request(CLR_STD, CLR_FLOAT, R, C, 0, 1);
  r.options = &opt;
  r.input.host = m;
  r.output.host = a;
  clr_status s = clr_run(ctx, &r, NULL);
  if (tu_check(s == CLR_OK, "rows by axis 1: %s: %s", clr_status_name(s),
               clr_context_error(ctx)))
    check_records("rows by axis 1", CLR_STD, CLR_FLOAT, CLR_FLOAT, 1,
                  depth_of(ctx), m, NULL, C, 1, R, C, a);
  s = clr_reduce_segments_host(ctx, &opt, CLR_STD, CLR_FLOAT, m, R * C, off, R,
                               b);
  if (tu_check(s == CLR_OK, "rows by segments: %s: %s", clr_status_name(s),
               clr_context_error(ctx)))
    check_records("rows by segments", CLR_STD, CLR_FLOAT, CLR_FLOAT, 1,
                  depth_of(ctx), m, off, 0, 1, R, 0, b);
  free(a);
  free(b);
  free(off);
  free(m);
  tu_section("matrices: both axes, shapes, pitches, host and buffers");
}

/* ------------------------------------------------------------ streamed */

static void set_stream(void) {
  /* 4 KiB chunks: 1024 floats, 512 doubles */
  clr_context *ctx = tu_context_chunked(4096, 1);
  const size_t n = 100003;
  float *f = tu_xmalloc(n * sizeof *f);
  fill_offset(CLR_FLOAT, f, n, 1e4, 41);
  for (size_t o = 0; o < 2; o++)
    for (uint64_t ddof = 0; ddof < 2; ddof++) {
      clr_options opt = CLR_OPTIONS_INIT;
      opt.ddof = ddof;
      clr_value v;
      clr_status s =
          clr_reduce_host(ctx, &opt, moment_ops[o], CLR_FLOAT, f, n, &v);
      if (tu_check(s == CLR_OK, "streamed %s: %s: %s",
                   clr_op_name(moment_ops[o]), clr_status_name(s),
                   clr_context_error(ctx))) {
        tu_check_streamed(ctx, "streamed float 1e4 + U(0,1)");
        check_moments("4 KiB chunks", moment_ops[o], CLR_FLOAT, CLR_FLOAT, ddof,
                      depth_of(ctx), f, 0, n, 1, &v, 1);
      }
    }
  /* segments across the chunks' ends */
  const size_t segs = 37;
  uint64_t off[38];
  tu_rng rng = {42};
  for (size_t k = 0; k < segs; k++)
    off[k] = k * n / segs + (k ? tu_below(&rng, n / segs / 2) : 0);
  off[segs] = n;
  size_t rb = clr_result_bytes(NULL, CLR_VAR, CLR_FLOAT);
  unsigned char *res = tu_xmalloc(segs * rb);
  clr_status s = clr_reduce_segments_host(ctx, NULL, CLR_VAR, CLR_FLOAT, f, n,
                                          off, segs, res);
  if (tu_check(s == CLR_OK, "streamed segments: %s: %s", clr_status_name(s),
               clr_context_error(ctx))) {
    tu_check_streamed(ctx, "streamed segments");
    check_records("streamed segments", CLR_VAR, CLR_FLOAT, CLR_FLOAT, 0,
                  depth_of(ctx), f, off, 0, 1, segs, 0, res);
  }
  free(res);
  /* matrices in blocks of rows */
  run_matrix(ctx, NULL, CLR_VAR, CLR_FLOAT, 3000, 100, 0, 0, 0, 43, 1, 0);
  run_matrix(ctx, NULL, CLR_STD, CLR_FLOAT, 977, 13, 20, 1, 0, 44, 1, 1);
  run_matrix(ctx, NULL, CLR_VAR, CLR_DOUBLE, 500, 60, 0, 1, 0, 45, 1, 0);
  clr_context_release(ctx);
  free(f);

  /* Past one device allocation (PoCL with POCL_MEMORY_LIMIT=1: 256 MiB
   * allocations): the whole array in the library's own chunks.  A device
   * with more room would need an array too large for this test. */
  ctx = tu_context();
  size_t max_alloc = (size_t)tu_device.max_alloc_size;
  if (max_alloc > ((size_t)512 << 20)) {
    printf("stream: the device allocates %zu bytes at once: no array past "
           "one allocation (run with POCL_MEMORY_LIMIT=1)\n",
           max_alloc);
  } else {
    size_t big = max_alloc / sizeof(float) + 1000003;
    float *x = tu_xmalloc(big * sizeof *x);
    fill_offset(CLR_FLOAT, x, big, 1e4, 46);
    clr_options opt = CLR_OPTIONS_INIT;
    opt.ddof = 1;
    clr_value v;
    s = clr_reduce_host(ctx, &opt, CLR_STD, CLR_FLOAT, x, big, &v);
    if (tu_check(s == CLR_OK, "past one allocation: %s: %s", clr_status_name(s),
                 clr_context_error(ctx))) {
      tu_check_streamed(ctx, "past one allocation");
      check_moments("past one allocation", CLR_STD, CLR_FLOAT, CLR_FLOAT, 1,
                    depth_of(ctx), x, 0, big, 1, &v, 1);
    }
    free(x);
  }
  clr_context_release(ctx);
  tu_section("streamed: chunks, segments across them, matrices, past one "
             "allocation");
}

/* ------------------------------------------------ enqueued, ranges, keys */

/* Records of results against (offset, length) pairs of data (ranges: any
 * order, overlapping, empty), as check_records does for segments. */
static void check_pairs(const char *what, clr_op op, clr_type t, clr_type rt,
                        uint64_t ddof, size_t depth, const void *data,
                        const uint64_t *pairs, size_t n_results,
                        const void *results) {
  for (size_t k = 0; k < n_results; k++) {
    uint64_t one[2] = {pairs[2 * k], pairs[2 * k] + pairs[2 * k + 1]};
    char w[160];
    snprintf(w, sizeof w, "%s, range %zu", what, k);
    check_records(w, op, t, rt, ddof, depth, data, one, 0, 1, 1, 0,
                  (const unsigned char *)results +
                      k * (2 * clr_type_size(rt) + 8));
  }
}

/* 1 when the rb bytes before and after the n records of res (rb each)
 * are the 0xa5 they were filled with. */
static int untouched_around(const unsigned char *res, size_t n, size_t rb) {
  int ok = 1;
  for (size_t i = 0; i < rb; i++)
    ok &= res[i] == 0xa5 && res[(n + 1) * rb + i] == 0xa5;
  return ok;
}

/* An event's completion waited for (a test's own queue of work: fatal
 * on failure), then released. */
static void wait_release(cl_event ev, const char *what) {
  cl_int err = ev ? clWaitForEvents(1, &ev) : CL_INVALID_EVENT;
  if (err != CL_SUCCESS)
    tu_die("%s: clWaitForEvents: %d", what, (int)err);
  clReleaseEvent(ev);
}

/* The whole array into a result buffer: clr_reduce_buffer_async (its first
 * command gated by a user event, so the call must return without waiting
 * for its work), clr_enqueue of a REDUCE request and clr_run of one with
 * an output; the record at element 1 of a poisoned result buffer. */
static void run_async_whole(clr_context *ctx, clr_op op, clr_type t,
                            uint64_t ddof, const void *data, size_t n) {
  clr_options opt = CLR_OPTIONS_INIT;
  opt.ddof = ddof;
  clr_type rt = clr_options_result_type(&opt, op, t);
  if (!rt_available(rt))
    return;
  size_t rb = clr_result_bytes(&opt, op, t);
  unsigned char res[3 * 24];
  cl_mem in = poisoned_input(ctx, t, data, n, 2, 1);
  for (int form = 0; form < 3; form++) {
    static const char *forms[] = {"clr_reduce_buffer_async", "clr_enqueue",
                                  "clr_run into a buffer"};
    char what[128];
    snprintf(what, sizeof what, "%s %s n=%zu ddof %llu", forms[form],
             clr_type_name(t), n, (unsigned long long)ddof);
    memset(res, 0xa5, 3 * rb);
    cl_mem out = tu_new_buffer(ctx, 3 * rb, res);
    cl_event done = NULL, gate = NULL;
    clr_status s;
    if (form == 0) {
      cl_int err;
      gate = clCreateUserEvent(clr_context_cl_context(ctx), &err);
      if (err != CL_SUCCESS)
        tu_die("clCreateUserEvent: %d", (int)err);
      s = clr_reduce_buffer_async(ctx, &opt, op, t, in, 2, n, out, 1, 1, &gate,
                                  &done);
      if (s == CLR_OK && done) {
        cl_int state = CL_COMPLETE;
        clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state,
                       &state, NULL);
        tu_check(state != CL_COMPLETE,
                 "%s: the event completed before its wait list", what);
      }
      clSetUserEventStatus(gate, CL_COMPLETE);
    } else {
      clr_request r;
      clr_request_init(&r);
      r.op = op;
      r.type = t;
      r.n = n;
      r.options = &opt;
      r.input.buffer = in;
      r.input.offset = 2;
      r.output.buffer = out;
      r.output.offset = 1;
      s = form == 1 ? clr_enqueue(ctx, &r, 0, NULL, &done)
                    : clr_run(ctx, &r, NULL);
    }
    if (tu_check(s == CLR_OK, "%s %s: %s: %s", what, clr_op_name(op),
                 clr_status_name(s), clr_context_error(ctx))) {
      if (form < 2)
        wait_release(done, what);
      tu_read_buffer(ctx, out, 3 * rb, res);
      tu_check(untouched_around(res, 1, rb), "%s %s: written outside element 1",
               what, clr_op_name(op));
      check_records(what, op, t, rt, ddof, depth_of(ctx), data, NULL, n, 1, 1,
                    0, res + rb);
    }
    if (gate)
      clReleaseEvent(gate);
    clReleaseMemObject(out);
  }
  clReleaseMemObject(in);
}

/* Every element's key: runs of the lengths below, keys repeating
 * (non-adjacent equal keys are separate runs). */
static size_t make_keys(int32_t *keys, uint64_t *runs_at, size_t *n_runs) {
  static const size_t lens[] = {1, 2, 500, 1, 3, 4099, 7, 1, 64, 2};
  size_t n = 0, r = 0;
  for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
    runs_at[r++] = n;
    for (size_t i = 0; i < lens[k]; i++)
      keys[n++] = (int32_t)(k % 3) - 1;
  }
  runs_at[r] = n;
  *n_runs = r;
  return n;
}

static void set_async(clr_context *ctx) {
  /* (half: the whole array only, each type's kernels cost seconds to
   * build on PoCL) */
  static const clr_type types[] = {CLR_FLOAT, CLR_DOUBLE, CLR_INT, CLR_HALF};
  enum { N = 4680 }; /* the keys' runs' total, the segments' */
  const size_t nt = sizeof types / sizeof types[0];
  for (size_t ti = 0; ti < nt; ti++) {
    clr_type t = types[ti];
    size_t es = clr_type_size(t);
    void *data = tu_xmalloc(70001 * es);
    clr_gen_data(CLR_SUM, t, tu_seed(ti, 51, 0, 0), data, 70001, NULL, 0);
    if (t == CLR_FLOAT)
      for (size_t i = 0; i < 70001; i++)
        ((float *)data)[i] += 1e4f;
    for (size_t o = 0; o < 2; o++)
      for (uint64_t ddof = 0; ddof < 2; ddof++) {
        run_async_whole(ctx, moment_ops[o], t, ddof, data, 70001);
        if (o == 0 && ti < 2)
          run_async_whole(ctx, moment_ops[o], t, ddof, data, 1);
      }
    if (t == CLR_HALF) {
      free(data);
      continue;
    }
    if (tu_is_float(t)) { /* NaN, +inf, -inf in separate places */
      clr_store_fp(t, data, 10, NAN);
      clr_store_fp(t, data, 600, INFINITY);
      clr_store_fp(t, data, 4000, -INFINITY);
    }

    /* segments enqueued: mixed lengths and empty ones, a status */
    static const uint64_t seg_len[] = {0, 1, 2, 20, 0, 700, 1, 3951, 5, 0};
    const size_t segs = sizeof seg_len / sizeof seg_len[0];
    uint64_t off[sizeof seg_len / sizeof seg_len[0] + 1] = {0};
    for (size_t k = 0; k < segs; k++)
      off[k + 1] = off[k] + seg_len[k];
    /* ranges: a long one, overlapping ones, empty ones (one at n), short
     * ones that are gathered, unsorted */
    const uint64_t rng[] = {0, N, 100, 50, 120, 900,  4000, 0, N,   0,   30,
                            1, 7, 3,   2,  2,   4400, 280,  9, 100, 600, 1};
    const size_t nr = sizeof rng / sizeof rng[0] / 2;
    int32_t keys[N];
    uint64_t runs_at[16];
    size_t n_runs = 0;
    make_keys(keys, runs_at, &n_runs);
    for (size_t o = 0; o < 2; o++) {
      clr_op op = moment_ops[o];
      clr_options opt = CLR_OPTIONS_INIT;
      opt.ddof = o; /* var with ddof 0, std with 1 */
      clr_type rt = clr_options_result_type(&opt, op, t);
      if (!rt_available(rt))
        continue;
      size_t rb = clr_result_bytes(&opt, op, t);
      unsigned char *res = tu_xmalloc((N + 2) * rb);
      char what[128];
      cl_mem in = poisoned_input(ctx, t, data, N, 2, 1);
      cl_mem ob = tu_new_buffer(ctx, sizeof off, off);
      cl_mem rg = tu_new_buffer(ctx, sizeof rng, rng);
      uint64_t status = 77;
      cl_mem sb = tu_new_buffer(ctx, sizeof status, &status);
      memset(res, 0xa5, (N + 2) * rb);
      cl_mem out = tu_new_buffer(ctx, (N + 2) * rb, res);
      clr_request r;
      clr_request_init(&r);
      r.kind = CLR_REQ_SEGMENTS;
      r.op = op;
      r.type = t;
      r.n = N;
      r.options = &opt;
      r.input.buffer = in;
      r.input.offset = 2;
      r.segments.buffer = ob;
      r.n_segments = segs;
      r.output.buffer = out;
      r.output.offset = 1;
      r.status.buffer = sb;
      cl_event done = NULL;
      snprintf(what, sizeof what, "clr_enqueue segments %s", clr_type_name(t));
      clr_status s = clr_enqueue(ctx, &r, 0, NULL, &done);
      if (tu_check(s == CLR_OK, "%s %s: %s: %s", what, clr_op_name(op),
                   clr_status_name(s), clr_context_error(ctx))) {
        size_t depth = depth_of(ctx);
        wait_release(done, what);
        tu_read_buffer(ctx, out, (segs + 2) * rb, res);
        tu_read_buffer(ctx, sb, sizeof status, &status);
        tu_check(status == 0, "%s: status %llu", what,
                 (unsigned long long)status);
        tu_check(untouched_around(res, segs, rb), "%s %s: written outside",
                 what, clr_op_name(op));
        check_records(what, op, t, rt, opt.ddof, depth, data, off, 0, 1, segs,
                      0, res + rb);
      }

      /* ranges: host, buffers, enqueued */
      for (int form = 0; form < 3; form++) {
        static const char *forms[] = {"host", "buffer", "clr_enqueue"};
        snprintf(what, sizeof what, "ranges %s %s", forms[form],
                 clr_type_name(t));
        memset(res, 0xa5, (nr + 2) * rb);
        done = NULL;
        if (form == 0) {
          s = clr_reduce_ranges_host(ctx, &opt, op, t, data, N, rng, nr,
                                     res + rb);
        } else {
          clEnqueueWriteBuffer(clr_context_queue(ctx), out, CL_TRUE, 0,
                               (nr + 2) * rb, res, 0, NULL, NULL);
          r.kind = CLR_REQ_RANGES;
          r.segments.buffer = rg;
          r.segments.offset = 0;
          r.n_segments = nr;
          r.status.buffer = form == 2 ? sb : NULL;
          s = form == 1 ? clr_run(ctx, &r, NULL)
                        : clr_enqueue(ctx, &r, 0, NULL, &done);
        }
        if (!tu_check(s == CLR_OK, "%s %s: %s: %s", what, clr_op_name(op),
                      clr_status_name(s), clr_context_error(ctx)))
          continue;
        size_t depth = depth_of(ctx);
        if (form == 2)
          wait_release(done, what);
        if (form > 0)
          tu_read_buffer(ctx, out, (nr + 2) * rb, res);
        tu_check(untouched_around(res, nr, rb), "%s %s: written outside", what,
                 clr_op_name(op));
        check_pairs(what, op, t, rt, opt.ddof, depth, data, rng, nr, res + rb);
      }

      /* by key: host, buffers, enqueued (every one of the n results
       * written: past the count, empty runs' NaN, NaN, 0) */
      int32_t ukeys[N];
      size_t got_runs = 0;
      snprintf(what, sizeof what, "by key host %s", clr_type_name(t));
      memset(res, 0xa5, (N + 2) * rb);
      s = clr_reduce_by_key_host(ctx, &opt, op, CLR_INT, keys, t, data, N,
                                 ukeys, res + rb, &got_runs);
      if (tu_check(s == CLR_OK && got_runs == n_runs,
                   "%s %s: %s (%zu runs): %s", what, clr_op_name(op),
                   clr_status_name(s), got_runs, clr_context_error(ctx))) {
        tu_check(untouched_around(res, n_runs, rb), "%s %s: written outside",
                 what, clr_op_name(op));
        check_records(what, op, t, rt, opt.ddof, depth_of(ctx), data, runs_at,
                      0, 1, n_runs, 0, res + rb);
      }
      cl_mem kb = tu_new_buffer(ctx, sizeof keys, keys);
      cl_mem ub = tu_new_buffer(ctx, sizeof keys, NULL);
      uint64_t count = 0;
      cl_mem cb = tu_new_buffer(ctx, sizeof count, &count);
      for (int form = 0; form < 2; form++) {
        snprintf(what, sizeof what, "by key %s %s",
                 form ? "clr_enqueue" : "buffers", clr_type_name(t));
        memset(res, 0xa5, (N + 2) * rb);
        clEnqueueWriteBuffer(clr_context_queue(ctx), out, CL_TRUE, 0,
                             (N + 2) * rb, res, 0, NULL, NULL);
        clr_request k;
        clr_request_init(&k);
        k.kind = CLR_REQ_BY_KEY;
        k.op = op;
        k.type = t;
        k.key_type = CLR_INT;
        k.n = N;
        k.options = &opt;
        k.input.buffer = in;
        k.input.offset = 2;
        k.segments.buffer = kb;
        k.output.buffer = out;
        k.output.offset = 1;
        k.output_keys.buffer = ub;
        got_runs = 0;
        done = NULL;
        if (form) {
          k.run_count.buffer = cb;
          s = clr_enqueue(ctx, &k, 0, NULL, &done);
        } else {
          k.n_runs = &got_runs;
          s = clr_run(ctx, &k, NULL);
        }
        if (!tu_check(s == CLR_OK, "%s %s: %s: %s", what, clr_op_name(op),
                      clr_status_name(s), clr_context_error(ctx)))
          continue;
        size_t depth = depth_of(ctx);
        if (form) {
          wait_release(done, what);
          tu_read_buffer(ctx, cb, sizeof count, &count);
          got_runs = (size_t)count;
        }
        tu_check(got_runs == n_runs, "%s %s: %zu runs, want %zu", what,
                 clr_op_name(op), got_runs, n_runs);
        size_t written = form ? N : n_runs;
        tu_read_buffer(ctx, out, (N + 2) * rb, res);
        tu_check(untouched_around(res, written, rb), "%s %s: written outside",
                 what, clr_op_name(op));
        check_records(what, op, t, rt, opt.ddof, depth, data, runs_at, 0, 1,
                      n_runs, 0, res + rb);
        if (form) { /* the empty runs past the count */
          size_t bad = 0;
          for (size_t i = n_runs; i < N; i++) {
            clr_value v = clr_result_at(op, rt, res + rb, i);
            uint64_t cnt;
            memcpy(&cnt, res + (1 + i) * rb + 2 * clr_type_size(rt), 8);
            bad += cnt != 0 || !check_moments(what, op, t, rt, opt.ddof, depth,
                                              data, 0, 0, 1, &v, 0);
            if (bad > 3)
              break;
          }
          tu_check(bad == 0, "%s %s: results past the count not empty", what,
                   clr_op_name(op));
        }
      }
      clReleaseMemObject(kb);
      clReleaseMemObject(ub);
      clReleaseMemObject(cb);
      clReleaseMemObject(in);
      clReleaseMemObject(ob);
      clReleaseMemObject(rg);
      clReleaseMemObject(sb);
      clReleaseMemObject(out);
      free(res);
    }
    free(data);
  }
  /* matrices enqueued: rows, columns, pitched, one row, one column */
  static const size_t shapes[][3] = {{37, 53, 60}, {1, 1000, 0}, {1000, 3, 0}};
  static const clr_type mtypes[] = {CLR_FLOAT, CLR_DOUBLE, CLR_INT};
  for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++)
    for (size_t ti = 0; ti < sizeof mtypes / sizeof mtypes[0]; ti++)
      for (int axis = 0; axis < 2; axis++)
        for (size_t o = 0; o < 2; o++) {
          clr_options opt = CLR_OPTIONS_INIT;
          opt.ddof = o;
          run_matrix(ctx, &opt, moment_ops[o], mtypes[ti], shapes[sh][0],
                     shapes[sh][1], shapes[sh][2], axis, 2,
                     tu_seed(sh, ti, axis, 71), 0, sh == 0);
        }
  tu_section("enqueued: whole arrays, segments, ranges, by key, matrices");
}

/* A caller's scratch (clr_request_scratch_size) for var and std: a
 * reduction into a buffer and ranges, clr_run and clr_enqueue, in
 * scratch of exactly the size asked, against the reference (the whole
 * array's record also bit for bit against the call without scratch). */
static void set_scratch(clr_context *ctx) {
  enum { N = 50001 };
  float *x = tu_xmalloc(N * sizeof *x);
  clr_gen_data(CLR_SUM, CLR_FLOAT, tu_seed(1, 61, 0, 0), x, N, NULL, 0);
  for (size_t i = 0; i < N; i++)
    x[i] += 1e4f;
  const uint64_t rng[] = {0, N, 5, 100, 40000, 2, 300, 0, 17, 20000};
  const size_t nr = sizeof rng / sizeof rng[0] / 2;
  cl_mem in = tu_new_buffer(ctx, N * sizeof *x, x);
  cl_mem rg = tu_new_buffer(ctx, sizeof rng, rng);
  for (size_t o = 0; o < 2; o++)
    for (int kind = 0; kind < 2; kind++)
      for (int enqueue = 0; enqueue < 2; enqueue++) {
        clr_op op = moment_ops[o];
        clr_options opt = CLR_OPTIONS_INIT;
        opt.ddof = 1;
        clr_type rt = clr_options_result_type(&opt, op, CLR_FLOAT);
        size_t rb = clr_result_bytes(&opt, op, CLR_FLOAT);
        size_t count = kind ? nr : 1;
        unsigned char ref[8 * 24], got[8 * 24];
        cl_mem out = tu_new_buffer(ctx, count * rb, NULL);
        clr_request r;
        clr_request_init(&r);
        r.kind = kind ? CLR_REQ_RANGES : CLR_REQ_REDUCE;
        r.op = op;
        r.type = CLR_FLOAT;
        r.n = N;
        r.options = &opt;
        r.input.buffer = in;
        r.output.buffer = out;
        if (kind) {
          r.segments.buffer = rg;
          r.n_segments = nr;
        }
        char what[128];
        snprintf(what, sizeof what, "scratch %s %s (%s)",
                 kind ? "ranges" : "reduce", clr_op_name(op),
                 enqueue ? "clr_enqueue" : "clr_run");
        size_t bytes = 0;
        clr_status s = clr_request_scratch_size(ctx, &r, &bytes);
        if (!tu_check(s == CLR_OK && bytes > 0, "%s: size %s (%zu): %s", what,
                      clr_status_name(s), bytes, clr_context_error(ctx))) {
          clReleaseMemObject(out);
          continue;
        }
        for (int with = 0; with < 2; with++) {
          cl_mem scratch = with ? tu_new_buffer(ctx, bytes, NULL) : NULL;
          r.scratch.buffer = scratch;
          r.scratch.offset = 0;
          r.scratch_bytes = with ? bytes : 0;
          cl_event done = NULL;
          s = enqueue ? clr_enqueue(ctx, &r, 0, NULL, &done)
                      : clr_run(ctx, &r, NULL);
          if (tu_check(s == CLR_OK, "%s%s: %s: %s", what,
                       with ? " in scratch" : "", clr_status_name(s),
                       clr_context_error(ctx))) {
            size_t depth = depth_of(ctx);
            if (enqueue)
              wait_release(done, what);
            tu_read_buffer(ctx, out, count * rb, with ? got : ref);
            if (kind)
              check_pairs(what, op, CLR_FLOAT, rt, 1, depth, x, rng, nr,
                          with ? got : ref);
            else
              check_records(what, op, CLR_FLOAT, rt, 1, depth, x, NULL, N, 1, 1,
                            0, with ? got : ref);
          }
          if (scratch)
            clReleaseMemObject(scratch);
        }
        /* the same passes in scratch as out of it */
        tu_check(kind || memcmp(ref, got, rb) == 0,
                 "%s: the record differs in scratch", what);
        clReleaseMemObject(out);
      }
  clReleaseMemObject(in);
  clReleaseMemObject(rg);
  free(x);
  tu_section("caller scratch: a reduction into a buffer, ranges");
}

/* ------------------------------------------------------------ maps */

/* The map `which` of x, element i, as the device computes it: abs,
 * square, and an expression whose float evaluation is exact for |x| < 1
 * (a halving, then a small integer added). */
static const char *const map_expr = "x * 0.5f + (float)(i % 3)";
static float map_value(int which, float x, uint64_t i) {
  return which == 0 ? fabsf(x) : which == 1 ? x * x : x * 0.5f + (float)(i % 3);
}

/* var and std of mapped values over the flat array, segments of mixed
 * lengths and a matrix's rows and columns (a pitch wider than the row),
 * both layouts (every kernel's own path for maps): each result against the
 * moments of the values mapped on the CPU. */
static void set_maps(clr_context *ctx) {
  const size_t R = 101, C = 45, P = 49, N = R * P;
  /* segments of one length: 9 of 520 (on GPUs, and PoCL's strided
   * layout, a work-group a row: clr_rows) */
  const size_t RL = 520, RN = 9;
  float *x = tu_xmalloc(N * sizeof *x), *mx = tu_xmalloc(N * sizeof *mx);
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < N; i++) { /* signed, in (-1, 1) */
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x[i] = (float)((double)(state >> 11) / 9007199254740992.0 * 2.0 - 1.0);
  }
  uint64_t off[] = {0, 1, 2, 40, 41, 300, 1000, 1777, 2000, N};
  size_t n_seg = sizeof off / sizeof off[0] - 1;
  uint64_t rows_off[RN + 1];
  for (size_t k = 0; k <= RN; k++)
    rows_off[k] = k * RL;
  static const clr_layout layouts[] = {CLR_LAYOUT_STRIDED,
                                       CLR_LAYOUT_CONTIGUOUS};
  unsigned char res[2 * R * (2 * sizeof(double) + 8)];
  for (int which = 0; which < 3; which++) {
    for (size_t i = 0; i < N; i++)
      mx[i] = map_value(which, x[i], i);
    for (size_t o = 0; o < 2; o++)
      for (size_t l = 0; l < 2; l++) {
        clr_op op = moment_ops[o];
        clr_options opt = CLR_OPTIONS_INIT;
        opt.map = which == 0   ? CLR_MAP_ABS
                  : which == 1 ? CLR_MAP_SQUARE
                               : CLR_MAP_EXPR;
        opt.map_expr = which == 2 ? map_expr : NULL;
        opt.layout = layouts[l];
        opt.ddof = (o + l) % 2;
        char what[128];
        snprintf(what, sizeof what, "map %s, %s layout",
                 which == 2 ? map_expr : clr_map_name(opt.map),
                 l ? "contiguous" : "strided");
        clr_value v;
        clr_status s = clr_reduce_host(ctx, &opt, op, CLR_FLOAT, x, N, &v);
        if (tu_check(s == CLR_OK, "%s, flat: %s: %s", what, clr_status_name(s),
                     clr_context_error(ctx)))
          check_moments(what, op, CLR_FLOAT, CLR_FLOAT, opt.ddof, depth_of(ctx),
                        mx, 0, N, 1, &v, 0);
        s = clr_reduce_segments_host(ctx, &opt, op, CLR_FLOAT, x, N, off, n_seg,
                                     res);
        if (tu_check(s == CLR_OK, "%s, segments: %s: %s", what,
                     clr_status_name(s), clr_context_error(ctx)))
          check_records(what, op, CLR_FLOAT, CLR_FLOAT, opt.ddof, depth_of(ctx),
                        mx, off, 0, 1, n_seg, 0, res);
        s = clr_reduce_segments_host(ctx, &opt, op, CLR_FLOAT, x, RN * RL,
                                     rows_off, RN, res);
        char w1[160];
        snprintf(w1, sizeof w1, "%s, segments of one length", what);
        if (tu_check(s == CLR_OK, "%s: %s: %s", w1, clr_status_name(s),
                     clr_context_error(ctx)))
          check_records(w1, op, CLR_FLOAT, CLR_FLOAT, opt.ddof, depth_of(ctx),
                        mx, rows_off, 0, 1, RN, 0, res);
        for (int axis = 0; axis < 2; axis++) {
          clr_request r = tu_matrix_request(op, CLR_FLOAT, R, C, P, axis);
          r.options = &opt;
          r.input.host = x;
          r.output.host = res;
          s = clr_run(ctx, &r, NULL);
          char w2[160];
          snprintf(w2, sizeof w2, "%s, axis %d", what, axis);
          if (!tu_check(s == CLR_OK, "%s: %s: %s", w2, clr_status_name(s),
                        clr_context_error(ctx)))
            continue;
          if (axis == 0)
            check_records(w2, op, CLR_FLOAT, CLR_FLOAT, opt.ddof, depth_of(ctx),
                          mx, NULL, R, P, C, 1, res);
          else
            check_records(w2, op, CLR_FLOAT, CLR_FLOAT, opt.ddof, depth_of(ctx),
                          mx, NULL, C, 1, R, P, res);
        }
      }
  }
  free(x);
  free(mx);
  tu_section("maps: abs, square, an expression of x and i; flat, segments, "
             "rows, columns, both layouts");
}

/* ------------------------------------------------------------ refusals */

static void expect_refused(clr_context *ctx, clr_status s, const char *what) {
  const char *e = clr_context_error(ctx);
  tu_check(s == CLR_ERR_UNSUPPORTED && e && e[0] != '\0',
           "%s: %s (%s), want %s with a reason", what, clr_status_name(s),
           e ? e : "(null)", clr_status_name(CLR_ERR_UNSUPPORTED));
}

static void set_errors(clr_context *ctx) {
  float x[64];
  for (int i = 0; i < 64; i++)
    x[i] = (float)i;
  int32_t xi[64] = {0};
  clr_value v;
  for (size_t o = 0; o < 2; o++) {
    clr_op op = moment_ops[o];
    char what[96];
    clr_options opt = CLR_OPTIONS_INIT;
    opt.exact = 1;
    snprintf(what, sizeof what, "%s exact", clr_op_name(op));
    expect_refused(ctx, clr_reduce_host(ctx, &opt, op, CLR_FLOAT, x, 64, &v),
                   what);
    static const clr_kernel kernels[] = {
        CLR_REDUCE_INTERLEAVED, CLR_REDUCE_SEQUENTIAL, CLR_REDUCE_FIRST_ADD};
    for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++) {
      opt = (clr_options)CLR_OPTIONS_INIT;
      opt.kernel = kernels[k];
      snprintf(what, sizeof what, "%s kernel %s", clr_op_name(op),
               clr_kernel_name(kernels[k]));
      expect_refused(ctx, clr_reduce_host(ctx, &opt, op, CLR_FLOAT, x, 64, &v),
                     what);
    }
    /* a scan kernel is no reduction kernel, whatever the op (the rule
     * every reduction has) */
    opt = (clr_options)CLR_OPTIONS_INIT;
    opt.kernel = CLR_SCAN_KOGGE_STONE;
    clr_status s = clr_reduce_host(ctx, &opt, op, CLR_FLOAT, x, 64, &v);
    tu_check(s == CLR_ERR_INVALID_ARGUMENT && clr_context_error(ctx)[0] != '\0',
             "%s with a scan kernel: %s (%s)", clr_op_name(op),
             clr_status_name(s), clr_context_error(ctx));
    opt = (clr_options)CLR_OPTIONS_INIT;
    opt.accumulate_in = CLR_INT;
    snprintf(what, sizeof what, "%s int accumulated in int", clr_op_name(op));
    expect_refused(ctx, clr_reduce_host(ctx, &opt, op, CLR_INT, xi, 64, &v),
                   what);
    opt.accumulate_in = CLR_LONG;
    snprintf(what, sizeof what, "%s int accumulated in long", clr_op_name(op));
    expect_refused(ctx, clr_reduce_host(ctx, &opt, op, CLR_INT, xi, 64, &v),
                   what);
    /* no type at all: the argument is wrong, not the support */
    opt.accumulate_in = (clr_type)(CLR_TYPE_COUNT + 1);
    s = clr_reduce_host(ctx, &opt, op, CLR_FLOAT, x, 64, &v);
    tu_check(s == CLR_ERR_INVALID_ARGUMENT && clr_context_error(ctx)[0] != '\0',
             "%s accumulated in no type: %s (%s)", clr_op_name(op),
             clr_status_name(s), clr_context_error(ctx));
    /* a scan of a variance means nothing */
    float out[64];
    snprintf(what, sizeof what, "%s scan", clr_op_name(op));
    expect_refused(ctx, clr_scan_host(ctx, NULL, op, CLR_FLOAT, x, out, 64),
                   what);
    opt = (clr_options)CLR_OPTIONS_INIT;
    opt.kernel = CLR_SCAN_KOGGE_STONE;
    snprintf(what, sizeof what, "%s scan, kernel kogge-stone", clr_op_name(op));
    expect_refused(ctx, clr_scan_host(ctx, &opt, op, CLR_FLOAT, x, out, 64),
                   what);
  }
  /* and the context still works: var of 0..63 is (64^2 - 1) / 12 */
  clr_status s = clr_reduce_host(ctx, NULL, CLR_VAR, CLR_FLOAT, x, 64, &v);
  tu_check(s == CLR_OK && fabs(v.v.f - 341.25) < 1e-3 && v.max.f == 31.5f,
           "after the refusals: %s, var %g mean %g", clr_status_name(s),
           (double)v.v.f, (double)v.max.f);
  tu_section("refusals");
}

int main(int argc, char **argv) {
  const char *set = tu_arg_value(argc, argv, "--set");
  if (!set)
    tu_die("usage: test_moments --set=whole|hard|segments|matrix|stream|"
           "async|scratch|maps|errors [-v]");
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "-v") == 0)
      tu_verbose = 1;
  if (strcmp(set, "stream") == 0) {
    set_stream();
    return tu_finish("test_moments");
  }
  clr_context *ctx = tu_context();
  if (strcmp(set, "whole") == 0)
    set_whole(ctx);
  else if (strcmp(set, "hard") == 0)
    set_hard(ctx);
  else if (strcmp(set, "segments") == 0)
    set_segments(ctx);
  else if (strcmp(set, "matrix") == 0)
    set_matrix(ctx);
  else if (strcmp(set, "async") == 0)
    set_async(ctx);
  else if (strcmp(set, "scratch") == 0)
    set_scratch(ctx);
  else if (strcmp(set, "errors") == 0)
    set_errors(ctx);
  else if (strcmp(set, "maps") == 0)
    set_maps(ctx);
  else
    tu_die("unknown set '%s'", set);
  clr_context_release(ctx);
  return tu_finish("test_moments");
}
