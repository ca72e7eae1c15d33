/* test sized-structs: the structs a caller passes or fills carry their
 * size (include/clreduce.h, "sized structs"), and the defaults have names.
 *
 *   - a consumer built against the first sized header (tests/
 *     abi_v1_options.h: clr_options_v1, clr_context_config_v1, frozen)
 *     passes struct_size = sizeof(v1): it works and gives right answers;
 *   - a consumer of an older, shorter header, simulated by a struct_size
 *     that ends before a field (offsetof(clr_options, index_base), ...):
 *     the library reads no byte past struct_size and takes the default for
 *     the fields it lacks (every field boundary is taken);
 *   - struct_size past this library's sizeof, below the first field's
 *     end, or ending inside a field: CLR_ERR_VERSION with a detail naming
 *     the sizes; 0 (a zeroed struct): CLR_ERR_INVALID_ARGUMENT naming the
 *     init function; at every public entry point that takes options or a
 *     config (the library's; clreduce-mpi's are test mpi-api's);
 *   - the output structs (clr_timing, clr_pass_info, clr_tuning) are
 *     written up to their struct_size, never past it; clr_set_tuning keeps
 *     the context's values past a short struct; clr_tuning_origin;
 *   - the named defaults: CLR_KERNEL_DEFAULT runs the coarse reduction
 *     (argmax, which only it computes) and the tuned scan (the same passes
 *     as the tuning's kernel named, for several tunings); a reduction
 *     kernel in a scan is refused; CLR_TYPE_DEFAULT keeps the result type
 *     rule; CLR_ACCUMULATE_IN(t), deprecated, is t. */
#include "abi_v1_options.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4099

static float xf[N], yf[N];
static int32_t xi[N];

/* "<needle>" in the detail, which must be one line. */
static int detail_says(const char *detail, const char *needle) {
  return detail && strstr(detail, needle) != NULL && !strchr(detail, '\n');
}

/* ------------------------------------------------------------ v1 */

/* The frozen v1 structs, as a v1 consumer passes them. */
static void v1_consumer(void) {
  clr_context_config_v1 cfg = clr_context_config_v1_init();
  clr_context *ctx = NULL;
  char detail[512] = "";
  clr_status s = clr_context_create((const clr_context_config *)(void *)&cfg,
                                    &ctx, detail, sizeof detail);
  if (!TU_EXPECT_STATUS(s, CLR_OK, "a context from a v1 config"))
    tu_die("no context: %s", detail);
  clr_options_v1 o = clr_options_v1_init();
  const clr_options *op = (const clr_options *)(void *)&o;
  clr_value v;
  double want = 0;
  int64_t iwant = 0;
  for (size_t i = 0; i < N; i++) {
    want += xf[i];
    iwant += xi[i];
  }
  s = clr_reduce_host(ctx, op, CLR_SUM, CLR_FLOAT, xf, N, &v);
  TU_CHECK(s == CLR_OK && v.type == CLR_FLOAT && (double)v.v.f > want - 1e-3 &&
               (double)v.v.f < want + 1e-3,
           "v1 options: float sum %g (want %g): %s", (double)v.v.f, want,
           clr_status_name(s));
  s = clr_reduce_host(ctx, op, CLR_SUM, CLR_INT, xi, N, &v);
  TU_CHECK(s == CLR_OK && v.type == CLR_LONG && v.v.l == iwant,
           "v1 options: int sum in long %lld (want %lld): %s", (long long)v.v.l,
           (long long)iwant, clr_status_name(s));
  /* every field read: index_base, accumulate_in, map */
  o.index_base = 1000;
  s = clr_reduce_host(ctx, op, CLR_ARGMAX, CLR_INT, xi, N, &v);
  TU_CHECK(s == CLR_OK && v.index == 1000 + 1234,
           "v1 options: argmax from index_base 1000 at %llu (want 2234): %s",
           (unsigned long long)v.index, clr_status_name(s));
  o.index_base = 0;
  o.accumulate_in = CLR_INT;
  s = clr_reduce_host(ctx, op, CLR_SUM, CLR_INT, xi, N, &v);
  TU_CHECK(s == CLR_OK && v.type == CLR_INT && v.v.i == (int32_t)iwant,
           "v1 options: accumulate_in CLR_INT: %s %d (want %d)",
           clr_type_name(v.type), v.v.i, (int32_t)iwant);
  o.accumulate_in = CLR_TYPE_DEFAULT;
  o.map = CLR_MAP_EXPR;
  o.map_expr = "x > 0 ? 1 : 0";
  o.accumulate_in = CLR_LONG;
  int64_t positive = 0;
  for (size_t i = 0; i < N; i++)
    positive += xi[i] > 0;
  s = clr_reduce_host(ctx, op, CLR_SUM, CLR_INT, xi, N, &v);
  TU_CHECK(s == CLR_OK && v.v.l == positive,
           "v1 options: a map expression counts %lld (want %lld): %s",
           (long long)v.v.l, (long long)positive, clr_status_name(s));
  o = clr_options_v1_init();
  o.exclusive = 1;
  int32_t *out = tu_xmalloc(N * sizeof *out);
  s = clr_scan_host(ctx, op, CLR_SUM, CLR_INT, xi, out, N);
  uint32_t run = 0;
  size_t bad = 0;
  for (size_t i = 0; i < N; i++) {
    bad += (uint32_t)out[i] != run;
    run += (uint32_t)xi[i];
  }
  TU_CHECK(s == CLR_OK && bad == 0,
           "v1 options: exclusive scan with the default kernel: %s, %zu "
           "wrong",
           clr_status_name(s), bad);
  /* A v1 request (shorter than today's): clr_run and clr_enqueue read its
   * fields and give the later ones their defaults. */
  clr_request_v1 rq = clr_request_v1_init();
  rq.type = CLR_INT;
  rq.n = N;
  rq.input.host = xi;
  rq.options = op;
  o = clr_options_v1_init();
  s = clr_run(ctx, (const clr_request *)(void *)&rq, &v);
  TU_CHECK(s == CLR_OK && v.type == CLR_LONG && v.v.l == iwant,
           "v1 request: int sum %lld (want %lld): %s", (long long)v.v.l,
           (long long)iwant, clr_status_name(s));
  cl_context clc = clr_context_cl_context(ctx);
  cl_int err;
  cl_mem in = clCreateBuffer(clc, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                             N * sizeof(int32_t), (void *)xi, &err);
  cl_mem res = clCreateBuffer(clc, CL_MEM_READ_WRITE, 8, NULL, &err);
  if (in && res) {
    rq.input.host = NULL;
    rq.input.buffer = in;
    rq.output.buffer = res;
    cl_event ev = NULL;
    s = clr_enqueue(ctx, (const clr_request *)(void *)&rq, 0, NULL, &ev);
    int64_t got = 0;
    if (s == CLR_OK)
      clEnqueueReadBuffer(clr_context_queue(ctx), res, CL_TRUE, 0, sizeof got,
                          &got, 1, &ev, NULL);
    if (ev)
      clReleaseEvent(ev);
    TU_CHECK(s == CLR_OK && got == iwant,
             "v1 request enqueued: int sum %lld (want %lld): %s",
             (long long)got, (long long)iwant, clr_status_name(s));
  } else {
    TU_CHECK(0, "v1 request: clCreateBuffer failed (%d)", (int)err);
  }
  if (in)
    clReleaseMemObject(in);
  if (res)
    clReleaseMemObject(res);
  free(out);
  clr_context_release(ctx);
}

