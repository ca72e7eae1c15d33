/* Options against the CPU reference:
 *   - explicit work-group sizes 1, 2, 3, 5, 16, 64, 100, 256, the device
 *     maximum and one more, for every reduction kernel;
 *   - coarse factors 1, 2, 7, 1000 x both layouts x vector widths
 *     1, 2, 4, 8, 16 for the coarse kernel, and vector width x layout for
 *     every type and op;
 *   - the coarse-only options given to the other kernels;
 *   - invalid vector widths and layouts;
 *   - narrow_accumulator (32-bit sums and products that wrap).
 *
 * The header documents no rule for work-group sizes that are not a power
 * of two, nor for sizes above the device maximum, nor for 1 (with which
 * one-element-per-item kernels never shrink their input): such a call must
 * either give the right answer or return CLR_ERR_INVALID_ARGUMENT with a
 * detail, never a wrong answer, and the context must stay usable
 * afterwards.  Powers of two from 2 to the device maximum must work. */
#include "test_util.h"

/* A spread of op x type pairs, each with data that catches lost or
 * doubled elements. */
static const tu_op_data spread[] = {
    {CLR_SUM, CLR_FLOAT, TU_EXACT},       {CLR_SUM, CLR_INT, TU_RANDOM},
    {CLR_MAX, CLR_DOUBLE, TU_PLANT_LAST}, {CLR_MIN, CLR_LONG, TU_PLANT_MID},
    {CLR_PROD, CLR_ULONG, TU_RANDOM},     {CLR_AND, CLR_UINT, TU_PLANT_LAST},
    {CLR_OR, CLR_LONG, TU_PLANT_LAST},    {CLR_PROD, CLR_DOUBLE, TU_EXACT},
};
#define N_SPREAD (sizeof spread / sizeof spread[0])

static void *buf;

/* clr_options_init's defaults on kernel k. */
static clr_options kernel_options(clr_kernel k) {
  clr_options o;
  clr_options_init(&o);
  o.kernel = k;
  return o;
}

/* A tiny reduction that must always work: the context is still usable. */
static void check_usable(clr_context *ctx, const char *after) {
  int32_t x[5] = {1, 2, 3, 4, 5};
  clr_value v;
  clr_status s = clr_reduce_host(ctx, NULL, CLR_SUM, CLR_INT, x, 5, &v);
  TU_CHECK(s == CLR_OK && v.type == CLR_LONG && v.v.l == 15,
           "context usable after %s: status %s, sum %" PRId64, after,
           clr_status_name(s), v.v.l);
}

/* Run one case; when may_reject, CLR_ERR_INVALID_ARGUMENT is accepted in
 * place of the right answer.  Returns the status. */
static clr_status run_case(clr_context *ctx, const clr_options *o,
                           const tu_op_data *ot, size_t n, int may_reject,
                           const char *label) {
  tu_case c = {.label = label,
               .opt = *o,
               .op = ot->op,
               .type = ot->type,
               .data = buf,
               .n = n,
               .exact_ref = tu_variant_exact(ot->variant, ot->op, ot->type)};
  tu_fill(ot->op, ot->type, ot->variant, buf, n,
          tu_seed(o->kernel, ot->op * 16 + ot->type, n, o->wg_size));
  if (!may_reject || !tu_type_available(ot->type))
    return tu_run_host(ctx, &c);
  clr_value got;
  clr_status s = clr_reduce_host(ctx, o, ot->op, ot->type, buf, n, &got);
  char desc[256];
  tu_describe(&c, desc, sizeof desc);
  if (s == CLR_ERR_INVALID_ARGUMENT) {
    TU_CHECK(clr_context_error(ctx) && clr_context_error(ctx)[0] != '\0',
             "%s: rejected with an empty clr_context_error", desc);
    return s;
  }
  if (!TU_CHECK(s == CLR_OK,
                "%s: got %s (%s), want CLR_OK or "
                "CLR_ERR_INVALID_ARGUMENT",
                desc, clr_status_name(s), clr_context_error(ctx)))
    return s;
  clr_timing tm = CLR_TIMING_INIT;
  clr_last_timing(ctx, &tm);
  tu_verify(&c, &got, &tm);
  return s;
}

