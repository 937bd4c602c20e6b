// fast_kernels_avx2.c: the AVX2 + FMA kernels behind fast_kernels.h, built
// with -mavx2 -mfma (and the project's -ffp-contract=off: a multiply and an
// add written as two intrinsics stay two roundings; the only fused steps are
// the explicit _mm256_fmadd_ps of SLEEF's exp, which equal C's fmaf).
//
// Every kernel keeps the order of float operations of its scalar reference in
// kernels.c; the comment above each says which order and how the vector
// lanes map onto it.
#include <immintrin.h>
#include <stdint.h>

#include "fast_kernels_isa.h"

#define LANES 8  // floats per __m256, and the lane count of torch's AVX2 reductions

// ---------------------------------------------------------------------------
// matmul: the 6 x 16 register tile
// ---------------------------------------------------------------------------
enum { MR = AVX2_TILE_MR, NR = AVX2_TILE_NR };

// c (6, 16), rows ldc apart: c[r][j] = (first ? +0 : c[r][j]) + a[r][k] * pb[k][j]
// for k = 0..kc-1, then + bias[j] if bias.
// Reference order (matmul / matmul_wt_bias, netlib sgemm): each output is one
// chain s = s + round(a*b) in k order from +0, the bias added last. The 96
// outputs of the tile are 96 independent chains, held as 12 registers
// acc[r][h] = row r, columns 8h..8h+7; per k, one mul and one add each.
// Operands (fast_gemm.c): a (6 rows, lda apart, kc each: a's rows read in
// place, each a[r][k] broadcast to 8 lanes); pb (kc, 16): the packed panel,
// pb[k * 16 + j] = b[k][col j], two registers per k.
void fast_gemm_tile_6x16(float *c, long ldc, const float *a, long lda, const float *pb, int kc, int first,
                         const float *bias) {
    __m256 acc[MR][2];
#pragma GCC unroll 6
    for (int r = 0; r < MR; r++) {
        acc[r][0] = first ? _mm256_setzero_ps() : _mm256_loadu_ps(c + r * ldc);
        acc[r][1] = first ? _mm256_setzero_ps() : _mm256_loadu_ps(c + r * ldc + LANES);
    }
    for (int k = 0; k < kc; k++, a++, pb += NR) {
        const __m256 b_lo = _mm256_loadu_ps(pb), b_hi = _mm256_loadu_ps(pb + LANES);
#pragma GCC unroll 6
        for (int r = 0; r < MR; r++) {
            const __m256 a_r = _mm256_broadcast_ss(a + r * lda);
            acc[r][0] = _mm256_add_ps(acc[r][0], _mm256_mul_ps(a_r, b_lo));
            acc[r][1] = _mm256_add_ps(acc[r][1], _mm256_mul_ps(a_r, b_hi));
        }
    }
    if (bias) {
        const __m256 bias_lo = _mm256_loadu_ps(bias), bias_hi = _mm256_loadu_ps(bias + LANES);
#pragma GCC unroll 6
        for (int r = 0; r < MR; r++) {
            acc[r][0] = _mm256_add_ps(acc[r][0], bias_lo);
            acc[r][1] = _mm256_add_ps(acc[r][1], bias_hi);
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < MR; r++) {
        _mm256_storeu_ps(c + r * ldc, acc[r][0]);
        _mm256_storeu_ps(c + r * ldc + LANES, acc[r][1]);
    }
}

// ---------------------------------------------------------------------------
// exp: SLEEF 3.5.1's expf (u10), 8 lanes, the sequence of sleef_expf.c
// ---------------------------------------------------------------------------

// d (8 lanes, each <= 100 or NaN) -> e^d, lane by lane exactly as
// sleef_expf: q = rint(d log2 e) (cvtps2dq, ties to even, NaN -> INT32_MIN),
// s = d - q ln2 in two fused steps, the degree-7 polynomial by fused steps,
// 1 + fma(s*s, u, s), then u * 2^(q>>1) * 2^(q - (q>>1)) and the clamp below
// -104. Its clamp above 100 cannot act on such a d: a softmax's x - max
// (<= 0, or NaN) needs no more.
static inline __m256 exp8_to_100(__m256 d) {
    const __m256i q = _mm256_cvtps_epi32(_mm256_mul_ps(d, _mm256_set1_ps(0x1.715476p+0f)));
    const __m256 qf = _mm256_cvtepi32_ps(q);
    __m256 s = _mm256_fmadd_ps(qf, _mm256_set1_ps(-0x1.62e4p-1f), d);
    s = _mm256_fmadd_ps(qf, _mm256_set1_ps(-0x1.7f7d1cp-20f), s);

    __m256 u = _mm256_set1_ps(0x1.a057b4p-13f);
    u = _mm256_fmadd_ps(u, s, _mm256_set1_ps(0x1.6d2d92p-10f));
    u = _mm256_fmadd_ps(u, s, _mm256_set1_ps(0x1.11114cp-7f));
    u = _mm256_fmadd_ps(u, s, _mm256_set1_ps(0x1.5554f4p-5f));
    u = _mm256_fmadd_ps(u, s, _mm256_set1_ps(0x1.555556p-3f));
    u = _mm256_fmadd_ps(u, s, _mm256_set1_ps(0x1p-1f));
    u = _mm256_add_ps(_mm256_set1_ps(1.0f), _mm256_fmadd_ps(_mm256_mul_ps(s, s), u, s));

    // 2^e is the float with exponent bits e + 127 (integer ops wrap, as in SLEEF).
    const __m256i half = _mm256_srai_epi32(q, 1), bias = _mm256_set1_epi32(0x7f);
    const __m256 scale1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(half, bias), 23));
    const __m256 scale2 =
        _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(q, half), bias), 23));
    u = _mm256_mul_ps(_mm256_mul_ps(u, scale1), scale2);

    return _mm256_andnot_ps(_mm256_cmp_ps(d, _mm256_set1_ps(-104.0f), _CMP_LT_OQ), u);
}

