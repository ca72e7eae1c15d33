/* Status codes, OpenCL error names, and the names of types, operations and
 * kernels. */
#include "clr_config.h"
#include "internal.h"

#include <stdio.h>
#include <string.h>

CLR_API const char *clr_status_name(clr_status s) {
  switch (s) {
#define CLR_X_NAME(name, msg)                                                  \
  case name:                                                                   \
    return #name;
    CLR_STATUS_MAP(CLR_X_NAME)
#undef CLR_X_NAME
  default:
    return "CLR_ERR_UNKNOWN";
  }
}

CLR_API const char *clr_status_string(clr_status s) {
  switch (s) {
#define CLR_X_MSG(name, msg)                                                   \
  case name:                                                                   \
    return msg;
    CLR_STATUS_MAP(CLR_X_MSG)
#undef CLR_X_MSG
  default:
    return "unknown status";
  }
}

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

clr_status clr_cl_fail(clr_context *ctx, const char *what, cl_int err) {
  clr_status st = CLR_ERR_OPENCL;
  if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_HOST_MEMORY ||
      err == CL_OUT_OF_RESOURCES || err == CL_INVALID_BUFFER_SIZE)
    st = CLR_ERR_OUT_OF_MEMORY;
  /* Keep the call's name only: "clEnqueueNDRangeKernel(...)" -> name. */
  size_t len = strcspn(what, "(");
  return clr_fail(ctx, st, "%.*s failed: %s (%d)", (int)len, what,
                  clr_cl_error_name(err), (int)err);
}

static const char *const type_names[CLR_TYPE_COUNT] = {
    "float", "double", "int", "uint", "long", "ulong"};
static const size_t type_sizes[CLR_TYPE_COUNT] = {4, 8, 4, 4, 8, 8};
static const char *const op_names[CLR_OP_COUNT] = {"sum", "prod", "min",
                                                   "max", "and",  "or"};
static const char *const kernel_names[CLR_KERNEL_COUNT] = {
    "interleaved", "sequential",     "first-add",  "coarse",
    "kogge-stone", "kogge-stone-db", "brent-kung", "decoupled"};

CLR_API const char *clr_type_name(clr_type t) {
  return (unsigned)t < CLR_TYPE_COUNT ? type_names[t] : "?";
}
CLR_API size_t clr_type_size(clr_type t) {
  return (unsigned)t < CLR_TYPE_COUNT ? type_sizes[t] : 0;
}
CLR_API const char *clr_op_name(clr_op op) {
  return (unsigned)op < CLR_OP_COUNT ? op_names[op] : "?";
}
CLR_API const char *clr_kernel_name(clr_kernel k) {
  return (unsigned)k < CLR_KERNEL_COUNT ? kernel_names[k] : "?";
}

static int lookup(const char *s, const char *const *names, int count) {
  if (!s)
    return -1;
  for (int i = 0; i < count; i++)
    if (strcmp(s, names[i]) == 0)
      return i;
  return -1;
}

CLR_API clr_status clr_type_from_name(const char *s, clr_type *out) {
  int i = lookup(s, type_names, CLR_TYPE_COUNT);
  if (i < 0 || !out)
    return CLR_ERR_INVALID_ARGUMENT;
  *out = (clr_type)i;
  return CLR_OK;
}
CLR_API clr_status clr_op_from_name(const char *s, clr_op *out) {
  int i = lookup(s, op_names, CLR_OP_COUNT);
  if (i < 0 || !out)
    return CLR_ERR_INVALID_ARGUMENT;
  *out = (clr_op)i;
  return CLR_OK;
}
CLR_API clr_status clr_kernel_from_name(const char *s, clr_kernel *out) {
  int i = lookup(s, kernel_names, CLR_KERNEL_COUNT);
  if (i < 0 || !out)
    return CLR_ERR_INVALID_ARGUMENT;
  *out = (clr_kernel)i;
  return CLR_OK;
}

CLR_API int clr_kernel_is_scan(clr_kernel k) {
  return k >= CLR_SCAN_KOGGE_STONE && k < CLR_KERNEL_COUNT;
}

int clr_type_is_float(clr_type t) { return t == CLR_FLOAT || t == CLR_DOUBLE; }

CLR_API clr_type clr_result_type(clr_op op, clr_type t, int narrow) {
  if (op == CLR_AND || op == CLR_OR)
    return CLR_INT;
  if ((op == CLR_SUM || op == CLR_PROD) && !narrow) {
    if (t == CLR_INT)
      return CLR_LONG;
    if (t == CLR_UINT)
      return CLR_ULONG;
  }
  return t;
}

CLR_API clr_status clr_op_supports(clr_op op, clr_type t) {
  if ((unsigned)op >= CLR_OP_COUNT || (unsigned)t >= CLR_TYPE_COUNT)
    return CLR_ERR_INVALID_ARGUMENT;
  if ((op == CLR_AND || op == CLR_OR) && clr_type_is_float(t))
    return CLR_ERR_UNSUPPORTED;
  return CLR_OK;
}

CLR_API clr_status clr_kernel_supports(clr_kernel k, clr_op op, clr_type t) {
  clr_status st = clr_op_supports(op, t);
  if (st != CLR_OK || (unsigned)k >= CLR_KERNEL_COUNT)
    return st != CLR_OK ? st : CLR_ERR_INVALID_ARGUMENT;
  if (clr_kernel_is_scan(k) && (op == CLR_AND || op == CLR_OR))
    return CLR_ERR_UNSUPPORTED;
  return CLR_OK;
}

CLR_API void clr_options_init(clr_options *o) {
  if (!o)
    return;
  memset(o, 0, sizeof *o);
  o->kernel = CLR_REDUCE_COARSE;
  o->layout = CLR_LAYOUT_AUTO;
}

CLR_API const char *clr_version(void) { return CLR_VERSION; }
