/* The scan driver: reduce-then-scan over tiles, recursively.
 *
 * For n elements and tiles of wg * per_item elements:
 *   1. reduce every tile to its total (reduce_coarse.cl, contiguous
 *      layout, so work-group g reduces exactly tile g);
 *   2. scan the tile totals exclusively, in place, by calling this same
 *      procedure on them (a level deeper) unless one tile covers them;
 *   3. scan every tile from its prefix (scan_tile.cl + the algorithm's
 *      work-group scan).
 * The input is read twice and the output written once (3n transfers),
 * against 4n for scan-then-propagate.  Host arrays larger than one device
 * allocation are streamed in chunks chained through the carry buffer. */
#include "internal.h"

#include <stdint.h>

#include <stdio.h>
#include <string.h>

typedef struct scan_plan {
  clr_kernel kernel;
  int decoupled; /* single pass: only `tile` is used         */
  int run;       /* the decoupled scan's CPU shape (wg of 1) */
  int slots;     /* the GPU shape's look-back through tagged 64-bit slots
                    (scan_decoupled.cl, CLR_SLOTS) */
  clr_op op;
  clr_type type;           /* of the elements read                    */
  clr_type out;            /* of the elements written and combined    */
  clr_program_entry *tile; /* scan_tile.cl + the work-group scan      */
  clr_program_entry *sum;  /* reduce_coarse.cl, contiguous layout     */
  size_t wg;
  unsigned vec;    /* vector width of the tile reduction            */
  size_t per_item; /* elements per work-item (a multiple of vec)    */
  size_t local_per_item;
} scan_plan;

static size_t ceil_div(size_t a, size_t b) { return a / b + (a % b != 0); }

/* Elements of the decoupled scan's padded local tile (PAD() in
 * scan_decoupled.cl: one slot every 32). */
#define PAD_ELEMS(e) ((e) + (e) / 32 + 1)

/* n_max: the most elements one launch of the plan scans (SIZE_MAX when
 * unknown): a coarse factor beyond it is clamped to it. */
