/* Column reductions of a row-major matrix: one result per column, the fold
 * over its rows (NumPy's a.sum(axis=0)), cl/reduce_columns.cl.  The matrix
 * is read once, in memory order; the host picks the launch shape:
 *   - GPUs (strided layout): a work-group takes `span` columns, and when
 *     the matrix is narrower than a work-group its work-items stand in
 *     wg / cols rows at once (a tall, thin matrix reads as a flat array);
 *     the rows are split over enough work-groups to fill the device, and
 *     a second launch folds the splits' partials.
 *   - CPUs (contiguous layout): a work-item takes a run of adjacent
 *     columns and a split's rows, walking each row's run in order.
 * A host array larger than one device allocation is streamed in blocks of
 * rows (or, for rows longer than an allocation, pieces of one row), each
 * block folded after the ones before (the kernels' fold_into).  Row
 * reductions are segments of one length: segmented.c's rows.
 * A NaN-skipping mean of floating data (nanmean) divides each nansum by
 * its own count of numbers: a second reduction of the same shape with
 * clr_count_options (1 for a number, 0 for a NaN, summed in ulong) into a
 * temporary buffer, streamed block by block with the sums, then
 * cl/reduce_segmented.cl's clr_seg_mean over the counts (as segmented.c
 * divides its nanmeans). */
#include "internal.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The strided shape's work-group size, unless asked for. */
#define COLS_WG 256
/* The first launch takes at least this many work-groups (strided) or
 * work-items (contiguous) a compute unit, rows allowing. */
#define COLS_GROUPS_PER_CU 4
#define COLS_GROUPS_PER_CU_NARROW 8
#define COLS_ITEMS_PER_CU 4
/* A split takes at least this many rows a lane: fewer would make the
 * partials' fold cost more than it saves. */
#define COLS_MIN_ROWS 16
/* The contiguous shape: a work-item's run of columns, their accumulators
 * in about this many bytes (at least 16 columns, at most 512; cl:
 * COLS_RUN): each row's run read in one stream. */
#define COLS_RUN_BYTES 2048
/* The strided shape: a work-group takes at least this many column vectors
 * (of 1, 2 or 4 columns: COLS_VEC) side by side where the matrix has
 * them, its other work-items standing in further rows (lanes). */
#define COLS_SPAN 32

typedef struct cols_plan {
  clr_op op;   /* what the kernels fold: a mean's sum */
  int mean;    /* CLR_MEAN: the sums divided by the rows after */
  int counted; /* nanmean of floating data: divided by counts of numbers */
  /* the counts' plan: its launches are the call's work (kernel time) but
   * not its passes, which stay the sums' (as segmented.c's counts) */
  int quiet;
  clr_type in, acc;
  size_t acc_bytes; /* a result or partial: clr_result_bytes */
  int runs;         /* the contiguous shape */
  int axis;         /* 0: columns, 1: rows */
  size_t run_cols;  /* contiguous columns: a work-item's (COLS_RUN) */
  /* clr_enqueue's call: the caller's events (NULL: a blocking call), the
   * last command's event so far, whether the first command has taken
   * the wait list; dry: plan only (kernels built, buffers reserved,
   * nothing enqueued), so nothing fails once commands wait on the
   * caller's events */
  const clr_async *async;
  cl_event last;
  int waited, dry;
  /* a caller's scratch's plan (dry run only): the buffers named there,
   * none reserved */
  clr_scratch_plan *sp;
  clr_program_entry *first, *partials, *divide;
  /* strided: the kernels of 2 and 4 columns a load ([1]: first's, [2]:
   * 4's; [0] unused), built when a launch takes them */
  clr_program_entry *first_vec[3], *partials_vec[3];
  /* var and std of rows: the build options that make a kernel's writes
   * finished results (cl/moments.cl's CLR_FINAL: no finishing pass), and
   * those kernels, [vec / 2] ("" and unused otherwise) */
  char fin[96];
  clr_program_entry *fin_first[3], *fin_partials[3];
  /* columns: the call's last launch writes each result once (no block
   * of rows folds into it after), so it may finish them (fin) */
  int fuse_cols;
  /* exact sums (clr_options.exact: float and double sums and means):
   * cl/reduce_exact.cl's kernels, a superaccumulator a result */
  int exact;
  clr_exact_kernels ex;
  clr_map map;
  size_t wg;      /* strided and exact: the work-group size */
  cl_ulong ibase; /* a map expression's i of element (0, 0) */
  size_t launches;
  size_t depth; /* longest rounding chain of any column */
  char prelude[CLR_MAX_MAP_EXPR + 64];
} cols_plan;

/* One launch's shape: columns in groups of span (strided), rows in splits
 * of rows_per. */
typedef struct cols_shape {
  size_t span, groups, splits, rows_per;
  unsigned vec; /* strided: columns a load (COLS_VEC) */
} cols_shape;

/* The matrix's own checks (the options are every reduction's). */
static clr_status check_columns(clr_context *ctx, const clr_options *opt,
                                size_t rows, size_t cols, size_t pitch) {
  if (rows == 0 || cols == 0)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "a matrix of %zu x %zu has no element: rows and columns "
                    "must be at least 1",
                    rows, cols);
  if (pitch < cols)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "a row pitch of %zu elements is shorter than a row (%zu "
                    "columns)",
                    pitch, cols);
  if (rows - 1 > (SIZE_MAX - cols) / pitch)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "a matrix of %zu rows of pitch %zu overflows the address "
                    "space",
                    rows, pitch);
  (void)opt;
  return CLR_OK;
}

static clr_status mean_kernel(clr_context *ctx, const clr_options *opt,
                              clr_type type, cols_plan *p);

/* The kernels of the call, built (or fetched): axis 0 the columns' (and
 * their partials'), axis 1 the rows'. */
