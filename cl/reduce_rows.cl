/* Rows: segments of one length (a row-major matrix's rows; the last may be
 * shorter), a work-group a row.  When the host sees that every segment but
 * the last is row_len long, it takes this one launch instead of the merge
 * path's three (reduce_segmented.cl: its partition, tiles and finishing
 * passes): with no segment straddling a work-group there is nothing to
 * carry.  Work-item l reads elements l, l + wg, ... of its row (the
 * work-group's reads consecutive), folds them, and the row's partials
 * fold in a tree (common.cl's).
 *
 * Row r starts pitch elements after row r - 1 (pitch = row_len for
 * segments; more for a matrix's rows within a wider one), and ends at n.
 *
 * Ops: sum, prod, min, max, and, or (common.cl), with maps (an
 * expression's i: ibase + the element's index from data's first),
 * results in the accumulator type; argmin, argmax, minmax on cl/records.cl's
 * records (which the host puts before this file), their indices counted from
 * the row's first element. */

#if CLR_OP_IS_RECORD
#define ROW_T clr_record
#else
#define ROW_T ACC_T
#endif

__kernel void clr_rows(__global const IN_T *data, ulong data_off, ulong n,
                       ulong row_len, ulong pitch, __global ROW_T *out,
                       ulong out_off, __local ROW_T *scratch, ulong ibase) {
  ulong row = get_group_id(0);
  ulong a = row * pitch, b = min(a + row_len, n);
  ulong wg = get_local_size(0);
#if CLR_OP_IS_MOMENTS && !CLR_MAP
  /* var, std: four elements a block (two-pass mean and M2, one Chan
   * merge), not a division an element */
  clr_record acc = clr_no_record();
  ulong i = a + get_local_id(0);
  for (; i + 3 * wg < b; i += 4 * wg) {
    ACC_T x0 = (ACC_T)IN_AT(data, data_off + i);
    ACC_T x1 = (ACC_T)IN_AT(data, data_off + i + wg);
    ACC_T x2 = (ACC_T)IN_AT(data, data_off + i + 2 * wg);
    ACC_T x3 = (ACC_T)IN_AT(data, data_off + i + 3 * wg);
    ACC_T m = ((x0 + x1) + (x2 + x3)) * (ACC_T)0.25;
    x0 -= m;
    x1 -= m;
    x2 -= m;
    x3 -= m;
    clr_record blk = {m, (x0 * x0 + x1 * x1) + (x2 * x2 + x3 * x3), 4};
    clr_merge(&acc, blk);
  }
  for (; i < b; i += wg)
    clr_take(&acc, (ACC_T)IN_AT(data, data_off + i), i - a);
  acc = clr_group_merge(scratch, acc);
#elif CLR_OP_IS_RECORD
  /* each work-item's elements in index order, so clr_take keeps the
   * first of equal candidates; the tree merges with the full order */
  clr_record acc = clr_no_record();
  for (ulong i = a + get_local_id(0); i < b; i += wg)
    clr_take(&acc, MAPPED(IN_AT(data, data_off + i), 0, ibase + i), i - a);
  acc = clr_group_merge(scratch, acc);
#else
  ACC_T acc = IDENTITY;
  for (ulong i = a + get_local_id(0); i < b; i += wg) {
    ACC_T x = MAPPED(IN_AT(data, data_off + i), 0, ibase + i);
    acc = OP(acc, x);
  }
  acc = clr_group_reduce(scratch, acc);
#endif
  if (get_local_id(0) == 0)
    out[out_off + row] = acc;
}

