/* Segmented reductions (clr_reduce_segments_host / _buffer) and
 * reduce-by-key (clr_reduce_by_key_host) against a CPU
 * loop over each segment: every op and type, segment layouts from all
 * length 1 to one segment of all n, empty segments anywhere, segments
 * straddling work-item, work-group and streamed-chunk boundaries, launch
 * shapes, cl_mem ranges at offsets, NaN and signed zeros, maps, and bad
 * offsets refused with the context still working after.
 *
 *   test_segments [--set=SET] [--any-device] [-v]
 * SET: matrix, layouts, edges, keys, ranges (clr_reduce_ranges_*: any
 * order, overlapping, sorted with gaps, sliding windows, empty), indexed
 * (argmin, argmax, minmax; every load width the tuning gives; means,
 * nanmean on every segmented driver);
 * stream (with POCL_MEMORY_LIMIT=1);
 * oclgrind, oclgrind-one-host, oclgrind-one-buffer
 * (default: every set but stream and the oclgrind ones, which run under
 * Oclgrind, tests/reliability, or anywhere with --any-device) */
#include "internal.h" /* (a context without fp64, simulated) */
#include "segment_layouts.h"
#include "segment_reference.h"
#include "test_util.h"

/* ------------------------------------------------------------ checking */

/* A case of op over n elements of data in the given segments, with the
 * default options; what, printf-style, says what it is. */
static TU_PRINTF(7, 8) seg_case
    case_of(clr_op op, clr_type type, const void *data, size_t n,
            const uint64_t *offsets, size_t segments, const char *fmt, ...) {
  seg_case c = {.op = op, .type = type, .data = data, .n = n};
  c.offsets = offsets;
  c.segments = segments;
  clr_options_init(&c.opt);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c.what, sizeof c.what, fmt, ap);
  va_end(ap);
  return c;
}

/* More words at the end of a case's what. */
static TU_PRINTF(2, 3) void note(seg_case *c, const char *fmt, ...) {
  size_t len = strlen(c->what);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->what + len, sizeof c->what - len, fmt, ap);
  va_end(ap);
}

/* Every segment's result against a CPU loop over it
 * (clr_ref_segments_check: the identity for an empty segment, exact for
 * integers, min and max, floating sums within gamma_k sum|x|).  One check
 * per call, naming the first failing segment. */
static int check_results(const seg_case *c, const void *results, size_t depth,
                         clr_map map) {
  clr_type rt = clr_options_result_type(&c->opt, c->op, c->type);
  clr_segments_check chk;
  char gb[64], wb[64];
  if (!clr_ref_segments_check(map, c->op, c->type, rt, c->data, c->offsets,
                              c->segments, results, depth, &chk))
    tu_die("out of host memory");
  size_t s = chk.worst_index;
  return tu_check(
      chk.ok,
      "%s: %zu segments wrong, first %zu [%llu, %llu): got %s at %lld, "
      "want %s at %lld (error %g, bound %g, depth %zu)",
      c->what, chk.n_bad, s, (unsigned long long)c->offsets[s],
      (unsigned long long)c->offsets[s + 1],
      tu_fmt(&chk.got_worst, gb, sizeof gb), (long long)chk.got_worst.index,
      tu_fmt(&chk.ref_worst, wb, sizeof wb), (long long)chk.ref_worst.index,
      chk.worst_error, chk.worst_bound, depth);
}

/* Host arrays: run and check; returns the status. */
static clr_status run_host(clr_context *ctx, const seg_case *c) {
  size_t rsize = clr_result_bytes(&c->opt, c->op, c->type);
  /* Poisoned, so a result the call never writes shows. */
  void *res = tu_xmalloc(c->segments * rsize + 1);
  memset(res, 0xa5, c->segments * rsize);
  clr_status st =
      clr_reduce_segments_host(ctx, &c->opt, c->op, c->type, c->data, c->n,
                               c->offsets, c->segments, res);
  if (!tu_type_available(c->type))
    tu_check(st == CLR_ERR_NO_FP64, "%s: no fp64, got %s", c->what,
             clr_status_name(st));
  else if (tu_check(st == CLR_OK, "%s: %s: %s", c->what, clr_status_name(st),
                    clr_context_error(ctx)))
    check_results(c, res, tu_last_timing(ctx).error_depth, c->opt.map);
  free(res);
  return st;
}

/* The same data through buffers: data at element 3 of its buffer, the
 * offsets at element 2 of theirs (the elements before them poison), the
 * results from element 1 of a poisoned buffer.  Each buffer is written
 * whole, from its start (Oclgrind 21.10's --uninitialized marks a write
 * at an offset as if it started at 0). */
static void run_buffer(clr_context *ctx, const seg_case *c) {
  size_t esize = clr_type_size(c->type),
         rsize = clr_result_bytes(&c->opt, c->op, c->type);
  size_t d_bytes = (c->n + 3) * esize, o_count = c->segments + 3;
  size_t r_bytes = (c->segments + 1) * rsize;
  unsigned char *d_host = tu_xmalloc(d_bytes), *r_host = tu_xmalloc(r_bytes);
  uint64_t *o_host = tu_xmalloc(o_count * sizeof *o_host);
  memset(d_host, 0xa5, 3 * esize);
  memcpy(d_host + 3 * esize, c->data, c->n * esize);
  o_host[0] = o_host[1] = UINT64_MAX;
  memcpy(o_host + 2, c->offsets, (c->segments + 1) * sizeof *o_host);
  memset(r_host, 0xa5, r_bytes);
  cl_context cl = clr_context_cl_context(ctx);
  cl_command_queue q = clr_context_queue(ctx);
  cl_int e1, e2, e3;
  cl_mem d = clCreateBuffer(cl, CL_MEM_READ_WRITE, d_bytes, NULL, &e1);
  cl_mem o = clCreateBuffer(cl, CL_MEM_READ_WRITE, o_count * sizeof *o_host,
                            NULL, &e2);
  cl_mem r = clCreateBuffer(cl, CL_MEM_READ_WRITE, r_bytes, NULL, &e3);
  if (e1 != CL_SUCCESS || e2 != CL_SUCCESS || e3 != CL_SUCCESS)
    tu_die("clCreateBuffer failed");
  if (clEnqueueWriteBuffer(q, d, CL_TRUE, 0, d_bytes, d_host, 0, NULL, NULL) !=
          CL_SUCCESS ||
      clEnqueueWriteBuffer(q, o, CL_TRUE, 0, o_count * sizeof *o_host, o_host,
                           0, NULL, NULL) != CL_SUCCESS ||
      clEnqueueWriteBuffer(q, r, CL_TRUE, 0, r_bytes, r_host, 0, NULL, NULL) !=
          CL_SUCCESS)
    tu_die("clEnqueueWriteBuffer failed");
  free(d_host);
  free(o_host);
  free(r_host);
  clr_status st = clr_reduce_segments_buffer(ctx, &c->opt, c->op, c->type, d, 3,
                                             c->n, o, 2, c->segments, r, 1);
  if (tu_type_available(c->type) &&
      tu_check(st == CLR_OK, "%s (buffers): %s: %s", c->what,
               clr_status_name(st), clr_context_error(ctx))) {
    void *res = tu_xmalloc(c->segments * rsize);
    if (clEnqueueReadBuffer(q, r, CL_TRUE, rsize, c->segments * rsize, res, 0,
                            NULL, NULL) != CL_SUCCESS)
      tu_die("clEnqueueReadBuffer failed");
    check_results(c, res, tu_last_timing(ctx).error_depth, c->opt.map);
    free(res);
  }
  clReleaseMemObject(d);
  clReleaseMemObject(o);
  clReleaseMemObject(r);
}

/* ------------------------------------------------------------ sets */

/* Seeded data suited to op (tu_fill) in segments of layout l: a case that
 * owns both (free_case). */
static seg_case seeded(clr_op op, clr_type type, size_t n, layout l,
                       uint64_t seed) {
  size_t segments;
  void *data = tu_xmalloc(n * clr_type_size(type));
  tu_fill(op, type, TU_RANDOM, data, n, seed);
  uint64_t *off = make_offsets(l, n, seed ^ 0x5eedull, &segments);
  return case_of(op, type, data, n, off, segments,
                 "%s %s n=%zu %s (%zu segments)", clr_op_name(op),
                 clr_type_name(type), n, layout_names[l], segments);
}

static void free_case(seg_case *c) {
  free((void *)c->data);
  free((void *)c->offsets);
}

static const size_t sizes[] = {1, 2, 3, 31, 257, 4099, 65537, 100003};
#define N_SIZES (sizeof sizes / sizeof *sizes)

static const clr_type seg_types[] = {CLR_FLOAT, CLR_DOUBLE, CLR_INT, CLR_UINT,
                                     CLR_LONG,  CLR_ULONG,  CLR_HALF};
#define N_SEG_TYPES (sizeof seg_types / sizeof *seg_types)

/* Every op x type x layout over a few sizes, through host arrays; every
 * fourth case through buffers too. */
static void matrix(clr_context *ctx) {
  static const size_t matrix_sizes[] = {3, 257, 65537};
  size_t k = 0;
  for (size_t ti = 0; ti < N_SEG_TYPES; ti++)
    for (size_t oi = 0; oi < TU_N_OPS; oi++) {
      clr_type type = seg_types[ti];
      clr_op op = tu_ops[oi];
      if (clr_op_supports(op, type) != CLR_OK)
        continue;
      for (size_t si = 0; si < 3; si++)
        for (int l = 0; l < L_COUNT; l++, k++) {
          seg_case c = seeded(op, type, matrix_sizes[si], (layout)l,
                              tu_seed(ti, oi, matrix_sizes[si], (unsigned)l));
          /* Every other case in tiles (the GPUs' form), for every type's
           * sum and every op of int and float: the tile's code is the
           * same for all, and each (type, op) in tiles is one more program
           * for PoCL to compile. */
          if (k % 2 && (op == CLR_SUM || type == CLR_INT || type == CLR_FLOAT))
            c.opt.layout = CLR_LAYOUT_STRIDED;
          if (run_host(ctx, &c) == CLR_OK && k % 4 == 0)
            run_buffer(ctx, &c);
          free_case(&c);
        }
    }
  tu_section("matrix");
}

/* Float sums and int maxima over every size and layout, in the default
 * context, a context streaming 4 KiB chunks (segments across chunks) and
 * one copying host data; several work-group sizes. */
