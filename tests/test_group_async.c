/* Group requests and asynchronous group calls, on two devices (PoCL's CPU
 * device twice: POCL_DEVICES="pthread pthread", tests/meson.build):
 *   clr_group_run of reductions (int, long, float, double; sum, max,
 *   argmax, mean), dot products and scans of host arrays, against CPU
 *   loops and the bits of the blocking group calls, and its refusals;
 *   clr_group_reduce_buffers_async and clr_group_scan_buffers_async
 *   against the blocking calls' bits and CPU loops, their callback called
 *   exactly once with the call's status; a chain of three asynchronous
 *   group calls (three groups over the same contexts) issued before any
 *   host wait; a second call while one is pending refused; refusals
 *   returned at once, the callback never called; release of a group with
 *   a call pending.  (A wait-list event with a negative status is not
 *   tested: PoCL 3.1 never completes the commands after it, so the call
 *   stays pending.)
 * --bench: blocking clr_group_reduce_buffers against the asynchronous
 * call and clr_group_wait, float sum of 1e7 elements (no assertion). */
#include "test_util.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 300007

static clr_group *make_group(void) {
  clr_group *g = NULL;
  char detail[512] = "";
  clr_status st = clr_group_create(NULL, "all", &g, detail, sizeof detail);
  if (st != CLR_OK || !g)
    tu_die("clr_group_create(\"all\"): %s: %s", clr_status_name(st), detail);
  if (clr_group_size(g) != 2)
    tu_die("POCL_DEVICES=\"pthread pthread\": 'all' has %zu devices, want 2",
           clr_group_size(g));
  return g;
}

static clr_group *group_over(clr_group *g) {
  clr_context *ctx[2] = {clr_group_context(g, 0), clr_group_context(g, 1)};
  clr_group *out = NULL;
  char detail[512] = "";
  clr_status st = clr_group_create_from(ctx, 2, &out, detail, sizeof detail);
  if (st != CLR_OK)
    tu_die("clr_group_create_from: %s: %s", clr_status_name(st), detail);
  const double w[2] = {1, 1};
  clr_group_set_weights(out, w);
  return out;
}

/* Element i of a test array of type t: small integers (exact sums), the
 * maximum at two places (the first index wins). */
static void fill(clr_type t, void *x, size_t n, uint64_t seed) {
  tu_rng r = {tu_seed(seed, (uint64_t)t, n, 7)};
  for (size_t i = 0; i < n; i++) {
    int64_t v = (int64_t)tu_below(&r, 201) - 100;
    if (i == n / 3 || i == n - 5)
      v = 1000;
    if (tu_is_float(t))
      tu_store_f(t, x, i, (double)v / 4.0);
    else
      tu_store_i(t, x, i, v);
  }
}

static double elem(clr_type t, const void *x, size_t i) {
  switch (t) {
  case CLR_FLOAT:
    return ((const float *)x)[i];
  case CLR_DOUBLE:
    return ((const double *)x)[i];
  case CLR_INT:
    return ((const int32_t *)x)[i];
  default:
    return (double)((const int64_t *)x)[i];
  }
}

/* The CPU's answer (the data are exact in double: small quarters). */
static void cpu_reduce(clr_op op, clr_type t, const void *x, size_t n,
                       double *v, uint64_t *index) {
  double s = 0, m = -INFINITY;
  uint64_t at = 0;
  for (size_t i = 0; i < n; i++) {
    double e = elem(t, x, i);
    s += e;
    if (e > m) {
      m = e;
      at = i;
    }
  }
  *index = op == CLR_ARGMAX ? at : 0;
  *v = op == CLR_SUM ? s : op == CLR_MEAN ? s / (double)n : m;
  if (op == CLR_VAR || op == CLR_STD) { /* two passes, ddof 0 */
    double mean = s / (double)n, m2 = 0;
    for (size_t i = 0; i < n; i++)
      m2 += (elem(t, x, i) - mean) * (elem(t, x, i) - mean);
    *v = op == CLR_STD ? sqrt(m2 / (double)n) : m2 / (double)n;
  }
}

static int same_value(const clr_value *a, const clr_value *b) {
  return tu_same(a, b) && a->op == b->op && a->index == b->index;
}

static const clr_type rtypes[] = {CLR_INT, CLR_LONG, CLR_FLOAT, CLR_DOUBLE};
static const clr_op rops[] = {CLR_SUM,  CLR_MAX, CLR_ARGMAX,
                              CLR_MEAN, CLR_VAR, CLR_STD};
