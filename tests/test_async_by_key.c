/* clr_enqueue of CLR_REQ_BY_KEY (no host sync: the number of runs written
 * to run_count on the device) and a caller's scratch
 * (clr_request_scratch_size, clr_request.scratch).
 *
 * Chains of clr_enqueue calls held by an unset user event, one wait:
 * by-key of (keys, values) -> a sum of its results into a buffer -> a sum
 * scan of them -> a by-key of the scan by other keys; every output and
 * both counts against CPU loops, for int, uint, long and ulong keys, int,
 * long, float and double values (integer-valued, so every sum is exact),
 * sum, min and max; argmin and mean enqueued by key after a sum, in one
 * chain; keys of one run, of runs of length 1, random runs, n prime and
 * n = 1.  The refusals: outputs without room for n runs, no run_count.
 * Scratch: the size query's answer works as scratch for an enqueued
 * by-key, a by-key under clr_run and scans (the decoupled and a tiled
 * kernel), one byte less and a misaligned offset refused with both sizes
 * named, host arrays refused, and an enqueued by-key in caller
 * scratch allocates no context buffer (the context's count of its own
 * allocations, internal.h) and leaves no reference to the buffer. */
#include "internal.h"
#include "scratch_checks.h"
#include "test_util.h"

#include <CL/cl.h>
#include <math.h>
#include <stdint.h>
#include <unistd.h>

/* Element i of an array of t as a double (ints, exact here). */
static double get(clr_type t, const void *a, size_t i) {
  switch (t) {
  case CLR_INT:
    return ((const int32_t *)a)[i];
  case CLR_UINT:
    return ((const uint32_t *)a)[i];
  case CLR_LONG:
    return (double)((const int64_t *)a)[i];
  case CLR_ULONG:
    return (double)((const uint64_t *)a)[i];
  case CLR_FLOAT:
    return ((const float *)a)[i];
  case CLR_DOUBLE:
    return ((const double *)a)[i];
  default:
    tu_die("no such type in this test");
  }
}

static void put(clr_type t, void *a, size_t i, double x) {
  switch (t) {
  case CLR_INT:
    ((int32_t *)a)[i] = (int32_t)x;
    break;
  case CLR_UINT:
    ((uint32_t *)a)[i] = (uint32_t)x;
    break;
  case CLR_LONG:
    ((int64_t *)a)[i] = (int64_t)x;
    break;
  case CLR_ULONG:
    ((uint64_t *)a)[i] = (uint64_t)x;
    break;
  case CLR_FLOAT:
    ((float *)a)[i] = (float)x;
    break;
  case CLR_DOUBLE:
    ((double *)a)[i] = x;
    break;
  default:
    tu_die("no such type in this test");
  }
}

/* Keys of a pattern: 0 random runs of 1..40, 1 one run, 2 runs of 1. */
static void make_keys(clr_type kt, size_t n, int pattern, uint64_t seed,
                      void *keys) {
  tu_rng g = {seed};
  size_t run = 0;
  for (size_t i = 0; i < n; run++) {
    size_t len = pattern == 0 ? 1 + tu_below(&g, 40) : pattern == 1 ? n : 1;
    for (size_t k = 0; k < len && i < n; k++, i++)
      put(kt, keys, i, pattern == 2 ? (double)(run % 5) : (double)(run % 7));
  }
}

/* The runs of keys: their starts (n_runs + 1 offsets, the last n). */
static size_t runs_of(clr_type kt, const void *keys, size_t n,
                      uint64_t *starts) {
  size_t r = 0;
  for (size_t i = 0; i < n; i++)
    if (i == 0 || get(kt, keys, i) != get(kt, keys, i - 1))
      starts[r++] = i;
  starts[r] = n;
  return r;
}

/* op over values [a, b): a sum, min or max (as a double: exact here), a
 * mean, or argmin's index from a. */
static double fold(clr_op op, clr_type t, const void *x, size_t a, size_t b,
                   uint64_t *index) {
  double acc = get(t, x, a);
  *index = 0;
  for (size_t i = a + 1; i < b; i++) {
    double v = get(t, x, i);
    if (op == CLR_SUM || op == CLR_MEAN)
      acc += v;
    else if ((op == CLR_MIN || op == CLR_ARGMIN) && v < acc) {
      acc = v;
      *index = i - a;
    } else if (op == CLR_MAX && v > acc)
      acc = v;
  }
  return op == CLR_MEAN ? acc / (double)(b - a) : acc;
}

