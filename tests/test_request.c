/* clr_run and clr_enqueue (clr_request): every kind through clr_run from
 * host arrays and from buffers (at offsets), several operations and
 * types, against CPU loops and src/check's references; the descriptor's
 * refusals, each CLR_ERR_INVALID_ARGUMENT (CLR_ERR_VERSION for a
 * struct_size from no header) with a one-line detail; clr_enqueue's
 * refusals of the kinds that still wait on the host; chains of
 * clr_enqueue calls (and of clr_dot_buffer_async and
 * clr_scan_heads_buffer_async) with no host sync between them and one
 * wait; a queue
 * per call (a second in-order queue of the context's cl_context: the work
 * runs there, in its order, and the context returns to its own queue; an
 * out-of-order queue; a queue of another cl_context refused). */
#include "scan_reference.h"
#include "segment_reference.h"
#include "test_util.h"

#include <CL/cl.h>
#include <math.h>
#include <stdint.h>

#define N 5003

static void expect_cl(cl_int err, const char *what) {
  if (err != CL_SUCCESS)
    tu_die("%s failed: %d", what, (int)err);
}

static clr_timing last_timing(clr_context *ctx) {
  clr_timing tm = CLR_TIMING_INIT;
  if (clr_last_timing(ctx, &tm) != CLR_OK)
    tu_die("clr_last_timing failed: %s", clr_context_error(ctx));
  return tm;
}

static clr_request request(clr_request_kind kind, clr_op op, clr_type type,
                           size_t n) {
  clr_request r;
  clr_request_init(&r);
  r.kind = kind;
  r.op = op;
  r.type = type;
  r.n = n;
  return r;
}

static clr_operand host(const void *p) {
  clr_operand o = {p, NULL, 0};
  return o;
}

static clr_operand buffer(cl_mem m, size_t offset) {
  clr_operand o = {NULL, m, offset};
  return o;
}

/* A buffer holding `at` elements of esize bytes of filler, then the
 * count elements of data (NULL: filler), then 3 more of filler. */
static cl_mem buffer_at(clr_context *ctx, size_t at, const void *data,
                        size_t count, size_t esize) {
  size_t bytes = (at + count + 3) * esize;
  unsigned char *b = tu_xmalloc(bytes);
  memset(b, 0x5a, bytes);
  if (data)
    memcpy(b + at * esize, data, count * esize);
  cl_mem m = tu_new_buffer(ctx, bytes, b);
  free(b);
  return m;
}

/* count elements of esize bytes from element at of m. */
static void read_at(clr_context *ctx, cl_mem m, size_t at, size_t count,
                    size_t esize, void *dst) {
  expect_cl(clEnqueueReadBuffer(clr_context_queue(ctx), m, CL_TRUE, at * esize,
                                count * esize, dst, 0, NULL, NULL),
            "clEnqueueReadBuffer");
}

/* Small integers (exact in every type's sums of N of them). */
static void *make_data(clr_type t, size_t n, uint64_t seed) {
  void *d = tu_xmalloc(n * clr_type_size(t));
  tu_rng r = {seed};
  int is_unsigned = t == CLR_UINT || t == CLR_ULONG;
  for (size_t i = 0; i < n; i++) {
    int64_t x = (int64_t)tu_below(&r, 101) - (is_unsigned ? 0 : 50);
    tu_store_i(t, d, i, x);
  }
  return d;
}

/* CSR offsets over n elements: segments of 0 to 300 elements. */
static size_t make_offsets(size_t n, uint64_t seed, uint64_t *offsets,
                           size_t max_segments) {
  tu_rng r = {seed};
  size_t s = 0;
  offsets[0] = 0;
  while (offsets[s] < n && s + 1 < max_segments) {
    uint64_t len = tu_below(&r, 5) == 0 ? 0 : 1 + tu_below(&r, 300);
    offsets[s + 1] = offsets[s] + len > n ? n : offsets[s] + len;
    s++;
  }
  offsets[s] = n;
  return s;
}

/* Element i of data (of type t, not half) as a double. */
static double elem(clr_type t, const void *data, size_t i) {
  switch (t) {
  case CLR_FLOAT:
    return ((const float *)data)[i];
  case CLR_DOUBLE:
    return ((const double *)data)[i];
  case CLR_INT:
    return ((const int32_t *)data)[i];
  case CLR_UINT:
    return ((const uint32_t *)data)[i];
  case CLR_LONG:
    return (double)((const int64_t *)data)[i];
  case CLR_ULONG:
    return (double)((const uint64_t *)data)[i];
  default:
    tu_die("elem: type %s", clr_type_name(t));
  }
}

static const char *side_name(int on_host) {
  return on_host ? "host" : "buffer";
}

/* ------------------------------------------------------ every kind */

static void check_reduce(clr_context *ctx, clr_op op, clr_type t, int on_host) {
  void *x = make_data(t, N, tu_seed(1, op, t, on_host));
  size_t es = clr_type_size(t), at = 3;
  clr_request r = request(CLR_REQ_REDUCE, op, t, N);
  cl_mem b = NULL;
  if (on_host) {
    r.input = host(x);
  } else {
    b = buffer_at(ctx, at, x, N, es);
    r.input = buffer(b, at);
  }
  clr_value got;
  memset(&got, 0, sizeof got);
  clr_status s = clr_run(ctx, &r, &got);
  char label[96];
  snprintf(label, sizeof label, "clr_run reduce %s %s (%s)", clr_op_name(op),
           clr_type_name(t), side_name(on_host));
  if (TU_EXPECT_STATUS(s, CLR_OK, label)) {
    tu_case c = {label, CLR_OPTIONS_INIT, op, t, x, N, NULL, 0};
    clr_timing tm = last_timing(ctx);
    tu_verify(&c, &got, &tm);
  } else {
    printf("  %s\n", clr_context_error(ctx));
  }
  if (b)
    clReleaseMemObject(b);
  free(x);
}

/* A reduction into an output buffer through clr_run: the result record
 * written at the output's element offset, as clr_reduce_buffer_async. */
static void check_reduce_into(clr_context *ctx) {
  const clr_type t = CLR_INT;
  int32_t *x = make_data(t, N, 77);
  cl_mem b = buffer_at(ctx, 0, x, N, sizeof *x);
  size_t rb = clr_result_bytes(NULL, CLR_ARGMAX, t);
  cl_mem out = buffer_at(ctx, 0, NULL, 4, rb);
  clr_request r = request(CLR_REQ_REDUCE, CLR_ARGMAX, t, N);
  r.input = buffer(b, 0);
  r.output = buffer(out, 2);
  clr_status s = clr_run(ctx, &r, NULL);
  TU_EXPECT_STATUS(s, CLR_OK, "clr_run reduce argmax into an output buffer");
  unsigned char rec[64];
  read_at(ctx, out, 2, 1, rb, rec);
  clr_value v = clr_result_at(CLR_ARGMAX, t, rec, 0);
  int32_t mx = x[0];
  uint64_t at = 0;
  for (size_t i = 1; i < N; i++)
    if (x[i] > mx) {
      mx = x[i];
      at = i;
    }
  TU_CHECK(v.v.i == mx && v.index == at,
           "clr_run reduce argmax into a buffer: %d at %llu, want %d at %llu",
           v.v.i, (unsigned long long)v.index, mx, (unsigned long long)at);
  clReleaseMemObject(out);
  clReleaseMemObject(b);
  free(x);
}

static void check_dot(clr_context *ctx, clr_type t, int on_host) {
  void *x = make_data(t, N, tu_seed(2, 0, t, on_host));
  void *y = make_data(t, N, tu_seed(3, 0, t, on_host));
  size_t es = clr_type_size(t);
  clr_request r = request(CLR_REQ_DOT, CLR_SUM, t, N);
  cl_mem bx = NULL, by = NULL;
  if (on_host) {
    r.input = host(x);
    r.input2 = host(y);
  } else {
    bx = buffer_at(ctx, 1, x, N, es);
    by = buffer_at(ctx, 5, y, N, es);
    r.input = buffer(bx, 1);
    r.input2 = buffer(by, 5);
  }
  clr_value got;
  memset(&got, 0, sizeof got);
  clr_status s = clr_run(ctx, &r, &got);
  double want = 0;
  for (size_t i = 0; i < N; i++)
    want += elem(t, x, i) * elem(t, y, i);
  char label[96];
  snprintf(label, sizeof label, "clr_run dot %s (%s)", clr_type_name(t),
           side_name(on_host));
  if (TU_EXPECT_STATUS(s, CLR_OK, label))
    TU_CHECK(clr_value_as_double(&got) == want &&
                 got.type == clr_options_result_type(NULL, CLR_SUM, t),
             "%s: %.17g (%s), want %.17g", label, clr_value_as_double(&got),
             clr_type_name(got.type), want);
  else
    printf("  %s\n", clr_context_error(ctx));
  if (bx)
    clReleaseMemObject(bx);
  if (by)
    clReleaseMemObject(by);
  free(x);
  free(y);
}

