/* Host arrays to and from a device that does not share the host's memory,
 * at the bus's speed.
 *
 * A transfer from ordinary (pageable) host memory goes through the
 * driver's own bounce buffer: about 7.5 GB/s on an H100's PCIe 5 link,
 * where a transfer from page-locked (pinned) memory runs at 50+ GB/s.  So
 * the context keeps a few pinned blocks (CL_MEM_ALLOC_HOST_PTR buffers,
 * mapped once) and moves a large transfer through them block by block:
 * while the device copies block k, the host fills block k + 1.  One host
 * thread's memcpy (~10 GB/s) would then be the bottleneck, so several
 * threads work at once, each with two blocks of its own:
 *
 *   to the device:   memcpy(block, host) -> clEnqueueWriteBuffer(block)
 *   from the device: clEnqueueReadBuffer(block) -> wait -> memcpy(host)
 *
 * Every command goes to the context's in-order queue (OpenCL calls are
 * thread-safe from 1.1 on), so a kernel enqueued after a staged write
 * reads the whole array.  The number of threads and the block size are
 * tuning keys (stage.threads, stage.block_kib); stage.threads = 0 turns
 * this off: one direct write from the host array, as before.
 *
 * The transfer's time is the profiling span of its commands, from the
 * first one's start to the last one's end: the time the device's copy
 * engine was busy or waiting for the host, which is what the caller
 * waits for. */
#include "internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ the blocks */

/* A page-locked buffer of `bytes`, mapped for the host: *mem and *ptr, or
 * both NULL and the failure recorded. */
static clr_status map_pinned(clr_context *ctx, size_t bytes, cl_mem *mem,
                             void **ptr) {
  cl_int err;
  *ptr = NULL;
  *mem = clCreateBuffer(ctx->cl, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE,
                        bytes, NULL, &err);
  if (err != CL_SUCCESS) {
    *mem = NULL;
    return clr_cl_fail(ctx, "clCreateBuffer", err);
  }
  *ptr =
      clEnqueueMapBuffer(ctx->queue, *mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE,
                         0, bytes, 0, NULL, NULL, &err);
  if (err != CL_SUCCESS) {
    clReleaseMemObject(*mem);
    *mem = NULL;
    *ptr = NULL;
    return clr_cl_fail(ctx, "clEnqueueMapBuffer", err);
  }
  return CLR_OK;
}

static void unmap_pinned(clr_context *ctx, cl_mem mem, void *ptr) {
  if (ptr && clEnqueueUnmapMemObject(ctx->queue, mem, ptr, 0, NULL, NULL) ==
                 CL_SUCCESS)
    clFinish(ctx->queue);
  if (mem)
    clReleaseMemObject(mem);
}

static void release_slots(clr_context *ctx) {
  clr_pinned *pin = &ctx->pinned;
  for (size_t i = 0; i < pin->slots; i++) {
    clr_pinned_slot *s = &pin->slot[i];
    if (s->ev) {
      clWaitForEvents(1, &s->ev);
      clReleaseEvent(s->ev);
    }
    unmap_pinned(ctx, s->mem, s->ptr);
    memset(s, 0, sizeof *s);
  }
  pin->slots = 0;
  pin->slot_bytes = 0;
}

static void release_host_block(clr_context *ctx, clr_host_block *h) {
  if (h->mem)
    unmap_pinned(ctx, h->mem, h->ptr);
  else
    free(h->ptr);
}

/* Wait for the small block's last write (it has read the block then) and
 * forget it; the wait's status. */
static cl_int settle_bounce(clr_context *ctx) {
  cl_int err = CL_SUCCESS;
  if (ctx->pinned.bounce_ev) {
    err = clWaitForEvents(1, &ctx->pinned.bounce_ev);
    clReleaseEvent(ctx->pinned.bounce_ev);
    ctx->pinned.bounce_ev = NULL;
  }
  return err;
}

