/* Segmented scans (clr_scan_segments_host / _buffer, clr_scan_heads_host /
 * _buffer) against a CPU scan of each segment alone: every scan op and
 * type, inclusive and exclusive, the segment layouts of the segmented
 * reductions (every segment of length 1 to one of all n, empty segments
 * anywhere, lengths straddling a work-item's run), heads given as offsets
 * and as flag bytes (integers, min and max the same bits; floating sums
 * and products each checked, since vector reads round otherwise than
 * element reads of an unaligned array), cl_mem ranges at
 * offsets, launch shapes from 2 elements a work-item (many levels) up,
 * in place, a carry-in, streamed chunks, NaN, and every refusal with the
 * context still working after.
 *
 *   test_scan_segments [--set=matrix|shapes|edges|stream|oclgrind] [-v]
 * (default: matrix, shapes and edges; stream runs with POCL_MEMORY_LIMIT
 * small, so a host array is streamed in chunks of one allocation;
 * oclgrind under Oclgrind, tests/reliability/run_oclgrind.py) */
#include "reference.h"
#include "segment_layouts.h"
#include "segment_reference.h"
#include "test_util.h"

#include <math.h>

static const clr_op scan_ops[] = {CLR_SUM, CLR_PROD, CLR_MIN, CLR_MAX};
#define N_SCAN_OPS (sizeof scan_ops / sizeof *scan_ops)
static const clr_type scan_types[] = {CLR_FLOAT, CLR_DOUBLE, CLR_INT, CLR_UINT,
                                      CLR_LONG,  CLR_ULONG,  CLR_HALF};
#define N_SCAN_TYPES (sizeof scan_types / sizeof *scan_types)

/* One segmented scan (segment_layouts.h's case). */
typedef seg_case sscan_case;

static clr_type out_type(const sscan_case *c) {
  return clr_scan_output_type(&c->opt, c->type);
}

/* Flag bytes of the offsets: 1 where a segment starts (and is not past
 * the end), else 0; element 0 left 0 half the time (it starts a segment
 * either way). */
static uint8_t *heads_of(const sscan_case *c, int mark0) {
  uint8_t *h = tu_xmalloc(c->n + 1);
  memset(h, 0, c->n + 1);
  for (size_t s = 0; s < c->segments; s++)
    if (c->offsets[s] < c->n)
      h[c->offsets[s]] = 1;
  h[0] = (uint8_t)mark0;
  return h;
}

/* Each segment against a CPU scan of it alone. */
static int check_out(const sscan_case *c, const void *out, size_t depth,
                     const char *how) {
  clr_scan_check chk;
  char gb[64], wb[64];
  clr_ref_segmented_scan_check(
      c->op, c->type, out_type(c), c->opt.exclusive != 0, c->data, out,
      c->offsets, c->segments, depth,
      clr_ref_device_flushes(tu_cl_device(), out_type(c)), &chk);
  return tu_check(chk.ok,
                  "%s (%s): %zu elements wrong, worst at %zu: got %s, want "
                  "%s (error %g, bound %g, depth %zu)",
                  c->what, how, chk.n_bad, chk.worst_index,
                  tu_fmt(&chk.got_worst, gb, sizeof gb),
                  tu_fmt(&chk.ref_worst, wb, sizeof wb), chk.worst_error,
                  chk.worst_bound, depth);
}

/* Results that must be the same bits whatever the path: integers, min and
 * max.  A floating sum or product may round differently where one path
 * reads vectors and another elements (an unaligned array), so those are
 * each checked against the CPU. */
static int bits_fixed(const sscan_case *c) {
  return !tu_is_float(c->type) || c->op == CLR_MIN || c->op == CLR_MAX;
}

/* The call's status as the case needs it: CLR_OK, or no fp64. */
static int status_ok(const sscan_case *c, clr_context *ctx, clr_status st,
                     const char *how) {
  if (!tu_type_available(c->type))
    return !tu_check(st == CLR_ERR_NO_FP64, "%s (%s): no fp64, got %s", c->what,
                     how, clr_status_name(st));
  return tu_check(st == CLR_OK, "%s (%s): %s: %s", c->what, how,
                  clr_status_name(st), clr_context_error(ctx));
}

