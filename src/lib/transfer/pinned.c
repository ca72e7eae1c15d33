/* Host arrays to and from a device that does not share the host's memory,
 * at the bus's speed.
 *
 * A transfer from ordinary (pageable) host memory goes through the
 * driver's own bounce buffer: about 7.5 GB/s on an H100's PCIe 5 link,
 * where a transfer from page-locked (pinned) memory runs at 50+ GB/s.  So
 * the context keeps a few pinned blocks (CL_MEM_ALLOC_HOST_PTR buffers,
 * mapped once) and moves a large transfer through them block by block:
 * while the device copies block k, the host fills blocks k + 1 ...  One
 * host thread's memcpy (~10 GB/s) would then be the bottleneck, so several
 * threads copy the pieces of the same block at once (the workers, below):
 *
 *   to the device:   memcpy(pieces, host) -> clEnqueueWriteBuffer(block)
 *   from the device: clEnqueueReadBuffer(block) -> wait -> memcpy(pieces)
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
 * waits for.
 *
 * A write of up to half the host's last-level cache fills the slots with
 * non-temporal stores (x86-64): the device then reads lines no core
 * holds.  On a lent H100's host (300 MB L3) that took 1e7 floats from
 * 1.48-1.54 to 1.04-1.08 ms when the array was in the cache and from
 * 1.77-1.88 to 1.35-1.37 when it was not.  From 200 MB up they lost
 * 0.1-0.5 ms when most of the array was in the cache, so larger writes
 * keep ordinary stores (docs/perf-log/staging.md, "Non-temporal stores into the
 * slots"). */
#include "internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if CLR_STAGE_TRACE
#include <stdio.h>
#include <time.h>
#endif

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
  *ptr = clEnqueueMapBuffer(clr_queue(ctx), *mem, CL_TRUE,
                            CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL, NULL,
                            &err);
  if (err != CL_SUCCESS) {
    clReleaseMemObject(*mem);
    *mem = NULL;
    *ptr = NULL;
    return clr_cl_fail(ctx, "clEnqueueMapBuffer", err);
  }
  return CLR_OK;
}

static void unmap_pinned(clr_context *ctx, cl_mem mem, void *ptr) {
  if (ptr && clEnqueueUnmapMemObject(clr_queue(ctx), mem, ptr, 0, NULL, NULL) ==
                 CL_SUCCESS)
    clFinish(clr_queue(ctx));
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
  clr_crew_release(&ctx->pinned.crew);
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
#if defined(_SC_LEVEL3_CACHE_SIZE)
  long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  ctx->pinned.host_cache = l3 > 0 ? (size_t)l3 : 0;
#endif
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

/* -------------------------------------------------------- the stage trace */

/* Built with -Dstage_trace=true (meson; CLR_STAGE_TRACE=1) for
 * tools/perf/stage-trace: host times of each step, device times of each
 * block's command, printed to stderr by clr_pinned_settle when CLR_TRACE
 * is set in the environment.  For measuring only: global state, one
 * context at a time.  Without the option the hooks (TRACE_STEP,
 * TRACE_DEVICE, TRACE_SLOT_BLOCK) are empty and none of this is built. */
#if CLR_STAGE_TRACE
typedef struct trace_ev {
  long long t, block;
  int th;
  char kind;
} trace_ev;
#define TRACE_MAX (1 << 17)
static trace_ev trace_buf[TRACE_MAX];
static atomic_int trace_n, trace_ids;
static _Thread_local int trace_id = -1;
static long long trace_slot_block[CLR_STAGE_SLOTS]; /* its last block */
static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
static void trace_at(char kind, long long block, long long t) {
  if (trace_id < 0)
    trace_id = atomic_fetch_add(&trace_ids, 1);
  int i = atomic_fetch_add(&trace_n, 1);
  if (i < TRACE_MAX)
    trace_buf[i] = (trace_ev){t, block, trace_id, kind};
}
/* The command's queued, start and end times on the device's clock
 * (analyze.py puts them on the host's through the first block's enqueue). */
static void trace_dev(cl_event ev, long long block) {
  cl_ulong q = 0, st = 0, en = 0;
  clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_QUEUED, sizeof q, &q, NULL);
  clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof st, &st, NULL);
  clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof en, &en, NULL);
  trace_at('q', block, (long long)q);
  trace_at('S', block, (long long)st);
  trace_at('E', block, (long long)en);
}
static void trace_dump(void) {
  int n = atomic_load(&trace_n);
  if (n > TRACE_MAX)
    n = TRACE_MAX;
  if (getenv("CLR_TRACE") && n > 0) {
    long long t0 = trace_buf[0].t;
    for (int i = 0; i < n; i++)
      if (trace_buf[i].kind == 'B')
        t0 = trace_buf[i].t;
    for (int i = 0; i < n; i++)
      fprintf(stderr, "T %c %d %lld %.3f\n", trace_buf[i].kind, trace_buf[i].th,
              trace_buf[i].block, (trace_buf[i].t - t0) * 1e-3);
  }
  atomic_store(&trace_n, 0);
}
/* A step on the host's clock, a command's times on the device's, the
 * block a slot carries last. */
