/* clr_reduce_buffer: device buffers the caller owns, at element offsets,
 * with poison values outside [offset, offset + n) that would change the
 * answer if read; the buffer must be left unchanged.  Also contexts made
 * around the caller's own queue (clr_context_create_from_queue), with and
 * without profiling, and out-of-range / NULL arguments. */
#include "test_util.h"

typedef struct op_type {
  clr_op op;
  clr_type type;
  tu_variant variant;
} op_type;

static const op_type cases[] = {
    {CLR_SUM, CLR_FLOAT, TU_EXACT},   {CLR_SUM, CLR_INT, TU_RANDOM},
    {CLR_PROD, CLR_LONG, TU_RANDOM},  {CLR_MIN, CLR_FLOAT, TU_RANDOM},
    {CLR_MAX, CLR_DOUBLE, TU_RANDOM}, {CLR_MAX, CLR_UINT, TU_RANDOM},
    {CLR_AND, CLR_LONG, TU_BASE},     {CLR_OR, CLR_ULONG, TU_PLANT_MID},
};
#define N_CASES (sizeof cases / sizeof cases[0])

/* A value that changes op's result over the data if it were read. */
static void poison(clr_op op, clr_type t, void *data, size_t i) {
  switch (op) {
  case CLR_SUM:
    if (tu_is_float(t))
      tu_store_f(t, data, i, 1.0e6);
    else
      tu_store_bits(t, data, i, 0x0123456789abcdefull);
    break;
  case CLR_PROD:
    if (tu_is_float(t))
      tu_store_f(t, data, i, 0.0);
    else
      tu_store_bits(t, data, i, 2); /* odd data: an even factor shows */
    break;
  case CLR_MIN:
    if (tu_is_float(t))
      tu_store_f(t, data, i, -INFINITY);
    else
      tu_store_i(t, data, i,
                 t == CLR_INT    ? INT32_MIN
                 : t == CLR_LONG ? INT64_MIN
                                 : 0);
    break;
  case CLR_MAX:
    if (tu_is_float(t))
      tu_store_f(t, data, i, NAN);
    else
      tu_store_bits(t, data, i,
                    t == CLR_INT    ? 0x7fffffffu
                    : t == CLR_LONG ? 0x7fffffffffffffffull
                                    : UINT64_MAX);
    break;
  case CLR_AND:
    tu_store_bits(t, data, i, 0);
    break;
  default:
    tu_store_bits(t, data, i, 1ull << 31);
    break;
  }
}

static void test_offsets(clr_context *ctx) {
  cl_context clc = clr_context_cl_context(ctx);
  cl_command_queue q = clr_context_queue(ctx);
  static const size_t offsets[] = {0, 1, 3, 17, 1001};
  static const size_t sizes[] = {1, 7, 1000, 65537};
  size_t pad = 4099; /* poison after the range */
  size_t cap = 1001 + 65537 + pad;
  void *host = tu_xmalloc(cap * 8);
  void *back = tu_xmalloc(cap * 8);
  for (size_t ci = 0; ci < N_CASES; ci++) {
    const op_type *ot = &cases[ci];
    size_t es = clr_type_size(ot->type);
    size_t failed_before = tu_failed, passed_before = tu_passed;
    for (size_t oi = 0; oi < sizeof offsets / sizeof offsets[0]; oi++)
      for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t off = offsets[oi], n = sizes[si], total = off + n + pad;
        for (size_t i = 0; i < total; i++)
          poison(ot->op, ot->type, host, i);
        tu_fill(ot->op, ot->type, ot->variant, (char *)host + off * es, n,
                tu_seed(ci, off, n, 7));
        cl_int err;
        cl_mem buf =
            clCreateBuffer(clc, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                           total * es, host, &err);
        if (err != CL_SUCCESS)
          tu_die("clCreateBuffer: %d", (int)err);
        for (size_t ki = 0; ki < TU_N_REDUCE_KERNELS; ki++)
          for (unsigned vw = 0; vw <= 16; vw += 16) {
            /* 16-wide vectors at unaligned offsets: every other case */
            if (vw && (tu_reduce_kernels[ki] != CLR_REDUCE_COARSE || ci % 2))
              continue;
            for (int layout = 0; layout <= (vw ? 2 : 0); layout++) {
              if (vw && layout == 0)
                continue;
              tu_case c;
              memset(&c, 0, sizeof c);
              clr_options_init(&c.opt);
              c.opt.kernel = tu_reduce_kernels[ki];
              c.opt.vector_width = vw;
              c.opt.layout = (clr_layout)layout;
              c.op = ot->op;
              c.type = ot->type;
              c.data = (char *)host + off * es;
              c.n = n;
              c.exact_ref = tu_variant_exact(ot->variant, ot->op, ot->type);
              char label[64];
              snprintf(label, sizeof label, "buffer offset %zu", off);
              c.label = label;
              clr_value got;
              memset(&got, 0, sizeof got);
              clr_status s = clr_reduce_buffer(ctx, &c.opt, c.op, c.type, buf,
                                               off, n, &got);
              if (!tu_type_available(c.type)) {
                TU_EXPECT_STATUS(s, CLR_ERR_NO_FP64, label);
                continue;
              }
              char desc[256];
              tu_describe(&c, desc, sizeof desc);
              if (!TU_CHECK(s == CLR_OK, "%s: clr_reduce_buffer: %s: %s", desc,
                            clr_status_name(s), clr_context_error(ctx)))
                continue;
              clr_timing tm;
              clr_last_timing(ctx, &tm);
              tu_verify(&c, &got, &tm);
            }
          }
        /* The buffer is only read. */
        err = clEnqueueReadBuffer(q, buf, CL_TRUE, 0, total * es, back, 0, NULL,
                                  NULL);
        TU_CHECK(err == CL_SUCCESS && memcmp(back, host, total * es) == 0,
                 "%s %s offset %zu n %zu: buffer unchanged",
                 clr_op_name(ot->op), clr_type_name(ot->type), off, n);
        clReleaseMemObject(buf);
      }
    printf("buffer %-4s %-6s offsets 0..1001: %zu checks, %s\n",
           clr_op_name(ot->op), clr_type_name(ot->type),
           tu_passed - passed_before,
           tu_failed > failed_before ? "FAILED" : "ok");
    fflush(stdout);
  }
  free(host);
  free(back);
}