/* ------------------------------------------------------------ refusals */

/* One bad struct_size and what it must give. */
typedef struct refusal {
  uint32_t size;
  clr_status status;
  char needle[160]; /* in the detail */
  const char *what;
} refusal;

/* The refusals of a struct of this library's size `size` whose first
 * field (after struct_size) ends at first_end and which has a field
 * [inside_begin, inside_end); init: its init function's name. */
static size_t refusals_for(const char *name, size_t size, size_t first_end,
                           size_t inside_begin, size_t inside_end,
                           const char *field, const char *init, refusal *r) {
  size_t k = 0;
  r[k] = (refusal){(uint32_t)(size + 8), CLR_ERR_VERSION, "", "past sizeof"};
  snprintf(r[k++].needle, sizeof r[0].needle,
           "%s.struct_size is %zu bytes, more than the %zu", name, size + 8,
           size);
  r[k] = (refusal){0, CLR_ERR_INVALID_ARGUMENT, "", "zero"};
  snprintf(r[k++].needle, sizeof r[0].needle, "%s", init);
  r[k] = (refusal){(uint32_t)(first_end - 1), CLR_ERR_VERSION, "",
                   "below the first field's end"};
  snprintf(r[k++].needle, sizeof r[0].needle,
           "%s.struct_size is %zu bytes, less than the smallest", name,
           first_end - 1);
  r[k] = (refusal){(uint32_t)(inside_begin + 2), CLR_ERR_VERSION, "",
                   "inside a field"};
  snprintf(r[k++].needle, sizeof r[0].needle,
           "ends inside its field %s (bytes %zu to %zu)", field, inside_begin,
           inside_end);
  return k;
}

/* Every public call that takes options, given bad: its status and, where
 * it has a context or a group, the detail. */
