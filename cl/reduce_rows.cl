/* Rows: segments of one length (a row-major matrix's rows; the last may be
 * shorter), a work-group a row.  When the host sees that every segment but
 * the last is row_len long, it takes this one launch instead of the merge
 * path's three (reduce_segmented.cl: its partition, tiles and finishing
 * passes): with no segment straddling a work-group there is nothing to
 * carry.  Work-item l reads elements l, l + wg, ... of its row (the
 * work-group's reads consecutive), folds them with OP, and the row's
 * partials fold in common.cl's tree.
 *
 * Ops: sum, prod, min, max, and, or (common.cl), with maps (an
 * expression's i: the element's index from data's first); results in the
 * accumulator type. */

__kernel void clr_rows(__global const IN_T *data, ulong data_off, ulong n,
                       ulong row_len, __global ACC_T *out, ulong out_off,
                       __local ACC_T *scratch) {
  ulong row = get_group_id(0);
  ulong a = row * row_len, b = min(a + row_len, n);
  ulong wg = get_local_size(0);
  ACC_T acc = IDENTITY;
  for (ulong i = a + get_local_id(0); i < b; i += wg) {
    ACC_T x = MAPPED(IN_AT(data, data_off + i), 0, i);
    acc = OP(acc, x);
  }
  acc = clr_group_reduce(scratch, acc);
  if (get_local_id(0) == 0)
    out[out_off + row] = acc;
}
