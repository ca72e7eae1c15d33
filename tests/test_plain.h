/* Test helpers that need neither OpenCL nor the check library, so the
 * fuzz harnesses (tests/fuzz/) share them with the test programs.
 * Header-only (static inline functions). */
#ifndef CLR_TEST_PLAIN_H
#define CLR_TEST_PLAIN_H

#include "clreduce.h"

#include <stdio.h>
#include <stdlib.h>

/* The whole of a file in a malloc'd buffer (*len bytes), or NULL when it
 * cannot be opened or memory runs out (errno says which). */
static inline unsigned char *tu_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 1 << 16, n = 0;
  unsigned char *buf = malloc(cap);
  for (;;) {
    if (buf && n == cap) {
      cap *= 2;
      unsigned char *nb = realloc(buf, cap);
      if (!nb)
        free(buf);
      buf = nb;
    }
    if (!buf)
      break;
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0)
      break;
  }
  fclose(f);
  *len = n;
  return buf;
}

/* Every field of two tunings but origin equal. */
static inline int tu_same_tuning(const clr_tuning *a, const clr_tuning *b) {
  return a->reduce_wg == b->reduce_wg &&
         a->reduce_vec_bytes == b->reduce_vec_bytes &&
         a->reduce_layout == b->reduce_layout &&
         a->reduce_groups_per_cu == b->reduce_groups_per_cu &&
         a->scan_wg == b->scan_wg && a->scan_per_item == b->scan_per_item &&
         a->scan_kernel == b->scan_kernel &&
         a->decoupled_items == b->decoupled_items &&
         a->decoupled_wg == b->decoupled_wg &&
         a->decoupled_run_items == b->decoupled_run_items &&
         a->decoupled_spin == b->decoupled_spin &&
         a->exact_terms == b->exact_terms &&
         a->exact_vec_bytes == b->exact_vec_bytes &&
         a->exact_int64_atomics == b->exact_int64_atomics &&
         a->minmax_vec_bytes == b->minmax_vec_bytes &&
         a->stage_threads == b->stage_threads &&
         a->reduce_single_launch == b->reduce_single_launch &&
         a->stage_block_kib == b->stage_block_kib;
}

#endif
