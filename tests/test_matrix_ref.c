/* clr_ref_matrix_check (src/check/segment_reference.h), the CPU check of
 * a matrix's per-column (axis 0) and per-row (axis 1) results: results
 * computed here by plain loops over int and double matrices with padded
 * rows (the padding poisoned) pass, one result changed fails at its
 * index, a built-in map is applied, and columns longer than one gathered
 * block (several blocks of columns, the last partial) are checked.  No
 * device. */
#include "segment_reference.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Store v as result i of type rt (a value type: int, long or double). */
static void put(clr_type rt, void *results, size_t i, double v) {
  switch (clr_type_size(rt)) {
  case 4: {
    int32_t x = (int32_t)v;
    memcpy((char *)results + 4 * i, &x, 4);
    break;
  }
  default:
    if (rt == CLR_DOUBLE) {
      memcpy((char *)results + 8 * i, &v, 8);
    } else {
      int64_t x = (int64_t)v;
      memcpy((char *)results + 8 * i, &x, 8);
    }
  }
}

/* One shape: rows x cols of type (int or double) pitch apart, the
 * padding NaN / INT32_MIN; op sum or max with map; both axes. */
static void shape(size_t rows, size_t cols, size_t pitch, clr_type type,
                  clr_op op, clr_map map) {
  size_t esize = clr_type_size(type);
  char *data = tu_xmalloc(rows * pitch * esize);
  double *value = tu_xmalloc(rows * cols * sizeof *value);
  tu_rng rng = {tu_seed(rows, cols, pitch, (uint64_t)type * 10 + op)};
  for (size_t r = 0; r < rows; r++)
    for (size_t c = 0; c < pitch; c++) {
      int64_t x = (int64_t)tu_below(&rng, 2001) - 1000;
      int pad = c >= cols;
      if (type == CLR_INT) {
        int32_t v = pad ? INT32_MIN : (int32_t)x;
        memcpy(data + (r * pitch + c) * 4, &v, 4);
      } else {
        double v = pad ? NAN : (double)x * 0.25;
        memcpy(data + (r * pitch + c) * 8, &v, 8);
      }
      if (!pad) {
        double v = type == CLR_INT ? (double)x : (double)x * 0.25;
        if (map == CLR_MAP_ABS)
          v = fabs(v);
        value[r * cols + c] = v;
      }
    }
  clr_options opt;
  clr_options_init(&opt);
  opt.map = map;
  clr_type rt = clr_options_result_type(&opt, op, type);
  for (int axis = 0; axis < 2; axis++) {
    size_t count = axis == 0 ? cols : rows, len = axis == 0 ? rows : cols;
    char *results = tu_xmalloc(count * clr_result_bytes(&opt, op, type));
    for (size_t k = 0; k < count; k++) {
      double acc = op == CLR_SUM ? 0.0 : -INFINITY;
      for (size_t j = 0; j < len; j++) {
        double v = axis == 0 ? value[j * cols + k] : value[k * cols + j];
        acc = op == CLR_SUM ? acc + v : (v > acc ? v : acc);
      }
      put(rt, results, k, acc);
    }
    clr_segments_check chk;
    int done = clr_ref_matrix_check(map, op, type, rt, data, rows, cols, pitch,
                                    axis, results, 0, &chk);
    TU_CHECK(done && chk.ok && chk.n_bad == 0,
             "%zu x %zu (pitch %zu) of %s, %s, axis %d: the loops' results "
             "pass (ok %d, %zu bad, first at %zu)",
             rows, cols, pitch, clr_type_name(type), clr_op_name(op), axis,
             chk.ok, chk.n_bad, chk.worst_index);
    size_t bad = count / 2;
    clr_value got = clr_result_at(op, rt, results, bad);
    put(rt, results, bad, clr_value_as_double(&got) + 1.0);
    done = clr_ref_matrix_check(map, op, type, rt, data, rows, cols, pitch,
                                axis, results, 0, &chk);
    TU_CHECK(done && !chk.ok && chk.n_bad == 1 && chk.worst_index == bad,
             "%zu x %zu of %s, %s, axis %d: result %zu changed fails there "
             "(ok %d, %zu bad, first at %zu)",
             rows, cols, clr_type_name(type), clr_op_name(op), axis, bad,
             chk.ok, chk.n_bad, chk.worst_index);
    free(results);
  }
  free(data);
  free(value);
}

int main(void) {
  shape(1, 1, 1, CLR_INT, CLR_SUM, CLR_MAP_NONE);
  shape(1, 9, 9, CLR_DOUBLE, CLR_MAX, CLR_MAP_NONE);
  shape(9, 1, 4, CLR_INT, CLR_MAX, CLR_MAP_ABS);
  shape(7, 150, 153, CLR_INT, CLR_SUM, CLR_MAP_NONE);
  shape(13, 70, 70, CLR_DOUBLE, CLR_SUM, CLR_MAP_ABS);
  tu_section("small shapes");
  /* columns of 300000 ints: 13 gathered at a time, blocks 13 + 7 */
  shape(300000, 20, 21, CLR_INT, CLR_SUM, CLR_MAP_NONE);
  shape(70000, 130, 130, CLR_DOUBLE, CLR_MAX, CLR_MAP_NONE);
  tu_section("columns in several gathered blocks");
  return tu_finish("test_matrix_ref");
}