static void report_scan(const char *label, const clr_scan_check *res) {
  char gb[64], wb[64];
  TU_CHECK(res->ok, "%s: %zu bad, element %zu: got %s, want %s", label,
           res->n_bad, res->worst_index, tu_fmt(&res->got_worst, gb, sizeof gb),
           tu_fmt(&res->ref_worst, wb, sizeof wb));
}

/* A scan, in place or into another array, exclusive or not, into a wider
 * type or not. */
static void check_scan(clr_context *ctx, clr_op op, clr_type t, int on_host,
                       int exclusive, clr_type acc, int in_place) {
  clr_options o = CLR_OPTIONS_INIT;
  o.exclusive = exclusive;
  o.accumulate_in = acc;
  clr_type ot = clr_scan_output_type(&o, t);
  size_t es = clr_type_size(t), os = clr_type_size(ot);
  void *x = make_data(t, N, tu_seed(4, op, t, on_host));
  void *y = tu_xmalloc(N * os);
  memcpy(y, x, N * es);
  clr_request r = request(CLR_REQ_SCAN, op, t, N);
  r.options = &o;
  cl_mem bi = NULL, bo = NULL;
  if (on_host) {
    r.input = host(in_place ? y : x);
    r.output = host(y);
  } else {
    bi = buffer_at(ctx, 4, x, N, es);
    r.input = buffer(bi, 4);
    if (in_place) {
      r.output = r.input;
    } else {
      bo = buffer_at(ctx, 7, NULL, N, os);
      r.output = buffer(bo, 7);
    }
  }
  clr_status s = clr_run(ctx, &r, NULL);
  char label[128];
  snprintf(label, sizeof label, "clr_run scan %s %s -> %s%s%s (%s)",
           clr_op_name(op), clr_type_name(t), clr_type_name(ot),
           exclusive ? " exclusive" : "", in_place ? " in place" : "",
           side_name(on_host));
  if (TU_EXPECT_STATUS(s, CLR_OK, label)) {
    if (!on_host)
      read_at(ctx, in_place ? bi : bo, in_place ? 4 : 7, N, os, y);
    clr_scan_check res;
    clr_ref_scan_check_to(op, t, ot, exclusive, x, y, N,
                          last_timing(ctx).error_depth, 0, &res);
    report_scan(label, &res);
  } else {
    printf("  %s\n", clr_context_error(ctx));
  }
  if (bi)
    clReleaseMemObject(bi);
  if (bo)
    clReleaseMemObject(bo);
  free(x);
  free(y);
}

static void report_segments(const char *label, int done,
                            const clr_segments_check *chk) {
  char gb[64], wb[64];
  if (!done)
    tu_die("out of host memory checking %s", label);
  TU_CHECK(chk->ok, "%s: segment %zu: got %s, want %s", label, chk->worst_index,
           tu_fmt(&chk->got_worst, gb, sizeof gb),
           tu_fmt(&chk->ref_worst, wb, sizeof wb));
}

/* Segments (CSR offsets) or ranges (offset, length pairs). */
static void check_segments(clr_context *ctx, clr_request_kind kind, clr_op op,
                           clr_type t, int on_host) {
  enum { MAX_SEG = 64 };
  uint64_t offsets[MAX_SEG + 1], ranges[2 * 12];
  size_t n_seg;
  const uint64_t *segs;
  size_t seg_elems;
  if (kind == CLR_REQ_SEGMENTS) {
    n_seg = make_offsets(N, tu_seed(5, op, t, on_host), offsets, MAX_SEG);
    segs = offsets;
    seg_elems = n_seg + 1;
  } else {
    tu_rng g = {tu_seed(6, op, t, on_host)};
    n_seg = 12;
    for (size_t i = 0; i < n_seg; i++) {
      uint64_t a = tu_below(&g, N);
      ranges[2 * i] = a;
      ranges[2 * i + 1] = i == 3 ? 0 : tu_below(&g, N - a + 1);
    }
    segs = ranges;
    seg_elems = 2 * n_seg;
  }
  size_t es = clr_type_size(t), rb = clr_result_bytes(NULL, op, t);
  void *x = make_data(t, N, tu_seed(7, op, t, on_host));
  unsigned char *res = tu_xmalloc(n_seg * rb);
  clr_request r = request(kind, op, t, N);
  r.n_segments = n_seg;
  cl_mem bx = NULL, bs = NULL, bo = NULL;
  if (on_host) {
    r.input = host(x);
    r.segments = host(segs);
    r.output = host(res);
  } else {
    bx = buffer_at(ctx, 2, x, N, es);
    bs = buffer_at(ctx, 1, segs, seg_elems, sizeof(uint64_t));
    bo = buffer_at(ctx, 3, NULL, n_seg, rb);
    r.input = buffer(bx, 2);
    r.segments = buffer(bs, 1);
    r.output = buffer(bo, 3);
  }
  clr_status s = clr_run(ctx, &r, NULL);
  char label[96];
  snprintf(label, sizeof label, "clr_run %s %s %s (%s)",
           clr_request_kind_name(kind), clr_op_name(op), clr_type_name(t),
           side_name(on_host));
  if (TU_EXPECT_STATUS(s, CLR_OK, label)) {
    if (!on_host)
      read_at(ctx, bo, 3, n_seg, rb, res);
    clr_segments_check chk;
    clr_type rt = clr_options_result_type(NULL, op, t);
    size_t depth = last_timing(ctx).error_depth;
    int done = kind == CLR_REQ_SEGMENTS
                   ? clr_ref_segments_check(CLR_MAP_NONE, op, t, rt, x, segs,
                                            n_seg, res, depth, &chk)
                   : clr_ref_ranges_check(CLR_MAP_NONE, op, t, rt, x, segs,
                                          n_seg, res, depth, &chk);
    report_segments(label, done, &chk);
  } else {
    printf("  %s\n", clr_context_error(ctx));
  }
  if (bx)
    clReleaseMemObject(bx);
  if (bs)
    clReleaseMemObject(bs);
  if (bo)
    clReleaseMemObject(bo);
  free(res);
  free(x);
}

