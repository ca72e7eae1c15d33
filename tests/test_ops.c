/* Every operation of the table (include/clreduce_ops.def) on every driver
 * that takes it, read off its row: the plain reduction (host array and
 * buffer, each reduction kernel that supports it), segments, rows, ranges,
 * a group of two contexts and, for CLR_OPF_SCAN rows, the scans; every
 * type the row supports, sizes 1 to 2^16 + 1.  Floating data of every
 * operation also comes with NaNs placed first, last, everywhere and at
 * random (and nowhere), the cases where NaN-skipping operations differ
 * from the rest.  Every result against src/check's CPU reference.  A new
 * row is tested here without a line of this file changing.
 *
 *   test_ops [--set=plain|drivers|scans] [--verbose]
 */
#include "scan_reference.h"
#include "segment_reference.h"
#include "test_util.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const size_t sizes[] = {1, 2, 7, 1000, 4099, 65537};
#define N_SIZES (sizeof sizes / sizeof sizes[0])

/* Where NaNs go in floating data. */
typedef enum nan_place {
  NAN_NOWHERE,
  NAN_FIRST,
  NAN_LAST,
  NAN_SCATTERED, /* about one element in 16, at random */
  NAN_EVERYWHERE,
  N_NAN_PLACES
} nan_place;
static const char *const place_names[] = {"no NaN", "NaN first", "NaN last",
                                          "NaNs scattered", "all NaN"};

static unsigned op_flags(clr_op op) {
  static const unsigned flags[CLR_OP_COUNT] = {
#define CLR_OP_ROW(id, name, runs, combine, partial, identity, result, flags,  \
                   what)                                                       \
  [CLR_##id] = flags,
#include "clreduce_ops.def"
#undef CLR_OP_ROW
  };
  return flags[op];
}

/* A quiet NaN of floating type t at element i. */
static void put_nan(clr_type t, void *data, size_t i) {
  if (t == CLR_HALF)
    clr_store_bits(t, data, i, 0x7e00u);
  else if (t == CLR_FLOAT)
    ((float *)data)[i] = NAN;
  else
    ((double *)data)[i] = (double)NAN;
}

/* The op's generated data (src/check/datagen.c), NaNs placed. */
static void fill(clr_op op, clr_type t, nan_place where, uint64_t seed,
                 void *data, size_t n) {
  clr_gen_data(op, t, seed, data, n, NULL, 0);
  if (!tu_is_float(t) && t != CLR_HALF)
    return;
  tu_rng r = {seed * 2654435761u + 1};
  for (size_t i = 0; i < n; i++) {
    int nan = (where == NAN_FIRST && i == 0) ||
              (where == NAN_LAST && i == n - 1) || (where == NAN_EVERYWHERE) ||
              (where == NAN_SCATTERED && tu_below(&r, 16) == 0);
    if (nan)
      put_nan(t, data, i);
  }
}

static int is_fp(clr_type t) { return tu_is_float(t) || t == CLR_HALF; }

/* The placements to run for op on t: every one for floating data, none
 * but "nowhere" for integers. */
static size_t n_places(clr_type t) { return is_fp(t) ? N_NAN_PLACES : 1; }

/* A case of op on the n elements of data, default options. */
static tu_case op_case(clr_op op, clr_type t, const void *data, size_t n,
                       const char *label) {
  tu_case c;
  memset(&c, 0, sizeof c);
  clr_options_init(&c.opt);
  c.op = op;
  c.type = t;
  c.data = data;
  c.n = n;
  c.label = label;
  return c;
}

/* ------------------------------------------------------------ plain */

/* clr_reduce_host and clr_reduce_buffer with each reduction kernel that
 * supports op on t. */
static void plain(clr_context *ctx) {
  tu_section("plain: every row, type, kernel, size and NaN placement");
  for (int op = 0; op < CLR_OP_COUNT; op++)
    for (int t = 0; t < CLR_TYPE_COUNT; t++) {
      if (clr_op_supports((clr_op)op, (clr_type)t) != CLR_OK ||
          !tu_type_available((clr_type)t))
        continue;
      size_t es = clr_type_size((clr_type)t);
      for (size_t p = 0; p < n_places((clr_type)t); p++)
        for (size_t si = 0; si < N_SIZES; si++) {
          size_t n = sizes[si];
          void *data = tu_xmalloc(n * es);
          fill((clr_op)op, (clr_type)t, (nan_place)p, tu_seed(op, t, p, n),
               data, n);
          for (size_t k = 0; k < TU_N_REDUCE_KERNELS; k++) {
            clr_kernel kern = tu_reduce_kernels[k];
            if (clr_kernel_supports(kern, (clr_op)op, (clr_type)t) != CLR_OK)
              continue;
            /* the simple kernels at two sizes: they teach, the coarse one
             * serves */
            if (kern != CLR_REDUCE_COARSE && n != 4099 && n != 7)
              continue;
            tu_case c =
                op_case((clr_op)op, (clr_type)t, data, n, place_names[p]);
            c.opt.kernel = kern;
            tu_run_host(ctx, &c);
          }
          /* the same data from a buffer, at an offset */
          cl_mem buf = tu_new_buffer(ctx, (n + 3) * es, NULL);
          cl_int err =
              clEnqueueWriteBuffer(clr_context_queue(ctx), buf, CL_TRUE, 3 * es,
                                   n * es, data, 0, NULL, NULL);
          TU_CHECK(err == CL_SUCCESS, "write buffer: %d", err);
          clr_value got;
          clr_status st = clr_reduce_buffer(ctx, NULL, (clr_op)op, (clr_type)t,
                                            buf, 3, n, &got);
          tu_case c =
              op_case((clr_op)op, (clr_type)t, data, n, "buffer at offset 3");
          if (TU_CHECK(st == CLR_OK, "%s %s n=%zu buffer: %s: %s",
                       clr_op_name((clr_op)op), clr_type_name((clr_type)t), n,
                       clr_status_name(st), clr_context_error(ctx))) {
            clr_timing tm = CLR_TIMING_INIT;
            if (clr_last_timing(ctx, &tm) != CLR_OK)
              tu_die("clr_last_timing failed");
            tu_verify(&c, &got, &tm);
          }
          clReleaseMemObject(buf);
          free(data);
        }
    }
}

