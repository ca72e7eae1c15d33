/* clreduce-bench --host and --latency: what a caller of the host-array
 * functions waits for, beside what the machine can do.
 *
 * --host, at each size (float data, a sum): the bus, measured here with
 * plain copies of the same bytes (from ordinary malloc'd memory, and from
 * a pinned CL_MEM_ALLOC_HOST_PTR buffer), then whole clr_reduce_host and
 * clr_scan_host calls, wall clock, with the context's pinned staging
 * (stage.threads) and without it (stage.threads = 0: one direct write).
 * Each call's first answer is checked against the CPU.
 *
 * --latency: whole calls of clr_reduce_host and clr_reduce_buffer at small
 * n, wall clock, beside clr_measure_call_floor (one launch and one
 * blocking read of 8 bytes). */
#include "host_paths.h"

#include "cli.h"
#include "datagen.h"
#include "progress.h"
#include "reference.h"
#include "scan_reference.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* The host's own copy speed, the staging's other half: bytes split
 * among T threads, each a memcpy of its share. */
typedef struct copy_share {
  char *dst;
  const char *src;
  size_t bytes;
} copy_share;

static void *copy_part(void *arg) {
  copy_share *c = arg;
  memcpy(c->dst, c->src, c->bytes);
  return NULL;
}

static double threaded_memcpy_ms(void *dst, const void *src, size_t bytes,
                                 unsigned threads, unsigned repeat) {
  copy_share part[64];
  pthread_t tid[64];
  double *ms = malloc(repeat * sizeof *ms), m;
  if (!ms || threads == 0 || threads > 64) {
    free(ms);
    return -1;
  }
  for (unsigned r = 0; r <= repeat; r++) {
    double t0 = now_ms();
    size_t at = 0, share = bytes / threads;
    int started[64] = {0};
    for (unsigned t = 0; t < threads; t++) {
      size_t len = t + 1 == threads ? bytes - at : share;
      part[t] = (copy_share){(char *)dst + at, (const char *)src + at, len};
      at += len;
      started[t] =
          t > 0 && pthread_create(&tid[t], NULL, copy_part, &part[t]) == 0;
      if (t > 0 && !started[t])
        copy_part(&part[t]);
    }
    copy_part(&part[0]);
    for (unsigned t = 1; t < threads; t++)
      if (started[t])
        pthread_join(tid[t], NULL);
    if (r > 0) /* the first run touches the pages */
      ms[r - 1] = now_ms() - t0;
  }
  m = cli_median(ms, repeat);
  free(ms);
  return m;
}

/* One thing timed `repeat` times after a warm-up: a copy or a call. */
typedef enum {
  T_WRITE_PAGEABLE,
  T_WRITE_PINNED,
  T_READ_PINNED,
  T_REDUCE, /* of in */
  T_SCAN    /* of in into out */
} timed;

typedef struct host_run {
  clr_context *ctx;
  cl_command_queue q;
  cl_mem dev;
  float *data, *pinned; /* the values (malloc'd), and a pinned copy */
  float *in, *out;      /* the calls' arrays: data and a malloc'd output,
                           or clr_host_alloc's two */
  size_t n;
  clr_value v;
} host_run;

static int run_once(host_run *h, timed what) {
  size_t bytes = h->n * sizeof(float);
  switch (what) {
  case T_WRITE_PAGEABLE:
    return clEnqueueWriteBuffer(h->q, h->dev, CL_TRUE, 0, bytes, h->data, 0,
                                NULL, NULL) == CL_SUCCESS;
  case T_WRITE_PINNED:
    return clEnqueueWriteBuffer(h->q, h->dev, CL_TRUE, 0, bytes, h->pinned, 0,
                                NULL, NULL) == CL_SUCCESS;
  case T_READ_PINNED:
    return clEnqueueReadBuffer(h->q, h->dev, CL_TRUE, 0, bytes, h->pinned, 0,
                               NULL, NULL) == CL_SUCCESS;
  case T_REDUCE:
    return clr_reduce_host(h->ctx, NULL, CLR_SUM, CLR_FLOAT, h->in, h->n,
                           &h->v) == CLR_OK;
  case T_SCAN:
    return clr_scan_host(h->ctx, NULL, CLR_SUM, CLR_FLOAT, h->in, h->out,
                         h->n) == CLR_OK;
  }
  return 0;
}

