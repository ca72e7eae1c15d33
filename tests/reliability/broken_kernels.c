/* Runs one deliberately broken kernel of broken_kernels.cl (or the Oclgrind
 * false-positive reproducer) with plain OpenCL, for run_oclgrind.py
 * --expect: the suite passes only if Oclgrind reports the bug.
 *
 *   broken_kernels --source=broken_kernels.cl --kernel=NAME
 * NAME: missing_barrier, divergent_barrier, out_of_bounds,
 *       uninitialized_local, or realloc_false_positive (not run by the
 *       suite: it shows that Oclgrind 21.10 --uninitialized reports a
 *       buffer as uninitialised when it reuses the index of a smaller,
 *       released buffer, although every element was written).
 * Exits 0 when the kernel ran (whatever it computed), 1 on a setup
 * failure (no OpenCL platform included: that fails the test). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 30 /* elements: the last work-group of 8 is partial */
#define WG 8

static void die(const char *what, cl_int err) {
  printf("FATAL: %s failed (%d)\n", what, (int)err);
  exit(1);
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    printf("FATAL: cannot open %s\n", path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)len + 1);
  if (!s || fread(s, 1, (size_t)len, f) != (size_t)len) {
    printf("FATAL: cannot read %s\n", path);
    exit(1);
  }
  s[len] = '\0';
  fclose(f);
  return s;
}

static const char *realloc_src =
    "__kernel void w(__global float *out) { out[get_global_id(0)] = 1.0f; }\n"
    "__kernel void r(__global const float *in, __global float *out) {\n"
    "  out[get_global_id(0)] = in[get_global_id(0)] + 1.0f; }\n";

int main(int argc, char **argv) {
  const char *source = NULL, *name = NULL;
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "--source=", 9) == 0)
      source = argv[i] + 9;
    else if (strncmp(argv[i], "--kernel=", 9) == 0)
      name = argv[i] + 9;
  }
  if (!name || (!source && strcmp(name, "realloc_false_positive") != 0)) {
    printf("usage: broken_kernels --source=FILE --kernel=NAME\n");
    return 1;
  }
  cl_platform_id plat;
  cl_device_id dev;
  cl_uint np = 0;
  cl_int err = clGetPlatformIDs(1, &plat, &np);
  if (err != CL_SUCCESS || np == 0)
    die("clGetPlatformIDs (no OpenCL platform)", err);
  err = clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL);
  if (err != CL_SUCCESS)
    die("clGetDeviceIDs", err);
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  if (err != CL_SUCCESS)
    die("clCreateContext", err);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
  if (err != CL_SUCCESS)
    die("clCreateCommandQueue", err);

  int realloc_mode = strcmp(name, "realloc_false_positive") == 0;
  char *text = realloc_mode ? NULL : read_file(source);
  const char *src = realloc_mode ? realloc_src : text;
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  if (err != CL_SUCCESS)
    die("clCreateProgramWithSource", err);
  err = clBuildProgram(prog, 1, &dev, "-cl-std=CL1.2", NULL, NULL);
  if (err != CL_SUCCESS)
    die("clBuildProgram", err);

  if (realloc_mode) {
    /* Round 1: a 2-element buffer, written then read.  Round 2: released
     * and replaced by a 5-element buffer (Oclgrind reuses the index),
     * every element written by w, then read by r: Oclgrind 21.10 reports
     * elements 2..4 as uninitialised. */
    cl_kernel kw = clCreateKernel(prog, "w", &err);
    cl_kernel kr = clCreateKernel(prog, "r", &err);
    cl_mem o = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &err);
    for (size_t round = 0, g = 2; round < 2; round++, g = 5) {
      cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE, g * 4, NULL, &err);
      clSetKernelArg(kw, 0, sizeof a, &a);
      clEnqueueNDRangeKernel(q, kw, 1, NULL, &g, NULL, 0, NULL, NULL);
      clSetKernelArg(kr, 0, sizeof a, &a);
      clSetKernelArg(kr, 1, sizeof o, &o);
      clEnqueueNDRangeKernel(q, kr, 1, NULL, &g, NULL, 0, NULL, NULL);
      clFinish(q);
      clReleaseMemObject(a);
    }
    clReleaseMemObject(o);
    clReleaseKernel(kw);
    clReleaseKernel(kr);
  } else {
    cl_kernel k = clCreateKernel(prog, name, &err);
    if (err != CL_SUCCESS)
      die("clCreateKernel", err);
    float host[N];
    for (int i = 0; i < N; i++)
      host[i] = (float)(i + 1);
    size_t global = (N + WG - 1) / WG * WG, local = WG;
    cl_ulong n = N;
    cl_mem in = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                               sizeof host, host, &err);
    if (err != CL_SUCCESS)
      die("clCreateBuffer", err);
    cl_mem out = clCreateBuffer(ctx, CL_MEM_READ_WRITE,
                                global / WG * sizeof(float), NULL, &err);
    if (err != CL_SUCCESS)
      die("clCreateBuffer", err);
    /* The well-formed kernels get a whole number of groups of input. */
    if (strcmp(name, "out_of_bounds") != 0)
      global = N / WG * WG;
    clSetKernelArg(k, 0, sizeof in, &in);
    clSetKernelArg(k, 1, sizeof out, &out);
    clSetKernelArg(k, 2, WG * sizeof(float), NULL);
    if (strcmp(name, "out_of_bounds") == 0)
      clSetKernelArg(k, 3, sizeof n, &n);
    err = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL);
    if (err != CL_SUCCESS)
      die("clEnqueueNDRangeKernel", err);
    float res[4] = {0, 0, 0, 0};
    err = clEnqueueReadBuffer(q, out, CL_TRUE, 0, global / WG * sizeof(float),
                              res, 0, NULL, NULL);
    if (err != CL_SUCCESS)
      die("clEnqueueReadBuffer", err);
    printf("%s ran: first partial %g\n", name, res[0]);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseKernel(k);
  }
  clReleaseProgram(prog);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  free(text);
  return 0;
}