static void layouts(clr_context *ctx, clr_context *chunked,
                    clr_context *copied) {
  static const size_t wgs[] = {0, 1, 3, 64};
  /* units per work-item: the default, and few enough that segments span
   * many work-items and the carry pyramid has several levels */
  static const size_t coarse[] = {0, 1, 3, 16};
  /* strided: a tile a work-group in local memory (GPUs); contiguous: a
   * run a work-item (CPUs) */
  static const clr_layout layouts_of[] = {CLR_LAYOUT_CONTIGUOUS,
                                          CLR_LAYOUT_STRIDED};
  static const clr_op ops[] = {CLR_SUM, CLR_MAX};
  static const clr_type types[] = {CLR_FLOAT, CLR_INT};
  clr_context *ctxs[3] = {ctx, chunked, copied};
  static const char *const ctx_names[3] = {"default", "4 KiB chunks", "copied"};
  for (size_t si = 0; si < N_SIZES; si++)
    for (int l = 0; l < L_COUNT; l++)
      for (size_t v = 0; v < 2; v++) {
        seg_case base = seeded(ops[v], types[v], sizes[si], (layout)l,
                               tu_seed(sizes[si], l, v, 3));
        for (size_t ci = 0; ci < 3; ci++) {
          seg_case c = base;
          c.opt.wg_size = wgs[(si + (size_t)l + ci) % 4];
          c.opt.coarse = coarse[(si + ci + v) % 4];
          c.opt.layout = layouts_of[(si + (size_t)l + ci + v) % 2];
          note(&c, " wg=%zu coarse=%zu %s %s", c.opt.wg_size, c.opt.coarse,
               c.opt.layout == CLR_LAYOUT_STRIDED ? "tiles" : "runs",
               ctx_names[ci]);
          run_host(ctxs[ci], &c);
          if (ci == 0 && c.n >= 257)
            run_buffer(ctx, &c);
        }
        free_case(&base);
      }
  tu_section("layouts");
}

/* Past one device allocation (run with POCL_MEMORY_LIMIT=1: 256 MiB
 * allocations): 70 million floats streamed in chunks, with segments
 * across the chunk boundaries; and int maxima. */
static void stream(clr_context *ctx) {
  size_t n = 70000000;
  static const layout ls[] = {L_THREE, L_RANDOM, L_MIXED};
  static const struct {
    clr_op op;
    clr_type type;
  } cases[] = {{CLR_SUM, CLR_FLOAT}, {CLR_MAX, CLR_INT}};
  for (size_t k = 0; k < 2; k++)
    for (size_t li = 0; li < 3; li++) {
      seg_case c = seeded(cases[k].op, cases[k].type, n, ls[li], 77 + k + li);
      note(&c, ", streamed");
      /* Past one allocation (PoCL with its memory limit) the call must
       * have streamed; a device with more room reduces it whole. */
      int past = n * clr_type_size(c.type) > tu_device.max_alloc_size;
      if (run_host(ctx, &c) == CLR_OK && past)
        tu_check_streamed(ctx, c.what);
      free_case(&c);
    }
  tu_section("stream");
}

/* A buffer of `pre` poison bytes, then bytes..bytes + size (poison too
 * when bytes is NULL), then `post` poison bytes. */
static cl_mem poisoned_buffer(clr_context *ctx, size_t pre, const void *bytes,
                              size_t size, size_t post) {
  unsigned char *h = tu_xmalloc(pre + size + post);
  memset(h, 0xa5, pre + size + post);
  if (bytes)
    memcpy(h + pre, bytes, size);
  cl_mem m = tu_new_buffer(ctx, pre + size + post, h);
  free(h);
  return m;
}

static void *read_back(clr_context *ctx, cl_mem m, size_t size) {
  void *h = tu_xmalloc(size);
  tu_read_buffer(ctx, m, size, h);
  return h;
}

/* The case of keys() again through clr_reduce_by_key_buffer: keys at
 * element 2 of their buffer, values at element 3, the runs' keys from
 * element 1 and the results from element 1 of poisoned buffers just large
 * enough for the runs (plus one poisoned element after them), all
 * compared with the host call's answers and the CPU's. */
static void keys_buffer(clr_context *ctx, seg_case *c, clr_type kt,
                        const unsigned char *k, const size_t *host_runs,
                        const uint64_t *off, size_t runs) {
  size_t ks = clr_type_size(kt), es = clr_type_size(c->type),
         rs = clr_result_bytes(&c->opt, c->op, c->type), n = c->n;
  cl_mem kb = poisoned_buffer(ctx, 2 * ks, k, n * ks, 0);
  cl_mem vb = poisoned_buffer(ctx, 3 * es, c->data, n * es, 0);
  cl_mem ub = poisoned_buffer(ctx, ks, NULL, runs * ks, ks);
  cl_mem rb = poisoned_buffer(ctx, rs, NULL, runs * rs, rs);
  size_t got_runs = 0;
  clr_status st =
      clr_reduce_by_key_buffer(ctx, &c->opt, c->op, kt, kb, 2, c->type, vb, 3,
                               n, ub, 1, rb, 1, &got_runs);
  if (tu_check(st == CLR_OK && got_runs == runs && *host_runs == runs,
               "%s (buffers): %s: %s, %zu runs, want %zu", c->what,
               clr_status_name(st), clr_context_error(ctx), got_runs, runs)) {
    unsigned char *uk = read_back(ctx, ub, (runs + 2) * ks);
    unsigned char *res = read_back(ctx, rb, (runs + 2) * rs);
    size_t bad = 0;
    for (size_t q = 0; q < runs; q++)
      bad += memcmp(uk + (q + 1) * ks, k + off[q] * ks, ks) != 0;
    unsigned char poison[64]; /* a key, a value or a record */
    memset(poison, 0xa5, sizeof poison);
    tu_check(bad == 0, "%s (buffers): %zu run keys wrong", c->what, bad);
    tu_check(memcmp(uk, poison, ks) == 0 &&
                 memcmp(uk + (runs + 1) * ks, poison, ks) == 0 &&
                 memcmp(res, poison, rs) == 0 &&
                 memcmp(res + (runs + 1) * rs, poison, rs) == 0,
             "%s (buffers): wrote outside the runs", c->what);
    note(c, " (buffers)");
    check_results(c, res + rs, tu_last_timing(ctx).error_depth, CLR_MAP_NONE);
    free(uk);
    free(res);
  }
  clReleaseMemObject(kb);
  clReleaseMemObject(vb);
  clReleaseMemObject(ub);
  clReleaseMemObject(rb);
}

/* What clr_reduce_by_key_buffer refuses, with nothing written: overlapping
 * keys and unique keys, too small a buffer for the runs' keys (found once
 * counted), float keys, a NULL count. */
static void keys_buffer_refusals(clr_context *ctx) {
  int k[6] = {4, 4, 5, 6, 6, 6};
  float v[6] = {1, 2, 3, 4, 5, 6};
  size_t nr = 99;
  cl_mem kb = poisoned_buffer(ctx, 0, k, sizeof k, 0);
  cl_mem vb = poisoned_buffer(ctx, 0, v, sizeof v, 0);
  cl_mem small = poisoned_buffer(ctx, 0, NULL, 2 * sizeof(int), 0);
  cl_mem rb = poisoned_buffer(ctx, 0, NULL, 6 * sizeof(float), 0);
  TU_EXPECT_STATUS(clr_reduce_by_key_buffer(ctx, NULL, CLR_SUM, CLR_INT, kb, 0,
                                            CLR_FLOAT, vb, 0, 6, kb, 3, rb, 0,
                                            &nr),
                   CLR_ERR_INVALID_ARGUMENT, "keys and unique keys overlap");
  TU_EXPECT_STATUS(clr_reduce_by_key_buffer(ctx, NULL, CLR_SUM, CLR_INT, kb, 0,
                                            CLR_FLOAT, vb, 0, 6, small, 0, rb,
                                            0, &nr),
                   CLR_ERR_INVALID_ARGUMENT, "3 runs' keys into room for 2");
  TU_EXPECT_STATUS(clr_reduce_by_key_buffer(ctx, NULL, CLR_SUM, CLR_FLOAT, vb,
                                            0, CLR_FLOAT, vb, 0, 6, small, 0,
                                            rb, 0, &nr),
                   CLR_ERR_INVALID_ARGUMENT, "float keys (buffers)");
  TU_EXPECT_STATUS(clr_reduce_by_key_buffer(ctx, NULL, CLR_SUM, CLR_INT, kb, 0,
                                            CLR_FLOAT, vb, 0, 6, small, 0, rb,
                                            0, NULL),
                   CLR_ERR_INVALID_ARGUMENT, "n_runs NULL (buffers)");
  TU_CHECK(nr == 99, "a refused call set n_runs to %zu", nr);
  cl_mem ub = poisoned_buffer(ctx, 0, NULL, 3 * sizeof(int), 0);
  if (TU_EXPECT_STATUS(clr_reduce_by_key_buffer(ctx, NULL, CLR_SUM, CLR_INT, kb,
                                                0, CLR_FLOAT, vb, 0, 6, ub, 0,
                                                rb, 0, &nr),
                       CLR_OK, "three runs (buffers)")) {
    int *uk = read_back(ctx, ub, 3 * sizeof(int));
    float *r = read_back(ctx, rb, 3 * sizeof(float));
    TU_CHECK(nr == 3 && uk[0] == 4 && uk[1] == 5 && uk[2] == 6 && r[0] == 3 &&
                 r[1] == 3 && r[2] == 15,
             "keys 4 5 6, sums 3 3 15: got %zu runs, %d %d %d, %g %g %g", nr,
             uk[0], uk[1], uk[2], r[0], r[1], r[2]);
    free(uk);
    free(r);
  }
  clReleaseMemObject(kb);
  clReleaseMemObject(vb);
  clReleaseMemObject(small);
  clReleaseMemObject(rb);
  clReleaseMemObject(ub);
}

/* Reduce-by-key: runs of equal keys, sorted or not, each a group; keys of
 * every integer type, long and short runs, all equal, all distinct; the
 * runs' keys, their number and each run's result against a CPU loop. */
