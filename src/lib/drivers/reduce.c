/* The reduction driver.  Each pass reduces every work-group's slice to one
 * partial; the host launches the same kernel again on the partials
 * (recursive passes, course notes seed 001) until one value remains on the
 * device, and reads back only that value.  Host arrays larger than one
 * device allocation are streamed in chunks: each chunk is reduced to one
 * value in a device buffer, and those values are reduced by one more
 * round of passes. */
#include "internal.h"

#include <float.h>
#include <stdint.h>
#include <stdio.h>

#include <string.h>

/* Everything needed to launch one reduction: the kernels for the first
 * pass (reading the input type) and for later passes (reading partials of
 * the accumulator type), and the shape. */
typedef struct reduce_plan {
  clr_kernel kernel;
  clr_op op;
  clr_type in, acc;
  unsigned vec, vec_rest; /* elements a load of the first / later passes */
  clr_layout layout;
  clr_program_entry *first, *rest;
  clr_build_spec first_spec; /* the first pass's build (for finish_kernel) */
  int can_finish; /* the coarse sum kind whose first pass can fold the
                     partials itself (tuning reduce.single_launch) */
  int shfl;       /* coarse kernels with warp shuffles (CLR_SHFL) */
  size_t wg_first, wg_rest;
  size_t acc_bytes; /* a partial: a value, or an indexed op's record */
  int inputs;       /* 2: a dot product */
  int takes_base;   /* the kernel takes the index base (coarse, extrema) */
  size_t map_depth; /* roundings the map adds to every chain (x * x, x * y) */
  const clr_options *opt;
  char prelude[CLR_MAX_MAP_EXPR + 64]; /* a map expression's #define */
} reduce_plan;

/* Where the elements are, for the one decision that depends on it: wide
 * aligned loads (CLR_ALIGNED) need the first element aligned to a whole
 * vector. */
typedef struct reduce_input {
  const void *host; /* a host array, or NULL for a buffer at offset */
  size_t offset;
} reduce_input;

static int input_aligned(const clr_context *ctx, const reduce_input *in,
                         unsigned vec, size_t esize) {
  if (vec <= 1)
    return 0;
  if (!in->host)
    return in->offset % vec == 0;
  /* A host array used in place must be aligned itself; copies into
   * device buffers always are. */
  return !ctx->host_unified || clr_is_aligned(in->host, vec * esize);
}

/* Plan once: the shape first (vector width, layout), then the kernels for
 * it, then the work-group sizes they allow.  where2: the second array of a
 * dot product, or NULL. */
static clr_status make_plan(clr_context *ctx, const clr_options *opt, clr_op op,
                            clr_type type, const reduce_input *where,
                            const reduce_input *where2, reduce_plan *p) {
  clr_status st;
  memset(p, 0, sizeof *p);
  p->kernel = opt->kernel;
  p->op = op;
  p->in = type;
  p->acc = clr_opt_result_type(opt, op, type);
  p->opt = opt;
  p->vec = 0;
  p->layout = CLR_LAYOUT_AUTO;
  p->inputs = where2 ? 2 : 1;
  p->takes_base = clr_kernel_takes_maps(p->kernel);
  p->map_depth =
      opt->map == CLR_MAP_SQUARE || (where2 && opt->map == CLR_MAP_NONE);
  int indexed = clr_op_is_record(op);
  p->acc_bytes = clr_opt_result_bytes(opt, op, type);
  if (p->kernel == CLR_REDUCE_COARSE)
    clr_choose_coarse_shape(ctx, opt, type, p->acc,
                            clr_op_info(op)->combine == CLR_MINMAX &&
                                    type != CLR_HALF
                                ? ctx->tuning.minmax_vec_bytes
                                : ctx->tuning.reduce_vec_bytes,
                            &p->vec, &p->layout);
  size_t esize = clr_type_size(type);
  int aligned = input_aligned(ctx, where, p->vec, esize) &&
                (!where2 || input_aligned(ctx, where2, p->vec, esize));
  if (opt->map == CLR_MAP_EXPR)
    snprintf(p->prelude, sizeof p->prelude, "#define CLR_MAP_EXPR(x, %si) (%s)",
             where2 ? "y, " : "", opt->map_expr);
  clr_build_spec spec = {
      .source = indexed ? "reduce_extrema.cl" : clr_kernel_source(p->kernel),
      .helpers = clr_kernel_takes_maps(p->kernel) ? "load_mapped.cl" : NULL,
      .kernel = "clr_reduce",
      .in = p->in,
      .acc = p->acc,
      .op = clr_op_info(op)->runs, /* std: var's records */
      .vec = p->vec,
      .layout = (unsigned)p->layout,
      .aligned = aligned,
      .map = opt->map,
      .inputs = (unsigned)p->inputs,
      .prelude = p->prelude[0] ? p->prelude : NULL};
  p->shfl = p->kernel == CLR_REDUCE_COARSE && !indexed &&
            ctx->tuning.warp_shuffles && clr_device_takes_ptx(ctx);
  spec.extra = p->shfl ? "-DCLR_SHFL=1" : NULL;
  st = clr_get_kernel(ctx, &spec, &p->first);
  if (st == CLR_ERR_BUILD && p->shfl) {
    /* A driver that refuses the inline PTX gets the tree. */
    p->shfl = 0;
    spec.extra = NULL;
    st = clr_get_kernel(ctx, &spec, &p->first);
  }
  if (st != CLR_OK)
    return st;
  p->first_spec = spec;
  /* The fold's slots take 64-bit atomics (cl/reduce_coarse.cl). */
  p->can_finish = p->kernel == CLR_REDUCE_COARSE && !indexed &&
                  ctx->tuning.reduce_single_launch && ctx->int64_atomics;
  /* Later passes read the partials, unmapped; they are always aligned
   * (they start at element 0 of a buffer).  The indexed ops' records are
   * read one at a time. */
  spec.in = p->acc;
  spec.op = clr_op_info(op)->partial;
  spec.map = CLR_MAP_NONE;
  spec.inputs = 1;
  spec.prelude = NULL;
  spec.aligned = p->vec > 1;
  p->vec_rest = p->vec;
  if (indexed) {
    spec.vec = p->vec_rest = 1;
    spec.aligned = 0;
    spec.extra = "-DCLR_FROM_RECORDS=1";
  }
  st = clr_get_kernel(ctx, &spec, &p->rest);
  if (st != CLR_OK)
    return st;
  size_t preferred =
      p->kernel == CLR_REDUCE_COARSE ? ctx->tuning.reduce_wg : 256;
  st = clr_choose_wg(ctx, p->first, opt->wg_size, preferred, p->acc_bytes, 1,
                     &p->wg_first);
  if (st != CLR_OK)
    return st;
  return clr_choose_wg(ctx, p->rest, opt->wg_size, preferred, p->acc_bytes, 1,
                       &p->wg_rest);
}