static clr_status make_plan(clr_context *ctx, const clr_options *opt, clr_op op,
                            clr_type type, int axis, cols_plan *p) {
  memset(p, 0, sizeof *p);
  p->mean = (clr_op_flags(op) & CLR_OPF_MEAN) != 0;
  p->counted = p->mean && clr_mean_counts(op, type);
  p->op = clr_op_info(op)->runs;
  p->in = type;
  p->acc = clr_opt_result_type(opt, p->op, type);
  if (clr_op_is_moments(op))
    snprintf(
        p->fin, sizeof p->fin,
        " -DCLR_MOMENTS_DDOF=%llu%s -cl-fp32-correctly-rounded-divide-sqrt",
        (unsigned long long)opt->ddof,
        op == CLR_STD ? " -DCLR_MOMENTS_SQRT=1" : "");
  p->acc_bytes = clr_opt_result_bytes(opt, p->op, type);
  p->ibase = opt->index_base;
  p->map = opt->map;
  clr_layout layout =
      opt->layout != CLR_LAYOUT_AUTO ? opt->layout : ctx->tuning.reduce_layout;
  p->runs = layout == CLR_LAYOUT_CONTIGUOUS;
  if (opt->map == CLR_MAP_EXPR)
    snprintf(p->prelude, sizeof p->prelude, "#define CLR_MAP_EXPR(x, i) (%s)",
             opt->map_expr);
  char extra[64];
  p->run_cols = 16;
  while (p->run_cols < 512 && p->run_cols * 2 * p->acc_bytes <= COLS_RUN_BYTES)
    p->run_cols *= 2;
  snprintf(extra, sizeof extra, "-DCOLS_RUN=%zu", p->run_cols);
  clr_build_spec spec = {.source = "reduce_columns.cl",
                         .kernel = p->runs ? "clr_columns_runs" : "clr_columns",
                         .in = type,
                         .acc = p->acc,
                         .op = p->op,
                         .map = opt->map,
                         .extra = extra,
                         .prelude = p->prelude[0] ? p->prelude : NULL};
  p->axis = axis;
  if (clr_exact_applies(opt, p->op, type)) {
    p->exact = 1;
    clr_status st = clr_exact_axis_kernels(ctx, type, p->runs, &p->ex);
    if (st == CLR_OK)
      st = clr_choose_wg(ctx, p->ex.axis, opt->wg_size, COLS_WG,
                         clr_type_size(type), p->ex.terms, &p->wg);
    while (st == CLR_OK && (p->wg & (p->wg - 1))) /* G x P */
      p->wg &= p->wg - 1;
    if (st == CLR_OK && p->mean)
      st = mean_kernel(ctx, opt, type, p);
    return st;
  }
  if (axis == 1) { /* lanes a row (cl/reduce_rows.cl) */
    spec.source = "reduce_rows.cl";
    spec.kernel = p->runs ? "clr_rows_runs" : "clr_rows_lanes";
    spec.extra = NULL;
  }
  clr_status st = clr_get_kernel(ctx, &spec, &p->first);
  if (st != CLR_OK)
    return st;
  char extra2[96];
  snprintf(extra2, sizeof extra2, "-DCOLS_RUN=%zu -DCLR_COLS_PARTIALS=1",
           p->run_cols);
  if (axis == 1)
    snprintf(extra2, sizeof extra2, "-DCLR_ROWS_PARTIALS=1");
  clr_build_spec partials = {
      .source = axis == 1 ? "reduce_rows.cl" : "reduce_columns.cl",
      .kernel = axis == 1 ? "clr_rows_lanes" : "clr_columns",
      .in = p->acc,
      .acc = p->acc,
      .op = clr_op_info(p->op)->partial,
      .extra = extra2};
  st = clr_get_kernel(ctx, &partials, &p->partials);
  /* strided: the first launch's and the partials' work-group size;
   * contiguous: the partials' */
  if (st == CLR_OK)
    st = clr_choose_wg(ctx, p->runs ? p->partials : p->first, opt->wg_size,
                       COLS_WG, p->acc_bytes, 1, &p->wg);
  /* rows: lanes a row, a power of two dividing the work-group */
  while (st == CLR_OK && axis == 1 && (p->wg & (p->wg - 1)))
    p->wg &= p->wg - 1;
  if (st == CLR_OK && p->wg > p->partials->max_wg)
    p->wg = p->partials->max_wg;
  if (st == CLR_OK && p->mean)
    st = mean_kernel(ctx, opt, type, p);
  return st;
}

/* The kernel that makes sums means (the plan's divide): the columns'
 * clr_columns_mean, dividing by the rows (columns) every result has, or
 * for counted means segmented.c's clr_seg_mean with CLR_SEG_COUNTS, which
 * takes an array of divisors (0 gives NaN: 0 / 0). */
static clr_status mean_kernel(clr_context *ctx, const clr_options *opt,
                              clr_type type, cols_plan *p) {
  int wide = ctx->desc.has_fp64;
  clr_type mean_t =
      clr_opt_result_type(opt, p->counted ? CLR_NANMEAN : CLR_MEAN, type);
  if (mean_t == CLR_DOUBLE && !wide)
    return clr_fail(ctx, CLR_ERR_NO_FP64,
                    "device '%s' has no double-precision support "
                    "(cl_khr_fp64) for a mean of %s",
                    ctx->desc.device_name, clr_type_name(type));
  char extra[64];
  if (p->counted) {
    /* the same spec as segmented.c's, so the two share one program */
    snprintf(extra, sizeof extra,
             "-DCLR_SEG_MEAN=%d -DCLR_SEG_WIDE=%d -DCLR_SEG_COUNTS=1",
             mean_t == CLR_DOUBLE ? 2 : 1, wide);
    clr_build_spec seg = {.source = "reduce_segmented.cl",
                          .kernel = "clr_seg_mean",
                          .in = type,
                          .acc = p->acc,
                          .op = CLR_SUM,
                          .extra = extra};
    return clr_get_kernel(ctx, &seg, &p->divide);
  }
  snprintf(extra, sizeof extra, "-DCLR_COLS_MEAN=%d -DCLR_COLS_WIDE=%d",
           mean_t == CLR_DOUBLE ? 2 : 1, wide);
  clr_build_spec divide = {.source = "reduce_columns.cl",
                           .kernel = "clr_columns_mean",
                           .in = p->acc,
                           .acc = p->acc,
                           .op = CLR_SUM,
                           .extra = extra};
  return clr_get_kernel(ctx, &divide, &p->divide);
}

static size_t ceil_div(size_t a, size_t b) { return a / b + (a % b != 0); }

/* The strided shape over rows x cols, vec columns a load: the lanes the
 * rows allow, the rest of the work-group column vectors side by side; the
 * rows split so the first launch has
 * COLS_GROUPS_PER_CU work-groups a compute unit where they allow; one
 * split for a launch over partials. */
static cols_shape strided_shape(const clr_context *ctx, const cols_plan *p,
                                size_t rows, size_t cols, unsigned vec,
                                int first) {
  cols_shape s;
  size_t cols_v = ceil_div(cols, vec);
  s.vec = vec;
  /* lanes as the rows allow (a first pass's lane at least COLS_MIN_ROWS
   * rows, a pass over partials' 4), at least COLS_SPAN column vectors a
   * work-group side by side (8 over partials: few rows, many lanes) */
  size_t rmin = first ? COLS_MIN_ROWS : 4, span_min = first ? COLS_SPAN : 8;
  size_t want_lanes = 1;
  while (want_lanes * 2 <= p->wg / span_min && want_lanes * 2 * rmin <= rows)
    want_lanes *= 2;
  s.span = p->wg / want_lanes;
  if (s.span > cols_v)
    s.span = cols_v;
  s.groups = ceil_div(cols_v, s.span);
  size_t lanes = p->wg / s.span;
  /* a narrow matrix's work-groups read less each: more of them */
  size_t want =
      (size_t)ctx->desc.compute_units *
      (s.span < COLS_SPAN ? COLS_GROUPS_PER_CU_NARROW : COLS_GROUPS_PER_CU);
  size_t most = ceil_div(rows, COLS_MIN_ROWS * lanes);
  s.splits = first && s.groups < want ? ceil_div(want, s.groups) : 1;
  if (s.splits > most)
    s.splits = most;
  if (s.splits < 1)
    s.splits = 1;
  s.rows_per = ceil_div(rows, s.splits);
  s.splits = ceil_div(rows, s.rows_per);
  return s;
}

/* The columns a strided load takes: 4 or 2 where the launch's first
 * element (first: its index in the buffer, aligned: the buffer's element
 * 0 aligned to that many elements), the pitch and the columns are
 * multiples of it and the element is no half (read through vload_half);
 * else 1.  Partials of records: 1. */
