/* Several devices (clr_group): reductions, exact sums, dot
 * products and scans split over two and three devices (PoCL's CPU device
 * twice: POCL_DEVICES="pthread pthread", tests/meson.build), over host
 * arrays and one buffer a device, every result against the CPU's; the
 * split itself; groups over the caller's contexts on sub-devices
 * (clCreateSubDevices); the platform (clr_platform_choose); and the
 * refusals. */
#include "exact_sum.h"
#include "reference.h"
#include "scan_reference.h"
#include "test_util.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static clr_group *make_group(const char *devices) {
  clr_group *g = NULL;
  char detail[512] = "";
  clr_status st = clr_group_create(NULL, devices, &g, detail, sizeof detail);
  if (st != CLR_OK || !g)
    tu_die("clr_group_create(\"%s\"): %s: %s", devices, clr_status_name(st),
           detail);
  return g;
}

static const size_t sizes[] = {1, 2, 3, 4095, 4096, 4097, 12289, 65537, 300007};
#define N_SIZES (sizeof sizes / sizeof sizes[0])

/* Weights that split n = 300007 three ways, evenly, and all to one. */
static const double weight_sets[][3] = {
    {1, 1, 1}, {1, 3, 0.5}, {1e-6, 1, 1e-6}};
#define N_WEIGHTS (sizeof weight_sets / sizeof weight_sets[0])

/* ------------------------------------------------------------ the split */

static void splits(clr_group *g) {
  size_t k = clr_group_size(g), counts[CLR_GROUP_MAX_DEVICES];
  double w[CLR_GROUP_MAX_DEVICES];
  TU_CHECK(clr_group_weights(g, w) == CLR_OK, "weights");
  double top = 0;
  for (size_t i = 0; i < k; i++) {
    TU_CHECK(w[i] > 0 && w[i] <= 1, "measured weight %zu is %g", i, w[i]);
    /* Quarter steps of a power of two: 4 log2 w is an integer. */
    double q = 4 * log2(w[i]);
    TU_CHECK(fabs(q - round(q)) < 1e-9, "weight %zu (%g) is no quarter step", i,
             w[i]);
    top = w[i] > top ? w[i] : top;
  }
  TU_CHECK(top == 1.0, "the largest weight is %g, not 1", top);
  for (size_t wi = 0; wi < N_WEIGHTS; wi++) {
    TU_CHECK(clr_group_set_weights(g, weight_sets[wi]) == CLR_OK,
             "set weights");
    double total = 0;
    for (size_t i = 0; i < k; i++)
      total += weight_sets[wi][i];
    for (size_t si = 0; si < N_SIZES; si++) {
      size_t n = sizes[si], sum = 0, upto = 0;
      double cum = 0;
      clr_group_split(g, n, counts);
      for (size_t i = 0; i < k; i++) {
        /* Independently: the boundary after device i is the cumulative
         * share of n rounded down to the grain (the last: n). */
        cum += weight_sets[wi][i];
        size_t want_end =
            i + 1 == k
                ? n
                : (size_t)(floor((double)n * (cum / total) / CLR_GROUP_GRAIN) *
                           CLR_GROUP_GRAIN);
        if (want_end > n)
          want_end = n;
        if (want_end < upto)
          want_end = upto;
        TU_CHECK(counts[i] == want_end - upto,
                 "split of %zu, weights %zu: device %zu gets %zu, want %zu", n,
                 wi, i, counts[i], want_end - upto);
        upto = want_end;
        sum += counts[i];
      }
      TU_CHECK(sum == n, "split of %zu sums to %zu", n, sum);
    }
  }
  double bad[3] = {1, 0, 1}, nan3[3] = {1, NAN, 1};
  TU_EXPECT_STATUS(clr_group_set_weights(g, bad), CLR_ERR_INVALID_ARGUMENT,
                   "a zero weight");
  TU_CHECK(strstr(clr_group_error(g), "weight 1") != NULL,
           "the zero weight is named: %s", clr_group_error(g));
  TU_EXPECT_STATUS(clr_group_set_weights(g, nan3), CLR_ERR_INVALID_ARGUMENT,
                   "a NaN weight");
}

/* ------------------------------------------------------------ reductions */

static const clr_type types[] = {CLR_FLOAT, CLR_DOUBLE, CLR_INT,
                                 CLR_UINT,  CLR_LONG,   CLR_HALF};
static const clr_op ops[] = {CLR_SUM,    CLR_PROD, CLR_MIN,    CLR_MAX,
                             CLR_AND,    CLR_OR,   CLR_ARGMIN, CLR_ARGMAX,
                             CLR_MINMAX, CLR_MEAN};

