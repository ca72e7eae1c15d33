/* Matrices (clr_request's MATRIX kind): a result per column (axis 0) or
 * per row (axis 1) of a row-major matrix, host arrays and buffers, checked
 * column by column (row by row) against the CPU reference of the same
 * elements gathered into an array of their own.
 *
 *   --set=ops      every op x type on a few shapes, both axes, host arrays
 *   --set=shapes   sums and argmax over many shapes: 1 row, 1 column,
 *                  primes, wide and tall, a pitch wider than the row (its
 *                  padding poisoned), both layouts, buffers at offsets;
 *                  nanmean of float, double and half over such shapes with
 *                  no NaN, scattered NaNs, a whole row and column of NaN,
 *                  nothing but NaN (host arrays, buffers, clr_enqueue)
 *   --set=stream   host matrices larger than one device allocation (a
 *                  small max_chunk_bytes): blocks of rows, pieces of rows
 *                  (nanmean too: its counts streamed with its sums)
 *   --set=errors   refusals: no rows, pitch < cols, axis 2, n given,
 *                  overflow, an exact nansum; and clr_enqueue: a chain of four
 *                  calls with one wait
 */
#include "clreduce.h"
#include "datagen.h"
#include "reference.h"
#include "segment_reference.h"
#include "test_util.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fill the matrix's elements for op (the padding past each row's cols
 * poisoned: NaN, or the type's largest value, which any read of it would
 * show in a sum, min or max). */
static void fill_matrix(clr_op op, clr_type t, uint64_t seed, void *m,
                        size_t rows, size_t cols, size_t pitch) {
  size_t es = clr_type_size(t), n = rows * cols;
  unsigned char *packed = tu_xmalloc(n * es);
  clr_gen_data(op, t, seed, packed, n, NULL, 0);
  for (size_t r = 0; r < rows; r++) {
    memcpy((unsigned char *)m + r * pitch * es, packed + r * cols * es,
           cols * es);
    for (size_t c = cols; c < pitch && r + 1 < rows; c++) {
      if (tu_is_float(t))
        clr_store_fp(t, m, r * pitch + c, NAN);
      else
        clr_store_bits(t, m, r * pitch + c, 0x7fffffffffffffffull);
    }
  }
  free(packed);
}

/* Check results (of axis's count) against the reference of each column
 * (axis 0) or row (axis 1) gathered into an array. */
static int check_results(const char *what, clr_op op, clr_type t,
                         const clr_options *opt, const void *m, size_t rows,
                         size_t cols, size_t pitch, int axis,
                         const void *results, size_t depth) {
  size_t es = clr_type_size(t);
  size_t count = axis == 0 ? cols : rows, len = axis == 0 ? rows : cols;
  unsigned char *line = tu_xmalloc(len * es);
  clr_type rt = clr_options_result_type(opt, op, t);
  int ok = 1;
  for (size_t k = 0; k < count && ok; k++) {
    for (size_t j = 0; j < len; j++) {
      size_t e = axis == 0 ? j * pitch + k : k * pitch + j;
      memcpy(line + j * es, (const unsigned char *)m + e * es, es);
    }
    clr_reference ref;
    clr_ref_reduce_to(op, t, rt, line, len, &ref);
    clr_value got = clr_result_at(op, rt, results, k);
    clr_check chk;
    clr_ref_check(&ref, &got, depth, &chk);
    char gb[64], wb[64];
    ok = tu_check(chk.ok,
                  "%s: %s %s %zux%zu pitch %zu axis %d: result %zu is %s, "
                  "want %s (error %g, bound %g, depth %zu)",
                  what, clr_op_name(op), clr_type_name(t), rows, cols, pitch,
                  axis, k, tu_fmt(&got, gb, sizeof gb),
                  tu_fmt(&ref.value, wb, sizeof wb), chk.error, chk.bound,
                  depth);
  }
  free(line);
  return ok;
}

/* r's input and output: the host arrays m (m_bytes) and res, or buffers
 * made for them (*in holding m after in_pad zero bytes, *out res_bytes
 * after out_pad bytes), at those offsets (in elements of r's operands). */