static unsigned strided_vec(const cols_plan *p, int first, size_t data_off,
                            size_t aligned, size_t pitch, size_t cols) {
  if ((first && p->in == CLR_HALF) || (!first && clr_op_is_record(p->op)))
    return 1;
  for (unsigned v = 4; v > 1; v /= 2)
    if (aligned % v == 0 && data_off % v == 0 && pitch % v == 0 &&
        cols % v == 0)
      return v;
  return 1;
}

/* The kernel of a strided launch of vec columns a load (rows: also the
 * contiguous first kernel, of vec 1); final: its writes are the call's
 * results (for var and std of rows, built to finish them: plan->fin). */
static clr_status strided_kernel(clr_context *ctx, cols_plan *p, int first,
                                 unsigned vec, int final,
                                 clr_program_entry **out) {
  int fin = final && p->fin[0];
  if (vec == 1 && !fin) {
    *out = first ? p->first : p->partials;
    return CLR_OK;
  }
  clr_program_entry **slot =
      fin ? (first ? &p->fin_first[vec / 2] : &p->fin_partials[vec / 2])
          : (first ? &p->first_vec[vec / 2] : &p->partials_vec[vec / 2]);
  if (*slot) {
    *out = *slot;
    return CLR_OK;
  }
  char extra[192];
  if (p->axis == 1)
    snprintf(extra, sizeof extra, "-DROWS_VEC=%u%s%s", vec,
             first ? "" : " -DCLR_ROWS_PARTIALS=1", fin ? p->fin : "");
  else
    snprintf(extra, sizeof extra, "-DCOLS_RUN=%zu -DCOLS_VEC=%u%s%s",
             p->run_cols, vec, first ? "" : " -DCLR_COLS_PARTIALS=1",
             fin ? p->fin : "");
  clr_build_spec spec = {
      .source = p->axis == 1 ? "reduce_rows.cl" : "reduce_columns.cl",
      .kernel = p->axis == 0
                    ? (first && p->runs ? "clr_columns_runs" : "clr_columns")
                : first && p->runs ? "clr_rows_runs"
                                   : "clr_rows_lanes",
      .in = first ? p->in : p->acc,
      .acc = p->acc,
      .op = first ? p->op : clr_op_info(p->op)->partial,
      .map = first ? p->map : CLR_MAP_NONE,
      .extra = extra,
      .prelude = first && p->prelude[0] ? p->prelude : NULL};
  clr_status st = clr_get_kernel(ctx, &spec, slot);
  if (st == CLR_OK && (*slot)->max_wg < p->wg)
    st = clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                  "work-group size %zu exceeds the column kernel's limit of "
                  "%zu on '%s'",
                  p->wg, (*slot)->max_wg, ctx->desc.device_name);
  *out = *slot;
  return st;
}

/* The contiguous shape: run_cols columns a work-item, the rows split so
 * the first launch has COLS_ITEMS_PER_CU work-items a compute unit. */
static cols_shape runs_shape(const clr_context *ctx, const cols_plan *p,
                             size_t rows, size_t cols, int first) {
  cols_shape s;
  s.span = p->run_cols;
  s.vec = 1;
  s.groups = ceil_div(cols, p->run_cols);
  size_t want = (size_t)ctx->desc.compute_units * COLS_ITEMS_PER_CU;
  size_t most = ceil_div(rows, COLS_MIN_ROWS);
  s.splits = first && s.groups < want ? ceil_div(want, s.groups) : 1;
  if (s.splits > most)
    s.splits = most;
  if (s.splits < 1)
    s.splits = 1;
  s.rows_per = ceil_div(rows, s.splits);
  s.splits = ceil_div(rows, s.rows_per);
  return s;
}

/* Enqueue kernel k (its arguments set) over global / local (dims of
 * them), reading n_in elements: a blocking call waits for it and adds its
 * time and shape to the call's timing; an enqueued one chains it (the
 * first command after the caller's wait list) and keeps its event as the
 * call's last; a dry run enqueues nothing. */
static clr_status run_kernel(clr_context *ctx, cols_plan *p, cl_kernel k,
                             cl_uint dims, const size_t *global,
                             const size_t *local, size_t n_in) {
  if (p->dry)
    return CLR_OK;
  cl_uint nw = 0;
  const cl_event *wl = NULL;
  if (p->async && !p->waited) {
    nw = p->async->num_events;
    wl = p->async->wait_list;
    p->waited = 1;
  }
  cl_event ev = NULL;
  cl_int err =
      clEnqueueNDRangeKernel(clr_queue(ctx), k, dims, NULL, global, local, nw,
                             wl, p->async ? &ev : clr_timed(ctx, &ev));
  if (err != CL_SUCCESS)
    return clr_cl_fail(ctx, "clEnqueueNDRangeKernel", err);
  double ms = 0;
  if (p->async) {
    if (p->last)
      clReleaseEvent(p->last);
    p->last = ev;
  } else if (ev) {
    err = clWaitForEvents(1, &ev);
    if (err == CL_SUCCESS)
      ms = clr_event_ms(ev, ev);
    clReleaseEvent(ev);
    if (err != CL_SUCCESS)
      return clr_cl_fail(ctx, "clWaitForEvents", err);
  }
  ctx->timing.kernel_ms += ms;
  clr_call_timing *t = &ctx->timing;
  if (!p->quiet && t->n_passes < CLR_MAX_PASSES) {
    clr_pass_info *pi = &t->passes[t->n_passes++];
    size_t items = global[0] * (dims > 1 ? global[1] : 1);
    pi->n_in = n_in;
    pi->global_size = items;
    pi->local_size = local ? local[0] : 0;
    pi->ms = ms;
  }
  p->launches++;
  return CLR_OK;
}

/* The splits' partials (ctx->partial[0]) of bytes, or their slot in
 * the plan's scratch. */
static clr_status reserve_partials(clr_context *ctx, cols_plan *p,
                                   size_t bytes) {
  if (p->sp) {
    clr_scratch_need(p->sp, &ctx->partial[0], bytes);
    return CLR_OK;
  }
  return clr_buffer_reserve(ctx, &ctx->partial[0], bytes, CL_MEM_READ_WRITE);
}

/* One launch of k over rows [r0, r1) of the matrix at (data, data_off) of
 * pitch, its splits' results to out from out_off (out_pitch apart);
 * first: k is the plan's first kernel (else the partials'). */