static void options_everywhere(clr_context *ctx, clr_group *g,
                               const clr_options *bad, const refusal *r) {
  cl_context cl = clr_context_cl_context(ctx);
  cl_int err;
  cl_mem in = clCreateBuffer(cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                             sizeof xf, xf, &err);
  cl_mem in2 = clCreateBuffer(cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                              sizeof yf, yf, &err);
  cl_mem out = clCreateBuffer(cl, CL_MEM_READ_WRITE, sizeof xf, NULL, &err);
  uint64_t offs[3] = {0, N / 2, N}, ranges[2] = {0, N};
  cl_mem offsets = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                  sizeof offs, offs, &err);
  cl_mem rbuf = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                               sizeof ranges, ranges, &err);
  static uint8_t heads[N];
  heads[0] = 1;
  heads[N / 3] = 1;
  cl_mem hbuf = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                               sizeof heads, heads, &err);
  cl_mem keys = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                               sizeof xi, xi, &err);
  cl_mem ukeys = clCreateBuffer(cl, CL_MEM_READ_WRITE, sizeof xi, NULL, &err);
  if (!in || !in2 || !out || !offsets || !rbuf || !hbuf || !keys || !ukeys)
    tu_die("clCreateBuffer failed");
  static float hout[N];
  static int32_t ukeys_host[N];
  clr_value v;
  size_t runs = 0;
  clr_exact_acc acc;
  clr_exact_acc_init(&acc, CLR_FLOAT);
  cl_event ev = NULL;
  const cl_mem bufs[1] = {in}, outs[1] = {out};
  const size_t counts[1] = {N};
  static const char *const names[] = {"clr_prepare",
                                      "clr_reduce_host",
                                      "clr_reduce_buffer",
                                      "clr_reduce_buffer_async",
                                      "clr_scan_host",
                                      "clr_scan_buffer",
                                      "clr_scan_buffer_range",
                                      "clr_scan_buffer_async",
                                      "clr_dot_host",
                                      "clr_dot_buffer",
                                      "clr_exact_add_host",
                                      "clr_exact_add_buffer",
                                      "clr_reduce_segments_host",
                                      "clr_reduce_segments_buffer",
                                      "clr_reduce_by_key_host",
                                      "clr_reduce_by_key_buffer",
                                      "clr_reduce_ranges_host",
                                      "clr_reduce_ranges_buffer",
                                      "clr_scan_segments_host",
                                      "clr_scan_heads_host",
                                      "clr_scan_segments_buffer",
                                      "clr_scan_heads_buffer"};
  /* each call, then its status and detail (every one records its own) */
  for (int k = 0; k < 22; k++) {
    clr_status s = CLR_OK;
    const char *name = names[k];
    switch (k) {
    case 0:
      s = clr_prepare(ctx, bad, CLR_SUM, CLR_FLOAT);
      break;
    case 1:
      s = clr_reduce_host(ctx, bad, CLR_SUM, CLR_FLOAT, xf, N, &v);
      break;
    case 2:
      s = clr_reduce_buffer(ctx, bad, CLR_SUM, CLR_FLOAT, in, 0, N, &v);
      break;
    case 3:
      s = clr_reduce_buffer_async(ctx, bad, CLR_SUM, CLR_FLOAT, in, 0, N, out,
                                  0, 0, NULL, &ev);
      break;
    case 4:
      s = clr_scan_host(ctx, bad, CLR_SUM, CLR_FLOAT, xf, hout, N);
      break;
    case 5:
      s = clr_scan_buffer(ctx, bad, CLR_SUM, CLR_FLOAT, in, out, N);
      break;
    case 6:
      s = clr_scan_buffer_range(ctx, bad, CLR_SUM, CLR_FLOAT, in, 0, out, 0, N);
      break;
    case 7:
      s = clr_scan_buffer_async(ctx, bad, CLR_SUM, CLR_FLOAT, in, 0, out, 0, N,
                                0, NULL, &ev);
      break;
    case 8:
      s = clr_dot_host(ctx, bad, CLR_FLOAT, xf, yf, N, &v);
      break;
    case 9:
      s = clr_dot_buffer(ctx, bad, CLR_FLOAT, in, 0, in2, 0, N, &v);
      break;
    case 10:
      s = clr_exact_add_host(ctx, bad, CLR_FLOAT, xf, N, &acc);
      break;
    case 11:
      s = clr_exact_add_buffer(ctx, bad, CLR_FLOAT, in, 0, N, &acc);
      break;
    case 12:
      s = clr_reduce_segments_host(ctx, bad, CLR_SUM, CLR_FLOAT, xf, N, offs, 2,
                                   hout);
      break;
    case 13:
      s = clr_reduce_segments_buffer(ctx, bad, CLR_SUM, CLR_FLOAT, in, 0, N,
                                     offsets, 0, 2, out, 0);
      break;
    case 14:
      s = clr_reduce_by_key_host(ctx, bad, CLR_SUM, CLR_INT, xi, CLR_FLOAT, xf,
                                 N, ukeys_host, hout, &runs);
      break;
    case 15:
      s = clr_reduce_by_key_buffer(ctx, bad, CLR_SUM, CLR_INT, keys, 0,
                                   CLR_FLOAT, in, 0, N, ukeys, 0, out, 0,
                                   &runs);
      break;
    case 16:
      s = clr_reduce_ranges_host(ctx, bad, CLR_SUM, CLR_FLOAT, xf, N, ranges, 1,
                                 hout);
      break;
    case 17:
      s = clr_reduce_ranges_buffer(ctx, bad, CLR_SUM, CLR_FLOAT, in, 0, N, rbuf,
                                   0, 1, out, 0);
      break;
    case 18:
      s = clr_scan_segments_host(ctx, bad, CLR_SUM, CLR_FLOAT, xf, hout, N,
                                 offs, 2);
      break;
    case 19:
      s = clr_scan_heads_host(ctx, bad, CLR_SUM, CLR_FLOAT, xf, hout, N, heads);
      break;
    case 20:
      s = clr_scan_segments_buffer(ctx, bad, CLR_SUM, CLR_FLOAT, in, 0, out, 0,
                                   N, offsets, 0, 2);
      break;
    default:
      s = clr_scan_heads_buffer(ctx, bad, CLR_SUM, CLR_FLOAT, in, 0, out, 0, N,
                                hbuf, 0);
      break;
    }
    const char *d = clr_context_error(ctx);
    TU_CHECK(s == r->status && detail_says(d, r->needle),
             "%s, struct_size %u (%s): %s (want %s), detail '%s' (want "
             "'%s')",
             name, (unsigned)r->size, r->what, clr_status_name(s),
             clr_status_name(r->status), d, r->needle);
  }
  TU_CHECK(ev == NULL, "a refused asynchronous call gives no event");
  /* Several devices: the group's error. */
  static const char *const gnames[] = {
      "clr_group_prepare",   "clr_group_reduce_host",
      "clr_group_dot_host",  "clr_group_reduce_buffers",
      "clr_group_scan_host", "clr_group_scan_buffers"};
  for (int k = 0; k < 6; k++) {
    clr_status s;
    switch (k) {
    case 0:
      s = clr_group_prepare(g, bad, CLR_SUM, CLR_FLOAT);
      break;
    case 1:
      s = clr_group_reduce_host(g, bad, CLR_SUM, CLR_FLOAT, xf, N, &v);
      break;
    case 2:
      s = clr_group_dot_host(g, bad, CLR_FLOAT, xf, yf, N, &v);
      break;
    case 3:
      s = clr_group_reduce_buffers(g, bad, CLR_SUM, CLR_FLOAT, bufs, NULL,
                                   counts, &v);
      break;
    case 4:
      s = clr_group_scan_host(g, bad, CLR_SUM, CLR_FLOAT, xf, hout, N);
      break;
    default:
      s = clr_group_scan_buffers(g, bad, CLR_SUM, CLR_FLOAT, bufs, NULL, outs,
                                 NULL, counts);
      break;
    }
    TU_CHECK(s == r->status && detail_says(clr_group_error(g), r->needle),
             "%s, struct_size %u (%s): %s (want %s), group error '%s'",
             gnames[k], (unsigned)r->size, r->what, clr_status_name(s),
             clr_status_name(r->status), clr_group_error(g));
  }
  /* The calls that return no status. */
  TU_CHECK(clr_options_result_type(bad, CLR_SUM, CLR_INT) == CLR_TYPE_COUNT &&
               clr_scan_output_type(bad, CLR_INT) == CLR_TYPE_COUNT &&
               clr_result_bytes(bad, CLR_SUM, CLR_INT) == 0,
           "struct_size %u (%s): clr_options_result_type and "
           "clr_scan_output_type give CLR_TYPE_COUNT, clr_result_bytes 0",
           (unsigned)r->size, r->what);
  clr_value sum = {.type = CLR_DOUBLE, .op = CLR_SUM, .v.d = 6};
  TU_CHECK(clr_value_sum_to_mean(bad, CLR_DOUBLE, 3, &sum) == r->status &&
               sum.v.d == 6 && sum.op == CLR_SUM,
           "struct_size %u (%s): clr_value_sum_to_mean refuses, v unchanged",
           (unsigned)r->size, r->what);
  clr_options copy;
  clr_options_init(&copy);
  char detail[512] = "x";
  TU_CHECK(clr_options_copy(bad, &copy, detail, sizeof detail) == r->status &&
               detail_says(detail, r->needle),
           "clr_options_copy, struct_size %u (%s): '%s'", (unsigned)r->size,
           r->what, detail);
  clReleaseMemObject(in);
  clReleaseMemObject(in2);
  clReleaseMemObject(out);
  clReleaseMemObject(offsets);
  clReleaseMemObject(rbuf);
  clReleaseMemObject(hbuf);
  clReleaseMemObject(keys);
  clReleaseMemObject(ukeys);
}