static void keys(clr_context *ctx, clr_context *chunked) {
  static const clr_type key_types[] = {CLR_INT, CLR_UINT, CLR_LONG, CLR_ULONG};
  static const size_t ns[] = {1, 2, 257, 4099, 100003};
  static const char *const shapes[] = {"runs of 1..50", "all equal",
                                       "all distinct", "runs of 1..3000"};
  for (size_t ki = 0; ki < 4; ki++)
    for (size_t ni = 0; ni < sizeof ns / sizeof *ns; ni++)
      for (size_t sh = 0; sh < 4; sh++) {
        clr_type kt = key_types[ki], vt = ki % 2 ? CLR_INT : CLR_FLOAT;
        /* (uint and long keys: argmax and argmin by key) */
        clr_op op = sh % 2 ? (ki == 1 ? CLR_ARGMAX : CLR_MAX)
                           : (ki == 2 ? CLR_ARGMIN : CLR_SUM);
        size_t n = ns[ni], ks = clr_type_size(kt);
        tu_rng r = {tu_seed(ki, ni, sh, 9)};
        unsigned char *k = tu_xmalloc(n * ks), *uk = tu_xmalloc(n * ks);
        void *v = tu_xmalloc(n * clr_type_size(vt));
        void *res = tu_xmalloc(n * clr_result_bytes(NULL, op, vt));
        uint64_t *off = tu_xmalloc((n + 1) * sizeof *off);
        tu_fill(op, vt, TU_RANDOM, v, n, tu_seed(ki, ni, sh, 10));
        /* keys: a run's key differs from the one before it (unsorted:
         * a key may come back later, as a new run) */
        size_t runs = 0, at = 0;
        uint64_t key = tu_next(&r);
        while (at < n) {
          size_t len = sh == 1 ? n
                       : sh == 2
                           ? 1
                           : 1 + (size_t)tu_below(&r, sh == 3 ? 3000 : 50);
          key = sh == 2 ? key + 1 : key ^ (1 + tu_below(&r, 7));
          off[runs++] = at;
          for (size_t i = at; i < at + len && i < n; i++)
            tu_store_bits(kt, k, i, key);
          at += len;
        }
        off[runs] = n;
        seg_case c =
            case_of(op, vt, v, n, off, runs, "by %s keys, %s values, n=%zu, %s",
                    clr_type_name(kt), clr_type_name(vt), n, shapes[sh]);
        size_t got_runs = 0;
        clr_status st =
            clr_reduce_by_key_host(ni % 2 ? chunked : ctx, &c.opt, op, kt, k,
                                   vt, v, n, uk, res, &got_runs);
        if (tu_check(st == CLR_OK && got_runs == runs,
                     "%s: %s, %zu runs, want %zu", c.what, clr_status_name(st),
                     got_runs, runs)) {
          size_t bad = 0;
          for (size_t q = 0; q < runs; q++)
            bad += memcmp(uk + q * ks, k + off[q] * ks, ks) != 0;
          tu_check(bad == 0, "%s: %zu run keys wrong", c.what, bad);
          check_results(&c, res,
                        tu_last_timing(ni % 2 ? chunked : ctx).error_depth,
                        CLR_MAP_NONE);
        }
        if (ni < 4 || sh % 2 == 0)
          keys_buffer(ctx, &c, kt, k, &got_runs, off, runs);
        free(off);
        free(res);
        free(v);
        free(uk);
        free(k);
      }
  keys_buffer_refusals(ctx);
  /* Refusals. */
  float f[4] = {1, 2, 3, 4}, out[4];
  int ik[4] = {1, 1, 2, 2}, uk4[4];
  size_t nr = 0;
  TU_EXPECT_STATUS(clr_reduce_by_key_host(ctx, NULL, CLR_SUM, CLR_FLOAT, f,
                                          CLR_FLOAT, f, 4, uk4, out, &nr),
                   CLR_ERR_INVALID_ARGUMENT, "float keys");
  TU_EXPECT_STATUS(clr_reduce_by_key_host(ctx, NULL, CLR_SUM, CLR_INT, ik,
                                          CLR_FLOAT, f, 4, uk4, out, NULL),
                   CLR_ERR_INVALID_ARGUMENT, "n_runs NULL");
  TU_EXPECT_STATUS(clr_reduce_by_key_host(ctx, NULL, CLR_MEAN, CLR_INT, ik,
                                          CLR_LONG, f, 4, uk4, out, &nr),
                   CLR_ERR_UNSUPPORTED, "a mean of long values by key");
  /* n past the address space is refused before a key is read (it once
   * read past the array: SIGSEGV); so are NULL values and results */
  size_t huge[] = {SIZE_MAX / 4 + 1, SIZE_MAX / 8, SIZE_MAX};
  for (size_t h = 0; h < sizeof huge / sizeof *huge; h++)
    TU_EXPECT_STATUS(
        clr_reduce_by_key_host(ctx, NULL, CLR_SUM, CLR_INT, ik, CLR_FLOAT, f,
                               huge[h], uk4, out, &nr),
        CLR_ERR_INVALID_ARGUMENT, "by key, n past the address space");
  TU_EXPECT_STATUS(clr_reduce_by_key_host(ctx, NULL, CLR_SUM, CLR_INT, ik,
                                          CLR_FLOAT, NULL, 4, uk4, out, &nr),
                   CLR_ERR_INVALID_ARGUMENT, "by key, values NULL");
  TU_EXPECT_STATUS(clr_reduce_by_key_host(ctx, NULL, CLR_SUM, CLR_INT, ik,
                                          CLR_FLOAT, f, 4, uk4, NULL, &nr),
                   CLR_ERR_INVALID_ARGUMENT, "by key, results NULL");
  TU_EXPECT_STATUS(clr_reduce_by_key_host(ctx, NULL, CLR_SUM, CLR_INT, ik,
                                          CLR_FLOAT, f, 0, uk4, out, &nr),
                   CLR_ERR_INVALID_ARGUMENT, "by key, n = 0");
  if (TU_EXPECT_STATUS(clr_reduce_by_key_host(ctx, NULL, CLR_SUM, CLR_INT, ik,
                                              CLR_FLOAT, f, 4, uk4, out, &nr),
                       CLR_OK, "two runs"))
    TU_CHECK(nr == 2 && uk4[0] == 1 && uk4[1] == 2 && out[0] == 3 &&
                 out[1] == 7,
             "keys 1 2, sums 3 7: got %zu runs, %d %d, %g %g", nr, uk4[0],
             uk4[1], out[0], out[1]);
  tu_section("keys");
}

/* ------------------------------------------------------------ indexed */

/* Values with many ties (seven distinct ones), signed zeros and, with
 * nans, a NaN about one element in 500: the first index of the extreme
 * must win whatever the shape. */
static void fill_ties(clr_type t, void *data, size_t n, uint64_t seed,
                      int nans) {
  tu_rng r = {seed};
  for (size_t i = 0; i < n; i++) {
    int64_t v = (int64_t)tu_below(&r, 7) - 3;
    if (tu_is_float(t)) {
      double x = v == 0 && (tu_next(&r) & 1) ? -0.0 : (double)v;
      if (nans && tu_below(&r, 500) == 0)
        x = NAN;
      tu_store_f(t, data, i, x);
    } else {
      tu_store_i(t, data, i, v);
    }
  }
}

/* Known answers: segments [], [3 1 4], [1 5 9 2 6], [5] of ints. */
static void indexed_known(clr_context *ctx) {
  int x[9] = {3, 1, 4, 1, 5, 9, 2, 6, 5};
  uint64_t off[5] = {0, 0, 3, 8, 9};
  static const clr_op ops[] = {CLR_ARGMIN, CLR_ARGMAX, CLR_MINMAX};
  /* per op and segment: value and index (minmax: min, index, max, index) */
  static const int64_t want[3][4][4] = {
      {{INT32_MAX, -1}, {1, 1}, {1, 0}, {5, 0}},
      {{INT32_MIN, -1}, {4, 2}, {9, 2}, {5, 0}},
      {{INT32_MAX, -1, INT32_MIN, -1},
       {1, 1, 4, 2},
       {1, 0, 9, 2},
       {5, 0, 5, 0}}};
  for (size_t o = 0; o < 3; o++) {
    unsigned char res[4 * 24];
    clr_status st =
        clr_reduce_segments_host(ctx, NULL, ops[o], CLR_INT, x, 9, off, 4, res);
    if (!TU_EXPECT_STATUS(st, CLR_OK, "known answers"))
      continue;
    for (size_t s = 0; s < 4; s++) {
      clr_value v = clr_result_at(ops[o], CLR_INT, res, s);
      const int64_t *w = want[o][s];
      int ok = v.v.i == w[0] && v.index == (uint64_t)w[1];
      if (ops[o] == CLR_MINMAX)
        ok = ok && v.max.i == w[2] && v.max_index == (uint64_t)w[3];
      TU_CHECK(ok, "%s of segment %zu: got %d at %lld (max %d at %lld)",
               clr_op_name(ops[o]), s, v.v.i, (long long)v.index, v.max.i,
               (long long)v.max_index);
    }
  }
  tu_section("indexed: known answers");
}

/* A device without double precision, simulated: a context whose
 * descriptor (internal.h) says it has no cl_khr_fp64, so the library
 * takes the paths such a device gets.  Float means of buffers are divided
 * on the device in float (clr_seg_mean without CLR_SEG_WIDE: the quotient
 * corrected by its residual), host arrays' on the host; what needs doubles
 * (an int mean, a double sum) is refused with CLR_ERR_NO_FP64. */
static void no_fp64_means(void) {
  clr_context *ctx = tu_context_chunked(0, 0);
  ctx->desc.has_fp64 = 0;
  for (int l = 0; l < L_COUNT; l++) {
    seg_case c =
        seeded(CLR_MEAN, CLR_FLOAT, 20011, (layout)l, tu_seed(l, 90, 91, 92));
    note(&c, " (no fp64)");
    if (l % 2)
      c.opt.layout = CLR_LAYOUT_STRIDED;
    if (run_host(ctx, &c) == CLR_OK)
      run_buffer(ctx, &c);
    free_case(&c);
  }
  /* An int mean is a double: host arrays divide on the host, buffers (on
   * the device) are refused. */
  seg_case c = seeded(CLR_MEAN, CLR_INT, 1000, L_RANDOM, 93);
  note(&c, " (no fp64)");
  run_host(ctx, &c);
  cl_context cl = clr_context_cl_context(ctx);
  cl_int e1, e2, e3;
  cl_mem db = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                             c.n * sizeof(int32_t), (void *)c.data, &e1);
  cl_mem ob = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                             (c.segments + 1) * sizeof(uint64_t),
                             (void *)c.offsets, &e2);
  cl_mem rb = clCreateBuffer(cl, CL_MEM_READ_WRITE, c.segments * 8, NULL, &e3);
  if (e1 != CL_SUCCESS || e2 != CL_SUCCESS || e3 != CL_SUCCESS)
    tu_die("clCreateBuffer failed");
  TU_EXPECT_STATUS(clr_reduce_segments_buffer(ctx, NULL, CLR_MEAN, CLR_INT, db,
                                              0, c.n, ob, 0, c.segments, rb, 0),
                   CLR_ERR_NO_FP64, "int mean per segment of buffers, no fp64");
  clReleaseMemObject(db);
  clReleaseMemObject(ob);
  clReleaseMemObject(rb);
  void *res = tu_xmalloc(8);
  double d[4] = {1, 2, 3, 4};
  uint64_t whole[2] = {0, 4};
  TU_EXPECT_STATUS(clr_reduce_segments_host(ctx, NULL, CLR_SUM, CLR_DOUBLE, d,
                                            4, whole, 1, res),
                   CLR_ERR_NO_FP64, "double sum per segment, no fp64");
  free(res);
  free_case(&c);
  clr_context_release(ctx);
  tu_section("indexed: means without fp64");
}

/* Argmin, argmax and minmax per segment (and means): float and int over
 * every layout
 * with ties, signed zeros and NaNs, in tiles and runs, with few units a
 * work-item (segments over many, the carry pyramid), streamed in 4 KiB
 * chunks (a record carried from one launch into the next) and through
 * buffers; the other types once each.  By-key and ranges take them in
 * their own sets. */
