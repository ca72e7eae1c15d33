/* CPU references of segmented reductions: see segment_reference.h. */
#include "segment_reference.h"

#include "ops_rows.h"
#include "progress_counter.h"
#include "reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int clr_ref_same_result(const clr_value *a, const clr_value *b) {
  size_t size = clr_type_size(a->type);
  int fp = a->type == CLR_FLOAT || a->type == CLR_DOUBLE;
  clr_value amax = *a, bmax = *b;
  amax.v = a->max;
  bmax.v = b->max;
  int v =
      (fp && isnan(clr_value_as_double(a)) && isnan(clr_value_as_double(b))) ||
      memcmp(&a->v, &b->v, size) == 0;
  int m = (fp && isnan(clr_value_as_double(&amax)) &&
           isnan(clr_value_as_double(&bmax))) ||
          memcmp(&a->max, &b->max, size) == 0;
  return v && m && a->index == b->index && a->max_index == b->max_index;
}

/* The reference of op over len elements at seg (the identity's when
 * len is 0; var and std with divisor len - ddof).  1, or 0 when out of
 * host memory. */
static int segment_reference(clr_map map, clr_op op, clr_type type, clr_type rt,
                             uint64_t ddof, const void *seg, size_t len,
                             clr_reference *ref) {
  if (!clr_ref_reduce_mapped(map, op, type, rt, seg, NULL, len, ref))
    return 0;
  clr_ref_set_ddof(ref, ddof);
  return 1;
}

/* 1 when op's results are records of var or std (value, mean, count). */
static int is_moments(clr_op op) {
  const clr_ref_op_row *row = clr_ref_op_info(op);
  return row && (row->flags & CLR_OPF_MOMENTS);
}

/* Result s's count of a var / std record (clr_result_bytes: value and
 * mean of rt, then the uint64 count), which clr_result_at leaves out. */
static uint64_t record_count(clr_type rt, const void *results, size_t s) {
  size_t size = clr_type_size(rt);
  uint64_t count;
  memcpy(&count, (const char *)results + s * (2 * size + 8) + 2 * size,
         sizeof count);
  return count;
}

/* The elements of n_segments segments [offsets[s], offsets[s + 1]). */
static uint64_t elements_of(const uint64_t *offsets, size_t n_segments) {
  return n_segments ? offsets[n_segments] - offsets[0] : 0;
}

/* The progress of segment_reference over elements elements in all:
 * clr_ref_reduce_mapped's passes over them (the map's, the fold's). */
static void plan_references(clr_map map, uint64_t elements) {
  clr_progress_plan((map == CLR_MAP_NONE ? 1 : 2) * elements);
}

/* Segment s's result got against its reference ref (of len elements)
 * into out: the worst, the last, the counts.  results: the raw results,
 * whose var / std records' counts must be len. */
static void check_segment(const clr_reference *ref, const clr_value *got,
                          const void *results, size_t s, size_t len,
                          size_t depth, size_t n_segments,
                          clr_segments_check *out) {
  clr_check chk;
  memset(&chk, 0, sizeof chk);
  if (is_moments(ref->op)) {
    /* The call's depth uncapped: a segment's chain of Welford updates and
     * merges may be longer than its length - 1 (and never longer than
     * the call's); the count must be the segment's length exactly. */
    clr_ref_check(ref, got, depth, &chk);
    if (record_count(got->type, results, s) != (uint64_t)len) {
      chk.ok = 0;
      chk.exact = 1;
      chk.overflowed = 0;
      chk.error = INFINITY;
    }
  } else if (len == 0) {
    /* The fold of nothing: the row's identity (records: at index
     * UINT64_MAX; a mean: 0 / 0, NaN), exactly. */
    chk.exact = 1;
    chk.ok = clr_ref_same_result(got, &ref->value);
    chk.error = chk.ok ? 0.0 : INFINITY;
  } else {
    clr_ref_check(ref, got, depth < len - 1 ? depth : len - 1, &chk);
  }
  double ratio = chk.bound > 0 && !chk.overflowed ? chk.error / chk.bound : 0.0;
  int first_bad = !chk.ok && out->ok;
  if (!chk.ok)
    out->n_bad++;
  out->n_overflowed += (size_t)chk.overflowed;
  /* (an accepted overflow, error and bound infinite, is the worst only
   * until a segment with a measured error comes) */
  int worst_overflowed = isinf(out->worst_error) && isinf(out->worst_bound);
  if (first_bad || (out->ok && s == 0) ||
      (out->ok && !chk.overflowed &&
       (worst_overflowed || ratio > out->worst_ratio))) {
    out->worst_index = s;
    out->exact = chk.exact;
    out->worst_error = chk.error;
    out->worst_bound = chk.bound;
    out->worst_ratio = ratio;
    out->got_worst = *got;
    out->ref_worst = ref->value;
  }
  if (!chk.ok)
    out->ok = 0;
  if (s + 1 == n_segments) {
    out->got_last = *got;
    out->ref_last = ref->value;
  }
}

