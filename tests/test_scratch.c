/* A caller's scratch (clr_request.scratch, clr_request_scratch_size) for
 * every kind of buffers that takes one beyond scan and by-key
 * (test_async_by_key.c has those): reductions and dot products (their
 * value under clr_run, into a buffer under both calls: sums, argmin,
 * minmax, means and NaN-skipping means, exact sums and means), segments
 * (sums, maxima, argmin, means and NaN-skipping means, long and short
 * segments, rows, both layouts), segmented scans by offsets and by heads
 * (inclusive, exclusive), ranges (short ones gathered, sorted runs, long
 * overlapping ones; a bad one still refused under clr_run) and matrices
 * (columns and rows, splits folded by a second launch, means, both
 * layouts).  The data are small integers, so that clr_run's ranges in
 * scratch (clr_enqueue's passes) match its batches without it bit for
 * bit.  For each, under clr_run and clr_enqueue: the query's
 * size works as scratch from an aligned byte of a larger buffer, the
 * outputs bit for bit those of the same call without scratch (run first,
 * the outputs then overwritten), no context buffer allocated during the
 * call (the context's count of its own allocations, internal.h), the
 * caller's buffer left with its one reference, one byte less and a
 * misaligned start refused.  One size serves both calls: the query
 * gives the same bytes read as clr_run's and as clr_enqueue's (status
 * given).  Host arrays still refuse scratch. */
#include "internal.h"
#include "scratch_checks.h"
#include "test_util.h"

#include <CL/cl.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

static void fill_bytes(clr_context *ctx, cl_mem m, size_t bytes,
                       unsigned char v) {
  unsigned char *h = tu_xmalloc(bytes);
  memset(h, v, bytes);
  expect_cl(clEnqueueWriteBuffer(clr_context_queue(ctx), m, CL_TRUE, 0, bytes,
                                 h, 0, NULL, NULL),
            "clEnqueueWriteBuffer");
  free(h);
}

/* The outputs a case compares (at most three byte ranges of buffers). */
typedef struct outputs {
  size_t count;
  cl_mem mem[3];
  size_t at[3], bytes[3];
} outputs;

static void add_output_at(outputs *o, cl_mem m, size_t at, size_t bytes) {
  o->mem[o->count] = m;
  o->at[o->count] = at;
  o->bytes[o->count++] = bytes;
}

static void add_output(outputs *o, cl_mem m, size_t bytes) {
  add_output_at(o, m, 0, bytes);
}

/* A reduction's or dot product's value (clr_run without an output). */
static int returns_value(const clr_request *r) {
  return (r->kind == CLR_REQ_REDUCE || r->kind == CLR_REQ_DOT) &&
         !r->output.buffer;
}

/* r under clr_enqueue (waited for) or clr_run (its value to *v). */
static clr_status call_v(clr_context *ctx, const clr_request *r, int enqueue,
                         clr_value *v) {
  cl_event ev = NULL;
  clr_value unused;
  memset(v ? v : &unused, 0, sizeof unused);
  clr_status s = enqueue ? clr_enqueue(ctx, r, 0, NULL, &ev)
                         : clr_run(ctx, r, returns_value(r) ? v : NULL);
  if (ev) {
    expect_cl(clWaitForEvents(1, &ev), "clWaitForEvents");
    clReleaseEvent(ev);
  }
  return s;
}

static clr_status call(clr_context *ctx, const clr_request *r, int enqueue) {
  clr_value v;
  return call_v(ctx, r, enqueue, &v);
}

static void read_all(clr_context *ctx, const outputs *o, unsigned char **dst) {
  for (size_t i = 0; i < o->count; i++) {
    dst[i] = tu_xmalloc(o->bytes[i]);
    read_bytes(ctx, o->mem[i], o->at[i], o->bytes[i], dst[i]);
  }
}

/* The checks of the file's comment for request r (no scratch set) whose
 * outputs are o. */