static clr_status launch(clr_context *ctx, cols_plan *p, int first,
                         const cols_shape *s, cl_mem data, size_t data_off,
                         size_t r0, size_t r1, size_t cols, size_t pitch,
                         cl_mem out, size_t out_off, size_t out_pitch,
                         size_t row_base, int fold_into, int final) {
  clr_program_entry *k = NULL;
  int runs = first && p->runs;
  clr_status vs = strided_kernel(ctx, p, first, runs ? 1 : s->vec, final, &k);
  if (vs != CLR_OK)
    return vs;
  cl_ulong d_off = data_off, a = r0, b = r1, c = cols, pi = pitch,
           span = s->span, per = s->rows_per, o_off = out_off,
           o_pitch = out_pitch, rb = row_base;
  cl_uint fold = fold_into != 0;
  clr_status st;
  size_t global[2], local[2];
  if (runs) {
    st = CLR_SET_ARGS(ctx, k->kernel, CLR_ARG(data), CLR_ARG(d_off), CLR_ARG(a),
                      CLR_ARG(b), CLR_ARG(c), CLR_ARG(pi), CLR_ARG(per),
                      CLR_ARG(out), CLR_ARG(o_off), CLR_ARG(o_pitch),
                      CLR_ARG(p->ibase), CLR_ARG(rb), CLR_ARG(fold));
    global[0] = s->groups;
    /* a work-group a work-item: the CPU's cores take work-groups */
    local[0] = 1;
    local[1] = 1;
  } else {
    st = CLR_SET_ARGS(ctx, k->kernel, CLR_ARG(data), CLR_ARG(d_off), CLR_ARG(a),
                      CLR_ARG(b), CLR_ARG(c), CLR_ARG(pi), CLR_ARG(span),
                      CLR_ARG(per), CLR_ARG(out), CLR_ARG(o_off),
                      CLR_ARG(o_pitch), CLR_LOCAL(p->wg * p->acc_bytes),
                      CLR_ARG(p->ibase), CLR_ARG(rb), CLR_ARG(fold));
    global[0] = s->groups * p->wg;
    local[0] = p->wg;
    local[1] = 1;
  }
  global[1] = s->splits;
  if (st != CLR_OK)
    return st;
  return run_kernel(ctx, p, k->kernel, 2, global, local, (r1 - r0) * cols);
}

/* Rows [r0, r1) of the matrix at (data, data_off), their fold of every
 * column written to out from out_off (after what it holds: fold_into),
 * in one or two launches; data's element 0 is aligned to `aligned`
 * elements (vector loads). */
static clr_status fold_rows(clr_context *ctx, cols_plan *p, cl_mem data,
                            size_t data_off, size_t aligned, size_t r0,
                            size_t r1, size_t cols, size_t pitch, cl_mem out,
                            size_t out_off, size_t row_base, int fold_into) {
  size_t rows = r1 - r0;
  cols_shape s = p->runs
                     ? runs_shape(ctx, p, rows, cols, 1)
                     : strided_shape(ctx, p, rows, cols,
                                     strided_vec(p, 1, data_off + r0 * pitch,
                                                 aligned, pitch, cols),
                                     1);
  /* a column's chain: a lane's rows, then the lanes, then the splits */
  size_t lanes = p->runs ? 1 : p->wg / s.span;
  size_t depth = ceil_div(s.rows_per, lanes) + lanes + s.splits + fold_into;
  if (depth > p->depth)
    p->depth = depth;
  int final = p->fuse_cols && !fold_into;
  if (s.splits == 1)
    return launch(ctx, p, 1, &s, data, data_off, r0, r1, cols, pitch, out,
                  out_off, cols, row_base, fold_into, final);
  size_t bytes = s.splits * cols * p->acc_bytes;
  if (s.splits > SIZE_MAX / cols / p->acc_bytes)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "%zu partials of %zu columns overflow", s.splits, cols);
  clr_status st = reserve_partials(ctx, p, bytes);
  if (st == CLR_OK)
    st = launch(ctx, p, 1, &s, data, data_off, r0, r1, cols, pitch,
                ctx->partial[0].mem, 0, cols, row_base, 0, 0);
  cols_shape fin = strided_shape(ctx, p, s.splits, cols,
                                 strided_vec(p, 0, 0, 4, cols, cols), 0);
  if (st == CLR_OK)
    st = launch(ctx, p, 0, &fin, ctx->partial[0].mem, 0, 0, s.splits, cols,
                cols, out, out_off, cols, 0, fold_into, final);
  return st;
}

/* The results sums in out (from out_off), of count elements each (a
 * counted mean: of counts[k] numbers, counts a buffer of results ulongs),
 * made means. */
static clr_status divide(clr_context *ctx, cols_plan *p, cl_mem out,
                         size_t out_off, size_t count, size_t results,
                         cl_mem counts) {
  size_t cols = results;
  cl_ulong o = out_off, c = results, r = count, zero = 0;
  if (p->dry) /* nothing to build: the kernel is the plan's */
    return CLR_OK;
  clr_status st =
      p->counted
          ? CLR_SET_ARGS(ctx, p->divide->kernel, CLR_ARG(counts), CLR_ARG(zero),
                         CLR_ARG(c), CLR_ARG(out), CLR_ARG(o))
          : CLR_SET_ARGS(ctx, p->divide->kernel, CLR_ARG(out), CLR_ARG(o),
                         CLR_ARG(c), CLR_ARG(r));
  size_t wg = 64, global = ceil_div(cols, wg) * wg;
  if (wg > p->divide->max_wg)
    wg = p->divide->max_wg, global = ceil_div(cols, wg) * wg;
  if (st == CLR_OK)
    st = run_kernel(ctx, p, p->divide->kernel, 1, &global, &wg, results);
  return st;
}

/* One launch of the rows kernel k over rows [r0, r1) (row_len elements
 * each, pitch apart, from data_off), lanes work-items a row, its rows cut
 * into pieces of `piece` elements over `splits` work-group rows, row r's
 * piece s to out[out_off + r * splits + s]. */
static clr_status rows_once(clr_context *ctx, cols_plan *p,
                            clr_program_entry *k, cl_mem data, size_t data_off,
                            size_t rows, size_t row_len, size_t pitch,
                            size_t lanes, size_t piece, size_t splits,
                            cl_mem out, size_t out_off, cl_ulong ibase) {
  cl_ulong d_off = data_off, nr = rows, len = row_len, pi = pitch, ln = lanes,
           pc = piece, o_off = out_off;
  clr_status st = CLR_SET_ARGS(
      ctx, k->kernel, CLR_ARG(data), CLR_ARG(d_off), CLR_ARG(nr), CLR_ARG(len),
      CLR_ARG(pi), CLR_ARG(ln), CLR_ARG(pc), CLR_ARG(out), CLR_ARG(o_off),
      CLR_LOCAL(p->wg * p->acc_bytes), CLR_ARG(ibase));
  if (st != CLR_OK)
    return st;
  size_t per_group = p->wg / lanes;
  size_t global[2] = {ceil_div(rows, per_group) * p->wg, splits};
  size_t local[2] = {p->wg, 1};
  return run_kernel(ctx, p, k->kernel, 2, global, local, rows * row_len);
}

/* The lanes a row of row_len elements takes, vec a load: about eight
 * loads a lane (sixteen in rows of 128 loads or more), a power of two up
 * to the work-group. */
static size_t row_lanes(const cols_plan *p, size_t row_len, unsigned vec) {
  /* var and std: 64 loads a lane in long rows, a quarter of the lanes and
   * of their tree's merges (H200, rows of 1e5 x 1000 floats: 0.1305 ->
   * 0.1186 ms; 256 loads: 0.2073, too few lanes) */
  size_t lanes = 1, loads = row_len / vec >= 128
                                ? (clr_op_is_moments(p->op) ? 64 : 16)
                                : 8;
  while (lanes < p->wg && lanes * vec * loads < row_len)
    lanes *= 2;
  return lanes;
}

/* The second launch of cut rows: each of rows rows' splits pieces (in
 * ctx->partial[0], a row of them a row) folded, row r's result to
 * out[out_off + r]. */
