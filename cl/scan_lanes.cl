/* A vector's elements scanned in registers, for the scans that walk a
 * run a vector at a time (cl/scan_tile.cl, cl/scan_segmented.cl; the
 * host puts this file first).  With -DCLR_VEC=2|4|8:
 *   VLOAD(i, p)       CLR_VEC elements from p + i, converted to ACC_T
 *                     (half data decoded to float)
 *   VSTORE(v, i, p)   the vector to p + i
 *   clr_scan_lanes(v) its inclusive scan (log2(VEC) shifted combines,
 *                     which depend only on the loads), SHIFT1(v) the
 *                     lanes moved up one with the identity first (the
 *                     exclusive form), LAST(v) the last lane.
 * clr_scan_run, for any CLR_VEC, scans a work-item's run from a running
 * value (cl/scan_tile.cl, and the decoupled scan's CPU shape).
 *
 * A floating-point min or max (CLR_RUN_KEYS) runs clr_scan_run's vectors
 * on order keys (common.cl), where a combine is one integer min / max,
 * not OP's chain of compares and selects: on PoCL the float min scan of
 * 1e8 took 154 ms against the sum's 44 (docs/perf-log/scans.md). */

#if CLR_VEC > 1 /* (ACCV_T: common.cl) */
#if CLR_IN_HALF /* half: decoded to float */
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

#if CLR_VEC == 8
#define ACC4_T CLR_CAT(ACC_T, 4)
inline ACC4_T clr_scan4(ACC4_T v) {
  ACC4_T t = (ACC4_T)(ID, v.s0, v.s1, v.s2);
  v = OP(t, v);
  t = (ACC4_T)(ID, ID, v.s0, v.s1);
  return OP(t, v);
}
inline ACCV_T clr_scan_lanes(ACCV_T v) {
  ACC4_T lo = clr_scan4(v.lo), hi = clr_scan4(v.hi);
  hi = OP((ACC4_T)(lo.s3), hi);
  return (ACCV_T)(lo, hi);
}
#else
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
#endif

#if CLR_VEC > 1 && CLR_KEYED
#define CLR_RUN_KEYS 1
/* The lanes moved up one, the key id first; the inclusive scan of a
 * vector of keys. */
#if CLR_VEC == 2
#define KSHIFT1(v, id) ((KEYV_T)(id, (v).s0))
#elif CLR_VEC == 4
#define KSHIFT1(v, id) ((KEYV_T)(id, (v).s0, (v).s1, (v).s2))
#else
#define KSHIFT1(v, id)                                                         \
  ((KEYV_T)(id, (v).s0, (v).s1, (v).s2, (v).s3, (v).s4, (v).s5, (v).s6))
#endif
inline KEYV_T clr_scan_lanes_keys(KEYV_T v, CLR_KEY_T id) {
  v = CLR_KEY_OP(KSHIFT1(v, id), v);
#if CLR_VEC == 4
  v = CLR_KEY_OP((KEYV_T)(id, id, v.s0, v.s1), v);
#elif CLR_VEC == 8
  v = CLR_KEY_OP((KEYV_T)(id, id, v.s0, v.s1, v.s2, v.s3, v.s4, v.s5), v);
  v = CLR_KEY_OP((KEYV_T)(id, id, id, id, v.s0, v.s1, v.s2, v.s3), v);
#endif
  return v;
}
#else
#define CLR_RUN_KEYS 0
#endif

#if CLR_VEC > 1
/* One vector v of a run from the running value run (a chain, common.cl):
 * *y gets v's inclusive scan combined with run (exclusive: the lanes moved
 * up one first); returns the running value after v.  clr_scan_run and the
 * segmented scan's runs (cl/scan_segmented.cl) walk their vectors by it. */