static void operands(clr_context *ctx, clr_request *r, int buffers,
                     const void *m, size_t m_bytes, size_t in_pad, void *res,
                     size_t res_bytes, size_t out_pad, cl_mem *in,
                     cl_mem *out) {
  if (!buffers) {
    r->input.host = m;
    r->output.host = res;
    return;
  }
  size_t es = clr_type_size(r->type);
  size_t rb = clr_result_bytes(r->options, r->op, r->type);
  unsigned char *padded = tu_xmalloc(in_pad + m_bytes);
  memset(padded, 0, in_pad);
  memcpy(padded + in_pad, m, m_bytes);
  *in = tu_new_buffer(ctx, in_pad + m_bytes, padded);
  free(padded);
  *out = tu_new_buffer(ctx, out_pad + res_bytes, NULL);
  r->input.buffer = *in;
  r->input.offset = in_pad / es;
  r->output.buffer = *out;
  r->output.offset = out_pad / rb;
}

/* One matrix through clr_run: host arrays, and (buffers) at offsets. */
static void run_one(clr_context *ctx, const clr_options *opt, clr_op op,
                    clr_type t, size_t rows, size_t cols, size_t pitch,
                    int axis, int buffers, uint64_t seed) {
  if (!tu_type_available(t) || clr_op_supports(op, t) != CLR_OK)
    return;
  size_t es = clr_type_size(t), p = pitch ? pitch : cols;
  size_t elems = (rows - 1) * p + cols;
  size_t count = axis == 0 ? cols : rows;
  size_t rb = clr_result_bytes(opt, op, t);
  void *m = tu_xmalloc(rows * p * es);
  fill_matrix(op, t, seed, m, rows, cols, p);
  unsigned char *res = tu_xmalloc(count * rb + 1);
  memset(res, 0xa5, count * rb + 1);
  clr_request r = tu_matrix_request(op, t, rows, cols, pitch, axis);
  r.options = opt;
  cl_mem in = NULL, out = NULL;
  /* an offset that keeps vector loads aligned, or one that does not */
  const size_t in_off = (rows + cols) % 2 ? 4 : 3, out_off = 2;
  operands(ctx, &r, buffers, m, elems * es, in_off * es, res, count * rb,
           out_off * rb, &in, &out);
  clr_status s = clr_run(ctx, &r, NULL);
  char what[96];
  snprintf(what, sizeof what, "%s%s", buffers ? "buffers" : "host",
           opt && opt->layout == CLR_LAYOUT_CONTIGUOUS ? " (runs)"
           : opt && opt->layout == CLR_LAYOUT_STRIDED  ? " (strided)"
                                                       : "");
  if (tu_check(s == CLR_OK, "%s: %s %s %zux%zu axis %d: %s: %s", what,
               clr_op_name(op), clr_type_name(t), rows, cols, axis,
               clr_status_name(s), clr_context_error(ctx))) {
    if (buffers) {
      unsigned char *all = tu_xmalloc((count + out_off) * rb);
      tu_read_buffer(ctx, out, (count + out_off) * rb, all);
      memcpy(res, all + out_off * rb, count * rb);
      free(all);
    } else {
      tu_check(res[count * rb] == 0xa5,
               "%s: %s %s %zux%zu axis %d: a byte past the results written",
               what, clr_op_name(op), clr_type_name(t), rows, cols, axis);
    }
    clr_timing tm = CLR_TIMING_INIT;
    clr_last_timing(ctx, &tm);
    check_results(what, op, t, opt, m, rows, cols, p, axis, res,
                  tm.error_depth);
  }
  if (in)
    clReleaseMemObject(in);
  if (out)
    clReleaseMemObject(out);
  free(res);
  free(m);
}

static const clr_type all_types[] = {CLR_FLOAT, CLR_DOUBLE, CLR_HALF, CLR_INT,
                                     CLR_UINT,  CLR_LONG,   CLR_ULONG};

static void set_ops(clr_context *ctx) {
  static const size_t shapes[][3] = {{37, 11, 0}, {5, 300, 0}, {1001, 3, 5}};
  for (size_t o = 0; o < CLR_OP_COUNT; o++) {
    clr_op op = (clr_op)o;
    for (size_t ti = 0; ti < sizeof all_types / sizeof all_types[0]; ti++)
      for (size_t sh = 0; sh < 3; sh++)
        for (int axis = 0; axis < 2; axis++)
          run_one(ctx, NULL, op, all_types[ti], shapes[sh][0], shapes[sh][1],
                  shapes[sh][2], axis, 0, tu_seed(o, ti, sh, axis));
  }
  tu_section("every op and type, both axes");
}

