/* The segmented reduction driver (cl/reduce_segmented.cl): one result per
 * segment of CSR offsets.  The offsets are checked first (on the host, or
 * for a cl_mem on the device, before anything reads data through them);
 * then each launch runs the work-items' pass over an equal share of
 * elements and segment ends (merge path), builds the carry pyramid and
 * finishes the segments that span work-items.  Host arrays larger than
 * one device allocation are streamed in chunks, a launch each: the
 * segment open at a chunk's end leaves its partial in the results for the
 * next launch to continue. */
#include "internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Units (elements + segment ends) per work-item.  The contiguous layout
 * (CPUs) gives each work-item a long run of its own (which amortises its
 * binary search); the strided one (GPUs) gives a work-group a tile,
 * SEG_TILE_WG work-items of tuning's segments.units units (16 by default,
 * 18 on the H100; segments.units_wide for 8-byte results: 8, 14), read into
 * local memory with consecutive work-items on consecutive elements
 * (clr_seg_tiles).  On an H100, work-groups of 128 beat 256 by 5 to 7%
 * (docs/perf-log/segments.md).  SEG_BLOCK: the block of the carry pyramid. */
#define SEG_ITEMS_CPU 2048
#define SEG_TILE_WG 128
#define SEG_BLOCK 32
/* Tile bounds from the segments' side (clr_seg_partition's by_segment)
 * where no segment spans more than this many tiles: each of its
 * work-items then writes a few bounds at most.  On an H100, 1e6 random
 * segments' whole kernel went from 0.2134 to 0.2094 ms (the search is 20
 * dependent reads a tile; this pass reads the 8 MB of offsets once, in
 * 8.5 us). */
#define SEG_SHORT_TILES 4
#define SEG_MAX_ITEMS ((size_t)1 << 32)
/* Rows (cl/reduce_rows.cl): a work-group a row, of this size by default,
 * for rows of ROWS_MIN_LEN..ROWS_MAX_LEN elements and at least
 * ROWS_PER_CU rows a compute unit: where the H100 measured it no slower
 * than the merge path at 1e7 and 1e8 elements (docs/perf-log/segments.md, "Rows
 * in one launch": 10000 rows of 1000 in 0.0212 ms against 0.0416; rows of
 * 16384 0.2234 ms against 0.1748, of 100 0.61 ms against 0.25). */
#define ROWS_WG 64
#define ROWS_MIN_LEN 512
#define ROWS_MAX_LEN 8192
#define ROWS_PER_CU 4

typedef struct seg_plan {
  clr_op op; /* what the kernels compute: a mean's sum */
  int mean;  /* CLR_MEAN: the sums divided by the lengths after */
  clr_type in, acc;
  size_t acc_bytes; /* a result, carry or partial: clr_result_bytes (a
                       record for argmin, argmax, minmax) */
  size_t val_bytes; /* a mapped element in a tile: the accumulator's size */
  int tiled;        /* clr_seg_tiles: a tile a work-group */
  size_t ipt;       /* tiles: units a work-item (CLR_SEG_IPT) */
  int shfl;         /* tiles: warp shuffles (CLR_SEG_SHFL, NVIDIA) */
  size_t items_per; /* units per work-item (CLR_SEG_ITEMS), or per tile */
  unsigned vec;     /* elements a load (CLR_VEC) */
  clr_program_entry *items, *blocks, *finish;
  clr_program_entry *partition; /* tiles: their bounds */
  size_t wg, wg_rest; /* the first pass's work-group size, the others' */
  size_t launches;
  size_t depth;   /* longest rounding chain of any launch */
  size_t longest; /* units (elements + 1) of the longest segment, or
                     SIZE_MAX when unknown (offsets in a cl_mem) */
  cl_ulong ibase; /* a map expression's i of element 0 (index_base) */
  char prelude[CLR_MAX_MAP_EXPR + 64];
} seg_plan;

/* What the call may be: every operation the plain reduction computes (its
 * checks came first), with the segmented kernel's options. */
static clr_status check_segmented(clr_context *ctx, const clr_options *opt,
                                  size_t n_segments) {
  /* CLR_KERNEL_DEFAULT was made the coarse kernel (clr_start_work) */
  if (opt->kernel != CLR_REDUCE_COARSE)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "segmented reductions have their own kernel: leave the "
                    "kernel at its default (CLR_KERNEL_DEFAULT, or '%s'), not "
                    "'%s'",
                    clr_kernel_name(CLR_REDUCE_COARSE),
                    clr_kernel_name(opt->kernel));
  if (opt->exact)
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                    "exact segmented sums are not implemented");
  if (n_segments == 0)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "n_segments must be at least 1");
  if (n_segments > SIZE_MAX / sizeof(cl_ulong) - 1)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "%zu segments exceed the address space", n_segments);
  return CLR_OK;
}

clr_status clr_check_offsets(clr_context *ctx, const uint64_t *offsets,
                             size_t n_segments, size_t n, size_t *longest) {
  if (offsets[0] != 0)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "offsets[0] is %llu: the first segment starts at 0",
                    (unsigned long long)offsets[0]);
  *longest = 0;
  for (size_t s = 0; s < n_segments; s++) {
    if (offsets[s + 1] < offsets[s])
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "offsets[%zu] = %llu is below offsets[%zu] = %llu: "
                      "offsets never decrease",
                      s + 1, (unsigned long long)offsets[s + 1], s,
                      (unsigned long long)offsets[s]);
    if (offsets[s + 1] - offsets[s] + 1 > *longest)
      *longest = (size_t)(offsets[s + 1] - offsets[s] + 1);
  }
  if (offsets[n_segments] != n)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "offsets[%zu] = %llu, not n = %zu: the last segment ends "
                    "at n",
                    n_segments, (unsigned long long)offsets[n_segments], n);
  return CLR_OK;
}

/* The start of every segmented call: the options (the defaults for
 * NULL), the checks of every reduction, then the segmented ones. */
static clr_status start_segments(clr_context *ctx, const clr_options **opt,
                                 clr_options *defaults, clr_op op,
                                 clr_type type, const void *data,
                                 const void *results, size_t n,
                                 size_t n_segments) {
  clr_status st = clr_start_work(ctx, opt, defaults, data, results,
                                 "data and results", op, type, n, 0);
  return st == CLR_OK ? check_segmented(ctx, *opt, n_segments) : st;
}

static clr_status make_seg_plan(clr_context *ctx, const clr_options *opt,
                                clr_op op, clr_type type, seg_plan *p) {
  memset(p, 0, sizeof *p);
  p->longest = SIZE_MAX; /* unknown until the host has seen the offsets */
  /* A mean is the sum, divided once every segment's is there (sums and
   * means of one type have one size). */
  p->mean = (clr_op_flags(op) & CLR_OPF_MEAN) != 0;
  op = clr_op_info(op)->runs;
  p->op = op;
  p->in = type;
  p->acc = clr_opt_result_type(opt, op, type);
  p->val_bytes = clr_type_size(p->acc);
  p->ibase = opt->index_base;
  p->acc_bytes = clr_opt_result_bytes(opt, op, type);
  /* The layout, and CLR_VEC elements a load, as the coarse reduction
   * chooses them (the tuned layout and load width); coarse counts units
   * here, not vectors, and vector_width is no segmented option. */
  clr_options shape = *opt;
  shape.coarse = 0;
  shape.vector_width = 0;
  clr_layout layout;
  clr_choose_coarse_shape(ctx, &shape, type, p->acc,
                          ctx->tuning.reduce_vec_bytes, &p->vec, &layout);
  p->tiled = layout == CLR_LAYOUT_STRIDED;
  if (opt->map == CLR_MAP_EXPR)
    snprintf(p->prelude, sizeof p->prelude, "#define CLR_MAP_EXPR(x, i) (%s)",
             opt->map_expr);
  char extra[160];
  size_t ipt = 1;
  if (p->tiled) {
    /* The tile's work-group size is built in: asked for, else
     * SEG_TILE_WG within the device's limit; then the units a
     * work-item, so the tile (its elements and ends, and the
     * work-items' partials) fits the device's local memory. */
    p->wg = clr_built_in_wg(ctx, opt->wg_size, SEG_TILE_WG);
    if (p->wg > ctx->desc.max_work_group_size)
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "work-group size %zu exceeds the device's limit of %zu",
                      p->wg, ctx->desc.max_work_group_size);
    ipt = opt->coarse        ? opt->coarse
          : p->val_bytes > 4 ? ctx->tuning.seg_units_wide
                             : ctx->tuning.seg_units;
    if (ipt > ctx->desc.local_mem_size) /* no product below can wrap */
      ipt = (size_t)ctx->desc.local_mem_size;
    while (ipt > 1 && p->wg * ipt * (p->val_bytes + 4) * 33 / 32 +
                              (p->wg + 1) * p->acc_bytes + 256 >
                          ctx->desc.local_mem_size)
      ipt /= 2;
    p->items_per = p->wg * ipt;
    p->ipt = ipt;
    /* Warp shuffles (inline PTX) combine the partials on NVIDIA's OpenCL,
     * in work-groups of whole warps of 32. */
    p->shfl = clr_device_takes_ptx(ctx) && ctx->tuning.warp_shuffles &&
              p->wg % 32 == 0;
    snprintf(extra, sizeof extra,
             "-DCLR_SEG_ITEMS=%zu -DCLR_SEG_BLOCK=%d -DCLR_SEG_WG=%zu "
             "-DCLR_SEG_IPT=%zu%s",
             p->items_per, SEG_BLOCK, p->wg, ipt,
             p->shfl ? " -DCLR_SEG_SHFL=1" : "");
  } else {
    /* More than 2^32 units a work-item is one work-item for any input
     * this side of 2^32 units, and keeps the kernel's sums from wrapping. */
    p->items_per = opt->coarse ? opt->coarse : SEG_ITEMS_CPU;
    if (p->items_per > SEG_MAX_ITEMS)
      p->items_per = SEG_MAX_ITEMS;
    snprintf(extra, sizeof extra, "-DCLR_SEG_ITEMS=%zu -DCLR_SEG_BLOCK=%d",
             p->items_per, SEG_BLOCK);
  }
  clr_build_spec spec = {.source = "reduce_segmented.cl",
                         .helpers = "load_mapped.cl",
                         .kernel = p->tiled ? "clr_seg_tiles" : "clr_seg_items",
                         .in = type,
                         .acc = p->acc,
                         .op = op,
                         .vec = p->vec,
                         .map = opt->map,
                         .extra = extra,
                         .prelude = p->prelude[0] ? p->prelude : NULL};
  clr_status st = clr_get_kernel(ctx, &spec, &p->items);
  if (st == CLR_ERR_BUILD && p->shfl) {
    /* A driver that refuses the inline PTX gets the portable combine. */
    p->shfl = 0;
    *strstr(extra, " -DCLR_SEG_SHFL=1") = '\0';
    st = clr_get_kernel(ctx, &spec, &p->items);
  }
  spec.kernel = "clr_seg_partition";
  if (st == CLR_OK && p->tiled)
    st = clr_get_kernel(ctx, &spec, &p->partition);
  spec.kernel = "clr_seg_blocks";
  if (st == CLR_OK)
    st = clr_get_kernel(ctx, &spec, &p->blocks);
  spec.kernel = "clr_seg_finish";
  if (st == CLR_OK)
    st = clr_get_kernel(ctx, &spec, &p->finish);
  if (st == CLR_OK && p->tiled && p->items->max_wg < p->wg)
    st = clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                  "work-group size %zu exceeds this kernel's limit of %zu on "
                  "'%s'",
                  p->wg, p->items->max_wg, ctx->desc.device_name);
  if (st == CLR_OK && !p->tiled)
    st = clr_choose_wg(ctx, p->items, opt->wg_size, 0, p->acc_bytes, 0, &p->wg);
  /* The pyramid and the finishing pass take the same size, or less. */
  p->wg_rest = p->wg;
  if (st == CLR_OK && p->wg_rest > p->finish->max_wg)
    p->wg_rest = p->finish->max_wg;
  if (st == CLR_OK && p->wg_rest > p->blocks->max_wg)
    p->wg_rest = p->blocks->max_wg;
  if (st == CLR_OK && p->tiled && p->wg_rest > p->partition->max_wg)
    p->wg_rest = p->partition->max_wg;
  return st;
}

