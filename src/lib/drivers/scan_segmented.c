/* The segmented scan driver (cl/scan_segmented.cl): a prefix scan that
 * restarts at every segment head, the heads given by CSR offsets or by a
 * flag byte an element.
 *
 * For n elements and runs of per_item elements a work-item:
 *   up:   level 0 (the elements) is folded to one (flag, value) pair a run,
 *         level 1; that level to level 2; ... until a level fits one run;
 *   down: the top level is scanned by one work-item from the initial
 *         value (the carry-in), then every level below from the exclusive
 *         results of the level above, level 0 writing the output.
 * The input is read twice and the output written once, like the tiled
 * scan.  Host arrays larger than one device allocation are streamed in
 * chunks chained through the carry buffer (each chunk's running value is
 * the next one's initial value). */
#include "internal.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Elements a work-item: long runs on CPUs (one work-item a core's share
 * amortises the binary search for its first offset); on GPUs tiles of
 * SSCAN_TILE_WG work-items of 32 elements (8 of 8-byte types; on the
 * H100, 32 took 0.73 ms for 1e6 random segments and 16 0.78 ms). */
#define SSCAN_ITEMS_CPU 2048
#define SSCAN_TILE_WG 128
#define SSCAN_VEC_CPU 8
/* per_item >= 2 keeps the level count below 64 for any n. */
#define SSCAN_MAX_LEVELS 64

typedef struct sscan_plan {
  clr_op op;
  clr_type in, acc;
  int by_offsets;
  int tiled; /* tiles in local memory (a fixed work-group) */
  size_t per_item, wg;
  clr_program_entry *up0, *down0; /* level 0: the input, heads as given */
  clr_program_entry *up, *down;   /* the levels above: pairs, flag bytes */
} sscan_plan;

/* Where a launch's heads come from: offsets (n_offsets of them from
 * element offsets_off; values of the whole array, lo being element 0 of
 * the launch) or flag bytes (from element heads_off). */
typedef struct sscan_io {
  cl_mem in, out, heads, offsets;
  cl_ulong in_off, out_off, heads_off, offsets_off, n_offsets, lo;
  cl_uint no_head0;   /* element 0 continues the first segment */
  cl_uint init_flags; /* cl/scan_segmented.cl's: 1 initial value, 2 total */
  cl_uint exclusive;
  cl_uint vec_ok; /* runs: in, out and heads aligned to their vectors */
} sscan_io;

static size_t ceil_div(size_t a, size_t b) { return a / b + (a % b != 0); }

