/* The kernel x operation x type x size matrix against the CPU reference.
 *
 *   test_reduce [--kernel=NAME] [--set=matrix|big]
 *
 * --set=matrix (default): every op x type for the kernel(s), over the sizes
 *   1, 2, 3, 7, the default work-group size W -1/+0/+1 (and 2W, and the
 *   elements one work-group covers -1/+0/+1, and twice that), 64 / 128 /
 *   256 / 512 -1/+0/+1, primes 97, 1009, 65537 and 2^k+-1 up to 2^20+1,
 *   with several data variants (random, exact-in-any-order, neutral,
 *   dominant element planted last or in the middle).  and / or on float /
 *   double must be CLR_ERR_UNSUPPORTED.  (Explicit work-group sizes, with
 *   n around them, are test_options --part=wg.)
 * --set=big: 3,000,001 elements: sum of every type, and min / max of float
 *   and int, with every kernel (or the one given).
 * --set=small: sizes up to 1031, every op and type, and the coarse kernel
 *   with vector widths 1, 4, 16 in both layouts (for Oclgrind and for
 *   POCL_MAX_WORK_GROUP_SIZE=16).
 * --set=single-launch: the coarse kernel folding its partials in its last
 *   work-group (tuning reduce.single_launch), every op and type.
 * --set=stream: arrays larger than one device allocation (streamed in
 *   chunks); needs POCL_MEMORY_LIMIT=1.
 *
 * Scans will get their own program (test_scan.c) reusing test_util.h. */
#include "test_util.h"

static void add_size(size_t *sizes, size_t *count, size_t cap, size_t n) {
  if (n == 0 || *count >= cap)
    return;
  for (size_t i = 0; i < *count; i++)
    if (sizes[i] == n)
      return;
  sizes[(*count)++] = n;
}

static int cmp_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return x < y ? -1 : x > y;
}

static void add_around(size_t *sizes, size_t *count, size_t cap, size_t n) {
  add_size(sizes, count, cap, n - 1);
  add_size(sizes, count, cap, n);
  add_size(sizes, count, cap, n + 1);
}

/* What the library picks by default for a kernel: the first pass's local
 * size W and the elements one work-group reads (W times the elements per
 * work-item), measured on a large float sum. */
static void default_shape(clr_context *ctx, clr_kernel k, size_t *wg,
                          size_t *span) {
  size_t n = (size_t)1 << 20;
  float *x = tu_xmalloc(n * sizeof *x);
  for (size_t i = 0; i < n; i++)
    x[i] = 1.0f;
  clr_options o;
  clr_options_init(&o);
  o.kernel = k;
  clr_value v;
  tu_timing tm;
  clr_status s = clr_reduce_host(ctx, &o, CLR_SUM, CLR_FLOAT, x, n, &v);
  if (s != CLR_OK)
    tu_die("%s: default-shape probe failed: %s: %s", clr_kernel_name(k),
           clr_status_name(s), clr_context_error(ctx));
  TU_CHECK(v.type == CLR_FLOAT && v.v.f == (float)n,
           "%s: probe sum of 2^20 ones = %.9g", clr_kernel_name(k),
           (double)v.v.f);
  tu_get_timing(ctx, &tm);
  *wg = 0;
  *span = 0;
  if (TU_CHECK(tm.n_passes >= 1 && tm.n_passes <= CLR_MAX_PASSES,
               "%s: probe reported %zu passes", clr_kernel_name(k),
               tm.n_passes)) {
    const clr_pass_info *p = &tm.passes[0];
    *wg = p->local_size;
    if (p->local_size && p->global_size)
      *span = p->n_in / (p->global_size / p->local_size);
    TU_CHECK(p->n_in == n, "%s: first pass reads %zu, want %zu",
             clr_kernel_name(k), p->n_in, n);
    TU_CHECK(p->local_size >= 1 &&
                 p->local_size <= tu_device.max_work_group_size &&
                 p->global_size % p->local_size == 0,
             "%s: first pass global %zu local %zu (device max %zu)",
             clr_kernel_name(k), p->global_size, p->local_size,
             tu_device.max_work_group_size);
  }
  printf("%s: default work-group size %zu, %zu elements per group\n",
         clr_kernel_name(k), *wg, *span);
  free(x);
}

