// fast_kernels_avx512.c: the AVX-512 (F/BW/DQ/VL) kernels behind
// fast_kernels.h, built with -mavx512f -mavx512bw -mavx512dq -mavx512vl
// -mavx2 -mfma and the project's -ffp-contract=off.
//
// The reference's reductions run in 8 lanes (torch's AVX2 build), so the
// 16-lane registers here either hold independent outputs (the matmul's
// columns, exp's elements) or two 8-lane vectors side by side (the sums),
// never a 16-lane reduction. Entries left NULL in the table at the bottom are
// filled by the dispatcher with the AVX2 kernels.
#include <immintrin.h>
#include <stdint.h>

#include "fast_kernels_isa.h"

#define LANES 8    // lanes of the reference's reductions
#define LANES16 16 // floats per __m512

// ---------------------------------------------------------------------------
// matmul: the 8 x 32 register tile
// ---------------------------------------------------------------------------
enum { MR = 8, NR = 32 };

// c (8, 32), rows ldc apart: c[r][j] = (first ? +0 : c[r][j]) + a[r][k] * pb[k][j]
// for k = 0..kc-1, then + bias[j] if bias.
// Reference order (matmul / matmul_wt_bias, netlib sgemm): each output is one
// chain s = s + round(a*b) in k order from +0, the bias added last. The 256
// outputs of the tile are independent chains, held as 16 registers
// acc[r][h] = row r, columns 16h..16h+15; per k, one mul (a broadcast from
// memory) and one add each.
// Operands (fast_gemm.c): a (8 rows, lda apart, kc each: a's rows read in
// place, each a[r][k] broadcast from memory); pb (kc, 32): the packed panel,
// pb[k * 32 + j] = b[k][col j], two registers per k.
static void gemm_tile_8x32(float *c, long ldc, const float *a, long lda, const float *pb, int kc, int first,
                           const float *bias) {
    __m512 acc[MR][2];
#pragma GCC unroll 8
    for (int r = 0; r < MR; r++) {
        acc[r][0] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(c + r * ldc);
        acc[r][1] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(c + r * ldc + LANES16);
    }
    for (int k = 0; k < kc; k++, a++, pb += NR) {
        const __m512 b_lo = _mm512_loadu_ps(pb), b_hi = _mm512_loadu_ps(pb + LANES16);
#pragma GCC unroll 8
        for (int r = 0; r < MR; r++) {
            const __m512 a_r = _mm512_set1_ps(a[r * lda]);
            acc[r][0] = _mm512_add_ps(acc[r][0], _mm512_mul_ps(a_r, b_lo));
            acc[r][1] = _mm512_add_ps(acc[r][1], _mm512_mul_ps(a_r, b_hi));
        }
    }
    if (bias) {
        const __m512 bias_lo = _mm512_loadu_ps(bias), bias_hi = _mm512_loadu_ps(bias + LANES16);
#pragma GCC unroll 8
        for (int r = 0; r < MR; r++) {
            acc[r][0] = _mm512_add_ps(acc[r][0], bias_lo);
            acc[r][1] = _mm512_add_ps(acc[r][1], bias_hi);
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < MR; r++) {
        _mm512_storeu_ps(c + r * ldc, acc[r][0]);
        _mm512_storeu_ps(c + r * ldc + LANES16, acc[r][1]);
    }
}

// ---------------------------------------------------------------------------
// exp: SLEEF 3.5.1's expf (u10), 16 lanes, the sequence of sleef_expf.c
// ---------------------------------------------------------------------------

// d (16 lanes, each <= 100 or NaN) -> e^d, lane by lane exactly as
// sleef_expf (see exp8 in fast_kernels_avx2.c): cvtps2dq ties to even (NaN
// -> INT32_MIN), the fused steps as FMAs, the scaling, the clamp below -104.
// Its clamp above 100 cannot act on such a d: a softmax's x - max (<= 0, or
// NaN) needs no more. SLEEF scales by two multiplies, u * 2^(q>>1) *
// 2^(q - (q>>1)), built from q's bits; here one vscalefps, u * 2^q rounded
// once, does it. The same bits: for -104 <= d <= 100, |q| <= 150, so the first
// multiply is exact (a normal result) and the second is the one rounding of
// u * 2^q; a NaN u stays that NaN. (Checked against sleef_expf over all 2^32
// inputs; `unit / fast_kernels` runs every float of [-104, -87], where the
// result is subnormal and the rounding acts.)
static inline __m512 exp16_to_100(__m512 d) {
    const __m512 qf = _mm512_cvtepi32_ps(_mm512_cvtps_epi32(_mm512_mul_ps(d, _mm512_set1_ps(0x1.715476p+0f))));
    __m512 s = _mm512_fmadd_ps(qf, _mm512_set1_ps(-0x1.62e4p-1f), d);
    s = _mm512_fmadd_ps(qf, _mm512_set1_ps(-0x1.7f7d1cp-20f), s);

    __m512 u = _mm512_set1_ps(0x1.a057b4p-13f);
    u = _mm512_fmadd_ps(u, s, _mm512_set1_ps(0x1.6d2d92p-10f));
    u = _mm512_fmadd_ps(u, s, _mm512_set1_ps(0x1.11114cp-7f));
    u = _mm512_fmadd_ps(u, s, _mm512_set1_ps(0x1.5554f4p-5f));
    u = _mm512_fmadd_ps(u, s, _mm512_set1_ps(0x1.555556p-3f));
    u = _mm512_fmadd_ps(u, s, _mm512_set1_ps(0x1p-1f));
    u = _mm512_add_ps(_mm512_set1_ps(1.0f), _mm512_fmadd_ps(_mm512_mul_ps(s, s), u, s));

    u = _mm512_scalef_ps(u, qf);
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(d, _mm512_set1_ps(-104.0f), _CMP_NLT_UQ), u);
}

