/* How far src/check's loops are (src/check/progress_counter.h) and the
 * progress line's text (src/cli/progress.c's cli_progress_format): the
 * counter's blocks and plans, what each reporting call of src/check plans
 * and reports, and the line for work, bytes of a known size, bytes of a
 * stream and a phase with nothing planned.  No device. */
#include "datagen.h"
#include "exact_sum.h"
#include "expr_eval.h"
#include "progress.h"
#include "progress_counter.h"
#include "reference.h"
#include "scan_reference.h"
#include "segment_reference.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static clr_progress counter;

static uint64_t done_of(void) {
  return atomic_load(&counter.done) + counter.pending;
}
static uint64_t total_of(void) { return atomic_load(&counter.total); }

/* A CLR_PROGRESS_FOR loop over n elements, doing nothing. */
static void loop(size_t n) {
  size_t visited = 0;
  CLR_PROGRESS_FOR(i, n) { visited += i < n; }
  if (visited != n)
    tu_die("CLR_PROGRESS_FOR over %zu elements visited %zu", n, visited);
}

static void test_counter(void) {
  const size_t B = CLR_PROGRESS_BLOCK;
  /* off: nothing reported, nothing planned */
  clr_progress_now = NULL;
  clr_progress_reset(&counter);
  clr_progress_plan(100);
  loop(3 * B + 5);
  clr_progress_add(7);
  TU_CHECK(done_of() == 0 && total_of() == 0,
           "off: the counter untouched (done %llu, total %llu)",
           (unsigned long long)done_of(), (unsigned long long)total_of());
  TU_CHECK(clr_progress_fraction(&counter) == -1.0,
           "nothing planned: fraction -1");

  clr_progress_now = &counter;
  clr_progress_plan(3 * B + 5);
  clr_progress_plan(42); /* a plan made stands */
  TU_CHECK(total_of() == 3 * B + 5, "the first plan stands (total %llu)",
           (unsigned long long)total_of());
  /* every element once, in order; a block reported as it ends */
  size_t next = 0, in_order = 1, done_at_2b = 0;
  CLR_PROGRESS_FOR(i, 3 * B + 5) {
    in_order &= i == next++;
    if (i == 2 * B)
      done_at_2b = (size_t)atomic_load(&counter.done);
  }
  TU_CHECK(in_order && next == 3 * B + 5 && done_at_2b == 2 * B,
           "CLR_PROGRESS_FOR: %zu elements in order, %zu reported as the "
           "third block begins",
           next, done_at_2b);
  TU_CHECK(done_of() == 3 * B + 5 && atomic_load(&counter.done) == 3 * B,
           "a loop reports its n elements (done %llu + pending %llu)",
           (unsigned long long)atomic_load(&counter.done),
           (unsigned long long)counter.pending);
  double f = clr_progress_fraction(&counter);
  TU_CHECK(f > 0.99 && f < 1.0, "fraction %.6f: the rest still pending", f);

  /* continue and break as in a plain loop */
  clr_progress_reset(&counter);
  size_t odd = 0, last = 0;
  CLR_PROGRESS_FOR(i, 2 * B + 1) {
    if (i % 2 == 0)
      continue;
    odd++;
  }
  CLR_PROGRESS_FOR(i, 5 * B) {
    last = i;
    if (i == B + 10)
      break;
  }
  TU_CHECK(odd == B && last == B + 10 && done_of() == 2 * B + 1 + B + 10,
           "continue and break: %zu odd elements, the last %zu, %llu "
           "reported",
           odd, last, (unsigned long long)done_of());

  /* short calls (segments of 7): gathered, then reported a block at once */
  clr_progress_reset(&counter);
  TU_CHECK(done_of() == 0 && total_of() == 0, "reset: zero");
  size_t calls = B / 7 + 1;
  for (size_t k = 0; k + 1 < calls; k++)
    loop(7);
  TU_CHECK(atomic_load(&counter.done) == 0 &&
               counter.pending == 7 * (calls - 1),
           "short calls gathered below a block (pending %llu)",
           (unsigned long long)counter.pending);
  loop(7);
  TU_CHECK(atomic_load(&counter.done) == 7 * calls && counter.pending == 0,
           "and reported once a block's worth is in (done %llu)",
           (unsigned long long)atomic_load(&counter.done));
  loop(0);
  TU_CHECK(done_of() == 7 * calls, "no element: nothing reported");

  /* weighted: weight work an element */
  clr_progress_reset(&counter);
  CLR_PROGRESS_FOR_WEIGHTED(i, B + 3, 15) { (void)i; }
  TU_CHECK(done_of() == 15 * (B + 3), "weighted loop: 15 an element (%llu)",
           (unsigned long long)done_of());

  /* more reported than planned reads as all of it */
  clr_progress_reset(&counter);
  clr_progress_plan(10);
  clr_progress_add(B + 1);
  TU_CHECK(clr_progress_fraction(&counter) == 1.0, "beyond the plan: 1");
  clr_progress_reset(&counter);
}

