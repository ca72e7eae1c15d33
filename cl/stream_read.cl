/* A plain streaming read: the yardstick for the reductions.  Every
 * work-item reads its share of the buffer with the widest loads the
 * reductions use, in the same access pattern as reduce_coarse.cl, and
 * folds it with XOR (the cheapest operation that keeps every load live).
 * Each work-item writes one word, so the writes are negligible.  The time
 * it takes is the device's read bandwidth for this pattern.
 *
 * Build options: -DCLR_IN_UINT=1, -DCLR_VEC, -DCLR_LAYOUT as in
 * reduce_coarse.cl. */
#if CLR_VEC == 1
#define WORDS_T uint
#else
#define WORDS_T CLR_CAT(uint, CLR_VEC)
#endif

__kernel void clr_stream_read(__global const WORDS_T *in, ulong nv,
                              __global uint *out, ulong per_item) {
  ulong gid = get_global_id(0);
  WORDS_T acc = (WORDS_T)(0);
#if CLR_LAYOUT == 2
  ulong end = min(gid * per_item + per_item, nv);
  for (ulong v = gid * per_item; v < end; v++)
    acc ^= in[v];
#else
  (void)per_item;
  for (ulong v = gid; v < nv; v += get_global_size(0))
    acc ^= in[v];
#endif
#if CLR_VEC == 1
  out[gid] = acc;
#else
  uint r = 0;
  for (int i = 0; i < CLR_VEC; i++)
    r ^= ((uint *)&acc)[i];
  out[gid] = r;
#endif
}
