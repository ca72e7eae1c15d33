/* How far the long loops of src/check are (the generated data, the CPU
 * references, the per-element and per-segment checks), for a progress
 * line such as clreduce's --progress: the work done against the work
 * planned, counted in elements (one for each element a pass goes over; a
 * pass much slower than a plain loop, a map expression's evaluation,
 * counts more).
 *
 * Off unless a caller points clr_progress_now at a counter: clreduce does
 * while its progress line is drawn; the tests, the bench and clreduce-mpi
 * never do.  The loops report a block of CLR_PROGRESS_BLOCK elements at a
 * time (CLR_PROGRESS_FOR), never each element, so that they do no more
 * work an element than without it; off, a report only finds the pointer
 * NULL.
 *
 * Planning: each public call of src/check that loops plans the work it
 * will do (clr_progress_plan) before it starts, but a plan made stands, so
 * the outermost plan counts: a check of every segment plans all their
 * elements, and the reference of each segment it calls plans nothing
 * more.  A caller that makes several calls one phase plans them all
 * first, or resets the counter between them.
 *
 * What each call plans: clr_gen_data_slice its n elements (a report each
 * block it generates); clr_ref_reduce_to, clr_ref_exact_sum and
 * clr_ref_scan_check_to n; clr_ref_reduce_mapped n, or 2n with a map or a
 * second array (the mapped values, then their fold);
 * clr_ref_segments_check and clr_ref_ranges_check their (distinct)
 * segments' elements, twice with a map; clr_ref_segmented_scan_check its
 * segments' elements; clr_ref_reduce_expr and clr_ref_segments_check_expr
 * 16 an element (15 the expression's value, 1 its fold).
 *
 * One thread reports: the one that runs the loops, sets clr_progress_now
 * and resets the counter.  Any thread may read done and total (or
 * clr_progress_fraction) at any time. */
#ifndef CLR_CHECK_PROGRESS_COUNTER_H
#define CLR_CHECK_PROGRESS_COUNTER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Elements between two reports of a loop (a power of two). */
#define CLR_PROGRESS_BLOCK ((size_t)65536)

typedef struct clr_progress {
  _Atomic uint64_t done;  /* work reported, at most CLR_PROGRESS_BLOCK - 1
                             behind what was done                          */
  _Atomic uint64_t total; /* the work planned; 0: none planned yet         */
  uint64_t pending;       /* the reporting thread's: work done, not yet in
                             done (short calls', gathered up to a block)   */
} clr_progress;

/* Where the loops report; NULL (the default): nowhere. */
extern clr_progress *clr_progress_now;

/* Zero p (done, total, pending), before a new phase's work. */
void clr_progress_reset(clr_progress *p);

/* done / total in [0, 1] (a report beyond the plan reads as 1); -1 when no
 * work is planned. */
double clr_progress_fraction(const clr_progress *p);

/* Plan work (elements) for the call about to run, unless a plan stands. */
static inline void clr_progress_plan(uint64_t work) {
  clr_progress *p = clr_progress_now;
  if (p && atomic_load_explicit(&p->total, memory_order_relaxed) == 0)
    atomic_store_explicit(&p->total, work, memory_order_relaxed);
}

/* Report work done: into done once a block's worth has gathered. */
static inline void clr_progress_add(uint64_t work) {
  clr_progress *p = clr_progress_now;
  if (!p)
    return;
  p->pending += work;
  if (p->pending >= CLR_PROGRESS_BLOCK) {
    atomic_fetch_add_explicit(&p->done, p->pending, memory_order_relaxed);
    p->pending = 0;
  }
}

/* The end of the block of elements that starts at i, of n. */
static inline size_t clr_progress_block_end(size_t i, size_t n) {
  return n - i > CLR_PROGRESS_BLOCK ? i + CLR_PROGRESS_BLOCK : n;
}

/* for (size_t i = 0; i < n; i++), run in blocks of CLR_PROGRESS_BLOCK
 * elements, each reported (weight work an element) as it ends: no work
 * an element beyond the loop's own.  The body's continue and break act
 * as in a plain loop (a break ends the loop, its block's part reported);
 * n is read once. */
#define CLR_PROGRESS_FOR_WEIGHTED(i, n, weight)                                \
  for (size_t i = 0, i##_from = 0, i##_end = 0, i##_n = (n);                   \
       i == i##_end && i < i##_n; clr_progress_add((weight) * (i - i##_from))) \
    for (i##_from = i, i##_end = clr_progress_block_end(i, i##_n);             \
         i < i##_end; i++)

#define CLR_PROGRESS_FOR(i, n) CLR_PROGRESS_FOR_WEIGHTED(i, n, 1)

#endif
