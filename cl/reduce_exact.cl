/* Exact sums of float and double (the ExBLAS scheme: Collange, Defour,
 * Graillat, Iakymchuk, Parallel Computing 49, 2015; docs/EXACT.md says
 * why this one).
 *
 * The result is the true sum of the inputs, held as a long fixed-point
 * integer (the superaccumulator): bit 0 weighs the smallest denormal
 * (2^-149, 2^-1074), every finite input is an integer multiple of it, and
 * integer addition is associative, so the accumulator's value cannot
 * depend on the order, the shape or the device.  The host rounds it once
 * (src/lib/drivers/exact.c), or clr_exact_round on the device.  A
 * matrix's rows and columns (src/lib/drivers/matrix.c) take a
 * superaccumulator a result: clr_exact_axis on GPUs, clr_exact_runs on
 * CPUs, below.
 *
 * The superaccumulator is EX_WORDS signed 64-bit words; word w weighs
 * 2^(32 w) and receives 32-bit digits, so every word has 31 bits of
 * headroom for carries.  Each work-group keeps one in local memory and
 * adds it to the call's, in global memory: word by word with atomics, the
 * digit to its word and the carry to the next (a work-group adds below
 * 2^33 to any word, the host allows fewer than 2^29 work-groups a call).
 *
 * Each work-item first filters its elements through a short floating-point
 * expansion of EX_TERMS vectors (error-free TwoSum, Knuth): t[0] holds the
 * running sum, t[1] its rounding errors, and so on; an error that falls
 * out of the last term goes into the work-group's superaccumulator in
 * local memory.  TwoSum is exact only without overflow or underflow, so
 * elements are split on their magnitude:
 *   EX_SMALL <= |x| < EX_LARGE   the expansion (every value there is a
 *     multiple of ulp(EX_SMALL), so no sum or error is ever a denormal,
 *     and a device that flushes denormals loses nothing; no partial sum of
 *     fewer than 2^60 of them can overflow)
 *   everything else              decomposed from its bits (sign, exponent,
 *     mantissa) and added to the superaccumulator as integers: denormals,
 *     zeros, huge values, infinities and NaN (recorded as flags) never
 *     touch the device's floating-point arithmetic.
 * At the end the work-items' expansions are merged pairwise down a tree in
 * local memory (TwoSum again, errors out of the last term to the
 * superaccumulator), and work-item 0 adds the group's expansion exactly.
 *
 * Build options beyond common.cl (CLR_IN_FLOAT or CLR_IN_DOUBLE):
 *   -DCLR_VEC=<1..16>        elements per load; the expansion is a vector
 *   -DCLR_LAYOUT=<1|2>       strided (GPUs) or contiguous (CPUs), as in
 *                            reduce_coarse.cl
 *   -DCLR_INT64_ATOMICS=1    local 64-bit atomics (cl_khr_int64_base_
 *                            atomics); 0: pairs of core 32-bit atomics
 *   -DCLR_TERMS=<n>          terms of the expansion (tuning exact.terms)
 *
 * The call's superaccumulator is the words, then a 32-bit word of flags:
 *   EX_POS_INF 1, EX_NEG_INF 2, EX_NAN 4, EX_NONZERO 8 (an element other
 *   than -0.0 was seen: the sign of a zero sum).
 */
#ifndef CLR_INT64_ATOMICS
#define CLR_INT64_ATOMICS 0
#endif
#ifndef CLR_TERMS
#define CLR_TERMS 2
#endif

#if CLR_IN_FLOAT
#define EX_T float
#define EX_BITS_T uint
#define EX_AS_BITS(x) as_uint(x)
#define EX_FRAC_BITS 23
#define EX_EXP_MASK 0xffu
#define EX_SIGN_SHIFT 31
/* bits 0..276 hold any float (2^-149 .. 2^128), 64 more for carries */
#ifndef CLR_EX_WORDS
#define CLR_EX_WORDS 12
#endif
#define EX_SMALL 0x1p-100f
#define EX_LARGE 0x1p64f
#else
#define EX_T double
#define EX_BITS_T ulong
#define EX_AS_BITS(x) as_ulong(x)
#define EX_FRAC_BITS 52
#define EX_EXP_MASK 0x7fful
#define EX_SIGN_SHIFT 63
/* bits 0..2098 hold any double (2^-1074 .. 2^1024), 64 more for carries */
#ifndef CLR_EX_WORDS
#define CLR_EX_WORDS 69
#endif
#define EX_SMALL 0x1p-900
#define EX_LARGE 0x1p900
#endif

/* The host passes the count it reads back (src/lib/exact.c). */
#define EX_WORDS CLR_EX_WORDS

#define EX_POS_INF 1u
#define EX_NEG_INF 2u
#define EX_NAN 4u
#define EX_NONZERO 8u

