/* clreduce-bench --group=DEVICES: a float sum over several devices
 * (clr_group) against the same sum on the group's first device alone,
 * wall clock of whole calls, median of --repeat after one warm-up:
 *   buffers  the data already on the devices: one buffer a device holding
 *            its part (clr_group_reduce_buffers), against one buffer of
 *            all n on device 0 (clr_reduce_buffer);
 *   host     a malloc'd host array (clr_group_reduce_host: each device
 *            stages its part at once), against clr_reduce_host on device 0.
 * At small n the difference is the group's cost (threads, the host's
 * fold).  Every first answer is checked against the CPU's. */
#include "group_paths.h"

#include "cli.h"
#include "datagen.h"
#include "progress.h"
#include "reference.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* One way of running the sum: the call's status, the value in *v and its
 * rounding depth (clr_timing.error_depth) in *depth. */
typedef clr_status (*sum_fn)(void *user, clr_value *v, size_t *depth);

/* Median wall time of repeat calls after one warm-up; the warm-up's value
 * checked against ref.  -1 on a failure (printed), -2 on a wrong answer. */
static double median_call(sum_fn fn, void *user, unsigned repeat,
                          const clr_reference *ref, const char *what) {
  clr_value v;
  size_t depth = 0;
  double *ms = malloc(repeat * sizeof *ms);
  if (!ms)
    return -1;
  for (unsigned r = 0; r <= repeat; r++) {
    double t0 = now_ms();
    clr_status st = fn(user, &v, &depth);
    double t = now_ms() - t0;
    if (st != CLR_OK) {
      progress_clear();
      fprintf(stderr, "clreduce-bench: %s: %s\n", what, clr_status_name(st));
      free(ms);
      return -1;
    }
    if (r == 0) {
      clr_check chk;
      clr_ref_check(ref, &v, depth, &chk);
      if (!chk.ok) {
        progress_clear();
        fprintf(stderr,
                "clreduce-bench: %s: %.9g, reference %.9g (error %g, "
                "bound %g)\n",
                what, v.v.f, ref->value.v.f, chk.error, chk.bound);
        free(ms);
        return -2;
      }
    } else {
      ms[r - 1] = t;
    }
  }
  double m = cli_median(ms, repeat);
  free(ms);
  return m;
}

typedef struct run {
  clr_group *g;
  clr_context *one;
  const float *host;
  size_t n;
  cl_mem *parts; /* one a device */
  size_t counts[CLR_GROUP_MAX_DEVICES];
  cl_mem whole; /* all n on device 0 */
} run;

static clr_status group_depth(const run *r, clr_status st, size_t *depth) {
  clr_group_timing t;
  clr_group_last_timing(r->g, &t);
  *depth = t.error_depth;
  return st;
}
static clr_status one_depth(const run *r, clr_status st, size_t *depth) {
  clr_timing t = CLR_TIMING_INIT;
  clr_last_timing(r->one, &t);
  *depth = t.error_depth;
  return st;
}
static clr_status group_buffers(void *u, clr_value *v, size_t *depth) {
  run *r = u;
  return group_depth(r,
                     clr_group_reduce_buffers(r->g, NULL, CLR_SUM, CLR_FLOAT,
                                              r->parts, NULL, r->counts, v),
                     depth);
}
static clr_status one_buffer(void *u, clr_value *v, size_t *depth) {
  run *r = u;
  return one_depth(
      r,
      clr_reduce_buffer(r->one, NULL, CLR_SUM, CLR_FLOAT, r->whole, 0, r->n, v),
      depth);
}
static clr_status group_host(void *u, clr_value *v, size_t *depth) {
  run *r = u;
  return group_depth(
      r,
      clr_group_reduce_host(r->g, NULL, CLR_SUM, CLR_FLOAT, r->host, r->n, v),
      depth);
}
static clr_status one_host(void *u, clr_value *v, size_t *depth) {
  run *r = u;
  return one_depth(
      r, clr_reduce_host(r->one, NULL, CLR_SUM, CLR_FLOAT, r->host, r->n, v),
      depth);
}