static void check_scratch_want(clr_context *ctx, clr_request r,
                               const outputs *o, int enqueue, const char *what,
                               const unsigned char *want);

static void check_scratch(clr_context *ctx, clr_request r, const outputs *o,
                          int enqueue, const char *what) {
  check_scratch_want(ctx, r, o, enqueue, what, NULL);
}

/* want (NULL: none): output 0's bytes, which both calls must give too. */
static void check_scratch_want(clr_context *ctx, clr_request r,
                               const outputs *o, int enqueue, const char *what,
                               const unsigned char *want) {
  char label[256];
  snprintf(label, sizeof label, "%s (%s)", what,
           enqueue ? "clr_enqueue" : "clr_run");
  size_t bytes = 0;
  clr_status s = clr_request_scratch_size(ctx, &r, &bytes);
  if (!TU_EXPECT_STATUS(s, CLR_OK, label)) {
    printf("  %s\n", clr_context_error(ctx));
    return;
  }
  /* a matrix without splits reserves nothing */
  TU_CHECK(bytes > 0 || r.kind == CLR_REQ_MATRIX, "%s: %zu bytes of scratch",
           label, bytes);
  /* the same size read as clr_run's (status unset) */
  if (r.status.buffer) {
    clr_request other = r;
    other.status = buf_op(NULL, 0);
    size_t b2 = 0;
    TU_EXPECT_STATUS(clr_request_scratch_size(ctx, &other, &b2), CLR_OK,
                     "the size read as clr_run's");
    TU_CHECK(b2 == bytes, "%s: one size for both calls (%zu, %zu)", label,
             bytes, b2);
  }
  /* the call without scratch */
  unsigned char *ref[3] = {NULL}, *got[3] = {NULL};
  for (size_t i = 0; i < o->count; i++)
    fill_bytes(ctx, o->mem[i], o->at[i] + o->bytes[i], 0xa5);
  clr_value ref_v, got_v;
  s = call_v(ctx, &r, enqueue, &ref_v);
  if (!TU_EXPECT_STATUS(s, CLR_OK, label))
    printf("  without scratch: %s\n", clr_context_error(ctx));
  read_all(ctx, o, ref);
  /* in scratch, from byte `align` of a buffer with room on both sides */
  for (size_t i = 0; i < o->count; i++)
    fill_bytes(ctx, o->mem[i], o->at[i] + o->bytes[i], 0x5a);
  size_t align = base_align(ctx);
  cl_mem scratch = tu_new_buffer(ctx, bytes + 3 * align, NULL);
  fill_bytes(ctx, scratch, bytes + 3 * align, 0xee);
  r.scratch = buf_op(scratch, align);
  r.scratch_bytes = bytes;
  uint64_t allocs = ctx->scratch_allocs;
  s = call_v(ctx, &r, enqueue, &got_v);
  if (!TU_EXPECT_STATUS(s, CLR_OK, label))
    printf("  in scratch: %s\n", clr_context_error(ctx));
  if (returns_value(&r))
    TU_CHECK(tu_same(&ref_v, &got_v) && ref_v.index == got_v.index &&
                 ref_v.max_index == got_v.max_index,
             "%s: the value bit for bit", label);
  TU_CHECK(ctx->scratch_allocs == allocs,
           "%s: no context buffer allocated (%llu)", label,
           (unsigned long long)(ctx->scratch_allocs - allocs));
  read_all(ctx, o, got);
  for (size_t i = 0; i < o->count; i++) {
    size_t bad = SIZE_MAX;
    for (size_t b = 0; b < o->bytes[i] && bad == SIZE_MAX; b++)
      if (ref[i][b] != got[i][b])
        bad = b;
    TU_CHECK(bad == SIZE_MAX,
             "%s: output %zu bit for bit (first byte off: %zu)", label, i, bad);
    if (i == 0 && want) {
      size_t off = SIZE_MAX;
      for (size_t b = 0; b < o->bytes[0] && off == SIZE_MAX; b++)
        if (want[b] != ref[0][b] || want[b] != got[0][b])
          off = b;
      TU_CHECK(off == SIZE_MAX,
               "%s: the results of clr_run's batches without scratch (first "
               "byte off: %zu)",
               label, off);
    }
    free(ref[i]);
    free(got[i]);
  }
  expect_cl(clFinish(clr_context_queue(ctx)), "clFinish");
  TU_CHECK(settled_refs(scratch) == 1,
           "%s: the context keeps no reference to the scratch (%u)", label,
           ref_count(scratch));
  if (bytes == 0) {
    clReleaseMemObject(scratch);
    return;
  }
  /* one byte less: refused, both sizes named */
  r.scratch_bytes = bytes - 1;
  s = call(ctx, &r, enqueue);
  char size[64];
  snprintf(size, sizeof size, "%zu", bytes);
  TU_EXPECT_STATUS(s, CLR_ERR_INVALID_ARGUMENT, "one byte less of scratch");
  TU_CHECK(strstr(clr_context_error(ctx), size) != NULL,
           "%s: that refusal names both sizes: %s", label,
           clr_context_error(ctx));
  if (align > 1) {
    r.scratch = buf_op(scratch, align + 1);
    r.scratch_bytes = bytes;
    s = call(ctx, &r, enqueue);
    TU_EXPECT_STATUS(s, CLR_ERR_INVALID_ARGUMENT, "a misaligned scratch");
    TU_CHECK(strstr(clr_context_error(ctx), "alignment") != NULL,
             "%s: that refusal says why: %s", label, clr_context_error(ctx));
  }
  expect_cl(clFinish(clr_context_queue(ctx)), "clFinish");
  TU_CHECK(settled_refs(scratch) == 1, "%s: still one reference (%u)", label,
           ref_count(scratch));
  clReleaseMemObject(scratch);
}

