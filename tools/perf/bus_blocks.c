/* What the bus does with a staged write's commands, with no staging:
 * 400 MB written to the device from pinned memory in blocks of 3 .. 48 MiB
 * (four pinned slots, every command enqueued at once), on one in-order
 * queue or alternating over two, against one write of the whole; then the
 * 12 MiB blocks again while 15 host threads copy another 400 MB array
 * into ordinary memory (the host's memory as busy as the staging's copy
 * keeps it).  Wall clock, median of R (argument 1, default 7).
 *   build/tools/perf/bus_blocks [R]
 * (tools/perf/bounds-measure.sh SECTIONS=busblocks runs it.) */
#define _POSIX_C_SOURCE 200809L
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include "measure_util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define BYTES ((size_t)400000000)
#define MAX_R 31
#define COPIERS 15
#define SCRATCH ((size_t)48 << 20)

/* BYTES in blocks of `block` from four slots of `pinned`, alternating over
 * queues q[0, nq); ms, or -1. */
static double blocks_ms(cl_command_queue *q, int nq, cl_mem dev,
                        const char *pinned, size_t block) {
  double t0 = mu_now_ms();
  for (size_t at = 0, i = 0; at < BYTES; at += block, i++) {
    size_t len = BYTES - at < block ? BYTES - at : block;
    if (clEnqueueWriteBuffer(q[i % nq], dev, CL_FALSE, at, len,
                             pinned + (i % 4) * block, 0, NULL,
                             NULL) != CL_SUCCESS)
      return -1;
  }
  for (int k = 0; k < nq; k++)
    clFlush(q[k]);
  for (int k = 0; k < nq; k++)
    if (clFinish(q[k]) != CL_SUCCESS)
      return -1;
  return mu_now_ms() - t0;
}

typedef struct copier {
  const char *src;
  char *dst;
  atomic_int *stop;
  unsigned index;
} copier;

/* Copy 3 MiB pieces of the source into the scratch until told to stop. */
static void *copy_loop(void *arg) {
  copier *c = arg;
  size_t piece = (size_t)3 << 20, at = c->index * piece;
  while (!atomic_load(c->stop)) {
    if (at + piece > BYTES)
      at = c->index * piece % (BYTES - piece);
    memcpy(c->dst + at % (SCRATCH - piece), c->src + at, piece);
    at += COPIERS * piece;
  }
  return NULL;
}

int main(int argc, char **argv) {
  size_t reps = argc > 1 ? strtoul(argv[1], NULL, 10) : 7;
  if (reps < 1 || reps > MAX_R)
    reps = 7;
  clr_context *ctx = mu_context("bus_blocks");
  if (!ctx)
    return 1;
  cl_context cl = clr_context_cl_context(ctx);
  cl_command_queue q[2] = {clr_context_queue(ctx), NULL};
  cl_device_id device;
  cl_int err;
  int rc = 1;
  double ms[MAX_R];
  char *src = malloc(BYTES), *scratch = malloc(SCRATCH), *pinned = NULL;
  cl_mem dev = clCreateBuffer(cl, CL_MEM_READ_WRITE, BYTES, NULL, &err);
  cl_mem pin = NULL;
  if (!mu_check("bus_blocks", err, "clCreateBuffer") || !src || !scratch ||
      !mu_check("bus_blocks",
                clGetCommandQueueInfo(q[0], CL_QUEUE_DEVICE, sizeof device,
                                      &device, NULL),
                "clGetCommandQueueInfo"))
    goto done;
  q[1] = clCreateCommandQueue(cl, device, 0, &err);
  if (!mu_check("bus_blocks", err, "clCreateCommandQueue"))
    goto done;
  pin = clCreateBuffer(cl, CL_MEM_ALLOC_HOST_PTR, BYTES, NULL, &err);
  if (!mu_check("bus_blocks", err, "clCreateBuffer(ALLOC_HOST_PTR)"))
    goto done;
  pinned = clEnqueueMapBuffer(q[0], pin, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                              BYTES, 0, NULL, NULL, &err);
  if (!mu_check("bus_blocks", err, "clEnqueueMapBuffer"))
    goto done;
  memset(pinned, 1, BYTES);
  memset(src, 2, BYTES);
  memset(scratch, 3, SCRATCH);
  printf("400 MB from pinned memory; wall clock, median of %zu\n", reps);

  for (size_t r = 0; r <= reps; r++) {
    double w = blocks_ms(q, 1, dev, pinned, BYTES);
    if (w < 0)
      goto done;
    if (r > 0)
      ms[r - 1] = w;
  }
  double one = mu_median(ms, reps);
  printf("one write: %.3f ms (%.1f GB/s)\n", one, BYTES / one / 1e6);

  static const size_t mib[] = {3, 12, 24, 48};
  for (size_t b = 0; b < sizeof mib / sizeof *mib; b++)
    for (int nq = 1; nq <= 2; nq++) {
      for (size_t r = 0; r <= reps; r++) {
        double w = blocks_ms(q, nq, dev, pinned, mib[b] << 20);
        if (w < 0)
          goto done;
        if (r > 0)
          ms[r - 1] = w;
      }
      double t = mu_median(ms, reps);
      printf("%2zu MiB blocks, %d queue%s: %.3f ms (%.1f GB/s, %.3f of one "
             "write)\n",
             mib[b], nq, nq > 1 ? "s" : " ", t, BYTES / t / 1e6, one / t);
    }

  /* The 12 MiB blocks while the host's memory is busy. */
  atomic_int stop;
  atomic_init(&stop, 0);
  copier c[COPIERS];
  pthread_t id[COPIERS];
  unsigned started = 0;
  for (unsigned i = 0; i < COPIERS; i++) {
    c[i] = (copier){src, scratch, &stop, i};
    if (pthread_create(&id[i], NULL, copy_loop, &c[i]) != 0)
      break;
    started++;
  }
  for (int nq = 1; nq <= 2; nq++) {
    for (size_t r = 0; r <= reps; r++) {
      double w = blocks_ms(q, nq, dev, pinned, (size_t)12 << 20);
      if (w < 0)
        break;
      if (r > 0)
        ms[r - 1] = w;
    }
    double t = mu_median(ms, reps);
    printf("12 MiB blocks, %d queue%s, %u threads copying meanwhile: %.3f ms "
           "(%.1f GB/s, %.3f of one write)\n",
           nq, nq > 1 ? "s" : " ", started, t, BYTES / t / 1e6, one / t);
  }
  atomic_store(&stop, 1);
  for (unsigned i = 0; i < started; i++)
    pthread_join(id[i], NULL);
  rc = 0;

done:
  if (pinned)
    clEnqueueUnmapMemObject(q[0], pin, pinned, 0, NULL, NULL);
  clFinish(q[0]);
  if (q[1])
    clReleaseCommandQueue(q[1]);
  if (pin)
    clReleaseMemObject(pin);
  if (dev)
    clReleaseMemObject(dev);
  free(src);
  free(scratch);
  clr_context_release(ctx);
  return rc;
}
