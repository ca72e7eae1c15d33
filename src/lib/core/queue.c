/* The queue of one call: clr_run and clr_enqueue may name a queue of the
 * caller's for the call, and the context runs the call there, then
 * returns to its own.  Done once, here, by swapping the context's queue
 * (ctx->queue, the queue every command of a call goes to; clr_queue) for
 * the call's: the drivers and the call's frame (call.c) need no change.
 *
 * The context's buffers (partials, the decoupled scan's state, the
 * staging pools) are used by its commands in queue order, so its commands
 * on two queues must stay one sequence: on the way to the call's queue
 * and back, a marker on the queue left and a barrier on the queue taken
 * (waiting for the marker) order them on the device, with no host wait. */
#include "queue.h"

#include <string.h>

/* Every command enqueued on `to` from now on runs after every command
 * already on `from` (both in order).  CLR_OK or a failure recorded. */
static clr_status hand_over(clr_context *ctx, cl_command_queue from,
                            cl_command_queue to) {
  cl_event mark = NULL;
  cl_int err = clEnqueueMarkerWithWaitList(from, 0, NULL, &mark);
  if (err != CL_SUCCESS)
    return clr_cl_fail(ctx, "clEnqueueMarkerWithWaitList", err);
  /* (submitted: a command of another queue that waits for it must not
   * wait for a flush that never comes) */
  clr_status st = CLR_OK;
  err = clFlush(from);
  if (err != CL_SUCCESS)
    st = clr_cl_fail(ctx, "clFlush", err);
  if (st == CLR_OK) {
    err = clEnqueueBarrierWithWaitList(to, 1, &mark, NULL);
    if (err != CL_SUCCESS)
      st = clr_cl_fail(ctx, "clEnqueueBarrierWithWaitList", err);
  }
  clReleaseEvent(mark);
  return st;
}

/* The refusal of a queue that is none of the context's kind. */
static clr_status bad_queue(clr_context *ctx, const char *why, cl_int err) {
  if (err != CL_SUCCESS)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "the request's queue could not be queried (%s: %s, %d): "
                    "no command queue",
                    why, clr_cl_error_name(err), (int)err);
  return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                  "the request's queue is a queue of another %s than the "
                  "context's: a call's queue shares the context's "
                  "cl_context and device",
                  why);
}

clr_status clr_queue_enter(clr_context *ctx, cl_command_queue q,
                           clr_queue_scope *s) {
  memset(s, 0, sizeof *s);
  if (!q || q == ctx->queue || q == ctx->caller_queue)
    return CLR_OK; /* the context's own */
  cl_context qcl = NULL;
  cl_device_id qdev = NULL;
  cl_command_queue_properties props = 0;
  cl_int err =
      clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof qcl, &qcl, NULL);
  if (err != CL_SUCCESS)
    return bad_queue(ctx, "CL_QUEUE_CONTEXT", err);
  if (qcl != ctx->cl)
    return bad_queue(ctx, "cl_context", CL_SUCCESS);
  err = clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof qdev, &qdev, NULL);
  if (err != CL_SUCCESS)
    return bad_queue(ctx, "CL_QUEUE_DEVICE", err);
  if (qdev != ctx->device)
    return bad_queue(ctx, "device", CL_SUCCESS);
  err =
      clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
  if (err != CL_SUCCESS)
    return bad_queue(ctx, "CL_QUEUE_PROPERTIES", err);
  s->queue = ctx->queue;
  s->caller_queue = ctx->caller_queue;
  s->profiling = ctx->profiling;
  if (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) {
    /* As an adopted out-of-order queue: the commands stay on the
     * context's in-order queue; a blocking call waits for q first
     * (clr_begin_call), an asynchronous one for its wait list. */
    ctx->caller_queue = q;
    s->active = 1;
    return CLR_OK;
  }
  clr_status st = hand_over(ctx, ctx->queue, q);
  if (st != CLR_OK)
    return st;
  ctx->queue = q;
  ctx->caller_queue = NULL; /* q orders the caller's commands */
  ctx->profiling = (props & CL_QUEUE_PROFILING_ENABLE) != 0;
  s->active = 1;
  return CLR_OK;
}

clr_status clr_queue_leave(clr_context *ctx, clr_queue_scope *s,
                           clr_status st) {
  if (!s->active)
    return st;
  cl_command_queue call = ctx->queue;
  ctx->queue = s->queue;
  ctx->caller_queue = s->caller_queue;
  ctx->profiling = s->profiling;
  s->active = 0;
  if (call == ctx->queue)
    return st; /* an out-of-order queue's call ran on the context's */
  /* A failed call keeps its own detail, whatever the hand-over says. */
  char kept[CLR_DETAIL_SIZE];
  memcpy(kept, ctx->detail, sizeof kept);
  clr_status back = hand_over(ctx, call, ctx->queue);
  if (back != CLR_OK) {
    /* The context's next commands must not overtake the call's: wait
     * for them on the host. */
    cl_int err = clFinish(call);
    if (err != CL_SUCCESS)
      back = clr_cl_fail(ctx, "clFinish", err);
  }
  if (st != CLR_OK) {
    memcpy(ctx->detail, kept, sizeof kept);
    return st;
  }
  return back;
}