/* A nanmean's matrix: uniform numbers with NaNs by pattern (0: none, 1:
 * about one element in five, 2: those and every element of row nan_row
 * and of column nan_col, 3: nothing but NaN); the padding past each row's
 * cols a large number (1e30, half 6e4), which a read of it would show in
 * a mean where NaN would be skipped. */
enum { NM_NONE, NM_SCATTERED, NM_LINES, NM_ALL };
static void fill_nanmean(clr_type t, uint64_t seed, void *m, size_t rows,
                         size_t cols, size_t pitch, int pattern, size_t nan_row,
                         size_t nan_col) {
  size_t es = clr_type_size(t);
  unsigned char *packed = tu_xmalloc(rows * cols * es);
  clr_gen_data(CLR_MEAN, t, seed, packed, rows * cols, NULL, 0);
  tu_rng rng = {seed ^ 0x4e614e};
  for (size_t r = 0; r < rows; r++) {
    memcpy((unsigned char *)m + r * pitch * es, packed + r * cols * es,
           cols * es);
    for (size_t c = 0; c < cols; c++) {
      int nan = pattern == NM_ALL ||
                (pattern >= NM_SCATTERED && tu_below(&rng, 5) == 0) ||
                (pattern == NM_LINES && (r == nan_row || c == nan_col));
      if (nan)
        clr_store_fp(t, m, r * pitch + c, NAN);
    }
    for (size_t c = cols; c < pitch && r + 1 < rows; c++)
      clr_store_fp(t, m, r * pitch + c, t == CLR_HALF ? 6e4 : 1e30);
  }
  free(packed);
}

/* One nanmean of a matrix in layout (CLR_LAYOUT_AUTO: the device's):
 * mode 0 host arrays, 1 buffers at offsets (clr_run), 2 buffers through
 * clr_enqueue, held by a user event until the call has returned (nothing
 * waited for on the host); checked by clr_ref_matrix_check, and a line of
 * nothing but NaN must give NaN. */