static void indexed(clr_context *ctx, clr_context *chunked) {
  indexed_known(ctx);
  static const clr_op ops[] = {CLR_ARGMIN, CLR_ARGMAX, CLR_MINMAX};
  static const clr_type types[] = {CLR_FLOAT, CLR_INT};
  static const size_t ns[] = {3, 257, 65537};
  size_t k = 0;
  for (size_t ti = 0; ti < 2; ti++)
    for (size_t oi = 0; oi < 3; oi++)
      for (size_t ni = 0; ni < 3; ni++)
        for (int l = 0; l < L_COUNT; l++, k++) {
          clr_type t = types[ti];
          size_t n = ns[ni];
          seg_case c =
              seeded(ops[oi], t, n, (layout)l, tu_seed(ti, oi, ni, 50 + l));
          if (k % 3)
            fill_ties(t, (void *)c.data, n, tu_seed(ti, oi, ni, 60 + l),
                      k % 3 == 2);
          c.opt.layout = k % 2 ? CLR_LAYOUT_STRIDED : CLR_LAYOUT_CONTIGUOUS;
          c.opt.coarse = k % 4 == 1 ? 3 : 0;
          int streamed = k % 5 == 0;
          note(&c, "%s%s%s", k % 3 ? " ties" : "",
               c.opt.layout == CLR_LAYOUT_STRIDED ? " tiles" : " runs",
               streamed ? " 4 KiB chunks" : "");
          if (run_host(streamed ? chunked : ctx, &c) == CLR_OK && k % 4 == 0)
            run_buffer(ctx, &c);
          free_case(&c);
        }
  static const clr_type others[] = {CLR_DOUBLE, CLR_UINT, CLR_LONG, CLR_ULONG,
                                    CLR_HALF};
  for (size_t ti = 0; ti < 5; ti++)
    for (size_t l = 0; l < 2; l++) {
      seg_case c = seeded(ops[(ti + l) % 3], others[ti], 4099,
                          l ? L_MIXED : L_RANDOM, tu_seed(ti, l, 70, 71));
      fill_ties(others[ti], (void *)c.data, c.n, tu_seed(ti, l, 72, 73), 1);
      note(&c, " ties");
      if (run_host(l ? chunked : ctx, &c) == CLR_OK && l == 0)
        run_buffer(ctx, &c);
      free_case(&c);
    }
  tu_section("indexed");
  /* Means: the sums divided on the host (host arrays) or by
   * clr_seg_mean on the device (buffers); NaN for an empty segment. */
  static const clr_type mean_types[] = {CLR_FLOAT, CLR_DOUBLE, CLR_INT,
                                        CLR_UINT, CLR_HALF};
  for (size_t ti = 0; ti < 5; ti++)
    for (int l = 0; l < L_COUNT; l += 2) {
      seg_case c = seeded(CLR_MEAN, mean_types[ti], 4099, (layout)l,
                          tu_seed(ti, l, 80, 81));
      if (l == 2)
        c.opt.layout = CLR_LAYOUT_STRIDED;
      if (run_host(l == 4 ? chunked : ctx, &c) == CLR_OK)
        run_buffer(ctx, &c);
      free_case(&c);
    }
  tu_section("indexed: means");
  no_fp64_means();
}

/* One case of vector_widths: op of type over 4099 elements in segments of
 * a shape in turn, in runs or tiles, through buffers every other time. */
static void width_case(clr_context *ctx, clr_op op, clr_type type, int tiles,
                       unsigned bytes, size_t *k) {
  static const layout shapes[] = {L_RANDOM, L_STRADDLE, L_MIXED};
  size_t turn = (*k)++;
  seg_case c = seeded(op, type, 4099, shapes[turn % 3],
                      tu_seed(op, type, bytes, 90 + (uint64_t)tiles));
  c.opt.layout = tiles ? CLR_LAYOUT_STRIDED : CLR_LAYOUT_CONTIGUOUS;
  note(&c, " %s vec_bytes=%u", tiles ? "tiles" : "runs", bytes);
  if (run_host(ctx, &c) == CLR_OK && turn % 2 == 0)
    run_buffer(ctx, &c);
  free_case(&c);
}

/* Every load width the tuning can give the segmented kernels
 * (reduce.vec_bytes 4 to 64: CLR_VEC elements a load, counted in the
 * wider of input and accumulator on CPUs, half in its own 2 bytes: 2 to
 * 16 halves), set through clr_set_tuning since segments take no
 * vector_width; min, max, argmin, argmax and minmax against the CPU,
 * segments starting at any element and the buffers' data at element 3.
 * PoCL 3.1 crashed on half with 16-byte loads (its vload_half8 took the
 * address as 16-byte aligned).  Half: every op eight wide (16 bytes), two
 * sixteen wide, one at the other widths, and tiles; the 4- and 8-byte
 * types one case a width, type, op and form in turn.  (A program each,
 * which PoCL compiles: a second or two apiece when its cache is cold.) */
static void vector_widths(clr_context *ctx) {
  static const unsigned bytes[] = {4, 8, 16, 32, 64};
  static const clr_op ops[] = {CLR_MIN, CLR_MAX, CLR_ARGMIN, CLR_ARGMAX,
                               CLR_MINMAX};
  static const clr_type four[] = {CLR_FLOAT, CLR_INT, CLR_UINT};
  static const clr_type eight[] = {CLR_DOUBLE, CLR_LONG, CLR_ULONG};
  static const struct {
    unsigned bytes;
    clr_op op;
    int tiles;
  } halves[] = {{4, CLR_ARGMAX, 1},  {8, CLR_ARGMIN, 0},  {16, CLR_MIN, 0},
                {16, CLR_MAX, 0},    {16, CLR_ARGMIN, 0}, {16, CLR_ARGMAX, 0},
                {16, CLR_MINMAX, 0}, {16, CLR_ARGMAX, 1}, {32, CLR_MAX, 0},
                {32, CLR_MINMAX, 0}, {32, CLR_ARGMIN, 1}, {64, CLR_MINMAX, 0}};
  clr_tuning saved = CLR_TUNING_INIT, t = CLR_TUNING_INIT;
  if (clr_get_tuning(ctx, &saved) != CLR_OK)
    tu_die("clr_get_tuning: %s", clr_context_error(ctx));
  size_t k = 0;
  for (size_t bi = 0; bi < 5; bi++) {
    t = saved;
    t.reduce_vec_bytes = bytes[bi];
    if (clr_set_tuning(ctx, &t) != CLR_OK)
      tu_die("clr_set_tuning: %s", clr_context_error(ctx));
    width_case(ctx, ops[bi], four[bi % 3], bi % 2, bytes[bi], &k);
    width_case(ctx, ops[(bi + 2) % 5], eight[bi % 3], bi % 2 == 0, bytes[bi],
               &k);
    for (size_t h = 0; h < sizeof halves / sizeof *halves; h++)
      if (halves[h].bytes == bytes[bi])
        width_case(ctx, halves[h].op, CLR_HALF, halves[h].tiles, bytes[bi], &k);
  }
  if (clr_set_tuning(ctx, &saved) != CLR_OK)
    tu_die("clr_set_tuning: %s", clr_context_error(ctx));
  tu_section("indexed: every load width");
}

/* Small cases for Oclgrind (tests/reliability: run under it, where every
 * work-item is interpreted): every layout, a few units per work-item so
 * segments span work-items and the pyramid has levels, work-groups of 3
 * and 4, 64-element chunks, buffers at offsets; reduce-by-key of
 * buffers. */
static void oclgrind_set(clr_context *ctx, clr_context *chunked) {
  const size_t *small = seg_small_sizes;
  static const seg_op_type cases[] = {
      {CLR_SUM, CLR_FLOAT},   {CLR_MAX, CLR_FLOAT}, {CLR_SUM, CLR_INT},
      {CLR_AND, CLR_LONG},    {CLR_MIN, CLR_HALF},  {CLR_PROD, CLR_UINT},
      {CLR_ARGMAX, CLR_FLOAT}};
  for (size_t si = 0; si < SEG_N_SMALL; si++)
    for (int l = 0; l < L_COUNT; l++)
      for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        seg_case c = seeded(cases[k].op, cases[k].type, small[si], (layout)l,
                            tu_seed(small[si], l, k, 5));
        c.opt.wg_size = 3 + (k + si) % 2;
        c.opt.coarse = 1 + 2 * ((k + (size_t)l) % 2);
        if ((k + si + (size_t)l / 2) % 2)
          c.opt.layout = CLR_LAYOUT_STRIDED;
        run_host((k + si + (size_t)l) % 2 ? chunked : ctx, &c);
        if ((k + (size_t)l) % 3 == 0)
          run_buffer(ctx, &c);
        free_case(&c);
      }
  keys_buffer_refusals(ctx); /* and three runs found on the device */
  /* rows: a work-group a row (cl/reduce_rows.cl), the last row shorter
   * (10 rows of 512: enough for a device of up to 2 compute units) */
  uint64_t row_off[11];
  for (size_t r = 0; r < 11; r++)
    row_off[r] = r * 512 < 4609 ? r * 512 : 4609;
  seg_case rc = seeded(CLR_SUM, CLR_FLOAT, 4609, L_ONES, 7);
  free((void *)rc.offsets);
  rc.offsets = row_off;
  rc.segments = 10;
  rc.opt.layout = CLR_LAYOUT_STRIDED;
  rc.opt.wg_size = 3;
  note(&rc, ", as rows of 512");
  run_host(ctx, &rc);
  run_buffer(ctx, &rc);
  free((void *)rc.data);
  tu_section("oclgrind");
}

/* One call in a process of its own (host arrays, or with buffer:
 * buffers), for Oclgrind's --uninitialized, whose shadow state survives a
 * released buffer (tests/reliability/oclgrind_kernels.c, part_one): a
 * float sum over mixed segments spanning work-items and chunks. */
static void oclgrind_one(clr_context *ctx, int buffer) {
  seg_case c = seeded(CLR_SUM, CLR_FLOAT, 257, L_MIXED, 11);
  note(&c, ", one %s call", buffer ? "buffer" : "host");
  c.opt.wg_size = 3;
  c.opt.coarse = 3;
  /* the buffer call in tiles (local memory), the host call in runs */
  c.opt.layout = buffer ? CLR_LAYOUT_STRIDED : CLR_LAYOUT_CONTIGUOUS;
  if (buffer)
    run_buffer(ctx, &c);
  else
    run_host(ctx, &c);
  free_case(&c);
  tu_section(buffer ? "one buffer call" : "one host call");
}

/* Refusals: each one a clear status, then the same context still
 * works. */
