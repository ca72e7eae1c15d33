/* clr_enqueue of CLR_REQ_SEGMENTS and CLR_REQ_SCAN_SEGMENTS on buffers:
 * chains of enqueued calls held by a user event still unset while they
 * are enqueued (so none of them waits on the host), then one wait, every
 * output against CPU loops: segments of A by the offsets -> a reduction
 * of those results -> the scan-segments of A -> the segments of that scan
 * (int, long, float, double where the device has it, half; sum, min,
 * max, argmax, mean, nanmean; empty segments, one segment, segments of
 * one, long ones; n prime and of no round size; both layouts).  Options
 * through the enqueued form (accumulate_in, narrow_accumulator, a map
 * expression, an exclusive scan); the enqueued timing (shapes, no times).
 * Bad offsets enqueued: status names the first bad one (as clr_run's
 * refusal does), no byte around the outputs' ranges is written, the
 * context keeps working, with and without status.  The refusals of the
 * enqueued form. */
#include "test_util.h"

#include <CL/cl.h>
#include <math.h>
#include <stdint.h>

static void expect_cl(cl_int err, const char *what) {
  if (err != CL_SUCCESS)
    tu_die("%s failed: %d", what, (int)err);
}

static clr_request request(clr_request_kind kind, clr_op op, clr_type type,
                           size_t n) {
  clr_request r;
  clr_request_init(&r);
  r.kind = kind;
  r.op = op;
  r.type = type;
  r.n = n;
  return r;
}

static clr_operand buffer(cl_mem m, size_t offset) {
  clr_operand o = {NULL, m, offset};
  return o;
}

/* Buffers hold GUARD elements of filler (0x5a bytes) before and after
 * their count elements: an operand is at element GUARD. */
#define GUARD 5
#define FILL 0x5a

static cl_mem guarded(clr_context *ctx, const void *data, size_t count,
                      size_t esize) {
  size_t bytes = (count + 2 * GUARD) * esize;
  unsigned char *b = tu_xmalloc(bytes);
  memset(b, FILL, bytes);
  if (data)
    memcpy(b + GUARD * esize, data, count * esize);
  cl_mem m = tu_new_buffer(ctx, bytes, b);
  free(b);
  return m;
}

/* The count elements of a guarded buffer into dst (may be NULL); 1 when
 * its guards still hold the filler. */
static int read_guarded(clr_context *ctx, cl_mem m, size_t count, size_t esize,
                        void *dst) {
  size_t bytes = (count + 2 * GUARD) * esize, g = GUARD * esize;
  unsigned char *b = tu_xmalloc(bytes);
  expect_cl(clEnqueueReadBuffer(clr_context_queue(ctx), m, CL_TRUE, 0, bytes, b,
                                0, NULL, NULL),
            "clEnqueueReadBuffer");
  int ok = 1;
  for (size_t i = 0; i < g; i++)
    ok &= b[i] == FILL && b[bytes - 1 - i] == FILL;
  if (dst)
    memcpy(dst, b + g, count * esize);
  free(b);
  return ok;
}

/* ------------------------------------------------------------ data */

/* n small integers in [-50, 50] of type t (exact in every type and in
 * every sum here), their values in v; with nans, about one in nine NaN
 * (floating types). */
static void *make_data(clr_type t, size_t n, uint64_t seed, int nans,
                       double *v) {
  void *d = tu_xmalloc(n * clr_type_size(t));
  tu_rng r = {seed};
  for (size_t i = 0; i < n; i++) {
    int64_t x = (int64_t)tu_below(&r, 101) - 50;
    if (nans && tu_below(&r, 9) == 0) {
      tu_store_f(t, d, i, NAN);
      v[i] = NAN;
    } else {
      tu_store_i(t, d, i, x);
      v[i] = (double)x;
    }
  }
  return d;
}

typedef enum {
  LAY_MIXED,  /* 0 to 300 elements, a fifth of them empty */
  LAY_ONE,    /* one segment of all n */
  LAY_SINGLE, /* n segments of one element */
  LAY_EDGES,  /* empty ones first and last, long ones between */
  LAY_COUNT
} layout;

static const char *layout_name(layout l) {
  static const char *names[] = {"mixed", "one", "singles", "edges"};
  return names[l];
}

/* Offsets over n elements in a new array (n_segments + 1 of them). */
static uint64_t *make_offsets(layout l, size_t n, uint64_t seed,
                              size_t *n_segments) {
  uint64_t *o = tu_xmalloc((n + 16) * sizeof *o);
  tu_rng r = {seed};
  size_t s = 0;
  o[0] = 0;
  switch (l) {
  case LAY_ONE:
    s = 1;
    break;
  case LAY_SINGLE:
    for (s = 1; s <= n; s++)
      o[s] = s;
    s = n;
    break;
  case LAY_MIXED:
  case LAY_EDGES: {
    if (l == LAY_EDGES)
      for (; s < 3; s++)
        o[s + 1] = 0;
    while (o[s] < n) {
      uint64_t len = l == LAY_EDGES         ? 1 + tu_below(&r, 6000)
                     : tu_below(&r, 5) == 0 ? 0
                                            : 1 + tu_below(&r, 300);
      o[s + 1] = o[s] + len > n ? n : o[s] + len;
      s++;
    }
    if (l == LAY_EDGES)
      for (int k = 0; k < 3; k++, s++)
        o[s + 1] = n;
    break;
  }
  case LAY_COUNT:
    break;
  }
  o[s] = n;
  *n_segments = s;
  return o;
}