static void nanmean_one(clr_context *ctx, clr_layout layout, clr_type t,
                        size_t rows, size_t cols, size_t pitch, int axis,
                        int pattern, int mode, uint64_t seed) {
  if (!tu_type_available(t))
    return;
  size_t es = clr_type_size(t), p = pitch ? pitch : cols;
  size_t elems = (rows - 1) * p + cols, count = axis == 0 ? cols : rows;
  size_t rb = clr_result_bytes(NULL, CLR_NANMEAN, t);
  size_t nan_row = rows / 2, nan_col = cols / 2;
  clr_type rt = clr_options_result_type(NULL, CLR_NANMEAN, t);
  void *m = tu_xmalloc(rows * p * es);
  fill_nanmean(t, seed, m, rows, cols, p, pattern, nan_row, nan_col);
  unsigned char *res = tu_xmalloc(count * rb + 1);
  memset(res, 0xa5, count * rb + 1);
  clr_request r = tu_matrix_request(CLR_NANMEAN, t, rows, cols, pitch, axis);
  clr_options opt = CLR_OPTIONS_INIT;
  opt.layout = layout;
  r.options = &opt;
  cl_mem in = NULL, out = NULL;
  const size_t in_off = (rows + cols) % 2 ? 4 : 3, out_off = 1;
  operands(ctx, &r, mode != 0, m, elems * es, in_off * es, res, count * rb,
           out_off * rb, &in, &out);
  static const char *const modes[] = {"host", "buffers", "enqueued"};
  char what[128];
  snprintf(what, sizeof what, "nanmean %s%s %s %zux%zu pitch %zu axis %d, %s",
           modes[mode],
           layout == CLR_LAYOUT_CONTIGUOUS ? " (runs)"
           : layout == CLR_LAYOUT_STRIDED  ? " (strided)"
                                           : "",
           clr_type_name(t), rows, cols, p, axis,
           pattern == NM_NONE        ? "no NaN"
           : pattern == NM_SCATTERED ? "scattered NaNs"
           : pattern == NM_LINES     ? "NaN lines"
                                     : "all NaN");
  clr_status s;
  if (mode == 2) {
    cl_int err;
    cl_event gate = clCreateUserEvent(clr_context_cl_context(ctx), &err);
    if (err != CL_SUCCESS)
      tu_die("clCreateUserEvent: %d", (int)err);
    cl_event done = NULL;
    s = clr_enqueue(ctx, &r, 1, &gate, &done);
    cl_int before = CL_COMPLETE;
    if (s == CLR_OK)
      clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof before,
                     &before, NULL);
    tu_check(s != CLR_OK || before != CL_COMPLETE,
             "%s: done before its gate was set", what);
    clSetUserEventStatus(gate, CL_COMPLETE);
    if (s == CLR_OK)
      clWaitForEvents(1, &done);
    if (done)
      clReleaseEvent(done);
    clReleaseEvent(gate);
  } else {
    s = clr_run(ctx, &r, NULL);
  }
  if (tu_check(s == CLR_OK, "%s: %s: %s", what, clr_status_name(s),
               clr_context_error(ctx))) {
    if (mode) {
      unsigned char *all = tu_xmalloc((count + out_off) * rb);
      tu_read_buffer(ctx, out, (count + out_off) * rb, all);
      memcpy(res, all + out_off * rb, count * rb);
      free(all);
    } else {
      tu_check(res[count * rb] == 0xa5, "%s: a byte past the results written",
               what);
    }
    clr_timing tm = CLR_TIMING_INIT;
    clr_last_timing(ctx, &tm);
    clr_segments_check chk;
    int ran = clr_ref_matrix_check(CLR_MAP_NONE, CLR_NANMEAN, t, rt, m, rows,
                                   cols, p, axis, res, tm.error_depth, &chk);
    char gb[64], wb[64];
    tu_check(ran && chk.ok,
             "%s: %zu of %zu wrong, the worst %zu is %s, want %s (error %g, "
             "bound %g, depth %zu)",
             what, chk.n_bad, count, chk.worst_index,
             tu_fmt(&chk.got_worst, gb, sizeof gb),
             tu_fmt(&chk.ref_worst, wb, sizeof wb), chk.worst_error,
             chk.worst_bound, tm.error_depth);
    /* the line of NaN (its row for axis 1, its column for axis 0) */
    size_t k = axis == 0 ? nan_col : nan_row;
    clr_value v = clr_result_at(CLR_NANMEAN, rt, res, k);
    if (pattern >= NM_LINES)
      tu_check(isnan(clr_value_as_double(&v)),
               "%s: result %zu of a line of NaN is %s, want NaN", what, k,
               tu_fmt(&v, gb, sizeof gb));
  }
  if (in)
    clReleaseMemObject(in);
  if (out)
    clReleaseMemObject(out);
  free(res);
  free(m);
}

/* nanmean of float, double and half over 1 x C, R x 1, primes and pitched
 * shapes, both axes, every NaN pattern, host arrays, buffers and
 * clr_enqueue; the layout (the device's, contiguous, strided) turning
 * with the pattern, so each shape takes each layout. */
static void shapes_nanmean(clr_context *ctx) {
  static const size_t shapes[][3] = {
      {1, 1, 0},     {1, 37, 0},     {41, 1, 0},   {37, 41, 0},
      {53, 29, 32},  {1001, 3, 5},   {7, 4099, 0}, {257, 255, 300},
      {4099, 10, 0}, {1, 1000, 1003}};
  static const clr_type types[] = {CLR_FLOAT, CLR_DOUBLE, CLR_HALF};
  for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++)
    for (size_t ti = 0; ti < 3; ti++)
      for (int axis = 0; axis < 2; axis++)
        for (int pattern = NM_NONE; pattern <= NM_ALL; pattern++)
          for (int mode = 0; mode < 3; mode++)
            nanmean_one(ctx, (clr_layout)((sh + (size_t)pattern) % 3),
                        types[ti], shapes[sh][0], shapes[sh][1], shapes[sh][2],
                        axis, pattern, mode,
                        tu_seed(sh, ti, (uint64_t)axis * 4 + (uint64_t)pattern,
                                (uint64_t)mode + 11));
  tu_section("nanmean: float, double, half; shapes, NaN patterns, host, "
             "buffers, enqueued");
}

