/* clr_enqueue of CLR_REQ_RANGES (checked and reduced on the device,
 * nothing read back) and of exact sums and means (CLR_REQ_REDUCE into a
 * buffer, finished on the device).
 *
 * Ranges: int, long, float, double and half data (integer-valued, so every
 * sum is exact whatever the order), sum, min, max, argmin and mean (and a
 * map expression reading i with an index_base), over ranges that are
 * empty, overlapping, unsorted, at n, one over the whole array beside
 * thousands of tiny ones; every result against a CPU loop.  Bad ranges
 * (past n, a length past n, an offset + length that wraps): the status
 * operand gets 1 + the lowest bad index, the good ranges' results are
 * still right, and the context runs the next call.
 *
 * Exact sums: the enqueued result's bits equal the blocking call's
 * (clr_reduce_buffer with exact) on cancellations, denormals, infinities
 * and NaN, huge and tiny magnitudes, all -0.0, random data; exact means
 * the same.  Means: the enqueued mean's bits equal the host's division of
 * the enqueued sum (clr_value_sum_to_mean, the blocking call's division)
 * for float, double, int and uint data and for sums built to be hard to
 * divide (int data whose sum is given), NaN-skipping means with NaNs and
 * with nothing but NaNs.
 *
 * A chain held by an unset user event: ranges over A -> an exact sum of
 * their results -> the mean of A -> ranges over the first results; the
 * last event pending until the gate is set, one wait, every output
 * checked. */
#include "test_util.h"

#include <CL/cl.h>
#include <math.h>
#include <stdint.h>

#define N 20011

static void expect_cl(cl_int err, const char *what) {
  if (err != CL_SUCCESS)
    tu_die("%s failed: %d", what, (int)err);
}

static clr_operand buf_op(cl_mem m, size_t offset) {
  clr_operand o = {NULL, m, offset};
  return o;
}

static void read_bytes(clr_context *ctx, cl_mem m, size_t at, size_t bytes,
                       void *dst) {
  expect_cl(clEnqueueReadBuffer(clr_context_queue(ctx), m, CL_TRUE, at, bytes,
                                dst, 0, NULL, NULL),
            "clEnqueueReadBuffer");
}

static void wait_release(cl_event e) {
  if (e) {
    expect_cl(clWaitForEvents(1, &e), "clWaitForEvents");
    clReleaseEvent(e);
  }
}

/* ------------------------------------------------------------ ranges */

/* The test's ranges: empty ones (one at n), overlapping and unsorted
 * ones, one over the whole array, many tiny ones. */
static uint64_t *make_ranges(size_t n, size_t *count) {
  size_t cap = 4000, k = 0;
  uint64_t *g = tu_xmalloc(2 * cap * sizeof *g);
  tu_rng rng = {12345};
#define ADD(o, l)                                                              \
  do {                                                                         \
    g[2 * k] = (o);                                                            \
    g[2 * k + 1] = (l);                                                        \
    k++;                                                                       \
  } while (0)
  ADD(0, n);     /* the whole array */
  ADD(n, 0);     /* empty, at n */
  ADD(17, 0);    /* empty */
  ADD(n - 1, 1); /* the last element */
  ADD(100, 5000);
  ADD(50, 9000); /* overlapping, before the one above */
  ADD(3, 2);
  while (k < cap - 2) {
    uint64_t len = tu_below(&rng, 21);
    ADD(tu_below(&rng, n - len + 1), len);
  }
  ADD(n / 2, n / 2);
  ADD(0, 1);
#undef ADD
  *count = k;
  return g;
}

/* Element i of a's type t as a double (integer-valued here). */
static double elem(clr_type t, const void *a, size_t i) {
  switch (t) {
  case CLR_INT:
    return ((const int32_t *)a)[i];
  case CLR_LONG:
    return (double)((const int64_t *)a)[i];
  case CLR_FLOAT:
    return ((const float *)a)[i];
  case CLR_DOUBLE:
    return ((const double *)a)[i];
  default: /* half */
    return clr_half_to_float(((const uint16_t *)a)[i]);
  }
}

/* One op over the ranges of one type's data: enqueued, its results
 * against CPU loops.  map: a map expression "x + i" with index_base
 * 1000 (sums of int and long). */