/* The first pass's variant whose last work-group folds every group's
 * partial (cl/reduce_coarse.cl, CLR_FINISH), fetched only where a call
 * would take two passes (and by clr_prepare), not on every small call.
 * *out is NULL where the plan has none or it cannot run in the first
 * pass's shape. */
static clr_status finish_kernel(clr_context *ctx, const reduce_plan *p,
                                clr_program_entry **out) {
  clr_program_entry *e = NULL;
  size_t wg = 0;
  *out = NULL;
  if (!p->can_finish)
    return CLR_OK;
  clr_build_spec spec = p->first_spec;
  spec.extra = p->shfl ? "-DCLR_FINISH=1 -DCLR_SLOTS=1 -DCLR_SHFL=1"
                       : "-DCLR_FINISH=1 -DCLR_SLOTS=1";
  clr_status st = clr_get_kernel(ctx, &spec, &e);
  if (st != CLR_OK)
    return st;
  if (clr_choose_wg(ctx, e, p->opt->wg_size, ctx->tuning.reduce_wg,
                    p->acc_bytes, 1, &wg) != CLR_OK ||
      wg != p->wg_first)
    ctx->detail[0] = '\0'; /* not an error: two passes instead */
  else
    *out = e;
  return CLR_OK;
}

/* What a reduction's first pass reads: n elements of mem from element
 * offset (and of mem2 from offset2: a dot product's second array), the
 * first of them element base of the whole input. */
typedef struct pass_input {
  cl_mem mem, mem2;
  size_t offset, offset2;
  cl_ulong base;
} pass_input;

/* The passes of a blocking call, still in flight: the call reads its
 * result first (one wait, not two) and then counts their time. */
typedef struct pass_set {
  cl_event events[CLR_MAX_PASSES];
  size_t n;
  int record;        /* fill the pass descriptions of ctx->timing */
  double *kernel_ms; /* where their time goes */
} pass_set;

/* Wait for ps's passes (done already after a blocking read), count their
 * time, release them. */
static clr_status settle_passes(clr_context *ctx, pass_set *ps) {
  clr_status st = CLR_OK;
  if (ps->n == 0)
    return CLR_OK;
  cl_int err = clWaitForEvents((cl_uint)ps->n, ps->events);
  if (err != CL_SUCCESS) {
    st = clr_cl_fail(ctx, "clWaitForEvents", err);
  } else {
    *ps->kernel_ms += clr_event_ms(ps->events[0], ps->events[ps->n - 1]);
    if (ps->record)
      for (size_t i = 0; i < ps->n; i++)
        ctx->timing.passes[i].ms = clr_event_ms(ps->events[i], ps->events[i]);
  }
  for (size_t i = 0; i < ps->n; i++)
    clReleaseEvent(ps->events[i]);
  ps->n = 0;
  return st;
}

/* The reduction kernels' arguments after the six every pass takes (in,
 * in_offset, n, out, local scratch, per_item; cl/reduce_*.cl): the first
 * element's index in the whole input (maps, argmin/argmax), a dot
 * product's second array, and the single-launch fold's ticket, result
 * and result index (after the second array where there is one). */
enum {
  ARG_BASE = 6,
  ARG_IN2 = 7,
  ARG_OFFSET2 = 8,
  ARG_FINISH = 7,
  ARG_FINISH_DOT = 9
};

/* Reduce n elements of src to one value (a record for the indexed ops),
 * written to element dst_index of dst.  first_is_input: the first pass
 * reads the input (else partials: the per-chunk values).  Adds kernel time
 * to *kernel_ms and, when record is set, fills the pass descriptions of
 * ctx->timing: at once, or with ps (not NULL for a blocking call) when
 * settle_passes counts them.  The last pass writes dst itself where it
 * can (element 0, a blocking call): no copy. */