/* The first call's answer against the CPU: 1 right, 0 wrong. */
static int verify(host_run *h, timed what) {
  clr_timing t = CLR_TIMING_INIT;
  clr_last_timing(h->ctx, &t);
  if (what == T_REDUCE) {
    clr_reference ref;
    clr_check chk;
    clr_ref_reduce_to(CLR_SUM, CLR_FLOAT, h->v.type, h->data, h->n, &ref);
    clr_ref_check(&ref, &h->v, t.error_depth, &chk);
    return chk.ok;
  }
  if (what == T_SCAN) {
    clr_scan_check chk;
    clr_ref_scan_check(CLR_SUM, CLR_FLOAT, 0, h->data, h->out, h->n,
                       t.error_depth, &chk);
    return chk.ok;
  }
  return 1;
}

/* Median wall-clock ms of `repeat` runs after one warm-up (verified);
 * -1 when a run fails or the warm-up's answer is wrong. */
static double time_it(host_run *h, timed what, unsigned repeat, int *wrong) {
  double *ms = malloc(repeat * sizeof *ms);
  if (!ms || !run_once(h, what)) {
    free(ms);
    return -1;
  }
  if (!verify(h, what)) {
    *wrong = 1;
    free(ms);
    return -1;
  }
  for (unsigned r = 0; r < repeat; r++) {
    double t0 = now_ms();
    if (!run_once(h, what)) {
      free(ms);
      return -1;
    }
    ms[r] = now_ms() - t0;
  }
  double m = cli_median(ms, repeat);
  free(ms);
  return m;
}

static void print_row(const char *what, double ms, double bytes,
                      double ref_ms) {
  progress_clear();
  if (ms < 0) {
    printf("  %-44s %10s\n", what, "failed");
    return;
  }
  printf("  %-44s %10.3f %9.2f", what, ms, bytes / ms / 1e6);
  if (ref_ms > 0)
    printf(" %9.2f", ref_ms / ms);
  printf("\n");
}

static int set_threads(clr_context *ctx, unsigned threads) {
  clr_tuning t = CLR_TUNING_INIT;
  if (clr_get_tuning(ctx, &t) != CLR_OK)
    return 0;
  t.stage_threads = threads;
  return clr_set_tuning(ctx, &t) == CLR_OK;
}