/* Run one op x type over the sizes and variants; return failures. */
static size_t run_op_type(clr_context *ctx, const clr_options *base, clr_op op,
                          clr_type t, const size_t *sizes, size_t n_sizes,
                          int all_variants, void *buf) {
  size_t failed_before = tu_failed, passed_before = tu_passed;
  char what[160];
  snprintf(what, sizeof what, "%s %s %s wg=%zu", clr_kernel_name(base->kernel),
           clr_op_name(op), clr_type_name(t), base->wg_size);
  if (clr_op_supports(op, t) != CLR_OK) {
    /* and / or on a floating type: rejected, never computed. */
    TU_CHECK(op == CLR_AND || op == CLR_OR, "%s: clr_op_supports rejects it",
             what);
    float one[3] = {1.0f, 0.0f, 1.0f};
    double done[3] = {1.0, 0.0, 1.0};
    clr_value v;
    clr_status s = clr_reduce_host(
        ctx, base, op, t, t == CLR_FLOAT ? (void *)one : (void *)done, 3, &v);
    TU_CHECK(s == CLR_ERR_UNSUPPORTED, "%s: got %s, want CLR_ERR_UNSUPPORTED",
             what, clr_status_name(s));
    printf("%-40s unsupported, rejected\n", what);
    return tu_failed - failed_before;
  }
  TU_CHECK(!(op == CLR_AND || op == CLR_OR) || !tu_is_float(t),
           "%s: clr_op_supports accepts and/or on a float type", what);
  for (size_t si = 0; si < n_sizes; si++) {
    size_t n = sizes[si];
    for (int v = 0; v < TU_N_VARIANTS; v++) {
      if (!tu_variant_applies((tu_variant)v, op, t))
        continue;
      if (!all_variants && v != TU_RANDOM && v != TU_PLANT_LAST &&
          v != TU_EXACT)
        continue;
      tu_case c;
      memset(&c, 0, sizeof c);
      c.opt = *base;
      c.op = op;
      c.type = t;
      c.n = n;
      c.data = buf;
      c.label = tu_variant_name((tu_variant)v);
      c.exact_ref = tu_variant_exact((tu_variant)v, op, t);
      tu_fill(op, t, (tu_variant)v, buf, n,
              tu_seed(base->kernel, op * 16 + t, n, (uint64_t)v));
      tu_run_host(ctx, &c);
    }
  }
  size_t fails = tu_failed - failed_before;
  printf("%-40s %zu checks, %s\n", what, tu_passed - passed_before,
         fails ? "FAILED" : "ok");
  fflush(stdout);
  return fails;
}

/* Host arrays larger than one device allocation are streamed in chunks.
 * Run under POCL_MEMORY_LIMIT=1 (256 MiB allocations), so a few hundred
 * MiB suffice; a device with larger allocations is a setup error. */