void clr_pinned_release(clr_context *ctx) {
  release_slots(ctx);
  settle_bounce(ctx);
  release_host_block(ctx, &ctx->pinned.bounce);
  memset(&ctx->pinned.bounce, 0, sizeof ctx->pinned.bounce);
  for (size_t i = 0; i < ctx->pinned.n_host; i++)
    release_host_block(ctx, &ctx->pinned.host[i]);
  free(ctx->pinned.host);
  ctx->pinned.host = NULL;
  ctx->pinned.n_host = ctx->pinned.cap_host = 0;
}

void clr_pinned_init(clr_context *ctx) {
  ctx->pinned.span.start = ~(cl_ulong)0; /* empty: start > end */
  ctx->pinned.span.end = 0;
}

/* At least `slots` pinned blocks of block_bytes, mapped for the host. */
static clr_status reserve_slots(clr_context *ctx, size_t slots,
                                size_t block_bytes) {
  clr_pinned *pin = &ctx->pinned;
  if (pin->slots >= slots && pin->slot_bytes == block_bytes)
    return CLR_OK;
  release_slots(ctx);
  pin->slot_bytes = block_bytes;
  for (size_t i = 0; i < slots; i++) {
    clr_status st =
        map_pinned(ctx, block_bytes, &pin->slot[i].mem, &pin->slot[i].ptr);
    if (st != CLR_OK) {
      release_slots(ctx);
      return st;
    }
    pin->slots = i + 1;
  }
  return CLR_OK;
}

/* ------------------------------------------------------------ spans */

typedef clr_span span;
static const span empty_span = {~(cl_ulong)0, 0};

/* Fold a finished command's profiling times into sp (nothing without
 * profiling, or when the device gives none). */
static void fold(span *sp, cl_event ev) {
  cl_ulong t0, t1;
  if (clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0,
                              NULL) != CL_SUCCESS ||
      clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1,
                              NULL) != CL_SUCCESS)
    return;
  if (t0 < sp->start)
    sp->start = t0;
  if (t1 > sp->end)
    sp->end = t1;
}

/* Wait for a slot's command, fold its times, release its event. */
static cl_int settle(clr_pinned_slot *s, span *sp) {
  if (!s->ev)
    return CL_SUCCESS;
  cl_int err = clWaitForEvents(1, &s->ev);
  if (err == CL_SUCCESS)
    fold(sp, s->ev);
  clReleaseEvent(s->ev);
  s->ev = NULL;
  return err;
}

/* ------------------------------------------------------------ the workers */

typedef struct job {
  clr_context *ctx;
  cl_mem dev;
  char *host;
  size_t bytes, block;
  unsigned threads;
  int to_device;
  atomic_size_t next; /* the next block a worker takes */
  atomic_int failed;  /* a worker failed: the others stop */
} job;

typedef struct worker {
  job *j;
  unsigned t;
  pthread_t thread;
  int started;
  cl_int err;
  const char *what; /* the OpenCL call that failed */
  span sp;
} worker;

static int fail_worker(worker *w, const char *what, cl_int err) {
  if (w->err == CL_SUCCESS) {
    w->err = err;
    w->what = what;
  }
  atomic_store(&w->j->failed, 1);
  return 0;
}

/* The offset of the next block nobody has taken, or j->bytes when none is
 * left.  Workers take blocks as they come free, not in a fixed turn: a
 * thread the scheduler holds back (the driver's own threads need cores
 * too) then delays only its own block, and the last blocks go to whoever
 * is idle, so no thread is left with one block more than the others. */
static size_t take_block(job *j) {
  if (atomic_load(&j->failed))
    return j->bytes;
  size_t k = atomic_fetch_add(&j->next, 1);
  return k < (j->bytes + j->block - 1) / j->block ? k * j->block : j->bytes;
}

static size_t block_len(const job *j, size_t at) {
  return j->bytes - at < j->block ? j->bytes - at : j->block;
}