/* ------------------------------------------------------- references */

static int is_min(clr_op op) { return op == CLR_MIN || op == CLR_NANMIN; }

/* The identity of min or max in result type rt: an empty segment's. */
static double identity(clr_op op, clr_type rt) {
  int lo = !is_min(op);
  switch (rt) {
  case CLR_INT:
    return lo ? INT32_MIN : INT32_MAX;
  case CLR_LONG:
    return lo ? (double)INT64_MIN : (double)INT64_MAX;
  default:
    return lo ? -INFINITY : INFINITY;
  }
}

/* Segment s of v under op: *val, and for argmax the first index of the
 * maximum counted from the segment's start (UINT64_MAX when empty). */
static void seg_ref(clr_op op, clr_type rt, const double *v, uint64_t a,
                    uint64_t b, double *val, uint64_t *idx) {
  double acc = op == CLR_SUM || op == CLR_MEAN || op == CLR_NANMEAN
                   ? 0
                   : identity(op == CLR_ARGMAX ? CLR_MAX : op, rt);
  uint64_t count = 0, at = UINT64_MAX;
  for (uint64_t i = a; i < b; i++) {
    double x = v[i];
    switch (op) {
    case CLR_SUM:
    case CLR_MEAN:
      acc += x;
      count++;
      break;
    case CLR_NANMEAN:
      if (!isnan(x)) {
        acc += x;
        count++;
      }
      break;
    case CLR_MIN: /* a NaN wins (the first) */
      acc = isnan(acc) ? acc : isnan(x) || x < acc ? x : acc;
      break;
    case CLR_MAX:
      acc = isnan(acc) ? acc : isnan(x) || x > acc ? x : acc;
      break;
    case CLR_ARGMAX:
      if (at == UINT64_MAX || x > acc) {
        acc = x;
        at = i - a;
      }
      break;
    default:
      tu_die("seg_ref: op %s", clr_op_name(op));
    }
  }
  if (op == CLR_MEAN || op == CLR_NANMEAN)
    acc = count ? acc / (double)count : NAN;
  *val = acc;
  *idx = at;
}

/* A result against the CPU's: NaN for NaN, infinities and integers
 * exactly, floating values within a few rounding steps (a mean's
 * division, a float sum's order). */
static int same_num(clr_type rt, double got, double want) {
  if (isnan(want))
    return isnan(got);
  if (isinf(want) || !(rt == CLR_FLOAT || rt == CLR_DOUBLE || rt == CLR_HALF))
    return got == want;
  double tol = (rt == CLR_DOUBLE ? 1e-12 : 1e-5) * (fabs(want) + 1);
  return fabs(got - want) <= tol;
}

/* Every segment's result in res (clr_result_bytes each, of op and result
 * type rt) against seg_ref; the first bad one reported. */
static int check_results(const char *label, const char *what, clr_op op,
                         clr_type rt, const double *v, const uint64_t *o,
                         size_t ns, const void *res) {
  for (size_t s = 0; s < ns; s++) {
    double want;
    uint64_t want_idx;
    seg_ref(op, rt, v, o[s], o[s + 1], &want, &want_idx);
    clr_value got = clr_result_at(op, rt, res, s);
    double g = clr_value_as_double(&got);
    int ok = op == CLR_ARGMAX
                 ? got.index == want_idx &&
                       (want_idx == UINT64_MAX || same_num(rt, g, want))
                 : same_num(rt, g, want);
    if (!ok) {
      TU_CHECK(0,
               "%s: %s segment %zu of %zu ([%llu, %llu)): %.17g index %llu, "
               "want %.17g index %llu",
               label, what, s, ns, (unsigned long long)o[s],
               (unsigned long long)o[s + 1], g, (unsigned long long)got.index,
               want, (unsigned long long)want_idx);
      return 0;
    }
  }
  TU_CHECK(1, "%s: %s", label, what);
  return 1;
}

/* The inclusive (or exclusive) segmented scan of v by op (sum, min, max)
 * into out. */
static void scan_ref(clr_op op, clr_type st, const double *v, const uint64_t *o,
                     size_t ns, int exclusive, double *out) {
  for (size_t s = 0; s < ns; s++) {
    double run = op == CLR_SUM ? 0 : identity(op, st);
    for (uint64_t i = o[s]; i < o[s + 1]; i++) {
      double x = v[i];
      double next = op == CLR_SUM   ? run + x
                    : op == CLR_MIN ? (x < run ? x : run)
                                    : (x > run ? x : run);
      out[i] = exclusive ? run : next;
      run = next;
    }
  }
}

/* ---------------------------------------------------------- chains */

/* Where the enqueued call's timing has its passes' shapes and no times. */
static void check_no_times(clr_context *ctx, const char *label) {
  tu_timing tm = tu_last_timing(ctx);
  int ok = tm.n_passes >= 1;
  for (size_t i = 0; i < tm.n_passes; i++)
    ok &= tm.passes[i].n_in > 0 && tm.passes[i].global_size > 0 &&
          tm.passes[i].local_size > 0 && tm.passes[i].ms == 0;
  TU_CHECK(ok,
           "%s: the enqueued call's timing has its %zu passes' shapes, "
           "no times",
           label, tm.n_passes);
}