/* EXM_T: what comparing two EXV_T gives (a lane mask). */
#if CLR_VEC == 1
#define EXV_T EX_T
#define EX_AS_BITSV(x) EX_AS_BITS(x)
#if CLR_IN_FLOAT
#define EXM_T int
#else
#define EXM_T long
#endif
#define EX_ALL(c) (c)
#define EX_ANY(c) (c)
#define EX_LOADV(v, p) ((p)[v])
#else
#define EXV_T CLR_CAT(EX_T, CLR_VEC)
#if CLR_IN_FLOAT
#define EXM_T CLR_CAT(int, CLR_VEC)
#define EX_AS_BITSV(x) CLR_CAT(as_uint, CLR_VEC)(x)
#else
#define EXM_T CLR_CAT(long, CLR_VEC)
#define EX_AS_BITSV(x) CLR_CAT(as_ulong, CLR_VEC)(x)
#endif
/* all() and any() by halving: PoCL's builtins test lane by lane. */
#define EX_ALL(c) (ex_and_lanes(c) != 0)
#define EX_ANY(c) (ex_or_lanes(c) != 0)
#define EX_LOADV(v, p) CLR_CAT(vload, CLR_VEC)((v), (p))
#endif

#if CLR_VEC > 1
/* Lane masks and-ed and or-ed together, by halving (common.cl). */
#define EX_AND(a, b) ((a) & (b))
#define EX_OR(a, b) ((a) | (b))
#if CLR_IN_FLOAT
CLR_DEFINE_FOLD(ex_and_lanes, int, EX_AND)
CLR_DEFINE_FOLD(ex_or_lanes, int, EX_OR)
#else
CLR_DEFINE_FOLD(ex_and_lanes, long, EX_AND)
CLR_DEFINE_FOLD(ex_or_lanes, long, EX_OR)
#endif
#endif

/* ---- the superaccumulators: the work-group's in local memory, the
 * call's in global memory (the same words; the host zeroes it, every
 * work-group of every launch of the call adds its own to it, and the host
 * rounds it). */

#if CLR_INT64_ATOMICS
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
typedef long ex_word_t; /* one word */
#define EX_SLOTS EX_WORDS
#define EX_WORD_ADD(name, space)                                               \
  inline void name(space ex_word_t *acc, uint w, long piece) {                 \
    if (piece)                                                                 \
      atom_add(&acc[w], piece);                                                \
  }
inline long ex_word_get(__local const ex_word_t *acc, uint w) { return acc[w]; }
#else
/* A word as two 32-bit halves (core atomics only).  atomic_add returns the
 * low half's old value, so a carry out of it is seen exactly and added to
 * the high half: the pair always holds the sum of the pieces modulo 2^64,
 * which is their sum, as no word's sum passes 2^62 in magnitude. */
typedef uint ex_word_t;
#define EX_SLOTS (2 * EX_WORDS)
#define EX_WORD_ADD(name, space)                                               \
  inline void name(space ex_word_t *acc, uint w, long piece) {                 \
    if (!piece)                                                                \
      return;                                                                  \
    ulong u = (ulong)piece;                                                    \
    uint lo = (uint)u, hi = (uint)(u >> 32);                                   \
    uint old = atomic_add(&acc[2 * w], lo);                                    \
    hi += (uint)(old + lo < old);                                              \
    if (hi)                                                                    \
      atomic_add(&acc[2 * w + 1], hi);                                         \
  }
inline long ex_word_get(__local const ex_word_t *acc, uint w) {
  return (long)(((ulong)acc[2 * w + 1] << 32) | (ulong)acc[2 * w]);
}
#endif
EX_WORD_ADD(ex_word_add, __local)
EX_WORD_ADD(ex_global_add, __global)

/* Word w of a work-group's superaccumulator acc added to rec's: its low
 * 32 bits to word w, the rest (the carry, below 2^31 in magnitude) to
 * word w + 1, so each global word grows by less than 2^33 a work-group. */
inline void ex_word_out(__global ex_word_t *rec, __local const ex_word_t *acc,
                        uint w) {
  long v = ex_word_get(acc, w);
  if (w + 1 < EX_WORDS) {
    long digit = v & 0xffffffffL;
    ex_global_add(rec, w, digit);
    ex_global_add(rec, w + 1, (v - digit) / 4294967296L); /* exact */
  } else {
    ex_global_add(rec, w, v);
  }
}

/* Add a finite, non-zero x exactly, from its bits: x = +-m 2^(p - bias)
 * with m below 2^(FRAC_BITS+1) becomes two (float) or three (double)
 * 32-bit digits at word p / 32. */
inline void ex_add_bits(__local ex_word_t *acc, EX_T x) {
  EX_BITS_T b = EX_AS_BITS(x);
  uint e = (uint)((b >> EX_FRAC_BITS) & EX_EXP_MASK);
  ulong m = (ulong)(b & (((EX_BITS_T)1 << EX_FRAC_BITS) - 1));
  uint p = 0;
  if (e) {
    m |= (ulong)1 << EX_FRAC_BITS;
    p = e - 1;
  }
  uint w = p >> 5, s = p & 31;
  long d0 = (long)((m << s) & 0xffffffffUL);
  long d1 = (long)((m >> (32 - s)) & 0xffffffffUL);
  if (b >> EX_SIGN_SHIFT) {
    d0 = -d0;
    d1 = -d1;
  }
  ex_word_add(acc, w, d0);
  ex_word_add(acc, w + 1, d1);
#if CLR_IN_DOUBLE
  long d2 = (long)((m >> 1) >> (63 - s)); /* s = 0 gives 0 */
  if (b >> EX_SIGN_SHIFT)
    d2 = -d2;
  ex_word_add(acc, w + 2, d2);
#endif
}

