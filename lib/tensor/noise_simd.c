// noise_simd.c: dropout's noise from the generator's words over the
// lane-width layer (simd.h), compiled once per instruction set: 8 elements
// (16 words) per step, compared as 53-bit integers (draws_below8).
#include "noise_simd.h"

#include "simd.h"

// noise (n,) from words (2n,): element i is kept iff
// (words[2i] << 32 | words[2i+1]) & (2^53 - 1) < threshold (<= 2^53).
void SIMD_FN(noise_simd_block)(float *noise, const uint32_t *words, int n, uint64_t threshold, float kept,
                               float dropped) {
    const draws mask53 = draws_set1((UINT64_C(1) << 53) - 1);
    const draws thr = draws_set1(threshold);
    const v8 v_kept = v8_set1(kept), v_dropped = v8_set1(dropped);
    int i = 0;
    for (; i + 8 <= n; i += 8) v8_store(noise + i, v8_blend(v_dropped, draws_below8(words + 2 * i, mask53, thr), v_kept));
    for (; i < n; i++) {
        const uint64_t r = ((uint64_t)words[2 * i] << 32 | words[2 * i + 1]) & ((UINT64_C(1) << 53) - 1);
        noise[i] = r < threshold ? kept : dropped;
    }
}