static clr_status enqueue(clr_context *ctx, cl_kernel k, size_t work, size_t wg,
                          cl_event *ev) {
  size_t global = (work + wg - 1) / wg * wg;
  cl_int err = clEnqueueNDRangeKernel(clr_queue(ctx), k, 1, NULL, &global, &wg,
                                      0, NULL, ev);
  if (err != CL_SUCCESS) {
    if (ev)
      *ev = NULL;
    return clr_cl_fail(ctx, "clEnqueueNDRangeKernel", err);
  }
  return CLR_OK;
}

/* One kernel over work items (rounded up to whole work-groups of wg), run
 * to completion, its time added to the call's kernel time. */
static clr_status run_timed(clr_context *ctx, cl_kernel k, size_t work,
                            size_t wg) {
  cl_event ev = NULL;
  clr_status st = enqueue(ctx, k, work, wg, &ev);
  if (st == CLR_OK) {
    cl_int err = clWaitForEvents(1, &ev);
    if (err != CL_SUCCESS)
      st = clr_cl_fail(ctx, "clWaitForEvents", err);
    else
      ctx->timing.kernel_ms += clr_event_ms(ev, ev);
  }
  if (ev)
    clReleaseEvent(ev);
  return st;
}

/* A launch's work-items and carry pyramid: the carries, then block folds
 * until a level is at most 2 blocks long. */
typedef struct seg_shape {
  cl_ulong items;
  size_t levels, pyramid; /* levels, and the values of all of them */
} seg_shape;

static seg_shape launch_shape(const seg_plan *p, cl_ulong len,
                              cl_ulong closes) {
  seg_shape sh;
  cl_ulong units = len + closes;
  sh.items = units / p->items_per + (units % p->items_per != 0);
  sh.levels = 1;
  sh.pyramid = (size_t)sh.items;
  /* No segment spans more than 2 blocks of items: clr_seg_finish folds
   * its items directly, and no level is built (two launches fewer). */
  if (p->longest / p->items_per + 2 <= 2 * SEG_BLOCK)
    return sh;
  for (cl_ulong size = sh.items; size > 2 * SEG_BLOCK; sh.levels++) {
    size = (size + SEG_BLOCK - 1) / SEG_BLOCK;
    sh.pyramid += (size_t)size;
  }
  return sh;
}

/* The launch buffers for a shape at least as large as every launch of
 * the call: reserved once, so no buffer is replaced between launches.
 * sp (a caller's scratch's plan, else NULL): named there instead, nothing
 * reserved. */
static clr_status reserve_launch(clr_context *ctx, const seg_plan *p,
                                 const seg_shape *sh, clr_scratch_plan *sp) {
  size_t items = (size_t)sh->items;
  if (sp) {
    clr_scratch_need(sp, &ctx->aux[0], sh->pyramid * p->acc_bytes);
    clr_scratch_need(sp, &ctx->aux[1], items * p->acc_bytes);
    clr_scratch_need(sp, &ctx->partial[0], items * sizeof(cl_ulong));
    if (p->tiled)
      clr_scratch_need(sp, &ctx->tile_bounds,
                       (items + 1) * 2 * sizeof(cl_ulong));
    return CLR_OK;
  }
  clr_status st = clr_buffer_reserve(
      ctx, &ctx->aux[0], sh->pyramid * p->acc_bytes, CL_MEM_READ_WRITE);
  if (st == CLR_OK)
    st = clr_buffer_reserve(ctx, &ctx->aux[1], items * p->acc_bytes,
                            CL_MEM_READ_WRITE);
  if (st == CLR_OK)
    st = clr_buffer_reserve(ctx, &ctx->partial[0], items * sizeof(cl_ulong),
                            CL_MEM_READ_WRITE);
  if (st == CLR_OK && p->tiled)
    st = clr_buffer_reserve(ctx, &ctx->tile_bounds,
                            (items + 1) * 2 * sizeof(cl_ulong),
                            CL_MEM_READ_WRITE);
  return st;
}

/* clr_seg_tiles's argument after the thirteen it shares with clr_seg_items
 * (cl/reduce_segmented.cl): where each tile starts. */
enum { SEG_ARG_TILE_BOUNDS = 13 };

/* One launch: elements [lo, lo + len) of the whole input (element lo at
 * element data_off of data), and the `closes` segments that close in it,
 * whose offsets start at element offsets_off of offsets and whose results
 * at element out_off of out; with open_end, one more segment is open at
 * the launch's end (its partial goes to out too). */
typedef struct seg_launch_io {
  cl_mem data, offsets, out;
  cl_ulong data_off, offsets_off, out_off;
  cl_ulong lo, len, closes;
  cl_int open_end;
} seg_launch_io;

/* done (an enqueued call's, else NULL): nothing is waited for, the passes
 * get their shapes but no times, and *done receives the finish's event
 * (the caller releases it). */
static clr_status seg_launch(clr_context *ctx, seg_plan *p,
                             const seg_launch_io *io, cl_event *done) {
  /* Events on the launch's first pass and its last (the finish) only: the
   * queue is in order, and on NVIDIA's OpenCL an event on the tile pass
   * too cost 1e6 random segments 0.0025 ms (an H100, profiling queue). */
  cl_event first = NULL, last = NULL;
  seg_shape sh = launch_shape(p, io->len, io->closes);
  cl_ulong items = sh.items;
  size_t levels = sh.levels;
  if (levels > 16)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "%llu work-items need too deep a carry pyramid",
                    (unsigned long long)items);
  clr_status st = reserve_launch(ctx, p, &sh, NULL);
  if (st != CLR_OK)
    return st;
  cl_mem pyramid = ctx->aux[0].mem, head = ctx->aux[1].mem,
         pending = ctx->partial[0].mem;
  if (p->tiled) { /* first where each tile starts */
    cl_mem bounds = ctx->tile_bounds.mem;
    cl_uint by_segment = p->longest <= SEG_SHORT_TILES * p->items_per;
    st = CLR_SET_ARGS(ctx, p->partition->kernel, CLR_ARG(io->offsets),
                      CLR_ARG(io->offsets_off), CLR_ARG(io->lo),
                      CLR_ARG(io->len), CLR_ARG(io->closes), CLR_ARG(items),
                      CLR_ARG(bounds), CLR_ARG(by_segment));
    if (st == CLR_OK)
      st = enqueue(ctx, p->partition->kernel,
                   by_segment ? (size_t)io->closes + 1 : (size_t)items + 1,
                   p->wg_rest, &first);
    if (st == CLR_OK)
      st = clr_set_arg_at(ctx, p->items->kernel, SEG_ARG_TILE_BOUNDS,
                          CLR_ARG(bounds));
  }
  if (st == CLR_OK)
    st = CLR_SET_ARGS(ctx, p->items->kernel, CLR_ARG(io->data),
                      CLR_ARG(io->data_off), CLR_ARG(io->lo), CLR_ARG(io->len),
                      CLR_ARG(io->offsets), CLR_ARG(io->offsets_off),
                      CLR_ARG(io->closes), CLR_ARG(io->out),
                      CLR_ARG(io->out_off), CLR_ARG(pyramid), CLR_ARG(head),
                      CLR_ARG(pending), CLR_ARG(p->ibase));
  /* Tiles: a work-group each; else a work-item each. */
  if (st == CLR_OK)
    st = enqueue(ctx, p->items->kernel, (size_t)items * (p->tiled ? p->wg : 1),
                 p->wg, p->tiled ? NULL : &first);
  cl_ulong src = 0, size = items;
  for (size_t k = 1; k < levels && st == CLR_OK; k++) {
    cl_ulong dst = src + size;
    st = CLR_SET_ARGS(ctx, p->blocks->kernel, CLR_ARG(pyramid), CLR_ARG(src),
                      CLR_ARG(size), CLR_ARG(dst));
    size = (size + SEG_BLOCK - 1) / SEG_BLOCK;
    if (st == CLR_OK)
      st = enqueue(ctx, p->blocks->kernel, (size_t)size, p->wg_rest, NULL);
    src = dst;
  }
  cl_uint n_levels = (cl_uint)levels;
  if (st == CLR_OK)
    st = CLR_SET_ARGS(
        ctx, p->finish->kernel, CLR_ARG(io->offsets), CLR_ARG(io->offsets_off),
        CLR_ARG(io->lo), CLR_ARG(io->closes), CLR_ARG(io->open_end),
        CLR_ARG(items), CLR_ARG(io->out), CLR_ARG(io->out_off),
        CLR_ARG(pyramid), CLR_ARG(n_levels), CLR_ARG(head), CLR_ARG(pending));
  if (st == CLR_OK)
    st = enqueue(ctx, p->finish->kernel, (size_t)items + 1, p->wg_rest, &last);
  if (st == CLR_OK && !done) {
    cl_int err = clWaitForEvents(1, &last);
    if (err != CL_SUCCESS)
      st = clr_cl_fail(ctx, "clWaitForEvents", err);
  }
  if (st == CLR_OK) {
    if (!done)
      ctx->timing.kernel_ms += clr_event_ms(first, last);
    if (p->launches == 0) { /* the passes shown: items, then finish */
      clr_call_timing *t = &ctx->timing;
      size_t work[2] = {(size_t)items, (size_t)items + 1};
      /* Tiles: from the partition's end to the finish's start (the carry
       * pyramid and the gaps between launches included). */
      double ms[2] = {done       ? 0
                      : p->tiled ? clr_event_gap_ms(first, last)
                                 : clr_event_ms(first, first),
                      done ? 0 : clr_event_ms(last, last)};
      t->n_passes = 2;
      for (size_t k = 0; k < 2; k++) {
        t->passes[k].n_in = k == 0 ? (size_t)io->len : work[k];
        size_t wg = k == 0 ? p->wg : p->wg_rest;
        t->passes[k].local_size = wg;
        t->passes[k].global_size =
            k == 0 && p->tiled ? work[k] * wg : (work[k] + wg - 1) / wg * wg;
        t->passes[k].ms = ms[k];
      }
    }
    /* Roundings: a work-item's run of a segment (a chain per vector lane,
     * the lanes' fold, the scalar rest, the combine), a block fold per
     * level, the range's reads (two part-blocks per level), and the
     * combines around them; and one more per launch a segment spans. */
    /* (A tile: a work-item's run, then the fold of the work-items'
     * partials before it, then its own.) */
    size_t run =
        p->tiled ? p->ipt + p->wg + 2
                 : p->items_per / p->vec + clr_ceil_log2(p->vec) + p->vec + 1;
    size_t depth = run + levels * SEG_BLOCK + 2 * SEG_BLOCK * levels + 3;
    if (depth + p->launches > p->depth)
      p->depth = depth + p->launches;
    p->launches++;
    if (done) { /* handed over */
      *done = last;
      last = NULL;
    }
  }
  if (first)
    clReleaseEvent(first);
  if (last)
    clReleaseEvent(last);
  return st;
}