#define N_RTYPES (sizeof rtypes / sizeof rtypes[0])
#define N_ROPS (sizeof rops / sizeof rops[0])

static void check_value(clr_op op, clr_type t, const void *x, size_t n,
                        const clr_value *got, const char *what) {
  double want;
  uint64_t index;
  cpu_reduce(op, t, x, n, &want, &index);
  double v = clr_value_as_double(got);
  /* a mean: rounded; var and std (parts merged by
   * clr_value_merge_moments): within float's roundings */
  double tol = op == CLR_MEAN                   ? 1e-6 * fabs(want) + 1e-9
               : op == CLR_VAR || op == CLR_STD ? 1e-5 * fabs(want) + 1e-9
                                                : 0;
  TU_CHECK(fabs(v - want) <= tol && got->index == index && got->op == op,
           "%s %s %s: got %.17g at %llu (op %s), want %.17g at %llu", what,
           clr_op_name(op), clr_type_name(t), v, (unsigned long long)got->index,
           clr_op_name(got->op), want, (unsigned long long)index);
}

/* ------------------------------------------------------------ requests */

static void requests(clr_group *g) {
  size_t bytes = N * 8;
  void *x = tu_xmalloc(bytes), *y = tu_xmalloc(bytes);
  for (size_t ti = 0; ti < N_RTYPES; ti++) {
    clr_type t = rtypes[ti];
    fill(t, x, N, 1);
    fill(t, y, N, 2);
    for (size_t oi = 0; oi < N_ROPS; oi++) {
      clr_op op = rops[oi];
      if (op == CLR_MEAN && t == CLR_LONG)
        continue; /* a mean needs a sum that cannot wrap */
      clr_request r = CLR_REQUEST_INIT;
      r.op = op;
      r.type = t;
      r.n = N - 7;
      r.input.host = x;
      r.input.offset = 7; /* the offset applied as clr_run applies it */
      clr_value got, want;
      memset(&got, 0, sizeof got);
      clr_status st = clr_group_run(g, &r, &got);
      if (!TU_CHECK(st == CLR_OK, "clr_group_run %s %s: %s (%s)",
                    clr_op_name(op), clr_type_name(t), clr_status_name(st),
                    clr_group_error(g)))
        continue;
      check_value(op, t, (const char *)x + 7 * clr_type_size(t), N - 7, &got,
                  "clr_group_run");
      st = clr_group_reduce_host(
          g, NULL, op, t, (const char *)x + 7 * clr_type_size(t), N - 7, &want);
      TU_CHECK(st == CLR_OK && same_value(&got, &want),
               "clr_group_run %s %s: the bits of clr_group_reduce_host",
               clr_op_name(op), clr_type_name(t));
    }
    /* dot */
    clr_request d = CLR_REQUEST_INIT;
    d.kind = CLR_REQ_DOT;
    d.type = t;
    d.n = N;
    d.input.host = x;
    d.input2.host = y;
    clr_value got, want;
    clr_status st = clr_group_run(g, &d, &got);
    double cpu = 0;
    for (size_t i = 0; i < N; i++)
      cpu += elem(t, x, i) * elem(t, y, i);
    TU_CHECK(st == CLR_OK && clr_value_as_double(&got) == cpu,
             "clr_group_run dot %s: %s, %.17g, want %.17g", clr_type_name(t),
             clr_status_name(st), clr_value_as_double(&got), cpu);
    st = clr_group_dot_host(g, NULL, t, x, y, N, &want);
    TU_CHECK(st == CLR_OK && same_value(&got, &want),
             "clr_group_run dot %s: the bits of clr_group_dot_host",
             clr_type_name(t));
    /* scan */
    if (t == CLR_INT || t == CLR_FLOAT) {
      clr_request s = CLR_REQUEST_INIT;
      s.kind = CLR_REQ_SCAN;
      s.type = t;
      s.n = N;
      s.input.host = x;
      s.output.host = y;
      st = clr_group_run(g, &s, NULL);
      TU_CHECK(st == CLR_OK, "clr_group_run scan %s: %s (%s)", clr_type_name(t),
               clr_status_name(st), clr_group_error(g));
      double run = 0;
      size_t bad = N;
      for (size_t i = 0; i < N && bad == N; i++) {
        run += elem(t, x, i);
        if (elem(t, y, i) != run)
          bad = i;
      }
      TU_CHECK(bad == N, "clr_group_run scan %s: element %zu wrong",
               clr_type_name(t), bad);
      void *z = tu_xmalloc(bytes);
      st = clr_group_scan_host(g, NULL, CLR_SUM, t, x, z, N);
      TU_CHECK(st == CLR_OK && memcmp(y, z, N * clr_type_size(t)) == 0,
               "clr_group_run scan %s: the bits of clr_group_scan_host",
               clr_type_name(t));
      free(z);
    }
  }
  free(x);
  free(y);
}

