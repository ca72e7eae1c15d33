/* What a small blocking reduction's OpenCL calls cost on the first GPU
 * (docs/perf-log/small-calls.md): one launch of 256 work-items
 * summing 1,000 floats and a blocking read of 4 bytes, with and without
 * a profiling queue, kernel arguments, events, profiling queries, waits
 * and host-to-device writes.  The variants take turns, round after round,
 * so that drift in the machine's state shows in all of them alike.
 *   build/tools/perf/call_parts
 * (tools/perf/latency-measure.sh runs it beside clreduce-bench --latency.) */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROUNDS 3000
#define WARM 50
#define N 10000 /* floats in the buffer: the writes' 40 KB */
#define SUMMED                                                                 \
  1000 /* floats the kernel sums: a short kernel, as in a small                \
          call, so the calls' costs do not hide behind it */

typedef struct variant {
  const char *name;
  int profiling;    /* the queue has CL_QUEUE_PROFILING_ENABLE */
  int set_args;     /* six clSetKernelArg a call */
  size_t write;     /* bytes written before the launch (0: none) */
  int blocking;     /* the write blocks */
  int pinned;       /* ... from a pinned block, after a memcpy into it */
  int write_event;  /* an event on the write, waited after the launch */
  int launch_event; /* an event on the launch */
  int read_event;   /* an event on the read */
  int queries;      /* four profiling queries after the read */
  int wait_after;   /* clWaitForEvents(launch) after the read */
} variant;

#define PROF .profiling = 1
#define ARGS .set_args = 1
#define TIMED_CALL                                                             \
  .launch_event = 1, .read_event = 1, .queries = 1, .wait_after = 1
static const variant variants[] = {
    {"floor: launch + blocking read, profiling queue", PROF},
    {"floor: launch + blocking read, no profiling", .profiling = 0},
    {"profiling: + 6 clSetKernelArg", PROF, ARGS},
    {"profiling: + event on the launch", PROF, ARGS, .launch_event = 1},
    {"profiling: + event on the read, 4 queries, wait after", PROF, ARGS,
     TIMED_CALL},
    {"no profiling: + event on the launch", ARGS, .launch_event = 1},
    {"no profiling: + event on the launch, wait after", ARGS, .launch_event = 1,
     .wait_after = 1},
    {"no profiling: 4 KB non-blocking write from malloc", ARGS, .write = 4000},
    {"no profiling: 4 KB blocking write from malloc", ARGS, .write = 4000,
     .blocking = 1},
    {"no profiling: 40 KB blocking write from malloc", ARGS, .write = 40000,
     .blocking = 1},
    {"no profiling: 40 KB memcpy to pinned, write (event)", ARGS,
     .write = 40000, .pinned = 1, .write_event = 1},
    {"profiling: 4 KB write(ev), launch(ev), read(ev), waits", PROF, ARGS,
     .write = 4000, .write_event = 1, TIMED_CALL},
    {"profiling: 40 KB memcpy to pinned, write(ev), ..., waits", PROF, ARGS,
     .write = 40000, .pinned = 1, .write_event = 1, TIMED_CALL},
};
#define N_VARIANTS (sizeof variants / sizeof *variants)

static const char *source =
    "__kernel void k(__global const float *in, ulong off, ulong n,\n"
    "                __global float *out, __local float *l, ulong per) {\n"
    "  uint i = get_local_id(0);\n"
    "  float a = 0;\n"
    "  for (ulong j = i; j < n; j += get_local_size(0)) a += in[off + j];\n"
    "  l[i] = a;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {\n"
    "    if (i < s) l[i] += l[i + s];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  if (i == 0) out[0] = l[0] + (float)per;\n"
    "}\n";

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