/* Host arrays: by offsets, then by heads (the same bits), in place when
 * asked (the output type permitting).  Returns the offsets' output (NULL
 * on failure), which the caller frees. */
static void *run_host(clr_context *ctx, const sscan_case *c, int in_place) {
  size_t osize = clr_type_size(out_type(c)), isize = clr_type_size(c->type);
  int place = in_place && osize == isize;
  /* one element past n: a write beyond the end shows */
  void *out = tu_xmalloc((c->n + 1) * osize);
  memset(out, 0xa5, (c->n + 1) * osize);
  if (place)
    memcpy(out, c->data, c->n * isize);
  const char *how = place ? "offsets, in place" : "offsets";
  clr_status st = clr_scan_segments_host(ctx, &c->opt, c->op, c->type,
                                         place ? out : c->data, out, c->n,
                                         c->offsets, c->segments);
  if (!status_ok(c, ctx, st, how)) {
    free(out);
    return NULL;
  }
  check_out(c, out, tu_last_timing(ctx).error_depth, how);
  unsigned char guard[8];
  memset(guard, 0xa5, sizeof guard);
  tu_check(memcmp((char *)out + c->n * osize, guard, osize) == 0,
           "%s (%s): an element past n written", c->what, how);
  /* heads: the same elements, so the same bits (bits_fixed), or checked */
  uint8_t *heads = heads_of(c, (int)(c->n & 1));
  void *out2 = tu_xmalloc(c->n * osize);
  if (place)
    memcpy(out2, c->data, c->n * isize);
  st = clr_scan_heads_host(ctx, &c->opt, c->op, c->type, place ? out2 : c->data,
                           out2, c->n, heads);
  if (tu_check(st == CLR_OK, "%s (heads): %s: %s", c->what, clr_status_name(st),
               clr_context_error(ctx))) {
    if (bits_fixed(c))
      tu_check(memcmp(out, out2, c->n * osize) == 0,
               "%s: heads and offsets differ first at element %zu", c->what,
               tu_first_diff(out_type(c), out, out2, c->n));
    else
      check_out(c, out2, tu_last_timing(ctx).error_depth, "heads");
  }
  free(out2);
  free(heads);
  return out;
}

static cl_mem make_buffer(clr_context *ctx, size_t bytes, const void *host) {
  cl_int err;
  cl_mem m = clCreateBuffer(clr_context_cl_context(ctx), CL_MEM_READ_WRITE,
                            bytes, NULL, &err);
  if (err != CL_SUCCESS)
    tu_die("clCreateBuffer failed: %d", err);
  if (host && clEnqueueWriteBuffer(clr_context_queue(ctx), m, CL_TRUE, 0, bytes,
                                   host, 0, NULL, NULL) != CL_SUCCESS)
    tu_die("clEnqueueWriteBuffer failed");
  return m;
}

/* Buffers: the data at element 3 of its buffer, the output at element 1
 * of a poisoned one, the offsets at element 2 of theirs, the heads at byte
 * 5 of theirs; both forms must equal the host result (want). */