static void fill(clr_op op, clr_type t, size_t n, uint64_t seed, void *x) {
  tu_rng r = {tu_seed(seed, (uint64_t)op, (uint64_t)t, n)};
  for (size_t i = 0; i < n; i++) {
    if (tu_is_float(t)) {
      tu_store_f(t, x, i,
                 op == CLR_PROD ? 1.0 + (tu_unit(&r) - 0.5) / 512.0
                                : 2.0 * tu_unit(&r) - 1.0);
    } else if (op == CLR_AND || op == CLR_OR) {
      /* Mostly ones (and) or zeros (or), a flip in the last part. */
      int flip = i == n - 1 - n / 7;
      tu_store_i(t, x, i, (op == CLR_AND) != flip);
    } else if (op == CLR_PROD) {
      tu_store_i(t, x, i, tu_below(&r, 16) == 0 ? 3 : 1);
    } else {
      int64_t v = (int64_t)tu_below(&r, 2001) - 1000;
      tu_store_i(t, x, i, t == CLR_UINT ? v + 1000 : v);
    }
  }
  /* Ties across parts: the first index must win. */
  if ((op == CLR_ARGMIN || op == CLR_ARGMAX || op == CLR_MINMAX) && n > 5000 &&
      t != CLR_HALF && tu_is_float(t)) {
    tu_store_f(t, x, 4100, op == CLR_ARGMAX ? 7.0 : -7.0);
    tu_store_f(t, x, n - 3, op == CLR_ARGMAX ? 7.0 : -7.0);
  }
}

static void check_reduction(clr_group *g, const clr_options *o, clr_op op,
                            clr_type t, const void *x, size_t n,
                            const char *what) {
  clr_value got;
  memset(&got, 0, sizeof got);
  clr_status st = clr_group_reduce_host(g, o, op, t, x, n, &got);
  if (!TU_CHECK(st == CLR_OK, "%s: %s (%s)", what, clr_status_name(st),
                clr_group_error(g)))
    return;
  clr_group_timing tm;
  clr_group_last_timing(g, &tm);
  clr_type rt = clr_options_result_type(o, op, t);
  clr_reference ref;
  clr_ref_reduce_to(op, t, rt, x, n, &ref);
  clr_check chk;
  clr_ref_check(&ref, &got, tm.error_depth, &chk);
  char gb[64], wb[64];
  TU_CHECK(got.type == rt && chk.ok,
           "%s: got %s, want %s (error %g, bound %g, depth %zu)", what,
           tu_fmt(&got, gb, sizeof gb), tu_fmt(&ref.value, wb, sizeof wb),
           chk.error, chk.bound, tm.error_depth);
  TU_CHECK(tm.devices_used >= 1 && tm.devices_used <= clr_group_size(g) &&
               tm.total_ms >= tm.parts_ms,
           "%s: timing (%zu devices, total %g, parts %g)", what,
           tm.devices_used, tm.total_ms, tm.parts_ms);
}

static void reductions(clr_group *g) {
  for (size_t wi = 0; wi < N_WEIGHTS; wi++) {
    clr_group_set_weights(g, weight_sets[wi]);
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
      clr_type t = types[ti];
      if (!tu_type_available(t))
        continue;
      for (size_t si = 0; si < N_SIZES; si++) {
        size_t n = sizes[si];
        /* Every size with the first weights; the others on the sizes
         * that split. */
        if (wi > 0 && n < 4097)
          continue;
        void *x = tu_xmalloc(n * clr_type_size(t));
        for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
          clr_op op = ops[oi];
          if (clr_op_supports(op, t) != CLR_OK ||
              (op == CLR_MEAN && (t == CLR_LONG)))
            continue;
          fill(op, t, n, 1, x);
          char what[160];
          snprintf(what, sizeof what, "%s of %s n=%zu weights %zu",
                   clr_op_name(op), clr_type_name(t), n, wi);
          check_reduction(g, NULL, op, t, x, n, what);
        }
        free(x);
      }
    }
  }
}

/* Accumulator words at the extremes: merging words beyond 2^62 (which once
 * overflowed and returned CLR_OK with -9.6e-35) is refused with dst left
 * as it was; words at 2^62 merge exactly (2^62 + 2^62 in word w is 2^31 in
 * word w + 1), and a top word that would pass 2^62 is refused. */
