/* Every kernel, every type and operation, under Oclgrind.
 *
 * Run through run_oclgrind.py, which starts this program under
 *   oclgrind --data-races --uninitialized --check-api --log FILE
 * (Oclgrind then is the only OpenCL platform) and fails the test when
 * Oclgrind reports anything: a data race, a barrier reached by only part
 * of a work-group, an out-of-bounds or uninitialised access, or an API
 * error.  This program itself checks every result against an exact CPU
 * reference, so the test asserts correctness too.
 *
 * Sizes are small (Oclgrind interprets every work-item) and work-groups
 * tiny (4 to 8, including sizes that are not powers of two), so that small
 * inputs still need partial work-groups, several reduction passes and
 * several scan levels.
 *
 *   oclgrind_kernels --part=PART --kernel-dir=DIR [--any-device]
 * PART: reduce-interleaved, reduce-sequential, reduce-first-add,
 *       reduce-coarse-strided, reduce-coarse-contiguous, reduce-buffer,
 *       reduce-exact, reduce-exact-matrix,
 *       scan-kogge-stone, scan-kogge-stone-db, scan-brent-kung,
 *       scan-decoupled, scan-buffer; or one-reduce-KERNEL / one-scan-KERNEL
 *       (a single call, for --uninitialized: see part_one)
 *
 * The decoupled scan (single pass, decoupled look-back) spins on flags its
 * predecessor tiles publish.  Oclgrind runs work-groups one after another;
 * the tile a group scans is the next value of an atomic ticket taken when
 * it starts, so every tile it waits for has already finished and the spin
 * never waits.  Its coarse option is the elements per work-item.
 */
#include "exact_sum.h"
#include "reference.h"
#include "test_util.h"

#include <CL/cl.h>

static clr_context *ctx;
static clr_context *ctx_copy; /* copy_host_data = 1 */
static unsigned long runs;

static const clr_type all_types[] = {CLR_FLOAT, CLR_DOUBLE, CLR_INT,
                                     CLR_UINT,  CLR_LONG,   CLR_ULONG};
#define N_TYPES (sizeof all_types / sizeof all_types[0])

/* OCLGRIND_TRACE=1: name every call on stderr before it runs, so that
 * Oclgrind's messages (on stderr too without --log) can be attributed. */