static clr_status make_sscan_plan(clr_context *ctx, const clr_options *opt,
                                  clr_op op, clr_type type, int by_offsets,
                                  sscan_plan *p) {
  memset(p, 0, sizeof *p);
  p->op = op;
  p->in = type;
  p->acc = clr_opt_scan_output_type(opt, type);
  p->by_offsets = by_offsets;
  if (opt->kernel != CLR_KERNEL_DEFAULT)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "segmented scans have their own kernel: leave the kernel "
                    "at its default (CLR_KERNEL_DEFAULT), not '%s'",
                    clr_kernel_name(opt->kernel));
  if (opt->map != CLR_MAP_NONE || opt->exact)
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                    "segmented scans take no map and no exact sum");
  /* Tiles (GPUs, the strided layout) or runs (CPUs, contiguous). */
  p->tiled = opt->layout ? opt->layout == CLR_LAYOUT_STRIDED : ctx->desc.is_gpu;
  char shape[96] = "";
  if (p->tiled) {
    size_t acc_bytes = clr_type_size(p->acc);
    p->wg = clr_built_in_wg(ctx, opt->wg_size, SSCAN_TILE_WG);
    p->per_item = opt->coarse ? opt->coarse : acc_bytes > 4 ? 8 : 32;
    if (p->per_item > 32 || p->wg > ctx->desc.max_work_group_size)
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "segmented scans in tiles take at most 32 elements a "
                      "work-item and work-groups of at most %zu, not %zu and "
                      "%zu",
                      ctx->desc.max_work_group_size, p->per_item, p->wg);
    /* The tile (one padding element every 32), a mask a work-item. */
    for (;;) {
      size_t t = p->wg * p->per_item;
      if ((t + t / 32) * acc_bytes + p->wg * 4 + 64 <= ctx->desc.local_mem_size)
        break;
      if (opt->coarse || p->per_item <= 2)
        return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                        "a tile of %zu x %zu elements exceeds the device's "
                        "%llu bytes of local memory",
                        p->wg, p->per_item,
                        (unsigned long long)ctx->desc.local_mem_size);
      p->per_item /= 2;
    }
    snprintf(shape, sizeof shape, " -DCLR_SSCAN_WG=%zu -DCLR_SSCAN_IPT=%zu",
             p->wg, p->per_item);
  } else {
    p->per_item = opt->coarse ? opt->coarse : SSCAN_ITEMS_CPU;
  }
  if (p->per_item < 2)
    p->per_item = 2;
  /* One program for level 0 and the levels above when the input type is
   * the output type (the heads' form is an argument). */
  /* Runs read a vector at a time where it holds no head (level 0; the
   * levels above are short). */
  clr_build_spec spec = {.source = "scan_segmented.cl",
                         .helpers = "scan_lanes.cl",
                         .kernel = "clr_sscan_up",
                         .in = type,
                         .acc = p->acc,
                         .op = op,
                         .vec = p->tiled ? 0 : SSCAN_VEC_CPU,
                         .extra = shape[0] ? shape + 1 : NULL};
  clr_status st = clr_get_kernel(ctx, &spec, &p->up0);
  spec.kernel = "clr_sscan_down";
  if (st == CLR_OK)
    st = clr_get_kernel(ctx, &spec, &p->down0);
  /* The levels above: pairs of the output type, flags as bytes. */
  spec.in = p->acc;
  spec.kernel = "clr_sscan_up";
  if (st == CLR_OK)
    st = clr_get_kernel(ctx, &spec, &p->up);
  spec.kernel = "clr_sscan_down";
  if (st == CLR_OK)
    st = clr_get_kernel(ctx, &spec, &p->down);
  const clr_program_entry *all[4] = {p->up0, p->down0, p->up, p->down};
  size_t wg = 0;
  for (size_t i = 0; i < 4 && st == CLR_OK; i++) {
    size_t w;
    if (p->tiled) { /* the work-group size is built in */
      if (all[i]->max_wg < p->wg)
        st = clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "work-group size %zu exceeds this kernel's limit of %zu "
                      "on '%s'",
                      p->wg, all[i]->max_wg, ctx->desc.device_name);
      continue;
    }
    st = clr_choose_wg(ctx, all[i], opt->wg_size, 0, 0, 0, &w);
    if (st == CLR_OK && (wg == 0 || w < wg))
      wg = w;
  }
  if (!p->tiled)
    p->wg = wg;
  return st;
}

/* The levels above level 0 for n elements: their sizes, and where each
 * starts in the level buffers (values: ctx->aux[0], flags: ctx->aux[1]). */
typedef struct sscan_levels {
  size_t count, size[SSCAN_MAX_LEVELS], start[SSCAN_MAX_LEVELS];
  size_t total; /* entries of all the levels above 0 */
} sscan_levels;

static sscan_levels level_sizes(size_t n, size_t per_item) {
  sscan_levels L;
  memset(&L, 0, sizeof L);
  L.size[0] = n;
  L.count = 1;
  while (L.size[L.count - 1] > per_item && L.count < SSCAN_MAX_LEVELS) {
    L.size[L.count] = ceil_div(L.size[L.count - 1], per_item);
    L.start[L.count] = L.total;
    L.total += L.size[L.count];
    L.count++;
  }
  return L;
}

/* sp (a caller's scratch's plan, else NULL): the buffers named there
 * instead, nothing reserved. */
