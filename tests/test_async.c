/* clr_reduce_buffer_async and clr_scan_buffer_async: calls chained on the
 * device with no host sync
 * between them (each waits for the previous one's event and reads what it
 * wrote), on the context's own in-order queue and beside an adopted
 * out-of-order queue, where only the wait lists order them; the results
 * equal the blocking calls' and exact CPU loops; refused arguments. */
#include "test_util.h"

#include <CL/cl.h>
#include <stdint.h>
#include <unistd.h>

#define N 1000003

static void expect_cl(cl_int err, const char *what) {
  if (err != CL_SUCCESS)
    tu_die("%s failed: %d", what, (int)err);
}

/* Three chained calls: max of A into R[0], sum of A into R[1] (after the
 * first), min of R[0..1] into R[2] (after the second: it reads both). */
static void chain(clr_context *ctx, cl_command_queue q, const int64_t *host,
                  cl_mem a, cl_event ready, const char *label) {
  cl_context cl = clr_context_cl_context(ctx);
  cl_int err;
  cl_mem r =
      clCreateBuffer(cl, CL_MEM_READ_WRITE, 3 * sizeof(int64_t), NULL, &err);
  expect_cl(err, "clCreateBuffer");
  cl_event e1 = NULL, e2 = NULL, e3 = NULL;
  clr_status s =
      clr_reduce_buffer_async(ctx, NULL, CLR_MAX, CLR_LONG, a, 0, N, r, 0,
                              ready ? 1 : 0, ready ? &ready : NULL, &e1);
  TU_EXPECT_STATUS(s, CLR_OK, "async max");
  s = clr_reduce_buffer_async(ctx, NULL, CLR_SUM, CLR_LONG, a, 0, N, r, 1, 1,
                              &e1, &e2);
  TU_EXPECT_STATUS(s, CLR_OK, "async sum");
  s = clr_reduce_buffer_async(ctx, NULL, CLR_MIN, CLR_LONG, r, 0, 2, r, 2, 1,
                              &e2, &e3);
  TU_EXPECT_STATUS(s, CLR_OK, "async min of the two results");
  TU_CHECK(e1 && e2 && e3, "%s: every async call returns an event", label);
  int64_t got[3] = {0, 0, 0};
  if (e3)
    expect_cl(
        clEnqueueReadBuffer(q, r, CL_TRUE, 0, sizeof got, got, 1, &e3, NULL),
        "clEnqueueReadBuffer");
  int64_t mx = host[0], sum = 0;
  for (size_t i = 0; i < N; i++) {
    mx = host[i] > mx ? host[i] : mx;
    sum += host[i];
  }
  int64_t mn = mx < sum ? mx : sum;
  TU_CHECK(got[0] == mx && got[1] == sum && got[2] == mn,
           "%s: max %lld (want %lld), sum %lld (want %lld), min of both %lld "
           "(want %lld)",
           label, (long long)got[0], (long long)mx, (long long)got[1],
           (long long)sum, (long long)got[2], (long long)mn);
  /* The blocking call agrees. */
  clr_value v;
  s = clr_reduce_buffer(ctx, NULL, CLR_SUM, CLR_LONG, a, 0, N, &v);
  TU_CHECK(s == CLR_OK && v.v.l == sum, "%s: blocking sum %lld", label,
           (long long)v.v.l);
  cl_event evs[3] = {e1, e2, e3};
  for (int i = 0; i < 3; i++)
    if (evs[i])
      clReleaseEvent(evs[i]);
  clReleaseMemObject(r);
}

/* A scan chained with reductions, with no host sync: scan A into S
 * (after `ready`), scan S in place from element 1 with a carry-in, then
 * the max of S into R[0]; all checked against CPU loops. */
