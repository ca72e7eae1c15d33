/* Double-buffered ("ping-pong") Kogge-Stone scan (course notes, seed
 * 004): each step reads one half of local memory and writes the other, so
 * a value is never overwritten while a neighbour may still read it; one
 * barrier per step instead of two, for twice the local memory.
 *
 * Defines the work-group primitive used by scan_tile.cl: returns the
 * exclusive prefix of x over the work-group (identity for work-item 0).
 * Local memory: two values per work-item. */
#define CLR_SCAN_LOCAL_PER_ITEM 2

inline ACC_T clr_block_scan_exclusive(__local ACC_T *s, ACC_T x) {
  uint lid = clr_local_put(s, x), wg = (uint)get_local_size(0);
  __local ACC_T *src = s, *dst = s + wg;
  for (uint d = 1; d < wg; d *= 2) {
    ACC_T v = src[lid];
    if (lid >= d) {
      ACC_T left = src[lid - d];
      v = OP(left, v);
    }
    dst[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    __local ACC_T *t = src;
    src = dst;
    dst = t;
  }
  ACC_T prefix = lid > 0 ? src[lid - 1] : IDENTITY;
  barrier(CLK_LOCAL_MEM_FENCE); /* s may be reused by the caller */
  return prefix;
}