/* Reset, run a call of src/check, and compare what it planned and
 * reported. */
#define CALL(what, want_total, call)                                           \
  do {                                                                         \
    clr_progress_reset(&counter);                                              \
    call;                                                                      \
    TU_CHECK(total_of() == (uint64_t)(want_total) &&                           \
                 done_of() == (uint64_t)(want_total),                          \
             "%s: planned %llu, reported %llu (want %llu)", what,              \
             (unsigned long long)total_of(), (unsigned long long)done_of(),    \
             (unsigned long long)(want_total));                                \
  } while (0)

static void test_calls(void) {
  const size_t n = 3 * CLR_PROGRESS_BLOCK + 1234;
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  double *scan = malloc(n * sizeof *scan);
  float *res = malloc(n * sizeof *res);
  uint64_t *offsets = malloc((n / 7 + 2) * sizeof *offsets);
  char desc[256];
  if (!x || !y || !scan || !res || !offsets)
    tu_die("out of memory");
  clr_progress_now = &counter;

  CALL("clr_gen_data_slice", n,
       clr_gen_data_slice(CLR_SUM, CLR_FLOAT, 42, n, 0, x, n, desc,
                          sizeof desc));
  CALL("clr_gen_data_slice (a slice)", n - 100,
       clr_gen_data_slice(CLR_SUM, CLR_FLOAT, 43, n, 100, y, n - 100, desc,
                          sizeof desc));
  clr_reference ref;
  CALL("clr_ref_reduce_to", n,
       clr_ref_reduce_to(CLR_SUM, CLR_FLOAT, CLR_FLOAT, x, n, &ref));
  CALL("clr_ref_reduce_mapped, no map", n,
       clr_ref_reduce_mapped(CLR_MAP_NONE, CLR_MAX, CLR_FLOAT, CLR_FLOAT, x,
                             NULL, n, &ref));
  CALL("clr_ref_reduce_mapped, abs: the map's pass and the fold's", 2 * n,
       clr_ref_reduce_mapped(CLR_MAP_ABS, CLR_SUM, CLR_FLOAT, CLR_FLOAT, x,
                             NULL, n, &ref));
  CALL("clr_ref_reduce_mapped, a dot product", 2 * n,
       clr_ref_reduce_mapped(CLR_MAP_NONE, CLR_SUM, CLR_FLOAT, CLR_FLOAT, x, y,
                             n, &ref));
  clr_value exact;
  CALL("clr_ref_exact_sum", n, clr_ref_exact_sum(CLR_FLOAT, x, n, &exact));

  /* a caller's plan stands over its calls */
  clr_progress_reset(&counter);
  clr_progress_plan(5 * (uint64_t)n);
  clr_ref_reduce_to(CLR_SUM, CLR_FLOAT, CLR_FLOAT, x, n, &ref);
  clr_ref_exact_sum(CLR_FLOAT, x, n, &exact);
  TU_CHECK(total_of() == 5 * (uint64_t)n && done_of() == 2 * (uint64_t)n,
           "a caller's plan stands: planned %llu, reported %llu",
           (unsigned long long)total_of(), (unsigned long long)done_of());

  /* the scan and its check of every element */
  double acc = 0;
  for (size_t i = 0; i < n; i++)
    scan[i] = acc += x[i];
  clr_scan_check sc;
  CALL("clr_ref_scan_check_to", n,
       clr_ref_scan_check_to(CLR_SUM, CLR_FLOAT, CLR_DOUBLE, 0, x, scan, n, 0,
                             0, &sc));

  /* segments of 7 (the last shorter), starting at element 5 */
  size_t S = 0;
  for (size_t a = 5; a < n; a += 7)
    offsets[S++] = a;
  offsets[S] = n;
  for (size_t s = 0; s < S; s++) {
    clr_reference r;
    clr_ref_reduce_to(CLR_SUM, CLR_FLOAT, CLR_FLOAT, x + offsets[s],
                      offsets[s + 1] - offsets[s], &r);
    res[s] = r.value.v.f;
  }
  clr_progress_now = &counter;
  clr_segments_check chk;
  CALL("clr_ref_segments_check", n - 5,
       clr_ref_segments_check(CLR_MAP_NONE, CLR_SUM, CLR_FLOAT, CLR_FLOAT, x,
                              offsets, S, res, 0, &chk));
  CALL("clr_ref_segments_check, map abs", 2 * (n - 5),
       clr_ref_segments_check(CLR_MAP_ABS, CLR_SUM, CLR_FLOAT, CLR_FLOAT, x,
                              offsets, S, res, 0, &chk));
  CALL("clr_ref_segments_check, no segment", 0,
       clr_ref_segments_check(CLR_MAP_NONE, CLR_SUM, CLR_FLOAT, CLR_FLOAT, x,
                              offsets, 0, res, 0, &chk));
  /* a matrix: x as 600 rows of 300 (pitch 301: 180599 elements, within
   * x's n), both axes */
  _Static_assert(599 * 301 + 300 <= 3 * CLR_PROGRESS_BLOCK + 1234,
                 "the matrix lies within x");
  CALL("clr_ref_matrix_check, axis 0", 600 * 300,
       clr_ref_matrix_check(CLR_MAP_NONE, CLR_SUM, CLR_FLOAT, CLR_FLOAT, x, 600,
                            300, 301, 0, res, 0, &chk));
  CALL("clr_ref_matrix_check, axis 1, map square", 2 * 600 * 300,
       clr_ref_matrix_check(CLR_MAP_SQUARE, CLR_SUM, CLR_FLOAT, CLR_FLOAT, x,
                            600, 300, 301, 1, res, 0, &chk));
  clr_scan_check ssc;
  CALL("clr_ref_segmented_scan_check", n - 5,
       clr_ref_segmented_scan_check(CLR_SUM, CLR_FLOAT, CLR_DOUBLE, 0, x, scan,
                                    offsets, S, 0, 0, &ssc));
  /* ranges: each distinct one reduced once */
  uint64_t ranges[] = {10, 1000, 0, 5, 10, 1000, 3, 70000};
  float rres[4] = {0, 0, 0, 0};
  CALL("clr_ref_ranges_check: its distinct ranges' elements", 1000 + 5 + 70000,
       clr_ref_ranges_check(CLR_MAP_NONE, CLR_SUM, CLR_FLOAT, CLR_FLOAT, x,
                            ranges, 4, rres, 0, &chk));

  /* a map expression: its values count 15 an element (EVAL_WORK), their
   * fold 1 */
  clr_map_eval m;
  char why[256];
  clr_options opt;
  clr_options_init(&opt);
  opt.map = CLR_MAP_EXPR;
  opt.map_expr = "x * 2.0f";
  clr_expr_reference er;
  if (clr_map_eval_init(&m, opt.map_expr, CLR_FLOAT, 0, why, sizeof why) != 0)
    tu_die("clr_map_eval_init: %s", why);
  CALL("clr_ref_reduce_expr", 16 * n,
       clr_ref_reduce_expr(&m, &opt, CLR_SUM, CLR_FLOAT, x, NULL, n, &er, why,
                           sizeof why));
  CALL("clr_ref_segments_check_expr", 16 * (n - 5),
       clr_ref_segments_check_expr(&m, &opt, CLR_SUM, CLR_FLOAT, x, offsets,
                                   NULL, S, res, 0, &chk, why, sizeof why));
  clr_map_eval_free(&m);

  clr_progress_now = NULL;
  free(x);
  free(y);
  free(scan);
  free(res);
  free(offsets);
}