/* Small integers as floats (NaNs among them where nan), or ints. */
static void *make_data(clr_type t, size_t n, uint64_t seed, int nan) {
  tu_rng rng = {seed};
  void *x = tu_xmalloc(n * clr_type_size(t));
  for (size_t i = 0; i < n; i++) {
    int64_t v = (int64_t)tu_below(&rng, 201) - 100;
    if (t == CLR_FLOAT)
      ((float *)x)[i] = nan && tu_below(&rng, 7) == 0 ? NAN : (float)v;
    else if (t == CLR_DOUBLE)
      ((double *)x)[i] = (double)v;
    else if (t == CLR_INT)
      ((int32_t *)x)[i] = (int32_t)v;
    else
      ((int64_t *)x)[i] = v;
  }
  return x;
}

/* n_segments + 1 offsets: `rows` equal rows, else random cuts (a few
 * empty segments among them). */
static uint64_t *make_offsets(size_t n, size_t ns, int rows, uint64_t seed) {
  tu_rng rng = {seed};
  uint64_t *o = tu_xmalloc((ns + 1) * sizeof *o);
  o[0] = 0;
  for (size_t s = 1; s < ns; s++)
    o[s] = rows ? s * (n / ns) : tu_below(&rng, n + 1);
  o[ns] = n;
  if (!rows) /* sorted */
    for (size_t i = 1; i < ns; i++)
      for (size_t j = i; j > 1 && o[j - 1] > o[j]; j--) {
        uint64_t t = o[j];
        o[j] = o[j - 1];
        o[j - 1] = t;
      }
  return o;
}

static const char *layout_name(clr_layout l) {
  return l == CLR_LAYOUT_STRIDED      ? "strided"
         : l == CLR_LAYOUT_CONTIGUOUS ? "contiguous"
                                      : "auto";
}