static void ranges_case(clr_context *ctx, clr_type t, clr_op op, int map,
                        const void *a, cl_mem ab, const uint64_t *g,
                        size_t count, cl_mem gb) {
  clr_options o = CLR_OPTIONS_INIT;
  if (map) {
    o.map = CLR_MAP_EXPR;
    o.map_expr = "x + i";
    o.index_base = 1000;
  }
  size_t rsize = clr_result_bytes(&o, op, t);
  clr_type rt = clr_options_result_type(&o, op, t);
  cl_mem out = tu_new_buffer(ctx, count * rsize, NULL);
  clr_request r = CLR_REQUEST_INIT;
  r.kind = CLR_REQ_RANGES;
  r.op = op;
  r.type = t;
  r.n = N;
  r.input = buf_op(ab, 0);
  r.segments = buf_op(gb, 0);
  r.n_segments = count;
  r.output = buf_op(out, 0);
  r.options = &o;
  cl_event e = NULL;
  clr_status s = clr_enqueue(ctx, &r, 0, NULL, &e);
  char what[96];
  snprintf(what, sizeof what, "ranges: enqueue %s of %s%s", clr_op_name(op),
           clr_type_name(t), map ? " (map x + i)" : "");
  TU_EXPECT_STATUS(s, CLR_OK, what);
  wait_release(e);
  unsigned char *res = tu_xmalloc(count * rsize);
  read_bytes(ctx, out, 0, count * rsize, res);
  size_t bad = 0;
  for (size_t k = 0; k < count; k++) {
    uint64_t off = g[2 * k], len = g[2 * k + 1];
    clr_value v = clr_result_at(op == CLR_MEAN ? CLR_MEAN : op, rt, res, k);
    double want = 0, got = clr_value_as_double(&v);
    uint64_t want_i = UINT64_MAX;
    int ok;
    if (op == CLR_SUM || op == CLR_MEAN) {
      double s2 = 0;
      for (uint64_t j = 0; j < len; j++)
        s2 += elem(t, a, off + j) + (map ? (double)(1000 + off + j) : 0);
      want = op == CLR_SUM ? s2 : s2 / (double)len;
      if (op == CLR_MEAN && rt == CLR_FLOAT)
        want = (float)want;
      ok = (isnan(want) && isnan(got)) || want == got;
    } else {
      int is_min = op != CLR_MAX;
      want = is_min ? INFINITY : -INFINITY;
      if (!tu_is_float(t))
        want = is_min ? (t == CLR_INT ? INT32_MAX : (double)INT64_MAX)
                      : (t == CLR_INT ? INT32_MIN : (double)INT64_MIN);
      for (uint64_t j = 0; j < len; j++) {
        double x = elem(t, a, off + j);
        if (is_min ? x < want : x > want) {
          want = x;
          want_i = j;
        }
      }
      ok = want == got && (op != CLR_ARGMIN || v.index == want_i);
    }
    if (!ok && bad++ < 3)
      TU_CHECK(0,
               "%s: range %zu (%llu, %llu): %.17g (index %llu), want %.17g "
               "(index %llu)",
               what, k, (unsigned long long)off, (unsigned long long)len, got,
               (unsigned long long)v.index, want, (unsigned long long)want_i);
  }
  TU_CHECK(bad == 0, "%s: %zu ranges, %zu wrong", what, count, bad);
  free(res);
  clReleaseMemObject(out);
}

static void ranges_matrix(clr_context *ctx) {
  size_t count;
  uint64_t *g = make_ranges(N, &count);
  cl_mem gb = tu_new_buffer(ctx, 2 * count * sizeof *g, g);
  const clr_type types[] = {CLR_INT, CLR_LONG, CLR_FLOAT, CLR_DOUBLE, CLR_HALF};
  const clr_op ops[] = {CLR_SUM, CLR_MIN, CLR_MAX, CLR_ARGMIN, CLR_MEAN};
  tu_rng rng = {777};
  for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
    clr_type t = types[ti];
    if (t == CLR_DOUBLE && !tu_device.has_fp64)
      continue;
    size_t es = clr_type_size(t);
    unsigned char *a = tu_xmalloc(N * es);
    for (size_t i = 0; i < N; i++)
      tu_store_i(t, a, i, (int64_t)tu_below(&rng, 101) - 50);
    cl_mem ab = tu_new_buffer(ctx, N * es, a);
    for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
      if (ops[oi] == CLR_MEAN &&
          (clr_op_supports(CLR_MEAN, t) != CLR_OK ||
           (!tu_device.has_fp64 && t != CLR_FLOAT && t != CLR_HALF)))
        continue;
      ranges_case(ctx, t, ops[oi], 0, a, ab, g, count, gb);
    }
    if (t == CLR_INT || t == CLR_LONG)
      ranges_case(ctx, t, CLR_SUM, 1, a, ab, g, count, gb);
    clReleaseMemObject(ab);
    free(a);
  }
  clReleaseMemObject(gb);
  free(g);
}