static clr_status make_plan(clr_context *ctx, const clr_options *opt, clr_op op,
                            clr_type type, clr_type out, size_t n_max,
                            scan_plan *p) {
  clr_status st;
  memset(p, 0, sizeof *p);
  p->kernel =
      clr_kernel_is_scan(opt->kernel) ? opt->kernel : ctx->tuning.scan_kernel;
  p->op = op;
  p->type = type;
  p->out = out;
  size_t esize = clr_type_size(type), osize = clr_type_size(out);
  size_t want_wg = opt->wg_size ? opt->wg_size : ctx->tuning.decoupled_wg;
  if (p->kernel == CLR_SCAN_DECOUPLED && want_wg == 1) {
    /* The CPU shape (scan_decoupled.cl, CLR_RUN): a run of
     * decoupled.run_items per work-group of one, vectors as the tiled
     * scan's runs have them, no local memory. */
    clr_options run = *opt;
    if (!run.coarse) {
      /* At most the tuned run, and small enough for 4 runs per compute
       * unit (a multiple of 64, for the vectors). */
      size_t cus = ctx->desc.compute_units ? ctx->desc.compute_units : 1;
      size_t share = ceil_div(n_max, 4 * cus);
      run.coarse = ctx->tuning.decoupled_run_items;
      if (n_max != SIZE_MAX && share < run.coarse)
        run.coarse = share < 64 ? 64 : ceil_div(share, 64) * 64;
    }
    if (run.coarse > n_max)
      run.coarse = n_max;
    p->decoupled = p->run = 1;
    /* half is read as float: float's vectors (aligned, see
     * aligned_vectors) */
    clr_choose_scan_shape(ctx, &run, type == CLR_HALF ? CLR_FLOAT : type, out,
                          op, &p->vec, &p->per_item);
    p->wg = 1;
    clr_build_spec one = {.source = clr_kernel_source(CLR_SCAN_DECOUPLED),
                          .helpers = "scan_lanes.cl",
                          .kernel = "clr_scan_decoupled_run",
                          .in = type,
                          .acc = out,
                          .op = op,
                          .vec = p->vec,
                          .extra = "-DCLR_RUN=1"};
    return clr_get_kernel(ctx, &one, &p->tile);
  }
  if (p->kernel == CLR_SCAN_DECOUPLED) {
    char items[64];
    p->decoupled = 1;
    p->per_item = opt->coarse ? opt->coarse : ctx->tuning.decoupled_items;
    if (p->per_item > 64)
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "the decoupled scan keeps at most 64 elements per "
                      "work-item in registers, not %zu",
                      p->per_item);
    /* 16-byte loads and stores (or as asked), in a width that divides
     * the work-item's run. */
    unsigned most = (unsigned)(16 / esize), v;
    if (opt->vector_width)
      most = opt->vector_width < most ? opt->vector_width : most;
    for (v = 1; v * 2 <= most && p->per_item % (v * 2) == 0;)
      v *= 2;
    p->vec = v;
    /* Warp shuffles in the tile's scan and the look-back's tree on
     * NVIDIA's OpenCL (work-groups of whole warps use them). */
    int shfl = clr_device_takes_ptx(ctx) && ctx->tuning.warp_shuffles;
    p->slots = ctx->int64_atomics && ctx->tuning.decoupled_slots;
    snprintf(items, sizeof items, "-DCLR_ITEMS=%zu%s%s", p->per_item,
             p->slots ? " -DCLR_SLOTS=1" : "", shfl ? " -DCLR_SHFL=1" : "");
    clr_build_spec one = {.source = "scan_kogge_stone.cl",
                          .source2 = clr_kernel_source(CLR_SCAN_DECOUPLED),
                          .kernel = "clr_scan_decoupled",
                          .in = type,
                          .acc = out,
                          .op = op,
                          .vec = p->vec > 1 ? p->vec : 0,
                          .extra = items};
    st = clr_get_kernel(ctx, &one, &p->tile);
    if (st == CLR_ERR_BUILD && shfl) {
      /* A driver that refuses the inline PTX gets local memory. */
      *strstr(items, " -DCLR_SHFL=1") = '\0';
      st = clr_get_kernel(ctx, &one, &p->tile);
    }
    if (st != CLR_OK)
      return st;
    /* Local memory: the padded tile plus the work-group scan's slot. */
    p->local_per_item = p->per_item + (p->per_item + 31) / 32 + 1;
    return clr_choose_wg(ctx, p->tile, opt->wg_size, ctx->tuning.decoupled_wg,
                         osize, p->local_per_item, &p->wg);
  }
  /* A coarse factor beyond what a launch scans means one work-item scans
   * everything: clamped to n_max it gives that same tile, and keeps
   * wg * per_item and the kernels' indices within n's range (as
   * clr_reduce_launch does for the reductions). */
  clr_options clamped = *opt;
  if (clamped.coarse > n_max)
    clamped.coarse = n_max;
  clr_choose_scan_shape(ctx, &clamped, type, out, op, &p->vec, &p->per_item);
  p->local_per_item = p->kernel == CLR_SCAN_KOGGE_STONE_DB ? 2 : 1;
  clr_build_spec tile = {.source = clr_kernel_source(p->kernel),
                         .source2 = "scan_tile.cl",
                         .helpers = "scan_lanes.cl",
                         .kernel = "clr_scan",
                         .in = type,
                         .acc = out,
                         .op = op,
                         .vec = p->vec};
  st = clr_get_kernel(ctx, &tile, &p->tile);
  if (st != CLR_OK)
    return st;
  clr_build_spec sum = {.source = "reduce_coarse.cl",
                        .helpers = "load_mapped.cl",
                        .kernel = "clr_reduce",
                        .in = type,
                        .acc = out,
                        .op = op,
                        .vec = p->vec,
                        .layout = CLR_LAYOUT_CONTIGUOUS,
                        .aligned = 0};
  st = clr_get_kernel(ctx, &sum, &p->sum);
  if (st != CLR_OK)
    return st;
  st = clr_choose_wg(ctx, p->tile, opt->wg_size, ctx->tuning.scan_wg, osize,
                     p->local_per_item, &p->wg);
  if (st != CLR_OK)
    return st;
  /* Both kernels of a level must agree on the tile, so one work-group
   * size serves both. */
  size_t wg_sum = 0;
  st = clr_choose_wg(ctx, p->sum, p->wg, p->wg, osize, 1, &wg_sum);
  return st;
}

/* Events of one scan call, for timing. */
typedef struct scan_events {
  cl_event ev[2 * CLR_MAX_SCAN_LEVELS];
  size_t count;
  int record;
  /* An asynchronous call: the first launch waits for its wait list, and
   * only the last launch's event is kept (last), for the caller. */
  const clr_async *async;
  cl_event last;
} scan_events;

static clr_status launch(clr_context *ctx, cl_kernel k, size_t global,
                         size_t local, size_t n_in, scan_events *E) {
  cl_event ev = NULL;
  const clr_async *a = E->async;
  int waits = a && a->num_events && !E->last;
  CLR_CL_RETURN(ctx, clEnqueueNDRangeKernel(clr_queue(ctx), k, 1, NULL, &global,
                                            &local, waits ? a->num_events : 0,
                                            waits ? a->wait_list : NULL, &ev));
  if (a) {
    if (E->last)
      clReleaseEvent(E->last);
    E->last = ev;
    return CLR_OK;
  }
  if (E->count < 2 * CLR_MAX_SCAN_LEVELS) {
    if (E->record && E->count < CLR_MAX_PASSES) {
      ctx->timing.passes[E->count].n_in = n_in;
      ctx->timing.passes[E->count].global_size = global;
      ctx->timing.passes[E->count].local_size = local;
      ctx->timing.n_passes = E->count + 1;
    }
    E->ev[E->count++] = ev;
  } else {
    clReleaseEvent(ev);
  }
  return CLR_OK;
}

/* Where a scan reads and writes: elements [in_offset, in_offset + n) of
 * in and [out_offset, out_offset + n) of out. */
typedef struct scan_io {
  cl_mem in, out;
  cl_ulong in_offset, out_offset;
} scan_io;