static void check_by_key(clr_context *ctx, clr_op op, clr_type kt, clr_type t,
                         int on_host) {
  size_t ks = clr_type_size(kt), es = clr_type_size(t),
         rb = clr_result_bytes(NULL, op, t);
  /* keys in runs of 1 to 40 */
  void *keys = tu_xmalloc(N * ks);
  uint64_t *offsets = tu_xmalloc((N + 1) * sizeof *offsets);
  tu_rng g = {tu_seed(8, op, kt, on_host)};
  size_t runs = 0;
  for (size_t i = 0; i < N; runs++) {
    size_t len = 1 + tu_below(&g, 40);
    offsets[runs] = i;
    for (size_t k = 0; k < len && i < N; k++, i++)
      tu_store_i(kt, keys, i, (int64_t)(runs % 7) - 3);
  }
  offsets[runs] = N;
  /* (equal neighbours merge: count the runs as the keys say) */
  size_t want_runs = 0;
  uint64_t *want_offsets = tu_xmalloc((N + 1) * sizeof *want_offsets);
  for (size_t i = 0; i < N; i++)
    if (i == 0 ||
        memcmp((char *)keys + i * ks, (char *)keys + (i - 1) * ks, ks) != 0)
      want_offsets[want_runs++] = i;
  want_offsets[want_runs] = N;
  void *x = make_data(t, N, tu_seed(9, op, t, on_host));
  void *ukeys = tu_xmalloc(N * ks);
  unsigned char *res = tu_xmalloc(N * rb);
  size_t n_runs = 0;
  clr_request r = request(CLR_REQ_BY_KEY, op, t, N);
  r.key_type = kt;
  r.n_runs = &n_runs;
  cl_mem bk = NULL, bx = NULL, bu = NULL, bo = NULL;
  if (on_host) {
    r.input = host(x);
    r.segments = host(keys);
    r.output = host(res);
    r.output_keys = host(ukeys);
  } else {
    bk = buffer_at(ctx, 1, keys, N, ks);
    bx = buffer_at(ctx, 2, x, N, es);
    bu = buffer_at(ctx, 3, NULL, want_runs, ks);
    bo = buffer_at(ctx, 4, NULL, want_runs, rb);
    r.segments = buffer(bk, 1);
    r.input = buffer(bx, 2);
    r.output_keys = buffer(bu, 3);
    r.output = buffer(bo, 4);
  }
  clr_status s = clr_run(ctx, &r, NULL);
  char label[96];
  snprintf(label, sizeof label, "clr_run by-key %s %s keys %s (%s)",
           clr_op_name(op), clr_type_name(t), clr_type_name(kt),
           side_name(on_host));
  if (TU_EXPECT_STATUS(s, CLR_OK, label) &&
      TU_CHECK(n_runs == want_runs, "%s: %zu runs, want %zu", label, n_runs,
               want_runs)) {
    if (!on_host) {
      read_at(ctx, bu, 3, n_runs, ks, ukeys);
      read_at(ctx, bo, 4, n_runs, rb, res);
    }
    int keys_ok = 1;
    for (size_t i = 0; i < n_runs; i++)
      keys_ok &= memcmp((char *)ukeys + i * ks,
                        (char *)keys + want_offsets[i] * ks, ks) == 0;
    TU_CHECK(keys_ok, "%s: the runs' keys", label);
    clr_segments_check chk;
    clr_type rt = clr_options_result_type(NULL, op, t);
    int done =
        clr_ref_segments_check(CLR_MAP_NONE, op, t, rt, x, want_offsets, n_runs,
                               res, last_timing(ctx).error_depth, &chk);
    report_segments(label, done, &chk);
  } else if (s != CLR_OK) {
    printf("  %s\n", clr_context_error(ctx));
  }
  cl_mem bufs[4] = {bk, bx, bu, bo};
  for (int i = 0; i < 4; i++)
    if (bufs[i])
      clReleaseMemObject(bufs[i]);
  free(keys);
  free(offsets);
  free(want_offsets);
  free(x);
  free(ukeys);
  free(res);
}

/* Segmented scans: by offsets, or by heads (flag bytes). */
static void check_scan_segments(clr_context *ctx, clr_request_kind kind,
                                clr_op op, clr_type t, int on_host,
                                int exclusive) {
  enum { MAX_SEG = 64 };
  uint64_t offsets[MAX_SEG + 1];
  size_t n_seg = make_offsets(N, tu_seed(10, op, t, on_host), offsets, MAX_SEG);
  uint8_t *heads = tu_xmalloc(N);
  memset(heads, 0, N);
  for (size_t s = 0; s < n_seg; s++)
    if (offsets[s] < N)
      heads[offsets[s]] = (uint8_t)(1 + s % 3);
  /* what the heads make of the offsets: the empty segments go */
  uint64_t head_offsets[MAX_SEG + 1];
  size_t n_head_seg = 0;
  for (size_t i = 0; i < N; i++)
    if (i == 0 || heads[i])
      head_offsets[n_head_seg++] = i;
  head_offsets[n_head_seg] = N;
  clr_options o = CLR_OPTIONS_INIT;
  o.exclusive = exclusive;
  clr_type ot = clr_scan_output_type(&o, t);
  size_t es = clr_type_size(t), os = clr_type_size(ot);
  void *x = make_data(t, N, tu_seed(11, op, t, on_host));
  void *y = tu_xmalloc(N * os);
  clr_request r = request(kind, op, t, N);
  r.options = &o;
  int by_offsets = kind == CLR_REQ_SCAN_SEGMENTS;
  if (by_offsets)
    r.n_segments = n_seg;
  cl_mem bx = NULL, bs = NULL, bo = NULL;
  if (on_host) {
    r.input = host(x);
    r.segments = by_offsets ? host(offsets) : host(heads);
    r.output = host(y);
  } else {
    bx = buffer_at(ctx, 4, x, N, es);
    bs = by_offsets ? buffer_at(ctx, 2, offsets, n_seg + 1, sizeof(uint64_t))
                    : buffer_at(ctx, 5, heads, N, 1);
    bo = buffer_at(ctx, 8, NULL, N, os);
    r.input = buffer(bx, 4);
    r.segments = buffer(bs, by_offsets ? 2 : 5);
    r.output = buffer(bo, 8);
  }
  clr_status s = clr_run(ctx, &r, NULL);
  char label[128];
  snprintf(label, sizeof label, "clr_run %s %s %s%s (%s)",
           clr_request_kind_name(kind), clr_op_name(op), clr_type_name(t),
           exclusive ? " exclusive" : "", side_name(on_host));
  if (TU_EXPECT_STATUS(s, CLR_OK, label)) {
    if (!on_host)
      read_at(ctx, bo, 8, N, os, y);
    clr_scan_check res;
    clr_ref_segmented_scan_check(
        op, t, ot, exclusive, x, y, by_offsets ? offsets : head_offsets,
        by_offsets ? n_seg : n_head_seg, last_timing(ctx).error_depth, 0, &res);
    report_scan(label, &res);
  } else {
    printf("  %s\n", clr_context_error(ctx));
  }
  if (bx)
    clReleaseMemObject(bx);
  if (bs)
    clReleaseMemObject(bs);
  if (bo)
    clReleaseMemObject(bo);
  free(heads);
  free(x);
  free(y);
}

static void every_kind(clr_context *ctx) {
  const clr_type types[] = {CLR_INT, CLR_FLOAT, CLR_LONG, CLR_DOUBLE};
  for (int on_host = 1; on_host >= 0; on_host--) {
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
      clr_type t = types[i];
      if (!tu_type_available(t))
        continue;
      check_reduce(ctx, CLR_SUM, t, on_host);
      check_reduce(ctx, i % 2 ? CLR_ARGMIN : CLR_MAX, t, on_host);
      check_dot(ctx, t, on_host);
      check_scan(ctx, i % 2 ? CLR_MAX : CLR_SUM, t, on_host, (int)i % 2,
                 CLR_TYPE_DEFAULT, 0);
      check_segments(ctx, CLR_REQ_SEGMENTS, i % 2 ? CLR_ARGMAX : CLR_SUM, t,
                     on_host);
      check_segments(ctx, CLR_REQ_RANGES, i % 2 ? CLR_SUM : CLR_MIN, t,
                     on_host);
      check_by_key(ctx, i % 2 ? CLR_MIN : CLR_SUM, i % 2 ? CLR_LONG : CLR_INT,
                   t, on_host);
      check_scan_segments(ctx, CLR_REQ_SCAN_SEGMENTS, i % 2 ? CLR_MIN : CLR_SUM,
                          t, on_host, (int)i % 2);
      check_scan_segments(ctx, CLR_REQ_SCAN_HEADS, i % 2 ? CLR_SUM : CLR_MAX, t,
                          on_host, 0);
    }
    check_reduce(ctx, CLR_MEAN, CLR_INT, on_host);
    /* an int scan written as long, in place on a buffer */
    check_scan(ctx, CLR_SUM, CLR_INT, on_host, 0, CLR_LONG, 0);
    check_scan(ctx, CLR_SUM, CLR_UINT, on_host, 1, CLR_TYPE_DEFAULT, 1);
  }
  check_reduce_into(ctx);
  tu_section("every kind through clr_run, host arrays and buffers");
}

/* ------------------------------------------------------ refusals */

/* One refused request: the status, and a one-line detail holding want
 * (when not NULL). */
static void expect_refusal(clr_context *ctx, clr_status got, clr_status want,
                           const char *what, const char *want_text) {
  const char *d = clr_context_error(ctx);
  TU_CHECK(got == want && d[0] && !strchr(d, '\n') &&
               (!want_text || strstr(d, want_text)),
           "%s: %s, want %s; detail '%s'%s%s", what, clr_status_name(got),
           clr_status_name(want), d, want_text ? ", want it to name " : "",
           want_text ? want_text : "");
}