// d (8 lanes) -> e^d: sleef_expf with both clamps (+inf above 100)
static inline __m256 exp8(__m256 d) {
    return _mm256_blendv_ps(exp8_to_100(d), _mm256_set1_ps(__builtin_inff()),
                            _mm256_cmp_ps(d, _mm256_set1_ps(100.0f), _CMP_GT_OQ));
}

// all ones in lanes 0..t-1, zeros above: the lanes a partial vector of t floats fills
static inline __m256i first_lanes(int t) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(t), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// out (n,) = e^x (n,): exp_elementwise, 8 lanes at a time, the tail masked
// (SLEEF runs on the padded tail vector too; each lane is independent).
static void exp_avx2(float *out, const float *x, long n) {
    long i = 0;
    for (; i + LANES <= n; i += LANES) _mm256_storeu_ps(out + i, exp8(_mm256_loadu_ps(x + i)));
    if (i < n) {
        const __m256i tail = first_lanes((int)(n - i));
        _mm256_maskstore_ps(out + i, tail, exp8(_mm256_maskload_ps(x + i, tail)));
    }
}

// ---------------------------------------------------------------------------
// softmax along a row: torch's _vec_softmax_lastdim with its 8-lane reduce_all
// ---------------------------------------------------------------------------

// vec::maximum: _mm256_max_ps (b unless a > b) OR-ed with the unordered mask,
// so a NaN operand gives the all-ones NaN (kernels.c's vec_max).
static inline __m256 vec_max(__m256 a, __m256 b) {
    return _mm256_or_ps(_mm256_max_ps(a, b), _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
}

// VecReduceAllSIMD's shuffle tree over the 8 lanes a0..a7:
// ((a0 op a4) op (a2 op a6)) op ((a1 op a5) op (a3 op a7)).
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

// x (n,), n >= 8 -> reduce_all(max): lane l folds x[l], x[l+8], ...; the
// partial tail vector updates only its first lanes; then the tree.
static inline float row_max(const float *x, int n) {
    __m256 acc = _mm256_loadu_ps(x);
    int d = LANES;
    for (; d + LANES <= n; d += LANES) acc = vec_max(acc, _mm256_loadu_ps(x + d));
    if (d < n) {
        const __m256i tail = first_lanes(n - d);
        const __m256 x_tail = _mm256_maskload_ps(x + d, tail);
        acc = _mm256_blendv_ps(acc, vec_max(acc, x_tail), _mm256_castsi256_ps(tail));
    }
    return tree_max(acc);
}

// x (n,), n >= 8 -> out (n,): softmax_row. Pass 1: max (row_max). Pass 2:
// e = exp(x - max) stored, and reduce_all(+) over e in the same lane order
// (lane l: e[l] + e[l+8] + ..., tail lanes only, then the tree): fusing the
// store and the sum changes no operation. Pass 3: one 1/sum, one multiply
// per element. out may be x.
static inline void softmax_from_max(float *out, const float *x, int n, float max_s) {
    const __m256 max = _mm256_set1_ps(max_s);
    __m256 acc = exp8_to_100(_mm256_sub_ps(_mm256_loadu_ps(x), max));
    _mm256_storeu_ps(out, acc);
    int d = LANES;
    for (; d + LANES <= n; d += LANES) {
        const __m256 e = exp8_to_100(_mm256_sub_ps(_mm256_loadu_ps(x + d), max));
        _mm256_storeu_ps(out + d, e);
        acc = _mm256_add_ps(acc, e);
    }
    const int t = n - d;
    const __m256i tail = first_lanes(t);
    if (t > 0) {
        const __m256 e = exp8_to_100(_mm256_sub_ps(_mm256_maskload_ps(x + d, tail), max));
        _mm256_maskstore_ps(out + d, tail, e);
        acc = _mm256_blendv_ps(acc, _mm256_add_ps(acc, e), _mm256_castsi256_ps(tail));
    }
    const __m256 inv = _mm256_set1_ps(1.0f / tree_add(acc));
    for (d = 0; d + LANES <= n; d += LANES) _mm256_storeu_ps(out + d, _mm256_mul_ps(_mm256_loadu_ps(out + d), inv));
    if (t > 0) _mm256_maskstore_ps(out + d, tail, _mm256_mul_ps(_mm256_maskload_ps(out + d, tail), inv));
}

static void softmax_row_avx2(float *out, const float *x, int n) { softmax_from_max(out, x, n, row_max(x, n)); }

// x (n,), n >= 8 -> out (n,) = softmax_row(x / s), div_scalar's true
// division first, or x * r where the caller knows that r = 1 / s gives the
// same rounding. Pass 1 stores each quotient and takes the running max of
// what it stores, lane by lane as row_max would over it afterwards; then
// passes 2 and 3 of softmax_row. out may be x.
static void softmax_row_scaled_avx2(float *out, const float *x, int n, float s, int by_reciprocal) {
    const __m256 d_s = _mm256_set1_ps(by_reciprocal ? 1.0f / s : s);
#define SCALED(v) (by_reciprocal ? _mm256_mul_ps((v), d_s) : _mm256_div_ps((v), d_s))
    __m256 acc = SCALED(_mm256_loadu_ps(x));
    _mm256_storeu_ps(out, acc);
    int d = LANES;
    for (; d + LANES <= n; d += LANES) {
        const __m256 y = SCALED(_mm256_loadu_ps(x + d));
        _mm256_storeu_ps(out + d, y);
        acc = vec_max(acc, y);
    }
    if (d < n) {
        const __m256i tail = first_lanes(n - d);
        const __m256 y = SCALED(_mm256_maskload_ps(x + d, tail));
        _mm256_maskstore_ps(out + d, tail, y);
        acc = _mm256_blendv_ps(acc, vec_max(acc, y), _mm256_castsi256_ps(tail));
    }
#undef SCALED
    softmax_from_max(out, out, n, tree_max(acc));
}

// dy, y (n,), n >= 8 -> dx (n,): softmax_rows_backward's row
// (backward_kernels.c). s: lane l starts at dy_l * y_l, every further
// element of the lane (the tail's first lanes only) is fmaf(dy, y, acc_l),
// as torch's contracted AVX2 loop does; then the tree. dx = (dy - s) * y,
// two roundings.
static void softmax_backward_row_avx2(float *dx, const float *dy, const float *y, int n) {
    __m256 acc = _mm256_mul_ps(_mm256_loadu_ps(dy), _mm256_loadu_ps(y));
    int d = LANES;
    for (; d + LANES <= n; d += LANES) acc = _mm256_fmadd_ps(_mm256_loadu_ps(dy + d), _mm256_loadu_ps(y + d), acc);
    const int t = n - d;
    const __m256i tail = first_lanes(t);
    if (t > 0) {
        const __m256 f = _mm256_fmadd_ps(_mm256_maskload_ps(dy + d, tail), _mm256_maskload_ps(y + d, tail), acc);
        acc = _mm256_blendv_ps(acc, f, _mm256_castsi256_ps(tail));
    }
    const __m256 s = _mm256_set1_ps(tree_add(acc));
    for (d = 0; d + LANES <= n; d += LANES)
        _mm256_storeu_ps(dx + d, _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(dy + d), s), _mm256_loadu_ps(y + d)));
    if (t > 0)
        _mm256_maskstore_ps(dx + d, tail, _mm256_mul_ps(_mm256_sub_ps(_mm256_maskload_ps(dy + d, tail), s),
                                                        _mm256_maskload_ps(y + d, tail)));
}