/* Whether a scan of n elements stores its output non-temporally
 * (clr_scan_run in cl/scan_lanes.cl): on CPUs (whose runs are vectors),
 * when what the scan touches (its output, and its input unless in place)
 * is larger than the device's cache, where a store that allocates would
 * read each line before writing it.  A 480 MiB cache holds a 400 MB
 * output, yet not the 400 MB input beside it: 1e8 ints took 43-46 ms
 * counting the output alone, 33-36 ms counting both (docs/perf-log/cpu.md).
 * The tuning's scan.stream_bytes, where set, replaces the cache size.
 * The kernels store whole vectors or halves of them that way, as the
 * output's alignment allows, and plain stores where it allows neither. */
static cl_uint streams_out(const clr_context *ctx, const scan_plan *p,
                           const scan_io *io, size_t n) {
  size_t bytes =
      clr_type_size(p->out) + (io->in == io->out ? 0 : clr_type_size(p->type));
  uint64_t limit = ctx->tuning.scan_stream_bytes ? ctx->tuning.scan_stream_bytes
                                                 : ctx->cache_bytes;
  return !ctx->desc.is_gpu && p->vec > 1 && limit && n > limit / bytes;
}

/* Scan n elements of in into out (may be the same buffer) with plan p;
 * the tile totals (of p's output type) are scanned with plan down.
 * Returns the error depth of this level and below in *depth. */
static clr_status scan_level(clr_context *ctx, const scan_plan *p,
                             const scan_plan *down, const scan_io *io, size_t n,
                             int level, cl_uint exclusive, cl_uint carry_flags,
                             scan_events *E, size_t *depth) {
  cl_mem in = io->in, out = io->out;
  clr_status st = CLR_OK;
  size_t esize = clr_type_size(p->out);
  /* The tile, and the kernels' indices up to the end of the last tile
   * (below n + tile), must not wrap. */
  if (p->per_item > SIZE_MAX / p->wg || n > SIZE_MAX - p->wg * p->per_item)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "%zu elements in scan tiles of %zu work-items x %zu "
                    "elements overflow the index range",
                    n, p->wg, p->per_item);
  size_t tile = p->wg * p->per_item;
  size_t tiles = ceil_div(n, tile);
  size_t tree = clr_ceil_log2(p->wg);
  cl_mem prefix = ctx->carry.mem; /* any valid buffer when unused */
  cl_uint use_tiles = tiles > 1;
  cl_ulong n_arg = n, per_item = p->per_item;
  size_t below = 0;
  /* item total + work-group scan + own run + carry and tile prefix */
  *depth = 2 * p->per_item + 2 * tree + 2;
  if (use_tiles) {
    if (level + 1 >= CLR_MAX_SCAN_LEVELS)
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "scan would need more than %d levels",
                      CLR_MAX_SCAN_LEVELS);
    clr_buffer *totals = &ctx->scan_levels[level];
    st = clr_buffer_reserve(ctx, totals, tiles * esize, CL_MEM_READ_WRITE);
    if (st != CLR_OK)
      return st;
    /* 1. tile totals */
    cl_kernel k = p->sum->kernel;
    cl_ulong vectors = p->per_item / p->vec, base = 0;
    st =
        CLR_SET_ARGS(ctx, k, CLR_ARG(in), CLR_ARG(io->in_offset),
                     CLR_ARG(n_arg), CLR_ARG(totals->mem),
                     CLR_LOCAL(p->wg * esize), CLR_ARG(vectors), CLR_ARG(base));
    if (st != CLR_OK)
      goto fail;
    st = launch(ctx, k, tiles * p->wg, p->wg, n, E);
    if (st != CLR_OK)
      return st;
    /* 2. exclusive scan of the totals, in place, one level down */
    scan_io totals_io = {totals->mem, totals->mem, 0, 0};
    st = scan_level(ctx, down, down, &totals_io, tiles, level + 1, 1, 0, E,
                    &below);
    if (st != CLR_OK)
      return st;
    prefix = totals->mem;
    *depth +=
        p->per_item / p->vec + clr_ceil_log2(p->vec) + p->vec + tree + below;
  }
  /* 3. scan every tile from its prefix */
  {
    cl_kernel k = p->tile->kernel;
    cl_uint stream = streams_out(ctx, p, io, n);
    st = CLR_SET_ARGS(ctx, k, CLR_ARG(in), CLR_ARG(io->in_offset), CLR_ARG(out),
                      CLR_ARG(io->out_offset), CLR_ARG(n_arg),
                      CLR_ARG(per_item), CLR_ARG(prefix), CLR_ARG(use_tiles),
                      CLR_ARG(ctx->carry.mem), CLR_ARG(carry_flags),
                      CLR_ARG(exclusive), CLR_ARG(stream),
                      CLR_LOCAL(p->wg * p->local_per_item * esize));
    if (st != CLR_OK)
      goto fail;
    st = launch(ctx, k, tiles * p->wg, p->wg, n, E);
  }
fail:
  return st;
}

/* The single-pass scan: one launch, nothing to clear (see the epoch and
 * ticket scheme in scan_decoupled.cl). */
