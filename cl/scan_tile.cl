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
 * With -DCLR_VEC=2|4|8 a work-item walks its run a vector at a time:
 * the vector is scanned in registers (clr_scan_lanes, cl/scan_lanes.cl,
 * which the host puts first) and then combined with the running value, so
 * the serial chain through `run` is one operation per VEC elements
 * instead of one per element.  per_item must be a multiple of CLR_VEC.
 *
 * carry[0] holds a carry-in combined before the first element (flag bit
 * 1); with flag bit 2 the work-item owning element n-1 writes the running
 * total through it to carry[1], so a long input can be scanned chunk by
 * chunk and stay one continuous scan. */

__kernel void clr_scan(__global const IN_T *in, ulong in_offset,
                       __global ACC_T *out, ulong out_offset, ulong n,
                       ulong per_item, __global const ACC_T *tile_prefix,
                       uint use_tiles, __global ACC_T *carry, uint carry_flags,
                       uint exclusive, uint stream, __local ACC_T *scratch) {
  in += in_offset; /* elements [offset, offset + n) of the buffers */
  out += out_offset;
  ulong lid = get_local_id(0);
  ulong g = get_group_id(0);
  /* No product here wraps: the scan driver (scan_level in src/lib/scan.c)
   * refuses a launch whose last tile would end past 2^64 - 1.  (A guard
   * here, with a 64-bit division per work-item, cost the H100's tiled
   * scans 4.5%; with mul_hi 2.3%.) */
  ulong base = (g * get_local_size(0) + lid) * per_item;
  ulong end = base < n ? min(base + per_item, n) : base;
#if CLR_VEC > 1
  ulong vend = base + (end - base) / CLR_VEC * CLR_VEC; /* whole vectors */
#else
  ulong vend = base;
#endif

  /* 1. this work-item's total.  A work-group of one item needs none: its
   * run is the whole tile, whose prefix the tile totals already give, so
   * the run is read once, not twice (the CPU shape: scan.wg=1). */
  ACC_T total = IDENTITY;
  if (get_local_size(0) > 1) {
#if CLR_VEC > 1
    for (ulong i = base; i < vend; i += CLR_VEC) {
      ACCV_T x = VLOAD(i, in);
      ACC_T t = LAST(clr_scan_lanes(x));
      total = OP(total, t);
    }
#endif
    for (ulong i = vend; i < end; i++) {
      ACC_T x = LOAD(IN_AT(in, i));
      total = OP(total, x);
    }
  }

  /* 2. the work-group's exclusive scan of the totals */
  ACC_T item_prefix = clr_block_scan_exclusive(scratch, total);

  ACC_T run = IDENTITY;
  if (carry_flags & 1u)
    run = carry[0];
  if (use_tiles) {
    ACC_T t = tile_prefix[g];
    run = OP(run, t);
  }
  run = OP(run, item_prefix);

  /* 3. rescan the run from its prefix and write it */
  run = clr_scan_run(in, out, base, vend, end, run, exclusive, stream);
  if ((carry_flags & 2u) && end == n && base < n)
    carry[1] = run;
}
