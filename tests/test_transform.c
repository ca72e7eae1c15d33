/* The reductions people write beyond the six fixed operations:
 * argmin / argmax / minmax, maps (abs, square, an OpenCL C expression of x
 * and i) and dot products (clr_dot_host / clr_dot_buffer).
 *
 * Every result is checked against an independent CPU loop: src/check's
 * reference (clr_ref_reduce_to, clr_ref_reduce_mapped) for the indexed
 * operations,
 * the built-in maps and the dot products; loops written here for the
 * expressions (the test knows what each means).  Sizes 1, 2, 3, primes,
 * 2^k +- 1, more than one work-group, several passes; host arrays
 * streamed in 4 KiB chunks (indices across chunks); cl_mem ranges at an
 * offset.  Ties, NaN and signed zeros decide the indexed answers.
 *
 * Half data (binary16, computed in float): every reduction, maps, dot
 * products, against the CPU decoding the bits itself (src/check/half.c,
 * checked here against values known by hand).
 *
 * Means (the sum over n, with the sum's accuracy) of every type that has
 * one, against the CPU and, for 1..n, against (n + 1) / 2.
 *
 * Scans written in a wider type (half into float, int into long, ...).
 *
 *   --part=indexed|maps|dot|half|scan|errors   (default: all; means run
 *                                               with dot)
 */
#include "reference.h"
#include "scan_reference.h"
#include "test_util.h"

#include <float.h>

static const size_t sizes[] = {1, 2, 3, 31, 256, 257, 4099, 65537, 100003};
#define N_SIZES (sizeof sizes / sizeof sizes[0])

/* Launch shapes beside the tuned default: each builds its own variant. */
typedef struct shape {
  const char *name;
  size_t wg, coarse;
  unsigned vec;
  clr_layout layout;
} shape;
static const shape shapes[] = {
    {"default", 0, 0, 0, CLR_LAYOUT_AUTO},
    {"strided-vec4-wg64", 64, 0, 4, CLR_LAYOUT_STRIDED},
    {"contiguous-vec16-coarse5-wg3", 3, 5, 16, CLR_LAYOUT_CONTIGUOUS},
};
#define N_SHAPES (sizeof shapes / sizeof shapes[0])

static clr_options shaped(const shape *s) {
  clr_options o;
  clr_options_init(&o);
  o.wg_size = s->wg;
  o.coarse = s->coarse;
  o.vector_width = s->vec;
  o.layout = s->layout;
  return o;
}

/* clr_options_init's defaults with exact sums. */
static clr_options exact_options(void) {
  clr_options o;
  clr_options_init(&o);
  o.exact = 1;
  return o;
}

/* clr_options_init's defaults with a map (expr: for CLR_MAP_EXPR). */
static clr_options map_options(clr_map map, const char *expr) {
  clr_options o;
  clr_options_init(&o);
  o.map = map;
  o.map_expr = expr;
  return o;
}

/* A buffer of ctx's cl_context (flags, and CL_MEM_COPY_HOST_PTR) holding a
 * copy of bytes bytes at data; NULL, a failed check named what, when it
 * cannot be made. */
static cl_mem buffer_copy(clr_context *ctx, cl_mem_flags flags,
                          const void *data, size_t bytes, const char *what) {
  cl_int err;
  cl_mem b =
      clCreateBuffer(clr_context_cl_context(ctx), flags | CL_MEM_COPY_HOST_PTR,
                     bytes, (void *)data, &err);
  return TU_CHECK(err == CL_SUCCESS, "%s", what) ? b : NULL;
}

/* Data with many ties: a few distinct values (so extremes repeat), for
 * floats also NaN (kind 1), signed zeros (kind 2); integers reach the
 * type's limits (kind 1). */
static void fill_ties(clr_type t, int kind, void *data, size_t n,
                      uint64_t seed) {
  tu_rng r = {tu_seed(seed, t, (uint64_t)kind, n)};
  for (size_t i = 0; i < n; i++) {
    int64_t k = (int64_t)tu_below(&r, 7) - 3; /* -3 .. 3 */
    if (tu_is_float(t)) {
      double x = (double)k * 0.5;
      if (kind == 1 && tu_below(&r, 1000) == 0)
        x = (tu_next(&r) & 1) ? NAN : -NAN;
      if (kind == 2)
        x = (tu_next(&r) & 1) ? -0.0 : 0.0;
      tu_store_f(t, data, i, x);
    } else {
      int is_unsigned = t == CLR_UINT || t == CLR_ULONG;
      if (kind == 1 && tu_below(&r, 50) == 0) {
        uint64_t lim = (tu_next(&r) & 1) ? UINT64_MAX : 0;
        if (t == CLR_INT)
          tu_store_i(t, data, i, lim ? INT32_MAX : INT32_MIN);
        else if (t == CLR_LONG)
          tu_store_i(t, data, i, lim ? INT64_MAX : INT64_MIN);
        else
          tu_store_bits(t, data, i, lim);
      } else {
        tu_store_i(t, data, i, is_unsigned ? k + 3 : k);
      }
    }
  }
}

static int check_against(const char *what, const clr_reference *ref,
                         const clr_value *got, size_t depth) {
  clr_check chk;
  char g[64], w[64];
  clr_ref_check(ref, got, depth, &chk);
  return TU_CHECK(
      chk.ok,
      "%s: got %s (index %llu, max index %llu), want %s "
      "(index %llu, max index %llu), error %g bound %g",
      what, tu_fmt(got, g, sizeof g), (unsigned long long)got->index,
      (unsigned long long)got->max_index, tu_fmt(&ref->value, w, sizeof w),
      (unsigned long long)ref->value.index,
      (unsigned long long)ref->value.max_index, chk.error, chk.bound);
}

static size_t depth_of(clr_context *ctx) {
  clr_timing t = CLR_TIMING_INIT;
  return clr_last_timing(ctx, &t) == CLR_OK ? t.error_depth : 0;
}

/* ------------------------------------------------------------ indexed */