static void exact_acc_extremes(void) {
  static const int64_t bad[] = {INT64_MAX, INT64_MIN, ((int64_t)1 << 62) + 1,
                                -((int64_t)1 << 62) - 1};
  static const clr_type types[] = {CLR_FLOAT, CLR_DOUBLE};
  for (size_t t = 0; t < 2; t++) {
    clr_exact_acc x, y, keep, want;
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++)
      for (int side = 0; side < 2; side++) {
        clr_exact_acc_init(&x, types[t]);
        clr_exact_acc_init(&y, types[t]);
        x.words[2] = 5;
        (side ? &x : &y)->words[3] = bad[k];
        keep = x;
        TU_CHECK(clr_exact_acc_merge(&x, &y) == CLR_ERR_INVALID_ARGUMENT &&
                     memcmp(&x, &keep, sizeof x) == 0,
                 "%s accumulator merge with a word %lld (%s) refused, dst "
                 "unchanged",
                 clr_type_name(types[t]), (long long)bad[k],
                 side ? "dst" : "src");
      }
    clr_exact_acc_init(&x, types[t]);
    clr_exact_acc_init(&y, types[t]);
    clr_exact_acc_init(&want, types[t]);
    x.words[3] = y.words[3] = (int64_t)1 << 62;
    x.words[1] = y.words[1] = 7;
    want.words[4] = (int64_t)1 << 31;
    want.words[1] = 14;
    x.flags = y.flags = want.flags = 8; /* (an element other than -0) */
    clr_value got, exp;
    clr_status st = clr_exact_acc_merge(&x, &y);
    TU_CHECK(st == CLR_OK && clr_exact_acc_value(&x, &got) == CLR_OK &&
                 clr_exact_acc_value(&want, &exp) == CLR_OK &&
                 tu_same(&got, &exp),
             "%s accumulators with words at 2^62 merge exactly: %s",
             clr_type_name(types[t]), clr_status_name(st));
    size_t top = types[t] == CLR_FLOAT ? 11 : 68;
    clr_exact_acc_init(&x, types[t]);
    clr_exact_acc_init(&y, types[t]);
    x.words[top] = y.words[top] = ((int64_t)1 << 62) - 1;
    TU_EXPECT_STATUS(clr_exact_acc_merge(&x, &y), CLR_ERR_INVALID_ARGUMENT,
                     "a top word passing 2^62");
  }
  tu_section("exact accumulators: words at the extremes");
}

/* Exact sums: the CPU's exact sum, bit for bit, for every split. */
static void exact_sums(clr_group *g) {
  for (int ti = 0; ti < 2; ti++) {
    clr_type t = ti ? CLR_DOUBLE : CLR_FLOAT;
    if (!tu_type_available(t))
      continue;
    size_t n = 300007;
    void *x = tu_xmalloc(n * clr_type_size(t));
    tu_rng r = {tu_seed(5, (uint64_t)t, n, 0)};
    /* Wide exponents and cancellation: a rounded sum would differ. */
    for (size_t i = 0; i < n; i++)
      tu_store_f(t, x, i,
                 ldexp(2.0 * tu_unit(&r) - 1.0, (int)tu_below(&r, 60) - 30));
    clr_value want;
    clr_ref_exact_sum(t, x, n, &want);
    clr_options o;
    clr_options_init(&o);
    o.exact = 1;
    for (size_t wi = 0; wi < N_WEIGHTS; wi++) {
      clr_group_set_weights(g, weight_sets[wi]);
      clr_value got;
      clr_status st = clr_group_reduce_host(g, &o, CLR_SUM, t, x, n, &got);
      char gb[64], wb[64];
      TU_CHECK(st == CLR_OK && tu_same(&got, &want),
               "exact %s sum, weights %zu: %s, got %s, want %s",
               clr_type_name(t), wi, clr_status_name(st),
               tu_fmt(&got, gb, sizeof gb), tu_fmt(&want, wb, sizeof wb));
    }
    /* The public accumulator: pieces summed apart, merged in another
     * order, the same bits. */
    clr_context *c0 = clr_group_context(g, 0);
    clr_exact_acc a, b, c;
    clr_exact_acc_init(&a, t);
    clr_exact_acc_init(&b, t);
    clr_exact_acc_init(&c, t);
    size_t cut1 = n / 3, cut2 = n - 1000;
    size_t es = clr_type_size(t);
    clr_status s1 = clr_exact_add_host(c0, NULL, t, x, cut1, &a);
    clr_status s2 =
        clr_exact_add_host(c0, NULL, t, (char *)x + cut2 * es, n - cut2, &b);
    clr_status s3 =
        clr_exact_add_host(c0, NULL, t, (char *)x + cut1 * es, cut2 - cut1, &c);
    clr_exact_acc_merge(&b, &a);
    clr_exact_acc_merge(&b, &c);
    clr_value got;
    TU_CHECK(s1 == CLR_OK && s2 == CLR_OK && s3 == CLR_OK &&
                 clr_exact_acc_value(&b, &got) == CLR_OK &&
                 tu_same(&got, &want),
             "exact %s sum from three accumulators", clr_type_name(t));
    free(x);
  }
  /* Refusals of the accumulator API. */
  clr_exact_acc a;
  float f[4] = {1, 2, 3, 4};
  TU_EXPECT_STATUS(clr_exact_acc_init(&a, CLR_INT), CLR_ERR_INVALID_ARGUMENT,
                   "an int accumulator");
  TU_EXPECT_STATUS(clr_exact_acc_init(&a, CLR_HALF), CLR_ERR_INVALID_ARGUMENT,
                   "a half accumulator");
  clr_exact_acc_init(&a, CLR_DOUBLE);
  TU_EXPECT_STATUS(
      clr_exact_add_host(clr_group_context(g, 0), NULL, CLR_FLOAT, f, 4, &a),
      CLR_ERR_INVALID_ARGUMENT, "float data into a double acc");
  TU_CHECK(strstr(clr_context_error(clr_group_context(g, 0)), "float") != NULL,
           "the mismatch is named: %s",
           clr_context_error(clr_group_context(g, 0)));
  clr_exact_acc fa;
  clr_exact_acc_init(&fa, CLR_FLOAT);
  TU_EXPECT_STATUS(clr_exact_acc_merge(&a, &fa), CLR_ERR_INVALID_ARGUMENT,
                   "merging float into double");
  a.words[3] = INT64_MAX;
  TU_EXPECT_STATUS(clr_exact_acc_value(&a, &(clr_value){0}),
                   CLR_ERR_INVALID_ARGUMENT, "a word past 2^62");
  exact_acc_extremes();
}