static clr_status run_passes(clr_context *ctx, const reduce_plan *p,
                             int first_is_input, const pass_input *src,
                             size_t n, cl_mem dst, size_t dst_index, int record,
                             const clr_async *async, double *kernel_ms,
                             size_t *depth, pass_set *ps,
                             clr_scratch_plan *sp) {
  clr_status st = CLR_OK;
  clr_launch shapes[CLR_MAX_PASSES];
  cl_event events[CLR_MAX_PASSES];
  size_t n_passes = 0, max_even = 1, max_odd = 1, total_depth = 0;
  size_t acc_bytes = p->acc_bytes;
  memset(events, 0, sizeof events);
  if (ps) { /* a chunk's passes: the last chunk's are done by now */
    st = settle_passes(ctx, ps);
    if (st != CLR_OK)
      return st;
  }
  int direct = !async && dst_index == 0;

  /* Plan every pass first, so the ping-pong buffers are sized once. */
  for (size_t m = n, i = 0;; i++) {
    int use_first = i == 0 && first_is_input;
    if (i == CLR_MAX_PASSES)
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "reduction would need more than %d passes",
                      CLR_MAX_PASSES);
    st = clr_reduce_launch(
        ctx, p->kernel, p->opt, m, use_first ? p->wg_first : p->wg_rest,
        use_first ? p->vec : p->vec_rest, p->layout, use_first, &shapes[i]);
    if (st != CLR_OK)
      return st;
    total_depth += shapes[i].depth;
    if (i % 2 == 0 && shapes[i].groups > max_even)
      max_even = shapes[i].groups;
    if (i % 2 == 1 && shapes[i].groups > max_odd)
      max_odd = shapes[i].groups;
    n_passes = i + 1;
    m = shapes[i].groups;
    if (m == 1)
      break;
  }
  /* Two passes, the second of one group: the first pass's last group can
   * do the second's work. */
  clr_program_entry *fin = NULL;
  if (first_is_input && direct && n_passes == 2) {
    st = finish_kernel(ctx, p, &fin);
    if (st != CLR_OK)
      return st;
  }
  int finish = fin != NULL;
  if (sp) { /* a caller's scratch's plan: the buffers below, named */
    if (finish) {
      clr_scratch_need(sp, &ctx->ticket, sizeof(cl_uint));
      clr_scratch_need(sp, &ctx->fold_slots,
                       shapes[0].groups * (p->acc_bytes > 4 ? 2 : 1) *
                           sizeof(cl_ulong));
    }
    clr_scratch_need(sp, &ctx->partial[0], max_even * acc_bytes);
    clr_scratch_need(sp, &ctx->partial[1], max_odd * acc_bytes);
    return CLR_OK;
  }
  if (finish) {
    n_passes = 1;
    total_depth =
        shapes[0].depth + clr_fold_depth(shapes[0].groups, shapes[0].local);
    st = clr_buffer_reserve(ctx, &ctx->ticket, sizeof(cl_uint),
                            CL_MEM_READ_WRITE);
    if (st != CLR_OK)
      return st;
    if (!ctx->ticket_ready) {
      cl_uint zero = 0;
      cl_int err =
          clEnqueueFillBuffer(clr_queue(ctx), ctx->ticket.mem, &zero,
                              sizeof zero, 0, sizeof zero, 0, NULL, NULL);
      if (err != CL_SUCCESS)
        return clr_cl_fail(ctx, "clEnqueueFillBuffer", err);
      ctx->ticket_ready = 1;
    }
    /* A slot a 32-bit word of each group's partial.  Fresh slots are
     * zeroed, and so are all of them when the epoch wraps: a slot never
     * shows the epoch of a launch that has not written it. */
    size_t slot_bytes = (p->acc_bytes > 4 ? 2 : 1) * sizeof(cl_ulong);
    if (shapes[0].groups > SIZE_MAX / slot_bytes)
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "%zu partials overflow size_t", shapes[0].groups);
    size_t need = shapes[0].groups * slot_bytes;
    int fresh = !ctx->fold_slots.mem || ctx->fold_slots.bytes < need;
    st = clr_buffer_reserve(ctx, &ctx->fold_slots, need, CL_MEM_READ_WRITE);
    if (st != CLR_OK)
      return st;
    if (fresh || ctx->fold_epoch == UINT32_MAX) {
      clr_buffer *const slots[1] = {&ctx->fold_slots};
      st = clr_zero_buffers(ctx, slots, 1);
      if (st != CLR_OK)
        return st;
      ctx->fold_epoch = 0;
    }
  }
  if (max_even > SIZE_MAX / acc_bytes || max_odd > SIZE_MAX / acc_bytes)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "%zu partials of %zu bytes overflow size_t", max_even,
                    acc_bytes);
  st = clr_buffer_reserve(ctx, &ctx->partial[0], max_even * acc_bytes,
                          CL_MEM_READ_WRITE);
  if (st == CLR_OK)
    st = clr_buffer_reserve(ctx, &ctx->partial[1], max_odd * acc_bytes,
                            CL_MEM_READ_WRITE);
  if (st != CLR_OK)
    return st;

  cl_mem in = src->mem;
  cl_ulong in_offset = src->offset, m = n;
  for (size_t i = 0; i < n_passes; i++) {
    const clr_launch *L = &shapes[i];
    int input_pass = i == 0 && first_is_input;
    cl_kernel k = finish       ? fin->kernel
                  : input_pass ? p->first->kernel
                               : p->rest->kernel;
    cl_mem out =
        direct && i + 1 == n_passes && !finish ? dst : ctx->partial[i % 2].mem;
    cl_ulong per_item = L->per_item;
    cl_ulong base = input_pass ? src->base : 0, offset2 = src->offset2;
    st = CLR_SET_ARGS(ctx, k, CLR_ARG(in), CLR_ARG(in_offset), CLR_ARG(m),
                      CLR_ARG(out), CLR_LOCAL(L->local * acc_bytes),
                      CLR_ARG(per_item));
    if (st == CLR_OK && p->takes_base)
      st = clr_set_arg_at(ctx, k, ARG_BASE, CLR_ARG(base));
    if (st == CLR_OK && input_pass && p->inputs == 2) {
      st = clr_set_arg_at(ctx, k, ARG_IN2, CLR_ARG(src->mem2));
      if (st == CLR_OK)
        st = clr_set_arg_at(ctx, k, ARG_OFFSET2, CLR_ARG(offset2));
    }
    if (st == CLR_OK && finish) {
      cl_uint at = p->inputs == 2 ? ARG_FINISH_DOT : ARG_FINISH;
      cl_ulong index = dst_index;
      cl_uint epoch = ctx->fold_epoch + 1;
      st = CLR_SET_ARGS_FROM(ctx, k, at, CLR_ARG(ctx->ticket.mem),
                             CLR_ARG(ctx->fold_slots.mem), CLR_ARG(dst),
                             CLR_ARG(index), CLR_ARG(epoch));
    }
    if (st != CLR_OK)
      goto fail;
    /* An asynchronous call's first pass waits for the caller's events. */
    int waits = i == 0 && async && async->num_events;
    CLR_CL_CHECK(ctx, clEnqueueNDRangeKernel(clr_queue(ctx), k, 1, NULL,
                                             &L->global, &L->local,
                                             waits ? async->num_events : 0,
                                             waits ? async->wait_list : NULL,
                                             clr_timed(ctx, &events[i])));
    if (finish)
      ctx->fold_epoch++; /* its slots now show it */
    if (record && i < CLR_MAX_PASSES) {
      ctx->timing.passes[i].n_in = (size_t)m;
      ctx->timing.passes[i].global_size = L->global;
      ctx->timing.passes[i].local_size = L->local;
      ctx->timing.passes[i].folds = finish;
    }
    in = out;
    in_offset = 0;
    m = L->groups;
  }
  if (!direct)
    CLR_CL_CHECK(ctx, clEnqueueCopyBuffer(clr_queue(ctx), in, dst, 0,
                                          dst_index * acc_bytes, acc_bytes, 0,
                                          NULL, async ? async->done : NULL));
  if (record || async)
    ctx->timing.n_passes = n_passes;
  *depth = total_depth;
  if (async) /* nothing waits: no timing but the shapes */
    goto fail;
  if (ps) { /* the caller's blocking read waits; then settle_passes */
    memcpy(ps->events, events, n_passes * sizeof *events);
    ps->n = ctx->profiling ? n_passes : 0; /* (no events otherwise) */
    ps->record = record;
    ps->kernel_ms = kernel_ms;
    return CLR_OK;
  }
  if (!ctx->profiling) {
    CLR_CL_CHECK(ctx, clFinish(clr_queue(ctx)));
    goto fail;
  }
  CLR_CL_CHECK(ctx, clWaitForEvents((cl_uint)n_passes, events));
  *kernel_ms += clr_event_ms(events[0], events[n_passes - 1]);
  if (record)
    for (size_t i = 0; i < n_passes; i++)
      ctx->timing.passes[i].ms = clr_event_ms(events[i], events[i]);