static clr_status reserve_levels(clr_context *ctx, const sscan_plan *p,
                                 size_t n_max, clr_scratch_plan *sp) {
  sscan_levels L = level_sizes(n_max, p->per_item);
  size_t entries = L.total ? L.total : 1;
  if (sp) {
    clr_scratch_need(sp, &ctx->aux[0], entries * clr_type_size(p->acc));
    clr_scratch_need(sp, &ctx->aux[1], entries);
    return CLR_OK;
  }
  clr_status st = clr_buffer_reserve(
      ctx, &ctx->aux[0], entries * clr_type_size(p->acc), CL_MEM_READ_WRITE);
  if (st == CLR_OK)
    st = clr_buffer_reserve(ctx, &ctx->aux[1], entries, CL_MEM_READ_WRITE);
  return st;
}

/* A pass's work-group size for its items: the plan's, or fewer items
 * than it in runs (tiles have theirs built in). */
static size_t pass_local(const sscan_plan *p, size_t items) {
  return items < p->wg && !p->tiled ? items : p->wg;
}

/* wait: the caller's wait list (an asynchronous call's first pass), or
 * NULL. */
static clr_status enqueue(clr_context *ctx, const sscan_plan *p, cl_kernel k,
                          size_t items, const clr_async *wait, cl_event *ev) {
  size_t local = pass_local(p, items);
  size_t global = ceil_div(items, local) * local;
  cl_uint n_wait = wait ? wait->num_events : 0;
  cl_int err =
      clEnqueueNDRangeKernel(clr_queue(ctx), k, 1, NULL, &global, &local,
                             n_wait, n_wait ? wait->wait_list : NULL, ev);
  if (err != CL_SUCCESS) {
    *ev = NULL;
    return clr_cl_fail(ctx, "clEnqueueNDRangeKernel", err);
  }
  return CLR_OK;
}

/* One pass of a level: up (fold level k into level k + 1) or down (scan
 * level k from level k + 1's exclusive results). */
static clr_status level_pass(clr_context *ctx, const sscan_plan *p,
                             const sscan_io *io, const sscan_levels *L,
                             size_t k, int up, const clr_async *wait,
                             cl_event *ev) {
  cl_mem vals = ctx->aux[0].mem, flags = ctx->aux[1].mem;
  cl_ulong n = L->size[k], per = p->per_item;
  /* Level 0 reads the caller's input and heads; a level above reads its
   * pairs (and writes its exclusive results over them). */
  cl_mem in = k ? vals : io->in, heads = k ? flags : io->heads,
         offsets = k ? flags : io->offsets, out = k ? vals : io->out;
  cl_ulong in_off = k ? L->start[k] : io->in_off,
           heads_off = k ? L->start[k] : io->heads_off,
           offsets_off = k ? 0 : io->offsets_off,
           n_offsets = k ? 0 : io->n_offsets, lo = k ? 0 : io->lo,
           out_off = k ? L->start[k] : io->out_off;
  cl_uint no_head0 = k ? 0 : io->no_head0, vec_ok = k ? 0 : io->vec_ok;
  cl_uint by_offsets = k ? 0 : (cl_uint)p->by_offsets;
  size_t items = ceil_div((size_t)n, p->per_item);
  clr_program_entry *e = up ? (k ? p->up : p->up0) : (k ? p->down : p->down0);
  clr_status st;
  if (up) {
    cl_ulong above = L->start[k + 1];
    st = CLR_SET_ARGS(ctx, e->kernel, CLR_ARG(in), CLR_ARG(in_off),
                      CLR_ARG(heads), CLR_ARG(heads_off), CLR_ARG(offsets),
                      CLR_ARG(offsets_off), CLR_ARG(n_offsets),
                      CLR_ARG(by_offsets), CLR_ARG(lo), CLR_ARG(no_head0),
                      CLR_ARG(n), CLR_ARG(per), CLR_ARG(vals), CLR_ARG(above),
                      CLR_ARG(flags), CLR_ARG(above), CLR_ARG(vec_ok));
  } else {
    int top = k + 1 == L->count;
    cl_ulong carry_off = top ? 0 : L->start[k + 1];
    cl_uint use_carry = !top;
    cl_uint init_flags =
        (top ? io->init_flags & 1u : 0u) | (k == 0 ? io->init_flags & 2u : 0u);
    cl_uint mode = k ? 2u : io->exclusive ? 1u : 0u;
    cl_mem carry = ctx->carry.mem;
    st = CLR_SET_ARGS(
        ctx, e->kernel, CLR_ARG(in), CLR_ARG(in_off), CLR_ARG(heads),
        CLR_ARG(heads_off), CLR_ARG(offsets), CLR_ARG(offsets_off),
        CLR_ARG(n_offsets), CLR_ARG(by_offsets), CLR_ARG(lo), CLR_ARG(no_head0),
        CLR_ARG(n), CLR_ARG(per), CLR_ARG(vals), CLR_ARG(carry_off),
        CLR_ARG(use_carry), CLR_ARG(carry), CLR_ARG(init_flags), CLR_ARG(out),
        CLR_ARG(out_off), CLR_ARG(mode), CLR_ARG(vec_ok));
  }
  if (st == CLR_OK)
    st = enqueue(ctx, p, e->kernel, items, wait, ev);
  return st;
}