/* Hand-made arrays whose answers are known without any reference. */
static void indexed_known(clr_context *ctx) {
  clr_value v;
  float a[] = {1, 3, 3, 2, -1, -1, 3};
  TU_EXPECT_STATUS(clr_reduce_host(ctx, NULL, CLR_ARGMAX, CLR_FLOAT, a, 7, &v),
                   CLR_OK, "argmax of a tie");
  TU_CHECK(v.v.f == 3 && v.index == 1,
           "argmax: first of the tied 3s (1), "
           "got %g at %llu",
           v.v.f, (unsigned long long)v.index);
  TU_EXPECT_STATUS(clr_reduce_host(ctx, NULL, CLR_MINMAX, CLR_FLOAT, a, 7, &v),
                   CLR_OK, "minmax");
  TU_CHECK(v.v.f == -1 && v.index == 4 && v.max.f == 3 && v.max_index == 1,
           "minmax: -1 at 4, 3 at 1; got %g at %llu, %g at %llu", v.v.f,
           (unsigned long long)v.index, v.max.f,
           (unsigned long long)v.max_index);
  float z[] = {0.0f, -0.0f, 0.0f, -0.0f};
  clr_reduce_host(ctx, NULL, CLR_ARGMIN, CLR_FLOAT, z, 4, &v);
  TU_CHECK(v.index == 1 && signbit(v.v.f), "argmin of zeros: -0 at 1");
  clr_reduce_host(ctx, NULL, CLR_ARGMAX, CLR_FLOAT, z, 4, &v);
  TU_CHECK(v.index == 0 && !signbit(v.v.f), "argmax of zeros: +0 at 0");
  float nan[] = {1, 5, NAN, 7, NAN, -INFINITY};
  for (int op = CLR_ARGMIN; op <= CLR_ARGMAX; op++) {
    clr_reduce_host(ctx, NULL, (clr_op)op, CLR_FLOAT, nan, 6, &v);
    TU_CHECK(isnan(v.v.f) && v.index == 2, "%s with NaN: the first NaN (2)",
             clr_op_name((clr_op)op));
  }
  float inf[] = {INFINITY, INFINITY, INFINITY};
  clr_reduce_host(ctx, NULL, CLR_ARGMIN, CLR_FLOAT, inf, 3, &v);
  TU_CHECK(isinf(v.v.f) && v.index == 0, "argmin of +inf only: index 0");
  int32_t lim[] = {5, INT32_MIN, 0, INT32_MIN, INT32_MAX, INT32_MAX};
  clr_reduce_host(ctx, NULL, CLR_MINMAX, CLR_INT, lim, 6, &v);
  TU_CHECK(v.v.i == INT32_MIN && v.index == 1 && v.max.i == INT32_MAX &&
               v.max_index == 4,
           "minmax of int limits: INT_MIN at 1, INT_MAX at 4");
  /* BLAS i_amax: the first largest |x|. */
  double d[] = {1.5, -4.0, 2.0, 4.0, -0.5};
  clr_options o = map_options(CLR_MAP_ABS, NULL);
  if (tu_type_available(CLR_DOUBLE)) {
    clr_reduce_host(ctx, &o, CLR_ARGMAX, CLR_DOUBLE, d, 5, &v);
    TU_CHECK(v.v.d == 4.0 && v.index == 1, "i_amax: |-4| at 1");
  }
}

static void indexed_matrix(clr_context *ctx) {
  for (size_t t = 0; t < TU_N_TYPES; t++) {
    clr_type type = tu_types[t];
    if (!tu_type_available(type))
      continue;
    size_t es = clr_type_size(type);
    for (int kind = 0; kind < 3; kind++) {
      if (kind == 2 && !tu_is_float(type))
        continue;
      for (size_t si = 0; si < N_SIZES; si++) {
        size_t n = sizes[si];
        void *data = tu_xmalloc(n * es);
        fill_ties(type, kind, data, n, 11);
        for (size_t s = 0; s < N_SHAPES; s++) {
          /* Every shape on the small sizes, the default on all. */
          if (s > 0 && n > 4099)
            continue;
          clr_options o = shaped(&shapes[s]);
          for (int op = CLR_ARGMIN; op <= CLR_MINMAX; op++) {
            clr_value v;
            char what[160];
            snprintf(what, sizeof what, "%s %s n=%zu kind %d %s",
                     clr_op_name((clr_op)op), clr_type_name(type), n, kind,
                     shapes[s].name);
            clr_status st =
                clr_reduce_host(ctx, &o, (clr_op)op, type, data, n, &v);
            if (!TU_CHECK(st == CLR_OK, "%s: %s (%s)", what,
                          clr_status_name(st), clr_context_error(ctx)))
              continue;
            clr_reference ref;
            clr_ref_reduce_to((clr_op)op, type, type, data, n, &ref);
            check_against(what, &ref, &v, depth_of(ctx));
          }
        }
        free(data);
      }
    }
  }
}

/* Indices across streamed chunks (ctx streams 4 KiB chunks) and at a
 * buffer offset. */
static void indexed_chunks_and_buffers(clr_context *ctx) {
  size_t n = 100003;
  for (size_t t = 0; t < TU_N_TYPES; t++) {
    clr_type type = tu_types[t];
    if (!tu_type_available(type))
      continue;
    void *data = tu_xmalloc(n * clr_type_size(type));
    fill_ties(type, 1, data, n, 5);
    for (int op = CLR_ARGMIN; op <= CLR_MINMAX; op++) {
      clr_value v;
      clr_reference ref;
      char what[128];
      snprintf(what, sizeof what, "streamed %s %s", clr_op_name((clr_op)op),
               clr_type_name(type));
      clr_status st = clr_reduce_host(ctx, NULL, (clr_op)op, type, data, n, &v);
      clr_timing tm = CLR_TIMING_INIT;
      clr_last_timing(ctx, &tm);
      TU_CHECK(st == CLR_OK && tm.chunks > 1, "%s: %s, %zu chunks", what,
               clr_status_name(st), tm.chunks);
      clr_ref_reduce_to((clr_op)op, type, type, data, n, &ref);
      check_against(what, &ref, &v, 0);
    }
    /* A cl_mem range from element 3: indices count from there. */
    size_t es = clr_type_size(type);
    cl_mem buf =
        buffer_copy(ctx, CL_MEM_READ_ONLY, data, n * es, "clCreateBuffer");
    if (buf) {
      for (int op = CLR_ARGMIN; op <= CLR_MINMAX; op++) {
        clr_value v;
        clr_reference ref;
        clr_status st =
            clr_reduce_buffer(ctx, NULL, (clr_op)op, type, buf, 3, n - 3, &v);
        TU_CHECK(st == CLR_OK, "buffer %s", clr_op_name((clr_op)op));
        clr_ref_reduce_to((clr_op)op, type, type, (char *)data + 3 * es, n - 3,
                          &ref);
        check_against("buffer at offset 3", &ref, &v, 0);
      }
      clReleaseMemObject(buf);
    }
    free(data);
  }
}

/* ------------------------------------------------------------ maps */

/* Values of every sign and magnitude the type holds without overflow in
 * a square accumulated in the result type. */
static void fill_signed(clr_type t, void *data, size_t n, uint64_t seed) {
  tu_rng r = {tu_seed(seed, t, 7, n)};
  for (size_t i = 0; i < n; i++) {
    if (tu_is_float(t))
      tu_store_f(t, data, i, (tu_unit(&r) - 0.5) * 8.0);
    else if (t == CLR_UINT || t == CLR_ULONG)
      tu_store_bits(t, data, i, tu_next(&r));
    else
      tu_store_bits(t, data, i, tu_next(&r));
  }
}

