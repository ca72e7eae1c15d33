/* The progress line (progress.h). */
#include "progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static struct {
  int on, tty, drawn;
  size_t total, done;
  struct timespec t0;
} p;

static double elapsed_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - p.t0.tv_sec) +
         (double)(t.tv_nsec - p.t0.tv_nsec) / 1e9;
}

void progress_start(size_t total, int forced) {
  p.tty = isatty(STDERR_FILENO);
  p.on = total > 0 && (forced || p.tty);
  p.drawn = 0;
  p.total = total;
  p.done = 0;
  clock_gettime(CLOCK_MONOTONIC, &p.t0);
}

void progress_clear(void) {
  if (!p.on || !p.drawn)
    return;
  /* A terminal: back to the start of the line and erase it.  A file or a
   * pipe (--progress): the line ends, so what follows starts its own. */
  fputs(p.tty ? "\r\033[K" : "\n", stderr);
  fflush(stderr);
  p.drawn = 0;
}

void progress_step(const char *fmt, ...) {
  if (!p.on)
    return;
  char what[160];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (p.done < p.total)
    p.done++;
  fprintf(stderr, "\r%s[%zu/%zu] %s, %.1f s elapsed", p.tty ? "\033[K" : "",
          p.done, p.total, what, elapsed_s());
  fflush(stderr);
  p.drawn = 1;
}

void progress_end(void) {
  if (!p.on)
    return;
  fprintf(stderr, "\r%s[%zu/%zu] done, %.1f s\n", p.tty ? "\033[K" : "", p.done,
          p.total, elapsed_s());
  fflush(stderr);
  p.drawn = 0;
  p.on = 0;
}