static void test_wg_sizes(clr_context *ctx) {
  size_t maxwg = tu_device.max_work_group_size;
  size_t wgs[] = {1, 2, 3, 5, 16, 64, 100, 256, maxwg, maxwg + 1};
  for (size_t ki = 0; ki < TU_N_REDUCE_KERNELS; ki++) {
    for (size_t wi = 0; wi < sizeof wgs / sizeof wgs[0]; wi++) {
      size_t w = wgs[wi];
      int seen = 0;
      for (size_t j = 0; j < wi; j++)
        seen |= wgs[j] == w;
      if (seen)
        continue;
      int pow2 = (w & (w - 1)) == 0;
      /* wg 1 cannot shrink the input of the one-element-per-item kernels
       * (interleaved, sequential): the library may refuse it. */
      int may_reject = !pow2 || w > maxwg || w == 1;
      if (w > maxwg && wi < 8)
        continue; /* a small device: only the max and max+1 rows apply */
      size_t sizes[] = {1,    2,    w > 1 ? w - 1 : 3, w, w + 1, 2 * w + 1,
                        1009, 65537};
      size_t failed_before = tu_failed;
      int rejected = 0, accepted = 0, limited = 0;
      for (size_t pi = 0; pi < N_SPREAD; pi++) {
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
          clr_options o = kernel_options(tu_reduce_kernels[ki]);
          o.wg_size = w;
          /* A kernel may allow less than the device's maximum (NVIDIA:
           * 256 for these kernels): the library must say so, and the case
           * is then counted as limited, not run. */
          if (clr_prepare(ctx, &o, spread[pi].op, spread[pi].type) ==
                  CLR_ERR_INVALID_ARGUMENT &&
              strstr(clr_context_error(ctx), "exceeds this kernel's limit")) {
            limited++;
            continue;
          }
          clr_status s =
              run_case(ctx, &o, &spread[pi], sizes[si], may_reject, "wg");
          if (s == CLR_ERR_INVALID_ARGUMENT) {
            rejected++;
            check_usable(ctx, "a rejected work-group size");
          } else {
            accepted++;
          }
          /* The work-group size asked for is the one the first pass of a
           * large input runs with. */
          if (s == CLR_OK && sizes[si] == 65537 &&
              tu_type_available(spread[pi].type)) {
            tu_timing tm;
            tu_get_timing(ctx, &tm);
            TU_CHECK(tm.n_passes >= 1 && tm.passes[0].local_size == w,
                     "%s wg=%zu: first pass ran with local size %zu",
                     clr_kernel_name(o.kernel), w,
                     tm.n_passes ? tm.passes[0].local_size : 0);
          }
        }
      }
      TU_CHECK(!pow2 || w > maxwg || w == 1 || rejected == 0,
               "%s wg=%zu (a power of two within the device limit) was "
               "rejected %d times",
               clr_kernel_name(tu_reduce_kernels[ki]), w, rejected);
      printf("%-12s wg=%-5zu %s%s%s\n", clr_kernel_name(tu_reduce_kernels[ki]),
             w,
             rejected   ? (accepted ? "partly rejected" : "rejected")
             : accepted ? "accepted"
                        : "beyond the kernel's limit here",
             limited ? " (some cases beyond the kernel's limit here)" : "",
             tu_failed > failed_before ? ", FAILED" : ", ok");
      fflush(stdout);
    }
  }
}

static void test_coarse_cross(clr_context *ctx) {
  static const size_t coarse[] = {1, 2, 7, 1000};
  static const unsigned vws[] = {1, 2, 4, 8, 16};
  static const clr_layout layouts[] = {CLR_LAYOUT_STRIDED,
                                       CLR_LAYOUT_CONTIGUOUS};
  static const tu_op_data cases[] = {{CLR_SUM, CLR_FLOAT, TU_EXACT},
                                     {CLR_SUM, CLR_LONG, TU_RANDOM}};
  static const size_t sizes[] = {1, 3, 17, 1000, 1001, 7001, 65537, 100003};
  for (size_t li = 0; li < 2; li++)
    for (size_t ci = 0; ci < 4; ci++)
      for (size_t vi = 0; vi < 5; vi++) {
        size_t failed_before = tu_failed;
        for (size_t pi = 0; pi < 2; pi++)
          for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            clr_options o = kernel_options(CLR_REDUCE_COARSE);
            o.coarse = coarse[ci];
            o.vector_width = vws[vi];
            o.layout = layouts[li];
            run_case(ctx, &o, &cases[pi], sizes[si], 0, "coarse x vw");
          }
        printf("coarse=%-4zu vw=%-2u layout=%s %s\n", coarse[ci], vws[vi],
               li ? "contiguous" : "strided",
               tu_failed > failed_before ? "FAILED" : "ok");
        fflush(stdout);
      }
}

/* Vector width x layout (coarse auto) over the types and ops: sums of
 * every type and every other op on two types each, with widths 4 and 16
 * in both layouts (each width and layout is a program build of its own,
 * so not the full cross; test_coarse_cross has every width for float and
 * long sums). */
