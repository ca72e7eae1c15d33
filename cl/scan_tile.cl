/* Tile scan kernel shared by every scan algorithm: the host appends it to
 * one of scan_kogge_stone.cl, scan_kogge_stone_db.cl or scan_brent_kung.cl,
 * which defines clr_block_scan_exclusive().
 *
 * Arrangement (reduce-then-scan): a tile is wg * per_item contiguous
 * elements.  Before this kernel runs, the host has reduced every tile to
 * its total (reduce_coarse.cl, contiguous layout: one read of the input)
 * and scanned those totals exclusively (recursively, with this same
 * kernel) into tile_prefix.  This kernel then reads the input once more
 * and writes the output once: 3n element transfers in all, against 4n for
 * scan-then-propagate (scan tiles, write, read back to add offsets).
 *
 * Inside a tile each work-item owns per_item contiguous elements: it folds
 * them to one total, the work-group scans those totals, and each item
 * rescans its run from that prefix (the second read hits the cache).  With
 * per_item = 1 this is exactly the course notes' one-element-per-thread
 * scan.  Work-items never touch another item's elements, so in == out
 * (in place) is safe.
 *
 * carry[0] holds a carry-in combined before the first element (flag bit
 * 1); with flag bit 2 the work-item owning element n-1 writes the running
 * total through it to carry[1], so a long input can be scanned chunk by
 * chunk and stay one continuous scan. */
__kernel void clr_scan(__global const IN_T *in, __global ACC_T *out, ulong n,
                       ulong per_item, __global const ACC_T *tile_prefix,
                       uint use_tiles, __global ACC_T *carry,
                       uint carry_flags, uint exclusive,
                       __local ACC_T *scratch) {
  ulong lid = get_local_id(0);
  ulong g = get_group_id(0);
  ulong base = (g * get_local_size(0) + lid) * per_item;
  ulong end = base < n ? min(base + per_item, n) : base;

  ACC_T total = IDENTITY;
  for (ulong i = base; i < end; i++) {
    ACC_T x = LOAD(in[i]);
    total = OP(total, x);
  }
  ACC_T item_prefix = clr_block_scan_exclusive(scratch, total);

  ACC_T run = IDENTITY;
  if (carry_flags & 1u)
    run = carry[0];
  if (use_tiles) {
    ACC_T t = tile_prefix[g];
    run = OP(run, t);
  }
  run = OP(run, item_prefix);
  for (ulong i = base; i < end; i++) {
    ACC_T x = LOAD(in[i]);
    if (exclusive) {
      out[i] = run;
      run = OP(run, x);
    } else {
      run = OP(run, x);
      out[i] = run;
    }
  }
  if ((carry_flags & 2u) && end == n && base < n)
    carry[1] = run;
}
