// normal.c: see normal.h. The AVX2 kernel's blocks written lane by lane in
// portable C: every multiply-add that GCC fused in libtorch_cpu.so is an
// explicit fmaf, every other operation is rounded on its own. normal_avx2.c
// computes the same bits 8 lanes at a time.
#include "normal.h"

#include <math.h>
#include <stdint.h>

#include "normal_isa.h"
#include "ulp.h"


// ---------------------------------------------------------------------------
// log256_ps (avx_mathfun.h), one lane. Cephes logf: x = m * 2^e with m in
// [sqrt(1/2), sqrt(2)), log x = e*ln2 + log1p(m - 1) by a degree-9 polynomial;
// ln2 split in q2 (exact 0.693359375) + q1 (-2.12194440e-4).
// x <= 0 gives NaN (all bits set); subnormals are clamped to 2^-126 first.
// GCC's contractions in libtorch_cpu.so (checked in its machine code):
//   the Horner steps y = y*x + p_k                      -> fmaf(y, x, p_k)
//   y = (y*x)*z + e*q1 (the product y*x rounded first)  -> fmaf(y*x, z, e*q1)
//   y = y - z*0.5                                       -> fmaf(-z, 0.5, y)
//   x = (x + y) + e*q2                                  -> fmaf(e, q2, x + y)
float torch_cephes_logf(float x) {
    const int invalid = x <= 0.0f;  // _CMP_LE_OS: false for NaN
    // _mm256_max_ps(x, m) returns m unless x > m (so NaN -> m as well)
    const float min_norm = 0x1p-126f;
    x = x > min_norm ? x : min_norm;
    // exponent and mantissa: e from the biased exponent, x in [0.5, 1)
    const uint32_t u = float_bits(x);
    const int32_t imm0 = (int32_t)(u >> 23) - 0x7f;
    x = bits_float((u & ~UINT32_C(0x7f800000)) | float_bits(0.5f));
    float e = (float)imm0;
    e = e + 1.0f;
    // if x < sqrt(1/2): e -= 1, x = x + x - 1; else x = x - 1
    const int below = x < 0x1.6a09e6p-1f;  // SQRTHF
    const float tmp = below ? x : 0.0f;
    x = x - 1.0f;
    e = e - (below ? 1.0f : 0.0f);
    x = x + tmp;
    const float z = x * x;
    float y = 0x1.204376p-4f;               // p0  7.0376836292E-2
    y = fmaf(y, x, -0x1.d7a37p-4f);         // p1 -1.1514610310E-1
    y = fmaf(y, x, 0x1.de4a34p-4f);         // p2  1.1676998740E-1
    y = fmaf(y, x, -0x1.fcba9ep-4f);        // p3 -1.2420140846E-1
    y = fmaf(y, x, 0x1.23d37ep-3f);         // p4  1.4249322787E-1
    y = fmaf(y, x, -0x1.555cap-3f);         // p5 -1.6668057665E-1
    y = fmaf(y, x, 0x1.999d58p-3f);         // p6  2.0000714765E-1
    y = fmaf(y, x, -0x1.fffff8p-3f);        // p7 -2.4999993993E-1
    y = fmaf(y, x, 0x1.555554p-2f);         // p8  3.3333331174E-1
    y = y * x;
    y = fmaf(y, z, e * -0x1.bd0106p-13f);   // + e * q1 (-2.12194440e-4)
    y = fmaf(-z, 0.5f, y);                  // - z/2
    x = x + y;
    x = fmaf(e, 0x1.63p-1f, x);             // + e * q2 (0.693359375)
    return invalid ? bits_float(UINT32_C(0xffffffff)) : x;  // or with an all-ones mask
}

