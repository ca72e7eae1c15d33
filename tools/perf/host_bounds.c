/* What bounds a malloc'd host array's trip to a GPU (run by
 * tools/perf/bounds-measure.sh, section "hostbounds"), in one process:
 *
 * - the host alone: T threads each read (sum) their share of 400 MB; T
 *   threads memcpy their shares into a pinned CL_MEM_ALLOC_HOST_PTR
 *   buffer; and T threads copy it in 3 MiB blocks taken as they come free
 *   into two pinned slots each (the pattern of src/lib/pinned.c at 5f4e382),
 *   for T = 1, 2, 4, 8, 10, 12, 14, 16: what the staging's copy can reach;
 * - the bus alone: one write of the 400 MB from that pinned buffer, and
 *   the same in 3 MiB writes from 24 pinned slots (no host copy);
 * - a route with no host copy: the caller's array wrapped in a
 *   CL_MEM_USE_HOST_PTR buffer (page-aligned, or as malloc gives it), then
 *   copied to a device buffer (clEnqueueCopyBuffer), with the wrap's
 *   create and release timed too, on a new array each time and on the
 *   same array again (a driver may keep a registration);
 * - clr_reduce_host of the malloc'd array (the staged call) and of a
 *   clr_host_alloc array, for reference, with the span of its writes on
 *   the device (first start to last end) and its kernel's time.
 * Wall clock, median of R runs after one warm-up.
 *   build/tools/perf/host_bounds [R] */
#include "measure_util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 100000000, MAX_T = 16, MAX_R = 50 };
static const size_t BYTES = (size_t)N * sizeof(float);

typedef struct share {
  const float *src;
  char *dst; /* NULL: read only */
  size_t n;
  double sum;
} share;

static void *work(void *arg) {
  share *s = arg;
  if (s->dst) {
    memcpy(s->dst, s->src, s->n * sizeof(float));
    return NULL;
  }
  float acc[8] = {0};
  for (size_t i = 0; i + 8 <= s->n; i += 8)
    for (int k = 0; k < 8; k++)
      acc[k] += s->src[i + k];
  for (int k = 0; k < 8; k++)
    s->sum += acc[k];
  return NULL;
}

/* The staging's own pattern without the bus: T threads take BLOCK-byte
 * blocks of the array as they come free (an atomic counter) and copy each
 * into the next of their two pinned slots, as src/lib/pinned.c did at 5f4e382
 * (it now copies the pieces of one larger block with every thread). */
enum { BLOCK = 3 << 20 };

typedef struct blocks {
  const char *src;
  char *slots;
  atomic_size_t next;
} blocks;

typedef struct blocks_worker {
  blocks *b;
  unsigned t;
} blocks_worker;

static void *copy_blocks(void *arg) {
  blocks_worker *w = arg;
  char *own = w->b->slots + (size_t)2 * w->t * BLOCK;
  for (size_t k = 0;; k++) {
    size_t i = atomic_fetch_add(&w->b->next, 1), at = i * BLOCK;
    if (at >= BYTES)
      return NULL;
    size_t len = BYTES - at < BLOCK ? BYTES - at : BLOCK;
    memcpy(own + (k & 1) * BLOCK, w->b->src + at, len);
  }
}

static double blocks_ms(const float *src, char *slots, unsigned t) {
  blocks b = {(const char *)src, slots, 0};
  blocks_worker w[MAX_T];
  pthread_t id[MAX_T];
  double t0 = mu_now_ms();
  for (unsigned i = 0; i < t; i++) {
    w[i] = (blocks_worker){&b, i};
    if (i > 0 && pthread_create(&id[i], NULL, copy_blocks, &w[i]) != 0)
      return -1;
  }
  copy_blocks(&w[0]);
  for (unsigned i = 1; i < t; i++)
    pthread_join(id[i], NULL);
  return mu_now_ms() - t0;
}

/* The bus's side of the same pattern: a write of each BLOCK from a ring
 * of 2 x 12 pinned slots (no host copy), then one wait. */
static double block_writes_ms(cl_command_queue q, cl_mem dev,
                              const char *slots) {
  double t0 = mu_now_ms();
  for (size_t at = 0, i = 0; at < BYTES; at += BLOCK, i++) {
    size_t len = BYTES - at < BLOCK ? BYTES - at : BLOCK;
    if (clEnqueueWriteBuffer(q, dev, CL_FALSE, at, len,
                             slots + (i % 24) * BLOCK, 0, NULL,
                             NULL) != CL_SUCCESS)
      return -1;
  }
  return clFinish(q) == CL_SUCCESS ? mu_now_ms() - t0 : -1;
}

