/* Exact sums and means of matrices (clr_options.exact with a
 * CLR_REQ_MATRIX request): every column's (axis 0) or row's (axis 1) sum
 * must be, bit for bit, the CPU's exact sum of that column's or row's
 * elements (clr_ref_exact_sum, src/check/exact_sum.c), each computed here
 * on its own line gathered into an array (a column strided by the
 * pitch); a mean that sum divided by the count as clr_value_sum_to_mean
 * divides it (the flat exact mean's rule).
 *
 *   --set=shapes   float and double, both axes, sum and mean: 1 x 1,
 *                  1 x C, R x 1, primes, C not a multiple of 4, 2^k +- 1,
 *                  long rows (3 x 300001), tall columns (300001 x 3), wide
 *                  and short (5 x 100003), pitches wider than the row
 *                  (the padding NaN), buffers at data offsets, clr_run
 *                  and clr_enqueue; random data of fixed seeds and the
 *                  hard kinds turning with the shape
 *   --set=hard     every hard kind on a few shapes, both types and axes:
 *                  heavy cancellation (1e30, 1, -1e30), the whole exponent
 *                  range, denormals, all -0.0, +0 / -0 mixes, +inf, -inf,
 *                  both (NaN), NaN, partial sums past the largest finite
 *                  value, alternating values near a tie
 *   --set=tunings  work-group sizes (powers of two or not), 1 to 8
 *                  expansion terms, 64- and 32-bit local atomics, layouts:
 *                  the same bits (few results with long lines: the
 *                  elements split over work-groups)
 *   --set=stream   host matrices streamed: in 4 KiB chunks (blocks of
 *                  rows, pieces of rows), and (under POCL_MEMORY_LIMIT=1:
 *                  256 MiB allocations) one larger than one allocation,
 *                  both axes
 *   --set=rules    min (float) and max (double) with exact set give what
 *                  they give without it, integer sums too; half data, nansum,
 *                  nanmean, a float prod and a map with exact get the
 *                  status the flat call gets; the CLI's exact matrix
 *                  check (clr_ref_matrix_check_exact) passes right results
 *                  and names a wrong one; a caller's scratch of the size
 *                  clr_request_scratch_size gives (one byte less refused)
 */
#include "clreduce.h"
#include "exact_matrix.h"
#include "exact_sum.h"
#include "test_util.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ data */

typedef enum kind {
  RANDOM,      /* uniform, signs and 40 binades, a fixed seed          */
  CANCEL,      /* 1e30, 1, -1e30 along the line: a plain sum gives 0   */
  WIDE,        /* the whole exponent range, random signs               */
  DENORMAL,    /* denormals (and the smallest normals), random signs   */
  NEG_ZERO,    /* every element -0.0: the sum is -0.0                  */
  ZERO_MIX,    /* +0 and -0 (a line of -0.0 alone every third)         */
  SPECIAL,     /* by line: +inf, -inf, both (NaN), NaN, none           */
  OVERFLOWING, /* big, big, -big, -big, small: partial sums overflow    */
  TIE,         /* +-(1 + k ulp) alternating: the sum of tiny parts      */
  ROUNDING,    /* by line: b + ulp/2 (a tie), +- a tiny sticky part far
                  below, b - ulp/2, the largest finite + ulp/2 (a tie
                  that rounds to inf), b + h - b; b of any exponent     */
  KIND_COUNT
} kind;

static const char *const kind_name[KIND_COUNT] = {
    "random", "cancel",  "wide",        "denormal", "-0.0",
    "+0/-0",  "inf/nan", "overflowing", "tie",      "rounding"};

/* Element k (its place along the line folded) of line `line` as a double
 * (exact in float for float data). */