static void refusals(clr_context *ctx) {
  int32_t x[16] = {1, 2, 3}, y[16];
  uint64_t offs[3] = {0, 8, 16};
  size_t n_runs = 0;
  clr_value v;
  cl_mem b = tu_new_buffer(ctx, sizeof x, x);
  cl_mem o = tu_new_buffer(ctx, 64, NULL);
  clr_request r, base = request(CLR_REQ_REDUCE, CLR_SUM, CLR_INT, 16);
  base.input = host(x);
  const clr_status INV = CLR_ERR_INVALID_ARGUMENT;

  /* the valid base runs */
  TU_EXPECT_STATUS(clr_run(ctx, &base, &v), CLR_OK, "the refusals' base");
  TU_EXPECT_STATUS(clr_run(NULL, &base, &v), INV, "clr_run(NULL context)");
  expect_refusal(ctx, clr_run(ctx, NULL, &v), INV, "no request", "NULL");

#define REFUSED(what, want_text, ...)                                          \
  do {                                                                         \
    r = base;                                                                  \
    __VA_ARGS__;                                                               \
    expect_refusal(ctx, clr_run(ctx, &r, &v), INV, what, want_text);           \
  } while (0)
  REFUSED("an unknown kind", "kind", r.kind = (clr_request_kind)99);
  REFUSED("type not set", "type", r.type = CLR_TYPE_DEFAULT);
  REFUSED("a type past the table", "type", r.type = (clr_type)77);
  REFUSED("no input", "input", r.input = host(NULL));
  REFUSED("input both host and buffer", "both", r.input.buffer = b);
  REFUSED("a reduce given input2", "input2", r.input2 = host(y));
  REFUSED("an offset of an operand not taken", "input2", r.input2.offset = 3);
  REFUSED("a reduce given segments", "segments", r.segments = host(offs));
  REFUSED("a reduce given n_segments", "n_segments", r.n_segments = 2);
  REFUSED("a reduce given key_type", "key_type", r.key_type = CLR_INT);
  REFUSED("a reduce given n_runs", "n_runs", r.n_runs = &n_runs);
  REFUSED("a reduce into a host output", "buffer", r.output = host(y));
  REFUSED("a reduce of a host array into a buffer", "buffer",
          r.output = buffer(o, 0));
  REFUSED("an offset past the address space", "offset",
          r.input.offset = SIZE_MAX / 2);
  REFUSED("a dot with op max", "CLR_SUM", r.kind = CLR_REQ_DOT; r.op = CLR_MAX;
          r.input2 = host(y));
  REFUSED("a dot without input2", "input2", r.kind = CLR_REQ_DOT);
  REFUSED("a dot given output", "output", r.kind = CLR_REQ_DOT;
          r.input2 = host(y); r.output = host(y));
  REFUSED("a scan without output", "output", r.kind = CLR_REQ_SCAN);
  REFUSED("a scan of a host array into a buffer", "host arrays",
          r.kind = CLR_REQ_SCAN;
          r.output = buffer(o, 0));
  REFUSED("a scan given segments", "segments", r.kind = CLR_REQ_SCAN;
          r.output = host(y); r.segments = host(offs));
  REFUSED("segments without offsets", "offsets", r.kind = CLR_REQ_SEGMENTS;
          r.n_segments = 2; r.output = host(y));
  REFUSED("ranges given input2", "input2", r.kind = CLR_REQ_RANGES;
          r.n_segments = 1; r.segments = host(offs); r.output = host(y);
          r.input2 = host(y));
  REFUSED("scan-heads given n_segments", "n_segments",
          r.kind = CLR_REQ_SCAN_HEADS;
          r.segments = host(x); r.output = host(y); r.n_segments = 4);
  REFUSED("by-key without key_type", "key_type", r.kind = CLR_REQ_BY_KEY;
          r.segments = host(x); r.output = host(y); r.output_keys = host(y);
          r.n_runs = &n_runs);
  REFUSED("by-key without n_runs", "n_runs", r.kind = CLR_REQ_BY_KEY;
          r.key_type = CLR_INT; r.segments = host(x); r.output = host(y);
          r.output_keys = host(y));
  REFUSED("by-key without output_keys", "output_keys", r.kind = CLR_REQ_BY_KEY;
          r.key_type = CLR_INT; r.segments = host(x); r.output = host(y);
          r.n_runs = &n_runs);
  REFUSED("by-key with keys in a buffer, values on the host", "host arrays",
          r.kind = CLR_REQ_BY_KEY;
          r.key_type = CLR_INT; r.segments = buffer(b, 0); r.output = host(y);
          r.output_keys = host(y); r.n_runs = &n_runs);
  /* the fields after the first clr_request */
  REFUSED("scratch as a host array", "scratch.host", r.scratch = host(y));
  REFUSED("scratch_bytes without scratch", "without scratch.buffer",
          r.scratch_bytes = 64);
  REFUSED("a reduce given status", "status", r.status = buffer(o, 0));
  REFUSED("status under clr_run", "clr_run returns the check's verdict",
          r.kind = CLR_REQ_SEGMENTS;
          r.segments = host(x); r.n_segments = 1; r.output = host(y);
          r.status = buffer(o, 0));
  REFUSED("run_count under clr_run", "run_count", r.kind = CLR_REQ_BY_KEY;
          r.key_type = CLR_INT; r.segments = host(x); r.output = host(y);
          r.output_keys = host(y); r.n_runs = &n_runs;
          r.run_count = buffer(o, 0));
  /* the driver's own checks, reached through clr_run */
  REFUSED("n of 0 (the driver's check)", NULL, r.n = 0);
#undef REFUSED
  r = request(CLR_REQ_BY_KEY, CLR_SUM, CLR_INT, 16);
  r.key_type = CLR_INT;
  r.input = buffer(b, 0);
  r.segments = buffer(b, 0);
  r.output = buffer(o, 0);
  r.output_keys = buffer(o, 0);
  r.n_runs = &n_runs;
  cl_event no_ev = NULL;
  expect_refusal(ctx, clr_enqueue(ctx, &r, 0, NULL, &no_ev), INV,
                 "clr_enqueue of a by-key with n_runs", "run_count");
  r.n_runs = NULL;
  expect_refusal(ctx, clr_enqueue(ctx, &r, 0, NULL, &no_ev), INV,
                 "clr_enqueue of a by-key without run_count", "run_count");

  /* result against the kind */
  r = base;
  expect_refusal(ctx, clr_run(ctx, &r, NULL), INV, "a reduce without result",
                 "result");
  r = base;
  r.input = buffer(b, 0);
  r.output = buffer(o, 0);
  expect_refusal(ctx, clr_run(ctx, &r, &v), INV,
                 "a reduce into a buffer given result too", "result");
  r = base;
  r.kind = CLR_REQ_SCAN;
  r.output = host(y);
  expect_refusal(ctx, clr_run(ctx, &r, &v), INV, "a scan given result",
                 "result");

  /* struct_size */
  r = base;
  r.struct_size = 0;
  expect_refusal(ctx, clr_run(ctx, &r, &v), INV, "struct_size 0",
                 "clr_request_init");
  r.struct_size = (uint32_t)sizeof(clr_request) + 8;
  expect_refusal(ctx, clr_run(ctx, &r, &v), CLR_ERR_VERSION,
                 "struct_size past this library's", "struct_size");
  r.struct_size = 6;
  expect_refusal(ctx, clr_run(ctx, &r, &v), CLR_ERR_VERSION,
                 "struct_size inside a field", "struct_size");
  r.struct_size = (uint32_t)offsetof(clr_request, queue);
  expect_refusal(ctx, clr_run(ctx, &r, &v), CLR_ERR_VERSION,
                 "struct_size shorter than the first clr_request",
                 "struct_size");
  r.struct_size = 0;
  cl_event ev = (cl_event)1;
  expect_refusal(ctx, clr_enqueue(ctx, &r, 0, NULL, &ev), INV,
                 "clr_enqueue: struct_size 0", "clr_request_init");
  TU_CHECK(ev == NULL, "a refused clr_enqueue sets *event to NULL");

  /* clr_enqueue: the kinds that still wait on the host, host arrays
   * (segments and scan-segments enqueued: tests/test_async_segments.c;
   * by-key: tests/test_async_by_key.c; matrices: tests/test_matrix.c;
   * ranges: tests/test_async_ranges.c) */
  for (int k = 0; k < CLR_REQ_KIND_COUNT; k++) {
    if (k == CLR_REQ_REDUCE || k == CLR_REQ_SCAN || k == CLR_REQ_DOT ||
        k == CLR_REQ_SCAN_HEADS || k == CLR_REQ_SEGMENTS ||
        k == CLR_REQ_SCAN_SEGMENTS || k == CLR_REQ_BY_KEY ||
        k == CLR_REQ_MATRIX || k == CLR_REQ_RANGES)
      continue;
    r = request((clr_request_kind)k, CLR_SUM, CLR_INT, 16);
    r.input = buffer(b, 0);
    if (k == CLR_REQ_DOT)
      r.input2 = buffer(b, 0);
    else
      r.output = buffer(o, 0);
    if (k != CLR_REQ_DOT && k != CLR_REQ_SCAN_HEADS)
      r.segments = buffer(b, 0);
    if (k == CLR_REQ_SEGMENTS || k == CLR_REQ_SCAN_SEGMENTS ||
        k == CLR_REQ_RANGES)
      r.n_segments = 1;
    if (k == CLR_REQ_SCAN_HEADS)
      r.segments = buffer(b, 0);
    if (k == CLR_REQ_BY_KEY) {
      r.key_type = CLR_INT;
      r.output_keys = buffer(o, 0);
      r.run_count = buffer(o, 0);
    }
    if (k == CLR_REQ_MATRIX) { /* a 4 x 4 matrix, no segments */
      r.n = 0;
      r.rows = 4;
      r.cols = 4;
      r.segments = buffer(NULL, 0);
    }
    char what[64];
    snprintf(what, sizeof what, "clr_enqueue of a %s request",
             clr_request_kind_name((clr_request_kind)k));
    expect_refusal(ctx, clr_enqueue(ctx, &r, 0, NULL, &ev), CLR_ERR_UNSUPPORTED,
                   what, clr_request_kind_name((clr_request_kind)k));
  }
  r = base;
  r.kind = CLR_REQ_SCAN;
  r.output = host(y);
  expect_refusal(ctx, clr_enqueue(ctx, &r, 0, NULL, &ev), CLR_ERR_UNSUPPORTED,
                 "clr_enqueue of host arrays", "host arrays");
  r = base;
  r.input = buffer(b, 0);
  expect_refusal(ctx, clr_enqueue(ctx, &r, 0, NULL, &ev), INV,
                 "clr_enqueue of a reduce without output", "output");
  r.output = buffer(o, 0);
  /* means and exact sums are enqueued (tests/test_async_ranges.c); an
   * exact sum in accumulate_in's type is refused, as by clr_run */
  clr_options wide = CLR_OPTIONS_INIT;
  wide.exact = 1;
  wide.accumulate_in = CLR_DOUBLE;
  r.type = CLR_FLOAT;
  r.options = &wide;
  expect_refusal(ctx, clr_enqueue(ctx, &r, 0, NULL, &ev), CLR_ERR_UNSUPPORTED,
                 "clr_enqueue of an exact sum accumulated in double",
                 "accumulate");
  /* the dot and the scan-heads enqueued: what they refuse */
  r = request(CLR_REQ_DOT, CLR_SUM, CLR_INT, 4);
  r.input = buffer(b, 0);
  r.input2 = buffer(b, 0);
  expect_refusal(ctx, clr_enqueue(ctx, &r, 0, NULL, &ev), INV,
                 "clr_enqueue of a dot without output", "output");
  r.output = host(y);
  expect_refusal(ctx, clr_enqueue(ctx, &r, 0, NULL, &ev), INV,
                 "clr_enqueue of a dot into a host output", "host");
  r.output = buffer(o, 0);
  clr_options xo = CLR_OPTIONS_INIT;
  xo.exact = 1;
  r.type = CLR_FLOAT;
  r.options = &xo;
  expect_refusal(ctx, clr_enqueue(ctx, &r, 0, NULL, &ev), CLR_ERR_UNSUPPORTED,
                 "clr_enqueue of an exact dot", "exact");
  TU_CHECK(ev == NULL, "a refused enqueued dot sets *event to NULL");
  clr_options mo = CLR_OPTIONS_INIT;
  mo.map = CLR_MAP_SQUARE;
  r.options = &mo;
  expect_refusal(ctx, clr_enqueue(ctx, &r, 0, NULL, &ev), CLR_ERR_UNSUPPORTED,
                 "clr_enqueue of a dot with a one-array map", "map");
  r.options = NULL;
  r.type = CLR_INT;
  expect_refusal(ctx, clr_enqueue(ctx, &r, 1, NULL, &ev), INV,
                 "clr_enqueue of a dot: 1 event, no wait list", "wait list");
  r.op = CLR_MAX;
  expect_refusal(ctx, clr_enqueue(ctx, &r, 0, NULL, &ev), INV,
                 "clr_enqueue of a dot with op max", "CLR_SUM");
  r = request(CLR_REQ_DOT, CLR_SUM, CLR_INT, 4);
  r.input = host(x);
  r.input2 = host(x);
  expect_refusal(ctx, clr_enqueue(ctx, &r, 0, NULL, &ev), INV,
                 "clr_enqueue of a dot of host arrays without output",
                 "output");
  r.output = host(y);
  expect_refusal(ctx, clr_enqueue(ctx, &r, 0, NULL, &ev), INV,
                 "clr_enqueue of a dot of host arrays", "buffers");
  expect_refusal(ctx,
                 clr_dot_buffer_async(ctx, NULL, CLR_INT, b, 0, NULL, 0, 4, o,
                                      0, 0, NULL, &ev),
                 INV, "clr_dot_buffer_async without y", "y");
  expect_refusal(ctx,
                 clr_dot_buffer_async(ctx, NULL, CLR_INT, b, 0, b, 14, 4, o, 0,
                                      0, NULL, &ev),
                 INV, "clr_dot_buffer_async: y past its buffer's end", "y");
  expect_refusal(ctx,
                 clr_dot_buffer_async(ctx, NULL, CLR_INT, b, 0, b, 0, 4, NULL,
                                      0, 0, NULL, &ev),
                 INV, "clr_dot_buffer_async without a result buffer", "result");
  r = request(CLR_REQ_SCAN_HEADS, CLR_SUM, CLR_INT, 16);
  r.input = host(x);
  r.segments = host(x);
  r.output = host(y);
  expect_refusal(ctx, clr_enqueue(ctx, &r, 0, NULL, &ev), CLR_ERR_UNSUPPORTED,
                 "clr_enqueue of a scan-heads of host arrays", "host arrays");
  r.input = buffer(b, 0);
  r.segments = buffer(b, 0);
  r.output = buffer(o, 0);
  expect_refusal(ctx, clr_enqueue(ctx, &r, 1, NULL, &ev), INV,
                 "clr_enqueue of a scan-heads: 1 event, no wait list",
                 "wait list");
  r.op = CLR_ARGMAX;
  expect_refusal(ctx, clr_enqueue(ctx, &r, 0, NULL, &ev), CLR_ERR_UNSUPPORTED,
                 "clr_enqueue of an argmax scan-heads", "argmax");
  expect_refusal(ctx,
                 clr_scan_heads_buffer_async(ctx, NULL, CLR_SUM, CLR_INT, b, 0,
                                             o, 0, 16, NULL, 0, 0, NULL, &ev),
                 INV, "clr_scan_heads_buffer_async without heads", "heads");

  /* a queue of another cl_context */
  cl_device_id dev = NULL;
  expect_cl(clGetCommandQueueInfo(clr_context_queue(ctx), CL_QUEUE_DEVICE,
                                  sizeof dev, &dev, NULL),
            "clGetCommandQueueInfo");
  cl_int err;
  cl_context other = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  expect_cl(err, "clCreateContext");
  cl_command_queue oq = clCreateCommandQueue(other, dev, 0, &err);
  expect_cl(err, "clCreateCommandQueue");
  r = base;
  r.queue = oq;
  expect_refusal(ctx, clr_run(ctx, &r, &v), INV,
                 "a queue of another cl_context", "cl_context");
  r.input = buffer(b, 0);
  r.output = buffer(o, 0);
  expect_refusal(ctx, clr_enqueue(ctx, &r, 0, NULL, &ev), INV,
                 "clr_enqueue on a queue of another cl_context", "cl_context");
  clReleaseCommandQueue(oq);
  clReleaseContext(other);
  /* and the context still works */
  TU_EXPECT_STATUS(clr_run(ctx, &base, &v), CLR_OK, "after the refusals");
  TU_CHECK(v.v.l == 6, "after the refusals: sum %lld, want 6",
           (long long)v.v.l);
  TU_CHECK(strcmp(clr_request_kind_name(CLR_REQ_KIND_COUNT), "?") == 0 &&
               strcmp(clr_request_kind_name(CLR_REQ_BY_KEY), "by-key") == 0,
           "clr_request_kind_name");
  clReleaseMemObject(b);
  clReleaseMemObject(o);
  tu_section("refusals");
}