static clr_status scan_decoupled(clr_context *ctx, const scan_plan *p,
                                 const scan_io *io, size_t n, cl_uint exclusive,
                                 cl_uint carry_flags, scan_events *E,
                                 size_t *depth) {
  clr_status st = CLR_OK;
  size_t esize = clr_type_size(p->out);
  /* Tagged slots (CLR_SLOTS) take 8 bytes a 32-bit word of a value. */
  size_t vbytes = esize * (p->slots ? 2 : 1);
  size_t tile = p->wg * p->per_item;
  size_t tiles = ceil_div(n, tile);
  clr_buffer *state = &ctx->lookback[0], *agg = &ctx->lookback[1],
             *incl = &ctx->lookback[2];
  cl_ulong n_arg = n;
  if (tiles > (1u << 30))
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "%zu tiles exceed the decoupled scan's counter", tiles);
  /* Reallocated buffers must be zeroed.  Compare sizes, not handles: a
   * new cl_mem may reuse the address of the one just released. */
  int fresh = !state->mem || state->bytes < (tiles + 1) * sizeof(cl_uint) ||
              !agg->mem || agg->bytes < tiles * vbytes || !incl->mem ||
              incl->bytes < tiles * vbytes;
  st = clr_buffer_reserve(ctx, state, (tiles + 1) * sizeof(cl_uint),
                          CL_MEM_READ_WRITE);
  if (st == CLR_OK)
    st = clr_buffer_reserve(ctx, agg, tiles * vbytes, CL_MEM_READ_WRITE);
  if (st == CLR_OK)
    st = clr_buffer_reserve(ctx, incl, tiles * vbytes, CL_MEM_READ_WRITE);
  if (st != CLR_OK)
    return st;
  /* New buffers, an epoch about to wrap, or words of the other layout
   * (a flagged value's bits could read as a current slot's tag): zero them
   * once.  (The values are only read after their flag or tag says so, but
   * the atomics that publish them read the old words, which a checker
   * wants initialised.) */
  if (fresh || ctx->scan_epoch >= (1u << 30) - 1 ||
      ctx->scan_slots != p->slots) {
    clr_buffer *const all[3] = {state, agg, incl};
    st = clr_zero_buffers(ctx, all, 3);
    if (st != CLR_OK)
      return st;
    ctx->scan_ticket = 0;
    ctx->scan_epoch = 0;
    ctx->scan_slots = p->slots;
  }
  cl_uint epoch = ctx->scan_epoch + 1, ticket = ctx->scan_ticket;
  cl_kernel k = p->tile->kernel;
  cl_ulong per_item = p->per_item;
  cl_uint stream = p->run && streams_out(ctx, p, io, n);
  cl_uint spin = ctx->tuning.decoupled_spin;
  if (p->run)
    st = CLR_SET_ARGS(ctx, k, CLR_ARG(io->in), CLR_ARG(io->in_offset),
                      CLR_ARG(io->out), CLR_ARG(io->out_offset), CLR_ARG(n_arg),
                      CLR_ARG(per_item), CLR_ARG(state->mem), CLR_ARG(ticket),
                      CLR_ARG(epoch), CLR_ARG(agg->mem), CLR_ARG(incl->mem),
                      CLR_ARG(ctx->carry.mem), CLR_ARG(carry_flags),
                      CLR_ARG(exclusive), CLR_ARG(stream), CLR_ARG(spin));
  else
    st = CLR_SET_ARGS(
        ctx, k, CLR_ARG(io->in), CLR_ARG(io->in_offset), CLR_ARG(io->out),
        CLR_ARG(io->out_offset), CLR_ARG(n_arg), CLR_ARG(state->mem),
        CLR_ARG(ticket), CLR_ARG(epoch), CLR_ARG(agg->mem), CLR_ARG(incl->mem),
        CLR_ARG(ctx->carry.mem), CLR_ARG(carry_flags), CLR_ARG(exclusive),
        CLR_LOCAL(PAD_ELEMS(p->wg * p->per_item) * esize),
        CLR_LOCAL(p->wg * esize));
  if (st != CLR_OK)
    goto fail;
  st = launch(ctx, k, tiles * p->wg, p->wg, n, E);
  if (st == CLR_OK) {
    ctx->scan_epoch = epoch;
    ctx->scan_ticket = ticket + (cl_uint)tiles; /* wraps modulo 2^32 */
  } else {
    /* The kernel may have run and taken tickets: start over next time. */
    clr_buffer_release(state);
  }
  /* GPU shape: own run + work-group scan + the look-back chain over
   * earlier tiles (at most one combine per tile) + carry.  CPU shape
   * (scan_decoupled.cl, CLR_RUN; VEC lanes): a run's total (per_item / VEC
   * combines a lane, then the lanes' tree), the chain of tiles, and the
   * rescan (one combine a vector, then the lanes' scan; fewer than VEC
   * elements one by one at the end) + carry. */
  if (p->run)
    *depth = 2 * (p->per_item / p->vec + 1) + 2 * clr_ceil_log2(p->vec) +
             p->vec + tiles + 3;
  else
    *depth = p->per_item + 2 * clr_ceil_log2(p->wg) + tiles + 2;
fail:
  return st;
}

/* Whether a plan's vector loads need addresses aligned to the vector:
 * the decoupled scan's GPU shape casts pointers to vectors; its CPU shape
 * loads with vloadN, which needs only the elements aligned, except that
 * PoCL 3's vload_half8 faults on addresses not 16-byte aligned. */