static void stream_cases(clr_context *ctx, const clr_options *base) {
  static const struct {
    clr_op op;
    clr_type type;
    tu_variant v;
  } cases[] = {{CLR_SUM, CLR_INT, TU_RANDOM},
               {CLR_MAX, CLR_DOUBLE, TU_PLANT_LAST},
               {CLR_SUM, CLR_FLOAT, TU_RANDOM},
               {CLR_MIN, CLR_ULONG, TU_PLANT_MID},
               /* indices across chunks, half data, a mean */
               {CLR_ARGMAX, CLR_FLOAT, TU_PLANT_LAST},
               {CLR_MINMAX, CLR_INT, TU_PLANT_MID},
               {CLR_SUM, CLR_HALF, TU_RANDOM},
               {CLR_MEAN, CLR_FLOAT, TU_RANDOM}};
  uint64_t max_alloc = tu_device.max_alloc_size;
  if (max_alloc > ((uint64_t)512 << 20))
    tu_die("device allocations of %llu bytes: run with POCL_MEMORY_LIMIT=1 "
           "(the streaming test needs arrays larger than one allocation)",
           (unsigned long long)max_alloc);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t es = clr_type_size(cases[i].type);
    size_t n = (size_t)(max_alloc / es) + 1001;
    void *data = tu_xmalloc(n * es);
    tu_case c;
    memset(&c, 0, sizeof c);
    c.opt = *base;
    c.op = cases[i].op;
    c.type = cases[i].type;
    c.n = n;
    c.data = data;
    c.label = "streamed";
    c.exact_ref = tu_variant_exact(cases[i].v, c.op, c.type);
    tu_fill(c.op, c.type, cases[i].v, data, n, tu_seed(9, c.op, c.type, n));
    clr_status s = tu_run_host(ctx, &c);
    if (s == CLR_OK) {
      tu_timing tm;
      tu_get_timing(ctx, &tm);
      TU_CHECK(tm.chunks >= 2 && tm.n_passes >= 1 &&
                   tm.passes[0].n_in * es <= max_alloc,
               "%s %s n=%zu (%zu bytes, allocations of %llu): streamed in "
               "%zu chunks, first pass reads %zu",
               clr_op_name(c.op), clr_type_name(c.type), n, n * es,
               (unsigned long long)max_alloc, tm.chunks,
               tm.n_passes ? tm.passes[0].n_in : 0);
    }
    printf("streamed %s %s n=%zu: %s\n", clr_op_name(c.op),
           clr_type_name(c.type), n, tu_failed ? "FAILED" : "ok");
    fflush(stdout);
    free(data);
  }
  /* A dot product streams its two arrays chunk by chunk together. */
  size_t n = (size_t)(max_alloc / sizeof(float)) + 1001;
  float *x = tu_xmalloc(n * sizeof *x), *y = tu_xmalloc(n * sizeof *y);
  tu_fill(CLR_SUM, CLR_FLOAT, TU_RANDOM, x, n, 77);
  tu_fill(CLR_SUM, CLR_FLOAT, TU_RANDOM, y, n, 78);
  clr_reference ref;
  if (!clr_ref_reduce_mapped(CLR_MAP_NONE, CLR_SUM, CLR_FLOAT, CLR_FLOAT, x, y,
                             n, &ref))
    tu_die("out of host memory");
  clr_value v;
  clr_timing tm = CLR_TIMING_INIT;
  clr_check chk;
  clr_status s = clr_dot_host(ctx, base, CLR_FLOAT, x, y, n, &v);
  clr_last_timing(ctx, &tm);
  clr_ref_check(&ref, &v, tm.error_depth, &chk);
  TU_CHECK(s == CLR_OK && tm.chunks >= 2 && chk.ok,
           "streamed float dot n=%zu: %s, %zu chunks, error %g bound %g", n,
           clr_status_name(s), tm.chunks, chk.error, chk.bound);
  free(x);
  free(y);
}

/* The coarse reduction in one launch (tuning reduce.single_launch: the
 * last work-group folds the partials; the default on GPUs, forced here):
 * every op and type at sizes that take two passes otherwise, each data
 * variant, from a host array and from a buffer at an offset; the timing
 * must show one pass, and two with the key off. */
