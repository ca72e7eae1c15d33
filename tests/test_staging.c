/* Host arrays copied to a device through pinned blocks (src/lib/pinned.c),
 * on a context that copies host data (copy_host_data: PoCL then takes the
 * path a discrete GPU takes).  Tiny blocks (4 KiB) make every array span
 * many of them, so the four slots are reused many times, and the threads
 * copy pieces of the same block (as small as 256 bytes with 16 threads),
 * taking them as they come free.  Every answer is checked against the CPU:
 *   - reductions (coarse float and int sum, double max, a dot product, an
 *     exact sum) and scans (separate arrays, in place, into a wider type)
 *     and segmented reductions, for 0 (one direct write), 1, 2, 3 and 16
 *     threads (more than there are blocks for the smaller arrays), on one
 *     context, so its helper threads (src/lib/crew.c) are kept from call
 *     to call, grow, and sit out calls that want fewer of them;
 *   - sizes of half a block, one block, one block and one element, 7 blocks
 *     less one element, 13 blocks and 3 elements, and a prime;
 *   - arrays streamed in chunks (max_chunk_bytes) each staged in blocks;
 *   - the shipped 12 MiB blocks, 1 to 20 MB (one to four threads, by the
 *     transfer's size);
 *   - the transfer's time is reported (h2d_ms, d2h_ms > 0 with profiling);
 *   - arrays from clr_host_alloc (copied directly, or used in place).
 */
#include "exact_sum.h"
#include "scan_reference.h"
#include "segment_reference.h"
#include "test_util.h"

#define BLOCK_KIB 4

static void set_staging(clr_context *ctx, unsigned threads) {
  clr_tuning t = CLR_TUNING_INIT;
  if (clr_get_tuning(ctx, &t) != CLR_OK)
    tu_die("clr_get_tuning: %s", clr_context_error(ctx));
  t.stage_threads = threads;
  t.stage_block_kib = BLOCK_KIB;
  if (clr_set_tuning(ctx, &t) != CLR_OK)
    tu_die("clr_set_tuning(stage.threads=%u): %s", threads,
           clr_context_error(ctx));
}

/* Sizes in elements of esize bytes around the block. */
static size_t sizes_for(size_t esize, size_t *out) {
  size_t per_block = BLOCK_KIB * 1024 / esize, k = 0;
  out[k++] = per_block / 2;
  out[k++] = per_block;
  out[k++] = per_block + 1;
  out[k++] = 7 * per_block - 1;
  out[k++] = 13 * per_block + 3;
  out[k++] = 100003;
  return k;
}

/* Was the copy timed?  A staged call's h2d (and a scan's d2h) time is the
 * span of its commands: above 0 wherever the queue profiles. */
static void check_timed(clr_context *ctx, const char *what, unsigned threads,
                        size_t bytes, int reads_back) {
  clr_timing t = CLR_TIMING_INIT;
  if (clr_last_timing(ctx, &t) != CLR_OK)
    return;
  if (bytes < BLOCK_KIB * 1024 || threads == 0)
    return;
  TU_CHECK(t.h2d_ms > 0, "%s threads=%u: h2d_ms %g, want > 0", what, threads,
           t.h2d_ms);
  if (reads_back)
    TU_CHECK(t.d2h_ms > 0, "%s threads=%u: d2h_ms %g, want > 0", what, threads,
             t.d2h_ms);
}

static void reductions(clr_context *ctx, unsigned threads, const char *label) {
  static const struct {
    clr_op op;
    clr_type type;
  } cases[] = {{CLR_SUM, CLR_FLOAT}, {CLR_SUM, CLR_INT}, {CLR_MAX, CLR_DOUBLE}};
  tu_rng rng = {tu_seed(threads, 1, 2, 3)};
  for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
    size_t sizes[8], esize = clr_type_size(cases[ci].type);
    size_t ns = sizes_for(esize, sizes);
    if (!tu_type_available(cases[ci].type))
      continue;
    for (size_t si = 0; si < ns; si++) {
      size_t n = sizes[si];
      void *data = tu_xmalloc(n * esize);
      tu_fill(cases[ci].op, cases[ci].type, TU_RANDOM, data, n, tu_next(&rng));
      tu_case c;
      memset(&c, 0, sizeof c);
      clr_options_init(&c.opt);
      c.label = label;
      c.op = cases[ci].op;
      c.type = cases[ci].type;
      c.data = data;
      c.n = n;
      if (tu_run_host(ctx, &c) == CLR_OK)
        check_timed(ctx, "reduce", threads, n * esize, 0);
      free(data);
    }
  }
}