static void set_shapes(clr_context *ctx) {
  static const size_t shapes[][3] = {
      {1, 1, 0},      {1, 7, 0},     {7, 1, 0},       {1, 1000, 0},
      {1000, 1, 0},   {13, 17, 0},   {257, 255, 300}, {4099, 10, 0},
      {10, 4099, 0},  {3, 65537, 0}, {65537, 3, 0},   {300, 300, 301},
      {2000, 33, 64}, {31, 513, 0},  {999, 1000, 0},  {517, 64, 66},
      {100, 12, 16},  {4001, 4, 0},  {3, 8, 0}};
  clr_options runs = CLR_OPTIONS_INIT, strided = CLR_OPTIONS_INIT;
  runs.layout = CLR_LAYOUT_CONTIGUOUS;
  strided.layout = CLR_LAYOUT_STRIDED;
  const clr_options *layouts[] = {NULL, &runs, &strided};
  const clr_op ops[] = {CLR_SUM, CLR_ARGMAX, CLR_MIN, CLR_MEAN};
  const clr_type types[] = {CLR_FLOAT, CLR_INT, CLR_DOUBLE};
  for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++)
    for (size_t l = 0; l < 3; l++)
      for (size_t o = 0; o < 4; o++)
        for (int axis = 0; axis < 2; axis++)
          for (int buffers = 0; buffers < 2; buffers++)
            run_one(ctx, layouts[l], ops[o], types[(sh + o) % 3], shapes[sh][0],
                    shapes[sh][1], shapes[sh][2], axis, buffers,
                    tu_seed(sh, l, o, axis));
  /* a map expression reads i, the element's index from the matrix's
   * first: the sum of i over a column c of a pitch-p matrix is
   * rows * c + p * rows * (rows - 1) / 2 */
  clr_options mo = CLR_OPTIONS_INIT;
  mo.map = CLR_MAP_EXPR;
  mo.map_expr = "i";
  mo.accumulate_in = CLR_LONG;
  mo.index_base = 100;
  const size_t R = 501, C = 37, P = 40;
  int32_t *m = tu_xmalloc(R * P * sizeof *m);
  memset(m, 0, R * P * sizeof *m);
  int64_t *res = tu_xmalloc(R * sizeof *res);
  for (int axis = 0; axis < 2; axis++) {
    clr_request r = tu_matrix_request(CLR_SUM, CLR_INT, R, C, P, axis);
    r.options = &mo;
    r.input.host = m;
    r.output.host = res;
    clr_status s = clr_run(ctx, &r, NULL);
    size_t bad = 0, count = axis == 0 ? C : R;
    for (size_t k = 0; s == CLR_OK && k < count; k++) {
      int64_t want = 0;
      for (size_t j = 0; j < (axis == 0 ? R : C); j++)
        want += 100 + (int64_t)(axis == 0 ? j * P + k : k * P + j);
      bad += res[k] != want;
    }
    tu_check(s == CLR_OK && bad == 0,
             "a map of i over a pitched matrix, axis %d: %s, %zu wrong", axis,
             clr_status_name(s), bad);
  }
  free(res);
  free(m);
  tu_section("shapes, layouts, pitches, buffers, a map of i");
  shapes_nanmean(ctx);
}