static int segments_check(clr_map map, clr_op op, clr_type type, clr_type rt,
                          uint64_t ddof, const void *data,
                          const uint64_t *offsets, size_t n_segments,
                          const void *results, size_t depth,
                          clr_segments_check *out) {
  size_t esize = clr_type_size(type);
  memset(out, 0, sizeof *out);
  out->ok = 1;
  plan_references(map, elements_of(offsets, n_segments));
  for (size_t s = 0; s < n_segments; s++) {
    size_t a = (size_t)offsets[s], len = (size_t)offsets[s + 1] - a;
    clr_value got = clr_result_at(op, rt, results, s);
    clr_reference ref;
    if (!segment_reference(map, op, type, rt, ddof,
                           (const char *)data + a * esize, len, &ref))
      return 0;
    check_segment(&ref, &got, results, s, len, depth, n_segments, out);
  }
  return 1;
}

/* A range and its place in the list, ordered by (offset, length). */
typedef struct range_at {
  uint64_t offset, length;
  size_t index;
} range_at;

static int range_order(const void *pa, const void *pb) {
  const range_at *a = pa, *b = pb;
  if (a->offset != b->offset)
    return a->offset < b->offset ? -1 : 1;
  if (a->length != b->length)
    return a->length < b->length ? -1 : 1;
  return 0;
}

int clr_ref_segments_check(clr_map map, clr_op op, clr_type type, clr_type rt,
                           const void *data, const uint64_t *offsets,
                           size_t n_segments, const void *results, size_t depth,
                           clr_segments_check *out) {
  return segments_check(map, op, type, rt, 0, data, offsets, n_segments,
                        results, depth, out);
}

int clr_ref_segments_check_opt(const clr_options *opt, clr_op op, clr_type type,
                               const void *data, const uint64_t *offsets,
                               size_t n_segments, const void *results,
                               size_t depth, clr_segments_check *out) {
  return segments_check(opt ? opt->map : CLR_MAP_NONE, op, type,
                        clr_options_result_type(opt, op, type),
                        opt ? opt->ddof : 0, data, offsets, n_segments, results,
                        depth, out);
}