static void builtin_maps(clr_context *ctx) {
  static const clr_op ops[] = {CLR_SUM, CLR_MAX, CLR_ARGMAX, CLR_MIN};
  for (size_t t = 0; t < TU_N_TYPES; t++) {
    clr_type type = tu_types[t];
    if (!tu_type_available(type))
      continue;
    for (int map = CLR_MAP_ABS; map <= CLR_MAP_SQUARE; map++) {
      for (size_t si = 0; si < N_SIZES; si++) {
        size_t n = sizes[si];
        void *data = tu_xmalloc(n * clr_type_size(type));
        fill_signed(type, data, n, 3);
        for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
          clr_options o = map_options((clr_map)map, NULL);
          clr_type rt = clr_options_result_type(&o, ops[oi], type);
          clr_value v;
          char what[160];
          snprintf(what, sizeof what, "%s of %s mapped by %s, n=%zu",
                   clr_op_name(ops[oi]), clr_type_name(type),
                   clr_map_name((clr_map)map), n);
          clr_status st = clr_reduce_host(ctx, &o, ops[oi], type, data, n, &v);
          if (!TU_CHECK(st == CLR_OK, "%s: %s (%s)", what, clr_status_name(st),
                        clr_context_error(ctx)))
            continue;
          clr_reference ref;
          if (!clr_ref_reduce_mapped((clr_map)map, ops[oi], type, rt, data,
                                     NULL, n, &ref))
            tu_die("out of host memory");
          check_against(what, &ref, &v, depth_of(ctx));
        }
        free(data);
      }
    }
  }
}

/* Expression maps against loops written here. */
static void expression_maps(clr_context *ctx, clr_context *chunked) {
  size_t n = 100003;
  float *x = tu_xmalloc(n * sizeof *x);
  int32_t *k = tu_xmalloc(n * sizeof *k);
  tu_rng r = {tu_seed(1, 2, 3, 4)};
  for (size_t i = 0; i < n; i++) {
    x[i] = (float)tu_unit(&r);
    k[i] = (int32_t)(tu_next(&r) % 2001) - 1000;
  }
  clr_context *ctxs[2] = {ctx, chunked};
  for (int c = 0; c < 2; c++) {
    for (size_t si = 0; si < N_SIZES; si++) {
      size_t m = sizes[si];
      clr_options o;
      clr_value v;
      o = map_options(CLR_MAP_EXPR, NULL);
      /* A count, accumulated in long. */
      o.map_expr = "x > 0.5f";
      o.accumulate_in = CLR_LONG;
      int64_t count = 0;
      for (size_t i = 0; i < m; i++)
        count += x[i] > 0.5f;
      clr_status st =
          clr_reduce_host(ctxs[c], &o, CLR_SUM, CLR_FLOAT, x, m, &v);
      TU_CHECK(st == CLR_OK && v.type == CLR_LONG && v.v.l == count,
               "count x > 0.5f, n=%zu ctx %d: %lld, want %lld", m, c,
               (long long)v.v.l, (long long)count);
      /* The index: elements whose index is a multiple of 7 (across
       * chunks in the chunked context). */
      o.map_expr = "(i % 7 == 0) ? (long)x : 0L";
      int64_t want = 0;
      for (size_t i = 0; i < m; i += 7)
        want += k[i];
      st = clr_reduce_host(ctxs[c], &o, CLR_SUM, CLR_INT, k, m, &v);
      TU_CHECK(st == CLR_OK && v.v.l == want,
               "sum of every 7th int by index, n=%zu ctx %d: %lld, want %lld",
               m, c, (long long)v.v.l, (long long)want);
      /* and / or of a float test; max of an integer expression. */
      o.accumulate_in = CLR_TYPE_DEFAULT;
      o.map_expr = "x >= 0.0f && x < 1.0f";
      st = clr_reduce_host(ctxs[c], &o, CLR_AND, CLR_FLOAT, x, m, &v);
      TU_CHECK(st == CLR_OK && v.v.i == 1, "and of x in [0, 1), n=%zu", m);
      o.map_expr = "x > 0.999f";
      int any = 0;
      for (size_t i = 0; i < m; i++)
        any |= x[i] > 0.999f;
      st = clr_reduce_host(ctxs[c], &o, CLR_OR, CLR_FLOAT, x, m, &v);
      TU_CHECK(st == CLR_OK && v.v.i == any, "or of x > 0.999f, n=%zu", m);
      o.map_expr = "abs(x - 17)";
      int32_t mx = 0;
      size_t at = 0;
      for (size_t i = 0; i < m; i++) {
        int32_t d = k[i] > 17 ? k[i] - 17 : 17 - k[i];
        if (d > mx || i == 0) {
          mx = d;
          at = i;
        }
      }
      st = clr_reduce_host(ctxs[c], &o, CLR_ARGMAX, CLR_INT, k, m, &v);
      TU_CHECK(st == CLR_OK && v.v.i == mx && v.index == at,
               "argmax |k - 17|, n=%zu: %d at %llu, want %d at %zu", m, v.v.i,
               (unsigned long long)v.index, mx, at);
    }
  }
  free(x);
  free(k);
}

/* ------------------------------------------------------------ dot */

static void dot_products(clr_context *ctx, clr_context *chunked) {
  for (size_t t = 0; t < TU_N_TYPES; t++) {
    clr_type type = tu_types[t];
    if (!tu_type_available(type))
      continue;
    size_t es = clr_type_size(type);
    for (size_t si = 0; si < N_SIZES; si++) {
      size_t n = sizes[si];
      void *x = tu_xmalloc(n * es), *y = tu_xmalloc(n * es);
      fill_signed(type, x, n, 21);
      fill_signed(type, y, n, 22);
      clr_type rt = clr_options_result_type(NULL, CLR_SUM, type);
      clr_reference ref;
      if (!clr_ref_reduce_mapped(CLR_MAP_NONE, CLR_SUM, type, rt, x, y, n,
                                 &ref))
        tu_die("out of host memory");
      char what[128];
      for (size_t s = 0; s < N_SHAPES; s++) {
        if (s > 0 && n > 4099)
          continue;
        clr_options o = shaped(&shapes[s]);
        clr_value v;
        snprintf(what, sizeof what, "dot %s n=%zu %s", clr_type_name(type), n,
                 shapes[s].name);
        clr_status st = clr_dot_host(ctx, &o, type, x, y, n, &v);
        if (TU_CHECK(st == CLR_OK, "%s: %s (%s)", what, clr_status_name(st),
                     clr_context_error(ctx)))
          check_against(what, &ref, &v, depth_of(ctx));
      }
      if (n >= 4099) { /* streamed: both arrays chunk by chunk */
        clr_value v;
        snprintf(what, sizeof what, "streamed dot %s n=%zu",
                 clr_type_name(type), n);
        if (TU_CHECK(clr_dot_host(chunked, NULL, type, x, y, n, &v) == CLR_OK,
                     "%s", what))
          check_against(what, &ref, &v, depth_of(chunked));
      }
      if (n > 3) { /* two cl_mem at different offsets */
        cl_int e1, e2;
        cl_context cl = clr_context_cl_context(ctx);
        unsigned char *xb = tu_xmalloc((n + 5) * es);
        unsigned char *yb = tu_xmalloc((n + 2) * es);
        memcpy(xb + 5 * es, x, n * es);
        memcpy(yb + 2 * es, y, n * es);
        cl_mem bx = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                   (n + 5) * es, xb, &e1);
        cl_mem by = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                   (n + 2) * es, yb, &e2);
        clr_value v;
        snprintf(what, sizeof what, "buffer dot %s n=%zu", clr_type_name(type),
                 n);
        if (TU_CHECK(e1 == CL_SUCCESS && e2 == CL_SUCCESS, "buffers") &&
            TU_CHECK(clr_dot_buffer(ctx, NULL, type, bx, 5, by, 2, n, &v) ==
                         CLR_OK,
                     "%s: %s", what, clr_context_error(ctx)))
          check_against(what, &ref, &v, depth_of(ctx));
        TU_EXPECT_STATUS(clr_dot_buffer(ctx, NULL, type, bx, 6, by, 2, n, &v),
                         CLR_ERR_INVALID_ARGUMENT, "dot range past x's end");
        clReleaseMemObject(bx);
        clReleaseMemObject(by);
        free(xb);
        free(yb);
      }
      free(x);
      free(y);
    }
  }
  /* An expression of x, y and i: the L1 distance of the even elements. */
  size_t n = 65537;
  float *x = tu_xmalloc(n * sizeof *x), *y = tu_xmalloc(n * sizeof *y);
  double want = 0;
  for (size_t i = 0; i < n; i++) {
    x[i] = (float)(i % 101) * 0.25f;
    y[i] = (float)(i % 37);
    if (i % 2 == 0)
      want += fabs((double)x[i] - y[i]);
  }
  clr_options o = map_options(CLR_MAP_EXPR, "i % 2 == 0 ? fabs(x - y) : 0.0f");
  o.accumulate_in = CLR_DOUBLE;
  clr_value v;
  clr_status st = clr_dot_host(chunked, &o, CLR_FLOAT, x, y, n, &v);
  TU_CHECK(st == CLR_OK && v.v.d == want,
           "dot expression (exact in double): %.17g, want %.17g (%s)", v.v.d,
           want, clr_context_error(chunked));
  free(x);
  free(y);
}

