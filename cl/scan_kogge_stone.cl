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

inline ACC_T clr_block_scan_exclusive(__local ACC_T *s, ACC_T x) {
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