// d (16 lanes) -> e^d: sleef_expf with both clamps (+inf above 100)
static inline __m512 exp16(__m512 d) {
    return _mm512_mask_mov_ps(exp16_to_100(d), _mm512_cmp_ps_mask(d, _mm512_set1_ps(100.0f), _CMP_GT_OQ),
                              _mm512_set1_ps(__builtin_inff()));
}

// the mask of lanes 0..t-1 (t <= 16)
static inline __mmask16 first16(long t) { return (__mmask16)((1u << t) - 1u); }

// out (n,) = e^x (n,): exp_elementwise, 16 independent lanes at a time, the
// tail masked.
static void exp_avx512(float *out, const float *x, long n) {
    long i = 0;
    for (; i + LANES16 <= n; i += LANES16) _mm512_storeu_ps(out + i, exp16(_mm512_loadu_ps(x + i)));
    if (i < n) {
        const __mmask16 tail = first16(n - i);
        _mm512_mask_storeu_ps(out + i, tail, exp16(_mm512_maskz_loadu_ps(tail, x + i)));
    }
}

// ---------------------------------------------------------------------------
// softmax along a row: _vec_softmax_lastdim, its reductions in 8 lanes
// ---------------------------------------------------------------------------

// vec::maximum on 8 lanes: max OR unordered, a NaN operand gives all-ones NaN
static inline __m256 vec_max(__m256 a, __m256 b) {
    return _mm256_or_ps(_mm256_max_ps(a, b), _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
}

// the same on 16 lanes
static inline __m512 vec_max16(__m512 a, __m512 b) {
    return _mm512_mask_mov_ps(_mm512_max_ps(a, b), _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q),
                              _mm512_castsi512_ps(_mm512_set1_epi32(-1)));
}

// ((a0 op a4) op (a2 op a6)) op ((a1 op a5) op (a3 op a7))
static inline float tree_max(__m256 v) {
    v = vec_max(v, _mm256_permute2f128_ps(v, v, 0x01));
    v = vec_max(v, _mm256_shuffle_ps(v, v, 0x4e));
    v = vec_max(v, _mm256_shuffle_ps(v, v, 0xb1));
    return _mm256_cvtss_f32(v);
}

static inline float tree_add(__m256 v) {
    v = _mm256_add_ps(v, _mm256_permute2f128_ps(v, v, 0x01));
    v = _mm256_add_ps(v, _mm256_shuffle_ps(v, v, 0x4e));
    v = _mm256_add_ps(v, _mm256_shuffle_ps(v, v, 0xb1));
    return _mm256_cvtss_f32(v);
}