/* How a host array is cut into launches: at most `chunk` elements (one
 * device allocation, or the context's max_chunk_bytes) and at most
 * `seg_cap` segments closing in each, so its data, offsets and results
 * each fit in one allocation.  A launch's segments are those that close
 * in it; the segment open at its end continues in the next.  A launch may
 * hold no element at all (only empty segments, more than seg_cap of
 * them at one place). */
typedef struct seg_cutter {
  const uint64_t *offsets;
  size_t n, n_segments, chunk, seg_cap;
} seg_cutter;

typedef struct seg_cut {
  size_t lo, hi;         /* elements [lo, hi)                      */
  size_t s_begin, s_end; /* segments closing: [s_begin, s_end)     */
} seg_cut;

/* The first segment in [a, b) that ends after element x (offsets[s + 1]
 * > x), b when none: the first segment still open at x. */
static size_t first_end_after(const uint64_t *offsets, size_t a, size_t b,
                              uint64_t x) {
  while (a < b) {
    size_t m = a + (b - a) / 2;
    if (offsets[m + 1] > x)
      b = m;
    else
      a = m + 1;
  }
  return a;
}

/* The launch after c (c zeroed: the first).  0 when there is none. */
static int next_cut(const seg_cutter *k, seg_cut *c) {
  size_t lo = c->hi, s_begin = c->s_end;
  if (lo >= k->n && s_begin >= k->n_segments)
    return 0;
  size_t hi = k->n - lo < k->chunk ? k->n : lo + k->chunk;
  size_t s_end = first_end_after(k->offsets, s_begin, k->n_segments, hi);
  if (s_end - s_begin > k->seg_cap) {
    /* Too many segments close: stop where segment s_begin + seg_cap
     * starts, so exactly seg_cap close. */
    s_end = s_begin + k->seg_cap;
    hi = (size_t)k->offsets[s_end];
  }
  c->lo = lo;
  c->hi = hi;
  c->s_begin = s_begin;
  c->s_end = s_end;
  return 1;
}

static seg_cutter make_cutter(const clr_context *ctx, const uint64_t *offsets,
                              size_t n_segments, size_t n, size_t esize) {
  seg_cutter k = {offsets, n, n_segments, clr_chunk_elems(ctx, esize),
                  clr_chunk_elems(ctx, sizeof(uint64_t)) - 1};
  return k;
}

/* The launch buffers for the largest launch of the call. */
static clr_status reserve_largest(clr_context *ctx, const seg_plan *p,
                                  const seg_cutter *k) {
  seg_shape big = {0, 1, 0};
  seg_cut c = {0, 0, 0, 0};
  while (next_cut(k, &c)) {
    seg_shape sh = launch_shape(p, c.hi - c.lo, c.s_end - c.s_begin);
    if (sh.items > big.items)
      big.items = sh.items;
    if (sh.pyramid > big.pyramid)
      big.pyramid = sh.pyramid;
  }
  return reserve_launch(ctx, p, &big, NULL);
}

/* One launch of a host array: its elements, offsets and results staged
 * (wrapped in place where the device shares the host's memory), run, the
 * results brought back.  A segment open at the start has its partial at
 * results[s_begin], which staging the results carries to the device. */
static clr_status host_launch(clr_context *ctx, seg_plan *p,
                              const seg_cutter *k, const seg_cut *c,
                              const void *data, size_t esize, void *results) {
  size_t closes = c->s_end - c->s_begin;
  int open_end = c->s_end < k->n_segments;
  clr_staged in, offs, res;
  memset(&in, 0, sizeof in);
  memset(&res, 0, sizeof res);
  clr_status st = clr_stage_in(ctx, &ctx->partial[1],
                               (void *)(uintptr_t)(k->offsets + c->s_begin),
                               (closes + 1) * sizeof(uint64_t), 0, &offs);
  if (st == CLR_OK && c->hi > c->lo)
    st = clr_stage_in(ctx, &ctx->input, (char *)data + c->lo * esize,
                      (c->hi - c->lo) * esize, 0, &in);
  if (st == CLR_OK)
    st = clr_stage_in(ctx, &ctx->output,
                      (char *)results + c->s_begin * p->acc_bytes,
                      (closes + (size_t)open_end) * p->acc_bytes, 1, &res);
  if (st == CLR_OK) {
    /* No element: the kernels never read data (offsets stand in). */
    seg_launch_io io = {.data = c->hi > c->lo ? in.mem : offs.mem,
                        .offsets = offs.mem,
                        .out = res.mem,
                        .lo = c->lo,
                        .len = c->hi - c->lo,
                        .closes = closes,
                        .open_end = open_end};
    st = seg_launch(ctx, p, &io, NULL);
  }
  if (st == CLR_OK)
    st = clr_stage_out(ctx, &res);
  clr_stage_release(ctx, &res);
  clr_stage_release(ctx, &in);
  clr_stage_release(ctx, &offs);
  return st;
}

/* Each segment's sum (of type sum_t) replaced by its mean, divided here
 * in long double as the plain mean is (clr_value_sum_to_mean) by its
 * length, or by counts[s] where counts is given (a NaN-skipping mean's
 * numbers); NaN for an empty segment, or a count of 0. */
static void sums_to_means(const clr_options *opt, clr_type type, clr_type sum_t,
                          const uint64_t *offsets, const uint64_t *counts,
                          size_t n_segments, void *results) {
  size_t size = clr_type_size(sum_t);
  clr_type mean_t = clr_opt_result_type(opt, CLR_MEAN, type);
  for (size_t s = 0; s < n_segments; s++) {
    clr_value v = clr_result_at(CLR_SUM, sum_t, results, s);
    uint64_t len = counts ? counts[s] : offsets[s + 1] - offsets[s];
    if (len == 0 || clr_opt_sum_to_mean(opt, type, len, &v) != CLR_OK) {
      v.type = mean_t;
      if (mean_t == CLR_FLOAT)
        v.v.f = NAN;
      else
        v.v.d = NAN;
    }
    memcpy((unsigned char *)results + s * size, &v.v, size);
  }
}

/* The length of rows (every segment but the last row_len long, the last
 * 1..row_len), or 0 when the segments are no rows. */
static size_t rows_of(const uint64_t *offsets, size_t n_segments) {
  uint64_t len = offsets[1] - offsets[0];
  if (len == 0)
    return 0;
  for (size_t s = 1; s + 1 < n_segments; s++)
    if (offsets[s + 1] - offsets[s] != len)
      return 0;
  uint64_t last = offsets[n_segments] - offsets[n_segments - 1];
  return last >= 1 && last <= len ? (size_t)len : 0;
}

/* Rows in one launch (cl/reduce_rows.cl: a work-group a row) where the
 * GPUs' tiled form would take three: rows of ROWS_MIN_LEN..ROWS_MAX_LEN
 * (row: their length, 0 for no rows), enough of them to fill the device,
 * no shape asked for (coarse). */
static int rows_apply(const clr_context *ctx, const clr_options *opt,
                      const seg_plan *p, size_t row, size_t n_segments) {
  return row >= ROWS_MIN_LEN && row <= ROWS_MAX_LEN &&
         n_segments >= (size_t)ROWS_PER_CU * ctx->desc.compute_units &&
         p->tiled && !opt->coarse;
}

/* The rows of n elements of in from element in_off, each row's result to
 * out from element out_off; p->depth is set to the rounding depth and the
 * timing to the one launch. */
static clr_status rows_launch(clr_context *ctx, const clr_options *opt,
                              seg_plan *p, clr_type type, cl_mem in,
                              size_t in_off, size_t n, size_t row,
                              size_t n_segments, cl_mem out, size_t out_off) {
  clr_build_spec spec = {.source = "reduce_rows.cl",
                         .kernel = "clr_rows",
                         .in = type,
                         .acc = p->acc,
                         .op = p->op,
                         .map = opt->map,
                         .prelude = p->prelude[0] ? p->prelude : NULL};
  clr_program_entry *k = NULL;
  clr_status st = clr_get_kernel(ctx, &spec, &k);
  size_t wg = 0;
  if (st == CLR_OK)
    st = clr_choose_wg(ctx, k, opt->wg_size, ROWS_WG, p->acc_bytes, 0, &wg);
  if (st == CLR_OK) /* a row's chains, then the tree */
    p->depth = clr_fold_depth(row, wg);
  cl_ulong in_ul = in_off, n_ul = n, row_ul = row, out_ul = out_off;
  if (st == CLR_OK)
    st = CLR_SET_ARGS(ctx, k->kernel, CLR_ARG(in), CLR_ARG(in_ul),
                      CLR_ARG(n_ul), CLR_ARG(row_ul), CLR_ARG(row_ul),
                      CLR_ARG(out), CLR_ARG(out_ul),
                      CLR_LOCAL(wg * p->acc_bytes), CLR_ARG(p->ibase));
  if (st == CLR_OK)
    st = run_timed(ctx, k->kernel, n_segments * wg, wg);
  if (st == CLR_OK) {
    clr_call_timing *t = &ctx->timing;
    t->n_passes = 1;
    t->passes[0].n_in = n;
    t->passes[0].local_size = wg;
    t->passes[0].global_size = n_segments * wg;
    t->passes[0].ms = t->kernel_ms;
  }
  return st;
}

/* Host arrays as rows in one launch, where rows_apply and they fit one
 * allocation: staged in, rows_launch, staged out.  *done is 0 when this
 * form does not apply and nothing was run. */
static clr_status rows_host(clr_context *ctx, const clr_options *opt,
                            seg_plan *p, clr_type type, const void *data,
                            size_t n, const uint64_t *offsets,
                            size_t n_segments, void *results, int *done) {
  size_t row = rows_of(offsets, n_segments), esize = clr_type_size(type);
  *done = rows_apply(ctx, opt, p, row, n_segments) &&
          clr_chunk_elems(ctx, esize) >= n &&
          clr_chunk_elems(ctx, p->acc_bytes) >= n_segments;
  if (!*done)
    return CLR_OK;
  clr_staged in, res;
  memset(&in, 0, sizeof in);
  memset(&res, 0, sizeof res);
  clr_status st = clr_stage_in(ctx, &ctx->input, (void *)(uintptr_t)data,
                               n * esize, 0, &in);
  if (st == CLR_OK)
    st = clr_stage_in(ctx, &ctx->output, results, n_segments * p->acc_bytes, 1,
                      &res);
  if (st == CLR_OK)
    st = rows_launch(ctx, opt, p, type, in.mem, 0, n, row, n_segments, res.mem,
                     0);
  if (st == CLR_OK)
    st = clr_stage_out(ctx, &res);
  clr_stage_release(ctx, &res);
  clr_stage_release(ctx, &in);
  return st;
}

/* A NaN-skipping mean's divisors (clr_mean_counts) are the segments'
 * counts of numbers: a second segmented reduction of the same data and
 * offsets, the (mapped) values counted by clr_count_options (a map to 0
 * or 1, summed in ulong), as the plain reduction counts them.  Its work
 * is the call's: its kernel, transfer and build times are added, and the
 * rest of the timing (launches, passes, depth) stays the sum's. */
static void add_count_timing(clr_context *ctx, const clr_call_timing *sum) {
  clr_call_timing t = *sum;
  t.kernel_ms = ctx->timing.kernel_ms;
  t.h2d_ms = ctx->timing.h2d_ms;
  t.d2h_ms = ctx->timing.d2h_ms;
  t.build_ms = ctx->timing.build_ms;
  ctx->timing = t;
}

/* Room in the context's program table for a NaN-skipping mean's counts
 * (a second segmented sum, with its own kernels), their scan and the
 * division: a dozen kernels after the sum's, past the reserve a call
 * starts with (CLR_PROGRAMS_PER_CALL), so a table filled by earlier calls
 * failed the call ("more than 8 kernels in one call").  The sum has run
 * by then and no caller holds a table entry across a segmented call, so
 * the table starts over as at a call's start. */