/* Rows of a matrix, `lanes` work-items a row (a power of two up to the
 * work-group's size: short rows share a work-group, long ones take it
 * whole), the rows' elements split into `splits` pieces over
 * get_group_id(1) (a few long rows still fill the device; a second
 * launch with -DCLR_ROWS_PARTIALS=1 folds each row's pieces).  Lane l of
 * a row reads its ROWS_VEC-element vectors l, l + lanes, ... (a row's
 * lanes side by side: consecutive addresses), four loads issued before
 * their folds; the lanes fold in a tree.  Row r's piece s goes to
 * out[out_off + r * splits + s].  ROWS_VEC is 2 or 4 only where the
 * host saw every load aligned (the launch's first element, the pitch and
 * the row's length multiples of it); never for half data.  Indices (argmin
 * ...): the element's column; a map expression's i: ibase + r * pitch +
 * the column. */
#ifndef CLR_ROWS_PARTIALS
#define CLR_ROWS_PARTIALS 0
#endif
#ifndef ROWS_VEC
#define ROWS_VEC 1
#endif
#if CLR_ROWS_PARTIALS
#define ROWL_IN_T ROW_T
#define ROWL_X_T ROW_T
#define ROWL_LOAD1(p, e) ((p)[e])
#else
#define ROWL_IN_T IN_T
#define ROWL_X_T X_T
#define ROWL_LOAD1(p, e) IN_AT(p, e)
#endif
/* Element x at column j of row r folded into acc. */
#if CLR_ROWS_PARTIALS && CLR_OP_IS_RECORD
#define ROWL_TAKE(acc, x, r, j) clr_merge(&(acc), (x))
#define ROWL_FOLD(a, b) clr_merge(&(a), (b))
#define ROWL_START clr_no_record()
#elif CLR_ROWS_PARTIALS
#define ROWL_TAKE(acc, x, r, j) ((acc) = OP((acc), (x)))
#define ROWL_FOLD(a, b) ((a) = OP((a), (b)))
#define ROWL_START IDENTITY
#elif CLR_OP_IS_RECORD
#define ROWL_TAKE(acc, x, r, j)                                                \
  clr_take(&(acc), MAPPED((x), 0, ibase + (r)*pitch + (j)), (j))
#define ROWL_FOLD(a, b) clr_merge(&(a), (b))
#define ROWL_START clr_no_record()
#else
#define ROWL_TAKE(acc, x, r, j)                                                \
  ((acc) = OP((acc), MAPPED((x), 0, ibase + (r)*pitch + (j))))
#define ROWL_FOLD(a, b) ((a) = OP((a), (b)))
#define ROWL_START IDENTITY
#endif
#if ROWS_VEC == 1
#define ROWL_V_T ROWL_X_T
#define ROWL_LOAD(p, e) ROWL_LOAD1(p, e)
#define ROWL_TAKEV(acc, x, r, j) ROWL_TAKE(acc, x, r, j)
#else
#define ROWL_V_T CLR_CAT(ROWL_IN_T, ROWS_VEC)
#define ROWL_LOAD(p, e) (((__global const ROWL_V_T *)(p))[(e) / ROWS_VEC])
#if ROWS_VEC == 2
#define ROWL_TAKEV(acc, x, r, j)                                               \
  do {                                                                         \
    ROWL_TAKE(acc, (x).s0, r, j);                                              \
    ROWL_TAKE(acc, (x).s1, r, (j) + 1);                                        \
  } while (0)
#else
#define ROWL_TAKEV(acc, x, r, j)                                               \
  do {                                                                         \
    ROWL_TAKE(acc, (x).s0, r, j);                                              \
    ROWL_TAKE(acc, (x).s1, r, (j) + 1);                                        \
    ROWL_TAKE(acc, (x).s2, r, (j) + 2);                                        \
    ROWL_TAKE(acc, (x).s3, r, (j) + 3);                                        \
  } while (0)
#endif
#endif

/* The four loads of a lane's step folded into acc (ROWL_TAKE4; ROWL_TAKE1
 * one load of the loop's tail): one by one, or for var and std as one
 * block of 4 * ROWS_VEC (ROWS_VEC) elements, its mean and M2 found by
 * two passes in registers (a multiply by 1 / (4 * ROWS_VEC), a power of
 * two: exact) and merged by Chan's formula: one division a block instead
 * of Welford's one an element, which held the rows of 1e5 x 1000 floats
 * to 0.74 of the stream read on an H200 (0.1326 ms). */
