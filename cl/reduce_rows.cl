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
 * results in the accumulator type; argmin, argmax, minmax on cl/records.cl's records
 * (which the host puts before this file), their indices counted from the
 * row's first element. */

#if CLR_OP_IS_INDEXED
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
#if CLR_OP_IS_INDEXED
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