fail:
  for (size_t i = 0; i < n_passes; i++)
    if (events[i])
      clReleaseEvent(events[i]);
  return st;
}

/* The result the last pass left at element 0 of buf: a value, or for the
 * indexed ops cl/reduce_extrema.cl's record (lo, hi, ilo, ihi). */
static clr_status read_result(clr_context *ctx, cl_mem buf,
                              const reduce_plan *p, clr_value *result) {
  clr_status st = CLR_OK;
  cl_event ev = NULL;
  unsigned char bytes[64];
  CLR_CL_CHECK(ctx, clEnqueueReadBuffer(clr_queue(ctx), buf, CL_TRUE, 0,
                                        p->acc_bytes, bytes, 0, NULL,
                                        clr_timed(ctx, &ev)));
  ctx->timing.d2h_ms += clr_event_ms(ev, ev);
  *result = clr_op_is_moments(p->op)
                ? clr_moments_value(p->opt, p->op, p->acc, bytes)
                : clr_result_at(p->op, p->acc, bytes, 0);
fail:
  if (ev)
    clReleaseEvent(ev);
  return st;
}

static clr_status prepare_call(clr_context *ctx, const clr_options *opt,
                               clr_op op, clr_type type) {
  clr_options defaults;
  reduce_plan plan;
  if (!ctx)
    return CLR_ERR_INVALID_ARGUMENT;
  clr_status st = clr_options_take(ctx, opt, &defaults);
  if (st != CLR_OK)
    return st;
  opt = &defaults;
  if (clr_kernel_is_scan(opt->kernel))
    return clr_scan_prepare(ctx, opt, op, type);
  if (defaults.kernel == CLR_KERNEL_DEFAULT) /* a reduction's: coarse */
    defaults.kernel = CLR_REDUCE_COARSE;
  st = clr_validate_call(ctx, opt, op, type, 1, 0);
  if (st != CLR_OK)
    return st;
  op = clr_op_info(op)->runs; /* a mean: its sum */
  if (clr_exact_applies(opt, op, type))
    return clr_exact_prepare(ctx, opt, type);
  reduce_input aligned_input = {NULL, 0};
  clr_program_entry *fin;
  st = make_plan(ctx, opt, op, type, &aligned_input, NULL, &plan);
  return st == CLR_OK ? finish_kernel(ctx, &plan, &fin) : st;
}

/* A dot product is a sum over two arrays: the checks the second array
 * adds. */
static clr_status check_dot(clr_context *ctx, const clr_options *opt) {
  if (opt->exact)
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                    "exact dot products are not implemented (exact mode "
                    "covers sums of one array)");
  if (!clr_kernel_takes_maps(opt->kernel))
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                    "dot products run on the '%s' kernel, not '%s'",
                    clr_kernel_name(CLR_REDUCE_COARSE),
                    clr_kernel_name(opt->kernel));
  if (opt->map != CLR_MAP_NONE && opt->map != CLR_MAP_EXPR)
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                    "a dot product takes a map expression of x and y, not the "
                    "one-array map '%s'",
                    clr_map_name(opt->map));
  return CLR_OK;
}

/* What a reduction reads: n elements of a host array, or of a cl_mem from
 * an offset; with a second array (data2 / buf2), a dot product. */
typedef struct reduce_source {
  int host, dot;
  const void *data, *data2;
  cl_mem buf, buf2;
  size_t offset, offset2;
  clr_exact_acc *exact_acc; /* an exact sum added here, not rounded */
} reduce_source;

/* A buffer's passes: elements [offset, offset + n) of buf. */
static clr_status reduce_buffer_passes(clr_context *ctx, const clr_options *opt,
                                       clr_op op, clr_type type,
                                       const reduce_source *s, size_t n,
                                       clr_value *result) {
  reduce_plan plan;
  size_t depth = 0;
  reduce_input where = {NULL, s->offset}, where2 = {NULL, s->offset2};
  clr_status st =
      make_plan(ctx, opt, op, type, &where, s->buf2 ? &where2 : NULL, &plan);
  if (st != CLR_OK)
    return st;
  st = clr_buffer_reserve(ctx, &ctx->aux[0], plan.acc_bytes, CL_MEM_READ_WRITE);
  pass_input src = {s->buf, s->buf2 ? s->buf2 : s->buf, s->offset, s->offset2,
                    opt->index_base};
  pass_set ps = {.n = 0};
  if (st == CLR_OK)
    st = run_passes(ctx, &plan, 1, &src, n, ctx->aux[0].mem, 0, 1, NULL,
                    &ctx->timing.kernel_ms, &depth, &ps, NULL);
  if (st == CLR_OK)
    st = read_result(ctx, ctx->aux[0].mem, &plan, result);
  clr_status settled = settle_passes(ctx, &ps);
  if (st == CLR_OK)
    st = settled;
  ctx->timing.chunks = 1;
  ctx->timing.error_depth = depth + plan.map_depth;
  return st;
}

/* One streamed chunk reduced to its value, element `index` of aux[0]. */
typedef struct chunk_run {
  const reduce_plan *plan;
  size_t depth; /* the deepest chunk's */
  pass_set *ps; /* the last chunk's passes, in flight */
} chunk_run;

static clr_status reduce_chunk(clr_context *ctx, void *user,
                               const clr_chunk *c) {
  chunk_run *run = user;
  size_t depth = 0;
  pass_input src = {c->mem, c->mem2, 0, 0,
                    run->plan->opt->index_base + c->begin};
  clr_status st = run_passes(ctx, run->plan, 1, &src, c->len, ctx->aux[0].mem,
                             c->index, c->index == 0, NULL,
                             &ctx->timing.kernel_ms, &depth, run->ps, NULL);
  if (depth > run->depth)
    run->depth = depth;
  return st;
}