static void segments_case(clr_context *ctx, clr_op op, clr_type t, size_t n,
                          size_t ns, int rows, clr_layout layout) {
  char what[160];
  snprintf(what, sizeof what, "segments %s of %s, n %zu, %zu %s, %s",
           clr_op_name(op), clr_type_name(t), n, ns, rows ? "rows" : "segments",
           layout_name(layout));
  void *x = make_data(t, n, tu_seed(1, n, ns, op), op == CLR_NANMEAN);
  uint64_t *off = make_offsets(n, ns, rows, tu_seed(2, n, ns, rows));
  size_t rb = clr_result_bytes(NULL, op, t);
  cl_mem bx = tu_new_buffer(ctx, n * clr_type_size(t), x);
  cl_mem bo = tu_new_buffer(ctx, (ns + 1) * 8, off);
  cl_mem br = tu_new_buffer(ctx, ns * rb, NULL);
  cl_mem bs = tu_new_buffer(ctx, 8, NULL);
  clr_options opt;
  clr_options_init(&opt);
  opt.layout = layout;
  for (int enqueue = 0; enqueue < 2; enqueue++) {
    clr_request r;
    clr_request_init(&r);
    r.kind = CLR_REQ_SEGMENTS;
    r.op = op;
    r.type = t;
    r.n = n;
    r.options = &opt;
    r.input = buf_op(bx, 0);
    r.segments = buf_op(bo, 0);
    r.n_segments = ns;
    r.output = buf_op(br, 0);
    outputs o = {0};
    add_output(&o, br, ns * rb);
    if (enqueue) {
      r.status = buf_op(bs, 0);
      add_output(&o, bs, 8);
    }
    check_scratch(ctx, r, &o, enqueue, what);
  }
  cl_mem all[] = {bx, bo, br, bs};
  for (size_t i = 0; i < 4; i++)
    clReleaseMemObject(all[i]);
  free(x);
  free(off);
}

static void sscan_case(clr_context *ctx, clr_op op, clr_type t, size_t n,
                       size_t ns, int by_heads, int exclusive,
                       clr_layout layout) {
  char what[160];
  snprintf(what, sizeof what, "%s %s scan of %s by %s, n %zu, %zu segments, %s",
           exclusive ? "exclusive" : "inclusive", clr_op_name(op),
           clr_type_name(t), by_heads ? "heads" : "offsets", n, ns,
           layout_name(layout));
  void *x = make_data(t, n, tu_seed(3, n, ns, op), 0);
  uint64_t *off = make_offsets(n, ns, 0, tu_seed(4, n, ns, 0));
  uint8_t *heads = tu_xmalloc(n);
  memset(heads, 0, n);
  for (size_t s = 0; s < ns; s++)
    if (off[s] < n)
      heads[off[s]] = 1;
  clr_type ot = clr_scan_output_type(NULL, t);
  size_t ob = n * clr_type_size(ot);
  cl_mem bx = tu_new_buffer(ctx, n * clr_type_size(t), x);
  cl_mem bseg = by_heads ? tu_new_buffer(ctx, n, heads)
                         : tu_new_buffer(ctx, (ns + 1) * 8, off);
  cl_mem bout = tu_new_buffer(ctx, ob, NULL);
  cl_mem bs = tu_new_buffer(ctx, 8, NULL);
  clr_options opt;
  clr_options_init(&opt);
  opt.exclusive = exclusive;
  opt.layout = layout;
  for (int enqueue = 0; enqueue < 2; enqueue++) {
    clr_request r;
    clr_request_init(&r);
    r.kind = by_heads ? CLR_REQ_SCAN_HEADS : CLR_REQ_SCAN_SEGMENTS;
    r.op = op;
    r.type = t;
    r.n = n;
    r.options = &opt;
    r.input = buf_op(bx, 0);
    r.segments = buf_op(bseg, 0);
    r.n_segments = by_heads ? 0 : ns;
    r.output = buf_op(bout, 0);
    outputs o = {0};
    add_output(&o, bout, ob);
    if (enqueue && !by_heads) {
      r.status = buf_op(bs, 0);
      add_output(&o, bs, 8);
    }
    check_scratch(ctx, r, &o, enqueue, what);
  }
  cl_mem all[] = {bx, bseg, bout, bs};
  for (size_t i = 0; i < 4; i++)
    clReleaseMemObject(all[i]);
  free(x);
  free(off);
  free(heads);
}