static void set_stream(void) {
  /* 4 KiB chunks: 1024 floats; rows of 3000 are pieces, rows of 100
   * blocks of 10 */
  clr_context *ctx = tu_context_chunked(4096, 1);
  static const size_t shapes[][3] = {
      {5000, 100, 0}, {40, 3000, 0}, {977, 13, 20}, {7, 5000, 5001}};
  const clr_op ops[] = {CLR_SUM, CLR_ARGMIN, CLR_MAX, CLR_MEAN};
  for (size_t sh = 0; sh < 4; sh++)
    for (size_t o = 0; o < 4; o++)
      for (int axis = 0; axis < 2; axis++) {
        if (axis == 1 && shapes[sh][1] > 1024)
          continue; /* rows longer than a chunk: refused below */
        run_one(ctx, NULL, ops[o], CLR_FLOAT, shapes[sh][0], shapes[sh][1],
                shapes[sh][2], axis, 0, tu_seed(sh, o, axis, 7));
        clr_timing tm = CLR_TIMING_INIT;
        clr_last_timing(ctx, &tm);
        tu_check(tm.chunks > 1, "%zux%zu axis %d: streamed in %zu chunks",
                 shapes[sh][0], shapes[sh][1], axis, tm.chunks);
      }
  /* nanmean: the counts of numbers streamed block by block beside the
   * sums, and pieces of rows for axis 0 */
  static const clr_type nm_types[] = {CLR_FLOAT, CLR_DOUBLE, CLR_HALF};
  for (size_t sh = 0; sh < 4; sh++)
    for (size_t ti = 0; ti < 3; ti++)
      for (int axis = 0; axis < 2; axis++)
        for (int pattern = NM_SCATTERED; pattern <= NM_LINES; pattern++) {
          size_t limit = 4096 / clr_type_size(nm_types[ti]);
          if (axis == 1 && shapes[sh][1] > limit)
            continue; /* rows longer than a chunk */
          if (!tu_type_available(nm_types[ti]))
            continue;
          nanmean_one(ctx, CLR_LAYOUT_AUTO, nm_types[ti], shapes[sh][0],
                      shapes[sh][1], shapes[sh][2], axis, pattern, 0,
                      tu_seed(sh, ti, (uint64_t)axis, (uint64_t)pattern + 9));
          clr_timing tm = CLR_TIMING_INIT;
          clr_last_timing(ctx, &tm);
          tu_check(tm.chunks > 1,
                   "nanmean %s %zux%zu axis %d: streamed in %zu chunks",
                   clr_type_name(nm_types[ti]), shapes[sh][0], shapes[sh][1],
                   axis, tm.chunks);
        }
  float *m = tu_xmalloc(2 * 3000 * sizeof *m);
  float res[2];
  memset(m, 0, 2 * 3000 * sizeof *m);
  clr_request r = tu_matrix_request(CLR_SUM, CLR_FLOAT, 2, 3000, 0, 1);
  r.input.host = m;
  r.output.host = res;
  clr_status s = clr_run(ctx, &r, NULL);
  tu_check(s == CLR_ERR_UNSUPPORTED &&
               strstr(clr_context_error(ctx), "longer than one device"),
           "rows longer than a chunk: %s (%s)", clr_status_name(s),
           clr_context_error(ctx));
  free(m);
  clr_context_release(ctx);
  tu_section("streamed: blocks of rows, pieces of rows");
}

/* clr_enqueue: four calls held by a user event still unset while they
 * are enqueued (no host wait between them), then one wait: the column
 * sums of M, the argmax of each row of those sums seen as a 250 x 4
 * matrix, their total (a reduce), the mean of each row of M; checked
 * against loops on the host.  Small integers: exact float sums. */