/* Values: integers in [-50, 50] (unsigned: [0, 100]). */
static void *make_values(clr_type t, size_t n, uint64_t seed) {
  void *x = tu_xmalloc(n * clr_type_size(t) + 8);
  tu_rng g = {seed};
  for (size_t i = 0; i < n; i++)
    put(t, x, i, (double)tu_below(&g, 101) - 50);
  return x;
}

static clr_request by_key(clr_op op, clr_type kt, clr_type vt, size_t n,
                          cl_mem keys, cl_mem values, cl_mem ukeys,
                          cl_mem results, cl_mem count, size_t count_at) {
  clr_request r;
  clr_request_init(&r);
  r.kind = CLR_REQ_BY_KEY;
  r.op = op;
  r.type = vt;
  r.key_type = kt;
  r.n = n;
  r.segments = buf_op(keys, 0);
  r.input = buf_op(values, 0);
  r.output_keys = buf_op(ukeys, 0);
  r.output = buf_op(results, 0);
  r.run_count = buf_op(count, count_at);
  return r;
}

/* The results [0, runs) of a by-key (decoded by clr_result_at) against
 * op over the runs of x; the unique keys against the runs' first keys. */
static int check_runs(const char *label, clr_op op, clr_type kt, clr_type vt,
                      const void *keys, const void *x, const uint64_t *starts,
                      size_t runs, const void *ukeys, const void *res) {
  clr_type rt = clr_options_result_type(NULL, op, vt);
  size_t bad = SIZE_MAX;
  double got_v = 0, want_v = 0;
  for (size_t r = 0; r < runs && bad == SIZE_MAX; r++) {
    uint64_t idx;
    double want = fold(op, vt, x, starts[r], starts[r + 1], &idx);
    clr_value v = clr_result_at(op, rt, res, r);
    double got = clr_value_as_double(&v);
    int ok = op == CLR_MEAN ? fabs(got - want) <= 1e-6 * (1 + fabs(want))
                            : got == want;
    if (op == CLR_ARGMIN)
      ok &= v.index == idx;
    if (get(kt, ukeys, r) != get(kt, keys, starts[r]))
      ok = 0;
    if (!ok) {
      bad = r;
      got_v = got;
      want_v = want;
    }
  }
  return TU_CHECK(bad == SIZE_MAX, "%s: run %zu: got %g, want %g (or its key)",
                  label, bad, got_v, want_v);
}

/* by-key (op) of (K, A) -> R1, U1, count[0]; sum of R1[0, runs) into
 * T[0]; sum scan of R1[0, runs) into S; by-key (op) of (K2, S) -> R2, U2,
 * count[1].  Four clr_enqueue calls, the first held by an unset user
 * event, one wait. */