static double element(clr_type t, kind kd, tu_rng *r, size_t line, size_t k,
                      size_t len) {
  int fl = t == CLR_FLOAT;
  double big = fl ? FLT_MAX : DBL_MAX;
  int emin = fl ? -149 : -1074, emax = fl ? 127 : 1023;
  double sign = (tu_next(r) & 1) ? -1.0 : 1.0;
  switch (kd) {
  case RANDOM:
    return (tu_unit(r) - 0.5) * ldexp(1.0, (int)tu_below(r, 40) - 20);
  case CANCEL:
    return k % 3 == 0 ? 1e30 : k % 3 == 1 ? 1.0 : -1e30;
  case WIDE: {
    int e = emin + (int)tu_below(r, (uint64_t)(emax - emin + 1));
    double x = ldexp(1.0 + tu_unit(r), e);
    if (fl && x > FLT_MAX)
      x = FLT_MAX;
    return sign * (e <= emin + 2 ? ldexp(1.0, e) : x);
  }
  case DENORMAL: {
    int mant = fl ? 23 : 52;
    if (tu_below(r, 8) == 0) /* the smallest normal, now and then */
      return sign * ldexp(1.0, emin + mant);
    return sign * ldexp((double)(1 + tu_below(r, (1ull << mant) - 1)), emin);
  }
  case NEG_ZERO:
    return -0.0;
  case ZERO_MIX:
    if (line % 3 == 0)
      return -0.0;
    return (tu_next(r) & 1) ? -0.0 : 0.0;
  case SPECIAL: {
    double x = tu_unit(r) - 0.5;
    size_t at = (line * 7 + 3) % len, at2 = (line * 13 + 1) % len;
    switch (line % 5) {
    case 0:
      return k == at ? INFINITY : x;
    case 1:
      return k == at ? -INFINITY : x;
    case 2: /* both infinities: NaN (one element alone: that one) */
      return k == at ? INFINITY : k == at2 ? -INFINITY : x;
    case 3:
      return k == at ? NAN : x;
    default:
      return x;
    }
  }
  case OVERFLOWING:
    switch (k % 5) {
    case 0:
    case 1:
      return big;
    case 2:
    case 3:
      return -big;
    default:
      return sign * tu_unit(r);
    }
  case TIE:
    return (k % 2 ? -1.0 : 1.0) *
           (1.0 + ldexp((double)(k % 1024), fl ? -23 : -52));
  default: { /* ROUNDING: the line's few parts, zeros elsewhere */
    int prec = fl ? 24 : 53;
    tu_rng lr = {0x5eed0000u + line * 0x9e3779b97f4a7c15ull};
    int e = emin + prec + 2 +
            (int)tu_below(&lr, (uint64_t)(emax - emin - prec - 2));
    double b = ldexp(
        1.0 + ldexp((double)tu_below(&lr, 1ull << (prec - 1)), 1 - prec), e);
    double h = ldexp(1.0, e - prec); /* half b's ulp */
    int e2 = emin + (int)tu_below(&lr, (uint64_t)(e - prec - 1 - emin));
    double tiny = ldexp(1.0, e2), sgn = (tu_next(&lr) & 1) ? -1.0 : 1.0;
    double parts[3];
    switch (line % 6) {
    case 0:
      parts[0] = b, parts[1] = h, parts[2] = 0.0;
      break;
    case 1:
      parts[0] = b, parts[1] = h, parts[2] = tiny;
      break;
    case 2:
      parts[0] = b, parts[1] = h, parts[2] = -tiny;
      break;
    case 3:
      parts[0] = b, parts[1] = -h, parts[2] = sgn * tiny;
      break;
    case 4: /* the largest finite (odd) and half its ulp: inf */
      parts[0] = sgn * big, parts[1] = sgn * ldexp(1.0, emax - prec),
      parts[2] = 0.0;
      break;
    default:
      parts[0] = b, parts[1] = h, parts[2] = -b;
    }
    for (int j = 0; j < 3; j++) /* at 0, the middle and the end */
      if (k == (j == 0   ? 0
                : j == 1 ? len / 2
                         : len - 1) &&
          (j == 0 || k != 0) && (j != 2 || k != len / 2))
        return parts[j];
    return 0.0;
  }
  }
}

static void store(clr_type t, void *m, size_t i, double x) {
  if (t == CLR_FLOAT) {
    float f = (float)x;
    memcpy((char *)m + i * 4, &f, 4);
  } else {
    memcpy((char *)m + i * 8, &x, 8);
  }
}

/* A rows x cols matrix of t, row r at r * pitch, for axis (the lines
 * folded: columns for axis 0, rows for axis 1, the kind's pattern along
 * each); the padding past each row's cols NaN, which any read of it
 * would show. */
static void *make_matrix(clr_type t, kind kd, uint64_t seed, size_t rows,
                         size_t cols, size_t pitch, int axis) {
  size_t es = clr_type_size(t);
  void *m = tu_xmalloc(rows * pitch * es);
  tu_rng r = {seed};
  for (size_t i = 0; i < rows; i++) {
    for (size_t j = 0; j < cols; j++) {
      size_t line = axis == 0 ? j : i, k = axis == 0 ? i : j;
      store(t, m, i * pitch + j,
            element(t, kd, &r, line, k, axis == 0 ? rows : cols));
    }
    for (size_t j = cols; j < pitch; j++)
      store(t, m, i * pitch + j, NAN);
  }
  return m;
}

/* ------------------------------------------------------------ reference */

/* The exact op (sum or mean) of line `line` of the matrix: its elements
 * gathered into an array of their own (a column: strided by the pitch),
 * summed by the CPU's exact sum, a mean divided as the flat exact mean. */
static clr_value reference(const clr_options *o, clr_op op, clr_type t,
                           const void *m, size_t rows, size_t cols,
                           size_t pitch, int axis, size_t line, void *tmp) {
  size_t es = clr_type_size(t), len = axis == 0 ? rows : cols;
  const char *src = m;
  for (size_t k = 0; k < len; k++) {
    size_t e = axis == 0 ? k * pitch + line : line * pitch + k;
    memcpy((char *)tmp + k * es, src + e * es, es);
  }
  clr_value v;
  clr_ref_exact_sum(t, tmp, len, &v);
  v.op = CLR_SUM;
  if (op == CLR_MEAN &&
      clr_value_sum_to_mean(o, t, (uint64_t)len, &v) != CLR_OK)
    tu_die("clr_value_sum_to_mean failed");
  return v;
}

