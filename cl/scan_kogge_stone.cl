/* Kogge-Stone scan (course notes, seed 004): at step d every work-item
 * with lid >= d combines the value d to its left into its own.  log2(wg)
 * steps, but n log n work.  One buffer in local memory, so each step needs
 * two barriers: one before reading (the neighbour's value of the previous
 * step must be written) and one before writing (nobody may still be
 * reading the old value: the read-after-write hazard).
 *
 * Defines the work-group primitive used by scan_tile.cl: returns the
 * exclusive prefix of x over the work-group (identity for work-item 0).
 * Local memory: one value per work-item. */
#define CLR_SCAN_LOCAL_PER_ITEM 1

#if CLR_SHFL
/* The inclusive Kogge-Stone scan of the warp's 32 values by shuffles
 * (common.cl): no local memory, no barrier. */
inline ACC_T clr_warp_scan(ACC_T v, uint lane) {
  for (uint d = 1; d < 32; d <<= 1) {
    ACC_T u = clr_shfl_up(v, d); /* every lane, outside OP */
    if (lane >= d)
      v = OP(u, v);
  }
  return v;
}
#endif

inline ACC_T clr_block_scan_exclusive(__local ACC_T *s, ACC_T x) {
#if CLR_SHFL
  /* Work-groups of whole warps: each warp scans itself, warp 0 scans the
   * warps' totals, three barriers in all (the decoupled scan on the H100:
   * 1e8 floats 0.366 -> 0.359 ms with the look-back's tree by shuffles
   * too; docs/perf-log/scans.md). */
  uint wgs = (uint)get_local_size(0);
  if (clr_whole_warps(wgs)) {
    uint l = (uint)get_local_id(0), lane = l % 32, warp = l / 32;
    ACC_T v = clr_warp_scan(x, lane);
    clr_warp_publish(s, v, 31); /* each warp's total */
    if (warp == 0) {
      ACC_T w = clr_warp_scan(lane < wgs / 32 ? s[lane] : IDENTITY, lane);
      if (lane < wgs / 32)
        s[lane] = w;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    ACC_T before = warp > 0 ? s[warp - 1] : IDENTITY;
    ACC_T left = clr_shfl_up(v, 1);
    ACC_T prefix = lane == 0 ? before : OP(before, left);
    barrier(CLK_LOCAL_MEM_FENCE); /* s may be reused by the caller */
    return prefix;
  }
#endif
  uint lid = clr_local_put(s, x), wg = (uint)get_local_size(0);
  for (uint d = 1; d < wg; d *= 2) {
    ACC_T v = s[lid];
    if (lid >= d) {
      ACC_T left = s[lid - d];
      v = OP(left, v);
    }
    barrier(CLK_LOCAL_MEM_FENCE); /* all reads of this step are done */
    s[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE); /* all writes of this step are seen */
  }
  ACC_T prefix = lid > 0 ? s[lid - 1] : IDENTITY;
  barrier(CLK_LOCAL_MEM_FENCE); /* s may be reused by the caller */
  return prefix;
}
