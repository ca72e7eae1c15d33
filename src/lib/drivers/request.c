/* Requests (clr_request): one call shape for every kind of work, run by
 * clr_run (blocking) or clr_enqueue (returning an event), on the context's
 * queue or a queue of the request's.  This unit reads and checks the
 * descriptor, then hands it to the drivers' own entry points (reduce.c,
 * scan.c, segmented.c, ranges.c, scan_segmented.c): it holds none of
 * their logic.  The per-call queue is the context's (clr_queue_enter /
 * clr_queue_leave, queue.c). */
#include "internal.h"
#include "queue.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------- the layout */

/* clr_request as this library lays it out (include/clreduce.h, "sized
 * structs"): its fields after struct_size. */
static const clr_field_span request_fields[] = {
    CLR_FIELD_SPAN(clr_request, kind),
    CLR_FIELD_SPAN(clr_request, op),
    CLR_FIELD_SPAN(clr_request, type),
    CLR_FIELD_SPAN(clr_request, n),
    CLR_FIELD_SPAN(clr_request, input),
    CLR_FIELD_SPAN(clr_request, input2),
    CLR_FIELD_SPAN(clr_request, segments),
    CLR_FIELD_SPAN(clr_request, n_segments),
    CLR_FIELD_SPAN(clr_request, key_type),
    CLR_FIELD_SPAN(clr_request, output),
    CLR_FIELD_SPAN(clr_request, output_keys),
    CLR_FIELD_SPAN(clr_request, n_runs),
    CLR_FIELD_SPAN(clr_request, options),
    CLR_FIELD_SPAN(clr_request, queue),
    CLR_FIELD_SPAN(clr_request, scratch),
    CLR_FIELD_SPAN(clr_request, scratch_bytes),
    CLR_FIELD_SPAN(clr_request, status),
    CLR_FIELD_SPAN(clr_request, run_count),
    CLR_FIELD_SPAN(clr_request, rows),
    CLR_FIELD_SPAN(clr_request, cols),
    CLR_FIELD_SPAN(clr_request, pitch),
    CLR_FIELD_SPAN(clr_request, axis),
};
/* A field added to clr_request goes at its end, and into the table. */
_Static_assert(CLR_IS_LAST_FIELD(clr_request, axis),
               "axis is clr_request's last field: request_fields lists "
               "them all");
static const clr_struct_layout request_layout = {
    "clr_request", "call clr_request_init, or use CLR_REQUEST_INIT",
    sizeof(clr_request), request_fields,
    sizeof request_fields / sizeof request_fields[0]};
/* The first clr_request had every field up to queue: no header has a
 * shorter one. */
#define REQUEST_FIRST_SIZE                                                     \
  (offsetof(clr_request, queue) + sizeof(cl_command_queue))

/* ----------------------------------------------------------- the kinds */

/* The parts of a request a kind takes. */
#define TAKES_INPUT 0x01u
#define TAKES_INPUT2 0x02u
#define TAKES_SEGMENTS 0x04u
#define TAKES_N_SEGMENTS 0x08u
#define TAKES_OUTPUT 0x10u /* required, except a reduction's */
#define TAKES_KEYS 0x20u   /* key_type, output_keys and n_runs */
#define TAKES_RESULT 0x40u /* clr_run's result */
#define TAKES_STATUS 0x80u /* clr_enqueue: the device check's verdict */
#define TAKES_SHAPE 0x100u /* rows, cols, pitch and axis (not n) */

typedef struct kind_row {
  const char *name;
  unsigned takes;
  const char *segments; /* what r->segments holds, NULL: nothing */
  /* Why clr_enqueue cannot run it yet (what in its driver waits on the
   * host), NULL: it runs without a host sync. */
  const char *blocks;
} kind_row;

