/* Columns: one result per column of a row-major matrix, the fold over its
 * rows (NumPy's a.sum(axis=0)), reading the matrix once in the order it
 * lies in memory, never through a transposed copy.  Element (r, c) is
 * data[data_off + r * pitch + c] (pitch >= cols: a sub-matrix of a wider
 * one).  Rows [r0, r1) of a launch are split over get_group_id(1): split s
 * takes rows_per of them from r0 + s * rows_per, and writes its partial
 * of column c to out[out_off + s * out_pitch + c]; with one split that is
 * the column's result.  A second launch of the same kernel with
 * -DCLR_COLS_PARTIALS=1 folds the splits' partials (a matrix of splits
 * rows; its op the row's partial combine: the host builds it so).  With
 * fold_into set, a launch folds its results after what out already holds
 * (the rows before it: a matrix streamed in blocks of rows).
 *
 * Two shapes, as the reductions' two layouts:
 *   clr_columns (strided, GPUs): a work-group takes `span` columns; with
 *     fewer columns than work-items (span = cols), its work-items stand in
 *     lanes = wg / span rows at once, so consecutive work-items read
 *     consecutive addresses whatever the matrix's width (a tall, thin
 *     matrix reads as a flat array), and the lanes fold in local memory.
 *   clr_columns_runs (contiguous, CPUs): a work-item takes COLS_RUN
 *     adjacent columns and a split's rows, walking each row's run of
 *     columns in order (a stream the prefetcher follows and the compiler
 *     vectorises), COLS_RUN accumulators in registers.
 *
 * Ops: every combine of common.cl with maps (an expression's i: ibase +
 * r * pitch + c, the element's index from the launch's first: the host
 * passes that element's index from the matrix's first in ibase, as every
 * call counts i); argmin, argmax and minmax on
 * cl/records.cl's records (which the host puts before this file), their
 * index the row: row_base + r, counted over the whole matrix. */

#if CLR_OP_IS_INDEXED
#define COL_T clr_record
#else
#define COL_T ACC_T
#endif

#ifndef CLR_COLS_PARTIALS
#define CLR_COLS_PARTIALS 0
#endif
#ifndef COLS_RUN
#define COLS_RUN 16
#endif

#if CLR_COLS_PARTIALS
#define COL_IN_T COL_T
#else
#define COL_IN_T IN_T
#endif

/* Element (r, c) folded into acc. */
#if CLR_COLS_PARTIALS && CLR_OP_IS_INDEXED
#define COL_TAKE(acc, p, e, r, c) clr_merge(&(acc), (p)[e])
#elif CLR_COLS_PARTIALS
#define COL_TAKE(acc, p, e, r, c) ((acc) = OP((acc), (p)[e]))
#elif CLR_OP_IS_INDEXED
#define COL_TAKE(acc, p, e, r, c)                                              \
  clr_take(&(acc), MAPPED(IN_AT(p, e), 0, ibase + (r)*pitch + (c)),            \
           row_base + (r))
#else
#define COL_TAKE(acc, p, e, r, c)                                              \
  ((acc) = OP((acc), MAPPED(IN_AT(p, e), 0, ibase + (r)*pitch + (c))))
#endif

/* acc stored at out[o], folded after what is there when fold_into. */
#define COL_PUT(out, o, acc)                                                   \
  do {                                                                         \
    COL_T v_ = (acc);                                                          \
    if (fold_into) {                                                           \
      COL_T b_ = (out)[o];                                                     \
      COL_FOLD(b_, v_);                                                        \
      v_ = b_;                                                                 \
    }                                                                          \
    (out)[o] = v_;                                                             \
  } while (0)

#if CLR_OP_IS_INDEXED
#define COL_START clr_no_record()
#define COL_FOLD(a, b) clr_merge(&(a), (b))
#else
#define COL_START IDENTITY
#define COL_FOLD(a, b) ((a) = OP((a), (b)))
#endif