/* Indices and a map expression's i count over the whole array: the parts
 * get their first element's index (clr_options.index_base). */
static void indices(clr_group *g) {
  size_t n = 300007;
  float *x = tu_xmalloc(n * sizeof *x);
  for (size_t i = 0; i < n; i++)
    x[i] = (float)(i % 1000);
  clr_group_set_weights(g, weight_sets[1]);
  clr_options o;
  clr_options_init(&o);
  o.map = CLR_MAP_EXPR;
  o.map_expr = "(long)i";
  o.accumulate_in = CLR_LONG;
  clr_value v;
  clr_status st = clr_group_reduce_host(g, &o, CLR_SUM, CLR_FLOAT, x, n, &v);
  TU_CHECK(st == CLR_OK && v.v.l == (int64_t)(n * (n - 1) / 2),
           "sum of i over %zu: %s %lld", n, clr_group_error(g),
           (long long)v.v.l);
  /* An index base of the caller's: added to the whole array's. */
  o.index_base = 1000000;
  st = clr_group_reduce_host(g, &o, CLR_SUM, CLR_FLOAT, x, n, &v);
  TU_CHECK(st == CLR_OK &&
               v.v.l == (int64_t)(n * (n - 1) / 2 + 1000000 * (uint64_t)n),
           "sum of i from 1000000: %lld", (long long)v.v.l);
  clr_options_init(&o);
  x[n - 5] = 5000;
  x[200000] = 5000;
  st = clr_group_reduce_host(g, &o, CLR_ARGMAX, CLR_FLOAT, x, n, &v);
  TU_CHECK(st == CLR_OK && v.index == 200000 && v.v.f == 5000,
           "argmax index %llu", (unsigned long long)v.index);
  free(x);
}

static void dots(clr_group *g) {
  clr_group_set_weights(g, weight_sets[1]);
  for (size_t si = 0; si < N_SIZES; si++) {
    size_t n = sizes[si];
    double *x = tu_xmalloc(n * sizeof *x), *y = tu_xmalloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) {
      x[i] = (double)(i % 13) - 6;
      y[i] = (double)(i % 5) + 1;
    }
    if (!tu_type_available(CLR_DOUBLE)) {
      free(x);
      free(y);
      return;
    }
    long double want = 0;
    for (size_t i = 0; i < n; i++)
      want += (long double)x[i] * y[i];
    clr_value v;
    clr_status st = clr_group_dot_host(g, NULL, CLR_DOUBLE, x, y, n, &v);
    /* Small integers: every partial sum exact. */
    TU_CHECK(st == CLR_OK && v.v.d == (double)want, "dot n=%zu: %s %g vs %g", n,
             clr_group_error(g), v.v.d, (double)want);
    free(x);
    free(y);
  }
}

/* ------------------------------------------------------------ scans */

static const clr_op scan_ops[] = {CLR_SUM, CLR_PROD, CLR_MIN, CLR_MAX};
static const clr_type scan_types[] = {CLR_FLOAT, CLR_DOUBLE, CLR_INT,
                                      CLR_ULONG};