static const kind_row kinds[CLR_REQ_KIND_COUNT] = {
    [CLR_REQ_REDUCE] = {"reduce", TAKES_INPUT | TAKES_OUTPUT | TAKES_RESULT,
                        NULL, NULL},
    [CLR_REQ_SCAN] = {"scan", TAKES_INPUT | TAKES_OUTPUT, NULL, NULL},
    [CLR_REQ_DOT] = {"dot",
                     TAKES_INPUT | TAKES_INPUT2 | TAKES_OUTPUT | TAKES_RESULT,
                     NULL, NULL},
    [CLR_REQ_SEGMENTS] = {"segments",
                          TAKES_INPUT | TAKES_SEGMENTS | TAKES_N_SEGMENTS |
                              TAKES_OUTPUT | TAKES_STATUS,
                          "offsets", NULL},
    [CLR_REQ_RANGES] = {"ranges",
                        TAKES_INPUT | TAKES_SEGMENTS | TAKES_N_SEGMENTS |
                            TAKES_OUTPUT | TAKES_STATUS,
                        "ranges", NULL},
    [CLR_REQ_BY_KEY] = {"by-key",
                        TAKES_INPUT | TAKES_SEGMENTS | TAKES_OUTPUT |
                            TAKES_KEYS,
                        "keys", NULL},
    [CLR_REQ_SCAN_SEGMENTS] = {"scan-segments",
                               TAKES_INPUT | TAKES_SEGMENTS | TAKES_N_SEGMENTS |
                                   TAKES_OUTPUT | TAKES_STATUS,
                               "offsets", NULL},
    [CLR_REQ_SCAN_HEADS] = {"scan-heads",
                            TAKES_INPUT | TAKES_SEGMENTS | TAKES_OUTPUT,
                            "heads", NULL},
    [CLR_REQ_MATRIX] = {"matrix", TAKES_INPUT | TAKES_OUTPUT | TAKES_SHAPE,
                        NULL, NULL},
};

CLR_API const char *clr_request_kind_name(clr_request_kind k) {
  return (unsigned)k < CLR_REQ_KIND_COUNT ? kinds[k].name : "?";
}

/* ------------------------------------------------------ the descriptor */

/* A request read and checked: the caller's fields (over the defaults) and
 * its options read as the call will read them. */
typedef struct request {
  clr_request r;
  const kind_row *row;
  clr_options opt; /* r.options read (sizes of outputs) */
  int host;        /* the operands are host arrays (else buffers) */
} request;

static int given(const clr_operand *o) {
  return o->host != NULL || o->buffer != NULL;
}

/* An operand's bytes an element, for a host pointer's offset. */
static size_t operand_esize(const request *q, const clr_operand *o) {
  const clr_request *r = &q->r;
  if (o == &r->input || o == &r->input2)
    return clr_type_size(r->type);
  if (o == &r->output_keys)
    return clr_type_size(r->key_type);
  if (o == &r->segments)
    return r->kind == CLR_REQ_BY_KEY       ? clr_type_size(r->key_type)
           : r->kind == CLR_REQ_SCAN_HEADS ? 1
                                           : sizeof(uint64_t);
  /* output */
  if (r->kind == CLR_REQ_SCAN || r->kind == CLR_REQ_SCAN_SEGMENTS ||
      r->kind == CLR_REQ_SCAN_HEADS)
    return clr_type_size(clr_opt_scan_output_type(&q->opt, r->type));
  return clr_opt_result_bytes(&q->opt, r->op, r->type);
}

/* A host operand's first element (NULL for a buffer). */
static const void *host_at(const request *q, const clr_operand *o) {
  if (!o->host)
    return NULL;
  return (const char *)o->host + o->offset * operand_esize(q, o);
}

/* One operand against its kind: both or neither of host and buffer, one
 * it does not take, an offset past the address space. */
static clr_status check_operand(clr_context *ctx, const request *q,
                                const clr_operand *o, const char *name,
                                int takes, int required) {
  const char *kind = q->row->name;
  if (o->host && o->buffer)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "a %s request's %s has both host and buffer set: give "
                    "one",
                    kind, name);
  if (!takes && (given(o) || o->offset))
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "a %s request takes no %s (leave it as clr_request_init "
                    "sets it)",
                    kind, name);
  if (required && !given(o))
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "a %s request needs %s: set %s.host or %s.buffer", kind,
                    name, name, name);
  if (o->host && o->offset) {
    size_t es = operand_esize(q, o);
    if (es && o->offset > (UINTPTR_MAX - (uintptr_t)o->host) / es)
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "a %s request's %s.offset (%zu elements of %zu bytes) "
                      "runs past the address space",
                      kind, name, o->offset, es);
  }
  return CLR_OK;
}

/* Why a request takes no caller scratch, NULL when it does: every kind's
 * driver plans the buffers it reserves (plan_scratch), of buffers; host
 * arrays are staged through the context's own. */
static const char *scratch_refusal(const request *q) {
  if (q->host)
    return "host arrays are staged through the context's own buffers";
  return NULL;
}

/* The fields added after the first clr_request: buffers only, each
 * where its kind (and call) takes it. */