/* T threads over the array: a read, or a memcpy into dst; ms. */
static double threads_ms(const float *src, char *dst, unsigned t) {
  share s[MAX_T];
  pthread_t id[MAX_T];
  double t0 = mu_now_ms();
  size_t per = N / t;
  for (unsigned i = 0; i < t; i++) {
    s[i] = (share){src + i * per, dst ? dst + i * per * sizeof(float) : NULL,
                   i + 1 == t ? N - i * per : per, 0};
    if (i > 0 && pthread_create(&id[i], NULL, work, &s[i]) != 0)
      return -1;
  }
  work(&s[0]);
  for (unsigned i = 1; i < t; i++)
    pthread_join(id[i], NULL);
  return mu_now_ms() - t0;
}

/* The USE_HOST_PTR route for one array: wrap, copy to dev, release; the
 * three wall times added to the arrays at r. */
static int wrapped(cl_context cl, cl_command_queue q, cl_mem dev, float *a,
                   double *create, double *copy, double *release, size_t r) {
  cl_int err;
  double t0 = mu_now_ms();
  cl_mem w = clCreateBuffer(cl, CL_MEM_USE_HOST_PTR | CL_MEM_READ_ONLY, BYTES,
                            a, &err);
  double t1 = mu_now_ms();
  if (!mu_check("host_bounds", err, "clCreateBuffer(USE_HOST_PTR)"))
    return 0;
  err = clEnqueueCopyBuffer(q, w, dev, 0, 0, BYTES, 0, NULL, NULL);
  if (err == CL_SUCCESS)
    err = clFinish(q);
  double t2 = mu_now_ms();
  clReleaseMemObject(w);
  clFinish(q);
  double t3 = mu_now_ms();
  create[r] = t1 - t0;
  copy[r] = t2 - t1;
  release[r] = t3 - t2;
  return mu_check("host_bounds", err, "clEnqueueCopyBuffer");
}