static int aligned_vectors(const scan_plan *p) {
  return p->decoupled && p->vec > 1 && (!p->run || p->type == CLR_HALF);
}

/* The plans of one scan: the input's (type to out) and, for the tile
 * totals of the tiled scans, out to out (the same plan when the types
 * are). */
typedef struct scan_plans {
  scan_plan top, down;
} scan_plans;

static clr_status make_plans(clr_context *ctx, const clr_options *opt,
                             clr_op op, clr_type type, size_t n_max,
                             scan_plans *P) {
  clr_type out = clr_opt_scan_output_type(opt, type);
  clr_status st = make_plan(ctx, opt, op, type, out, n_max, &P->top);
  if (st != CLR_OK)
    return st;
  if (out == type || P->top.decoupled) {
    P->down = P->top;
    return CLR_OK;
  }
  return make_plan(ctx, opt, op, out, out, n_max, &P->down);
}

/* Run one whole scan (all levels) of n elements and time it. */
static clr_status scan_once(clr_context *ctx, const scan_plans *P,
                            const scan_io *io, size_t n, cl_uint exclusive,
                            cl_uint carry_flags, int record,
                            const clr_async *async, size_t *depth) {
  const scan_plan *p = &P->top;
  scan_events E;
  memset(&E, 0, sizeof E);
  E.record = record;
  E.async = async;
  if (async) {
    clr_status st =
        p->decoupled
            ? scan_decoupled(ctx, p, io, n, exclusive, carry_flags, &E, depth)
            : scan_level(ctx, p, &P->down, io, n, 0, exclusive, carry_flags, &E,
                         depth);
    if (st == CLR_OK && async->done)
      *async->done = E.last; /* the caller releases it */
    else if (E.last)
      clReleaseEvent(E.last);
    return st;
  }
  clr_status st = p->decoupled ? scan_decoupled(ctx, p, io, n, exclusive,
                                                carry_flags, &E, depth)
                               : scan_level(ctx, p, &P->down, io, n, 0,
                                            exclusive, carry_flags, &E, depth);
  if (st == CLR_OK && E.count) {
    cl_int err = clWaitForEvents((cl_uint)E.count, E.ev);
    if (err != CL_SUCCESS)
      st = clr_cl_fail(ctx, "clWaitForEvents", err);
  }
  if (st == CLR_OK && E.count) {
    ctx->timing.kernel_ms += clr_event_ms(E.ev[0], E.ev[E.count - 1]);
    if (record)
      for (size_t i = 0; i < E.count && i < CLR_MAX_PASSES; i++)
        ctx->timing.passes[i].ms = clr_event_ms(E.ev[i], E.ev[i]);
  }
  for (size_t i = 0; i < E.count; i++)
    clReleaseEvent(E.ev[i]);
  return st;
}

clr_status clr_scan_init_carry(clr_context *ctx, const clr_options *opt,
                               clr_type type, cl_uint *flags) {
  size_t esize = clr_type_size(type);
  clr_status st =
      clr_buffer_reserve(ctx, &ctx->carry, 2 * 8, CL_MEM_READ_WRITE);
  if (st != CLR_OK)
    return st;
  *flags = 0;
  if (opt->carry_in && !ctx->async_call) {
    CLR_CL_RETURN(ctx,
                  clEnqueueWriteBuffer(clr_queue(ctx), ctx->carry.mem, CL_TRUE,
                                       0, esize, opt->carry_in, 0, NULL, NULL));
    *flags = 1;
  } else if (opt->carry_in) {
    /* No host wait: the value is copied when the small buffer is made,
     * and copied on the device in queue order (the buffer is released
     * once that copy is done). */
    cl_int err;
    cl_mem tmp =
        clCreateBuffer(ctx->cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, esize,
                       (void *)opt->carry_in, &err);
    if (err != CL_SUCCESS)
      return clr_cl_fail(ctx, "clCreateBuffer", err);
    err = clEnqueueCopyBuffer(clr_queue(ctx), tmp, ctx->carry.mem, 0, 0, esize,
                              0, NULL, NULL);
    clReleaseMemObject(tmp);
    if (err != CL_SUCCESS)
      return clr_cl_fail(ctx, "clEnqueueCopyBuffer", err);
    *flags = 1;
  }
  return CLR_OK;
}

/* One buffer's place: its parent and byte origin for a sub-buffer, else
 * itself from 0; and the host memory it uses (CL_MEM_USE_HOST_PTR), or
 * NULL. */
static cl_int buffer_place(cl_mem m, cl_mem *root, size_t *origin,
                           void **host) {
  cl_mem parent = NULL;
  *origin = 0;
  *host = NULL;
  cl_int err = clGetMemObjectInfo(m, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent,
                                  &parent, NULL);
  if (err == CL_SUCCESS && parent)
    err = clGetMemObjectInfo(m, CL_MEM_OFFSET, sizeof *origin, origin, NULL);
  if (err == CL_SUCCESS)
    err = clGetMemObjectInfo(m, CL_MEM_HOST_PTR, sizeof *host, host, NULL);
  *root = parent ? parent : m;
  return err;
}

