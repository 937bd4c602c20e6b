// pcg32.h: PCG32, the library's own random numbers (M. E. O'Neill, "PCG: A
// Family of Simple Fast Space-Efficient Statistically Good Algorithms for
// Random Number Generation", 2014; https://www.pcg-random.org).
//
// The generator is a 64-bit linear congruential generator (LCG) whose state
// is never shown directly: each 32-bit output is a permutation of the old
// state, "XSH-RR" (xorshift the high bits down, then a random rotation).
// The API follows the minimal C library pcg-c-basic (explicit state, `_r`
// functions) so its published known answers apply unchanged; see
// tests/test_pcg32.c. Everything is unsigned 64- and 32-bit arithmetic, so
// overflow wraps by definition (no UB for UBSan to find).
//
// PCG32 is NOT PyTorch's generator: for PyTorch's bits use torch_generator.h.
// Both plug into RandomSource (random_source.h).
#ifndef LITATTN_PCG32_H
#define LITATTN_PCG32_H

#include <math.h>
#include <stdint.h>

#include "random_source.h"

typedef struct {
    uint64_t state;  // the LCG's current value; all 2^64 values are valid
    uint64_t inc;    // the LCG's increment; always odd, it selects one of 2^63 streams
} pcg32_random_t;

// Knuth's MMIX LCG multiplier, the one PCG32 uses: with an odd increment the
// LCG visits every 64-bit value once per period of 2^64.
#define PCG32_MULTIPLIER UINT64_C(6364136223846793005)

// One 32-bit output; advances the state by one LCG step.
static inline uint32_t pcg32_random_r(pcg32_random_t *rng) {
    uint64_t oldstate = rng->state;
    // Advance now, permute the OLD state below: the two are independent, so
    // the CPU can overlap the multiply with the output function.
    rng->state = oldstate * PCG32_MULTIPLIER + rng->inc;
    // XSH: an LCG's low bits are weak (bit k has period 2^(k+1)), so fold the
    // strong high bits down with a xorshift by 18 = (64 - 27) / 2, then keep
    // 32 bits from bit 27 on (the top 5 bits stay out; they drive RR below).
    uint32_t xorshifted = (uint32_t)(((oldstate >> 18) ^ oldstate) >> 27);
    // RR: the top 5 bits, the best mixed of all, choose a rotation 0..31.
    uint32_t rot = (uint32_t)(oldstate >> 59);
    // Rotate right by rot. The left shift is (32 - rot) & 31 so that it stays
    // in 0..31: for rot == 0 it is a shift by 0, not an undefined shift by 32
    // (and x >> 0 | x << 0 is x, the right answer).
    return (xorshifted >> rot) | (xorshifted << ((32u - rot) & 31u));
}

// Seeds: initstate picks the starting point, initseq the stream. Two
// generators with different initseq never share a sequence.
static inline void pcg32_srandom_r(pcg32_random_t *rng, uint64_t initstate, uint64_t initseq) {
    rng->state = 0;
    // Any 63-bit number names a stream; the LCG needs it odd, hence << 1 | 1.
    rng->inc = (initseq << 1) | 1u;
    // Step, add the seed, step again: the seed enters through the LCG
    // recurrence, so nearby seeds do not give nearby first outputs.
    (void)pcg32_random_r(rng);
    rng->state += initstate;
    (void)pcg32_random_r(rng);
}

// Uniform integer in [0, bound), bound >= 1, without modulo bias.
static inline uint32_t pcg32_boundedrand_r(pcg32_random_t *rng, uint32_t bound) {
    // r % bound is uniform only if r ranges over a multiple of bound values.
    // Drop the lowest 2^32 % bound outputs so 2^32 - threshold is such a
    // multiple. In unsigned 32-bit arithmetic 0 - bound is 2^32 - bound,
    // and (2^32 - bound) % bound == 2^32 % bound without 64-bit division.
    uint32_t threshold = (uint32_t)(0u - bound) % bound;
    // Terminates quickly: at worst (bound = 2^31 + 1) half the outputs are
    // rejected; for small bounds almost none are.
    for (;;) {
        uint32_t r = pcg32_random_r(rng);
        if (r >= threshold) return r % bound;
    }
}

// Uniform double in [0, 1) on the 2^53 grid k * 2^-53: two draws, the first
// giving the high half of a 64-bit word, of which the top 53 bits are kept
// (the largest integer a double holds exactly, so the scaling is exact).
static inline double pcg32_double_r(pcg32_random_t *rng) {
    uint64_t hi = pcg32_random_r(rng);
    uint64_t lo = pcg32_random_r(rng);
    return (double)(((hi << 32) | lo) >> 11) * 0x1p-53;
}

// Standard normal N(0, 1) in double, by the Box-Muller transform: for
// independent U1 in (0, 1] and U2 in [0, 1), sqrt(-2 ln U1) * cos(2 pi U2) is
// exactly N(0, 1) (R = sqrt(-2 ln U1) is the Rayleigh-distributed radius,
// 2 pi U2 a uniform angle of a 2-d standard Gaussian). The sine half of the
// pair is another independent normal; we drop it so the state stays the two
// words whose known answers we test, at the cost of four draws per sample.
static inline double pcg32_normal_r(pcg32_random_t *rng) {
    // 1 - [0, 1) is (0, 1] exactly on the 2^-53 grid: never 0, so log is finite.
    double u1 = 1.0 - pcg32_double_r(rng);
    double u2 = pcg32_double_r(rng);
    // 2 pi to double precision (M_PI is not in strict C11).
    const double two_pi = 6.283185307179586476925286766559;
    return sqrt(-2.0 * log(u1)) * cos(two_pi * u2);
}

// RandomSource adapter: lets init.h and linear.h draw from a PCG32. The
// RandomSource keeps a pointer, so rng must outlive it.
static inline uint32_t pcg32_next_u32(void *state) {
    return pcg32_random_r((pcg32_random_t *)state);
}

static inline RandomSource pcg32_source(pcg32_random_t *rng) {
    RandomSource rs = {pcg32_next_u32, rng};
    return rs;
}

#endif