/* The op that reduces the segments' results in the chain (CLR_OP_COUNT:
 * none, for argmax's records). */
static clr_op results_op(clr_op op) {
  switch (op) {
  case CLR_SUM:
  case CLR_MIN:
  case CLR_MAX:
    return op;
  case CLR_MEAN:
  case CLR_NANMEAN:
    return CLR_NANMAX; /* an empty segment's mean is NaN */
  default:
    return CLR_OP_COUNT;
  }
}

typedef struct chain_case {
  clr_type t;
  clr_op op;
  layout lay;
  size_t n;
  clr_layout shape; /* the options' layout (CLR_LAYOUT_AUTO: the device's) */
} chain_case;

/* R1 = segments(op) of A by O; X = reduce(results_op) of R1; SC =
 * scan-segments (sum, or op's min / max) of A by O; R2 = segments(max) of
 * SC by O: four clr_enqueue calls, each waiting for the one before, the
 * first for an unset user event; statuses to S[0], S[1], S[2]. */
static void chain(clr_context *ctx, const chain_case *c) {
  const size_t n = c->n;
  const clr_type t = c->t;
  const clr_op op = c->op;
  clr_options opt = CLR_OPTIONS_INIT;
  opt.layout = c->shape;
  const clr_options *o_ptr = c->shape == CLR_LAYOUT_AUTO ? NULL : &opt;
  clr_type rt = clr_options_result_type(o_ptr, op, t);
  clr_op sop = op == CLR_MIN || op == CLR_MAX ? op : CLR_SUM;
  clr_type st = clr_scan_output_type(o_ptr, t);
  clr_type r2t = clr_options_result_type(o_ptr, CLR_MAX, st);
  clr_op xop = results_op(op);
  char label[160];
  snprintf(label, sizeof label, "chain %s %s, %s segments, n %zu%s",
           clr_type_name(t), clr_op_name(op), layout_name(c->lay), n,
           c->shape == CLR_LAYOUT_STRIDED      ? ", tiles"
           : c->shape == CLR_LAYOUT_CONTIGUOUS ? ", runs"
                                               : "");
  if (!tu_device.has_fp64 && (t == CLR_DOUBLE || rt == CLR_DOUBLE ||
                              st == CLR_DOUBLE || r2t == CLR_DOUBLE)) {
    if (tu_verbose)
      printf("%s: skipped (no fp64)\n", label);
    return;
  }
  size_t es = clr_type_size(t), rs = clr_result_bytes(o_ptr, op, t),
         ss = clr_type_size(st), r2s = clr_result_bytes(o_ptr, CLR_MAX, st);
  size_t xs = xop == CLR_OP_COUNT ? 8 : clr_result_bytes(o_ptr, xop, rt);
  clr_type xt =
      xop == CLR_OP_COUNT ? rt : clr_options_result_type(o_ptr, xop, rt);
  double *v = tu_xmalloc(n * sizeof *v);
  void *a = make_data(t, n, tu_seed(c->n, op, t, c->lay), op == CLR_NANMEAN, v);
  size_t ns = 0;
  uint64_t *offs = make_offsets(c->lay, n, tu_seed(c->n, t, op, 3), &ns);

  cl_int err;
  cl_event gate = clCreateUserEvent(clr_context_cl_context(ctx), &err);
  expect_cl(err, "clCreateUserEvent");
  cl_mem ab = guarded(ctx, a, n, es), ob = guarded(ctx, offs, ns + 1, 8),
         r1b = guarded(ctx, NULL, ns, rs), xb = guarded(ctx, NULL, 1, xs),
         scb = guarded(ctx, NULL, n, ss), r2b = guarded(ctx, NULL, ns, r2s),
         sb = guarded(ctx, NULL, 4, 8);
  cl_event e[4] = {NULL, NULL, NULL, NULL};
  size_t n_ev = 0;

  clr_request r = request(CLR_REQ_SEGMENTS, op, t, n);
  r.options = o_ptr;
  r.input = buffer(ab, GUARD);
  r.segments = buffer(ob, GUARD);
  r.n_segments = ns;
  r.output = buffer(r1b, GUARD);
  r.status = buffer(sb, GUARD);
  clr_status s = clr_enqueue(ctx, &r, 1, &gate, &e[n_ev]);
  TU_EXPECT_STATUS(s, CLR_OK, "chain: enqueue the segments");
  if (s == CLR_OK)
    check_no_times(ctx, label);
  n_ev += s == CLR_OK;
  if (xop != CLR_OP_COUNT) {
    clr_request x = request(CLR_REQ_REDUCE, xop, rt, ns);
    x.options = o_ptr;
    x.input = buffer(r1b, GUARD);
    x.output = buffer(xb, GUARD);
    s = clr_enqueue(ctx, &x, n_ev, n_ev ? &e[n_ev - 1] : &gate, &e[n_ev]);
    TU_EXPECT_STATUS(s, CLR_OK, "chain: enqueue the reduction of the results");
    n_ev += s == CLR_OK;
  }
  r.kind = CLR_REQ_SCAN_SEGMENTS;
  r.op = sop;
  r.output = buffer(scb, GUARD);
  r.status = buffer(sb, GUARD + 1);
  s = clr_enqueue(ctx, &r, 1, n_ev ? &e[n_ev - 1] : &gate, &e[n_ev]);
  TU_EXPECT_STATUS(s, CLR_OK, "chain: enqueue the scan-segments");
  if (s == CLR_OK)
    check_no_times(ctx, label);
  n_ev += s == CLR_OK;
  r.kind = CLR_REQ_SEGMENTS;
  r.op = CLR_MAX;
  r.type = st;
  r.input = buffer(scb, GUARD);
  r.output = buffer(r2b, GUARD);
  r.status = buffer(sb, GUARD + 2);
  s = clr_enqueue(ctx, &r, 1, n_ev ? &e[n_ev - 1] : &gate, &e[n_ev]);
  TU_EXPECT_STATUS(s, CLR_OK, "chain: enqueue the segments of the scan");
  n_ev += s == CLR_OK;
  cl_int state = CL_COMPLETE;
  if (n_ev)
    expect_cl(clGetEventInfo(e[n_ev - 1], CL_EVENT_COMMAND_EXECUTION_STATUS,
                             sizeof state, &state, NULL),
              "clGetEventInfo");
  TU_CHECK(n_ev == (xop != CLR_OP_COUNT ? 4u : 3u) && state != CL_COMPLETE,
           "%s: %zu events, the last pending while the gate is unset", label,
           n_ev);
  expect_cl(clSetUserEventStatus(gate, CL_COMPLETE), "clSetUserEventStatus");
  if (n_ev)
    expect_cl(clWaitForEvents((cl_uint)n_ev, e), "clWaitForEvents");

  /* the outputs against the CPU's */
  unsigned char *r1 = tu_xmalloc(ns * rs), *r2 = tu_xmalloc(ns * r2s),
                *sc = tu_xmalloc(n * ss), x[64];
  uint64_t status[4];
  int guards =
      read_guarded(ctx, r1b, ns, rs, r1) & read_guarded(ctx, scb, n, ss, sc) &
      read_guarded(ctx, r2b, ns, r2s, r2) & read_guarded(ctx, xb, 1, xs, x) &
      read_guarded(ctx, sb, 4, 8, status);
  TU_CHECK(guards, "%s: nothing written around the outputs", label);
  TU_CHECK(status[0] == 0 && status[1] == 0 && status[2] == 0 &&
               status[3] == 0x5a5a5a5a5a5a5a5aull,
           "%s: statuses %llu %llu %llu (want 0 0 0), the next untouched",
           label, (unsigned long long)status[0], (unsigned long long)status[1],
           (unsigned long long)status[2]);
  check_results(label, "segments", op, rt, v, offs, ns, r1);
  if (xop != CLR_OP_COUNT) {
    /* the reduction of R1, from the CPU's R1 */
    double *rv = tu_xmalloc(ns * sizeof *rv), want;
    uint64_t idx, whole[2] = {0, ns};
    for (size_t k = 0; k < ns; k++)
      seg_ref(op, rt, v, offs[k], offs[k + 1], &rv[k], &idx);
    if (xop == CLR_NANMAX) { /* the largest number, -inf for none */
      want = -INFINITY;
      for (size_t k = 0; k < ns; k++)
        want = !isnan(rv[k]) && rv[k] > want ? rv[k] : want;
    } else {
      seg_ref(xop, rt, rv, whole[0], whole[1], &want, &idx);
    }
    clr_value got = clr_result_at(xop, xt, x, 0);
    TU_CHECK(same_num(xt, clr_value_as_double(&got), want),
             "%s: %s of the results %.17g, want %.17g", label, clr_op_name(xop),
             clr_value_as_double(&got), want);
    free(rv);
  }
  double *scr = tu_xmalloc(n * sizeof *scr);
  scan_ref(sop, st, v, offs, ns, 0, scr);
  size_t bad = n;
  for (size_t i = 0; i < n && bad == n; i++) {
    clr_value g = clr_result_at(CLR_SUM, st, sc, i);
    if (!same_num(st, clr_value_as_double(&g), scr[i]))
      bad = i;
  }
  TU_CHECK(bad == n,
           "%s: scan-segments (%s) matches the CPU's (first "
           "difference at %zu of %zu)",
           label, clr_op_name(sop), bad, n);
  check_results(label, "segments of the scan", CLR_MAX, r2t, scr, offs, ns, r2);
  for (size_t k = 0; k < n_ev; k++)
    clReleaseEvent(e[k]);
  clReleaseEvent(gate);
  cl_mem all[] = {ab, ob, r1b, xb, scb, r2b, sb};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
    clReleaseMemObject(all[k]);
  free(scr);
  free(r1);
  free(r2);
  free(sc);
  free(offs);
  free(a);
  free(v);
}

