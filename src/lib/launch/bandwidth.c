/* The device's own read bandwidth, measured with a plain streaming kernel
 * (cl/stream_read.cl) in the access pattern the coarse reduction uses. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median_of(double *t, unsigned n) {
  qsort(t, n, sizeof *t, cmp_double);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* The streaming kernel's input (in_bytes, zero-filled, every page touched)
 * and output, and room for `repeats` times. */
static clr_status make_run(clr_context *ctx, size_t in_bytes, size_t out_bytes,
                           unsigned repeats, cl_mem *in, cl_mem *out,
                           double **times) {
  cl_int err;
  cl_uint zero = 0;
  *in = *out = NULL;
  *times = malloc(repeats * sizeof **times);
  if (!*times)
    return clr_fail(ctx, CLR_ERR_OUT_OF_MEMORY, "out of host memory");
  *in = clCreateBuffer(ctx->cl, CL_MEM_READ_ONLY, in_bytes, NULL, &err);
  if (err != CL_SUCCESS) {
    *in = NULL;
    return clr_cl_fail(ctx, "clCreateBuffer", err);
  }
  *out = clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE, out_bytes, NULL, &err);
  if (err != CL_SUCCESS) {
    *out = NULL;
    return clr_cl_fail(ctx, "clCreateBuffer", err);
  }
  /* Touch every page first: the first run must not pay for allocation. */
  CLR_CL_RETURN(ctx,
                clEnqueueFillBuffer(clr_queue(ctx), *in, &zero, sizeof zero, 0,
                                    in_bytes, 0, NULL, NULL));
  return CLR_OK;
}

static void end_run(cl_mem in, cl_mem out, double *times) {
  free(times);
  if (in)
    clReleaseMemObject(in);
  if (out)
    clReleaseMemObject(out);
}

CLR_API clr_status clr_measure_read_bandwidth(clr_context *ctx, size_t bytes,
                                              unsigned repeats,
                                              double *median_ms) {
  clr_status st = CLR_OK;
  clr_program_entry *k = NULL;
  cl_mem in = NULL, out = NULL;
  double *times = NULL;
  clr_options opt;
  unsigned vec;
  clr_layout layout;
  size_t wg;
  clr_launch L;
  if (!ctx)
    return CLR_ERR_INVALID_ARGUMENT;
  st = clr_begin_call(ctx);
  if (st != CLR_OK)
    return st;
  if (!median_ms || repeats == 0)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "median_ms must not be NULL and repeats at least 1");
  clr_options_init(&opt);
  clr_choose_coarse_shape(ctx, &opt, CLR_UINT, CLR_UINT,
                          ctx->tuning.reduce_vec_bytes, &vec, &layout);
  size_t unit = (size_t)vec * 4;
  bytes -= bytes % unit;
  if (bytes == 0)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "streaming read needs at least %zu bytes", unit);
  if (bytes > ctx->desc.max_alloc_size)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "%zu bytes exceed the device's largest allocation", bytes);
  clr_build_spec spec = {.source = "stream_read.cl",
                         .kernel = "clr_stream_read",
                         .in = CLR_UINT,
                         .acc = CLR_UINT,
                         .op = CLR_SUM,
                         .vec = vec,
                         .layout = (unsigned)layout};
  st = clr_get_kernel(ctx, &spec, &k);
  if (st != CLR_OK)
    return st;
  st = clr_choose_wg(ctx, k, 0, ctx->tuning.reduce_wg, 0, 0, &wg);
  if (st != CLR_OK)
    return st;
  st = clr_reduce_launch(ctx, CLR_REDUCE_COARSE, &opt, bytes / 4, wg, vec,
                         layout, 1, &L);
  if (st != CLR_OK)
    return st;
  cl_int err;
  cl_ulong nv = bytes / unit, per_item = L.per_item;
  st = make_run(ctx, bytes, L.global * sizeof(cl_uint), repeats, &in, &out,
                &times);
  if (st != CLR_OK)
    goto fail;
  st = CLR_SET_ARGS(ctx, k->kernel, CLR_ARG(in), CLR_ARG(nv), CLR_ARG(out),
                    CLR_ARG(per_item));
  if (st != CLR_OK)
    goto fail;
  for (unsigned r = 0; r < repeats + 2; r++) { /* two warm-up runs */
    cl_event ev = NULL;
    CLR_CL_CHECK(ctx,
                 clEnqueueNDRangeKernel(clr_queue(ctx), k->kernel, 1, NULL,
                                        &L.global, &L.local, 0, NULL, &ev));
    err = clWaitForEvents(1, &ev);
    double ms = clr_event_ms(ev, ev);
    clReleaseEvent(ev);
    if (err != CL_SUCCESS) {
      st = clr_cl_fail(ctx, "clWaitForEvents", err);
      goto fail;
    }
    if (r >= 2)
      times[r - 2] = ms;
  }
  *median_ms = median_of(times, repeats);
fail:
  end_run(in, out, times);
  return st;
}

/* The floor of a small call: one launch of the streaming kernel (one
 * work-group over a few words) and one blocking read of 8 bytes, the
 * least any call that returns a value from the device does.  Wall clock,
 * median of `repeats` after two warm-up runs. */
CLR_API clr_status clr_measure_call_floor(clr_context *ctx, unsigned repeats,
                                          double *median_us) {
  clr_status st = CLR_OK;
  clr_program_entry *k = NULL;
  cl_mem in = NULL, out = NULL;
  double *times = NULL;
  if (!ctx)
    return CLR_ERR_INVALID_ARGUMENT;
  st = clr_begin_call(ctx);
  if (st != CLR_OK)
    return st;
  if (!median_us || repeats == 0)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "median_us must not be NULL and repeats at least 1");
  clr_build_spec spec = {.source = "stream_read.cl",
                         .kernel = "clr_stream_read",
                         .in = CLR_UINT,
                         .acc = CLR_UINT,
                         .op = CLR_SUM,
                         .vec = 1,
                         .layout = (unsigned)CLR_LAYOUT_STRIDED};
  st = clr_get_kernel(ctx, &spec, &k);
  if (st != CLR_OK)
    return st;
  size_t wg = 0;
  st = clr_choose_wg(ctx, k, 0, 64, 0, 0, &wg);
  if (st != CLR_OK)
    return st;
  cl_ulong nv = wg, per_item = 1;
  cl_uint got[2];
  size_t bytes = wg * sizeof(cl_uint) < 8 ? 8 : wg * sizeof(cl_uint);
  st = make_run(ctx, bytes, bytes, repeats, &in, &out, &times);
  if (st != CLR_OK)
    goto fail;
  CLR_CL_CHECK(ctx, clFinish(clr_queue(ctx)));
  st = CLR_SET_ARGS(ctx, k->kernel, CLR_ARG(in), CLR_ARG(nv), CLR_ARG(out),
                    CLR_ARG(per_item));
  if (st != CLR_OK)
    goto fail;
  for (unsigned r = 0; r < repeats + 2; r++) {
    double t0 = clr_now_ms();
    CLR_CL_CHECK(ctx, clEnqueueNDRangeKernel(clr_queue(ctx), k->kernel, 1, NULL,
                                             &wg, &wg, 0, NULL, NULL));
    CLR_CL_CHECK(ctx, clEnqueueReadBuffer(clr_queue(ctx), out, CL_TRUE, 0,
                                          sizeof got, got, 0, NULL, NULL));
    if (r >= 2)
      times[r - 2] = (clr_now_ms() - t0) * 1e3;
  }
  *median_us = median_of(times, repeats);
fail:
  end_run(in, out, times);
  return st;
}
