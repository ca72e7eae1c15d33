/* Brent-Kung scan: the work-efficient one.  An up-sweep builds a reduction
 * tree in place (after it, slot i holds the combination of the 2^k slots
 * ending at i, for the largest 2^k dividing i+1), then a down-sweep
 * pushes prefixes back down the tree.  About 2 wg operations instead of
 * Kogge-Stone's wg log2(wg), for twice the steps (2 log2(wg)): less work,
 * longer critical path.
 *
 * Defines the work-group primitive used by scan_tile.cl: returns the
 * exclusive prefix of x over the work-group (identity for work-item 0).
 * Local memory: one value per work-item.  Any work-group size works. */
#define CLR_SCAN_LOCAL_PER_ITEM 1

inline ACC_T clr_block_scan_exclusive(__local ACC_T *s, ACC_T x) {
  uint lid = clr_local_put(s, x), wg = (uint)get_local_size(0);
  /* up-sweep */
  for (uint stride = 1; stride < wg; stride *= 2) {
    uint i = (lid + 1) * 2 * stride - 1;
    if (i < wg) {
      ACC_T a = s[i - stride];
      ACC_T b = s[i];
      s[i] = OP(a, b);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  /* down-sweep */
  for (uint stride = clr_pow2_below(wg); stride > 0; stride /= 2) {
    uint i = (lid + 1) * 2 * stride - 1;
    if (i + stride < wg) {
      ACC_T a = s[i];
      ACC_T b = s[i + stride];
      s[i + stride] = OP(a, b);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  ACC_T prefix = lid > 0 ? s[lid - 1] : IDENTITY;
  barrier(CLK_LOCAL_MEM_FENCE); /* s may be reused by the caller */
  return prefix;
}
