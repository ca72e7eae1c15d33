/* A vector's elements scanned in registers, for the scans that walk a
 * run a vector at a time (cl/scan_tile.cl, cl/scan_segmented.cl; the
 * host puts this file first).  With -DCLR_VEC=2|4|8:
 *   VLOAD(i, p)       CLR_VEC elements from p + i, converted to ACC_T
 *                     (half data decoded to float)
 *   VSTORE(v, i, p)   the vector to p + i
 *   clr_scan_lanes(v) its inclusive scan (log2(VEC) shifted combines,
 *                     which depend only on the loads), SHIFT1(v) the
 *                     lanes moved up one with the identity first (the
 *                     exclusive form), LAST(v) the last lane. */

#if CLR_VEC > 1
#define ACCV_T CLR_CAT(ACC_T, CLR_VEC)
#if CLR_IN == 6 /* half: decoded to float */
#define VLOAD(i, p)                                                            \
  CLR_CAT(convert_, ACCV_T)(CLR_CAT(vload_half, CLR_VEC)(0, (p) + (i)))
#else
#define VLOAD(i, p)                                                            \
  CLR_CAT(convert_, ACCV_T)(CLR_CAT(vload, CLR_VEC)(0, (p) + (i)))
#endif
#define VSTORE(v, i, p) CLR_CAT(vstore, CLR_VEC)((v), 0, (p) + (i))
#define ID IDENTITY
#if CLR_VEC == 2
#define SHIFT1(v) ((ACCV_T)(ID, (v).s0))
#define LAST(v) ((v).s1)
#define SCAN_VEC(v) (OP(v, SHIFT1(v)))
#elif CLR_VEC == 4
#define SHIFT1(v) ((ACCV_T)(ID, (v).s0, (v).s1, (v).s2))
#define SHIFT2(v) ((ACCV_T)(ID, ID, (v).s0, (v).s1))
#define LAST(v) ((v).s3)
#elif CLR_VEC == 8
#define SHIFT1(v)                                                              \
  ((ACCV_T)(ID, (v).s0, (v).s1, (v).s2, (v).s3, (v).s4, (v).s5, (v).s6))
#define SHIFT2(v)                                                              \
  ((ACCV_T)(ID, ID, (v).s0, (v).s1, (v).s2, (v).s3, (v).s4, (v).s5))
#define SHIFT4(v) ((ACCV_T)(ID, ID, ID, ID, (v).s0, (v).s1, (v).s2, (v).s3))
#define LAST(v) ((v).s7)
#else
#error "scan_tile.cl supports CLR_VEC of 1, 2, 4 or 8"
#endif

/* Inclusive scan of the lanes of one vector (Hillis-Steele in registers). */
inline ACCV_T clr_scan_lanes(ACCV_T v) {
  ACCV_T t = SHIFT1(v);
  v = OP(t, v);
#if CLR_VEC >= 4
  t = SHIFT2(v);
  v = OP(t, v);
#endif
#if CLR_VEC >= 8
  t = SHIFT4(v);
  v = OP(t, v);
#endif
  return v;
}
#endif