static void chain(clr_context *ctx, clr_type kt, clr_type vt, clr_op op,
                  size_t n, int pattern) {
  char label[128];
  snprintf(label, sizeof label, "chain %s by %s keys of %s, n %zu, keys %s",
           clr_op_name(op), clr_type_name(kt), clr_type_name(vt), n,
           pattern == 0   ? "in random runs"
           : pattern == 1 ? "of one run"
                          : "in runs of 1");
  size_t ks = clr_type_size(kt), vs = clr_type_size(vt);
  clr_type rt = clr_options_result_type(NULL, op, vt);
  size_t rb = clr_result_bytes(NULL, op, vt);
  clr_type st = clr_scan_output_type(NULL, rt);
  size_t ss = clr_type_size(st);
  void *keys = tu_xmalloc(n * ks);
  make_keys(kt, n, pattern, tu_seed(1, kt, vt, n), keys);
  void *x = make_values(vt, n, tu_seed(2, op, vt, n));
  uint64_t *starts = tu_xmalloc((n + 1) * sizeof *starts);
  size_t runs = runs_of(kt, keys, n, starts);
  /* the second keys: over the runs, in runs of 1..40 again */
  void *keys2 = tu_xmalloc(runs * ks);
  make_keys(kt, runs, 0, tu_seed(3, kt, runs, 0), keys2);
  uint64_t *starts2 = tu_xmalloc((runs + 1) * sizeof *starts2);
  size_t runs2 = runs_of(kt, keys2, runs, starts2);

  cl_mem bk = tu_new_buffer(ctx, n * ks, keys);
  cl_mem bx = tu_new_buffer(ctx, n * vs, x);
  cl_mem bu = tu_new_buffer(ctx, n * ks, NULL);
  cl_mem br = tu_new_buffer(ctx, n * rb, NULL);
  cl_mem bc = tu_new_buffer(ctx, 2 * sizeof(cl_ulong), NULL);
  cl_mem bt = tu_new_buffer(ctx, 16, NULL);
  cl_mem bs = tu_new_buffer(ctx, runs * ss, NULL);
  cl_mem bk2 = tu_new_buffer(ctx, runs * ks, keys2);
  cl_mem bu2 = tu_new_buffer(ctx, runs * ks, NULL);
  size_t rb2 = clr_result_bytes(NULL, op, st);
  cl_mem br2 = tu_new_buffer(ctx, runs * rb2, NULL);

  cl_int err;
  cl_event gate = clCreateUserEvent(clr_context_cl_context(ctx), &err);
  expect_cl(err, "clCreateUserEvent");
  cl_event e[4] = {NULL, NULL, NULL, NULL};
  clr_request r = by_key(op, kt, vt, n, bk, bx, bu, br, bc, 0);
  clr_status s = clr_enqueue(ctx, &r, 1, &gate, &e[0]);
  TU_EXPECT_STATUS(s, CLR_OK, label);
  if (s != CLR_OK)
    printf("  %s\n", clr_context_error(ctx));
  clr_request q;
  clr_request_init(&q);
  q.kind = CLR_REQ_REDUCE;
  q.op = CLR_SUM;
  q.type = rt;
  q.n = runs; /* the caller knows its keys; the library does not */
  q.input = buf_op(br, 0);
  q.output = buf_op(bt, 0);
  s = clr_enqueue(ctx, &q, 1, &e[0], &e[1]);
  TU_EXPECT_STATUS(s, CLR_OK, "chain: the sum of the results");
  q.kind = CLR_REQ_SCAN;
  q.output = buf_op(bs, 0);
  s = clr_enqueue(ctx, &q, 1, &e[1], &e[2]);
  TU_EXPECT_STATUS(s, CLR_OK, "chain: the scan of the results");
  clr_request r2 = by_key(op, kt, st, runs, bk2, bs, bu2, br2, bc, 1);
  s = clr_enqueue(ctx, &r2, 1, &e[2], &e[3]);
  TU_EXPECT_STATUS(s, CLR_OK, "chain: the by-key of the scan");
  if (s != CLR_OK)
    printf("  %s\n", clr_context_error(ctx));
  cl_int state = CL_COMPLETE;
  if (e[3])
    expect_cl(clGetEventInfo(e[3], CL_EVENT_COMMAND_EXECUTION_STATUS,
                             sizeof state, &state, NULL),
              "clGetEventInfo");
  TU_CHECK(e[0] && e[1] && e[2] && e[3] && state != CL_COMPLETE,
           "%s: four events, the last pending while the gate is unset", label);
  expect_cl(clSetUserEventStatus(gate, CL_COMPLETE), "clSetUserEventStatus");
  if (e[3])
    expect_cl(clWaitForEvents(1, &e[3]), "clWaitForEvents");

  cl_ulong counts[2] = {0, 0};
  read_bytes(ctx, bc, 0, sizeof counts, counts);
  void *u = tu_xmalloc(n * ks), *res = tu_xmalloc(n * rb);
  void *scan = tu_xmalloc(runs * ss + 8), *u2 = tu_xmalloc(runs * ks);
  void *res2 = tu_xmalloc(runs * rb2);
  unsigned char total[16];
  read_bytes(ctx, bu, 0, runs * ks, u);
  read_bytes(ctx, br, 0, runs * rb, res);
  read_bytes(ctx, bt, 0, rb, total);
  read_bytes(ctx, bs, 0, runs * ss, scan);
  read_bytes(ctx, bu2, 0, runs2 * ks, u2);
  read_bytes(ctx, br2, 0, runs2 * rb2, res2);
  TU_CHECK(counts[0] == runs && counts[1] == runs2,
           "%s: run counts %llu and %llu, want %zu and %zu", label,
           (unsigned long long)counts[0], (unsigned long long)counts[1], runs,
           runs2);
  check_runs(label, op, kt, vt, keys, x, starts, runs, u, res);
  /* the sum and scan of the results, on the CPU */
  double sum = 0;
  int scan_ok = 1;
  for (size_t i = 0; i < runs; i++) {
    clr_value v = clr_result_at(op, rt, res, i);
    sum += clr_value_as_double(&v);
    scan_ok &= get(st, scan, i) == sum;
  }
  clr_value tv = clr_result_at(CLR_SUM, rt, total, 0);
  TU_CHECK(clr_value_as_double(&tv) == sum, "%s: sum of results %g, want %g",
           label, clr_value_as_double(&tv), sum);
  TU_CHECK(scan_ok, "%s: the scan of the results", label);
  check_runs(label, op, kt, st, keys2, scan, starts2, runs2, u2, res2);
  for (int i = 0; i < 4; i++)
    if (e[i])
      clReleaseEvent(e[i]);
  clReleaseEvent(gate);
  cl_mem all[] = {bk, bx, bu, br, bc, bt, bs, bk2, bu2, br2};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    clReleaseMemObject(all[i]);
  free(keys);
  free(keys2);
  free(x);
  free(starts);
  free(starts2);
  free(u);
  free(res);
  free(scan);
  free(u2);
  free(res2);
}

