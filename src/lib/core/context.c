/* The opaque context: device, OpenCL context and queue, resolved kernel
 * and cache directories, built programs, reusable buffers, the last
 * call's timing and the detail of the last failure. */
#include "binary_cache.h"
#include "internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup_string(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p)
    memcpy(p, s, n);
  return p;
}

/* Explicit configuration, then $CLREDUCE_KERNEL_DIR (no fallback past an
 * explicit choice, so a wrong path is reported, not papered over), then the
 * sources built into the library (-Dembed_kernels=true), else the
 * installed directory, found even in a moved prefix (install_paths.c). */
static char *resolve_kernel_dir(const char *configured) {
  char dir[4096];
  if (configured && *configured)
    return dup_string(configured);
  const char *env = getenv("CLREDUCE_KERNEL_DIR");
  if (env && *env)
    return dup_string(env);
#if CLR_EMBEDDED_KERNELS
  return dup_string(CLR_EMBEDDED_KERNEL_DIR);
#endif
  clr_installed_dir("cl", "common.cl", dir, sizeof dir);
  return dup_string(dir);
}

static void set_detail(char *detail, size_t size, const char *msg) {
  if (detail && size) {
    snprintf(detail, size, "%s", msg);
  }
}

/* ---- the caller's structs, by their struct_size (include/clreduce.h,
 * "sized structs") */

static const clr_field_span config_fields[] = {
    CLR_FIELD_SPAN(clr_context_config, platform),
    CLR_FIELD_SPAN(clr_context_config, device),
    CLR_FIELD_SPAN(clr_context_config, kernel_dir),
    CLR_FIELD_SPAN(clr_context_config, cache_dir),
    CLR_FIELD_SPAN(clr_context_config, log),
    CLR_FIELD_SPAN(clr_context_config, log_user),
    CLR_FIELD_SPAN(clr_context_config, copy_host_data),
    CLR_FIELD_SPAN(clr_context_config, max_chunk_bytes),
    CLR_FIELD_SPAN(clr_context_config, no_profiling),
};
/* A field added to clr_context_config goes at its end, and into the
 * table. */
_Static_assert(CLR_IS_LAST_FIELD(clr_context_config, no_profiling),
               "no_profiling is clr_context_config's last field: "
               "config_fields lists them all");
static const clr_struct_layout config_layout = {
    "clr_context_config",
    "call clr_context_config_init, or use CLR_CONTEXT_CONFIG_INIT",
    sizeof(clr_context_config), config_fields,
    sizeof config_fields / sizeof config_fields[0]};

clr_status clr_config_read(const clr_context_config *cfg,
                           clr_context_config *copy, char *why,
                           size_t why_size) {
  clr_context_config_init(copy);
  if (!cfg)
    return CLR_OK;
  clr_status st =
      clr_struct_size_check(&config_layout, cfg->struct_size, why, why_size);
  if (st == CLR_OK)
    clr_struct_fields_copy(copy, cfg, cfg->struct_size);
  return st;
}

CLR_API clr_status clr_context_config_copy(const clr_context_config *cfg,
                                           clr_context_config *out,
                                           char *detail, size_t detail_size) {
  char why[CLR_DETAIL_SIZE];
  clr_context_config full;
  clr_status st = CLR_ERR_INVALID_ARGUMENT;
  snprintf(why, sizeof why, "clr_context_config_copy: out is NULL");
  if (out)
    st = clr_struct_size_check(&config_layout, out->struct_size, why,
                               sizeof why);
  if (st == CLR_OK)
    st = clr_config_read(cfg, &full, why, sizeof why);
  if (st == CLR_OK) {
    clr_struct_fields_copy(out, &full, out->struct_size);
    why[0] = '\0';
  }
  set_detail(detail, detail_size, why);
  return st;
}

/* The clr_cache_* calls: the config read, then the cache's own. */
CLR_API clr_status clr_cache_dir(const clr_context_config *config, char *buf,
                                 size_t size) {
  clr_context_config c;
  char why[CLR_DETAIL_SIZE];
  clr_status st = clr_config_read(config, &c, why, sizeof why);
  if (st == CLR_OK)
    return clr_cache_dir_of(c.cache_dir, buf, size);
  if (buf && size)
    buf[0] = '\0';
  return st;
}