static void matrix_case(clr_context *ctx, clr_op op, clr_type t, size_t rows,
                        size_t cols, size_t pitch, int axis,
                        clr_layout layout) {
  char what[160];
  snprintf(what, sizeof what,
           "matrix %s of %s, %zu x %zu (pitch %zu), axis "
           "%d, %s",
           clr_op_name(op), clr_type_name(t), rows, cols, pitch, axis,
           layout_name(layout));
  size_t elems = (rows - 1) * (pitch ? pitch : cols) + cols;
  void *x = make_data(t, elems, tu_seed(5, rows, cols, op), 0);
  size_t nres = axis ? rows : cols, rb = clr_result_bytes(NULL, op, t);
  cl_mem bx = tu_new_buffer(ctx, elems * clr_type_size(t), x);
  cl_mem br = tu_new_buffer(ctx, nres * rb, NULL);
  clr_options opt;
  clr_options_init(&opt);
  opt.layout = layout;
  for (int enqueue = 0; enqueue < 2; enqueue++) {
    clr_request r;
    clr_request_init(&r);
    r.kind = CLR_REQ_MATRIX;
    r.op = op;
    r.type = t;
    r.options = &opt;
    r.input = buf_op(bx, 0);
    r.output = buf_op(br, 0);
    r.rows = rows;
    r.cols = cols;
    r.pitch = pitch;
    r.axis = axis;
    outputs o = {0};
    add_output(&o, br, nres * rb);
    check_scratch(ctx, r, &o, enqueue, what);
  }
  clReleaseMemObject(bx);
  clReleaseMemObject(br);
  free(x);
}

/* A reduction (y NULL) or dot product of n elements from element `at`:
 * its value under clr_run, then into an output buffer under both calls. */
static void reduce_case(clr_context *ctx, clr_op op, clr_type t, size_t n,
                        size_t at, int dot, int exact) {
  char what[160];
  snprintf(what, sizeof what, "%s %s of %s, n %zu from %zu%s",
           dot ? "dot" : "reduce", clr_op_name(op), clr_type_name(t), n, at,
           exact ? ", exact" : "");
  size_t es = clr_type_size(t);
  void *x = make_data(t, n + at, tu_seed(6, n, at, op), op == CLR_NANMEAN);
  void *y = make_data(t, n + at, tu_seed(7, n, at, op), 0);
  cl_mem bx = tu_new_buffer(ctx, (n + at) * es, x);
  cl_mem by = tu_new_buffer(ctx, (n + at) * es, y);
  size_t rb = clr_result_bytes(NULL, op, t);
  cl_mem bo = tu_new_buffer(ctx, 3 * rb, NULL);
  clr_options opt;
  clr_options_init(&opt);
  opt.exact = exact;
  for (int form = 0; form < 3; form++) { /* value, clr_run, clr_enqueue */
    clr_request r;
    clr_request_init(&r);
    r.kind = dot ? CLR_REQ_DOT : CLR_REQ_REDUCE;
    r.op = op;
    r.type = t;
    r.n = n;
    r.options = &opt;
    r.input = buf_op(bx, at);
    if (dot)
      r.input2 = buf_op(by, at);
    outputs o = {0};
    char label[200];
    snprintf(label, sizeof label, "%s%s", what,
             form == 0 ? ", its value" : ", into a buffer");
    if (form) {
      r.output = buf_op(bo, 1);
      add_output_at(&o, bo, rb, rb);
    }
    check_scratch(ctx, r, &o, form == 2, label);
  }
  clReleaseMemObject(bx);
  clReleaseMemObject(by);
  clReleaseMemObject(bo);
  free(x);
  free(y);
}