static void test_vector_types(clr_context *ctx) {
  static const unsigned vws[] = {4, 16};
  static const size_t sizes[] = {1, 5, 33, 4097, 65537};
  for (size_t li = 0; li < 2; li++)
    for (size_t vi = 0; vi < 2; vi++) {
      unsigned vw = vws[vi];
      size_t failed_before = tu_failed;
      for (size_t oi = 0; oi < TU_N_OPS; oi++)
        for (size_t ti = 0; ti < TU_N_TYPES; ti++) {
          tu_op_data ot = {tu_ops[oi], tu_types[ti], TU_PLANT_LAST};
          if (clr_op_supports(ot.op, ot.type) != CLR_OK)
            continue;
          /* prod: double, long; min: int, ulong; max: float, uint;
           * and: long; or: int, ulong */
          if (ot.op != CLR_SUM && ti % 3 != oi % 3)
            continue;
          if (tu_variant_applies(TU_EXACT, ot.op, ot.type))
            ot.variant = TU_EXACT;
          for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            clr_options o = kernel_options(CLR_REDUCE_COARSE);
            o.vector_width = vw;
            o.layout = li ? CLR_LAYOUT_CONTIGUOUS : CLR_LAYOUT_STRIDED;
            run_case(ctx, &o, &ot, sizes[si], 0, "vw x type");
          }
        }
      printf("vw=%-2u layout=%s types and ops: %s\n", vw,
             li ? "contiguous" : "strided",
             tu_failed > failed_before ? "FAILED" : "ok");
      fflush(stdout);
    }
}

/* The coarse kernel's options given to the other kernels: ignored (right
 * answer) or rejected, never a wrong answer. */
static void test_coarse_options_elsewhere(clr_context *ctx) {
  for (size_t ki = 0; ki < TU_N_REDUCE_KERNELS; ki++) {
    if (tu_reduce_kernels[ki] == CLR_REDUCE_COARSE)
      continue;
    clr_options o = kernel_options(tu_reduce_kernels[ki]);
    o.coarse = 7;
    o.vector_width = 4;
    o.layout = CLR_LAYOUT_CONTIGUOUS;
    clr_status s = run_case(ctx, &o, &spread[0], 10007, 1, "coarse opts");
    if (s != CLR_OK)
      check_usable(ctx, "rejected coarse options");
    printf("%s with coarse=7 vw=4 contiguous: %s\n", clr_kernel_name(o.kernel),
           s == CLR_OK ? "accepted" : clr_status_name(s));
  }
}

/* Options with one field out of range: CLR_ERR_INVALID_ARGUMENT, and the
 * context still usable (checked after each bad vector width, and once at
 * the end). */
static void test_invalid_options(clr_context *ctx) {
  float x[4] = {1, 2, 3, 4};
  clr_value v;
  static const char *what[] = {"vector_width=3",          "vector_width=5",
                               "vector_width=32",         "layout=99",
                               "kernel=CLR_KERNEL_COUNT", "kernel=-1"};
  clr_options bad[6];
  for (size_t i = 0; i < 6; i++)
    clr_options_init(&bad[i]);
  static const unsigned bad_vw[] = {3, 5, 32};
  for (size_t i = 0; i < 3; i++) {
    bad[i].kernel = CLR_REDUCE_COARSE;
    bad[i].vector_width = bad_vw[i];
  }
  bad[3].layout = (clr_layout)99;
  bad[4].kernel = CLR_KERNEL_COUNT;
  bad[5].kernel = (clr_kernel)-1;
  for (size_t i = 0; i < 6; i++) {
    clr_status s = clr_reduce_host(ctx, &bad[i], CLR_SUM, CLR_FLOAT, x, 4, &v);
    TU_EXPECT_STATUS(s, CLR_ERR_INVALID_ARGUMENT, what[i]);
    if (bad[i].vector_width)
      check_usable(ctx, what[i]);
  }
  check_usable(ctx, "invalid options");
}

/* The result type of op on t with and without narrow_accumulator: int
 * for and / or; 32-bit sums and products widen to 64 bits unless narrow;
 * the type itself otherwise. */
