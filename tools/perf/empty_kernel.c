/* What the device's profiling events give a kernel that does nothing
 * (the mid sizes' floor; run by tools/perf/bounds-measure.sh, section
 * "midpeers"):
 * one work-item a work-group writes one word, on the context's own
 * profiling queue, the time from CL_PROFILING_COMMAND_START to _END.
 * Timed two ways, median and minimum of R:
 *   - one launch at a time, waited for (as clr_reduce_buffer runs);
 *   - R launches back to back, then the first start to the last end over R
 *     (the launch rate) beside each launch's own start-to-end.
 * Every kernel time the library reports includes this floor, so at sizes
 * where a kernel's own work takes a few microseconds (1e6 floats read in
 * about 1.5 us at 3 TB/s) the ratio of two kernels' times says little
 * without it.
 *   build/tools/perf/empty_kernel [R] */
#include "measure_util.h"

#include <stdio.h>
#include <stdlib.h>

static const char *source =
    "__kernel void clr_empty(__global uint *out) {\n"
    "  if (get_local_id(0) == 0) out[get_group_id(0)] = 1u;\n"
    "}\n";

static double span_us(cl_event e, cl_profiling_info from, cl_profiling_info to,
                      int *ok) {
  cl_ulong a = 0, b = 0;
  *ok &= mu_check("empty_kernel",
                  clGetEventProfilingInfo(e, from, sizeof a, &a, NULL),
                  "clGetEventProfilingInfo") &&
         mu_check("empty_kernel",
                  clGetEventProfilingInfo(e, to, sizeof b, &b, NULL),
                  "clGetEventProfilingInfo");
  return (double)(b - a) * 1e-3;
}