/* n_ranges (offset, length) ranges over n elements: short ones (gathered
 * on the device), sorted runs (in place), and long overlapping ones. */
static void ranges_case(clr_context *ctx, clr_op op, clr_type t, size_t n,
                        size_t n_ranges, int kind_of) {
  char what[160];
  snprintf(what, sizeof what, "ranges %s of %s, n %zu, %zu %s ranges",
           clr_op_name(op), clr_type_name(t), n, n_ranges,
           kind_of == 0   ? "short"
           : kind_of == 1 ? "sorted"
                          : "long");
  tu_rng rng = {tu_seed(8, n, n_ranges, kind_of)};
  uint64_t *g = tu_xmalloc(2 * n_ranges * sizeof *g);
  for (size_t i = 0; i < n_ranges; i++) {
    uint64_t len = kind_of == 0   ? tu_below(&rng, 50)
                   : kind_of == 1 ? n / n_ranges / 2
                                  : tu_below(&rng, n + 1);
    uint64_t off =
        kind_of == 1 ? i * (n / n_ranges) : tu_below(&rng, n - len + 1);
    g[2 * i] = off;
    g[2 * i + 1] = len;
  }
  /* the data from element 3, the ranges from element 2 (ulongs) */
  void *x = make_data(t, n + 3, tu_seed(9, n, n_ranges, op), op == CLR_NANMEAN);
  uint64_t *g2 = tu_xmalloc((2 * n_ranges + 2) * sizeof *g2);
  g2[0] = g2[1] = UINT64_MAX;
  memcpy(g2 + 2, g, 2 * n_ranges * sizeof *g);
  size_t rb = clr_result_bytes(NULL, op, t);
  cl_mem bx = tu_new_buffer(ctx, (n + 3) * clr_type_size(t), x);
  cl_mem bg = tu_new_buffer(ctx, (2 * n_ranges + 2) * 8, g2);
  cl_mem br = tu_new_buffer(ctx, n_ranges * rb, NULL);
  cl_mem bs = tu_new_buffer(ctx, 8, NULL);
  unsigned char *want = tu_xmalloc(n_ranges * rb);
  for (int enqueue = 0; enqueue < 2; enqueue++) {
    clr_request r;
    clr_request_init(&r);
    r.kind = CLR_REQ_RANGES;
    r.op = op;
    r.type = t;
    r.n = n;
    r.input = buf_op(bx, 3);
    r.segments = buf_op(bg, 2);
    r.n_segments = n_ranges;
    r.output = buf_op(br, 0);
    if (!enqueue) { /* clr_run's batches without scratch, for both */
      TU_EXPECT_STATUS(clr_run(ctx, &r, NULL), CLR_OK, what);
      read_bytes(ctx, br, 0, n_ranges * rb, want);
    }
    outputs o = {0};
    add_output(&o, br, n_ranges * rb);
    if (enqueue) {
      r.status = buf_op(bs, 0);
      add_output(&o, bs, 8);
    }
    check_scratch_want(ctx, r, &o, enqueue, what, want);
  }
  free(want);
  free(g2);
  cl_mem all[] = {bx, bg, br, bs};
  for (size_t i = 0; i < 4; i++)
    clReleaseMemObject(all[i]);
  free(x);
  free(g);
}

/* clr_run of ranges in caller scratch checks them on the device: a bad
 * one is still refused, named as without scratch. */