/* ------------------------------------------------------------ mean */

static void means(clr_context *ctx, clr_context *chunked) {
  static const clr_type types[] = {CLR_FLOAT, CLR_DOUBLE, CLR_INT, CLR_UINT,
                                   CLR_HALF};
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    clr_type type = types[t];
    if (!tu_type_available(type))
      continue;
    for (size_t si = 0; si < N_SIZES; si++) {
      size_t n = sizes[si];
      void *x = tu_xmalloc(n * clr_type_size(type));
      fill_signed(type, x, n, 41);
      if (type == CLR_INT || type == CLR_UINT) /* 1 .. n: the mean is known */
        for (size_t i = 0; i < n; i++)
          tu_store_i(type, x, i, (int64_t)i + 1);
      clr_value v;
      clr_reference ref;
      clr_type rt = clr_result_type(CLR_MEAN, type, 0);
      clr_ref_reduce_to(CLR_MEAN, type, rt, x, n, &ref);
      char what[96];
      snprintf(what, sizeof what, "mean of %s n=%zu", clr_type_name(type), n);
      clr_context *c = n >= 4099 ? chunked : ctx;
      if (TU_CHECK(clr_reduce_host(c, NULL, CLR_MEAN, type, x, n, &v) == CLR_OK,
                   "%s: %s", what, clr_context_error(c))) {
        TU_CHECK(v.type == rt, "%s: result type %s", what,
                 clr_type_name(v.type));
        check_against(what, &ref, &v, depth_of(c));
        if (type == CLR_INT || type == CLR_UINT)
          TU_CHECK(v.v.d == ((double)n + 1.0) / 2.0,
                   "%s: the mean of 1..n is (n + 1) / 2, got %.17g", what,
                   v.v.d);
      }
      free(x);
    }
  }
  int64_t l[3] = {1, 2, 3};
  clr_value v;
  TU_EXPECT_STATUS(clr_reduce_host(ctx, NULL, CLR_MEAN, CLR_LONG, l, 3, &v),
                   CLR_ERR_UNSUPPORTED, "mean of longs");
  clr_options e = map_options(CLR_MAP_EXPR, "x");
  TU_EXPECT_STATUS(clr_reduce_host(ctx, &e, CLR_MEAN, CLR_LONG, l, 3, &v),
                   CLR_ERR_UNSUPPORTED, "mean of longs, through an expression");
  TU_CHECK(clr_op_supports(CLR_MEAN, CLR_ULONG) == CLR_ERR_UNSUPPORTED,
           "clr_op_supports(mean, ulong)");
  float f[4] = {1, 2, 3, 6}, out[4];
  clr_options o;
  clr_options_init(&o);
  o.accumulate_in = CLR_DOUBLE;
  TU_CHECK(clr_reduce_host(ctx, &o, CLR_MEAN, CLR_FLOAT, f, 4, &v) == CLR_OK &&
               v.type == CLR_DOUBLE && v.v.d == 3.0,
           "mean of floats in double: 3");
  int32_t k[2] = {INT32_MAX, INT32_MAX};
  o.accumulate_in = CLR_INT;
  TU_EXPECT_STATUS(clr_reduce_host(ctx, &o, CLR_MEAN, CLR_INT, k, 2, &v),
                   CLR_ERR_UNSUPPORTED, "mean of ints summed in int");
  o.accumulate_in = CLR_TYPE_DEFAULT;
  o.narrow_accumulator = 1;
  TU_EXPECT_STATUS(clr_reduce_host(ctx, &o, CLR_MEAN, CLR_INT, k, 2, &v),
                   CLR_ERR_UNSUPPORTED, "narrow mean of ints");
  o.narrow_accumulator = 0;
  TU_CHECK(clr_reduce_host(ctx, &o, CLR_MEAN, CLR_INT, k, 2, &v) == CLR_OK &&
               v.v.d == (double)INT32_MAX,
           "mean of two INT32_MAX: no wrap");
  o.kernel = CLR_SCAN_KOGGE_STONE;
  TU_EXPECT_STATUS(clr_scan_host(ctx, &o, CLR_MEAN, CLR_FLOAT, f, out, 4),
                   CLR_ERR_UNSUPPORTED, "mean scan");
  cl_mem b = buffer_copy(ctx, CL_MEM_READ_WRITE, f, sizeof f, "buffer");
  if (b) {
    TU_CHECK(clr_reduce_buffer(ctx, NULL, CLR_MEAN, CLR_FLOAT, b, 1, 3, &v) ==
                     CLR_OK &&
                 v.v.f == 11.0f / 3.0f,
             "mean of a cl_mem range: 11 / 3");
    /* enqueued: divided on the device, the blocking call's bits */
    cl_mem r = buffer_copy(ctx, CL_MEM_READ_WRITE, f, sizeof f, "result");
    cl_event ev = NULL;
    float got = 0;
    clr_status s = r ? clr_reduce_buffer_async(ctx, NULL, CLR_MEAN, CLR_FLOAT,
                                               b, 1, 3, r, 0, 0, NULL, &ev)
                     : CLR_ERR_OPENCL;
    if (s == CLR_OK && ev)
      clWaitForEvents(1, &ev);
    if (s == CLR_OK)
      clEnqueueReadBuffer(clr_context_queue(ctx), r, CL_TRUE, 0, sizeof got,
                          &got, 0, NULL, NULL);
    TU_CHECK(s == CLR_OK && got == 11.0f / 3.0f,
             "async mean of a cl_mem range: %s, %.9g (want 11 / 3)",
             clr_status_name(s), (double)got);
    if (ev)
      clReleaseEvent(ev);
    if (r)
      clReleaseMemObject(r);
    clReleaseMemObject(b);
  }
}