/* A buffer of count floats of ctx's, holding data. */
static cl_mem device_copy(clr_context *ctx, const float *data, size_t count) {
  cl_int err;
  size_t bytes = (count ? count : 1) * sizeof(float);
  cl_mem m = clCreateBuffer(clr_context_cl_context(ctx), CL_MEM_READ_ONLY,
                            bytes, NULL, &err);
  if (err != CL_SUCCESS)
    return NULL;
  if (count && clEnqueueWriteBuffer(clr_context_queue(ctx), m, CL_TRUE, 0,
                                    bytes, data, 0, NULL, NULL) != CL_SUCCESS) {
    clReleaseMemObject(m);
    return NULL;
  }
  return m;
}

int bench_group(const clr_context_config *cfg, const char *devices,
                const size_t *sizes, size_t n_sizes, unsigned repeat) {
  char detail[512] = "";
  clr_group *g = NULL;
  clr_status st = clr_group_create(cfg, devices, &g, detail, sizeof detail);
  if (st != CLR_OK) {
    fprintf(stderr, "clreduce-bench: --group=%s: %s: %s\n", devices,
            clr_status_string(st), detail);
    return 3;
  }
  size_t k = clr_group_size(g);
  double w[CLR_GROUP_MAX_DEVICES];
  clr_group_weights(g, w);
  for (size_t i = 0; i < k; i++) {
    clr_device_desc d;
    clr_context_device(clr_group_context(g, i), &d);
    printf("device %zu: %s (%s), weight %.3g\n", i, d.device_name,
           d.platform_name, w[i]);
  }
  size_t max_n = sizes[n_sizes - 1];
  float *host = malloc(max_n * sizeof *host);
  if (!host) {
    fprintf(stderr, "clreduce-bench: out of host memory\n");
    clr_group_release(g);
    return 3;
  }
  char desc[256];
  clr_gen_data(CLR_SUM, CLR_FLOAT, 42, host, max_n, desc, sizeof desc);
  printf("data:    %s\n", desc);
  printf("%12s %12s %12s %8s %12s %12s %8s %10s\n", "n", "buffers_ms",
         "one_buf_ms", "speedup", "host_ms", "one_host_ms", "speedup",
         "fold_us");
  int rc = 0;
  for (size_t si = 0; si < n_sizes && rc == 0; si++) {
    run r = {
        .g = g, .one = clr_group_context(g, 0), .host = host, .n = sizes[si]};
    cl_mem parts[CLR_GROUP_MAX_DEVICES] = {0};
    r.parts = parts;
    clr_group_split(g, r.n, r.counts);
    for (size_t i = 0, at = 0; i < k; i++) {
      parts[i] = device_copy(clr_group_context(g, i), host + at, r.counts[i]);
      at += r.counts[i];
      if (!parts[i])
        rc = 3;
    }
    r.whole = rc ? NULL : device_copy(r.one, host, r.n);
    if (!r.whole)
      rc = 3;
    if (rc) {
      progress_clear();
      fprintf(stderr, "clreduce-bench: n=%zu: device buffers failed\n", r.n);
    } else {
      clr_reference ref;
      clr_ref_reduce(CLR_SUM, CLR_FLOAT, 0, host, r.n, &ref);
      progress_step("--group n=%zu: group, buffers", r.n);
      double gb =
          median_call(group_buffers, &r, repeat, &ref, "group, buffers");
      clr_group_timing gt;
      clr_group_last_timing(g, &gt);
      progress_step("--group n=%zu: one device, buffer", r.n);
      double ob =
          median_call(one_buffer, &r, repeat, &ref, "one device, buffer");
      progress_step("--group n=%zu: group, host array", r.n);
      double gh =
          median_call(group_host, &r, repeat, &ref, "group, host array");
      progress_step("--group n=%zu: one device, host array", r.n);
      double oh =
          median_call(one_host, &r, repeat, &ref, "one device, host array");
      if (gb < 0 || ob < 0 || gh < 0 || oh < 0) {
        rc = gb == -2 || ob == -2 || gh == -2 || oh == -2 ? 1 : 3;
      } else {
        progress_clear();
        printf("%12zu %12.4f %12.4f %8.3f %12.4f %12.4f %8.3f %10.2f\n", r.n,
               gb, ob, ob / gb, gh, oh, oh / gh, gt.combine_ms * 1e3);
        fflush(stdout);
      }
    }
    for (size_t i = 0; i < k; i++)
      if (parts[i])
        clReleaseMemObject(parts[i]);
    if (r.whole)
      clReleaseMemObject(r.whole);
  }
  free(host);
  clr_group_release(g);
  return rc;
}
