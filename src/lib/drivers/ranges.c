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

static clr_status ranges_scratch_call(clr_context *ctx, const clr_options *opt,
                                      clr_op op, clr_type type, cl_mem data,
                                      size_t data_offset, size_t n,
                                      cl_mem ranges, size_t ranges_offset,
                                      size_t n_ranges, cl_mem results,
                                      size_t results_offset);

static clr_status ranges_buffer_call(clr_context *ctx, const clr_options *opt,
                                     clr_op op, clr_type type, cl_mem data,
                                     size_t data_offset, size_t n,
                                     cl_mem ranges, size_t ranges_offset,
                                     size_t n_ranges, cl_mem results,
                                     size_t results_offset) {
  clr_options defaults;
  double t0 = clr_now_ms();
  /* In a caller's scratch, whose size is known before the ranges are
   * read: clr_enqueue's passes, waited for (its buffers' sizes do not
   * depend on the ranges; the batches' would). */
  if (ctx->arena)
    return ranges_scratch_call(ctx, opt, op, type, data, data_offset, n, ranges,
                               ranges_offset, n_ranges, results,
                               results_offset);
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

/* ------------------------------------------------------ clr_enqueue */

/* Ranges on the device, nothing read back and nothing waited for
 * (cl/reduce_ranges.cl says how): the ranges checked there (the verdict
 * to the status buffer, a bad range taken as empty: none is read
 * through), the units of every range laid end to end by a prefix of
 * their lengths, a share of them a work-item, the ranges cut at the
 * shares' ends folded by a second pass.  Its buffers are the call's own,
 * released before it returns (OpenCL frees them when the commands are
 * done).  RNG_PER: ranges a work-item of the prefix passes; RNG_SHARES:
 * shares (work-items) a compute unit, per work-group size. */
#define RNG_PER 4
#define RNG_WG 256
#define RNG_SHARES_PER_WG 8

typedef struct rng_call {
  cl_mem mem[10];
  size_t n_mem;
  size_t n_passes;
} rng_call;

/* The call's buffers (their tags in a caller's scratch, scratch.c): the
 * ranges' ends, the blocks' units and bad flags, the total and verdict,
 * the shares' partials and flags, a NaN-skipping mean's counts. */
enum {
  RNG_ENDS,
  RNG_BUNITS,
  RNG_BBAD,
  RNG_META,
  RNG_PARTS,
  RNG_FLAGS,
  RNG_COUNTS,
  RNG_BUFFERS
};
static const char rng_tags[RNG_BUFFERS] = {0};

/* The passes' shape: the prefix passes' kernels and work-group size, the
 * blocks of ranges, the shares (work-items of the items pass). */
typedef struct rng_shape {
  clr_program_entry *blocks_k, *top_k, *prefix_k;
  size_t wg, blocks, wg_items;
  cl_ulong g;
} rng_shape;

static clr_status make_rng_shape(clr_context *ctx, const clr_options *opt,
                                 size_t n_ranges, rng_shape *sh) {
  /* The prefix passes' kernels (any specialisation: they read ulongs). */
  clr_build_spec spec = {.source = "reduce_ranges.cl",
                         .kernel = "clr_ranges_blocks",
                         .in = CLR_ULONG,
                         .acc = CLR_ULONG,
                         .op = CLR_SUM};
  memset(sh, 0, sizeof *sh);
  clr_status st = clr_get_kernel(ctx, &spec, &sh->blocks_k);
  spec.kernel = "clr_ranges_top";
  if (st == CLR_OK)
    st = clr_get_kernel(ctx, &spec, &sh->top_k);
  spec.kernel = "clr_ranges_prefix";
  if (st == CLR_OK)
    st = clr_get_kernel(ctx, &spec, &sh->prefix_k);
  if (st != CLR_OK)
    return st;
  size_t wg = RNG_WG;
  const clr_program_entry *ks[3] = {sh->blocks_k, sh->top_k, sh->prefix_k};
  for (size_t i = 0; i < 3; i++)
    if (ks[i]->max_wg < wg)
      wg = ks[i]->max_wg;
  while (wg > 1 && wg * sizeof(cl_ulong) > ctx->desc.local_mem_size / 2)
    wg /= 2;
  sh->wg = wg;
  size_t per_block = wg * RNG_PER;
  sh->blocks = n_ranges / per_block + (n_ranges % per_block != 0);
  /* The shares: the work-group size the items pass takes (asked for, or
   * 64), RNG_SHARES_PER_WG work-groups a compute unit. */
  size_t wg_items = opt->wg_size ? opt->wg_size : 64;
  if (wg_items > ctx->desc.max_work_group_size)
    wg_items = ctx->desc.max_work_group_size;
  size_t cu = ctx->desc.compute_units ? ctx->desc.compute_units : 1;
  sh->wg_items = wg_items;
  sh->g = (cl_ulong)cu * wg_items * RNG_SHARES_PER_WG;
  return CLR_OK;
}

/* Each buffer's bytes (0: not used; at least 8 otherwise). */
static void rng_sizes(const rng_shape *sh, size_t n_ranges, size_t rsize,
                      int counted, size_t bytes[RNG_BUFFERS]) {
  size_t part_bytes = rsize > sizeof(cl_ulong) ? rsize : sizeof(cl_ulong);
  bytes[RNG_ENDS] = n_ranges * sizeof(cl_ulong);
  bytes[RNG_BUNITS] = bytes[RNG_BBAD] = sh->blocks * sizeof(cl_ulong);
  bytes[RNG_META] = 2 * sizeof(cl_ulong);
  bytes[RNG_PARTS] = 2 * (size_t)sh->g * part_bytes;
  bytes[RNG_FLAGS] = 2 * (size_t)sh->g * sizeof(cl_ulong);
  bytes[RNG_COUNTS] = counted ? n_ranges * sizeof(cl_ulong) : 0;
  for (size_t i = 0; i < RNG_BUFFERS; i++)
    if (i != RNG_COUNTS && bytes[i] < 8)
      bytes[i] = 8;
}

static clr_status rng_buffer(clr_context *ctx, rng_call *c, int which,
                             size_t bytes, cl_mem *out) {
  clr_status st = clr_temp_buffer(ctx, &rng_tags[which], bytes, out);
  if (st == CLR_OK)
    c->mem[c->n_mem++] = *out;
  return st;
}

/* A pass: global work-items (whole work-groups of wg), the first waiting
 * for async's events when wait, the last giving done; its shape noted. */
static clr_status rng_pass(clr_context *ctx, rng_call *c, cl_kernel k,
                           size_t work, size_t wg, const clr_async *wait,
                           cl_event *done) {
  size_t global = (work + wg - 1) / wg * wg;
  cl_int err = clEnqueueNDRangeKernel(
      clr_queue(ctx), k, 1, NULL, &global, &wg, wait ? wait->num_events : 0,
      wait && wait->num_events ? wait->wait_list : NULL, done);
  if (err != CL_SUCCESS)
    return clr_cl_fail(ctx, "clEnqueueNDRangeKernel", err);
  if (c->n_passes < CLR_MAX_PASSES) {
    clr_pass_info *p = &ctx->timing.passes[c->n_passes++];
    memset(p, 0, sizeof *p);
    p->n_in = work;
    p->global_size = global;
    p->local_size = wg;
    ctx->timing.n_passes = c->n_passes;
  }
  return CLR_OK;
}

/* The items and fix passes of one reduction of the ranges (a sum, or a
 * NaN-skipping mean's count) into out from element out_off. */
typedef struct rng_io {
  cl_mem data, ranges, ends, meta, parts, flags, out;
  cl_ulong data_off, ranges_off, n_ranges, n, g, out_off, ibase;
  size_t wg;
} rng_io;

static clr_status rng_reduce(clr_context *ctx, rng_call *c,
                             const clr_options *opt, clr_op op, clr_type type,
                             const rng_io *io, cl_event *done) {
  char prelude[CLR_MAX_MAP_EXPR + 64] = "";
  if (opt->map == CLR_MAP_EXPR)
    snprintf(prelude, sizeof prelude, "#define CLR_MAP_EXPR(x, i) (%s)",
             opt->map_expr);
  clr_build_spec spec = {.source = "reduce_ranges.cl",
                         .kernel = "clr_ranges_items",
                         .in = type,
                         .acc = clr_opt_result_type(opt, op, type),
                         .op = op,
                         .map = opt->map,
                         .prelude = prelude[0] ? prelude : NULL};
  clr_program_entry *items = NULL, *fix = NULL;
  clr_status st = clr_get_kernel(ctx, &spec, &items);
  spec.kernel = "clr_ranges_fix";
  if (st == CLR_OK)
    st = clr_get_kernel(ctx, &spec, &fix);
  size_t wg = io->wg;
  if (st == CLR_OK && (wg > items->max_wg || wg > fix->max_wg))
    wg = items->max_wg < fix->max_wg ? items->max_wg : fix->max_wg;
  if (st == CLR_OK)
    st = CLR_SET_ARGS(
        ctx, items->kernel, CLR_ARG(io->data), CLR_ARG(io->data_off),
        CLR_ARG(io->ranges), CLR_ARG(io->ranges_off), CLR_ARG(io->n_ranges),
        CLR_ARG(io->n), CLR_ARG(io->ends), CLR_ARG(io->meta), CLR_ARG(io->g),
        CLR_ARG(io->out), CLR_ARG(io->out_off), CLR_ARG(io->parts),
        CLR_ARG(io->flags), CLR_ARG(io->ibase));
  if (st == CLR_OK)
    st = rng_pass(ctx, c, items->kernel, (size_t)io->g, wg, NULL, NULL);
  if (st == CLR_OK)
    st = CLR_SET_ARGS(ctx, fix->kernel, CLR_ARG(io->parts), CLR_ARG(io->flags),
                      CLR_ARG(io->g), CLR_ARG(io->out), CLR_ARG(io->out_off));
  if (st == CLR_OK)
    st = rng_pass(ctx, c, fix->kernel, (size_t)io->g, wg, NULL, done);
  return st;
}

/* What a blocking caller of ranges_async_call reads back once its passes
 * are done: the units of every range (meta[0]), the check's verdict
 * (meta[1]), and the shares they were cut into. */
typedef struct rng_readback {
  cl_ulong total, verdict, shares;
} rng_readback;

static clr_status ranges_async_call(clr_context *ctx, const clr_options *opt,
                                    clr_op op, clr_type type, cl_mem data,
                                    size_t data_offset, size_t n, cl_mem ranges,
                                    size_t ranges_offset, size_t n_ranges,
                                    cl_mem results, size_t results_offset,
                                    cl_mem status, size_t status_offset,
                                    const clr_async *async,
                                    rng_readback *back) {
  clr_options defaults;
  clr_status st = start_ranges(ctx, &opt, &defaults, op, type, data, results, n,
                               ranges, n_ranges);
  if (st != CLR_OK)
    return st;
  if (opt->kernel != CLR_REDUCE_COARSE)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "ranges have their own kernel: leave the kernel at its "
                    "default (CLR_KERNEL_DEFAULT, or '%s'), not '%s'",
                    clr_kernel_name(CLR_REDUCE_COARSE),
                    clr_kernel_name(opt->kernel));
  if (opt->exact)
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                    "exact sums of ranges are not implemented");
  if (async->num_events && !async->wait_list)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "%u events to wait for, but no wait list",
                    (unsigned)async->num_events);
  /* every range's units (at most n + 1 each) add up within 64 bits */
  if ((uint64_t)n_ranges > UINT64_MAX / ((uint64_t)n + 1))
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                    "%zu ranges of up to %zu elements overflow the device's "
                    "64-bit count of their elements: use clr_run",
                    n_ranges, n);
  clr_op runs = clr_op_info(op)->runs; /* a mean: its sum */
  int mean = (clr_op_flags(op) & CLR_OPF_MEAN) != 0;
  int counted = mean && clr_mean_counts(op, type);
  size_t rsize = clr_opt_result_bytes(opt, runs, type);
  clr_type mean_t = clr_opt_result_type(opt, CLR_MEAN, type);
  if (mean && mean_t == CLR_DOUBLE && !ctx->desc.has_fp64)
    return clr_fail(ctx, CLR_ERR_NO_FP64,
                    "device '%s' has no double-precision support "
                    "(cl_khr_fp64) for a mean of %s",
                    ctx->desc.device_name, clr_type_name(type));
  st = clr_check_buffer(ctx, data, data_offset, n, type, CLR_ACCESS_READ,
                        "data");
  if (st == CLR_OK)
    st = clr_check_buffer_elems(ctx, ranges, ranges_offset, 2 * n_ranges,
                                sizeof(cl_ulong), CLR_ACCESS_READ, "ranges");
  if (st == CLR_OK)
    st = clr_check_buffer_elems(ctx, results, results_offset, n_ranges, rsize,
                                CLR_ACCESS_WRITE, "results");
  if (st == CLR_OK && status)
    st = clr_check_buffer_elems(ctx, status, status_offset, 1, sizeof(cl_ulong),
                                CLR_ACCESS_WRITE, "status");
  if (st == CLR_OK && status) { /* the verdict overwrites none of them */
    size_t esize = clr_type_size(type), at = status_offset * sizeof(cl_ulong);
    const struct {
      cl_mem mem;
      size_t from, bytes;
      const char *what;
    } used[3] = {
        {data, data_offset * esize, n * esize, "data"},
        {ranges, ranges_offset * sizeof(cl_ulong),
         2 * n_ranges * sizeof(cl_ulong), "ranges"},
        {results, results_offset * rsize, n_ranges * rsize, "results"}};
    for (size_t i = 0; i < 3 && st == CLR_OK; i++)
      if (used[i].mem == status && at < used[i].from + used[i].bytes &&
          used[i].from < at + sizeof(cl_ulong))
        st = clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "the status (byte %zu of its buffer) lies in the %s", at,
                      used[i].what);
  }
  if (st != CLR_OK)
    return st;

  rng_shape sh;
  st = make_rng_shape(ctx, opt, n_ranges, &sh);
  if (st == CLR_OK)
    st = clr_moments_finish_prepare(ctx, op, type,
                                    clr_opt_result_type(opt, runs, type));
  if (st != CLR_OK)
    return st;
  clr_program_entry *blocks_k = sh.blocks_k, *top_k = sh.top_k,
                    *prefix_k = sh.prefix_k;
  size_t wg = sh.wg, blocks = sh.blocks;
  size_t wg_items = sh.wg_items;
  cl_ulong g = sh.g;

  rng_call c = {.n_mem = 0};
  ctx->timing.n_passes = 0;
  size_t bytes[RNG_BUFFERS];
  rng_sizes(&sh, n_ranges, rsize, counted, bytes);
  cl_mem m[RNG_BUFFERS] = {NULL};
  for (int i = 0; i < RNG_BUFFERS && st == CLR_OK; i++)
    if (bytes[i])
      st = rng_buffer(ctx, &c, i, bytes[i], &m[i]);
  cl_mem ends = m[RNG_ENDS], bunits = m[RNG_BUNITS], bbad = m[RNG_BBAD],
         meta = m[RNG_META], parts = m[RNG_PARTS], flags = m[RNG_FLAGS],
         counts = m[RNG_COUNTS];

  cl_ulong r_off = ranges_offset, nr = n_ranges, nn = n, per = RNG_PER,
           nb = blocks, s_off = status_offset;
  cl_uint s_given = status != NULL;
  cl_mem s_mem = status ? status : meta;
  if (st == CLR_OK)
    st = CLR_SET_ARGS(ctx, blocks_k->kernel, CLR_ARG(ranges), CLR_ARG(r_off),
                      CLR_ARG(nr), CLR_ARG(nn), CLR_ARG(per), CLR_ARG(bunits),
                      CLR_ARG(bbad), CLR_LOCAL(wg * sizeof(cl_ulong)));
  if (st == CLR_OK)
    st = rng_pass(ctx, &c, blocks_k->kernel, blocks * wg, wg, async, NULL);
  if (st == CLR_OK)
    st =
        CLR_SET_ARGS(ctx, top_k->kernel, CLR_ARG(bunits), CLR_ARG(bbad),
                     CLR_ARG(nb), CLR_ARG(meta), CLR_ARG(s_mem), CLR_ARG(s_off),
                     CLR_ARG(s_given), CLR_LOCAL(wg * sizeof(cl_ulong)));
  if (st == CLR_OK)
    st = rng_pass(ctx, &c, top_k->kernel, wg, wg, NULL, NULL);
  if (st == CLR_OK)
    st = CLR_SET_ARGS(ctx, prefix_k->kernel, CLR_ARG(ranges), CLR_ARG(r_off),
                      CLR_ARG(nr), CLR_ARG(nn), CLR_ARG(per), CLR_ARG(bunits),
                      CLR_ARG(ends), CLR_LOCAL(wg * sizeof(cl_ulong)));
  if (st == CLR_OK)
    st = rng_pass(ctx, &c, prefix_k->kernel, blocks * wg, wg, NULL, NULL);

  rng_io io = {data,           ranges,          ends,    meta,
               parts,          flags,           results, data_offset,
               ranges_offset,  n_ranges,        n,       g,
               results_offset, opt->index_base, wg_items};
  /* var and std: the passes leave a (mean, M2, count) record per range,
   * which the finish, chained after them, makes (value, mean, count) in
   * place (the host calls' segments are finished by their driver). */
  int moments = clr_op_is_moments(op);
  if (st == CLR_OK)
    st = rng_reduce(ctx, &c, opt, runs, type, &io,
                    mean || moments ? NULL : async->done);
  if (st == CLR_OK && moments)
    st = clr_moments_finish_enqueue(
        ctx, opt, op, type, clr_opt_result_type(opt, runs, type), results,
        results_offset, n_ranges, NULL, async->done);
  if (st == CLR_OK && counted) { /* the counts of numbers, as a sum */
    clr_options co;
    char expr[CLR_MAX_MAP_EXPR + CLR_COUNT_EXPR_EXTRA];
    clr_count_options(opt, &co, expr, sizeof expr);
    rng_io cio = io;
    cio.out = counts;
    cio.out_off = 0;
    st = rng_reduce(ctx, &c, &co, CLR_SUM, type, &cio, NULL);
  }
  if (st == CLR_OK && mean) {
    char extra[64];
    snprintf(extra, sizeof extra, "-DCLR_RNG_MEAN=%d -DCLR_RNG_WIDE=%d",
             mean_t == CLR_DOUBLE ? 2 : 1, ctx->desc.has_fp64 ? 1 : 0);
    clr_build_spec ms = {.source = "reduce_ranges.cl",
                         .kernel = "clr_ranges_mean",
                         .in = type,
                         .acc = clr_opt_result_type(opt, runs, type),
                         .op = CLR_SUM,
                         .extra = extra};
    clr_program_entry *mk = NULL;
    st = clr_get_kernel(ctx, &ms, &mk);
    cl_uint given = counted;
    cl_mem cnt = counted ? counts : ends;
    cl_ulong o_off = results_offset;
    if (st == CLR_OK)
      st = CLR_SET_ARGS(ctx, mk->kernel, CLR_ARG(ranges), CLR_ARG(r_off),
                        CLR_ARG(nr), CLR_ARG(nn), CLR_ARG(cnt), CLR_ARG(given),
                        CLR_ARG(results), CLR_ARG(o_off));
    size_t mwg = mk && mk->max_wg < 64 ? mk->max_wg : 64;
    if (st == CLR_OK)
      st = rng_pass(ctx, &c, mk->kernel, n_ranges, mwg, NULL, async->done);
  }
  if (st == CLR_OK && back) { /* read after every pass (in order) */
    cl_ulong m2[2] = {0, 0};
    cl_int err = clEnqueueReadBuffer(clr_queue(ctx), meta, CL_TRUE, 0,
                                     sizeof m2, m2, 0, NULL, NULL);
    if (err != CL_SUCCESS)
      st = clr_cl_fail(ctx, "clEnqueueReadBuffer", err);
    back->total = m2[0];
    back->verdict = m2[1];
    back->shares = g;
  }
  for (size_t i = 0; i < c.n_mem; i++)
    clReleaseMemObject(c.mem[i]);
  ctx->timing.chunks = 1;
  /* Enqueued, the units' total is not read back: the chain of the worst
   * share a range can meet (ranges_scratch_call's, at a share of n). */
  if (!back)
    ctx->timing.error_depth = n + 4;
  return st;
}