static int ranges_check(clr_map map, clr_op op, clr_type type, clr_type rt,
                        uint64_t ddof, const void *data, const uint64_t *ranges,
                        size_t n_ranges, const void *results, size_t depth,
                        clr_segments_check *out) {
  size_t esize = clr_type_size(type), n_refs = 0, at = 0;
  uint64_t elements = 0; /* of the distinct ranges */
  memset(out, 0, sizeof *out);
  out->ok = 1;
  /* Each distinct (offset, length) reduced once, where it lies (no copy
   * of its elements): sorted[] orders the ranges, ref_of[r] names range
   * r's reference in refs[]. */
  size_t count = n_ranges ? n_ranges : 1;
  range_at *sorted = malloc(count * sizeof *sorted);
  size_t *ref_of = malloc(count * sizeof *ref_of);
  clr_reference *refs = NULL;
  int ok = sorted && ref_of;
  if (ok) {
    for (size_t r = 0; r < n_ranges; r++)
      sorted[r] = (range_at){ranges[2 * r], ranges[2 * r + 1], r};
    qsort(sorted, n_ranges, sizeof *sorted, range_order);
    for (size_t k = 0; k < n_ranges; k++)
      if (k == 0 || range_order(&sorted[k - 1], &sorted[k]) != 0) {
        n_refs++;
        elements += sorted[k].length;
      }
    plan_references(map, elements);
    refs = malloc((n_refs ? n_refs : 1) * sizeof *refs);
    ok = refs != NULL;
  }
  for (size_t k = 0; ok && k < n_ranges; k++) {
    const range_at *g = &sorted[k];
    if (k == 0 || range_order(&sorted[k - 1], g) != 0)
      ok = segment_reference(map, op, type, rt, ddof,
                             (const char *)data + (size_t)g->offset * esize,
                             (size_t)g->length, &refs[at++]);
    ref_of[g->index] = at - 1;
  }
  for (size_t r = 0; ok && r < n_ranges; r++) {
    clr_value got = clr_result_at(op, rt, results, r);
    check_segment(&refs[ref_of[r]], &got, results, r, (size_t)ranges[2 * r + 1],
                  depth, n_ranges, out);
  }
  free(sorted);
  free(ref_of);
  free(refs);
  return ok;
}

/* Bytes of columns gathered at once by the matrix checks (at least one
 * column, whatever its length). */
#define MATRIX_GATHER_BYTES ((size_t)16 << 20)
/* Columns gathered at once at most: a row's piece of them is read as one
 * run of memory. */
#define MATRIX_GATHER_COLUMNS ((size_t)64)

size_t clr_ref_matrix_block(size_t rows, size_t cols, size_t esize) {
  size_t width = rows ? MATRIX_GATHER_BYTES / (rows * esize) : 1;
  if (width < 1)
    width = 1;
  if (width > MATRIX_GATHER_COLUMNS)
    width = MATRIX_GATHER_COLUMNS;
  return width > cols ? cols : width;
}

/* The w elements (esize bytes each) at src to dst, dst + step, ... */
static void gather_row(char *dst, size_t step, const char *src, size_t w,
                       size_t esize) {
  switch (esize) {
#define GATHER(T)                                                              \
  for (size_t k = 0; k < w; k++) {                                             \
    T v;                                                                       \
    memcpy(&v, src + k * sizeof v, sizeof v);                                  \
    memcpy(dst + k * step, &v, sizeof v);                                      \
  }                                                                            \
  break;
  case 2:
    GATHER(uint16_t)
  case 4:
    GATHER(uint32_t)
  case 8:
    GATHER(uint64_t)
#undef GATHER
  default:
    for (size_t k = 0; k < w; k++)
      memcpy(dst + k * step, src + k * esize, esize);
  }
}

int clr_ref_ranges_check(clr_map map, clr_op op, clr_type type, clr_type rt,
                         const void *data, const uint64_t *ranges,
                         size_t n_ranges, const void *results, size_t depth,
                         clr_segments_check *out) {
  return ranges_check(map, op, type, rt, 0, data, ranges, n_ranges, results,
                      depth, out);
}

int clr_ref_ranges_check_opt(const clr_options *opt, clr_op op, clr_type type,
                             const void *data, const uint64_t *ranges,
                             size_t n_ranges, const void *results, size_t depth,
                             clr_segments_check *out) {
  return ranges_check(opt ? opt->map : CLR_MAP_NONE, op, type,
                      clr_options_result_type(opt, op, type),
                      opt ? opt->ddof : 0, data, ranges, n_ranges, results,
                      depth, out);
}