/* An element outside the expansion's range: flags for zeros, infinities
 * and NaN (from the bits, so a flushed denormal is not mistaken for 0),
 * the superaccumulator for the rest. */
inline uint ex_add_slow(__local ex_word_t *acc, EX_T x) {
  EX_BITS_T b = EX_AS_BITS(x);
  EX_BITS_T mag = b & ~((EX_BITS_T)1 << EX_SIGN_SHIFT);
  EX_BITS_T inf = EX_EXP_MASK << EX_FRAC_BITS;
  if (mag > inf)
    return EX_NAN;
  if (mag == inf)
    return (b >> EX_SIGN_SHIFT) ? EX_NEG_INF : EX_POS_INF;
  if (mag == 0)
    return (b >> EX_SIGN_SHIFT) ? 0u : EX_NONZERO;
  ex_add_bits(acc, x);
  return EX_NONZERO;
}

/* ---- the expansion: t[0] + t[1] + ... + t[CLR_TERMS-1] */

/* Knuth's TwoSum: s + e == a + b exactly (round to nearest, no overflow,
 * no underflow: guaranteed by the ranges above). */
#define EX_TWO_SUM(a, b, s, e)                                                 \
  do {                                                                         \
    s = (a) + (b);                                                             \
    EXV_T bb_ = s - (a);                                                       \
    e = ((a) - (s - bb_)) + ((b)-bb_);                                         \
  } while (0)

/* Add v (any lanes) into the expansion t; returns what fell out of the
 * last term (zero almost always). */
#define EX_ACCUMULATE(t, v)                                                    \
  do {                                                                         \
    for (int k_ = 0; k_ < CLR_TERMS; k_++) {                                   \
      EXV_T s_, e_;                                                            \
      EX_TWO_SUM(t[k_], v, s_, e_);                                            \
      t[k_] = s_;                                                              \
      v = e_;                                                                  \
    }                                                                          \
  } while (0)

/* Scalar form for the lane fold and the tree. */
inline EX_T ex_accumulate1(EX_T *t, EX_T v) {
  for (int k = 0; k < CLR_TERMS; k++) {
    EX_T s = t[k] + v;
    EX_T bb = s - t[k];
    EX_T e = (t[k] - (s - bb)) + (v - bb);
    t[k] = s;
    v = e;
  }
  return v;
}

/* Lanes of a vector as an array (vstore keeps it inline). */
#if CLR_VEC == 1
#define EX_LANES(x, arr) arr[0] = (x)
#else
#define EX_LANES(x, arr) CLR_CAT(vstore, CLR_VEC)((x), 0, arr)
#endif

/* clr_exact_axis's and clr_exact_runs's flag, never stored: a
 * superaccumulator was written */
#define EX_TOUCHED 16u

/* One vector of elements into the expansions t (a lane each).  Lanes out
 * of the expansion's range enter it as -0.0 and go the slow way; what
 * falls out of the last term goes to the superaccumulator: lane j's to
 * acc + j * astride, its flags to fl[j * fstride] (with EX_TOUCHED).  One
 * test covers both, as both are rare.  astride = fstride = 0: one
 * superaccumulator and one flags word for every lane. */
#define EX_ELEMENTS_TO(acc, astride, t, x, fl, fstride)                        \
  do {                                                                         \
    EXV_T ax_ = fabs(x);                                                       \
    EXM_T ok_ = (ax_ >= (EXV_T)EX_SMALL) & (ax_ < (EXV_T)EX_LARGE);            \
    EXV_T v_ = select((EXV_T)(-0.0), x, ok_);                                  \
    EX_ACCUMULATE(t, v_);                                                      \
    if (!EX_ALL(ok_ & (v_ == (EXV_T)0))) {                                     \
      EX_T l_[CLR_VEC], r_[CLR_VEC];                                           \
      EX_LANES(x, l_);                                                         \
      EX_LANES(v_, r_);                                                        \
      for (int j_ = 0; j_ < CLR_VEC; j_++) {                                   \
        EX_T a_ = fabs(l_[j_]);                                                \
        __local ex_word_t *aj_ = (acc) + j_ * (astride);                       \
        if (!(a_ >= EX_SMALL && a_ < EX_LARGE))                                \
          (fl)[j_ * (fstride)] |= ex_add_slow(aj_, l_[j_]) | EX_TOUCHED;       \
        if (r_[j_] != 0) {                                                     \
          ex_add_bits(aj_, r_[j_]);                                            \
          (fl)[j_ * (fstride)] |= EX_TOUCHED;                                  \
        }                                                                      \
      }                                                                        \
    }                                                                          \
  } while (0)
