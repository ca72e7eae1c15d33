/* SVG writer for the benchmark's plot.  Plain SVG 1.1, no dependencies:
 * log10 x axis (n), linear y axis (GB/s), a legend, gridlines. */
#include "plot.h"

#include <math.h>

#define W 900.0
#define H 560.0
#define LEFT 80.0
#define RIGHT 220.0
#define TOP 50.0
#define BOTTOM 60.0

static const char *const colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c",
                                      "#d62728", "#9467bd", "#8c564b",
                                      "#e377c2", "#7f7f7f", "#17becf"};

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

int plot_svg(FILE *f, const char *title, const char *ylabel,
             const plot_series *series, size_t n_series) {
  double xmin = INFINITY, xmax = -INFINITY, ymax = 0.0;
  for (size_t s = 0; s < n_series; s++)
    for (size_t i = 0; i < series[s].count; i++) {
      if (series[s].y[i] <= 0 || series[s].x[i] <= 0)
        continue;
      xmin = fmin(xmin, log10(series[s].x[i]));
      xmax = fmax(xmax, log10(series[s].x[i]));
      ymax = fmax(ymax, series[s].y[i]);
    }
  if (!(xmax > xmin)) {
    xmin = 0;
    xmax = 1;
  }
  xmin = floor(xmin);
  xmax = ceil(xmax);
  /* A round y range: 1, 2 or 5 times a power of ten per gridline. */
  double step = pow(10.0, floor(log10(ymax > 0 ? ymax : 1.0)));
  if (ymax / step < 2)
    step /= 5;
  else if (ymax / step < 5)
    step /= 2;
  double ytop = ceil((ymax > 0 ? ymax : 1.0) / step) * step;
  double pw = W - LEFT - RIGHT, ph = H - TOP - BOTTOM;
#define PX(v) (LEFT + ((v)-xmin) / (xmax - xmin) * pw)
#define PY(v) (TOP + ph - (v) / ytop * ph)
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
  for (double v = 0; v <= ytop + 1e-9; v += step)
    fprintf(f,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
            "stroke=\"#ddd\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
            "text-anchor=\"end\">%g</text>\n",
            LEFT, PY(v), LEFT + pw, PY(v), LEFT - 8, PY(v) + 4, v);
  fprintf(f,
          "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">n "
          "(elements)</text>\n"
          "<text transform=\"translate(20,%.1f) rotate(-90)\" "
          "text-anchor=\"middle\">",
          LEFT + pw / 2, H - 15, TOP + ph / 2);
  escape(f, ylabel);
  fputs("</text>\n", f);
  fprintf(f,
          "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
          "fill=\"none\" stroke=\"#444\"/>\n",
          LEFT, TOP, pw, ph);
  for (size_t s = 0; s < n_series; s++) {
    const char *c = colours[s % (sizeof colours / sizeof *colours)];
    fprintf(f,
            "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s "
            "points=\"",
            c, series[s].dashed ? " stroke-dasharray=\"6,4\"" : "");
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
            W - RIGHT + 15, ly, W - RIGHT + 45, ly, c,
            series[s].dashed ? " stroke-dasharray=\"6,4\"" : "", W - RIGHT + 52,
            ly + 4);
    escape(f, series[s].name);
    fputs("</text>\n", f);
  }
  fputs("</svg>\n", f);
#undef PX
#undef PY
  return ferror(f) ? -1 : 0;
}
