/* Batches of ranges: one reduction per (offset, length) range of one
 * array, the ranges in any order, overlapping or not, all in a few
 * segmented reductions (segmented.c).
 *
 * The ranges are taken in order and cut into batches:
 *   in place  a run of ranges that are sorted and disjoint, with gaps
 *             between them of at most twice their elements, is one span
 *             of the array: its ranges and gaps are adjacent segments, so
 *             the span is read once where it lies and the gaps' results
 *             are dropped;
 *   gathered  a short range (under RANGE_SHORT elements) that starts no
 *             such run, and the short ranges after it, are copied one
 *             after another (up to GATHER_CAP elements; on the device by
 *             cl/gather_ranges.cl, a work-group a range) and reduced as
 *             adjacent segments there.
 * A long range that overlaps its neighbours is a batch of its own, in
 * place.  A map expression that reads i (the element's index in the
 * array) is never gathered: a copy would renumber its elements, so every
 * batch is in place, a span of the array whose i starts at the span's
 * first index (clr_options.index_base, which the segmented kernels add).  A
 * batch whose span holds no element (empty ranges only) takes one element of
 * the array as a segment of its own, whose result is dropped, so that the
 * segmented reduction always has an element.
 *
 * Buffers: the ranges are read back to the host (16 bytes a range) to
 * cut the batches; the data is read on the device only. */
#include "expr.h"
#include "internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RANGE_SHORT 65536
#define GATHER_CAP ((size_t)1 << 24)

/* Range r: g[2r] (offset) and g[2r + 1] (length). */
static uint64_t range_end(const uint64_t *g, size_t r) {
  return g[2 * r] + g[2 * r + 1];
}

static clr_status check_ranges(clr_context *ctx, const uint64_t *g,
                               size_t n_ranges, size_t n) {
  for (size_t r = 0; r < n_ranges; r++)
    if (g[2 * r] > n || g[2 * r + 1] > n - g[2 * r])
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "range %zu = (offset %llu, length %llu) ends past n = "
                      "%zu",
                      r, (unsigned long long)g[2 * r],
                      (unsigned long long)g[2 * r + 1], n);
  return CLR_OK;
}

/* The start of both calls: the options (the defaults for NULL), the
 * checks of every reduction, then the ranges' pointer and count. */
static clr_status start_ranges(clr_context *ctx, const clr_options **opt,
                               clr_options *defaults, clr_op op, clr_type type,
                               const void *data, const void *results, size_t n,
                               const void *ranges, size_t n_ranges) {
  clr_status st = clr_start_work(ctx, opt, defaults, data, results,
                                 "data and results", op, type, n, 0);
  if (st == CLR_OK && (!ranges || n_ranges == 0))
    st = clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                  "ranges must not be NULL, n_ranges at least 1");
  if (st == CLR_OK && n_ranges > SIZE_MAX / 32)
    st = clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                  "%zu ranges exceed the address space", n_ranges);
  return st;
}

/* The last range of the in-place run that starts at r. */
static size_t in_place_run(const uint64_t *g, size_t n_ranges, size_t r) {
  uint64_t elems = g[2 * r + 1], gaps = 0;
  size_t b = r;
  while (b + 1 < n_ranges) {
    uint64_t end = range_end(g, b), off = g[2 * b + 2], len = g[2 * b + 3];
    if (off < end || gaps + (off - end) > 2 * (elems + len) + 4096)
      break;
    gaps += off - end;
    elems += len;
    b++;
  }
  return b;
}

/* The last range of the gathered batch that starts at r. */
static size_t gather_run(const uint64_t *g, size_t n_ranges, size_t r) {
  uint64_t total = g[2 * r + 1];
  size_t b = r;
  while (b + 1 < n_ranges && g[2 * b + 3] < RANGE_SHORT &&
         total + g[2 * b + 3] <= GATHER_CAP) {
    total += g[2 * b + 3];
    b++;
  }
  return b;
}