static void chain_scans(clr_context *ctx, cl_command_queue q,
                        const int64_t *host, cl_mem a, cl_event ready,
                        const char *label) {
  cl_context cl = clr_context_cl_context(ctx);
  cl_int err;
  cl_mem sbuf =
      clCreateBuffer(cl, CL_MEM_READ_WRITE, N * sizeof(int64_t), NULL, &err);
  expect_cl(err, "clCreateBuffer");
  cl_mem r = clCreateBuffer(cl, CL_MEM_READ_WRITE, sizeof(int64_t), NULL, &err);
  expect_cl(err, "clCreateBuffer");
  int64_t carry = 5;
  clr_options o;
  clr_options_init(&o);
  cl_event e1 = NULL, e2 = NULL, e3 = NULL;
  clr_status s =
      clr_scan_buffer_async(ctx, &o, CLR_SUM, CLR_LONG, a, 0, sbuf, 0, N,
                            ready ? 1 : 0, ready ? &ready : NULL, &e1);
  TU_EXPECT_STATUS(s, CLR_OK, "async scan");
  o.carry_in = &carry;
  o.kernel = CLR_SCAN_DECOUPLED;
  s = clr_scan_buffer_async(ctx, &o, CLR_MAX, CLR_LONG, sbuf, 1, sbuf, 1, N - 1,
                            1, &e1, &e2);
  carry = -1; /* the call copied it */
  TU_EXPECT_STATUS(s, CLR_OK, "async in-place max scan with a carry-in");
  s = clr_reduce_buffer_async(ctx, NULL, CLR_SUM, CLR_LONG, sbuf, 0, N, r, 0, 1,
                              &e2, &e3);
  TU_EXPECT_STATUS(s, CLR_OK, "async sum of the scans");
  int64_t got = 0;
  if (e3)
    expect_cl(
        clEnqueueReadBuffer(q, r, CL_TRUE, 0, sizeof got, &got, 1, &e3, NULL),
        "clEnqueueReadBuffer");
  /* S = prefix sums; S[1..] = running max of (5, S[1], S[2], ...). */
  int64_t run = 0, mx = 5, total = 0;
  for (size_t i = 0; i < N; i++) {
    run += host[i];
    int64_t v = run;
    if (i > 0) {
      mx = v > mx ? v : mx;
      v = mx;
    }
    total += v;
  }
  TU_CHECK(got == total, "%s: scan, in-place max scan, sum: %lld (want %lld)",
           label, (long long)got, (long long)total);
  cl_event evs[3] = {e1, e2, e3};
  for (int i = 0; i < 3; i++)
    if (evs[i])
      clReleaseEvent(evs[i]);
  clReleaseMemObject(sbuf);
  clReleaseMemObject(r);
}

static void refusals(clr_context *ctx, cl_mem a) {
  cl_int err;
  cl_context cl = clr_context_cl_context(ctx);
  cl_mem ro = clCreateBuffer(cl, CL_MEM_READ_ONLY, 16, NULL, &err);
  expect_cl(err, "clCreateBuffer");
  cl_mem r = clCreateBuffer(cl, CL_MEM_READ_WRITE, 16, NULL, &err);
  expect_cl(err, "clCreateBuffer");
  cl_event ev = NULL;
  TU_EXPECT_STATUS(clr_reduce_buffer_async(ctx, NULL, CLR_SUM, CLR_LONG, a, 0,
                                           N, ro, 0, 0, NULL, &ev),
                   CLR_ERR_INVALID_ARGUMENT, "async into a read-only buffer");
  TU_CHECK(ev == NULL, "a refused call returns no event");
  TU_EXPECT_STATUS(clr_reduce_buffer_async(ctx, NULL, CLR_SUM, CLR_LONG, a, 0,
                                           N, r, 2, 0, NULL, NULL),
                   CLR_ERR_INVALID_ARGUMENT,
                   "async into element 2 of a 2-element buffer");
  TU_EXPECT_STATUS(clr_reduce_buffer_async(ctx, NULL, CLR_SUM, CLR_LONG, a, 0,
                                           N, r, 0, 1, NULL, NULL),
                   CLR_ERR_INVALID_ARGUMENT, "one event, no wait list");
  /* an exact sum enqueued: rounded on the device (1e16 + 1 - 1e16 is 1
   * exactly; a plain sum in any order can give 0 or 2) */
  clr_options o;
  clr_options_init(&o);
  o.exact = 1;
  double big[3] = {1e16, 1, -1e16}, exact = -1;
  cl_mem d = tu_new_buffer(ctx, sizeof big, big);
  cl_mem dr = tu_new_buffer(ctx, sizeof exact, NULL);
  cl_event xev = NULL;
  clr_status xs = clr_reduce_buffer_async(ctx, &o, CLR_SUM, CLR_DOUBLE, d, 0, 3,
                                          dr, 0, 0, NULL, &xev);
  if (xs == CLR_OK) {
    clWaitForEvents(1, &xev);
    tu_read_buffer(ctx, dr, sizeof exact, &exact);
  }
  TU_CHECK(xs == CLR_OK && exact == 1.0, "async exact sum: %s, %.17g (want 1)",
           clr_status_name(xs), exact);
  if (xev)
    clReleaseEvent(xev);
  clReleaseMemObject(d);
  clReleaseMemObject(dr);
  TU_EXPECT_STATUS(clr_reduce_buffer_async(NULL, NULL, CLR_SUM, CLR_LONG, a, 0,
                                           N, r, 0, 0, NULL, NULL),
                   CLR_ERR_INVALID_ARGUMENT, "async with no context");
  clReleaseMemObject(ro);
  clReleaseMemObject(r);
}

/* A context released while an asynchronous call still waits for a user
 * event that the caller completes only afterwards: the release returns
 * at once (it once waited for the queue, so forever), and the call still
 * completes after it, with the right result, its event valid.  An alarm
 * turns a hang into a failure. */