CLR_API clr_status clr_cache_usage(const clr_context_config *config,
                                   uint64_t *entries, uint64_t *bytes,
                                   uint64_t *max_bytes, char *detail,
                                   size_t detail_size) {
  clr_context_config c;
  char why[CLR_DETAIL_SIZE];
  clr_status st = clr_config_read(config, &c, why, sizeof why);
  if (st == CLR_OK)
    return clr_cache_usage_of(c.cache_dir, entries, bytes, max_bytes, detail,
                              detail_size);
  set_detail(detail, detail_size, why);
  return st;
}

CLR_API clr_status clr_cache_clear(const clr_context_config *config,
                                   uint64_t *removed, uint64_t *bytes,
                                   char *detail, size_t detail_size) {
  clr_context_config c;
  char why[CLR_DETAIL_SIZE];
  clr_status st = clr_config_read(config, &c, why, sizeof why);
  if (st == CLR_OK)
    return clr_cache_clear_of(c.cache_dir, removed, bytes, detail, detail_size);
  set_detail(detail, detail_size, why);
  return st;
}

static const clr_field_span timing_fields[] = {
    CLR_FIELD_SPAN(clr_timing, kernel_ms),
    CLR_FIELD_SPAN(clr_timing, h2d_ms),
    CLR_FIELD_SPAN(clr_timing, d2h_ms),
    CLR_FIELD_SPAN(clr_timing, build_ms),
    CLR_FIELD_SPAN(clr_timing, total_ms),
    CLR_FIELD_SPAN(clr_timing, chunks),
    CLR_FIELD_SPAN(clr_timing, n_passes),
    CLR_FIELD_SPAN(clr_timing, error_depth),
};
_Static_assert(CLR_IS_LAST_FIELD(clr_timing, error_depth),
               "error_depth is clr_timing's last field: timing_fields lists "
               "them all");
static const clr_struct_layout timing_layout = {
    "clr_timing", "use CLR_TIMING_INIT", sizeof(clr_timing), timing_fields,
    sizeof timing_fields / sizeof timing_fields[0]};

static const clr_field_span pass_fields[] = {
    CLR_FIELD_SPAN(clr_pass_info, n_in),
    CLR_FIELD_SPAN(clr_pass_info, global_size),
    CLR_FIELD_SPAN(clr_pass_info, local_size),
    CLR_FIELD_SPAN(clr_pass_info, ms),
    CLR_FIELD_SPAN(clr_pass_info, folds),
};
_Static_assert(CLR_IS_LAST_FIELD(clr_pass_info, folds),
               "folds is clr_pass_info's last field: pass_fields lists them "
               "all");
static const clr_struct_layout pass_layout = {
    "clr_pass_info", "use CLR_PASS_INFO_INIT", sizeof(clr_pass_info),
    pass_fields, sizeof pass_fields / sizeof pass_fields[0]};

/* The device query of a type's native vector width, by its row's kind and
 * size. */
static cl_device_info native_width_info(clr_type t) {
  const clr_type_row *r = clr_type_info(t);
  if (r->kind != CLR_KIND_FLOAT)
    return r->size == 8 ? CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG
                        : CL_DEVICE_NATIVE_VECTOR_WIDTH_INT;
  return r->size == 8   ? CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE
         : r->size == 2 ? CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF
                        : CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT;
}