/* A host array's passes: streamed in chunks, each reduced to a value,
 * then the chunks' values reduced. */
static clr_status reduce_host_passes(clr_context *ctx, const clr_options *opt,
                                     clr_op op, clr_type type,
                                     const reduce_source *s, size_t n,
                                     clr_value *result) {
  reduce_plan plan;
  size_t esize = clr_type_size(type);
  reduce_input where = {s->data, 0}, where2 = {s->data2, 0};
  clr_status st =
      make_plan(ctx, opt, op, type, &where, s->data2 ? &where2 : NULL, &plan);
  if (st != CLR_OK)
    return st;
  size_t chunks = clr_chunk_count(ctx, n, esize);
  st = clr_buffer_reserve(ctx, &ctx->aux[0], chunks * plan.acc_bytes,
                          CL_MEM_READ_WRITE);
  if (st != CLR_OK)
    return st;
  pass_set ps = {.n = 0};
  chunk_run run = {&plan, 0, &ps};
  st = clr_stream_chunks(ctx, s->data, s->data2, n, esize, reduce_chunk, &run);
  size_t depth = run.depth;
  if (st == CLR_OK && chunks > 1) {
    /* Reduce the per-chunk values (accumulator type, or records). */
    size_t final_depth = 0;
    pass_input src = {ctx->aux[0].mem, ctx->aux[0].mem, 0, 0, 0};
    st = clr_buffer_reserve(ctx, &ctx->aux[1], plan.acc_bytes,
                            CL_MEM_READ_WRITE);
    if (st == CLR_OK)
      st = run_passes(ctx, &plan, 0, &src, chunks, ctx->aux[1].mem, 0, 0, NULL,
                      &ctx->timing.kernel_ms, &final_depth, &ps, NULL);
    if (st == CLR_OK)
      st = read_result(ctx, ctx->aux[1].mem, &plan, result);
    depth += final_depth;
  } else if (st == CLR_OK) {
    st = read_result(ctx, ctx->aux[0].mem, &plan, result);
  }
  clr_status settled = settle_passes(ctx, &ps);
  if (st == CLR_OK)
    st = settled;
  ctx->timing.error_depth = depth + plan.map_depth;
  return st;
}

/* A reduction of a host array or a buffer: checked, then a mean as a sum
 * divided on the host, an exact sum, or the passes. */
static clr_status reduce_call(clr_context *ctx, const clr_options *opt,
                              clr_op op, clr_type type, const reduce_source *s,
                              size_t n, clr_value *result);

/* A NaN-skipping mean's divisor: how many of the n (mapped) values are
 * not NaN, a second reduction of the same data (clr_count_options). */
static clr_status count_numbers(clr_context *ctx, const clr_options *opt,
                                clr_type type, const reduce_source *s, size_t n,
                                uint64_t *count) {
  clr_options o;
  char expr[CLR_MAX_MAP_EXPR + CLR_COUNT_EXPR_EXTRA];
  clr_value v;
  clr_count_options(opt, &o, expr, sizeof expr);
  clr_status st = reduce_call(ctx, &o, CLR_SUM, type, s, n, &v);
  *count = v.v.ul;
  return st;
}

static clr_status reduce_call(clr_context *ctx, const clr_options *opt,
                              clr_op op, clr_type type, const reduce_source *s,
                              size_t n, clr_value *result) {
  clr_options defaults;
  double t0 = clr_now_ms();
  int dot = s->dot;
  clr_status st = clr_start_work(
      ctx, &opt, &defaults, s->host ? s->data : (const void *)s->buf, result,
      s->host ? "data and result" : "buffer and result", op, type, n, 0);
  if (st == CLR_OK && dot)
    st = check_dot(ctx, opt);
  if (st != CLR_OK)
    return st;
  if (clr_op_flags(op) & CLR_OPF_MEAN) {
    uint64_t count = n;
    st = reduce_call(ctx, opt, clr_op_info(op)->runs, type, s, n, result);
    if (st == CLR_OK && clr_mean_counts(op, type))
      st = count_numbers(ctx, opt, type, s, n, &count);
    if (st == CLR_OK) {
      clr_opt_sum_to_mean(opt, type, count, result);
      result->op = op;
    }
    return st;
  }
  if (!dot && clr_exact_applies(opt, op, type))
    st = s->host
             ? clr_exact_host(ctx, opt, type, s->data, n, result, s->exact_acc)
             : clr_exact_buffer(ctx, opt, type, s->buf, s->offset, n, result,
                                s->exact_acc);
  else if (s->host)
    st = reduce_host_passes(ctx, opt, op, type, s, n, result);
  else
    st = reduce_buffer_passes(ctx, opt, op, type, s, n, result);
  if (st == CLR_OK)
    result->op = op; /* the value says what made it (a dot product: sum) */
  ctx->timing.total_ms = clr_now_ms() - t0;
  return st;
}

CLR_API clr_status clr_prepare(clr_context *ctx, const clr_options *opt,
                               clr_op op, clr_type type) {
  CLR_PUBLIC_CALL(ctx, prepare_call(ctx, opt, op, type));
}

/* A public reduction or dot product: the call begun, the arrays checked,
 * reduced, the call ended. */
static clr_status reduce_entry(clr_context *ctx, const clr_options *opt,
                               clr_op op, clr_type type, const reduce_source *s,
                               size_t n, clr_value *result) {
  if (!ctx)
    return CLR_ERR_INVALID_ARGUMENT;
  clr_status st = clr_begin_call(ctx);
  if (st == CLR_OK && s->dot && s->host && !s->data2)
    st = clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "y must not be NULL");
  if (st == CLR_OK && !s->host)
    st = clr_check_buffer(ctx, s->buf, s->offset, n, type, CLR_ACCESS_READ,
                          s->dot ? "x" : "buffer");
  if (st == CLR_OK && !s->host && s->dot)
    st = clr_check_buffer(ctx, s->buf2, s->offset2, n, type, CLR_ACCESS_READ,
                          "y");
  if (st == CLR_OK)
    st = reduce_call(ctx, opt, op, type, s, n, result);
  return clr_end_call(ctx, st);
}

