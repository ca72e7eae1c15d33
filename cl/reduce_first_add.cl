/* First add during load (course notes, seeds 000/003): each work-group
 * covers 2 * wg elements and every work-item combines two of them, wg
 * apart, while loading.  Half the work-groups of sequential addressing,
 * and the first tree level (where half the work-items would idle) is done
 * on the way in from global memory. */
__kernel void clr_reduce(__global const IN_T *in, ulong offset, ulong n,
                         __global ACC_T *out, __local ACC_T *scratch,
                         ulong per_item) {
  (void)per_item;
  ulong wg = get_local_size(0);
  ulong i = get_group_id(0) * 2 * wg + get_local_id(0);
  ACC_T a = i < n ? LOAD(IN_AT(in, offset + i)) : IDENTITY;
  ACC_T b = i + wg < n ? LOAD(IN_AT(in, offset + i + wg)) : IDENTITY;
  ACC_T r = clr_group_reduce(scratch, OP(a, b));
  if (get_local_id(0) == 0)
    out[get_group_id(0)] = r;
}
