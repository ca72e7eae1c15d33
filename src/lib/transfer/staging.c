/* Host arrays made visible to the device, one chunk at a time.
 *
 * On devices that share memory with the host (CL_DEVICE_HOST_UNIFIED_MEMORY:
 * CPUs through PoCL, integrated GPUs) a chunk is wrapped in place with
 * CL_MEM_USE_HOST_PTR and nothing is copied.  Elsewhere it is copied into a
 * buffer the context keeps between calls, and the copy is timed: through
 * pinned blocks by several threads when it is large (pinned.c), else by
 * one direct write (at the bus's speed when the array is pinned itself:
 * clr_host_alloc). */
#include "internal.h"

#include <string.h>

#include <stdint.h>

clr_status clr_stage_in(clr_context *ctx, clr_buffer *pool, void *host,
                        size_t bytes, int writable, clr_staged *out) {
  cl_int err;
  out->mem = NULL;
  out->wrapped = 0;
  out->pinned = 0;
  out->write_event = NULL;
  out->host = host;
  out->bytes = bytes;
  if (ctx->host_unified) {
    cl_mem_flags flags =
        CL_MEM_USE_HOST_PTR | (writable ? CL_MEM_READ_WRITE : CL_MEM_READ_ONLY);
    out->mem = clCreateBuffer(ctx->cl, flags, bytes, host, &err);
    if (err != CL_SUCCESS) {
      out->mem = NULL;
      return clr_cl_fail(ctx, "clCreateBuffer", err);
    }
    out->wrapped = 1;
    return CLR_OK;
  }
  clr_status st = clr_buffer_reserve(ctx, pool, bytes, CL_MEM_READ_WRITE);
  if (st != CLR_OK)
    return st;
  if (clr_pinned_applies(ctx, host, bytes)) {
    out->pinned = 1;
    st = clr_pinned_write(ctx, pool->mem, host, bytes);
    if (st == CLR_OK)
      out->mem = pool->mem;
    return st;
  }
  if (clr_bounce_applies(ctx, host, bytes)) {
    st = clr_bounce_write(ctx, pool->mem, host, bytes, &out->write_event);
    if (st == CLR_OK)
      out->mem = pool->mem;
    return st;
  }
  /* Without profiling, no event: the write blocks instead (it must be
   * done before the call returns, and on NVIDIA's OpenCL a blocking write
   * costs less than an event waited on a profiling queue). */
  err =
      clEnqueueWriteBuffer(clr_queue(ctx), pool->mem, !ctx->profiling, 0, bytes,
                           host, 0, NULL, clr_timed(ctx, &out->write_event));
  if (err != CL_SUCCESS) {
    out->write_event = NULL;
    return clr_cl_fail(ctx, "clEnqueueWriteBuffer", err);
  }
  out->mem = pool->mem;
  return CLR_OK;
}

clr_status clr_stage_out(clr_context *ctx, clr_staged *s) {
  cl_event ev = NULL;
  cl_int err;
  if (s->wrapped) {
    /* Mapping a USE_HOST_PTR buffer makes the device's writes visible in
     * the host array (no copy where the memory is shared). */
    void *p = clEnqueueMapBuffer(clr_queue(ctx), s->mem, CL_TRUE, CL_MAP_READ,
                                 0, s->bytes, 0, NULL, NULL, &err);
    if (err != CL_SUCCESS)
      return clr_cl_fail(ctx, "clEnqueueMapBuffer", err);
    CLR_CL_RETURN(
        ctx, clEnqueueUnmapMemObject(clr_queue(ctx), s->mem, p, 0, NULL, NULL));
    CLR_CL_RETURN(ctx, clFinish(clr_queue(ctx)));
    return CLR_OK;
  }
  if (clr_pinned_applies(ctx, s->host, s->bytes))
    return clr_pinned_read(ctx, s->mem, s->host, s->bytes, &ctx->timing.d2h_ms);
  CLR_CL_RETURN(ctx, clEnqueueReadBuffer(clr_queue(ctx), s->mem, CL_TRUE, 0,
                                         s->bytes, s->host, 0, NULL, &ev));
  ctx->timing.d2h_ms += clr_event_ms(ev, ev);
  clReleaseEvent(ev);
  return CLR_OK;
}

void clr_stage_release(clr_context *ctx, clr_staged *s) {
  if (s->write_event) {
    /* Only completed commands carry profiling data. */
    if (clWaitForEvents(1, &s->write_event) == CL_SUCCESS)
      ctx->timing.h2d_ms += clr_event_ms(s->write_event, s->write_event);
    clReleaseEvent(s->write_event);
  }
  if (s->pinned)
    clr_pinned_settle(ctx, &ctx->timing.h2d_ms);
  if (s->wrapped && s->mem)
    clReleaseMemObject(s->mem);
  s->mem = NULL;
  s->write_event = NULL;
  s->wrapped = 0;
  s->pinned = 0;
}

int clr_is_aligned(const void *p, size_t bytes) {
  return bytes == 0 || (uintptr_t)p % bytes == 0;
}

size_t clr_chunk_elems(const clr_context *ctx, size_t esize) {
  uint64_t cap = ctx->desc.max_alloc_size;
  /* Leave room for partials and for what else lives on the device. */
  if (ctx->desc.global_mem_size / 4 < cap)
    cap = ctx->desc.global_mem_size / 4;
  if (ctx->max_chunk_bytes && ctx->max_chunk_bytes < cap)
    cap = ctx->max_chunk_bytes;
  size_t elems = (size_t)(cap / esize);
  /* A multiple of 64 elements keeps every chunk's vectors aligned. */
  elems -= elems % 64;
  return elems ? elems : 64;
}

size_t clr_chunk_count(const clr_context *ctx, size_t n, size_t esize) {
  size_t chunk = clr_chunk_elems(ctx, esize);
  return n / chunk + (n % chunk != 0);
}

clr_status clr_stream_chunks(clr_context *ctx, const void *data,
                             const void *data2, size_t n, size_t esize,
                             clr_chunk_fn fn, void *user) {
  size_t chunk = clr_chunk_elems(ctx, esize);
  size_t chunks = clr_chunk_count(ctx, n, esize);
  clr_status st = CLR_OK;
  if (chunks > 1)
    clr_log(ctx, "streaming %zu elements in %zu chunks of %zu", n, chunks,
            chunk);
  for (size_t c = 0; c < chunks && st == CLR_OK; c++) {
    clr_chunk at = {NULL, NULL, c, c * chunk, 0};
    at.len = n - at.begin < chunk ? n - at.begin : chunk;
    clr_staged in, in2;
    memset(&in2, 0, sizeof in2);
    st = clr_stage_in(ctx, &ctx->input, (char *)data + at.begin * esize,
                      at.len * esize, 0, &in);
    if (st == CLR_OK && data2)
      st = clr_stage_in(ctx, &ctx->input2, (char *)data2 + at.begin * esize,
                        at.len * esize, 0, &in2);
    at.mem = in.mem;
    at.mem2 = data2 ? in2.mem : in.mem;
    if (st == CLR_OK)
      st = fn(ctx, user, &at);
    clr_stage_release(ctx, &in2);
    clr_stage_release(ctx, &in);
    if (chunks > 1 && st == CLR_OK)
      clr_log(ctx, "chunk %zu/%zu done", c + 1, chunks);
  }
  ctx->timing.chunks = chunks;
  return st;
}
