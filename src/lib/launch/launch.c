/* Launch shapes chosen per device: work-group size, coarse factor, vector
 * width and access pattern.  Explicit options always win; then the
 * context's tuning (built-in defaults and tuning files, see tuning.c);
 * then the device
 * type decides (a GPU wants coalesced, strided access and many work-groups
 * in flight; a CPU wants one contiguous stream per work-item and a few
 * work-groups per core). */
#include "internal.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static size_t ceil_div(size_t a, size_t b) { return a / b + (a % b != 0); }

/* The smallest tile a tuned tiled scan uses: CLR_MAX_SCAN_LEVELS levels of
 * 64-element tiles scan 64^12 = 2^72 elements (2^48 should a kernel allow
 * only a quarter of the device's work-group size). */
#define CLR_SCAN_MIN_TILE 64

size_t clr_ceil_log2(size_t x) {
  size_t k = 0;
  while (((size_t)1 << k) < x)
    k++;
  return k;
}

static unsigned largest_pow2_dividing(size_t x, unsigned cap) {
  unsigned v = 1;
  while (v < cap && x % (2 * v) == 0)
    v *= 2;
  return v;
}

void clr_choose_coarse_shape(const clr_context *ctx, const clr_options *opt,
                             clr_type in, clr_type acc, unsigned vec_bytes,
                             unsigned *vec, clr_layout *layout) {
  const clr_tuning *t = &ctx->tuning;
  *layout = opt->layout != CLR_LAYOUT_AUTO ? opt->layout : t->reduce_layout;
  if (opt->vector_width) {
    *vec = opt->vector_width;
    return;
  }
  /* Loads of vec_bytes.  On CPUs counted in the wider of the two types so
   * the accumulator vector stays within a SIMD register's width; on GPUs
   * (no such registers) in the input's own size: an H100 sums 1e8 ints
   * into longs in 0.145 ms with int2 loads, 0.136 ms (the streaming read's
   * time) with int4.  Half data in its own 2 bytes everywhere (PoCL runs a
   * half max 13x slower with 8 halves a load than with 16; an H100 is
   * within 5% of its best at 8, docs/perf-log/reductions.md). */
  size_t wide = in == CLR_HALF || ctx->desc.is_gpu       ? clr_type_size(in)
                : clr_type_size(in) > clr_type_size(acc) ? clr_type_size(in)
                                                         : clr_type_size(acc);
  unsigned v = (unsigned)(vec_bytes / wide);
  if (v == 0)
    v = 1;
  if (v > 16)
    v = 16;
  v = largest_pow2_dividing(v, 16); /* a legal OpenCL vector width */
  if (opt->coarse)
    v = largest_pow2_dividing(opt->coarse, v);
  *vec = v;
}

clr_status clr_choose_wg(clr_context *ctx, const clr_program_entry *k,
                         size_t requested, size_t preferred, size_t elem_bytes,
                         size_t local_elems_per_item, size_t *out) {
  size_t limit = k->max_wg;
  if (ctx->desc.max_work_group_size < limit)
    limit = ctx->desc.max_work_group_size;
  if (local_elems_per_item && elem_bytes) {
    cl_ulong avail = ctx->desc.local_mem_size > k->local_used
                         ? ctx->desc.local_mem_size - k->local_used
                         : 0;
    size_t fit = (size_t)(avail / (elem_bytes * local_elems_per_item));
    if (fit < limit)
      limit = fit;
  }
  if (limit == 0)
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                    "kernel cannot run: no work-group size fits the device");
  if (requested) {
    if (requested > limit)
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "work-group size %zu exceeds this kernel's limit of %zu "
                      "on '%s'",
                      requested, limit, ctx->desc.device_name);
    *out = requested;
    return CLR_OK;
  }
  size_t want = preferred ? preferred : 256;
  if (want > limit) {
    /* Largest power of two within the limit, keeping the preferred
     * multiple when possible. */
    want = 1;
    while (want * 2 <= limit)
      want *= 2;
  }
  *out = want;
  return CLR_OK;
}