static clr_status check_later_fields(clr_context *ctx, const request *q,
                                     int enqueue) {
  const clr_request *c = &q->r;
  const char *kind = q->row->name;
  unsigned takes = q->row->takes;
  const struct {
    const clr_operand *o;
    const char *name;
    int takes;
    const char *why_not; /* when not taken */
  } later[] = {
      {&c->scratch, "scratch", 1, ""},
      {&c->status, "status", enqueue && (takes & TAKES_STATUS),
       enqueue ? "" : " (clr_run returns the check's verdict as its status)"},
      {&c->run_count, "run_count", enqueue && (takes & TAKES_KEYS),
       enqueue ? "" : " (clr_run writes the number of runs to *n_runs)"},
  };
  for (size_t i = 0; i < sizeof later / sizeof later[0]; i++) {
    const clr_operand *o = later[i].o;
    if (o->host)
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "a request's %s is a buffer (%s.buffer): %s.host must "
                      "stay NULL",
                      later[i].name, later[i].name, later[i].name);
    if (!later[i].takes && (given(o) || o->offset))
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "a %s request takes no %s%s (leave it as "
                      "clr_request_init sets it)",
                      kind, later[i].name, later[i].why_not);
  }
  if (!given(&c->scratch) && (c->scratch.offset || c->scratch_bytes))
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "a request's scratch_bytes or scratch.offset is set "
                    "without scratch.buffer");
  const char *no_scratch = scratch_refusal(q);
  if (given(&c->scratch) && no_scratch)
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                    "a %s request takes no caller scratch (%s): leave "
                    "scratch unset (the context's own is used)",
                    kind, no_scratch);
  return CLR_OK;
}

/* Read the caller's request over the defaults and check everything the
 * drivers do not: the kind, which parts it takes (and needs), host arrays
 * and buffers not mixed, clr_run's result.  The drivers then check the
 * rest (the operation against the type, n, the buffers' ranges and
 * access, the offsets) as their own entry points do.  enqueue: for
 * clr_enqueue (result unused); group: for clr_group_run (the checks of
 * clr_run, and no queue, scratch, status or run_count). */