/* One whole segmented scan of n elements: every level up, then down.
 * With record, the passes are described in the call's timing.  async (an
 * asynchronous call, else NULL): the first pass waits for its wait list,
 * nothing waits on the host (the passes' shapes, no times), and the last
 * pass's event goes to *async->done. */
static clr_status sscan_launch(clr_context *ctx, const sscan_plan *p,
                               const sscan_io *io, size_t n, int record,
                               const clr_async *async, size_t *depth) {
  sscan_levels L = level_sizes(n, p->per_item);
  cl_event ev[2 * SSCAN_MAX_LEVELS] = {NULL};
  size_t n_ev = 0;
  clr_status st = CLR_OK;
  for (size_t k = 0; k + 1 < L.count && st == CLR_OK; k++, n_ev++)
    st = level_pass(ctx, p, io, &L, k, 1, n_ev ? NULL : async, &ev[n_ev]);
  for (size_t k = L.count; k-- > 0 && st == CLR_OK; n_ev++)
    st = level_pass(ctx, p, io, &L, k, 0, n_ev ? NULL : async, &ev[n_ev]);
  if (st != CLR_OK && n_ev && !ev[n_ev - 1])
    n_ev--;
  if (st == CLR_OK && n_ev && !async) {
    cl_int err = clWaitForEvents((cl_uint)n_ev, ev);
    if (err != CL_SUCCESS)
      st = clr_cl_fail(ctx, "clWaitForEvents", err);
  }
  if (st == CLR_OK) {
    clr_call_timing *t = &ctx->timing;
    if (!async)
      t->kernel_ms += clr_event_ms(ev[0], ev[n_ev - 1]);
    if (record) {
      t->n_passes = n_ev < CLR_MAX_PASSES ? n_ev : CLR_MAX_PASSES;
      for (size_t i = 0; i < t->n_passes; i++) {
        /* up passes climb the levels, down passes come back */
        size_t k = i + 1 < L.count ? i : n_ev - 1 - i;
        size_t items = ceil_div(L.size[k], p->per_item);
        size_t local = pass_local(p, items);
        t->passes[i].n_in = L.size[k];
        t->passes[i].local_size = local;
        t->passes[i].global_size = ceil_div(items, local) * local;
        t->passes[i].ms = async ? 0 : clr_event_ms(ev[i], ev[i]);
      }
    }
    /* An output's chain of roundings: a run's worth at every level, and
     * the combine with the carry from above. */
    *depth = L.count * (p->per_item + 1);
    if (async && async->done && n_ev)
      *async->done = ev[--n_ev]; /* the caller releases it */
  }
  for (size_t i = 0; i < n_ev; i++)
    clReleaseEvent(ev[i]);
  return st;
}