void clr_choose_scan_shape(const clr_context *ctx, const clr_options *opt,
                           clr_type type, clr_type acc, clr_op op,
                           unsigned *vec, size_t *per_item) {
  /* GPU: one element per work-item, coalesced, as in the course notes.
   * CPU: long contiguous runs per work-item (cache resident for the second
   * read), tile totals with native vectors. */
  unsigned v = ctx->desc.is_gpu ? 1 : ctx->native_vec[type];
  size_t k = opt->coarse ? opt->coarse : ctx->tuning.scan_per_item;
  if (!opt->coarse) {
    /* Each level of the tiled scan divides n by its tile (work-group size
     * x elements per work-item): with legal but tiny tuned values
     * (scan.wg=1, scan.per_item=1) a tile of 1 never shrinks n and one of
     * 2 needs log2 n levels, more than CLR_MAX_SCAN_LEVELS.  So the tuned
     * run per work-item grows until the tile, at the work-group size the
     * tuning asks for as the device allows it, holds CLR_SCAN_MIN_TILE
     * elements. */
    size_t wg = opt->wg_size ? opt->wg_size : ctx->tuning.scan_wg;
    if (ctx->desc.max_work_group_size && wg > ctx->desc.max_work_group_size)
      wg = ctx->desc.max_work_group_size;
    if (wg == 0)
      wg = 1;
    if (k < ceil_div(CLR_SCAN_MIN_TILE, wg))
      k = ceil_div(CLR_SCAN_MIN_TILE, wg);
  }
  /* A CPU's floating-point sum or product scans vectors of at most 32
   * bytes.  On PoCL's skylake-avx512 device (8 doubles native) the
   * decoupled scan of 1e8 doubles took 136 ms 8 wide and 79 ms 4 wide, a
   * product 130 and 74; a min or max (order keys: integer lanes) and the
   * integer sums ran as fast or faster 8 wide (docs/perf-log/cpu.md). */
  if (!ctx->desc.is_gpu && clr_type_is_float(acc) &&
      (clr_op_info(op)->combine == CLR_SUM ||
       clr_op_info(op)->combine == CLR_PROD))
    while (v > 1 && v * clr_type_size(acc) > 32)
      v /= 2;
  if (opt->vector_width)
    v = opt->vector_width;
  if (v == 0)
    v = 1;
  if (k == 0)
    k = 1;
  v = largest_pow2_dividing(k, v > 8 ? 8 : v); /* scan_tile.cl: 1..8 */
  *vec = v;
  *per_item = k;
}

/* *out = a * b; 0 when the product does not fit in size_t. */
static int mul_fits(size_t a, size_t b, size_t *out) {
  if (b && a > SIZE_MAX / b)
    return 0;
  *out = a * b;
  return 1;
}

size_t clr_fold_depth(size_t values, size_t wg) {
  return ceil_div(values, wg) + clr_ceil_log2(wg);
}

