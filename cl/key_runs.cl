/* Reduce-by-key on the device (src/lib/segmented.c,
 * clr_reduce_by_key_buffer): where the runs of equal consecutive keys
 * start, as the offsets of a segmented reduction.
 *
 *   clr_key_heads   heads[i] = 1 where a run starts (i = 0, or a key that
 *                   differs from the one before it), else 0; the host then
 *                   scans heads inclusively (sum, in place), so heads[i]
 *                   becomes the number of runs up to element i.
 *   clr_key_starts  run r = heads[i] - 1 starting at element i gets
 *                   offsets[r] = i and unique[r] = keys[i]; the last
 *                   element closes the last run (offsets[runs] = n).
 *
 * One work-item an element; keys (IN_T: int, uint, long or ulong) are
 * compared as values, which for integers is as bits. */

__kernel void clr_key_heads(__global const IN_T *keys, ulong keys_off, ulong n,
                            __global ulong *heads) {
  ulong i = get_global_id(0);
  if (i >= n)
    return;
  keys += keys_off;
  heads[i] = i == 0 || keys[i] != keys[i - 1];
}

__kernel void clr_key_starts(__global const IN_T *keys, ulong keys_off, ulong n,
                             __global const ulong *runs_to,
                             __global ulong *offsets, __global IN_T *unique,
                             ulong unique_off) {
  ulong i = get_global_id(0);
  if (i >= n)
    return;
  keys += keys_off;
  unique += unique_off;
  if (i == 0 || keys[i] != keys[i - 1]) {
    ulong r = runs_to[i] - 1;
    offsets[r] = i;
    unique[r] = keys[i];
  }
  if (i == n - 1)
    offsets[runs_to[i]] = n;
}
