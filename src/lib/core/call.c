/* The frame of every public call that runs kernels, below every driver:
 * its start and end (clr_begin_call / clr_end_call and the asynchronous
 * forms: the error detail and timing cleared, the caller's queue waited
 * for, the context's queue finished), its timing, and the one validation
 * of a reduction's or scan's options and arguments. */
#include "expr.h"
#include "internal.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The caller's queue could not be waited for: the call must not count. */
static clr_status caller_queue_fail(clr_context *ctx) {
  clr_status st = clr_cl_fail(ctx, "clFinish", ctx->caller_err);
  return clr_fail(ctx, st,
                  "clFinish of the caller's queue (waiting for its commands "
                  "enqueued before this call) failed: %s (%d)",
                  clr_cl_error_name(ctx->caller_err), (int)ctx->caller_err);
}

/* What every call starts with: no timing, no detail, room in the
 * program cache. */
static void start_call(clr_context *ctx, int async) {
  memset(&ctx->timing, 0, sizeof ctx->timing);
  ctx->detail[0] = '\0';
  ctx->caller_err = CL_SUCCESS;
  ctx->async_call = async;
  if (ctx->n_programs > CLR_MAX_PROGRAMS - CLR_PROGRAMS_PER_CALL)
    clr_release_programs(ctx); /* rare: start the in-memory cache over */
}

clr_status clr_begin_call(clr_context *ctx) {
  start_call(ctx, 0);
  /* On an in-order queue the caller's earlier commands precede ours by
   * the queue's order; beside an out-of-order one, wait for all of them
   * (the calls are blocking, so a host wait costs no overlap). */
  if (ctx->caller_queue) {
    ctx->caller_err = clFinish(ctx->caller_queue);
    if (ctx->caller_err != CL_SUCCESS)
      return caller_queue_fail(ctx);
  }
  return CLR_OK;
}

void clr_begin_async_call(clr_context *ctx, clr_async *async,
                          cl_uint num_events, const cl_event *wait_list,
                          cl_event *event) {
  if (event)
    *event = NULL;
  async->num_events = num_events;
  async->wait_list = wait_list;
  async->done = event;
  start_call(ctx, 1);
}

/* clr_options as this library lays it out: its fields after struct_size
 * (include/clreduce.h, "sized structs"). */
static const clr_field_span options_fields[] = {
    CLR_FIELD_SPAN(clr_options, kernel),
    CLR_FIELD_SPAN(clr_options, wg_size),
    CLR_FIELD_SPAN(clr_options, coarse),
    CLR_FIELD_SPAN(clr_options, vector_width),
    CLR_FIELD_SPAN(clr_options, layout),
    CLR_FIELD_SPAN(clr_options, narrow_accumulator),
    CLR_FIELD_SPAN(clr_options, exclusive),
    CLR_FIELD_SPAN(clr_options, carry_in),
    CLR_FIELD_SPAN(clr_options, exact),
    CLR_FIELD_SPAN(clr_options, accumulate_in),
    CLR_FIELD_SPAN(clr_options, map),
    CLR_FIELD_SPAN(clr_options, map_expr),
    CLR_FIELD_SPAN(clr_options, index_base),
    CLR_FIELD_SPAN(clr_options, ddof),
};
/* A field added to clr_options goes at its end, and into the table. */
_Static_assert(CLR_IS_LAST_FIELD(clr_options, ddof),
               "ddof is clr_options' last field: options_fields lists "
               "them all");
static const clr_struct_layout options_layout = {
    "clr_options", "call clr_options_init, or use CLR_OPTIONS_INIT",
    sizeof(clr_options), options_fields,
    sizeof options_fields / sizeof options_fields[0]};

clr_status clr_options_read(const clr_options *opt, clr_options *copy,
                            char *why, size_t why_size) {
  clr_options_init(copy);
  if (!opt)
    return CLR_OK;
  clr_status st =
      clr_struct_size_check(&options_layout, opt->struct_size, why, why_size);
  if (st == CLR_OK)
    clr_struct_fields_copy(copy, opt, opt->struct_size);
  return st;
}

clr_status clr_options_take(clr_context *ctx, const clr_options *opt,
                            clr_options *copy) {
  char why[CLR_DETAIL_SIZE - 16];
  clr_status st = clr_options_read(opt, copy, why, sizeof why);
  return st == CLR_OK ? CLR_OK : clr_fail(ctx, st, "%s", why);
}