/* Worker t fills its slots 2t and 2t + 1 in turn, a block at a time. */
static void write_blocks(worker *w) {
  job *j = w->j;
  clr_pinned_slot *own = &j->ctx->pinned.slot[2 * w->t];
  for (size_t k = 0, at; (at = take_block(j)) < j->bytes; k++) {
    clr_pinned_slot *s = &own[k & 1];
    cl_int err = settle(s, &w->sp);
    if (err != CL_SUCCESS) {
      fail_worker(w, "clWaitForEvents", err);
      return;
    }
    memcpy(s->ptr, j->host + at, block_len(j, at));
    err = clEnqueueWriteBuffer(j->ctx->queue, j->dev, CL_FALSE, at,
                               block_len(j, at), s->ptr, 0, NULL, &s->ev);
    if (err != CL_SUCCESS) {
      s->ev = NULL;
      fail_worker(w, "clEnqueueWriteBuffer", err);
      return;
    }
  }
}

/* The read of block `at` into slot s, not waited for. */
static int start_read(worker *w, clr_pinned_slot *s, size_t at) {
  job *j = w->j;
  cl_int err = clEnqueueReadBuffer(j->ctx->queue, j->dev, CL_FALSE, at,
                                   block_len(j, at), s->ptr, 0, NULL, &s->ev);
  if (err != CL_SUCCESS) {
    s->ev = NULL;
    return fail_worker(w, "clEnqueueReadBuffer", err);
  }
  return 1;
}

/* The same the other way: the worker's next block is read into its other
 * slot while this one is copied out. */
static void read_blocks(worker *w) {
  job *j = w->j;
  clr_pinned_slot *own = &j->ctx->pinned.slot[2 * w->t];
  size_t at = take_block(j);
  if (at >= j->bytes || !start_read(w, &own[0], at))
    return;
  for (size_t k = 0;; k++) {
    clr_pinned_slot *s = &own[k & 1];
    size_t next = take_block(j);
    if (next < j->bytes)
      start_read(w, &own[(k + 1) & 1], next);
    cl_int err = settle(s, &w->sp);
    if (err != CL_SUCCESS) {
      fail_worker(w, "clWaitForEvents", err);
      return;
    }
    if (atomic_load(&j->failed))
      return;
    memcpy(j->host + at, s->ptr, block_len(j, at));
    if (next >= j->bytes)
      return;
    at = next;
  }
}

static void *run_worker(void *arg) {
  worker *w = arg;
  if (w->j->to_device)
    write_blocks(w);
  else
    read_blocks(w);
  return NULL;
}

/* ------------------------------------------------------------ transfers */

/* 1 when [p, p + bytes) lies in one of clr_host_alloc's pinned arrays. */
static int owns_host(const clr_context *ctx, const void *p, size_t bytes) {
  uintptr_t a = (uintptr_t)p;
  for (size_t i = 0; i < ctx->pinned.n_host; i++) {
    const clr_host_block *h = &ctx->pinned.host[i];
    uintptr_t b = (uintptr_t)h->ptr;
    if (h->mem && a >= b && a - b <= h->bytes && bytes <= h->bytes - (a - b))
      return 1;
  }
  return 0;
}

/* The least transfer the blocks take: 1 MiB, or one block if smaller. */
static size_t pinned_least(const clr_context *ctx) {
  size_t block = (size_t)ctx->tuning.stage_block_kib * 1024;
  return block < ((size_t)1 << 20) ? block : (size_t)1 << 20;
}

/* Whether a host array is staged at all: a device apart from the host,
 * staging on (stage.threads), and not one of clr_host_alloc's pinned
 * arrays.  Its size then picks the blocks or the small block. */
static int staged(const clr_context *ctx, const void *host, size_t bytes) {
  return !ctx->host_unified && ctx->tuning.stage_threads > 0 &&
         !owns_host(ctx, host, bytes);
}

int clr_pinned_applies(const clr_context *ctx, const void *host, size_t bytes) {
  return ctx->tuning.stage_block_kib > 0 && bytes >= pinned_least(ctx) &&
         staged(ctx, host, bytes);
}

int clr_bounce_applies(const clr_context *ctx, const void *host, size_t bytes) {
  return bytes > 0 && bytes < pinned_least(ctx) && staged(ctx, host, bytes);
}

/* Small transfers: NVIDIA's OpenCL takes 10-25 us to write 4-40 KB from
 * pageable memory (docs/PERFORMANCE.md, "Small calls"), where a memcpy
 * into a pinned block and a write from it need a few. */