static void run_buffer(clr_context *ctx, const sscan_case *c,
                       const void *want) {
  size_t isize = clr_type_size(c->type), osize = clr_type_size(out_type(c));
  unsigned char *d_host = tu_xmalloc((c->n + 3) * isize);
  memset(d_host, 0x5a, 3 * isize);
  memcpy(d_host + 3 * isize, c->data, c->n * isize);
  uint64_t *o_host = tu_xmalloc((c->segments + 3) * sizeof *o_host);
  o_host[0] = o_host[1] = UINT64_MAX;
  memcpy(o_host + 2, c->offsets, (c->segments + 1) * sizeof *o_host);
  uint8_t *h = heads_of(c, 1);
  uint8_t *h_host = tu_xmalloc(c->n + 5);
  memset(h_host, 1, 5);
  memcpy(h_host + 5, h, c->n);
  free(h);
  unsigned char *poison = tu_xmalloc((c->n + 2) * osize);
  memset(poison, 0xa5, (c->n + 2) * osize);
  cl_mem d = make_buffer(ctx, (c->n + 3) * isize, d_host);
  cl_mem o = make_buffer(ctx, (c->segments + 3) * sizeof *o_host, o_host);
  cl_mem hb = make_buffer(ctx, c->n + 5, h_host);
  cl_mem r = make_buffer(ctx, (c->n + 2) * osize, poison);
  void *got = tu_xmalloc((c->n + 2) * osize);
  for (int form = 0; form < 2; form++) {
    clr_status st =
        form == 0 ? clr_scan_segments_buffer(ctx, &c->opt, c->op, c->type, d, 3,
                                             r, 1, c->n, o, 2, c->segments)
                  : clr_scan_heads_buffer(ctx, &c->opt, c->op, c->type, d, 3, r,
                                          1, c->n, hb, 5);
    const char *how = form == 0 ? "offsets, buffers" : "heads, buffers";
    if (!tu_check(st == CLR_OK, "%s (%s): %s: %s", c->what, how,
                  clr_status_name(st), clr_context_error(ctx)))
      continue;
    if (clEnqueueReadBuffer(clr_context_queue(ctx), r, CL_TRUE, 0,
                            (c->n + 2) * osize, got, 0, NULL,
                            NULL) != CL_SUCCESS)
      tu_die("clEnqueueReadBuffer failed");
    tu_check(memcmp(got, poison, osize) == 0 &&
                 memcmp((char *)got + (c->n + 1) * osize, poison, osize) == 0,
             "%s (%s): wrote outside [1, n]", c->what, how);
    if (bits_fixed(c))
      tu_check(memcmp((char *)got + osize, want, c->n * osize) == 0,
               "%s (%s): differs from the host arrays' result", c->what, how);
    else
      check_out(c, (char *)got + osize, tu_last_timing(ctx).error_depth, how);
  }
  free(got);
  clReleaseMemObject(d);
  clReleaseMemObject(o);
  clReleaseMemObject(hb);
  clReleaseMemObject(r);
  free(d_host);
  free(o_host);
  free(h_host);
  free(poison);
}

static sscan_case seeded(clr_op op, clr_type type, size_t n, layout l,
                         int exclusive, uint64_t seed) {
  sscan_case c = {.op = op, .type = type, .n = n};
  clr_options_init(&c.opt);
  c.opt.exclusive = exclusive;
  void *data = tu_xmalloc(n * clr_type_size(type));
  tu_fill(op, type, TU_RANDOM, data, n, seed);
  c.data = data;
  c.offsets = make_offsets(l, n, seed ^ 0x5eedull, &c.segments);
  snprintf(c.what, sizeof c.what, "%s %s %s n=%zu %s (%zu segments)",
           exclusive ? "exclusive" : "inclusive", clr_op_name(op),
           clr_type_name(type), n, layout_names[l], c.segments);
  return c;
}

static void free_case(sscan_case *c) {
  free((void *)c->data);
  free((void *)c->offsets);
}

/* Run a case through host arrays (and, with buffers, through cl_mem). */
static void run_case(clr_context *ctx, sscan_case *c, int buffers,
                     int in_place) {
  void *want = run_host(ctx, c, in_place);
  if (want && buffers)
    run_buffer(ctx, c, want);
  free(want);
}

/* run_case with a launch shape: runs (the contiguous layout) or tiles
 * (strided) of `coarse` elements a work-item in work-groups of wg; the
 * case is freed after. */
static void run_shaped(clr_context *ctx, sscan_case *c, clr_layout layout,
                       size_t coarse, size_t wg, int buffers, int in_place) {
  c->opt.layout = layout;
  c->opt.coarse = coarse;
  c->opt.wg_size = wg;
  size_t len = strlen(c->what);
  snprintf(c->what + len, sizeof c->what - len, " %s, wg=%zu coarse=%zu",
           layout == CLR_LAYOUT_STRIDED ? "tiles" : "runs", wg, coarse);
  run_case(ctx, c, buffers, in_place);
  free_case(c);
}

/* ------------------------------------------------------------ sets */

static const size_t sizes[] = {1, 2, 3, 31, 257, 4099, 30011, 65537};
#define N_SIZES (sizeof sizes / sizeof *sizes)