static clr_status fold_pieces(clr_context *ctx, cols_plan *p, size_t rows,
                              size_t splits, cl_mem out, size_t out_off) {
  unsigned vec = strided_vec(p, 0, 0, 4, splits, splits);
  clr_program_entry *k = NULL;
  clr_status st = strided_kernel(ctx, p, 0, vec, 1, &k);
  if (st == CLR_OK)
    st = rows_once(ctx, p, k, ctx->partial[0].mem, 0, rows, splits, splits,
                   row_lanes(p, splits, vec), splits, 1, out, out_off, 0);
  return st;
}

/* Rows on CPUs (cl/reduce_rows.cl's clr_rows_runs): a work-item a run of
 * whole rows, COLS_ITEMS_PER_CU work-items a compute unit; where the rows
 * are fewer, each cut into pieces (at least ROWS_MIN_PIECE elements) that
 * a second launch (clr_rows_lanes over the partials) folds.  Rows r0 ..
 * r0 + rows of the matrix whose element (r0, 0) is at first; results to
 * out from out_off + r0. */
#define ROWS_MIN_PIECE 4096
static clr_status rows_runs_launch(clr_context *ctx, cols_plan *p, cl_mem data,
                                   size_t first, size_t r0, size_t rows,
                                   size_t cols, size_t pitch, cl_mem out,
                                   size_t out_off) {
  size_t want = (size_t)ctx->desc.compute_units * COLS_ITEMS_PER_CU;
  size_t items = rows < want ? rows : want;
  size_t rows_per = ceil_div(rows, items);
  items = ceil_div(rows, rows_per);
  size_t splits = 1;
  if (items < want) {
    splits = ceil_div(want, items);
    size_t most = ceil_div(cols, ROWS_MIN_PIECE);
    if (splits > most)
      splits = most;
  }
  size_t piece = ceil_div(cols, splits);
  splits = ceil_div(cols, piece);
  /* four chains, or eight lanes and their tree, then the tail */
  size_t depth = ceil_div(piece, 4) + 10 + splits;
  if (depth > p->depth)
    p->depth = depth;
  clr_status st = CLR_OK;
  cl_mem dst = out;
  size_t dst_off = out_off + r0;
  if (splits > 1) {
    if (rows > SIZE_MAX / splits / p->acc_bytes)
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "%zu rows of %zu pieces overflow", rows, splits);
    st = reserve_partials(ctx, p, rows * splits * p->acc_bytes);
    dst = ctx->partial[0].mem;
    dst_off = 0;
  }
  cl_ulong d_off = first, nr = rows, len = cols, pi = pitch, per = rows_per,
           pc = piece, o_off = dst_off, ibase = p->ibase + r0 * pitch;
  clr_program_entry *k = NULL;
  if (st == CLR_OK)
    st = strided_kernel(ctx, p, 1, 1, splits == 1, &k);
  if (st == CLR_OK)
    st =
        CLR_SET_ARGS(ctx, k->kernel, CLR_ARG(data), CLR_ARG(d_off), CLR_ARG(nr),
                     CLR_ARG(len), CLR_ARG(pi), CLR_ARG(per), CLR_ARG(pc),
                     CLR_ARG(dst), CLR_ARG(o_off), CLR_ARG(ibase));
  size_t global[2] = {items, splits};
  /* a work-group a work-item: the CPU's cores take work-groups */
  size_t local[2] = {1, 1};
  if (st == CLR_OK)
    st = run_kernel(ctx, p, k->kernel, 2, global, local, rows * cols);
  if (st != CLR_OK || splits == 1)
    return st;
  return fold_pieces(ctx, p, rows, splits, out, out_off + r0);
}

/* Rows [r0, r1) of the matrix at (data, data_off) (its element 0 aligned
 * to `aligned` elements), a result each to out from out_off + r0: one
 * launch, or where few long rows would leave the device idle, their
 * pieces in one and the pieces folded in a second. */
static clr_status rows_launch(clr_context *ctx, cols_plan *p, cl_mem data,
                              size_t data_off, size_t aligned, size_t r0,
                              size_t r1, size_t cols, size_t pitch, cl_mem out,
                              size_t out_off) {
  size_t rows = r1 - r0, first = data_off + r0 * pitch;
  if (p->runs)
    return rows_runs_launch(ctx, p, data, first, r0, rows, cols, pitch, out,
                            out_off);
  unsigned vec = strided_vec(p, 1, first, aligned, pitch, cols);
  size_t lanes = row_lanes(p, cols, vec);
  size_t groups = ceil_div(rows, p->wg / lanes);
  size_t want = (size_t)ctx->desc.compute_units * COLS_GROUPS_PER_CU;
  /* pieces of at least 16 loads a lane */
  size_t most = ceil_div(cols, lanes * vec * 16);
  size_t splits = groups < want ? ceil_div(want, groups) : 1;
  if (splits > most)
    splits = most;
  if (splits < 1)
    splits = 1;
  size_t piece = ceil_div(ceil_div(cols, splits), vec) * vec;
  splits = ceil_div(cols, piece);
  clr_program_entry *k;
  clr_status st = strided_kernel(ctx, p, 1, vec, splits == 1, &k);
  cl_ulong ibase = p->ibase + r0 * pitch;
  /* a row's chain: a lane's elements, the lanes' tree, the pieces */
  size_t depth = ceil_div(piece, lanes) + clr_ceil_log2(lanes) + splits;
  if (depth > p->depth)
    p->depth = depth;
  if (st == CLR_OK && splits == 1)
    return rows_once(ctx, p, k, data, first, rows, cols, pitch, lanes, piece, 1,
                     out, out_off + r0, ibase);
  if (st != CLR_OK)
    return st;
  if (rows > SIZE_MAX / splits / p->acc_bytes)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "%zu rows of %zu pieces overflow", rows, splits);
  st = reserve_partials(ctx, p, rows * splits * p->acc_bytes);
  if (st == CLR_OK)
    st = rows_once(ctx, p, k, data, first, rows, cols, pitch, lanes, piece,
                   splits, ctx->partial[0].mem, 0, ibase);
  return st == CLR_OK ? fold_pieces(ctx, p, rows, splits, out, out_off + r0)
                      : st;
}

/* ---- exact sums: cl/reduce_exact.cl's clr_exact_axis, a superaccumulator
 * in local memory a result, per_group results a work-group (rows: enough
 * lanes for about EXACT_LOADS elements each; columns: EXACT_SPAN side by
 * side, the rest of the work-group further rows), the elements split over
 * work-groups where the results are too few to fill the device.  A launch
 * that takes every element of its results rounds them itself; else each
 * adds to its results' records (ctx->aux[0]: zeroed before the first
 * block, rounded after the last), as clr_exact_sum adds to its call's. */
#define EXACT_LOADS 16
#define EXACT_SPAN 32
/* CPUs: vectors of results a block at most (cl: EX_RUN), a run of 256
 * bytes of a row (floats) read together */
#define EXACT_RUN_VECS 8
/* a split's elements of a result: the local words' bound (exact.c) */
#define EXACT_MAX_SPLIT ((size_t)1 << 26)

static size_t pow2_at_least(size_t x) {
  size_t v = 1;
  while (v < x)
    v *= 2;
  return v;
}

/* The records of n_out results (ctx->aux[0], or its slot in the plan's
 * scratch). */