// ---------------------------------------------------------------------------
// row sum: torch's cascade_sum, vectorized_inner_sum, as torch vectorises it
// ---------------------------------------------------------------------------

// v (count vectors of 8, contiguous) -> lane l = row_sum(x + l, count, 8) of
// kernels.c, all 8 lanes at once: vectors 4i..4i+3 feed accumulators
// k = 0..3, each through multi_row_sum's 4-level cascade (level 0 takes
// `step` steps, then carries up; level j carries into j+1 only when i is a
// multiple of step^(j+1)); leftover steps into level 0; levels 1..3 added to
// level 0 in order; leftover vectors added to accumulator 0; then
// ((acc0 + acc1) + acc2) + acc3.
static __m256 lane_sums(const float *v, long count) {
    enum { LEVELS = 4 };
    const long steps = count / 4;
    long ceil_log2 = 1;  // utils::CeilLog2: 1 for steps <= 2
    if (steps > 2) {
        ceil_log2 = 0;
        while ((1L << ceil_log2) < steps) ceil_log2++;
    }
    const long power = ceil_log2 / LEVELS > 4 ? ceil_log2 / LEVELS : 4;
    const long step = 1L << power, mask = step - 1;
    __m256 acc[LEVELS][4];  // acc[level][k]
    for (int j = 0; j < LEVELS; j++)
        for (int k = 0; k < 4; k++) acc[j][k] = _mm256_setzero_ps();

    long i = 0;
    while (i + step <= steps) {
        for (long j = 0; j < step; j++, i++) {
            const float *v_i = v + i * 4 * LANES;
            for (int k = 0; k < 4; k++) acc[0][k] = _mm256_add_ps(acc[0][k], _mm256_loadu_ps(v_i + k * LANES));
        }
        for (int j = 1; j < LEVELS; j++) {
            for (int k = 0; k < 4; k++) {
                acc[j][k] = _mm256_add_ps(acc[j][k], acc[j - 1][k]);
                acc[j - 1][k] = _mm256_setzero_ps();
            }
            if ((i & (mask << (j * power))) != 0) break;
        }
    }
    for (; i < steps; i++) {
        const float *v_i = v + i * 4 * LANES;
        for (int k = 0; k < 4; k++) acc[0][k] = _mm256_add_ps(acc[0][k], _mm256_loadu_ps(v_i + k * LANES));
    }
    for (int j = 1; j < LEVELS; j++)
        for (int k = 0; k < 4; k++) acc[0][k] = _mm256_add_ps(acc[0][k], acc[j][k]);
    for (long r = steps * 4; r < count; r++) acc[0][0] = _mm256_add_ps(acc[0][0], _mm256_loadu_ps(v + r * LANES));
    return _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(acc[0][0], acc[0][1]), acc[0][2]), acc[0][3]);
}