int main(int argc, char **argv) {
  size_t reps = argc > 1 ? strtoul(argv[1], NULL, 10) : 10;
  if (reps < 1 || reps > MAX_R)
    reps = 10;
  clr_context *ctx = mu_context("host_bounds");
  if (!ctx)
    return 1;
  cl_context cl = clr_context_cl_context(ctx);
  cl_command_queue q = clr_context_queue(ctx);
  cl_int err;
  float *a = malloc(BYTES), *aligned = NULL;
  double ms[3][MAX_R];
  int rc = 1;
  cl_mem dev = clCreateBuffer(cl, CL_MEM_READ_WRITE, BYTES, NULL, &err);
  cl_mem pin = NULL;
  float *pinned = NULL;
  if (!mu_check("host_bounds", err, "clCreateBuffer") || !a ||
      posix_memalign((void **)&aligned, 4096, BYTES) != 0)
    goto done;
  pin = clCreateBuffer(cl, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, BYTES,
                       NULL, &err);
  if (!mu_check("host_bounds", err, "clCreateBuffer(ALLOC_HOST_PTR)"))
    goto done;
  pinned = clEnqueueMapBuffer(q, pin, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                              BYTES, 0, NULL, NULL, &err);
  if (!mu_check("host_bounds", err, "clEnqueueMapBuffer"))
    goto done;
  for (size_t i = 0; i < N; i++)
    a[i] = aligned[i] = pinned[i] = 1.0f;
  printf("400 MB of floats; wall clock, median of %zu\n", reps);

  for (size_t r = 0; r <= reps; r++) {
    double t0 = mu_now_ms();
    if (!mu_check("host_bounds",
                  clEnqueueWriteBuffer(q, dev, CL_TRUE, 0, BYTES, pinned, 0,
                                       NULL, NULL),
                  "clEnqueueWriteBuffer"))
      goto done;
    if (r > 0)
      ms[0][r - 1] = mu_now_ms() - t0;
  }
  double bus = mu_median(ms[0], reps);
  printf("pinned write to the device: %.3f ms (%.1f GB/s)\n", bus,
         BYTES / bus / 1e6);

  static const unsigned ts[] = {1, 2, 4, 8, 10, 12, 14, 16};
  for (size_t r = 0; r <= reps; r++) {
    double w = block_writes_ms(q, dev, (const char *)pinned);
    if (w < 0)
      goto done;
    if (r > 0)
      ms[0][r - 1] = w;
  }
  double bw = mu_median(ms[0], reps);
  printf("the same in 3 MiB writes from 24 pinned slots: %.3f ms (%.2f of "
         "one write)\n",
         bw, bus / bw);

  printf("%8s %10s %7s %15s %7s %7s %15s %7s %7s\n", "threads", "read ms",
         "GB/s", "memcpy->pin ms", "GB/s", "of bus", "3 MiB blocks ms", "GB/s",
         "of bus");
  for (size_t k = 0; k < sizeof ts / sizeof *ts; k++) {
    for (size_t r = 0; r <= reps; r++) {
      double rd = threads_ms(a, NULL, ts[k]);
      double cp = threads_ms(a, (char *)pinned, ts[k]);
      double bl = blocks_ms(a, (char *)pinned, ts[k]);
      if (rd < 0 || cp < 0 || bl < 0)
        goto done;
      if (r > 0) {
        ms[0][r - 1] = rd;
        ms[1][r - 1] = cp;
        ms[2][r - 1] = bl;
      }
    }
    double rd = mu_median(ms[0], reps), cp = mu_median(ms[1], reps),
           bl = mu_median(ms[2], reps);
    printf("%8u %10.3f %7.1f %15.3f %7.1f %7.2f %15.3f %7.1f %7.2f\n", ts[k],
           rd, BYTES / rd / 1e6, cp, BYTES / cp / 1e6, bus / cp, bl,
           BYTES / bl / 1e6, bus / bl);
  }

  struct {
    const char *what;
    float *arr;
  } wraps[] = {{"malloc'd", a}, {"page-aligned", aligned}};
  for (int w = 0; w < 2; w++) {
    for (size_t r = 0; r <= reps; r++)
      if (!wrapped(cl, q, dev, wraps[w].arr, ms[0], ms[1], ms[2],
                   r > 0 ? r - 1 : 0))
        goto done;
    double c = mu_median(ms[0], reps), y = mu_median(ms[1], reps),
           x = mu_median(ms[2], reps);
    printf("USE_HOST_PTR, %s array, the same one again: create %.3f, copy "
           "%.3f, release %.3f ms; all %.3f (%.2f of the bus)\n",
           wraps[w].what, c, y, x, c + y + x, bus / (c + y + x));
  }
  /* A new array each time: the driver cannot reuse a registration. */
  for (size_t r = 0; r <= reps && r < 4; r++) {
    float *f = NULL;
    if (posix_memalign((void **)&f, 4096, BYTES) != 0)
      goto done;
    memcpy(f, a, BYTES);
    int ok = wrapped(cl, q, dev, f, ms[0], ms[1], ms[2], r);
    free(f);
    if (!ok)
      goto done;
    printf("USE_HOST_PTR, a new page-aligned array (%zu): create %.3f, copy "
           "%.3f, release %.3f ms\n",
           r, ms[0][r], ms[1][r], ms[2][r]);
  }

  float *h = clr_host_alloc(ctx, BYTES);
  if (!h) {
    fprintf(stderr, "host_bounds: clr_host_alloc: %s\n",
            clr_context_error(ctx));
    goto done;
  }
  memcpy(h, a, BYTES);
  struct {
    const char *what;
    float *arr;
  } calls[] = {{"malloc'd (staged)", a}, {"clr_host_alloc", h}};
  for (int c = 0; c < 2; c++) {
    for (size_t r = 0; r <= reps; r++) {
      clr_value v;
      double t0 = mu_now_ms();
      if (clr_reduce_host(ctx, NULL, CLR_SUM, CLR_FLOAT, calls[c].arr, N, &v) !=
          CLR_OK) {
        fprintf(stderr, "host_bounds: %s\n", clr_context_error(ctx));
        goto done;
      }
      clr_timing tm = CLR_TIMING_INIT;
      if (r > 0) {
        ms[0][r - 1] = mu_now_ms() - t0;
        clr_last_timing(ctx, &tm);
        ms[1][r - 1] = tm.h2d_ms;
        ms[2][r - 1] = tm.kernel_ms;
      }
      if (v.v.f < 0.99999f * N || v.v.f > 1.00001f * N) {
        fprintf(stderr, "host_bounds: wrong sum %g\n", (double)v.v.f);
        goto done;
      }
    }
    double m = mu_median(ms[0], reps), h2d = mu_median(ms[1], reps),
           kern = mu_median(ms[2], reps);
    printf("clr_reduce_host, %s: %.3f ms (%.2f of the bus); its writes' span "
           "%.3f ms, kernel %.3f ms\n",
           calls[c].what, m, bus / m, h2d, kern);
  }
  clr_host_free(ctx, h);
  rc = 0;
done:
  if (pinned)
    clEnqueueUnmapMemObject(q, pin, pinned, 0, NULL, NULL);
  clFinish(q);
  if (pin)
    clReleaseMemObject(pin);
  if (dev)
    clReleaseMemObject(dev);
  free(a);
  free(aligned);
  clr_context_release(ctx);
  return rc;
}