static void formats(const char *phase, int bytes, uint64_t done, uint64_t total,
                    double seconds, const char *want) {
  clr_progress c;
  char line[256];
  clr_progress_reset(&c);
  atomic_store(&c.done, done);
  atomic_store(&c.total, total);
  cli_progress_format(line, sizeof line, phase, &c, bytes, seconds);
  TU_CHECK(strcmp(line, want) == 0, "line '%s' (want '%s')", line, want);
}

static void test_format(void) {
  formats("generating 1500000000 float values", 0, 645000000, 1500000000, 12.3,
          "generating 1500000000 float values: 43%, 12 s");
  formats("sum of float: the CPU reference", 0, 0, 1000, 0.4,
          "sum of float: the CPU reference: 0%, 0 s");
  formats("sum of float: the CPU reference", 0, 999, 1000, 1,
          "sum of float: the CPU reference: 99%, 1 s");
  formats("sum of float: the CPU reference", 0, 2000, 1000, 2,
          "sum of float: the CPU reference: 100%, 2 s");
  formats("sum of float: timed run 3 of 10", 0, 0, 0, 7,
          "sum of float: timed run 3 of 10, 7 s");
  formats("reading 'x.f32'", 1, 2580000000u, 6000000000u, 3,
          "reading 'x.f32': 43% of 5.6 GiB, 3 s");
  formats("reading '/dev/stdin'", 1, 1288490189, 0, 4,
          "reading '/dev/stdin': 1.2 GiB so far, 4 s");
  formats("reading '/dev/stdin'", 1, 0, 0, 0,
          "reading '/dev/stdin': 0 bytes so far, 0 s");
  formats("reading 'small'", 1, 512, 1536, 0,
          "reading 'small': 33% of 1.5 KiB, 0 s");
  formats("reading 'mid'", 1, 0, 24u << 20, 0,
          "reading 'mid': 0% of 24.0 MiB, 0 s");
}

int main(void) {
  test_counter();
  tu_section("counter");
  test_calls();
  tu_section("src/check's calls");
  test_format();
  tu_section("the progress line");
  return tu_finish("test_progress");
}