// x (n,), n >= 8 -> reduce_all(max) in torch's 8-lane order (lane l folds
// x[l], x[l+8], ...; the partial tail updates its first lanes; the tree)
static inline float row_max(const float *x, int n) {
    __m256 acc = _mm256_loadu_ps(x);
    int d = LANES;
    for (; d + LANES <= n; d += LANES) acc = vec_max(acc, _mm256_loadu_ps(x + d));
    if (d < n) {
        const __mmask8 tail = (__mmask8)((1u << (n - d)) - 1u);
        acc = _mm256_mask_mov_ps(acc, tail, vec_max(acc, _mm256_maskz_loadu_ps(tail, x + d)));
    }
    return tree_max(acc);
}

// x (n,), n >= 8, max_s its reduce_all(max) -> out (n,): passes 2 and 3 of
// softmax_row. exp runs 16 lanes at a time; its 16 results are blocks 2j and
// 2j+1 of the 8-lane reduce_all(+), added to the one 8-lane accumulator low
// half first, so the chain of each lane is e[l] + e[l+8] + e[l+16] + ... as
// in torch. Then 1/sum and a multiply. out may be x.
static inline void softmax_from_max(float *out, const float *x, int n, float max_s) {
    const __m512 max = _mm512_set1_ps(max_s);
    // block 0 starts the accumulator
    __m256 acc = _mm256_loadu_ps(x);
    acc = _mm512_castps512_ps256(exp16_to_100(_mm512_sub_ps(_mm512_castps256_ps512(acc), max)));
    _mm256_storeu_ps(out, acc);
    int d = LANES;
    for (; d + LANES16 <= n; d += LANES16) {
        const __m512 e = exp16_to_100(_mm512_sub_ps(_mm512_loadu_ps(x + d), max));
        _mm512_storeu_ps(out + d, e);
        acc = _mm256_add_ps(acc, _mm512_castps512_ps256(e));
        acc = _mm256_add_ps(acc, _mm512_extractf32x8_ps(e, 1));
    }
    if (d < n) {  // 1..15 left: one full 8-block and/or a partial one
        const int t = n - d;
        const __m512 e = exp16_to_100(_mm512_sub_ps(_mm512_maskz_loadu_ps(first16(t), x + d), max));
        _mm512_mask_storeu_ps(out + d, first16(t), e);
        const __m256 e_lo = _mm512_castps512_ps256(e), e_hi = _mm512_extractf32x8_ps(e, 1);
        if (t >= LANES) {
            acc = _mm256_add_ps(acc, e_lo);
            if (t > LANES) acc = _mm256_mask_add_ps(acc, (__mmask8)((1u << (t - LANES)) - 1u), acc, e_hi);
        } else {
            acc = _mm256_mask_add_ps(acc, (__mmask8)((1u << t) - 1u), acc, e_lo);
        }
    }
    const __m512 inv = _mm512_set1_ps(1.0f / tree_add(acc));
    for (d = 0; d + LANES16 <= n; d += LANES16) _mm512_storeu_ps(out + d, _mm512_mul_ps(_mm512_loadu_ps(out + d), inv));
    if (d < n) {
        const __mmask16 tail = first16(n - d);
        _mm512_mask_storeu_ps(out + d, tail, _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, out + d), inv));
    }
}

// x (n,), n >= 8 -> out (n,): softmax_row (pass 1: row_max)
static void softmax_row_avx512(float *out, const float *x, int n) { softmax_from_max(out, x, n, row_max(x, n)); }