/* A batch as segments: ranges a..b (and, in place, the gaps between
 * them) of a span of the array [base, base + len), or of the gathered
 * copy (base 0).  offsets has room for 2 (b - a) + 3 values; the results
 * of range i are at segment first + step * (i - a). */
typedef struct batch {
  size_t a, b;
  int gathered;
  uint64_t base, len;
  uint64_t *offsets;
  size_t segments, first, step;
} batch;

/* The segments of a batch (its offsets filled, relative to base); with
 * no element, one of the array's is added as a segment of its own
 * (before the ranges when they lie at n, else after). */
static void batch_segments(batch *t, const uint64_t *g, size_t n) {
  size_t k = 0;
  t->offsets[k++] = 0;
  t->first = 0;
  t->step = t->gathered ? 1 : 2;
  if (t->gathered) {
    t->base = 0;
    uint64_t at = 0;
    for (size_t i = t->a; i <= t->b; i++)
      t->offsets[k++] = at += g[2 * i + 1];
    t->len = at;
  } else {
    t->base = g[2 * t->a];
    t->len = range_end(g, t->b) - t->base;
    for (size_t i = t->a; i <= t->b; i++) {
      if (i > t->a)
        t->offsets[k++] = g[2 * i] - t->base; /* the gap's end */
      t->offsets[k++] = range_end(g, i) - t->base;
    }
  }
  t->segments = k - 1;
  if (t->len == 0) { /* one element of the array, as a dropped segment */
    if (!t->gathered && t->base == n) {
      t->base--;
      for (size_t i = k; i-- > 1;)
        t->offsets[i] = t->offsets[i - 1] + 1;
      t->offsets[1] = 1;
      t->offsets[k] = t->offsets[k - 1];
      t->first = 1;
    } else {
      t->offsets[k] = t->offsets[k - 1] + 1;
    }
    t->segments++;
    t->len = 1;
  }
}

/* 1 when map expression e reads i (the call validated it): its elements
 * must keep their indices.  Unparsable here (out of memory): as if it
 * did, which is only slower. */
static int expr_reads_i(const char *e) {
  clr_expr tree;
  char why[8];
  if (clr_expr_parse(&tree, e, "the map expression", clr_map_vars,
                     CLR_MAP_NVARS, CLR_MAX_MAP_EXPR, why, sizeof why) != 0)
    return 1;
  int reads = clr_expr_reads(&tree, CLR_MAP_VAR_I);
  clr_expr_free(&tree);
  return reads;
}

/* The next batch from range r; may_gather 0 keeps every batch in place. */
static batch next_batch(const uint64_t *g, size_t n_ranges, size_t r,
                        uint64_t *offsets, int may_gather) {
  batch t = {.a = r, .offsets = offsets};
  t.b = in_place_run(g, n_ranges, r);
  t.gathered =
      may_gather && t.b == r && g[2 * r + 1] < RANGE_SHORT && r + 1 < n_ranges;
  if (t.gathered)
    t.b = gather_run(g, n_ranges, r);
  return t;
}

/* The call's timing over its batches: their kernel times add up (the
 * segmented calls add them), the deepest chain is the call's. */
static void note_batch(clr_context *ctx, size_t *batches, size_t *depth) {
  (*batches)++;
  if (ctx->timing.error_depth > *depth)
    *depth = ctx->timing.error_depth;
}

/* A call's end, host arrays or buffers: the batches logged, the timing
 * closed (its depth the deepest batch's); returns st. */
static clr_status ranges_done(clr_context *ctx, clr_status st, size_t n_ranges,
                              size_t batches, size_t depth, double t0) {
  if (batches > 1)
    clr_log(ctx, "ranges: %zu ranges in %zu batches", n_ranges, batches);
  clr_timing_done(ctx, batches, depth, t0);
  return st;
}