#define TRACE_STEP(kind, block) trace_at(kind, block, now_ns())
#define TRACE_DEVICE(ev, block) trace_dev(ev, block)
#define TRACE_SLOT_BLOCK(s, c) (trace_slot_block[s] = (long long)(c))
#else
#define TRACE_STEP(kind, block) ((void)0)
#define TRACE_DEVICE(ev, block) ((void)0)
#define TRACE_SLOT_BLOCK(s, c) ((void)0)
#endif

/* ------------------------------------------------------------ the workers */

/* A transfer moves `blocks` blocks of `block` bytes (the last one shorter),
 * one write or read command each, through CLR_STAGE_SLOTS pinned slots:
 * block c lives in slot c % CLR_STAGE_SLOTS.  The host's side of a block
 * is cut into pieces of `piece` bytes, and the workers take pieces in
 * order as they come free (an atomic counter), so the threads work
 * together on the block the bus needs next (and at most the three after
 * it): a block is copied in about block / threads of one thread's time,
 * the bus starts early and a thread the scheduler holds back delays only
 * its own piece.
 *
 * A slot's state (under the job's lock): the block it holds; the pieces
 * of it not yet copied; its command's event in the context's slot.  To the
 * device, the worker that copies a block's last piece enqueues its write;
 * the slot passes to block c + CLR_STAGE_SLOTS when that write has ended.
 * From the device, the block's read is enqueued when the slot passes to
 * it, and the pieces are copied out once it has ended; the worker that
 * copies the last piece passes the slot on and enqueues the next read.
 * One worker at a time waits for a slot's event (`waiting`); the others
 * wait on the condition variable, which every change of state wakes. */
typedef struct slot_state {
  long long block; /* the block the slot holds (or is passing to) */
  size_t left;     /* its pieces not yet copied */
  int waiting;     /* a worker waits for the slot's event */
  int ready;       /* from the device: the block's read has ended */
} slot_state;

typedef struct job {
  clr_context *ctx;
  cl_mem dev;
  char *host;
  size_t bytes, block, piece, blocks, per_block;
  int to_device;
  int stream;         /* into the slots with non-temporal stores */
  atomic_size_t next; /* the next piece nobody has taken */
  atomic_int failed;  /* a worker failed: the others stop */
  pthread_mutex_t lock;
  pthread_cond_t changed;
  slot_state st[CLR_STAGE_SLOTS];
  span sp;    /* the commands that ended (under the lock) */
  cl_int err; /* the first failure, and its call */
  const char *what;
} job;

static size_t block_bytes(const job *j, size_t c) {
  return j->bytes - c * j->block < j->block ? j->bytes - c * j->block
                                            : j->block;
}