static void request_refusals(clr_group *g) {
  float x[4] = {1, 2, 3, 4}, out[4];
  clr_value v;
  clr_request base = CLR_REQUEST_INIT;
  base.type = CLR_FLOAT;
  base.n = 4;
  base.input.host = x;
  struct {
    const char *what, *says;
    clr_status want;
  } cases[] = {
      {"queue", "takes no queue", CLR_ERR_INVALID_ARGUMENT},
      {"scratch", "takes no scratch", CLR_ERR_INVALID_ARGUMENT},
      {"status", "takes no status", CLR_ERR_INVALID_ARGUMENT},
      {"run_count", "takes no run_count", CLR_ERR_INVALID_ARGUMENT},
      {"segments kind", "segments request", CLR_ERR_UNSUPPORTED},
      {"buffers", "host arrays", CLR_ERR_UNSUPPORTED},
      {"no result", "result must not be NULL", CLR_ERR_INVALID_ARGUMENT},
      {"zeroed", "clr_request_init", CLR_ERR_INVALID_ARGUMENT},
      {"scan with result", "pass result NULL", CLR_ERR_INVALID_ARGUMENT},
  };
  cl_mem buf = tu_new_buffer(clr_group_context(g, 0), sizeof x, x);
  uint64_t offsets[2] = {0, 4};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    clr_request r = base;
    clr_value *res = &v;
    switch (k) {
    case 0:
      r.queue = clr_context_queue(clr_group_context(g, 0));
      break;
    case 1:
      r.scratch.buffer = buf;
      r.scratch_bytes = 16;
      break;
    case 2:
      r.status.buffer = buf;
      break;
    case 3:
      r.run_count.buffer = buf;
      break;
    case 4:
      r.kind = CLR_REQ_SEGMENTS;
      r.segments.host = offsets;
      r.n_segments = 1;
      r.output.host = out;
      res = NULL;
      break;
    case 5:
      r.input.host = NULL;
      r.input.buffer = buf;
      break;
    case 6:
      res = NULL;
      break;
    case 7:
      memset(&r, 0, sizeof r);
      break;
    case 8:
      r.kind = CLR_REQ_SCAN;
      r.output.host = out;
      break;
    }
    clr_status st = clr_group_run(g, &r, res);
    TU_EXPECT_STATUS(st, cases[k].want, cases[k].what);
    TU_CHECK(strstr(clr_group_error(g), cases[k].says) != NULL,
             "refusal of %s says '%s': %s", cases[k].what, cases[k].says,
             clr_group_error(g));
  }
  TU_EXPECT_STATUS(clr_group_run(NULL, &base, &v), CLR_ERR_INVALID_ARGUMENT,
                   "a NULL group");
  clReleaseMemObject(buf);
}

/* ---------------------------------------------------- asynchronous calls */

typedef struct done_log {
  pthread_mutex_t lock;
  int calls;
  clr_status status;
  clr_group *group;
} done_log;

static void on_done(clr_group *g, clr_status st, void *user) {
  done_log *d = user;
  pthread_mutex_lock(&d->lock);
  d->calls++;
  d->status = st;
  d->group = g;
  pthread_mutex_unlock(&d->lock);
}

static void log_init(done_log *d) {
  memset(d, 0, sizeof *d);
  pthread_mutex_init(&d->lock, NULL);
  d->status = CLR_STATUS_COUNT;
}

static int log_calls(done_log *d) {
  pthread_mutex_lock(&d->lock);
  int c = d->calls;
  pthread_mutex_unlock(&d->lock);
  return c;
}

/* The group's parts as buffers: device i holds counts[i] elements of x
 * (its part), from element pad[i] of its buffer. */
typedef struct parts {
  cl_mem buf[2];
  size_t offsets[2], counts[2];
} parts;