clr_status clr_check_scan_buffers_overlap(clr_context *ctx, cl_mem in,
                                          size_t in_offset, cl_mem out,
                                          size_t out_offset, size_t in_esize,
                                          size_t out_esize, size_t n) {
  cl_mem ri, ro;
  size_t oi, oo;
  void *hi, *ho;
  size_t ib = n * in_esize, ob = n * out_esize;
  cl_int err = buffer_place(in, &ri, &oi, &hi);
  if (err == CL_SUCCESS)
    err = buffer_place(out, &ro, &oo, &ho);
  if (err != CL_SUCCESS)
    return clr_cl_fail(ctx, "clGetMemObjectInfo", err);
  oi += in_offset * in_esize;
  oo += out_offset * out_esize;
  int same = in_esize == out_esize, overlap = 0;
  if (ri == ro)
    overlap = !(same && oi == oo) && oi < oo + ob && oo < oi + ib;
  else if (hi && ho) {
    uintptr_t a = (uintptr_t)hi + (uintptr_t)(in_offset * in_esize),
              b = (uintptr_t)ho + (uintptr_t)(out_offset * out_esize);
    overlap = !(same && a == b) && a < b + ob && b < a + ib;
  }
  if (overlap)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    same ? "buffers in and out overlap without being the same "
                           "elements; in place needs out == in"
                         : "buffers in and out overlap: a scan into a wider "
                           "output type cannot run in place");
  return CLR_OK;
}

clr_status clr_scan_prepare(clr_context *ctx, const clr_options *opt, clr_op op,
                            clr_type type) {
  scan_plans plans;
  clr_status st = clr_validate_call(ctx, opt, op, type, 1, 1);
  if (st != CLR_OK)
    return st;
  return make_plans(ctx, opt, op, type, SIZE_MAX, &plans);
}

static clr_status scan_buffer_call(clr_context *ctx, const clr_options *opt,
                                   clr_op op, clr_type type, const scan_io *io,
                                   size_t n, const clr_async *async) {
  clr_options defaults;
  scan_plans plans;
  size_t depth = 0;
  cl_uint flags = 0;
  double t0 = clr_now_ms();
  clr_status st = clr_start_work(ctx, &opt, &defaults, io->in, io->out,
                                 "buffers", op, type, n, 1);
  if (st != CLR_OK)
    return st;
  clr_type out = clr_opt_scan_output_type(opt, type);
  st = clr_check_scan_buffers_overlap(
      ctx, io->in, (size_t)io->in_offset, io->out, (size_t)io->out_offset,
      clr_type_size(type), clr_type_size(out), n);
  if (st == CLR_OK)
    st = make_plans(ctx, opt, op, type, n, &plans);
  /* The decoupled scan's vector loads need offsets that keep them
   * aligned (the buffers themselves are). */
  if (st == CLR_OK && aligned_vectors(&plans.top) &&
      (io->in_offset % plans.top.vec || io->out_offset % plans.top.vec)) {
    clr_options scalar = *opt;
    scalar.vector_width = 1;
    st = make_plans(ctx, &scalar, op, type, n, &plans);
  }
  if (st == CLR_OK)
    st = clr_scan_init_carry(ctx, opt, out, &flags);
  if (st == CLR_OK && async && async->num_events && !async->wait_list)
    st = clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                  "%u events to wait for, but no wait list",
                  (unsigned)async->num_events);
  if (st == CLR_OK && async && ctx->scan_carry) {
    /* the carry-in from the caller's buffer, once the wait list is done */
    cl_int err = clEnqueueCopyBuffer(clr_queue(ctx), ctx->scan_carry,
                                     ctx->carry.mem, 0, 0, clr_type_size(out),
                                     async->num_events, async->wait_list, NULL);
    if (err != CL_SUCCESS)
      st = clr_cl_fail(ctx, "clEnqueueCopyBuffer", err);
    flags = 1;
  }
  if (st == CLR_OK)
    st = scan_once(ctx, &plans, io, n, opt->exclusive != 0, flags, 1, async,
                   &depth);
  clr_timing_done(ctx, 1, depth, t0);
  return st;
}

