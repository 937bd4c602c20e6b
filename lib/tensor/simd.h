// simd.h: the lane-width layer of tensor/'s SIMD bodies (gemm_simd.c,
// rows_simd.c, noise_simd.c, layout_simd.c), as ggml's GGML_F32_VEC. A body
// is written once over the names below and compiled once per instruction set
// (lib/meson.build): SIMD_LANES = 8 maps them onto AVX2 + FMA (__m256),
// SIMD_LANES = 16 onto AVX-512 F/BW/DQ/VL (__m512); SIMD_FN(name) suffixes
// a body's functions with _avx2 or _avx512.
//
// Every name is one instruction (or the fixed sequence written here) with
// one rounding per float operation, as the intrinsic it stands for: the
// layer chooses instructions, never an order of float operations. Two kinds
// of vector:
//   vf  W = SIMD_LANES lanes of independent outputs (a product's columns,
//       exp's elements, a row's blocks);
//   v8  8 lanes on either instruction set: torch's reductions run in its
//       AVX2 build's 8 lanes (Vectorized<float>), so every sum or max over a
//       row is folded in a v8, whatever W is.
// Masks: vf_lanes / v8_lanes select lanes 0..t-1 (a partial vector at a
// row's end); vf_cmp / v8_cmp are a compare's result. On AVX2 both are
// vectors (an integer mask for maskload, a float one for blendv), on
// AVX-512 mask registers.
#ifndef LITATTN_SIMD_H
#define LITATTN_SIMD_H

#include <immintrin.h>
#include <stdint.h>

#ifndef SIMD_LANES
#error "SIMD_LANES (8: AVX2 + FMA, 16: AVX-512) is set by lib/meson.build"
#endif

#define SIMD_STR_(x) #x
// #pragma GCC unroll n, n a macro
#define SIMD_UNROLL(n) _Pragma(SIMD_STR_(GCC unroll n))

// --- v8: the reductions' 8 lanes (one __m256 on both instruction sets) -------

typedef __m256 v8;
#define v8_load _mm256_loadu_ps
#define v8_store _mm256_storeu_ps
#define v8_set1 _mm256_set1_ps
#define v8_add _mm256_add_ps
#define v8_sub _mm256_sub_ps
#define v8_mul _mm256_mul_ps
#define v8_div _mm256_div_ps
#define v8_fmadd _mm256_fmadd_ps  // a * b + c, one rounding (explicit: -ffp-contract=off)

// vec::maximum: _mm256_max_ps (b unless a > b) OR-ed with the unordered mask,
// so that a NaN operand gives the all-ones NaN (rows.c's vec_max).
static inline v8 v8_max(v8 a, v8 b) { return _mm256_or_ps(_mm256_max_ps(a, b), _mm256_cmp_ps(a, b, _CMP_UNORD_Q)); }

// VecReduceAllSIMD's shuffle tree over the 8 lanes a0..a7:
// ((a0 op a4) op (a2 op a6)) op ((a1 op a5) op (a3 op a7)).
static inline float v8_tree_max(v8 v) {
    v = v8_max(v, _mm256_permute2f128_ps(v, v, 0x01));
    v = v8_max(v, _mm256_shuffle_ps(v, v, 0x4e));
    v = v8_max(v, _mm256_shuffle_ps(v, v, 0xb1));
    return _mm256_cvtss_f32(v);
}

static inline float v8_tree_add(v8 v) {
    v = _mm256_add_ps(v, _mm256_permute2f128_ps(v, v, 0x01));
    v = _mm256_add_ps(v, _mm256_shuffle_ps(v, v, 0x4e));
    v = _mm256_add_ps(v, _mm256_shuffle_ps(v, v, 0xb1));
    return _mm256_cvtss_f32(v);
}

// The 8 x 8 transpose's moves (layout_simd.c): pairs, quads, 128-bit halves.
#define v8_unpacklo _mm256_unpacklo_ps
#define v8_unpackhi _mm256_unpackhi_ps
#define v8_shuffle(a, b, imm) _mm256_shuffle_ps((a), (b), (imm))
#define v8_halves(a, b, imm) _mm256_permute2f128_ps((a), (b), (imm))

#if SIMD_LANES == 8
// ============================== AVX2 + FMA ====================================

#define SIMD_FN(name) name##_avx2
// The product's register tile: SIMD_TILE_MR rows x 2 W columns (6 x 16).
#define SIMD_TILE_MR 6

typedef __m256 vf;
typedef __m256i vi;        // W int32
typedef __m256i vf_lanes;  // lanes 0..t-1: all ones there, zeros above
typedef __m256 vf_cmp;     // a compare: all ones where true
typedef __m256i v8_lanes;
typedef __m256 v8_cmp;