static void make_parts(clr_group *g, clr_type t, const void *x, size_t n,
                       parts *p) {
  size_t es = clr_type_size(t);
  clr_group_split(g, n, p->counts);
  for (size_t i = 0, at = 0; i < 2; i++) {
    p->offsets[i] = 3 * i; /* device 1's part starts at element 3 */
    char *tmp = tu_xmalloc((p->counts[i] + 3 * i + 1) * es);
    memset(tmp, 0, (p->counts[i] + 3 * i + 1) * es);
    memcpy(tmp + 3 * i * es, (const char *)x + at * es, p->counts[i] * es);
    p->buf[i] = tu_new_buffer(clr_group_context(g, i),
                              (p->counts[i] + 3 * i + 1) * es, tmp);
    free(tmp);
    at += p->counts[i];
  }
}

static void free_parts(parts *p) {
  for (int i = 0; i < 2; i++)
    clReleaseMemObject(p->buf[i]);
}

static void release_events(cl_event *ev, size_t k) {
  for (size_t i = 0; i < k; i++)
    if (ev[i])
      clReleaseEvent(ev[i]);
}

static void async_reductions(clr_group *g) {
  void *x = tu_xmalloc(N * 8);
  for (size_t ti = 0; ti < N_RTYPES; ti++) {
    clr_type t = rtypes[ti];
    fill(t, x, N, 3);
    parts p;
    make_parts(g, t, x, N, &p);
    for (size_t oi = 0; oi < N_ROPS; oi++) {
      clr_op op = rops[oi];
      if (op == CLR_MEAN && t == CLR_LONG)
        continue;
      done_log d;
      log_init(&d);
      clr_value got, want;
      memset(&got, 0, sizeof got);
      cl_event ev[2] = {NULL, NULL};
      clr_status st = clr_group_reduce_buffers_async(
          g, NULL, op, t, p.buf, p.offsets, p.counts, NULL, NULL, ev, &got,
          on_done, &d);
      clr_status waited = clr_group_wait(g);
      if (!TU_CHECK(st == CLR_OK && waited == CLR_OK,
                    "async %s %s: %s, wait %s (%s)", clr_op_name(op),
                    clr_type_name(t), clr_status_name(st),
                    clr_status_name(waited), clr_group_error(g)))
        continue;
      TU_CHECK(log_calls(&d) == 1 && d.status == CLR_OK && d.group == g,
               "async %s %s: done called %d times, status %s", clr_op_name(op),
               clr_type_name(t), d.calls, clr_status_name(d.status));
      cl_int es0 = -1, es1 = -1;
      clGetEventInfo(ev[0], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof es0, &es0,
                     NULL);
      clGetEventInfo(ev[1], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof es1, &es1,
                     NULL);
      TU_CHECK(es0 == CL_COMPLETE && es1 == CL_COMPLETE,
               "async %s %s: the devices' events complete (%d, %d)",
               clr_op_name(op), clr_type_name(t), (int)es0, (int)es1);
      release_events(ev, 2);
      check_value(op, t, x, N, &got, "async");
      st = clr_group_reduce_buffers(g, NULL, op, t, p.buf, p.offsets, p.counts,
                                    &want);
      TU_CHECK(st == CLR_OK && same_value(&got, &want),
               "async %s %s: the bits of clr_group_reduce_buffers",
               clr_op_name(op), clr_type_name(t));
    }
    free_parts(&p);
  }
  free(x);
}