CLR_API clr_status clr_reduce_buffer(clr_context *ctx, const clr_options *opt,
                                     clr_op op, clr_type type, cl_mem buf,
                                     size_t offset, size_t n,
                                     clr_value *result) {
  reduce_source src = {0, 0, NULL, NULL, buf, NULL, offset, 0, NULL};
  return reduce_entry(ctx, opt, op, type, &src, n, result);
}

CLR_API clr_status clr_reduce_host(clr_context *ctx, const clr_options *opt,
                                   clr_op op, clr_type type, const void *data,
                                   size_t n, clr_value *result) {
  reduce_source src = {1, 0, data, NULL, NULL, NULL, 0, 0, NULL};
  return reduce_entry(ctx, opt, op, type, &src, n, result);
}

CLR_API clr_status clr_dot_host(clr_context *ctx, const clr_options *opt,
                                clr_type type, const void *x, const void *y,
                                size_t n, clr_value *result) {
  reduce_source src = {1, 1, x, y, NULL, NULL, 0, 0, NULL};
  return reduce_entry(ctx, opt, CLR_SUM, type, &src, n, result);
}

CLR_API clr_status clr_dot_buffer(clr_context *ctx, const clr_options *opt,
                                  clr_type type, cl_mem x, size_t x_offset,
                                  cl_mem y, size_t y_offset, size_t n,
                                  clr_value *result) {
  reduce_source src = {0, 1, NULL, NULL, x, y, x_offset, y_offset, NULL};
  return reduce_entry(ctx, opt, CLR_SUM, type, &src, n, result);
}

/* An exact sum added to the caller's superaccumulator: the options with
 * exact set, the sum's checks, its result kept in acc. */
static clr_status exact_add_entry(clr_context *ctx, const clr_options *opt,
                                  clr_type type, reduce_source *s, size_t n,
                                  clr_exact_acc *acc) {
  clr_options o;
  clr_value unused;
  if (!ctx)
    return CLR_ERR_INVALID_ARGUMENT;
  char why[CLR_DETAIL_SIZE - 16];
  clr_status read = clr_options_read(opt, &o, why, sizeof why);
  o.exact = 1;
  if (read != CLR_OK || !acc || acc->type != type ||
      (type != CLR_FLOAT && type != CLR_DOUBLE)) {
    clr_status st = clr_begin_call(ctx);
    if (st == CLR_OK && read != CLR_OK)
      st = clr_fail(ctx, read, "%s", why);
    else if (st == CLR_OK && !acc)
      st = clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "acc must not be NULL");
    else if (st == CLR_OK)
      st = clr_fail(
          ctx, CLR_ERR_INVALID_ARGUMENT,
          "an exact sum of %s data into an accumulator of %s: "
          "float or double, the same for both",
          (unsigned)type < CLR_TYPE_COUNT ? clr_type_name(type) : "no type",
          (unsigned)acc->type < CLR_TYPE_COUNT ? clr_type_name(acc->type)
                                               : "no type");
    return clr_end_call(ctx, st);
  }
  s->exact_acc = acc;
  return reduce_entry(ctx, &o, CLR_SUM, type, s, n, &unused);
}

CLR_API clr_status clr_exact_add_host(clr_context *ctx, const clr_options *opt,
                                      clr_type type, const void *data, size_t n,
                                      clr_exact_acc *acc) {
  reduce_source src = {1, 0, data, NULL, NULL, NULL, 0, 0, NULL};
  return exact_add_entry(ctx, opt, type, &src, n, acc);
}

CLR_API clr_status clr_exact_add_buffer(clr_context *ctx,
                                        const clr_options *opt, clr_type type,
                                        cl_mem buf, size_t offset, size_t n,
                                        clr_exact_acc *acc) {
  reduce_source src = {0, 0, NULL, NULL, buf, NULL, offset, 0, NULL};
  return exact_add_entry(ctx, opt, type, &src, n, acc);
}

/* clr_enqueue's means: the sum (and a NaN-skipping mean's count) into a
 * buffer of the call's, then cl/reduce_mean.cl divides on the device with
 * the bits of the host's long double division (clr_opt_sum_to_mean).  It
 * emulates long doubles of 53 to 64 significand bits (LDBL_MANT_DIG). */
#define MEAN_LDBL_OK (LDBL_MANT_DIG >= 53 && LDBL_MANT_DIG <= 64)

/* The sum of n elements of buf (exact where the options say so) to
 * element index of dst, after async's wait list (async->done unused). */
static clr_status sum_into(clr_context *ctx, const clr_options *opt, clr_op op,
                           clr_type type, cl_mem buf, size_t offset, size_t n,
                           cl_mem dst, size_t index, const clr_async *async,
                           int record, size_t *depth) {
  if (clr_exact_applies(opt, op, type))
    return clr_exact_buffer_async(ctx, opt, type, buf, offset, n, dst, index,
                                  async);
  reduce_plan plan = {0};
  reduce_input where = {NULL, offset};
  clr_status st = make_plan(ctx, opt, op, type, &where, NULL, &plan);
  pass_input src = {buf, buf, offset, 0, opt->index_base};
  if (st == CLR_OK)
    st = run_passes(ctx, &plan, 1, &src, n, dst, index, record, async,
                    &ctx->timing.kernel_ms, depth, NULL, NULL);
  *depth += plan.map_depth;
  return st;
}

/* The tag of mean_async's buffer in a caller's scratch (scratch.c). */
static const char mean_tag = 'm';