/* ------------------------------------------------------ clr_enqueue */

#define CHAIN_N 100003

/* scan A into S, max of S into R[0], sum of S into R[1], min of R[0..1]
 * into R[2]: each waiting for the one before, the first for `gate`, a user
 * event still unset while they are enqueued (so none of them waits on the
 * host), then one wait. */
static void chain(clr_context *ctx, cl_command_queue q) {
  const clr_type t = CLR_LONG;
  int64_t *a = make_data(t, CHAIN_N, 99);
  cl_context cl = clr_context_cl_context(ctx);
  cl_int err;
  cl_event gate = clCreateUserEvent(cl, &err);
  expect_cl(err, "clCreateUserEvent");
  cl_mem ab = tu_new_buffer(ctx, CHAIN_N * sizeof *a, a);
  cl_mem sb = tu_new_buffer(ctx, CHAIN_N * sizeof *a, NULL);
  cl_mem rb = tu_new_buffer(ctx, 3 * sizeof *a, NULL);
  cl_event e[4] = {NULL, NULL, NULL, NULL};
  clr_request r = request(CLR_REQ_SCAN, CLR_SUM, t, CHAIN_N);
  r.queue = q;
  r.input = buffer(ab, 0);
  r.output = buffer(sb, 0);
  clr_status s = clr_enqueue(ctx, &r, 1, &gate, &e[0]);
  TU_EXPECT_STATUS(s, CLR_OK, "chain: enqueue the scan");
  r.kind = CLR_REQ_REDUCE;
  r.op = CLR_MAX;
  r.input = buffer(sb, 0);
  r.output = buffer(rb, 0);
  s = clr_enqueue(ctx, &r, 1, &e[0], &e[1]);
  TU_EXPECT_STATUS(s, CLR_OK, "chain: enqueue the max");
  r.op = CLR_SUM;
  r.output = buffer(rb, 1);
  s = clr_enqueue(ctx, &r, 1, &e[1], &e[2]);
  TU_EXPECT_STATUS(s, CLR_OK, "chain: enqueue the sum");
  r.op = CLR_MIN;
  r.n = 2;
  r.input = buffer(rb, 0);
  r.output = buffer(rb, 2);
  s = clr_enqueue(ctx, &r, 1, &e[2], &e[3]);
  TU_EXPECT_STATUS(s, CLR_OK, "chain: enqueue the min of both");
  cl_int status = CL_COMPLETE;
  if (e[3])
    expect_cl(clGetEventInfo(e[3], CL_EVENT_COMMAND_EXECUTION_STATUS,
                             sizeof status, &status, NULL),
              "clGetEventInfo");
  TU_CHECK(e[0] && e[1] && e[2] && e[3] && status != CL_COMPLETE,
           "chain: four events, the last pending while the gate is unset");
  expect_cl(clSetUserEventStatus(gate, CL_COMPLETE), "clSetUserEventStatus");
  if (e[3])
    expect_cl(clWaitForEvents(1, &e[3]), "clWaitForEvents");
  int64_t got[3] = {0, 0, 0};
  read_at(ctx, rb, 0, 3, sizeof *got, got);
  int64_t run = 0, mx = INT64_MIN, sum = 0;
  for (size_t i = 0; i < CHAIN_N; i++) {
    run += a[i];
    mx = run > mx ? run : mx;
    sum += run;
  }
  int64_t mn = mx < sum ? mx : sum;
  TU_CHECK(got[0] == mx && got[1] == sum && got[2] == mn,
           "chain%s: max %lld (want %lld), sum %lld (want %lld), min %lld "
           "(want %lld)",
           q ? " on a queue of the call's" : "", (long long)got[0],
           (long long)mx, (long long)got[1], (long long)sum, (long long)got[2],
           (long long)mn);
  for (int i = 0; i < 4; i++)
    if (e[i])
      clReleaseEvent(e[i]);
  clReleaseEvent(gate);
  clReleaseMemObject(ab);
  clReleaseMemObject(sb);
  clReleaseMemObject(rb);
  free(a);
}

