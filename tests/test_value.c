/* clr_value says what it holds (include/clreduce.h): its type and op, set
 * by every call that returns one, and read through the accessors
 * (clr_value_as_double, clr_value_as_int64 / _uint64, clr_value_index,
 * clr_value_minmax_parts) and the formatter (clr_value_format).
 *
 *   test_value
 *
 * Every operation of include/clreduce_ops.def on every type of
 * include/clreduce_types.def that it applies to (the tables looped here,
 * as the header reads them), from host arrays, buffers and the
 * asynchronous form (decoded by clr_result_at): the type and op fields
 * against the tables' result column, the number through the accessors
 * against sums, products and extremes computed here on the CPU (small
 * integers: every answer exact), and the formatter's text parsed back
 * (strtod / strtoll: the same bits).  Then dot products, a group of two
 * contexts and exact sums; the accessors' refusals (a fraction, NaN, inf,
 * a ulong above INT64_MAX as int64 and a negative number as uint64, out
 * of range) on values made by hand and on device results; the formatter's
 * spelling of NaN and infinities, its longest text and a buffer too
 * small. */
#include "test_util.h"

#include <errno.h>

/* ---- the tables, read as the header reads them */

static const struct {
  int kind;
  clr_type computes, wide;
} type_rows[CLR_TYPE_COUNT] = {
#define CLR_TYPE_ROW(id, name, size, kind, computes, wide)                     \
  [CLR_##id] = {kind, CLR_##computes, CLR_##wide},
#include "clreduce_types.def"
#undef CLR_TYPE_ROW
};

static const struct {
  int result;
  unsigned flags;
  clr_op combine;
} op_rows[CLR_OP_COUNT] = {
#define CLR_OP_ROW(id, name, runs, combine, partial, identity, result, flags,  \
                   what)                                                       \
  [CLR_##id] = {result, flags, CLR_##combine},
#include "clreduce_ops.def"
#undef CLR_OP_ROW
};

/* The result type by the op's result column (no options). */
static clr_type want_type(clr_op op, clr_type t) {
  switch (op_rows[op].result) {
  case CLR_RES_WIDE:
    return type_rows[t].wide;
  case CLR_RES_TRUTH:
    return CLR_INT;
  case CLR_RES_MEAN:
    return type_rows[t].computes == CLR_FLOAT ? CLR_FLOAT : CLR_DOUBLE;
  default:
    return type_rows[t].computes;
  }
}

static int is_signed(clr_type t) {
  return type_rows[t].kind != CLR_KIND_UNSIGNED;
}

/* ---- the data: small integers, so every answer below is exact */

#define N 1000

/* Element i for op on type t: -11..11 (0..22 unsigned); a product's are
 * 1, with 2 at every 97th and (signed) -1 at every 89th. */
static int64_t element(clr_op op, clr_type t, size_t i) {
  if (op_rows[op].combine == CLR_PROD) {
    if (i % 97 == 5)
      return 2;
    return is_signed(t) && i % 89 == 7 ? -1 : 1;
  }
  int64_t x = (int64_t)((i * 37) % 23);
  return is_signed(t) ? x - 11 : x;
}

/* What op gives over the elements: the number (exact: an integer, or a
 * mean's quotient) and the first indices of the minimum and maximum. */
typedef struct answer {
  long double x;   /* the number (minmax: the minimum)     */
  long double max; /* minmax: the maximum                  */
  uint64_t index, max_index;
} answer;

static answer cpu_answer(clr_op op, clr_type t, clr_type rt, const int64_t *x,
                         size_t n) {
  answer a = {0, 0, 0, 0};
  int64_t sum = 0, prod = 1, lo = x[0], hi = x[0];
  uint64_t bits = 0, ilo = 0, ihi = 0;
  int all = 1, any = 0;
  unsigned width = (unsigned)clr_type_size(t) * 8;
  for (size_t i = 0; i < n; i++) {
    sum += x[i];
    prod *= x[i];
    bits ^= width == 64 ? (uint64_t)x[i]
                        : (uint64_t)x[i] & ((UINT64_C(1) << width) - 1);
    all = all && x[i] != 0;
    any = any || x[i] != 0;
    if (x[i] < lo) {
      lo = x[i];
      ilo = i;
    }
    if (x[i] > hi) {
      hi = x[i];
      ihi = i;
    }
  }
  switch (op_rows[op].combine) {
  case CLR_SUM:
    a.x = (long double)sum;
    if (op_rows[op].flags & CLR_OPF_MEAN) /* rounded once, as the library */
      a.x = rt == CLR_FLOAT ? (long double)(float)(a.x / (long double)n)
                            : (long double)(double)(a.x / (long double)n);
    break;
  case CLR_PROD:
    a.x = (long double)prod;
    break;
  case CLR_AND:
    a.x = all;
    break;
  case CLR_OR:
    a.x = any;
    break;
  case CLR_XOR: /* the bits, read back in the (integer) type */
    a.x = width == 32 && is_signed(t)   ? (long double)(int32_t)(uint32_t)bits
          : width == 64 && is_signed(t) ? (long double)(int64_t)bits
                                        : (long double)bits;
    break;
  case CLR_MIN:
  case CLR_ARGMIN:
    a.x = (long double)lo;
    a.index = ilo;
    break;
  case CLR_MAX:
  case CLR_ARGMAX:
    a.x = (long double)hi;
    a.index = ihi;
    break;
  default: /* CLR_MINMAX */
    a.x = (long double)lo;
    a.index = ilo;
    a.max = (long double)hi;
    a.max_index = ihi;
    break;
  }
  if (!(op_rows[op].flags & CLR_OPF_INDEXED))
    a.index = 0;
  return a;
}

/* ---- the accessors against a number */

/* The integer checks of a value whose number is w (exact): as_int64 and
 * as_uint64 give it where it fits and is an integer, CLR_ERR_RANGE (and
 * *out untouched) where not. */
static void check_integers(const char *what, const clr_value *v,
                           long double w) {
  int64_t i = 12345;
  uint64_t u = 12345;
  clr_status si = clr_value_as_int64(v, &i), su = clr_value_as_uint64(v, &u);
  int integral = w == floorl(w);
  int fits_i =
      integral && w >= -9223372036854775808.0L && w < 9223372036854775808.0L;
  int fits_u = integral && w >= 0 && w < 18446744073709551616.0L;
  if (fits_i)
    TU_CHECK(si == CLR_OK && (long double)i == w,
             "%s: as_int64 %s %lld, want %.21Lg", what, clr_status_name(si),
             (long long)i, w);
  else
    TU_CHECK(si == CLR_ERR_RANGE && i == 12345,
             "%s: as_int64 of %.21Lg refused (%s), out untouched", what, w,
             clr_status_name(si));
  if (fits_u)
    TU_CHECK(su == CLR_OK && (long double)u == w,
             "%s: as_uint64 %s %llu, want %.21Lg", what, clr_status_name(su),
             (unsigned long long)u, w);
  else
    TU_CHECK(su == CLR_ERR_RANGE && u == 12345,
             "%s: as_uint64 of %.21Lg refused (%s), out untouched", what, w,
             clr_status_name(su));
}

/* The number of v as the formatter wrote it (s, up to end) read back:
 * the same bits for floats (strtod, then a cast for a float), the same
 * integer for integers. */
static int same_number(const clr_value *v, const clr_scalar *s,
                       const char *text, const char *end) {
  char num[64];
  size_t len = (size_t)(end - text);
  if (len == 0 || len >= sizeof num)
    return 0;
  memcpy(num, text, len);
  num[len] = '\0';
  char *stop = NULL;
  errno = 0;
  switch (v->type) {
  case CLR_FLOAT: {
    float f = (float)strtod(num, &stop);
    return *stop == '\0' && memcmp(&f, &s->f, sizeof f) == 0;
  }
  case CLR_DOUBLE: {
    double d = strtod(num, &stop);
    return *stop == '\0' && memcmp(&d, &s->d, sizeof d) == 0;
  }
  case CLR_INT:
  case CLR_LONG: {
    long long x = strtoll(num, &stop, 10);
    int64_t want = v->type == CLR_INT ? s->i : s->l;
    return *stop == '\0' && errno == 0 && x == want;
  }
  default: {
    unsigned long long x = strtoull(num, &stop, 10);
    uint64_t want = v->type == CLR_UINT ? s->u : s->ul;
    return *stop == '\0' && errno == 0 && num[0] != '-' && x == want;
  }
  }
}

/* "<number> at index <i>" from text: the number's end and the index
 * (UINT64_MAX for -1); 0 when text is not that. */
static int parse_indexed(const char *text, const char **num_end,
                         uint64_t *index) {
  const char *at = strstr(text, " at index ");
  if (!at)
    return 0;
  *num_end = at;
  const char *i = at + strlen(" at index ");
  if (strcmp(i, "-1") == 0) {
    *index = UINT64_MAX;
    return 1;
  }
  char *stop = NULL;
  errno = 0;
  unsigned long long x = strtoull(i, &stop, 10);
  *index = x;
  return *stop == '\0' && errno == 0 && *i >= '0' && *i <= '9';
}

/* clr_value_format's text of v, parsed back: the number(s), and the
 * index(es) where v's op has them, in the documented form. */
static void check_format(const char *what, const clr_value *v) {
  char buf[CLR_VALUE_FORMAT_SIZE];
  clr_status st = clr_value_format(v, buf, sizeof buf);
  if (!TU_CHECK(st == CLR_OK, "%s: format: %s", what, clr_status_name(st)))
    return;
  unsigned flags = op_rows[v->op].flags;
  const char *end;
  uint64_t index;
  if (v->op == CLR_MINMAX) {
    /* "min <a> at index <i>, max <b> at index <j>" */
    const char *sep = strstr(buf, ", max ");
    char first[CLR_VALUE_FORMAT_SIZE];
    int ok = strncmp(buf, "min ", 4) == 0 && sep != NULL;
    if (ok) {
      memcpy(first, buf + 4, (size_t)(sep - buf - 4));
      first[sep - buf - 4] = '\0';
      ok = parse_indexed(first, &end, &index) &&
           same_number(v, &v->v, first, end) && index == v->index &&
           parse_indexed(sep + 6, &end, &index) &&
           same_number(v, &v->max, sep + 6, end) && index == v->max_index;
    }
    TU_CHECK(ok, "%s: format '%s' reads back as min %s at %llu, max at %llu",
             what, buf, first, (unsigned long long)v->index,
             (unsigned long long)v->max_index);
  } else if (flags & CLR_OPF_INDEXED) {
    TU_CHECK(parse_indexed(buf, &end, &index) &&
                 same_number(v, &v->v, buf, end) && index == v->index,
             "%s: format '%s' reads back (index %llu)", what, buf,
             (unsigned long long)v->index);
  } else {
    TU_CHECK(same_number(v, &v->v, buf, buf + strlen(buf)),
             "%s: format '%s' reads back", what, buf);
  }
}

/* A result against the CPU's answer: type and op, the accessors, the
 * index(es), the formatter. */
static void check_value(const char *what, const clr_value *v, clr_op op,
                        clr_type t, const answer *a) {
  clr_type rt = want_type(op, t);
  if (!TU_CHECK(clr_value_type(v) == rt && v->type == rt &&
                    clr_value_op(v) == op && v->op == op,
                "%s: type %s op %s, want %s %s", what,
                (unsigned)v->type < CLR_TYPE_COUNT ? clr_type_name(v->type)
                                                   : "?",
                (unsigned)v->op < CLR_OP_COUNT ? clr_op_name(v->op) : "?",
                clr_type_name(rt), clr_op_name(op)))
    return;
  /* the number the result type holds: exact (integers, and a mean
   * already rounded to the type) */
  double d = clr_value_as_double(v);
  TU_CHECK(d == (double)a->x, "%s: as_double %.17g, want %.21Lg", what, d,
           a->x);
  check_integers(what, v, a->x);
  TU_CHECK(clr_value_index(v) == a->index, "%s: index %llu, want %llu", what,
           (unsigned long long)clr_value_index(v),
           (unsigned long long)a->index);
  clr_value lo, hi;
  clr_status st = clr_value_minmax_parts(v, &lo, &hi);
  if (op == CLR_MINMAX) {
    if (TU_CHECK(st == CLR_OK, "%s: minmax_parts %s", what,
                 clr_status_name(st))) {
      TU_CHECK(lo.type == rt && lo.op == CLR_ARGMIN &&
                   clr_value_as_double(&lo) == (double)a->x &&
                   clr_value_index(&lo) == a->index,
               "%s: the minimum part", what);
      TU_CHECK(hi.type == rt && hi.op == CLR_ARGMAX &&
                   clr_value_as_double(&hi) == (double)a->max &&
                   clr_value_index(&hi) == a->max_index,
               "%s: the maximum part %.17g at %llu", what,
               clr_value_as_double(&hi), (unsigned long long)hi.index);
      check_integers(what, &hi, a->max);
    }
  } else {
    TU_CHECK(st == CLR_ERR_INVALID_ARGUMENT,
             "%s: minmax_parts of a %s refused (%s)", what, clr_op_name(op),
             clr_status_name(st));
  }
  check_format(what, v);
}

/* ---- every op x type, host, buffer and async */

static void ops_by_types(clr_context *ctx) {
  int64_t *x = tu_xmalloc(N * sizeof *x);
  void *data = tu_xmalloc(N * 8);
  size_t cases = 0;
  for (int ti = 0; ti < CLR_TYPE_COUNT; ti++) {
    clr_type t = (clr_type)ti;
    if (!tu_type_available(t))
      continue;
    for (int oi = 0; oi < CLR_OP_COUNT; oi++) {
      clr_op op = (clr_op)oi;
      /* var and std: their values against the two-pass reference in test
       * moments; their text below */
      if (clr_op_supports(op, t) != CLR_OK ||
          (op_rows[op].flags & CLR_OPF_MOMENTS))
        continue;
      for (size_t i = 0; i < N; i++) {
        x[i] = element(op, t, i);
        tu_store_i(t, data, i, x[i]);
      }
      clr_type rt = want_type(op, t);
      for (size_t n = 1; n <= N; n += N - 1) {
        answer a = cpu_answer(op, t, rt, x, n);
        char what[128];
        clr_value v;
        memset(&v, 0xa5, sizeof v); /* every field the call's */
        snprintf(what, sizeof what, "%s of %zu %s (host)", clr_op_name(op), n,
                 clr_type_name(t));
        clr_status st = clr_reduce_host(ctx, NULL, op, t, data, n, &v);
        if (TU_CHECK(st == CLR_OK, "%s: %s: %s", what, clr_status_name(st),
                     clr_context_error(ctx)))
          check_value(what, &v, op, t, &a);
        cases++;

        size_t es = clr_type_size(t);
        cl_mem buf = tu_new_buffer(ctx, n * es, data);
        memset(&v, 0xa5, sizeof v);
        snprintf(what, sizeof what, "%s of %zu %s (buffer)", clr_op_name(op), n,
                 clr_type_name(t));
        st = clr_reduce_buffer(ctx, NULL, op, t, buf, 0, n, &v);
        if (TU_CHECK(st == CLR_OK, "%s: %s: %s", what, clr_status_name(st),
                     clr_context_error(ctx)))
          check_value(what, &v, op, t, &a);

        /* the asynchronous form leaves bytes in a cl_mem: clr_result_at
         * decodes them, type and op included */
        snprintf(what, sizeof what, "%s of %zu %s (async, clr_result_at)",
                 clr_op_name(op), n, clr_type_name(t));
        size_t rb = clr_result_bytes(NULL, op, t);
        cl_mem res = tu_new_buffer(ctx, 64, NULL);
        cl_event ev = NULL;
        st = clr_reduce_buffer_async(ctx, NULL, op, t, buf, 0, n, res, 0, 0,
                                     NULL, &ev);
        /* (means too: divided on the device) */
        if (TU_CHECK(st == CLR_OK && rb > 0 && rb <= 64, "%s: %s: %s", what,
                     clr_status_name(st), clr_context_error(ctx))) {
          unsigned char bytes[64];
          clWaitForEvents(1, &ev);
          clReleaseEvent(ev);
          tu_read_buffer(ctx, res, rb, bytes);
          v = clr_result_at(op, clr_options_result_type(NULL, op, t), bytes, 0);
          check_value(what, &v, op, t, &a);
        }
        clReleaseMemObject(res);
        clReleaseMemObject(buf);
      }
    }
  }
  TU_CHECK(cases >= 2 * 60, "%zu op x type x n cases ran", cases);
  free(data);
  free(x);
}

/* ---- the other producers */

/* Dot products (op sum), a group's results, exact sums, a mean made from
 * a sum, a combine. */
static void other_producers(clr_context *ctx) {
  float fx[N], fy[N];
  int32_t ix[N], iy[N];
  long double fdot = 0, idot = 0;
  for (size_t i = 0; i < N; i++) {
    ix[i] = (int32_t)element(CLR_SUM, CLR_INT, i);
    iy[i] = (int32_t)(i % 5) - 2;
    fx[i] = (float)ix[i];
    fy[i] = (float)iy[i];
    fdot += (long double)ix[i] * iy[i];
  }
  idot = fdot;
  clr_value v;
  memset(&v, 0xa5, sizeof v);
  clr_status st = clr_dot_host(ctx, NULL, CLR_FLOAT, fx, fy, N, &v);
  answer a = {fdot, 0, 0, 0};
  if (TU_CHECK(st == CLR_OK, "float dot: %s", clr_status_name(st)))
    check_value("float dot (host)", &v, CLR_SUM, CLR_FLOAT, &a);
  cl_mem bx = tu_new_buffer(ctx, sizeof ix, ix),
         by = tu_new_buffer(ctx, sizeof iy, iy);
  memset(&v, 0xa5, sizeof v);
  st = clr_dot_buffer(ctx, NULL, CLR_INT, bx, 0, by, 0, N, &v);
  a.x = idot;
  if (TU_CHECK(st == CLR_OK, "int dot: %s", clr_status_name(st)))
    check_value("int dot (buffer)", &v, CLR_SUM, CLR_INT, &a);
  clReleaseMemObject(bx);
  clReleaseMemObject(by);

  /* Exact sums: from a call, and from a superaccumulator. */
  clr_options o;
  clr_options_init(&o);
  o.exact = 1;
  memset(&v, 0xa5, sizeof v);
  st = clr_reduce_host(ctx, &o, CLR_SUM, CLR_FLOAT, fx, N, &v);
  int64_t xs[N];
  for (size_t i = 0; i < N; i++)
    xs[i] = ix[i];
  a = cpu_answer(CLR_SUM, CLR_FLOAT, CLR_FLOAT, xs, N);
  if (TU_CHECK(st == CLR_OK, "exact float sum: %s", clr_status_name(st)))
    check_value("exact float sum", &v, CLR_SUM, CLR_FLOAT, &a);
  clr_exact_acc acc;
  clr_exact_acc_init(&acc, CLR_FLOAT);
  st = clr_exact_add_host(ctx, NULL, CLR_FLOAT, fx, N, &acc);
  memset(&v, 0xa5, sizeof v);
  if (st == CLR_OK)
    st = clr_exact_acc_value(&acc, &v);
  if (TU_CHECK(st == CLR_OK, "clr_exact_acc_value: %s", clr_status_name(st)))
    check_value("clr_exact_acc_value", &v, CLR_SUM, CLR_FLOAT, &a);

  /* A NaN-skipping sum made a mean: nanmean (a plain sum: mean). */
  st = clr_reduce_host(ctx, NULL, CLR_NANSUM, CLR_FLOAT, fx, N, &v);
  TU_CHECK(st == CLR_OK && v.op == CLR_NANSUM, "nansum: %s, op %d",
           clr_status_name(st), (int)v.op);
  clr_value_sum_to_mean(NULL, CLR_FLOAT, N, &v);
  a = cpu_answer(CLR_NANMEAN, CLR_FLOAT, CLR_FLOAT, xs, N);
  check_value("clr_value_sum_to_mean of a nansum", &v, CLR_NANMEAN, CLR_FLOAT,
              &a);
  st = clr_reduce_host(ctx, NULL, CLR_SUM, CLR_INT, ix, N, &v);
  clr_value_sum_to_mean(NULL, CLR_INT, N, &v);
  a = cpu_answer(CLR_MEAN, CLR_INT, CLR_DOUBLE, xs, N);
  check_value("clr_value_sum_to_mean of an int sum", &v, CLR_MEAN, CLR_INT, &a);

  /* clr_value_combine keeps acc's type and op: two halves' minmax. */
  clr_value first, second;
  st = clr_reduce_host(ctx, NULL, CLR_MINMAX, CLR_INT, ix, N / 2, &first);
  clr_options_init(&o);
  o.index_base = N / 2;
  if (st == CLR_OK)
    st = clr_reduce_host(ctx, &o, CLR_MINMAX, CLR_INT, ix + N / 2, N - N / 2,
                         &second);
  if (st == CLR_OK)
    st = clr_value_combine(CLR_MINMAX, &first, &second);
  a = cpu_answer(CLR_MINMAX, CLR_INT, CLR_INT, xs, N);
  if (TU_CHECK(st == CLR_OK, "minmax of two halves: %s", clr_status_name(st)))
    check_value("minmax of two halves, combined", &first, CLR_MINMAX, CLR_INT,
                &a);

  /* clr_value_merge_moments: three parts' ddof-0 variances (one part
   * empty) merged with ddof 1 against the whole's, computed apart: the
   * same within a few roundings; std the root of var. */
  {
    double dx[N];
    for (size_t i = 0; i < N; i++)
      dx[i] = 1e6 + (double)((i * 7919) % 1000) / 8;
    clr_value parts[3], whole, merged;
    uint64_t counts[3] = {N / 3, 0, N - N / 3};
    clr_options_init(&o);
    st = clr_reduce_host(ctx, NULL, CLR_VAR, CLR_DOUBLE, dx, N / 3, &parts[0]);
    parts[1] = parts[0];
    if (st == CLR_OK)
      st = clr_reduce_host(ctx, NULL, CLR_STD, CLR_DOUBLE, dx + N / 3,
                           N - N / 3, &parts[2]);
    o.ddof = 1;
    if (st == CLR_OK)
      st = clr_reduce_host(ctx, &o, CLR_VAR, CLR_DOUBLE, dx, N, &whole);
    if (st == CLR_OK)
      st = clr_value_merge_moments(CLR_VAR, parts, counts, 3, 1, &merged);
    TU_CHECK(
        st == CLR_OK && merged.op == CLR_VAR && merged.type == CLR_DOUBLE &&
            fabs(merged.v.d - whole.v.d) <= 1e-9 * whole.v.d &&
            fabs(merged.max.d - whole.max.d) <= 1e-12 * whole.max.d,
        "var of three parts merged %.17g (mean %.17g), whole %.17g "
        "(%.17g): %s",
        merged.v.d, merged.max.d, whole.v.d, whole.max.d, clr_status_name(st));
    st = clr_value_merge_moments(CLR_STD, parts, counts, 3, 1, &merged);
    TU_CHECK(st == CLR_OK && merged.op == CLR_STD &&
                 fabs(merged.v.d - sqrt(whole.v.d)) <= 1e-9 * merged.v.d,
             "std of three parts merged: %.17g", merged.v.d);
    uint64_t one = 1;
    st = clr_value_merge_moments(CLR_VAR, parts, &one, 1, 1, &merged);
    TU_CHECK(st == CLR_OK && isnan(merged.v.d) &&
                 merged.max.d == parts[0].max.d,
             "one element, ddof 1: NaN, its mean: %s", clr_status_name(st));
    TU_EXPECT_STATUS(
        clr_value_merge_moments(CLR_SUM, parts, counts, 3, 0, &merged),
        CLR_ERR_INVALID_ARGUMENT, "merge_moments of a sum");
    TU_EXPECT_STATUS(
        clr_value_merge_moments(CLR_VAR, parts, counts, 0, 0, &merged),
        CLR_ERR_INVALID_ARGUMENT, "merge_moments of no part");
    TU_EXPECT_STATUS(clr_value_combine(CLR_VAR, &parts[0], &parts[2]),
                     CLR_ERR_UNSUPPORTED, "clr_value_combine of var");
  }

  /* A group of two contexts on the device: its parts folded on the host,
   * a mean's op the mean's. */
  clr_context *two[2] = {ctx, tu_context()};
  clr_group *g = NULL;
  char detail[256] = "";
  st = clr_group_create_from(two, 2, &g, detail, sizeof detail);
  if (TU_CHECK(st == CLR_OK, "clr_group_create_from: %s: %s",
               clr_status_name(st), detail)) {
    const clr_op gops[] = {CLR_MEAN, CLR_MINMAX, CLR_ARGMAX, CLR_PROD};
    for (size_t k = 0; k < sizeof gops / sizeof *gops; k++) {
      clr_op op = gops[k];
      float gx[N];
      int64_t gxs[N];
      for (size_t i = 0; i < N; i++) {
        gxs[i] = element(op, CLR_FLOAT, i);
        gx[i] = (float)gxs[i];
      }
      char what[96];
      snprintf(what, sizeof what, "group %s of float", clr_op_name(op));
      memset(&v, 0xa5, sizeof v);
      st = clr_group_reduce_host(g, NULL, op, CLR_FLOAT, gx, N, &v);
      a = cpu_answer(op, CLR_FLOAT, want_type(op, CLR_FLOAT), gxs, N);
      if (TU_CHECK(st == CLR_OK, "%s: %s: %s", what, clr_status_name(st),
                   clr_group_error(g)))
        check_value(what, &v, op, CLR_FLOAT, &a);
    }
    memset(&v, 0xa5, sizeof v);
    st = clr_group_dot_host(g, NULL, CLR_FLOAT, fx, fy, N, &v);
    a = (answer){fdot, 0, 0, 0};
    if (TU_CHECK(st == CLR_OK, "group dot: %s", clr_status_name(st)))
      check_value("group float dot", &v, CLR_SUM, CLR_FLOAT, &a);
    clr_group_release(g);
  }
  clr_context_release(two[1]);
}

/* ---- refusals, special values, the text's limits */

static clr_value make(clr_type t, clr_op op) {
  clr_value v;
  memset(&v, 0, sizeof v);
  v.type = t;
  v.op = op;
  return v;
}

static void refusals(clr_context *ctx) {
  int64_t i = 7;
  uint64_t u = 7;
  clr_value v = make(CLR_DOUBLE, CLR_MEAN);
  v.v.d = 0.5;
  TU_CHECK(clr_value_as_int64(&v, &i) == CLR_ERR_RANGE && i == 7 &&
               clr_value_as_uint64(&v, &u) == CLR_ERR_RANGE && u == 7 &&
               clr_value_as_double(&v) == 0.5,
           "a double 0.5: refused as int64 and uint64, 0.5 as double");
  check_integers("double 0.5", &v, 0.5L);

  /* a ulong above INT64_MAX: from the device, and made by hand */
  uint64_t big[2] = {UINT64_C(9223372036854775807), 10};
  clr_value d;
  clr_status st = clr_reduce_host(ctx, NULL, CLR_SUM, CLR_ULONG, big, 2, &d);
  TU_CHECK(st == CLR_OK && d.type == CLR_ULONG, "ulong sum past INT64_MAX: %s",
           clr_status_name(st));
  i = 7;
  TU_CHECK(clr_value_as_int64(&d, &i) == CLR_ERR_RANGE && i == 7,
           "ulong 2^63 + 9 refused as int64");
  TU_CHECK(clr_value_as_uint64(&d, &u) == CLR_OK &&
               u == UINT64_C(9223372036854775817),
           "ulong 2^63 + 9 as uint64: %llu", (unsigned long long)u);
  check_format("ulong 2^63 + 9", &d);
  char buf[CLR_VALUE_FORMAT_SIZE];
  clr_value_format(&d, buf, sizeof buf);
  TU_CHECK(strcmp(buf, "9223372036854775817") == 0, "ulong text '%s'", buf);

  struct {
    clr_type t;
    long double w; /* the value (an exact one of the type) */
  } cases[] = {
      {CLR_FLOAT, -0.0L},
      {CLR_FLOAT, 0x1p63L},  /* uint64 only */
      {CLR_FLOAT, -0x1p63L}, /* INT64_MIN */
      {CLR_DOUBLE, 0x1p64L}, /* neither */
      {CLR_DOUBLE, -0x1p64L},
      {CLR_DOUBLE, 4503599627370495.5L},
      {CLR_DOUBLE, -3.0L},
      {CLR_FLOAT, 16777216.0L},
      {CLR_LONG, -9223372036854775807.0L - 1},
      {CLR_ULONG, 18446744073709551615.0L},
      {CLR_INT, -1.0L},
      {CLR_UINT, 4294967295.0L},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    v = make(cases[k].t, CLR_SUM);
    long double w = cases[k].w;
    switch (cases[k].t) {
    case CLR_FLOAT:
      v.v.f = (float)w;
      break;
    case CLR_DOUBLE:
      v.v.d = (double)w;
      break;
    case CLR_INT:
      v.v.i = (int32_t)w;
      break;
    case CLR_UINT:
      v.v.u = (uint32_t)w;
      break;
    case CLR_LONG:
      v.v.l = INT64_MIN;
      break;
    default:
      v.v.ul = UINT64_MAX;
      break;
    }
    char what[96];
    snprintf(what, sizeof what, "%s %.21Lg", clr_type_name(cases[k].t), w);
    check_integers(what, &v, w);
    check_format(what, &v);
  }
  TU_CHECK(clr_value_as_int64(&(clr_value){.type = CLR_LONG, .v.l = INT64_MIN},
                              &i) == CLR_OK &&
               i == INT64_MIN,
           "long INT64_MIN as int64");
  /* -0.0 reads as 0, and keeps its sign in the text */
  v = make(CLR_DOUBLE, CLR_MIN);
  v.v.d = -0.0;
  clr_value_format(&v, buf, sizeof buf);
  TU_CHECK(strcmp(buf, "-0") == 0 && clr_value_as_int64(&v, &i) == CLR_OK &&
               i == 0,
           "-0.0: '%s', 0 as int64", buf);

  /* NaN and the infinities: refused as integers, spelled as the command
   * line spells them; a NaN result from the device too */
  const struct {
    double x;
    const char *text;
  } specials[] = {{(double)NAN, "nan"},
                  {-(double)NAN, "-nan"},
                  {(double)INFINITY, "inf"},
                  {-(double)INFINITY, "-inf"}};
  for (size_t k = 0; k < 4; k++)
    for (int fl = 0; fl < 2; fl++) {
      v = make(fl ? CLR_FLOAT : CLR_DOUBLE, CLR_MAX);
      if (fl)
        v.v.f = (float)specials[k].x;
      else
        v.v.d = specials[k].x;
      i = 7;
      u = 7;
      clr_value_format(&v, buf, sizeof buf);
      TU_CHECK(strcmp(buf, specials[k].text) == 0 &&
                   clr_value_as_int64(&v, &i) == CLR_ERR_RANGE &&
                   clr_value_as_uint64(&v, &u) == CLR_ERR_RANGE && i == 7 &&
                   u == 7,
               "%s %s: '%s', refused as integers", clr_type_name(v.type),
               specials[k].text, buf);
      double back = strtod(buf, NULL);
      TU_CHECK(isnan(specials[k].x)
                   ? isnan(back) && !signbit(back) == !signbit(specials[k].x)
                   : back == specials[k].x,
               "'%s' reads back with its sign", buf);
    }
  float fn[3] = {1.0f, NAN, 2.0f};
  st = clr_reduce_host(ctx, NULL, CLR_ARGMAX, CLR_FLOAT, fn, 3, &d);
  clr_value_format(&d, buf, sizeof buf);
  TU_CHECK(st == CLR_OK && isnan(clr_value_as_double(&d)) && d.index == 1 &&
               (strcmp(buf, "nan at index 1") == 0 ||
                strcmp(buf, "-nan at index 1") == 0),
           "argmax of [1, NaN, 2]: '%s'", buf);
  fn[0] = fn[2] = NAN;
  st = clr_reduce_host(ctx, NULL, CLR_NANARGMIN, CLR_FLOAT, fn, 3, &d);
  clr_value_format(&d, buf, sizeof buf);
  TU_CHECK(st == CLR_OK && d.op == CLR_NANARGMIN &&
               clr_value_index(&d) == UINT64_MAX &&
               strstr(buf, " at index -1") != NULL,
           "nanargmin of NaNs: '%s', index UINT64_MAX", buf);

  /* invalid arguments */
  v = make(CLR_HALF, CLR_SUM);
  buf[0] = 'x';
  TU_CHECK(
      clr_value_as_int64(&v, &i) == CLR_ERR_INVALID_ARGUMENT &&
          clr_value_as_uint64(NULL, &u) == CLR_ERR_INVALID_ARGUMENT &&
          clr_value_as_int64(&d, NULL) == CLR_ERR_INVALID_ARGUMENT &&
          isnan(clr_value_as_double(&v)) && isnan(clr_value_as_double(NULL)) &&
          clr_value_format(&v, buf, sizeof buf) == CLR_ERR_INVALID_ARGUMENT &&
          buf[0] == '\0' &&
          clr_value_format(NULL, buf, sizeof buf) == CLR_ERR_INVALID_ARGUMENT &&
          clr_value_format(&d, NULL, 8) == CLR_ERR_INVALID_ARGUMENT &&
          clr_value_type(NULL) == CLR_TYPE_COUNT &&
          clr_value_op(NULL) == CLR_OP_COUNT &&
          clr_value_index(NULL) == UINT64_MAX &&
          clr_value_minmax_parts(NULL, NULL, NULL) == CLR_ERR_INVALID_ARGUMENT,
      "NULL and half values refused");
  /* an op out of range (a value built by hand, not zeroed): a number */
  v = make(CLR_INT, CLR_SUM);
  v.op = (clr_op)1234;
  v.v.i = -5;
  v.index = 3;
  TU_CHECK(clr_value_format(&v, buf, sizeof buf) == CLR_OK &&
               strcmp(buf, "-5") == 0,
           "an op out of range formats the number: '%s'", buf);

  /* the longest text fits CLR_VALUE_FORMAT_SIZE; one byte less is
   * CLR_ERR_RANGE, with as much as fits */
  v = make(CLR_DOUBLE, CLR_MINMAX);
  v.v.d = -2.2250738585072014e-308;
  v.max.d = -2.2250738585072019e-308;
  v.index = UINT64_MAX - 1;
  v.max_index = UINT64_MAX - 2;
  st = clr_value_format(&v, buf, sizeof buf);
  size_t len = strlen(buf);
  TU_CHECK(st == CLR_OK && len < CLR_VALUE_FORMAT_SIZE, "long text (%zu): %s",
           len, buf);
  check_format("the longest minmax", &v);
  char small[CLR_VALUE_FORMAT_SIZE];
  st = clr_value_format(&v, small, len);
  TU_CHECK(st == CLR_ERR_RANGE && strlen(small) == len - 1 &&
               strncmp(small, buf, len - 1) == 0,
           "a buffer of %zu bytes: %s, '%s'", len, clr_status_name(st), small);
  TU_CHECK(clr_value_format(&v, small, len + 1) == CLR_OK &&
               clr_value_format(&v, small, 0) == CLR_ERR_RANGE,
           "len + 1 bytes fit, 0 bytes do not");
  /* an index of UINT64_MAX is -1, in the pair too */
  v = make(CLR_FLOAT, CLR_MINMAX);
  v.v.f = 1.5f;
  v.max.f = 2.5f;
  v.index = 4;
  v.max_index = UINT64_MAX;
  clr_value_format(&v, buf, sizeof buf);
  TU_CHECK(strcmp(buf, "min 1.5 at index 4, max 2.5 at index -1") == 0,
           "minmax text: '%s'", buf);
  v.op = CLR_ARGMIN;
  clr_value_format(&v, buf, sizeof buf);
  TU_CHECK(strcmp(buf, "1.5 at index 4") == 0, "argmin text: '%s'", buf);
  /* var and std: the value, then the mean */
  v.op = CLR_VAR;
  clr_value_format(&v, buf, sizeof buf);
  TU_CHECK(strcmp(buf, "var 1.5, mean 2.5") == 0, "var text: '%s'", buf);
  v.op = CLR_STD;
  v.max.f = NAN;
  clr_value_format(&v, buf, sizeof buf);
  TU_CHECK(strcmp(buf, "std 1.5, mean nan") == 0, "std text: '%s'", buf);
  v.max.f = 2.5f;
  v.op = CLR_SUM;
  clr_value_format(&v, buf, sizeof buf);
  TU_CHECK(strcmp(buf, "1.5") == 0, "sum text: '%s'", buf);
  v = make(CLR_FLOAT, CLR_SUM);
  v.v.f = 0.1f;
  clr_value_format(&v, buf, sizeof buf);
  TU_CHECK(strcmp(buf, "0.100000001") == 0, "float 0.1: '%s' (%%.9g)", buf);
  v = make(CLR_DOUBLE, CLR_SUM);
  v.v.d = 0.1;
  clr_value_format(&v, buf, sizeof buf);
  TU_CHECK(strcmp(buf, "0.10000000000000001") == 0, "double 0.1: '%s' (%%.17g)",
           buf);
}

/* Floats of every magnitude through the formatter and back. */
static void round_trips(void) {
  tu_rng r = {12345};
  size_t bad = 0, count = 0;
  for (int k = 0; k < 200000; k++) {
    uint64_t bits = tu_next(&r);
    clr_value v = make(k & 1 ? CLR_FLOAT : CLR_DOUBLE, CLR_SUM);
    if (k & 1) {
      uint32_t b = (uint32_t)bits;
      memcpy(&v.v.f, &b, 4);
      if (!isfinite(v.v.f))
        continue;
    } else {
      memcpy(&v.v.d, &bits, 8);
      if (!isfinite(v.v.d))
        continue;
    }
    char buf[CLR_VALUE_FORMAT_SIZE];
    count++;
    if (clr_value_format(&v, buf, sizeof buf) != CLR_OK ||
        !same_number(&v, &v.v, buf, buf + strlen(buf))) {
      if (bad++ < 5)
        tu_check(0, "%s bits %016llx: '%s' does not read back",
                 clr_type_name(v.type), (unsigned long long)bits, buf);
    }
  }
  TU_CHECK(bad == 0 && count > 150000,
           "%zu random floats and doubles read back, %zu not", count, bad);
}

int main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  TU_CHECK(sizeof(clr_value) == 40 && offsetof(clr_value, v) == 8 &&
               offsetof(clr_value, index) == 16 &&
               offsetof(clr_value, max) == 24 &&
               offsetof(clr_value, max_index) == 32,
           "clr_value: 40 bytes, v at 8 (op in the old padding)");
  clr_context *ctx = tu_context();
  ops_by_types(ctx);
  tu_section("every op x type: type, op, accessors, text");
  other_producers(ctx);
  tu_section("dot, exact, group, mean, combine");
  refusals(ctx);
  tu_section("refusals, special values, text limits");
  round_trips();
  tu_section("random floats through the text");
  clr_context_release(ctx);
  return tu_finish("test_value");
}