/* Arguments that do not fit the buffer. */
static void test_bad_ranges(clr_context *ctx) {
  cl_int err;
  int32_t x[16];
  for (int i = 0; i < 16; i++)
    x[i] = i + 1;
  cl_mem buf = clCreateBuffer(clr_context_cl_context(ctx),
                              CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof x,
                              x, &err);
  if (err != CL_SUCCESS)
    tu_die("clCreateBuffer: %d", (int)err);
  clr_value v;
  TU_EXPECT_STATUS(
      clr_reduce_buffer(ctx, NULL, CLR_SUM, CLR_INT, buf, 0, 0, &v),
      CLR_ERR_INVALID_ARGUMENT, "buffer n == 0");
  TU_EXPECT_STATUS(
      clr_reduce_buffer(ctx, NULL, CLR_SUM, CLR_INT, buf, 0, 17, &v),
      CLR_ERR_INVALID_ARGUMENT, "buffer n past its end");
  TU_EXPECT_STATUS(
      clr_reduce_buffer(ctx, NULL, CLR_SUM, CLR_INT, buf, 10, 7, &v),
      CLR_ERR_INVALID_ARGUMENT, "buffer offset + n past its end");
  TU_EXPECT_STATUS(
      clr_reduce_buffer(ctx, NULL, CLR_SUM, CLR_INT, buf, SIZE_MAX - 2, 4, &v),
      CLR_ERR_INVALID_ARGUMENT, "buffer offset + n overflows");
  TU_EXPECT_STATUS(
      clr_reduce_buffer(ctx, NULL, CLR_SUM, CLR_LONG, buf, 0, 9, &v),
      CLR_ERR_INVALID_ARGUMENT, "buffer too small for 9 longs");
  TU_EXPECT_STATUS(
      clr_reduce_buffer(ctx, NULL, CLR_SUM, CLR_INT, buf, 0, 4, NULL),
      CLR_ERR_INVALID_ARGUMENT, "buffer result NULL");
  memset(&v, 0, sizeof v);
  clr_status s = clr_reduce_buffer(ctx, NULL, CLR_SUM, CLR_INT, buf, 15, 1, &v);
  TU_CHECK(s == CLR_OK && v.type == CLR_LONG && v.v.l == 16,
           "buffer: last element alone: %s %" PRId64, clr_status_name(s),
           v.v.l);
  s = clr_reduce_buffer(ctx, NULL, CLR_SUM, CLR_INT, buf, 0, 16, &v);
  TU_CHECK(s == CLR_OK && v.v.l == 136, "buffer: whole: %s %" PRId64,
           clr_status_name(s), v.v.l);
  /* The caller changes the buffer: the next call sees the new data. */
  int32_t y = 1000;
  err = clEnqueueWriteBuffer(clr_context_queue(ctx), buf, CL_TRUE, 0, sizeof y,
                             &y, 0, NULL, NULL);
  s = clr_reduce_buffer(ctx, NULL, CLR_SUM, CLR_INT, buf, 0, 16, &v);
  TU_CHECK(err == CL_SUCCESS && s == CLR_OK && v.v.l == 1135,
           "buffer: after the caller's write: %s %" PRId64, clr_status_name(s),
           v.v.l);
  clReleaseMemObject(buf);
}

