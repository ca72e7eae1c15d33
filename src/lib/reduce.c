/* The reduction driver.  Each pass reduces every work-group's slice to one
 * partial; the host launches the same kernel again on the partials
 * (recursive passes, course notes seed 001) until one value remains on the
 * device, and reads back only that value.  Host arrays larger than one
 * device allocation are streamed in chunks: each chunk is reduced to one
 * value in a device buffer, and those values are reduced by one more
 * round of passes. */
#include "internal.h"

#include <stdint.h>

#include <string.h>

/* Everything needed to launch one reduction: the kernels for the first
 * pass (reading the input type) and for later passes (reading partials of
 * the accumulator type), and the shape. */
typedef struct reduce_plan {
  clr_kernel kernel;
  clr_op op;
  clr_type in, acc;
  unsigned vec;
  clr_layout layout;
  clr_program_entry *first, *rest;
  size_t wg_first, wg_rest;
  const clr_options *opt;
} reduce_plan;

/* The one validation of a call's arguments and options, shared by the
 * reductions and the scans (scan != 0), before anything is built or
 * launched.  Every refusal records its own detail. */
clr_status clr_validate_call(clr_context *ctx, const clr_options *opt,
                             clr_op op, clr_type type, size_t n, int scan) {
  if ((unsigned)opt->kernel >= CLR_KERNEL_COUNT)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "unknown kernel %d",
                    (int)opt->kernel);
  if (!scan && clr_kernel_is_scan(opt->kernel))
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "kernel '%s' is not a reduction kernel",
                    clr_kernel_name(opt->kernel));
  /* Scans: a scan kernel, or CLR_REDUCE_COARSE (clr_options_init's
   * default) for the device's tuned scan; another reduction kernel is a
   * mistake, not a request. */
  if (scan && !clr_kernel_is_scan(opt->kernel) &&
      opt->kernel != CLR_REDUCE_COARSE)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "kernel '%s' is a reduction kernel: a scan takes a scan "
                    "kernel, or '%s' (the default) for the device's tuned scan",
                    clr_kernel_name(opt->kernel),
                    clr_kernel_name(CLR_REDUCE_COARSE));
  if ((unsigned)op >= CLR_OP_COUNT || (unsigned)type >= CLR_TYPE_COUNT)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "unknown operation or type");
  if (clr_op_supports(op, type) != CLR_OK)
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                    "operation '%s' needs an integer type, not '%s'",
                    clr_op_name(op), clr_type_name(type));
  if (scan && (op == CLR_AND || op == CLR_OR))
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                    "scans support sum, prod, min and max, not '%s'",
                    clr_op_name(op));
  if (n == 0)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "n must be at least 1");
  if (n > SIZE_MAX / clr_type_size(type))
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "%zu elements of %s exceed the address space", n,
                    clr_type_name(type));
  if (opt->wg_size == 1 && (opt->kernel == CLR_REDUCE_INTERLEAVED ||
                            opt->kernel == CLR_REDUCE_SEQUENTIAL))
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "kernel '%s' needs a work-group size of at least 2: with "
                    "one element per work-item, groups of 1 never shrink the "
                    "input",
                    clr_kernel_name(opt->kernel));
  if (opt->exact && clr_type_is_float(type) && op == CLR_PROD)
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                    "exact mode covers sums (min and max are exact anyway), "
                    "not '%s'",
                    clr_op_name(op));
  if (opt->exact && scan && clr_type_is_float(type) && op == CLR_SUM)
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                    "exact %s scans are not implemented (exact sums are "
                    "reductions)",
                    clr_type_name(type));
  if (opt->exact && !scan && opt->kernel != CLR_REDUCE_COARSE)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "exact mode has its own kernel: use it with the default "
                    "kernel '%s', not '%s'",
                    clr_kernel_name(CLR_REDUCE_COARSE),
                    clr_kernel_name(opt->kernel));
  if (opt->accumulate_in) {
    clr_type acc = (clr_type)(opt->accumulate_in - 1);
    if (opt->accumulate_in > CLR_TYPE_COUNT)
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "accumulate_in %u is no type", opt->accumulate_in);
    if (scan)
      return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                      "scans keep the input type: no accumulate_in");
    if (op == CLR_AND || op == CLR_OR || opt->exact ||
        !clr_accumulator_fits(type, acc))
      return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                      "%s of %s cannot accumulate in %s%s", clr_op_name(op),
                      clr_type_name(type), clr_type_name(acc),
                      opt->exact ? " (an exact sum has its own accumulator)"
                                 : " (the same kind, at least as wide)");
  }
  unsigned v = opt->vector_width;
  if (v != 0 && v != 1 && v != 2 && v != 4 && v != 8 && v != 16)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "vector width %u is not 1, 2, 4, 8 or 16", v);
  if (opt->layout != CLR_LAYOUT_AUTO && opt->layout != CLR_LAYOUT_STRIDED &&
      opt->layout != CLR_LAYOUT_CONTIGUOUS)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "unknown layout %d",
                    (int)opt->layout);
  return CLR_OK;
}