static void bad_offsets(clr_context *ctx) {
  float data[10];
  float res[4];
  for (int i = 0; i < 10; i++)
    data[i] = (float)i;
  static const struct {
    uint64_t off[5];
    size_t segments;
    const char *what, *detail;
  } bad[] = {
      {{1, 4, 8, 10}, 3, "first not 0", "offsets[0]"},
      {{0, 6, 4, 10}, 3, "decreasing", "offsets[2]"},
      {{0, 4, 8, 11}, 3, "past n", "offsets[3]"},
      {{0, 4, 8, 9}, 3, "short of n", "offsets[3]"},
      {{0, 4, 20, 10}, 3, "one past n, then back", "offsets[3]"},
  };
  cl_context cl = clr_context_cl_context(ctx);
  cl_command_queue q = clr_context_queue(ctx);
  cl_int err;
  cl_mem d = clCreateBuffer(cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                            sizeof data, data, &err);
  cl_mem o =
      clCreateBuffer(cl, CL_MEM_READ_WRITE, 5 * sizeof(uint64_t), NULL, &err);
  cl_mem r =
      clCreateBuffer(cl, CL_MEM_READ_WRITE, 4 * sizeof(float), NULL, &err);
  if (!d || !o || !r)
    tu_die("clCreateBuffer failed");
  for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
    clr_status st =
        clr_reduce_segments_host(ctx, NULL, CLR_SUM, CLR_FLOAT, data, 10,
                                 bad[b].off, bad[b].segments, res);
    TU_CHECK(st == CLR_ERR_INVALID_ARGUMENT &&
                 strstr(clr_context_error(ctx), bad[b].detail),
             "host offsets %s: %s (%s)", bad[b].what, clr_status_name(st),
             clr_context_error(ctx));
    if (clEnqueueWriteBuffer(q, o, CL_TRUE, 0, 4 * sizeof(uint64_t), bad[b].off,
                             0, NULL, NULL) != CL_SUCCESS)
      tu_die("clEnqueueWriteBuffer failed");
    st = clr_reduce_segments_buffer(ctx, NULL, CLR_SUM, CLR_FLOAT, d, 0, 10, o,
                                    0, bad[b].segments, r, 0);
    TU_CHECK(st == CLR_ERR_INVALID_ARGUMENT &&
                 strstr(clr_context_error(ctx), bad[b].detail),
             "buffer offsets %s: %s (%s)", bad[b].what, clr_status_name(st),
             clr_context_error(ctx));
  }
  /* The arguments themselves: what is missing or not supported. */
  uint64_t good[4] = {0, 4, 8, 10};
  clr_options exact, seq;
  clr_options_init(&exact);
  clr_options_init(&seq);
  exact.exact = 1;
  seq.kernel = CLR_REDUCE_SEQUENTIAL;
  const struct {
    clr_context *ctx;
    const clr_options *opt;
    clr_op op;
    const void *data;
    const uint64_t *off;
    size_t segments;
    void *res;
    clr_status want;
    const char *what;
  } refusals[] = {
      /* clang-format off */
      {ctx, NULL, CLR_SUM, data, good, 0, res, CLR_ERR_INVALID_ARGUMENT, "no segments"},
      {ctx, NULL, CLR_SUM, data, NULL, 3, res, CLR_ERR_INVALID_ARGUMENT, "offsets NULL"},
      {ctx, NULL, CLR_SUM, NULL, good, 3, res, CLR_ERR_INVALID_ARGUMENT, "data NULL"},
      {ctx, NULL, CLR_SUM, data, good, 3, NULL, CLR_ERR_INVALID_ARGUMENT, "results NULL"},
      {ctx, NULL, CLR_AND, data, good, 3, res, CLR_ERR_UNSUPPORTED, "and of floats"},
      {ctx, &exact, CLR_SUM, data, good, 3, res, CLR_ERR_UNSUPPORTED, "exact"},
      {ctx, &seq, CLR_SUM, data, good, 3, res, CLR_ERR_INVALID_ARGUMENT, "another kernel"},
      {NULL, NULL, CLR_SUM, data, good, 3, res, CLR_ERR_INVALID_ARGUMENT, "no context"},
      /* clang-format on */
  };
  for (size_t k = 0; k < sizeof refusals / sizeof *refusals; k++)
    TU_EXPECT_STATUS(clr_reduce_segments_host(
                         refusals[k].ctx, refusals[k].opt, refusals[k].op,
                         CLR_FLOAT, refusals[k].data, 10, refusals[k].off,
                         refusals[k].segments, refusals[k].res),
                     refusals[k].want, refusals[k].what);
  TU_EXPECT_STATUS(clr_reduce_segments_buffer(ctx, NULL, CLR_SUM, CLR_FLOAT, d,
                                              0, 10, o, 2, 3, r, 0),
                   CLR_ERR_INVALID_ARGUMENT, "offsets past their buffer");
  TU_EXPECT_STATUS(clr_reduce_segments_buffer(ctx, NULL, CLR_SUM, CLR_FLOAT, d,
                                              0, 10, o, 0, 3, r, 2),
                   CLR_ERR_INVALID_ARGUMENT, "results past their buffer");
  /* Still working. */
  if (TU_EXPECT_STATUS(clr_reduce_segments_host(ctx, NULL, CLR_SUM, CLR_FLOAT,
                                                data, 10, good, 3, res),
                       CLR_OK, "good offsets after the refusals"))
    TU_CHECK(res[0] == 6 && res[1] == 22 && res[2] == 17,
             "sums 6 22 17, got %g %g %g", res[0], res[1], res[2]);
  clReleaseMemObject(d);
  clReleaseMemObject(o);
  clReleaseMemObject(r);
  tu_section("bad offsets");
}

/* Values with known answers: NaN and signed zeros in min / max, ties, a
 * count by expression, built-in maps, accumulate_in. */
/* Rows (every segment but the last of one length, the last shorter or
 * not; values and records): the GPUs' form takes rows of 512..8192
 * elements, enough of them,
 * in one launch of a work-group a row (cl/reduce_rows.cl), the CPUs' form,
 * other lengths and a streamed call the general kernels; each against the CPU,
 * in both layouts, several work-group sizes, a map, and streamed in 4 KiB
 * chunks. */
/* The last call took the rows form: one launch, a work-group a row. */
static int took_rows(clr_context *ctx, size_t rows) {
  tu_timing tm = tu_last_timing(ctx);
  return tm.n_passes == 1 &&
         tm.passes[0].global_size == rows * tm.passes[0].local_size;
}

static void rows(clr_context *ctx, clr_context *chunked) {
  static const struct {
    size_t n, len;
  } shapes[] = {{1, 1},        {7, 1},        {1000, 1000},  {1001, 10},
                {4099, 65},    {5000, 4999},  {65537, 1000}, {20000, 512},
                {100000, 600}, {73733, 8192}, {81920, 8192}, {60000, 300},
                {600000, 1000}}; /* (600 rows: enough for 150 CUs) */
  static const size_t wgs[] = {0, 1, 3, 64, 256};
  static const seg_op_type ops[] = {
      {CLR_SUM, CLR_FLOAT},    {CLR_MAX, CLR_INT},   {CLR_MEAN, CLR_DOUBLE},
      {CLR_AND, CLR_UINT},     {CLR_MIN, CLR_HALF},  {CLR_SUM, CLR_LONG},
      {CLR_ARGMAX, CLR_FLOAT}, {CLR_MINMAX, CLR_INT}};
  size_t k = 0;
  for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++)
    for (size_t oi = 0; oi < sizeof ops / sizeof *ops; oi++, k++) {
      size_t n = shapes[si].n, len = shapes[si].len;
      size_t count = (n + len - 1) / len;
      uint64_t *off = tu_xmalloc((count + 1) * sizeof *off);
      for (size_t s = 0; s <= count; s++)
        off[s] = s * len < n ? s * len : n;
      void *x = tu_xmalloc(n * clr_type_size(ops[oi].type));
      tu_fill(ops[oi].op, ops[oi].type, TU_RANDOM, x, n, tu_seed(si, oi, 3, 4));
      if (ops[oi].op == CLR_ARGMAX || ops[oi].op == CLR_MINMAX)
        fill_ties(ops[oi].type, x, n, tu_seed(si, oi, 5, 6), 1);
      seg_case c = case_of(ops[oi].op, ops[oi].type, x, n, off, count,
                           "rows %s %s n=%zu of %zu", clr_op_name(ops[oi].op),
                           clr_type_name(ops[oi].type), n, len);
      c.opt.layout = k % 3 ? CLR_LAYOUT_STRIDED : CLR_LAYOUT_CONTIGUOUS;
      c.opt.wg_size = wgs[k % 5];
      if (k % 7 == 3 && ops[oi].op != CLR_AND)
        c.opt.map = CLR_MAP_ABS;
      int streamed = k % 4 == 1;
      note(&c, " %s wg=%zu%s%s",
           c.opt.layout == CLR_LAYOUT_STRIDED ? "strided" : "contiguous",
           c.opt.wg_size, c.opt.map ? " abs" : "",
           streamed ? " 4 KiB chunks" : "");
      /* The one-launch form where it applies (the CPUs' form on the
       * strided layout), from host arrays and buffers alike. */
      int one = c.opt.layout == CLR_LAYOUT_STRIDED && len >= 512 &&
                len <= 8192 && count >= 4 * (size_t)tu_device.compute_units;
      clr_status st = run_host(streamed ? chunked : ctx, &c);
      if (st == CLR_OK && one && !streamed)
        tu_check(took_rows(ctx, count), "%s: one launch, a work-group a row",
                 c.what);
      if (st == CLR_OK && k % 3 == 1) {
        run_buffer(ctx, &c);
        if (one && tu_type_available(c.type))
          tu_check(took_rows(ctx, count),
                   "%s (buffers): one launch, a work-group a row", c.what);
      }
      free(x);
      free(off);
    }
  /* Near rows: 600 segments whose first is a row's length (1000), with
   * one that breaks the pattern: a row one short and the next one long,
   * an empty row and the next twice as long, a last row longer than the
   * first.  Not rows (for buffers, clr_seg_check's no-rows flag says so):
   * the merge path, from host arrays and buffers, and every result right. */
  for (size_t v = 0; v < 3; v++) {
    size_t count = 600, len = 1000, n = count * len + (v == 2);
    uint64_t *off = tu_xmalloc((count + 1) * sizeof *off);
    for (size_t s = 0; s <= count; s++)
      off[s] = s * len;
    if (v == 0)
      off[301] -= 1;
    if (v == 1)
      off[301] = off[300];
    off[count] = n;
    float *x = tu_xmalloc(n * sizeof *x);
    tu_fill(CLR_SUM, CLR_FLOAT, TU_RANDOM, x, n, tu_seed(v, 7, 8, 9));
    seg_case c =
        case_of(CLR_SUM, CLR_FLOAT, x, n, off, count, "near rows (%s), n=%zu",
                v == 0   ? "a row short, the next long"
                : v == 1 ? "an empty row"
                         : "the last row long",
                n);
    c.opt.layout = CLR_LAYOUT_STRIDED;
    if (run_host(ctx, &c) == CLR_OK)
      tu_check(!took_rows(ctx, count), "%s: not taken as rows", c.what);
    run_buffer(ctx, &c);
    if (tu_type_available(c.type))
      tu_check(!took_rows(ctx, count), "%s (buffers): not taken as rows",
               c.what);
    free(x);
    free(off);
  }
  tu_section("rows");
}