static void async_scans(clr_group *g) {
  clr_type types[] = {CLR_INT, CLR_FLOAT, CLR_DOUBLE};
  void *x = tu_xmalloc(N * 8), *a = tu_xmalloc(N * 8), *b = tu_xmalloc(N * 8);
  for (size_t ti = 0; ti < 3; ti++) {
    clr_type t = types[ti];
    size_t es = clr_type_size(t);
    fill(t, x, N, 4);
    parts in, outa, outb;
    make_parts(g, t, x, N, &in);
    make_parts(g, t, x, N, &outa);
    make_parts(g, t, x, N, &outb);
    for (int carry = 0; carry < 2; carry++) {
      clr_options o = CLR_OPTIONS_INIT;
      clr_scalar c;
      memset(&c, 0, sizeof c);
      if (t == CLR_INT)
        c.i = 5;
      else if (t == CLR_FLOAT)
        c.f = 1.25f;
      else
        c.d = 1.25;
      o.carry_in = carry ? &c : NULL;
      done_log d;
      log_init(&d);
      cl_event ev[2];
      clr_status st = clr_group_scan_buffers_async(
          g, &o, CLR_SUM, t, in.buf, in.offsets, outa.buf, outa.offsets,
          in.counts, NULL, NULL, ev, on_done, &d);
      c.i = 999; /* copied during the call */
      clr_status waited = clr_group_wait(g);
      if (!TU_CHECK(st == CLR_OK && waited == CLR_OK,
                    "async scan %s: %s, wait %s (%s)", clr_type_name(t),
                    clr_status_name(st), clr_status_name(waited),
                    clr_group_error(g)))
        continue;
      release_events(ev, 2);
      TU_CHECK(log_calls(&d) == 1 && d.status == CLR_OK,
               "async scan %s: done called %d times", clr_type_name(t),
               d.calls);
      memset(&c, 0, sizeof c);
      if (t == CLR_INT)
        c.i = 5;
      else if (t == CLR_FLOAT)
        c.f = 1.25f;
      else
        c.d = 1.25;
      st = clr_group_scan_buffers(g, &o, CLR_SUM, t, in.buf, in.offsets,
                                  outb.buf, outb.offsets, in.counts);
      TU_CHECK(st == CLR_OK, "blocking scan %s: %s", clr_type_name(t),
               clr_status_name(st));
      for (size_t i = 0, at = 0; i < 2; i++) {
        char *pa = tu_xmalloc((in.counts[i] + 3 * i) * es);
        char *pb = tu_xmalloc((in.counts[i] + 3 * i) * es);
        tu_read_buffer(clr_group_context(g, i), outa.buf[i],
                       (in.counts[i] + 3 * i) * es, pa);
        tu_read_buffer(clr_group_context(g, i), outb.buf[i],
                       (in.counts[i] + 3 * i) * es, pb);
        memcpy((char *)a + at * es, pa + 3 * i * es, in.counts[i] * es);
        memcpy((char *)b + at * es, pb + 3 * i * es, in.counts[i] * es);
        at += in.counts[i];
        free(pa);
        free(pb);
      }
      TU_CHECK(memcmp(a, b, N * es) == 0,
               "async scan %s (carry %d): the bits of clr_group_scan_buffers",
               clr_type_name(t), carry);
      double run = carry ? (t == CLR_INT ? 5 : 1.25) : 0;
      size_t bad = N;
      for (size_t i = 0; i < N && bad == N; i++) {
        run += elem(t, x, i);
        if (elem(t, a, i) != run)
          bad = i;
      }
      TU_CHECK(bad == N, "async scan %s (carry %d): element %zu wrong",
               clr_type_name(t), carry, bad);
    }
    free_parts(&in);
    free_parts(&outa);
    free_parts(&outb);
  }
  free(x);
  free(a);
  free(b);
}

/* Three asynchronous group calls, each on its own group over the same two
 * contexts, chained by the devices' events: scan x into s (A), the sum of
 * s (B, after A), the scan of s into s2 (C, after A); then the waits. */