static void release_pending(const int64_t *host) {
  clr_context *ctx = tu_context();
  cl_context cl = clr_context_cl_context(ctx);
  cl_device_id dev;
  cl_int err = clGetCommandQueueInfo(clr_context_queue(ctx), CL_QUEUE_DEVICE,
                                     sizeof dev, &dev, NULL);
  expect_cl(err, "clGetCommandQueueInfo");
  expect_cl(clRetainContext(cl), "clRetainContext");
  cl_command_queue q = clCreateCommandQueue(cl, dev, 0, &err);
  expect_cl(err, "clCreateCommandQueue");
  cl_mem a = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                            N * sizeof *host, (void *)(uintptr_t)host, &err);
  expect_cl(err, "clCreateBuffer");
  cl_mem r = clCreateBuffer(cl, CL_MEM_READ_WRITE, sizeof(int64_t), NULL, &err);
  expect_cl(err, "clCreateBuffer");
  cl_event user = clCreateUserEvent(cl, &err);
  expect_cl(err, "clCreateUserEvent");
  cl_event done = NULL;
  clr_status s = clr_reduce_buffer_async(ctx, NULL, CLR_SUM, CLR_LONG, a, 0, N,
                                         r, 0, 1, &user, &done);
  TU_EXPECT_STATUS(s, CLR_OK, "async sum waiting for a user event");
  alarm(60);
  clr_context_release(ctx); /* must not wait for the user event */
  alarm(0);
  TU_CHECK(1, "the release with a call pending returned");
  expect_cl(clSetUserEventStatus(user, CL_COMPLETE), "clSetUserEventStatus");
  int64_t got = 0, want = 0;
  for (size_t i = 0; i < N; i++)
    want += host[i];
  if (done) {
    alarm(60);
    expect_cl(clWaitForEvents(1, &done), "clWaitForEvents");
    alarm(0);
    expect_cl(
        clEnqueueReadBuffer(q, r, CL_TRUE, 0, sizeof got, &got, 0, NULL, NULL),
        "clEnqueueReadBuffer");
    clReleaseEvent(done);
  }
  TU_CHECK(done && got == want,
           "the pending call completed after the release: %lld (want %lld)",
           (long long)got, (long long)want);
  clReleaseEvent(user);
  clReleaseMemObject(a);
  clReleaseMemObject(r);
  clReleaseCommandQueue(q);
  clReleaseContext(cl);
  tu_section("release with a call pending");
}

int main(void) {
  int64_t *host = tu_xmalloc(N * sizeof *host);
  tu_rng rng = {77};
  for (size_t i = 0; i < N; i++)
    host[i] = (int64_t)(tu_next(&rng) % 2000001) - 1000000;
  clr_context *ctx = tu_context();
  cl_context cl = clr_context_cl_context(ctx);
  cl_command_queue q = clr_context_queue(ctx);
  cl_int err;
  cl_mem a = clCreateBuffer(cl, CL_MEM_READ_ONLY, N * sizeof *host, NULL, &err);
  expect_cl(err, "clCreateBuffer");
  expect_cl(clEnqueueWriteBuffer(q, a, CL_TRUE, 0, N * sizeof *host, host, 0,
                                 NULL, NULL),
            "clEnqueueWriteBuffer");
  chain(ctx, q, host, a, NULL, "own in-order queue");
  chain_scans(ctx, q, host, a, NULL, "own in-order queue");
  refusals(ctx, a);
  tu_section("in-order queue");

  /* Beside an out-of-order queue: the caller's write and the calls are
   * ordered by events only. */
  cl_device_id dev;
  expect_cl(clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL),
            "clGetCommandQueueInfo");
  cl_command_queue ooo = clCreateCommandQueue(
      cl, dev, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
  if (err == CL_SUCCESS) {
    clr_context *octx = NULL;
    char detail[256];
    if (clr_context_create_from_queue(ooo, NULL, &octx, detail,
                                      sizeof detail) != CLR_OK)
      tu_die("clr_context_create_from_queue: %s", detail);
    cl_mem b =
        clCreateBuffer(cl, CL_MEM_READ_ONLY, N * sizeof *host, NULL, &err);
    expect_cl(err, "clCreateBuffer");
    cl_event written = NULL;
    expect_cl(clEnqueueWriteBuffer(ooo, b, CL_FALSE, 0, N * sizeof *host, host,
                                   0, NULL, &written),
              "clEnqueueWriteBuffer");
    chain(octx, ooo, host, b, written, "beside an out-of-order queue");
    chain_scans(octx, ooo, host, b, written, "beside an out-of-order queue");
    clReleaseEvent(written);
    clReleaseMemObject(b);
    clr_context_release(octx);
    clReleaseCommandQueue(ooo);
    tu_section("out-of-order queue");
  } else {
    printf("out-of-order queues: not supported by this device (%d)\n",
           (int)err);
  }
  clReleaseMemObject(a);
  clr_context_release(ctx);
  release_pending(host);
  free(host);
  return tu_finish("test_async");
}