inline CLR_CHAIN_T clr_scan_vector(ACCV_T v, CLR_CHAIN_T run, uint exclusive,
                                   ACCV_T *y) {
#if CLR_RUN_KEYS
  CLR_KEY_T id = clr_key1(IDENTITY, CLR_OP_MAX);
  KEYV_T s = clr_scan_lanes_keys(clr_key(v, CLR_OP_MAX), id);
  KEYV_T r = (KEYV_T)(run);
  *y = clr_unkey(exclusive ? CLR_KEY_OP(r, KSHIFT1(s, id)) : CLR_KEY_OP(r, s));
#else
  ACCV_T s = clr_scan_lanes(v);
  ACCV_T r = (ACCV_T)(run);
  *y = exclusive ? OP(r, SHIFT1(s)) : OP(r, s);
#endif
  return CLR_CHAIN_OP(run, LAST(s));
}
#endif

/* Non-temporal stores (clang's builtin, where the compiler has it):
 * vectors written past the caches, without reading their lines first.
 * For outputs larger than the caches, where a store that allocates costs
 * a read of the line as well as the write (memcpy does the same). */
#if defined(__has_builtin)
#if __has_builtin(__builtin_nontemporal_store)
#define CLR_HAS_NT_STORE 1
#endif
#endif

#if CLR_HAS_NT_STORE && CLR_VEC > 1
/* Half a vector, for non-temporal stores to an output aligned only to
 * that (a large malloc'd array starts 16 bytes past a page; 8 ints are
 * 32). */
#if CLR_VEC == 2
#define HALFV_T ACC_T
#elif CLR_VEC == 4
#define HALFV_T CLR_CAT(ACC_T, 2)
#else
#define HALFV_T CLR_CAT(ACC_T, 4)
#endif
#endif

/* Scan elements [base, end) of in into out from the running value run
 * (the combination of everything before base): whole vectors up to vend
 * (base + a multiple of CLR_VEC), then one element at a time.  Returns the
 * running value after element end - 1.  Each element is read once and
 * written once, so in == out is safe.  stream: the vectors are stored
 * non-temporally where the compiler can, whole where out + base is
 * aligned to a vector, in halves where it is aligned to half of one
 * (else stored as usual).  The arithmetic is the same either way, so the
 * results are the same bits. */
inline ACC_T clr_scan_run(__global const IN_T *in, __global ACC_T *out,
                          ulong base, ulong vend, ulong end, ACC_T run,
                          uint exclusive, uint stream) {
#if CLR_VEC > 1
#if CLR_HAS_NT_STORE
  size_t mis = (size_t)(out + base) % sizeof(ACCV_T);
  uint nt = !stream                           ? 0u
            : mis == 0                        ? 2u
            : mis % (sizeof(ACCV_T) / 2) == 0 ? 1u
                                              : 0u;
#else
  (void)stream;
#endif
  CLR_CHAIN_T chain = clr_chain(run);
  for (ulong i = base; i < vend; i += CLR_VEC) {
    ACCV_T y;
    chain = clr_scan_vector(VLOAD(i, in), chain, exclusive, &y);
#if CLR_HAS_NT_STORE
    if (nt == 2u) {
      __builtin_nontemporal_store(y, (__global ACCV_T *)(out + i));
    } else if (nt == 1u) {
      __builtin_nontemporal_store(y.lo, (__global HALFV_T *)(out + i));
      __builtin_nontemporal_store(y.hi,
                                  (__global HALFV_T *)(out + i + CLR_VEC / 2));
    } else
#endif
      VSTORE(y, i, out);
  }
  if (vend > base) /* (with no vector, a NaN carry-in keeps its bits) */
    run = clr_unchain(chain);
#else
  (void)stream;
#endif
  for (ulong i = vend; i < end; i++) {
    ACC_T x = LOAD(IN_AT(in, i));
    if (exclusive) {
      out[i] = run;
      run = OP(run, x);
    } else {
      run = OP(run, x);
      out[i] = run;
    }
  }
  return run;
}
