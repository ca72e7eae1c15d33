/* Exact sums (clr_options.exact): one bit pattern whatever the shape, the
 * tuning, the chunking, the order of the elements or the path (host array
 * or cl_mem), and that pattern is the CPU's exact sum
 * (src/check/exact_sum.c, itself checked against rational arithmetic by
 * test_exact_rational.py).  Also: every scan kernel repeats its float
 * output bits from run to run.
 *
 * Data: float and double sets where a plain sum is wrong by far, over
 * sizes 1, 2, 3, primes, 2^k +- 1: values across the whole exponent range
 * (denormals to near the maximum) with random signs, cancelling pairs of
 * huge values around small ones, many equal values, alternating signs
 * near a tie, and partial sums that overflow while the total does not. */
#include "exact_sum.h"
#include "test_util.h"

#include <float.h>

typedef enum data_kind {
  WIDE,        /* the whole exponent range, random signs            */
  CANCEL,      /* +-huge pairs around small values                  */
  EQUAL,       /* one value, many times                             */
  ALTERNATING, /* +-(1 + k ulp): the sum is a sum of tiny parts      */
  OVERFLOWING, /* partial sums pass the maximum, the total does not */
  KIND_COUNT
} data_kind;

static const char *kind_name[KIND_COUNT] = {"wide", "cancel", "equal",
                                            "alternating", "overflowing"};

/* Element i of a set, as a double (exact in float for the float sets). */
static double element(clr_type t, data_kind k, tu_rng *r, size_t i) {
  int fl = t == CLR_FLOAT;
  double big = fl ? FLT_MAX : DBL_MAX;
  int emin = fl ? -149 : -1074, emax = fl ? 127 : 1023;
  double sign = (tu_next(r) & 1) ? -1.0 : 1.0;
  switch (k) {
  case WIDE: {
    int e = emin + (int)tu_below(r, (uint64_t)(emax - emin + 1));
    double m = 1.0 + tu_unit(r);
    double x = ldexp(m, e);
    if (fl && (isinf((float)x) || x > FLT_MAX))
      x = FLT_MAX;
    return sign * (e <= emin + 2 ? ldexp(1.0, e) : x);
  }
  case CANCEL:
    if (i % 3 == 2)
      return sign * tu_unit(r);
    return (i % 3 == 0 ? 1.0 : -1.0) * ldexp(1.0, fl ? 100 : 900);
  case EQUAL:
    return 0.1;
  case ALTERNATING:
    return (i % 2 ? -1.0 : 1.0) *
           (1.0 + ldexp((double)(i % 1024), fl ? -23 : -52));
  default: /* OVERFLOWING: big, big, -big, -big, small ... */
    switch (i % 5) {
    case 0:
    case 1:
      return big;
    case 2:
    case 3:
      return -big;
    default:
      return sign * tu_unit(r);
    }
  }
}

static void *make_set(clr_type t, data_kind k, size_t n, uint64_t seed) {
  tu_rng r = {seed};
  void *data = tu_xmalloc(n * clr_type_size(t));
  for (size_t i = 0; i < n; i++) {
    double x = element(t, k, &r, i);
    if (t == CLR_FLOAT)
      ((float *)data)[i] = (float)x;
    else
      ((double *)data)[i] = x;
  }
  return data;
}

static void shuffle(clr_type t, void *data, size_t n, uint64_t seed) {
  tu_rng r = {seed};
  size_t es = clr_type_size(t);
  unsigned char tmp[8];
  for (size_t i = n; i > 1; i--) {
    size_t j = (size_t)tu_below(&r, i);
    unsigned char *a = (unsigned char *)data + (i - 1) * es;
    unsigned char *b = (unsigned char *)data + j * es;
    memcpy(tmp, a, es);
    memcpy(a, b, es);
    memcpy(b, tmp, es);
  }
}

/* Launch shapes and tunings.  Each distinct (vector width, layout, terms,
 * atomics) is one kernel build; work-group sizes and coarse factors are
 * launch arguments. */
typedef struct shape {
  size_t wg, coarse;
  unsigned vec;
  clr_layout layout;
  unsigned terms, atomics64;
} shape;

static const shape shapes[] = {
    {0, 0, 0, CLR_LAYOUT_AUTO, 0, 1}, /* the device's tuning */
    {1, 0, 1, CLR_LAYOUT_STRIDED, 2, 1},
    {64, 7, 1, CLR_LAYOUT_STRIDED, 2, 1},
    {256, 0, 16, CLR_LAYOUT_CONTIGUOUS, 1, 1},
    {32, 3, 4, CLR_LAYOUT_STRIDED, 3, 0},
    {128, 1000, 2, CLR_LAYOUT_CONTIGUOUS, 8, 0},
    {16, 0, 16, CLR_LAYOUT_STRIDED, 4, 1},
};
#define N_SHAPES (sizeof shapes / sizeof *shapes)

static clr_tuning base_tuning = CLR_TUNING_INIT;