static void dot_and_exact(clr_context *ctx, unsigned threads,
                          const char *label) {
  size_t sizes[8];
  size_t ns = sizes_for(sizeof(float), sizes);
  tu_rng rng = {tu_seed(threads, 4, 5, 6)};
  for (size_t si = 0; si < ns; si++) {
    size_t n = sizes[si];
    float *x = tu_xmalloc(n * sizeof *x), *y = tu_xmalloc(n * sizeof *y);
    tu_fill(CLR_SUM, CLR_FLOAT, TU_RANDOM, x, n, tu_next(&rng));
    tu_fill(CLR_SUM, CLR_FLOAT, TU_RANDOM, y, n, tu_next(&rng));
    clr_value got, want;
    clr_status st = clr_dot_host(ctx, NULL, CLR_FLOAT, x, y, n, &got);
    if (TU_CHECK(st == CLR_OK, "%s dot n=%zu: %s: %s", label, n,
                 clr_status_name(st), clr_context_error(ctx))) {
      clr_reference ref;
      clr_check chk;
      clr_timing t = CLR_TIMING_INIT;
      clr_last_timing(ctx, &t);
      if (!clr_ref_reduce_mapped(CLR_MAP_NONE, CLR_SUM, CLR_FLOAT, got.type, x,
                                 y, n, &ref))
        tu_die("out of host memory");
      clr_ref_check(&ref, &got, t.error_depth, &chk);
      TU_CHECK(chk.ok, "%s dot n=%zu: got %g, want %g", label, n,
               clr_value_as_double(&got), clr_value_as_double(&ref.value));
      check_timed(ctx, "dot", threads, n * sizeof *x, 0);
    }
    clr_options opt;
    clr_options_init(&opt);
    opt.exact = 1;
    st = clr_reduce_host(ctx, &opt, CLR_SUM, CLR_FLOAT, x, n, &got);
    clr_ref_exact_sum(CLR_FLOAT, x, n, &want);
    TU_CHECK(st == CLR_OK && clr_ref_exact_equal(&want, &got),
             "%s exact sum n=%zu: %s, got %g, want %g", label, n,
             clr_status_name(st), clr_value_as_double(&got),
             clr_value_as_double(&want));
    free(x);
    free(y);
  }
}

/* Scans: separate arrays, in place, and int into long (a wider output:
 * its own staged output buffer). */
static void scans(clr_context *ctx, unsigned threads, const char *label) {
  tu_rng rng = {tu_seed(threads, 7, 8, 9)};
  size_t sizes[8];
  size_t ns = sizes_for(sizeof(int), sizes);
  for (size_t si = 0; si < ns; si++) {
    size_t n = sizes[si];
    for (int mode = 0; mode < 3; mode++) {
      int *in = tu_xmalloc(n * sizeof *in);
      tu_fill(CLR_SUM, CLR_INT, TU_RANDOM, in, n, tu_next(&rng));
      int *keep = tu_xmalloc(n * sizeof *keep);
      memcpy(keep, in, n * sizeof *in);
      void *out = mode == 1 ? (void *)in : tu_xmalloc(n * 8);
      clr_options opt;
      clr_options_init(&opt);
      opt.exclusive = mode == 2;
      if (mode == 2)
        opt.accumulate_in = CLR_LONG;
      clr_type ot = clr_scan_output_type(&opt, CLR_INT);
      clr_status st = clr_scan_host(ctx, &opt, CLR_SUM, CLR_INT, in, out, n);
      static const char *const modes[] = {"separate", "in place",
                                          "exclusive into long"};
      if (TU_CHECK(st == CLR_OK, "%s scan %s n=%zu: %s: %s", label, modes[mode],
                   n, clr_status_name(st), clr_context_error(ctx))) {
        clr_scan_check chk;
        clr_ref_scan_check_to(CLR_SUM, CLR_INT, ot, opt.exclusive, keep, out, n,
                              0, 0, &chk);
        TU_CHECK(chk.ok, "%s scan %s n=%zu: %zu elements wrong (first at %zu)",
                 label, modes[mode], n, chk.n_bad, chk.worst_index);
        check_timed(ctx, "scan", threads, n * sizeof *in, 1);
      }
      if (mode != 1)
        free(out);
      free(in);
      free(keep);
    }
  }
}

