/* Indexed reductions: argmin, argmax and minmax (CLR_OP 6, 7, 8).  The
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
 * The first pass keeps, with vector loads, a candidate per lane: each
 * lane sees its elements in increasing index order, so "strictly before"
 * (a compare and a select of order-preserving integer keys, no branch:
 * SIMD on CPUs too) keeps the first index; the lanes then fold with the
 * full order.
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
#define VAL_T ACCV_T
#define KEY_T KEYV_T
/* Which of the work-item's vectors each lane's candidate came from: a
 * 32-bit count (the kernel takes the 64-bit path when a work-item reads
 * more than 2^32 - 1 vectors), so the selects stay 32-bit on GPUs. */
#define ITER_T CLR_CAT(uint, CLR_VEC)
#if CLR_ACC == 1 || CLR_ACC == 4 || CLR_ACC == 5 /* 64-bit masks */
#define MASK32 CLR_CAT(convert_int, CLR_VEC)
#else
#define MASK32
#endif

/* One work-item's candidates, a lane each: keys, and the vector (counted
 * from the work-item's first) each came from. */
typedef struct clr_lanes {
  KEY_T lo, hi;
  ITER_T klo, khi;
} clr_lanes;

inline void clr_lanes_start(clr_lanes *c, VAL_T x) {
  c->lo = clr_key(x, 0);
  c->hi = clr_key(x, 1);
  c->klo = c->khi = (ITER_T)0;
}

inline void clr_lanes_take(clr_lanes *c, VAL_T x, uint k) {
#if WANT_MIN
  KEY_T key = clr_key(x, 0);
  KEY_T lo = c->lo;
  c->lo = select(lo, key, key < lo);
  c->klo = select(c->klo, (ITER_T)k, MASK32(key < lo));
#endif
#if WANT_MAX
  KEY_T h = clr_key(x, 1);
  KEY_T hi = c->hi;
  c->hi = select(hi, h, h > hi);
  c->khi = select(c->khi, (ITER_T)k, MASK32(h > hi));
#endif
}

/* The lanes folded into r with the full order (index ties included); the
 * work-item's vectors were first, first + step, ... */
inline void clr_lanes_fold(clr_record *r, clr_lanes c, ulong base, ulong first,
                           ulong step) {
  ACC_T lo[CLR_VEC], hi[CLR_VEC];
  uint klo[CLR_VEC], khi[CLR_VEC];
  CLR_CAT(vstore, CLR_VEC)(clr_unkey(c.lo), 0, lo);
  CLR_CAT(vstore, CLR_VEC)(clr_unkey(c.hi), 0, hi);
  CLR_CAT(vstore, CLR_VEC)(c.klo, 0, klo);
  CLR_CAT(vstore, CLR_VEC)(c.khi, 0, khi);
  for (uint k = 0; k < CLR_VEC; k++) {
    clr_record one = {lo[k], hi[k],
                      base + (first + (ulong)klo[k] * step) * CLR_VEC + k,
                      base + (first + (ulong)khi[k] * step) * CLR_VEC + k};
    clr_merge(r, one);
  }
}

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
    for (ulong v = begin + step; v < end; v += step, k++)
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
  /* The work-group tree (common.cl's clr_group_reduce, on records). */
  uint lid = (uint)get_local_id(0);
  uint wg = (uint)get_local_size(0);
  scratch[lid] = r;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = clr_pow2_below(wg); s > 0; s >>= 1) {
    if (lid < s && lid + s < wg) {
      clr_record a = scratch[lid];
      clr_merge(&a, scratch[lid + s]);
      scratch[lid] = a;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0)
    out[get_group_id(0)] = scratch[0];
}