#define vf_load _mm256_loadu_ps
#define vf_store _mm256_storeu_ps
#define vf_set1 _mm256_set1_ps
#define vf_zero _mm256_setzero_ps
#define vf_add _mm256_add_ps
#define vf_sub _mm256_sub_ps
#define vf_mul _mm256_mul_ps
#define vf_div _mm256_div_ps
#define vf_fmadd _mm256_fmadd_ps
// a[0] in every lane, from memory
#define vf_broadcast(p) _mm256_broadcast_ss(p)
#define vf_max v8_max
#define vf_cvt_i32 _mm256_cvtps_epi32  // rounded to nearest even; NaN -> INT32_MIN
#define vi_cvt_f32 _mm256_cvtepi32_ps

static inline vf_lanes vf_first(int t) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(t), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
#define vf_maskload(p, m) _mm256_maskload_ps((p), (m))
#define vf_maskstore(p, m, v) _mm256_maskstore_ps((p), (m), (v))
// m ? b : a, lane by lane
#define vf_blend_lanes(a, m, b) _mm256_blendv_ps((a), (b), _mm256_castsi256_ps(m))
#define vf_blend(a, c, b) _mm256_blendv_ps((a), (b), (c))
#define vf_cmp_gt(a, b) _mm256_cmp_ps((a), (b), _CMP_GT_OQ)

// u where d >= c or d is NaN, +0 where d < c (sleef's clamp below)
static inline vf vf_zero_below(vf d, float c, vf u) {
    return _mm256_andnot_ps(_mm256_cmp_ps(d, _mm256_set1_ps(c), _CMP_LT_OQ), u);
}

// u * 2^q for |q| <= 150, SLEEF's way: u * 2^(q>>1) * 2^(q - (q>>1)), the
// powers of two built from q's bits (integer ops wrap, as in SLEEF); qf = q
// as floats (unused here).
static inline vf vf_scale_pow2(vf u, vi q, vf qf) {
    (void)qf;
    const __m256i half = _mm256_srai_epi32(q, 1), bias = _mm256_set1_epi32(0x7f);
    const __m256 scale1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(half, bias), 23));
    const __m256 scale2 =
        _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(q, half), bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(u, scale1), scale2);
}

// v8 and vf are one vector here
#define vf_from8(v) (v)
#define vf_low8(v) (v)
// block h (0 .. W/8 - 1) of v as 8 lanes
#define vf_block8(v, h) ((void)(h), (v))
// acc + each 8-lane block of e in order (one here)
static inline v8 v8_add_blocks(v8 acc, vf e) { return _mm256_add_ps(acc, e); }
// acc + the first t lanes of e, 0 < t < W, block by block: the lanes past t
// keep acc; tail = vf_first(t)
static inline v8 v8_add_blocks_first(v8 acc, vf e, int t, vf_lanes tail) {
    (void)t;
    return _mm256_blendv_ps(acc, _mm256_add_ps(acc, e), _mm256_castsi256_ps(tail));
}

#define v8_first vf_first
#define v8_maskload vf_maskload
#define v8_maskstore vf_maskstore
#define v8_blend_lanes vf_blend_lanes
#define v8_blend vf_blend

// Eight of dropout's draws, words (16,) = 8 pairs (w0, w1): lane i is all
// ones iff (w0 << 32 | w1) & mask53 < thr (thr <= 2^53: a signed compare is
// exact). A 64-bit lane of a load holds w0 in its low half, so the halves are
// swapped (shuffle 0xb1) to put the first draw high.
typedef __m256i draws;
#define draws_set1(x) _mm256_set1_epi64x((long long)(x))
static inline v8_cmp draws_below8(const uint32_t *words, draws mask53, draws thr) {
    const __m256i w_lo = _mm256_loadu_si256((const __m256i *)words);        // elements 0..3
    const __m256i w_hi = _mm256_loadu_si256((const __m256i *)(words + 8));  // elements 4..7
    const __m256i r_lo = _mm256_and_si256(_mm256_shuffle_epi32(w_lo, 0xb1), mask53);
    const __m256i r_hi = _mm256_and_si256(_mm256_shuffle_epi32(w_hi, 0xb1), mask53);
    const __m256 keep_lo = _mm256_castsi256_ps(_mm256_cmpgt_epi64(thr, r_lo));
    const __m256 keep_hi = _mm256_castsi256_ps(_mm256_cmpgt_epi64(thr, r_hi));
    // low dword of each 64-bit mask: [e0 e1 e4 e5 | e2 e3 e6 e7], then the
    // 64-bit pairs reordered to e0..e7
    const __m256 keep_mixed = _mm256_shuffle_ps(keep_lo, keep_hi, 0x88);
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(keep_mixed), 0xd8));
}

#elif SIMD_LANES == 16
// ============================== AVX-512 =======================================

#define SIMD_FN(name) name##_avx512
// The product's register tile: 8 x 32.
#define SIMD_TILE_MR 8