/* sum, argmin and mean by key of the same (keys, values), three
 * clr_enqueue calls each after the one before, one wait. */
static void ops_chain(clr_context *ctx, clr_type kt, clr_type vt, size_t n) {
  const clr_op ops[3] = {CLR_SUM, CLR_ARGMIN, CLR_MEAN};
  char label[128];
  size_t ks = clr_type_size(kt), vs = clr_type_size(vt);
  void *keys = tu_xmalloc(n * ks);
  make_keys(kt, n, 0, tu_seed(4, kt, vt, n), keys);
  void *x = make_values(vt, n, tu_seed(5, kt, vt, n));
  uint64_t *starts = tu_xmalloc((n + 1) * sizeof *starts);
  size_t runs = runs_of(kt, keys, n, starts);
  cl_mem bk = tu_new_buffer(ctx, n * ks, keys);
  cl_mem bx = tu_new_buffer(ctx, n * vs, x);
  cl_mem bc = tu_new_buffer(ctx, 3 * sizeof(cl_ulong), NULL);
  cl_mem bu[3], br[3];
  cl_int err;
  cl_event gate = clCreateUserEvent(clr_context_cl_context(ctx), &err);
  expect_cl(err, "clCreateUserEvent");
  cl_event e[3] = {NULL, NULL, NULL};
  for (int k = 0; k < 3; k++) {
    bu[k] = tu_new_buffer(ctx, n * ks, NULL);
    br[k] = tu_new_buffer(ctx, n * clr_result_bytes(NULL, ops[k], vt), NULL);
    clr_request r = by_key(ops[k], kt, vt, n, bk, bx, bu[k], br[k], bc, k);
    clr_status s = clr_enqueue(ctx, &r, 1, k ? &e[k - 1] : &gate, &e[k]);
    snprintf(label, sizeof label, "enqueued by-key %s of %s by %s keys",
             clr_op_name(ops[k]), clr_type_name(vt), clr_type_name(kt));
    if (!TU_EXPECT_STATUS(s, CLR_OK, label))
      printf("  %s\n", clr_context_error(ctx));
  }
  expect_cl(clSetUserEventStatus(gate, CL_COMPLETE), "clSetUserEventStatus");
  if (e[2])
    expect_cl(clWaitForEvents(1, &e[2]), "clWaitForEvents");
  cl_ulong counts[3];
  read_bytes(ctx, bc, 0, sizeof counts, counts);
  for (int k = 0; k < 3; k++) {
    size_t rb = clr_result_bytes(NULL, ops[k], vt);
    void *u = tu_xmalloc(n * ks), *res = tu_xmalloc(n * rb);
    read_bytes(ctx, bu[k], 0, runs * ks, u);
    read_bytes(ctx, br[k], 0, runs * rb, res);
    snprintf(label, sizeof label, "enqueued by-key %s of %s by %s keys",
             clr_op_name(ops[k]), clr_type_name(vt), clr_type_name(kt));
    TU_CHECK(counts[k] == runs, "%s: %llu runs, want %zu", label,
             (unsigned long long)counts[k], runs);
    check_runs(label, ops[k], kt, vt, keys, x, starts, runs, u, res);
    free(u);
    free(res);
    clReleaseMemObject(bu[k]);
    clReleaseMemObject(br[k]);
    if (e[k])
      clReleaseEvent(e[k]);
  }
  clReleaseEvent(gate);
  clReleaseMemObject(bk);
  clReleaseMemObject(bx);
  clReleaseMemObject(bc);
  free(keys);
  free(x);
  free(starts);
}