// x (n,), n >= 8 -> out (n,) = softmax_row(x / s): each x / s rounded once
// (div_scalar's true division, or x * r where the caller knows that r = 1 / s
// rounds the same), stored, and its max taken in the same pass, 16 lanes at
// a time in two accumulators. The max of a row is one value whatever the
// order it is taken in, but for two things that cannot change the softmax:
// vec_max picks between +0 and -0 by order (and x - (+0), x - (-0) differ at
// most in the sign of a zero, whose exp is 1 either way), and a NaN anywhere
// makes it the all-ones NaN in any order. Then passes 2 and 3. out may be x.
static void softmax_row_scaled_avx512(float *out, const float *x, int n, float s, int by_reciprocal) {
    const __m512 d_s = _mm512_set1_ps(by_reciprocal ? 1.0f / s : s);
#define SCALED(v) (by_reciprocal ? _mm512_mul_ps((v), d_s) : _mm512_div_ps((v), d_s))
    __m512 acc0 = _mm512_set1_ps(-__builtin_inff()), acc1 = acc0;
    int d = 0;
    for (; d + 2 * LANES16 <= n; d += 2 * LANES16) {
        const __m512 y0 = SCALED(_mm512_loadu_ps(x + d)), y1 = SCALED(_mm512_loadu_ps(x + d + LANES16));
        _mm512_storeu_ps(out + d, y0);
        _mm512_storeu_ps(out + d + LANES16, y1);
        acc0 = vec_max16(acc0, y0);
        acc1 = vec_max16(acc1, y1);
    }
    for (; d < n; d += LANES16) {
        const __mmask16 part = first16(n - d < LANES16 ? n - d : LANES16);
        const __m512 y = SCALED(_mm512_maskz_loadu_ps(part, x + d));
        _mm512_mask_storeu_ps(out + d, part, y);
        acc0 = _mm512_mask_mov_ps(acc0, part, vec_max16(acc0, y));
    }
#undef SCALED
    const __m512 m16 = vec_max16(acc0, acc1);
    const __m256 m8 = vec_max(_mm512_castps512_ps256(m16), _mm512_extractf32x8_ps(m16, 1));
    softmax_from_max(out, out, n, tree_max(m8));
}

// ---------------------------------------------------------------------------
// row sum: cascade_sum's vectorized_inner_sum, two 8-lane vectors per register
// ---------------------------------------------------------------------------

// v (count vectors of 8, contiguous) -> lane l = row_sum(x + l, count, 8) of
// kernels.c. The four 8-lane accumulators k = 0..3 of a cascade level sit in
// two registers, pair01 = (acc0 | acc1) and pair23 = (acc2 | acc3), so one
// step (vectors 4i..4i+3 = 32 contiguous floats) is two 16-lane adds doing
// exactly the four 8-lane adds of torch. Cascade as in fast_kernels_avx2.c.
static __m256 lane_sums(const float *v, long count) {
    enum { LEVELS = 4 };
    const long steps = count / 4;
    long ceil_log2 = 1;
    if (steps > 2) {
        ceil_log2 = 0;
        while ((1L << ceil_log2) < steps) ceil_log2++;
    }
    const long power = ceil_log2 / LEVELS > 4 ? ceil_log2 / LEVELS : 4;
    const long step = 1L << power, mask = step - 1;
    __m512 pair01[LEVELS], pair23[LEVELS];
    for (int j = 0; j < LEVELS; j++) pair01[j] = pair23[j] = _mm512_setzero_ps();

    long i = 0;
    while (i + step <= steps) {
        for (long j = 0; j < step; j++, i++) {
            const float *v_i = v + i * 4 * LANES;
            pair01[0] = _mm512_add_ps(pair01[0], _mm512_loadu_ps(v_i));
            pair23[0] = _mm512_add_ps(pair23[0], _mm512_loadu_ps(v_i + LANES16));
        }
        for (int j = 1; j < LEVELS; j++) {
            pair01[j] = _mm512_add_ps(pair01[j], pair01[j - 1]);
            pair23[j] = _mm512_add_ps(pair23[j], pair23[j - 1]);
            pair01[j - 1] = pair23[j - 1] = _mm512_setzero_ps();
            if ((i & (mask << (j * power))) != 0) break;
        }
    }
    for (; i < steps; i++) {
        const float *v_i = v + i * 4 * LANES;
        pair01[0] = _mm512_add_ps(pair01[0], _mm512_loadu_ps(v_i));
        pair23[0] = _mm512_add_ps(pair23[0], _mm512_loadu_ps(v_i + LANES16));
    }
    for (int j = 1; j < LEVELS; j++) {
        pair01[0] = _mm512_add_ps(pair01[0], pair01[j]);
        pair23[0] = _mm512_add_ps(pair23[0], pair23[j]);
    }
    __m256 acc0 = _mm512_castps512_ps256(pair01[0]);
    for (long r = steps * 4; r < count; r++) acc0 = _mm256_add_ps(acc0, _mm256_loadu_ps(v + r * LANES));
    const __m256 acc1 = _mm512_extractf32x8_ps(pair01[0], 1);
    const __m256 acc2 = _mm512_castps512_ps256(pair23[0]), acc3 = _mm512_extractf32x8_ps(pair23[0], 1);
    return _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(acc0, acc1), acc2), acc3);
}