/* Common tail of both constructors: ctx has platform, device, cl, queue. */
static clr_status finish_context(clr_context *ctx,
                                 const clr_context_config *cfg, char *detail,
                                 size_t detail_size) {
  cl_command_queue_properties props = 0;
  cl_int err =
      clr_describe_device(ctx->platform, ctx->device, 0, 0, &ctx->desc);
  if (err != CL_SUCCESS) {
    /* Without its memory and work-group limits the device is unusable. */
    snprintf(detail, detail_size, "clGetDeviceInfo failed: %s (%d)",
             clr_cl_error_name(err), (int)err);
    return clr_status_from_cl(err);
  }
  /* Keep the real platform / device indices for display. */
  clr_device_indices(ctx->platform, ctx->device, &ctx->desc.platform_index,
                     &ctx->desc.device_index);
  for (int t = 0; t < CLR_TYPE_COUNT; t++) {
    cl_uint w = 0;
    if (clGetDeviceInfo(ctx->device, native_width_info((clr_type)t), sizeof w,
                        &w, NULL) != CL_SUCCESS ||
        w == 0)
      w = 1;
    ctx->native_vec[t] = w;
  }
  cl_ulong cache = 0;
  if (clGetDeviceInfo(ctx->device, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE,
                      sizeof cache, &cache, NULL) == CL_SUCCESS)
    ctx->cache_bytes = cache;
  cl_bool unified = CL_FALSE;
  if (clGetDeviceInfo(ctx->device, CL_DEVICE_HOST_UNIFIED_MEMORY,
                      sizeof unified, &unified, NULL) == CL_SUCCESS)
    ctx->host_unified = unified == CL_TRUE;
  if (cfg && cfg->copy_host_data)
    ctx->host_unified = 0;
  if (cfg)
    ctx->max_chunk_bytes = cfg->max_chunk_bytes;
  size_t ext_len = 0;
  if (clGetDeviceInfo(ctx->device, CL_DEVICE_EXTENSIONS, 0, NULL, &ext_len) ==
          CL_SUCCESS &&
      ext_len > 0) {
    char *ext = malloc(ext_len + 1);
    if (ext && clGetDeviceInfo(ctx->device, CL_DEVICE_EXTENSIONS, ext_len, ext,
                               NULL) == CL_SUCCESS) {
      ext[ext_len] = '\0';
      ctx->int64_atomics = strstr(ext, "cl_khr_int64_base_atomics") != NULL;
    }
    free(ext);
  }
  if (clGetCommandQueueInfo(ctx->queue, CL_QUEUE_PROPERTIES, sizeof props,
                            &props, NULL) == CL_SUCCESS)
    ctx->profiling = (props & CL_QUEUE_PROFILING_ENABLE) != 0;
  ctx->kernel_dir = resolve_kernel_dir(cfg ? cfg->kernel_dir : NULL);
  char cache_dir[CLR_CACHE_DIR_MAX]; /* "": the on-disk cache disabled */
  if (clr_cache_dir_resolve(cfg ? cfg->cache_dir : NULL, cache_dir))
    ctx->cache_dir = dup_string(cache_dir);
  if (cfg) {
    ctx->log = cfg->log;
    ctx->log_user = cfg->log_user;
  }
  if (!ctx->kernel_dir || (cache_dir[0] && !ctx->cache_dir)) {
    set_detail(detail, detail_size, "out of host memory");
    return CLR_ERR_OUT_OF_MEMORY;
  }
  clr_load_tuning(ctx);
  return CLR_OK;
}

/* msg := "<what> failed: <error name> (<code>)"; returns err's status. */
static clr_status creation_failed(char *msg, size_t size, const char *what,
                                  cl_int err) {
  snprintf(msg, size, "%s failed: %s (%d)", what, clr_cl_error_name(err),
           (int)err);
  return clr_status_from_cl(err);
}

/* A new, zeroed context, or NULL with the reason in detail. */
static clr_context *new_context(clr_context **out, char *detail,
                                size_t detail_size, const char *null_out) {
  if (!out) {
    set_detail(detail, detail_size, null_out);
    return NULL;
  }
  *out = NULL;
  clr_context *ctx = calloc(1, sizeof *ctx);
  if (!ctx)
    set_detail(detail, detail_size, "out of host memory");
  else
    clr_pinned_init(ctx);
  return ctx;
}

/* The common end of both constructors: when st is CLR_OK, finish the
 * context and hand it over; otherwise (or if finishing fails) release it
 * and say why. */
static clr_status hand_over(clr_context *ctx, const clr_context_config *cfg,
                            clr_status st, char *msg, size_t msg_size,
                            clr_context **out, char *detail,
                            size_t detail_size) {
  if (st == CLR_OK)
    st = finish_context(ctx, cfg, msg, msg_size);
  if (st == CLR_OK) {
    *out = ctx;
    return CLR_OK;
  }
  set_detail(detail, detail_size, msg[0] ? msg : clr_status_string(st));
  clr_context_release(ctx);
  return st;
}