static clr_status mean_async(clr_context *ctx, const clr_options *opt,
                             clr_op op, clr_type type, cl_mem buf,
                             size_t offset, size_t n, cl_mem result,
                             size_t result_index, const clr_async *async,
                             size_t *depth) {
  if (!MEAN_LDBL_OK)
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                    "an enqueued mean matches the host's long double of 53 "
                    "to 64 bits, not this one's %d: use clr_reduce_buffer",
                    (int)LDBL_MANT_DIG);
  clr_op sum_op = clr_op_info(op)->runs;
  clr_type sum_t = clr_opt_result_type(opt, sum_op, type);
  int counted = clr_mean_counts(op, type);
  char extra[48];
  snprintf(extra, sizeof extra, "-DCLR_LDBL_BITS=%d", (int)LDBL_MANT_DIG);
  clr_build_spec spec = {.source = "reduce_mean.cl",
                         .kernel = "clr_mean",
                         .in = sum_t,
                         .acc = sum_t,
                         .op = CLR_SUM,
                         .extra = extra};
  clr_program_entry *k = NULL;
  clr_status st = clr_get_kernel(ctx, &spec, &k);
  if (st != CLR_OK)
    return st;
  /* The call's own buffer: the sum at byte 0, the count at byte 8. */
  cl_int err;
  cl_mem tmp = NULL;
  st = clr_temp_buffer(ctx, &mean_tag, 2 * sizeof(cl_ulong), &tmp);
  if (st != CLR_OK)
    return st;
  clr_async first = {.num_events = async->num_events,
                     .wait_list = async->wait_list};
  clr_async rest = {.num_events = 0};
  st = sum_into(ctx, opt, sum_op, type, buf, offset, n, tmp, 0, &first, 1,
                depth);
  size_t passes = ctx->timing.n_passes, count_depth = 0;
  if (st == CLR_OK && counted) { /* as count_numbers, on the device */
    clr_options co;
    char expr[CLR_MAX_MAP_EXPR + CLR_COUNT_EXPR_EXTRA];
    clr_count_options(opt, &co, expr, sizeof expr);
    st = sum_into(ctx, &co, CLR_SUM, type, buf, offset, n, tmp, 1, &rest, 0,
                  &count_depth);
    ctx->timing.n_passes = passes;
  }
  cl_ulong zero = 0, one = 1, nn = n, at = result_index;
  cl_uint given = counted;
  if (st == CLR_OK)
    st = CLR_SET_ARGS(ctx, k->kernel, CLR_ARG(tmp), CLR_ARG(zero), CLR_ARG(tmp),
                      CLR_ARG(one), CLR_ARG(given), CLR_ARG(nn),
                      CLR_ARG(result), CLR_ARG(at));
  size_t size1 = 1;
  if (st == CLR_OK) {
    err = clEnqueueNDRangeKernel(clr_queue(ctx), k->kernel, 1, NULL, &size1,
                                 &size1, 0, NULL, async->done);
    if (err != CL_SUCCESS)
      st = clr_cl_fail(ctx, "clEnqueueNDRangeKernel", err);
  }
  if (st == CLR_OK && passes < CLR_MAX_PASSES) { /* the division's pass */
    clr_pass_info *d = &ctx->timing.passes[passes];
    memset(d, 0, sizeof *d);
    d->n_in = 1;
    d->global_size = 1;
    d->local_size = 1;
    ctx->timing.n_passes = passes + 1;
  }
  clReleaseMemObject(tmp);
  return st;
}

/* The asynchronous reduction (or, with buf2, dot product of buf and
 * buf2): enqueue and return, the result left in element result_index of
 * the caller's result buffer. */
static clr_status reduce_async_call(clr_context *ctx, const clr_options *opt,
                                    clr_op op, clr_type type, cl_mem buf,
                                    size_t offset, cl_mem buf2, size_t offset2,
                                    size_t n, cl_mem result,
                                    size_t result_index,
                                    const clr_async *async) {
  clr_options defaults;
  reduce_plan plan = {0};
  size_t depth = 0;
  int dot = buf2 != NULL;
  clr_status st = clr_start_work(ctx, &opt, &defaults, buf, result,
                                 dot ? "x and result" : "buffer and result", op,
                                 type, n, 0);
  if (st == CLR_OK && dot)
    st = check_dot(ctx, opt);
  if (st != CLR_OK)
    return st;
  int mean = (clr_op_flags(op) & CLR_OPF_MEAN) != 0;
  clr_op runs = clr_op_info(op)->runs;
  int exact = !dot && clr_exact_applies(opt, runs, type);
  if (async->num_events && !async->wait_list)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "%u events to wait for, but no wait list",
                    (unsigned)async->num_events);
  st = clr_check_buffer(ctx, buf, offset, n, type, CLR_ACCESS_READ,
                        dot ? "x" : "buffer");
  if (st == CLR_OK && dot)
    st = clr_check_buffer(ctx, buf2, offset2, n, type, CLR_ACCESS_READ, "y");
  if (st == CLR_OK)
    st = clr_check_buffer_elems(ctx, result, result_index, 1,
                                clr_opt_result_bytes(opt, op, type),
                                CLR_ACCESS_WRITE, "result buffer");
  if (st == CLR_OK && (mean || exact)) { /* finished on the device */
    st = mean ? mean_async(ctx, opt, op, type, buf, offset, n, result,
                           result_index, async, &depth)
              : clr_exact_buffer_async(ctx, opt, type, buf, offset, n, result,
                                       result_index, async);
    ctx->timing.chunks = 1;
    ctx->timing.error_depth = depth;
    return st;
  }
  reduce_input where = {NULL, offset}, where2 = {NULL, offset2};
  if (st == CLR_OK)
    st = make_plan(ctx, opt, op, type, &where, dot ? &where2 : NULL, &plan);
  if (st == CLR_OK)
    st = clr_moments_finish_prepare(ctx, op, type, plan.acc);
  pass_input src = {buf, dot ? buf2 : buf, offset, offset2, opt->index_base};
  /* var and std: the passes leave the (mean, M2, count) record in the
   * result, and the finish, chained after their last command, makes it
   * (value, mean, count) in place; the caller's event is the finish's. */
  int moments = clr_op_is_moments(op);
  cl_event written = NULL;
  clr_async passes = *async;
  if (moments)
    passes.done = &written;
  if (st == CLR_OK)
    st = run_passes(ctx, &plan, 1, &src, n, result, result_index, 1, &passes,
                    &ctx->timing.kernel_ms, &depth, NULL, NULL);
  if (st == CLR_OK && moments)
    st = clr_moments_finish_enqueue(ctx, opt, op, type, plan.acc, result,
                                    result_index, 1, written, async->done);
  if (written)
    clReleaseEvent(written);
  ctx->timing.chunks = 1;
  ctx->timing.error_depth = depth + plan.map_depth;
  return st;
}

CLR_API clr_status clr_reduce_buffer_async(
    clr_context *ctx, const clr_options *opt, clr_op op, clr_type type,
    cl_mem buf, size_t offset, size_t n, cl_mem result, size_t result_index,
    cl_uint num_events, const cl_event *wait_list, cl_event *event) {
  clr_async async;
  if (!ctx)
    return CLR_ERR_INVALID_ARGUMENT;
  clr_begin_async_call(ctx, &async, num_events, wait_list, event);
  clr_status st = reduce_async_call(ctx, opt, op, type, buf, offset, NULL, 0, n,
                                    result, result_index, &async);
  return clr_end_async_call(ctx, st);
}