static void check_result_types(clr_op op, clr_type t) {
  clr_type r0 = clr_result_type(op, t, 0);
  clr_type r1 = clr_result_type(op, t, 1);
  if (op == CLR_AND || op == CLR_OR)
    TU_CHECK(r0 == CLR_INT && r1 == CLR_INT, "result type of %s %s",
             clr_op_name(op), clr_type_name(t));
  else if ((op == CLR_SUM || op == CLR_PROD) && (t == CLR_INT || t == CLR_UINT))
    TU_CHECK(r0 == (t == CLR_INT ? CLR_LONG : CLR_ULONG) && r1 == t,
             "result type of %s %s", clr_op_name(op), clr_type_name(t));
  else
    TU_CHECK(r0 == t && r1 == t, "result type of %s %s", clr_op_name(op),
             clr_type_name(t));
}

/* 32-bit sums and products: 64-bit accumulators by default, wrapping
 * 32-bit ones with narrow_accumulator. */
static void test_narrow(clr_context *ctx) {
  size_t n = 100003;
  int32_t *xi = buf;
  for (size_t ki = 0; ki < TU_N_REDUCE_KERNELS; ki++) {
    clr_kernel k = tu_reduce_kernels[ki];
    for (int narrow = 0; narrow <= 1; narrow++) {
      clr_options o = kernel_options(k);
      o.narrow_accumulator = narrow;
      char label[64];
      /* int sum: n * INT32_MAX exact in 64 bits; narrow: that mod 2^32. */
      for (size_t i = 0; i < n; i++)
        xi[i] = INT32_MAX;
      int64_t wide = (int64_t)n * INT32_MAX;
      clr_value want = narrow ? tu_int_value(CLR_INT, (int32_t)(uint32_t)wide)
                              : tu_int_value(CLR_LONG, wide);
      tu_case c = {.label = label,
                   .opt = o,
                   .op = CLR_SUM,
                   .type = CLR_INT,
                   .data = buf,
                   .n = n,
                   .exact = &want};
      snprintf(label, sizeof label, "n x INT32_MAX narrow=%d", narrow);
      tu_run_host(ctx, &c);
      /* uint sum: n * UINT32_MAX. */
      uint32_t *xu = buf;
      for (size_t i = 0; i < n; i++)
        xu[i] = UINT32_MAX;
      uint64_t uw = (uint64_t)n * UINT32_MAX;
      want = narrow ? tu_int_value(CLR_UINT, (uint32_t)uw)
                    : tu_int_value(CLR_ULONG, (int64_t)uw);
      c.type = CLR_UINT;
      snprintf(label, sizeof label, "n x UINT32_MAX narrow=%d", narrow);
      tu_run_host(ctx, &c);
      /* int prod: 3^40 = 12157665459056928801 overflows int64 (wraps);
       * in 32 bits 3^40 mod 2^32. */
      for (size_t i = 0; i < 40; i++)
        xi[i] = 3;
      uint64_t p = 1;
      for (int i = 0; i < 40; i++)
        p *= 3;
      want = narrow ? tu_int_value(CLR_INT, (int32_t)(uint32_t)p)
                    : tu_int_value(CLR_LONG, (int64_t)p);
      c.op = CLR_PROD;
      c.type = CLR_INT;
      c.n = 40;
      snprintf(label, sizeof label, "3^40 narrow=%d", narrow);
      tu_run_host(ctx, &c);
      /* narrow changes only the result type of 32-bit sum and prod */
      for (size_t oi = 0; oi < TU_N_OPS; oi++)
        for (size_t ti = 0; ti < TU_N_TYPES; ti++) {
          tu_op_data ot = {tu_ops[oi], tu_types[ti], TU_RANDOM};
          if (clr_op_supports(ot.op, ot.type) != CLR_OK)
            continue;
          check_result_types(ot.op, ot.type);
          if (ki == 0 && narrow)
            run_case(ctx, &o, &ot, 4099, 0, "narrow on every op");
        }
    }
    char name[64];
    snprintf(name, sizeof name, "%s narrow_accumulator", clr_kernel_name(k));
    tu_section(name);
  }
}

/* Every row's flags (include/clreduce_ops.def): logical operations take
 * no accumulator, means no 32-bit one. */
static const unsigned op_flags[CLR_OP_COUNT] = {
#define CLR_OP_ROW(id, name, runs, combine, partial, identity, result, flags,  \
                   what)                                                       \
  [CLR_##id] = flags,
#include "clreduce_ops.def"
#undef CLR_OP_ROW
};

/* clr_options.accumulate_in: every type with every accumulator of its
 * kind that is at least as wide, for sum, prod, min and max, against the
 * CPU reference computed in that type; everything else refused. */