static void chains(clr_context *ctx) {
  const clr_type types[] = {CLR_INT, CLR_LONG, CLR_FLOAT, CLR_DOUBLE, CLR_HALF};
  const clr_op ops[] = {CLR_SUM, CLR_MIN, CLR_MAX, CLR_ARGMAX, CLR_MEAN};
  /* primes, and sizes of no round number */
  const size_t sizes[] = {100003, 4099, 30011, 1, 77777};
  size_t k = 0;
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    for (size_t j = 0; j < sizeof ops / sizeof ops[0]; j++, k++) {
      if (ops[j] == CLR_MEAN && types[i] == CLR_LONG)
        continue; /* refused by every form (refusals) */
      chain_case c = {types[i], ops[j], (layout)(k % LAY_COUNT),
                      sizes[k % (sizeof sizes / sizeof sizes[0])],
                      CLR_LAYOUT_AUTO};
      if (c.n == 1 && c.lay == LAY_SINGLE)
        c.lay = LAY_MIXED;
      chain(ctx, &c);
    }
  tu_section("chains of enqueued segments and scan-segments, one wait");
  /* both layouts (tiles: the GPUs' form, with its partition pass) */
  const clr_layout shapes[] = {CLR_LAYOUT_STRIDED, CLR_LAYOUT_CONTIGUOUS};
  for (size_t i = 0; i < 2; i++)
    for (int l = 0; l < LAY_COUNT; l++) {
      chain_case c = {i ? CLR_LONG : CLR_FLOAT, l % 2 ? CLR_ARGMAX : CLR_SUM,
                      (layout)l, l == LAY_SINGLE ? 5003 : 65537, shapes[i]};
      chain(ctx, &c);
    }
  /* a NaN-skipping mean divides by counts (a second segmented pass) */
  chain_case nm = {CLR_FLOAT, CLR_NANMEAN, LAY_MIXED, 40009, CLR_LAYOUT_AUTO};
  chain(ctx, &nm);
  nm.shape = CLR_LAYOUT_STRIDED;
  nm.lay = LAY_EDGES;
  chain(ctx, &nm);
  if (tu_device.has_fp64) {
    nm.t = CLR_DOUBLE;
    chain(ctx, &nm);
  }
  tu_section("both layouts, NaN-skipping means");
}