/* The caller's config read (clr_config_read) into *copy, cfg pointed at
 * it; a refusal said in detail, *out NULL. */
static clr_status take_config(const clr_context_config **cfg,
                              clr_context_config *copy, clr_context **out,
                              char *detail, size_t detail_size) {
  char why[CLR_DETAIL_SIZE];
  clr_status st = clr_config_read(*cfg, copy, why, sizeof why);
  *cfg = copy;
  if (st != CLR_OK) {
    set_detail(detail, detail_size, why);
    if (out)
      *out = NULL;
  }
  return st;
}

CLR_API clr_status clr_context_create(const clr_context_config *cfg,
                                      clr_context **out, char *detail,
                                      size_t detail_size) {
  char msg[CLR_DETAIL_SIZE] = "";
  cl_int err = CL_SUCCESS;
  clr_context_config copy;
  clr_status read = take_config(&cfg, &copy, out, detail, detail_size);
  if (read != CLR_OK)
    return read;
  clr_context *ctx =
      new_context(out, detail, detail_size, "clr_context_create: out is NULL");
  if (!ctx)
    return out ? CLR_ERR_OUT_OF_MEMORY : CLR_ERR_INVALID_ARGUMENT;
  clr_status st =
      clr_select_device(cfg ? cfg->platform : NULL, cfg ? cfg->device : NULL,
                        &ctx->platform, &ctx->device, msg, sizeof msg);
  if (st == CLR_OK) {
    ctx->cl = clCreateContext(NULL, 1, &ctx->device, NULL, NULL, &err);
    if (err != CL_SUCCESS)
      st = creation_failed(msg, sizeof msg, "clCreateContext", err);
  }
  if (st == CLR_OK) {
    ctx->queue = clCreateCommandQueue(
        ctx->cl, ctx->device,
        cfg && cfg->no_profiling ? 0 : CL_QUEUE_PROFILING_ENABLE, &err);
    if (err != CL_SUCCESS)
      st = creation_failed(msg, sizeof msg, "clCreateCommandQueue", err);
  }
  return hand_over(ctx, cfg, st, msg, sizeof msg, out, detail, detail_size);
}

CLR_API clr_status clr_context_create_from_queue(cl_command_queue queue,
                                                 const clr_context_config *cfg,
                                                 clr_context **out,
                                                 char *detail,
                                                 size_t detail_size) {
  char msg[CLR_DETAIL_SIZE] = "";
  cl_command_queue_properties props = 0;
  clr_context_config copy;
  clr_status read = take_config(&cfg, &copy, out, detail, detail_size);
  if (read != CLR_OK)
    return read;
  if (!queue) {
    set_detail(detail, detail_size,
               "clr_context_create_from_queue: NULL argument");
    return CLR_ERR_INVALID_ARGUMENT;
  }
  clr_context *ctx = new_context(out, detail, detail_size,
                                 "clr_context_create_from_queue: NULL "
                                 "argument");
  if (!ctx)
    return out ? CLR_ERR_OUT_OF_MEMORY : CLR_ERR_INVALID_ARGUMENT;
  clr_status st = CLR_OK;
  cl_int err = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof ctx->cl,
                                     &ctx->cl, NULL);
  if (err == CL_SUCCESS)
    err = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof ctx->device,
                                &ctx->device, NULL);
  if (err == CL_SUCCESS)
    err = clGetDeviceInfo(ctx->device, CL_DEVICE_PLATFORM, sizeof ctx->platform,
                          &ctx->platform, NULL);
  if (err == CL_SUCCESS)
    err = clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof props,
                                &props, NULL);
  if (err != CL_SUCCESS) {
    creation_failed(msg, sizeof msg, "clGetCommandQueueInfo", err);
    ctx->cl = NULL;
    return hand_over(ctx, cfg, CLR_ERR_INVALID_ARGUMENT, msg, sizeof msg, out,
                     detail, detail_size);
  }
  /* Retain both so release is symmetric with clr_context_create. */
  clRetainContext(ctx->cl);
  clRetainCommandQueue(queue);
  ctx->queue = queue;
  if (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) {
    /* The library's passes depend on each other, and nothing on such a
     * queue orders them.  They run on an in-order queue of the context's
     * own (profiling as the caller's); each call waits for the caller's
     * queue first and finishes its own before returning (clr_begin_call,
     * clr_end_call). */
    ctx->caller_queue = queue;
    ctx->queue = clCreateCommandQueue(ctx->cl, ctx->device,
                                      props & CL_QUEUE_PROFILING_ENABLE, &err);
    if (err != CL_SUCCESS) {
      ctx->queue = NULL;
      st = creation_failed(msg, sizeof msg,
                           "clCreateCommandQueue (in-order, beside the "
                           "caller's out-of-order queue)",
                           err);
    }
  }
  return hand_over(ctx, cfg, st, msg, sizeof msg, out, detail, detail_size);
}

