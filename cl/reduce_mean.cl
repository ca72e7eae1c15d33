/* A mean from its sum on the device, with the bits of the host's division
 * (src/lib/core/combine.c, clr_opt_sum_to_mean): the sum and the count
 * converted to long double, divided there, the quotient rounded to the
 * mean's type.  The long double arithmetic is done here in integers: the
 * exact quotient is rounded to CLR_LDBL_BITS significant bits (the host's
 * LDBL_MANT_DIG: 64 on x86, 53 where long double is double; the operands
 * rounded to that many bits first, as their conversion does), then that
 * value to float (24 bits) or double (53), denormals and overflow
 * included, each rounding to nearest, ties to even.  No floating-point
 * operation is used, so a device without cl_khr_fp64 writes double means
 * too (as bits).
 *
 * Build options beyond common.cl:
 *   CLR_ACC_<T>          the sum's type: float, double, long or ulong
 *   -DCLR_LDBL_BITS=<L>  53..64
 * The mean is float for a float sum, else double (the result types'
 * rule), written as its bits. */
#ifndef CLR_LDBL_BITS
#define CLR_LDBL_BITS 64
#endif

#if CLR_ACC_FLOAT
#define MEAN_BITS_T uint
#define MEAN_P 24
#define MEAN_EMIN (-126)
#define MEAN_BIAS 127
#define MEAN_INF 0x7f800000ul
#define MEAN_QUIET 0x00400000ul
#define MEAN_SIGN 0x80000000ul
#else
#define MEAN_BITS_T ulong
#define MEAN_P 53
#define MEAN_EMIN (-1022)
#define MEAN_BIAS 1023
#define MEAN_INF 0x7ff0000000000000ul
#define MEAN_QUIET 0x0008000000000000ul
#define MEAN_SIGN 0x8000000000000000ul
#endif

/* m * 2^*e (m not 0) rounded to bits significant bits (at most 64), to
 * nearest, ties to even: the result's top bit at 63 (m normalised). */
inline ulong mean_round(ulong m, int *e, int bits) {
  int lz = (int)clz(m);
  m <<= lz;
  *e -= lz;
  if (bits >= 64)
    return m;
  int drop = 64 - bits;
  ulong low = m & (((ulong)1 << drop) - 1), mid = (ulong)1 << (drop - 1);
  m >>= drop;
  if (low > mid || (low == mid && (m & 1)))
    m++;
  if (m >> bits) { /* carried out: one bit more */
    m >>= 1;
    *e += 1;
  }
  *e += drop;
  lz = (int)clz(m);
  *e -= lz;
  return m << lz;
}

/* sum: the sum at element sum_off; the count is counts[count_off] when
 * counts_given, else n; the mean's bits to out[out_off]. */
__kernel void clr_mean(__global const ACC_T *sum, ulong sum_off,
                       __global const ulong *counts, ulong count_off,
                       uint counts_given, ulong n, __global MEAN_BITS_T *out,
                       ulong out_off) {
  if (get_global_id(0) != 0)
    return;
  ulong count = counts_given ? counts[count_off] : n;
  ACC_T s = sum[sum_off];
  ulong sign = 0, mag; /* |s| = mag * 2^e */
  int e = 0;
#if CLR_ACC_FLOAT || CLR_ACC_DOUBLE
#if CLR_ACC_FLOAT
  ulong b = as_uint(s);
  ulong frac = b & 0x7ffffful, be = (b >> 23) & 0xff;
  sign = b >> 31;
  int special = be == 0xff, bias = 150, hidden = 23;
#else
  ulong b = as_ulong(s);
  ulong frac = b & 0xffffffffffffful, be = (b >> 52) & 0x7ff;
  sign = b >> 63;
  int special = be == 0x7ff, bias = 1075, hidden = 52;
#endif
  if (count == 0) { /* 0 / 0 and the like: the host's NaN */
    out[out_off] = (MEAN_BITS_T)(MEAN_INF | MEAN_QUIET);
    return;
  }
  if (special) { /* inf / n: inf; NaN / n: the NaN, quieted */
    out[out_off] = (MEAN_BITS_T)(frac ? (b | MEAN_QUIET)
                                      : ((sign ? MEAN_SIGN : 0) | MEAN_INF));
    return;
  }
  mag = be ? frac | ((ulong)1 << hidden) : frac;
  e = be ? (int)be - bias : 1 - bias;
#elif CLR_ACC_LONG
  sign = s < 0;
  mag = s < 0 ? (ulong)(-(s + 1)) + 1 : (ulong)s;
#else
  mag = s;
#endif
  if (count == 0) {
    out[out_off] = (MEAN_BITS_T)(MEAN_INF | MEAN_QUIET);
    return;
  }
  if (mag == 0) { /* +-0 / n */
    out[out_off] = (MEAN_BITS_T)(sign ? MEAN_SIGN : 0);
    return;
  }
  /* The operands as long doubles, then the quotient's bits: a and b
   * normalised to [2^63, 2^64), so a / b lies in (1/2, 2). */
  int ea = e, eb = 0;
  ulong a = mean_round(mag, &ea, CLR_LDBL_BITS);
  ulong d = mean_round(count, &eb, CLR_LDBL_BITS);
  int first = a >= d;
  ulong r = a;
  ulong carry = 0; /* the remainder is carry * 2^64 + r */
  if (!first) {
    carry = r >> 63;
    r <<= 1;
  }
  int qe = ea - eb - (first ? 0 : 1); /* the leading bit's exponent */
  ulong q = 0;
  for (int i = 0; i < CLR_LDBL_BITS; i++) {
    ulong bit = carry || r >= d;
    if (bit)
      r -= d;
    q = (q << 1) | bit;
    carry = r >> 63;
    r <<= 1;
  }
  ulong rbit = carry || r >= d;
  if (rbit)
    r -= d;
  ulong sticky = r != 0;
  if (rbit && (sticky || (q & 1))) {
    q++;
    if (CLR_LDBL_BITS == 64 ? q == 0 : (q >> CLR_LDBL_BITS) != 0) {
      q = (ulong)1 << (CLR_LDBL_BITS - 1);
      qe++;
    }
  }
  /* The long double q * 2^(qe - L + 1) to the mean's type. */
  int drop = CLR_LDBL_BITS - MEAN_P;
  if (qe < MEAN_EMIN)
    drop += MEAN_EMIN - qe;
  ulong m;
  if (drop >= 65) {
    m = 0;
  } else if (drop == 0) {
    m = q;
  } else {
    ulong low = drop == 64 ? q : q & (((ulong)1 << drop) - 1);
    ulong mid = (ulong)1 << (drop - 1);
    m = drop == 64 ? 0 : q >> drop;
    if (low > mid || (low == mid && (m & 1)))
      m++;
  }
  ulong bits =
      qe >= MEAN_EMIN ? ((ulong)(qe + MEAN_BIAS - 1) << (MEAN_P - 1)) + m : m;
  if (bits >= MEAN_INF)
    bits = MEAN_INF;
  out[out_off] = (MEAN_BITS_T)(bits | (sign ? MEAN_SIGN : 0));
}