/* The value's bits in hex and its number. */
static const char *bits(const clr_value *v, char *buf, size_t size) {
  char num[64];
  clr_value_format(v, num, sizeof num);
  if (v->type == CLR_FLOAT) {
    uint32_t u;
    memcpy(&u, &v->v.f, 4);
    snprintf(buf, size, "0x%08" PRIx32 " (%s)", u, num);
  } else {
    uint64_t u;
    memcpy(&u, &v->v.d, 8);
    snprintf(buf, size, "0x%016" PRIx64 " (%s)", u, num);
  }
  return buf;
}

/* Every result against its line's reference: one check, whose failure
 * names the first column or row that differs with the bits expected and
 * got (and up to two more after it).  1 when all match. */
static int check_all(const char *what, const clr_options *o, clr_op op,
                     clr_type t, const void *m, size_t rows, size_t cols,
                     size_t pitch, int axis, const void *res) {
  size_t count = axis == 0 ? cols : rows, len = axis == 0 ? rows : cols;
  const char *unit = axis == 0 ? "column" : "row";
  clr_type rt = clr_options_result_type(o, op, t);
  void *tmp = tu_xmalloc(len * clr_type_size(t));
  size_t bad = 0;
  char first[256] = "", more[2][256] = {"", ""};
  for (size_t k = 0; k < count; k++) {
    clr_value want = reference(o, op, t, m, rows, cols, pitch, axis, k, tmp);
    clr_value got = clr_result_at(op, rt, res, k);
    if (clr_ref_exact_equal(&want, &got))
      continue;
    char gb[96], wb[96];
    if (bad < 3)
      snprintf(bad == 0 ? first : more[bad - 1], sizeof first,
               "%s %zu: got %s, expected %s", unit, k,
               bits(&got, gb, sizeof gb), bits(&want, wb, sizeof wb));
    bad++;
  }
  free(tmp);
  int ok = tu_check(bad == 0, "%s: %zu of %zu %ss differ; %s", what, bad, count,
                    unit, first);
  for (int i = 0; i < 2 && more[i][0]; i++)
    printf("      and %s\n", more[i]);
  return ok;
}

/* ------------------------------------------------------------ running */

typedef enum mode { HOST, BUFFERS, ENQUEUED, MODE_COUNT } mode;
static const char *const mode_name[MODE_COUNT] = {"host", "buffers",
                                                  "enqueued"};

/* One case: a matrix of kind kd through clr_run (host arrays or buffers
 * at offsets) or clr_enqueue (buffers, the event waited for, then read);
 * every result checked.  pitch 0: cols. */
static void run_case(clr_context *ctx, const clr_options *o, clr_op op,
                     clr_type t, size_t rows, size_t cols, size_t pitch,
                     int axis, mode md, kind kd, uint64_t seed) {
  if (!tu_type_available(t))
    return;
  size_t es = clr_type_size(t), p = pitch ? pitch : cols;
  size_t count = axis == 0 ? cols : rows;
  size_t rb = clr_result_bytes(o, op, t);
  char what[192];
  snprintf(what, sizeof what,
           "exact %s of %s %zux%zu pitch %zu axis %d, %s, %s", clr_op_name(op),
           clr_type_name(t), rows, cols, p, axis, kind_name[kd], mode_name[md]);
  void *m = make_matrix(t, kd, seed, rows, cols, p, axis);
  unsigned char *res = tu_xmalloc(count * rb + 1);
  memset(res, 0xa5, count * rb + 1);
  clr_request r = tu_matrix_request(op, t, rows, cols, pitch, axis);
  r.options = o;
  cl_mem in = NULL, out = NULL;
  /* data offsets: one that keeps vector loads aligned and one that does
   * not, turning with the shape */
  size_t in_off = (rows + cols) % 2 ? 4 : 3, out_off = 2;
  size_t elems = (rows - 1) * p + cols;
  if (md == HOST) {
    r.input.host = m;
    r.output.host = res;
  } else {
    unsigned char *padded = tu_xmalloc((in_off + elems) * es);
    memset(padded, 0, in_off * es);
    memcpy(padded + in_off * es, m, elems * es);
    in = tu_new_buffer(ctx, (in_off + elems) * es, padded);
    free(padded);
    out = tu_new_buffer(ctx, (out_off + count) * rb, NULL);
    r.input.buffer = in;
    r.input.offset = in_off;
    r.output.buffer = out;
    r.output.offset = out_off;
  }
  clr_status s;
  if (md == ENQUEUED) {
    cl_event ev = NULL;
    s = clr_enqueue(ctx, &r, 0, NULL, &ev);
    if (s == CLR_OK) {
      if (clWaitForEvents(1, &ev) != CL_SUCCESS)
        tu_check(0, "%s: clWaitForEvents failed", what);
      clReleaseEvent(ev);
    }
  } else {
    s = clr_run(ctx, &r, NULL);
  }
  if (tu_check(s == CLR_OK, "%s: %s: %s", what, clr_status_name(s),
               clr_context_error(ctx))) {
    if (md != HOST) {
      unsigned char *all = tu_xmalloc((out_off + count) * rb);
      tu_read_buffer(ctx, out, (out_off + count) * rb, all);
      memcpy(res, all + out_off * rb, count * rb);
      free(all);
    } else {
      tu_check(res[count * rb] == 0xa5, "%s: a byte past the results written",
               what);
    }
    check_all(what, o, op, t, m, rows, cols, p, axis, res);
  }
  if (in)
    clReleaseMemObject(in);
  if (out)
    clReleaseMemObject(out);
  free(res);
  free(m);
}

