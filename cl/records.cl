/* (value, index) records: argmin, argmax and minmax (-DCLR_OP_IS_INDEXED=1),
 * shared by the indexed reduction (reduce_extrema.cl) and the segmented
 * one (reduce_segmented.cl); the host puts this file before theirs.
 *
 * Order: a candidate (a, ia) comes before (b, ib) when its value is
 * smaller (larger for the maximum), or the values are equal and ia < ib,
 * so the result is the first index of the extreme value whatever the
 * shape.  Floating point as min / max in common.cl: a NaN comes before
 * every number (the result is the first NaN), and -0.0 orders below +0.0;
 * skipping NaNs (CLR_SKIPS_NAN: nanargmin, nanargmax) a NaN comes before
 * nothing, so NaN input gives (NaN, ULONG_MAX), the starting candidate.
 * The starting candidate is (identity, ULONG_MAX): any element comes
 * before it, even one equal to the identity.
 */
#if !CLR_OP_IS_INDEXED
#error "records.cl is for the indexed operations (argmin, argmax, minmax)"
#endif
#define WANT_MIN (CLR_OP_ARGMIN || CLR_OP_MINMAX)
#define WANT_MAX (CLR_OP_ARGMAX || CLR_OP_MINMAX)

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
#if CLR_SKIPS_NAN
  if (na || nb) /* a number before a NaN; a NaN before nothing */
    return !na;
#else
  if (na || nb)
    return na && (!nb || ia < ib);
#endif
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

/* common.cl's clr_group_reduce on records (the full order). */
CLR_DEFINE_GROUP_MERGE(clr_record, clr_merge)

/* The starting record: no candidate yet. */
inline clr_record clr_no_record(void) {
#if CLR_SKIPS_NAN /* what no number gives */
  clr_record r = {(ACC_T)NAN, (ACC_T)NAN, ULONG_MAX, ULONG_MAX};
#else
  clr_record r = {(ACC_T)ACC_MAX, (ACC_T)ACC_LOWEST, ULONG_MAX, ULONG_MAX};
#endif
  return r;
}

#if CLR_VEC > 1
/* Lanes: with CLR_VEC-wide loads (cl/load_mapped.cl, and its
 * order-preserving integer keys), a candidate per lane: each lane sees
 * its elements in increasing index order, so "strictly before" (a
 * compare and a select of keys, no branch: SIMD on CPUs too) keeps the
 * first index; the lanes then fold into a record with the full order. */
#define VAL_T ACCV_T
#define KEY_T KEYV_T
/* Which of the work-item's vectors each lane's candidate came from: a
 * 32-bit count (the kernel takes the 64-bit path when a work-item reads
 * more than 2^32 - 1 vectors), so the selects stay 32-bit on GPUs. */
#define ITER_T CLR_CAT(uint, CLR_VEC)
#if ACC_IS_64 /* 64-bit masks */
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
#endif