static void segments(clr_context *ctx, unsigned threads, const char *label) {
  tu_rng rng = {tu_seed(threads, 10, 11, 12)};
  size_t sizes[8];
  size_t ns = sizes_for(sizeof(float), sizes);
  for (size_t si = 0; si < ns; si++) {
    size_t n = sizes[si], count = 0;
    float *x = tu_xmalloc(n * sizeof *x);
    uint64_t *off = tu_xmalloc((n + 2) * sizeof *off);
    tu_fill(CLR_SUM, CLR_FLOAT, TU_RANDOM, x, n, tu_next(&rng));
    off[0] = 0;
    for (size_t at = 0; at < n;) {
      at += (size_t)tu_below(&rng, 300);
      off[++count] = at < n ? at : n;
      at = (size_t)off[count];
    }
    float *res = tu_xmalloc((count + 1) * sizeof *res);
    clr_status st = clr_reduce_segments_host(ctx, NULL, CLR_SUM, CLR_FLOAT, x,
                                             n, off, count, res);
    if (TU_CHECK(st == CLR_OK, "%s segments n=%zu: %s: %s", label, n,
                 clr_status_name(st), clr_context_error(ctx))) {
      clr_timing t = CLR_TIMING_INIT;
      clr_segments_check chk;
      clr_last_timing(ctx, &t);
      if (!clr_ref_segments_check(CLR_MAP_NONE, CLR_SUM, CLR_FLOAT, CLR_FLOAT,
                                  x, off, count, res, t.error_depth, &chk))
        tu_die("out of host memory");
      TU_CHECK(chk.ok, "%s segments n=%zu: %zu of %zu segments wrong", label, n,
               chk.n_bad, count);
    }
    free(res);
    free(off);
    free(x);
  }
}

/* Arrays from clr_host_alloc: reductions of the whole and of a part at an
 * offset, a scan from one into another and in place, a segmented
 * reduction's results written into one; clr_host_free of others refused.
 * One array is left for clr_context_release to free (the leak checks
 * see it). */
static void host_alloc(clr_context *ctx, const char *label) {
  size_t n = 300007;
  tu_rng rng = {tu_seed(13, 14, 15, 16)};
  int *a = clr_host_alloc(ctx, n * sizeof *a);
  long *b = clr_host_alloc(ctx, n * sizeof *b);
  if (!TU_CHECK(a && b, "%s: clr_host_alloc: %s", label,
                clr_context_error(ctx)))
    return;
  tu_fill(CLR_SUM, CLR_INT, TU_RANDOM, a, n, tu_next(&rng));
  int *keep = tu_xmalloc(n * sizeof *keep);
  memcpy(keep, a, n * sizeof *a);
  for (size_t off = 0; off < 2; off++) {
    tu_case c;
    memset(&c, 0, sizeof c);
    clr_options_init(&c.opt);
    c.label = label;
    c.op = CLR_SUM;
    c.type = CLR_INT;
    c.data = a + off * 1001;
    c.n = n - off * 2002;
    tu_run_host(ctx, &c);
  }
  clr_options opt;
  clr_options_init(&opt);
  opt.accumulate_in = CLR_LONG;
  clr_status st = clr_scan_host(ctx, &opt, CLR_SUM, CLR_INT, a, b, n);
  clr_scan_check chk;
  if (TU_CHECK(st == CLR_OK, "%s: scan into a pinned array: %s: %s", label,
               clr_status_name(st), clr_context_error(ctx))) {
    clr_ref_scan_check_to(CLR_SUM, CLR_INT, CLR_LONG, 0, keep, b, n, 0, 0,
                          &chk);
    TU_CHECK(chk.ok, "%s: scan into a pinned array: %zu wrong", label,
             chk.n_bad);
  }
  st = clr_scan_host(ctx, NULL, CLR_MAX, CLR_INT, a, a, n);
  if (TU_CHECK(st == CLR_OK, "%s: scan of a pinned array in place: %s: %s",
               label, clr_status_name(st), clr_context_error(ctx))) {
    clr_ref_scan_check(CLR_MAX, CLR_INT, 0, keep, a, n, 0, &chk);
    TU_CHECK(chk.ok, "%s: scan in place: %zu wrong", label, chk.n_bad);
  }
  uint64_t off[4] = {0, 10, 10, n};
  long *res = clr_host_alloc(ctx, 3 * sizeof *res);
  st = clr_reduce_segments_host(ctx, NULL, CLR_MIN, CLR_INT, keep, n, off, 3,
                                res);
  if (TU_CHECK(st == CLR_OK && res, "%s: segments into a pinned array: %s",
               label, clr_status_name(st))) {
    clr_segments_check sc;
    clr_ref_segments_check(CLR_MAP_NONE, CLR_MIN, CLR_INT, CLR_INT, keep, off,
                           3, res, 0, &sc);
    TU_CHECK(sc.ok, "%s: segments into a pinned array: %zu wrong", label,
             sc.n_bad);
  }
  st = clr_host_free(ctx, keep);
  TU_EXPECT_STATUS(st, CLR_ERR_INVALID_ARGUMENT, "clr_host_free(malloc'd)");
  st = clr_host_free(ctx, a + 1);
  TU_EXPECT_STATUS(st, CLR_ERR_INVALID_ARGUMENT, "clr_host_free(inside)");
  st = clr_host_free(ctx, NULL);
  TU_EXPECT_STATUS(st, CLR_OK, "clr_host_free(NULL)");
  TU_CHECK(clr_host_alloc(ctx, 0) == NULL, "clr_host_alloc(0) gave memory");
  st = clr_host_free(ctx, a);
  TU_EXPECT_STATUS(st, CLR_OK, "clr_host_free(a)");
  st = clr_host_free(ctx, a);
  TU_EXPECT_STATUS(st, CLR_ERR_INVALID_ARGUMENT, "clr_host_free(a) twice");
  st = clr_host_free(ctx, res);
  TU_EXPECT_STATUS(st, CLR_OK, "clr_host_free(res)");
  (void)b; /* left to clr_context_release */
  free(keep);
}

