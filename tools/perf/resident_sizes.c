/* Mid sizes on a device-resident buffer (run by
 * tools/perf/bounds-measure.sh, section "resident"): the coarse float sum by
 * clr_reduce_buffer against the streaming read (clr_measure_read_bandwidth)
 * at each size, both back to back on the same buffer (the data stays in
 * the GPU's L2 where it fits: "hot"), and the sum again after a 256 MiB
 * fill of another buffer before each run ("after a flush").  Kernel times
 * from the library's profiling events, median of R runs.  The sums are of
 * ones, so each is checked exactly.
 *   build/tools/perf/resident_sizes [R]
 * CLREDUCE_KERNEL_DIR picks the kernels, as for clreduce;
 * RESIDENT_NO_CHECK=1 skips the check (for kernels cut to measure). */
#include "measure_util.h"

#include <stdio.h>
#include <stdlib.h>

static int fail(const char *what, clr_context *ctx) {
  fprintf(stderr, "resident_sizes: %s: %s\n", what,
          ctx ? clr_context_error(ctx) : "");
  return 1;
}

int main(int argc, char **argv) {
  static const size_t sizes[] = {1000000,  2000000,  5000000,  10000000,
                                 20000000, 50000000, 100000000};
  enum { MAX_R = 1000 };
  size_t reps = argc > 1 ? strtoul(argv[1], NULL, 10) : 60;
  /* RESIDENT_NO_CHECK: kernels cut for a measurement give wrong sums */
  int check = getenv("RESIDENT_NO_CHECK") == NULL;
  if (reps < 1 || reps > MAX_R)
    reps = 60;
  clr_context *ctx = mu_context("resident_sizes");
  if (!ctx)
    return 1;
  cl_context cl = clr_context_cl_context(ctx);
  cl_command_queue q = clr_context_queue(ctx);
  const size_t n_max = 100000000, flush_bytes = (size_t)256 << 20;
  float *ones = malloc(n_max * sizeof *ones);
  double *hot = malloc(MAX_R * sizeof *hot),
         *cold = malloc(MAX_R * sizeof *cold);
  cl_int err;
  cl_mem flush = clCreateBuffer(cl, CL_MEM_READ_WRITE, flush_bytes, NULL, &err);
  int rc = 0;
  if (!ones || !hot || !cold || err != CL_SUCCESS) {
    rc = fail("out of memory", NULL);
    goto done;
  }
  for (size_t i = 0; i < n_max; i++)
    ones[i] = 1.0f;
  printf("%10s %10s %12s %6s %14s %6s\n", "n", "stream ms", "hot ms", "%",
         "after flush ms", "%");
  for (size_t k = 0; k < sizeof sizes / sizeof *sizes && rc == 0; k++) {
    size_t n = sizes[k];
    cl_mem b =
        clCreateBuffer(cl, CL_MEM_READ_ONLY, n * sizeof(float), NULL, &err);
    if (err != CL_SUCCESS ||
        clEnqueueWriteBuffer(q, b, CL_TRUE, 0, n * sizeof(float), ones, 0, NULL,
                             NULL) != CL_SUCCESS) {
      rc = fail("buffer", NULL);
      if (err == CL_SUCCESS)
        clReleaseMemObject(b);
      break;
    }
    clr_options o;
    clr_options_init(&o);
    o.kernel = CLR_REDUCE_COARSE;
    for (size_t r = 0; r < 2 * reps + 3 && rc == 0; r++) {
      clr_value v;
      clr_timing t = CLR_TIMING_INIT;
      int after_flush = r >= reps + 3;
      float zero = 0;
      if (after_flush &&
          (clEnqueueFillBuffer(q, flush, &zero, sizeof zero, 0, flush_bytes, 0,
                               NULL, NULL) != CL_SUCCESS ||
           clFinish(q) != CL_SUCCESS))
        rc = fail("flush", NULL);
      else if (clr_reduce_buffer(ctx, &o, CLR_SUM, CLR_FLOAT, b, 0, n, &v) !=
               CLR_OK)
        rc = fail("clr_reduce_buffer", ctx);
      else if (check && v.v.f != (float)n)
        rc = fail("wrong sum", NULL);
      else if (clr_last_timing(ctx, &t) == CLR_OK && r >= 3)
        (after_flush ? cold : hot)[after_flush ? r - reps - 3 : r - 3] =
            t.kernel_ms;
    }
    double stream_ms = 0;
    if (rc == 0 &&
        clr_measure_read_bandwidth(ctx, n * sizeof(float), (unsigned)reps,
                                   &stream_ms) != CLR_OK)
      rc = fail("clr_measure_read_bandwidth", ctx);
    if (rc == 0) {
      double h = mu_median(hot, reps), c = mu_median(cold, reps);
      printf("%10zu %10.4f %12.4f %6.1f %14.4f %6.1f\n", n, stream_ms, h,
             100 * stream_ms / h, c, 100 * stream_ms / c);
    }
    clReleaseMemObject(b);
  }
done:
  if (flush)
    clReleaseMemObject(flush);
  free(ones);
  free(hot);
  free(cold);
  clr_context_release(ctx);
  return rc;
}