static clr_status read_request(clr_context *ctx, const clr_request *r,
                               int enqueue, int group, const clr_value *result,
                               request *q) {
  char why[CLR_DETAIL_SIZE - 16];
  const clr_request defaults = CLR_REQUEST_INIT;
  q->r = defaults;
  if (!r)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "no request (NULL)");
  clr_status st =
      clr_struct_size_check(&request_layout, r->struct_size, why, sizeof why);
  if (st != CLR_OK)
    return clr_fail(ctx, st, "%s", why);
  if (r->struct_size < REQUEST_FIRST_SIZE)
    return clr_fail(ctx, CLR_ERR_VERSION,
                    "clr_request.struct_size is %u bytes, less than the "
                    "first clr_request's %zu: no clreduce header's struct",
                    (unsigned)r->struct_size, (size_t)REQUEST_FIRST_SIZE);
  clr_struct_fields_copy(&q->r, r, r->struct_size);
  const clr_request *c = &q->r;
  if ((unsigned)c->kind >= CLR_REQ_KIND_COUNT)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "unknown request kind %d",
                    (int)c->kind);
  q->row = &kinds[c->kind];
  const char *kind = q->row->name;
  unsigned takes = q->row->takes;
  if (group) {
    /* A group runs each part on its device's context and queue, with the
     * contexts' own scratch, and returns its status itself. */
    const char *field =
        c->queue ? "queue"
        : given(&c->scratch) || c->scratch.offset || c->scratch_bytes
            ? "scratch"
        : given(&c->status) || c->status.offset       ? "status"
        : given(&c->run_count) || c->run_count.offset ? "run_count"
                                                      : NULL;
    if (field)
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "a group's %s request takes no %s (each device runs "
                      "its part on its own context): leave it as "
                      "clr_request_init sets it",
                      kind, field);
  }
  if (c->type == CLR_TYPE_DEFAULT)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "a %s request's type is not set (CLR_TYPE_DEFAULT): "
                    "give the elements' type",
                    kind);
  if (!clr_type_info(c->type))
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "a %s request's type %d is no type", kind, (int)c->type);
  if (c->kind == CLR_REQ_DOT && c->op != CLR_SUM)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "a dot request sums x * y: its op is CLR_SUM, not '%s'",
                    clr_op_name(c->op));
  /* The keys' parts come together. */
  if (takes & TAKES_KEYS) {
    if (c->key_type == CLR_TYPE_DEFAULT)
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "a %s request needs key_type (the keys' type)", kind);
    if (!clr_type_info(c->key_type))
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "a %s request's key_type %d is no type", kind,
                      (int)c->key_type);
    if (!enqueue && !c->n_runs)
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "a %s request needs n_runs (where the number of runs "
                      "goes)",
                      kind);
    if (enqueue && c->n_runs)
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "clr_enqueue writes a %s request's number of runs on "
                      "the device, to run_count: leave n_runs NULL",
                      kind);
    if (enqueue && !given(&c->run_count))
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "clr_enqueue of a %s request needs run_count (the "
                      "buffer the number of runs goes to)",
                      kind);
  } else if (c->key_type != CLR_TYPE_DEFAULT || c->n_runs) {
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "a %s request takes no %s (leave it as clr_request_init "
                    "sets it)",
                    kind, c->n_runs ? "n_runs" : "key_type");
  }
  if (takes & TAKES_SHAPE) {
    if (c->n)
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "a %s request gives its size in rows and cols: leave n "
                      "0",
                      kind);
  } else if (c->rows || c->cols || c->pitch || c->axis) {
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "a %s request takes no rows, cols, pitch or axis (a "
                    "matrix's: leave them 0)",
                    kind);
  }
  if (!(takes & TAKES_N_SEGMENTS) && c->n_segments)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "a %s request takes no n_segments%s", kind,
                    c->kind == CLR_REQ_SCAN_HEADS
                        ? " (its heads are n flag bytes)"
                        : (c->kind == CLR_REQ_BY_KEY
                               ? " (its runs are counted into n_runs)"
                               : ""));
  /* The options, read as the driver will read them: the output's size. */
  st = clr_options_take(ctx, c->options, &q->opt);
  if (st != CLR_OK)
    return st;
  /* A reduction writes its value to result, or (clr_enqueue, or clr_run
   * given an output) to a buffer. */
  int reduction = (takes & TAKES_RESULT) != 0;
  int out_required = (takes & TAKES_OUTPUT) && (!reduction || enqueue);
  char seg_name[32] = "segments";
  if (q->row->segments)
    snprintf(seg_name, sizeof seg_name, "segments (the %s)", q->row->segments);
  const struct {
    const clr_operand *o;
    const char *name;
    int takes, required;
  } ops[] = {
      {&c->input, "input", 1, 1},
      {&c->input2, "input2 (a dot product's y)", (takes & TAKES_INPUT2) != 0,
       (takes & TAKES_INPUT2) != 0},
      {&c->segments, seg_name, (takes & TAKES_SEGMENTS) != 0,
       (takes & TAKES_SEGMENTS) != 0},
      {&c->output, "output", (takes & TAKES_OUTPUT) != 0, out_required},
      {&c->output_keys, "output_keys (the runs' keys)",
       (takes & TAKES_KEYS) != 0, (takes & TAKES_KEYS) != 0},
  };
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    st = check_operand(ctx, q, ops[i].o, ops[i].name, ops[i].takes,
                       ops[i].required);
    if (st != CLR_OK)
      return st;
  }
  /* Host arrays or buffers, never both. */
  q->host = c->input.host != NULL;
  for (size_t i = 1; i < sizeof ops / sizeof ops[0]; i++)
    if (given(ops[i].o) && (ops[i].o->host != NULL) != q->host)
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "a %s request's operands are all host arrays or all "
                      "buffers: input is a %s, %s a %s",
                      kind, q->host ? "host array" : "buffer", ops[i].name,
                      q->host ? "buffer" : "host array");
  st = check_later_fields(ctx, q, enqueue);
  if (st != CLR_OK)
    return st;
  if (reduction && given(&c->output)) {
    if (q->host)
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "a %s request with an output takes buffers: its result "
                      "is written to element output.offset of "
                      "output.buffer",
                      kind);
    if (!enqueue && result)
      return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                      "a %s request with an output writes its result there: "
                      "pass result NULL",
                      kind);
  } else if (!enqueue && reduction && !result) {
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "a %s request returns a value: result must not be NULL "
                    "(or give an output buffer)",
                    kind);
  } else if (!enqueue && !reduction && result) {
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "a %s request writes its output and returns no value: "
                    "pass result NULL",
                    kind);
  }
  return CLR_OK;
}