/* Every op x type x layout, inclusive and exclusive, over a few sizes;
 * every third case through buffers too, every fifth in place. */
static void matrix(clr_context *ctx) {
  size_t k = 0;
  for (size_t o = 0; o < N_SCAN_OPS; o++)
    for (size_t t = 0; t < N_SCAN_TYPES; t++) {
      for (int l = 0; l < L_COUNT; l++)
        for (int ex = 0; ex < 2; ex++, k++) {
          size_t n = sizes[(k * 5 + (size_t)l) % N_SIZES];
          sscan_case c = seeded(scan_ops[o], scan_types[t], n, (layout)l, ex,
                                tu_seed(o, t, (uint64_t)l, n));
          run_case(ctx, &c, k % 3 == 0, k % 5 == 0);
          free_case(&c);
        }
      char name[64];
      snprintf(name, sizeof name, "matrix %s %s", clr_op_name(scan_ops[o]),
               clr_type_name(scan_types[t]));
      tu_section(name);
    }
}

/* Launch shapes: runs (the contiguous layout) of 2 elements a work-item
 * (15 levels over 30011) to more than n in work-groups of 1 to 256;
 * tiles; and the wider output types (accumulate_in). */
static void shapes(clr_context *ctx) {
  static const size_t coarse[] = {2, 3, 16, 100, 5000, 200000};
  static const size_t wgs[] = {1, 7, 64, 256};
  size_t k = 0;
  for (size_t i = 0; i < sizeof coarse / sizeof *coarse; i++)
    for (size_t w = 0; w < sizeof wgs / sizeof *wgs; w++, k++) {
      clr_op op = scan_ops[k % N_SCAN_OPS];
      clr_type type = k % 2 ? CLR_INT : CLR_FLOAT;
      layout l = (layout)(k % L_COUNT);
      sscan_case c =
          seeded(op, type, 30011, l, (int)(k % 2), tu_seed(k, 7, 0, 0));
      run_shaped(ctx, &c, CLR_LAYOUT_CONTIGUOUS, coarse[i], wgs[w], k % 4 == 0,
                 k % 3 == 0);
    }
  /* tiles (the strided layout, GPUs' default): at most 32 elements a
   * work-item, the work-group size built in */
  static const size_t tile_coarse[] = {2, 3, 16, 32};
  static const size_t tile_wgs[] = {1, 7, 64, 128};
  /* (each shape and type is a program of its own: four shapes, two
   * types each, every layout) */
  for (size_t i = 0; i < 4; i++)
    for (int l = 0; l < L_COUNT; l++, k++) {
      clr_op op = scan_ops[k % N_SCAN_OPS];
      clr_type type = scan_types[(2 * i + (size_t)l % 2) % N_SCAN_TYPES];
      sscan_case c = seeded(op, type, 30011, (layout)l, (int)(k % 2),
                            tu_seed(k, 17, 0, 0));
      run_shaped(ctx, &c, CLR_LAYOUT_STRIDED, tile_coarse[i], tile_wgs[i],
                 k % 2 == 0, k % 3 == 0);
    }
  {
    sscan_case c = seeded(CLR_SUM, CLR_INT, 100, L_RANDOM, 0, 3);
    c.opt.layout = CLR_LAYOUT_STRIDED;
    c.opt.coarse = 33;
    int32_t y[100];
    clr_status st = clr_scan_segments_host(ctx, &c.opt, c.op, c.type, c.data, y,
                                           c.n, c.offsets, c.segments);
    tu_check(st == CLR_ERR_INVALID_ARGUMENT,
             "tiles of 33 elements a work-item: got %s", clr_status_name(st));
    free_case(&c);
  }
  /* into wider types: int into long, float into double */
  static const clr_type wide[][2] = {
      {CLR_INT, CLR_LONG}, {CLR_UINT, CLR_ULONG}, {CLR_FLOAT, CLR_DOUBLE}};
  for (size_t i = 0; i < 3; i++)
    for (int ex = 0; ex < 2; ex++) {
      sscan_case c = seeded(CLR_SUM, wide[i][0], 65537, L_RANDOM, ex,
                            tu_seed(i, 11, (uint64_t)ex, 0));
      c.opt.accumulate_in = wide[i][1];
      snprintf(c.what + strlen(c.what), sizeof c.what - strlen(c.what),
               " into %s", clr_type_name(wide[i][1]));
      run_case(ctx, &c, 1, 1);
      free_case(&c);
    }
  tu_section("shapes");
}