static clr_status ranges_host_call(clr_context *ctx, const clr_options *opt,
                                   clr_op op, clr_type type, const void *data,
                                   size_t n, const uint64_t *g, size_t n_ranges,
                                   void *results) {
  clr_options defaults;
  double t0 = clr_now_ms();
  clr_status st = start_ranges(ctx, &opt, &defaults, op, type, data, results, n,
                               g, n_ranges);
  if (st == CLR_OK)
    st = check_ranges(ctx, g, n_ranges, n);
  if (st != CLR_OK)
    return st;
  size_t esize = clr_type_size(type);
  size_t rsize = clr_opt_result_bytes(opt, op, type);
  size_t room = 2 * n_ranges + 3;
  uint64_t *offsets = malloc(room * sizeof *offsets);
  unsigned char *res = malloc(room * rsize);
  unsigned char *copy = NULL;
  if (!offsets || !res)
    st = clr_fail(ctx, CLR_ERR_OUT_OF_MEMORY,
                  "out of host memory for %zu ranges", n_ranges);
  size_t batches = 0, depth = 0, r = 0;
  clr_options o = *opt;
  int may_gather = !(opt->map == CLR_MAP_EXPR && expr_reads_i(opt->map_expr));
  while (st == CLR_OK && r < n_ranges) {
    batch t = next_batch(g, n_ranges, r, offsets, may_gather);
    batch_segments(&t, g, n);
    o.index_base = opt->index_base + (t.gathered ? 0 : t.base);
    const unsigned char *span = (const unsigned char *)data + t.base * esize;
    if (t.gathered) {
      free(copy);
      copy = malloc((size_t)t.len * esize);
      if (!copy) {
        st = clr_fail(ctx, CLR_ERR_OUT_OF_MEMORY,
                      "out of host memory to gather %llu elements",
                      (unsigned long long)t.len);
        break;
      }
      size_t at = 0;
      for (size_t i = t.a; i <= t.b; i++) {
        memcpy(copy + at * esize,
               (const unsigned char *)data + g[2 * i] * esize,
               (size_t)g[2 * i + 1] * esize);
        at += (size_t)g[2 * i + 1];
      }
      if (at < t.len) /* the dropped element of an empty batch */
        memcpy(copy + at * esize, data, esize);
      span = copy;
    }
    st = clr_segments_host_call(ctx, &o, op, type, span, (size_t)t.len,
                                t.offsets, t.segments, res);
    for (size_t i = t.a; st == CLR_OK && i <= t.b; i++)
      memcpy((unsigned char *)results + i * rsize,
             res + (t.first + t.step * (i - t.a)) * rsize, rsize);
    note_batch(ctx, &batches, &depth);
    r = t.b + 1;
  }
  free(copy);
  free(res);
  free(offsets);
  return ranges_done(ctx, st, n_ranges, batches, depth, t0);
}