static void single_launch(clr_context *ctx, const clr_options *base,
                          void *buf) {
  clr_tuning t = CLR_TUNING_INIT;
  clr_get_tuning(ctx, &t);
  size_t sizes[] = {1048577, 2000003};
  for (int on = 1; on >= 0; on--) {
    t.reduce_single_launch = (unsigned)on;
    if (clr_set_tuning(ctx, &t) != CLR_OK)
      tu_die("clr_set_tuning: %s", clr_context_error(ctx));
    float *x = buf;
    for (size_t i = 0; i < sizes[1]; i++)
      x[i] = 1.0f;
    clr_value v;
    tu_timing tm;
    clr_status st =
        clr_reduce_host(ctx, base, CLR_SUM, CLR_FLOAT, x, sizes[1], &v);
    tu_get_timing(ctx, &tm);
    TU_CHECK(st == CLR_OK && v.v.f == (float)sizes[1] &&
                 tm.n_passes == (on ? 1u : 2u) && tm.passes[0].folds == on,
             "single_launch=%d: %s, sum %g, %zu passes (the first folds: %d)",
             on, clr_status_name(st), (double)v.v.f, tm.n_passes,
             tm.passes[0].folds);
    if (!on)
      break;
    for (size_t oi = 0; oi < TU_N_OPS; oi++)
      for (size_t ti = 0; ti < TU_N_TYPES; ti++)
        run_op_type(ctx, base, tu_ops[oi], tu_types[ti], sizes, 2,
                    tu_ops[oi] == CLR_SUM, buf);
    /* Work-groups of 8 and hundreds of them: each work-item of the last
     * group folds many groups' slots (cl/reduce_coarse.cl), of each
     * accumulator width. */
    clr_options few = *base;
    few.wg_size = 8;
    few.coarse = 64;
    size_t many[] = {200003}; /* 391 groups: two passes, so one */
    for (size_t oi = 0; oi < TU_N_OPS; oi++)
      for (size_t ti = 0; ti < TU_N_TYPES; ti++)
        run_op_type(ctx, &few, tu_ops[oi], tu_types[ti], many, 1, 0, buf);
    for (size_t i = 0; i < many[0]; i++)
      x[i] = 1.0f;
    clr_value fv;
    tu_timing ft;
    clr_status fs =
        clr_reduce_host(ctx, &few, CLR_SUM, CLR_FLOAT, x, many[0], &fv);
    tu_get_timing(ctx, &ft);
    TU_CHECK(fs == CLR_OK && fv.v.f == (float)many[0] && ft.n_passes == 1 &&
                 ft.passes[0].folds &&
                 ft.passes[0].global_size / ft.passes[0].local_size > 4 * 8,
             "wg 8: %s, sum %g, %zu passes, %zu groups of %zu",
             clr_status_name(fs), (double)fv.v.f, ft.n_passes,
             ft.passes[0].global_size / ft.passes[0].local_size,
             ft.passes[0].local_size);
    printf("single launch, wg 8: %zu groups\n",
           ft.passes[0].global_size / ft.passes[0].local_size);
    /* From a buffer, at an offset (run_op_type reduces host arrays). */
    int *d = buf;
    size_t n = sizes[0], off = 3;
    long long want = 0;
    for (size_t i = 0; i < n + off; i++) {
      d[i] = (int)(i % 1000) - 500;
      want += i >= off ? d[i] : 0;
    }
    cl_int err;
    cl_mem mem = clCreateBuffer(clr_context_cl_context(ctx),
                                CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                (n + off) * sizeof *d, d, &err);
    if (err != CL_SUCCESS)
      tu_die("clCreateBuffer: %d", (int)err);
    for (int rep = 0; rep < 3; rep++) { /* the counter is reset each time */
      st = clr_reduce_buffer(ctx, base, CLR_SUM, CLR_INT, mem, off, n, &v);
      TU_CHECK(st == CLR_OK && v.v.l == want,
               "single launch, buffer at offset %zu (run %d): %s, %lld, want "
               "%lld",
               off, rep, clr_status_name(st), (long long)v.v.l, want);
    }
    clReleaseMemObject(mem);
  }
}