/* ------------------------------------------------------------ drivers */

/* Random CSR offsets over n elements, empty segments among them. */
static size_t make_offsets(tu_rng *r, size_t n, uint64_t *offsets,
                           size_t max_segments) {
  size_t s = 0;
  offsets[0] = 0;
  while (offsets[s] < n && s + 1 < max_segments) {
    uint64_t len = tu_below(r, 4) == 0 ? 0 : 1 + tu_below(r, 300);
    offsets[s + 1] = offsets[s] + len > n ? n : offsets[s] + len;
    s++;
  }
  offsets[s] = n;
  return s;
}

static void check_segments(clr_context *ctx, clr_op op, clr_type t,
                           const char *what, const void *data,
                           const uint64_t *offsets, size_t n_segments,
                           const void *results) {
  clr_segments_check chk;
  clr_type rt = clr_options_result_type(NULL, op, t);
  tu_timing tm = tu_last_timing(ctx);
  if (!clr_ref_segments_check(CLR_MAP_NONE, op, t, rt, data, offsets,
                              n_segments, results, tm.error_depth, &chk))
    tu_die("out of memory");
  char gb[64], wb[64];
  TU_CHECK(chk.ok, "%s %s %s: segment %zu: got %s, want %s", what,
           clr_op_name(op), clr_type_name(t), chk.worst_index,
           tu_fmtv(chk.got_last, gb, sizeof gb),
           tu_fmtv(chk.ref_last, wb, sizeof wb));
}

/* Segments, rows (segments of one length), ranges and a group of two
 * contexts, for every row that the drivers take. */
static void drivers(clr_context *ctx, clr_group *g) {
  tu_section("drivers: segments, rows, ranges, a group");
  const size_t n = 4099, max_segments = 64;
  uint64_t offsets[64 + 1], ranges[2 * 8];
  for (int op = 0; op < CLR_OP_COUNT; op++)
    for (int t = 0; t < CLR_TYPE_COUNT; t++) {
      clr_op o = (clr_op)op;
      clr_type ty = (clr_type)t;
      if (clr_op_supports(o, ty) != CLR_OK || !tu_type_available(ty))
        continue;
      size_t es = clr_type_size(ty);
      size_t rb = clr_result_bytes(NULL, o, ty);
      void *data = tu_xmalloc(n * es);
      unsigned char *results = tu_xmalloc(max_segments * rb);
      for (size_t p = 0; p < n_places(ty); p++) {
        tu_rng r = {tu_seed(op, t, p, 17)};
        fill(o, ty, (nan_place)p, tu_seed(op, t, p, n), data, n);
        char what[96];
        snprintf(what, sizeof what, "[%s]", place_names[p]);
        size_t ns = make_offsets(&r, n, offsets, max_segments);
        clr_status st = clr_reduce_segments_host(ctx, NULL, o, ty, data, n,
                                                 offsets, ns, results);
        if (TU_CHECK(st == CLR_OK, "%s %s %s segments: %s: %s", clr_op_name(o),
                     clr_type_name(ty), what, clr_status_name(st),
                     clr_context_error(ctx)))
          check_segments(ctx, o, ty, what, data, offsets, ns, results);
        /* rows of 97: offsets 0, 97, ... n */
        size_t nr = 0;
        for (uint64_t at = 0; at < n; at += 97)
          offsets[nr++] = at;
        offsets[nr] = n;
        st = clr_reduce_segments_host(ctx, NULL, o, ty, data, n, offsets, nr,
                                      results);
        if (TU_CHECK(st == CLR_OK, "%s %s %s rows: %s: %s", clr_op_name(o),
                     clr_type_name(ty), what, clr_status_name(st),
                     clr_context_error(ctx)))
          check_segments(ctx, o, ty, "rows", data, offsets, nr, results);
        /* ranges, unsorted and overlapping: checked one by one as
         * segments of a copy */
        for (size_t k = 0; k < 8; k++) {
          uint64_t off = tu_below(&r, n), len = tu_below(&r, n - off + 1);
          ranges[2 * k] = off;
          ranges[2 * k + 1] = k == 3 ? 0 : len;
        }
        st = clr_reduce_ranges_host(ctx, NULL, o, ty, data, n, ranges, 8,
                                    results);
        if (TU_CHECK(st == CLR_OK, "%s %s %s ranges: %s: %s", clr_op_name(o),
                     clr_type_name(ty), what, clr_status_name(st),
                     clr_context_error(ctx)))
          for (size_t k = 0; k < 8; k++) {
            uint64_t one[2] = {0, ranges[2 * k + 1]};
            check_segments(ctx, o, ty, "range",
                           (const char *)data + ranges[2 * k] * es, one, 1,
                           results + k * rb);
          }
        /* a group of two contexts: the parts' results folded on the host
         * (clr_value_combine by the row's partial operation; var and std:
         * clr_value_merge_moments) */
        clr_value got;
        st = clr_group_reduce_host(g, NULL, o, ty, data, n, &got);
        if (TU_CHECK(st == CLR_OK, "%s %s %s group: %s: %s", clr_op_name(o),
                     clr_type_name(ty), what, clr_status_name(st),
                     clr_group_error(g))) {
          tu_case c = op_case(o, ty, data, n, "group of two");
          clr_timing tm = CLR_TIMING_INIT;
          clr_group_timing gt;
          if (clr_group_last_timing(g, &gt) == CLR_OK)
            tm.error_depth = gt.error_depth;
          tu_verify(&c, &got, &tm);
        }
      }
      free(results);
      free(data);
    }
}