/* clr_run in a caller's scratch: the passes above (their buffers, all
 * known before the ranges are read, are the scratch's), waited for; a
 * bad range refused as ranges_buffer_call refuses it (the results then
 * unspecified). */
static clr_status ranges_scratch_call(clr_context *ctx, const clr_options *opt,
                                      clr_op op, clr_type type, cl_mem data,
                                      size_t data_offset, size_t n,
                                      cl_mem ranges, size_t ranges_offset,
                                      size_t n_ranges, cl_mem results,
                                      size_t results_offset) {
  clr_async none = {.num_events = 0};
  rng_readback back = {0, 0, 1};
  double t0 = clr_now_ms();
  clr_status st = ranges_async_call(ctx, opt, op, type, data, data_offset, n,
                                    ranges, ranges_offset, n_ranges, results,
                                    results_offset, NULL, 0, &none, &back);
  /* A range's chain: its piece in a share, one element after another,
   * then the pieces of the shares it spans folded in order (and a mean's
   * division). */
  cl_ulong share = back.total / back.shares + 1;
  size_t depth = (size_t)(n < share ? n : share) + (size_t)(n / share) + 3;
  if (st == CLR_OK && back.verdict) {
    cl_ulong bad[2] = {0, 0};
    size_t r = (size_t)back.verdict - 1;
    cl_int err = clEnqueueReadBuffer(clr_queue(ctx), ranges, CL_TRUE,
                                     (ranges_offset + 2 * r) * sizeof(cl_ulong),
                                     sizeof bad, bad, 0, NULL, NULL);
    st = err != CL_SUCCESS
             ? clr_cl_fail(ctx, "clEnqueueReadBuffer", err)
             : clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                        "range %zu = (offset %llu, length %llu) ends past n "
                        "= %zu",
                        r, (unsigned long long)bad[0],
                        (unsigned long long)bad[1], n);
  }
  return ranges_done(ctx, st, n_ranges, 1, depth, t0);
}