static size_t pieces_of(const job *j, long long c) {
  if (c < 0 || (size_t)c >= j->blocks)
    return 0;
  return (block_bytes(j, (size_t)c) + j->piece - 1) / j->piece;
}

/* Record a failure (the lock held) and wake everyone. */
static void fail_locked(job *j, const char *what, cl_int err) {
  if (j->err == CL_SUCCESS) {
    j->err = err;
    j->what = what;
  }
  atomic_store(&j->failed, 1);
  pthread_cond_broadcast(&j->changed);
}

static clr_pinned_slot *slot_of(job *j, size_t s) {
  return &j->ctx->pinned.slot[s];
}

/* Wait (the lock held, released meanwhile) for slot s's command to end,
 * fold its times and release it; 0 on a failure. */
static int wait_slot(job *j, size_t s) {
  clr_pinned_slot *ps = slot_of(j, s);
  cl_event ev = ps->ev;
  j->st[s].waiting = 1;
  TRACE_STEP('W', j->st[s].block);
  pthread_mutex_unlock(&j->lock);
  cl_int err = clWaitForEvents(1, &ev);
  pthread_mutex_lock(&j->lock);
  j->st[s].waiting = 0;
  if (err != CL_SUCCESS) { /* the event stays: settle_all releases it */
    fail_locked(j, "clWaitForEvents", err);
    return 0;
  }
  TRACE_STEP('w', j->st[s].block);
  TRACE_DEVICE(ev, j->st[s].block);
  fold(&j->sp, ev);
  clReleaseEvent(ev);
  ps->ev = NULL;
  return 1;
}

/* The command for block c in slot s (the lock held); 0 on a failure. */
static int enqueue_block(job *j, size_t s, size_t c) {
  clr_pinned_slot *ps = slot_of(j, s);
  size_t at = c * j->block, len = block_bytes(j, c);
  TRACE_STEP('Q', (long long)c);
  TRACE_SLOT_BLOCK(s, c);
  cl_int err = j->to_device
                   ? clEnqueueWriteBuffer(clr_queue(j->ctx), j->dev, CL_FALSE,
                                          at, len, ps->ptr, 0, NULL, &ps->ev)
                   : clEnqueueReadBuffer(clr_queue(j->ctx), j->dev, CL_FALSE,
                                         at, len, ps->ptr, 0, NULL, &ps->ev);
  if (err != CL_SUCCESS) {
    ps->ev = NULL;
    fail_locked(
        j, j->to_device ? "clEnqueueWriteBuffer" : "clEnqueueReadBuffer", err);
    return 0;
  }
  pthread_cond_broadcast(&j->changed);
  return 1;
}

/* Wait (the lock held) until slot s may take block c's piece: to the
 * device, until it holds block c (its earlier block's write has ended);
 * from the device, until block c's read has ended.  0 on a failure. */
static int slot_ready(job *j, size_t s, size_t c) {
  slot_state *st = &j->st[s];
  for (;;) {
    if (atomic_load(&j->failed))
      return 0;
    if (st->block == (long long)c && (j->to_device || st->ready))
      return 1;
    int mine = !st->waiting && slot_of(j, s)->ev &&
               (j->to_device ? st->left == 0 : st->block == (long long)c);
    if (!mine) {
      TRACE_STEP('c', (long long)c);
      pthread_cond_wait(&j->changed, &j->lock);
      TRACE_STEP('C', (long long)c);
      continue;
    }
    if (!wait_slot(j, s))
      return 0;
    if (j->to_device) { /* the write ended: the slot passes on */
      st->block += CLR_STAGE_SLOTS;
      st->left = pieces_of(j, st->block);
    } else {
      st->ready = 1;
    }
    pthread_cond_broadcast(&j->changed);
  }
}

/* A piece copied (the lock held): the block's last one enqueues its write
 * (to the device), or passes the slot on and reads the block after (from
 * the device).  0 on a failure. */
