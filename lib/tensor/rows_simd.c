// rows_simd.c: the row kernels (rows_fast.c's) over the lane-width layer
// (simd.h), compiled once per instruction set; the softmax's backward and
// the division and multiplication by a scalar at width 8 only (SIMD_LANES
// == 8 below: AVX2's, which the AVX-512 tables take too, and NEON's).
//
// Every kernel keeps the order of float operations of its scalar reference
// in rows.c; the comment above each says which order and how the lanes map
// onto it. The reference's reductions run in torch's 8 AVX2 lanes, so a
// W-lane vector here holds independent outputs (exp's elements) or W/8
// 8-lane blocks side by side, folded into a v8 block by block in order,
// never a W-lane reduction.
#include "rows_simd.h"

#include "simd.h"

// ---------------------------------------------------------------------------
// exp: SLEEF 3.5.1's expf (u10), the sequence of sleef_expf.c
// ---------------------------------------------------------------------------

// d (each lane <= 100 or NaN) -> e^d, lane by lane exactly as sleef_expf:
// q = rint(d log2 e) (cvtps2dq, ties to even, NaN -> INT32_MIN), s = d -
// q ln2 in two fused steps, the degree-7 polynomial by fused steps, 1 +
// fma(s*s, u, s), then u * 2^q (vf_scale_pow2) and the clamp below -104.
// Its clamp above 100 cannot act on such a d: a softmax's x - max (<= 0, or
// NaN) needs no more.
static inline vf exp_to_100(vf d) {
    const vi q = vf_cvt_i32(vf_mul(d, vf_set1(0x1.715476p+0f)));
    const vf qf = vi_cvt_f32(q);
    vf s = vf_fmadd(qf, vf_set1(-0x1.62e4p-1f), d);
    s = vf_fmadd(qf, vf_set1(-0x1.7f7d1cp-20f), s);

    vf u = vf_set1(0x1.a057b4p-13f);
    u = vf_fmadd(u, s, vf_set1(0x1.6d2d92p-10f));
    u = vf_fmadd(u, s, vf_set1(0x1.11114cp-7f));
    u = vf_fmadd(u, s, vf_set1(0x1.5554f4p-5f));
    u = vf_fmadd(u, s, vf_set1(0x1.555556p-3f));
    u = vf_fmadd(u, s, vf_set1(0x1p-1f));
    u = vf_add(vf_set1(1.0f), vf_fmadd(vf_mul(s, s), u, s));

    u = vf_scale_pow2(u, q, qf);
    return vf_zero_below(d, -104.0f, u);
}

// d -> e^d: sleef_expf with both clamps (+inf above 100)
static inline vf exp_full(vf d) {
    return vf_blend(exp_to_100(d), vf_cmp_gt(d, vf_set1(100.0f)), vf_set1(__builtin_inff()));
}

// out (n,) = e^x (n,): rows_exp, W independent lanes at a time, the
// tail masked (SLEEF runs on the padded tail vector too; each lane is
// independent).
void SIMD_FN(rows_simd_exp)(float *out, const float *x, long n) {
    long i = 0;
    for (; i + SIMD_LANES <= n; i += SIMD_LANES) vf_store(out + i, exp_full(vf_load(x + i)));
    if (i < n) {
        const vf_lanes tail = vf_first(n - i);
        vf_maskstore(out + i, tail, exp_full(vf_maskload(x + i, tail)));
    }
}

// ---------------------------------------------------------------------------
// softmax along a row: torch's _vec_softmax_lastdim with its 8-lane reduce_all
// ---------------------------------------------------------------------------

// x (n,), n >= 8 -> reduce_all(max): lane l folds x[l], x[l+8], ...; the
// partial tail vector updates only its first lanes; then the tree.
static inline float row_max(const float *x, int n) {
    v8 acc = v8_load(x);
    int d = 8;
    for (; d + 8 <= n; d += 8) acc = v8_max(acc, v8_load(x + d));
    if (d < n) {
        const v8_lanes tail = v8_first(n - d);
        acc = v8_blend_lanes(acc, tail, v8_max(acc, v8_maskload(x + d, tail)));
    }
    return v8_tree_max(acc);
}

