/* SVG writer for the benchmark's plot.  Plain SVG 1.1, no dependencies:
 * log10 x axis (n), linear or log10 y axis (GB/s), a legend, gridlines. */
#include "plot.h"

#include <math.h>

#define W 900.0
#define H 560.0
#define LEFT 80.0
#define RIGHT 220.0
#define TOP 50.0
#define BOTTOM 60.0

/* Tableau's ten, then six darker ones far from each of them: a colour a
 * series for every entry the bench can plot (bench.c checks the count). */
static const char *const colours[PLOT_COLOURS] = {
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
    "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#000000", "#393b79",
    "#843c39", "#e7ba52", "#7b4173", "#00675b"};

static void escape(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '<')
      fputs("&lt;", f);
    else if (*s == '>')
      fputs("&gt;", f);
    else if (*s == '&')
      fputs("&amp;", f);
    else
      fputc(*s, f);
  }
}

/* The smallest and largest positive y of points with a positive x. */
static void y_range(const plot_series *series, size_t n_series, double *lo,
                    double *hi) {
  *lo = INFINITY;
  *hi = 0.0;
  for (size_t s = 0; s < n_series; s++)
    for (size_t i = 0; i < series[s].count; i++)
      if (series[s].y[i] > 0 && series[s].x[i] > 0) {
        *lo = fmin(*lo, series[s].y[i]);
        *hi = fmax(*hi, series[s].y[i]);
      }
}

plot_scale plot_auto_scale(const plot_series *series, size_t n_series) {
  double lo, hi;
  y_range(series, n_series, &lo, &hi);
  return hi > 0 && log10(hi / lo) > PLOT_AUTO_DECADES ? PLOT_Y_LOG
                                                      : PLOT_Y_LINEAR;
}

/* The dash pattern of series s: the dashed ones', and a pattern of their
 * own for series past the palette, so no two look alike. */
static const char *dashes(const plot_series *series, size_t s) {
  if (series[s].dashed)
    return " stroke-dasharray=\"6,4\"";
  return s >= PLOT_COLOURS ? " stroke-dasharray=\"2,3\"" : "";
}

int plot_svg(FILE *f, const char *title, const char *ylabel,
             const plot_series *series, size_t n_series, plot_scale scale) {
  double xmin = INFINITY, xmax = -INFINITY, ylo, yhi;
  for (size_t s = 0; s < n_series; s++)
    for (size_t i = 0; i < series[s].count; i++) {
      if (series[s].y[i] <= 0 || series[s].x[i] <= 0)
        continue;
      xmin = fmin(xmin, log10(series[s].x[i]));
      xmax = fmax(xmax, log10(series[s].x[i]));
    }
  if (!(xmax > xmin)) {
    xmin = 0;
    xmax = 1;
  }
  xmin = floor(xmin);
  xmax = ceil(xmax);
  y_range(series, n_series, &ylo, &yhi);
  if (scale == PLOT_Y_AUTO)
    scale = plot_auto_scale(series, n_series);
  int log_y = scale == PLOT_Y_LOG;
  /* Linear: from 0 to a round top, 1, 2 or 5 times a power of ten per
   * gridline.  Log: whole decades around the values, a gridline each. */
  double ymax = yhi > 0 ? yhi : 1.0;
  double step = pow(10.0, floor(log10(ymax)));
  if (ymax / step < 2)
    step /= 5;
  else if (ymax / step < 5)
    step /= 2;
  double ytop = ceil(ymax / step) * step;
  double dlo = floor(log10(yhi > 0 ? ylo : 1.0));
  double dhi = ceil(log10(ymax));
  if (!(dhi > dlo))
    dhi = dlo + 1;
  double pw = W - LEFT - RIGHT, ph = H - TOP - BOTTOM;
#define PX(v) (LEFT + ((v)-xmin) / (xmax - xmin) * pw)
#define PY(v)                                                                  \
  (log_y ? TOP + ph - (log10(v) - dlo) / (dhi - dlo) * ph                      \
         : TOP + ph - (v) / ytop * ph)
  fprintf(f,
          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
          "height=\"%.0f\" font-family=\"sans-serif\" font-size=\"13\">\n"
          "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
          "<text x=\"%.0f\" y=\"28\" font-size=\"16\">",
          W, H, LEFT);
  escape(f, title);
  fputs("</text>\n", f);
  for (double d = xmin; d <= xmax + 1e-9; d += 1.0)
    fprintf(f,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
            "stroke=\"#ddd\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
            "text-anchor=\"middle\">1e%.0f</text>\n",
            PX(d), TOP, PX(d), TOP + ph, PX(d), TOP + ph + 20, d);
  if (log_y) {
    for (double d = dlo; d <= dhi + 1e-9; d += 1.0) {
      double v = pow(10.0, d);
      fprintf(f,
              "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
              "stroke=\"#ddd\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
              "text-anchor=\"end\">%g</text>\n",
              LEFT, PY(v), LEFT + pw, PY(v), LEFT - 8, PY(v) + 4, v);
      /* 2 and 5 times the decade, fainter. */
      for (int m = 2; m <= 5 && d < dhi - 1e-9; m += 3)
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                "stroke=\"#f0f0f0\"/>\n",
                LEFT, PY(m * v), LEFT + pw, PY(m * v));
    }
  } else {
    for (double v = 0; v <= ytop + 1e-9; v += step)
      fprintf(f,
              "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
              "stroke=\"#ddd\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
              "text-anchor=\"end\">%g</text>\n",
              LEFT, PY(v), LEFT + pw, PY(v), LEFT - 8, PY(v) + 4, v);
  }
  fprintf(f,
          "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">n "
          "(elements)</text>\n"
          "<text transform=\"translate(20,%.1f) rotate(-90)\" "
          "text-anchor=\"middle\">",
          LEFT + pw / 2, H - 15, TOP + ph / 2);
  escape(f, ylabel);
  fprintf(f, "%s</text>\n", log_y ? ", log scale" : "");
  fprintf(f,
          "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
          "fill=\"none\" stroke=\"#444\"/>\n",
          LEFT, TOP, pw, ph);
  for (size_t s = 0; s < n_series; s++) {
    const char *c = colours[s % PLOT_COLOURS];
    fprintf(f,
            "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s "
            "points=\"",
            c, dashes(series, s));
    for (size_t i = 0; i < series[s].count; i++)
      if (series[s].y[i] > 0 && series[s].x[i] > 0)
        fprintf(f, "%.1f,%.1f ", PX(log10(series[s].x[i])), PY(series[s].y[i]));
    fputs("\"/>\n", f);
    for (size_t i = 0; i < series[s].count; i++)
      if (series[s].y[i] > 0 && series[s].x[i] > 0)
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n",
                PX(log10(series[s].x[i])), PY(series[s].y[i]), c);
    double ly = TOP + 10 + 22.0 * (double)s;
    fprintf(f,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
            "stroke=\"%s\" stroke-width=\"2\"%s/>\n<text x=\"%.1f\" "
            "y=\"%.1f\">",
            W - RIGHT + 15, ly, W - RIGHT + 45, ly, c, dashes(series, s),
            W - RIGHT + 52, ly + 4);
    escape(f, series[s].name);
    fputs("</text>\n", f);
  }
  fputs("</svg>\n", f);
#undef PX
#undef PY
  return ferror(f) ? -1 : 0;
}