/* Where the elements are, for the one decision that depends on it: wide
 * aligned loads (CLR_ALIGNED) need the first element aligned to a whole
 * vector. */
typedef struct reduce_input {
  const void *host; /* a host array, or NULL for a buffer at offset */
  size_t offset;
} reduce_input;

clr_status clr_start_work(clr_context *ctx, const clr_options **opt,
                          clr_options *defaults, const void *a, const void *b,
                          const char *names, clr_op op, clr_type type, size_t n,
                          int scan) {
  *opt = clr_options_or_defaults(*opt, defaults);
  if (!a || !b)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "%s must not be NULL",
                    names);
  return clr_validate_call(ctx, *opt, op, type, n, scan);
}

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
 * it, then the work-group sizes they allow. */
static clr_status make_plan(clr_context *ctx, const clr_options *opt, clr_op op,
                            clr_type type, const reduce_input *where,
                            reduce_plan *p) {
  clr_status st;
  memset(p, 0, sizeof *p);
  p->kernel = opt->kernel;
  p->op = op;
  p->in = type;
  p->acc = clr_options_result_type(opt, op, type);
  p->opt = opt;
  p->vec = 0;
  p->layout = CLR_LAYOUT_AUTO;
  if (p->kernel == CLR_REDUCE_COARSE)
    clr_choose_coarse_shape(ctx, opt, type, p->acc, &p->vec, &p->layout);
  int aligned = input_aligned(ctx, where, p->vec, clr_type_size(type));
  clr_build_spec spec = {.source = clr_kernel_source(p->kernel),
                         .kernel = "clr_reduce",
                         .in = p->in,
                         .acc = p->acc,
                         .op = op,
                         .vec = p->vec,
                         .layout = (unsigned)p->layout,
                         .aligned = aligned};
  st = clr_get_kernel(ctx, &spec, &p->first);
  if (st != CLR_OK)
    return st;
  /* Partials are always aligned: they start at element 0 of a buffer. */
  spec.in = p->acc;
  spec.aligned = p->vec > 1;
  st = clr_get_kernel(ctx, &spec, &p->rest);
  if (st != CLR_OK)
    return st;
  size_t acc_bytes = clr_type_size(p->acc);
  size_t preferred =
      p->kernel == CLR_REDUCE_COARSE ? ctx->tuning.reduce_wg : 256;
  st = clr_choose_wg(ctx, p->first, opt->wg_size, preferred, acc_bytes, 1,
                     &p->wg_first);
  if (st != CLR_OK)
    return st;
  return clr_choose_wg(ctx, p->rest, opt->wg_size, preferred, acc_bytes, 1,
                       &p->wg_rest);
}

/* Reduce n elements of src (from element offset) to one value, written to
 * element dst_index of dst.  Adds kernel time to *kernel_ms and, when
 * record is set, fills the pass descriptions of ctx->timing. */