static void apply_shape(clr_context *ctx, const shape *s, clr_options *o) {
  clr_options_init(o);
  o->exact = 1;
  o->wg_size = s->wg;
  o->coarse = s->coarse;
  o->vector_width = s->vec;
  o->layout = s->layout;
  clr_tuning t = base_tuning;
  if (s->terms)
    t.exact_terms = s->terms;
  t.exact_int64_atomics = s->atomics64;
  if (clr_set_tuning(ctx, &t) != CLR_OK)
    tu_die("clr_set_tuning: %s", clr_context_error(ctx));
}

static void describe(const shape *s, char *buf, size_t size) {
  snprintf(buf, size, "wg=%zu coarse=%zu vec=%u layout=%d terms=%u atomics=%u",
           s->wg, s->coarse, s->vec, (int)s->layout, s->terms, s->atomics64);
}

static void expect_same(const clr_value *want, clr_status st,
                        const clr_value *got, const char *what) {
  char a[64], b[64];
  if (!TU_CHECK(st == CLR_OK, "%s: %s", what, clr_status_name(st)))
    return;
  TU_CHECK(clr_ref_exact_equal(want, got), "%s: got %s, exact %s", what,
           tu_fmt(got, a, sizeof a), tu_fmt(want, b, sizeof b));
}

/* Every shape, three orders, the buffer path at an odd offset, and the
 * chunked context, for one set. */
static void check_set(clr_context *ctx, clr_context *chunked, clr_type t,
                      data_kind k, size_t n) {
  char what[256], sh[128];
  size_t es = clr_type_size(t);
  uint64_t seed = tu_seed(11, (uint64_t)t, (uint64_t)k, n);
  void *data = make_set(t, k, n, seed);
  clr_value want, got;
  clr_ref_exact_sum(t, data, n, &want);
  for (int order = 0; order < 3; order++) {
    if (order)
      shuffle(t, data, n, seed + (uint64_t)order);
    for (size_t s = 0; s < N_SHAPES; s++) {
      clr_options o;
      apply_shape(ctx, &shapes[s], &o);
      describe(&shapes[s], sh, sizeof sh);
      snprintf(what, sizeof what, "%s %s n=%zu order %d, %s", clr_type_name(t),
               kind_name[k], n, order, sh);
      clr_status st = clr_reduce_host(ctx, &o, CLR_SUM, t, data, n, &got);
      expect_same(&want, st, &got, what);
    }
  }
  clr_options o;
  apply_shape(ctx, &shapes[0], &o);
  /* In chunks of 4 KiB (and merged across chunks). */
  clr_status st = clr_reduce_host(chunked, &o, CLR_SUM, t, data, n, &got);
  snprintf(what, sizeof what, "%s %s n=%zu in 4 KiB chunks", clr_type_name(t),
           kind_name[k], n);
  expect_same(&want, st, &got, what);
  clr_timing tm = CLR_TIMING_INIT;
  if (st == CLR_OK && clr_last_timing(chunked, &tm) == CLR_OK)
    TU_CHECK(tm.chunks == (n * es + 4095) / 4096 && tm.error_depth == 0,
             "%s: %zu chunks, error depth %zu", what, tm.chunks,
             tm.error_depth);
  /* From a cl_mem, starting 3 elements in (unaligned vectors). */
  cl_int err;
  cl_mem buf = clCreateBuffer(clr_context_cl_context(ctx), CL_MEM_READ_ONLY,
                              (n + 3) * es, NULL, &err);
  if (err != CL_SUCCESS)
    tu_die("clCreateBuffer: %d", err);
  if (clEnqueueWriteBuffer(clr_context_queue(ctx), buf, CL_TRUE, 3 * es, n * es,
                           data, 0, NULL, NULL) != CL_SUCCESS)
    tu_die("clEnqueueWriteBuffer failed");
  for (size_t s = 0; s < N_SHAPES; s += 3) {
    apply_shape(ctx, &shapes[s], &o);
    describe(&shapes[s], sh, sizeof sh);
    snprintf(what, sizeof what, "%s %s n=%zu from a cl_mem at offset 3, %s",
             clr_type_name(t), kind_name[k], n, sh);
    st = clr_reduce_buffer(ctx, &o, CLR_SUM, t, buf, 3, n, &got);
    expect_same(&want, st, &got, what);
  }
  clReleaseMemObject(buf);
  free(data);
}

