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
#include "internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void base_a(clr_tuning *t) {
  memset(t, 0, sizeof *t);
  t->reduce_wg = 256;
  t->reduce_vec_bytes = 16;
  t->reduce_layout = CLR_LAYOUT_STRIDED;
  t->reduce_groups_per_cu = 8;
  t->scan_wg = 256;
  t->scan_per_item = 1;
  t->scan_kernel = CLR_SCAN_DECOUPLED;
  t->decoupled_items = 32;
  t->decoupled_wg = 256;
  t->exact_terms = 2;
  t->exact_vec_bytes = 32;
  t->exact_int64_atomics = 1;
  t->minmax_vec_bytes = 32;
}

static void base_b(clr_tuning *t) {
  memset(t, 0, sizeof *t);
  t->reduce_wg = 3;
  t->reduce_vec_bytes = 1;
  t->reduce_layout = CLR_LAYOUT_CONTIGUOUS;
  t->reduce_groups_per_cu = 1024;
  t->scan_wg = 65536;
  t->scan_per_item = 7;
  t->scan_kernel = CLR_SCAN_BRENT_KUNG;
  t->decoupled_items = 1;
  t->decoupled_wg = 5;
  t->exact_terms = 8;
  t->exact_vec_bytes = 1;
  t->exact_int64_atomics = 0;
  t->minmax_vec_bytes = 128;
}

static int same_values(const clr_tuning *a, const clr_tuning *b) {
  return a->reduce_wg == b->reduce_wg &&
         a->reduce_vec_bytes == b->reduce_vec_bytes &&
         a->reduce_layout == b->reduce_layout &&
         a->reduce_groups_per_cu == b->reduce_groups_per_cu &&
         a->scan_wg == b->scan_wg && a->scan_per_item == b->scan_per_item &&
         a->scan_kernel == b->scan_kernel &&
         a->decoupled_items == b->decoupled_items &&
         a->decoupled_wg == b->decoupled_wg &&
         a->exact_terms == b->exact_terms &&
         a->exact_vec_bytes == b->exact_vec_bytes &&
         a->exact_int64_atomics == b->exact_int64_atomics &&
         a->minmax_vec_bytes == b->minmax_vec_bytes;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  clr_tuning t, back;
  char match[256], match2[256], why[256], text[4096];
  memset(match, 'x', sizeof match);
  base_a(&t);
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
  base_b(&back);
  clr_tuning_parse(text, n, &back, NULL, 0);
  if (!same_values(&t, &back)) {
    fprintf(stderr, "written tuning does not read back:\n%s", text);
    abort();
  }
  return 0;
}