static int matrix_check(clr_map map, clr_op op, clr_type type, clr_type rt,
                        uint64_t ddof, const void *data, size_t rows,
                        size_t cols, size_t pitch, int axis,
                        const void *results, size_t depth,
                        clr_segments_check *out) {
  size_t esize = clr_type_size(type);
  const char *base = data;
  memset(out, 0, sizeof *out);
  out->ok = 1;
  if (pitch < cols)
    pitch = cols;
  plan_references(map, (uint64_t)rows * cols);
  if (axis != 0) {
    for (size_t r = 0; r < rows; r++) {
      clr_value got = clr_result_at(op, rt, results, r);
      clr_reference ref;
      if (!segment_reference(map, op, type, rt, ddof, base + r * pitch * esize,
                             cols, &ref))
        return 0;
      check_segment(&ref, &got, results, r, cols, depth, rows, out);
    }
    return 1;
  }
  /* Axis 0: block columns [c0, c0 + width) gathered column-major into
   * scratch (column k of the block at scratch + k * rows), row by row. */
  size_t width = clr_ref_matrix_block(rows, cols, esize);
  char *scratch = malloc((width ? width : 1) * (rows ? rows : 1) * esize);
  if (!scratch)
    return 0;
  for (size_t c0 = 0; c0 < cols; c0 += width) {
    size_t w = cols - c0 < width ? cols - c0 : width;
    for (size_t r = 0; r < rows; r++)
      gather_row(scratch + r * esize, rows * esize,
                 base + (r * pitch + c0) * esize, w, esize);
    for (size_t k = 0; k < w; k++) {
      size_t c = c0 + k;
      clr_value got = clr_result_at(op, rt, results, c);
      clr_reference ref;
      if (!segment_reference(map, op, type, rt, ddof,
                             scratch + k * rows * esize, rows, &ref)) {
        free(scratch);
        return 0;
      }
      check_segment(&ref, &got, results, c, rows, depth, cols, out);
    }
  }
  free(scratch);
  return 1;
}

int clr_ref_matrix_check(clr_map map, clr_op op, clr_type type, clr_type rt,
                         const void *data, size_t rows, size_t cols,
                         size_t pitch, int axis, const void *results,
                         size_t depth, clr_segments_check *out) {
  return matrix_check(map, op, type, rt, 0, data, rows, cols, pitch, axis,
                      results, depth, out);
}

int clr_ref_matrix_check_opt(const clr_options *opt, clr_op op, clr_type type,
                             const void *data, size_t rows, size_t cols,
                             size_t pitch, int axis, const void *results,
                             size_t depth, clr_segments_check *out) {
  return matrix_check(opt ? opt->map : CLR_MAP_NONE, op, type,
                      clr_options_result_type(opt, op, type),
                      opt ? opt->ddof : 0, data, rows, cols, pitch, axis,
                      results, depth, out);
}

void clr_ref_segmented_scan_check(clr_op op, clr_type type, clr_type out_type,
                                  int exclusive, const void *in,
                                  const void *out, const uint64_t *offsets,
                                  size_t n_segments, size_t depth,
                                  int flush_to_zero, clr_scan_check *res) {
  size_t isize = clr_type_size(type), osize = clr_type_size(out_type);
  memset(res, 0, sizeof *res);
  res->ok = 1;
  clr_progress_plan(elements_of(offsets, n_segments)); /* one pass */
  for (size_t s = 0; s < n_segments; s++) {
    size_t a = (size_t)offsets[s], len = (size_t)offsets[s + 1] - a;
    if (len == 0)
      continue;
    clr_scan_check chk;
    clr_ref_scan_check_to(op, type, out_type, exclusive,
                          (const char *)in + a * isize,
                          (const char *)out + a * osize, len,
                          depth < len ? depth : len, flush_to_zero, &chk);
    int first_bad = !chk.ok && res->ok;
    res->n_bad += chk.n_bad;
    res->n_overflowed += chk.n_overflowed;
    if (first_bad || (res->ok && chk.worst_ratio >= res->worst_ratio)) {
      res->exact = chk.exact;
      res->worst_index = a + chk.worst_index;
      res->worst_error = chk.worst_error;
      res->worst_bound = chk.worst_bound;
      res->worst_ratio = chk.worst_ratio;
      res->got_worst = chk.got_worst;
      res->ref_worst = chk.ref_worst;
    }
    if (!chk.ok)
      res->ok = 0;
    res->got_last = chk.got_last;
    res->ref_last = chk.ref_last;
  }
}
