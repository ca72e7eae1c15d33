/* The CPU's exact sum of floats or doubles, written apart from the
 * library's (src/lib/exact.c, cl/reduce_exact.cl) so that each checks the
 * other: elements are binned by their exponent field (one 64-bit integer
 * of mantissas per exponent, emptied every 512 elements), the bins are
 * added into one big two's-complement integer in units of the smallest
 * denormal, and that integer is rounded to nearest, ties to even, from a
 * 64-bit window and a sticky bit.  tests/exact/test_exact_rational.py
 * checks it against Python's exact rational arithmetic. */
#include "exact_sum.h"
#include "progress_counter.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define LIMBS 80 /* 2560 bits: any double sum of up to 2^400 elements */
#define FLUSH_EVERY                                                            \
  512 /* mantissas below 2^53: 512 of them stay below 2^62                     \
       */

typedef struct big {
  uint32_t limb[LIMBS]; /* two's complement, little-endian */
} big;

/* big += v * 2^shift, v signed. */
static void big_add(big *b, int64_t v, unsigned shift) {
  if (v == 0)
    return;
  int neg = v < 0;
  uint64_t mag = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  unsigned at = shift / 32, s = shift % 32;
  /* mag << s spans three limbs */
  uint32_t part[3] = {(uint32_t)mag, (uint32_t)(mag >> 32), 0};
  if (s) {
    part[0] = (uint32_t)(mag << s);
    part[1] = (uint32_t)(mag >> (32 - s));
    part[2] = (uint32_t)(mag >> (64 - s));
  }
  uint64_t carry = 0;
  for (unsigned i = 0; at + i < LIMBS; i++) {
    uint64_t p = i < 3 ? part[i] : 0;
    if (i >= 3 && carry == 0)
      break;
    if (!neg) {
      uint64_t t = (uint64_t)b->limb[at + i] + p + carry;
      b->limb[at + i] = (uint32_t)t;
      carry = t >> 32;
    } else { /* subtract, carry is the borrow */
      uint64_t t = (uint64_t)b->limb[at + i] - p - carry;
      b->limb[at + i] = (uint32_t)t;
      carry = (t >> 32) ? 1 : 0;
    }
  }
}

static int big_bit(const big *b, long i) {
  return (int)((b->limb[i / 32] >> (i % 32)) & 1u);
}

typedef struct fmt {
  int frac_bits, precision, bit0_exp, max_exp, exp_max;
} fmt;

static const fmt fmt_float = {23, 24, -149, 128, 255};
static const fmt fmt_double = {52, 53, -1074, 1024, 2047};

static double round_big(big *b, const fmt *f, int nonzero) {
  int neg = (b->limb[LIMBS - 1] >> 31) != 0;
  if (neg) {
    uint64_t carry = 1;
    for (int i = 0; i < LIMBS; i++) {
      uint64_t t = (uint64_t)(uint32_t)~b->limb[i] + carry;
      b->limb[i] = (uint32_t)t;
      carry = t >> 32;
    }
  }
  long h = LIMBS * 32 - 1;
  while (h >= 0 && !big_bit(b, h))
    h--;
  if (h < 0)
    return nonzero ? 0.0 : -0.0;
  /* The 64-bit window [h-63, h] (zero-filled below bit 0) and a sticky
   * bit for everything under it. */
  uint64_t window = 0;
  for (long i = h; i > h - 64; i--)
    window = (window << 1) | (uint64_t)(i >= 0 ? big_bit(b, i) : 0);
  int sticky = 0;
  for (long i = h - 64; i >= 0 && !sticky; i--)
    sticky = big_bit(b, i);
  /* Bits the result keeps: the precision, fewer when the value is so small
   * that its last bit would pass below bit 0 (denormals). */
  long keep = f->precision;
  if (h + 1 < keep)
    keep = h + 1;
  int drop = 64 - (int)keep;
  uint64_t q = window >> drop;
  uint64_t rest = window & (((uint64_t)1 << drop) - 1);
  uint64_t half = (uint64_t)1 << (drop - 1);
  if (rest > half || (rest == half && (sticky || (q & 1))))
    q++; /* above the half way, or a tie to an odd q: up to even */
  /* value = q * 2^(h - keep + 1 + bit0_exp) */
  long e = h - keep + 1 + f->bit0_exp;
  double r;
  if (q >> f->precision) { /* rounding carried into a new bit */
    q >>= 1;
    e++;
  }
  if (e + f->precision > f->max_exp)
    r = INFINITY;
  else
    r = ldexp((double)q, (int)e);
  return neg ? -r : r;
}

static double exact_sum(const fmt *f, const void *data, size_t n, int is_float,
                        int *special) {
  int64_t bins[2048];
  big b;
  size_t binned = 0;
  int nonzero = 0, pinf = 0, ninf = 0, nan = 0;
  memset(&b, 0, sizeof b);
  memset(bins, 0, sizeof bins);
  CLR_PROGRESS_FOR(i, n) {
    uint64_t bits;
    if (is_float) {
      uint32_t u;
      memcpy(&u, (const float *)data + i, 4);
      bits = u;
    } else {
      memcpy(&bits, (const double *)data + i, 8);
    }
    int width = is_float ? 32 : 64;
    int neg = (int)((bits >> (width - 1)) & 1);
    unsigned e = (unsigned)((bits >> f->frac_bits) & (unsigned)f->exp_max);
    uint64_t m = bits & (((uint64_t)1 << f->frac_bits) - 1);
    if (e == (unsigned)f->exp_max) {
      if (m)
        nan = 1;
      else if (neg)
        ninf = 1;
      else
        pinf = 1;
      continue;
    }
    if (e == 0 && m == 0) {
      if (!neg)
        nonzero = 1;
      continue;
    }
    nonzero = 1;
    if (e)
      m |= (uint64_t)1 << f->frac_bits;
    bins[e] += neg ? -(int64_t)m : (int64_t)m;
    if (++binned == FLUSH_EVERY) {
      binned = 0;
      for (unsigned k = 0; k <= (unsigned)f->exp_max; k++)
        if (bins[k]) {
          big_add(&b, bins[k], k ? k - 1 : 0);
          bins[k] = 0;
        }
    }
  }
  for (unsigned k = 0; k <= (unsigned)f->exp_max; k++)
    if (bins[k])
      big_add(&b, bins[k], k ? k - 1 : 0);
  *special = 1;
  if (nan || (pinf && ninf))
    return NAN;
  if (pinf)
    return INFINITY;
  if (ninf)
    return -INFINITY;
  *special = 0;
  return round_big(&b, f, nonzero);
}

void clr_ref_exact_sum(clr_type type, const void *data, size_t n,
                       clr_value *out) {
  int special = 0;
  memset(out, 0, sizeof *out);
  out->type = type;
  clr_progress_plan(n);
  if (type == CLR_FLOAT)
    out->v.f = (float)exact_sum(&fmt_float, data, n, 1, &special);
  else
    out->v.d = exact_sum(&fmt_double, data, n, 0, &special);
}

int clr_ref_exact_equal(const clr_value *a, const clr_value *b) {
  if (a->type != b->type)
    return 0;
  if (a->type == CLR_FLOAT) {
    if (isnan(a->v.f) && isnan(b->v.f))
      return 1;
    return memcmp(&a->v.f, &b->v.f, sizeof a->v.f) == 0;
  }
  if (isnan(a->v.d) && isnan(b->v.d))
    return 1;
  return memcmp(&a->v.d, &b->v.d, sizeof a->v.d) == 0;
}
