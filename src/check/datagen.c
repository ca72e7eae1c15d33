/* Generated data: see datagen.h for what each operation's row gets. */
#include "datagen.h"
#include "half.h"
#include "ops_rows.h"
#include "progress_counter.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

void clr_rng_seed(clr_rng *r, uint64_t seed) {
  uint64_t x = seed;
  for (int i = 0; i < 4; i++)
    r->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* xoshiro256** 1.0 (Blackman and Vigna, public domain). */
uint64_t clr_rng_next(clr_rng *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

/* Uniform in [0, range) by multiply-shift (bias below 2^-32). */
static uint64_t below(clr_rng *r, uint64_t range) {
  return (uint64_t)(((clr_rng_next(r) >> 32) * range) >> 32);
}

/* Uniform in [0, n) for any n >= 1, by rejection. */
static uint64_t index_below(clr_rng *r, uint64_t n) {
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do
    x = clr_rng_next(r);
  while (x >= limit);
  return x % n;
}

static double unit53(clr_rng *r) {
  return (double)(clr_rng_next(r) >> 11) * 0x1p-53;
}

void clr_store_bits(clr_type t, void *data, size_t i, uint64_t bits) {
  switch (clr_type_size(t)) {
  case 2:
    ((uint16_t *)data)[i] = (uint16_t)bits;
    break;
  case 4:
    ((uint32_t *)data)[i] = (uint32_t)bits;
    break;
  default:
    ((uint64_t *)data)[i] = bits;
    break;
  }
}

void clr_store_fp(clr_type t, void *data, size_t i, double x) {
  if (t == CLR_HALF)
    ((uint16_t *)data)[i] = clr_half_from_float((float)x);
  else if (t == CLR_FLOAT)
    ((float *)data)[i] = (float)x;
  else
    ((double *)data)[i] = x;
}

static int is_fp(clr_type t) { return clr_ref_is_fp(t); }
static int is_signed(clr_type t) { return clr_ref_is_signed(t); }
static int type_bits(clr_type t) {
  return (t == CLR_INT || t == CLR_UINT) ? 32 : 64;
}

static void gen_sum(clr_type t, clr_rng *r, void *data, size_t n,
                    const char **what) {
  if (t == CLR_HALF) { /* multiples of 2^-11: every one is a half */
    for (size_t i = 0; i < n; i++)
      clr_store_fp(t, data, i, (double)(clr_rng_next(r) >> 53) * 0x1p-11);
    *what = "uniform in [0,1) (multiples of 2^-11)";
  } else if (t == CLR_FLOAT) {
    for (size_t i = 0; i < n; i++)
      ((float *)data)[i] = (float)(clr_rng_next(r) >> 40) * 0x1p-24f;
    *what = "uniform in [0,1)";
  } else if (t == CLR_DOUBLE) {
    for (size_t i = 0; i < n; i++)
      ((double *)data)[i] = unit53(r);
    *what = "uniform in [0,1)";
  } else if (is_signed(t)) {
    for (size_t i = 0; i < n; i++)
      clr_store_bits(t, data, i, (uint64_t)((int64_t)below(r, 2001) - 1000));
    *what = "uniform integers in [-1000,1000]";
  } else {
    for (size_t i = 0; i < n; i++)
      clr_store_bits(t, data, i, below(r, 2001));
    *what = "uniform integers in [0,2000]";
  }
}

static void gen_prod(clr_type t, clr_rng *r, void *data, size_t n,
                     const char **what) {
  if (is_fp(t)) {
    for (size_t i = 0; i < n; i++)
      clr_store_fp(t, data, i, 1.0 + (unit53(r) - 0.5) * 0x1p-12);
    *what = "near 1: 1 + (u-0.5)*2^-12, u uniform in [0,1)";
    return;
  }
  for (size_t i = 0; i < n; i++) {
    uint64_t x = clr_rng_next(r);
    uint64_t v = 1;
    if ((x >> 40) == 0) /* 2^-24 */
      v = 2;
    else if ((x >> 52) == 0) /* 2^-12 */
      v = 3;
    else if ((x >> 60) == 0) /* 2^-4 */
      v = UINT64_MAX;        /* -1, all ones when unsigned */
    clr_store_bits(t, data, i, v);
  }
  *what = is_signed(t) ? "1, except -1 (p=2^-4), 3 (p=2^-12), 2 (p=2^-24)"
                       : "1, except all-ones (p=2^-4), 3 (p=2^-12), "
                         "2 (p=2^-24)";
}

static void gen_minmax(clr_type t, clr_rng *r, void *data, size_t n,
                       const char **what) {
  if (is_fp(t)) {
    for (size_t i = 0; i < n; i++) {
      uint64_t x = clr_rng_next(r);
      int e = t == CLR_HALF ? (int)(x & 31) % 31 - 16 /* [-16, 14]: finite */
                            : (int)(x & 127) - 64;    /* [-64, 63] */
      double m = 1.0 + (double)(x >> 12) * 0x1p-52;   /* [1, 2)    */
      double v = ldexp(m, e);
      clr_store_fp(t, data, i, (x >> 7) & 1 ? -v : v);
    }
    *what = t == CLR_HALF
                ? "random sign, magnitude log-uniform in [2^-16,2^15)"
                : "random sign, magnitude log-uniform in [2^-64,2^64)";
    return;
  }
  for (size_t i = 0; i < n; i++)
    clr_store_bits(t, data, i, clr_rng_next(r));
  *what = "uniform over the whole type";
}

/* A random non-zero value; 1 in 16 has an all-zero low half. */
static uint64_t nonzero_value(clr_type t, clr_rng *r) {
  int bits = type_bits(t);
  uint64_t mask = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
  for (;;) {
    uint64_t x = clr_rng_next(r);
    if ((x & 15) == 0)
      x = (x >> 4) << (bits / 2);
    x &= mask;
    if (x != 0)
      return x;
  }
}

/* A logical row's data: its identity's truth (true: and's 1, false: or's
 * 0) everywhere, the other truth rare, so that the answer is decided by
 * whether a rare element occurs. */
static void gen_logical(int identity_true, clr_type t, uint64_t seed,
                        clr_rng *r, void *data, size_t n, const char **what) {
  int rare = (seed & 1) == 0; /* even seed: rare values present */
  for (size_t i = 0; i < n; i++) {
    int is_rare = rare && (clr_rng_next(r) >> 44) == 0; /* 2^-20 */
    int nonzero = identity_true ? !is_rare : is_rare;
    clr_store_bits(t, data, i, nonzero ? nonzero_value(t, r) : 0);
  }
  if (rare) {
    size_t at = (size_t)index_below(r, n);
    clr_store_bits(t, data, at, identity_true ? 0 : nonzero_value(t, r));
  }
  if (identity_true)
    *what = rare ? "random non-zero values with zeros at rate 2^-20 and at "
                   "a random index (even seed)"
                 : "random non-zero values, no zeros (odd seed)";
  else
    *what = rare ? "zeros with random non-zero values at rate 2^-20 and at "
                   "a random index (even seed)"
                 : "all zeros (odd seed)";
}

/* NaNs at the first and the last element and at about 1% of the others,
 * spread through the array (gaps uniform in [1, 199]), from their own
 * stream of seed so that the numbers between them are the plain row's. */
static void place_nans(clr_type t, uint64_t seed, void *data, size_t n) {
  clr_rng r;
  clr_rng_seed(&r, seed ^ 0x6e616e2d73706f74u); /* "nan-spot" */
  clr_store_fp(t, data, 0, NAN);
  clr_store_fp(t, data, n - 1, NAN);
  for (size_t i = (size_t)below(&r, 200); i < n;
       i += 1 + (size_t)below(&r, 199))
    clr_store_fp(t, data, i, NAN);
}

void clr_gen_data(clr_op op, clr_type type, uint64_t seed, void *data, size_t n,
                  char *desc, size_t desc_size) {
  clr_rng r;
  const char *what = "";
  const clr_ref_op_row *row = clr_ref_op_info(op);
  clr_rng_seed(&r, seed);
  if (!row) {
    gen_sum(type, &r, data, n, &what);
  } else if (row->flags & CLR_OPF_LOGICAL) {
    /* of floats only through a map expression: numbers to test */
    if (type == CLR_FLOAT || type == CLR_DOUBLE)
      gen_sum(type, &r, data, n, &what);
    else
      gen_logical(row->identity == CLR_ID_ONE, type, seed, &r, data, n, &what);
  } else if (row->flags & CLR_OPF_MOMENTS) {
    /* var, std: the sums' data (uniform in [0,1), or small integers),
     * whose squares stay far within float's range, as real data's do;
     * the orders' data (magnitudes up to 2^64) would overflow a float
     * variance */
    gen_sum(type, &r, data, n, &what);
  } else {
    /* by the row's combine: sums (and means), products, and the whole
     * range for the orders (min, max and the indexed ones) and any other
     * combine */
    switch (clr_ref_combine_info(row->combine).rounds) {
    case CLR_REF_ADDS:
      gen_sum(type, &r, data, n, &what);
      break;
    case CLR_REF_MULTIPLIES:
      gen_prod(type, &r, data, n, &what);
      break;
    default:
      gen_minmax(type, &r, data, n, &what);
      break;
    }
  }
  const char *nans = "";
  if (row && n > 0 && clr_ref_skips_nan(op, type)) {
    place_nans(type, seed, data, n);
    nans = ", NaN at the first and last element and at about 1% of the "
           "others";
  }
  snprintf(desc, desc_size, "%zu %s %s%s (seed %" PRIu64 ")", n,
           clr_type_name(type), what, nans, seed);
}

/* Block b's seed: mixed from (seed, b), of seed's parity (which the
 * logical operations' answers follow). */
static uint64_t block_seed(uint64_t seed, size_t block) {
  uint64_t x = seed ^ (block * 0xd1b54a32d192ed03u);
  return (splitmix64(&x) & ~(uint64_t)1) | (seed & 1);
}

int clr_gen_data_slice(clr_op op, clr_type type, uint64_t seed, size_t total,
                       size_t first, void *data, size_t n, char *desc,
                       size_t desc_size) {
  size_t esize = clr_type_size(type);
  unsigned char *tmp = NULL;
  char what[256] = "";
  clr_progress_plan(n); /* a report each block */
  for (size_t at = first; at < first + n;) {
    size_t block = at / CLR_GEN_BLOCK, begin = block * CLR_GEN_BLOCK;
    size_t end = total - begin > CLR_GEN_BLOCK ? begin + CLR_GEN_BLOCK : total;
    uint64_t s = block_seed(seed, block);
    if (at == begin && end <= first + n) { /* a whole block: in place */
      clr_gen_data(op, type, s, (unsigned char *)data + (at - first) * esize,
                   end - begin, what, sizeof what);
      clr_progress_add(end - begin);
      at = end;
      continue;
    }
    /* a block the slice cuts: made whole aside, its part copied */
    if (!tmp && !(tmp = malloc((size_t)CLR_GEN_BLOCK * esize)))
      return 0;
    size_t stop = end < first + n ? end : first + n;
    clr_gen_data(op, type, s, tmp, end - begin, what, sizeof what);
    memcpy((unsigned char *)data + (at - first) * esize,
           tmp + (at - begin) * esize, (stop - at) * esize);
    clr_progress_add(stop - at);
    at = stop;
  }
  free(tmp);
  if (n == 0) { /* no block made: one element aside, for its words */
    uint64_t one;
    clr_gen_data(op, type, block_seed(seed, first / CLR_GEN_BLOCK), &one, 1,
                 what, sizeof what);
  }
  /* "N float uniform in [0,1) (seed 42, ...)" from the last block: its
   * distribution, the slice's count and seed. */
  const char *dist = strchr(what, ' ');
  dist = dist ? strchr(dist + 1, ' ') : NULL;
  char dist_only[256] = "";
  if (dist) {
    snprintf(dist_only, sizeof dist_only, "%s", dist + 1);
    char *seed_note = strstr(dist_only, " (seed ");
    if (seed_note)
      *seed_note = '\0';
  }
  if (first == 0 && n == total)
    snprintf(desc, desc_size, "%zu %s %s (seed %" PRIu64 ", in blocks of %d)",
             n, clr_type_name(type), dist_only, seed, CLR_GEN_BLOCK);
  else
    snprintf(desc, desc_size,
             "%zu %s %s (seed %" PRIu64 ", elements %zu.. of %zu, in blocks "
             "of %d)",
             n, clr_type_name(type), dist_only, seed, first, total,
             CLR_GEN_BLOCK);
  return 1;
}