void clr_buffer_release(clr_buffer *buf) {
  if (buf->mem)
    clReleaseMemObject(buf->mem);
  buf->mem = NULL;
  buf->bytes = 0;
}

/* 1 while the last asynchronous call's commands are not all complete
 * (they may wait for events the caller completes later). */
static int async_pending(const clr_context *ctx) {
  cl_int status = CL_COMPLETE;
  if (!ctx->async_tail ||
      clGetEventInfo(ctx->async_tail, CL_EVENT_COMMAND_EXECUTION_STATUS,
                     sizeof status, &status, NULL) != CL_SUCCESS)
    return 0;
  return status > CL_COMPLETE; /* queued, submitted or running */
}

CLR_API void clr_context_release(clr_context *ctx) {
  if (!ctx)
    return;
  /* Blocking calls have finished when they return; asynchronous ones may
   * still wait for the caller's events: release never waits for those
   * (OpenCL keeps what their commands use until they complete), else it
   * waits for the queue as before. */
  if (ctx->queue && !async_pending(ctx))
    clFinish(ctx->queue);
  else if (ctx->queue)
    clFlush(ctx->queue);
  if (ctx->async_tail)
    clReleaseEvent(ctx->async_tail);
  clr_release_programs(ctx);
  clr_pinned_release(ctx);
  clr_buffer_release(&ctx->input);
  clr_buffer_release(&ctx->input2);
  clr_buffer_release(&ctx->output);
  for (int i = 0; i < 2; i++) {
    clr_buffer_release(&ctx->partial[i]);
    clr_buffer_release(&ctx->aux[i]);
  }
  for (int i = 0; i < CLR_MAX_SCAN_LEVELS; i++)
    clr_buffer_release(&ctx->scan_levels[i]);
  for (int i = 0; i < 3; i++)
    clr_buffer_release(&ctx->lookback[i]);
  clr_buffer_release(&ctx->carry);
  clr_buffer_release(&ctx->tile_bounds);
  clr_buffer_release(&ctx->ticket);
  clr_buffer_release(&ctx->fold_slots);
  if (ctx->queue)
    clReleaseCommandQueue(ctx->queue);
  if (ctx->caller_queue)
    clReleaseCommandQueue(ctx->caller_queue);
  if (ctx->cl)
    clReleaseContext(ctx->cl);
  free(ctx->kernel_dir);
  free(ctx->cache_dir);
  free(ctx->build_log);
  free(ctx);
}

CLR_API clr_status clr_context_device(const clr_context *ctx,
                                      clr_device_desc *out) {
  if (!ctx || !out)
    return CLR_ERR_INVALID_ARGUMENT;
  *out = ctx->desc;
  return CLR_OK;
}

CLR_API cl_context clr_context_cl_context(const clr_context *ctx) {
  return ctx ? ctx->cl : NULL;
}

CLR_API cl_command_queue clr_context_queue(const clr_context *ctx) {
  if (!ctx)
    return NULL;
  return ctx->caller_queue ? ctx->caller_queue : ctx->queue;
}

CLR_API const char *clr_context_error(const clr_context *ctx) {
  return ctx ? ctx->detail : "no context (NULL)";
}

CLR_API const char *clr_context_build_log(const clr_context *ctx) {
  return ctx && ctx->build_log ? ctx->build_log : "";
}

CLR_API const char *clr_context_kernel_dir(const clr_context *ctx) {
  return ctx && ctx->kernel_dir ? ctx->kernel_dir : "";
}