/* ------------------------------------------------------------ dispatch */

static clr_status enqueue_request(clr_context *ctx, const request *q,
                                  cl_uint num_events, const cl_event *wait_list,
                                  cl_event *event);

/* A reduction or dot product into an output buffer under clr_run:
 * clr_enqueue's work, waited for; beside an out-of-order queue after the
 * caller's commands there, as every blocking call. */
static clr_status run_into_buffer(clr_context *ctx, const request *q) {
  cl_event ev = NULL;
  if (ctx->caller_queue) {
    cl_int err = clFinish(ctx->caller_queue);
    if (err != CL_SUCCESS)
      return clr_fail(ctx, clr_status_from_cl(err),
                      "clFinish of the caller's queue (waiting for its "
                      "commands enqueued before this call) failed: %s "
                      "(%d)",
                      clr_cl_error_name(err), (int)err);
  }
  clr_status st = enqueue_request(ctx, q, 0, NULL, &ev);
  if (st == CLR_OK) {
    cl_int err = clWaitForEvents(1, &ev);
    if (err != CL_SUCCESS)
      st = clr_cl_fail(ctx, "clWaitForEvents", err);
  }
  if (ev)
    clReleaseEvent(ev);
  return st;
}

/* The buffers the request's driver reserves (scratch_refusal passed),
 * planned in a call's frame (its kernels built, nothing enqueued). */
static clr_status plan_scratch(clr_context *ctx, const request *q,
                               clr_scratch_plan *sp) {
  const clr_request *r = &q->r;
  clr_async none;
  memset(sp, 0, sizeof *sp);
  clr_begin_async_call(ctx, &none, 0, NULL, NULL);
  ctx->async_call = 0;
  switch (r->kind) {
  case CLR_REQ_BY_KEY:
    return clr_by_key_scratch(ctx, r->options, r->op, r->key_type, r->type,
                              r->n, sp);
  case CLR_REQ_SCAN:
    return clr_scan_scratch(ctx, r->options, r->op, r->type, r->input.offset,
                            r->output.offset, r->n, sp);
  case CLR_REQ_REDUCE:
  case CLR_REQ_DOT:
    return clr_reduce_scratch(ctx, r->options, r->op, r->type, r->input.buffer,
                              r->input.offset,
                              r->kind == CLR_REQ_DOT ? r->input2.buffer : NULL,
                              r->input2.offset, r->n, given(&r->output), sp);
  case CLR_REQ_SEGMENTS:
    return clr_segments_scratch(ctx, r->options, r->op, r->type, r->n,
                                r->n_segments, sp);
  case CLR_REQ_RANGES:
    return clr_ranges_scratch(ctx, r->options, r->op, r->type, r->n,
                              r->n_segments, sp);
  case CLR_REQ_SCAN_SEGMENTS:
  case CLR_REQ_SCAN_HEADS:
    return clr_sscan_scratch(ctx, r->options, r->op, r->type, r->n,
                             r->kind == CLR_REQ_SCAN_SEGMENTS, r->n_segments,
                             sp);
  case CLR_REQ_MATRIX:
    return clr_matrix_scratch(ctx, r->options, r->op, r->type, r->input.buffer,
                              r->input.offset, r->rows, r->cols, r->pitch,
                              r->axis, r->output.buffer, r->output.offset, sp);
  default:
    break;
  }
  return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                  "a %s request takes no caller scratch", q->row->name);
}

/* The request's scratch, when it has one, made the context's arena for
 * the call: planned, then checked against scratch_bytes and the buffer. */
static clr_status enter_scratch(clr_context *ctx, const request *q,
                                clr_arena *a, int *entered) {
  const clr_request *r = &q->r;
  clr_scratch_plan sp;
  *entered = 0;
  if (!given(&r->scratch) || ctx->arena)
    return CLR_OK;
  clr_status st = plan_scratch(ctx, q, &sp);
  if (st == CLR_OK)
    st = clr_check_buffer_elems(ctx, r->scratch.buffer, r->scratch.offset,
                                r->scratch_bytes, 1,
                                CLR_ACCESS_READ | CLR_ACCESS_WRITE, "scratch");
  if (st == CLR_OK)
    st = clr_arena_enter(ctx, a, &sp, r->scratch.buffer, r->scratch.offset,
                         r->scratch_bytes);
  *entered = st == CLR_OK;
  return st;
}

static clr_status run_kind(clr_context *ctx, const request *q,
                           clr_value *result);