/* scan-heads of A (flag bytes H) into S, the dot of S with itself into
 * R[0], the sum of S into R[1] (three clr_enqueue calls), the dot of S
 * with A into R[2] (clr_dot_buffer_async) and the scan-heads of A from
 * element 1 (heads from 1) into S2 from element 2
 * (clr_scan_heads_buffer_async): each waiting for the one before, the
 * first for an unset user event while they are all enqueued, then one
 * wait; results against CPU loops. */
#define HEADS_N 30011

static double heads_fold(clr_op op, double acc, double x) {
  return op == CLR_MAX   ? (x > acc ? x : acc)
         : op == CLR_MIN ? (x < acc ? x : acc)
                         : acc + x;
}

/* The inclusive segmented scan of n elements of a (type t) by heads. */
static void heads_scan_ref(clr_op op, clr_type t, const void *a,
                           const uint8_t *heads, size_t n, double *out) {
  double run = 0;
  for (size_t i = 0; i < n; i++) {
    double x = elem(t, a, i);
    run = i == 0 || heads[i] ? x : heads_fold(op, run, x);
    out[i] = run;
  }
}

static int close_to(clr_type t, double got, double want) {
  if (!tu_is_float(t))
    return got == want;
  double tol = (t == CLR_FLOAT ? 1e-5 : 1e-12) * (fabs(want) + 1);
  return fabs(got - want) <= tol;
}