#if CLR_OP_IS_MOMENTS && !CLR_ROWS_PARTIALS && !CLR_MAP
#if ROWS_VEC == 1
#define ROWL_AV_T ACC_T
#define ROWL_CONV(x) ((ACC_T)(x))
#define ROWL_HSUM(v) (v)
#else
#define ROWL_AV_T CLR_CAT(ACC_T, ROWS_VEC)
#define ROWL_CONV(x) CLR_CAT(convert_, ROWL_AV_T)(x)
#if ROWS_VEC == 2
#define ROWL_HSUM(v) ((v).s0 + (v).s1)
#else
#define ROWL_HSUM(v) (((v).s0 + (v).s1) + ((v).s2 + (v).s3))
#endif
#endif
/* One load (the loop's tail) as a block of ROWS_VEC elements. */
#define ROWL_TAKE1(acc, x, r, j)                                               \
  do {                                                                         \
    ROWL_AV_T a_ = ROWL_CONV(x);                                               \
    ACC_T m_ = ROWL_HSUM(a_) * ((ACC_T)1 / (ACC_T)ROWS_VEC);                   \
    a_ -= m_;                                                                  \
    clr_record b_ = {m_, ROWL_HSUM(a_ * a_), ROWS_VEC};                        \
    clr_merge(&(acc), b_);                                                     \
  } while (0)
#define ROWL_TAKE4(acc, x0, x1, x2, x3, r, j, step)                            \
  do {                                                                         \
    ROWL_AV_T a0_ = ROWL_CONV(x0), a1_ = ROWL_CONV(x1);                        \
    ROWL_AV_T a2_ = ROWL_CONV(x2), a3_ = ROWL_CONV(x3);                        \
    ACC_T m_ = ROWL_HSUM((a0_ + a1_) + (a2_ + a3_)) *                          \
               ((ACC_T)1 / (ACC_T)(4 * ROWS_VEC));                             \
    a0_ -= m_;                                                                 \
    a1_ -= m_;                                                                 \
    a2_ -= m_;                                                                 \
    a3_ -= m_;                                                                 \
    clr_record b_ = {                                                          \
        m_, ROWL_HSUM((a0_ * a0_ + a1_ * a1_) + (a2_ * a2_ + a3_ * a3_)),      \
        4 * ROWS_VEC};                                                         \
    clr_merge(&(acc), b_);                                                     \
  } while (0)
#else
#define ROWL_TAKE1(acc, x, r, j) ROWL_TAKEV(acc, x, r, j)
#define ROWL_TAKE4(acc, x0, x1, x2, x3, r, j, step)                            \
  do {                                                                         \
    ROWL_TAKEV(acc, x0, r, j);                                                 \
    ROWL_TAKEV(acc, x1, r, (j) + (step));                                      \
    ROWL_TAKEV(acc, x2, r, (j) + 2 * (step));                                  \
    ROWL_TAKEV(acc, x3, r, (j) + 3 * (step));                                  \
  } while (0)
#endif

