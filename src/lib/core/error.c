/* The bottom of the library: OpenCL error names, the one mapping of an
 * OpenCL error to a clr_status, the failure detail kept on the context and
 * the optional log.  It includes nothing of the library but internal.h;
 * every other unit reports through it. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *clr_cl_error_name(cl_int err) {
  switch (err) {
#define E(x)                                                                   \
  case x:                                                                      \
    return #x;
    E(CL_SUCCESS)
    E(CL_DEVICE_NOT_FOUND)
    E(CL_DEVICE_NOT_AVAILABLE)
    E(CL_COMPILER_NOT_AVAILABLE)
    E(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    E(CL_OUT_OF_RESOURCES)
    E(CL_OUT_OF_HOST_MEMORY)
    E(CL_PROFILING_INFO_NOT_AVAILABLE)
    E(CL_MEM_COPY_OVERLAP)
    E(CL_BUILD_PROGRAM_FAILURE)
    E(CL_MAP_FAILURE)
    E(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    E(CL_COMPILE_PROGRAM_FAILURE)
    E(CL_LINKER_NOT_AVAILABLE)
    E(CL_LINK_PROGRAM_FAILURE)
    E(CL_INVALID_VALUE)
    E(CL_INVALID_DEVICE_TYPE)
    E(CL_INVALID_PLATFORM)
    E(CL_INVALID_DEVICE)
    E(CL_INVALID_CONTEXT)
    E(CL_INVALID_QUEUE_PROPERTIES)
    E(CL_INVALID_COMMAND_QUEUE)
    E(CL_INVALID_HOST_PTR)
    E(CL_INVALID_MEM_OBJECT)
    E(CL_INVALID_BINARY)
    E(CL_INVALID_BUILD_OPTIONS)
    E(CL_INVALID_PROGRAM)
    E(CL_INVALID_PROGRAM_EXECUTABLE)
    E(CL_INVALID_KERNEL_NAME)
    E(CL_INVALID_KERNEL)
    E(CL_INVALID_ARG_INDEX)
    E(CL_INVALID_ARG_VALUE)
    E(CL_INVALID_ARG_SIZE)
    E(CL_INVALID_KERNEL_ARGS)
    E(CL_INVALID_WORK_DIMENSION)
    E(CL_INVALID_WORK_GROUP_SIZE)
    E(CL_INVALID_WORK_ITEM_SIZE)
    E(CL_INVALID_GLOBAL_OFFSET)
    E(CL_INVALID_EVENT_WAIT_LIST)
    E(CL_INVALID_EVENT)
    E(CL_INVALID_OPERATION)
    E(CL_INVALID_BUFFER_SIZE)
    E(CL_INVALID_GLOBAL_WORK_SIZE)
    E(CL_INVALID_PROPERTY)
#undef E
  case -1001:
    return "CL_PLATFORM_NOT_FOUND_KHR";
  default:
    return "CL_UNKNOWN_ERROR";
  }
}

clr_status clr_status_from_cl(cl_int err) {
  if (err == CL_SUCCESS)
    return CLR_OK;
  if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_HOST_MEMORY ||
      err == CL_OUT_OF_RESOURCES || err == CL_INVALID_BUFFER_SIZE)
    return CLR_ERR_OUT_OF_MEMORY;
  return CLR_ERR_OPENCL;
}

clr_status clr_cl_fail(clr_context *ctx, const char *what, cl_int err) {
  clr_status st = clr_status_from_cl(err);
  if (st == CLR_OK)
    st = CLR_ERR_OPENCL; /* a caller's misuse: failing with CL_SUCCESS */
  /* Keep the call's name only: "clEnqueueNDRangeKernel(...)" -> name. */
  size_t len = strcspn(what, "(");
  return clr_fail(ctx, st, "%.*s failed: %s (%d)", (int)len, what,
                  clr_cl_error_name(err), (int)err);
}

clr_status clr_fail(clr_context *ctx, clr_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ctx->detail, sizeof ctx->detail, fmt, ap);
  va_end(ap);
  return status;
}

void clr_log(clr_context *ctx, const char *fmt, ...) {
  char line[512];
  va_list ap;
  if (!ctx->log)
    return;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  ctx->log(ctx->log_user, line);
}
