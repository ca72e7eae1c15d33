/* The queue of one call (see queue.c). */
#ifndef CLR_QUEUE_H
#define CLR_QUEUE_H

#include "internal.h"

/* The context's queues and profiling, kept while a call runs on a queue
 * of its own and given back by clr_queue_leave. */
typedef struct clr_queue_scope {
  cl_command_queue queue, caller_queue;
  int profiling;
  int active; /* the context's queues are swapped for the call's */
} clr_queue_scope;

/* Run the next call on q (NULL, or a queue the context already uses:
 * nothing changes).  q must be a queue of the context's cl_context and
 * device, else CLR_ERR_INVALID_ARGUMENT with a detail.  An in-order q
 * becomes the queue every command of the call goes to (ctx->queue), after
 * the commands already on the context's queue (a marker there, a barrier
 * on q: no host wait), with q's profiling; an out-of-order q is taken as
 * clr_context_create_from_queue takes one: the call waits for it (or for
 * its wait list) and runs on the context's in-order queue.  CLR_OK with
 * *s filled for clr_queue_leave, or a failure recorded (nothing changed). */
clr_status clr_queue_enter(clr_context *ctx, cl_command_queue q,
                           clr_queue_scope *s);
/* The context back on its own queue, after the call's commands (a marker
 * on the call's queue, a barrier on the context's; if that fails, a host
 * wait for the call's queue).  Returns st, or when st is CLR_OK the
 * failure of the hand-over (recorded). */
clr_status clr_queue_leave(clr_context *ctx, clr_queue_scope *s, clr_status st);

#endif