static clr_status run_passes(clr_context *ctx, const reduce_plan *p,
                             int first_is_input, cl_mem src, size_t offset,
                             size_t n, cl_mem dst, size_t dst_index, int record,
                             const clr_async *async, double *kernel_ms,
                             size_t *depth) {
  clr_status st = CLR_OK;
  clr_launch shapes[CLR_MAX_PASSES];
  cl_event events[CLR_MAX_PASSES];
  size_t n_passes = 0, max_even = 1, max_odd = 1, total_depth = 0;
  size_t acc_bytes = clr_type_size(p->acc);
  memset(events, 0, sizeof events);

  /* Plan every pass first, so the ping-pong buffers are sized once. */
  for (size_t m = n, i = 0;; i++) {
    int use_first = i == 0 && first_is_input;
    if (i == CLR_MAX_PASSES)
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "reduction would need more than %d passes",
                      CLR_MAX_PASSES);
    st = clr_reduce_launch(ctx, p->kernel, p->opt, m,
                           use_first ? p->wg_first : p->wg_rest, p->vec,
                           p->layout, &shapes[i]);
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

  cl_mem in = src;
  cl_ulong in_offset = offset, m = n;
  for (size_t i = 0; i < n_passes; i++) {
    const clr_launch *L = &shapes[i];
    cl_kernel k =
        (i == 0 && first_is_input) ? p->first->kernel : p->rest->kernel;
    cl_mem out = ctx->partial[i % 2].mem;
    cl_ulong per_item = L->per_item;
    st = CLR_SET_ARGS(ctx, k, CLR_ARG(in), CLR_ARG(in_offset), CLR_ARG(m),
                      CLR_ARG(out), CLR_LOCAL(L->local * acc_bytes),
                      CLR_ARG(per_item));
    if (st != CLR_OK)
      goto fail;
    /* An asynchronous call's first pass waits for the caller's events. */
    int waits = i == 0 && async && async->num_events;
    CLR_CL_CHECK(ctx, clEnqueueNDRangeKernel(
                          ctx->queue, k, 1, NULL, &L->global, &L->local,
                          waits ? async->num_events : 0,
                          waits ? async->wait_list : NULL, &events[i]));
    if (record && i < CLR_MAX_PASSES) {
      ctx->timing.passes[i].n_in = (size_t)m;
      ctx->timing.passes[i].global_size = L->global;
      ctx->timing.passes[i].local_size = L->local;
    }
    in = out;
    in_offset = 0;
    m = L->groups;
  }
  CLR_CL_CHECK(ctx, clEnqueueCopyBuffer(ctx->queue, in, dst, 0,
                                        dst_index * acc_bytes, acc_bytes, 0,
                                        NULL, async ? async->done : NULL));
  if (async) { /* nothing waits: no timing but the shapes */
    ctx->timing.n_passes = n_passes;
    *depth = total_depth;
    goto fail;
  }
  CLR_CL_CHECK(ctx, clWaitForEvents((cl_uint)n_passes, events));
  *kernel_ms += clr_event_ms(events[0], events[n_passes - 1]);
  if (record) {
    ctx->timing.n_passes = n_passes;
    for (size_t i = 0; i < n_passes; i++)
      ctx->timing.passes[i].ms = clr_event_ms(events[i], events[i]);
  }
  *depth = total_depth;
fail:
  for (size_t i = 0; i < n_passes; i++)
    if (events[i])
      clReleaseEvent(events[i]);
  return st;
}

static clr_status read_result(clr_context *ctx, cl_mem buf, clr_type acc,
                              clr_value *result) {
  clr_status st = CLR_OK;
  cl_event ev = NULL;
  clr_value v;
  memset(&v, 0, sizeof v);
  v.type = acc;
  CLR_CL_CHECK(ctx,
               clEnqueueReadBuffer(ctx->queue, buf, CL_TRUE, 0,
                                   clr_type_size(acc), &v.v, 0, NULL, &ev));
  ctx->timing.d2h_ms += clr_event_ms(ev, ev);
  *result = v;
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
  opt = clr_options_or_defaults(opt, &defaults);
  if (clr_kernel_is_scan(opt->kernel))
    return clr_scan_prepare(ctx, opt, op, type);
  clr_status st = clr_validate_call(ctx, opt, op, type, 1, 0);
  if (st != CLR_OK)
    return st;
  if (clr_exact_applies(opt, op, type))
    return clr_exact_prepare(ctx, opt, type);
  reduce_input aligned_input = {NULL, 0};
  return make_plan(ctx, opt, op, type, &aligned_input, &plan);
}