clr_status clr_bounce_write(clr_context *ctx, cl_mem dev, const void *host,
                            size_t bytes, cl_event *ev) {
  clr_host_block *b = &ctx->pinned.bounce;
  *ev = NULL;
  cl_int err = settle_bounce(ctx);
  if (err != CL_SUCCESS)
    return clr_cl_fail(ctx, "clWaitForEvents", err);
  if (b->bytes < bytes) {
    size_t want = (size_t)64 << 10;
    while (want < bytes)
      want *= 2;
    release_host_block(ctx, b);
    memset(b, 0, sizeof *b);
    clr_status st = map_pinned(ctx, want, &b->mem, &b->ptr);
    if (st != CLR_OK)
      return st;
    b->bytes = want;
  }
  memcpy(b->ptr, host, bytes);
  err = clEnqueueWriteBuffer(ctx->queue, dev, CL_FALSE, 0, bytes, b->ptr, 0,
                             NULL, ev);
  if (err != CL_SUCCESS) {
    *ev = NULL;
    return clr_cl_fail(ctx, "clEnqueueWriteBuffer", err);
  }
  err = clRetainEvent(*ev);
  if (err == CL_SUCCESS)
    ctx->pinned.bounce_ev = *ev;
  else if ((err = clWaitForEvents(1, ev)) != CL_SUCCESS) /* done with it now */
    return clr_cl_fail(ctx, "clWaitForEvents", err);
  return CLR_OK;
}

/* The block a transfer moves at a time: stage.block_kib, or less, so that
 * every thread gets two blocks of a smaller transfer (at least 256 KiB,
 * a multiple of 64 KiB). */
static size_t block_for(size_t bytes, unsigned threads, size_t block) {
  size_t least = (size_t)256 << 10, share = bytes / (2 * (size_t)threads);
  share = (share + 0xffff) & ~(size_t)0xffff;
  if (share < least)
    share = least;
  return share < block ? share : block;
}

/* Wait for every slot's command, folding its times into sp. */
static void settle_all(clr_context *ctx, span *sp) {
  for (size_t i = 0; i < ctx->pinned.slots; i++)
    settle(&ctx->pinned.slot[i], sp);
}

static void merge(span *into, const span *sp) {
  if (sp->start < into->start)
    into->start = sp->start;
  if (sp->end > into->end)
    into->end = sp->end;
}

/* Writes leave their last blocks in flight (the kernel that follows waits
 * for them on the queue) and their times in the context's span, which
 * clr_pinned_settle counts; reads return when the host has every byte,
 * adding their span to *ms. */
static clr_status transfer(clr_context *ctx, int to_device, cl_mem dev,
                           char *host, size_t bytes, double *ms) {
  clr_pinned *pin = &ctx->pinned;
  size_t slot_bytes = (size_t)ctx->tuning.stage_block_kib * 1024;
  unsigned threads = ctx->tuning.stage_threads;
  if (threads > CLR_MAX_STAGE_THREADS)
    threads = CLR_MAX_STAGE_THREADS;
  /* A thread costs tens of microseconds to start: one for each 4 MiB (or
   * two blocks, if smaller) of data.  On an H100's host 16 threads copy
   * 400 MB at 35-44 GB/s, one thread 4 MB in 0.34 ms (PERFORMANCE.md). */
  size_t unit =
      2 * slot_bytes < ((size_t)4 << 20) ? 2 * slot_bytes : (size_t)4 << 20;
  if (bytes / unit < threads)
    threads = bytes / unit > 0 ? (unsigned)(bytes / unit) : 1;
  size_t block = block_for(bytes, threads, slot_bytes);
  size_t blocks = bytes / block + (bytes % block != 0);
  if (threads > blocks)
    threads = (unsigned)blocks;
  clr_status st = reserve_slots(ctx, 2 * (size_t)threads, slot_bytes);
  if (st != CLR_OK)
    return st;
  span own = empty_span, *into = to_device ? &pin->span : &own;
  /* A read reuses slots that earlier writes may still hold. */
  if (!to_device)
    settle_all(ctx, &pin->span);
  job j = {ctx, dev, host, bytes, block, threads, to_device, 0, 0};
  worker w[CLR_MAX_STAGE_THREADS];
  memset(w, 0, sizeof w);
  for (unsigned t = 0; t < threads; t++) {
    w[t].j = &j;
    w[t].t = t;
    w[t].sp = empty_span;
    /* Worker 0 is this thread; one that cannot start runs here too. */
    w[t].started =
        t > 0 && pthread_create(&w[t].thread, NULL, run_worker, &w[t]) == 0;
  }
  for (unsigned t = 0; t < threads; t++)
    if (!w[t].started)
      run_worker(&w[t]);
  for (unsigned t = 0; t < threads; t++) {
    if (w[t].started)
      pthread_join(w[t].thread, NULL);
    if (st == CLR_OK && w[t].err != CL_SUCCESS)
      st = clr_cl_fail(ctx, w[t].what, w[t].err);
    merge(into, &w[t].sp);
  }
  if (st != CLR_OK) /* nothing stays in flight after a failure */
    settle_all(ctx, into);
  if (!to_device && ms && own.start <= own.end)
    *ms += (double)(own.end - own.start) * 1e-6;
  return st;
}