/* The blocking call, in the request's scratch where it gives one. */
static clr_status run_request(clr_context *ctx, const request *q,
                              clr_value *result) {
  clr_arena arena;
  int entered;
  clr_status st = enter_scratch(ctx, q, &arena, &entered);
  if (st == CLR_OK)
    st = run_kind(ctx, q, result);
  if (entered)
    clr_arena_leave(ctx, &arena);
  return st;
}

/* The blocking call of the request's kind, through the driver's entry
 * point: the call's begin, checks, work and end are the driver's. */
static clr_status run_kind(clr_context *ctx, const request *q,
                           clr_value *result) {
  const clr_request *r = &q->r;
  const clr_options *opt = r->options;
  const clr_operand *in = &r->input, *in2 = &r->input2, *seg = &r->segments,
                    *out = &r->output, *keys = &r->output_keys;
  const void *hin = host_at(q, in), *hseg = host_at(q, seg);
  void *hout = (void *)host_at(q, out), *hkeys = (void *)host_at(q, keys);
  switch (r->kind) {
  case CLR_REQ_REDUCE:
    if (given(out))
      return run_into_buffer(ctx, q);
    return q->host
               ? clr_reduce_host(ctx, opt, r->op, r->type, hin, r->n, result)
               : clr_reduce_buffer(ctx, opt, r->op, r->type, in->buffer,
                                   in->offset, r->n, result);
  case CLR_REQ_DOT:
    if (given(out))
      return run_into_buffer(ctx, q);
    return q->host ? clr_dot_host(ctx, opt, r->type, hin, host_at(q, in2), r->n,
                                  result)
                   : clr_dot_buffer(ctx, opt, r->type, in->buffer, in->offset,
                                    in2->buffer, in2->offset, r->n, result);
  case CLR_REQ_SCAN:
    return q->host ? clr_scan_host(ctx, opt, r->op, r->type, hin, hout, r->n)
                   : clr_scan_buffer_range(ctx, opt, r->op, r->type, in->buffer,
                                           in->offset, out->buffer, out->offset,
                                           r->n);
  case CLR_REQ_SEGMENTS:
    return q->host ? clr_reduce_segments_host(ctx, opt, r->op, r->type, hin,
                                              r->n, hseg, r->n_segments, hout)
                   : clr_reduce_segments_buffer(
                         ctx, opt, r->op, r->type, in->buffer, in->offset, r->n,
                         seg->buffer, seg->offset, r->n_segments, out->buffer,
                         out->offset);
  case CLR_REQ_RANGES:
    return q->host
               ? clr_reduce_ranges_host(ctx, opt, r->op, r->type, hin, r->n,
                                        hseg, r->n_segments, hout)
               : clr_reduce_ranges_buffer(ctx, opt, r->op, r->type, in->buffer,
                                          in->offset, r->n, seg->buffer,
                                          seg->offset, r->n_segments,
                                          out->buffer, out->offset);
  case CLR_REQ_BY_KEY:
    return q->host ? clr_reduce_by_key_host(ctx, opt, r->op, r->key_type, hseg,
                                            r->type, hin, r->n, hkeys, hout,
                                            r->n_runs)
                   : clr_reduce_by_key_buffer(
                         ctx, opt, r->op, r->key_type, seg->buffer, seg->offset,
                         r->type, in->buffer, in->offset, r->n, keys->buffer,
                         keys->offset, out->buffer, out->offset, r->n_runs);
  case CLR_REQ_SCAN_SEGMENTS:
    return q->host
               ? clr_scan_segments_host(ctx, opt, r->op, r->type, hin, hout,
                                        r->n, hseg, r->n_segments)
               : clr_scan_segments_buffer(ctx, opt, r->op, r->type, in->buffer,
                                          in->offset, out->buffer, out->offset,
                                          r->n, seg->buffer, seg->offset,
                                          r->n_segments);
  case CLR_REQ_SCAN_HEADS:
    return q->host ? clr_scan_heads_host(ctx, opt, r->op, r->type, hin, hout,
                                         r->n, hseg)
                   : clr_scan_heads_buffer(ctx, opt, r->op, r->type, in->buffer,
                                           in->offset, out->buffer, out->offset,
                                           r->n, seg->buffer, seg->offset);
  case CLR_REQ_MATRIX:
    return clr_matrix_call(ctx, opt, r->op, r->type, hin, in->buffer,
                           in->offset, r->rows, r->cols, r->pitch, r->axis,
                           hout, out->buffer, out->offset);
  case CLR_REQ_KIND_COUNT:
    break;
  }
  return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "unknown request kind %d",
                  (int)r->kind);
}