/* Bad ranges: the verdict, the good ranges' results, the context after. */
static void bad_ranges(clr_context *ctx) {
  int32_t a[64];
  for (int i = 0; i < 64; i++)
    a[i] = i + 1;
  const uint64_t g[] = {0, 64, 10, 5,          65, 0,          63, 2,
                        1, 3,  60, UINT64_MAX, 2,  UINT64_MAX, 5,  0};
  size_t count = sizeof g / sizeof g[0] / 2;
  cl_mem ab = tu_new_buffer(ctx, sizeof a, a);
  cl_mem gb = tu_new_buffer(ctx, sizeof g, g);
  cl_mem out = tu_new_buffer(ctx, count * sizeof(int64_t), NULL);
  uint64_t fill = 77;
  cl_mem sb = tu_new_buffer(ctx, 2 * sizeof fill, NULL);
  clr_request r = CLR_REQUEST_INIT;
  r.kind = CLR_REQ_RANGES;
  r.op = CLR_SUM;
  r.type = CLR_INT;
  r.n = 64;
  r.input = buf_op(ab, 0);
  r.segments = buf_op(gb, 0);
  r.n_segments = count;
  r.output = buf_op(out, 0);
  r.status = buf_op(sb, 1);
  cl_event e = NULL;
  clr_status s = clr_enqueue(ctx, &r, 0, NULL, &e);
  TU_EXPECT_STATUS(s, CLR_OK, "bad ranges: enqueued");
  wait_release(e);
  uint64_t st[2];
  read_bytes(ctx, sb, 0, sizeof st, st);
  TU_CHECK(st[1] == 3,
           "bad ranges: status %llu (want 3: 1 + range 2, the "
           "lowest bad one)",
           (unsigned long long)st[1]);
  int64_t res[8];
  read_bytes(ctx, out, 0, sizeof res, res);
  TU_CHECK(res[0] == 64 * 65 / 2 && res[1] == 11 + 12 + 13 + 14 + 15 &&
               res[4] == 2 + 3 + 4 && res[7] == 0,
           "bad ranges: good ones' sums %lld %lld %lld %lld", (long long)res[0],
           (long long)res[1], (long long)res[4], (long long)res[7]);
  /* all good: status 0 */
  r.n_segments = 2;
  e = NULL;
  s = clr_enqueue(ctx, &r, 0, NULL, &e);
  TU_EXPECT_STATUS(s, CLR_OK, "good ranges after bad ones: enqueued");
  wait_release(e);
  read_bytes(ctx, sb, 0, sizeof st, st);
  TU_CHECK(st[1] == 0, "good ranges: status %llu (want 0)",
           (unsigned long long)st[1]);
  /* no status operand: still safe */
  r.n_segments = count;
  r.status = buf_op(NULL, 0);
  e = NULL;
  s = clr_enqueue(ctx, &r, 0, NULL, &e);
  TU_EXPECT_STATUS(s, CLR_OK, "bad ranges without status: enqueued");
  wait_release(e);
  /* the status inside the results: refused */
  r.status = buf_op(out, 1);
  s = clr_enqueue(ctx, &r, 0, NULL, &e);
  TU_EXPECT_STATUS(s, CLR_ERR_INVALID_ARGUMENT,
                   "a status inside the results refused");
  /* clr_run names the bad range as before */
  r.status = buf_op(NULL, 0);
  s = clr_run(ctx, &r, NULL);
  TU_EXPECT_STATUS(s, CLR_ERR_INVALID_ARGUMENT, "clr_run of bad ranges");
  clReleaseMemObject(ab);
  clReleaseMemObject(gb);
  clReleaseMemObject(out);
  clReleaseMemObject(sb);
}

/* ---------------------------------------------- exact sums and means */