static clr_status reduce_buffer_call(clr_context *ctx, const clr_options *opt,
                                     clr_op op, clr_type type, cl_mem buf,
                                     size_t offset, size_t n,
                                     clr_value *result) {
  clr_options defaults;
  reduce_plan plan;
  size_t depth = 0, mem_size = 0;
  if (!ctx)
    return CLR_ERR_INVALID_ARGUMENT;
  double t0 = clr_now_ms();
  clr_status st = clr_start_work(ctx, &opt, &defaults, buf, result,
                                 "buffer and result", op, type, n, 0);
  if (st != CLR_OK)
    return st;
  size_t esize = clr_type_size(type);
  cl_int err =
      clGetMemObjectInfo(buf, CL_MEM_SIZE, sizeof mem_size, &mem_size, NULL);
  if (err != CL_SUCCESS)
    return clr_cl_fail(ctx, "clGetMemObjectInfo", err);
  if (offset > mem_size / esize || n > mem_size / esize - offset)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "elements [%zu, %zu + %zu) exceed the buffer's %zu bytes",
                    offset, offset, n, mem_size);
  if (clr_exact_applies(opt, op, type)) {
    st = clr_exact_buffer(ctx, opt, type, buf, offset, n, result);
    ctx->timing.total_ms = clr_now_ms() - t0;
    return st;
  }
  reduce_input where = {NULL, offset};
  st = make_plan(ctx, opt, op, type, &where, &plan);
  if (st != CLR_OK)
    return st;
  st = clr_buffer_reserve(ctx, &ctx->aux[0], clr_type_size(plan.acc),
                          CL_MEM_READ_WRITE);
  if (st == CLR_OK)
    st = run_passes(ctx, &plan, 1, buf, offset, n, ctx->aux[0].mem, 0, 1, NULL,
                    &ctx->timing.kernel_ms, &depth);
  if (st == CLR_OK)
    st = read_result(ctx, ctx->aux[0].mem, plan.acc, result);
  ctx->timing.chunks = 1;
  ctx->timing.error_depth = depth;
  ctx->timing.total_ms = clr_now_ms() - t0;
  return st;
}

/* One streamed chunk reduced to its value, element `index` of aux[0]. */
typedef struct chunk_run {
  const reduce_plan *plan;
  size_t depth; /* the deepest chunk's */
} chunk_run;

static clr_status reduce_chunk(clr_context *ctx, void *user, cl_mem mem,
                               size_t index, size_t len) {
  chunk_run *run = user;
  size_t depth = 0;
  clr_status st =
      run_passes(ctx, run->plan, 1, mem, 0, len, ctx->aux[0].mem, index,
                 index == 0, NULL, &ctx->timing.kernel_ms, &depth);
  if (depth > run->depth)
    run->depth = depth;
  return st;
}

static clr_status reduce_host_call(clr_context *ctx, const clr_options *opt,
                                   clr_op op, clr_type type, const void *data,
                                   size_t n, clr_value *result) {
  clr_options defaults;
  reduce_plan plan;
  size_t depth = 0;
  if (!ctx)
    return CLR_ERR_INVALID_ARGUMENT;
  double t0 = clr_now_ms();
  clr_status st = clr_start_work(ctx, &opt, &defaults, data, result,
                                 "data and result", op, type, n, 0);
  if (st != CLR_OK)
    return st;
  if (clr_exact_applies(opt, op, type)) {
    st = clr_exact_host(ctx, opt, type, data, n, result);
    ctx->timing.total_ms = clr_now_ms() - t0;
    return st;
  }
  size_t esize = clr_type_size(type);
  reduce_input where = {data, 0};
  st = make_plan(ctx, opt, op, type, &where, &plan);
  if (st != CLR_OK)
    return st;
  size_t chunks = clr_chunk_count(ctx, n, esize);
  st = clr_buffer_reserve(ctx, &ctx->aux[0], chunks * clr_type_size(plan.acc),
                          CL_MEM_READ_WRITE);
  if (st != CLR_OK)
    return st;
  chunk_run run = {&plan, 0};
  st = clr_stream_chunks(ctx, data, n, esize, reduce_chunk, &run);
  depth = run.depth;
  if (st == CLR_OK && chunks > 1) {
    /* Reduce the per-chunk values (accumulator type). */
    size_t final_depth = 0;
    st = clr_buffer_reserve(ctx, &ctx->aux[1], clr_type_size(plan.acc),
                            CL_MEM_READ_WRITE);
    if (st == CLR_OK)
      st =
          run_passes(ctx, &plan, 0, ctx->aux[0].mem, 0, chunks, ctx->aux[1].mem,
                     0, 0, NULL, &ctx->timing.kernel_ms, &final_depth);
    if (st == CLR_OK)
      st = read_result(ctx, ctx->aux[1].mem, plan.acc, result);
    depth += final_depth;
  } else if (st == CLR_OK) {
    st = read_result(ctx, ctx->aux[0].mem, plan.acc, result);
  }
  ctx->timing.error_depth = depth;
  ctx->timing.total_ms = clr_now_ms() - t0;
  return st;
}