static const clr_type fp_types[2] = {CLR_FLOAT, CLR_DOUBLE};

/* ------------------------------------------------------------ sets */

/* The matrix call of op over m with options o: its status, results to
 * res (host arrays, both axes as asked). */
static clr_status matrix_run(clr_context *ctx, const clr_options *o, clr_op op,
                             clr_type t, const void *m, size_t rows,
                             size_t cols, int axis, void *res) {
  clr_request r = tu_matrix_request(op, t, rows, cols, 0, axis);
  r.options = o;
  r.input.host = m;
  r.output.host = res;
  return clr_run(ctx, &r, NULL);
}

static void set_shapes(clr_context *ctx) {
  clr_options o = CLR_OPTIONS_INIT;
  o.exact = 1;
  static const size_t shapes[][3] = {
      {1, 1, 0},      {1, 7, 0},       {7, 1, 0},    {1, 1009, 0},
      {1009, 1, 0},   {1009, 3, 0},    {3, 1009, 0}, {97, 101, 0},
      {101, 97, 0},   {13, 6, 0},      {6, 13, 0},   {255, 257, 0},
      {257, 255, 0},  {65, 63, 0},     {4097, 5, 0}, {5, 4095, 0},
      {97, 101, 104}, {257, 255, 300}, {33, 5, 8},   {1, 1000, 1003},
      {1001, 3, 5}};
  size_t n_shapes = sizeof shapes / sizeof shapes[0];
  for (size_t sh = 0; sh < n_shapes; sh++)
    for (int ti = 0; ti < 2; ti++)
      for (int axis = 0; axis < 2; axis++)
        for (int md = 0; md < MODE_COUNT; md++) {
          /* sum and mean, random data and a hard kind, turning */
          size_t turn = sh + (size_t)ti + (size_t)axis + (size_t)md;
          clr_op op = turn % 2 ? CLR_MEAN : CLR_SUM;
          kind kd =
              turn % 3 == 0 ? RANDOM : (kind)(1 + turn % (KIND_COUNT - 1));
          run_case(ctx, &o, op, fp_types[ti], shapes[sh][0], shapes[sh][1],
                   shapes[sh][2], axis, (mode)md, kd,
                   tu_seed(sh, (uint64_t)ti, (uint64_t)axis, (uint64_t)md));
        }
  tu_section("shapes: 1x1, 1xC, Rx1, primes, 2^k+-1, pitches; host, buffers, "
             "enqueued");
  /* long rows, tall columns, wide and short: each type and axis once a
   * mode, sums and means, random, cancelling, rounding and wide data */
  static const kind big_kinds[4] = {RANDOM, CANCEL, ROUNDING, WIDE};
  static const size_t big[][3] = {
      {3, 300001, 0}, {300001, 3, 0}, {5, 100003, 0}, {5, 100003, 100005}};
  for (size_t sh = 0; sh < 4; sh++)
    for (int ti = 0; ti < 2; ti++)
      for (int axis = 0; axis < 2; axis++) {
        size_t turn = sh + (size_t)ti + (size_t)axis;
        run_case(ctx, &o, turn % 2 ? CLR_MEAN : CLR_SUM, fp_types[ti],
                 big[sh][0], big[sh][1], big[sh][2], axis,
                 (mode)(turn % MODE_COUNT),
                 big_kinds[(sh + 2 * (size_t)ti + (size_t)axis) % 4],
                 tu_seed(sh, (uint64_t)ti, (uint64_t)axis, 99));
      }
  tu_section("long rows, tall columns, wide and short");
}

static void set_hard(clr_context *ctx) {
  clr_options o = CLR_OPTIONS_INIT;
  o.exact = 1;
  static const size_t shapes[][3] = {{61, 37, 0}, {5, 1031, 1040}, {1031, 5, 0},
                                     {2, 3, 0},   {257, 129, 132}, {1, 4099, 0},
                                     {4099, 1, 0}};
  const size_t n_shapes = sizeof shapes / sizeof shapes[0];
  for (int kd = 0; kd < KIND_COUNT; kd++) {
    for (size_t sh = 0; sh < n_shapes; sh++)
      for (int ti = 0; ti < 2; ti++)
        for (int axis = 0; axis < 2; axis++) {
          size_t turn = sh + (size_t)ti + (size_t)axis + (size_t)kd;
          run_case(ctx, &o, turn % 2 ? CLR_MEAN : CLR_SUM, fp_types[ti],
                   shapes[sh][0], shapes[sh][1], shapes[sh][2], axis,
                   (mode)(turn % MODE_COUNT), (kind)kd,
                   tu_seed((uint64_t)kd, sh, (uint64_t)ti, (uint64_t)axis));
        }
    char name[64];
    snprintf(name, sizeof name, "hard: %s", kind_name[kd]);
    tu_section(name);
  }
  /* 1e30, 1, -1e30 a thousand times a row (a float sum in any order of
   * additions loses most of the ones): exactly 1000 a row, 1000 / 3000 a
   * column of the transposed pattern's mean */
  {
    size_t rows = 4, cols = 3000;
    void *m = make_matrix(CLR_FLOAT, CANCEL, 5, rows, cols, cols, 1);
    float exact[4];
    clr_status se =
        matrix_run(ctx, &o, CLR_SUM, CLR_FLOAT, m, rows, cols, 1, exact);
    int ok = se == CLR_OK;
    for (size_t k = 0; ok && k < rows; k++)
      ok = exact[k] == 1000.0f;
    tu_check(ok,
             "1e30, 1, -1e30 x 1000 a row: exact sums %g %g %g %g, want "
             "1000 each (%s)",
             (double)exact[0], (double)exact[1], (double)exact[2],
             (double)exact[3], clr_status_name(se));
    free(m);
  }
  tu_section("hard: cancellation by hand");
}