static void bad_range(clr_context *ctx) {
  float x[100] = {0};
  uint64_t g[10] = {0, 5, 10, 5, 20, 5, 90, 11, 1, 1}; /* range 3 ends at 101 */
  cl_mem bx = tu_new_buffer(ctx, sizeof x, x), bg = tu_new_buffer(ctx, 80, g);
  cl_mem br = tu_new_buffer(ctx, 5 * 4, NULL);
  clr_request r;
  clr_request_init(&r);
  r.kind = CLR_REQ_RANGES;
  r.type = CLR_FLOAT;
  r.n = 100;
  r.input = buf_op(bx, 0);
  r.segments = buf_op(bg, 0);
  r.n_segments = 5;
  r.output = buf_op(br, 0);
  size_t bytes = 0;
  TU_EXPECT_STATUS(clr_request_scratch_size(ctx, &r, &bytes), CLR_OK,
                   "the scratch size of ranges with a bad one");
  cl_mem scratch = tu_new_buffer(ctx, bytes, NULL);
  r.scratch = buf_op(scratch, 0);
  r.scratch_bytes = bytes;
  TU_EXPECT_STATUS(clr_run(ctx, &r, NULL), CLR_ERR_INVALID_ARGUMENT,
                   "clr_run of a bad range in caller scratch");
  TU_CHECK(strstr(clr_context_error(ctx), "range 3 ") != NULL,
           "that refusal names range 3: %s", clr_context_error(ctx));
  r.scratch = buf_op(NULL, 0);
  r.scratch_bytes = 0;
  TU_EXPECT_STATUS(clr_run(ctx, &r, NULL), CLR_ERR_INVALID_ARGUMENT,
                   "the same without scratch");
  cl_mem all[] = {bx, bg, br, scratch};
  for (size_t i = 0; i < 4; i++)
    clReleaseMemObject(all[i]);
}

