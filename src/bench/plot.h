/* A small SVG line plot: GB/s against n on a log axis, one line a series,
 * each in its own colour; the y axis linear or logarithmic. */
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

typedef enum plot_scale {
  PLOT_Y_AUTO,   /* log when the values span more than PLOT_AUTO_DECADES */
  PLOT_Y_LINEAR, /* from 0                                               */
  PLOT_Y_LOG,    /* whole decades                                        */
} plot_scale;

#define PLOT_AUTO_DECADES 2.0
/* Distinct colours (plot.c's palette): series beyond them would repeat
 * one, with a dash pattern of their own. */
#define PLOT_COLOURS 16

/* The scale PLOT_Y_AUTO picks for these series (LINEAR or LOG). */
plot_scale plot_auto_scale(const plot_series *series, size_t n_series);

/* Write the plot; 0 on success. */
int plot_svg(FILE *f, const char *title, const char *ylabel,
             const plot_series *series, size_t n_series, plot_scale scale);

#endif
