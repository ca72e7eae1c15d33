/* (value, index) records: argmin, argmax and minmax (CLR_OP 6, 7, 8),
 * shared by the indexed reduction (reduce_extrema.cl) and the segmented
 * one (reduce_segmented.cl); the host puts this file before theirs.
 *
 * Order: a candidate (a, ia) comes before (b, ib) when its value is
 * smaller (larger for the maximum), or the values are equal and ia < ib,
 * so the result is the first index of the extreme value whatever the
 * shape.  Floating point as min / max in common.cl: a NaN comes before
 * every number (the result is the first NaN), and -0.0 orders below +0.0.
 * The starting candidate is (identity, ULONG_MAX): any element comes
 * before it, even one equal to the identity.
 */
#if CLR_OP < 6
#error "records.cl is for argmin (6), argmax (7) and minmax (8)"
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

/* The starting record: no candidate yet. */
inline clr_record clr_no_record(void) {
  clr_record r = {(ACC_T)ACC_MAX, (ACC_T)ACC_LOWEST, ULONG_MAX, ULONG_MAX};
  return r;
}