int main(int argc, char **argv) {
  enum { MAX_R = 2000 };
  size_t reps = argc > 1 ? strtoul(argv[1], NULL, 10) : 200;
  if (reps < 1 || reps > MAX_R)
    reps = 200;
  clr_context *ctx = mu_context("empty_kernel");
  if (!ctx)
    return 1;
  cl_context cl = clr_context_cl_context(ctx);
  cl_command_queue q = clr_context_queue(ctx);
  cl_device_id dev = NULL;
  cl_int err =
      clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL);
  cl_program prog = NULL;
  if (err == CL_SUCCESS)
    prog = clCreateProgramWithSource(cl, 1, &source, NULL, &err);
  cl_kernel k = NULL;
  cl_mem out = NULL;
  double *t = malloc(MAX_R * sizeof *t);
  cl_event *ev = calloc(MAX_R, sizeof *ev);
  int ok =
      t && ev && mu_check("empty_kernel", err, "clCreateProgram") &&
      mu_check("empty_kernel", clBuildProgram(prog, 1, &dev, "", NULL, NULL),
               "clBuildProgram");
  if (ok)
    k = clCreateKernel(prog, "clr_empty", &err);
  ok = ok && mu_check("empty_kernel", err, "clCreateKernel");
  if (ok)
    out = clCreateBuffer(cl, CL_MEM_READ_WRITE, 4096 * sizeof(cl_uint), NULL,
                         &err);
  ok = ok && mu_check("empty_kernel", err, "clCreateBuffer") &&
       mu_check("empty_kernel", clSetKernelArg(k, 0, sizeof out, &out),
                "clSetKernelArg");
  /* What the driver says of the kernel's work-group size, and what a
   * launch at the device's limit does (NVIDIA's reports 256 for this
   * kernel on the H100, whose limit is 1024). */
  if (ok) {
    size_t kwg = 0, dmax = 0;
    ok = mu_check("empty_kernel",
                  clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE,
                                           sizeof kwg, &kwg, NULL),
                  "clGetKernelWorkGroupInfo") &&
         mu_check("empty_kernel",
                  clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_GROUP_SIZE,
                                  sizeof dmax, &dmax, NULL),
                  "clGetDeviceInfo");
    if (ok && dmax > 4096)
      dmax = 4096;
    cl_int launch = CL_SUCCESS, done = CL_SUCCESS;
    cl_uint got = 0, zero = 0;
    if (ok && dmax > kwg) {
      launch = clEnqueueFillBuffer(q, out, &zero, sizeof zero, 0, sizeof zero,
                                   0, NULL, NULL);
      if (launch == CL_SUCCESS)
        launch =
            clEnqueueNDRangeKernel(q, k, 1, NULL, &dmax, &dmax, 0, NULL, NULL);
      done = clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof got, &got, 0, NULL,
                                 NULL);
    }
    if (ok && dmax > kwg)
      printf("CL_KERNEL_WORK_GROUP_SIZE %zu, CL_DEVICE_MAX_WORK_GROUP_SIZE "
             "%zu; one group of %zu: enqueue %d, read back %d, its word %s\n",
             kwg, dmax, dmax, (int)launch, (int)done,
             got == 1 ? "written" : "not written");
    else if (ok)
      printf("CL_KERNEL_WORK_GROUP_SIZE %zu, CL_DEVICE_MAX_WORK_GROUP_SIZE "
             "%zu\n",
             kwg, dmax);
  }
  static const size_t shapes[][2] = {{32, 32}, {256, 256}, {4096, 256}};
  for (size_t s = 0; ok && s < sizeof shapes / sizeof *shapes; s++) {
    size_t global = shapes[s][0], local = shapes[s][1];
    /* one at a time, after three warm-up launches */
    for (size_t r = 0; ok && r < reps + 3; r++) {
      cl_event e;
      ok = mu_check(
          "empty_kernel",
          clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, &e),
          "clEnqueueNDRangeKernel");
      if (!ok)
        break;
      ok = mu_check("empty_kernel", clWaitForEvents(1, &e), "clWaitForEvents");
      if (r >= 3)
        t[r - 3] = span_us(e, CL_PROFILING_COMMAND_START,
                           CL_PROFILING_COMMAND_END, &ok);
      clReleaseEvent(e);
    }
    if (!ok)
      break;
    double one = mu_median(t, reps), one_min = t[0];
    /* back to back */
    size_t made = 0;
    for (; ok && made < reps; made++)
      ok = mu_check("empty_kernel",
                    clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0,
                                           NULL, &ev[made]),
                    "clEnqueueNDRangeKernel");
    ok = ok && mu_check("empty_kernel", clFinish(q), "clFinish");
    double rate = 0;
    if (ok) {
      cl_ulong first = 0, last = 0;
      ok = mu_check("empty_kernel",
                    clGetEventProfilingInfo(ev[0], CL_PROFILING_COMMAND_START,
                                            sizeof first, &first, NULL),
                    "clGetEventProfilingInfo") &&
           mu_check("empty_kernel",
                    clGetEventProfilingInfo(ev[made - 1],
                                            CL_PROFILING_COMMAND_END,
                                            sizeof last, &last, NULL),
                    "clGetEventProfilingInfo");
      rate = (double)(last - first) * 1e-3 / (double)made;
      for (size_t r = 0; ok && r < made; r++)
        t[r] = span_us(ev[r], CL_PROFILING_COMMAND_START,
                       CL_PROFILING_COMMAND_END, &ok);
    }
    for (size_t r = 0; r < made; r++)
      clReleaseEvent(ev[r]);
    if (!ok)
      break;
    double b2b = mu_median(t, made);
    printf("empty kernel, %zu work-items in groups of %zu: one at a time "
           "%.2f us (min %.2f); back to back %.2f us (min %.2f), one every "
           "%.2f us\n",
           global, local, one, one_min, b2b, t[0], rate);
  }
  if (out)
    clReleaseMemObject(out);
  if (k)
    clReleaseKernel(k);
  if (prog)
    clReleaseProgram(prog);
  free(t);
  free(ev);
  clr_context_release(ctx);
  return ok ? 0 : 1;
}
