/* libFuzzer harness: the tuning-file reader (clr_tuning_parse in
 * src/lib/tuning.c), which reads the shipped data/tuning files and
 * the user's file.
 *
 * The input is the text of a file (any bytes, NULs included).  Parsed over
 * a valid tuning, the result must still pass the validator that
 * clr_set_tuning uses (every applied value within its key's limits), the
 * match= value must be a C string without a line break or a comment; the
 * writer's text of that tuning must read back to the same values over a
 * different valid tuning (so parser, validator and writer agree).  Parsing
 * with no tuning (the shipped-file scan, match= only) must give the same
 * match. */
#include "../test_plain.h"
#include "internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Two valid tunings, every value different (side by side): the parse
 * starts from a, the written text is read back over b. */
static void two_tunings(clr_tuning *a, clr_tuning *b) {
  memset(a, 0, sizeof *a);
  memset(b, 0, sizeof *b);
#define BOTH(field, value_a, value_b) (a->field = value_a, b->field = value_b)
  BOTH(reduce_wg, 256, 3);
  BOTH(reduce_vec_bytes, 16, 1);
  BOTH(reduce_layout, CLR_LAYOUT_STRIDED, CLR_LAYOUT_CONTIGUOUS);
  BOTH(reduce_groups_per_cu, 8, 1024);
  BOTH(scan_wg, 256, 65536);
  BOTH(scan_per_item, 1, 7);
  BOTH(scan_kernel, CLR_SCAN_DECOUPLED, CLR_SCAN_BRENT_KUNG);
  BOTH(decoupled_items, 32, 1);
  BOTH(decoupled_wg, 256, 5);
  BOTH(decoupled_run_items, 16384, 3);
  BOTH(decoupled_spin, 4096, 0);
  BOTH(exact_terms, 2, 8);
  BOTH(exact_vec_bytes, 32, 1);
  BOTH(exact_int64_atomics, 1, 0);
  BOTH(minmax_vec_bytes, 32, 128);
  BOTH(stage_threads, 8, 0);
  BOTH(reduce_single_launch, 1, 0);
  BOTH(stage_block_kib, 4096, 4);
  BOTH(seg_units, 16, 256);
  BOTH(seg_units_wide, 8, 1);
  BOTH(reduce_min_vectors, 16, 1);
  BOTH(scan_stream_bytes, 0, 4096);
  BOTH(warp_shuffles, 1, 0);
  BOTH(decoupled_slots, 1, 0);
  BOTH(reduce_min_groups_cu, 2, 1024);
#undef BOTH
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  clr_tuning t = CLR_TUNING_INIT, back = CLR_TUNING_INIT;
  char match[256], match2[256], why[256], text[4096];
  memset(match, 'x', sizeof match);
  two_tunings(&t, &back);
  if (!clr_tuning_check(&t, why, sizeof why))
    abort();
  clr_tuning_parse((const char *)data, size, &t, match, sizeof match);
  if (!clr_tuning_check(&t, why, sizeof why)) {
    fprintf(stderr, "parsed tuning fails the validator: %s\n", why);
    abort();
  }
  if (!memchr(match, '\0', sizeof match) || strchr(match, '\n') ||
      strchr(match, '#'))
    abort();

  /* Match only, as the shipped-file scan reads. */
  memset(match2, 'y', sizeof match2);
  clr_tuning_parse((const char *)data, size, NULL, match2, sizeof match2);
  if (strcmp(match, match2) != 0)
    abort();

  /* Writer and parser agree. */
  size_t n = clr_tuning_format(&t, text, sizeof text);
  if (n == 0 || n >= sizeof text || strlen(text) != n)
    abort();
  clr_tuning_parse(text, n, &back, NULL, 0);
  if (!tu_same_tuning(&t, &back)) {
    fprintf(stderr, "written tuning does not read back:\n%s", text);
    abort();
  }
  return 0;
}