/* ------------------------------------------------------------ half */

/* The CPU's binary16 codec (src/check/half.c) against values known by
 * hand; every half round-trips. */
static void half_codec(void) {
  static const struct {
    float f;
    uint16_t h;
  } known[] = {{1.0f, 0x3c00},
               {-2.0f, 0xc000},
               {65504.0f, 0x7bff},
               {65520.0f, 0x7c00}, /* ties up: inf */
               {0x1p-24f, 0x0001},
               {0x1p-25f, 0x0000}, /* tie to even */
               {0x1.8p-25f, 0x0001},
               {0x1p-14f, 0x0400},
               {1.0f + 0x1p-11f, 0x3c00}, /* tie to even */
               {1.0f + 0x3p-11f, 0x3c02},
               {-0.0f, 0x8000},
               {INFINITY, 0x7c00},
               {0.1f, 0x2e66}};
  for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
    TU_CHECK(clr_half_from_float(known[k].f) == known[k].h,
             "half of %a is %04x, got %04x", (double)known[k].f, known[k].h,
             clr_half_from_float(known[k].f));
  size_t bad = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    float f = clr_half_to_float((uint16_t)h);
    if (isnan(f) ? !((h & 0x7c00) == 0x7c00 && (h & 0x3ff))
                 : clr_half_from_float(f) != h)
      bad++;
  }
  TU_CHECK(bad == 0, "every half round-trips through float (%zu do not)", bad);
}

/* Half data: every reduction, against the CPU decoding the bits itself. */
static void half_data(clr_context *ctx, clr_context *chunked) {
  static const clr_op ops[] = {CLR_SUM,    CLR_PROD,   CLR_MIN,   CLR_MAX,
                               CLR_ARGMIN, CLR_ARGMAX, CLR_MINMAX};
  for (int kind = 0; kind < 3; kind++)
    for (size_t si = 0; si < N_SIZES; si++) {
      size_t n = sizes[si];
      uint16_t *h = tu_xmalloc(n * sizeof *h);
      tu_rng r = {tu_seed(9, (uint64_t)kind, n, 1)};
      for (size_t i = 0; i < n; i++) {
        if (kind == 0) /* [-1, 1): sums */
          h[i] = clr_half_from_float((float)(2.0 * tu_unit(&r) - 1.0));
        else if (kind == 1) /* any bits but NaN and inf: denormals too */
          do
            h[i] = (uint16_t)tu_next(&r);
          while ((h[i] & 0x7c00) == 0x7c00);
        else /* ties, signed zeros, infinities and NaN */
          h[i] = (uint16_t[]){0x0000, 0x8000, 0x3c00, 0xbc00,
                              0x7c00, 0xfc00, 0x7e00, 0x0001}[tu_below(
              &r, kind == 2 && n > 64 ? 8 : 7)];
      }
      for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
        if (ops[oi] == CLR_PROD && kind != 0)
          continue;
        for (size_t s = 0; s < N_SHAPES; s++) {
          if (s > 0 && n > 4099)
            continue;
          clr_options o = shaped(&shapes[s]);
          for (int acc = 0; acc < 2; acc++) {
            if (acc && (!tu_type_available(CLR_DOUBLE) || s > 0))
              continue;
            o.accumulate_in = acc ? CLR_DOUBLE : CLR_TYPE_DEFAULT;
            clr_value v;
            char what[160];
            snprintf(what, sizeof what, "half %s kind %d n=%zu %s%s",
                     clr_op_name(ops[oi]), kind, n, shapes[s].name,
                     acc ? " in double" : "");
            clr_status st =
                clr_reduce_host(ctx, &o, ops[oi], CLR_HALF, h, n, &v);
            if (!TU_CHECK(st == CLR_OK, "%s: %s (%s)", what,
                          clr_status_name(st), clr_context_error(ctx)))
              continue;
            clr_type rt = acc ? CLR_DOUBLE : CLR_FLOAT;
            TU_CHECK(v.type == rt, "%s: result type %s", what,
                     clr_type_name(v.type));
            clr_reference ref;
            clr_ref_reduce_to(ops[oi], CLR_HALF, rt, h, n, &ref);
            check_against(what, &ref, &v, depth_of(ctx));
          }
        }
      }
      /* Sum of squares and a dot product of halves; streamed too. */
      clr_options o = map_options(CLR_MAP_SQUARE, NULL);
      clr_value v;
      clr_reference ref;
      if (!clr_ref_reduce_mapped(CLR_MAP_SQUARE, CLR_SUM, CLR_HALF, CLR_FLOAT,
                                 h, NULL, n, &ref))
        tu_die("out of host memory");
      if (kind == 0 && TU_CHECK(clr_reduce_host(chunked, &o, CLR_SUM, CLR_HALF,
                                                h, n, &v) == CLR_OK,
                                "streamed half sum of squares n=%zu", n))
        check_against("streamed half sum of squares", &ref, &v,
                      depth_of(chunked));
      if (!clr_ref_reduce_mapped(CLR_MAP_NONE, CLR_SUM, CLR_HALF, CLR_FLOAT, h,
                                 h, n, &ref))
        tu_die("out of host memory");
      if (kind == 0 &&
          TU_CHECK(clr_dot_host(ctx, NULL, CLR_HALF, h, h, n, &v) == CLR_OK,
                   "half dot n=%zu", n))
        check_against("half dot", &ref, &v, depth_of(ctx));
      free(h);
    }
  /* Not exact, no and / or without an expression. */
  uint16_t h[4] = {0x3c00, 0x4000, 0, 0x3c00};
  clr_value v;
  clr_options o = exact_options();
  TU_EXPECT_STATUS(clr_reduce_host(ctx, &o, CLR_SUM, CLR_HALF, h, 4, &v),
                   CLR_ERR_UNSUPPORTED, "exact half sum");
  clr_options_init(&o);
  TU_EXPECT_STATUS(clr_reduce_host(ctx, &o, CLR_AND, CLR_HALF, h, 4, &v),
                   CLR_ERR_UNSUPPORTED, "and of halves");
  o = map_options(CLR_MAP_EXPR, "x != 0.0f");
  TU_CHECK(clr_reduce_host(ctx, &o, CLR_AND, CLR_HALF, h, 4, &v) == CLR_OK &&
               v.v.i == 0,
           "and of halves by expression: one is zero");
  o.accumulate_in = CLR_HALF;
  o.map = CLR_MAP_NONE;
  TU_EXPECT_STATUS(clr_reduce_host(ctx, &o, CLR_SUM, CLR_HALF, h, 4, &v),
                   CLR_ERR_UNSUPPORTED, "accumulating in half");
  /* half is a storage type: no accumulator, with a map expression either
   * (which once summed 16-bit integers modulo 2^16), on every entry */
  float xf[4] = {1, 2, 3, 4};
  uint64_t offs[3] = {0, 2, 4}, ranges[4] = {0, 4, 1, 2};
  float res[2];
  o = map_options(CLR_MAP_EXPR, "x");
  o.accumulate_in = CLR_HALF;
  TU_EXPECT_STATUS(clr_reduce_host(ctx, &o, CLR_SUM, CLR_FLOAT, xf, 4, &v),
                   CLR_ERR_UNSUPPORTED, "map accumulated in half");
  TU_EXPECT_STATUS(clr_reduce_host(ctx, &o, CLR_SUM, CLR_HALF, h, 4, &v),
                   CLR_ERR_UNSUPPORTED, "half map accumulated in half");
  TU_EXPECT_STATUS(clr_dot_host(ctx, &o, CLR_FLOAT, xf, xf, 4, &v),
                   CLR_ERR_UNSUPPORTED, "dot by expression in half");
  TU_EXPECT_STATUS(clr_reduce_segments_host(ctx, &o, CLR_MEAN, CLR_FLOAT, xf, 4,
                                            offs, 2, res),
                   CLR_ERR_UNSUPPORTED, "segment means in half");
  TU_EXPECT_STATUS(clr_reduce_ranges_host(ctx, &o, CLR_SUM, CLR_FLOAT, xf, 4,
                                          ranges, 2, res),
                   CLR_ERR_UNSUPPORTED, "range sums in half");
}