/* The shipped block size (12 MiB), where a transfer's size sets its
 * threads: one per MiB, up to four, under 16 MiB (1 MiB and one element:
 * one thread; 4 MB: three; 10 MB: four), then one per 4 MiB.  Int sums
 * and scans, checked exactly. */
static void shipped_blocks(clr_context *ctx) {
  clr_tuning t = CLR_TUNING_INIT;
  if (clr_get_tuning(ctx, &t) != CLR_OK)
    tu_die("clr_get_tuning: %s", clr_context_error(ctx));
  t.stage_threads = 16;
  t.stage_block_kib = 12288;
  if (clr_set_tuning(ctx, &t) != CLR_OK)
    tu_die("clr_set_tuning(12 MiB blocks): %s", clr_context_error(ctx));
  static const size_t sizes[] = {(1 << 18) + 1, 1000000, 2500001, (4 << 20) + 1,
                                 5000011};
  tu_rng rng = {tu_seed(12288, 1, 2, 3)};
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
    size_t n = sizes[si];
    int *in = tu_xmalloc(n * sizeof *in), *keep = tu_xmalloc(n * sizeof *in);
    int *out = tu_xmalloc(n * sizeof *out);
    tu_fill(CLR_SUM, CLR_INT, TU_RANDOM, in, n, tu_next(&rng));
    memcpy(keep, in, n * sizeof *in);
    tu_case c;
    memset(&c, 0, sizeof c);
    clr_options_init(&c.opt);
    c.label = "12 MiB blocks, sum";
    c.op = CLR_SUM;
    c.type = CLR_INT;
    c.data = in;
    c.n = n;
    if (tu_run_host(ctx, &c) == CLR_OK)
      check_timed(ctx, "reduce, 12 MiB blocks", 16, n * sizeof *in, 0);
    clr_status st = clr_scan_host(ctx, NULL, CLR_SUM, CLR_INT, in, out, n);
    if (TU_CHECK(st == CLR_OK, "12 MiB blocks, scan n=%zu: %s: %s", n,
                 clr_status_name(st), clr_context_error(ctx))) {
      clr_scan_check chk;
      clr_ref_scan_check_to(CLR_SUM, CLR_INT, CLR_INT, 0, keep, out, n, 0, 0,
                            &chk);
      TU_CHECK(chk.ok,
               "12 MiB blocks, scan n=%zu: %zu elements wrong (first "
               "at %zu)",
               n, chk.n_bad, chk.worst_index);
    }
    free(in);
    free(keep);
    free(out);
  }
}

int main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  static const unsigned threads[] = {0, 1, 2, 3, 16};
  clr_context *ctx = tu_context_chunked(0, 1);
  for (size_t i = 0; i < sizeof threads / sizeof *threads; i++) {
    char label[64];
    snprintf(label, sizeof label, "stage.threads=%u", threads[i]);
    tu_section(label);
    set_staging(ctx, threads[i]);
    reductions(ctx, threads[i], label);
    dot_and_exact(ctx, threads[i], label);
    scans(ctx, threads[i], label);
    segments(ctx, threads[i], label);
  }
  tu_section("12 MiB blocks: 1 to 20 MB, threads by size");
  shipped_blocks(ctx);
  host_alloc(ctx, "clr_host_alloc, copied context");
  clr_context_release(ctx);

  /* The same where arrays are used in place (PoCL shares the host's
   * memory): clr_host_alloc is aligned ordinary memory. */
  tu_section("clr_host_alloc, in place");
  clr_context *unified = tu_context();
  host_alloc(unified, "clr_host_alloc, in place");
  clr_context_release(unified);

  /* Chunks of 64 KiB (16 blocks each), each staged block by block. */
  tu_section("streamed chunks, each staged in blocks");
  ctx = tu_context_chunked(64 * 1024, 1);
  set_staging(ctx, 3);
  reductions(ctx, 3, "chunks of 64 KiB");
  scans(ctx, 3, "chunks of 64 KiB");
  clr_context_release(ctx);
  return tu_finish("test_staging");
}
