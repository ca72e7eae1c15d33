/* clr_reduce_buffer: device buffers the caller owns, at element offsets,
 * with poison values outside [offset, offset + n) that would change the
 * answer if read; the buffer must be left unchanged.  Also contexts made
 * around the caller's own queue (clr_context_create_from_queue), with and
 * without profiling, in-order and out-of-order, with the caller's own
 * commands right before and after each call; and buffers the library must
 * refuse: out of range, NULL, of another cl_context, without the access
 * the call needs.
 *
 * --rounds=K (default 2) repeats the queue-ordering cases K times; a large
 * K makes a misordering on an out-of-order queue more likely to show.
 * --n=N (default 3000000) sets their size. */
#include "test_util.h"

static const tu_op_data cases[] = {
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
    const tu_op_data *ot = &cases[ci];
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
              clr_timing tm = CLR_TIMING_INIT;
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
  cl_device_id dev = tu_cl_device();
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
      clr_timing tm = CLR_TIMING_INIT;
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

/* ------------------------------------------------- the caller's OpenCL */

static size_t order_rounds = 2, order_n = 3000000;

/* A buffer of clc, with a copy of host when given. */
static cl_mem make_buffer(cl_context clc, cl_mem_flags flags, size_t bytes,
                          const void *host) {
  cl_int err;
  cl_mem m = clCreateBuffer(clc, flags | (host ? CL_MEM_COPY_HOST_PTR : 0),
                            bytes, (void *)host, &err);
  if (err != CL_SUCCESS)
    tu_die("clCreateBuffer(%zu bytes): %d", bytes, (int)err);
  return m;
}

/* A refused call: CLR_ERR_INVALID_ARGUMENT, and a message naming why. */
static void expect_refused(clr_context *ctx, clr_status s, const char *what,
                           const char *word) {
  const char *msg = clr_context_error(ctx);
  TU_CHECK(s == CLR_ERR_INVALID_ARGUMENT && msg && strstr(msg, word),
           "%s: got %s \"%s\", want CLR_ERR_INVALID_ARGUMENT naming \"%s\"",
           what, clr_status_name(s), msg ? msg : "(null)", word);
}

/* Buffers of another cl_context, without the access a call needs, or too
 * small: refused with a message, and left as they were. */
static void test_refused_buffers(clr_context *ctx) {
  enum { N = 64 };
  cl_context clc = clr_context_cl_context(ctx);
  cl_command_queue q = clr_context_queue(ctx);
  cl_device_id dev = tu_cl_device();
  int32_t x[N], back[N];
  clr_value v;
  cl_int err;
  for (int i = 0; i < N; i++)
    x[i] = i + 1;
  cl_context other = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  if (err != CL_SUCCESS)
    tu_die("clCreateContext: %d", (int)err);
  cl_command_queue other_q = clCreateCommandQueue(other, dev, 0, &err);
  if (err != CL_SUCCESS)
    tu_die("clCreateCommandQueue: %d", (int)err);
  cl_mem foreign = make_buffer(other, CL_MEM_READ_WRITE, sizeof x, x);
  cl_mem rw = make_buffer(clc, CL_MEM_READ_WRITE, sizeof x, x);
  cl_mem ro = make_buffer(clc, CL_MEM_READ_ONLY, sizeof x, x);
  cl_mem wo = make_buffer(clc, CL_MEM_WRITE_ONLY, sizeof x, x);
  cl_mem half = make_buffer(clc, CL_MEM_READ_WRITE, sizeof x / 2, NULL);

  /* Another cl_context (same device): its cl_mem means nothing here. */
  expect_refused(
      ctx, clr_reduce_buffer(ctx, NULL, CLR_SUM, CLR_INT, foreign, 0, N, &v),
      "reduce of another cl_context's buffer", "cl_context");
  expect_refused(ctx,
                 clr_scan_buffer(ctx, NULL, CLR_SUM, CLR_INT, foreign, rw, N),
                 "scan from another cl_context's buffer", "cl_context");
  expect_refused(ctx,
                 clr_scan_buffer(ctx, NULL, CLR_SUM, CLR_INT, rw, foreign, N),
                 "scan into another cl_context's buffer", "cl_context");
  expect_refused(
      ctx, clr_scan_buffer(ctx, NULL, CLR_SUM, CLR_INT, foreign, foreign, N),
      "in-place scan of another cl_context's buffer", "cl_context");

  /* Kernel access: written buffers must be writable, read ones readable. */
  expect_refused(ctx, clr_scan_buffer(ctx, NULL, CLR_SUM, CLR_INT, ro, ro, N),
                 "in-place scan of a CL_MEM_READ_ONLY buffer", "READ_ONLY");
  expect_refused(ctx, clr_scan_buffer(ctx, NULL, CLR_MAX, CLR_INT, rw, ro, N),
                 "scan into a CL_MEM_READ_ONLY buffer", "READ_ONLY");
  expect_refused(ctx, clr_scan_buffer(ctx, NULL, CLR_SUM, CLR_INT, wo, rw, N),
                 "scan from a CL_MEM_WRITE_ONLY buffer", "WRITE_ONLY");
  expect_refused(ctx, clr_scan_buffer(ctx, NULL, CLR_SUM, CLR_INT, wo, wo, N),
                 "in-place scan of a CL_MEM_WRITE_ONLY buffer", "WRITE_ONLY");
  expect_refused(ctx,
                 clr_reduce_buffer(ctx, NULL, CLR_SUM, CLR_INT, wo, 0, N, &v),
                 "reduce of a CL_MEM_WRITE_ONLY buffer", "WRITE_ONLY");

  /* Ranges past the end, and sizes whose byte counts wrap. */
  expect_refused(ctx,
                 clr_scan_buffer(ctx, NULL, CLR_SUM, CLR_INT, rw, rw, N + 1),
                 "in-place scan past the buffer's end", "exceed");
  expect_refused(ctx, clr_scan_buffer(ctx, NULL, CLR_SUM, CLR_INT, rw, half, N),
                 "scan into a buffer of half the elements", "exceed");
  expect_refused(ctx, clr_scan_buffer(ctx, NULL, CLR_SUM, CLR_INT, half, rw, N),
                 "scan from a buffer of half the elements", "exceed");
  expect_refused(
      ctx, clr_scan_buffer(ctx, NULL, CLR_SUM, CLR_LONG, rw, rw, N / 2 + 1),
      "scan of more longs than the buffer holds", "exceed");
  expect_refused(
      ctx,
      clr_scan_buffer(ctx, NULL, CLR_SUM, CLR_INT, rw, rw, SIZE_MAX / 4 + 1),
      "scan of n whose bytes wrap to 0", "exceed");
  expect_refused(ctx,
                 clr_reduce_buffer(ctx, NULL, CLR_SUM, CLR_INT, rw,
                                   SIZE_MAX / 4 + 1, 4, &v),
                 "reduce at an offset whose bytes wrap to 0", "exceed");

  /* NULL buffers and a NULL context. */
  expect_refused(ctx,
                 clr_reduce_buffer(ctx, NULL, CLR_SUM, CLR_INT, NULL, 0, 4, &v),
                 "reduce of a NULL buffer", "NULL");
  expect_refused(ctx, clr_scan_buffer(ctx, NULL, CLR_SUM, CLR_INT, NULL, rw, 4),
                 "scan from NULL", "NULL");
  expect_refused(ctx, clr_scan_buffer(ctx, NULL, CLR_SUM, CLR_INT, rw, NULL, 4),
                 "scan into NULL", "NULL");
  const char *none = clr_context_error(NULL);
  TU_CHECK(none && strlen(none) > 0,
           "clr_context_error(NULL) gives a message (got \"%s\")",
           none ? none : "(null)");
  TU_EXPECT_STATUS(
      clr_reduce_buffer(NULL, NULL, CLR_SUM, CLR_INT, rw, 0, N, &v),
      CLR_ERR_INVALID_ARGUMENT, "clr_reduce_buffer(NULL context)");
  TU_EXPECT_STATUS(clr_scan_buffer(NULL, NULL, CLR_SUM, CLR_INT, rw, rw, N),
                   CLR_ERR_INVALID_ARGUMENT, "clr_scan_buffer(NULL context)");

  /* Nothing refused was written. */
  cl_mem unchanged[] = {rw, ro, foreign};
  for (int b = 0; b < 3; b++) {
    memset(back, 0, sizeof back);
    err = clEnqueueReadBuffer(b == 2 ? other_q : q, unchanged[b], CL_TRUE, 0,
                              sizeof back, back, 0, NULL, NULL);
    TU_CHECK(err == CL_SUCCESS && memcmp(back, x, sizeof x) == 0,
             "refused calls left buffer %d unchanged (read %d)", b, (int)err);
  }

  /* What the checks must let through: a read-only input, an in-place scan
   * of a read-write buffer, a reduction of a read-only buffer. */
  clr_status s = clr_scan_buffer(ctx, NULL, CLR_SUM, CLR_INT, ro, rw, N);
  memset(back, 0, sizeof back);
  err =
      clEnqueueReadBuffer(q, rw, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL);
  int ok = s == CLR_OK && err == CL_SUCCESS;
  for (int i = 0; i < N && ok; i++)
    ok = back[i] == (i + 1) * (i + 2) / 2;
  TU_CHECK(ok, "scan of a CL_MEM_READ_ONLY input: %s %s", clr_status_name(s),
           clr_context_error(ctx));
  s = clr_scan_buffer(ctx, NULL, CLR_MIN, CLR_INT, rw, rw, N);
  memset(back, 0, sizeof back);
  err =
      clEnqueueReadBuffer(q, rw, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL);
  ok = s == CLR_OK && err == CL_SUCCESS;
  for (int i = 0; i < N && ok; i++)
    ok = back[i] == 1; /* running minimum of increasing prefix sums */
  TU_CHECK(ok, "in-place scan of a CL_MEM_READ_WRITE buffer: %s %s",
           clr_status_name(s), clr_context_error(ctx));
  memset(&v, 0, sizeof v);
  s = clr_reduce_buffer(ctx, NULL, CLR_SUM, CLR_INT, ro, 0, N, &v);
  TU_CHECK(s == CLR_OK && v.type == CLR_LONG && v.v.l == N * (N + 1) / 2,
           "reduce of a CL_MEM_READ_ONLY buffer: %s %" PRId64,
           clr_status_name(s), v.v.l);

  cl_mem all[] = {foreign, rw, ro, wo, half};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    clReleaseMemObject(all[i]);
  clReleaseCommandQueue(other_q);
  clReleaseContext(other);
}

/* The caller's own kernel: x[i] = v + i % 7 - 3. */
static const char fill_source[] =
    "__kernel void fill(__global int *x, int v, ulong n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < n)\n"
    "    x[i] = v + (int)(i % 7) - 3;\n"
    "}\n";

static int32_t fill_value(int kernel, int32_t v, size_t i) {
  return kernel ? v + (int32_t)(i % 7) - 3 : v;
}

typedef struct caller {
  const char *kind;
  cl_context clc;
  cl_command_queue q;
  cl_kernel fill;
} caller;

/* The caller writes buf[0..n) with fill_value(kernel, v, i) - its own
 * kernel, or clEnqueueFillBuffer - and waits for nothing: only the
 * library's ordering makes the next call see the new data. */
static void caller_fill(caller *c, int kernel, cl_mem buf, int32_t v,
                        size_t n) {
  cl_int err;
  if (kernel) {
    cl_ulong nn = n;
    size_t global = n;
    err = clSetKernelArg(c->fill, 0, sizeof buf, &buf);
    if (err == CL_SUCCESS)
      err = clSetKernelArg(c->fill, 1, sizeof v, &v);
    if (err == CL_SUCCESS)
      err = clSetKernelArg(c->fill, 2, sizeof nn, &nn);
    if (err == CL_SUCCESS)
      err = clEnqueueNDRangeKernel(c->q, c->fill, 1, NULL, &global, NULL, 0,
                                   NULL, NULL);
  } else {
    err = clEnqueueFillBuffer(c->q, buf, &v, sizeof v, 0, n * sizeof v, 0, NULL,
                              NULL);
  }
  if (err != CL_SUCCESS)
    tu_die("%s: the caller's fill: %d", c->kind, (int)err);
}

/* The caller reads what a call wrote through commands enqueued right
 * after it (a copy, then a read that waits for the copy): the call must
 * have finished writing when it returned. */
static void caller_read(caller *c, cl_mem buf, size_t bytes, void *host) {
  cl_int err;
  cl_event copied = NULL;
  cl_mem tmp = make_buffer(c->clc, CL_MEM_READ_WRITE, bytes, NULL);
  err = clEnqueueCopyBuffer(c->q, buf, tmp, 0, 0, bytes, 0, NULL, &copied);
  if (err == CL_SUCCESS)
    err = clEnqueueReadBuffer(c->q, tmp, CL_TRUE, 0, bytes, host, 1, &copied,
                              NULL);
  if (err != CL_SUCCESS)
    tu_die("%s: the caller's read: %d", c->kind, (int)err);
  clReleaseEvent(copied);
  clReleaseMemObject(tmp);
}

/* Reductions of data the caller uploaded, and of data its own commands
 * wrote just before each call. */
static void order_reductions(caller *c, clr_context *ctx, size_t n) {
  float *f = tu_xmalloc(n * sizeof *f);
  int32_t *xi = tu_xmalloc(n * sizeof *xi);
  tu_rng r = {tu_seed(n, 999, 0, 1)};
  for (size_t i = 0; i < n; i++)
    f[i] = (float)(1997.0 * tu_unit(&r) - 1000.0); /* below 997 */
  f[tu_below(&r, n)] = 999.0f;
  tu_fill(CLR_SUM, CLR_INT, TU_RANDOM, xi, n, tu_seed(n, 1, 2, 3));
  cl_mem fb = make_buffer(c->clc, CL_MEM_READ_ONLY, n * sizeof *f, f);
  cl_mem ib = make_buffer(c->clc, CL_MEM_READ_ONLY, n * sizeof *xi, xi);
  clr_value max999 = tu_fp_value(CLR_FLOAT, 999.0);
  for (size_t round = 0; round < order_rounds; round++)
    for (size_t ki = 0; ki < TU_N_REDUCE_KERNELS; ki++)
      for (int which = 0; which < 2; which++) {
        tu_case tc;
        memset(&tc, 0, sizeof tc);
        clr_options_init(&tc.opt);
        tc.opt.kernel = tu_reduce_kernels[ki];
        tc.op = which ? CLR_SUM : CLR_MAX;
        tc.type = which ? CLR_INT : CLR_FLOAT;
        tc.data = which ? (const void *)xi : (const void *)f;
        tc.n = n;
        tc.exact = which ? NULL : &max999;
        tc.exact_ref = 1;
        tc.label = c->kind;
        clr_value got;
        memset(&got, 0, sizeof got);
        clr_status s = clr_reduce_buffer(ctx, &tc.opt, tc.op, tc.type,
                                         which ? ib : fb, 0, n, &got);
        char desc[256];
        tu_describe(&tc, desc, sizeof desc);
        if (!TU_CHECK(s == CLR_OK, "%s round %zu: %s: %s", desc, round,
                      clr_status_name(s), clr_context_error(ctx)))
          continue;
        clr_timing tm = CLR_TIMING_INIT;
        clr_last_timing(ctx, &tm);
        tu_verify(&tc, &got, &tm);
      }

  /* The caller's commands write the buffer right before each call. */
  cl_mem wb = make_buffer(c->clc, CL_MEM_READ_WRITE, n * sizeof(int32_t), NULL);
  for (size_t i = 0; i < 8 * order_rounds; i++) {
    int kernel = i % 2 == 0;
    int32_t v = (int32_t)(5 * i + 1);
    clr_op op = i % 3 == 2 ? CLR_MAX : CLR_SUM;
    clr_options o;
    clr_options_init(&o);
    o.kernel = tu_reduce_kernels[(i / 2) % TU_N_REDUCE_KERNELS];
    int64_t want_sum = 0;
    int32_t want_max = INT32_MIN;
    for (size_t j = 0; j < n; j++) {
      int32_t y = fill_value(kernel, v, j);
      want_sum += y;
      want_max = y > want_max ? y : want_max;
    }
    caller_fill(c, kernel, wb, v, n);
    clr_value got;
    memset(&got, 0, sizeof got);
    clr_status s = clr_reduce_buffer(ctx, &o, op, CLR_INT, wb, 0, n, &got);
    int64_t g = op == CLR_SUM ? got.v.l : got.v.i;
    int64_t want = op == CLR_SUM ? want_sum : want_max;
    TU_CHECK(s == CLR_OK && g == want,
             "%s: %s %s right after the caller's %s (v=%d): %s %" PRId64
             ", want %" PRId64 " %s",
             c->kind, clr_kernel_name(o.kernel), clr_op_name(op),
             kernel ? "kernel" : "clEnqueueFillBuffer", (int)v,
             clr_status_name(s), g, want, clr_context_error(ctx));
  }

  /* Host arrays on such a context. */
  clr_value got;
  memset(&got, 0, sizeof got);
  clr_status s = clr_reduce_host(ctx, NULL, CLR_MAX, CLR_FLOAT, f, n, &got);
  TU_CHECK(s == CLR_OK && got.v.f == 999.0f, "%s: host max %s %g", c->kind,
           clr_status_name(s), (double)got.v.f);
  clReleaseMemObject(fb);
  clReleaseMemObject(ib);
  clReleaseMemObject(wb);
  free(f);
  free(xi);
}

/* Scans (every kernel) of data the caller's commands wrote just before
 * the call, read back through commands enqueued just after it. */
static void order_scans(caller *c, clr_context *ctx, size_t n) {
  static const clr_kernel scans[] = {CLR_SCAN_KOGGE_STONE,
                                     CLR_SCAN_KOGGE_STONE_DB,
                                     CLR_SCAN_BRENT_KUNG, CLR_SCAN_DECOUPLED};
  size_t bytes = n * sizeof(int32_t);
  int32_t *got = tu_xmalloc(bytes);
  cl_mem in = make_buffer(c->clc, CL_MEM_READ_WRITE, bytes, NULL);
  cl_mem out = make_buffer(c->clc, CL_MEM_READ_WRITE, bytes, NULL);
  for (size_t round = 0; round < order_rounds; round++)
    for (size_t ki = 0; ki < sizeof scans / sizeof scans[0]; ki++)
      for (int in_place = 0; in_place < 2; in_place++) {
        int kernel = (int)(round + ki + (size_t)in_place) % 2 == 0;
        int32_t v = (int32_t)(round * 8 + ki * 2 + (size_t)in_place) - 5;
        clr_options o;
        clr_options_init(&o);
        o.kernel = scans[ki];
        o.exclusive = in_place; /* one of each */
        cl_mem dst = in_place ? in : out;
        /* Stale results must not pass: the output starts as garbage. */
        if (!in_place)
          caller_fill(c, 0, out, 0x7eadbeef, n);
        caller_fill(c, kernel, in, v, n);
        clr_status s = clr_scan_buffer(ctx, &o, CLR_SUM, CLR_INT, in, dst, n);
        memset(got, 0, bytes);
        caller_read(c, dst, bytes, got);
        size_t bad = n, i;
        uint32_t run = 0;
        for (i = 0; i < n; i++) {
          uint32_t y = (uint32_t)fill_value(kernel, v, i);
          uint32_t want = o.exclusive ? run : run + y;
          run += y;
          if ((uint32_t)got[i] != want) {
            bad = i;
            break;
          }
        }
        TU_CHECK(s == CLR_OK && bad == n,
                 "%s: %s scan (%s) right after the caller's %s, round %zu: "
                 "%s, first wrong element %zu of %zu %s",
                 c->kind, clr_kernel_name(o.kernel),
                 in_place ? "in place, exclusive" : "in to out, inclusive",
                 kernel ? "kernel" : "clEnqueueFillBuffer", round,
                 clr_status_name(s), bad, n, clr_context_error(ctx));
      }
  clReleaseMemObject(in);
  clReleaseMemObject(out);
  free(got);
}

/* A context around the caller's queue of each kind - in-order, and
 * out-of-order with and without profiling - with the caller's commands
 * right before and after every call. */
static void test_queue_order(void) {
  static const struct {
    const char *kind;
    cl_command_queue_properties props;
  } kinds[] = {
      {"in-order queue", CL_QUEUE_PROFILING_ENABLE},
      {"out-of-order queue", CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE},
      {"out-of-order queue with profiling",
       CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE},
  };
  cl_device_id dev = tu_cl_device();
  cl_command_queue_properties dev_props = 0;
  cl_int err = clGetDeviceInfo(dev, CL_DEVICE_QUEUE_PROPERTIES,
                               sizeof dev_props, &dev_props, NULL);
  if (err != CL_SUCCESS)
    tu_die("clGetDeviceInfo(CL_DEVICE_QUEUE_PROPERTIES): %d", (int)err);
  /* Fail, never skip: the out-of-order cases are the point. */
  if (!(dev_props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE))
    tu_die("the device does not support out-of-order queues: this test "
           "needs a device that does (PoCL's CPU device does)");
  caller c;
  memset(&c, 0, sizeof c);
  c.clc = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  if (err != CL_SUCCESS)
    tu_die("clCreateContext: %d", (int)err);
  const char *src = fill_source;
  cl_program prog = clCreateProgramWithSource(c.clc, 1, &src, NULL, &err);
  if (err == CL_SUCCESS)
    err = clBuildProgram(prog, 1, &dev, "", NULL, NULL);
  if (err == CL_SUCCESS)
    c.fill = clCreateKernel(prog, "fill", &err);
  if (err != CL_SUCCESS)
    tu_die("building the caller's fill kernel: %d", (int)err);
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    size_t failed_before = tu_failed;
    c.kind = kinds[k].kind;
    c.q = clCreateCommandQueue(c.clc, dev, kinds[k].props, &err);
    if (err != CL_SUCCESS)
      tu_die("clCreateCommandQueue(%s): %d", c.kind, (int)err);
    clr_context *ctx = NULL;
    char detail[256] = "";
    clr_status s =
        clr_context_create_from_queue(c.q, NULL, &ctx, detail, sizeof detail);
    if (s != CLR_OK || !ctx)
      tu_die("clr_context_create_from_queue(%s): %s %s", c.kind,
             clr_status_name(s), detail);
    TU_CHECK(clr_context_cl_context(ctx) == c.clc &&
                 clr_context_queue(ctx) == c.q,
             "%s: the accessors give the caller's context and queue", c.kind);
    order_reductions(&c, ctx, order_n);
    order_scans(&c, ctx, order_n);
    if (!(kinds[k].props & CL_QUEUE_PROFILING_ENABLE)) {
      clr_timing tm = CLR_TIMING_INIT;
      clr_last_timing(ctx, &tm);
      TU_CHECK(tm.kernel_ms == 0.0,
               "%s without profiling: kernel_ms is 0 (got %g)", c.kind,
               tm.kernel_ms);
    }
    clr_context_release(ctx);
    err = clFinish(c.q);
    TU_CHECK(err == CL_SUCCESS, "%s: usable after the context's release (%d)",
             c.kind, (int)err);
    clReleaseCommandQueue(c.q);
    printf("queue order, %s: %zu rounds of n=%zu: %s\n", c.kind, order_rounds,
           order_n, tu_failed > failed_before ? "FAILED" : "ok");
    fflush(stdout);
  }
  clReleaseKernel(c.fill);
  clReleaseProgram(prog);
  clReleaseContext(c.clc);
}

