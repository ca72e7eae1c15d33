/* Sequential addressing (course notes, seed 003): one element per
 * work-item, then a tree whose stride halves each step, so the active
 * work-items are contiguous (lid < s).  Compared with interleaved
 * addressing: no modulo, no divergence inside a warp until fewer than a
 * warp's worth of items remain, no local-memory bank conflicts.  The tree
 * itself is clr_group_reduce in common.cl, shared with first-add and
 * coarse. */
__kernel void clr_reduce(__global const IN_T *in, ulong offset, ulong n,
                         __global ACC_T *out, __local ACC_T *scratch,
                         ulong per_item) {
  (void)per_item;
  ulong gid = get_global_id(0);
  ACC_T x = gid < n ? LOAD(IN_AT(in, offset + gid)) : IDENTITY;
  ACC_T r = clr_group_reduce(scratch, x);
  if (get_local_id(0) == 0)
    out[get_group_id(0)] = r;
}