static int piece_done(job *j, size_t s, size_t c) {
  slot_state *st = &j->st[s];
  if (--st->left > 0)
    return 1;
  if (j->to_device)
    return enqueue_block(j, s, c);
  st->block += CLR_STAGE_SLOTS;
  st->ready = 0;
  st->left = pieces_of(j, st->block);
  pthread_cond_broadcast(&j->changed);
  return st->left == 0 || enqueue_block(j, s, (size_t)st->block);
}

/* A piece into its slot: memcpy, or with non-temporal stores (the slot's
 * pieces are 64-byte aligned; the fence orders them before the lock that
 * follows, and so before the block's write). */
static void copy_in(const job *j, char *dst, const char *src, size_t len) {
#if defined(__SSE2__)
  if (j->stream && ((uintptr_t)dst & 15) == 0) {
    for (; len >= 64; len -= 64, dst += 64, src += 64) {
      __m128i a = _mm_loadu_si128((const __m128i *)src);
      __m128i b = _mm_loadu_si128((const __m128i *)(src + 16));
      __m128i c = _mm_loadu_si128((const __m128i *)(src + 32));
      __m128i d = _mm_loadu_si128((const __m128i *)(src + 48));
      _mm_stream_si128((__m128i *)dst, a);
      _mm_stream_si128((__m128i *)(dst + 16), b);
      _mm_stream_si128((__m128i *)(dst + 32), c);
      _mm_stream_si128((__m128i *)(dst + 48), d);
    }
    memcpy(dst, src, len);
    _mm_sfence();
    return;
  }
#endif
  (void)j;
  memcpy(dst, src, len);
}