#define EX_ELEMENTS(acc, t, x, fl) EX_ELEMENTS_TO(acc, 0, t, x, &(fl), 0)

/* in: n elements from element offset.  sum: the call's superaccumulator
 * (EX_SLOTS words of ex_word_t, then a uint of flags).  terms: CLR_TERMS
 * elements of local memory per work-item. */
__kernel void clr_exact_sum(__global const EX_T *in, ulong offset, ulong n,
                            __global ex_word_t *sum, __local EX_T *terms,
                            ulong per_item) {
  __local ex_word_t acc[EX_SLOTS];
  __local uint group_flags;
  uint lid = (uint)get_local_id(0), wg = (uint)get_local_size(0);
  for (uint i = lid; i < EX_SLOTS; i += wg)
    acc[i] = 0;
  if (lid == 0)
    group_flags = 0;
  barrier(CLK_LOCAL_MEM_FENCE);

  __global const EX_T *p = in + offset;
  ulong nv = n / CLR_VEC, gid = get_global_id(0);
  EXV_T t[CLR_TERMS];
  /* t[0] starts at -0.0: it stays -0.0 (bits and all) until an element
   * of the expansion's range, never a zero, enters it, and sums that
   * cancel exactly give +0.0; so its bits tell whether one did. */
  t[0] = (EXV_T)(-0.0);
  for (int k = 1; k < CLR_TERMS; k++)
    t[k] = (EXV_T)0;
  uint fl = 0;
#if CLR_LAYOUT == 2
  ulong begin = gid * per_item;
  ulong end = min(begin + per_item, nv);
  for (ulong v = begin; v < end; v++) {
    EXV_T x = EX_LOADV(v, p);
    EX_ELEMENTS(acc, t, x, fl);
  }
  ulong tail_owner = min(nv / per_item, (ulong)get_global_size(0) - 1);
#else
  (void)per_item;
  ulong stride = get_global_size(0);
  for (ulong v = gid; v < nv; v += stride) {
    EXV_T x = EX_LOADV(v, p);
    EX_ELEMENTS(acc, t, x, fl);
  }
  ulong tail_owner = 0;
#endif
  if (EX_ANY(EX_AS_BITSV(t[0]) != EX_AS_BITSV((EXV_T)(-0.0))))
    fl |= EX_NONZERO;

  /* Fold the lanes into one scalar expansion. */
  EX_T u[CLR_TERMS], lanes[CLR_TERMS][CLR_VEC];
  for (int k = 0; k < CLR_TERMS; k++) {
    EX_LANES(t[k], lanes[k]);
    u[k] = lanes[k][0];
  }
  for (int j = 1; j < CLR_VEC; j++)
    for (int k = 0; k < CLR_TERMS; k++) {
      EX_T r = ex_accumulate1(u, lanes[k][j]);
      if (r != 0)
        ex_add_bits(acc, r);
    }
  /* Fewer than CLR_VEC elements are left over. */
  if (gid == tail_owner)
    for (ulong i = nv * CLR_VEC; i < n; i++) {
      EX_T x = p[i], a = fabs(x);
      if (a >= EX_SMALL && a < EX_LARGE) {
        fl |= EX_NONZERO;
        EX_T r = ex_accumulate1(u, x);
        if (r != 0)
          ex_add_bits(acc, r);
      } else {
        fl |= ex_add_slow(acc, x);
      }
    }
  fl &= ~EX_TOUCHED;
  if (fl)
    atomic_or(&group_flags, fl);

  /* Merge the work-items' expansions down a tree. */
  for (int k = 0; k < CLR_TERMS; k++)
    terms[lid * CLR_TERMS + k] = u[k];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = clr_pow2_below(wg); s > 0; s >>= 1) {
    if (lid < s && lid + s < wg) {
      for (int k = 0; k < CLR_TERMS; k++) {
        EX_T r = ex_accumulate1(u, terms[(lid + s) * CLR_TERMS + k]);
        if (r != 0)
          ex_add_bits(acc, r);
      }
      for (int k = 0; k < CLR_TERMS; k++)
        terms[lid * CLR_TERMS + k] = u[k];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0)
    for (int k = 0; k < CLR_TERMS; k++)
      if (u[k] != 0)
        ex_add_bits(acc, u[k]);
  barrier(CLK_LOCAL_MEM_FENCE);

  /* Into the call's superaccumulator. */
  for (uint w = lid; w < EX_WORDS; w += wg)
    ex_word_out(sum, acc, w);
  if (lid == 0 && group_flags)
    atomic_or((__global uint *)(sum + EX_SLOTS), group_flags);
}

/* ---- the rounding on the device (clr_enqueue, rows and columns):
 * src/lib/drivers/exact.c's clr_exact_round.  A superaccumulator is
 * carried into normal form, its value rounded once to nearest, ties to
 * even, and the float's or double's bits written: the bits the host's
 * rounding gives. */
#if CLR_IN_FLOAT
#define EX_PREC 24
#define EX_INF_BITS 0x7f800000u
#define EX_NAN_BITS 0x7fc00000u
#else
#define EX_PREC 53
#define EX_INF_BITS 0x7ff0000000000000ul
#define EX_NAN_BITS 0x7ff8000000000000ul
#endif