/* Launch shapes and tunings (as test_exact's for whole arrays): the
 * work-group size (a power of two or not: the library takes the power of
 * two below), expansion terms 1 to 8, 64- and 32-bit local atomics; the
 * results must not move by a bit. */
typedef struct tuning_case {
  size_t wg;
  unsigned terms, atomics64;
  clr_layout layout;
} tuning_case;

static void set_tunings(clr_context *ctx) {
  /* three kernel builds a type: (2 terms, 64-bit atomics) the default,
   * (1, 32-bit) and (8, 64-bit) */
  static const tuning_case tunings[] = {
      {0, 0, 1, CLR_LAYOUT_AUTO},        {1, 2, 1, CLR_LAYOUT_STRIDED},
      {16, 1, 0, CLR_LAYOUT_CONTIGUOUS}, {100, 8, 1, CLR_LAYOUT_STRIDED},
      {256, 1, 0, CLR_LAYOUT_AUTO},      {64, 2, 1, CLR_LAYOUT_CONTIGUOUS}};
  static const size_t shapes[][3] = {{61, 37, 0},     {1031, 5, 0},
                                     {5, 1031, 1040}, {2, 40001, 0},
                                     {40001, 2, 0},   {1, 1, 0}};
  const size_t n_tunings = sizeof tunings / sizeof tunings[0];
  const size_t n_shapes = sizeof shapes / sizeof shapes[0];
  clr_tuning base = CLR_TUNING_INIT;
  if (clr_get_tuning(ctx, &base) != CLR_OK)
    tu_die("clr_get_tuning failed");
  for (size_t k = 0; k < n_tunings; k++) {
    const tuning_case *tc = &tunings[k];
    clr_tuning t = base;
    if (tc->terms)
      t.exact_terms = tc->terms;
    t.exact_int64_atomics = tc->atomics64;
    if (clr_set_tuning(ctx, &t) != CLR_OK)
      tu_die("clr_set_tuning: %s", clr_context_error(ctx));
    clr_options o = CLR_OPTIONS_INIT;
    o.exact = 1;
    o.wg_size = tc->wg;
    o.layout = tc->layout;
    for (size_t sh = 0; sh < n_shapes; sh++)
      for (int ti = 0; ti < 2; ti++)
        for (int axis = 0; axis < 2; axis++) {
          size_t turn = k + sh + (size_t)ti + (size_t)axis;
          run_case(ctx, &o, turn % 2 ? CLR_MEAN : CLR_SUM, fp_types[ti],
                   shapes[sh][0], shapes[sh][1], shapes[sh][2], axis,
                   (mode)(turn % MODE_COUNT), (kind)(turn % KIND_COUNT),
                   tu_seed(k, sh, (uint64_t)ti, (uint64_t)axis));
        }
    char name[128];
    snprintf(name, sizeof name,
             "tuning: wg %zu, %u terms, %s-bit atomics, layout %d", tc->wg,
             tc->terms, tc->atomics64 ? "64" : "32", (int)tc->layout);
    tu_section(name);
  }
  if (clr_set_tuning(ctx, &base) != CLR_OK)
    tu_die("clr_set_tuning: %s", clr_context_error(ctx));
}

/* A matrix larger than one device allocation (PoCL under
 * POCL_MEMORY_LIMIT=1: 256 MiB), host data, both axes; it must have
 * streamed.  Random data with a few cancelling and special elements. */