static void set_chain(clr_context *ctx) {
  enum { R = 999, C = 1000, G = C / 4 };
  float *m = tu_xmalloc(sizeof(float) * R * C);
  for (size_t k = 0; k < (size_t)R * C; k++)
    m[k] = (float)((k * 7 + k / C * 3) % 13);
  size_t rb = clr_result_bytes(NULL, CLR_ARGMAX, CLR_FLOAT);
  cl_mem in = tu_new_buffer(ctx, sizeof(float) * R * C, m);
  cl_mem colsum = tu_new_buffer(ctx, sizeof(float) * C, NULL);
  cl_mem argmax = tu_new_buffer(ctx, rb * G, NULL);
  cl_mem total = tu_new_buffer(ctx, 8, NULL);
  cl_mem rowmean = tu_new_buffer(ctx, sizeof(float) * R, NULL);
  cl_int err;
  cl_event gate = clCreateUserEvent(clr_context_cl_context(ctx), &err);
  if (err != CL_SUCCESS)
    tu_die("clCreateUserEvent: %d", (int)err);
  cl_event ev[4] = {NULL, NULL, NULL, NULL};
  clr_request r = tu_matrix_request(CLR_SUM, CLR_FLOAT, R, C, 0, 0);
  r.input.buffer = in;
  r.output.buffer = colsum;
  clr_status s = clr_enqueue(ctx, &r, 1, &gate, &ev[0]);
  TU_EXPECT_STATUS(s, CLR_OK, "enqueued column sums");
  r = tu_matrix_request(CLR_ARGMAX, CLR_FLOAT, G, 4, 0, 1);
  r.input.buffer = colsum;
  r.output.buffer = argmax;
  if (s == CLR_OK)
    s = clr_enqueue(ctx, &r, 1, &ev[0], &ev[1]);
  TU_EXPECT_STATUS(s, CLR_OK, "enqueued row argmaxes of the sums");
  clr_request_init(&r);
  r.type = CLR_FLOAT;
  r.n = C;
  r.input.buffer = colsum;
  r.output.buffer = total;
  if (s == CLR_OK)
    s = clr_enqueue(ctx, &r, 1, &ev[1], &ev[2]);
  TU_EXPECT_STATUS(s, CLR_OK, "enqueued total of the sums");
  r = tu_matrix_request(CLR_MEAN, CLR_FLOAT, R, C, 0, 1);
  r.input.buffer = in;
  r.output.buffer = rowmean;
  if (s == CLR_OK)
    s = clr_enqueue(ctx, &r, 1, &ev[2], &ev[3]);
  TU_EXPECT_STATUS(s, CLR_OK, "enqueued row means");
  /* nothing has run: the chain waits on the gate */
  cl_int before = CL_COMPLETE;
  if (s == CLR_OK)
    clGetEventInfo(ev[3], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof before,
                   &before, NULL);
  tu_check(s != CLR_OK || before != CL_COMPLETE,
           "the chain's last event completed before its gate was set");
  clSetUserEventStatus(gate, CL_COMPLETE);
  if (s == CLR_OK)
    clWaitForEvents(1, &ev[3]);
  float *cs = tu_xmalloc(sizeof(float) * C),
        *rm = tu_xmalloc(sizeof(float) * R);
  unsigned char *am = tu_xmalloc(rb * G);
  float tot = 0;
  size_t bad = 0;
  if (s == CLR_OK) {
    tu_read_buffer(ctx, colsum, sizeof(float) * C, cs);
    tu_read_buffer(ctx, argmax, rb * G, am);
    tu_read_buffer(ctx, total, sizeof tot, &tot);
    tu_read_buffer(ctx, rowmean, sizeof(float) * R, rm);
    double want_total = 0;
    for (size_t c = 0; c < C; c++) {
      double want = 0;
      for (size_t k = 0; k < R; k++)
        want += m[k * C + c];
      bad += cs[c] != (float)want;
      want_total += want;
    }
    for (size_t g = 0; g < G; g++) {
      size_t at = 0;
      for (size_t j = 1; j < 4; j++)
        if (cs[g * 4 + j] > cs[g * 4 + at])
          at = j;
      clr_value v = clr_result_at(CLR_ARGMAX, CLR_FLOAT, am, g);
      bad += clr_value_index(&v) != at;
    }
    bad += tot != (float)want_total;
    for (size_t k = 0; k < R; k++) {
      double sum = 0;
      for (size_t c = 0; c < C; c++)
        sum += m[k * C + c];
      bad += fabs(rm[k] - sum / C) > 1e-6 * (sum / C + 1);
    }
  }
  tu_check(s == CLR_OK && bad == 0,
           "a chain of four enqueued calls (columns, rows, a reduce, rows): "
           "%s, %zu wrong: %s",
           clr_status_name(s), bad, clr_context_error(ctx));
  /* host arrays are not enqueued */
  r = tu_matrix_request(CLR_SUM, CLR_FLOAT, R, C, 0, 0);
  r.input.host = m;
  r.output.host = cs;
  cl_event none = NULL;
  s = clr_enqueue(ctx, &r, 0, NULL, &none);
  tu_check(s == CLR_ERR_UNSUPPORTED && none == NULL,
           "clr_enqueue of a matrix of host arrays: %s", clr_status_name(s));
  for (int k = 0; k < 4; k++)
    if (ev[k])
      clReleaseEvent(ev[k]);
  clReleaseEvent(gate);
  clReleaseMemObject(in);
  clReleaseMemObject(colsum);
  clReleaseMemObject(argmax);
  clReleaseMemObject(total);
  clReleaseMemObject(rowmean);
  free(cs);
  free(rm);
  free(am);
  free(m);
  tu_section("clr_enqueue: a chain of four with one wait");
}