/* The first of offsets[0, count) that is >= v. */
static size_t lower_bound(const uint64_t *offsets, size_t count, uint64_t v) {
  const uint64_t *first = offsets;
  for (size_t len = count; len > 0;) { /* [first, first + len) undecided */
    size_t half = len / 2;
    if (first[half] < v) {
      first += half + 1;
      len -= half + 1;
    } else {
      len = half;
    }
  }
  return (size_t)(first - offsets);
}

/* The whole host call: offsets (n_segments + 1 of them) or heads. */
static clr_status sscan_host_call(clr_context *ctx, const clr_options *opt,
                                  clr_op op, clr_type type, const void *in,
                                  void *out, size_t n, const uint64_t *offsets,
                                  size_t n_segments, const uint8_t *heads,
                                  int by_offsets) {
  clr_options defaults;
  sscan_plan plan;
  cl_uint flags = 0;
  double t0 = clr_now_ms();
  clr_status st = clr_start_work(ctx, &opt, &defaults, in, out,
                                 "input and output", op, type, n, 1);
  if (st != CLR_OK)
    return st;
  if (by_offsets ? !offsets : !heads)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "%s must not be NULL",
                    by_offsets ? "offsets" : "heads");
  size_t longest = 0;
  if (offsets && n_segments == 0)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "n_segments must be at least 1");
  if (offsets &&
      (st = clr_check_offsets(ctx, offsets, n_segments, n, &longest)) != CLR_OK)
    return st;
  clr_type otype = clr_opt_scan_output_type(opt, type);
  size_t esize = clr_type_size(type), osize = clr_type_size(otype);
  st = clr_check_scan_host_overlap(ctx, in, out, n, esize, osize);
  size_t chunk = clr_chunk_elems(ctx, esize > osize ? esize : osize);
  size_t n_max = n < chunk ? n : chunk;
  if (st == CLR_OK)
    st = make_sscan_plan(ctx, opt, op, type, offsets != NULL, &plan);
  if (st == CLR_OK)
    st = reserve_levels(ctx, &plan, n_max, NULL);
  if (st == CLR_OK)
    st = clr_scan_init_carry(ctx, opt, otype, &flags);
  if (st != CLR_OK)
    return st;
  /* Chunks of at most `chunk` elements, cut shorter where their offsets
   * would not fit one allocation. */
  size_t chunks = 0, depth = 0, max_offsets = clr_chunk_elems(ctx, 8);
  for (size_t begin = 0; begin < n && st == CLR_OK; chunks++) {
    size_t len = n - begin < chunk ? n - begin : chunk;
    size_t k0 = 0, k1 = 0;
    if (offsets) {
      k0 = lower_bound(offsets, n_segments + 1, begin);
      if (n_segments + 1 - k0 > max_offsets &&
          offsets[k0 + max_offsets] < begin + len)
        len = (size_t)offsets[k0 + max_offsets] - begin;
      if (len == 0) {
        st = clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                      "more than %zu segments start at element %zu: more "
                      "offsets than one device allocation holds",
                      max_offsets, begin);
        break;
      }
      k1 = lower_bound(offsets, n_segments + 1, begin + len);
    }
    char *src = (char *)in + begin * esize, *dst = (char *)out + begin * osize;
    int separate = (ctx->host_unified && in != out) || esize != osize;
    clr_staged sin, sout, sheads, *res = NULL;
    memset(&sin, 0, sizeof sin);
    memset(&sout, 0, sizeof sout);
    memset(&sheads, 0, sizeof sheads);
    /* This chunk's offsets: those in [begin, begin + len) (one stands in
     * when there is none: the kernels read none). */
    if (offsets) {
      size_t first = k0 < n_segments ? k0 : n_segments;
      size_t count = k1 > first ? k1 - first : 1;
      st = clr_stage_in(ctx, &ctx->partial[1],
                        (void *)(uintptr_t)(offsets + first),
                        count * sizeof(uint64_t), 0, &sheads);
    } else {
      st = clr_stage_in(ctx, &ctx->input2, (void *)(uintptr_t)(heads + begin),
                        len, 0, &sheads);
    }
    if (st == CLR_OK)
      st = clr_stage_scan_chunk(ctx, src, dst, len, esize, osize, separate,
                                &sin, &sout, &res);
    if (st == CLR_OK) {
      /* Vectors where every array a kernel reads by vector is aligned to
       * them: staged copies are; arrays used in place must be. */
      size_t v = SSCAN_VEC_CPU;
      int vec_ok =
          (!sin.wrapped || clr_is_aligned(src, v * esize)) &&
          (!res->wrapped || clr_is_aligned(dst, v * osize)) &&
          (offsets || !sheads.wrapped || clr_is_aligned(heads + begin, v));
      sscan_io io = {.in = sin.mem,
                     .out = res->mem,
                     .vec_ok = (cl_uint)vec_ok,
                     .heads = sheads.mem,
                     .offsets = sheads.mem,
                     .n_offsets = k1 - k0,
                     .lo = begin,
                     .no_head0 = begin == 0,
                     .init_flags = flags | 2u,
                     .exclusive = opt->exclusive != 0};
      size_t d = 0;
      st = sscan_launch(ctx, &plan, &io, len, begin == 0, NULL, &d);
      depth += d;
      if (st == CLR_OK)
        st = clr_stage_out(ctx, res);
    }
    begin += len;
    /* The running value becomes the next chunk's initial value. */
    if (st == CLR_OK && begin < n) {
      st = clr_scan_chain_carry(ctx, osize, &flags);
      if (chunks == 0)
        clr_log(ctx,
                "segmented scan: %zu elements streamed in chunks of at "
                "most %zu",
                n, chunk);
    }
    clr_stage_release(ctx, &sin);
    clr_stage_release(ctx, &sout);
    clr_stage_release(ctx, &sheads);
  }
  /* No segment's chain is longer than the segment. */
  clr_timing_done(ctx, chunks, offsets && longest < depth ? longest : depth,
                  t0);
  return st;
}