/* ------------------------------------------------- options, enqueued */

/* One enqueued request, waited for; CLR_OK or its status. */
static clr_status run_enqueued(clr_context *ctx, const clr_request *r) {
  cl_event e = NULL;
  clr_status s = clr_enqueue(ctx, r, 0, NULL, &e);
  if (s == CLR_OK) {
    expect_cl(clWaitForEvents(1, &e), "clWaitForEvents");
    clReleaseEvent(e);
  }
  return s;
}

static void options(clr_context *ctx) {
  const size_t n = 20011;
  size_t ns = 0;
  uint64_t *offs = make_offsets(LAY_MIXED, n, 41, &ns);
  double *v = tu_xmalloc(n * sizeof *v), *ref = tu_xmalloc(n * sizeof *ref);
  void *ai = make_data(CLR_INT, n, 42, 0, v);
  float *af = tu_xmalloc(n * sizeof *af);
  for (size_t i = 0; i < n; i++)
    af[i] = (float)v[i];
  cl_mem aib = guarded(ctx, ai, n, 4), afb = guarded(ctx, af, n, 4),
         ob = guarded(ctx, offs, ns + 1, 8), rb = guarded(ctx, NULL, ns, 8),
         scb = guarded(ctx, NULL, n, 8);
  unsigned char *res = tu_xmalloc(n * 8);
  clr_request r = request(CLR_REQ_SEGMENTS, CLR_SUM, CLR_FLOAT, n);
  r.input = buffer(afb, GUARD);
  r.segments = buffer(ob, GUARD);
  r.n_segments = ns;
  r.output = buffer(rb, GUARD);
  clr_options o = CLR_OPTIONS_INIT;

  /* a float sum accumulated in double */
  if (tu_device.has_fp64) {
    o.accumulate_in = CLR_DOUBLE;
    r.options = &o;
    TU_EXPECT_STATUS(run_enqueued(ctx, &r), CLR_OK,
                     "enqueued float sum in double");
    TU_CHECK(read_guarded(ctx, rb, ns, 8, res),
             "float sum in double: nothing written around the results");
    check_results("enqueued float sum in double", "segments", CLR_SUM,
                  CLR_DOUBLE, v, offs, ns, res);
  }
  /* an int sum in int (narrow_accumulator) */
  o = (clr_options)CLR_OPTIONS_INIT;
  o.narrow_accumulator = 1;
  r.options = &o;
  r.type = CLR_INT;
  r.input = buffer(aib, GUARD);
  TU_CHECK(clr_options_result_type(&o, CLR_SUM, CLR_INT) == CLR_INT,
           "narrow int sums are int");
  TU_EXPECT_STATUS(run_enqueued(ctx, &r), CLR_OK, "enqueued narrow int sum");
  read_guarded(ctx, rb, ns, 4, res);
  check_results("enqueued narrow int sum", "segments", CLR_SUM, CLR_INT, v,
                offs, ns, res);
  /* a map expression of x and i (i counted from index_base at element 0) */
  o = (clr_options)CLR_OPTIONS_INIT;
  o.map = CLR_MAP_EXPR;
  o.map_expr = "x * 3 - (i % 4)";
  o.index_base = 8;
  r.options = &o;
  clr_type mt = clr_options_result_type(&o, CLR_SUM, CLR_INT);
  TU_EXPECT_STATUS(run_enqueued(ctx, &r), CLR_OK,
                   "enqueued int sum of a map expression");
  read_guarded(ctx, rb, ns, clr_result_bytes(&o, CLR_SUM, CLR_INT), res);
  double *mv = tu_xmalloc(n * sizeof *mv);
  for (size_t i = 0; i < n; i++)
    mv[i] = v[i] * 3 - (double)((i + 8) % 4);
  check_results("enqueued int sum of x * 3 - (i % 4)", "segments", CLR_SUM, mt,
                mv, offs, ns, res);
  /* an argmax of a map expression: its index counts from the segment */
  r.op = CLR_ARGMAX;
  clr_type at = clr_options_result_type(&o, CLR_ARGMAX, CLR_INT);
  cl_mem ab2 =
      guarded(ctx, NULL, ns, clr_result_bytes(&o, CLR_ARGMAX, CLR_INT));
  r.output = buffer(ab2, GUARD);
  TU_EXPECT_STATUS(run_enqueued(ctx, &r), CLR_OK,
                   "enqueued argmax of a map expression");
  unsigned char *ares =
      tu_xmalloc(ns * clr_result_bytes(&o, CLR_ARGMAX, CLR_INT));
  read_guarded(ctx, ab2, ns, clr_result_bytes(&o, CLR_ARGMAX, CLR_INT), ares);
  check_results("enqueued argmax of x * 3 - (i % 4)", "segments", CLR_ARGMAX,
                at, mv, offs, ns, ares);
  free(ares);
  clReleaseMemObject(ab2);
  /* an exclusive scan-segments, and one of long sums of int (accumulate_in) */
  o = (clr_options)CLR_OPTIONS_INIT;
  o.exclusive = 1;
  r = request(CLR_REQ_SCAN_SEGMENTS, CLR_SUM, CLR_INT, n);
  r.options = &o;
  r.input = buffer(aib, GUARD);
  r.segments = buffer(ob, GUARD);
  r.n_segments = ns;
  r.output = buffer(scb, GUARD);
  TU_EXPECT_STATUS(run_enqueued(ctx, &r), CLR_OK,
                   "enqueued exclusive scan-segments");
  TU_CHECK(read_guarded(ctx, scb, n, 4, res),
           "exclusive scan-segments: nothing written around the output");
  scan_ref(CLR_SUM, CLR_INT, v, offs, ns, 1, ref);
  size_t bad = n;
  for (size_t i = 0; i < n && bad == n; i++)
    if (((int32_t *)(void *)res)[i] != (int32_t)ref[i])
      bad = i;
  TU_CHECK(bad == n,
           "enqueued exclusive scan-segments (first difference at "
           "%zu)",
           bad);
  o = (clr_options)CLR_OPTIONS_INIT;
  o.accumulate_in = CLR_LONG;
  r.options = &o;
  TU_EXPECT_STATUS(run_enqueued(ctx, &r), CLR_OK,
                   "enqueued scan-segments of int into long");
  read_guarded(ctx, scb, n, 8, res);
  scan_ref(CLR_SUM, CLR_LONG, v, offs, ns, 0, ref);
  bad = n;
  for (size_t i = 0; i < n && bad == n; i++)
    if (((int64_t *)(void *)res)[i] != (int64_t)ref[i])
      bad = i;
  TU_CHECK(bad == n,
           "enqueued scan-segments of int into long (first "
           "difference at %zu)",
           bad);
  cl_mem all[] = {aib, afb, ob, rb, scb};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
    clReleaseMemObject(all[k]);
  free(res);
  free(mv);
  free(af);
  free(ai);
  free(ref);
  free(v);
  free(offs);
  tu_section("options through clr_enqueue");
}