static void set_errors(clr_context *ctx) {
  float m[12] = {0}, res[12];
  struct {
    const char *what, *needle;
    clr_status want;
    size_t rows, cols, pitch, n;
    int axis;
    clr_op op;
    int exact;
  } cases[] = {
      {"no rows", "at least 1", CLR_ERR_INVALID_ARGUMENT, 0, 5, 0, 0, 0,
       CLR_SUM, 0},
      {"no columns", "at least 1", CLR_ERR_INVALID_ARGUMENT, 3, 0, 0, 0, 0,
       CLR_SUM, 0},
      {"pitch below cols", "pitch", CLR_ERR_INVALID_ARGUMENT, 3, 4, 2, 0, 0,
       CLR_SUM, 0},
      {"axis 2", "axis 2", CLR_ERR_INVALID_ARGUMENT, 3, 4, 0, 0, 2, CLR_SUM, 0},
      {"axis -1", "axis -1", CLR_ERR_INVALID_ARGUMENT, 3, 4, 0, 0, -1, CLR_SUM,
       0},
      {"n given", "leave n", CLR_ERR_INVALID_ARGUMENT, 3, 4, 0, 12, 0, CLR_SUM,
       0},
      {"rows x cols overflows", "overflow", CLR_ERR_INVALID_ARGUMENT,
       SIZE_MAX / 2, 4, 0, 0, 0, CLR_SUM, 0},
      {"rows x pitch overflows", "address space", CLR_ERR_INVALID_ARGUMENT,
       SIZE_MAX / 8, 4, SIZE_MAX / 16, 0, 0, CLR_SUM, 0},
      {"exact nansum", "skip NaNs", CLR_ERR_UNSUPPORTED, 3, 4, 0, 0, 0,
       CLR_NANSUM, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    clr_request r =
        tu_matrix_request(cases[i].op, CLR_FLOAT, cases[i].rows, cases[i].cols,
                          cases[i].pitch, cases[i].axis);
    clr_options o = CLR_OPTIONS_INIT;
    o.exact = cases[i].exact;
    r.options = &o;
    r.n = cases[i].n;
    r.input.host = m;
    r.output.host = res;
    clr_status s = clr_run(ctx, &r, NULL);
    tu_check(s == cases[i].want &&
                 strstr(clr_context_error(ctx), cases[i].needle) != NULL,
             "%s: %s (%s), want %s naming '%s'", cases[i].what,
             clr_status_name(s), clr_context_error(ctx),
             clr_status_name(cases[i].want), cases[i].needle);
  }
  /* another kind given a shape */
  clr_request r = tu_matrix_request(CLR_SUM, CLR_FLOAT, 3, 4, 0, 0);
  r.kind = CLR_REQ_REDUCE;
  r.n = 12;
  r.input.host = m;
  clr_value v;
  clr_status s = clr_run(ctx, &r, &v);
  tu_check(s == CLR_ERR_INVALID_ARGUMENT &&
               strstr(clr_context_error(ctx), "rows, cols"),
           "a reduce given rows and cols: %s (%s)", clr_status_name(s),
           clr_context_error(ctx));
  /* and the context still works */
  r = tu_matrix_request(CLR_SUM, CLR_FLOAT, 3, 4, 0, 1);
  for (int k = 0; k < 12; k++)
    m[k] = (float)k;
  r.input.host = m;
  r.output.host = res;
  s = clr_run(ctx, &r, NULL);
  tu_check(s == CLR_OK && res[0] == 6 && res[1] == 22 && res[2] == 38,
           "after the refusals: %s, rows %g %g %g", clr_status_name(s),
           (double)res[0], (double)res[1], (double)res[2]);
  tu_section("refusals");
}

int main(int argc, char **argv) {
  const char *set = tu_arg_value(argc, argv, "--set");
  if (!set)
    tu_die("usage: test_matrix --set=ops|shapes|stream|errors");
  if (strcmp(set, "stream") == 0) {
    set_stream();
    return tu_finish("test_matrix");
  }
  clr_context *ctx = tu_context();
  if (strcmp(set, "ops") == 0)
    set_ops(ctx);
  else if (strcmp(set, "shapes") == 0)
    set_shapes(ctx);
  else if (strcmp(set, "errors") == 0) {
    set_errors(ctx);
    set_chain(ctx);
  } else
    tu_die("unknown set '%s'", set);
  clr_context_release(ctx);
  return tu_finish("test_matrix");
}