static TU_PRINTF(1, 2) void trace(const char *fmt, ...) {
  static int on = -1;
  if (on < 0)
    on = getenv("OCLGRIND_TRACE") != NULL;
  if (!on)
    return;
  va_list ap;
  va_start(ap, fmt);
  fputs("== ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

static clr_context *make_context(const char *kernel_dir, int copy,
                                 int any_device) {
  /* An empty cache directory: always build, so the checker sees every
   * program. */
  clr_context_config cfg = {.struct_size = sizeof(clr_context_config),
                            .kernel_dir = kernel_dir,
                            .cache_dir = "",
                            .copy_host_data = copy};
  clr_context *c = tu_context_from(&cfg);
  if (!any_device && !strstr(tu_device.platform_name, "Oclgrind"))
    tu_die("the device is '%s' on '%s', not Oclgrind: run this program "
           "under oclgrind (tests/reliability/run_oclgrind.py)",
           tu_device.device_name, tu_device.platform_name);
  return c;
}

static const char *shape(const clr_options *o, char *buf, size_t size) {
  snprintf(buf, size, "%s wg=%zu coarse=%zu vec=%u layout=%d%s",
           clr_kernel_name(o->kernel), o->wg_size, o->coarse, o->vector_width,
           (int)o->layout, o->exclusive ? " exclusive" : "");
  return buf;
}

/* Reduce n elements (from element `skip` of a fresh array, to exercise
 * unaligned host pointers) and compare exactly. */
static void check_reduce(clr_context *c, const clr_options *o, clr_op op,
                         clr_type t, size_t n, size_t skip) {
  char sh[160], a[64], b[64];
  size_t es = clr_type_size(t);
  unsigned char *buf = tu_xmalloc((n + skip) * es);
  tu_fill_exact(t, op, buf, n + skip, n * 31 + (size_t)op * 7 + (size_t)t);
  const void *data = buf + skip * es;
  clr_reference ref;
  clr_ref_reduce(op, t, o->narrow_accumulator, data, n, &ref);
  clr_value got;
  clr_timing tm = CLR_TIMING_INIT;
  memset(&got, 0, sizeof got);
  trace("reduce %s %s of %s n=%zu skip=%zu", shape(o, sh, sizeof sh),
        clr_op_name(op), clr_type_name(t), n, skip);
  clr_status s = clr_reduce_host(c, o, op, t, data, n, &got);
  runs++;
  if (tu_check(s == CLR_OK, "reduce %s %s of %s n=%zu skip=%zu: %s: %s",
               shape(o, sh, sizeof sh), clr_op_name(op), clr_type_name(t), n,
               skip, clr_status_name(s), clr_context_error(c))) {
    clr_check chk;
    clr_last_timing(c, &tm);
    clr_ref_check(&ref, &got, tm.error_depth, &chk);
    tu_check(chk.ok && got.type == ref.value.type,
             "reduce %s %s of %s n=%zu skip=%zu: got %s, want %s",
             shape(o, sh, sizeof sh), clr_op_name(op), clr_type_name(t), n,
             skip, tu_fmtv(got, a, sizeof a), tu_fmtv(ref.value, b, sizeof b));
  }
  free(buf);
}

/* The same through clr_reduce_buffer at an element offset. */
static void check_reduce_buffer(clr_context *c, const clr_options *o, clr_op op,
                                clr_type t, size_t n, size_t offset) {
  char sh[160], a[64], b[64];
  size_t es = clr_type_size(t), total = n + offset + 3;
  unsigned char *host = tu_xmalloc(total * es);
  tu_fill_exact(t, op, host, total, n * 17 + offset);
  cl_int err;
  cl_mem m = clCreateBuffer(clr_context_cl_context(c),
                            CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, total * es,
                            host, &err);
  if (err != CL_SUCCESS)
    tu_die("clCreateBuffer: %d", (int)err);
  clr_reference ref;
  clr_ref_reduce(op, t, o->narrow_accumulator, host + offset * es, n, &ref);
  clr_value got;
  memset(&got, 0, sizeof got);
  trace("reduce_buffer %s %s of %s n=%zu offset=%zu", shape(o, sh, sizeof sh),
        clr_op_name(op), clr_type_name(t), n, offset);
  clr_status s = clr_reduce_buffer(c, o, op, t, m, offset, n, &got);
  runs++;
  if (tu_check(s == CLR_OK,
               "reduce_buffer %s %s of %s n=%zu offset=%zu: %s: %s",
               shape(o, sh, sizeof sh), clr_op_name(op), clr_type_name(t), n,
               offset, clr_status_name(s), clr_context_error(c))) {
    clr_check chk;
    clr_timing tm = CLR_TIMING_INIT;
    clr_last_timing(c, &tm);
    clr_ref_check(&ref, &got, tm.error_depth, &chk);
    tu_check(
        chk.ok, "reduce_buffer %s %s of %s n=%zu offset=%zu: got %s, want %s",
        shape(o, sh, sizeof sh), clr_op_name(op), clr_type_name(t), n, offset,
        tu_fmtv(got, a, sizeof a), tu_fmtv(ref.value, b, sizeof b));
  }
  clReleaseMemObject(m);
  free(host);
}

/* Scan host arrays: out of place, or in place; optional carry-in. */
static void check_scan(clr_context *c, clr_options o, clr_op op, clr_type t,
                       size_t n, int in_place, int carry) {
  char sh[160], a[64], b[64];
  size_t es = clr_type_size(t);
  unsigned char *in = tu_xmalloc(n * es), *out = tu_xmalloc(n * es);
  unsigned char *want = tu_xmalloc(n * es), cin[8];
  tu_fill_exact(t, op, in, n, n * 13 + (size_t)op);
  tu_fill_exact(t, op, cin, 1, 99);
  o.carry_in = carry ? cin : NULL;
  tu_scan_ref(op, t, o.exclusive, o.carry_in, in, want, n);
  if (in_place)
    memcpy(out, in, n * es);
  trace("scan %s %s of %s n=%zu%s%s", shape(&o, sh, sizeof sh), clr_op_name(op),
        clr_type_name(t), n, in_place ? " in place" : "",
        carry ? " carry" : "");
  clr_status s = clr_scan_host(c, &o, op, t, in_place ? out : in, out, n);
  runs++;
  if (tu_check(s == CLR_OK, "scan %s %s of %s n=%zu%s%s: %s: %s",
               shape(&o, sh, sizeof sh), clr_op_name(op), clr_type_name(t), n,
               in_place ? " in place" : "", carry ? " carry" : "",
               clr_status_name(s), clr_context_error(c))) {
    size_t i = tu_first_diff(t, out, want, n);
    tu_check(i == n, "scan %s %s of %s n=%zu%s%s: element %zu is %s, want %s",
             shape(&o, sh, sizeof sh), clr_op_name(op), clr_type_name(t), n,
             in_place ? " in place" : "", carry ? " carry" : "", i,
             i < n ? tu_fmtv(clr_value_at(t, out, i), a, sizeof a) : "",
             i < n ? tu_fmtv(clr_value_at(t, want, i), b, sizeof b) : "");
  }
  free(in);
  free(out);
  free(want);
}

/* clr_scan_buffer between two buffers of the context. */
static void check_scan_buffer(clr_context *c, const clr_options *o, clr_op op,
                              clr_type t, size_t n, int in_place) {
  char sh[160], a[64], b[64];
  size_t es = clr_type_size(t);
  unsigned char *in = tu_xmalloc(n * es), *out = tu_xmalloc(n * es);
  unsigned char *want = tu_xmalloc(n * es);
  tu_fill_exact(t, op, in, n, n * 5 + 1);
  tu_scan_ref(op, t, o->exclusive, NULL, in, want, n);
  cl_int err;
  cl_context cl = clr_context_cl_context(c);
  cl_mem mi = clCreateBuffer(cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                             n * es, in, &err);
  if (err != CL_SUCCESS)
    tu_die("clCreateBuffer: %d", (int)err);
  cl_mem mo = mi;
  if (!in_place) {
    mo = clCreateBuffer(cl, CL_MEM_READ_WRITE, n * es, NULL, &err);
    if (err != CL_SUCCESS)
      tu_die("clCreateBuffer: %d", (int)err);
  }
  trace("scan_buffer %s %s of %s n=%zu%s", shape(o, sh, sizeof sh),
        clr_op_name(op), clr_type_name(t), n, in_place ? " in place" : "");
  clr_status s = clr_scan_buffer(c, o, op, t, mi, mo, n);
  runs++;
  if (tu_check(s == CLR_OK, "scan_buffer %s %s of %s n=%zu%s: %s: %s",
               shape(o, sh, sizeof sh), clr_op_name(op), clr_type_name(t), n,
               in_place ? " in place" : "", clr_status_name(s),
               clr_context_error(c))) {
    err = clEnqueueReadBuffer(clr_context_queue(c), mo, CL_TRUE, 0, n * es, out,
                              0, NULL, NULL);
    if (err != CL_SUCCESS)
      tu_die("clEnqueueReadBuffer: %d", (int)err);
    size_t i = tu_first_diff(t, out, want, n);
    tu_check(i == n,
             "scan_buffer %s %s of %s n=%zu%s: element %zu is %s, want %s",
             shape(o, sh, sizeof sh), clr_op_name(op), clr_type_name(t), n,
             in_place ? " in place" : "", i,
             i < n ? tu_fmtv(clr_value_at(t, out, i), a, sizeof a) : "",
             i < n ? tu_fmtv(clr_value_at(t, want, i), b, sizeof b) : "");
  }
  if (mo != mi)
    clReleaseMemObject(mo);
  clReleaseMemObject(mi);
  free(in);
  free(out);
  free(want);
}

/* A map or a dot product (y not NULL) of n elements, checked against the
 * CPU's mapped values. */
static void check_mapped(const clr_options *o, clr_op op, clr_type t, size_t n,
                         int dot) {
  char sh[160], a[64], b[64];
  size_t es = clr_type_size(t);
  void *x = tu_xmalloc(n * es), *y = tu_xmalloc(n * es);
  tu_fill_exact(t, CLR_SUM, x, n, n * 13 + (size_t)t);
  tu_fill_exact(t, CLR_SUM, y, n, n * 17 + (size_t)t);
  clr_type rt = clr_options_result_type(o, op, t);
  clr_reference ref;
  if (!clr_ref_reduce_mapped(o->map, op, t, rt, x, dot ? y : NULL, n, &ref))
    tu_die("out of host memory");
  clr_value got;
  memset(&got, 0, sizeof got);
  trace("%s %s %s of %s n=%zu", dot ? "dot" : "map", shape(o, sh, sizeof sh),
        clr_op_name(op), clr_type_name(t), n);
  clr_status s = dot ? clr_dot_host(ctx, o, t, x, y, n, &got)
                     : clr_reduce_host(ctx, o, op, t, x, n, &got);
  runs++;
  if (tu_check(s == CLR_OK, "%s %s map %s %s of %s n=%zu: %s: %s",
               dot ? "dot" : "reduce", shape(o, sh, sizeof sh),
               clr_map_name(o->map), clr_op_name(op), clr_type_name(t), n,
               clr_status_name(s), clr_context_error(ctx))) {
    clr_check chk;
    clr_timing tm = CLR_TIMING_INIT;
    clr_last_timing(ctx, &tm);
    clr_ref_check(&ref, &got, tm.error_depth, &chk);
    tu_check(chk.ok, "%s %s map %s %s of %s n=%zu: got %s, want %s",
             dot ? "dot" : "reduce", shape(o, sh, sizeof sh),
             clr_map_name(o->map), clr_op_name(op), clr_type_name(t), n,
             tu_fmtv(got, a, sizeof a), tu_fmtv(ref.value, b, sizeof b));
  }
  free(x);
  free(y);
}

/* Maps, expressions and dot products on the coarse kernels (the indexed
 * ops run in part_coarse, over every op). */
static void part_transform(void) {
  static const unsigned vecs[] = {1, 4, 16};
  static const clr_type types[] = {CLR_FLOAT, CLR_INT, CLR_DOUBLE};
  for (int layout = CLR_LAYOUT_STRIDED; layout <= CLR_LAYOUT_CONTIGUOUS;
       layout++)
    for (size_t vi = 0; vi < sizeof vecs / sizeof vecs[0]; vi++)
      for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        clr_options o;
        clr_options_init(&o);
        o.wg_size = 4;
        o.layout = (clr_layout)layout;
        o.vector_width = vecs[vi];
        size_t sizes[] = {1, vecs[vi] + 3, 4 * 4 * vecs[vi] * 3 + 5};
        for (size_t si = 0; si < 3; si++) {
          o.map = CLR_MAP_SQUARE;
          check_mapped(&o, CLR_SUM, types[ti], sizes[si], 0);
          o.map = CLR_MAP_ABS;
          check_mapped(&o, CLR_ARGMAX, types[ti], sizes[si], 0);
          o.map = CLR_MAP_NONE;
          check_mapped(&o, CLR_SUM, types[ti], sizes[si], 1);
          /* An expression of x and i: the index weights each element. */
          o.map = CLR_MAP_EXPR;
          o.map_expr = "(i % 3 == 1) ? x : 0";
          size_t n = sizes[si], es = clr_type_size(types[ti]);
          unsigned char *x = tu_xmalloc(n * es);
          tu_fill_exact(types[ti], CLR_SUM, x, n, n);
          unsigned char *m = tu_xmalloc(n * es);
          memset(m, 0, n * es);
          for (size_t i = 1; i < n; i += 3)
            memcpy(m + i * es, x + i * es, es);
          clr_type rt = clr_options_result_type(&o, CLR_SUM, types[ti]);
          clr_reference ref;
          clr_ref_reduce_to(CLR_SUM, types[ti], rt, m, n, &ref);
          clr_value got;
          clr_status s =
              clr_reduce_host(ctx, &o, CLR_SUM, types[ti], x, n, &got);
          runs++;
          clr_check chk;
          clr_timing tm = CLR_TIMING_INIT;
          clr_last_timing(ctx, &tm);
          clr_ref_check(&ref, &got, tm.error_depth, &chk);
          tu_check(s == CLR_OK && chk.ok, "expression map %s of %s n=%zu: %s",
                   layout == CLR_LAYOUT_STRIDED ? "strided" : "contiguous",
                   clr_type_name(types[ti]), n, clr_status_name(s));
          free(x);
          free(m);
        }
      }
}

/* ------------------------------------------------------------ parts */

/* Sizes for one-element-per-item kernels with work-group wg: 1, a partial
 * group, and sizes needing two and three passes with a partial last
 * group. */
static void part_simple(clr_kernel k) {
  static const size_t wgs[] = {4, 6, 8};
  for (size_t w = 0; w < sizeof wgs / sizeof wgs[0]; w++)
    for (size_t ti = 0; ti < N_TYPES; ti++)
      for (int op = 0; op < CLR_OP_COUNT; op++) {
        clr_type t = all_types[ti];
        if (clr_kernel_supports(k, (clr_op)op, t) != CLR_OK)
          continue;
        clr_options o;
        clr_options_init(&o);
        o.kernel = k;
        o.wg_size = wgs[w];
        size_t wg = wgs[w];
        size_t sizes[] = {1, wg - 1, wg * wg + 1, 2 * wg * wg * wg + 3};
        for (size_t si = 0; si < 4; si++)
          check_reduce(ctx, &o, (clr_op)op, t, sizes[si], 0);
        /* 32-bit sums that stay 32-bit read and write the same type */
        if ((t == CLR_INT || t == CLR_UINT) &&
            (op == CLR_SUM || op == CLR_PROD)) {
          o.narrow_accumulator = 1;
          check_reduce(ctx, &o, (clr_op)op, t, wg * wg + 3, 0);
        }
      }
  /* copied (not wrapped) host data */
  clr_options o;
  clr_options_init(&o);
  o.kernel = k;
  o.wg_size = 4;
  check_reduce(ctx_copy, &o, CLR_SUM, CLR_INT, 77, 0);
  check_reduce(ctx_copy, &o, CLR_MIN, CLR_DOUBLE, 77, 0);
}

static void part_coarse(clr_layout layout) {
  static const unsigned vecs[] = {1, 2, 4, 16};
  static const size_t coarses[] = {0, 3, 8};
  for (size_t vi = 0; vi < sizeof vecs / sizeof vecs[0]; vi++)
    for (size_t ti = 0; ti < N_TYPES; ti++)
      for (int op = 0; op < CLR_OP_COUNT; op++) {
        clr_type t = all_types[ti];
        if (clr_op_supports((clr_op)op, t) != CLR_OK)
          continue;
        /* width 16 on two types and every op is enough */
        if (vecs[vi] == 16 && t != CLR_FLOAT && t != CLR_LONG)
          continue;
        clr_options o;
        clr_options_init(&o);
        o.kernel = CLR_REDUCE_COARSE;
        o.wg_size = 4;
        o.layout = layout;
        o.vector_width = vecs[vi];
        for (size_t ci = 0; ci < sizeof coarses / sizeof coarses[0]; ci++) {
          o.coarse = coarses[ci];
          /* a lone element, a tail shorter than a vector, several passes
           * with partial groups and tails */
          check_reduce(ctx, &o, (clr_op)op, t, 1, 0);
          check_reduce(ctx, &o, (clr_op)op, t, vecs[vi] + 3, 0);
          check_reduce(ctx, &o, (clr_op)op, t, 301, ci == 1 ? 1 : 0);
        }
      }
  clr_options o;
  clr_options_init(&o);
  o.kernel = CLR_REDUCE_COARSE;
  o.wg_size = 8;
  o.layout = layout;
  o.vector_width = 4;
  o.coarse = 4;
  check_reduce(ctx_copy, &o, CLR_SUM, CLR_INT, 203, 0);
  check_reduce(ctx_copy, &o, CLR_MAX, CLR_FLOAT, 203, 0);
  /* the library's own choices (wg, coarse, vec, layout) */
  clr_options_init(&o);
  check_reduce(ctx, &o, CLR_SUM, CLR_FLOAT, 1000, 0);
  check_reduce(ctx, &o, CLR_MAX, CLR_LONG, 1000, 0);
}

static void part_reduce_buffer(void) {
  static const clr_kernel ks[] = {CLR_REDUCE_INTERLEAVED, CLR_REDUCE_SEQUENTIAL,
                                  CLR_REDUCE_FIRST_ADD, CLR_REDUCE_COARSE};
  for (size_t ki = 0; ki < 4; ki++)
    for (size_t ti = 0; ti < N_TYPES; ti++) {
      clr_options o;
      clr_options_init(&o);
      o.kernel = ks[ki];
      o.wg_size = 4;
      if (ks[ki] == CLR_REDUCE_COARSE) {
        o.vector_width = 4;
        o.coarse = 4;
        o.layout = ti % 2 ? CLR_LAYOUT_STRIDED : CLR_LAYOUT_CONTIGUOUS;
      }
      /* aligned (offset 0 and 4) and unaligned offsets */
      check_reduce_buffer(ctx, &o, CLR_SUM, all_types[ti], 97, 0);
      check_reduce_buffer(ctx, &o, CLR_MAX, all_types[ti], 97, 3);
      check_reduce_buffer(ctx, &o, CLR_MIN, all_types[ti], 50, 4);
    }
}

/* Exact sums (cl/reduce_exact.cl): both accumulator paths (64-bit and
 * pairs of 32-bit local atomics), both layouts, scalar and vector loads,
 * partial groups and tails, against the CPU's exact sum by equality.  The
 * data mixes denormals, cancelling huge values and ordinary ones, so the
 * expansion, its spills and the bit-decomposing path all run. */
/* Element i of an exact sum's data: tiny (the superaccumulator's low
 * words), huge and its negative (its high words, cancelling), or an
 * ordinary value (the expansion), in turn. */
static void exact_data(clr_type type, unsigned char *data, size_t n,
                       tu_rng *rng) {
  size_t es = clr_type_size(type);
  for (size_t i = 0; i < n; i++) {
    double r = tu_unit(rng);
    double big = type == CLR_FLOAT ? 0x1p100 : 0x1p950;
    double tiny = type == CLR_FLOAT ? 0x1p-140 : 0x1p-1060;
    double x = i % 4 == 0   ? tiny * (1 + (double)(i % 7))
               : i % 4 == 1 ? big
               : i % 4 == 2 ? -big
                            : r - 0.5;
    if (type == CLR_FLOAT) {
      float f = (float)x;
      memcpy(data + i * es, &f, es);
    } else {
      memcpy(data + i * es, &x, es);
    }
  }
}

static void part_exact(void) {
  static const unsigned vecs[] = {1, 4};
  static const size_t sizes[] = {1, 7, 301};
  clr_tuning base = CLR_TUNING_INIT, t = CLR_TUNING_INIT;
  if (clr_get_tuning(ctx, &base) != CLR_OK)
    tu_die("clr_get_tuning: %s", clr_context_error(ctx));
  for (unsigned atomics = 0; atomics < 2; atomics++)
    for (int ty = CLR_FLOAT; ty <= CLR_DOUBLE; ty++)
      for (int layout = CLR_LAYOUT_STRIDED; layout <= CLR_LAYOUT_CONTIGUOUS;
           layout++)
        for (size_t vi = 0; vi < 2; vi++)
          for (size_t si = 0; si < 3; si++) {
            clr_type type = (clr_type)ty;
            size_t n = sizes[si], es = clr_type_size(type);
            unsigned char *data = tu_xmalloc(n * es);
            tu_rng rng = {n * 31 + vi};
            exact_data(type, data, n, &rng);
            t = base;
            t.exact_int64_atomics = atomics;
            t.exact_terms = 2;
            if (clr_set_tuning(ctx, &t) != CLR_OK)
              tu_die("clr_set_tuning: %s", clr_context_error(ctx));
            clr_options o;
            clr_options_init(&o);
            o.exact = 1;
            o.wg_size = 4 + si % 2;
            o.layout = (clr_layout)layout;
            o.vector_width = vecs[vi];
            clr_value got, want;
            char a[64], b[64];
            clr_ref_exact_sum(type, data, n, &want);
            trace("exact sum %s n=%zu vec=%u layout=%d atomics=%u",
                  clr_type_name(type), n, vecs[vi], layout, atomics);
            clr_status st =
                clr_reduce_host(ctx, &o, CLR_SUM, type, data, n, &got);
            runs++;
            tu_check(st == CLR_OK && clr_ref_exact_equal(&want, &got),
                     "exact %s sum n=%zu vec=%u layout=%d int64 atomics=%u: "
                     "%s, got %s, exact %s",
                     clr_type_name(type), n, vecs[vi], layout, atomics,
                     clr_status_name(st), tu_fmtv(got, a, sizeof a),
                     tu_fmtv(want, b, sizeof b));
            free(data);
          }
  if (clr_set_tuning(ctx, &base) != CLR_OK)
    tu_die("clr_set_tuning: %s", clr_context_error(ctx));
}

/* Exact sums of a matrix's rows and columns (cl/reduce_exact.cl's
 * clr_exact_axis and clr_exact_runs): small shapes whose values reach the
 * superaccumulators (tiny, huge), one of few long rows (its elements
 * split over work-groups: records, then clr_exact_round), both layouts
 * and both kinds of local atomics; every result against the CPU's exact
 * sum. */
static void part_exact_matrix(void) {
  static const size_t shapes[][2] = {{7, 5}, {40, 3}, {2, 300}};
  clr_tuning base = CLR_TUNING_INIT, t = CLR_TUNING_INIT;
  if (clr_get_tuning(ctx, &base) != CLR_OK)
    tu_die("clr_get_tuning: %s", clr_context_error(ctx));
  for (unsigned atomics = 0; atomics < 2; atomics++)
    for (int ty = CLR_FLOAT; ty <= CLR_DOUBLE; ty++)
      for (int layout = CLR_LAYOUT_STRIDED; layout <= CLR_LAYOUT_CONTIGUOUS;
           layout++)
        for (size_t sh = 0; sh < 3; sh++)
          for (int axis = 0; axis < 2; axis++) {
            clr_type type = (clr_type)ty;
            size_t R = shapes[sh][0], C = shapes[sh][1], n = R * C;
            size_t es = clr_type_size(type), nres = axis ? R : C;
            size_t len = axis ? C : R;
            unsigned char *data = tu_xmalloc(n * es),
                          *res = tu_xmalloc(nres * es);
            unsigned char *line = tu_xmalloc(len * es);
            tu_rng rng = {n * 17 + sh};
            exact_data(type, data, n, &rng);
            t = base;
            t.exact_int64_atomics = atomics;
            if (clr_set_tuning(ctx, &t) != CLR_OK)
              tu_die("clr_set_tuning: %s", clr_context_error(ctx));
            clr_options o = CLR_OPTIONS_INIT;
            o.exact = 1;
            o.wg_size = 4;
            o.layout = (clr_layout)layout;
            clr_request r = tu_matrix_request(CLR_SUM, type, R, C, 0, axis);
            r.options = &o;
            r.input.host = data;
            r.output.host = res;
            trace("exact matrix %s %zux%zu axis %d layout=%d atomics=%u",
                  clr_type_name(type), R, C, axis, layout, atomics);
            clr_status st = clr_run(ctx, &r, NULL);
            runs++;
            size_t bad = 0;
            for (size_t k = 0; st == CLR_OK && k < nres; k++) {
              for (size_t j = 0; j < len; j++)
                memcpy(line + j * es,
                       data + (axis ? k * C + j : j * C + k) * es, es);
              clr_value want, got;
              clr_ref_exact_sum(type, line, len, &want);
              got = want;
              memcpy(&got.v, res + k * es, es);
              bad += !clr_ref_exact_equal(&want, &got);
            }
            tu_check(st == CLR_OK && bad == 0,
                     "exact %s matrix %zux%zu axis %d layout=%d int64 "
                     "atomics=%u: %s, %zu of %zu results not the exact sum",
                     clr_type_name(type), R, C, axis, layout, atomics,
                     clr_status_name(st), bad, nres);
            free(line);
            free(res);
            free(data);
          }
  if (clr_set_tuning(ctx, &base) != CLR_OK)
    tu_die("clr_set_tuning: %s", clr_context_error(ctx));
}

static void part_scan(clr_kernel k) {
  static const size_t wgs[] = {4, 5};
  static const size_t coarses[] = {1, 3};
  for (size_t w = 0; w < 2; w++)
    for (size_t ti = 0; ti < N_TYPES; ti++)
      for (int op = 0; op < 4; op++) { /* sum prod min max */
        clr_type t = all_types[ti];
        clr_options o;
        clr_options_init(&o);
        o.kernel = k;
        o.wg_size = wgs[w];
        for (size_t ci = 0; ci < 2; ci++) {
          o.coarse = coarses[ci];
          size_t tile = wgs[w] * coarses[ci];
          /* one element; one partial tile; several levels */
          size_t sizes[] = {1, tile - 1 ? tile - 1 : 1, tile * tile * tile + 2};
          for (int ex = 0; ex < 2; ex++) {
            o.exclusive = ex;
            for (size_t si = 0; si < 3; si++)
              check_scan(ctx, o, (clr_op)op, t, sizes[si], 0, 0);
          }
          o.exclusive = ci;
          check_scan(ctx, o, (clr_op)op, t, tile * tile + 1, 1, 1);
        }
      }
  /* The decoupled scan's CPU shape: work-groups of one item, runs of 3
   * (scalar) and 16 (vectors and a partial one), chained run to run. */
  if (k == CLR_SCAN_DECOUPLED)
    for (size_t ti = 0; ti < N_TYPES; ti++)
      for (int op = 0; op < 4; op += 3) /* sum, max */
        for (size_t run = 3; run <= 16; run += 13) {
          clr_options o;
          clr_options_init(&o);
          o.kernel = k;
          o.wg_size = 1;
          o.coarse = run;
          o.exclusive = op != 0;
          size_t sizes[] = {1, 2 * run + 1, 20 * run + 3};
          for (size_t si = 0; si < 3; si++)
            check_scan(ctx, o, (clr_op)op, all_types[ti], sizes[si], si == 2,
                       si == 1);
        }
  clr_options o;
  clr_options_init(&o);
  o.kernel = k;
  o.wg_size = 4;
  o.coarse = 2;
  check_scan(ctx_copy, o, CLR_SUM, CLR_INT, 150, 0, 1);
  check_scan(ctx_copy, o, CLR_MIN, CLR_DOUBLE, 150, 1, 0);
  o.exclusive = 1;
  check_scan(ctx_copy, o, CLR_PROD, CLR_FLOAT, 150, 0, 0);
  /* the library's own choices */
  clr_options_init(&o);
  o.kernel = k;
  check_scan(ctx, o, CLR_SUM, CLR_LONG, 700, 0, 0);
}

static void part_scan_buffer(void) {
  static const clr_kernel ks[] = {CLR_SCAN_KOGGE_STONE, CLR_SCAN_KOGGE_STONE_DB,
                                  CLR_SCAN_BRENT_KUNG, CLR_SCAN_DECOUPLED};
  for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
    for (size_t ti = 0; ti < N_TYPES; ti++) {
      clr_options o;
      clr_options_init(&o);
      o.kernel = ks[ki];
      o.wg_size = 4;
      o.coarse = 2;
      o.exclusive = (int)(ti % 2);
      check_scan_buffer(ctx, &o, CLR_SUM, all_types[ti], 91, 0);
      check_scan_buffer(ctx, &o, CLR_MAX, all_types[ti], 91, 1);
    }
}

/* One library call in a process of its own, for --uninitialized.  Two
 * limits of Oclgrind 21.10's uninitialized-value plugin shape this:
 * - it keeps a buffer's shadow state by buffer index and never drops it
 *   when the buffer is released, so a later, larger buffer that reuses
 *   the index is reported as uninitialised beyond the old size
 *   (broken_kernels --kernel=realloc_false_positive reproduces it);
 *   within one call the library never releases a buffer it still uses,
 *   so one call per process is free of that false positive;
 * - it crashes (SIGSEGV in Uninitialized::instructionExecuted) on the
 *   coarse kernel's vector sums and reports "control flow depends on
 *   uninitialized value" for 16-wide min/max, although every lane is
 *   initialised; so the coarse cases here are scalar (vec=1), plus one
 *   4-wide max, which it handles (in one launch).  The full
 *   matrix (all widths) runs without --uninitialized. */
static int part_one(const char *what) {
  clr_options o;
  clr_options_init(&o);
  o.wg_size = 4;
  if (strncmp(what, "one-reduce-", 11) == 0) {
    const char *k = what + 11;
    if (strcmp(k, "coarse-vec4") == 0) {
      /* In one launch (reduce.single_launch, on for Oclgrind's device):
       * the last work-group folds the partials.  (When they travelled
       * through 32-bit atomics, the plugin reported each one published
       * with 4-wide loads as uninitialised; since they travel in 64-bit
       * slots tagged with the launch's epoch it reports nothing.) */
      o.kernel = CLR_REDUCE_COARSE;
      o.layout = CLR_LAYOUT_CONTIGUOUS;
      o.vector_width = 4;
      o.coarse = 8;
      check_reduce(ctx, &o, CLR_MAX, CLR_INT, 301, 1);
      tu_timing tm;
      tu_get_timing(ctx, &tm);
      tu_check(tm.n_passes == 1 && tm.passes[0].folds,
               "coarse-vec4: %zu passes, the first folds: %d (want one)",
               tm.n_passes, tm.passes[0].folds);
      return 1;
    }
    if (strcmp(k, "coarse-strided") == 0 ||
        strcmp(k, "coarse-contiguous") == 0) {
      o.kernel = CLR_REDUCE_COARSE;
      o.layout = k[7] == 's' ? CLR_LAYOUT_STRIDED : CLR_LAYOUT_CONTIGUOUS;
      o.vector_width = 1;
      o.coarse = 3;
    } else if (clr_kernel_from_name(k, &o.kernel) != CLR_OK ||
               clr_kernel_is_scan(o.kernel)) {
      return 0;
    }
    /* int sum accumulates in long: first and later passes differ */
    check_reduce(ctx, &o, CLR_SUM, CLR_INT, 301, 1);
    return 1;
  }
  if (strncmp(what, "one-scan-", 9) == 0) {
    if (clr_kernel_from_name(what + 9, &o.kernel) != CLR_OK ||
        !clr_kernel_is_scan(o.kernel))
      return 0;
    o.coarse = 2;
    o.exclusive = 1;
    check_scan(ctx, o, CLR_SUM, CLR_DOUBLE, 203, 0, 1);
    return 1;
  }
  return 0;
}

/* The parts besides "one-...": each runs one function, of a kernel, of a
 * layout or of nothing. */
static const struct part {
  const char *name;
  void (*of_kernel)(clr_kernel);
  clr_kernel kernel;
  void (*of_layout)(clr_layout);
  clr_layout layout;
  void (*run)(void);
} parts[] = {
    {"reduce-interleaved", .of_kernel = part_simple,
     .kernel = CLR_REDUCE_INTERLEAVED},
    {"reduce-sequential", .of_kernel = part_simple,
     .kernel = CLR_REDUCE_SEQUENTIAL},
    {"reduce-first-add", .of_kernel = part_simple,
     .kernel = CLR_REDUCE_FIRST_ADD},
    {"reduce-coarse-strided", .of_layout = part_coarse,
     .layout = CLR_LAYOUT_STRIDED},
    {"reduce-coarse-contiguous", .of_layout = part_coarse,
     .layout = CLR_LAYOUT_CONTIGUOUS},
    {"reduce-buffer", .run = part_reduce_buffer},
    {"reduce-exact", .run = part_exact},
    {"reduce-exact-matrix", .run = part_exact_matrix},
    {"reduce-transform", .run = part_transform},
    {"scan-kogge-stone", .of_kernel = part_scan,
     .kernel = CLR_SCAN_KOGGE_STONE},
    {"scan-kogge-stone-db", .of_kernel = part_scan,
     .kernel = CLR_SCAN_KOGGE_STONE_DB},
    {"scan-brent-kung", .of_kernel = part_scan, .kernel = CLR_SCAN_BRENT_KUNG},
    {"scan-decoupled", .of_kernel = part_scan, .kernel = CLR_SCAN_DECOUPLED},
    {"scan-buffer", .run = part_scan_buffer},
};

static const struct part *find_part(const char *name) {
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
    if (strcmp(parts[i].name, name) == 0)
      return &parts[i];
  return NULL;
}

int main(int argc, char **argv) {
  const char *part = tu_arg_value(argc, argv, "--part");
  const char *kdir = tu_arg_value(argc, argv, "--kernel-dir");
  int any = 0;
  for (int i = 1; i < argc; i++)
    any |= strcmp(argv[i], "--any-device") == 0;
  if (!part || !kdir)
    tu_die("usage: oclgrind_kernels --part=PART --kernel-dir=DIR "
           "[--any-device]");
  ctx = make_context(kdir, 0, any);
  if (strncmp(part, "one-", 4) == 0) {
    if (!part_one(part))
      tu_die("unknown --part '%s'", part);
    clr_context_release(ctx);
    return tu_finish("oclgrind_kernels");
  }
  const struct part *p = find_part(part);
  if (!p)
    tu_die("unknown --part '%s'", part);
  ctx_copy = make_context(kdir, 1, any);
  if (p->of_kernel)
    p->of_kernel(p->kernel);
  else if (p->of_layout)
    p->of_layout(p->layout);
  else
    p->run();
  clr_context_release(ctx);
  clr_context_release(ctx_copy);
  printf("%s: %lu library calls checked\n", part, runs);
  return tu_finish("oclgrind_kernels");
}