static void test_accumulate_in(clr_context *ctx) {
  static const size_t sizes[] = {1, 1000, 100003};
  for (int t = 0; t < CLR_TYPE_COUNT; t++)
    for (int a = 0; a < CLR_TYPE_COUNT; a++)
      for (int op = 0; op < CLR_OP_COUNT; op++) {
        clr_type type = (clr_type)t, acc = (clr_type)a;
        if (!tu_type_available(type) || !tu_type_available(acc) ||
            clr_op_supports((clr_op)op, type) != CLR_OK)
          continue;
        int fits =
            (op_flags[op] & CLR_OPF_MOMENTS)
                /* var and std: in double, or float for float and half */
                ? acc == CLR_DOUBLE || (acc == CLR_FLOAT &&
                                        (type == CLR_FLOAT || type == CLR_HALF))
                : ((type == acc && type != CLR_HALF) ||
                   ((type == CLR_FLOAT || type == CLR_HALF) &&
                    acc == CLR_DOUBLE) ||
                   (type == CLR_HALF && acc == CLR_FLOAT) ||
                   (type == CLR_INT && acc == CLR_LONG) ||
                   (type == CLR_UINT && acc == CLR_ULONG)) &&
                      !(op_flags[op] & CLR_OPF_LOGICAL) &&
                      /* a mean's sum is never narrowed to 32 bits (it would
                         wrap) */
                      !((op_flags[op] & CLR_OPF_MEAN) &&
                        (acc == CLR_INT || acc == CLR_UINT));
        clr_options o;
        clr_options_init(&o);
        o.accumulate_in = acc;
        if (!fits) {
          clr_value v;
          char what[128];
          snprintf(what, sizeof what, "%s of %s accumulated in %s",
                   clr_op_name((clr_op)op), clr_type_name(type),
                   clr_type_name(acc));
          TU_EXPECT_STATUS(
              clr_reduce_host(ctx, &o, (clr_op)op, type, buf, 10, &v),
              CLR_ERR_UNSUPPORTED, what);
          continue;
        }
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
          tu_case c = {.label = "accumulate_in",
                       .opt = o,
                       .op = (clr_op)op,
                       .type = type,
                       .data = buf,
                       .n = sizes[i]};
          tu_fill(c.op, type, TU_RANDOM, buf, c.n,
                  tu_seed(31, (uint64_t)op, (uint64_t)t, c.n));
          tu_run_host(ctx, &c);
        }
      }
  /* Not for scans, and/or or exact sums. */
  clr_options o;
  clr_options_init(&o);
  o.accumulate_in = CLR_LONG;
  o.kernel = CLR_SCAN_KOGGE_STONE;
  TU_EXPECT_STATUS(clr_scan_host(ctx, &o, CLR_SUM, CLR_INT, buf, buf, 10),
                   CLR_ERR_INVALID_ARGUMENT,
                   "a scan into a wider type, in place");
  TU_EXPECT_STATUS(
      clr_scan_host(ctx, &o, CLR_SUM, CLR_FLOAT, buf, (char *)buf + 1024, 10),
      CLR_ERR_UNSUPPORTED, "a float scan written as long");
  clr_options_init(&o);
  o.accumulate_in = CLR_DOUBLE;
  o.exact = 1;
  clr_value v;
  TU_EXPECT_STATUS(clr_reduce_host(ctx, &o, CLR_SUM, CLR_FLOAT, buf, 10, &v),
                   CLR_ERR_UNSUPPORTED, "an exact sum with accumulate_in");
  o.exact = 0;
  o.accumulate_in = CLR_TYPE_COUNT + 1;
  TU_EXPECT_STATUS(clr_reduce_host(ctx, &o, CLR_SUM, CLR_FLOAT, buf, 10, &v),
                   CLR_ERR_INVALID_ARGUMENT, "accumulate_in past the types");
}

int main(int argc, char **argv) {
  const char *part = "all";
  const tu_option options[] = {{"--part", &part, NULL}};
  tu_parse_args(argc, argv, options, TU_N_OPTIONS(options));
  clr_context *ctx = tu_context();
  buf = tu_xmalloc((size_t)200000 * sizeof(uint64_t));
  int all = strcmp(part, "all") == 0;
  if (all || strcmp(part, "wg") == 0)
    test_wg_sizes(ctx);
  if (all || strcmp(part, "coarse") == 0) {
    test_coarse_cross(ctx);
    test_vector_types(ctx);
    test_coarse_options_elsewhere(ctx);
  }
  if (all || strcmp(part, "misc") == 0) {
    test_invalid_options(ctx);
    tu_section("invalid options");
    test_narrow(ctx);
    test_accumulate_in(ctx);
    tu_section("accumulate_in");
  }
  free(buf);
  clr_context_release(ctx);
  return tu_finish("test_options");
}