static void chain(clr_group *g) {
  clr_group *ga = group_over(g), *gb = group_over(g), *gc = group_over(g);
  clr_type t = CLR_INT;
  size_t es = 4;
  int32_t *x = tu_xmalloc(N * es);
  for (size_t i = 0; i < N; i++)
    x[i] = (int32_t)(i % 7) - 3;
  parts in, s, s2;
  make_parts(ga, t, x, N, &in);
  make_parts(ga, t, x, N, &s);
  make_parts(ga, t, x, N, &s2);
  done_log da, db, dc;
  log_init(&da);
  log_init(&db);
  log_init(&dc);
  cl_event ea[2], eb[2], ec[2];
  const cl_event *after_a[2] = {&ea[0], &ea[1]};
  const cl_uint one[2] = {1, 1};
  clr_value sum;
  memset(&sum, 0, sizeof sum);
  clr_status st[3];
  st[0] = clr_group_scan_buffers_async(ga, NULL, CLR_SUM, t, in.buf, in.offsets,
                                       s.buf, s.offsets, in.counts, NULL, NULL,
                                       ea, on_done, &da);
  st[1] = clr_group_reduce_buffers_async(gb, NULL, CLR_SUM, t, s.buf, s.offsets,
                                         s.counts, one, after_a, eb, &sum,
                                         on_done, &db);
  st[2] = clr_group_scan_buffers_async(gc, NULL, CLR_MAX, t, s.buf, s.offsets,
                                       s2.buf, s2.offsets, s.counts, one,
                                       after_a, ec, on_done, &dc);
  /* No host wait so far: every call returned once enqueued. */
  TU_CHECK(st[0] == CLR_OK && st[1] == CLR_OK && st[2] == CLR_OK,
           "chain: %s %s %s (%s / %s / %s)", clr_status_name(st[0]),
           clr_status_name(st[1]), clr_status_name(st[2]), clr_group_error(ga),
           clr_group_error(gb), clr_group_error(gc));
  TU_EXPECT_STATUS(clr_group_wait(gc), CLR_OK, "chain: wait C");
  TU_EXPECT_STATUS(clr_group_wait(gb), CLR_OK, "chain: wait B");
  TU_EXPECT_STATUS(clr_group_wait(ga), CLR_OK, "chain: wait A");
  TU_CHECK(log_calls(&da) == 1 && log_calls(&db) == 1 && log_calls(&dc) == 1,
           "chain: each done once (%d %d %d)", da.calls, db.calls, dc.calls);
  release_events(ea, 2);
  release_events(eb, 2);
  release_events(ec, 2);
  /* The CPU: s = scan(x), sum(s) in long, s2 = running max of s. */
  int32_t *cs = tu_xmalloc(N * es), *cs2 = tu_xmalloc(N * es);
  int64_t csum = 0;
  int32_t run = 0, mx = INT32_MIN;
  for (size_t i = 0; i < N; i++) {
    run += x[i];
    cs[i] = run;
    csum += run;
    mx = run > mx ? run : mx;
    cs2[i] = mx;
  }
  TU_CHECK(sum.type == CLR_LONG && sum.v.l == csum,
           "chain: sum of the scan %lld, want %lld", (long long)sum.v.l,
           (long long)csum);
  size_t bad_s = N, bad_s2 = N;
  for (size_t i = 0, at = 0; i < 2; i++) {
    size_t k = s.counts[i] + 3 * i;
    int32_t *hs = tu_xmalloc(k * es), *hs2 = tu_xmalloc(k * es);
    tu_read_buffer(clr_group_context(g, i), s.buf[i], k * es, hs);
    tu_read_buffer(clr_group_context(g, i), s2.buf[i], k * es, hs2);
    for (size_t j = 0; j < s.counts[i]; j++) {
      if (hs[3 * i + j] != cs[at + j] && bad_s == N)
        bad_s = at + j;
      if (hs2[3 * i + j] != cs2[at + j] && bad_s2 == N)
        bad_s2 = at + j;
    }
    at += s.counts[i];
    free(hs);
    free(hs2);
  }
  TU_CHECK(bad_s == N, "chain: scan A wrong at %zu", bad_s);
  TU_CHECK(bad_s2 == N, "chain: scan C (max of A's) wrong at %zu", bad_s2);
  free_parts(&in);
  free_parts(&s);
  free_parts(&s2);
  free(x);
  free(cs);
  free(cs2);
  clr_group_release(ga);
  clr_group_release(gb);
  clr_group_release(gc);
}

typedef struct opener {
  cl_event gate;
  cl_int status;
} opener;

static void *open_later(void *arg) {
  opener *o = arg;
  struct timespec ts = {0, 50 * 1000 * 1000};
  nanosleep(&ts, NULL);
  clSetUserEventStatus(o->gate, o->status);
  return NULL;
}

