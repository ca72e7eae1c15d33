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

#if CLR_OP_IS_RECORD
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

/* Element x, at (r, c), folded into acc; COL_TAKE reads it at e. */
#if CLR_COLS_PARTIALS && CLR_OP_IS_RECORD
#define COL_TAKE_X(acc, x, r, c) clr_merge(&(acc), (x))
#elif CLR_COLS_PARTIALS
#define COL_TAKE_X(acc, x, r, c) ((acc) = OP((acc), (x)))
#elif CLR_OP_IS_RECORD
#define COL_TAKE_X(acc, x, r, c)                                               \
  clr_take(&(acc), MAPPED((x), 0, ibase + (r)*pitch + (c)), row_base + (r))
#else
#define COL_TAKE_X(acc, x, r, c)                                               \
  ((acc) = OP((acc), MAPPED((x), 0, ibase + (r)*pitch + (c))))
#endif
#if CLR_COLS_PARTIALS
#define COL_TAKE(acc, p, e, r, c) COL_TAKE_X(acc, (p)[e], r, c)
#else
#define COL_TAKE(acc, p, e, r, c) COL_TAKE_X(acc, IN_AT(p, e), r, c)
#endif

/* The strided kernel's loads: COLS_VEC adjacent columns at once (the
 * host asks for 2 or 4 only where the launch's first element, the pitch
 * and the columns are multiples of it, so every load is aligned), each
 * column's element folded on its own.  COLV_TAKE folds the COLS_VEC
 * elements of vector x, at (r, c .. c + COLS_VEC - 1), into acc[]. */
#ifndef COLS_VEC
#define COLS_VEC 1
#endif
#if COLS_VEC == 1 && CLR_COLS_PARTIALS
#define COLV_T COL_T
#elif COLS_VEC == 1
#define COLV_T X_T /* (half data: read as float) */
#endif
#if COLS_VEC == 1
#define COLV_LOAD(p, e) COL_LOAD1(p, e)
#define COLV_TAKE(acc, x, r, c) COL_TAKE_X(acc[0], x, r, c)
#else
#define COLV_T CLR_CAT(COL_IN_T, COLS_VEC)
#define COLV_LOAD(p, e) (((__global const COLV_T *)(p))[(e) / COLS_VEC])
#if COLS_VEC == 2
#define COLV_TAKE(acc, x, r, c)                                                \
  do {                                                                         \
    COL_TAKE_X(acc[0], (x).s0, r, c);                                          \
    COL_TAKE_X(acc[1], (x).s1, r, (c) + 1);                                    \
  } while (0)
#else
#define COLV_TAKE(acc, x, r, c)                                                \
  do {                                                                         \
    COL_TAKE_X(acc[0], (x).s0, r, c);                                          \
    COL_TAKE_X(acc[1], (x).s1, r, (c) + 1);                                    \
    COL_TAKE_X(acc[2], (x).s2, r, (c) + 2);                                    \
    COL_TAKE_X(acc[3], (x).s3, r, (c) + 3);                                    \
  } while (0)
#endif
#endif
#if CLR_COLS_PARTIALS
#define COL_LOAD1(p, e) ((p)[e])
#else
#define COL_LOAD1(p, e) IN_AT(p, e)
#endif

/* acc stored at out[o], folded after what is there when fold_into (as
 * the result: CLR_FINAL, finished where the host built it so). */
#define COL_PUT(out, o, acc)                                                   \
  do {                                                                         \
    COL_T v_ = (acc);                                                          \
    if (fold_into) {                                                           \
      COL_T b_ = (out)[o];                                                     \
      COL_FOLD(b_, v_);                                                        \
      v_ = b_;                                                                 \
    }                                                                          \
    (out)[o] = CLR_FINAL(v_);                                                  \
  } while (0)

#if CLR_OP_IS_RECORD
#define COL_START clr_no_record()
#define COL_FOLD(a, b) clr_merge(&(a), (b))
#else
#define COL_START IDENTITY
#define COL_FOLD(a, b) ((a) = OP((a), (b)))
#endif

/* Var and std of the first pass: a work-item's COLS_VEC columns keep
 * their means and M2s in vectors with one count, so a block of four rows
 * (their mean and M2 by two passes in registers) merges by Chan's formula
 * with one reciprocal for every column, and a tail row by Welford's
 * update with one; the records are made at the end. */
#define COLS_MOMENTS_SHARED                                                    \
  (!CLR_COLS_PARTIALS && CLR_OP_IS_MOMENTS && !CLR_MAP)