static int same_bits(const clr_value *a, const clr_value *b) {
  if (a->type != b->type)
    return 0;
  return a->type == CLR_FLOAT ? memcmp(&a->v.f, &b->v.f, 4) == 0
                              : memcmp(&a->v.d, &b->v.d, 8) == 0;
}

/* The op of n elements of ab (type t) enqueued into a buffer, read back as
 * a value of the result type. */
static clr_value enqueued(clr_context *ctx, const clr_options *o, clr_op op,
                          clr_type t, cl_mem ab, size_t n, const char *what) {
  clr_type rt = clr_options_result_type(o, op, t);
  cl_mem out = tu_new_buffer(ctx, 16, NULL);
  clr_request r = CLR_REQUEST_INIT;
  r.op = op;
  r.type = t;
  r.n = n;
  r.input = buf_op(ab, 0);
  r.output = buf_op(out, 1);
  r.options = o;
  cl_event e = NULL;
  clr_status s = clr_enqueue(ctx, &r, 0, NULL, &e);
  TU_EXPECT_STATUS(s, CLR_OK, what);
  wait_release(e);
  unsigned char b[16];
  read_bytes(ctx, out, 0, 16, b);
  clReleaseMemObject(out);
  return clr_result_at(op, rt, b, 1);
}

/* Exact sum and exact mean of a, enqueued and blocking, bit for bit. */
static void exact_case(clr_context *ctx, clr_type t, const void *a, size_t n,
                       const char *name) {
  clr_options o = CLR_OPTIONS_INIT;
  o.exact = 1;
  cl_mem ab = tu_new_buffer(ctx, n * clr_type_size(t), a);
  const clr_op ops[2] = {CLR_SUM, CLR_MEAN};
  for (int k = 0; k < 2; k++) {
    char what[128];
    snprintf(what, sizeof what, "exact %s of %s: %s", clr_op_name(ops[k]),
             clr_type_name(t), name);
    clr_value want, got = enqueued(ctx, &o, ops[k], t, ab, n, what);
    clr_status s = clr_reduce_buffer(ctx, &o, ops[k], t, ab, 0, n, &want);
    TU_EXPECT_STATUS(s, CLR_OK, what);
    char g1[64], w1[64];
    TU_CHECK(same_bits(&got, &want), "%s: %s, blocking %s", what,
             tu_fmt(&got, g1, sizeof g1), tu_fmt(&want, w1, sizeof w1));
  }
  clReleaseMemObject(ab);
}

static void exact_sums(clr_context *ctx) {
  enum { M = 4099 };
  tu_rng rng = {4242};
  for (int ti = 0; ti < 2; ti++) {
    clr_type t = ti ? CLR_DOUBLE : CLR_FLOAT;
    if (t == CLR_DOUBLE && !tu_device.has_fp64)
      continue;
    double *d = tu_xmalloc(M * sizeof *d);
    void *a = tu_xmalloc(M * 8);
    const double tiny = t == CLR_FLOAT ? 1.4e-45 : 4.9e-324;
    const double huge = t == CLR_FLOAT ? 3e38 : 1.7e308;
    for (int c = 0; c < 12; c++) {
      const char *name = "";
      size_t n = M;
      for (size_t i = 0; i < M; i++) {
        double u = tu_unit(&rng) - 0.5;
        switch (c) {
        case 0:
          name = "random";
          d[i] = u * ldexp(1.0, (int)tu_below(&rng, 40) - 20);
          break;
        case 1:
          name = "cancelling pairs and 1e-7";
          d[i] = i % 2 ? -d[i - 1] : u * 1e30;
          if (i == M - 1)
            d[i] = 1e-7;
          break;
        case 2:
          name = "denormals";
          d[i] = tiny * (double)(tu_below(&rng, 1000) + 1) * (u < 0 ? -1 : 1);
          break;
        case 3:
          name = "huge and tiny";
          d[i] = i % 3 == 0 ? huge * u : i % 3 == 1 ? tiny : u;
          break;
        case 4:
          name = "overflow to inf";
          d[i] = huge;
          break;
        case 5:
          name = "+inf";
          d[i] = i == 7 ? INFINITY : u;
          break;
        case 6:
          name = "+inf and -inf";
          d[i] = i == 7 ? INFINITY : i == 9 ? -INFINITY : u;
          break;
        case 7:
          name = "NaN";
          d[i] = i == 100 ? NAN : u;
          break;
        case 8:
          name = "all -0.0";
          d[i] = -0.0;
          break;
        case 9:
          name = "cancelling to +0";
          d[i] = i % 2 ? -d[i - 1] : u;
          n = M - 1;
          break;
        case 10:
          name = "one element, a denormal";
          d[i] = -tiny * 3;
          n = 1;
          break;
        default:
          name = "ties: 1 + 2^-24 / 2^-53 halves";
          d[i] = i == 0
                     ? 1.0
                     : ldexp(1.0, t == CLR_FLOAT ? -25 : -54) * (i < 3 ? 1 : 0);
          n = 3;
          break;
        }
      }
      for (size_t i = 0; i < M; i++) {
        if (t == CLR_FLOAT)
          ((float *)a)[i] = (float)d[i];
        else
          ((double *)a)[i] = d[i];
      }
      exact_case(ctx, t, a, n, name);
    }
    free(a);
    free(d);
  }
}