/* A call held by a user event on each device: pending until it opens. */
static void pending_and_failures(clr_group *g) {
  float x[8192];
  double cpu_sum = 0;
  for (size_t i = 0; i < 8192; i++) {
    x[i] = (float)(i % 5);
    cpu_sum += x[i];
  }
  parts p;
  make_parts(g, CLR_FLOAT, x, 8192, &p);
  cl_int err;
  cl_event gates[2];
  for (int i = 0; i < 2; i++)
    gates[i] = clCreateUserEvent(
        clr_context_cl_context(clr_group_context(g, i)), &err);
  const cl_event *lists[2] = {&gates[0], &gates[1]};
  const cl_uint one[2] = {1, 1};
  done_log d;
  log_init(&d);
  clr_value got, other;
  memset(&got, 0, sizeof got);
  clr_status st = clr_group_reduce_buffers_async(
      g, NULL, CLR_SUM, CLR_FLOAT, p.buf, p.offsets, p.counts, one, lists, NULL,
      &got, on_done, &d);
  TU_EXPECT_STATUS(st, CLR_OK, "a held call");
  TU_CHECK(log_calls(&d) == 0, "a held call is not done yet");
  TU_EXPECT_STATUS(clr_group_reduce_buffers_async(
                       g, NULL, CLR_SUM, CLR_FLOAT, p.buf, p.offsets, p.counts,
                       NULL, NULL, NULL, &other, on_done, &d),
                   CLR_ERR_INVALID_ARGUMENT, "a second call while pending");
  TU_CHECK(strstr(clr_group_error(g), "pending") != NULL,
           "the refusal says a call is pending: %s", clr_group_error(g));
  TU_EXPECT_STATUS(
      clr_group_reduce_host(g, NULL, CLR_SUM, CLR_FLOAT, x, 8192, &other),
      CLR_ERR_INVALID_ARGUMENT, "a blocking call while pending");
  clSetUserEventStatus(gates[0], CL_COMPLETE);
  clSetUserEventStatus(gates[1], CL_COMPLETE);
  TU_EXPECT_STATUS(clr_group_wait(g), CLR_OK, "the held call, opened");
  TU_CHECK(log_calls(&d) == 1 && d.status == CLR_OK &&
               clr_value_as_double(&got) == cpu_sum,
           "the held call: done %d times, sum %g", d.calls,
           clr_value_as_double(&got));
  TU_EXPECT_STATUS(clr_group_wait(g), CLR_OK, "a second wait: the same status");
  clReleaseEvent(gates[0]);
  clReleaseEvent(gates[1]);

  /* The group works again. */
  log_init(&d);
  st = clr_group_reduce_buffers_async(g, NULL, CLR_SUM, CLR_FLOAT, p.buf,
                                      p.offsets, p.counts, NULL, NULL, NULL,
                                      &got, on_done, &d);
  TU_CHECK(st == CLR_OK && clr_group_wait(g) == CLR_OK &&
               clr_value_as_double(&got) == cpu_sum,
           "after a failure the group works again");

  /* Refusals: returned at once, done never called, nothing pending. */
  log_init(&d);
  size_t too_many[2] = {p.counts[0] + 1000, p.counts[1]};
  clr_options exact = CLR_OPTIONS_INIT;
  exact.exact = 1;
  cl_event ev[2] = {NULL, NULL};
  struct {
    clr_status st, want;
    const char *what;
  } refused[] = {
      {clr_group_reduce_buffers_async(g, NULL, CLR_SUM, CLR_FLOAT, p.buf,
                                      p.offsets, too_many, NULL, NULL, ev, &got,
                                      on_done, &d),
       CLR_ERR_INVALID_ARGUMENT, "a range past a buffer's end"},
      {clr_group_reduce_buffers_async(g, &exact, CLR_SUM, CLR_FLOAT, p.buf,
                                      p.offsets, p.counts, NULL, NULL, ev, &got,
                                      on_done, &d),
       CLR_ERR_UNSUPPORTED, "an exact sum"},
      {clr_group_reduce_buffers_async(g, NULL, CLR_SUM, CLR_FLOAT, p.buf,
                                      p.offsets, p.counts, NULL, NULL, ev, NULL,
                                      on_done, &d),
       CLR_ERR_INVALID_ARGUMENT, "no result"},
      {clr_group_reduce_buffers_async(g, NULL, CLR_SUM, CLR_FLOAT, p.buf,
                                      p.offsets, p.counts, one, NULL, ev, &got,
                                      on_done, &d),
       CLR_ERR_INVALID_ARGUMENT, "events without wait lists"},
      {clr_group_scan_buffers_async(g, NULL, CLR_SUM, CLR_FLOAT, p.buf,
                                    p.offsets, NULL, NULL, p.counts, NULL, NULL,
                                    ev, on_done, &d),
       CLR_ERR_INVALID_ARGUMENT, "a scan without out"},
      {clr_group_scan_buffers_async(g, NULL, CLR_ARGMAX, CLR_FLOAT, p.buf,
                                    p.offsets, p.buf, p.offsets, p.counts, NULL,
                                    NULL, ev, on_done, &d),
       CLR_ERR_UNSUPPORTED, "a scan of argmax"},
      {clr_group_reduce_buffers_async(NULL, NULL, CLR_SUM, CLR_FLOAT, p.buf,
                                      p.offsets, p.counts, NULL, NULL, NULL,
                                      &got, on_done, &d),
       CLR_ERR_INVALID_ARGUMENT, "a NULL group"},
  };
  for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
    TU_CHECK(refused[k].st == refused[k].want, "refused: %s: %s, want %s",
             refused[k].what, clr_status_name(refused[k].st),
             clr_status_name(refused[k].want));
  }
  TU_CHECK(log_calls(&d) == 0 && ev[0] == NULL && ev[1] == NULL,
           "refusals: done never called (%d), no events", d.calls);
  TU_EXPECT_STATUS(clr_group_wait(NULL), CLR_ERR_INVALID_ARGUMENT,
                   "clr_group_wait(NULL)");

  /* Release with a call pending: it waits for the call, done included. */
  clr_group *gx = group_over(g);
  gates[0] =
      clCreateUserEvent(clr_context_cl_context(clr_group_context(g, 0)), &err);
  log_init(&d);
  const cl_event *first_only[2] = {&gates[0], NULL};
  const cl_uint one_zero[2] = {1, 0};
  st = clr_group_reduce_buffers_async(gx, NULL, CLR_MAX, CLR_FLOAT, p.buf,
                                      p.offsets, p.counts, one_zero, first_only,
                                      NULL, &got, on_done, &d);
  TU_EXPECT_STATUS(st, CLR_OK, "a call held on device 0");
  opener o = {gates[0], CL_COMPLETE};
  pthread_t th;
  pthread_create(&th, NULL, open_later, &o);
  clr_group_release(gx);
  TU_CHECK(log_calls(&d) == 1 && d.status == CLR_OK &&
               clr_value_as_double(&got) == 4.0,
           "release waited for the pending call (done %d times, max %g)",
           d.calls, clr_value_as_double(&got));
  pthread_join(th, NULL);
  clReleaseEvent(gates[0]);
  free_parts(&p);
}