static void options_refused(clr_context *ctx) {
  refusal r[4];
  size_t n = refusals_for("clr_options", sizeof(clr_options),
                          offsetof(clr_options, kernel) + sizeof(clr_kernel),
                          offsetof(clr_options, index_base),
                          offsetof(clr_options, index_base) + sizeof(uint64_t),
                          "index_base", "clr_options_init", r);
  clr_group *g = NULL;
  char detail[256];
  if (clr_group_create_from(&ctx, 1, &g, detail, sizeof detail) != CLR_OK)
    tu_die("clr_group_create_from: %s", detail);
  for (size_t i = 0; i < n; i++) {
    /* room past the struct: a size past sizeof is refused unread */
    union {
      clr_options o;
      char room[sizeof(clr_options) + 16];
    } bad;
    memset(&bad, 0, sizeof bad);
    clr_options_init(&bad.o);
    bad.o.struct_size = r[i].size;
    options_everywhere(ctx, g, &bad.o, &r[i]);
  }
  clr_group_release(g);
  /* The context still works. */
  clr_value v;
  TU_EXPECT_STATUS(clr_reduce_host(ctx, NULL, CLR_SUM, CLR_FLOAT, xf, N, &v),
                   CLR_OK, "after the refusals, NULL options");
  clr_options o = CLR_OPTIONS_INIT, copy;
  clr_options_init(&copy);
  TU_CHECK(clr_options_copy(&o, NULL, NULL, 0) == CLR_ERR_INVALID_ARGUMENT,
           "clr_options_copy into NULL");
  copy.struct_size = 0;
  TU_CHECK(clr_options_copy(&o, &copy, NULL, 0) == CLR_ERR_INVALID_ARGUMENT,
           "clr_options_copy into a struct of struct_size 0");
}

static void config_refused(void) {
  refusal r[4];
  size_t n = refusals_for(
      "clr_context_config", sizeof(clr_context_config),
      offsetof(clr_context_config, platform) + sizeof(const char *),
      offsetof(clr_context_config, max_chunk_bytes),
      offsetof(clr_context_config, max_chunk_bytes) + sizeof(uint64_t),
      "max_chunk_bytes", "clr_context_config_init", r);
  for (size_t i = 0; i < n; i++) {
    union {
      clr_context_config c;
      char room[sizeof(clr_context_config) + 16];
    } bad;
    memset(&bad, 0, sizeof bad);
    clr_context_config_init(&bad.c);
    bad.c.struct_size = r[i].size;
    char detail[512], buf[4096];
    clr_context *ctx = (clr_context *)&bad; /* must become NULL */
    uint64_t e = 7, b = 7, m = 7;
    clr_group *g = (clr_group *)&bad;
    struct {
      const char *name;
      clr_status s;
      int has_detail;
    } calls[6];
    calls[0].name = "clr_context_create";
    calls[0].s = clr_context_create(&bad.c, &ctx, detail, sizeof detail);
    calls[0].has_detail = detail_says(detail, r[i].needle) && ctx == NULL;
    cl_command_queue q = NULL;
    calls[1].name = "clr_context_create_from_queue";
    clr_context *q_ctx = NULL;
    {
      /* a queue of a context of the defaults */
      clr_context *base = tu_context();
      q = clr_context_queue(base);
      calls[1].s = clr_context_create_from_queue(q, &bad.c, &q_ctx, detail,
                                                 sizeof detail);
      calls[1].has_detail = detail_says(detail, r[i].needle) && !q_ctx;
      clr_context_release(base);
    }
    calls[2].name = "clr_cache_dir";
    strcpy(buf, "unchanged");
    calls[2].s = clr_cache_dir(&bad.c, buf, sizeof buf);
    calls[2].has_detail = buf[0] == '\0';
    calls[3].name = "clr_cache_usage";
    calls[3].s = clr_cache_usage(&bad.c, &e, &b, &m, detail, sizeof detail);
    calls[3].has_detail = detail_says(detail, r[i].needle);
    calls[4].name = "clr_cache_clear";
    calls[4].s = clr_cache_clear(&bad.c, &e, &b, detail, sizeof detail);
    calls[4].has_detail = detail_says(detail, r[i].needle);
    calls[5].name = "clr_group_create";
    calls[5].s = clr_group_create(&bad.c, "all", &g, detail, sizeof detail);
    calls[5].has_detail = detail_says(detail, r[i].needle) && g == NULL;
    for (size_t k = 0; k < 6; k++)
      TU_CHECK(calls[k].s == r[i].status && calls[k].has_detail,
               "%s, struct_size %u (%s): %s (want %s), the detail says '%s'",
               calls[k].name, (unsigned)r[i].size, r[i].what,
               clr_status_name(calls[k].s), clr_status_name(r[i].status),
               r[i].needle);
    clr_context_config copy;
    clr_context_config_init(&copy);
    TU_CHECK(clr_context_config_copy(&bad.c, &copy, detail, sizeof detail) ==
                     r[i].status &&
                 detail_says(detail, r[i].needle),
             "clr_context_config_copy, struct_size %u (%s): '%s'",
             (unsigned)r[i].size, r[i].what, detail);
  }
}

/* ------------------------------------------------------------ shorter */

/* A value for field i of clr_options (in the order of fields[] below)
 * that changes what an int sum and an int argmax give, or refuses them. */
static void poison(clr_options *o, size_t i) {
  switch (i) {
  case 0:
    o->kernel = (clr_kernel)99;
    break;
  case 1:
    o->vector_width = 3;
    break;
  case 2:
    o->layout = (clr_layout)99;
    break;
  case 3:
    o->narrow_accumulator = 1;
    break;
  case 4:
    o->accumulate_in = CLR_FLOAT;
    break;
  case 5:
    o->map = (clr_map)99;
    break;
  default:
    o->index_base = 1000;
    break;
  }
}