static clr_status
sscan_buffer_call(clr_context *ctx, const clr_options *opt, clr_op op,
                  clr_type type, cl_mem in, size_t in_offset, cl_mem out,
                  size_t out_offset, size_t n, cl_mem offsets,
                  size_t offsets_offset, size_t n_segments, cl_mem heads,
                  size_t heads_offset, int by_offsets, cl_mem status,
                  size_t status_offset, const clr_async *async) {
  clr_options defaults;
  sscan_plan plan;
  cl_uint flags = 0;
  double t0 = clr_now_ms();
  clr_status st =
      clr_start_work(ctx, &opt, &defaults, in, out, "buffers", op, type, n, 1);
  if (st != CLR_OK)
    return st;
  if (by_offsets ? !offsets : !heads)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "%s must not be NULL",
                    by_offsets ? "offsets" : "heads");
  if (offsets && n_segments == 0)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "n_segments must be at least 1");
  if (async && async->num_events && !async->wait_list)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "%u events to wait for, but no wait list",
                    (unsigned)async->num_events);
  clr_type otype = clr_opt_scan_output_type(opt, type);
  st = clr_check_buffer(ctx, in, in_offset, n, type,
                        CLR_ACCESS_READ | (in == out ? CLR_ACCESS_WRITE : 0),
                        "in");
  if (st == CLR_OK)
    st = clr_check_buffer(ctx, out, out_offset, n, otype, CLR_ACCESS_WRITE,
                          "out");
  if (st == CLR_OK && offsets)
    st = n_segments > SIZE_MAX / sizeof(cl_ulong) - 1
             ? clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                        "%zu segments exceed the address space", n_segments)
             : clr_check_buffer_elems(ctx, offsets, offsets_offset,
                                      n_segments + 1, sizeof(cl_ulong),
                                      CLR_ACCESS_READ, "offsets");
  if (st == CLR_OK && heads)
    st = clr_check_buffer_elems(ctx, heads, heads_offset, n, 1, CLR_ACCESS_READ,
                                "heads");
  if (st == CLR_OK)
    st = clr_check_scan_buffers_overlap(ctx, in, in_offset, out, out_offset,
                                        clr_type_size(type),
                                        clr_type_size(otype), n);
  if (st == CLR_OK && offsets && async) {
    size_t osize = clr_type_size(otype);
    const clr_byte_range ranges[] = {
        {out, out_offset * osize, n * osize, "output"}};
    st = clr_check_status_buffer(ctx, status, status_offset, ranges, 1);
  }
  /* Offsets are checked before any kernel reads through them: here,
   * blocking, or (enqueued) on the device below, the kernels reading a
   * sanitised copy (clr_offsets_sanitise). */
  if (st == CLR_OK && offsets && !async)
    st = clr_check_offsets_buffer(ctx, offsets, offsets_offset, n_segments, n,
                                  NULL, 0, NULL);
  if (st == CLR_OK)
    st = make_sscan_plan(ctx, opt, op, type, offsets != NULL, &plan);
  if (st == CLR_OK)
    st = reserve_levels(ctx, &plan, n, NULL);
  if (st == CLR_OK)
    st = clr_scan_init_carry(ctx, opt, otype, &flags);
  /* Enqueued by offsets: the check and its copy take the caller's wait
   * list, and the passes read the copy from element 0. */
  clr_async rest = {0, NULL, async ? async->done : NULL};
  if (st == CLR_OK && offsets && async) {
    st = clr_offsets_sanitise(ctx, offsets, offsets_offset, n_segments, n,
                              status, status_offset, async, &offsets);
    offsets_offset = 0;
    async = &rest;
  }
  if (st == CLR_OK) {
    size_t v = SSCAN_VEC_CPU;
    sscan_io io = {.in = in,
                   .out = out,
                   .vec_ok = in_offset % v == 0 && out_offset % v == 0 &&
                             (offsets || heads_offset % v == 0),
                   .heads = offsets ? offsets : heads,
                   .offsets = offsets ? offsets : heads,
                   .in_off = in_offset,
                   .out_off = out_offset,
                   .heads_off = offsets ? 0 : heads_offset,
                   .offsets_off = offsets ? offsets_offset : 0,
                   .n_offsets = offsets ? n_segments + 1 : 0,
                   .lo = 0,
                   .no_head0 = 1,
                   .init_flags = flags,
                   .exclusive = opt->exclusive != 0};
    size_t depth = 0;
    st = sscan_launch(ctx, &plan, &io, n, 1, async, &depth);
    ctx->timing.error_depth = depth;
  }
  ctx->timing.chunks = 1;
  ctx->timing.total_ms = clr_now_ms() - t0;
  return st;
}