inline uint ex_limb_bit(const uint *limb, uint i) {
  return (limb[i / 32] >> (i % 32)) & 1u;
}

/* A zero sum's bits: -0 only when every element was -0. */
inline EX_BITS_T ex_zero(uint flags) {
  EX_BITS_T r;
  r = (flags & EX_NONZERO) ? 0 : (EX_BITS_T)1 << EX_SIGN_SHIFT;
  return r;
}

/* The bits of the float or double nearest the superaccumulator's value
 * (its words as 64-bit integers, whichever atomics wrote them). */
inline EX_BITS_T ex_round(const long *words, uint flags) {
  EX_BITS_T r;
  if ((flags & EX_NAN) ||
      (flags & (EX_POS_INF | EX_NEG_INF)) == (EX_POS_INF | EX_NEG_INF)) {
    r = EX_NAN_BITS;
  } else if (flags & (EX_POS_INF | EX_NEG_INF)) {
    r = EX_INF_BITS;
    if (flags & EX_NEG_INF)
      r |= (EX_BITS_T)1 << EX_SIGN_SHIFT;
  } else {
    /* Normal form: 32-bit digits, the top word signed; as two's
     * complement limbs, then the magnitude. */
    uint limb[EX_WORDS + 1];
    long carry = 0, top = 0;
    for (uint w = 0; w < EX_WORDS; w++) {
      long t = words[w] + carry;
      if (w + 1 < EX_WORDS) {
        long digit = t & 0xffffffffL;
        limb[w] = (uint)digit;
        carry = (t - digit) / 4294967296L; /* exact */
      } else {
        top = t;
      }
    }
    limb[EX_WORDS - 1] = (uint)(ulong)top;
    limb[EX_WORDS] = (uint)((ulong)top >> 32);
    int negative = top < 0;
    if (negative) {
      uint c = 1;
      for (uint i = 0; i <= EX_WORDS; i++) {
        ulong s = (ulong)(uint)~limb[i] + c;
        limb[i] = (uint)s;
        c = (uint)(s >> 32);
      }
    }
    long h = -1; /* the highest set bit */
    for (uint i = EX_WORDS + 1; i-- > 0 && h < 0;)
      if (limb[i])
        h = (long)(i * 32) + 31 - (long)clz(limb[i]);
    if (h < 0) {
      r = ex_zero(flags);
    } else {
      long lsb = h - EX_PREC + 1;
      if (lsb < 0)
        lsb = 0;
      /* bits lsb .. h (at most EX_PREC) from the three limbs that hold
       * them, then the round bit and the sticky bits below it, a limb at
       * a time */
      uint lw = (uint)lsb / 32, sh = (uint)lsb % 32;
      ulong win = (ulong)limb[lw];
      if (lw + 1 <= EX_WORDS)
        win |= (ulong)limb[lw + 1] << 32;
      ulong mant = win >> sh;
      if (sh && lw + 2 <= EX_WORDS)
        mant |= (ulong)limb[lw + 2] << (64 - sh);
      mant &= ((ulong)1 << (h - lsb + 1)) - 1;
      if (lsb > 0 && ex_limb_bit(limb, (uint)lsb - 1)) {
        uint below = (uint)lsb - 1; /* sticky: bits 0 .. below - 1 */
        uint sticky = limb[below / 32] & ((1u << (below % 32)) - 1u);
        for (uint i = 0; i < below / 32 && !sticky; i++)
          sticky = limb[i];
        if (sticky || (mant & 1u))
          mant++;
      }
      /* mant * 2^(lsb + bit 0's exponent): lsb is the biased exponent
       * less one (0 for a denormal, whose mant has no hidden bit), and
       * the hidden bit (or a carry into it) adds the one. */
      ulong bits = ((ulong)lsb << (EX_PREC - 1)) + mant;
      if (bits >= (ulong)EX_INF_BITS)
        bits = (ulong)EX_INF_BITS;
      r = (EX_BITS_T)bits;
      if (negative)
        r |= (EX_BITS_T)1 << EX_SIGN_SHIFT;
    }
  }
  return r;
}

/* count superaccumulators from acc, EX_WORDS + 1 longs apart (a record:
 * the words, then the flags), rounded to out[out_off + i]: a work-item
 * each. */
__kernel void clr_exact_round(__global const long *acc, __global EX_BITS_T *out,
                              ulong out_off, ulong count) {
  ulong i = get_global_id(0);
  if (i >= count)
    return;
  __global const long *rec = acc + i * (EX_WORDS + 1);
  long words[EX_WORDS];
  for (uint w = 0; w < EX_WORDS; w++)
    words[w] = rec[w];
  out[out_off + i] =
      ex_round(words, ((__global const uint *)(rec + EX_WORDS))[0]);
}