clr_status clr_ranges_scratch(clr_context *ctx, const clr_options *opt,
                              clr_op op, clr_type type, size_t n,
                              size_t n_ranges, clr_scratch_plan *sp) {
  clr_options defaults;
  int one = 1;
  clr_status st = start_ranges(ctx, &opt, &defaults, op, type, &one, &one, n,
                               &one, n_ranges);
  if (st != CLR_OK)
    return st;
  if (opt->kernel != CLR_REDUCE_COARSE)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "ranges have their own kernel: leave the kernel at its "
                    "default (CLR_KERNEL_DEFAULT, or '%s'), not '%s'",
                    clr_kernel_name(CLR_REDUCE_COARSE),
                    clr_kernel_name(opt->kernel));
  if (opt->exact)
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                    "exact sums of ranges are not implemented");
  if ((uint64_t)n_ranges > UINT64_MAX / ((uint64_t)n + 1))
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                    "%zu ranges of up to %zu elements overflow the device's "
                    "64-bit count of their elements, which a caller's "
                    "scratch takes: use clr_run without scratch",
                    n_ranges, n);
  clr_op runs = clr_op_info(op)->runs;
  rng_shape sh;
  size_t bytes[RNG_BUFFERS];
  st = make_rng_shape(ctx, opt, n_ranges, &sh);
  if (st != CLR_OK)
    return st;
  rng_sizes(&sh, n_ranges, clr_opt_result_bytes(opt, runs, type),
            clr_mean_counts(op, type), bytes);
  for (int i = 0; i < RNG_BUFFERS; i++)
    if (bytes[i])
      clr_scratch_need(sp, &rng_tags[i], bytes[i]);
  return CLR_OK;
}

clr_status clr_ranges_enqueue(clr_context *ctx, const clr_options *opt,
                              clr_op op, clr_type type, cl_mem data,
                              size_t data_offset, size_t n, cl_mem ranges,
                              size_t ranges_offset, size_t n_ranges,
                              cl_mem results, size_t results_offset,
                              cl_mem status, size_t status_offset,
                              cl_uint num_events, const cl_event *wait_list,
                              cl_event *event) {
  clr_async async;
  if (!ctx)
    return CLR_ERR_INVALID_ARGUMENT;
  clr_begin_async_call(ctx, &async, num_events, wait_list, event);
  clr_status st = ranges_async_call(
      ctx, opt, op, type, data, data_offset, n, ranges, ranges_offset, n_ranges,
      results, results_offset, status, status_offset, &async, NULL);
  return clr_end_async_call(ctx, st);
}