/* A context around the caller's own queue. */
static void test_from_queue(void) {
  cl_platform_id plats[8];
  cl_uint np = 0;
  if (clGetPlatformIDs(8, plats, &np) != CL_SUCCESS || np == 0)
    tu_die("no OpenCL platform");
  cl_platform_id plat =
      plats[tu_device.platform_index < np ? tu_device.platform_index : 0];
  cl_device_id devs[16];
  cl_uint nd = 0;
  if (clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 16, devs, &nd) != CL_SUCCESS ||
      nd == 0)
    tu_die("no OpenCL device");
  cl_device_id dev =
      devs[tu_device.device_index < nd ? tu_device.device_index : 0];
  cl_int err;
  cl_context clc = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  if (err != CL_SUCCESS)
    tu_die("clCreateContext: %d", (int)err);
  size_t n = 100003;
  double *x = tu_xmalloc(n * sizeof *x);
  int fp64 = tu_device.has_fp64;
  double want = 0;
  for (size_t i = 0; i < n; i++) {
    x[i] = (double)((int)(i % 17) - 8) * 0.5;
    want += x[i];
  }
  for (int prof = 0; prof <= 1; prof++) {
    cl_command_queue q = clCreateCommandQueue(
        clc, dev, prof ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
    if (err != CL_SUCCESS)
      tu_die("clCreateCommandQueue: %d", (int)err);
    cl_mem buf = clCreateBuffer(clc, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                n * sizeof *x, x, &err);
    if (err != CL_SUCCESS)
      tu_die("clCreateBuffer: %d", (int)err);
    clr_context *ctx = NULL;
    char detail[256] = "";
    clr_status s =
        clr_context_create_from_queue(q, NULL, &ctx, detail, sizeof detail);
    if (!TU_CHECK(s == CLR_OK && ctx, "clr_context_create_from_queue: %s %s",
                  clr_status_name(s), detail)) {
      clReleaseMemObject(buf);
      clReleaseCommandQueue(q);
      continue;
    }
    TU_CHECK(clr_context_cl_context(ctx) == clc && clr_context_queue(ctx) == q,
             "from_queue: accessors give the caller's context and queue");
    for (size_t ki = 0; ki < TU_N_REDUCE_KERNELS; ki++) {
      clr_options o;
      clr_options_init(&o);
      o.kernel = tu_reduce_kernels[ki];
      clr_value v;
      memset(&v, 0, sizeof v);
      s = clr_reduce_buffer(ctx, &o, CLR_SUM, CLR_DOUBLE, buf, 0, n, &v);
      if (!fp64) {
        TU_EXPECT_STATUS(s, CLR_ERR_NO_FP64, "from_queue double without fp64");
        continue;
      }
      TU_CHECK(s == CLR_OK && v.type == CLR_DOUBLE && v.v.d == want,
               "from_queue (profiling %d) %s: %s sum %.17g want %.17g", prof,
               clr_kernel_name(o.kernel), clr_status_name(s), v.v.d, want);
      clr_timing tm;
      clr_last_timing(ctx, &tm);
      if (!prof)
        TU_CHECK(tm.kernel_ms == 0.0,
                 "from_queue without profiling: kernel_ms is 0 (got %g)",
                 tm.kernel_ms);
      /* Host arrays work too on such a context. */
      memset(&v, 0, sizeof v);
      s = clr_reduce_host(ctx, &o, CLR_MIN, CLR_DOUBLE, x, n, &v);
      TU_CHECK(s == CLR_OK && v.v.d == -4.0, "from_queue host min: %s %g",
               clr_status_name(s), v.v.d);
    }
    clr_context_release(ctx);
    /* The caller's queue outlives the context. */
    err = clFinish(q);
    TU_CHECK(err == CL_SUCCESS, "caller's queue usable after release (%d)",
             (int)err);
    clReleaseMemObject(buf);
    clReleaseCommandQueue(q);
  }
  clr_context *ctx = NULL;
  TU_EXPECT_STATUS(clr_context_create_from_queue(NULL, NULL, &ctx, NULL, 0),
                   CLR_ERR_INVALID_ARGUMENT, "from_queue(NULL queue)");
  free(x);
  clReleaseContext(clc);
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-v") == 0)
      tu_verbose = 1;
    else
      tu_die("unknown argument %s", argv[i]);
  }
  clr_context *ctx = tu_context();
  test_offsets(ctx);
  tu_section("offsets");
  test_bad_ranges(ctx);
  tu_section("bad ranges");
  clr_context_release(ctx);
  test_from_queue();
  tu_section("from_queue");
  return tu_finish("test_buffer");
}