static void room_for_counts(clr_context *ctx) {
  if (ctx->n_programs > CLR_MAX_PROGRAMS - 2 * CLR_PROGRAMS_PER_CALL)
    clr_release_programs(ctx);
}

/* Host arrays: the counts into *counts, a new array (the caller frees
 * it, on failure too). */
static clr_status count_numbers_host(clr_context *ctx, const clr_options *opt,
                                     clr_type type, const void *data, size_t n,
                                     const uint64_t *offsets, size_t n_segments,
                                     uint64_t **counts) {
  clr_options co;
  char expr[CLR_MAX_MAP_EXPR + CLR_COUNT_EXPR_EXTRA];
  clr_count_options(opt, &co, expr, sizeof expr);
  room_for_counts(ctx);
  *counts = malloc(n_segments * sizeof **counts);
  if (!*counts)
    return clr_fail(ctx, CLR_ERR_OUT_OF_MEMORY,
                    "out of host memory for %zu segments' counts", n_segments);
  clr_call_timing sum = ctx->timing;
  clr_status st = clr_segments_host_call(ctx, &co, CLR_SUM, type, data, n,
                                         offsets, n_segments, *counts);
  add_count_timing(ctx, &sum);
  return st;
}

clr_status clr_segments_host_call(clr_context *ctx, const clr_options *opt,
                                  clr_op op, clr_type type, const void *data,
                                  size_t n, const uint64_t *offsets,
                                  size_t n_segments, void *results) {
  clr_options defaults;
  seg_plan plan;
  size_t longest = 0;
  double t0 = clr_now_ms();
  clr_status st = start_segments(ctx, &opt, &defaults, op, type, data, results,
                                 n, n_segments);
  if (st == CLR_OK && !offsets)
    st = clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "offsets must not be NULL");
  if (st == CLR_OK)
    st = clr_check_offsets(ctx, offsets, n_segments, n, &longest);
  if (st == CLR_OK)
    st = make_seg_plan(ctx, opt, op, type, &plan);
  if (st != CLR_OK)
    return st;
  plan.longest = longest;
  int rows = 0;
  size_t launches = 1;
  st = rows_host(ctx, opt, &plan, type, data, n, offsets, n_segments, results,
                 &rows);
  if (!rows) { /* the merge path, in launches of what fits */
    size_t esize = clr_type_size(type);
    seg_cutter k = make_cutter(ctx, offsets, n_segments, n, esize);
    st = reserve_largest(ctx, &plan, &k);
    seg_cut c = {0, 0, 0, 0};
    for (launches = 0; st == CLR_OK && next_cut(&k, &c); launches++)
      st = host_launch(ctx, &plan, &k, &c, data, esize, results);
  }
  uint64_t *counts = NULL;
  if (st == CLR_OK && plan.mean && clr_mean_counts(op, type))
    st = count_numbers_host(ctx, opt, type, data, n, offsets, n_segments,
                            &counts);
  if (st == CLR_OK && plan.mean)
    sums_to_means(opt, type, plan.acc, offsets, counts, n_segments, results);
  if (st == CLR_OK && clr_op_is_moments(op))
    clr_moments_finish_host(opt, op, plan.acc, results, n_segments);
  free(counts);
  if (launches > 1)
    clr_log(ctx, "segmented: %zu launches", launches);
  clr_timing_done(ctx, launches, plan.depth, t0);
  return st;
}

/* On a bad offset, the offsets are read to name it. */
clr_status clr_check_offsets_buffer(clr_context *ctx, cl_mem offsets,
                                    cl_ulong offsets_off, cl_ulong n_segments,
                                    size_t n, size_t *row, cl_ulong short_units,
                                    size_t *longest) {
  clr_program_entry *check;
  clr_build_spec spec = {.source = "reduce_segmented.cl",
                         .kernel = "clr_seg_check",
                         .in = CLR_ULONG,
                         .acc = CLR_ULONG,
                         .op = CLR_SUM};
  clr_status st = clr_get_kernel(ctx, &spec, &check);
  if (st != CLR_OK)
    return st;
  /* a bad offset; no rows; the row; a segment of more than short_units */
  cl_ulong flags[4] = {0, 0, 0, 0};
  st = clr_buffer_reserve(ctx, &ctx->carry, sizeof flags, CL_MEM_READ_WRITE);
  if (st != CLR_OK)
    return st;
  cl_mem flag = ctx->carry.mem;
  cl_ulong n_ul = n;
  cl_uint rows_asked = row != NULL;
  cl_event ev = NULL;
  uint64_t *host = NULL;
  if (row)
    *row = 0;
  if (longest)
    *longest = SIZE_MAX;
  /* Blocking: flags lives on this stack frame, which a failure below would
   * leave while a non-blocking write still read it (ASan found it under
   * fault injection). */
  CLR_CL_CHECK(ctx, clEnqueueWriteBuffer(clr_queue(ctx), flag, CL_TRUE, 0,
                                         sizeof flags, flags, 0, NULL, NULL));
  st = CLR_SET_ARGS(ctx, check->kernel, CLR_ARG(offsets), CLR_ARG(offsets_off),
                    CLR_ARG(n_segments), CLR_ARG(n_ul), CLR_ARG(short_units),
                    CLR_ARG(rows_asked), CLR_ARG(flag));
  if (st == CLR_OK)
    st = enqueue(ctx, check->kernel, (size_t)n_segments + 1, 64, &ev);
  if (st != CLR_OK)
    goto fail;
  CLR_CL_CHECK(ctx, clEnqueueReadBuffer(clr_queue(ctx), flag, CL_TRUE, 0,
                                        sizeof flags, flags, 0, NULL, NULL));
  if (row && !flags[0] && !flags[1] && n_segments > 0)
    *row = (size_t)flags[2];
  if (longest && short_units && !flags[0] && !flags[3])
    *longest = (size_t)short_units;
  if (!flags[0])
    goto fail;
  size_t count = (size_t)n_segments + 1;
  host = malloc(count * sizeof *host);
  if (!host) {
    st = clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                  "the offsets are not a partition of [0, n)");
    goto fail;
  }
  CLR_CL_CHECK(ctx,
               clEnqueueReadBuffer(clr_queue(ctx), offsets, CL_TRUE,
                                   (size_t)offsets_off * sizeof *host,
                                   count * sizeof *host, host, 0, NULL, NULL));
  size_t units;
  st = clr_check_offsets(ctx, host, count - 1, n, &units);
  if (st == CLR_OK) /* the device saw what the host does not */
    st = clr_fail(ctx, CLR_ERR_OPENCL,
                  "internal: the device found a bad offset the host does not");
fail:
  if (ev)
    clReleaseEvent(ev);
  free(host);
  return st;
}

/* The buffer form of sums_to_means: cl/reduce_segmented.cl's
 * clr_seg_mean over the results, in place, dividing in double where the
 * device has it. */
/* clr_seg_mean of the plan's sums, built (or fetched) into *out: means
 * in float or double, divided in double where the device has it; counts:
 * by a NaN-skipping mean's counts (CLR_SEG_COUNTS), not the lengths. */
static clr_status mean_kernel(clr_context *ctx, const clr_options *opt,
                              clr_type type, const seg_plan *p, int counts,
                              clr_program_entry **out) {
  int wide = ctx->desc.has_fp64;
  clr_type mean_t = clr_opt_result_type(opt, CLR_MEAN, type);
  if (mean_t == CLR_DOUBLE && !wide)
    return clr_fail(ctx, CLR_ERR_NO_FP64,
                    "device '%s' has no double-precision support "
                    "(cl_khr_fp64) for a mean of %s",
                    ctx->desc.device_name, clr_type_name(type));
  char extra[64];
  snprintf(extra, sizeof extra, "-DCLR_SEG_MEAN=%d -DCLR_SEG_WIDE=%d%s",
           mean_t == CLR_DOUBLE ? 2 : 1, wide,
           counts ? " -DCLR_SEG_COUNTS=1" : "");
  clr_build_spec spec = {.source = "reduce_segmented.cl",
                         .kernel = "clr_seg_mean",
                         .in = type,
                         .acc = p->acc,
                         .op = CLR_SUM,
                         .extra = extra};
  clr_program_entry *mean = NULL;
  clr_status st = clr_get_kernel(ctx, &spec, &mean);
  *out = mean;
  return st;
}

/* counts: offsets holds n_segments counts of numbers (a NaN-skipping
 * mean's divisors) instead of offsets.  done (an enqueued call's, else
 * NULL): the division is not waited for, *done receives its event. */
static clr_status means_on_device(clr_context *ctx, const clr_options *opt,
                                  clr_type type, const seg_plan *p,
                                  cl_mem offsets, cl_ulong offsets_off,
                                  cl_ulong n_segments, cl_mem results,
                                  cl_ulong results_off, int counts,
                                  cl_event *done) {
  clr_program_entry *mean = NULL;
  clr_status st = mean_kernel(ctx, opt, type, p, counts, &mean);
  if (st == CLR_OK)
    st = CLR_SET_ARGS(ctx, mean->kernel, CLR_ARG(offsets), CLR_ARG(offsets_off),
                      CLR_ARG(n_segments), CLR_ARG(results),
                      CLR_ARG(results_off));
  size_t wg = mean && mean->max_wg < 64 ? mean->max_wg : 64;
  if (st == CLR_OK && done)
    st = enqueue(ctx, mean->kernel, (size_t)n_segments, wg, done);
  else if (st == CLR_OK)
    st = run_timed(ctx, mean->kernel, (size_t)n_segments, wg);
  return st;
}

/* The buffer form of a NaN-skipping mean's division, on the device with
 * the kernels there are: the counts go to a buffer of n_segments + 1
 * ulongs from element 1 (element 0 zero), whose inclusive sum scan in
 * place makes them offsets of segments as long as the counts, and
 * means_on_device divides each sum by its count over those (0 / 0: NaN
 * for no number).  The buffer is the call's own, released before it
 * returns: the context's input and output may hold the data and the
 * sums (ranges). */
/* The tag of a NaN-skipping mean's counts in a caller's scratch
 * (scratch.c): clr_temp_buffer's slot for them. */
static const char counts_tag = 'c';

static clr_status counted_means_on_device(clr_context *ctx,
                                          const clr_options *opt, clr_type type,
                                          const seg_plan *p, cl_mem data,
                                          size_t data_offset, size_t n,
                                          cl_mem offsets, size_t offsets_offset,
                                          size_t n_segments, cl_mem results,
                                          size_t results_offset) {
  clr_options co, scan;
  char expr[CLR_MAX_MAP_EXPR + CLR_COUNT_EXPR_EXTRA];
  clr_count_options(opt, &co, expr, sizeof expr);
  clr_options_init(&scan);
  room_for_counts(ctx);
  size_t count = n_segments + 1; /* check_segmented: the bytes fit */
  cl_mem counts = NULL;
  clr_status st =
      clr_temp_buffer(ctx, &counts_tag, count * sizeof(cl_ulong), &counts);
  if (st != CLR_OK)
    return st;
  clr_call_timing sum = ctx->timing;
  cl_ulong zero = 0;
  cl_int err = clEnqueueFillBuffer(clr_queue(ctx), counts, &zero, sizeof zero,
                                   0, sizeof zero, 0, NULL, NULL);
  if (err != CL_SUCCESS)
    st = clr_cl_fail(ctx, "clEnqueueFillBuffer", err);
  if (st == CLR_OK)
    st = clr_segments_buffer_call(ctx, &co, CLR_SUM, type, data, data_offset, n,
                                  offsets, offsets_offset, n_segments, counts,
                                  1);
  if (st == CLR_OK)
    st = clr_scan_buffer_in_call(ctx, &scan, CLR_SUM, CLR_ULONG, counts, 0,
                                 counts, 0, count);
  add_count_timing(ctx, &sum);
  if (st == CLR_OK)
    st = means_on_device(ctx, opt, type, p, counts, 0, n_segments, results,
                         results_offset, 0, NULL);
  clReleaseMemObject(counts);
  return st;
}

