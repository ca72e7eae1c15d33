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
 * the vector is scanned in registers (log2(VEC) shifted combines, which
 * depend only on the loads) and then combined with the running value, so
 * the serial chain through `run` is one operation per VEC elements
 * instead of one per element.  per_item must be a multiple of CLR_VEC.
 *
 * carry[0] holds a carry-in combined before the first element (flag bit
 * 1); with flag bit 2 the work-item owning element n-1 writes the running
 * total through it to carry[1], so a long input can be scanned chunk by
 * chunk and stay one continuous scan. */

#if CLR_VEC > 1
#define ACCV_T CLR_CAT(ACC_T, CLR_VEC)
#if CLR_IN == 6 /* half: decoded to float */
#define VLOAD(i, p)                                                            \
  CLR_CAT(convert_, ACCV_T)(CLR_CAT(vload_half, CLR_VEC)(0, (p) + (i)))
#else
#define VLOAD(i, p)                                                            \
  CLR_CAT(convert_, ACCV_T)(CLR_CAT(vload, CLR_VEC)(0, (p) + (i)))
#endif
#define VSTORE(v, i, p) CLR_CAT(vstore, CLR_VEC)((v), 0, (p) + (i))
#define ID IDENTITY
#if CLR_VEC == 2
#define SHIFT1(v) ((ACCV_T)(ID, (v).s0))
#define LAST(v) ((v).s1)
#define SCAN_VEC(v) (OP(v, SHIFT1(v)))
#elif CLR_VEC == 4
#define SHIFT1(v) ((ACCV_T)(ID, (v).s0, (v).s1, (v).s2))
#define SHIFT2(v) ((ACCV_T)(ID, ID, (v).s0, (v).s1))
#define LAST(v) ((v).s3)
#elif CLR_VEC == 8
#define SHIFT1(v)                                                              \
  ((ACCV_T)(ID, (v).s0, (v).s1, (v).s2, (v).s3, (v).s4, (v).s5, (v).s6))
#define SHIFT2(v)                                                              \
  ((ACCV_T)(ID, ID, (v).s0, (v).s1, (v).s2, (v).s3, (v).s4, (v).s5))
#define SHIFT4(v) ((ACCV_T)(ID, ID, ID, ID, (v).s0, (v).s1, (v).s2, (v).s3))
#define LAST(v) ((v).s7)
#else
#error "scan_tile.cl supports CLR_VEC of 1, 2, 4 or 8"
#endif

/* Inclusive scan of the lanes of one vector (Hillis-Steele in registers). */
inline ACCV_T clr_scan_lanes(ACCV_T v) {
  ACCV_T t = SHIFT1(v);
  v = OP(t, v);
#if CLR_VEC >= 4
  t = SHIFT2(v);
  v = OP(t, v);
#endif
#if CLR_VEC >= 8
  t = SHIFT4(v);
  v = OP(t, v);
#endif
  return v;
}
#endif

__kernel void clr_scan(__global const IN_T *in, ulong in_offset,
                       __global ACC_T *out, ulong out_offset, ulong n,
                       ulong per_item, __global const ACC_T *tile_prefix,
                       uint use_tiles, __global ACC_T *carry, uint carry_flags,
                       uint exclusive, __local ACC_T *scratch) {
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
#if CLR_VEC > 1
  for (ulong i = base; i < vend; i += CLR_VEC) {
    ACCV_T x = VLOAD(i, in);
    ACCV_T s = clr_scan_lanes(x);
    ACCV_T r = (ACCV_T)(run);
    ACCV_T y = exclusive ? OP(r, SHIFT1(s)) : OP(r, s);
    run = OP(run, LAST(s));
    VSTORE(y, i, out);
  }
#endif
  for (ulong i = vend; i < end; i++) {
    ACC_T x = LOAD(IN_AT(in, i));
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