static clr_status scan_host_call(clr_context *ctx, const clr_options *opt,
                                 clr_op op, clr_type type, const void *in,
                                 void *out, size_t n) {
  clr_options defaults;
  scan_plans plans;
  cl_uint flags = 0;
  if (!ctx)
    return CLR_ERR_INVALID_ARGUMENT;
  double t0 = clr_now_ms();
  clr_status st = clr_start_work(ctx, &opt, &defaults, in, out,
                                 "input and output", op, type, n, 1);
  if (st != CLR_OK)
    return st;
  clr_type otype = clr_opt_scan_output_type(opt, type);
  size_t esize = clr_type_size(type), osize = clr_type_size(otype);
  st = clr_check_scan_host_overlap(ctx, in, out, n, esize, osize);
  if (st != CLR_OK)
    return st;
  /* Chunks of the larger of the two element sizes. */
  size_t chunk = clr_chunk_elems(ctx, esize > osize ? esize : osize);
  size_t n_max = n < chunk ? n : chunk;
  st = make_plans(ctx, opt, op, type, n_max, &plans);
  /* Arrays used in place (unified memory) keep the vector loads of the
   * decoupled scan only when every chunk starts aligned to a vector. */
  unsigned v = plans.top.vec;
  if (st == CLR_OK && aligned_vectors(&plans.top) && ctx->host_unified &&
      (!clr_is_aligned(in, v * esize) || !clr_is_aligned(out, v * osize) ||
       (chunk * esize) % (v * esize) != 0)) {
    clr_options scalar = *opt;
    scalar.vector_width = 1;
    st = make_plans(ctx, &scalar, op, type, n_max, &plans);
  }
  if (st == CLR_OK)
    st = clr_scan_init_carry(ctx, opt, otype, &flags);
  if (st != CLR_OK)
    return st;
  size_t chunks = ceil_div(n, chunk);
  if (chunks > 1)
    clr_log(ctx, "streaming %zu elements in %zu chunks of %zu", n, chunks,
            chunk);
  size_t depth = 0;
  for (size_t c = 0; c < chunks && st == CLR_OK; c++) {
    size_t begin = c * chunk;
    size_t len = n - begin < chunk ? n - begin : chunk;
    cl_uint cflags = flags | (chunks > 1 ? 2u : 0u);
    size_t level_depth = 0;
    char *src = (char *)in + begin * esize, *dst = (char *)out + begin * osize;
    /* Copied chunks are scanned in place on the device and read back into
     * out; in-place chunks of unified memory, and scans into a wider type,
     * are scanned from in to out. */
    int separate = (ctx->host_unified && in != out) || esize != osize;
    clr_staged sin, sout, *res = NULL;
    st = clr_stage_scan_chunk(ctx, src, dst, len, esize, osize, separate, &sin,
                              &sout, &res);
    if (st == CLR_OK) {
      scan_io io = {sin.mem, res->mem, 0, 0};
      st = scan_once(ctx, &plans, &io, len, opt->exclusive != 0, cflags, c == 0,
                     NULL, &level_depth);
      if (st == CLR_OK)
        st = clr_stage_out(ctx, res);
    }
    if (st == CLR_OK && c + 1 < chunks)
      st = clr_scan_chain_carry(ctx, osize, &flags);
    clr_stage_release(ctx, &sin);
    clr_stage_release(ctx, &sout);
    depth += level_depth + 1;
    if (chunks > 1)
      clr_log(ctx, "chunk %zu/%zu scanned", c + 1, chunks);
  }
  clr_timing_done(ctx, chunks, depth, t0);
  return st;
}

clr_status clr_stage_scan_chunk(clr_context *ctx, void *src, void *dst,
                                size_t len, size_t esize, size_t osize,
                                int separate, clr_staged *sin, clr_staged *sout,
                                clr_staged **res) {
  memset(sin, 0, sizeof *sin);
  memset(sout, 0, sizeof *sout);
  clr_status st =
      clr_stage_in(ctx, &ctx->input, src, len * esize, !separate, sin);
  if (st == CLR_OK && separate)
    st = clr_stage_in(ctx, &ctx->output, dst, len * osize, 1, sout);
  if (st == CLR_OK) {
    *res = separate ? sout : sin;
    (*res)->host = dst;
  }
  return st;
}

clr_status clr_scan_chain_carry(clr_context *ctx, size_t osize,
                                cl_uint *flags) {
  CLR_CL_RETURN(ctx, clEnqueueCopyBuffer(clr_queue(ctx), ctx->carry.mem,
                                         ctx->carry.mem, osize, 0, osize, 0,
                                         NULL, NULL));
  *flags = 1;
  return CLR_OK;
}

clr_status clr_check_scan_host_overlap(clr_context *ctx, const void *in,
                                       const void *out, size_t n, size_t esize,
                                       size_t osize) {
  uintptr_t a = (uintptr_t)in, b = (uintptr_t)out;
  if (!(in == out && esize == osize) && a < b + n * osize && b < a + n * esize)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    esize == osize
                        ? "input and output overlap without being the same "
                          "array; in place needs out == in"
                        : "input and output overlap: a scan into a wider "
                          "output type cannot run in place");
  return CLR_OK;
}

/* The checks of both buffers' ranges and access, then the scan. */
static clr_status scan_buffers(clr_context *ctx, const clr_options *opt,
                               clr_op op, clr_type type, const scan_io *io,
                               size_t n, const clr_async *async) {
  clr_options copy;
  clr_status st = clr_options_take(ctx, opt, &copy);
  if (st != CLR_OK)
    return st;
  opt = &copy;
  /* in place: in is written too */
  st = clr_check_buffer(
      ctx, io->in, io->in_offset, n, type,
      CLR_ACCESS_READ | (io->in == io->out ? CLR_ACCESS_WRITE : 0), "in");
  if (st == CLR_OK)
    st = clr_check_buffer(ctx, io->out, io->out_offset, n,
                          (unsigned)type < CLR_TYPE_COUNT
                              ? clr_opt_scan_output_type(opt, type)
                              : type,
                          CLR_ACCESS_WRITE, "out");
  if (st == CLR_OK)
    st = scan_buffer_call(ctx, opt, op, type, io, n, async);
  return st;
}

clr_status clr_scan_buffer_in_call(clr_context *ctx, const clr_options *opt,
                                   clr_op op, clr_type type, cl_mem in,
                                   size_t in_offset, cl_mem out,
                                   size_t out_offset, size_t n) {
  scan_io io = {in, out, in_offset, out_offset};
  return scan_buffers(ctx, opt, op, type, &io, n, NULL);
}