static void edges(clr_context *ctx, clr_context *chunked) {
  size_t n = 20000, segments;
  float *x = tu_xmalloc(n * sizeof *x);
  uint64_t *off = make_offsets(L_RANDOM, n, 99, &segments);
  tu_rng r = {5};
  for (size_t i = 0; i < n; i++)
    x[i] = (float)(tu_unit(&r) * 4 - 2);
  for (size_t i = 0; i < n; i += 997)
    x[i] = NAN;
  for (size_t i = 5; i < n; i += 1013)
    x[i] = -0.0f;
  for (size_t i = 7; i < n; i += 1009)
    x[i] = 0.0f;
  clr_op ops[2] = {CLR_MIN, CLR_MAX};
  for (int k = 0; k < 2; k++) {
    seg_case c = case_of(ops[k], CLR_FLOAT, x, n, off, segments,
                         "%s with NaN and zeros", clr_op_name(ops[k]));
    run_host(ctx, &c);
    run_host(chunked, &c);
    run_buffer(ctx, &c);
  }
  /* Maps. */
  static const clr_map maps[] = {CLR_MAP_ABS, CLR_MAP_SQUARE};
  for (size_t i = 0; i < n; i++)
    if (x[i] != x[i])
      x[i] = 1.5f;
  for (int k = 0; k < 2; k++) {
    seg_case c = case_of(CLR_SUM, CLR_FLOAT, x, n, off, segments, "sum of %s",
                         k ? "squares" : "|x|");
    c.opt.map = maps[k];
    run_host(chunked, &c);
  }
  /* A count by expression, in long: each segment's count of x > 0. */
  clr_options o;
  clr_options_init(&o);
  o.map = CLR_MAP_EXPR;
  o.map_expr = "x > 0.0f";
  o.accumulate_in = CLR_LONG;
  int64_t *counts = tu_xmalloc(segments * sizeof *counts);
  clr_status st = clr_reduce_segments_host(chunked, &o, CLR_SUM, CLR_FLOAT, x,
                                           n, off, segments, counts);
  if (TU_EXPECT_STATUS(st, CLR_OK, "count by expression")) {
    size_t bad = 0;
    for (size_t s = 0; s < segments; s++) {
      int64_t want = 0;
      for (uint64_t i = off[s]; i < off[s + 1]; i++)
        want += x[i] > 0.0f;
      bad += counts[s] != want;
    }
    TU_CHECK(bad == 0, "count by expression: %zu of %zu segments wrong", bad,
             segments);
  }
  /* The index i of an expression counts from the first element: sums of i
   * per segment, exact in long. */
  o.map_expr = "i";
  st = clr_reduce_segments_host(chunked, &o, CLR_SUM, CLR_FLOAT, x, n, off,
                                segments, counts);
  if (TU_EXPECT_STATUS(st, CLR_OK, "sum of indices")) {
    size_t bad = 0;
    for (size_t s = 0; s < segments; s++) {
      int64_t want = 0;
      for (uint64_t i = off[s]; i < off[s + 1]; i++)
        want += (int64_t)i;
      bad += counts[s] != want;
    }
    TU_CHECK(bad == 0, "sum of indices: %zu of %zu segments wrong", bad,
             segments);
  }
  /* 2000 empty segments at one place, more than a 4 KiB launch holds
   * (511): launches with no element at all, between two that have. */
  {
    size_t m = 300, k = 0;
    uint64_t *many = tu_xmalloc(2100 * sizeof *many);
    many[k++] = 0;
    many[k++] = 100;
    for (int e = 0; e < 2000; e++)
      many[k++] = 100;
    many[k++] = 250;
    many[k++] = m;
    seg_case e = case_of(CLR_SUM, CLR_FLOAT, x, m, many, k - 1,
                         "2000 empty segments in one place");
    run_host(chunked, &e);
    run_buffer(ctx, &e);
    free(many);
  }
  /* Shapes at their limits: as many units a work-item as a size_t holds
   * (one work-item takes all: runs; the most local memory holds: tiles),
   * and a work-group larger than the device's. */
  for (int tiles = 0; tiles < 2; tiles++) {
    seg_case big = case_of(CLR_SUM, CLR_FLOAT, x, n, off, segments,
                           "coarse=SIZE_MAX in %s", tiles ? "tiles" : "runs");
    big.opt.coarse = SIZE_MAX;
    big.opt.layout = tiles ? CLR_LAYOUT_STRIDED : CLR_LAYOUT_CONTIGUOUS;
    run_host(ctx, &big);
    big.opt.coarse = 0;
    big.opt.wg_size = tu_device.max_work_group_size + 1;
    TU_EXPECT_STATUS(clr_reduce_segments_host(ctx, &big.opt, CLR_SUM, CLR_FLOAT,
                                              x, n, off, segments, counts),
                     CLR_ERR_INVALID_ARGUMENT,
                     tiles ? "a tile's work-group beyond the device's"
                           : "a work-group beyond the device's");
  }
  /* Float data summed in double. */
  seg_case c =
      case_of(CLR_SUM, CLR_FLOAT, x, n, off, segments, "float sum in double");
  c.opt.accumulate_in = CLR_DOUBLE;
  run_host(ctx, &c);
  /* The tuning's units a work-item (segments.units for 4-byte
   * accumulators, segments.units_wide for 8-byte ones) shape the tiles:
   * ceil((elements + segments) / (work-group x units)) of them, and the
   * results stay right at odd counts. */
  clr_tuning saved = CLR_TUNING_INIT, t = CLR_TUNING_INIT;
  if (clr_get_tuning(ctx, &saved) != CLR_OK)
    tu_die("clr_get_tuning failed");
  t = saved;
  t.seg_units = 5;
  t.seg_units_wide = 3;
  TU_EXPECT_STATUS(clr_set_tuning(ctx, &t), CLR_OK, "segments.units=5");
  for (int wide = 0; wide < 2; wide++) {
    seg_case u = case_of(CLR_SUM, CLR_FLOAT, x, n, off, segments,
                         "tuned %s units a work-item in tiles",
                         wide ? "3 (segments.units_wide)" : "5");
    u.opt.layout = CLR_LAYOUT_STRIDED;
    if (wide)
      u.opt.accumulate_in = CLR_DOUBLE;
    if (run_host(ctx, &u) == CLR_OK &&
        (!wide || tu_type_available(CLR_DOUBLE))) {
      tu_timing tm = tu_last_timing(ctx);
      size_t per = tm.passes[0].local_size * (wide ? 3 : 5);
      size_t tiles = (n + segments + per - 1) / per;
      tu_check(tm.n_passes == 2 &&
                   tm.passes[0].global_size == tiles * tm.passes[0].local_size,
               "%s: %zu tiles of %zu units (global %zu, local %zu)", u.what,
               tiles, per, tm.passes[0].global_size, tm.passes[0].local_size);
    }
  }
  TU_EXPECT_STATUS(clr_set_tuning(ctx, &saved), CLR_OK, "tuning restored");
  free(counts);
  free(off);
  free(x);
  tu_section("edges");
}

/* A context streaming host arrays in chunks of chunk_bytes (0: the
 * device's limit), copying them when copy is set; fatal when it cannot
 * be made.  tu_device describes its device. */
/* ------------------------------------------------------------ ranges */

/* Ranges of a kind over n elements (2 * *count values: offset, length). */
typedef enum range_kind {
  R_RANDOM,  /* any order, overlapping, lengths 0..300, some long      */
  R_SORTED,  /* sorted and disjoint, small gaps: reduced in place      */
  R_SPARSE,  /* sorted, gaps far longer than the ranges                */
  R_WINDOWS, /* sliding windows of 100 at stride 7: gathered           */
  R_EMPTY,   /* empty ranges only, at 0, in the middle and at n        */
  R_WHOLE,   /* (0, n) twice and an overlapping half                   */
  R_KINDS
} range_kind;

static const char *const range_names[R_KINDS] = {"random",  "sorted", "sparse",
                                                 "windows", "empty",  "whole"};

static uint64_t *make_ranges(range_kind kind, size_t n, uint64_t seed,
                             size_t *count) {
  tu_rng rng = {seed};
  size_t cap = n + 64, c = 0;
  uint64_t *g = tu_xmalloc(2 * cap * sizeof *g);
#define ADD(o, l)                                                              \
  do {                                                                         \
    if (c < cap) {                                                             \
      g[2 * c] = (o);                                                          \
      g[2 * c + 1] = (l);                                                      \
      c++;                                                                     \
    }                                                                          \
  } while (0)
  switch (kind) {
  case R_RANDOM:
    for (size_t k = 0; k < 40 + n / 50; k++) {
      uint64_t len =
          tu_below(&rng, 8) == 0 ? tu_below(&rng, n + 1) : tu_below(&rng, 301);
      if (len > n)
        len = n;
      ADD(tu_below(&rng, n - len + 1), len);
    }
    break;
  case R_SORTED:
    for (uint64_t at = 0; at < n;) {
      uint64_t gap = tu_below(&rng, 4), len = 1 + tu_below(&rng, 200);
      if (at + gap + len > n)
        break;
      ADD(at + gap, len);
      at += gap + len;
    }
    break;
  case R_SPARSE:
    for (uint64_t at = 0; at + 5 <= n; at += 1 + n / 7)
      ADD(at, 1 + tu_below(&rng, 5));
    break;
  case R_WINDOWS:
    for (uint64_t at = 0; at + 100 <= n; at += 7)
      ADD(at, 100);
    break;
  case R_EMPTY:
    ADD(0, 0);
    ADD(n / 2, 0);
    ADD(n, 0);
    ADD(n, 0);
    break;
  default:
    ADD(0, n);
    ADD(n / 4, n / 2);
    ADD(0, n);
    break;
  }
#undef ADD
  if (c == 0) {
    g[0] = 0;
    g[1] = n;
    c = 1;
  }
  *count = c;
  return g;
}

/* The ranges' elements one after another, and the offsets of them as
 * adjacent segments: the CPU's own gather, for the reference. */
static void gather_cpu(const void *data, size_t esize, const uint64_t *g,
                       size_t count, void **out, uint64_t **offsets) {
  size_t total = 0;
  for (size_t r = 0; r < count; r++)
    total += (size_t)g[2 * r + 1];
  unsigned char *o = tu_xmalloc(total * esize + 1);
  uint64_t *off = tu_xmalloc((count + 1) * sizeof *off);
  off[0] = 0;
  for (size_t r = 0; r < count; r++) {
    memcpy(o + off[r] * esize, (const unsigned char *)data + g[2 * r] * esize,
           (size_t)g[2 * r + 1] * esize);
    off[r + 1] = off[r] + g[2 * r + 1];
  }
  *out = o;
  *offsets = off;
}

/* One case of ranges g (count of them) over n elements of data: host
 * arrays, then (buffers) the same through cl_mem (data at element 3,
 * ranges at element 2, results from element 1, the rest poison), each
 * result against a CPU loop over its range; kind names the ranges. */