/* ------------------------------------------------------- bad offsets */

/* Offsets spoilt at one place or more, through both kinds enqueued (with
 * and without status): status is 1 + want_index, nothing is written
 * around the outputs, the wait returns; clr_run still refuses them.  The
 * header leaves the outputs unspecified; this implementation's kernels
 * read a sanitised copy, the partition 0, ..., 0, n (every segment empty
 * but the last, which holds all n elements), and the outputs are checked
 * to be that partition's: offsets read as they were would not give it. */
static void bad_case(clr_context *ctx, const char *what, size_t n, size_t ns,
                     const uint64_t *offs, uint64_t want_index, clr_op op) {
  const clr_type t = CLR_INT;
  double *v = tu_xmalloc(n * sizeof *v);
  void *a = make_data(t, n, 5, 0, v);
  size_t rs = clr_result_bytes(NULL, op, t);
  cl_mem ab = guarded(ctx, a, n, 4), ob = guarded(ctx, offs, ns + 1, 8),
         rb = guarded(ctx, NULL, ns, rs), scb = guarded(ctx, NULL, n, 4),
         sb = guarded(ctx, NULL, 2, 8);
  char label[160];
  for (int kind = 0; kind < 2; kind++) {
    clr_request r = request(kind ? CLR_REQ_SCAN_SEGMENTS : CLR_REQ_SEGMENTS,
                            kind && op != CLR_MIN ? CLR_SUM : op, t, n);
    r.input = buffer(ab, GUARD);
    r.segments = buffer(ob, GUARD);
    r.n_segments = ns;
    r.output = kind ? buffer(scb, GUARD) : buffer(rb, GUARD);
    snprintf(label, sizeof label, "bad offsets (%s), %s %s", what,
             clr_request_kind_name(r.kind), clr_op_name(r.op));
    for (int with_status = 1; with_status >= 0; with_status--) {
      r.status = with_status ? buffer(sb, GUARD + kind) : buffer(NULL, 0);
      TU_EXPECT_STATUS(run_enqueued(ctx, &r), CLR_OK, label);
    }
    uint64_t st[2];
    unsigned char *res = tu_xmalloc(n * 4 + ns * rs);
    int guards =
        read_guarded(ctx, sb, 2, 8, st) &
        read_guarded(ctx, kind ? scb : rb, kind ? n : ns, kind ? 4 : rs, res);
    TU_CHECK(st[kind] == want_index + 1 && guards,
             "%s: status %llu (want %llu), nothing written around the "
             "outputs",
             label, (unsigned long long)st[kind],
             (unsigned long long)want_index + 1);
    uint64_t *safe = tu_xmalloc((ns + 1) * sizeof *safe);
    memset(safe, 0, ns * sizeof *safe);
    safe[ns] = n;
    if (kind) {
      double *ref = tu_xmalloc(n * sizeof *ref);
      scan_ref(r.op, t, v, safe, ns, 0, ref);
      size_t bad = n;
      for (size_t i = 0; i < n && bad == n; i++)
        if (((int32_t *)(void *)res)[i] != (int32_t)ref[i])
          bad = i;
      TU_CHECK(bad == n,
               "%s: the output is the sanitised partition's (first "
               "difference at %zu)",
               label, bad);
      free(ref);
    } else {
      check_results(label, "the results are the sanitised partition's", op,
                    clr_options_result_type(NULL, op, t), v, safe, ns, res);
    }
    free(safe);
    free(res);
    /* clr_run names the same offset */
    char idx[32];
    snprintf(idx, sizeof idx, "offsets[%llu]", (unsigned long long)want_index);
    clr_status s = clr_run(ctx, &r, NULL);
    const char *d = clr_context_error(ctx);
    TU_CHECK(s == CLR_ERR_INVALID_ARGUMENT && strstr(d, idx),
             "%s: clr_run refuses them: %s '%s' (want it to name %s)", label,
             clr_status_name(s), d, idx);
  }
  cl_mem all[] = {ab, ob, rb, scb, sb};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
    clReleaseMemObject(all[k]);
  free(a);
  free(v);
}

