/* A caller's scratch memory (clr_request.scratch, clr_request_scratch_size):
 * the buffers a call reserves (clr_buffer_reserve, clr_temp_buffer) cut
 * from the caller's buffer instead of the context's own.  A driver plans
 * its slots (clr_scratch_need: the most bytes each takes in the call);
 * clr_arena_enter puts the context's planned buffers aside, each slot then
 * a sub-buffer of the caller's at the device's base address alignment, made
 * on first use; clr_arena_leave releases them and gives the context its
 * buffers and the state kept with them (the decoupled scan's and the single
 * launch's epochs and tickets) back.  Nothing of the caller's is kept. */
#include "internal.h"

#include <string.h>

/* clr_buffer_release's work (context.c is below this unit). */
static void drop(clr_buffer *b) {
  if (b->mem)
    clReleaseMemObject(b->mem);
  b->mem = NULL;
  b->bytes = 0;
}

void clr_scratch_need(clr_scratch_plan *p, const void *slot, size_t bytes) {
  if (bytes == 0)
    bytes = 1; /* as clr_buffer_reserve */
  for (size_t i = 0; i < p->count; i++)
    if (p->slot[i] == slot) {
      if (bytes > p->bytes[i])
        p->bytes[i] = bytes;
      return;
    }
  if (p->count == CLR_SCRATCH_SLOTS) {
    p->overflow = 1;
    return;
  }
  p->slot[p->count] = slot;
  p->bytes[p->count++] = bytes;
}

static size_t round_up(size_t x, size_t a) {
  return x % a ? x + (a - x % a) : x;
}

size_t clr_scratch_total(const clr_scratch_plan *p, size_t align) {
  size_t total = 0;
  for (size_t i = 0; i < p->count; i++) {
    size_t b = round_up(p->bytes[i], align);
    if (b < p->bytes[i] || total > SIZE_MAX - b)
      return SIZE_MAX;
    total += b;
  }
  return total;
}

size_t clr_scratch_align(clr_context *ctx) {
  cl_uint bits = 0;
  if (clGetDeviceInfo(ctx->device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits,
                      &bits, NULL) != CL_SUCCESS ||
      bits < 8)
    return 128; /* the largest built-in type, OpenCL's least alignment */
  return bits / 8;
}

/* The slot of p naming slot, or p->count. */
static size_t slot_of(const clr_scratch_plan *p, const void *slot) {
  size_t i = 0;
  while (i < p->count && p->slot[i] != slot)
    i++;
  return i;
}

/* Whether slot is a clr_buffer of the context (else a driver's tag). */
static int is_context_buffer(const clr_context *ctx, const void *slot) {
  const char *c = (const char *)ctx, *s = slot;
  return s >= c && s < c + sizeof *ctx;
}

clr_status clr_arena_enter(clr_context *ctx, clr_arena *a,
                           const clr_scratch_plan *plan, cl_mem buffer,
                           size_t offset, size_t bytes) {
  memset(a, 0, sizeof *a);
  if (plan->overflow)
    return clr_fail(ctx, CLR_ERR_OPENCL,
                    "internal: a call's scratch plan has more than %d "
                    "buffers",
                    CLR_SCRATCH_SLOTS);
  a->plan = *plan;
  a->align = clr_scratch_align(ctx);
  size_t need = clr_scratch_total(plan, a->align);
  if (bytes < need)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "scratch_bytes is %zu, less than the %zu bytes this "
                    "request needs (clr_request_scratch_size)",
                    bytes, need);
  /* A sub-buffer's parent is no buffer to cut sub-buffers from: its
   * parent is, from the sub-buffer's origin. */
  cl_mem parent = NULL;
  size_t origin = 0;
  cl_int err = clGetMemObjectInfo(buffer, CL_MEM_ASSOCIATED_MEMOBJECT,
                                  sizeof parent, &parent, NULL);
  if (err == CL_SUCCESS && parent)
    err =
        clGetMemObjectInfo(buffer, CL_MEM_OFFSET, sizeof origin, &origin, NULL);
  if (err != CL_SUCCESS)
    return clr_cl_fail(ctx, "clGetMemObjectInfo", err);
  a->root = parent ? parent : buffer;
  a->base = origin + offset;
  if (need && a->base % a->align)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "scratch starts at byte %zu of its buffer, not a "
                    "multiple of the device's base address alignment (%zu "
                    "bytes): give a scratch.offset that is",
                    a->base, a->align);
  size_t at = a->base;
  for (size_t i = 0; i < plan->count; i++) {
    a->at[i] = at;
    at += round_up(plan->bytes[i], a->align);
  }
  /* The context's planned buffers put aside: a reserve finds none and
   * takes its slot; state kept with them saved, and made fresh. */
  for (size_t i = 0; i < plan->count; i++)
    if (is_context_buffer(ctx, plan->slot[i])) {
      clr_buffer *b = (clr_buffer *)(uintptr_t)plan->slot[i];
      a->kept[i] = *b;
      b->mem = NULL;
      b->bytes = 0;
    }
  a->scan_ticket = ctx->scan_ticket;
  a->scan_epoch = ctx->scan_epoch;
  a->fold_epoch = ctx->fold_epoch;
  a->ticket_ready = ctx->ticket_ready;
  a->scan_slots = ctx->scan_slots;
  ctx->ticket_ready = 0;
  ctx->arena = a;
  return CLR_OK;
}

