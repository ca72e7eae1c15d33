/* Generated input data suited to each operation, from a seeded PRNG
 * (xoshiro256**, seeded through splitmix64), so that runs are repeatable
 * and the answer is neither trivial nor out of range.  The operation's row
 * (clreduce_ops.def) chooses: a logical row (CLR_OPF_LOGICAL) gets
 * logical data, every other row its combine's (clr_ref_combine_info):
 *
 *   sums (sum, mean)  float/double: uniform in [0,1) (multiples of 2^-24 /
 *         2^-53); int/long: uniform in [-1000,1000]; uint/ulong: in
 *         [0,2000]
 *   products  float/double: 1 + (u-0.5)*2^-12, u uniform in [0,1), so that
 *         a product of 1e8 values stays finite and non-zero
 *         integers: 1, except -1 (all ones for unsigned) with probability
 *         2^-4, 3 with 2^-12 and 2 with 2^-24 (products wrap)
 *   others (min, max, argmin, argmax, minmax, ...)  float/double: random
 *         sign, magnitude log-uniform in [2^-64, 2^64); integers: uniform
 *         over the whole type
 *   logical, identity 1 (and)  random non-zero values (1 in 16 with a zero
 *         low half); with an even seed also zeros, at rate 2^-20 plus one
 *         at a random index, so the answer is 0 for even seeds and 1 for
 *         odd ones
 *   logical, identity 0 (or)  zeros; with an even seed also random
 *         non-zero values (as for and) at rate 2^-20 plus one at a random
 *         index, so the answer is 1 for even seeds and 0 for odd ones;
 *         float/double data (a map expression's): as for sums
 *   NaN-skipping rows (CLR_OPF_SKIPS_NAN) of floating types: their
 *         combine's data with NaN at the first and the last element and at
 *         about 1% of the others (from the seed), said in the description
 */
#ifndef CLR_CHECK_DATAGEN_H
#define CLR_CHECK_DATAGEN_H

#include "clreduce.h"

#include <stddef.h>
#include <stdint.h>

typedef struct clr_rng {
  uint64_t s[4];
} clr_rng;

void clr_rng_seed(clr_rng *r, uint64_t seed);
uint64_t clr_rng_next(clr_rng *r);

/* Element i of an array of type t: the low 16, 32 or 64 bits of bits (a
 * two's complement integer, or a float's encoding), or x rounded to the
 * floating type (half: to the nearest binary16). */
void clr_store_bits(clr_type t, void *data, size_t i, uint64_t bits);
void clr_store_fp(clr_type t, void *data, size_t i, double x);

/* Fill data (n elements of type, n >= 1) for op.  desc receives what was
 * generated, e.g. "100000000 float uniform in [0,1) (seed 42)". */
void clr_gen_data(clr_op op, clr_type type, uint64_t seed, void *data, size_t n,
                  char *desc, size_t desc_size);

/* Elements [first, first + n) of an array of total elements generated in
 * blocks of CLR_GEN_BLOCK elements, block b by clr_gen_data with a seed of
 * its own (of seed's parity; the last block shorter where total is not a
 * multiple): the same values whichever slices it is made in, so each MPI
 * rank generates its part of one global array (clreduce-mpi) and clreduce
 * the whole of it (first 0, n total).  Whole blocks are generated in
 * place, a block the slice cuts aside.  desc as clr_gen_data's.  1, or 0
 * when out of host memory. */
#define CLR_GEN_BLOCK 65536
int clr_gen_data_slice(clr_op op, clr_type type, uint64_t seed, size_t total,
                       size_t first, void *data, size_t n, char *desc,
                       size_t desc_size);

#endif