CLR_API clr_status clr_prepare(clr_context *ctx, const clr_options *opt,
                               clr_op op, clr_type type) {
  if (!ctx)
    return CLR_ERR_INVALID_ARGUMENT;
  clr_status st = clr_begin_call(ctx);
  if (st == CLR_OK)
    st = prepare_call(ctx, opt, op, type);
  return clr_end_call(ctx, st);
}

CLR_API clr_status clr_reduce_buffer(clr_context *ctx, const clr_options *opt,
                                     clr_op op, clr_type type, cl_mem buf,
                                     size_t offset, size_t n,
                                     clr_value *result) {
  if (!ctx)
    return CLR_ERR_INVALID_ARGUMENT;
  clr_status st = clr_begin_call(ctx);
  if (st == CLR_OK)
    st = clr_check_buffer(ctx, buf, offset, n, type, CLR_ACCESS_READ, "buffer");
  if (st == CLR_OK)
    st = reduce_buffer_call(ctx, opt, op, type, buf, offset, n, result);
  return clr_end_call(ctx, st);
}

CLR_API clr_status clr_reduce_host(clr_context *ctx, const clr_options *opt,
                                   clr_op op, clr_type type, const void *data,
                                   size_t n, clr_value *result) {
  if (!ctx)
    return CLR_ERR_INVALID_ARGUMENT;
  clr_status st = clr_begin_call(ctx);
  if (st == CLR_OK)
    st = reduce_host_call(ctx, opt, op, type, data, n, result);
  return clr_end_call(ctx, st);
}

/* The asynchronous reduction: enqueue and return, the result left in
 * element result_index of the caller's result buffer. */
static clr_status reduce_async_call(clr_context *ctx, const clr_options *opt,
                                    clr_op op, clr_type type, cl_mem buf,
                                    size_t offset, size_t n, cl_mem result,
                                    size_t result_index,
                                    const clr_async *async) {
  clr_options defaults;
  reduce_plan plan;
  size_t depth = 0;
  clr_status st = clr_start_work(ctx, &opt, &defaults, buf, result,
                                 "buffer and result", op, type, n, 0);
  if (st != CLR_OK)
    return st;
  if (clr_exact_applies(opt, op, type))
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                    "an exact sum is rounded on the host: use "
                    "clr_reduce_buffer");
  if (async->num_events && !async->wait_list)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "%u events to wait for, but no wait list",
                    (unsigned)async->num_events);
  clr_type rt = clr_options_result_type(opt, op, type);
  st = clr_check_buffer(ctx, buf, offset, n, type, CLR_ACCESS_READ, "buffer");
  if (st == CLR_OK)
    st = clr_check_buffer(ctx, result, result_index, 1, rt, CLR_ACCESS_WRITE,
                          "result buffer");
  reduce_input where = {NULL, offset};
  if (st == CLR_OK)
    st = make_plan(ctx, opt, op, type, &where, &plan);
  if (st == CLR_OK)
    st = run_passes(ctx, &plan, 1, buf, offset, n, result, result_index, 1,
                    async, &ctx->timing.kernel_ms, &depth);
  ctx->timing.chunks = 1;
  ctx->timing.error_depth = depth;
  return st;
}

CLR_API clr_status clr_reduce_buffer_async(
    clr_context *ctx, const clr_options *opt, clr_op op, clr_type type,
    cl_mem buf, size_t offset, size_t n, cl_mem result, size_t result_index,
    cl_uint num_events, const cl_event *wait_list, cl_event *event) {
  if (!ctx)
    return CLR_ERR_INVALID_ARGUMENT;
  if (event)
    *event = NULL;
  clr_async async = {num_events, wait_list, event};
  clr_status st = clr_begin_async_call(ctx);
  if (st == CLR_OK)
    st = reduce_async_call(ctx, opt, op, type, buf, offset, n, result,
                           result_index, &async);
  return clr_end_async_call(ctx, st);
}