static clr_status exact_records(clr_context *ctx, cols_plan *p, size_t n_out,
                                cl_mem *sums) {
  if (n_out > SIZE_MAX / p->ex.rec_bytes)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "%zu exact sums' superaccumulators overflow", n_out);
  size_t bytes = n_out * p->ex.rec_bytes;
  clr_status st;
  if (p->sp) {
    clr_scratch_need(p->sp, &ctx->aux[0], bytes);
    st = CLR_OK;
  } else {
    st = clr_buffer_reserve(ctx, &ctx->aux[0], bytes, CL_MEM_READ_WRITE);
  }
  *sums = ctx->aux[0].mem;
  return st;
}

/* The exact sums of n_rows rows of cols elements (pitch apart) whose
 * element (0, 0) is data's element first: axis 1 a result per row, to
 * out from out_off; axis 0 a result per column, to out from out_off after
 * the last block (last) of the call's blocks of rows, the first of which
 * (first_block) starts the records. */
static clr_status exact_block(clr_context *ctx, cols_plan *p, int axis,
                              cl_mem data, size_t first, size_t n_rows,
                              size_t cols, size_t pitch, cl_mem out,
                              size_t out_off, int first_block, int last) {
  size_t n_out = axis == 1 ? n_rows : cols, len = axis == 1 ? cols : n_rows;
  size_t wg = p->wg, esize = clr_type_size(p->in), G, P;
  if (p->runs) {
    /* CPUs: a work-item walking blocks of results, a long row, or a
     * vector lane's column or short row each (clr_exact_runs: a lane's
     * expansion is a chain of dependent additions, which a short row
     * alone cannot overlap; PoCL, 1e5 rows of 10 floats: 5.8 ms a row
     * at a time) */
    G = axis == 0 || len < 4 * p->ex.vec ? p->ex.vec * EXACT_RUN_VECS : 1;
    while (G > p->ex.vec && G * p->ex.words * 8 > ctx->desc.local_mem_size / 2)
      G /= 2;
    P = 1;
    wg = 1;
  } else {
    /* lanes a result for about EXACT_LOADS elements each (columns: at
     * least EXACT_SPAN of them side by side where there are), the rest
     * of the work-group results side by side, as many as there are and
     * their superaccumulators fit in half the local memory; the
     * work-group shrunk to them */
    P = pow2_at_least(ceil_div(len, EXACT_LOADS));
    size_t span =
        pow2_at_least(n_out) < EXACT_SPAN ? pow2_at_least(n_out) : EXACT_SPAN;
    size_t lanes_most = axis == 1 ? wg : wg / span;
    if (P > lanes_most)
      P = lanes_most ? lanes_most : 1;
    G = wg / P;
    size_t most = ctx->desc.local_mem_size / 2 / (p->ex.words * 8);
    while (G > 1 && (G > most || G / 2 >= n_out))
      G /= 2;
    wg = G * P;
  }
  size_t blocks = ceil_div(n_out, G);
  size_t groups = blocks;
  size_t want = (size_t)ctx->desc.compute_units * COLS_GROUPS_PER_CU;
  if (p->runs && groups > want)
    groups = want;
  size_t splits = groups < want ? ceil_div(want, groups) : 1;
  size_t by_len = ceil_div(len, P * COLS_MIN_ROWS);
  if (splits > by_len)
    splits = by_len;
  if (splits < ceil_div(len, EXACT_MAX_SPLIT))
    splits = ceil_div(len, EXACT_MAX_SPLIT);
  if (splits < 1)
    splits = 1;
  size_t per_split = ceil_div(len, splits);
  splits = ceil_div(len, per_split);
  int direct = splits == 1 && (axis == 1 || (first_block && last));
  cl_mem sums = out;
  clr_status st = CLR_OK;
  if (!direct)
    st = exact_records(ctx, p, n_out, &sums);
  size_t zglobal = 64 * 64, zlocal = 64;
  if (st == CLR_OK && !direct && (axis == 1 || first_block)) {
    cl_ulong cnt = n_out;
    st = CLR_SET_ARGS(ctx, p->ex.zero->kernel, CLR_ARG(sums), CLR_ARG(cnt));
    if (st == CLR_OK)
      st = run_kernel(ctx, p, p->ex.zero->kernel, 1, &zglobal, &zlocal, 0);
  }
  cl_ulong off = first, no = n_out, ln = len, ostride = axis == 1 ? pitch : 1,
           estride = axis == 1 ? 1 : pitch, per = per_split, o_off = out_off;
  cl_uint pg = (cl_uint)G, by_rows = axis == 1, dir = direct;
  if (st == CLR_OK)
    st = CLR_SET_ARGS(
        ctx, p->ex.axis->kernel, CLR_ARG(data), CLR_ARG(off), CLR_ARG(no),
        CLR_ARG(ln), CLR_ARG(ostride), CLR_ARG(estride), CLR_ARG(pg),
        CLR_ARG(by_rows), CLR_ARG(per), CLR_ARG(dir), CLR_ARG(sums),
        CLR_ARG(out), CLR_ARG(o_off), CLR_LOCAL(G * p->ex.words * 8),
        CLR_LOCAL(G * sizeof(cl_uint)), CLR_LOCAL(wg * p->ex.terms * esize));
  size_t global[2] = {groups * wg, splits}, local[2] = {wg, 1};
  if (st == CLR_OK)
    st =
        run_kernel(ctx, p, p->ex.axis->kernel, 2, global, local, n_rows * cols);
  if (st != CLR_OK || direct || (axis == 0 && !last))
    return st;
  cl_ulong cnt = n_out;
  st = CLR_SET_ARGS(ctx, p->ex.round->kernel, CLR_ARG(sums), CLR_ARG(out),
                    CLR_ARG(o_off), CLR_ARG(cnt));
  size_t rlocal = 64, rglobal = ceil_div(n_out, rlocal) * rlocal;
  if (st == CLR_OK)
    st = run_kernel(ctx, p, p->ex.round->kernel, 1, &rglobal, &rlocal, n_out);
  return st;
}

/* The rows or columns (axis 1 or 0) of the matrix at (data, data_off)
 * from row r0 to r1, into out from out_off (columns: folded after what it
 * holds when fold_into; rows: row r's result at out_off + r). */
static clr_status fold_axis(clr_context *ctx, cols_plan *p, int axis,
                            cl_mem data, size_t data_off, size_t r0, size_t r1,
                            size_t cols, size_t pitch, cl_mem out,
                            size_t out_off, size_t row_base, int fold_into) {
  if (p->exact)
    return exact_block(ctx, p, axis, data, data_off + r0 * pitch, r1 - r0, cols,
                       pitch, out, out_off + (axis == 1 ? r0 : 0), !fold_into,
                       1);
  if (axis == 1)
    return rows_launch(ctx, p, data, data_off, 4, r0, r1, cols, pitch, out,
                       out_off);
  /* a buffer's element 0: aligned to the device's base address
   * alignment (at least 128 bytes: OpenCL's largest type) */
  return fold_rows(ctx, p, data, data_off + r0 * pitch, 4, 0, r1 - r0, cols,
                   pitch, out, out_off, row_base, fold_into);
}

/* The tag of a counted mean's counts in a caller's scratch (scratch.c):
 * clr_temp_buffer's slot for them. */
static const char counts_tag = 'n';

/* Room in the context's program table for a counted mean's second plan
 * (the counts' kernels and their vector forms) beside the sums': past the
 * reserve a call starts with (CLR_PROGRAMS_PER_CALL), so a table filled
 * by earlier calls would fail the call ("more than 8 kernels in one
 * call").  Called before the sums' plan, while the call holds no entry of
 * the table, which then starts over as at a call's start. */