clr_status clr_sscan_scratch(clr_context *ctx, const clr_options *opt,
                             clr_op op, clr_type type, size_t n, int by_offsets,
                             size_t n_segments, clr_scratch_plan *sp) {
  clr_options defaults;
  sscan_plan plan;
  int one = 1;
  clr_status st = clr_start_work(ctx, &opt, &defaults, &one, &one, "buffers",
                                 op, type, n, 1);
  if (st == CLR_OK && by_offsets && n_segments == 0)
    st = clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                  "n_segments must be at least 1");
  if (st == CLR_OK && by_offsets &&
      n_segments > SIZE_MAX / sizeof(cl_ulong) - 1)
    st = clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                  "%zu segments exceed the address space", n_segments);
  if (st == CLR_OK)
    st = make_sscan_plan(ctx, opt, op, type, by_offsets, &plan);
  if (st == CLR_OK)
    st = reserve_levels(ctx, &plan, n, sp);
  if (st != CLR_OK)
    return st;
  clr_scratch_need(sp, &ctx->carry, 2 * 8); /* clr_scan_init_carry */
  if (!by_offsets)
    return CLR_OK;
  /* clr_run's check of the offsets, clr_enqueue's sanitised copy */
  clr_check_offsets_scratch(ctx, sp);
  return clr_offsets_sanitise_scratch(ctx, n_segments, sp);
}

