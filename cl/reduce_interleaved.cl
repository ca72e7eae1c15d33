/* Interleaved addressing (course notes, seed 001): one element per
 * work-item; at step s the work-items with lid % (2s) == 0 combine their
 * slot with the one s to the right.  Teaches why the modulo test and the
 * spreading of active work-items across all warps make it the slowest:
 * divergent branches in every warp and strided local-memory accesses.
 *
 * Each work-group writes one partial to out[group]; the host reduces the
 * partials again with the same kernel until one value remains. */
__kernel void clr_reduce(__global const IN_T *in, ulong offset, ulong n,
                         __global ACC_T *out, __local ACC_T *scratch,
                         ulong per_item) {
  (void)per_item;
  uint lid = (uint)get_local_id(0);
  uint wg = (uint)get_local_size(0);
  ulong gid = get_global_id(0);
  scratch[lid] = gid < n ? LOAD(IN_AT(in, offset + gid)) : IDENTITY;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = 1; s < wg; s *= 2) {
    if (lid % (2 * s) == 0 && lid + s < wg) {
      ACC_T a = scratch[lid];
      ACC_T b = scratch[lid + s];
      scratch[lid] = OP(a, b);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0)
    out[get_group_id(0)] = scratch[0];
}
