/* Segment layouts of the segmented reduction and scan tests
 * (tests/test_segments.c, tests/scan/test_scan_segments.c): CSR offsets
 * over n elements, from every segment of length 1 to one of all n, with
 * empty segments anywhere and lengths straddling a work-item's units. */
#ifndef CLR_TESTS_SEGMENT_LAYOUTS_H
#define CLR_TESTS_SEGMENT_LAYOUTS_H

#include "test_util.h"

#include <stdint.h>

typedef enum layout {
  L_ONES,      /* every segment one element                        */
  L_RANDOM,    /* random lengths 0..200, about one in ten empty    */
  L_ALL,       /* one segment of all n                             */
  L_THREE,     /* three long segments                              */
  L_MIXED,     /* one long segment among short and empty ones      */
  L_EMPTY_END, /* empty segments first and last, 2^k +- 1 lengths  */
  L_STRADDLE,  /* lengths around the units of a work-item: 15..17, 127..129 */
  L_COUNT
} layout;

static TU_UNUSED const char *const layout_names[L_COUNT] = {
    "ones", "random", "all", "three", "mixed", "empty-ends", "straddle"};

/* Offsets of a layout over n elements into a new array; *segments set. */
static TU_UNUSED uint64_t *make_offsets(layout l, size_t n, uint64_t seed,
                                        size_t *segments) {
  tu_rng r = {seed};
  size_t cap = 2 * n + 16, s = 0;
  uint64_t *off = tu_xmalloc((cap + 1) * sizeof *off);
  size_t at = 0;
  off[0] = 0;
  static const size_t straddle[] = {15, 16, 17, 127, 128, 129, 1, 0, 33};
  static const size_t pow2[] = {0, 1, 2, 3, 7, 8, 9, 31, 32, 33, 255, 256, 257};
  while (at < n && s + 4 < cap) {
    size_t len;
    switch (l) {
    case L_ONES:
      len = 1;
      break;
    case L_RANDOM:
      len = tu_below(&r, 10) == 0 ? 0 : 1 + (size_t)tu_below(&r, 200);
      break;
    case L_ALL:
      len = n;
      break;
    case L_THREE:
      len = n / 3 + 1;
      break;
    case L_MIXED:
      len = s == 5 ? n / 2 + 1 : (size_t)tu_below(&r, 3);
      break;
    case L_EMPTY_END:
      len = s < 3 ? 0 : pow2[tu_below(&r, sizeof pow2 / sizeof *pow2)];
      break;
    default:
      len = straddle[s % (sizeof straddle / sizeof *straddle)];
      break;
    }
    at = at + len > n ? n : at + len;
    off[++s] = at;
  }
  if (at < n) /* cap reached: the rest is one segment */
    off[++s] = at = n;
  if (l == L_EMPTY_END)
    for (int k = 0; k < 3 && s < cap; k++)
      off[++s] = n;
  *segments = s;
  return off;
}

/* One segmented call: n elements of data in the given segments, with
 * options; what says what it is. */
typedef struct seg_case {
  clr_options opt;
  clr_op op;
  clr_type type;
  const void *data;
  size_t n;
  const uint64_t *offsets;
  size_t segments;
  char what[256];
} seg_case;

/* The small arrays of the sets run under Oclgrind (every work-item
 * interpreted), and an operation with its type. */
static TU_UNUSED const size_t seg_small_sizes[] = {1, 3, 31, 257};
#define SEG_N_SMALL (sizeof seg_small_sizes / sizeof *seg_small_sizes)
typedef struct seg_op_type {
  clr_op op;
  clr_type type;
} seg_op_type;

#endif