static void scans(clr_group *g) {
  for (size_t wi = 0; wi < N_WEIGHTS; wi++) {
    clr_group_set_weights(g, weight_sets[wi]);
    for (size_t ti = 0; ti < sizeof scan_types / sizeof scan_types[0]; ti++) {
      clr_type t = scan_types[ti];
      if (!tu_type_available(t))
        continue;
      size_t es = clr_type_size(t);
      for (size_t si = 0; si < N_SIZES; si++) {
        size_t n = sizes[si];
        if (wi > 0 && n < 4097)
          continue;
        void *x = tu_xmalloc(n * es), *y = tu_xmalloc(n * es);
        for (size_t oi = 0; oi < sizeof scan_ops / sizeof scan_ops[0]; oi++) {
          clr_op op = scan_ops[oi];
          fill(op, t, n, 2, x);
          for (int v = 0; v < 3; v++) {
            /* inclusive; exclusive; inclusive in place with a carry-in */
            clr_options o;
            clr_options_init(&o);
            o.exclusive = v == 1;
            clr_value carry;
            memset(&carry, 0, sizeof carry);
            carry.type = t;
            if (v == 2) {
              if (tu_is_float(t))
                tu_store_f(t, &carry.v, 0, op == CLR_PROD ? 1.5 : 0.25);
              else
                tu_store_i(t, &carry.v, 0, op == CLR_PROD ? 3 : 5);
              o.carry_in = &carry.v;
            }
            void *out = v == 2 ? tu_xmalloc(n * es) : y;
            if (v == 2)
              memcpy(out, x, n * es);
            clr_status st =
                clr_group_scan_host(g, &o, op, t, v == 2 ? out : x, out, n);
            char what[160];
            snprintf(what, sizeof what, "%s %s scan of %s n=%zu weights %zu",
                     v == 1   ? "exclusive"
                     : v == 2 ? "in-place carried"
                              : "inclusive",
                     clr_op_name(op), clr_type_name(t), n, wi);
            if (TU_CHECK(st == CLR_OK, "%s: %s (%s)", what, clr_status_name(st),
                         clr_group_error(g))) {
              clr_group_timing tm;
              clr_group_last_timing(g, &tm);
              clr_scan_check chk;
              if (v == 2) {
                /* The reference scans the carry followed by the data. */
                void *xc = tu_xmalloc((n + 1) * es);
                void *oc = tu_xmalloc((n + 1) * es);
                memcpy(xc, &carry.v, es);
                memcpy((char *)xc + es, x, n * es);
                memcpy(oc, &carry.v, es);
                memcpy((char *)oc + es, out, n * es);
                clr_ref_scan_check_to(op, t, t, 0, xc, oc, n + 1,
                                      tm.error_depth, 0, &chk);
                free(xc);
                free(oc);
              } else {
                clr_ref_scan_check_to(op, t, t, o.exclusive, x, out, n,
                                      tm.error_depth, 0, &chk);
              }
              TU_CHECK(chk.ok, "%s: %zu elements wrong, the worst at %zu", what,
                       chk.n_bad, chk.worst_index);
            }
            if (v == 2)
              free(out);
          }
        }
        free(x);
        free(y);
      }
    }
  }
  /* A scan refused on its devices names the device. */
  int32_t xi[8] = {1, 2, 3, 4, 5, 6, 7, 8}, yi[8];
  TU_EXPECT_STATUS(clr_group_scan_host(g, NULL, CLR_AND, CLR_INT, xi, yi, 8),
                   CLR_ERR_UNSUPPORTED, "an and scan");
  TU_CHECK(strstr(clr_group_error(g), "device ") != NULL,
           "the failing device is named: %s", clr_group_error(g));
}

/* ------------------------------------------------------------ buffers */