void clr_arena_leave(clr_context *ctx, clr_arena *a) {
  if (ctx->arena != a)
    return;
  for (size_t i = 0; i < a->plan.count; i++) {
    if (is_context_buffer(ctx, a->plan.slot[i])) {
      clr_buffer *b = (clr_buffer *)(uintptr_t)a->plan.slot[i];
      drop(b); /* its reference to the slot, if any */
      *b = a->kept[i];
    }
    if (a->sub[i])
      clReleaseMemObject(a->sub[i]);
    a->sub[i] = NULL;
  }
  ctx->scan_ticket = a->scan_ticket;
  ctx->scan_epoch = a->scan_epoch;
  ctx->fold_epoch = a->fold_epoch;
  ctx->ticket_ready = a->ticket_ready;
  ctx->scan_slots = a->scan_slots;
  ctx->arena = NULL;
}

/* Slot i's sub-buffer, made on first use; bytes checked against the
 * plan. */
static clr_status arena_slot(clr_context *ctx, const void *slot, size_t bytes,
                             cl_mem *mem) {
  clr_arena *a = ctx->arena;
  size_t i = slot_of(&a->plan, slot);
  if (bytes == 0)
    bytes = 1;
  if (i == a->plan.count)
    return clr_fail(ctx, CLR_ERR_OPENCL,
                    "internal: a call reserved a buffer (%zu bytes) its "
                    "scratch plan does not name",
                    bytes);
  if (bytes > a->plan.bytes[i])
    return clr_fail(ctx, CLR_ERR_OPENCL,
                    "internal: a call reserved %zu bytes where its scratch "
                    "plan has %zu",
                    bytes, a->plan.bytes[i]);
  if (!a->sub[i]) {
    cl_buffer_region region = {a->at[i], a->plan.bytes[i]};
    cl_int err;
    a->sub[i] = clCreateSubBuffer(a->root, 0, CL_BUFFER_CREATE_TYPE_REGION,
                                  &region, &err);
    if (err != CL_SUCCESS) {
      a->sub[i] = NULL;
      return clr_cl_fail(ctx, "clCreateSubBuffer", err);
    }
  }
  *mem = a->sub[i];
  return CLR_OK;
}

clr_status clr_arena_reserve(clr_context *ctx, clr_buffer *buf, size_t bytes) {
  cl_mem mem = NULL;
  clr_status st = arena_slot(ctx, buf, bytes, &mem);
  if (st != CLR_OK)
    return st;
  size_t i = slot_of(&ctx->arena->plan, buf);
  if (buf->mem != mem) {
    drop(buf);
    cl_int err = clRetainMemObject(mem);
    if (err != CL_SUCCESS)
      return clr_cl_fail(ctx, "clRetainMemObject", err);
    buf->mem = mem;
  }
  buf->bytes = ctx->arena->plan.bytes[i];
  return CLR_OK;
}

clr_status clr_temp_buffer(clr_context *ctx, const void *tag, size_t bytes,
                           cl_mem *mem) {
  cl_int err;
  *mem = NULL;
  if (ctx->arena) {
    cl_mem m = NULL;
    clr_status st = arena_slot(ctx, tag, bytes, &m);
    if (st != CLR_OK)
      return st;
    err = clRetainMemObject(m);
    if (err != CL_SUCCESS)
      return clr_cl_fail(ctx, "clRetainMemObject", err);
    *mem = m;
    return CLR_OK;
  }
  if (bytes > ctx->desc.max_alloc_size)
    return clr_fail(ctx, CLR_ERR_OUT_OF_MEMORY,
                    "buffer of %zu bytes exceeds the device's largest "
                    "allocation (%llu bytes)",
                    bytes, (unsigned long long)ctx->desc.max_alloc_size);
  *mem =
      clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE, bytes ? bytes : 1, NULL, &err);
  if (err != CL_SUCCESS) {
    *mem = NULL;
    return clr_cl_fail(ctx, "clCreateBuffer", err);
  }
  ctx->scratch_allocs++;
  return CLR_OK;
}