clr_status clr_reduce_launch(clr_context *ctx, clr_kernel kernel,
                             const clr_options *opt, size_t n, size_t wg,
                             unsigned vec, clr_layout layout, int first_pass,
                             clr_launch *out) {
  memset(out, 0, sizeof *out);
  int coarse_kernel = kernel != CLR_REDUCE_INTERLEAVED &&
                      kernel != CLR_REDUCE_SEQUENTIAL &&
                      kernel != CLR_REDUCE_FIRST_ADD;
  if (wg == 0 || n == 0 || (coarse_kernel && vec == 0))
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "internal: reduction pass of %zu elements, work-group "
                    "size %zu, vector width %u",
                    n, wg, vec);
  size_t tree = clr_ceil_log2(wg);
  out->local = wg;
  switch (kernel) {
  case CLR_REDUCE_INTERLEAVED:
  case CLR_REDUCE_SEQUENTIAL:
    out->groups = ceil_div(n, wg);
    out->depth = tree;
    break;
  case CLR_REDUCE_FIRST_ADD:
    out->groups = ceil_div(ceil_div(n, 2), wg); /* 2 * wg elements a group */
    out->depth = 1 + tree;
    break;
  default: { /* CLR_REDUCE_COARSE */
    size_t nv = n / vec;
    size_t per_item = 1; /* vectors per work-item */
    /* A coarse factor beyond the pass's n means "one work-item reads
     * everything": clamped to n, it gives the same shape and keeps
     * gid * per_item (and every product below) within n's range. */
    size_t coarse = opt->coarse < n ? opt->coarse : n;
    if (coarse) {
      per_item = ceil_div(coarse, vec);
      size_t items = nv ? ceil_div(nv, per_item) : 1;
      out->groups = ceil_div(items, wg);
    } else {
      /* Enough work-groups to fill the device, but at least
       * reduce.min_vectors (default 16) vectors a work-item, so small
       * inputs (later passes) take one group. */
      size_t target = 0;
      if (!mul_fits((size_t)ctx->desc.compute_units,
                    ctx->tuning.reduce_groups_per_cu
                        ? ctx->tuning.reduce_groups_per_cu
                        : 1,
                    &target))
        target = SIZE_MAX;
      size_t min_v = ctx->tuning.reduce_min_vectors; /* >= 1: tuning.c */
      size_t by_size = ceil_div(ceil_div(nv ? nv : 1, min_v), wg);
      /* A first pass that needs more than one work-group spreads over
       * reduce.min_groups_cu work-groups a compute unit, fewer loads a
       * work-item than min_vectors asks, as long as every work-item gets a
       * load: on an H100 1e6 floats in 62 groups of 16 loads left half the
       * SMs idle (tuning.c).  One group stays one (a small call needs no
       * fold: 2 us less at 1e4 floats), and a pass over partials must
       * stay one group. */
      size_t spread = 0;
      if (first_pass && by_size > 1 && ctx->tuning.reduce_min_groups_cu &&
          !mul_fits((size_t)ctx->desc.compute_units,
                    ctx->tuning.reduce_min_groups_cu, &spread))
        spread = SIZE_MAX;
      size_t by_loads = ceil_div(nv ? nv : 1, wg); /* one load an item */
      if (spread > by_loads)
        spread = by_loads;
      if (by_size < spread)
        by_size = spread;
      out->groups = by_size < target ? by_size : target;
    }
    if (out->groups == 0)
      out->groups = 1;
    size_t items = 0, reach = 0;
    if (!mul_fits(out->groups, wg, &items))
      break; /* reported below */
    if (layout == CLR_LAYOUT_CONTIGUOUS) {
      if (!coarse)
        per_item = ceil_div(nv ? nv : 1, items);
    } else {
      per_item = ceil_div(nv ? nv : 1, items); /* grid-stride iterations */
    }
    out->per_item = per_item;
    /* The contiguous kernel starts work-item g at vector g * per_item: the
     * last start must be representable (the kernel also clamps it). */
    if (!mul_fits(items, per_item, &reach))
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "a pass of %zu work-items x %zu vectors overflows the "
                      "index range",
                      items, per_item);
    /* lane chain (no longer than the input) + lane fold + tail on item 0
     * + tree */
    size_t chain = per_item < nv ? per_item : nv;
    out->depth = chain + clr_ceil_log2(vec) + (n % vec) + tree;
    break;
  }
  }
  if (out->groups == 0)
    out->groups = 1;
  if (!mul_fits(out->groups, wg, &out->global))
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "%zu work-groups of %zu work-items overflow the global "
                    "size",
                    out->groups, wg);
  return CLR_OK;
}

size_t clr_built_in_wg(const clr_context *ctx, size_t requested,
                       size_t preferred) {
  if (requested)
    return requested;
  size_t wg = preferred;
  while (wg > 1 && wg > ctx->desc.max_work_group_size)
    wg /= 2;
  return wg;
}