static void past_one_allocation(void) {
  clr_context *ctx = tu_context();
  size_t max_alloc = (size_t)tu_device.max_alloc_size;
  if (max_alloc > ((size_t)512 << 20)) {
    printf("stream: the device allocates %zu bytes at once: no matrix past "
           "one allocation (run with POCL_MEMORY_LIMIT=1)\n",
           max_alloc);
    clr_context_release(ctx);
    return;
  }
  clr_options o = CLR_OPTIONS_INIT;
  o.exact = 1;
  size_t n = max_alloc / sizeof(float) + 1000003;
  for (int axis = 0; axis < 2; axis++) {
    /* axis 0: 5 columns of n / 5 rows; axis 1: rows of 1000 */
    size_t cols = axis == 0 ? 5 : 1000, rows = (n + cols - 1) / cols;
    float *m = tu_xmalloc(rows * cols * sizeof *m);
    tu_rng r = {tu_seed(7, (uint64_t)axis, 1, 2)};
    for (size_t i = 0; i < rows * cols; i++)
      m[i] = (float)((tu_unit(&r) - 0.5) * ldexp(1.0, (int)tu_below(&r, 40)));
    /* a cancelling triple, an infinity and a NaN in lines of their own */
    m[0] = 1e30f;
    m[cols] = 1.0f;
    m[2 * cols] = -1e30f;
    m[1] = INFINITY;
    m[2 * cols + 2] = NAN;
    m[(rows / 2) * cols + 3] = -0.0f;
    size_t count = axis == 0 ? cols : rows;
    float *res = tu_xmalloc(count * sizeof *res);
    for (int k = 0; k < 2; k++) {
      clr_op op = k ? CLR_MEAN : CLR_SUM;
      clr_request q = tu_matrix_request(op, CLR_FLOAT, rows, cols, 0, axis);
      q.options = &o;
      q.input.host = m;
      q.output.host = res;
      char what[128];
      snprintf(what, sizeof what,
               "exact %s of float %zux%zu axis %d past one allocation",
               clr_op_name(op), rows, cols, axis);
      clr_status s = clr_run(ctx, &q, NULL);
      if (tu_check(s == CLR_OK, "%s: %s: %s", what, clr_status_name(s),
                   clr_context_error(ctx))) {
        tu_check_streamed(ctx, what);
        check_all(what, &o, op, CLR_FLOAT, m, rows, cols, cols, axis, res);
      }
    }
    free(res);
    free(m);
  }
  clr_context_release(ctx);
}

static void set_stream(void) {
  clr_options o = CLR_OPTIONS_INIT;
  o.exact = 1;
  /* 4 KiB chunks: 1024 floats, 512 doubles; rows longer than a chunk
   * are refused for axis 1 (test_matrix's stream set), so axis 1 keeps
   * rows within one */
  clr_context *ctx = tu_context_chunked(4096, 1);
  static const size_t shapes[][3] = {{5000, 100, 0},
                                     {40, 3000, 0},
                                     {977, 13, 20},
                                     {7, 5000, 5001},
                                     {3001, 7, 0}};
  for (size_t sh = 0; sh < 5; sh++)
    for (int ti = 0; ti < 2; ti++)
      for (int axis = 0; axis < 2; axis++) {
        size_t limit = 4096 / clr_type_size(fp_types[ti]);
        if (axis == 1 && shapes[sh][1] > limit)
          continue; /* rows longer than a chunk */
        if (!tu_type_available(fp_types[ti]))
          continue;
        size_t turn = sh + (size_t)ti + (size_t)axis;
        run_case(ctx, &o, turn % 2 ? CLR_MEAN : CLR_SUM, fp_types[ti],
                 shapes[sh][0], shapes[sh][1], shapes[sh][2], axis, HOST,
                 turn % 3 == 0   ? RANDOM
                 : turn % 3 == 1 ? CANCEL
                                 : WIDE,
                 tu_seed(sh, (uint64_t)ti, (uint64_t)axis, 13));
        clr_timing tm = CLR_TIMING_INIT;
        clr_last_timing(ctx, &tm);
        tu_check(tm.chunks > 1, "%s %zux%zu axis %d: streamed in %zu chunks",
                 clr_type_name(fp_types[ti]), shapes[sh][0], shapes[sh][1],
                 axis, tm.chunks);
      }
  clr_context_release(ctx);
  tu_section("streamed in 4 KiB chunks: blocks of rows, pieces of rows");
  past_one_allocation();
  tu_section("streamed past one device allocation");
}

/* A caller's scratch (clr_request_scratch_size): the call in exactly
 * that scratch, through clr_run and clr_enqueue, gives every column's or
 * row's exact result; one byte less is refused.  (Few results of long
 * lines take records the elements' splits add into: scratch is needed.) */
static void scratch_case(clr_context *ctx, clr_op op, clr_type t, size_t rows,
                         size_t cols, int axis, int enqueue) {
  if (!tu_type_available(t))
    return;
  clr_options o = CLR_OPTIONS_INIT;
  o.exact = 1;
  size_t es = clr_type_size(t), count = axis ? rows : cols;
  char what[160];
  snprintf(what, sizeof what, "exact %s of %s %zux%zu axis %d in scratch, %s",
           clr_op_name(op), clr_type_name(t), rows, cols, axis,
           enqueue ? "enqueued" : "clr_run");
  void *m = make_matrix(t, CANCEL, tu_seed(rows, cols, (uint64_t)axis, 5), rows,
                        cols, cols, axis);
  cl_mem in = tu_new_buffer(ctx, rows * cols * es, m);
  cl_mem out = tu_new_buffer(ctx, count * es, NULL);
  clr_request r = tu_matrix_request(op, t, rows, cols, 0, axis);
  r.options = &o;
  r.input.buffer = in;
  r.output.buffer = out;
  size_t bytes = 0;
  clr_status s = clr_request_scratch_size(ctx, &r, &bytes);
  cl_mem sc = NULL;
  if (s == CLR_OK && bytes) {
    sc = tu_new_buffer(ctx, bytes, NULL);
    r.scratch.buffer = sc;
    r.scratch_bytes = bytes;
  }
  if (s == CLR_OK && enqueue) {
    cl_event ev = NULL;
    s = clr_enqueue(ctx, &r, 0, NULL, &ev);
    if (ev) {
      clWaitForEvents(1, &ev);
      clReleaseEvent(ev);
    }
  } else if (s == CLR_OK) {
    s = clr_run(ctx, &r, NULL);
  }
  if (tu_check(s == CLR_OK, "%s (%zu bytes): %s: %s", what, bytes,
               clr_status_name(s), clr_context_error(ctx))) {
    void *res = tu_xmalloc(count * es);
    tu_read_buffer(ctx, out, count * es, res);
    check_all(what, &o, op, t, m, rows, cols, cols, axis, res);
    free(res);
  }
  if (sc) {
    r.scratch_bytes = bytes - 1;
    s = clr_run(ctx, &r, NULL);
    tu_check(s == CLR_ERR_INVALID_ARGUMENT,
             "%s: one byte less (%zu) refused: %s", what, bytes - 1,
             clr_status_name(s));
    clReleaseMemObject(sc);
  }
  clReleaseMemObject(in);
  clReleaseMemObject(out);
  free(m);
}