clr_status clr_segments_buffer_call(clr_context *ctx, const clr_options *opt,
                                    clr_op op, clr_type type, cl_mem data,
                                    size_t data_offset, size_t n,
                                    cl_mem offsets, size_t offsets_offset,
                                    size_t n_segments, cl_mem results,
                                    size_t results_offset) {
  clr_options defaults;
  seg_plan plan;
  double t0 = clr_now_ms();
  clr_status st = start_segments(ctx, &opt, &defaults, op, type, data, results,
                                 n, n_segments);
  if (st == CLR_OK)
    st = clr_check_buffer(ctx, data, data_offset, n, type, CLR_ACCESS_READ,
                          "data");
  if (st == CLR_OK)
    st = clr_check_buffer_elems(ctx, offsets, offsets_offset, n_segments + 1,
                                sizeof(cl_ulong), CLR_ACCESS_READ, "offsets");
  if (st == CLR_OK)
    st = clr_check_buffer_elems(ctx, results, results_offset, n_segments,
                                clr_opt_result_bytes(opt, op, type),
                                CLR_ACCESS_WRITE, "results");
  if (st == CLR_OK)
    st = make_seg_plan(ctx, opt, op, type, &plan);
  if (st != CLR_OK)
    return st;
  size_t row = 0;
  /* Whether every segment is short enough for the tiles' bounds to be
   * found from the segments' side (clr_seg_partition), with no carry
   * pyramid (launch_shape). */
  cl_ulong short_units = plan.tiled ? SEG_SHORT_TILES * plan.items_per : 0;
  st = clr_check_offsets_buffer(ctx, offsets, offsets_offset, n_segments, n,
                                &row, short_units, &plan.longest);
  /* Rows in one launch, else the whole range in one launch of the merge
   * path: every segment closes in it. */
  seg_launch_io io = {
      data,           offsets, results, data_offset, offsets_offset,
      results_offset, 0,       n,       n_segments,  0};
  if (st == CLR_OK && rows_apply(ctx, opt, &plan, row, n_segments))
    st = rows_launch(ctx, opt, &plan, type, data, data_offset, n, row,
                     n_segments, results, results_offset);
  else if (st == CLR_OK)
    st = seg_launch(ctx, &plan, &io, NULL);
  if (st == CLR_OK && plan.mean && clr_mean_counts(op, type))
    st = counted_means_on_device(ctx, opt, type, &plan, data, data_offset, n,
                                 offsets, offsets_offset, n_segments, results,
                                 results_offset);
  else if (st == CLR_OK && plan.mean)
    st = means_on_device(ctx, opt, type, &plan, offsets, offsets_offset,
                         n_segments, results, results_offset, 0, NULL);
  else if (st == CLR_OK && clr_op_is_moments(op))
    st = clr_moments_finish_buffer(ctx, opt, op, type, plan.acc, results,
                                   results_offset, n_segments);
  clr_timing_done(ctx, 1, plan.depth, t0);
  return st;
}

CLR_API clr_status clr_reduce_segments_host(clr_context *ctx,
                                            const clr_options *opt, clr_op op,
                                            clr_type type, const void *data,
                                            size_t n, const uint64_t *offsets,
                                            size_t n_segments, void *results) {
  CLR_PUBLIC_CALL(ctx, clr_segments_host_call(ctx, opt, op, type, data, n,
                                              offsets, n_segments, results));
}

CLR_API clr_status clr_reduce_segments_buffer(
    clr_context *ctx, const clr_options *opt, clr_op op, clr_type type,
    cl_mem data, size_t data_offset, size_t n, cl_mem offsets,
    size_t offsets_offset, size_t n_segments, cl_mem results,
    size_t results_offset) {
  CLR_PUBLIC_CALL(ctx, clr_segments_buffer_call(ctx, opt, op, type, data,
                                                data_offset, n, offsets,
                                                offsets_offset, n_segments,
                                                results, results_offset));
}

/* ------------------------------------------------------------ enqueued */

/* clr_enqueue's segmented reduction (request.c): the same work with no
 * host sync.  The offsets are checked on the device and nothing is read
 * back, so the kernels cannot be kept from running on bad ones; instead
 * the check writes a sanitised copy of them into the context's scratch
 * (ctx->partial[1], which no buffer call's kernels use otherwise): the
 * offsets themselves when they are a partition of [0, n), else the
 * partition 0, 0, ..., 0, n (every segment empty but the last).  Every
 * later kernel reads its offsets from that copy, so no element is read or
 * written out of bounds whatever the caller's offsets hold (the outputs
 * are then unspecified), and the verdict goes to the caller's status
 * buffer when one is given.  The launch shape needs no fact read from the
 * device: the merge path over the whole range (no rows, and no segment
 * length bound: the full carry pyramid, the tiles' bounds by search).
 * Everything is planned and built before the first command, which waits
 * for the caller's wait list. */

/* The check's work-group size (a power of two) and its most
 * work-groups, whose findings one work-group folds. */
#define SEG_CHECK_WG 64
#define SEG_CHECK_GROUPS 1024

static size_t pow2_below(size_t x) {
  size_t p = 1;
  while (p * 2 <= x)
    p *= 2;
  return p;
}

/* k over global work-items in work-groups of local, after the num_wait
 * events of wait. */
static clr_status enqueue_after(clr_context *ctx, cl_kernel k, size_t global,
                                size_t local, cl_uint num_wait,
                                const cl_event *wait, cl_event *ev) {
  cl_int err =
      clEnqueueNDRangeKernel(clr_queue(ctx), k, 1, NULL, &global, &local,
                             num_wait, num_wait ? wait : NULL, ev);
  if (err != CL_SUCCESS) {
    if (ev)
      *ev = NULL;
    return clr_cl_fail(ctx, "clEnqueueNDRangeKernel", err);
  }
  return CLR_OK;
}

clr_status clr_check_status_buffer(clr_context *ctx, cl_mem status,
                                   size_t status_off,
                                   const clr_byte_range *ranges,
                                   size_t n_ranges) {
  if (!status)
    return CLR_OK;
  clr_status st = clr_check_buffer_elems(
      ctx, status, status_off, 1, sizeof(cl_ulong), CLR_ACCESS_WRITE, "status");
  if (st != CLR_OK)
    return st;
  size_t lo = status_off * sizeof(cl_ulong), hi = lo + sizeof(cl_ulong);
  for (size_t i = 0; i < n_ranges; i++) {
    const clr_byte_range *r = &ranges[i];
    if (r->mem == status && r->at < hi && lo < r->at + r->bytes)
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "status (element %zu of its buffer) overlaps the %s",
                      status_off, r->what);
  }
  return CLR_OK;
}

/* The check's kernels and shape for n_segments offsets, and the bytes of
 * its buffer (ctx->partial[1]). */
typedef struct sanitise_plan {
  clr_program_entry *groups_k, *verdict_k, *copy_k;
  size_t wg, copy_wg, count, groups, bytes;
} sanitise_plan;

static clr_status make_sanitise_plan(clr_context *ctx, size_t n_segments,
                                     sanitise_plan *s) {
  clr_build_spec spec = {.source = "reduce_segmented.cl",
                         .kernel = "clr_seg_check_groups",
                         .in = CLR_ULONG,
                         .acc = CLR_ULONG,
                         .op = CLR_SUM};
  memset(s, 0, sizeof *s);
  clr_status st = clr_get_kernel(ctx, &spec, &s->groups_k);
  spec.kernel = "clr_seg_check_verdict";
  if (st == CLR_OK)
    st = clr_get_kernel(ctx, &spec, &s->verdict_k);
  spec.kernel = "clr_seg_sanitise";
  if (st == CLR_OK)
    st = clr_get_kernel(ctx, &spec, &s->copy_k);
  if (st != CLR_OK)
    return st;
  size_t wg = SEG_CHECK_WG;
  if (wg > s->groups_k->max_wg)
    wg = s->groups_k->max_wg;
  if (wg > s->verdict_k->max_wg)
    wg = s->verdict_k->max_wg;
  s->wg = pow2_below(wg); /* the tree of seg_group_min */
  s->copy_wg = s->copy_k->max_wg < 64 ? s->copy_k->max_wg : 64;
  s->count = n_segments + 1; /* check_segmented: no wrap */
  s->groups = s->count / s->wg + (s->count % s->wg != 0);
  if (s->groups > SEG_CHECK_GROUPS)
    s->groups = SEG_CHECK_GROUPS;
  /* the copy, the verdict, the work-groups' findings */
  if (s->count > SIZE_MAX / sizeof(cl_ulong) - 1 - s->groups)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "%zu segments exceed the address space", n_segments);
  s->bytes = (s->count + 1 + s->groups) * sizeof(cl_ulong);
  return CLR_OK;
}

clr_status clr_offsets_sanitise_scratch(clr_context *ctx, size_t n_segments,
                                        clr_scratch_plan *sp) {
  sanitise_plan s;
  clr_status st = make_sanitise_plan(ctx, n_segments, &s);
  if (st == CLR_OK)
    clr_scratch_need(sp, &ctx->partial[1], s.bytes);
  return st;
}

void clr_check_offsets_scratch(clr_context *ctx, clr_scratch_plan *sp) {
  clr_scratch_need(sp, &ctx->carry, 4 * sizeof(cl_ulong));
}

clr_status clr_offsets_sanitise(clr_context *ctx, cl_mem offsets,
                                size_t offsets_off, size_t n_segments, size_t n,
                                cl_mem status, size_t status_off,
                                const clr_async *async, cl_mem *safe) {
  sanitise_plan s;
  *safe = NULL;
  clr_status st = make_sanitise_plan(ctx, n_segments, &s);
  if (st == CLR_OK)
    st = clr_buffer_reserve(ctx, &ctx->partial[1], s.bytes, CL_MEM_READ_WRITE);
  if (st != CLR_OK)
    return st;
  clr_program_entry *groups_k = s.groups_k, *verdict_k = s.verdict_k,
                    *copy_k = s.copy_k;
  size_t wg = s.wg, copy_wg = s.copy_wg, count = s.count, groups = s.groups;
  cl_mem scratch = ctx->partial[1].mem;
  cl_ulong off = offsets_off, segs = n_segments, n_ul = n, n_groups = groups;
  st = CLR_SET_ARGS(ctx, groups_k->kernel, CLR_ARG(offsets), CLR_ARG(off),
                    CLR_ARG(segs), CLR_ARG(n_ul), CLR_ARG(scratch),
                    CLR_LOCAL(wg * sizeof(cl_ulong)));
  if (st == CLR_OK)
    st = CLR_SET_ARGS(ctx, verdict_k->kernel, CLR_ARG(scratch), CLR_ARG(segs),
                      CLR_ARG(n_groups), CLR_LOCAL(wg * sizeof(cl_ulong)));
  if (st == CLR_OK)
    st = CLR_SET_ARGS(ctx, copy_k->kernel, CLR_ARG(offsets), CLR_ARG(off),
                      CLR_ARG(segs), CLR_ARG(n_ul), CLR_ARG(scratch));
  if (st == CLR_OK)
    st = enqueue_after(ctx, groups_k->kernel, groups * wg, wg,
                       async->num_events, async->wait_list, NULL);
  if (st == CLR_OK)
    st = enqueue_after(ctx, verdict_k->kernel, wg, wg, 0, NULL, NULL);
  if (st == CLR_OK)
    st = enqueue_after(ctx, copy_k->kernel,
                       (count + copy_wg - 1) / copy_wg * copy_wg, copy_wg, 0,
                       NULL, NULL);
  /* The verdict to the caller's status after the copy is made: a status
   * inside the offsets cannot change what the kernels read. */
  if (st == CLR_OK && status) {
    cl_int err = clEnqueueCopyBuffer(
        clr_queue(ctx), scratch, status, count * sizeof(cl_ulong),
        status_off * sizeof(cl_ulong), sizeof(cl_ulong), 0, NULL, NULL);
    if (err != CL_SUCCESS)
      st = clr_cl_fail(ctx, "clEnqueueCopyBuffer", err);
  }
  if (st == CLR_OK)
    *safe = scratch;
  return st;
}

