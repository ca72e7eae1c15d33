/* A small SVG line plot: GB/s against n on a log axis, one line a series. */
#ifndef CLR_BENCH_PLOT_H
#define CLR_BENCH_PLOT_H

#include <stddef.h>
#include <stdio.h>

typedef struct plot_series {
  const char *name;
  const double *x; /* n */
  const double *y; /* GB/s; values <= 0 are skipped */
  size_t count;
  int dashed;
} plot_series;

/* Write the plot; 0 on success. */
int plot_svg(FILE *f, const char *title, const char *ylabel,
             const plot_series *series, size_t n_series);

#endif