/* The refusals of an enqueued by-key. */
static void refusals(clr_context *ctx) {
  const size_t n = 100;
  cl_mem k = tu_new_buffer(ctx, n * 4, NULL),
         v = tu_new_buffer(ctx, n * 4, NULL);
  cl_mem small = tu_new_buffer(ctx, (n - 1) * 8, NULL);
  cl_mem u = tu_new_buffer(ctx, n * 4, NULL),
         r = tu_new_buffer(ctx, n * 8, NULL);
  cl_mem c = tu_new_buffer(ctx, 8, NULL);
  clr_request q = by_key(CLR_SUM, CLR_INT, CLR_INT, n, k, v, u, small, c, 0);
  cl_event ev = NULL;
  clr_status s = clr_enqueue(ctx, &q, 0, NULL, &ev);
  TU_EXPECT_STATUS(s, CLR_ERR_INVALID_ARGUMENT,
                   "enqueued by-key: results without room for n runs");
  TU_CHECK(ev == NULL && strstr(clr_context_error(ctx), "results"),
           "that refusal names the results: %s", clr_context_error(ctx));
  q = by_key(CLR_SUM, CLR_INT, CLR_INT, n, k, v, u, r, c, 1);
  s = clr_enqueue(ctx, &q, 0, NULL, &ev);
  TU_EXPECT_STATUS(s, CLR_ERR_INVALID_ARGUMENT,
                   "enqueued by-key: run_count past its buffer");
  q = by_key(CLR_SUM, CLR_INT, CLR_INT, n, k, v, u, r, c, 0);
  q.run_count = buf_op(NULL, 0);
  s = clr_enqueue(ctx, &q, 0, NULL, &ev);
  TU_EXPECT_STATUS(s, CLR_ERR_INVALID_ARGUMENT,
                   "enqueued by-key without run_count");
  q = by_key(CLR_NANMEAN, CLR_INT, CLR_FLOAT, n, k, v, u, r, c, 0);
  s = clr_enqueue(ctx, &q, 0, NULL, &ev);
  TU_EXPECT_STATUS(s, CLR_ERR_UNSUPPORTED,
                   "enqueued by-key nanmean of floats (its counts wait)");
  cl_mem all[] = {k, v, small, u, r, c};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    clReleaseMemObject(all[i]);
}

/* ------------------------------------------------------------ scratch */

/* The query's answer for r; the request run (clr_enqueue when enqueue,
 * else clr_run) in a scratch of that many bytes from byte `at` of a
 * larger buffer, then of one byte less (refused, both sizes named). */
static size_t scratch_bytes(clr_context *ctx, const clr_request *r,
                            const char *label) {
  size_t bytes = 0;
  clr_status s = clr_request_scratch_size(ctx, r, &bytes);
  if (!TU_EXPECT_STATUS(s, CLR_OK, label))
    printf("  %s\n", clr_context_error(ctx));
  TU_CHECK(bytes > 0, "%s: %zu bytes of scratch", label, bytes);
  return bytes;
}

