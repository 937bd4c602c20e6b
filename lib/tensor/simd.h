// simd.h: the lane-width layer of tensor/'s SIMD bodies (gemm_simd.c,
// rows_simd.c, noise_simd.c, layout_simd.c), as ggml's GGML_F32_VEC. A body
// is written once over the names below and compiled once per instruction set
// (lib/meson.build): on x86-64 SIMD_LANES = 8 maps them onto AVX2 + FMA
// (__m256), SIMD_LANES = 16 onto AVX-512 F/BW/DQ/VL (__m512); on AArch64
// SIMD_LANES = 8 onto Advanced SIMD (NEON), two float32x4_t. SIMD_FN(name)
// suffixes a body's functions with _avx2, _avx512 or _neon.
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
// AVX-512 mask registers, on NEON vectors (the lanes' mask also keeps t).
#ifndef LITATTN_SIMD_H
#define LITATTN_SIMD_H

#include <stdint.h>

#ifndef SIMD_LANES
#error "SIMD_LANES (8: AVX2 + FMA or NEON, 16: AVX-512) is set by lib/meson.build"
#endif

#define SIMD_STR_(x) #x
// #pragma GCC unroll n, n a macro
#define SIMD_UNROLL(n) _Pragma(SIMD_STR_(GCC unroll n))

#if defined(__aarch64__)
// ============================== AArch64 Advanced SIMD (NEON) ==================
//
// One width, SIMD_LANES = 8: vf and v8 are one type, two float32x4_t (lanes
// 0..3 in lo, 4..7 in hi), so that torch's 8-lane reductions keep their
// order. Each name does what the AVX2 name of the section below does, half
// by half: the same float operation on the same lanes with one rounding
// (AArch64's Advanced SIMD is IEEE 754 under FPCR's defaults, as x86's under
// MXCSR's: ties to even, subnormals kept). FMA (vfmaq_f32) only where AVX2
// fuses (vf_fmadd, v8_fmadd). Where the nearest NEON instruction answers
// otherwise than x86's, the sequence here gives x86's answer: max (a NaN,
// signed zeros), cvtps2dq (NaN and overflow), the masked loads and stores
// (none in NEON: the partial vector goes through a buffer), and the shuffles
// (the immediates the bodies use).
#include <arm_neon.h>
#include <string.h>

#if SIMD_LANES != 8
#error "AArch64 has one width: SIMD_LANES = 8 (lib/meson.build)"
#endif

#define SIMD_FN(name) name##_neon
// The product's register tile: 6 rows x 2 W columns (6 x 16): 24
// accumulators of 4 lanes, 4 registers of b, one of a, one product in
// flight: 30 of the 32 vector registers (AVX2's 6 x 16 fits 16 registers
// because x86 multiplies by a broadcast from memory).
#define SIMD_TILE_MR 6

typedef struct {
    float32x4_t lo, hi;
} v8;
typedef v8 vf;
typedef struct {
    int32x4_t lo, hi;
} vi;
// a compare: all ones where true
typedef struct {
    uint32x4_t lo, hi;
} v8_cmp;
typedef v8_cmp vf_cmp;
// lanes 0..n-1: all ones there, zeros above; n (0..8) for the masked loads
typedef struct {
    uint32x4_t lo, hi;
    int n;
} v8_lanes;
typedef v8_lanes vf_lanes;

static inline v8 v8_load(const float *p) { return (v8){vld1q_f32(p), vld1q_f32(p + 4)}; }
static inline void v8_store(float *p, v8 v) {
    vst1q_f32(p, v.lo);
    vst1q_f32(p + 4, v.hi);
}
static inline v8 v8_set1(float x) { return (v8){vdupq_n_f32(x), vdupq_n_f32(x)}; }
static inline v8 v8_add(v8 a, v8 b) { return (v8){vaddq_f32(a.lo, b.lo), vaddq_f32(a.hi, b.hi)}; }
static inline v8 v8_sub(v8 a, v8 b) { return (v8){vsubq_f32(a.lo, b.lo), vsubq_f32(a.hi, b.hi)}; }
static inline v8 v8_mul(v8 a, v8 b) { return (v8){vmulq_f32(a.lo, b.lo), vmulq_f32(a.hi, b.hi)}; }
static inline v8 v8_div(v8 a, v8 b) { return (v8){vdivq_f32(a.lo, b.lo), vdivq_f32(a.hi, b.hi)}; }
// a * b + c, one rounding (vfmaq_f32(c, a, b): FMLA)
static inline v8 v8_fmadd(v8 a, v8 b, v8 c) { return (v8){vfmaq_f32(c.lo, a.lo, b.lo), vfmaq_f32(c.hi, a.hi, b.hi)}; }