/* ------------------------------------------------------------ scans */

/* Scans written in another type than they read (clr_scan_output_type):
 * half data into float, and with accumulate_in int into long, uint into
 * ulong, float into double, half into double; every scan kernel, host
 * arrays (also streamed in 4 KiB chunks, the carry crossing them) and
 * cl_mem ranges, against the CPU scan in the output type. */
static void wide_scans(clr_context *ctx, clr_context *chunked) {
  static const struct {
    clr_type in, out;
  } pairs[] = {{CLR_HALF, CLR_FLOAT},
               {CLR_INT, CLR_LONG},
               {CLR_UINT, CLR_ULONG},
               {CLR_FLOAT, CLR_DOUBLE},
               {CLR_HALF, CLR_DOUBLE}};
  static const clr_kernel kernels[] = {CLR_SCAN_KOGGE_STONE,
                                       CLR_SCAN_KOGGE_STONE_DB,
                                       CLR_SCAN_BRENT_KUNG, CLR_SCAN_DECOUPLED};
  static const size_t scan_sizes[] = {1, 3, 257, 4099, 65537};
  static const clr_op ops[] = {CLR_SUM, CLR_MIN, CLR_MAX, CLR_PROD};
  for (size_t pi = 0; pi < sizeof pairs / sizeof pairs[0]; pi++) {
    clr_type in = pairs[pi].in, out = pairs[pi].out;
    if (!tu_type_available(out))
      continue;
    for (size_t si = 0; si < sizeof scan_sizes / sizeof scan_sizes[0]; si++) {
      size_t n = scan_sizes[si];
      void *x = tu_xmalloc(n * clr_type_size(in));
      void *y = tu_xmalloc(n * clr_type_size(out));
      for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
        clr_op op = ops[oi];
        /* Sums past the input type's range: every int is INT32_MAX - i,
         * every uint UINT32_MAX - i; floats and halves of any sign. */
        tu_rng r = {tu_seed(pi, si, oi, 3)};
        for (size_t i = 0; i < n; i++) {
          if (in == CLR_INT)
            tu_store_i(in, x, i,
                       op == CLR_PROD ? 1 + (int64_t)(i % 3 == 0)
                                      : INT32_MAX - (int64_t)(i % 7));
          else if (in == CLR_UINT)
            tu_store_bits(in, x, i,
                          op == CLR_PROD ? 1 + (i % 3 == 0)
                                         : UINT32_MAX - i % 7);
          else
            tu_store_f(in, x, i,
                       op == CLR_PROD ? 1.0 + (tu_unit(&r) - 0.5) / 64.0
                                      : 2.0 * tu_unit(&r) - 1.0);
        }
        for (size_t ki = 0; ki < sizeof kernels / sizeof kernels[0]; ki++) {
          for (int excl = 0; excl <= 1; excl++) {
            if (excl && (ki != 3 || n < 257))
              continue; /* exclusive: the decoupled scan, two sizes */
            clr_options o;
            clr_options_init(&o);
            o.kernel = kernels[ki];
            o.exclusive = excl;
            if (out != clr_scan_output_type(NULL, in))
              o.accumulate_in = out;
            TU_CHECK(clr_scan_output_type(&o, in) == out, "output type");
            clr_context *c = n == 65537 && ki == 0 ? chunked : ctx;
            char what[160];
            snprintf(what, sizeof what, "%s%s scan of %s into %s n=%zu%s",
                     clr_kernel_name(kernels[ki]), excl ? " exclusive" : "",
                     clr_type_name(in), clr_type_name(out), n,
                     c == chunked ? " (4 KiB chunks)" : "");
            clr_status st = clr_scan_host(c, &o, op, in, x, y, n);
            if (!TU_CHECK(st == CLR_OK, "%s %s: %s (%s)", what, clr_op_name(op),
                          clr_status_name(st), clr_context_error(c)))
              continue;
            clr_timing tm = CLR_TIMING_INIT;
            clr_last_timing(c, &tm);
            clr_scan_check chk;
            clr_ref_scan_check_to(op, in, out, excl, x, y, n, tm.error_depth, 0,
                                  &chk);
            TU_CHECK(chk.ok, "%s %s: %zu elements wrong, first at %zu", what,
                     clr_op_name(op), chk.n_bad, chk.worst_index);
          }
        }
      }
      free(x);
      free(y);
    }
  }
  /* cl_mem ranges: int into long at offsets, with a carry-in of the
   * output type. */
  size_t n = 5000;
  int32_t *x = tu_xmalloc(n * sizeof *x);
  int64_t *want = tu_xmalloc(n * sizeof *want);
  int64_t carry = (int64_t)1 << 40, run = carry;
  for (size_t i = 0; i < n; i++) {
    x[i] = INT32_MAX - (int32_t)(i % 5);
    run += x[i];
    want[i] = run;
  }
  cl_int e1, e2;
  cl_context cl = clr_context_cl_context(ctx);
  cl_mem bin = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                              n * sizeof *x, x, &e1);
  cl_mem bout = clCreateBuffer(cl, CL_MEM_READ_WRITE, (n + 8) * sizeof(int64_t),
                               NULL, &e2);
  if (TU_CHECK(e1 == CL_SUCCESS && e2 == CL_SUCCESS, "scan buffers")) {
    for (size_t ki = 0; ki < 4; ki++) {
      clr_options o;
      clr_options_init(&o);
      o.kernel = kernels[ki];
      o.accumulate_in = CLR_LONG;
      o.carry_in = &carry;
      int64_t *got = tu_xmalloc(n * sizeof *got);
      clr_status st =
          clr_scan_buffer_range(ctx, &o, CLR_SUM, CLR_INT, bin, 0, bout, 8, n);
      if (TU_CHECK(st == CLR_OK, "%s int into long, cl_mem out at 8: %s",
                   clr_kernel_name(kernels[ki]), clr_context_error(ctx))) {
        clEnqueueReadBuffer(clr_context_queue(ctx), bout, CL_TRUE,
                            8 * sizeof(int64_t), n * sizeof *got, got, 0, NULL,
                            NULL);
        TU_CHECK(memcmp(got, want, n * sizeof *got) == 0,
                 "%s int into long from a carry of 2^40: exact, no wrap",
                 clr_kernel_name(kernels[ki]));
      }
      free(got);
      /* In place cannot widen; the output must hold the wider type. */
      TU_EXPECT_STATUS(
          clr_scan_buffer(ctx, &o, CLR_SUM, CLR_INT, bout, bout, n),
          CLR_ERR_INVALID_ARGUMENT, "a widening scan in place");
      TU_EXPECT_STATUS(
          clr_scan_buffer_range(ctx, &o, CLR_SUM, CLR_INT, bin, 0, bin, 0, n),
          CLR_ERR_INVALID_ARGUMENT, "a widening scan into its own input");
      TU_EXPECT_STATUS(
          clr_scan_buffer_range(ctx, &o, CLR_SUM, CLR_INT, bin, 0, bout, 9, n),
          CLR_ERR_INVALID_ARGUMENT, "a long output past the buffer's end");
    }
  }
  if (bin)
    clReleaseMemObject(bin);
  if (bout)
    clReleaseMemObject(bout);
  free(x);
  free(want);
  TU_CHECK(clr_scan_output_type(NULL, CLR_HALF) == CLR_FLOAT &&
               clr_scan_output_type(NULL, CLR_INT) == CLR_INT,
           "clr_scan_output_type defaults");
}