// x (n,), n >= 8, max_s its reduce_all(max) -> out (n,): passes 2 and 3 of
// softmax_row. e = exp(x - max) stored, and reduce_all(+) over e: the 8-lane
// block 0 starts the accumulator, then each W-lane vector's blocks are added
// to it in order (lane l: e[l] + e[l+8] + ..., the tail's first lanes only,
// then the tree): fusing the store and the sum changes no operation. Pass 3:
// one 1/sum, one multiply per element. out may be x.
static inline void softmax_from_max(float *out, const float *x, int n, float max_s) {
    const vf max = vf_set1(max_s);
    v8 acc = vf_low8(exp_to_100(vf_sub(vf_from8(v8_load(x)), max)));
    v8_store(out, acc);
    int d = 8;
    for (; d + SIMD_LANES <= n; d += SIMD_LANES) {
        const vf e = exp_to_100(vf_sub(vf_load(x + d), max));
        vf_store(out + d, e);
        acc = v8_add_blocks(acc, e);
    }
    // the tail, 0 < t < W lanes; at width 8 pass 3 ends where pass 2 did,
    // and its tail mask is kept for it (the instructions of the AVX2 kernel
    // this body replaced: both forms are the same float operations)
#if SIMD_LANES == 8
    const int t = n - d;
    const vf_lanes tail = vf_first(t);
    if (t > 0) {
#else
    if (d < n) {
        const int t = n - d;
        const vf_lanes tail = vf_first(t);
#endif
        const vf e = exp_to_100(vf_sub(vf_maskload(x + d, tail), max));
        vf_maskstore(out + d, tail, e);
        acc = v8_add_blocks_first(acc, e, t, tail);
    }
    const vf inv = vf_set1(1.0f / v8_tree_add(acc));
    for (d = 0; d + SIMD_LANES <= n; d += SIMD_LANES) vf_store(out + d, vf_mul(vf_load(out + d), inv));
#if SIMD_LANES == 8
    if (t > 0) vf_maskstore(out + d, tail, vf_mul(vf_maskload(out + d, tail), inv));
#else
    if (d < n) {
        const vf_lanes part = vf_first(n - d);
        vf_maskstore(out + d, part, vf_mul(vf_maskload(out + d, part), inv));
    }
#endif
}

// x (n,), n >= 8 -> out (n,): softmax_row (pass 1: row_max)
void SIMD_FN(rows_simd_softmax_row)(float *out, const float *x, int n) {
    softmax_from_max(out, x, n, row_max(x, n));
}

// x (n,), n >= 8 -> out (n,) = softmax_row(x / s): each x / s rounded once
// (div_scalar's true division, or x * r where the caller knows that r = 1 /
// s rounds the same), stored, and its max taken in the same pass; then
// passes 2 and 3. out may be x.
// The max's pass is the one part written per width. At 8 lanes it is
// row_max's fold over what it stores. At 16 lanes it runs two 16-lane
// accumulators from -inf: the max of a row is one value whatever the order
// it is taken in, but for two things that cannot change the softmax: vec_max
// picks between +0 and -0 by order (and x - (+0), x - (-0) differ at most in
// the sign of a zero, whose exp is 1 either way), and a NaN anywhere makes
// it the all-ones NaN in any order.
void SIMD_FN(rows_simd_softmax_row_scaled)(float *out, const float *x, int n, float s, int by_reciprocal) {
    const vf d_s = vf_set1(by_reciprocal ? 1.0f / s : s);
#define SCALED(v) (by_reciprocal ? vf_mul((v), d_s) : vf_div((v), d_s))
#if SIMD_LANES == 8
    vf acc = SCALED(vf_load(x));
    vf_store(out, acc);
    int d = 8;
    for (; d + 8 <= n; d += 8) {
        const vf y = SCALED(vf_load(x + d));
        vf_store(out + d, y);
        acc = vf_max(acc, y);
    }
    if (d < n) {
        const vf_lanes tail = vf_first(n - d);
        const vf y = SCALED(vf_maskload(x + d, tail));
        vf_maskstore(out + d, tail, y);
        acc = vf_blend_lanes(acc, tail, vf_max(acc, y));
    }
    const float max = v8_tree_max(acc);
#else
    vf acc0 = vf_set1(-__builtin_inff()), acc1 = acc0;
    int d = 0;
    for (; d + 2 * SIMD_LANES <= n; d += 2 * SIMD_LANES) {
        const vf y0 = SCALED(vf_load(x + d)), y1 = SCALED(vf_load(x + d + SIMD_LANES));
        vf_store(out + d, y0);
        vf_store(out + d + SIMD_LANES, y1);
        acc0 = vf_max(acc0, y0);
        acc1 = vf_max(acc1, y1);
    }
    for (; d < n; d += SIMD_LANES) {
        const vf_lanes part = vf_first(n - d < SIMD_LANES ? n - d : SIMD_LANES);
        const vf y = SCALED(vf_maskload(x + d, part));
        vf_maskstore(out + d, part, y);
        acc0 = vf_blend_lanes(acc0, part, vf_max(acc0, y));
    }
    const vf m = vf_max(acc0, acc1);
    const float max = v8_tree_max(v8_max(vf_block8(m, 0), vf_block8(m, 1)));
#endif
#undef SCALED
    softmax_from_max(out, out, n, max);
}

// ---------------------------------------------------------------------------
// row sum: torch's cascade_sum, vectorized_inner_sum, as torch vectorises it
// ---------------------------------------------------------------------------

// v (count vectors of 8, contiguous) -> lane l = row_sum(x + l, count, 8) of
// rows.c, all 8 lanes at once: vectors 4i..4i+3 feed the 8-lane accumulators
// k = 0..3 (held 8 / W to a register: one step, 32 contiguous floats, is
// 32 / W adds doing exactly torch's four 8-lane adds), each through
// multi_row_sum's 4-level cascade (level 0 takes `step` steps, then carries
// up; level j carries into j+1 only when i is a multiple of step^(j+1));
// leftover steps into level 0; levels 1..3 added to level 0 in order;
// leftover vectors added to accumulator 0; then ((acc0 + acc1) + acc2) + acc3.
static v8 lane_sums(const float *v, long count) {
    enum { LEVELS = 4, REGS = 32 / SIMD_LANES };
    const long steps = count / 4;
    long ceil_log2 = 1;  // utils::CeilLog2: 1 for steps <= 2
    if (steps > 2) {
        ceil_log2 = 0;
        while ((1L << ceil_log2) < steps) ceil_log2++;
    }
    const long power = ceil_log2 / LEVELS > 4 ? ceil_log2 / LEVELS : 4;
    const long step = 1L << power, mask = step - 1;
    vf acc[LEVELS][REGS];  // acc[level][register]
    for (int j = 0; j < LEVELS; j++)
        for (int k = 0; k < REGS; k++) acc[j][k] = vf_zero();

    long i = 0;
    while (i + step <= steps) {
        for (long j = 0; j < step; j++, i++) {
            const float *v_i = v + i * 32;
            for (int k = 0; k < REGS; k++) acc[0][k] = vf_add(acc[0][k], vf_load(v_i + k * SIMD_LANES));
        }
        for (int j = 1; j < LEVELS; j++) {
            for (int k = 0; k < REGS; k++) {
                acc[j][k] = vf_add(acc[j][k], acc[j - 1][k]);
                acc[j - 1][k] = vf_zero();
            }
            if ((i & (mask << (j * power))) != 0) break;
        }
    }
    for (; i < steps; i++) {
        const float *v_i = v + i * 32;
        for (int k = 0; k < REGS; k++) acc[0][k] = vf_add(acc[0][k], vf_load(v_i + k * SIMD_LANES));
    }
    for (int j = 1; j < LEVELS; j++)
        for (int k = 0; k < REGS; k++) acc[0][k] = vf_add(acc[0][k], acc[j][k]);
    // torch's accumulator b (0..3) is block b % (W / 8) of register b / (W / 8)
#define ACC8(b) vf_block8(acc[0][(b) * 8 / SIMD_LANES], (b) * 8 % SIMD_LANES / 8)
    v8 acc0 = ACC8(0);
    for (long r = steps * 4; r < count; r++) acc0 = v8_add(acc0, v8_load(v + r * 8));
    return v8_add(v8_add(v8_add(acc0, ACC8(1)), ACC8(2)), ACC8(3));
#undef ACC8
}

// x (n,), n >= 8 -> sum(x): s = +0, then the tail x[8(n/8)..n-1] in order,
// then lanes 0..7 of lane_sums in order; 0 + s (the zero-filled output).
float SIMD_FN(rows_simd_sum_row)(const float *x, int n) {
    const int nvec = n / 8;
    float lane[8];
    v8_store(lane, lane_sums(x, nvec));
    float s = 0.0f;
    for (int i = nvec * 8; i < n; i++) s += x[i];
    for (int l = 0; l < 8; l++) s += lane[l];
    return 0.0f + s;
}

#if SIMD_LANES == 8
// ---------------------------------------------------------------------------
// width 8 only: the one kernel of every path of an instruction set
// ---------------------------------------------------------------------------

// dy, y (n,), n >= 8 -> dx (n,): rows_softmax_rows_backward's row (rows.c).
// Its lanes are torch's AVX2 order, so this is every path's kernel. s: lane
// l starts at dy_l * y_l, every further element of the lane (the tail's
// first lanes only) is fmaf(dy, y, acc_l), as torch's contracted AVX2 loop
// does; then the tree. dx = (dy - s) * y, two roundings.
void SIMD_FN(rows_simd_softmax_backward_row)(float *dx, const float *dy, const float *y, int n) {
    v8 acc = v8_mul(v8_load(dy), v8_load(y));
    int d = 8;
    for (; d + 8 <= n; d += 8) acc = v8_fmadd(v8_load(dy + d), v8_load(y + d), acc);
    const int t = n - d;
    const v8_lanes tail = v8_first(t);
    if (t > 0) {
        const v8 f = v8_fmadd(v8_maskload(dy + d, tail), v8_maskload(y + d, tail), acc);
        acc = v8_blend_lanes(acc, tail, f);
    }
    const v8 s = v8_set1(v8_tree_add(acc));
    for (d = 0; d + 8 <= n; d += 8) v8_store(dx + d, v8_mul(v8_sub(v8_load(dy + d), s), v8_load(y + d)));
    if (t > 0)
        v8_maskstore(dx + d, tail, v8_mul(v8_sub(v8_maskload(dy + d, tail), s), v8_maskload(y + d, tail)));
}

// out (n,) = x (n,) / s: div_scalar's true division, each element rounded
// once (vdivps is IEEE division, as divss is); out may be x
void SIMD_FN(rows_simd_div_scalar)(float *out, const float *x, float s, long n) {
    const v8 d = v8_set1(s);
    long i = 0;
    for (; i + 8 <= n; i += 8) v8_store(out + i, v8_div(v8_load(x + i), d));
    for (; i < n; i++) out[i] = x[i] / s;
}

// out (n,) = x (n,) * s, each element rounded once; out may be x
void SIMD_FN(rows_simd_mul_scalar)(float *out, const float *x, float s, long n) {
    const v8 m = v8_set1(s);
    long i = 0;
    for (; i + 8 <= n; i += 8) v8_store(out + i, v8_mul(v8_load(x + i), m));
    for (; i < n; i++) out[i] = x[i] * s;
}
#endif
