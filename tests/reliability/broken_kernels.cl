/* Deliberately broken kernels: the oclgrind suite runs each of them and
 * passes only if Oclgrind reports the bug, which proves the checker that
 * guards the real kernels (cl/) actually catches that class of bug.
 * Never used by the library. */

/* Every work-item's input element in scratch[local id], then a barrier. */
void load_scratch(__global const float *in, __local float *scratch) {
  scratch[get_local_id(0)] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
}

/* Work-item 0 adds up the whole of scratch[] into out[group id]. */
void first_item_sums(__local const float *scratch, __global float *out) {
  if (get_local_id(0) == 0) {
    float s = 0;
    for (uint i = 0; i < get_local_size(0); i++)
      s += scratch[i];
    out[get_group_id(0)] = s;
  }
}

/* A local-memory tree reduction (sequential addressing, as in
 * cl/common.cl's clr_group_reduce) with the barrier inside the loop
 * missing: a work-item reads scratch[lid + s] while its owner may still
 * be writing it in the same step.  Oclgrind: data race. */
__kernel void missing_barrier(__global const float *in, __global float *out,
                              __local float *scratch) {
  uint lid = get_local_id(0);
  load_scratch(in, scratch);
  for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s)
      scratch[lid] += scratch[lid + s];
    /* barrier(CLK_LOCAL_MEM_FENCE); missing */
  }
  if (lid == 0)
    out[get_group_id(0)] = scratch[0];
}

/* The barrier moved inside the branch: only the active half of the
 * work-group reaches it.  Oclgrind: work-group divergence. */
__kernel void divergent_barrier(__global const float *in, __global float *out,
                                __local float *scratch) {
  uint lid = get_local_id(0);
  load_scratch(in, scratch);
  for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s) {
      scratch[lid] += scratch[lid + s];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
  if (lid == 0)
    out[get_group_id(0)] = scratch[0];
}

/* No bounds check on a partial last work-group: reads past the end of the
 * input.  Oclgrind: invalid read. */
__kernel void out_of_bounds(__global const float *in, __global float *out,
                            __local float *scratch, ulong n) {
  (void)n; /* the check `gid < n` that cl/ kernels make is missing */
  load_scratch(in, scratch);
  first_item_sums(scratch, out);
}

/* Work-item 0 sums scratch[] but only the first half of the group wrote
 * its slot.  Oclgrind (--uninitialized): uninitialised value. */
__kernel void uninitialized_local(__global const float *in, __global float *out,
                                  __local float *scratch) {
  uint lid = get_local_id(0);
  if (lid < get_local_size(0) / 2)
    scratch[lid] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  first_item_sums(scratch, out);
}