/* The public entry points: the call bracket around the host or buffer
 * call (which refuses the NULL offsets or heads). */
CLR_API clr_status clr_scan_segments_host(clr_context *ctx,
                                          const clr_options *opt, clr_op op,
                                          clr_type type, const void *in,
                                          void *out, size_t n,
                                          const uint64_t *offsets,
                                          size_t n_segments) {
  CLR_PUBLIC_CALL(ctx, sscan_host_call(ctx, opt, op, type, in, out, n, offsets,
                                       n_segments, NULL, 1));
}

CLR_API clr_status clr_scan_heads_host(clr_context *ctx, const clr_options *opt,
                                       clr_op op, clr_type type, const void *in,
                                       void *out, size_t n,
                                       const uint8_t *heads) {
  CLR_PUBLIC_CALL(
      ctx, sscan_host_call(ctx, opt, op, type, in, out, n, NULL, 0, heads, 0));
}

CLR_API clr_status clr_scan_segments_buffer(
    clr_context *ctx, const clr_options *opt, clr_op op, clr_type type,
    cl_mem in, size_t in_offset, cl_mem out, size_t out_offset, size_t n,
    cl_mem offsets, size_t offsets_offset, size_t n_segments) {
  CLR_PUBLIC_CALL(ctx,
                  sscan_buffer_call(ctx, opt, op, type, in, in_offset, out,
                                    out_offset, n, offsets, offsets_offset,
                                    n_segments, NULL, 0, 1, NULL, 0, NULL));
}

CLR_API clr_status clr_scan_heads_buffer(clr_context *ctx,
                                         const clr_options *opt, clr_op op,
                                         clr_type type, cl_mem in,
                                         size_t in_offset, cl_mem out,
                                         size_t out_offset, size_t n,
                                         cl_mem heads, size_t heads_offset) {
  CLR_PUBLIC_CALL(ctx, sscan_buffer_call(ctx, opt, op, type, in, in_offset, out,
                                         out_offset, n, NULL, 0, 0, heads,
                                         heads_offset, 0, NULL, 0, NULL));
}

CLR_API clr_status clr_scan_heads_buffer_async(
    clr_context *ctx, const clr_options *opt, clr_op op, clr_type type,
    cl_mem in, size_t in_offset, cl_mem out, size_t out_offset, size_t n,
    cl_mem heads, size_t heads_offset, cl_uint num_events,
    const cl_event *wait_list, cl_event *event) {
  clr_async async;
  if (!ctx)
    return CLR_ERR_INVALID_ARGUMENT;
  clr_begin_async_call(ctx, &async, num_events, wait_list, event);
  return clr_end_async_call(
      ctx,
      sscan_buffer_call(ctx, opt, op, type, in, in_offset, out, out_offset, n,
                        NULL, 0, 0, heads, heads_offset, 0, NULL, 0, &async));
}

clr_status clr_scan_segments_enqueue(
    clr_context *ctx, const clr_options *opt, clr_op op, clr_type type,
    cl_mem in, size_t in_offset, cl_mem out, size_t out_offset, size_t n,
    cl_mem offsets, size_t offsets_offset, size_t n_segments, cl_mem status,
    size_t status_offset, cl_uint num_events, const cl_event *wait_list,
    cl_event *event) {
  clr_async async;
  if (!ctx)
    return CLR_ERR_INVALID_ARGUMENT;
  clr_begin_async_call(ctx, &async, num_events, wait_list, event);
  return clr_end_async_call(
      ctx, sscan_buffer_call(ctx, opt, op, type, in, in_offset, out, out_offset,
                             n, offsets, offsets_offset, n_segments, NULL, 0, 1,
                             status, status_offset, &async));
}