/* ------------------------------------------------------------- bench */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void bench(clr_group *g) {
  size_t n = 10000000;
  float *x = tu_xmalloc(n * sizeof *x);
  for (size_t i = 0; i < n; i++)
    x[i] = (float)(i % 1000) * 0.001f;
  parts p;
  make_parts(g, CLR_FLOAT, x, n, &p);
  enum { REPS = 15 };
  double blocking[REPS], async[REPS];
  clr_value a, b;
  clr_group_reduce_buffers(g, NULL, CLR_SUM, CLR_FLOAT, p.buf, p.offsets,
                           p.counts, &a); /* warm-up (builds) */
  clr_group_reduce_buffers_async(g, NULL, CLR_SUM, CLR_FLOAT, p.buf, p.offsets,
                                 p.counts, NULL, NULL, NULL, &b, NULL, NULL);
  clr_group_wait(g);
  for (int r = 0; r < REPS; r++) {
    struct timespec t0, t1, t2;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clr_group_reduce_buffers(g, NULL, CLR_SUM, CLR_FLOAT, p.buf, p.offsets,
                             p.counts, &a);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    clr_group_reduce_buffers_async(g, NULL, CLR_SUM, CLR_FLOAT, p.buf,
                                   p.offsets, p.counts, NULL, NULL, NULL, &b,
                                   NULL, NULL);
    clr_group_wait(g);
    clock_gettime(CLOCK_MONOTONIC, &t2);
    blocking[r] = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
                  (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    async[r] = (double)(t2.tv_sec - t1.tv_sec) * 1e3 +
               (double)(t2.tv_nsec - t1.tv_nsec) / 1e6;
  }
  qsort(blocking, REPS, sizeof blocking[0], cmp_double);
  qsort(async, REPS, sizeof async[0], cmp_double);
  printf("float sum of %zu elements over %zu devices, median of %d "
         "(min-max):\n  blocking clr_group_reduce_buffers %.2f ms (%.2f-%.2f)"
         "\n  async + clr_group_wait           %.2f ms (%.2f-%.2f)\n  same "
         "bits: %s\n",
         n, clr_group_size(g), REPS, blocking[REPS / 2], blocking[0],
         blocking[REPS - 1], async[REPS / 2], async[0], async[REPS - 1],
         tu_same(&a, &b) ? "yes" : "NO");
  free_parts(&p);
  free(x);
}

int main(int argc, char **argv) {
  clr_context *probe = tu_context(); /* fills tu_device */
  clr_context_release(probe);
  clr_group *g = make_group();
  const double even[2] = {1, 1};
  clr_group_set_weights(g, even);
  if (argc > 1 && strcmp(argv[1], "--bench") == 0) {
    bench(g);
    clr_group_release(g);
    return 0;
  }
  requests(g);
  tu_section("group requests");
  request_refusals(g);
  tu_section("group request refusals");
  async_reductions(g);
  tu_section("asynchronous reductions");
  async_scans(g);
  tu_section("asynchronous scans");
  chain(g);
  tu_section("a chain of three asynchronous calls");
  pending_and_failures(g);
  tu_section("pending, failures, refusals, release");
  clr_group_release(g);
  return tu_finish("test_group_async");
}