/* Host arrays keep the context's staging buffers: refused. */
static void host_refusal(clr_context *ctx) {
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[2];
  uint64_t off[3] = {0, 4, 8};
  cl_mem scratch = tu_new_buffer(ctx, 4096, NULL);
  clr_request r;
  clr_request_init(&r);
  r.kind = CLR_REQ_SEGMENTS;
  r.type = CLR_FLOAT;
  r.n = 8;
  r.input.host = x;
  r.segments.host = off;
  r.n_segments = 2;
  r.output.host = out;
  size_t bytes = 7;
  TU_EXPECT_STATUS(clr_request_scratch_size(ctx, &r, &bytes),
                   CLR_ERR_UNSUPPORTED, "the scratch size of host arrays");
  TU_CHECK(bytes == 0, "no size for them (%zu)", bytes);
  r.scratch = buf_op(scratch, 0);
  r.scratch_bytes = 4096;
  TU_EXPECT_STATUS(clr_run(ctx, &r, NULL), CLR_ERR_UNSUPPORTED,
                   "host arrays in caller scratch");
  clReleaseMemObject(scratch);
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "-v") == 0)
      tu_verbose = 1;
  clr_context *ctx = tu_context();
  const clr_layout layouts[] = {CLR_LAYOUT_AUTO, CLR_LAYOUT_STRIDED,
                                CLR_LAYOUT_CONTIGUOUS};
  tu_section("segments in caller scratch");
  for (size_t l = 0; l < 3; l++) {
    clr_layout lay = layouts[l];
    segments_case(ctx, CLR_SUM, CLR_FLOAT, 200003, 37, 0, lay);
    segments_case(ctx, CLR_MAX, CLR_INT, 100000, 30000, 0, lay);
    segments_case(ctx, CLR_SUM, CLR_INT, 256 * 1000, 1000, 1, lay);
  }
  segments_case(ctx, CLR_ARGMIN, CLR_FLOAT, 50000, 500, 0, CLR_LAYOUT_AUTO);
  segments_case(ctx, CLR_MEAN, CLR_FLOAT, 50000, 500, 0, CLR_LAYOUT_AUTO);
  segments_case(ctx, CLR_NANMEAN, CLR_FLOAT, 50000, 501, 0, CLR_LAYOUT_AUTO);
  segments_case(ctx, CLR_NANMEAN, CLR_FLOAT, 7, 3, 0, CLR_LAYOUT_AUTO);
  segments_case(ctx, CLR_SUM, CLR_LONG, 1, 1, 0, CLR_LAYOUT_AUTO);
  tu_section("segmented scans in caller scratch");
  for (int heads = 0; heads < 2; heads++) {
    sscan_case(ctx, CLR_SUM, CLR_FLOAT, 300007, 41, heads, 0, CLR_LAYOUT_AUTO);
    sscan_case(ctx, CLR_MAX, CLR_INT, 100000, 20000, heads, 1, CLR_LAYOUT_AUTO);
    sscan_case(ctx, CLR_SUM, CLR_INT, 100000, 300, heads, 0,
               CLR_LAYOUT_STRIDED);
    sscan_case(ctx, CLR_SUM, CLR_LONG, 100000, 300, heads, 1,
               CLR_LAYOUT_CONTIGUOUS);
    sscan_case(ctx, CLR_SUM, CLR_INT, 1, 1, heads, 0, CLR_LAYOUT_AUTO);
  }
  tu_section("matrices in caller scratch");
  for (size_t l = 0; l < 3; l++) {
    clr_layout lay = layouts[l];
    matrix_case(ctx, CLR_SUM, CLR_FLOAT, 20000, 7, 0, 0, lay);
    matrix_case(ctx, CLR_MAX, CLR_INT, 3, 100000, 0, 1, lay);
    matrix_case(ctx, CLR_SUM, CLR_INT, 100, 1000, 1003, 0, lay);
    matrix_case(ctx, CLR_MEAN, CLR_FLOAT, 1000, 100, 0, 1, lay);
  }
  matrix_case(ctx, CLR_ARGMAX, CLR_FLOAT, 5000, 33, 40, 0, CLR_LAYOUT_AUTO);
  matrix_case(ctx, CLR_MEAN, CLR_FLOAT, 1, 1, 0, 0, CLR_LAYOUT_AUTO);
  tu_section("reductions and dot products in caller scratch");
  reduce_case(ctx, CLR_SUM, CLR_FLOAT, 1000003, 3, 0, 0);
  reduce_case(ctx, CLR_SUM, CLR_INT, 100000, 0, 0, 0);
  reduce_case(ctx, CLR_MAX, CLR_INT, 7, 0, 0, 0);
  reduce_case(ctx, CLR_ARGMIN, CLR_FLOAT, 300000, 1, 0, 0);
  reduce_case(ctx, CLR_MINMAX, CLR_INT, 300000, 0, 0, 0);
  reduce_case(ctx, CLR_MEAN, CLR_FLOAT, 200000, 0, 0, 0);
  reduce_case(ctx, CLR_NANMEAN, CLR_FLOAT, 200000, 5, 0, 0);
  reduce_case(ctx, CLR_SUM, CLR_FLOAT, 500000, 0, 0, 1);
  reduce_case(ctx, CLR_MEAN, CLR_FLOAT, 500000, 0, 0, 1);
  reduce_case(ctx, CLR_SUM, CLR_FLOAT, 400000, 2, 1, 0);
  reduce_case(ctx, CLR_SUM, CLR_INT, 33, 0, 1, 0);
  tu_section("ranges in caller scratch");
  ranges_case(ctx, CLR_SUM, CLR_FLOAT, 100000, 3000, 0);
  ranges_case(ctx, CLR_MAX, CLR_INT, 100000, 100, 1);
  ranges_case(ctx, CLR_SUM, CLR_INT, 50000, 20, 2);
  ranges_case(ctx, CLR_NANMEAN, CLR_FLOAT, 60000, 500, 0);
  ranges_case(ctx, CLR_MEAN, CLR_FLOAT, 60000, 7, 2);
  ranges_case(ctx, CLR_ARGMIN, CLR_FLOAT, 10, 1, 2);
  bad_range(ctx);
  tu_section("host arrays");
  host_refusal(ctx);
  clr_context_release(ctx);
  return tu_finish("test_scratch");
}