/* CLR_OK with the defaults' answers (the sum in long, argmax at 1234), or
 * what differs. */
static int default_answers(clr_context *ctx, const clr_options *o, int64_t want,
                           char *why, size_t size) {
  clr_value v, a;
  clr_status s = clr_reduce_host(ctx, o, CLR_SUM, CLR_INT, xi, N, &v);
  clr_status s2 = clr_reduce_host(ctx, o, CLR_ARGMAX, CLR_INT, xi, N, &a);
  snprintf(why, size, "sum %s %s %lld, argmax %s at %llu", clr_status_name(s),
           clr_type_name(v.type), (long long)v.v.l, clr_status_name(s2),
           (unsigned long long)a.index);
  return s == CLR_OK && s2 == CLR_OK && v.type == CLR_LONG && v.v.l == want &&
         a.index == 1234;
}

/* A consumer of an older header: struct_size at every field boundary is
 * taken, and the fields past it are the defaults whatever the caller's
 * bytes say. */
static void shorter_options(clr_context *ctx) {
  static const size_t fields[] = {offsetof(clr_options, kernel),
                                  offsetof(clr_options, vector_width),
                                  offsetof(clr_options, layout),
                                  offsetof(clr_options, narrow_accumulator),
                                  offsetof(clr_options, accumulate_in),
                                  offsetof(clr_options, map),
                                  offsetof(clr_options, index_base)};
  const size_t nf = sizeof fields / sizeof fields[0];
  int64_t want = 0;
  for (size_t i = 0; i < N; i++)
    want += xi[i];
  char why[256];
  /* each poison does tell: the whole struct read, that field alone set */
  for (size_t f = 0; f < nf; f++) {
    clr_options o = CLR_OPTIONS_INIT;
    poison(&o, f);
    TU_CHECK(!default_answers(ctx, &o, want, why, sizeof why),
             "field at %zu set, the whole struct: not the defaults' answers "
             "(%s)",
             fields[f], why);
  }
  /* every boundary: the fields past it poisoned, never read */
  static const size_t ends[] = {offsetof(clr_options, wg_size),
                                offsetof(clr_options, coarse),
                                offsetof(clr_options, vector_width),
                                offsetof(clr_options, layout),
                                offsetof(clr_options, narrow_accumulator),
                                offsetof(clr_options, exclusive),
                                offsetof(clr_options, carry_in),
                                offsetof(clr_options, exact),
                                offsetof(clr_options, accumulate_in),
                                offsetof(clr_options, map),
                                offsetof(clr_options, map) + 4,
                                offsetof(clr_options, map_expr),
                                offsetof(clr_options, index_base)};
  for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
    clr_options o = CLR_OPTIONS_INIT;
    size_t poisoned = 0;
    for (size_t f = 0; f < nf; f++)
      if (fields[f] >= ends[i]) {
        poison(&o, f);
        poisoned++;
      }
    o.struct_size = (uint32_t)ends[i];
    TU_CHECK(default_answers(ctx, &o, want, why, sizeof why),
             "struct_size %zu, %zu fields past it set: the defaults' "
             "answers (%s; %s)",
             ends[i], poisoned, why, clr_context_error(ctx));
  }
  /* Without index_base: an older header's struct, its last field given
   * a value the library must not read. */
  clr_options o = CLR_OPTIONS_INIT;
  double fwant = 0;
  for (size_t i = 0; i < N; i++)
    fwant += xf[i];
  (void)fwant;
  o.index_base = 1000;
  o.struct_size = (uint32_t)offsetof(clr_options, index_base);
  clr_value v;
  clr_status s = clr_reduce_host(ctx, &o, CLR_ARGMAX, CLR_INT, xi, N, &v);
  TU_CHECK(s == CLR_OK && v.index == 1234,
           "struct_size offsetof(index_base): argmax at %llu, counted from 0 "
           "(the default), not from the 1000 past the struct: %s",
           (unsigned long long)v.index, clr_status_name(s));
  o.struct_size = sizeof o;
  s = clr_reduce_host(ctx, &o, CLR_ARGMAX, CLR_INT, xi, N, &v);
  TU_CHECK(s == CLR_OK && v.index == 2234,
           "the whole struct: argmax at %llu (from index_base 1000)",
           (unsigned long long)v.index);
  /* Without accumulate_in (and what follows): the default rule. */
  clr_options_init(&o);
  o.accumulate_in = CLR_INT;
  o.struct_size = (uint32_t)offsetof(clr_options, accumulate_in);
  TU_CHECK(clr_options_result_type(&o, CLR_SUM, CLR_INT) == CLR_LONG &&
               clr_scan_output_type(&o, CLR_HALF) == CLR_FLOAT &&
               clr_result_bytes(&o, CLR_SUM, CLR_INT) == 8,
           "struct_size offsetof(accumulate_in): the default result types");
  s = clr_reduce_host(ctx, &o, CLR_SUM, CLR_INT, xi, N, &v);
  TU_CHECK(s == CLR_OK && v.type == CLR_LONG,
           "struct_size offsetof(accumulate_in): int sum in %s",
           clr_type_name(v.type));
  /* clr_options_copy: the defaults past a short struct, and into one */
  clr_options full;
  clr_options_init(&full);
  char detail[256] = "x";
  TU_CHECK(clr_options_copy(&o, &full, detail, sizeof detail) == CLR_OK &&
               full.accumulate_in == CLR_TYPE_DEFAULT &&
               full.struct_size == sizeof full && detail[0] == '\0',
           "clr_options_copy of a short struct: defaults past it");
  union {
    clr_options o;
    unsigned char b[sizeof(clr_options)];
  } small;
  memset(&small, 0xA5, sizeof small);
  small.o.struct_size = (uint32_t)offsetof(clr_options, map_expr);
  clr_options src = CLR_OPTIONS_INIT;
  src.index_base = 77;
  src.wg_size = 64;
  size_t past = 0;
  for (size_t i = offsetof(clr_options, map_expr); i < sizeof small; i++)
    past += small.b[i] != 0xA5;
  TU_CHECK(clr_options_copy(&src, &small.o, NULL, 0) == CLR_OK &&
               small.o.wg_size == 64 &&
               small.o.struct_size == offsetof(clr_options, map_expr) &&
               past == 0,
           "clr_options_copy into a short struct writes only its bytes");
  past = 0;
  for (size_t i = offsetof(clr_options, map_expr); i < sizeof small; i++)
    past += small.b[i] != 0xA5;
  TU_CHECK(past == 0, "clr_options_copy: %zu bytes written past struct_size",
           past);
}

