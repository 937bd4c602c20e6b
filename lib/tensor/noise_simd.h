// noise_simd.h: dropout's noise from the generator's words (noise_simd.c),
// per instruction set, for the tables of simd_isa.c.
#ifndef LITATTN_NOISE_SIMD_H
#define LITATTN_NOISE_SIMD_H

#include <stdint.h>

// noise (n,) from words (2n,): r = words[2i] << 32 | words[2i + 1];
// noise[i] = (r & (2^53 - 1)) < threshold ? kept : dropped
void noise_simd_block_avx2(float *noise, const uint32_t *words, int n, uint64_t threshold, float kept,
                           float dropped);
void noise_simd_block_avx512(float *noise, const uint32_t *words, int n, uint64_t threshold, float kept,
                             float dropped);
void noise_simd_block_neon(float *noise, const uint32_t *words, int n, uint64_t threshold, float kept,
                           float dropped);

#endif