// _mm_max_ps(a, b) | unordered(a, b), 4 lanes: a > b ? a : b (b when
// they are equal: max(+0, -0) = -0, unlike FMAX), and all ones (a NaN) where
// either is NaN (FMAX would return that NaN).
static inline float32x4_t simd_max4_(float32x4_t a, float32x4_t b) {
    const uint32x4_t gt = vcgtq_f32(a, b), ordered = vorrq_u32(gt, vcleq_f32(a, b));
    const uint32x4_t max = vbslq_u32(gt, vreinterpretq_u32_f32(a), vreinterpretq_u32_f32(b));
    return vreinterpretq_f32_u32(vornq_u32(max, ordered));
}
// vec::maximum as on AVX2 (see v8_max there)
static inline v8 v8_max(v8 a, v8 b) { return (v8){simd_max4_(a.lo, b.lo), simd_max4_(a.hi, b.hi)}; }

// VecReduceAllSIMD's shuffle tree as AVX2 runs it, lane 0's operands in the
// same order: ((a0 op a4) op (a2 op a6)) op ((a1 op a5) op (a3 op a7)).
static inline float v8_tree_max(v8 v) {
    float32x4_t m = simd_max4_(v.lo, v.hi);  // a_i op a_i+4
    m = simd_max4_(m, vextq_f32(m, m, 2));    // lane 0: (0) op (2); lane 1: (1) op (3)
    m = simd_max4_(m, vrev64q_f32(m));        // lane 0: lane 0 op lane 1
    return vgetq_lane_f32(m, 0);
}
static inline float v8_tree_add(v8 v) {
    float32x4_t s = vaddq_f32(v.lo, v.hi);
    s = vaddq_f32(s, vextq_f32(s, s, 2));
    s = vaddq_f32(s, vrev64q_f32(s));
    return vgetq_lane_f32(s, 0);
}

// The 8 x 8 transpose's moves (layout_simd.c), as AVX2's on each 128-bit
// half: unpacklo [a0 b0 a1 b1], unpackhi [a2 b2 a3 b3]; shuffle(a, b, imm)
// [a[imm & 3], a[imm >> 2 & 3], b[imm >> 4 & 3], b[imm >> 6 & 3]] (0x44 and
// 0xee, the layout's, in one instruction); halves(a, b, imm): the 128-bit
// halves named by imm's bits 0-1 and 4-5 (0, 1: a's low, high; 2, 3: b's),
// no zeroing bits.
static inline v8 v8_unpacklo(v8 a, v8 b) { return (v8){vzip1q_f32(a.lo, b.lo), vzip1q_f32(a.hi, b.hi)}; }
static inline v8 v8_unpackhi(v8 a, v8 b) { return (v8){vzip2q_f32(a.lo, b.lo), vzip2q_f32(a.hi, b.hi)}; }
static inline float32x4_t simd_shuffle4_(float32x4_t a, float32x4_t b, int imm) {
    const float64x2_t a2 = vreinterpretq_f64_f32(a), b2 = vreinterpretq_f64_f32(b);
    if (imm == 0x44) return vreinterpretq_f32_f64(vzip1q_f64(a2, b2));
    if (imm == 0xee) return vreinterpretq_f32_f64(vzip2q_f64(a2, b2));
    float x[4], y[4];
    vst1q_f32(x, a);
    vst1q_f32(y, b);
    const float r[4] = {x[imm & 3], x[imm >> 2 & 3], y[imm >> 4 & 3], y[imm >> 6 & 3]};
    return vld1q_f32(r);
}
static inline v8 v8_shuffle(v8 a, v8 b, int imm) {
    return (v8){simd_shuffle4_(a.lo, b.lo, imm), simd_shuffle4_(a.hi, b.hi, imm)};
}
static inline float32x4_t simd_half_(v8 a, v8 b, int which) {
    return which == 0 ? a.lo : which == 1 ? a.hi : which == 2 ? b.lo : b.hi;
}
static inline v8 v8_halves(v8 a, v8 b, int imm) { return (v8){simd_half_(a, b, imm & 3), simd_half_(a, b, imm >> 4 & 3)}; }

#define vf_load v8_load
#define vf_store v8_store
#define vf_set1 v8_set1
#define vf_add v8_add
#define vf_sub v8_sub
#define vf_mul v8_mul
#define vf_div v8_div
#define vf_fmadd v8_fmadd
#define vf_max v8_max
static inline vf vf_zero(void) { return v8_set1(0.0f); }
// a[0] in every lane, from memory (LD1R)
static inline vf vf_broadcast(const float *p) {
    const float32x4_t a = vld1q_dup_f32(p);
    return (vf){a, a};
}

// cvtps2dq, 4 lanes: rounded to nearest even (FCVTNS), and INT32_MIN where
// x is NaN or >= 2^31 (FCVTNS gives 0 and INT32_MAX there; below -2^31 both
// give INT32_MIN)
static inline int32x4_t simd_cvt4_(float32x4_t x) {
    return vbslq_s32(vcltq_f32(x, vdupq_n_f32(0x1p31f)), vcvtnq_s32_f32(x), vdupq_n_s32(INT32_MIN));
}
static inline vi vf_cvt_i32(vf x) { return (vi){simd_cvt4_(x.lo), simd_cvt4_(x.hi)}; }
// cvtdq2ps: rounded to nearest even (SCVTF under FPCR's default)
static inline vf vi_cvt_f32(vi q) { return (vf){vcvtq_f32_s32(q.lo), vcvtq_f32_s32(q.hi)}; }