static void scratch_by_key(clr_context *ctx, int enqueue, size_t n) {
  const clr_type kt = CLR_LONG, vt = CLR_FLOAT;
  const clr_op op = CLR_MAX;
  char label[128];
  snprintf(label, sizeof label, "by-key in caller scratch (%s, n %zu)",
           enqueue ? "clr_enqueue" : "clr_run", n);
  size_t ks = 8, vs = 4, rb = clr_result_bytes(NULL, op, vt);
  void *keys = tu_xmalloc(n * ks);
  make_keys(kt, n, 0, tu_seed(6, n, enqueue, 0), keys);
  void *x = make_values(vt, n, tu_seed(7, n, enqueue, 0));
  uint64_t *starts = tu_xmalloc((n + 1) * sizeof *starts);
  size_t runs = runs_of(kt, keys, n, starts);
  cl_mem bk = tu_new_buffer(ctx, n * ks, keys);
  cl_mem bx = tu_new_buffer(ctx, n * vs, x);
  cl_mem bu = tu_new_buffer(ctx, n * ks, NULL);
  cl_mem br = tu_new_buffer(ctx, n * rb, NULL);
  cl_mem bc = tu_new_buffer(ctx, 8, NULL);
  size_t n_runs = 0;
  clr_request r = by_key(op, kt, vt, n, bk, bx, bu, br, bc, 0);
  if (!enqueue) {
    r.run_count = buf_op(NULL, 0);
    r.n_runs = &n_runs;
  }
  size_t bytes = scratch_bytes(ctx, &r, label);
  size_t align = base_align(ctx);
  /* from byte `align` of a buffer with room on both sides */
  cl_mem scratch = tu_new_buffer(ctx, bytes + 3 * align, NULL);
  uint64_t allocs = ctx->scratch_allocs;
  r.scratch = buf_op(scratch, align);
  r.scratch_bytes = bytes;
  cl_event ev = NULL;
  clr_status s =
      enqueue ? clr_enqueue(ctx, &r, 0, NULL, &ev) : clr_run(ctx, &r, NULL);
  if (!TU_EXPECT_STATUS(s, CLR_OK, label))
    printf("  %s\n", clr_context_error(ctx));
  if (ev) {
    expect_cl(clWaitForEvents(1, &ev), "clWaitForEvents");
    clReleaseEvent(ev);
  }
  if (enqueue)
    TU_CHECK(ctx->scratch_allocs == allocs,
             "%s: no context buffer allocated (%llu)", label,
             (unsigned long long)(ctx->scratch_allocs - allocs));
  cl_ulong count = n_runs;
  if (enqueue)
    read_bytes(ctx, bc, 0, 8, &count);
  void *u = tu_xmalloc(n * ks), *res = tu_xmalloc(n * rb);
  read_bytes(ctx, bu, 0, runs * ks, u);
  read_bytes(ctx, br, 0, runs * rb, res);
  TU_CHECK(count == runs, "%s: %llu runs, want %zu", label,
           (unsigned long long)count, runs);
  check_runs(label, op, kt, vt, keys, x, starts, runs, u, res);
  expect_cl(clFinish(clr_context_queue(ctx)), "clFinish");
  TU_CHECK(settled_refs(scratch) == 1,
           "%s: the context keeps no reference to the scratch (%u)", label,
           ref_count(scratch));
  /* one byte less, and a misaligned start */
  r.scratch_bytes = bytes - 1;
  s = enqueue ? clr_enqueue(ctx, &r, 0, NULL, &ev) : clr_run(ctx, &r, NULL);
  if (enqueue) {
    char want[64];
    snprintf(want, sizeof want, "%zu", bytes);
    TU_EXPECT_STATUS(s, CLR_ERR_INVALID_ARGUMENT, "one byte less of scratch");
    TU_CHECK(strstr(clr_context_error(ctx), want) != NULL,
             "that refusal names both sizes: %s", clr_context_error(ctx));
  } else {
    /* clr_run's answer is an upper bound (the runs are at most n) */
    TU_CHECK(s == CLR_OK || s == CLR_ERR_INVALID_ARGUMENT,
             "clr_run by-key in one byte less: %s", clr_status_name(s));
  }
  if (ev) {
    clWaitForEvents(1, &ev);
    clReleaseEvent(ev);
    ev = NULL;
  }
  if (align > 1) {
    r.scratch = buf_op(scratch, align + 1);
    r.scratch_bytes = bytes;
    s = enqueue ? clr_enqueue(ctx, &r, 0, NULL, &ev) : clr_run(ctx, &r, NULL);
    TU_EXPECT_STATUS(s, CLR_ERR_INVALID_ARGUMENT, "a misaligned scratch");
    TU_CHECK(strstr(clr_context_error(ctx), "alignment") != NULL,
             "that refusal says why: %s", clr_context_error(ctx));
  }
  cl_mem all[] = {bk, bx, bu, br, bc, scratch};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    clReleaseMemObject(all[i]);
  free(keys);
  free(x);
  free(starts);
  free(u);
  free(res);
}