__kernel void clr_rows_lanes(__global const ROWL_IN_T *data, ulong data_off,
                             ulong rows, ulong row_len, ulong pitch,
                             ulong lanes, ulong piece, __global ROW_T *out,
                             ulong out_off, __local ROW_T *scratch,
                             ulong ibase) {
  ulong t = get_local_id(0), wg = get_local_size(0);
  ulong lane = t & (lanes - 1), k = t / lanes;
  ulong r = get_group_id(0) * (wg / lanes) + k;
  ulong s = get_group_id(1), splits = get_num_groups(1);
  ulong j0 = s * piece, j1 = min(row_len, j0 + piece);
  ROW_T acc = ROWL_START;
  if (r < rows) {
    ulong base = data_off + r * pitch;
    ulong j = j0 + lane * ROWS_VEC, step = lanes * ROWS_VEC;
    for (; j + 3 * step < j1; j += 4 * step) {
      ROWL_V_T x0 = ROWL_LOAD(data, base + j);
      ROWL_V_T x1 = ROWL_LOAD(data, base + j + step);
      ROWL_V_T x2 = ROWL_LOAD(data, base + j + 2 * step);
      ROWL_V_T x3 = ROWL_LOAD(data, base + j + 3 * step);
      ROWL_TAKE4(acc, x0, x1, x2, x3, r, j, step);
    }
    for (; j < j1; j += step) {
      ROWL_V_T x = ROWL_LOAD(data, base + j);
      ROWL_TAKE1(acc, x, r, j);
    }
  }
  /* the lanes folded in a tree (every work-item reaches every barrier:
   * one lane or many) */
  scratch[t] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (ulong h = lanes / 2; h > 0; h >>= 1) {
    if (lane < h) {
      ROW_T v = scratch[t];
      ROWL_FOLD(v, scratch[t + h]);
      scratch[t] = v;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  acc = scratch[t];
  if (lane == 0 && r < rows)
    out[out_off + r * splits + s] = CLR_FINAL(acc);
}

/* Rows on CPUs (the contiguous layout): a work-item takes rows_per whole
 * rows, or with splits a piece of `piece` elements of each, walking each
 * in order; a row's elements fold into ROWS_ACCS accumulators, element j
 * into accumulator j % ROWS_ACCS, combined at the row's end (independent
 * chains the core overlaps; the indexed operations keep one record).
 * Row r's piece s goes to out[out_off + r * splits + s], as
 * clr_rows_lanes writes it (and folds the pieces). */
#define ROWS_ACCS 4
/* Plain values (no map, record, truth or NaN to skip; not half): eight
 * at a time in a vector of accumulators, its lanes folded in a tree at
 * the row's end. */
#define ROWS_RUNS_VECTOR                                                       \
  (!CLR_OP_IS_RECORD && !CLR_MAP && !CLR_OP_IS_LOGICAL && !CLR_SKIPS_NAN &&    \
   !CLR_IN_HALF)
#if ROWS_RUNS_VECTOR || CLR_OP_IS_MOMENTS
#define ACC8_T CLR_CAT(ACC_T, 8)
#endif
#if ROWS_RUNS_VECTOR
inline ACC_T rows_fold8(ACC8_T v) {
  CLR_CAT(ACC_T, 4) v4 = OP(v.lo, v.hi);
  CLR_CAT(ACC_T, 2) v2 = OP(v4.lo, v4.hi);
  return OP(v2.x, v2.y);
}
#endif
#if CLR_OP_IS_MOMENTS
/* Eight elements from p + 8 k, in the accumulator's type. */
#if CLR_IN_HALF
#define ROWS_LOAD8(p, k) CLR_CAT(convert_, ACC8_T)(vload_half8((k), (p)))
#else
#define ROWS_LOAD8(p, k) CLR_CAT(convert_, ACC8_T)(vload8((k), (p)))
#endif
#endif
__kernel void clr_rows_runs(__global const IN_T *data, ulong data_off,
                            ulong rows, ulong row_len, ulong pitch,
                            ulong rows_per, ulong piece, __global ROW_T *out,
                            ulong out_off, ulong ibase) {
  ulong s = get_global_id(1), splits = get_global_size(1);
  ulong ra = get_global_id(0) * rows_per, rb = min(rows, ra + rows_per);
  ulong j0 = s * piece, j1 = min(row_len, j0 + piece);
  for (ulong r = ra; r < rb; r++) {
    ulong base = data_off + r * pitch;
#if CLR_OP_IS_MOMENTS && !CLR_MAP
    /* var and std: eight lanes of (mean, M2) in vectors with one count;
     * blocks of four loads (a lane's four elements: mean and M2 by two
     * passes in registers) merged by Chan's formula, the same weight for
     * every lane (no horizontal step, no scalar merge a block: a record
     * merged a block held rows of 1000 floats to a quarter of the stream
     * on PoCL, Welford an element to a fiftieth); the lanes' records
     * merged at the row's end, and the tail as one block, by two passes
     * over it (one division, not one an element) */
    ACC8_T mean8 = (ACC8_T)(0), m28 = (ACC8_T)(0);
    uint k = 0; /* elements a lane so far */
    ulong j = j0;
    for (; j + 32 <= j1; j += 32) {
      ACC8_T x0 = ROWS_LOAD8(data + base + j, 0);
      ACC8_T x1 = ROWS_LOAD8(data + base + j, 1);
      ACC8_T x2 = ROWS_LOAD8(data + base + j, 2);
      ACC8_T x3 = ROWS_LOAD8(data + base + j, 3);
      ACC8_T m = ((x0 + x1) + (x2 + x3)) * (ACC_T)0.25;
      x0 -= m;
      x1 -= m;
      x2 -= m;
      x3 -= m;
      ACC8_T q = (x0 * x0 + x1 * x1) + (x2 * x2 + x3 * x3);
      ACC_T fb = (ACC_T)4 / (ACC_T)(k + 4);
      ACC8_T d = m - mean8;
      mean8 += d * fb;
      m28 += q + d * d * ((ACC_T)k * fb);
      k += 4;
    }
    clr_record acc = clr_no_record();
    if (k > 0) {
      ACC_T mv[8], qv[8];
      vstore8(mean8, 0, mv);
      vstore8(m28, 0, qv);
      for (int l = 0; l < 8; l++) {
        clr_record one = {mv[l], qv[l], k};
        clr_merge(&acc, one);
      }
    }
    if (j < j1) {
      ACC_T s = 0;
      for (ulong t = j; t < j1; t++)
        s += (ACC_T)IN_AT(data, base + t);
      ACC_T m = s / (ACC_T)(j1 - j), q = 0;
      for (ulong t = j; t < j1; t++) {
        ACC_T e = (ACC_T)IN_AT(data, base + t) - m;
        q += e * e;
      }
      clr_record tail = {m, q, j1 - j};
      clr_merge(&acc, tail);
    }
#elif CLR_OP_IS_RECORD
    clr_record acc = clr_no_record();
    for (ulong j = j0; j < j1; j++)
      clr_take(&acc, MAPPED(IN_AT(data, base + j), 0, ibase + r * pitch + j),
               j);
#elif ROWS_RUNS_VECTOR
    /* eight lanes of accumulators, each load one vector */
    ACC8_T a = (ACC8_T)(IDENTITY);
    ulong j = j0;
    for (; j + 8 <= j1; j += 8)
      a = OP(a, CLR_CAT(convert_, ACC8_T)(vload8(0, data + base + j)));
    ACC_T acc = rows_fold8(a);
    for (; j < j1; j++)
      acc = OP(acc, (ACC_T)IN_AT(data, base + j));
#else
    ACC_T a[ROWS_ACCS];
    for (int k = 0; k < ROWS_ACCS; k++)
      a[k] = IDENTITY;
    ulong j = j0;
    for (; j + ROWS_ACCS <= j1; j += ROWS_ACCS)
      for (int k = 0; k < ROWS_ACCS; k++)
        a[k] = OP(a[k], MAPPED(IN_AT(data, base + j + k), 0,
                               ibase + r * pitch + j + k));
    /* the tail folded after the chains, not into a[k] by a running k:
     * PoCL 3.1, specialising the work-group function (local size 1),
     * lost a tail element that way (rows of 70 floats squared: 0.837
     * short in 297 of 300 rows) */
    ACC_T acc = OP(OP(a[0], a[1]), OP(a[2], a[3]));
    for (; j < j1; j++)
      acc = OP(acc, MAPPED(IN_AT(data, base + j), 0, ibase + r * pitch + j));
#endif
    out[out_off + r * splits + s] = CLR_FINAL(acc);
  }
}