/* What exact mode refuses, and what it leaves as it was. */
static void check_rules(clr_context *ctx) {
  clr_options o;
  clr_value v, plain;
  float f[5] = {1, 2, 3, 4, 5};
  int32_t i32[5] = {1, -7, 3, 2147483647, 5};
  clr_options_init(&o);
  o.exact = 1;
  TU_EXPECT_STATUS(clr_reduce_host(ctx, &o, CLR_PROD, CLR_FLOAT, f, 5, &v),
                   CLR_ERR_UNSUPPORTED, "exact float prod");
  o.kernel = CLR_REDUCE_INTERLEAVED;
  TU_EXPECT_STATUS(clr_reduce_host(ctx, &o, CLR_SUM, CLR_FLOAT, f, 5, &v),
                   CLR_ERR_INVALID_ARGUMENT, "exact sum with interleaved");
  o.kernel = CLR_SCAN_KOGGE_STONE;
  float out[5];
  TU_EXPECT_STATUS(clr_scan_host(ctx, &o, CLR_SUM, CLR_FLOAT, f, out, 5),
                   CLR_ERR_UNSUPPORTED, "exact float scan");
  /* Integer sums, min and max are exact anyway: the plain kernels. */
  clr_options plain_opt;
  clr_options_init(&plain_opt);
  o.kernel = CLR_REDUCE_COARSE;
  TU_EXPECT_STATUS(clr_reduce_host(ctx, &o, CLR_SUM, CLR_INT, i32, 5, &v),
                   CLR_OK, "exact int sum");
  TU_EXPECT_STATUS(
      clr_reduce_host(ctx, &plain_opt, CLR_SUM, CLR_INT, i32, 5, &plain),
      CLR_OK, "plain int sum");
  TU_CHECK(tu_same(&v, &plain) && v.v.l == 2147483649LL, "exact int sum: %lld",
           (long long)v.v.l);
  TU_EXPECT_STATUS(clr_reduce_host(ctx, &o, CLR_MAX, CLR_FLOAT, f, 5, &v),
                   CLR_OK, "exact float max");
  TU_CHECK(v.v.f == 5.0f, "exact float max: %g", (double)v.v.f);
  TU_EXPECT_STATUS(clr_prepare(ctx, &o, CLR_SUM, CLR_FLOAT), CLR_OK,
                   "clr_prepare of an exact sum");
}

/* Every scan kernel gives the same output bits from run to run (one
 * device, one tuning): float sums, where the order of combination shows in
 * the last bits.  The decoupled scan's look-back used to stop at whichever
 * predecessor had finished, so on a GPU its output followed the timing. */
static void check_scan_repeats(clr_context *ctx) {
  size_t n = 1000003;
  float *in = tu_xmalloc(n * sizeof *in);
  float *first = tu_xmalloc(n * sizeof *first);
  float *again = tu_xmalloc(n * sizeof *again);
  tu_rng r = {12345};
  for (size_t i = 0; i < n; i++)
    in[i] =
        (float)((tu_unit(&r) - 0.25) * ldexp(1.0, (int)tu_below(&r, 40) - 20));
  for (int k = 0; k < CLR_KERNEL_COUNT; k++) {
    if (!clr_kernel_is_scan((clr_kernel)k))
      continue;
    clr_options o;
    clr_options_init(&o);
    o.kernel = (clr_kernel)k;
    clr_status st = clr_scan_host(ctx, &o, CLR_SUM, CLR_FLOAT, in, first, n);
    TU_EXPECT_STATUS(st, CLR_OK, clr_kernel_name((clr_kernel)k));
    for (int run = 0; run < 4 && st == CLR_OK; run++) {
      st = clr_scan_host(ctx, &o, CLR_SUM, CLR_FLOAT, in, again, n);
      size_t diff = 0;
      while (diff < n && memcmp(&first[diff], &again[diff], sizeof *first) == 0)
        diff++;
      TU_CHECK(st == CLR_OK && diff == n,
               "%s float sum scan, run %d: %s, first differing element %zu "
               "of %zu",
               clr_kernel_name((clr_kernel)k), run + 2, clr_status_name(st),
               diff, n);
    }
  }
  free(in);
  free(first);
  free(again);
}

int main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  clr_context *ctx = tu_context();
  clr_context_config cfg = CLR_CONTEXT_CONFIG_INIT;
  cfg.max_chunk_bytes = 4096;
  clr_context *chunked = NULL;
  char detail[512] = "";
  if (clr_context_create(&cfg, &chunked, detail, sizeof detail) != CLR_OK)
    tu_die("chunked context: %s", detail);
  if (clr_get_tuning(ctx, &base_tuning) != CLR_OK)
    tu_die("clr_get_tuning failed");
  check_rules(ctx);
  tu_section("rules");
  check_scan_repeats(ctx);
  tu_section("scans repeat their bits");
  static const size_t sizes[] = {1, 2, 3, 31, 255, 257, 4097, 65537, 100003};
  for (int t = CLR_FLOAT; t <= CLR_DOUBLE; t++) {
    if (!tu_type_available((clr_type)t))
      continue;
    for (int k = 0; k < KIND_COUNT; k++) {
      for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        check_set(ctx, chunked, (clr_type)t, (data_kind)k, sizes[i]);
      char name[64];
      snprintf(name, sizeof name, "%s %s", clr_type_name((clr_type)t),
               kind_name[k]);
      tu_section(name);
    }
  }
  clr_context_release(chunked);
  clr_context_release(ctx);
  return tu_finish("test_exact");
}