static void room_for_counts(clr_context *ctx) {
  if (ctx->n_programs > CLR_MAX_PROGRAMS - 2 * CLR_PROGRAMS_PER_CALL)
    clr_release_programs(ctx);
}

/* A counted mean's counts: plan c, the sums' shape (axis, layout, index
 * base) over the same data with clr_count_options (1 for a number, 0 for
 * a NaN, after the map where there is one, summed in ulong), quiet; and
 * their buffer of n_results ulongs (*counts, the caller releases it), or
 * its slot in the scratch plan sp. */
static clr_status make_counts(clr_context *ctx, const clr_options *opt,
                              clr_type type, int axis, size_t n_results,
                              clr_scratch_plan *sp, cols_plan *c,
                              cl_mem *counts) {
  clr_options co;
  char expr[CLR_MAX_MAP_EXPR + CLR_COUNT_EXPR_EXTRA];
  *counts = NULL;
  clr_count_options(opt, &co, expr, sizeof expr);
  /* make_plan keeps the expression (its prelude), not co */
  clr_status st = make_plan(ctx, &co, CLR_SUM, type, axis, c);
  c->quiet = 1;
  if (st != CLR_OK)
    return st;
  if (n_results > SIZE_MAX / sizeof(cl_ulong))
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "%zu counts of numbers overflow", n_results);
  if (sp) {
    clr_scratch_need(sp, &counts_tag, n_results * sizeof(cl_ulong));
    return CLR_OK;
  }
  return clr_temp_buffer(ctx, &counts_tag, n_results * sizeof(cl_ulong),
                         counts);
}

/* An enqueued call's chain (its caller's wait list taken or not, its last
 * event so far) and the dry run's state handed from plan `from` to plan
 * `to`: the counts' commands follow the sums' in the queue's order, and
 * the division follows both. */
static void hand_over(cols_plan *from, cols_plan *to) {
  to->async = from->async;
  to->waited = from->waited;
  to->dry = from->dry;
  to->sp = from->sp;
  to->ibase = from->ibase;
  if (to->last)
    clReleaseEvent(to->last);
  to->last = from->last;
  from->last = NULL;
}

/* The start of a matrix call: the options, the checks of every
 * reduction, then the matrix's. */
/* The elements a staged block's element 0 is aligned to: a copy's buffer
 * to the device's base address alignment, a wrapped host array (used in
 * place) to what its address gives. */
static size_t host_aligned(const clr_staged *in, const void *first,
                           size_t esize) {
  size_t v = 4;
  while (in->wrapped && v > 1 && (uintptr_t)first % (v * esize) != 0)
    v /= 2;
  return v;
}

static clr_status start_matrix(clr_context *ctx, const clr_options **opt,
                               clr_options *defaults, clr_op op, clr_type type,
                               const void *data, const void *results,
                               size_t rows, size_t cols, size_t pitch,
                               int axis) {
  if (rows && cols && rows > SIZE_MAX / cols)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "a matrix of %zu x %zu elements overflows", rows, cols);
  clr_status st =
      clr_start_work(ctx, opt, defaults, data, results, "data and results", op,
                     type, rows && cols ? rows * cols : 1, 0);
  if (st == CLR_OK && (axis < 0 || axis > 1))
    st = clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                  "axis %d of a matrix: 0 (a result per column) or 1 (a "
                  "result per row)",
                  axis);
  return st == CLR_OK ? check_columns(ctx, *opt, rows, cols, pitch) : st;
}

/* The matrix of buffers: blocking (async NULL), or enqueued after
 * async's wait list with its last command's event to async->done; an
 * enqueued call plans first (kernels built, buffers reserved), so that
 * nothing fails once a command waits on the caller's events. */
static clr_status matrix_buffer_work(clr_context *ctx, const clr_options *opt,
                                     clr_op op, clr_type type, cl_mem data,
                                     size_t data_offset, size_t rows,
                                     size_t cols, size_t pitch, int axis,
                                     cl_mem results, size_t results_offset,
                                     const clr_async *async,
                                     clr_scratch_plan *sp) {
  clr_options defaults;
  cols_plan plan, cplan;
  cl_mem counts = NULL;
  double t0 = clr_now_ms();
  if (pitch == 0)
    pitch = cols;
  clr_status st = start_matrix(ctx, &opt, &defaults, op, type, data, results,
                               rows, cols, pitch, axis);
  size_t n_results = axis == 1 ? rows : cols;
  memset(&cplan, 0, sizeof cplan);
  if (st == CLR_OK)
    st = clr_check_buffer(ctx, data, data_offset, (rows - 1) * pitch + cols,
                          type, CLR_ACCESS_READ, "data");
  if (st == CLR_OK)
    st = clr_check_buffer_elems(ctx, results, results_offset, n_results,
                                clr_opt_result_bytes(opt, op, type),
                                CLR_ACCESS_WRITE, "results");
  if (st == CLR_OK && clr_mean_counts(op, type))
    room_for_counts(ctx);
  if (st == CLR_OK)
    st = make_plan(ctx, opt, op, type, axis, &plan);
  if (st == CLR_OK && plan.counted)
    st = make_counts(ctx, opt, type, axis, n_results, sp, &cplan, &counts);
  if (st != CLR_OK) {
    if (counts)
      clReleaseMemObject(counts);
    return st;
  }
  plan.async = async;
  plan.sp = sp;       /* a plan: the dry run alone */
  plan.fuse_cols = 1; /* one fold of the whole matrix */
  for (plan.dry = async != NULL || sp; st == CLR_OK; plan.dry = 0) {
    plan.launches = 0;
    st = fold_axis(ctx, &plan, axis, data, data_offset, 0, rows, cols, pitch,
                   results, results_offset, 0, 0);
    if (st == CLR_OK && plan.counted) {
      hand_over(&plan, &cplan);
      st = fold_axis(ctx, &cplan, axis, data, data_offset, 0, rows, cols, pitch,
                     counts, 0, 0, 0);
      hand_over(&cplan, &plan);
    }
    if (st == CLR_OK && plan.mean)
      st = divide(ctx, &plan, results, results_offset, axis == 1 ? cols : rows,
                  n_results, counts);
    /* var and std of columns: their records finished (rows finish in
     * their kernels' last writes); enqueued, after the last command */
    if (st == CLR_OK && axis == 0 && clr_op_is_moments(op) && !plan.fuse_cols) {
      if (plan.dry)
        st = clr_moments_finish_prepare(ctx, op, type, plan.acc);
      else if (async) {
        cl_event done = NULL;
        st = clr_moments_finish_enqueue(ctx, opt, op, type, plan.acc, results,
                                        results_offset, n_results, plan.last,
                                        &done);
        if (plan.last)
          clReleaseEvent(plan.last);
        plan.last = done;
      } else
        st = clr_moments_finish_buffer(ctx, opt, op, type, plan.acc, results,
                                       results_offset, n_results);
    }
    if (!plan.dry || sp)
      break;
  }
  if (counts) /* freed once the commands that use it are done */
    clReleaseMemObject(counts);
  if (cplan.last)
    clReleaseEvent(cplan.last);
  if (sp)
    return st;
  if (plan.last && st == CLR_OK && async->done)
    *async->done = plan.last;
  else if (plan.last)
    clReleaseEvent(plan.last);
  if (st == CLR_OK)
    clr_timing_done(ctx, 1, plan.depth, t0);
  return st;
}