// x (n,), n >= 8 -> sum(x): s = +0, then the tail x[8(n/8)..n-1] in order,
// then lanes 0..7 of lane_sums in order; 0 + s (the zero-filled output).
static float sum_row_avx2(const float *x, int n) {
    const int nvec = n / LANES;
    float lane[LANES];
    _mm256_storeu_ps(lane, lane_sums(x, nvec));
    float s = 0.0f;
    for (int i = nvec * LANES; i < n; i++) s += x[i];
    for (int l = 0; l < LANES; l++) s += lane[l];
    return 0.0f + s;
}

// noise (n,) from words (2n,): element i is kept iff
// (words[2i] << 32 | words[2i+1]) & (2^53 - 1) < threshold, 8 elements at a
// time. A 64-bit lane of a load holds words[2i] in its low half, so the
// halves are swapped (shuffle 0xb1) to put the first draw high.
static void dropout_block_avx2(float *noise, const uint32_t *words, int n, uint64_t threshold, float kept,
                               float dropped) {
    const __m256i mask53 = _mm256_set1_epi64x((long long)((UINT64_C(1) << 53) - 1));
    const __m256i thr = _mm256_set1_epi64x((long long)threshold);  // <= 2^53: signed compare is fine
    const __m256 v_kept = _mm256_set1_ps(kept), v_dropped = _mm256_set1_ps(dropped);
    int i = 0;
    for (; i + LANES <= n; i += LANES) {
        const __m256i w_lo = _mm256_loadu_si256((const __m256i *)(words + 2 * i));      // elements 0..3
        const __m256i w_hi = _mm256_loadu_si256((const __m256i *)(words + 2 * i + 8));  // elements 4..7
        const __m256i r_lo = _mm256_and_si256(_mm256_shuffle_epi32(w_lo, 0xb1), mask53);
        const __m256i r_hi = _mm256_and_si256(_mm256_shuffle_epi32(w_hi, 0xb1), mask53);
        const __m256 keep_lo = _mm256_castsi256_ps(_mm256_cmpgt_epi64(thr, r_lo));
        const __m256 keep_hi = _mm256_castsi256_ps(_mm256_cmpgt_epi64(thr, r_hi));
        // low dword of each 64-bit mask: [e0 e1 e4 e5 | e2 e3 e6 e7], then the
        // 64-bit pairs reordered to e0..e7
        const __m256 keep_mixed = _mm256_shuffle_ps(keep_lo, keep_hi, 0x88);
        const __m256 keep = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(keep_mixed), 0xd8));
        _mm256_storeu_ps(noise + i, _mm256_blendv_ps(v_dropped, v_kept, keep));
    }
    for (; i < n; i++) {
        const uint64_t r = ((uint64_t)words[2 * i] << 32 | words[2 * i + 1]) & ((UINT64_C(1) << 53) - 1);
        noise[i] = r < threshold ? kept : dropped;
    }
}