/* One buffer a device, the array's parts in device order (one empty). */
static void buffers(clr_group *g) {
  size_t k = clr_group_size(g);
  size_t n = 100003, counts[CLR_GROUP_MAX_DEVICES], offs[CLR_GROUP_MAX_DEVICES];
  float *x = tu_xmalloc(n * sizeof *x), *y = tu_xmalloc(n * sizeof *y);
  tu_rng r = {tu_seed(7, 7, n, 7)};
  for (size_t i = 0; i < n; i++)
    x[i] = (float)(2.0 * tu_unit(&r) - 1.0);
  /* Device 0 empty, then the rest in unequal parts. */
  counts[0] = 0;
  for (size_t i = 1; i < k; i++)
    counts[i] = i + 1 < k ? n / (2 * k) + i * 17 : 0;
  size_t used = 0;
  for (size_t i = 1; i + 1 < k; i++)
    used += counts[i];
  counts[k - 1] = n - used;
  cl_mem in[CLR_GROUP_MAX_DEVICES], out[CLR_GROUP_MAX_DEVICES];
  size_t at = 0;
  for (size_t i = 0; i < k; i++) {
    offs[i] = 3 + i; /* elements before each part */
    cl_int e1, e2;
    cl_context cl = clr_context_cl_context(clr_group_context(g, i));
    size_t bytes = (counts[i] + offs[i]) * sizeof(float);
    in[i] = clCreateBuffer(cl, CL_MEM_READ_WRITE, bytes, NULL, &e1);
    out[i] = clCreateBuffer(cl, CL_MEM_READ_WRITE, bytes, NULL, &e2);
    if (e1 != CL_SUCCESS || e2 != CL_SUCCESS)
      tu_die("clCreateBuffer: %d %d", e1, e2);
    if (counts[i] &&
        clEnqueueWriteBuffer(clr_context_queue(clr_group_context(g, i)), in[i],
                             CL_TRUE, offs[i] * sizeof(float),
                             counts[i] * sizeof(float), x + at, 0, NULL,
                             NULL) != CL_SUCCESS)
      tu_die("clEnqueueWriteBuffer");
    at += counts[i];
  }
  clr_value v;
  clr_status st = clr_group_reduce_buffers(g, NULL, CLR_SUM, CLR_FLOAT, in,
                                           offs, counts, &v);
  clr_group_timing tm;
  clr_group_last_timing(g, &tm);
  clr_reference ref;
  clr_check chk;
  clr_ref_reduce_to(CLR_SUM, CLR_FLOAT, CLR_FLOAT, x, n, &ref);
  clr_ref_check(&ref, &v, tm.error_depth, &chk);
  TU_CHECK(st == CLR_OK && chk.ok && tm.devices_used == k - 1,
           "sum over %zu buffers: %s, error %g bound %g, %zu used", k,
           clr_group_error(g), chk.error, chk.bound, tm.devices_used);
  st = clr_group_reduce_buffers(g, NULL, CLR_ARGMIN, CLR_FLOAT, in, offs,
                                counts, &v);
  clr_ref_reduce_to(CLR_ARGMIN, CLR_FLOAT, CLR_FLOAT, x, n, &ref);
  TU_CHECK(st == CLR_OK && v.index == ref.value.index,
           "argmin over buffers: index %llu, want %llu",
           (unsigned long long)v.index, (unsigned long long)ref.value.index);
  st = clr_group_scan_buffers(g, NULL, CLR_SUM, CLR_FLOAT, in, offs, out, offs,
                              counts);
  clr_group_last_timing(g, &tm);
  at = 0;
  for (size_t i = 0; i < k && st == CLR_OK; i++) {
    if (counts[i] &&
        clEnqueueReadBuffer(clr_context_queue(clr_group_context(g, i)), out[i],
                            CL_TRUE, offs[i] * sizeof(float),
                            counts[i] * sizeof(float), y + at, 0, NULL,
                            NULL) != CL_SUCCESS)
      tu_die("clEnqueueReadBuffer");
    at += counts[i];
  }
  if (TU_CHECK(st == CLR_OK, "scan over buffers: %s", clr_group_error(g))) {
    clr_scan_check sc;
    clr_ref_scan_check_to(CLR_SUM, CLR_FLOAT, CLR_FLOAT, 0, x, y, n,
                          tm.error_depth, 0, &sc);
    TU_CHECK(sc.ok, "scan over buffers: %zu wrong", sc.n_bad);
  }
  /* A buffer of another device's context is refused, naming the device. */
  if (k > 1) {
    cl_mem swapped[CLR_GROUP_MAX_DEVICES];
    memcpy(swapped, in, k * sizeof *in);
    swapped[k - 1] = in[k - 2];
    size_t c2[CLR_GROUP_MAX_DEVICES];
    for (size_t i = 0; i < k; i++)
      c2[i] = 1;
    st = clr_group_reduce_buffers(g, NULL, CLR_SUM, CLR_FLOAT, swapped, NULL,
                                  c2, &v);
    TU_CHECK(st == CLR_ERR_INVALID_ARGUMENT &&
                 strstr(clr_group_error(g), "device ") != NULL,
             "a buffer of another context: %s (%s)", clr_status_name(st),
             clr_group_error(g));
  }
  for (size_t i = 0; i < k; i++) {
    clReleaseMemObject(in[i]);
    clReleaseMemObject(out[i]);
  }
  free(x);
  free(y);
}