/* clr_scan_buffer_range: ranges at odd and vector-aligned offsets, of two
 * buffers and of one (disjoint ranges, and in place), with every scan
 * kernel, against an exact CPU scan; overlapping ranges and ranges past
 * the end are refused. */
static void test_scan_ranges(clr_context *ctx) {
  const size_t n = 70001, cap = n + 64;
  cl_context cl = clr_context_cl_context(ctx);
  cl_command_queue q = clr_context_queue(ctx);
  int64_t *host = tu_xmalloc(cap * sizeof *host);
  int64_t *want = tu_xmalloc(n * sizeof *want);
  int64_t *got = tu_xmalloc(cap * sizeof *got);
  tu_fill_exact(CLR_LONG, CLR_SUM, host, cap, 5);
  cl_int err;
  cl_mem a = clCreateBuffer(cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                            cap * sizeof *host, host, &err);
  cl_mem b = err == CL_SUCCESS ? clCreateBuffer(cl, CL_MEM_READ_WRITE,
                                                cap * sizeof *host, NULL, &err)
                               : NULL;
  if (err != CL_SUCCESS)
    tu_die("clCreateBuffer: %d", (int)err);
  static const struct {
    size_t in_off, out_off;
    int same; /* both ranges in buffer a */
  } ranges[] = {{3, 5, 0}, {4, 8, 0}, {0, 0, 0}, {0, 0, 1}, {7, 7, 1}};
  for (int k = 0; k < CLR_KERNEL_COUNT; k++) {
    if (!clr_kernel_is_scan((clr_kernel)k))
      continue;
    for (size_t r = 0; r < sizeof ranges / sizeof *ranges; r++) {
      size_t io = ranges[r].in_off, oo = ranges[r].out_off;
      cl_mem out = ranges[r].same ? a : b;
      /* in place rewrites a: start every case from the same data */
      if (clEnqueueWriteBuffer(q, a, CL_TRUE, 0, cap * sizeof *host, host, 0,
                               NULL, NULL) != CL_SUCCESS)
        tu_die("clEnqueueWriteBuffer failed");
      clr_options o;
      clr_options_init(&o);
      o.kernel = (clr_kernel)k;
      tu_scan_ref(CLR_SUM, CLR_LONG, 0, NULL, host + io, want, n);
      clr_status s =
          clr_scan_buffer_range(ctx, &o, CLR_SUM, CLR_LONG, a, io, out, oo, n);
      if (clEnqueueReadBuffer(q, out, CL_TRUE, 0, cap * sizeof *got, got, 0,
                              NULL, NULL) != CL_SUCCESS)
        tu_die("clEnqueueReadBuffer failed");
      size_t diff =
          s == CLR_OK ? tu_first_diff(CLR_LONG, got + oo, want, n) : 0;
      TU_CHECK(s == CLR_OK && diff == n,
               "%s scan of a[%zu..] into %s[%zu..]: %s, first wrong element "
               "%zu",
               clr_kernel_name((clr_kernel)k), io, ranges[r].same ? "a" : "b",
               oo, clr_status_name(s), diff);
    }
  }
  TU_EXPECT_STATUS(
      clr_scan_buffer_range(ctx, NULL, CLR_SUM, CLR_LONG, a, 0, a, 10, n),
      CLR_ERR_INVALID_ARGUMENT, "overlapping ranges of one buffer");
  TU_EXPECT_STATUS(
      clr_scan_buffer_range(ctx, NULL, CLR_SUM, CLR_LONG, a, 65, b, 0, n),
      CLR_ERR_INVALID_ARGUMENT, "an input range past the end");
  TU_EXPECT_STATUS(
      clr_scan_buffer_range(ctx, NULL, CLR_SUM, CLR_LONG, a, 0, b, 64, n + 1),
      CLR_ERR_INVALID_ARGUMENT, "an output range past the end");
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  free(host);
  free(want);
  free(got);
}

int main(int argc, char **argv) {
  const char *rounds = NULL, *n = NULL;
  const tu_option options[] = {{"--rounds", &rounds, NULL}, {"--n", &n, NULL}};
  tu_parse_args(argc, argv, options, TU_N_OPTIONS(options));
  if (rounds)
    order_rounds = (size_t)strtoull(rounds, NULL, 10);
  if (n)
    order_n = (size_t)strtoull(n, NULL, 10);
  if (order_n < 64)
    tu_die("--n must be at least 64");
  clr_context *ctx = tu_context();
  test_offsets(ctx);
  tu_section("offsets");
  test_bad_ranges(ctx);
  tu_section("bad ranges");
  test_scan_ranges(ctx);
  tu_section("scan ranges");
  test_refused_buffers(ctx);
  tu_section("refused buffers");
  clr_context_release(ctx);
  test_from_queue();
  tu_section("from_queue");
  test_queue_order();
  tu_section("queue order");
  return tu_finish("test_buffer");
}