CLR_API clr_status clr_last_timing(const clr_context *ctx, clr_timing *out) {
  char why[8];
  if (!ctx || !out)
    return CLR_ERR_INVALID_ARGUMENT;
  clr_status st =
      clr_struct_size_check(&timing_layout, out->struct_size, why, sizeof why);
  if (st != CLR_OK)
    return st;
  const clr_call_timing *r = &ctx->last_timing;
  clr_timing t = CLR_TIMING_INIT;
  t.kernel_ms = r->kernel_ms;
  t.h2d_ms = r->h2d_ms;
  t.d2h_ms = r->d2h_ms;
  t.build_ms = r->build_ms;
  t.total_ms = r->total_ms;
  t.chunks = r->chunks;
  t.n_passes = r->n_passes;
  t.error_depth = r->error_depth;
  clr_struct_fields_copy(out, &t, out->struct_size);
  return CLR_OK;
}

CLR_API clr_status clr_last_timing_pass(const clr_context *ctx, size_t i,
                                        clr_pass_info *out) {
  char why[8];
  if (!ctx || !out)
    return CLR_ERR_INVALID_ARGUMENT;
  clr_status st =
      clr_struct_size_check(&pass_layout, out->struct_size, why, sizeof why);
  if (st != CLR_OK)
    return st;
  if (i >= ctx->last_timing.n_passes || i >= CLR_MAX_PASSES)
    return CLR_ERR_INVALID_ARGUMENT;
  clr_pass_info p = ctx->last_timing.passes[i];
  p.struct_size = (uint32_t)sizeof p;
  clr_struct_fields_copy(out, &p, out->struct_size);
  return CLR_OK;
}

clr_status clr_buffer_reserve(clr_context *ctx, clr_buffer *buf, size_t bytes,
                              cl_mem_flags flags) {
  cl_int err;
  if (bytes == 0)
    bytes = 1;
  if (ctx->arena) /* a caller's scratch: a slot of it (scratch.c) */
    return clr_arena_reserve(ctx, buf, bytes);
  if (buf->mem && buf->bytes >= bytes)
    return CLR_OK;
  clr_buffer_release(buf);
  if (bytes > ctx->desc.max_alloc_size)
    return clr_fail(ctx, CLR_ERR_OUT_OF_MEMORY,
                    "buffer of %zu bytes exceeds the device's largest "
                    "allocation (%llu bytes)",
                    bytes, (unsigned long long)ctx->desc.max_alloc_size);
  buf->mem = clCreateBuffer(ctx->cl, flags, bytes, NULL, &err);
  if (err != CL_SUCCESS) {
    buf->mem = NULL;
    return clr_cl_fail(ctx, "clCreateBuffer", err);
  }
  buf->bytes = bytes;
  ctx->scratch_allocs++;
  return CLR_OK;
}

clr_status clr_zero_buffers(clr_context *ctx, clr_buffer *const *bufs,
                            size_t count) {
  /* Copied from a buffer of zeros, not clEnqueueFillBuffer: Oclgrind's
   * --uninitialized does not count a fill's writes.  The zeros' buffer is
   * released at once; OpenCL keeps it until the copies have run. */
  size_t most = 0;
  for (size_t i = 0; i < count; i++)
    most = bufs[i]->bytes > most ? bufs[i]->bytes : most;
  void *zeros = calloc(1, most ? most : 1);
  if (!zeros)
    return clr_fail(ctx, CLR_ERR_OUT_OF_MEMORY, "out of host memory");
  cl_int err;
  const char *what = "clCreateBuffer";
  cl_mem zmem = clCreateBuffer(ctx->cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                               most ? most : 1, zeros, &err);
  free(zeros);
  for (size_t i = 0; i < count && err == CL_SUCCESS; i++) {
    what = "clEnqueueCopyBuffer";
    err = clEnqueueCopyBuffer(ctx->queue, zmem, bufs[i]->mem, 0, 0,
                              bufs[i]->bytes, 0, NULL, NULL);
  }
  if (zmem)
    clReleaseMemObject(zmem);
  if (err == CL_SUCCESS)
    return CLR_OK;
  for (size_t i = 0; i < count; i++)
    clr_buffer_release(bufs[i]);
  return clr_cl_fail(ctx, what, err);
}