static void bad_offsets(clr_context *ctx) {
  const size_t n = 5003;
  size_t ns = 0;
  uint64_t *good = make_offsets(LAY_MIXED, n, 77, &ns);
  uint64_t *o = tu_xmalloc((ns + 1) * sizeof *o);
  TU_CHECK(ns > 8, "bad offsets: %zu segments to spoil", ns);
  const clr_op ops[] = {CLR_SUM, CLR_ARGMAX, CLR_MEAN, CLR_MIN};
  for (size_t k = 0; k < 4; k++) {
    clr_op op = ops[k];
    memcpy(o, good, (ns + 1) * sizeof *o);
    o[0] = 3;
    bad_case(ctx, "the first is not 0", n, ns, o, 0, op);
    memcpy(o, good, (ns + 1) * sizeof *o);
    o[4] = n + 7; /* past n, then a decrease */
    bad_case(ctx, "one past n", n, ns, o, 5, op);
    memcpy(o, good, (ns + 1) * sizeof *o);
    o[ns] = n + 1;
    bad_case(ctx, "the last past n", n, ns, o, ns, op);
    memcpy(o, good, (ns + 1) * sizeof *o);
    o[ns] = n - 1;
    bad_case(ctx, "the last short of n", n, ns, o, ns, op);
    for (size_t i = 0; i <= ns; i++)
      o[i] = UINT64_MAX - i;
    bad_case(ctx, "all huge, decreasing", n, ns, o, 0, op);
    memcpy(o, good, (ns + 1) * sizeof *o);
    for (size_t i = 5; i < ns; i++)
      o[i] = UINT64_MAX;
    bad_case(ctx, "a tail of UINT64_MAX", n, ns, o, ns, op);
  }
  free(o);
  free(good);
  /* many segments: the first bad one found across many work-groups */
  const size_t big_n = 400009;
  uint64_t *big = make_offsets(LAY_SINGLE, big_n, 1, &ns);
  big[300001] = 5;
  big[123457] = big[123456] - 1;
  bad_case(ctx, "two decreases among 400009", big_n, ns, big, 123457, CLR_SUM);
  free(big);
  /* and the context keeps working */
  chain_case c = {CLR_LONG, CLR_SUM, LAY_EDGES, 9001, CLR_LAYOUT_AUTO};
  chain(ctx, &c);
  tu_section("bad offsets through clr_enqueue");
}

/* ---------------------------------------------------------- refusals */

static void expect_refusal(clr_context *ctx, clr_status got, clr_status want,
                           const char *what, const char *want_text) {
  const char *d = clr_context_error(ctx);
  TU_CHECK(got == want && d[0] && !strchr(d, '\n') &&
               (!want_text || strstr(d, want_text)),
           "%s: %s, want %s; detail '%s', want it to name '%s'", what,
           clr_status_name(got), clr_status_name(want), d,
           want_text ? want_text : "");
}

