/* Shared by the measuring programs in tools/perf/ (resident_sizes.c,
 * host_bounds.c, host_cold.c, bus_blocks.c, stage-trace/driver.c): the
 * wall clock, the median of a run's times, a context on the default
 * device with the reason printed when there is none, and an OpenCL call's
 * status checked. */
#ifndef CLR_MEASURE_UTIL_H
#define CLR_MEASURE_UTIL_H

#include <clreduce.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Wall clock in ms (CLOCK_MONOTONIC). */
static inline double mu_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int mu_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The median of v[0, n) (v is sorted). */
static inline double mu_median(double *v, size_t n) {
  qsort(v, n, sizeof *v, mu_cmp);
  return v[n / 2];
}

/* A context on the default device, or NULL with the reason on stderr
 * after `prog: `. */
static inline clr_context *mu_context(const char *prog) {
  clr_context *ctx = NULL;
  char detail[256];
  if (clr_context_create(NULL, &ctx, detail, sizeof detail) != CLR_OK) {
    fprintf(stderr, "%s: %s\n", prog, detail);
    return NULL;
  }
  return ctx;
}

/* 1 when err is CL_SUCCESS; else 0, with `prog: what failed (err)` on
 * stderr. */
static inline int mu_check(const char *prog, cl_int err, const char *what) {
  if (err != CL_SUCCESS)
    fprintf(stderr, "%s: %s failed (%d)\n", prog, what, (int)err);
  return err == CL_SUCCESS;
}

#endif