CLR_API clr_status clr_options_copy(const clr_options *opt, clr_options *out,
                                    char *detail, size_t detail_size) {
  char why[CLR_DETAIL_SIZE];
  clr_options full;
  clr_status st = CLR_ERR_INVALID_ARGUMENT;
  snprintf(why, sizeof why, "clr_options_copy: out is NULL");
  if (out)
    st = clr_struct_size_check(&options_layout, out->struct_size, why,
                               sizeof why);
  if (st == CLR_OK)
    st = clr_options_read(opt, &full, why, sizeof why);
  if (st == CLR_OK) {
    clr_struct_fields_copy(out, &full, out->struct_size);
    why[0] = '\0';
  }
  if (detail && detail_size)
    snprintf(detail, detail_size, "%s", why);
  return st;
}

CLR_API clr_type clr_options_result_type(const clr_options *opt, clr_op op,
                                         clr_type t) {
  clr_options o;
  char why[8];
  return clr_options_read(opt, &o, why, sizeof why) == CLR_OK
             ? clr_opt_result_type(&o, op, t)
             : CLR_TYPE_COUNT;
}

CLR_API clr_type clr_scan_output_type(const clr_options *opt, clr_type t) {
  clr_options o;
  char why[8];
  return clr_options_read(opt, &o, why, sizeof why) == CLR_OK
             ? clr_opt_scan_output_type(&o, t)
             : CLR_TYPE_COUNT;
}

CLR_API size_t clr_result_bytes(const clr_options *opt, clr_op op, clr_type t) {
  clr_options o;
  char why[8];
  return clr_options_read(opt, &o, why, sizeof why) == CLR_OK
             ? clr_opt_result_bytes(&o, op, t)
             : 0;
}

CLR_API clr_status clr_value_sum_to_mean(const clr_options *opt, clr_type type,
                                         uint64_t n, clr_value *v) {
  clr_options o;
  char why[8];
  clr_status st = clr_options_read(opt, &o, why, sizeof why);
  return st == CLR_OK ? clr_opt_sum_to_mean(&o, type, n, v) : st;
}

clr_status clr_end_async_call(clr_context *ctx, clr_status st) {
  if (st == CLR_OK) {
    /* Marked (the queue is in order: the marker completes after every
     * command of the call), so that release knows whether they are still
     * pending; flushed, so they start without a later call or wait. */
    cl_event tail = NULL;
    cl_int err = clEnqueueMarkerWithWaitList(clr_queue(ctx), 0, NULL, &tail);
    if (err != CL_SUCCESS)
      st = clr_cl_fail(ctx, "clEnqueueMarkerWithWaitList", err);
    else {
      if (ctx->async_tail)
        clReleaseEvent(ctx->async_tail);
      ctx->async_tail = tail;
      err = clFlush(clr_queue(ctx));
      if (err != CL_SUCCESS)
        st = clr_cl_fail(ctx, "clFlush", err);
    }
  }
  st = clr_end_call(ctx, st);
  ctx->async_call = 0;
  return st;
}

clr_status clr_end_call(clr_context *ctx, clr_status st) {
  if (ctx->caller_queue && clr_queue(ctx) &&
      !(st == CLR_OK && ctx->async_call)) {
    /* The context's own queue: complete this call's commands before the
     * caller's next ones, which may use what it wrote. */
    cl_int err = clFinish(clr_queue(ctx));
    if (err != CL_SUCCESS && st == CLR_OK)
      st = clr_cl_fail(ctx, "clFinish", err);
  }
  if (ctx->caller_err != CL_SUCCESS)
    st = caller_queue_fail(ctx);
  if (st == CLR_OK)
    ctx->last_timing = ctx->timing;
  else if (clr_queue(ctx))
    clFinish(clr_queue(ctx)); /* a failed call may have left commands queued
                             that use the caller's arrays: wait for them */
  /* Every failed call leaves its own detail (begin cleared the last one):
   * a path that returned a status without clr_fail still says what. */
  if (st != CLR_OK && ctx->detail[0] == '\0')
    clr_fail(ctx, st, "%s", clr_status_string(st));
  return st;
}

void clr_timing_done(clr_context *ctx, size_t chunks, size_t error_depth,
                     double t0) {
  ctx->timing.chunks = chunks;
  ctx->timing.error_depth = error_depth;
  ctx->timing.total_ms = clr_now_ms() - t0;
}

