/* Shared by the measuring programs in scripts/ (resident_sizes.c,
 * host_bounds.c): the median of a run's times, and a context on the
 * default device with the reason printed when there is none. */
#ifndef CLR_MEASURE_UTIL_H
#define CLR_MEASURE_UTIL_H

#include <clreduce.h>

#include <stdio.h>
#include <stdlib.h>

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

#endif