/* ---- rows and columns of a matrix (src/lib/drivers/matrix.c): a result
 * per output o < n_out, the exact sum of its len elements
 * in[offset + o * out_stride + k * elem_stride].  A work-group takes
 * per_group outputs (G) side by side, its work-items in G x P: work-item
 * (g, p) filters elements p, p + P, ... of output g through its expansion
 * (by_rows: lid = g P + p, so a row's elements are read side by side;
 * else lid = p G + g, a row of G columns at once).  Each output has its
 * superaccumulator in local memory; the expansions merge pairwise down a
 * tree within each output, as in clr_exact_sum.  The launch's second
 * dimension splits the elements: split s takes k in
 * [s per_split, (s + 1) per_split), at most 2^26 (the local words' bound).
 * A work-group takes blocks of G results in turn, from its own to the
 * last, get_num_groups(0) apart (GPUs launch a work-group a block; CPUs a
 * few a core, of one work-item, G = P = 1, each walking many results).
 *   direct: the launch takes every element of its outputs (one split):
 *     the result's bits go to out[out_off + o], rounded here;
 *   else: each output's superaccumulator is added to its record in sums
 *     (EX_WORDS + 1 longs apart, as the call's of clr_exact_sum, zeroed
 *     by clr_exact_zero), rounded by clr_exact_round after the last
 *     launch. */
#define EX_REC_SLOTS (EX_SLOTS + EX_SLOTS / EX_WORDS)

/* One result's end: its expansion u beside its superaccumulator acc and
 * flags f (EX_TOUCHED: acc was written), rounded to out[at] (direct),
 * else added to its record rec by this work-item alone.  Where nothing
 * reached acc the sum is the expansion's, and one addition rounds it (a
 * nonzero one is a multiple of ulp(EX_SMALL): never a denormal).
 * Returns 1 where acc was written (to be zeroed before its next use). */
inline int ex_finish(__local ex_word_t *acc, const EX_T *u, uint f, uint direct,
                     __global EX_BITS_T *out, ulong at,
                     __global ex_word_t *rec) {
#if CLR_TERMS <= 2
  if (direct && !(f & (EX_TOUCHED | EX_POS_INF | EX_NEG_INF | EX_NAN))) {
    EX_T v = u[0];
    for (int k = 1; k < CLR_TERMS; k++)
      v += u[k];
    out[at] = v != 0 ? EX_AS_BITS(v) : ex_zero(f);
    return 0;
  }
#endif
  for (int k = 0; k < CLR_TERMS; k++)
    if (u[k] != 0)
      ex_add_bits(acc, u[k]);
  if (direct) {
    long words[EX_WORDS];
    for (uint w = 0; w < EX_WORDS; w++)
      words[w] = ex_word_get(acc, w);
    out[at] = ex_round(words, f);
    return 1;
  }
  for (uint w = 0; w < EX_WORDS; w++)
    ex_word_out(rec, acc, w);
  if (f & ~EX_TOUCHED)
    atomic_or((__global uint *)(rec + EX_SLOTS), f & ~EX_TOUCHED);
  return 1;
}

/* One scalar element x into the expansion u (clr_exact_sum's tail). */
inline void ex_element1(__local ex_word_t *acc, EX_T *u, EX_T x, uint *fl) {
  EX_T a = fabs(x);
  if (a >= EX_SMALL && a < EX_LARGE) {
    *fl |= EX_NONZERO;
    EX_T r = ex_accumulate1(u, x);
    if (r != 0) {
      ex_add_bits(acc, r);
      *fl |= EX_TOUCHED;
    }
  } else {
    *fl |= ex_add_slow(acc, x) | EX_TOUCHED;
  }
}

#if CLR_VEC == 1 /* an element a load: the host builds it with -DCLR_VEC=1 */