/* The carry-in continues the first segment: the scan of (carry, data...)
 * in the first segment, the rest unchanged.  Checked against the CPU scan
 * of the array with the carry put first. */
static void carry_in(clr_context *ctx, clr_context *chunked) {
  size_t n = 4099;
  for (int ex = 0; ex < 2; ex++)
    for (int which = 0; which < 2; which++) {
      clr_context *c_ctx = which ? chunked : ctx;
      sscan_case c = seeded(CLR_SUM, CLR_LONG, n, L_STRADDLE, ex, 99 + ex);
      int64_t carry = -123456789;
      c.opt.carry_in = &carry;
      int64_t *got = tu_xmalloc(n * sizeof *got);
      clr_status st = clr_scan_segments_host(
          c_ctx, &c.opt, c.op, c.type, c.data, got, n, c.offsets, c.segments);
      if (tu_check(st == CLR_OK, "carry-in: %s", clr_context_error(c_ctx))) {
        const int64_t *x = c.data;
        size_t bad = n;
        int64_t run = carry;
        for (size_t s = 0; s < c.segments && bad == n; s++) {
          if (s > 0)
            run = 0;
          for (size_t i = c.offsets[s]; i < c.offsets[s + 1]; i++) {
            int64_t want = ex ? run : (int64_t)((uint64_t)run + (uint64_t)x[i]);
            run = (int64_t)((uint64_t)run + (uint64_t)x[i]);
            if (got[i] != want) {
              bad = i;
              break;
            }
          }
        }
        tu_check(bad == n, "carry-in (%s, %s): first wrong element %zu",
                 ex ? "exclusive" : "inclusive",
                 which ? "streamed" : "one launch", bad);
      }
      free(got);
      free_case(&c);
    }
  tu_section("carry-in");
}

/* NaN in one segment stays there; ties of min and max; signed zeros. */
static void specials(clr_context *ctx) {
  size_t n = 1000;
  float *x = tu_xmalloc(n * sizeof *x);
  for (size_t i = 0; i < n; i++)
    x[i] = (float)(i % 7) - 3.0f;
  x[10] = NAN;
  x[500] = -0.0f;
  uint64_t off[] = {0, 5, 20, 20, 500, 501, 1000};
  for (size_t o = 0; o < N_SCAN_OPS; o++)
    for (int ex = 0; ex < 2; ex++) {
      sscan_case c = {.op = scan_ops[o],
                      .type = CLR_FLOAT,
                      .data = x,
                      .n = n,
                      .offsets = off,
                      .segments = 6};
      clr_options_init(&c.opt);
      c.opt.exclusive = ex;
      snprintf(c.what, sizeof c.what, "NaN in [5, 20): %s %s",
               ex ? "exclusive" : "inclusive", clr_op_name(scan_ops[o]));
      float *got = run_host(ctx, &c, 0);
      if (got)
        tu_check(!isnan(got[20]) && !isnan(got[4]),
                 "%s: the NaN left its segment", c.what);
      free(got);
    }
  free(x);
  tu_section("specials");
}