/* ------------------------------------------------------------ scans */

/* Every CLR_OPF_SCAN row, inclusive and exclusive, on each scan kernel. */
static void scans(clr_context *ctx) {
  tu_section("scans: every scannable row");
  static const clr_kernel kernels[] = {CLR_SCAN_KOGGE_STONE,
                                       CLR_SCAN_BRENT_KUNG, CLR_SCAN_DECOUPLED};
  for (int op = 0; op < CLR_OP_COUNT; op++) {
    if (!(op_flags((clr_op)op) & CLR_OPF_SCAN))
      continue;
    for (int t = 0; t < CLR_TYPE_COUNT; t++) {
      clr_op o = (clr_op)op;
      clr_type ty = (clr_type)t;
      if (clr_op_supports(o, ty) != CLR_OK || !tu_type_available(ty) ||
          ty == CLR_HALF)
        continue;
      for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++)
        for (size_t si = 0; si < N_SIZES; si++) {
          size_t n = sizes[si], es = clr_type_size(ty);
          void *in = tu_xmalloc(n * es), *out = tu_xmalloc(n * es);
          fill(o, ty, NAN_NOWHERE, tu_seed(op, t, k, n), in, n);
          for (int ex = 0; ex < 2; ex++) {
            clr_options opt;
            clr_options_init(&opt);
            opt.kernel = kernels[k];
            opt.exclusive = ex;
            clr_status st = clr_scan_host(ctx, &opt, o, ty, in, out, n);
            if (!TU_CHECK(st == CLR_OK, "%s %s %s n=%zu: %s: %s",
                          clr_kernel_name(kernels[k]), clr_op_name(o),
                          clr_type_name(ty), n, clr_status_name(st),
                          clr_context_error(ctx)))
              continue;
            clr_scan_check chk;
            tu_timing tm = tu_last_timing(ctx);
            clr_ref_scan_check(o, ty, ex, in, out, n, tm.error_depth, &chk);
            TU_CHECK(chk.ok, "%s %s %s n=%zu exclusive=%d: element %zu",
                     clr_kernel_name(kernels[k]), clr_op_name(o),
                     clr_type_name(ty), n, ex, chk.worst_index);
          }
          free(in);
          free(out);
        }
    }
  }
}

int main(int argc, char **argv) {
  const char *set = tu_arg_value(argc, argv, "--set");
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--verbose") == 0)
      tu_verbose = 1;
  clr_context *ctx = tu_context();
  if (!set || strcmp(set, "plain") == 0)
    plain(ctx);
  if (!set || strcmp(set, "drivers") == 0) {
    clr_context *two[2] = {ctx, tu_context()};
    clr_group *g = NULL;
    char detail[256] = "";
    clr_status st = clr_group_create_from(two, 2, &g, detail, sizeof detail);
    if (st != CLR_OK)
      tu_die("clr_group_create_from: %s: %s", clr_status_name(st), detail);
    drivers(ctx, g);
    clr_group_release(g);
    clr_context_release(two[1]);
  }
  if (!set || strcmp(set, "scans") == 0)
    scans(ctx);
  clr_context_release(ctx);
  return tu_finish("test_ops");
}