static void scratch_scan(clr_context *ctx, clr_kernel kernel, clr_type t,
                         size_t n, int enqueue) {
  char label[128];
  snprintf(label, sizeof label, "scan (%s) of %s in caller scratch (%s, n %zu)",
           kernel == CLR_KERNEL_DEFAULT ? "default" : clr_kernel_name(kernel),
           clr_type_name(t), enqueue ? "clr_enqueue" : "clr_run", n);
  clr_type ot = clr_scan_output_type(NULL, t);
  void *x = make_values(t, n, tu_seed(8, n, t, kernel));
  cl_mem bx = tu_new_buffer(ctx, n * clr_type_size(t), x);
  cl_mem bo = tu_new_buffer(ctx, n * clr_type_size(ot), NULL);
  clr_options opt;
  clr_options_init(&opt);
  opt.kernel = kernel;
  clr_request r;
  clr_request_init(&r);
  r.kind = CLR_REQ_SCAN;
  r.type = t;
  r.n = n;
  r.options = &opt;
  r.input = buf_op(bx, 0);
  r.output = buf_op(bo, 0);
  size_t bytes = scratch_bytes(ctx, &r, label);
  cl_mem scratch = tu_new_buffer(ctx, bytes, NULL);
  uint64_t allocs = ctx->scratch_allocs;
  r.scratch = buf_op(scratch, 0);
  r.scratch_bytes = bytes;
  cl_event ev = NULL;
  clr_status s =
      enqueue ? clr_enqueue(ctx, &r, 0, NULL, &ev) : clr_run(ctx, &r, NULL);
  if (!TU_EXPECT_STATUS(s, CLR_OK, label))
    printf("  %s\n", clr_context_error(ctx));
  if (ev) {
    expect_cl(clWaitForEvents(1, &ev), "clWaitForEvents");
    clReleaseEvent(ev);
    ev = NULL;
  }
  TU_CHECK(ctx->scratch_allocs == allocs,
           "%s: no context buffer allocated (%llu)", label,
           (unsigned long long)(ctx->scratch_allocs - allocs));
  void *out = tu_xmalloc(n * clr_type_size(ot));
  read_bytes(ctx, bo, 0, n * clr_type_size(ot), out);
  double run = 0;
  size_t bad = SIZE_MAX;
  for (size_t i = 0; i < n && bad == SIZE_MAX; i++) {
    run += get(t, x, i);
    if (get(ot, out, i) != run)
      bad = i;
  }
  TU_CHECK(bad == SIZE_MAX, "%s: element %zu", label, bad);
  r.scratch_bytes = bytes - 1;
  s = enqueue ? clr_enqueue(ctx, &r, 0, NULL, &ev) : clr_run(ctx, &r, NULL);
  TU_EXPECT_STATUS(s, CLR_ERR_INVALID_ARGUMENT, "a scan in one byte less");
  if (ev)
    clReleaseEvent(ev);
  clReleaseMemObject(bx);
  clReleaseMemObject(bo);
  clReleaseMemObject(scratch);
  free(x);
  free(out);
}

/* Host arrays take no scratch (they are staged through the context's
 * own buffers), and the query's refusals. */
static void scratch_refusals(clr_context *ctx) {
  cl_mem b = tu_new_buffer(ctx, 4096, NULL);
  int32_t x[100] = {0};
  clr_value v;
  clr_request r;
  clr_request_init(&r);
  r.kind = CLR_REQ_REDUCE;
  r.type = CLR_INT;
  r.n = 100;
  r.input.host = x;
  size_t bytes = 7;
  TU_EXPECT_STATUS(clr_request_scratch_size(ctx, &r, &bytes),
                   CLR_ERR_UNSUPPORTED,
                   "the scratch size of a reduce of a host array");
  TU_CHECK(bytes == 0, "no size for it (%zu)", bytes);
  r.scratch = buf_op(b, 0);
  r.scratch_bytes = 4096;
  TU_EXPECT_STATUS(clr_run(ctx, &r, &v), CLR_ERR_UNSUPPORTED,
                   "a reduce of a host array in caller scratch");
  TU_CHECK(strstr(clr_context_error(ctx), "scratch") != NULL,
           "that refusal names the scratch: %s", clr_context_error(ctx));
  TU_EXPECT_STATUS(clr_request_scratch_size(ctx, NULL, &bytes),
                   CLR_ERR_INVALID_ARGUMENT, "the scratch size of no request");
  TU_EXPECT_STATUS(clr_request_scratch_size(ctx, &r, NULL),
                   CLR_ERR_INVALID_ARGUMENT, "the scratch size into NULL");
  clReleaseMemObject(b);
}