CLR_API clr_status clr_dot_buffer_async(
    clr_context *ctx, const clr_options *opt, clr_type type, cl_mem x,
    size_t x_offset, cl_mem y, size_t y_offset, size_t n, cl_mem result,
    size_t result_index, cl_uint num_events, const cl_event *wait_list,
    cl_event *event) {
  clr_async async;
  if (!ctx)
    return CLR_ERR_INVALID_ARGUMENT;
  clr_begin_async_call(ctx, &async, num_events, wait_list, event);
  clr_status st =
      y ? reduce_async_call(ctx, opt, CLR_SUM, type, x, x_offset, y, y_offset,
                            n, result, result_index, &async)
        : clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "y must not be NULL");
  return clr_end_async_call(ctx, st);
}

/* ------------------------------------------------- a caller's scratch */

/* The buffers of reduce_call for a buffer's value (clr_run without an
 * output), into sp: a mean's sum and count, an exact sum's accumulator,
 * or the passes (aux[0] for the value, the partials, the single
 * launch's ticket and slots); the checks of reduce_call first. */
static clr_status value_scratch(clr_context *ctx, const clr_options *opt,
                                clr_op op, clr_type type,
                                const reduce_source *s, size_t n,
                                clr_scratch_plan *sp) {
  clr_options defaults;
  double ms = 0;
  size_t depth = 0;
  int one = 1;
  clr_status st = clr_start_work(ctx, &opt, &defaults, &one, &one,
                                 "buffer and result", op, type, n, 0);
  if (st == CLR_OK && s->dot)
    st = check_dot(ctx, opt);
  if (st != CLR_OK)
    return st;
  if (clr_op_flags(op) & CLR_OPF_MEAN) {
    st = value_scratch(ctx, opt, clr_op_info(op)->runs, type, s, n, sp);
    if (st == CLR_OK && clr_mean_counts(op, type)) {
      clr_options co;
      char expr[CLR_MAX_MAP_EXPR + CLR_COUNT_EXPR_EXTRA];
      clr_count_options(opt, &co, expr, sizeof expr);
      st = value_scratch(ctx, &co, CLR_SUM, type, s, n, sp);
    }
    return st;
  }
  if (!s->dot && clr_exact_applies(opt, op, type))
    return clr_exact_scratch(ctx, opt, type, 0, sp);
  reduce_plan plan;
  reduce_input where = {NULL, s->offset}, where2 = {NULL, s->offset2};
  st = make_plan(ctx, opt, op, type, &where, s->dot ? &where2 : NULL, &plan);
  if (st != CLR_OK)
    return st;
  clr_scratch_need(sp, &ctx->aux[0], plan.acc_bytes);
  pass_input src = {s->buf, s->dot ? s->buf2 : s->buf, s->offset, s->offset2,
                    opt->index_base};
  return run_passes(ctx, &plan, 1, &src, n, ctx->aux[0].mem, 0, 1, NULL, &ms,
                    &depth, NULL, sp);
}

/* sum_into's buffers (buf2: a dot product's second array, else NULL). */
static clr_status sum_scratch(clr_context *ctx, const clr_options *opt,
                              clr_op op, clr_type type, cl_mem buf,
                              size_t offset, cl_mem buf2, size_t offset2,
                              size_t n, clr_scratch_plan *sp) {
  if (!buf2 && clr_exact_applies(opt, op, type))
    return clr_exact_scratch(ctx, opt, type, 1, sp);
  reduce_plan plan;
  clr_async none = {.num_events = 0};
  double ms = 0;
  size_t depth = 0;
  reduce_input where = {NULL, offset}, where2 = {NULL, offset2};
  clr_status st =
      make_plan(ctx, opt, op, type, &where, buf2 ? &where2 : NULL, &plan);
  pass_input src = {buf, buf2 ? buf2 : buf, offset, offset2, opt->index_base};
  if (st == CLR_OK)
    st = run_passes(ctx, &plan, 1, &src, n, NULL, 0, 0, &none, &ms, &depth,
                    NULL, sp);
  return st;
}

/* The buffers of reduce_async_call (clr_enqueue, or clr_run into an
 * output), into sp; its checks of the options first. */
static clr_status async_scratch(clr_context *ctx, const clr_options *opt,
                                clr_op op, clr_type type, cl_mem buf,
                                size_t offset, cl_mem buf2, size_t offset2,
                                size_t n, clr_scratch_plan *sp) {
  clr_options defaults;
  int dot = buf2 != NULL, one = 1;
  clr_status st = clr_start_work(ctx, &opt, &defaults, &one, &one,
                                 dot ? "x and result" : "buffer and result", op,
                                 type, n, 0);
  if (st == CLR_OK && dot)
    st = check_dot(ctx, opt);
  if (st != CLR_OK)
    return st;
  clr_op runs = clr_op_info(op)->runs;
  if (!(clr_op_flags(op) & CLR_OPF_MEAN))
    return sum_scratch(ctx, opt, op, type, buf, offset, buf2, offset2, n, sp);
  /* mean_async: its buffer, the sum, a NaN-skipping mean's count */
  clr_scratch_need(sp, &mean_tag, 2 * sizeof(cl_ulong));
  st = sum_scratch(ctx, opt, runs, type, buf, offset, NULL, 0, n, sp);
  if (st == CLR_OK && clr_mean_counts(op, type)) {
    clr_options co;
    char expr[CLR_MAX_MAP_EXPR + CLR_COUNT_EXPR_EXTRA];
    clr_count_options(opt, &co, expr, sizeof expr);
    st = sum_scratch(ctx, &co, CLR_SUM, type, buf, offset, NULL, 0, n, sp);
  }
  return st;
}

clr_status clr_reduce_scratch(clr_context *ctx, const clr_options *opt,
                              clr_op op, clr_type type, cl_mem in,
                              size_t in_offset, cl_mem in2, size_t in2_offset,
                              size_t n, int into_buffer, clr_scratch_plan *sp) {
  if (into_buffer)
    return async_scratch(ctx, opt, op, type, in, in_offset, in2, in2_offset, n,
                         sp);
  reduce_source src = {0,   in2 != NULL, NULL,       NULL, in,
                       in2, in_offset,   in2_offset, NULL};
  return value_scratch(ctx, opt, op, type, &src, n, sp);
}