static void run_ranges_of(clr_context *ctx, clr_op op, clr_type type,
                          const void *data, size_t n, const uint64_t *g,
                          size_t count, const char *kind, int buffers) {
  void *flat;
  uint64_t *offsets;
  size_t esize = clr_type_size(type);
  gather_cpu(data, esize, g, count, &flat, &offsets);
  seg_case c = case_of(op, type, flat, (size_t)offsets[count], offsets, count,
                       "ranges %s %s n=%zu %s (%zu ranges)", clr_op_name(op),
                       clr_type_name(type), n, kind, count);
  size_t rsize = clr_result_bytes(&c.opt, op, type);
  void *res = tu_xmalloc(count * rsize);
  memset(res, 0xa5, count * rsize);
  clr_status st =
      clr_reduce_ranges_host(ctx, &c.opt, op, type, data, n, g, count, res);
  if (!tu_type_available(type))
    tu_check(st == CLR_ERR_NO_FP64, "%s: no fp64, got %s", c.what,
             clr_status_name(st));
  else if (tu_check(st == CLR_OK, "%s: %s: %s", c.what, clr_status_name(st),
                    clr_context_error(ctx)))
    check_results(&c, res, tu_last_timing(ctx).error_depth, CLR_MAP_NONE);
  if (buffers && tu_type_available(type)) {
    cl_context cl = clr_context_cl_context(ctx);
    cl_command_queue q = clr_context_queue(ctx);
    unsigned char *d_host = tu_xmalloc((n + 3) * esize);
    memset(d_host, 0x5a, 3 * esize);
    memcpy(d_host + 3 * esize, data, n * esize);
    uint64_t *g_host = tu_xmalloc((2 * count + 2) * sizeof *g_host);
    g_host[0] = g_host[1] = UINT64_MAX;
    memcpy(g_host + 2, g, 2 * count * sizeof *g);
    unsigned char *poison = tu_xmalloc((count + 2) * rsize);
    memset(poison, 0xa5, (count + 2) * rsize);
    cl_int e1, e2, e3;
    cl_mem d = clCreateBuffer(cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                              (n + 3) * esize, d_host, &e1);
    cl_mem gb = clCreateBuffer(cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                               (2 * count + 2) * sizeof *g_host, g_host, &e2);
    cl_mem rb = clCreateBuffer(cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                               (count + 2) * rsize, poison, &e3);
    if (e1 != CL_SUCCESS || e2 != CL_SUCCESS || e3 != CL_SUCCESS)
      tu_die("clCreateBuffer failed");
    st = clr_reduce_ranges_buffer(ctx, &c.opt, op, type, d, 3, n, gb, 2, count,
                                  rb, 1);
    if (tu_check(st == CLR_OK, "%s (buffers): %s: %s", c.what,
                 clr_status_name(st), clr_context_error(ctx))) {
      unsigned char *got = tu_xmalloc((count + 2) * rsize);
      if (clEnqueueReadBuffer(q, rb, CL_TRUE, 0, (count + 2) * rsize, got, 0,
                              NULL, NULL) != CL_SUCCESS)
        tu_die("clEnqueueReadBuffer failed");
      tu_check(memcmp(got, poison, rsize) == 0 &&
                   memcmp(got + (count + 1) * rsize, poison, rsize) == 0,
               "%s (buffers): wrote outside the results", c.what);
      note(&c, " (buffers)");
      check_results(&c, got + rsize, tu_last_timing(ctx).error_depth,
                    CLR_MAP_NONE);
      free(got);
    }
    clReleaseMemObject(d);
    clReleaseMemObject(gb);
    clReleaseMemObject(rb);
    free(d_host);
    free(g_host);
    free(poison);
  }
  free(res);
  free(flat);
  free(offsets);
}

/* Sums (in double) of (i % 7) * x and minima of (float)i over ranges g:
 * a map expression's i is the element's index in the array (plus
 * index_base), however the ranges are batched: in place, gathered or
 * split (host arrays and cl_mems), against the CPU. */
static void ranges_index_of(clr_context *ctx, const float *x, size_t n,
                            const uint64_t *g, size_t count, uint64_t base,
                            const char *kind) {
  double *sums = tu_xmalloc(count * sizeof *sums);
  float *mins = tu_xmalloc(count * sizeof *mins);
  clr_options o;
  clr_options_init(&o);
  o.map = CLR_MAP_EXPR;
  o.index_base = base;
  int fp64 = tu_type_available(CLR_DOUBLE);
  cl_int e1, e2, e3;
  cl_context cl = clr_context_cl_context(ctx);
  cl_mem d = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                            n * sizeof *x, (void *)(uintptr_t)x, &e1);
  cl_mem gb = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                             2 * count * sizeof *g, (void *)(uintptr_t)g, &e2);
  cl_mem rb =
      clCreateBuffer(cl, CL_MEM_READ_WRITE, count * sizeof *sums, NULL, &e3);
  if (e1 != CL_SUCCESS || e2 != CL_SUCCESS || e3 != CL_SUCCESS)
    tu_die("clCreateBuffer failed");
  for (int pass = 0; pass < 4; pass++) { /* sums, mins; host, buffers */
    int sum = pass % 2 == 0, buffers = pass >= 2;
    if (sum && !fp64)
      continue;
    o.accumulate_in = sum ? CLR_DOUBLE : CLR_TYPE_DEFAULT;
    o.map_expr = sum ? "(double)(i % 7) * x" : "(float)i";
    void *res = sum ? (void *)sums : (void *)mins;
    size_t rsize = sum ? sizeof *sums : sizeof *mins;
    clr_op op = sum ? CLR_SUM : CLR_MIN;
    clr_status st = buffers
                        ? clr_reduce_ranges_buffer(ctx, &o, op, CLR_FLOAT, d, 0,
                                                   n, gb, 0, count, rb, 0)
                        : clr_reduce_ranges_host(ctx, &o, op, CLR_FLOAT, x, n,
                                                 g, count, res);
    if (st == CLR_OK && buffers &&
        clEnqueueReadBuffer(clr_context_queue(ctx), rb, CL_TRUE, 0,
                            count * rsize, res, 0, NULL, NULL) != CL_SUCCESS)
      tu_die("clEnqueueReadBuffer failed");
    if (!tu_check(st == CLR_OK, "ranges %s, i in the map%s: %s: %s", kind,
                  buffers ? " (buffers)" : "", clr_status_name(st),
                  clr_context_error(ctx)))
      continue;
    size_t wrong = 0, first = 0;
    for (size_t r = 0; r < count; r++) {
      uint64_t a = g[2 * r], len = g[2 * r + 1];
      double want = 0;
      float want_min = INFINITY;
      for (uint64_t k = a; k < a + len; k++) {
        want += (double)((base + k) % 7) * x[k];
        want_min = fminf(want_min, (float)(base + k));
      }
      int ok = sum ? sums[r] == want : mins[r] == want_min;
      if (!ok && wrong++ == 0)
        first = r;
    }
    tu_check(wrong == 0,
             "ranges %s, i in the map (%s%s, index_base %llu): %zu of %zu "
             "wrong, the first range %zu = (%llu, %llu)",
             kind, sum ? "sum" : "min", buffers ? ", buffers" : "",
             (unsigned long long)base, wrong, count, first,
             (unsigned long long)g[2 * first],
             (unsigned long long)g[2 * first + 1]);
  }
  clReleaseMemObject(d);
  clReleaseMemObject(gb);
  clReleaseMemObject(rb);
  free(sums);
  free(mins);
}

/* Every kind of ranges with i in the map, and the case that once gave
 * the indices of a gathered copy: (90, 10), (0, 3), (50, 2) of 100 ones,
 * map (float)i, summed: 945, 3, 101. */
static void ranges_index(clr_context *ctx) {
  size_t n = 100003;
  float *x = tu_xmalloc(n * sizeof *x);
  tu_rng rng = {0x1dec5};
  for (size_t k = 0; k < n; k++)
    x[k] = (float)tu_below(&rng, 9);
  for (int kind = 0; kind < R_KINDS; kind++) {
    size_t count;
    uint64_t *g =
        make_ranges((range_kind)kind, n, tu_seed(kind, 1, 2, 3), &count);
    ranges_index_of(ctx, x, n, g, count, kind % 2 ? 12345 : 0,
                    range_names[kind]);
    free(g);
  }
  for (size_t k = 0; k < 100; k++)
    x[k] = 1.0f;
  uint64_t g[6] = {90, 10, 0, 3, 50, 2};
  float r[3];
  clr_options o;
  clr_options_init(&o);
  o.map = CLR_MAP_EXPR;
  o.map_expr = "(float)i";
  clr_status st =
      clr_reduce_ranges_host(ctx, &o, CLR_SUM, CLR_FLOAT, x, 100, g, 3, r);
  TU_CHECK(st == CLR_OK && r[0] == 945.0f && r[1] == 3.0f && r[2] == 101.0f,
           "ranges (90,10) (0,3) (50,2), map (float)i: %s, %g %g %g (945 3 "
           "101)",
           clr_status_name(st), r[0], r[1], r[2]);
  free(x);
  tu_section("ranges: i in the map");
}

/* One case of ranges of a kind over seeded data suited to op. */
static void run_ranges(clr_context *ctx, clr_op op, clr_type type, size_t n,
                       range_kind kind, uint64_t seed, int buffers) {
  size_t count;
  void *data = tu_xmalloc(n * clr_type_size(type));
  tu_fill(op, type, TU_RANDOM, data, n, seed);
  uint64_t *g = make_ranges(kind, n, seed ^ 0x7a11, &count);
  run_ranges_of(ctx, op, type, data, n, g, count, range_names[kind], buffers);
  free(g);
  free(data);
}

/* Every kind of ranges over a few sizes and ops, through one launch and
 * through streamed chunks; and the refusals. */
static void ranges(clr_context *ctx, clr_context *chunked) {
  static const struct {
    clr_op op;
    clr_type type;
  } cases[] = {{CLR_SUM, CLR_FLOAT},    {CLR_MAX, CLR_INT},
               {CLR_MIN, CLR_HALF},     {CLR_PROD, CLR_UINT},
               {CLR_SUM, CLR_LONG},     {CLR_AND, CLR_ULONG},
               {CLR_OR, CLR_INT},       {CLR_SUM, CLR_DOUBLE},
               {CLR_ARGMIN, CLR_FLOAT}, {CLR_MINMAX, CLR_INT}};
  static const size_t ns[] = {1, 7, 1000, 100003};
  size_t k = 0;
  for (int kind = 0; kind < R_KINDS; kind++) {
    for (size_t ni = 0; ni < 4; ni++)
      for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++, k++)
        if ((ci + ni + (size_t)kind) % 2 == 0)
          run_ranges(k % 3 ? ctx : chunked, cases[ci].op, cases[ci].type,
                     ns[ni], (range_kind)kind, tu_seed(kind, ni, ci, 9),
                     k % 4 == 0);
    char name[64];
    snprintf(name, sizeof name, "ranges %s", range_names[kind]);
    tu_section(name);
  }
  ranges_index(ctx);
  float x[10] = {0}, r[3];
  uint64_t bad[][4] = {{0, 5, 6, 5}, {11, 0, 0, 1}, {3, UINT64_MAX, 0, 1}};
  for (size_t b = 0; b < 3; b++) {
    clr_status st = clr_reduce_ranges_host(ctx, NULL, CLR_SUM, CLR_FLOAT, x, 10,
                                           bad[b], 2, r);
    TU_CHECK(st == CLR_ERR_INVALID_ARGUMENT &&
                 strstr(clr_context_error(ctx), "range"),
             "a range past n (%zu): %s (%s)", b, clr_status_name(st),
             clr_context_error(ctx));
  }
  TU_CHECK(clr_reduce_ranges_host(ctx, NULL, CLR_SUM, CLR_FLOAT, x, 10, NULL, 1,
                                  r) == CLR_ERR_INVALID_ARGUMENT,
           "NULL ranges refused");
  TU_CHECK(clr_reduce_ranges_host(ctx, NULL, CLR_SUM, CLR_FLOAT, x, 10, bad[0],
                                  0, r) == CLR_ERR_INVALID_ARGUMENT,
           "0 ranges refused");
  uint64_t one[2] = {2, 3};
  clr_status st =
      clr_reduce_ranges_host(ctx, NULL, CLR_SUM, CLR_FLOAT, x, 10, one, 1, r);
  TU_CHECK(st == CLR_OK && r[0] == 0.0f, "after the refusals: %s",
           clr_status_name(st));
  tu_section("ranges: refusals");
}