/* ------------------------------------------------------------ sub-devices */

/* The caller's contexts on the sub-devices of device 0 (one compute unit
 * each): a group over them reduces and scans as any. */
static void sub_devices(void) {
  cl_device_id dev = tu_cl_device();
  cl_device_partition_property props[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
  cl_uint count = 0;
  cl_device_id subs[16];
  cl_int err = clCreateSubDevices(dev, props, 16, subs, &count);
  if (!TU_CHECK(err == CL_SUCCESS && count >= 1,
                "clCreateSubDevices: %d, %u sub-devices", err, count))
    return;
  if (count > 16)
    count = 16;
  clr_context *ctxs[16];
  cl_context cls[16];
  for (cl_uint i = 0; i < count; i++) {
    cl_int e1, e2;
    cls[i] = clCreateContext(NULL, 1, &subs[i], NULL, NULL, &e1);
    cl_command_queue q =
        e1 == CL_SUCCESS ? clCreateCommandQueue(cls[i], subs[i],
                                                CL_QUEUE_PROFILING_ENABLE, &e2)
                         : NULL;
    char detail[256] = "";
    if (e1 != CL_SUCCESS || e2 != CL_SUCCESS ||
        clr_context_create_from_queue(q, NULL, &ctxs[i], detail,
                                      sizeof detail) != CLR_OK)
      tu_die("a context on sub-device %u: %d %d %s", i, e1, e2, detail);
    clReleaseCommandQueue(q); /* the context keeps it */
  }
  clr_group *g = NULL;
  char detail[256] = "";
  clr_status st = clr_group_create_from(ctxs, count, &g, detail, sizeof detail);
  if (TU_CHECK(st == CLR_OK && clr_group_size(g) == count,
               "a group of %u sub-devices: %s", count, detail)) {
    size_t n = 1000003;
    int32_t *x = tu_xmalloc(n * sizeof *x);
    int64_t *y = tu_xmalloc(n * sizeof *y);
    int64_t want = 0;
    for (size_t i = 0; i < n; i++) {
      x[i] = (int32_t)(i % 1001) - 500 + (int32_t)(i % 3) * 1000000;
      want += x[i];
    }
    clr_value v;
    st = clr_group_reduce_host(g, NULL, CLR_SUM, CLR_INT, x, n, &v);
    TU_CHECK(st == CLR_OK && v.v.l == want, "sum on sub-devices: %s %lld",
             clr_group_error(g), (long long)v.v.l);
    clr_options o;
    clr_options_init(&o);
    o.accumulate_in = CLR_LONG;
    st = clr_group_scan_host(g, &o, CLR_SUM, CLR_INT, x, y, n);
    int64_t run = 0;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
      run += x[i];
      bad += y[i] != run;
    }
    TU_CHECK(st == CLR_OK && bad == 0,
             "int-into-long scan on sub-devices: %s, "
             "%zu wrong",
             clr_group_error(g), bad);
    free(x);
    free(y);
  }
  clr_group_release(g);
  /* The caller's contexts outlive the group. */
  for (cl_uint i = 0; i < count; i++) {
    float one = 1;
    clr_value v;
    TU_CHECK(clr_reduce_host(ctxs[i], NULL, CLR_SUM, CLR_FLOAT, &one, 1, &v) ==
                     CLR_OK &&
                 v.v.f == 1,
             "context %u after its group", i);
  }
  /* Released when no sub-device has work left: PoCL 3.1's pthread driver
   * crashed (a released event's callback) when one sub-device's context
   * went while another's command completed. */
  for (cl_uint i = 0; i < count; i++) {
    clr_context_release(ctxs[i]);
    clReleaseContext(cls[i]);
  }
  for (cl_uint i = 0; i < count; i++)
    clReleaseDevice(subs[i]);
  clr_context *dup[2] = {NULL, NULL};
  TU_EXPECT_STATUS(clr_group_create_from(dup, 2, &g, NULL, 0),
                   CLR_ERR_INVALID_ARGUMENT, "NULL contexts");
}

/* ------------------------------------------------------------ refusals */

