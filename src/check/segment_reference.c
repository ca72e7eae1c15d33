/* CPU references of segmented reductions: see segment_reference.h. */
#include "segment_reference.h"

#include "reference.h"

#include <math.h>
#include <string.h>

/* An empty segment's result, exactly: a and b the same to the bit, any
 * NaN matching NaN (a mean of nothing, a NaN-skipping min of nothing),
 * indices too. */
static int same_result(const clr_value *a, const clr_value *b) {
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

int clr_ref_segments_check(clr_map map, clr_op op, clr_type type, clr_type rt,
                           const void *data, const uint64_t *offsets,
                           size_t n_segments, const void *results, size_t depth,
                           clr_segments_check *out) {
  size_t esize = clr_type_size(type);
  memset(out, 0, sizeof *out);
  out->ok = 1;
  for (size_t s = 0; s < n_segments; s++) {
    size_t a = (size_t)offsets[s], len = (size_t)offsets[s + 1] - a;
    clr_value got = clr_result_at(op, rt, results, s);
    clr_reference ref;
    clr_check chk;
    memset(&chk, 0, sizeof chk);
    if (len == 0) {
      /* The fold of nothing: the row's identity (records: at index
       * UINT64_MAX; a mean: 0 / 0, NaN), exactly. */
      if (!clr_ref_reduce_mapped(map, op, type, rt, data, NULL, 0, &ref))
        return 0;
      chk.exact = 1;
      chk.ok = same_result(&got, &ref.value);
      chk.error = chk.ok ? 0.0 : INFINITY;
    } else {
      if (!clr_ref_reduce_mapped(map, op, type, rt,
                                 (const char *)data + a * esize, NULL, len,
                                 &ref))
        return 0;
      clr_ref_check(&ref, &got, depth < len - 1 ? depth : len - 1, &chk);
    }
    double ratio = chk.bound > 0 ? chk.error / chk.bound : 0.0;
    int first_bad = !chk.ok && out->ok;
    if (!chk.ok)
      out->n_bad++;
    if (first_bad || (out->ok && s == 0) ||
        (out->ok && ratio > out->worst_ratio)) {
      out->worst_index = s;
      out->exact = chk.exact;
      out->worst_error = chk.error;
      out->worst_bound = chk.bound;
      out->worst_ratio = ratio;
      out->got_worst = got;
      out->ref_worst = ref.value;
    }
    if (!chk.ok)
      out->ok = 0;
    if (s + 1 == n_segments) {
      out->got_last = got;
      out->ref_last = ref.value;
    }
  }
  return 1;
}

void clr_ref_segmented_scan_check(clr_op op, clr_type type, clr_type out_type,
                                  int exclusive, const void *in,
                                  const void *out, const uint64_t *offsets,
                                  size_t n_segments, size_t depth,
                                  int flush_to_zero, clr_scan_check *res) {
  size_t isize = clr_type_size(type), osize = clr_type_size(out_type);
  memset(res, 0, sizeof *res);
  res->ok = 1;
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