/* The same for the config: no_profiling and cache_dir past struct_size
 * are the defaults. */
static void shorter_config(void) {
  const char *env_cache = getenv("CLREDUCE_CACHE_DIR");
  clr_context_config c = CLR_CONTEXT_CONFIG_INIT;
  char dir[4096], detail[512];
  c.cache_dir = "/nonexistent/given-cache";
  TU_CHECK(clr_cache_dir(&c, dir, sizeof dir) == CLR_OK &&
               strcmp(dir, "/nonexistent/given-cache") == 0,
           "the whole config: its cache_dir (%s)", dir);
  c.struct_size = (uint32_t)offsetof(clr_context_config, cache_dir);
  TU_CHECK(clr_cache_dir(&c, dir, sizeof dir) == CLR_OK && env_cache &&
               strcmp(dir, env_cache) == 0,
           "a config without cache_dir: $CLREDUCE_CACHE_DIR (%s)", dir);
  /* no_profiling: 0 (profiling) when past struct_size */
  for (int whole = 0; whole < 2; whole++) {
    clr_context_config p = CLR_CONTEXT_CONFIG_INIT;
    p.no_profiling = 1;
    if (!whole)
      p.struct_size = (uint32_t)offsetof(clr_context_config, no_profiling);
    clr_context *ctx = NULL;
    clr_status s = clr_context_create(&p, &ctx, detail, sizeof detail);
    if (!TU_EXPECT_STATUS(s, CLR_OK, "a context, no_profiling set"))
      continue;
    static float big[1 << 20];
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
      big[i] = (float)(i % 7);
    clr_value v;
    s = clr_reduce_host(ctx, NULL, CLR_SUM, CLR_FLOAT, big, 1 << 20, &v);
    clr_timing t = CLR_TIMING_INIT;
    clr_last_timing(ctx, &t);
    TU_CHECK(s == CLR_OK && (whole ? t.kernel_ms == 0 : t.kernel_ms > 0),
             "no_profiling 1 %s: kernel %g ms",
             whole ? "read (no event times)"
                   : "past struct_size (the default: profiling)",
             t.kernel_ms);
    clr_context_release(ctx);
  }
}

/* ------------------------------------------------------------ outputs */

static void output_structs(clr_context *ctx) {
  clr_value v;
  clr_status s = clr_reduce_host(ctx, NULL, CLR_SUM, CLR_FLOAT, xf, N, &v);
  clr_timing full = CLR_TIMING_INIT;
  TU_CHECK(s == CLR_OK && clr_last_timing(ctx, &full) == CLR_OK &&
               full.n_passes >= 1 && full.error_depth > 0,
           "clr_last_timing: %zu passes, depth %zu", full.n_passes,
           full.error_depth);
  union {
    clr_timing t;
    unsigned char b[sizeof(clr_timing)];
  } part;
  memset(&part, 0xA5, sizeof part);
  part.t.struct_size = (uint32_t)offsetof(clr_timing, error_depth);
  size_t past = 0;
  s = clr_last_timing(ctx, &part.t);
  for (size_t i = offsetof(clr_timing, error_depth); i < sizeof part; i++)
    past += part.b[i] != 0xA5;
  TU_CHECK(s == CLR_OK && part.t.n_passes == full.n_passes &&
               part.t.chunks == full.chunks && past == 0 &&
               part.t.struct_size == offsetof(clr_timing, error_depth),
           "clr_last_timing into a shorter clr_timing: its fields, %zu bytes "
           "past it written",
           past);
  clr_timing t0 = CLR_TIMING_INIT;
  t0.struct_size = 0;
  TU_CHECK(clr_last_timing(ctx, &t0) == CLR_ERR_INVALID_ARGUMENT,
           "clr_last_timing, struct_size 0");
  t0.struct_size = sizeof t0 + 8;
  TU_CHECK(clr_last_timing(ctx, &t0) == CLR_ERR_VERSION,
           "clr_last_timing, struct_size past sizeof");
  /* passes */
  for (size_t i = 0; i < full.n_passes; i++) {
    clr_pass_info p = CLR_PASS_INFO_INIT;
    s = clr_last_timing_pass(ctx, i, &p);
    TU_CHECK(s == CLR_OK && p.struct_size == sizeof p && p.n_in >= 1 &&
                 p.local_size >= 1 && p.global_size % p.local_size == 0 &&
                 (i > 0 || p.n_in == N),
             "pass %zu: n_in %zu global %zu local %zu", i, p.n_in,
             p.global_size, p.local_size);
  }
  clr_pass_info p = CLR_PASS_INFO_INIT;
  TU_CHECK(clr_last_timing_pass(ctx, full.n_passes, &p) ==
               CLR_ERR_INVALID_ARGUMENT,
           "clr_last_timing_pass past n_passes");
  union {
    clr_pass_info p;
    unsigned char b[sizeof(clr_pass_info)];
  } pp;
  memset(&pp, 0xA5, sizeof pp);
  pp.p.struct_size = (uint32_t)offsetof(clr_pass_info, ms);
  past = 0;
  s = clr_last_timing_pass(ctx, 0, &pp.p);
  for (size_t i = offsetof(clr_pass_info, ms); i < sizeof pp; i++)
    past += pp.b[i] != 0xA5;
  TU_CHECK(s == CLR_OK && pp.p.n_in == N && past == 0,
           "clr_last_timing_pass into a shorter clr_pass_info");
  p.struct_size = 0;
  TU_CHECK(clr_last_timing_pass(ctx, 0, &p) == CLR_ERR_INVALID_ARGUMENT,
           "clr_last_timing_pass, struct_size 0");

  /* tuning */
  clr_tuning t = CLR_TUNING_INIT, saved = CLR_TUNING_INIT;
  TU_CHECK(clr_get_tuning(ctx, &saved) == CLR_OK && saved.reduce_wg > 0 &&
               clr_tuning_origin(ctx)[0] != '\0',
           "clr_get_tuning, origin '%s'", clr_tuning_origin(ctx));
  TU_CHECK(strcmp(clr_tuning_origin(NULL), "") == 0,
           "clr_tuning_origin(NULL) is \"\"");
  union {
    clr_tuning t;
    unsigned char b[sizeof(clr_tuning)];
  } tp;
  memset(&tp, 0xA5, sizeof tp);
  tp.t.struct_size = (uint32_t)offsetof(clr_tuning, reduce_min_groups_cu);
  past = 0;
  s = clr_get_tuning(ctx, &tp.t);
  for (size_t i = offsetof(clr_tuning, reduce_min_groups_cu); i < sizeof tp;
       i++)
    past += tp.b[i] != 0xA5;
  TU_CHECK(s == CLR_OK && tp.t.reduce_wg == saved.reduce_wg && past == 0,
           "clr_get_tuning into a shorter clr_tuning");
  /* set: the fields past a short struct keep the context's values (an
   * invalid one there is never read) */
  t = saved;
  t.reduce_wg = 64;
  t.reduce_min_groups_cu = 100000; /* past its limit */
  t.struct_size = (uint32_t)offsetof(clr_tuning, reduce_min_groups_cu);
  s = clr_set_tuning(ctx, &t);
  clr_tuning got = CLR_TUNING_INIT;
  clr_get_tuning(ctx, &got);
  TU_CHECK(s == CLR_OK && got.reduce_wg == 64 &&
               got.reduce_min_groups_cu == saved.reduce_min_groups_cu &&
               strcmp(clr_tuning_origin(ctx),
                      "set by the caller (clr_set_tuning)") == 0,
           "clr_set_tuning of a shorter struct: %s, reduce.wg %zu, "
           "min_groups_cu %u (kept), origin '%s'",
           clr_status_name(s), got.reduce_wg, got.reduce_min_groups_cu,
           clr_tuning_origin(ctx));
  t.struct_size = sizeof t;
  s = clr_set_tuning(ctx, &t);
  TU_CHECK(s == CLR_ERR_INVALID_ARGUMENT &&
               detail_says(clr_context_error(ctx), "min_groups_cu"),
           "clr_set_tuning of the whole struct reads the bad value: %s (%s)",
           clr_status_name(s), clr_context_error(ctx));
  t.struct_size = 0;
  s = clr_set_tuning(ctx, &t);
  TU_CHECK(s == CLR_ERR_INVALID_ARGUMENT &&
               detail_says(clr_context_error(ctx), "CLR_TUNING_INIT"),
           "clr_set_tuning, struct_size 0: %s (%s)", clr_status_name(s),
           clr_context_error(ctx));
  t.struct_size = sizeof t + 8;
  s = clr_set_tuning(ctx, &t);
  TU_CHECK(s == CLR_ERR_VERSION &&
               detail_says(clr_context_error(ctx), "more than"),
           "clr_set_tuning, struct_size past sizeof: %s (%s)",
           clr_status_name(s), clr_context_error(ctx));
  TU_EXPECT_STATUS(clr_set_tuning(ctx, &saved), CLR_OK, "tuning restored");
}