static void refusals(clr_context *ctx) {
  const clr_status INV = CLR_ERR_INVALID_ARGUMENT;
  int32_t x[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  uint64_t offs[3] = {0, 8, 16}, host_status = 0;
  cl_mem xb = tu_new_buffer(ctx, sizeof x, x);
  cl_mem ob = tu_new_buffer(ctx, sizeof offs, offs);
  cl_mem out = tu_new_buffer(ctx, 16 * 8, NULL);
  cl_int err;
  cl_mem ro = clCreateBuffer(clr_context_cl_context(ctx), CL_MEM_READ_ONLY, 64,
                             NULL, &err);
  expect_cl(err, "clCreateBuffer");
  for (int kind = 0; kind < 2; kind++) {
    clr_request base = request(kind ? CLR_REQ_SCAN_SEGMENTS : CLR_REQ_SEGMENTS,
                               CLR_SUM, CLR_INT, 16);
    base.input = buffer(xb, 0);
    base.segments = buffer(ob, 0);
    base.n_segments = 2;
    base.output = buffer(out, 0);
    base.status = buffer(out, 15);
    const char *k = clr_request_kind_name(base.kind);
    char what[160];
    cl_event ev = (cl_event)1;
    clr_request r = base;
    TU_EXPECT_STATUS(run_enqueued(ctx, &r), CLR_OK, "the refusals' base");
#define REFUSED(want, text, ...)                                               \
  do {                                                                         \
    r = base;                                                                  \
    __VA_ARGS__;                                                               \
    ev = (cl_event)1;                                                          \
    snprintf(what, sizeof what, "clr_enqueue of a %s: %s", k, text);           \
    expect_refusal(ctx, clr_enqueue(ctx, &r, 0, NULL, &ev), want, what, text); \
    TU_CHECK(ev == NULL, "%s: *event NULL", what);                             \
  } while (0)
    REFUSED(INV, "status", r.status = buffer(out, 16));
    REFUSED(INV, "status", r.status = buffer(ro, 0));
    REFUSED(INV, "status", r.status.host = &host_status;
            r.status.buffer = NULL);
    REFUSED(INV, "overlaps", r.status = buffer(out, 1));
    REFUSED(CLR_ERR_UNSUPPORTED, "exact", {
      static clr_options xo = CLR_OPTIONS_INIT;
      xo.exact = 1;
      r.type = CLR_FLOAT;
      r.options = &xo;
    });
    REFUSED(CLR_ERR_UNSUPPORTED, "mean", r.op = CLR_MEAN; r.type = CLR_LONG);
    REFUSED(INV, "n_segments", r.n_segments = 0);
    REFUSED(INV, "offsets", r.n_segments = 3); /* past its buffer */
    REFUSED(CLR_ERR_UNSUPPORTED, "host arrays", {
      r.input = (clr_operand){x, NULL, 0};
      r.segments = (clr_operand){offs, NULL, 0};
      r.output = (clr_operand){x, NULL, 0};
      r.status = buffer(NULL, 0);
    });
    if (kind) {
      REFUSED(CLR_ERR_UNSUPPORTED, "argmax", r.op = CLR_ARGMAX);
      REFUSED(CLR_ERR_UNSUPPORTED, "map", {
        static clr_options mo = CLR_OPTIONS_INIT;
        mo.map = CLR_MAP_SQUARE;
        r.options = &mo;
      });
    }
#undef REFUSED
    r = base;
    ev = (cl_event)1;
    snprintf(what, sizeof what, "clr_enqueue of a %s: 1 event, no wait list",
             k);
    expect_refusal(ctx, clr_enqueue(ctx, &r, 1, NULL, &ev), INV, what,
                   "wait list");
    TU_CHECK(ev == NULL, "%s: *event NULL", what);
    snprintf(what, sizeof what, "clr_run of a %s with status", k);
    expect_refusal(ctx, clr_run(ctx, &r, NULL), INV, what, "status");
  }
  /* the context still works: the segments' sums, enqueued */
  clr_request r = request(CLR_REQ_SEGMENTS, CLR_SUM, CLR_INT, 16);
  r.input = buffer(xb, 0);
  r.segments = buffer(ob, 0);
  r.n_segments = 2;
  r.output = buffer(out, 0);
  TU_EXPECT_STATUS(run_enqueued(ctx, &r), CLR_OK, "after the refusals");
  int64_t got[2] = {0, 0};
  expect_cl(clEnqueueReadBuffer(clr_context_queue(ctx), out, CL_TRUE, 0,
                                sizeof got, got, 0, NULL, NULL),
            "clEnqueueReadBuffer");
  TU_CHECK(got[0] == 36 && got[1] == 100,
           "after the refusals: sums %lld and %lld, want 36 and 100",
           (long long)got[0], (long long)got[1]);
  clReleaseMemObject(xb);
  clReleaseMemObject(ob);
  clReleaseMemObject(out);
  clReleaseMemObject(ro);
  tu_section("refusals of the enqueued forms");
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "-v") == 0)
      tu_verbose = 1;
  clr_context *ctx = tu_context();
  refusals(ctx);
  chains(ctx);
  options(ctx);
  bad_offsets(ctx);
  clr_context_release(ctx);
  return tu_finish("test_async_segments");
}