/* The enqueued mean against the host's division of the enqueued sum. */
static void mean_case(clr_context *ctx, const clr_options *o, clr_op op,
                      clr_type t, const void *a, size_t n, const char *name) {
  cl_mem ab = tu_new_buffer(ctx, n * clr_type_size(t), a);
  char what[128];
  snprintf(what, sizeof what, "%s of %s: %s", clr_op_name(op), clr_type_name(t),
           name);
  clr_op sum_op = op == CLR_NANMEAN ? CLR_NANSUM : CLR_SUM;
  clr_value sum = enqueued(ctx, o, sum_op, t, ab, n, what);
  clr_value got = enqueued(ctx, o, op, t, ab, n, what);
  uint64_t count = n;
  if (op == CLR_NANMEAN) {
    count = 0;
    for (size_t i = 0; i < n; i++)
      count += !isnan(t == CLR_FLOAT ? (double)((const float *)a)[i]
                                     : ((const double *)a)[i]);
  }
  clr_value want = sum;
  clr_status s = clr_value_sum_to_mean(o, t, count, &want);
  TU_EXPECT_STATUS(s, CLR_OK, what);
  char g1[64], w1[64];
  TU_CHECK(same_bits(&got, &want), "%s: %s, host division %s", what,
           tu_fmt(&got, g1, sizeof g1), tu_fmt(&want, w1, sizeof w1));
  clReleaseMemObject(ab);
}

static void means(clr_context *ctx) {
  enum { M = 1001 };
  tu_rng rng = {99};
  clr_options o = CLR_OPTIONS_INIT;
  float f[M];
  double d[M];
  int32_t i32[M];
  uint32_t u32[M];
  for (size_t i = 0; i < M; i++) {
    f[i] = (float)(tu_unit(&rng) * 3.7);
    d[i] = tu_unit(&rng) * 1e10 - 3e9;
    i32[i] = (int32_t)tu_next(&rng);
    u32[i] = (uint32_t)tu_next(&rng);
  }
  mean_case(ctx, &o, CLR_MEAN, CLR_FLOAT, f, M, "random");
  mean_case(ctx, &o, CLR_MEAN, CLR_INT, i32, M, "random");
  mean_case(ctx, &o, CLR_MEAN, CLR_UINT, u32, M, "random");
  if (tu_device.has_fp64) {
    mean_case(ctx, &o, CLR_MEAN, CLR_DOUBLE, d, M, "random");
    clr_options wide = CLR_OPTIONS_INIT;
    wide.accumulate_in = CLR_DOUBLE;
    mean_case(ctx, &wide, CLR_MEAN, CLR_FLOAT, f, M, "accumulated in double");
    double dn[3] = {4.9e-324 * 7, 4.9e-324 * 3, 0};
    mean_case(ctx, &o, CLR_MEAN, CLR_DOUBLE, dn, 3, "a denormal mean");
  }
  float fn[3] = {1.4e-45f * 5, 0, 0};
  mean_case(ctx, &o, CLR_MEAN, CLR_FLOAT, fn, 3, "a denormal mean");
  f[5] = NAN;
  f[17] = NAN;
  mean_case(ctx, &o, CLR_NANMEAN, CLR_FLOAT, f, M, "two NaNs");
  mean_case(ctx, &o, CLR_MEAN, CLR_FLOAT, f, M, "a NaN sum");
  float nans[4] = {NAN, NAN, NAN, NAN};
  mean_case(ctx, &o, CLR_NANMEAN, CLR_FLOAT, nans, 4, "nothing but NaNs");
  float infs[3] = {-INFINITY, 1, 2};
  mean_case(ctx, &o, CLR_MEAN, CLR_FLOAT, infs, 3, "-inf");
  /* Sums made hard to divide: int data summing to s over m elements. */
  int hard_bad = 0, hard_cases = 0;
  for (int c = 0; c < 300; c++) {
    size_t m = 3 + (size_t)tu_below(&rng, 200);
    int64_t s = (int64_t)(tu_next(&rng) >> (10 + tu_below(&rng, 30)));
    if (c % 2)
      s = -s;
    int32_t *v = tu_xmalloc(m * sizeof *v);
    int64_t left = s;
    for (size_t i = 0; i + 1 < m; i++) {
      int64_t share = left / (int64_t)(m - i);
      if (share > INT32_MAX)
        share = INT32_MAX;
      if (share < INT32_MIN)
        share = INT32_MIN;
      v[i] = (int32_t)share;
      left -= share;
    }
    if (left > INT32_MAX || left < INT32_MIN) {
      free(v);
      continue;
    }
    v[m - 1] = (int32_t)left;
    cl_mem ab = tu_new_buffer(ctx, m * sizeof *v, v);
    clr_value got = enqueued(ctx, &o, CLR_MEAN, CLR_INT, ab, m, "hard mean");
    clr_value want = {0};
    want.type = CLR_LONG;
    want.op = CLR_SUM;
    want.v.l = s;
    clr_value_sum_to_mean(&o, CLR_INT, m, &want);
    hard_cases++;
    if (!same_bits(&got, &want) && hard_bad++ < 3)
      TU_CHECK(0, "hard mean: %lld / %zu: %.17g, host %.17g", (long long)s, m,
               got.v.d, want.v.d);
    clReleaseMemObject(ab);
    free(v);
  }
  TU_CHECK(hard_bad == 0, "hard means: %d of %d differ from the host's bits",
           hard_bad, hard_cases);
}