// sincos256_ps (avx_mathfun.h), one lane. Cephes sinf/cosf: j = the even
// integer nearest above |x| * 4/pi truncated, x reduced by j * pi/4 in three
// parts (DP1 + DP2 + DP3), then a cosine polynomial and a sine polynomial,
// selected and signed by j's bits. Exact reduction only for |x| < 8192 (the
// kernel's theta is in [0, 2pi)).
// GCC's contractions: each reduction step x = x + y*(-DP_k)  -> fmaf(y, -DP_k, x);
//   the Horner steps -> fmaf; cosine: yc = (yc*z)*z - z*0.5 -> fmaf(yc*z, z, -(z*0.5)), then + 1;
//   sine: ys = (ys*z)*x + x -> fmaf(ys*z, x, x).
void torch_cephes_sincosf(float x, float *s, float *c) {
    uint32_t sign_sin = float_bits(x) & UINT32_C(0x80000000);
    x = bits_float(float_bits(x) & UINT32_C(0x7fffffff));
    float y = x * 0x1.45f306p+0f;  // 4/pi (FOPI)
    // cvttps2dq: truncation, INT32_MIN when out of range or NaN
    int32_t j = (y < 2147483648.0f) ? (int32_t)y : INT32_MIN;
    j = (int32_t)(((uint32_t)j + 1u) & ~1u);
    y = (float)j;
    const uint32_t swap_sign_sin = ((uint32_t)j & 4u) << 29;
    const int poly_sin = ((uint32_t)j & 2u) == 0;  // the polynomial mask: sine polynomial for sin
    x = fmaf(y, -0x1.92p-1f, x);           // - y * DP1 (0.78515625)
    x = fmaf(y, -0x1.fb4p-13f, x);         // - y * DP2 (2.4187564849853515625e-4)
    x = fmaf(y, -0x1.4442d2p-25f, x);      // - y * DP3 (3.77489497744594108e-8)
    const uint32_t sign_cos = (~((uint32_t)j - 2u) & 4u) << 29;
    sign_sin ^= swap_sign_sin;
    const float z = x * x;
    // cosine polynomial (0 <= x <= pi/4)
    float yc = 0x1.99eb9cp-16f;             // coscof_p0  2.443315711809948E-005
    yc = fmaf(yc, z, -0x1.6c0c34p-10f);     // coscof_p1 -1.388731625493765E-003
    yc = fmaf(yc, z, 0x1.55554ap-5f);       // coscof_p2  4.166664568298827E-002
    yc = yc * z;
    yc = fmaf(yc, z, -(z * 0.5f));
    yc = yc + 1.0f;
    // sine polynomial
    float ys = fmaf(-0x1.9943f2p-13f, z, 0x1.11073cp-7f);  // sincof_p0 * z + sincof_p1
    ys = fmaf(z, ys, -0x1.555546p-3f);                     // ... * z + sincof_p2
    ys = z * ys;
    ys = fmaf(ys, x, x);
    // select as the kernel does: and/andnot masks, then subtract and add
    const float ysin2 = poly_sin ? ys : 0.0f;
    const float ysin1 = poly_sin ? 0.0f : yc;
    ys = ys - ysin2;
    yc = yc - ysin1;
    const float sin_v = ysin1 + ysin2;
    const float cos_v = yc + ys;
    *s = bits_float(float_bits(sin_v) ^ sign_sin);
    *c = bits_float(float_bits(cos_v) ^ sign_cos);
}

// normal_fill_16_AVX2, lane by lane: data (16,) holds uniforms in [0, 1);
// lane j < 8 pairs data[j] (radius) with data[j + 8] (angle).
//   u1 = 1 - data[j]                 (0, 1]
//   radius = sqrt(log(u1) * -2)      float, correctly rounded sqrt
//   theta = 2pi_f * data[j + 8]      2pi_f = (float)(2 * pi) = 0x1.921fb6p+2
//   data[j]     = fmaf(radius * cos(theta), std, mean)
//   data[j + 8] = fmaf(radius * sin(theta), std, mean)
static void block16(float *data, float mean, float std) {
    for (int j = 0; j < 8; j++) {
        const float u1 = 1.0f - data[j];
        const float u2 = data[j + 8];
        const float radius = sqrtf(torch_cephes_logf(u1) * -2.0f);
        const float theta = 0x1.921fb6p+2f * u2;
        float s, c;
        torch_cephes_sincosf(theta, &s, &c);
        data[j] = fmaf(radius * c, std, mean);
        data[j + 8] = fmaf(radius * s, std, mean);
    }
}

