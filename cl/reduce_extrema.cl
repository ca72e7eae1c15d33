/* Indexed reductions: argmin, argmax and minmax (-DCLR_OP_IS_INDEXED=1).  The
 * coarse reduction (reduce_coarse.cl: many elements per work-item in
 * registers, then one work-group tree) carrying, with each candidate value,
 * the index where it was found: cl/records.cl's records and their order
 * (the first index of the extreme value, NaN first), which the host puts
 * before this file.
 *
 * Build options beyond common.cl: CLR_VEC, CLR_LAYOUT, CLR_ALIGNED and
 * CLR_MAP as for reduce_coarse.cl (cl/load_mapped.cl, which the host puts
 * before this file, loads CLR_VEC elements at a time); -DCLR_FROM_RECORDS=1
 * for the passes after the first, which read the records the pass before
 * wrote.
 *
 * The first pass keeps, with vector loads, a candidate per lane
 * (cl/records.cl's lanes: compares and selects of order-preserving keys),
 * the lanes then folded with the full order.
 */
#ifndef CLR_FROM_RECORDS
#define CLR_FROM_RECORDS 0
#endif
#if CLR_FROM_RECORDS
#define SRC_T clr_record
#else
#define SRC_T IN_T
#endif

#define LANES (CLR_VEC > 1 && !CLR_FROM_RECORDS)
#if LANES
/* The 64-bit path: vector v's elements taken one by one. */
inline void clr_take_vec(clr_record *r, __global const IN_T *p, ulong v,
                         ulong base) {
  ACC_T xs[CLR_VEC];
  CLR_CAT(vstore, CLR_VEC)(clr_load_vec(p, p, v, base), 0, xs);
  for (uint k = 0; k < CLR_VEC; k++)
    clr_take(r, xs[k], base + v * CLR_VEC + k);
}
#endif

/* Unit v taken into r: a record of the pass before, or one input element
 * (mapped) when CLR_VEC is 1. */
inline void clr_take_unit(clr_record *r, __global const SRC_T *p, ulong v,
                          ulong base) {
#if CLR_FROM_RECORDS
  clr_merge(r, p[v]);
#else
  clr_take(r, MAPPED(IN_AT(p, v), 0, base + v), base + v);
#endif
}

/* base: the index of in[offset] in the whole input (a streamed chunk's
 * start); records carry whole-input indices already. */
__kernel void clr_reduce(__global const SRC_T *in, ulong offset, ulong n,
                         __global clr_record *out, __local clr_record *scratch,
                         ulong per_item, ulong base) {
  __global const SRC_T *p = in + offset;
#if CLR_FROM_RECORDS
#define UNIT 1
#else
#define UNIT CLR_VEC
#endif
  ulong nv = n / UNIT;
  ulong gid = get_global_id(0);
  clr_record r = clr_no_record();
#if CLR_LAYOUT == 2
  ulong begin = gid * per_item;
  ulong end = min(begin + per_item, nv), step = 1;
  ulong tail_owner = min(nv / per_item, (ulong)get_global_size(0) - 1);
#else
  ulong begin = gid, end = nv, step = get_global_size(0);
  ulong tail_owner = 0;
#endif
#if LANES
  ulong vectors = begin < end ? (end - begin + step - 1) / step : 0;
  if (vectors > 0 && vectors <= UINT_MAX) {
    clr_lanes c;
    clr_lanes_start(&c, clr_load_vec(p, p, begin, base));
    uint k = 1;
    ulong v = begin + step;
#if CLR_OP_IS_MOMENTS && CLR_LAYOUT == 2
    /* var, std on CPUs (the contiguous layout): four vectors a block
     * (moments.cl), 2x on PoCL; on an H200 (strided) the flat array took
     * 0.1057-0.1090 ms so against 0.1038-0.1039 without */
    for (; v + 3 * step < end; v += 4 * step, k += 4)
      clr_lanes_take4(&c, clr_load_vec(p, p, v, base),
                      clr_load_vec(p, p, v + step, base),
                      clr_load_vec(p, p, v + 2 * step, base),
                      clr_load_vec(p, p, v + 3 * step, base));
#endif
    for (; v < end; v += step, k++)
      clr_lanes_take(&c, clr_load_vec(p, p, v, base), k);
    clr_lanes_fold(&r, c, base, begin, step);
  } else {
    for (ulong v = begin; v < end; v += step)
      clr_take_vec(&r, p, v, base);
  }
#else
  for (ulong v = begin; v < end; v += step)
    clr_take_unit(&r, p, v, base);
#endif
#if !CLR_FROM_RECORDS
  if (gid == tail_owner)
    for (ulong i = nv * UNIT; i < n; i++)
      clr_take(&r, MAPPED(IN_AT(p, i), 0, base + i), base + i);
#endif
  /* The work-group tree (cl/records.cl). */
  r = clr_group_merge(scratch, r);
  if (get_local_id(0) == 0)
    out[get_group_id(0)] = r;
}
