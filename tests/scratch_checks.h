/* What the caller-scratch tests share (test_async_by_key.c,
 * test_scratch.c): OpenCL calls that must succeed, a buffer operand,
 * reading bytes back, a buffer's reference count once the runtime has let
 * go of it, and the device's base address alignment (a scratch start
 * must be a multiple of it). */
#ifndef CLR_TESTS_SCRATCH_CHECKS_H
#define CLR_TESTS_SCRATCH_CHECKS_H

#include "internal.h"
#include "test_util.h"

#include <CL/cl.h>
#include <unistd.h>

static TU_UNUSED void expect_cl(cl_int err, const char *what) {
  if (err != CL_SUCCESS)
    tu_die("%s failed: %d", what, (int)err);
}

static TU_UNUSED clr_operand buf_op(cl_mem m, size_t offset) {
  clr_operand o = {NULL, m, offset};
  return o;
}

static TU_UNUSED void read_bytes(clr_context *ctx, cl_mem m, size_t at,
                                 size_t bytes, void *dst) {
  expect_cl(clEnqueueReadBuffer(clr_context_queue(ctx), m, CL_TRUE, at, bytes,
                                dst, 0, NULL, NULL),
            "clEnqueueReadBuffer");
}

static TU_UNUSED cl_uint ref_count(cl_mem m) {
  cl_uint c = 0;
  expect_cl(clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof c, &c, NULL),
            "clGetMemObjectInfo");
  return c;
}

/* m's reference count once the runtime has let go of finished commands:
 * PoCL releases a command's buffers just after clFinish returns (a
 * millisecond or so), so up to a few seconds are given for it. */
static TU_UNUSED cl_uint settled_refs(cl_mem m) {
  for (int i = 0; i < 3000 && ref_count(m) != 1; i++)
    usleep(1000);
  return ref_count(m);
}

/* CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes. */
static TU_UNUSED size_t base_align(clr_context *ctx) {
  cl_uint bits = 0;
  expect_cl(clGetDeviceInfo(ctx->device, CL_DEVICE_MEM_BASE_ADDR_ALIGN,
                            sizeof bits, &bits, NULL),
            "clGetDeviceInfo");
  return bits >= 8 ? bits / 8 : 1;
}

#endif