static void chain_heads_dot(clr_context *ctx, clr_type t, clr_op op) {
  const size_t n = HEADS_N;
  size_t es = clr_type_size(t), rs = clr_result_bytes(NULL, CLR_SUM, t);
  clr_type rt = clr_options_result_type(NULL, CLR_SUM, t);
  void *a = make_data(t, n, tu_seed(7, op, t, 0));
  uint8_t *h = tu_xmalloc(n);
  tu_rng rng = {tu_seed(8, op, t, 0)};
  for (size_t i = 0; i < n; i++)
    h[i] = tu_below(&rng, 97) == 0 ? (uint8_t)(1 + tu_below(&rng, 200)) : 0;
  cl_context cl = clr_context_cl_context(ctx);
  cl_int err;
  cl_event gate = clCreateUserEvent(cl, &err);
  expect_cl(err, "clCreateUserEvent");
  cl_mem ab = tu_new_buffer(ctx, n * es, a);
  cl_mem hb = tu_new_buffer(ctx, n, h);
  cl_mem sb = tu_new_buffer(ctx, n * es, NULL);
  cl_mem s2b = tu_new_buffer(ctx, (n + 1) * es, NULL);
  cl_mem rb = tu_new_buffer(ctx, 4 * rs, NULL);
  cl_event e[5] = {NULL, NULL, NULL, NULL, NULL};
  char label[96];
  snprintf(label, sizeof label, "heads chain (%s scan-heads, %s)",
           clr_op_name(op), clr_type_name(t));

  clr_request r = request(CLR_REQ_SCAN_HEADS, op, t, n);
  r.input = buffer(ab, 0);
  r.segments = buffer(hb, 0);
  r.output = buffer(sb, 0);
  clr_status s = clr_enqueue(ctx, &r, 1, &gate, &e[0]);
  TU_EXPECT_STATUS(s, CLR_OK, "heads chain: enqueue the scan-heads");
  clr_timing tm = last_timing(ctx);
  int no_times = tm.n_passes >= 1;
  for (size_t i = 0; i < tm.n_passes; i++) {
    clr_pass_info pi = CLR_PASS_INFO_INIT;
    no_times &= clr_last_timing_pass(ctx, i, &pi) == CLR_OK && pi.n_in > 0 &&
                pi.global_size > 0 && pi.ms == 0;
  }
  TU_CHECK(no_times,
           "%s: the enqueued scan-heads' timing has its %zu passes' shapes, "
           "no times",
           label, tm.n_passes);
  r = request(CLR_REQ_DOT, CLR_SUM, t, n);
  r.input = buffer(sb, 0);
  r.input2 = buffer(sb, 0);
  r.output = buffer(rb, 0);
  s = clr_enqueue(ctx, &r, 1, &e[0], &e[1]);
  TU_EXPECT_STATUS(s, CLR_OK, "heads chain: enqueue the dot of S with itself");
  r = request(CLR_REQ_REDUCE, CLR_SUM, t, n);
  r.input = buffer(sb, 0);
  r.output = buffer(rb, 1);
  s = clr_enqueue(ctx, &r, 1, &e[1], &e[2]);
  TU_EXPECT_STATUS(s, CLR_OK, "heads chain: enqueue the sum of S");
  s = clr_dot_buffer_async(ctx, NULL, t, sb, 0, ab, 0, n, rb, 2, 1, &e[2],
                           &e[3]);
  TU_EXPECT_STATUS(s, CLR_OK, "heads chain: clr_dot_buffer_async of S and A");
  s = clr_scan_heads_buffer_async(ctx, NULL, op, t, ab, 1, s2b, 2, n - 1, hb, 1,
                                  1, &e[3], &e[4]);
  TU_EXPECT_STATUS(s, CLR_OK,
                   "heads chain: clr_scan_heads_buffer_async at offsets");
  cl_int status = CL_COMPLETE;
  if (e[4])
    expect_cl(clGetEventInfo(e[4], CL_EVENT_COMMAND_EXECUTION_STATUS,
                             sizeof status, &status, NULL),
              "clGetEventInfo");
  TU_CHECK(e[0] && e[1] && e[2] && e[3] && e[4] && status != CL_COMPLETE,
           "%s: five events, the last pending while the gate is unset", label);
  expect_cl(clSetUserEventStatus(gate, CL_COMPLETE), "clSetUserEventStatus");
  if (e[4])
    expect_cl(clWaitForEvents(1, &e[4]), "clWaitForEvents");

  /* the CPU's */
  double *ref = tu_xmalloc(n * sizeof *ref);
  heads_scan_ref(op, t, a, h, n, ref);
  double dot = 0, sum = 0, dot_a = 0;
  for (size_t i = 0; i < n; i++) {
    dot += ref[i] * ref[i];
    sum += ref[i];
    dot_a += ref[i] * elem(t, a, i);
  }
  void *got_s = tu_xmalloc((n + 1) * es);
  read_at(ctx, sb, 0, n, es, got_s);
  int ok = 1;
  for (size_t i = 0; i < n; i++)
    ok &= elem(t, got_s, i) == ref[i];
  TU_CHECK(ok, "%s: S is the CPU's segmented scan", label);
  unsigned char got_r[4 * 16];
  read_at(ctx, rb, 0, 3, rs, got_r);
  double want[3] = {dot, sum, dot_a};
  const char *names[3] = {"dot(S, S)", "sum(S)", "dot(S, A)"};
  for (size_t k = 0; k < 3; k++) {
    clr_value v = clr_result_at(CLR_SUM, rt, got_r, k);
    TU_CHECK(v.type == rt && close_to(t, clr_value_as_double(&v), want[k]),
             "%s: %s %.17g (%s), want %.17g", label, names[k],
             clr_value_as_double(&v), clr_type_name(v.type), want[k]);
  }
  /* the scan-heads at offsets: element 1 always starts a segment */
  uint8_t *h1 = tu_xmalloc(n);
  memcpy(h1, h + 1, n - 1);
  heads_scan_ref(op, t, (const char *)a + es, h1, n - 1, ref);
  read_at(ctx, s2b, 2, n - 1, es, got_s);
  ok = 1;
  for (size_t i = 0; i + 1 < n; i++)
    ok &= elem(t, got_s, i) == ref[i];
  TU_CHECK(ok, "%s: the scan-heads at offsets is the CPU's", label);
  for (int i = 0; i < 5; i++)
    if (e[i])
      clReleaseEvent(e[i]);
  clReleaseEvent(gate);
  clReleaseMemObject(ab);
  clReleaseMemObject(hb);
  clReleaseMemObject(sb);
  clReleaseMemObject(s2b);
  clReleaseMemObject(rb);
  free(h1);
  free(got_s);
  free(ref);
  free(h);
  free(a);
}

static void heads_chains(clr_context *ctx) {
  const clr_type types[] = {CLR_INT, CLR_LONG, CLR_FLOAT, CLR_DOUBLE};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (tu_type_available(types[i]))
      chain_heads_dot(ctx, types[i], CLR_SUM);
  chain_heads_dot(ctx, CLR_INT, CLR_MAX);
  chain_heads_dot(ctx, CLR_LONG, CLR_MIN);
  /* clr_run of a dot into a buffer (the enqueued work, waited for) */
  const size_t n = 777;
  int32_t x[777];
  int64_t want = 0;
  for (size_t i = 0; i < n; i++) {
    x[i] = (int32_t)(i % 17) - 8;
    want += (int64_t)x[i] * x[i];
  }
  size_t rs = clr_result_bytes(NULL, CLR_SUM, CLR_INT);
  cl_mem xb = tu_new_buffer(ctx, sizeof x, x);
  cl_mem rb = tu_new_buffer(ctx, 3 * rs, NULL);
  clr_request r = request(CLR_REQ_DOT, CLR_SUM, CLR_INT, n - 3);
  r.input = buffer(xb, 3);
  r.input2 = buffer(xb, 3);
  r.output = buffer(rb, 2);
  for (size_t i = 0; i < 3; i++)
    want -= (int64_t)x[i] * x[i];
  TU_EXPECT_STATUS(clr_run(ctx, &r, NULL), CLR_OK,
                   "clr_run of a dot into a buffer");
  unsigned char got[3 * 16];
  read_at(ctx, rb, 0, 3, rs, got);
  clr_value v = clr_result_at(
      CLR_SUM, clr_options_result_type(NULL, CLR_SUM, CLR_INT), got, 2);
  TU_CHECK(clr_value_as_double(&v) == (double)want,
           "clr_run of a dot into element 2 of a buffer: %.17g, want %lld",
           clr_value_as_double(&v), (long long)want);
  clReleaseMemObject(xb);
  clReleaseMemObject(rb);
}

/* ------------------------------------------------------ per-call queue */

static cl_command_queue event_queue(cl_event e) {
  cl_command_queue q = NULL;
  if (e)
    expect_cl(clGetEventInfo(e, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL),
              "clGetEventInfo");
  return q;
}