/* What clr_enqueue takes: the kinds whose drivers run without a host
 * sync (CLR_ERR_UNSUPPORTED naming the kind and what blocks otherwise),
 * on buffers. */
static clr_status check_enqueue(clr_context *ctx, const request *q) {
  if (q->row->blocks)
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                    "clr_enqueue cannot run a %s request yet (%s): use "
                    "clr_run",
                    q->row->name, q->row->blocks);
  if (q->host)
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                    "clr_enqueue takes buffers: a %s request of host arrays "
                    "copies them and reads them back on the host (use "
                    "clr_run)",
                    q->row->name);
  return CLR_OK;
}

static clr_status enqueue_kind(clr_context *ctx, const request *q,
                               cl_uint num_events, const cl_event *wait_list,
                               cl_event *event);

/* The asynchronous call, in the request's scratch where it gives one
 * (already the context's under clr_run). */
static clr_status enqueue_request(clr_context *ctx, const request *q,
                                  cl_uint num_events, const cl_event *wait_list,
                                  cl_event *event) {
  clr_arena arena;
  int entered;
  clr_status st = enter_scratch(ctx, q, &arena, &entered);
  if (st == CLR_OK)
    st = enqueue_kind(ctx, q, num_events, wait_list, event);
  if (entered)
    clr_arena_leave(ctx, &arena);
  return st;
}

/* The asynchronous call of the request's kind (check_enqueue passed, or
 * clr_run's reduction or dot product into a buffer). */
static clr_status enqueue_kind(clr_context *ctx, const request *q,
                               cl_uint num_events, const cl_event *wait_list,
                               cl_event *event) {
  const clr_request *r = &q->r;
  const clr_operand *in = &r->input, *in2 = &r->input2, *seg = &r->segments,
                    *out = &r->output, *status = &r->status;
  switch (r->kind) {
  case CLR_REQ_REDUCE:
    return clr_reduce_buffer_async(ctx, r->options, r->op, r->type, in->buffer,
                                   in->offset, r->n, out->buffer, out->offset,
                                   num_events, wait_list, event);
  case CLR_REQ_DOT:
    return clr_dot_buffer_async(ctx, r->options, r->type, in->buffer,
                                in->offset, in2->buffer, in2->offset, r->n,
                                out->buffer, out->offset, num_events, wait_list,
                                event);
  case CLR_REQ_BY_KEY:
    return clr_reduce_by_key_enqueue(
        ctx, r->options, r->op, r->key_type, seg->buffer, seg->offset, r->type,
        in->buffer, in->offset, r->n, r->output_keys.buffer,
        r->output_keys.offset, out->buffer, out->offset, r->run_count.buffer,
        r->run_count.offset, num_events, wait_list, event);
  case CLR_REQ_SCAN:
    return clr_scan_buffer_async(ctx, r->options, r->op, r->type, in->buffer,
                                 in->offset, out->buffer, out->offset, r->n,
                                 num_events, wait_list, event);
  case CLR_REQ_MATRIX:
    return clr_matrix_enqueue(ctx, r->options, r->op, r->type, in->buffer,
                              in->offset, r->rows, r->cols, r->pitch, r->axis,
                              out->buffer, out->offset, num_events, wait_list,
                              event);
  case CLR_REQ_SCAN_HEADS:
    return clr_scan_heads_buffer_async(
        ctx, r->options, r->op, r->type, in->buffer, in->offset, out->buffer,
        out->offset, r->n, seg->buffer, seg->offset, num_events, wait_list,
        event);
  case CLR_REQ_SEGMENTS:
    return clr_segments_enqueue(
        ctx, r->options, r->op, r->type, in->buffer, in->offset, r->n,
        seg->buffer, seg->offset, r->n_segments, out->buffer, out->offset,
        status->buffer, status->offset, num_events, wait_list, event);
  case CLR_REQ_RANGES:
    return clr_ranges_enqueue(
        ctx, r->options, r->op, r->type, in->buffer, in->offset, r->n,
        seg->buffer, seg->offset, r->n_segments, out->buffer, out->offset,
        r->status.buffer, r->status.offset, num_events, wait_list, event);
  case CLR_REQ_SCAN_SEGMENTS:
    return clr_scan_segments_enqueue(
        ctx, r->options, r->op, r->type, in->buffer, in->offset, out->buffer,
        out->offset, r->n, seg->buffer, seg->offset, r->n_segments,
        status->buffer, status->offset, num_events, wait_list, event);
  default:
    break;
  }
  return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                  "clr_enqueue cannot run a %s request", q->row->name);
}

