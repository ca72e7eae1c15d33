/* The progress counter of src/check's loops: see progress_counter.h. */
#include "progress_counter.h"

clr_progress *clr_progress_now = NULL;

void clr_progress_reset(clr_progress *p) {
  atomic_store_explicit(&p->done, 0, memory_order_relaxed);
  atomic_store_explicit(&p->total, 0, memory_order_relaxed);
  p->pending = 0;
}

double clr_progress_fraction(const clr_progress *p) {
  uint64_t total = atomic_load_explicit(&p->total, memory_order_relaxed);
  uint64_t done = atomic_load_explicit(&p->done, memory_order_relaxed);
  if (total == 0)
    return -1.0;
  return done >= total ? 1.0 : (double)done / (double)total;
}
