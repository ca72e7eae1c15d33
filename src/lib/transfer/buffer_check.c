/* Buffers the caller hands in, checked before any command uses them.
 *
 * A cl_mem of another cl_context, an image, a buffer the kernels may not
 * write (or read), or a range past the buffer's end would otherwise reach
 * the driver, where the outcome is undefined: a wrong answer, a crash, or
 * nothing written. */
#include "internal.h"

clr_status clr_check_buffer(clr_context *ctx, cl_mem mem, size_t offset,
                            size_t n, clr_type type, unsigned access,
                            const char *what) {
  return clr_check_buffer_elems(ctx, mem, offset, n, clr_type_size(type),
                                access, what);
}

clr_status clr_check_buffer_elems(clr_context *ctx, cl_mem mem, size_t offset,
                                  size_t n, size_t esize, unsigned access,
                                  const char *what) {
  cl_mem_object_type mtype = 0;
  cl_context owner = NULL;
  cl_mem_flags flags = 0;
  size_t size = 0;
  if (!mem)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT, "%s must not be NULL", what);
  cl_int err = clGetMemObjectInfo(mem, CL_MEM_TYPE, sizeof mtype, &mtype, NULL);
  if (err == CL_SUCCESS)
    err = clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof owner, &owner, NULL);
  if (err == CL_SUCCESS)
    err = clGetMemObjectInfo(mem, CL_MEM_FLAGS, sizeof flags, &flags, NULL);
  if (err == CL_SUCCESS)
    err = clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof size, &size, NULL);
  if (err == CL_INVALID_MEM_OBJECT)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "%s is not a valid cl_mem (CL_INVALID_MEM_OBJECT)", what);
  if (err != CL_SUCCESS)
    return clr_cl_fail(ctx, "clGetMemObjectInfo", err);
  if (mtype != CL_MEM_OBJECT_BUFFER)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "%s is not a buffer (cl_mem object type 0x%x)", what,
                    (unsigned)mtype);
  if (owner != ctx->cl)
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "%s belongs to another cl_context than the library "
                    "context's (clr_context_cl_context)",
                    what);
  if ((access & CLR_ACCESS_WRITE) && (flags & CL_MEM_READ_ONLY))
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "%s is CL_MEM_READ_ONLY, but this call writes it", what);
  if ((access & CLR_ACCESS_READ) && (flags & CL_MEM_WRITE_ONLY))
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "%s is CL_MEM_WRITE_ONLY, but this call reads it", what);
  /* offset + n may overflow: compare against what is left instead. */
  if (esize && (offset > size / esize || n > size / esize - offset))
    return clr_fail(ctx, CLR_ERR_INVALID_ARGUMENT,
                    "%s: elements [%zu, %zu + %zu) of %zu bytes each exceed "
                    "its %zu bytes",
                    what, offset, offset, n, esize, size);
  return CLR_OK;
}