__kernel void clr_exact_axis(__global const EX_T *in, ulong offset, ulong n_out,
                             ulong len, ulong out_stride, ulong elem_stride,
                             uint per_group, uint by_rows, ulong per_split,
                             uint direct, __global ex_word_t *sums,
                             __global EX_BITS_T *out, ulong out_off,
                             __local ex_word_t *accs, __local uint *flags,
                             __local EX_T *terms) {
  uint lid = (uint)get_local_id(0), wg = (uint)get_local_size(0);
  uint G = per_group, P = wg / G;
  uint g = by_rows ? lid / P : lid % G;
  uint p = by_rows ? lid % P : lid / G;
  uint step = by_rows ? 1 : G; /* from (g, p) to (g, p + 1) */
  ulong n_blocks = (n_out + G - 1) / G;
  /* a work-group's blocks of G results (GPUs: one; CPUs: a run) */
  for (ulong ob = get_group_id(0); ob < n_blocks; ob += get_num_groups(0)) {
    for (uint i = lid; i < G * EX_SLOTS; i += wg)
      accs[i] = 0;
    for (uint i = lid; i < G; i += wg)
      flags[i] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);

    ulong o = ob * G + g;
    __local ex_word_t *acc = accs + g * EX_SLOTS;
    ulong k0 = (ulong)get_group_id(1) * per_split;
    ulong k1 = min(k0 + per_split, len);
    EX_T u[CLR_TERMS];
    u[0] = (EX_T)(-0.0); /* as t[0] in clr_exact_sum: its bits tell */
    for (int k = 1; k < CLR_TERMS; k++)
      u[k] = (EX_T)0;
    uint fl = 0;
    if (o < n_out && p < P) {
      /* a pointer stepped (no 64-bit product an element) */
      __global const EX_T *q =
          in + offset + o * out_stride + (k0 + p) * elem_stride;
      ulong qstep = (ulong)P * elem_stride, k = k0 + p;
      /* four loads in flight, then their elements */
      for (; k + 3 * (ulong)P < k1; k += 4 * (ulong)P, q += 4 * qstep) {
        EX_T x0 = q[0], x1 = q[qstep], x2 = q[2 * qstep], x3 = q[3 * qstep];
        EX_ELEMENTS(acc, u, x0, fl);
        EX_ELEMENTS(acc, u, x1, fl);
        EX_ELEMENTS(acc, u, x2, fl);
        EX_ELEMENTS(acc, u, x3, fl);
      }
      for (; k < k1; k += P, q += qstep) {
        EX_T x = *q;
        EX_ELEMENTS(acc, u, x, fl);
      }
      if (EX_AS_BITS(u[0]) != EX_AS_BITS((EX_T)(-0.0)))
        fl |= EX_NONZERO;
      if (fl)
        atomic_or(&flags[g], fl);
    }

    /* Each output's expansions merged down a tree over p. */
    for (int k = 0; k < CLR_TERMS; k++)
      terms[lid * CLR_TERMS + k] = u[k];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = clr_pow2_below(P); s > 0; s >>= 1) {
      if (p < s && p + s < P) {
        uint other = lid + s * step;
        for (int k = 0; k < CLR_TERMS; k++) {
          EX_T r = ex_accumulate1(u, terms[other * CLR_TERMS + k]);
          if (r != 0) {
            ex_add_bits(acc, r);
            atomic_or(&flags[g], EX_TOUCHED);
          }
        }
        for (int k = 0; k < CLR_TERMS; k++)
          terms[lid * CLR_TERMS + k] = u[k];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }

    if (direct) {
      if (p == 0 && o < n_out)
        ex_finish(acc, u, flags[g], 1, out, out_off + o, sums);
    } else {
      if (p == 0)
        for (int k = 0; k < CLR_TERMS; k++)
          if (u[k] != 0)
            ex_add_bits(acc, u[k]);
      barrier(CLK_LOCAL_MEM_FENCE);
      /* Into the outputs' records, the work-group's words side by side */
      ulong o0 = ob * G;
      for (uint i = lid; i < G * EX_WORDS; i += wg) {
        uint gi = i / EX_WORDS;
        if (o0 + gi < n_out)
          ex_word_out(sums + (o0 + gi) * EX_REC_SLOTS, accs + gi * EX_SLOTS,
                      i % EX_WORDS);
      }
      for (uint i = lid; i < G; i += wg)
        if (o0 + i < n_out && (flags[i] & ~EX_TOUCHED))
          atomic_or(
              (__global uint *)(sums + (o0 + i) * EX_REC_SLOTS + EX_SLOTS),
              flags[i] & ~EX_TOUCHED);
    }
    barrier(CLK_LOCAL_MEM_FENCE); /* the next block's zeroing after */
  }
}

#else /* CLR_VEC > 1 */

/* results a block of clr_exact_runs at most: EX_RUN vectors of them */
#define EX_RUN 8

/* CPUs (src/lib/drivers/matrix.c): clr_exact_axis's arguments and
 * results, a work-group of one work-item walking blocks of results, its
 * lanes the CPU's vector lanes.  per_group 1: a block is a result (a
 * long row), CLR_VEC adjacent elements a load, the lanes' expansions
 * folded at its end as clr_exact_sum folds them; else a block is up to
 * per_group (at most EX_RUN CLR_VEC) results, a lane each (each lane's
 * expansion and superaccumulator its result's), their elements loaded
 * side by side (adjacent columns: a run of the row read in one stream)
 * or gathered (short rows); results short of a vector one at a time.  accs:
 * per_group superaccumulators; flags and terms unused. */