static void set_rules(clr_context *ctx) {
  clr_options ex = CLR_OPTIONS_INIT, plain = CLR_OPTIONS_INIT;
  ex.exact = 1;
  enum { R = 37, C = 23 };
  /* min, max (and argmax) with exact: the bits without it */
  /* (an op a type: each a kernel build of its own) */
  static const clr_op same_ops[] = {CLR_MIN, CLR_MAX};
  for (int ti = 0; ti < 2; ti++) {
    clr_type t = fp_types[ti];
    if (!tu_type_available(t))
      continue;
    void *m = make_matrix(t, WIDE, 77 + (uint64_t)ti, R, C, C, 0);
    for (size_t k = (size_t)ti; k < 2; k += 2)
      for (int axis = 0; axis < 2; axis++) {
        clr_op op = same_ops[k];
        size_t rb = clr_result_bytes(&ex, op, t), count = axis ? R : C;
        unsigned char *a = tu_xmalloc(count * rb), *b = tu_xmalloc(count * rb);
        memset(a, 0x11, count * rb);
        memset(b, 0x22, count * rb);
        clr_status sa = matrix_run(ctx, &ex, op, t, m, R, C, axis, a);
        clr_status sb = matrix_run(ctx, &plain, op, t, m, R, C, axis, b);
        tu_check(sa == CLR_OK && sb == CLR_OK && memcmp(a, b, count * rb) == 0,
                 "%s of %s axis %d with exact: %s, without: %s, the same "
                 "results: %s",
                 clr_op_name(op), clr_type_name(t), axis, clr_status_name(sa),
                 clr_status_name(sb),
                 sa == CLR_OK && sb == CLR_OK && memcmp(a, b, count * rb) == 0
                     ? "yes"
                     : "no");
        free(a);
        free(b);
      }
    free(m);
  }
  /* integer sums: exact anyway, the same results */
  {
    int32_t *m = tu_xmalloc(R * C * sizeof *m);
    tu_rng r = {31};
    for (size_t i = 0; i < (size_t)R * C; i++)
      m[i] = (int32_t)(tu_next(&r) >> 33) - (1 << 30);
    for (int axis = 0; axis < 2; axis++) {
      int64_t a[R], b[R];
      memset(a, 0x11, sizeof a);
      memset(b, 0x22, sizeof b);
      size_t count = axis ? R : C;
      clr_status sa = matrix_run(ctx, &ex, CLR_SUM, CLR_INT, m, R, C, axis, a);
      clr_status sb =
          matrix_run(ctx, &plain, CLR_SUM, CLR_INT, m, R, C, axis, b);
      tu_check(sa == CLR_OK && sb == CLR_OK &&
                   memcmp(a, b, count * sizeof *a) == 0,
               "int sum axis %d with exact: %s, without: %s", axis,
               clr_status_name(sa), clr_status_name(sb));
    }
    free(m);
  }
  tu_section("exact changes nothing: min, max, int sums");
  /* refusals: the flat call's status, for the matrix too */
  {
    double d[R * C];
    uint16_t h[R * C];
    for (size_t i = 0; i < (size_t)R * C; i++) {
      d[i] = (double)(i % 7) - 3;
      h[i] = 0x3c00; /* 1.0 */
    }
    unsigned char res[R * 32];
    clr_options map = ex;
    map.map = CLR_MAP_ABS;
    struct {
      const char *what;
      const clr_options *o;
      clr_op op;
      clr_type t;
      const void *data;
    } cases[] = {
        {"half sum", &ex, CLR_SUM, CLR_HALF, h},
        {"half mean", &ex, CLR_MEAN, CLR_HALF, h},
        {"float nansum", &ex, CLR_NANSUM, CLR_FLOAT, d},
        {"double nansum", &ex, CLR_NANSUM, CLR_DOUBLE, d},
        {"float nanmean", &ex, CLR_NANMEAN, CLR_FLOAT, d},
        {"float prod", &ex, CLR_PROD, CLR_FLOAT, d},
        {"float sum, map abs", &map, CLR_SUM, CLR_FLOAT, d},
        {"double mean, map abs", &map, CLR_MEAN, CLR_DOUBLE, d},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      if (!tu_type_available(cases[i].t))
        continue;
      clr_value v;
      clr_status flat = clr_reduce_host(ctx, cases[i].o, cases[i].op,
                                        cases[i].t, cases[i].data, R * C, &v);
      for (int axis = 0; axis < 2; axis++) {
        clr_status s = matrix_run(ctx, cases[i].o, cases[i].op, cases[i].t,
                                  cases[i].data, R, C, axis, res);
        tu_check(flat != CLR_OK && s == flat,
                 "exact %s, axis %d: %s (%s); the flat call: %s", cases[i].what,
                 axis, clr_status_name(s), clr_context_error(ctx),
                 clr_status_name(flat));
      }
    }
    /* and the context still works */
    float f[6] = {1e30f, 1, -1e30f, 2, 3, 4}, sums[2];
    clr_status s = matrix_run(ctx, &ex, CLR_SUM, CLR_FLOAT, f, 2, 3, 1, sums);
    tu_check(s == CLR_OK && sums[0] == 1.0f && sums[1] == 9.0f,
             "after the refusals: %s, %g %g", clr_status_name(s),
             (double)sums[0], (double)sums[1]);
  }
  tu_section("refused as the flat call is: half, nansum, nanmean, prod, map");
  /* a caller's scratch: few long lines (records) and many short ones */
  for (int ti = 0; ti < 2; ti++)
    for (int axis = 0; axis < 2; axis++) {
      scratch_case(ctx, ti ? CLR_MEAN : CLR_SUM, fp_types[ti],
                   axis ? 3 : 200001, axis ? 200001 : 3, axis, ti == axis);
      scratch_case(ctx, ti ? CLR_SUM : CLR_MEAN, fp_types[ti], 61, 37, axis,
                   ti != axis);
    }
  tu_section("a caller's scratch (clr_request_scratch_size)");
  /* clreduce's check of exact matrices (src/check/exact_matrix.c): right
   * results pass, one wrong bit is named */
  for (int ti = 0; ti < 2; ti++)
    for (int axis = 0; axis < 2; axis++)
      for (int k = 0; k < 2; k++) {
        clr_type t = fp_types[ti];
        clr_op op = k ? CLR_MEAN : CLR_SUM;
        size_t rows = 70, cols = 33, pitch = 40, es = clr_type_size(t);
        size_t count = axis ? rows : cols, len = axis ? cols : rows;
        void *m = make_matrix(t, (kind)(ti * 4 + axis * 2 + k + 1), 3, rows,
                              cols, pitch, axis);
        unsigned char *res = tu_xmalloc(count * es);
        void *tmp = tu_xmalloc(len * es);
        for (size_t j = 0; j < count; j++) {
          clr_value v =
              reference(&ex, op, t, m, rows, cols, pitch, axis, j, tmp);
          memcpy(res + j * es, t == CLR_FLOAT ? (void *)&v.v.f : (void *)&v.v.d,
                 es);
        }
        clr_segments_check chk;
        int ran = clr_ref_matrix_check_exact(&ex, op, t, m, rows, cols, pitch,
                                             axis, res, &chk);
        tu_check(ran && chk.ok && chk.exact && chk.n_bad == 0,
                 "exact check of right %s %s results, axis %d: ok %d, %zu bad",
                 clr_type_name(t), clr_op_name(op), axis, chk.ok, chk.n_bad);
        size_t wrong = count / 2;
        res[wrong * es] ^= 1; /* the lowest bit of one result */
        ran = clr_ref_matrix_check_exact(&ex, op, t, m, rows, cols, pitch, axis,
                                         res, &chk);
        tu_check(ran && !chk.ok && chk.n_bad == 1 && chk.worst_index == wrong,
                 "exact check of one wrong %s %s bit, axis %d: ok %d, %zu bad, "
                 "first %zu (want %zu)",
                 clr_type_name(t), clr_op_name(op), axis, chk.ok, chk.n_bad,
                 chk.worst_index, wrong);
        free(tmp);
        free(res);
        free(m);
      }
  tu_section("the command line's exact matrix check");
}

int main(int argc, char **argv) {
  const char *set = tu_arg_value(argc, argv, "--set");
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "-v") == 0)
      tu_verbose = 1; /* every check printed */
  if (!set)
    tu_die(
        "usage: test_exact_matrix --set=shapes|hard|tunings|stream|rules [-v]");
  if (strcmp(set, "stream") == 0) {
    set_stream();
    return tu_finish("test_exact_matrix");
  }
  clr_context *ctx = tu_context();
  if (strcmp(set, "shapes") == 0)
    set_shapes(ctx);
  else if (strcmp(set, "hard") == 0)
    set_hard(ctx);
  else if (strcmp(set, "rules") == 0)
    set_rules(ctx);
  else if (strcmp(set, "tunings") == 0)
    set_tunings(ctx);
  else
    tu_die("unknown set '%s'", set);
  clr_context_release(ctx);
  return tu_finish("test_exact_matrix");
}