// x (n,), n >= 8 -> sum(x): +0, the tail in order, lanes 0..7 in order, 0 + s
static float sum_row_avx512(const float *x, int n) {
    const int nvec = n / LANES;
    float lane[LANES];
    _mm256_storeu_ps(lane, lane_sums(x, nvec));
    float s = 0.0f;
    for (int i = nvec * LANES; i < n; i++) s += x[i];
    for (int l = 0; l < LANES; l++) s += lane[l];
    return 0.0f + s;
}

// ---------------------------------------------------------------------------
// dropout: 8 elements (16 words) per step, unsigned 64-bit compares
// ---------------------------------------------------------------------------

// noise (n,) from words (2n,): kept iff (words[2i] << 32 | words[2i+1]) &
// (2^53 - 1) < threshold. A 64-bit lane of a load holds words[2i] low, so
// the halves are swapped first.
static void dropout_block_avx512(float *noise, const uint32_t *words, int n, uint64_t threshold, float kept,
                                 float dropped) {
    const __m512i mask53 = _mm512_set1_epi64((long long)((UINT64_C(1) << 53) - 1));
    const __m512i thr = _mm512_set1_epi64((long long)threshold);
    const __m256 v_kept = _mm256_set1_ps(kept), v_dropped = _mm256_set1_ps(dropped);
    int i = 0;
    for (; i + LANES <= n; i += LANES) {
        const __m512i w = _mm512_loadu_si512(words + 2 * i);
        const __m512i r = _mm512_and_si512(_mm512_shuffle_epi32(w, _MM_PERM_CDAB), mask53);
        const __mmask8 keep = _mm512_cmplt_epu64_mask(r, thr);
        _mm256_storeu_ps(noise + i, _mm256_mask_mov_ps(v_dropped, keep, v_kept));
    }
    for (; i < n; i++) {
        const uint64_t r = ((uint64_t)words[2 * i] << 32 | words[2 * i + 1]) & ((UINT64_C(1) << 53) - 1);
        noise[i] = r < threshold ? kept : dropped;
    }
}

const FastIsa fast_isa_avx512 = {
    .name = "avx512",
    .mr = MR,
    .nr = NR,
    .kc = 256,
    .mc = 96,
    .nc = 1024,
    .gemm_tile = gemm_tile_8x32,
    .softmax_row = softmax_row_avx512,
    .softmax_row_scaled = softmax_row_scaled_avx512,
    .softmax_backward_row = NULL,  // the AVX2 kernel: its 8 lanes are the order
    .sum_row = sum_row_avx512,
    .exp = exp_avx512,
    .dropout_block = dropout_block_avx512,
    .transpose_8x8 = NULL,
};

// The path for a core that runs a 512-bit instruction as two 256-bit halves
// (AMD's Zen 4). There a 512-bit mul or add takes two slots of the FP pipes,
// so the 8 x 32 tile computes no more flops per cycle than AVX2's 6 x 16 and
// runs slower; but a 512-bit instruction takes one slot of the scheduler, so
// a chain as long as exp's keeps twice the elements in flight, and the
// softmax runs faster. The products take AVX2's tile; everything else is
// this file's. (The timings of both: tests/BENCHMARKS.md.)
const FastIsa fast_isa_avx512_ymm = {
    .name = "avx512-ymm",
    .mr = AVX2_TILE_MR,
    .nr = AVX2_TILE_NR,
    .kc = AVX2_KC,
    .mc = AVX2_MC,
    .nc = AVX2_NC,
    .gemm_tile = fast_gemm_tile_6x16,
    .softmax_row = softmax_row_avx512,
    .softmax_row_scaled = softmax_row_scaled_avx512,
    .softmax_backward_row = NULL,
    .sum_row = sum_row_avx512,
    .exp = exp_avx512,
    .dropout_block = dropout_block_avx512,
    .transpose_8x8 = NULL,
};