/* A gathered batch on the device: its ranges' elements into ctx->input. */
static clr_status gather_on_device(clr_context *ctx, clr_type type, cl_mem data,
                                   size_t data_offset, const uint64_t *g,
                                   const batch *t) {
  size_t count = t->b - t->a + 1, esize = clr_type_size(type);
  char extra[32];
  snprintf(extra, sizeof extra, "-DCLR_GATHER_BYTES=%zu", esize);
  clr_build_spec spec = {.source = "gather_ranges.cl",
                         .kernel = "clr_gather_ranges",
                         .in = CLR_UINT,
                         .acc = CLR_UINT,
                         .op = CLR_SUM,
                         .extra = extra};
  clr_program_entry *k;
  clr_status st = clr_get_kernel(ctx, &spec, &k);
  if (st == CLR_OK)
    st = clr_buffer_reserve(ctx, &ctx->input, (size_t)t->len * esize,
                            CL_MEM_READ_WRITE);
  if (st != CLR_OK)
    return st;
  /* the batch's ranges, and where each starts in the copy */
  uint64_t *starts = malloc(count * sizeof *starts);
  if (!starts)
    return clr_fail(ctx, CLR_ERR_OUT_OF_MEMORY,
                    "out of host memory for %zu ranges", count);
  for (size_t i = 0; i < count; i++)
    starts[i] = t->offsets[i];
  cl_int err;
  cl_mem rb = clCreateBuffer(ctx->cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                             2 * count * sizeof(cl_ulong),
                             (void *)(uintptr_t)(g + 2 * t->a), &err);
  cl_mem sb = NULL;
  if (err == CL_SUCCESS)
    sb = clCreateBuffer(ctx->cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                        count * sizeof(cl_ulong), starts, &err);
  free(starts);
  if (err != CL_SUCCESS)
    st = clr_cl_fail(ctx, "clCreateBuffer", err);
  cl_mem out = ctx->input.mem;
  cl_ulong off = data_offset;
  if (st == CLR_OK)
    st = CLR_SET_ARGS(ctx, k->kernel, CLR_ARG(data), CLR_ARG(off), CLR_ARG(rb),
                      CLR_ARG(sb), CLR_ARG(out));
  size_t wg = k->max_wg < 256 ? k->max_wg : 256, global = count * wg;
  if (st == CLR_OK) {
    err = clEnqueueNDRangeKernel(clr_queue(ctx), k->kernel, 1, NULL, &global,
                                 &wg, 0, NULL, NULL);
    if (err != CL_SUCCESS)
      st = clr_cl_fail(ctx, "clEnqueueNDRangeKernel", err);
  }
  /* An empty batch's dropped element: the array's first. */
  size_t at = (size_t)t->offsets[count];
  if (st == CLR_OK && at < t->len) {
    err = clEnqueueCopyBuffer(clr_queue(ctx), data, out, data_offset * esize,
                              at * esize, esize, 0, NULL, NULL);
    if (err != CL_SUCCESS)
      st = clr_cl_fail(ctx, "clEnqueueCopyBuffer", err);
  }
  /* (released once the queue's commands using them are done) */
  if (rb)
    clReleaseMemObject(rb);
  if (sb)
    clReleaseMemObject(sb);
  return st;
}

