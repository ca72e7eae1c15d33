/* Variance and standard deviation: what the drivers share once their
 * kernels have folded cl/moments.cl's (mean, M2, count) records.  The
 * reduction, segmented and matrix drivers run var and std as record
 * operations (clr_op_is_record), and a record becomes the caller's result
 * here: a whole array's as a clr_value (v the variance or deviation, max
 * the mean), an array of results in place as (value, mean, count) records
 * of the same bytes, on the host for host arrays and on the device
 * (cl/moments_finish.cl) for buffers: run to completion by the blocking
 * calls, enqueued after the passes by the asynchronous ones.  Both divide
 * and take the square root in the result type, correctly rounded (the
 * device's build asks for it), so a host array and a buffer get the same
 * bits. */
#include "internal.h"

#include <math.h>
#include <string.h>

/* The value (variance, or its square root for CLR_STD) and the mean of a
 * record of mean, M2 and n, in double; rounded to the result type by the
 * callers. */
static void finish_double(const clr_options *opt, clr_op op, double mean,
                          double m2, uint64_t n, double *value, double *m) {
  double v = n > opt->ddof ? m2 / (double)(n - opt->ddof) : NAN;
  *value = op == CLR_STD ? sqrt(v) : v;
  *m = n > 0 ? mean : NAN;
}

/* The same in float, so the division and the root round once, in float,
 * as the device does them. */
static void finish_float(const clr_options *opt, clr_op op, float mean,
                         float m2, uint64_t n, float *value, float *m) {
  float v = n > opt->ddof ? m2 / (float)(n - opt->ddof) : NAN;
  *value = op == CLR_STD ? sqrtf(v) : v;
  *m = n > 0 ? mean : NAN;
}

/* One record at rec (mean, M2, n of type rt) made (value, mean, n). */
static void finish_record(const clr_options *opt, clr_op op, clr_type rt,
                          unsigned char *rec) {
  uint64_t n;
  if (rt == CLR_FLOAT) {
    float f[2], out[2];
    memcpy(f, rec, sizeof f);
    memcpy(&n, rec + sizeof f, sizeof n);
    finish_float(opt, op, f[0], f[1], n, &out[0], &out[1]);
    memcpy(rec, out, sizeof out);
  } else {
    double d[2], out[2];
    memcpy(d, rec, sizeof d);
    memcpy(&n, rec + sizeof d, sizeof n);
    finish_double(opt, op, d[0], d[1], n, &out[0], &out[1]);
    memcpy(rec, out, sizeof out);
  }
}

void clr_moments_finish_host(const clr_options *opt, clr_op op, clr_type rt,
                             void *records, size_t count) {
  size_t bytes = 2 * clr_type_size(rt) + sizeof(uint64_t);
  unsigned char *r = records;
  for (size_t i = 0; i < count; i++)
    finish_record(opt, op, rt, r + i * bytes);
}

clr_value clr_moments_value(const clr_options *opt, clr_op op, clr_type rt,
                            const void *record) {
  unsigned char rec[2 * sizeof(double) + sizeof(uint64_t)];
  memcpy(rec, record, 2 * clr_type_size(rt) + sizeof(uint64_t));
  finish_record(opt, op, rt, rec);
  return clr_result_at(op, rt, rec, 0);
}

/* The finish kernel for data of type type, records of rt. */
static clr_status finish_kernel(clr_context *ctx, clr_type type, clr_type rt,
                                clr_program_entry **e) {
  clr_build_spec spec = {.source = "moments_finish.cl",
                         .kernel = "clr_moments_finish",
                         .in = type,
                         .acc = rt,
                         .op = CLR_VAR,
                         .extra = "-cl-fp32-correctly-rounded-divide-sqrt"};
  return clr_get_kernel(ctx, &spec, e);
}

clr_status clr_moments_finish_prepare(clr_context *ctx, clr_op op,
                                      clr_type type, clr_type rt) {
  clr_program_entry *e = NULL;
  return clr_op_is_moments(op) ? finish_kernel(ctx, type, rt, &e) : CLR_OK;
}

clr_status clr_moments_finish_enqueue(clr_context *ctx, const clr_options *opt,
                                      clr_op op, clr_type type, clr_type rt,
                                      cl_mem records, size_t offset,
                                      size_t count, cl_event wait,
                                      cl_event *done) {
  clr_program_entry *e = NULL;
  cl_uint n_wait = wait != NULL;
  const cl_event *wait_list = wait ? &wait : NULL;
  cl_int err;
  if (done)
    *done = NULL;
  if (count == 0) {
    /* No record, no launch (a global size of 0 is an error before
     * OpenCL 2.1); the caller's event still follows what came before. */
    if (!done)
      return CLR_OK;
    err = clEnqueueMarkerWithWaitList(clr_queue(ctx), n_wait, wait_list, done);
    return err == CL_SUCCESS
               ? CLR_OK
               : clr_cl_fail(ctx, "clEnqueueMarkerWithWaitList", err);
  }
  clr_status st = finish_kernel(ctx, type, rt, &e);
  if (st != CLR_OK)
    return st;
  cl_ulong off = offset, n = count, ddof = opt->ddof;
  cl_uint take_sqrt = op == CLR_STD;
  st = CLR_SET_ARGS(ctx, e->kernel, CLR_ARG(records), CLR_ARG(off), CLR_ARG(n),
                    CLR_ARG(ddof), CLR_ARG(take_sqrt));
  if (st != CLR_OK)
    return st;
  size_t wg = e->max_wg < 64 ? e->max_wg : 64;
  size_t global = (count + wg - 1) / wg * wg;
  err = clEnqueueNDRangeKernel(clr_queue(ctx), e->kernel, 1, NULL, &global, &wg,
                               n_wait, wait_list, done);
  if (err != CL_SUCCESS) {
    if (done)
      *done = NULL;
    return clr_cl_fail(ctx, "clEnqueueNDRangeKernel", err);
  }
  return CLR_OK;
}

clr_status clr_moments_finish_buffer(clr_context *ctx, const clr_options *opt,
                                     clr_op op, clr_type type, clr_type rt,
                                     cl_mem records, size_t offset,
                                     size_t count) {
  cl_event ev = NULL;
  clr_status st =
      clr_moments_finish_enqueue(ctx, opt, op, type, rt, records, offset, count,
                                 NULL, clr_timed(ctx, &ev));
  if (st != CLR_OK)
    return st;
  cl_int err = ev ? clWaitForEvents(1, &ev) : clFinish(clr_queue(ctx));
  if (err != CL_SUCCESS)
    st = clr_cl_fail(ctx, ev ? "clWaitForEvents" : "clFinish", err);
  else if (ev)
    ctx->timing.kernel_ms += clr_event_ms(ev, ev);
  if (ev)
    clReleaseEvent(ev);
  return st;
}