__kernel void clr_columns(__global const COL_IN_T *data, ulong data_off,
                          ulong r0, ulong r1, ulong cols, ulong pitch,
                          ulong span, ulong rows_per, __global COL_T *out,
                          ulong out_off, ulong out_pitch,
                          __local COL_T *scratch, ulong ibase, ulong row_base,
                          uint fold_into) {
  ulong t = get_local_id(0), wg = get_local_size(0);
  ulong lanes = wg / span, lane = t / span, k = t - lane * span;
  ulong c = get_group_id(0) * span + k;
  ulong s = get_group_id(1);
  ulong a = r0 + s * rows_per, b = min(r1, a + rows_per);
  int active = lane < lanes && c < cols;
  COL_T acc = COL_START;
  if (active) {
    ulong e = data_off + (a + lane) * pitch + c, step = lanes * pitch;
    for (ulong r = a + lane; r < b; r += lanes, e += step)
      COL_TAKE(acc, data, e, r, c);
  }
  if (lanes > 1) { /* the same for every work-item of the group */
    scratch[t] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lane == 0 && active)
      for (ulong l = 1; l < lanes; l++)
        COL_FOLD(acc, scratch[l * span + k]);
  }
  if (lane == 0 && c < cols)
    COL_PUT(out, out_off + s * out_pitch + c, acc);
}

__kernel void clr_columns_runs(__global const COL_IN_T *data, ulong data_off,
                               ulong r0, ulong r1, ulong cols, ulong pitch,
                               ulong rows_per, __global COL_T *out,
                               ulong out_off, ulong out_pitch, ulong ibase,
                               ulong row_base, uint fold_into) {
  ulong c0 = get_global_id(0) * COLS_RUN;
  ulong s = get_global_id(1);
  ulong a = r0 + s * rows_per, b = min(r1, a + rows_per);
  if (c0 >= cols)
    return;
  COL_T acc[COLS_RUN];
  for (int j = 0; j < COLS_RUN; j++)
    acc[j] = COL_START;
  if (c0 + COLS_RUN <= cols) {
    for (ulong r = a; r < b; r++) {
      ulong e = data_off + r * pitch + c0;
      for (int j = 0; j < COLS_RUN; j++)
        COL_TAKE(acc[j], data, e + j, r, c0 + j);
    }
    for (int j = 0; j < COLS_RUN; j++)
      COL_PUT(out, out_off + s * out_pitch + c0 + j, acc[j]);
  } else { /* the last run, cut short by the matrix's edge */
    ulong w = cols - c0;
    for (ulong r = a; r < b; r++) {
      ulong e = data_off + r * pitch + c0;
      for (ulong j = 0; j < w; j++)
        COL_TAKE(acc[j], data, e + j, r, c0 + j);
    }
    for (ulong j = 0; j < w; j++)
      COL_PUT(out, out_off + s * out_pitch + c0 + j, acc[j]);
  }
}

#if CLR_COLS_MEAN
/* A mean per column: the sums of rows elements each, in out, made means
 * in place (as reduce_segmented.cl's clr_seg_mean: float (CLR_COLS_MEAN 1)
 * or double (2) of the sum's size, divided in double where CLR_COLS_WIDE
 * says the device has it). */
#if CLR_COLS_MEAN == 2 || CLR_COLS_WIDE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#if CLR_COLS_MEAN == 2
#define MEAN_T double
#else
#define MEAN_T float
#endif
__kernel void clr_columns_mean(__global ACC_T *out, ulong out_off, ulong cols,
                               ulong rows) {
  ulong c = get_global_id(0);
  if (c >= cols)
    return;
  ACC_T sum = out[out_off + c];
#if CLR_COLS_WIDE
  MEAN_T q = (MEAN_T)((double)sum / (double)rows);
#else
  float d = (float)rows, q0 = sum / d;
  MEAN_T q = q0 + fma(-q0, d, sum) / d;
#endif
  ((__global MEAN_T *)out)[out_off + c] = q;
}
#endif