int bench_host_paths(clr_context *ctx, const size_t *sizes, size_t n_sizes,
                     unsigned repeat) {
  cl_context cl = clr_context_cl_context(ctx);
  host_run h = {.ctx = ctx, .q = clr_context_queue(ctx)};
  clr_tuning tun = CLR_TUNING_INIT;
  clr_get_tuning(ctx, &tun);
  unsigned threads = tun.stage_threads;
  int rc = 0, wrong = 0;
  progress_clear();
  printf("\nhost arrays, float sum and inclusive scan: wall clock of whole "
         "copies and calls\n(stage.threads=%u, stage.block_kib=%u; ratio: "
         "the pinned copy's time over this one's)\n",
         threads, tun.stage_block_kib);
  for (size_t s = 0; s < n_sizes && rc == 0; s++) {
    cl_int err;
    cl_mem pin = NULL;
    h.n = sizes[s];
    size_t bytes = h.n * sizeof(float);
    float *out = malloc(bytes);
    h.data = malloc(bytes);
    h.dev = clCreateBuffer(cl, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (err == CL_SUCCESS)
      pin = clCreateBuffer(cl, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, bytes,
                           NULL, &err);
    if (err == CL_SUCCESS)
      h.pinned =
          clEnqueueMapBuffer(h.q, pin, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                             bytes, 0, NULL, NULL, &err);
    if (err != CL_SUCCESS || !h.data || !out) {
      progress_clear();
      fprintf(stderr, "clreduce-bench: --host n=%zu: cannot allocate (%d)\n",
              h.n, (int)err);
      rc = 3;
    } else {
      clr_gen_data(CLR_SUM, CLR_FLOAT, 42, h.data, h.n, NULL, 0);
      memcpy(h.pinned, h.data, bytes);
      progress_clear();
      printf("\n  n = %zu (%.1f MB)%*s %10s %9s %9s\n", h.n, bytes / 1e6, 14,
             "", "ms", "GB/s", "ratio");
      fflush(stdout);
      /* HOST_STEPS progress steps: the three copies, six memcpys, the
       * calls of clr_host_alloc memory, then of malloc'd memory staged
       * and direct. */
#define STEP(what) progress_step("--host n=%zu: %s", h.n, what)
      STEP("copy to device, from malloc'd memory");
      double wp = time_it(&h, T_WRITE_PAGEABLE, repeat, &wrong);
      STEP("copy to device, from pinned memory");
      double wq = time_it(&h, T_WRITE_PINNED, repeat, &wrong);
      STEP("copy from device, to pinned memory");
      double rq = time_it(&h, T_READ_PINNED, repeat, &wrong);
      print_row("copy to device, from malloc'd memory", wp, bytes, wq);
      print_row("copy to device, from pinned memory", wq, bytes, wq);
      print_row("copy from device, to pinned memory", rq, bytes, rq);
      for (unsigned t = 1; t <= 16; t *= 4) {
        char what[64];
        snprintf(what, sizeof what, "host memcpy, %u threads, into pinned", t);
        STEP(what);
        print_row(what, threaded_memcpy_ms(h.pinned, h.data, bytes, t, repeat),
                  bytes, wq);
        snprintf(what, sizeof what, "host memcpy, %u threads, out of pinned",
                 t);
        STEP(what);
        print_row(what, threaded_memcpy_ms(out, h.pinned, bytes, t, repeat),
                  bytes, wq);
      }
      memcpy(h.pinned, h.data, bytes);
      h.in = clr_host_alloc(ctx, bytes);
      h.out = clr_host_alloc(ctx, bytes);
      double ro = -1, so = -1;
      STEP("clr_reduce_host of clr_host_alloc memory");
      if (h.in && h.out) {
        memcpy(h.in, h.data, bytes);
        ro = time_it(&h, T_REDUCE, repeat, &wrong);
      }
      STEP("clr_scan_host, clr_host_alloc memory both");
      if (h.in && h.out)
        so = time_it(&h, T_SCAN, repeat, &wrong);
      clr_host_free(ctx, h.in);
      clr_host_free(ctx, h.out);
      h.in = h.data;
      h.out = out;
      STEP("clr_reduce_host, staged");
      double r1 = time_it(&h, T_REDUCE, repeat, &wrong);
      STEP("clr_scan_host, staged");
      double s1 = time_it(&h, T_SCAN, repeat, &wrong);
      set_threads(ctx, 0);
      STEP("clr_reduce_host, direct");
      double r0 = time_it(&h, T_REDUCE, repeat, &wrong);
      STEP("clr_scan_host, direct");
      double s0 = time_it(&h, T_SCAN, repeat, &wrong);
#undef STEP
      set_threads(ctx, threads);
      char what[64];
      snprintf(what, sizeof what, "clr_reduce_host, staged (%u threads)",
               threads);
      print_row(what, r1, bytes, wq);
      print_row("clr_reduce_host, direct (stage.threads=0)", r0, bytes, wq);
      print_row("clr_reduce_host of clr_host_alloc memory", ro, bytes, wq);
      /* A scan moves the array both ways: its yardstick is both copies. */
      snprintf(what, sizeof what, "clr_scan_host, staged (%u threads)",
               threads);
      print_row(what, s1, 2.0 * bytes, wq + rq);
      print_row("clr_scan_host, direct (stage.threads=0)", s0, 2.0 * bytes,
                wq + rq);
      print_row("clr_scan_host, clr_host_alloc memory both", so, 2.0 * bytes,
                wq + rq);
      if (wp < 0 || wq < 0 || rq < 0 || r1 < 0 || r0 < 0 || s1 < 0 || s0 < 0 ||
          ro < 0 || so < 0)
        rc = wrong ? 1 : 3;
    }
    if (h.pinned)
      clEnqueueUnmapMemObject(h.q, pin, h.pinned, 0, NULL, NULL);
    clFinish(h.q);
    if (pin)
      clReleaseMemObject(pin);
    if (h.dev)
      clReleaseMemObject(h.dev);
    free(h.data);
    free(out);
    h.data = h.in = h.out = h.pinned = NULL;
    h.dev = NULL;
  }
  progress_clear();
  if (wrong)
    fprintf(stderr, "clreduce-bench: --host: a result FAILED verification\n");
  return rc;
}

int bench_latency(clr_context *ctx, unsigned repeat, const char *label) {
  static const size_t sizes[] = {1000, 10000};
  cl_context cl = clr_context_cl_context(ctx);
  cl_command_queue q = clr_context_queue(ctx);
  double floor_us = 0;
  int rc = 0;
  if (repeat < 200)
    repeat = 200;
  if (clr_measure_call_floor(ctx, repeat, &floor_us) != CLR_OK) {
    fprintf(stderr, "clreduce-bench: clr_measure_call_floor: %s\n",
            clr_context_error(ctx));
    return 3;
  }
  printf("\nsmall calls, float sum, %s: wall clock of whole calls, median of "
         "%u\n",
         label, repeat);
  printf("  %-52s %9.1f us\n", "floor: one launch + blocking read of 8 bytes",
         floor_us);
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes && rc == 0; s++) {
    size_t n = sizes[s], bytes = n * sizeof(float);
    float *data = malloc(bytes);
    double *us = malloc(repeat * sizeof *us);
    cl_int err = CL_OUT_OF_HOST_MEMORY;
    cl_mem buf = NULL;
    if (data && us) {
      clr_gen_data(CLR_SUM, CLR_FLOAT, 7, data, n, NULL, 0);
      buf = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes,
                           data, &err);
    }
    for (int form = 0; form < 2 && err == CL_SUCCESS && rc == 0; form++) {
      clr_value v;
      clr_reference ref;
      clr_check chk;
      for (unsigned r = 0; r <= repeat && rc == 0; r++) {
        double t0 = now_ms();
        clr_status st = form == 0 ? clr_reduce_host(ctx, NULL, CLR_SUM,
                                                    CLR_FLOAT, data, n, &v)
                                  : clr_reduce_buffer(ctx, NULL, CLR_SUM,
                                                      CLR_FLOAT, buf, 0, n, &v);
        double t1 = now_ms();
        if (st != CLR_OK) {
          fprintf(stderr, "clreduce-bench: --latency: %s\n",
                  clr_context_error(ctx));
          rc = 3;
        } else if (r == 0) { /* warm-up: check it */
          clr_timing t = CLR_TIMING_INIT;
          clr_last_timing(ctx, &t);
          clr_ref_reduce_to(CLR_SUM, CLR_FLOAT, v.type, data, n, &ref);
          clr_ref_check(&ref, &v, t.error_depth, &chk);
          if (!chk.ok) {
            fprintf(stderr, "clreduce-bench: --latency n=%zu: FAILED\n", n);
            rc = 1;
          }
        } else {
          us[r - 1] = (t1 - t0) * 1e3;
        }
      }
      if (rc == 0) {
        char what[64];
        snprintf(what, sizeof what, "%s, n = %zu",
                 form ? "clr_reduce_buffer" : "clr_reduce_host", n);
        double m = cli_median(us, repeat);
        printf("  %-52s %9.1f us  (%.2fx the floor)\n", what, m, m / floor_us);
      }
    }
    if (err != CL_SUCCESS && rc == 0) {
      fprintf(stderr, "clreduce-bench: --latency: cannot allocate (%d)\n",
              (int)err);
      rc = 3;
    }
    if (buf)
      clReleaseMemObject(buf);
    clFinish(q);
    free(data);
    free(us);
  }
  return rc;
}