static void run_worker(void *arg) {
  job *j = arg;
  for (;;) {
    size_t k = atomic_fetch_add(&j->next, 1), c = k / j->per_block;
    size_t at = c * j->block + k % j->per_block * j->piece;
    if (c >= j->blocks || at >= j->bytes || atomic_load(&j->failed))
      return;
    size_t end = c * j->block + block_bytes(j, c), s = c % CLR_STAGE_SLOTS;
    size_t len = end - at < j->piece ? end - at : j->piece;
    char *pinned = (char *)slot_of(j, s)->ptr + (at - c * j->block);
    pthread_mutex_lock(&j->lock);
    int ok = slot_ready(j, s, c);
    pthread_mutex_unlock(&j->lock);
    if (!ok)
      return;
    TRACE_STEP('p', (long long)c);
    if (j->to_device)
      copy_in(j, pinned, j->host + at, len);
    else
      memcpy(j->host + at, pinned, len);
    TRACE_STEP('P', (long long)c);
    pthread_mutex_lock(&j->lock);
    ok = piece_done(j, s, c);
    pthread_mutex_unlock(&j->lock);
    if (!ok)
      return;
  }
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
 * pageable memory (docs/perf-log/small-calls.md, "Small calls"), where a memcpy
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
  err = clEnqueueWriteBuffer(clr_queue(ctx), dev, CL_FALSE, 0, bytes, b->ptr, 0,
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

/* The block a transfer moves in one command: stage.block_kib, or less, so
 * that a smaller transfer still spans twice the slots (a multiple of
 * 64 KiB, at least that). */
static size_t block_for(size_t bytes, size_t slot_bytes) {
  size_t least = (size_t)64 << 10,
         share = (bytes + 2 * CLR_STAGE_SLOTS - 1) / (2 * CLR_STAGE_SLOTS);
  share = (share + least - 1) & ~(least - 1);
  return share < slot_bytes ? share : slot_bytes;
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
  /* One thread for each 4 MiB (or two blocks, if smaller), and up to four
   * for less, one for each MiB.  One thread copies 4 MB in about 0.4 ms
   * (docs/perf-log/staging.md): three made 1e6 floats 0.32-0.39 ms where one
   * took 0.46-0.54.  More (one per 256 KiB or per MiB: 16 at 1e7) were no
   * faster from 1e7 up, and slower in one run of two. */
  size_t unit =
      2 * slot_bytes < ((size_t)4 << 20) ? 2 * slot_bytes : (size_t)4 << 20;
  size_t want = bytes / unit, small = bytes >> 20;
  if (want < 4 && small > want)
    want = small < 4 ? small : 4;
  if (want < threads)
    threads = want > 0 ? (unsigned)want : 1;
  clr_status st = reserve_slots(ctx, CLR_STAGE_SLOTS, slot_bytes);
  if (st != CLR_OK)
    return st;
  /* A read reuses slots that earlier writes may still hold. */
  if (!to_device)
    settle_all(ctx, &pin->span);
  job j;
  memset(&j, 0, sizeof j);
  j.ctx = ctx;
  j.dev = dev;
  j.host = host;
  j.bytes = bytes;
  j.to_device = to_device;
  j.stream = to_device && bytes <= pin->host_cache / 2;
  j.block = block_for(bytes, slot_bytes);
  j.blocks = (bytes + j.block - 1) / j.block;
  j.piece = (j.block + threads - 1) / threads;
  j.piece = (j.piece + 63) & ~(size_t)63;
  if (j.piece > j.block)
    j.piece = j.block;
  j.per_block = (j.block + j.piece - 1) / j.piece;
  j.sp = empty_span;
  atomic_init(&j.next, 0);
  atomic_init(&j.failed, 0);
  if (pthread_mutex_init(&j.lock, NULL) != 0)
    return clr_fail(ctx, CLR_ERR_OUT_OF_MEMORY, "pthread_mutex_init failed");
  if (pthread_cond_init(&j.changed, NULL) != 0) {
    pthread_mutex_destroy(&j.lock);
    return clr_fail(ctx, CLR_ERR_OUT_OF_MEMORY, "pthread_cond_init failed");
  }
  /* The slots' first blocks: to the device, a slot whose earlier write may
   * still be in flight passes to its block when that write ends; from the
   * device, the first blocks' reads start now. */
  for (size_t s = 0; s < CLR_STAGE_SLOTS; s++) {
    slot_state *ss = &j.st[s];
    ss->block = (long long)s;
    ss->left = pieces_of(&j, ss->block);
    if (to_device && pin->slot[s].ev) {
      ss->block -= CLR_STAGE_SLOTS;
      ss->left = 0;
    } else if (!to_device && ss->left > 0 && !enqueue_block(&j, s, s)) {
      break;
    }
  }
  /* This thread and the context's helpers (crew.c), started by the first
   * call that wants them. */
  TRACE_STEP('B', -1);
  if (!atomic_load(&j.failed))
    clr_crew_run(&pin->crew, threads, run_worker, &j);
  TRACE_STEP('J', -1);
  if (j.err != CL_SUCCESS)
    st = clr_cl_fail(ctx, j.what, j.err);
  if (st != CLR_OK || !to_device) /* nothing stays in flight after a read */
    settle_all(ctx, &j.sp);       /* or a failure */
  pthread_cond_destroy(&j.changed);
  pthread_mutex_destroy(&j.lock);
  if (to_device)
    merge(&pin->span, &j.sp);
  else if (ms && j.sp.start <= j.sp.end)
    *ms += (double)(j.sp.end - j.sp.start) * 1e-6;
  return st;
}

void clr_pinned_settle(clr_context *ctx, double *ms) {
  clr_pinned *pin = &ctx->pinned;
#if CLR_STAGE_TRACE
  for (size_t i = 0; i < pin->slots; i++)
    if (pin->slot[i].ev && clWaitForEvents(1, &pin->slot[i].ev) == CL_SUCCESS)
      trace_dev(pin->slot[i].ev, trace_slot_block[i]);
  TRACE_STEP('Z', -1);
  trace_dump();
#endif
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