// ---------------------------------------------------------------------------
// division by a scalar: out = x / s, 8 at a time
// ---------------------------------------------------------------------------

// out (n,) = x (n,) / s: div_scalar's true division, each element rounded
// once (vdivps is IEEE division, as divss is); out may be x
static void div_scalar_avx2(float *out, const float *x, float s, long n) {
    const __m256 d = _mm256_set1_ps(s);
    long i = 0;
    for (; i + LANES <= n; i += LANES) _mm256_storeu_ps(out + i, _mm256_div_ps(_mm256_loadu_ps(x + i), d));
    for (; i < n; i++) out[i] = x[i] / s;
}

// out (n,) = x (n,) * s, each element rounded once; out may be x
static void mul_scalar_avx2(float *out, const float *x, float s, long n) {
    const __m256 m = _mm256_set1_ps(s);
    long i = 0;
    for (; i + LANES <= n; i += LANES) _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), m));
    for (; i < n; i++) out[i] = x[i] * s;
}

// ---------------------------------------------------------------------------
// transpose: one 8 x 8 block in registers
// ---------------------------------------------------------------------------

// out (8, 8), rows ldo apart = a (8, 8), rows lda apart, transposed:
// unpack pairs, shuffle quads, swap 128-bit halves
static void transpose_8x8_avx2(float *out, long ldo, const float *a, long lda) {
    __m256 row[8], t[8];
    for (int i = 0; i < 8; i++) row[i] = _mm256_loadu_ps(a + i * lda);
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(row[i], row[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(row[i], row[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        row[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
        row[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xee);
        row[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        row[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xee);
    }
    for (int i = 0; i < 4; i++) {
        _mm256_storeu_ps(out + i * ldo, _mm256_permute2f128_ps(row[i], row[i + 4], 0x20));
        _mm256_storeu_ps(out + (i + 4) * ldo, _mm256_permute2f128_ps(row[i], row[i + 4], 0x31));
    }
}

const FastIsa fast_isa_avx2 = {
    .name = "avx2",
    .mr = MR,
    .nr = NR,
    .kc = AVX2_KC,
    .mc = AVX2_MC,
    .nc = AVX2_NC,
    .gemm_tile = fast_gemm_tile_6x16,
    .softmax_row = softmax_row_avx2,
    .softmax_row_scaled = softmax_row_scaled_avx2,
    .softmax_backward_row = softmax_backward_row_avx2,
    .sum_row = sum_row_avx2,
    .exp = exp_avx2,
    .dropout_block = dropout_block_avx2,
    .transpose_8x8 = transpose_8x8_avx2,
    .div_scalar = div_scalar_avx2,
    .mul_scalar = mul_scalar_avx2,
};