/* ------------------------------------------------------------ errors */

static void errors(clr_context *ctx) {
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  clr_value v;
  clr_options o;
  struct {
    const char *expr;
    clr_status want;
    int has_log;
  } bad[] = {
      {"x % 2", CLR_ERR_BUILD, 1}, /* whitelisted tokens, a type error */
      {"y", CLR_ERR_BUILD, 1},     /* y is a dot product's */
      {"x +", CLR_ERR_INVALID_ARGUMENT, 0},
      {"undefined_name * x", CLR_ERR_INVALID_ARGUMENT, 0},
      {"(<% while (i < 2) <% %> %>), x", CLR_ERR_INVALID_ARGUMENT, 0},
      {"x %: 1", CLR_ERR_INVALID_ARGUMENT, 0},
      {"x + sizeof(x)", CLR_ERR_INVALID_ARGUMENT, 0},
      {"x); } __kernel void evil(void) { (x", CLR_ERR_INVALID_ARGUMENT, 0},
      {"x; x", CLR_ERR_INVALID_ARGUMENT, 0},
      {"x // comment", CLR_ERR_INVALID_ARGUMENT, 0},
      {"x /* comment", CLR_ERR_INVALID_ARGUMENT, 0},
      {"#x", CLR_ERR_INVALID_ARGUMENT, 0},
      {"(x", CLR_ERR_INVALID_ARGUMENT, 0},
      {"x)", CLR_ERR_INVALID_ARGUMENT, 0},
      {"\"x\"", CLR_ERR_INVALID_ARGUMENT, 0},
      {"x\n", CLR_ERR_INVALID_ARGUMENT, 0},
      {"", CLR_ERR_INVALID_ARGUMENT, 0},
      {NULL, CLR_ERR_INVALID_ARGUMENT, 0},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    o = map_options(CLR_MAP_EXPR, bad[i].expr);
    clr_status st = clr_reduce_host(ctx, &o, CLR_SUM, CLR_FLOAT, x, 8, &v);
    TU_CHECK(st == bad[i].want, "expression '%s': %s, want %s",
             bad[i].expr ? bad[i].expr : "(null)", clr_status_name(st),
             clr_status_name(bad[i].want));
    if (bad[i].has_log)
      TU_CHECK(clr_context_build_log(ctx)[0] != '\0',
               "expression '%s': the build log is kept", bad[i].expr);
    TU_CHECK(clr_context_error(ctx)[0] != '\0', "expression '%s': a detail",
             bad[i].expr ? bad[i].expr : "(null)");
  }
  /* The context still works after them. */
  TU_CHECK(clr_reduce_host(ctx, NULL, CLR_ARGMAX, CLR_FLOAT, x, 8, &v) ==
                   CLR_OK &&
               v.index == 7,
           "argmax after the bad expressions");

  o = map_options(CLR_MAP_COUNT, NULL);
  TU_EXPECT_STATUS(clr_reduce_host(ctx, &o, CLR_SUM, CLR_FLOAT, x, 8, &v),
                   CLR_ERR_INVALID_ARGUMENT, "map that is no clr_map");
  o.map = CLR_MAP_SQUARE;
  o.kernel = CLR_REDUCE_SEQUENTIAL;
  TU_EXPECT_STATUS(clr_reduce_host(ctx, &o, CLR_SUM, CLR_FLOAT, x, 8, &v),
                   CLR_ERR_UNSUPPORTED, "map on a seed kernel");
  o.kernel = CLR_REDUCE_COARSE;
  o.exact = 1;
  TU_EXPECT_STATUS(clr_reduce_host(ctx, &o, CLR_SUM, CLR_FLOAT, x, 8, &v),
                   CLR_ERR_UNSUPPORTED, "map on an exact sum");
  o.exact = 0;
  o.kernel = CLR_KERNEL_DEFAULT; /* the tuned scan */
  float out[8];
  TU_EXPECT_STATUS(clr_scan_host(ctx, &o, CLR_SUM, CLR_FLOAT, x, out, 8),
                   CLR_ERR_UNSUPPORTED, "map on a scan");
  int32_t k[4] = {1, 0, 1, 1};
  TU_EXPECT_STATUS(clr_reduce_host(ctx, &o, CLR_AND, CLR_INT, k, 4, &v),
                   CLR_ERR_UNSUPPORTED, "square map on and");
  clr_options_init(&o);
  TU_EXPECT_STATUS(clr_reduce_host(ctx, &o, CLR_AND, CLR_FLOAT, x, 8, &v),
                   CLR_ERR_UNSUPPORTED, "and of floats without an expression");
  o.kernel = CLR_REDUCE_FIRST_ADD;
  TU_EXPECT_STATUS(clr_reduce_host(ctx, &o, CLR_ARGMIN, CLR_FLOAT, x, 8, &v),
                   CLR_ERR_UNSUPPORTED, "argmin on a seed kernel");
  TU_CHECK(clr_kernel_supports(CLR_REDUCE_FIRST_ADD, CLR_ARGMIN, CLR_FLOAT) ==
                   CLR_ERR_UNSUPPORTED &&
               clr_kernel_supports(CLR_REDUCE_COARSE, CLR_MINMAX, CLR_FLOAT) ==
                   CLR_OK &&
               clr_kernel_supports(CLR_SCAN_DECOUPLED, CLR_ARGMAX, CLR_INT) ==
                   CLR_ERR_UNSUPPORTED,
           "clr_kernel_supports knows the indexed ops");
  o.kernel = CLR_SCAN_KOGGE_STONE;
  TU_EXPECT_STATUS(clr_scan_host(ctx, &o, CLR_ARGMAX, CLR_FLOAT, x, out, 8),
                   CLR_ERR_UNSUPPORTED, "argmax scan");
  o = exact_options();
  TU_EXPECT_STATUS(clr_dot_host(ctx, &o, CLR_FLOAT, x, x, 8, &v),
                   CLR_ERR_UNSUPPORTED, "exact dot");
  o = map_options(CLR_MAP_ABS, NULL);
  TU_EXPECT_STATUS(clr_dot_host(ctx, &o, CLR_FLOAT, x, x, 8, &v),
                   CLR_ERR_UNSUPPORTED, "dot with a one-array map");
  TU_EXPECT_STATUS(clr_dot_host(ctx, NULL, CLR_FLOAT, x, NULL, 8, &v),
                   CLR_ERR_INVALID_ARGUMENT, "dot without y");
  TU_EXPECT_STATUS(clr_dot_host(ctx, NULL, CLR_FLOAT, x, x, 0, &v),
                   CLR_ERR_INVALID_ARGUMENT, "dot of 0 elements");
  TU_EXPECT_STATUS(clr_dot_host(NULL, NULL, CLR_FLOAT, x, x, 8, &v),
                   CLR_ERR_INVALID_ARGUMENT, "dot without a context");
  /* The asynchronous forms.  in is the caller's buffer x. */
  cl_mem in = buffer_copy(ctx, CL_MEM_READ_WRITE, x, sizeof x, "buffer");
  if (in) {
    cl_int err;
    /* argmin / argmax / minmax write a record: min, max, their indices. */
    TU_CHECK(clr_result_bytes(NULL, CLR_MINMAX, CLR_FLOAT) == 24 &&
                 clr_result_bytes(NULL, CLR_ARGMAX, CLR_DOUBLE) == 32 &&
                 clr_result_bytes(NULL, CLR_SUM, CLR_INT) == 8 &&
                 clr_result_bytes(NULL, CLR_OP_COUNT, CLR_INT) == 0,
             "clr_result_bytes");
    cl_mem rec = clCreateBuffer(clr_context_cl_context(ctx), CL_MEM_READ_WRITE,
                                2 * 24, NULL, &err);
    float xs[8] = {4, 9, -2, 9, 0, -2, 7, 1};
    cl_event ev = NULL;
    clEnqueueWriteBuffer(clr_context_queue(ctx), in, CL_TRUE, 0, sizeof xs, xs,
                         0, NULL, NULL);
    if (TU_CHECK(err == CL_SUCCESS, "record buffer") &&
        TU_CHECK(clr_reduce_buffer_async(ctx, NULL, CLR_MINMAX, CLR_FLOAT, in,
                                         0, 8, rec, 1, 0, NULL, &ev) == CLR_OK,
                 "async minmax: %s", clr_context_error(ctx)) &&
        TU_CHECK(clWaitForEvents(1, &ev) == CL_SUCCESS, "wait")) {
      unsigned char r[24];
      float lo, hi;
      uint64_t ilo, ihi;
      clEnqueueReadBuffer(clr_context_queue(ctx), rec, CL_TRUE, 24, 24, r, 0,
                          NULL, NULL);
      memcpy(&lo, r, 4);
      memcpy(&hi, r + 4, 4);
      memcpy(&ilo, r + 8, 8);
      memcpy(&ihi, r + 16, 8);
      TU_CHECK(lo == -2 && ilo == 2 && hi == 9 && ihi == 1,
               "async minmax record: -2 at 2, 9 at 1; got %g at %llu, %g at "
               "%llu",
               lo, (unsigned long long)ilo, hi, (unsigned long long)ihi);
    }
    if (ev)
      clReleaseEvent(ev);
    TU_EXPECT_STATUS(clr_reduce_buffer_async(ctx, NULL, CLR_ARGMAX, CLR_FLOAT,
                                             in, 0, 8, rec, 2, 0, NULL, NULL),
                     CLR_ERR_INVALID_ARGUMENT,
                     "async argmax past the record buffer");
    if (rec)
      clReleaseMemObject(rec);
    clEnqueueWriteBuffer(clr_context_queue(ctx), in, CL_TRUE, 0, sizeof x, x, 0,
                         NULL, NULL);
    /* A map works asynchronously: the sum of squares into element 0. */
    o = map_options(CLR_MAP_SQUARE, NULL);
    ev = NULL;
    float got = 0;
    if (TU_CHECK(clr_reduce_buffer_async(ctx, &o, CLR_SUM, CLR_FLOAT, in, 0, 8,
                                         in, 0, 0, NULL, &ev) == CLR_OK,
                 "async sum of squares: %s", clr_context_error(ctx)) &&
        TU_CHECK(clWaitForEvents(1, &ev) == CL_SUCCESS, "wait")) {
      clEnqueueReadBuffer(clr_context_queue(ctx), in, CL_TRUE, 0, sizeof got,
                          &got, 0, NULL, NULL);
      TU_CHECK(got == 204.0f, "async sum of squares 1..8 = 204, got %g", got);
    }
    if (ev)
      clReleaseEvent(ev);
    clReleaseMemObject(in);
  }
}

