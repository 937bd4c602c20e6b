// normal_avx2.c: the AVX2 kernel's Box-Muller blocks 8 lanes at a time, the
// same operations as block16 (normal.c) in the same order:
// an FMA exactly where libtorch_cpu.so has one (written as _mm256_fmadd_ps
// and kin; the file is compiled with -ffp-contract=off so that no other
// multiply-add is fused). Compile with -mavx2 -mfma.
#include <immintrin.h>

#include "normal_isa.h"

#define F8(v) _mm256_set1_ps(v)
#define I8(v) _mm256_set1_epi32(v)

// log256_ps: see torch_cephes_logf for the math and the fused steps
static __m256 log8(__m256 x) {
    const __m256 one = F8(1.0f);
    const __m256 invalid = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LE_OS);
    x = _mm256_max_ps(x, _mm256_castsi256_ps(I8(0x00800000)));
    __m256i imm0 = _mm256_srli_epi32(_mm256_castps_si256(x), 23);
    x = _mm256_and_ps(x, _mm256_castsi256_ps(I8(~0x7f800000)));
    x = _mm256_or_ps(x, F8(0.5f));
    imm0 = _mm256_sub_epi32(imm0, I8(0x7f));
    __m256 e = _mm256_cvtepi32_ps(imm0);
    e = _mm256_add_ps(e, one);
    const __m256 mask = _mm256_cmp_ps(x, F8(0x1.6a09e6p-1f), _CMP_LT_OS);
    const __m256 tmp = _mm256_and_ps(x, mask);
    x = _mm256_sub_ps(x, one);
    e = _mm256_sub_ps(e, _mm256_and_ps(one, mask));
    x = _mm256_add_ps(x, tmp);
    const __m256 z = _mm256_mul_ps(x, x);
    __m256 y = F8(0x1.204376p-4f);
    y = _mm256_fmadd_ps(y, x, F8(-0x1.d7a37p-4f));
    y = _mm256_fmadd_ps(y, x, F8(0x1.de4a34p-4f));
    y = _mm256_fmadd_ps(y, x, F8(-0x1.fcba9ep-4f));
    y = _mm256_fmadd_ps(y, x, F8(0x1.23d37ep-3f));
    y = _mm256_fmadd_ps(y, x, F8(-0x1.555cap-3f));
    y = _mm256_fmadd_ps(y, x, F8(0x1.999d58p-3f));
    y = _mm256_fmadd_ps(y, x, F8(-0x1.fffff8p-3f));
    y = _mm256_fmadd_ps(y, x, F8(0x1.555554p-2f));
    y = _mm256_mul_ps(y, x);
    y = _mm256_fmadd_ps(y, z, _mm256_mul_ps(e, F8(-0x1.bd0106p-13f)));
    y = _mm256_fnmadd_ps(z, F8(0.5f), y);
    x = _mm256_add_ps(x, y);
    x = _mm256_fmadd_ps(e, F8(0x1.63p-1f), x);
    return _mm256_or_ps(x, invalid);
}

// sincos256_ps: see torch_cephes_sincosf
static void sincos8(__m256 x, __m256 *s, __m256 *c) {
    __m256 sign_sin = _mm256_and_ps(x, _mm256_castsi256_ps(I8((int)0x80000000)));
    x = _mm256_and_ps(x, _mm256_castsi256_ps(I8(0x7fffffff)));
    __m256 y = _mm256_mul_ps(x, F8(0x1.45f306p+0f));
    __m256i j = _mm256_cvttps_epi32(y);
    j = _mm256_add_epi32(j, I8(1));
    j = _mm256_and_si256(j, I8(~1));
    y = _mm256_cvtepi32_ps(j);
    const __m256 swap_sign_sin = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_and_si256(j, I8(4)), 29));
    const __m256 poly_mask =
        _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(j, I8(2)), _mm256_setzero_si256()));
    x = _mm256_fmadd_ps(y, F8(-0x1.92p-1f), x);
    x = _mm256_fmadd_ps(y, F8(-0x1.fb4p-13f), x);
    x = _mm256_fmadd_ps(y, F8(-0x1.4442d2p-25f), x);
    const __m256i j4 = _mm256_andnot_si256(_mm256_sub_epi32(j, I8(2)), I8(4));
    const __m256 sign_cos = _mm256_castsi256_ps(_mm256_slli_epi32(j4, 29));
    sign_sin = _mm256_xor_ps(sign_sin, swap_sign_sin);
    const __m256 z = _mm256_mul_ps(x, x);
    __m256 yc = F8(0x1.99eb9cp-16f);
    yc = _mm256_fmadd_ps(yc, z, F8(-0x1.6c0c34p-10f));
    yc = _mm256_fmadd_ps(yc, z, F8(0x1.55554ap-5f));
    yc = _mm256_mul_ps(yc, z);
    yc = _mm256_fmsub_ps(yc, z, _mm256_mul_ps(z, F8(0.5f)));
    yc = _mm256_add_ps(yc, F8(1.0f));
    __m256 ys = _mm256_fmadd_ps(F8(-0x1.9943f2p-13f), z, F8(0x1.11073cp-7f));
    ys = _mm256_fmadd_ps(z, ys, F8(-0x1.555546p-3f));
    ys = _mm256_mul_ps(z, ys);
    ys = _mm256_fmadd_ps(ys, x, x);
    const __m256 ysin2 = _mm256_and_ps(poly_mask, ys);
    const __m256 ysin1 = _mm256_andnot_ps(poly_mask, yc);
    ys = _mm256_sub_ps(ys, ysin2);
    yc = _mm256_sub_ps(yc, ysin1);
    *s = _mm256_xor_ps(_mm256_add_ps(ysin1, ysin2), sign_sin);
    *c = _mm256_xor_ps(_mm256_add_ps(yc, ys), sign_cos);
}

// normal_fill_16_AVX2 on each block of 16: lanes 0..7 the radius draws,
// lanes 8..15 the angle draws.
void normal_blocks_avx2(float *data, long nblocks, float mean, float std) {
    const __m256 one = F8(1.0f);
    const __m256 two_pi = F8(0x1.921fb6p+2f);
    const __m256 minus_two = F8(-2.0f);
    const __m256 mean_v = F8(mean);
    const __m256 std_v = F8(std);
    for (long b = 0; b < nblocks; b++) {
        float *d = data + 16 * b;
        const __m256 u1 = _mm256_sub_ps(one, _mm256_loadu_ps(d));
        const __m256 u2 = _mm256_loadu_ps(d + 8);
        const __m256 radius = _mm256_sqrt_ps(_mm256_mul_ps(minus_two, log8(u1)));
        const __m256 theta = _mm256_mul_ps(two_pi, u2);
        __m256 s, c;
        sincos8(theta, &s, &c);
        const __m256 n1 = _mm256_mul_ps(radius, c);
        const __m256 n2 = _mm256_mul_ps(radius, s);
        _mm256_storeu_ps(d, _mm256_fmadd_ps(n1, std_v, mean_v));
        _mm256_storeu_ps(d + 8, _mm256_fmadd_ps(n2, std_v, mean_v));
    }
}