clr_status clr_scan_buffer_async_in_call(clr_context *ctx,
                                         const clr_options *opt, clr_op op,
                                         clr_type type, cl_mem in,
                                         size_t in_offset, cl_mem out,
                                         size_t out_offset, size_t n) {
  scan_io io = {in, out, in_offset, out_offset};
  clr_async none; /* in queue order, no event kept */
  memset(&none, 0, sizeof none);
  return scan_buffers(ctx, opt, op, type, &io, n, &none);
}

clr_status clr_scan_scratch(clr_context *ctx, const clr_options *opt, clr_op op,
                            clr_type type, size_t in_offset, size_t out_offset,
                            size_t n, clr_scratch_plan *sp) {
  clr_options defaults;
  scan_plans plans;
  int one = 1;
  clr_status st = clr_start_work(ctx, &opt, &defaults, &one, &one, "buffers",
                                 op, type, n, 1);
  if (st == CLR_OK)
    st = make_plans(ctx, opt, op, type, n, &plans);
  if (st == CLR_OK && aligned_vectors(&plans.top) &&
      (in_offset % plans.top.vec || out_offset % plans.top.vec)) {
    clr_options scalar = *opt;
    scalar.vector_width = 1;
    st = make_plans(ctx, &scalar, op, type, n, &plans);
  }
  if (st != CLR_OK)
    return st;
  clr_scratch_need(sp, &ctx->carry, 2 * 8); /* clr_scan_init_carry */
  const scan_plan *p = &plans.top;
  if (p->decoupled) { /* scan_decoupled */
    size_t tiles = ceil_div(n, p->wg * p->per_item);
    size_t vbytes = clr_type_size(p->out) * (p->slots ? 2 : 1);
    clr_scratch_need(sp, &ctx->lookback[0], (tiles + 1) * sizeof(cl_uint));
    clr_scratch_need(sp, &ctx->lookback[1], tiles * vbytes);
    clr_scratch_need(sp, &ctx->lookback[2], tiles * vbytes);
    return CLR_OK;
  }
  /* scan_level: the tile totals of each level, scanned one level down */
  for (int level = 0; level + 1 < CLR_MAX_SCAN_LEVELS; level++) {
    size_t tiles = ceil_div(n, p->wg * p->per_item);
    if (tiles <= 1)
      break;
    clr_scratch_need(sp, &ctx->scan_levels[level],
                     tiles * clr_type_size(p->out));
    n = tiles;
    p = &plans.down;
  }
  return CLR_OK;
}

CLR_API clr_status clr_scan_buffer_range(clr_context *ctx,
                                         const clr_options *opt, clr_op op,
                                         clr_type type, cl_mem in,
                                         size_t in_offset, cl_mem out,
                                         size_t out_offset, size_t n) {
  if (!ctx)
    return CLR_ERR_INVALID_ARGUMENT;
  scan_io io = {in, out, in_offset, out_offset};
  clr_status st = clr_begin_call(ctx);
  if (st == CLR_OK)
    st = scan_buffers(ctx, opt, op, type, &io, n, NULL);
  return clr_end_call(ctx, st);
}

CLR_API clr_status clr_scan_buffer_async(
    clr_context *ctx, const clr_options *opt, clr_op op, clr_type type,
    cl_mem in, size_t in_offset, cl_mem out, size_t out_offset, size_t n,
    cl_uint num_events, const cl_event *wait_list, cl_event *event) {
  if (!ctx)
    return CLR_ERR_INVALID_ARGUMENT;
  scan_io io = {in, out, in_offset, out_offset};
  clr_async async;
  clr_begin_async_call(ctx, &async, num_events, wait_list, event);
  return clr_end_async_call(ctx,
                            scan_buffers(ctx, opt, op, type, &io, n, &async));
}

clr_status clr_scan_buffer_async_carry(clr_context *ctx, const clr_options *opt,
                                       clr_op op, clr_type type, cl_mem in,
                                       size_t in_offset, cl_mem out,
                                       size_t out_offset, size_t n,
                                       cl_mem carry, cl_uint num_events,
                                       const cl_event *wait_list,
                                       cl_event *event) {
  scan_io io = {in, out, in_offset, out_offset};
  clr_async async;
  clr_begin_async_call(ctx, &async, num_events, wait_list, event);
  ctx->scan_carry = carry;
  clr_status st = scan_buffers(ctx, opt, op, type, &io, n, &async);
  ctx->scan_carry = NULL;
  return clr_end_async_call(ctx, st);
}

CLR_API clr_status clr_scan_buffer(clr_context *ctx, const clr_options *opt,
                                   clr_op op, clr_type type, cl_mem in,
                                   cl_mem out, size_t n) {
  return clr_scan_buffer_range(ctx, opt, op, type, in, 0, out, 0, n);
}

CLR_API clr_status clr_scan_host(clr_context *ctx, const clr_options *opt,
                                 clr_op op, clr_type type, const void *in,
                                 void *out, size_t n) {
  CLR_PUBLIC_CALL(ctx, scan_host_call(ctx, opt, op, type, in, out, n));
}