static clr_status clr_matrix_host_call(clr_context *ctx, const clr_options *opt,
                                       clr_op op, clr_type type,
                                       const void *data, size_t rows,
                                       size_t cols, size_t pitch, int axis,
                                       void *results) {
  clr_options defaults;
  cols_plan plan, cplan;
  cl_mem counts = NULL;
  double t0 = clr_now_ms();
  if (pitch == 0)
    pitch = cols;
  size_t n_results = axis == 1 ? rows : cols;
  memset(&cplan, 0, sizeof cplan);
  clr_status st = start_matrix(ctx, &opt, &defaults, op, type, data, results,
                               rows, cols, pitch, axis);
  if (st == CLR_OK && clr_mean_counts(op, type))
    room_for_counts(ctx);
  if (st == CLR_OK)
    st = make_plan(ctx, opt, op, type, axis, &plan);
  /* the counts streamed with the sums, block by block, into a buffer of
   * their own: divided on the device before the results go out */
  if (st == CLR_OK && plan.counted)
    st = make_counts(ctx, opt, type, axis, n_results, NULL, &cplan, &counts);
  if (st != CLR_OK) {
    if (counts)
      clReleaseMemObject(counts);
    return st;
  }
  size_t esize = clr_type_size(type), chunk = clr_chunk_elems(ctx, esize);
  /* Blocks of rows (each at most a chunk from its first element to its
   * last), or, for rows longer than a chunk, pieces of one row (columns
   * only: a row's own result needs all of it on the device). */
  if (axis == 1 && cols > chunk) {
    if (counts)
      clReleaseMemObject(counts);
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                    "a row of %zu elements is longer than one device "
                    "allocation (%zu elements): row results of such rows are "
                    "not implemented yet",
                    cols, chunk);
  }
  size_t band = cols <= chunk ? cols : chunk;
  size_t block = 1;
  if (cols <= chunk && chunk - cols >= pitch)
    block = (chunk - cols) / pitch + 1;
  /* one block of rows and one band of columns: each column's result is
   * written once, finished by its kernel */
  plan.fuse_cols = block >= rows && band >= cols;
  clr_staged res;
  memset(&res, 0, sizeof res);
  st = clr_stage_in(ctx, &ctx->output, results, n_results * plan.acc_bytes, 1,
                    &res);
  size_t chunks = 0;
  cl_ulong ibase = plan.ibase;
  for (size_t c0 = 0; st == CLR_OK && c0 < cols; c0 += band) {
    size_t w = cols - c0 < band ? cols - c0 : band;
    for (size_t r0 = 0; st == CLR_OK && r0 < rows; r0 += block) {
      size_t r1 = rows - r0 < block ? rows : r0 + block;
      size_t elems = (r1 - r0 - 1) * pitch + w;
      const char *first = (const char *)data + (r0 * pitch + c0) * esize;
      clr_staged in;
      memset(&in, 0, sizeof in);
      st = clr_stage_in(ctx, &ctx->input, (void *)(uintptr_t)first,
                        elems * esize, 0, &in);
      /* the block's first element: a map expression's i from there */
      plan.ibase = ibase + r0 * pitch + c0;
      size_t aligned = host_aligned(&in, first, esize);
      if (st == CLR_OK && plan.exact)
        st = exact_block(ctx, &plan, axis, in.mem, 0, r1 - r0, w, pitch,
                         res.mem, axis == 1 ? r0 : c0, r0 == 0, r1 == rows);
      else if (st == CLR_OK && axis == 1)
        st = rows_launch(ctx, &plan, in.mem, 0, aligned, 0, r1 - r0, w, pitch,
                         res.mem, r0);
      else if (st == CLR_OK)
        st = fold_rows(ctx, &plan, in.mem, 0, aligned, 0, r1 - r0, w, pitch,
                       res.mem, c0, r0, r0 > 0);
      /* the block's counts, added to the blocks' before as its sums are */
      if (st == CLR_OK && plan.counted) {
        hand_over(&plan, &cplan);
        if (axis == 1)
          st = rows_launch(ctx, &cplan, in.mem, 0, aligned, 0, r1 - r0, w,
                           pitch, counts, r0);
        else
          st = fold_rows(ctx, &cplan, in.mem, 0, aligned, 0, r1 - r0, w, pitch,
                         counts, c0, r0, r0 > 0);
        hand_over(&cplan, &plan);
      }
      clr_stage_release(ctx, &in);
      chunks++;
    }
  }
  if (st == CLR_OK && plan.mean)
    st = divide(ctx, &plan, res.mem, 0, axis == 1 ? cols : rows, n_results,
                counts);
  if (counts)
    clReleaseMemObject(counts);
  if (st == CLR_OK && axis == 0 && clr_op_is_moments(op) && !plan.fuse_cols)
    st = clr_moments_finish_buffer(ctx, opt, op, type, plan.acc, res.mem, 0,
                                   n_results);
  if (st == CLR_OK)
    st = clr_stage_out(ctx, &res);
  clr_stage_release(ctx, &res);
  if (st == CLR_OK)
    clr_timing_done(ctx, chunks,
                    plan.depth + (axis == 0 && block < rows ? chunks : 0), t0);
  return st;
}

clr_status clr_matrix_call(clr_context *ctx, const clr_options *opt, clr_op op,
                           clr_type type, const void *in_host, cl_mem in,
                           size_t in_offset, size_t rows, size_t cols,
                           size_t pitch, int axis, void *out_host, cl_mem out,
                           size_t out_offset) {
  CLR_PUBLIC_CALL(
      ctx, in_host ? clr_matrix_host_call(ctx, opt, op, type, in_host, rows,
                                          cols, pitch, axis, out_host)
                   : matrix_buffer_work(ctx, opt, op, type, in, in_offset, rows,
                                        cols, pitch, axis, out, out_offset,
                                        NULL, NULL));
}

clr_status clr_matrix_enqueue(clr_context *ctx, const clr_options *opt,
                              clr_op op, clr_type type, cl_mem in,
                              size_t in_offset, size_t rows, size_t cols,
                              size_t pitch, int axis, cl_mem out,
                              size_t out_offset, cl_uint num_events,
                              const cl_event *wait_list, cl_event *event) {
  clr_async async;
  if (!ctx)
    return CLR_ERR_INVALID_ARGUMENT;
  clr_begin_async_call(ctx, &async, num_events, wait_list, event);
  clr_status st =
      matrix_buffer_work(ctx, opt, op, type, in, in_offset, rows, cols, pitch,
                         axis, out, out_offset, &async, NULL);
  return clr_end_async_call(ctx, st);
}

clr_status clr_matrix_scratch(clr_context *ctx, const clr_options *opt,
                              clr_op op, clr_type type, cl_mem in,
                              size_t in_offset, size_t rows, size_t cols,
                              size_t pitch, int axis, cl_mem out,
                              size_t out_offset, clr_scratch_plan *sp) {
  return matrix_buffer_work(ctx, opt, op, type, in, in_offset, rows, cols,
                            pitch, axis, out, out_offset, NULL, sp);
}
