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
 *   -DCLR_FINISH=1          one launch instead of two: the last work-group
 *                           to finish (the one that draws the last ticket
 *                           of an atomic counter) folds every group's
 *                           partial and writes final_out[final_index],
 *                           then sets the counter back to 0 for the next
 *                           launch.  The partials travel through 32-bit
 *                           atomics (clr_publish / clr_fetch, common.cl)
 *                           with a global fence before the ticket, the
 *                           pattern of CUDA's threadFenceReduction
 *                           sample within OpenCL 1.2's memory model.
 * The host puts cl/load_mapped.cl (clr_load_vec) before this file.
 */
/* The private accumulator: a vector of values, or for floating-point min
 * and max a vector of order keys (cl/load_mapped.cl), reduced with the
 * integer min / max. */
#if ACC_IS_FP && (CLR_OP == 2 || CLR_OP == 3)
#define STATE_T KEYV_T
#define STATE_INIT clr_key((ACCV_T)(IDENTITY), CLR_OP == 3)
#if CLR_OP == 3
#define STATE_ADD(s, x) max((s), clr_key((x), 1))
#else
#define STATE_ADD(s, x) min((s), clr_key((x), 0))
#endif
#define STATE_VALUE(s) clr_unkey(s)
#else
#define STATE_T ACCV_T
#define STATE_INIT ((ACCV_T)(IDENTITY))
#define STATE_ADD(s, x) OP((s), (x))
#define STATE_VALUE(s) (s)
#endif

/* Fold the lanes of the private vector accumulator into one value. */
CLR_DEFINE_FOLD(clr_fold_lanes, ACC_T, OP)

/* base: the index of in[offset] in the whole input (a streamed chunk's
 * start), for the index i a map expression sees. */
__kernel void clr_reduce(__global const IN_T *in, ulong offset, ulong n,
                         __global ACC_T *out, __local ACC_T *scratch,
                         ulong per_item, ulong base
#if CLR_INPUTS == 2
                         ,
                         __global const IN_T *in2, ulong offset2
#endif
#if CLR_FINISH
                         ,
                         volatile __global uint *ticket,
                         __global ACC_T *final_out, ulong final_index
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
  STATE_T acc = STATE_INIT;
#if CLR_LAYOUT == 2
  /* No product here wraps: clr_reduce_launch (src/lib/tuning.c) clamps the
   * coarse factor to n and refuses a launch whose global size x per_item
   * passes 2^64 - 1. */
  ulong begin = gid * per_item;
  ulong end = min(begin + per_item, nv);
  for (ulong v = begin; v < end; v++) {
    ACCV_T x = clr_load_vec(p, q, v, base);
    acc = STATE_ADD(acc, x);
  }
#else
  ulong stride = get_global_size(0);
  for (ulong v = gid; v < nv; v += stride) {
    ACCV_T x = clr_load_vec(p, q, v, base);
    acc = STATE_ADD(acc, x);
  }
#endif
  ACC_T r = clr_fold_lanes(STATE_VALUE(acc));
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
  r = clr_group_reduce(scratch, r);
#if CLR_FINISH
  volatile __global uint *parts = (volatile __global uint *)out;
  if (get_local_id(0) == 0) {
    clr_publish(parts, (uint)get_group_id(0), r);
    write_mem_fence(CLK_GLOBAL_MEM_FENCE);
    last = atomic_inc(ticket) == get_num_groups(0) - 1;
  }
  /* Also keeps scratch[0] (read by every item above) from being
   * overwritten before everyone has it. */
  barrier(CLK_LOCAL_MEM_FENCE);
  if (last) {
    read_mem_fence(CLK_GLOBAL_MEM_FENCE);
    ACC_T x = IDENTITY;
    for (uint g = (uint)get_local_id(0); g < get_num_groups(0);
         g += (uint)get_local_size(0))
      x = OP(x, clr_fetch(parts, g));
    x = clr_group_reduce(scratch, x);
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