/* The mean kernel built now, before anything is enqueued (means_on_device
 * then finds it in the program table). */
static clr_status prepare_mean(clr_context *ctx, const clr_options *opt,
                               clr_type type, const seg_plan *p, int counts) {
  clr_program_entry *mean = NULL;
  return mean_kernel(ctx, opt, type, p, counts, &mean);
}

static clr_status
segments_enqueue_call(clr_context *ctx, const clr_options *opt, clr_op op,
                      clr_type type, cl_mem data, size_t data_offset, size_t n,
                      cl_mem offsets, size_t offsets_offset, size_t n_segments,
                      cl_mem results, size_t results_offset, cl_mem status,
                      size_t status_offset, const clr_async *async) {
  clr_options defaults, co;
  seg_plan plan, cplan;
  char expr[CLR_MAX_MAP_EXPR + CLR_COUNT_EXPR_EXTRA];
  double t0 = clr_now_ms();
  clr_status st = start_segments(ctx, &opt, &defaults, op, type, data, results,
                                 n, n_segments);
  if (st != CLR_OK)
    return st;
  size_t res_bytes = clr_opt_result_bytes(opt, op, type);
  st = clr_check_buffer(ctx, data, data_offset, n, type, CLR_ACCESS_READ,
                        "data");
  if (st == CLR_OK)
    st = clr_check_buffer_elems(ctx, offsets, offsets_offset, n_segments + 1,
                                sizeof(cl_ulong), CLR_ACCESS_READ, "offsets");
  if (st == CLR_OK)
    st = clr_check_buffer_elems(ctx, results, results_offset, n_segments,
                                res_bytes, CLR_ACCESS_WRITE, "results");
  const clr_byte_range ranges[] = {
      {results, results_offset * res_bytes, n_segments * res_bytes, "results"}};
  if (st == CLR_OK)
    st = clr_check_status_buffer(ctx, status, status_offset, ranges, 1);
  if (st == CLR_OK && async->num_events && !async->wait_list)
    st = clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                  "%u events to wait for, but no wait list",
                  (unsigned)async->num_events);
  if (st != CLR_OK)
    return st;
  /* A NaN-skipping mean divides by counts: a second segmented sum (its
   * kernels too), so the program table makes room first. */
  int mean = (clr_op_flags(op) & CLR_OPF_MEAN) != 0;
  int counted = mean && clr_mean_counts(op, type);
  if (counted)
    room_for_counts(ctx);
  /* The launch buffers reserved now for the larger of the sum's and the
   * counts' launches (seg_launch then finds them large enough). */
  st = make_seg_plan(ctx, opt, op, type, &plan);
  if (st == CLR_OK) {
    seg_shape shape = launch_shape(&plan, n, n_segments);
    st = shape.levels > 16
             ? clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                        "%llu work-items need too deep a carry pyramid",
                        (unsigned long long)shape.items)
             : reserve_launch(ctx, &plan, &shape, NULL);
  }
  if (st == CLR_OK && counted) {
    clr_count_options(opt, &co, expr, sizeof expr);
    st = clr_validate_call(ctx, &co, CLR_SUM, type, n, 0);
    if (st == CLR_OK)
      st = make_seg_plan(ctx, &co, CLR_SUM, type, &cplan);
    if (st == CLR_OK) {
      seg_shape cshape = launch_shape(&cplan, n, n_segments);
      st = reserve_launch(ctx, &cplan, &cshape, NULL);
    }
  }
  if (st == CLR_OK && mean)
    st = prepare_mean(ctx, opt, type, &plan, counted);
  if (st == CLR_OK)
    st = clr_moments_finish_prepare(ctx, op, type, plan.acc);
  cl_mem counts = NULL;
  if (st == CLR_OK && counted)
    st = clr_temp_buffer(ctx, &counts_tag, n_segments * sizeof(cl_ulong),
                         &counts);
  /* Then the work: the check and its copy (the first command waits for
   * the caller's events), the merge path over the copy, a mean's
   * division; the last command's event is the call's. */
  cl_mem safe = NULL;
  cl_event last = NULL;
  if (st == CLR_OK)
    st = clr_offsets_sanitise(ctx, offsets, offsets_offset, n_segments, n,
                              status, status_offset, async, &safe);
  seg_launch_io io = {data,           safe, results, data_offset, 0,
                      results_offset, 0,    n,       n_segments,  0};
  if (st == CLR_OK)
    st = seg_launch(ctx, &plan, &io, &last);
  if (st == CLR_OK && counted) {
    clr_call_timing sum = ctx->timing;
    seg_launch_io cio = {data, safe, counts, data_offset, 0,
                         0,    0,    n,      n_segments,  0};
    clReleaseEvent(last);
    last = NULL;
    st = seg_launch(ctx, &cplan, &cio, &last);
    add_count_timing(ctx, &sum);
  }
  if (st == CLR_OK && mean) {
    clReleaseEvent(last);
    last = NULL;
    st = means_on_device(ctx, opt, type, &plan, counted ? counts : safe, 0,
                         n_segments, results, results_offset, counted, &last);
  }
  if (st == CLR_OK && clr_op_is_moments(op)) {
    /* var and std: the records made (value, mean, count) in place, after
     * the launch that wrote them; the call's event is the finish's */
    cl_event written = last;
    last = NULL;
    st = clr_moments_finish_enqueue(ctx, opt, op, type, plan.acc, results,
                                    results_offset, n_segments, written, &last);
    if (written)
      clReleaseEvent(written);
  }
  if (counts) /* freed once the commands that use it are done */
    clReleaseMemObject(counts);
  if (st == CLR_OK && async->done) {
    *async->done = last;
    last = NULL;
  }
  if (last)
    clReleaseEvent(last);
  clr_timing_done(ctx, 1, plan.depth, t0);
  return st;
}

clr_status clr_segments_enqueue(clr_context *ctx, const clr_options *opt,
                                clr_op op, clr_type type, cl_mem data,
                                size_t data_offset, size_t n, cl_mem offsets,
                                size_t offsets_offset, size_t n_segments,
                                cl_mem results, size_t results_offset,
                                cl_mem status, size_t status_offset,
                                cl_uint num_events, const cl_event *wait_list,
                                cl_event *event) {
  clr_async async;
  if (!ctx)
    return CLR_ERR_INVALID_ARGUMENT;
  clr_begin_async_call(ctx, &async, num_events, wait_list, event);
  clr_status st = segments_enqueue_call(
      ctx, opt, op, type, data, data_offset, n, offsets, offsets_offset,
      n_segments, results, results_offset, status, status_offset, &async);
  return clr_end_async_call(ctx, st);
}

/* Both forms' buffers, so one size serves clr_run and clr_enqueue: the
 * merge path's launch over the whole range with the full carry pyramid
 * (clr_run's may take fewer levels, or rows none, on what the device
 * reads of the offsets: an upper bound there), clr_run's offsets check
 * and clr_enqueue's sanitised copy; a NaN-skipping mean's counts (their
 * launch, their buffer, clr_run's scan of them). */
clr_status clr_segments_scratch(clr_context *ctx, const clr_options *opt,
                                clr_op op, clr_type type, size_t n,
                                size_t n_segments, clr_scratch_plan *sp) {
  clr_options defaults, co, scan;
  seg_plan plan, cplan;
  char expr[CLR_MAX_MAP_EXPR + CLR_COUNT_EXPR_EXTRA];
  int one = 1;
  clr_status st =
      start_segments(ctx, &opt, &defaults, op, type, &one, &one, n, n_segments);
  if (st != CLR_OK)
    return st;
  int counted =
      (clr_op_flags(op) & CLR_OPF_MEAN) != 0 && clr_mean_counts(op, type);
  if (counted)
    room_for_counts(ctx);
  st = make_seg_plan(ctx, opt, op, type, &plan);
  if (st == CLR_OK) {
    seg_shape shape = launch_shape(&plan, n, n_segments);
    st = reserve_launch(ctx, &plan, &shape, sp);
  }
  if (st == CLR_OK) {
    clr_check_offsets_scratch(ctx, sp);
    st = clr_offsets_sanitise_scratch(ctx, n_segments, sp);
  }
  if (st != CLR_OK || !counted)
    return st;
  clr_count_options(opt, &co, expr, sizeof expr);
  st = clr_validate_call(ctx, &co, CLR_SUM, type, n, 0);
  if (st == CLR_OK)
    st = make_seg_plan(ctx, &co, CLR_SUM, type, &cplan);
  if (st == CLR_OK) {
    seg_shape cshape = launch_shape(&cplan, n, n_segments);
    st = reserve_launch(ctx, &cplan, &cshape, sp);
  }
  if (st != CLR_OK)
    return st;
  /* clr_run's counts: n_segments + 1 (scanned into offsets); clr_enqueue's
   * n_segments */
  clr_scratch_need(sp, &counts_tag, (n_segments + 1) * sizeof(cl_ulong));
  clr_options_init(&scan);
  return clr_scan_scratch(ctx, &scan, CLR_SUM, CLR_ULONG, 0, 0, n_segments + 1,
                          sp);
}

/* ------------------------------------------------------------ by key */

/* The arguments both forms of reduce-by-key refuse. */
/* Every argument of a by-key call, before anything is read: the keys'
 * pointers and type, and the values' call (options, operation, type, n
 * against both element sizes) as every reduction checks it. */
static clr_status check_by_key(clr_context *ctx, const clr_options **opt,
                               clr_options *defaults, clr_op op, int keys,
                               int unique_keys, const size_t *n_runs,
                               clr_type key_type, clr_type type,
                               const void *values, const void *results,
                               size_t n) {
  if (!keys || !unique_keys || !n_runs)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "keys, unique_keys and n_runs must not be NULL");
  if ((unsigned)key_type >= CLR_TYPE_COUNT || clr_type_is_float(key_type) ||
      key_type == CLR_HALF)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "keys are int, uint, long or ulong, not '%s'",
                    clr_type_name(key_type));
  if (n > SIZE_MAX / sizeof(cl_ulong) - 1)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "%zu keys exceed the address space", n);
  return clr_start_work(ctx, opt, defaults, values, results,
                        "values and results", op, type, n, 0);
}

/* Reduce-by-key of host arrays: the runs of equal keys are found on the
 * host, where the keys already are (one read of them, compared as bits),
 * and their values reduced on the device as segments. */