// ---------------------------------------------------------------------------
// n < 16: normal_distribution<double>(mean, std)::operator() per element
// (core/DistributionsHelper.h, maybe_get_next_double_normal_sample /
// maybe_set_next_double_normal_sample), and transformation::normal's
// val * std + mean, one vfmadd132sd in the AVX2 TU.
static float normal_scalar(TorchGenerator *g, double mean, double std) {
    double v;
    if (g->has_next_normal) {
        v = g->next_normal;
        g->has_next_normal = 0;
    } else {
        // uniform_real_distribution<double>(0, 1): the low 53 bits of random64 * 2^-53
        const double u1 = (double)(torch_random64(g) & ((UINT64_C(1) << 53) - 1)) * 0x1p-53;
        const double u2 = (double)(torch_random64(g) & ((UINT64_C(1) << 53) - 1)) * 0x1p-53;
        const double r = sqrt(-2.0 * log(1.0 - u2));
        const double theta = 0x1.921fb54442d18p+2 * u1;  // 2.0 * c10::pi<double>, folded
        // torch calls glibc's sincos(theta); GCC turns this pair into that call
        g->next_normal = r * sin(theta);
        g->has_next_normal = 1;
        v = r * cos(theta);
    }
    return (float)fma(v, std, mean);
}

// ---------------------------------------------------------------------------
// n >= 16: normal_fill_AVX2. Torch draws all n uniforms, then transforms the
// blocks; the blocks draw nothing, so drawing and transforming one chunk at a
// time (while it is in L1) consumes the same words in the same order and
// gives the same bits.
enum { CHUNK = 2048 };  // floats, a multiple of 16

// out (n,) = the next n uniforms (r & 0xFFFFFF) * 2^-24 of g, n <= CHUNK:
// uniform_real_distribution<float>(0, 1), fma(x, 2^-24, 0) in torch: exact.
static void uniforms(float *out, long n, TorchGenerator *g, TorchWordsPath words) {
    uint32_t w[CHUNK];
    torch_random_words_with_path(g, w, n, words);
    for (long i = 0; i < n; i++) out[i] = (float)(w[i] & UINT32_C(0xFFFFFF)) * 0x1p-24f;
}

typedef void (*BlocksFn)(float *data, long nblocks, float mean, float std);

static void blocks_portable(float *data, long nblocks, float mean, float std) {
    for (long b = 0; b < nblocks; b++) block16(data + 16 * b, mean, std);
}

#ifdef LITATTN_RANDOM_X86
// __builtin_cpu_supports also checks that the OS saves the AVX registers.
static int have_avx2(void) { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
#else
static int have_avx2(void) { return 0; }
#endif

int normal_path_available(NormalPath path) { return path != NORMAL_AVX2 || have_avx2(); }

static void fill_blocks(float *out, long n, float mean, float std, TorchGenerator *g, TorchWordsPath words,
                        BlocksFn blocks) {
    const long full = n - n % 16;
    for (long i = 0; i < full; i += CHUNK) {
        const long m = full - i < CHUNK ? full - i : CHUNK;
        uniforms(out + i, m, g, words);
        blocks(out + i, m / 16, mean, std);
    }
    // the last n % 16 uniforms: drawn as torch draws them, then overwritten
    uniforms(out + full, n - full, g, words);
    if (n % 16 != 0) {
        // the fix-up: the last 16 positions, 16 fresh uniforms, one more block
        float *tail = out + n - 16;
        uniforms(tail, 16, g, words);
        blocks(tail, 1, mean, std);
    }
}

void normal_fill_with_path(float *out, long n, double mean, double std, TorchGenerator *g, NormalPath path) {
    if (n < 16) {
        for (long i = 0; i < n; i++) out[i] = normal_scalar(g, mean, std);
        return;
    }
    // NORMAL_PORTABLE: portable words and blocks; otherwise AVX2 for both where the CPU has it
    BlocksFn blocks = blocks_portable;
    TorchWordsPath words = path == NORMAL_PORTABLE ? TORCH_WORDS_PORTABLE : TORCH_WORDS_AUTO;
#ifdef LITATTN_RANDOM_X86
    if (path != NORMAL_PORTABLE && have_avx2()) blocks = normal_blocks_avx2;
#endif
    // normal_fill_AVX2 takes mean and std as float
    fill_blocks(out, n, (float)mean, (float)std, g, words, blocks);
}

void normal_fill(float *out, long n, double mean, double std, TorchGenerator *g) {
    normal_fill_with_path(out, n, mean, std, g, NORMAL_AUTO);
}

void randn_fill(float *out, long n, TorchGenerator *g) { normal_fill(out, n, 0.0, 1.0, g); }