/* ------------------------------------------------------------ nanmean */

/* NaNs by segment, in turn: none, at the segment's first element, at its
 * last, at every element (no number) and at about one in three; with all
 * set, at every element of every segment. */
static void place_nans(clr_type t, void *data, const uint64_t *off,
                       size_t segments, int all, uint64_t seed) {
  tu_rng r = {seed};
  for (size_t s = 0; s < segments; s++)
    for (uint64_t i = off[s]; i < off[s + 1]; i++)
      if (all || (s % 5 == 1 && i == off[s]) ||
          (s % 5 == 2 && i == off[s + 1] - 1) || s % 5 == 3 ||
          (s % 5 == 4 && tu_below(&r, 3) == 0))
        tu_store_f(t, data, (size_t)i, NAN);
}

/* nanmean of a case's data with its segments as ranges (in order: in
 * place; reversed: batches and gathered copies), each kind of ranges,
 * and its non-empty segments as runs of keys (host arrays and buffers). */
static void nan_mean_ranges_keys(clr_context *ctx, const seg_case *c,
                                 uint64_t seed) {
  size_t segs = c->segments, n = c->n;
  uint64_t *g = tu_xmalloc(2 * segs * sizeof *g);
  for (size_t s = 0; s < segs; s++) {
    g[2 * s] = c->offsets[s];
    g[2 * s + 1] = c->offsets[s + 1] - c->offsets[s];
  }
  run_ranges_of(ctx, c->op, c->type, c->data, n, g, segs, "the segments", 1);
  for (size_t s = 0; s < segs; s++) {
    g[2 * s] = c->offsets[segs - 1 - s];
    g[2 * s + 1] = c->offsets[segs - s] - c->offsets[segs - 1 - s];
  }
  run_ranges_of(ctx, c->op, c->type, c->data, n, g, segs,
                "the segments reversed", 1);
  free(g);
  for (int kind = 0; kind < R_KINDS; kind++) {
    size_t count;
    g = make_ranges((range_kind)kind, n, seed + (uint64_t)kind, &count);
    run_ranges_of(ctx, c->op, c->type, c->data, n, g, count, range_names[kind],
                  1);
    free(g);
  }
  /* by key: a run a non-empty segment */
  int32_t *k = tu_xmalloc(n * sizeof *k), *uk = tu_xmalloc(n * sizeof *uk);
  uint64_t *off = tu_xmalloc((segs + 1) * sizeof *off);
  size_t runs = 0, got_runs = 0;
  for (size_t s = 0; s < segs; s++) {
    if (c->offsets[s + 1] == c->offsets[s])
      continue;
    off[runs++] = c->offsets[s];
    for (uint64_t i = c->offsets[s]; i < c->offsets[s + 1]; i++)
      k[i] = (int32_t)(s * 7 % 1000);
  }
  off[runs] = n;
  size_t rs = clr_result_bytes(&c->opt, c->op, c->type);
  void *res = tu_xmalloc(runs * rs);
  seg_case kc = case_of(c->op, c->type, c->data, n, off, runs,
                        "%s by key (%zu runs)", c->what, runs);
  clr_status st = clr_reduce_by_key_host(
      ctx, &kc.opt, kc.op, CLR_INT, k, kc.type, kc.data, n, uk, res, &got_runs);
  if (tu_check(st == CLR_OK && got_runs == runs, "%s: %s: %s, %zu runs",
               kc.what, clr_status_name(st), clr_context_error(ctx), got_runs))
    check_results(&kc, res, tu_last_timing(ctx).error_depth, CLR_MAP_NONE);
  keys_buffer(ctx, &kc, CLR_INT, (const unsigned char *)k, &got_runs, off,
              runs);
  free(res);
  free(off);
  free(uk);
  free(k);
}

/* nanmean per segment: each segment's numbers summed and divided by their
 * count (a second segmented reduction, counting them), NaN where there is
 * none (NaNs only, or empty).  Float, double and half data in every
 * layout, NaNs placed by segment (place_nans), and all NaN; tiles and
 * runs, few units a work-item (the carry pyramid), streamed in chunks;
 * host arrays and buffers (the counts scanned into divisors on the
 * device); a map; ranges and keys over the same data
 * (nan_mean_ranges_keys); an int nanmean is the mean. */
static void nan_means(clr_context *ctx, clr_context *chunked) {
  static const clr_type types[] = {CLR_FLOAT, CLR_DOUBLE, CLR_HALF};
  size_t k = 0;
  for (size_t ti = 0; ti < 3; ti++)
    for (int l = 0; l < L_COUNT; l++, k++) {
      clr_type t = types[ti];
      seg_case c = seeded(CLR_NANMEAN, t, l % 2 ? 4099 : 20011, (layout)l,
                          tu_seed(ti, l, 100, 101));
      place_nans(t, (void *)c.data, c.offsets, c.segments, 0,
                 tu_seed(ti, l, 102, 103));
      c.opt.layout = k % 2 ? CLR_LAYOUT_STRIDED : CLR_LAYOUT_CONTIGUOUS;
      c.opt.coarse = k % 3 == 1 ? 3 : 0;
      int streamed = k % 4 == 3;
      note(&c, "%s%s%s",
           c.opt.layout == CLR_LAYOUT_STRIDED ? " tiles" : " runs",
           c.opt.coarse ? " 3 units" : "", streamed ? " 4 KiB chunks" : "");
      if (run_host(streamed ? chunked : ctx, &c) == CLR_OK)
        run_buffer(ctx, &c);
      free_case(&c);
    }
  /* rows in one launch (tiles, rows of 512..8192, enough of them: four
   * a compute unit, as rows() says) */
  size_t rows_wanted = 4 * (size_t)tu_device.compute_units + 1;
  if (rows_wanted < 12)
    rows_wanted = 12;
  size_t nr = 0, n = 600 * (rows_wanted - 1) + 250;
  uint64_t *row_off = tu_xmalloc((rows_wanted + 1) * sizeof *row_off);
  for (uint64_t at = 0; at < n; at += 600)
    row_off[nr++] = at;
  row_off[nr] = n;
  void *data = tu_xmalloc(n * sizeof(float));
  tu_fill(CLR_NANMEAN, CLR_FLOAT, TU_RANDOM, data, n, 114);
  place_nans(CLR_FLOAT, data, row_off, nr, 0, 115);
  seg_case rc = case_of(CLR_NANMEAN, CLR_FLOAT, data, n, row_off, nr,
                        "nanmean float n=%zu, %zu rows of 600", n, nr);
  rc.opt.layout = CLR_LAYOUT_STRIDED;
  if (run_host(ctx, &rc) == CLR_OK) {
    TU_CHECK(took_rows(ctx, nr), "%s: not in one launch of rows", rc.what);
    run_buffer(ctx, &rc);
    TU_CHECK(took_rows(ctx, nr), "%s (buffers): not in one launch of rows",
             rc.what);
  }
  free_case(&rc);
  tu_section("nanmean: segments, rows");
  for (size_t ti = 0; ti < 3; ti++) {
    seg_case c = seeded(CLR_NANMEAN, types[ti], 4099, L_RANDOM,
                        tu_seed(ti, 104, 105, 106));
    place_nans(types[ti], (void *)c.data, c.offsets, c.segments, ti == 2,
               tu_seed(ti, 107, 108, 109));
    if (ti == 2)
      note(&c, " all NaN");
    if (run_host(ctx, &c) == CLR_OK)
      run_buffer(ctx, &c);
    nan_mean_ranges_keys(ctx, &c, tu_seed(ti, 110, 111, 112));
    if (ti == 0) { /* the squares' numbers */
      c.opt.map = CLR_MAP_SQUARE;
      note(&c, " squared");
      if (run_host(ctx, &c) == CLR_OK)
        run_buffer(ctx, &c);
    }
    free_case(&c);
  }
  seg_case c = seeded(CLR_NANMEAN, CLR_INT, 4099, L_RANDOM, 113);
  if (run_host(ctx, &c) == CLR_OK)
    run_buffer(ctx, &c);
  free_case(&c);
  tu_section("nanmean: ranges, keys, all NaN, a map, int");
}

int main(int argc, char **argv) {
  const char *set = "";
  int any_device = 0;
  tu_option options[] = {{"--set", &set, NULL},
                         {"--any-device", NULL, &any_device}};
  tu_parse_args(argc, argv, options, TU_N_OPTIONS(options));
  int all = !set[0], oclgrind = strncmp(set, "oclgrind", 8) == 0;
  /* One call per process under --uninitialized: only the context it
   * uses exists (oclgrind_one). */
  if (strncmp(set, "oclgrind-one-", 13) == 0) {
    int buffer = strcmp(set + 13, "buffer") == 0;
    clr_context *one = tu_context_chunked(buffer ? 0 : 256, 0);
    if (!any_device && !strstr(tu_device.platform_name, "Oclgrind"))
      tu_die("--set=%s runs under Oclgrind, not on '%s'", set,
             tu_device.platform_name);
    oclgrind_one(one, buffer);
    clr_context_release(one);
    return tu_finish("test_segments");
  }
  clr_context *ctx = tu_context_chunked(0, 0);
  clr_context *chunked = tu_context_chunked(oclgrind ? 256 : 4096, 0);
  clr_context *copied = tu_context_chunked(0, 1);
  if (oclgrind && !any_device && !strstr(tu_device.platform_name, "Oclgrind"))
    tu_die("--set=oclgrind runs under Oclgrind, not on '%s'",
           tu_device.platform_name);
  if (all || strcmp(set, "matrix") == 0)
    matrix(ctx);
  if (all || strcmp(set, "layouts") == 0)
    layouts(ctx, chunked, copied);
  if (all || strcmp(set, "edges") == 0) {
    bad_offsets(ctx);
    edges(ctx, chunked);
    rows(ctx, chunked);
  }
  if (all || strcmp(set, "keys") == 0)
    keys(ctx, chunked);
  if (all || strcmp(set, "ranges") == 0)
    ranges(ctx, chunked);
  if (all || strcmp(set, "indexed") == 0) {
    indexed(ctx, chunked);
    vector_widths(ctx);
    nan_means(ctx, chunked);
  }
  if (strcmp(set, "stream") == 0)
    stream(ctx);
  if (strcmp(set, "oclgrind") == 0) {
    oclgrind_set(ctx, chunked);
    bad_offsets(ctx);
  }
  clr_context_release(copied);
  clr_context_release(chunked);
  clr_context_release(ctx);
  return tu_finish("test_segments");
}