CLR_API clr_status clr_run(clr_context *ctx, const clr_request *r,
                           clr_value *result) {
  request q;
  clr_queue_scope scope;
  if (!ctx)
    return CLR_ERR_INVALID_ARGUMENT;
  clr_status st = read_request(ctx, r, 0, 0, result, &q);
  if (st == CLR_OK)
    st = clr_queue_enter(ctx, q.r.queue, &scope);
  if (st != CLR_OK)
    return st;
  return clr_queue_leave(ctx, &scope, run_request(ctx, &q, result));
}

CLR_API clr_status clr_enqueue(clr_context *ctx, const clr_request *r,
                               cl_uint num_events, const cl_event *wait_list,
                               cl_event *event) {
  request q;
  clr_queue_scope scope;
  if (event)
    *event = NULL;
  if (!ctx)
    return CLR_ERR_INVALID_ARGUMENT;
  clr_status st = read_request(ctx, r, 1, 0, NULL, &q);
  if (st == CLR_OK)
    st = check_enqueue(ctx, &q);
  if (st == CLR_OK)
    st = clr_queue_enter(ctx, q.r.queue, &scope);
  if (st != CLR_OK)
    return st;
  st = enqueue_request(ctx, &q, num_events, wait_list, event);
  clr_status left = clr_queue_leave(ctx, &scope, st);
  if (st == CLR_OK && left != CLR_OK && event && *event) {
    /* the call failed after all (its queue could not be handed back):
     * no event for the caller to release */
    clReleaseEvent(*event);
    *event = NULL;
  }
  return left;
}

clr_status clr_request_read_for_group(clr_context *ctx, const clr_request *r,
                                      const clr_value *result, clr_request *out,
                                      int *host) {
  request q;
  clr_status st = read_request(ctx, r, 0, 1, result, &q);
  if (st != CLR_OK)
    return st;
  clr_operand *ops[] = {&q.r.input, &q.r.input2, &q.r.segments, &q.r.output,
                        &q.r.output_keys};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (ops[i]->host) {
      ops[i]->host = host_at(&q, ops[i]);
      ops[i]->offset = 0;
    }
  *out = q.r;
  *host = q.host;
  return CLR_OK;
}

CLR_API clr_status clr_request_scratch_size(clr_context *ctx,
                                            const clr_request *r,
                                            size_t *bytes) {
  request q;
  clr_scratch_plan sp;
  clr_value unused;
  if (!ctx)
    return CLR_ERR_INVALID_ARGUMENT;
  if (bytes)
    *bytes = 0;
  if (!bytes)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "bytes must not be NULL");
  if (!r)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "no request (NULL)");
  /* Read as the call that takes it would read it: clr_enqueue's when the
   * request names what only clr_enqueue takes (run_count, status); a
   * reduction without output as clr_run's returning a value. */
  clr_request probe;
  clr_request_init(&probe);
  memcpy(&probe, r,
         r->struct_size && r->struct_size < sizeof probe ? r->struct_size
                                                         : sizeof probe);
  int enqueue = given(&probe.run_count) || given(&probe.status);
  int value = !enqueue && !given(&probe.output) &&
              (probe.kind == CLR_REQ_REDUCE || probe.kind == CLR_REQ_DOT);
  clr_status st = read_request(ctx, r, enqueue, 0, value ? &unused : NULL, &q);
  const char *no = st == CLR_OK ? scratch_refusal(&q) : NULL;
  if (no)
    return clr_fail(ctx, CLR_ERR_UNSUPPORTED,
                    "a %s request takes no caller scratch (%s)", q.row->name,
                    no);
  if (st == CLR_OK)
    st = plan_scratch(ctx, &q, &sp);
  if (st == CLR_OK && sp.overflow)
    st = clr_fail(ctx, CLR_ERR_OPENCL,
                  "internal: a call's scratch plan has more than %d buffers",
                  CLR_SCRATCH_SLOTS);
  if (st == CLR_OK)
    *bytes = clr_scratch_total(&sp, clr_scratch_align(ctx));
  return st;
}