__kernel void clr_exact_runs(__global const EX_T *in, ulong offset, ulong n_out,
                             ulong len, ulong out_stride, ulong elem_stride,
                             uint per_group, uint by_rows, ulong per_split,
                             uint direct, __global ex_word_t *sums,
                             __global EX_BITS_T *out, ulong out_off,
                             __local ex_word_t *accs, __local uint *flags,
                             __local EX_T *terms) {
  (void)by_rows;
  (void)flags;
  (void)terms;
  uint one = per_group == 1; /* a result a block, read along its elements */
  ulong k0 = (ulong)get_group_id(1) * per_split;
  ulong k1 = min(k0 + per_split, len), n = k1 > k0 ? k1 - k0 : 0;
  ulong n_blocks = (n_out + per_group - 1) / per_group;
  /* zeroed once, and again after a result that wrote its own */
  for (uint i = 0; i < per_group * EX_SLOTS; i++)
    accs[i] = 0;
  for (ulong ob = get_group_id(0); ob < n_blocks; ob += get_num_groups(0)) {
    ulong o0 = ob * per_group;
    uint nres = (uint)min((ulong)per_group, n_out - o0);
    ulong written = 0; /* a bit a superaccumulator */
    EXV_T t[CLR_TERMS];
    t[0] = (EXV_T)(-0.0);
    for (int k = 1; k < CLR_TERMS; k++)
      t[k] = (EXV_T)0;
    EX_T u[CLR_TERMS], lanes[CLR_TERMS][CLR_VEC];
    if (one) {
      __global const EX_T *q = in + offset + o0 * out_stride + k0;
      ulong nv = n / CLR_VEC;
      uint fl = 0;
      for (ulong v = 0; v < nv; v++) {
        EXV_T x = EX_LOADV(v, q);
        EX_ELEMENTS(accs, t, x, fl);
      }
      if (EX_ANY(EX_AS_BITSV(t[0]) != EX_AS_BITSV((EXV_T)(-0.0))))
        fl |= EX_NONZERO;
      for (int k = 0; k < CLR_TERMS; k++) {
        EX_LANES(t[k], lanes[k]);
        u[k] = lanes[k][0];
      }
      for (int j = 1; j < CLR_VEC; j++)
        for (int k = 0; k < CLR_TERMS; k++) {
          EX_T r = ex_accumulate1(u, lanes[k][j]);
          if (r != 0) {
            ex_add_bits(accs, r);
            fl |= EX_TOUCHED;
          }
        }
      for (ulong i = nv * CLR_VEC; i < n; i++)
        ex_element1(accs, u, q[i], &fl);
      written = (ulong)ex_finish(accs, u, fl, direct, out, out_off + o0,
                                 sums + o0 * EX_REC_SLOTS);
    } else {
      /* nvec vectors of results side by side, then the rest one at a
       * time */
      uint nvec = nres / CLR_VEC;
      EXV_T tv[EX_RUN][CLR_TERMS];
      uint fl[EX_RUN * CLR_VEC];
      for (uint v = 0; v < nvec; v++) {
        tv[v][0] = (EXV_T)(-0.0);
        for (int k = 1; k < CLR_TERMS; k++)
          tv[v][k] = (EXV_T)0;
      }
      for (uint j = 0; j < nres; j++)
        fl[j] = 0;
      __global const EX_T *q = in + offset + o0 * out_stride + k0 * elem_stride;
      for (ulong k = 0; k < n; k++, q += elem_stride)
        for (uint v = 0; v < nvec; v++) {
          EXV_T x;
          if (out_stride == 1) { /* adjacent columns */
            x = EX_LOADV(v, q);
          } else { /* rows side by side: a lane's element gathered */
            EX_T g[CLR_VEC];
            for (int j = 0; j < CLR_VEC; j++)
              g[j] = q[(v * CLR_VEC + j) * out_stride];
            x = EX_LOADV(0, g);
          }
          EX_ELEMENTS_TO(accs + v * CLR_VEC * EX_SLOTS, EX_SLOTS, tv[v], x,
                         fl + v * CLR_VEC, 1);
        }
      for (uint v = 0; v < nvec; v++) {
        for (int k = 0; k < CLR_TERMS; k++)
          EX_LANES(tv[v][k], lanes[k]);
        for (int j = 0; j < CLR_VEC; j++) {
          uint i = v * CLR_VEC + j;
          for (int k = 0; k < CLR_TERMS; k++)
            u[k] = lanes[k][j];
          if (EX_AS_BITS(u[0]) != EX_AS_BITS((EX_T)(-0.0)))
            fl[i] |= EX_NONZERO;
          written |=
              (ulong)ex_finish(accs + i * EX_SLOTS, u, fl[i], direct, out,
                               out_off + o0 + i, sums + (o0 + i) * EX_REC_SLOTS)
              << i;
        }
      }
      for (uint i = nvec * CLR_VEC; i < nres; i++) {
        __global const EX_T *qi =
            in + offset + (o0 + i) * out_stride + k0 * elem_stride;
        uint f1 = 0;
        u[0] = (EX_T)(-0.0);
        for (int k = 1; k < CLR_TERMS; k++)
          u[k] = (EX_T)0;
        for (ulong k = 0; k < n; k++, qi += elem_stride)
          ex_element1(accs + i * EX_SLOTS, u, *qi, &f1);
        written |=
            (ulong)ex_finish(accs + i * EX_SLOTS, u, f1, direct, out,
                             out_off + o0 + i, sums + (o0 + i) * EX_REC_SLOTS)
            << i;
      }
    }
    for (uint j = 0; j < nres; j++)
      if (written & ((ulong)1 << j))
        for (uint i = 0; i < EX_SLOTS; i++)
          accs[j * EX_SLOTS + i] = 0;
  }
}

#endif

/* count records of sums (EX_REC_SLOTS words each) zeroed. */
__kernel void clr_exact_zero(__global ex_word_t *sums, ulong count) {
  for (ulong i = get_global_id(0); i < count * EX_REC_SLOTS;
       i += get_global_size(0))
    sums[i] = 0;
}