typedef __m512 vf;
typedef __m512i vi;
typedef __mmask16 vf_lanes;
typedef __mmask16 vf_cmp;
typedef __mmask8 v8_lanes;
typedef __mmask8 v8_cmp;

#define vf_load _mm512_loadu_ps
#define vf_store _mm512_storeu_ps
#define vf_set1 _mm512_set1_ps
#define vf_zero _mm512_setzero_ps
#define vf_add _mm512_add_ps
#define vf_sub _mm512_sub_ps
#define vf_mul _mm512_mul_ps
#define vf_div _mm512_div_ps
#define vf_fmadd _mm512_fmadd_ps
#define vf_broadcast(p) _mm512_set1_ps(*(p))
// vec::maximum on 16 lanes: a NaN operand gives the all-ones NaN
static inline vf vf_max(vf a, vf b) {
    return _mm512_mask_mov_ps(_mm512_max_ps(a, b), _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q),
                              _mm512_castsi512_ps(_mm512_set1_epi32(-1)));
}
#define vf_cvt_i32 _mm512_cvtps_epi32
#define vi_cvt_f32 _mm512_cvtepi32_ps

static inline vf_lanes vf_first(long t) { return (__mmask16)((1u << t) - 1u); }
#define vf_maskload(p, m) _mm512_maskz_loadu_ps((m), (p))
#define vf_maskstore(p, m, v) _mm512_mask_storeu_ps((p), (m), (v))
#define vf_blend_lanes(a, m, b) _mm512_mask_mov_ps((a), (m), (b))
#define vf_blend(a, c, b) _mm512_mask_mov_ps((a), (c), (b))
#define vf_cmp_gt(a, b) _mm512_cmp_ps_mask((a), (b), _CMP_GT_OQ)

static inline vf vf_zero_below(vf d, float c, vf u) {
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(d, _mm512_set1_ps(c), _CMP_NLT_UQ), u);
}

// u * 2^q for |q| <= 150 (qf = q as floats) in one vscalefps, u * 2^q
// rounded once. The same bits as SLEEF's two multiplies (AVX2 above) where
// exp calls it: for -104 <= d <= 100, |q| <= 150, so SLEEF's first multiply
// is exact (a normal result) and its second is the one rounding of u * 2^q;
// a NaN u stays that NaN. (Checked against sleef_expf over all 2^32 inputs;
// `unit / fast_kernels` runs every float of [-104, -87], where the result is
// subnormal and the rounding acts.)
static inline vf vf_scale_pow2(vf u, vi q, vf qf) {
    (void)q;
    return _mm512_scalef_ps(u, qf);
}

#define vf_from8(v) _mm512_castps256_ps512(v)
#define vf_low8(v) _mm512_castps512_ps256(v)
#define vf_block8(v, h) ((h) == 0 ? _mm512_castps512_ps256(v) : _mm512_extractf32x8_ps((v), 1))
// acc + block 0 of e, then + block 1: each lane's chain in torch's order
static inline v8 v8_add_blocks(v8 acc, vf e) {
    acc = _mm256_add_ps(acc, _mm512_castps512_ps256(e));
    return _mm256_add_ps(acc, _mm512_extractf32x8_ps(e, 1));
}
static inline v8 v8_add_blocks_first(v8 acc, vf e, int t, vf_lanes tail) {
    (void)tail;
    const __m256 e_lo = _mm512_castps512_ps256(e), e_hi = _mm512_extractf32x8_ps(e, 1);
    if (t >= 8) {
        acc = _mm256_add_ps(acc, e_lo);
        if (t > 8) acc = _mm256_mask_add_ps(acc, (__mmask8)((1u << (t - 8)) - 1u), acc, e_hi);
    } else {
        acc = _mm256_mask_add_ps(acc, (__mmask8)((1u << t) - 1u), acc, e_lo);
    }
    return acc;
}

static inline v8_lanes v8_first(long t) { return (__mmask8)((1u << t) - 1u); }
#define v8_maskload(p, m) _mm256_maskz_loadu_ps((m), (p))
#define v8_maskstore(p, m, v) _mm256_mask_storeu_ps((p), (m), (v))
#define v8_blend_lanes(a, m, b) _mm256_mask_mov_ps((a), (m), (b))
#define v8_blend(a, c, b) _mm256_mask_mov_ps((a), (c), (b))

// Eight of dropout's draws (see AVX2's above): one 512-bit load, the halves
// of each 64-bit lane swapped, an unsigned compare.
typedef __m512i draws;
#define draws_set1(x) _mm512_set1_epi64((long long)(x))
static inline v8_cmp draws_below8(const uint32_t *words, draws mask53, draws thr) {
    const __m512i w = _mm512_loadu_si512(words);
    const __m512i r = _mm512_and_si512(_mm512_shuffle_epi32(w, _MM_PERM_CDAB), mask53);
    return _mm512_cmplt_epu64_mask(r, thr);
}

#else
#error "SIMD_LANES must be 8 or 16"
#endif

#endif
