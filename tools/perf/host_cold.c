/* clr_reduce_host of a malloc'd float array, warm and cold, by size: the
 * staged write's cost when the array is in the host's cache (the call
 * before read it) and when it is not (1 GiB read between calls).  Seven
 * calls each, median (min-max), wall clock; every answer is checked.
 *   build/tools/perf/host_cold
 * (tools/perf/bounds-measure.sh SECTIONS=hostcold runs it.) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "measure_util.h"

#include <string.h>
#include <unistd.h>

/* Read 1 GiB, so that no part of the array stays in the cache. */
#define FLUSH ((size_t)1 << 30)
static volatile unsigned long sink;
static void flush(const unsigned long *f) {
  unsigned long s = 0;
  for (size_t i = 0; i < FLUSH / sizeof *f; i += 8)
    s += f[i];
  sink = s;
}

int main(void) {
  clr_context *ctx = mu_context("host_cold");
  if (!ctx)
    return 1;
  unsigned long *f = malloc(FLUSH);
  if (!f)
    return 1;
  memset(f, 1, FLUSH);
  static const size_t sizes[] = {1000000,  3000000,  10000000, 30000000,
                                 50000000, 70000000, 100000000};
  printf("host L3: %ld bytes\n", sysconf(_SC_LEVEL3_CACHE_SIZE));
  for (size_t k = 0; k < 7; k++) {
    size_t n = sizes[k];
    float *a = malloc(n * sizeof *a);
    if (!a)
      return 1;
    for (size_t i = 0; i < n; i++)
      a[i] = 1.0f;
    clr_value v;
    double w[7], c[7];
    clr_reduce_host(ctx, NULL, CLR_SUM, CLR_FLOAT, a, n, &v);
    for (int r = 0; r < 7; r++) {
      double t0 = mu_now_ms();
      clr_reduce_host(ctx, NULL, CLR_SUM, CLR_FLOAT, a, n, &v);
      w[r] = mu_now_ms() - t0;
    }
    for (int r = 0; r < 7; r++) {
      flush(f);
      double t0 = mu_now_ms();
      clr_reduce_host(ctx, NULL, CLR_SUM, CLR_FLOAT, a, n, &v);
      c[r] = mu_now_ms() - t0;
    }
    if (v.v.f != (float)n) {
      printf("host_cold: n %zu: sum %g, want %zu\n", n, v.v.f, n);
      return 1;
    }
    double wm = mu_median(w, 7), cm = mu_median(c, 7);
    printf("n %9zu warm %.3f (%.3f-%.3f) cold %.3f (%.3f-%.3f) ms\n", n, wm,
           w[0], w[6], cm, c[0], c[6]);
    free(a);
  }
  clr_context_release(ctx);
  free(f);
  return 0;
}