/* What a map expression may hold: one expression of x, i and y, every
 * token from expr.c's whitelist (names, functions, literals, operators),
 * so nothing that could end it, open a block or a directive, hide the
 * rest of the line or name anything else reaches the kernel. */
static clr_status check_expr(clr_context *ctx, const char *e, size_t limit) {
  char why[CLR_DETAIL_SIZE - 64];
  clr_expr tree;
  if (!e || !e[0])
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "the map expression is empty (CLR_MAP_EXPR needs "
                    "map_expr)");
  int rc = clr_expr_parse(&tree, e, "the map expression", clr_map_vars,
                          CLR_MAP_NVARS, limit, why, sizeof why);
  clr_expr_free(&tree);
  if (rc < 0)
    return clr_fail(ctx, CLR_ERR_OUT_OF_MEMORY,
                    "out of host memory parsing the map expression");
  if (rc > 0)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "%s%s", why,
                    limit < CLR_MAX_MAP_EXPR && strlen(e) > limit
                        ? " for a NaN-skipping mean (its count wraps it)"
                        : "");
  return CLR_OK;
}

/* The map option against the call. */
static clr_status check_map(clr_context *ctx, const clr_options *opt, clr_op op,
                            int scan) {
  if ((unsigned)opt->map >= CLR_MAP_COUNT)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "unknown map %d",
                    (int)opt->map);
  if (opt->map == CLR_MAP_NONE)
    return CLR_OK;
  if (scan || opt->exact || !clr_kernel_takes_maps(opt->kernel))
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                    "maps apply to reductions with the '%s' kernel (not to "
                    "%s)",
                    clr_kernel_name(CLR_REDUCE_COARSE),
                    scan         ? "scans"
                    : opt->exact ? "exact sums"
                                 : clr_kernel_name(opt->kernel));
  if (opt->map != CLR_MAP_EXPR && (clr_op_flags(op) & CLR_OPF_LOGICAL))
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                    "'%s' tests the elements as they are: give a map "
                    "expression for another test",
                    clr_op_name(op));
  /* a NaN-skipping mean's count wraps the expression (clr_count_options) */
  unsigned f = clr_op_flags(op);
  size_t limit = (f & CLR_OPF_MEAN) && (f & CLR_OPF_SKIPS_NAN)
                     ? CLR_MAX_MAP_EXPR - CLR_COUNT_EXPR_EXTRA
                     : CLR_MAX_MAP_EXPR;
  return opt->map == CLR_MAP_EXPR ? check_expr(ctx, opt->map_expr, limit)
                                  : CLR_OK;
}

/* The one validation of a call's arguments and options, shared by the
 * reductions and the scans (scan != 0), before anything is built or
 * launched.  Every refusal records its own detail. */