/* ------------------------------------------------------------ defaults */

/* The passes of the context's last call, as (n_in, global, local). */
typedef struct shape {
  size_t n;
  size_t p[CLR_MAX_PASSES][3];
} shape;
static shape shape_of(clr_context *ctx) {
  shape s;
  memset(&s, 0, sizeof s);
  clr_timing t = CLR_TIMING_INIT;
  if (clr_last_timing(ctx, &t) != CLR_OK)
    return s;
  for (size_t i = 0; i < t.n_passes && i < CLR_MAX_PASSES; i++) {
    clr_pass_info p = CLR_PASS_INFO_INIT;
    if (clr_last_timing_pass(ctx, i, &p) != CLR_OK)
      break;
    s.p[i][0] = p.n_in;
    s.p[i][1] = p.global_size;
    s.p[i][2] = p.local_size;
    s.n = i + 1;
  }
  return s;
}

static size_t scan_wrong(const int32_t *out) {
  uint32_t run = 0;
  size_t bad = 0;
  for (size_t i = 0; i < N; i++) {
    run += (uint32_t)xi[i];
    bad += (uint32_t)out[i] != run;
  }
  return bad;
}

static void named_defaults(clr_context *ctx) {
  TU_CHECK(CLR_ACCUMULATE_IN(CLR_LONG) == CLR_LONG &&
               (unsigned)CLR_TYPE_DEFAULT >= CLR_TYPE_COUNT &&
               (unsigned)CLR_KERNEL_DEFAULT >= CLR_KERNEL_COUNT &&
               clr_type_size(CLR_TYPE_DEFAULT) == 0 &&
               !clr_kernel_is_scan(CLR_KERNEL_DEFAULT) &&
               clr_kernel_supports(CLR_KERNEL_DEFAULT, CLR_SUM, CLR_FLOAT) ==
                   CLR_ERR_INVALID_ARGUMENT,
           "CLR_ACCUMULATE_IN(t) is t; the named defaults are no type and "
           "no kernel");
  /* A reduction: the coarse kernel (argmax is its alone), its passes. */
  clr_options d = CLR_OPTIONS_INIT, c = CLR_OPTIONS_INIT;
  c.kernel = CLR_REDUCE_COARSE;
  clr_value v;
  clr_status s = clr_reduce_host(ctx, &d, CLR_ARGMAX, CLR_INT, xi, N, &v);
  TU_CHECK(s == CLR_OK && v.index == 1234 && v.v.i == xi[1234],
           "CLR_KERNEL_DEFAULT argmax: %s at %llu", clr_status_name(s),
           (unsigned long long)v.index);
  s = clr_reduce_host(ctx, &d, CLR_SUM, CLR_FLOAT, xf, N, &v);
  shape sd = shape_of(ctx);
  clr_status s2 = clr_reduce_host(ctx, &c, CLR_SUM, CLR_FLOAT, xf, N, &v);
  shape sc = shape_of(ctx);
  TU_CHECK(s == CLR_OK && s2 == CLR_OK && sd.n >= 1 &&
               memcmp(&sd, &sc, sizeof sd) == 0,
           "CLR_KERNEL_DEFAULT reduces as the coarse kernel named (%zu "
           "passes)",
           sd.n);
  /* accumulate_in CLR_TYPE_DEFAULT: the rule; a type: that type */
  s = clr_reduce_host(ctx, &d, CLR_SUM, CLR_INT, xi, N, &v);
  TU_CHECK(s == CLR_OK && v.type == CLR_LONG &&
               clr_options_result_type(&d, CLR_SUM, CLR_INT) == CLR_LONG &&
               clr_scan_output_type(&d, CLR_HALF) == CLR_FLOAT,
           "CLR_TYPE_DEFAULT: int sum in long, half scanned into float");
  d.accumulate_in = CLR_DOUBLE;
  s = clr_reduce_host(ctx, &d, CLR_SUM, CLR_FLOAT, xf, N, &v);
  TU_CHECK(s == CLR_OK && v.type == CLR_DOUBLE,
           "accumulate_in CLR_DOUBLE: float sum in %s", clr_type_name(v.type));
  d.accumulate_in = CLR_TYPE_COUNT;
  s = clr_reduce_host(ctx, &d, CLR_SUM, CLR_FLOAT, xf, N, &v);
  TU_CHECK(s == CLR_ERR_INVALID_ARGUMENT &&
               detail_says(clr_context_error(ctx), "CLR_TYPE_DEFAULT"),
           "accumulate_in CLR_TYPE_COUNT: %s (%s)", clr_status_name(s),
           clr_context_error(ctx));
  /* A scan: the tuned scan, whatever the tuning names. */
  clr_tuning saved = CLR_TUNING_INIT;
  clr_get_tuning(ctx, &saved);
  const clr_kernel tuned[] = {saved.scan_kernel, CLR_SCAN_DECOUPLED,
                              CLR_SCAN_KOGGE_STONE, CLR_SCAN_BRENT_KUNG};
  int32_t *out = tu_xmalloc(N * sizeof *out);
  for (size_t k = 0; k < sizeof tuned / sizeof tuned[0]; k++) {
    clr_tuning t = saved;
    t.scan_kernel = tuned[k];
    TU_EXPECT_STATUS(clr_set_tuning(ctx, &t), CLR_OK, "scan.kernel set");
    clr_options_init(&d);
    memset(out, 0x5a, N * sizeof *out);
    s = clr_scan_host(ctx, &d, CLR_SUM, CLR_INT, xi, out, N);
    size_t bad = scan_wrong(out);
    sd = shape_of(ctx);
    c = d;
    c.kernel = tuned[k];
    memset(out, 0x5a, N * sizeof *out);
    s2 = clr_scan_host(ctx, &c, CLR_SUM, CLR_INT, xi, out, N);
    sc = shape_of(ctx);
    TU_CHECK(s == CLR_OK && s2 == CLR_OK && bad == 0 && scan_wrong(out) == 0 &&
                 sd.n >= 1 && memcmp(&sd, &sc, sizeof sd) == 0,
             "tuning scan.kernel=%s: CLR_KERNEL_DEFAULT scans (%zu wrong) "
             "with its passes (%zu)",
             clr_kernel_name(tuned[k]), bad, sd.n);
  }
  TU_EXPECT_STATUS(clr_set_tuning(ctx, &saved), CLR_OK, "tuning restored");
  /* A reduction kernel in a scan, the coarse one included: refused. */
  c = (clr_options)CLR_OPTIONS_INIT;
  c.kernel = CLR_REDUCE_COARSE;
  memset(out, 0x5a, N * sizeof *out);
  s = clr_scan_host(ctx, &c, CLR_SUM, CLR_INT, xi, out, N);
  TU_CHECK(s == CLR_ERR_INVALID_ARGUMENT &&
               detail_says(clr_context_error(ctx), "CLR_KERNEL_DEFAULT") &&
               out[0] == 0x5a5a5a5a,
           "the coarse kernel in a scan: %s (%s)", clr_status_name(s),
           clr_context_error(ctx));
  /* A segmented scan takes the default, a segmented reduction the
   * default or the coarse kernel. */
  uint64_t offs[3] = {0, N / 2, N};
  clr_options_init(&d);
  s = clr_scan_segments_host(ctx, &d, CLR_SUM, CLR_INT, xi, out, N, offs, 2);
  s2 = clr_scan_segments_host(ctx, &c, CLR_SUM, CLR_INT, xi, out, N, offs, 2);
  TU_CHECK(s == CLR_OK && s2 == CLR_ERR_INVALID_ARGUMENT,
           "segmented scan: default %s, coarse %s", clr_status_name(s),
           clr_status_name(s2));
  int64_t res[2];
  s = clr_reduce_segments_host(ctx, &d, CLR_SUM, CLR_INT, xi, N, offs, 2, res);
  s2 = clr_reduce_segments_host(ctx, &c, CLR_SUM, CLR_INT, xi, N, offs, 2, res);
  TU_CHECK(s == CLR_OK && s2 == CLR_OK,
           "segmented reduction: default %s, coarse %s", clr_status_name(s),
           clr_status_name(s2));
  free(out);
}

int main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  for (size_t i = 0; i < N; i++) {
    xf[i] = (float)((i * 37) % 101) * 0.01f;
    yf[i] = (float)((i * 11) % 7);
    xi[i] = (int32_t)((i * 7919) % 2001) - 1000;
  }
  xi[1234] = 5000; /* the maximum, once */
  v1_consumer();
  tu_section("a consumer of the v1 header");
  clr_context *ctx = tu_context();
  options_refused(ctx);
  tu_section("options: struct_size refused at every entry point");
  config_refused();
  tu_section("config: struct_size refused at every entry point");
  shorter_options(ctx);
  tu_section("options of an older, shorter header");
  shorter_config();
  tu_section("a config of an older, shorter header");
  output_structs(ctx);
  tu_section("clr_timing, clr_pass_info, clr_tuning: written up to "
             "struct_size");
  named_defaults(ctx);
  tu_section("CLR_KERNEL_DEFAULT, CLR_TYPE_DEFAULT");
  clr_context_release(ctx);
  return tu_finish("test_sized_structs");
}