/* ------------------------------------------------------------ a chain */

static void chain(clr_context *ctx) {
  enum { A = 30011 };
  float *a = tu_xmalloc(A * sizeof *a);
  tu_rng rng = {31};
  for (size_t i = 0; i < A; i++)
    a[i] = (float)((int)tu_below(&rng, 201) - 100);
  size_t count;
  uint64_t *g = make_ranges(A, &count);
  /* ranges over the first count results: sorted pairs of them */
  uint64_t g2[6] = {0, count, 5, 10, count - 1, 1};
  cl_context cl = clr_context_cl_context(ctx);
  cl_int err;
  cl_event gate = clCreateUserEvent(cl, &err);
  expect_cl(err, "clCreateUserEvent");
  cl_mem ab = tu_new_buffer(ctx, A * sizeof *a, a);
  cl_mem gb = tu_new_buffer(ctx, 2 * count * sizeof *g, g);
  cl_mem g2b = tu_new_buffer(ctx, sizeof g2, g2);
  cl_mem rb = tu_new_buffer(ctx, count * sizeof(float), NULL);
  cl_mem vb = tu_new_buffer(ctx, 2 * sizeof(float), NULL);
  cl_mem r2b = tu_new_buffer(ctx, 3 * sizeof(float), NULL);
  cl_event e[4] = {NULL, NULL, NULL, NULL};
  clr_options ex = CLR_OPTIONS_INIT;
  ex.exact = 1;
  clr_request r = CLR_REQUEST_INIT;
  r.kind = CLR_REQ_RANGES;
  r.op = CLR_SUM;
  r.type = CLR_FLOAT;
  r.n = A;
  r.input = buf_op(ab, 0);
  r.segments = buf_op(gb, 0);
  r.n_segments = count;
  r.output = buf_op(rb, 0);
  clr_status s = clr_enqueue(ctx, &r, 1, &gate, &e[0]);
  TU_EXPECT_STATUS(s, CLR_OK, "chain: ranges over A");
  clr_request x = CLR_REQUEST_INIT;
  x.op = CLR_SUM;
  x.type = CLR_FLOAT;
  x.n = count;
  x.input = buf_op(rb, 0);
  x.output = buf_op(vb, 0);
  x.options = &ex;
  s = clr_enqueue(ctx, &x, 1, &e[0], &e[1]);
  TU_EXPECT_STATUS(s, CLR_OK, "chain: exact sum of the results");
  x.op = CLR_MEAN;
  x.n = A;
  x.input = buf_op(ab, 0);
  x.output = buf_op(vb, 1);
  x.options = NULL;
  s = clr_enqueue(ctx, &x, 1, &e[1], &e[2]);
  TU_EXPECT_STATUS(s, CLR_OK, "chain: mean of A");
  r.op = CLR_MIN;
  r.n = count;
  r.input = buf_op(rb, 0);
  r.segments = buf_op(g2b, 0);
  r.n_segments = 3;
  r.output = buf_op(r2b, 0);
  s = clr_enqueue(ctx, &r, 1, &e[2], &e[3]);
  TU_EXPECT_STATUS(s, CLR_OK, "chain: ranges over the results");
  cl_int status = CL_COMPLETE;
  if (e[3])
    expect_cl(clGetEventInfo(e[3], CL_EVENT_COMMAND_EXECUTION_STATUS,
                             sizeof status, &status, NULL),
              "clGetEventInfo");
  TU_CHECK(e[0] && e[1] && e[2] && e[3] && status != CL_COMPLETE,
           "chain: four events, the last pending while the gate is unset");
  expect_cl(clSetUserEventStatus(gate, CL_COMPLETE), "clSetUserEventStatus");
  if (e[3])
    expect_cl(clWaitForEvents(1, &e[3]), "clWaitForEvents");
  float *res = tu_xmalloc(count * sizeof *res), v[2], r2[3];
  read_bytes(ctx, rb, 0, count * sizeof *res, res);
  read_bytes(ctx, vb, 0, sizeof v, v);
  read_bytes(ctx, r2b, 0, sizeof r2, r2);
  size_t bad = 0;
  double total = 0, all = 0;
  for (size_t k = 0; k < count; k++) {
    double s2 = 0;
    for (uint64_t j = 0; j < g[2 * k + 1]; j++)
      s2 += a[g[2 * k] + j];
    bad += res[k] != (float)s2;
    total += s2;
  }
  for (size_t i = 0; i < A; i++)
    all += a[i];
  float mins[3] = {INFINITY, INFINITY, INFINITY};
  for (int k = 0; k < 3; k++)
    for (uint64_t j = 0; j < g2[2 * k + 1]; j++)
      mins[k] = fminf(mins[k], res[g2[2 * k] + j]);
  TU_CHECK(bad == 0, "chain: %zu of %zu range sums wrong", bad, count);
  TU_CHECK(v[0] == (float)total, "chain: exact sum %.9g (want %.9g)",
           (double)v[0], total);
  TU_CHECK(v[1] == (float)(all / A), "chain: mean %.9g (want %.9g)",
           (double)v[1], all / A);
  TU_CHECK(r2[0] == mins[0] && r2[1] == mins[1] && r2[2] == mins[2],
           "chain: mins of the results %g %g %g (want %g %g %g)", (double)r2[0],
           (double)r2[1], (double)r2[2], (double)mins[0], (double)mins[1],
           (double)mins[2]);
  /* the timing has the passes' shapes */
  clr_timing tm = CLR_TIMING_INIT;
  TU_CHECK(clr_last_timing(ctx, &tm) == CLR_OK && tm.n_passes >= 5,
           "chain: the last call's timing has its passes (%zu)", tm.n_passes);
  for (int k = 0; k < 4; k++)
    if (e[k])
      clReleaseEvent(e[k]);
  clReleaseEvent(gate);
  cl_mem ms[6] = {ab, gb, g2b, rb, vb, r2b};
  for (int k = 0; k < 6; k++)
    clReleaseMemObject(ms[k]);
  free(res);
  free(g);
  free(a);
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "-v") == 0)
      tu_verbose = 1;
  clr_context *ctx = tu_context();
  ranges_matrix(ctx);
  tu_section("ranges enqueued: every type and op against CPU loops");
  bad_ranges(ctx);
  tu_section("bad ranges: the status, the good results, the next call");
  exact_sums(ctx);
  tu_section("exact sums and means enqueued: the blocking call's bits");
  means(ctx);
  tu_section("means enqueued: the host's division's bits");
  chain(ctx);
  tu_section("a chain of four clr_enqueue calls, one wait");
  clr_context_release(ctx);
  return tu_finish("test_async_ranges");
}