clr_status clr_validate_call(clr_context *ctx, const clr_options *opt,
                             clr_op op, clr_type type, size_t n, int scan) {
  clr_status st;
  /* Scans: a scan kernel, or CLR_KERNEL_DEFAULT (clr_options_init's) for
   * the device's tuned scan; reductions have had theirs made
   * CLR_REDUCE_COARSE (clr_start_work). */
  if ((unsigned)opt->kernel >= CLR_KERNEL_COUNT &&
      !(scan && opt->kernel == CLR_KERNEL_DEFAULT))
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "unknown kernel %d (CLR_KERNEL_DEFAULT: the default)",
                    (int)opt->kernel);
  if (!scan && clr_kernel_is_scan(opt->kernel))
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "kernel '%s' is not a reduction kernel",
                    clr_kernel_name(opt->kernel));
  if (scan && !clr_kernel_is_scan(opt->kernel) &&
      opt->kernel != CLR_KERNEL_DEFAULT)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "kernel '%s' is a reduction kernel: a scan takes a scan "
                    "kernel, or CLR_KERNEL_DEFAULT for the device's tuned scan",
                    clr_kernel_name(opt->kernel));
  const clr_op_row *row = clr_op_info(op);
  if (!row || !clr_type_info(type))
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "unknown operation or type");
  unsigned f = row->flags;
  int expr = opt->map == CLR_MAP_EXPR;
  /* logical operations of floats test a map expression's values */
  if (clr_op_supports(op, type) != CLR_OK &&
      !(expr && !scan && (f & CLR_OPF_LOGICAL)))
    return (f & CLR_OPF_INTEGER)
               ? clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                          "operation '%s' needs an integer type, not '%s'%s",
                          row->name, clr_type_name(type),
                          (f & CLR_OPF_LOGICAL)
                              ? " (or a map expression giving the values it "
                                "tests)"
                              : "")
               : clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                          "operation '%s' does not apply to '%s'%s", row->name,
                          clr_type_name(type),
                          (f & CLR_OPF_MEAN) ? " (its sum would wrap)" : "");
  if (scan && !(f & CLR_OPF_SCAN)) {
    char list[256];
    clr_op_list(list, sizeof list, CLR_OPF_SCAN);
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED, "scans support %s, not '%s'",
                    list, row->name);
  }
  if (!scan && (f & (CLR_OPF_INDEXED | CLR_OPF_MOMENTS)) &&
      !clr_kernel_takes_maps(opt->kernel))
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                    "'%s' runs on the '%s' kernel, not '%s'", clr_op_name(op),
                    clr_kernel_name(CLR_REDUCE_COARSE),
                    clr_kernel_name(opt->kernel));
  st = check_map(ctx, opt, op, scan);
  if (st != CLR_OK)
    return st;
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
  if (type == CLR_HALF && opt->exact)
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                    "exact sums take float or double data, not half (a half "
                    "sum accumulated in double is exact while its partial "
                    "sums stay below 2^29)");
  int sum = clr_op_info(row->runs)->combine == CLR_SUM;
  if (opt->exact && clr_type_is_float(type) && row->combine == CLR_PROD)
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                    "exact mode covers sums (min and max are exact anyway), "
                    "not '%s'",
                    row->name);
  if (opt->exact && clr_type_is_float(type) && sum && (f & CLR_OPF_SKIPS_NAN))
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                    "exact sums do not skip NaNs: '%s' takes no exact mode",
                    row->name);
  if (opt->exact && scan && clr_type_is_float(type) && sum)
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
  if ((f & CLR_OPF_MEAN) &&
      ((opt->narrow_accumulator && (type == CLR_INT || type == CLR_UINT)) ||
       opt->accumulate_in == CLR_INT || opt->accumulate_in == CLR_UINT))
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                    "a mean's sum is not narrowed to 32 bits: it would wrap");
  if (f & CLR_OPF_MOMENTS) {
    /* var and std: in the result type, float or double, whatever the
     * data's kind */
    clr_type acc = opt->accumulate_in;
    if (opt->exact)
      return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                      "'%s' takes no exact mode (not implemented)", row->name);
    if (acc != CLR_TYPE_DEFAULT && !clr_type_info(acc))
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "accumulate_in %d is no type (CLR_TYPE_DEFAULT: the "
                      "default)",
                      (int)acc);
    if (acc != CLR_TYPE_DEFAULT && acc != CLR_DOUBLE &&
        !(acc == CLR_FLOAT && (type == CLR_FLOAT || type == CLR_HALF)))
      return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                      "'%s' of %s accumulates in double, or float for float "
                      "and half data, not in %s",
                      row->name, clr_type_name(type), clr_type_name(acc));
  } else if (opt->accumulate_in != CLR_TYPE_DEFAULT) {
    clr_type acc = opt->accumulate_in;
    if (!clr_type_info(acc))
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "accumulate_in %d is no type (CLR_TYPE_DEFAULT: the "
                      "default)",
                      (int)acc);
    /* a storage type (half: computed in float) never accumulates, with
     * or without a map */
    if (clr_type_info(acc)->computes != acc)
      return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                      "%s is a storage type, computed in %s: it cannot be an "
                      "accumulator",
                      clr_type_name(acc),
                      clr_type_name(clr_type_info(acc)->computes));
    if ((f & CLR_OPF_LOGICAL) || opt->exact ||
        !(expr || clr_accumulator_fits(type, acc)))
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

clr_status clr_start_work(clr_context *ctx, const clr_options **opt,
                          clr_options *defaults, const void *a, const void *b,
                          const char *names, clr_op op, clr_type type, size_t n,
                          int scan) {
  clr_status st = clr_options_take(ctx, *opt, defaults);
  *opt = defaults;
  if (st != CLR_OK)
    return st;
  if (!scan && defaults->kernel == CLR_KERNEL_DEFAULT)
    defaults->kernel = CLR_REDUCE_COARSE;
  if (!a || !b)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "%s must not be NULL",
                    names);
  return clr_validate_call(ctx, *opt, op, type, n, scan);
}
