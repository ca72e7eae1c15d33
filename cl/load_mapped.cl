/* The input as the coarse reductions read it (reduce_coarse.cl,
 * reduce_extrema.cl: the host puts this file before theirs): CLR_VEC
 * elements at a time, converted to the accumulator type and mapped
 * (common.cl's MAPPED), with wide aligned loads where -DCLR_ALIGNED=1 says
 * the input (with its offset) is aligned to a whole vector.
 */
#ifndef CLR_ALIGNED
#define CLR_ALIGNED 0
#endif

#if CLR_VEC > 1 /* (ACCV_T: common.cl) */
#define INV_T CLR_CAT(IN_T, CLR_VEC)
#define XV_T CLR_CAT(X_T, CLR_VEC)
#define CONVV CLR_CAT(convert_, ACCV_T)
#if CLR_IN_HALF && CLR_VEC > 2 && defined(POCL_DEVICE_ADDRESS_BITS)
/* Half on PoCL (which defines POCL_DEVICE_ADDRESS_BITS): the F16C builds
 * of PoCL 3.1's kernel library (avx_f16c, avx2, avx512) read vload_half4,
 * 8 and 16 as loads of half4 or half8 with their alignment (8 and 16
 * bytes, where OpenCL asks 2), so an address that is only 2-byte aligned
 * (a segment's start, a buffer offset) faulted (SIGSEGV on a vmovdqa that
 * LLVM was entitled to emit) or was undefined.  The bits are read as
 * ushorts (vloadN: 2-byte aligned) and converted from that private
 * ushortN (aligned to its size): LLVM folds the two back into one
 * unaligned vcvtph2ps from memory a half8 (a ushort16 read whole took
 * four more shuffles). */
#define RAWV(v, p) CLR_CAT(clr_vload_half_any, CLR_VEC)((v), (p))
#if CLR_VEC == 4
inline float4 clr_vload_half_any4(ulong v, __global const half *p) {
  ushort4 bits = vload4(v, (__global const ushort *)p);
  return vload_half4(0, (__private const half *)&bits);
}
#else
inline float8 clr_vload_half_any8(ulong v, __global const half *p) {
  ushort8 bits = vload8(v, (__global const ushort *)p);
  return vload_half8(0, (__private const half *)&bits);
}
#endif
#if CLR_VEC == 16
inline float16 clr_vload_half_any16(ulong v, __global const half *p) {
  return (float16)(clr_vload_half_any8(2 * v, p),
                   clr_vload_half_any8(2 * v + 1, p));
}
#endif
#elif CLR_IN_HALF /* half: decoded to float, whatever the alignment */
#define RAWV(v, p) CLR_CAT(vload_half, CLR_VEC)((v), (p))
#elif CLR_ALIGNED
#define RAWV(v, p) (((__global const INV_T *)(p))[v])
#else
#define RAWV(v, p) CLR_CAT(vload, CLR_VEC)((v), (p))
#endif
#endif

/* Vector v of the input (elements v * CLR_VEC ...) as accumulator values,
 * mapped (common.cl's MAPPED); q is the second input of a dot product
 * (otherwise unread).  The built-in maps and the dot product work on whole
 * vectors; an expression map sees one element at a time. */
inline ACCV_T clr_load_vec_raw(__global const IN_T *p, __global const IN_T *q,
                               ulong v, ulong base) {
#if CLR_VEC == 1
  return MAPPED(IN_AT(p, v), IN_AT(q, v), base + v);
#elif CLR_MAP == 3
  /* Lane by lane, unrolled over the vector's components (.s0, .s1 ...):
   * straight-line scalar code the compiler can vectorise again. */
  XV_T xv = RAWV(v, p);
#if CLR_INPUTS == 2
  XV_T yv = RAWV(v, q);
#endif
  ulong i0 = base + v * CLR_VEC;
#define CLR_LANE(k) MAPPED(xv.s##k, yv.s##k, i0 + 0x##k),
#define CLR_LANE_LAST(k) MAPPED(xv.s##k, yv.s##k, i0 + 0x##k)
#if CLR_VEC == 2
  return (ACCV_T)(CLR_LANE(0) CLR_LANE_LAST(1));
#elif CLR_VEC == 4
  return (ACCV_T)(CLR_LANE(0) CLR_LANE(1) CLR_LANE(2) CLR_LANE_LAST(3));
#elif CLR_VEC == 8
  return (ACCV_T)(CLR_LANE(0) CLR_LANE(1) CLR_LANE(2) CLR_LANE(3) CLR_LANE(4)
                      CLR_LANE(5) CLR_LANE(6) CLR_LANE_LAST(7));
#else
  return (ACCV_T)(CLR_LANE(0) CLR_LANE(1) CLR_LANE(2) CLR_LANE(3) CLR_LANE(4)
                      CLR_LANE(5) CLR_LANE(6) CLR_LANE(7) CLR_LANE(8)
                          CLR_LANE(9) CLR_LANE(a) CLR_LANE(b) CLR_LANE(c)
                              CLR_LANE(d) CLR_LANE(e) CLR_LANE_LAST(f));
#endif
#elif CLR_OP_IS_LOGICAL
  /* and / or: only "non-zero" matters (-1 for true in a vector; the
   * lanes fold to 0 or 1). */
  return CONVV(RAWV(v, p) != (X_T)0);
#elif CLR_MAP == 1 && ACC_IS_FP
  return fabs(CONVV(RAWV(v, p)));
#elif CLR_MAP == 1
  return CONVV(abs(CONVV(RAWV(v, p))));
#elif CLR_MAP == 2
  ACCV_T a = CONVV(RAWV(v, p));
  return a * a;
#elif CLR_INPUTS == 2
  return CONVV(RAWV(v, p)) * CONVV(RAWV(v, q));
#else
  return CONVV(RAWV(v, p));
#endif
}

/* The same, NaNs skipped (common.cl's CLR_SKIP_NANV) where the operation
 * says so. */
inline ACCV_T clr_load_vec(__global const IN_T *p, __global const IN_T *q,
                           ulong v, ulong base) {
  ACCV_T x = clr_load_vec_raw(p, q, v, base);
  return CLR_SKIP_NANV(x);
}

/* Order keys (clr_key, clr_unkey, KEYV_T): common.cl. */
