/* Indexed reductions: argmin, argmax and minmax (CLR_OP 6, 7, 8).  The
 * coarse reduction (reduce_coarse.cl: many elements per work-item in
 * registers, then one work-group tree) carrying, with each candidate value,
 * the index where it was found.
 *
 * Order: a candidate (a, ia) comes before (b, ib) when its value is
 * smaller (larger for the maximum), or the values are equal and ia < ib,
 * so the result is the first index of the extreme value whatever the
 * shape.  Floating point as min / max in common.cl: a NaN comes before
 * every number (the result is the first NaN), and -0.0 orders below +0.0.
 * The starting candidate is (identity, ULONG_MAX): any element comes
 * before it, even one equal to the identity.
 *
 * Build options beyond common.cl: CLR_VEC, CLR_LAYOUT and CLR_MAP as for
 * reduce_coarse.cl (elements are loaded CLR_VEC at a time, then taken one
 * by one); -DCLR_FROM_RECORDS=1 for the passes after the first, which read
 * the records the pass before wrote.
 */
#ifndef CLR_FROM_RECORDS
#define CLR_FROM_RECORDS 0
#endif
#if CLR_OP < 6
#error "reduce_extrema.cl computes argmin (6), argmax (7) and minmax (8)"
#endif
#define WANT_MIN (CLR_OP != 7)
#define WANT_MAX (CLR_OP != 6)

/* A pass's output element: the minimum and maximum so far and their
 * indices (argmin uses lo, argmax hi).  The host reads the last one with
 * this layout: lo at byte 0, hi at sizeof(ACC_T), ilo at 2 * sizeof(ACC_T),
 * ihi 8 bytes later (no padding: 2 * sizeof(ACC_T) is a multiple of 8). */
typedef struct clr_record {
  ACC_T lo, hi;
  ulong ilo, ihi;
} clr_record;

#if ACC_IS_FP
/* Before as a minimum (max = 0) or a maximum (max = 1). */
inline int clr_before(ACC_T a, ulong ia, ACC_T b, ulong ib, int max) {
  int na = a != a, nb = b != b;
  if (na || nb)
    return na && (!nb || ia < ib);
  if (max ? a > b : a < b)
    return 1;
  if (max ? b > a : b < a)
    return 0;
  if (a == 0) { /* two zeros: the sign decides */
    int sa = signbit(a) != 0, sb = signbit(b) != 0;
    if (sa != sb)
      return max ? sb : sa;
  }
  return ia < ib;
}
#else
inline int clr_before(ACC_T a, ulong ia, ACC_T b, ulong ib, int max) {
  if (a != b)
    return max ? a > b : a < b;
  return ia < ib;
}
#endif

inline void clr_take(clr_record *r, ACC_T x, ulong i) {
#if WANT_MIN
  if (clr_before(x, i, r->lo, r->ilo, 0)) {
    r->lo = x;
    r->ilo = i;
  }
#endif
#if WANT_MAX
  if (clr_before(x, i, r->hi, r->ihi, 1)) {
    r->hi = x;
    r->ihi = i;
  }
#endif
}

inline void clr_merge(clr_record *r, clr_record o) {
#if WANT_MIN
  if (clr_before(o.lo, o.ilo, r->lo, r->ilo, 0)) {
    r->lo = o.lo;
    r->ilo = o.ilo;
  }
#endif
#if WANT_MAX
  if (clr_before(o.hi, o.ihi, r->hi, r->ihi, 1)) {
    r->hi = o.hi;
    r->ihi = o.ihi;
  }
#endif
}

#if CLR_FROM_RECORDS
#define SRC_T clr_record
/* Record v of the pass before. */
inline void clr_take_unit(clr_record *r, __global const SRC_T *p, ulong v,
                          ulong base) {
  clr_merge(r, p[v]);
}
#else
#define SRC_T IN_T
/* Vector v of the input: CLR_VEC elements, loaded at once, mapped and
 * taken in index order. */
inline void clr_take_unit(clr_record *r, __global const SRC_T *p, ulong v,
                          ulong base) {
#if CLR_VEC == 1
  clr_take(r, MAPPED(p[v], 0, base + v), base + v);
#else
  IN_T xs[CLR_VEC];
  CLR_CAT(vstore, CLR_VEC)(CLR_CAT(vload, CLR_VEC)(v, p), 0, xs);
  ulong i0 = base + v * CLR_VEC;
  for (uint k = 0; k < CLR_VEC; k++)
    clr_take(r, MAPPED(xs[k], 0, i0 + k), i0 + k);
#endif
}
#endif

/* base: the index of in[offset] in the whole input (a streamed chunk's
 * start); records carry whole-input indices already. */
__kernel void clr_reduce(__global const SRC_T *in, ulong offset, ulong n,
                         __global clr_record *out,
                         __local clr_record *scratch, ulong per_item,
                         ulong base) {
  __global const SRC_T *p = in + offset;
#if CLR_FROM_RECORDS
#define UNIT 1
#else
#define UNIT CLR_VEC
#endif
  ulong nv = n / UNIT;
  ulong gid = get_global_id(0);
  clr_record r = {(ACC_T)ACC_MAX, (ACC_T)ACC_LOWEST, ULONG_MAX, ULONG_MAX};
#if CLR_LAYOUT == 2
  ulong begin = gid * per_item;
  ulong end = min(begin + per_item, nv);
  for (ulong v = begin; v < end; v++)
    clr_take_unit(&r, p, v, base);
  ulong tail_owner = min(nv / per_item, (ulong)get_global_size(0) - 1);
#else
  ulong stride = get_global_size(0);
  for (ulong v = gid; v < nv; v += stride)
    clr_take_unit(&r, p, v, base);
  ulong tail_owner = 0;
#endif
#if !CLR_FROM_RECORDS
  if (gid == tail_owner)
    for (ulong i = nv * UNIT; i < n; i++)
      clr_take(&r, MAPPED(p[i], 0, base + i), base + i);
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