/* Every refusal, each with the context working after. */
static void errors(clr_context *ctx) {
  size_t n = 100;
  int *x = tu_xmalloc(n * sizeof *x), *y = tu_xmalloc((n + 1) * sizeof *y);
  for (size_t i = 0; i < n; i++)
    x[i] = (int)i;
  uint8_t heads[100] = {0};
  struct {
    const char *what;
    uint64_t off[4];
    size_t segments;
  } bad[] = {{"first offset not 0", {1, 50, 100}, 2},
             {"decreasing", {0, 60, 50, 100}, 3},
             {"past n", {0, 101, 101}, 2},
             {"last not n", {0, 50, 99}, 2}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    clr_status st = clr_scan_segments_host(ctx, NULL, CLR_SUM, CLR_INT, x, y, n,
                                           bad[i].off, bad[i].segments);
    tu_check(st == CLR_ERR_INVALID_ARGUMENT &&
                 strstr(clr_context_error(ctx), "offsets"),
             "offsets %s: got %s (%s)", bad[i].what, clr_status_name(st),
             clr_context_error(ctx));
    /* and in a buffer, checked on the device */
    cl_mem d = make_buffer(ctx, n * sizeof *x, x);
    cl_mem r = make_buffer(ctx, n * sizeof *x, NULL);
    cl_mem o = make_buffer(ctx, sizeof bad[i].off, bad[i].off);
    st = clr_scan_segments_buffer(ctx, NULL, CLR_SUM, CLR_INT, d, 0, r, 0, n, o,
                                  0, bad[i].segments);
    tu_check(st == CLR_ERR_INVALID_ARGUMENT,
             "offsets %s (buffers): got %s (%s)", bad[i].what,
             clr_status_name(st), clr_context_error(ctx));
    clReleaseMemObject(d);
    clReleaseMemObject(r);
    clReleaseMemObject(o);
  }
  uint64_t good[] = {0, 50, 100};
  clr_options opt;
  struct {
    const char *what;
    clr_status want;
    clr_status got;
  } cases[8];
  size_t nc = 0;
#define REFUSE(what_, want_, call_)                                            \
  cases[nc].what = (what_);                                                    \
  cases[nc].want = (want_);                                                    \
  cases[nc++].got = (call_)
  REFUSE("NULL offsets", CLR_ERR_INVALID_ARGUMENT,
         clr_scan_segments_host(ctx, NULL, CLR_SUM, CLR_INT, x, y, n, NULL, 2));
  REFUSE("NULL heads", CLR_ERR_INVALID_ARGUMENT,
         clr_scan_heads_host(ctx, NULL, CLR_SUM, CLR_INT, x, y, n, NULL));
  REFUSE("0 segments", CLR_ERR_INVALID_ARGUMENT,
         clr_scan_segments_host(ctx, NULL, CLR_SUM, CLR_INT, x, y, n, good, 0));
  REFUSE("op and", CLR_ERR_UNSUPPORTED,
         clr_scan_heads_host(ctx, NULL, CLR_AND, CLR_INT, x, y, n, heads));
  REFUSE("partial overlap", CLR_ERR_INVALID_ARGUMENT,
         clr_scan_segments_host(ctx, NULL, CLR_SUM, CLR_INT, x, x + 1, n - 1,
                                good, 1));
  clr_options_init(&opt);
  opt.kernel = CLR_SCAN_DECOUPLED;
  REFUSE("a scan kernel named", CLR_ERR_INVALID_ARGUMENT,
         clr_scan_heads_host(ctx, &opt, CLR_SUM, CLR_INT, x, y, n, heads));
  clr_options_init(&opt);
  opt.map = CLR_MAP_SQUARE;
  REFUSE("a map", CLR_ERR_UNSUPPORTED,
         clr_scan_heads_host(ctx, &opt, CLR_SUM, CLR_INT, x, y, n, heads));
  REFUSE("n = 0", CLR_ERR_INVALID_ARGUMENT,
         clr_scan_heads_host(ctx, NULL, CLR_SUM, CLR_INT, x, y, 0, heads));
#undef REFUSE
  for (size_t i = 0; i < nc; i++)
    tu_check(cases[i].got == cases[i].want, "%s: got %s, want %s",
             cases[i].what, clr_status_name(cases[i].got),
             clr_status_name(cases[i].want));
  /* the context still works */
  clr_status st =
      clr_scan_segments_host(ctx, NULL, CLR_SUM, CLR_INT, x, y, n, good, 2);
  tu_check(st == CLR_OK && y[49] == 49 * 50 / 2 && y[50] == 50 &&
               y[99] == (50 + 99) * 50 / 2,
           "after the refusals: %s", clr_status_name(st));
  free(x);
  free(y);
  tu_section("errors");
}

/* Host arrays in chunks: a context whose chunks are 4 KiB (and one whose
 * data is copied), segments crossing the chunk boundaries. */