static clr_status by_key_call(clr_context *ctx, const clr_options *opt,
                              clr_op op, clr_type key_type, const void *keys,
                              clr_type type, const void *values, size_t n,
                              void *unique_keys, void *results,
                              size_t *n_runs) {
  clr_options defaults;
  clr_status check =
      check_by_key(ctx, &opt, &defaults, op, keys != NULL, unique_keys != NULL,
                   n_runs, key_type, type, values, results, n);
  if (check != CLR_OK)
    return check;
  size_t ks = clr_type_size(key_type), runs = 1;
  const unsigned char *k = keys;
  for (size_t i = 1; i < n; i++)
    runs += memcmp(k + i * ks, k + (i - 1) * ks, ks) != 0;
  uint64_t *offsets = malloc((runs + 1) * sizeof *offsets);
  if (!offsets)
    return clr_fail(ctx, CLR_ERR_OUT_OF_MEMORY,
                    "out of host memory for %zu runs' offsets", runs);
  size_t r = 0;
  for (size_t i = 0; i < n; i++)
    if (i == 0 || memcmp(k + i * ks, k + (i - 1) * ks, ks) != 0) {
      offsets[r] = i;
      memcpy((unsigned char *)unique_keys + r * ks, k + i * ks, ks);
      r++;
    }
  offsets[runs] = n;
  clr_status st = clr_segments_host_call(ctx, opt, op, type, values, n, offsets,
                                         runs, results);
  free(offsets);
  if (st == CLR_OK)
    *n_runs = runs;
  return st;
}

CLR_API clr_status clr_reduce_by_key_host(clr_context *ctx,
                                          const clr_options *opt, clr_op op,
                                          clr_type key_type, const void *keys,
                                          clr_type type, const void *values,
                                          size_t n, void *unique_keys,
                                          void *results, size_t *n_runs) {
  CLR_PUBLIC_CALL(ctx, by_key_call(ctx, opt, op, key_type, keys, type, values,
                                   n, unique_keys, results, n_runs));
}

/* The tags of by-key's own buffers in a caller's scratch (scratch.c):
 * the run heads (scanned into run numbers), the runs' offsets. */
static const char key_heads_tag = 'h', key_offsets_tag = 'o';

/* Reduce-by-key of buffers, on the device: cl/key_runs.cl marks where runs
 * start, an inclusive sum scan numbers them (a buffer of n ulongs for the
 * call), the run count is read back (8 bytes), the runs' starts and keys
 * are written, and the values reduced as segments over those offsets. */
static clr_status by_key_buffer_call(clr_context *ctx, const clr_options *opt,
                                     clr_op op, clr_type key_type, cl_mem keys,
                                     size_t keys_offset, clr_type type,
                                     cl_mem values, size_t values_offset,
                                     size_t n, cl_mem unique_keys,
                                     size_t unique_keys_offset, cl_mem results,
                                     size_t results_offset, size_t *n_runs) {
  clr_options defaults;
  clr_status st =
      check_by_key(ctx, &opt, &defaults, op, keys != NULL, unique_keys != NULL,
                   n_runs, key_type, type, values, results, n);
  if (st != CLR_OK)
    return st;
  if (keys == unique_keys && keys_offset < unique_keys_offset + n &&
      unique_keys_offset < keys_offset + n)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "keys and unique_keys overlap in one buffer");
  st = clr_check_buffer(ctx, keys, keys_offset, n, key_type, CLR_ACCESS_READ,
                        "keys");
  clr_build_spec spec = {.source = "key_runs.cl",
                         .kernel = "clr_key_heads",
                         .in = key_type,
                         .acc = CLR_ULONG,
                         .op = CLR_SUM};
  clr_program_entry *heads_k = NULL, *starts_k = NULL;
  if (st == CLR_OK)
    st = clr_get_kernel(ctx, &spec, &heads_k);
  spec.kernel = "clr_key_starts";
  if (st == CLR_OK)
    st = clr_get_kernel(ctx, &spec, &starts_k);
  if (st != CLR_OK)
    return st;
  cl_mem heads = NULL, offsets = NULL;
  cl_ulong runs = 0, ko = keys_offset, nn = n, uko = unique_keys_offset;
  size_t local =
      heads_k->max_wg < starts_k->max_wg ? heads_k->max_wg : starts_k->max_wg;
  if (local > 256)
    local = 256;
  size_t global = (n + local - 1) / local * local;
  st = clr_temp_buffer(ctx, &key_heads_tag, n * sizeof(cl_ulong), &heads);
  if (st != CLR_OK)
    goto fail;
  st = CLR_SET_ARGS(ctx, heads_k->kernel, CLR_ARG(keys), CLR_ARG(ko),
                    CLR_ARG(nn), CLR_ARG(heads));
  if (st != CLR_OK)
    goto fail;
  CLR_CL_CHECK(ctx,
               clEnqueueNDRangeKernel(clr_queue(ctx), heads_k->kernel, 1, NULL,
                                      &global, &local, 0, NULL, NULL));
  clr_options sum;
  clr_options_init(&sum);
  st = clr_scan_buffer_in_call(ctx, &sum, CLR_SUM, CLR_ULONG, heads, 0, heads,
                               0, n);
  if (st != CLR_OK)
    goto fail;
  CLR_CL_CHECK(ctx, clEnqueueReadBuffer(clr_queue(ctx), heads, CL_TRUE,
                                        (n - 1) * sizeof runs, sizeof runs,
                                        &runs, 0, NULL, NULL));
  st = clr_check_buffer(ctx, unique_keys, unique_keys_offset, (size_t)runs,
                        key_type, CLR_ACCESS_WRITE, "unique_keys");
  if (st != CLR_OK)
    goto fail;
  st = clr_temp_buffer(ctx, &key_offsets_tag,
                       ((size_t)runs + 1) * sizeof(cl_ulong), &offsets);
  if (st != CLR_OK)
    goto fail;
  st = CLR_SET_ARGS(ctx, starts_k->kernel, CLR_ARG(keys), CLR_ARG(ko),
                    CLR_ARG(nn), CLR_ARG(heads), CLR_ARG(offsets),
                    CLR_ARG(unique_keys), CLR_ARG(uko));
  if (st != CLR_OK)
    goto fail;
  CLR_CL_CHECK(ctx,
               clEnqueueNDRangeKernel(clr_queue(ctx), starts_k->kernel, 1, NULL,
                                      &global, &local, 0, NULL, NULL));
  st = clr_segments_buffer_call(ctx, opt, op, type, values, values_offset, n,
                                offsets, 0, (size_t)runs, results,
                                results_offset);
  if (st == CLR_OK)
    *n_runs = (size_t)runs;
fail:
  if (offsets)
    clReleaseMemObject(offsets);
  if (heads)
    clReleaseMemObject(heads);
  return st;
}

CLR_API clr_status clr_reduce_by_key_buffer(
    clr_context *ctx, const clr_options *opt, clr_op op, clr_type key_type,
    cl_mem keys, size_t keys_offset, clr_type type, cl_mem values,
    size_t values_offset, size_t n, cl_mem unique_keys,
    size_t unique_keys_offset, cl_mem results, size_t results_offset,
    size_t *n_runs) {
  CLR_PUBLIC_CALL(ctx,
                  by_key_buffer_call(ctx, opt, op, key_type, keys, keys_offset,
                                     type, values, values_offset, n,
                                     unique_keys, unique_keys_offset, results,
                                     results_offset, n_runs));
}

/* ------------------------------------------------- by key, enqueued */

/* The segmented passes of one launch enqueued in queue order, nothing
 * waited for (seg_launch's work without its wait and timing): the
 * enqueued by-key's own, over offsets it built itself (no check). */
static clr_status key_seg_enqueue(clr_context *ctx, const seg_plan *p,
                                  const seg_launch_io *io) {
  seg_shape sh = launch_shape(p, io->len, io->closes);
  cl_ulong items = sh.items;
  if (sh.levels > 16)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "%llu work-items need too deep a carry pyramid",
                    (unsigned long long)items);
  clr_status st = reserve_launch(ctx, p, &sh, NULL);
  if (st != CLR_OK)
    return st;
  cl_mem pyramid = ctx->aux[0].mem, head = ctx->aux[1].mem,
         pending = ctx->partial[0].mem;
  if (p->tiled) { /* the tiles' bounds from the items' side */
    cl_mem bounds = ctx->tile_bounds.mem;
    cl_uint by_segment = 0;
    st = CLR_SET_ARGS(ctx, p->partition->kernel, CLR_ARG(io->offsets),
                      CLR_ARG(io->offsets_off), CLR_ARG(io->lo),
                      CLR_ARG(io->len), CLR_ARG(io->closes), CLR_ARG(items),
                      CLR_ARG(bounds), CLR_ARG(by_segment));
    if (st == CLR_OK)
      st = enqueue(ctx, p->partition->kernel, (size_t)items + 1, p->wg_rest,
                   NULL);
    if (st == CLR_OK)
      st = clr_set_arg_at(ctx, p->items->kernel, SEG_ARG_TILE_BOUNDS,
                          CLR_ARG(bounds));
  }
  if (st == CLR_OK)
    st = CLR_SET_ARGS(ctx, p->items->kernel, CLR_ARG(io->data),
                      CLR_ARG(io->data_off), CLR_ARG(io->lo), CLR_ARG(io->len),
                      CLR_ARG(io->offsets), CLR_ARG(io->offsets_off),
                      CLR_ARG(io->closes), CLR_ARG(io->out),
                      CLR_ARG(io->out_off), CLR_ARG(pyramid), CLR_ARG(head),
                      CLR_ARG(pending), CLR_ARG(p->ibase));
  if (st == CLR_OK)
    st = enqueue(ctx, p->items->kernel, (size_t)items * (p->tiled ? p->wg : 1),
                 p->wg, NULL);
  cl_ulong src = 0, size = items;
  for (size_t k = 1; k < sh.levels && st == CLR_OK; k++) {
    cl_ulong dst = src + size;
    st = CLR_SET_ARGS(ctx, p->blocks->kernel, CLR_ARG(pyramid), CLR_ARG(src),
                      CLR_ARG(size), CLR_ARG(dst));
    size = (size + SEG_BLOCK - 1) / SEG_BLOCK;
    if (st == CLR_OK)
      st = enqueue(ctx, p->blocks->kernel, (size_t)size, p->wg_rest, NULL);
    src = dst;
  }
  cl_uint n_levels = (cl_uint)sh.levels;
  if (st == CLR_OK)
    st = CLR_SET_ARGS(
        ctx, p->finish->kernel, CLR_ARG(io->offsets), CLR_ARG(io->offsets_off),
        CLR_ARG(io->lo), CLR_ARG(io->closes), CLR_ARG(io->open_end),
        CLR_ARG(items), CLR_ARG(io->out), CLR_ARG(io->out_off),
        CLR_ARG(pyramid), CLR_ARG(n_levels), CLR_ARG(head), CLR_ARG(pending));
  if (st == CLR_OK)
    st = enqueue(ctx, p->finish->kernel, (size_t)items + 1, p->wg_rest, NULL);
  if (st == CLR_OK) { /* the passes' shapes, no times (as the _async calls) */
    clr_call_timing *t = &ctx->timing;
    size_t work[2] = {(size_t)items, (size_t)items + 1};
    t->n_passes = 2;
    for (size_t k = 0; k < 2; k++) {
      size_t wg = k == 0 ? p->wg : p->wg_rest;
      t->passes[k].n_in = k == 0 ? (size_t)io->len : work[k];
      t->passes[k].local_size = wg;
      t->passes[k].global_size =
          k == 0 && p->tiled ? work[k] * wg : (work[k] + wg - 1) / wg * wg;
    }
  }
  return st;
}