/* Without scratch, the same enqueued by-key allocates context buffers
 * (the count the scratch test reads counts). */
static void counter_counts(void) {
  clr_context *ctx = tu_context();
  const size_t n = 1000;
  cl_mem k = tu_new_buffer(ctx, n * 4, NULL),
         v = tu_new_buffer(ctx, n * 4, NULL);
  cl_mem u = tu_new_buffer(ctx, n * 4, NULL),
         r = tu_new_buffer(ctx, n * 8, NULL);
  cl_mem c = tu_new_buffer(ctx, 8, NULL);
  uint64_t before = ctx->scratch_allocs;
  clr_request q = by_key(CLR_SUM, CLR_INT, CLR_INT, n, k, v, u, r, c, 0);
  cl_event ev = NULL;
  TU_EXPECT_STATUS(clr_enqueue(ctx, &q, 0, NULL, &ev), CLR_OK,
                   "an enqueued by-key without scratch");
  if (ev) {
    clWaitForEvents(1, &ev);
    clReleaseEvent(ev);
  }
  TU_CHECK(ctx->scratch_allocs > before,
           "without scratch it allocates context buffers (%llu)",
           (unsigned long long)(ctx->scratch_allocs - before));
  cl_mem all[] = {k, v, u, r, c};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    clReleaseMemObject(all[i]);
  clr_context_release(ctx);
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "-v") == 0)
      tu_verbose = 1;
  clr_context *ctx = tu_context();
  int only_scratch = argc > 1 && strcmp(argv[argc - 1], "--scratch") == 0;
  if (only_scratch)
    goto scratch;
  tu_section("enqueued by-key: refusals");
  refusals(ctx);
  tu_section("chains: by-key -> reduce -> scan -> by-key, one wait");
  const clr_type kts[4] = {CLR_INT, CLR_UINT, CLR_LONG, CLR_ULONG};
  const clr_type vts[4] = {CLR_INT, CLR_LONG, CLR_FLOAT, CLR_DOUBLE};
  const clr_op ops[3] = {CLR_SUM, CLR_MIN, CLR_MAX};
  for (int k = 0; k < 4; k++)
    chain(ctx, kts[k], vts[k], ops[k % 3], 5003, 0);
  chain(ctx, CLR_INT, CLR_FLOAT, CLR_MAX, 4099, 1);
  chain(ctx, CLR_ULONG, CLR_INT, CLR_MIN, 5003, 2);
  chain(ctx, CLR_LONG, CLR_DOUBLE, CLR_SUM, 1, 0);
  tu_section("sum, argmin and mean enqueued by key");
  ops_chain(ctx, CLR_INT, CLR_DOUBLE, 7919);
  ops_chain(ctx, CLR_ULONG, CLR_FLOAT, 7919);
scratch:
  tu_section("caller scratch");
  scratch_by_key(ctx, 1, 5003);
  scratch_by_key(ctx, 1, 30011);
  scratch_by_key(ctx, 0, 5003);
  scratch_scan(ctx, CLR_KERNEL_DEFAULT, CLR_INT, 100003, 1);
  scratch_scan(ctx, CLR_KERNEL_DEFAULT, CLR_FLOAT, 1000, 0);
  scratch_scan(ctx, CLR_SCAN_KOGGE_STONE, CLR_INT, 100003, 1);
  scratch_scan(ctx, CLR_SCAN_BRENT_KUNG, CLR_DOUBLE, 100003, 0);
  scratch_refusals(ctx);
  counter_counts();
  clr_context_release(ctx);
  return tu_finish("test_async_by_key");
}
