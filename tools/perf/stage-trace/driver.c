/* The staged trip of a malloc'd array, traced (tools/perf/stage-trace/run.sh
 * builds the library with -Dstage_trace=true).  For each n: a plain pinned
 * write of the same bytes (the yardstick, median of 5), then
 * clr_reduce_host of a malloc'd float array, 8 calls untraced (the last
 * seven reported with clr_last_timing's span of the writes and kernel
 * time, and the rest of the wall clock) and 5 traced (CLR_TRACE set: the
 * traced library prints each call's steps to stderr, after a "# n N call
 * C" line here and before "# wall MS").  With a library built without the
 * option nothing is traced. */
#define _POSIX_C_SOURCE 200809L
#include "../measure_util.h"

#include <string.h>

#define UNTRACED 8

/* Median wall time of 5 blocking writes of `bytes` from pinned memory. */
static double pinned_write_ms(clr_context *ctx, size_t bytes) {
  cl_context cl = clr_context_cl_context(ctx);
  cl_command_queue q = clr_context_queue(ctx);
  cl_int err;
  double t[5], ms = -1;
  cl_mem dev = clCreateBuffer(cl, CL_MEM_READ_WRITE, bytes, NULL, &err);
  cl_mem pin = clCreateBuffer(cl, CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &err);
  void *p = pin ? clEnqueueMapBuffer(q, pin, CL_TRUE, CL_MAP_WRITE, 0, bytes, 0,
                                     NULL, NULL, &err)
                : NULL;
  if (dev && p) {
    memset(p, 1, bytes);
    for (int i = 0; i < 5; i++) {
      double t0 = mu_now_ms();
      clEnqueueWriteBuffer(q, dev, CL_TRUE, 0, bytes, p, 0, NULL, NULL);
      t[i] = mu_now_ms() - t0;
    }
    ms = mu_median(t, 5);
  }
  if (p)
    clEnqueueUnmapMemObject(q, pin, p, 0, NULL, NULL);
  clFinish(q);
  if (pin)
    clReleaseMemObject(pin);
  if (dev)
    clReleaseMemObject(dev);
  return ms;
}

int main(int argc, char **argv) {
  clr_context *ctx = mu_context("stage-trace");
  if (!ctx)
    return 1;
  static const size_t sizes[] = {1000000, 10000000, 100000000};
  for (size_t k = 0; k < 3; k++) {
    size_t n = sizes[k];
    if (argc > 1 && (size_t)atof(argv[1]) != n)
      continue;
    float *a = malloc(n * sizeof *a);
    if (!a)
      return 1;
    for (size_t i = 0; i < n; i++)
      a[i] = 1.0f;
    printf("n %zu: pinned write %.3f ms\n", n,
           pinned_write_ms(ctx, n * sizeof *a));
    clr_value v;
    for (int c = 0; c < UNTRACED + 5; c++) {
      if (c == UNTRACED)
        setenv("CLR_TRACE", "1", 1);
      if (c >= UNTRACED)
        fprintf(stderr, "# n %zu call %d\n", n, c - UNTRACED);
      double t0 = mu_now_ms();
      if (clr_reduce_host(ctx, NULL, CLR_SUM, CLR_FLOAT, a, n, &v) != CLR_OK) {
        fprintf(stderr, "stage-trace: %s\n", clr_context_error(ctx));
        return 1;
      }
      double ms = mu_now_ms() - t0;
      clr_timing tm = CLR_TIMING_INIT;
      if (c > 0 && c < UNTRACED && clr_last_timing(ctx, &tm) == CLR_OK)
        printf("n %zu: untraced call, %.3f ms: its writes' span %.3f, kernel "
               "%.3f, the rest %.3f\n",
               n, ms, tm.h2d_ms, tm.kernel_ms, ms - tm.h2d_ms - tm.kernel_ms);
      if (c >= UNTRACED) {
        fprintf(stderr, "# wall %.3f\n", ms);
        printf("n %zu: traced call %d, %.3f ms (the trace's printing "
               "included), sum %.0f\n",
               n, c - UNTRACED, ms, (double)v.v.f);
      }
    }
    unsetenv("CLR_TRACE");
    free(a);
  }
  clr_context_release(ctx);
  return 0;
}