/* means_on_device's division enqueued, nothing waited for. */
static clr_status key_means_enqueue(clr_context *ctx, const clr_options *opt,
                                    clr_type type, const seg_plan *p,
                                    cl_mem offsets, cl_ulong n_segments,
                                    cl_mem results, cl_ulong results_off) {
  int wide = ctx->desc.has_fp64;
  clr_type mean_t = clr_opt_result_type(opt, CLR_MEAN, type);
  if (mean_t == CLR_DOUBLE && !wide)
    return clr_fail(ctx, CLR_ERR_NO_FP64,
                    "device '%s' has no double-precision support "
                    "(cl_khr_fp64) for a mean of %s",
                    ctx->desc.device_name, clr_type_name(type));
  char extra[64];
  snprintf(extra, sizeof extra, "-DCLR_SEG_MEAN=%d -DCLR_SEG_WIDE=%d",
           mean_t == CLR_DOUBLE ? 2 : 1, wide);
  clr_build_spec spec = {.source = "reduce_segmented.cl",
                         .kernel = "clr_seg_mean",
                         .in = type,
                         .acc = p->acc,
                         .op = CLR_SUM,
                         .extra = extra};
  clr_program_entry *mean = NULL;
  cl_ulong zero = 0;
  clr_status st = clr_get_kernel(ctx, &spec, &mean);
  if (st == CLR_OK)
    st = CLR_SET_ARGS(ctx, mean->kernel, CLR_ARG(offsets), CLR_ARG(zero),
                      CLR_ARG(n_segments), CLR_ARG(results),
                      CLR_ARG(results_off));
  size_t wg = mean && mean->max_wg < 64 ? mean->max_wg : 64;
  if (st == CLR_OK)
    st = enqueue(ctx, mean->kernel, (size_t)n_segments, wg, NULL);
  return st;
}

/* What an enqueued by-key takes, checked before anything is enqueued:
 * by_key_buffer_call's arguments and the segmented reduction's options. */
static clr_status
check_by_key_enqueue(clr_context *ctx, const clr_options **opt,
                     clr_options *defaults, clr_op op, clr_type key_type,
                     int keys, int unique_keys, clr_type type,
                     const void *values, const void *results, size_t n) {
  size_t unused = 0;
  clr_status st = check_by_key(ctx, opt, defaults, op, keys, unique_keys,
                               &unused, key_type, type, values, results, n);
  if (st == CLR_OK)
    st = check_segmented(ctx, *opt, n);
  if (st == CLR_OK && clr_mean_counts(op, type))
    st = clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                  "an enqueued (or caller-scratch) by-key %s of %s counts "
                  "each run's numbers with a second reduction its driver "
                  "waits for: use clr_run without scratch",
                  clr_op_name(op), clr_type_name(type));
  return st;
}

clr_status clr_by_key_scratch(clr_context *ctx, const clr_options *opt,
                              clr_op op, clr_type key_type, clr_type type,
                              size_t n, clr_scratch_plan *sp) {
  clr_options defaults, sum;
  seg_plan plan;
  int one = 1;
  clr_status st = check_by_key_enqueue(ctx, &opt, &defaults, op, key_type, 1, 1,
                                       type, &one, &one, n);
  if (st == CLR_OK)
    st = make_seg_plan(ctx, opt, op, type, &plan);
  if (st != CLR_OK)
    return st;
  clr_scratch_need(sp, &key_heads_tag, n * sizeof(cl_ulong));
  clr_scratch_need(sp, &key_offsets_tag, (n + 1) * sizeof(cl_ulong));
  clr_options_init(&sum);
  st = clr_scan_scratch(ctx, &sum, CLR_SUM, CLR_ULONG, 0, 0, n, sp);
  if (st != CLR_OK)
    return st;
  /* clr_run's form: the offsets' check's flags (clr_check_offsets_buffer);
   * its runs, at most n, are no larger a launch than n segments */
  clr_scratch_need(sp, &ctx->carry, 4 * sizeof(cl_ulong));
  seg_shape sh = launch_shape(&plan, n, n);
  size_t items = (size_t)sh.items;
  clr_scratch_need(sp, &ctx->aux[0], sh.pyramid * plan.acc_bytes);
  clr_scratch_need(sp, &ctx->aux[1], items * plan.acc_bytes);
  clr_scratch_need(sp, &ctx->partial[0], items * sizeof(cl_ulong));
  if (plan.tiled)
    clr_scratch_need(sp, &ctx->tile_bounds, (items + 1) * 2 * sizeof(cl_ulong));
  return CLR_OK;
}

/* Reduce-by-key of buffers enqueued, with no host sync: the runs found as
 * by_key_buffer_call finds them, their offsets built on the device padded
 * to n + 1 entries with n (runs past the count are empty), the values
 * reduced as n segments (results past the count: an empty segment's
 * value), the count copied to element count_index of count_buf. */
static clr_status
by_key_enqueue_call(clr_context *ctx, const clr_options *opt, clr_op op,
                    clr_type key_type, cl_mem keys, size_t keys_offset,
                    clr_type type, cl_mem values, size_t values_offset,
                    size_t n, cl_mem unique_keys, size_t unique_keys_offset,
                    cl_mem results, size_t results_offset, cl_mem count_buf,
                    size_t count_index, const clr_async *async) {
  clr_options defaults, sum;
  seg_plan plan;
  clr_status st =
      check_by_key_enqueue(ctx, &opt, &defaults, op, key_type, keys != NULL,
                           unique_keys != NULL, type, values, results, n);
  if (st == CLR_OK && async->num_events && !async->wait_list)
    st = clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                  "%u events to wait for, but no wait list",
                  (unsigned)async->num_events);
  if (st == CLR_OK && keys == unique_keys &&
      keys_offset < unique_keys_offset + n &&
      unique_keys_offset < keys_offset + n)
    st = clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                  "keys and unique_keys overlap in one buffer");
  /* The outputs have room for n runs: the count is the device's. */
  if (st == CLR_OK)
    st = clr_check_buffer(ctx, keys, keys_offset, n, key_type, CLR_ACCESS_READ,
                          "keys");
  if (st == CLR_OK)
    st = clr_check_buffer(ctx, values, values_offset, n, type, CLR_ACCESS_READ,
                          "values");
  if (st == CLR_OK)
    st = clr_check_buffer(ctx, unique_keys, unique_keys_offset, n, key_type,
                          CLR_ACCESS_WRITE,
                          "unique_keys (room for n runs: the count is the "
                          "device's)");
  if (st == CLR_OK)
    st = clr_check_buffer_elems(ctx, results, results_offset, n,
                                clr_opt_result_bytes(opt, op, type),
                                CLR_ACCESS_WRITE,
                                "results (room for n runs: the count is the "
                                "device's)");
  if (st == CLR_OK)
    st =
        clr_check_buffer_elems(ctx, count_buf, count_index, 1, sizeof(cl_ulong),
                               CLR_ACCESS_WRITE, "run_count");
  if (st == CLR_OK)
    st = make_seg_plan(ctx, opt, op, type, &plan);
  if (st == CLR_OK)
    st = clr_moments_finish_prepare(ctx, op, type, plan.acc);
  clr_build_spec spec = {.source = "key_runs.cl",
                         .kernel = "clr_key_heads",
                         .in = key_type,
                         .acc = CLR_ULONG,
                         .op = CLR_SUM};
  clr_program_entry *heads_k = NULL, *starts_k = NULL;
  if (st == CLR_OK)
    st = clr_get_kernel(ctx, &spec, &heads_k);
  spec.kernel = "clr_key_starts";
  if (st == CLR_OK)
    st = clr_get_kernel(ctx, &spec, &starts_k);
  if (st != CLR_OK)
    return st;
  cl_mem heads = NULL, offsets = NULL;
  cl_ulong ko = keys_offset, nn = n, uko = unique_keys_offset;
  size_t local =
      heads_k->max_wg < starts_k->max_wg ? heads_k->max_wg : starts_k->max_wg;
  if (local > 256)
    local = 256;
  size_t global = (n + local - 1) / local * local;
  st = clr_temp_buffer(ctx, &key_heads_tag, n * sizeof(cl_ulong), &heads);
  if (st == CLR_OK)
    st = clr_temp_buffer(ctx, &key_offsets_tag, (n + 1) * sizeof(cl_ulong),
                         &offsets);
  if (st != CLR_OK)
    goto fail;
  /* Every offset n (the runs past the count empty at the end), first, after
   * the caller's events. */
  CLR_CL_CHECK(ctx,
               clEnqueueFillBuffer(clr_queue(ctx), offsets, &nn, sizeof nn, 0,
                                   (n + 1) * sizeof nn, async->num_events,
                                   async->wait_list, NULL));
  st = CLR_SET_ARGS(ctx, heads_k->kernel, CLR_ARG(keys), CLR_ARG(ko),
                    CLR_ARG(nn), CLR_ARG(heads));
  if (st != CLR_OK)
    goto fail;
  CLR_CL_CHECK(ctx,
               clEnqueueNDRangeKernel(clr_queue(ctx), heads_k->kernel, 1, NULL,
                                      &global, &local, 0, NULL, NULL));
  clr_options_init(&sum);
  st = clr_scan_buffer_async_in_call(ctx, &sum, CLR_SUM, CLR_ULONG, heads, 0,
                                     heads, 0, n);
  if (st != CLR_OK)
    goto fail;
  st = CLR_SET_ARGS(ctx, starts_k->kernel, CLR_ARG(keys), CLR_ARG(ko),
                    CLR_ARG(nn), CLR_ARG(heads), CLR_ARG(offsets),
                    CLR_ARG(unique_keys), CLR_ARG(uko));
  if (st != CLR_OK)
    goto fail;
  CLR_CL_CHECK(ctx,
               clEnqueueNDRangeKernel(clr_queue(ctx), starts_k->kernel, 1, NULL,
                                      &global, &local, 0, NULL, NULL));
  /* the count: the last element's run number */
  CLR_CL_CHECK(ctx, clEnqueueCopyBuffer(clr_queue(ctx), heads, count_buf,
                                        (n - 1) * sizeof(cl_ulong),
                                        count_index * sizeof(cl_ulong),
                                        sizeof(cl_ulong), 0, NULL, NULL));
  seg_launch_io io = {
      values, offsets, results, values_offset, 0, results_offset, 0, n, n, 0};
  st = key_seg_enqueue(ctx, &plan, &io);
  if (st == CLR_OK && plan.mean)
    st = key_means_enqueue(ctx, opt, type, &plan, offsets, n, results,
                           results_offset);
  /* var and std: all n records finished (those past the count are empty
   * runs' NaN, NaN, 0), in queue order before the marker */
  if (st == CLR_OK && clr_op_is_moments(op))
    st = clr_moments_finish_enqueue(ctx, opt, op, type, plan.acc, results,
                                    results_offset, n, NULL, NULL);
  if (st == CLR_OK && async->done)
    CLR_CL_CHECK(
        ctx, clEnqueueMarkerWithWaitList(clr_queue(ctx), 0, NULL, async->done));
  ctx->timing.chunks = 1;
fail:
  if (offsets)
    clReleaseMemObject(offsets);
  if (heads)
    clReleaseMemObject(heads);
  return st;
}

clr_status clr_reduce_by_key_enqueue(
    clr_context *ctx, const clr_options *opt, clr_op op, clr_type key_type,
    cl_mem keys, size_t keys_offset, clr_type type, cl_mem values,
    size_t values_offset, size_t n, cl_mem unique_keys,
    size_t unique_keys_offset, cl_mem results, size_t results_offset,
    cl_mem count_buf, size_t count_index, cl_uint num_events,
    const cl_event *wait_list, cl_event *event) {
  clr_async async;
  if (!ctx)
    return CLR_ERR_INVALID_ARGUMENT;
  clr_begin_async_call(ctx, &async, num_events, wait_list, event);
  clr_status st = by_key_enqueue_call(
      ctx, opt, op, key_type, keys, keys_offset, type, values, values_offset, n,
      unique_keys, unique_keys_offset, results, results_offset, count_buf,
      count_index, &async);
  st = clr_end_async_call(ctx, st);
  if (st != CLR_OK && event && *event) {
    clReleaseEvent(*event);
    *event = NULL;
  }
  return st;
}