#define CHECK(call)                                                            \
  do {                                                                         \
    cl_int e_ = (call);                                                        \
    if (e_ != CL_SUCCESS) {                                                    \
      fprintf(stderr, "call_parts: %s: %d\n", #call, (int)e_);                 \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

typedef struct bench {
  cl_command_queue q;
  cl_kernel k;
  cl_mem in, out, pin;
  float *host, *pinned;
  size_t wg;
  cl_ulong off, n, per;
} bench;

static void set_args(bench *b) {
  CHECK(clSetKernelArg(b->k, 0, sizeof b->in, &b->in));
  CHECK(clSetKernelArg(b->k, 1, sizeof b->off, &b->off));
  CHECK(clSetKernelArg(b->k, 2, sizeof b->n, &b->n));
  CHECK(clSetKernelArg(b->k, 3, sizeof b->out, &b->out));
  CHECK(clSetKernelArg(b->k, 4, b->wg * sizeof(float), NULL));
  CHECK(clSetKernelArg(b->k, 5, sizeof b->per, &b->per));
}

/* One call of variant v; its wall clock in microseconds, the answer in
 * *got. */
static double one_call(bench *b, const variant *v, float *got) {
  cl_command_queue q = b->q;
  cl_event ew = NULL, el = NULL, er = NULL;
  double t0 = now_us();
  if (v->set_args)
    set_args(b);
  if (v->write) {
    const float *src = b->host;
    if (v->pinned) {
      memcpy(b->pinned, b->host, v->write);
      src = b->pinned;
    }
    CHECK(clEnqueueWriteBuffer(q, b->in, v->blocking, 0, v->write, src, 0, NULL,
                               v->write_event ? &ew : NULL));
  }
  CHECK(clEnqueueNDRangeKernel(q, b->k, 1, NULL, &b->wg, &b->wg, 0, NULL,
                               v->launch_event ? &el : NULL));
  if (ew)
    CHECK(clWaitForEvents(1, &ew));
  CHECK(clEnqueueReadBuffer(q, b->out, CL_TRUE, 0, sizeof *got, got, 0, NULL,
                            v->read_event ? &er : NULL));
  if (v->queries) {
    cl_ulong t;
    cl_event evs[2] = {el, er};
    for (int i = 0; i < 2; i++) {
      CHECK(clGetEventProfilingInfo(evs[i], CL_PROFILING_COMMAND_START,
                                    sizeof t, &t, NULL));
      CHECK(clGetEventProfilingInfo(evs[i], CL_PROFILING_COMMAND_END, sizeof t,
                                    &t, NULL));
    }
  }
  if (v->wait_after)
    CHECK(clWaitForEvents(1, &el));
  cl_event all[3] = {ew, el, er};
  for (int i = 0; i < 3; i++)
    if (all[i])
      CHECK(clReleaseEvent(all[i]));
  return now_us() - t0;
}

/* The variants of one kind of queue, in a context of their own (a
 * context with both kinds, the variants switching between them, slowed
 * every call without profiling by ~8 us in a trial run). */
static int run_phase(cl_device_id dev, int profiling) {
  cl_int err;
  bench b = {.wg = 256, .off = 0, .n = SUMMED, .per = 0};
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  CHECK(err);
  b.q = clCreateCommandQueue(ctx, dev,
                             profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
  CHECK(err);
  cl_program prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));
  b.k = clCreateKernel(prog, "k", &err);
  CHECK(err);
  b.host = malloc(N * sizeof *b.host);
  for (size_t i = 0; i < N; i++)
    b.host[i] = 1.0f;
  b.in = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                        N * sizeof *b.host, b.host, &err);
  CHECK(err);
  b.out = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &err);
  CHECK(err);
  b.pin = clCreateBuffer(ctx, CL_MEM_ALLOC_HOST_PTR, N * sizeof *b.host, NULL,
                         &err);
  CHECK(err);
  b.pinned = clEnqueueMapBuffer(b.q, b.pin, CL_TRUE, CL_MAP_WRITE, 0,
                                N * sizeof *b.host, 0, NULL, NULL, &err);
  CHECK(err);
  set_args(&b);
  static double us[N_VARIANTS][ROUNDS];
  for (int r = -WARM; r < ROUNDS; r++)
    for (size_t v = 0; v < N_VARIANTS; v++) {
      if (variants[v].profiling != profiling)
        continue;
      float got = 0;
      double t = one_call(&b, &variants[v], &got);
      if (got != (float)SUMMED) {
        fprintf(stderr, "call_parts: %s: sum %g, want %d\n", variants[v].name,
                got, SUMMED);
        return 1;
      }
      if (r >= 0)
        us[v][r] = t;
    }
  for (size_t v = 0; v < N_VARIANTS; v++) {
    if (variants[v].profiling != profiling)
      continue;
    qsort(us[v], ROUNDS, sizeof us[v][0], by_value);
    printf("  %-58s %6.1f  (%5.1f, %5.1f)\n", variants[v].name,
           us[v][ROUNDS / 2], us[v][ROUNDS / 10], us[v][9 * ROUNDS / 10]);
  }
  CHECK(clEnqueueUnmapMemObject(b.q, b.pin, b.pinned, 0, NULL, NULL));
  CHECK(clFinish(b.q));
  clReleaseMemObject(b.pin);
  clReleaseMemObject(b.in);
  clReleaseMemObject(b.out);
  clReleaseKernel(b.k);
  clReleaseProgram(prog);
  clReleaseCommandQueue(b.q);
  clReleaseContext(ctx);
  free(b.host);
  return 0;
}

int main(void) {
  cl_platform_id platforms[8];
  cl_uint n_platforms = 0;
  cl_device_id dev = NULL;
  CHECK(clGetPlatformIDs(8, platforms, &n_platforms));
  for (cl_uint p = 0; p < n_platforms && !dev; p++)
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_GPU, 1, &dev, NULL) !=
        CL_SUCCESS)
      dev = NULL;
  if (!dev) {
    fprintf(stderr, "call_parts: no GPU\n");
    return 1;
  }
  printf("call_parts: %d rounds, median (p10, p90) in us\n", ROUNDS);
  return run_phase(dev, 1) || run_phase(dev, 0);
}