void clr_pinned_settle(clr_context *ctx, double *ms) {
  clr_pinned *pin = &ctx->pinned;
  settle_all(ctx, &pin->span);
  if (ms && pin->span.start <= pin->span.end)
    *ms += (double)(pin->span.end - pin->span.start) * 1e-6;
  pin->span = empty_span;
}

clr_status clr_pinned_write(clr_context *ctx, cl_mem dev, const void *host,
                            size_t bytes) {
  return transfer(ctx, 1, dev, (char *)(uintptr_t)host, bytes, NULL);
}

clr_status clr_pinned_read(clr_context *ctx, cl_mem dev, void *host,
                           size_t bytes, double *ms) {
  return transfer(ctx, 0, dev, host, bytes, ms);
}

/* ------------------------------------------------------------ callers' arrays
 */

CLR_API void *clr_host_alloc(clr_context *ctx, size_t bytes) {
  if (!ctx)
    return NULL;
  ctx->detail[0] = '\0';
  clr_pinned *pin = &ctx->pinned;
  if (bytes == 0) {
    clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "clr_host_alloc of 0 bytes");
    return NULL;
  }
  if (pin->n_host == pin->cap_host) {
    size_t cap = pin->cap_host ? 2 * pin->cap_host : 8;
    clr_host_block *grown = realloc(pin->host, cap * sizeof *grown);
    if (!grown) {
      clr_fail(ctx, CLR_ERR_OUT_OF_MEMORY, "out of host memory");
      return NULL;
    }
    pin->host = grown;
    pin->cap_host = cap;
  }
  clr_host_block h = {NULL, NULL, bytes};
  if (ctx->host_unified) {
    /* Used in place anyway: page-aligned, so every vector load is. */
    if (posix_memalign(&h.ptr, 4096, bytes) != 0) {
      clr_fail(ctx, CLR_ERR_OUT_OF_MEMORY, "out of host memory (%zu bytes)",
               bytes);
      return NULL;
    }
  } else if (map_pinned(ctx, bytes, &h.mem, &h.ptr) != CLR_OK) {
    return NULL;
  }
  pin->host[pin->n_host++] = h;
  return h.ptr;
}

CLR_API clr_status clr_host_free(clr_context *ctx, void *p) {
  if (!ctx)
    return CLR_ERR_INVALID_ARGUMENT;
  if (!p)
    return CLR_OK;
  clr_pinned *pin = &ctx->pinned;
  for (size_t i = 0; i < pin->n_host; i++)
    if (pin->host[i].ptr == p) {
      release_host_block(ctx, &pin->host[i]);
      pin->host[i] = pin->host[--pin->n_host];
      return CLR_OK;
    }
  return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                  "clr_host_free: %p is no array of clr_host_alloc's on this "
                  "context",
                  p);
}