static void refusals(clr_group *g) {
  clr_group *h = (clr_group *)1;
  char detail[256];
  TU_EXPECT_STATUS(clr_group_create(NULL, "", &h, detail, sizeof detail),
                   CLR_ERR_INVALID_ARGUMENT, "an empty device list");
  TU_EXPECT_STATUS(clr_group_create(NULL, "0,,1", &h, detail, sizeof detail),
                   CLR_ERR_INVALID_ARGUMENT, "an empty item");
  TU_CHECK(strstr(detail, "empty") != NULL, "empty item: %s", detail);
  TU_EXPECT_STATUS(clr_group_create(NULL, "0,9", &h, detail, sizeof detail),
                   CLR_ERR_NO_DEVICE, "a device that is not there");
  TU_CHECK(strstr(detail, "device 1") != NULL && h == NULL,
           "the missing device is named: %s", detail);
  TU_EXPECT_STATUS(clr_group_create(NULL, "0", NULL, NULL, 0),
                   CLR_ERR_INVALID_ARGUMENT, "no out pointer");
  clr_value v;
  float f[3] = {1, 2, 3};
  TU_EXPECT_STATUS(clr_group_reduce_host(g, NULL, CLR_SUM, CLR_FLOAT, f, 0, &v),
                   CLR_ERR_INVALID_ARGUMENT, "n = 0");
  TU_EXPECT_STATUS(
      clr_group_reduce_host(g, NULL, CLR_SUM, CLR_FLOAT, NULL, 3, &v),
      CLR_ERR_INVALID_ARGUMENT, "NULL data");
  TU_EXPECT_STATUS(clr_group_reduce_host(g, NULL, CLR_AND, CLR_FLOAT, f, 3, &v),
                   CLR_ERR_UNSUPPORTED, "and of floats");
  TU_EXPECT_STATUS(
      clr_group_reduce_host(NULL, NULL, CLR_SUM, CLR_FLOAT, f, 3, &v),
      CLR_ERR_INVALID_ARGUMENT, "a NULL group");
  TU_CHECK(clr_group_size(NULL) == 0 && clr_group_context(g, 99) == NULL,
           "size and context past the end");
  clr_group_release(NULL);
}

/* ------------------------------------------------------------ platform */

/* clr_platform_choose names the default group's platform: by default, by
 * its index, by its name in capitals; a name no platform has is refused. */
static void platform(clr_group *g) {
  clr_device_desc d;
  unsigned index = 99;
  char detail[256], sel[128];
  if (!TU_CHECK(clr_context_device(clr_group_context(g, 0), &d) == CLR_OK,
                "device 0's description"))
    return;
  TU_EXPECT_STATUS(clr_platform_choose(NULL, &index, detail, sizeof detail),
                   CLR_OK, "the default platform");
  TU_CHECK(index == d.platform_index, "default platform %u, the group's %u",
           index, d.platform_index);
  snprintf(sel, sizeof sel, "%u", d.platform_index);
  index = 99;
  TU_EXPECT_STATUS(clr_platform_choose(sel, &index, NULL, 0), CLR_OK,
                   "the platform by index");
  TU_CHECK(index == d.platform_index, "platform '%s' is %u", sel, index);
  for (size_t i = 0; i < sizeof sel; i++)
    sel[i] = (char)toupper((unsigned char)d.platform_name[i]);
  index = 99;
  TU_EXPECT_STATUS(clr_platform_choose(sel, &index, detail, sizeof detail),
                   CLR_OK, "the platform by its name in capitals");
  TU_CHECK(index == d.platform_index, "platform '%s' is %u", sel, index);
  TU_EXPECT_STATUS(clr_platform_choose("no-such-platform-xyzzy", &index, detail,
                                       sizeof detail),
                   CLR_ERR_NO_PLATFORM, "a platform that is not there");
  TU_CHECK(strstr(detail, "xyzzy") != NULL, "the name is repeated: %s", detail);
  TU_EXPECT_STATUS(clr_platform_choose(NULL, NULL, NULL, 0),
                   CLR_ERR_INVALID_ARGUMENT, "no index pointer");
}

int main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  clr_context *probe = tu_context(); /* fills tu_device */
  clr_context_release(probe);
  clr_group *all = make_group("all");
  TU_CHECK(clr_group_size(all) == 2,
           "POCL_DEVICES=\"pthread pthread\": 'all' has %zu devices, want 2",
           clr_group_size(all));
  clr_group_release(all);
  /* Three parts on two devices: device 1 twice. */
  clr_group *g = make_group("0,1,1");
  TU_CHECK(clr_group_size(g) == 3, "'0,1,1' has %zu devices",
           clr_group_size(g));
  splits(g);
  tu_section("the split");
  reductions(g);
  tu_section("reductions");
  exact_sums(g);
  tu_section("exact sums");
  indices(g);
  tu_section("indices and index_base");
  dots(g);
  tu_section("dot products");
  scans(g);
  tu_section("scans");
  buffers(g);
  tu_section("buffers");
  refusals(g);
  tu_section("refusals");
  platform(g);
  tu_section("platform");
  clr_group_release(g);
  sub_devices();
  tu_section("sub-devices");
  return tu_finish("test_group");
}