static inline vf_lanes vf_first(long t) {
    static const int32_t index[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    const int32x4_t n = vdupq_n_s32((int32_t)t);
    return (vf_lanes){vcgtq_s32(n, vld1q_s32(index)), vcgtq_s32(n, vld1q_s32(index + 4)), (int)t};
}
// maskload: lanes 0..n-1 from p, +0 above; nothing read past p[n - 1]
static inline vf vf_maskload(const float *p, vf_lanes m) {
    float lane[8] = {0};
    memcpy(lane, p, (size_t)m.n * sizeof(float));
    return v8_load(lane);
}
// maskstore: lanes 0..n-1 to p; nothing written past p[n - 1]
static inline void vf_maskstore(float *p, vf_lanes m, vf v) {
    float lane[8];
    v8_store(lane, v);
    memcpy(p, lane, (size_t)m.n * sizeof(float));
}
// m ? b : a, lane by lane
static inline vf vf_blend_lanes(vf a, vf_lanes m, vf b) { return (vf){vbslq_f32(m.lo, b.lo, a.lo), vbslq_f32(m.hi, b.hi, a.hi)}; }
static inline vf vf_blend(vf a, vf_cmp c, vf b) { return (vf){vbslq_f32(c.lo, b.lo, a.lo), vbslq_f32(c.hi, b.hi, a.hi)}; }
// _CMP_GT_OQ: false where either is NaN (FCMGT)
static inline vf_cmp vf_cmp_gt(vf a, vf b) { return (vf_cmp){vcgtq_f32(a.lo, b.lo), vcgtq_f32(a.hi, b.hi)}; }

// u where d >= c or d is NaN, +0 where d < c (sleef's clamp)
static inline float32x4_t simd_zero_below4_(float32x4_t d, float32x4_t c, float32x4_t u) {
    return vreinterpretq_f32_u32(vbicq_u32(vreinterpretq_u32_f32(u), vcltq_f32(d, c)));
}
static inline vf vf_zero_below(vf d, float c, vf u) {
    const float32x4_t cv = vdupq_n_f32(c);
    return (vf){simd_zero_below4_(d.lo, cv, u.lo), simd_zero_below4_(d.hi, cv, u.hi)};
}

// u * 2^q for |q| <= 150, SLEEF's way as AVX2's below: u * 2^(q>>1) *
// 2^(q - (q>>1)), the powers of two built from q's bits (integer ops wrap)
static inline float32x4_t simd_scale_pow2_4_(float32x4_t u, int32x4_t q) {
    const int32x4_t half = vshrq_n_s32(q, 1), bias = vdupq_n_s32(0x7f);
    const float32x4_t scale1 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(half, bias), 23));
    const float32x4_t scale2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(vsubq_s32(q, half), bias), 23));
    return vmulq_f32(vmulq_f32(u, scale1), scale2);
}
static inline vf vf_scale_pow2(vf u, vi q, vf qf) {
    (void)qf;
    return (vf){simd_scale_pow2_4_(u.lo, q.lo), simd_scale_pow2_4_(u.hi, q.hi)};
}

// v8 and vf are one vector here
#define vf_from8(v) (v)
#define vf_low8(v) (v)
#define vf_block8(v, h) ((void)(h), (v))
static inline v8 v8_add_blocks(v8 acc, vf e) { return v8_add(acc, e); }
static inline v8 v8_add_blocks_first(v8 acc, vf e, int t, vf_lanes tail) {
    (void)t;
    return vf_blend_lanes(acc, tail, v8_add(acc, e));
}

#define v8_first vf_first
#define v8_maskload vf_maskload
#define v8_maskstore vf_maskstore
#define v8_blend_lanes vf_blend_lanes
#define v8_blend vf_blend

// Eight of dropout's draws (see AVX2's below): per 64-bit lane the halves
// swapped (w0 high), masked to 53 bits, an unsigned compare (CMHI), and the
// low 32 bits of each 64-bit answer in element order.
typedef uint64x2_t draws;
#define draws_set1(x) vdupq_n_u64((uint64_t)(x))
static inline uint64x2_t simd_draws_below2_(const uint32_t *words, draws mask53, draws thr) {
    const uint64x2_t r = vandq_u64(vreinterpretq_u64_u32(vrev64q_u32(vld1q_u32(words))), mask53);
    return vcltq_u64(r, thr);
}
static inline v8_cmp draws_below8(const uint32_t *words, draws mask53, draws thr) {
    uint32x4_t keep[4];  // elements 2i, 2i + 1 each
    for (int i = 0; i < 4; i++) keep[i] = vreinterpretq_u32_u64(simd_draws_below2_(words + 4 * i, mask53, thr));
    return (v8_cmp){vuzp1q_u32(keep[0], keep[1]), vuzp1q_u32(keep[2], keep[3])};
}

#else
// ============================== x86-64 ========================================

#include <immintrin.h>

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

#endif  // x86-64

#endif