static clr_status ranges_buffer_call(clr_context *ctx, const clr_options *opt,
                                     clr_op op, clr_type type, cl_mem data,
                                     size_t data_offset, size_t n,
                                     cl_mem ranges, size_t ranges_offset,
                                     size_t n_ranges, cl_mem results,
                                     size_t results_offset) {
  clr_options defaults;
  double t0 = clr_now_ms();
  clr_status st = start_ranges(ctx, &opt, &defaults, op, type, data, results, n,
                               ranges, n_ranges);
  if (st == CLR_OK)
    st = clr_check_buffer(ctx, data, data_offset, n, type, CLR_ACCESS_READ,
                          "data");
  if (st == CLR_OK)
    st = clr_check_buffer_elems(ctx, ranges, ranges_offset, 2 * n_ranges,
                                sizeof(cl_ulong), CLR_ACCESS_READ, "ranges");
  size_t rsize = clr_opt_result_bytes(opt, op, type), room = 2 * n_ranges + 3;
  if (st == CLR_OK)
    st = clr_check_buffer_elems(ctx, results, results_offset, n_ranges, rsize,
                                CLR_ACCESS_WRITE, "results");
  if (st != CLR_OK)
    return st;
  uint64_t *g = malloc(2 * n_ranges * sizeof *g);
  uint64_t *offsets = malloc(room * sizeof *offsets);
  if (!g || !offsets) {
    free(g);
    free(offsets);
    return clr_fail(ctx, CLR_ERR_OUT_OF_MEMORY,
                    "out of host memory for %zu ranges", n_ranges);
  }
  cl_int err = clEnqueueReadBuffer(
      clr_queue(ctx), ranges, CL_TRUE, ranges_offset * sizeof(cl_ulong),
      2 * n_ranges * sizeof(cl_ulong), g, 0, NULL, NULL);
  st = err == CL_SUCCESS ? check_ranges(ctx, g, n_ranges, n)
                         : clr_cl_fail(ctx, "clEnqueueReadBuffer", err);
  size_t batches = 0, depth = 0, r = 0;
  clr_options o = *opt;
  int may_gather = !(opt->map == CLR_MAP_EXPR && expr_reads_i(opt->map_expr));
  while (st == CLR_OK && r < n_ranges) {
    batch t = next_batch(g, n_ranges, r, offsets, may_gather);
    batch_segments(&t, g, n);
    o.index_base = opt->index_base + (t.gathered ? 0 : t.base);
    cl_mem offs =
        clCreateBuffer(ctx->cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                       (t.segments + 1) * sizeof(cl_ulong), t.offsets, &err);
    if (err != CL_SUCCESS) {
      st = clr_cl_fail(ctx, "clCreateBuffer", err);
      break;
    }
    cl_mem span = data;
    size_t span_off = data_offset + (size_t)t.base;
    if (t.gathered) {
      st = gather_on_device(ctx, type, data, data_offset, g, &t);
      span = ctx->input.mem;
      span_off = 0;
    }
    /* (one result more than the segments: NVIDIA's driver checks a
     * rectangle's bounds as whole rows of the pitch, the last one too) */
    if (st == CLR_OK)
      st = clr_buffer_reserve(ctx, &ctx->output, (t.segments + 1) * rsize,
                              CL_MEM_READ_WRITE);
    if (st == CLR_OK)
      st = clr_segments_buffer_call(ctx, &o, op, type, span, span_off,
                                    (size_t)t.len, offs, 0, t.segments,
                                    ctx->output.mem, 0);
    /* The ranges' results: every step-th segment from first. */
    size_t count = t.b - t.a + 1;
    if (st == CLR_OK) {
      size_t src[3] = {t.first * rsize, 0, 0},
             dst[3] = {(results_offset + t.a) * rsize, 0, 0},
             region[3] = {rsize, count, 1};
      err = clEnqueueCopyBufferRect(clr_queue(ctx), ctx->output.mem, results,
                                    src, dst, region, t.step * rsize, 0, rsize,
                                    0, 0, NULL, NULL);
      if (err != CL_SUCCESS)
        st = clr_cl_fail(ctx, "clEnqueueCopyBufferRect", err);
    }
    clReleaseMemObject(offs);
    note_batch(ctx, &batches, &depth);
    r = t.b + 1;
  }
  if (st == CLR_OK) {
    err = clFinish(clr_queue(ctx));
    if (err != CL_SUCCESS)
      st = clr_cl_fail(ctx, "clFinish", err);
  }
  free(offsets);
  free(g);
  return ranges_done(ctx, st, n_ranges, batches, depth, t0);
}

CLR_API clr_status clr_reduce_ranges_host(clr_context *ctx,
                                          const clr_options *opt, clr_op op,
                                          clr_type type, const void *data,
                                          size_t n, const uint64_t *ranges,
                                          size_t n_ranges, void *results) {
  CLR_PUBLIC_CALL(ctx, ranges_host_call(ctx, opt, op, type, data, n, ranges,
                                        n_ranges, results));
}

CLR_API clr_status clr_reduce_ranges_buffer(clr_context *ctx,
                                            const clr_options *opt, clr_op op,
                                            clr_type type, cl_mem data,
                                            size_t data_offset, size_t n,
                                            cl_mem ranges, size_t ranges_offset,
                                            size_t n_ranges, cl_mem results,
                                            size_t results_offset) {
  CLR_PUBLIC_CALL(ctx, ranges_buffer_call(ctx, opt, op, type, data, data_offset,
                                          n, ranges, ranges_offset, n_ranges,
                                          results, results_offset));
}