int main(int argc, char **argv) {
  const char *kernel_arg = NULL, *set = "matrix";
  const tu_option options[] = {{"--kernel", &kernel_arg, NULL},
                               {"--set", &set, NULL}};
  tu_parse_args(argc, argv, options, TU_N_OPTIONS(options));
  clr_kernel kernels[TU_N_REDUCE_KERNELS];
  size_t n_kernels = 0;
  if (kernel_arg) {
    if (clr_kernel_from_name(kernel_arg, &kernels[0]) != CLR_OK)
      tu_die("unknown kernel %s", kernel_arg);
    n_kernels = 1;
  } else {
    for (size_t i = 0; i < TU_N_REDUCE_KERNELS; i++)
      kernels[n_kernels++] = tu_reduce_kernels[i];
  }

  clr_context *ctx = tu_context();
  printf("device: %s / %s (max work-group %zu, fp64 %d)\n",
         tu_device.platform_name, tu_device.device_name,
         tu_device.max_work_group_size, tu_device.has_fp64);

  size_t cap_n = (size_t)3000001;
  void *buf = tu_xmalloc(cap_n * sizeof(uint64_t));

  for (size_t ki = 0; ki < n_kernels; ki++) {
    clr_options base;
    clr_options_init(&base);
    base.kernel = kernels[ki];
    size_t sizes[96], n_sizes = 0, cap = sizeof sizes / sizeof sizes[0];

    if (strcmp(set, "matrix") == 0) {
      size_t wg, span;
      default_shape(ctx, kernels[ki], &wg, &span);
      static const size_t fixed[] = {1,     2,     3,       7,      97,
                                     1009,  1023,  1025,    4095,   4097,
                                     65535, 65537, 1048575, 1048577};
      for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        add_size(sizes, &n_sizes, cap, fixed[i]);
      if (wg) {
        add_around(sizes, &n_sizes, cap, wg);
        add_around(sizes, &n_sizes, cap, 2 * wg);
      }
      if (span && span < ((size_t)1 << 21)) {
        add_around(sizes, &n_sizes, cap, span);
        add_around(sizes, &n_sizes, cap, 2 * span);
      }
      for (size_t w = 64; w <= 512; w *= 2)
        add_around(sizes, &n_sizes, cap, w);
      qsort(sizes, n_sizes, sizeof sizes[0], cmp_size);
      printf("%s sizes:", clr_kernel_name(kernels[ki]));
      for (size_t i = 0; i < n_sizes; i++)
        printf(" %zu", sizes[i]);
      printf("\n");
      for (size_t oi = 0; oi < TU_N_OPS; oi++)
        for (size_t ti = 0; ti < TU_N_TYPES; ti++)
          run_op_type(ctx, &base, tu_ops[oi], tu_types[ti], sizes, n_sizes, 1,
                      buf);
    } else if (strcmp(set, "big") == 0) {
      size_t big = 3000001;
      add_size(sizes, &n_sizes, cap, big);
      for (size_t ti = 0; ti < TU_N_TYPES; ti++)
        run_op_type(ctx, &base, CLR_SUM, tu_types[ti], sizes, n_sizes, 0, buf);
      run_op_type(ctx, &base, CLR_MIN, CLR_FLOAT, sizes, n_sizes, 0, buf);
      run_op_type(ctx, &base, CLR_MAX, CLR_INT, sizes, n_sizes, 0, buf);
    } else if (strcmp(set, "small") == 0) {
      /* Small sizes, every op and type: cheap enough for a simulator
       * (Oclgrind) or a device with tiny work-groups. */
      static const size_t small[] = {1, 2, 3, 7, 17, 65, 257, 1031};
      for (size_t i = 0; i < sizeof small / sizeof small[0]; i++)
        add_size(sizes, &n_sizes, cap, small[i]);
      static const unsigned vws[] = {0, 1, 4, 16};
      for (size_t vi = 0; vi < 4; vi++)
        for (int layout = 0; layout <= 2; layout++) {
          if ((vi == 0) != (layout == 0))
            continue; /* auto, or an explicit width with each layout */
          if (vi && kernels[ki] != CLR_REDUCE_COARSE)
            continue;
          clr_options o = base;
          o.vector_width = vws[vi];
          o.layout = (clr_layout)layout;
          for (size_t oi = 0; oi < TU_N_OPS; oi++)
            for (size_t ti = 0; ti < TU_N_TYPES; ti++)
              if (vi == 0 || (ti + oi) % 2 == 0)
                run_op_type(ctx, &o, tu_ops[oi], tu_types[ti], sizes, n_sizes,
                            0, buf);
        }
    } else if (strcmp(set, "single-launch") == 0) {
      single_launch(ctx, &base, buf);
    } else if (strcmp(set, "stream") == 0) {
      stream_cases(ctx, &base);
    } else {
      tu_die("unknown --set=%s", set);
    }
  }
  free(buf);
  clr_context_release(ctx);
  return tu_finish("test_reduce");
}
