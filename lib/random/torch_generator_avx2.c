// torch_generator_avx2.c: MT19937's twist and tempering with AVX2, the same
// words as torch_generator.c's mt_twist and mt_temper (integer operations:
// no rounding anywhere, the order within a twist is all that matters).
// Compile with -mavx2.
#include <immintrin.h>

#include "torch_generator_isa.h"

// MT19937's sizes (torch_generator.h's TORCH_MT_N; not included here: the
// generator calls this file, and no two units depend on each other)
enum { MT_N = 624, MT_M = 397, LANES = 8 };

static uint32_t twist_one(uint32_t y_i, uint32_t y_next, uint32_t y_far) {
    const uint32_t y = (y_i & 0x80000000u) | (y_next & 0x7fffffffu);
    return y_far ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
}

// 8 words of the twist: (top bit of word i | low 31 of word i + 1) >> 1,
// XOR A where the dropped bit is 1, XOR word i + M.
static inline __m256i twist8(__m256i y_i, __m256i y_next, __m256i y_far) {
    const __m256i y = _mm256_or_si256(_mm256_and_si256(y_i, _mm256_set1_epi32((int)0x80000000u)),
                                      _mm256_and_si256(y_next, _mm256_set1_epi32(0x7fffffff)));
    const __m256i odd = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_and_si256(y, _mm256_set1_epi32(1)));
    const __m256i mag = _mm256_and_si256(odd, _mm256_set1_epi32((int)0x9908b0dfu));
    return _mm256_xor_si256(_mm256_xor_si256(y_far, _mm256_srli_epi32(y, 1)), mag);
}

// mt (624,) twisted in place: word i reads mt[i+1] (still old, except mt[0]
// for i = 623) and mt[i+397 mod 624] (old for i < 227, already new for
// i >= 227). Blocks of 8 keep that: a block reads its i+1..i+8 before
// writing, and its far words are 227 behind.
void torch_mt_twist_avx2(uint32_t *mt) {
    int i = 0;
    for (; i + LANES <= MT_N - MT_M; i += LANES) {  // far words old: i + 397 < 624
        const __m256i y_i = _mm256_loadu_si256((const __m256i *)(mt + i));
        const __m256i y_next = _mm256_loadu_si256((const __m256i *)(mt + i + 1));
        const __m256i y_far = _mm256_loadu_si256((const __m256i *)(mt + i + MT_M));
        _mm256_storeu_si256((__m256i *)(mt + i), twist8(y_i, y_next, y_far));
    }
    for (; i < MT_N - MT_M; i++) mt[i] = twist_one(mt[i], mt[i + 1], mt[i + MT_M]);
    for (; i + LANES <= MT_N - 1; i += LANES) {  // far words new: i + 397 - 624 < i
        const __m256i y_i = _mm256_loadu_si256((const __m256i *)(mt + i));
        const __m256i y_next = _mm256_loadu_si256((const __m256i *)(mt + i + 1));
        const __m256i y_far = _mm256_loadu_si256((const __m256i *)(mt + i + MT_M - MT_N));
        _mm256_storeu_si256((__m256i *)(mt + i), twist8(y_i, y_next, y_far));
    }
    for (; i < MT_N - 1; i++) mt[i] = twist_one(mt[i], mt[i + 1], mt[i + MT_M - MT_N]);
    mt[MT_N - 1] = twist_one(mt[MT_N - 1], mt[0], mt[MT_M - 1]);
}

static uint32_t temper_one(uint32_t y) {
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
}

void torch_mt_temper_avx2(uint32_t *out, const uint32_t *state, long n) {
    long i = 0;
    for (; i + LANES <= n; i += LANES) {
        __m256i y = _mm256_loadu_si256((const __m256i *)(state + i));
        y = _mm256_xor_si256(y, _mm256_srli_epi32(y, 11));
        y = _mm256_xor_si256(y, _mm256_and_si256(_mm256_slli_epi32(y, 7), _mm256_set1_epi32((int)0x9d2c5680u)));
        y = _mm256_xor_si256(y, _mm256_and_si256(_mm256_slli_epi32(y, 15), _mm256_set1_epi32((int)0xefc60000u)));
        y = _mm256_xor_si256(y, _mm256_srli_epi32(y, 18));
        _mm256_storeu_si256((__m256i *)(out + i), y);
    }
    for (; i < n; i++) out[i] = temper_one(state[i]);
}