#if COLS_MOMENTS_SHARED
#if COLS_VEC == 1
#define COLA_T ACC_T
#define COLA_CONV(x) ((ACC_T)(x))
#else
#define COLA_T CLR_CAT(ACC_T, COLS_VEC)
#define COLA_CONV(x) CLR_CAT(convert_, COLA_T)(x)
#endif
/* The block (m, q) of nb rows merged into (mean, m2) of *cnt rows. */
inline void cols_merge_block(COLA_T *mean, COLA_T *m2, ulong *cnt, COLA_T m,
                             COLA_T q, ulong nb) {
  if (*cnt == 0) {
    *mean = m;
    *m2 = q;
  } else {
    ACC_T fb = (ACC_T)nb / (ACC_T)(*cnt + nb);
    COLA_T d = m - *mean;
    *mean += d * fb;
    *m2 += q + d * d * ((ACC_T)*cnt * fb);
  }
  *cnt += nb;
}
#endif

__kernel void clr_columns(__global const COL_IN_T *data, ulong data_off,
                          ulong r0, ulong r1, ulong cols, ulong pitch,
                          ulong span, ulong rows_per, __global COL_T *out,
                          ulong out_off, ulong out_pitch,
                          __local COL_T *scratch, ulong ibase, ulong row_base,
                          uint fold_into) {
  /* span: the work-group's column vectors (COLS_VEC columns each); its
   * work-items stand in lanes = wg / span rows */
  ulong t = get_local_id(0), wg = get_local_size(0);
  ulong lanes = wg / span, lane = t / span, k = t - lane * span;
  ulong c = (get_group_id(0) * span + k) * COLS_VEC;
  ulong s = get_group_id(1);
  ulong a = r0 + s * rows_per, b = min(r1, a + rows_per);
  int active = lane < lanes && c < cols;
  COL_T acc[COLS_VEC];
  for (int j = 0; j < COLS_VEC; j++)
    acc[j] = COL_START;
#if COLS_MOMENTS_SHARED
  if (active) {
    ulong r = a + lane, e = data_off + r * pitch + c, step = lanes * pitch;
    COLA_T mean = (COLA_T)(0), m2 = (COLA_T)(0);
    ulong cnt = 0;
    for (; r + 3 * lanes < b; r += 4 * lanes, e += 4 * step) {
      COLA_T a0 = COLA_CONV(COLV_LOAD(data, e));
      COLA_T a1 = COLA_CONV(COLV_LOAD(data, e + step));
      COLA_T a2 = COLA_CONV(COLV_LOAD(data, e + 2 * step));
      COLA_T a3 = COLA_CONV(COLV_LOAD(data, e + 3 * step));
      COLA_T m = ((a0 + a1) + (a2 + a3)) * (ACC_T)0.25;
      a0 -= m;
      a1 -= m;
      a2 -= m;
      a3 -= m;
      cols_merge_block(&mean, &m2, &cnt, m,
                       (a0 * a0 + a1 * a1) + (a2 * a2 + a3 * a3), 4);
    }
    for (; r < b; r += lanes, e += step) {
      COLA_T x = COLA_CONV(COLV_LOAD(data, e));
      cols_merge_block(&mean, &m2, &cnt, x, (x - x) * (COLA_T)(0), 1);
    }
    if (cnt > 0) {
      ACC_T mv[COLS_VEC], qv[COLS_VEC];
#if COLS_VEC == 1
      mv[0] = mean;
      qv[0] = m2;
#else
      CLR_CAT(vstore, COLS_VEC)(mean, 0, mv);
      CLR_CAT(vstore, COLS_VEC)(m2, 0, qv);
#endif
      for (int j = 0; j < COLS_VEC; j++) {
        clr_record one = {mv[j], qv[j], cnt};
        acc[j] = one;
      }
    }
  }
#else
  if (active) {
    ulong r = a + lane, e = data_off + r * pitch + c, step = lanes * pitch;
    /* four rows' loads issued before their folds (the same order of
     * folds as one row at a time) */
    for (; r + 3 * lanes < b; r += 4 * lanes, e += 4 * step) {
      COLV_T x0 = COLV_LOAD(data, e), x1 = COLV_LOAD(data, e + step);
      COLV_T x2 = COLV_LOAD(data, e + 2 * step);
      COLV_T x3 = COLV_LOAD(data, e + 3 * step);
      COLV_TAKE(acc, x0, r, c);
      COLV_TAKE(acc, x1, r + lanes, c);
      COLV_TAKE(acc, x2, r + 2 * lanes, c);
      COLV_TAKE(acc, x3, r + 3 * lanes, c);
    }
    for (; r < b; r += lanes, e += step) {
      COLV_T x = COLV_LOAD(data, e);
      COLV_TAKE(acc, x, r, c);
    }
  }
#endif
  for (int j = 0; j < COLS_VEC; j++) {
    /* the lanes' partials of column c + j folded in a tree (every
     * work-item reaches every barrier: one lane or many) */
    scratch[t] = acc[j];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (ulong h = clr_pow2_below((uint)lanes); h > 0; h >>= 1) {
      if (lane < h && lane + h < lanes) {
        COL_T v = scratch[t];
        COL_FOLD(v, scratch[t + h * span]);
        scratch[t] = v;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    acc[j] = scratch[t];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lane == 0 && c + j < cols)
      COL_PUT(out, out_off + s * out_pitch + c + j, acc[j]);
  }
}

/* Plain values of the first pass (no map, record, truth or NaN to skip;
 * not half): eight columns a load into vectors of accumulators. */
#define COLS_RUNS_VECTOR                                                       \
  (!CLR_COLS_PARTIALS && !CLR_OP_IS_RECORD && !CLR_MAP &&                      \
   !CLR_OP_IS_LOGICAL && !CLR_SKIPS_NAN && !CLR_IN_HALF && COLS_RUN % 8 == 0)
/* Var and std of the first pass: Welford over the rows, eight columns a
 * load, the count shared by every column of the run, so one reciprocal a
 * row serves COLS_RUN columns (Welford's division an element held them to
 * a fraction of the stream on PoCL). */
#define COLS_RUNS_MOMENTS                                                      \
  (!CLR_COLS_PARTIALS && CLR_OP_IS_MOMENTS && !CLR_MAP && COLS_RUN % 8 == 0)
#if COLS_RUNS_VECTOR || COLS_RUNS_MOMENTS
#define ACC8C_T CLR_CAT(ACC_T, 8)
#endif
#if COLS_RUNS_MOMENTS && CLR_IN_HALF
#define COLS_LOAD8(p, g) CLR_CAT(convert_, ACC8C_T)(vload_half8((g), (p)))
#elif COLS_RUNS_MOMENTS
#define COLS_LOAD8(p, g) CLR_CAT(convert_, ACC8C_T)(vload8((g), (p)))
#endif

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
#if COLS_RUNS_VECTOR
    /* eight columns a load, their accumulators a vector each */
    ACC8C_T v[COLS_RUN / 8];
    for (int g = 0; g < COLS_RUN / 8; g++)
      v[g] = (ACC8C_T)(IDENTITY);
    for (ulong r = a; r < b; r++) {
      __global const IN_T *row = data + data_off + r * pitch + c0;
      for (int g = 0; g < COLS_RUN / 8; g++)
        v[g] = OP(v[g], CLR_CAT(convert_, ACC8C_T)(vload8(g, row)));
    }
    for (int g = 0; g < COLS_RUN / 8; g++)
      vstore8(v[g], g, acc);
#elif COLS_RUNS_MOMENTS
    ACC8C_T mean[COLS_RUN / 8], m2[COLS_RUN / 8];
    for (int g = 0; g < COLS_RUN / 8; g++)
      mean[g] = m2[g] = (ACC8C_T)(0);
    ulong k = 0;
    for (ulong r = a; r < b; r++) {
      __global const IN_T *row = data + data_off + r * pitch + c0;
      ACC_T rcp = (ACC_T)1 / (ACC_T)(++k);
      for (int g = 0; g < COLS_RUN / 8; g++) {
        ACC8C_T x = COLS_LOAD8(row, g);
        ACC8C_T d = x - mean[g];
        mean[g] += d * rcp;
        m2[g] += d * (x - mean[g]);
      }
    }
    if (k > 0)
      for (int g = 0; g < COLS_RUN / 8; g++) {
        ACC_T mv[8], qv[8];
        vstore8(mean[g], 0, mv);
        vstore8(m2[g], 0, qv);
        for (int l = 0; l < 8; l++) {
          clr_record one = {mv[l], qv[l], k};
          acc[8 * g + l] = one;
        }
      }
#else
    for (ulong r = a; r < b; r++) {
      ulong e = data_off + r * pitch + c0;
      for (int j = 0; j < COLS_RUN; j++)
        COL_TAKE(acc[j], data, e + j, r, c0 + j);
    }
#endif
    for (int j = 0; j < COLS_RUN; j++)
      COL_PUT(out, out_off + s * out_pitch + c0 + j, acc[j]);
  } else { /* the last run, cut short by the matrix's edge */
    ulong w = cols - c0;
#if COLS_RUNS_MOMENTS
    /* Welford with the count shared by the run's columns, as above, an
     * element at a time (Welford's division an element made the columns
     * of 1e7 x 10 a fifth of the stream on PoCL) */
    ACC_T mean[COLS_RUN], m2[COLS_RUN];
    for (ulong j = 0; j < w; j++)
      mean[j] = m2[j] = 0;
    ulong k = 0;
    for (ulong r = a; r < b; r++) {
      ulong e = data_off + r * pitch + c0;
      ACC_T rcp = (ACC_T)1 / (ACC_T)(++k);
      for (ulong j = 0; j < w; j++) {
        ACC_T x = (ACC_T)IN_AT(data, e + j);
        ACC_T d = x - mean[j];
        mean[j] += d * rcp;
        m2[j] += d * (x - mean[j]);
      }
    }
    if (k > 0)
      for (ulong j = 0; j < w; j++) {
        clr_record one = {mean[j], m2[j], k};
        acc[j] = one;
      }
#else
    for (ulong r = a; r < b; r++) {
      ulong e = data_off + r * pitch + c0;
      for (ulong j = 0; j < w; j++)
        COL_TAKE(acc[j], data, e + j, r, c0 + j);
    }
#endif
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