int main(int argc, char **argv) {
  const char *part = tu_arg_value(argc, argv, "--part");
  if (!part)
    part = "all";
  int all = strcmp(part, "all") == 0;
  clr_context *ctx = tu_context();
  clr_context_config cfg = CLR_CONTEXT_CONFIG_INIT;
  clr_context *chunked = NULL;
  char detail[256];
  cfg.max_chunk_bytes = 4096;
  if (clr_context_create(&cfg, &chunked, detail, sizeof detail) != CLR_OK)
    tu_die("chunked context: %s", detail);
  if (all || strcmp(part, "indexed") == 0) {
    tu_section("indexed: known answers");
    indexed_known(ctx);
    tu_section("indexed: types x ties x sizes x shapes");
    indexed_matrix(ctx);
    tu_section("indexed: streamed and cl_mem ranges");
    indexed_chunks_and_buffers(chunked);
  }
  if (all || strcmp(part, "maps") == 0) {
    tu_section("maps: abs and square");
    builtin_maps(ctx);
    tu_section("maps: expressions");
    expression_maps(ctx, chunked);
  }
  if (all || strcmp(part, "dot") == 0) {
    tu_section("dot products");
    dot_products(ctx, chunked);
    tu_section("means");
    means(ctx, chunked);
  }
  if (all || strcmp(part, "half") == 0) {
    tu_section("half: the CPU's codec");
    half_codec();
    tu_section("half data");
    half_data(ctx, chunked);
  }
  if (all || strcmp(part, "scan") == 0) {
    tu_section("scans into a wider type");
    wide_scans(ctx, chunked);
  }
  if (all || strcmp(part, "errors") == 0) {
    tu_section("errors");
    errors(ctx);
  }
  clr_context_release(chunked);
  clr_context_release(ctx);
  return tu_finish("test_transform");
}