static void chunks(clr_context *chunked, clr_context *copied) {
  size_t k = 0;
  for (int l = 0; l < L_COUNT; l++)
    for (size_t t = 0; t < N_SCAN_TYPES; t += 2, k++) {
      clr_op op = scan_ops[k % N_SCAN_OPS];
      sscan_case c = seeded(op, scan_types[t], 10007, (layout)l, (int)(k % 2),
                            tu_seed(k, 13, 0, 0));
      if (k % 4 < 2)
        c.opt.layout = CLR_LAYOUT_STRIDED;
      run_case(k % 2 ? chunked : copied, &c, 0, k % 3 == 0);
      free_case(&c);
    }
  tu_section("streamed chunks");
}

/* n beyond one device allocation (POCL_MEMORY_LIMIT=1, as
 * segments-stream): 7e7 ints in random segments by offsets and by heads,
 * streamed in chunks with segments across their boundaries. */
static void stream(clr_context *ctx) {
  size_t n = 70000000;
  static const layout ls[] = {L_RANDOM};
  for (size_t li = 0; li < 1; li++) {
    sscan_case c =
        seeded(li ? CLR_MAX : CLR_SUM, CLR_INT, n, ls[li], (int)li, 77 + li);
    run_case(ctx, &c, 0, (int)li);
    /* Past one allocation the call must have streamed; a device with more
     * room scans it whole. */
    if (n * sizeof(int) > tu_device.max_alloc_size)
      tu_check_streamed(ctx, c.what);
    free_case(&c);
  }
  tu_section("stream");
}

/* Under Oclgrind (tests/reliability): small arrays in every layout,
 * many levels (2 or 3 elements a work-item), odd work-groups, both head
 * forms, buffers, streamed chunks, and the refusals (bad offsets in a
 * buffer are never read through). */
static void oclgrind_set(clr_context *ctx, clr_context *chunked) {
  const size_t *small = seg_small_sizes;
  static const seg_op_type cases[] = {{CLR_SUM, CLR_FLOAT},
                                      {CLR_MAX, CLR_INT},
                                      {CLR_MIN, CLR_HALF},
                                      {CLR_PROD, CLR_UINT}};
  for (size_t si = 0; si < SEG_N_SMALL; si++)
    for (int l = 0; l < L_COUNT; l++)
      for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        sscan_case c = seeded(cases[k].op, cases[k].type, small[si], (layout)l,
                              (int)((k + si) % 2), tu_seed(small[si], l, k, 5));
        c.opt.wg_size = 3 + (k + si) % 2;
        c.opt.coarse = 2 + (k + (size_t)l) % 2;
        if ((k + (size_t)l) % 2)
          c.opt.layout = CLR_LAYOUT_STRIDED;
        run_case((k + si + (size_t)l) % 2 ? chunked : ctx, &c,
                 (k + (size_t)l) % 3 == 0, k % 2);
        free_case(&c);
      }
  tu_section("oclgrind");
  errors(ctx);
}

int main(int argc, char **argv) {
  const char *set = "";
  tu_option options[] = {{"--set", &set, NULL}};
  tu_parse_args(argc, argv, options, TU_N_OPTIONS(options));
  int all = !set[0];
  clr_context *ctx = tu_context_chunked(0, 0);
  if (all || strcmp(set, "matrix") == 0)
    matrix(ctx);
  if (all || strcmp(set, "shapes") == 0)
    shapes(ctx);
  if (all || strcmp(set, "edges") == 0) {
    clr_context *chunked = tu_context_chunked(4096, 0);
    clr_context *copied = tu_context_chunked(4096, 1);
    carry_in(ctx, chunked);
    specials(ctx);
    errors(ctx);
    chunks(chunked, copied);
    clr_context_release(copied);
    clr_context_release(chunked);
  }
  if (strcmp(set, "stream") == 0)
    stream(ctx);
  if (strcmp(set, "oclgrind") == 0) {
    clr_context *chunked = tu_context_chunked(256, 0);
    oclgrind_set(ctx, chunked);
    clr_context_release(chunked);
  }
  clr_context_release(ctx);
  return tu_finish("test_scan_segments");
}