static void per_call_queue(clr_context *ctx) {
  cl_context cl = clr_context_cl_context(ctx);
  cl_command_queue own = clr_context_queue(ctx);
  cl_device_id dev = NULL;
  expect_cl(clGetCommandQueueInfo(own, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL),
            "clGetCommandQueueInfo");
  cl_int err;
  /* in order, without profiling (the context's has it) */
  cl_command_queue q2 = clCreateCommandQueue(cl, dev, 0, &err);
  expect_cl(err, "clCreateCommandQueue");
  const size_t n = 200003;
  int32_t *a = tu_xmalloc(n * sizeof *a);
  for (size_t i = 0; i < n; i++)
    a[i] = (int32_t)(i % 13);
  cl_mem ab = tu_new_buffer(ctx, n * sizeof *a, a);
  cl_mem rb = tu_new_buffer(ctx, 4 * sizeof(int64_t), NULL);

  /* A fill on q2, held by a user event, then an enqueued sum on q2 with
   * no wait list: it runs on q2 after the fill (in q2's order). */
  cl_event gate = clCreateUserEvent(cl, &err);
  expect_cl(err, "clCreateUserEvent");
  const int32_t seven = 7;
  expect_cl(clEnqueueFillBuffer(q2, ab, &seven, sizeof seven, 0, n * sizeof *a,
                                1, &gate, NULL),
            "clEnqueueFillBuffer");
  clr_request r = request(CLR_REQ_REDUCE, CLR_SUM, CLR_INT, n);
  r.input = buffer(ab, 0);
  r.output = buffer(rb, 0);
  r.queue = q2;
  cl_event e1 = NULL, e2 = NULL;
  clr_status s = clr_enqueue(ctx, &r, 0, NULL, &e1);
  TU_EXPECT_STATUS(s, CLR_OK, "clr_enqueue on a queue of the call's");
  TU_CHECK(event_queue(e1) == q2,
           "clr_enqueue on q2: its event is a command of q2");
  /* The context's next call runs on its own queue, after the one on q2
   * (the context orders its calls), reading what it wrote. */
  r.queue = NULL;
  r.n = 1;
  r.input = buffer(rb, 0);
  r.type = CLR_LONG;
  r.output = buffer(rb, 1);
  s = clr_enqueue(ctx, &r, 0, NULL, &e2);
  TU_EXPECT_STATUS(s, CLR_OK, "clr_enqueue back on the context's queue");
  TU_CHECK(event_queue(e2) == own,
           "the next call's event is a command of the context's queue");
  cl_int status = CL_COMPLETE;
  if (e2)
    expect_cl(clGetEventInfo(e2, CL_EVENT_COMMAND_EXECUTION_STATUS,
                             sizeof status, &status, NULL),
              "clGetEventInfo");
  TU_CHECK(status != CL_COMPLETE,
           "the context's next call waits (on the device) for the call on "
           "q2, held by the fill's gate");
  expect_cl(clSetUserEventStatus(gate, CL_COMPLETE), "clSetUserEventStatus");
  if (e2)
    expect_cl(clWaitForEvents(1, &e2), "clWaitForEvents");
  int64_t got[2] = {0, 0};
  read_at(ctx, rb, 0, 2, sizeof(int64_t), got);
  TU_CHECK(got[0] == 7 * (int64_t)n && got[1] == got[0],
           "the sum on q2 after q2's fill: %lld, want %lld; read back on the "
           "context's queue: %lld",
           (long long)got[0], 7 * (long long)n, (long long)got[1]);
  if (e1)
    clReleaseEvent(e1);
  if (e2)
    clReleaseEvent(e2);
  clReleaseEvent(gate);

  /* clr_run on q2: host arrays and buffers, every kind's path through
   * the swap (a scan and segments), results right. */
  for (size_t i = 0; i < n; i++)
    a[i] = (int32_t)(i % 13) - 6;
  expect_cl(clEnqueueWriteBuffer(q2, ab, CL_FALSE, 0, n * sizeof *a, a, 0, NULL,
                                 NULL),
            "clEnqueueWriteBuffer");
  int64_t want = 0;
  for (size_t i = 0; i < n; i++)
    want += a[i];
  clr_value v;
  r = request(CLR_REQ_REDUCE, CLR_SUM, CLR_INT, n);
  r.queue = q2;
  r.input = buffer(ab, 0);
  s = clr_run(ctx, &r, &v); /* after q2's write, by q2's order */
  TU_CHECK(s == CLR_OK && v.v.l == want,
           "clr_run on q2 of a buffer q2 wrote: %s, %lld, want %lld",
           clr_status_name(s), (long long)v.v.l, (long long)want);
  r.input = host(a);
  s = clr_run(ctx, &r, &v);
  TU_CHECK(s == CLR_OK && v.v.l == want,
           "clr_run on q2 of a host array: %s, %lld, want %lld",
           clr_status_name(s), (long long)v.v.l, (long long)want);
  (void)last_timing(ctx); /* q2 has no profiling: times 0, no failure */
  int32_t *scanned = tu_xmalloc(n * sizeof *scanned);
  r.kind = CLR_REQ_SCAN;
  r.output = host(scanned);
  s = clr_run(ctx, &r, NULL);
  TU_EXPECT_STATUS(s, CLR_OK, "clr_run scan on q2");
  int ok = 1;
  int32_t run = 0;
  for (size_t i = 0; i < n; i++) {
    run += a[i];
    ok &= scanned[i] == run;
  }
  TU_CHECK(ok, "clr_run scan on q2: the CPU's prefix sums");
  free(scanned);

  /* Calls on q2 and on the context's queue, alternated with no wait: the
   * context's own buffers (partials, staging) stay in one sequence.  Sums
   * (long) into rs, maxima (int) into rm. */
  cl_mem rs = tu_new_buffer(ctx, 16 * sizeof(int64_t), NULL);
  cl_mem rm = tu_new_buffer(ctx, 16 * sizeof(int32_t), NULL);
  cl_event last = NULL;
  for (int i = 0; i < 16; i++) {
    int is_max = i % 3 == 0;
    clr_request c = request(CLR_REQ_REDUCE, is_max ? CLR_MAX : CLR_SUM, CLR_INT,
                            n - (size_t)i);
    c.input = buffer(ab, (size_t)i);
    c.output = buffer(is_max ? rm : rs, (size_t)i);
    c.queue = i % 2 ? q2 : NULL;
    cl_event e = NULL;
    s = clr_enqueue(ctx, &c, 0, NULL, &e);
    TU_EXPECT_STATUS(s, CLR_OK, "alternated clr_enqueue");
    if (last)
      clReleaseEvent(last);
    last = e;
  }
  if (last) {
    expect_cl(clWaitForEvents(1, &last), "clWaitForEvents");
    clReleaseEvent(last);
  }
  int64_t sums[16];
  int32_t maxima[16];
  read_at(ctx, rs, 0, 16, sizeof *sums, sums);
  read_at(ctx, rm, 0, 16, sizeof *maxima, maxima);
  ok = 1;
  for (int i = 0; i < 16; i++) {
    int64_t w = i % 3 == 0 ? INT64_MIN : 0;
    for (size_t k = (size_t)i; k < n; k++)
      w = i % 3 == 0 ? (a[k] > w ? a[k] : w) : w + a[k];
    ok &= (i % 3 == 0 ? maxima[i] : sums[i]) == w;
  }
  TU_CHECK(ok, "16 calls alternating q2 and the context's queue: right");
  clReleaseMemObject(rs);
  clReleaseMemObject(rm);

  /* The chain on q2. */
  chain(ctx, q2);

  /* An out-of-order queue: the call waits for it and runs on the
   * context's in-order queue. */
  cl_command_queue_properties qp = 0;
  expect_cl(
      clGetDeviceInfo(dev, CL_DEVICE_QUEUE_PROPERTIES, sizeof qp, &qp, NULL),
      "clGetDeviceInfo");
  if (qp & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) {
    cl_command_queue q3 = clCreateCommandQueue(
        cl, dev, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
    expect_cl(err, "clCreateCommandQueue (out of order)");
    r = request(CLR_REQ_REDUCE, CLR_SUM, CLR_INT, n);
    r.queue = q3;
    r.input = buffer(ab, 0);
    s = clr_run(ctx, &r, &v);
    TU_CHECK(s == CLR_OK && v.v.l == want,
             "clr_run on an out-of-order queue: %s, %lld, want %lld",
             clr_status_name(s), (long long)v.v.l, (long long)want);
    r.output = buffer(rb, 3);
    cl_event e = NULL;
    s = clr_enqueue(ctx, &r, 0, NULL, &e);
    TU_EXPECT_STATUS(s, CLR_OK, "clr_enqueue beside an out-of-order queue");
    TU_CHECK(event_queue(e) != q3,
             "beside an out-of-order queue the work runs on the context's "
             "in-order one");
    if (e) {
      expect_cl(clWaitForEvents(1, &e), "clWaitForEvents");
      clReleaseEvent(e);
    }
    int64_t got3 = 0;
    read_at(ctx, rb, 3, 1, sizeof got3, &got3);
    TU_CHECK(got3 == want, "clr_enqueue beside an out-of-order queue: %lld",
             (long long)got3);
    clReleaseCommandQueue(q3);
  }

  clReleaseMemObject(ab);
  clReleaseMemObject(rb);
  clReleaseCommandQueue(q2);
  free(a);
  tu_section("a queue per call");
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "-v") == 0)
      tu_verbose = 1;
  clr_context *ctx = tu_context();
  refusals(ctx);
  every_kind(ctx);
  chain(ctx, NULL);
  tu_section("a chain of clr_enqueue calls, one wait");
  heads_chains(ctx);
  tu_section("scan-heads and dots enqueued: chains, one wait");
  per_call_queue(ctx);
  clr_context_release(ctx);
  return tu_finish("test_request");
}
