/* Thread coarsening (course notes, seed 004): each work-item folds many
 * elements into private registers before a single work-group tree, so the
 * tree's barriers are paid once per many elements instead of once per
 * element, and far fewer work-groups (and partials) are launched.
 *
 * Build options beyond common.cl:
 *   -DCLR_VEC=<1|2|4|8|16>  elements per load; the private accumulator is
 *                           a vector of that width (independent chains)
 *   -DCLR_LAYOUT=1          strided: work-item g reads vectors g, g+G,
 *                           g+2G... (G = global size): neighbouring
 *                           work-items touch neighbouring addresses, the
 *                           coalesced pattern a GPU wants
 *   -DCLR_LAYOUT=2          contiguous: work-item g reads vectors
 *                           [g*per_item, (g+1)*per_item): one stream per
 *                           work-item, which is what a CPU wants, since
 *                           PoCL runs a work-group's items one after another
 *   -DCLR_ALIGNED=1         the input (with its offset) is aligned to a
 *                           whole vector, so vector pointers can be used
 *                           (wide loads on GPUs); otherwise vloadN
 *   -DCLR_MAP, -DCLR_INPUTS a map, or two inputs (a dot product): see
 *                           common.cl.  Later passes read the partials,
 *                           unmapped.
 *   -DCLR_FINISH=1          one launch instead of two (needs
 *                           cl_khr_int64_base_atomics): the work-group
 *                           that draws the last ticket of an atomic
 *                           counter as it starts, when every other group
 *                           has started, waits for every group's partial
 *                           and folds them in group order into
 *                           final_out[final_index], then sets the counter
 *                           back to 0 for the next launch.  A partial
 *                           travels in 64-bit slots (clr_slot_publish,
 *                           common.cl), 32 bits of it and the
 *                           launch's epoch each, written by one atomic
 *                           exchange: a slot that shows this launch's
 *                           epoch holds this launch's bits, with no fence
 *                           and no second round trip.  The ticket's round
 *                           trip overlaps the group's loads.  (The ticket
 *                           drawn at the end, after a fence, as in CUDA's
 *                           threadFenceReduction sample, cost the H100
 *                           0.4-2.2 us more a call at 1e6-5e6 floats.)
 *   -DCLR_SHFL=1            NVIDIA: warp shuffles in the group's tree
 *                           (clr_group_reduce, common.cl).
 * The host puts cl/load_mapped.cl (clr_load_vec) before this file.
 */
/* The private accumulator: a vector of values, or for floating-point min
 * and max a vector of order keys, reduced with the integer min / max (a
 * chain, common.cl). */

#if CLR_FINISH
/* The fold of every group's partial, in group order within each
 * work-item, then the group's tree: the same order whenever they come.
 * (Reading a work-item's slots four at a time before waiting on any, so
 * that their round trips overlap, gained nothing measurable on the H100
 * and cost the loads of 64-bit sums 9%: registers.) */
inline ACC_T coarse_fold_partials(volatile __global ulong *slots, uint epoch,
                                  __local ACC_T *scratch) {
  ulong groups = get_num_groups(0), wg = get_local_size(0);
  ACC_T x = IDENTITY;
  for (ulong g = get_local_id(0); g < groups; g += wg) {
    ACC_T v = clr_slot_wait(slots, g, epoch);
    x = OP(x, v);
  }
  return clr_group_reduce(scratch, x);
}
#endif

/* Fold the lanes of the private vector accumulator into one value. */
CLR_DEFINE_FOLD(clr_fold_lanes, ACC_T, OP)

/* base: the index of in[offset] in the whole input (a streamed chunk's
 * start), for the index i a map expression sees. */
__kernel void
clr_reduce(__global const IN_T *in, ulong offset, ulong n, __global ACC_T *out,
           __local ACC_T *scratch, ulong per_item, ulong base
#if CLR_INPUTS == 2
           ,
           __global const IN_T *in2, ulong offset2
#endif
#if CLR_FINISH
           ,
           volatile __global uint *ticket, volatile __global ulong *slots,
           __global ACC_T *final_out, ulong final_index, uint epoch
#endif
) {
#if CLR_FINISH
  __local uint last; /* this group drew the last ticket */
#endif
  __global const IN_T *p = in + offset;
#if CLR_INPUTS == 2
  __global const IN_T *q = in2 + offset2;
#else
  __global const IN_T *q = p;
#endif
  ulong nv = n / CLR_VEC; /* whole vectors; the rest is the tail */
  ulong gid = get_global_id(0);
  CLR_CHAINV_T acc = clr_chainv((ACCV_T)(IDENTITY));
#if CLR_FINISH
  /* Drawn first, used last: the round trip overlaps the loads. */
  uint my_ticket = 0;
  if (get_local_id(0) == 0)
    my_ticket = atomic_inc(ticket);
#endif
#if CLR_LAYOUT == 2
  /* No product here wraps: clr_reduce_launch (src/lib/tuning.c) clamps the
   * coarse factor to n and refuses a launch whose global size x per_item
   * passes 2^64 - 1. */
  ulong begin = gid * per_item;
  ulong end = min(begin + per_item, nv);
  for (ulong v = begin; v < end; v++) {
    ACCV_T x = clr_load_vec(p, q, v, base);
    acc = CLR_CHAIN_OP(acc, clr_chainv(x));
  }
#else
  ulong stride = get_global_size(0);
  for (ulong v = gid; v < nv; v += stride) {
    ACCV_T x = clr_load_vec(p, q, v, base);
    acc = CLR_CHAIN_OP(acc, clr_chainv(x));
  }
#endif
  ACC_T r = clr_fold_lanes(clr_unchainv(acc));
  /* Fewer than CLR_VEC elements are left over.  The contiguous layout gives
   * them to the work-item whose range they continue, so every work-group
   * reduces exactly its own contiguous tile (the scans rely on that). */
#if CLR_LAYOUT == 2
  ulong tail_owner = min(nv / per_item, (ulong)get_global_size(0) - 1);
#else
  ulong tail_owner = 0;
#endif
  if (gid == tail_owner) {
    for (ulong i = nv * CLR_VEC; i < n; i++) {
      ACC_T x = MAPPED(IN_AT(p, i), IN_AT(q, i), base + i);
      r = OP(r, x);
    }
  }
#if CLR_FINISH
  if (get_local_id(0) == 0)
    last = my_ticket == get_num_groups(0) - 1;
#endif
  r = clr_group_reduce(scratch, r); /* (its barrier shows `last`) */
#if CLR_FINISH
  (void)out;
  if (get_local_id(0) == 0)
    clr_slot_publish(slots, get_group_id(0), epoch, r);
  /* The tree's scratch is free again, and `last` read by all. */
  barrier(CLK_LOCAL_MEM_FENCE);
  if (last) {
    ACC_T x = coarse_fold_partials(slots, epoch, scratch);
    if (get_local_id(0) == 0) {
      final_out[final_index] = x;
      atomic_xchg(ticket, 0u);
    }
  }
#else
  if (get_local_id(0) == 0)
    out[get_group_id(0)] = r;
#endif
}
